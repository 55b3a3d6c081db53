//! Comparing two runs: for each probe at equal parameters, the two medians, the ratio B/A with
//! a 95% bootstrap interval, and a verdict. Machine differences come first, because a different
//! kernel or CPU explains more than any number; measurements present in only one run are
//! listed as unpaired, never matched loosely.
//!
//! This module judges (run against run here, host against host in [`fleet`]); report::compare
//! and report::fleet render what it finds.

mod bootstrap;
pub mod fleet;
pub mod interval;

use serde::Serialize;

use crate::machine::facts;
use crate::model::{Measurement, Run, Status};
use crate::units::Unit;
use bootstrap::{ratio_interval, seed_for, Samples};

/// What the interval says about B relative to A: the JSON writes its serde name, the other
/// views its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "lowercase")]
pub enum Verdict {
    /// B costs significantly less than A.
    Faster,
    /// B costs significantly more than A.
    Slower,
    #[strum(serialize = "no significant difference")]
    NoSignificantDifference,
    /// Invalid in a run, or no usable samples: no statistics were computed.
    #[strum(serialize = "not comparable")]
    NotComparable,
}

/// Which rule decided a pair's verdict, with the figure it used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DecidedBy {
    /// The bootstrap interval of the ratio; `paired` when both sides resample paired
    /// differences of sample and baseline.
    Bootstrap { paired: bool },
    /// The drift between rounds alone widened the interval to reach 1; `share` is the
    /// relative half-width it added (0.105 = ±10.5%).
    RoundDrift { share: f64 },
    /// The change lies within the run-to-run drift the history shows (percent).
    HistoryDrift { pct: f64 },
    /// The change is smaller than the minimum effect (percent).
    MinimumEffect { pct: f64 },
}

/// What the comparison says about a pair besides its verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PairNote {
    /// A side has no resolved value (below resolution, or unstable): the raw per-iteration
    /// times were compared instead. Each side's status, `Ok` where that side is resolved.
    RawCompared { a: Status, b: Status },
    /// The median of A is zero or negative: no ratio.
    NonPositiveA,
    /// Too few usable samples for a bootstrap interval.
    TooFewSamples,
    /// A significant change (`was`) smaller than the minimum effect of `pct` percent.
    BelowMinimumEffect { was: Verdict, pct: f64 },
    /// A significant change (`was`) within the `pct` percent this probe has drifted between
    /// earlier runs on this machine.
    WithinHistoryDrift { was: Verdict, pct: f64 },
}

/// Which figure of the two measurements a pair compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The derived figure, baseline subtracted.
    Value,
    /// The raw per-iteration time, when a side has no resolved value (below resolution or
    /// unstable).
    Raw,
}

/// One probe at one set of parameters, measured in both runs.
#[derive(Debug, Clone)]
pub struct Pair {
    pub probe: String,
    pub params: String,
    pub unit: Unit,
    /// The figure compared: the derived value, or the raw time when a side has none.
    pub basis: Basis,
    pub a_median: Option<f64>,
    pub b_median: Option<f64>,
    /// b_median / a_median.
    pub ratio: Option<f64>,
    pub ratio_ci95: Option<[f64; 2]>,
    pub verdict: Verdict,
    /// How much more B costs than A, in percent (negative = cheaper), for higher-is-worse units.
    pub change_pct: Option<f64>,
    /// Both measurements valid; only valid pairs can trip `--fail-above`.
    pub valid: bool,
    /// What the comparison said of the pair, in the order it said it.
    pub notes: Vec<PairNote>,
    /// Which rule decided the verdict (none when no statistics were computed).
    pub decided_by: Option<DecidedBy>,
    /// The largest change between two earlier runs of this probe on this machine (percent),
    /// which a change must exceed, when the history holds at least three valid runs of it.
    pub history_drift_pct: Option<f64>,
    /// The pairing key (probe and inputs), for the history's drift.
    pub key: String,
    /// The sides whose measurement is invalid with its checks, which the views word into
    /// the note.
    pub invalid_in: Vec<(Side, Measurement)>,
}

/// Which run of the two a measurement comes from: A, the one compared against, or B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// A fact that differs between the two machines.
#[derive(Debug, Clone, Serialize)]
pub struct MachineDifference {
    pub fact: String,
    pub a: String,
    pub b: String,
}

