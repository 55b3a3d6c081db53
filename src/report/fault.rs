//! The fault report beside the table: per case ns/page, ns/fault and the counted faults per
//! page (the figure fault-around, THP and readahead change), the per-touch latency percentiles
//! and histogram plots, and the mapping as /proc/self/maps shows it. Reports never measure.

use super::plot::{Histogram, Values};
use super::term::{grid, Term};
use crate::analysis::faults::{major_fault_costs, Derivation, MajorFaultCost};
use crate::engine::stats::quantile_sorted;
use crate::model::{Measurement, Run};
use crate::probes::fault;
use crate::report::family::{About, Ask, Evidence, Family, Shown};
use crate::units::{fmt_num, fmt_time, Per, Unit};

/// "fault table": one line per loop-timed fault measurement, fitted to the terminal.
pub fn table(run: &Run) -> String {
    table_for(run, &Term::stdout())
}

/// [`table`] within `term.width`. Faults per page are three significant digits; major faults
/// that happened never print as a rounded zero. A figure whose interval is beyond ±50% of it
/// is "unstable", never a number (the per-fault figure follows the measurement's status);
/// a case without a figure per fault says why under the table, and an evicted file's major
/// faults are costed there where the counts allow it ([`major_fault_lines`]).
pub fn table_for(run: &Run, term: &Term) -> String {
    let cases = loop_timed(run);
    let label = |m: &Measurement| short_label(m, &cases);
    let rows: Vec<Vec<String>> = cases
        .iter()
        .map(|m| {
            let t = &m.evidence.rusage.total;
            let touched = m.evidence.rusage.iterations.max(1);
            let per_fault = match &m.value {
                _ if m.status == crate::model::Status::Invalid => "INVALID".into(),
                Some(_) if m.is_unstable() => "unstable".into(),
                Some(v) => fmt_num(v.median),
                None => "none".into(),
            };
            // The per-page figure comes from the samples whose checks failed: an invalid
            // case's reads "INVALID" in both columns, as the common table's row does.
            let per_page = if m.status == crate::model::Status::Invalid {
                "INVALID".into()
            } else if m.raw.is_unstable() {
                "unstable".into()
            } else {
                fmt_num(m.raw.median)
            };
            vec![
                label(m),
                per_page,
                per_fault,
                per_page_of(t.minflt + t.majflt, touched),
                per_page_of(t.majflt, touched),
            ]
        })
        .collect();
    // Validity is the common table's checks column, and an invalid case's ns/fault reads
    // "INVALID" here: no column of its own.
    let mut out = grid(
        &["case", "ns/page", "ns/fault", "faults/page", "major/page"],
        &rows,
        term,
    );
    for m in &cases {
        if let Some((_, why)) = why_per_page_only(m) {
            let line = format!("no ns/fault for {}: {why}", label(m));
            out.push_str(&super::term::wrap(&line, term.width, "", "    "));
            out.push('\n');
        }
    }
    out.push_str(&major_fault_lines(run, term));
    out
}

/// The run's loop-timed fault cases (one row each in the fault table).
fn loop_timed(run: &Run) -> Vec<&Measurement> {
    run.measurements
        .iter()
        .filter(|m| m.in_section(fault::SECTION) && m.raw_unit.per() == Some(&Per::Page))
        .collect()
}

/// The parameters a case label may carry ([`short_label`]).
const CASE_KEYS: [&str; 5] = ["touch", "thp", "phase", "readahead", "order"];

/// A case's label with only the parameters that tell `m` from the other `cases` of its
/// probe ("fault.anon touch=write"; "fault.file-cached" when it is the only one): the
/// common table above carries the rest, and labels of every parameter split the fault
/// table in two at 80 columns.
fn short_label(m: &Measurement, cases: &[&Measurement]) -> String {
    super::params::distinguishing_label(m, cases, &CASE_KEYS)
}

/// What each evicted file's major faults cost, where the counts allow it, or why not
/// ([`crate::analysis::faults`]), one wrapped line per case: [`major_fault_text`].
pub fn major_fault_lines(run: &Run, term: &Term) -> String {
    let mut out = String::new();
    for line in major_fault_sentences(run) {
        out.push_str(&super::term::wrap(&line, term.width, "", "    "));
        out.push('\n');
    }
    out
}

