//! `ctx.sweep`: lmbench lat_ctx done with evidence. A ring of N members on one CPU passes a
//! token; each member walks its own S-byte working set on every receive. The overhead (the
//! same N pipe writes+reads and N walks inside one thread, caches hot) runs interleaved with
//! the ring inside every sample (interleave.rs), so drift cancels, and per switch = (lap −
//! overhead) / N.
//!
//! At S = 0 this is the direct cost of a switch; as S grows the difference also holds the
//! indirect cost of refilling caches and TLB that the other members evicted (Li, Ding, Shen
//! 2007), which is why each point is labelled with the cache level its working sets fit in.

use super::interleave::{self, Halves, Part};
use super::ring::{Policy, Ring, RingSpec};
use super::tax::{counts_pass_of, drop_counterless_evidence, quiet_hooks};
use super::Mode;
use crate::engine::checks;
use crate::engine::measure::{measure, Context, Spec, Verdict, BASELINE_NOTE};
use crate::engine::measure::{Participants, Workloads};
use crate::error::Result;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::machine::fits::label;
use crate::model::{Evidence, Measurement, Num};
use crate::probes::workset::Access;
use crate::units::name::Named;
use crate::units::size::fmt_size;
use crate::units::{Per, Unit};

/// The probe id.
pub const PROBE: crate::model::ProbeId = crate::model::ProbeId("ctx.sweep");

/// What the sweep's baseline samples are, in place of the engine's BASELINE_NOTE.
pub const INTERLEAVED_NOTE: &str = "overhead samples are the overhead halves of the figure's \
     samples: in each, the ring's laps and the overhead's alternate in two chunks each (ring, \
     overhead, overhead, ring), so a linear drift of the host during the sample adds the same \
     to both; the overhead's laps make no switch and no fault, so the switches and faults \
     counted in the sample's window are the ring's";

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
    let mut ring = Ring::start(ring_spec(&p))?;
    let spec = point_spec(&p, caches);
    // The figure's samples take no perf counters and start with the kernel's perf hooks off
    // (tax.rs): the counters come from the evidence pass after every figure sample.
    let spec = quiet_hooks(ctx, spec)?;
    let participants = ring.participants.clone();
    let start = ring.start_cpus.clone();
    let ring_cell = std::cell::RefCell::new(&mut ring);
    // Each raw sample runs the ring's laps and the overhead's interleaved (interleave.rs);
    // the baseline sample after it is that sample's overhead half.
    let halves = Halves::default();
    let mut raw = |iters: u64| {
        halves.ring(iters, |n| {
            let mut ring = ring_cell.borrow_mut();
            interleave::run(n, |part, k| match part {
                Part::Ring => ring.laps(k),
                Part::Overhead => ring.overhead(k),
            })
        })
    };
    let mut base = |iters: u64| halves.overhead(iters, |n| ring_cell.borrow_mut().overhead(n));
    let (procs, policy) = (p.procs, p.policy);
    let m = measure(
        ctx,
        spec,
        Participants::new(participants, start),
        Workloads::paired(&mut raw, &mut base),
        |ev| sweep_verdict(ev, procs, policy),
    );
    std::hint::black_box(ring.sink);
    let mut m = m?;
    // The engine's note on baselines says they run between the evidence windows; here the
    // overhead's laps run inside each raw sample's window.
    m.notes.retain(|n| n != BASELINE_NOTE);
    m.notes.push(INTERLEAVED_NOTE.into());
    drop_counterless_evidence(&mut m);
    if !ctx.evidence_later && ctx.is_last_round() {
        take_evidence(&mut ring, &mut m)?;
    }
    Ok(m)
}

/// The ring a point runs.
fn ring_spec(p: &Point) -> RingSpec {
    RingSpec {
        members: p.procs,
        size: p.size as usize,
        stride: p.stride,
        access: p.access,
        mode: p.mode,
        cpu: p.cpu,
        policy: p.policy,
    }
}

/// The evidence pass of a point taken with `Context::evidence_later`: the ring started
/// again, after every figure's samples (engine::plan runs it), for the perf counts.
pub fn evidence_pass(p: Point, m: &mut Measurement) -> Result<()> {
    let _pin = AffinityGuard::pin_current(&[p.cpu])?;
    let mut ring = Ring::start(ring_spec(&p))?;
    take_evidence(&mut ring, m)
}

/// Perf counters (the point's `WithCacheRefs` set) around the samples of a counts pass
/// (tax::counts_pass_of) on a running ring; their counts become the point's perf evidence.
/// Why apart: counters make the kernel run its perf hooks at every context switch, and for a
/// second after they close (tax.rs), which the figure's samples would pay if they alternated
/// with counter-attached ones. The checks stay those of the figure's own windows (rusage, procfs,
/// placement).
fn take_evidence(ring: &mut Ring, m: &mut Measurement) -> Result<()> {
    let (participants, start) = (ring.participants.clone(), ring.start_cpus.clone());
    let counts = (EventSet::WithCacheRefs, "ring");
    counts_pass_of((&participants, &start), counts, &mut |n| ring.laps(n), m)?;
    std::hint::black_box(ring.sink);
    Ok(())
}

