//! The terminal table: one line per measurement (value ± interval, raw/baseline, checks) and,
//! beneath it, why a figure is invalid or below resolution, and its warnings.

use super::units::{fmt_num, rescale_unit, time_unit};
use crate::model::{Measurement, Run, Status, Summary};

/// "1.93 ±0.03 µs/switch" for a summary in a ns-based unit (others printed as they are).
pub fn fmt_value(s: &Summary, unit: &str) -> String {
    // One sample has no spread to build an interval from: never print it as ±0.
    if s.n < 2 {
        return format!("{} (1 sample, no interval)", fmt_plain(s, unit));
    }
    let half = (s.ci95[1] - s.ci95[0]) / 2.0;
    if unit.starts_with("ns") {
        let (d, suffix) = time_unit(s.median);
        format!(
            "{} ±{} {}",
            fmt_num(s.median / d),
            fmt_num(half / d),
            rescale_unit(unit, suffix)
        )
    } else {
        format!("{} ±{} {unit}", fmt_num(s.median), fmt_num(half))
    }
}

fn fmt_plain(s: &Summary, unit: &str) -> String {
    if unit.starts_with("ns") {
        let (d, suffix) = time_unit(s.median);
        format!("{} {}", fmt_num(s.median / d), rescale_unit(unit, suffix))
    } else {
        format!("{} {unit}", fmt_num(s.median))
    }
}

/// The headline: the value, or why there is none.
pub fn headline(m: &Measurement) -> String {
    match (m.status, &m.value) {
        (Status::Invalid, _) => "INVALID".into(),
        (Status::BelowResolution, _) => "below resolution".into(),
        (Status::Ok, Some(v)) => fmt_value(v, &m.unit),
        (Status::Ok, None) => "no value".into(),
    }
}

/// "raw 4.3 µs/round trip, baseline 0.5 µs" (or just raw).
pub fn raw_baseline(m: &Measurement) -> String {
    let raw = fmt_plain(&m.raw, &m.raw_unit);
    match &m.baseline {
        Some(b) => format!("raw {raw}, baseline {}", fmt_plain(b, "ns")),
        None => format!("raw {raw}"),
    }
}

/// "✓ 3/3" or "✗ 1/3".
pub fn checks_cell(m: &Measurement) -> String {
    let ok = m.checks.iter().filter(|c| c.ok).count();
    let mark = if ok == m.checks.len() { "✓" } else { "✗" };
    format!("{mark} {ok}/{}", m.checks.len())
}

/// Short evidence line for switch probes: "2.00 sw/rt, 0 migrations".
fn evidence_cell(m: &Measurement) -> String {
    let it = m.evidence.rusage.iterations.max(1) as f64;
    let t = &m.evidence.rusage.total;
    if ["ctx.", "ipc.", "c2c.", "rpc."]
        .iter()
        .any(|p| m.probe.starts_with(p))
    {
        let (sw, _) = crate::engine::checks::switches_per_op(&m.evidence);
        let mig = crate::engine::checks::migrations(&m.evidence);
        format!(
            "{sw:.2} sw/op ({:.2} vol, {:.2} invol), {mig:.0} migrations",
            t.nvcsw as f64 / it,
            t.nivcsw as f64 / it
        )
    } else if m.probe.starts_with("fault.") || m.probe.starts_with("mmap.") {
        format!(
            "{}, {}, {} blocks in",
            per_op(t.minflt, it, "minflt"),
            per_op(t.majflt, it, "majflt"),
            t.inblock
        )
    } else {
        let cpu = (t.utime_us + t.stime_us).max(1) as f64;
        format!("{:.0}% sys time", 100.0 * t.stime_us as f64 / cpu)
    }
}

/// A count per operation that never rounds a real count to zero: "3 majflt in 2048 ops"
/// when the rate would print as (nearly) 0.0000.
pub fn per_op(count: u64, ops: f64, name: &str) -> String {
    let rate = count as f64 / ops;
    if count > 0 && rate < 0.01 {
        format!("{count} {name} in {ops:.0} ops")
    } else {
        format!("{rate:.4} {name}/op")
    }
}

