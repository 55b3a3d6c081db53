//! How long a plan will take: the expected time of each item (not its upper bound), learned
//! from the history of this machine where there is one, and an honest ETA for the progress
//! bar.
//!
//! Why a model and not the budget: the engine's budget is an upper bound, and items that
//! converge early finish in a fraction of it (the deterministic pointer chase of `mem latency`
//! in a quarter, `syscall` in 60%). So each item kind has its expected share of the span
//! between the sampler's shortest possible run (minimum samples, then converged) and its
//! longest (the budget spent). That share depends on the host: on a quiet fast host items
//! converge early, on a noisy one they spend their budget (`run` took 18.0–19.4 s on the
//! first, 31.1–34.1 s on the second). So a probe declares both hosts' shares and
//! the model expects the geometric middle of the two times, whose worst error is the same
//! either way. Items that do not sample
//! with the command's budget (fault, ctx timeslice, mmap lab) bring their own estimate from a
//! model of their loop ([`sampler_span`] reproduces the sampler's structure for them).
//!
//! Why history: a model per kind cannot know this machine. Every run records each item's
//! expected and actual wall time (`Run::item_times`); the next estimate of the same item on
//! the same machine is the model's times the median of the past actual/expected ratios (with
//! unchanged options: the median of the past actual times). The history is only read, and
//! only when it exists.

use super::sampler::{SamplingConfig, ROUNDS};
use crate::model::ItemTime;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Time before the first item and after the last: clock calibration, machine facts, process
/// start and exit (0.15–0.2 s measured on the quiet 2-CPU VM).
pub const FIXED_S: f64 = 0.2;

/// Past runs of one item that an estimate uses at most (the most recent).
pub const HISTORY_RUNS: usize = 5;

/// Make-up rounds (cli::execute's `make_up`: a planned round that ran on a slowed core
/// through is taken again) take at most 1/this of the time the plan's passes took.
pub const MAKE_UP_SHARE: u32 = 10;

/// The make-up rounds' own entry in a run's item times (they are not any one item's time).
pub const MAKE_UP_LABEL: &str = "make-up rounds";

/// How long a sampler run lasts, shortest and longest, in seconds: `raw_s` and `baseline_s`
/// are the time of one raw and one baseline sample (baseline 0 without one); `setup_s` is
/// spent before sampling (partners, working sets, calibration). Reproduces the sampler's
/// structure (auto-scaling, warm-up until steady, [`ROUNDS`] rounds of at least 3 samples
/// each, every `cfg.evidence_every`th sample an extra one with counters, a short warm-up between
/// rounds): the shortest run converges at the minimum samples, the longest spends the budget
/// and stops at the first sample after each round's deadline.
pub fn sampler_span(cfg: &SamplingConfig, raw_s: f64, baseline_s: f64) -> (f64, f64) {
    (
        simulate(cfg, raw_s, baseline_s, true),
        simulate(cfg, raw_s, baseline_s, false),
    )
}

/// One pass of the sampler's loop in simulated time (see [`sampler_span`]).
fn simulate(cfg: &SamplingConfig, raw_s: f64, baseline_s: f64, converges: bool) -> f64 {
    let batch = (raw_s + baseline_s).max(1e-6);
    let budget = cfg.budget_ns as f64 / 1e9;
    let warmup = cfg.warmup_ns as f64 / 1e9;
    // Auto-scaling ends with about one raw sample's worth of work.
    let mut t = raw_s;
    // First warm-up: at least `warmup`, until two windows of 3 warm-up batches (a
    // sampler::WARM_BATCH_SHARE of a sample each) agree, at most a quarter of the budget (or
    // 4× the warm-up); one batch at least.
    let cap = (budget / 4.0).max(4.0 * warmup);
    let warm = warm_batch_s(batch);
    let steady = (6.0 * warm).max(warmup);
    let first = if converges { steady.min(cap) } else { cap };
    t += batches(first, warm) * warm;
    let min_r = cfg.min_samples.div_ceil(ROUNDS).max(3);
    let max_r = cfg.max_samples.div_ceil(ROUNDS).max(3);
    let mut taken = 0usize;
    for round in 0..ROUNDS {
        if round > 0 {
            t += batches(warmup / 4.0, batch) * batch;
        }
        let deadline = budget * (round + 1) as f64 / ROUNDS as f64;
        t = sample_until(
            t,
            &mut taken,
            deadline,
            raw_s,
            batch,
            (min_r, max_r, cfg.evidence_every),
            converges,
        );
    }
    t
}

/// Take one round's samples in simulated time from `t`: every `every`th is an
/// evidence sample (raw only, at most sampler::EVIDENCE_PER_ROUND); stop at the minimum when converging, at the maximum, or past
/// `deadline` once at least three are taken. Returns the time at the end.
fn sample_until(
    mut t: f64,
    taken: &mut usize,
    deadline: f64,
    raw_s: f64,
    batch: f64,
    (min_r, max_r, every): (usize, usize, usize),
    converges: bool,
) -> f64 {
    let (mut n, mut evidence) = (0usize, 0usize);
    loop {
        *taken += 1;
        if *taken % every.max(3) == 2 && evidence < super::sampler::EVIDENCE_PER_ROUND {
            evidence += 1;
            t += raw_s;
            continue;
        }
        t += batch;
        n += 1;
        if (converges && n >= min_r) || n >= max_r || (n >= min_r.min(3) && t >= deadline) {
            return t;
        }
    }
}

