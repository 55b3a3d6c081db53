//! Runs a plan: calibrates the clock, collects machine facts, runs each planned measurement
//! with a progress bar on a terminal, and assembles the Run. Ctrl-C stops at the next sample
//! boundary; partners are reaped by their guards and nothing partial is written.
//!
//! The plan runs in passes: pass 1 takes round 1 of every item, pass 2 round 2, ... so the
//! rounds of one measurement are a whole pass apart in time, and a burst of host noise hits
//! at most one of them (where it widens the interval, engine::merge) instead of all.

use super::common::MeasureOpts;
use crate::engine::estimate::MAKE_UP_SHARE;
use crate::engine::measure::Context;
use crate::error::{Error, Result};
use crate::model::{Measurement, Run, Skipped, SCHEMA_VERSION};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

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
    pub estimate: Option<std::time::Duration>,
    /// Why this item takes all its rounds in one call (None: one round per pass).
    pub once: Option<String>,
    /// How this item samples when its probe declares its own configuration (None: the
    /// command's), for its estimate.
    pub sampling: Option<crate::engine::sampler::SamplingConfig>,
    /// What its probe declares it takes beyond its samples, for its estimate.
    pub cost: crate::engine::estimate::Cost,
    /// Work that opens perf counters, taken after every item's figure samples (None: the
    /// item takes all its evidence in its calls).
    pub evidence: Option<EvidencePass>,
}

impl PlanItem {
    pub fn new(
        label: impl Into<String>,
        mut run: impl FnMut(&Context) -> Result<Measurement> + 'static,
    ) -> Self {
        PlanItem {
            label: label.into(),
            run: Box::new(move |ctx| run(ctx).map(|m| vec![m])),
            estimate: None,
            once: None,
            sampling: None,
            cost: crate::engine::estimate::Cost::UNKNOWN,
            evidence: None,
        }
    }

    /// This item cannot be re-entered round by round (its own repetitions or interleaving,
    /// a figure computed after sampling): it runs once, in the first pass, and its
    /// measurements say why their rounds are back to back.
    pub fn once(mut self, why: impl Into<String>) -> Self {
        self.once = Some(why.into());
        self
    }

    /// The sampling its probe declares (see [`PlanItem::sampling`]).
    pub fn with_sampling(mut self, s: crate::engine::sampler::SamplingConfig) -> Self {
        self.sampling = Some(s);
        self
    }

