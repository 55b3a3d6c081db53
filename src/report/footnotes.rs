//! The warnings and notes of an HTML results table as footnotes: in its row a remark is
//! brief ("⚠ 1 of 18 samples are outliers ¹", "notes 2, 3"), and below the table each kind
//! of remark is written once in full, numbered: prose in the row would make rows hundreds of
//! pixels tall. A kind said once per table is the terminal's rule too (report::table's warning block).

use std::fmt::Write;

use crate::escape::xml as esc;
use crate::model::{Measurement, Remark};
use crate::report::remarks;
use crate::units::name::Word;

/// Longest brief a warning gets in its row, in characters (the footnote has the rest).
const BRIEF_CHARS: usize = 38;

/// Warnings told in brief in a row; further ones are only their footnotes' numbers, so a
/// row stays a few lines tall however many warnings a busy machine raises.
const BRIEFS: usize = 2;

/// What a remark is, shown before its footnote.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Why a figure is invalid (its failed checks).
    Invalid,
    Warning,
    Note,
}

impl Mark {
    fn prefix(self) -> &'static str {
        match self {
            Mark::Invalid => "✗ invalid: ",
            Mark::Warning => "⚠ ",
            Mark::Note => "",
        }
    }
}

/// One kind of remark and every row's text of it. Remarks are of one kind when they differ
/// only in their numbers; warnings also when they share a gist ("samples are bimodal" in
/// ns and in µs), as in the terminal's warning block.
struct Kind {
    key: String,
    mark: Mark,
    /// (row label, remark), in first-seen order, each pair once.
    texts: Vec<(String, Remark)>,
}

/// The footnotes of one table, numbered in first-seen order as its rows are rendered.
pub struct Footnotes {
    /// Makes the anchors unique on the page (a table per family, several per page).
    id: String,
    kinds: Vec<Kind>,
}

impl Footnotes {
    /// Footnotes for the table whose anchors start with `id` (e.g. "family-fault").
    pub fn new(id: &str) -> Self {
        Footnotes {
            id: id.to_string(),
            kinds: Vec::new(),
        }
    }

    /// The row's cell: its first [`BRIEFS`] warnings in brief with their footnotes' numbers,
    /// the numbers of any further ones ("⚠ +2 more ³ ⁴"), then the numbers of its notes
    /// ("notes 3, 4"); empty when the measurement has neither. `row` names the
    /// row in a footnote that has to list rows' texts one by one.
    pub fn cell(&mut self, row: &str, m: &Measurement) -> String {
        let mut parts = self.warnings(row, m, BRIEFS);
        let notes = self.note_numbers(row, m);
        parts.extend(self.note_refs(&notes));
        // An empty part would be a stray separator (" ·  · ").
        parts.retain(|p| !p.is_empty());
        parts.join(" · ")
    }

    /// One remark of a row in brief with its footnote's number ("invalid in A ¹"); `text`
    /// in full goes to the footnotes. Empty for an empty remark.
    pub fn remark(&mut self, row: &str, text: &str, mark: Mark) -> String {
        self.said(row, &Remark::legacy(text), mark)
    }

    /// [`Footnotes::remark`] of a remark.
    fn said(&mut self, row: &str, r: &Remark, mark: Mark) -> String {
        let text = remarks::words(r);
        if text.is_empty() {
            return String::new();
        }
        let n = self.number_of(row, r, mark);
        let sign = if mark == Mark::Warning { "⚠ " } else { "" };
        format!(
            "<span class=\"remark\">{sign}{}</span>",
            self.linked(&brief(&text), n)
        )
    }

    /// `text` (escaped) with footnote `n`'s number after it, a word joiner between them: a
    /// number that wraps alone to the next line (after a brief's "…") reads as the start of
    /// the next remark ("³ · ⚠ +2 more ⁴ ⁵").
    pub fn linked(&self, text: &str, n: usize) -> String {
        format!("{}\u{2060}{}", esc(text), self.link(n))
    }

    /// A row of several runs: per run its checks' tally and its warnings as footnote numbers
    /// only ("run 2 ✓ 5/5 ⚠ ¹ ³"), then the notes of all runs once ("notes 4, 5").
    /// `runs` holds each measured run's number (from 1), its row label, its measurement and
    /// its checks' cell.
    pub fn runs_cell(&mut self, runs: &[(usize, String, &Measurement, String)]) -> String {
        let mut h = String::new();
        let mut notes: Vec<usize> = Vec::new();
        for (run, row, m, checks) in runs {
            let warnings = self.warnings(row, m, 0).join(" ");
            let _ = write!(h, "<div><b>run {run}</b> {checks} {warnings}</div>");
            for k in self.note_numbers(row, m) {
                if !notes.contains(&k) {
                    notes.push(k);
                }
            }
        }
        notes.sort_unstable();
        if let Some(refs) = self.note_refs(&notes) {
            let _ = write!(h, "<div>{refs}</div>");
        }
        h
    }