/// [`sampler_span`] for a measurement whose [`ROUNDS`] rounds are spread across the plan
/// (cli::execute runs it in passes, one call per round: engine::sampler::sample_round). Every
/// call scales, warms up (at least the warm-up, until steady, at most a quarter of its share
/// or twice the warm-up), then samples for its share of the budget, with its own evidence.
pub fn spread_span(
    cfg: &SamplingConfig,
    raw_s: f64,
    baseline_s: f64,
    partners: bool,
) -> (f64, f64) {
    // Only the first call scales (sampler::ScaleMemo): the later ones skip its sample's worth.
    // Without partners they also warm up for a shorter floor (sampler::round_warmup).
    let later = (ROUNDS - 1) as f64;
    let round = |converges, later| {
        let shape = RoundShape {
            converges,
            later,
            partners,
        };
        simulate_round(cfg, raw_s, baseline_s, shape)
    };
    let span = |converges| round(converges, false) + later * (round(converges, true) - raw_s);
    (span(true), span(false))
}

/// Which call of a spread measurement [`simulate_round`] models: one that converges at the
/// minimum samples (or spends its share), a later call (not the first), of a measurement
/// with partners (sampler::round_warmup).
#[derive(Debug, Clone, Copy)]
struct RoundShape {
    converges: bool,
    later: bool,
    partners: bool,
}

/// One call of a spread measurement in simulated time (see [`spread_span`]).
fn simulate_round(cfg: &SamplingConfig, raw_s: f64, baseline_s: f64, shape: RoundShape) -> f64 {
    let RoundShape {
        converges,
        later,
        partners,
    } = shape;
    let batch = (raw_s + baseline_s).max(1e-6);
    let share_ns = cfg.budget_ns / ROUNDS as u64;
    let share = share_ns as f64 / 1e9;
    let (floor, cap) = super::sampler::round_warmup(cfg, share_ns, later, partners);
    let (warmup, cap) = (floor as f64 / 1e9, cap as f64 / 1e9);
    let mut t = raw_s;
    let warm = warm_batch_s(batch);
    let first = if converges {
        (6.0 * warm).max(warmup).min(cap)
    } else {
        cap
    };
    t += batches(first, warm) * warm;
    let min_r = cfg.min_samples.div_ceil(ROUNDS).max(3);
    let max_r = cfg.max_samples.div_ceil(ROUNDS).max(3);
    let deadline = t + share;
    sample_until(
        t,
        &mut 0,
        deadline,
        raw_s,
        batch,
        (min_r, max_r, cfg.evidence_every),
        converges,
    )
}

/// Seconds of one warm-up batch (raw and baseline) when a sample's batch takes `batch`.
fn warm_batch_s(batch: f64) -> f64 {
    batch / super::sampler::WARM_BATCH_SHARE as f64
}

/// Whole batches that last at least `s` (one at least, as the sampler's loops run once).
fn batches(s: f64, batch: f64) -> f64 {
    (s / batch).ceil().max(1.0)
}

/// What an item of a probe takes beyond its samples, declared by the probe beside its code
/// (its `COST`), so the engine models every probe the same way and picks none by its label.
/// The figures were measured on the quiet 2-CPU VM (rounds back to back: call
/// 1.9 s of a 2.2 s budget, syscalls 1.3 s, ctx 1.8 s, ipc 1.9 s, rpc 1.6 s; with --quick,
/// ctx sweep points 0.26 s of 0.42 s, mem latency points 0.14 s; c2c from the busy VM with
/// rounds spread, 1.6 s); each probe's constant says what it adds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Share of (longest − shortest) spent beyond the shortest run on a noisy host (items
    /// spend their budget: the slow AMD-hosted VM).
    pub share: f64,
    /// The same share on a quiet fast host (items converge early: the Intel-hosted
    /// VM). The model expects the geometric middle of the two times
    /// ([`model_s`]); the same as `share` for a probe measured on one host only.
    pub quiet_share: f64,
    /// Seconds before sampling (partners, working sets), at every call.
    pub setup_s: f64,
    /// Seconds of setup per byte of the item's working set (`S=` or the size in the label).
    pub setup_s_per_byte: f64,
    /// Correction of an item's own estimate (`PlanItem::with_estimate`), from what such
    /// items took against it.
    pub own_factor: f64,
    /// Its figure's samples take no perf counters and must not carry the kernel's perf hooks:
    /// the plan runs it before every item that opens counters (cli::execute::schedule), so
    /// it finds the hooks off and does not wait for them.
    pub hook_free: bool,
    /// Seconds the item's last call adds once (a pass after sampling).
    pub tail_s: f64,
    /// Its calls start partner tasks (a child, another thread), so every round warms up for
    /// the whole warm-up floor (sampler::round_warmup), not only the first.
    pub partners: bool,
}

impl Cost {
    /// Items whose probe declares nothing: the middle of what converging items take (55–75%
    /// of the budget), no setup.
    pub const UNKNOWN: Cost = Cost::converging(0.6, 0.0);

    /// An item that spends `share` of the span beyond the shortest run and `setup_s` before
    /// sampling at each call, and nothing else.
    pub const fn converging(share: f64, setup_s: f64) -> Cost {
        Cost {
            share,
            quiet_share: share,
            setup_s,
            setup_s_per_byte: 0.0,
            own_factor: 1.0,
            hook_free: false,
            tail_s: 0.0,
            partners: false,
        }
    }

