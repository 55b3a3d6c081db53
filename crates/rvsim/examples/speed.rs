//! The configurations of `oscost sim bench` on the built-in benchmark, with every
//! counter printed, so two builds of the simulator can be compared for speed (user CPU time,
//! alternating runs) and for identical statistics (diff the output without the timing).
//! `cargo run --release -p rvsim --example speed -- [functional|icache|pipeline|percycle|all] [repeat] [ELF]`
//! (the ELF instead of the built-in benchmark, e.g. a CoreMark build).
//!
//! The configurations are spelled out here rather than taken from
//! `rvsim::runtime::bench_configs` so this file also builds against older versions of the
//! crate (the old-against-new commands in the README copy it into commit 72e65da).

use std::time::Instant;

use rvsim::runtime::BENCH_ELF;
use rvsim::{CacheConfig, Config, FetchCount, Machine, Program};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("all", String::as_str);
    let repeat: u32 = args.get(2).map_or(Ok(1), |s| s.parse())?;
    let program = match args.get(3) {
        Some(path) => Program::from_elf(&std::fs::read(path)?)?,
        None => Program::from_elf(BENCH_ELF)?,
    };
    let icache = CacheConfig::parse("sets=8,ways=1,words=2")?;
    let dcache = CacheConfig::parse("sets=16,ways=2,words=4")?;
    let base = Config::default();
    let configs = [
        ("functional", base.clone()),
        (
            "icache",
            Config {
                icache: Some(icache),
                ..base.clone()
            },
        ),
        (
            "pipeline",
            Config {
                icache: Some(icache),
                dcache: Some(dcache),
                pipeline: true,
                miss_penalty: 10,
                ..base.clone()
            },
        ),
        (
            "percycle",
            Config {
                icache: Some(icache),
                pipeline: true,
                count: FetchCount::PerCycle,
                ..base.clone()
            },
        ),
    ];
    for (name, cfg) in &configs {
        if which != "all" && which != *name {
            continue;
        }
        for _ in 0..repeat {
            let mut m = Machine::new(cfg, &program)?;
            let start = Instant::now();
            let stop = m.run();
            let secs = start.elapsed().as_secs_f64();
            let s = m.stats();
            eprintln!(
                "{name}: {secs:.3} s, {:.1} MIPS",
                s.instret as f64 / secs / 1e6
            );
            println!("{name}: {stop}\n{s:?}");
        }
    }
    Ok(())
}
