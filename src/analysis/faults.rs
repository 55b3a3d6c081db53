//! What a major fault of an evicted file costs, where a run's counts allow it (the seed's
//! question 22): the touch loops' elapsed time less the minor faults' share, at the
//! per-fault cost of the same run's file-cached case, over the major faults; and the share
//! of that elapsed time spent off the CPU (1 − CPU time / elapsed: waiting for the disk).
//! Computed once here; the terminal, Markdown, HTML and JSON render these fields
//! (report::fault). A case whose counts do not allow a figure says why.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{Measurement, Run};
use crate::probes::fault;
use crate::units::Per;

/// Below this window CPU time, counted in scheduler ticks, says nothing as a share.
const MIN_SHARE_WINDOW_S: f64 = 0.05;

/// How the time per major fault was derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Derivation {
    /// (elapsed − minor faults × the file-cached case's cost per fault) / major faults.
    ElapsedLessMinorAtCachedCost,
    /// elapsed / major faults: an upper bound, the run having no file-cached cost per
    /// fault to take the minor faults out.
    AtMostElapsedOverMajor,
    /// elapsed / major faults, every fault counted being major (readahead off, touched in
    /// a random order: each touch one major fault).
    EveryFaultMajor,
}

/// One evicted-file case's major faults, costed where its counts allow it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MajorFaultCost {
    pub probe: String,
    pub params: BTreeMap<String, serde_json::Value>,
    pub major_faults: u64,
    pub minor_faults: u64,
    /// The wall time the fault counts cover.
    pub elapsed_ns: f64,
    /// Whether the probe recorded that window (false: estimated as the samples' mean time
    /// per page × the pages the counts cover, for runs recorded before it was kept).
    pub elapsed_recorded: bool,
    /// User + system CPU time over the same window.
    pub cpu_ns: f64,
    /// The file-cached case's cost per (minor) fault used to take the minor faults out.
    pub minor_fault_ns: Option<f64>,
    pub per_major_fault_ns: Option<f64>,
    /// Its 95% interval: the samples' per-page interval carried in proportion to the
    /// elapsed time (the time per page is what varies from sample to sample), the minor
    /// faults' share taken out of each side.
    pub per_major_fault_ci95: Option<[f64; 2]>,
    pub derivation: Option<Derivation>,
    /// Why there is no time per major fault (None when there is one).
    pub per_major_fault_missing: Option<String>,
    /// The share of elapsed time off the CPU, 0 to 1.
    pub io_share: Option<f64>,
    /// Why there is no I/O share (None when there is one).
    pub io_share_missing: Option<String>,
}

/// The wall time the rusage deltas cover, in seconds, and whether it was recorded (the
/// probe timed exactly that window) or is estimated (a run recorded before the window was
/// kept: the samples' mean time per iteration × the iterations the deltas cover).
pub fn window_s(m: &Measurement) -> (f64, bool) {
    let r = &m.evidence.rusage;
    if let Some(ns) = r.wall_ns {
        return (ns as f64 / 1e9, true);
    }
    let mean = if m.samples.is_empty() {
        0.0
    } else {
        m.samples.iter().sum::<f64>() / m.samples.len() as f64
    };
    (mean * r.iterations as f64 / 1e9, false)
}

/// Every loop-timed evicted-file case of `run`, costed.
pub fn major_fault_costs(run: &Run) -> Vec<MajorFaultCost> {
    let minor_cost = run
        .measurements
        .iter()
        .find(|m| m.is(fault::FILE_CACHED) && m.valid && !m.is_unstable())
        .and_then(|m| m.value.as_ref())
        .map(|v| v.median);
    run.measurements
        .iter()
        .filter(|m| m.is(fault::FILE_EVICTED) && m.raw_unit.per() == Some(&Per::Page))
        .map(|m| cost_of(m, minor_cost))
        .collect()
}

