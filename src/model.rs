//! The data contract: what a run produces, serialized as versioned JSON and stored in SQLite.
//!
//! Later commands (report, compare, history) and users' scripts read these names; change them
//! only with a schema version bump. The schema is documented in docs/SCHEMA.md.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::machine::Machine;
use crate::units::Unit;

mod check;
pub mod noise;
mod remark;
pub mod switch_trace;
pub use check::{
    Bound, Check, CheckKind, Handoffs, Misplaced, Moved, OtherSeen, Reading, RoundTripBand,
    SwitchSource, Unseen,
};
pub use remark::{fold as fold_remarks, FamilyRemark, Num, Remark, RemarkKind};

/// Bumped when a field changes meaning or disappears (adding an optional field does not).
/// Version 2: warnings are typed remarks ([`Remark`]); version 1's sentences still load.
pub const SCHEMA_VERSION: u32 = 2;

/// One invocation of oscost: the machine it ran on and everything it measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub schema_version: u32,
    pub tool_version: String,
    /// RFC 3339 UTC time the run started.
    pub started_at: String,
    /// The command line, as the user typed it (argv).
    pub command: Vec<String>,
    pub machine: Machine,
    /// Clock resolution and read overhead measured at start (the engine's own evidence).
    #[serde(default)]
    pub clock: Option<ClockInfo>,
    pub measurements: Vec<Measurement>,
    /// Measurements that were planned but could not run here, with the reason (no
    /// permission, one CPU, ...): the rest of the run went on without them.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// False when the run was interrupted; such a run is never written as if complete.
    #[serde(default = "default_true")]
    pub complete: bool,
    /// The user's `--label KEY=VALUE` tags, plus `host` (the hostname unless set): how a
    /// fleet report tells apart runs from machines that share a hostname.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Stable identity of this run (hex digest of host, start, command, labels and samples):
    /// `history import` skips a run whose id is already stored. Absent in older files, where
    /// the importer derives it the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Each planned item's expected and actual wall time: what the next duration estimate on
    /// this machine learns from (engine::estimate). Absent in older runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub item_times: Vec<ItemTime>,
    /// What holds for the whole run rather than one measurement, e.g. that the core was
    /// slowed throughout (engine::canary::judge_run). Absent when there is nothing to say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Remark>,
}

/// One plan item's wall time against its estimate's bound (without history: the sampler's
/// plan, or the item's own estimate; engine::estimate).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ItemTime {
    /// The item's label, e.g. `syscall.getpid` or `ctx.sweep N=2 S=64k`.
    pub label: String,
    /// The bound the estimate started from, seconds.
    pub expected_s: f64,
    /// What it took, seconds.
    pub elapsed_s: f64,
}

fn default_true() -> bool {
    true
}

/// A planned measurement that did not run, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Skipped {
    pub probe: String,
    pub reason: String,
}

/// What the timing clock can resolve and what one read costs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClockInfo {
    pub name: String,
    /// clock_getres() in ns.
    pub resolution_ns: f64,
    /// Smallest non-zero difference of two back-to-back reads, ns.
    pub min_step_ns: f64,
    /// Median cost of one clock read, ns.
    pub read_overhead_ns: f64,
}

/// Robust summary of a set of samples (all in the measurement's unit).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    /// Distribution-free 95% confidence interval of the median (order statistics).
    pub ci95: [f64; 2],
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub p95: f64,
    /// Median absolute deviation (unscaled).
    pub mad: f64,
    /// Indices of samples whose modified z-score exceeds 3.5: flagged, never dropped.
    pub outliers: Vec<usize>,
    /// The interval from this run's samples alone, when `ci95` was widened by the run-to-run
    /// drift the history shows (compare::interval); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_within_run: Option<[f64; 2]>,
}

impl Run {
    /// What kind of run this is: its subcommand words ("run", "ctx sweep", "mem latency").
    pub fn kind(&self) -> String {
        command_kind(&self.command)
    }
}

/// The subcommand words of a command line before its first option, at most two ("run",
/// "ctx sweep", "mem latency", "fault"); "?" when there are none. `history list` and the
/// report group runs by it.
pub fn command_kind<S: AsRef<str>>(argv: &[S]) -> String {
    let words: Vec<&str> = argv
        .iter()
        .map(AsRef::as_ref)
        .skip(1)
        .take_while(|w| !w.starts_with('-'))
        .take(2)
        .collect();
    if words.is_empty() {
        "?".into()
    } else {
        words.join(" ")
    }
}

