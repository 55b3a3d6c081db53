//! The sweep's ring and overhead laps, interleaved inside every sample.
//!
//! Why: at S = 1m and 2m lat_ctx's figure is 2–4% of a walk (docs/SWEEP.md), so a 1% drift of
//! the walk's speed between the ring's laps and the overhead's moves it 12–25%. The engine
//! pairs a raw sample with the baseline sample after it, 20 ms apart, which cancels a drift
//! slower than a pair but not one within it: a pair's ring half always ran first. Here one
//! sample runs both, in [`CHUNKS`] chunks of each that alternate ring, overhead, overhead,
//! ring (ABBA): the two halves' laps then have the same mean time within the sample, so a
//! drift that is linear over the sample adds the same to both and leaves their difference.
//! The cache state each walk starts from is lat_ctx's: an overhead chunk follows the
//! measuring thread's own walk (the last of a ring lap), and a ring chunk's first hop follows
//! walks of another array, as in lat_ctx's batches.
//!
//! Why two chunks of each and not more: every switch from one part to the other costs the
//! ring something that a lap of warm-up does not take away, and not the same every time, so
//! more chunks read higher and spread wider (docs/SWEEP.md). One ABBA of two chunks each
//! still cancels a linear drift exactly (the test below).

use crate::error::Result;
use std::cell::Cell;

/// Chunks of each part in one sample: an even count, so the ABBA order closes.
pub const CHUNKS: u64 = 2;

/// Which laps a chunk runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Ring,
    Overhead,
}

/// The chunks of a sample of `laps` laps of each part: `min(laps, CHUNKS)` chunks per part,
/// sizes as even as they go (the larger first), in ABBA order. Every chunk pair has the same
/// lap count on both sides.
pub fn plan(laps: u64) -> Vec<(Part, u64)> {
    let n = laps.min(CHUNKS);
    let mut out = Vec::with_capacity(2 * n as usize);
    for k in 0..n {
        let size = laps / n + u64::from(k < laps % n);
        let (first, second) = if k % 2 == 0 {
            (Part::Ring, Part::Overhead)
        } else {
            (Part::Overhead, Part::Ring)
        };
        out.push((first, size));
        out.push((second, size));
    }
    out
}

/// Run a sample of `laps` laps of each part by [`plan`]; `chunk(part, n)` runs n laps of
/// that part and returns the ns they took. Returns (ring ns, overhead ns).
pub fn run(laps: u64, mut chunk: impl FnMut(Part, u64) -> Result<u64>) -> Result<(u64, u64)> {
    let (mut r, mut o) = (0u64, 0u64);
    for (part, n) in plan(laps) {
        let ns = chunk(part, n)?;
        match part {
            Part::Ring => r += ns,
            Part::Overhead => o += ns,
        }
    }
    Ok((r, o))
}

/// Hands the engine the two halves of an interleaved sample as its raw and baseline
/// samples: [`Halves::ring`] runs the sample and returns the ring's ns, keeping the
/// overhead's; the engine's baseline call right after takes them ([`Halves::overhead`]).
/// A baseline call with nothing kept (the engine's scaling of the baseline alone) runs the
/// overhead on its own.
#[derive(Debug, Default)]
pub struct Halves {
    /// (laps, ns) of the last sample's overhead half, until taken.
    kept: Cell<Option<(u64, u64)>>,
}

impl Halves {
    /// The raw sample: `paired(laps)` returns (ring ns, overhead ns) for `laps` of each.
    pub fn ring(&self, laps: u64, paired: impl FnOnce(u64) -> Result<(u64, u64)>) -> Result<u64> {
        let (r, o) = paired(laps)?;
        self.kept.set(Some((laps, o)));
        Ok(r)
    }

