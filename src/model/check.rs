//! A declared expectation and what the machine showed: its kind, its bound and its readings as
//! numbers, and whether they agree.
//!
//! A check is data, never a sentence: the engine and the probes say *what* they judged
//! ([`Check::at_most`]`(CheckKind::CpuMigrations, 0.0, 2.0)`), and `report::checks` alone
//! words it ("cpu migrations: expected ≤ 0, observed 2.000"). A check judged in several
//! rounds keeps the reading of each round it shows ([`Check::rounds`]); a view folds them
//! into one reading with ranges.
//!
//! Runs of schema version 1 carried checks as `{name, expected, observed, ok}` sentences:
//! they load as [`CheckKind::Legacy`] with the name as subject and the bound and the
//! reading as [`Bound::Text`] and [`Reading::Text`], and are written and shown as they were.

use serde::{Deserialize, Serialize};

use super::Num;

/// What a check judges. Kinds that the engine judges for every family are variants; a
/// probe's own expectation is [`CheckKind::Named`], its name the check's subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A check of a schema version 1 run (subject: its name).
    Legacy,
    /// A probe's own check (subject: its name).
    Named,
    /// Every pinned participant seen on a requested CPU at start and end (bound: the
    /// requested CPUs; reading: the CPUs seen, or the participants that were not).
    Placement,
    /// Unpinned participants stayed on one CPU through each window (reading: the windows,
    /// or the moves).
    Stayed,
    /// All participants on one and the same CPU (reading: the CPUs seen).
    SameCpu,
    /// Two partners seen on two different CPUs (reading: the CPUs seen).
    DistinctCpus,
    /// The participants held their CPU (bound: the least share; values: the share held and
    /// the run-queue wait per participant).
    CpuHeld,
    /// The participants' CPU time could not be read at all.
    CpuUnreadable,
    /// The participants' CPU time was read exactly at no window's edge (values: windows).
    CpuNeverExact,
    /// Too many windows left out of the occupancy (bound: the least share read exactly;
    /// values: exact windows, windows).
    CpuLeftOut,
    /// The participants' CPU time fits in the window (bound: the largest share; values: the
    /// share read).
    CpuTimeInWindow,
    /// A single participant's run-queue wait (bound: the largest share; values: the share).
    RunQueueWait,
    /// Other tasks on the participants' CPUs (bound: the largest share of all others).
    OtherTasks,
    /// The measured loop entered the kernel or stayed in user space (bound: at least or at
    /// most the system share; values: the share, or the CPU time in ms when too short).
    KernelShare,
    /// CPU migrations during the windows (values: the count).
    CpuMigrations,
    /// RPCs matched in a trace (bound: at least a share of those made; values: the share
    /// matched, the RPCs matched, the RPCs made).
    TraceMatched,
    /// Records a trace lost (bound: at most 0; values: the count).
    TraceLost,
    /// Every traced part of an RPC ≥ 0 (bound: at least 0 ns; values: the smallest part in
    /// ns, none without parts).
    PartsNonNegative,
    /// The traced parts' means add up to the client's time of the same RPCs (bound: their
    /// ratio near 1; values: the sum and the client's mean in ns, and sum / mean − 1).
    PartsAddUp,
    /// As many switches to the client in the trace as the kernel counted (bound: their
    /// ratio near 1, with 0.02 per RPC of slack; values: traced and counted per RPC).
    TraceComplete,
    /// Minor faults per switch of a ring (bound: at most a share per switch, unless the
    /// windows held only a stray few; values: per switch, in all).
    MinorFaultsPerSwitch,
    /// Huge pages back a THP buffer (bound: the least share; values: the share).
    HugePages,
    /// The partners of a blocking cross-CPU hand-off together waiting for their CPUs, others
    /// running there (bound: the largest share of wall time; values: the share).
    PartnersRunQueueWait,
    /// The probe's process held one thread and shared its files with no child (reading:
    /// [`Reading::Alone`]).
    Alone,
    /// Switches per hop of a ring under normal scheduling (bound: 1 to 2 with 5% slack, as
    /// [`Bound::Between`] its limits; values: per hop).
    SwitchesPerHop,
    /// The corrected parts' sum against the untraced RPC (bound: their ratio near 1; values:
    /// the sum and the untraced time in ns and sum / untraced − 1, only the sum where the
    /// untraced RPC was not measured).
    CorrectedSum,
    /// As [`CheckKind::CorrectedSum`], where the untraced RPC itself moved between its two
    /// measurements (values: those three, then the untraced time beside the traced batches
    /// in ns and its offset from rpc.total).
    CorrectedSumMoved,
    /// Every corrected part ≥ 0 (bound: at least 0 ns; reading: [`Reading::Lowest`], or no
    /// values without parts).
    CorrectedNonNegative,
    /// A noise reader's gaps hold its time off the CPU (bound: at least that time in ns;
    /// values: the CPU, the gaps' time, the wall time and the reader's CPU time in ns).
    NoiseClock,
    /// A /proc row against the entries traced of its kind (subject: the row; bound: near the
    /// /proc delta; values: the CPU, the entries traced, those counted unwritten).
    NoiseCount,
    /// A noise reader stayed on its CPU (bound: its CPU; reading: [`Reading::Seen`]).
    NoiseReaderPlaced,
    /// A register state was live (or, read back on arm64, loaded) at every switch of both
    /// measured tasks (subject: the registers; bound: [`Bound::Mask`]; reading:
    /// [`Reading::Mask`]).
    StateLive,
    /// The baseline's register state released before every switch (subject: the registers;
    /// bound: [`Bound::Mask`]; reading: [`Reading::Mask`]).
    StateReleased,
    /// Every register save at the measured side's switches found the state live (subject:
    /// the registers; bound: [`Bound::Mask`]; values: the bits live in all saves, the saves).
    StateSavedLive,
    /// Both measured tasks read back a forced-off indirect-branch speculation, the
    /// baseline's did not (reading: [`Reading::Barrier`]).
    BarrierGranted,
    /// A walk touched the pages it claims (subject: the walk; bound: [`Bound::Pages`];
    /// reading: [`Reading::Pages`]).
    WalkPages,
    /// The measured side's partner ran on the other CPU (bound: the timer's CPU, then the
    /// partner's; reading: [`Reading::Placed`]).
    PartnerCpu,
    /// Context switches per round trip of both sides of a switch-anatomy rung (bound:
    /// [`Bound::RoundTrips`]; reading: [`Reading::Switches`] with the round trips a sample).
    SwitchesPerRoundTrip,
    /// The mmap lab's competing process outlived the measurement, not OOM-killed (bound: at
    /// least 1; values: 1 alive, 0 dead).
    CompetitorAlive,
    /// Pages of an evicted file still in the page cache (bound: at most 1% of them; values:
    /// the pages resident, the file's pages).
    StillCached,
    /// Blocks read in while an evicted file was touched (bound: at least 1; values: the
    /// count).
    BlocksReadIn,
    /// Involuntary switches per second of two CPU-bound tasks against one a slice (bound:
    /// [`Bound::Slice`]; values: the rate, the involuntary switches, the CPU time in s).
    SliceRate,
}

