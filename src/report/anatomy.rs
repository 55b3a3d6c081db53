//! `ctx anatomy`: the ladder of a switch's causes as a waterfall (rung, added cost, share of
//! the total), the sum of the rungs against the direct measurement of every cause at once,
//! the quiz's three reasons with this machine's numbers, and the waterfall chart.

use super::family::{About, Ask, Evidence, Family, Shown};
use super::figures::Size;
use super::plot;
use super::term::{wrap, Term};
use crate::escape::xml;
use crate::model::switch_trace::{SideTrace, SwitchTrace};
use crate::model::{Measurement, Run, Status};
use crate::units::interval::{fmt_figure, fmt_figure_alone, fmt_unstable};
use crate::units::size::fmt_size;
use crate::units::Unit;
use serde::Serialize;

/// The probe id (probes::ctx::anatomy::PROBE; the report does not import probes).
pub use crate::probes::ctx::anatomy::PROBE;

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
    /// Share of the waterfall's total ([`Waterfall::share_of`]; None without one, or for a
    /// figure not resolved).
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
    /// Rungs of the sum left out of it: invalid, or without a figure.
    pub left_out: usize,
    pub direct: Option<Figure>,
    /// The direct measurement's status ("ok", "invalid", ...).
    pub direct_status: Option<String>,
    /// sum / direct.
    pub ratio: Option<f64>,
    /// Whether the sum is within ±15% of the direct measurement.
    pub adds_up: Option<bool>,
    /// The 95% interval of sum / direct, from the two intervals' relative sides in
    /// quadrature; a ratio beyond ±15% whose interval reaches back within it tells nothing.
    pub ratio_ci95: Option<[f64; 2]>,
    /// What the shares are of (None: no total to take them of).
    pub share_of: Option<ShareOf>,
}

/// What a rung's share is a share of.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShareOf {
    /// The direct measurement of every cause at once (a valid figure): a switch with the
    /// largest register state, the barrier, the TLB walk of `pages` pages and the partner on
    /// another CPU where the ladder has them.
    Direct { pages: u64 },
    /// The sum of the rungs that enter it, where the direct measurement is no figure.
    Sum,
}

impl ShareOf {
    /// The words after "share of": in the quiz's parentheses and under the table.
    fn words(self) -> &'static str {
        match self {
            ShareOf::Direct { .. } => "all causes at once",
            ShareOf::Sum => "the sum of the rungs",
        }
    }

    /// The line under the table that says what the share column is of.
    fn line(self, direct_status: Option<&str>) -> String {
        match self {
            ShareOf::Direct { pages } => format!(
                "share: of all causes at once, measured directly (walks of {pages} pages \
                 included), not of a bare switch"
            ),
            ShareOf::Sum => format!(
                "share: of the sum of the rungs (the direct measurement is {})",
                direct_status.unwrap_or("missing")
            ),
        }
    }
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
        "other-cpu" => format!("+ another CPU ({})", num("partner_cpu")),
        r if r.starts_with("regs-") => {
            let name = param(m, "regs").and_then(|v| v.as_str()).unwrap_or("?");
            let bytes = num("xsave_bytes").max(num("state_bytes"));
            format!("+ {name} state ({bytes} B)")
        }
        r if r.starts_with("cache-") => format!("+ cache refill {}", fmt_size(num("size"))),
        r if r.starts_with("tlb-") => format!("+ TLB refill {} pages", num("pages")),
        r => rung_label(r),
    }
}

