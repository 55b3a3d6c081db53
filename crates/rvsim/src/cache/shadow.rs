//! The 3C shadow: a fully-associative LRU cache of the real cache's capacity (in lines),
//! which tells a capacity miss (the shadow misses too) from a conflict miss (it hits), and
//! which lines were ever referenced (a first reference is a compulsory miss).
//!
//! It sees every access that reaches the cache's slow path (every change of line), so its
//! common case must be a few instructions without a chain of dependent memory operations.
//! An LRU list moved on every access is not (loads of its links depend on the stores just
//! made to them). Instead the order is kept as *times*:
//!
//! - each access gets the next value of a clock, stored as the line's stamp, and the line is
//!   appended to a ring log of accesses by time;
//! - the resident lines are exactly those whose stamp is at least `lru`, the stamp of the
//!   least recently used resident line (the resident lines are the `capacity` most recently
//!   used distinct lines, so their stamps are the largest);
//! - an access to a resident line other than the LRU one therefore changes nothing but its
//!   stamp. Only when the LRU line is accessed or evicted does `lru` move: forward through
//!   the log to the next entry that is still its line's latest access. `lru` only grows, so
//!   that scan costs at most one log entry per access over a run;
//! - the log must still hold the entry at `lru` when the clock is about to overwrite it. When
//!   it is, the resident lines (the latest accesses between `lru` and now) are appended again
//!   in the same order with new stamps: a rare step, and short where it matters (found from
//!   both ends of that span at once).
//!
//! A line's stamp also says whether it was ever referenced: 0 never, 1 referenced but not
//! since the clock was wound back (below every resident stamp, as `lru` is at least 2), so a
//! miss learns whether it is a first reference from the stamp it reads anyway, not from a
//! table of its own.
//!
//! Stamps are 32-bit; before the clock runs out every stamp set is made 1 and the resident
//! lines are stamped again from 2 (reading the table only writes where a stamp is set, so
//! pages of the table that were never used stay unallocated).

/// Entries of the log for small shadows: compaction then happens at most once per this
/// many accesses less the capacity. Large, because a compaction walks the log from both
/// ends until it has every resident line, and the lines a loop no longer uses sit far back
/// (with 1,024 entries the D-cache's shadow of 32 lines was compacted every ~1,000 accesses
/// at ~12,000 host instructions each on CoreMark); 64 KiB of log per cache.
const MIN_RING: usize = 1 << 14;
/// Where the clock is wound back (well below `u32::MAX`, so no stamp arithmetic wraps).
const CLOCK_LIMIT: u32 = u32::MAX - (1 << 24);

/// The shadow starts full: of `capacity` placeholder lines (numbered after the lines of
/// memory, so never accessed), which the first lines to come in evict, least recently used
/// first, as they would fill empty places. So every line that comes in evicts one, and an
/// access needs no count of the lines resident.
pub(super) struct Shadow {
    /// Resident lines: always this many, placeholders included.
    capacity: u32,
    /// Per line of memory, then per placeholder: the time of its latest access (0: never
    /// accessed; 1: accessed, but not since the last wind-back, or only by accesses that did
    /// not allocate it).
    stamp: Vec<u32>,
    /// Per time modulo its length: the line accessed then.
    log: Vec<u32>,
    /// The log's length less one (a power of two less one: `t & log_mask` is `t`'s entry).
    log_mask: usize,
    /// The time of the latest access.
    clock: u32,
    /// The stamp of the least recently used resident line (at least 2, above the stamps 0
    /// and 1 of lines not resident).
    lru: u32,
    /// When the clock reaches this, the log may be about to lose the entry at `lru`, or the
    /// clock is near its end: see [`Shadow::maintain`]. Set from `lru` when it is checked,
    /// not each time `lru` moves: `lru` only grows, so an older value is only earlier.
    next_check: u32,
    /// Where the clock is wound back (a parameter only for tests).
    clock_limit: u32,
    /// The resident lines in LRU order, gathered when the log is compacted (and the more
    /// recent ones in reverse order on the way).
    scratch: Vec<u32>,
    newer: Vec<u32>,
}

/// What the shadow held of a line before an access to it: one of the constants below, which
/// are also the index of the kind of a miss (compulsory, capacity, conflict). A number rather
/// than an enum so it is computed without a branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Prior(u8);

impl Prior {
    /// Never referenced.
    pub(super) const NEVER: Prior = Prior(0);
    /// Referenced before, but evicted since (or never allocated).
    pub(super) const EVICTED: Prior = Prior(1);
    /// Resident: among the `capacity` most recently used lines.
    pub(super) const RESIDENT: Prior = Prior(2);

