//! The one sampling loop every probe uses (lmbench's `benchmp` idea): warm-up, auto-scaled
//! iteration counts, raw and baseline samples interleaved so drift cancels, and an adaptive
//! stop when the median's interval is tight or the time budget is spent.

use super::stats::{relative_half_width, summarize};
use crate::error::Result;
use crate::evidence::clock::now_ns;
use crate::evidence::recorder::Recorder;

/// Which round of its measurement one call of a job takes, when the run spreads each
/// measurement's rounds across the whole plan (engine::plan runs it in passes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundSlot {
    /// 0-based round this call samples.
    pub index: u32,
    /// Rounds of the measurement in all (each call samples on budget / `of`).
    pub of: u32,
}

/// How long and how carefully to sample.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingConfig {
    /// Time spent running the workload before any sample counts.
    pub warmup_ns: u64,
    /// Target duration of one sample (also at least 1000× the clock's resolution).
    pub target_sample_ns: u64,
    pub min_samples: usize,
    pub max_samples: usize,
    /// Stop when the 95% interval's half-width is within this fraction of the median.
    pub rel_ci_target: f64,
    /// Wall-time budget for the sampling of one measurement.
    pub budget_ns: u64,
    /// Every how many samples one is an evidence sample ([`EVIDENCE_EVERY`] unless a probe
    /// needs its counters less often: mem::latency::chase_sampling).
    pub evidence_every: usize,
}

impl SamplingConfig {
    /// The default suite: 20 ms samples, ±1%, about 2 s per measurement.
    pub fn standard() -> Self {
        SamplingConfig {
            warmup_ns: 100_000_000,
            target_sample_ns: 20_000_000,
            min_samples: 15,
            max_samples: 1000,
            rel_ci_target: 0.01,
            budget_ns: 2_000_000_000,
            evidence_every: EVIDENCE_EVERY,
        }
    }

    /// Quick mode: 5 ms samples, about 0.3 s per measurement.
    pub fn quick() -> Self {
        SamplingConfig {
            warmup_ns: 20_000_000,
            target_sample_ns: 5_000_000,
            min_samples: 9,
            max_samples: 200,
            rel_ci_target: 0.02,
            budget_ns: 300_000_000,
            evidence_every: EVIDENCE_EVERY,
        }
    }
}

pub use crate::model::StopReason;

/// Every how many samples one is an evidence sample (perf counters attached). Its time is
/// kept apart: counters cost the measured tasks time at every context switch.
pub const EVIDENCE_EVERY: usize = 4;

/// The most evidence samples one round takes. Why a cap: the checks read the counters' rates
/// (per iteration), which two windows of a sample's length give to well under a percent, and
/// the quiet windows around every figure sample still record placement, CPU time and faults;
/// beyond two, each evidence sample costs a sample's time for evidence already in hand.
pub const EVIDENCE_PER_ROUND: usize = 2;

/// The iteration counts a measurement's first round scaled to, kept for its later rounds
/// when the run spreads them across the plan (engine::plan keeps one per plan item).
///
/// Why: scaling raw and baseline at every call takes three or more timings of up to a sample
/// each, although the rounds measure the same thing under the same conditions; the samples are per iteration, so the count only sets a
/// sample's length. Entries are matched by position (the n-th measurement a call takes) and
/// by its identity (probe and parameters), so a job whose calls measure different things
/// scales each afresh.
#[derive(Debug, Clone, Default)]
pub struct ScaleMemo(std::sync::Arc<std::sync::Mutex<MemoState>>);

#[derive(Debug, Default)]
struct MemoState {
    /// (identity, raw iterations, baseline iterations) in the order a call takes them.
    counts: Vec<(String, u64, u64)>,
    /// Measurements taken so far in the current call.
    cursor: usize,
}

impl ScaleMemo {
    fn state(&self) -> std::sync::MutexGuard<'_, MemoState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new call of the item begins: its first measurement is position 0 again.
    pub fn rewind(&self) {
        self.state().cursor = 0;
    }

    /// The counts of the current call's next measurement, when an earlier call scaled the
    /// same measurement (`identity`) at this position. Advances the position.
    pub fn next(&self, identity: &str) -> (usize, Option<(u64, u64)>) {
        let mut st = self.state();
        let at = st.cursor;
        st.cursor += 1;
        let known = st
            .counts
            .get(at)
            .filter(|(id, _, _)| id == identity)
            .map(|&(_, r, b)| (r, b));
        (at, known)
    }

    /// Keep the counts the measurement at `at` scaled to.
    pub fn keep(&self, at: usize, identity: &str, raw: u64, base: u64) {
        let mut st = self.state();
        let entry = (identity.to_string(), raw, base);
        if at < st.counts.len() {
            st.counts[at] = entry;
        } else if at == st.counts.len() {
            st.counts.push(entry);
        }
    }
}

/// Samples in ns per iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleSet {
    pub raw: Vec<f64>,
    /// Raw samples taken with perf counters attached: evidence, not part of the figure.
    pub evidence: Vec<f64>,
    pub baseline: Vec<f64>,
    /// The round of each raw (and paired baseline) sample.
    pub rounds: Vec<u32>,
    /// The core-speed canary's latest reading before each raw sample (engine::canary).
    pub canary: Vec<f64>,
    pub raw_iterations: u64,
    pub baseline_iterations: u64,
    pub stop: StopReason,
}

/// A workload runs `iters` iterations and returns the elapsed nanoseconds it timed itself
/// (so set-up stays outside the timed region).
pub type Workload<'a> = dyn FnMut(u64) -> Result<u64> + 'a;

