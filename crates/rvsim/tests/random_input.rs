//! Cheap deterministic stand-in for the fuzz targets (crates/rvsim/fuzz): random words to the
//! decoder, random and mutated bytes to the ELF loader, and random code to the machine. Nothing
//! may panic; errors are fine.

mod common;
use common::*;
use rvsim::decode::{decode, Op};
use rvsim::{CacheConfig, Config, Machine, Program};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_words_decode_without_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut legal = 0;
    for _ in 0..200_000 {
        let w = rng.next() as u32;
        for c in [true, false] {
            let d = decode(w, c);
            assert!(d.len == 2 || d.len == 4);
            legal += (d.op != Op::Illegal) as u32;
        }
    }
    assert!(legal > 0);
}

#[test]
fn random_and_mutated_elf_bytes_load_without_panic() {
    let mut rng = Rng(42);
    for len in [0usize, 1, 4, 16, 52, 53, 100, 4096] {
        for _ in 0..50 {
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let _ = Program::from_elf(&bytes);
            let mut with_magic = bytes.clone();
            if with_magic.len() >= 6 {
                with_magic[..6].copy_from_slice(b"\x7fELF\x01\x01");
                let _ = Program::from_elf(&with_magic);
            }
        }
    }
    let real = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/elf/timer-rv32imc.elf"
    ))
    .unwrap();
    let cfg = Config {
        max_instructions: 2000,
        memory: Some(1 << 16),
        ..Config::default()
    };
    for _ in 0..2000 {
        let mut b = real.clone();
        for _ in 0..1 + rng.next() % 8 {
            // Mostly the headers, where a flipped byte changes the meaning of the file.
            let at = (rng.next() % 300.min(b.len() as u64)) as usize;
            b[at] = rng.next() as u8;
        }
        if rng.next().is_multiple_of(4) {
            b.truncate((rng.next() % b.len() as u64) as usize);
        }
        if let Ok(p) = Program::from_elf(&b) {
            if let Ok(mut m) = Machine::new(&cfg, &p) {
                let _ = m.run();
            }
        }
    }
}

#[test]
fn random_code_runs_without_panic() {
    let mut rng = Rng(7);
    let cfg = Config {
        max_instructions: 5_000,
        icache: Some(CacheConfig::parse("sets=4,ways=2,words=2,repl=random").unwrap()),
        dcache: Some(CacheConfig::parse("sets=4,ways=1,words=4,write=through,alloc=no").unwrap()),
        pipeline: true,
        miss_penalty: 3,
        timer_interval: Some(100),
        memory: Some(4096),
        ..Config::default()
    };
    let mut outcomes = [0u32; 2];
    for _ in 0..300 {
        // Random words, with a trap handler installed at the start half of the time.
        let mut words: Vec<u32> = (0..256).map(|_| rng.next() as u32).collect();
        if rng.next().is_multiple_of(2) {
            words[0] = auipc(5, 0);
            words[1] = csrw(0x305, 5);
        }
        let mut m = Machine::new(&cfg, &Program::from_code(BASE, &code(&words))).unwrap();
        outcomes[matches!(m.run(), rvsim::Stop::Exit(_)) as usize] += 1;
        let s = m.stats();
        if let Some(ic) = s.icache {
            assert_eq!(ic.hits + ic.misses, ic.accesses);
            assert_eq!(ic.misses, ic.compulsory + ic.capacity + ic.conflict);
        }
    }
    assert!(outcomes[0] > 0);
}