/// A check's bound on its reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Within ±`tol` (a fraction) of `value`.
    Near {
        value: f64,
        tol: f64,
    },
    AtMost(f64),
    AtLeast(f64),
    /// From `lo` to `hi`, both included.
    Between {
        lo: f64,
        hi: f64,
    },
    /// The CPUs every participant must be on.
    OnCpus(Vec<usize>),
    /// These bits set (or clear, as the kind says), read from XINUSE or, on arm64, from the
    /// registers read back.
    Mask {
        bits: u64,
        read_back: bool,
    },
    /// Lines touched in pages.
    Pages {
        lines: usize,
        pages: usize,
    },
    /// Switches a round trip within a band, hand-offs allowed for.
    RoundTrips(RoundTripBand),
    /// Within ±`tol` (a fraction) of `per_s`, one a slice; `set` holds the kernel's slice
    /// and the one asked, in ms, where they differ.
    Slice {
        per_s: f64,
        tol: f64,
        set: Option<[f64; 2]>,
    },
    /// No number: the kind says what is expected (one CPU, no move).
    Kind,
    /// A bound in words: a version 1 check (no probe words its bound).
    Text(String),
}

/// The switches a round trip of both sides may make: `per_rt` (from `per_rt − may_skip`
/// where a pair on two CPUs may find its reply posted before it sleeps) ±`tol`, plus the
/// chunk hand-offs of every sample where the samples were counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundTripBand {
    pub per_rt: f64,
    pub may_skip: f64,
    pub tol: f64,
    /// None: no sample count, hand-offs not allowed for.
    pub handoffs: Option<Handoffs>,
}