    /// Its index among the kinds of misses.
    #[inline(always)]
    pub(super) fn index(self) -> usize {
        self.0 as usize
    }
}

impl Shadow {
    /// A shadow of `capacity` lines for a memory of `lines` lines.
    pub(super) fn new(capacity: u32, lines: usize) -> Shadow {
        let ring = (capacity as usize * 2).next_power_of_two().max(MIN_RING);
        Shadow::with_limits(capacity, lines, ring, CLOCK_LIMIT)
    }

    /// [`Shadow::new`] with the log's length (a power of two above twice the capacity) and
    /// the clock's limit given, so tests can make compaction and wind-back frequent.
    fn with_limits(capacity: u32, lines: usize, ring: usize, clock_limit: u32) -> Shadow {
        assert!(ring.is_power_of_two() && ring >= 2 * capacity as usize && capacity > 0);
        let mut s = Shadow {
            capacity,
            stamp: vec![0; lines + capacity as usize],
            log: vec![0; ring],
            log_mask: ring - 1,
            clock: 1,
            lru: 2,
            next_check: 0,
            clock_limit,
            scratch: Vec::new(),
            newer: Vec::new(),
        };
        // The placeholders, accessed at times 2 and on (`lru` is the first).
        for k in 0..capacity {
            let line = lines as u32 + k;
            s.clock += 1;
            s.stamp[line as usize] = s.clock;
            s.log[s.clock as usize & s.log_mask] = line;
        }
        s.set_next_check();
        s
    }

    /// An access to line `i`: returns whether it was resident and makes it the most recently
    /// used; `allocate == false` leaves a non-resident line out (a no-allocate store miss).
    #[inline(always)]
    pub(super) fn touch(&mut self, i: u32, allocate: bool) -> bool {
        self.access::<false, true>(i, allocate) == Prior::RESIDENT
    }

    /// Whether the next `n` accesses need no [`Shadow::maintain`] (each advances the clock
    /// by at most one, and only `maintain` moves `next_check`, so the last of them starts at
    /// a clock of at most `clock + n - 1`): a caller with `n` accesses at hand then makes
    /// them with `CHECK == false` in [`Shadow::touch_read`], without the test per access.
    #[inline(always)]
    pub(super) fn room_for(&self, n: u32) -> bool {
        self.clock as u64 + n as u64 <= self.next_check as u64
    }

    /// An allocating access (a read) to line `i` that the real cache hit (`MISSED == false`:
    /// the LRU step out of line) or missed (inline), as [`Shadow::touch`] and
    /// [`Shadow::touch_missed`]; the test for maintenance made only if `CHECK` (without it,
    /// only within the accesses [`Shadow::room_for`] allowed).
    #[inline(always)]
    pub(super) fn touch_read<const MISSED: bool, const CHECK: bool>(&mut self, i: u32) -> Prior {
        self.access::<MISSED, CHECK>(i, true)
    }

    /// [`Shadow::touch`] for an access the real cache missed, where the LRU line usually
    /// changes (a line comes in): that step is inline here, out of line in `touch`. Says
    /// also whether the line was ever referenced before.
    #[inline(always)]
    pub(super) fn touch_missed(&mut self, i: u32, allocate: bool) -> Prior {
        self.access::<true, true>(i, allocate)
    }

    #[inline(always)]
    fn access<const LRU_INLINE: bool, const CHECK: bool>(
        &mut self,
        i: u32,
        allocate: bool,
    ) -> Prior {
        // First, as it renumbers the stamps.
        let mut clock = self.clock;
        debug_assert!(CHECK || clock < self.next_check);
        if CHECK && clock >= self.next_check {
            self.maintain();
            clock = self.clock;
        }
        let (lru, clock) = (self.lru, clock + 1);
        let stamp = &mut self.stamp[i as usize];
        let s = *stamp;
        // Stamps of lines not resident are below lru (0 or 1 if not accessed since the
        // wind-back).
        let hit = s >= lru;
        // A resident line's stamp is not 0 either: 0, 1 or 2 as the constants say.
        let prior = Prior((s != 0) as u8 + hit as u8);
        if !hit && !allocate {
            // Referenced now, still not resident.
            if s == 0 {
                *stamp = 1;
            }
            return prior;
        }
        *stamp = clock;
        self.clock = clock;
        let mask = self.log_mask;
        // SAFETY: `log_mask` is the log's length less one, a power of two less one
        // (`with_limits`), so `& mask` is an index into it.
        *unsafe { self.log.get_unchecked_mut(clock as usize & mask) } = i;
        // The LRU line itself (`s == lru`), or a line coming in.
        if s <= lru {
            if LRU_INLINE {
                self.move_lru();
            } else {
                self.lru_changes();
            }
        }
        prior
    }

