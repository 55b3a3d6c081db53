//! `Machine::run` (the block engine: counts summed per block, timer and limit checked once per
//! block) must report exactly what single-stepping reports (`Machine::step`, the reference
//! engine, which checks the timer on every instruction): same end, same counters, same
//! registers, for every committed program and every model combination.

use rvsim::runtime::bench_configs;
use rvsim::{Config, Machine, Program, Stop};

fn load(name: &str) -> Program {
    let path = format!("{}/programs/elf/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Program::from_elf(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `sim bench` configurations, the pipeline alone, and everything with a timer.
fn configs() -> Vec<(&'static str, Config)> {
    let mut configs = bench_configs().to_vec();
    let all = configs[2].1.clone();
    configs.push((
        "pipeline only",
        Config {
            pipeline: true,
            ..Config::default()
        },
    ));
    configs.push((
        "all + timer",
        Config {
            miss_penalty: 3,
            timer_interval: Some(997),
            ..all
        },
    ));
    configs
}

/// Everything a run reports, as text (Stats has no PartialEq).
fn outcome(stop: &Stop, m: &Machine) -> String {
    format!(
        "{stop:?}\n{:?}\npc={:08x} regs={:?}\nout={:?}",
        m.stats(),
        m.pc,
        m.regs,
        m.stdout()
    )
}

#[test]
fn batched_run_and_single_step_report_identical_counters() {
    let programs = [
        "selftest-rv32im.elf",
        "selftest-rv32imc.elf",
        "cselftest-rv32imc.elf",
        "seed-rv32imc.elf",
        "loop-rv32im.elf",
        "loop-rv32imc.elf",
        "timer-rv32imc.elf",
    ];
    for name in programs {
        let program = load(name);
        for (label, cfg) in configs() {
            let mut batched = Machine::new(&cfg, &program).unwrap();
            let stop = batched.run();
            let expected = outcome(&stop, &batched);

            let mut stepped = Machine::new(&cfg, &program).unwrap();
            let stop = loop {
                if let Some(stop) = stepped.step() {
                    break stop;
                }
            };
            assert_eq!(outcome(&stop, &stepped), expected, "{name} with {label}");
            assert!(
                batched.stats().instret > 0,
                "{name} with {label}: nothing ran"
            );
        }
    }
}
