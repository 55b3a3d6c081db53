//! Remarks in words: the one place a [`Remark`] becomes a sentence. Every view (terminal,
//! CSV, Markdown, HTML) words a remark through [`words`]; "each kind once" groups remarks by
//! [`key`] and folds each group into one with ranges ([`fold`]).
//!
//! Sentences of schema version 1 runs are kept as they were read, and fold as they did
//! then: by their words with the digits taken out ([`legacy`]).

use crate::model::{fold_remarks, Num, Remark, RemarkKind as K};
use crate::units::{fmt_num, fmt_with_unit, time_unit, Unit};

/// A difference raw − baseline whose whole interval is below zero.
pub const NEGATIVE_FINDING: &str = "faster with than without: the subtraction's model does not \
     hold here (the difference's whole interval is below zero), so no cost is given";

/// How a slowed-core remark ends when the figure comes from the samples on a fast core.
const LEFT_OUT: &str = ": figure from those";
/// How it ends when too few samples ran on a fast core to leave any out.
const TOO_FEW_FAST: &str = ": too few on a fast core, figure from all";
/// How it ends when the slowed samples read faster than the others.
const FAST_NOT_EXPLAINED: &str =
    ": they read faster, so the slowed core does not explain them; figure from all";
/// How it ends when the slowed samples read no slower, to the figure's digits.
const SAME_ALL: &str = ": figure from all";