    /// [`Shadow::move_lru`] out of line: the rare part of [`Shadow::touch`].
    #[cold]
    #[inline(never)]
    fn lru_changes(&mut self) {
        self.move_lru();
    }

    /// The LRU line was accessed, or a line came in, evicting the LRU line. `lru` moves to
    /// the next resident line in time.
    #[inline(always)]
    fn move_lru(&mut self) {
        let mask = self.log_mask;
        let mut t = self.lru + 1;
        let (log, stamp) = (&self.log, &self.stamp);
        // SAFETY: `log_mask` is the log's length less one, a power of two less one
        // (`with_limits`), so `& mask` is an index into it; every entry of the log is an
        // index into `stamp`: the first zeros and the placeholders (`with_limits`), the
        // lines of accesses (which index `stamp` first, with a check) and those copied from
        // the log by `maintain`.
        while *unsafe { stamp.get_unchecked(*log.get_unchecked(t as usize & mask) as usize) } != t {
            t += 1;
        }
        self.lru = t;
    }

    fn set_next_check(&mut self) {
        // The access at `lru + ring` would overwrite the entry at `lru`.
        let keep = self.lru + self.log_mask as u32;
        self.next_check = keep.min(self.clock_limit);
    }

    /// Before the log loses the entry at `lru`, or the clock its range: the resident lines
    /// get new stamps after the clock in the same order (compaction), or, near the clock's
    /// limit, every stamp is cleared and they get stamps from 1 (wind-back). Only the next
    /// time to check is set if `lru` has moved on far enough since it was last set.
    #[cold]
    #[inline(never)]
    fn maintain(&mut self) {
        self.set_next_check();
        if self.clock < self.next_check {
            return;
        }
        self.gather_resident();
        if self.clock >= self.clock_limit {
            // Every line referenced stays so (1); the resident ones are stamped again below.
            for s in self.stamp.iter_mut() {
                if *s > 1 {
                    *s = 1;
                }
            }
            self.clock = 1;
        }
        let mask = self.log.len() - 1;
        let first = self.clock + 1;
        for (k, &line) in self.scratch.iter().enumerate() {
            let t = first + k as u32;
            self.log[t as usize & mask] = line;
            self.stamp[line as usize] = t;
        }
        self.clock = first + self.scratch.len() as u32 - 1;
        self.lru = first;
        self.set_next_check();
    }

