//! Which CPUs a task may run on (sched_getaffinity): a fact of the host as this process
//! sees it, read by the machine facts and by placement.

/// CPUs this process may run on (sched_getaffinity), ascending.
pub fn allowed_cpus() -> Vec<usize> {
    affinity_of(0).unwrap_or_default()
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