/// The whole comparison (report::compare words it, JSON included).
#[derive(Debug, Clone)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub machine_differences: Vec<MachineDifference>,
    pub pairs: Vec<Pair>,
    /// "probe params" present only in A / only in B.
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
}

/// The pairing key: the probe and its inputs only (budgets, rounds and observed facts never
/// prevent pairing; see model::param_kind).
pub fn key(m: &Measurement) -> (String, String) {
    (
        m.probe.clone(),
        serde_json::to_string(&m.inputs()).unwrap_or_default(),
    )
}

/// [`key`] as one string.
pub fn key_string(m: &Measurement) -> String {
    let (p, i) = key(m);
    format!("{p}\t{i}")
}

fn label(m: &Measurement) -> String {
    format!("{} {}", m.probe, m.params_label())
        .trim()
        .to_string()
}

impl Comparison {
    /// Demote significant changes smaller than `pct` percent to "no significant difference",
    /// saying so in the pair's note: with tight intervals, a shared machine's drift between
    /// runs is statistically significant without mattering.
    pub fn apply_min_effect(&mut self, pct: f64) {
        for p in &mut self.pairs {
            let small = p.change_pct.is_some_and(|c| c.abs() < pct);
            if small && matches!(p.verdict, Verdict::Slower | Verdict::Faster) {
                p.notes.push(PairNote::BelowMinimumEffect {
                    was: p.verdict,
                    pct,
                });
                p.verdict = Verdict::NoSignificantDifference;
                p.decided_by = Some(DecidedBy::MinimumEffect { pct });
            }
        }
    }
}

/// Compares run B against run A; `a_name`/`b_name` say where each came from.
pub fn compare(a: &Run, a_name: &str, b: &Run, b_name: &str) -> Comparison {
    let mut machine_differences: Vec<MachineDifference> =
        facts::differences(&a.machine, &b.machine)
            .into_iter()
            .map(|(f, x, y)| MachineDifference {
                fact: f.into(),
                a: x,
                b: y,
            })
            .collect();
    if a.tool_version != b.tool_version {
        machine_differences.push(MachineDifference {
            fact: "oscost version".into(),
            a: a.tool_version.clone(),
            b: b.tool_version.clone(),
        });
    }
    let mut pairs = Vec::new();
    let mut only_in_a = Vec::new();
    for ma in &a.measurements {
        match b.measurements.iter().find(|mb| key(mb) == key(ma)) {
            Some(mb) => pairs.push(pair(ma, mb)),
            None => only_in_a.push(label(ma)),
        }
    }
    let only_in_b = b
        .measurements
        .iter()
        .filter(|mb| !a.measurements.iter().any(|ma| key(ma) == key(mb)))
        .map(label)
        .collect();
    Comparison {
        a: a_name.to_string(),
        b: b_name.to_string(),
        machine_differences,
        pairs,
        only_in_a,
        only_in_b,
    }
}

fn resolved(m: &Measurement) -> bool {
    m.valid && m.status == Status::Ok && m.value.is_some()
}