/// Find an iteration count whose sample lasts about `target_ns`: grow ×100 until a sample is
/// within 100× of the target, then predict linearly. The timing the decision rests on is the
/// fastest of three: one call slowed by a preemption or a competitor's burst would otherwise
/// fix a count far too small, with samples too short for any burst to land in the evidence
/// windows.
pub fn auto_scale(work: &mut Workload<'_>, target_ns: u64) -> Result<u64> {
    let mut iters: u64 = 1;
    loop {
        crate::engine::interrupt::check()?;
        let mut t = work(iters)?.max(1);
        if t.saturating_mul(100) >= target_ns {
            t = t.min(work(iters)?.max(1)).min(work(iters)?.max(1));
        }
        if t >= target_ns {
            return Ok(iters);
        }
        let factor = target_ns as f64 / t as f64;
        if factor <= 100.0 || iters >= u64::MAX / 1000 {
            return Ok(((iters as f64 * factor).ceil() as u64).max(1));
        }
        iters *= 100;
    }
}

/// Rounds a measurement's samples are taken in. Each round warms up again and samples on
/// its own share of the budget; the interval is then built from the rounds' medians as well
/// as from the samples (stats::widen_for_rounds), so drift between rounds — which an
/// interval from one block of consecutive samples cannot see — widens it.
pub const ROUNDS: usize = 3;

/// The loops a measurement times: the raw workload and, when the figure is a difference, the
/// baseline whose samples pair with it.
pub struct Workloads<'a, 'r, 'b> {
    pub raw: &'a mut Workload<'r>,
    pub baseline: Option<&'a mut Workload<'b>>,
}

impl<'a, 'r, 'b> Workloads<'a, 'r, 'b> {
    /// The workload alone, with no baseline to subtract.
    pub fn alone(raw: &'a mut Workload<'r>) -> Self {
        Workloads {
            raw,
            baseline: None,
        }
    }

    /// The workload and the baseline whose time is subtracted from it.
    pub fn paired(raw: &'a mut Workload<'r>, baseline: &'a mut Workload<'b>) -> Self {
        Workloads {
            raw,
            baseline: Some(baseline),
        }
    }
}

/// Which round of a spread measurement a call takes, and the iteration counts an earlier
/// round of it scaled to (raw, baseline; see [`ScaleMemo`]), when one did.
#[derive(Debug, Clone, Copy)]
pub struct Round {
    pub slot: RoundSlot,
    pub known: Option<(u64, u64)>,
}

/// One call of the sampler: every round of the measurement back to back (None), or one
/// round of a measurement whose rounds are spread across the plan ([`Round`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// All [`ROUNDS`] rounds in this call, one after the other.
    Whole,
    /// One round of a spread measurement: `later` when an earlier round scaled its
    /// iteration counts ([`ScaleMemo`]), `partners` when its tasks are started afresh at
    /// every call (see [`round_warmup`]).
    Round {
        slot: RoundSlot,
        later: bool,
        partners: bool,
    },
}

/// When a round stops sampling (once it has taken at least three samples).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// This long after the call began: rounds back to back share the budget, their
    /// scaling and warm-ups included.
    FromCall(u64),
    /// This long after the round's warm-up: a spread round samples for its whole share,
    /// scaling and warm-up come on top, so a measurement gets as many samples as when its
    /// rounds ran back to back.
    AfterWarmUp(u64),
}

/// One round as the sampler takes it: the sampler runs these ([`sample`]) and the estimate
/// bounds a plan's time with the same ones (engine::estimate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundPlan {
    /// The round's 0-based index (its samples' tag).
    pub index: u32,
    /// Warm-up in ns: at least, at most (until steady in between).
    pub warm: (u64, u64),
    pub deadline: Deadline,
    pub limits: RoundLimits,
    /// The interval the round stops at ([`round_target`]).
    pub target: f64,
}

/// The rounds one call takes: the sampler's round and budget arithmetic, in one place.
///
/// Back to back, the first warm-up lasts until consecutive batches agree (at least the
/// warm-up, at most a quarter of the budget or 4× the warm-up); later rounds refresh caches
/// and frequency after the gap, for a quarter of the warm-up; round r ends at (r + 1) /
/// [`ROUNDS`] of the budget from the call's start. A spread round warms up as
/// [`round_warmup`] says, then samples on `budget / of`, with its share of the sample limits.
pub fn plan(cfg: &SamplingConfig, call: Call) -> Vec<RoundPlan> {
    match call {
        Call::Whole => (0..ROUNDS)
            .map(|r| RoundPlan {
                index: r as u32,
                warm: if r == 0 {
                    let cap = (cfg.budget_ns / 4).max(cfg.warmup_ns.saturating_mul(4));
                    (cfg.warmup_ns, cap)
                } else {
                    (cfg.warmup_ns / 4, cfg.warmup_ns / 4)
                },
                deadline: Deadline::FromCall(cfg.budget_ns * (r as u64 + 1) / ROUNDS as u64),
                limits: RoundLimits::of(cfg, ROUNDS),
                target: round_target(cfg.rel_ci_target, ROUNDS),
            })
            .collect(),
        Call::Round {
            slot,
            later,
            partners,
        } => {
            let of = slot.of.max(1) as usize;
            let share = cfg.budget_ns / of as u64;
            vec![RoundPlan {
                index: slot.index,
                warm: round_warmup(cfg, share, later, partners),
                deadline: Deadline::AfterWarmUp(share),
                limits: RoundLimits::of(cfg, of),
                target: round_target(cfg.rel_ci_target, of),
            }]
        }
    }
}