    /// What its probe declares it takes beyond its samples (see [`PlanItem::cost`]).
    pub fn with_cost(mut self, cost: crate::engine::estimate::Cost) -> Self {
        self.cost = cost;
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
    pub fn with_estimate(mut self, d: std::time::Duration) -> Self {
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
            cost: crate::engine::estimate::Cost::UNKNOWN,
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

/// How an item samples, for its estimate and the ETA: once (all rounds in one call) or
/// spread across the passes.
fn mode_of(item: &PlanItem) -> crate::engine::estimate::Mode {
    if item.once.is_some() {
        crate::engine::estimate::Mode::Once
    } else {
        crate::engine::estimate::Mode::Spread
    }
}

/// The plan's duration estimate: each item's expected time (engine::estimate), corrected by
/// this machine's past runs in the history when it exists (read only, never created).
fn estimate_plan(
    items: &[PlanItem],
    sampling: &crate::engine::sampler::SamplingConfig,
    opts: &MeasureOpts,
    host_key: &str,
) -> crate::engine::estimate::PlanEstimate {
    use crate::engine::estimate::{History, PlanEstimate, HISTORY_RUNS};
    let history = opts
        .db
        .path()
        .ok()
        .and_then(|p| crate::store::elapsed::past_item_times(&p, host_key, 4 * HISTORY_RUNS).ok())
        .map(|runs| History::from_runs(&runs))
        .unwrap_or_default();
    PlanEstimate::with_own_sampling(
        items.iter().map(|i| {
            (
                i.label.as_str(),
                i.estimate,
                mode_of(i),
                i.sampling.as_ref(),
                i.cost,
            )
        }),
        sampling,
        &history,
    )
}

/// The bar's style: item-rounds done of all, the current item, and an ETA from the item
/// estimates (not indicatif's linear extrapolation over items of very different lengths).
fn bar_style(
    eta: &std::sync::Arc<std::sync::Mutex<crate::engine::estimate::Eta>>,
) -> ProgressStyle {
    let eta = std::sync::Arc::clone(eta);
    // `wide_msg`: a long item label is cut to the terminal's width, so the bar stays one line
    // at 80 columns (a label with "(evidence)" after it reached 83).
    ProgressStyle::with_template("{bar:30} {pos}/{len} {wide_msg} (ETA {item_eta})")
        .expect("static template is valid")
        .with_key(
            "item_eta",
            move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let left = eta
                    .lock()
                    .map(|e| e.remaining_now(std::time::Instant::now()))
                    .unwrap_or(0.0);
                let _ = w.write_str(&crate::engine::estimate::format_eta(left));
            },
        )
}

/// Execute a plan and return the complete Run (or Interrupted).
pub fn execute(plan: Plan, opts: &MeasureOpts) -> Result<Run> {
    // Malformed or repeated labels are refused before anything is measured.
    super::common::labels(&opts.labels, None)?;
    crate::engine::interrupt::install();
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let sampling = opts.sampling();
    let n = plan.items.len();
    let show = !opts.quiet && std::io::stderr().is_terminal();
    // The PMU probe opens counters: it runs after the figures' samples (see with_evidence_pass).
    let mut machine = crate::machine::collect_without_pmu();
    let estimate = estimate_plan(&plan.items, &sampling, opts, &machine.host_key());
    if !opts.quiet {
        eprintln!("oscost: {}", estimate.line());
    }
    let modes: Vec<_> = plan.items.iter().map(mode_of).collect();
    let eta = std::sync::Arc::new(std::sync::Mutex::new(crate::engine::estimate::Eta::new(
        &estimate, &modes,
    )));
    let ctx = Context::new(sampling);

    let rounds = crate::engine::sampler::ROUNDS;
    let mut slots: Vec<Slot> = plan.items.into_iter().map(Slot::new).collect();
    let bar = progress_bar(slots.iter().map(|s| s.rounds as u64).sum(), show, &eta);
    // Each item's wall time over all its calls, for the run's item_times.
    let mut spent = vec![std::time::Duration::ZERO; slots.len()];
    let lock = || eta.lock().unwrap_or_else(|p| p.into_inner());
    let mut skipped = plan.skipped;
    let hook_free: Vec<bool> = slots.iter().map(|s| s.item.cost.hook_free).collect();
    let passes_started = std::time::Instant::now();
    let mut made_up = std::time::Duration::ZERO;
    for (pass, i) in schedule(&hook_free, rounds) {
        if pass == rounds {
            let allowance = passes_started.elapsed().saturating_sub(made_up) / MAKE_UP_SHARE;
            let best = fastest_so_far(&slots);
            let mut time = MakeUpTime {
                allowance,
                used: made_up,
            };
            make_up(&mut slots[i], &ctx, best, &mut time, &bar)?;
            made_up = time.used;
            continue;
        }
        let slot = &mut slots[i];
        if pass >= slot.rounds {
            continue;
        }
        bar.set_message(slot.item.label.clone());
        let mut call = if slot.rounds == 1 {
            ctx.clone()
        } else {
            ctx.in_round(pass as u32, slot.rounds as u32, &slot.scales)
        };
        call.evidence_later = slot.item.evidence.is_some();
        let t0 = std::time::Instant::now();
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
                    bar.set_length(bar.length().unwrap_or(0) - slot.runs_alone());
                }
                slot.taken.push((pass as u32, ms));
            }
            Err(Error::Interrupted) => {
                bar.abandon_with_message("interrupted");
                return Err(Error::Interrupted);
            }
            Err(Error::Environment(reason)) => {
                let left = slot.stop_at(pass, reason, &mut skipped);
                bar.set_length(bar.length().unwrap_or(0) - left);
                lock().cancel_after(pass, i);
            }
            Err(e) => return Err(e),
        }
        crate::engine::interrupt::check()?;
        bar.inc(1);
    }
    lock().make_up_over(made_up.as_secs_f64());
    crate::machine::add_pmu(&mut machine);
    // The probe opened counters on this task: the kernel's perf hooks linger after them too.
    crate::evidence::perf::note_closed_now();
    let measurements = conclude_with_evidence(slots, &ctx, &bar, &mut spent, n)?;
    bar.finish_and_clear();
    let taken = Taken {
        started_at,
        machine,
        clock: ctx.clock.clone(),
        measurements,
        skipped,
        item_times: item_times(&estimate, &spent, made_up),
    };
    assemble(taken, opts)
}

