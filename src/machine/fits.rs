//! Which cache level a working set fits in, per process and in total (N processes on one
//! core share that core's caches), from the machine's recorded cache facts.

use crate::units::size::fmt_size;
use serde::{Deserialize, Serialize};

/// Where a point's working set lives, by the machine's cache sizes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLabel {
    /// Smallest level holding one process's working set ("L1d", "L2", "L3", "memory").
    pub per_process: String,
    /// Smallest level holding all N working sets together.
    pub total: String,
    /// Levels exceeded by the total footprint, e.g. ["L1d", "L2"].
    pub exceeds_total: Vec<String>,
    /// Levels exceeded by one process's working set.
    pub exceeds_per_process: Vec<String>,
}

/// Smallest level of `caches` (label, bytes; smallest first) that holds `bytes`.
pub fn fits_in(caches: &[(String, u64)], bytes: u64) -> String {
    caches
        .iter()
        .find(|(_, size)| bytes <= *size)
        .map(|(l, _)| l.clone())
        .unwrap_or_else(|| "memory".into())
}

/// Levels that `bytes` does not fit in.
pub fn exceeded(caches: &[(String, u64)], bytes: u64) -> Vec<String> {
    caches
        .iter()
        .filter(|(_, size)| bytes > *size)
        .map(|(l, _)| l.clone())
        .collect()
}

/// Label a point of N processes with S bytes each.
pub fn label(caches: &[(String, u64)], n: usize, per_process: u64) -> CacheLabel {
    let total = per_process.saturating_mul(n as u64);
    CacheLabel {
        per_process: fits_in(caches, per_process),
        total: fits_in(caches, total),
        exceeds_total: exceeded(caches, total),
        exceeds_per_process: exceeded(caches, per_process),
    }
}

/// Boundaries on a per-process size axis for a ring of N: each cache once as "L2 per
/// process" (S = size) and once as "L2 total" (S = size / N).
pub fn sweep_boundaries(caches: &[(String, u64)], n: usize) -> Vec<(String, f64)> {
    let mut v = Vec::new();
    for (l, size) in caches {
        v.push((
            format!("{l} per process ({})", fmt_size(*size)),
            *size as f64,
        ));
        if n > 1 {
            v.push((
                format!("{l} total ({}/{n})", fmt_size(*size)),
                *size as f64 / n as f64,
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn epyc() -> Vec<(String, u64)> {
        vec![
            ("L1d".into(), 48 << 10),
            ("L2".into(), 1 << 20),
            ("L3".into(), 32 << 20),
        ]
    }

    #[test]
    fn fits_per_process_and_in_total() {
        let c = epyc();
        assert_eq!(fits_in(&c, 0), "L1d");
        assert_eq!(fits_in(&c, 48 << 10), "L1d");
        assert_eq!(fits_in(&c, (48 << 10) + 1), "L2");
        assert_eq!(fits_in(&c, 64 << 20), "memory");
        // Two processes of 512K: each fits L2, together exactly L2; four do not.
        let l = label(&c, 2, 512 << 10);
        assert_eq!((l.per_process.as_str(), l.total.as_str()), ("L2", "L2"));
        assert_eq!(l.exceeds_total, vec!["L1d".to_string()]);
        let l = label(&c, 4, 512 << 10);
        assert_eq!(l.total, "L3");
        assert_eq!(l.exceeds_total, vec!["L1d".to_string(), "L2".to_string()]);
        assert_eq!(l.exceeds_per_process, vec!["L1d".to_string()]);
        // No cache facts: everything is "memory", nothing is claimed exceeded.
        assert_eq!(label(&[], 2, 4096).per_process, "memory");
        assert!(label(&[], 2, 4096).exceeds_total.is_empty());
    }

    #[test]
    fn boundaries_on_the_per_process_axis() {
        let b = sweep_boundaries(&epyc(), 4);
        assert_eq!(b.len(), 6);
        assert_eq!(b[1].0, "L1d total (48k/4)");
        assert_eq!(b[1].1, 12.0 * 1024.0);
        assert_eq!(sweep_boundaries(&epyc(), 1).len(), 3);
    }
}