/// [`major_fault_text`] of every evicted-file case, each named by the parameters that tell
/// it from the run's other fault cases.
pub fn major_fault_sentences(run: &Run) -> Vec<String> {
    let cases = loop_timed(run);
    major_fault_costs(run)
        .iter()
        .map(|c| {
            let label = cases
                .iter()
                .find(|m| m.probe == c.probe && m.params == c.params)
                .map_or_else(|| c.probe.clone(), |m| short_label(m, &cases));
            major_fault_text(c, &label)
        })
        .collect()
}

/// One evicted-file case's major-fault cost in a sentence that says how it was derived, or
/// why there is none: the same text in the terminal, Markdown and HTML.
pub fn major_fault_text(c: &MajorFaultCost, label: &str) -> String {
    let n = crate::units::fmt_thousands;
    // The figure with its interval by the one rule, where it has one.
    let figure = |v: f64| match c.per_major_fault_ci95 {
        Some([lo, hi]) => crate::units::interval::fmt_figure(v, lo, hi, &Unit::NS),
        None => fmt_time(v),
    };
    let per_major = match (c.per_major_fault_ns, c.derivation, c.minor_fault_ns) {
        (Some(v), Some(Derivation::ElapsedLessMinorAtCachedCost), Some(minor)) => format!(
            "{} per major fault = (elapsed {} − {} minor × {} per cached-file fault) / {} major",
            figure(v),
            fmt_time(c.elapsed_ns),
            n(c.minor_faults),
            fmt_time(minor),
            n(c.major_faults)
        ),
        (Some(v), Some(Derivation::EveryFaultMajor), _) => format!(
            "{} per major fault = elapsed {} / {} major (every fault major)",
            figure(v),
            fmt_time(c.elapsed_ns),
            n(c.major_faults)
        ),
        // A bound is not a figure: the sentence says why there is none and where to get one.
        (Some(_), _, _) => format!(
            "no time per major fault: {} minor faults are mixed in and this run has no \
             cached-file cost per fault to take them out (the case order=random \
             readahead=random makes every touch one major fault)",
            n(c.minor_faults)
        ),
        (None, _, _) => format!(
            "no time per major fault: {}",
            c.per_major_fault_missing.as_deref().unwrap_or("no figure")
        ),
    };
    let io = match (c.io_share, &c.io_share_missing) {
        (Some(share), _) => format!(
            "; off the CPU (waiting for I/O) {:.0}% of elapsed = 1 − CPU {} / elapsed",
            100.0 * share,
            fmt_time(c.cpu_ns)
        ),
        (None, Some(why)) => format!("; no I/O share: {why}"),
        (None, None) => String::new(),
    };
    let bound = c.derivation == Some(Derivation::AtMostElapsedOverMajor);
    let how = if c.elapsed_recorded || c.per_major_fault_ns.is_none() || bound {
        ""
    } else {
        " (elapsed estimated: the samples' mean per page × the pages the counts cover)"
    };
    format!("{label}: {per_major}{io}{how}")
}

/// Faults per page: "0", "1.00", or "10 in 65,536" when fewer than one per page (a rate of
/// "0.00482 faults/page" or "0.0268" is a count).
fn per_page_of(majflt: u64, pages: u64) -> String {
    let r = majflt as f64 / pages.max(1) as f64;
    if majflt == 0 || r >= 1.0 {
        fmt_num(r)
    } else {
        let n = crate::units::fmt_thousands;
        format!("{} in {}", n(majflt), n(pages))
    }
}

/// Why a loop-timed fault case has no figure per fault (None where it has one), in brief
/// (the headline every view shows) and in full (the line under the fault table): faults of
/// both kinds (a disk wait averaged with a page-table update), none counted, or none by
/// design (populate's touch phase). Its figure per page — lat_pagefault's — it always has.
pub fn why_per_page_only(m: &Measurement) -> Option<(&'static str, String)> {
    if !(m.in_section(fault::SECTION) && m.raw_unit.per() == Some(&Per::Page)) || m.value.is_some()
    {
        return None;
    }
    let t = &m.evidence.rusage.total;
    let populated = m.is(fault::POPULATE) && m.param_text("phase") == "touch";
    let n = crate::units::fmt_thousands;
    Some(match (t.majflt, t.minflt) {
        _ if populated => (
            "populated in mmap",
            "MAP_POPULATE faulted the pages in inside mmap(): no faults by design".into(),
        ),
        (0, 0) => ("no faults", "no faults were counted".into()),
        (major, minor) if major > 0 && minor > 0 => (
            "major + minor mixed",
            format!(
                "{} major + {} minor faults: an average would mix a disk wait with a \
                 page-table update",
                n(major),
                n(minor)
            ),
        ),
        _ => ("per page only", "the probe gave no figure per fault".into()),
    })
}

