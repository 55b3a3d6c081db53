//! The working-set sweep as a person and an old script read it: one table per ring shape
//! (rows per size with raw, overhead, per-switch value, direct vs indirect cost, cache
//! labels and evidence), the knees analysis::sweep found on the measured curve, and
//! lat_ctx-style lines. Everything here is a pure function of a finished Run.

use crate::analysis::knees;

use crate::analysis::sweep::{analyze, policy_of, reason, usable, Curve, Row, SweepAnalysis};
use crate::model::{Measurement, Run, Status};
use crate::probes::ctx::sweep::{counters_per_switch, PROBE};
use crate::report::family::{curve_figure, About, Ask, Evidence, Family, Shown};
use crate::report::figures::Size;
use crate::units::size::fmt_size;
use crate::units::Unit;

fn ns(v: f64) -> String {
    crate::units::fmt_num(v / 1000.0) + " µs"
}

/// Why a point is invalid: its failed checks, "name expected …, observed …".
pub fn invalid(m: &crate::model::Measurement) -> String {
    m.failed_checks()
        .map(|c| {
            format!(
                "{} expected {}, observed {}",
                super::checks::name(c),
                super::checks::expected(c),
                super::checks::observed(c)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The sweep tables and knee lines.
pub fn render(a: &SweepAnalysis, run: &Run, verbose: bool) -> String {
    let mut out = String::new();
    if !a.caches.is_empty() {
        out.push_str(&format!(
            "caches of the measured CPU: {}\n",
            a.caches
                .iter()
                .map(|(l, b)| format!("{l} {}", fmt_size(*b)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for c in &a.curves {
        out.push_str(&format!(
            "\nctx.sweep {} ring, N={}, {} walk, stride {} B, {} scheduling\n  ({})\n",
            c.mode, c.procs, c.access, c.stride, c.policy, c.definition
        ));
        let header = [
            "size",
            "fits",
            "lap (raw)",
            "overhead",
            "per switch ±95%",
            "indirect",
            "sw/hop",
            "faults",
            "counters/switch",
        ];
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut said = Said::default();
        let mut points = Vec::new();
        for r in &c.rows {
            let m = measurement_of(run, c, r);
            rows.push(row_cells(c, r, m, &mut said, verbose));
            points.push(m);
        }
        let Said { notes, extra } = said;
        out.push_str(&indented_grid(&header, &rows));
        // One paragraph wrapped to the terminal: lines broken by hand at 100 columns were
        // broken again at 80 into ragged halves ("… / N,", "all N").
        out.push_str(&crate::report::term::wrap(
            "lap = the token once round all N members (N hops); per switch = (lap − \
             overhead) / N, lat_ctx's figure; fits = smallest cache holding one process's \
             working set / all N together; indirect = per switch − the S=0 (direct) cost",
            crate::report::term::Term::stdout().width,
            "  ",
            "  ",
        ));
        out.push('\n');
        if rows
            .iter()
            .any(|r| r.get(5).is_some_and(|c| c.starts_with("faster")))
        {
            out.push_str("  faster (model fails): ");
            out.push_str(crate::report::remarks::NEGATIVE_FINDING);
            out.push('\n');
        }
        if let Some(p) = extra_switches_note(&extra) {
            out.push_str(&crate::report::term::wrap(
                &p,
                crate::report::term::Term::stdout().width,
                "  ",
                "    ",
            ));
            out.push('\n');
        }
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
        if !verbose {
            // Why sizes are invalid: each failed check once with the sizes it concerns.
            let size = |m: &Measurement| fmt_size(m.param_u64("size").unwrap_or(0));
            let term = crate::report::term::Term::stdout();
            out.push_str(&super::table::failed_block(&points, &size, &term));
        }
        out.push_str(&knee_lines(c));
    }
    if !verbose {
        out.push_str(&size_warnings(a, run));
    }
    out
}

/// The sizes' warnings after every curve, each kind once with the sizes it concerns.
fn size_warnings(a: &SweepAnalysis, run: &Run) -> String {
    let ms: Vec<&Measurement> = run.measurements.iter().filter(|m| m.is(PROBE)).collect();
    // A row is named by its size, as in the table ("16k"), and by its ring when the run
    // has rings of several sizes: "in 4: 1m, 0, 4k, 16k" after rings of 2 and 4 did not
    // say which ring's 1m.
    let rings: std::collections::BTreeSet<usize> = a.curves.iter().map(|c| c.procs).collect();
    let name = |m: &Measurement| {
        let size = fmt_size(m.param_u64("size").unwrap_or(0));
        if rings.len() > 1 {
            // No space: the warning lines fold labels by their first word.
            format!("N={}/{size}", m.param_u64("procs").unwrap_or(0))
        } else {
            size
        }
    };
    let term = crate::report::term::Term::stdout();
    super::table::warning_block_by(&ms, &name, &term, false)
}

/// The measurement a row of a curve was read from.
fn measurement_of<'a>(run: &'a Run, c: &Curve, r: &Row) -> &'a Measurement {
    run.measurements
        .iter()
        .find(|m| {
            m.is(PROBE)
                && m.param_u64("procs").unwrap_or(0) as usize == c.procs
                && m.param_text("mode") == c.mode
                && m.param_text("access") == c.access
                && m.param_u64("stride").unwrap_or(0) == c.stride
                && policy_of(m) == c.policy
                && m.param_u64("size").unwrap_or(0) == r.size
        })
        .expect("rows come from measurements")
}

/// A size whose hops held more than one switch: (size, switches per hop, the figure per
/// counted switch).
type ExtraSwitches = (u64, f64, String);

/// One paragraph for every size of a curve whose hops held more than one switch (a ring of
/// N > 2 under normal scheduling: most of its sizes), each size's figure per counted switch
/// in it. Why one: a three-line note under every size would say the same thing once a size.
fn extra_switches_note(extra: &[ExtraSwitches]) -> Option<String> {
    if extra.is_empty() {
        return None;
    }
    let (lo, hi) = extra.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), e| {
        (lo.min(e.1), hi.max(e.1))
    });
    let range = if format!("{lo:.2}") == format!("{hi:.2}") {
        format!("{lo:.2}")
    } else {
        format!("{lo:.2}–{hi:.2}")
    };
    let sizes = if extra.len() == 1 {
        format!("at {}", fmt_size(extra[0].0))
    } else {
        "at these sizes".to_string()
    };
    let each = extra
        .iter()
        .map(|(size, _, per)| format!("{per} at {}", fmt_size(*size)))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "{range} switches per hop {sizes} (a woken member preempted its waker, which ran \
         again only to block): the figure is per hop as lat_ctx reports it; per counted \
         switch {each}"
    ))
}

/// What a curve's sizes say below its table: notes (why there is no number, warnings) and
/// the sizes whose hops held more than one switch.
#[derive(Default)]
struct Said {
    notes: Vec<String>,
    extra: Vec<ExtraSwitches>,
}

/// One size's cells, and its notes (why there is no number, warnings); a size whose hops
/// held more than one switch goes to `extra` ([`extra_switches_note`]).
fn row_cells(c: &Curve, r: &Row, m: &Measurement, said: &mut Said, verbose: bool) -> Vec<String> {
    let Said { notes, extra } = said;
    let per = match (&r.per_switch, r.status) {
        (Some(v), _) => super::table::fmt_value(v, &Unit::NS),
        (None, Status::BelowResolution) => "below resolution".into(),
        (None, Status::Unstable) => super::table::headline(m),
        (None, _) => "INVALID".into(),
    };
    let indirect = match r.indirect {
        // Negative beyond its interval: a finding, never a cost.
        Some([_, lo, hi]) if r.size > 0 && crate::engine::derive::negative_finding(lo, hi) => {
            "faster (model fails)".into()
        }
        // An interval that holds 0: its spread, never a median it does not back ("≈0
        // (0.00439 µs)" printed three digits of a ±36 ns interval).
        Some([med, lo, hi]) if lo <= 0.0 && hi >= 0.0 && r.size > 0 => format!(
            "≈0 ({})",
            crate::units::fmt_spread_with_unit(med, lo, hi, &Unit::NS)
        ),
        // No more precise than its interval, by the units' one rule.
        Some([med, lo, hi]) if r.size > 0 => {
            crate::units::interval::fmt_figure_alone(med, lo, hi, &Unit::NS)
        }
        Some(_) => "(direct)".into(),
        None => "–".into(),
    };
    let (sw, _) = crate::engine::checks::switches_per_op(&m.evidence);
    let faults = m
        .evidence
        .events
        .get("minor-faults")
        .and_then(|e| e.total)
        .unwrap_or(m.evidence.rusage.total.minflt as f64);
    let counters = counters_per_switch(m)
        .iter()
        .map(|(n, v)| format!("{} {v:.0}", short_event(n)))
        .collect::<Vec<_>>()
        .join(" ");
    let cells = vec![
        fmt_size(r.size),
        format!("{}/{}", r.fits_per_process, r.fits_total),
        ns(m.raw.median),
        m.baseline
            .as_ref()
            .map(|b| ns(b.median))
            .unwrap_or_default(),
        per,
        indirect,
        format!("{:.2}", sw / c.procs as f64),
        format!("{:.0}", faults),
        if counters.is_empty() {
            "n/a".into()
        } else {
            counters
        },
    ];
    let per_hop_sw = sw / c.procs as f64;
    if let (Some(v), true) = (&r.per_switch, per_hop_sw > 1.05) {
        // Per counted switch at the precision its interval allows, as the table's column.
        let per = |x: f64| x / per_hop_sw;
        let figure = crate::units::interval::fmt_figure_alone(
            per(v.median),
            per(v.ci95[0]),
            per(v.ci95[1]),
            &Unit::NS,
        );
        extra.push((r.size, per_hop_sw, figure));
    }
    // An invalid size's failed checks, every round's reading, with --verbose; by default
    // once per kind after the curve's table (report::table::failed_block): on a busy machine
    // every size can fail the same check, at 4 lines a size.
    let failed_checks = m.status == Status::Invalid && m.failed_checks().next().is_some();
    if let Some(why) = r.reason.as_ref().filter(|_| verbose || !failed_checks) {
        notes.push(format!("  {}: {why}", fmt_size(r.size)));
    }
    // Each size's warnings with --verbose; by default once per kind after the curves.
    for w in m.warnings.iter().filter(|_| verbose) {
        let w = crate::report::remarks::words(w);
        notes.push(format!("  {}: ! {w}", fmt_size(r.size)));
    }
    cells
}

fn short_event(n: &str) -> &str {
    match n {
        "cache-references" => "cref",
        "cache-misses" => "cmiss",
        "L1-dcache-load-misses" => "L1Dmiss",
        "dTLB-load-misses" => "dTLBmiss",
        "LLC-load-misses" => "LLCmiss",
        other => other,
    }
}

/// Knees found, which cache boundary each matches, and boundaries with no knee.
pub fn knee_lines(c: &Curve) -> String {
    let lo = c.rows.iter().map(|r| r.size).filter(|&s| s > 0).min();
    let hi = c.rows.iter().map(|r| r.size).max();
    let swept = lo
        .zip(hi)
        .map(|(lo, hi)| format!(" (sizes swept {}..{})", fmt_size(lo), fmt_size(hi)));
    knees_text(&c.knees, &c.boundaries, &ns, swept)
}

/// The lines under a curve's table: each knee found with the cache boundary it matches (its
/// figure as `y` writes it), or that none was; then the boundaries with no knee, followed by
/// `swept` (the sizes swept) where there is one: where it is None on a sweep, none are said.
pub fn knees_text(
    found: &[knees::Knee],
    boundaries: &[(String, bool)],
    y: &dyn Fn(f64) -> String,
    swept: Option<String>,
) -> String {
    let mut out = String::new();
    if found.is_empty() {
        out.push_str("  knees: none detected (no rise of ≥25% beyond the points' 95% intervals)\n");
    }
    for k in found {
        out.push_str(&format!("  knee: {}\n", k.describe(y)));
    }
    let missed = knees::missed(boundaries);
    if let (Some(swept), false) = (swept, missed.is_empty()) {
        out.push_str(&format!("  no knee at: {}{swept}\n", missed.join(", ")));
    }
    out
}

/// The table indented two columns, laid out for stdout (its width, less the indent).
fn indented_grid(header: &[&str], rows: &[Vec<String>]) -> String {
    let term = crate::report::term::Term::stdout();
    let inner = crate::report::term::Term {
        width: term.width.saturating_sub(2),
        ..term
    };
    crate::report::term::grid(header, rows, &inner)
        .lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("  {l}\n")
            }
        })
        .collect()
}

