//! The observer's tax on a round trip: the same workload timed bare and with each kind of
//! evidence collection the recorder can do, interleaved round by round so drift cancels.
//!
//! Why: software perf events attached to the partners run perf's hooks at every context
//! switch, which made a pipe round trip about 20–30% slower than `perf bench sched pipe`
//! reads. The figure therefore comes from samples with only procfs reads around them (outside
//! the timed region), perf counters are attached in separate evidence samples, and this pass
//! puts a number on what each kind would have cost, so the choice is evidence too.

use crate::engine::sampler::Workload;
use crate::error::Result;
use crate::evidence::perf::EventSet;
use crate::evidence::recorder::Recorder;
use crate::evidence::Participant;

/// One kind of evidence collection around a timed sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collector {
    /// Nothing: the reference.
    Bare,
    /// procfs snapshots (stat, status, schedstat) of every participant before and after.
    Procfs,
    /// Software perf events (context switches, migrations, faults, task clock) attached.
    PerfSoftware,
    /// Software plus hardware perf events attached (where the PMU has them).
    PerfStandard,
}

impl Collector {
    pub const ALL: [Collector; 4] = [
        Collector::Bare,
        Collector::Procfs,
        Collector::PerfSoftware,
        Collector::PerfStandard,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Collector::Bare => "nothing",
            Collector::Procfs => "procfs+schedstat reads around the sample",
            Collector::PerfSoftware => "perf software events attached",
            Collector::PerfStandard => "perf software+hardware events attached",
        }
    }

    /// Whether the figure's samples carry this collector (the others run in separate
    /// evidence samples whose time is kept apart).
    pub fn in_timed_path(self) -> bool {
        matches!(self, Collector::Bare | Collector::Procfs)
    }
}

/// The measured tax of one collector: ratios (with / without) of the rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Tax {
    pub collector: Collector,
    pub ratios: Vec<f64>,
}

impl Tax {
    /// Median ratio with / without.
    pub fn median(&self) -> f64 {
        let mut v = self.ratios.clone();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }

    pub fn range(&self) -> (f64, f64) {
        let lo = self.ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = self
            .ratios
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    }
}

/// Per-round ratios from per-round timings: `times[r][k]` is round r's time under
/// `Collector::ALL[k]`; each collector's ratio is against the same round's bare time.
pub fn ratios(times: &[[u64; 4]]) -> Vec<Tax> {
    Collector::ALL
        .iter()
        .enumerate()
        .skip(1)
        .map(|(k, &c)| Tax {
            collector: c,
            ratios: times
                .iter()
                .filter(|t| t[0] > 0)
                .map(|t| t[k] as f64 / t[0] as f64)
                .collect(),
        })
        .collect()
}

/// Time `work(iters)` under every collector, `rounds` times, rotating the order inside each
/// round so no collector always runs first.
pub fn measure_tax(
    participants: &[Participant],
    work: &mut Workload<'_>,
    iters: u64,
    rounds: usize,
) -> Result<Vec<Tax>> {
    let mut times = Vec::with_capacity(rounds);
    for r in 0..rounds {
        crate::engine::interrupt::check()?;
        let mut t = [0u64; 4];
        for i in 0..4 {
            let k = (i + r) % 4;
            t[k] = match Collector::ALL[k] {
                Collector::Bare => work(iters)?,
                Collector::Procfs => {
                    let mut rec = Recorder::new(participants.to_vec(), EventSet::Software);
                    rec.begin_quiet();
                    let x = work(iters)?;
                    rec.end_quiet(iters);
                    x
                }
                c => {
                    let set = if c == Collector::PerfSoftware {
                        EventSet::Software
                    } else {
                        EventSet::Standard
                    };
                    let mut rec = Recorder::new(participants.to_vec(), set);
                    rec.begin();
                    let x = work(iters)?;
                    rec.end(iters);
                    x
                }
            };
        }
        times.push(t);
    }
    Ok(ratios(&times))
}

/// The note shown with `--explain` and kept in the JSON.
pub fn note(what: &str, taxes: &[Tax]) -> String {
    let parts: Vec<String> = taxes
        .iter()
        .map(|t| {
            let (lo, hi) = t.range();
            format!(
                "{} {:.2}× ({:.2}–{:.2}){}",
                t.collector.label(),
                t.median(),
                lo,
                hi,
                if t.collector.in_timed_path() {
                    ", in the figure's samples"
                } else {
                    ", evidence samples only"
                }
            )
        })
        .collect();
    let rounds = taxes.first().map(|t| t.ratios.len()).unwrap_or(0);
    format!(
        "observer tax on the {what} (time with ÷ without, interleaved, median and range of \
         {rounds} rounds): {}.",
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_against_the_same_rounds_bare_time() {
        let t = ratios(&[[100, 101, 130, 150], [200, 200, 250, 300], [0, 5, 5, 5]]);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].collector, Collector::Procfs);
        // The round with no bare time is dropped, not divided by zero.
        assert_eq!(t[1].ratios, vec![1.3, 1.25]);
        assert!((t[1].median() - 1.275).abs() < 1e-12);
        assert_eq!(t[2].range(), (1.5, 1.5));
    }

    #[test]
    fn a_workload_slowed_by_nothing_has_no_tax_and_the_note_says_where_each_runs() {
        let mut w = |iters: u64| -> Result<u64> { Ok(iters * 10) };
        let taxes = measure_tax(&[], &mut w, 1000, 3).unwrap();
        assert_eq!(taxes.len(), 3);
        assert!(taxes.iter().all(|t| t.ratios == vec![1.0; 3]));
        let n = note("round trip", &taxes);
        assert!(n.contains("3 rounds"), "{n}");
        assert!(n.contains("perf software events attached 1.00× (1.00–1.00), evidence"));
        assert!(n.contains("procfs+schedstat reads around the sample 1.00×"));
    }

    #[test]
    fn the_rotation_puts_every_collector_first_once_per_four_rounds() {
        let mut calls = Vec::new();
        let mut w = |iters: u64| -> Result<u64> {
            calls.push(iters);
            Ok(iters + calls.len() as u64)
        };
        let taxes = measure_tax(&[], &mut w, 7, 4).unwrap();
        assert_eq!(calls.len(), 16);
        // Later calls take longer here, so a fixed order would bias every ratio one way;
        // rotated, some rounds read above 1 and some below.
        let t = &taxes[0];
        assert!(t.ratios.iter().any(|&r| r > 1.0) && t.ratios.iter().any(|&r| r < 1.0));
    }
}
