//! Declared expectations checked against evidence. Each check records what was expected,
//! what was observed and whether they agree; one failed check makes a measurement invalid.

use crate::model::{
    Bound, Check, CheckKind, CpuAccount, Evidence, Misplaced, Num, OtherSeen, OtherTasks,
    Placement, Reading, Remark, RemarkKind, SwitchSource, Unseen,
};

/// A probe's check named `name`: observed within ±`tol` (fraction) of `expected`.
pub fn near(name: &str, expected: f64, tol: f64, observed: f64) -> Check {
    Check::near(CheckKind::Named, expected, tol, observed).named(name)
}

/// A probe's check named `name`: observed ≤ limit.
pub fn at_most(name: &str, limit: f64, observed: f64) -> Check {
    Check::at_most(CheckKind::Named, limit, observed).named(name)
}

/// A probe's check named `name`: observed ≥ limit.
pub fn at_least(name: &str, limit: f64, observed: f64) -> Check {
    Check::at_least(CheckKind::Named, limit, observed).named(name)
}

/// Every participant that was pinned was seen on a requested CPU at start and end.
pub fn placement(placements: &[Placement]) -> Check {
    let mut bad = Vec::new();
    let mut seen = Vec::new();
    for p in placements.iter().filter(|p| !p.requested.is_empty()) {
        for (at_end, cpu) in [(false, p.start), (true, p.end)] {
            match cpu {
                Some(c) if p.requested.contains(&c) => seen.push(c),
                cpu => bad.push(Misplaced {
                    role: p.role.clone(),
                    cpu,
                    at_end,
                }),
            }
        }
    }
    seen.sort_unstable();
    seen.dedup();
    let requested: Vec<usize> = {
        let mut r: Vec<usize> = placements
            .iter()
            .flat_map(|p| p.requested.iter().copied())
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    };
    let ok = bad.is_empty();
    Check::new(
        CheckKind::Placement,
        Bound::OnCpus(requested),
        if ok {
            Reading::Cpus(seen)
        } else {
            Reading::Misplaced(bad)
        },
        ok,
    )
}

/// All participants were seen on one and the same CPU (same-core probes).
pub fn same_cpu(placements: &[Placement]) -> Check {
    let mut seen: Vec<usize> = placements
        .iter()
        .flat_map(|p| [p.start, p.end])
        .flatten()
        .collect();
    seen.sort_unstable();
    seen.dedup();
    let ok = seen.len() == 1;
    Check::new(CheckKind::SameCpu, Bound::Kind, Reading::Cpus(seen), ok)
}

/// How far above 100% the participants' CPU time may read before the window itself is in
/// doubt. The edges are read microseconds apart (CPU clocks, then the wall clock), which on
/// windows of a millisecond or more is well under this.
pub const WINDOW_TOLERANCE: f64 = 0.02;

/// CPU time one participant's reading may add at a window's edges: the clock is sampled
/// inside a system call whose exit (opening edge) and entry (closing edge) are the caller's
/// CPU time but outside the wall clock's window: a few µs each, up to about 5. The error this check exists for is a stale reading, off by up to a
/// scheduler tick (milliseconds), which 10 µs cannot hide.
pub const READ_SLACK_NS: u64 = 10_000;

/// The share of CPU that must be the participants' for a figure to count: a competitor taking
/// more than about 5% of the participants' CPU fails it.
pub const MIN_OCCUPANCY: f64 = 0.95;

/// The largest share of windows that may be left out of the occupancy because a participant
/// was still runnable at an edge. The windows a competitor ran in are the ones where a
/// partner is kept runnable, so leaving many of them out would hide the competitor. On a
/// quiet machine none are left out.
///
pub const MAX_LEFT_OUT: f64 = 0.10;

/// The largest run-queue wait (share of wall time) a single participant may see: time it
/// wanted the CPU and something else had it.
pub const MAX_RUN_DELAY: f64 = 0.05;

/// Whether the participants are expected to hold their CPU for the whole window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holding {
    /// They run or hand the CPU to each other (a ping-pong on one CPU, a loop): any gap is
    /// someone else's time.
    Continuous,
    /// They may block (I/O of a major fault, a sleep): gaps are expected, only run-queue wait
    /// is someone else's.
    MaySleep,
}

