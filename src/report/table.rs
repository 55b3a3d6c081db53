//! The terminal table: one line per measurement (value ± interval, checks, and raw/baseline
//! and evidence when they fit the terminal) and, beneath it, what did not fit, why a figure is
//! invalid or below resolution, and its warnings.

use super::family::Evidence;
use super::params::{self, Shared};
use super::remarks::{self, legacy};
use super::term::{paint, wrap, Term, Tone};
use crate::model::{Measurement, Remark, Run, Status, Summary};
use crate::units::{
    fmt_figure, fmt_num, fmt_per_op, fmt_time, fmt_unstable, fmt_with_unit, plural, Unit,
};
use std::collections::HashMap;

/// "1.93 ±0.03 µs/switch" for a summary in a ns-based unit (others printed as they are).
pub fn fmt_value(s: &Summary, unit: &Unit) -> String {
    // One sample has no spread to build an interval from: never print it as ±0.
    if s.n < 2 {
        return format!("{} (1 sample, no interval)", fmt_with_unit(s.median, unit));
    }
    fmt_figure(s.median, s.ci95[0], s.ci95[1], unit)
}

/// The headline: the value, or why there is none.
pub fn headline(m: &Measurement) -> String {
    match (m.status, &m.value) {
        (Status::Invalid, _) => "INVALID".into(),
        (Status::BelowResolution, _) => "below resolution".into(),
        (Status::Unstable, Some(v)) => fmt_unstable(v.median, v.ci95[0], v.ci95[1], &m.unit),
        (Status::Ok, Some(v)) => fmt_value(v, &m.unit),
        (Status::Ok | Status::Unstable, None) => super::instead_of_value(m),
    }
}

