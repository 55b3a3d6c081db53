//! `mem.latency`: lmbench lat_mem_rd's pointer chase. Every stride-th word of an S-byte
//! buffer holds the address of the next one along a random single cycle (Sattolo's
//! shuffle), so each load depends on the previous one and no prefetcher can guess the
//! next: the time per load is the latency of the level the buffer lives in. One curve per
//! stride and page mode (4 KB pages vs transparent huge pages) shows the TLB's reach too.

use crate::engine::checks;
use crate::engine::measure::{measure, Context, Spec, Verdict};
use crate::engine::measure::{Participants, Workloads};
use crate::engine::sampler::SamplingConfig;
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::machine::fits::fits_in;
use crate::model::{Check, CheckKind, Evidence, Measurement};
use crate::probes::workset::{huge_page_share, Pages, WorkingSet};
use crate::units::name::Named;
use crate::units::size::fmt_size;
use crate::units::{Per, Unit};

pub const PROBE: crate::model::ProbeId = crate::model::ProbeId("mem.latency");

/// The order in which the chain visits the slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// One random cycle through every slot: no prefetcher can guess the next load, so the
    /// time per load is the level's full latency.
    Random,
    /// Forward, one slot after the other, wrapping at the end: lmbench lat_mem_rd's default
    /// (its stride_initialize), which hardware prefetchers can follow, so large buffers read
    /// lower than their true latency.
    Strided,
}

crate::units::name::named!(Order);

impl Order {
    /// What this order means next to lat_mem_rd, for every header and note.
    pub fn definition(order: &str) -> &'static str {
        if order == Order::Strided.name() {
            "forward strided walk: lat_mem_rd's default; prefetchers can hide latency"
        } else {
            "random chase, the full latency (lat_mem_rd walks forward: --order strided)"
        }
    }
}

/// One point of the curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub size: u64,
    pub stride: usize,
    pub pages: Pages,
    pub cpu: usize,
    pub order: Order,
}

/// A pointer chase has no partner and no switch, and one load is nanoseconds: samples of
/// 2 ms (still ≥ 1000× the clock's step, enforced by the sampler) and a 10 ms warm-up floor
/// (the chain was just written, so the buffer is resident) reach the same interval as 20 ms
/// samples in a fraction of the time. The stop rule (interval target, budget) is the user's.
/// Counters are read on every 8th sample rather than every 4th: a chase has no switch for
/// them to tax, per-load ratios from thousands of loads per window are already precise, and
/// occupancy, placement and rusage are read around every sample anyway (quiet windows);
/// every 4th costs a 64 MB curve about 15% of its time.
pub fn chase_sampling(s: &SamplingConfig) -> SamplingConfig {
    SamplingConfig {
        target_sample_ns: s.target_sample_ns.min(2_000_000),
        warmup_ns: s.warmup_ns.min(10_000_000),
        evidence_every: CHASE_EVIDENCE_EVERY,
        ..s.clone()
    }
}

/// See [`chase_sampling`].
pub const CHASE_EVIDENCE_EVERY: usize = 8;

/// splitmix64: a small, seedable generator (the permutation must differ from any pattern a
/// prefetcher knows, not be cryptographic).
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), by multiply-shift.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// Sattolo's shuffle: `next[i]` is the slot after slot i on one cycle through all `n` slots.
pub fn cyclic_permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut a: Vec<u32> = (0..n as u32).collect();
    let mut rng = SplitMix(seed);
    for i in (1..n).rev() {
        let j = rng.below(i);
        a.swap(i, j);
    }
    a
}

/// The slots' successor order: `next[i]` follows slot i, one cycle through all `n` slots.
pub fn successors(n: usize, order: Order, seed: u64) -> Vec<u32> {
    match order {
        Order::Random => cyclic_permutation(n, seed),
        Order::Strided => (0..n as u32).map(|i| (i + 1) % n as u32).collect(),
    }
}

/// The slots' pointer chain in a working set; returns the chain's start.
fn build_chain(ws: &WorkingSet, stride: usize, order: Order, seed: u64) -> *const usize {
    let n = ws.len() / stride;
    let next = successors(n, order, seed);
    let base = ws.as_ptr();
    for (i, &j) in next.iter().enumerate() {
        // SAFETY: i, j < n and n × stride ≤ len; stride is a multiple of 8.
        unsafe {
            let slot = base.add(i * stride) as *mut usize;
            slot.write(base.add(j as usize * stride) as usize);
        }
    }
    base as *const usize
}

/// Loads chased before sampling: one lap of `slots`, at most [`WARM_LOADS_MAX`].
pub fn warm_loads(slots: usize) -> u64 {
    (slots as u64).min(WARM_LOADS_MAX)
}

/// See [`warm_loads`].
pub const WARM_LOADS_MAX: u64 = 1 << 16;

