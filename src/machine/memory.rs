//! Memory sizes and page sizes: what a working-set sweep or a fault probe can afford, and the
//! granularity faults happen at.

use serde::{Deserialize, Serialize};

use super::parse::parse_meminfo;
use super::source::Source;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Memory {
    pub page_size: Option<u64>,
    pub huge_page_size: Option<u64>,
    pub total_bytes: Option<u64>,
    pub available_bytes: Option<u64>,
    pub swap_total_bytes: Option<u64>,
    pub swap_free_bytes: Option<u64>,
}

/// Fills everything /proc/meminfo says; `page_size` is set by the live collector (sysconf),
/// or left unknown for a recorded tree.
pub fn memory_from_meminfo(text: &str) -> Memory {
    let m = parse_meminfo(text);
    Memory {
        page_size: None,
        huge_page_size: m.get("Hugepagesize").copied(),
        total_bytes: m.get("MemTotal").copied(),
        available_bytes: m.get("MemAvailable").or(m.get("MemFree")).copied(),
        swap_total_bytes: m.get("SwapTotal").copied(),
        swap_free_bytes: m.get("SwapFree").copied(),
    }
}

pub fn read_memory(src: &Source, notes: &mut Vec<String>) -> Memory {
    match src.read("/proc/meminfo") {
        Some(t) => memory_from_meminfo(&t),
        None => {
            notes.push("/proc/meminfo unreadable: memory sizes unknown".into());
            Memory::default()
        }
    }
}

/// The base page size of the running process.
pub fn live_page_size() -> Option<u64> {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    (n > 0).then_some(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_meminfo() {
        let m = memory_from_meminfo(
            "MemTotal:       24684084 kB\nMemFree:        22549388 kB\nMemAvailable:   24200968 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\nHugepagesize:       2048 kB\n",
        );
        assert_eq!(m.total_bytes, Some(24684084 * 1024));
        assert_eq!(m.available_bytes, Some(24200968 * 1024));
        assert_eq!(m.swap_total_bytes, Some(0));
        assert_eq!(m.huge_page_size, Some(2 * 1024 * 1024));
    }

    #[test]
    fn old_kernel_without_memavailable() {
        let m = memory_from_meminfo("MemTotal: 1000 kB\nMemFree: 500 kB\n");
        assert_eq!(m.available_bytes, Some(500 * 1024));
        assert_eq!(m.huge_page_size, None);
    }
}