/// The sentence of one remark; a number that is a range reads "lo–hi".
pub fn words(r: &Remark) -> String {
    let v = |i: usize| r.values.get(i).copied().unwrap_or(Num::one(f64::NAN));
    let fixed = |i: usize, digits: usize| span(v(i), &|x| format!("{x:.digits$}"));
    let pct = |i: usize, digits: usize| span(v(i), &|x| format!("{:.digits$}", x * 100.0));
    let s = r.subject.as_str();
    match r.kind {
        K::Legacy => s.to_string(),
        K::Family => family_words(r),
        K::NotConverged => format!("interval did not reach ±{}% before the {s}", pct(0, 0)),
        K::Outliers => format!(
            "{} of {} samples are outliers (modified z > 3.5): flagged, kept",
            fixed(0, 0),
            fixed(1, 0)
        ),
        K::NegativeDifference => NEGATIVE_FINDING.into(),
        K::OneSample => {
            "1 sample, no interval: the figure is one reading, its spread unknown".into()
        }
        K::BimodalInSequence | K::BimodalInterleaved => format!(
            "samples are bimodal: {} near {}, {} near {}{}; the median describes neither group",
            fixed(0, 0),
            with_unit(v(1), s),
            fixed(2, 0),
            with_unit(v(3), s),
            if r.kind == K::BimodalInSequence {
                " one after the other (the state changed during the measurement: a warm-up \
                 that ended too early, a frequency or scheduler change, a core slowed by its \
                 SMT sibling or the host)"
            } else {
                " interleaved (two behaviours alternate)"
            }
        ),
        K::CoreSlowedLeftOut | K::CoreSlowedTooFewFast | K::CoreSlowedKept => core_slowed(r),
        K::SlowedRun => format!(
            "the core was slowed throughout this run: its fastest canary reading was {}× the \
             fastest of this machine's last {} run(s) with one (an SMT sibling or the host's \
             other work on this core, or a lower clock); figures describe the slowed state, \
             so compare them with care",
            fixed(0, 2),
            fixed(1, 0)
        ),
        K::EnteredKernel => format!(
            "the loop entered the kernel ({}% system time) where it should stay in user space \
             (for clock_gettime: the clocksource has no vDSO support here, so each call is a \
             real system call)",
            pct(0, 0)
        ),
        K::CompetitorRan => format!(
            "other tasks ran in the participants' place {}% of the time, inflating every \
             sample: stop the competing load or pick an idle CPU with --cpu",
            pct(0, 0)
        ),
        K::CompetitorHeld => format!(
            "other tasks held the CPU for {}% of the measured time",
            pct(0, 1)
        ),
        K::SleepingParticipants => format!(
            "participants on {} CPUs idle while they wait for each other: CPU held {}% per \
             CPU, which cannot tell a competitor from a wake-up wait",
            fixed(0, 0),
            pct(1, 0)
        ),
        K::OccupancyPartial => format!(
            "occupancy from {} of {} windows (the others had a participant runnable at an \
             edge, where its CPU time is stale)",
            fixed(0, 0),
            fixed(1, 0)
        ),
        K::EvidencePassLost => format!("evidence pass after the samples not taken: {s}"),
        K::RoundLost => format!("round {} of {} not taken: {s}", fixed(0, 0), fixed(1, 0)),
        K::FewSwitches => format!(
            "almost no switches happened ({} per {s}): the partners did not take turns on the \
             CPU, so this figure is not a context-switch cost",
            fixed(0, 3)
        ),
        K::InvoluntarySwitches => format!(
            "{} involuntary switches per {s} (voluntary {}): other tasks competed for the CPU",
            fixed(0, 2),
            fixed(1, 2)
        ),
        K::RingCompeted => format!(
            "only {} voluntary switches per hop ({} involuntary): other tasks competed for the \
             CPU",
            fixed(0, 2),
            fixed(1, 2)
        ),
        K::SliceNotTaken => format!(
            "the tasks were preempted every {} ms, not every {} ms: the slice did not take \
             effect as set (the scheduler tick, HZ, bounds how often a running task is \
             preempted unless HRTICK is on). To try: {}slices of at least the tick, or a \
             kernel built with a higher HZ (CONFIG_HZ=1000)",
            fixed(0, 2),
            fixed(1, 2),
            // SCHED_RR is no advice to a run that already used it.
            if s == "rr" {
                ""
            } else {
                "--mech rr (SCHED_RR with kernel.sched_rr_timeslice_ms, as root), "
            }
        ),
        K::FaultCountsDisagree => format!(
            "perf page-faults counted {} per round, getrusage {}: the two sources disagree",
            fixed(0, 0),
            fixed(1, 0)
        ),
        K::ThpNever => "the system THP mode is \"never\": MADV_HUGEPAGE cannot give huge pages \
                        here (oscost does not change the system setting)"
            .into(),
        K::LargeFolios => format!(
            "{} pages per fault ({} KiB mapped per fault), more than fault-around's 16: the \
             page cache holds large folios that one fault maps whole (smaps FilePmdMapped \
             shows 2 MiB mappings; see --show-maps). lmbench lat_pagefault reports ns per \
             page, not per fault: compare it with the raw ns/page (and --order random, its \
             order)",
            fixed(0, 0),
            fixed(1, 0)
        ),
        K::FewNeighbours => format!(
            "{} faults per page: fault-around mapped few neighbours (random order touches \
             pages whose neighbours are already mapped less often; fault_around_bytes may be \
             4096)",
            fixed(0, 2)
        ),
        K::PeakRssNotReset => {
            "could not reset the peak RSS (/proc/self/clear_refs): max RSS is the process's peak"
                .into()
        }
        K::SmapsUnreadable => "could not read /proc/self/smaps: huge-page backing unknown".into(),
        K::PartLeftOut => s.to_string(),
        K::FilterRefused => {
            format!("the kernel refused the participant filter on {s}: recorded unfiltered")
        }
        K::NoCalibrationNoRpc => {
            "no calibration of the observer's cost: no RPC matched; the parts are not corrected"
                .into()
        }
        K::NoCalibrationTooFewRounds => "no calibration of the observer's cost: the batches \
                                         could not be fitted (too few rounds); the parts are \
                                         not corrected"
            .into(),
    }
}

