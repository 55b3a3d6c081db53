//! `oscost sim` end to end on the committed test ELFs: results, JSON, and exit code 2 with a
//! one-line message for bad input.

use std::process::Command;

const ELF_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/rvsim/programs/elf");

fn oscost(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_oscost"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn run_reports_counts_and_writes_json() {
    let json = std::env::temp_dir().join(format!("oscost-sim-test-{}.json", std::process::id()));
    let elf = format!("{ELF_DIR}/cselftest-rv32imc.elf");
    let (code, out, err) = oscost(&[
        "sim",
        "run",
        &elf,
        "--icache",
        "sets=8,ways=1,words=2",
        "--dcache",
        "sets=16,ways=2,words=4",
        "--miss-penalty",
        "10",
        "--timer-interrupt",
        "1000",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("selftest: 0 failures\n"), "{out}");
    assert!(out.contains("exit status  0"), "{out}");
    assert!(out.contains("CPI"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    assert_eq!(v["exit_status"], 0);
    assert_eq!(v["ended"]["kind"], "exit");
    assert!(v["interrupts"].as_u64().unwrap() > 0);
    let ic = &v["icache"];
    assert_eq!(
        ic["hits"].as_u64().unwrap() + ic["misses"].as_u64().unwrap(),
        ic["accesses"].as_u64().unwrap()
    );
    assert!(v["pipeline"]["cycles"].as_u64().unwrap() > v["instructions"].as_u64().unwrap());
}

#[test]
fn a_predictor_changes_the_cycles_and_says_how_many_it_mispredicted() {
    let elf = format!("{ELF_DIR}/loop-rv32imc.elf");
    let json = std::env::temp_dir().join(format!("oscost-sim-bp-{}.json", std::process::id()));
    let run = |predictor: &str| {
        let (code, out, err) = oscost(&[
            "sim",
            "run",
            &elf,
            "--predictor",
            predictor,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        std::fs::remove_file(&json).unwrap();
        (out, v)
    };
    let (out, plain) = run("not-taken");
    assert!(out.contains("predictor not-taken: "), "{out}");
    let (out, two_bit) = run("2bit:64");
    assert!(out.contains("predictor 2bit:64,btb=64: "), "{out}");
    assert_eq!(plain["instructions"], two_bit["instructions"]);
    let (p, q) = (&plain["pipeline"], &two_bit["pipeline"]);
    assert!(
        q["mispredictions"].as_u64() < p["mispredictions"].as_u64(),
        "{p} {q}"
    );
    assert!(q["cycles"].as_u64() < p["cycles"].as_u64(), "{p} {q}");
    assert_eq!(q["predictor"], "2bit:64,btb=64");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let elf = format!("{ELF_DIR}/loop-rv32imc.elf");
    let cases: &[(&[&str], &str)] = &[
        (&["sim", "run", "/nonexistent.elf"], "/nonexistent.elf"),
        (&["sim", "run", "Cargo.toml"], "not an ELF"),
        (&["sim", "run", &elf, "--icache", "sets=6"], "sets=6"),
        (&["sim", "run", &elf, "--dcache", "ways=0"], "ways=0"),
        (
            &["sim", "run", &elf, "--memory", "1k", "--stack", "4k"],
            "--stack applies only",
        ),
        (&["sim", "run", &elf, "--memory", "2G"], "--memory 2G"),
        (&["sim", "compare", &elf], "give two or more"),
        (&["sim", "compare", "x.c", &elf], "not a mix"),
        (
            &["sim", "compare", "x.c", "--runtime", "newlib"],
            "--runtime newlib",
        ),
        (&["sim", "conformance", "/nonexistent"], "not a folder"),
        (
            &["sim", "run", &elf, "--pipeline", "7stage"],
            "--pipeline 7stage",
        ),
        (&["sim", "run", &elf, "--memory", "lots"], "--memory 'lots'"),
        (&["sim", "compare", "x.c", "--march", "rv64gc"], "RV32 only"),
        (&["sim", "bench", "--repeat", "0"], "--repeat 0"),
        (
            &["sim", "bench", "--coremark", "/nonexistent"],
            "--coremark /nonexistent: no CoreMark sources",
        ),
        (
            &["sim", "bench", &elf, "--coremark", "/nonexistent"],
            "only that ELF is timed",
        ),
        (
            &["sim", "bench", "--keep-builds", "/nonexistent"],
            "--keep-builds /nonexistent: not an existing folder",
        ),
        (
            &["sim", "bench", &elf, "--keep-builds", "/tmp"],
            "with an ELF given none is built",
        ),
        (&["sim", "sweep", &elf, "--ways", "0"], "--ways 0"),
        (
            &["sim", "run", &elf, "--max-instructions", "0"],
            "--max-instructions 0",
        ),
        (&["sim", "run", &elf, "--time-limit=-1"], "--time-limit -1"),
        (
            &["sim", "sweep", &elf, "--time-limit", "nan"],
            "--time-limit NaN",
        ),
        (
            &["sim", "run", &elf, "--icache", "sets=8,sets=16"],
            "sets given twice",
        ),
        (
            &["sim", "run", &elf, "--predictor", "3bit:64"],
            "unknown predictor '3bit'",
        ),
        (
            &["sim", "run", &elf, "--predictor", "2bit:100"],
            "a power of two",
        ),
        (
            &[
                "sim",
                "run",
                &elf,
                "--predictor",
                "btfn",
                "--pipeline",
                "none",
            ],
            "--pipeline none",
        ),
        (
            &[
                "sim",
                "run",
                &elf,
                "--predictor",
                "gshare:64",
                "--count",
                "per-cycle",
            ],
            "no branch predictor",
        ),
    ];
    for (args, needle) in cases {
        let (code, _, err) = oscost(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn compare_without_the_cross_compiler_says_how_to_install_it() {
    let empty = std::env::temp_dir().join(format!("oscost-empty-path-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/rvsim/programs/c/loop.c"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_oscost"))
        .args(["sim", "compare", src])
        .env("PATH", &empty)
        .output()
        .unwrap();
    std::fs::remove_dir(&empty).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("apt-get install -y gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf"),
        "{err}"
    );
}

/// The course-style programs: linked at 0x10000 without start-up code, main returns to 0.
#[test]
fn seed_program_runs_and_exits_with_its_status() {
    for march in ["rv32im", "rv32imc"] {
        let elf = format!("{ELF_DIR}/seed-{march}.elf");
        let json = tempfile::NamedTempFile::new().unwrap();
        let (code, out, err) = oscost(&[
            "sim",
            "run",
            &elf,
            "--icache",
            "sets=8,ways=1,words=2",
            "--json",
            json.path().to_str().unwrap(),
        ]);
        assert_eq!(code, 33, "the guest's status is the exit code: {err}");
        assert!(
            out.contains("ended        returned to address 0 with a0 = 33"),
            "{out}"
        );
        assert!(out.contains("memory       0x00010000.."), "{out}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap();
        assert_eq!(v["ended"]["kind"], "return");
        assert_eq!(v["ended"]["status"], 33);
        assert!(v["icache"]["hit_rate"].as_f64().unwrap() > 0.9);
    }
}

#[test]
fn endings_other_than_exit_keep_statistics_and_map_to_exit_codes() {
    let elf = format!("{ELF_DIR}/loop-rv32imc.elf");
    let (code, out, _) = oscost(&["sim", "run", &elf, "--max-instructions", "100"]);
    assert_eq!(code, 124);
    assert!(out.contains("instruction limit of 100 reached"), "{out}");
    assert!(out.contains("100 retired"), "{out}");
    let (code, out, _) = oscost(&["sim", "run", &elf, "--no-compressed"]);
    assert_eq!(code, 132, "illegal instruction = 128 + SIGILL");
    assert!(out.contains("unhandled trap: illegal instruction"), "{out}");
}

#[test]
fn timer_interrupt_on_a_program_that_never_enables_it_says_so() {
    let elf = format!("{ELF_DIR}/seed-rv32imc.elf");
    let (_, out, _) = oscost(&["sim", "run", &elf, "--timer-interrupt", "100"]);
    assert!(out.contains("--timer-interrupt 100 had no effect"), "{out}");
    let elf = format!("{ELF_DIR}/cselftest-rv32imc.elf");
    let (_, out, _) = oscost(&["sim", "run", &elf, "--timer-interrupt", "100"]);
    assert!(!out.contains("had no effect"), "{out}");
}

#[test]
fn compare_of_two_elfs_writes_json_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("c.json"), dir.path().join("c.csv"));
    let (code, out, err) = oscost(&[
        "sim",
        "compare",
        &format!("{ELF_DIR}/seed-rv32im.elf"),
        &format!("{ELF_DIR}/seed-rv32imc.elf"),
        "--icache",
        "sets=8,ways=1,words=2",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  functions"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let builds = v["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 2);
    assert!(builds[1]["text_bytes"].as_u64() < builds[0]["text_bytes"].as_u64());
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("build,text_bytes,own_text_bytes,ended"));
    assert_eq!(lines.count(), 2);
}

#[test]
fn conformance_command_prints_the_table_and_fails_on_a_failing_test() {
    let dir = tempfile::tempdir().unwrap();
    let suite = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/riscv-tests/elf");
    for name in ["rv32ui-p-add", "rv32ua-p-lrsc"] {
        std::fs::copy(format!("{suite}/{name}"), dir.path().join(name)).unwrap();
    }
    let (code, out, err) = oscost(&["sim", "conformance", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("total        2/2   passed"), "{out}");
    // A program that never writes tohost fails, with its reason.
    std::fs::copy(
        format!("{ELF_DIR}/seed-rv32imc.elf"),
        dir.path().join("rv32ui-p-seed"),
    )
    .unwrap();
    let (code, out, _) = oscost(&["sim", "conformance", dir.path().to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        out.contains("FAIL rv32ui-p-seed: no tohost symbol"),
        "{out}"
    );
}

/// `sim bench ELF`: every configuration timed, its counts and each run's seconds in the JSON.
#[test]
fn bench_of_an_elf_reports_each_configuration() {
    let elf = format!("{ELF_DIR}/cselftest-rv32imc.elf");
    let json = tempfile::NamedTempFile::new().unwrap();
    let (code, out, err) = oscost(&[
        "sim",
        "bench",
        &elf,
        "--repeat",
        "2",
        "--json",
        json.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for label in [
        "functional only",
        "I-cache 8x1x2 (3C)",
        "I+D-cache + 5-stage",
        "I+D-cache + 5-stage, 2bit",
        "I-cache per cycle + 5-stage",
    ] {
        assert!(out.contains(label), "{out}");
    }
    assert!(
        out.contains("qemu-riscv32 not timed: not run on a given ELF"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap();
    let w = &v["workloads"][0];
    assert_eq!(w["name"], "cselftest-rv32imc.elf");
    let sim = w["simulator"].as_array().unwrap();
    assert_eq!(sim.len(), 5);
    for t in sim {
        assert_eq!(t["valid"], true, "{t}");
        assert_eq!(t["seconds"].as_array().unwrap().len(), 2);
        assert!(t["instructions"].as_u64().unwrap() > 1000);
    }
    assert!(w["qemu"]["skipped"].is_string());
}

/// A trap loop runs at reference-engine speed: the time limit ends it, says so, how far it
/// got and how to raise it, with the instruction limit's exit code; 0 is no bound. Neither
/// depends on the host's speed: 1 ms passes long before 10^10 instructions.
#[test]
fn a_time_limit_bounds_trap_loops_on_every_running_command() {
    let elf = format!("{ELF_DIR}/traploop-rv32im.elf");
    let (code, out, _) = oscost(&["sim", "run", &elf, "--time-limit", "0.001"]);
    // Lines wrap at the terminal's width: compare the words.
    let out = flat(&out);
    assert_eq!(code, 124, "{out}");
    assert!(
        out.contains("time limit of 0.001 s reached after "),
        "{out}"
    );
    assert!(out.contains("not deterministic"), "{out}");
    assert!(
        out.contains("raise it with --time-limit SECONDS (0: no bound)"),
        "{out}"
    );
    let (code, out, _) = oscost(&[
        "sim",
        "run",
        &elf,
        "--time-limit",
        "0",
        "--max-instructions",
        "1000",
    ]);
    let out = flat(&out);
    assert_eq!(code, 124, "{out}");
    assert!(out.contains("instruction limit of 1000 reached"), "{out}");
    assert!(!out.contains("time limit"), "{out}");
    let (code, out, err) = oscost(&["sim", "compare", &elf, &elf, "--time-limit", "0.001"]);
    let out = flat(&out);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("time limit of 0.001 s reached"), "{out}");
    assert!(out.contains("raise it with --time-limit"), "{out}");
}

fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
