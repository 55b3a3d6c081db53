//! The core-speed canary: a short throughput-bound loop timed next to the samples, to tell
//! when the measuring CPU's core is slowed by something no check of this machine's tasks can
//! see: an SMT sibling running someone else's work (on bare metal, a busy hyperthread
//! sibling; in a VM, the host placing another tenant's thread on the same physical core),
//! or a lower clock.
//!
//! Why: a latency-bound loop hides a shared core; a throughput-bound one shows it, as kernel
//! entry and the scheduler's paths do. A host's state can flip within 0.1–10 s, so an untagged
//! median mixes the two states in a share that varies from run to run.
//!
//! Each raw sample is tagged with the most recent reading (one at most every
//! [`EVERY_NS`]); samples tagged more than [`SLOWED`] × the fastest reading of the process
//! ran on a slowed core. derive::derive_judged takes the figure from the others when enough
//! remain and says what was left out.

use crate::evidence::clock::now_ns;
use crate::model::{Remark, RemarkKind};
use crate::units::Unit;
use std::sync::atomic::{AtomicU64, Ordering};

/// Iterations of one reading: about 25 µs at 0.8 ns each; a reading is the faster of two,
/// so an interrupt in one does not tag a sample as slowed.
pub const ITERS: u64 = 30_000;

/// At most one reading per this many ns of sampling (about 1% of the time at 50 µs a reading).
pub const EVERY_NS: u64 = 5_000_000;

/// A reading this much slower than the fastest of the process marks a slowed core: fast
/// readings scatter by up to about 13%, slowed ones read 25% slower and more.
pub const SLOWED: f64 = 1.15;

/// At least this share of a measurement's samples must be on a fast core for the figure to
/// be taken from those alone; with fewer the figure keeps every sample and says so.
pub const MIN_FAST_SHARE: f64 = 0.25;

/// The fastest reading of this process, as f64 bits (f64::INFINITY until the first).
static BEST_BITS: AtomicU64 = AtomicU64::new(0x7ff0_0000_0000_0000);

/// One reading in ns per iteration: eight independent add/xor chains, kept in registers.
pub fn read() -> f64 {
    let once = || {
        let t0 = now_ns();
        let x = spin(ITERS);
        let t = now_ns() - t0;
        std::hint::black_box(x);
        t as f64 / ITERS as f64
    };
    let r = once().min(once());
    record(r);
    r
}

/// Eight independent chains: a core can retire them in parallel, so a sibling competing for
/// its ports slows them, where one dependent chain would not notice.
#[inline(never)]
fn spin(iters: u64) -> u64 {
    let (mut a, mut b, mut c, mut d) = (1u64, 2u64, 3u64, 4u64);
    let (mut e, mut f, mut g, mut h) = (5u64, 6u64, 7u64, 8u64);
    for i in 0..iters {
        a = a.wrapping_add(i);
        b ^= i;
        c = c.wrapping_add(a);
        d ^= b;
        e = e.wrapping_add(i);
        f ^= e;
        g = g.wrapping_add(c);
        h ^= d;
        // Keeps the chains in the loop (no closed form, no vectorising) without memory traffic.
        (a, b, c, d) = std::hint::black_box((a, b, c, d));
    }
    a ^ b ^ c ^ d ^ e ^ f ^ g ^ h
}

thread_local! {
    /// Whether the sampler tags samples on this thread (see [`set_tagging`]).
    static TAGGING: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Turn tagging off (or on again) on this thread: a test of the sampler's own logic with a
/// synthetic workload must not depend on how busy the test machine's cores are.
pub fn set_tagging(on: bool) {
    TAGGING.with(|t| t.set(on));
}

/// Whether the sampler tags samples on this thread.
pub fn tagging() -> bool {
    TAGGING.with(|t| t.get())
}

/// The tag for each sample of one sampling loop: a fresh reading when [`EVERY_NS`] has
/// passed since the last one, else the last one.
#[derive(Debug, Default)]
pub struct Tagger {
    last: Option<(u64, f64)>,
}

impl Tagger {
    /// The tag for the sample about to be taken; None when tagging is off on this thread.
    pub fn tag(&mut self) -> Option<f64> {
        tagging().then(|| self.tag_at(now_ns(), read))
    }

    /// [`Tagger::tag`] at time `now`, taking a reading with `read` when one is due.
    fn tag_at(&mut self, now: u64, read: impl FnOnce() -> f64) -> f64 {
        match self.last {
            Some((at, r)) if now < at + EVERY_NS => r,
            _ => self.last.insert((now, read())).1,
        }
    }
}

/// Fold a reading into the process's fastest.
pub fn record(reading: f64) {
    if !(reading.is_finite() && reading > 0.0) {
        return;
    }
    let _ = BEST_BITS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
        (reading < f64::from_bits(bits)).then_some(reading.to_bits())
    });
}