/// The label of a rung known by its id alone (one that could not apply: no measurement
/// holds its facts), in the waterfall's words: "regs-avx-512" is "+ avx-512 state".
fn rung_label(rung: &str) -> String {
    match rung {
        "base" => "base: 2 threads, futex".into(),
        "address-space" => "+ address space".into(),
        "barrier" => "+ speculation barrier".into(),
        "other-cpu" => "+ another CPU".into(),
        "all" => "all causes at once".into(),
        r => {
            if let Some(regs) = r.strip_prefix("regs-") {
                format!("+ {regs} state")
            } else if let Some(size) = r.strip_prefix("cache-") {
                format!("+ cache refill {size}")
            } else if let Some(pages) = r.strip_prefix("tlb-").and_then(|p| p.strip_suffix('p')) {
                format!("+ TLB refill {pages} pages")
            } else {
                r.to_string()
            }
        }
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
    let ms: Vec<&Measurement> = run.measurements.iter().filter(|m| m.is(PROBE)).collect();
    if ms.is_empty() {
        return None;
    }
    let direct_m = ms
        .iter()
        .find(|m| param(m, "rung").and_then(|v| v.as_str()) == Some("all"));
    let direct = direct_m.and_then(|m| figure_of(m));
    let direct_status = direct_m.map(|m| status_word(m).to_string());
    // The cache rung in the sum is the one whose lines the direct measurement's walk touches.
    let tlb_lines = direct_m
        .and_then(|m| param(m, "pages"))
        .and_then(|v| v.as_u64())
        .map(|p| p * 64);
    let mut steps = Vec::new();
    let mut ok_figures = Vec::new();
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
        steps.push(Step {
            cause: param(m, "cause")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .into(),
            rung,
            label: label(m),
            figure,
            status: status_word(m).into(),
            share: None,
            in_sum,
        });
        if m.status == Status::Ok {
            ok_figures.push((steps.len() - 1, figure));
        }
    }
    let cannot: Vec<(String, String)> = run
        .skipped
        .iter()
        .filter_map(|s| {
            s.probe
                .strip_prefix(PROBE.0)
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
    // The sum is checked only against a direct figure that is one.
    let ratio = match (sum, direct, direct_status.as_deref()) {
        (Some(s), Some(d), Some("ok")) if d.median > 0.0 => Some(s.median / d.median),
        _ => None,
    };
    let left_out = steps
        .iter()
        .filter(|s| s.in_sum && (s.status == "invalid" || s.figure.is_none()))
        .count();
    // Shares of the direct figure where it is one, else of the sum; never of an invalid
    // figure's median.
    let (share_of, total) = match (direct, direct_status.as_deref(), sum) {
        (Some(d), Some("ok"), _) if d.median > 0.0 => (
            Some(ShareOf::Direct {
                pages: tlb_lines.map_or(0, |l| l / 64),
            }),
            Some(d.median),
        ),
        (_, _, Some(s)) if s.median > 0.0 => (Some(ShareOf::Sum), Some(s.median)),
        _ => (None, None),
    };
    if let Some(t) = total {
        for (i, f) in ok_figures {
            steps[i].share = f.map(|f| f.median / t);
        }
    }
    let ratio_ci95 = match (ratio, sum, direct) {
        (Some(r), Some(s), Some(d)) if s.median > 0.0 => Some(ratio_interval(r, &s, &d)),
        _ => None,
    };
    Some(Waterfall {
        steps,
        cannot,
        sum,
        left_out,
        direct,
        direct_status,
        ratio,
        adds_up: ratio.map(|r| (r - 1.0).abs() <= SUM_TOLERANCE),
        ratio_ci95,
        share_of,
    })
}

/// The 95% interval of `ratio` = sum / direct: its low side from the sum's low and the
/// direct's high relative sides in quadrature, its high side the other way round (the two
/// are measured apart, their errors independent).
fn ratio_interval(ratio: f64, sum: &Figure, direct: &Figure) -> [f64; 2] {
    let rel = |f: &Figure, side: usize| ((f.ci95[side] - f.median) / f.median).abs();
    let down = rel(sum, 0).hypot(rel(direct, 1));
    let up = rel(sum, 1).hypot(rel(direct, 0));
    [ratio * (1.0 - down).max(0.0), ratio * (1.0 + up)]
}

/// Whether the sum and the direct figure are told apart: the ratio's interval lies wholly
/// beyond ±[`SUM_TOLERANCE`] of 1.
fn overlap_shown(ci: Option<[f64; 2]>) -> bool {
    ci.is_none_or(|[lo, hi]| lo > 1.0 + SUM_TOLERANCE || hi < 1.0 - SUM_TOLERANCE)
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
        // Noise says so with its spread, as the table does, whether or not it reaches zero.
        (Some(f), "unstable") => fmt_unstable(f.median, f.ci95[0], f.ci95[1], &Unit::NS),
        (Some(f), _) if f.reaches_zero() => "below resolution".into(),
        (Some(f), _) => fmt_figure(f.median, f.ci95[0], f.ci95[1], &Unit::NS),
        (None, _) => "no value".into(),
    }
}

/// The waterfall table, the sum line, the rungs that could not apply and the quiz's answer.
pub fn render(a: &Waterfall) -> String {
    render_with(a, "")
}

/// A share in whole percent; a positive one too small to round to 1% is "<1%", not nothing.
fn percent(share: f64) -> String {
    match 100.0 * share {
        p if p > 0.0 && p < 0.5 => "<1%".to_string(),
        p => format!("{p:.0}%"),
    }
}

/// [`render`] with `after_rows` right under the table's rows (the family's own view puts
/// why rungs are invalid there).
pub fn render_with(a: &Waterfall, after_rows: &str) -> String {
    let mut s = String::from("Why a switch costs what it does (per switch, same CPU)\n\n");
    s.push_str(&format!("{:<34}{:>22}{:>8}\n", "rung", "added", "share"));
    for st in &a.steps {
        let share = st.share.map_or(String::new(), percent);
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
            &format!("{} cannot apply: {why}", rung_label(rung)),
            WIDTH,
            "",
            "    ",
        ));
        s.push('\n');
    }
    s.push_str(after_rows);
    s.push('\n');
    if let Some(sum) = a.sum {
        s.push_str(&format!(
            "{:<34}{:>22}\n",
            "sum of the rungs",
            fmt_figure(sum.median, sum.ci95[0], sum.ci95[1], &Unit::NS)
        ));
    }
    if let Some(d) = a.direct {
        s.push_str(&format!(
            "{:<34}{:>22}\n",
            "all causes at once (direct)",
            show(&Some(d), a.direct_status.as_deref().unwrap_or("ok"))
        ));
    }
    if a.left_out > 0 {
        s.push_str(&format!(
            "the sum leaves out {} invalid rung{}\n",
            a.left_out,
            if a.left_out == 1 { "" } else { "s" }
        ));
    }
    if let (Some(st), None) = (a.direct_status.as_deref(), a.ratio) {
        if a.sum.is_some() && st != "ok" {
            s.push_str(&format!(
                "the sum is not checked: the direct measurement is {st}\n"
            ));
        }
    }
    match (a.ratio, a.adds_up) {
        (Some(r), Some(true)) => {
            let within = format!("within ±{:.0}%", SUM_TOLERANCE * 100.0);
            let said = match a.ratio_ci95 {
                Some([lo, hi]) => format!("{lo:.2}–{hi:.2}; {within}"),
                None => within,
            };
            s.push_str(&format!(
                "the rungs add up: sum / direct = {r:.2} ({said})\n"
            ));
        }
        (Some(r), Some(false)) if !overlap_shown(a.ratio_ci95) => {
            let [lo, hi] = a.ratio_ci95.unwrap_or([r, r]);
            let text = format!(
                "sum / direct = {r:.2} ({lo:.2}–{hi:.2}): too uncertain to tell overlapping \
                 causes from rungs that add up within ±{:.0}%, so the rungs are not called a sum",
                SUM_TOLERANCE * 100.0
            );
            s.push_str(&wrap(&text, WIDTH, "", "  "));
            s.push('\n');
        }
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
    if let Some(of) = a
        .share_of
        .filter(|_| a.steps.iter().any(|s| s.share.is_some()))
    {
        s.push_str(&wrap(&of.line(a.direct_status.as_deref()), WIDTH, "", "  "));
        s.push('\n');
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
    let total = match a.share_of {
        Some(ShareOf::Direct { .. }) => a.direct.map(|d| d.median),
        Some(ShareOf::Sum) => a.sum.map(|s| s.median),
        None => None,
    }
    .filter(|t| *t > 0.0);
    let part = |cause: &str| -> String {
        let steps: Vec<&Step> = a
            .steps
            .iter()
            .filter(|s| s.cause == cause && s.in_sum)
            .collect();
        if steps.is_empty() {
            return "is not measured here".into();
        }
        let resolved: Vec<Figure> = steps
            .iter()
            .filter(|s| s.status == "ok")
            .filter_map(|s| s.figure)
            .collect();
        if steps.iter().all(|s| s.status == "invalid") {
            return "failed its checks here (see the rungs)".into();
        }
        // Unstable rungs are noise, not "below resolution": their spread is said.
        let unstable: Vec<Figure> = steps
            .iter()
            .filter(|s| s.status == "unstable")
            .filter_map(|s| s.figure)
            .collect();
        let noise = (!unstable.is_empty()).then(|| {
            let u = sum_of(&unstable);
            fmt_unstable(u.median, u.ci95[0], u.ci95[1], &Unit::NS)
        });
        if resolved.is_empty() {
            return match noise {
                Some(n) => format!("is {n} here"),
                None => "is below resolution here".into(),
            };
        }
        let f = sum_of(&resolved);
        let share = total.zip(a.share_of).map_or(String::new(), |(t, of)| {
            format!(" ({} of {})", percent(f.median / t), of.words())
        });
        let also = noise.map_or(String::new(), |n| format!(", plus a rung {n}"));
        format!(
            "adds {}{share}{also}",
            fmt_figure_alone(f.median, f.ci95[0], f.ci95[1], &Unit::NS)
        )
    };
    [
        ("register state: saving and restoring it", "register state"),
        ("caches: refilling evicted lines", "caches"),
        ("TLB: refilling page translations", "TLB"),
    ]
    .iter()
    .map(|(words, cause)| wrap(&format!("{words} {}", part(cause)), WIDTH, "", "  ") + "\n")
    .collect()
}

/// The rungs of a run, in its order.
fn rungs(run: &Run) -> Vec<&Measurement> {
    run.measurements.iter().filter(|m| m.is(PROBE)).collect()
}

/// A rung's id, for the lines that name rungs.
fn rung_id(m: &Measurement) -> String {
    param(m, "rung")
        .and_then(|v| v.as_str())
        .unwrap_or("?")
        .to_string()
}

/// Why rungs are invalid: each failed check once (name, expected, observed) with the rungs it
/// concerns, as the generic table writes them (report::table::failed_block), within the
/// waterfall's width.
pub fn failures(run: &Run, color: bool) -> String {
    let ms = rungs(run);
    let term = Term {
        width: WIDTH,
        color,
    };
    super::table::failed_block(&ms, &rung_id, &term)
}

/// One side's records in words: "1.00 register saves a switch (live in every one: 0x2e7),
/// TLB flushes a switch: 0.62 flush on task switch, all flushed".
fn side_words(t: &SideTrace) -> String {
    let per = if t.switching {
        "a switch"
    } else {
        "a round trip"
    };
    let mut w = format!("{:.2} register saves {per}", t.fpu_saves_per_switch);
    if t.fpu_saves_per_switch > 0.0 {
        w.push_str(&format!(
            " (live in every one: {:#x})",
            t.fpu_live_in_every_save
        ));
    }
    if t.tlb_flush_per_switch.is_empty() {
        w.push_str(", no TLB flush");
    } else {
        let each: Vec<String> = t
            .tlb_flush_per_switch
            .iter()
            .map(|(why, n)| format!("{n:.3} {why}"))
            .collect();
        w.push_str(&format!(", TLB flushes {per}: {}", each.join("; ")));
    }
    if t.lost > 0 {
        w.push_str(&format!(", {} records lost", t.lost));
    }
    w
}

/// What the kernel recorded at each rung's switches (the rungs' trace passes), in words, for
/// --verbose: one paragraph a rung, or one line why nothing was recorded.
pub fn trace_words(run: &Run) -> String {
    let ms: Vec<(&Measurement, &SwitchTrace)> = rungs(run)
        .into_iter()
        .filter_map(|m| m.switch_trace.as_ref().map(|t| (m, t)))
        .collect();
    if ms.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("\nWhat the kernel recorded at the switches (tlb_flush, x86_fpu):\n");
    let mut whys: Vec<&str> = Vec::new();
    for (m, t) in &ms {
        let text = match t {
            SwitchTrace::Recorded(s) => format!(
                "{} over {} round trips a side: measured {}; baseline {}",
                rung_id(m),
                s.round_trips,
                side_words(&s.measured),
                side_words(&s.baseline)
            ),
            SwitchTrace::NotRecorded(why) => {
                if whys.contains(&why.as_str()) {
                    continue;
                }
                whys.push(why);
                let of: Vec<String> = ms
                    .iter()
                    .filter(|(_, x)| matches!(x, SwitchTrace::NotRecorded(w) if w == why))
                    .map(|(m, _)| rung_id(m))
                    .collect();
                format!("{}: not recorded: {why}", of.join(", "))
            }
        };
        out.push_str(&wrap(&text, WIDTH, "  ", "    "));
        out.push('\n');
    }
    out
}

/// The fill of an unstable rung's band: its interval, not a value.
const BAND: &str = "#e4e4e4";

/// The waterfall chart: each rung a bar floating from the sum of the rungs before it, the
/// sum and the direct measurement as full bars.
pub fn svg(a: &Waterfall, subtitle: &str) -> String {
    // Each bar's label is the table's own words for it: a figure no more precise than its
    // interval, or why there is none ("below resolution", "unstable (±36 ns)").
    let rows: Vec<(String, f64, f64, &str, String)> = {
        let mut at = 0.0;
        let mut v = Vec::new();
        // An invalid rung is named without a bar: it is not in the sum either.
        for st in a.steps.iter().filter(|s| s.in_sum) {
            let f = match st.figure {
                Some(f) if st.status != "invalid" => f.median,
                _ => {
                    v.push((st.label.clone(), at, at, "none", "invalid".into()));
                    continue;
                }
            };
            let colour = if st.status == "ok" {
                "#4878a8"
            } else {
                "#b0b0b0"
            };
            // Noise is not drawn as a value: an unstable rung is a pale band over its
            // interval (the next rung still floats from its median, which the sum holds).
            let (from, to, colour) = match st.figure {
                Some(fg) if st.status == "unstable" => (
                    at + fg.ci95[0] - fg.median + f,
                    at + fg.ci95[1] - fg.median + f,
                    BAND,
                ),
                _ => (at, at + f, colour),
            };
            v.push((
                st.label.clone(),
                from,
                to,
                colour,
                show(&st.figure, &st.status),
            ));
            at += f;
        }
        if let Some(s) = a.sum {
            let text = show(&Some(s), "ok");
            v.push(("sum of the rungs".into(), 0.0, s.median, "#7a9a50", text));
        }
        match (a.direct, a.direct_status.as_deref()) {
            (Some(d), Some("ok")) => v.push((
                "all causes at once".into(),
                0.0,
                d.median,
                "#c06030",
                show(&Some(d), "ok"),
            )),
            (Some(_), status) => v.push((
                "all causes at once".into(),
                0.0,
                0.0,
                "none",
                status.unwrap_or("invalid").to_string(),
            )),
            _ => {}
        }
        v
    };
    // The axis spans the figures drawn as values; a band of noise beyond them is cut at its
    // end (its label says its spread).
    let max = rows
        .iter()
        .filter(|r| r.3 != BAND)
        .map(|r| r.1.max(r.2))
        .fold(1.0f64, f64::max);
    let rows: Vec<(String, f64, f64, &str, String)> = rows
        .into_iter()
        .map(|(name, from, to, colour, text)| (name, from.min(max), to.min(max), colour, text))
        .collect();
    let (w, row_h, left, top) = (760.0, 26.0, 250.0, 56.0);
    let h = top + row_h * rows.len() as f64 + 40.0;
    // Pixels per ns: the most that leaves every bar's label room right of its bar, as the
    // plots measure text ("unstable (±3.3 µs)" at the end of the ladder ran off the figure).
    let per_ns = rows
        .iter()
        .map(|r| {
            let room = w - left - 4.0 - f64::from(plot::label_width([r.4.as_str()]));
            room / r.1.max(r.2).max(1.0)
        })
        .fold((w - left - 20.0) / max, f64::min)
        .max(0.0);
    let x = |v: f64| left + per_ns * v.max(0.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"20\" font-size=\"15\">Why a switch costs what it does \
         (time per switch, same CPU)</text>\n<text x=\"10\" y=\"38\" fill=\"#555\">{}</text>\n",
        xml(subtitle)
    );
    for (i, (name, from, to, colour, text)) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let (a0, a1) = (x(from.min(*to)), x(from.max(*to)));
        s.push_str(&format!(
            "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">{}</text>\n\
             <rect x=\"{a0:.1}\" y=\"{:.0}\" width=\"{:.1}\" height=\"{:.0}\" fill=\"{colour}\"/>\n\
             <text x=\"{:.1}\" y=\"{:.0}\">{}</text>\n",
            left - 8.0,
            y + 17.0,
            xml(name),
            y + 4.0,
            (a1 - a0).max(1.0),
            row_h - 8.0,
            a1 + 4.0,
            y + 17.0,
            xml(text)
        ));
    }
    let axis_y = top + row_h * rows.len() as f64 + 8.0;
    s.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{axis_y}\" x2=\"{:.0}\" y2=\"{axis_y}\" stroke=\"#333\"/>\n\
         <text x=\"{left}\" y=\"{:.0}\">0</text>\n<text x=\"{:.0}\" y=\"{:.0}\" \
         text-anchor=\"end\">{}</text>\n</svg>\n",
        x(max),
        axis_y + 16.0,
        x(max),
        axis_y + 16.0,
        crate::units::fmt_time(max)
    ));
    s
}