/// The occupancy checks of one measurement:
/// - "CPU time within the window": the participants cannot have run longer than the window
///   on the CPUs they were pinned to; more is a measurement window error, never a pass;
/// - "CPU held by participants" ([`Holding::Continuous`]: they run, hand the CPU to each
///   other on one CPU, or spin on several): at least [`MIN_OCCUPANCY`] of the wall time per
///   pinned CPU;
/// - "run-queue wait" (one participant): at most [`MAX_RUN_DELAY`] of the wall time.
///
/// Participants that block on several CPUs ([`Holding::MaySleep`]) idle while they wait for
/// each other's wake-ups, so the held share says nothing there; a warning says a competitor
/// is not visible that way.
pub fn occupancy_checks(ev: &Evidence, holding: Holding) -> (Vec<Check>, Vec<Remark>) {
    let mut checks = Vec::new();
    let mut warnings = Vec::new();
    if let Some(c) = unjudged(ev) {
        checks.push(c);
        return (checks, warnings);
    }
    // Present: `unjudged` returned its check when it is not.
    let Some(o) = ev.occupancy.as_ref() else {
        return (checks, warnings);
    };
    let cpus = o.cpus.max(1);
    let known_exact = o.windows > 0;
    // 2% plus the reading's own cost (≤ 10 µs per participant and window), which matters
    // only for windows of tens of µs (a cached-file fault round).
    let slack = (READ_SLACK_NS * o.exact_windows.max(1) * ev.cpus.len().max(1) as u64) as f64
        / (o.wall_ns.max(1) as f64 * cpus as f64);
    let limit = 1.0 + WINDOW_TOLERANCE + slack;
    // Windows whose edges found a participant runnable are left out; when most are, the rest
    // are a biased choice (the windows nobody competed in), and that itself says others
    // held the CPU.
    if known_exact
        && (o.windows - o.exact_windows.min(o.windows)) as f64 > MAX_LEFT_OUT * o.windows as f64
    {
        checks.push(Check::new(
            CheckKind::CpuLeftOut,
            Bound::AtLeast(1.0 - MAX_LEFT_OUT),
            Reading::Values(vec![
                Num::one(o.exact_windows as f64),
                Num::one(o.windows as f64),
            ]),
            false,
        ));
    }
    checks.push(Check::at_most(CheckKind::CpuTimeInWindow, limit, o.share));
    // Older runs (no window count) read run-queue wait over the whole wall time.
    let delay_wall = if o.windows == 0 {
        o.wall_ns
    } else {
        o.delay_wall_ns
    };
    // Per participant: two tasks waiting at once would otherwise read above 100%.
    let delay = o.run_delay_ns as f64 / (delay_wall.max(1) as f64 * ev.cpus.len().max(1) as f64);
    let one_cpu = o.cpus <= 1;
    // Held per pinned CPU: participants that run or spin (one CPU, or polling on several)
    // hold every CPU they are pinned to.
    if holding == Holding::Continuous {
        held_throughout(o.share, delay, &mut checks, &mut warnings);
    }
    if ev.cpus.len() == 1 && delay_wall > 0 {
        checks.push(Check::at_most(
            CheckKind::RunQueueWait,
            MAX_RUN_DELAY,
            delay,
        ));
    }
    if let Some(others) = &o.others {
        checks.push(others_check(others));
    }
    if !one_cpu && holding == Holding::MaySleep {
        warnings.push(Remark::sleeping_participants(cpus, o.share));
    }
    if known_exact && o.exact_windows < o.windows {
        warnings.push(Remark::occupancy_partial(o.exact_windows, o.windows));
    }
    (checks, warnings)
}

/// The failed check when the participants' CPU time cannot be judged at all: unreadable, or
/// read exactly at no window's edge.
fn unjudged(ev: &Evidence) -> Option<Check> {
    let Some(o) = ev.occupancy.as_ref() else {
        return Some(Check::new(
            CheckKind::CpuUnreadable,
            Bound::Kind,
            Reading::Values(Vec::new()),
            false,
        ));
    };
    (o.windows > 0 && o.exact_windows == 0).then(|| {
        Check::new(
            CheckKind::CpuNeverExact,
            Bound::Kind,
            Reading::value(o.windows as f64),
            false,
        )
    })
}

/// The check of participants that run or spin (one CPU, or polling on several): they hold
/// every CPU they are pinned to, so a share below [`MIN_OCCUPANCY`] means others ran in
/// their place; a smaller gap is said as a warning.
fn held_throughout(share: f64, delay: f64, checks: &mut Vec<Check>, warnings: &mut Vec<Remark>) {
    let ok = share >= MIN_OCCUPANCY;
    checks.push(Check::new(
        CheckKind::CpuHeld,
        Bound::AtLeast(MIN_OCCUPANCY),
        Reading::Values(vec![Num::one(share), Num::one(delay)]),
        ok,
    ));
    if !ok {
        warnings.push(Remark::competitor_ran((1.0 - share).max(0.0)));
    } else if share < 0.98 {
        warnings.push(Remark::competitor_held(1.0 - share));
    }
}