/// The chunk hand-offs of one sample, least and most, over `samples` samples of
/// `round_trips` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handoffs {
    pub least: u64,
    pub most: u64,
    pub samples: u64,
    pub round_trips: u64,
}

impl Handoffs {
    /// Round trips a sample.
    pub fn per_sample(&self) -> u64 {
        self.round_trips / self.samples
    }

    /// The hand-offs a round trip, least and most.
    pub fn per_round_trip(&self) -> (f64, f64) {
        let per = self.samples as f64 / self.round_trips as f64;
        (self.least as f64 * per, self.most as f64 * per)
    }
}

impl RoundTripBand {
    /// The switches a round trip it allows, least and most.
    pub fn limits(&self) -> (f64, f64) {
        let (least, most) = self
            .handoffs
            .as_ref()
            .map_or((0.0, 0.0), Handoffs::per_round_trip);
        (
            (self.per_rt - self.may_skip) * (1.0 - self.tol) + least,
            self.per_rt * (1.0 + self.tol) + most,
        )
    }

    /// Whether `sw` switches a round trip lie in the band.
    pub fn holds(&self, sw: f64) -> bool {
        let (lo, hi) = self.limits();
        sw.is_finite() && (lo..=hi).contains(&sw)
    }

    /// The hand-offs' range a round trip (most − least), where it is wider than the
    /// tolerance band of the round trips' own switches (±`tol` of `per_rt`): then the check
    /// cannot tell a competitor's switches from the protocol's. The range is the same a
    /// sample however long the sample, so it matters only where a sample holds few round
    /// trips: 1.33 a round trip at 3 against a band of 0.2, 0.098 at 41.
    pub fn handoffs_too_wide(&self) -> Option<f64> {
        let (least, most) = self.handoffs.as_ref()?.per_round_trip();
        let range = most - least;
        (range > 2.0 * self.tol * self.per_rt).then_some(range)
    }
}

/// A participant that was not where it should be at a window's edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Misplaced {
    pub role: String,
    /// The CPU it was on (None: not seen).
    pub cpu: Option<usize>,
    /// At the end of the window (else at its start).
    pub at_end: bool,
}

/// A participant that moved between CPUs in a window (or was not seen at both edges).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Moved {
    pub role: String,
    /// Its CPUs at start and end (None where not seen at both).
    pub from_to: Option<(usize, usize)>,
}

/// Another task on the participants' CPUs, as the other-tasks check names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OtherSeen {
    pub tid: i32,
    pub comm: String,
    pub policy: super::SchedPolicy,
    pub nice: i32,
    /// Its share of the CPUs' time over the span (the range of the rounds that named it,
    /// folded).
    pub share: Num,
}

impl OtherSeen {
    /// The same task as `o`, with both its shares: None for another task.
    fn widen(&self, o: &OtherSeen) -> Option<OtherSeen> {
        ((self.tid, &self.comm, self.policy, self.nice) == (o.tid, &o.comm, o.policy, o.nice)).then(
            || OtherSeen {
                share: self.share.widen(o.share),
                ..self.clone()
            },
        )
    }
}

impl Unseen {
    /// Both readings as one, when they say the same of the same CPUs.
    fn widen(&self, o: &Unseen) -> Option<Unseen> {
        match (self, o) {
            (
                Unseen::Took {
                    cpus,
                    ms,
                    allowance_ms,
                    judged,
                },
                Unseen::Took {
                    cpus: c,
                    ms: m,
                    allowance_ms: a,
                    judged: j,
                },
            ) if cpus == c && judged == j => Some(Unseen::Took {
                cpus: cpus.clone(),
                ms: ms.widen(*m),
                allowance_ms: allowance_ms.widen(*a),
                judged: *judged,
            }),
            _ => (self == o).then(|| self.clone()),
        }
    }
}

