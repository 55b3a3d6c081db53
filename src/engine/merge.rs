//! One measurement from its rounds. When a run spreads each measurement's rounds across the
//! whole plan (engine::plan runs it in passes, one round of every item per pass), every
//! call of a job returns a Measurement of one round; this module folds them into the one
//! Measurement the round-by-round sampler would have produced, so that a noise episode that
//! hits one pass shows up as one round whose median is off — which widens the interval —
//! instead of shifting every round of a probe together.
//!
//! - samples (raw, baseline, evidence) are concatenated with their round tags, and the value
//!   and intervals re-derived exactly as for one call (derive::derive_in_rounds): the figure
//!   is the pooled median, the interval the distribution-free one widened by the t interval
//!   on the rounds' medians;
//! - checks are judged per round (each round's evidence against the probe's expectations):
//!   a check that failed in any round fails the measurement and says in which round;
//! - evidence counts are summed and per-op figures recomputed from the sums;
//! - warnings and notes that follow from the samples alone are recomputed; the others are
//!   deduplicated.

use super::derive::derive_judged;
use super::measure::derived_remarks;
use super::sampler::{weakest, StopReason};
use crate::evidence::procfs::accumulate;
use crate::model::Remark;
use crate::model::{
    Check, EventReading, Evidence, Measurement, ParamKind, ParticipantRusage, Placement, Status,
};

/// Merge the Measurements of one item's rounds (`(round, measurement)`, in pass order; the
/// measurements share probe and inputs). One round is returned as it is. None when the
/// merged samples cannot be derived (no samples at all).
pub fn merge_rounds(rounds: Vec<(u32, Measurement)>) -> Option<Measurement> {
    if rounds.len() <= 1 {
        return rounds.into_iter().next().map(|(_, m)| m);
    }
    // Remarks derived from one round's samples describe that round only: drop them, and
    // derive them again from the merged samples below.
    let own: Vec<(u32, Measurement)> = rounds
        .into_iter()
        .map(|(r, mut m)| {
            let (w, n) = remarks_of(&m);
            m.warnings.retain(|x| !w.contains(x));
            m.notes.retain(|x| !n.contains(x));
            (r, m)
        })
        .collect();
    let first = &own[0].1;
    let mut out = Measurement {
        samples: Vec::new(),
        sample_rounds: Vec::new(),
        sample_canary: Vec::new(),
        baseline_samples: Vec::new(),
        evidence_samples: Vec::new(),
        warnings: Vec::new(),
        notes: Vec::new(),
        checks: Vec::new(),
        ..first.clone()
    };
    let mut stop = StopReason::Converged;
    for (_, m) in &own {
        out.samples.extend(&m.samples);
        out.sample_rounds.extend(&m.sample_rounds);
        out.sample_canary.extend(&m.sample_canary);
        out.baseline_samples.extend(&m.baseline_samples);
        out.evidence_samples.extend(&m.evidence_samples);
        // Iterations are auto-scaled at every call; the smallest is the conservative one.
        out.iterations_per_sample = out.iterations_per_sample.min(m.iterations_per_sample);
        out.baseline_iterations_per_sample = out
            .baseline_iterations_per_sample
            .min(m.baseline_iterations_per_sample);
        // A probe's own fixed count says nothing of convergence: as the budget.
        let said = match m.stop_reason {
            Some(r @ (StopReason::Converged | StopReason::SampleLimit)) => r,
            _ => StopReason::Budget,
        };
        stop = weakest(stop, said);
        push_unique(&mut out.warnings, &m.warnings);
        push_unique(&mut out.notes, &m.notes);
    }
    out.stop_reason = Some(stop);
    out.checks = merge_checks(&own);
    out.evidence = merge_evidence(own.iter().map(|(_, m)| &m.evidence));
    judge_pooled(&mut out.checks, &own, &out.evidence);
    // A round that held its CPU but for a little ("held the CPU for 3.6%") says less than
    // one where others ran in the participants' place (its check failed, and so does the
    // merged one): the two would say one thing twice with different figures.
    if out
        .warnings
        .iter()
        .any(|w| w.kind == crate::model::RemarkKind::CompetitorRan)
    {
        out.warnings
            .retain(|w| w.kind != crate::model::RemarkKind::CompetitorHeld);
    }
    // The rounds' kernel-entry warnings give way to the one the merged verdict supports.
    out.warnings
        .retain(|w| !super::checks::is_entered_kernel(w));
    out.warnings
        .extend(super::checks::entered_kernel(&out.checks, &out.evidence));
    for note in differing_observations(&own) {
        push_unique(&mut out.notes, &[note]);
    }
    // The fastest canary reading of the whole run so far judges every round's samples.
    out.canary_fastest = own
        .iter()
        .filter_map(|(_, m)| m.canary_fastest)
        .chain(super::canary::best())
        .reduce(f64::min)
        .filter(|_| out.sample_canary.len() == out.samples.len() && !out.samples.is_empty());
    let judged = derive_judged(
        super::derive::Samples::of(&out),
        out.canary_fastest,
        out.units_per_iteration,
        &out.raw_unit,
    )?;
    let d = judged.derived;
    push_unique(&mut out.warnings, judged.warning.as_slice());
    let (w, n) = derived_remarks(&d, &judged.raw, &out.evidence_samples, &out.raw_unit);
    push_unique(&mut out.warnings, &w);
    push_unique(&mut out.notes, &n);
    out.warnings = crate::model::fold_remarks(&out.warnings);
    out.raw = d.raw;
    out.baseline = d.baseline;
    out.difference = d.difference;
    out.value = d.value;
    out.valid = out.checks.iter().all(|c| c.ok);
    out.status = if out.valid { d.status } else { Status::Invalid };
    Some(out)
}

