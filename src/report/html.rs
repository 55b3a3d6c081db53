//! The HTML report: one self-contained file (inline CSS and SVG; no scripts, fonts, images or
//! links fetched from anywhere) that reads top to bottom: the machine and its warnings first,
//! then one section per probe family (the part of the probe id before the dot) with a table
//! and the figures. Several runs are shown side by side: one column (and one plot series) per
//! run. Invalid measurements appear as invalid with their reasons and are never plotted as
//! numbers; values below resolution say so.

use crate::units::size::{fmt_bytes, ByteStyle};
use crate::units::Unit;
use std::fmt::Write;

use crate::report::family;
use crate::report::figures::Size;
use crate::report::footnotes::{Footnotes, Mark};
use crate::report::params;

use crate::machine::facts::key_facts;
use crate::machine::{render_text, Machine};
use crate::model::{Measurement, Run, Status, Summary};
use crate::report::plot::{
    short_number, Bar, BarChart, GroupedBars, GroupedSeries, Heatmap, Histogram, LinePlot, Marker,
    Point, Series, Values,
};

/// Escapes text for HTML element content and attribute values: the one XML escape, which
/// also shows control characters as escapes.
pub use crate::escape::xml as esc;

/// An SVG from the plot module, made ready to inline: the namespace attribute is implied by
/// HTML5, and dropping it keeps the file free of any URL.
pub(crate) fn inline(svg: String) -> String {
    format!(
        "<figure>{}</figure>\n",
        svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
    )
}