/// lmbench lat_ctx lines: per size a blank line and `"size=<k>k ovr=<µs>`, then `<N> <µs>`
/// per ring (µs per switch, two decimals). lat_ctx's ovr is the per-hop overhead (one pipe
/// write+read and one walk); ours is the measured baseline per lap / N. Where lat_ctx would
/// print nothing (negative after subtraction) we print a `#` line saying why, which its
/// parsers skip, so there is never a silent gap.
pub fn lmbench(run: &Run) -> String {
    let mut sizes: Vec<u64> = Vec::new();
    let sweep: Vec<&Measurement> = run.measurements.iter().filter(|m| m.is(PROBE)).collect();
    for m in &sweep {
        let s = m.param_u64("size").unwrap_or(0);
        if !sizes.contains(&s) {
            sizes.push(s);
        }
    }
    sizes.sort_unstable();
    let mut out = String::new();
    for s in sizes {
        let mut at: Vec<&&Measurement> = sweep
            .iter()
            .filter(|m| m.param_u64("size").unwrap_or(0) == s)
            .collect();
        at.sort_by_key(|m| m.param_u64("procs").unwrap_or(0));
        let ovr = at
            .iter()
            .filter_map(|m| Some(m.baseline.as_ref()?.median / m.units_per_iteration / 1000.0))
            .next_back()
            .unwrap_or(0.0);
        out.push_str(&format!("\n\"size={}k ovr={ovr:.2}\n", s / 1024));
        for m in at {
            let n = m.param_u64("procs").unwrap_or(0);
            match usable(m) {
                Some(v) => out.push_str(&format!("{n} {:.2}\n", v.median / 1000.0)),
                None => out.push_str(&format!(
                    "# {n} {}\n",
                    reason(m, &invalid).unwrap_or_else(|| "no value".into())
                )),
            }
        }
    }
    out
}

