//! The other tasks on the participants' CPUs: every task of the machine that /proc lists,
//! read once before the first window and once after the last, with those CPUs' busy time
//! from /proc/stat.
//!
//! Why: the participants' own CPU time says what they got, not who ran in their gaps. A
//! `SCHED_IDLE` or `nice 19` loop on a participant's CPU runs only while the participants
//! block, so their occupancy reads as held (or, on several CPUs, as the gaps they are
//! expected to leave), while every wake-up now lands on a busy CPU and the figure moves by
//! tens of percent. Its own run time (schedstat's first field, nanoseconds) and its state
//! (runnable at both readings: it wanted the CPU throughout) show it, at any priority, and
//! any user may read both. A task that started and exited in between is in neither
//! reading; the CPUs' busy time less what every task seen ran there shows its time
//! ([`account`]).

use crate::machine::parse::{parse_proc_stat, CpuTimes};
use crate::model::{BusyAccount, CpuAccount, OtherTask, OtherTasks, SchedPolicy};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;

/// PF_KTHREAD in the flags field of /proc/.../stat.
const PF_KTHREAD: u64 = 0x0020_0000;

/// One task as one reading saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub pid: i32,
    pub comm: String,
    pub state: char,
    /// The CPU it last ran on.
    pub cpu: usize,
    pub policy: SchedPolicy,
    pub nice: i32,
    pub kernel: bool,
    /// CPU time since it started (schedstat, else stat's clock ticks in ns).
    pub oncpu_ns: u64,
    /// `oncpu_ns` is stat's utime + stime: each truncated to a tick.
    pub in_ticks: bool,
}

/// One reading of every task: by thread id, with the wall time it was taken at, and the
/// CPUs' times.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub at_ns: u64,
    pub tasks: BTreeMap<i32, Seen>,
    /// This process's id: its threads are read for the CPUs' account, never named as others
    /// (the participants among them are accounted for by the recorder; the rest wait for
    /// them).
    pub own_pid: i32,
    /// /proc/stat (None: unreadable).
    pub stat: Option<StatAt>,
}

/// /proc/stat's CPU lines at one moment, in ticks of `tick_ns` (1/USER_HZ s).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatAt {
    pub at_ns: u64,
    pub tick_ns: u64,
    pub cpus: BTreeMap<usize, CpuTimes>,
}

impl StatAt {
    /// The CPU lines of `text`, read at `at_ns`; None when it has none.
    pub fn parse(at_ns: u64, text: &str, tick_ns: u64) -> Option<StatAt> {
        let cpus = parse_proc_stat(text);
        (!cpus.is_empty()).then_some(StatAt {
            at_ns,
            tick_ns,
            cpus,
        })
    }

    fn read() -> Option<StatAt> {
        let text = fs::read_to_string("/proc/stat").ok()?;
        StatAt::parse(crate::evidence::clock::now_ns(), &text, tick_ns())
    }
}

/// Parse a task's /proc/.../stat: state (3), flags (9), utime and stime (14, 15), nice (19),
/// processor (39), policy (41). Fields are counted after the last ')' (the name may hold
/// spaces and parentheses).
pub fn parse_stat(pid: i32, stat: &str) -> Option<Seen> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_string();
    let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    let field = |k: usize| f.get(k - 3).copied();
    let num = |k: usize| field(k).and_then(|s| s.parse::<u64>().ok());
    let ticks = num(14)? + num(15)?;
    Some(Seen {
        pid,
        comm,
        state: field(3)?.chars().next()?,
        cpu: num(39)? as usize,
        policy: SchedPolicy::from_number(num(41)?),
        nice: field(19)?.parse().ok()?,
        kernel: num(9)? & PF_KTHREAD != 0,
        oncpu_ns: ticks * tick_ns(),
        in_ticks: true,
    })
}

fn tick_ns() -> u64 {
    1_000_000_000 / super::interrupts::user_hz()
}