/// The fastest reading of this process so far (None before the first).
pub fn best() -> Option<f64> {
    let b = f64::from_bits(BEST_BITS.load(Ordering::Relaxed));
    b.is_finite().then_some(b)
}

/// Whether a sample tagged `reading` ran on a slowed core, given the fastest reading.
pub fn slowed(reading: f64, best: f64) -> bool {
    reading > best * SLOWED
}

/// Whether the canary speaks for a probe with these parameters: it reads the measuring CPU
/// only, so a probe whose time depends on two CPUs (its "cpus" name more than one: a
/// cross-CPU round trip, an RPC between cores) cannot be judged by it. A probe without
/// "cpus" runs where the measuring thread runs.
pub fn applies(params: &std::collections::BTreeMap<String, serde_json::Value>) -> bool {
    let mut cpus: Vec<u64> = params
        .get("cpus")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|c| c.as_u64()).collect())
        .unwrap_or_default();
    cpus.sort_unstable();
    cpus.dedup();
    cpus.len() <= 1
}

/// The note of a probe the canary does not judge ([`applies`]).
pub const SPANS_CPUS: &str = "core-speed canary: does not apply (the probe spans two CPUs and \
     the canary reads one); every sample counts";

/// How a measurement's samples split by their canary tags.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// Per sample: on a fast core (tagged fast, and not in a round slowed whole:
    /// [`split_in_rounds`]).
    pub fast: Vec<bool>,
    pub slowed: usize,
    /// The slowest tag over the fastest reading.
    pub worst: f64,
    /// Whether the fast samples are enough to stand alone ([`MIN_FAST_SHARE`], ≥ 3).
    pub enough_fast: bool,
    /// The median of the samples tagged slowed, and of the others.
    pub slowed_median: f64,
    pub fast_median: f64,
    /// Whether the figure leaves the slowed samples out: enough fast ones remain and the
    /// slowed ones read slower than them. Samples that read faster than those kept are never
    /// left out: a slowed core does not explain them (the canary reads one CPU; a probe's
    /// time may depend on another).
    pub leave_out: bool,
}

/// Split samples by their tags (`tags[i]` for `samples[i]`); None when the tags do not cover
/// the samples one to one or none is slowed.
pub fn split(tags: &[f64], samples: &[f64], best: f64) -> Option<Split> {
    split_in_rounds(tags, samples, &[], best)
}

/// [`split`], where a round (`rounds[i]` is sample i's round; a list that does not pair one
/// to one is not read) in which fewer than [`MIN_FAST_SHARE`] of the samples were tagged fast
/// counts as slowed whole. Why: such a round is a slowed stretch, and its few samples tagged
/// fast are its edges. A tag is read before its raw sample and the paired baseline runs after
/// it, so an edge sample's difference can read far off and, alone, set its round's median.
pub fn split_in_rounds(tags: &[f64], samples: &[f64], rounds: &[u32], best: f64) -> Option<Split> {
    let n_samples = samples.len();
    if tags.len() != n_samples || n_samples == 0 || best.is_nan() || best <= 0.0 {
        return None;
    }
    let mut fast: Vec<bool> = tags.iter().map(|&t| !slowed(t, best)).collect();
    if rounds.len() == n_samples {
        slow_rounds_whole(&mut fast, rounds);
    }
    let slowed = fast.iter().filter(|f| !**f).count();
    if slowed == 0 {
        return None;
    }
    let n_fast = n_samples - slowed;
    let worst = tags.iter().cloned().fold(0.0, f64::max) / best;
    // A side with no samples has no median (NaN: never printed, never compared true).
    let median = |want| {
        let side = select(samples, &fast, want);
        if side.is_empty() {
            f64::NAN
        } else {
            super::stats::median(&side)
        }
    };
    let (slowed_median, fast_median) = (median(false), median(true));
    let enough_fast = n_fast >= 3 && n_fast as f64 >= MIN_FAST_SHARE * n_samples as f64;
    Some(Split {
        leave_out: enough_fast && slowed_median > fast_median,
        enough_fast,
        fast,
        slowed,
        worst,
        slowed_median,
        fast_median,
    })
}

