//! Any bytes given to the ELF loader give a program or an error, never a panic; a program that
//! loads is run for a bounded number of instructions with every model enabled.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rvsim::{CacheConfig, Config, Machine, Program};

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
        if let Ok(mut m) = Machine::new(&cfg, &p) {
            let _ = m.run();
        }
    }
});
