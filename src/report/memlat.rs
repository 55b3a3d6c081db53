//! The memory-latency curve as a table, with the knees analysis::memlat matched against the
//! cache sizes. A pure function of a finished Run.

use crate::analysis::memlat::{analyze, order_of, plateaus, MemAnalysis};
use crate::model::{Run, Status};
use crate::probes::mem::latency::PROBE;
use crate::report::family::{curve_figure, About, Ask, Family, Shown};
use crate::report::figures::Size;
use crate::units::size::fmt_size;
use crate::units::Unit;

/// The curves' tables within the terminal's width: a point's failed checks follow its
/// curve's table once per kind with the sizes they concern and the range of their readings
/// (a busy machine failed the same two checks at every one of 54 points, and every round's
/// reading under each point made `mem latency --quick` 416 lines long at 80 columns);
/// `verbose` prints each point's readings, every round, under it.
pub fn render(a: &MemAnalysis, run: &Run, verbose: bool) -> String {
    let term = super::term::Term::stdout();
    let size = |m: &crate::model::Measurement| fmt_size(m.param_u64("size").unwrap_or(0));
    let mut out = String::new();
    for c in &a.curves {
        let mut points = Vec::new();
        out.push_str(&format!(
            "\nmem.latency {} pages, stride {} B, {} order\n  ({})\n  {:>8}  {:>7}  {:>18}  {:>10}  {:>10}  {:>6}\n",
            c.pages, c.stride, c.order, c.definition, "size", "fits", "ns/load ±95%", "L1Dmiss/ld", "dTLBmiss/ld", "huge"
        ));
        for m in run.measurements.iter().filter(|m| {
            m.is(PROBE)
                && m.param_text("pages") == c.pages
                && m.param_u64("stride").unwrap_or(0) == c.stride
                && order_of(m) == c.order
        }) {
            let per = |n: &str| {
                m.evidence
                    .events
                    .get(n)
                    .filter(|e| e.supported)
                    .and_then(|e| e.per_op)
                    .map(crate::units::fmt_num)
                    .unwrap_or_else(|| "n/a".into())
            };
            let val = match (&m.value, m.status) {
                // The column's header carries the unit.
                (Some(v), Status::Ok | Status::Unstable) => {
                    crate::units::fmt_figure(v.median, v.ci95[0], v.ci95[1], &Unit::Bare)
                }
                (_, Status::Invalid) => "INVALID".into(),
                _ => "below resolution".into(),
            };
            let huge = m
                .params
                .get("huge_page_share")
                .and_then(|v| v.as_f64())
                .map(|s| format!("{:.0}%", s * 100.0))
                .unwrap_or_else(|| "?".into());
            out.push_str(&format!(
                "  {:>8}  {:>7}  {:>18}  {:>10}  {:>10}  {:>6}\n",
                fmt_size(m.param_u64("size").unwrap_or(0)),
                m.param_text("fits"),
                val,
                per("L1-dcache-load-misses"),
                per("dTLB-load-misses"),
                huge
            ));
            for f in m.failed_checks().filter(|_| verbose) {
                out.push_str(&format!("    ✗ {}\n", crate::report::checks::line(f)));
            }
            points.push(m);
        }
        if !verbose {
            out.push_str(&super::table::failed_block(&points, &size, &term));
        }
        let y = |v: f64| format!("{v:.2} ns");
        out.push_str(&super::sweep::knees_text(
            &c.knees,
            &c.boundaries,
            &y,
            Some(String::new()),
        ));
    }
    out
}

/// The memory-latency figure: latency against buffer size on log–log axes (levels an order
/// of magnitude apart stay readable), one line per page mode and stride with its 95% band,
/// cache sizes as grey lines, the detected knees (the same as the table's) as red dashed
/// lines, and each plateau's level written on it. Shared by `--svg` and the HTML report.
pub fn svg(a: &MemAnalysis, machine: &str) -> crate::error::Result<String> {
    use crate::report::plot::{Annotation, LinePlot, Marker, Point, Series};
    use crate::units::size::{fmt_bytes, ByteStyle};
    let mut plot = LinePlot {
        title: "Memory latency: dependent loads on a random cycle (mem.latency)".into(),
        subtitle: machine.to_string(),
        x_label: "buffer size (bytes)".into(),
        y_label: "ns per load (log)".into(),
        log_x: true,
        log_y: true,
        x_bytes: true,
        ..Default::default()
    };
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for (i, c) in a.curves.iter().enumerate() {
        for p in &c.points {
            lo = lo.min(p.0 as f64);
            hi = hi.max(p.0 as f64);
        }
        plot.series.push(Series {
            name: format!("{} pages, stride {} B, {}", c.pages, c.stride, c.order),
            points: c
                .points
                .iter()
                .map(|&(x, y, l, h)| Point::new(x as f64, y, l, h))
                .collect(),
            // A size without a value breaks the line there.
            gaps: c.gaps.iter().map(|&g| g as f64).collect(),
        });
        for k in &c.knees {
            let what = k.match_suffix();
            plot.knees.push(Marker {
                x: k.first_above,
                label: format!(
                    "knee {}{what}",
                    fmt_bytes(k.first_above, ByteStyle::Trimmed)
                ),
            });
        }
        // Plateau levels for the first curve only: a second curve's labels land on the first's.
        if i == 0 {
            for (x, y) in plateaus(&c.points, &c.knees) {
                plot.annotations.push(Annotation {
                    x,
                    y,
                    text: format!("≈ {}", crate::units::fmt_time(y)),
                });
            }
        }
    }
    for (status, n) in a.curves.iter().flat_map(|c| &c.without_value) {
        plot.left_out.push((*n, status.replace('_', " ")));
    }
    plot.mark_caches(&a.caches, lo, hi);
    Ok(plot.to_svg())
}

/// Memory latency: its figure and its report come from analysis::memlat, the report
/// replacing the common table in `mem latency`.
pub struct MemLatency;

impl Family for MemLatency {
    fn about(&self) -> About {
        About {
            fixture: Some("memlat"),
            quick: &[
                "mem", "latency", "--quick", "--min", "4k", "--max", "16k", "--pages", "4k",
            ],
            has_shown: true,
            probe: Some(PROBE.0),
            draws_own_figures: true,
            ..About::of("mem")
        }
    }

    fn own_figures(&self, run: &Run, subtitle: &str) -> Vec<(Size, String)> {
        curve_figure(run, PROBE.0, |caches| svg(&analyze(run, caches), subtitle))
    }

    fn shown(&self, run: &Run, ask: &Ask) -> crate::error::Result<Shown> {
        let analysis = analyze(run, &ask.caches);
        let mut figures = Vec::new();
        if ask.figures {
            figures.push(("memlat".into(), svg(&analysis, &run.machine.short_name())?));
        }
        Ok(Shown {
            text: Some(super::table::with_run_notes(
                run,
                render(&analysis, run, ask.verbose),
                ask.verbose,
            )),
            analysis: Some(serde_json::to_value(&analysis).expect("analysis serializes")),
            figures,
            ..Shown::default()
        })
    }
}
