//! The cache model against a deliberately naive reference (per-set vectors, a vector for the
//! fully-associative LRU shadow, a set of lines seen): every counter must agree on random
//! read/write sequences over many geometries and policies. The model's fast paths (the
//! same-line shortcut, the time-stamped LRU order of the 3C shadow) are what this pins down.

mod common;
use common::Rng;
use std::collections::HashSet;

use rvsim::{Cache, CacheConfig, CacheStats, Replacement, WritePolicy};

const BASE: u32 = 0x8000_0000;
const SPAN: u32 = 1 << 16;

/// One way: (line, last use or fill time, dirty).
type Way = (u32, u64, bool);

struct Reference {
    cfg: CacheConfig,
    sets: Vec<Vec<Way>>,
    /// Most recently used first.
    shadow: Vec<u32>,
    seen: HashSet<u32>,
    clock: u64,
    s: CacheStats,
}

impl Reference {
    fn new(cfg: CacheConfig) -> Reference {
        Reference {
            cfg,
            sets: vec![Vec::new(); cfg.sets as usize],
            shadow: Vec::new(),
            seen: HashSet::new(),
            clock: 0,
            s: CacheStats::default(),
        }
    }

    fn access(&mut self, addr: u32, write: bool) {
        let line = addr / self.cfg.line_bytes();
        let capacity = (self.cfg.sets * self.cfg.ways) as usize;
        self.clock += 1;
        self.s.accesses += 1;
        if write {
            self.s.writes += 1;
        } else {
            self.s.reads += 1;
        }
        let allocate = !write || self.cfg.write_allocate;
        let back = self.cfg.write_policy == WritePolicy::WriteBack;
        let set = &mut self.sets[(line % self.cfg.sets) as usize];
        let hit = set.iter().position(|w| w.0 == line);
        let seen = !self.seen.insert(line);
        let in_shadow = self.shadow.iter().position(|&l| l == line);
        if let Some(p) = in_shadow {
            self.shadow.remove(p);
        }
        if in_shadow.is_some() || allocate || hit.is_some() {
            self.shadow.insert(0, line);
            self.shadow.truncate(capacity);
        }
        if let Some(w) = hit {
            self.s.hits += 1;
            if self.cfg.replacement == Replacement::Lru {
                set[w].1 = self.clock;
            }
            if write {
                if back {
                    set[w].2 = true;
                } else {
                    self.s.memory_writes += 1;
                }
            }
            return;
        }
        self.s.misses += 1;
        if !seen {
            self.s.compulsory += 1;
        } else if in_shadow.is_none() {
            self.s.capacity += 1;
        } else {
            self.s.conflict += 1;
        }
        if !allocate {
            self.s.memory_writes += 1;
            return;
        }
        if set.len() == self.cfg.ways as usize {
            // Oldest stamp; the first of equals (LRU and FIFO only in this reference).
            let victim = (0..set.len()).fold(0, |b, i| if set[i].1 < set[b].1 { i } else { b });
            if set[victim].2 {
                self.s.writebacks += 1;
            }
            set.remove(victim);
        }
        set.push((line, self.clock, write && back));
        if write && !back {
            self.s.memory_writes += 1;
        }
    }
}