/// Mark every sample of a round as slowed when fewer than [`MIN_FAST_SHARE`] of the round's
/// samples are fast (`rounds[i]` is the round of `fast[i]`).
fn slow_rounds_whole(fast: &mut [bool], rounds: &[u32]) {
    let mut ids: Vec<u32> = rounds.to_vec();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let members: Vec<usize> = (0..rounds.len()).filter(|&i| rounds[i] == id).collect();
        let n_fast = members.iter().filter(|&&i| fast[i]).count();
        if (n_fast as f64) < MIN_FAST_SHARE * members.len() as f64 {
            members.iter().for_each(|&i| fast[i] = false);
        }
    }
}

/// Whether one round's measurement ran on a slowed core through: the canary speaks for it
/// ([`applies`]) and fewer than [`MIN_FAST_SHARE`] of its samples were tagged fast against
/// `best`, so the figure will leave the round out whole ([`split_in_rounds`]).
pub fn round_slowed(m: &crate::model::Measurement, best: f64) -> bool {
    let n = m.samples.len();
    if !applies(&m.params) || n == 0 || m.sample_canary.len() != n {
        return false;
    }
    let fast = m
        .sample_canary
        .iter()
        .filter(|&&t| !slowed(t, best))
        .count();
    (fast as f64) < MIN_FAST_SHARE * n as f64
}

/// The remark on a split: what share ran slowed, what it read (in `unit`), and whether the
/// figure leaves the slowed samples out (report::remarks words it).
pub fn warning_for(s: &Split, unit: &Unit) -> Remark {
    let kind = if !s.enough_fast {
        RemarkKind::CoreSlowedTooFewFast
    } else if s.leave_out {
        RemarkKind::CoreSlowedLeftOut
    } else {
        RemarkKind::CoreSlowedKept
    };
    let n = s.fast.len();
    Remark::core_slowed(
        kind,
        &unit.to_string(),
        &[
            s.slowed as f64,
            n as f64,
            (n - s.slowed) as f64,
            s.worst,
            s.slowed_median,
            s.fast_median,
        ],
    )
}

/// The items of `v` whose `mask` entry is `want` (one mask entry per item).
pub fn select<T: Copy>(v: &[T], mask: &[bool], want: bool) -> Vec<T> {
    v.iter()
        .zip(mask)
        .filter(|(_, &m)| m == want)
        .map(|(x, _)| *x)
        .collect()
}

/// The raw samples, their paired baseline samples and their rounds taken on a fast core;
/// a baseline or rounds list that does not pair one to one with `raw` is kept whole.
pub fn keep_fast(
    s: &Split,
    raw: &[f64],
    baseline: &[f64],
    rounds: &[u32],
) -> (Vec<f64>, Vec<f64>, Vec<u32>) {
    let paired = |n: usize| n == raw.len();
    (
        select(raw, &s.fast, true),
        if paired(baseline.len()) {
            select(baseline, &s.fast, true)
        } else {
            baseline.to_vec()
        },
        if paired(rounds.len()) {
            select(rounds, &s.fast, true)
        } else {
            rounds.to_vec()
        },
    )
}

/// Word the canary's warning again from `m`'s samples as they are now, after a probe
/// rescaled them (fault: per mapping → per page), so the values it quotes are in `raw_unit`.
pub fn rewarn(m: &mut crate::model::Measurement) {
    let Some(s) = m
        .canary_fastest
        .filter(|_| applies(&m.params))
        .and_then(|best| split_in_rounds(&m.sample_canary, &m.samples, &m.sample_rounds, best))
    else {
        return;
    };
    let w = warning_for(&s, &m.raw_unit);
    m.warnings.retain(|w| !is_canary(w));
    m.warnings.push(w);
}

