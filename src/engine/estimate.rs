//! How long a plan will take, from the sampler's own plan and this machine's history.
//!
//! An item's bound is what the sampler's rounds allow it ([`sampler::plan`]: each round's
//! warm-up to its cap, its sampling to its deadline and one sample past it), or the item's
//! own estimate when it does not sample with the command's budget (fault, ctx timeslice,
//! mmap lab, noise). Items that converge early take a fraction of it, by how much depends on
//! the item and the host; so every run records each item's bound and actual wall time
//! (`Run::item_times`), and the next estimate of the same item on the same machine is its
//! bound times the median of the past actual/bound ratios. Without history the estimate is
//! the bound, and says so: not an upper limit of the whole item, whose set-up (partners,
//! working sets) and scaling come on top. The history is only read, and only when it exists.

use super::sampler::{self, Call, Deadline, RoundPlan, RoundSlot, SamplingConfig, ROUNDS};
use crate::model::ItemTime;
use std::collections::BTreeMap;
use std::time::Duration;

/// Time before the first item and after the last: clock calibration, machine facts, process
/// start and exit (0.15–0.2 s on a quiet machine).
pub const FIXED_S: f64 = 0.2;

/// Past runs of one item that an estimate uses at most (the most recent).
pub const HISTORY_RUNS: usize = 5;

/// Make-up rounds (engine::plan: a planned round that ran on a slowed core through is taken
/// again) take at most 1/this of the time the plan's passes took.
pub const MAKE_UP_SHARE: u32 = 10;

/// The make-up rounds' own entry in a run's item times (they are not any one item's time).
pub const MAKE_UP_LABEL: &str = "make-up rounds";

/// Share of the make-up allowance expected before this machine's history says: between a
/// steady host (none) and an unsteady one (about the whole allowance).
pub const MAKE_UP_PRIOR: f64 = 0.5;

/// How an item samples: its rounds spread across the plan (one call per round, the default)
/// or all in one call (an item that runs once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Spread,
    Once,
}

/// The longest the sampler takes over `rounds` (one call) when one sample, raw and baseline
/// together, takes `batch_s`: scaling (about a sample), each round's warm-up (its floor, or
/// the two windows of batches the steadiness test needs, within its cap: a workload that
/// never settles warms up to the cap, a rare case a bound to the cap would make the rule),
/// its sampling to its deadline (at least three samples) or its sample limit (with its
/// evidence samples), whichever comes first, and one sample past the deadline.
pub fn call_bound_s(rounds: &[RoundPlan], batch_s: f64) -> f64 {
    let s = |ns: u64| ns as f64 / 1e9;
    let warm_batch = batch_s / sampler::WARM_BATCH_SHARE as f64;
    let steady = (2 * sampler::WARM_WINDOW) as f64 * warm_batch;
    let mut t = batch_s;
    for r in rounds {
        let (floor, cap) = (s(r.warm.0), s(r.warm.1.max(r.warm.0)));
        t += floor.max(steady).min(cap) + warm_batch;
        let deadline = match r.deadline {
            Deadline::FromCall(d) => s(d),
            Deadline::AfterWarmUp(d) => t + s(d),
        };
        let least = t + r.limits.min_samples.min(3) as f64 * batch_s;
        let by_count = t + (r.limits.max_samples + sampler::EVIDENCE_PER_ROUND) as f64 * batch_s;
        t = (deadline.max(least) + batch_s).min(by_count);
    }
    t
}

/// The bound of one item that samples with `cfg` ([`call_bound_s`] over its calls), a sample
/// lasting the configured target: [`ROUNDS`] calls of one round each when spread, one call
/// of every round when it runs once.
pub fn item_bound_s(cfg: &SamplingConfig, mode: Mode) -> f64 {
    let batch = cfg.target_sample_ns as f64 / 1e9;
    match mode {
        Mode::Once => call_bound_s(&sampler::plan(cfg, Call::Whole), batch),
        Mode::Spread => (0..ROUNDS as u32)
            .map(|index| {
                let slot = RoundSlot {
                    index,
                    of: ROUNDS as u32,
                };
                let call = Call::Round {
                    slot,
                    later: index > 0,
                    partners: false,
                };
                call_bound_s(&sampler::plan(cfg, call), batch)
            })
            .sum(),
    }
}

/// Past actual/bound ratios of each item label on one machine, most recent first.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct History {
    ratios: BTreeMap<String, Vec<f64>>,
}

impl History {
    /// From the item times of past runs, most recent run first; keeps [`HISTORY_RUNS`] per
    /// label and ignores unusable entries (a ratio of 0 is a reading: no make-up round).
    pub fn from_runs(runs: &[Vec<ItemTime>]) -> History {
        let mut ratios: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for t in runs.iter().flatten() {
            let r = t.elapsed_s / t.expected_s;
            let v = ratios.entry(t.label.clone()).or_default();
            if r.is_finite() && r >= 0.0 && v.len() < HISTORY_RUNS {
                v.push(r);
            }
        }
        ratios.retain(|_, v| !v.is_empty());
        History { ratios }
    }

