//! `ctx.sweep`: lmbench lat_ctx done with evidence. A ring of N members on one CPU passes a
//! token; each member walks its own S-byte working set on every receive. The overhead (the
//! same N pipe writes+reads and N walks inside one thread, caches hot) is sampled
//! interleaved with the ring, so drift cancels, and per switch = (lap − overhead) / N.
//!
//! At S = 0 this is the direct cost of a switch; as S grows the difference also holds the
//! indirect cost of refilling caches and TLB that the other members evicted (Li, Ding, Shen
//! 2007), which is why each point is labelled with the cache level its working sets fit in.

use super::ring::{Policy, Ring, RingSpec};
use super::Mode;
use crate::analysis::caches::label;
use crate::analysis::sizes::fmt_size;
use crate::engine::checks;
use crate::engine::measure::{measure, Context, Spec, Verdict};
use crate::error::Result;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::model::{Evidence, Measurement};
use crate::probes::workset::Access;

/// The probe id.
pub const PROBE: &str = "ctx.sweep";

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub procs: usize,
    pub size: u64,
    pub stride: usize,
    pub access: Access,
    pub mode: Mode,
    pub cpu: usize,
    pub policy: Policy,
}

/// Measure one point. `caches` are the CPU's data caches (label, bytes), smallest first.
pub fn measure_point(ctx: &Context, p: Point, caches: &[(String, u64)]) -> Result<Measurement> {
    let _pin = AffinityGuard::pin_current(&[p.cpu])?;
    let mut ring = Ring::start(RingSpec {
        members: p.procs,
        size: p.size as usize,
        stride: p.stride,
        access: p.access,
        mode: p.mode,
        cpu: p.cpu,
        policy: p.policy,
    })?;
    let l = label(caches, p.procs, p.size);
    let spec = Spec::new(PROBE, "ns/switch", "ns/lap", p.procs as f64)
        .param("mode", p.mode.as_str())
        .param("procs", p.procs)
        .param("size", p.size)
        .param("size_label", fmt_size(p.size))
        .param("access", p.access.as_str())
        .param("stride", p.stride)
        .param("cpus", vec![p.cpu])
        .param("policy", p.policy.as_str())
        .param("fits_per_process", l.per_process.clone())
        .param("fits_total", l.total.clone())
        .events_set(EventSet::WithCacheRefs)
        .note(format!(
            "ring of {} on CPU {} passing a token through pipes; each walks its own {} \
             ({}, one word per {} B) on every receive. Per switch = (lap − the same {} pipe \
             writes+reads and walks in one thread, sampled interleaved) / {} switches: \
             lmbench lat_ctx's definition. Working sets fit in {} per process, {} in total",
            crate::report::units::plural(p.procs as u64, p.mode.as_str()),
            p.cpu,
            fmt_size(p.size),
            p.access.as_str(),
            p.stride,
            p.procs,
            p.procs,
            l.per_process,
            l.total
        ))
        .note(match p.policy {
            Policy::Batch => {
                "members run SCHED_BATCH, so a woken member never preempts the sender before \
                 it blocks in its read: every hop is one voluntary switch, as lat_ctx assumes"
            }
            Policy::Normal => {
                "members run SCHED_OTHER as lat_ctx does: a woken member may preempt the \
                 sender, which later runs again only to block, adding switches per hop"
            }
        });
    let participants = ring.participants.clone();
    let start = ring.start_cpus.clone();
    let ring_cell = std::cell::RefCell::new(&mut ring);
    let mut raw = |iters: u64| ring_cell.borrow_mut().laps(iters);
    let mut base = |iters: u64| ring_cell.borrow_mut().overhead(iters);
    let procs = p.procs;
    let m = measure(
        ctx,
        spec,
        participants,
        start,
        &mut raw,
        Some(&mut base),
        |ev| sweep_verdict(ev, procs),
    );
    std::hint::black_box(ring.sink);
    drop(ring);
    m
}

