//! The observer's tax on a round trip: the same workload timed bare and with each kind of
//! evidence collection the recorder can do, so the choice of what runs inside the figure's
//! samples is evidence too.
//!
//! Why: software perf events attached to the partners run perf's hooks at every context
//! switch (1.5–2× a pipe round trip). Worse, closing them does not end the cost at once:
//! the kernel keeps its perf scheduling hooks switched on for a second after the last per-task
//! counter closes (`perf::HOOKS_LINGER_NS`), so a figure whose samples alternate with
//! counter-attached evidence samples pays the hooks on every switch (a few %, measured here as
//! [`Collector::Lingering`]). The pipe figure therefore takes no perf counters at all (its
//! evidence is rusage and procfs), starts once the hooks are off, and this pass, run after
//! it, times each collector.
//!
//! The pass has two phases: bare and procfs rounds (interleaved, hooks off), then rounds with
//! counters attached, each followed by a bare run while the hooks linger. Round r of each
//! phase is compared with bare round r: the phases are tens of ms apart.

use crate::engine::measure::{Context, Spec};
use crate::engine::sampler::Workload;
use crate::error::Result;
use crate::evidence::perf::EventSet;
use crate::evidence::recorder::Recorder;
use crate::evidence::Participant;
use crate::model::{EventReading, Measurement};
use crate::units::name::Word;
use std::collections::BTreeMap;

/// One kind of evidence collection around a timed sample, with the words its row shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
pub enum Collector {
    /// Nothing, perf hooks off: the reference.
    #[strum(serialize = "nothing")]
    Bare,
    /// procfs snapshots (stat, status, schedstat) of every participant before and after.
    #[strum(serialize = "procfs+schedstat reads around the sample")]
    Procfs,
    /// Software perf events (context switches, migrations, faults, task clock) attached.
    #[strum(serialize = "perf software events attached")]
    PerfSoftware,
    /// Software plus hardware perf events attached (where the PMU has them).
    #[strum(serialize = "perf software+hardware events attached")]
    PerfStandard,
    /// Nothing attached, but within a second of counters closing: the kernel's perf
    /// scheduling hooks are still on.
    #[strum(serialize = "nothing attached, perf hooks still on (<1 s after closing)")]
    Lingering,
}

impl Collector {
    /// Bare first: `times[r][k]` is indexed in this order.
    pub const ALL: [Collector; 5] = [
        Collector::Bare,
        Collector::Procfs,
        Collector::PerfSoftware,
        Collector::PerfStandard,
        Collector::Lingering,
    ];

