//! What a measuring command prints on stdout once it has measured, in one function, so the
//! commands print it and a test can render it from a recorded run at any width (every line
//! within the terminal's width: issue 21).

use super::term::{fit, wrap, Term};
use crate::model::Run;

/// A measuring command's stdout after measuring: its own report (`own`, the sweep and
/// memory-latency reports) or the clock line, machine warnings and table; the definitions
/// with `explain`; then its detail sections (`after`). Every line fits `term.width`: the
/// families lay their tables out for it, and their prose lines (warnings, notes) are
/// word-wrapped here.
pub fn measured(
    run: &Run,
    term: &Term,
    own: Option<&str>,
    after: Option<&str>,
    explain: bool,
) -> String {
    let mut out = String::new();
    match own {
        Some(t) => out.push_str(&fit(t, term.width)),
        None => {
            out.push_str(&super::table::preamble(run, term));
            out.push_str(&super::table::render_for(run, term));
        }
    }
    if explain {
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
