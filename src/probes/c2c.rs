//! `c2c.pair`: core-to-core latency by cache-line ping-pong. Two threads pinned to CPUs i and
//! j hand one 64-byte line back and forth with compare-and-swap (the measuring thread swaps
//! 0→1, the partner 1→0); each swap must wait for the line to arrive from the other core, so
//! one round trip is two one-way transfers. No kernel is involved: any context switch is a
//! disturbance, and the check says so.

use crate::engine::checks;
use crate::engine::measure::{measure, Context, Spec, Verdict};
use crate::engine::measure::{Participants, Workloads};
use crate::engine::partner::ThreadPartner;
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::{Check, Evidence, Measurement};
use crate::probes::ipc::classes::Pair;
use crate::units::name::Named;
use crate::units::{Per, Unit};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The family's one probe: a pair of CPUs.
pub const PAIR: crate::model::ProbeId = crate::model::ProbeId("c2c.pair");

/// The ping-pong line and a stop flag, each alone on its cache line (128 bytes apart, so
/// adjacent-line prefetch does not pair them either).
#[repr(C, align(128))]
struct Line {
    value: AtomicU64,
}

#[repr(C)]
struct Shared {
    line: Line,
    stop: Line,
}

/// Switches per round trip a polling ping-pong may show (none, up to scheduler-tick noise).
pub const MAX_SWITCHES: f64 = 0.001;

/// The checks: no switches (both threads polled throughout), no migrations, each thread where
/// it was pinned on two different CPUs, and the participants held their CPUs.
pub fn verdict(ev: &Evidence) -> Verdict {
    let (sw, _) = checks::switches_per_op(ev);
    let mut list = vec![
        Check {
            reading: checks::switches_reading(ev, 4),
            ..checks::at_most("context switches per round trip", MAX_SWITCHES, sw)
        },
        checks::no_migrations(ev),
        checks::placement(&ev.cpus),
        crate::probes::ipc::distinct_cpus(&ev.cpus),
    ];
    let mut warnings = Vec::new();
    checks::add_occupancy(ev, &mut list, &mut warnings);
    (list, warnings)
}

/// Measure the pair: the measuring thread on `pair.a`, the partner thread on `pair.b`.
pub fn measure_pair(ctx: &Context, pair: Pair) -> Result<Measurement> {
    if pair.a == pair.b {
        return Err(Error::usage(format!(
            "c2c: CPU {} paired with itself; a ping-pong needs two CPUs",
            pair.a
        )));
    }
    let shared = Arc::new(Shared {
        line: Line {
            value: AtomicU64::new(0),
        },
        stop: Line {
            value: AtomicU64::new(0),
        },
    });
    let _pin = AffinityGuard::pin_current(&[pair.a])?;
    let (s, q) = (shared.clone(), shared.clone());
    let partner = ThreadPartner::spawn(
        Some(pair.b),
        move || loop {
            // Swap 1→0; poll with plain loads between attempts so the line is only pulled
            // over for a write when it is worth it.
            if s.line
                .value
                .compare_exchange(1, 0, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                while s.line.value.load(Ordering::Relaxed) != 1 {
                    if s.stop.value.load(Ordering::Relaxed) != 0 {
                        return;
                    }
                    std::hint::spin_loop();
                }
            }
        },
        move || q.stop.value.store(1, Ordering::Relaxed),
    )?;
    let (tid, partner_cpu) = partner.wait_ready()?;
    let participants = vec![
        Participant::this_thread("measuring thread", vec![pair.a]),
        Participant::thread("partner thread", tid, vec![pair.b]),
    ];
    let line = &shared.line.value;
    let mut raw = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        for _ in 0..iters {
            let mut spins: u32 = 0;
            while line
                .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                while line.load(Ordering::Relaxed) != 0 {
                    std::hint::spin_loop();
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(1 << 24) {
                        crate::engine::interrupt::check()?;
                    }
                }
            }
        }
        Ok(now_ns() - t0)
    };
    let spec = Spec::new(PAIR.0, Unit::ns(Per::OneWay), Unit::ns(Per::RoundTrip), 2.0)
        .param("class", pair.class.name())
        .param("from", pair.a)
        .param("to", pair.b)
        .note(
            "cache-line ping-pong: compare-and-swap on one line by two threads pinned to the \
             two CPUs; one round trip = two transfers of the line, one-way = round trip / 2",
        );
    let result = measure(
        ctx,
        spec,
        Participants::new(participants, vec![Some(pair.a), partner_cpu]),
        Workloads::alone(&mut raw),
        verdict,
    );
    drop(partner);
    result
}

/// All ordered pairs i < j of `cpus`, or `sample` of them spread evenly (deterministic, so a
/// rerun measures the same pairs).
pub fn pairs(cpus: &[usize], sample: Option<usize>) -> Vec<(usize, usize)> {
    let mut all = Vec::new();
    for (k, &i) in cpus.iter().enumerate() {
        for &j in &cpus[k + 1..] {
            all.push((i, j));
        }
    }
    match sample {
        Some(n) if n < all.len() => {
            let step = all.len() as f64 / n as f64;
            (0..n).map(|k| all[(k as f64 * step) as usize]).collect()
        }
        _ => all,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventReading, Placement};

    #[test]
    fn pairs_cover_or_sample_evenly() {
        assert_eq!(pairs(&[0, 1, 2], None), vec![(0, 1), (0, 2), (1, 2)]);
        let s = pairs(&[0, 1, 2, 3, 4, 5], Some(4));
        assert_eq!(s.len(), 4);
        assert_eq!(s[0], (0, 1));
        assert!(pairs(&[3], None).is_empty());
    }

    #[test]
    fn switches_invalidate_a_ping_pong() {
        let placed = |c| Placement {
            role: "t".into(),
            pid: 1,
            tid: 1,
            requested: vec![c],
            start: Some(c),
            end: Some(c),
            affinity_held: true,
        };
        let mut ev = Evidence {
            cpus: vec![placed(0), placed(1)],
            occupancy: checks::held_occupancy(),
            ..Default::default()
        };
        let reading = |sw: f64| EventReading {
            per_op: Some(sw),
            total: Some(sw * 1e6),
            supported: true,
            ..Default::default()
        };
        ev.events.insert("context-switches".into(), reading(0.0));
        assert!(verdict(&ev).0.iter().all(|c| c.ok));
        ev.events.insert("context-switches".into(), reading(0.01));
        assert!(!verdict(&ev).0[0].ok);
    }
}
