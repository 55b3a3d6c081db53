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
            out.push_str(&in_cycles(run, term));
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

/// The figures of `run` shorter than [`super::cycles::BELOW`] cycles of the core clock the
/// run estimated, in cycles, word-wrapped; empty when the run has no estimate or no such
/// figure.
pub fn in_cycles(run: &Run, term: &Term) -> String {
    let text = super::cycles::line(run);
    if text.is_empty() {
        return text;
    }
    wrap(&text, term.width, "", "  ") + "\n"
}

#[cfg(test)]
mod cycles_tests {
    use super::*;

    #[test]
    fn short_figures_are_also_given_in_cycles_when_the_clock_is_known() {
        let mut run =
            crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
                .unwrap();
        let term = Term::plain(80);
        assert_eq!(in_cycles(&run, &term), "", "no estimate, no cycles");
        run.machine.core_clock.ghz = Some(4.0);
        let line = in_cycles(&run, &term);
        assert!(line.starts_with("in cycles of the 4.00 GHz"), "{line}");
        // 0.73 ns and 21.7 ns are 2.9 and 87 cycles; 135 ns (540 cycles) and a switch are
        // not listed.
        assert!(line.contains("call.function 2.9"), "{line}");
        assert!(line.contains("vdso.clock_gettime 8"), "{line}");
        assert!(
            !line.contains("syscall.null") && !line.contains("ctx."),
            "{line}"
        );
        assert!(line.lines().all(|l| l.chars().count() <= 80), "{line}");
    }
}