/// A family's own remark, as the family of its id's section words it; its id and numbers
/// when no family does.
fn family_words(r: &Remark) -> String {
    let section = r.subject.split('.').next().unwrap_or("");
    super::FAMILIES
        .iter()
        .filter(|f| f.section() == section)
        .find_map(|f| f.words(r))
        .unwrap_or_else(|| {
            let numbers: Vec<String> = r.values.iter().map(|&n| span(n, &fmt_num)).collect();
            format!("{}: {}", r.subject, numbers.join(", "))
        })
}

/// The sentences of remarks, each as [`words`] says it.
pub fn all_words(rs: &[Remark]) -> Vec<String> {
    rs.iter().map(words).collect()
}

/// A number as `f` writes it; a range as its two ends, or one when they read the same.
pub fn span(n: Num, f: &dyn Fn(f64) -> String) -> String {
    let (lo, hi) = (f(n.lo), f(n.hi));
    if n.is_one() || lo == hi {
        lo
    } else {
        format!("{lo}–{hi}")
    }
}

/// A value in the remark's unit (its `subject`, the unit as written) with its unit ("1.41
/// ns"); a range in one unit writes it once ("1.41–2.55 ns").
fn with_unit(n: Num, subject: &str) -> String {
    let unit = Unit::from(subject);
    if n.is_one() || !unit.is_time() {
        return span(n, &|x| fmt_with_unit(x, &unit));
    }
    let ((dl, sl), (dh, sh)) = (time_unit(n.lo), time_unit(n.hi));
    if sl != sh {
        return span(n, &|x| fmt_with_unit(x, &unit));
    }
    let (lo, hi) = (fmt_num(n.lo / dl), fmt_num(n.hi / dh));
    let unit = unit.rescaled(sl);
    if lo == hi {
        format!("{lo} {unit}")
    } else {
        format!("{lo}–{hi} {unit}")
    }
}

/// The canary's split: how many samples ran slowed, what they read, and what the figure is.
/// When the slowed and the fast samples' medians print as the same figure, it says they read
/// the same rather than quoting one number twice as if it were a difference.
fn core_slowed(r: &Remark) -> String {
    let v = |i: usize| r.values.get(i).copied().unwrap_or(Num::one(f64::NAN));
    let count = |i: usize| span(v(i), &|x| format!("{x:.0}"));
    let head = format!(
        "core slowed for {} of {} samples (canary up to {}× its best: SMT sibling, host or \
         clock)",
        count(0),
        count(1),
        span(v(3), &|x| format!("{x:.2}"))
    );
    let (slowed, fast) = (with_unit(v(4), &r.subject), with_unit(v(5), &r.subject));
    let n_fast = count(2);
    match r.kind {
        K::CoreSlowedTooFewFast => format!("{head}; they read {slowed}{TOO_FEW_FAST}"),
        _ if slowed == fast => {
            let ending = if r.kind == K::CoreSlowedLeftOut {
                LEFT_OUT
            } else {
                SAME_ALL
            };
            format!("{head}; they read {slowed}, as the {n_fast} on a fast core did{ending}")
        }
        _ => {
            let ending = if r.kind == K::CoreSlowedLeftOut {
                LEFT_OUT
            } else {
                FAST_NOT_EXPLAINED
            };
            format!("{head}; they read {slowed}, the {n_fast} on a fast core {fast}{ending}")
        }
    }
}

/// The remark in brief, the same words whatever its numbers and units, for kinds that have
/// one: probes slowed during a run share one line of the default output (each remark in
/// full with --verbose; the JSON keeps it). Version 1 sentences of the canary have the same.
pub fn brief(r: &Remark) -> Option<&'static str> {
    let kind = match r.kind {
        K::Legacy => legacy::canary_kind(&r.subject)?,
        k => k,
    };
    Some(match kind {
        K::CoreSlowedLeftOut => "core slowed during some samples; figures from the fast ones",
        K::CoreSlowedTooFewFast => "core slowed during most samples; figures from all",
        K::CoreSlowedKept => {
            "core slowed during some samples that read no slower; figures from all"
        }
        _ => return None,
    })
}

