//! The timing clock: CLOCK_MONOTONIC_RAW (not slewed by NTP), read through the vDSO. Every
//! sample and every evidence window is timed with it; engine::clock calibrates it.

/// Nanoseconds on CLOCK_MONOTONIC_RAW.
#[inline(always)]
pub fn now_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC_RAW)
}

/// Nanoseconds on any POSIX clock (used by the `--clock cputime` method).
#[inline(always)]
pub fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; the clock ids used here always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
