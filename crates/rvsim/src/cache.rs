//! A set-associative cache model that counts, and explains, hits and misses.
//!
//! Only tags are modeled (data always comes from memory), so a cache changes counts and, with a
//! miss penalty, timing, never results. Misses are classified as Dinero IV does: *compulsory*
//! if the line was never referenced before, else *capacity* if a fully-associative LRU cache of
//! the same size would also have missed, else *conflict* ([`shadow`]: the fully-associative
//! cache kept as access times, so an access costs a few instructions).

mod shadow;

use crate::error::SimError;
use shadow::{Prior, Shadow};

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

/// One way of a set: the line it holds (or `NO_LINE`) and whether it is dirty (an empty slot
/// never is). Together so a lookup reads one record.
#[derive(Clone, Copy)]
struct Slot {
    line: u32,
    dirty: bool,
}

impl Slot {
    const EMPTY: Slot = Slot {
        line: NO_LINE,
        dirty: false,
    };
}

/// Shadow entries for lines outside the cache's memory (see [`Cache::fetch_any`]).
pub const OUTSIDE_LINES: u32 = 64;

/// One cache. Addresses outside `[base, base + span)` must not be passed in (memory-mapped
/// devices are uncached).
pub struct Cache {
    cfg: CacheConfig,
    line_shift: u32,
    set_mask: u32,
    base_line: u32,
    /// Lines of the memory in front of which the cache sits (the shadow's indices
    /// `0..in_memory`); [`OUTSIDE_LINES`] more follow for lines outside it.
    in_memory: u32,
    ways: usize,
    /// Per way slot (set after set): its line number (address >> line_shift) and dirt.
    lines: Vec<Slot>,
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
    /// The line list [`Cache::line_changes`] of a direct-mapped cache counted last, as its
    /// first line and length (its lines are consecutive), if nothing has changed the cache's
    /// state since and they are at most one per set; `(NO_LINE, 0)` otherwise. The same list
    /// again (a loop that is one block) then changes no state: every line is resident (each
    /// was read last in its set) and the shadow's order stays the same (the lines were
    /// already its most recent ones, in that order).
    repeat: (u32, u32),
    shadow: Shadow,
    /// Reads and writes (every access) and what follows from misses; misses by kind are
    /// `kinds`, misses the sum of the kinds and hits the accesses that did not miss (all
    /// derived by [`Cache::stats`], so a hit counts nothing and a miss one thing).
    counts: CacheStats,
    /// Misses by kind: compulsory, capacity, conflict ([`Prior`] as an index).
    kinds: [u64; 3],
}

/// Counts a miss by what the 3C shadow held of its line, in `kinds` (compulsory, capacity,
/// conflict: indexed by [`Prior`], so counting is one addition and no branch).
#[inline(always)]
fn classify_miss(kinds: &mut [u64; 3], prior: Prior) {
    kinds[prior.index()] += 1;
}

impl Cache {
    /// A cache in front of the memory `[base, base + span)`.
    pub fn new(cfg: CacheConfig, base: u32, span: u32) -> Result<Cache, SimError> {
        cfg.validate()?;
        let line_shift = cfg.line_bytes().trailing_zeros();
        let slots = (cfg.sets * cfg.ways) as usize;
        let lines_in_memory = (span as u64 >> line_shift) as usize + 2;
        let in_memory = lines_in_memory as u32;
        let lines_in_memory = lines_in_memory + OUTSIDE_LINES as usize;
        let capacity = cfg.sets.saturating_mul(cfg.ways);
        Ok(Cache {
            cfg,
            line_shift,
            set_mask: cfg.sets - 1,
            base_line: base >> line_shift,
            in_memory,
            ways: cfg.ways as usize,
            lines: vec![Slot::EMPTY; slots],
            stamp: vec![0; slots],
            clock: 0,
            rng: cfg.seed.max(1),
            last_line: NO_LINE,
            last_dirty: false,
            repeat: (NO_LINE, 0),
            shadow: Shadow::new(capacity, lines_in_memory),
            counts: CacheStats::default(),
            kinds: [0; 3],
        })
    }

    /// The counts so far.
    pub fn stats(&self) -> CacheStats {
        let mut s = self.counts;
        s.accesses = s.reads + s.writes;
        s.compulsory = self.kinds[Prior::NEVER.index()];
        s.capacity = self.kinds[Prior::EVICTED.index()];
        s.conflict = self.kinds[Prior::RESIDENT.index()];
        s.misses = s.compulsory + s.capacity + s.conflict;
        s.hits = s.accesses - s.misses;
        s
    }

