//! Which CPUs a task may run on (sched_getaffinity): a fact of the host as this process
//! sees it, read by the machine facts and by placement; and the CPUs a command line asks for
//! out of it.

use crate::error::{Error, Result};

/// CPUs this process may run on (sched_getaffinity), ascending.
pub fn allowed_cpus() -> Vec<usize> {
    affinity_of(0).unwrap_or_default()
}

/// The CPUs a command line's `option` asks for ("3,0-2", as `taskset -c` reads it): sorted,
/// each once, every one in `allowed`. An empty piece ("1,,2") is refused, or skipped where
/// `skip_empty`; a list left with no CPU is refused.
pub fn cpus_asked(
    s: &str,
    allowed: &[usize],
    option: &str,
    skip_empty: bool,
) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        if skip_empty && part.is_empty() {
            continue;
        }
        // The message is escaped for the terminal where the error is shown.
        let bad = || {
            Error::usage(format!(
                "{option}: '{part}' is not a CPU or a range like 0-3"
            ))
        };
        let num = |t: &str| t.trim().parse::<usize>().map_err(|_| bad());
        let (lo, hi) = match part.split_once('-') {
            Some((l, h)) => (num(l)?, num(h)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi {
            return Err(bad());
        }
        for c in lo..=hi {
            if !allowed.contains(&c) {
                return Err(Error::usage(format!(
                    "{option}: CPU {c} is not in this process's allowed set ({})",
                    super::parse::format_cpu_runs(allowed)
                )));
            }
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return Err(Error::usage(format!("{option}: the list is empty")));
    }
    out.sort_unstable();
    Ok(out)
}

/// The CPU the caller is running on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

/// Affinity of a task (0 = caller).
pub fn affinity_of(tid: i32) -> Option<Vec<usize>> {
    // SAFETY: zeroed cpu_set_t is valid; the size matches the buffer.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return None;
    }
    Some(
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `set` is an initialised cpu_set_t and `c` is below CPU_SETSIZE.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect(),
    )
}