impl Summary {
    /// Whether the 95% interval reaches beyond ±50% of the median (units::is_unstable).
    pub fn is_unstable(&self) -> bool {
        crate::units::is_unstable(self.median, self.ci95[0], self.ci95[1])
    }
}

/// A probe's id as its family declares it (`probes::fault::ANON` is "fault.anon"): code
/// compares a measurement's probe with these, never with a literal. The id's first word is
/// its section (the family's name in the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProbeId(pub &'static str);

impl ProbeId {
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// Its section: the id's first word ("fault" for "fault.anon").
    pub fn section(self) -> &'static str {
        self.0.split('.').next().unwrap_or(self.0)
    }
}

impl std::fmt::Display for ProbeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl From<ProbeId> for String {
    fn from(id: ProbeId) -> String {
        id.0.to_string()
    }
}

/// One figure: a probe at one set of parameters, with its evidence and verdict.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    /// e.g. "ctx.pipe", "syscall.null".
    pub probe: String,
    /// e.g. {"mode": "process", "cpus": [0]}.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Unit of `value`, e.g. "ns/switch".
    pub unit: Unit,
    /// The derived figure. None when it is below resolution or could not be derived.
    pub value: Option<Summary>,
    /// What was timed directly, per raw iteration (unit in `raw_unit`).
    pub raw: Summary,
    #[serde(default)]
    pub raw_unit: Unit,
    /// The same work without the mechanism, per baseline iteration; None when not subtracted.
    pub baseline: Option<Summary>,
    /// raw - baseline before scaling, kept even when it is below resolution.
    #[serde(default)]
    pub difference: Option<Summary>,
    /// How many mechanism events one raw iteration contains (e.g. 2 switches per round trip).
    #[serde(default = "one")]
    pub units_per_iteration: f64,
    /// "ok", "below_resolution", "unstable" or "invalid".
    pub status: Status,
    /// Raw samples (per-iteration times in `raw_unit`).
    pub samples: Vec<f64>,
    /// The round of each sample (and of its paired baseline sample); empty in older runs
    /// and where a probe took its samples in one block.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_rounds: Vec<u32>,
    /// The core-speed canary's reading (ns per iteration) before each sample, and the
    /// fastest reading of the run it is judged against (engine::canary): samples tagged
    /// above 1.15× the fastest ran on a slowed core and are left out of the figure when
    /// enough others remain. Empty, None: not tagged (older runs, probes with their own loop).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_canary: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_fastest: Option<f64>,
    #[serde(default)]
    pub baseline_samples: Vec<f64>,
    /// Raw samples taken with perf counters attached (evidence windows): not part of the
    /// figure, kept to show what attaching counters costs the workload.
    #[serde(default)]
    pub evidence_samples: Vec<f64>,
    pub iterations_per_sample: u64,
    #[serde(default)]
    pub baseline_iterations_per_sample: u64,
    /// Why sampling stopped: "converged", "time budget spent" or "sample limit" ("" in
    /// runs that did not say: None).
    #[serde(default, with = "stop_words")]
    pub stop_reason: Option<StopReason>,
    pub evidence: Evidence,
    pub checks: Vec<Check>,
    pub warnings: Vec<Remark>,
    /// Plain-words notes that explain the figure (definitions, why two methods differ).
    #[serde(default)]
    pub notes: Vec<String>,
    pub valid: bool,
    /// For a figure that is one part of a whole (`rpc.part`, `rpc.corrected`) or the whole
    /// its parts add up to (`rpc.traced`): the mean, which adds up where medians do not.
    /// Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additive: Option<Additive>,
    /// What recording the figure cost (`rpc.traced`): the calibration pass's cost per recorded
    /// event, and the traced time against the untraced one. Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer: Option<Observer>,
    /// One CPU's busy-reader window (`noise.lost`): its gaps and their causes. Absent
    /// elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<noise::NoiseCpu>,
    /// What the kernel recorded at a `ctx.anatomy` rung's switches (its trace pass). Absent
    /// elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_trace: Option<switch_trace::SwitchTrace>,
}