    /// The median past ratio for a label and how many runs it comes from.
    fn ratio(&self, label: &str) -> Option<(f64, usize)> {
        let mut s = self.ratios.get(label)?.clone();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        Some(((s[(n - 1) / 2] + s[n / 2]) / 2.0, n))
    }
}

/// One plan item as the estimate sees it: its label (its history's key), its own estimate
/// when it has one, how it samples and with what.
pub struct ItemShape<'a> {
    pub label: &'a str,
    pub own: Option<Duration>,
    pub mode: Mode,
    pub sampling: &'a SamplingConfig,
}

/// One item's estimate.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ItemEstimate {
    pub label: String,
    /// The item's bound (recorded with the actual time, for the next estimate).
    pub bound_s: f64,
    /// What is expected: the bound, corrected by this machine's history when there is one.
    pub expected_s: f64,
    /// Past runs the correction comes from (0: the bound alone).
    pub from_runs: usize,
}

/// An estimate of `bound` seconds, corrected by this machine's history of `label`.
fn corrected(label: &str, bound: f64, history: &History) -> ItemEstimate {
    let (ratio, n) = history.ratio(label).unwrap_or((1.0, 0));
    ItemEstimate {
        label: label.to_string(),
        bound_s: bound,
        expected_s: bound * ratio,
        from_runs: n,
    }
}

/// A plan's estimate: one per item, and the make-up rounds'.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanEstimate {
    pub items: Vec<ItemEstimate>,
    /// The make-up rounds: [`MAKE_UP_PRIOR`] of their allowance (a [`MAKE_UP_SHARE`]th of
    /// the spread items' time), corrected by this machine's past make-up time.
    pub make_up: ItemEstimate,
}

impl PlanEstimate {
    pub fn new<'a>(items: impl IntoIterator<Item = ItemShape<'a>>, history: &History) -> Self {
        let mut spread_s = 0.0;
        let items: Vec<ItemEstimate> = items
            .into_iter()
            .map(|i| {
                let bound = match i.own {
                    Some(d) => d.as_secs_f64(),
                    None => item_bound_s(i.sampling, i.mode),
                };
                let e = corrected(i.label, bound, history);
                if i.mode == Mode::Spread {
                    spread_s += e.expected_s;
                }
                e
            })
            .collect();
        let make_up_bound = spread_s / MAKE_UP_SHARE as f64 * MAKE_UP_PRIOR;
        PlanEstimate {
            items,
            make_up: corrected(MAKE_UP_LABEL, make_up_bound, history),
        }
    }

    pub fn total_s(&self) -> f64 {
        FIXED_S + self.make_up.expected_s + self.items.iter().map(|i| i.expected_s).sum::<f64>()
    }

    /// "N items to measure, about T s" (an item is one entry of the plan, which may give
    /// several measurements: the run's end counts those; tenths below 10 s: 1.4 s as "1 s" would be 30% off) and
    /// where it comes from: "from the last 3 runs" when every item has history (the fewest
    /// runs any item has), "k of N from past runs" when some do, "the budgets alone" when none.
    pub fn line(&self) -> String {
        let n = self.items.len();
        let total = self.total_s();
        let about = if total < 10.0 {
            format!("{total:.1}")
        } else {
            format!("{total:.0}")
        };
        let with = self.items.iter().filter(|i| i.from_runs > 0).count();
        let plural = |k: usize| if k == 1 { "" } else { "s" };
        let source = if n > 0 && with == n {
            let runs = self.items.iter().map(|i| i.from_runs).min().unwrap_or(0);
            format!(", from the last {runs} run{}", plural(runs))
        } else if with > 0 {
            format!(", {with} of {n} from past runs")
        } else if self.make_up.from_runs > 0 {
            // A history without these items still corrects the make-up rounds' allowance.
            ", make-up rounds from past runs".to_string()
        } else {
            // Not "at most": per-call set-up (partners, working sets), scaling and a loaded
            // host's make-up rounds come on top of the sampler's plan.
            " (the budgets alone: no past runs here)".to_string()
        };
        format!("{n} item{} to measure, about {about} s{source}", plural(n))
    }
}

/// The wall time of each item as it runs, for the run's `item_times`.
#[derive(Debug, Default)]
pub struct Timings {
    times: Vec<ItemTime>,
}

impl Timings {
    /// Record an item (or the make-up rounds) that took `elapsed` against its bound.
    pub fn record(&mut self, est: &ItemEstimate, elapsed: Duration) {
        self.times.push(ItemTime {
            label: est.label.clone(),
            expected_s: est.bound_s,
            elapsed_s: elapsed.as_secs_f64(),
        });
    }

    pub fn into_vec(self) -> Vec<ItemTime> {
        self.times
    }
}

#[cfg(test)]
mod tests;