/// Every task /proc lists now, and /proc/stat: after the walk at the `opening` reading,
/// before it at the closing one, so that /proc/stat's span lies within every task's (a walk
/// takes milliseconds): what the tasks ran can only cover more than the CPUs' busy time,
/// never less, and the walks' own cost is outside it.
pub fn read(opening: bool) -> Reading {
    let stat = if opening { None } else { StatAt::read() };
    let own_pid = std::process::id() as i32;
    let mut tasks = BTreeMap::new();
    let procs = fs::read_dir("/proc").into_iter().flatten().flatten();
    for p in procs {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(threads) = fs::read_dir(p.path().join("task")) else {
            continue;
        };
        for t in threads.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let Some(mut seen) = fs::read_to_string(t.path().join("stat"))
                .ok()
                .and_then(|s| parse_stat(pid, &s))
            else {
                continue;
            };
            if let Some((ns, _)) = fs::read_to_string(t.path().join("schedstat"))
                .ok()
                .and_then(|s| super::cputime::parse_schedstat(&s))
            {
                seen.oncpu_ns = ns;
                seen.in_ticks = false;
            }
            tasks.insert(tid, seen);
        }
    }
    let at_ns = crate::evidence::clock::now_ns();
    Reading {
        at_ns,
        tasks,
        own_pid,
        stat: if opening { StatAt::read() } else { stat },
    }
}

/// What the tasks other than `participants` (thread ids) did on `cpus` between two
/// readings. A task counts when it was on one of `cpus` at both readings; one that started
/// in between counts all its CPU time when it is on one of them at the second; those CPUs'
/// time that no task seen took is in [`account`]. None when no CPU is given (unpinned
/// participants: there is no one CPU to watch) or the first reading saw no task at all (no
/// /proc).
pub fn between(
    before: &Reading,
    after: &Reading,
    cpus: &BTreeSet<usize>,
    participants: &[i32],
) -> Option<OtherTasks> {
    if cpus.is_empty() || before.tasks.is_empty() {
        return None;
    }
    let mut out = OtherTasks {
        span_ns: after.at_ns.saturating_sub(before.at_ns),
        cpus: cpus.len(),
        ..Default::default()
    };
    for (tid, a) in &after.tasks {
        if participants.contains(tid) || a.pid == after.own_pid {
            continue;
        }
        // A thread id reused by another process is another task.
        let b = before.tasks.get(tid).filter(|b| b.pid == a.pid);
        // On those CPUs at both readings: a task that moved between CPUs ran part of its
        // time elsewhere, which would count the CPUs' time more than once.
        let here = cpus.contains(&a.cpu) && b.is_none_or(|b| cpus.contains(&b.cpu));
        if !here {
            continue;
        }
        let ran = a.oncpu_ns.saturating_sub(b.map_or(0, |b| b.oncpu_ns));
        out.oncpu_ns += ran;
        out.tasks.push(OtherTask {
            pid: a.pid,
            tid: *tid,
            comm: a.comm.clone(),
            policy: a.policy,
            nice: a.nice,
            kernel: a.kernel,
            oncpu_ns: ran,
            runnable: a.state == 'R' && b.is_some_and(|b| b.state == 'R'),
        });
        OtherTask::rank(&mut out.tasks);
    }
    // Never more than the CPUs had (a task's run time is read stale by up to a tick).
    out.oncpu_ns = out
        .oncpu_ns
        .min(out.span_ns.saturating_mul(out.cpus as u64));
    out.account = Some(account(before, after, cpus));
    Some(out)
}

/// Ticks each CPU's busy time may be off by from the readings' resolution alone: user, nice
/// and system are each truncated to a tick at both readings (less than one tick each), and
/// the task running at the second reading has its run time read stale by up to the
/// kernel's tick (at most one USER_HZ tick at HZ ≥ 100).
pub const TICKS_PER_CPU: u64 = 4;

/// Deviations of the kernel's tick sampling allowed ([`allowance_ns`]).
pub const SAMPLING_SIGMAS: f64 = 3.0;