/// The point's spec: its parameters, its cache labels and the notes that say what it measures.
fn point_spec(p: &Point, caches: &[(String, u64)]) -> Spec {
    let l = label(caches, p.procs, p.size);
    let spec = Spec::new(
        PROBE.0,
        Unit::ns(Per::Switch),
        Unit::ns(Per::Lap),
        p.procs as f64,
    )
    .param("mode", p.mode.name())
    .param("procs", p.procs)
    .param("size", p.size)
    .param("size_label", fmt_size(p.size))
    .param("access", p.access.name())
    .param("stride", p.stride)
    .param("cpus", vec![p.cpu])
    .param("policy", p.policy.name())
    .param("fits_per_process", l.per_process.clone())
    .param("fits_total", l.total.clone())
    .events_set(EventSet::None)
    .note(format!(
        "ring of {} {} on CPU {} passing a token through pipes; each walks its own {} \
             ({}, one word per {} B) on every receive. Per switch = (lap − the same {} pipe \
             writes+reads and walks in one thread, their laps interleaved with the ring's in \
             every sample) / {} switches: \
             lmbench lat_ctx's definition. Working sets fit in {} per process, {} in total.",
        p.procs,
        match p.mode {
            Mode::Process => "processes",
            Mode::Thread => "threads",
        },
        p.cpu,
        fmt_size(p.size),
        p.access.name(),
        p.stride,
        p.procs,
        p.procs,
        l.per_process,
        l.total
    ))
    .note(match p.policy {
        Policy::Batch => {
            "members run SCHED_BATCH, so a woken member never preempts the sender before \
                 it blocks in its read: every hop is one voluntary switch, as lat_ctx assumes."
        }
        Policy::Normal => {
            "members run SCHED_OTHER as lat_ctx does: a woken member may preempt the \
                 sender; with N > 2 the sender is then scheduled again only to block, so a hop \
                 holds 1 to 2 switches (counted in sw/hop). The figure is per hop, as lat_ctx \
                 reports it; per counted switch it is lower by that factor."
        }
    })
    .note(definition_label(
        p.policy.name(),
        p.access.name(),
        p.stride as u64,
    ));
    spec
}

