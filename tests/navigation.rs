//! Finding runs without typing ids: `report --last [N]`, `report ID…`
//! and `compare --last 2`, on a temporary history made of the recorded runs
//! (tests/fixtures/runs) with `history import`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

const RUNS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/runs");

fn fixture(name: &str) -> PathBuf {
    Path::new(RUNS).join(format!("{name}.json"))
}

fn oscost(db: &Path, args: &[&str]) -> Output {
    common::oscost_with_db(db, args)
}

/// Imports the files one by one, so the ids are 1, 2, … in this order.
fn import(db: &Path, files: &[PathBuf]) {
    for f in files {
        let o = oscost(db, &["history", "import", f.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

/// Writes `report` of `args` to `html` and returns the page.
fn report(db: &Path, html: &Path, args: &[&str]) -> String {
    let o = oscost(
        db,
        &[&["report", "-o", html.to_str().unwrap()], args].concat(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(html).unwrap()
}

/// The recorded runs, oldest first by their start time.
const BY_TIME: [&str; 4] = ["run-quick-a", "sweep", "memlat", "c2c"];

#[test]
fn report_last_writes_the_newest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    // Imported newest first: --last goes by start time, not by id.
    let files: Vec<PathBuf> = BY_TIME.iter().rev().map(|n| fixture(n)).collect();
    import(&db, &files);
    let html = dir.path().join("r.html");

    let page = report(&db, &html, &["--last"]);
    assert!(page.contains("oscost c2c --quick"), "the newest run is c2c");
    assert!(!page.contains("oscost mem latency"), "only one run");

    let page = report(&db, &html, &["--last", "3"]);
    for shown in ["oscost ctx sweep", "oscost mem latency", "oscost c2c"] {
        assert!(page.contains(shown), "{shown} missing");
    }
    assert!(
        !page.contains("oscost run --quick"),
        "the oldest run is not of the last 3"
    );

    // By id: c2c was imported first (id 1), the quick run last (id 4).
    let page = report(&db, &html, &["4", "1"]);
    assert!(page.contains("oscost run --quick") && page.contains("oscost c2c"));
    assert!(!page.contains("oscost ctx sweep"));

    let o = oscost(
        &db,
        &["report", "--last", "5", "-o", html.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds 4 run(s)"));
}

#[test]
fn compare_last_two_skips_runs_of_other_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    // A second quick run, started after the memory-latency and sweep runs.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("run-quick-b")).unwrap()).unwrap();
    v["started_at"] = "2026-01-02T10:30:00Z".into();
    let late = dir.path().join("late.json");
    std::fs::write(&late, v.to_string()).unwrap();
    import(
        &db,
        &[
            fixture("run-quick-a"),
            fixture("memlat"),
            fixture("sweep"),
            late,
        ],
    );

    let o = oscost(&db, &["compare", "--last", "2"]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        out.starts_with("A: run 1 ") && out.contains("\nB: run 4 "),
        "{out}"
    );
    assert!(
        err.contains("comparing runs 1 and 4, the last `oscost run` runs"),
        "{err}"
    );
}

#[test]
fn compare_last_two_without_a_pair_names_the_runs_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let files: Vec<PathBuf> = BY_TIME.iter().map(|n| fixture(n)).collect();
    import(&db, &files);

    let o = oscost(&db, &["compare", "--last", "2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("run 4 is the only `oscost c2c` run"), "{err}");
    assert!(
        err.contains("newest runs: 4 c2c, 3 mem latency, 2 ctx sweep, 1 run)"),
        "{err}"
    );
    assert!(err.contains("`oscost history list`") && err.contains("`oscost compare ID ID`"));
    assert!(o.stdout.is_empty());
}

/// `compare A B` of two kinds says where to find runs of one kind, in one line.
#[test]
fn compare_of_two_kinds_points_to_the_history_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    import(&db, &[fixture("c2c"), fixture("memlat")]);
    let o = oscost(&db, &["compare", "1", "2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("A is `oscost c2c`, B is `oscost mem latency`"),
        "{err}"
    );
    assert!(
        err.contains("`oscost history list`") && err.contains("`oscost compare --last 2`"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}