/// Why sampling stopped: the sampler's three reasons, and the fixed counts of probes that
/// take their samples with their own loop. Its words are the ones a run file and the views
/// use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
pub enum StopReason {
    #[strum(serialize = "converged")]
    Converged,
    #[strum(serialize = "time budget spent")]
    Budget,
    #[strum(serialize = "sample limit")]
    SampleLimit,
    /// A fixed number of samples (rpc's parts: one per recorded RPC).
    #[strum(serialize = "fixed count")]
    FixedCount,
    /// A fixed number of repetitions (the mmap lab).
    #[strum(serialize = "fixed repetitions")]
    FixedRepetitions,
    /// One round of samples (the fault latency distribution).
    #[strum(serialize = "one round")]
    OneRound,
}

impl StopReason {
    /// The reason `words` name; None for "" (not said). A word no version wrote reads as
    /// the budget, the reason that claims least.
    pub fn from_words(words: &str) -> Option<StopReason> {
        (!words.is_empty()).then(|| words.parse().unwrap_or(StopReason::Budget))
    }
}

/// The stop reason as its words ("" when not said), as every schema version writes it.
mod stop_words {
    use super::StopReason;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(r: &Option<StopReason>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(r.map_or("", Into::into))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<StopReason>, D::Error> {
        Ok(StopReason::from_words(&String::deserialize(d)?))
    }
}

/// A figure with its 95% interval.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub ci95: [f64; 2],
}

/// The additive view of a part: parts add up by their means, so the mean is the figure a
/// breakdown stacks; the median (in `value`) stays beside it as a distribution figure.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Additive {
    /// Mean per RPC with its 95% interval (Student's t on the samples; for a corrected part
    /// also the calibration's uncertainty, carried through).
    pub mean: Estimate,
    /// Two groups in the samples, when there are two: each mode and its share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<ModeShares>,
    /// Recorded events on the part's path per RPC, by group: what the traced part's time
    /// holds the cost of (absent for the whole).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub events: BTreeMap<String, f64>,
}

/// Two modes of a part's samples (a part that did not happen in some RPCs has a low mode 0).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ModeShares {
    pub low: f64,
    pub low_share: f64,
    pub high: f64,
    pub high_share: f64,
}

/// What recording a traced figure cost (`rpc.traced`): the traced time against the untraced
/// one, and the observer's cost per event, measured by a calibration pass (the same RPC loop
/// timed with nothing recording, with each group of recorded events alone and with all of
/// them, in rounds; probes::rpc::calibrate).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Observer {
    /// Traced mean over the untraced figure (rpc.total), minus 1: 0.95 is +95%. Filled once
    /// both are measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracing_adds: Option<Estimate>,
    /// The fit of the calibration pass; absent when it could not be made (with a warning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// Every configuration timed.
    pub configs: Vec<CalibrationConfig>,
}

/// The batch means regressed on the events per RPC on the timed path.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    /// What one recorded event of each group adds to the RPC time.
    pub costs: Vec<EventCost>,
    /// The fit's residual standard error: the batch means' spread around it, ns per RPC.
    pub residual_ns: f64,
    /// Degrees of freedom of the residual.
    pub dof: usize,
    /// All groups at once, measured, minus what the groups alone add up to (ns per RPC,
    /// mean over the rounds): how far the costs are from adding up.
    pub together_ns: f64,
    /// The RPC time with the tracer open and nothing recording, as the fit sees it (mean of
    /// the rounds' intercepts).
    pub untraced_fit: Estimate,
    /// The corrected parts' sum (each part minus the calibrated cost of the events on its
    /// path), with its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrected_sum: Option<Estimate>,
}

/// The calibrated cost of one recorded event of a group.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EventCost {
    pub group: String,
    /// ns per event, with its 95% interval from the fit.
    pub ns: Estimate,
    /// Events of the group on the timed path per traced RPC (the fit's regressor).
    pub per_rpc: f64,
}

/// One configuration of the calibration pass: the groups recording, and its batches.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CalibrationConfig {
    /// The groups recording (empty: nothing).
    pub groups: Vec<String>,
    /// Each batch's RPC time (mean without its fastest and slowest 10%), ns, and its round.
    pub batch_ns: Vec<f64>,
    pub rounds: Vec<u32>,
    /// Records per RPC the rings held, by group (all recorded, on the path or not).
    pub recorded_per_rpc: BTreeMap<String, f64>,
}

fn one() -> f64 {
    1.0
}