    /// The first `briefs` warnings in brief with their footnotes' numbers, the numbers of
    /// the rest ("⚠ +2 more ³ ⁴", or "⚠ ³ ⁴" when none is told in brief).
    fn warnings(&mut self, row: &str, m: &Measurement, briefs: usize) -> Vec<String> {
        let mut parts: Vec<String> = Vec::new();
        let mut more: Vec<usize> = Vec::new();
        // A blank remark (a run file's "") says nothing: no brief, number or footnote.
        let said = m
            .warnings
            .iter()
            .filter(|w| !remarks::words(w).trim().is_empty());
        for (i, w) in said.enumerate() {
            let n = self.number_of(row, w, Mark::Warning);
            if i < briefs {
                parts.push(self.said(row, w, Mark::Warning));
            } else if !more.contains(&n) {
                more.push(n);
            }
        }
        if !more.is_empty() {
            let links: Vec<String> = more.iter().map(|&k| self.link(k)).collect();
            let count = if briefs == 0 {
                String::new()
            } else {
                format!("+{} more ", more.len())
            };
            // On one line: a number wrapped alone reads as the start of the next item.
            parts.push(format!(
                "<span class=\"remark nw\">⚠ {count}{}</span>",
                links.join(" ")
            ));
        }
        parts
    }

    /// The footnote numbers of a row's notes (and of why its sampling stopped), ascending.
    fn note_numbers(&mut self, row: &str, m: &Measurement) -> Vec<usize> {
        let mut notes: Vec<usize> = Vec::new();
        let stop = m
            .stop_reason
            .map(|r| format!("sampling stopped: {}", r.word()));
        for n in m.notes.iter().chain(stop.as_ref()) {
            if n.trim().is_empty() {
                continue;
            }
            let k = self.number(row, n, Mark::Note);
            if !notes.contains(&k) {
                notes.push(k);
            }
        }
        notes.sort_unstable();
        notes
    }

    /// "notes ³, ⁴" (nothing when there are none).
    fn note_refs(&self, notes: &[usize]) -> Option<String> {
        if notes.is_empty() {
            return None;
        }
        let links: Vec<String> = notes.iter().map(|&k| self.link(k)).collect();
        Some(format!(
            "<span class=\"note-refs\">notes {}</span>",
            links.join(", ")
        ))
    }

    /// The numbered list below the table ("" when no row had a remark): each kind once, in
    /// full. A kind whose rows differ only in a few numbers is one sentence with each
    /// number's range; otherwise each row's text under the kind's gist.
    pub fn list(&self) -> String {
        if self.kinds.is_empty() {
            return String::new();
        }
        let mut h = String::from("<ol class=\"footnotes\">\n");
        for (i, k) in self.kinds.iter().enumerate() {
            let _ = write!(
                h,
                "<li id=\"{}-note-{}\">{}",
                esc(&self.id),
                i + 1,
                k.mark.prefix()
            );
            let mut distinct: Vec<(Remark, Vec<&str>)> = Vec::new();
            for (row, t) in &k.texts {
                match distinct.iter_mut().find(|d| &d.0 == t) {
                    Some(d) => d.1.push(row),
                    None => distinct.push((t.clone(), vec![row])),
                }
            }
            let texts: Vec<Remark> = distinct.iter().map(|d| d.0.clone()).collect();
            let folded = remarks::all_words(&remarks::fold(&texts));
            let ranges = |t: &str| t.matches('–').count();
            if folded.len() == 1 && ranges(&folded[0]) <= ranges(&remarks::words(&texts[0])) + 2 {
                h.push_str(&esc(&folded[0]));
            } else {
                let head = match remarks::gist(&texts[0]) {
                    Some(g) => esc(&g),
                    None => format!("in {} rows", k.texts.len()),
                };
                let _ = write!(h, "{head}:<ul>");
                for (t, rows) in &distinct {
                    let t = remarks::words(t);
                    match rows[..] {
                        [row] => {
                            let _ = write!(h, "<li><code>{}</code>: {}</li>", esc(row), esc(&t));
                        }
                        _ => {
                            let _ = write!(h, "<li>{} (in {} rows)</li>", esc(&t), rows.len());
                        }
                    }
                }
                h.push_str("</ul>");
            }
            h.push_str("</li>\n");
        }
        h.push_str("</ol>\n");
        h
    }