/// Sample one measurement: all [`ROUNDS`] rounds back to back (`round` None), or the one
/// round of a spread measurement that `round` names. Scales the iteration counts (unless an
/// earlier round of it did: [`ScaleMemo`]), then takes each round of [`plan`]: a warm-up
/// until steady, then samples until the round converges, hits its sample limit or its
/// deadline. At least one evidence sample is taken, since each round's evidence is checked
/// on its own. `recorder` brackets every raw sample; `min_sample_ns` is the clock's floor
/// (see clock::min_sample_ns).
pub fn sample(
    cfg: &SamplingConfig,
    min_sample_ns: f64,
    round: Option<Round>,
    work: &mut Workloads<'_, '_, '_>,
    recorder: &mut Recorder,
) -> Result<SampleSet> {
    let start = now_ns();
    // Counts that do not fit the workloads (a baseline count without a baseline) are not used.
    let known = round
        .and_then(|r| r.known)
        .filter(|&(r, b)| r > 0 && (b > 0) == work.baseline.is_some());
    let mut set = match known {
        Some((r, b)) => empty_set(r, b),
        None => scaled_set(cfg, min_sample_ns, work.raw, work.baseline.as_deref_mut())?,
    };
    let call = match round {
        None => Call::Whole,
        Some(r) => Call::Round {
            slot: r.slot,
            later: known.is_some(),
            partners: recorder.has_partners(),
        },
    };
    let iterations = (set.raw_iterations, set.baseline_iterations);
    let mut taken = 0usize;
    for r in plan(cfg, call) {
        warm_until_steady(r.warm, work, iterations)?;
        let deadline = match r.deadline {
            Deadline::FromCall(d) => start + d,
            Deadline::AfterWarmUp(d) => now_ns() + d,
        };
        let bounds = RoundBounds {
            plan: r,
            deadline,
            evidence_every: cfg.evidence_every.max(3),
        };
        take_round(&bounds, work, recorder, &mut set, &mut taken)?;
    }
    if set.evidence.is_empty() && recorder.attaches_counters() {
        let iters = set.raw_iterations;
        evidence_sample(work.raw, iters, recorder, &mut set)?;
    }
    Ok(set)
}

/// The warm-up of one spread round, (at least, at most) in ns: until steady, at most a
/// quarter of the round's `share` or twice the warm-up (every round pays for one, so it is
/// kept short). At least the configured warm-up in a measurement's first call (the core may
/// just have left idle, the caches hold another item's data), and in every call of one with
/// `partners` (engine's Recorder::has_partners: tasks started afresh at each call); at least
/// a quarter of it in a `later` call of one without, whose iteration counts an earlier round
/// measured: it comes amid the plan's busy passes, with the core at speed, where the full
/// floor, not the steady test, would be most of its warm-up.
///
/// Why partners keep the whole floor: a freshly started partner's round trips keep moving
/// for longer than a quarter floor, slower than the steady test's 3% between windows can
/// see ([`steady`]); later rounds would then disagree with the first, which always warms up
/// fully, and widen the t interval on the rounds' medians.
pub fn round_warmup(cfg: &SamplingConfig, share: u64, later: bool, partners: bool) -> (u64, u64) {
    let cap = (share / 4).max(cfg.warmup_ns.saturating_mul(2));
    let floor = if later && !partners {
        cfg.warmup_ns / 4
    } else {
        cfg.warmup_ns
    };
    (floor, cap)
}

/// An empty sample set with auto-scaled iteration counts for raw and baseline.
fn scaled_set(
    cfg: &SamplingConfig,
    min_sample_ns: f64,
    raw: &mut Workload<'_>,
    baseline: Option<&mut Workload<'_>>,
) -> Result<SampleSet> {
    let target = (cfg.target_sample_ns as f64).max(min_sample_ns) as u64;
    let raw_iters = auto_scale(raw, target)?;
    let base_iters = match baseline {
        Some(b) => {
            cheap_baseline_iterations(raw_iters, auto_scale(b, target)?, target, min_sample_ns)
        }
        None => 0,
    };
    Ok(empty_set(raw_iters, base_iters))
}

/// A baseline iteration this much cheaper than a raw one (or more) is a negligible part of
/// the figure: its samples are [`CHEAP_BASELINE_SHARE`] of a sample long.
const CHEAP_BASELINE_RATIO: u64 = 32;
/// The length of a cheap baseline's sample, as a share of the sample target.
const CHEAP_BASELINE_SHARE: u64 = 4;

/// The baseline's iterations per sample, given both counts auto-scaled to `target_ns`: the
/// same, unless a baseline iteration costs under 1/[`CHEAP_BASELINE_RATIO`] of a raw one
/// (a system call's empty loop: 0.4 ns beside 200 ns and more), then a quarter of them (at
/// least `min_sample_ns` of work). Why: every figure sample is followed by its baseline
/// sample, so a full-length one would double such an item's sampling time for a part of the figure
/// under 3%; the raw samples, and the figure's interval, are unchanged, and the stop rule
/// still waits for the baseline's own interval (a noisier one can only take more samples).
fn cheap_baseline_iterations(raw: u64, base: u64, target_ns: u64, min_sample_ns: f64) -> u64 {
    if base / CHEAP_BASELINE_RATIO < raw.max(1) {
        return base;
    }
    let floor = (base as f64 * min_sample_ns / target_ns.max(1) as f64).ceil() as u64;
    (base / CHEAP_BASELINE_SHARE).max(floor).max(1)
}

/// An empty sample set with these iteration counts.
fn empty_set(raw_iterations: u64, baseline_iterations: u64) -> SampleSet {
    SampleSet {
        raw: Vec::new(),
        evidence: Vec::new(),
        baseline: Vec::new(),
        rounds: Vec::new(),
        canary: Vec::new(),
        raw_iterations,
        baseline_iterations,
        stop: StopReason::Converged,
    }
}

/// The interval one round stops at, so that the pooled samples of `rounds` rounds reach
/// `target`: a median's interval narrows as 1/√n, so each of `rounds` equal rounds needs
/// only about `target`·√rounds on its own ([`STOP_BIAS`] corrects the about); requiring
/// `target` of every round would take `rounds` times the samples. Drift between
/// rounds still widens the reported interval (stats::widen_for_rounds): the stop rule saves
/// samples, it does not narrow the interval.
pub fn round_target(target: f64, rounds: usize) -> f64 {
    if rounds <= 1 {
        return target;
    }
    target * (rounds as f64).sqrt() * STOP_BIAS
}

/// A round that stops at the first sample whose interval is narrow enough stops on a lucky
/// narrow one more often than not: the pooled interval of √rounds-wide rounds comes out
/// about 1.24× the target on synthetic noise (test below); 0.9 brings it back.
const STOP_BIAS: f64 = 0.9;

/// Where one round stops: its plan, with its deadline as a time.
struct RoundBounds {
    plan: RoundPlan,
    deadline: u64,
    /// Every how many samples one is an evidence sample (at least 3).
    evidence_every: usize,
}