/// "raw 4.3 µs/round trip, baseline 0.5 µs" (or just raw), or "—" when the raw reading is
/// the figure itself ([`super::raw_is_the_figure`]).
pub fn raw_baseline(m: &Measurement) -> String {
    if super::raw_is_the_figure(m) {
        return "—".into();
    }
    let raw = fmt_with_unit(m.raw.median, &m.raw_unit);
    match &m.baseline {
        Some(b) => format!("raw {raw}, baseline {}", fmt_with_unit(b.median, &Unit::NS)),
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
        let parts = two_counts(it, (t.nvcsw, "vol"), (t.nivcsw, "invol"), "");
        if sw >= 1.0 {
            format!("{} sw/op ({parts}), {mig}", fmt_num(sw))
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
        let faults = two_counts(it, (t.minflt, "minflt"), (t.majflt, "majflt"), "/op");
        format!("{faults}, {} in", plural(t.inblock, "block"))
    } else {
        let cpu = (t.utime_us + t.stime_us).max(1) as f64;
        format!("{:.0}% sys time", 100.0 * t.stime_us as f64 / cpu)
    }
}

/// Two counts over `it` ops. Counts below one per op are counts: when either is, both are
/// counts over the same ops ("2,340 minflt, 36 majflt in 36,864 ops"), so one line never
/// mixes a rate and a count; else both are rates, each name followed by `per_op`.
fn two_counts(it: u64, a: (u64, &str), b: (u64, &str), per_op: &str) -> String {
    let rare = |n: u64| n > 0 && n < it;
    if rare(a.0) || rare(b.0) {
        let n = crate::units::fmt_thousands;
        format!(
            "{} {}, {} {} in {}",
            n(a.0),
            a.1,
            n(b.0),
            b.1,
            plural_ops(it)
        )
    } else {
        let rate = |x: u64| fmt_num(x as f64 / it as f64);
        format!(
            "{} {}{per_op}, {} {}{per_op}",
            rate(a.0),
            a.1,
            rate(b.0),
            b.1
        )
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
    checks: (String, Option<Tone>),
    optional: [String; 2],
}

/// `m`'s row; its probe cell names only the parameters `shared` leaves out (those the
/// rows share are printed once above the table).
fn row(m: &Measurement, shared: &Shared) -> Row {
    let tone = match (m.status, &m.value) {
        (Status::Invalid, _) => Some(Tone::Bad),
        (Status::BelowResolution | Status::Unstable, _) => Some(Tone::Caution),
        (Status::Ok, Some(_)) => Some(Tone::Good),
        (Status::Ok, None) => None,
    };
    let all_ok = m.checks.iter().all(|c| c.ok);
    Row {
        probe: params::label(m, shared, &|_| true),
        value: (headline(m), tone),
        checks: (
            checks_cell(m),
            Some(if all_ok { Tone::Good } else { Tone::Bad }),
        ),
        optional: [raw_baseline(m), evidence_cell(m)],
    }
}

/// The lines before the table: the clock and machine, then the machine's warnings — each in
/// full with `verbose`, otherwise in brief on one block ("! machine: running in a virtual
/// machine (KVM); no hardware counters …"), a warning without a brief form in full — and
/// the run's warnings, each wrapped to the terminal.
pub fn preamble_detail(run: &Run, term: &Term, verbose: bool) -> String {
    let mut out = String::new();
    let clock = run.clock.as_ref().map(|c| {
        format!(
            "clock: {} (resolution {} ns, smallest step {} ns, one read {}); machine: {}",
            c.name,
            c.resolution_ns,
            c.min_step_ns,
            fmt_time(c.read_overhead_ns),
            run.machine.short_name()
        )
    });
    let labels = (!run.labels.is_empty()).then(|| {
        format!(
            "labels: {}",
            crate::compare::fleet::labels_text(&run.labels)
        )
    });
    for text in [clock, labels].into_iter().flatten() {
        out.push_str(&wrap(&text, term.width, "", INDENT));
        out.push('\n');
    }
    out.push_str(&machine_warnings(run, term, verbose));
    for w in &run.warnings {
        let mark = paint("!", Tone::Caution, term.color);
        let w = super::remarks::words(w);
        out.push_str(&wrap(&w, term.width, &format!("{mark} run: "), INDENT));
        out.push('\n');
    }
    out
}

/// The full table for a run, laid out for stdout (its width and colour choice).
pub fn render(run: &Run) -> String {
    render_for(run, &Term::stdout())
}

/// The machine's warnings: each in full with `verbose`, otherwise those with a brief form
/// in brief on one block ("! machine: running in a virtual machine (KVM); no hardware
/// counters … (in full with --verbose)"), a warning without one in full.
pub fn machine_warnings(run: &Run, term: &Term, verbose: bool) -> String {
    let mut out = String::new();
    let first = format!("{} machine: ", paint("!", Tone::Caution, term.color));
    let warnings = run.machine.warnings();
    let brief: Vec<&str> = warnings.iter().filter_map(|w| legacy::gist(w)).collect();
    let folded = (!verbose && brief.len() > 1)
        .then(|| format!("{} (in full with --verbose)", brief.join("; ")));
    let full = warnings
        .iter()
        .filter(|w| verbose || brief.len() < 2 || legacy::gist(w).is_none());
    for text in folded.iter().chain(full) {
        out.push_str(&wrap(text, term.width, &first, INDENT));
        out.push('\n');
    }
    out
}

/// A report that replaces the common table, framed as the table would be: the machine's
/// warnings before it, the skipped probes after it, each in full with `verbose` and in
/// brief otherwise (report::table).
pub fn with_run_notes(run: &Run, report: String, verbose: bool) -> String {
    let term = Term::stdout();
    let mut text = machine_warnings(run, &term, verbose);
    text.push_str(&report);
    text.push_str(&skipped(run, &term, verbose));
    text
}

/// The full table for a run within `term.width` columns, as printed by default: probe, value
/// and checks always share the row; raw/baseline and evidence join it only when they fit.
/// See [`render_detail`].
pub fn render_for(run: &Run, term: &Term) -> String {
    render_detail(run, term, false)
}

/// The table within `term.width` columns: probe, value and checks always share the row (the
/// checks cell, "✓ 5/5", is each figure's evidence in brief); raw/baseline and evidence join
/// it only when they fit. Under a row: why a figure is below resolution. After the table:
/// why figures are invalid (each failed check once per kind with the rows it concerns and
/// the range of its readings), then warnings and history-drift notes as one block, each
/// kind once. `verbose` (--verbose) adds what the default leaves out (quiet by
/// default, complete on request): the cells that did not fit, on lines beneath their row,
/// every round's reading of each failed check under its row, each drift note under its row, each warning of
/// a kind whose numbers differ too much to fold, and why each skipped probe was skipped.
/// The JSON keeps all of it. Measurements a family shows in its own section instead are
/// left out (report::shown_alone).
pub fn render_detail(run: &Run, term: &Term, verbose: bool) -> String {
    let shown: Vec<&Measurement> = run
        .measurements
        .iter()
        .filter(|m| super::shown_alone(m))
        .collect();
    let shared = params::shared(&shown);
    let rows: Vec<Row> = shown.iter().map(|m| row(m, &shared)).collect();
    let (w_probe, n_opt) = layout(&rows, term);
    let mut lines = grid(&rows, w_probe, n_opt, term).into_iter();
    let mut out = String::new();
    if let Some(line) = shared.line() {
        out.push_str(&wrap(&line, term.width, "", INDENT));
        out.push('\n');
    }
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
        beneath(&mut out, &r.optional[n_opt..], m, term, verbose);
    }
    let label = |m: &Measurement| params::label(m, &shared, &|_| true);
    if !verbose {
        out.push_str(&failed_block(&shown, &label, term));
    }
    out.push_str(&warning_block_by(&shown, &label, term, verbose));
    out.push_str(&skipped(run, term, verbose));
    // The families' own sections (the cross-core matrices) under the table.
    out.push_str(&super::under_table(run, verbose));
    out
}

/// The probes the plan skipped: each with its reason with `verbose`, otherwise their names
/// on one line (the reasons are in the JSON and with --verbose).
pub fn skipped(run: &Run, term: &Term, verbose: bool) -> String {
    if run.skipped.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = if verbose {
        run.skipped
            .iter()
            .map(|s| format!("skipped {}: {}", s.probe, s.reason))
            .collect()
    } else {
        let names: Vec<&str> = run.skipped.iter().map(|s| s.probe.as_str()).collect();
        vec![format!("skipped {} (why: --verbose)", names.join(", "))]
    };
    lines
        .iter()
        .map(|l| wrap(l, term.width, "", INDENT) + "\n")
        .collect()
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
    // A verdict cell in its tone's colour, when the terminal has colours.
    let toned = |(text, tone): &(String, Option<Tone>)| match (term.color, tone) {
        (true, Some(t)) => comfy_table::Cell::new(text).fg(t.cell_color()),
        _ => comfy_table::Cell::new(text),
    };
    for r in rows {
        let probe = comfy_table::Cell::new(r.probe_cell(w_probe));
        let mut cells = vec![probe, toned(&r.value), toned(&r.checks)];
        cells.extend(r.optional.iter().take(n_opt).map(comfy_table::Cell::new));
        table.add_row(cells);
    }
    let last = 3 + n_opt - 1;
    for (i, c) in table.column_iter_mut().enumerate() {
        c.set_padding((0, if i == last { 0 } else { GAP as u16 }));
    }

    table.lines().map(|l| l.trim_end().to_string()).collect()
}

/// What goes under a row: why a figure is below resolution; with `verbose` also the
/// optional cells that did not fit (`unshown`), the history-drift line and every round's reading of
/// each failed check (by default the failed checks follow the table: [`failed_block`]).
fn beneath(out: &mut String, unshown: &[String], m: &Measurement, term: &Term, verbose: bool) {
    let line = |out: &mut String, text: &str, first: &str| {
        out.push_str(&wrap(text, term.width, first, "      "));
        out.push('\n');
    };
    // A raw cell of "—" (the raw reading is the figure) says nothing on a line of its own.
    let moved: Vec<&String> = unshown.iter().filter(|t| *t != "—").collect();
    if verbose && !moved.is_empty() {
        let joined = moved
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(" · ");
        if INDENT.len() + joined.chars().count() <= term.width {
            out.push_str(&format!("{INDENT}{joined}\n"));
        } else {
            for text in moved {
                line(out, text, INDENT);
            }
        }
    }
    // The evidence line of an interval widened by the history's run-to-run drift (by
    // default one note after the table for every row it concerns).
    for n in m.notes.iter().filter(|n| verbose && is_drift(n)) {
        line(out, n, INDENT);
    }
    // The interrupts on its CPUs during its windows (evidence, so on request).
    if let Some(text) = super::interrupts::line(m).filter(|_| verbose) {
        line(out, &text, INDENT);
    }
    for c in m.failed_checks().filter(|_| verbose) {
        let mark = paint("✗", Tone::Bad, term.color);
        line(
            out,
            &crate::report::checks::line(c),
            &format!("{INDENT}{mark} "),
        );
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

/// Is this note the history-drift line of a widened interval?
fn is_drift(note: &str) -> bool {
    note.starts_with(crate::compare::interval::DRIFT_LINE)
}

/// The rows' failed checks after the table, once per kind with the rows they concern, as
/// the warnings are ([`kind_block`]): "✗ CPU held by participants: expected ≥ 95% of wall
/// time, observed 41.4–58.4% (…) (in 14: call.function, …)". On a loaded machine every
/// row can fail the same checks, two lines a check under each row. Each row's reading in every round is under it with --verbose.
pub(crate) fn failed_block(
    shown: &[&Measurement],
    label: &dyn Fn(&Measurement) -> String,
    term: &Term,
) -> String {
    use crate::report::checks::{folded, line_of};
    let failed = |m: &Measurement| {
        let line = |c| line_of(c, &folded(c));
        m.failed_checks().map(line).collect()
    };
    let mark = paint("✗", Tone::Bad, term.color);
    // Written as --verbose writes remarks: a failed check is why a figure is invalid, so it
    // is never cut to its name ("✗ kernel share of CPU time (in 1: …)" would hide "use a
    // longer --budget"); readings that do not fold into one line are one line per row.
    remark_block(&Labelled { shown, label }, &failed, &mark, term, true)
}

/// The rows' warnings once per kind, after the table: warnings that differ only in their
/// numbers are one kind, written once with the numbers' range and the probes it concerns
/// ("! 2–9 of 21–40 samples are outliers …: syscall.read, ctx.pipe …"). By default the
/// rows' history-drift notes follow the same way ("· interval includes run-to-run drift …").
/// The JSON keeps every measurement's own.
pub fn warning_block(shown: &[&Measurement], term: &Term, verbose: bool) -> String {
    warning_block_by(shown, &row_label, term, verbose)
}

/// A row's label in the table: "ctx.pipe clock=direct mode=thread".
fn row_label(m: &Measurement) -> String {
    format!("{} {}", m.probe, m.params_label())
        .trim()
        .to_string()
}

/// [`warning_block`] with each row named by `label` (a family's own table names its rows
/// its own way: the sweep by size).
pub fn warning_block_by(
    shown: &[&Measurement],
    label: &dyn Fn(&Measurement) -> String,
    term: &Term,
    verbose: bool,
) -> String {
    let rows = Labelled { shown, label };
    let warnings = |m: &Measurement| m.warnings.clone();
    let mark = paint("!", Tone::Caution, term.color);
    let mut out = kind_block(&rows, &warnings, &mark, term, verbose);
    if !verbose {
        let drift = |m: &Measurement| {
            m.notes
                .iter()
                .filter(|n| is_drift(n))
                .map(Remark::legacy)
                .collect()
        };
        out.push_str(&kind_block(&rows, &drift, "·", term, verbose));
    }
    out
}

/// Remarks other than the rows' warnings (a family's failed checks, each row's `of` it),
/// once per kind as [`warning_block`] writes the warnings: one line per kind with the rows
/// it concerns, each row's in full with `verbose`; each line marked `mark`.
pub fn remark_block(
    rows: &Labelled,
    of: &dyn Fn(&Measurement) -> Vec<String>,
    mark: &str,
    term: &Term,
    verbose: bool,
) -> String {
    let sentences = |m: &Measurement| of(m).into_iter().map(Remark::legacy).collect();
    kind_block(rows, &sentences, mark, term, verbose)
}

/// Rows and how they are named.
pub struct Labelled<'a> {
    pub shown: &'a [&'a Measurement],
    pub label: &'a dyn Fn(&Measurement) -> String,
}

/// The texts `of` each row, once per kind (see [`warning_block`]), each line marked `mark`.
/// A kind whose numbers differ too much to fold into one sentence is one line per row with
/// `verbose`, and otherwise its words before the first colon with the rows it concerns
/// ("samples are bimodal (in 4: …; each with --verbose)") when those words carry no number.
fn kind_block(
    rows: &Labelled,
    of: &dyn Fn(&Measurement) -> Vec<Remark>,
    mark: &str,
    term: &Term,
    verbose: bool,
) -> String {
    let shown = rows.shown;
    let all: Vec<String> = shown.iter().map(|m| (rows.label)(m)).collect();
    // Each kind with its remarks and the rows they concern, in first-seen order.
    type Kind = (String, Vec<Remark>, Vec<String>);
    let mut kinds: Vec<Kind> = Vec::new();
    let mut kind_at: HashMap<String, usize> = HashMap::new();
    for m in shown {
        let probe = (rows.label)(m);
        for w in of(m) {
            let i = *kind_at.entry(remarks::key(&w)).or_insert_with_key(|key| {
                kinds.push((key.clone(), Vec::new(), Vec::new()));
                kinds.len() - 1
            });
            kinds[i].1.push(w.clone());
            if !kinds[i].2.contains(&probe) {
                kinds[i].2.push(probe.clone());
            }
        }
    }
    // Each kind's lines; kinds told only by their gist share one line (their numbers,
    // units included, differ: "samples are bimodal: 8 near 1.41 ns" and "… near 3.20 µs").
    // Kinds of one gist in other units ("… near 121 ns" and "… near 43.0 µs") are one kind
    // to a reader: by default they share the gist's line too, as do remarks with a brief
    // form of their own (the canary's) whatever rows they concern.
    let gists: Vec<Option<String>> = kinds.iter().map(|k| remarks::gist(&k.1[0])).collect();
    let mut kinds_of_gist: HashMap<&str, usize> = HashMap::new();
    for g in gists.iter().flatten() {
        *kinds_of_gist.entry(g).or_default() += 1;
    }
    // A remark of one row that would take more than two lines says its gist by default
    // ("samples are bimodal (in 1: rpc.total; in full with --verbose)"): its numbers and
    // the causes it lists are details, and five lines of them crowded rpc's summary.
    let long = |k: &Kind| {
        if k.2.len() > 1 {
            return false;
        }
        let line = format!("{}: {}", k.2[0], remarks::all_words(&k.1).join("; "));
        wrap(&line, term.width, &format!("{mark} "), "  ")
            .lines()
            .count()
            > 2
    };
    let shared: Vec<bool> = kinds
        .iter()
        .zip(&gists)
        .map(|(k, g)| {
            let brief = remarks::brief(&k.1[0]).is_some();
            !verbose
                && g.as_deref()
                    .is_some_and(|g| brief || kinds_of_gist[g] > 1 || long(k))
        })
        .collect();
    let mut lines: Vec<String> = Vec::new();
    let mut by_gist: Vec<(String, Vec<String>, usize)> = Vec::new();
    let mut gist_at: HashMap<String, usize> = HashMap::new();
    for (((_, said, probes), shared), gist) in kinds.into_iter().zip(shared).zip(gists) {
        let text = remarks::all_words(&remarks::fold(&said)).join("; ");
        let ranges = |t: &str| t.matches('–').count();
        if probes.len() == 1 && !shared {
            lines.push(format!("{}: {text}", probes[0]));
        } else if !shared && ranges(&text) <= ranges(&remarks::words(&said[0])) + 2 {
            lines.push(format!("{text} ({})", concerns(&probes, &all)));
        } else if let (false, Some(g)) = (verbose, gist) {
            match gist_at.get(&g) {
                Some(&i) => {
                    for p in probes {
                        if !by_gist[i].1.contains(&p) {
                            by_gist[i].1.push(p);
                        }
                    }
                }
                None => {
                    gist_at.insert(g.clone(), by_gist.len());
                    by_gist.push((g, probes, lines.len()));
                    lines.push(String::new());
                }
            }
        } else {
            // Too many numbers differ for one sentence to say it: one line per row.
            lines.extend(pairs_of(rows, of, &said));
        }
    }
    for (g, probes, at) in by_gist {
        let each = if probes.len() == 1 { "in full" } else { "each" };
        lines[at] = format!("{g} ({}; {each} with --verbose)", concerns(&probes, &all));
    }
    let mut out = String::new();
    for line in lines {
        out.push_str(&wrap(&line, term.width, &format!("{mark} "), "  "));
        out.push('\n');
    }
    out
}

/// The rows a remark concerns: "in 3: syscall.read, ctx.pipe ×2", or "in every row" when
/// it concerns all rows of the table (`all`, each row's label; a list of every probe says
/// nothing), or "in every row but ipc.pipe class=same-llc cpus=1,0" when that is shorter:
/// a busy machine fails most rows, and the list of 15 of 17 took four lines per remark.
fn concerns(probes: &[String], all: &[String]) -> String {
    let rows = all.len();
    if probes.len() == rows && rows > 3 {
        return "in every row".into();
    }
    let listed = format!("in {}: {}", probes.len(), compact(probes));
    // Rows told apart by their labels only: a label two rows share cannot say which is left.
    let distinct = all.iter().collect::<std::collections::HashSet<_>>().len() == rows;
    if rows > 3 && distinct {
        let missing: Vec<&str> = all
            .iter()
            .filter(|l| !probes.contains(l))
            .map(String::as_str)
            .collect();
        let but = format!("in every row but {}", missing.join(", "));
        if but.chars().count() < listed.chars().count() {
            return but;
        }
    }
    listed
}

/// Probe labels ("ctx.pipe mode=thread") as their probe names, each once with how many of
/// its rows it stands for: "syscall.null, ctx.pipe ×3". The rows above give the parameters.
fn compact(labels: &[String]) -> String {
    super::grouped(labels, |l| l.split(' ').next().unwrap_or(l))
        .iter()
        .map(|(n, rows)| match rows.len() {
            1 => n.to_string(),
            k => format!("{n} ×{k}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "probe: text" for each of `said` (found among the rows' remarks `of` them), with the
/// probe that carries it.
fn pairs_of(
    rows: &Labelled,
    of: &dyn Fn(&Measurement) -> Vec<Remark>,
    said: &[Remark],
) -> Vec<String> {
    let mut out = Vec::new();
    for m in rows.shown {
        for w in of(m).iter().filter(|w| said.contains(w)) {
            let line = format!("{}: {}", (rows.label)(m), remarks::words(w));
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

impl Row {
    /// The probe cell wrapped to `width`.
    fn probe_cell(&self, width: usize) -> String {
        super::term::wrap_label(&self.probe, width, "  ")
    }

    /// Lines the probe cell takes once wrapped to `width` (the other cells are one line).
    fn probe_lines(&self, width: usize) -> usize {
        self.probe_cell(width).lines().count().max(1)
    }
}

/// The notes that define each distinct probe once (printed after the table with --explain).
pub fn definitions(run: &Run) -> String {
    let mut seen = std::collections::BTreeMap::new();
    for m in &run.measurements {
        // Mode too: process and thread round trips carry their own measured observer tax.
        let param = |k: &str| m.params.get(k).map(|v| v.to_string()).unwrap_or_default();
        let key = format!("{} {} {}", m.probe, param("clock"), param("mode"));
        // The history-drift line belongs to one measurement (printed under it), not to
        // the probe's definition.
        let defining: Vec<&str> = m
            .notes
            .iter()
            .filter(|n| !is_drift(n))
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
    use crate::units::Per;

    /// A remark of most rows names the rows it leaves out when that is shorter; of every
    /// row, "in every row"; of few, their names; never "but" where two rows share a label.
    #[test]
    fn a_remark_of_most_rows_names_the_rows_it_leaves_out() {
        let labels = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let all = labels(&[
            "call.function",
            "syscall.null",
            "syscall.read",
            "syscall.write",
            "ctx.pipe mode=process",
            "ctx.pipe mode=thread",
        ]);
        assert_eq!(concerns(&all, &all), "in every row");
        let most = labels(&[
            "call.function",
            "syscall.null",
            "syscall.read",
            "syscall.write",
            "ctx.pipe mode=process",
        ]);
        assert_eq!(
            concerns(&most, &all),
            "in every row but ctx.pipe mode=thread"
        );
        let few = labels(&["syscall.null", "ctx.pipe mode=thread"]);
        assert_eq!(concerns(&few, &all), "in 2: syscall.null, ctx.pipe");
        let mut twice = all.clone();
        twice[5] = "ctx.pipe mode=process".into();
        assert_eq!(
            concerns(&most, &twice),
            "in 5: call.function, syscall.null, syscall.read, syscall.write, ctx.pipe"
        );
    }

    #[test]
    fn one_sample_has_no_interval() {
        let s = crate::engine::stats::summarize(&[1500.0]).unwrap();
        assert_eq!(
            fmt_value(&s, &Unit::ns(Per::Op)),
            format!(
                "{} (1 sample, no interval)",
                fmt_with_unit(s.median, &Unit::ns(Per::Op))
            )
        );
        let s = crate::engine::stats::summarize(&[1500.0, 1600.0, 1550.0]).unwrap();
        assert!(fmt_value(&s, &Unit::ns(Per::Op)).contains('±'));
    }

    /// The terminal and Markdown views follow the HTML's rule: an rpc part's raw reading is
    /// its figure (no baseline), so its raw cell is "—", not the figure again; a probe with a
    /// baseline keeps "raw …, baseline …".
    #[test]
    fn raw_column_is_a_dash_when_the_raw_reading_is_the_figure() {
        let rpc =
            crate::input::parse_run(include_str!("../../tests/fixtures/runs/rpc.json"), "rpc")
                .unwrap();
        let part = rpc
            .measurements
            .iter()
            .find(|m| m.is(crate::probes::rpc::PART));
        assert_eq!(raw_baseline(part.unwrap()), "—");
        assert!(crate::report::markdown::run_to_markdown(&rpc).contains("| — |"));
        // An invalid row keeps its raw reading: the rejected number is shown nowhere else.
        let mut invalid = part.unwrap().clone();
        invalid.valid = false;
        assert!(raw_baseline(&invalid).starts_with("raw "));
        let run = fixture();
        let with_baseline = run.measurements.iter().find(|m| m.baseline.is_some());
        assert!(raw_baseline(with_baseline.unwrap()).contains("baseline"));
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
        let out = render_detail(&run, &Term::plain(80), true);
        assert!(widest(&out) <= 80, "a line exceeds 80 columns:\n{out}");
        assert!(!out.lines().next().unwrap().contains("evidence"));
        // With --verbose every measurement shows its raw figure and evidence beneath.
        assert_eq!(
            out.lines().filter(|l| l.starts_with("    raw ")).count(),
            run.measurements.len()
        );
        assert!(!out.contains('\x1b'), "colour in a plain render");
        // By default a row is its line: the checks cell is its evidence in brief.
        let quiet = render_for(&run, &Term::plain(80));
        assert!(!quiet.contains("    raw "), "{quiet}");
        assert!(widest(&quiet) <= 80, "{quiet}");
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
        let out = render_detail(&run, &Term::plain(80), true);
        assert!(
            out.contains("    interval includes run-to-run drift seen in 3 runs here: ±"),
            "{out}"
        );
        assert!(widest(&out) <= 80, "{out}");
        // By default one note after the table for every row it concerns.
        let quiet = render_for(&run, &Term::plain(80));
        let notes: Vec<&str> = quiet.lines().filter(|l| l.contains("run-to-run")).collect();
        assert_eq!(notes.len(), 1, "{quiet}");
        assert!(
            notes[0].starts_with("· interval includes run-to-run drift seen in 3 runs here: ±"),
            "{quiet}"
        );
        let flat = quiet.split_whitespace().collect::<Vec<_>>().join(" ");
        let widened = run
            .measurements
            .iter()
            .filter(|m| m.notes.iter().any(|n| is_drift(n)))
            .count();
        // Most rows widened: the note names the ones it leaves out, when that is shorter.
        let shown = run
            .measurements
            .iter()
            .filter(|m| super::super::shown_alone(m));
        assert!(widened * 2 > shown.count(), "{quiet}");
        assert!(flat.contains("(in every row but "), "{quiet}");
        assert!(widest(&quiet) <= 80, "{quiet}");
        assert!(!definitions(&run).contains("run-to-run drift seen in"));
    }

    /// The recorded fault run: six cases that all set cpus=1, pages=1024 and
    /// size_bytes=4194304 (every row repeated them, wrapping each probe cell over 3–6
    /// lines at 80 columns).
    #[test]
    fn parameters_every_row_shares_are_printed_once_above_the_table() {
        let run = crate::input::parse_run(
            include_str!("../../tests/fixtures/runs/fault.json"),
            "fault",
        )
        .unwrap();
        let out = render_for(&run, &Term::plain(80));
        assert_eq!(out.matches("size_bytes=4194304").count(), 1, "{out}");
        assert_eq!(out.matches("cpus=1").count(), 1, "{out}");
        let shared = out.lines().find(|l| l.starts_with("all rows: ")).unwrap();
        assert!(
            shared.contains("cpus=1 pages=1024 size_bytes=4194304"),
            "{out}"
        );
        let table: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.starts_with("probe"))
            .skip(1)
            .take_while(|l| !l.starts_with('!'))
            .collect();
        // One line per case, each naming only what tells it apart; the evicted file's
        // eviction method wraps after its '(' (it was cut as "posix_fadvise(DO" / "NTNEED)").
        assert_eq!(table.len(), 8, "{out}");
        assert!(table[0].starts_with("fault.anon touch=write "), "{out}");
        assert!(table[1].starts_with("fault.anon touch=read "), "{out}");
        assert!(table[5].starts_with("fault.file-evicted "), "{out}");
        assert_eq!(table[6].trim(), "evict=fsync+posix_fadvise(", "{out}");
        assert_eq!(table[7].trim(), "DONTNEED) touch=read", "{out}");
        assert!(!out.contains("rounds="), "{out}");
        // What varies only in how long a case was sampled is one range, not a column.
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("rounds 36–166 (each row's in the JSON)"),
            "{out}"
        );
        assert!(widest(&out) <= 80, "{out}");
    }

    #[test]
    fn wide_terminal_keeps_one_line_per_row() {
        let run = fixture();
        let out = render_for(&run, &Term::plain(300));
        let mut lines = out.lines().skip_while(|l| !l.starts_with("probe"));
        let header = lines.next().unwrap();
        assert!(header.contains("raw / baseline") && header.contains("evidence"));
        assert!(!out.lines().any(|l| l.starts_with("    raw ")));
        let row = lines.next().unwrap();
        assert!(
            row.contains("raw ") && row.contains('✓') || row.contains('✗'),
            "{row}"
        );
    }

    /// A unit this version does not make (an older or a later file's) loads as written,
    /// prints as written (a time per something still rescaled) and is written back as it was.
    #[test]
    fn a_unit_this_version_does_not_make_loads_and_prints_as_written() {
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/run-quick.json")).unwrap();
        v["measurements"][3]["unit"] = "widgets/s".into();
        v["measurements"][3]["raw_unit"] = "ns/widget".into();
        let run = crate::input::parse_run(&v.to_string(), "old.json").unwrap();
        let m = &run.measurements[3];
        assert_eq!(m.unit, Unit::Other("widgets/s".into()));
        assert_eq!(m.raw_unit.per(), Some(&Per::Other("widget".into())));
        let head = headline(m);
        assert!(
            head.starts_with("2012 ") && head.ends_with(" widgets/s"),
            "{head}"
        );
        let raw = raw_baseline(m);
        assert!(raw.starts_with("raw 2.01 µs/widget, baseline "), "{raw}");
        let back = serde_json::to_value(m).unwrap();
        assert_eq!(back["unit"], "widgets/s");
        assert_eq!(back["raw_unit"], "ns/widget");
        let csv = crate::report::export::to_csv(&run).unwrap();
        assert!(
            csv.contains(",widgets/s,") && csv.contains(",ns/widget,"),
            "{csv}"
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
    fn one_gist_in_two_units_is_one_line_unless_verbose() {
        let mut run = fixture();
        assert!(run.measurements.len() >= 2);
        run.measurements[0].warnings = vec![Remark::bimodal("ns", (3, 121.0), (7, 401.0), false)];
        run.measurements[1].warnings =
            vec![Remark::bimodal("ns", (8, 43_000.0), (15, 56_200.0), false)];
        let out = render_for(&run, &Term::plain(80));
        assert_eq!(out.matches("samples are bimodal").count(), 1, "{out}");
        assert!(!out.contains("near 121 ns"), "{out}");
        assert!(out.contains("each with --verbose"), "{out}");
        let out = render_detail(&run, &Term::plain(80), true);
        assert!(
            out.contains("near 121 ns") && out.contains("near 43.0 µs"),
            "{out}"
        );
    }

    #[test]
    fn warnings_are_one_block_after_the_table_each_kind_once() {
        let mut run = fixture();
        let n = run.measurements.len();
        for (i, m) in run.measurements.iter_mut().enumerate() {
            m.warnings = vec![Remark::outliers(i + 1, 20)];
        }
        run.measurements[0]
            .warnings
            .push(Remark::legacy("a warning of its own"));
        let out = render_for(&run, &Term::plain(80));
        assert_eq!(out.matches("samples are outliers").count(), 1, "{out}");
        assert!(
            out.contains(&format!("1–{n} of 20 samples are outliers")),
            "{out}"
        );
        // A kind that concerns every row says so instead of listing them all.
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("(in every row)"), "{n} rows: {out}");
        let out = render_detail(&run, &Term::plain(80), true);
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
        // Two per op, one part rare: both parts are counts over the same ops, never a rate
        // beside a count ("2.00 sw/op (1.15 vol, 7,664 invol in 8,960 ops)").
        m.evidence.rusage.total.nvcsw = 200_000;
        let out = evidence_cell(m);
        assert!(
            out.contains("(200,000 vol, 12 invol in 100,000 ops)"),
            "{out}"
        );
        m.evidence.rusage.total.nvcsw = 115_000;
        m.evidence.rusage.total.nivcsw = 85_000;
        let out = evidence_cell(m);
        assert!(
            out.contains("(115,000 vol, 85,000 invol in 100,000 ops)"),
            "{out}"
        );
        // Both parts at least one per op (or none): rates.
        m.evidence.rusage.total.nvcsw = 0;
        m.evidence.rusage.total.nivcsw = 200_000;
        let out = evidence_cell(m);
        assert!(out.contains("2.00 sw/op (0 vol, 2.00 invol)"), "{out}");
    }

    /// Fault counts follow the same rule: a kind rarer than one per op makes both counts
    /// ("1.09 minflts/op, 36 majflts in 36,864 ops" mixed a rate and a count).
    #[test]
    fn fault_counts_never_mix_a_rate_and_a_count() {
        let mut run = fixture();
        let m = &mut run.measurements[0];
        m.probe = "fault.file-evicted".into();
        assert_eq!(super::super::evidence_of(m), Evidence::Faults);
        m.evidence.rusage.iterations = 36_864;
        m.evidence.rusage.total.minflt = 40_000;
        m.evidence.rusage.total.majflt = 36;
        m.evidence.rusage.total.inblock = 8;
        let out = evidence_cell(m);
        assert!(
            out.starts_with("40,000 minflt, 36 majflt in 36,864 ops, 8 blocks in"),
            "{out}"
        );
        assert!(!out.contains("/op"), "{out}");
        m.evidence.rusage.total.minflt = 36_864;
        m.evidence.rusage.total.majflt = 0;
        let out = evidence_cell(m);
        assert!(out.starts_with("1.00 minflt/op, 0 majflt/op"), "{out}");
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
        let out = render_detail(&run, &Term::plain(200), true);
        assert!(out.contains("10 majflt in 1,000,000 ops"), "{out}");
        assert!(!out.contains("0.0000"), "{out}");
    }

    /// rpc's quick run printed a bimodal warning of one row over five lines at 80 columns,
    /// its causes and both modes in full: by default its gist, in full with --verbose.
    #[test]
    fn a_long_remark_of_one_row_says_its_gist_unless_verbose() {
        let mut run = fixture();
        let m = &mut run.measurements[0];
        m.warnings = vec![crate::engine::modes::remark(
            &crate::engine::modes::Modes {
                low: 36_300.0,
                low_n: 3,
                high: 51_500.0,
                high_n: 6,
                in_sequence: true,
            },
            &Unit::ns(Per::Rpc),
        )];
        let shown = [&run.measurements[0]];
        let brief = warning_block(&shown, &Term::plain(80), false);
        assert_eq!(brief.lines().count(), 1, "{brief}");
        assert!(brief.contains("samples are bimodal (in 1: "), "{brief}");
        assert!(brief.contains("in full with --verbose"), "{brief}");
        let full = warning_block(&shown, &Term::plain(80), true);
        assert!(full.contains("3 near 36.3 µs"), "{full}");
        assert!(full.lines().count() > 2, "{full}");
        // A short remark of one row stays whole: nothing is gained by hiding it.
        let wide = warning_block(&shown, &Term::plain(400), false);
        assert!(wide.contains("3 near 36.3 µs"), "{wide}");
    }
}
