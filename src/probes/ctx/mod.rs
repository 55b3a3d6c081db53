//! Same-core context switches: two partners pinned to one CPU pass control back and forth.
//! Every mechanism states the switches it expects per round trip and checks them.

pub mod anatomy;
pub mod anatomy_regs;
pub mod anatomy_task;
pub mod anatomy_trace;
pub mod futex;
pub mod interleave;
pub mod pipe;
pub mod ring;
pub mod sweep;
pub mod tax;
pub mod timeslice;
pub mod yield_;

use crate::engine::checks;
use crate::engine::measure::Verdict;
use crate::model::Evidence;

/// Partners as two processes or two threads of one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    Process,
    Thread,
}

/// The switching mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mech {
    Pipe,
    Futex,
    Yield,
}

/// How a pipe round trip is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockMethod {
    /// Time the round trips on CLOCK_MONOTONIC_RAW and subtract the in-process pipe cost.
    Direct,
    /// CMPT300's method: wall time minus the measuring process's CPU time.
    Cputime,
}

crate::units::name::named!(Mode, Mech, ClockMethod);

/// The checks every same-core ping-pong shares: the expected number of switches per round
/// trip (±5%), no migrations, and every participant on the requested CPU.
pub fn same_core_verdict(ev: &Evidence, expected_switches: f64, what: &str) -> Verdict {
    let (sw, _) = checks::switches_per_op(ev);
    let c = checks::switches_near(
        &format!("context switches per {what}"),
        expected_switches,
        0.05,
        ev,
    );
    let mut warnings = Vec::new();
    let it = ev.rusage.iterations.max(1) as f64;
    let vol = ev.rusage.total.nvcsw as f64 / it;
    let invol = ev.rusage.total.nivcsw as f64 / it;
    if sw < 0.5 * expected_switches {
        warnings.push(crate::model::Remark::few_switches(what, sw));
    }
    // A woken partner that preempts the waker makes one of the two switches involuntary;
    // more than one involuntary switch per round trip means other tasks competed for the CPU.
    if what != "yield" && invol > 1.1 {
        warnings.push(crate::model::Remark::involuntary_switches(what, invol, vol));
    }
    let mut checks = vec![
        c,
        checks::no_migrations(ev),
        checks::placement(&ev.cpus),
        checks::same_cpu(&ev.cpus),
    ];
    // Partners that ended up on two CPUs (the same-CPU check fails them) idle while they
    // wait for each other's cross-CPU wake-ups: that is not others holding the CPU.
    let holding = super::holding(!checks.last().is_some_and(|c| c.ok));
    checks::add_occupancy_with(ev, holding, &mut checks, &mut warnings);
    (checks, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Placement;

    /// Two partners pinned to CPU 0 and seen there, `sw` switches per round trip by rusage.
    fn evidence(sw: u64) -> Evidence {
        let mut ev = Evidence {
            occupancy: checks::held_occupancy(),
            ..Default::default()
        };
        ev.rusage.iterations = 1000;
        ev.rusage.total.nvcsw = sw * 1000;
        ev.cpus = ["a", "b"]
            .iter()
            .map(|r| Placement {
                role: r.to_string(),
                requested: vec![0],
                start: Some(0),
                end: Some(0),
                affinity_held: true,
                ..Default::default()
            })
            .collect();
        ev
    }

    fn failed(v: &Verdict) -> Vec<String> {
        v.0.iter()
            .filter(|c| !c.ok)
            .map(crate::report::checks::name)
            .collect()
    }

    #[test]
    fn same_core_verdict_passes_two_switches_and_fails_one() {
        assert!(failed(&same_core_verdict(&evidence(2), 2.0, "round trip")).is_empty());
        let v = same_core_verdict(&evidence(1), 2.0, "round trip");
        assert_eq!(failed(&v), ["context switches per round trip"]);
        let v = same_core_verdict(&evidence(0), 2.0, "round trip");
        assert!(v
            .1
            .iter()
            .any(|w| crate::report::remarks::words(w).contains("almost no switches")));
    }

    #[test]
    fn same_core_verdict_fails_partners_on_two_cpus() {
        let mut ev = evidence(2);
        ev.cpus[1].start = Some(1);
        ev.cpus[1].end = Some(1);
        let v = same_core_verdict(&ev, 2.0, "round trip");
        assert!(failed(&v).iter().any(|n| n == "same CPU"), "{:?}", v.0);
        assert!(failed(&v).iter().any(|n| n == "placement"), "{:?}", v.0);
    }
}
