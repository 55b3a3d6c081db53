//! The fault report beside the table: per case ns/page, ns/fault and the counted faults per
//! page (the figure fault-around, THP and readahead change), the per-touch latency percentiles
//! and histogram plots, and the mapping as /proc/self/maps shows it. Reports never measure.

use super::plot::Histogram;
use super::term::{grid, Term};
use crate::engine::stats::quantile_sorted;
use crate::model::{Measurement, Run};
use crate::report::family::{Ask, Evidence, Family, Shown};
use crate::units::fmt_num;

/// "fault table": one line per loop-timed fault measurement, fitted to the terminal.
pub fn table(run: &Run) -> String {
    table_for(run, &Term::stdout())
}

/// [`table`] within `term.width`. Faults per page are three significant digits; major faults
/// that happened never print as a rounded zero.
pub fn table_for(run: &Run, term: &Term) -> String {
    let rows: Vec<Vec<String>> = run
        .measurements
        .iter()
        .filter(|m| m.probe.starts_with("fault.") && m.raw_unit == "ns/page")
        .map(|m| {
            let t = &m.evidence.rusage.total;
            let touched = m.evidence.rusage.iterations.max(1);
            let per_fault = m
                .value
                .as_ref()
                .map(|v| fmt_num(v.median))
                .unwrap_or_else(|| "-".into());
            vec![
                case_label(m),
                fmt_num(m.raw.median),
                per_fault,
                fmt_num((t.minflt + t.majflt) as f64 / touched as f64),
                per_page(t.majflt, touched),
                if m.valid { "yes" } else { "NO" }.to_string(),
            ]
        })
        .collect();
    grid(
        &[
            "case",
            "ns/page",
            "ns/fault",
            "faults/page",
            "major/page",
            "valid",
        ],
        &rows,
        term,
    )
}

/// Major faults per page: "0", "0.125", or "10 in 65536" when rare but present.
fn per_page(majflt: u64, pages: u64) -> String {
    let r = majflt as f64 / pages.max(1) as f64;
    if majflt == 0 || r >= 0.01 {
        fmt_num(r)
    } else {
        format!("{majflt} in {pages}")
    }
}

/// "fault.anon touch=write thp=never order=seq", without size/cpu noise.
pub fn case_label(m: &Measurement) -> String {
    let mut s = m.probe.clone();
    for k in ["touch", "thp", "phase", "readahead", "order"] {
        if let Some(v) = m.params.get(k).and_then(|v| v.as_str()) {
            s += &format!(" {k}={v}");
        }
    }
    s
}

/// p50/p90/p99/max of the per-touch latencies.
pub fn percentiles(samples: &[f64]) -> Option<[f64; 4]> {
    if samples.is_empty() {
        return None;
    }
    let mut v = samples.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Some([
        quantile_sorted(&v, 0.5),
        quantile_sorted(&v, 0.9),
        quantile_sorted(&v, 0.99),
        v[v.len() - 1],
    ])
}

/// The latency lines for every per-touch measurement.
pub fn latency_table(run: &Run) -> String {
    let mut out = String::new();
    for m in run.measurements.iter().filter(|m| m.unit == "ns/touch") {
        if let Some([p50, p90, p99, max]) = percentiles(&m.samples) {
            out.push_str(&format!(
                "{:<56} p50 {} ns  p90 {} ns  p99 {} ns  max {} ns  ({} touches)\n",
                case_label(m),
                fmt_num(p50),
                fmt_num(p90),
                fmt_num(p99),
                fmt_num(max),
                m.samples.len()
            ));
        }
    }
    out
}

/// One histogram SVG per per-touch measurement: (file stem, svg).
pub fn latency_svgs(run: &Run) -> Vec<(String, String)> {
    let host = run.machine.short_name();
    run.measurements
        .iter()
        .filter(|m| m.unit == "ns/touch")
        .map(|m| {
            let label = case_label(m);
            let stem = label.replace(['=', ' '], "_").replace(
                |c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '.',
                "-",
            );
            let svg = Histogram {
                title: format!("{label}: time per touch"),
                subtitle: format!("{host}, {} touches", m.samples.len()),
                x_label: "ns/touch".into(),
                values: m.samples.clone(),
                log_count: true,
            }
            .to_svg();
            (stem, svg)
        })
        .collect()
}

/// Page faults: a table per case with faults per page, the per-touch latency, and each
/// case's `/usr/bin/time -v` view, printed after the common table by `fault`.
pub struct Fault;

impl Family for Fault {
    fn section(&self) -> &'static str {
        "fault"
    }

    fn evidence(&self) -> Evidence {
        Evidence::Faults
    }

    fn shown(&self, run: &Run, ask: &Ask) -> crate::error::Result<Shown> {
        use std::fmt::Write as _;
        let mut after = table(run);
        let lat = latency_table(run);
        if !lat.is_empty() {
            let _ = write!(after, "\n{lat}");
        }
        for m in &run.measurements {
            let _ = write!(after, "\n{}", super::timev::render(m));
        }
        Ok(Shown {
            after,
            figures: if ask.figures {
                latency_svgs(run)
            } else {
                Vec::new()
            },
            ..Shown::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_samples() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        let [p50, p90, p99, max] = percentiles(&v).unwrap();
        assert_eq!(p50, 50.5);
        assert!((p90 - 90.1).abs() < 1e-9);
        assert!((p99 - 99.01).abs() < 1e-9);
        assert_eq!(max, 100.0);
        assert!(percentiles(&[]).is_none());
    }

    #[test]
    fn rare_major_faults_never_read_as_zero() {
        assert_eq!(per_page(0, 65536), "0");
        assert_eq!(per_page(10, 65536), "10 in 65536");
        assert_eq!(per_page(65536, 65536), "1.00");
    }
}
