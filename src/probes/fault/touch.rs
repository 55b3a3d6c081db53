//! The touch loops: one byte per page, written or read, in a given page order. The plain loop
//! is timed as a whole; the per-touch loop times every touch with a cheap clock (the TSC,
//! calibrated against CLOCK_MONOTONIC_RAW, where it is invariant; else clock_gettime via the
//! vDSO), for the latency distribution. Both check for Ctrl-C every few hundred pages.

use crate::error::Result;
use crate::evidence::clock::now_ns;

/// Pages between checks of the interrupt flag (one atomic load: noise-free at this spacing).
const CHECK_EVERY: usize = 256;

/// Touch one byte of every page of `base` in `order`; returns the elapsed ns.
///
/// # Safety
/// `base` must point to a live mapping covering `order.len()` pages of `page` bytes, writable
/// when `write` is set.
pub unsafe fn touch_all(base: *mut u8, page: usize, order: &[u32], write: bool) -> Result<u64> {
    let mut sum = 0u8;
    let t0 = now_ns();
    for (i, &p) in order.iter().enumerate() {
        if i % CHECK_EVERY == 0 {
            crate::engine::interrupt::check()?;
        }
        let addr = base.add(p as usize * page);
        if write {
            addr.write_volatile(1);
        } else {
            sum = sum.wrapping_add(addr.read_volatile());
        }
    }
    let t = now_ns() - t0;
    std::hint::black_box(sum);
    Ok(t)
}

/// Touch like [`touch_all`] but time each touch; latencies (ns) go to `out`. Returns the
/// elapsed ns of the whole loop (which includes the clock reads).
///
/// # Safety
/// As for [`touch_all`].
pub unsafe fn touch_each(
    base: *mut u8,
    page: usize,
    order: &[u32],
    write: bool,
    clock: &TouchClock,
    out: &mut Vec<f64>,
) -> Result<u64> {
    out.reserve(order.len());
    let mut sum = 0u8;
    let t0 = now_ns();
    for (i, &p) in order.iter().enumerate() {
        if i % CHECK_EVERY == 0 {
            crate::engine::interrupt::check()?;
        }
        let addr = base.add(p as usize * page);
        let a = clock.ticks();
        if write {
            addr.write_volatile(1);
        } else {
            sum = sum.wrapping_add(addr.read_volatile());
        }
        let b = clock.ticks();
        out.push(clock.to_ns(b.wrapping_sub(a)));
    }
    let t = now_ns() - t0;
    std::hint::black_box(sum);
    Ok(t)
}

/// The per-touch clock.
#[derive(Debug, Clone, PartialEq)]
pub struct TouchClock {
    tsc: bool,
    ns_per_tick: f64,
    /// Median cost of one back-to-back pair of reads, ns (what an empty touch would show).
    pub overhead_ns: f64,
}

impl TouchClock {
    /// The TSC when the CPU says it is invariant (constant_tsc and nonstop_tsc), calibrated
    /// over 20 ms of CLOCK_MONOTONIC_RAW; else clock_gettime.
    pub fn new() -> TouchClock {
        let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let invariant = flags.split_whitespace().any(|f| f == "constant_tsc")
            && flags.split_whitespace().any(|f| f == "nonstop_tsc");
        let mut c = TouchClock {
            tsc: cfg!(target_arch = "x86_64") && invariant,
            ns_per_tick: 1.0,
            overhead_ns: 0.0,
        };
        if c.tsc {
            let (n0, k0) = (now_ns(), c.ticks());
            while now_ns() - n0 < 20_000_000 {
                std::hint::spin_loop();
            }
            let (n1, k1) = (now_ns(), c.ticks());
            c.ns_per_tick = (n1 - n0) as f64 / (k1.wrapping_sub(k0)).max(1) as f64;
        }
        let mut pairs: Vec<f64> = (0..1001)
            .map(|_| {
                let a = c.ticks();
                let b = c.ticks();
                c.to_ns(b.wrapping_sub(a))
            })
            .collect();
        pairs.sort_by(|a, b| a.total_cmp(b));
        c.overhead_ns = pairs[pairs.len() / 2];
        c
    }

    /// Which clock, in words for the notes.
    pub fn describe(&self) -> String {
        if self.tsc {
            format!(
                "per-touch clock: rdtsc (invariant TSC) after lfence, calibrated against \
                 CLOCK_MONOTONIC_RAW at {:.3} ns/tick; a pair of reads costs {:.0} ns, \
                 included in every latency",
                self.ns_per_tick, self.overhead_ns
            )
        } else {
            format!(
                "per-touch clock: clock_gettime(CLOCK_MONOTONIC_RAW) via the vDSO (no invariant \
                 TSC); a pair of reads costs {:.0} ns, included in every latency",
                self.overhead_ns
            )
        }
    }

    #[inline(always)]
    pub fn ticks(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.tsc {
            // SAFETY: lfence and rdtsc are available on every x86-64 CPU.
            unsafe {
                core::arch::x86_64::_mm_lfence();
                return core::arch::x86_64::_rdtsc();
            }
        }
        now_ns()
    }

    #[inline(always)]
    pub fn to_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick
    }
}

impl Default for TouchClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::fault::mem::Mapping;

    #[test]
    fn clock_is_calibrated_and_monotonic() {
        let c = TouchClock::new();
        assert!(c.ns_per_tick > 0.0 && c.ns_per_tick.is_finite());
        let (n0, k0) = (now_ns(), c.ticks());
        std::thread::sleep(std::time::Duration::from_millis(5));
        let (n1, k1) = (now_ns(), c.ticks());
        let tick_ns = c.to_ns(k1 - k0);
        let wall = (n1 - n0) as f64;
        // The two clocks agree to within a factor (not a timing threshold on the machine:
        // a mis-calibration would be off by orders of magnitude).
        assert!(
            tick_ns > wall / 2.0 && tick_ns < wall * 2.0,
            "{tick_ns} vs {wall}"
        );
        assert!(c.describe().contains("per-touch clock"));
    }

    #[test]
    fn per_touch_loop_records_one_latency_per_page() {
        let page = 4096;
        let m = Mapping::anon(16 * page, false, 0).unwrap();
        let order: Vec<u32> = (0..16).rev().collect();
        let mut out = Vec::new();
        let c = TouchClock::new();
        // SAFETY: 16 writable pages.
        unsafe { touch_each(m.ptr(), page, &order, true, &c, &mut out).unwrap() };
        assert_eq!(out.len(), 16);
        assert_eq!(m.resident_pages(page).unwrap(), 16);
        assert!(out.iter().all(|v| v.is_finite() && *v >= 0.0));
    }
}
