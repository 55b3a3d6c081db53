//! What to measure, one module per family. A probe builds its workloads and partners, names
//! its expectations, and hands them to the engine; it never prints.

pub mod c2c;
pub mod call;
pub mod ctx;
pub mod fault;
pub mod ipc;
pub mod mem;
pub mod mmap;
pub mod pattern;
pub mod rpc;
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
    checks.push(kernel_entry_check(ev, expect_kernel).unwrap_or_else(|| not_enough_time(ev)));
    checks::add_occupancy(ev, &mut checks, &mut warnings);
    (checks, warnings)
}

/// The kernel-entry check when the windows held too little CPU time to attribute: it does
/// not disappear, it fails and says why (a longer --budget lets it decide).
pub fn not_enough_time(ev: &Evidence) -> Check {
    let t = &ev.rusage.total;
    Check {
        name: "kernel share of CPU time".into(),
        expected: "≥ 50 ms of CPU time to attribute user vs system time".into(),
        observed: format!(
            "not enough time to check ({:.1} ms; procfs counts clock ticks): use a longer \
             --budget",
            (t.utime_us + t.stime_us) as f64 / 1000.0
        ),
        ok: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_entry_check_fails_when_there_was_not_enough_time() {
        let mut ev = Evidence::default();
        ev.rusage.total.stime_us = 10_000;
        let (c, _) = single_thread_verdict(&ev, true);
        let k = c
            .iter()
            .find(|c| c.name == "kernel share of CPU time")
            .unwrap();
        assert!(
            !k.ok && k.observed.starts_with("not enough time to check"),
            "{k:?}"
        );
        ev.rusage.total.stime_us = 60_000;
        let (c, _) = single_thread_verdict(&ev, true);
        assert!(
            c.iter()
                .find(|c| c.name == "kernel share of CPU time")
                .unwrap()
                .ok
        );
        // ... and fails when a loop that should enter the kernel did not.
        let (c, _) = single_thread_verdict(&ev, false);
        assert!(
            !c.iter()
                .find(|c| c.name == "kernel share of CPU time")
                .unwrap()
                .ok
        );
    }
}
