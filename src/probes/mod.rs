//! What to measure, one module per family. A probe builds its workloads and partners, names
//! its expectations, and hands them to the engine; it never prints.

pub mod call;
pub mod ctx;
pub mod fault;
pub mod journal;
pub mod mem;
pub mod mmap;
pub mod pattern;
pub mod scratch;
pub mod syscall;
pub mod workset;

use crate::engine::checks;
use crate::model::{Check, Evidence};

/// Share of the participants' CPU time spent in the kernel, if enough time was accounted
/// (procfs counts in clock ticks, so very short windows cannot tell).
pub fn kernel_share(ev: &Evidence) -> Option<f64> {
    let t = &ev.rusage.total;
    let cpu = t.utime_us + t.stime_us;
    (cpu >= 50_000).then(|| t.stime_us as f64 / cpu as f64)
}

/// Did the measured loop enter the kernel? `expect_kernel` says which answer the probe
/// expects. Returns None when the window was too short to attribute CPU time.
pub fn kernel_entry_check(ev: &Evidence, expect_kernel: bool) -> Option<Check> {
    let share = kernel_share(ev)?;
    let mut c = if expect_kernel {
        checks::at_least("kernel share of CPU time", 0.2, share)
    } else {
        checks::at_most("kernel share of CPU time", 0.2, share)
    };
    c.observed = format!("{:.0}% system time", share * 100.0);
    c.expected = if expect_kernel {
        "enters the kernel (≥ 20% system time)".into()
    } else {
        "stays in user space (≤ 20% system time)".into()
    };
    Some(c)
}

/// The verdict of a single-thread probe: it ran where it was pinned, and it entered the
/// kernel (or stayed out of it) as `expect_kernel` says.
pub fn single_thread_verdict(
    ev: &Evidence,
    expect_kernel: bool,
) -> crate::engine::measure::Verdict {
    let mut checks = vec![checks::placement(&ev.cpus)];
    let mut warnings = Vec::new();
    match kernel_entry_check(ev, expect_kernel) {
        Some(c) => checks.push(c),
        None => warnings.push(SHORT_WINDOW.into()),
    }
    checks::add_occupancy(ev, &mut checks, &mut warnings);
    (checks, warnings)
}

/// The shared wording when CPU time was too short to attribute.
pub const SHORT_WINDOW: &str =
    "measured window too short to attribute user vs system time (procfs counts clock ticks)";