    /// This cost with `quiet_share` as its share on a quiet fast host.
    pub const fn quiet(self, quiet_share: f64) -> Cost {
        Cost {
            quiet_share,
            ..self
        }
    }

    /// [`Cost::converging`] for an item whose calls start partner tasks.
    pub const fn with_partners(share: f64, setup_s: f64) -> Cost {
        Cost {
            partners: true,
            ..Cost::converging(share, setup_s)
        }
    }
}

impl Default for Cost {
    fn default() -> Self {
        Cost::UNKNOWN
    }
}

/// The byte size an item's label names: `S=64k` (ctx sweep) or a bare size token such as
/// `64m` (mem latency); 0 when there is none.
fn label_bytes(label: &str) -> u64 {
    label
        .split_whitespace()
        .skip(1)
        .filter_map(|t| {
            let t = t.strip_prefix("S=").unwrap_or(t);
            // Only tokens that end in a size suffix: "stride 64" is a stride, not a buffer.
            t.ends_with(|c: char| "kKmMgG".contains(c))
                .then(|| crate::units::size::parse_size(t).ok())
                .flatten()
        })
        .max()
        .unwrap_or(0)
}

/// How an item samples: its rounds spread across the plan (one call per round, the default)
/// or all in one call (an item that runs once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Spread,
    Once,
}

/// The expected time of one item, from the model alone. `own` is the item's own estimate
/// when it does not sample with the command's budget; `sampling` is how the item samples
/// (its own configuration when its probe declares one, as the pointer chase does); `cost` is
/// what its probe declares. Setup (partners, working sets) is paid at every call: three
/// times for a spread item.
pub fn model_s(
    label: &str,
    own: Option<Duration>,
    sampling: &SamplingConfig,
    mode: Mode,
    cost: &Cost,
) -> f64 {
    if let Some(d) = own {
        return d.as_secs_f64() * cost.own_factor;
    }
    let sample_s = sampling.target_sample_ns as f64 / 1e9;
    let (calls, (lo, hi)) = match mode {
        Mode::Spread => (
            ROUNDS as f64,
            spread_span(sampling, sample_s, 0.0, cost.partners),
        ),
        Mode::Once => (1.0, sampler_span(sampling, sample_s, 0.0)),
    };
    let fixed = calls * (cost.setup_s + label_bytes(label) as f64 * cost.setup_s_per_byte)
        + lo
        + cost.tail_s;
    let at = |share: f64| fixed + share * looser(sampling) * (hi - lo);
    // Why the geometric middle: one share per kind is tuned to a host. On a quiet fast host
    // items converge early (run took 18.0-19.4 s where the noisy host's shares said 32), on a
    // noisy one they spend their budget; the middle's worst error over that span is the same
    // both ways (actual/expected 1/r and r, r = sqrt(noisy / quiet)).
    (at(cost.share) * at(cost.quiet_share)).sqrt()
}

/// A looser interval target converges sooner: `run --quick` (±2%) took 53% of the span
/// between shortest and longest where `run` (±1%) took 82%, about √(1% / 2%) as much.
fn looser(sampling: &SamplingConfig) -> f64 {
    if sampling.rel_ci_target > 0.0 {
        (0.01 / sampling.rel_ci_target).sqrt().min(1.0)
    } else {
        1.0
    }
}

/// Past actual/expected ratios of each item label on one machine, most recent first.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct History {
    ratios: BTreeMap<String, Vec<f64>>,
}

impl History {
    /// From the item times of past runs, most recent run first; keeps [`HISTORY_RUNS`] per
    /// label and ignores unusable entries.
    pub fn from_runs(runs: &[Vec<ItemTime>]) -> History {
        let mut ratios: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for run in runs {
            for t in run {
                let r = t.elapsed_s / t.expected_s;
                let v = ratios.entry(t.label.clone()).or_default();
                // A ratio of 0 is a real reading for the make-up rounds (none was needed).
                if r.is_finite() && r >= 0.0 && v.len() < HISTORY_RUNS {
                    v.push(r);
                }
            }
        }
        ratios.retain(|_, v| !v.is_empty());
        History { ratios }
    }

    /// The median past ratio for a label and how many runs it comes from.
    fn ratio(&self, label: &str) -> Option<(f64, usize)> {
        let v = self.ratios.get(label)?;
        let mut s = v.clone();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let med = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        Some((med, n))
    }
}

/// One item's estimate.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ItemEstimate {
    pub label: String,
    /// The model's expected seconds (recorded with the actual time, for the next estimate).
    pub model_s: f64,
    /// What is expected: the model, corrected by this machine's history when there is one.
    pub expected_s: f64,
    /// Past runs the correction comes from (0: the model alone).
    pub from_runs: usize,
}

/// A plan's estimate: one per item, and the make-up rounds'.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanEstimate {
    pub items: Vec<ItemEstimate>,
    /// The make-up rounds ([`MAKE_UP_LABEL`], see [`make_up_estimate`]).
    pub make_up: ItemEstimate,
}

impl PlanEstimate {
    /// Estimate items given as (label, own estimate, how it samples, its probe's cost), all
    /// sampling with `sampling`.
    pub fn new<'a>(
        items: impl IntoIterator<Item = (&'a str, Option<Duration>, Mode, Cost)>,
        sampling: &SamplingConfig,
        history: &History,
    ) -> PlanEstimate {
        Self::with_own_sampling(
            items
                .into_iter()
                .map(|(l, own, mode, cost)| (l, own, mode, None, cost)),
            sampling,
            history,
        )
    }