/// The largest share of the participants' CPUs' time that other tasks may take over a
/// measurement (the kernel's own threads included): as [`MIN_OCCUPANCY`] leaves them.
pub const MAX_OTHERS: f64 = 1.0 - MIN_OCCUPANCY;

/// Other tasks on the participants' CPUs, at any priority: a user task that stayed runnable
/// there is a competitor however small its share (a `SCHED_IDLE` or `nice 19` loop
/// takes little time and still moves the figure by tens of percent: every wake-up lands on
/// a busy CPU); all others together may take at most [`MAX_OTHERS`].
pub fn others_check(o: &OtherTasks) -> Check {
    let share = o.share();
    let of_span = |ns: u64| ns as f64 / (o.span_ns.max(1) as f64 * o.cpus.max(1) as f64);
    let seen = |t: &crate::model::OtherTask| OtherSeen {
        tid: t.tid,
        comm: t.comm.clone(),
        policy: t.policy,
        nice: t.nice,
        share: Num::one(of_span(t.oncpu_ns)),
    };
    let competitors: Vec<&crate::model::OtherTask> =
        o.tasks.iter().filter(|t| t.competes()).collect();
    let most = match (competitors.first(), o.tasks.first()) {
        (None, Some(t)) if t.oncpu_ns > 0 => Some(seen(t)),
        _ => None,
    };
    let (unseen, unseen_ok) = unseen_time(o);
    Check::new(
        CheckKind::OtherTasks,
        Bound::AtMost(MAX_OTHERS),
        Reading::Others {
            share: Num::one(share),
            competitors: competitors.iter().take(3).map(|t| seen(t)).collect(),
            more: competitors.len().saturating_sub(3),
            most,
            unseen,
        },
        competitors.is_empty() && share <= MAX_OTHERS && unseen_ok,
    )
}

/// The time of tasks that came and went, as the check reads it, and whether it passes: the
/// others seen and the time no task seen took may together take at most [`MAX_OTHERS`] of
/// the CPUs' time plus the readings' allowance. Where the allowance alone is more than that
/// limit (a short span: /proc/stat counts 10 ms ticks) only a figure above both fails and
/// the rest is not judged; an unreadable /proc/stat passes, said.
fn unseen_time(o: &OtherTasks) -> (Option<Unseen>, bool) {
    match &o.account {
        None => (None, true),
        Some(CpuAccount::Unreadable) => (Some(Unseen::Unreadable), true),
        Some(CpuAccount::Counted(a)) => {
            let limit = MAX_OTHERS * a.span_ns as f64 * a.cpus.len().max(1) as f64;
            let allowance = a.allowance_ns as f64;
            let over = (o.oncpu_ns + a.unseen_ns()) as f64 > limit + allowance;
            let ms = |ns: f64| Num::one(ns / 1e6);
            let reading = Unseen::Took {
                cpus: a.cpus.clone(),
                ms: ms(a.unseen_ns() as f64),
                allowance_ms: ms(allowance),
                judged: over || allowance <= limit,
            };
            (Some(reading), !over)
        }
    }
}

/// The names of the occupancy checks: the ones a test on a shared machine may see fail
/// (others really held the CPU), as opposed to a probe's own expectations.
pub fn contested(c: &Check) -> bool {
    match c.kind {
        CheckKind::CpuHeld
        | CheckKind::CpuUnreadable
        | CheckKind::CpuNeverExact
        | CheckKind::CpuLeftOut
        | CheckKind::RunQueueWait
        | CheckKind::OtherTasks => true,
        // A version 1 check, by the names those checks had.
        CheckKind::Legacy => matches!(
            c.subject.as_str(),
            "CPU held by participants" | "run-queue wait" | "other tasks on the participants' CPUs"
        ),
        _ => false,
    }
}

/// CPU time the kernel-entry check needs: procfs and getrusage split user and system time by
/// clock ticks (4 ms at HZ=250), so a shorter window cannot tell.
pub const KERNEL_SHARE_MIN_CPU_US: u64 = 50_000;