fn pair(a: &Measurement, b: &Measurement) -> Pair {
    let mut p = Pair {
        probe: a.probe.clone(),
        params: a.params_label(),
        unit: a.unit.clone(),
        basis: Basis::Value,
        a_median: None,
        b_median: None,
        ratio: None,
        ratio_ci95: None,
        verdict: Verdict::NotComparable,
        change_pct: None,
        valid: a.valid && b.valid,
        notes: Vec::new(),
        decided_by: None,
        history_drift_pct: None,
        key: key_string(a),
        invalid_in: Vec::new(),
    };
    if !p.valid {
        p.invalid_in = [(Side::A, a), (Side::B, b)]
            .into_iter()
            .filter(|(_, m)| !m.valid)
            .map(|(n, m)| (n, m.clone()))
            .collect();
        return p;
    }
    // The samples each figure comes from (engine::canary leaves out those on a slowed core).
    let (a, b) = (
        &crate::engine::canary::figure_view(a),
        &crate::engine::canary::figure_view(b),
    );
    let (sa, sb, ma, mb) = if resolved(a) && resolved(b) {
        fn side(m: &Measurement) -> Samples<'_> {
            Samples {
                raw: &m.samples,
                baseline: &m.baseline_samples,
                units: m.units_per_iteration,
            }
        }
        let med = |m: &Measurement| m.value.as_ref().map(|v| v.median);
        (side(a), side(b), med(a), med(b))
    } else {
        // Below resolution on a side: the derived figure is not a number, the raw one is.
        p.basis = Basis::Raw;
        p.unit = a.raw_unit.clone();
        let why = |m: &Measurement| if resolved(m) { Status::Ok } else { m.status };
        p.notes.push(PairNote::RawCompared {
            a: why(a),
            b: why(b),
        });
        fn raw_side(m: &Measurement) -> Samples<'_> {
            Samples {
                raw: &m.samples,
                baseline: &[],
                units: 1.0,
            }
        }
        (
            raw_side(a),
            raw_side(b),
            Some(a.raw.median),
            Some(b.raw.median),
        )
    };
    p.a_median = ma;
    p.b_median = mb;
    let (Some(ma), Some(mb)) = (ma, mb) else {
        p.verdict = Verdict::NotComparable;
        return p;
    };
    if ma <= 0.0 {
        p.notes.push(PairNote::NonPositiveA);
        return p;
    }
    p.ratio = Some(mb / ma);
    p.ratio_ci95 = ratio_interval(&sa, &sb, seed_for(&label(a)));
    let Some([lo, hi]) = p.ratio_ci95 else {
        p.notes.push(PairNote::TooFewSamples);
        return p;
    };
    p.decided_by = Some(DecidedBy::Bootstrap {
        paired: sa.paired() && sb.paired(),
    });
    // Widen by the drift between each side's rounds (relative half-widths, combined).
    let drift = (round_drift(&sa, &a.sample_rounds).powi(2)
        + round_drift(&sb, &b.sample_rounds).powi(2))
    .sqrt();
    let (lo, hi) = widen_by_drift(&mut p, [lo, hi], drift);
    decide(&mut p, lo, hi, mb / ma);
    p
}

/// The interval widened by the drift between rounds (a relative half-width), and the
/// widening named as what decided when it alone made the interval reach 1.
fn widen_by_drift(p: &mut Pair, [lo, hi]: [f64; 2], drift: f64) -> (f64, f64) {
    if drift <= 0.0 {
        return (lo, hi);
    }
    let widened = [lo * (1.0 - drift), hi * (1.0 + drift)];
    let straddles = |l: f64, h: f64| l <= 1.0 && h >= 1.0;
    if straddles(widened[0], widened[1]) && !straddles(lo, hi) {
        p.decided_by = Some(DecidedBy::RoundDrift { share: drift });
    }
    p.ratio_ci95 = Some(widened);
    (widened[0], widened[1])
}

/// The verdict of a ratio `r` = B/A whose interval is [lo, hi], and its change in percent
/// (for a higher-is-better unit, the change of its inverse).
fn decide(p: &mut Pair, lo: f64, hi: f64, r: f64) {
    let costlier = if p.unit.higher_is_better() {
        hi < 1.0
    } else {
        lo > 1.0
    };
    let cheaper = if p.unit.higher_is_better() {
        lo > 1.0
    } else {
        hi < 1.0
    };
    p.verdict = if costlier {
        Verdict::Slower
    } else if cheaper {
        Verdict::Faster
    } else {
        Verdict::NoSignificantDifference
    };
    p.change_pct = Some(if p.unit.higher_is_better() {
        (1.0 / r - 1.0) * 100.0
    } else {
        (r - 1.0) * 100.0
    });
}

/// What the history shows of one probe's run-to-run drift on one machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drift {
    /// Earlier valid runs it was seen in (at least [`MIN_HISTORY_RUNS`]).
    pub runs: usize,
    /// Robust standard deviation of the runs' medians relative to their median, percent
    /// (1.4826 × MAD / median): the typical drift, for the printed interval
    /// (compare::interval).
    pub sd_pct: f64,
    /// Sample standard deviation of the logarithms of the runs' medians: not robust on
    /// purpose, so that a rare run in which the whole machine was slower counts.
    pub log_sd: f64,
    /// The largest change between any two of the runs, percent (largest / smallest − 1).
    pub range_pct: f64,
}