/// The sample-derived warnings and notes one round's measurement carries.
fn remarks_of(m: &Measurement) -> (Vec<Remark>, Vec<String>) {
    match derive_judged(
        super::derive::Samples::of(m),
        m.canary_fastest,
        m.units_per_iteration,
        &m.raw_unit,
    ) {
        Some(j) => {
            let (mut w, n) = derived_remarks(&j.derived, &j.raw, &m.evidence_samples, &m.raw_unit);
            w.extend(j.warning);
            (w, n)
        }
        None => (Vec::new(), Vec::new()),
    }
}

fn push_unique<T: Clone + PartialEq>(to: &mut Vec<T>, from: &[T]) {
    for x in from {
        if !to.contains(x) {
            to.push(x.clone());
        }
    }
}

/// Checks by kind and name, in first-seen order. A check passes only if it passed in every
/// round that judged it; a failed one keeps the reading of each round that failed.
fn merge_checks(rounds: &[(u32, Measurement)]) -> Vec<Check> {
    let mut kinds: Vec<&Check> = Vec::new();
    for (_, m) in rounds {
        for c in &m.checks {
            if !kinds.iter().any(|k| k.same_as(c)) {
                kinds.push(c);
            }
        }
    }
    kinds
        .into_iter()
        .map(|kind| {
            let seen: Vec<(u32, &Check)> = rounds
                .iter()
                .flat_map(|(r, m)| m.checks.iter().filter(|c| c.same_as(kind)).map(|c| (*r, c)))
                .collect();
            let failed: Vec<&(u32, &Check)> = seen.iter().filter(|(_, c)| !c.ok).collect();
            let shown: Vec<&(u32, &Check)> = if failed.is_empty() {
                seen.iter().collect()
            } else {
                failed
            };
            let all_same = shown.iter().all(|(_, c)| c.reading == shown[0].1.reading);
            Check {
                reading: shown[0].1.reading.clone(),
                rounds: if all_same && shown.len() == seen.len() {
                    Vec::new()
                } else {
                    shown.iter().map(|(r, c)| (*r, c.reading.clone())).collect()
                },
                ok: seen.iter().all(|(_, c)| c.ok),
                ..seen[0].1.clone()
            }
        })
        .collect()
}

