//! What a run's curves and counts say: knee detection on a latency-versus-size curve (pure, pinned down
//! on synthetic data), and the curves of the working-set sweep and of memory latency read
//! from a finished Run with their knees matched against the cache sizes, and what an evicted
//! file's major faults cost (faults). Nothing here
//! measures or prints: report::sweep and report::memlat render what it finds.

pub mod faults;
pub mod knees;
pub mod memlat;
pub mod sweep;

use crate::model::{Measurement, ProbeId, Run};

/// The measurements of `probe` in `run` grouped by `key` (one curve each), in the order each
/// key first appears, each group in the run's order.
fn curves_by<K: PartialEq>(
    run: &Run,
    probe: ProbeId,
    key: impl Fn(&Measurement) -> K,
) -> Vec<(K, Vec<&Measurement>)> {
    let mut out: Vec<(K, Vec<&Measurement>)> = Vec::new();
    for m in run.measurements.iter().filter(|m| m.is(probe)) {
        let k = key(m);
        match out.iter_mut().find(|(g, _)| *g == k) {
            Some((_, ms)) => ms.push(m),
            None => out.push((k, vec![m])),
        }
    }
    out
}