/// What busy time less known run time may be off by over `span_ns` on CPUs busy `busy_ns`
/// each, where /proc/stat counts ticks of `tick_ns`: [`TICKS_PER_CPU`] per CPU, plus the
/// kernel's sampling. Under tick-based accounting (most kernels) a CPU's user and system
/// time grow by a whole tick for whatever runs when the tick fires, so a CPU busy a
/// fraction p of N ticks is charged about N·p ± √(N·p·(1−p)) of them; [`SAMPLING_SIGMAS`]
/// deviations are allowed, taking the USER_HZ tick for the kernel's (HZ=100, the coarsest:
/// a faster tick only narrows it). A CPU busy throughout (or idle) is charged exactly.
pub fn allowance_ns(span_ns: u64, busy_ns: &[u64], tick_ns: u64) -> u64 {
    let tick = tick_ns.max(1) as f64;
    let n = span_ns as f64 / tick;
    let variance: f64 = busy_ns
        .iter()
        .map(|&b| {
            let p = (b as f64 / span_ns.max(1) as f64).clamp(0.0, 1.0);
            n * p * (1.0 - p)
        })
        .sum();
    TICKS_PER_CPU * tick_ns * busy_ns.len() as u64
        + (SAMPLING_SIGMAS * variance.sqrt() * tick) as u64
}

