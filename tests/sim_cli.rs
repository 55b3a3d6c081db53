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
    assert!(v["interrupts"].as_u64().unwrap() > 0);
    let ic = &v["icache"];
    assert_eq!(
        ic["hits"].as_u64().unwrap() + ic["misses"].as_u64().unwrap(),
        ic["accesses"].as_u64().unwrap()
    );
    assert!(v["pipeline"]["cycles"].as_u64().unwrap() > v["instructions"].as_u64().unwrap());
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
            &["sim", "run", &elf, "--max-instructions", "100"],
            "did not exit after 100",
        ),
        (
            &["sim", "run", &elf, "--no-compressed"],
            "illegal instruction at pc 0x",
        ),
        (
            &["sim", "run", &elf, "--pipeline", "7stage"],
            "--pipeline 7stage",
        ),
        (&["sim", "run", &elf, "--memory", "lots"], "--memory 'lots'"),
        (&["sim", "compare", "x.c", "--march", "rv64gc"], "RV32 only"),
        (&["sim", "bench", "--repeat", "0"], "--repeat 0"),
        (&["sim", "sweep", &elf, "--ways", "0"], "--ways 0"),
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