/// What a measurement's figure is worth. Views write each as it is: the figure with its
/// interval, "below resolution", "unstable" with its spread, or "INVALID" with the reason.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// A subtraction whose difference interval reaches zero: no figure (`value` is null).
    BelowResolution,
    /// The figure's 95% interval reaches beyond ±50% of it ([`Summary::is_unstable`]; rounds
    /// that disagree widen the interval so): noise, not a number. `value` keeps the summary
    /// (its interval is the spread); no view prints its median as a figure or draws it.
    Unstable,
    Invalid,
}

impl Status {
    /// The status a valid figure has: unstable when its interval says it is noise.
    pub fn of_figure(value: Option<&Summary>, status: Status) -> Status {
        match (status, value) {
            (Status::Ok, Some(v)) if v.is_unstable() => Status::Unstable,
            (Status::Unstable, Some(v)) if !v.is_unstable() => Status::Ok,
            _ => status,
        }
    }

    /// The word the JSON writes, for the CSV and the store: its serde name.
    pub fn name(self) -> String {
        crate::units::name::serde_name(&self)
    }
}

/// What the machine observed while the raw samples ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Evidence {
    pub rusage: RusageEvidence,
    /// perf events by name ("context-switches", "cycles", ...).
    pub events: BTreeMap<String, EventReading>,
    /// Where each participant ran.
    pub cpus: Vec<Placement>,
    /// Who held the CPU during the measured windows (None where schedstat is unavailable).
    #[serde(default)]
    pub occupancy: Option<Occupancy>,
    /// The interrupts that arrived on the probe's CPUs during its windows (None where
    /// /proc/interrupts is unreadable, and in runs recorded before it was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<Interrupts>,
}

/// The interrupts that arrived on a probe's CPUs during its measured windows: the deltas of
/// /proc/interrupts' rows (device IRQs by number and device, the system vectors LOC, RES,
/// CAL, TLB ...) summed over the windows, read at each window's edges outside the window.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Interrupts {
    /// The CPUs counted: the participants' pinned CPUs, else those they ran on.
    pub cpus: Vec<usize>,
    /// Windows whose both edges were read.
    pub windows: u64,
    /// The counts that were not zero, one per row and CPU, in /proc/interrupts' order.
    pub counts: Vec<InterruptCount>,
}

/// One row of /proc/interrupts on one CPU over the windows.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct InterruptCount {
    /// The row's key: an IRQ number ("36") or a vector ("LOC").
    pub key: String,
    /// The device of a numbered IRQ, the description of a vector ("Local timer interrupts").
    pub name: String,
    pub cpu: usize,
    pub count: u64,
}

impl Interrupts {
    /// All interrupts counted, every row and CPU.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.count).sum()
    }

    /// Each row's count summed over the CPUs, in order: (key, name, count).
    pub fn by_row(&self) -> Vec<(&str, &str, u64)> {
        let mut out: Vec<(&str, &str, u64)> = Vec::new();
        for c in &self.counts {
            match out.iter_mut().find(|(k, _, _)| *k == c.key) {
                Some(row) => row.2 += c.count,
                None => out.push((&c.key, &c.name, c.count)),
            }
        }
        out
    }

    /// Sum another measurement round's windows into these (its CPUs added).
    pub fn absorb(&mut self, o: &Interrupts) {
        self.windows += o.windows;
        for cpu in &o.cpus {
            if !self.cpus.contains(cpu) {
                self.cpus.push(*cpu);
            }
        }
        self.cpus.sort_unstable();
        for c in &o.counts {
            match self
                .counts
                .iter_mut()
                .find(|x| x.key == c.key && x.cpu == c.cpu)
            {
                Some(x) => x.count += c.count,
                None => self.counts.push(c.clone()),
            }
        }
    }
}

/// How much of the measured wall time the participants themselves were on a CPU. Other
/// tasks (or the hypervisor, with steal accounting) running in the participants' place show
/// up as a share below 1, which a median alone does not reveal.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Occupancy {
    /// Wall time of the raw-sample windows.
    pub wall_ns: u64,
    /// Summed on-CPU time of all participants over those windows (schedstat).
    pub oncpu_ns: u64,
    /// Summed time participants waited runnable on a run queue.
    pub run_delay_ns: u64,
    /// Per-CPU view: oncpu / (wall × CPUs the participants were pinned to).
    pub share: f64,
    /// Wall time of the windows whose run-queue wait was read exactly (0 in older runs:
    /// then `wall_ns`).
    #[serde(default)]
    pub delay_wall_ns: u64,
    /// Windows recorded, and how many had every edge read exactly (0 in older runs).
    #[serde(default)]
    pub windows: u64,
    #[serde(default)]
    pub exact_windows: u64,
    /// Distinct CPUs the participants were pinned to (0 in older runs: unknown).
    #[serde(default)]
    pub cpus: usize,
    /// How CPU time was read ("" in older runs: schedstat, stale by up to a tick).
    #[serde(default)]
    pub method: String,
    /// Tasks other than the participants on the participants' CPUs, from the first window's
    /// opening to the last one's closing (None in older runs, or where /proc was not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others: Option<OtherTasks>,
}