/// What the remark is without its numbers, when its kind says it in three words or more
/// ("samples are bimodal"): remarks of one gist share a line of the default output.
pub fn gist(r: &Remark) -> Option<String> {
    if let Some(b) = brief(r) {
        return Some(b.into());
    }
    match r.kind {
        K::Legacy => legacy::gist(&r.subject).map(String::from),
        K::BimodalInSequence | K::BimodalInterleaved => Some("samples are bimodal".into()),
        K::FewSwitches => None,
        K::EvidencePassLost => Some("evidence pass after the samples not taken".into()),
        K::FilterRefused => None,
        K::SmapsUnreadable => Some("could not read /proc/self/smaps".into()),
        K::ThpNever => Some("the system THP mode is \"never\"".into()),
        _ => None,
    }
}

/// What remarks of one kind share: their kind and subject (a version 1 sentence: its words
/// without its numbers).
pub fn key(r: &Remark) -> String {
    match r.kind {
        K::Legacy => format!("legacy\u{1f}{}", legacy::skeleton(&r.subject)),
        k => format!("{k:?}\u{1f}{}", r.subject),
    }
}

/// Remarks of one kind as one each, their numbers as ranges (version 1 sentences by their
/// words, as they were folded then).
pub fn fold(rs: &[Remark]) -> Vec<Remark> {
    let (old, typed): (Vec<&Remark>, Vec<&Remark>) = rs.iter().partition(|r| r.is_legacy());
    if typed.is_empty() {
        let texts: Vec<String> = old.iter().map(|r| r.subject.clone()).collect();
        return legacy::fold(&texts)
            .into_iter()
            .map(Remark::legacy)
            .collect();
    }
    let mut out = fold_remarks(rs);
    // Version 1 sentences among typed ones fold among themselves.
    let texts: Vec<String> = out
        .iter()
        .filter(|r| r.is_legacy())
        .map(|r| r.subject.clone())
        .collect();
    if texts.len() > 1 {
        out.retain(|r| !r.is_legacy());
        out.extend(legacy::fold(&texts).into_iter().map(Remark::legacy));
    }
    out
}

/// Plain sentences (notes, a failed check's line) folded as version 1 sentences are.
pub fn fold_sentences(texts: &[String]) -> Vec<String> {
    legacy::fold(texts)
}

/// Sentences as runs of schema version 1 wrote them (and notes, which are sentences still):
/// numbers are told apart from words by their digits.
pub mod legacy {
    /// One number of a sentence as written, with its value: ("12.5", 12.5).
    type Number = (f64, String);

    /// The canary's kind of a version 1 sentence (its head and ending), if it is one.
    pub(super) fn canary_kind(text: &str) -> Option<super::K> {
        if !text.starts_with("core slowed for ") {
            return None;
        }
        Some(if text.ends_with(super::LEFT_OUT) {
            super::K::CoreSlowedLeftOut
        } else if text.ends_with(super::TOO_FEW_FAST) {
            super::K::CoreSlowedTooFewFast
        } else {
            super::K::CoreSlowedKept
        })
    }

    /// The words before the first colon when they say what it is without a number
    /// ("samples are bimodal", "running in a virtual machine (KVM)").
    pub fn gist(text: &str) -> Option<&str> {
        text.split_once(": ")
            .map(|(g, _)| g)
            .filter(|g| !g.contains(|c: char| c.is_ascii_digit()) && g.split(' ').count() >= 3)
    }

    /// The sentence with its numbers taken out: sentences of one kind share it.
    pub fn skeleton(text: &str) -> String {
        shape(text).0
    }