/// The run's item times: each item's own calls against its model, then the make-up rounds'
/// as their own entry (an item's history is its own rounds' time; the make-up rounds' is what
/// the estimate's make-up share learns from, engine::estimate::make_up_estimate).
fn item_times(
    estimate: &crate::engine::estimate::PlanEstimate,
    spent: &[std::time::Duration],
    made_up: std::time::Duration,
) -> Vec<crate::model::ItemTime> {
    let mut timings = crate::engine::estimate::Timings::default();
    for (e, t) in estimate.items.iter().zip(spent) {
        timings.record(e, *t);
    }
    timings.record(&estimate.make_up, made_up);
    timings.into_vec()
}

/// The order of the calls, as (pass, item): items whose figures take no perf counters
/// (`Cost::hook_free`) take all their rounds first, pass by pass, then the others pass by
/// pass; each group ends with a make-up pass (pass = `rounds`: [`make_up`], for the items
/// that need one), and evidence passes come after all of them. Why: perf counters keep the kernel's perf
/// scheduling hooks on for a second after they close (evidence::perf::HOOKS_LINGER_NS), so
/// a hook-free figure taken after an item with counters first waited for them (about 1.1 s
/// at each of its calls in `oscost run`) or paid them. The rounds of a hook-free item are
/// still a pass apart, among the other hook-free items.
fn schedule(hook_free: &[bool], rounds: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(hook_free.len() * rounds);
    for group in [true, false] {
        for pass in 0..rounds {
            out.extend(
                (0..hook_free.len())
                    .filter(|&i| hook_free[i] == group)
                    .map(|i| (pass, i)),
            );
        }
        out.extend(
            (0..hook_free.len())
                .filter(|&i| hook_free[i] == group)
                .map(|i| (rounds, i)),
        );
    }
    out
}

/// The item's make-up rounds: one more call for each of its planned rounds that ran on a
/// slowed core through (engine::canary::round_slowed, against the run's fastest reading so
/// far), at most one fewer than its rounds, each started only while the make-up rounds have
/// taken under `allowance` in all (`used`). Why: the figure leaves such a round out whole
/// (canary::split_in_rounds), and with two rounds left its t interval on their medians has
/// one degree of freedom (t = 12.7, against 4.3 with three): in paired runs on the VM
/// (twelve full runs' ctx items) that alone read ±10–27% where three
/// rounds read ±0.5–6%. A make-up round comes at the end of its item's group of passes, a
/// pass after the slowed round; one that fails for the environment leaves the planned rounds
/// as they are.
fn make_up(
    slot: &mut Slot,
    ctx: &Context,
    best: Option<f64>,
    time: &mut MakeUpTime,
    bar: &ProgressBar,
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
        bar.set_message(format!("{} (a slowed round again)", slot.item.label));
        bar.inc_length(1);
        let t0 = std::time::Instant::now();
        let result = (slot.item.run)(&call);
        time.used += t0.elapsed();
        bar.inc(1);
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
    allowance: std::time::Duration,
    used: std::time::Duration,
}

