//! A run as a Markdown table (for `export --format markdown`): the headline figures with
//! their status, ready to paste into a lab report or an issue.

use crate::escape::{markdown as cell, markdown_code as code};
use crate::model::{Run, Status};
use crate::report::table::{headline, raw_baseline};

pub fn run_to_markdown(run: &Run) -> String {
    let mut o = format!(
        "## oscost run: {}\n\nstarted {} · oscost {} · {}\n\n",
        cell(&run.machine.short_name()),
        cell(&run.started_at),
        cell(&run.tool_version),
        code(&run.command.join(" "))
    );
    let own = crate::report::remarks::all_words(&run.warnings);
    for w in run.machine.warnings().iter().chain(&own) {
        o.push_str(&format!("> ⚠ {}\n", cell(w)));
    }
    o.push_str("\n| probe | parameters | value (± 95% CI) | raw / baseline | status |\n|---|---|--:|---|---|\n");
    for m in &run.measurements {
        let status = if !m.valid || m.status == Status::Invalid {
            format!("invalid: {}", super::checks::invalid_reason(m))
        } else if m.status == Status::BelowResolution {
            "below resolution".into()
        } else {
            "ok".into()
        };
        o.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            code(&m.probe),
            cell(&m.params_label()),
            cell(&with_cycles(run, m)),
            cell(&raw_baseline(m)),
            cell(&status)
        ));
    }
    if let Some((_, c)) = super::cycles::in_run(run).first() {
        o.push_str(&format!(
            "\nFigures marked \"= N cycles\" are {}.\n",
            cell(&super::cycles::clock_note(c.ghz))
        ));
    }
    let derived: Vec<String> = super::FAMILIES
        .iter()
        .flat_map(|f| f.derived(run))
        .collect();
    if !derived.is_empty() {
        o.push_str("\nDerived from the counts:\n\n");
        for d in derived {
            o.push_str(&format!("- {}\n", cell(&d)));
        }
    }
    o
}

/// The headline figure, and, when it is short, the same figure in cycles of the run's core
/// clock: "0.731 ±0.073 ns/call = 2.9 cycles".
fn with_cycles(run: &Run, m: &crate::model::Measurement) -> String {
    match super::cycles::Cycles::of(&run.machine.core_clock, m) {
        Some(c) => format!("{} = {}", headline(m), c.with_unit()),
        None => headline(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_measurement_and_invalid_says_why() {
        let run = crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
            .unwrap();
        let md = run_to_markdown(&run);
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| `")).count(),
            run.measurements.len()
        );
        assert!(md.contains("| invalid: "));
        assert!(!md.contains("core clock"), "no clock estimate, no cycles");
    }

    #[test]
    fn short_figures_also_read_in_cycles_when_the_clock_is_known() {
        let mut run =
            crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
                .unwrap();
        run.machine.core_clock.ghz = Some(4.0);
        let md = run_to_markdown(&run);
        let call = md
            .lines()
            .find(|l| l.starts_with("| `call.function`"))
            .unwrap();
        assert!(
            call.contains("0.731 +0.13/−0.011 ns/call = 2.92 cycles |"),
            "{call}"
        );
        let null = md
            .lines()
            .find(|l| l.starts_with("| `syscall.null`"))
            .unwrap();
        assert!(!null.contains("cycles"), "540 cycles is not short: {null}");
        assert!(
            md.contains("are in cycles of the 4.00 GHz core clock"),
            "{md}"
        );
    }
}