/// Whether a remark is the canary's split (of this version or as a version 1 sentence).
fn is_canary(r: &Remark) -> bool {
    matches!(
        r.kind,
        RemarkKind::CoreSlowedLeftOut
            | RemarkKind::CoreSlowedTooFewFast
            | RemarkKind::CoreSlowedKept
    ) || (r.is_legacy() && r.subject.starts_with("core slowed for "))
}

/// The split a measurement's figure was derived with, if samples were left out of it.
fn figure_split(m: &crate::model::Measurement) -> Option<Split> {
    if !applies(&m.params) {
        return None;
    }
    let best = m.canary_fastest?;
    split_in_rounds(&m.sample_canary, &m.samples, &m.sample_rounds, best).filter(|s| s.leave_out)
}

/// `m` with only the samples its figure comes from (raw, paired baseline, rounds): what a
/// comparison or a contract check must use, since the summaries were derived from them.
pub fn figure_view(m: &crate::model::Measurement) -> crate::model::Measurement {
    let mut v = m.clone();
    if let Some(s) = figure_split(m) {
        (v.samples, v.baseline_samples, v.sample_rounds) =
            keep_fast(&s, &m.samples, &m.baseline_samples, &m.sample_rounds);
        v.sample_canary = select(&m.sample_canary, &s.fast, true);
    }
    v
}

/// The fastest canary reading of a run's measurements.
pub fn run_fastest(run: &crate::model::Run) -> Option<f64> {
    run.measurements
        .iter()
        .filter_map(|m| m.canary_fastest)
        .reduce(f64::min)
}

/// The warning for a run whose fastest reading is slowed against the same machine's past
/// runs (`history`, already filtered to this machine): within one run nothing can be flagged
/// when the slow state lasts the whole run, so the history's fastest is the reference. None
/// when the run was not slowed, or nothing to compare.
pub fn slowed_run(fastest: Option<f64>, history: &[f64]) -> Option<Remark> {
    let f = fastest?;
    let best = history.iter().cloned().reduce(f64::min)?;
    slowed(f, best).then(|| Remark::slowed_run(f / best, history.len()))
}

