//! Comparing two runs: for each probe at equal parameters, the two medians, the ratio B/A with
//! a 95% bootstrap interval, and a verdict. Machine differences come first, because a different
//! kernel or CPU explains more than any number; measurements present in only one run are
//! listed as unpaired, never matched loosely.

mod bootstrap;
pub mod render;

use serde::Serialize;

use crate::model::{Measurement, Run, Status};
use crate::report::facts;
use crate::report::html::invalid_reason;
use bootstrap::{ratio_interval, seed_for, Side};

/// What the interval says about B relative to A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// B costs significantly less than A.
    Faster,
    /// B costs significantly more than A.
    Slower,
    NoSignificantDifference,
    /// Invalid in a run, or no usable samples: no statistics were computed.
    NotComparable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// One probe at one set of parameters, measured in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub probe: String,
    pub params: String,
    pub unit: String,
    /// "value" (the derived figure, baseline subtracted) or "raw" (when a side has no
    /// resolved value, e.g. below resolution).
    pub basis: String,
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
    pub note: String,
}

/// A fact that differs between the two machines.
#[derive(Debug, Clone, Serialize)]
pub struct MachineDifference {
    pub fact: String,
    pub a: String,
    pub b: String,
}

/// The whole comparison, serializable as the JSON output.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub machine_differences: Vec<MachineDifference>,
    pub pairs: Vec<Pair>,
    /// "probe params" present only in A / only in B.
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
}

/// Units where a larger number is better (throughput, hit rates): there "slower" means a
/// smaller B. Every other unit is a cost (time per operation, misses per operation).
pub fn higher_is_better(unit: &str) -> bool {
    let u = unit.to_ascii_lowercase();
    u.ends_with("/s") || u.contains("per second") || u.contains("hit rate") || u.contains("ops/")
}

fn key(m: &Measurement) -> (String, String) {
    (
        m.probe.clone(),
        serde_json::to_string(&m.params).unwrap_or_default(),
    )
}

fn label(m: &Measurement) -> String {
    format!("{} {}", m.probe, m.params_label())
        .trim()
        .to_string()
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
        basis: "value".into(),
        a_median: None,
        b_median: None,
        ratio: None,
        ratio_ci95: None,
        verdict: Verdict::NotComparable,
        change_pct: None,
        valid: a.valid && b.valid,
        note: String::new(),
    };
    if !p.valid {
        let which: Vec<String> = [("A", a), ("B", b)]
            .iter()
            .filter(|(_, m)| !m.valid)
            .map(|(n, m)| format!("invalid in {n}: {}", invalid_reason(m)))
            .collect();
        p.note = which.join("; ");
        return p;
    }
    let (sa, sb, ma, mb) = if resolved(a) && resolved(b) {
        fn side(m: &Measurement) -> Side<'_> {
            Side {
                raw: &m.samples,
                baseline: &m.baseline_samples,
                units: m.units_per_iteration,
            }
        }
        let med = |m: &Measurement| m.value.as_ref().map(|v| v.median);
        (side(a), side(b), med(a), med(b))
    } else {
        // Below resolution on a side: the derived figure is not a number, the raw one is.
        p.basis = "raw".into();
        p.unit = a.raw_unit.clone();
        p.note = "value below resolution in a run: raw per-iteration times compared".into();
        fn raw_side(m: &Measurement) -> Side<'_> {
            Side {
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
        p.note = "median of A is not positive: no ratio".into();
        return p;
    }
    p.ratio = Some(mb / ma);
    p.ratio_ci95 = ratio_interval(&sa, &sb, seed_for(&label(a)));
    let Some([lo, hi]) = p.ratio_ci95 else {
        p.note = "too few usable samples for an interval".into();
        return p;
    };
    let costlier = if higher_is_better(&p.unit) {
        hi < 1.0
    } else {
        lo > 1.0
    };
    let cheaper = if higher_is_better(&p.unit) {
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
    let r = mb / ma;
    p.change_pct = Some(if higher_is_better(&p.unit) {
        (1.0 / r - 1.0) * 100.0
    } else {
        (r - 1.0) * 100.0
    });
    p
}

impl Comparison {
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
    use crate::report::input::parse_run;

    fn fixture() -> Run {
        parse_run(include_str!("../../../tests/fixtures/run-quick.json"), "f").unwrap()
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

    fn verdict(a: Vec<f64>, b: Vec<f64>) -> Pair {
        compare(&run_with(a), "a", &run_with(b), "b")
            .pairs
            .remove(0)
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
        assert!(higher_is_better("GB/s") && !higher_is_better("ns/switch"));
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
        assert!(cmp.pairs[0].note.starts_with("invalid in B"));
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
