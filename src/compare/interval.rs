//! The printed interval with the run-to-run drift the history shows. One run's interval
//! (its rounds spread across the run) cannot see that a whole invocation ran slower or
//! faster; when the history holds earlier runs of the same probe on the same machine, their
//! spread is added so that the interval says where the next run will land, not only where
//! this run's samples were.

use super::{history_drift, key_string, Drift};
use crate::model::Run;

/// The start of the evidence line a widened measurement carries.
pub const DRIFT_LINE: &str = "interval includes run-to-run drift seen in";

/// Widen each valid measurement's value interval of `run` by the run-to-run drift of its
/// probe in `history` (earlier runs on the same machine, see [`history_drift`]): each side's
/// half-width becomes √(within² + (t × sd × √(1 + 1/runs) × median)²), sd the larger of the
/// robust and the plain relative spread of the runs' medians, t Student's 97.5% quantile with
/// runs − 1 degrees of freedom (a spread estimated from 3 runs is itself uncertain, so it
/// counts for more than from 30). The interval from this run's
/// samples alone stays in `value.ci95_within_run`; a note (the evidence line) says how many
/// runs the drift was seen in and how large it is. Probes without enough history are left
/// as they are.
pub fn widen_with_history(run: &mut Run, history: &[Run]) {
    let drift = history_drift(history, &run.machine);
    for m in run.measurements.iter_mut().filter(|m| m.valid) {
        let (Some(d), Some(v)) = (drift.get(&key_string(m)), m.value.as_mut()) else {
            continue;
        };
        let Some(line) = widen(v, d) else {
            continue;
        };
        m.notes.retain(|n| !n.starts_with(DRIFT_LINE));
        m.notes.push(line);
    }
}

/// Widen one summary; the evidence line, or None when it has no positive median.
fn widen(v: &mut crate::model::Summary, d: &Drift) -> Option<String> {
    if v.median <= 0.0 || v.ci95_within_run.is_some() {
        return None;
    }
    // The larger of the robust and the plain spread: on a host that switches between a fast
    // and a slow state, the robust one sees only the common state, and the next run may land
    // in the other (the coverage experiment missed there with the robust one alone). √(1 +
    // 1/runs): the prediction of one new run from a spread estimated on `runs`.
    let t = crate::engine::stats::t_975(d.runs.saturating_sub(1));
    let sd = (d.sd_pct / 100.0).max(d.log_sd);
    let rel = t * sd * (1.0 + 1.0 / d.runs.max(1) as f64).sqrt();
    let reach = rel * v.median;
    let within = v.ci95;
    let lo = (v.median - within[0]).max(0.0).hypot(reach);
    let hi = (within[1] - v.median).max(0.0).hypot(reach);
    v.ci95 = [v.median - lo, v.median + hi];
    v.ci95_within_run = Some(within);
    Some(format!(
        "{DRIFT_LINE} {} runs here: ±{:.1}%",
        d.runs,
        rel * 100.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::parse_run;

    fn fixture() -> Run {
        parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap()
    }

    /// The fixture with every value's median (and interval) scaled by `k`: a recorded run
    /// of the same probes that landed `k` times as high.
    fn landed_at(k: f64) -> Run {
        let mut r = fixture();
        for m in &mut r.measurements {
            if let Some(v) = m.value.as_mut() {
                v.median *= k;
                v.ci95 = [v.ci95[0] * k, v.ci95[1] * k];
            }
        }
        r
    }

    fn first_valid(r: &Run) -> usize {
        r.measurements
            .iter()
            .position(|m| m.valid && m.value.is_some() && m.status == crate::model::Status::Ok)
            .unwrap()
    }

    #[test]
    fn a_recorded_history_widens_the_interval_and_says_so() {
        let history: Vec<Run> = [1.0, 1.1, 0.9, 1.05, 0.95]
            .iter()
            .map(|&k| landed_at(k))
            .collect();
        let mut run = fixture();
        let i = first_valid(&run);
        let before = run.measurements[i].value.clone().unwrap();
        widen_with_history(&mut run, &history);
        let m = &run.measurements[i];
        let v = m.value.as_ref().unwrap();
        assert_eq!(v.ci95_within_run, Some(before.ci95));
        assert_eq!(v.median, before.median);
        assert!(
            v.ci95[0] < before.ci95[0] && v.ci95[1] > before.ci95[1],
            "{v:?}"
        );
        // Medians ×0.9…×1.1: MAD 0.05 → robust sd 7.41%; the plain sd of their logarithms
        // is larger (7.93%) and counts; t(4) = 2.776, √(1 + 1/5) → ±24.1%.
        let logs: Vec<f64> = [0.9f64, 0.95, 1.0, 1.05, 1.1]
            .iter()
            .map(|k| k.ln())
            .collect();
        let mean = logs.iter().sum::<f64>() / 5.0;
        let log_sd = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 4.0).sqrt();
        assert!(log_sd > 1.4826 * 0.05);
        let reach = v.median * 2.776 * log_sd * (1.2f64).sqrt();
        let hi = (before.ci95[1] - before.median).hypot(reach);
        assert!((v.ci95[1] - v.median - hi).abs() < 1e-9 * v.median, "{v:?}");
        assert!(
            m.notes
                .iter()
                .any(|n| n == "interval includes run-to-run drift seen in 5 runs here: ±24.1%"),
            "{:?}",
            m.notes
        );
        // Applied once: widening again changes nothing.
        let once = run.clone();
        widen_with_history(&mut run, &history);
        assert_eq!(run.measurements[i].value, once.measurements[i].value);
        assert_eq!(run.measurements[i].notes, once.measurements[i].notes);
    }

    #[test]
    fn too_little_history_or_another_machine_changes_nothing() {
        let mut run = fixture();
        let i = first_valid(&run);
        let before = run.measurements[i].clone();
        widen_with_history(&mut run, &[landed_at(1.0), landed_at(1.2)]);
        assert_eq!(run.measurements[i].value, before.value);
        assert_eq!(run.measurements[i].notes, before.notes);
        let mut other: Vec<Run> = [1.0, 1.1, 0.9].iter().map(|&k| landed_at(k)).collect();
        for r in &mut other {
            r.machine.kernel.release = Some("9.9.9".into());
        }
        widen_with_history(&mut run, &other);
        assert_eq!(run.measurements[i].value, before.value);
    }
}