#[test]
fn cache_counts_equal_a_naive_reference_model() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut cases = 0;
    for sets in [1, 2, 8, 32] {
        for ways in [1, 2, 3, 8] {
            for words in [1, 2, 8] {
                for (repl, write, alloc) in [
                    ("lru", "back", "yes"),
                    ("fifo", "back", "yes"),
                    ("lru", "through", "no"),
                    ("fifo", "through", "yes"),
                    ("lru", "back", "no"),
                ] {
                    let spec = format!(
                        "sets={sets},ways={ways},words={words},repl={repl},write={write},alloc={alloc}"
                    );
                    let cfg = CacheConfig::parse(&spec).unwrap();
                    let mut model = Cache::new(cfg, BASE, SPAN).unwrap();
                    let mut reference = Reference::new(cfg);
                    // A working set a bit larger than the cache, visited in runs (sequential
                    // reads hit the same-line shortcut) and at random, with some writes.
                    let lines = (cfg.sets * cfg.ways * 2 + 3) as u64;
                    let mut addr = BASE;
                    for _ in 0..3000 {
                        let r = rng.next();
                        addr = if r.is_multiple_of(4) {
                            (BASE + ((r >> 8) % (lines * cfg.line_bytes() as u64)) as u32) & !3
                        } else {
                            BASE + (addr - BASE + 4) % (lines as u32 * cfg.line_bytes())
                        };
                        let write = (r >> 40).is_multiple_of(5);
                        model.access(addr, write);
                        reference.access(addr, write);
                    }
                    assert_eq!(model.stats(), reference.s, "{spec}");
                    assert!(reference.s.misses > 0 && reference.s.hits > 0, "{spec}");
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 240);
}

/// `access_bytes` (the D-cache's access for a load or store) counts one access per line the
/// bytes touch: aligned accesses (which skip the second line's test) and misaligned ones
/// (which may cross into the next line) of every size, against the reference accessing each
/// line the bytes touch.
#[test]
fn byte_accesses_count_every_line_they_touch() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for words in [1, 2, 8] {
        for ways in [1, 2] {
            let spec = format!("sets=4,ways={ways},words={words}");
            let cfg = CacheConfig::parse(&spec).unwrap();
            let mut model = Cache::new(cfg, BASE, SPAN).unwrap();
            let mut reference = Reference::new(cfg);
            let line = cfg.line_bytes();
            let (mut crossing, mut misses) = (0, 0);
            for _ in 0..5000 {
                let r = rng.next();
                let size = [1, 2, 4][(r % 3) as usize];
                // Mostly near the end of a line, where a misaligned access crosses it.
                let line_start = BASE + ((r >> 8) % 24) as u32 * line;
                let addr = line_start + line - 1 - ((r >> 20) % 6) as u32 % line;
                let write = (r >> 40).is_multiple_of(3);
                misses += model.access_bytes(addr, size, write) as u64;
                reference.access(addr, write);
                let last = addr + size - 1;
                if last / line != addr / line {
                    reference.access(last, write);
                    crossing += 1;
                }
            }
            assert_eq!(model.stats(), reference.s, "{spec}");
            assert_eq!(misses, reference.s.misses, "{spec}");
            assert!(crossing > 500, "{spec}: {crossing} accesses crossed a line");
        }
    }
}

/// `fetch_lines` (a block's instruction fetches, counted at once) against the reference
/// fetching line by line: runs of consecutive lines as blocks make them, each often
/// repeated at once as a loop that is one block does (which the model counts without a
/// change of state when the run fits in the cache), shorter and longer than the number of
/// sets, with data accesses in between that may evict a line of the run.
#[test]
fn block_fetches_count_as_fetches_line_by_line() {
    let mut rng = Rng(0x6a09_e667_f3bc_c908);
    for spec in [
        "sets=8,ways=1,words=2",
        "sets=4,ways=1,words=1",
        "sets=4,ways=2,words=2",
    ] {
        let cfg = CacheConfig::parse(spec).unwrap();
        let mut model = Cache::new(cfg, BASE, SPAN).unwrap();
        let mut reference = Reference::new(cfg);
        let line_bytes = cfg.line_bytes();
        for _ in 0..3000 {
            let r = rng.next();
            let first = BASE / line_bytes + (r % 40) as u32;
            let count = 1 + ((r >> 8) % (2 * cfg.sets as u64 + 2)) as u32;
            let lines: Vec<u32> = (first..first + count).collect();
            for _ in 0..1 + (r >> 16) % 4 {
                model.fetch_lines(&lines, count);
                for &line in &lines {
                    reference.access(line * line_bytes, false);
                }
                // The misses so far (what the pipeline's stalls are taken from).
                assert_eq!(model.misses(), reference.s.misses, "{spec}");
            }
            if (r >> 24).is_multiple_of(3) {
                let addr = BASE + ((r >> 32) % 40) as u32 * line_bytes;
                let write = (r >> 48).is_multiple_of(2);
                let before = model.misses();
                let missed = model.access(addr, write);
                reference.access(addr, write);
                assert_eq!(model.misses(), reference.s.misses, "{spec}");
                assert_eq!(missed as u64, model.misses() - before, "{spec}");
            }
        }
        assert_eq!(model.stats(), reference.s, "{spec}");
    }
}
