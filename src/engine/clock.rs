//! The timing clock's calibration: at start the engine measures what evidence::clock can
//! resolve and what a read costs, so that the sampler can make every sample long against
//! both.

use crate::evidence::clock::now_ns;
use crate::model::ClockInfo;

/// Measure the clock: reported resolution, smallest observed step, and median read cost.
pub fn calibrate() -> ClockInfo {
    let mut res = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_RAW, &mut res) };
    let resolution_ns = res.tv_sec as f64 * 1e9 + res.tv_nsec as f64;

    let mut min_step = u64::MAX;
    for _ in 0..1000 {
        let a = now_ns();
        let mut b = now_ns();
        while b == a {
            b = now_ns();
        }
        min_step = min_step.min(b - a);
    }

    // Cost of one read: time batches of reads; the median batch over 1000 reads each.
    let mut per_read = Vec::with_capacity(21);
    for _ in 0..21 {
        let t0 = now_ns();
        for _ in 0..1000 {
            std::hint::black_box(now_ns());
        }
        per_read.push((now_ns() - t0) as f64 / 1000.0);
    }
    ClockInfo {
        name: "CLOCK_MONOTONIC_RAW".into(),
        resolution_ns,
        min_step_ns: min_step as f64,
        read_overhead_ns: super::stats::median(&per_read),
    }
}

/// The shortest sample that the clock resolves to 0.1%: 1000 × the coarser of the reported
/// resolution and the observed step, and at least 1000 reads' worth of overhead.
pub fn min_sample_ns(info: &ClockInfo) -> f64 {
    1000.0
        * info
            .resolution_ns
            .max(info.min_step_ns)
            .max(info.read_overhead_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_monotonic_and_calibration_is_positive() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
        let info = calibrate();
        assert!(info.resolution_ns > 0.0);
        assert!(info.min_step_ns > 0.0);
        assert!(info.read_overhead_ns > 0.0);
        assert!(min_sample_ns(&info) >= 1000.0 * info.min_step_ns);
    }
}
