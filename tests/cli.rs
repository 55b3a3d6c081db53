//! The command line as a user meets it: clear one-line errors with exit code 2, a quick run
//! whose JSON follows the contract, and Ctrl-C that reaps partners and writes nothing.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn oscost() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oscost"));
    // Runs are saved to history by default: keep test runs out of the user's database (a
    // directory under /proc cannot be created, so nothing is written anywhere).
    c.env("XDG_DATA_HOME", "/proc/oscost-tests-no-history")
        .env_remove("OSCOST_DB");
    c
}

fn fails_with_2(args: &[&str], needle: &str) {
    let out = oscost().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    fails_with_2(
        &["ctx", "--cpu", "4096"],
        "CPU 4096 is not in this process's allowed set",
    );
    fails_with_2(&["syscall", "--budget", "0s"], "out of range");
    fails_with_2(&["call", "--budget", "forever"], "not a duration");
    fails_with_2(&["ctx", "--mech", "carrier-pigeon"], "carrier-pigeon");
    fails_with_2(
        &["run", "--quick", "--json", "/nonexistent-dir/r.json"],
        "does not exist",
    );
    fails_with_2(&["run", "--ci", "0"], "out of range");
    fails_with_2(&["no-such-command"], "no-such-command");
    fails_with_2(&["ctx", "anatomy", "--pages", "0"], "--pages 0");
    fails_with_2(&["ctx", "anatomy", "--size", "8"], "--size 8");
    fails_with_2(
        &["ctx", "anatomy", "--cpu", "0", "--other-cpu", "0"],
        "must differ",
    );
}

#[test]
fn machine_prints_facts_and_json() {
    let out = oscost().args(["machine", "--json", "-"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("cpu").is_some() && v.get("kernel").is_some(), "{v}");
    let text = oscost().arg("machine").output().unwrap();
    assert!(text.status.success());
    assert!(!text.stdout.is_empty());
}

#[test]
fn quick_ctx_run_writes_the_json_contract() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let out = oscost()
        .args([
            "ctx", "--mech", "pipe", "--mode", "process", "--budget", "200ms", "--quiet",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for key in [
        "schema_version",
        "tool_version",
        "started_at",
        "command",
        "machine",
        "measurements",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let m = &v["measurements"][0];
    assert_eq!(m["probe"], "ctx.pipe");
    for key in [
        "params",
        "unit",
        "value",
        "raw",
        "baseline",
        "samples",
        "iterations_per_sample",
        "evidence",
        "checks",
        "warnings",
        "valid",
    ] {
        assert!(m.get(key).is_some(), "measurement missing {key}");
    }
    for key in [
        "n", "median", "ci95", "mean", "min", "max", "p95", "mad", "outliers",
    ] {
        assert!(m["raw"].get(key).is_some(), "summary missing {key}");
    }
    for key in ["rusage", "events", "cpus"] {
        assert!(m["evidence"].get(key).is_some(), "evidence missing {key}");
    }
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv_text.lines().count(), 2, "{csv_text}");
    assert!(csv_text.starts_with("probe,params,unit,status"));
}

/// Children of a process, from /proc/<pid>/task/*/children.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
                out.extend(s.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
            }
        }
    }
    out
}

fn exists(pid: u32) -> bool {
    // A zombie still has a /proc entry; a reaped process does not.
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn interrupt_reaps_partners_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut child = oscost()
        .args([
            "ctx",
            "--mech",
            "pipe,futex",
            "--mode",
            "process",
            "--budget",
            "20s",
            "--quiet",
        ])
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until a partner process exists.
    let t0 = Instant::now();
    let partners = loop {
        let c = children_of(child.id());
        if !c.is_empty() {
            break c;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no partner appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sends a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("interrupted"), "{err}");
    std::thread::sleep(Duration::from_millis(100));
    for p in partners {
        assert!(!exists(p), "partner {p} outlived the interrupted run");
    }
    assert!(!json.exists(), "an interrupted run must not write results");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "temp files left"
    );
}

#[test]
fn a_lone_syscall_run_is_in_the_state_its_definition_states() {
    // The binary measures in one thread (no progress-bar ticker, partners joined) whose
    // files no other task shares: the state check holds on its own.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = oscost()
        .args([
            "syscall",
            "--quick",
            "--which",
            "read",
            "-q",
            "--no-save",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let checks = v["measurements"][0]["checks"].as_array().unwrap();
    let alone = checks
        .iter()
        .find(|c| c["kind"] == "alone")
        .unwrap_or_else(|| panic!("no state check: {checks:?}"));
    assert_eq!(alone["ok"], true, "{alone}");
}