/// Whether every figure of the item, merged from the rounds taken so far (slowed rounds left
/// out as the figure leaves them), is already within the run's interval `target`. Why: a
/// make-up round is there to narrow the figure; one that is at target needs none. In paired
/// runs on a noisy host, 2 of the 19 full-run items that took make-up
/// rounds were already at ±0.7–0.8% without them, and read ±1.6–1.7% with them (replayed from
/// the recorded samples).
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

/// Every item's measurements, each item's evidence pass taken after all the figures (in plan
/// order; its time is added to the item's in `spent`).
fn conclude_with_evidence(
    slots: Vec<Slot>,
    ctx: &Context,
    bar: &ProgressBar,
    spent: &mut [std::time::Duration],
    n: usize,
) -> Result<Vec<Measurement>> {
    let mut measurements = Vec::with_capacity(n);
    for (i, mut slot) in slots.into_iter().enumerate() {
        let pass = slot.item.evidence.take();
        let label = slot.item.label.clone();
        let mut ms = slot.conclude()?;
        if let Some(mut pass) = pass {
            bar.set_message(format!("{label} (evidence)"));
            let t0 = std::time::Instant::now();
            for m in &mut ms {
                take_evidence(&mut pass, ctx, m)?;
            }
            spent[i] += t0.elapsed();
        }
        measurements.extend(ms);
    }
    Ok(measurements)
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

/// What a plan's passes took, before it becomes a Run.
struct Taken {
    started_at: String,
    machine: crate::machine::Machine,
    clock: crate::model::ClockInfo,
    measurements: Vec<Measurement>,
    skipped: Vec<Skipped>,
    item_times: Vec<crate::model::ItemTime>,
}

/// The Run of what was taken: labelled, and named by its content (run_id).
fn assemble(t: Taken, opts: &MeasureOpts) -> Result<Run> {
    let Taken {
        started_at,
        machine,
        clock,
        measurements,
        skipped,
        item_times,
    } = t;
    let labels = super::common::labels(&opts.labels, machine.hostname.as_deref())?;
    let mut run = Run {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        command: std::env::args().collect(),
        machine,
        clock: Some(clock),
        measurements,
        skipped,
        complete: true,
        labels,
        run_id: None,
        item_times,
        warnings: Vec::new(),
    };
    run.measurements
        .iter_mut()
        .for_each(crate::model::Measurement::settle_status);
    run.run_id = Some(crate::store::import::derive_uid(&run));
    // The host name, the CPU model (the hypervisor's to choose) and the command line can hold
    // control characters like any run file: made inert before any view, figure or file of
    // the command sees them.
    Ok(crate::input::inert(&run))
}

/// The bar: item-rounds done of all, drawn on a terminal only.
fn progress_bar(
    total: u64,
    show: bool,
    eta: &std::sync::Arc<std::sync::Mutex<crate::engine::estimate::Eta>>,
) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(total),
        if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(bar_style(eta));
    // No steady tick: its thread would make every probe run in a process of two threads,
    // and a system call's figure is defined for one (probes::syscall). The bar redraws as
    // rounds finish.
    bar
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
    scales: crate::engine::sampler::ScaleMemo,
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
        let rounds = if item.once.is_some() {
            1
        } else {
            crate::engine::sampler::ROUNDS
        };
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

/// A run that measured nothing because every request was refused (or impossible here) is
/// an error (exit 2) that names why, never a silent success.
pub fn nothing_refused_only(run: &Run) -> Result<()> {
    if !run.measurements.is_empty() || run.skipped.is_empty() {
        return Ok(());
    }
    let why: Vec<String> = run
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.probe, s.reason))
        .collect();
    Err(Error::usage(format!(
        "nothing was measured: {}",
        why.join("; ")
    )))
}

/// What a command adds to the common way out: its own text instead of the standard table
/// (the sweep and memory-latency reports), an `analysis` object added to the run's JSON, and
/// extra files (SVG plots) checked by [`MeasureOpts::check_outputs_and`] before measuring.
#[derive(Default)]
pub struct Extras {
    /// Printed instead of the clock line, machine warnings and table.
    pub text: Option<String>,
    /// Printed after the table (and `--explain`): a command's own detail tables.
    pub after: Option<String>,
    /// Added to the `--json` output as `analysis` (and kept in the saved run's JSON file only).
    pub analysis: Option<serde_json::Value>,
    /// Further files to write, e.g. `--svg`.
    pub files: Vec<(std::path::PathBuf, Vec<u8>)>,
}

