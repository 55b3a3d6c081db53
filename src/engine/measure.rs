//! One measurement from start to verdict: sample (with evidence around every raw sample),
//! derive raw/baseline/value, run the probe's checks, and decide validity.

use super::derive::derive_judged;
use super::derive::Derived;
pub use super::sampler::Workloads;
use super::sampler::{sample, Round, RoundSlot, SampleSet, SamplingConfig, ScaleMemo, StopReason};
use super::stats::summarize;
use crate::engine::clock::{self, min_sample_ns};
use crate::error::{Error, Result};
use crate::evidence::perf::EventSet;
use crate::evidence::recorder::Recorder;
use crate::evidence::Participant;
use crate::model::{Check, ClockInfo, Evidence, Measurement, Remark, Status};
use crate::units::Unit;
use std::collections::BTreeMap;

/// What every probe gets: how to sample, what the clock can do, and which round to take.
#[derive(Debug, Clone)]
pub struct Context {
    pub sampling: SamplingConfig,
    pub clock: ClockInfo,
    /// None: take every round in this call, back to back (a probe run on its own, or an
    /// item that cannot be re-entered). Some: take only this round.
    pub round: Option<RoundSlot>,
    /// The iteration counts of this item's earlier rounds (None: scale at every call).
    pub scales: Option<ScaleMemo>,
    /// The plan runs this item's evidence pass (perf counters, an observer-tax pass) after
    /// every item's figure samples (engine::plan, `PlanItem::with_evidence_pass`), so the
    /// probe leaves it out of its calls. False: the probe takes it itself, after its samples.
    pub evidence_later: bool,
    /// This call takes a round again, after the planned ones, for one the core ran slowed
    /// through (engine::plan's make-up rounds): never the measurement's last round, so work
    /// a probe does once per measurement is not done twice.
    pub make_up: bool,
}

impl Context {
    pub fn new(sampling: SamplingConfig) -> Self {
        Context {
            sampling,
            clock: clock::calibrate(),
            round: None,
            scales: None,
            evidence_later: false,
            make_up: false,
        }
    }

    /// This context for one round of a measurement spread across the plan, whose rounds keep
    /// their iteration counts in `scales` (rewound here: a new call begins).
    pub fn in_round(&self, index: u32, of: u32, scales: &ScaleMemo) -> Context {
        scales.rewind();
        Context {
            round: Some(RoundSlot { index, of }),
            scales: Some(scales.clone()),
            make_up: false,
            ..self.clone()
        }
    }

    /// [`Context::in_round`] for a make-up round: round `index` (≥ `of`) sampled on the share
    /// of one of `of` rounds.
    pub fn in_make_up_round(&self, index: u32, of: u32, scales: &ScaleMemo) -> Context {
        Context {
            make_up: true,
            ..self.in_round(index, of, scales)
        }
    }

    /// Whether this call takes the measurement's last round (or all of them): where a probe
    /// does work once per measurement, not once per round (e.g. an observer-tax pass).
    pub fn is_last_round(&self) -> bool {
        !self.make_up && self.round.is_none_or(|r| r.index + 1 >= r.of)
    }
}

/// The fixed description of a measurement.
#[derive(Debug, Clone)]
pub struct Spec {
    pub probe: String,
    pub params: BTreeMap<String, serde_json::Value>,
    /// Unit of the derived value, e.g. "ns/switch".
    pub unit: Unit,
    /// Unit of one raw iteration, e.g. "ns/round trip".
    pub raw_unit: Unit,
    pub units_per_iteration: f64,
    pub events: EventSet,
    pub notes: Vec<String>,
}

impl Spec {
    pub fn new(probe: &str, unit: Unit, raw_unit: Unit, units_per_iteration: f64) -> Self {
        Spec {
            probe: probe.into(),
            params: BTreeMap::new(),
            unit,
            raw_unit,
            units_per_iteration,
            events: EventSet::Standard,
            notes: Vec::new(),
        }
    }

    pub fn param(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.params.insert(key.into(), value.into());
        self
    }

