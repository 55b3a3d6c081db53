//! getrusage-equivalent counters for any task, read from /proc/<pid>/task/<tid>/{stat,status,io}.
//! getrusage() only reports the caller (or reaped children); partners are still running while
//! we measure, so their counters come from procfs, which the kernel fills from the same fields.

use crate::model::Rusage;
use std::fs;

/// One reading of a task's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TaskSnapshot {
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
    /// Process peak RSS (VmHWM) in kB.
    pub hwm_kb: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// The CPU the task last ran on.
    pub processor: Option<usize>,
    /// Nanoseconds on a CPU and waiting on a run queue (/proc/.../schedstat), if available.
    pub oncpu_ns: Option<u64>,
    pub run_delay_ns: Option<u64>,
}

/// Read a task's snapshot. None when the task is gone or unreadable.
pub fn snapshot(pid: i32, tid: i32) -> Option<TaskSnapshot> {
    let base = format!("/proc/{pid}/task/{tid}");
    let stat = fs::read_to_string(format!("{base}/stat")).ok()?;
    let status = fs::read_to_string(format!("{base}/status")).ok()?;
    let mut snap = parse_stat(&stat)?;
    apply_status(&mut snap, &status);
    // Process-wide peak RSS lives in the process status, not the task's.
    if let Ok(pstatus) = fs::read_to_string(format!("/proc/{pid}/status")) {
        snap.hwm_kb = field_kb(&pstatus, "VmHWM:").unwrap_or(0);
    }
    if let Ok(io) = fs::read_to_string(format!("{base}/io")) {
        apply_io(&mut snap, &io);
    }
    if let Ok(ss) = fs::read_to_string(format!("{base}/schedstat")) {
        apply_schedstat(&mut snap, &ss);
    }
    Some(snap)
}

/// Parse /proc/.../stat. Fields are counted after the last ')' because the command name may
/// contain spaces and parentheses.
pub fn parse_stat(stat: &str) -> Option<TaskSnapshot> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state); field k is f[k - 3].
    let get = |k: usize| f.get(k - 3).and_then(|s| s.parse::<u64>().ok());
    Some(TaskSnapshot {
        minflt: get(10)?,
        majflt: get(12)?,
        utime_ticks: get(14)?,
        stime_ticks: get(15)?,
        processor: get(39).map(|c| c as usize),
        ..Default::default()
    })
}

fn field_kb(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l[key.len()..].split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Apply voluntary/nonvoluntary switch counts from /proc/.../status.
pub fn apply_status(snap: &mut TaskSnapshot, status: &str) {
    snap.nvcsw = field_kb(status, "voluntary_ctxt_switches:").unwrap_or(0);
    snap.nivcsw = field_kb(status, "nonvoluntary_ctxt_switches:").unwrap_or(0);
}

/// Apply storage I/O bytes from /proc/.../io (needs ptrace access; absent otherwise).
pub fn apply_io(snap: &mut TaskSnapshot, io: &str) {
    snap.read_bytes = field_kb(io, "read_bytes:").unwrap_or(0);
    snap.write_bytes = field_kb(io, "write_bytes:").unwrap_or(0);
}

/// Apply "on-CPU ns, run-queue wait ns, timeslices" from /proc/.../schedstat: nanosecond
/// CPU time, unlike stat's clock ticks.
pub fn apply_schedstat(snap: &mut TaskSnapshot, text: &str) {
    let mut f = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    snap.oncpu_ns = f.next().flatten();
    snap.run_delay_ns = f.next().flatten();
}

fn ticks_to_us(ticks: u64) -> u64 {
    ticks * 1_000_000 / super::interrupts::user_hz()
}

/// Counters accumulated between two snapshots, in getrusage's units (blocks of 512 bytes).
pub fn delta(before: &TaskSnapshot, after: &TaskSnapshot) -> Rusage {
    Rusage {
        utime_us: ticks_to_us(after.utime_ticks.saturating_sub(before.utime_ticks)),
        stime_us: ticks_to_us(after.stime_ticks.saturating_sub(before.stime_ticks)),
        maxrss_kb: after.hwm_kb,
        minflt: after.minflt.saturating_sub(before.minflt),
        majflt: after.majflt.saturating_sub(before.majflt),
        inblock: after.read_bytes.saturating_sub(before.read_bytes) / 512,
        oublock: after.write_bytes.saturating_sub(before.write_bytes) / 512,
        nvcsw: after.nvcsw.saturating_sub(before.nvcsw),
        nivcsw: after.nivcsw.saturating_sub(before.nivcsw),
    }
}

/// Add one delta into a running total (peak RSS takes the maximum).
pub fn accumulate(total: &mut Rusage, d: &Rusage) {
    total.utime_us += d.utime_us;
    total.stime_us += d.stime_us;
    total.maxrss_kb = total.maxrss_kb.max(d.maxrss_kb);
    total.minflt += d.minflt;
    total.majflt += d.majflt;
    total.inblock += d.inblock;
    total.oublock += d.oublock;
    total.nvcsw += d.nvcsw;
    total.nivcsw += d.nivcsw;
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 150 0 2 0 \
        37 12 0 0 20 0 1 0 5000 10000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 \
        3 0 0 0 0 0 0 0 0 0 0 0 0 0";

    #[test]
    fn stat_fields_after_comm_with_parentheses() {
        let s = parse_stat(STAT).unwrap();
        assert_eq!(s.minflt, 150);
        assert_eq!(s.majflt, 2);
        assert_eq!(s.utime_ticks, 37);
        assert_eq!(s.stime_ticks, 12);
        assert_eq!(s.processor, Some(3));
    }

    #[test]
    fn status_and_io_fields() {
        let mut s = TaskSnapshot::default();
        apply_status(
            &mut s,
            "Name:\tx\nvoluntary_ctxt_switches:\t42\nnonvoluntary_ctxt_switches:\t7\n",
        );
        apply_io(&mut s, "rchar: 1\nread_bytes: 4096\nwrite_bytes: 1024\n");
        apply_schedstat(&mut s, "190130 25 3\n");
        assert_eq!((s.oncpu_ns, s.run_delay_ns), (Some(190130), Some(25)));
        assert_eq!((s.nvcsw, s.nivcsw), (42, 7));
        let d = delta(&TaskSnapshot::default(), &s);
        assert_eq!((d.inblock, d.oublock), (8, 2));
        assert_eq!(d.nvcsw, 42);
    }

    #[test]
    fn own_thread_is_readable_and_counts_grow() {
        let pid = std::process::id() as i32;
        let tid = super::super::placement::gettid();
        let a = snapshot(pid, tid).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = snapshot(pid, tid).unwrap();
        assert!(b.nvcsw > a.nvcsw, "sleeping must be a voluntary switch");
        assert!(b.hwm_kb > 0);
    }
}
