//! Figures shorter than about [`BELOW`] cycles of the run's core clock are also given in
//! cycles: below it a nanosecond count says little until the clock is known. One typed value
//! ([`Cycles`]) per figure, made here from the measurement and the run's clock estimate, and
//! written by every view (the terminal's line under the table, the HTML value cell, the
//! Markdown value cell) by the units' one precision rule.

use crate::machine::clock::CoreClock;
use crate::model::{Measurement, Run, Status};
use crate::units::Unit;

/// Figures shorter than this many cycles are also given in cycles.
pub const BELOW: f64 = 100.0;

/// A figure in cycles of the core clock: its median and 95% interval, and the clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cycles {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    /// The clock estimate the figure was converted with, in GHz.
    pub ghz: f64,
}

impl Cycles {
    /// `m`'s figure in cycles of `clock`: a valid, stable time per operation shorter than
    /// [`BELOW`] cycles, when the run estimated its clock; None otherwise.
    pub fn of(clock: &CoreClock, m: &Measurement) -> Option<Cycles> {
        let ghz = clock.ghz.filter(|g| g.is_finite() && *g > 0.0)?;
        if !m.valid || m.status != Status::Ok || !m.unit.is_time_per_op() {
            return None;
        }
        let v = m.value.as_ref()?;
        let [lo, hi] = v.ci95;
        if crate::units::interval::is_unstable(v.median, lo, hi) {
            return None;
        }
        let c = Cycles {
            median: v.median * ghz,
            lo: lo * ghz,
            hi: hi * ghz,
            ghz,
        };
        (c.median > 0.0 && c.median < BELOW).then_some(c)
    }

    /// The figure alone, no more precise than its interval: "2.9", "87".
    pub fn figure(&self) -> String {
        crate::units::interval::fmt_figure_alone(self.median, self.lo, self.hi, &Unit::Bare)
    }

    /// The figure and its unit: "2.9 cycles".
    pub fn with_unit(&self) -> String {
        format!("{} cycles", self.figure())
    }
}

/// The measurements of `run` given in cycles, in the run's order, each with its value.
pub fn in_run(run: &Run) -> Vec<(&Measurement, Cycles)> {
    run.measurements
        .iter()
        .filter_map(|m| Cycles::of(&run.machine.core_clock, m).map(|c| (m, c)))
        .collect()
}

/// The sentence that says which clock the cycles are of, once per view.
pub fn clock_note(ghz: f64) -> String {
    format!("in cycles of the {ghz:.2} GHz core clock (a dependent-add chain; `oscost machine`)")
}

/// The figures of `run` in cycles as one line for the terminal: the clock, then each
/// figure's probe (and the case that tells it from its peers) and its cycles; empty when
/// the run has no estimate or no such figure.
pub fn line(run: &Run) -> String {
    let figures = in_run(run);
    let Some((_, first)) = figures.first() else {
        return String::new();
    };
    let parts: Vec<String> = figures
        .iter()
        .map(|(m, c)| {
            let peers: Vec<&Measurement> = run
                .measurements
                .iter()
                .filter(|p| p.probe == m.probe)
                .collect();
            let case = super::params::distinguishing(m, &peers);
            if case.is_empty() {
                format!("{} {}", m.probe, c.figure())
            } else {
                format!("{} {case} {}", m.probe, c.figure())
            }
        })
        .collect();
    format!("{}: {}", clock_note(first.ghz), parts.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Run {
        crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap()
    }

    #[test]
    fn no_clock_estimate_no_cycles() {
        let run = run();
        assert!(in_run(&run).is_empty());
        assert_eq!(line(&run), "");
    }

    #[test]
    fn short_valid_figures_are_in_cycles_at_their_intervals_precision() {
        let mut run = run();
        run.machine.core_clock.ghz = Some(4.0);
        let got = in_run(&run);
        let call = got
            .iter()
            .find(|(m, _)| m.is(crate::probes::call::FUNCTION))
            .expect("0.73 ns is 2.9 cycles at 4 GHz");
        assert!((call.1.median - 4.0 * call.0.value.as_ref().unwrap().median).abs() < 1e-9);
        assert_eq!(call.1.with_unit(), format!("{} cycles", call.1.figure()));
        // 135 ns (540 cycles) is not listed; nor is an invalid or unstable figure.
        for (m, c) in &got {
            assert!(c.median < BELOW, "{}", m.probe);
            assert!(m.valid && m.status == Status::Ok, "{}", m.probe);
        }
        assert!(!got
            .iter()
            .any(|(m, _)| m.is(crate::probes::syscall::Syscall::Null.probe_id())));
        let l = line(&run);
        assert!(l.starts_with("in cycles of the 4.00 GHz"), "{l}");
        assert!(l.contains("call.function 2.92 "), "{l}");
    }

    #[test]
    fn an_invalid_or_long_figure_is_not_in_cycles() {
        let mut run = run();
        run.machine.core_clock.ghz = Some(4.0);
        let i = run
            .measurements
            .iter()
            .position(|m| m.is(crate::probes::call::FUNCTION))
            .unwrap();
        run.measurements[i].valid = false;
        assert!(Cycles::of(&run.machine.core_clock, &run.measurements[i]).is_none());
        run.measurements[i].valid = true;
        run.machine.core_clock.ghz = Some(400.0);
        assert!(
            Cycles::of(&run.machine.core_clock, &run.measurements[i]).is_none(),
            "0.73 ns at 400 GHz is 290 cycles"
        );
    }
}