/// One case's cost, `minor_cost` being the file-cached case's ns per fault, if any.
pub fn cost_of(m: &Measurement, minor_cost: Option<f64>) -> MajorFaultCost {
    let t = &m.evidence.rusage.total;
    let (wall_s, recorded) = window_s(m);
    let elapsed_ns = wall_s * 1e9;
    let cpu_ns = (t.utime_us + t.stime_us) as f64 * 1e3;
    let (major, minor) = (t.majflt, t.minflt);
    let minor_share = minor_cost.map(|c| minor as f64 * c);
    let missing = if !m.valid {
        Some("the measurement is invalid".to_string())
    } else if major == 0 {
        Some("no major faults were counted".into())
    } else if elapsed_ns <= 0.0 {
        Some("no elapsed time was recorded".into())
    } else if minor_share.is_some_and(|s| s >= elapsed_ns) {
        Some(format!(
            "the {minor} minor faults at the file-cached case's cost take the whole elapsed \
             time: none is left for the major faults"
        ))
    } else {
        None
    };
    let (per_major, derivation) = match (&missing, minor_share) {
        (Some(_), _) => (None, None),
        (None, Some(s)) => (
            Some((elapsed_ns - s) / major as f64),
            Some(Derivation::ElapsedLessMinorAtCachedCost),
        ),
        (None, _) if minor == 0 => (
            Some(elapsed_ns / major as f64),
            Some(Derivation::EveryFaultMajor),
        ),
        (None, None) => (
            Some(elapsed_ns / major as f64),
            Some(Derivation::AtMostElapsedOverMajor),
        ),
    };
    // The per-page samples' interval, as a share of their median, carried to elapsed.
    let spread = (m.raw.median > 0.0 && m.raw.ci95.iter().all(|x| x.is_finite()))
        .then(|| m.raw.ci95.map(|x| x / m.raw.median));
    let per_major_ci95 = per_major.zip(spread).map(|(_, [lo, hi])| {
        let taken =
            minor_share.filter(|_| derivation == Some(Derivation::ElapsedLessMinorAtCachedCost));
        let s = taken.unwrap_or(0.0);
        [
            (elapsed_ns * lo - s) / major as f64,
            (elapsed_ns * hi - s) / major as f64,
        ]
    });
    let io_missing = if !m.valid {
        Some("the measurement is invalid".to_string())
    } else if wall_s < MIN_SHARE_WINDOW_S {
        Some("elapsed under 50 ms: CPU time is counted in scheduler ticks".into())
    } else if cpu_ns > elapsed_ns {
        Some("CPU time beyond elapsed".into())
    } else {
        None
    };
    MajorFaultCost {
        probe: m.probe.clone(),
        params: m.params.clone(),
        major_faults: major,
        minor_faults: minor,
        elapsed_ns,
        elapsed_recorded: recorded,
        cpu_ns,
        minor_fault_ns: minor_cost
            .filter(|_| derivation == Some(Derivation::ElapsedLessMinorAtCachedCost)),
        per_major_fault_ns: per_major,
        per_major_fault_ci95: per_major_ci95,
        derivation,
        per_major_fault_missing: missing,
        io_share: io_missing.is_none().then(|| 1.0 - cpu_ns / elapsed_ns),
        io_share_missing: io_missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded() -> Run {
        crate::input::parse_run(
            include_str!("../../tests/fixtures/runs/fault.json"),
            "fault",
        )
        .unwrap()
    }

    fn evicted(run: &mut Run) -> &mut Measurement {
        run.measurements
            .iter_mut()
            .find(|m| m.is(fault::FILE_EVICTED) && m.raw_unit.per() == Some(&Per::Page))
            .unwrap()
    }

    /// The recorded run: 36 major and 2,340 minor faults; the minor ones are taken out at
    /// the file-cached case's cost per fault, the rest shared by the major ones.
    #[test]
    fn the_recorded_evicted_file_is_costed_from_its_counts() {
        let mut run = recorded();
        let costs = major_fault_costs(&run);
        assert_eq!(costs.len(), 1);
        let c = &costs[0];
        assert_eq!((c.major_faults, c.minor_faults), (36, 2340));
        let minor = c.minor_fault_ns.unwrap();
        let want = (c.elapsed_ns - 2340.0 * minor) / 36.0;
        assert!((c.per_major_fault_ns.unwrap() - want).abs() < 1e-6);
        // Its interval: the per-page samples' interval in proportion, the minor share out.
        let m = evicted(&mut run).clone();
        let [lo, hi] = c.per_major_fault_ci95.unwrap();
        let lo_want = (c.elapsed_ns * m.raw.ci95[0] / m.raw.median - 2340.0 * minor) / 36.0;
        let hi_want = (c.elapsed_ns * m.raw.ci95[1] / m.raw.median - 2340.0 * minor) / 36.0;
        assert!((lo - lo_want).abs() < 1e-6 && (hi - hi_want).abs() < 1e-6);
        assert!(lo < want && want < hi, "{lo} {want} {hi}");
        assert_eq!(c.derivation, Some(Derivation::ElapsedLessMinorAtCachedCost));
        let share = c.io_share.unwrap();
        assert!((share - (1.0 - c.cpu_ns / c.elapsed_ns)).abs() < 1e-12);
        assert!((0.0..=1.0).contains(&share));
        assert!(!c.elapsed_recorded, "this run predates the recorded window");
        // With the window recorded, that window is the elapsed time.
        evicted(&mut run).evidence.rusage.wall_ns = Some(2_000_000_000);
        let c = &major_fault_costs(&run)[0];
        assert!(c.elapsed_recorded);
        assert_eq!(c.elapsed_ns, 2e9);
    }

    /// Counts that do not allow a figure say why; without a file-cached case the figure is
    /// a bound.
    #[test]
    fn counts_that_do_not_allow_it_say_why() {
        let mut run = recorded();
        evicted(&mut run).evidence.rusage.total.majflt = 0;
        let c = &major_fault_costs(&run)[0];
        assert_eq!(c.per_major_fault_ns, None);
        assert_eq!(
            c.per_major_fault_missing.as_deref(),
            Some("no major faults were counted")
        );

        let mut run = recorded();
        evicted(&mut run).evidence.rusage.total.minflt = 1_000_000_000;
        let c = &major_fault_costs(&run)[0];
        assert_eq!(c.per_major_fault_ns, None);
        assert!(c
            .per_major_fault_missing
            .as_ref()
            .unwrap()
            .contains("none is left"));

        let mut run = recorded();
        run.measurements
            .retain(|m| !m.is(crate::probes::fault::FILE_CACHED));
        let c = &major_fault_costs(&run)[0];
        assert_eq!(c.derivation, Some(Derivation::AtMostElapsedOverMajor));
        assert_eq!(c.per_major_fault_ns, Some(c.elapsed_ns / 36.0));
        assert_eq!(c.minor_fault_ns, None);

        let mut run = recorded();
        let m = evicted(&mut run);
        m.evidence.rusage.wall_ns = Some(10_000_000);
        let c = &major_fault_costs(&run)[0];
        assert_eq!(c.io_share, None);
        assert!(c.io_share_missing.as_ref().unwrap().contains("under 50 ms"));
    }
}
