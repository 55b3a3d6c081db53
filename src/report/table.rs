//! The terminal table: one line per measurement (value ± interval, checks, and raw/baseline
//! and evidence when they fit the terminal) and, beneath it, what did not fit, why a figure is
//! invalid or below resolution, and its warnings.

use super::family::Evidence;
use super::term::{paint, wrap, Term, Tone};
use crate::model::{Measurement, Run, Status, Summary};
use crate::units::{
    fmt_figure, fmt_num, fmt_per_op, fmt_time, fmt_unstable, fmt_with_unit, plural,
};

/// "1.93 ±0.03 µs/switch" for a summary in a ns-based unit (others printed as they are).
pub fn fmt_value(s: &Summary, unit: &str) -> String {
    // One sample has no spread to build an interval from: never print it as ±0.
    if s.n < 2 {
        return format!("{} (1 sample, no interval)", fmt_plain(s, unit));
    }
    fmt_figure(s.median, s.ci95[0], s.ci95[1], unit)
}

fn fmt_plain(s: &Summary, unit: &str) -> String {
    fmt_with_unit(s.median, unit)
}

/// The headline: the value, or why there is none.
pub fn headline(m: &Measurement) -> String {
    match (m.status, &m.value) {
        (Status::Invalid, _) => "INVALID".into(),
        (Status::BelowResolution, _) => "below resolution".into(),
        (Status::Unstable, Some(v)) => fmt_unstable(v.median, v.ci95[0], v.ci95[1], &m.unit),
        (Status::Ok, Some(v)) => fmt_value(v, &m.unit),
        (Status::Ok | Status::Unstable, None) => "no value".into(),
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

/// Short evidence line, as the probe's family asks ([`Evidence`]): "2.00 sw/op (1.05 vol,
/// 0.95 invol), 0 migrations" for switches, fault counts per operation for faults, the
/// system-time share otherwise.
fn evidence_cell(m: &Measurement) -> String {
    let it = m.evidence.rusage.iterations.max(1);
    let t = &m.evidence.rusage.total;
    let shown = super::evidence_of(m);
    if shown == Evidence::Switches {
        let (sw, _) = crate::engine::checks::switches_per_op(&m.evidence);
        let mig = plural(
            crate::engine::checks::migrations(&m.evidence)
                .round()
                .max(0.0) as u64,
            "migration",
        );
        // A part below one per op is a count too: "(2.00 vol, 49 invol in 43,750 ops)".
        let part = |n: u64, kind: &str| {
            if n == 0 || n >= it {
                format!("{} {kind}", fmt_num(n as f64 / it as f64))
            } else {
                format!(
                    "{} {kind} in {}",
                    crate::units::fmt_thousands(n),
                    plural_ops(it)
                )
            }
        };
        if sw >= 1.0 {
            format!(
                "{} sw/op ({}, {}), {mig}",
                fmt_num(sw),
                part(t.nvcsw, "vol"),
                part(t.nivcsw, "invol"),
            )
        } else {
            // Rare switches are counts, never a rounded rate ("0.0000164 sw/op").
            format!(
                "{} ({} vol, {} invol), {mig}",
                fmt_per_op(t.nvcsw + t.nivcsw, it, "switch", "op"),
                crate::units::fmt_thousands(t.nvcsw),
                crate::units::fmt_thousands(t.nivcsw),
            )
        }
    } else if shown == Evidence::Faults {
        format!(
            "{}, {}, {} in",
            fmt_per_op(t.minflt, it, "minflt", "op"),
            fmt_per_op(t.majflt, it, "majflt", "op"),
            plural(t.inblock, "block")
        )
    } else {
        let cpu = (t.utime_us + t.stime_us).max(1) as f64;
        format!("{:.0}% sys time", 100.0 * t.stime_us as f64 / cpu)
    }
}

/// "43,750 ops", "1 op".
fn plural_ops(n: u64) -> String {
    if n == 1 {
        "1 op".into()
    } else {
        format!("{} ops", crate::units::fmt_thousands(n))
    }
}

/// Separator between columns.
const GAP: usize = 2;
/// Indent of the lines under a row.
const INDENT: &str = "    ";

fn width_of(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// How many of the optional columns (raw/baseline, evidence: in that order) fit beside the
/// required ones within `width`; the rest go on indented lines under each row.
fn optional_columns_that_fit(required: usize, optional: &[usize], width: usize) -> usize {
    let mut used = required;
    let mut n = 0;
    for w in optional {
        if used + GAP + w > width {
            break;
        }
        used += GAP + w;
        n += 1;
    }
    n
}

/// One row's cells and the tones of its verdict cells.
struct Row {
    probe: String,
    value: (String, Option<Tone>),
    checks: (String, Tone),
    optional: [String; 2],
}

fn row(m: &Measurement) -> Row {
    let tone = match (m.status, &m.value) {
        (Status::Invalid, _) => Some(Tone::Bad),
        (Status::BelowResolution | Status::Unstable, _) => Some(Tone::Caution),
        (Status::Ok, Some(_)) => Some(Tone::Good),
        (Status::Ok, None) => None,
    };
    let all_ok = m.checks.iter().all(|c| c.ok);
    Row {
        probe: format!("{} {}", m.probe, m.params_label()),
        value: (headline(m), tone),
        checks: (checks_cell(m), if all_ok { Tone::Good } else { Tone::Bad }),
        optional: [raw_baseline(m), evidence_cell(m)],
    }
}

/// The lines before the table: the clock and machine, then the machine's warnings, each
/// wrapped to the terminal.
pub fn preamble(run: &Run, term: &Term) -> String {
    let mut out = String::new();
    if let Some(c) = &run.clock {
        let text = format!(
            "clock: {} (resolution {} ns, smallest step {} ns, one read {}); machine: {}",
            c.name,
            c.resolution_ns,
            c.min_step_ns,
            fmt_time(c.read_overhead_ns),
            run.machine.short_name()
        );
        out.push_str(&wrap(&text, term.width, "", INDENT));
        out.push('\n');
    }
    if !run.labels.is_empty() {
        let text = format!(
            "labels: {}",
            crate::compare::fleet::labels_text(&run.labels)
        );
        out.push_str(&wrap(&text, term.width, "", INDENT));
        out.push('\n');
    }
    for w in run.machine.warnings() {
        let mark = paint("!", Tone::Caution, term.color);
        out.push_str(&wrap(&w, term.width, &format!("{mark} machine: "), INDENT));
        out.push('\n');
    }
    for w in &run.warnings {
        let mark = paint("!", Tone::Caution, term.color);
        out.push_str(&wrap(w, term.width, &format!("{mark} run: "), INDENT));
        out.push('\n');
    }
    out
}

/// The full table for a run, laid out for stdout (its width and colour choice).
pub fn render(run: &Run) -> String {
    render_for(run, &Term::stdout())
}

/// The full table for a run within `term.width` columns: probe, value and checks always
/// share the row; raw/baseline and evidence join it only when they fit and otherwise move
/// to an indented line beneath (never widening the row past the terminal). Failed checks,
/// the below-resolution interval and warnings follow, word-wrapped with a hanging indent.
/// Measurements a family shows in its own section instead are left out (report::shown_alone).
pub fn render_for(run: &Run, term: &Term) -> String {
    let shown: Vec<&Measurement> = run
        .measurements
        .iter()
        .filter(|m| super::shown_alone(m))
        .collect();
    let rows: Vec<Row> = shown.iter().copied().map(row).collect();
    let (w_probe, n_opt) = layout(&rows, term);
    let mut lines = grid(&rows, w_probe, n_opt, term).into_iter();
    let mut out = String::new();
    if let Some(h) = lines.next() {
        out.push_str(&h);
        out.push('\n');
    }
    for (r, m) in rows.iter().zip(&shown) {
        let height = r.probe_lines(w_probe);
        for l in lines.by_ref().take(height) {
            out.push_str(&l);
            out.push('\n');
        }
        beneath(&mut out, r, m, n_opt, term);
    }
    out.push_str(&warning_block(&shown, term));
    for s in &run.skipped {
        out.push_str(&wrap(
            &format!("skipped {}: {}", s.probe, s.reason),
            term.width,
            "",
            INDENT,
        ));
        out.push('\n');
    }
    // The families' own sections (the cross-core matrices) under the table.
    out.push_str(&super::under_table(run));
    out
}

/// The table's columns, in order.
const HEADER: [&str; 5] = [
    "probe",
    "value ± 95% CI",
    "checks",
    "raw / baseline",
    "evidence",
];

/// The probe column's width and how many optional columns fit beside the required ones.
fn layout(rows: &[Row], term: &Term) -> (usize, usize) {
    let header = HEADER;
    let col = |i: usize, get: &dyn Fn(&Row) -> usize| {
        rows.iter()
            .map(get)
            .chain([header[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let w_value = col(1, &|r| width_of(&r.value.0));
    let w_checks = col(2, &|r| width_of(&r.checks.0));
    let w_opt = [
        col(3, &|r| width_of(&r.optional[0])),
        col(4, &|r| width_of(&r.optional[1])),
    ];
    // The probe column takes what is left; a long label wraps inside its own cell.
    let w_probe_natural = col(0, &|r| width_of(&r.probe));
    let w_probe = w_probe_natural.min(
        term.width
            .saturating_sub(w_value + w_checks + 2 * GAP)
            .max(16),
    );
    let required = w_probe + w_value + w_checks + 2 * GAP;
    (
        w_probe,
        optional_columns_that_fit(required, &w_opt, term.width),
    )
}

/// The header and rows laid out as one grid (a long probe label wraps inside its cell), one
/// string per terminal line.
fn grid(rows: &[Row], w_probe: usize, n_opt: usize, term: &Term) -> Vec<String> {
    let header = HEADER;
    let mut table = comfy_table::Table::new();
    table
        .load_style(comfy_table::presets::NOTHING)
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    if term.color {
        table.enforce_styling();
        table.style_text_only();
    } else {
        table.force_no_tty();
    }
    table.set_header(header.iter().take(3 + n_opt).copied());
    for r in rows {
        let probe = wrap(&r.probe, w_probe, "", "  ");
        let mut value = comfy_table::Cell::new(&r.value.0);
        if let (true, Some(t)) = (term.color, r.value.1) {
            value = value.fg(t.cell_color());
        }
        let mut checks = comfy_table::Cell::new(&r.checks.0);
        if term.color {
            checks = checks.fg(r.checks.1.cell_color());
        }
        let mut cells = vec![comfy_table::Cell::new(probe), value, checks];
        cells.extend(r.optional.iter().take(n_opt).map(comfy_table::Cell::new));
        table.add_row(cells);
    }
    let last = 3 + n_opt - 1;
    for (i, c) in table.column_iter_mut().enumerate() {
        c.set_padding((0, if i == last { 0 } else { GAP as u16 }));
    }

    table.lines().map(|l| l.trim_end().to_string()).collect()
}

/// What goes under a row: the optional cells that did not fit, the history-drift line,
/// failed checks, why a difference is below resolution, and the warnings.
fn beneath(out: &mut String, r: &Row, m: &Measurement, n_opt: usize, term: &Term) {
    let moved = &r.optional[n_opt..];
    if !moved.is_empty() {
        let joined = moved.join(" · ");
        if INDENT.len() + joined.chars().count() <= term.width {
            out.push_str(&format!("{INDENT}{joined}\n"));
        } else {
            for text in moved {
                out.push_str(&wrap(text, term.width, INDENT, "      "));
                out.push('\n');
            }
        }
    }
    // The evidence line of an interval widened by the history's run-to-run drift.
    for n in m
        .notes
        .iter()
        .filter(|n| n.starts_with(crate::compare::interval::DRIFT_LINE))
    {
        out.push_str(&wrap(n, term.width, INDENT, "      "));
        out.push('\n');
    }
    for c in m.failed_checks() {
        let text = format!(
            "{}: expected {}, observed {}",
            c.name, c.expected, c.observed
        );
        let mark = paint("✗", Tone::Bad, term.color);
        out.push_str(&wrap(
            &text,
            term.width,
            &format!("{INDENT}{mark} "),
            "      ",
        ));
        out.push('\n');
    }
    if m.status == Status::BelowResolution {
        if let Some(d) = &m.difference {
            let text = format!(
                "the difference raw − baseline has a 95% interval of [{}, {}], which \
                 reaches zero: too small to tell from the baseline",
                fmt_time(d.ci95[0]),
                fmt_time(d.ci95[1])
            );
            out.push_str(&wrap(&text, term.width, INDENT, INDENT));
            out.push('\n');
        }
    }
}

/// The rows' warnings once per kind, after the table: warnings that differ only in their
/// numbers are one kind, written once with the numbers' range and the probes it concerns
/// ("! 2–9 of 21–40 samples are outliers …: syscall.read, ctx.pipe …"). The JSON keeps
/// every measurement's own.
fn warning_block(shown: &[&Measurement], term: &Term) -> String {
    let mut kinds: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    for m in shown {
        let probe = format!("{} {}", m.probe, m.params_label())
            .trim()
            .to_string();
        for w in &m.warnings {
            let skeleton = warning_kind(w);
            let i = match kinds.iter().position(|k| k.0 == skeleton) {
                Some(i) => i,
                None => {
                    kinds.push((skeleton, Vec::new(), Vec::new()));
                    kinds.len() - 1
                }
            };
            kinds[i].1.push(w.clone());
            if !kinds[i].2.contains(&probe) {
                kinds[i].2.push(probe.clone());
            }
        }
    }
    let mark = paint("!", Tone::Caution, term.color);
    let mut out = String::new();
    for (_, texts, probes) in kinds {
        let text = crate::engine::merge::fold_round_variants(&texts).join("; ");
        let ranges = |t: &str| t.matches('–').count();
        let lines = if probes.len() == 1 {
            vec![format!("{}: {text}", probes[0])]
        } else if ranges(&text) <= ranges(&texts[0]) + 2 {
            vec![format!(
                "{text} (in {}: {})",
                probes.len(),
                compact(&probes)
            )]
        } else {
            // Too many numbers differ for one sentence to say it: one line per warning.
            pairs_of(shown, &texts)
        };
        for line in lines {
            out.push_str(&wrap(&line, term.width, &format!("{mark} "), "  "));
            out.push('\n');
        }
    }
    out
}

/// Probe labels ("ctx.pipe mode=thread") as their probe names, each once with how many of
/// its rows it stands for: "syscall.null, ctx.pipe ×3". The rows above give the parameters.
fn compact(labels: &[String]) -> String {
    let mut names: Vec<(&str, usize)> = Vec::new();
    for l in labels {
        let name = l.split(' ').next().unwrap_or(l);
        match names.iter_mut().find(|(n, _)| *n == name) {
            Some((_, k)) => *k += 1,
            None => names.push((name, 1)),
        }
    }
    names
        .iter()
        .map(|(n, k)| {
            if *k > 1 {
                format!("{n} ×{k}")
            } else {
                n.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "probe: warning" for each of `texts`, with the probe that carries it.
fn pairs_of(shown: &[&Measurement], texts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for m in shown {
        for w in m.warnings.iter().filter(|w| texts.contains(w)) {
            let probe = format!("{} {}", m.probe, m.params_label());
            let line = format!("{}: {w}", probe.trim());
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// A warning with its numbers taken out: warnings of one kind share it.
fn warning_kind(w: &str) -> String {
    w.chars()
        .map(|c| {
            if c.is_ascii_digit() || c == '.' {
                '#'
            } else {
                c
            }
        })
        .collect::<String>()
        .split('#')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("#")
}

impl Row {
    /// Lines the probe cell takes once wrapped to `width` (the other cells are one line).
    fn probe_lines(&self, width: usize) -> usize {
        wrap(&self.probe, width, "", "  ").lines().count().max(1)
    }
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
        // The history-drift line belongs to one measurement (printed under it), not to
        // the probe's definition.
        let defining: Vec<&str> = m
            .notes
            .iter()
            .filter(|n| !n.starts_with(crate::compare::interval::DRIFT_LINE))
            .map(String::as_str)
            .collect();
        seen.entry(key)
            .or_insert_with(|| (m.probe.clone(), defining.join("; ")));
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
pub const INTERVALS: &str = "intervals: samples are taken in 3 rounds spread across the \
    whole run: the plan runs in passes (round 1 of every measurement, then round 2, then \
    round 3), each round set up, warmed up and given a third of the budget, so a burst of host \
    noise hits one round of a measurement, not all. The figure is the median of all samples \
    (pooled: when the rounds agree it uses every sample; one round that is off moves it only \
    within the others' spread). Its 95% interval is the distribution-free interval of that \
    median, widened to hold a t interval (2 degrees of freedom) on the three rounds' medians, \
    so drift between rounds widens it. A difference (raw − baseline) is taken pairwise per \
    sample and widened the same way. Checks are judged per round; one that failed in any \
    round fails the figure. Items with their own repetitions (fault cases, mmap lab, time \
    slices) take their rounds in one call and say so. When the history (--db) holds at least \
    3 earlier valid runs of a probe on this machine, the interval also covers the drift \
    between runs seen there: each side's half-width becomes √(within² + (t × sd)²), sd \
    the robust spread (1.4826 × MAD) of those runs' medians and t Student's 97.5% quantile \
    for their number less one; the interval from this run alone \
    stays in the JSON (ci95_within_run) and a line says so. compare holds a change against \
    how far the history says two runs of an unchanged build can differ (docs/EVIDENCE.md).\n";

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
    fn one_sample_has_no_interval() {
        let s = crate::engine::stats::summarize(&[1500.0]).unwrap();
        assert_eq!(
            fmt_value(&s, "ns/op"),
            format!("{} (1 sample, no interval)", fmt_plain(&s, "ns/op"))
        );
        let s = crate::engine::stats::summarize(&[1500.0, 1600.0, 1550.0]).unwrap();
        assert!(fmt_value(&s, "ns/op").contains('±'));
    }

    fn fixture() -> Run {
        crate::input::parse_run(
            include_str!("../../tests/fixtures/run-quick.json"),
            "fixture",
        )
        .unwrap()
    }

    fn widest(s: &str) -> usize {
        s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    #[test]
    fn rows_fit_80_columns_with_evidence_beneath() {
        let run = fixture();
        let out = render_for(&run, &Term::plain(80));
        assert!(widest(&out) <= 80, "a line exceeds 80 columns:\n{out}");
        assert!(!out.lines().next().unwrap().contains("evidence"));
        // Every measurement still shows its raw figure and evidence, on a line beneath.
        assert_eq!(
            out.lines().filter(|l| l.starts_with("    raw ")).count(),
            run.measurements.len()
        );
        assert!(!out.contains('\x1b'), "colour in a plain render");
    }

    #[test]
    fn a_history_widened_interval_prints_its_evidence_line_not_in_definitions() {
        let mut run = fixture();
        let history: Vec<Run> = [1.0, 1.1, 0.9]
            .iter()
            .map(|&k| {
                let mut r = fixture();
                for m in &mut r.measurements {
                    if let Some(v) = m.value.as_mut() {
                        v.median *= k;
                    }
                }
                r
            })
            .collect();
        crate::compare::interval::widen_with_history(&mut run, &history);
        let out = render_for(&run, &Term::plain(80));
        assert!(
            out.contains("    interval includes run-to-run drift seen in 3 runs here: ±"),
            "{out}"
        );
        assert!(widest(&out) <= 80, "{out}");
        assert!(!definitions(&run).contains("run-to-run drift seen in"));
    }

    #[test]
    fn wide_terminal_keeps_one_line_per_row() {
        let run = fixture();
        let out = render_for(&run, &Term::plain(300));
        let header = out.lines().next().unwrap();
        assert!(header.contains("raw / baseline") && header.contains("evidence"));
        assert!(!out.lines().any(|l| l.starts_with("    raw ")));
        let row = out.lines().nth(1).unwrap();
        assert!(
            row.contains("raw ") && row.contains('✓') || row.contains('✗'),
            "{row}"
        );
    }

    #[test]
    fn colour_marks_verdicts_only_when_asked() {
        let mut run = fixture();
        run.measurements[0].status = Status::Invalid;
        let term = Term {
            width: 100,
            color: true,
        };
        let out = render_for(&run, &term);
        assert!(
            out.contains("\x1b[31mINVALID")
                || out.contains("\x1b[38;5;9mINVALID")
                || out.contains("INVALID\x1b"),
            "{out}"
        );
        let plain = render_for(&run, &Term::plain(100));
        assert!(!plain.contains('\x1b'));
    }

    #[test]
    fn warnings_are_one_block_after_the_table_each_kind_once() {
        let mut run = fixture();
        let n = run.measurements.len();
        for (i, m) in run.measurements.iter_mut().enumerate() {
            m.warnings = vec![format!(
                "{} of 20 samples are outliers (modified z > 3.5): flagged, kept",
                i + 1
            )];
        }
        run.measurements[0]
            .warnings
            .push("a warning of its own".into());
        let out = render_for(&run, &Term::plain(80));
        assert_eq!(out.matches("samples are outliers").count(), 1, "{out}");
        assert!(
            out.contains(&format!("1–{n} of 20 samples are outliers")),
            "{out}"
        );
        assert!(out.contains(&format!("(in {n}:")), "{out}");
        let own = out
            .lines()
            .position(|l| l.contains("a warning of its own"))
            .unwrap();
        let last_row = out.lines().position(|l| l.starts_with("    raw ")).unwrap();
        assert!(own > last_row, "warnings come after the table: {out}");
        assert!(widest(&out) <= 80, "{out}");
        assert_eq!(
            compact(&["a x=1".into(), "b".into(), "a x=2".into()]),
            "a ×2, b"
        );
    }

    #[test]
    fn rare_switches_read_as_counts() {
        let mut run = fixture();
        let m = &mut run.measurements[0];
        m.probe = "ctx.sweep".into();
        m.evidence.rusage.iterations = 100_000;
        m.evidence.rusage.total.nvcsw = 0;
        m.evidence.rusage.total.nivcsw = 12;
        m.evidence.events.clear();
        assert_eq!(super::super::evidence_of(m), Evidence::Switches);
        let out = evidence_cell(m);
        assert!(
            out.contains("12 switches in 100,000 ops (0 vol, 12 invol)"),
            "{out}"
        );
        assert!(!out.contains("0.000"), "{out}");
        // Two per op, one part rare: the rare part is a count.
        m.evidence.rusage.total.nvcsw = 200_000;
        let out = evidence_cell(m);
        assert!(out.contains("(2.00 vol, 12 invol in 100,000 ops)"), "{out}");
    }

    #[test]
    fn an_unstable_figure_shows_its_spread_never_its_median() {
        let mut run = fixture();
        let m = &mut run.measurements[0];
        let v = m.value.as_mut().unwrap();
        v.median = 42.7;
        v.ci95 = [3.1, 174.0];
        m.settle_status();
        assert!(m.is_unstable());
        let h = headline(m);
        assert!(h.starts_with("unstable (±") && !h.contains("42.7"), "{h}");
    }

    #[test]
    fn fault_evidence_counts_as_counts() {
        let mut run = fixture();
        let m = &mut run.measurements[0];
        m.probe = "fault.anon".into();
        m.evidence.rusage.iterations = 1_000_000;
        m.evidence.rusage.total.minflt = 16386;
        m.evidence.rusage.total.majflt = 10;
        let out = render_for(&run, &Term::plain(200));
        assert!(out.contains("10 majflt in 1,000,000 ops"), "{out}");
        assert!(!out.contains("0.0000"), "{out}");
    }
}