/// The family of `ctx anatomy`.
pub struct Anatomy;

impl Family for Anatomy {
    fn about(&self) -> About {
        About {
            fixture: Some("anatomy"),
            quick: &["ctx", "anatomy", "--quick", "--size", "4k", "--pages", "64"],
            has_shown: true,
            probe: Some(PROBE.0),
            evidence: Evidence::Switches,
            draws_own_figures: true,
            ..About::of("ctx")
        }
    }

    fn under_table(&self, run: &Run, verbose: bool) -> String {
        analyze(run).map_or(String::new(), |a| {
            let mut s = render(&a);
            if verbose {
                s.push_str(&trace_words(run));
            }
            s
        })
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
        let term = Term::stdout();
        let mut view = render_with(&a, &failures(run, term.color));
        if ask.verbose {
            view.push_str(&trace_words(run));
        }
        let text = super::table::with_run_notes(run, view, ask.verbose);
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
            left_out: 0,
            direct: fig(direct, 30.0),
            direct_status: Some("ok".into()),
            ratio: Some(ratio),
            adds_up: Some((ratio - 1.0).abs() <= SUM_TOLERANCE),
            ratio_ci95: Some(ratio_interval(ratio, &sum, &fig(direct, 30.0).unwrap())),
            share_of: Some(ShareOf::Direct { pages: 4096 }),
        }
    }

    /// "+ regs-avx-512 cannot apply" under rows that say "+ avx state (256 B)": a rung that
    /// could not apply is named as the table names rungs, never by its id.
    #[test]
    fn a_rung_that_cannot_apply_is_named_in_the_tables_words() {
        let mut a = ladder(1600.0);
        a.cannot = vec![
            (
                "regs-avx-512".into(),
                "the OS did not enable avx-512 state (XCR0)".into(),
            ),
            ("tlb-4096p".into(), "no room".into()),
            ("cache-256k".into(), "no room".into()),
        ];
        let t = render(&a);
        assert!(
            t.contains("+ avx-512 state cannot apply: the OS did not"),
            "{t}"
        );
        assert!(t.contains("+ TLB refill 4096 pages cannot apply"), "{t}");
        assert!(t.contains("+ cache refill 256k cannot apply"), "{t}");
        assert!(
            t.lines()
                .filter(|l| l.contains("cannot apply"))
                .all(|l| !l.contains("regs-") && !l.contains("tlb-") && !l.contains("cache-")),
            "{t}"
        );
    }

    #[test]
    fn the_sum_is_called_a_sum_only_within_fifteen_percent() {
        let t = render(&ladder(1600.0));
        assert!(t.contains("the rungs add up"), "{t}");
        assert!(!t.contains("overlap"), "{t}");
        let t = render(&ladder(2200.0));
        assert!(t.contains("the causes overlap"), "{t}");
        assert!(!t.contains("add up"), "{t}");
        assert!(
            t.contains("+ speculation barrier cannot apply: no per-task prctl"),
            "{t}"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        // A direct figure that is not one checks nothing.
        let mut a = ladder(2200.0);
        a.direct_status = Some("invalid".into());
        a.ratio = None;
        a.adds_up = None;
        let t = render(&a);
        assert!(t.contains("the sum is not checked: the direct measurement is invalid"));
        assert!(!t.contains("overlap") && !t.contains("add up"), "{t}");
    }

    /// The quiet AMD run: sum 55.3 ±9.7 µs against a direct 43 ±13 µs said "the causes
    /// overlap: sum / direct = 1.30", though the ratio's interval reached back within ±15%.
    #[test]
    fn a_ratio_beyond_fifteen_percent_tells_nothing_when_its_interval_reaches_back() {
        let mut a = ladder(2200.0);
        a.direct = fig(2200.0, 800.0);
        let (r, s, d) = (a.ratio.unwrap(), a.sum.unwrap(), a.direct.unwrap());
        a.ratio_ci95 = Some(ratio_interval(r, &s, &d));
        let [lo, hi] = a.ratio_ci95.unwrap();
        assert!(lo < 0.85 && hi > 0.85 && hi < 1.0, "{lo} {hi}");
        let t = render(&a);
        assert!(t.contains("too uncertain to tell overlapping"), "{t}");
        assert!(t.contains("sum / direct = 0.72 (0.46–0.98)"), "{t}");
        assert!(
            !t.contains("the causes overlap") && !t.contains("add up:"),
            "{t}"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        // The same ratio, known tightly, is an overlap; a sum says its ratio's interval.
        let t = render(&ladder(2200.0));
        assert!(t.contains("the causes overlap"), "{t}");
        let t = render(&ladder(1600.0));
        assert!(
            t.contains("the rungs add up: sum / direct = 0.99 (0.96–1.03; within ±15%)"),
            "{t}"
        );
        // The recorded case itself.
        let (sum, direct) = (fig(55.3e3, 9.7e3).unwrap(), fig(43e3, 13e3).unwrap());
        let [lo, hi] = ratio_interval(sum.median / direct.median, &sum, &direct);
        assert!(lo < 1.15 && hi > 1.15, "{lo} {hi}");
    }

    #[test]
    fn an_unstable_rung_says_unstable_in_the_table_the_chart_and_the_quiz() {
        let mut a = ladder(1600.0);
        // A spread wider than the figure, reaching below zero, as a noisy amx rung does.
        a.steps[3] = step("regs-amx", "TLB", fig(440.0, 890.0), "unstable");
        assert_eq!(show(&a.steps[3].figure, "unstable"), "unstable (±890 ns)");
        let t = render(&a);
        assert!(t.contains("unstable (±890 ns)"), "{t}");
        assert!(!t.contains("below resolution"), "{t}");
        assert!(t.contains("is unstable (±890 ns) here"), "{t}");
        let s = svg(&a, "test");
        assert!(s.contains("unstable (±890 ns)"), "{s}");
        // Drawn as its interval, a pale band, not as a bar of its median.
        assert_eq!(s.matches(&format!("fill=\"{BAND}\"")).count(), 1, "{s}");
        a.steps.push(step("tlb-1p", "TLB", fig(50.0, 5.0), "ok"));
        let q = quiz(&a).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(q.contains("plus a rung unstable (±890 ns)"), "{q}");
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
            lines[1].starts_with("caches:") && lines[1].contains("(56% of all causes at once)"),
            "{q}"
        );
        assert!(lines[2].ends_with("is below resolution here"), "{q}");
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{q}");
    }

    #[test]
    fn a_rung_whose_interval_reaches_zero_is_below_resolution() {
        assert_eq!(show(&fig(5.0, 20.0), "ok"), "below resolution");
        assert_eq!(show(&fig(5.0, 20.0), "invalid"), "invalid");
        assert!(show(&fig(500.0, 20.0), "ok").contains("500"));
    }

    fn fixture() -> Run {
        crate::input::parse_run(
            include_str!("../../tests/fixtures/runs/anatomy.json"),
            "fixture",
        )
        .unwrap()
    }

    /// The fixture with every rung's figure taken as it is (its checks passed).
    fn all_ok() -> Run {
        let mut run = fixture();
        for m in run.measurements.iter_mut() {
            m.checks.iter_mut().for_each(|c| c.ok = true);
            m.valid = true;
            m.status = Status::Ok;
        }
        run
    }

    #[test]
    fn a_share_too_small_to_round_to_one_percent_is_not_printed_as_nothing() {
        assert_eq!(percent(0.0024), "<1%");
        assert_eq!(percent(0.006), "1%");
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(0.417), "42%");
        // The table's share column is that cell.
        let mut a = analyze(&all_ok()).unwrap();
        a.steps[1].share = Some(0.0024);
        let st = &a.steps[1];
        let row = format!(
            "{:<34}{:>22}{:>8}",
            st.label,
            show(&st.figure, &st.status),
            "<1%"
        );
        assert!(render(&a).lines().any(|l| l == row), "{row}");
    }

    #[test]
    fn shares_are_of_the_direct_figure_or_of_the_sum_never_of_an_invalid_one() {
        let run = all_ok();
        let a = analyze(&run).unwrap();
        assert_eq!(a.share_of, Some(ShareOf::Direct { pages: 4096 }));
        let d = a.direct.unwrap().median;
        let base = &a.steps[0];
        assert_eq!(base.share, Some(base.figure.unwrap().median / d));
        let t = render(&a);
        assert!(
            t.contains("share: of all causes at once, measured directly"),
            "{t}"
        );
        assert!(t.contains("% of all causes at once)"), "{t}");
        assert!(!t.contains("of the switch"), "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        // The direct measurement failed a check: its median is no total.
        let mut run = all_ok();
        let direct = run.measurements.last_mut().unwrap();
        direct.status = Status::Invalid;
        direct.valid = false;
        let a = analyze(&run).unwrap();
        assert_eq!(a.share_of, Some(ShareOf::Sum));
        let sum = a.sum.unwrap().median;
        assert_eq!(base.figure, a.steps[0].figure);
        assert_eq!(a.steps[0].share, Some(base.figure.unwrap().median / sum));
        let t = render(&a);
        assert!(
            t.contains("share: of the sum of the rungs (the direct measurement is invalid)"),
            "{t}"
        );
        assert!(!t.contains("of all causes at once"), "{t}");
    }

    #[test]
    fn the_own_view_says_each_failed_check_once_within_80_columns() {
        // The recorded run passed every check: one is failed here, on the direct rung.
        let mut run = fixture();
        let name = "context switches per round trip of both sides";
        let direct = run
            .measurements
            .iter_mut()
            .find(|m| param(m, "rung").and_then(|v| v.as_str()) == Some("all"))
            .unwrap();
        let c = direct.checks.iter_mut().find(|c| c.is_named(name)).unwrap();
        c.ok = false;
        c.reading = crate::model::Reading::Text("2.154 (rusage nvcsw+nivcsw)".into());
        direct.valid = false;
        direct.status = Status::Invalid;
        let f = failures(&run, false);
        assert_eq!(f.matches(name).count(), 1, "{f}");
        assert!(
            f.contains(&format!("✗ all: {name}: expected")) && f.contains("observed 2.154"),
            "{f}"
        );
        assert!(f.lines().all(|l| l.chars().count() <= 80), "{f}");
        let shown = Anatomy.shown(&run, &Ask::default()).unwrap().text.unwrap();
        assert!(shown.contains(&f), "{shown}");
        // Nothing failed, nothing said.
        assert_eq!(failures(&all_ok(), false), "");
    }

    #[test]
    fn the_trace_is_evidence_in_words_not_a_parameter() {
        let run = fixture();
        assert!(run
            .measurements
            .iter()
            .all(|m| !m.params.contains_key("trace") && m.switch_trace.is_some()));
        let w = trace_words(&run);
        assert!(
            w.contains("all over 200 round trips a side: measured"),
            "{w}"
        );
        assert!(w.contains("register saves a round trip"), "{w}");
        assert!(w.lines().all(|l| l.chars().count() <= 80), "{w}");
        assert!(!Anatomy.under_table(&run, false).contains("kernel recorded"));
        assert!(Anatomy.under_table(&run, true).contains("kernel recorded"));
        // Not recorded anywhere: one line with the rungs it concerns.
        let mut run = fixture();
        for m in run.measurements.iter_mut() {
            m.switch_trace = Some(SwitchTrace::NotRecorded("tracefs is not readable".into()));
        }
        let w = trace_words(&run);
        assert_eq!(
            w.matches("not recorded: tracefs is not readable").count(),
            1,
            "{w}"
        );
        assert!(w.contains("base, address-space"), "{w}");
    }

    #[test]
    fn the_waterfall_chart_has_a_bar_per_summed_rung_and_the_totals() {
        let s = svg(&ladder(1600.0), "host <x>");
        assert_eq!(s.matches("<rect x=").count(), 4 + 2);
        assert!(s.contains("host &lt;x&gt;"));
        // Labels are the table's words: no median of a rung whose interval reaches zero.
        let mut a = ladder(1600.0);
        a.steps[1].figure = fig(30.0, 50.0);
        a.steps[1].status = "below resolution".into();
        let s = svg(&a, "");
        assert!(s.contains(">below resolution</text>"), "{s}");
        assert!(!s.contains(">30</text>"), "{s}");
    }

    /// The quiet AMD run's ladder ended in an unstable rung whose label, "unstable (±3.3
    /// µs)", ran past the figure's right edge, over an axis that said "55318 ns".
    #[test]
    fn every_waterfall_label_fits_inside_the_figure() {
        let mut a = ladder(1600.0);
        a.steps[3] = step("other-cpu", "another CPU", fig(3000.0, 3300.0), "unstable");
        a.steps[2].figure = fig(44_400.0, 9200.0);
        let summed: Vec<Figure> = a.steps.iter().filter_map(|s| s.figure).collect();
        a.sum = Some(sum_of(&summed));
        let s = svg(&a, "");
        let num = |l: &str, key: &str| -> f64 {
            let from = l.find(key).unwrap() + key.len();
            l[from..].split('"').next().unwrap().parse().unwrap()
        };
        let width = num(&s, "width=\"");
        let mut seen = 0;
        for line in s
            .lines()
            .filter(|l| l.starts_with("<text x=") && !l.contains("end"))
        {
            let x = num(line, "x=\"");
            let text = &line[line.find('>').unwrap() + 1..line.rfind("</text>").unwrap()];
            let right = x + f64::from(plot::label_width([text])) - 14.0;
            assert!(right <= width, "{text:?} ends at {right} > {width}: {s}");
            seen += 1;
        }
        assert!(seen >= 6, "{s}");
        assert!(s.contains(">unstable (±3.3 µs)</text>"), "{s}");
        let total = a.sum.unwrap().median;
        assert!(
            s.contains(&format!(">{}</text>", crate::units::fmt_time(total))),
            "{s}"
        );
        assert!(!s.contains(" ns</text>\n</svg>"), "{s}");
    }
}
