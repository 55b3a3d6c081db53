//! Runs a plan's items through the engine: in passes, pass 1 taking round 1 of every item,
//! pass 2 round 2, ... so the rounds of one measurement are a whole pass apart in time, and a
//! burst of host noise hits at most one of them (where it widens the interval,
//! engine::merge) instead of all. Then the make-up rounds (a round slowed through is taken
//! again), then each item's evidence pass, then each item's rounds merged into its
//! measurements. The command (cli) turns what this returns into a Run and its outputs.

use super::estimate::{ItemShape, Mode, MAKE_UP_SHARE};
use super::eta::Eta;
use super::measure::Context;
use super::sampler::{SamplingConfig, ROUNDS};
use crate::error::{Error, Result};
use crate::model::{Measurement, Skipped};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A deferred measurement (or an interleaved group of them), given the engine context. It is
/// called once per round (the context says which round; it sets up and tears down its
/// partners at each call), or once for an item that takes its rounds in one call.
pub type Job = Box<dyn FnMut(&Context) -> Result<Vec<Measurement>>>;

/// An item's evidence pass: run once per measurement after every item's figure samples (see
/// [`PlanItem::with_evidence_pass`]), adding to the concluded measurement.
pub type EvidencePass = Box<dyn FnMut(&Context, &mut Measurement) -> Result<()>>;

/// One planned measurement, or a group whose variants must be interleaved with each other.
pub struct PlanItem {
    pub label: String,
    pub run: Job,
    /// How long this item is expected to take (not its upper bound), when it does not sample
    /// with the command's own budget (its own loop, a working set to fill, a memory hog to
    /// start); None = the model of its kind in engine::estimate.
    pub estimate: Option<Duration>,
    /// Why this item takes all its rounds in one call (None: one round per pass).
    pub once: Option<String>,
    /// How this item samples when its probe declares its own configuration (None: the
    /// command's), for its estimate.
    pub sampling: Option<SamplingConfig>,
    /// Its figure's samples take no perf counters and must not carry the kernel's perf hooks:
    /// it runs before every item that opens counters ([`schedule`]), so it finds the hooks
    /// off and does not wait for them.
    pub hook_free: bool,
    /// Work that opens perf counters, taken after every item's figure samples (None: the
    /// item takes all its evidence in its calls).
    pub evidence: Option<EvidencePass>,
}

impl PlanItem {
    fn mode(&self) -> Mode {
        if self.once.is_some() {
            Mode::Once
        } else {
            Mode::Spread
        }
    }

    pub fn new(
        label: impl Into<String>,
        mut run: impl FnMut(&Context) -> Result<Measurement> + 'static,
    ) -> Self {
        Self::group(label, move |ctx| run(ctx).map(|m| vec![m]))
    }

    /// This item cannot be re-entered round by round (its own repetitions or interleaving,
    /// a figure computed after sampling): it runs once, in the first pass, and its
    /// measurements say why their rounds are back to back.
    pub fn once(mut self, why: impl Into<String>) -> Self {
        self.once = Some(why.into());
        self
    }

    /// The sampling its probe declares (see [`PlanItem::sampling`]).
    pub fn with_sampling(mut self, s: SamplingConfig) -> Self {
        self.sampling = Some(s);
        self
    }

    /// Its figure takes no perf counters (see [`PlanItem::hook_free`]).
    pub fn hook_free(mut self) -> Self {
        self.hook_free = true;
        self
    }

    /// An evidence pass the run takes after every item's figure samples, once per
    /// measurement (the item's calls get `Context::evidence_later` and leave it out). Why:
    /// perf counters keep the kernel's perf scheduling hooks on at every context switch for a
    /// second after they close, so a pass that opens them must not come just before samples
    /// that are to be free of them (see [`schedule`]).
    pub fn with_evidence_pass(
        mut self,
        pass: impl FnMut(&Context, &mut Measurement) -> Result<()> + 'static,
    ) -> Self {
        self.evidence = Some(Box::new(pass));
        self
    }

    /// This item's own duration estimate (see [`PlanItem::estimate`]).
    pub fn with_estimate(mut self, d: Duration) -> Self {
        self.estimate = Some(d);
        self
    }

