//! report, compare, history and export from the command line, on the recorded fixture run:
//! round trips through the history, the regression gate's exit code, and one-line errors
//! (exit 2) for bad files, unknown ids and a database that is not ours.

mod common;

use std::path::Path;
use std::process::Output;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run-quick.json");

fn oscost(db: &Path, args: &[&str]) -> Output {
    common::oscost_with_db(db, args)
}

/// The recorded run, to be changed and written back.
fn fixture() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn fails_with_2(o: Output, needle: &str) {
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

#[test]
fn import_list_export_compare_report_delete() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    // A second run of the same host: the fixture with other samples (the fixture itself twice
    // would be one run, the second copy skipped as already stored).
    let mut v = fixture();
    v["measurements"][0]["samples"][0] = 1.0.into();
    let second = dir.path().join("second.json");
    std::fs::write(&second, v.to_string()).unwrap();
    let o = oscost(
        &db,
        &[
            "history",
            "import",
            FIXTURE,
            second.to_str().unwrap(),
            FIXTURE,
        ],
    );
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(
        text(&o).0.contains("imported 2 run(s) from 3 file(s)")
            && text(&o).0.contains("1 already stored"),
        "{:?}",
        text(&o)
    );
    let (list, _) = text(&oscost(&db, &["history", "list"]));
    assert!(
        list.contains("vm|AMD EPYC") && list.contains("imported from"),
        "{list}"
    );
    // One row per run: its valid measurements out of all.
    assert_eq!(
        list.lines().filter(|l| l.contains(" of 9")).count(),
        2,
        "{list}"
    );

    let (json, _) = text(&oscost(&db, &["export", "1", "--format", "json"]));
    let a: serde_json::Value = serde_json::from_str(&json).unwrap();
    let b = fixture();
    // Fields added since the fixture was recorded may appear as null; the data must match.
    let key = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        v["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| serde_json::json!([m["probe"], m["params"], m["samples"], m["valid"]]))
            .collect()
    };
    assert_eq!(key(&a), key(&b), "export is not the imported run");
    let (md, _) = text(&oscost(
        &db,
        &["history", "export", "1", "--format", "markdown"],
    ));
    assert!(md.contains("| probe |"));

    let o = oscost(
        &db,
        &[
            "compare",
            "--last",
            "2",
            "--fail-above",
            "5%",
            "--format",
            "markdown",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "identical runs must not trip the gate: {:?}",
        text(&o)
    );
    assert!(text(&o).0.contains("no significant difference"));

    let html = dir.path().join("r.html");
    let o = oscost(&db, &["report", "1", FIXTURE, "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("<th class=\"num\">run 2 ("));

    assert!(oscost(&db, &["history", "delete", "2"]).status.success());
    fails_with_2(oscost(&db, &["history", "show", "2"]), "no run with id 2");
}

#[test]
fn slower_run_trips_the_gate_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let mut v = fixture();
    for m in v["measurements"].as_array_mut().unwrap() {
        for key in ["samples", "baseline_samples"] {
            for s in m[key].as_array_mut().unwrap() {
                *s = (s.as_f64().unwrap() * 1.5).into();
            }
        }
        for key in ["value", "raw"] {
            if m[key].is_object() {
                let med = m[key]["median"].as_f64().unwrap();
                m[key]["median"] = (med * 1.5).into();
            }
        }
    }
    let slow = dir.path().join("slow.json");
    std::fs::write(&slow, v.to_string()).unwrap();
    let o = oscost(
        &db,
        &[
            "compare",
            FIXTURE,
            slow.to_str().unwrap(),
            "--fail-above",
            "10%",
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("slower (+50.0%)"), "{out}");
    assert!(err.contains("regression:"));
    let o = oscost(
        &db,
        &[
            "compare",
            FIXTURE,
            slow.to_str().unwrap(),
            "--fail-above",
            "60%",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn bad_inputs_are_one_line_errors_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let truncated = dir.path().join("t.json");
    let full = std::fs::read_to_string(FIXTURE).unwrap();
    std::fs::write(&truncated, &full[..full.len() / 3]).unwrap();
    fails_with_2(
        oscost(&db, &["history", "import", truncated.to_str().unwrap()]),
        "truncated JSON",
    );
    assert!(!db.exists(), "an import of nothing created a database");
    // An empty history for the cases below: one run imported, then deleted.
    assert!(oscost(&db, &["history", "import", FIXTURE])
        .status
        .success());
    assert!(oscost(&db, &["history", "delete", "1"]).status.success());
    let other = dir.path().join("o.json");
    std::fs::write(&other, r#"{"name":"not a run"}"#).unwrap();
    fails_with_2(
        oscost(&db, &["report", other.to_str().unwrap()]),
        "not an oscost run",
    );
    fails_with_2(
        oscost(&db, &["compare", FIXTURE, "77"]),
        "no run with id 77",
    );
    fails_with_2(
        oscost(&db, &["compare", FIXTURE, "nope.json"]),
        "nope.json: no such file",
    );
    fails_with_2(oscost(&db, &["compare", "--last", "2"]), "holds 0 run(s)");
    // A database file that is not ours is refused and left byte-for-byte as it was.
    let junk = dir.path().join("junk.sqlite");
    let bytes = b"definitely not sqlite ".repeat(64);
    std::fs::write(&junk, &bytes).unwrap();
    fails_with_2(
        oscost(&junk, &["history", "list"]),
        "junk.sqlite: not an SQLite database or corrupt",
    );
    assert_eq!(std::fs::read(&junk).unwrap(), bytes);
}

#[test]
fn history_show_gives_short_figures_in_cycles_as_the_run_printed_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let mut v = fixture();
    v["machine"]["core_clock"] = serde_json::json!({"ghz": 4.0, "samples": 9});
    v["started_at"] = "2026-01-02T03:04:05Z".into();
    let clocked = dir.path().join("clocked.json");
    std::fs::write(&clocked, v.to_string()).unwrap();
    let o = oscost(
        &db,
        &["history", "import", FIXTURE, clocked.to_str().unwrap()],
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let (without, _) = text(&oscost(&db, &["history", "show", "1"]));
    assert!(
        !without.contains("in cycles of"),
        "no clock, no cycles: {without}"
    );
    let (with, _) = text(&oscost(&db, &["history", "show", "2"]));
    assert!(
        with.contains("in cycles of the 4.00 GHz core clock"),
        "{with}"
    );
}
