//! `oscost ipc`, `oscost c2c` and `oscost rpc` as a user meets them: every cell carries its
//! class, CPUs and checks; bad input is one line and exit 2; on one CPU the cross-CPU
//! placements are skipped with the reason and the rest runs; the real tracer runs where it is
//! allowed and leaves tracefs as it found it; without permission the totals still run.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn oscost(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oscost"));
    c.env("XDG_DATA_HOME", dir);
    c
}

/// A short measuring command writing its JSON into `dir`.
fn measuring(dir: &Path, args: &[&str]) -> (Command, PathBuf) {
    let json = dir.join("out.json");
    let mut c = oscost(dir);
    c.args(args)
        .args(["--budget", "100ms", "--quiet", "--no-save", "--json"])
        .arg(&json);
    (c, json)
}

/// Run it, require success, and return the JSON it wrote.
fn run_json(mut c: Command, json: &Path) -> serde_json::Value {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
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

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn check_names(m: &serde_json::Value) -> Vec<String> {
    m["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let c: oscost::model::Check = serde_json::from_value(c.clone()).unwrap();
            oscost::report::checks::name(&c)
        })
        .collect()
}

#[test]
fn ipc_cells_carry_class_cpus_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let (c, json) = measuring(dir.path(), &["ipc", "--mech", "pipe,spin"]);
    let v = run_json(c, &json);
    let ms = v["measurements"].as_array().unwrap();
    let same: Vec<_> = ms
        .iter()
        .filter(|m| m["params"]["class"] == "same-cpu")
        .collect();
    assert_eq!(same.len(), 1, "pipe on one CPU; spin skipped there");
    assert_eq!(same[0]["probe"], "ipc.pipe");
    for m in ms {
        let names = check_names(m);
        assert!(
            names.iter().any(|n| n == "context switches per round trip"),
            "{names:?}"
        );
        assert!(names.iter().any(|n| n == "cpu migrations"), "{names:?}");
        assert_eq!(m["evidence"]["cpus"].as_array().unwrap().len(), 2);
    }
    assert!(v["skipped"].as_array().unwrap().iter().any(|s| s["reason"]
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
    let (mut c, json) = measuring(dir.path(), &["ipc", "--mech", "eventfd"]);
    on_one_cpu(&mut c, 0);
    let v = run_json(c, &json);
    assert_eq!(v["measurements"].as_array().unwrap().len(), 1);
    assert!(v["skipped"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("only one CPU"));
    // rpc: local runs, the three remote scenarios are skipped with the reason.
    let (mut c, json) = measuring(dir.path(), &["rpc", "--no-trace"]);
    on_one_cpu(&mut c, 0);
    let v = run_json(c, &json);
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
        &["rpc", "--mech", "spin"],
        &["rpc", "--pair", "0:0"],
        &["rpc", "--scenario", "remote-lunch"],
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
    let (mut c, json) = measuring(dir.path(), &["c2c", "--cpus", "0-1"]);
    c.arg("--csv").arg(&csv).arg("--html").arg(&html);
    run_json(c, &json);
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
    let mounted_before = tracefs_mounted();
    let (c, json) = measuring(dir.path(), &["rpc", "--scenario", "local"]);
    let v = run_json(c, &json);
    assert_eq!(
        tracefs_mounted(),
        mounted_before,
        "tracefs mount state changed"
    );
    let ms = v["measurements"].as_array().unwrap();
    assert_eq!(ms[0]["probe"], "rpc.total");
    let traced_skip = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["probe"].as_str().unwrap().ends_with("traced"));
    if let Some(s) = traced_skip {
        // Root in a container without perf or tracefs: the environment said no, in words.
        let reason = s["reason"].as_str().unwrap();
        assert!(
            ["tracefs", "tracepoint", "perf", "permission"]
                .iter()
                .any(|w| reason.contains(w)),
            "{reason}"
        );
        eprintln!("tracer not allowed here: {reason}");
    } else if is_root() {
        let parts: Vec<&str> = ms
            .iter()
            .filter(|m| m["probe"] == "rpc.part")
            .map(|m| m["params"]["part"].as_str().unwrap())
            .collect();
        let traced = ms.iter().find(|m| m["probe"] == "rpc.traced").unwrap();
        // On one CPU no wake-up sends an IPI: the IPI parts are left out and a note on
        // rpc.traced says so (nothing is wrong: not a warning), instead of two parts that
        // read 0.
        assert_eq!(parts.len(), 6, "{parts:?}");
        assert!(!parts.iter().any(|p| p.contains("IPI")), "{parts:?}");
        // Notes are sentences; warnings are typed remarks, read through their words.
        let says_one_cpu = |key: &str| {
            traced[key].as_array().unwrap().iter().any(|w| {
                let text = match w.as_str() {
                    Some(s) => s.to_string(),
                    None => oscost::report::remarks::words(
                        &serde_json::from_value::<oscost::model::Remark>(w.clone()).unwrap(),
                    ),
                };
                text.starts_with("one CPU")
            })
        };
        assert!(
            says_one_cpu("notes") && !says_one_cpu("warnings"),
            "{traced}"
        );
        let names = check_names(traced);
        assert!(names
            .iter()
            .any(|n| n == "sum of part means vs the client's time of the same RPCs"));
        assert!(names.iter().any(|n| n == "every part ≥ 0"));
        // The observer's cost, measured and taken out: per-event costs of the groups that
        // recorded on the path (no IPIs on one CPU), "tracing adds", the corrected parts
        // judged against the untraced total.
        let observer = &traced["observer"];
        let costs = observer["calibration"]["costs"].as_array().unwrap();
        // The three groups every same-CPU RPC records on its path; an IPI group appears only
        // when something else on the machine sent one during the calibration (a stray
        // kworker wake-up), never once per RPC.
        let group = |c: &serde_json::Value| c["group"].as_str().unwrap().to_string();
        for want in ["sched", "syscalls", "switch records"] {
            assert!(costs.iter().any(|c| group(c) == want), "{want}: {observer}");
        }
        for c in costs
            .iter()
            .filter(|c| !["sched", "syscalls", "switch records"].contains(&group(c).as_str()))
        {
            assert!(group(c).contains("ipi"), "{observer}");
            assert!(c["per_rpc"].as_f64().unwrap() < 0.5, "{observer}");
        }
        assert!(observer["tracing_adds"]["value"].is_number(), "{observer}");
        let corrected: Vec<&serde_json::Value> = ms
            .iter()
            .filter(|m| m["probe"] == "rpc.corrected")
            .collect();
        assert_eq!(corrected.len(), 6);
        for m in &corrected {
            let names = check_names(m);
            // The check is renamed when the untraced RPC itself moved between the two
            // measurements (" (the untraced RPC itself moved …)"): a busy machine's case.
            assert!(
                names
                    .iter()
                    .any(|n| n.starts_with("corrected parts vs untraced rpc.total")),
                "{names:?}"
            );
            assert!(m["additive"]["mean"]["value"].is_number(), "{m}");
        }
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
    if !is_root() {
        return; // cannot switch users; the test above covers the unprivileged path
    }
    let dir = tempfile::tempdir().unwrap();
    // The unprivileged child must be able to write its output here.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let (mut c, json) = measuring(dir.path(), &["rpc", "--scenario", "local"]);
    // SAFETY: dropping to nobody between fork and exec; setgid first, then setuid.
    unsafe {
        c.pre_exec(|| {
            if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let probe = c.output();
    match probe {
        // The test binary is not reachable for nobody here (e.g. a 0700 home directory).
        Err(_) => return,
        Ok(o) if !o.status.success() => {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("Permission denied"), "{err}");
            return;
        }
        Ok(_) => {}
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["measurements"].as_array().unwrap().len(), 1);
    let reason = v["skipped"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("needs root") && reason.contains("sudo"),
        "{reason}"
    );
}