/// The system share that tells a loop in the kernel from one in user space.
const KERNEL_SHARE_LIMIT: f64 = 0.2;

/// Share of the participants' CPU time spent in the kernel, if enough time was accounted.
pub fn kernel_share(ev: &Evidence) -> Option<f64> {
    let t = &ev.rusage.total;
    let cpu = t.utime_us + t.stime_us;
    (cpu >= KERNEL_SHARE_MIN_CPU_US).then(|| t.stime_us as f64 / cpu as f64)
}

/// Did the measured loop enter the kernel (`expect_kernel`) or stay in user space? With
/// too little CPU time to tell the check fails and says so, never disappears.
pub fn kernel_entry(ev: &Evidence, expect_kernel: bool) -> Check {
    let Some(share) = kernel_share(ev) else {
        let t = &ev.rusage.total;
        let bound = if expect_kernel {
            Bound::AtLeast(KERNEL_SHARE_LIMIT)
        } else {
            Bound::AtMost(KERNEL_SHARE_LIMIT)
        };
        let ms = (t.utime_us + t.stime_us) as f64 / 1000.0;
        return Check::new(
            CheckKind::KernelShare,
            bound,
            Reading::TooShort(Num::one(ms)),
            false,
        );
    };
    if expect_kernel {
        Check::at_least(CheckKind::KernelShare, KERNEL_SHARE_LIMIT, share)
    } else {
        Check::at_most(CheckKind::KernelShare, KERNEL_SHARE_LIMIT, share)
    }
}

/// The remark a measurement's own verdict supports when a loop meant to stay in user space
/// entered the kernel: only from a kernel-share check that failed on evidence enough to
/// decide (a window too short to decide says nothing about the clocksource), so the remark
/// never contradicts the verdict. Called on each call's checks and again on the merged ones.
pub fn entered_kernel(checks: &[Check], ev: &Evidence) -> Option<Remark> {
    checks.iter().find(|c| {
        c.kind == CheckKind::KernelShare
            && matches!(c.bound, Bound::AtMost(_))
            && !c.ok
            && !undecided(c)
    })?;
    kernel_share(ev).map(Remark::entered_kernel)
}

/// Whether a remark is the kernel-entry one (of this version, or a version 1 sentence).
pub fn is_entered_kernel(r: &Remark) -> bool {
    r.kind == RemarkKind::EnteredKernel
        || (r.is_legacy() && r.subject.starts_with("the loop entered the kernel"))
}

/// Whether a check failed only because its window was too short to decide.
pub fn undecided(c: &Check) -> bool {
    !c.ok && matches!(c.reading, Reading::TooShort(_))
}

/// The kernel-entry check judged again on `ev` (the pooled evidence of all rounds), in the
/// direction `c` (any round's kernel-entry check) expected. None for any other check.
pub fn kernel_entry_again(c: &Check, ev: &Evidence) -> Option<Check> {
    (c.kind == CheckKind::KernelShare)
        .then(|| kernel_entry(ev, matches!(c.bound, Bound::AtLeast(_))))
}

#[cfg(test)]
pub fn held_occupancy() -> Option<crate::model::Occupancy> {
    Some(crate::model::Occupancy {
        wall_ns: 1_000_000,
        oncpu_ns: 1_000_000,
        share: 1.0,
        delay_wall_ns: 1_000_000,
        windows: 1,
        exact_windows: 1,
        cpus: 1,
        ..Default::default()
    })
}

/// Push the occupancy checks of participants that hold their CPU continuously.
pub fn add_occupancy(ev: &Evidence, checks: &mut Vec<Check>, warnings: &mut Vec<Remark>) {
    add_occupancy_with(ev, Holding::Continuous, checks, warnings);
}

/// Push the occupancy checks for the given expectation.
pub fn add_occupancy_with(
    ev: &Evidence,
    holding: Holding,
    checks: &mut Vec<Check>,
    warnings: &mut Vec<Remark>,
) {
    let (c, w) = occupancy_checks(ev, holding);
    checks.extend(c);
    warnings.extend(w);
}

/// Context switches per raw iteration, summed over participants: from the perf event where
/// supported, else from rusage (voluntary + involuntary).
pub fn switches_per_op(ev: &Evidence) -> (f64, SwitchSource) {
    if let Some(per) = ev
        .events
        .get("context-switches")
        .filter(|e| e.supported)
        .and_then(|e| e.per_op)
    {
        return (per, SwitchSource::Perf);
    }
    let it = ev.rusage.iterations.max(1) as f64;
    (
        (ev.rusage.total.nvcsw + ev.rusage.total.nivcsw) as f64 / it,
        SwitchSource::Rusage,
    )
}

