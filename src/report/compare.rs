//! The three faces of a comparison: a terminal table, Markdown (for a PR comment or a lab
//! report) and JSON (for scripts). All list machine differences first and unpaired last.

use serde::Serialize;

use crate::compare::{Basis, Comparison, DecidedBy, MachineDifference, Pair, PairNote, Verdict};
use crate::model::{Num, Status};
use crate::report::remarks::span;
use crate::units::name::Word;
use crate::units::{fmt_num, Unit};

/// How a verdict was decided, in words.
pub fn decided_by_words(d: DecidedBy) -> String {
    match d {
        DecidedBy::Bootstrap { paired: true } => "bootstrap of paired differences".into(),
        DecidedBy::Bootstrap { paired: false } => "bootstrap".into(),
        DecidedBy::RoundDrift { share } => {
            format!("drift between rounds (±{:.1}%)", share * 100.0)
        }
        DecidedBy::HistoryDrift { pct } => format!("history drift ({pct:.1}% seen between runs)"),
        DecidedBy::MinimumEffect { pct } => format!("minimum effect ({pct}%)"),
    }
}

/// The decisions of a comparison, one line per rule with the range of the figure it used:
/// seven rows decided by drifts of ±1.5% to ±27.9% are one way of deciding, not seven.
fn decision_lines(c: &Comparison) -> Vec<String> {
    let figure = |d: DecidedBy| match d {
        DecidedBy::Bootstrap { .. } => 0.0,
        DecidedBy::RoundDrift { share } => share * 100.0,
        DecidedBy::HistoryDrift { pct } | DecidedBy::MinimumEffect { pct } => pct,
    };
    // A rule is its kind, and for the bootstrap whether it paired; in first-seen order.
    let rule = |d: &DecidedBy| {
        let paired = matches!(d, DecidedBy::Bootstrap { paired: true });
        (std::mem::discriminant(d), paired)
    };
    let rules = super::grouped(c.pairs.iter().filter_map(|p| p.decided_by), rule);
    let tenths = |x: f64| format!("{x:.1}");
    rules
        .into_iter()
        .map(|(_, ds)| {
            let (d, n) = (ds[0], ds.len());
            let one = |d: &DecidedBy| Num::one(figure(*d));
            let range = ds[1..].iter().fold(one(&d), |r, x| r.widen(one(x)));
            let how = match d {
                DecidedBy::Bootstrap { .. } => decided_by_words(d),
                DecidedBy::RoundDrift { .. } => {
                    format!("drift between rounds (±{}%)", span(range, &tenths))
                }
                DecidedBy::HistoryDrift { .. } => {
                    format!(
                        "history drift ({}% seen between runs)",
                        span(range, &tenths)
                    )
                }
                DecidedBy::MinimumEffect { .. } => {
                    format!("minimum effect ({}%)", span(range, &|x| format!("{x}")))
                }
            };
            format!("decided by: {how} ({n} of {} rows)", c.pairs.len())
        })
        .collect()
}

/// One of a pair's notes, in words.
pub fn note_words(n: PairNote) -> String {
    match n {
        PairNote::RawCompared { a, b } => {
            let state = |s: Status| match s {
                Status::BelowResolution => "below resolution",
                Status::Unstable => "unstable",
                Status::Invalid => "invalid",
                Status::Ok => "without a figure",
            };
            let unresolved = |s: &Status| s != &Status::Ok;
            let sides = match (unresolved(&a), unresolved(&b)) {
                (true, true) if a == b => format!("{} in A and B", state(a)),
                (true, true) => format!("{} in A, {} in B", state(a), state(b)),
                (true, false) => format!("{} in A", state(a)),
                (false, _) => format!("{} in B", state(b)),
            };
            format!("value {sides}: raw per-iteration times compared")
        }
        PairNote::NonPositiveA => "median of A is not positive: no ratio".into(),
        PairNote::TooFewSamples => "too few usable samples for an interval".into(),
        PairNote::BelowMinimumEffect { was, pct } => {
            format!("{} by less than the {pct}% minimum effect", was.word())
        }
        PairNote::WithinHistoryDrift { was, pct } => format!(
            "{}, but within the {pct:.1}% this probe has changed between runs here",
            was.word()
        ),
    }
}