    /// Misses so far (cheaper than [`Cache::stats`]).
    #[inline]
    pub fn misses(&self) -> u64 {
        self.kinds.iter().sum()
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

    /// A read of the word at `addr`, which may lie outside the memory the cache was made
    /// for (a per-cycle front end reads wherever its PC points: past the end of the code, or
    /// at address 0 after a return there). Hits and misses are exact; the miss kind of a
    /// line outside memory is classified in one of [`OUTSIDE_LINES`] shared shadow entries.
    /// Returns whether it missed.
    #[inline]
    pub fn fetch_any(&mut self, addr: u32) -> bool {
        let line = addr >> self.line_shift;
        self.counts.reads += 1;
        // A repeated read of the last line is a hit that changes no state, inside memory or
        // not (as in `access_line`).
        if line == self.last_line {
            return false;
        }
        let index = line.wrapping_sub(self.base_line);
        if index < self.in_memory {
            return self.access_slow(line, false);
        }
        self.access_slow_at(line, self.in_memory + (line % OUTSIDE_LINES), false)
    }

    /// `n` reads of the line read last, which is resident and most recently used: hits that
    /// change no state (a stalled front end reading its address again).
    pub fn repeat_hits(&mut self, n: u64) {
        self.counts.reads += n;
    }

    /// `fetches` instruction fetches whose lines (line numbers, `pc >> line_shift()`) are
    /// `lines` in order, consecutive fetches from one line given once: counted as that many
    /// [`Cache::fetch`] accesses would be, since a fetch from the line just read is a hit
    /// that changes no state. (The misses are the growth of [`Cache::misses`]: not returned, so
    /// a run without a pipeline adds nothing up.) The lines must be consecutive and increasing
    /// (those of sequential fetches): a repeat of the list just counted is recognised by its
    /// first line and length.
    #[inline(always)]
    pub fn fetch_lines(&mut self, lines: &[u32], fetches: u32) {
        self.counts.reads += fetches as u64;
        // A block whose fetches all come from the line read last changes no state.
        if let [line] = lines {
            if *line == self.last_line {
                return;
            }
        }
        // Nor does the list just counted, again (see `repeat`).
        if lines.first() == Some(&self.repeat.0) && lines.len() as u32 == self.repeat.1 {
            return;
        }
        self.line_changes(lines)
    }

    /// The part of [`Cache::fetch_lines`] that changes state: out of line, so the block loop
    /// it is called from keeps its registers, and the cache's own fields stay in registers
    /// across one block's line changes.
    #[inline(never)]
    fn line_changes(&mut self, lines: &[u32]) {
        if self.ways != 1 {
            for &line in lines {
                if line != self.last_line {
                    self.access_slow(line, false);
                }
            }
            return;
        }
        // Direct-mapped: one slot to look at, the last line and the cache's geometry kept in
        // registers. A hit changes only the shadow's order (a line
        // the cache holds is touched there too, whatever it held).
        let (Some(&first), count) = (lines.first(), lines.len() as u32) else {
            return;
        };
        debug_assert!(lines.windows(2).all(|w| w[1] == w[0].wrapping_add(1)));
        // The shadow's test for maintenance once for the whole list when it has room for
        // every access (almost always), not once per line change.
        let last = if self.shadow.room_for(count) {
            self.direct_mapped_lines::<false>(lines)
        } else {
            self.direct_mapped_lines::<true>(lines)
        };
        self.last_line = last;
        // (Only the last line's dirt matters: read once, not per access.)
        self.last_dirty = self.lines[(last & self.set_mask) as usize].dirty;
        // Consecutive lines fall in distinct sets when there are at most as many as sets.
        self.repeat = if count <= self.cfg.sets {
            (first, count)
        } else {
            (NO_LINE, 0)
        };
    }

    /// The line loop of [`Cache::line_changes`] in a direct-mapped cache (`lines` not empty);
    /// returns the last line. `CHECK`: whether the shadow must test for maintenance at each
    /// access (false only when [`Shadow::room_for`] said it has room for them all).
    #[inline(always)]
    fn direct_mapped_lines<const CHECK: bool>(&mut self, lines: &[u32]) -> u32 {
        let (set_mask, base_line) = (self.set_mask, self.base_line);
        let slots = &mut self.lines[..];
        let counts = &mut self.counts;
        let kinds = &mut self.kinds;
        let shadow = &mut self.shadow;
        let mut last = self.last_line;
        for &line in lines {
            if line == last {
                continue;
            }
            last = line;
            let set = (line & set_mask) as usize;
            let index = line.wrapping_sub(base_line);
            debug_assert!(set < slots.len());
            // SAFETY: `set <= set_mask < sets`, and a direct-mapped cache has `sets` slots.
            let slot = unsafe { slots.get_unchecked_mut(set) };
            if slot.line == line {
                shadow.touch_read::<false, CHECK>(index);
                continue;
            }
            // A read miss: no victim to choose, the line always allocated, never dirty.
            classify_miss(kinds, shadow.touch_read::<true, CHECK>(index));
            // An empty slot is never dirty.
            if slot.dirty {
                counts.writebacks += 1;
            }
            *slot = Slot { line, dirty: false };
        }
        last
    }

    /// A data access to the line holding `addr`. Returns true on a miss.
    #[inline]
    pub fn access(&mut self, addr: u32, write: bool) -> bool {
        self.access_line(addr >> self.line_shift, write)
    }

    /// A data access of `size` bytes (1, 2 or 4) at `addr`: one access per line the bytes
    /// touch (a misaligned access may touch two). Returns misses.
    #[inline]
    pub fn access_bytes(&mut self, addr: u32, size: u32, write: bool) -> u32 {
        debug_assert!(matches!(size, 1 | 2 | 4));
        let mut misses = self.access(addr, write) as u32;
        // An aligned access stays in its line (a line is at least 4 bytes): only a
        // misaligned one needs the second line's test (`size` is a constant where this is
        // inlined, so a byte access has no test at all).
        if addr & (size - 1) != 0 {
            let last = addr.wrapping_add(size - 1);
            if last >> self.line_shift != addr >> self.line_shift {
                misses += self.access(last, write) as u32;
            }
        }
        misses
    }

    #[inline]
    fn access_line(&mut self, line: u32, write: bool) -> bool {
        if write {
            self.counts.writes += 1;
        } else {
            self.counts.reads += 1;
        }
        if line == self.last_line && (!write || self.last_dirty) {
            return false;
        }
        // A two-way cache (the usual D-cache) in a function of its own for reads and one for
        // writes, each with only the registers its own path needs.
        if self.ways == 2 {
            return if write {
                self.access_two_ways::<true>(line)
            } else {
                self.access_two_ways::<false>(line)
            };
        }
        self.access_slow(line, write)
    }

    /// An access that is not a repeat of the last one: the way search, the shadow's LRU
    /// order, and on a miss the classification and the fill. Out of line, and lean on a hit
    /// of a direct-mapped cache: this runs on every change of line.
    #[inline(never)]
    fn access_slow(&mut self, line: u32, write: bool) -> bool {
        if self.ways == 2 {
            return self.access_two_ways_any(line, write);
        }
        if self.ways == 1 && !write {
            return self.read_direct_mapped(line);
        }
        self.access_slow_at(line, line.wrapping_sub(self.base_line), write)
    }

    /// [`Cache::access_slow_at`] for a read of a direct-mapped cache (the usual I-cache, on
    /// every change of line in the per-instruction engine and the per-cycle front end): one
    /// slot to look at, no victim to choose, the line always allocated. The same state
    /// changes as the general path, step for step.
    #[inline(always)]
    fn read_direct_mapped(&mut self, line: u32) -> bool {
        self.repeat = (NO_LINE, 0);
        let set = (line & self.set_mask) as usize;
        let index = line.wrapping_sub(self.base_line);
        debug_assert!(set < self.lines.len());
        // SAFETY: `set <= set_mask < sets`, and a direct-mapped cache has `sets` slots.
        let slot = unsafe { self.lines.get_unchecked_mut(set) };
        self.last_line = line;
        if slot.line == line {
            // A line the real cache holds is kept in the shadow too.
            self.shadow.touch_read::<false, true>(index);
            self.last_dirty = slot.dirty;
            return false;
        }
        classify_miss(&mut self.kinds, self.shadow.touch_read::<true, true>(index));
        // An empty slot is never dirty.
        if slot.dirty {
            self.counts.writebacks += 1;
        }
        *slot = Slot { line, dirty: false };
        self.last_dirty = false;
        true
    }

    /// [`Cache::access_slow`] for any number of ways, with the line's shadow index given.
    fn access_slow_at(&mut self, line: u32, index: u32, write: bool) -> bool {
        self.repeat = (NO_LINE, 0);
        let set = (line & self.set_mask) as usize;
        let (slot, hit) = if self.ways == 1 {
            // Direct-mapped: one slot to look at.
            (set, self.lines[set].line == line)
        } else {
            let first = set * self.ways;
            match self.lines[first..first + self.ways]
                .iter()
                .position(|s| s.line == line)
            {
                Some(way) => (first + way, true),
                None => (first, false),
            }
        };
        if !hit {
            return self.miss(line, set, index, write);
        }
        // A line the real cache holds is kept in the shadow too, whatever the write policy.
        self.shadow.touch(index, true);
        if self.ways > 1 && self.cfg.replacement == Replacement::Lru {
            self.clock += 1;
            self.stamp[slot] = self.clock;
        }
        if write {
            if self.cfg.write_policy == WritePolicy::WriteBack {
                self.lines[slot].dirty = true;
            } else {
                self.counts.memory_writes += 1;
            }
        }
        self.last_line = line;
        self.last_dirty = self.lines[slot].dirty;
        false
    }

    /// [`Cache::access_two_ways`] for a `write` known only when running.
    fn access_two_ways_any(&mut self, line: u32, write: bool) -> bool {
        if write {
            self.access_two_ways::<true>(line)
        } else {
            self.access_two_ways::<false>(line)
        }
    }

    /// [`Cache::access_slow`] of a two-way cache (the usual D-cache): its two slots compared
    /// without a loop or bounds checks, and a hit's state changed in place. (`repeat` is only
    /// ever set in a direct-mapped cache.)
    #[inline(never)]
    fn access_two_ways<const WRITE: bool>(&mut self, line: u32) -> bool {
        let write = WRITE;
        let set = (line & self.set_mask) as usize;
        let first = 2 * set;
        debug_assert!(first + 2 <= self.lines.len() && first + 2 <= self.stamp.len());
        // SAFETY: `set <= set_mask < sets`, and a two-way cache has `2 * sets` slots (and
        // as many stamps).
        let pair = unsafe { self.lines.get_unchecked_mut(first..first + 2) };
        let way = if pair[0].line == line {
            0
        } else if pair[1].line == line {
            1
        } else {
            return self.miss(line, set, line.wrapping_sub(self.base_line), write);
        };
        let slot = &mut pair[way];
        if write {
            if self.cfg.write_policy == WritePolicy::WriteBack {
                slot.dirty = true;
            } else {
                self.counts.memory_writes += 1;
            }
        }
        self.last_line = line;
        self.last_dirty = slot.dirty;
        if self.cfg.replacement == Replacement::Lru {
            self.clock += 1;
            // SAFETY: as above, `first + way < 2 * sets == stamp.len()`.
            *unsafe { self.stamp.get_unchecked_mut(first + way) } = self.clock;
        }
        // A line the real cache holds is kept in the shadow too, whatever the write policy.
        self.shadow.touch(line.wrapping_sub(self.base_line), true);
        false
    }

    /// A miss on `line` (in `set`; `index` its number from the start of memory): classified,
    /// and filled unless it is a store that does not allocate.
    #[inline(never)]
    fn miss(&mut self, line: u32, set: usize, index: u32, write: bool) -> bool {
        let allocate = !write || self.cfg.write_allocate;
        classify_miss(&mut self.kinds, self.shadow.touch_missed(index, allocate));
        if !allocate {
            self.counts.memory_writes += 1;
            self.last_line = NO_LINE;
            return true;
        }
        let write_back = self.cfg.write_policy == WritePolicy::WriteBack;
        let slots = set * self.ways..(set + 1) * self.ways;
        let slot = slots.start + self.victim(slots);
        if self.lines[slot].dirty {
            self.counts.writebacks += 1;
        }
        if self.ways > 1 {
            self.clock += 1;
            self.stamp[slot] = self.clock;
        }
        self.lines[slot] = Slot {
            line,
            dirty: write && write_back,
        };
        if write && !write_back {
            self.counts.memory_writes += 1;
        }
        self.last_line = line;
        self.last_dirty = self.lines[slot].dirty;
        true
    }

    fn victim(&mut self, slots: std::ops::Range<usize>) -> usize {
        if self.ways == 1 {
            // Direct-mapped: no choice to make (and no state that could tell the difference:
            // stamps and the random generator only ever choose among ways).
            return 0;
        }
        if let Some(free) = self.lines[slots.clone()]
            .iter()
            .position(|s| s.line == NO_LINE)
        {
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