    /// The number (from 1) of the footnote for `text`'s kind, adding it on first sight:
    /// link to it with [`Footnotes::link`].
    pub fn number(&mut self, row: &str, text: &str, mark: Mark) -> usize {
        self.number_of(row, &Remark::legacy(text), mark)
    }

    /// [`Footnotes::number`] of a remark.
    fn number_of(&mut self, row: &str, r: &Remark, mark: Mark) -> usize {
        let key = match (mark, remarks::gist(r)) {
            (Mark::Warning, Some(g)) => g,
            _ => remarks::key(r),
        };
        let is = |k: &Kind| k.key == key && k.mark == mark;
        let i = super::find_or_push(&mut self.kinds, is, || Kind {
            key: key.clone(),
            mark,
            texts: Vec::new(),
        });
        let pair = (row.to_string(), r.clone());
        if !self.kinds[i].texts.contains(&pair) {
            self.kinds[i].texts.push(pair);
        }
        i + 1
    }

    /// A superscript link to footnote `n`.
    pub fn link(&self, n: usize) -> String {
        format!(
            "<a class=\"fn\" href=\"#{}-note-{n}\"><sup>{n}</sup></a>",
            esc(&self.id)
        )
    }
}
/// A remark in brief for its row: up to its first clause break (": ", "; ", " (", ", ",
/// " — ") when that leaves two words or more, cut at a word within [`BRIEF_CHARS`] with "…".
/// "1 of 18 samples are outliers (modified z > 3.5): flagged, kept" → "1 of 18 samples are
/// outliers".
pub fn brief(text: &str) -> String {
    let mut s = text.trim();
    let cut = [": ", "; ", " (", ", ", " — "]
        .iter()
        .filter_map(|d| s.find(d))
        .filter(|&at| s[..at].split_whitespace().count() >= 2)
        .min();
    if let Some(at) = cut {
        s = &s[..at];
    }
    if s.chars().count() <= BRIEF_CHARS {
        return s.to_string();
    }
    let mut out = String::new();
    for word in s.split_whitespace() {
        if out.chars().count() + 1 + word.chars().count() > BRIEF_CHARS - 1 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.is_empty() {
        out = s.chars().take(BRIEF_CHARS - 1).collect();
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_brief_stops_at_the_first_clause_and_within_its_length() {
        assert_eq!(
            brief("1 of 18 samples are outliers (modified z > 3.5): flagged, kept"),
            "1 of 18 samples are outliers"
        );
        assert_eq!(
            brief("samples are bimodal: 1333 near 1.13 µs, 853 near 4.44 µs"),
            "samples are bimodal"
        );
        let long = brief("interval did not reach ±2% before the time budget was spent at all");
        assert!(
            long.ends_with('…') && long.chars().count() <= BRIEF_CHARS,
            "{long}"
        );
        assert!(long.starts_with("interval did not reach ±2%"), "{long}");
        // A first clause of one word is no brief: the cut goes further.
        assert_eq!(brief("send: the client enters"), "send: the client enters");
    }

    fn measurement(warnings: &[&str], notes: &[&str]) -> Measurement {
        let mut m = crate::input::parse_run(
            include_str!("../../tests/fixtures/run-quick.json"),
            "fixture",
        )
        .unwrap()
        .measurements
        .remove(0);
        m.stop_reason = None;
        m.warnings = warnings.iter().map(|s| Remark::legacy(*s)).collect();
        m.notes = notes.iter().map(|s| s.to_string()).collect();
        m
    }

    /// Warnings of one kind in several rows are one footnote, each row with its own numbers
    /// in brief; a note shared by the rows is one footnote too.
    #[test]
    fn each_kind_of_remark_is_one_footnote() {
        let mut f = Footnotes::new("family-p");
        let a = f.cell(
            "p.x a=1",
            &measurement(
                &["1 of 18 samples are outliers (modified z > 3.5): flagged, kept"],
                &["the loop of all 44 mappings", "a definition"],
            ),
        );
        let b = f.cell(
            "p.x a=2",
            &measurement(
                &["5 of 15 samples are outliers (modified z > 3.5): flagged, kept"],
                &["the loop of all 59 mappings", "a definition"],
            ),
        );
        assert!(a.contains("⚠ 1 of 18 samples are outliers"), "{a}");
        assert!(b.contains("⚠ 5 of 15 samples are outliers"), "{b}");
        assert!(a.contains("href=\"#family-p-note-1\""), "{a}");
        assert!(b.contains("href=\"#family-p-note-1\""), "{b}");
        assert!(
            b.contains("notes <a class=\"fn\" href=\"#family-p-note-2\">"),
            "{b}"
        );
        let list = f.list();
        assert_eq!(list.matches("<li id=").count(), 3, "{list}");
        assert!(
            list.contains("1–5 of 15–18 samples are outliers (modified z &gt; 3.5): flagged, kept"),
            "{list}"
        );
        assert!(list.contains("the loop of all 44–59 mappings"), "{list}");
    }

    /// A kind whose rows differ in too many numbers for one sentence lists each row's text.
    #[test]
    fn a_kind_too_varied_to_fold_lists_each_row() {
        let mut f = Footnotes::new("t");
        for (row, w) in [
            (
                "r1",
                "samples are bimodal: 1 near 2 µs, 3 near 4 µs, 5 near 6 µs",
            ),
            (
                "r2",
                "samples are bimodal: 7 near 8 µs, 9 near 10 µs, 11 near 12 µs",
            ),
        ] {
            f.cell(row, &measurement(&[w], &[]));
        }
        let list = f.list();
        assert_eq!(list.matches("<li id=").count(), 1, "{list}");
        assert!(list.contains("samples are bimodal:<ul>"), "{list}");
        assert!(
            list.contains("<code>r2</code>: samples are bimodal: 7 near 8 µs"),
            "{list}"
        );
    }

    /// However many warnings a row has, it tells two in brief and counts the rest.
    #[test]
    fn a_row_tells_two_warnings_in_brief_and_counts_the_rest() {
        let mut f = Footnotes::new("t");
        let cell = f.cell(
            "r",
            &measurement(
                &[
                    "first one: a",
                    "second one: b",
                    "third one: c",
                    "fourth one: d",
                ],
                &[],
            ),
        );
        assert!(
            cell.contains("⚠ first one") && cell.contains("⚠ second one"),
            "{cell}"
        );
        assert!(!cell.contains("third one"), "{cell}");
        assert!(cell.contains("⚠ +2 more"), "{cell}");
        assert!(
            cell.contains("#t-note-3") && cell.contains("#t-note-4"),
            "{cell}"
        );
        assert_eq!(f.list().matches("<li id=").count(), 4);
    }

    /// A blank warning or note in a run file is no remark: no stray separator in the row
    /// (" ·  · ", "notes ⁴, , ⁵") and no empty footnote below the table.
    #[test]
    fn blank_remarks_leave_no_empty_item() {
        let mut f = Footnotes::new("t");
        let m = measurement(
            &["", "first one: a", " ", "second one: b"],
            &["a note", "", "  ", "another note"],
        );
        let cell = f.cell("r", &m);
        assert!(!cell.contains("·  ·") && !cell.starts_with(" ·"), "{cell}");
        assert!(
            cell.contains("⚠ first one") && cell.contains("⚠ second one"),
            "{cell}"
        );
        assert!(!cell.contains("more"), "{cell}");
        let refs = &cell[cell.find("notes ").expect("the notes' numbers")..];
        assert_eq!(refs.matches("<a class=\"fn\"").count(), 2, "{refs}");
        assert!(!refs.contains(", ,"), "{refs}");
        let list = f.list();
        assert_eq!(list.matches("<li id=").count(), 4, "{list}");
        for empty in ["\"></li>", "⚠ </li>"] {
            assert!(!list.contains(empty), "an empty footnote: {list}");
        }
        let mut f = Footnotes::new("t");
        assert_eq!(f.cell("r", &measurement(&[""], &[" "])), "");
        assert_eq!(f.list(), "");
    }

    /// A footnote's number never starts a line alone: it is kept with the brief's last
    /// word, and a row's note numbers stay together.
    #[test]
    fn footnote_numbers_stay_with_their_words() {
        let mut f = Footnotes::new("t");
        let cell = f.cell(
            "r",
            &measurement(&["interval did not reach ±2%: x"], &["a", "b"]),
        );
        assert!(
            cell.contains("⚠ interval did not reach ±2%\u{2060}<a class=\"fn\""),
            "{cell}"
        );
        assert!(cell.contains("<span class=\"note-refs\">notes "), "{cell}");
        let more = f.cell(
            "s",
            &measurement(&["a one: x", "b two: y", "c three: z"], &[]),
        );
        assert!(
            more.contains("<span class=\"remark nw\">⚠ +1 more <a"),
            "{more}"
        );
        let style = crate::report::html::page_head("t");
        assert!(style.contains(".note-refs{white-space:nowrap}"), "{style}");
    }

    #[test]
    fn no_remarks_no_list() {
        let mut f = Footnotes::new("t");
        assert_eq!(f.cell("r", &measurement(&[], &[])), "");
        assert_eq!(f.list(), "");
    }
}