/// Add [`slowed_run`]'s warning to `run`, judged against the history runs of the same
/// machine (same facts).
pub fn judge_run(run: &mut crate::model::Run, history: &[crate::model::Run]) {
    let past: Vec<f64> = history
        .iter()
        .filter(|h| crate::machine::facts::differences(&h.machine, &run.machine).is_empty())
        .filter(|h| h.run_id.is_none() || h.run_id != run.run_id)
        .filter_map(run_fastest)
        .collect();
    // Judged again (a saved run is in its own history): the newer judgement replaces it.
    run.warnings.retain(|w| {
        w.kind != RemarkKind::SlowedRun
            && !(w.is_legacy() && w.subject.starts_with("the core was slowed throughout"))
    });
    run.warnings.extend(slowed_run(run_fastest(run), &past));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::remarks::{brief, words};
    use crate::units::Per;

    /// A recorded `run --quick` to edit the canary fields of.
    fn fixture_run() -> crate::model::Run {
        crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap()
    }

    #[test]
    fn a_tagger_reuses_its_reading_within_the_interval_and_is_silent_when_off() {
        let mut t = Tagger::default();
        assert_eq!(t.tag_at(1_000, || 0.9), 0.9);
        // Within EVERY_NS of the last reading: the same tag, no new reading.
        assert_eq!(t.tag_at(1_000 + EVERY_NS - 1, || unreachable!()), 0.9);
        assert_eq!(t.tag_at(1_000 + EVERY_NS, || 1.3), 1.3);
        set_tagging(false);
        assert_eq!(t.tag(), None);
        set_tagging(true);
        assert!(t.tag().is_some());
    }

    #[test]
    fn a_reading_is_positive_and_lowers_the_best() {
        let r = read();
        assert!(r > 0.0 && r.is_finite(), "{r}");
        assert!(best().unwrap() <= r);
        record(f64::NAN);
        record(-1.0);
        assert!(best().unwrap() <= r);
    }

    #[test]
    fn samples_tagged_slower_than_the_threshold_are_split_off() {
        // Readings recorded on the VM: fast state 0.82–0.93, slowed 1.06–1.54.
        let tags = [0.83, 0.93, 1.09, 1.49, 0.82, 0.84];
        let samples = [175.0, 176.0, 240.0, 241.0, 174.0, 175.0];
        let s = split(&tags, &samples, 0.82).unwrap();
        assert_eq!(s.fast, vec![true, true, false, false, true, true]);
        assert_eq!(s.slowed, 2);
        assert!((s.worst - 1.49 / 0.82).abs() < 1e-9);
        assert!(s.enough_fast && s.leave_out);
        // Nothing slowed, tags missing or not one per sample: no split.
        assert_eq!(split(&[0.83, 0.9], &[1.0, 1.0], 0.82), None);
        assert_eq!(split(&[], &samples, 0.82), None);
        assert_eq!(split(&tags, &samples[..5], 0.82), None);
        // Mostly slowed: the fast ones are too few to stand alone.
        let tags = [1.3, 1.3, 1.3, 1.3, 1.3, 0.82, 0.83, 1.3, 1.3, 1.3, 1.3, 1.3];
        let samples = [
            240.0, 240.0, 240.0, 240.0, 240.0, 176.0, 176.0, 240.0, 240.0, 240.0, 240.0, 240.0,
        ];
        let s = split(&tags, &samples, 0.82).unwrap();
        assert!(!s.enough_fast && !s.leave_out);
        let w = words(&warning_for(&s, &Unit::NS));
        assert!(
            w.contains("10 of 12 samples") && w.contains("figure from all"),
            "{w}"
        );
    }

    #[test]
    fn a_round_with_under_a_quarter_of_its_samples_fast_counts_as_slowed_whole() {
        let tags = [
            0.82, 0.82, 0.82, 0.82, // round 0: fast
            0.82, 1.3, 1.3, 1.3, 1.3, // round 1: one of five fast (20%)
            0.82, 1.3, 1.3, 1.3, // round 2: one of four fast (25%)
        ];
        let samples = [1.0; 13];
        let rounds = [0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2];
        let s = split_in_rounds(&tags, &samples, &rounds, 0.82).unwrap();
        let mut want = vec![true; 4];
        want.extend([false; 5]);
        want.extend([true, false, false, false]);
        assert_eq!(s.fast, want);
        assert_eq!(s.slowed, 8);
        // Rounds that do not pair one to one with the samples: the tags alone.
        let t = split_in_rounds(&tags, &samples, &rounds[1..], 0.82).unwrap();
        assert_eq!(t, split(&tags, &samples, 0.82).unwrap());
        assert_eq!(t.slowed, 7);
    }

    #[test]
    fn a_run_slowed_throughout_is_told_by_the_history() {
        // This run's fastest 1.30 against past runs' 0.83 and 0.85: slowed throughout.
        let w = words(&slowed_run(Some(1.30), &[0.85, 0.83]).unwrap());
        assert!(w.contains("1.57×") && w.contains("last 2 run(s)"), "{w}");
        // As fast as the past (within the threshold), no history, or no readings: nothing.
        assert_eq!(slowed_run(Some(0.90), &[0.83]), None);
        assert_eq!(slowed_run(Some(1.30), &[]), None);
        assert_eq!(slowed_run(None, &[0.83]), None);
    }

    #[test]
    fn judge_run_compares_with_the_same_machines_past_runs_only() {
        let fixture = |fastest: f64, id: &str| {
            let mut r = fixture_run();
            r.measurements[0].canary_fastest = Some(fastest);
            r.run_id = Some(id.into());
            r
        };
        let mut run = fixture(1.3, "now");
        judge_run(&mut run, &[fixture(0.83, "a"), fixture(0.85, "b")]);
        assert_eq!(run.warnings.len(), 1, "{:?}", run.warnings);
        assert!(words(&run.warnings[0]).contains("slowed throughout"));
        // Judged twice (the run is in its own history once saved): still one warning, and
        // the run itself is not its own reference.
        let itself = run.clone();
        judge_run(&mut run, &[fixture(0.83, "a"), itself]);
        assert_eq!(run.warnings.len(), 1);
        // Another machine's fast runs say nothing about this one.
        let mut other = fixture(0.83, "o");
        other.machine.kernel.release = Some("7.0.0".into());
        let mut run = fixture(1.3, "now");
        judge_run(&mut run, &[other]);
        assert!(run.warnings.is_empty());
        // A run as fast as its history: nothing.
        let mut run = fixture(0.84, "now");
        judge_run(&mut run, &[fixture(0.83, "a")]);
        assert!(run.warnings.is_empty());
    }

    #[test]
    fn the_figure_view_holds_the_samples_the_summary_was_derived_from() {
        let mut m = fixture_run().measurements.remove(0);
        m.samples = vec![175.0, 240.0, 176.0, 177.0];
        m.baseline_samples = vec![1.0, 2.0, 1.0, 1.0];
        m.sample_rounds = vec![0, 1, 1, 2];
        m.sample_canary = vec![0.83, 1.3, 0.84, 0.83];
        m.canary_fastest = Some(0.83);
        let v = figure_view(&m);
        assert_eq!(v.samples, vec![175.0, 176.0, 177.0]);
        assert_eq!(v.baseline_samples, vec![1.0, 1.0, 1.0]);
        assert_eq!(v.sample_rounds, vec![0, 1, 2]);
        // Untagged: unchanged.
        m.canary_fastest = None;
        assert_eq!(figure_view(&m).samples.len(), 4);
    }

    #[test]
    fn rewarn_quotes_the_samples_as_they_are_now() {
        let mut m = fixture_run().measurements.remove(0);
        m.raw_unit = "ns/page".into();
        m.samples = vec![1750.0, 2400.0, 1760.0, 1770.0];
        m.sample_canary = vec![0.83, 1.3, 0.84, 0.83];
        m.canary_fastest = Some(0.83);
        m.warnings = vec![Remark::legacy(
            "core slowed for 1 of 4 samples: per mapping",
        )];
        for v in &mut m.samples {
            *v /= 10.0;
        }
        rewarn(&mut m);
        assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
        assert!(
            words(&m.warnings[0]).contains("240 ns/page"),
            "{:?}",
            m.warnings
        );
        assert!(
            words(&m.warnings[0]).contains("176 ns/page"),
            "{:?}",
            m.warnings
        );
    }

    #[test]
    fn samples_that_read_faster_than_the_kept_ones_are_never_left_out() {
        // The ipc case: the one sample tagged slowed read 12.2 µs, the 18 others 28.4 µs.
        let mut tags = vec![0.83; 19];
        tags[3] = 1.4;
        let mut samples = vec![28_400.0; 19];
        samples[3] = 12_200.0;
        let s = split(&tags, &samples, 0.83).unwrap();
        assert!(s.enough_fast && !s.leave_out, "{s:?}");
        let w = words(&warning_for(&s, &Unit::NS));
        assert!(
            w.contains("they read faster") && w.ends_with("figure from all"),
            "{w}"
        );
        // The figure and every consumer of it (compare, the contract) keep all samples.
        let mut m = fixture_run().measurements.remove(0);
        m.samples = samples;
        m.sample_canary = tags;
        m.canary_fastest = Some(0.83);
        m.baseline_samples = Vec::new();
        m.sample_rounds = Vec::new();
        assert_eq!(figure_view(&m).samples.len(), 19);
    }

    #[test]
    fn the_canary_applies_to_probes_on_one_cpu_only() {
        let with = |cpus: serde_json::Value| {
            let mut p = std::collections::BTreeMap::new();
            p.insert("cpus".to_string(), cpus);
            applies(&p)
        };
        assert!(with(serde_json::json!([0])));
        assert!(with(serde_json::json!([1, 1])));
        assert!(!with(serde_json::json!([0, 1])));
        assert!(applies(&Default::default()));
        // A stored cross-CPU run with tags: its figure keeps every sample, even the slower
        // ones a one-CPU probe would leave out.
        let mut m = fixture_run().measurements.remove(0);
        m.params.insert("cpus".into(), serde_json::json!([0, 1]));
        m.samples = vec![175.0, 176.0, 240.0, 241.0, 174.0, 175.0];
        m.sample_canary = vec![0.83, 0.93, 1.09, 1.49, 0.82, 0.84];
        m.canary_fastest = Some(0.82);
        m.baseline_samples = Vec::new();
        m.sample_rounds = Vec::new();
        assert_eq!(figure_view(&m).samples.len(), 6);
        m.params.insert("cpus".into(), serde_json::json!([0]));
        assert_eq!(figure_view(&m).samples.len(), 4);
    }

    #[test]
    fn the_warning_says_where_the_figure_comes_from() {
        let s = split(
            &[0.83, 1.2, 0.84, 0.83],
            &[176.0, 240.0, 176.0, 177.0],
            0.83,
        )
        .unwrap();
        let w = words(&warning_for(&s, &Unit::NS));
        assert!(w.contains("1 of 4 samples"), "{w}");
        assert!(
            w.contains("the 3 on a fast core 176 ns: figure from those"),
            "{w}"
        );
        assert!(w.contains("240 ns"), "{w}");
    }

    /// The quick run's call footnote read "they read 2.08 ns/iteration, the 4 on a fast core
    /// 2.08 ns/iteration": two medians that print as one figure are not a difference.
    #[test]
    fn medians_that_print_alike_are_not_quoted_as_a_difference() {
        let tags = [0.83, 1.2, 0.84, 0.83, 1.3, 0.83];
        let left_out = split(&tags, &[2.080, 2.082, 2.079, 2.080, 2.083, 2.080], 0.83).unwrap();
        assert!(left_out.leave_out, "{left_out:?}");
        let w = words(&warning_for(&left_out, &Unit::ns(Per::Iteration)));
        assert_eq!(w.matches("2.08 ns/iteration").count(), 1, "{w}");
        assert!(
            w.contains("they read 2.08 ns/iteration, as the 4 on a fast core did"),
            "{w}"
        );
        assert!(w.ends_with(": figure from those"), "{w}");
        assert_eq!(
            brief(&Remark::legacy(w.clone())),
            Some("core slowed during some samples; figures from the fast ones")
        );
        // Slowed a hair faster, printed alike: not "they read faster", and the figure keeps all.
        let kept = split(&tags, &[2.080, 2.078, 2.081, 2.080, 2.079, 2.080], 0.83).unwrap();
        assert!(!kept.leave_out, "{kept:?}");
        let w = words(&warning_for(&kept, &Unit::ns(Per::Iteration)));
        assert!(
            !w.contains("faster") && w.ends_with(": figure from all"),
            "{w}"
        );
        assert_eq!(w.matches("2.08 ns/iteration").count(), 1, "{w}");
        assert!(brief(&Remark::legacy(w.clone()))
            .unwrap()
            .ends_with("no slower; figures from all"));
    }

    /// Each of the three endings has its own brief form, true of it: a brief that said
    /// "figures from the fast ones" of a figure taken from all would be false.
    #[test]
    fn each_warning_has_the_brief_form_that_is_true_of_it() {
        let brief_of = |canary: &[f64], samples: &[f64]| {
            let w = warning_for(&split(canary, samples, 0.83).unwrap(), &Unit::NS);
            brief(&w).unwrap_or_else(|| panic!("no brief for {w:?}"))
        };
        let left_out = brief_of(&[0.83, 1.2, 0.84, 0.83], &[176.0, 240.0, 176.0, 177.0]);
        assert!(
            left_out.ends_with("figures from the fast ones"),
            "{left_out}"
        );
        let too_few = brief_of(&[0.83, 1.2, 1.3, 1.2], &[176.0, 240.0, 241.0, 242.0]);
        assert!(
            too_few.contains("most samples; figures from all"),
            "{too_few}"
        );
        let faster = brief_of(&[0.83, 1.2, 0.84, 0.83], &[176.0, 100.0, 176.0, 177.0]);
        assert!(faster.contains("no slower; figures from all"), "{faster}");
        assert_eq!(
            brief(&Remark::legacy("samples are bimodal: 3 near 1 ns")),
            None
        );
    }
}
