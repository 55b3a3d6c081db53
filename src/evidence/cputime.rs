//! Participants' CPU time read so that it is current at the moment of reading.
//!
//! Why not schedstat alone: /proc/<pid>/task/<tid>/schedstat shows `sum_exec_runtime`, which
//! for a task that is running is brought up to date only at a scheduler tick (4 ms at HZ=250)
//! or a switch. CPU time spent before a window then lands inside it, and occupancy reads
//! over 100% even on an idle machine. Two readings are current:
//!
//! - a thread of this process: its thread CPU clock (`clock_gettime` on the clock id of the
//!   thread, the same as `CLOCK_THREAD_CPUTIME_ID` for the caller). The kernel updates the
//!   running task's runtime before answering (task_sched_runtime), wherever it runs;
//! - a task of another process: schedstat, but only when the task is not runnable at the read
//!   (state other than `R` before and after): a sleeping task's runtime was settled when it
//!   switched out. A reading taken while such a task was runnable is marked inexact, and the
//!   recorder leaves that window out of the occupancy rather than count stale time.
//!
//! Run-queue wait (schedstat's second field) is settled when a waiting task gets its CPU, so
//! it is exact for the calling thread and for any task not runnable at the read.

use std::fs;

/// One participant's CPU time at one window edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuReading {
    /// Nanoseconds on a CPU since the task started.
    pub oncpu_ns: u64,
    /// Nanoseconds spent runnable but waiting for a CPU, if schedstat is available.
    pub run_delay_ns: Option<u64>,
    /// `oncpu_ns` is current (not stale by up to a tick).
    pub exact: bool,
    /// `run_delay_ns` is current.
    pub delay_exact: bool,
}