/// The participants' CPUs' time that no task seen at both readings took, as an other-tasks
/// check read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unseen {
    /// /proc/stat could not be read: not counted.
    Unreadable,
    /// Tasks that came and went took `ms` of `cpus`; `allowance_ms` is what the readings
    /// alone may be off by. Not judged: the allowance is more than the limit (a span too
    /// short for /proc/stat's ticks), so only a figure above both fails.
    Took {
        cpus: Vec<usize>,
        ms: Num,
        allowance_ms: Num,
        judged: bool,
    },
}

/// Where a count of context switches comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchSource {
    /// The perf context-switches event.
    Perf,
    /// rusage's voluntary and involuntary switches.
    Rusage,
}

/// What a check read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// Numbers the kind words (a figure, a share, counts); ranges when folded over rounds.
    Values(Vec<Num>),
    /// A count of context switches per operation, where it comes from, the digits it is
    /// read to, the round trips a sample where the count is of a switch anatomy's, and the
    /// voluntary and involuntary switches where the count says them apart.
    Switches {
        per_op: Num,
        source: SwitchSource,
        digits: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        per_sample: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        split: Option<[Num; 2]>,
    },
    /// The CPUs seen (placement, same CPU).
    Cpus(Vec<usize>),
    /// Participants not on their requested CPU.
    Misplaced(Vec<Misplaced>),
    /// Participants that moved.
    Moved(Vec<Moved>),
    /// Other tasks: their share in all, the competitors (runnable throughout) or else the
    /// one that took most.
    Others {
        share: Num,
        competitors: Vec<OtherSeen>,
        /// Competitors beyond those named.
        more: usize,
        most: Option<OtherSeen>,
        /// The time of tasks that came and went (None in older runs).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unseen: Option<Unseen>,
    },
    /// The threads of the probe's process (None: unreadable) and the children forked while
    /// its files were open (None: not listed).
    Alone {
        threads: Option<u32>,
        forked: Option<Vec<i32>>,
    },
    /// The part whose mean's interval reaches least: its mean and the interval's upper end
    /// in ns.
    Lowest { part: String, mean: Num, upper: Num },
    /// The CPU a task was seen on at a window's start and end (None: not seen).
    Seen {
        start: Option<usize>,
        end: Option<usize>,
    },
    /// The bits of a mask read, of those the bound names (None: not read).
    Mask(Option<u64>),
    /// The prctl answers and /proc status lines of the measured tasks and the baseline's
    /// (None: unread).
    Barrier {
        spec: Vec<i64>,
        on: Vec<Option<String>>,
        off: Vec<Option<String>>,
    },
    /// Lines and pages counted (None: not counted).
    Pages(Option<(usize, usize)>),
    /// Participants with the CPUs seen at start and end.
    Placed(Vec<(String, Option<usize>, Option<usize>)>),
    /// A CPU-time window too short to decide (values: the CPU time in ms).
    TooShort(Num),
    /// A reading in words: a version 1 check (no probe words its reading).
    Text(String),
}

impl Reading {
    /// One number.
    pub fn value(v: f64) -> Reading {
        Reading::Values(vec![Num::one(v)])
    }

    /// Several numbers, in the order the kind words them.
    pub fn values(v: &[f64]) -> Reading {
        Reading::Values(v.iter().map(|x| Num::one(*x)).collect())
    }

    /// The `i`-th number's low end (NaN when absent).
    pub fn get(&self, i: usize) -> f64 {
        match self {
            Reading::Values(v) => v.get(i).map_or(f64::NAN, |n| n.lo),
            Reading::Switches { per_op, .. } => {
                if i == 0 {
                    per_op.lo
                } else {
                    f64::NAN
                }
            }
            _ => f64::NAN,
        }
    }