    /// A group of measurements taken together (e.g. lab variants interleaved rep by rep).
    pub fn group(
        label: impl Into<String>,
        run: impl FnMut(&Context) -> Result<Vec<Measurement>> + 'static,
    ) -> Self {
        PlanItem {
            label: label.into(),
            run: Box::new(run),
            estimate: None,
            once: None,
            sampling: None,
            hook_free: false,
            evidence: None,
        }
    }
}

/// A plan: what to measure, and what was known up front to be impossible here.
#[derive(Default)]
pub struct Plan {
    pub items: Vec<PlanItem>,
    pub skipped: Vec<Skipped>,
}

impl Plan {
    /// The calls the passes take before any skip or make-up round (the bar's length).
    pub fn calls(&self) -> u64 {
        self.items
            .iter()
            .map(|i| if i.once.is_some() { 1 } else { ROUNDS as u64 })
            .sum()
    }

    /// How each item samples, for the estimate and the ETA: once (all rounds in one call)
    /// or spread across the passes.
    pub fn modes(&self) -> Vec<Mode> {
        self.items.iter().map(PlanItem::mode).collect()
    }

    /// The items as the estimate sees them, sampling with `sampling` unless they declare
    /// their own.
    pub fn shapes<'a>(&'a self, sampling: &'a SamplingConfig) -> Vec<ItemShape<'a>> {
        self.items
            .iter()
            .map(|i| ItemShape {
                label: &i.label,
                own: i.estimate,
                mode: i.mode(),
                sampling: i.sampling.as_ref().unwrap_or(sampling),
            })
            .collect()
    }

    pub fn push(&mut self, item: PlanItem) {
        self.items.push(item);
    }
    pub fn skip(&mut self, probe: &str, reason: impl Into<String>) {
        self.skipped.push(Skipped {
            probe: probe.into(),
            reason: reason.into(),
        });
    }
}
/// Where a plan's progress shows (the command's bar); every method does nothing unless
/// the shower needs it.
pub trait Progress {
    /// The call about to run.
    fn call(&self, _what: &str) {}
    /// A call ran.
    fn ran(&self) {}
    /// The plan takes `delta` calls more (a make-up round) or fewer (an item skipped, or
    /// one that took its rounds in one call).
    fn resize(&self, _delta: i64) {}
    /// A call was interrupted (Ctrl-C): the run stops.
    fn interrupted(&self) {}
}

/// Progress shown nowhere.
pub struct Unseen;

impl Progress for Unseen {}

/// A plan's figure passes, taken: each item's rounds, before their evidence passes.
pub struct Passes {
    slots: Vec<Slot>,
    /// What was not measured: the plan's own skips and the items the environment refused.
    pub skipped: Vec<Skipped>,
    /// Each item's wall time over all its calls (its evidence pass added by
    /// [`Passes::conclude`]).
    pub spent: Vec<Duration>,
    /// The make-up rounds' wall time.
    pub made_up: Duration,
}

/// Take the figure passes of `plan` and its make-up rounds, telling `eta` of every call.
/// An item refused by the environment in its first call is skipped; in a later call, its
/// rounds taken stand. An interruption stops the run.
pub fn take_passes(
    plan: Plan,
    ctx: &Context,
    eta: &Mutex<Eta>,
    progress: &dyn Progress,
) -> Result<Passes> {
    let rounds = ROUNDS;
    let mut slots: Vec<Slot> = plan.items.into_iter().map(Slot::new).collect();
    let mut spent = vec![Duration::ZERO; slots.len()];
    let lock = || eta.lock().unwrap_or_else(|p| p.into_inner());
    let mut skipped = plan.skipped;
    let hook_free: Vec<bool> = slots.iter().map(|s| s.item.hook_free).collect();
    let passes_started = Instant::now();
    let mut made_up = Duration::ZERO;
    for (pass, i) in schedule(&hook_free, rounds) {
        if pass == rounds {
            let allowance = passes_started.elapsed().saturating_sub(made_up) / MAKE_UP_SHARE;
            let best = fastest_so_far(&slots);
            let mut time = MakeUpTime {
                allowance,
                used: made_up,
            };
            make_up(&mut slots[i], ctx, best, &mut time, progress)?;
            made_up = time.used;
            continue;
        }
        let slot = &mut slots[i];
        if pass >= slot.rounds {
            continue;
        }
        progress.call(&slot.item.label);
        let mut call = if slot.rounds == 1 {
            ctx.clone()
        } else {
            ctx.in_round(pass as u32, slot.rounds as u32, &slot.scales)
        };
        call.evidence_later = slot.item.evidence.is_some();
        let t0 = Instant::now();
        lock().start(pass, i, t0);
        let result = (slot.item.run)(&call);
        spent[i] += t0.elapsed();
        let whole = pass == 0
            && slot.rounds > 1
            && result
                .as_ref()
                .is_ok_and(|ms| !ms.iter().all(sampled_one_round));
        lock().finish(t0.elapsed().as_secs_f64(), whole);
        match result {
            Ok(ms) => {
                if whole {
                    progress.resize(-(slot.runs_alone() as i64));
                }
                slot.taken.push((pass as u32, ms));
            }
            Err(Error::Interrupted) => {
                progress.interrupted();
                return Err(Error::Interrupted);
            }
            Err(Error::Environment(reason)) => {
                let left = slot.stop_at(pass, reason, &mut skipped);
                progress.resize(-(left as i64));
                lock().cancel_after(pass, i);
            }
            Err(e) => return Err(e),
        }
        crate::engine::interrupt::check()?;
        progress.ran();
    }
    lock().make_up_over(made_up.as_secs_f64());
    Ok(Passes {
        slots,
        skipped,
        spent,
        made_up,
    })
}