/// A fault case without a figure per fault: its figure per page and why, in brief, "4.65
/// ±0.12 µs/page (major + minor mixed)" — the same text in every view.
pub fn per_page_instead(m: &Measurement) -> Option<String> {
    let (why, _) = why_per_page_only(m)?;
    let r = &m.raw;
    let figure = if r.n < 2 {
        crate::units::fmt_with_unit(r.median, &Unit::ns(Per::Page))
    } else {
        crate::units::fmt_figure(r.median, r.ci95[0], r.ci95[1], &Unit::ns(Per::Page))
    };
    Some(format!("{figure} ({why})"))
}

/// "fault.anon touch=write thp=never order=seq", without size/cpu noise.
pub fn case_label(m: &Measurement) -> String {
    let mut s = m.probe.clone();
    for k in CASE_KEYS {
        if let Some(v) = m.param_str(k) {
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
    for m in run
        .measurements
        .iter()
        .filter(|m| m.unit.per() == Some(&Per::Touch))
    {
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
        .filter(|m| m.unit.per() == Some(&Per::Touch))
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
                values: Values::Samples {
                    values: m.samples.clone(),
                    log_count: true,
                },
            }
            .to_svg();
            (stem, svg)
        })
        .collect()
}

/// What a fault case's bar stands on, per page or per fault: INVALID (its checks failed) or
/// unstable (its interval is noise) is never drawn as a value.
fn not_drawn(m: &Measurement, s: &crate::model::Summary) -> Option<String> {
    if !m.valid || m.status == crate::model::Status::Invalid {
        Some("INVALID".into())
    } else if s.is_unstable() {
        Some("unstable".into())
    } else {
        None
    }
}

/// The fault report's own figures: the time per page touched (each case's loop over its
/// pages, lmbench lat_pagefault's figure) and the time per fault taken (the same time over
/// the faults getrusage counted), one chart each, their titles and axes saying which; a case
/// without a figure per fault keeps its row there and says why. Then the per-touch latency
/// histograms. Empty when the run has no fault case.
pub fn figures(run: &Run, subtitle: &str) -> Vec<(super::figures::Size, String)> {
    use super::plot::{Bar, BarChart};
    let cases = loop_timed(run);
    let mut out = Vec::new();
    if !cases.is_empty() {
        // "anon touch=write": the figure's title names the family.
        let prefix = format!("{}.", fault::SECTION);
        let label = |m: &Measurement| {
            let l = short_label(m, &cases);
            l.strip_prefix(&prefix).map(str::to_string).unwrap_or(l)
        };
        let bar = |m: &Measurement, s: &crate::model::Summary| match not_drawn(m, s) {
            Some(why) => Bar::missing(label(m), why),
            None => Bar::new(label(m), s.median, s.ci95[0], s.ci95[1]),
        };
        let per_page = cases.iter().map(|m| bar(m, &m.raw)).collect();
        let per_fault = cases
            .iter()
            .map(|m| match (&m.value, why_per_page_only(m)) {
                (Some(v), _) => bar(m, v),
                (None, Some((why, _))) => Bar::missing(label(m), why),
                (None, None) => Bar::missing(label(m), "no value"),
            })
            .collect();
        for (title, axis, bars) in [
            (
                "fault: time per page touched",
                "ns per page (each page touched once)",
                per_page,
            ),
            (
                "fault: time per fault taken",
                "ns per fault (faults counted by getrusage)",
                per_fault,
            ),
        ] {
            let svg = BarChart {
                title: title.into(),
                subtitle: subtitle.into(),
                value_label: axis.into(),
                bars,
                ..Default::default()
            }
            .to_svg();
            out.push((super::figures::Size::Wide, svg));
        }
    }
    out.extend(
        latency_svgs(run)
            .into_iter()
            .map(|(_, svg)| (super::figures::Size::Small, svg)),
    );
    out
}

