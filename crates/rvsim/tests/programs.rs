//! The committed test programs (built from programs/ by its Makefile) run to completion and
//! check themselves; these tests also pin what the machine reports about them.

use rvsim::{CacheConfig, Config, Machine, Program, Stop};

fn load(name: &str) -> Program {
    let path = format!("{}/programs/elf/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Program::from_elf(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run(name: &str, cfg: &Config) -> (i32, Machine) {
    let mut m = Machine::new(cfg, &load(name)).unwrap();
    let status = match m.run() {
        Stop::Exit(status) => status,
        other => panic!("{name}: {other}"),
    };
    (status, m)
}

fn full_config() -> Config {
    Config {
        icache: Some(CacheConfig::parse("sets=8,ways=1,words=2").unwrap()),
        dcache: Some(CacheConfig::parse("sets=16,ways=2,words=4").unwrap()),
        pipeline: true,
        miss_penalty: 10,
        ..Config::default()
    }
}

#[test]
fn assembly_selftest_passes_with_and_without_compressed_code() {
    for name in ["selftest-rv32im.elf", "selftest-rv32imc.elf"] {
        for cfg in [Config::default(), full_config()] {
            let (status, m) = run(name, &cfg);
            assert_eq!(status, 0, "{name}: first failing check is number {status}");
            // ecall, ebreak, 2 illegal instructions, 2 loads/stores outside memory
            // (misaligned ones are done in hardware)
            assert_eq!(m.stats().exceptions, 6, "{name}");
        }
    }
}

#[test]
fn compressed_build_runs_compressed_instructions() {
    let (_, m) = run("selftest-rv32imc.elf", &Config::default());
    assert!(m.stats().compressed_retired > 50);
    let (_, m) = run("selftest-rv32im.elf", &Config::default());
    assert_eq!(m.stats().compressed_retired, 0);
}

#[test]
fn rv32im_machine_rejects_compressed_code() {
    let cfg = Config {
        compressed: false,
        ..Config::default()
    };
    let (status, _) = run("selftest-rv32im.elf", &cfg);
    assert_eq!(status, 0);
    let mut m = Machine::new(&cfg, &load("selftest-rv32imc.elf")).unwrap();
    let stop = m.run();
    assert!(
        matches!(stop, Stop::Trap { cause: 2, pc, .. } if pc >> 12 == 0x80000),
        "{stop}"
    );
}

#[test]
fn timer_interrupts_are_delivered_and_returned_from() {
    for cfg in [Config::default(), full_config()] {
        let (status, m) = run("timer-rv32imc.elf", &cfg);
        assert_eq!(status, 0, "failed check {status}");
        let s = m.stats();
        assert_eq!(s.interrupts, 5);
        if let Some(p) = s.pipeline {
            assert_eq!(p.interrupt_flushes, 5 * 3);
        }
    }
}

#[test]
fn c_selftest_passes_and_prints() {
    for name in ["cselftest-rv32im.elf", "cselftest-rv32imc.elf"] {
        let (status, m) = run(name, &full_config());
        let out = String::from_utf8_lossy(m.stdout()).to_string();
        assert_eq!(status, 0, "{name}: {out}");
        assert_eq!(out, "selftest: 0 failures\n");
    }
}

#[test]
fn loop_program_gives_the_same_checksum_for_both_builds() {
    let (s1, m1) = run("loop-rv32im.elf", &full_config());
    let (s2, m2) = run("loop-rv32imc.elf", &full_config());
    assert_eq!((s1, s2), (0, 0));
    assert_eq!(m1.stdout(), m2.stdout());
    assert!(String::from_utf8_lossy(m1.stdout()).starts_with("loop: checksum "));
    let (p1, p2) = (load("loop-rv32im.elf"), load("loop-rv32imc.elf"));
    assert!(p2.text_size < p1.text_size);
}

#[test]
fn timer_interval_option_interrupts_an_unmodified_c_program() {
    let cfg = Config {
        timer_interval: Some(1000),
        pipeline: true,
        ..Config::default()
    };
    let (status, m) = run("loop-rv32imc.elf", &cfg);
    assert_eq!(status, 0);
    let s = m.stats();
    let expected = s.steps / 1000;
    assert!(
        s.interrupts > 0 && s.interrupts <= expected,
        "{} vs {expected}",
        s.interrupts
    );
    let (_, plain) = run("loop-rv32imc.elf", &Config::default());
    assert_eq!(m.stdout(), plain.stdout());
}