pub(crate) const CSS: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1320px;padding:16px 24px;color:#222;line-height:1.4}
h1{margin:.2em 0}h2{border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:2em}
.meta{color:#555;font-size:14px}
section.kind>h2{font-size:1.7em;border-bottom-width:3px}h3{border-bottom:1px solid #ddd;margin-top:1.6em}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:14px;margin:8px 0;width:100%}
th,td{border:1px solid #ddd;padding:4px 8px;vertical-align:top;text-align:left;overflow-wrap:anywhere}
th{background:#f4f4f4}
td code{white-space:nowrap}td.params{min-width:10em;overflow-wrap:break-word}
th{overflow-wrap:normal}th.num{text-align:right}
td.num,th.num,td.checks{width:1%}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;overflow-wrap:normal}
td.num .why{white-space:normal;min-width:10em}
td.checks{min-width:4.5em}.tally{white-space:nowrap}
td.notes{min-width:11em;width:26%;overflow-wrap:break-word;font-size:12px}
td.params details{margin:0}td.verdict{overflow-wrap:normal;min-width:7em}
ol.footnotes{font-size:13px;color:#333;margin:4px 0 12px;padding-left:2.2em}ol.footnotes ul{margin:2px 0;padding-left:1.1em}
a.fn{text-decoration:none}.note-refs{white-space:nowrap}ul.derived{font-size:14px;margin:4px 0 12px}p.derived{margin:8px 0 0}a.fn sup{font-size:10px;padding-left:1px}
table.single{table-layout:fixed}
tr.invalid td{background:#fdecea}tr.below td{background:#fff8e1}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;font-weight:600}
.b-ok{background:#e3f4ea;color:#17643a}.b-invalid{background:#f8d7d3;color:#9b1c10}.b-below{background:#fdefc3;color:#7a5300}
.ci{color:#666;font-size:12px;display:block}td.num .ci{white-space:nowrap}td.num .ci.why{white-space:normal}.nw{white-space:nowrap}
ul.checks,ul.notes{margin:0;padding-left:1.1em;font-size:13px}
li.fail,.fail{color:#9b1c10}li.pass,.pass{color:#17643a}
ul.warn{background:#fff8e1;border-left:4px solid #e0a800;padding:8px 8px 8px 28px;margin:8px 0}
figure{margin:12px 0}
.small-multiples{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:8px}
svg{max-width:100%;height:auto;display:block}
details{margin:6px 0}td details{margin:0}td.notes details{display:inline-block;vertical-align:top}summary{cursor:pointer;color:#345}
pre{background:#f7f7f7;padding:8px;overflow-x:auto;font-size:12px}
"#;

/// Renders the report for one or more runs. Runs of several kinds (a `run`, a `ctx sweep`,
/// a `c2c`) are grouped by kind, each group with its own runs' columns (never a column of
/// "not measured" for a run of another kind); the machine's facts and warnings come once per
/// distinct machine, before the groups.
pub fn render(runs: &[Run]) -> String {
    let mut h = String::new();
    let name = runs
        .first()
        .map(|r| r.machine.short_name())
        .unwrap_or_default();
    h.push_str(&page_head(&format!("oscost report: {name}")));
    let _ = writeln!(h, "<h1>oscost report</h1>");
    let kinds = by_kind(runs);
    if kinds.len() <= 1 {
        meta_lines(&mut h, runs);
        machine_section(&mut h, runs);
        for family in families(runs) {
            family_section(&mut h, runs, &family, (2, ""));
        }
    } else {
        let _ = writeln!(
            h,
            "<p class=\"meta\">{} runs of {} kinds: {}</p>",
            runs.len(),
            kinds.len(),
            kinds
                .iter()
                .map(|(k, group)| {
                    format!(
                        "<a href=\"#kind-{}\">{}</a> ({})",
                        esc(&k.replace(' ', "-")),
                        esc(k),
                        group.len()
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        machine_section(&mut h, runs);
        for (kind, group) in kinds {
            let _ = writeln!(
                h,
                "<section class=\"kind\" id=\"kind-{}\">\n<h2>{}</h2>",
                esc(&kind.replace(' ', "-")),
                esc(&kind)
            );
            meta_lines(&mut h, &group);
            let id = format!("{}-", kind.replace(' ', "-"));
            for family in families(&group) {
                family_section(&mut h, &group, &family, (3, &id));
            }
            h.push_str("</section>\n");
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// The runs grouped by kind, in order of first appearance.
fn by_kind(runs: &[Run]) -> Vec<(String, Vec<Run>)> {
    super::grouped(runs.iter().cloned(), Run::kind)
}

/// One line per run: which machine, when, which version, the command and its labels.
fn meta_lines(h: &mut String, runs: &[Run]) {
    for (i, r) in runs.iter().enumerate() {
        let _ = writeln!(
            h,
            "<p class=\"meta\">{}{} · started {} · oscost {} · <code>{}</code>{}{}</p>",
            if runs.len() > 1 {
                format!("<b>{}</b> · ", esc(&run_label(runs, i)))
            } else {
                String::new()
            },
            esc(&r.machine.short_name()),
            esc(&r.started_at),
            esc(&r.tool_version),
            esc(&r.command.join(" ")),
            if r.labels.is_empty() {
                String::new()
            } else {
                format!(
                    " · labels <code>{}</code>",
                    esc(&crate::compare::fleet::labels_text(&r.labels))
                )
            },
            if r.complete {
                ""
            } else {
                " · <b>incomplete run (interrupted)</b>"
            }
        );
    }
}

/// The page skeleton up to `<body>`: every oscost HTML page (run report, fleet report) shares
/// it, so they look alike and stay self-contained.
pub fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(title)
    )
}

/// "run 1 (vm)" style labels; with one run, just the short machine name.
fn run_label(runs: &[Run], i: usize) -> String {
    let host = runs[i]
        .machine
        .hostname
        .clone()
        .unwrap_or_else(|| "unknown".into());
    if runs.len() == 1 {
        host
    } else {
        format!(
            "run {} ({host}, {})",
            i + 1,
            runs[i].started_at.get(..16).unwrap_or(&runs[i].started_at)
        )
    }
}

/// The machines' facts and warnings, once per distinct machine (runs on one machine with
/// the same facts share a column); a run's own warnings (other work running...) under its
/// label.
fn machine_section(h: &mut String, runs: &[Run]) {
    h.push_str("<section id=\"machine\">\n<h2>Machine</h2>\n");
    let machines = distinct_machines(runs);
    let name = |group: &[usize]| -> String {
        if runs.len() == 1 {
            run_label(runs, 0)
        } else if machines.len() == 1 {
            format!(
                "{} (all {} runs)",
                runs[0].machine.hostname.as_deref().unwrap_or("unknown"),
                runs.len()
            )
        } else {
            group
                .iter()
                .map(|&i| run_label(runs, i))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    // A machine's warnings that every run on it shares, once; the rest (the load sampled at
    // each run's start: "other work is running … load average 7.60") are that run's own.
    let shared: Vec<Vec<String>> = machines
        .iter()
        .map(|g| {
            let all: Vec<Vec<String>> = g.iter().map(|&i| runs[i].machine.warnings()).collect();
            all[0]
                .iter()
                .filter(|w| all.iter().all(|ws| ws.contains(w)))
                .cloned()
                .collect()
        })
        .collect();
    for (group, w) in machines.iter().zip(&shared) {
        if !w.is_empty() {
            if machines.len() > 1 {
                let _ = writeln!(h, "<p><b>{}</b></p>", esc(&name(group)));
            }
            warning_list(h, w);
        }
    }
    for (i, r) in runs.iter().enumerate() {
        let common = machines
            .iter()
            .position(|g| g.contains(&i))
            .map_or(&[][..], |g| &shared[g][..]);
        let own: Vec<String> = r
            .machine
            .warnings()
            .into_iter()
            .filter(|w| !common.contains(w))
            .chain(r.warnings.iter().map(crate::report::remarks::words))
            .collect();
        if !own.is_empty() {
            if runs.len() > 1 {
                let _ = writeln!(h, "<p><b>{}</b></p>", esc(&run_label(runs, i)));
            }
            warning_list(h, &own);
        }
    }
    h.push_str("<div class=\"scroll\"><table class=\"facts\">\n<tr><th>fact</th>");
    for group in &machines {
        let _ = write!(h, "<th>{}</th>", esc(&name(group)));
    }
    h.push_str("</tr>\n");
    let facts: Vec<Vec<(&str, String)>> = machines
        .iter()
        .map(|g| key_facts(&runs[g[0]].machine))
        .collect();
    if let Some(first) = facts.first() {
        for (row, (fact, _)) in first.iter().enumerate() {
            let _ = write!(h, "<tr><th>{}</th>", esc(fact));
            for f in &facts {
                let _ = write!(h, "<td>{}</td>", esc(&f[row].1));
            }
            h.push_str("</tr>\n");
        }
    }
    h.push_str("</table></div>\n");
    for group in &machines {
        let _ = writeln!(
            h,
            "<details><summary>all machine facts{}</summary><pre>{}</pre></details>",
            // Several runs share the facts but not the load each sampled: say whose it is.
            match (machines.len() > 1, group.len() > 1) {
                (true, false) => format!(": {}", esc(&name(group))),
                (_, true) => format!(", as {} recorded them", esc(&run_label(runs, group[0]))),
                (false, false) => String::new(),
            },
            esc(&render_text(&runs[group[0]].machine))
        );
    }
    h.push_str("</section>\n");
}

fn warning_list(h: &mut String, warnings: &[String]) {
    h.push_str("<ul class=\"warn\">\n");
    for x in warnings {
        let _ = writeln!(h, "<li>{}</li>", esc(x));
    }
    h.push_str("</ul>\n");
}

/// Indices of the runs grouped by machine: runs whose key facts are the same are one
/// machine (their warnings may differ by the load each run started under: those are shown
/// per run, in [`machine_section`]).
fn distinct_machines(runs: &[Run]) -> Vec<Vec<usize>> {
    super::grouped(0..runs.len(), |&i| key_facts(&runs[i].machine))
        .into_iter()
        .map(|(_, g)| g)
        .collect()
}

/// Probe families in order of first appearance ("ctx" for "ctx.pipe").
fn families(runs: &[Run]) -> Vec<String> {
    let all = runs.iter().flat_map(|r| &r.measurements);
    super::grouped(all, |m| family::section_of(&m.probe).to_string())
        .into_iter()
        .map(|(f, _)| f)
        .collect()
}

/// One row of a family table: a probe at one set of parameters, and each run's measurement.
struct Row<'a> {
    probe: String,
    params: String,
    per_run: Vec<Option<&'a Measurement>>,
}

impl<'a> Row<'a> {
    /// The row's measurement in run `i`, or its first when `i` is None.
    fn in_run(&self, i: Option<usize>) -> Option<&'a Measurement> {
        match i {
            Some(i) => self.per_run[i],
            None => self.per_run.iter().flatten().next().copied(),
        }
    }

    /// The parameters that tell the row's measurement (run `i`'s, or its first) from those
    /// of the other `rows` of its probe: "touch=write"; None without a measurement.
    fn distinguishing<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r Row<'a>>,
        i: Option<usize>,
    ) -> Option<String>
    where
        'a: 'r,
    {
        let m = self.in_run(i)?;
        let peers: Vec<&Measurement> = rows
            .into_iter()
            .filter(|r| r.probe == self.probe)
            .filter_map(|r| r.in_run(i))
            .collect();
        Some(params::distinguishing(m, &peers))
    }
}

fn rows<'a>(runs: &'a [Run], family: &str) -> Vec<Row<'a>> {
    let mut rows: Vec<Row> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        for m in r
            .measurements
            .iter()
            .filter(|m| family::section_of(&m.probe) == family)
        {
            let params = m.params_label();
            let is = |x: &Row| x.probe == m.probe && x.params == params;
            let at = super::find_or_push(&mut rows, is, || Row {
                probe: m.probe.clone(),
                params: params.clone(),
                per_run: vec![None; runs.len()],
            });
            rows[at].per_run[i].get_or_insert(m);
        }
    }
    rows
}

/// A family's figures: the wide ones one under another, the small ones side by side.
fn family_figures(h: &mut String, runs: &[Run], family: &str, rows: &[Row]) {
    let mut figures = family_plots(runs, family, rows);
    figures.extend(
        crate::report::section_figures(runs, family)
            .into_iter()
            .map(|svg| (Size::Wide, svg)),
    );
    let (small, wide): (Vec<_>, Vec<_>) = figures.into_iter().partition(|(s, _)| *s == Size::Small);
    for (_, svg) in wide {
        h.push_str(&inline(svg));
    }
    if !small.is_empty() {
        h.push_str("<div class=\"small-multiples\">\n");
        for (_, svg) in small {
            h.push_str(&inline(svg));
        }
        h.push_str("</div>\n");
    }
}

/// One family's figures and table; `heading` is its heading's level (2, or 3 inside a
/// kind's section) and the prefix that keeps its id unique on the page.
fn family_section(h: &mut String, runs: &[Run], family: &str, heading: (u8, &str)) {
    let (level, prefix) = heading;
    let rows = rows(runs, family);
    let _ = writeln!(
        h,
        "<section class=\"family\" id=\"{}family-{1}\">\n<h{level}>{1}</h{level}>",
        esc(prefix),
        esc(family)
    );
    // Figures first: they are what a reader looks at; the table holds the details.
    family_figures(h, runs, family, &rows);
    h.push_str(
        "<div class=\"scroll\"><table class=\"results\">\n<tr><th>probe</th><th>parameters</th>",
    );
    // The raw and baseline columns only where a row of this family has one to show, not
    // two columns of "—" beside an rpc or mem latency table's figures.
    let ones = || rows.iter().filter_map(|r| r.per_run[0]);
    let raw_column = ones().any(|m| !super::raw_is_the_figure(m));
    let baseline_column = ones().any(|m| m.baseline.is_some());
    let single = runs.len() == 1;
    if single {
        h.push_str("<th class=\"num\">value (median, 95% CI)</th>");
        if raw_column {
            h.push_str("<th class=\"num\">raw</th>");
        }
        if baseline_column {
            h.push_str("<th class=\"num\">baseline</th>");
        }
        h.push_str("<th>checks</th><th>warnings and notes</th></tr>\n");
    } else {
        for i in 0..runs.len() {
            let _ = write!(h, "<th class=\"num\">{}</th>", esc(&run_label(runs, i)));
        }
        h.push_str("<th>checks, warnings and notes</th></tr>\n");
    }
    let mut notes = Footnotes::new(&format!("{prefix}family-{family}"));
    for row in &rows {
        let class = row_class(row.per_run.iter().flatten().copied());
        let label = format!("{} {}", row.probe, row.params);
        let _ = write!(
            h,
            "<tr class=\"{class}\"><td><code>{}</code></td><td class=\"params\">{}</td>",
            esc(&row.probe),
            params_cell(row, &rows)
        );
        if single {
            let m = row.per_run[0].expect("one run: every row has its measurement");
            let value = value_cell(m, &runs[0], &mut notes, &label);
            let raw = raw_column.then(|| raw_cell(m));
            let baseline = baseline_column
                .then(|| summary_cell(m.baseline.as_ref(), &m.raw_unit, value_count(m)));
            for cell in [Some(value), raw, baseline].into_iter().flatten() {
                let _ = write!(h, "<td class=\"num\">{cell}</td>");
            }
            let _ = writeln!(
                h,
                "<td class=\"checks\">{}</td><td class=\"notes\">{}</td></tr>",
                checks_cell(m),
                notes.cell(&label, m)
            );
        } else {
            let mut measured: Vec<(usize, String, &Measurement, String)> = Vec::new();
            for (i, m) in row.per_run.iter().enumerate() {
                match m {
                    Some(m) => {
                        let run_row = format!("{label} (run {})", i + 1);
                        let _ = write!(
                            h,
                            "<td class=\"num\">{}</td>",
                            value_cell(m, &runs[i], &mut notes, &run_row)
                        );
                        measured.push((i + 1, run_row, m, checks_cell(m)));
                    }
                    None => h.push_str("<td>not measured</td>"),
                }
            }
            let details = notes.runs_cell(&measured);
            let _ = writeln!(h, "<td class=\"notes\">{details}</td></tr>");
        }
    }
    h.push_str("</table></div>\n");
    h.push_str(&notes.list());
    derived_lines(h, runs, family);
    distributions(h, runs, &rows);
    h.push_str("</section>\n");
}

/// What the family derives from each run's counts (an evicted file's major faults), one
/// sentence each under the table: the same sentences the terminal and Markdown print.
fn derived_lines(h: &mut String, runs: &[Run], family: &str) {
    for (i, run) in runs.iter().enumerate() {
        let lines = crate::report::derived(run, family);
        if lines.is_empty() {
            continue;
        }
        let whose = if runs.len() > 1 {
            format!(" ({})", run_label(runs, i))
        } else {
            String::new()
        };
        let _ = write!(
            h,
            "<p class=\"derived\"><b>Derived from the counts{}</b></p>\n<ul class=\"derived\">",
            esc(&whose)
        );
        for line in lines {
            let _ = write!(h, "<li>{}</li>", esc(&line));
        }
        h.push_str("</ul>\n");
    }
}

fn row_class<'a>(ms: impl Iterator<Item = &'a Measurement>) -> &'static str {
    let mut class = "ok";
    for m in ms {
        match effective_status(m) {
            Status::Invalid => return "invalid",
            Status::BelowResolution | Status::Unstable => class = "below",
            Status::Ok => {}
        }
    }
    class
}

/// A measurement's status, with `valid: false` always counting as invalid.
pub fn effective_status(m: &Measurement) -> Status {
    if !m.valid {
        Status::Invalid
    } else {
        m.status
    }
}

/// The figure, or what stands in its place. Why a figure is invalid is brief here, in full
/// in the table's footnotes (`notes`; `row` names the row there). A figure shorter than
/// [`super::cycles::BELOW`] cycles of `run`'s core clock gives them below it.
fn value_cell(m: &Measurement, run: &Run, notes: &mut Footnotes, row: &str) -> String {
    match (effective_status(m), &m.value) {
        (Status::Invalid, _) => {
            let reason = super::checks::invalid_reason(m);
            let n = notes.number(row, &reason, Mark::Invalid);
            format!(
                "<span class=\"badge b-invalid\">invalid</span><span class=\"ci why\">{}</span>",
                notes.linked(&crate::report::footnotes::brief(&reason), n)
            )
        }
        (Status::BelowResolution, _) => format!(
            "<span class=\"badge b-below\">below resolution</span><span class=\"ci\">{}</span>",
            esc(&m.unit.to_string())
        ),
        // What the terminal shows too: a family's figure and reason, or "no value".
        (_, None) => format!(
            "<span class=\"ci why\">{}</span>",
            esc(&super::instead_of_value(m))
        ),
        // The badge says "unstable"; the text beside it gives the spread (once each).
        (Status::Unstable, Some(v)) => unstable_cell(v, &m.unit),
        (Status::Ok, Some(v)) => {
            let mut cell = estimate_cell(v, &m.unit, Emphasis::Value, None);
            if let Some(c) = super::cycles::Cycles::of(&run.machine.core_clock, m) {
                cell.push_str(&format!(
                    "<span class=\"ci cycles\" title=\"{}\">= {}</span>",
                    esc(&super::cycles::clock_note(c.ghz)),
                    esc(&c.with_unit())
                ));
            }
            // A part of a breakdown: the median is its figure here, the mean (which the
            // breakdown's tables and bars add up) beside it, named, so the two views agree
            // (a bimodal part read 0 ns here and 418 ns in the terminal's parts table).
            if let Some(a) = &m.additive {
                let [lo, hi] = a.mean.ci95;
                cell.push_str(&format!(
                    "<span class=\"ci mean\">mean {}, as the breakdown adds</span>",
                    esc(&crate::units::fmt_figure(a.mean.value, lo, hi, &m.unit))
                ));
            }
            cell
        }
    }
}

/// Whether a cell is the row's figure (bold) or one of the summaries it comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Emphasis {
    Value,
    Summary,
}

/// A median and its 95% interval by the units module's one rule, as the terminal writes
/// them: the median and its unit on the first line ("<b>2.25</b> µs/switch"), the interval
/// and the count small below ("±0.33 · n=9", "+0.02/−<0.005", "±<0.5" for a part that was 0
/// in every sample): never a half-width of 0, a range of two equal numbers or a rounded
/// "22.3k". Two short lines keep the three figure columns narrow enough for the page;
/// neither line breaks inside a number. The count is left out when it is `shown_n`, the
/// count the row's value cell already gives. An interval wider than ±50% is noise:
/// [`unstable_cell`].
fn estimate_cell(s: &Summary, unit: &Unit, emphasis: Emphasis, shown_n: Option<usize>) -> String {
    let [lo, hi] = s.ci95;
    if crate::units::interval::is_unstable(s.median, lo, hi) {
        return unstable_cell(s, unit);
    }
    let (figure, spread, unit) = crate::units::interval::fmt_estimate_in(s.median, lo, hi, unit);
    let figure = match emphasis {
        Emphasis::Value => format!("<b>{}</b>", esc(&figure)),
        Emphasis::Summary => esc(&figure),
    };
    let count = if shown_n == Some(s.n) {
        String::new()
    } else {
        format!(" · <span class=\"nw\">n={}</span>", s.n)
    };
    format!(
        "<span class=\"nw\">{figure} {}</span><span class=\"ci\"><span class=\"nw\">{}</span>{count}</span>",
        esc(&unit),
        esc(&spread)
    )
}

/// Noise as what it is, never a number: the "unstable" badge and the spread beside it.
fn unstable_cell(s: &Summary, unit: &Unit) -> String {
    format!(
        "<span class=\"badge b-below\">unstable</span><span class=\"ci why\">spread \
         <span class=\"nw\">{}</span></span>",
        esc(&crate::units::fmt_spread_with_unit(
            s.median, s.ci95[0], s.ci95[1], unit
        ))
    )
}

/// A raw or baseline summary; `shown_n` is the count the row's value cell gives.
fn summary_cell(s: Option<&Summary>, unit: &Unit, shown_n: Option<usize>) -> String {
    match s {
        None => "—".into(),
        Some(s) => estimate_cell(s, unit, Emphasis::Summary, shown_n),
    }
}

/// The raw summary, or "—" when the raw reading is the figure itself: nothing subtracted, so
/// no second number beside it ([`super::raw_is_the_figure`]; rpc parts showed their figure
/// twice, as if the raw column were a separate reading).
fn raw_cell(m: &Measurement) -> String {
    if super::raw_is_the_figure(m) {
        return "<span title=\"the figure is the raw reading: no baseline subtracted\">—</span>"
            .into();
    }
    summary_cell(Some(&m.raw), &m.raw_unit, value_count(m))
}

/// The count a value cell prints ([`value_cell`]): its summary's, when it shows a figure.
fn value_count(m: &Measurement) -> Option<usize> {
    match (effective_status(m), &m.value) {
        (Status::Ok, Some(v))
            if !crate::units::interval::is_unstable(v.median, v.ci95[0], v.ci95[1]) =>
        {
            Some(v.n)
        }
        _ => None,
    }
}

/// The checks, compact: "✓ 5/5" or "✗ 4/5", with every check's reading behind a
/// `<details>`, the failed ones first, so round-by-round prose never squeezes the figures
/// (why the figure is invalid is beside it, in the value cell).
fn checks_cell(m: &Measurement) -> String {
    if m.checks.is_empty() {
        return String::new();
    }
    let class = if m.checks.iter().all(|c| c.ok) {
        "pass"
    } else {
        "fail"
    };
    let mut s = format!(
        "<details><summary><span class=\"{class} tally\">{}</span></summary><ul class=\"checks\">",
        super::table::checks_cell(m)
    );
    for c in m.checks.iter().filter(|c| !c.ok) {
        let _ = write!(
            s,
            "<li class=\"fail\">✗ {}</li>",
            esc(&crate::report::checks::line(c))
        );
    }
    for c in m.checks.iter().filter(|c| c.ok) {
        let _ = write!(
            s,
            "<li class=\"pass\">✓ {}: {}</li>",
            esc(&crate::report::checks::name(c)),
            esc(&crate::report::checks::observed(c))
        );
    }
    s.push_str("</ul></details>");
    s
}

/// The parameters cell: the whole list when it is short, otherwise the parameters that tell
/// the row from the probe's other rows (or "parameters"), with the whole list behind a
/// `<details>`: a fault case's nine parameters made its row five lines tall.
fn params_cell(row: &Row, rows: &[Row]) -> String {
    const SHORT: usize = 40;
    // Long values ("slice_reported_ns=1000000,1000000") may break after a comma or an
    // underscore, never inside a number.
    let breakable = |t: &str| esc(t).replace(',', ",<wbr>").replace('_', "_<wbr>");
    if row.params.chars().count() <= SHORT {
        return breakable(&row.params);
    }
    let summary = match row.distinguishing(rows, None) {
        None => return breakable(&row.params),
        Some(d) if d.is_empty() => "parameters".to_string(),
        Some(d) => d,
    };
    format!(
        "<details><summary>{}</summary>{}</details>",
        breakable(&summary),
        breakable(&row.params)
    )
}

/// A parameter that looks like a size in bytes, so the axis is labelled in KiB/MiB and cache
/// sizes are marked.
fn is_bytes_param(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["bytes", "size", "working_set", "ws", "buffer"]
        .iter()
        .any(|w| k.contains(w))
}

fn cache_markers(m: &Machine) -> Vec<Marker> {
    m.data_cache_sizes(m.cpus_online.first().copied().unwrap_or(0))
        .into_iter()
        .map(|(l, s)| Marker {
            x: s as f64,
            label: format!("{l} {}", fmt_bytes(s as f64, ByteStyle::Trimmed)),
        })
        .collect()
}

fn point(s: &Summary) -> [f64; 3] {
    [s.median, s.ci95[0], s.ci95[1]]
}

/// The plottable value of a measurement: only valid, resolved figures become numbers.
fn plotted(m: &Measurement) -> Option<[f64; 3]> {
    match effective_status(m) {
        Status::Ok => m.value.as_ref().map(point),
        _ => None,
    }
}

fn missing_note(m: &Measurement) -> String {
    match effective_status(m) {
        Status::Invalid => format!(
            "invalid ({})",
            m.failed_checks()
                .next()
                .map(crate::report::checks::name)
                .unwrap_or_else(|| "see table".into())
        ),
        Status::Unstable => "unstable".into(),
        Status::Ok => super::instead_of_value(m),
        _ => "below resolution".into(),
    }
}

/// Chooses the figures for a family: sweeps (one numeric parameter with ≥ 3 values) become
/// line plots, two-parameter numeric grids become heatmaps, and everything else becomes bars
/// per unit (grouped by run when there are several runs).
fn family_plots(runs: &[Run], family: &str, rows: &[Row]) -> Vec<(Size, String)> {
    let mut out = Vec::new();
    let mut in_figure: Vec<(String, String)> = Vec::new();
    let mut own_drawn: Vec<&str> = Vec::new();
    for (probe, _) in super::grouped(rows, |r| r.probe.as_str()) {
        let all = of_probe(runs, probe);
        if probe_figures(runs, probe, &all, &mut own_drawn, &mut out) {
            in_figure.extend(all.iter().map(|m| (m.probe.clone(), m.params_label())));
        }
    }
    // Bars for the rest, one chart per unit.
    let rest: Vec<&Row> = rows
        .iter()
        .filter(|r| !in_figure.contains(&(r.probe.clone(), r.params.clone())))
        .collect();
    out.extend(bars(runs, family, &rest, &subtitle(runs)));
    out
}

/// `probe`'s measurements in `runs`, in order.
fn of_probe<'a>(runs: &'a [Run], probe: &str) -> Vec<&'a Measurement> {
    let all = runs.iter().flat_map(|r| &r.measurements);
    all.filter(|m| m.probe == probe).collect()
}

/// The figures that hold `probe`'s measurements (`all`, across the runs), added to `out`:
/// its family's own (once per family: `own_drawn` lists those drawn), a heatmap per run of a
/// two-parameter grid, or a line plot of a sweep. Whether they hold them; a probe whose
/// family shows it in its own figures is held by those.
fn probe_figures(
    runs: &[Run],
    probe: &str,
    all: &[&Measurement],
    own_drawn: &mut Vec<&'static str>,
    out: &mut Vec<(Size, String)>,
) -> bool {
    // Measurements their family shows in its own figures instead get no generic one.
    if all.iter().any(|m| !super::shown_alone(m)) {
        return true;
    }
    // Results with an analysis of their own draw its figures, one set per run, once for
    // all the family's probes (the fault family's charts hold every case).
    if let Some(f) = super::family_of(probe).filter(|f| f.about().draws_own_figures) {
        if !own_drawn.contains(&f.section()) {
            own_drawn.push(f.section());
            for (i, run) in runs.iter().enumerate() {
                out.extend(f.own_figures(run, &subtitle_of(runs, i)));
            }
        }
        return true;
    }
    let varying = params::varying(all);
    let numeric = |k: &String| all.iter().all(|m| m.param_f64(k).is_some());
    let sweep_key = varying
        .iter()
        .find(|k| numeric(k) && values_of(all, k).len() >= 3)
        .cloned();
    if varying.len() == 2 && varying.iter().all(numeric) && all.len() >= 4 {
        for (i, run) in runs.iter().enumerate() {
            let ms = of_probe(std::slice::from_ref(run), probe);
            if let Some(svg) = heatmap(probe, &ms, &varying, &subtitle_of(runs, i)) {
                out.push((Size::Wide, svg));
            }
        }
        return true;
    }
    if let Some(key) = sweep_key {
        out.push((Size::Wide, sweep(runs, probe, &key, &subtitle(runs))));
        return true;
    }
    false
}

/// Bar charts for the rows no other figure holds, one chart per unit: one bar per row for a
/// single run, bars grouped by run for several.
fn bars(runs: &[Run], family: &str, rest: &[&Row], subtitle: &str) -> Vec<(Size, String)> {
    let subtitle = subtitle.to_string();
    let mut out = Vec::new();
    let all = rest.iter().flat_map(|r| r.per_run.iter().flatten());
    for (unit, _) in super::grouped(all, |m| m.unit.clone()) {
        let rows: Vec<&Row> = rest
            .iter()
            .copied()
            .filter(|r| r.per_run.iter().flatten().any(|m| m.unit == unit))
            .collect();
        let labels = case_labels(family, &rows);
        let title = format!("{family}: {unit}");
        // Several runs without one value between them: grouped bars would be empty axes,
        // so each run's row says why, as a single run's does.
        let none_plotted = !rows
            .iter()
            .flat_map(|r| r.per_run.iter().flatten())
            .any(|m| plotted(m).is_some());
        let svg = if runs.len() == 1 || none_plotted {
            let bars = rows
                .iter()
                .zip(&labels)
                .flat_map(|(r, label)| {
                    r.per_run.iter().enumerate().filter_map(move |(i, m)| {
                        let m = (*m)?;
                        let label = if runs.len() == 1 {
                            label.clone()
                        } else {
                            format!("{label} · run {}", i + 1)
                        };
                        Some(match plotted(m) {
                            Some([v, lo, hi]) => Bar::new(label, v, lo, hi),
                            None => Bar::missing(label, missing_note(m)),
                        })
                    })
                })
                .collect();
            BarChart {
                title,
                subtitle: subtitle.clone(),
                value_label: unit.to_string(),
                bars,
                ..Default::default()
            }
            .to_svg()
        } else {
            let series = (0..runs.len())
                .map(|i| GroupedSeries {
                    name: run_label(runs, i),
                    values: rows
                        .iter()
                        .map(|r| r.per_run[i].and_then(plotted))
                        .collect(),
                })
                .collect();
            GroupedBars {
                title,
                subtitle: subtitle.clone(),
                x_label: "probe".into(),
                y_label: unit.to_string(),
                groups: labels,
                series,
            }
            .to_svg()
        };
        out.push((Size::Wide, svg));
    }
    out
}

/// Short labels for the cases of one figure: the probe without its family prefix, plus only
/// the parameters that differ between the cases of that probe drawn here (e.g. "anon
/// touch=write", "timeslice slice=1ms"). Full parameter lists do not fit beside a bar; the
/// table carries them.
fn case_labels(family: &str, rows: &[&Row]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let short = r
                .probe
                .strip_prefix(family)
                .and_then(|p| p.strip_prefix('.'))
                .unwrap_or(&r.probe);
            let d = r.distinguishing(rows.iter().copied(), None);
            format!("{short} {}", d.unwrap_or_default())
                .trim_end()
                .to_string()
        })
        .collect()
}

fn subtitle(runs: &[Run]) -> String {
    let mut names: Vec<String> = runs.iter().map(|r| r.machine.short_name()).collect();
    names.dedup();
    names.join(" vs ")
}

fn subtitle_of(runs: &[Run], i: usize) -> String {
    if runs.len() == 1 {
        runs[0].machine.short_name()
    } else {
        format!("{} · {}", run_label(runs, i), runs[i].machine.short_name())
    }
}

/// Whether `k` is determined by the swept `key` among `ms` (every two rows at one value of
/// `key` agree on it): "slice=1ms" beside slice_ns=1000000, the slice the kernel reported.
/// Such a parameter names no series: each would make every point a series of its own.
fn follows(ms: &[&Measurement], key: &str, k: &str) -> bool {
    ms.iter().all(|a| {
        ms.iter()
            .all(|b| a.param_f64(key) != b.param_f64(key) || a.params.get(k) == b.params.get(k))
    })
}

fn sweep(runs: &[Run], probe: &str, key: &str, subtitle: &str) -> String {
    let mut series = Vec::new();
    // Rows without a plottable figure: a line has no place to say why, so the figure
    // counts them by reason under it (the table gives each one's).
    let mut no_value: Vec<(usize, String)> = Vec::new();
    // A duration in ns is drawn in ms, under its name without the suffix ("slice (ms)").
    let (x_scale, x_name) = match key.strip_suffix("_ns") {
        Some(name) => (1e6, format!("{name} (ms)")),
        None => (1.0, key.to_string()),
    };
    for (i, run) in runs.iter().enumerate() {
        let ms = of_probe(std::slice::from_ref(run), probe);
        // Series: the other parameters' values (and the run when there are several).
        let mut by_rest: Vec<(String, Vec<Point>, Vec<f64>)> = Vec::new();
        for m in &ms {
            let rest: Vec<String> = m
                .params
                .iter()
                .filter(|(k, _)| {
                    k.as_str() != key && params::varying(&ms).contains(k) && !follows(&ms, key, k)
                })
                .map(|(k, v)| {
                    format!(
                        "{k}={}",
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    )
                })
                .collect();
            let mut name = rest.join(" ");
            if runs.len() > 1 {
                name = format!("{} {name}", run_label(runs, i)).trim().to_string();
            }
            // A sweep key is numeric in every row (family_plots), so x is always there.
            let x = m.param_f64(key).map(|x| x / x_scale);
            let at = super::find_or_push(
                &mut by_rest,
                |(n, _, _)| *n == name,
                || (name.clone(), Vec::new(), Vec::new()),
            );
            let (Some(x), Some([y, lo, hi])) = (x, plotted(m)) else {
                no_value.push((1, missing_note(m)));
                // Its line breaks where this row has no value.
                by_rest[at].2.extend(x);
                continue;
            };
            by_rest[at].1.push(Point::new(x, y, lo, hi));
        }
        series.extend(by_rest.into_iter().map(|(name, points, gaps)| Series {
            name,
            points,
            gaps,
        }));
    }
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let unit = of_probe(runs, probe)
        .first()
        .map(|m| m.unit.to_string())
        .unwrap_or_default();
    let bytes = is_bytes_param(key);
    LinePlot {
        title: format!("{probe}: {unit} vs {x_name}"),
        subtitle: subtitle.to_string(),
        x_label: if bytes {
            format!("{key} (bytes)")
        } else {
            x_name.clone()
        },
        y_label: unit,
        log_x: lo > 0.0 && hi / lo >= 16.0,
        x_bytes: bytes,
        markers: if bytes {
            runs.first()
                .map(|r| cache_markers(&r.machine))
                .unwrap_or_default()
        } else {
            Vec::new()
        },
        // A sparse sweep (a few slices) shows each point's interval as an error bar.
        error_bars: series.iter().all(|s| s.points.len() <= SPARSE),
        series,
        left_out: no_value,
        ..Default::default()
    }
    .to_svg()
}

/// A sweep with at most this many points per line draws each point's 95% interval as an
/// error bar: the band between a few points hides them.
const SPARSE: usize = 8;

/// The distinct numeric values `ms` take for the parameter `k`, ascending.
fn values_of(ms: &[&Measurement], k: &str) -> Vec<f64> {
    let mut v: Vec<f64> = ms.iter().filter_map(|m| m.param_f64(k)).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

fn heatmap(probe: &str, ms: &[&Measurement], keys: &[String], subtitle: &str) -> Option<String> {
    let (rk, ck) = (&keys[0], &keys[1]);
    let (rows, cols) = (values_of(ms, rk), values_of(ms, ck));
    if rows.is_empty() || cols.is_empty() {
        return None;
    }
    let mut cells = vec![vec![None; cols.len()]; rows.len()];
    for m in ms {
        let (Some(r), Some(c)) = (m.param_f64(rk), m.param_f64(ck)) else {
            continue;
        };
        let ri = rows.iter().position(|x| *x == r)?;
        let ci = cols.iter().position(|x| *x == c)?;
        cells[ri][ci] = plotted(m).map(|p| p[0]);
    }
    Some(
        Heatmap {
            title: format!("{probe}: {}", ms[0].unit),
            subtitle: subtitle.to_string(),
            x_label: ck.clone(),
            y_label: rk.clone(),
            unit: ms[0].unit.to_string(),
            col_labels: cols.iter().map(|v| short_number(*v)).collect(),
            row_labels: rows.iter().map(|v| short_number(*v)).collect(),
            cells,
        }
        .to_svg(),
    )
}

/// What one raw sample of `m` is, for its histogram's axis: a time per iteration for a
/// timed loop, a window's lost share for OS noise, otherwise the sample in its unit.
fn sample_axis(m: &Measurement) -> String {
    if m.is(crate::probes::noise::PROBE) {
        format!("lost share of each 100 ms window ({})", m.raw_unit)
    } else if m.raw_unit.is_time() {
        format!("time per iteration ({})", m.raw_unit)
    } else {
        format!("each sample ({})", m.raw_unit)
    }
}

/// Per-measurement sample histograms, folded away so the page stays short.
fn distributions(h: &mut String, runs: &[Run], rows: &[Row]) {
    let mut body = String::new();
    for row in rows {
        for (i, m) in row.per_run.iter().enumerate() {
            let Some(m) = m else { continue };
            if m.samples.len() < 10 {
                continue;
            }
            // The probe and what tells the case from the others: the table above has all.
            let case = row.distinguishing(rows, Some(i)).unwrap_or_default();
            let what = format!("{} {case}", row.probe);
            body.push_str(&inline(
                Histogram {
                    title: format!("{}: raw samples", what.trim()),
                    subtitle: subtitle_of(runs, i),
                    x_label: sample_axis(m),
                    values: Values::Samples {
                        values: m.samples.clone(),
                        log_count: false,
                    },
                }
                .to_svg(),
            ));
        }
    }
    if !body.is_empty() {
        let _ = write!(
            h,
            "<details><summary>sample distributions</summary>\n{body}</details>\n"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::parse_run;
    use crate::units::Per;

    /// A part of a breakdown gives its mean, named, beside its median.
    #[test]
    fn a_parts_cell_gives_the_mean_the_breakdown_adds() {
        let mut run = parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap();
        assert!(!render(std::slice::from_ref(&run)).contains("as the breakdown adds"));
        let m = &mut run.measurements[0];
        m.additive = Some(crate::model::Additive {
            mean: crate::model::Estimate {
                value: 418.0,
                ci95: [400.0, 436.0],
            },
            modes: None,
            events: Default::default(),
        });
        let page = render(std::slice::from_ref(&run));
        assert!(
            page.contains("mean 418 ±18 ns/call, as the breakdown adds"),
            "the mean, named"
        );
    }

    #[test]
    fn a_samples_axis_says_what_a_sample_is() {
        let run = parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap();
        let mut m = run.measurements[0].clone();
        m.raw_unit = "ns/call".into();
        assert_eq!(sample_axis(&m), "time per iteration (ns/call)");
        m.probe = crate::probes::noise::PROBE.0.into();
        m.raw_unit = "%".into();
        assert_eq!(sample_axis(&m), "lost share of each 100 ms window (%)");
        m.probe = "mmap.lab".into();
        assert_eq!(sample_axis(&m), "each sample (%)");
    }

    #[test]
    fn a_short_figure_gives_its_cycles_in_its_cell_when_the_clock_is_known() {
        let mut run = parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap();
        assert!(!render(std::slice::from_ref(&run)).contains("class=\"ci cycles\""));
        run.machine.core_clock.ghz = Some(4.0);
        let page = render(std::slice::from_ref(&run));
        assert!(
            page.contains(">= 2.92 cycles</span>"),
            "call.function at 4 GHz"
        );
        // As many cells as the terminal's line lists.
        assert_eq!(
            page.matches("class=\"ci cycles\"").count(),
            crate::report::cycles::in_run(&run).len()
        );
    }

    fn summary(n: usize, median: f64, lo: f64, hi: f64) -> Summary {
        Summary {
            n,
            median,
            ci95: [lo, hi],
            mean: median,
            min: lo,
            max: hi,
            p95: hi,
            mad: 0.0,
            outliers: vec![],
            ci95_within_run: None,
        }
    }

    #[test]
    fn figure_cells_write_the_interval_by_the_units_rule() {
        // A part that was 0 in every sample: a bound, never "±0" or "95% CI 0 – 0".
        let zero = estimate_cell(
            &summary(18, 0.0, 0.0, 0.0),
            &Unit::ns(Per::Rpc),
            Emphasis::Value,
            None,
        );
        assert!(
            zero.contains("<b>0</b> ns/RPC") && zero.contains("±&lt;0.5"),
            "{zero}"
        );
        assert!(!zero.contains("0 – 0") && !zero.contains("CI"), "{zero}");
        // The unit scales to the figure, the half-width has two significant digits and the
        // count is below: "22.3k" and "95% CI 22.3k – 22.3k" said nothing.
        let rpc = estimate_cell(
            &summary(2200, 18_700.0, 18_690.0, 18_710.0),
            &Unit::ns(Per::Rpc),
            Emphasis::Value,
            None,
        );
        assert!(
            rpc.contains("<b>18.7</b> µs/RPC") && rpc.contains("±&lt;0.05"),
            "{rpc}"
        );
        assert!(rpc.contains("n=2200") && !rpc.contains('k'), "{rpc}");
        // Asymmetric: +a/−b (README's old "0.731 ±0.073" for 0.719–0.865).
        let skew = estimate_cell(
            &summary(9, 0.731, 0.719, 0.865),
            &Unit::Bare,
            Emphasis::Summary,
            None,
        );
        assert!(
            skew.contains("+0.13/−0.012") && !skew.contains("<b>"),
            "{skew}"
        );
        // A raw or baseline cell leaves out the count its value cell already gives.
        let raw = summary_cell(
            Some(&summary(9, 6560.0, 6000.0, 7120.0)),
            &Unit::ns(Per::RoundTrip),
            Some(9),
        );
        assert!(
            raw.contains("6.56 µs/round trip") && raw.contains("±0.56"),
            "{raw}"
        );
        assert!(!raw.contains("n="), "{raw}");
        let raw = summary_cell(
            Some(&summary(12, 6560.0, 6000.0, 7120.0)),
            &Unit::ns(Per::RoundTrip),
            Some(9),
        );
        assert!(raw.contains("n=12"), "{raw}");
        // Neither line breaks inside a number: the figure with its unit, the interval.
        assert!(
            raw.starts_with("<span class=\"nw\">6.56 µs/round trip</span>"),
            "{raw}"
        );
    }

    #[test]
    fn noisy_raw_and_baseline_cells_say_unstable_not_a_number() {
        // An rpc row's raw 55 µs in [24, 86] µs printed "55 ±31 µs/RPC".
        let noisy = summary_cell(
            Some(&summary(30, 55_000.0, 24_000.0, 86_000.0)),
            &Unit::ns(Per::Rpc),
            None,
        );
        assert!(
            noisy.contains(">unstable<") && noisy.contains("±31 µs/RPC"),
            "{noisy}"
        );
        assert!(!noisy.contains("55"), "{noisy}");
        // A baseline whose interval crosses zero (0.667 in [−0.016, 1.41] ns).
        let base = summary_cell(
            Some(&summary(16, 0.667, -0.016, 1.41)),
            &Unit::ns(Per::Iteration),
            None,
        );
        assert!(
            base.contains(">unstable<") && !base.contains("0.667"),
            "{base}"
        );
        // The row's whole table: no raw or baseline number for a noisy summary.
        let mut run = fixture();
        let m = &mut run.measurements[0];
        m.raw = summary(30, 55_000.0, 24_000.0, 86_000.0);
        m.raw_unit = "ns/RPC".into();
        let html = render(std::slice::from_ref(&run));
        assert!(
            html.contains("spread <span class=\"nw\">±31 µs/RPC</span>"),
            "the noisy raw cell is not unstable"
        );
    }

    /// rpc parts have no baseline: their raw column repeated the figure ("2.65 µs/RPC" twice
    /// in one row) as if it were a second reading. A row with a baseline keeps its raw number.
    #[test]
    fn a_raw_reading_that_is_the_figure_is_not_repeated() {
        let rpc = parse_run(include_str!("../../tests/fixtures/runs/rpc.json"), "rpc").unwrap();
        let part = rpc
            .measurements
            .iter()
            .find(|m| m.is(crate::probes::rpc::PART))
            .unwrap();
        assert!(raw_cell(part).contains(">—<"), "{}", raw_cell(part));
        let run = fixture();
        let with_baseline = run
            .measurements
            .iter()
            .find(|m| m.baseline.is_some())
            .unwrap();
        assert!(!raw_cell(with_baseline).contains('—'));
        let html = render(std::slice::from_ref(&rpc));
        assert!(html.contains("no baseline subtracted"));
        // No rpc row has a baseline: the rpc table has no baseline column; the run's table
        // of probes with baselines keeps both columns.
        let rpc_table = &html[html.find("id=\"family-rpc\"").unwrap()..];
        assert!(rpc_table.contains("<th class=\"num\">raw</th>"));
        assert!(!rpc_table.contains("<th class=\"num\">baseline</th>"));
        let memlat = parse_run(
            include_str!("../../tests/fixtures/runs/memlat.json"),
            "memlat",
        )
        .unwrap();
        let html = render(std::slice::from_ref(&memlat));
        assert!(
            !html.contains("<th class=\"num\">raw</th>"),
            "every raw is the figure"
        );
        let html = render(std::slice::from_ref(&run));
        assert!(html.contains("<th class=\"num\">raw</th><th class=\"num\">baseline</th>"));
    }

    fn fixture() -> Run {
        parse_run(
            include_str!("../../tests/fixtures/run-quick.json"),
            "fixture",
        )
        .unwrap()
    }

    #[test]
    fn fault_cases_are_labelled_by_the_parameters_that_tell_them_apart() {
        let run = parse_run(
            include_str!("../../tests/fixtures/runs/fault.json"),
            "fault",
        )
        .unwrap();
        let runs = [run];
        let rows = rows(&runs, "fault");
        let drawn: Vec<&Row> = rows.iter().collect();
        assert_eq!(
            case_labels("fault", &drawn),
            [
                "anon touch=write",
                "anon touch=read",
                "populate phase=map",
                "populate phase=touch",
                "file-cached",
                "file-evicted"
            ]
        );
    }

    /// Warnings and notes are brief in their rows and in full once below the table: the
    /// outlier warning of five fault rows is one footnote, every row's notes cell is a
    /// line or two, and a definition's full text is in the list, not in a row.
    #[test]
    fn warnings_and_notes_are_footnotes_each_kind_once() {
        let run = parse_run(
            include_str!("../../tests/fixtures/runs/fault.json"),
            "fault",
        )
        .unwrap();
        let html = render(std::slice::from_ref(&run));
        let at = html
            .find("<ol class=\"footnotes\">")
            .expect("a footnote list");
        let (table, list) = html.split_at(at);
        assert_eq!(
            list.matches("samples are outliers (modified z &gt; 3.5)")
                .count(),
            1,
            "{list}"
        );
        let evicted = "major faults that wait for the disk";
        assert!(list.contains(evicted) && !table.contains(evicted));
        let text = |cell: &str| {
            let mut out = String::new();
            let mut tag = false;
            for c in cell.chars() {
                match c {
                    '<' => tag = true,
                    '>' => tag = false,
                    _ if !tag => out.push(c),
                    _ => {}
                }
            }
            out
        };
        let cells: Vec<&str> = table
            .split("<td class=\"notes\">")
            .skip(1)
            .map(|c| &c[..c.find("</td>").unwrap()])
            .collect();
        assert_eq!(cells.len(), 6);
        for cell in cells {
            let t = text(cell);
            assert!(t.chars().count() <= 120, "{t}");
            assert!(t.contains("notes "), "{t}");
        }
    }

    #[test]
    fn checks_are_a_tally_with_the_readings_behind_details() {
        let mut m = fixture().measurements[0].clone();
        let check = |name: &str, ok| crate::model::Check::text(name, "e", "round 1: o", ok);
        m.checks = vec![check("placement", true), check("run-queue wait", true)];
        let cell = checks_cell(&m);
        assert!(
            cell.starts_with("<details><summary><span class=\"pass tally\">✓ 2/2</span></summary>")
        );
        assert!(cell.contains("✓ placement: round 1: o"));
        m.checks[1].ok = false;
        let cell = checks_cell(&m);
        let summary = &cell[..cell.find("</summary>").unwrap()];
        assert!(summary.contains("✗ 1/2"), "{summary}");
        assert!(!summary.contains("placement"), "{summary}");
        // The failed check's reading comes first behind the tally.
        let failed = cell.find("✗ run-queue wait: expected e").unwrap();
        assert!(failed < cell.find("✓ placement").unwrap(), "{cell}");
    }

    /// A report of a c2c and a mem latency run showed "not measured" columns in
    /// every row and the machine's warnings once per run.
    #[test]
    fn runs_of_several_kinds_are_grouped_by_kind_with_the_machine_once() {
        let load = |t: &str| parse_run(t, "fixture").expect("fixture parses");
        let c2c = load(include_str!("../../tests/fixtures/runs/c2c.json"));
        let mut memlat = load(include_str!("../../tests/fixtures/runs/memlat.json"));
        memlat.machine = c2c.machine.clone();
        let again = memlat.clone();
        let html = render(&[c2c.clone(), memlat, again]);
        assert!(
            !html.contains("not measured"),
            "a column for a run of another kind"
        );
        assert_eq!(html.matches("<section class=\"kind\"").count(), 2);
        assert!(html.contains("id=\"kind-mem-latency\""));
        // The machine's warning as often as in the report of one run (its list and its
        // facts' text), not once per run.
        let one = render(std::slice::from_ref(&c2c));
        let warning = esc(&c2c
            .machine
            .warnings()
            .into_iter()
            .next()
            .expect("a VM warning"));
        assert_eq!(
            html.matches(&*warning).count(),
            one.matches(&*warning).count(),
            "machine warning repeated"
        );
        assert_eq!(html.matches("<summary>all machine facts").count(), 1);
        assert!(html.contains("(all 3 runs)"));
        // The two mem latency runs are side by side in their group, numbered within it.
        let mem = &html[html.find("id=\"kind-mem-latency\"").unwrap()..];
        assert!(mem.contains("<b>run 2 ("), "{mem}");
        assert!(!mem.contains("<b>run 3 ("));
        // One kind: no kind sections, the page as before.
        assert!(!one.contains("class=\"kind\""));
    }

    /// Three runs of one machine, each started under a different load: the machine's facts
    /// and standing warnings were shown three times (the load warning differed, so the runs
    /// counted as three machines). Now: one facts column, the VM warning once, each run's
    /// load under its own label.
    #[test]
    fn runs_on_one_machine_under_different_loads_show_the_machine_once() {
        let load = |t: &str| parse_run(t, "fixture").expect("fixture parses");
        let c2c = load(include_str!("../../tests/fixtures/runs/c2c.json"));
        let mut memlat = load(include_str!("../../tests/fixtures/runs/memlat.json"));
        memlat.machine = c2c.machine.clone();
        let busy = |r: &mut Run, avg: f64| {
            r.machine.load.loadavg = Some([avg, avg, avg]);
            for c in &mut r.machine.load.per_cpu {
                c.busy = 1.0;
            }
        };
        let mut a = c2c.clone();
        busy(&mut a, 7.6);
        busy(&mut memlat, 8.6);
        let html = render(&[a.clone(), memlat]);
        let machine = &html[..html.find("</section>").unwrap()];
        assert!(machine.contains("(all 2 runs)"), "{machine}");
        assert_eq!(machine.matches("<th>host</th>").count(), 1);
        // The VM warning as often as in one run's report (its list and its facts' text).
        let vm = esc(&a.machine.warnings()[0]);
        let one = render(std::slice::from_ref(&a));
        assert_eq!(machine.matches(&*vm).count(), one.matches(&*vm).count());
        // Each run's load under its label, and in the full facts of the run they come from.
        assert_eq!(machine.matches("other work is running").count(), 3);
        assert!(machine.contains("all machine facts, as run 1 ("));
        assert!(machine.contains("load average 7.60") && machine.contains("load average 8.60"));
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(esc("<a href='x'>&"), "&lt;a href=&#39;x&#39;&gt;&amp;");
    }

    #[test]
    fn families_follow_probe_prefixes() {
        let f = families(&[fixture()]);
        assert!(f.contains(&"ctx".to_string()) && f.contains(&"syscall".to_string()));
    }

    /// The recorded run and a copy of its first valid measurement, to build series from.
    fn fixture_with_valid_base() -> (Run, Measurement) {
        let run = fixture();
        let base = run
            .measurements
            .iter()
            .find(|m| m.valid && m.value.is_some())
            .unwrap()
            .clone();
        (run, base)
    }

    #[test]
    fn sweep_parameters_become_a_line_plot_with_cache_markers() {
        let (mut run, base) = fixture_with_valid_base();
        run.measurements = (10..=20)
            .map(|e| {
                let mut m = base.clone();
                m.probe = "mem.walk".into();
                m.params.insert("working_set".into(), (1u64 << e).into());
                m
            })
            .collect();
        let html = render(&[run]);
        assert!(html.contains("mem.walk: ") && html.contains("working_set (bytes)"));
        assert!(html.contains("L1d "), "cache markers missing");
        assert!(html.contains("<polygon"), "interval band missing");
    }

    #[test]
    fn a_slice_sweep_is_one_line_over_milliseconds() {
        let (mut run, base) = fixture_with_valid_base();
        run.measurements = [1u64, 4, 8]
            .iter()
            .map(|&ms| {
                let mut m = base.clone();
                m.probe = "ctx.timeslice".into();
                m.params.insert("slice_ns".into(), (ms * 1_000_000).into());
                m.params.insert("slice".into(), format!("{ms}ms").into());
                m.params
                    .insert("slice_reported_ns".into(), vec![ms * 1_000_000].into());
                m
            })
            .collect();
        let html = render(&[run]);
        let at = html.find("slice (ms)").expect("x axis not in ms");
        let svg = &html[html[..at].rfind("<svg").unwrap()..];
        let svg = &svg[..svg.find("</svg>").unwrap()];
        assert!(
            !svg.contains("slice_ns"),
            "the raw key on the axis or in the title"
        );
        // The slice's own renderings are not series: one line, no legend of parameters.
        assert!(
            !svg.contains("slice=") && !svg.contains("slice_reported_ns="),
            "{svg}"
        );
        // Three points, each with its interval as an error bar (a line and two caps), beside
        // the line itself.
        assert!(svg.matches("<polyline").count() > 3 * 3, "{svg}");
    }

    #[test]
    fn a_sweep_is_drawn_from_its_analysis_one_line_per_ring_size() {
        let (mut run, base) = fixture_with_valid_base();
        run.measurements = [2u64, 4, 8]
            .iter()
            .flat_map(|&n| {
                let base = base.clone();
                (10..=22).map(move |e| {
                    let mut m = base.clone();
                    m.probe = "ctx.sweep".into();
                    m.unit = "ns/switch".into();
                    for (k, v) in [("mode", "process"), ("access", "read")] {
                        m.params.insert(k.into(), v.into());
                    }
                    m.params.insert("procs".into(), n.into());
                    m.params.insert("stride".into(), 64.into());
                    m.params.insert("size".into(), (1u64 << e).into());
                    // A step at 64 KiB: the analysis must find the knee.
                    let y = if e < 16 { 1000.0 } else { 3000.0 };
                    let s = m.value.as_mut().unwrap();
                    s.median = y;
                    s.ci95 = [y * 0.98, y * 1.02];
                    m
                })
            })
            .collect();
        let html = render(&[run]);
        assert!(html.contains("Context switch cost vs working set"));
        for n in [2, 4, 8] {
            assert!(
                html.contains(&format!("N={n} process")),
                "no line for N={n}"
            );
        }
        assert!(html.contains("knee"), "knee not marked");
        // No generic per-parameter figure for the sweep.
        assert!(!html.contains("ctx.sweep: ns/switch"));
    }

    #[test]
    fn two_numeric_parameters_become_a_heatmap() {
        let (mut run, base) = fixture_with_valid_base();
        run.measurements = (0..3)
            .flat_map(|a| (0..3).map(move |b| (a, b)))
            .map(|(a, b)| {
                let mut m = base.clone();
                m.probe = "ipc.c2c".into();
                m.params.insert("from".into(), a.into());
                m.params.insert("to".into(), b.into());
                m
            })
            .collect();
        let html = render(&[run]);
        assert!(html.contains("ipc.c2c: "));
        assert!(html.contains(">\nfrom\n</text>"), "row axis label missing");
        assert!(html.matches("<rect").count() >= 9 + 40);
    }
}