    /// Whether the figure's samples carry this collector's cost.
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
pub fn ratios(times: &[[u64; 5]]) -> Vec<Tax> {
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

/// What the pass found: the taxes, and the perf counts of its software-events rounds (the
/// figure's own samples carry none).
pub struct TaxPass {
    pub taxes: Vec<Tax>,
    pub perf_events: BTreeMap<String, EventReading>,
}

/// Time `work(iters)` under every collector, `rounds` times (see the module doc for the
/// order). The caller starts it with the perf hooks off ([`wait_for_hooks_off`]).
pub fn measure_tax(
    participants: &[Participant],
    work: &mut Workload<'_>,
    iters: u64,
    rounds: usize,
) -> Result<TaxPass> {
    let mut times = vec![[0u64; 5]; rounds];
    // Phase 1, hooks off: bare and procfs, alternating which goes first.
    for (r, t) in times.iter_mut().enumerate() {
        crate::engine::interrupt::check()?;
        for i in 0..2 {
            let k = (i + r) % 2;
            t[k] = if k == 0 {
                work(iters)?
            } else {
                let mut rec = Recorder::new(participants.to_vec(), EventSet::Software);
                rec.begin_quiet();
                let x = work(iters)?;
                rec.end_quiet(iters);
                x
            };
        }
    }
    // Phase 2: counters attached (alternating which set goes first), then a bare run while
    // the hooks linger. The software rounds' counts are kept as the probe's perf evidence.
    let mut software = Recorder::new(participants.to_vec(), EventSet::Software);
    for (r, t) in times.iter_mut().enumerate() {
        crate::engine::interrupt::check()?;
        for i in 0..2 {
            let k = 2 + (i + r) % 2;
            t[k] = if k == 2 {
                software.begin();
                let x = work(iters)?;
                software.end(iters);
                x
            } else {
                let mut rec = Recorder::new(participants.to_vec(), EventSet::Standard);
                rec.begin();
                let x = work(iters)?;
                rec.end(iters);
                x
            };
        }
        t[4] = work(iters)?;
    }
    Ok(TaxPass {
        taxes: ratios(&times),
        perf_events: software.finish(&[]).events,
    })
}

/// Samples of a counts pass ([`counts_pass`]), with perf counters attached.
pub const COUNTED_SAMPLES: usize = 4;

/// The perf counts of a hook-free figure: the standard counters attached to `participants`
/// around [`COUNTED_SAMPLES`] samples of `work` at the figure's sample length, after one
/// untimed sample, taken after all the figure's samples (the figure attaches none, see the
/// module doc). Their counts become `m`'s perf evidence, and a note says how much longer an
/// iteration took there than in the figure's samples; the checks stay those of the figure's
/// own windows (rusage, procfs, placement).
pub fn counts_pass(
    participants: &[Participant],
    start_cpus: &[Option<usize>],
    work: &mut Workload<'_>,
    m: &mut Measurement,
) -> Result<()> {
    let who = (participants, start_cpus);
    counts_pass_of(who, (EventSet::Standard, "partner"), work, m)
}

/// [`counts_pass`] of `events`, its note naming what was `restarted` for it.
pub fn counts_pass_of(
    (participants, start_cpus): (&[Participant], &[Option<usize>]),
    (events, restarted): (EventSet, &str),
    work: &mut Workload<'_>,
    m: &mut Measurement,
) -> Result<()> {
    let iters = m.iterations_per_sample.max(1);
    work(iters)?;
    let mut rec = Recorder::new(participants.to_vec(), events);
    let mut per_iter = Vec::with_capacity(COUNTED_SAMPLES);
    for _ in 0..COUNTED_SAMPLES {
        crate::engine::interrupt::check()?;
        rec.begin();
        let t = work(iters)?;
        rec.end(iters);
        per_iter.push(t as f64 / iters as f64);
    }
    m.evidence.events = rec.finish(start_cpus).events;
    per_iter.sort_by(f64::total_cmp);
    let with = (per_iter[COUNTED_SAMPLES / 2 - 1] + per_iter[COUNTED_SAMPLES / 2]) / 2.0;
    let slower = with / m.raw.median - 1.0;
    let what = m.raw_unit.per().map_or("iteration", |p| p.name());
    m.notes.push(format!(
        "perf counts come from {COUNTED_SAMPLES} samples of {iters} {what}s with counters \
         attached, taken after all the figure's samples with the {restarted} started again (a \
         {what} took {:+.0}% there against the figure's raw median); the figure's samples \
         attach none and its checks read rusage, procfs and placement in its own windows",
        slower * 100.0
    ));
    Ok(())
}

/// Wait until the kernel's perf scheduling hooks are off, i.e. until `HOOKS_LINGER_NS` after
/// this process last closed counters, but at most `max_ns`. Returns (ns waited, ns the hooks
/// still had to go when the wait ended): (0, 0) when they were already off or counters were
/// never opened here.
pub fn wait_for_hooks_off(max_ns: u64) -> Result<(u64, u64)> {
    let linger = crate::evidence::perf::HOOKS_LINGER_NS;
    let Some(age) = crate::evidence::perf::since_last_close_ns() else {
        return Ok((0, 0));
    };
    let needed = linger.saturating_sub(age);
    let wait = needed.min(max_ns);
    let mut left = wait;
    while left > 0 {
        crate::engine::interrupt::check()?;
        let step = left.min(50_000_000);
        std::thread::sleep(std::time::Duration::from_nanos(step));
        left -= step;
    }
    Ok((wait, needed - wait))
}

/// Before a hook-free figure's samples: wait until the kernel's perf hooks are off, at most
/// this call's share of the sampling budget, and say in a note of `spec` what the wait did
/// (none where they were off). The plan runs hook-free items before any that open counters,
/// so inside a run only the first call can find them on, and only after a command's own
/// counters.
pub fn quiet_hooks(ctx: &Context, spec: Spec) -> Result<Spec> {
    let share = ctx.sampling.budget_ns / ctx.round.map_or(1, |r| r.of.max(1)) as u64;
    let (waited, left) = wait_for_hooks_off(share)?;
    Ok(if waited > 0 || left > 0 {
        spec.note(hooks_note(waited, left))
    } else {
        spec
    })
}

/// A figure taken with `EventSet::None`: the sampler's evidence samples attached nothing, so
/// they are not "with perf counters" samples; dropped with the engine's note about them
/// (which a merge of rounds would otherwise derive again from them).
pub fn drop_counterless_evidence(m: &mut Measurement) {
    m.evidence_samples.clear();
    m.notes
        .retain(|n| !n.starts_with("with perf counters attached"));
}

/// What the wait for the perf hooks did, for the notes.
fn hooks_note(waited: u64, left: u64) -> String {
    let w = waited as f64 / 1e6;
    if left == 0 {
        format!(
            "waited {w:.0} ms before sampling for the kernel's perf scheduling hooks to switch \
             off (counters had closed less than 1 s earlier)"
        )
    } else {
        format!(
            "waited {w:.0} ms (this round's budget) for the kernel's perf scheduling hooks to \
             switch off; they stayed on for about the first {:.0} ms of sampling (another \
             probe's counters had just closed), adding a few % to those samples",
            left as f64 / 1e6
        )
    }
}

/// The note shown with `--explain` and kept in the JSON.
pub fn note(what: &str, taxes: &[Tax]) -> String {
    let parts: Vec<String> = taxes
        .iter()
        .map(|t| {
            let (lo, hi) = t.range();
            format!(
                "{} {:.2}× ({:.2}–{:.2}){}",
                t.collector.word(),
                t.median(),
                lo,
                hi,
                if t.collector.in_timed_path() {
                    ", in the figure's samples"
                } else {
                    ", kept out of the figure"
                }
            )
        })
        .collect();
    let rounds = taxes.first().map(|t| t.ratios.len()).unwrap_or(0);
    format!(
        "observer tax on the {what} (time with ÷ without, median and range of {rounds} \
         rounds, after the figure's samples): {}. The figure's samples attach no perf \
         counters (evidence: rusage, procfs, CPU clocks) and start once the kernel's perf \
         hooks are off, 1 s after any counter closes; the perf counts shown come from this \
         pass's software-events rounds.",
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::name::tests::assert_words;

    #[test]
    fn each_collector_has_its_own_words() {
        let words = [
            "nothing",
            "procfs+schedstat reads around the sample",
            "perf software events attached",
            "perf software+hardware events attached",
            "nothing attached, perf hooks still on (<1 s after closing)",
        ];
        assert_words(&Collector::ALL.into_iter().zip(words).collect::<Vec<_>>());
    }

    #[test]
    fn ratios_are_against_the_same_rounds_bare_time() {
        let t = ratios(&[
            [100, 101, 130, 150, 104],
            [200, 200, 250, 300, 206],
            [0, 5, 5, 5, 5],
        ]);
        assert_eq!(t.len(), 4);
        assert_eq!(t[3].collector, Collector::Lingering);
        assert_eq!(t[3].ratios, vec![1.04, 1.03]);
        assert_eq!(t[0].collector, Collector::Procfs);
        // The round with no bare time is dropped, not divided by zero.
        assert_eq!(t[1].ratios, vec![1.3, 1.25]);
        assert!((t[1].median() - 1.275).abs() < 1e-12);
        assert_eq!(t[2].range(), (1.5, 1.5));
    }

    #[test]
    fn a_workload_slowed_by_nothing_has_no_tax_and_the_note_says_where_each_runs() {
        let mut w = |iters: u64| -> Result<u64> { Ok(iters * 10) };
        let pass = measure_tax(&[], &mut w, 1000, 3).unwrap();
        let taxes = pass.taxes;
        assert_eq!(taxes.len(), 4);
        assert!(taxes.iter().all(|t| t.ratios == vec![1.0; 3]));
        let n = note("round trip", &taxes);
        assert!(n.contains("3 rounds"), "{n}");
        assert!(n.contains("perf software events attached 1.00× (1.00–1.00), kept out"));
        assert!(n.contains("procfs+schedstat reads around the sample 1.00×"));
        assert!(n.contains("perf hooks still on"), "{n}");
    }

    #[test]
    fn phases_alternate_their_order_and_the_lingering_run_follows_the_counters() {
        let mut calls = Vec::new();
        let mut w = |iters: u64| -> Result<u64> {
            calls.push(iters);
            Ok(iters + calls.len() as u64)
        };
        let taxes = measure_tax(&[], &mut w, 7, 4).unwrap().taxes;
        assert_eq!(calls.len(), 20);
        // Later calls take longer here, so a fixed order would bias every ratio one way;
        // alternated, some rounds read above 1 and some below.
        let t = &taxes[0];
        assert!(t.ratios.iter().any(|&r| r > 1.0) && t.ratios.iter().any(|&r| r < 1.0));
        // The lingering run always comes right after the attached ones.
        assert!(taxes[3].ratios.iter().all(|&r| r > 1.0));
    }

    #[test]
    fn the_wait_ends_when_the_hooks_are_off() {
        // Stamp a close now (recorded counters, no PMU needed), then wait.
        let opener = &mut |_: crate::evidence::perf::EventInfo, _: i32| {
            Ok((
                Box::new(NoCounter) as Box<dyn crate::evidence::perf::ReadCounter>,
                None,
            ))
        };
        let mut set = crate::evidence::perf::PerfSet::open_with(&[1], EventSet::Software, opener);
        set.close();
        // A short cap: the wait stops there and says how much was left.
        let (waited, left) = wait_for_hooks_off(1_000_000).unwrap();
        assert_eq!(waited, 1_000_000);
        assert!(left > 0);
        let (waited, left) = wait_for_hooks_off(u64::MAX).unwrap();
        assert!(waited > 0);
        assert_eq!(left, 0);
        let age = crate::evidence::perf::since_last_close_ns().unwrap();
        assert!(age >= crate::evidence::perf::HOOKS_LINGER_NS, "{age}");
        // Already off: no second wait.
        assert_eq!(wait_for_hooks_off(u64::MAX).unwrap(), (0, 0));
    }

    struct NoCounter;
    impl crate::evidence::perf::ReadCounter for NoCounter {
        fn read(&mut self) -> std::io::Result<(u64, u64, u64)> {
            Ok((0, 0, 0))
        }
    }
}