    /// Estimate items given as (label, own estimate, how it samples, the sampling its probe
    /// declares when it is not the command's `sampling`, its probe's cost).
    pub fn with_own_sampling<'a>(
        items: impl IntoIterator<
            Item = (
                &'a str,
                Option<Duration>,
                Mode,
                Option<&'a SamplingConfig>,
                Cost,
            ),
        >,
        sampling: &SamplingConfig,
        history: &History,
    ) -> PlanEstimate {
        let mut spread_s = 0.0;
        let items: Vec<ItemEstimate> = items
            .into_iter()
            .map(|(label, own, mode, own_sampling, cost)| {
                let model = model_s(label, own, own_sampling.unwrap_or(sampling), mode, &cost);
                let e = corrected(label, model, history);
                if mode == Mode::Spread {
                    spread_s += e.expected_s;
                }
                e
            })
            .collect();
        PlanEstimate {
            items,
            make_up: make_up_estimate(spread_s, history),
        }
    }

    pub fn total_s(&self) -> f64 {
        FIXED_S + self.make_up.expected_s + self.items.iter().map(|i| i.expected_s).sum::<f64>()
    }

    /// "N measurements, about T s" (tenths below 10 s) and where the figure comes from: "from the last 3 runs"
    /// when every item has history (the fewest runs any item has), "k of N from past runs"
    /// when some do.
    pub fn line(&self) -> String {
        let n = self.items.len();
        let total = self.total_s();
        // Tenths below 10 s: rounding 1.4 s to "1 s" alone would be 30% off.
        let about = if total < 10.0 {
            format!("{total:.1}")
        } else {
            format!("{total:.0}")
        };
        let with = self.items.iter().filter(|i| i.from_runs > 0).count();
        let source = if n > 0 && with == n {
            let runs = self.items.iter().map(|i| i.from_runs).min().unwrap_or(0);
            format!(
                ", from the last {runs} run{}",
                if runs == 1 { "" } else { "s" }
            )
        } else if with > 0 {
            format!(", {with} of {n} from past runs")
        } else if self.make_up.from_runs > 0 {
            // Said, not silent: a history without these items still corrects the make-up
            // rounds' allowance (a host that never took one expects none).
            ", make-up rounds from past runs".to_string()
        } else {
            String::new()
        };
        format!(
            "{n} measurement{}, about {about} s{source}",
            if n == 1 { "" } else { "s" }
        )
    }
}

/// An estimate of `model` seconds, corrected by this machine's history of `label`.
fn corrected(label: &str, model: f64, history: &History) -> ItemEstimate {
    let (expected, n) = match history.ratio(label) {
        Some((r, n)) => (model * r, n),
        None => (model, 0),
    };
    ItemEstimate {
        label: label.to_string(),
        model_s: model,
        expected_s: expected,
        from_runs: n,
    }
}

/// Share of the make-up allowance the model expects a run to use, before this machine's
/// history says: between a steady host (none) and paired runs on an unsteady
/// 2-vCPU VM, where every run took make-up rounds (21 calls in 3 full runs,
/// 22 in 3 `--quick` runs) and their samples alone took 7–9% of the rest of a full run, 5–6%
/// of a quick one: about the whole allowance.
pub const MAKE_UP_PRIOR: f64 = 0.5;

/// The make-up rounds of a plan whose spread items are expected to take `spread_s`:
/// [`MAKE_UP_PRIOR`] of their allowance (a [`MAKE_UP_SHARE`]th of the passes) by the model,
/// corrected by this machine's past make-up time like any item (a host that never slows a
/// round through learns 0). Why: every run on a fresh machine starts without history, and there the
/// model alone, without make-up rounds, read 30.3 s against 31.0–33.9 s.
fn make_up_estimate(spread_s: f64, history: &History) -> ItemEstimate {
    let model = spread_s / MAKE_UP_SHARE as f64 * MAKE_UP_PRIOR;
    corrected(MAKE_UP_LABEL, model, history)
}

/// The wall time of each item as it runs, for the run's `item_times`.
#[derive(Debug, Default)]
pub struct Timings {
    times: Vec<ItemTime>,
}

impl Timings {
    /// Record an item (or the make-up rounds) that took `elapsed` against its model.
    pub fn record(&mut self, est: &ItemEstimate, elapsed: Duration) {
        self.times.push(ItemTime {
            label: est.label.clone(),
            expected_s: est.model_s,
            elapsed_s: elapsed.as_secs_f64(),
        });
    }

    pub fn into_vec(self) -> Vec<ItemTime> {
        self.times
    }
}

/// The time left, from the item estimates, call by call: the plan runs in passes, and a
/// spread item's estimate is shared among its [`ROUNDS`] calls (a once item's is all in the
/// first pass). Left = the calls not run yet, plus what the current call has left (never
/// below zero: a call over its estimate counts as about to end), all scaled by how the
/// finished calls compared with their estimates (so a slow machine's ETA grows as soon as the
/// first call shows it).
#[derive(Debug, Clone)]
pub struct Eta {
    /// Expected seconds of each call, by pass then item; 0 once run or cancelled.
    calls: Vec<f64>,
    /// Expected seconds of the make-up rounds, until the passes are over.
    make_up: f64,
    items: usize,
    done_expected: f64,
    done_actual: f64,
    current: Option<(usize, Instant)>,
}