/// What other tasks did on the participants' CPUs over a measurement: their CPU time against
/// the time those CPUs were there to take, whatever the tasks' priority. A `SCHED_IDLE` or
/// `nice 19` loop runs only in the participants' gaps, so the participants' own CPU time
/// does not show it; its own run time and its staying runnable do.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OtherTasks {
    /// Wall time between the two readings.
    pub span_ns: u64,
    /// The participants' CPUs.
    pub cpus: usize,
    /// Summed CPU time of every other task seen on those CPUs.
    pub oncpu_ns: u64,
    /// The ones worth naming: those that stayed runnable (at most
    /// [`OtherTasks::COMPETITORS`]), then the longest-running others (at most
    /// [`OtherTasks::NAMED`]).
    pub tasks: Vec<OtherTask>,
    /// Those CPUs' time as /proc/stat counts it, against what the tasks seen ran there: the
    /// time of tasks that came and went between the readings (None in older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<CpuAccount>,
}

/// The participants' CPUs' busy time between the two readings of the other tasks, against
/// the run time of every task seen that may have run there: what no task seen took was
/// taken by tasks that started and exited in between (or exited, or passed through from
/// another CPU).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuAccount {
    /// /proc/stat could not be read (or lacked one of the CPUs): not counted.
    Unreadable,
    Counted(BusyAccount),
}

/// The figures of a [`CpuAccount`], summed over the participants' CPUs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BusyAccount {
    /// The CPUs.
    pub cpus: Vec<usize>,
    /// Wall time between the two /proc/stat readings.
    pub span_ns: u64,
    /// user + nice + system over the span (guest time is in user).
    pub busy_ns: u64,
    /// irq + softirq + steal: the kernel's interrupt work and the hypervisor's, no task's
    /// (kept apart, not counted).
    pub irq_ns: u64,
    /// Run time of every task seen that may have run there: the participants, this
    /// process's threads, and the others on those CPUs at either reading.
    pub known_ns: u64,
    /// How far `busy_ns - known_ns` may be off by the readings alone (see
    /// [`crate::evidence::others::allowance_ns`]).
    pub allowance_ns: u64,
}

impl BusyAccount {
    /// Busy time no task seen accounts for.
    pub fn unseen_ns(&self) -> u64 {
        self.busy_ns.saturating_sub(self.known_ns)
    }

    /// Sum another measurement's account into this one (the allowances add up: a bound).
    pub fn absorb(&mut self, o: &BusyAccount) {
        for c in &o.cpus {
            if !self.cpus.contains(c) {
                self.cpus.push(*c);
            }
        }
        self.cpus.sort_unstable();
        self.span_ns += o.span_ns;
        self.busy_ns += o.busy_ns;
        self.irq_ns += o.irq_ns;
        self.known_ns += o.known_ns;
        self.allowance_ns += o.allowance_ns;
    }
}

impl OtherTasks {
    /// How many competitors are kept by name.
    pub const COMPETITORS: usize = 16;
    /// How many other tasks are kept by name.
    pub const NAMED: usize = 3;

    /// Their CPU time as a share of the CPUs' time over the span.
    pub fn share(&self) -> f64 {
        self.oncpu_ns as f64 / (self.span_ns.max(1) as f64 * self.cpus.max(1) as f64)
    }