impl Extras {
    /// A family's report ([`Shown`]), its one figure written to `svg` (a command's
    /// `--svg FILE`) when given.
    ///
    /// [`Shown`]: crate::report::family::Shown
    pub fn one_figure(shown: crate::report::family::Shown, svg: Option<&std::path::Path>) -> Self {
        let files = match (svg, shown.figures.into_iter().next()) {
            (Some(p), Some((_, figure))) => vec![(p.to_path_buf(), figure.into_bytes())],
            _ => Vec::new(),
        };
        Extras {
            text: shown.text,
            after: Some(shown.after).filter(|a| !a.is_empty()),
            analysis: shown.analysis,
            files,
        }
    }

    /// A family's figures (`STEM.svg`) and tables (by their names) as files in `dir` (a
    /// command's `--svg-dir`); none without one.
    pub fn in_dir(
        shown: &crate::report::family::Shown,
        dir: Option<&std::path::Path>,
    ) -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let Some(d) = dir else {
            return Vec::new();
        };
        let figures = shown
            .figures
            .iter()
            .map(|(stem, svg)| (d.join(format!("{stem}.svg")), svg.clone().into_bytes()));
        let tables = shown
            .tables
            .iter()
            .map(|(name, text)| (d.join(name), text.clone().into_bytes()));
        figures.chain(tables).collect()
    }
}

/// The run with each value's interval widened by the run-to-run drift the history shows
/// (compare::interval), when there is a history to read: the `--db` or `OSCOST_DB`
/// the user named, or the default one when this run is to be saved there. Read only; a
/// history that does not exist is not created. With `--no-save` and no database named,
/// the run is left as it is.
fn with_history(run: &Run, opts: &MeasureOpts) -> Run {
    let mut run = run.clone();
    if !opts.no_save || opts.db.explicit() {
        let history = super::compare::history_runs(&opts.db, &[]);
        crate::compare::interval::widen_with_history(&mut run, &history);
        crate::engine::canary::judge_run(&mut run, &history);
    }
    run
}

/// Print the table, write the requested files, save to history and choose the exit code:
/// the one way out of every measuring command.
pub fn finish(run: &Run, opts: &MeasureOpts) -> Result<i32> {
    finish_with(run, opts, Extras::default())
}

/// [`finish`] with a command's detail tables after the standard table, and its extra files.
pub fn finish_after(
    run: &Run,
    opts: &MeasureOpts,
    after: String,
    files: Vec<(std::path::PathBuf, Vec<u8>)>,
) -> Result<i32> {
    finish_with(
        run,
        opts,
        Extras {
            after: Some(after),
            files,
            ..Extras::default()
        },
    )
}

