//! `ctx anatomy`: the ladder of a switch's causes as a waterfall (rung, added cost, share of
//! the total), the sum of the rungs against the direct measurement of every cause at once,
//! the quiz's three reasons with this machine's numbers, and the waterfall chart.

use super::family::{Ask, Evidence, Family, Shown};
use super::figures::Size;
use super::term::wrap;
use crate::escape::xml;
use crate::model::{Measurement, Run, Status};
use crate::units::interval::{fmt_figure, fmt_figure_alone};
use crate::units::size::fmt_size;
use serde::Serialize;

/// The probe id (probes::ctx::anatomy::PROBE; the report does not import probes).
pub const PROBE: &str = "ctx.anatomy";

/// The width every line of the waterfall fits.
const WIDTH: usize = 80;

/// How far the sum of the rungs may stray from the direct measurement and still be a sum.
pub const SUM_TOLERANCE: f64 = 0.15;

/// One rung's figure per switch: median and 95% interval of the paired difference / 2.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figure {
    pub median: f64,
    pub ci95: [f64; 2],
}

impl Figure {
    fn reaches_zero(&self) -> bool {
        self.ci95[0] <= 0.0
    }
}

/// One rung as the waterfall shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub rung: String,
    pub cause: String,
    pub label: String,
    pub figure: Option<Figure>,
    /// "ok", "below resolution", "unstable", "invalid".
    pub status: String,
    /// Share of the direct total (None without one, or for a figure not resolved).
    pub share: Option<f64>,
    /// Whether the rung enters the sum (one cache rung does: the TLB walk's own lines).
    pub in_sum: bool,
}

/// The ladder of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Waterfall {
    pub steps: Vec<Step>,
    /// Rungs that could not apply here, with the one line why.
    pub cannot: Vec<(String, String)>,
    pub sum: Option<Figure>,
    pub direct: Option<Figure>,
    /// sum / direct.
    pub ratio: Option<f64>,
    /// Whether the sum is within ±15% of the direct measurement.
    pub adds_up: Option<bool>,
}

fn param<'a>(m: &'a Measurement, k: &str) -> Option<&'a serde_json::Value> {
    m.params.get(k)
}

fn figure_of(m: &Measurement) -> Option<Figure> {
    let d = m.difference.as_ref()?;
    let u = m.units_per_iteration.max(1.0);
    Some(Figure {
        median: d.median / u,
        ci95: [d.ci95[0] / u, d.ci95[1] / u],
    })
}

/// A rung's label in the waterfall.
fn label(m: &Measurement) -> String {
    let rung = param(m, "rung").and_then(|v| v.as_str()).unwrap_or("?");
    let num = |k: &str| param(m, k).and_then(|v| v.as_u64()).unwrap_or(0);
    match rung {
        "base" => "base: 2 threads, futex".into(),
        "address-space" => "+ address space".into(),
        "barrier" => "+ speculation barrier".into(),
        "other-cpu" => format!("+ another CPU ({})", num("partner_cpu")),
        "all" => "all causes at once".into(),
        r if r.starts_with("regs-") => {
            let name = param(m, "regs").and_then(|v| v.as_str()).unwrap_or("?");
            format!("+ {name} state ({} B)", num("xsave_bytes"))
        }
        r if r.starts_with("cache-") => format!("+ cache refill {}", fmt_size(num("size"))),
        r if r.starts_with("tlb-") => format!("+ TLB refill {} pages", num("pages")),
        r => r.to_string(),
    }
}

fn status_word(m: &Measurement) -> &'static str {
    match m.status {
        Status::Ok => "ok",
        Status::BelowResolution => "below resolution",
        Status::Unstable => "unstable",
        Status::Invalid => "invalid",
    }
}