    /// The baseline sample of `laps` laps: the kept half at its per-lap time (the engine may
    /// ask for another count than the raw sample's; it divides by the count it asked for),
    /// else `alone(laps)`.
    pub fn overhead(&self, laps: u64, alone: impl FnOnce(u64) -> Result<u64>) -> Result<u64> {
        match self.kept.take() {
            Some((n, ns)) if n > 0 => Ok((ns as f64 * laps as f64 / n as f64).round() as u64),
            _ => alone(laps),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_alternates_ring_and_overhead_chunks_abba_with_equal_laps() {
        use Part::{Overhead as O, Ring as R};
        assert_eq!(plan(21), vec![(R, 11), (O, 11), (O, 10), (R, 10)]);
        // Fewer laps than chunks: one lap per chunk, both parts in the pair.
        assert_eq!(plan(1), vec![(R, 1), (O, 1)]);
        assert!(plan(0).is_empty());
        for laps in [1, 7, 8, 9, 185, 4000] {
            let total =
                |want| -> u64 { plan(laps).iter().filter(|c| c.0 == want).map(|c| c.1).sum() };
            assert_eq!((total(R), total(O)), (laps, laps), "laps {laps}");
        }
    }

    /// A host whose speed drifts linearly: a lap of cost `c` ns started at time t takes
    /// c · (1 + slope · t / 1 ms).
    struct Drifting {
        now: f64,
        slope: f64,
    }

    impl Drifting {
        fn laps(&mut self, n: u64, cost: f64) -> u64 {
            let t0 = self.now;
            for _ in 0..n {
                self.now += cost * (1.0 + self.slope * self.now / 1e6);
            }
            (self.now - t0).round() as u64
        }
    }

    #[test]
    fn a_drift_linear_over_the_sample_leaves_the_difference_as_it_is() {
        // 1m as measured: a lap 100 µs of walks and switches against 96 µs of the same walks
        // without them, 4 µs of difference, on a host whose speed drifts 2% over a 20 ms
        // half-sample.
        let (ring_cost, overhead_cost, laps) = (100_000.0, 96_000.0, 200);
        let mut host = Drifting {
            now: 0.0,
            slope: 0.001,
        };
        let (r, o) = run(laps, |part, n| {
            Ok(host.laps(
                n,
                if part == Part::Ring {
                    ring_cost
                } else {
                    overhead_cost
                },
            ))
        })
        .unwrap();
        let interleaved = (r as f64 - o as f64) / laps as f64;
        // Both halves ran at the same mean speed: their difference is the difference's cost
        // at that speed (within 1%), where the ring-first order of the engine's pairs read
        // about half of it (the host slowed between the halves).
        let mean_speed = (r + o) as f64 / (laps as f64 * (ring_cost + overhead_cost));
        let want = (ring_cost - overhead_cost) * mean_speed;
        assert!(
            (interleaved / want - 1.0).abs() < 0.01,
            "{interleaved} against {want}"
        );
        let mut host = Drifting {
            now: 0.0,
            slope: 0.001,
        };
        let r = host.laps(laps, ring_cost);
        let o = host.laps(laps, overhead_cost);
        let ring_first = (r as f64 - o as f64) / laps as f64;
        assert!(ring_first / want < 0.7, "{ring_first} against {want}");
    }

    #[test]
    fn the_baseline_call_takes_the_kept_half_at_its_per_lap_time_once() {
        let h = Halves::default();
        let ran_alone = Cell::new(0u64);
        let alone = |n: u64| {
            ran_alone.set(ran_alone.get() + n);
            Ok(n * 7)
        };
        // Nothing kept: the overhead runs on its own (the engine scaling the baseline).
        assert_eq!(h.overhead(10, alone).unwrap(), 70);
        assert_eq!(ran_alone.get(), 10);
        // A sample of 100 laps each: 5000 ns of ring, 3000 of overhead.
        assert_eq!(h.ring(100, |n| Ok((n * 50, n * 30))).unwrap(), 5000);
        // The same count: exactly the kept half; another count: its per-lap time.
        assert_eq!(h.overhead(100, alone).unwrap(), 3000);
        assert_eq!(h.ring(100, |n| Ok((n * 50, n * 30))).unwrap(), 5000);
        assert_eq!(h.overhead(110, alone).unwrap(), 3300);
        assert_eq!(ran_alone.get(), 10, "the kept halves ran nothing more");
        // Taken once: the next baseline call without a sample before it runs alone.
        assert_eq!(h.overhead(4, alone).unwrap(), 28);
        assert_eq!(ran_alone.get(), 14);
    }
}
