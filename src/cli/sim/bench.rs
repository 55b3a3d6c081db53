//! `oscost sim bench`: how fast the simulator runs (million instructions per second) in its
//! main configurations, and qemu-riscv32 (Linux user mode) on the same program when installed.

use std::process::Command;
use std::time::Instant;

use rvsim::runtime::{BENCH_ELF, BENCH_USER_ELF};
use rvsim::{CacheConfig, Config, Machine, Program};

use super::{load_elf, BenchArgs};
use crate::error::{Error, Result};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs `program` `repeat` times; returns (instructions, median seconds).
fn time_sim(program: &Program, cfg: &Config, repeat: u32) -> Result<(u64, f64)> {
    let mut secs = Vec::new();
    let mut instret = 0;
    for _ in 0..repeat {
        let mut m = Machine::new(cfg, program).map_err(|e| Error::usage(e.to_string()))?;
        let start = Instant::now();
        let stop = m.run();
        if stop.status().is_none() {
            return Err(Error::usage(format!("benchmark program: {stop}")));
        }
        secs.push(start.elapsed().as_secs_f64());
        instret = m.stats().instret;
    }
    Ok((instret, median(secs)))
}

pub fn bench(a: BenchArgs) -> Result<()> {
    if a.repeat == 0 {
        return Err(Error::usage("--repeat 0: run at least once"));
    }
    let program = match &a.elf {
        Some(path) => load_elf(path)?,
        None => Program::from_elf(BENCH_ELF).map_err(|e| Error::env(e.to_string()))?,
    };
    let icache =
        CacheConfig::parse("sets=8,ways=1,words=2").map_err(|e| Error::env(e.to_string()))?;
    let dcache =
        CacheConfig::parse("sets=16,ways=2,words=4").map_err(|e| Error::env(e.to_string()))?;
    let base = Config::default();
    let configs = [
        ("functional only", base.clone()),
        (
            "I-cache 8x1x2 (3C)",
            Config {
                icache: Some(icache),
                ..base.clone()
            },
        ),
        (
            "I+D-cache + 5-stage",
            Config {
                icache: Some(icache),
                dcache: Some(dcache),
                pipeline: true,
                miss_penalty: 10,
                ..base.clone()
            },
        ),
    ];
    println!(
        "{:<24}{:>14}{:>10}{:>10}",
        "configuration", "instructions", "seconds", "MIPS"
    );
    for (name, cfg) in &configs {
        let (n, s) = time_sim(&program, cfg, a.repeat)?;
        println!("{name:<24}{n:>14}{s:>10.3}{:>10.1}", n as f64 / s / 1e6);
    }
    if a.elf.is_none() && !a.no_qemu {
        qemu(a.repeat)?;
    }
    Ok(())
}

/// Times qemu-riscv32 on the user-mode build of the benchmark (wall clock, including its
/// start-up), with the instruction count taken from the simulator on the same file.
fn qemu(repeat: u32) -> Result<()> {
    let program = Program::from_elf(BENCH_USER_ELF).map_err(|e| Error::env(e.to_string()))?;
    let (n, _) = time_sim(&program, &Config::default(), 1)?;
    let path = std::env::temp_dir().join(format!("oscost-bench-{}.elf", std::process::id()));
    std::fs::write(&path, BENCH_USER_ELF).map_err(|e| Error::io(path.display(), e))?;
    // qemu's loader refuses a file that is not executable.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| Error::io(path.display(), e))?;
    let mut secs = Vec::new();
    let mut failure = None;
    for _ in 0..repeat {
        let start = Instant::now();
        match Command::new("qemu-riscv32").arg(&path).output() {
            Ok(o) if o.status.success() => secs.push(start.elapsed().as_secs_f64()),
            Ok(o) => {
                let why = String::from_utf8_lossy(&o.stderr);
                failure = Some(format!("exited with {}: {}", o.status, why.trim()))
            }
            Err(e) => failure = Some(e.to_string()),
        }
    }
    let _ = std::fs::remove_file(&path);
    match failure {
        None => {
            let s = median(secs);
            println!(
                "{:<24}{n:>14}{s:>10.3}{:>10.1}   (wall clock incl. start-up, no cache model)",
                "qemu-riscv32",
                n as f64 / s / 1e6
            );
        }
        Some(why) if why.contains("No such file") => {
            println!("qemu-riscv32 not installed (apt-get install -y qemu-user) - no comparison")
        }
        Some(why) => println!("qemu-riscv32 failed: {why}"),
    }
    Ok(())
}