impl Drift {
    /// What a change between two new runs must exceed (percent) to count at two-sided
    /// level `alpha`: the prediction bound of the ratio of two new runs from the history,
    /// exp(t(1 − alpha/2, runs − 1) × log_sd × √2) − 1 (two new runs differ by √2 times the
    /// spread of one; Student's t pays for estimating that spread from few runs), and never
    /// less than the largest change already seen between two earlier runs.
    pub fn gate_pct(&self, alpha: f64) -> f64 {
        use statrs::distribution::{ContinuousCDF, StudentsT};
        let df = self.runs.saturating_sub(1).max(1) as f64;
        let t = StudentsT::new(0.0, 1.0, df)
            .map(|d| d.inverse_cdf(1.0 - alpha.clamp(1e-9, 0.5) / 2.0))
            .unwrap_or(f64::INFINITY);
        let predicted = ((t * self.log_sd * std::f64::consts::SQRT_2).exp() - 1.0) * 100.0;
        predicted.max(self.range_pct)
    }
}

/// Valid runs a probe needs in the history before its drift is used.
pub const MIN_HISTORY_RUNS: usize = 3;

/// The chance, per comparison of two runs, that the history rule lets a change through on
/// an unchanged build (family-wise: split among the probes compared, Bonferroni).
pub const FAMILY_ALPHA: f64 = 0.05;

/// Per pairing key ([`key_string`]), the run-to-run drift of valid medians across `runs`
/// taken on `machine` (same key facts), for keys seen in at least [`MIN_HISTORY_RUNS`] runs.
pub fn history_drift(
    runs: &[Run],
    machine: &crate::machine::Machine,
) -> std::collections::BTreeMap<String, Drift> {
    let mut medians: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for r in runs
        .iter()
        .filter(|r| facts::differences(&r.machine, machine).is_empty())
    {
        for m in r.measurements.iter().filter(|m| resolved(m)) {
            if let Some(v) = &m.value {
                medians.entry(key_string(m)).or_default().push(v.median);
            }
        }
    }
    medians
        .into_iter()
        .filter(|(_, v)| v.len() >= MIN_HISTORY_RUNS)
        .filter_map(|(k, v)| {
            let med = crate::engine::stats::median(&v);
            if med <= 0.0 || v.iter().any(|&x| x <= 0.0) {
                return None;
            }
            let dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
            let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
            let mean = logs.iter().sum::<f64>() / logs.len() as f64;
            let var =
                logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
            let (lo, hi) = logs
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &l| {
                    (a.min(l), b.max(l))
                });
            Some((
                k,
                Drift {
                    runs: v.len(),
                    sd_pct: 100.0 * 1.4826 * crate::engine::stats::median(&dev) / med,
                    log_sd: var.sqrt(),
                    range_pct: ((hi - lo).exp() - 1.0) * 100.0,
                },
            ))
        })
        .collect()
}

/// The relative half-width of the between-rounds interval of a side's statistic (0 without
/// rounds).
fn round_drift(side: &Samples, rounds: &[u32]) -> f64 {
    let values = side.values();
    let Some([lo, hi]) = crate::engine::stats::between_rounds(&values, rounds) else {
        return 0.0;
    };
    let mid = (lo + hi) / 2.0;
    if mid.abs() <= f64::EPSILON {
        return 0.0;
    }
    ((hi - lo) / 2.0 / mid.abs()).min(1.0)
}

impl Comparison {
    /// Demote changes within the run-to-run drift the history shows for that probe on that
    /// machine (by pairing key, see [`history_drift`]): a change, B/A or A/B, must exceed
    /// [`Drift::gate_pct`] at [`FAMILY_ALPHA`] shared among the valid pairs that have a
    /// history, so that an unchanged build trips no probe of a whole suite but rarely.
    pub fn apply_history_drift(&mut self, drift: &std::collections::BTreeMap<String, Drift>) {
        let held = self
            .pairs
            .iter()
            .filter(|p| p.valid && drift.contains_key(&p.key))
            .count()
            .max(1);
        let alpha = FAMILY_ALPHA / held as f64;
        for p in &mut self.pairs {
            let Some(d) = drift.get(&p.key).map(|d| d.gate_pct(alpha)) else {
                continue;
            };
            p.history_drift_pct = Some(d);
            let within = p
                .ratio
                .is_some_and(|r| r > 0.0 && r.max(1.0 / r) <= 1.0 + d / 100.0);
            if within && matches!(p.verdict, Verdict::Slower | Verdict::Faster) {
                p.notes.push(PairNote::WithinHistoryDrift {
                    was: p.verdict,
                    pct: d,
                });
                p.verdict = Verdict::NoSignificantDifference;
                p.decided_by = Some(DecidedBy::HistoryDrift { pct: d });
            }
        }
    }