/// The clock id of thread `tid`'s CPU clock (Linux: `MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`,
/// what `pthread_getcpuclockid` returns). Valid only for threads of the calling process.
pub fn thread_clock_id(tid: i32) -> libc::clockid_t {
    const CPUCLOCK_SCHED: libc::clockid_t = 2;
    const CPUCLOCK_PERTHREAD: libc::clockid_t = 4;
    ((!tid) << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED
}

/// Nanoseconds of CPU time of thread `tid` of this process, current at the call.
pub fn thread_cpu_ns(tid: i32) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-buffer; an invalid clock id only returns an error.
    let rc = unsafe { libc::clock_gettime(thread_clock_id(tid), &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The clock id of process `pid`'s CPU clock (`MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)`, what
/// `clock_getcpuclockid` returns). Linux lets any process read it, and like a thread clock it
/// is brought up to date at the read, also while the process is running.
pub fn process_clock_id(pid: i32) -> libc::clockid_t {
    const CPUCLOCK_SCHED: libc::clockid_t = 2;
    ((!pid) << 3) | CPUCLOCK_SCHED
}

/// Nanoseconds of CPU time of process `pid` (all its threads). For a single-threaded partner
/// (a forked child: pid == tid) this is its task's CPU time, exact when the task is not
/// running; while it runs on another CPU the kernel leaves out its time since the last tick
/// or switch (a spinning child's clock advances in tick steps), so
/// [`read_as`] counts such a reading as exact only when the task was not runnable.
pub fn process_cpu_ns(pid: i32) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-buffer; an invalid clock id only returns an error.
    let rc = unsafe { libc::clock_gettime(process_clock_id(pid), &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The scheduler state letter of a task (`R`, `S`, `D`, ...), from /proc/.../stat.
pub fn state(pid: i32, tid: i32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    parse_state(&stat)
}

/// The state field follows the command name's closing parenthesis.
pub fn parse_state(stat: &str) -> Option<char> {
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// "on-CPU ns, run-queue wait ns" from /proc/.../schedstat.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((f.next()??, f.next()??))
}

/// Whether a schedstat reading taken between two state readings is settled: the task was not
/// runnable at either (a task that ran in between switched out, which settles its runtime).
pub fn settled(before: Option<char>, after: Option<char>) -> bool {
    matches!((before, after), (Some(b), Some(a)) if b != 'R' && a != 'R')
}

/// How often, and how long, to wait for another process's runnable task to settle.
pub const SETTLE_TRIES: u32 = 20;
pub const SETTLE_WAIT_US: u64 = 50;

/// A task of this process (its thread clock is readable).
pub fn is_own(pid: i32) -> bool {
    pid == std::process::id() as i32
}

/// Read a participant's CPU time as current as the kernel allows. None when the task is gone
/// or neither its clock nor its schedstat can be read.
///
/// `opening` says which edge: a thread of this process reads its clock after its schedstat at
/// an opening edge and before it at a closing one, so the file reads fall outside the window.
pub fn read(pid: i32, tid: i32, opening: bool) -> Option<CpuReading> {
    read_as(Whose::of(pid, tid), pid, tid, opening)
}

/// Whose CPU time a reading is: decided once per participant, since asking (getpid, gettid)
/// costs system calls that would otherwise sit between a window's wall and CPU clock reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// The thread that reads.
    Caller,
    /// Another thread of this process.
    OwnThread,
    /// A task of another process.
    Other,
}

impl Whose {
    pub fn of(pid: i32, tid: i32) -> Whose {
        if !is_own(pid) {
            Whose::Other
        } else if tid == super::placement::gettid() {
            Whose::Caller
        } else {
            Whose::OwnThread
        }
    }
}

/// [`read`] with `whose` already known (the recorder's hot path at window edges).
pub fn read_as(whose: Whose, pid: i32, tid: i32, opening: bool) -> Option<CpuReading> {
    let own = whose != Whose::Other;
    let caller = whose == Whose::Caller;
    // Another process's main thread, when it is the only thread, has a current clock too: its
    // process CPU clock. (A multi-threaded process's clock would add its other threads.)
    let single = !own && pid == tid && thread_count(pid) == Some(1);
    let read_clock = || {
        if own {
            thread_cpu_ns(tid)
        } else if single {
            process_cpu_ns(pid)
        } else {
            None
        }
    };
    let mut clock = if !opening { read_clock() } else { None };
    let path = format!("/proc/{pid}/task/{tid}/schedstat");
    let mut tries = 0;
    let (sched, quiet) = loop {
        let before = if caller { None } else { state(pid, tid) };
        let sched = fs::read_to_string(&path)
            .ok()
            .and_then(|t| parse_schedstat(&t));
        let after = if caller { None } else { state(pid, tid) };
        let quiet = caller || settled(before, after);
        // Another process's task caught runnable (a ping-pong partner preempted right after
        // its reply, still on its way back to its blocking read): give it the CPU briefly so
        // it settles, rather than read a runtime stale by up to a tick. At an opening edge
        // this is before the window; at a closing one it adds the tail of its last iteration
        // (a few µs, inside the check's tolerance).
        if quiet || own || sched.is_none() || tries >= SETTLE_TRIES {
            break (sched, quiet);
        }
        tries += 1;
        std::thread::sleep(std::time::Duration::from_micros(SETTLE_WAIT_US));
    };
    if opening {
        clock = read_clock();
    }
    match (clock, sched) {
        (Some(c), s) => Some(CpuReading {
            oncpu_ns: c,
            run_delay_ns: s.map(|s| s.1),
            // A thread of this process: its clock is brought up to date at the read, even on
            // another CPU (task_sched_runtime). Another process's clock is not: the kernel
            // adds a running task's pending time only for the caller's own thread group
            // (thread_group_cputime), so a partner running on another CPU reads stale by up to
            // a tick — exact only when it was not runnable around the read.
            exact: own || quiet,
            delay_exact: s.is_some() && quiet,
        }),
        (None, Some((oncpu, delay))) => Some(CpuReading {
            oncpu_ns: oncpu,
            run_delay_ns: Some(delay),
            exact: quiet,
            delay_exact: quiet,
        }),
        (None, None) => None,
    }
}

/// The number of threads of process `pid` (the `Threads:` line of /proc/<pid>/status).
pub fn thread_count(pid: i32) -> Option<u32> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    crate::machine::parse::status_field(&status, "Threads")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_running_on_another_cpu_is_not_read_as_exact() {
        // Its process clock lags by up to a tick while it runs on another CPU, so a reading
        // taken while it spins must not count as exact (it once did: ipc.spin read 143%).
        let cpus = crate::machine::affinity::allowed_cpus();
        let cpu = *cpus.last().unwrap();
        let child = crate::engine::partner::Child::spawn(Some(cpu), || loop {
            std::hint::spin_loop();
        })
        .unwrap();
        let pid = child.pid();
        assert_eq!(thread_count(pid), Some(1));
        let a = read(pid, pid, true).unwrap();
        let b = read(pid, pid, false).unwrap();
        assert!(!a.exact && !b.exact, "{a:?} {b:?}");
    }

    #[test]
    fn state_after_parenthesised_name() {
        assert_eq!(parse_state("12 (a) b) R 1 2 3"), Some('R'));
        assert_eq!(parse_state("12 (sleepy) S 1"), Some('S'));
        assert_eq!(parse_state("garbage"), None);
    }

    #[test]
    fn schedstat_fields() {
        assert_eq!(parse_schedstat("190130 25 3\n"), Some((190130, 25)));
        assert_eq!(parse_schedstat("x 25 3"), None);
        assert_eq!(parse_schedstat(""), None);
    }

    #[test]
    fn runnable_reading_is_not_settled() {
        assert!(settled(Some('S'), Some('D')));
        assert!(!settled(Some('R'), Some('S')));
        assert!(!settled(Some('S'), Some('R')));
        assert!(!settled(None, Some('S')));
    }

    #[test]
    fn own_thread_clock_is_exact_and_advances_with_work() {
        let tid = super::super::placement::gettid();
        let a = read(std::process::id() as i32, tid, true).unwrap();
        assert!(a.exact);
        // Spin until the clock moves by 2 ms of CPU time: the reading must follow it at once,
        // not at the next tick.
        let start = thread_cpu_ns(tid).unwrap();
        while thread_cpu_ns(tid).unwrap() < start + 2_000_000 {
            std::hint::spin_loop();
        }
        let b = read(std::process::id() as i32, tid, true).unwrap();
        assert!(b.oncpu_ns >= start + 2_000_000, "{a:?} {b:?}");
    }

    #[test]
    fn sleeping_child_reads_settled() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // Wait until it sleeps (it starts runnable).
        // Wait by time, not by count: on a loaded machine it may take a while to get there.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut r = None;
        while std::time::Instant::now() < until {
            let x = read(pid, pid, true);
            if x.is_some_and(|x| x.exact) {
                r = x;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let r = r.expect("a sleeping child reads exactly");
        assert!(r.delay_exact && r.run_delay_ns.is_some());
    }
}
