//! `oscost stat`: a user's program run through the engine and the common way out. The
//! history is a temporary database named by OSCOST_DB (a `--db` after `--` would be the
//! program's argument).

use std::path::Path;
use std::process::Output;

fn stat(db: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_oscost"))
        .env("XDG_DATA_HOME", db.parent().unwrap())
        .env("OSCOST_DB", db)
        .env("COLUMNS", "80")
        .arg("stat")
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_program_is_measured_saved_and_gated_like_a_probe() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let json = dir.path().join("s.json");
    let prom = dir.path().join("s.prom");
    let out = stat(
        &db,
        &[
            "--repeat",
            "3",
            "--warmup",
            "0",
            "--json",
            json.to_str().unwrap(),
            "--openmetrics",
            prom.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("stat.run command=true"), "{stdout}");
    assert!(stdout.contains("/usr/bin/time -v of 3 runs"), "{stdout}");
    assert!(
        stdout.contains("\tCommand being timed: \"true\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("Maximum resident set size (kbytes): "),
        "{stdout}"
    );
    assert!(
        stdout.contains("Performance counter stats for 'true' (3 runs"),
        "{stdout}"
    );
    let width = |l: &str| l.replace('\t', "        ").chars().count();
    assert!(stdout.lines().all(|l| width(l) <= 80), "{stdout}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let m = &run["measurements"][0];
    assert_eq!(m["probe"], "stat.run");
    assert_eq!(m["samples"].as_array().unwrap().len(), 3);
    assert_eq!(m["evidence"]["rusage"]["iterations"], 3);
    assert!(
        m["evidence"]["rusage"]["wall_ns"].as_u64().unwrap() > 0,
        "{m}"
    );
    assert!(
        m["evidence"]["rusage"]["maxrss_kb"].as_u64().unwrap() > 0,
        "{m}"
    );
    let prom = std::fs::read_to_string(&prom).unwrap();
    assert!(
        prom.contains("# TYPE oscost_stat_run_valid gauge"),
        "{prom}"
    );
    assert!(prom.contains("command=\"true\""), "{prom}");
    // A second run of the same program pairs with the first: compare gates it.
    let again = stat(&db, &["--repeat", "3", "-q", "--", "true"]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    let cmp = std::process::Command::new(env!("CARGO_BIN_EXE_oscost"))
        .env("XDG_DATA_HOME", dir.path())
        .args(["compare", "--last", "2", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let c = text(&cmp.stdout);
    assert!(c.contains("stat.run"), "{c}{}", text(&cmp.stderr));
}

#[test]
fn a_failing_or_missing_program_is_a_one_line_error_and_nothing_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let json = dir.path().join("s.json");
    for (args, words) in [
        (vec!["--", "false"], "false exited with status 1"),
        (vec!["--", "sh", "-c", "exit 3"], "sh exited with status 3"),
        (
            vec!["--", "no-such-program-oscost-test"],
            "no-such-program-oscost-test: command not found on PATH",
        ),
        (
            vec!["--budget", "1s", "--", "true"],
            "--budget: oscost stat",
        ),
        (
            vec!["-e", "cycels", "--", "true"],
            "'cycels' is not an event",
        ),
        (vec!["--cpu", "99999", "--", "true"], "--cpu: CPU 99999"),
    ] {
        let mut all = vec!["--repeat", "2", "--json", json.to_str().unwrap()];
        all.extend(args);
        let out = stat(&db, &all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| !l.starts_with("oscost: 1 item to measure"))
            .collect();
        assert_eq!(lines.len(), 1, "{all:?}: {err}");
        assert!(lines[0].contains(words), "{all:?}: {err}");
        assert!(!json.exists(), "{all:?}");
    }
    assert!(!db.exists(), "a failed program's run was saved");
}

#[test]
fn the_program_is_pinned_as_taskset_pins_it_and_its_output_goes_where_asked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let allowed = oscost::machine::affinity::allowed_cpus();
    let cpu = allowed.last().unwrap().to_string();
    let show = "grep Cpus_allowed_list /proc/self/status";
    let out = stat(
        &db,
        &[
            "--repeat",
            "1",
            "--no-save",
            "-q",
            "--cpu",
            &cpu,
            "--output",
            "inherit",
            "--",
            "sh",
            "-c",
            show,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // Warm-up and the recorded run both print.
    assert_eq!(
        stdout
            .matches(&format!("Cpus_allowed_list:\t{cpu}\n"))
            .count(),
        2,
        "{stdout}"
    );
    // To /dev/null (the default): the program's output is not in oscost's.
    let out = stat(
        &db,
        &["--repeat", "1", "--no-save", "-q", "--", "sh", "-c", show],
    );
    assert!(out.status.success());
    assert!(!text(&out.stdout).contains("Cpus_allowed_list:\t"));
}