/// Sample one round into `set` (raw and baseline interleaved, every [`EVIDENCE_EVERY`]th
/// sample with counters attached) until it converges, hits its sample limit or its deadline;
/// the weakest round's stop reason becomes the set's.
fn take_round(
    b: &RoundBounds,
    work: &mut Workloads<'_, '_, '_>,
    recorder: &mut Recorder,
    set: &mut SampleSet,
    taken: &mut usize,
) -> Result<()> {
    let Workloads { raw, baseline } = work;
    let (raw_iters, base_iters) = (set.raw_iterations, set.baseline_iterations);
    let first = set.raw.len();
    let first_evidence = set.evidence.len();
    let mut tagger = super::canary::Tagger::default();
    let stop = loop {
        crate::engine::interrupt::check()?;
        *taken += 1;
        if *taken % b.evidence_every == 2
            && set.evidence.len() - first_evidence < EVIDENCE_PER_ROUND
            && recorder.attaches_counters()
        {
            evidence_sample(raw, raw_iters, recorder, set)?;
            continue;
        }
        set.canary.extend(tagger.tag());
        recorder.begin_quiet();
        let t = raw(raw_iters)?;
        recorder.end_quiet(raw_iters);
        set.raw.push(t as f64 / raw_iters as f64);
        set.rounds.push(b.plan.index);
        if let Some(bw) = baseline.as_deref_mut() {
            let t = bw(base_iters)?;
            set.baseline.push(t as f64 / base_iters as f64);
        }
        let n = set.raw.len() - first;
        // Convergence is judged on every sample of the round, slowed core or not: waiting
        // for the fast state can double a round's time while the host stays slow, and does
        // not make the figures steadier.
        let base = if set.baseline.is_empty() {
            &[][..]
        } else {
            &set.baseline[first..]
        };
        if n >= b.plan.limits.min_samples && converged(&set.raw[first..], base, b.plan.target) {
            break StopReason::Converged;
        }
        if n >= b.plan.limits.max_samples {
            break StopReason::SampleLimit;
        }
        if n >= b.plan.limits.min_samples.min(3) && now_ns() >= b.deadline {
            break StopReason::Budget;
        }
    };
    set.stop = weakest(set.stop, stop);
    Ok(())
}

/// The weaker of two stop reasons (a budget stop outranks a sample limit, which outranks
/// convergence): the weakest round's reason is the measurement's.
pub fn weakest(a: StopReason, b: StopReason) -> StopReason {
    match (a, b) {
        (StopReason::Budget, _) | (_, StopReason::Budget) => StopReason::Budget,
        (StopReason::SampleLimit, _) | (_, StopReason::SampleLimit) => StopReason::SampleLimit,
        _ => StopReason::Converged,
    }
}

/// Samples per round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundLimits {
    pub min_samples: usize,
    pub max_samples: usize,
}

impl RoundLimits {
    /// The configured sample limits shared among `rounds` rounds (at least 3 each).
    fn of(cfg: &SamplingConfig, rounds: usize) -> Self {
        RoundLimits {
            min_samples: cfg.min_samples.div_ceil(rounds).max(3),
            max_samples: cfg.max_samples.div_ceil(rounds).max(3),
        }
    }
}

/// Batches per window of the warm-up's steadiness test, and how far apart (relative) the
/// medians of two consecutive windows may be.
pub const WARM_WINDOW: usize = 3;
const WARM_TOLERANCE: f64 = 0.03;

/// A warm-up batch is this fraction of a sample's iterations. The steadiness test needs two
/// windows of [`WARM_WINDOW`] batches; in whole samples (raw and baseline, 2 × 20 ms) that is
/// 240 ms, more than a spread round's cap of 200 ms (and `--quick`'s 60 ms against its 40 ms
/// cap), so whole-sample batches could never pass it. Quarter batches pass it within the warm-up floor when
/// the workload is steady, and keep testing up to the same cap when it is not; the floor
/// still bounds the warm-up from below.
pub const WARM_BATCH_SHARE: u64 = 4;

/// Iterations of one warm-up batch for a sample of `iters` (at least one).
pub fn warm_batch(iters: u64) -> u64 {
    (iters / WARM_BATCH_SHARE).max(1)
}

/// Warm-up (caches, branch predictors, frequency, page tables, the scheduler's view of the
/// partners) until steady, not for a fixed count: at least `warm.0` ns, then until the
/// median of the last [`WARM_WINDOW`] raw batches ([`warm_batch`] of a sample's (raw,
/// baseline) `iterations` each) agrees with the window before it within
/// [`WARM_TOLERANCE`], or `warm.1` ns are spent. A warm-up that ended too early shows as
/// samples that drift or split in two (see engine::modes::bimodal). Returns whether it
/// became steady.
fn warm_until_steady(
    warm: (u64, u64),
    work: &mut Workloads<'_, '_, '_>,
    iterations: (u64, u64),
) -> Result<bool> {
    let (floor_ns, cap_ns) = warm;
    let Workloads { raw, baseline } = work;
    let (raw_iters, base_iters) = (warm_batch(iterations.0), warm_batch(iterations.1));
    let start = now_ns();
    let floor = start + floor_ns;
    let cap = start + cap_ns.max(floor_ns);
    let mut times = Vec::new();
    loop {
        crate::engine::interrupt::check()?;
        times.push(raw(raw_iters)? as f64);
        if let Some(b) = baseline.as_deref_mut() {
            b(base_iters)?;
        }
        let now = now_ns();
        if now >= floor && steady(&times, WARM_WINDOW, WARM_TOLERANCE) {
            return Ok(true);
        }
        if now >= cap {
            return Ok(false);
        }
    }
}