    /// The reading holding both, when they differ only in their numbers.
    pub fn widen(&self, o: &Reading) -> Option<Reading> {
        match (self, o) {
            (Reading::Values(a), Reading::Values(b)) if a.len() == b.len() => Some(
                Reading::Values(a.iter().zip(b).map(|(x, y)| x.widen(*y)).collect()),
            ),
            (
                Reading::Switches {
                    per_op,
                    source,
                    digits,
                    per_sample,
                    split,
                },
                Reading::Switches {
                    per_op: p,
                    source: s,
                    digits: d,
                    per_sample: n,
                    split: t,
                },
            ) if source == s
                && digits == d
                && per_sample == n
                && split.is_some() == t.is_some() =>
            {
                Some(Reading::Switches {
                    per_op: per_op.widen(*p),
                    source: *source,
                    digits: *digits,
                    per_sample: *per_sample,
                    split: split
                        .zip(*t)
                        .map(|(a, b)| [a[0].widen(b[0]), a[1].widen(b[1])]),
                })
            }
            (Reading::TooShort(a), Reading::TooShort(b)) => Some(Reading::TooShort(a.widen(*b))),
            // The same tasks named, and the same said of those that came and went: one
            // reading with the range of each share.
            (
                Reading::Others {
                    share,
                    competitors,
                    more,
                    most,
                    unseen,
                },
                Reading::Others {
                    share: s,
                    competitors: c,
                    more: m,
                    most: t,
                    unseen: u,
                },
            ) if more == m && competitors.len() == c.len() => Some(Reading::Others {
                share: share.widen(*s),
                competitors: competitors
                    .iter()
                    .zip(c)
                    .map(|(a, b)| a.widen(b))
                    .collect::<Option<_>>()?,
                more: *more,
                most: match (most, t) {
                    (Some(a), Some(b)) => Some(a.widen(b)?),
                    (None, None) => None,
                    _ => return None,
                },
                unseen: match (unseen, u) {
                    (Some(a), Some(b)) => Some(a.widen(b)?),
                    (None, None) => None,
                    _ => return None,
                },
            }),
            _ => (self == o).then(|| self.clone()),
        }
    }
}

/// One check: what it judges (its kind, and for a probe's own its name), its bound, its
/// reading, and whether they agree. Merged over rounds, `rounds` holds each shown round's
/// reading (numbered from 0) when they differ or not all rounds are shown, and `reading`
/// the first of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub kind: CheckKind,
    pub subject: String,
    pub bound: Bound,
    pub reading: Reading,
    pub rounds: Vec<(u32, Reading)>,
    pub ok: bool,
}

#[derive(Serialize, Deserialize)]
struct Typed {
    kind: CheckKind,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    subject: String,
    bound: Bound,
    reading: Reading,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rounds: Vec<(u32, Reading)>,
    ok: bool,
}