/// The sweep's expectations: one switch per hop (N per lap) ±5%, no migrations, everyone on
/// the requested CPU, and no page faults once warmed up (a fault inside the window would be
/// a cost that is not a switch).
pub fn sweep_verdict(ev: &Evidence, procs: usize) -> Verdict {
    let n = procs as f64;
    let (sw, source) = checks::switches_per_op(ev);
    let it = ev.rusage.iterations.max(1) as f64;
    let vol = ev.rusage.total.nvcsw as f64 / it / n;
    let invol = ev.rusage.total.nivcsw as f64 / it / n;
    let mut c = checks::near("context switches per hop", 1.0, 0.05, sw / n);
    c.observed = format!(
        "{:.3} ({source}; voluntary {vol:.3}, involuntary {invol:.3})",
        sw / n
    );
    // perf counts only the evidence windows, so its count is divided by the laps of those
    // windows (its per_op), rusage's by the laps of all windows.
    let (minflt, per_lap) = match ev
        .events
        .get("minor-faults")
        .filter(|e| e.supported)
        .and_then(|e| e.total.zip(e.per_op))
    {
        Some(counted) => counted,
        None => {
            let m = ev.rusage.total.minflt as f64;
            (m, m / it)
        }
    };
    // A stray fault or two over a whole point (stack growth, the recorder's own reads) is
    // not a per-switch cost; a fault every hundred switches would be.
    let per = per_lap / n;
    let f = crate::model::Check {
        name: "minor faults per switch".into(),
        expected: "≤ 0.01 (or ≤ 2 in all)".into(),
        observed: format!("{per:.5} ({minflt:.0} in the measured windows)"),
        ok: per <= 0.01 || minflt <= 2.0,
    };
    // A woken member may preempt the one that woke it (an involuntary switch) instead of
    // waiting for it to block: either way one member leaves the CPU per hop. Only a share of
    // voluntary switches far below one half means the members were not taking turns.
    let mut warnings = Vec::new();
    if vol < 0.25 && sw / n > 0.5 {
        warnings.push(format!(
            "only {vol:.2} voluntary switches per hop ({invol:.2} involuntary): other tasks \
             competed for the CPU"
        ));
    }
    let mut checks = vec![
        c,
        checks::no_migrations(ev),
        checks::placement(&ev.cpus),
        checks::same_cpu(&ev.cpus),
        f,
    ];
    checks::add_occupancy(ev, &mut checks, &mut warnings);
    (checks, warnings)
}