/// A check that no round could decide for lack of time (the kernel-entry check needs 50 ms
/// of CPU time, a round may have less) is judged again on the pooled evidence; one that a
/// round decided and failed stays failed.
fn judge_pooled(checks: &mut [Check], rounds: &[(u32, Measurement)], pooled: &Evidence) {
    for c in checks.iter_mut() {
        let decided_failure = rounds.iter().any(|(_, m)| {
            m.checks
                .iter()
                .any(|x| x.same_as(c) && !x.ok && !super::checks::undecided(x))
        });
        if decided_failure {
            continue;
        }
        if let Some(again) = super::checks::kernel_entry_again(c, pooled) {
            *c = again;
        }
    }
}

/// Evidence of all rounds: counts summed (peak RSS the largest), per-op figures recomputed
/// from the sums, participants and placements of every round kept (partners are new
/// processes at every round), occupancy windows pooled.
pub fn merge_evidence<'a>(all: impl Iterator<Item = &'a Evidence>) -> Evidence {
    let mut out = Evidence::default();
    let mut denominators: std::collections::BTreeMap<String, f64> = Default::default();
    // The timed window of the counts: the rounds' windows added up, when every round timed
    // its own exactly.
    let mut wall: Option<u64> = Some(0);
    for ev in all {
        wall = wall.zip(ev.rusage.wall_ns).map(|(a, b)| a + b);
        accumulate(&mut out.rusage.total, &ev.rusage.total);
        out.rusage.iterations += ev.rusage.iterations;
        for p in &ev.rusage.participants {
            merge_participant(&mut out.rusage.participants, p);
        }
        for (name, r) in &ev.events {
            // The operations this reading's per-op figure was divided by (its own windows),
            // else the rusage iterations.
            let ops = match (r.total, r.per_op) {
                (Some(t), Some(p)) if p > 0.0 => t / p,
                _ => ev.rusage.iterations as f64,
            };
            *denominators.entry(name.clone()).or_default() += ops;
            match out.events.get_mut(name) {
                None => {
                    out.events.insert(name.clone(), r.clone());
                }
                Some(o) => merge_event(o, r),
            }
        }
        for p in &ev.cpus {
            merge_placement(&mut out.cpus, p);
        }
        match (&mut out.occupancy, &ev.occupancy) {
            (Some(o), Some(n)) => o.absorb(n),
            (None, Some(n)) => out.occupancy = Some(n.clone()),
            _ => {}
        }
        match (&mut out.interrupts, &ev.interrupts) {
            (Some(o), Some(n)) => o.absorb(n),
            (None, Some(n)) => out.interrupts = Some(n.clone()),
            _ => {}
        }
    }
    out.rusage.wall_ns = wall.filter(|_| out.rusage.iterations > 0);
    for (name, r) in out.events.iter_mut() {
        if let (Some(t), Some(&ops)) = (r.total, denominators.get(name)) {
            if r.per_op.is_some() && ops > 0.0 {
                r.per_op = Some(t / ops);
            }
        }
    }
    out
}

fn merge_event(o: &mut EventReading, r: &EventReading) {
    o.total = match (o.total, r.total) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    o.per_op = o.per_op.and(r.per_op);
    o.scaled |= r.scaled;
    o.supported &= r.supported;
    if o.reason.is_none() {
        o.reason = r.reason.clone();
    }
}

fn merge_participant(all: &mut Vec<ParticipantRusage>, p: &ParticipantRusage) {
    match all
        .iter_mut()
        .find(|q| q.role == p.role && q.pid == p.pid && q.tid == p.tid)
    {
        None => all.push(p.clone()),
        Some(q) => accumulate(&mut q.rusage, &p.rusage),
    }
}

/// One placement per participant where the rounds agree: the same task seen again (this
/// thread, in every round) where it ended, or the same role (a partner is a new task at every
/// round; the first round's pid is kept) seen at the same CPUs. A round that saw its
/// participant elsewhere keeps its own entry (its placement check already failed there).
fn merge_placement(all: &mut Vec<Placement>, p: &Placement) {
    let same_task = |q: &Placement| q.pid == p.pid && q.tid == p.tid && q.end == p.start;
    let same_cpus = |q: &Placement| q.start == p.start && q.end == p.end;
    match all
        .iter_mut()
        .find(|q| q.role == p.role && q.requested == p.requested && (same_task(q) || same_cpus(q)))
    {
        None => all.push(p.clone()),
        Some(q) => {
            q.end = p.end;
            q.affinity_held &= p.affinity_held;
        }
    }
}

