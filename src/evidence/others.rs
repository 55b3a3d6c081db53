//! The other tasks on the participants' CPUs: every task of the machine that /proc lists,
//! read once before the first window and once after the last.
//!
//! Why: the participants' own CPU time says what they got, not who ran in their gaps. A
//! `SCHED_IDLE` or `nice 19` loop on a participant's CPU runs only while the participants
//! block, so their occupancy reads as held (or, on several CPUs, as the gaps they are
//! expected to leave), while every wake-up now lands on a busy CPU and the figure moves by
//! tens of percent. Its own run time (schedstat's first field, nanoseconds) and its state
//! (runnable at both readings: it wanted the CPU throughout) show it, at any priority, and
//! any user may read both. A task that exited in between is not seen; its CPU time shows
//! only in the participants' share.

use crate::model::{OtherTask, OtherTasks, SchedPolicy};
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
}

/// One reading of every task: by thread id, with the wall time it was taken at.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub at_ns: u64,
    pub tasks: BTreeMap<i32, Seen>,
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
    })
}

fn tick_ns() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    1_000_000_000 / hz
}

/// Every task /proc lists now, but this process's own threads (the participants among them
/// are accounted for by the recorder; the rest wait for them).
pub fn read() -> Reading {
    let me = std::process::id() as i32;
    let mut tasks = BTreeMap::new();
    let procs = fs::read_dir("/proc").into_iter().flatten().flatten();
    for p in procs {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
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
            }
            tasks.insert(tid, seen);
        }
    }
    Reading {
        at_ns: crate::evidence::clock::now_ns(),
        tasks,
    }
}

/// What the tasks other than `participants` (thread ids) did on `cpus` between two
/// readings. A task counts when it was on one of `cpus` at both readings; one that started
/// in between counts all its CPU time when it is on one of them at the second. None when no CPU is given (unpinned participants:
/// there is no one CPU to watch) or the first reading saw no task at all (no /proc).
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
        if participants.contains(tid) {
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
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    (tid, s)
                })
                .collect(),
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

    #[test]
    fn this_machine_is_read() {
        let r = read();
        assert!(!r.tasks.is_empty());
        assert!(!r.tasks.contains_key(&super::super::placement::gettid()));
    }
}
