//! The compare gate as CI uses it: a copy of a run with one probe's samples scaled by 1.5
//! exits 1 at --fail-above 5%; the run against an unchanged copy exits 0; runs of different
//! kinds, and runs with nothing paired, exit 2 with one line.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/run-quick.json")).unwrap()
}

fn write(dir: &Path, name: &str, run: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(run).unwrap()).unwrap();
    p.to_string_lossy().into_owned()
}

fn compare(dir: &Path, a: &str, b: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oscost"))
        .args(["compare", a, b, "--fail-above", "5%", "--db"])
        .arg(dir.join("no-history.sqlite"))
        .output()
        .unwrap()
}

/// Scale one valid measurement's samples (raw and baseline) and summaries by `k`.
fn scale_one(run: &mut Value, k: f64) -> String {
    let ms = run["measurements"].as_array_mut().unwrap();
    let m = ms
        .iter_mut()
        .find(|m| m["valid"] == true && m["value"].is_object())
        .unwrap();
    for key in ["samples", "baseline_samples"] {
        for x in m[key].as_array_mut().unwrap() {
            *x = (x.as_f64().unwrap() * k).into();
        }
    }
    for key in ["value", "raw", "baseline", "difference"] {
        if m[key].is_object() {
            let med = m[key]["median"].as_f64().unwrap();
            m[key]["median"] = (med * k).into();
        }
    }
    m["probe"].as_str().unwrap().to_string()
}

#[test]
fn one_probe_scaled_by_one_and_a_half_fails_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write(tmp.path(), "a.json", &fixture());
    let mut b = fixture();
    let probe = scale_one(&mut b, 1.5);
    let b = write(tmp.path(), "b.json", &b);
    let out = compare(tmp.path(), &a, &b);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("regression: {probe}")), "{err}");
    assert_eq!(err.lines().count(), 1, "only the scaled probe: {err}");
}

#[test]
fn an_unchanged_copy_passes_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write(tmp.path(), "a.json", &fixture());
    let b = write(tmp.path(), "b.json", &fixture());
    let out = compare(tmp.path(), &a, &b);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn runs_of_different_kinds_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let mut ra = fixture();
    ra["command"] = serde_json::json!(["oscost", "run", "--quick"]);
    let mut rb = fixture();
    rb["command"] = serde_json::json!(["oscost", "syscall", "--which", "null"]);
    let a = write(tmp.path(), "a.json", &ra);
    let b = write(tmp.path(), "b.json", &rb);
    let out = compare(tmp.path(), &a, &b);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("oscost: runs of different kinds"), "{err}");
}

#[test]
fn nothing_paired_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write(tmp.path(), "a.json", &fixture());
    let mut rb = fixture();
    for m in rb["measurements"].as_array_mut().unwrap() {
        m["params"]["cpus"] = serde_json::json!([7]);
    }
    let b = write(tmp.path(), "b.json", &rb);
    let out = compare(tmp.path(), &a, &b);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("oscost: nothing to compare"), "{err}");
}
