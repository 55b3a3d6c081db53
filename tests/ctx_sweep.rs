//! The sweep's reports on synthetic runs (subtraction, below resolution, direct vs indirect,
//! lmbench lines, knees), cache labels from a recorded machine, and bad input at the CLI.

mod common;

use oscost::analysis::sweep::analyze;
use oscost::engine::derive::derive;
use oscost::machine::fits::label;
use oscost::machine::Machine;
use oscost::model::{Evidence, Measurement, Run};
use oscost::report::sweep::{lmbench, render};
use std::collections::BTreeMap;
use std::process::Command;

/// A sweep point from synthetic interleaved samples (ns per lap), through the engine's own
/// subtraction.
fn point(procs: usize, size: u64, lap: f64, overhead: f64, jitter: f64) -> Measurement {
    let raw: Vec<f64> = (0..21)
        .map(|i| lap + jitter * ((i * 7 % 5) as f64 - 2.0))
        .collect();
    let base: Vec<f64> = (0..21)
        .map(|i| overhead + jitter * ((i * 3 % 5) as f64 - 2.0))
        .collect();
    let d = derive(&raw, &base, procs as f64).unwrap();
    let mut params = BTreeMap::new();
    params.insert("mode".into(), "process".into());
    params.insert("procs".into(), procs.into());
    params.insert("size".into(), size.into());
    params.insert("access".into(), "read".into());
    params.insert("stride".into(), 64.into());
    params.insert("fits_per_process".into(), "L1d".into());
    params.insert("fits_total".into(), "L2".into());
    let mut ev = Evidence::default();
    ev.rusage.iterations = 1000;
    ev.rusage.total.nvcsw = 1000 * procs as u64;
    Measurement {
        probe: "ctx.sweep".into(),
        sample_rounds: Vec::new(),
        sample_canary: Vec::new(),
        canary_fastest: None,
        params,
        unit: "ns/switch".into(),
        value: d.value,
        raw: d.raw,
        raw_unit: "ns/lap".into(),
        baseline: d.baseline,
        difference: d.difference,
        units_per_iteration: procs as f64,
        status: d.status,
        samples: raw,
        baseline_samples: base,
        evidence_samples: vec![],
        iterations_per_sample: 1000,
        baseline_iterations_per_sample: 1000,
        stop_reason: Some(oscost::model::StopReason::Converged),
        evidence: ev,
        checks: vec![],
        warnings: vec![],
        notes: vec![],
        valid: true,
        additive: None,
        observer: None,
        noise: None,
        switch_trace: None,
    }
}

fn run_of(measurements: Vec<Measurement>) -> Run {
    Run {
        schema_version: 1,
        tool_version: "test".into(),
        started_at: "2025-01-01T00:00:00Z".into(),
        command: vec![],
        machine: Machine::default(),
        clock: None,
        measurements,
        skipped: vec![],
        complete: true,
        labels: Default::default(),
        run_id: None,
        item_times: vec![],
        warnings: vec![],
    }
}

fn caches() -> Vec<(String, u64)> {
    vec![
        ("L1d".into(), 48 << 10),
        ("L2".into(), 1 << 20),
        ("L3".into(), 32 << 20),
    ]
}

/// N=2: 2 µs per switch up to 256k, 6 µs from 1m on (a knee where 2 × S passes L2), and a
/// below-resolution point at 64k (lap no different from the overhead).
fn synthetic_sweep() -> Run {
    let mut ms = Vec::new();
    for (size, per_switch) in [
        (0u64, 2000.0),
        (4 << 10, 2000.0),
        (16 << 10, 2010.0),
        (128 << 10, 2020.0),
        (256 << 10, 2030.0),
        (1 << 20, 6000.0),
        (2 << 20, 6100.0),
    ] {
        ms.push(point(2, size, 2.0 * per_switch + 1000.0, 1000.0, 5.0));
    }
    ms.push(point(2, 64 << 10, 1000.0, 1000.0, 20.0));
    run_of(ms)
}

#[test]
fn subtraction_direct_indirect_and_below_resolution() {
    let run = synthetic_sweep();
    let a = analyze(&run, &caches(), &[], &oscost::report::sweep::invalid);
    assert_eq!(a.curves.len(), 1);
    let c = &a.curves[0];
    assert_eq!(c.procs, 2);
    let direct = c.direct.as_ref().expect("S=0 is the direct cost");
    assert!((direct.median - 2000.0).abs() < 1.0, "{}", direct.median);
    // Rows are in size order; the 64k one has no number and says why.
    let sizes: Vec<u64> = c.rows.iter().map(|r| r.size).collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]));
    let r64 = c.rows.iter().find(|r| r.size == 64 << 10).unwrap();
    assert!(r64.per_switch.is_none());
    assert!(r64.reason.as_ref().unwrap().contains("below resolution"));
    let r1m = c.rows.iter().find(|r| r.size == 1 << 20).unwrap();
    let [ind, lo, hi] = r1m.indirect.unwrap();
    assert!((ind - 4000.0).abs() < 5.0, "{ind}");
    assert!(lo <= ind && ind <= hi);
    let table = render(&a, &run, true);
    assert!(table.contains("below resolution"), "{table}");
    assert!(table.contains("(direct)"));
}