/// Per-switch cost against working-set size (log2 x), one line per ring shape with its 95%
/// band, grey lines at the cache sizes (per member) and red dashed lines at the detected
/// knees (the same as the table's). S = 0 cannot sit on a log axis, so the direct cost is
/// given in each line's legend entry. Shared by `--svg` and the HTML report.
pub fn svg(a: &SweepAnalysis, machine: &str) -> crate::error::Result<String> {
    use crate::report::plot::{LinePlot, Marker, Point, Series};
    let mut plot = LinePlot {
        title: "Context switch cost vs working set (ctx.sweep, lat_ctx method)".into(),
        subtitle: machine.to_string(),
        x_label: "working set per process (bytes)".into(),
        y_label: "µs per switch (lap − overhead) / N".into(),
        log_x: true,
        x_bytes: true,
        ..Default::default()
    };
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    let at_zero = a
        .curves
        .iter()
        .flat_map(|c| &c.rows)
        .filter(|r| r.size == 0 && r.per_switch.is_some())
        .count();
    plot.left_out.push((
        at_zero,
        "S = 0 has no place on the log axis (each line's legend gives its direct cost)".into(),
    ));
    for c in &a.curves {
        let points: Vec<Point> = c
            .rows
            .iter()
            .filter(|r| r.size > 0)
            .filter_map(|r| {
                let v = r.per_switch.as_ref()?;
                Some(Point::new(
                    r.size as f64,
                    v.median / 1000.0,
                    v.ci95[0] / 1000.0,
                    v.ci95[1] / 1000.0,
                ))
            })
            .collect();
        for p in &points {
            lo = lo.min(p.x);
            hi = hi.max(p.x);
        }
        let direct = c
            .direct
            .as_ref()
            .map(|d| format!(", direct {} at S=0", crate::units::fmt_time(d.median)))
            .unwrap_or_default();
        let name = format!("N={} {}", c.procs, c.mode);
        plot.left_out.push((
            c.rows.iter().filter(|r| r.per_switch.is_none()).count(),
            format!("no value at {name}"),
        ));
        plot.series.push(Series {
            name: format!("{name}{direct}"),
            points,
            // A size without a value breaks the line there.
            gaps: c
                .rows
                .iter()
                .filter(|r| r.size > 0 && r.per_switch.is_none())
                .map(|r| r.size as f64)
                .collect(),
        });
        for k in &c.knees {
            let what = k.match_suffix();
            plot.knees.push(Marker {
                x: k.first_above,
                label: format!("N={} knee{what}", c.procs),
            });
        }
    }
    plot.mark_caches(&a.caches, lo, hi);
    Ok(plot.to_svg())
}