    /// Sum another measurement's reading into this one (the same task's time adds up).
    pub fn absorb(&mut self, o: &OtherTasks) {
        self.span_ns += o.span_ns;
        self.cpus = self.cpus.max(o.cpus);
        self.oncpu_ns += o.oncpu_ns;
        // Counted only where every measurement summed counted it.
        self.account = match (self.account.take(), &o.account) {
            (Some(CpuAccount::Counted(mut a)), Some(CpuAccount::Counted(b))) => {
                a.absorb(b);
                Some(CpuAccount::Counted(a))
            }
            (None, _) | (_, None) => None,
            _ => Some(CpuAccount::Unreadable),
        };
        for t in &o.tasks {
            match self
                .tasks
                .iter_mut()
                .find(|x| x.tid == t.tid && x.pid == t.pid)
            {
                Some(x) => {
                    x.oncpu_ns += t.oncpu_ns;
                    x.runnable |= t.runnable;
                }
                None => self.tasks.push(t.clone()),
            }
        }
        OtherTask::rank(&mut self.tasks);
    }
}

/// One other task on the participants' CPUs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OtherTask {
    pub pid: i32,
    pub tid: i32,
    /// Its command name (as /proc gives it, at most 15 bytes).
    pub comm: String,
    pub policy: SchedPolicy,
    pub nice: i32,
    /// A kernel thread (its time is the kernel's own work, not a competitor's).
    pub kernel: bool,
    /// CPU time over the span.
    pub oncpu_ns: u64,
    /// Runnable at both readings: it wanted the CPU throughout.
    pub runnable: bool,
}

impl OtherTask {
    /// A user task that stayed runnable on the participants' CPU: a competitor, however
    /// small its share (one that got no time at all still wanted the CPU throughout, and a
    /// low-priority loop gets only the participants' gaps).
    pub fn competes(&self) -> bool {
        self.runnable && !self.kernel
    }

    /// Competitors first, then the others, each by CPU time, as many as
    /// [`OtherTasks::tasks`] keeps.
    pub fn rank(tasks: &mut Vec<OtherTask>) {
        tasks.sort_by_key(|t| std::cmp::Reverse(t.oncpu_ns));
        let (mut competitors, rest): (Vec<OtherTask>, Vec<OtherTask>) = std::mem::take(tasks)
            .into_iter()
            .partition(|t| t.competes());
        competitors.truncate(OtherTasks::COMPETITORS);
        competitors.extend(rest.into_iter().take(OtherTasks::NAMED));
        *tasks = competitors;
    }
}

/// A task's scheduling policy: files hold its serde name, the views the name
/// `sched_setscheduler` gives it (its words).
#[derive(
    Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
pub enum SchedPolicy {
    #[default]
    #[strum(serialize = "SCHED_OTHER")]
    Other,
    #[strum(serialize = "SCHED_FIFO")]
    Fifo,
    #[strum(serialize = "SCHED_RR")]
    Rr,
    #[strum(serialize = "SCHED_BATCH")]
    Batch,
    #[strum(serialize = "SCHED_IDLE")]
    Idle,
    #[strum(serialize = "SCHED_DEADLINE")]
    Deadline,
    /// A number this version does not know.
    #[strum(serialize = "an unknown policy")]
    Unknown,
}

impl SchedPolicy {
    /// From the policy number of /proc/.../stat.
    pub fn from_number(n: u64) -> SchedPolicy {
        match n {
            0 => SchedPolicy::Other,
            1 => SchedPolicy::Fifo,
            2 => SchedPolicy::Rr,
            3 => SchedPolicy::Batch,
            5 => SchedPolicy::Idle,
            6 => SchedPolicy::Deadline,
            _ => SchedPolicy::Unknown,
        }
    }
}

impl Occupancy {
    /// Sum another set of windows into this one (the share is recomputed).
    pub fn absorb(&mut self, o: &Occupancy) {
        self.cpus = self.cpus.max(o.cpus);
        self.wall_ns += o.wall_ns;
        self.oncpu_ns += o.oncpu_ns;
        self.run_delay_ns += o.run_delay_ns;
        self.delay_wall_ns += o.delay_wall_ns;
        self.windows += o.windows;
        self.exact_windows += o.exact_windows;
        self.share = self.oncpu_ns as f64 / (self.wall_ns.max(1) as f64 * self.cpus.max(1) as f64);
        match (&mut self.others, &o.others) {
            (Some(a), Some(b)) => a.absorb(b),
            (None, Some(b)) => self.others = Some(b.clone()),
            _ => {}
        }
    }
}