/// Page faults: a table per case with faults per page, the per-touch latency, and (with
/// --verbose) each case's `/usr/bin/time -v` view, printed after the common table by `fault`.
pub struct Fault;

impl Family for Fault {
    fn about(&self) -> About {
        About {
            fixture: Some("fault"),
            quick: &["fault", "--quick", "--size", "4m"],
            has_shown: true,
            evidence: Evidence::Faults,
            draws_own_figures: true,
            ..About::of("fault")
        }
    }

    fn instead_of_value(&self, m: &Measurement) -> Option<String> {
        per_page_instead(m)
    }

    fn own_figures(&self, run: &Run, subtitle: &str) -> Vec<(super::figures::Size, String)> {
        figures(run, subtitle)
    }

    fn derived(&self, run: &Run) -> Vec<String> {
        major_fault_sentences(run)
    }

    fn analysis(&self, run: &Run) -> Option<(&'static str, serde_json::Value)> {
        let costs = major_fault_costs(run);
        (!costs.is_empty()).then(|| {
            (
                "major_faults",
                serde_json::to_value(costs).expect("the costs serialize"),
            )
        })
    }

    fn shown(&self, run: &Run, ask: &Ask) -> crate::error::Result<Shown> {
        use std::fmt::Write as _;
        let mut after = table(run);
        let lat = latency_table(run);
        if !lat.is_empty() {
            let _ = write!(after, "\n{lat}");
        }
        // Each case's time -v view is 12 lines of counts the table above already gives per
        // page (and peak RSS): on request only.
        if ask.verbose {
            for m in &run.measurements {
                let _ = write!(after, "\n{}", super::timev::render(m));
            }
        } else if !run.measurements.is_empty() {
            after.push_str("\neach case as /usr/bin/time -v shows it: --verbose\n");
        }
        Ok(Shown {
            after,
            analysis: crate::report::analysis_of(run),
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

    fn recorded() -> Run {
        crate::input::parse_run(
            include_str!("../../tests/fixtures/runs/fault.json"),
            "fault",
        )
        .unwrap()
    }

    /// The recorded run's first fault.anon case (touch=write), to change in place.
    fn first_anon(run: &mut Run) -> &mut Measurement {
        run.measurements
            .iter_mut()
            .find(|m| m.is(fault::ANON))
            .unwrap()
    }

    fn case<'a>(run: &'a Run, probe: &str, phase: Option<&str>) -> &'a Measurement {
        run.measurements
            .iter()
            .find(|m| {
                m.probe == probe
                    && m.raw_unit.per() == Some(&Per::Page)
                    && phase.is_none_or(|p| m.param_text("phase") == p)
            })
            .unwrap()
    }

    /// Every fault case carries a figure or a stated reason, the same text in the terminal,
    /// Markdown, CSV and HTML (the HTML said "below resolution" where the terminal said
    /// "no value").
    #[test]
    fn a_case_without_a_figure_per_fault_shows_its_figure_per_page_and_why_in_every_view() {
        let run = recorded();
        let evicted = case(&run, "fault.file-evicted", None);
        let populated = case(&run, "fault.populate", Some("touch"));
        let md = crate::report::markdown::run_to_markdown(&run);
        let csv = crate::report::export::to_csv(&run).unwrap();
        let html = crate::report::html::render(std::slice::from_ref(&run));
        for (m, why) in [
            (evicted, "(major + minor mixed)"),
            (populated, "(populated in mmap)"),
        ] {
            let text = crate::report::table::headline(m);
            assert!(text.ends_with(why), "{text}");
            assert!(text.contains("/page"), "a figure per page: {text}");
            assert_ne!(text, "no value");
            assert!(md.contains(&text), "markdown: {text}");
            assert!(csv.contains(&text), "csv: {text}");
            assert!(html.contains(&crate::escape::xml(&text)), "html: {text}");
        }
        assert!(
            !html.contains("below resolution"),
            "no case of this run is below resolution"
        );
        let t = table_for(&run, &Term::plain(80));
        assert!(t.contains("no ns/fault for fault.file-evicted"), "{t}");
        let flat = t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("36 major + 2,340 minor faults"), "{t}");
        assert!(
            t.contains("no ns/fault for fault.populate phase=touch"),
            "{t}"
        );
    }