/// The working-set sweep: its figure and its report come from analysis::sweep, the
/// report replacing the common table in `ctx sweep`.
pub struct Sweep;

impl Family for Sweep {
    fn about(&self) -> About {
        About {
            fixture: Some("sweep"),
            quick: &["ctx", "sweep", "--quick", "--sizes", "0,4k", "--procs", "2"],
            has_shown: true,
            probe: Some(PROBE.0),
            evidence: Evidence::Switches,
            draws_own_figures: true,
            ..About::of("ctx")
        }
    }

    fn own_figures(&self, run: &Run, subtitle: &str) -> Vec<(Size, String)> {
        curve_figure(run, PROBE.0, |caches| {
            svg(&analyze(run, caches, &[], &invalid), subtitle)
        })
    }

    fn shown(&self, run: &Run, ask: &Ask) -> crate::error::Result<Shown> {
        let analysis = analyze(run, &ask.caches, &ask.mem_knees, &invalid);
        let text = if ask.lmbench {
            lmbench(run)
        } else {
            super::table::with_run_notes(run, render(&analysis, run, ask.verbose), ask.verbose)
        };
        let mut figures = Vec::new();
        if ask.figures {
            figures.push(("sweep".into(), svg(&analysis, &run.machine.short_name())?));
        }
        Ok(Shown {
            text: Some(text),
            analysis: Some(serde_json::to_value(&analysis).expect("analysis serializes")),
            figures,
            ..Shown::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hops_with_extra_switches_are_one_paragraph_with_each_sizes_figure() {
        assert_eq!(extra_switches_note(&[]), None);
        let extra = [
            (0, 1.43, "0.780 µs".to_string()),
            (4096, 1.47, "0.816 µs".to_string()),
            (1 << 20, 1.36, "10.1 µs".to_string()),
        ];
        let p = extra_switches_note(&extra).unwrap();
        assert!(
            p.starts_with("1.36–1.47 switches per hop at these sizes (a woken member"),
            "{p}"
        );
        assert!(
            p.ends_with("per counted switch 0.780 µs at 0, 0.816 µs at 4k, 10.1 µs at 1m"),
            "{p}"
        );
        // Said once, however many sizes.
        assert_eq!(p.matches("switches per hop").count(), 1);
        let one = extra_switches_note(&extra[2..]).unwrap();
        assert!(one.starts_with("1.36 switches per hop at 1m ("), "{one}");
    }
}