/// Hardware counters per switch (per lap / N) that the machine supported, by perf name.
pub fn counters_per_switch(m: &Measurement) -> Vec<(String, f64)> {
    const SHOWN: [&str; 5] = [
        "cache-references",
        "cache-misses",
        "L1-dcache-load-misses",
        "dTLB-load-misses",
        "LLC-load-misses",
    ];
    let n = m.units_per_iteration.max(1.0);
    SHOWN
        .iter()
        .filter_map(|name| {
            let e = m.evidence.events.get(*name)?;
            let v = e.per_op.filter(|_| e.supported)?;
            Some((name.to_string(), v / n))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sampler::SamplingConfig;
    use crate::model::{EventReading, Placement, Status};

    fn evidence(laps: u64, nvcsw: u64, nivcsw: u64, minflt: u64, cpus: [usize; 2]) -> Evidence {
        let mut ev = Evidence {
            occupancy: checks::held_occupancy(),
            ..Default::default()
        };
        ev.rusage.iterations = laps;
        ev.rusage.total.nvcsw = nvcsw;
        ev.rusage.total.nivcsw = nivcsw;
        ev.rusage.total.minflt = minflt;
        ev.cpus = cpus
            .iter()
            .enumerate()
            .map(|(i, &c)| Placement {
                role: format!("m{i}"),
                requested: vec![0],
                start: Some(c),
                end: Some(c),
                ..Default::default()
            })
            .collect();
        ev
    }

    #[test]
    fn perf_faults_are_divided_by_the_laps_they_were_counted_on() {
        // 4000 laps in all, perf attached on 1000 of them and counting 40 faults there: 0.02
        // per switch (2 members), not 0.005.
        let mut ev = evidence(4000, 8000, 0, 0, [0, 0]);
        ev.events.insert(
            "minor-faults".into(),
            EventReading {
                total: Some(40.0),
                per_op: Some(0.04),
                supported: true,
                ..Default::default()
            },
        );
        let (c, _) = sweep_verdict(&ev, 2);
        let f = c
            .iter()
            .find(|c| c.name == "minor faults per switch")
            .unwrap();
        assert!(!f.ok && f.observed.starts_with("0.02000"), "{f:?}");
    }

    #[test]
    fn verdict_wants_one_switch_per_hop_and_no_faults() {
        let (c, w) = sweep_verdict(&evidence(1000, 2000, 0, 0, [0, 0]), 2);
        assert!(c.iter().all(|c| c.ok), "{c:?}");
        assert!(w.is_empty());
        // Half the switches missing: the token did not go round as claimed.
        let (c, _) = sweep_verdict(&evidence(1000, 1000, 0, 0, [0, 0]), 2);
        assert!(!c[0].ok);
        // Faults during measurement.
        let (c, _) = sweep_verdict(&evidence(1000, 2000, 0, 50, [0, 0]), 2);
        assert!(!c[4].ok, "{:?}", c[4]);
        // ...but a stray one over a whole point is not a per-switch cost.
        let (c, _) = sweep_verdict(&evidence(10, 20, 0, 1, [0, 0]), 2);
        assert!(c[4].ok, "{:?}", c[4]);
        let (c, _) = sweep_verdict(&evidence(10, 20, 0, 5, [0, 0]), 2);
        assert!(!c[4].ok, "{:?}", c[4]);
        // A member on another CPU.
        let (c, _) = sweep_verdict(&evidence(1000, 2000, 0, 0, [0, 1]), 2);
        assert!(!c[2].ok && !c[3].ok);
        // Involuntary switches are warned about.
        let (_, w) = sweep_verdict(&evidence(1000, 1000, 1000, 0, [0, 0]), 2);
        assert!(w.is_empty());
        let (_, w) = sweep_verdict(&evidence(1000, 100, 1900, 0, [0, 0]), 2);
        assert_eq!(w.len(), 1);
        // The perf event wins over rusage when supported.
        let mut ev = evidence(1000, 0, 0, 0, [0, 0]);
        ev.events.insert(
            "context-switches".into(),
            EventReading {
                per_op: Some(2.0),
                total: Some(2000.0),
                supported: true,
                ..Default::default()
            },
        );
        assert!(sweep_verdict(&ev, 2).0[0].ok);
    }

    /// A small real point: valid, positive, and carrying its evidence.
    #[test]
    fn a_small_real_point_is_valid_and_carries_evidence() {
        let cfg = SamplingConfig {
            warmup_ns: 20_000_000,
            target_sample_ns: 2_000_000,
            min_samples: 7,
            max_samples: 40,
            rel_ci_target: 0.05,
            budget_ns: 400_000_000,
        };
        let ctx = Context::new(cfg);
        let cpu = *crate::evidence::placement::allowed_cpus().last().unwrap();
        let caches = vec![("L1d".to_string(), 48 << 10), ("L2".to_string(), 1 << 20)];
        let p = Point {
            procs: 2,
            size: 16 << 10,
            stride: 64,
            access: Access::Read,
            mode: Mode::Process,
            cpu,
            policy: Policy::Batch,
        };
        let m = measure_point(&ctx, p, &caches).unwrap();
        assert_eq!(m.probe, PROBE);
        assert_eq!(m.units_per_iteration, 2.0);
        assert_eq!(m.params["fits_per_process"], "L1d");
        assert!(m.baseline.is_some() && m.difference.is_some());
        assert_eq!(m.samples.len(), m.baseline_samples.len());
        assert!(m.raw.median > 0.0);
        assert!(m.evidence.rusage.iterations > 0);
        assert_eq!(m.evidence.cpus.len(), 2);
        let names: Vec<&str> = m.checks.iter().map(|c| c.name.as_str()).collect();
        assert!(names.contains(&"context switches per hop"));
        assert!(names.contains(&"minor faults per switch"));
        // Placement is forced by pinning, so it must hold whatever the load.
        assert!(m.checks.iter().find(|c| c.name == "placement").unwrap().ok);
        match m.status {
            Status::Ok => assert!(m.value.as_ref().unwrap().median > 0.0),
            Status::BelowResolution => assert!(m.difference.unwrap().ci95[0] <= 0.0),
            Status::Invalid => assert!(m.checks.iter().any(|c| !c.ok)),
        }
        // Tests share the CPUs with each other (and other builds): only the occupancy check
        // may fail, and then it must say that others held the CPU.
        // When others held the CPU they also preempted members, so the per-hop switch count
        // may fail with it, never alone; so may the fault count (a loaded machine reclaims
        // and compacts the members' pages, which the check rightly counts).
        let failed: Vec<_> = m.checks.iter().filter(|c| !c.ok).collect();
        let contested = failed.iter().any(|c| checks::contested(c));
        let follows = |n: &str| n == "context switches per hop" || n == "minor faults per switch";
        assert!(
            failed
                .iter()
                .all(|c| checks::contested(c) || (contested && follows(&c.name))),
            "{failed:?} {:?} {:?}",
            m.evidence.events.get("cpu-migrations"),
            m.evidence.cpus
        );
        assert_eq!(m.valid, failed.is_empty());
    }
}