/// The ladder of a run's `ctx.anatomy` measurements (None when it has none).
pub fn analyze(run: &Run) -> Option<Waterfall> {
    let ms: Vec<&Measurement> = run
        .measurements
        .iter()
        .filter(|m| m.probe == PROBE)
        .collect();
    if ms.is_empty() {
        return None;
    }
    let direct_m = ms
        .iter()
        .find(|m| param(m, "rung").and_then(|v| v.as_str()) == Some("all"));
    let direct = direct_m.and_then(|m| figure_of(m));
    // The cache rung in the sum is the one whose lines the direct measurement's walk touches.
    let tlb_lines = direct_m
        .and_then(|m| param(m, "pages"))
        .and_then(|v| v.as_u64())
        .map(|p| p * 64);
    let mut steps = Vec::new();
    for m in ms
        .iter()
        .filter(|m| param(m, "rung").and_then(|v| v.as_str()) != Some("all"))
    {
        let rung = param(m, "rung")
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string();
        let in_sum =
            !rung.starts_with("cache-") || param(m, "size").and_then(|v| v.as_u64()) == tlb_lines;
        let figure = figure_of(m);
        let share = match (figure, direct) {
            (Some(f), Some(d)) if m.status == Status::Ok && d.median > 0.0 => {
                Some(f.median / d.median)
            }
            _ => None,
        };
        steps.push(Step {
            cause: param(m, "cause")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .into(),
            rung,
            label: label(m),
            figure,
            status: status_word(m).into(),
            share,
            in_sum,
        });
    }
    let cannot: Vec<(String, String)> = run
        .skipped
        .iter()
        .filter_map(|s| {
            s.probe
                .strip_prefix(PROBE)
                .and_then(|r| r.strip_prefix(' '))
                .map(|r| (r.to_string(), s.reason.clone()))
        })
        .collect();
    let summed: Vec<Figure> = steps
        .iter()
        .filter(|s| s.in_sum && s.status != "invalid")
        .filter_map(|s| s.figure)
        .collect();
    let sum = (!summed.is_empty()).then(|| sum_of(&summed));
    let ratio = match (sum, direct) {
        (Some(s), Some(d)) if d.median > 0.0 => Some(s.median / d.median),
        _ => None,
    };
    Some(Waterfall {
        steps,
        cannot,
        sum,
        direct,
        ratio,
        adds_up: ratio.map(|r| (r - 1.0).abs() <= SUM_TOLERANCE),
    })
}

/// The sum of rungs: medians add; the interval's sides add in quadrature (the rungs are
/// measured apart, their errors independent).
pub fn sum_of(figs: &[Figure]) -> Figure {
    let median: f64 = figs.iter().map(|f| f.median).sum();
    let down: f64 = figs
        .iter()
        .map(|f| (f.median - f.ci95[0]).powi(2))
        .sum::<f64>()
        .sqrt();
    let up: f64 = figs
        .iter()
        .map(|f| (f.ci95[1] - f.median).powi(2))
        .sum::<f64>()
        .sqrt();
    Figure {
        median,
        ci95: [median - down, median + up],
    }
}

fn show(f: &Option<Figure>, status: &str) -> String {
    match (f, status) {
        (_, "invalid") => "invalid".into(),
        (_, "below resolution") => "below resolution".into(),
        (Some(f), _) if f.reaches_zero() => "below resolution".into(),
        (Some(f), _) => fmt_figure(f.median, f.ci95[0], f.ci95[1], "ns"),
        (None, _) => "no value".into(),
    }
}

/// The waterfall table, the sum line, the rungs that could not apply and the quiz's answer.
pub fn render(a: &Waterfall) -> String {
    let mut s = String::from("Why a switch costs what it does (per switch, same CPU)\n\n");
    s.push_str(&format!("{:<34}{:>22}{:>8}\n", "rung", "added", "share"));
    for st in &a.steps {
        let share = st
            .share
            .map_or(String::new(), |x| format!("{:.0}%", 100.0 * x));
        let mark = if st.in_sum { "" } else { " *" };
        s.push_str(&format!(
            "{:<34}{:>22}{:>8}\n",
            format!("{}{mark}", st.label),
            show(&st.figure, &st.status),
            share
        ));
    }
    for (rung, why) in &a.cannot {
        s.push_str(&wrap(
            &format!("+ {rung} cannot apply: {why}"),
            WIDTH,
            "",
            "    ",
        ));
        s.push('\n');
    }
    s.push('\n');
    if let Some(sum) = a.sum {
        s.push_str(&format!(
            "{:<34}{:>22}\n",
            "sum of the rungs",
            fmt_figure(sum.median, sum.ci95[0], sum.ci95[1], "ns")
        ));
    }
    if let Some(d) = a.direct {
        s.push_str(&format!(
            "{:<34}{:>22}\n",
            "all causes at once (direct)",
            show(&Some(d), "ok")
        ));
    }
    match (a.ratio, a.adds_up) {
        (Some(r), Some(true)) => s.push_str(&format!(
            "the rungs add up: sum / direct = {r:.2} (within ±{:.0}%)\n",
            SUM_TOLERANCE * 100.0
        )),
        (Some(r), Some(false)) => {
            let text = format!(
                "the causes overlap: sum / direct = {r:.2}, beyond ±{:.0}%, so the rungs are \
                 not a sum: {}",
                SUM_TOLERANCE * 100.0,
                overlap_reason(r)
            );
            s.push_str(&wrap(&text, WIDTH, "", "  "));
            s.push('\n');
        }
        _ => {}
    }
    if a.steps.iter().any(|s| !s.in_sum) {
        s.push_str("* not in the sum: a cache rung at another size than the TLB walk's lines\n");
    }
    s.push('\n');
    s.push_str(&quiz(a));
    s
}