impl Eta {
    pub fn new(est: &PlanEstimate, modes: &[Mode]) -> Eta {
        let items = est.items.len();
        let mut calls = vec![0.0; items * ROUNDS];
        for (i, (e, m)) in est.items.iter().zip(modes).enumerate() {
            match m {
                Mode::Spread => {
                    for pass in 0..ROUNDS {
                        calls[pass * items + i] = e.expected_s / ROUNDS as f64;
                    }
                }
                Mode::Once => calls[i] = e.expected_s,
            }
        }
        Eta {
            calls,
            make_up: est.make_up.expected_s,
            items,
            done_expected: 0.0,
            done_actual: 0.0,
            current: None,
        }
    }

    /// Item `item`'s call in pass `pass` starts now.
    pub fn start(&mut self, pass: usize, item: usize, now: Instant) {
        self.current = Some((pass * self.items + item, now));
    }

    /// The current call finished after `elapsed_s`. `whole`: it took all of its item's
    /// rounds (it ran its own loop), so its later calls are expected in it and will not run.
    pub fn finish(&mut self, elapsed_s: f64, whole: bool) {
        let Some((id, _)) = self.current.take() else {
            return;
        };
        let mut expected = std::mem::take(&mut self.calls[id]);
        if whole {
            let item = id % self.items;
            for c in self.calls.iter_mut().skip(item).step_by(self.items) {
                expected += std::mem::take(c);
            }
        }
        self.done_expected += expected;
        self.done_actual += elapsed_s;
    }

    /// The passes and their make-up rounds are over; these took `elapsed_s`.
    pub fn make_up_over(&mut self, elapsed_s: f64) {
        self.done_expected += std::mem::take(&mut self.make_up);
        self.done_actual += elapsed_s;
    }

    /// Item `item` takes no call after pass `pass` (skipped, or an error in a later round).
    pub fn cancel_after(&mut self, pass: usize, item: usize) {
        for p in pass + 1..ROUNDS {
            self.calls[p * self.items + item] = 0.0;
        }
    }

    /// Seconds left if the current call has run for `running_s`.
    pub fn remaining_s(&self, running_s: f64) -> f64 {
        let speed = if self.done_expected > 0.0 && self.done_actual > 0.0 {
            (self.done_actual / self.done_expected).clamp(0.25, 4.0)
        } else {
            1.0
        };
        let cur = self.current.map(|(id, _)| self.calls[id]).unwrap_or(0.0);
        let rest: f64 = self.calls.iter().sum::<f64>() - cur + self.make_up;
        speed * rest + (speed * cur - running_s).max(0.0)
    }

    /// Seconds left now.
    pub fn remaining_now(&self, now: Instant) -> f64 {
        let running = self
            .current
            .map(|(_, s)| now.duration_since(s).as_secs_f64())
            .unwrap_or(0.0);
        self.remaining_s(running)
    }
}