/// The sweep's expectations: switches per hop as the policy allows, no migrations, everyone
/// on the requested CPU, and no page faults once warmed up (a fault inside the window would
/// be a cost that is not a switch).
///
/// Under SCHED_BATCH every hop is one switch (±5%). Under normal scheduling a woken member may
/// preempt the member that woke it before that one blocks in its read; with N > 2 the
/// preempted member is not the next to receive the token, so it is scheduled again later only
/// to block: one extra switch per preemption. A hop then costs 1 to 2 switches, the time per
/// hop is still lat_ctx's figure (lat_ctx divides by hops, not by switches), and the counted
/// switches say how many each hop held. With N = 2 the preempted member is the next receiver,
/// so a hop is one switch under either policy.
pub fn sweep_verdict(ev: &Evidence, procs: usize, policy: Policy) -> Verdict {
    let n = procs as f64;
    let (sw, source) = checks::switches_per_op(ev);
    let it = ev.rusage.iterations.max(1) as f64;
    let vol = ev.rusage.total.nvcsw as f64 / it / n;
    let invol = ev.rusage.total.nivcsw as f64 / it / n;
    let mut c = switches_per_hop_check(sw / n, procs, policy);
    c.reading = crate::model::Reading::Switches {
        per_op: Num::one(sw / n),
        source,
        digits: 3,
        per_sample: None,
        split: Some([Num::one(vol), Num::one(invol)]),
    };
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
    let f = crate::model::Check::new(
        crate::model::CheckKind::MinorFaultsPerSwitch,
        crate::model::Bound::AtMost(FAULTS_PER_SWITCH),
        crate::model::Reading::values(&[per, minflt]),
        per <= FAULTS_PER_SWITCH || minflt <= STRAY_FAULTS,
    );
    // A woken member may preempt the one that woke it (an involuntary switch) instead of
    // waiting for it to block: either way one member leaves the CPU per hop. Only a share of
    // voluntary switches far below one half means the members were not taking turns.
    let mut warnings = Vec::new();
    if vol < 0.25 && sw / n > 0.5 {
        warnings.push(crate::model::Remark::ring_competed(vol, invol));
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

/// Minor faults per switch a ring may take, and the stray faults in all its windows that
/// are no per-switch cost however few switches they held.
pub const FAULTS_PER_SWITCH: f64 = 0.01;
pub const STRAY_FAULTS: f64 = 2.0;

/// The switches-per-hop check of [`sweep_verdict`]: exactly one (±5%) where the policy or
/// the ring size rules out the extra switch of a preempted waker, else 1 to 2 (±5%).
pub fn switches_per_hop_check(per_hop: f64, procs: usize, policy: Policy) -> crate::model::Check {
    const NAME: &str = "context switches per hop";
    if policy == Policy::Batch || procs <= 2 {
        return checks::near(NAME, 1.0, 0.05, per_hop);
    }
    crate::model::Check::new(
        crate::model::CheckKind::SwitchesPerHop,
        crate::model::Bound::Between { lo: 0.95, hi: 2.1 },
        crate::model::Reading::value(per_hop),
        (0.95..=2.1).contains(&per_hop),
    )
}

/// What a definition choice means next to lat_ctx's (normal scheduling, every word read):
/// "lat_ctx's definition" or the differences, for every header and note.
pub fn definition_label(policy: &str, access: &str, stride: u64) -> String {
    let mut diffs = Vec::new();
    if policy != Policy::Normal.name() {
        diffs.push(format!("{policy} scheduling (lat_ctx: normal)"));
    }
    if access != Access::Read.name() {
        diffs.push(format!("{access} walk (lat_ctx: read)"));
    }
    if stride != 8 {
        diffs.push(format!("one word per {stride} B (lat_ctx: every word)"));
    }
    if diffs.is_empty() {
        "normal scheduling, every word read: lmbench lat_ctx's definition".into()
    } else {
        format!("not lat_ctx's definition: {}", diffs.join(", "))
    }
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
    use crate::model::{Check, EventReading, Placement, Status};

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

    fn sweep_verdict_b(ev: &Evidence, procs: usize) -> Verdict {
        sweep_verdict(ev, procs, Policy::Batch)
    }

    #[test]
    fn normal_scheduling_allows_the_preempted_wakers_extra_switch_only_beyond_two() {
        // N = 4, 1.33 switches per hop: valid under normal, not under batch.
        let ev = evidence(1000, 3460, 1870, 0, [0, 0]);
        assert!(sweep_verdict(&ev, 4, Policy::Normal).0[0].ok);
        assert!(!sweep_verdict(&ev, 4, Policy::Batch).0[0].ok);
        // N = 2 under normal still wants exactly one per hop.
        assert!(!switches_per_hop_check(1.33, 2, Policy::Normal).ok);
        assert!(switches_per_hop_check(1.0, 2, Policy::Normal).ok);
        // Beyond two per hop, or none, fails under normal too.
        assert!(!switches_per_hop_check(2.5, 8, Policy::Normal).ok);
        assert!(!switches_per_hop_check(0.6, 8, Policy::Normal).ok);
    }

    #[test]
    fn every_deviation_from_lat_ctx_is_named() {
        assert_eq!(
            definition_label("normal", "read", 8),
            "normal scheduling, every word read: lmbench lat_ctx's definition"
        );
        let l = definition_label("batch", "write", 64);
        assert!(l.starts_with("not lat_ctx's definition"), "{l}");
        assert!(
            l.contains("batch scheduling") && l.contains("write walk"),
            "{l}"
        );
        assert!(l.contains("one word per 64 B"), "{l}");
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
        let (c, _) = sweep_verdict(&ev, 2, Policy::Batch);
        let f = c
            .iter()
            .find(|c| crate::report::checks::name(c) == "minor faults per switch")
            .unwrap();
        assert!(!f.ok, "{f:?}");
        assert_eq!(
            crate::report::checks::line(f),
            "minor faults per switch: expected ≤ 0.01 (or ≤ 2 in all), observed 0.02000 (40 in \
             the measured windows)"
        );
    }

    #[test]
    fn the_hop_reading_reads_as_its_sentence_did() {
        // The reading as the verdict wrote it when it was a sentence.
        let sentence = |ev: &Evidence, procs: usize| {
            let n = procs as f64;
            let (sw, source) = checks::switches_per_op(ev);
            let it = ev.rusage.iterations.max(1) as f64;
            let vol = ev.rusage.total.nvcsw as f64 / it / n;
            let invol = ev.rusage.total.nivcsw as f64 / it / n;
            format!(
                "{:.3} ({}; voluntary {vol:.3}, involuntary {invol:.3})",
                sw / n,
                crate::report::checks::switch_source(source)
            )
        };
        let mut by_perf = evidence(1000, 1500, 700, 0, [0, 0]);
        by_perf.events.insert(
            "context-switches".into(),
            EventReading {
                per_op: Some(4.4),
                supported: true,
                ..Default::default()
            },
        );
        for (ev, procs, policy, ok) in [
            (evidence(1000, 2000, 0, 0, [0, 0]), 2, Policy::Batch, true),
            (
                evidence(1000, 3460, 1870, 0, [0, 0]),
                4,
                Policy::Normal,
                true,
            ),
            (
                evidence(1000, 3460, 1870, 0, [0, 0]),
                4,
                Policy::Batch,
                false,
            ),
            (evidence(7, 13, 5, 0, [0, 0]), 3, Policy::Normal, false),
            (by_perf, 2, Policy::Batch, false),
        ] {
            let c = &sweep_verdict(&ev, procs, policy).0[0];
            assert_eq!(c.ok, ok, "{c:?}");
            let back: Check = serde_json::from_str(&serde_json::to_string(c).unwrap()).unwrap();
            assert_eq!(&back, c);
            let old = format!(
                "context switches per hop: expected {}, observed {}",
                crate::report::checks::expected(c),
                sentence(&ev, procs)
            );
            assert_eq!(crate::report::checks::line(&back), old);
        }
    }

    #[test]
    fn verdict_wants_one_switch_per_hop_and_no_faults() {
        let (c, w) = sweep_verdict_b(&evidence(1000, 2000, 0, 0, [0, 0]), 2);
        assert!(c.iter().all(|c| c.ok), "{c:?}");
        assert!(w.is_empty());
        // Half the switches missing: the token did not go round as claimed.
        let (c, _) = sweep_verdict_b(&evidence(1000, 1000, 0, 0, [0, 0]), 2);
        assert!(!c[0].ok);
        // Faults during measurement.
        let (c, _) = sweep_verdict_b(&evidence(1000, 2000, 0, 50, [0, 0]), 2);
        assert!(!c[4].ok, "{:?}", c[4]);
        // ...but a stray one over a whole point is not a per-switch cost.
        let (c, _) = sweep_verdict_b(&evidence(10, 20, 0, 1, [0, 0]), 2);
        assert!(c[4].ok, "{:?}", c[4]);
        let (c, _) = sweep_verdict_b(&evidence(10, 20, 0, 5, [0, 0]), 2);
        assert!(!c[4].ok, "{:?}", c[4]);
        // A member on another CPU.
        let (c, _) = sweep_verdict_b(&evidence(1000, 2000, 0, 0, [0, 1]), 2);
        assert!(!c[2].ok && !c[3].ok);
        // Involuntary switches are warned about.
        let (_, w) = sweep_verdict_b(&evidence(1000, 1000, 1000, 0, [0, 0]), 2);
        assert!(w.is_empty());
        let (_, w) = sweep_verdict_b(&evidence(1000, 100, 1900, 0, [0, 0]), 2);
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
        assert!(sweep_verdict(&ev, 2, Policy::Batch).0[0].ok);
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
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        let ctx = Context::new(cfg);
        let cpu = *crate::machine::affinity::allowed_cpus().last().unwrap();
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
        assert!(m.is(PROBE), "{}", m.probe);
        assert_eq!(m.units_per_iteration, 2.0);
        assert_eq!(m.params["fits_per_process"], "L1d");
        assert!(m.baseline.is_some() && m.difference.is_some());
        assert_eq!(m.samples.len(), m.baseline_samples.len());
        assert!(m.raw.median > 0.0);
        assert!(m.evidence.rusage.iterations > 0);
        assert_eq!(m.evidence.cpus.len(), 2);
        // The figure attached no counters; the evidence pass after it did, and says so.
        assert!(m.evidence_samples.is_empty());
        assert!(m.evidence.events.contains_key("context-switches"));
        assert!(m
            .notes
            .iter()
            .any(|n| n.starts_with("perf counts come from")));
        // The overhead ran inside the figure's samples, and the notes say that, not the
        // engine's "between the evidence windows".
        assert!(m.notes.iter().any(|n| n == INTERLEAVED_NOTE));
        assert!(!m.notes.iter().any(|n| n == BASELINE_NOTE));
        let names: Vec<String> = m.checks.iter().map(crate::report::checks::name).collect();
        assert!(names.iter().any(|n| n == "context switches per hop"));
        assert!(names.iter().any(|n| n == "minor faults per switch"));
        // Placement is forced by pinning, so it must hold whatever the load.
        assert!(
            m.checks
                .iter()
                .find(|c| crate::report::checks::name(c) == "placement")
                .unwrap()
                .ok
        );
        match m.status {
            Status::Ok => assert!(m.value.as_ref().unwrap().median > 0.0),
            Status::Unstable => assert!(m.value.as_ref().unwrap().is_unstable()),
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
                .all(|c| checks::contested(c)
                    || (contested && follows(&crate::report::checks::name(c)))),
            "{failed:?} {:?} {:?}",
            m.evidence.events.get("cpu-migrations"),
            m.evidence.cpus
        );
        assert_eq!(m.valid, failed.is_empty());
    }
}
