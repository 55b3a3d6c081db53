//! `oscost mmap lab` end to end on a tiny buffer: a row for every variant, every metric
//! present (hardware counters either counted or carrying the reason they are not), one SVG
//! per metric, the CSV, and refusals of unsafe competitor sizes. No timing thresholds.

use serde_json::Value;
use std::process::Command;

const HW: [&str; 8] = [
    "L1-dcache-loads",
    "L1-dcache-load-misses",
    "L1-dcache-stores",
    "L1-dcache-store-misses",
    "dTLB-loads",
    "dTLB-load-misses",
    "dTLB-stores",
    "dTLB-store-misses",
];

#[test]
fn every_variant_has_a_row_with_every_metric_or_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("lab.json");
    let svg = tmp.path().join("svg");
    let files = tmp.path().join("files");
    let cpu = *oscost::machine::affinity::allowed_cpus().first().unwrap();
    std::fs::create_dir(&svg).unwrap();
    std::fs::create_dir(&files).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_oscost"))
        // No test writes a history: this directory cannot be created.
        .env("XDG_DATA_HOME", "/proc/oscost-tests-no-history")
        .env_remove("OSCOST_DB")
        .args([
            "mmap",
            "lab",
            "--size",
            "1m",
            "--reps",
            "1",
            "--compete",
            "64m",
            "--quiet",
            "--cpu",
            &cpu.to_string(),
        ])
        .arg("--json")
        .arg(&json)
        .arg("--svg-dir")
        .arg(&svg)
        .arg("--dir")
        .arg(&files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("competing process holding"),
        "says which pressure was used"
    );
    let run: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let ms = run["measurements"].as_array().unwrap();
    let variants: Vec<&str> = ms
        .iter()
        .map(|m| m["params"]["variant"].as_str().unwrap())
        .collect();
    assert_eq!(
        variants,
        [
            "anon-private",
            "anon-shared",
            "file-shared",
            "file-shared-random",
            "file-shared-populate",
            "file-shared-msync-memset",
            "compete-anon",
            "compete-file-shared",
            "compete-file-shared-populate"
        ]
    );
    for m in ms {
        // Every lab child ran pinned where --cpu said, and its placement is checked there.
        assert_eq!(
            m["params"]["cpus"],
            serde_json::json!([cpu]),
            "{}",
            m["params"]
        );
        let placement = m["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == "placement")
            .unwrap();
        let placement: oscost::model::Check = serde_json::from_value(placement.clone()).unwrap();
        assert!(
            oscost::report::checks::expected(&placement).contains(&format!("{cpu}")),
            "{placement:?}"
        );
        assert_eq!(m["probe"], "mmap.lab");
        let ru = &m["evidence"]["rusage"];
        for k in [
            "utime_us",
            "stime_us",
            "maxrss_kb",
            "minflt",
            "majflt",
            "inblock",
            "oublock",
            "nvcsw",
            "nivcsw",
        ] {
            assert!(ru[k].is_u64(), "{k} missing in {}", m["params"]);
        }
        assert!(ru["minflt"].as_u64().unwrap() > 0, "a fresh mapping faults");
        for h in HW {
            let e = &m["evidence"]["events"][h];
            assert!(e.is_object(), "{h} missing");
            if e["supported"] == false {
                assert!(
                    e["reason"].as_str().is_some_and(|r| !r.is_empty()),
                    "{h}: no reason"
                );
            } else {
                assert!(e["per_op"].is_number(), "{h}: supported but no count");
            }
        }
    }
    let pattern_of = |v: &str| {
        ms.iter().find(|m| m["params"]["variant"] == v).unwrap()["params"]["pattern"].clone()
    };
    assert_eq!(pattern_of("file-shared-random"), "random");
    assert_eq!(pattern_of("file-shared"), "seq");
    let svgs = std::fs::read_dir(&svg)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    assert_eq!(svgs, 20, "one chart per metric");
    let csv = std::fs::read_to_string(svg.join("lab.csv")).unwrap();
    assert_eq!(csv.lines().count(), 10, "header + nine rows");
    assert!(
        std::fs::read_dir(&files).unwrap().next().is_none(),
        "lab files removed"
    );
}

#[test]
fn unsafe_competitor_and_bad_input_are_refused() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_oscost"))
            // No test writes a history: this directory cannot be created.
            .env("XDG_DATA_HOME", "/proc/oscost-tests-no-history")
            .env_remove("OSCOST_DB")
            .args(["mmap", "lab"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, err) = run(&["--compete", "99%", "--size", "1m"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("use at most"), "{err}");
    let (code, err) = run(&["--compete", "100%"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("below 100%"), "{err}");
    let (code, err) = run(&["--pattern", "zigzag"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("invalid value 'zigzag'"), "{err}");
    let (code, _) = run(&["--size", "0"]);
    assert_eq!(code, Some(2));
}
