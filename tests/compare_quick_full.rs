//! A quick run and a full run of one build, recorded (tests/fixtures/compare/), raise no
//! alarm when compared: the call figures were the false alarm ("call.function slower +115%
//! [1.01, 3.86]" between a quick and a full run of unchanged code). The same full run with
//! its call figures made 1.5× slower, a regression, does alarm.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const QUICK: &str = include_str!("fixtures/compare/quick.json");
const FULL: &str = include_str!("fixtures/compare/full.json");

fn write(dir: &Path, name: &str, run: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(run).unwrap()).unwrap();
    p.to_string_lossy().into_owned()
}

fn compare(dir: &Path, a: &str, b: &str, format: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oscost"))
        .args(["compare", a, b, "--fail-above", "5%", "--format", format])
        .arg("--db")
        .arg(dir.join("no-history.sqlite"))
        .output()
        .unwrap()
}

/// The compared call figures: (probe, verdict) of every pair whose probe is a call's.
fn call_verdicts(out: &Output) -> Vec<(String, String)> {
    let d: Value = serde_json::from_slice(&out.stdout).expect("compare --format json");
    d["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["probe"].as_str().unwrap().starts_with("call."))
        .map(|p| {
            (
                p["probe"].as_str().unwrap().to_string(),
                p["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn runs() -> (Value, Value) {
    (
        serde_json::from_str(QUICK).unwrap(),
        serde_json::from_str(FULL).unwrap(),
    )
}

/// The probes valid in `run`.
fn valid(run: &Value) -> Vec<String> {
    run["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["valid"] == true)
        .map(|m| m["probe"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_recorded_runs_are_a_quick_and_a_full_run_of_one_build() {
    let (q, f) = runs();
    let cmd = |r: &Value| {
        r["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(cmd(&q).contains(&"--quick".to_string()), "{:?}", cmd(&q));
    assert!(!cmd(&f).contains(&"--quick".to_string()), "{:?}", cmd(&f));
    assert_eq!(q["tool_version"], f["tool_version"]);
    // A call figure valid in both runs: the comparison below is not vacuous.
    let (vq, vf) = (valid(&q), valid(&f));
    assert!(
        vq.iter().any(|p| p.starts_with("call.") && vf.contains(p)),
        "{vq:?} {vf:?}"
    );
}

#[test]
fn a_quick_and_a_full_run_of_one_build_raise_no_alarm() {
    let tmp = tempfile::tempdir().unwrap();
    let (q, f) = runs();
    let (a, b) = (
        write(tmp.path(), "quick.json", &q),
        write(tmp.path(), "full.json", &f),
    );
    let out = compare(tmp.path(), &a, &b, "json");
    let calls = call_verdicts(&out);
    assert_eq!(calls.len(), 2, "{calls:?}");
    // Every call figure valid in both is compared and found no different; one invalid in
    // either run is not comparable (the notes say why), never an alarm.
    let both: Vec<String> = valid(&q)
        .into_iter()
        .filter(|p| valid(&f).contains(p))
        .collect();
    for (probe, verdict) in &calls {
        let want = if both.contains(probe) {
            "no_significant_difference"
        } else {
            "not_comparable"
        };
        assert_eq!(verdict, want, "{probe}: {out:?}");
    }
    assert_eq!(out.status.code(), Some(0), "the gate: {out:?}");
    let text = compare(tmp.path(), &a, &b, "text");
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(
        !shown.contains("slower") && !shown.contains("faster"),
        "{shown}"
    );
}

/// `run` with its call figures' samples and summaries scaled by `k`.
fn scaled(mut run: Value, k: f64) -> Value {
    for m in run["measurements"].as_array_mut().unwrap() {
        if !m["probe"].as_str().unwrap().starts_with("call.") {
            continue;
        }
        for key in ["samples", "baseline_samples"] {
            if let Some(xs) = m[key].as_array_mut() {
                for x in xs {
                    *x = (x.as_f64().unwrap() * k).into();
                }
            }
        }
        for key in ["value", "raw", "baseline", "difference"] {
            if !m[key].is_object() {
                continue;
            }
            for s in ["median", "mean", "min", "max", "p95"] {
                if let Some(v) = m[key][s].as_f64() {
                    m[key][s] = (v * k).into();
                }
            }
            if let Some(ci) = m[key]["ci95"].as_array() {
                let ci: Vec<f64> = ci.iter().map(|x| x.as_f64().unwrap() * k).collect();
                m[key]["ci95"] = serde_json::json!(ci);
            }
        }
    }
    run
}

/// The failing input: the full run against itself with its call figures 1.5× slower (a
/// regression of the code they time) alarms and fails the gate, naming the figure. The
/// recorded runs (a quiet machine) drift ±11–13% between their own rounds, which the gate
/// allows for: half again is well beyond that.
#[test]
fn calls_made_half_again_slower_alarm() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, f) = runs();
    let slow = scaled(f.clone(), 1.5);
    let (a, b) = (
        write(tmp.path(), "full.json", &f),
        write(tmp.path(), "slow.json", &slow),
    );
    let out = compare(tmp.path(), &a, &b, "json");
    let calls = call_verdicts(&out);
    let both = valid(&f);
    for (probe, verdict) in &calls {
        if both.contains(probe) {
            assert_eq!(verdict, "slower", "{probe}: {out:?}");
        }
    }
    assert_eq!(out.status.code(), Some(1), "the gate: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("regression: call.chain"), "{err}");
}