    /// Collects the resident lines, least recently used first, into `scratch`: the entries of
    /// the log from `lru` to the clock that are still their line's latest access. There are
    /// `resident` of them; they are sought from both ends of that span at once, so a span
    /// made long by a loop over a few lines is not walked through.
    fn gather_resident(&mut self) {
        let mask = self.log.len() - 1;
        let (log, stamp) = (&self.log, &self.stamp);
        // The line accessed at time `t`, if that is still its latest access.
        let latest = |t: u32| {
            let line = log[t as usize & mask];
            (stamp[line as usize] == t).then_some(line)
        };
        let (older, newer) = (&mut self.scratch, &mut self.newer);
        older.clear();
        newer.clear();
        let (mut lo, mut hi) = (self.lru, self.clock);
        let want = self.capacity as usize;
        while older.len() + newer.len() < want && lo <= hi {
            older.extend(latest(lo));
            lo += 1;
            if older.len() + newer.len() < want && lo <= hi {
                newer.extend(latest(hi));
                hi -= 1;
            }
        }
        debug_assert_eq!(older.len() + newer.len(), want);
        older.extend(newer.iter().rev());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain LRU list: most recently used first.
    struct Naive {
        lines: Vec<u32>,
        capacity: usize,
        /// Every line referenced so far.
        seen: Vec<u32>,
    }

    impl Naive {
        fn touch(&mut self, i: u32, allocate: bool) -> Prior {
            let pos = self.lines.iter().position(|&l| l == i);
            if let Some(p) = pos {
                self.lines.remove(p);
            }
            if pos.is_some() || allocate {
                self.lines.insert(0, i);
                self.lines.truncate(self.capacity);
            }
            let first = !self.seen.contains(&i);
            if first {
                self.seen.push(i);
            }
            match (pos, first) {
                (Some(_), _) => Prior::RESIDENT,
                (None, true) => Prior::NEVER,
                (None, false) => Prior::EVICTED,
            }
        }
    }

    /// A shadow with a log of `ring` entries and a clock wound back after `limit` accesses,
    /// over `lines` lines, and the plain list of the same capacity it must agree with.
    fn shadow_and_list(capacity: u32, lines: usize, ring: usize, limit: u32) -> (Shadow, Naive) {
        let naive = Naive {
            lines: Vec::new(),
            capacity: capacity as usize,
            seen: Vec::new(),
        };
        (Shadow::with_limits(capacity, lines, ring, limit), naive)
    }

    /// xorshift64, seeded.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// Every access of random sequences (long loops over a few lines, scans, random lines,
    /// no-allocate accesses) agrees with the plain list, and with the set of lines referenced
    /// (whether a line was ever referenced, kept in its stamp), with a log and a clock small
    /// enough that compaction and wind-back happen many times.
    #[test]
    fn shadow_agrees_with_an_lru_list_through_compaction_and_wind_back() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for capacity in [1u32, 2, 3, 8, 13, 64] {
            for (ring, limit) in [(2 * capacity as usize, 5_000), (256, 3_000), (1024, 700)] {
                let ring = ring.next_power_of_two();
                // Enough lines that first references keep coming after wind-backs.
                let lines = 64 * capacity as usize + 400;
                let (mut shadow, mut naive) = shadow_and_list(capacity, lines, ring, limit);
                let (mut hits, mut misses, mut firsts) = (0, 0, 0);
                let mut i = 0u32;
                for n in 0..20_000 {
                    let r = next(&mut rng);
                    // Phases: a loop over a few lines, a sequential scan, random lines.
                    i = match (n / 2000) % 3 {
                        0 => (n as u32 % (capacity / 2 + 1)) + (r as u32 % 2) * 3,
                        1 => (i + 1) % lines as u32,
                        _ => (r % lines as u64) as u32,
                    };
                    let allocate = r >> 60 != 0;
                    let expected = naive.touch(i, allocate);
                    // Both entry points, which differ in where the LRU step is compiled.
                    let got = if r & 1 == 0 {
                        shadow.touch_missed(i, allocate)
                    } else if shadow.touch(i, allocate) {
                        Prior::RESIDENT
                    } else if expected == Prior::NEVER {
                        // (`touch` does not say; what it recorded is checked later.)
                        Prior::NEVER
                    } else {
                        Prior::EVICTED
                    };
                    assert_eq!(
                        got, expected,
                        "capacity {capacity}, ring {ring}, limit {limit}, access {n}"
                    );
                    *[&mut firsts, &mut misses, &mut hits][expected.index()] += 1;
                }
                assert!(
                    hits > 1000 && misses > 1000 && firsts > 100,
                    "{hits} hits, {misses} misses, {firsts} first references"
                );
            }
        }
    }

    /// Reads in runs of 1 to 12, each run without the per-access test for maintenance when
    /// [`Shadow::room_for`] allows it (as the I-cache's line loop makes them), agree with the
    /// plain list through compaction and wind-back. A `room_for` that allows one access too
    /// many fails it (the debug assertion in `access`: tests build with it); runs that end
    /// exactly at a maintenance time are checked to occur.
    #[test]
    fn reads_without_the_per_access_check_agree_with_an_lru_list() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let (mut unchecked, mut checked, mut at_edge) = (0, 0, 0);
        for capacity in [1u32, 2, 8, 13] {
            for (ring, limit) in [(2 * capacity as usize, 5_000), (64, 3_000), (1024, 700)] {
                let ring = ring.next_power_of_two();
                let lines = 64 * capacity as usize + 400;
                let (mut shadow, mut naive) = shadow_and_list(capacity, lines, ring, limit);
                let mut i = 0u32;
                for run in 0..3_000 {
                    let r = next(&mut rng);
                    let n = 1 + (r % 12) as u32;
                    let room = shadow.room_for(n);
                    if room {
                        unchecked += 1;
                        // A run that uses the last access allowed before maintenance.
                        if shadow.clock + n == shadow.next_check {
                            at_edge += 1;
                        }
                    } else {
                        checked += 1;
                    }
                    for k in 0..n {
                        i = match (run / 300) % 3 {
                            0 => (i + 1) % (capacity + 2),
                            1 => (i + 1) % lines as u32,
                            _ => (next(&mut rng) % lines as u64) as u32,
                        };
                        let expected = naive.touch(i, true);
                        let missed = (r >> (8 + k)) & 1 == 0;
                        let got = match (room, missed) {
                            (true, true) => shadow.touch_read::<true, false>(i),
                            (true, false) => shadow.touch_read::<false, false>(i),
                            (false, true) => shadow.touch_read::<true, true>(i),
                            (false, false) => shadow.touch_read::<false, true>(i),
                        };
                        assert_eq!(got, expected, "capacity {capacity}, ring {ring}, run {run}");
                    }
                }
            }
        }
        assert!(
            unchecked > 10_000 && checked > 1_000 && at_edge > 100,
            "{unchecked} unchecked runs, {checked} checked, {at_edge} at the edge"
        );
    }
}