/// The busy time of `cpus` between the readings' /proc/stat (user + nice + system; irq,
/// softirq and steal kept apart: interrupt work and the hypervisor's, no competitor's)
/// against the run time of every task seen that may have run there: each one on those CPUs
/// at either reading (the participants, this process's threads and the others; one that
/// started in between counts all its time). What is left was taken by tasks no reading saw
/// there: ones that started and exited in between, ones that exited, or ones that passed
/// through from another CPU.
pub fn account(before: &Reading, after: &Reading, cpus: &BTreeSet<usize>) -> CpuAccount {
    let (Some(sb), Some(sa)) = (&before.stat, &after.stat) else {
        return CpuAccount::Unreadable;
    };
    let span_ns = sa.at_ns.saturating_sub(sb.at_ns);
    let tasks_part = |t: &CpuTimes| t.busy.saturating_sub(t.irq);
    let mut busy = Vec::new();
    let mut irq_ticks = 0;
    for c in cpus {
        let (Some(b), Some(a)) = (sb.cpus.get(c), sa.cpus.get(c)) else {
            return CpuAccount::Unreadable;
        };
        busy.push(tasks_part(a).saturating_sub(tasks_part(b)) * sa.tick_ns);
        irq_ticks += a.irq.saturating_sub(b.irq) + a.steal.saturating_sub(b.steal);
    }
    let mut known_ns = 0;
    // Tasks whose run time is read in ticks (no schedstat): utime and stime each truncated
    // at both readings, so less than 2 ticks off each.
    let mut in_ticks = 0;
    for (tid, a) in &after.tasks {
        let b = before.tasks.get(tid).filter(|b| b.pid == a.pid);
        if cpus.contains(&a.cpu) || b.is_some_and(|b| cpus.contains(&b.cpu)) {
            let ran = a.oncpu_ns.saturating_sub(b.map_or(0, |b| b.oncpu_ns));
            known_ns += ran;
            in_ticks += u64::from(ran > 0 && a.in_ticks);
        }
    }
    CpuAccount::Counted(BusyAccount {
        cpus: cpus.iter().copied().collect(),
        span_ns,
        busy_ns: busy.iter().sum(),
        irq_ns: irq_ticks * sa.tick_ns,
        known_ns,
        allowance_ns: allowance_ns(span_ns, &busy, sa.tick_ns) + 2 * in_ticks * sa.tick_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Check;

    /// A `chrt -i 0 taskset -c 1 sh -c 'while :; do :; done'` loop, as /proc showed it.
    const IDLE_LOOP: &str = "26331 (sh) R 26329 26329 8418 0 -1 4194304 286 0 0 0 5 0 0 0 \
        20 0 1 0 1140836 2654208 363 18446744073709551615 94614299209728 94614299286457 \
        140727334772320 0 0 0 0 6 65536 0 0 0 17 1 0 5 0 0 0 94614299315760 94614299320896 \
        94614794055680 140727334775485 140727334775511 140727334775511 140727334776812 0";
    /// ksoftirqd/1, asleep.
    const KTHREAD: &str = "22 (ksoftirqd/1) S 2 0 0 0 -1 69238848 0 0 0 0 14 196 0 0 20 0 1 \
        0 10 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 1 0 0 0 0 0 0 0 0 0 \
        0 0 0 0";

    fn reading(at_ns: u64, tasks: &[(i32, &str, u64)]) -> Reading {
        Reading {
            at_ns,
            tasks: tasks
                .iter()
                .map(|&(tid, stat, ns)| {
                    let mut s = parse_stat(tid, stat).unwrap();
                    s.oncpu_ns = ns;
                    s.in_ticks = false;
                    (tid, s)
                })
                .collect(),
            ..Reading::default()
        }
    }

    #[test]
    fn stat_gives_policy_nice_cpu_and_kernel_flag() {
        let s = parse_stat(4242, IDLE_LOOP).unwrap();
        assert_eq!(
            (s.state, s.cpu, s.policy, s.nice, s.kernel),
            ('R', 1, SchedPolicy::Idle, 0, false)
        );
        assert_eq!(s.comm, "sh");
        let k = parse_stat(21, KTHREAD).unwrap();
        assert!(k.kernel && k.state == 'S' && k.policy == SchedPolicy::Other);
        let odd = parse_stat(7, &IDLE_LOOP.replace("(sh)", "(a) R (b)")).unwrap();
        assert_eq!((odd.comm.as_str(), odd.cpu), ("a) R (b", 1));
        assert_eq!(parse_stat(1, "1 (x) R 1"), None);
        assert_eq!(parse_stat(1, "garbage"), None);
    }

    #[test]
    fn a_runnable_loop_on_the_cpu_is_named_and_others_are_not() {
        // Recorded around a ctx.pipe run on CPU 1: the idle loop ran 37 ms of 979.
        let before = reading(
            0,
            &[(4242, IDLE_LOOP, 100_000_000), (21, KTHREAD, 5_000_000)],
        );
        let after = reading(
            979_000_000,
            &[
                (4242, IDLE_LOOP, 137_000_000),
                (21, KTHREAD, 5_400_000),
                (
                    4300,
                    &IDLE_LOOP.replace(" 17 1 0 5 ", " 17 0 0 0 "),
                    9_000_000,
                ),
            ],
        );
        let cpus = BTreeSet::from([1]);
        // A task that moved from CPU 1 to CPU 0 ran part of its time elsewhere: not counted.
        let mut moved = after.clone();
        moved.tasks.get_mut(&21).unwrap().cpu = 0;
        assert_eq!(
            between(&before, &moved, &cpus, &[]).unwrap().oncpu_ns,
            37_000_000
        );
        let o = between(&before, &after, &cpus, &[]).unwrap();
        assert_eq!(o.oncpu_ns, 37_400_000, "the task on CPU 0 is not counted");
        assert_eq!(o.span_ns, 979_000_000);
        assert!(o.tasks[0].competes() && o.tasks[0].tid == 4242);
        assert!(!o.tasks[1].competes(), "a kernel thread is no competitor");
        // The same loop as a participant is not another task.
        let o = between(&before, &after, &cpus, &[4242]).unwrap();
        assert_eq!(o.oncpu_ns, 400_000);
        // A loop that started in between was not runnable at both readings.
        let o = between(&reading(0, &[(21, KTHREAD, 0)]), &after, &cpus, &[]).unwrap();
        assert!(!o.tasks.iter().any(|t| t.competes()));
        assert!(between(&before, &after, &BTreeSet::new(), &[]).is_none());
        assert!(between(&Reading::default(), &after, &cpus, &[]).is_none());
    }

    /// /proc/stat with CPU 0 idle and CPU 1's user, system, idle, irq, softirq and steal
    /// ticks (10 ms) as given; nice, iowait and guest 0.
    fn stat(at_ns: u64, cpu1: [u64; 6]) -> Option<StatAt> {
        let [user, system, idle, irq, softirq, steal] = cpu1;
        let text = format!(
            "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 10 0 10 {idle} 0 0 0 0 0 0\n\
             cpu1 {user} 0 {system} {idle} 0 {irq} {softirq} {steal} 0 0\nintr 1 2\n"
        );
        StatAt::parse(at_ns, &text, 10_000_000)
    }

    /// A loop on CPU 1 as the participant (tid 4242) that ran `ran_ns` of a `span_ns` that
    /// CPU 1 was busy for `busy_ticks` of (and one irq, softirq and steal tick besides), beside
    /// ksoftirqd's 0.4 ms: the other-tasks check of the span.
    fn span(span_ns: u64, busy_ticks: u64, ran_ns: u64) -> (OtherTasks, Check) {
        let mut before = reading(0, &[(4242, IDLE_LOOP, 0), (21, KTHREAD, 5_000_000)]);
        before.stat = stat(0, [1000, 500, 8000, 5, 5, 20]);
        let mut after = reading(
            span_ns,
            &[(4242, IDLE_LOOP, ran_ns), (21, KTHREAD, 5_400_000)],
        );
        let system = 500 + busy_ticks / 4;
        let user = 1000 + busy_ticks - busy_ticks / 4;
        after.stat = stat(span_ns, [user, system, 8000, 6, 6, 21]);
        let o = between(&before, &after, &BTreeSet::from([1]), &[4242]).unwrap();
        let c = crate::engine::checks::others_check(&o);
        (o, c)
    }

    fn counted(o: &OtherTasks) -> BusyAccount {
        match &o.account {
            Some(CpuAccount::Counted(a)) => a.clone(),
            a => panic!("not counted: {a:?}"),
        }
    }

    #[test]
    fn a_quiet_cpu_is_accounted_for_and_passes() {
        // 2 s on CPU 1, busy throughout (200 ticks): the participant ran 1.98 s, ksoftirqd
        // 0.4 ms; irq, softirq and steal are kept apart.
        let (o, c) = span(2_000_000_000, 200, 1_980_000_000);
        let a = counted(&o);
        assert_eq!(a.cpus, [1]);
        assert_eq!(a.busy_ns, 2_000_000_000);
        assert_eq!(a.irq_ns, 30_000_000);
        assert_eq!(a.known_ns, 1_980_400_000);
        assert_eq!(a.unseen_ns(), 19_600_000);
        // Busy throughout: no sampling error, 4 ticks of resolution.
        assert_eq!(a.allowance_ns, 40_000_000);
        assert!(c.ok, "{c:?}");
        let said = crate::report::checks::observed(&c);
        assert!(
            said.ends_with(", and tasks that came and went took 20 ms of CPU 1 (±40 ms)"),
            "{said}"
        );
    }

    #[test]
    fn a_loop_that_came_and_went_fails_the_check() {
        // The same 2 s, but the participant ran 1.38 s: 0.6 s (30%) went to a task that
        // started after the first reading and exited before the second.
        let (o, c) = span(2_000_000_000, 200, 1_380_000_000);
        assert_eq!(counted(&o).unseen_ns(), 619_600_000);
        assert!(
            o.tasks.iter().all(|t| !t.competes()),
            "no task seen competes"
        );
        assert!(!c.ok, "{c:?}");
        let said = crate::report::checks::observed(&c);
        assert!(
            said.contains("tasks that came and went took 620 ms of CPU 1 (±40 ms)"),
            "{said}"
        );
    }

    #[test]
    fn a_span_too_short_for_the_ticks_is_not_judged() {
        // 300 ms, busy throughout: 4 ticks (40 ms) of resolution are more than 5% (15 ms).
        let (o, c) = span(300_000_000, 30, 290_000_000);
        assert_eq!(counted(&o).unseen_ns(), 9_600_000);
        assert!(c.ok, "{c:?}");
        let said = crate::report::checks::observed(&c);
        assert!(
            said.contains("tasks that came and went: 10 ms of CPU 1, not judged"),
            "{said}"
        );
        // 30 ms of 300 (10%) is within the 15 ms limit plus the 40 ms: not judged either,
        // where a 2 s span would have failed it.
        let (_, c) = span(300_000_000, 30, 270_000_000);
        assert!(c.ok && crate::report::checks::observed(&c).contains("not judged"));
        // Above both, a short span fails too.
        let (_, c) = span(300_000_000, 30, 100_000_000);
        assert!(!c.ok, "{c:?}");
        assert!(crate::report::checks::observed(&c).contains("took 200 ms of CPU 1"));
    }

    #[test]
    fn rounds_sum_their_accounts_where_every_one_counted() {
        let (mut all, _) = span(2_000_000_000, 200, 1_980_000_000);
        let (round, _) = span(2_000_000_000, 200, 1_380_000_000);
        all.absorb(&round);
        let a = counted(&all);
        assert_eq!((a.span_ns, a.busy_ns), (4_000_000_000, 4_000_000_000));
        assert_eq!((a.unseen_ns(), a.allowance_ns), (639_200_000, 80_000_000));
        assert!(!crate::engine::checks::others_check(&all).ok);
        let mut unreadable = round.clone();
        unreadable.account = Some(CpuAccount::Unreadable);
        all.absorb(&unreadable);
        assert_eq!(all.account, Some(CpuAccount::Unreadable));
        let mut older = round;
        older.account = None;
        all.absorb(&older);
        assert_eq!(all.account, None);
    }

    #[test]
    fn a_half_busy_cpu_allows_for_the_kernels_tick_sampling() {
        // 10 s, busy half of it: 3 deviations of 500 ± 15.8 ticks besides the 4.
        assert_eq!(
            allowance_ns(10_000_000_000, &[5_000_000_000], 10_000_000),
            40_000_000 + 474_341_649
        );
        assert_eq!(
            allowance_ns(10_000_000_000, &[0, 0], 10_000_000),
            80_000_000
        );
    }

    #[test]
    fn tasks_that_moved_or_are_ours_are_known_and_an_unreadable_stat_is_said() {
        let mut before = reading(0, &[(4242, IDLE_LOOP, 0), (21, KTHREAD, 0)]);
        before.stat = stat(0, [1000, 500, 8000, 0, 0, 0]);
        before.own_pid = 4242;
        // ksoftirqd moved to CPU 0 and ran 0.5 s: it may have run that on CPU 1.
        let mut after = reading(1_000_000_000, &[(4242, IDLE_LOOP, 500_000_000)]);
        let mut moved = parse_stat(21, KTHREAD).unwrap();
        moved.cpu = 0;
        moved.oncpu_ns = 500_000_000;
        after.tasks.insert(21, moved);
        after.stat = stat(1_000_000_000, [1080, 520, 8000, 0, 0, 0]);
        after.own_pid = 4242;
        let o = between(&before, &after, &BTreeSet::from([1]), &[]).unwrap();
        assert_eq!(counted(&o).known_ns, 1_000_000_000);
        assert_eq!(counted(&o).unseen_ns(), 0);
        // Busy throughout: 4 ticks, and 2 for the task whose run time is read in ticks.
        assert_eq!(counted(&o).allowance_ns, 60_000_000);
        // This process's own loop is counted, never named (nor a competitor).
        assert!(o.tasks.is_empty(), "{:?}", o.tasks);
        // No /proc/stat at either reading: not counted, and the check says so.
        after.stat = None;
        let o = between(&before, &after, &BTreeSet::from([1]), &[]).unwrap();
        assert_eq!(o.account, Some(CpuAccount::Unreadable));
        let c = crate::engine::checks::others_check(&o);
        assert!(crate::report::checks::observed(&c)
            .ends_with("tasks that came and went: not counted (/proc/stat unreadable)"));
        // A CPU /proc/stat does not list: not counted.
        after.stat = stat(1_000_000_000, [1080, 520, 8000, 0, 0, 0]);
        let o = between(&before, &after, &BTreeSet::from([1, 7]), &[]).unwrap();
        assert_eq!(o.account, Some(CpuAccount::Unreadable));
    }

    #[test]
    fn this_machine_is_read() {
        for opening in [true, false] {
            let r = read(opening);
            assert!(!r.tasks.is_empty());
            let me = super::super::placement::gettid();
            assert_eq!(r.tasks.get(&me).map(|t| t.pid), Some(r.own_pid));
            let stat = r.stat.expect("/proc/stat");
            assert!(!stat.cpus.is_empty() && stat.tick_ns > 0);
        }
    }
}