    /// Split a sentence into its text and its numbers: ("other tasks ran # of the time",
    /// [(56, 56)]). A number is digits with at most one decimal point between digits; a
    /// range already folded ("43–51") is one number with its two ends, so that sentences
    /// folded once fold again into one range, never a range of ranges.
    fn shape(text: &str) -> (String, Vec<(Number, Number)>) {
        let mut skeleton = String::new();
        let mut numbers = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let number_at = |mut i: usize| -> (Number, usize) {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let token: String = chars[start..i].iter().collect();
            ((token.parse().unwrap_or(0.0), token), i)
        };
        let mut i = 0;
        while i < chars.len() {
            if chars[i].is_ascii_digit() {
                let (lo, next) = number_at(i);
                i = next;
                let mut hi = lo.clone();
                if i + 1 < chars.len() && chars[i] == '–' && chars[i + 1].is_ascii_digit() {
                    let (end, next) = number_at(i + 1);
                    i = next;
                    hi = end;
                }
                numbers.push((lo, hi));
                skeleton.push('#');
            } else {
                skeleton.push(chars[i]);
                i += 1;
            }
        }
        (skeleton, numbers)
    }

    /// Sentences that differ only in their numbers become one with the range of each number
    /// ("48–56%"), in first-seen order; the others stay as they are.
    pub fn fold(texts: &[String]) -> Vec<String> {
        let shapes: Vec<_> = texts.iter().map(|r| shape(r)).collect();
        let mut out = Vec::new();
        let mut done = vec![false; texts.len()];
        for i in 0..texts.len() {
            if done[i] {
                continue;
            }
            let group: Vec<usize> = (i..texts.len())
                .filter(|&j| !done[j] && shapes[j].0 == shapes[i].0)
                .collect();
            for &j in &group {
                done[j] = true;
            }
            if group.len() == 1 || shapes[i].1.is_empty() {
                out.push(texts[i].clone());
                continue;
            }
            let mut text = String::new();
            for (k, piece) in shapes[i].0.split('#').enumerate() {
                if k > 0 {
                    let values = group.iter().map(|&j| &shapes[j].1[k - 1]);
                    let lo = values
                        .clone()
                        .map(|(lo, _)| lo)
                        .min_by(|a, b| a.0.total_cmp(&b.0))
                        .unwrap();
                    let hi = values
                        .map(|(_, hi)| hi)
                        .max_by(|a, b| a.0.total_cmp(&b.0))
                        .unwrap();
                    if lo.0 == hi.0 {
                        text.push_str(&lo.1);
                    } else {
                        text.push_str(&format!("{}–{}", lo.1, hi.1));
                    }
                }
                text.push_str(piece);
            }
            out.push(text);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StopReason;

    #[test]
    fn every_kind_is_worded_from_its_numbers() {
        assert_eq!(
            words(&Remark::outliers(3, 21)),
            "3 of 21 samples are outliers (modified z > 3.5): flagged, kept"
        );
        assert_eq!(
            words(&Remark::not_converged(StopReason::Budget, 0.02)),
            "interval did not reach ±2% before the time budget spent"
        );
        assert_eq!(
            words(&Remark::competitor_ran(0.3249)),
            "other tasks ran in the participants' place 32% of the time, inflating every \
             sample: stop the competing load or pick an idle CPU with --cpu"
        );
        let b = words(&Remark::bimodal("ns", (8, 1.41), (3, 2550.0), true));
        assert!(
            b.starts_with("samples are bimodal: 8 near 1.41 ns, 3 near 2.55 µs one after"),
            "{b}"
        );
    }

    #[test]
    fn a_family_remark_is_told_by_its_constant_and_worded_by_its_family() {
        use crate::model::FamilyRemark;
        const GAPS: FamilyRemark = FamilyRemark("nosuch.gaps");
        let r = Remark::family(GAPS, &[3.0, 1.5]);
        assert!(r.is_family(GAPS) && !r.is_family(FamilyRemark("nosuch.other")));
        // No family of that section words it: its id and numbers, never nothing.
        assert_eq!(words(&r), "nosuch.gaps: 3.00, 1.50");
        let f = fold(&[r.clone(), Remark::family(GAPS, &[5.0, 1.5])]);
        assert_eq!(words(&f[0]), "nosuch.gaps: 3.00–5.00, 1.50");
    }

    #[test]
    fn a_folded_remark_says_each_number_as_a_range() {
        let f = fold(&[Remark::outliers(2, 21), Remark::outliers(9, 40)]);
        assert_eq!(f.len(), 1);
        assert!(
            words(&f[0]).starts_with("2–9 of 21–40 samples"),
            "{}",
            words(&f[0])
        );
        let f = fold(&[
            Remark::bimodal("ns", (8, 1410.0), (3, 2550.0), false),
            Remark::bimodal("ns", (9, 1510.0), (2, 2650.0), false),
        ]);
        assert!(
            words(&f[0]).starts_with("samples are bimodal: 8–9 near 1.41–1.51 µs, 2–3 near"),
            "{}",
            words(&f[0])
        );
        // Version 1 sentences fold by their words, as they did.
        let f = fold(&[
            Remark::legacy("2 of 21 samples are outliers"),
            Remark::legacy("9 of 40 samples are outliers"),
        ]);
        assert_eq!(words(&f[0]), "2–9 of 21–40 samples are outliers");
    }

    #[test]
    fn the_canary_remark_reads_the_same_when_both_sides_print_alike() {
        let r = Remark::core_slowed(
            K::CoreSlowedKept,
            "ns/page",
            &[1.0, 9.0, 8.0, 1.3, 10.01, 10.02],
        );
        let w = words(&r);
        assert!(
            w.contains("they read 10.0 ns/page, as the 8 on a fast core did: figure from all"),
            "{w}"
        );
        assert_eq!(brief(&r), brief(&Remark::legacy(w)));
        let r = Remark::core_slowed(
            K::CoreSlowedKept,
            "ns/page",
            &[1.0, 9.0, 8.0, 1.3, 9.0, 12.0],
        );
        assert!(words(&r).ends_with(FAST_NOT_EXPLAINED), "{}", words(&r));
        assert!(brief(&Remark::outliers(1, 2)).is_none());
    }

    #[test]
    fn remarks_that_differ_only_in_numbers_fold_into_one_with_ranges() {
        let w = |p: u32| {
            format!("other tasks ran in the participants' place {p}% of the time, inflating")
        };
        let remarks = vec![
            w(56),
            "interval did not reach ±2% before the time budget spent".to_string(),
            w(48),
            w(55),
        ];
        let folded = legacy::fold(&remarks);
        assert_eq!(
            folded,
            vec![
                "other tasks ran in the participants' place 48–56% of the time, inflating"
                    .to_string(),
                "interval did not reach ±2% before the time budget spent".to_string(),
            ]
        );
        // Equal numbers stay single; a remark without a sibling is untouched.
        let same = vec!["1 of 12 samples".to_string(), "1 of 12 samples".to_string()];
        assert_eq!(legacy::fold(&same), vec!["1 of 12 samples".to_string()]);
        let decimals = vec!["near 1.50 µs".to_string(), "near 2.25 µs".to_string()];
        assert_eq!(
            legacy::fold(&decimals),
            vec!["near 1.50–2.25 µs".to_string()]
        );
    }

    /// A table folds its rows' remarks, each already folded over its rounds: the ranges
    /// widen ("29–80%"), never chain ("29–56–51–80%", seen on a busy machine), and a row
    /// with one reading ("51%") folds with the rows that have a range.
    #[test]
    fn remarks_already_folded_into_ranges_fold_again_into_one_range() {
        let w = |p: &str| format!("other tasks ran in the participants' place {p}% of the time");
        let folded = legacy::fold(&[w("43–51"), w("29–56"), w("51"), w("48–80")]);
        assert_eq!(folded, vec![w("29–80")]);
        assert_eq!(legacy::skeleton(&w("43–51")), legacy::skeleton(&w("51")));
    }
}