impl Passes {
    /// Every item's measurements, each item's evidence pass taken after all the figures
    /// (in plan order; its time is added to the item's in `spent`).
    pub fn conclude(&mut self, ctx: &Context, progress: &dyn Progress) -> Result<Vec<Measurement>> {
        let slots = std::mem::take(&mut self.slots);
        let mut measurements = Vec::with_capacity(slots.len());
        for (i, mut slot) in slots.into_iter().enumerate() {
            let pass = slot.item.evidence.take();
            let label = slot.item.label.clone();
            let mut ms = slot.conclude()?;
            if let Some(mut pass) = pass {
                progress.call(&format!("{label} (evidence)"));
                let t0 = Instant::now();
                for m in &mut ms {
                    take_evidence(&mut pass, ctx, m)?;
                }
                self.spent[i] += t0.elapsed();
            }
            measurements.extend(ms);
        }
        Ok(measurements)
    }
}

/// The order of the calls, as (pass, item): items whose figures take no perf counters
/// ([`PlanItem::hook_free`]) take all their rounds first, pass by pass, then the others pass by
/// pass; each group ends with a make-up pass (pass = `rounds`: [`make_up`], for the items
/// that need one), and evidence passes come after all of them. Why: perf counters keep the kernel's perf
/// scheduling hooks on for a second after they close (evidence::perf::HOOKS_LINGER_NS), so
/// a hook-free figure taken after an item with counters first waited for them or paid them.
/// The rounds of a hook-free item are
/// still a pass apart, among the other hook-free items.
fn schedule(hook_free: &[bool], rounds: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(hook_free.len() * rounds);
    for group in [true, false] {
        // Passes 0 to rounds - 1, then the make-up pass.
        for pass in 0..=rounds {
            out.extend(
                (0..hook_free.len())
                    .filter(|&i| hook_free[i] == group)
                    .map(|i| (pass, i)),
            );
        }
    }
    out
}

