//! One measurement from start to verdict: sample (with evidence around every raw sample),
//! derive raw/baseline/value, run the probe's checks, and decide validity.

use super::clock::{self, min_sample_ns};
use super::derive::derive_in_rounds;
use super::sampler::{sample, SampleSet, SamplingConfig, StopReason, Workload};
use super::stats::summarize;
use crate::error::{Error, Result};
use crate::evidence::perf::EventSet;
use crate::evidence::recorder::Recorder;
use crate::evidence::Participant;
use crate::model::{Check, ClockInfo, Evidence, Measurement, Status};
use std::collections::BTreeMap;

/// What every probe gets: how to sample and what the clock can do.
#[derive(Debug, Clone)]
pub struct Context {
    pub sampling: SamplingConfig,
    pub clock: ClockInfo,
}

impl Context {
    pub fn new(sampling: SamplingConfig) -> Self {
        Context {
            sampling,
            clock: clock::calibrate(),
        }
    }
}

/// The fixed description of a measurement.
#[derive(Debug, Clone)]
pub struct Spec {
    pub probe: String,
    pub params: BTreeMap<String, serde_json::Value>,
    /// Unit of the derived value, e.g. "ns/switch".
    pub unit: String,
    /// Unit of one raw iteration, e.g. "ns/round trip".
    pub raw_unit: String,
    pub units_per_iteration: f64,
    pub events: EventSet,
    pub notes: Vec<String>,
}

impl Spec {
    pub fn new(probe: &str, unit: &str, raw_unit: &str, units_per_iteration: f64) -> Self {
        Spec {
            probe: probe.into(),
            params: BTreeMap::new(),
            unit: unit.into(),
            raw_unit: raw_unit.into(),
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

/// The warning of a figure built from a single sample.
pub const NO_INTERVAL: &str =
    "1 sample, no interval: the figure is one reading, its spread unknown";

/// What a probe's checker returns: checks (a failed one invalidates) and warnings.
pub type Verdict = (Vec<Check>, Vec<String>);

/// Run one measurement. `start_cpus` are the CPUs participants reported when ready
/// (None where unknown). `checker` turns evidence into checks and warnings.
pub fn measure(
    ctx: &Context,
    spec: Spec,
    participants: Vec<Participant>,
    start_cpus: Vec<Option<usize>>,
    raw: &mut Workload<'_>,
    baseline: Option<&mut Workload<'_>>,
    checker: impl FnOnce(&Evidence) -> Verdict,
) -> Result<Measurement> {
    let mut recorder = Recorder::new(participants, spec.events);
    let set = sample(
        &ctx.sampling,
        min_sample_ns(&ctx.clock),
        raw,
        baseline,
        &mut recorder,
    )?;
    let evidence = recorder.finish(&start_cpus);
    let verdict = checker(&evidence);
    let mut m = conclude(spec, set, evidence, verdict)?;
    if m.stop_reason != StopReason::Converged.as_str() {
        m.warnings.push(format!(
            "interval did not reach ±{:.0}% before the {}",
            ctx.sampling.rel_ci_target * 100.0,
            m.stop_reason
        ));
    }
    Ok(m)
}

/// Conclude a measurement whose samples a probe took with its own loop (where the sampler's
/// auto-scaling does not fit, e.g. one fresh 256 MiB mapping touched once per sample): the
/// same summaries, subtraction-free derivation, checks and validity as [`measure`].
/// `samples` are ns per raw iteration; `iterations` is the raw iterations of one sample.
pub fn from_samples(
    spec: Spec,
    samples: Vec<f64>,
    iterations: u64,
    stop_reason: &str,
    evidence: Evidence,
    verdict: Verdict,
) -> Result<Measurement> {
    let mut m = conclude(
        spec,
        SampleSet {
            raw: samples,
            evidence: Vec::new(),
            baseline: Vec::new(),
            rounds: Vec::new(),
            raw_iterations: iterations,
            baseline_iterations: 0,
            stop: StopReason::Budget,
        },
        evidence,
        verdict,
    )?;
    m.stop_reason = stop_reason.into();
    Ok(m)
}

/// Summaries, derivation, outlier and observer-effect notes, validity: the one place a
/// Measurement is assembled.
fn conclude(
    spec: Spec,
    set: SampleSet,
    evidence: Evidence,
    verdict: Verdict,
) -> Result<Measurement> {
    let derived = derive_in_rounds(
        &set.raw,
        &set.baseline,
        &set.rounds,
        spec.units_per_iteration,
    )
    .ok_or_else(|| Error::env(format!("{}: no usable samples were taken", spec.probe)))?;
    let (checks, mut warnings) = verdict;
    if !derived.raw.outliers.is_empty() {
        warnings.push(format!(
            "{} of {} samples are outliers (modified z > 3.5): flagged, kept",
            derived.raw.outliers.len(),
            derived.raw.n
        ));
    }
    if let Some(f) = derived
        .difference
        .as_ref()
        .and_then(|d| super::derive::negative_finding(d.ci95[0], d.ci95[1]))
    {
        warnings.push(f.into());
    }
    if derived.raw.n < 2 {
        warnings.push(NO_INTERVAL.into());
    }
    if let Some(modes) = crate::analysis::modes::bimodal(&set.raw) {
        let unit = spec.raw_unit.split('/').next().unwrap_or("ns");
        warnings.push(crate::analysis::modes::warning(&modes, unit));
    }
    let mut notes = spec.notes;
    if !set.baseline.is_empty() {
        notes.push(
            "baseline samples carry no evidence of their own: they run between the evidence \
             windows so that switches, faults and counters per iteration describe the \
             mechanism measured, not the baseline's loop"
                .into(),
        );
    }
    if let Some(with_counters) = summarize(&set.evidence) {
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
        baseline_samples: set.baseline,
        evidence_samples: set.evidence,
        iterations_per_sample: set.raw_iterations,
        baseline_iterations_per_sample: set.baseline_iterations,
        stop_reason: set.stop.as_str().into(),
        evidence,
        checks,
        warnings,
        notes,
        valid,
    })
}