#[test]
fn knees_on_the_sweep_match_the_total_footprint() {
    let a = analyze(
        &synthetic_sweep(),
        &caches(),
        &[],
        &oscost::report::sweep::invalid,
    );
    let c = &a.curves[0];
    assert_eq!(c.knees.len(), 1, "{:?}", c.knees);
    let k = &c.knees[0];
    assert_eq!(k.last_below, (256u64 << 10) as f64);
    assert_eq!(k.first_above, (1u64 << 20) as f64);
    // 2 × 512k = 1m = L2: the knee is where the two working sets together outgrow L2, and
    // also where one alone reaches L2.
    assert!(
        k.matches.iter().any(|m| m.starts_with("L2 total")),
        "{:?}",
        k.matches
    );
    // A memory-latency knee at 1m (one buffer) is S = 512k on a ring of two.
    let a = analyze(
        &synthetic_sweep(),
        &caches(),
        &[(1u64 << 20) as f64],
        &oscost::report::sweep::invalid,
    );
    assert!(a.curves[0].knees[0]
        .matches
        .iter()
        .any(|m| m.starts_with("memory-latency knee 1")));
}

#[test]
fn lmbench_lines() {
    let mut run = synthetic_sweep();
    run.measurements
        .push(point(4, 0, 4.0 * 2500.0 + 2000.0, 2000.0, 5.0));
    let out = lmbench(&run);
    let lines: Vec<&str> = out.lines().collect();
    // Blank line, then "size=0k ovr=<per-hop overhead in µs>", then one "N µs" per ring.
    assert_eq!(lines[0], "");
    assert_eq!(lines[1], "\"size=0k ovr=0.50");
    assert_eq!(lines[2], "2 2.00");
    assert_eq!(lines[3], "4 2.50");
    assert!(out.contains("\n\"size=1024k ovr=0.50\n2 6.00\n"), "{out}");
    // lat_ctx would print nothing at 64k; we say why on a line its parsers skip.
    let i = lines
        .iter()
        .position(|l| *l == "\"size=64k ovr=0.50")
        .unwrap();
    assert!(
        lines[i + 1].starts_with("# 2 below resolution"),
        "{}",
        lines[i + 1]
    );
}

fn recorded(name: &str) -> (tempfile::TempDir, Machine) {
    common::load_machine_tree(name)
}

#[test]
fn cache_labels_from_recorded_sysfs() {
    let (_d, m) = recorded("vm-kvm-epyc-2cpu.tree");
    let caches = m.data_cache_sizes(0);
    let labels: Vec<&str> = caches.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, vec!["L1d", "L2", "L3"]);
    let l1d = caches[0].1;
    // One process at L1d's size fits it; two of them together do not.
    let l = label(&caches, 2, l1d);
    assert_eq!(l.per_process, "L1d");
    assert_eq!(l.total, "L2");
    assert_eq!(l.exceeds_total, vec!["L1d".to_string()]);
    let big = label(&caches, 16, caches[2].1);
    assert_eq!(big.total, "memory");
}

fn oscost(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_oscost"))
        // No test writes a history: this directory cannot be created.
        .env("XDG_DATA_HOME", "/proc/oscost-tests-no-history")
        .env_remove("OSCOST_DB")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        &["ctx", "sweep", "--sizes", "4x"][..],
        &["ctx", "sweep", "--procs", "1"],
        &["ctx", "sweep", "--procs", "100000"],
        &["ctx", "sweep", "--stride", "0"],
        &["ctx", "sweep", "--stride", "12"],
        &["ctx", "sweep", "--cpu", "99999"],
        &["ctx", "sweep", "--sizes", "1g", "--procs", "200"],
        &["ctx", "timeslice", "--slices", "500ms"],
        &["ctx", "timeslice", "--slices", "fast"],
        &["ctx", "timeslice", "--work-set", "0"],
        &["mem", "latency", "--max", "0"],
        &["mem", "latency", "--max", "1t"],
        &["mem", "latency", "--min", "1m", "--max", "64k"],
        &["ctx", "--mech", "teleport"],
    ] {
        let (code, err) = oscost(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        assert!(!first.contains("panicked"), "{args:?}: {err}");
        assert!(
            first.starts_with("oscost: ") || first.starts_with("error: "),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn ctx_keeps_its_flags_and_gains_subcommands() {
    let out = Command::new(env!("CARGO_BIN_EXE_oscost"))
        // No test writes a history: this directory cannot be created.
        .env("XDG_DATA_HOME", "/proc/oscost-tests-no-history")
        .env_remove("OSCOST_DB")
        .args(["ctx", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for w in ["sweep", "timeslice", "--mech", "--mode"] {
        assert!(help.contains(w), "{w} missing from:\n{help}");
    }
}

#[test]
fn sweep_svg_is_self_describing() {
    let a = analyze(
        &synthetic_sweep(),
        &caches(),
        &[],
        &oscost::report::sweep::invalid,
    );
    let svg = oscost::report::sweep::svg(&a, "test-host · 2 CPUs").unwrap();
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{}",
        &svg[..80]
    );
    for needle in [
        "Context switch cost",
        "test-host",
        "µs per switch",
        "N=2",
        "L2",
        "knee",
    ] {
        assert!(svg.contains(needle), "{needle} missing");
    }
}

#[test]
fn sweep_html_is_written_with_the_sweep_figure() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("sweep.html");
    let (code, out) = oscost(&[
        "ctx",
        "sweep",
        "--quick",
        "--quiet",
        "--no-save",
        "--sizes",
        "0,4k",
        "--procs",
        "2",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let page = std::fs::read_to_string(&html).expect("--html written");
    assert!(page.contains("Context switch cost vs working set"));
}