/// Follow the chain `loads` times from `p`; returns where it stopped.
#[inline(never)]
fn chase(mut p: *const usize, loads: u64) -> *const usize {
    for _ in 0..loads {
        // SAFETY: every slot holds the address of another slot of the same live mapping.
        p = unsafe { p.read_volatile() } as *const usize;
    }
    p
}

/// Measure one size. `caches` are the CPU's data caches (label, bytes), smallest first.
pub fn measure_point(ctx: &Context, p: Point, caches: &[(String, u64)]) -> Result<Measurement> {
    if p.stride < 8 || !p.stride.is_multiple_of(8) || (p.size as usize) < 2 * p.stride {
        return Err(Error::usage(format!(
            "mem latency: size {} needs at least two slots of stride {} (a multiple of 8)",
            fmt_size(p.size),
            p.stride
        )));
    }
    let _pin = AffinityGuard::pin_current(&[p.cpu])?;
    let ws = WorkingSet::map(p.size as usize, Some(p.pages))?;
    let mut at = build_chain(&ws, p.stride, p.order, 0x6f73_636f_7374 ^ p.size);
    // Chase before the sampler sizes its samples: building the chain left the TLB, the
    // page-walk caches and the caches holding the build's traffic, not the chase's, so the
    // sampler's first timing would run about 2× slow at DRAM sizes and size every sample at
    // half its target. A lap, or
    // 64 Ki loads where the lap is longer (a 64 MB lap is 1 Mi loads, ~0.15 s; 64 Ki random
    // loads reach every page's entry of a 256 MB buffer's page table several times).
    at = chase(at, warm_loads(ws.len() / p.stride));
    let ctx = &Context {
        sampling: chase_sampling(&ctx.sampling),
        ..ctx.clone()
    };
    let share = huge_page_share(ws.as_ptr(), ws.len());
    let spec = Spec::new(PROBE.0, Unit::ns(Per::Load), Unit::ns(Per::Load), 1.0)
        .param("size", p.size)
        .param("size_label", fmt_size(p.size))
        .param("stride", p.stride)
        .param("pages", p.pages.name())
        .param("order", p.order.name())
        .param("cpus", vec![p.cpu])
        .param("fits", fits_in(caches, p.size))
        .param("huge_page_share", share)
        .events_set(EventSet::Standard)
        .note(format!(
            "dependent loads along a {} cycle through every {}-byte slot of a {} buffer \
             ({} pages): each load waits for the previous one, so time per load is the \
             latency of where the buffer lives. No baseline: the loop's own increment and \
             branch overlap the load",
            if p.order == Order::Random {
                "random"
            } else {
                "forward"
            },
            p.stride,
            fmt_size(p.size),
            p.pages.name()
        ))
        .note(Order::definition(p.order.name()));
    let me = Participant::this_thread("measuring thread", vec![p.cpu]);
    let mut raw = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        at = chase(at, iters);
        Ok(now_ns() - t0)
    };
    let (pages, size) = (p.pages, p.size);
    let m = measure(
        ctx,
        spec,
        Participants::new(vec![me], vec![None]),
        Workloads::alone(&mut raw),
        |ev| latency_verdict(ev, pages, size, share),
    );
    std::hint::black_box(at);
    drop(ws);
    m
}

/// Pinned, no migrations; for THP curves above 4 MB, the mapping must really be backed by
/// huge pages (otherwise the "THP" line would be a second 4 KB line).
pub fn latency_verdict(ev: &Evidence, pages: Pages, size: u64, share: Option<f64>) -> Verdict {
    let mut c = vec![checks::no_migrations(ev), checks::placement(&ev.cpus)];
    let mut warnings = Vec::new();
    if pages == Pages::Thp && size >= 4 << 20 {
        match share {
            Some(s) => c.push(Check::at_least(CheckKind::HugePages, 0.5, s)),
            None => warnings.push(crate::model::Remark::plain(
                crate::model::RemarkKind::SmapsUnreadable,
            )),
        }
    }
    checks::add_occupancy(ev, &mut c, &mut warnings);
    (c, warnings)
}