/// [`finish`] with a command's own text, JSON analysis and extra files.
///
/// The run is kept first (the history, or a run file under unsaved/), before anything is
/// printed or written, so nothing that can end the process afterwards (a closed or full
/// standard output, a file size limit) costs the run; then the table, then the files. A
/// failed output is an error of that output only: every other output is still attempted.
pub fn finish_with(run: &Run, opts: &MeasureOpts, extras: Extras) -> Result<i32> {
    nothing_refused_only(run)?;
    let run = &with_history(run, opts);
    let kept = (!opts.no_save && run.complete).then(|| keep(run, opts));
    let table = crate::report::screen::measured(
        run,
        &crate::report::term::Term::stdout(),
        extras.text.as_deref(),
        extras.after.as_deref(),
        crate::report::screen::Detail::asked(opts.verbose, opts.explain),
    );
    let mut failed = Vec::new();
    let closed = match super::pipe::print_out(table.as_bytes()) {
        Ok(()) => false,
        Err(super::pipe::Unprinted::Closed) => true,
        Err(super::pipe::Unprinted::Failed(e)) => {
            failed.push(Error::io("standard output", e));
            false
        }
    };
    let outputs = opts.outputs();
    failed.extend(outputs.write_each(&super::outputs::RunOut {
        run,
        analysis: extras.analysis.as_ref(),
    }));
    failed.extend(outputs.write_late(&extras.files));
    if let Some(e) = kept.and_then(|k| tell_kept(k, opts)) {
        failed.push(e);
    }
    let invalid = run.measurements.iter().filter(|m| !m.valid).count();
    if invalid > 0 && !opts.quiet {
        eprintln!("oscost: {invalid} measurement(s) invalid: see the reasons above");
    }
    if closed {
        // Everything is kept and written: end as a closed pipe ends a Unix tool.
        super::pipe::end_closed();
    }
    // Each failure on its line; the last is the command's error (exit 2).
    if let Some(last) = failed.pop() {
        for e in failed {
            eprintln!("oscost: {e}");
        }
        return Err(last);
    }
    Ok(if opts.strict && invalid > 0 { 1 } else { 0 })
}

/// Was `p` just written as a regular file (not a stream such as /dev/null)?
fn written(p: &std::path::Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file())
}

/// Where a run to be saved went.
enum Kept {
    /// No history to save to (no place for the default one), nor a directory to keep it in.
    Nowhere(Error),
    Went {
        saved: crate::store::recovery::Saved,
        db: std::path::PathBuf,
    },
}

/// Saves the run to the history, or (when that fails after measuring) keeps it in a run
/// file under the data directory; says nothing yet ([`tell_kept`] does, after the outputs).
fn keep(run: &Run, opts: &MeasureOpts) -> Kept {
    use crate::store::recovery::{default_keep_dir, save_or_keep, LONG_WAIT};
    let db = match opts.db.path() {
        Ok(db) => db,
        Err(e) => return Kept::Nowhere(e),
    };
    // Kept under the data directory only: never in the current directory, which may be a
    // source tree or anyone's.
    let keep = default_keep_dir();
    let dirs: Vec<&std::path::Path> = keep.iter().map(|p| p.as_path()).collect();
    let waits = (std::time::Duration::from_secs(5), LONG_WAIT);
    Kept::Went {
        saved: save_or_keep(run, &db, &dirs, waits, opts.quiet),
        db,
    }
}