    /// The evicted file's major faults are costed, saying how: elapsed less the minor
    /// faults at the cached file's cost, over the major faults; the I/O share is the time
    /// off the CPU.
    #[test]
    fn an_evicted_file_costs_its_major_faults_and_says_how() {
        let run = recorded();
        let lines = major_fault_lines(&run, &Term::plain(200));
        assert!(lines.contains("per major fault = (elapsed "), "{lines}");
        assert!(
            lines.contains("2,340 minor × 2.69 µs per cached-file fault) / 36 major"),
            "{lines}"
        );
        assert!(lines.contains("off the CPU (waiting for I/O)"), "{lines}");
        assert!(lines.contains("elapsed estimated"), "{lines}");
        // Without a cached-file case the minor faults cannot be taken out: a bound.
        let mut alone = run.clone();
        alone.measurements.retain(|m| !m.is(fault::FILE_CACHED));
        let lines = major_fault_lines(&alone, &Term::plain(200));
        assert!(
            lines.contains("no time per major fault: 2,340 minor faults are mixed in"),
            "{lines}"
        );
        assert!(
            !lines.contains("at most "),
            "a bound is not a figure: {lines}"
        );
        // Every fault major (readahead off, random order): elapsed over the major faults.
        let mut every = alone.clone();
        for m in every
            .measurements
            .iter_mut()
            .filter(|m| m.is(fault::FILE_EVICTED))
        {
            m.evidence.rusage.total.minflt = 0;
        }
        let lines = major_fault_lines(&every, &Term::plain(200));
        assert!(lines.contains(" / 36 major (every fault major)"), "{lines}");
    }

    /// One computation, several renderers: the JSON analysis carries the derived numbers as
    /// fields, and the terminal, Markdown and HTML the same sentence built from them; a
    /// case whose counts do not allow a figure says why in each.
    #[test]
    fn every_view_carries_the_same_major_fault_cost() {
        let run = recorded();
        let json = crate::report::analysis_of(&run).expect("an analysis");
        let cost = &json["major_faults"][0];
        let per_major = cost["per_major_fault_ns"].as_f64().unwrap();
        let share = cost["io_share"].as_f64().unwrap();
        assert_eq!(cost["derivation"], "elapsed_less_minor_at_cached_cost");
        assert_eq!(cost["major_faults"], 36);
        let ci = &cost["per_major_fault_ci95"];
        let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        // The figure no more precise than its interval, as every figure is.
        let figure = format!(
            "{} per major fault",
            crate::units::interval::fmt_figure(per_major, lo, hi, &Unit::NS)
        );
        assert!(figure.contains('±'), "{figure}");
        let io = format!("off the CPU (waiting for I/O) {:.0}%", 100.0 * share);
        // The CSV carries the same figures in their columns.
        let csv = crate::report::export::to_csv(&run).unwrap();
        let mut r = csv::Reader::from_reader(csv.as_bytes());
        let head = r.headers().unwrap().clone();
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let rows: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
        let evicted = rows
            .iter()
            .find(|r| &r[0] == "fault.file-evicted" && &r[col("raw_unit")] == "ns/page")
            .unwrap();
        // Other cases have no major-fault cost: their cells are empty.
        let anon = rows
            .iter()
            .find(|r| r[0].starts_with("fault.anon"))
            .unwrap();
        assert!(anon[col("per_major_fault_ns")].is_empty() && anon[col("io_share")].is_empty());
        let c = &major_fault_costs(&run)[0];
        let [c_lo, c_hi] = c.per_major_fault_ci95.unwrap();
        let cell = |name: &str| evicted[col(name)].parse::<f64>().unwrap();
        assert_eq!(cell("per_major_fault_ns"), c.per_major_fault_ns.unwrap());
        assert_eq!(cell("per_major_fault_ci_lo"), c_lo);
        assert_eq!(cell("per_major_fault_ci_hi"), c_hi);
        assert_eq!(cell("io_share"), c.io_share.unwrap());
        let term = major_fault_lines(&run, &Term::plain(400));
        let md = crate::report::markdown::run_to_markdown(&run);
        let html = crate::report::html::render(std::slice::from_ref(&run));
        for (view, text) in [("terminal", &term), ("markdown", &md), ("html", &html)] {
            assert!(text.contains(&figure), "{view}: {figure}");
            assert!(text.contains(&io), "{view}: {io}");
        }
        let mut none = run.clone();
        for m in none
            .measurements
            .iter_mut()
            .filter(|m| m.is(fault::FILE_EVICTED))
        {
            m.evidence.rusage.total.majflt = 0;
        }
        let json = crate::report::analysis_of(&none).unwrap();
        assert!(json["major_faults"][0]["per_major_fault_ns"].is_null());
        let why = "no time per major fault: no major faults were counted";
        assert!(major_fault_lines(&none, &Term::plain(400)).contains(why));
        assert!(crate::report::markdown::run_to_markdown(&none).contains(why));
        assert!(crate::report::html::render(std::slice::from_ref(&none)).contains(why));
    }

