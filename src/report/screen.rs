//! What a measuring command prints on stdout once it has measured, in one function, so the
//! commands print it and a test can render it from a recorded run at any width (every line
//! within the terminal's width).

use super::term::{fit, wrap, Term};
use crate::model::Run;

/// How much a measuring command prints beyond its results: the default is the results
/// and their evidence in brief (quiet by default, complete on request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detail {
    /// `--verbose`: every evidence line, each round's reading of a failed check, each
    /// warning and drift note under its own probe, why each skipped probe was skipped, and
    /// the families' detail tables (report::table::render_detail).
    pub verbose: bool,
    /// `--explain`: each probe's definition after the table (with everything `verbose`
    /// prints).
    pub explain: bool,
}

impl Detail {
    /// What a command's `--verbose` and `--explain` ask for: `--explain` implies
    /// `--verbose`.
    pub fn asked(verbose: bool, explain: bool) -> Self {
        Detail {
            verbose: verbose || explain,
            explain,
        }
    }
}

/// A measuring command's stdout after measuring: its own report (`own`, the sweep and
/// memory-latency reports) or the clock line, machine warnings and table (as much of it as
/// `detail` asks); the definitions with `detail.explain`; then its detail sections
/// (`after`). Every line fits `term.width`: the families lay their tables out for it, and
/// their prose lines (warnings, notes) are word-wrapped here.
pub fn measured(
    run: &Run,
    term: &Term,
    own: Option<&str>,
    after: Option<&str>,
    detail: Detail,
) -> String {
    let mut out = String::new();
    match own {
        Some(t) => out.push_str(&fit(t, term.width)),
        None => {
            out.push_str(&super::table::preamble_detail(run, term, detail.verbose));
            out.push_str(&super::table::render_detail(run, term, detail.verbose));
        }
    }
    if detail.explain {
        out.push('\n');
        out.push_str(&definitions(run, term));
    }
    if let Some(t) = after {
        out.push_str(&fit(t, term.width));
    }
    out
}

/// The definitions (`--explain`), each paragraph word-wrapped to the terminal with a
/// hanging indent.
fn definitions(run: &Run, term: &Term) -> String {
    super::table::definitions(run)
        .lines()
        .map(|l| wrap(l, term.width, "", "  ") + "\n")
        .collect()
}