/// Observed facts (parameters the machine decides, e.g. the share of huge pages) that were
/// not the same in every round: the first round's value stays in `params`, and a note says
/// what the others saw.
fn differing_observations(rounds: &[(u32, Measurement)]) -> Vec<String> {
    let first = &rounds[0].1;
    first
        .params_of(ParamKind::Observed)
        .into_iter()
        .filter_map(|(k, v)| {
            let others: Vec<String> = rounds
                .iter()
                .map(|(r, m)| (r, m.params.get(&k)))
                .filter(|(_, x)| *x != Some(&v))
                .map(|(r, x)| {
                    format!(
                        "round {}: {}",
                        r + 1,
                        x.map_or("none".to_string(), |x| x.to_string())
                    )
                })
                .collect();
            (!others.is_empty()).then(|| {
                format!(
                    "observed {k} differed between rounds ({v} in round {}; {}): the \
                     parameter shows the first",
                    rounds[0].0 + 1,
                    others.join("; ")
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::derive::derive_in_rounds;
    use crate::engine::measure::{from_samples, Spec};
    use crate::model::{Occupancy, Rusage};
    use crate::units::{Per, Unit};

    /// One round's measurement: `samples` tagged with `round`, checks as given, evidence
    /// with `iters` iterations and `switches` context switches counted by perf.
    fn round(
        round: u32,
        samples: &[f64],
        checks: Vec<Check>,
        iters: u64,
        switches: f64,
    ) -> Measurement {
        let mut ev = Evidence::default();
        ev.rusage.iterations = iters;
        ev.rusage.total = Rusage {
            nvcsw: 2 * iters,
            ..Rusage::default()
        };
        ev.events.insert(
            "context-switches".into(),
            EventReading {
                per_op: Some(switches / (iters as f64 / 4.0)),
                total: Some(switches),
                scaled: false,
                supported: true,
                reason: None,
            },
        );
        // This thread, and a partner that is a new process at every round.
        let placed = |role: &str, pid: i32| Placement {
            role: role.into(),
            pid,
            tid: pid,
            requested: vec![1],
            start: Some(1),
            end: Some(1),
            affinity_held: true,
        };
        ev.cpus = vec![
            placed("measuring thread", 10),
            placed("partner", 100 + round as i32),
        ];
        ev.occupancy = Some(Occupancy {
            wall_ns: 1000,
            oncpu_ns: 990,
            cpus: 1,
            share: 0.99,
            ..Occupancy::default()
        });
        let spec = Spec::new(
            "ctx.pipe",
            Unit::ns(Per::Switch),
            Unit::ns(Per::RoundTrip),
            2.0,
        )
        .param("mode", "process");
        let mut m = from_samples(
            spec,
            crate::engine::measure::OwnSamples {
                samples: samples.to_vec(),
                iterations: 100,
            },
            StopReason::Converged,
            ev,
            (checks, vec![Remark::legacy("shared warning")]),
        )
        .unwrap();
        m.sample_rounds = vec![round; samples.len()];
        m
    }

    fn ok(name: &str, observed: &str) -> Check {
        Check::text(name, "e", observed, true)
    }

    fn spread(centre: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| centre + (i % 5) as f64 * 0.2 - 0.4)
            .collect()
    }

    #[test]
    fn a_check_failing_in_round_two_fails_the_merged_measurement() {
        let mut bad = ok("switches per round trip", "2.400");
        bad.ok = false;
        let m = merge_rounds(vec![
            (
                0,
                round(
                    0,
                    &spread(100.0, 20),
                    vec![ok("switches per round trip", "2.000")],
                    400,
                    200.0,
                ),
            ),
            (1, round(1, &spread(100.0, 20), vec![bad], 400, 240.0)),
            (
                2,
                round(
                    2,
                    &spread(100.0, 20),
                    vec![ok("switches per round trip", "2.000")],
                    400,
                    200.0,
                ),
            ),
        ])
        .unwrap();
        assert!(!m.valid);
        assert_eq!(m.status, Status::Invalid);
        assert_eq!(m.checks.len(), 1);
        assert!(!m.checks[0].ok);
        assert_eq!(
            crate::report::checks::observed(&m.checks[0]),
            "round 2: 2.400"
        );
        // Checks that passed everywhere stay one passing check.
        let m = merge_rounds(vec![
            (
                0,
                round(0, &spread(100.0, 20), vec![ok("a", "1")], 400, 200.0),
            ),
            (
                1,
                round(1, &spread(100.0, 20), vec![ok("a", "1")], 400, 200.0),
            ),
        ])
        .unwrap();
        assert!(m.valid && m.checks[0].ok && crate::report::checks::observed(&m.checks[0]) == "1");
    }

    #[test]
    fn a_check_too_short_to_decide_per_round_is_judged_on_the_pooled_rounds() {
        let short = |r: u32, utime: u64, stime: u64| {
            let mut ev = Evidence::default();
            ev.rusage.total.utime_us = utime;
            ev.rusage.total.stime_us = stime;
            let mut m = round(
                r,
                &spread(100.0, 10),
                vec![crate::engine::checks::kernel_entry(&ev, true)],
                40,
                20.0,
            );
            m.evidence.rusage.total.utime_us = utime;
            m.evidence.rusage.total.stime_us = stime;
            m
        };
        // 30 ms per round, 60% system: each round undecided, pooled 90 ms decide "enters".
        let m = merge_rounds((0..3).map(|r| (r, short(r, 12_000, 18_000))).collect()).unwrap();
        assert!(m.valid, "{:?}", m.checks);
        // A round that decided and failed (5% system time in 60 ms) keeps it failed.
        let m = merge_rounds(vec![
            (0, short(0, 12_000, 18_000)),
            (1, short(1, 57_000, 3_000)),
            (2, short(2, 12_000, 18_000)),
        ])
        .unwrap();
        assert!(!m.valid);
    }

    #[test]
    fn the_vdso_warning_follows_the_merged_verdict_not_one_round() {
        use crate::engine::checks::{entered_kernel, is_entered_kernel, kernel_entry};
        // A clock_gettime loop: rounds of 30 ms, each too short to decide.
        let vdso = |r: u32, utime: u64, stime: u64| {
            let mut ev = Evidence::default();
            ev.rusage.total.utime_us = utime;
            ev.rusage.total.stime_us = stime;
            let checks = vec![kernel_entry(&ev, false)];
            let mut m = round(r, &spread(26.5, 10), checks, 40, 20.0);
            m.evidence.rusage.total.utime_us = utime;
            m.evidence.rusage.total.stime_us = stime;
            // What a round's verdict said before (one window's failure): it must not survive.
            m.warnings.push(Remark::legacy(
                "the loop entered the kernel (undecided window) where ...",
            ));
            m
        };
        let m = merge_rounds((0..3).map(|r| (r, vdso(r, 30_000, 0))).collect()).unwrap();
        assert!(m.valid, "{:?}", m.checks);
        assert!(
            !m.warnings.iter().any(is_entered_kernel),
            "{:?}",
            m.warnings
        );
        // Pooled, the rounds show 60% system time: the verdict fails and the warning says so.
        let m = merge_rounds((0..3).map(|r| (r, vdso(r, 12_000, 18_000))).collect()).unwrap();
        assert!(!m.valid);
        let w: Vec<&Remark> = m.warnings.iter().filter(|w| is_entered_kernel(w)).collect();
        assert_eq!(w.len(), 1, "{:?}", m.warnings);
        assert_eq!(Some(w[0].clone()), entered_kernel(&m.checks, &m.evidence));
    }

    #[test]
    fn merged_samples_give_the_value_of_sampling_them_in_one_call() {
        let parts = [spread(100.0, 12), spread(101.0, 15), spread(99.5, 9)];
        let merged = merge_rounds(
            parts
                .iter()
                .enumerate()
                .map(|(r, s)| (r as u32, round(r as u32, s, vec![ok("a", "1")], 400, 200.0)))
                .collect(),
        )
        .unwrap();
        let all: Vec<f64> = parts.concat();
        let tags: Vec<u32> = parts
            .iter()
            .enumerate()
            .flat_map(|(r, s)| std::iter::repeat_n(r as u32, s.len()))
            .collect();
        let one = derive_in_rounds(&all, &[], &tags, 2.0).unwrap();
        assert_eq!(merged.samples, all);
        assert_eq!(merged.sample_rounds, tags);
        assert_eq!(merged.raw, one.raw);
        assert_eq!(merged.value, one.value);
        // Evidence: counts summed, per-op recomputed from the sums, windows pooled.
        assert_eq!(merged.evidence.rusage.iterations, 1200);
        assert_eq!(merged.evidence.rusage.total.nvcsw, 2400);
        let cs = &merged.evidence.events["context-switches"];
        assert_eq!(cs.total, Some(600.0));
        assert!((cs.per_op.unwrap() - 2.0).abs() < 1e-12, "{cs:?}");
        assert_eq!(merged.evidence.occupancy.as_ref().unwrap().wall_ns, 3000);
        // One placement per participant when the rounds agree.
        assert_eq!(merged.evidence.cpus.len(), 2, "{:?}", merged.evidence.cpus);
        // A warning every round gave is given once.
        assert_eq!(
            merged
                .warnings
                .iter()
                .filter(|w| **w == Remark::legacy("shared warning"))
                .count(),
            1
        );
    }

    #[test]
    fn a_round_whose_median_is_off_widens_the_interval() {
        let steady = merge_rounds(
            (0..3)
                .map(|r| {
                    (
                        r,
                        round(r, &spread(100.0, 20), vec![ok("a", "1")], 400, 200.0),
                    )
                })
                .collect(),
        )
        .unwrap();
        let off = merge_rounds(vec![
            (
                0,
                round(0, &spread(100.0, 20), vec![ok("a", "1")], 400, 200.0),
            ),
            (
                1,
                round(1, &spread(130.0, 20), vec![ok("a", "1")], 400, 200.0),
            ),
            (
                2,
                round(2, &spread(100.0, 20), vec![ok("a", "1")], 400, 200.0),
            ),
        ])
        .unwrap();
        let (s, o) = (steady.value.unwrap(), off.value.unwrap());
        assert!(
            o.ci95[1] - o.ci95[0] > 5.0 * (s.ci95[1] - s.ci95[0]),
            "{s:?} {o:?}"
        );
        // The interval holds the off round's median too.
        assert!(o.ci95[1] * 2.0 >= 130.0, "{o:?}");
    }

    #[test]
    fn sample_derived_warnings_are_derived_again_not_repeated() {
        // One sample per round: each round carries "1 sample, no interval"; merged there are
        // three samples, so the warning goes.
        let m = merge_rounds(
            (0..3)
                .map(|r| (r, round(r, &[100.0 + r as f64], vec![ok("a", "1")], 4, 2.0)))
                .collect(),
        )
        .unwrap();
        assert!(
            !m.warnings
                .iter()
                .any(|w| w.kind == crate::model::RemarkKind::OneSample),
            "{:?}",
            m.warnings
        );
        assert_eq!(m.samples.len(), 3);
    }

    #[test]
    fn a_round_that_saw_its_partner_elsewhere_keeps_its_own_placement() {
        let a = round(0, &spread(100.0, 10), vec![ok("a", "1")], 40, 20.0);
        let mut b = round(1, &spread(100.0, 10), vec![ok("a", "1")], 40, 20.0);
        b.evidence.cpus[1].end = Some(0);
        let m = merge_rounds(vec![(0, a), (1, b)]).unwrap();
        assert_eq!(m.evidence.cpus.len(), 3, "{:?}", m.evidence.cpus);
    }

    #[test]
    fn observed_facts_that_differ_between_rounds_are_noted() {
        let mut a = round(0, &spread(100.0, 10), vec![ok("a", "1")], 40, 20.0);
        let mut b = round(1, &spread(100.0, 10), vec![ok("a", "1")], 40, 20.0);
        a.params
            .insert("huge_page_share".into(), serde_json::json!(0.9));
        b.params
            .insert("huge_page_share".into(), serde_json::json!(0.4));
        let m = merge_rounds(vec![(0, a), (1, b)]).unwrap();
        assert_eq!(m.params["huge_page_share"], serde_json::json!(0.9));
        assert!(
            m.notes
                .iter()
                .any(|n| n.contains("huge_page_share differed") && n.contains("round 2: 0.4")),
            "{:?}",
            m.notes
        );
    }

    /// `m` tagged with canary readings and its round's canary remark, as the sampler leaves it.
    fn tagged(mut m: Measurement, reading: f64, fastest: f64) -> Measurement {
        m.sample_canary = vec![reading; m.samples.len()];
        m.canary_fastest = Some(fastest);
        let j = derive_judged(
            crate::engine::derive::Samples::of(&m),
            m.canary_fastest,
            m.units_per_iteration,
            &m.raw_unit,
        )
        .unwrap();
        m.warnings.extend(j.warning);
        m
    }

    fn canary_remarks(m: &Measurement) -> Vec<&Remark> {
        use crate::model::RemarkKind as K;
        m.warnings
            .iter()
            .filter(|w| {
                matches!(
                    w.kind,
                    K::CoreSlowedLeftOut | K::CoreSlowedTooFewFast | K::CoreSlowedKept
                )
            })
            .collect()
    }

    #[test]
    fn a_round_slowed_through_leaves_no_canary_remark_of_its_own_in_the_merge() {
        // Two rounds slowed through: each says "too few fast", with no fast median (NaN).
        let a = tagged(round(0, &spread(200.0, 4), vec![], 40, 20.0), 20.0, 10.0);
        let b = tagged(round(1, &spread(200.0, 4), vec![], 40, 20.0), 20.0, 10.0);
        let c = tagged(round(2, &spread(100.0, 10), vec![], 40, 20.0), 10.0, 10.0);
        assert_eq!(canary_remarks(&a).len(), 1);
        let m = merge_rounds(vec![(0, a), (1, b), (2, c)]).unwrap();
        // Only the split of the merged samples speaks: never a round's beside it.
        let merged = derive_judged(
            crate::engine::derive::Samples::of(&m),
            m.canary_fastest,
            m.units_per_iteration,
            &m.raw_unit,
        )
        .unwrap()
        .warning
        .unwrap();
        assert_eq!(canary_remarks(&m), [&merged], "{:?}", m.warnings);
    }

    /// `run --quick`'s ctx.pipe thread row: one round held its CPU but for 3.6%, the others
    /// lost 43–46% to other tasks; the row said both "other tasks ran in the participants'
    /// place 43–46%" and "other tasks held the CPU for 3.6%".
    #[test]
    fn others_that_ran_in_a_rounds_place_leave_no_smaller_share_beside_them() {
        use crate::model::RemarkKind as K;
        let mut a = round(0, &spread(100.0, 10), vec![ok("a", "1")], 40, 20.0);
        a.warnings.push(Remark::competitor_held(0.036));
        let mut b = round(1, &spread(100.0, 10), vec![ok("a", "1")], 40, 20.0);
        b.warnings.push(Remark::competitor_ran(0.43));
        let m = merge_rounds(vec![(0, a.clone()), (1, b)]).unwrap();
        let kinds: Vec<K> = m.warnings.iter().map(|w| w.kind).collect();
        assert!(kinds.contains(&K::CompetitorRan), "{kinds:?}");
        assert!(!kinds.contains(&K::CompetitorHeld), "{kinds:?}");
        // Rounds that all held their CPU keep the smaller share.
        let c = round(1, &spread(100.0, 10), vec![ok("a", "1")], 40, 20.0);
        let m = merge_rounds(vec![(0, a), (1, c)]).unwrap();
        assert!(m.warnings.iter().any(|w| w.kind == K::CompetitorHeld));
    }
}