/// Whether the last `window` values' median agrees with the previous `window`'s within `tol`
/// (relative to the earlier one).
pub fn steady(times: &[f64], window: usize, tol: f64) -> bool {
    if window == 0 || times.len() < 2 * window {
        return false;
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let n = times.len();
    let last = median(&times[n - window..]);
    let before = median(&times[n - 2 * window..n - window]);
    before > 0.0 && ((last - before) / before).abs() <= tol
}

/// One raw sample with perf counters attached; its time is kept apart from the figure.
fn evidence_sample(
    raw: &mut Workload<'_>,
    iters: u64,
    recorder: &mut Recorder,
    set: &mut SampleSet,
) -> Result<()> {
    recorder.begin();
    let t = raw(iters)?;
    recorder.end(iters);
    set.evidence.push(t as f64 / iters as f64);
    Ok(())
}

/// Whether a round's samples are precise enough to stop: the figure's interval within
/// `target` of its median. With a baseline the figure is the paired difference (raw −
/// baseline, engine::derive), so that is what is judged, not the raw samples or the baseline
/// on their own. Why: a small difference of two large laps (a `ctx sweep` point) can have both
/// sides within ±0.5% while the difference itself is at ±10–25%. A difference that cannot
/// reach the target in a round's share of the budget spends it and says so (the
/// measurement's "interval did not reach" warning).
/// A cheap baseline (a system call's 0.4 ns empty loop beside its 200 ns) still stops the
/// round as soon as the figure is at target, however its own samples spread.
fn converged(raw: &[f64], baseline: &[f64], target: f64) -> bool {
    let ok = |v: &[f64]| summarize(v).is_some_and(|s| relative_half_width(&s) <= target);
    if baseline.is_empty() {
        return ok(raw);
    }
    let difference: Vec<f64> = raw.iter().zip(baseline).map(|(r, b)| r - b).collect();
    ok(&difference)
}

/// The sampling of a small real measurement in tests: 6 to 12 samples of 1 ms after 5 ms of
/// warm-up, ±50%, within `budget_ns`.
#[cfg(test)]
impl SamplingConfig {
    pub fn small(budget_ns: u64) -> SamplingConfig {
        SamplingConfig {
            warmup_ns: 5_000_000,
            target_sample_ns: 1_000_000,
            min_samples: 6,
            max_samples: 12,
            rel_ci_target: 0.5,
            budget_ns,
            evidence_every: EVIDENCE_EVERY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::perf::EventSet;
    use crate::evidence::Participant;

    /// A synthetic workload whose time is exactly `ns_per_iter × iters`.
    /// Also turns the canary's tagging off on the test's thread: a synthetic workload's
    /// samples take no time, so the machine's state must not decide how many are taken.
    fn synthetic(ns_per_iter: u64) -> impl FnMut(u64) -> Result<u64> {
        crate::engine::canary::set_tagging(false);
        move |iters| Ok(iters * ns_per_iter)
    }

    /// The workloads of a test: `raw`, and `baseline` when given.
    fn both<'a, 'r, 'b>(
        raw: &'a mut Workload<'r>,
        baseline: Option<&'a mut Workload<'b>>,
    ) -> Workloads<'a, 'r, 'b> {
        Workloads { raw, baseline }
    }

    /// The warm-up of the first round back to back, as the plan gives it.
    fn first_warm_up(
        cfg: &SamplingConfig,
        work: &mut Workloads<'_, '_, '_>,
        iterations: (u64, u64),
    ) -> Result<bool> {
        warm_until_steady(plan(cfg, Call::Whole)[0].warm, work, iterations)
    }

    #[test]
    fn the_plan_shares_the_budget_among_the_rounds() {
        let std = SamplingConfig::standard();
        let whole = plan(&std, Call::Whole);
        assert_eq!(whole.len(), ROUNDS);
        // Back to back: the first warm-up until steady (at most a quarter of the budget),
        // the later ones a quarter of the warm-up; round r ends at (r + 1) / 3 of the budget.
        assert_eq!(whole[0].warm, (100_000_000, 500_000_000));
        assert_eq!(whole[1].warm, (25_000_000, 25_000_000));
        let ends: Vec<Deadline> = whole.iter().map(|r| r.deadline).collect();
        let third = std.budget_ns / 3;
        assert_eq!(
            ends,
            [
                Deadline::FromCall(third),
                Deadline::FromCall(2 * std.budget_ns / 3),
                Deadline::FromCall(std.budget_ns)
            ]
        );
        assert_eq!(whole[2].limits, RoundLimits::of(&std, ROUNDS));
        // One spread round: its share after its warm-up, its index, its share of the limits.
        let slot = RoundSlot { index: 2, of: 3 };
        let call = Call::Round {
            slot,
            later: true,
            partners: false,
        };
        let one = plan(&std, call);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].index, 2);
        assert_eq!(one[0].deadline, Deadline::AfterWarmUp(third));
        assert_eq!(one[0].warm, round_warmup(&std, third, true, false));
        assert_eq!(one[0].limits.min_samples, 5);
        assert_eq!(one[0].target, round_target(std.rel_ci_target, 3));
    }

    #[test]
    fn only_a_baseline_far_cheaper_than_the_figure_takes_shorter_samples() {
        // syscall.null: 23k raw iterations and 14M baseline ones fill a sample.
        assert_eq!(
            cheap_baseline_iterations(23_064, 14_351_856, 20_000_000, 30_000.0),
            14_351_856 / 4
        );
        // call.function: the baseline is a third of the raw iteration, kept whole.
        assert_eq!(
            cheap_baseline_iterations(2_372_901, 7_176_340, 20_000_000, 30_000.0),
            7_176_340
        );
        // Just under the ratio: kept; at it: shortened.
        assert_eq!(
            cheap_baseline_iterations(1000, 31_999, 20_000_000, 1.0),
            31_999
        );
        assert_eq!(
            cheap_baseline_iterations(1000, 32_000, 20_000_000, 1.0),
            8000
        );
        // Never below what the clock resolves: a quarter of 4 ms is under a 2 ms minimum.
        assert_eq!(
            cheap_baseline_iterations(10, 40_000, 4_000_000, 2_000_000.0),
            20_000
        );
        // No raw iteration count (cannot happen) does not divide by zero.
        assert_eq!(cheap_baseline_iterations(0, 64, 1000, 1.0), 16);
    }

    #[test]
    fn a_round_stops_when_the_figure_is_at_target_though_its_cheap_baseline_is_not() {
        // syscall.null: raw within ±0.2%, a 0.36 ns baseline spread ±8% of itself.
        let raw = [200.0, 200.4, 199.6, 200.2, 199.8];
        let base = [0.36, 0.39, 0.33, 0.37, 0.35];
        assert!(converged(&raw, &base, 0.0156));
        // Raw samples off target make a figure off target when the baseline is small.
        let loose = [200.0, 212.0, 188.0, 206.0, 194.0];
        assert!(!converged(&loose, &base, 0.0156));
        // A baseline as large as the figure, spread ±8%: the difference is not at target.
        let big = [100.0, 108.0, 92.0, 104.0, 96.0];
        assert!(!converged(&raw, &big, 0.0156));
        // A baseline at target on its own, and the difference with it.
        let steady = [100.0, 100.5, 99.5, 100.2, 99.8];
        assert!(converged(&raw, &steady, 0.0156));
        // No baseline: the raw samples alone.
        assert!(converged(&raw, &[], 0.0156));
        assert!(!converged(&[], &[], 0.0156));
    }

    #[test]
    fn a_small_difference_of_two_steady_laps_is_judged_on_itself() {
        // ctx.sweep at 256k as recorded (ns per lap, round 0 of a run): ring
        // and overhead each within ±0.5% of themselves, their difference ±14% of its median.
        let ring = [19142.0, 19206.0, 19182.0, 19186.0, 19139.0];
        let overhead = [17830.0, 17655.0, 17559.0, 17861.0, 17698.0];
        let rel = |v: &[f64]| relative_half_width(&summarize(v).unwrap());
        assert!(rel(&ring) < 0.0156 && rel(&overhead) < 0.0156);
        assert!(!converged(&ring, &overhead, 0.0156));
        // The same laps with the difference steady (each overhead 1400 ns below its ring):
        // at target though both halves wander more than the target allows.
        let wandering = [19000.0, 19400.0, 18800.0, 19600.0, 19200.0];
        let paired: Vec<f64> = wandering.iter().map(|r| r - 1400.0).collect();
        assert!(rel(&wandering) > 0.0156);
        assert!(converged(&wandering, &paired, 0.0156));
    }

    #[test]
    fn a_later_round_warms_up_for_a_quarter_of_the_first_rounds_floor() {
        let std = SamplingConfig::standard();
        let share = std.budget_ns / ROUNDS as u64;
        assert_eq!(
            round_warmup(&std, share, false, false),
            (100_000_000, 2 * 100_000_000)
        );
        assert_eq!(
            round_warmup(&std, share, true, false),
            (25_000_000, 200_000_000)
        );
        // The cap (a quarter of a long share) is the same for both calls.
        assert_eq!(
            round_warmup(&std, 4_000_000_000, true, false).1,
            1_000_000_000
        );
        let quick = SamplingConfig::quick();
        let (floor, cap) = round_warmup(&quick, quick.budget_ns / ROUNDS as u64, true, false);
        assert_eq!((floor, cap), (5_000_000, 40_000_000));
    }

    #[test]
    fn a_later_round_with_fresh_partners_warms_up_for_the_whole_floor() {
        for cfg in [SamplingConfig::standard(), SamplingConfig::quick()] {
            let share = cfg.budget_ns / ROUNDS as u64;
            let first = round_warmup(&cfg, share, false, true);
            assert_eq!(first.0, cfg.warmup_ns);
            assert_eq!(round_warmup(&cfg, share, true, true), first);
        }
    }

    #[test]
    fn the_steady_test_passes_a_drift_of_a_percent_per_window() {
        // A fresh partner's round trips drifting down 1% per window of batches pass the
        // steadiness test at every window: only the floor keeps them out of the samples.
        let drifting: Vec<f64> = (0..12).map(|i| 100.0 * 0.99f64.powi(i / 3)).collect();
        for n in 6..=drifting.len() {
            assert!(steady(&drifting[..n], WARM_WINDOW, WARM_TOLERANCE), "{n}");
        }
        // A step of 4% between windows does not pass.
        let step = [100.0, 100.0, 100.0, 96.0, 96.0, 96.0];
        assert!(!steady(&step, WARM_WINDOW, WARM_TOLERANCE));
    }

    #[test]
    fn a_later_round_of_a_measurement_with_partners_warms_up_for_the_whole_floor() {
        // The floor is a lower bound in real time: a later call of a measurement with a
        // partner cannot return before it, whatever the machine's load. (Without partners
        // the same call may return after a quarter of it; how soon depends on the machine,
        // so it is not asserted.)
        let cfg = SamplingConfig {
            warmup_ns: 80_000_000,
            target_sample_ns: 1_000_000,
            min_samples: 3,
            max_samples: 3,
            rel_ci_target: 1.0,
            budget_ns: 3_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        let me = Participant::this_thread("measuring thread", vec![]);
        let partner = Participant::thread("partner thread", me.tid + 1, vec![]);
        assert!(!Recorder::new(vec![me.clone()], EventSet::None).has_partners());
        let mut rec = Recorder::new(vec![me, partner], EventSet::None);
        assert!(rec.has_partners());
        let mut raw = synthetic(100);
        let slot = RoundSlot { index: 1, of: 3 };
        let t0 = std::time::Instant::now();
        sample(
            &cfg,
            0.0,
            Some(Round {
                slot,
                known: Some((1, 0)),
            }),
            &mut Workloads::alone(&mut raw),
            &mut rec,
        )
        .unwrap();
        assert!(t0.elapsed() >= std::time::Duration::from_millis(80));
    }

    #[test]
    fn steady_needs_two_agreeing_windows() {
        assert!(!steady(&[100.0, 100.0], 3, 0.03));
        assert!(steady(&[100.0; 6], 3, 0.03));
        // Still falling: 270 → 203 ns as in a warm-up that ended too early.
        assert!(!steady(
            &[270.0, 268.0, 265.0, 230.0, 205.0, 203.0],
            3,
            0.03
        ));
        // One outlier in a window does not move its median.
        assert!(steady(&[203.0, 900.0, 204.0, 203.0, 205.0, 204.0], 3, 0.03));
        assert!(!steady(&[], 0, 0.03));
    }

    #[test]
    fn rounds_stopped_at_the_round_target_pool_to_the_target() {
        assert!((round_target(0.01, 3) - 0.01 * 3f64.sqrt() * STOP_BIAS).abs() < 1e-12);
        assert_eq!(round_target(0.02, 1), 0.02);
        assert_eq!(round_target(0.02, 0), 0.02);
        // Noisy samples (uniform ±5% around 100): take each of three rounds until its own
        // half-width is within the round target, as take_round does, and pool them. Over 41
        // seeds the pooled interval must be about the target: the typical one within 10%,
        // the 90th percentile within 25% (stopping at the first narrow-enough interval and
        // the order statistics' steps scatter it). Without STOP_BIAS the typical pooled
        // interval was 1.24× the target; with each round at the full target, 0.72×.
        let target = 0.005;
        let mut ratios = Vec::new();
        for seed in 0..41u64 {
            let mut rng = crate::probes::mem::latency::SplitMix(seed);
            let mut next = || 95.0 + 10.0 * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let mut pooled = Vec::new();
            for _ in 0..3 {
                let mut round = Vec::new();
                while round.len() < 5 || !converged(&round, &[], round_target(target, 3)) {
                    round.push(next());
                }
                pooled.extend(round);
            }
            ratios.push(relative_half_width(&summarize(&pooled).unwrap()) / target);
        }
        ratios.sort_by(f64::total_cmp);
        let (typical, p90) = (ratios[20], ratios[36]);
        assert!((0.85..=1.1).contains(&typical), "{ratios:?}");
        assert!(p90 <= 1.25, "{ratios:?}");
    }

    #[test]
    fn warm_up_runs_until_the_workload_settles() {
        let cfg = SamplingConfig {
            warmup_ns: 0,
            target_sample_ns: 1_000,
            min_samples: 5,
            max_samples: 50,
            rel_ci_target: 0.01,
            budget_ns: 10_000_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        // Slow for the first 10 batches, then constant: a fixed count of 3 would stop early.
        let mut k = 0u64;
        let mut w = |iters: u64| -> Result<u64> {
            k += 1;
            Ok(iters * if k <= 10 { 300 - 10 * k } else { 200 })
        };
        assert!(first_warm_up(&cfg, &mut both(&mut w, None), (10, 0)).unwrap());
        assert!(k >= 10 + 2 * WARM_WINDOW as u64 - 3, "{k}");
    }

    #[test]
    fn warm_up_batches_are_a_quarter_of_a_sample_and_stop_when_steady() {
        let cfg = SamplingConfig {
            warmup_ns: 0,
            target_sample_ns: 1_000,
            min_samples: 5,
            max_samples: 50,
            rel_ci_target: 0.01,
            budget_ns: 10_000_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        let (mut raw_calls, mut base_calls) = (Vec::new(), Vec::new());
        let mut raw = |iters: u64| -> Result<u64> {
            raw_calls.push(iters);
            Ok(iters * 100)
        };
        let mut base = |iters: u64| -> Result<u64> {
            base_calls.push(iters);
            Ok(iters * 40)
        };
        assert!(first_warm_up(&cfg, &mut both(&mut raw, Some(&mut base)), (400, 1000)).unwrap());
        // A steady workload passes the test after exactly two windows, not at the cap.
        assert_eq!(raw_calls, vec![100; 2 * WARM_WINDOW]);
        assert_eq!(base_calls, vec![250; 2 * WARM_WINDOW]);
        // A sample of fewer iterations than the share still warms with one per batch.
        assert_eq!(warm_batch(3), 1);
        assert_eq!(warm_batch(0), 1);
    }

    #[test]
    fn auto_scale_reaches_target() {
        let mut w = synthetic(7);
        let iters = auto_scale(&mut w, 20_000_000).unwrap();
        let t = iters * 7;
        assert!(
            (19_000_000..=21_000_000).contains(&t),
            "{iters} iters -> {t} ns"
        );
        // A slow operation (1 ms) needs a handful of iterations, never zero.
        let mut slow = synthetic(1_000_000);
        let i = auto_scale(&mut slow, 20_000_000).unwrap();
        assert!((19..=21).contains(&i), "{i}");
        let mut slower = synthetic(50_000_000);
        assert_eq!(auto_scale(&mut slower, 20_000_000).unwrap(), 1);
    }

    #[test]
    fn one_slow_call_does_not_fix_a_tiny_count() {
        // 37 µs per iteration, but the first call at one iteration was preempted for 5 ms.
        let mut calls = 0;
        let mut w = |iters: u64| -> Result<u64> {
            calls += 1;
            Ok(if calls == 1 {
                5_000_000
            } else {
                iters * 37_000
            })
        };
        let iters = auto_scale(&mut w, 5_000_000).unwrap();
        assert!((130..=140).contains(&iters), "{iters}");
    }

    #[test]
    fn constant_workload_converges_and_interleaves() {
        let cfg = SamplingConfig {
            warmup_ns: 0,
            target_sample_ns: 1_000_000,
            min_samples: 5,
            max_samples: 50,
            rel_ci_target: 0.01,
            budget_ns: 10_000_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        let mut rec = Recorder::new(vec![], EventSet::Software);
        let mut raw = synthetic(100);
        let mut base = synthetic(40);
        let set = sample(
            &cfg,
            0.0,
            None,
            &mut both(&mut raw, Some(&mut base)),
            &mut rec,
        )
        .unwrap();
        assert_eq!(set.stop, StopReason::Converged);
        assert_eq!(set.raw.len(), set.baseline.len());
        // At least 3 samples in each of the 3 rounds.
        assert_eq!(set.raw.len(), 9);
        assert_eq!(set.rounds, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
        assert!(set.raw.iter().all(|&x| x == 100.0));
        assert!(set.baseline.iter().all(|&x| x == 40.0));
        // The second sample and every fourth after it carry perf counters and are kept apart.
        assert_eq!(set.evidence.len(), 3);
        assert_eq!(rec.iterations(), 12 * set.raw_iterations);
    }

    /// A figure that attaches no counters (`EventSet::None`) takes no evidence samples: they
    /// would attach nothing and their time would be thrown away. Every window is still one.
    #[test]
    fn a_figure_without_counters_takes_every_sample_as_a_figure_sample() {
        let cfg = SamplingConfig {
            warmup_ns: 0,
            target_sample_ns: 1_000_000,
            min_samples: 5,
            max_samples: 50,
            rel_ci_target: 0.01,
            budget_ns: 10_000_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        let mut rec = Recorder::new(vec![], EventSet::None);
        let mut raw = synthetic(100);
        let set = sample(&cfg, 0.0, None, &mut both(&mut raw, None), &mut rec).unwrap();
        assert_eq!(set.raw.len(), 9);
        assert!(set.evidence.is_empty());
        assert_eq!(rec.iterations(), 9 * set.raw_iterations);
    }

    #[test]
    fn one_round_of_a_spread_measurement_is_tagged_and_carries_evidence() {
        let cfg = SamplingConfig {
            warmup_ns: 0,
            target_sample_ns: 1_000_000,
            min_samples: 9,
            max_samples: 60,
            rel_ci_target: 0.01,
            budget_ns: 10_000_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        let mut rec = Recorder::new(vec![], EventSet::Software);
        let mut raw = synthetic(100);
        let slot = RoundSlot { index: 1, of: 3 };
        let set = sample(
            &cfg,
            0.0,
            Some(Round { slot, known: None }),
            &mut Workloads::alone(&mut raw),
            &mut rec,
        )
        .unwrap();
        // The round's share of the sample limits (9 / 3), all tagged as round 1.
        assert_eq!(set.raw.len(), 3);
        assert_eq!(set.rounds, [1, 1, 1]);
        assert_eq!(set.stop, StopReason::Converged);
        // Every round has evidence of its own: it is checked on its own.
        assert_eq!(set.evidence.len(), 1);
    }

    #[test]
    fn a_long_round_takes_at_most_its_share_of_evidence_samples() {
        let cfg = SamplingConfig {
            warmup_ns: 0,
            target_sample_ns: 1_000_000,
            min_samples: 60,
            max_samples: 300,
            rel_ci_target: 0.01,
            budget_ns: 10_000_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        let mut rec = Recorder::new(vec![], EventSet::Software);
        let mut raw = synthetic(100);
        let slot = RoundSlot { index: 0, of: 3 };
        let set = sample(
            &cfg,
            0.0,
            Some(Round { slot, known: None }),
            &mut Workloads::alone(&mut raw),
            &mut rec,
        )
        .unwrap();
        // 20 figure samples (60 / 3): every fourth would have made 6 evidence samples.
        assert_eq!(set.raw.len(), 20);
        assert_eq!(set.evidence.len(), EVIDENCE_PER_ROUND);
        assert_eq!(rec.iterations(), 22 * set.raw_iterations);
    }

    #[test]
    fn a_later_round_reuses_the_first_rounds_counts_without_scaling() {
        let cfg = SamplingConfig {
            warmup_ns: 0,
            target_sample_ns: 1_000_000,
            min_samples: 9,
            max_samples: 60,
            rel_ci_target: 0.01,
            budget_ns: 10_000_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        crate::engine::canary::set_tagging(false);
        let mut rec = Recorder::new(vec![], EventSet::Software);
        let mut seen = Vec::new();
        let mut raw = |iters: u64| -> Result<u64> {
            seen.push(iters);
            Ok(iters * 100)
        };
        let slot = RoundSlot { index: 1, of: 3 };
        let set = sample(
            &cfg,
            0.0,
            Some(Round {
                slot,
                known: Some((40, 0)),
            }),
            &mut Workloads::alone(&mut raw),
            &mut rec,
        )
        .unwrap();
        assert_eq!(set.raw_iterations, 40);
        // Warm-up batches of a quarter, then samples of 40: never auto_scale's first 1.
        assert!(seen.iter().all(|&i| i == 40 || i == 10), "{seen:?}");
        // Counts that do not fit the workloads (a baseline count without a baseline) are
        // not used: the round scales afresh, starting at one iteration.
        seen.clear();
        let mut raw = |iters: u64| -> Result<u64> {
            seen.push(iters);
            Ok(iters * 100)
        };
        sample(
            &cfg,
            0.0,
            Some(Round {
                slot,
                known: Some((40, 7)),
            }),
            &mut Workloads::alone(&mut raw),
            &mut rec,
        )
        .unwrap();
        assert_eq!(seen[0], 1);
    }

    #[test]
    fn the_memo_matches_by_position_and_identity() {
        let memo = ScaleMemo::default();
        memo.rewind();
        assert_eq!(memo.next("a"), (0, None));
        memo.keep(0, "a", 10, 20);
        assert_eq!(memo.next("b"), (1, None));
        memo.keep(1, "b", 30, 0);
        // The next call: same measurements in the same order find their counts.
        memo.rewind();
        assert_eq!(memo.next("a"), (0, Some((10, 20))));
        // A different measurement at a known position does not take another's count.
        assert_eq!(memo.next("c"), (1, None));
        memo.keep(1, "c", 5, 0);
        memo.rewind();
        memo.next("a");
        assert_eq!(memo.next("c"), (1, Some((5, 0))));
    }

    #[test]
    fn noisy_workload_stops_on_sample_limit_or_budget() {
        let cfg = SamplingConfig {
            warmup_ns: 0,
            target_sample_ns: 1_000,
            min_samples: 5,
            max_samples: 30,
            rel_ci_target: 0.0001,
            budget_ns: 10_000_000_000,
            evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
        };
        let mut rec = Recorder::new(vec![], EventSet::Software);
        let mut k = 0u64;
        let mut noisy = move |iters: u64| {
            k += 1;
            Ok(iters * (100 + (k * 7919) % 50))
        };
        let set = sample(&cfg, 0.0, None, &mut both(&mut noisy, None), &mut rec).unwrap();
        assert_eq!(set.stop, StopReason::SampleLimit);
        assert_eq!(set.raw.len(), 30);
    }
}
