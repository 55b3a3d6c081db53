//! CPU placement: pinning, the allowed set, and where a task actually is.

use crate::error::{Error, Result};
pub use crate::machine::affinity::current_cpu;
use crate::machine::affinity::{affinity_of, allowed_cpus};
pub use crate::machine::parse::format_cpu_runs as format_cpu_list;

pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Pin a task (0 = calling thread) to the given CPUs. Allocation-free, so it is safe in a
/// freshly forked child.
pub fn pin(tid: i32, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: zeroed cpu_set_t is valid; CPU_SET bounds are checked below.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `set` is an initialised cpu_set_t and `c` is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Validate a user's CPU choice against the allowed set, with the words the user needs.
pub fn validate_cpu(cpu: usize) -> Result<usize> {
    let allowed = allowed_cpus();
    if allowed.contains(&cpu) {
        Ok(cpu)
    } else {
        Err(Error::usage(format!(
            "CPU {cpu} is not in this process's allowed set ({}); pick one of those",
            crate::evidence::placement::format_cpu_list(&allowed)
        )))
    }
}

/// Restores the calling thread's affinity when dropped (probes pin the measuring thread).
pub struct AffinityGuard {
    saved: Option<Vec<usize>>,
}

impl AffinityGuard {
    /// Pin the calling thread to `cpus`, remembering the old mask.
    pub fn pin_current(cpus: &[usize]) -> Result<Self> {
        let saved = affinity_of(0);
        pin(0, cpus)
            .map_err(|e| Error::env(format!("cannot pin to CPU {}: {e}", format_cpu_list(cpus))))?;
        Ok(AffinityGuard { saved })
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            let _ = pin(0, saved);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_list_formatting() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_cpu_list(&[5]), "5");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn cpu_outside_allowed_set_is_a_usage_error() {
        let err = validate_cpu(100_000).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("100000"));
        let first = allowed_cpus()[0];
        assert_eq!(validate_cpu(first).unwrap(), first);
    }

    #[test]
    fn pinning_moves_the_thread_and_guard_restores() {
        let before = affinity_of(0).unwrap();
        let cpu = *before.last().unwrap();
        {
            let _g = AffinityGuard::pin_current(&[cpu]).unwrap();
            assert_eq!(affinity_of(0).unwrap(), vec![cpu]);
            assert_eq!(current_cpu(), Some(cpu));
        }
        assert_eq!(affinity_of(0).unwrap(), before);
    }
}