/// Says where the run went. With the default database a run that is not in the history is
/// a warning (the results are complete and kept); with an explicit --db or OSCOST_DB the
/// user asked for it, so it is an error, returned.
fn tell_kept(kept: Kept, opts: &MeasureOpts) -> Option<Error> {
    use crate::store::recovery::Saved;
    let (saved, db) = match kept {
        Kept::Nowhere(e) => {
            eprintln!("oscost: warning: not saved to history: {e}");
            return None;
        }
        Kept::Went { saved, db } => (saved, db),
    };
    let explain = saved.explain().map(|line| match (&saved, &opts.json) {
        // Nowhere to keep it, but the run is in the --json file the user asked for.
        (Saved::Lost { .. }, Some(json)) if written(json) => format!(
            "{line} and the --json file {}; import that with: oscost history import {} --db {}",
            json.display(),
            crate::store::recovery::shell_word(json),
            crate::store::recovery::shell_word(&db)
        ),
        _ => line,
    });
    match (&saved, explain) {
        (Saved::Stored { id, db }, _) => {
            if !opts.quiet {
                eprintln!("oscost: saved as run {id} in {}", db.display());
            }
            None
        }
        (_, Some(line)) if opts.db.explicit() => Some(Error::env(line)),
        (_, line) => {
            eprintln!("oscost: warning: {}", line.unwrap_or_default());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::measure::{measure, Spec};
    use crate::evidence::perf::EventSet;
    use clap::Parser;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Which job was called, in which round.
    type CallLog = Rc<RefCell<Vec<(&'static str, Option<u32>)>>>;

    #[derive(Parser)]
    struct Opts {
        #[command(flatten)]
        o: MeasureOpts,
    }

    /// A job measuring a synthetic workload (`ns` per iteration) through the engine, logging
    /// `(label, round)` at each call and failing with `fail` at the given round. Its samples
    /// are tagged as taken on a fast core (the canary's reading 1.0, the run's fastest): the
    /// real canary would let the host decide whether a round is slowed and taken again.
    fn job(label: &'static str, ns: u64, log: &CallLog, fail: Option<(u32, Error)>) -> PlanItem {
        let log = Rc::clone(log);
        let mut fail = fail;
        PlanItem::new(label, move |ctx| {
            let round = ctx.round.map(|r| r.index);
            log.borrow_mut().push((label, round));
            if fail.as_ref().is_some_and(|(r, _)| Some(*r) == round) {
                return Err(fail.take().unwrap().1);
            }
            let mut w = |iters: u64| -> Result<u64> { Ok(iters * ns) };
            let spec = Spec::new(label, "ns/op", "ns/op", 1.0).events_set(EventSet::Software);
            let mut m = measure(
                ctx,
                spec,
                crate::engine::measure::Participants::new(vec![], vec![]),
                crate::engine::measure::Workloads {
                    raw: &mut w,
                    baseline: None,
                },
                |_| (vec![crate::engine::checks::at_most("ok", 1.0, 0.0)], vec![]),
            )?;
            m.sample_canary = vec![1.0; m.samples.len()];
            m.canary_fastest = Some(1.0);
            Ok(m)
        })
    }

    #[test]
    fn rounds_run_in_passes_and_merge_into_one_measurement_each() {
        let opts = Opts::parse_from(["t", "--quick", "--quiet", "--no-save"]).o;
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut plan = Plan::default();
        plan.push(job("a", 100, &log, None));
        plan.push(job(
            "skipped",
            100,
            &log,
            Some((0, Error::env("no such thing"))),
        ));
        plan.push(job("lost", 300, &log, Some((1, Error::env("gone")))));
        plan.push(job("once", 200, &log, None).once("its own loop"));
        let run = execute(plan, &opts).unwrap();
        assert_eq!(
            *log.borrow(),
            [
                ("a", Some(0)),
                ("skipped", Some(0)),
                ("lost", Some(0)),
                ("once", None),
                ("a", Some(1)),
                ("lost", Some(1)),
                ("a", Some(2)),
            ]
        );
        // Skipped in the first pass: skipped with its reason, never re-entered.
        assert_eq!(run.skipped[0].probe, "skipped");
        assert_eq!(run.measurements.len(), 3);
        let a = &run.measurements[0];
        assert_eq!(a.probe, "a");
        let mut tags = a.sample_rounds.clone();
        tags.dedup();
        assert_eq!(tags, [0, 1, 2]);
        assert_eq!(a.value.as_ref().unwrap().median, 100.0);
        assert!(a.valid);
        // A round lost after the first: the rounds taken stand, and it says why.
        let lost = &run.measurements[1];
        assert!(lost.sample_rounds.iter().all(|&r| r == 0));
        assert!(
            lost.warnings
                .iter()
                .any(|w| crate::report::remarks::words(w) == "round 2 of 3 not taken: gone"),
            "{:?}",
            lost.warnings
        );
        // An item that runs once takes its rounds back to back and says why.
        let once = &run.measurements[2];
        let mut tags = once.sample_rounds.clone();
        tags.dedup();
        assert_eq!(tags, [0, 1, 2]);
        assert!(once.notes.iter().any(|n| n.ends_with("its own loop")));
    }

    /// [`job`] whose samples in round `slowed` are tagged as taken on a slowed core (2× the
    /// run's fastest reading, 1.0) and read twice as long, the others as fast; round 2 reads
    /// `1 + spread` times as long as the other fast rounds (its figure then needs a third).
    fn slowed_in(label: &'static str, log: &CallLog, slowed: u32, spread: f64) -> PlanItem {
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
                m.sample_canary = vec![tag; m.samples.len()];
                m.canary_fastest = Some(1.0);
            }
            Ok(ms)
        });
        inner
    }

    #[test]
    fn a_round_slowed_through_is_taken_again_after_the_passes() {
        let opts = Opts::parse_from(["t", "--quick", "--quiet", "--no-save"]).o;
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut plan = Plan::default();
        plan.push(slowed_in("slowed", &log, 1, 0.1));
        plan.push(slowed_in("steady", &log, 9, 0.1));
        plan.push(slowed_in("once", &log, 0, 0.1).once("its own loop"));
        let run = execute(plan, &opts).unwrap();
        let calls: Vec<_> = log
            .borrow()
            .iter()
            .filter(|(l, _)| *l == "slowed")
            .cloned()
            .collect();
        assert_eq!(
            calls,
            [
                ("slowed", Some(0)),
                ("slowed", Some(1)),
                ("slowed", Some(2)),
                ("slowed", Some(3))
            ]
        );
        // The make-up round is the last call of the passes; no other item takes one.
        assert_eq!(log.borrow().last(), Some(&("slowed", Some(3))));
        assert_eq!(log.borrow().len(), 8);
        // The figure: rounds 0, 2 and 3 (100 ns); round 1 left out whole.
        let m = &run.measurements[0];
        assert_eq!(m.value.as_ref().unwrap().median, 100.0);
        let mut tags = m.sample_rounds.clone();
        tags.dedup();
        assert_eq!(tags, [0, 1, 2, 3]);
        let kept = crate::engine::canary::figure_view(m);
        let mut tags = kept.sample_rounds.clone();
        tags.dedup();
        assert_eq!(tags, [0, 2, 3]);
        // The make-up round's time is its own entry in the item times, after the items'.
        let labels: Vec<&str> = run.item_times.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "slowed",
                "steady",
                "once",
                crate::engine::estimate::MAKE_UP_LABEL
            ]
        );
    }

    #[test]
    fn no_make_up_round_starts_past_its_allowance() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let ctx = Context::new(crate::engine::sampler::SamplingConfig::quick());
        let mut slot = Slot::new(slowed_in("slowed", &log, 1, 0.1));
        // A make-up call is never the measurement's last round (once-per-measurement work).
        assert!(ctx.in_round(2, 3, &slot.scales).is_last_round());
        assert!(!ctx.in_make_up_round(3, 3, &slot.scales).is_last_round());
        for r in 0..3 {
            let call = ctx.in_round(r, 3, &slot.scales);
            let ms = (slot.item.run)(&call).unwrap();
            slot.taken.push((r, ms));
        }
        let bar = ProgressBar::hidden();
        let zero = std::time::Duration::ZERO;
        let mut time = MakeUpTime::default();
        make_up(&mut slot, &ctx, Some(1.0), &mut time, &bar).unwrap();
        assert_eq!(slot.taken.len(), 3);
        // No reading to judge by: none either.
        time.allowance = std::time::Duration::from_secs(3600);
        make_up(&mut slot, &ctx, None, &mut time, &bar).unwrap();
        assert_eq!(slot.taken.len(), 3);
        make_up(&mut slot, &ctx, Some(1.0), &mut time, &bar).unwrap();
        assert_eq!(slot.taken.len(), 4);
        assert!(time.used > zero);
    }

    #[test]
    fn a_figure_at_target_without_its_slowed_round_takes_no_make_up() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let ctx = Context::new(crate::engine::sampler::SamplingConfig::quick());
        let hour = std::time::Duration::from_secs(3600);
        let bar = ProgressBar::hidden();
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
            make_up(&mut slot, &ctx, Some(1.0), &mut time, &bar).unwrap();
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

    #[test]
    fn an_interrupt_in_a_later_pass_stops_the_run() {
        let opts = Opts::parse_from(["t", "--quick", "--quiet", "--no-save"]).o;
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut plan = Plan::default();
        plan.push(job("a", 100, &log, Some((2, Error::Interrupted))));
        assert!(matches!(execute(plan, &opts), Err(Error::Interrupted)));
    }
}