/// A pair's decision in words; empty when no rule decided.
fn decided_text(p: &Pair) -> String {
    p.decided_by.map(decided_by_words).unwrap_or_default()
}

fn fmt_median(v: Option<f64>, unit: &Unit) -> String {
    match v {
        None => "—".into(),
        Some(v) => crate::units::fmt_with_unit(v, unit),
    }
}

fn ratio_text(p: &Pair) -> String {
    match (p.ratio, p.ratio_ci95) {
        (Some(r), Some([lo, hi])) => crate::units::interval::fmt_bounds(r, lo, hi),
        (Some(r), None) => fmt_num(r),
        _ => "—".into(),
    }
}

fn verdict_text(p: &Pair) -> String {
    match (p.verdict, p.change_pct) {
        (Verdict::Slower | Verdict::Faster, Some(c)) => {
            format!("{} ({c:+.1}%)", p.verdict.word())
        }
        _ => p.verdict.word().to_string(),
    }
}

fn rows(c: &Comparison) -> Vec<[String; 5]> {
    c.pairs
        .iter()
        .map(|p| {
            [
                format!(
                    "{} {}{}",
                    p.probe,
                    p.params,
                    if p.basis == Basis::Raw { " (raw)" } else { "" }
                )
                .trim()
                .to_string(),
                fmt_median(p.a_median, &p.unit),
                fmt_median(p.b_median, &p.unit),
                ratio_text(p),
                verdict_text(p),
            ]
        })
        .collect()
}

const HEAD: [&str; 5] = ["probe", "A median", "B median", "B/A [95% CI]", "verdict"];

/// Aligned columns for stdout (its width).
pub fn text(c: &Comparison) -> String {
    text_for(c, &crate::report::term::Term::stdout())
}

/// Aligned columns within `term.width`: the machine differences, the table (the probe and
/// verdict wrap inside their cells, numbers never), then each row's note and how each
/// verdict was decided, word-wrapped, and the unpaired probes.
pub fn text_for(c: &Comparison, term: &crate::report::term::Term) -> String {
    use crate::report::term::wrap;
    let mut o = wrap(&format!("A: {}", c.a), term.width, "", "   ") + "\n";
    o.push_str(&(wrap(&format!("B: {}", c.b), term.width, "", "   ") + "\n\n"));
    if c.machine_differences.is_empty() {
        o.push_str("machines: no differences in the key facts\n\n");
    } else {
        o.push_str("machine differences (read these first):\n");
        for d in &c.machine_differences {
            let line = format!("{}: {} → {}", d.fact, d.a, d.b);
            o.push_str(&(wrap(&line, term.width, "  ", "    ") + "\n"));
        }
        o.push('\n');
    }
    // The verdicts in short (a column of words would take the probes' room); said in full
    // once under the table.
    let short = |p: &Pair| match (p.verdict, p.change_pct) {
        (Verdict::NoSignificantDifference, _) => "n.s.".to_string(),
        (Verdict::NotComparable, _) => "n/c".to_string(),
        _ => verdict_text(p),
    };
    let rows: Vec<Vec<String>> = rows(c)
        .into_iter()
        .zip(&c.pairs)
        .map(|(r, p)| {
            let mut r = Vec::from(r);
            r[4] = short(p);
            r
        })
        .collect();
    o.push_str(&results(&rows, term));
    let legend: Vec<&str> = [
        (
            Verdict::NoSignificantDifference,
            "n.s. = no significant difference",
        ),
        (
            Verdict::NotComparable,
            "n/c = not comparable (the notes say why)",
        ),
    ]
    .iter()
    .filter(|(v, _)| c.pairs.iter().any(|p| p.verdict == *v))
    .map(|(_, t)| *t)
    .collect();
    if !legend.is_empty() {
        o.push_str(&(wrap(&legend.join("; "), term.width, "", "  ") + "\n"));
    }
    // Notes after the table, each under its probe; one line per way of deciding.
    let mut notes = String::new();
    for (r, p) in rows.iter().zip(&c.pairs) {
        let note = note(p);
        if !note.is_empty() {
            let line = format!("{}: {note}", r[0]);
            notes.push_str(&(wrap(&line, term.width, "  ", "    ") + "\n"));
        }
    }
    if !notes.is_empty() {
        o.push_str("\nnotes:\n");
        o.push_str(&notes);
    }
    for line in decision_lines(c) {
        o.push_str(&(wrap(&line, term.width, "", "  ") + "\n"));
    }
    unpaired(&mut o, c, |s| wrap(s, term.width, "  ", "    ") + "\n");
    o
}

