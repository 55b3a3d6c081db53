//! Runs an ELF on the model and prints its output, counts and speed; a minimal library user.
//! `cargo run --release -p rvsim --example run -- prog.elf [icache-spec]`

use std::time::Instant;

use rvsim::{CacheConfig, Config, Machine, Program};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: run prog.elf [icache-spec]")?;
    let program = Program::from_elf(&std::fs::read(path)?)?;
    let cfg = Config {
        icache: args.get(2).map(|s| CacheConfig::parse(s)).transpose()?,
        ..Config::default()
    };
    let mut m = Machine::new(&cfg, &program)?;
    let start = Instant::now();
    let stop = m.run();
    let secs = start.elapsed().as_secs_f64();
    print!("{}", String::from_utf8_lossy(m.stdout()));
    let s = m.stats();
    println!(
        "{stop}; {} instructions in {secs:.3} s = {:.1} MIPS; icache {:?}",
        s.instret,
        s.instret as f64 / secs / 1e6,
        s.icache.map(|c| c.hit_rate())
    );
    Ok(())
}