/// The item's make-up rounds: one more call for each of its planned rounds that ran on a
/// slowed core through (engine::canary::round_slowed, against the run's fastest reading so
/// far), at most one fewer than its rounds, each started only while the make-up rounds have
/// taken under `allowance` in all (`used`). Why: the figure leaves such a round out whole
/// (canary::split_in_rounds), and with two rounds left its t interval on their medians has
/// one degree of freedom (t = 12.7, against 4.3 with three). A make-up round comes at the end of its item's group of passes, a
/// pass after the slowed round; one that fails for the environment leaves the planned rounds
/// as they are.
fn make_up(
    slot: &mut Slot,
    ctx: &Context,
    best: Option<f64>,
    time: &mut MakeUpTime,
    progress: &dyn Progress,
) -> Result<()> {
    let Some(best) = best else {
        return Ok(());
    };
    if slot.rounds < 2 || figures_at_target(slot, ctx.sampling.rel_ci_target) {
        return Ok(());
    }
    let slowed = slot
        .taken
        .iter()
        .filter(|(_, ms)| {
            ms.iter()
                .any(|m| crate::engine::canary::round_slowed(m, best))
        })
        .count();
    for k in 0..slowed.min(slot.rounds - 1) {
        if time.used >= time.allowance {
            break;
        }
        crate::engine::interrupt::check()?;
        let index = (slot.planned + k) as u32;
        let mut call = ctx.in_make_up_round(index, slot.planned as u32, &slot.scales);
        call.evidence_later = slot.item.evidence.is_some();
        progress.call(&format!("{} (a slowed round again)", slot.item.label));
        progress.resize(1);
        let t0 = Instant::now();
        let result = (slot.item.run)(&call);
        time.used += t0.elapsed();
        progress.ran();
        match result {
            Ok(ms) => slot.taken.push((index, ms)),
            Err(Error::Environment(_)) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The make-up rounds' time: what they may take in all, and what they have taken.
#[derive(Debug, Clone, Copy, Default)]
struct MakeUpTime {
    allowance: Duration,
    used: Duration,
}

/// Whether every figure of the item, merged from the rounds taken so far (slowed rounds left
/// out as the figure leaves them), is already within the run's interval `target`. Why: a
/// make-up round is there to narrow the figure; one that is at target needs none, and
/// another round can widen it.
fn figures_at_target(slot: &Slot, target: f64) -> bool {
    let groups = slot.taken.first().map_or(0, |(_, ms)| ms.len());
    groups > 0
        && (0..groups).all(|i| {
            let rounds: Vec<(u32, Measurement)> = slot
                .taken
                .iter()
                .filter_map(|(pass, ms)| ms.get(i).map(|m| (*pass, m.clone())))
                .collect();
            crate::engine::merge::merge_rounds(rounds)
                .and_then(|m| m.value)
                .is_some_and(|v| crate::engine::stats::relative_half_width(&v) <= target)
        })
}

/// The fastest core-speed canary reading of the rounds taken so far (engine::canary).
fn fastest_so_far(slots: &[Slot]) -> Option<f64> {
    slots
        .iter()
        .flat_map(|s| &s.taken)
        .flat_map(|(_, ms)| ms)
        .filter_map(|m| m.canary_fastest)
        .reduce(f64::min)
}

/// One measurement's evidence pass: an interruption stops the run; any other failure keeps
/// the measurement, which says that its evidence pass was not taken and why.
fn take_evidence(pass: &mut EvidencePass, ctx: &Context, m: &mut Measurement) -> Result<()> {
    crate::engine::interrupt::check()?;
    match pass(ctx, m) {
        Ok(()) => Ok(()),
        Err(Error::Interrupted) => Err(Error::Interrupted),
        Err(e) => {
            m.warnings
                .push(crate::model::Remark::evidence_pass_lost(e.to_string()));
            Ok(())
        }
    }
}

/// One plan item through the passes: the measurements of each round it took.
struct Slot {
    item: PlanItem,
    /// Rounds this item takes (1 for an item that runs once; cut short by a later skip).
    rounds: usize,
    /// Rounds it was planned to take.
    planned: usize,
    taken: Vec<(u32, Vec<Measurement>)>,
    /// Rounds that could not be taken after the first, and why.
    lost: Vec<(u32, String)>,
    /// The iteration counts its first round scaled to, for the later rounds.
    scales: super::sampler::ScaleMemo,
}

impl Slot {
    /// The job took its samples its own way (its own loop): it is not re-entered. Returns
    /// the rounds the bar no longer waits for.
    fn runs_alone(&mut self) -> u64 {
        let dropped = self.rounds as u64 - 1;
        self.rounds = 1;
        self.item.once = Some("its samples are taken by its own loop, in one call".into());
        dropped
    }

    /// The environment refused the call of `pass`: skipped when it is the first (never
    /// re-entered); later, the rounds taken stand and the measurement says which round is
    /// missing and why. Returns the rounds the bar no longer waits for.
    fn stop_at(&mut self, pass: usize, reason: String, skipped: &mut Vec<Skipped>) -> u64 {
        let left = (self.rounds - pass - 1) as u64;
        if pass == 0 {
            skipped.push(Skipped {
                probe: self.item.label.clone(),
                reason,
            });
        } else {
            self.lost.push((pass as u32, reason));
        }
        self.rounds = pass;
        left
    }

    /// An item before its first pass: all its rounds ahead (one for an item that runs once).
    fn new(item: PlanItem) -> Slot {
        let rounds = if item.once.is_some() { 1 } else { ROUNDS };
        Slot {
            rounds,
            planned: rounds,
            item,
            taken: Vec::new(),
            lost: Vec::new(),
            scales: Default::default(),
        }
    }

    /// The item's measurements: each one's rounds merged (engine::merge), in the order of
    /// the first pass.
    fn conclude(self) -> Result<Vec<Measurement>> {
        let mut passes = self.taken.into_iter();
        let Some((_, first)) = passes.next() else {
            return Ok(Vec::new());
        };
        let mut groups: Vec<Vec<(u32, Measurement)>> =
            first.into_iter().map(|m| vec![(0, m)]).collect();
        for (pass, ms) in passes {
            for (i, m) in ms.into_iter().enumerate() {
                let g = groups
                    .get_mut(i)
                    .filter(|g| g[0].1.probe == m.probe && g[0].1.inputs() == m.inputs());
                match g {
                    Some(g) => g.push((pass, m)),
                    None => {
                        return Err(Error::env(format!(
                            "{}: round {} returned measurements that do not match the first \
                             round's",
                            self.item.label,
                            pass + 1
                        )))
                    }
                }
            }
        }
        let total = self.planned;
        let mut out = Vec::with_capacity(groups.len());
        for g in groups {
            let label = g[0].1.probe.clone();
            let mut m = crate::engine::merge::merge_rounds(g)
                .ok_or_else(|| Error::env(format!("{label}: no usable samples were taken")))?;
            for (pass, why) in &self.lost {
                m.warnings.push(crate::model::Remark::round_lost(
                    *pass as usize + 1,
                    total,
                    why.clone(),
                ));
            }
            if let Some(why) = &self.item.once {
                m.notes.push(format!(
                    "not re-entered round by round across the run (its rounds or repetitions are back to back): {why}"
                ));
            }
            out.push(m);
        }
        Ok(out)
    }
}

/// Whether a measurement of a first-pass call sampled exactly one round (round 0) through
/// the engine's sampler: only such a job honours the round it is given.
fn sampled_one_round(m: &Measurement) -> bool {
    !m.sample_rounds.is_empty() && m.sample_rounds.iter().all(|&r| r == 0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::measure::{measure, Spec};
    use crate::evidence::perf::EventSet;
    use crate::units::{Per, Unit};
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Which job was called, in which round.
    pub(crate) type CallLog = Rc<RefCell<Vec<(&'static str, Option<u32>)>>>;

    /// The canary reading of a fast core in these jobs: far below any real reading, which
    /// other tests of the process may have recorded (the merge judges rounds by the
    /// process's fastest reading, engine::canary::best).
    pub(crate) const FAST: f64 = 1e-6;

    /// A job measuring a synthetic workload (`ns` per iteration) through the engine, logging
    /// `(label, round)` at each call and failing with `fail` at the given round. Its samples
    /// are tagged as taken on a fast core (the canary's reading [`FAST`], the run's fastest): the
    /// real canary would let the host decide whether a round is slowed and taken again.
    pub(crate) fn job(
        label: &'static str,
        ns: u64,
        log: &CallLog,
        fail: Option<(u32, Error)>,
    ) -> PlanItem {
        let log = Rc::clone(log);
        let mut fail = fail;
        PlanItem::new(label, move |ctx| {
            let round = ctx.round.map(|r| r.index);
            log.borrow_mut().push((label, round));
            if fail.as_ref().is_some_and(|(r, _)| Some(*r) == round) {
                return Err(fail.take().unwrap().1);
            }
            let mut w = |iters: u64| -> Result<u64> { Ok(iters * ns) };
            let spec = Spec::new(label, Unit::ns(Per::Op), Unit::ns(Per::Op), 1.0)
                .events_set(EventSet::Software);
            let mut m = measure(
                ctx,
                spec,
                crate::engine::measure::Participants::new(vec![], vec![]),
                crate::engine::measure::Workloads::alone(&mut w),
                |_| (vec![crate::engine::checks::at_most("ok", 1.0, 0.0)], vec![]),
            )?;
            m.sample_canary = vec![FAST; m.samples.len()];
            m.canary_fastest = Some(FAST);
            Ok(m)
        })
    }

    /// [`job`] whose samples in round `slowed` are tagged as taken on a slowed core (2× the
    /// run's fastest reading, [`FAST`]) and read twice as long, the others as fast; round 2 reads
    /// `1 + spread` times as long as the other fast rounds (its figure then needs a third).
    pub(crate) fn slowed_in(
        label: &'static str,
        log: &CallLog,
        slowed: u32,
        spread: f64,
    ) -> PlanItem {
        let mut inner = job(label, 100, log, None);
        let mut run = std::mem::replace(&mut inner.run, Box::new(|_| Ok(vec![])));
        inner.run = Box::new(move |ctx| {
            let mut ms = run(ctx)?;
            let round = ctx.round.map_or(0, |r| r.index);
            for m in &mut ms {
                let tag = if round == slowed { 2.0 } else { 1.0 };
                let drift = if round == 2 { 1.0 + spread } else { 1.0 };
                // A slowed core read slower.
                m.samples.iter_mut().for_each(|x| *x *= tag * drift);
                m.sample_canary = vec![FAST * tag; m.samples.len()];
                m.canary_fastest = Some(FAST);
            }
            Ok(ms)
        });
        inner
    }

    #[test]
    fn no_make_up_round_starts_past_its_allowance() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let ctx = Context::new(SamplingConfig::quick());
        let mut slot = Slot::new(slowed_in("slowed", &log, 1, 0.1));
        // A make-up call is never the measurement's last round (once-per-measurement work).
        assert!(ctx.in_round(2, 3, &slot.scales).is_last_round());
        assert!(!ctx.in_make_up_round(3, 3, &slot.scales).is_last_round());
        for r in 0..3 {
            let call = ctx.in_round(r, 3, &slot.scales);
            let ms = (slot.item.run)(&call).unwrap();
            slot.taken.push((r, ms));
        }
        let zero = std::time::Duration::ZERO;
        let mut time = MakeUpTime::default();
        make_up(&mut slot, &ctx, Some(FAST), &mut time, &Unseen).unwrap();
        assert_eq!(slot.taken.len(), 3);
        // No reading to judge by: none either.
        time.allowance = std::time::Duration::from_secs(3600);
        make_up(&mut slot, &ctx, None, &mut time, &Unseen).unwrap();
        assert_eq!(slot.taken.len(), 3);
        make_up(&mut slot, &ctx, Some(FAST), &mut time, &Unseen).unwrap();
        assert_eq!(slot.taken.len(), 4);
        assert!(time.used > zero);
    }

    #[test]
    fn a_figure_at_target_without_its_slowed_round_takes_no_make_up() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let ctx = Context::new(SamplingConfig::quick());
        let hour = std::time::Duration::from_secs(3600);
        // Round 1 slowed through; rounds 0 and 2 agree exactly (spread 0) or by 10%.
        for (spread, made_up) in [(0.0, 0), (0.1, 1)] {
            let mut slot = Slot::new(slowed_in("slowed", &log, 1, spread));
            for r in 0..3 {
                let ms = (slot.item.run)(&ctx.in_round(r, 3, &slot.scales)).unwrap();
                slot.taken.push((r, ms));
            }
            assert_eq!(
                figures_at_target(&slot, ctx.sampling.rel_ci_target),
                made_up == 0
            );
            let mut time = MakeUpTime {
                allowance: hour,
                ..MakeUpTime::default()
            };
            make_up(&mut slot, &ctx, Some(FAST), &mut time, &Unseen).unwrap();
            assert_eq!(slot.taken.len(), 3 + made_up, "spread {spread}");
        }
    }

    #[test]
    fn hook_free_items_take_all_their_rounds_before_items_with_counters() {
        let order = schedule(&[false, true, false, true], 3);
        assert_eq!(order.len(), 16);
        // Items 1 and 3 (hook-free), pass by pass and their make-up pass (3), then 0 and 2.
        assert_eq!(
            order,
            vec![
                (0, 1),
                (0, 3),
                (1, 1),
                (1, 3),
                (2, 1),
                (2, 3),
                (3, 1),
                (3, 3),
                (0, 0),
                (0, 2),
                (1, 0),
                (1, 2),
                (2, 0),
                (2, 2),
                (3, 0),
                (3, 2)
            ]
        );
        // None hook-free: the plain passes, then the make-up pass.
        assert_eq!(
            schedule(&[false, false], 2),
            vec![(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
        );
    }
}