/// getrusage-style counters, summed over every participant, plus each participant's share.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RusageEvidence {
    #[serde(flatten)]
    pub total: Rusage,
    /// Total raw iterations the deltas cover (divide to get per-iteration figures).
    pub iterations: u64,
    /// The wall time the deltas cover, in ns, where the probe timed exactly their window
    /// (fault: the touch loops of every mapping, warm-up included); CPU time over it is the
    /// share of CPU the work got. Absent where the window is the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ns: Option<u64>,
    pub participants: Vec<ParticipantRusage>,
}

/// getrusage fields (deltas over the measured window; maxrss is the peak).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Rusage {
    pub utime_us: u64,
    pub stime_us: u64,
    pub maxrss_kb: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub inblock: u64,
    pub oublock: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ParticipantRusage {
    pub role: String,
    pub pid: i32,
    pub tid: i32,
    #[serde(flatten)]
    pub rusage: Rusage,
}

/// One perf event over the measured window.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EventReading {
    /// Count per raw iteration, scaled for multiplexing.
    pub per_op: Option<f64>,
    pub total: Option<f64>,
    /// True when the counter was multiplexed (time_running < time_enabled) and scaled.
    pub scaled: bool,
    pub supported: bool,
    /// Why not supported, or what limits it.
    pub reason: Option<String>,
}

/// The CPU a participant was asked to use and where it was seen.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Placement {
    pub role: String,
    pub pid: i32,
    pub tid: i32,
    /// The CPUs it was pinned to (empty = not pinned).
    pub requested: Vec<usize>,
    /// CPU at the start of measurement (sched_getcpu in the participant).
    pub start: Option<usize>,
    /// CPU at the end (sched_getcpu in the participant, or /proc stat's last CPU).
    pub end: Option<usize>,
    /// The task's affinity mask was read at the first window and at the end and was exactly
    /// `requested` both times (false in older runs and where it could not be read).
    #[serde(default)]
    pub affinity_held: bool,
}

/// What a measurement parameter is. The JSON keeps one `params` map (older runs load as
/// they are); the kind is decided by the key, here, in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// Chosen by the user (or the plan): mechanism, mode, CPUs, sizes, orders... The pairing
    /// key of `compare`.
    Input,
    /// A rendering of inputs for people ("64 KiB", "4ms") or a count derived from them
    /// with a machine fact (pages of a size).
    Label,
    /// What the machine showed while it ran: the THP mode, the slice the kernel reported,
    /// the cache a working set fits in, the share of huge pages.
    Observed,
    /// How long or how often it was measured: rounds, repetitions.
    Budget,
}

/// The kind of parameter `key` (unknown keys are inputs: pairing stays strict for them).
pub fn param_kind(key: &str) -> ParamKind {
    match key {
        "size_label" | "work_set_label" | "slice" | "pages" | "blocks" => ParamKind::Label,
        // ctx.anatomy: the cause a rung names, the XSAVE bytes CPUID gives for its state (arm64:
        // its state bytes and SVE vector length), and
        // the kernel's trace of its tasks (taken in the first round only, so a label of the
        // measurement rather than an observation every round repeats).
        "cause" | "xsave_bytes" | "xsave_area_bytes" | "state_bytes" | "sve_vector_bytes"
        | "trace" => ParamKind::Label,
        "system_thp" | "slice_reported_ns" | "huge_page_share" | "fits" | "fits_per_process"
        | "fits_total" | "speculation_status" => ParamKind::Observed,
        "rounds" | "reps" => ParamKind::Budget,
        _ => ParamKind::Input,
    }
}

impl Measurement {
    /// Whether it is a measurement of probe `id`.
    pub fn is(&self, id: ProbeId) -> bool {
        self.probe == id.0
    }

    /// Whether its probe is of the section (family) `section`, e.g. "fault".
    pub fn in_section(&self, section: &str) -> bool {
        self.probe.split('.').next() == Some(section)
    }

    /// Whether the figure is noise ([`Status::Unstable`]): views show its spread, never its
    /// median, and figures do not draw it as a point.
    pub fn is_unstable(&self) -> bool {
        self.status == Status::Unstable
    }

    /// The status its figure supports ([`Status::of_figure`]): a run written before the
    /// unstable state existed, or a figure a family assembled itself, is judged by the same
    /// rule as a fresh one.
    pub fn settle_status(&mut self) {
        self.status = Status::of_figure(self.value.as_ref(), self.status);
    }