    /// The ns/fault column follows the measurement's status: noise is "unstable", never a
    /// number.
    #[test]
    fn an_unstable_figure_per_fault_is_not_a_number() {
        let mut run = recorded();
        let m = first_anon(&mut run);
        let v = m.value.as_mut().unwrap();
        v.ci95 = [v.median * 0.2, v.median * 3.0];
        m.settle_status();
        assert!(m.is_unstable());
        let t = table_for(&run, &Term::plain(120));
        let row = t
            .lines()
            .find(|l| l.starts_with("fault.anon touch=write"))
            .unwrap();
        assert!(row.contains("unstable"), "{row}");
    }

    /// A busy machine's fault --quick printed "fault.anon touch=read  2290  INVALID": the
    /// per-page figure of a case whose checks failed is no more trustworthy than its
    /// per-fault one. Faults fewer than one per page are counts, never
    /// "0.00482" (file-cached, 207 pages per fault).
    #[test]
    fn an_invalid_case_has_no_figure_per_page_and_rare_faults_are_counts() {
        let mut run = recorded();
        let m = first_anon(&mut run);
        m.status = crate::model::Status::Invalid;
        let t = &mut m.evidence.rusage;
        t.iterations = 16_384;
        t.total.minflt = 79;
        t.total.majflt = 0;
        let table = table_for(&run, &Term::plain(120));
        let row = table
            .lines()
            .find(|l| l.starts_with("fault.anon touch=write"))
            .unwrap();
        let cells: Vec<&str> = row
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(
            cells,
            [
                "fault.anon touch=write",
                "INVALID",
                "INVALID",
                "79 in 16,384",
                "0"
            ],
            "{row}"
        );
    }

    #[test]
    fn rare_major_faults_never_read_as_zero() {
        assert_eq!(per_page_of(0, 65536), "0");
        assert_eq!(per_page_of(10, 65536), "10 in 65,536");
        assert_eq!(per_page_of(65536, 65536), "1.00");
        // Below one per page but above one in a hundred: still a count, never "0.0268"
        // (an evicted file's 8,339 faults over 311,296 pages).
        assert_eq!(per_page_of(8_339, 311_296), "8,339 in 311,296");
        assert_eq!(per_page_of(65_535, 65_536), "65,535 in 65,536");
    }

    /// Each figure says whether it is per page or per fault; a case with no figure per
    /// fault keeps its row there and says why, and its figure per page is drawn.
    #[test]
    fn the_figures_are_per_page_and_per_fault_and_say_so() {
        let run = recorded();
        let figs = figures(&run, "host");
        assert_eq!(figs.len(), 2, "per page, per fault (no per-touch samples)");
        let (page, fault) = (&figs[0].1, &figs[1].1);
        assert!(page.contains("fault: time per page touched"), "{page}");
        assert!(page.contains("ns per page (each page touched once)"));
        assert!(fault.contains("fault: time per fault taken"), "{fault}");
        assert!(fault.contains("ns per fault (faults counted by getrusage)"));
        assert!(
            fault.contains("not plotted: major + minor mixed"),
            "{fault}"
        );
        assert!(fault.contains("not plotted: populated in mmap"), "{fault}");
        assert!(
            !page.contains("not plotted"),
            "every case has a figure per page"
        );
        // An invalid case is not drawn as a value in either.
        let mut bad = recorded();
        for m in bad.measurements.iter_mut() {
            m.valid = false;
            m.status = crate::model::Status::Invalid;
        }
        for (_, svg) in figures(&bad, "host") {
            assert!(svg.contains("not plotted: INVALID"), "{svg}");
            assert!(!svg.contains("class=\"pt\""), "{svg}");
        }
    }
}
