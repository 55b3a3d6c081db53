//! `oscost ipc` and `oscost c2c` as a user meets them: every cell carries its class, CPUs and
//! checks; bad input is one line and exit 2; on one CPU the cross-CPU placements are skipped
//! with the reason and the rest runs.

use std::os::unix::process::CommandExt;
use std::process::Command;

fn oscost(dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oscost"));
    c.env("XDG_DATA_HOME", dir)
        .env("OSCOST_DB", dir.join("h.db"));
    c
}

/// Restrict the child to one CPU before it starts.
fn on_one_cpu(c: &mut Command, cpu: usize) {
    // SAFETY: sched_setaffinity on the child itself between fork and exec; no allocation.
    unsafe {
        c.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn allowed() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn ipc_cells_carry_class_cpus_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out_json = dir.path().join("ipc.json");
    let out = oscost(dir.path())
        .args([
            "ipc",
            "--mech",
            "pipe,spin",
            "--budget",
            "100ms",
            "--quiet",
            "--no-save",
        ])
        .arg("--json")
        .arg(&out_json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ipc: median round trip"), "{stdout}");
    let v = json(&out_json);
    let ms = v["measurements"].as_array().unwrap();
    let same: Vec<_> = ms
        .iter()
        .filter(|m| m["params"]["class"] == "same-cpu")
        .collect();
    assert_eq!(same.len(), 1, "pipe on one CPU; spin skipped there");
    assert_eq!(same[0]["probe"], "ipc.pipe");
    for m in ms {
        let names: Vec<&str> = m["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"context switches per round trip"),
            "{names:?}"
        );
        assert!(names.contains(&"cpu migrations"), "{names:?}");
        assert_eq!(m["evidence"]["cpus"].as_array().unwrap().len(), 2);
    }
    let skipped = v["skipped"].as_array().unwrap();
    assert!(skipped.iter().any(|s| s["reason"]
        .as_str()
        .unwrap()
        .contains("spin flag needs two CPUs")));
    if allowed() >= 2 {
        assert!(ms.iter().any(|m| m["params"]["class"] != "same-cpu"));
    }
}

#[test]
fn on_one_cpu_cross_cpu_cells_are_skipped_and_the_rest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out_json = dir.path().join("ipc.json");
    let mut c = oscost(dir.path());
    c.args([
        "ipc",
        "--mech",
        "eventfd",
        "--budget",
        "100ms",
        "--quiet",
        "--no-save",
    ])
    .arg("--json")
    .arg(&out_json);
    on_one_cpu(&mut c, 0);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out_json);
    assert_eq!(v["measurements"].as_array().unwrap().len(), 1);
    assert!(v["skipped"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("only one CPU"));
    // rpc: local runs, the three remote scenarios are skipped with the reason.
    let rpc_json = dir.path().join("rpc.json");
    let mut c = oscost(dir.path());
    c.args([
        "rpc",
        "--no-trace",
        "--budget",
        "100ms",
        "--quiet",
        "--no-save",
    ])
    .arg("--json")
    .arg(&rpc_json);
    on_one_cpu(&mut c, 0);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&rpc_json);
    let ms = v["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 1);
    assert_eq!(ms[0]["params"]["scenario"], "local");
    let skipped = v["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 3);
    assert!(skipped
        .iter()
        .all(|s| s["reason"].as_str().unwrap().contains("only one CPU")));
    // c2c has nothing to measure on one CPU: one clear line, exit 2.
    let mut c = oscost(dir.path());
    c.args(["c2c", "--quick", "--no-save"]);
    on_one_cpu(&mut c, 0);
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("oscost: c2c needs at least two CPUs"),
        "{err}"
    );
}

#[test]
fn bad_pairs_and_cpu_lists_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["ipc", "--pairs", "0:99999"][..],
        &["ipc", "--pairs", "zero"],
        &["ipc", "--mech", "smoke-signal"],
        &["c2c", "--cpus", "3-1"],
        &["c2c", "--sample", "0"],
    ] {
        let out = oscost(dir.path()).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn c2c_writes_one_csv_row_per_pair_and_a_heatmap() {
    if allowed() < 2 {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (csv, html) = (dir.path().join("c.csv"), dir.path().join("c.html"));
    let out = oscost(dir.path())
        .args([
            "c2c",
            "--cpus",
            "0-1",
            "--budget",
            "100ms",
            "--quiet",
            "--no-save",
        ])
        .arg("--csv")
        .arg(&csv)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].starts_with("c2c.pair,class=") && rows[0].contains("from=0 to=1"));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("one-way core-to-core latency"));
    assert!(page.contains("class of each pair"));
}

fn tracefs_mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .map(|m| m.lines().any(|l| l.contains(" tracefs ")))
        .unwrap_or(false)
}

/// The real tracer where tracing is allowed (root): every part present, the breakdown's checks
/// recorded, tracefs left as it was found. Elsewhere: the totals run and one line says what is
/// missing.
#[test]
fn rpc_local_totals_and_traced_breakdown() {
    let dir = tempfile::tempdir().unwrap();
    let out_json = dir.path().join("rpc.json");
    let mounted_before = tracefs_mounted();
    let out = oscost(dir.path())
        .args([
            "rpc",
            "--scenario",
            "local",
            "--budget",
            "100ms",
            "--quiet",
            "--no-save",
        ])
        .arg("--json")
        .arg(&out_json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        tracefs_mounted(),
        mounted_before,
        "tracefs mount state changed"
    );
    let v = json(&out_json);
    let ms = v["measurements"].as_array().unwrap();
    assert_eq!(ms[0]["probe"], "rpc.total");
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        let parts: Vec<&str> = ms
            .iter()
            .filter(|m| m["probe"] == "rpc.part")
            .map(|m| m["params"]["part"].as_str().unwrap())
            .collect();
        assert_eq!(parts.len(), 8, "{parts:?}");
        let traced = ms.iter().find(|m| m["probe"] == "rpc.traced").unwrap();
        let names: Vec<&str> = traced["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"sum of part medians vs traced RPC time"));
        assert!(names.contains(&"every part ≥ 0"));
    } else {
        assert!(v["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("needs root"));
    }
}

/// Without permission (an unprivileged user), the totals still run and one skipped line says
/// what the breakdown needs.
#[test]
fn rpc_without_permission_runs_the_totals_and_says_why() {
    if unsafe { libc::geteuid() } != 0 {
        return; // cannot switch users; the test above covers the unprivileged path
    }
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: chmod on a directory we own so the unprivileged child can write its output.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let out_json = dir.path().join("rpc.json");
    let mut c = oscost(dir.path());
    c.args([
        "rpc",
        "--scenario",
        "local",
        "--budget",
        "100ms",
        "--quiet",
        "--no-save",
    ])
    .arg("--json")
    .arg(&out_json);
    // SAFETY: dropping to nobody between fork and exec; setgid first, then setuid.
    unsafe {
        c.pre_exec(|| {
            if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = match c.output() {
        Ok(o) => o,
        Err(_) => return, // the binary is not reachable for nobody here
    };
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("Permission denied") {
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out_json);
    assert_eq!(v["measurements"].as_array().unwrap().len(), 1);
    let reason = v["skipped"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("needs root") && reason.contains("sudo"),
        "{reason}"
    );
}