/// A probe's check named `name` on context switches per operation: within ±`tol` of
/// `expected`, the reading saying where the count comes from.
pub fn switches_near(name: &str, expected: f64, tol: f64, ev: &Evidence) -> Check {
    let (per_op, _) = switches_per_op(ev);
    Check {
        reading: switches_reading(ev, 3),
        ..near(name, expected, tol, per_op)
    }
}

/// The reading of context switches per operation, to `digits` digits.
pub fn switches_reading(ev: &Evidence, digits: u8) -> Reading {
    let (per_op, source) = switches_per_op(ev);
    Reading::Switches {
        per_op: Num::one(per_op),
        source,
        digits,
        per_sample: None,
        split: None,
    }
}

/// The "no CPU migrations" check. The perf count is the evidence; but when every participant
/// was pinned to a single CPU (its affinity mask read back as that one CPU at the first
/// window and at the end) and was seen on it at start and end, a non-zero count cannot be
/// a move between CPUs (the kernel may count a re-queue on the same CPU, seen here under
/// heavy parallel load), so the check then rests on placement and says what perf counted.
pub fn no_migrations(ev: &Evidence) -> Check {
    let counted = migrations(ev);
    let pinned_and_stayed = !ev.cpus.is_empty()
        && ev.cpus.iter().all(|p| {
            p.affinity_held
                && p.requested.len() == 1
                && p.start == Some(p.requested[0])
                && p.end == Some(p.requested[0])
        });
    let mut c = Check::at_most(CheckKind::CpuMigrations, 0.0, counted);
    if counted > 0.0 && pinned_and_stayed {
        c.ok = true;
    }
    c
}

