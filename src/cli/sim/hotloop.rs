//! The program's hot loop: the backward branch or jump taken most often, and the bytes from
//! its target to its end. Whether those bytes fit the I-cache is what decides a loop's hit
//! rate once it is warm: a loop that fits misses only on its first pass, one that does not
//! streams through the cache and hits at most the cold-streaming ceiling.

use std::collections::HashMap;

use rvsim::{CacheConfig, Config, Machine, Program};

/// Steps followed at most to find the hot loop (a functional run, no caches).
const STEPS: u64 = 5_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HotLoop {
    /// The loop's first byte (the branch's target) and the byte after its branch.
    pub start: u32,
    pub end: u32,
    /// Times the backward branch was taken in the steps followed.
    pub taken: u64,
}

impl HotLoop {
    pub fn bytes(&self) -> u32 {
        self.end - self.start
    }

    /// Cache lines the loop's bytes touch.
    pub fn lines(&self, cache: &CacheConfig) -> u32 {
        let line = cache.line_bytes();
        (self.end - 1) / line - self.start / line + 1
    }

    /// Whether every line of the loop can stay in the cache at once: no more lines than the
    /// cache has, and (consecutive lines filling sets in turn) no set asked for more lines
    /// than it has ways.
    pub fn fits(&self, cache: &CacheConfig) -> bool {
        let lines = self.lines(cache);
        lines <= cache.sets * cache.ways && lines.div_ceil(cache.sets) <= cache.ways
    }
}

/// Runs `program` functionally (up to [`STEPS`] instructions) and returns its hot loop, if
/// it has one.
pub fn find(program: &Program, config: &Config) -> Option<HotLoop> {
    let cfg = Config {
        icache: None,
        dcache: None,
        pipeline: false,
        count: rvsim::FetchCount::PerInstruction,
        max_instructions: STEPS,
        ..config.clone()
    };
    let mut m = Machine::new(&cfg, program).ok()?;
    let mut taken: HashMap<(u32, u32), u64> = HashMap::new();
    loop {
        let pc = m.pc;
        let len = m
            .instruction_bits(pc)
            .map_or(4, |b| if b & 3 == 3 { 4 } else { 2 });
        if m.step().is_some() {
            break;
        }
        if m.pc < pc {
            *taken.entry((m.pc, pc + len)).or_default() += 1;
        }
    }
    taken
        .into_iter()
        .max_by_key(|&((start, end), n)| (n, std::cmp::Reverse(end - start)))
        .filter(|&(_, n)| n > 1)
        .map(|((start, end), taken)| HotLoop { start, end, taken })
}

/// The cold-streaming ceiling of an I-cache for code of this mix: a program that streams
/// through lines it never finds again misses once per line and hits the line's other
/// instructions, `1 - 1/(instructions per line)`; `None` before any instruction ran.
pub fn streaming_ceiling(cache: &CacheConfig, instret: u64, compressed: u64) -> Option<f64> {
    if instret == 0 {
        return None;
    }
    let bytes = (4 * (instret - compressed) + 2 * compressed) as f64 / instret as f64;
    Some((1.0 - bytes / cache.line_bytes() as f64).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(spec: &str) -> CacheConfig {
        CacheConfig::parse(spec).unwrap()
    }

    #[test]
    fn the_quiz_geometry_ceilings_are_a_half_and_three_quarters() {
        let c = cache("sets=4,ways=1,words=2");
        assert_eq!(streaming_ceiling(&c, 100, 0), Some(0.5));
        assert_eq!(streaming_ceiling(&c, 100, 100), Some(0.75));
        assert_eq!(streaming_ceiling(&c, 0, 0), None);
    }

    #[test]
    fn a_loop_fits_when_its_lines_find_room_in_their_sets() {
        let lp = HotLoop {
            start: 0x100,
            end: 0x138,
            taken: 10,
        };
        // 56 bytes: 7 lines of 8 bytes.
        assert_eq!(lp.lines(&cache("sets=8,ways=1,words=2")), 7);
        assert!(lp.fits(&cache("sets=8,ways=1,words=2")));
        assert!(!lp.fits(&cache("sets=4,ways=1,words=2")));
        // 8 slots in 2 sets of 4 ways: 7 consecutive lines ask 4 and 3 of their sets.
        assert!(lp.fits(&cache("sets=2,ways=4,words=2")));
        // Misaligned by 4 bytes, the same 56 bytes touch 8 lines: still 8 sets.
        let off = HotLoop {
            start: 0x104,
            end: 0x13c,
            taken: 10,
        };
        assert_eq!(off.lines(&cache("sets=8,ways=1,words=2")), 8);
        assert!(off.fits(&cache("sets=8,ways=1,words=2")));
        assert!(!off.fits(&cache("sets=4,ways=1,words=2")));
    }
}
