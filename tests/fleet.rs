//! The fleet path end to end from the command line: labels on a measured run, a synthetic
//! fleet of 60 runs (made by bench/fleet-synth.py from the recorded fixture, 3 planted odd
//! hosts and one malformed file) imported in one go, and the fleet report that must name the
//! planted hosts and no other.

use std::collections::BTreeSet;
mod common;

use std::path::Path;
use std::process::{Command, Output};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run-quick.json");
const SYNTH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/fleet-synth.py");

fn oscost(db: &Path, args: &[&str]) -> Output {
    common::oscost_with_db(db, args)
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into()
}

/// Makes `runs` synthetic run files in `dir`; returns the planted hosts.
fn synth(dir: &Path, runs: usize, planted: usize, malformed: usize) -> BTreeSet<String> {
    let o = Command::new("python3")
        .arg(SYNTH)
        .arg(FIXTURE)
        .arg(dir)
        .args(["--runs", &runs.to_string()])
        .args(["--planted", &planted.to_string()])
        .args(["--malformed", &malformed.to_string()])
        .output()
        .expect("python3 runs bench/fleet-synth.py");
    assert!(o.status.success(), "{}", err(&o));
    out(&o).lines().map(String::from).collect()
}

#[test]
fn planted_hosts_are_found_and_a_malformed_file_is_named_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let planted = synth(&runs, 60, 3, 1);
    assert_eq!(planted.len(), 3);
    let db = dir.path().join("h.sqlite");

    let o = oscost(&db, &["history", "import", runs.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "a bad file must be noticed");
    let e = err(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("malformed-0.json") && e.contains("truncated JSON"),
        "{e}"
    );
    assert!(
        out(&o).contains("imported 60 run(s) from 61 file(s)"),
        "{}",
        out(&o)
    );
    // Importing again adds nothing: every run is recognized by its id.
    let o = oscost(&db, &["history", "import", runs.to_str().unwrap()]);
    assert!(
        out(&o).contains("imported 0 run(s)") && out(&o).contains("60 already stored"),
        "{}",
        out(&o)
    );

    let json = dir.path().join("fleet.json");
    let csv = dir.path().join("fleet.csv");
    let html = dir.path().join("fleet.html");
    let o = oscost(
        &db,
        &[
            "fleet",
            "--label",
            "campaign=synthetic",
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "wider than 80 columns: {l}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["hosts"].as_array().unwrap().len(), 60);
    let odd: BTreeSet<String> = v["odd"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(odd, planted, "exactly the planted hosts are odd");
    // The planted kernel is named as what sets them apart.
    assert_eq!(v["shared"][0]["fact"], "kernel");
    assert_eq!(v["shared"][0]["value"], "5.10.0-planted");
    assert_eq!(v["shared"][0]["others_with"], 0);
    for h in &planted {
        assert!(text.contains(&format!("  {h}\n")), "{h} not listed: {text}");
    }
    // call.function does not enter the kernel: not slower on the planted hosts.
    let call_odd = v["probes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["probe"] == "call.function")
        .flat_map(|p| p["cells"].as_array().unwrap())
        .filter(|c| c["outlier"] == true)
        .count();
    assert_eq!(call_odd, 0);
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let odd_rows = csv_text.lines().filter(|l| l.contains(",true,")).count();
    // The fixture's syscall.null (135 ns in [134, 238]) is unstable: noise enters no fleet
    // median, so 6 of the 7 kernel-entering probes are compared.
    assert_eq!(odd_rows, 3 * 6, "3 hosts × 6 kernel-entering probes");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && planted.iter().all(|h| page.contains(h.as_str())));

    // Grouped by kernel: the planted group is the odd one.
    let o = oscost(&db, &["fleet", "--group-by", "kernel"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        out(&o).contains("odd groups (1)\n  5.10.0-planted"),
        "{}",
        out(&o)
    );
}

#[test]
fn fleet_refuses_bad_options_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let o = oscost(&db, &["fleet"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("no complete runs"), "{}", err(&o));
    // A file whose labels break the --label rules is named and skipped like any bad file.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    v["labels"] = serde_json::json!({"Bad Key": "x"});
    let bad = dir.path().join("bad-labels.json");
    std::fs::write(&bad, v.to_string()).unwrap();
    let o = oscost(&db, &["history", "import", FIXTURE, bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("bad-labels.json: 'Bad Key' is not a label key"),
        "{}",
        err(&o)
    );
    assert!(
        out(&o).contains("imported 1 run(s) from 2 file(s)"),
        "{}",
        out(&o)
    );
    let o = oscost(&db, &["fleet", "--label", "rack=nowhere"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("with labels rack=nowhere"), "{}", err(&o));
    let o = oscost(&db, &["fleet", "--group-by", "colour"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("not a machine fact"), "{}", err(&o));
    let o = oscost(&db, &["fleet", "--label", "Bad"]);
    assert_eq!(o.status.code(), Some(2));
    let o = oscost(&db, &["fleet", "--label", "a=1", "--label", "a=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("more than once"), "{}", err(&o));
    // One host: listed, and the report says why nobody can be odd.
    let o = oscost(&db, &["fleet"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("hosts: vm\n"), "{}", out(&o));
    assert!(out(&o).contains("needs at least 3"), "{}", out(&o));
}

#[test]
fn labels_are_stored_with_a_measured_run_and_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let json = dir.path().join("run.json");
    let html = dir.path().join("run.html");
    let o = oscost(
        &db,
        &[
            "syscall",
            "--quick",
            "--which",
            "null",
            "-q",
            "--label",
            "host=vm-a",
            "--label",
            "rack=b4",
            "--json",
            json.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("labels: host=vm-a rack=b4"), "{}", out(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("labels <code>host=vm-a rack=b4</code>"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["labels"]["host"], "vm-a");
    assert_eq!(v["labels"]["rack"], "b4");
    assert_eq!(v["run_id"].as_str().unwrap().len(), 32);
    // The run was saved; importing its file again is recognized as the same run.
    let o = oscost(&db, &["history", "import", json.to_str().unwrap()]);
    assert!(out(&o).contains("1 already stored"), "{}", out(&o));
    // Without --label host, host is the hostname.
    let o = oscost(
        &db,
        &[
            "syscall",
            "--quick",
            "--which",
            "null",
            "-q",
            "--no-save",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", err(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(v["labels"]["host"], hostname.trim());
    // Malformed or repeated labels: refused before measuring.
    for args in [
        &["--label", "rack"][..],
        &["--label", "Rack=1"],
        &["--label", "rack=1", "--label", "rack=2"],
    ] {
        let o = oscost(
            &db,
            &[
                &["syscall", "--quick", "--which", "null", "--no-save"][..],
                args,
            ]
            .concat(),
        );
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(
            out(&o).is_empty(),
            "measured despite a bad label: {}",
            out(&o)
        );
    }
}