/// The results table within `term.width`: one line per probe when it fits; else each probe's
/// label on its own (wrapped) line with its figures on the line beneath, the figures aligned
/// in columns across probes and never wrapped.
fn results(rows: &[Vec<String>], term: &crate::report::term::Term) -> String {
    use crate::report::term::{wrap, wrapping_grid};
    let natural = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([HEAD[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let one_line: usize = (0..HEAD.len()).map(|i| natural(i) + 2).sum::<usize>() - 2;
    if one_line <= term.width {
        return wrapping_grid(&HEAD, rows, term);
    }
    let figures: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r[1..].iter().map(String::as_str).collect())
        .collect();
    let inner = crate::report::term::Term {
        width: term.width.saturating_sub(4),
        ..*term
    };
    let grid = wrapping_grid(&HEAD[1..], &figures, &inner);
    let lines: Vec<&str> = grid.lines().collect();
    if lines.len() != rows.len() + 1 {
        // A figure's cell wrapped after all (a very narrow terminal): the plain grid.
        return wrapping_grid(&HEAD, rows, term);
    }
    let mut o = format!("{}\n    {}\n", HEAD[0], lines[0]);
    for (r, l) in rows.iter().zip(&lines[1..]) {
        o.push_str(&(wrap(&r[0], term.width, "", "  ") + "\n"));
        o.push_str(&format!("    {l}\n"));
    }
    o
}

fn unpaired(o: &mut String, c: &Comparison, item: impl Fn(&str) -> String) {
    for (name, list) in [("only in A", &c.only_in_a), ("only in B", &c.only_in_b)] {
        if !list.is_empty() {
            o.push_str(&format!(
                "\nunpaired, {name} (parameters differ or probe missing):\n"
            ));
            for s in list {
                o.push_str(&item(s));
            }
        }
    }
}

use crate::escape::{markdown as md_cell, markdown_code as md_code};

/// A Markdown document: differences list, results table, unpaired list.
pub fn markdown(c: &Comparison) -> String {
    let mut o = format!(
        "## oscost compare\n\n- **A**: {}\n- **B**: {}\n\n",
        md_cell(&c.a),
        md_cell(&c.b)
    );
    if c.machine_differences.is_empty() {
        o.push_str("Machines: no differences in the key facts.\n\n");
    } else {
        o.push_str("### Machine differences\n\n| fact | A | B |\n|---|---|---|\n");
        for d in &c.machine_differences {
            o.push_str(&format!(
                "| {} | {} | {} |\n",
                md_cell(&d.fact),
                md_cell(&d.a),
                md_cell(&d.b)
            ));
        }
        o.push('\n');
    }
    o.push_str("| probe | A median | B median | B/A [95% CI] | verdict | note |\n|---|--:|--:|--:|---|---|\n");
    for (r, p) in rows(c).iter().zip(&c.pairs) {
        let v = match p.verdict {
            Verdict::Slower => format!("**{}**", r[4]),
            _ => r[4].clone(),
        };
        o.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            md_code(&r[0]),
            r[1],
            r[2],
            r[3],
            v,
            md_cell(&note(p))
        ));
    }
    unpaired(&mut o, c, |s| format!("- {}\n", md_code(s)));
    o
}

