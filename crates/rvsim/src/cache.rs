//! A set-associative cache model that counts, and explains, hits and misses.
//!
//! Only tags are modeled (data always comes from memory), so a cache changes counts and, with a
//! miss penalty, timing, never results. Misses are classified as Dinero IV does: *compulsory*
//! if the line was never referenced before, else *capacity* if a fully-associative LRU cache of
//! the same size would also have missed, else *conflict*. The fully-associative shadow cache
//! uses per-line arrays (an intrusive LRU list), so each access costs O(1) without hashing.

use crate::error::SimError;

/// Which line of a full set is evicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replacement {
    Lru,
    Fifo,
    /// Pseudo-random, from a seeded generator: the same seed gives the same run.
    Random,
}

/// When a store reaches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePolicy {
    /// Stores mark the line dirty; memory is written when a dirty line is evicted.
    WriteBack,
    /// Every store is also written to memory.
    WriteThrough,
}

/// The geometry and policies of one cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    pub sets: u32,
    pub ways: u32,
    /// 32-bit words per line.
    pub words_per_line: u32,
    pub replacement: Replacement,
    pub write_policy: WritePolicy,
    /// Whether a store miss brings the line into the cache.
    pub write_allocate: bool,
    pub seed: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            sets: 8,
            ways: 1,
            words_per_line: 2,
            replacement: Replacement::Lru,
            write_policy: WritePolicy::WriteBack,
            write_allocate: true,
            seed: 1,
        }
    }
}

impl CacheConfig {
    pub fn line_bytes(&self) -> u32 {
        self.words_per_line * 4
    }
    pub fn size_bytes(&self) -> u64 {
        self.sets as u64 * self.ways as u64 * self.line_bytes() as u64
    }

    /// Checks that sets and words per line are powers of two and the cache is not absurd.
    pub fn validate(&self) -> Result<(), SimError> {
        let pow2 = |name: &str, v: u32| {
            if v == 0 || !v.is_power_of_two() {
                Err(SimError::Config(format!(
                    "{name}={v}: must be a power of two (1, 2, 4, ...)"
                )))
            } else {
                Ok(())
            }
        };
        pow2("sets", self.sets)?;
        pow2("words", self.words_per_line)?;
        if self.ways == 0 {
            return Err(SimError::Config(
                "ways=0: a cache needs at least one way".into(),
            ));
        }
        if self.words_per_line > 1024 {
            return Err(SimError::Config(format!(
                "words={}: at most 1024 words per line",
                self.words_per_line
            )));
        }
        if self.size_bytes() > 1 << 28 {
            return Err(SimError::Config(format!(
                "cache of {} bytes (sets x ways x words x 4) is larger than 256 MiB",
                self.size_bytes()
            )));
        }
        Ok(())
    }

    /// Parses `sets=8,ways=1,words=2,repl=lru,write=back,alloc=yes,seed=1`. Omitted keys keep
    /// their defaults (8 sets, 1 way, 2 words, LRU, write-back, write-allocate).
    pub fn parse(spec: &str) -> Result<CacheConfig, SimError> {
        let mut cfg = CacheConfig::default();
        let mut seen: Vec<&str> = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item.split_once('=').ok_or_else(|| {
                SimError::Config(format!("cache parameter '{item}' is not key=value"))
            })?;
            // Which of two values was meant is unknowable: refused, not the last one taken.
            if seen.contains(&key) {
                return Err(SimError::Config(format!(
                    "cache parameter {key} given twice; give it once"
                )));
            }
            seen.push(key);
            let number = || {
                value.parse::<u32>().map_err(|_| {
                    SimError::Config(format!("cache parameter {key}={value}: not a number"))
                })
            };
            match key {
                "sets" => cfg.sets = number()?,
                "ways" => cfg.ways = number()?,
                "words" => cfg.words_per_line = number()?,
                "seed" => {
                    cfg.seed = value.parse().map_err(|_| {
                        SimError::Config(format!("cache parameter seed={value}: not a number"))
                    })?
                }
                "repl" => {
                    cfg.replacement = match value {
                        "lru" => Replacement::Lru,
                        "fifo" => Replacement::Fifo,
                        "random" => Replacement::Random,
                        _ => {
                            return Err(SimError::Config(format!(
                                "repl={value}: use lru, fifo or random"
                            )))
                        }
                    }
                }
                "write" => {
                    cfg.write_policy = match value {
                        "back" | "wb" => WritePolicy::WriteBack,
                        "through" | "wt" => WritePolicy::WriteThrough,
                        _ => {
                            return Err(SimError::Config(format!(
                                "write={value}: use back or through"
                            )))
                        }
                    }
                }
                "alloc" => {
                    cfg.write_allocate = match value {
                        "yes" | "true" | "1" => true,
                        "no" | "false" | "0" => false,
                        _ => {
                            return Err(SimError::Config(format!("alloc={value}: use yes or no")))
                        }
                    }
                }
                _ => {
                    return Err(SimError::Config(format!(
                        "unknown cache parameter '{key}' (known: sets, ways, words, repl, write, alloc, seed)"
                    )))
                }
            }
        }
        cfg.validate()?;
        Ok(cfg)
    }
}