/// CPU migrations during the windows: perf event where supported, else placement changes.
pub fn migrations(ev: &Evidence) -> f64 {
    if let Some(t) = ev
        .events
        .get("cpu-migrations")
        .filter(|e| e.supported)
        .and_then(|e| e.total)
    {
        return t;
    }
    ev.cpus
        .iter()
        .filter(|p| p.start.is_some() && p.end.is_some() && p.start != p.end)
        .count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OtherTask;

    const OTHER_TASKS: &str = "other tasks on the participants' CPUs";

    #[test]
    fn the_entered_kernel_warning_follows_a_decided_verdict_only() {
        let mut ev = Evidence::default();
        // A window too short to decide: the check fails, the warning does not fire.
        ev.rusage.total.stime_us = 10_000;
        let undecided_check = kernel_entry(&ev, false);
        assert!(undecided(&undecided_check));
        assert_eq!(entered_kernel(&[undecided_check], &ev), None);
        // All in user space: passes, no warning.
        ev.rusage.total.stime_us = 0;
        ev.rusage.total.utime_us = 90_000;
        let stayed = kernel_entry(&ev, false);
        assert!(stayed.ok);
        assert_eq!(entered_kernel(&[stayed], &ev), None);
        // Decidedly in the kernel: the verdict fails and the warning says so.
        ev.rusage.total.stime_us = 60_000;
        let entered = kernel_entry(&ev, false);
        assert!(!entered.ok && !undecided(&entered));
        let w = entered_kernel(&[entered], &ev).unwrap();
        assert!(is_entered_kernel(&w));
        let w = crate::report::remarks::words(&w);
        assert!(
            w.starts_with("the loop entered the kernel") && w.contains("40% system time"),
            "{w}"
        );
        // A loop meant to enter the kernel never gets it.
        ev.rusage.total.stime_us = 0;
        assert_eq!(entered_kernel(&[kernel_entry(&ev, true)], &ev), None);
    }

    #[test]
    fn kernel_entry_is_judged_again_on_pooled_rounds() {
        let mut round = Evidence::default();
        round.rusage.total.stime_us = 20_000;
        round.rusage.total.utime_us = 10_000;
        let c = kernel_entry(&round, true);
        assert!(undecided(&c), "{c:?}");
        // Three such rounds pooled: 90 ms, two thirds in the kernel.
        let mut pooled = Evidence::default();
        pooled.rusage.total.stime_us = 60_000;
        pooled.rusage.total.utime_us = 30_000;
        let again = kernel_entry_again(&c, &pooled).unwrap();
        assert!(again.ok && !undecided(&again), "{again:?}");
        // The direction is kept: a loop expected to stay in user space fails on it.
        let stay = kernel_entry(&round, false);
        assert!(!kernel_entry_again(&stay, &pooled).unwrap().ok);
        // Other checks are not judged again.
        assert!(kernel_entry_again(&at_most("x", 1.0, 2.0), &pooled).is_none());
    }

    fn placed(role: &str, req: usize, start: usize, end: usize) -> Placement {
        Placement {
            role: role.into(),
            pid: 1,
            tid: 1,
            requested: vec![req],
            start: Some(start),
            end: Some(end),
            affinity_held: true,
        }
    }

    #[test]
    fn near_and_bounds() {
        assert!(near("x", 2.0, 0.05, 2.08).ok);
        assert!(!near("x", 2.0, 0.05, 2.2).ok);
        assert!(!near("x", 2.0, 0.05, 0.0).ok);
        assert!(at_most("m", 0.0, 0.0).ok);
        assert!(!at_most("m", 0.0, 1.0).ok);
        assert!(at_least("f", 1.0, 3.0).ok);
    }

    #[test]
    fn placement_fails_when_a_partner_ran_elsewhere() {
        let ok = placement(&[placed("parent", 0, 0, 0), placed("child", 0, 0, 0)]);
        assert!(ok.ok, "{ok:?}");
        let bad = placement(&[placed("parent", 0, 0, 0), placed("child", 0, 1, 1)]);
        assert!(!bad.ok);
        assert!(crate::report::checks::observed(&bad).contains("child on CPU 1"));
    }

    #[test]
    fn same_cpu_fails_across_cores() {
        assert!(same_cpu(&[placed("a", 0, 0, 0), placed("b", 0, 0, 0)]).ok);
        // Each on its own requested CPU: placement passes, same-CPU must not.
        let split = [placed("a", 0, 0, 0), placed("b", 1, 1, 1)];
        assert!(placement(&split).ok);
        let c = same_cpu(&split);
        assert!(!c.ok);
        assert_eq!(crate::report::checks::observed(&c), "CPU 0-1");
    }

    fn occ(share: f64, delay: f64, cpus: usize) -> Option<crate::model::Occupancy> {
        Some(crate::model::Occupancy {
            wall_ns: 1_000_000,
            oncpu_ns: (share * 1e6 * cpus as f64) as u64,
            run_delay_ns: (delay * 1e6 * cpus as f64) as u64,
            share,
            delay_wall_ns: 1_000_000,
            windows: 10,
            exact_windows: 10,
            cpus,
            method: String::new(),
            others: None,
        })
    }

    fn one_participant() -> Evidence {
        Evidence {
            cpus: vec![placed("a", 0, 0, 0)],
            ..Default::default()
        }
    }

    fn failed(checks: &[Check]) -> Vec<String> {
        checks
            .iter()
            .filter(|c| !c.ok)
            .map(crate::report::checks::name)
            .collect()
    }

    /// Other tasks on CPU 1 over 979 ms, as read around a ctx.pipe run there.
    fn others(loop_ns: u64, runnable: bool, nice: i32) -> crate::model::OtherTasks {
        let task = |tid: i32, comm: &str, kernel: bool, oncpu_ns: u64, runnable: bool| OtherTask {
            pid: tid,
            tid,
            comm: comm.into(),
            policy: if nice == 0 {
                crate::model::SchedPolicy::Idle
            } else {
                crate::model::SchedPolicy::Other
            },
            nice,
            kernel,
            oncpu_ns,
            runnable,
        };
        let mut tasks = vec![
            task(22, "ksoftirqd/1", true, 400_000, true),
            task(26331, "sh", false, loop_ns, runnable),
        ];
        OtherTask::rank(&mut tasks);
        crate::model::OtherTasks {
            span_ns: 979_000_000,
            cpus: 1,
            oncpu_ns: 400_000 + loop_ns,
            tasks,
            account: None,
        }
    }

    #[test]
    fn a_low_priority_loop_on_the_cpu_fails_the_figure_and_is_named() {
        let mut ev = one_participant();
        ev.occupancy = occ(0.99, 0.0, 1);
        // The SCHED_IDLE loop: 37 ms of 979, runnable at both readings.
        ev.occupancy.as_mut().unwrap().others = Some(others(37_000_000, true, 0));
        for holding in [Holding::Continuous, Holding::MaySleep] {
            let (c, _) = occupancy_checks(&ev, holding);
            assert_eq!(failed(&c), [OTHER_TASKS]);
            let c = c
                .iter()
                .find(|c| crate::report::checks::name(c) == OTHER_TASKS)
                .unwrap();
            assert!(
                crate::report::checks::observed(c)
                    .starts_with("runnable there throughout: pid 26331 (sh, SCHED_IDLE) 3.8%"),
                "{c:?}"
            );
            assert!(contested(c));
        }
        // A loop that got no time at all still wanted the CPU throughout.
        assert!(!others_check(&others(0, true, 0)).ok);
        // A nice 19 loop that got almost nothing is still a competitor.
        let c = others_check(&others(90_000, true, 19));
        assert!(
            !c.ok && crate::report::checks::observed(&c).contains("(sh, SCHED_OTHER nice 19)"),
            "{c:?}"
        );
        // The same task, not runnable throughout (it woke now and then): 3.8% in all passes,
        // and is said.
        let c = others_check(&others(37_000_000, false, 0));
        assert!(
            c.ok && crate::report::checks::observed(&c).starts_with("3.8% (most: pid 26331"),
            "{c:?}"
        );
        // Only the kernel's own thread: passes.
        let c = others_check(&others(0, false, 0));
        assert!(
            c.ok && crate::report::checks::observed(&c)
                .starts_with("0.0% (most: pid 22 (ksoftirqd/1"),
            "{c:?}"
        );
        // Many short tasks that add up to more than 5%: fails.
        let c = others_check(&others(60_000_000, false, 0));
        assert!(!c.ok, "{c:?}");
        // An older run without the reading: no such check.
        ev.occupancy.as_mut().unwrap().others = None;
        let (c, _) = occupancy_checks(&ev, Holding::Continuous);
        assert!(!c
            .iter()
            .any(|c| crate::report::checks::name(c) == OTHER_TASKS));
    }

    #[test]
    fn other_tasks_of_rounds_add_up() {
        let mut a = others(37_000_000, true, 0);
        a.absorb(&others(10_000_000, false, 0));
        assert_eq!((a.span_ns, a.oncpu_ns), (1_958_000_000, 47_800_000));
        let sh = a.tasks.iter().find(|t| t.tid == 26331).unwrap();
        assert!(sh.runnable && sh.oncpu_ns == 47_000_000);
        assert_eq!(a.tasks.len(), 2);
    }

    #[test]
    fn occupancy_fails_when_others_held_the_cpu() {
        let mut ev = one_participant();
        ev.occupancy = occ(0.99, 0.0, 1);
        let (c, w) = occupancy_checks(&ev, Holding::Continuous);
        assert!(failed(&c).is_empty() && w.is_empty(), "{c:?}");
        ev.occupancy = occ(0.9, 0.01, 1);
        let (c, w) = occupancy_checks(&ev, Holding::Continuous);
        assert_eq!(failed(&c), ["CPU held by participants"]);
        assert!(
            crate::report::remarks::words(&w[0]).contains("10%"),
            "{w:?}"
        );
        ev.occupancy = occ(0.96, 0.0, 1);
        let (c, w) = occupancy_checks(&ev, Holding::Continuous);
        assert!(
            failed(&c).is_empty() && crate::report::remarks::words(&w[0]).contains("4.0%"),
            "{w:?}"
        );
    }

    #[test]
    fn occupancy_above_100_percent_is_a_window_error() {
        let mut ev = one_participant();
        ev.occupancy = occ(1.15, 0.0, 1);
        let (c, _) = occupancy_checks(&ev, Holding::Continuous);
        assert_eq!(failed(&c), ["CPU time within the window"]);
        assert!(crate::report::checks::observed(&c[0]).contains("measurement window error"));
        // Within the stated tolerance it passes.
        ev.occupancy = occ(1.01, 0.0, 1);
        let (c, _) = occupancy_checks(&ev, Holding::Continuous);
        assert!(failed(&c).is_empty());
        // ... and is never printed as more than 100% held.
        assert!(
            c.iter()
                .filter(|c| crate::report::checks::name(c).starts_with("CPU"))
                .all(|c| crate::report::checks::observed(c).starts_with("100% (read 101.0%")),
            "{c:?}"
        );
    }

    #[test]
    fn run_queue_wait_fails_a_single_participant() {
        let mut ev = one_participant();
        ev.occupancy = occ(0.6, 0.2, 1);
        let (c, _) = occupancy_checks(&ev, Holding::MaySleep);
        assert_eq!(failed(&c), ["run-queue wait"]);
        ev.occupancy = occ(0.6, 0.01, 1);
        assert!(failed(&occupancy_checks(&ev, Holding::MaySleep).0).is_empty());
    }

    #[test]
    fn unreadable_or_never_exact_occupancy_fails() {
        let mut ev = one_participant();
        let (c, _) = occupancy_checks(&ev, Holding::Continuous);
        assert_eq!(failed(&c), ["CPU held by participants"]);
        ev.occupancy = occ(0.99, 0.0, 1);
        ev.occupancy.as_mut().unwrap().exact_windows = 0;
        let (c, _) = occupancy_checks(&ev, Holding::Continuous);
        assert!(
            crate::report::checks::observed(&c[0]).starts_with("0 of 10 windows"),
            "{c:?}"
        );
        assert!(!c[0].ok);
        // Many windows unreadable: the rest are the windows nobody competed in, not
        // evidence of a held CPU.
        ev.occupancy.as_mut().unwrap().exact_windows = 4;
        let (c, _) = occupancy_checks(&ev, Holding::Continuous);
        assert!(
            c.iter()
                .any(|c| !c.ok && crate::report::checks::observed(c).starts_with("4 of 10 windows")),
            "{c:?}"
        );
        // Two of ten left out is already too many; one of ten is within the allowance.
        ev.occupancy.as_mut().unwrap().exact_windows = 8;
        let (c, _) = occupancy_checks(&ev, Holding::Continuous);
        assert!(
            c.iter()
                .any(|c| !c.ok && crate::report::checks::observed(c).starts_with("8 of 10 windows")),
            "{c:?}"
        );
        ev.occupancy.as_mut().unwrap().exact_windows = 9;
        let (c, _) = occupancy_checks(&ev, Holding::Continuous);
        assert!(c.iter().all(|c| c.ok), "{c:?}");
    }

    #[test]
    fn several_cpus_check_only_the_window_and_say_so() {
        let mut ev = one_participant();
        ev.cpus.push(placed("b", 1, 1, 1));
        ev.occupancy = occ(0.31, 0.2, 2);
        let (c, w) = occupancy_checks(&ev, Holding::MaySleep);
        assert_eq!(c.len(), 1);
        assert!(
            c[0].ok && crate::report::remarks::words(&w[0]).contains("cannot tell a competitor"),
            "{w:?}"
        );
        ev.occupancy = occ(1.3, 0.0, 2);
        assert_eq!(
            failed(&occupancy_checks(&ev, Holding::MaySleep).0),
            ["CPU time within the window"]
        );
        // Partners that spin on two CPUs hold both: there the held share is the test.
        ev.occupancy = occ(0.6, 0.0, 2);
        assert_eq!(
            failed(&occupancy_checks(&ev, Holding::Continuous).0),
            ["CPU held by participants"]
        );
    }

    #[test]
    fn migrations_check_reconciles_perf_with_pinning() {
        let mut ev = Evidence {
            cpus: vec![placed("a", 1, 1, 1), placed("b", 1, 1, 1)],
            ..Default::default()
        };
        ev.events.insert(
            "cpu-migrations".into(),
            crate::model::EventReading {
                per_op: Some(0.01),
                total: Some(2.0),
                supported: true,
                ..Default::default()
            },
        );
        let c = no_migrations(&ev);
        assert!(
            c.ok && crate::report::checks::observed(&c).contains("perf counted 2"),
            "{c:?}"
        );
        // Unpinned (or moved) tasks: the perf count stands.
        // Pinning not verified (affinity not read at both ends): the perf count stands.
        ev.cpus[1].affinity_held = false;
        assert!(!no_migrations(&ev).ok);
        ev.cpus[1] = placed("b", 1, 0, 1);
        assert!(!no_migrations(&ev).ok);
        ev.cpus[1].requested = vec![0, 1];
        ev.cpus[1].start = Some(1);
        assert!(!no_migrations(&ev).ok);
    }

    #[test]
    fn switches_fall_back_to_rusage() {
        let mut ev = Evidence::default();
        ev.rusage.iterations = 100;
        ev.rusage.total.nvcsw = 150;
        ev.rusage.total.nivcsw = 50;
        assert_eq!(switches_per_op(&ev), (2.0, SwitchSource::Rusage));
        ev.events.insert(
            "context-switches".into(),
            crate::model::EventReading {
                per_op: Some(1.5),
                total: Some(150.0),
                supported: true,
                ..Default::default()
            },
        );
        assert_eq!(switches_per_op(&ev).0, 1.5);
    }
}