/// A pair's note: why a side is invalid (its failed checks), or what the comparison said.
pub fn note(p: &crate::compare::Pair) -> String {
    if p.invalid_in.is_empty() {
        return p
            .notes
            .iter()
            .map(|&n| note_words(n))
            .collect::<Vec<_>>()
            .join("; ");
    }
    p.invalid_in
        .iter()
        .map(|(side, m)| {
            let side = match side {
                crate::compare::Side::A => "A",
                crate::compare::Side::B => "B",
            };
            format!("invalid in {side}: {}", super::checks::invalid_reason(m))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The JSON face of a comparison: its figures as they are, its notes and decisions in words.
#[derive(Serialize)]
struct ComparisonJson<'a> {
    a: &'a str,
    b: &'a str,
    machine_differences: &'a [MachineDifference],
    pairs: Vec<PairJson<'a>>,
    only_in_a: &'a [String],
    only_in_b: &'a [String],
}

/// The JSON face of one pair (fields in the order scripts have read them).
#[derive(Serialize)]
struct PairJson<'a> {
    probe: &'a str,
    params: &'a str,
    unit: &'a Unit,
    basis: &'static str,
    a_median: Option<f64>,
    b_median: Option<f64>,
    ratio: Option<f64>,
    ratio_ci95: Option<[f64; 2]>,
    verdict: Verdict,
    change_pct: Option<f64>,
    valid: bool,
    note: String,
    decided_by: String,
    history_drift_pct: Option<f64>,
}

impl<'a> PairJson<'a> {
    fn of(p: &'a Pair) -> Self {
        PairJson {
            probe: &p.probe,
            params: &p.params,
            unit: &p.unit,
            basis: match p.basis {
                Basis::Value => "value",
                Basis::Raw => "raw",
            },
            a_median: p.a_median,
            b_median: p.b_median,
            ratio: p.ratio,
            ratio_ci95: p.ratio_ci95,
            verdict: p.verdict,
            change_pct: p.change_pct,
            valid: p.valid,
            note: note(p),
            decided_by: decided_text(p),
            history_drift_pct: p.history_drift_pct,
        }
    }
}

/// Pretty JSON of the whole comparison.
pub fn json(c: &Comparison) -> String {
    let view = ComparisonJson {
        a: &c.a,
        b: &c.b,
        machine_differences: &c.machine_differences,
        pairs: c.pairs.iter().map(PairJson::of).collect(),
        only_in_a: &c.only_in_a,
        only_in_b: &c.only_in_b,
    };
    serde_json::to_string_pretty(&view).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")) + "\n"
}

/// The comparison figure: ratio B/A per paired probe with its 95% interval, a line at 1,
/// the minimum effect on both sides and the `--fail-above` gate when given.
pub fn svg(c: &crate::compare::Comparison, fail_above: Option<f64>, min_effect: f64) -> String {
    use crate::compare::Verdict;
    use crate::report::plot::{RatioPlot, RatioRow, Threshold};
    let rows = c
        .pairs
        .iter()
        .map(|p| RatioRow {
            label: format!("{} {}", p.probe, p.params).trim().to_string(),
            ratio: match (p.ratio, p.ratio_ci95) {
                (Some(r), Some([lo, hi])) => Some([r, lo, hi]),
                (Some(r), None) => Some([r, r, r]),
                _ => None,
            },
            slower: match p.verdict {
                Verdict::Slower => Some(true),
                Verdict::Faster => Some(false),
                _ => None,
            },
            note: match note(p) {
                n if n.is_empty() => p.verdict.word().to_string(),
                n => n,
            },
        })
        .collect();
    let mut thresholds = Vec::new();
    if min_effect > 0.0 {
        let f = min_effect;
        thresholds.push(Threshold {
            at: 1.0 - min_effect / 100.0,
            label: format!("−{f}%"),
        });
        thresholds.push(Threshold {
            at: 1.0 + min_effect / 100.0,
            label: format!("+{f}% (minimum effect)"),
        });
    }
    if let Some(x) = fail_above {
        thresholds.push(Threshold {
            at: 1.0 + x / 100.0,
            label: format!("fail above +{x}%"),
        });
    }
    RatioPlot {
        title: "oscost compare: B / A per probe (95% interval)".into(),
        subtitle: format!("A: {} · B: {}", c.a, c.b),
        x_label: "B / A (ratio of medians, log scale; right of 1 = B higher)".into(),
        rows,
        thresholds,
    }
    .to_svg()
}

/// A self-contained HTML page for a comparison: machine differences, the figure, the table.
pub fn html(c: &crate::compare::Comparison, svg: String) -> String {
    use crate::report::html::esc;
    use crate::units::fmt_with_unit;
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>oscost compare</title>\n<style>{}</style>\n</head>\n<body>\n\
         <h1>oscost compare</h1>\n<p class=\"meta\">A: {} · B: {}</p>\n",
        crate::report::html::CSS,
        esc(&c.a),
        esc(&c.b)
    );
    if c.machine_differences.is_empty() {
        h.push_str("<p>machines: no differences in the key facts</p>\n");
    } else {
        h.push_str("<ul class=\"warn\">\n");
        for d in &c.machine_differences {
            h.push_str(&format!(
                "<li>{}: {} → {}</li>\n",
                esc(&d.fact),
                esc(&d.a),
                esc(&d.b)
            ));
        }
        h.push_str("</ul>\n");
    }
    h.push_str(&crate::report::html::inline(svg));
    h.push_str(
        "<div class=\"scroll\"><table class=\"results\">\n<tr><th>probe</th><th>A</th>\
         <th>B</th><th>B/A [95% CI]</th><th>verdict</th><th>note</th></tr>\n",
    );
    let med = |v: Option<f64>, unit: &Unit| v.map(|v| fmt_with_unit(v, unit)).unwrap_or("—".into());
    // A note (why a pair is not compared) is brief in its row, in full below the table.
    let mut notes = crate::report::footnotes::Footnotes::new("compare");
    for p in &c.pairs {
        let ratio = ratio_text(p);
        h.push_str(&format!(
            "<tr><td><code>{}</code> {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"verdict\">{}</td><td class=\"notes\">{}</td></tr>\n",
            esc(&p.probe),
            esc(&p.params),
            esc(&med(p.a_median, &p.unit)),
            esc(&med(p.b_median, &p.unit)),
            esc(&ratio),
            esc(p.verdict.word()),
            notes.remark(
                &format!("{} {}", p.probe, p.params),
                &note(p),
                crate::report::footnotes::Mark::Note
            )
        ));
    }
    h.push_str("</table></div>\n");
    h.push_str(&notes.list());
    for (name, list) in [("only in A", &c.only_in_a), ("only in B", &c.only_in_b)] {
        if !list.is_empty() {
            h.push_str(&format!(
                "<p>unpaired, {name}: {}</p>\n",
                esc(&list.join(", "))
            ));
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::input::parse_run;

    fn cmp() -> Comparison {
        let a = parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap();
        let mut b = a.clone();
        b.machine.kernel.release = Some("9.9.9".into());
        b.measurements.remove(0);
        compare(&a, "a.json", &b, "b.json")
    }

    #[test]
    fn text_lists_machine_differences_before_results_and_unpaired_after() {
        let t = text(&cmp());
        let diff = t.find("kernel:").unwrap();
        let head = t.find("B/A [95% CI]").unwrap();
        let unp = t.find("unpaired, only in A").unwrap();
        assert!(diff < head && head < unp, "{t}");
        assert!(t.contains("no significant difference"));
        assert!(t.contains("invalid in A"), "invalid pair should say why");
    }

    #[test]
    fn a_ratio_is_no_more_precise_than_its_interval_and_noise_says_unstable() {
        let mut c = cmp();
        let p = c.pairs.iter_mut().find(|p| p.ratio.is_some()).unwrap();
        p.ratio = Some(0.753);
        p.ratio_ci95 = Some([0.409, 1.16]);
        assert_eq!(ratio_text(p), "unstable (±0.41)");
        p.ratio = Some(0.99684);
        p.ratio_ci95 = Some([0.99012, 1.00331]);
        assert_eq!(ratio_text(p), "0.997 [0.990, 1.003]");
        p.ratio = Some(0.753);
        p.ratio_ci95 = Some([0.409, 1.16]);
        assert!(html(&c, String::new()).contains("unstable (±0.41)"));
    }

    #[test]
    fn markdown_is_a_table() {
        let m = markdown(&cmp());
        assert!(m.contains("### Machine differences"));
        assert!(m.contains("| probe | A median |"));
        assert!(m.lines().filter(|l| l.starts_with("| `")).count() >= 3);
    }

    #[test]
    fn notes_and_decisions_are_worded_from_their_figures() {
        assert_eq!(
            decided_by_words(DecidedBy::RoundDrift { share: 0.105 }),
            "drift between rounds (±10.5%)"
        );
        assert_eq!(
            decided_by_words(DecidedBy::HistoryDrift { pct: 3.06 }),
            "history drift (3.1% seen between runs)"
        );
        assert_eq!(
            decided_by_words(DecidedBy::MinimumEffect { pct: 5.0 }),
            "minimum effect (5%)"
        );
        assert_eq!(
            decided_by_words(DecidedBy::Bootstrap { paired: false }),
            "bootstrap"
        );
        let mut c = cmp();
        let p = c
            .pairs
            .iter_mut()
            .find(|p| p.invalid_in.is_empty())
            .unwrap();
        p.notes = vec![
            PairNote::RawCompared {
                a: Status::Ok,
                b: Status::BelowResolution,
            },
            PairNote::BelowMinimumEffect {
                was: Verdict::Faster,
                pct: 2.5,
            },
        ];
        assert_eq!(
            note(p),
            "value below resolution in B: raw per-iteration times compared; \
             faster by less than the 2.5% minimum effect"
        );
        p.decided_by = Some(DecidedBy::MinimumEffect { pct: 2.5 });
        let v: serde_json::Value = serde_json::from_str(&json(&c)).unwrap();
        let p = v["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["decided_by"] == "minimum effect (2.5%)")
            .expect("the decision in words in the JSON");
        assert_eq!(
            p["note"],
            "value below resolution in B: raw per-iteration times compared; \
             faster by less than the 2.5% minimum effect"
        );
    }

    #[test]
    fn decisions_that_read_alike_are_counted_as_one_way_of_deciding() {
        let mut c = cmp();
        let mut drifts = [0.0091, 0.0089].into_iter();
        for p in c
            .pairs
            .iter_mut()
            .filter(|p| p.decided_by.is_some())
            .take(2)
        {
            p.decided_by = Some(DecidedBy::RoundDrift {
                share: drifts.next().unwrap(),
            });
        }
        let t = text(&c);
        assert_eq!(
            t.matches("decided by: drift between rounds (±0.9%) (2 of")
                .count(),
            1,
            "{t}"
        );
    }

    #[test]
    fn drifts_that_differ_are_one_way_of_deciding_with_their_range() {
        let mut c = cmp();
        assert!(c.pairs.len() >= 5, "the fixture's pairs");
        let drift = |share| Some(DecidedBy::RoundDrift { share });
        let rules = [
            drift(0.015),
            Some(DecidedBy::Bootstrap { paired: true }),
            drift(0.279),
            Some(DecidedBy::Bootstrap { paired: false }),
            drift(0.097),
        ];
        for (i, p) in c.pairs.iter_mut().enumerate() {
            p.decided_by = rules.get(i).copied().flatten();
        }
        let total = c.pairs.len();
        // One line per rule, in the order first seen; the drifts as one, with their range.
        assert_eq!(
            decision_lines(&c),
            [
                format!("decided by: drift between rounds (±1.5–27.9%) (3 of {total} rows)"),
                format!("decided by: bootstrap of paired differences (1 of {total} rows)"),
                format!("decided by: bootstrap (1 of {total} rows)"),
            ]
        );
        c.pairs[2].decided_by = drift(0.015);
        c.pairs[4].decided_by = drift(0.015);
        assert_eq!(
            decision_lines(&c)[0],
            format!("decided by: drift between rounds (±1.5%) (3 of {total} rows)")
        );
    }

    #[test]
    fn json_round_trips_as_json() {
        let v: serde_json::Value = serde_json::from_str(&json(&cmp())).unwrap();
        assert!(v["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["verdict"].is_string()));
        assert_eq!(v["machine_differences"][0]["fact"], "kernel");
        assert_eq!(v["only_in_a"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn compare_page_has_the_ratio_figure_and_thresholds() {
        let run = crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
            .unwrap();
        let c = crate::compare::compare(&run, "a.json", &run, "b.json");
        let svg = svg(&c, Some(5.0), 2.0);
        assert!(svg.contains("fail above +5%"), "{svg}");
        assert!(svg.contains("minimum effect"));
        let page = html(&c, svg);
        assert!(page.contains("<svg") && page.contains("B/A [95% CI]"));
        assert!(!page.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    }
}
