//! A remark on a measurement or a run: what kind it is, what it is about, and its numbers.
//!
//! A remark is data, never a sentence: the engine and the probes say *what* they saw
//! ([`Remark::outliers`]`(3, 21)`), and `report::remarks` alone words it ("3 of 21 samples
//! are outliers …"). "Each kind once, with the probes it concerns" is a group-by on
//! [`Remark::kind`] and [`Remark::subject`]; remarks of one kind whose numbers differ (one
//! per round, one per row) fold into one whose numbers are ranges ([`Num`]).
//!
//! A family's own remark, without touching this file: declare its kind as a [`FamilyRemark`]
//! constant in the family's probes module (`pub const GAPS: FamilyRemark =
//! FamilyRemark("noise.gaps")`, its id starting with the family's section), make it with
//! [`Remark::family`], tell it with [`Remark::is_family`], and word it in the family's
//! `report::family::Family::words`. A kind that more than one family says (the occupancy
//! remarks) is a [`RemarkKind`] variant instead: a constructor here and its wording in
//! `report::remarks::words` (an exhaustive match: the compiler asks for it).
//!
//! Runs of schema version 1 carried remarks as sentences: they load as
//! [`RemarkKind::Legacy`] with the sentence as subject, and are written and shown as they
//! were.

use crate::units::name::Word;
use serde::{Deserialize, Serialize};

/// A family's own kind of remark: `<section>.<name>` ("noise.gaps"), declared once as a
/// constant in the family's probes module and compared as that constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FamilyRemark(pub &'static str);

/// What a remark says. The doc of each variant names its `subject` and `values`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemarkKind {
    /// A sentence of a schema version 1 run (subject: the sentence; no values).
    Legacy,
    /// A family's own kind (subject: its [`FamilyRemark`] id; values: its numbers), worded
    /// by the family the id's section names.
    Family,
    /// Sampling stopped before the interval was tight (subject: the stop reason's words;
    /// values: the interval target, a fraction).
    NotConverged,
    /// Outlying samples (values: outliers, samples).
    Outliers,
    /// The difference raw − baseline is below zero with its whole interval.
    NegativeDifference,
    /// One sample: no interval.
    OneSample,
    /// Two modes, one after the other (subject: the samples' unit; values: low count, low,
    /// high count, high).
    BimodalInSequence,
    /// Two modes that alternate (as [`RemarkKind::BimodalInSequence`]).
    BimodalInterleaved,
    /// The canary tagged samples as slowed and the figure leaves them out (subject: the
    /// samples' unit; values: slowed, samples, fast samples, worst canary ratio, slowed
    /// median, fast median).
    CoreSlowedLeftOut,
    /// Slowed samples, too few fast ones to leave any out (as
    /// [`RemarkKind::CoreSlowedLeftOut`]).
    CoreSlowedTooFewFast,
    /// Slowed samples that read no slower: the figure keeps them (as
    /// [`RemarkKind::CoreSlowedLeftOut`]).
    CoreSlowedKept,
    /// The run's fastest canary reading is slowed against this machine's past runs
    /// (values: its ratio to the past's fastest, past runs).
    SlowedRun,
    /// A loop meant to stay in user space entered the kernel (values: system share).
    EnteredKernel,
    /// Other tasks ran in the participants' place (values: share of the time).
    CompetitorRan,
    /// Other tasks held the CPU a little (values: share of the time).
    CompetitorHeld,
    /// Participants on several CPUs idle while they wait (values: CPUs, held share).
    SleepingParticipants,
    /// Occupancy read from some windows only (values: exact windows, windows).
    OccupancyPartial,
    /// The evidence pass after the samples failed (subject: the error).
    EvidencePassLost,
    /// A round of the run was not taken (subject: why; values: round from 1, rounds).
    RoundLost,
    /// The partners did not take turns (subject: the iteration's name; values: switches
    /// per iteration).
    FewSwitches,
    /// More involuntary switches than a wake-up explains (subject: the iteration's name;
    /// values: involuntary, voluntary per iteration).
    InvoluntarySwitches,
    /// A ring's members did not take turns (values: voluntary, involuntary per hop).
    RingCompeted,
    /// The time slice did not take effect (values: ms between preemptions, ms set).
    SliceNotTaken,
    /// perf and getrusage disagree on faults (values: perf, getrusage per round).
    FaultCountsDisagree,
    /// THP is "never" system-wide: MADV_HUGEPAGE cannot help.
    ThpNever,
    /// Large folios map many pages per fault (values: pages per fault, KiB per fault).
    LargeFolios,
    /// Fault-around mapped few neighbours (values: faults per page).
    FewNeighbours,
    /// The peak RSS could not be reset.
    PeakRssNotReset,
    /// /proc/self/smaps could not be read.
    SmapsUnreadable,
    /// A traced part left out (subject: why, as the tracer words it).
    PartLeftOut,
    /// The kernel refused the participant filter (subject: the events, comma-joined).
    FilterRefused,
    /// No calibration: no RPC matched.
    NoCalibrationNoRpc,
    /// No calibration: too few rounds to fit.
    NoCalibrationTooFewRounds,
}

