//! How busy the machine is right now: load average and a short per-CPU busy sample, because
//! a busy CPU or a busy SMT sibling steals time and cache from whatever is measured.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::parse::{busy_between, parse_proc_stat};
use super::source::Source;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CpuBusy {
    pub cpu: usize,
    /// Fraction of the window the CPU ran something (0..1).
    pub busy: f64,
    /// Fraction of the window the hypervisor ran someone else on our virtual CPU.
    pub steal: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Load {
    pub loadavg: Option<[f64; 3]>,
    /// Length of the busy sample; `None` when none was taken.
    pub window_ms: Option<u64>,
    pub per_cpu: Vec<CpuBusy>,
}

/// A CPU busier than this during the sample counts as "busy" for the warnings.
pub const BUSY_THRESHOLD: f64 = 0.10;

/// Samples /proc/stat twice `window` apart. The collecting thread sleeps meanwhile, so its
/// own CPU does not look busy because of us.
pub fn sample_busy(src: &Source, window: Duration) -> Option<Vec<CpuBusy>> {
    let before = parse_proc_stat(&src.read("/proc/stat")?);
    std::thread::sleep(window);
    let after = parse_proc_stat(&src.read("/proc/stat")?);
    Some(
        busy_between(&before, &after)
            .into_iter()
            .map(|(cpu, busy, steal)| CpuBusy { cpu, busy, steal })
            .collect(),
    )
}
