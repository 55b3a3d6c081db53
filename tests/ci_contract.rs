//! CI's run contract (.ci/validate_run.py, run on the smoke run's JSON by .ci/run) fails
//! on the inputs it exists to catch: each case below breaks one rule of a recorded run that
//! passes, and must fail with that rule's message. The run goes to the script on its
//! standard input, so the test writes no file. Needs python3, as CI does; without it the
//! test says so and checks nothing.

mod common;

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The script's exit status and standard error for `run`; None without python3.
fn validate(run: &Value) -> Option<(bool, String)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/validate_run.py");
    let mut child = match Command::new("python3")
        .arg(script)
        .arg("/dev/stdin")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("python3: {e}"),
    };
    let text = serde_json::to_vec(run).unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

fn recorded(name: &str) -> Value {
    let text = std::fs::read_to_string(common::recorded_run_file(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The first measurement of `run`, to break.
fn first(run: &mut Value) -> &mut serde_json::Map<String, Value> {
    run["measurements"][0].as_object_mut().unwrap()
}

#[test]
fn the_run_contract_passes_a_good_run_and_fails_each_broken_one() {
    // A quick run recorded with the current rules: 17 measurements, every field there.
    let good = recorded("run-quick-slowed");
    let Some((ok, err)) = validate(&good) else {
        eprintln!("python3 not found: the run contract is not checked here");
        return;
    };
    assert!(ok, "a good run fails the contract: {err}");

    type Break = fn(&mut Value);
    let cases: [(&str, Break, &str); 9] = [
        (
            "an unstable figure without its value",
            |r| {
                let m = first(r);
                m.insert("status".into(), "unstable".into());
                m.insert("value".into(), Value::Null);
            },
            "AssertionError: call.function",
        ),
        (
            "an ok figure without its value",
            |r| {
                first(r).insert("value".into(), Value::Null);
            },
            "AssertionError: call.function",
        ),
        (
            "a measurement without its checks",
            |r| {
                first(r).remove("checks");
            },
            "call.function is missing checks",
        ),
        (
            "a run without its machine",
            |r| {
                r.as_object_mut().unwrap().remove("machine");
            },
            "run is missing machine",
        ),
        (
            "a run cut short",
            |r| {
                r["complete"] = false.into();
            },
            "AssertionError",
        ),
        (
            "valid although a check failed",
            |r| {
                first(r)["checks"][0]["ok"] = false.into();
            },
            "AssertionError: call.function",
        ),
        (
            "a version-2 run whose warning is a sentence",
            |r| {
                r["schema_version"] = 2.into();
                first(r).insert("warnings".into(), serde_json::json!(["2 of 9 outliers"]));
            },
            "call.function: warning is not a version-2 warning",
        ),
        (
            "a version-1 run whose warning is a remark",
            |r| {
                first(r).insert("warnings".into(), serde_json::json!([{"kind": "outliers"}]));
            },
            "call.function: warning is not a version-1 warning",
        ),
        (
            "a suite probe missing",
            |r| {
                r["measurements"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|m| m["probe"] != "ctx.yield");
            },
            "ctx.yield missing from the suite",
        ),
    ];
    for (what, break_it, says) in cases {
        let mut run = good.clone();
        break_it(&mut run);
        let (ok, err) = validate(&run).unwrap();
        assert!(!ok, "{what}: the contract passed it");
        assert!(err.contains(says), "{what}: expected {says:?} in {err}");
    }

    // A real run recorded before the canary kept samples that read faster than those it
    // kept: its syscall.read figure left out one such sample, which the contract refuses.
    let (ok, err) = validate(&recorded("run-quick-b")).unwrap();
    assert!(!ok, "run-quick-b passed the contract");
    assert!(
        err.contains("syscall.read: raw n 8, figure samples 9"),
        "{err}"
    );
}