/// A check of schema version 1.
#[derive(Serialize, Deserialize)]
struct Text {
    name: String,
    expected: String,
    observed: String,
    ok: bool,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum CheckRepr {
    Typed(Box<Typed>),
    Text(Text),
}

impl Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let (CheckKind::Legacy, Bound::Text(e), Reading::Text(o)) =
            (self.kind, &self.bound, &self.reading)
        {
            // A version 1 run is written back as it was read.
            return Text {
                name: self.subject.clone(),
                expected: e.clone(),
                observed: o.clone(),
                ok: self.ok,
            }
            .serialize(s);
        }
        Typed {
            kind: self.kind,
            subject: self.subject.clone(),
            bound: self.bound.clone(),
            reading: self.reading.clone(),
            rounds: self.rounds.clone(),
            ok: self.ok,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Check {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Check, D::Error> {
        Ok(match CheckRepr::deserialize(d)? {
            CheckRepr::Text(t) => Check::legacy(t.name, t.expected, t.observed, t.ok),
            CheckRepr::Typed(t) => {
                let t = *t;
                Check {
                    kind: t.kind,
                    subject: t.subject,
                    bound: t.bound,
                    reading: t.reading,
                    rounds: t.rounds,
                    ok: t.ok,
                }
            }
        })
    }
}

impl Check {
    /// A check of `kind` with its bound, reading and verdict.
    pub fn new(kind: CheckKind, bound: Bound, reading: Reading, ok: bool) -> Check {
        Check {
            kind,
            subject: String::new(),
            bound,
            reading,
            rounds: Vec::new(),
            ok,
        }
    }

    /// A check of a schema version 1 run.
    pub fn legacy(
        name: impl Into<String>,
        expected: impl Into<String>,
        observed: impl Into<String>,
        ok: bool,
    ) -> Check {
        Check {
            subject: name.into(),
            ..Check::new(
                CheckKind::Legacy,
                Bound::Text(expected.into()),
                Reading::Text(observed.into()),
                ok,
            )
        }
    }

    /// A probe's own check whose bound and reading are said in words: for tests that need
    /// a check by its words alone (the probes' checks are typed).
    pub fn text(
        name: impl Into<String>,
        expected: impl Into<String>,
        observed: impl Into<String>,
        ok: bool,
    ) -> Check {
        Check {
            kind: CheckKind::Named,
            ..Check::legacy(name, expected, observed, ok)
        }
    }

    /// Named `name` (a probe's own check; any kind's name is its subject).
    pub fn named(self, name: impl Into<String>) -> Check {
        Check {
            kind: CheckKind::Named,
            subject: name.into(),
            ..self
        }
    }

    /// observed within ±`tol` (fraction) of `expected`.
    pub fn near(kind: CheckKind, expected: f64, tol: f64, observed: f64) -> Check {
        Check::new(
            kind,
            Bound::Near {
                value: expected,
                tol,
            },
            Reading::value(observed),
            (observed - expected).abs() <= expected.abs() * tol,
        )
    }

    /// observed ≤ limit.
    pub fn at_most(kind: CheckKind, limit: f64, observed: f64) -> Check {
        Check::new(
            kind,
            Bound::AtMost(limit),
            Reading::value(observed),
            observed <= limit,
        )
    }

    /// observed ≥ limit.
    pub fn at_least(kind: CheckKind, limit: f64, observed: f64) -> Check {
        Check::new(
            kind,
            Bound::AtLeast(limit),
            Reading::value(observed),
            observed >= limit,
        )
    }

    /// Whether it judges the same thing as `o` (kind and name).
    pub fn same_as(&self, o: &Check) -> bool {
        self.kind == o.kind && self.subject == o.subject
    }

    /// Whether it is a probe's own check (or a version 1 check) named `name`.
    pub fn is_named(&self, name: &str) -> bool {
        matches!(self.kind, CheckKind::Named | CheckKind::Legacy) && self.subject == name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_check_loads_as_legacy_and_is_written_back_as_it_was() {
        let v1 = r#"{"name":"placement","expected":"all participants on CPU 1","observed":"on CPU 2","ok":false}"#;
        let c: Check = serde_json::from_str(v1).unwrap();
        assert_eq!(c.kind, CheckKind::Legacy);
        assert_eq!(c.subject, "placement");
        assert_eq!(c.reading, Reading::Text("on CPU 2".into()));
        assert!(!c.ok);
        assert_eq!(serde_json::to_string(&c).unwrap(), v1);
    }

    #[test]
    fn a_typed_check_round_trips_with_its_rounds() {
        let mut c = Check::at_least(CheckKind::CpuHeld, 0.95, 0.5);
        c.rounds = vec![(0, Reading::value(0.5)), (2, Reading::value(0.4))];
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains("\"kind\":\"cpu_held\""), "{json}");
        let back: Check = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
        let named = Check::near(CheckKind::Named, 2.0, 0.05, 2.2).named("switches");
        let back: Check = serde_json::from_str(&serde_json::to_string(&named).unwrap()).unwrap();
        assert_eq!(back, named);
        assert!(!back.ok && back.is_named("switches"));
    }

    #[test]
    fn readings_widen_only_when_they_differ_in_numbers() {
        let a = Reading::Values(vec![Num::one(0.5), Num::one(0.01)]);
        let b = Reading::Values(vec![Num::one(0.4), Num::one(0.02)]);
        let w = a.widen(&b).unwrap();
        assert_eq!(w.get(0), 0.4);
        assert_eq!(
            w,
            Reading::Values(vec![Num { lo: 0.4, hi: 0.5 }, Num { lo: 0.01, hi: 0.02 }])
        );
        assert!(Reading::Cpus(vec![1])
            .widen(&Reading::Cpus(vec![2]))
            .is_none());
        assert!(a.widen(&Reading::value(1.0)).is_none());
    }
}