/// What a cache saw. `misses == compulsory + capacity + conflict`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    pub reads: u64,
    pub writes: u64,
    pub compulsory: u64,
    pub capacity: u64,
    pub conflict: u64,
    /// Dirty lines written back on eviction (write-back only).
    pub writebacks: u64,
    /// Stores sent to memory directly (write-through, or a no-allocate store miss).
    pub memory_writes: u64,
}

impl CacheStats {
    pub fn hit_rate(&self) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            self.hits as f64 / self.accesses as f64
        }
    }
}

const NO_LINE: u32 = u32::MAX;
/// No node: the end of the shadow cache's LRU list.
const NIL: u32 = u32::MAX;

/// The fully-associative LRU cache of equal capacity used to tell capacity from conflict misses,
/// plus the set of lines ever referenced (compulsory misses). Lines are numbered from the start
/// of the modeled memory so the per-line tables stay small.
///
/// This sits on the cache model's path for every change of line, so every access is O(1)
/// and touches little: each resident line has a node (one of `capacity`), the nodes form a
/// doubly linked list in LRU order, and a per-line table (zero-allocated, so only the pages
/// of lines in use are ever touched) maps a line to its node. A hit moves its node to the
/// front; a miss in a full shadow reuses the tail's node.
struct Shadow {
    /// Lines referenced before: one bit per line of memory.
    seen: Vec<u64>,
    capacity: usize,
    /// Per line of memory: 1 + its node while resident, else 0.
    node_of: Vec<u32>,
    /// Per node: its line, and its neighbours (more and less recently used).
    line: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most and least recently used nodes (NIL when empty).
    head: u32,
    tail: u32,
}

