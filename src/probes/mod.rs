//! What to measure, one module per family. A probe builds its workloads and partners, names
//! its expectations, and hands them to the engine; it never prints.

pub mod c2c;
pub mod call;
mod call_loop;
pub mod ctx;
pub mod fault;
pub mod ipc;
pub mod mem;
pub mod mmap;
pub mod noise;
pub mod pattern;
pub mod rpc;
pub mod scratch;
pub mod stat;
pub mod syscall;
pub mod workset;

use crate::engine::checks;
use crate::model::Evidence;

/// The verdict of a single-thread probe: it ran where it was pinned, and it entered the
/// kernel (or stayed out of it) as `expect_kernel` says. Too little CPU time to tell fails
/// and says so (a longer --budget lets it decide); rounds spread across a run are judged
/// again on their pooled evidence (engine::merge).
pub fn single_thread_verdict(
    ev: &Evidence,
    expect_kernel: bool,
) -> crate::engine::measure::Verdict {
    let mut checks = vec![checks::placement(&ev.cpus)];
    let mut warnings = Vec::new();
    checks.push(checks::kernel_entry(ev, expect_kernel));
    checks::add_occupancy(ev, &mut checks, &mut warnings);
    (checks, warnings)
}

/// The last system call's failure as an environment error: "`what`: the OS's words" (errno
/// read before `what` is formatted).
pub fn os_error(what: impl std::fmt::Display) -> crate::error::Error {
    let e = std::io::Error::last_os_error();
    crate::error::Error::env(format!("{what}: {e}"))
}

/// How participants hold their CPU: [`checks::Holding::MaySleep`] where they may block
/// (I/O, cross-CPU wake-ups), else continuously.
pub fn holding(may_sleep: bool) -> checks::Holding {
    if may_sleep {
        checks::Holding::MaySleep
    } else {
        checks::Holding::Continuous
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
            .find(|c| crate::report::checks::name(c) == "kernel share of CPU time")
            .unwrap();
        assert!(
            !k.ok && crate::report::checks::observed(k).starts_with("not enough time to check"),
            "{k:?}"
        );
        ev.rusage.total.stime_us = 60_000;
        let (c, _) = single_thread_verdict(&ev, true);
        assert!(
            c.iter()
                .find(|c| crate::report::checks::name(c) == "kernel share of CPU time")
                .unwrap()
                .ok
        );
        // ... and fails when a loop that should enter the kernel did not.
        let (c, _) = single_thread_verdict(&ev, false);
        assert!(
            !c.iter()
                .find(|c| crate::report::checks::name(c) == "kernel share of CPU time")
                .unwrap()
                .ok
        );
    }
}