/// "1m 05s" / "42s": the ETA as the bar shows it.
pub fn format_eta(s: f64) -> String {
    let s = s.round().max(0.0) as u64;
    if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(label: &str, expected: f64, elapsed: f64) -> ItemTime {
        ItemTime {
            label: label.into(),
            expected_s: expected,
            elapsed_s: elapsed,
        }
    }

    /// `oscost run`'s items by kind: call, the 7 system calls, 3 ctx.pipe, 4 ctx.futex and
    /// ctx.yield, 2 ipc cells (cli::run::plan), with the given costs.
    fn suite(costs: [Cost; 5], sampling: &SamplingConfig) -> PlanEstimate {
        let counts = [1, 7, 3, 4, 2];
        let items: Vec<_> = counts
            .iter()
            .zip(costs)
            .flat_map(|(&n, c)| std::iter::repeat_n(("x", None, Mode::Spread, c), n))
            .collect();
        PlanEstimate::new(items, sampling, &History::default())
    }

    /// The probes' costs in the suite's order.
    fn probe_costs() -> [Cost; 5] {
        [
            crate::probes::call::COST,
            crate::probes::syscall::COST,
            crate::probes::ctx::pipe::COST,
            crate::probes::ctx::futex::COST,
            crate::probes::ipc::COST,
        ]
    }

    /// The costs before the quiet host's shares: one share per kind, from the noisy host
    /// (and ctx.pipe's tail at 0.3 s).
    fn noisy_only_costs() -> [Cost; 5] {
        let [call, sys, pipe, futex, ipc] = probe_costs().map(|c| Cost {
            quiet_share: c.share,
            ..c
        });
        let pipe = Cost {
            share: 0.7,
            quiet_share: 0.7,
            tail_s: 0.3,
            ..pipe
        };
        [call, sys, pipe, futex, ipc]
    }

    /// Wall seconds of `oscost run` and `run --quick` without history (bench/estimates.sh's
    /// actual). Quiet fast host: the Intel-hosted 2-vCPU VM.
    /// Noisy slow host: the AMD-EPYC-hosted VM (run --quick given as its range).
    const FAST_FULL: [f64; 3] = [19.36, 18.44, 18.03];
    const FAST_QUICK: [f64; 3] = [3.79, 3.77, 3.69];
    const SLOW_FULL: [f64; 3] = [31.1, 33.3, 34.1];
    const SLOW_QUICK: [f64; 2] = [4.4, 5.7];

    fn ratios(actual: &[f64], est: &PlanEstimate) -> Vec<f64> {
        actual.iter().map(|a| a / est.total_s()).collect()
    }

    fn within_goal(r: &[f64]) -> bool {
        r.iter().all(|r| (0.7..=1.3).contains(r))
    }

    #[test]
    fn the_no_history_estimate_is_within_the_goal_on_the_fast_and_the_slow_host() {
        let (std, q) = (SamplingConfig::standard(), SamplingConfig::quick());
        let full = suite(probe_costs(), &std);
        let quick = suite(probe_costs(), &q);
        for r in [
            ratios(&FAST_FULL, &full),
            ratios(&FAST_QUICK, &quick),
            ratios(&SLOW_QUICK, &quick),
        ] {
            assert!(within_goal(&r), "{r:?}");
        }
        // The full suite's runs span 18.0–34.1 s, 1.89x, wider than the 1.86x that ±30%
        // covers: the estimate sits at the geometric middle, its worst error the same both
        // ways (within 5%).
        let (lo, hi) = (18.03_f64, 34.1_f64);
        let mid = (lo * hi).sqrt();
        assert!(
            (full.total_s() / mid - 1.0).abs() < 0.05,
            "{}",
            full.total_s()
        );
        assert!(within_goal(&ratios(&SLOW_FULL[..1], &full)));
        // One share per kind, the noisy host's, is far off on the fast host.
        let old = ratios(&FAST_FULL, &suite(noisy_only_costs(), &std));
        assert!(!within_goal(&old), "{old:?}");
        let old = ratios(&FAST_QUICK, &suite(noisy_only_costs(), &q));
        assert!(old.iter().all(|r| *r < 0.7), "{old:?}");
    }

    #[test]
    fn the_model_expects_the_geometric_middle_of_the_two_hosts_shares() {
        let std = SamplingConfig::standard();
        let c = Cost::converging(0.8, 0.0).quiet(0.2);
        let at = |share| model_s("x", None, &std, Mode::Spread, &Cost::converging(share, 0.0));
        let m = model_s("x", None, &std, Mode::Spread, &c);
        assert!((m - (at(0.8) * at(0.2)).sqrt()).abs() < 1e-9, "{m}");
        assert!(m > at(0.2) && m < at(0.8));
        // One share for both: that share.
        assert_eq!(
            model_s("x", None, &std, Mode::Spread, &Cost::converging(0.8, 0.0)),
            at(0.8)
        );
    }

    /// Recorded item times of `oscost run` on the fast host (its first run, seconds
    /// over the item's 3 calls, in the suite's order; no make-up round taken).
    const FAST_ITEMS: [f64; 17] = [
        2.502, 0.752, 0.743, 0.839, 0.725, 0.845, 1.189, 0.758, 1.304, 1.247, 1.229, 1.158, 1.166,
        1.183, 1.182, 1.521, 0.899,
    ];

    #[test]
    fn after_the_first_pass_the_eta_follows_the_host_not_the_model() {
        // With the noisy host's shares (the model 0.6x off on this host) the ETA after the
        // first pass is the recorded time left within 10%: it scales by the finished calls.
        let est = suite(noisy_only_costs(), &SamplingConfig::standard());
        let mut eta = Eta::new(&est, &[Mode::Spread; 17]);
        let t0 = Instant::now();
        for (i, s) in FAST_ITEMS.iter().enumerate() {
            eta.start(0, i, t0);
            eta.finish(s / 3.0, false);
        }
        let left: f64 = FAST_ITEMS.iter().sum::<f64>() * 2.0 / 3.0;
        let shown = eta.remaining_s(0.0);
        assert!((shown / left - 1.0).abs() < 0.1, "{shown} {left}");
        // Without the pace of the finished calls it would say the model's time left.
        let unscaled = Eta::new(&est, &[Mode::Spread; 17]).remaining_s(0.0) * 2.0 / 3.0;
        assert!(unscaled / left > 1.3, "{unscaled} {left}");
    }

    #[test]
    fn sampler_span_brackets_the_budget() {
        let std = SamplingConfig::standard();
        let (lo, hi) = sampler_span(&std, 0.02, 0.0);
        // 15 samples + 5 with counters at 20 ms, plus warm-up: about 0.6 s; at most the
        // budget and one sample.
        assert!(lo > 0.4 && lo < 0.8, "{lo}");
        assert!((2.0..2.1).contains(&hi), "{hi}");
    }

    #[test]
    fn spread_rounds_pay_scaling_and_warm_up_at_every_call() {
        let std = SamplingConfig::standard();
        let (lo, hi) = spread_span(&std, 0.02, 0.0, false);
        let (blo, bhi) = sampler_span(&std, 0.02, 0.0);
        // Each call samples for its share after its warm-up: more than back to back.
        // At most the budget plus, per call, scaling, a 0.2 s warm-up and one last sample.
        assert!(hi > bhi && hi < 2.0 + 3.0 * 0.26, "{hi} {bhi}");
        // Converging, a later call's warm-up (until steady, at least a quarter of the
        // warm-up) is no shorter than the one between rounds back to back.
        assert!(lo >= blo - 1e-9, "{lo} {blo}");
        // ... and shorter than the first call's: three first calls would take longer.
        let shape = RoundShape {
            converges: true,
            later: false,
            partners: false,
        };
        let first = simulate_round(&std, 0.02, 0.0, shape);
        assert!(lo < 3.0 * first - 2.0 * 0.02 - 0.1, "{lo} {first}");
        // With partners every call warms up for the whole floor: a later call is a first
        // call without its scaling.
        let (plo, _) = spread_span(&std, 0.02, 0.0, true);
        let later = simulate_round(
            &std,
            0.02,
            0.0,
            RoundShape {
                later: true,
                partners: true,
                ..shape
            },
        );
        assert!((later - first).abs() < 1e-9, "{later} {first}");
        assert!(
            (plo - (3.0 * first - 2.0 * 0.02)).abs() < 1e-9,
            "{plo} {first}"
        );
        // Two later floors' difference (2 × 75 ms), since these converge at their floor.
        assert!((plo - lo - 0.15).abs() < 0.011, "{plo} {lo}");
    }

    #[test]
    fn whole_run_samples_outlast_a_short_budget() {
        // ctx timeslice --quick: 60 ms of work per task, a sample is 4 × 60 ms (together,
        // then one after the other); 2 s budget, 5 to 15 samples, no warm-up time: the
        // minimum 3 samples per round, counters samples and warm-up batches make it about
        // 4 s (16.7 s for 4 slices on the quiet VM, where the old estimate said 9 s).
        let cfg = crate::probes::ctx::timeslice::sampling(Duration::from_secs(2));
        let (lo, hi) = sampler_span(&cfg, 0.12, 0.12);
        assert!(hi > 3.5 && hi < 4.5, "{hi}");
        assert!(lo <= hi);
    }

    #[test]
    fn kinds_that_converge_early_expect_less_than_the_budget() {
        let q = SamplingConfig::quick();
        let s = Mode::Spread;
        let (_, upper) = spread_span(&q, q.target_sample_ns as f64 / 1e9, 0.0, false);
        // The pointer chase declares its own sampling (probes::mem::latency).
        let chase = crate::probes::mem::latency::chase_sampling(&q);
        let chase_cost = &crate::probes::mem::latency::COST;
        let sys_cost = &crate::probes::syscall::COST;
        let mem = model_s(
            "mem.latency random 4k 4k stride 64",
            None,
            &chase,
            s,
            chase_cost,
        );
        let sys = model_s("syscall.getpid", None, &q, s, sys_cost);
        assert!(mem < sys && sys < upper, "{mem} {sys} {upper}");
        // A bigger buffer costs its setup, at each of the three calls.
        let big = model_s(
            "mem.latency random 4k 64m stride 64",
            None,
            &chase,
            s,
            chase_cost,
        );
        assert!(big > mem + 0.3, "{big} {mem}");
        let once = model_s(
            "mem.latency random 4k 64m stride 64",
            None,
            &chase,
            Mode::Once,
            chase_cost,
        );
        assert!(once < big, "{once} {big}");
        // Own estimates are used as given (mmap lab corrected by its measured factor).
        let three = Some(Duration::from_secs(3));
        let unknown = &Cost::UNKNOWN;
        assert_eq!(model_s("fault.anon", three, &q, Mode::Once, unknown), 3.0);
        let ten = Some(Duration::from_secs(10));
        let lab = &crate::probes::mmap::COST;
        assert!(model_s("mmap.lab", ten, &q, Mode::Once, lab) > 10.0);
    }

    #[test]
    fn the_model_follows_the_probes_cost_not_its_label() {
        let q = SamplingConfig::quick();
        let sp = Mode::Spread;
        let pipe = &crate::probes::ctx::pipe::COST;
        let label = "ctx.pipe thread tsc";
        let declared = model_s(label, None, &q, sp, pipe);
        // The same cost under any name is the same estimate; the same name without the
        // cost is not.
        assert_eq!(model_s("anything", None, &q, sp, pipe), declared);
        let plain = model_s(label, None, &q, sp, &Cost::UNKNOWN);
        assert!(declared > plain + pipe.tail_s, "{declared} {plain}");
        let ten = Some(Duration::from_secs(10));
        assert_eq!(
            model_s("mmap.lab", ten, &q, Mode::Once, &Cost::UNKNOWN),
            10.0
        );
    }

    #[test]
    fn sizes_in_labels() {
        assert_eq!(label_bytes("ctx.sweep N=2 S=64k"), 64 << 10);
        assert_eq!(
            label_bytes("mem.latency random thp 1.5m stride 64"),
            3 << 19
        );
        assert_eq!(label_bytes("syscall.getpid"), 0);
        assert_eq!(label_bytes("mem.latency random 4k 8k stride 64"), 8 << 10);
    }

    #[test]
    fn history_scales_the_model_by_the_median_ratio() {
        let q = SamplingConfig::quick();
        let runs = vec![
            vec![t("syscall.getpid", 1.0, 2.0), t("call.function", 1.0, 1.0)],
            vec![t("syscall.getpid", 1.0, 3.0)],
            vec![t("syscall.getpid", 1.0, 10.0)],
            // Unusable entries are ignored.
            vec![
                t("syscall.getpid", 0.0, 1.0),
                t("call.function", 1.0, f64::NAN),
            ],
        ];
        let h = History::from_runs(&runs);
        let sp = Mode::Spread;
        let est = PlanEstimate::new(
            [
                ("syscall.getpid", None, sp, Cost::UNKNOWN),
                ("syscall.null", None, sp, Cost::UNKNOWN),
            ],
            &q,
            &h,
        );
        let m = model_s("syscall.getpid", None, &q, sp, &Cost::UNKNOWN);
        assert_eq!(est.items[0].from_runs, 3);
        assert!((est.items[0].expected_s - 3.0 * m).abs() < 1e-9);
        assert_eq!(est.items[1].from_runs, 0);
        assert!(
            est.line().contains("1 of 2 from past runs"),
            "{}",
            est.line()
        );
        let all = PlanEstimate::new(
            [
                ("syscall.getpid", None, sp, Cost::UNKNOWN),
                ("call.function", None, sp, Cost::UNKNOWN),
            ],
            &q,
            &h,
        );
        assert!(
            all.line().ends_with("from the last 1 run"),
            "{}",
            all.line()
        );
        let none = PlanEstimate::new(
            [("syscall.getpid", None, sp, Cost::UNKNOWN)],
            &q,
            &History::default(),
        );
        assert!(!none.line().contains("from"), "{}", none.line());
        assert!(
            none.line().starts_with("1 measurement, about "),
            "{}",
            none.line()
        );
    }

    #[test]
    fn history_keeps_the_most_recent_runs() {
        let runs: Vec<Vec<ItemTime>> = (0..8)
            .map(|i| vec![t("a", 1.0, if i < HISTORY_RUNS { 2.0 } else { 100.0 })])
            .collect();
        let h = History::from_runs(&runs);
        assert_eq!(h.ratio("a"), Some((2.0, HISTORY_RUNS)));
    }

    #[test]
    fn eta_counts_calls_left_and_learns_the_pace() {
        let est = PlanEstimate {
            items: [9.0, 1.0, 3.0]
                .iter()
                .map(|&s| ItemEstimate {
                    label: "x".into(),
                    model_s: s,
                    expected_s: s,
                    from_runs: 0,
                })
                .collect(),
            make_up: ItemEstimate::default(),
        };
        // Item 0 runs once (all 9 s in the first pass); items 1 and 2 spread over 3 passes.
        let modes = [Mode::Once, Mode::Spread, Mode::Spread];
        let mut eta = Eta::new(&est, &modes);
        let t0 = Instant::now();
        eta.start(0, 0, t0);
        assert!((eta.remaining_s(0.0) - 13.0).abs() < 1e-9);
        // Four seconds into the long item: 5 s of it and 4 s of the others left — not
        // 2/3 of the run, as a count of items would say.
        assert!((eta.remaining_s(4.0) - 9.0).abs() < 1e-9);
        // A call over its estimate is about to end: only what follows counts.
        assert!((eta.remaining_s(30.0) - 4.0).abs() < 1e-9);
        // It took twice its estimate: the rest is expected at that pace.
        eta.finish(18.0, false);
        eta.start(0, 1, t0);
        assert!((eta.remaining_s(0.0) - 8.0).abs() < 1e-9);
        // Item 1 is skipped after its first call: its later calls are not waited for.
        eta.finish(2.0 / 3.0, false);
        eta.cancel_after(0, 1);
        eta.start(0, 2, t0);
        assert!((eta.remaining_s(0.0) - 6.0).abs() < 1e-9);
        // Item 2 turns out to take all its rounds in its first call.
        eta.finish(6.0, true);
        assert!(eta.remaining_s(0.0).abs() < 1e-9);
        assert_eq!(format_eta(65.4), "1m 05s");
        assert_eq!(format_eta(9.6), "10s");
    }

    /// Spread items of 3 s and 1 s and an item that runs once (6 s), with `history`.
    fn plan_with_make_up(history: &History) -> PlanEstimate {
        let own = |s| Some(Duration::from_secs(s));
        let c = Cost::UNKNOWN;
        PlanEstimate::new(
            [
                ("a", own(3), Mode::Spread, c),
                ("b", own(1), Mode::Spread, c),
                ("once", own(6), Mode::Once, c),
            ],
            &SamplingConfig::standard(),
            history,
        )
    }

    #[test]
    fn the_estimate_counts_the_make_up_allowance_of_the_spread_items() {
        let est = plan_with_make_up(&History::default());
        // Half the allowance, a tenth of the spread items' 4 s; the item that runs once takes
        // no make-up round.
        assert!(
            (est.make_up.expected_s - 0.2).abs() < 1e-9,
            "{:?}",
            est.make_up
        );
        assert_eq!(est.make_up.label, MAKE_UP_LABEL);
        assert!((est.total_s() - (FIXED_S + 10.2)).abs() < 1e-9);
        // The ETA waits for it until the passes are over.
        let mut eta = Eta::new(&est, &[Mode::Spread, Mode::Spread, Mode::Once]);
        assert!((eta.remaining_s(0.0) - 10.2).abs() < 1e-9);
        eta.make_up_over(0.2);
        assert!((eta.remaining_s(0.0) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn a_machine_that_took_no_make_up_round_learns_none() {
        // Past runs took none (0 s against 0.2 s): a ratio of 0 is a reading, not a gap.
        let runs: Vec<Vec<ItemTime>> = (0..3).map(|_| vec![t(MAKE_UP_LABEL, 0.2, 0.0)]).collect();
        let est = plan_with_make_up(&History::from_runs(&runs));
        assert_eq!(est.make_up.expected_s, 0.0);
        assert_eq!(est.make_up.from_runs, 3);
        assert!(
            est.line().ends_with("make-up rounds from past runs"),
            "{}",
            est.line()
        );
        assert!(!plan_with_make_up(&History::default())
            .line()
            .contains("from"));
        // Runs that took the whole allowance (twice the model): all of it.
        let runs: Vec<Vec<ItemTime>> = (0..3).map(|_| vec![t(MAKE_UP_LABEL, 0.2, 0.4)]).collect();
        let est = plan_with_make_up(&History::from_runs(&runs));
        assert!((est.make_up.expected_s - 0.4).abs() < 1e-9);
    }
}