    /// The checks that failed, for "why invalid" lines.
    pub fn failed_checks(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.ok)
    }

    /// The parameters the user chose (see [`param_kind`]): what two measurements must share
    /// to be paired. Budgets, observed facts and labels never prevent pairing.
    pub fn inputs(&self) -> BTreeMap<String, serde_json::Value> {
        self.params
            .iter()
            .filter(|(k, _)| param_kind(k) == ParamKind::Input)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The parameters of one kind.
    pub fn params_of(&self, kind: ParamKind) -> BTreeMap<String, serde_json::Value> {
        self.params
            .iter()
            .filter(|(k, _)| param_kind(k) == kind)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// A string parameter; None when absent or not a string.
    pub fn param_str(&self, key: &str) -> Option<&str> {
        self.params.get(key).and_then(|v| v.as_str())
    }

    /// A parameter as text: a string as it is, any other value as JSON, empty when absent
    /// (for keys that compare or group measurements).
    pub fn param_text(&self, key: &str) -> String {
        match self.params.get(key) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        }
    }

    /// A whole-number parameter (a size, a count, a stride).
    pub fn param_u64(&self, key: &str) -> Option<u64> {
        self.params.get(key).and_then(|v| v.as_u64())
    }

    /// A numeric parameter.
    pub fn param_f64(&self, key: &str) -> Option<f64> {
        self.params.get(key).and_then(|v| v.as_f64())
    }

    /// A parameter rendered for labels, e.g. `mode=process cpus=0`.
    pub fn params_label(&self) -> String {
        params_label(&self.params)
    }
}

/// Parameters rendered for labels, e.g. `mode=process cpus=0` (also used on parameters read
/// back from the history's measurement rows).
pub fn params_label(params: &BTreeMap<String, serde_json::Value>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={}", param_text(v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One parameter's value as labels print it: a string bare, a list comma-joined.
pub fn param_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a
            .iter()
            .map(|x| x.to_string().trim_matches('"').to_string())
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::name::{serde_name, tests::assert_words};

    const STOPS: [(StopReason, &str); 6] = [
        (StopReason::Converged, "converged"),
        (StopReason::Budget, "time budget spent"),
        (StopReason::SampleLimit, "sample limit"),
        (StopReason::FixedCount, "fixed count"),
        (StopReason::FixedRepetitions, "fixed repetitions"),
        (StopReason::OneRound, "one round"),
    ];

    #[test]
    fn stop_reasons_round_trip_through_their_words_and_a_run_file() {
        assert_words(&STOPS);
        #[derive(Serialize, Deserialize)]
        struct Held {
            #[serde(with = "stop_words")]
            r: Option<StopReason>,
        }
        for r in STOPS.map(|s| Some(s.0)).into_iter().chain([None]) {
            let text = serde_json::to_string(&Held { r }).unwrap();
            assert_eq!(serde_json::from_str::<Held>(&text).unwrap().r, r, "{text}");
        }
        assert_eq!(
            serde_json::to_string(&Held { r: None }).unwrap(),
            r#"{"r":""}"#
        );
    }

    #[test]
    fn an_unknown_stop_word_reads_as_the_budget_and_none_as_not_said() {
        assert_eq!(StopReason::from_words(""), None);
        for odd in ["Converged", "converged ", "budget", "sample_limit"] {
            assert_eq!(
                StopReason::from_words(odd),
                Some(StopReason::Budget),
                "{odd:?}"
            );
        }
    }

    #[test]
    fn a_policy_is_worded_as_sched_setscheduler_names_it_and_filed_by_serde() {
        use SchedPolicy::*;
        let all = [Other, Fifo, Rr, Batch, Idle, Deadline, Unknown];
        let words = [
            "SCHED_OTHER",
            "SCHED_FIFO",
            "SCHED_RR",
            "SCHED_BATCH",
            "SCHED_IDLE",
        ];
        let words = words
            .into_iter()
            .chain(["SCHED_DEADLINE", "an unknown policy"]);
        assert_words(&all.into_iter().zip(words).collect::<Vec<_>>());
        let filed = [
            "other", "fifo", "rr", "batch", "idle", "deadline", "unknown",
        ];
        for (p, f) in all.into_iter().zip(filed) {
            assert_eq!(serde_name(&p), f);
            assert_eq!(serde_json::from_value::<SchedPolicy>(f.into()).unwrap(), p);
        }
        assert!(serde_json::from_value::<SchedPolicy>("SCHED_OTHER".into()).is_err());
    }
}