    pub fn events_set(mut self, events: EventSet) -> Self {
        self.events = events;
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// What a probe's checker returns: checks (a failed one invalidates) and warnings.
pub type Verdict = (Vec<Check>, Vec<Remark>);

/// The tasks a measurement watches, and the CPU each reported when ready (None where
/// unknown), one per task.
pub struct Participants {
    pub tasks: Vec<Participant>,
    pub start_cpus: Vec<Option<usize>>,
}

impl Participants {
    pub fn new(tasks: Vec<Participant>, start_cpus: Vec<Option<usize>>) -> Participants {
        Participants { tasks, start_cpus }
    }
}

/// Run one measurement of `work` watching `who`. `checker` turns evidence into checks and
/// warnings.
pub fn measure(
    ctx: &Context,
    spec: Spec,
    who: Participants,
    work: Workloads<'_, '_, '_>,
    checker: impl FnOnce(&Evidence) -> Verdict,
) -> Result<Measurement> {
    let Participants { tasks, start_cpus } = who;
    let mut work = work;
    let mut recorder = Recorder::new(tasks, spec.events);
    recorder.prime();
    let floor = min_sample_ns(&ctx.clock);
    let identity = format!("{} {:?}", spec.probe, spec.params);
    let memo = ctx.round.and(ctx.scales.as_ref());
    let (at, known) = memo.map_or((0, None), |m| m.next(&identity));
    let round = ctx.round.map(|slot| Round { slot, known });
    let set = sample(&ctx.sampling, floor, round, &mut work, &mut recorder)?;
    if let Some(m) = memo {
        m.keep(at, &identity, set.raw_iterations, set.baseline_iterations);
    }
    let evidence = recorder.finish(&start_cpus);
    let verdict = checker(&evidence);
    let mut m = conclude(spec, set, evidence, verdict)?;
    if let Some(stop) = m.stop_reason.filter(|&s| s != StopReason::Converged) {
        m.warnings
            .push(Remark::not_converged(stop, ctx.sampling.rel_ci_target));
    }
    Ok(m)
}

/// Samples a probe took with its own loop: ns per raw iteration, and the raw iterations of
/// one sample.
pub struct OwnSamples {
    pub samples: Vec<f64>,
    pub iterations: u64,
}

/// Conclude a measurement whose samples a probe took with its own loop (where the sampler's
/// auto-scaling does not fit, e.g. one fresh 256 MiB mapping touched once per sample): the
/// same summaries, subtraction-free derivation, checks and validity as [`measure`].
pub fn from_samples(
    spec: Spec,
    own: OwnSamples,
    stop_reason: StopReason,
    evidence: Evidence,
    verdict: Verdict,
) -> Result<Measurement> {
    let OwnSamples {
        samples,
        iterations,
    } = own;
    let mut m = conclude(
        spec,
        SampleSet {
            raw: samples,
            evidence: Vec::new(),
            baseline: Vec::new(),
            rounds: Vec::new(),
            canary: Vec::new(),
            raw_iterations: iterations,
            baseline_iterations: 0,
            stop: StopReason::Budget,
        },
        evidence,
        verdict,
    )?;
    m.stop_reason = Some(stop_reason);
    Ok(m)
}

/// Why baseline samples carry no evidence (a note on every measurement with a baseline).
pub const BASELINE_NOTE: &str = "baseline samples carry no evidence of their own: they run \
     between the evidence windows so that switches, faults and counters per iteration describe \
     the mechanism measured, not the baseline's loop";

/// The warnings and notes that follow from the samples alone (outliers, a negative
/// difference, one sample, two modes, the counters' own cost): computed here for one call's
/// samples and again by engine::merge for the merged samples of all rounds.
pub fn derived_remarks(
    derived: &Derived,
    raw: &[f64],
    evidence_samples: &[f64],
    raw_unit: &Unit,
) -> (Vec<Remark>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    // Samples of a two-mode distribution far from the median are the other mode, not
    // outliers: the two-mode warning below says what they are.
    let modes = crate::engine::modes::bimodal(raw);
    if !derived.raw.outliers.is_empty() && modes.is_none() {
        warnings.push(Remark::outliers(derived.raw.outliers.len(), derived.raw.n));
    }
    if derived
        .difference
        .as_ref()
        .is_some_and(|d| super::derive::negative_finding(d.ci95[0], d.ci95[1]))
    {
        warnings.push(Remark::negative_difference());
    }
    if derived.raw.n < 2 {
        warnings.push(Remark::one_sample());
    }
    if let Some(modes) = modes {
        warnings.push(crate::engine::modes::remark(
            &modes,
            &raw_unit.without_per(),
        ));
    }
    if let Some(with_counters) = summarize(evidence_samples) {
        let slowdown = with_counters.median / derived.raw.median - 1.0;
        if slowdown > 0.1 {
            notes.push(format!(
                "with perf counters attached a raw iteration took {:.0}% longer (the counters' \
                 own cost, e.g. at every context switch); the figure comes from samples \
                 without them",
                slowdown * 100.0
            ));
        }
    }
    (warnings, notes)
}

/// Summaries, derivation, outlier and observer-effect notes, validity: the one place a
/// Measurement is assembled.
fn conclude(
    spec: Spec,
    set: SampleSet,
    evidence: Evidence,
    verdict: Verdict,
) -> Result<Measurement> {
    let mut set = set;
    let mut notes = spec.notes;
    if !super::canary::applies(&spec.params) && !set.canary.is_empty() {
        set.canary.clear();
        notes.push(super::canary::SPANS_CPUS.into());
    }
    let fastest = super::canary::best();
    let judged = derive_judged(
        super::derive::Samples {
            raw: &set.raw,
            baseline: &set.baseline,
            rounds: &set.rounds,
            tags: &set.canary,
        },
        fastest,
        spec.units_per_iteration,
        &spec.raw_unit,
    )
    .ok_or_else(|| Error::env(format!("{}: no usable samples were taken", spec.probe)))?;
    let derived = judged.derived;
    let (checks, mut warnings) = verdict;
    warnings.extend(super::checks::entered_kernel(&checks, &evidence));
    warnings.extend(judged.warning);
    let (derived_warnings, derived_notes) =
        derived_remarks(&derived, &judged.raw, &set.evidence, &spec.raw_unit);
    warnings.extend(derived_warnings);
    if !set.baseline.is_empty() {
        notes.push(BASELINE_NOTE.into());
    }
    notes.extend(derived_notes);
    let valid = checks.iter().all(|c| c.ok);
    Ok(Measurement {
        probe: spec.probe,
        params: spec.params,
        unit: spec.unit,
        value: derived.value,
        raw: derived.raw,
        raw_unit: spec.raw_unit,
        baseline: derived.baseline,
        difference: derived.difference,
        units_per_iteration: spec.units_per_iteration,
        status: if valid {
            derived.status
        } else {
            Status::Invalid
        },
        samples: set.raw,
        sample_rounds: set.rounds,
        canary_fastest: fastest.filter(|_| !set.canary.is_empty()),
        sample_canary: set.canary,
        baseline_samples: set.baseline,
        evidence_samples: set.evidence,
        iterations_per_sample: set.raw_iterations,
        baseline_iterations_per_sample: set.baseline_iterations,
        stop_reason: Some(set.stop),
        evidence,
        checks,
        warnings,
        notes,
        valid,
        additive: None,
        observer: None,
        noise: None,
        switch_trace: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Per;

    /// Samples tagged as the ipc run was: one "slowed" sample that read faster.
    fn tagged_set() -> SampleSet {
        let mut raw = vec![28_400.0; 19];
        raw[3] = 12_200.0;
        let mut canary = vec![0.83; 19];
        canary[3] = 1.4;
        SampleSet {
            raw,
            evidence: Vec::new(),
            baseline: Vec::new(),
            rounds: Vec::new(),
            canary,
            raw_iterations: 1,
            baseline_iterations: 0,
            stop: StopReason::Budget,
        }
    }

    #[test]
    fn samples_of_a_second_mode_are_not_called_outliers() {
        // 30 samples near 100 then 10 near 200: two modes, not ten outliers.
        let mut raw: Vec<f64> = (0..30).map(|i| 100.0 + (i % 5) as f64 * 0.5).collect();
        raw.extend((0..10).map(|i| 200.0 + (i % 5) as f64 * 0.5));
        let d = super::super::derive::derive(&raw, &[], 1.0).unwrap();
        assert!(!d.raw.outliers.is_empty());
        let (w, _) = derived_remarks(&d, &raw, &[], &Unit::ns(Per::Op));
        assert!(
            w.iter()
                .any(|w| crate::report::remarks::words(w).contains("bimodal")),
            "{w:?}"
        );
        assert!(
            !w.iter()
                .any(|w| crate::report::remarks::words(w).contains("outliers")),
            "{w:?}"
        );
        // One far sample in one mode is an outlier.
        let mut one: Vec<f64> = (0..30).map(|i| 100.0 + (i % 5) as f64 * 0.5).collect();
        one[7] = 300.0;
        let d = super::super::derive::derive(&one, &[], 1.0).unwrap();
        let (w, _) = derived_remarks(&d, &one, &[], &Unit::ns(Per::Op));
        assert!(
            w.iter()
                .any(|w| crate::report::remarks::words(w).contains("1 of 30 samples are outliers")),
            "{w:?}"
        );
    }

    #[test]
    fn a_probe_spanning_two_cpus_is_not_judged_by_the_canary() {
        super::super::canary::record(0.83);
        let spec = Spec::new(
            "ipc.pipe",
            Unit::ns(Per::RoundTrip),
            Unit::ns(Per::RoundTrip),
            1.0,
        )
        .param("cpus", vec![0, 1]);
        let m = conclude(
            spec,
            tagged_set(),
            Evidence::default(),
            (Vec::new(), Vec::new()),
        )
        .unwrap();
        assert!(m.sample_canary.is_empty() && m.canary_fastest.is_none());
        assert!(m
            .notes
            .iter()
            .any(|n| n == super::super::canary::SPANS_CPUS));
        assert!(
            !m.warnings
                .iter()
                .any(|w| crate::report::remarks::words(w).starts_with("core slowed")),
            "{:?}",
            m.warnings
        );
        assert_eq!(m.raw.n, 19);
        // On one CPU the tags stay (the faster sample still counts: see canary's tests).
        let spec = Spec::new(
            "ctx.pipe",
            Unit::ns(Per::Switch),
            Unit::ns(Per::RoundTrip),
            2.0,
        )
        .param("cpus", vec![0]);
        let m = conclude(
            spec,
            tagged_set(),
            Evidence::default(),
            (Vec::new(), Vec::new()),
        )
        .unwrap();
        assert_eq!(m.sample_canary.len(), 19);
        assert!(!m
            .notes
            .iter()
            .any(|n| n == super::super::canary::SPANS_CPUS));
    }
}