/// Which way the causes overlap, from the sign of the gap.
fn overlap_reason(ratio: f64) -> &'static str {
    if ratio > 1.0 {
        "together they cost less than apart (one cause hides behind another)"
    } else {
        "together they cost more than apart (one cause makes another dearer)"
    }
}

/// The quiz's three reasons with this machine's numbers.
pub fn quiz(a: &Waterfall) -> String {
    let total = a.direct.map(|d| d.median).filter(|d| *d > 0.0);
    let part = |cause: &str| -> String {
        let steps: Vec<&Step> = a
            .steps
            .iter()
            .filter(|s| s.cause == cause && s.in_sum)
            .collect();
        if steps.is_empty() {
            return "not measured here".into();
        }
        let resolved: Vec<Figure> = steps
            .iter()
            .filter(|s| s.status == "ok")
            .filter_map(|s| s.figure)
            .collect();
        if resolved.is_empty() {
            return "below resolution on this machine".into();
        }
        let f = sum_of(&resolved);
        let share = total.map_or(String::new(), |t| {
            format!(" ({:.0}% of the switch)", 100.0 * f.median / t)
        });
        format!(
            "{}{share}",
            fmt_figure_alone(f.median, f.ci95[0], f.ci95[1], "ns")
        )
    };
    format!(
        "register state: saving and restoring it adds {}\n\
         caches: refilling what the other task evicted adds {}\n\
         TLB: refilling page translations adds {}\n",
        part("register state"),
        part("caches"),
        part("TLB")
    )
}

/// The waterfall chart: each rung a bar floating from the sum of the rungs before it, the
/// sum and the direct measurement as full bars.
pub fn svg(a: &Waterfall, subtitle: &str) -> String {
    let rows: Vec<(String, f64, f64, &str)> = {
        let mut at = 0.0;
        let mut v = Vec::new();
        for st in a.steps.iter().filter(|s| s.in_sum) {
            let f = st.figure.map_or(0.0, |f| f.median);
            let colour = if st.status == "ok" {
                "#4878a8"
            } else {
                "#b0b0b0"
            };
            v.push((st.label.clone(), at, at + f, colour));
            at += f;
        }
        if let Some(s) = a.sum {
            v.push(("sum of the rungs".into(), 0.0, s.median, "#7a9a50"));
        }
        if let Some(d) = a.direct {
            v.push(("all causes at once".into(), 0.0, d.median, "#c06030"));
        }
        v
    };
    let (w, row_h, left, top) = (760.0, 26.0, 250.0, 56.0);
    let h = top + row_h * rows.len() as f64 + 40.0;
    let max = rows.iter().map(|r| r.1.max(r.2)).fold(1.0f64, f64::max);
    let x = |v: f64| left + (w - left - 90.0) * v.max(0.0) / max;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"20\" font-size=\"15\">Why a switch costs what it does \
         (ns per switch)</text>\n<text x=\"10\" y=\"38\" fill=\"#555\">{}</text>\n",
        xml(subtitle)
    );
    for (i, (name, from, to, colour)) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let (a0, a1) = (x(from.min(*to)), x(from.max(*to)));
        s.push_str(&format!(
            "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">{}</text>\n\
             <rect x=\"{a0:.1}\" y=\"{:.0}\" width=\"{:.1}\" height=\"{:.0}\" fill=\"{colour}\"/>\n\
             <text x=\"{:.1}\" y=\"{:.0}\">{:.0}</text>\n",
            left - 8.0,
            y + 17.0,
            xml(name),
            y + 4.0,
            (a1 - a0).max(1.0),
            row_h - 8.0,
            a1 + 4.0,
            y + 17.0,
            to - from
        ));
    }
    let axis_y = top + row_h * rows.len() as f64 + 8.0;
    s.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{axis_y}\" x2=\"{:.0}\" y2=\"{axis_y}\" stroke=\"#333\"/>\n\
         <text x=\"{left}\" y=\"{:.0}\">0</text>\n<text x=\"{:.0}\" y=\"{:.0}\" \
         text-anchor=\"end\">{:.0} ns</text>\n</svg>\n",
        x(max),
        axis_y + 16.0,
        x(max),
        axis_y + 16.0,
        max
    ));
    s
}