impl Shadow {
    fn new(capacity: u32, lines: usize) -> Shadow {
        Shadow {
            seen: vec![0; lines.div_ceil(64)],
            capacity: capacity as usize,
            node_of: vec![0; lines],
            line: Vec::new(),
            prev: Vec::new(),
            next: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    /// Whether line `i` is referenced for the first time (and from now on it is not).
    #[inline]
    fn first_reference(&mut self, i: u32) -> bool {
        let word = &mut self.seen[i as usize / 64];
        let bit = 1u64 << (i % 64);
        let first = *word & bit == 0;
        *word |= bit;
        first
    }

    /// An access to line `i`: returns whether it was resident and makes it the most recently
    /// used; `allocate == false` leaves a non-resident line out (a no-allocate store miss).
    #[inline]
    fn touch(&mut self, i: u32, allocate: bool) -> bool {
        let node = self.node_of[i as usize];
        if node != 0 {
            let n = node - 1;
            if self.head != n {
                self.unlink(n);
                self.push_front(n);
            }
            return true;
        }
        if allocate {
            let n = if self.line.len() < self.capacity {
                self.line.push(i);
                self.prev.push(NIL);
                self.next.push(NIL);
                self.line.len() as u32 - 1
            } else {
                let lru = self.tail;
                self.unlink(lru);
                self.node_of[self.line[lru as usize] as usize] = 0;
                lru
            };
            self.line[n as usize] = i;
            self.node_of[i as usize] = n + 1;
            self.push_front(n);
        }
        false
    }

    #[inline]
    fn unlink(&mut self, n: u32) {
        let (p, x) = (self.prev[n as usize], self.next[n as usize]);
        if p == NIL {
            self.head = x;
        } else {
            self.next[p as usize] = x;
        }
        if x == NIL {
            self.tail = p;
        } else {
            self.prev[x as usize] = p;
        }
    }

    #[inline]
    fn push_front(&mut self, n: u32) {
        self.prev[n as usize] = NIL;
        self.next[n as usize] = self.head;
        if self.head == NIL {
            self.tail = n;
        } else {
            self.prev[self.head as usize] = n;
        }
        self.head = n;
    }
}

/// One cache. Addresses outside `[base, base + span)` must not be passed in (memory-mapped
/// devices are uncached).
pub struct Cache {
    cfg: CacheConfig,
    line_shift: u32,
    set_mask: u32,
    base_line: u32,
    ways: usize,
    /// Per way slot: line number (address >> line_shift) or NO_LINE.
    lines: Vec<u32>,
    dirty: Vec<bool>,
    /// LRU: last use; FIFO: fill time.
    stamp: Vec<u64>,
    clock: u64,
    rng: u64,
    /// The line of the previous access if it is resident and most recently used: a repeated
    /// read of it is a hit that changes no state, the common case of sequential fetch.
    last_line: u32,
    /// Whether `last_line` is dirty: a repeated write to it is then also a hit that changes
    /// no state (the common case of a run of stores to one line of a write-back cache).
    last_dirty: bool,
    shadow: Shadow,
    /// Counts of the slow path; the fast path's hits are in `fast_hits`.
    counts: CacheStats,
    /// Reads of `last_line` (hits that change no state): one increment on the fast path,
    /// folded into the counts by [`Cache::stats`].
    fast_hits: u64,
    /// Writes to `last_line` while it was dirty, likewise.
    fast_write_hits: u64,
}

impl Cache {
    /// A cache in front of the memory `[base, base + span)`.
    pub fn new(cfg: CacheConfig, base: u32, span: u32) -> Result<Cache, SimError> {
        cfg.validate()?;
        let line_shift = cfg.line_bytes().trailing_zeros();
        let slots = (cfg.sets * cfg.ways) as usize;
        let lines_in_memory = (span as u64 >> line_shift) as usize + 2;
        let capacity = cfg.sets.saturating_mul(cfg.ways);
        Ok(Cache {
            cfg,
            line_shift,
            set_mask: cfg.sets - 1,
            base_line: base >> line_shift,
            ways: cfg.ways as usize,
            lines: vec![NO_LINE; slots],
            dirty: vec![false; slots],
            stamp: vec![0; slots],
            clock: 0,
            rng: cfg.seed.max(1),
            last_line: NO_LINE,
            last_dirty: false,
            shadow: Shadow::new(capacity, lines_in_memory),
            counts: CacheStats::default(),
            fast_hits: 0,
            fast_write_hits: 0,
        })
    }

    /// The counts so far.
    pub fn stats(&self) -> CacheStats {
        let mut s = self.counts;
        s.reads += self.fast_hits;
        s.writes += self.fast_write_hits;
        s.hits += self.fast_hits + self.fast_write_hits;
        s.accesses = s.reads + s.writes;
        s
    }

    pub fn config(&self) -> &CacheConfig {
        &self.cfg
    }

    pub fn line_bytes(&self) -> u32 {
        1 << self.line_shift
    }

    /// log2 of the line size: an address's line is `addr >> line_shift()`.
    pub fn line_shift(&self) -> u32 {
        self.line_shift
    }

    /// An instruction fetch of `len` bytes at `pc`: one read per line touched. Returns misses.
    #[inline]
    pub fn fetch(&mut self, pc: u32, len: u32) -> u32 {
        let first = pc >> self.line_shift;
        let last = pc.wrapping_add(len - 1) >> self.line_shift;
        let mut misses = self.access_line(first, false) as u32;
        if last != first {
            misses += self.access_line(last, false) as u32;
        }
        misses
    }

    /// `count` instruction fetches in a row from `line` (a line number, `pc >> line_shift()`),
    /// counted as that many [`Cache::fetch`] accesses would be: only the first can miss or
    /// change any state. Returns misses (0 or 1).
    #[inline]
    pub fn fetch_run(&mut self, line: u32, count: u32) -> u32 {
        let misses = self.access_line(line, false) as u32;
        // A read leaves its line resident and most recently used: the rest are fast hits.
        self.fast_hits += count as u64 - 1;
        misses
    }

    /// A data access to the line holding `addr`. Returns true on a miss.
    #[inline]
    pub fn access(&mut self, addr: u32, write: bool) -> bool {
        self.access_line(addr >> self.line_shift, write)
    }

    /// A data access of `size` bytes at `addr`: one access per line the bytes touch (a
    /// misaligned access may touch two). Returns misses.
    #[inline]
    pub fn access_bytes(&mut self, addr: u32, size: u32, write: bool) -> u32 {
        let mut misses = self.access(addr, write) as u32;
        let last = addr.wrapping_add(size - 1);
        if last >> self.line_shift != addr >> self.line_shift {
            misses += self.access(last, write) as u32;
        }
        misses
    }

    #[inline]
    fn access_line(&mut self, line: u32, write: bool) -> bool {
        if line == self.last_line {
            if !write {
                self.fast_hits += 1;
                return false;
            }
            if self.last_dirty {
                self.fast_write_hits += 1;
                return false;
            }
        }
        self.access_slow(line, write)
    }

    /// An access that is not a repeat of the last one: the way search, the shadow's LRU
    /// order, and on a miss the classification and the fill. Out of line, and lean on a hit
    /// of a direct-mapped cache: this runs on every change of line.
    #[inline(never)]
    fn access_slow(&mut self, line: u32, write: bool) -> bool {
        if write {
            self.counts.writes += 1;
        } else {
            self.counts.reads += 1;
        }
        let set = (line & self.set_mask) as usize;
        let (slot, hit) = if self.ways == 1 {
            // Direct-mapped: one slot to look at.
            (set, self.lines[set] == line)
        } else {
            let first = set * self.ways;
            match self.lines[first..first + self.ways]
                .iter()
                .position(|&l| l == line)
            {
                Some(way) => (first + way, true),
                None => (first, false),
            }
        };
        let index = line.wrapping_sub(self.base_line);
        if !hit {
            return self.miss(line, set, index, write);
        }
        // A line the real cache holds is kept in the shadow too, whatever the write policy.
        self.shadow.touch(index, true);
        self.counts.hits += 1;
        if self.ways > 1 && self.cfg.replacement == Replacement::Lru {
            self.clock += 1;
            self.stamp[slot] = self.clock;
        }
        if write {
            if self.cfg.write_policy == WritePolicy::WriteBack {
                self.dirty[slot] = true;
            } else {
                self.counts.memory_writes += 1;
            }
        }
        self.last_line = line;
        self.last_dirty = self.dirty[slot];
        false
    }

    /// A miss on `line` (in `set`; `index` its number from the start of memory): classified,
    /// and filled unless it is a store that does not allocate.
    fn miss(&mut self, line: u32, set: usize, index: u32, write: bool) -> bool {
        let allocate = !write || self.cfg.write_allocate;
        let in_shadow = self.shadow.touch(index, allocate);
        self.counts.misses += 1;
        // (A line that hits was referenced before: only a miss can be a first reference.)
        if self.shadow.first_reference(index) {
            self.counts.compulsory += 1;
        } else if !in_shadow {
            self.counts.capacity += 1;
        } else {
            self.counts.conflict += 1;
        }
        if !allocate {
            self.counts.memory_writes += 1;
            self.last_line = NO_LINE;
            return true;
        }
        let write_back = self.cfg.write_policy == WritePolicy::WriteBack;
        let slots = set * self.ways..(set + 1) * self.ways;
        let slot = slots.start + self.victim(slots);
        if self.lines[slot] != NO_LINE && self.dirty[slot] {
            self.counts.writebacks += 1;
        }
        if self.ways > 1 {
            self.clock += 1;
            self.stamp[slot] = self.clock;
        }
        self.lines[slot] = line;
        self.dirty[slot] = write && write_back;
        if write && !write_back {
            self.counts.memory_writes += 1;
        }
        self.last_line = line;
        self.last_dirty = self.dirty[slot];
        true
    }

    fn victim(&mut self, slots: std::ops::Range<usize>) -> usize {
        if self.ways == 1 {
            // Direct-mapped: no choice to make (and no state that could tell the difference:
            // stamps and the random generator only ever choose among ways).
            return 0;
        }
        if let Some(free) = self.lines[slots.clone()].iter().position(|&l| l == NO_LINE) {
            return free;
        }
        match self.cfg.replacement {
            Replacement::Lru | Replacement::Fifo => {
                let stamps = &self.stamp[slots];
                let mut best = 0;
                for (i, &s) in stamps.iter().enumerate() {
                    if s < stamps[best] {
                        best = i;
                    }
                }
                best
            }
            Replacement::Random => {
                // xorshift64: cheap, seeded, reproducible.
                let mut x = self.rng;
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                self.rng = x;
                (x % self.ways as u64) as usize
            }
        }
    }
}