/// A number of a remark: one reading, or the range of several (remarks folded over rounds
/// or rows). NaN (a side with no samples) is written as null, and equals NaN: a remark that
/// quotes a side with no samples is the same remark when made again (a merge of rounds
/// drops a round's remark that its samples make again).
#[derive(Debug, Clone, Copy)]
pub struct Num {
    pub lo: f64,
    pub hi: f64,
}

impl PartialEq for Num {
    fn eq(&self, o: &Num) -> bool {
        let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
        same(self.lo, o.lo) && same(self.hi, o.hi)
    }
}

impl Num {
    pub fn one(v: f64) -> Num {
        Num { lo: v, hi: v }
    }

    /// Whether it is a single reading.
    pub fn is_one(&self) -> bool {
        self.lo.to_bits() == self.hi.to_bits() || self.lo == self.hi
    }

    /// The range holding both.
    pub fn widen(self, o: Num) -> Num {
        Num {
            lo: min_nan(self.lo, o.lo),
            hi: max_nan(self.hi, o.hi),
        }
    }
}

fn min_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else {
        a.min(b)
    }
}

fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else {
        a.max(b)
    }
}

impl From<f64> for Num {
    fn from(v: f64) -> Num {
        Num::one(v)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum NumRepr {
    One(Option<f64>),
    Range([Option<f64>; 2]),
}

impl Serialize for Num {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = |v: f64| (!v.is_nan()).then_some(v);
        if self.is_one() {
            NumRepr::One(f(self.lo)).serialize(s)
        } else {
            NumRepr::Range([f(self.lo), f(self.hi)]).serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Num, D::Error> {
        let f = |v: Option<f64>| v.unwrap_or(f64::NAN);
        Ok(match NumRepr::deserialize(d)? {
            NumRepr::One(v) => Num::one(f(v)),
            NumRepr::Range([lo, hi]) => Num {
                lo: f(lo),
                hi: f(hi),
            },
        })
    }
}

/// One remark: its kind, what it is about (a unit, a reason, a list of names; empty when
/// the kind says it all) and its numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Remark {
    pub kind: RemarkKind,
    pub subject: String,
    pub values: Vec<Num>,
}

#[derive(Serialize, Deserialize)]
struct Typed {
    kind: RemarkKind,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    subject: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    values: Vec<Num>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RemarkRepr {
    /// Schema version 1: the sentence itself.
    Text(String),
    Typed(Typed),
}

impl Serialize for Remark {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.kind == RemarkKind::Legacy {
            // A version 1 run is written back as it was read.
            return self.subject.serialize(s);
        }
        Typed {
            kind: self.kind,
            subject: self.subject.clone(),
            values: self.values.clone(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Remark {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Remark, D::Error> {
        Ok(match RemarkRepr::deserialize(d)? {
            RemarkRepr::Text(t) => Remark::legacy(t),
            RemarkRepr::Typed(t) => Remark {
                kind: t.kind,
                subject: t.subject,
                values: t.values,
            },
        })
    }
}

impl Remark {
    /// A remark of `kind` about `subject` with `values`.
    pub fn new(kind: RemarkKind, subject: impl Into<String>, values: &[f64]) -> Remark {
        Remark {
            kind,
            subject: subject.into(),
            values: values.iter().map(|&v| Num::one(v)).collect(),
        }
    }

    /// A remark of `kind` with no subject and no numbers.
    pub fn plain(kind: RemarkKind) -> Remark {
        Remark::new(kind, "", &[])
    }

    /// A schema version 1 sentence.
    pub fn legacy(text: impl Into<String>) -> Remark {
        Remark::new(RemarkKind::Legacy, text, &[])
    }

    /// The `i`-th number's single reading (its low end when a range); NaN when absent.
    pub fn value(&self, i: usize) -> f64 {
        self.values.get(i).map_or(f64::NAN, |n| n.lo)
    }

    /// A family's own remark of `kind` with `values`.
    pub fn family(kind: FamilyRemark, values: &[f64]) -> Remark {
        Remark::new(RemarkKind::Family, kind.0, values)
    }

    /// Whether it is a family's remark of `kind`.
    pub fn is_family(&self, kind: FamilyRemark) -> bool {
        self.kind == RemarkKind::Family && self.subject == kind.0
    }

    /// Whether a sentence of a version 1 run.
    pub fn is_legacy(&self) -> bool {
        self.kind == RemarkKind::Legacy
    }

    /// The interval did not reach `target` (a fraction) before sampling stopped for `stop`.
    pub fn not_converged(stop: crate::model::StopReason, target: f64) -> Remark {
        Remark::new(RemarkKind::NotConverged, stop.word(), &[target])
    }

    pub fn outliers(outliers: usize, n: usize) -> Remark {
        Remark::new(RemarkKind::Outliers, "", &[outliers as f64, n as f64])
    }

    pub fn negative_difference() -> Remark {
        Remark::plain(RemarkKind::NegativeDifference)
    }

    pub fn one_sample() -> Remark {
        Remark::plain(RemarkKind::OneSample)
    }

    /// Two modes of samples in `unit` ("ns"): counts and centres, in sequence or not.
    pub fn bimodal(unit: &str, low: (usize, f64), high: (usize, f64), in_sequence: bool) -> Remark {
        let kind = if in_sequence {
            RemarkKind::BimodalInSequence
        } else {
            RemarkKind::BimodalInterleaved
        };
        Remark::new(kind, unit, &[low.0 as f64, low.1, high.0 as f64, high.1])
    }

    /// The canary's split of a measurement's samples in `unit` (see
    /// [`RemarkKind::CoreSlowedLeftOut`] for `kind`'s alternatives and the values).
    pub fn core_slowed(kind: RemarkKind, unit: &str, values: &[f64; 6]) -> Remark {
        Remark::new(kind, unit, values)
    }

    pub fn slowed_run(ratio: f64, runs: usize) -> Remark {
        Remark::new(RemarkKind::SlowedRun, "", &[ratio, runs as f64])
    }

    pub fn entered_kernel(system_share: f64) -> Remark {
        Remark::new(RemarkKind::EnteredKernel, "", &[system_share])
    }

    pub fn competitor_ran(share: f64) -> Remark {
        Remark::new(RemarkKind::CompetitorRan, "", &[share])
    }

    pub fn competitor_held(share: f64) -> Remark {
        Remark::new(RemarkKind::CompetitorHeld, "", &[share])
    }

    pub fn sleeping_participants(cpus: usize, share: f64) -> Remark {
        Remark::new(RemarkKind::SleepingParticipants, "", &[cpus as f64, share])
    }

    pub fn occupancy_partial(exact: u64, windows: u64) -> Remark {
        Remark::new(
            RemarkKind::OccupancyPartial,
            "",
            &[exact as f64, windows as f64],
        )
    }

    pub fn evidence_pass_lost(error: impl Into<String>) -> Remark {
        Remark::new(RemarkKind::EvidencePassLost, error, &[])
    }

    /// Round `round` (from 1) of `rounds` was not taken, for `why`.
    pub fn round_lost(round: usize, rounds: usize, why: impl Into<String>) -> Remark {
        Remark::new(RemarkKind::RoundLost, why, &[round as f64, rounds as f64])
    }

    pub fn few_switches(per: &str, switches: f64) -> Remark {
        Remark::new(RemarkKind::FewSwitches, per, &[switches])
    }

    pub fn involuntary_switches(per: &str, involuntary: f64, voluntary: f64) -> Remark {
        Remark::new(
            RemarkKind::InvoluntarySwitches,
            per,
            &[involuntary, voluntary],
        )
    }

    pub fn ring_competed(voluntary: f64, involuntary: f64) -> Remark {
        Remark::new(RemarkKind::RingCompeted, "", &[voluntary, involuntary])
    }

    /// Preempted every `every_ms` where the slice was `set_ms`, under mechanism `mech`
    /// ("rr", "eevdf"): its words suggest only what is not already in use.
    pub fn slice_not_taken(every_ms: f64, set_ms: f64, mech: &str) -> Remark {
        Remark::new(RemarkKind::SliceNotTaken, mech, &[every_ms, set_ms])
    }

    pub fn fault_counts_disagree(perf: f64, rusage: f64) -> Remark {
        Remark::new(RemarkKind::FaultCountsDisagree, "", &[perf, rusage])
    }

    pub fn large_folios(pages_per_fault: f64, kib_per_fault: f64) -> Remark {
        Remark::new(
            RemarkKind::LargeFolios,
            "",
            &[pages_per_fault, kib_per_fault],
        )
    }

    pub fn few_neighbours(faults_per_page: f64) -> Remark {
        Remark::new(RemarkKind::FewNeighbours, "", &[faults_per_page])
    }

    pub fn part_left_out(why: impl Into<String>) -> Remark {
        Remark::new(RemarkKind::PartLeftOut, why, &[])
    }

    pub fn filter_refused(events: &[String]) -> Remark {
        Remark::new(RemarkKind::FilterRefused, events.join(", "), &[])
    }
}

/// Remarks of one kind and subject folded into one whose numbers are ranges, in first-seen
/// order; remarks of a version 1 run stay as they are. The folded list holds each remark
/// once.
pub fn fold(remarks: &[Remark]) -> Vec<Remark> {
    let mut out: Vec<Remark> = Vec::new();
    for r in remarks {
        let same = out.iter().position(|o| {
            !r.is_legacy()
                && o.kind == r.kind
                && o.subject == r.subject
                && o.values.len() == r.values.len()
        });
        match same {
            Some(i) => {
                for (a, b) in out[i].values.iter_mut().zip(&r.values) {
                    *a = a.widen(*b);
                }
            }
            None if out.contains(r) => {}
            None => out.push(r.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_sentence_loads_as_legacy_and_is_written_back_as_it_was() {
        let r: Remark = serde_json::from_str("\"2 of 9 samples are outliers\"").unwrap();
        assert_eq!(r.kind, RemarkKind::Legacy);
        assert_eq!(r.subject, "2 of 9 samples are outliers");
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            "\"2 of 9 samples are outliers\""
        );
    }

    #[test]
    fn a_typed_remark_round_trips_with_its_ranges_and_nan() {
        let mut r = Remark::outliers(2, 9);
        r.values[0] = r.values[0].widen(Num::one(5.0));
        r.values.push(Num::one(f64::NAN));
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(text, r#"{"kind":"outliers","values":[[2.0,5.0],9.0,null]}"#);
        let back: Remark = serde_json::from_str(&text).unwrap();
        assert_eq!(back.values[0], Num { lo: 2.0, hi: 5.0 });
        assert!(back.value(2).is_nan());
    }

    #[test]
    fn remarks_of_one_kind_fold_into_ranges_and_others_stay() {
        let f = fold(&[
            Remark::outliers(2, 21),
            Remark::one_sample(),
            Remark::outliers(9, 40),
            Remark::one_sample(),
            Remark::legacy("a"),
            Remark::legacy("a"),
            Remark::legacy("b"),
        ]);
        assert_eq!(f.len(), 4, "{f:?}");
        assert_eq!(
            f[0].values,
            [Num { lo: 2.0, hi: 9.0 }, Num { lo: 21.0, hi: 40.0 }]
        );
        // Another subject is another remark.
        let g = fold(&[
            Remark::few_switches("yield", 0.1),
            Remark::few_switches("hop", 0.2),
        ]);
        assert_eq!(g.len(), 2);
    }
}