/// The family of `ctx anatomy`.
pub struct Anatomy;

impl Family for Anatomy {
    fn section(&self) -> &'static str {
        "ctx"
    }

    fn owns(&self, probe: &str) -> bool {
        probe == PROBE
    }

    fn evidence(&self) -> Evidence {
        Evidence::Switches
    }

    fn shown_alone(&self, _m: &Measurement) -> bool {
        false
    }

    fn under_table(&self, run: &Run, _verbose: bool) -> String {
        analyze(run).map_or(String::new(), |a| render(&a))
    }

    fn draws_own_figures(&self) -> bool {
        true
    }

    fn own_figures(&self, run: &Run, subtitle: &str) -> Vec<(Size, String)> {
        analyze(run)
            .map(|a| (Size::Wide, svg(&a, subtitle)))
            .into_iter()
            .collect()
    }

    fn analysis(&self, run: &Run) -> Option<(&'static str, serde_json::Value)> {
        analyze(run).map(|a| ("anatomy", serde_json::to_value(a).expect("serializes")))
    }

    fn shown(&self, run: &Run, ask: &Ask) -> crate::error::Result<Shown> {
        let Some(a) = analyze(run) else {
            return Ok(Shown::default());
        };
        let text = super::table::with_run_notes(run, render(&a), ask.verbose);
        let figures = if ask.figures {
            vec![("anatomy".into(), svg(&a, &run.machine.short_name()))]
        } else {
            Vec::new()
        };
        Ok(Shown {
            text: Some(text),
            analysis: crate::report::analysis_of(run),
            figures,
            ..Shown::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(m: f64, half: f64) -> Option<Figure> {
        Some(Figure {
            median: m,
            ci95: [m - half, m + half],
        })
    }

    fn step(rung: &str, cause: &str, f: Option<Figure>, status: &str) -> Step {
        Step {
            rung: rung.into(),
            cause: cause.into(),
            label: rung.into(),
            figure: f,
            status: status.into(),
            share: None,
            in_sum: true,
        }
    }

    fn ladder(direct: f64) -> Waterfall {
        let steps = vec![
            step("base", "scheduler", fig(600.0, 10.0), "ok"),
            step("regs-avx-512", "register state", fig(80.0, 10.0), "ok"),
            step("cache-256k", "caches", fig(900.0, 40.0), "ok"),
            step("tlb-4096p", "TLB", fig(5.0, 20.0), "below resolution"),
        ];
        let sum = sum_of(&steps.iter().filter_map(|s| s.figure).collect::<Vec<_>>());
        let ratio = sum.median / direct;
        Waterfall {
            steps,
            cannot: vec![("barrier".into(), "no per-task prctl".into())],
            sum: Some(sum),
            direct: fig(direct, 30.0),
            ratio: Some(ratio),
            adds_up: Some((ratio - 1.0).abs() <= SUM_TOLERANCE),
        }
    }

    #[test]
    fn the_sum_is_called_a_sum_only_within_fifteen_percent() {
        let t = render(&ladder(1600.0));
        assert!(t.contains("the rungs add up"), "{t}");
        assert!(!t.contains("overlap"), "{t}");
        let t = render(&ladder(2200.0));
        assert!(t.contains("the causes overlap"), "{t}");
        assert!(!t.contains("add up"), "{t}");
        assert!(t.contains("cannot apply: no per-task prctl"), "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
    }

    #[test]
    fn the_quiz_answers_the_three_reasons_or_says_below_resolution() {
        let q = quiz(&ladder(1600.0));
        let lines: Vec<&str> = q.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(
            lines[0].starts_with("register state:") && lines[0].contains("80 ns"),
            "{q}"
        );
        assert!(
            lines[1].starts_with("caches:") && lines[1].contains("% of the switch"),
            "{q}"
        );
        assert!(lines[2].contains("below resolution"), "{q}");
    }

    #[test]
    fn a_rung_whose_interval_reaches_zero_is_below_resolution() {
        assert_eq!(show(&fig(5.0, 20.0), "ok"), "below resolution");
        assert_eq!(show(&fig(5.0, 20.0), "invalid"), "invalid");
        assert!(show(&fig(500.0, 20.0), "ok").contains("500"));
    }

    #[test]
    fn the_waterfall_chart_has_a_bar_per_summed_rung_and_the_totals() {
        let s = svg(&ladder(1600.0), "host <x>");
        assert_eq!(s.matches("<rect x=").count(), 4 + 2);
        assert!(s.contains("host &lt;x&gt;"));
    }
}