/// The full table for a run.
pub fn render(run: &Run) -> String {
    let rows: Vec<[String; 5]> = run
        .measurements
        .iter()
        .map(|m| {
            [
                format!("{} {}", m.probe, m.params_label()),
                headline(m),
                raw_baseline(m),
                checks_cell(m),
                evidence_cell(m),
            ]
        })
        .collect();
    let header = [
        "probe".to_string(),
        "value ± 95% CI".into(),
        "raw / baseline".into(),
        "checks".into(),
        "evidence".into(),
    ];
    let mut widths = header.clone().map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String; 5]| {
        cells
            .iter()
            .zip(widths.iter())
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = String::new();
    out.push_str(&line(&header));
    out.push('\n');
    for (r, m) in rows.iter().zip(&run.measurements) {
        out.push_str(&line(r));
        out.push('\n');
        for c in m.failed_checks() {
            out.push_str(&format!(
                "    ✗ {}: expected {}, observed {}\n",
                c.name, c.expected, c.observed
            ));
        }
        if m.status == Status::BelowResolution {
            if let Some(d) = &m.difference {
                out.push_str(&format!(
                    "    the difference raw − baseline has a 95% interval of [{:.3}, {:.3}] ns, \
                     which reaches zero: too small to tell from the baseline\n",
                    d.ci95[0], d.ci95[1]
                ));
            }
        }
        for w in &m.warnings {
            out.push_str(&format!("    ! {w}\n"));
        }
    }
    for s in &run.skipped {
        out.push_str(&format!("skipped {}: {}\n", s.probe, s.reason));
    }
    // Cross-core matrices (ipc, c2c, rpc) under the table, when the run has them.
    out.push_str(&super::ipc::text(run));
    out.push_str(&super::c2c::text(run));
    out.push_str(&super::rpc::text(run));
    out
}

/// The notes that define each distinct probe once (printed after the table with --explain).
pub fn definitions(run: &Run) -> String {
    let mut seen = std::collections::BTreeMap::new();
    for m in &run.measurements {
        // Mode too: process and thread round trips carry their own measured observer tax.
        let key = format!(
            "{} {} {}",
            m.probe,
            m.params
                .get("clock")
                .map(|c| c.to_string())
                .unwrap_or_default(),
            m.params
                .get("mode")
                .map(|c| c.to_string())
                .unwrap_or_default()
        );
        seen.entry(key)
            .or_insert_with(|| (m.probe.clone(), m.notes.join("; ")));
    }
    let mut out: String = seen
        .iter()
        .map(|(k, (p, n))| {
            let mode = k.rsplit(' ').next().unwrap_or("").trim_matches('"');
            if mode.is_empty() {
                format!("{p}: {n}\n")
            } else {
                format!("{p} ({mode}): {n}\n")
            }
        })
        .collect();
    if run.measurements.iter().any(|m| !m.sample_rounds.is_empty()) {
        out.push_str(INTERVALS);
    }
    out.push_str(CHECKS);
    out
}

/// How the intervals are built (--explain).
pub const INTERVALS: &str = "intervals: samples are taken in 3 rounds, each warmed up again and \
    given a third of the budget; a figure's 95% interval is the distribution-free interval of \
    the median of all samples, widened to hold a t interval (2 degrees of freedom) on the three \
    rounds' medians, so drift between rounds widens it. A difference (raw − baseline) is taken \
    pairwise per sample and widened the same way. Drift between separate invocations is larger \
    still: compare uses the history's run-to-run drift for that (docs/EVIDENCE.md).\n";

/// How occupancy is checked (--explain).
pub const CHECKS: &str = "occupancy: the participants' CPU time is read at each window's edges \
    from their thread CPU clocks (exact at read) or from schedstat when the task was not \
    runnable at the read; more CPU time than the window (beyond 2% and 10 µs per reading) is a \
    measurement window error; less than 95% on one CPU, or more than 5% run-queue wait for a \
    lone participant, means a competitor took the CPU and the figure is invalid.\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_count_never_prints_as_zero_per_op() {
        assert_eq!(per_op(3, 2048.0, "majflt"), "3 majflt in 2048 ops");
        assert_eq!(per_op(0, 2048.0, "majflt"), "0.0000 majflt/op");
        assert_eq!(per_op(2048, 2048.0, "minflt"), "1.0000 minflt/op");
    }

    #[test]
    fn one_sample_has_no_interval() {
        let s = crate::engine::stats::summarize(&[1500.0]).unwrap();
        assert_eq!(
            fmt_value(&s, "ns/op"),
            format!("{} (1 sample, no interval)", fmt_plain(&s, "ns/op"))
        );
        let s = crate::engine::stats::summarize(&[1500.0, 1600.0, 1550.0]).unwrap();
        assert!(fmt_value(&s, "ns/op").contains('±'));
    }
}
