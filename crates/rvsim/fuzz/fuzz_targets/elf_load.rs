//! Any bytes given to the ELF loader give a program or an error, never a panic; a program that
//! loads is run for a bounded number of instructions with every model enabled, on both
//! engines, which must report the same ending, registers, memory and counters.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rvsim::{CacheConfig, Config, Engine, Machine, Program};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Program::from_elf(data) {
        let cfg = Config {
            memory: None,
            max_instructions: 10_000,
            icache: CacheConfig::parse("sets=4,ways=2,words=2").ok(),
            dcache: CacheConfig::parse("sets=4,ways=1,words=4,write=through").ok(),
            pipeline: true,
            timer_interval: Some(97),
            ..Config::default()
        };
        let run = |engine| {
            let mut m = Machine::new(&Config { engine, ..cfg.clone() }, &p).ok()?;
            let stop = m.run();
            Some((stop, m.stats(), m.regs, m.pc, m.memory_contents().to_vec()))
        };
        assert_eq!(run(Engine::Blocks), run(Engine::Reference));
    }
});