    /// Valid pairs significantly slower by more than `threshold_pct` (the point estimate of
    /// the slowdown exceeds it and the interval excludes no change): what `--fail-above` gates on.
    pub fn regressions(&self, threshold_pct: f64) -> Vec<&Pair> {
        self.pairs
            .iter()
            .filter(|p| p.valid && p.verdict == Verdict::Slower)
            .filter(|p| p.change_pct.is_some_and(|c| c > threshold_pct))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::parse_run;
    use crate::units::name::{serde_name, tests::assert_words};

    #[test]
    fn a_verdict_has_its_words_and_its_json_name() {
        use Verdict::*;
        let all = [Faster, Slower, NoSignificantDifference, NotComparable];
        let words = [
            "faster",
            "slower",
            "no significant difference",
            "not comparable",
        ];
        assert_words(&all.into_iter().zip(words).collect::<Vec<_>>());
        let json = [
            "faster",
            "slower",
            "no_significant_difference",
            "not_comparable",
        ];
        assert_eq!(all.map(|v| serde_name(&v)), json);
    }

    fn fixture() -> Run {
        parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap()
    }

    /// Deterministic, noisy, skewed samples around `center` (a lognormal-ish spread from a
    /// fixed generator), as a measurement's per-iteration times would look.
    fn samples(center: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut r = bootstrap::Rng::new(seed);
        (0..n)
            .map(|_| {
                let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let v = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                center * (1.0 + 0.03 * (u + v - 1.0) + if u > 0.95 { 0.2 } else { 0.0 })
            })
            .collect()
    }

    /// A run whose only measurement has `raw` samples and no baseline.
    fn run_with(raw: Vec<f64>) -> Run {
        let mut run = fixture();
        let mut m = run
            .measurements
            .iter()
            .find(|m| m.valid && m.value.is_some())
            .unwrap()
            .clone();
        m.baseline_samples.clear();
        m.baseline = None;
        m.units_per_iteration = 1.0;
        let mut sorted = raw.clone();
        let med = bootstrap::median(&mut sorted);
        m.value.as_mut().unwrap().median = med;
        m.raw.median = med;
        m.samples = raw;
        run.measurements = vec![m];
        run
    }

    #[test]
    fn min_effect_demotes_small_significant_changes_only() {
        let a = run_with(vec![
            100.0, 100.5, 99.5, 100.2, 99.8, 100.1, 99.9, 100.3, 99.7, 100.0,
        ]);
        let b1 = run_with(vec![
            101.0, 101.5, 100.5, 101.2, 100.8, 101.1, 100.9, 101.3, 100.7, 101.0,
        ]);
        let mut small = compare(&a, "a", &b1, "b");
        assert_eq!(
            small.pairs[0].verdict,
            Verdict::Slower,
            "{:?}",
            small.pairs[0]
        );
        small.apply_min_effect(2.0);
        assert_eq!(small.pairs[0].verdict, Verdict::NoSignificantDifference);
        assert_eq!(
            small.pairs[0].notes,
            [PairNote::BelowMinimumEffect {
                was: Verdict::Slower,
                pct: 2.0
            }]
        );
        assert_eq!(
            small.pairs[0].decided_by,
            Some(DecidedBy::MinimumEffect { pct: 2.0 })
        );
        let b2 = run_with((0..10).map(|i| 110.0 + i as f64 * 0.1).collect());
        let mut big = compare(&a, "a", &b2, "b");
        big.apply_min_effect(2.0);
        assert_eq!(big.pairs[0].verdict, Verdict::Slower);
    }

    fn verdict(a: Vec<f64>, b: Vec<f64>) -> Pair {
        compare(&run_with(a), "a", &run_with(b), "b")
            .pairs
            .remove(0)
    }

    #[test]
    fn a_side_below_resolution_compares_raw_times_and_says_so() {
        let a = run_with(samples(100.0, 30, 1));
        let mut b = run_with(samples(100.0, 30, 2));
        let p = compare(&a, "a", &b, "b").pairs.remove(0);
        assert_eq!((p.basis, p.notes.len()), (Basis::Value, 0), "{p:?}");
        b.measurements[0].value = None;
        b.measurements[0].status = Status::BelowResolution;
        let p = compare(&a, "a", &b, "b").pairs.remove(0);
        assert_eq!(p.basis, Basis::Raw, "{p:?}");
        let raw = |a, b| [PairNote::RawCompared { a, b }];
        assert_eq!(p.notes, raw(Status::Ok, Status::BelowResolution));
        // An unstable side is not resolved either, and the note says which it was.
        let mut a = run_with(samples(100.0, 30, 1));
        a.measurements[0].status = Status::Unstable;
        let p = compare(&a, "a", &b, "b").pairs.remove(0);
        assert_eq!(p.notes, raw(Status::Unstable, Status::BelowResolution));
    }

    #[test]
    fn known_slowdown_is_slower_and_trips_the_gate() {
        let p = verdict(samples(100.0, 30, 1), samples(110.0, 30, 2));
        assert_eq!(p.verdict, Verdict::Slower, "{p:?}");
        let c = p.change_pct.unwrap();
        assert!((5.0..15.0).contains(&c), "{c}");
        let cmp = compare(
            &run_with(samples(100.0, 30, 1)),
            "a",
            &run_with(samples(110.0, 30, 2)),
            "b",
        );
        assert_eq!(cmp.regressions(5.0).len(), 1);
        assert!(
            cmp.regressions(20.0).is_empty(),
            "a 10% slowdown must not trip a 20% gate"
        );
    }

    #[test]
    fn known_speedup_is_faster_and_never_trips_the_gate() {
        let cmp = compare(
            &run_with(samples(100.0, 30, 3)),
            "a",
            &run_with(samples(80.0, 30, 4)),
            "b",
        );
        assert_eq!(cmp.pairs[0].verdict, Verdict::Faster);
        assert!(cmp.regressions(0.0).is_empty());
    }

    #[test]
    fn no_false_alarm_on_identical_distributions() {
        // Ten independent pairs of draws from the same distribution: at a 95% interval an
        // alarm on most of them would mean a broken interval; none may trip a 5% gate.
        let mut alarms = 0;
        for s in 0..10 {
            let p = verdict(samples(100.0, 40, 100 + s), samples(100.0, 40, 200 + s));
            if p.verdict != Verdict::NoSignificantDifference {
                alarms += 1;
            }
            let [lo, hi] = p.ratio_ci95.unwrap();
            assert!(
                hi - lo < 0.1,
                "interval too wide to be useful: [{lo}, {hi}]"
            );
        }
        assert!(alarms <= 2, "{alarms} of 10 identical pairs flagged");
        let same = samples(100.0, 40, 9);
        assert_eq!(
            verdict(same.clone(), same).verdict,
            Verdict::NoSignificantDifference
        );
    }

    #[test]
    fn throughput_units_flip_the_direction() {
        assert!(Unit::from("GB/s").higher_is_better());
        assert!(!Unit::ns(crate::units::Per::Switch).higher_is_better());
        let mut a = run_with(samples(100.0, 30, 5));
        let mut b = run_with(samples(120.0, 30, 6));
        a.measurements[0].unit = "MB/s".into();
        b.measurements[0].unit = "MB/s".into();
        assert_eq!(compare(&a, "a", &b, "b").pairs[0].verdict, Verdict::Faster);
    }

    #[test]
    fn invalid_pairs_are_not_compared_and_never_gate() {
        let a = run_with(samples(100.0, 30, 1));
        let mut b = run_with(samples(200.0, 30, 2));
        b.measurements[0].valid = false;
        let cmp = compare(&a, "a", &b, "b");
        assert_eq!(cmp.pairs[0].verdict, Verdict::NotComparable);
        let sides: Vec<Side> = cmp.pairs[0].invalid_in.iter().map(|(s, _)| *s).collect();
        assert_eq!(sides, [Side::B]);
        assert!(crate::report::compare::note(&cmp.pairs[0]).starts_with("invalid in B"));
        assert!(cmp.regressions(0.0).is_empty());
    }

    #[test]
    fn unequal_parameters_are_unpaired_and_machine_differences_listed() {
        let a = fixture();
        let mut b = fixture();
        b.machine.kernel.release = Some("9.9.9".into());
        let moved = b.measurements.len() - 1;
        b.measurements[moved]
            .params
            .insert("cpus".into(), serde_json::json!([1]));
        let cmp = compare(&a, "a", &b, "b");
        assert_eq!(cmp.machine_differences.len(), 1);
        assert_eq!(cmp.machine_differences[0].fact, "kernel");
        assert_eq!(cmp.only_in_a.len(), 1);
        assert_eq!(cmp.only_in_b.len(), 1);
        assert!(cmp.only_in_b[0].contains("cpus=1"));
        assert_eq!(cmp.pairs.len(), a.measurements.len() - 1);
    }

    /// `run_with` samples scaled by `k`, with the value's median scaled alike.
    fn scaled(run: &Run, k: f64) -> Run {
        let mut r = run.clone();
        for m in &mut r.measurements {
            m.samples.iter_mut().for_each(|x| *x *= k);
            m.baseline_samples.iter_mut().for_each(|x| *x *= k);
            if let Some(v) = m.value.as_mut() {
                v.median *= k;
            }
            m.raw.median *= k;
        }
        r
    }

    #[test]
    fn a_probe_scaled_by_one_and_a_half_is_a_regression() {
        let a = fixture();
        let mut b = a.clone();
        let i = b
            .measurements
            .iter()
            .position(|m| resolved(m) && m.samples.len() >= 5)
            .unwrap();
        b.measurements[i] = scaled(
            &Run {
                measurements: vec![b.measurements[i].clone()],
                ..a.clone()
            },
            1.5,
        )
        .measurements
        .remove(0);
        let cmp = compare(&a, "a", &b, "b");
        let bad = cmp.regressions(5.0);
        assert_eq!(bad.len(), 1, "{:?}", cmp.pairs);
        assert_eq!(bad[0].probe, b.measurements[i].probe);
        assert!(
            matches!(bad[0].decided_by, Some(DecidedBy::Bootstrap { .. })),
            "{:?}",
            bad[0]
        );
    }

    #[test]
    fn budgets_and_observed_facts_never_prevent_pairing() {
        let a = fixture();
        let mut b = fixture();
        for m in &mut b.measurements {
            m.params.insert("rounds".into(), serde_json::json!(99));
            m.params
                .insert("system_thp".into(), serde_json::json!("madvise"));
        }
        let cmp = compare(&a, "a", &b, "b");
        assert!(cmp.only_in_a.is_empty() && cmp.only_in_b.is_empty());
        assert_eq!(cmp.pairs.len(), a.measurements.len());
    }

    #[test]
    fn a_change_within_the_history_drift_is_not_a_regression() {
        let a = run_with(samples(100.0, 30, 1));
        let b = run_with(samples(110.0, 30, 2));
        // The history on this machine: medians 100, 112, 95, 108, 101 (±~13% drift).
        let history: Vec<Run> = [100.0, 112.0, 95.0, 108.0, 101.0]
            .iter()
            .enumerate()
            .map(|(i, &c)| run_with(samples(c, 30, 50 + i as u64)))
            .collect();
        let drift = history_drift(&history, &a.machine);
        assert_eq!(drift.len(), 1);
        let mut cmp = compare(&a, "a", &b, "b");
        assert_eq!(cmp.regressions(5.0).len(), 1);
        cmp.apply_history_drift(&drift);
        assert!(cmp.regressions(5.0).is_empty(), "{:?}", cmp.pairs);
        assert!(
            matches!(cmp.pairs[0].decided_by, Some(DecidedBy::HistoryDrift { pct }) if pct > 10.0),
            "{:?}",
            cmp.pairs[0]
        );
        assert!(
            matches!(
                cmp.pairs[0].notes[..],
                [PairNote::WithinHistoryDrift {
                    was: Verdict::Slower,
                    ..
                }]
            ),
            "{:?}",
            cmp.pairs[0]
        );
        // A history of another machine says nothing about this one.
        let mut other = history.clone();
        for r in &mut other {
            r.machine.kernel.release = Some("9.9.9".into());
        }
        assert!(history_drift(&other, &a.machine).is_empty());
    }

    #[test]
    fn a_rare_slow_run_in_the_history_is_part_of_what_a_change_must_exceed() {
        // Ten runs near 100 and one at 200 (the whole machine was slow once): the robust
        // spread ignores the slow run, the gate does not.
        let mut centres = vec![
            100.0, 101.0, 99.0, 100.5, 98.5, 100.0, 101.5, 99.5, 100.0, 99.0,
        ];
        centres.push(200.0);
        let history: Vec<Run> = centres
            .iter()
            .enumerate()
            .map(|(i, &c)| run_with(samples(c, 30, 70 + i as u64)))
            .collect();
        let a = run_with(samples(100.0, 30, 1));
        let d = history_drift(&history, &a.machine);
        let d = d.values().next().unwrap();
        assert_eq!(d.runs, 11);
        assert!(d.sd_pct < 2.0, "{d:?}");
        assert!(
            d.range_pct > 100.0 && d.gate_pct(FAMILY_ALPHA) > 100.0,
            "{d:?}"
        );
        let drift = history_drift(&history, &a.machine);
        // The next such episode (B at 190) is not a regression here ...
        let mut cmp = compare(&a, "a", &run_with(samples(190.0, 30, 2)), "b");
        cmp.apply_history_drift(&drift);
        assert!(cmp.regressions(5.0).is_empty(), "{:?}", cmp.pairs);
        // ... and with a steady history a 1.5× change still is.
        let steady: Vec<Run> = history[..10].to_vec();
        let mut cmp = compare(&a, "a", &run_with(samples(150.0, 30, 2)), "b");
        cmp.apply_history_drift(&history_drift(&steady, &a.machine));
        assert_eq!(cmp.regressions(5.0).len(), 1, "{:?}", cmp.pairs);
        // Faster by more than the history's range counts too; within it, it does not.
        let mut cmp = compare(&a, "a", &run_with(samples(60.0, 30, 2)), "b");
        cmp.apply_history_drift(&history_drift(&steady, &a.machine));
        assert_eq!(cmp.pairs[0].verdict, Verdict::Faster);
    }

    #[test]
    fn the_gate_asks_more_of_a_short_history_and_of_many_probes() {
        let d = |runs| Drift {
            runs,
            sd_pct: 3.0,
            log_sd: 0.03,
            range_pct: 5.0,
        };
        // Three runs say little about the spread: Student's t with 2 degrees of freedom.
        assert!(d(3).gate_pct(0.05) > d(30).gate_pct(0.05));
        // Bonferroni: sixteen probes at once ask more of each.
        assert!(d(30).gate_pct(0.05 / 16.0) > d(30).gate_pct(0.05));
        // 30 runs, one probe: exp(2.045 × 0.03 × √2) − 1 ≈ 9.1%.
        assert!(
            (d(30).gate_pct(0.05) - 9.1).abs() < 0.1,
            "{}",
            d(30).gate_pct(0.05)
        );
        // Never below the largest change already seen.
        let wide = Drift {
            range_pct: 40.0,
            ..d(30)
        };
        assert_eq!(wide.gate_pct(0.05), 40.0);
    }

    #[test]
    fn drift_between_rounds_widens_the_ratio() {
        let mut a = run_with(samples(100.0, 30, 1));
        let mut b = run_with(samples(104.0, 30, 2));
        let tight = compare(&a, "a", &b, "b").pairs.remove(0);
        assert_eq!(tight.verdict, Verdict::Slower);
        // Tight rounds whose medians differ by ±3%: the pooled median barely moves, the
        // rounds say the next run may land 7% away.
        for (run, base) in [(&mut a, 100.0), (&mut b, 104.0)] {
            let m = &mut run.measurements[0];
            m.samples = (0..300)
                .map(|i| base * [0.97, 1.0, 1.03][i / 100] * (1.0 + 0.0001 * (i % 7) as f64))
                .collect();
            m.sample_rounds = (0..300).map(|i| (i / 100) as u32).collect();
        }
        let p = compare(&a, "a", &b, "b").pairs.remove(0);
        assert_eq!(p.verdict, Verdict::NoSignificantDifference, "{p:?}");
        assert!(
            matches!(p.decided_by, Some(DecidedBy::RoundDrift { share }) if share > 0.03),
            "{p:?}"
        );
    }

    #[test]
    fn a_run_against_itself_shows_no_difference_anywhere() {
        let a = fixture();
        let cmp = compare(&a, "a", &a, "a");
        for p in &cmp.pairs {
            assert!(
                matches!(
                    p.verdict,
                    Verdict::NoSignificantDifference | Verdict::NotComparable
                ),
                "{p:?}"
            );
        }
        assert!(cmp.regressions(0.0).is_empty());
    }
}