/// The default size grid: powers of two from `min` to `max` and the 1.5× steps between them.
pub fn size_grid(min: u64, max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut x = min.max(1).next_power_of_two();
    while x <= max {
        v.push(x);
        let mid = x + x / 2;
        if mid <= max && mid > x {
            v.push(mid);
        }
        x *= 2;
    }
    if v.last() != Some(&max) && max >= min {
        v.push(max);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_is_a_lap_capped_at_64ki_loads() {
        assert_eq!(warm_loads(512), 512);
        assert_eq!(warm_loads(1 << 20), WARM_LOADS_MAX);
    }

    #[test]
    fn permutation_is_one_cycle_through_every_slot() {
        for n in [2, 3, 10, 1000] {
            let next = cyclic_permutation(n, 42);
            let mut seen = vec![false; n];
            let mut i = 0usize;
            for _ in 0..n {
                assert!(!seen[i], "slot {i} visited twice (n={n})");
                seen[i] = true;
                i = next[i] as usize;
            }
            assert_eq!(i, 0, "the chain must close after n steps");
            assert!(seen.iter().all(|&s| s));
        }
        // Not the identity-successor order a prefetcher would follow.
        let next = cyclic_permutation(1000, 7);
        let sequential = next
            .iter()
            .enumerate()
            .filter(|(i, &j)| j as usize == i + 1)
            .count();
        assert!(sequential < 50, "{sequential}");
    }

    #[test]
    fn chain_in_memory_closes() {
        let ws = WorkingSet::map(64 << 10, Some(Pages::Small)).unwrap();
        let start = build_chain(&ws, 64, Order::Random, 1);
        let slots = (64 << 10) / 64;
        assert_eq!(chase(start, slots as u64), start);
        assert_ne!(chase(start, 1), start);
    }

    #[test]
    fn the_strided_order_is_lat_mem_rds_forward_walk_and_closes() {
        assert_eq!(successors(4, Order::Strided, 9), vec![1, 2, 3, 0]);
        let ws = WorkingSet::map(64 << 10, Some(Pages::Small)).unwrap();
        let start = build_chain(&ws, 128, Order::Strided, 1);
        // SAFETY: reading the first slot of a live mapping.
        let second = unsafe { start.read() };
        assert_eq!(second, start as usize + 128);
        assert_eq!(chase(start, (64 << 10) / 128), start);
        assert!(Order::definition("strided").contains("lat_mem_rd's default"));
        assert!(Order::definition("random").contains("--order strided"));
    }

    #[test]
    fn chase_sampling_shortens_samples_and_keeps_the_users_stop_rule() {
        let s = SamplingConfig::standard();
        let c = chase_sampling(&s);
        assert_eq!(c.target_sample_ns, 2_000_000);
        assert_eq!(c.warmup_ns, 10_000_000);
        assert_eq!(
            (c.rel_ci_target, c.budget_ns),
            (s.rel_ci_target, s.budget_ns)
        );
        assert_eq!(c.min_samples, s.min_samples);
        assert_eq!(c.evidence_every, CHASE_EVIDENCE_EVERY);
        assert!(CHASE_EVIDENCE_EVERY > s.evidence_every);
        // Never longer than asked.
        let mut short = s.clone();
        short.target_sample_ns = 500_000;
        assert_eq!(chase_sampling(&short).target_sample_ns, 500_000);
    }

    #[test]
    fn grid_covers_the_range() {
        let g = size_grid(4 << 10, 64 << 10);
        assert_eq!(
            g,
            vec![4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536]
        );
        assert_eq!(size_grid(4096, 5000), vec![4096, 5000]);
    }

    #[test]
    fn thp_line_without_huge_pages_is_invalid() {
        let ev = Evidence {
            occupancy: checks::held_occupancy(),
            ..Default::default()
        };
        let (c, _) = latency_verdict(&ev, Pages::Thp, 64 << 20, Some(0.0));
        assert!(c.iter().any(|c| !c.ok));
        let huge = c.iter().find(|c| c.kind == CheckKind::HugePages).unwrap();
        assert_eq!(
            crate::report::checks::line(huge),
            "huge pages backing the buffer: expected ≥ 50% (AnonHugePages in /proc/self/smaps), \
             observed 0%"
        );
        let (c, _) = latency_verdict(&ev, Pages::Thp, 64 << 20, Some(0.9));
        assert!(c.iter().all(|c| c.ok));
        let (c, _) = latency_verdict(&ev, Pages::Small, 64 << 20, Some(0.0));
        assert!(c.iter().all(|c| c.ok));
    }

    #[test]
    fn a_real_point_has_a_positive_latency() {
        let ctx = Context::new(crate::engine::sampler::SamplingConfig {
            warmup_ns: 5_000_000,
            target_sample_ns: 1_000_000,
            min_samples: 5,
            max_samples: 20,
            rel_ci_target: 0.05,
            budget_ns: 100_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        });
        let cpu = *crate::machine::affinity::allowed_cpus().last().unwrap();
        let p = Point {
            size: 32 << 10,
            stride: 64,
            pages: Pages::Small,
            cpu,
            order: Order::Random,
        };
        let m = measure_point(&ctx, p, &[("L1d".into(), 48 << 10)]).unwrap();
        assert!(m.value.unwrap().median > 0.0);
        assert_eq!(m.params["fits"], "L1d");
        // Tests share the CPUs with each other (and other builds): only the occupancy check
        // may fail, and then it must say that others held the CPU.
        let failed: Vec<_> = m.checks.iter().filter(|c| !c.ok).collect();
        assert!(failed.iter().all(|c| checks::contested(c)), "{failed:?}");
        assert_eq!(m.valid, failed.is_empty());
    }
}
