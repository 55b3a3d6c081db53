//! Checks in words: the one place a [`Check`] becomes text. Every view (terminal, CSV,
//! Markdown, HTML) names a check, says its bound and its reading through [`name`],
//! [`expected`] and [`observed`]; a reading merged over rounds is "round N: …" joined by
//! "; " ([`observed`]) or folded into one with the range of each number ([`folded`]).
//!
//! Checks of schema version 1 runs are kept as they were read, and fold as they did then:
//! by their words with the digits taken out.

use crate::engine::checks::{KERNEL_SHARE_MIN_CPU_US, MAX_LEFT_OUT};
use crate::evidence::placement::format_cpu_list;
use crate::model::{
    Bound, Check, CheckKind as K, Measurement, Num, Reading, RoundTripBand, SwitchSource,
};

use super::remarks::span;
use crate::units::name::Word;

const ENTERS: &str = "enters the kernel (≥ 20% system time)";
const STAYS: &str = "stays in user space (≤ 20% system time)";

/// What the check judges.
pub fn name(c: &Check) -> String {
    match c.kind {
        K::Legacy | K::Named => c.subject.clone(),
        K::Placement | K::Stayed => "placement".into(),
        K::SameCpu => "same CPU".into(),
        K::DistinctCpus => "different CPUs".into(),
        K::CpuHeld | K::CpuUnreadable | K::CpuNeverExact | K::CpuLeftOut => {
            "CPU held by participants".into()
        }
        K::CpuTimeInWindow => "CPU time within the window".into(),
        K::RunQueueWait => "run-queue wait".into(),
        K::OtherTasks => "other tasks on the participants' CPUs".into(),
        K::KernelShare => "kernel share of CPU time".into(),
        K::CpuMigrations => "cpu migrations".into(),
        K::TraceMatched => "RPCs matched in the trace".into(),
        K::TraceLost => "trace records lost".into(),
        K::PartsNonNegative => "every part ≥ 0".into(),
        K::PartsAddUp => "sum of part means vs the client's time of the same RPCs".into(),
        K::TraceComplete => "switches to the client in the trace vs counted (rusage)".into(),
        K::MinorFaultsPerSwitch => "minor faults per switch".into(),
        K::HugePages => "huge pages backing the buffer".into(),
        K::PartnersRunQueueWait => "run-queue wait (others on the partners' CPUs)".into(),
        K::Alone => crate::probes::syscall::ALONE.into(),
        K::SwitchesPerHop => "context switches per hop".into(),
        K::CorrectedSum => crate::probes::rpc::correct::SUM_CHECK.into(),
        K::CorrectedSumMoved => crate::probes::rpc::correct::SUM_CHECK_MOVED.into(),
        K::CorrectedNonNegative => "every corrected part ≥ 0".into(),
        K::NoiseClock => format!(
            "CPU {} gaps hold the time off the CPU",
            c.reading.get(0) as usize
        ),
        K::NoiseCount => format!(
            "CPU {} {} traced against /proc",
            c.reading.get(0) as usize,
            c.subject
        ),
        K::StateLive => match c.bound {
            Bound::Mask {
                read_back: true, ..
            } => format!("{} state loaded before every switch", c.subject),
            _ => format!("{} state live at every switch", c.subject),
        },
        K::StateReleased => format!("{} state released in the baseline", c.subject),
        K::StateSavedLive => format!("{} state saved live (x86_fpu)", c.subject),
        K::BarrierGranted => "indirect-branch barrier granted".into(),
        K::WalkPages => c.subject.clone(),
        K::PartnerCpu => "partner ran on another CPU".into(),
        K::SwitchesPerRoundTrip => "context switches per round trip of both sides".into(),
        K::CompetitorAlive => "competing process still alive (not OOM-killed)".into(),
        K::StillCached => "pages still in the page cache after eviction (mincore, ≤ 1%)".into(),
        K::BlocksReadIn => "blocks read in (inblock)".into(),
        K::SliceRate => "involuntary switches per second".into(),
        K::NoiseReaderPlaced => format!("CPU {} reader stayed on its CPU", first_cpu(&c.bound)),
    }
}

/// The bound, as "expected …" goes on.
pub fn expected(c: &Check) -> String {
    let pct = |x: f64| format!("{:.0}", x * 100.0);
    match (c.kind, &c.bound) {
        (_, Bound::Text(t)) => t.clone(),
        (K::Placement, Bound::OnCpus(cpus)) => {
            format!("all participants on CPU {}", format_cpu_list(cpus))
        }
        (K::Stayed, _) => "each participant stays on one CPU through its window".into(),
        (K::SameCpu, _) => "all participants on one CPU".into(),
        (K::DistinctCpus, _) => "the partners on two CPUs".into(),
        (K::CpuHeld, Bound::AtLeast(x)) => format!("≥ {}% of wall time", pct(*x)),
        (K::CpuUnreadable, _) => "participants' CPU time readable".into(),
        (K::CpuNeverExact, _) => "CPU time read exactly at some window's edges".into(),
        (K::CpuLeftOut, _) => format!(
            "CPU time read exactly in at least {:.0}% of windows",
            (1.0 - MAX_LEFT_OUT) * 100.0
        ),
        (K::CpuTimeInWindow, Bound::AtMost(x)) => {
            format!("≤ {}% of wall time per CPU", pct(*x))
        }
        (K::RunQueueWait | K::PartnersRunQueueWait, Bound::AtMost(x)) => {
            format!("≤ {}% of wall time", pct(*x))
        }
        (K::OtherTasks, Bound::AtMost(x)) => {
            format!(
                "none kept runnable there; ≤ {}% of their time in all",
                pct(*x)
            )
        }
        (K::KernelShare, b) => {
            let dir = if matches!(b, Bound::AtLeast(_)) {
                ENTERS
            } else {
                STAYS
            };
            if matches!(c.reading, Reading::TooShort(_)) {
                format!(
                    "{dir}, from ≥ {} ms of CPU time",
                    KERNEL_SHARE_MIN_CPU_US / 1000
                )
            } else {
                dir.into()
            }
        }
        (K::TraceMatched, Bound::AtLeast(x)) => format!("≥ {}% of those made", pct(*x)),
        (K::TraceLost, Bound::AtMost(x)) => format!("{x}"),
        (K::PartsNonNegative, Bound::AtLeast(x)) => format!("≥ {x} ns"),
        (K::PartsAddUp, Bound::Near { tol, .. }) => format!("within ±{}%", pct(*tol)),
        (K::CorrectedSum | K::CorrectedSumMoved, Bound::Near { tol, .. }) => {
            format!("within ±{}%", pct(*tol))
        }
        (K::NoiseClock, Bound::AtLeast(missed)) => {
            let t = crate::units::fmt_time;
            format!(
                "≥ {} (wall {} − the reader's CPU time {})",
                t(*missed),
                t(c.reading.get(2)),
                t(c.reading.get(3))
            )
        }
        (K::NoiseCount, Bound::Near { value, .. }) => format!(
            "{} (the /proc delta) ±2%",
            crate::units::fmt_thousands(*value as u64)
        ),
        (K::StateLive, Bound::Mask { bits, read_back }) => {
            let what = mask_reader(*read_back);
            if *read_back {
                format!("{what} ⊇ {bits:#x} in both tasks (the loaded values, read back)")
            } else {
                format!("{what} ⊇ {bits:#x} in both tasks")
            }
        }
        (K::StateReleased, Bound::Mask { bits, read_back }) => format!(
            "{} ∩ {bits:#x} = 0 at every switch",
            mask_reader(*read_back)
        ),
        (K::StateSavedLive, Bound::Mask { bits, .. }) => {
            format!("xfeatures ⊇ {bits:#x} in every save")
        }
        (K::BarrierGranted, _) => {
            "prctl reads force disabled, status 'force disabled' (baseline not)".into()
        }
        (K::WalkPages, Bound::Pages { lines, pages }) => format!("{lines} lines in {pages} pages"),
        (K::PartnerCpu, Bound::OnCpus(cpus)) if cpus.len() == 2 => {
            format!("timer on CPU {}, partner on CPU {}", cpus[0], cpus[1])
        }
        (K::NoiseReaderPlaced, b) => format!("CPU {} at start and end", first_cpu(b)),
        (K::CorrectedNonNegative, _) => "each mean's interval reaches ≥ 0 ns".into(),
        (K::TraceComplete, Bound::Near { tol, .. }) => format!("within {}% per RPC", pct(*tol)),
        (K::MinorFaultsPerSwitch, Bound::AtMost(x)) => {
            format!(
                "≤ {x} (or ≤ {} in all)",
                crate::probes::ctx::sweep::STRAY_FAULTS
            )
        }
        (K::HugePages, Bound::AtLeast(x)) => {
            format!("≥ {}% (AnonHugePages in /proc/self/smaps)", pct(*x))
        }
        (K::Alone, _) => "1 thread, its files shared with no other task".into(),
        (K::SwitchesPerRoundTrip, Bound::RoundTrips(b)) => round_trip_band(b),
        (K::SliceRate, Bound::Slice { per_s, tol, set }) => {
            let near = format!("{} ±{}%", crate::units::fmt_num(*per_s), pct(*tol));
            match set {
                Some([kernel, asked]) => format!(
                    "{near} (the kernel's {} ms slice; {} ms asked)",
                    slice_ms(*kernel),
                    slice_ms(*asked)
                ),
                None => near,
            }
        }
        (K::SwitchesPerHop, _) => "1 to 2 ±5% (normal scheduling: 1 + the share of hops whose \
                                   woken member preempted its waker)"
            .into(),
        (_, b) => bound(b),
    }
}

/// The band of a round trip's switches: "2.00 ±5% a round trip, plus 4–8 a sample of chunk
/// hand-offs", saying where the hand-offs' range hides extra switches or was not allowed for.
fn round_trip_band(b: &RoundTripBand) -> String {
    let switches = if b.may_skip > 0.0 {
        format!("{:.2}–{:.2}", b.per_rt - b.may_skip, b.per_rt)
    } else {
        format!("{:.2}", b.per_rt)
    };
    let tol = format!("{:.0}", b.tol * 100.0);
    let Some(h) = &b.handoffs else {
        return format!("{switches} ±{tol}% (hand-offs not allowed for: no sample count)");
    };
    let wide = b
        .handoffs_too_wide()
        .map(|r| {
            format!(
                "; the hand-offs' range, {r:.2} a round trip at {} a sample, is wider than ±{tol}%: extra switches within it go unseen",
                h.per_sample()
            )
        })
        .unwrap_or_default();
    format!(
        "{switches} ±{tol}% a round trip, plus {}–{} a sample of chunk hand-offs{wide}",
        h.least, h.most
    )
}

/// Where a switch count comes from, as its reading says.
pub fn switch_source(s: SwitchSource) -> &'static str {
    match s {
        SwitchSource::Perf => "perf context-switches",
        SwitchSource::Rusage => "rusage nvcsw+nivcsw",
    }
}

/// A slice in ms, as many decimals as it needs ("4", "1.5").
fn slice_ms(ms: f64) -> String {
    let s = format!("{ms:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What a liveness mask is read from.
fn mask_reader(read_back: bool) -> &'static str {
    if read_back {
        "read-back"
    } else {
        "XINUSE"
    }
}

/// The first CPU a bound names (0 where it names none).
fn first_cpu(b: &Bound) -> usize {
    match b {
        Bound::OnCpus(cpus) => cpus.first().copied().unwrap_or(0),
        _ => 0,
    }
}

/// A bound by itself: "2.00 ±5%", "≤ 0", "≥ 1".
fn bound(b: &Bound) -> String {
    match b {
        // Three significant digits, never more than its tolerance: "2.00 ±5%", "1000 ±35%".
        Bound::Near { value, tol } => {
            format!("{} ±{:.0}%", crate::units::fmt_num(*value), tol * 100.0)
        }
        Bound::AtMost(x) => format!("≤ {x}"),
        Bound::AtLeast(x) => format!("≥ {x}"),
        Bound::Between { lo, hi } => format!("{lo} to {hi}"),
        Bound::OnCpus(cpus) => format!("on CPU {}", format_cpu_list(cpus)),
        Bound::Mask { bits, .. } => format!("{bits:#x}"),
        Bound::Pages { lines, pages } => format!("{lines} lines in {pages} pages"),
        Bound::RoundTrips(b) => round_trip_band(b),
        Bound::Slice { per_s, tol, .. } => {
            format!("{} ±{:.0}%", crate::units::fmt_num(*per_s), tol * 100.0)
        }
        Bound::Kind => String::new(),
        Bound::Text(t) => t.clone(),
    }
}

/// What was observed; merged over rounds that differ, each shown round's reading after its
/// number: "round 1: 57.0% (…); round 3: 41.4% (…)".
pub fn observed(c: &Check) -> String {
    if c.rounds.is_empty() {
        return reading(c, &c.reading);
    }
    c.rounds
        .iter()
        .map(|(r, x)| format!("round {}: {}", r + 1, reading(c, x)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What was observed without the rounds: readings that differ only in their numbers fold
/// into one with the range of each ("41.4–57.0% (…)"); others are joined by "; ".
pub fn folded(c: &Check) -> String {
    if c.rounds.is_empty() {
        return match &c.reading {
            // A version 1 check merged over rounds held them in its words.
            Reading::Text(t) => legacy_readings(t),
            r => reading(c, r),
        };
    }
    let mut groups: Vec<Reading> = Vec::new();
    for (_, r) in &c.rounds {
        match groups.iter_mut().find_map(|g| g.widen(r).map(|w| (g, w))) {
            Some((g, w)) => *g = w,
            None => groups.push(r.clone()),
        }
    }
    groups
        .iter()
        .map(|r| reading(c, r))
        .collect::<Vec<_>>()
        .join("; ")
}

/// "name: expected …, observed …", the line of a failed check.
pub fn line(c: &Check) -> String {
    line_of(c, &observed(c))
}

/// [`line`] with the readings `seen` ([`observed`], or [`folded`] once for every row).
pub fn line_of(c: &Check, seen: &str) -> String {
    format!("{}: expected {}, observed {seen}", name(c), expected(c))
}

/// Why a measurement is invalid, in one line: its failed checks; without one (a figure a
/// probe marked invalid), the first sentence of a version 1 run.
pub fn invalid_reason(m: &Measurement) -> String {
    let failed: Vec<String> = m.failed_checks().map(line).collect();
    if !failed.is_empty() {
        failed.join("; ")
    } else {
        m.warnings
            .iter()
            .find(|w| w.is_legacy())
            .map(|w| w.subject.clone())
            .unwrap_or_else(|| "marked invalid by the probe".into())
    }
}

/// A held share for people: never above 100% as a figure; a reading within the tolerance
/// above it says so.
fn held_pct(share: Num) -> String {
    if share.lo > 1.0 {
        format!(
            "100% (read {}%, within the clock-reading tolerance)",
            span(share, &|x| format!("{:.1}", x * 100.0))
        )
    } else {
        format!("{}%", span(share, &|x| format!("{:.1}", x * 100.0)))
    }
}

fn reading(c: &Check, r: &Reading) -> String {
    let nums = |r: &Reading, i: usize| match r {
        Reading::Values(v) => v.get(i).copied().unwrap_or(Num::one(f64::NAN)),
        _ => Num::one(f64::NAN),
    };
    let v = |i: usize| nums(r, i);
    let pct = |n: Num, d: usize| span(n, &|x| format!("{:.d$}", x * 100.0));
    let fixed = |n: Num, d: usize| span(n, &|x| format!("{x:.d$}"));
    let time = |n: Num| span(n, &crate::units::fmt_time);
    match (c.kind, r) {
        (_, Reading::Text(t)) => t.clone(),
        (
            _,
            Reading::Switches {
                per_op,
                source,
                digits,
                per_sample,
                split,
            },
        ) => {
            let of_samples =
                per_sample.map_or(String::new(), |n| format!("; {n} round trips a sample"));
            let split = split.map_or(String::new(), |[vol, invol]| {
                format!(
                    "; voluntary {}, involuntary {}",
                    fixed(vol, 3),
                    fixed(invol, 3)
                )
            });
            format!(
                "{} ({}{of_samples}{split})",
                fixed(*per_op, usize::from(*digits)),
                switch_source(*source)
            )
        }
        (_, Reading::Cpus(cpus)) if cpus.is_empty() => "no placement seen".into(),
        (K::Placement, Reading::Cpus(cpus)) => format!("on CPU {}", format_cpu_list(cpus)),
        (_, Reading::Cpus(cpus)) => format!("CPU {}", format_cpu_list(cpus)),
        (_, Reading::Misplaced(bad)) => bad
            .iter()
            .map(|p| {
                let when = if p.at_end { "end" } else { "start" };
                match p.cpu {
                    Some(cpu) => format!("{} on CPU {cpu} at {when}", p.role),
                    None => format!("{} not seen at {when}", p.role),
                }
            })
            .collect::<Vec<_>>()
            .join("; "),
        (_, Reading::Moved(moved)) => moved
            .iter()
            .map(|m| match m.from_to {
                Some((a, b)) => format!("{} moved CPU {a} → {b}", m.role),
                None => format!("{} not seen at both edges", m.role),
            })
            .collect::<Vec<_>>()
            .join("; "),
        (K::Stayed, _) if v(0).lo == 0.0 => "no placement seen".into(),
        (K::Stayed, _) => format!("{} windows, each on one CPU", fixed(v(0), 0)),
        (K::CpuHeld, _) => format!(
            "{} (run-queue wait {}% per participant)",
            held_pct(v(0)),
            pct(v(1), 1)
        ),
        (K::CpuUnreadable, _) => "not readable (no thread clock or schedstat for them)".into(),
        (K::CpuNeverExact, _) => format!(
            "0 of {} windows: a participant was runnable at every edge, where its CPU time is \
             stale by up to a tick",
            fixed(v(0), 0)
        ),
        (K::CpuLeftOut, _) => format!(
            "{} of {} windows: participants were kept runnable at the edges (others held the \
             CPU?)",
            fixed(v(0), 0),
            fixed(v(1), 0)
        ),
        (K::CpuTimeInWindow, _) if !c.ok => format!(
            "{}%: measurement window error (CPU time counted outside the window)",
            pct(v(0), 1)
        ),
        (K::CpuTimeInWindow, _) => held_pct(v(0)),
        (K::RunQueueWait | K::PartnersRunQueueWait, _) => format!("{}%", pct(v(0), 1)),
        (
            _,
            Reading::Others {
                share,
                competitors,
                more,
                most,
                unseen,
            },
        ) => {
            let seen = others(*share, competitors, *more, most.as_ref());
            match unseen {
                None => seen,
                Some(u) => format!("{seen}, and {}", unseen_time(u)),
            }
        }
        (_, Reading::Lowest { part, mean, upper }) => format!(
            "lowest: {part} {} ns, interval up to {}",
            fixed(*mean, 0),
            fixed(*upper, 0)
        ),
        (K::CorrectedNonNegative, _) => "no parts".into(),
        (K::CorrectedSum, Reading::Values(v)) if v.len() == 1 => {
            format!("{}, untraced rpc.total not measured", time(v[0]))
        }
        (K::CorrectedSum | K::CorrectedSumMoved, _) => {
            let off = |n: Num| span(n, &|x| format!("{:+.1}", x * 100.0));
            let both = format!("{} vs {} ({}%)", time(v(0)), time(v(1)), off(v(2)));
            if c.kind == K::CorrectedSum {
                return both;
            }
            format!(
                "{both}; beside the traced batches the untraced RPC took {} ({}% from \
                 rpc.total), which the corrected parts match: the machine's state changed \
                 between the two measurements, not the correction",
                time(v(3)),
                off(v(4))
            )
        }
        (K::NoiseClock, _) => format!("{} in gaps", time(v(1))),
        (K::NoiseCount, _) => {
            let n = |i: usize| crate::units::fmt_thousands(v(i).lo as u64);
            if v(2).lo > 0.0 {
                format!("{} traced + {} the kernel counted unwritten", n(1), n(2))
            } else {
                format!("{} traced", n(1))
            }
        }
        (_, Reading::Mask(m)) => match (m, &c.bound) {
            (Some(m), _) => format!("{m:#x}"),
            (None, Bound::Mask { read_back, .. }) => {
                format!("{} not read", mask_reader(*read_back))
            }
            (None, _) => "not read".into(),
        },
        (K::StateSavedLive, _) => format!("{:#x} in {} saves", v(0).lo as u64, v(1).lo as u64),
        (_, Reading::Barrier { spec, on, off }) => {
            let show = |v: &[Option<String>]| {
                v.iter()
                    .map(|s| s.as_deref().unwrap_or("unread"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!(
                "prctl {:?}; status {} (baseline {})",
                spec,
                show(on),
                show(off)
            )
        }
        (_, Reading::Pages(seen)) => seen.map_or("not counted".into(), |(l, p)| {
            format!("{l} lines in {p} pages")
        }),
        (_, Reading::Placed(seen)) => seen
            .iter()
            .map(|(role, start, end)| format!("{role} on {start:?}→{end:?}"))
            .collect::<Vec<_>>()
            .join(", "),
        (_, Reading::Seen { start, end }) => {
            let seen = |c: &Option<usize>| c.map_or("?".into(), |c| c.to_string());
            format!("CPU {} and {}", seen(start), seen(end))
        }
        (_, Reading::Alone { threads, forked }) => alone(*threads, forked.as_deref()),
        (_, Reading::TooShort(ms)) => format!(
            "not enough time to check ({} ms; procfs counts clock ticks): use a longer --budget",
            fixed(*ms, 1)
        ),
        (K::KernelShare, _) => format!("{}% system time", pct(v(0), 0)),
        (K::CpuMigrations, _) if c.ok && v(0).hi > 0.0 => format!(
            "0 (perf counted {}, but every task is pinned to one CPU and stayed on it)",
            fixed(v(0), 0)
        ),
        (K::TraceMatched, _) => format!(
            "{}% ({} of {})",
            pct(v(0), 0),
            fixed(v(1), 0),
            fixed(v(2), 0)
        ),
        (K::TraceLost, _) => fixed(v(0), 0),
        (K::PartsNonNegative, _) if v(0).lo.is_finite() => {
            format!("smallest {} ns", fixed(v(0), 0))
        }
        (K::PartsNonNegative, _) => "no parts".into(),
        (K::PartsAddUp, _) => format!(
            "{} ns vs {} ns ({}%)",
            fixed(v(0), 0),
            fixed(v(1), 0),
            span(v(2), &|x| format!("{:+.1}", x * 100.0))
        ),
        (K::TraceComplete, _) => format!("{} traced vs {} counted", fixed(v(0), 3), fixed(v(1), 3)),
        (K::MinorFaultsPerSwitch, _) => format!(
            "{} ({} in the measured windows)",
            fixed(v(0), 5),
            fixed(v(1), 0)
        ),
        (K::HugePages, _) => format!("{}%", pct(v(0), 0)),
        (K::SliceRate, _) => {
            let every = |r: f64| if r > 0.0 { 1000.0 / r } else { f64::INFINITY };
            format!(
                "{}/s ({} over {} s of CPU time), i.e. one every {} ms",
                fixed(v(0), 0),
                fixed(v(1), 0),
                fixed(v(2), 2),
                fixed(
                    Num {
                        lo: every(v(0).hi),
                        hi: every(v(0).lo),
                    },
                    2
                )
            )
        }
        (K::CompetitorAlive, _) if v(0).lo >= 1.0 => "alive".into(),
        (K::CompetitorAlive, _) => "dead".into(),
        (K::StillCached, _) if !c.ok => format!(
            "{} of {} pages resident: eviction did not work",
            fixed(v(0), 0),
            fixed(v(1), 0)
        ),
        (K::StillCached, _) => fixed(v(0), 3),
        (K::BlocksReadIn, _) if !c.ok => "0: no storage reads were accounted to this task".into(),
        (_, Reading::Values(vals)) => vals
            .iter()
            .map(|n| fixed(*n, 3))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The other-tasks reading: the competitors named (three at most), else the one that took
/// most, with the share of all others.
fn others(
    share: Num,
    competitors: &[crate::model::OtherSeen],
    more: usize,
    most: Option<&crate::model::OtherSeen>,
) -> String {
    let pct = |x: f64| format!("{:.1}", x * 100.0);
    let all = span(share, &pct);
    let who = |t: &crate::model::OtherSeen| {
        let nice = if t.nice != 0 {
            format!(" nice {}", t.nice)
        } else {
            String::new()
        };
        format!(
            "pid {} ({}, {}{nice})",
            t.tid,
            crate::escape::terminal(&t.comm),
            t.policy.word()
        )
    };
    if !competitors.is_empty() {
        let named: Vec<String> = competitors
            .iter()
            .map(|t| format!("{} {}%", who(t), span(t.share, &pct)))
            .collect();
        let more = match more {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        return format!(
            "runnable there throughout: {}{more} of the time (all others {all}%)",
            named.join(", ")
        );
    }
    match most {
        Some(t) => format!("{all}% (most: {} {}%)", who(t), span(t.share, &pct)),
        None => format!("{all}%"),
    }
}

/// The alone check's reading: "1 thread, its files shared with no other task".
fn alone(threads: Option<u32>, forked: Option<&[i32]>) -> String {
    let threads = match threads {
        Some(1) => "1 thread".to_string(),
        Some(n) => format!("{n} threads"),
        None => "threads unreadable".to_string(),
    };
    let files = match forked {
        Some([]) => "its files shared with no other task".to_string(),
        Some(pids) => format!(
            "{} child process(es) forked while its files were open (pid {})",
            pids.len(),
            pids.iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "its children could not be listed".to_string(),
    };
    format!("{threads}, {files}")
}

/// The time of tasks that came and went: "tasks that came and went took 412 ms of CPU 1
/// (±40 ms)".
fn unseen_time(u: &crate::model::Unseen) -> String {
    use crate::model::Unseen;
    let ms = |n: Num| span(n, &|x| format!("{x:.0}"));
    match u {
        Unseen::Unreadable => {
            "tasks that came and went: not counted (/proc/stat unreadable)".into()
        }
        Unseen::Took {
            cpus,
            ms: took,
            allowance_ms,
            judged: true,
        } => format!(
            "tasks that came and went took {} ms of CPU {} (±{} ms)",
            ms(*took),
            format_cpu_list(cpus),
            ms(*allowance_ms)
        ),
        Unseen::Took {
            cpus,
            ms: took,
            allowance_ms,
            judged: false,
        } => format!(
            "tasks that came and went: {} ms of CPU {}, not judged (too short a span: \
             /proc/stat's ticks leave ±{} ms, more than the limit)",
            ms(*took),
            format_cpu_list(cpus),
            ms(*allowance_ms)
        ),
    }
}

/// A version 1 check's readings without their rounds, folded into one with the range of
/// each number: "round 1: 57.0% (…); round 3: 41.4% (…)" reads "41.4–57.0% (…)". Readings
/// merged over rounds were "round N: …" joined by "; "; a single reading is kept whole.
fn legacy_readings(observed: &str) -> String {
    let Some(rest) = observed.strip_prefix("round ") else {
        return observed.to_string();
    };
    let each: Vec<String> = rest
        .split("; round ")
        .map(|r| {
            r.split_once(": ")
                .map_or(r, |(_, reading)| reading)
                .to_string()
        })
        .collect();
    super::remarks::fold_sentences(&each).join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CheckKind;

    #[test]
    fn generic_bounds_read_as_they_always_did() {
        let c = Check::near(CheckKind::Named, 2.0, 0.05, 2.2).named("switches");
        assert_eq!(line(&c), "switches: expected 2.00 ±5%, observed 2.200");
        let c = Check::at_most(CheckKind::CpuMigrations, 0.0, 2.0);
        assert_eq!(line(&c), "cpu migrations: expected ≤ 0, observed 2.000");
        let c = Check::at_least(CheckKind::Named, 1.0 / 64.0, 0.0).named("f");
        assert_eq!(expected(&c), "≥ 0.015625");
    }

    /// A timeslice check said "expected 1000.00 ±35%": two decimals on a value known to
    /// ±350.
    #[test]
    fn a_near_bound_is_no_more_precise_than_its_tolerance() {
        let c = Check::near(CheckKind::Named, 1000.0, 0.35, 251.0).named("rate");
        assert_eq!(expected(&c), "1000 ±35%");
        let c = Check::near(CheckKind::Named, 125.0, 0.35, 251.0).named("rate");
        assert_eq!(expected(&c), "125 ±35%");
    }

    #[test]
    fn rounds_are_numbered_and_fold_into_ranges() {
        let mut c = Check::at_least(CheckKind::CpuHeld, 0.95, 0.57);
        let held = |s: f64, d: f64| Reading::Values(vec![Num::one(s), Num::one(d)]);
        c.ok = false;
        c.rounds = vec![(0, held(0.57, 0.012)), (2, held(0.414, 0.008))];
        assert_eq!(
            observed(&c),
            "round 1: 57.0% (run-queue wait 1.2% per participant); round 3: 41.4% \
             (run-queue wait 0.8% per participant)"
        );
        assert_eq!(
            folded(&c),
            "41.4–57.0% (run-queue wait 0.8–1.2% per participant)"
        );
        // Readings of different shapes stay apart.
        c.rounds.push((3, Reading::Text("unreadable".into())));
        assert!(folded(&c).ends_with("; unreadable"), "{}", folded(&c));
    }

    /// c2c --quick on a loaded host read the same two competitors in three rounds, and the
    /// check said each round's sentence in full.
    #[test]
    fn other_tasks_that_name_the_same_tasks_fold_into_ranges() {
        use crate::model::{OtherSeen, SchedPolicy, Unseen};
        let task = |tid: i32, share: f64| OtherSeen {
            tid,
            comm: "rustc".into(),
            policy: SchedPolicy::Other,
            nice: 10,
            share: Num::one(share),
        };
        let round = |a: f64, b: f64, all: f64, ms: f64, judged: bool| Reading::Others {
            share: Num::one(all),
            competitors: vec![task(30112, a), task(30101, b)],
            more: 0,
            most: None,
            unseen: Some(Unseen::Took {
                cpus: vec![0, 1],
                ms: Num::one(ms),
                allowance_ms: Num::one(80.0),
                judged,
            }),
        };
        let mut c = Check::at_most(CheckKind::OtherTasks, 0.05, 0.58);
        c.ok = false;
        c.rounds = vec![
            (0, round(0.206, 0.192, 0.582, 19.0, true)),
            (1, round(0.203, 0.181, 0.615, 0.0, true)),
            (2, round(0.190, 0.184, 0.613, 18.0, true)),
        ];
        assert_eq!(
            folded(&c),
            "runnable there throughout: pid 30112 (rustc, SCHED_OTHER nice 10) 19.0–20.6%, \
             pid 30101 (rustc, SCHED_OTHER nice 10) 18.1–19.2% of the time (all others \
             58.2–61.5%), and tasks that came and went took 0–19 ms of CPU 0-1 (±80 ms)"
        );
        // Another task named, or another thing said of those that came and went, stays apart.
        let first = round(0.2, 0.2, 0.6, 5.0, true);
        let mut other = first.clone();
        if let Reading::Others { competitors, .. } = &mut other {
            competitors[1].tid = 4242;
        }
        assert_eq!(first.widen(&other), None);
        assert_eq!(first.widen(&round(0.2, 0.2, 0.6, 5.0, false)), None);
        let Some(Reading::Others { competitors, .. }) =
            first.widen(&round(0.3, 0.1, 0.7, 9.0, true))
        else {
            panic!("the same tasks fold")
        };
        assert_eq!(
            (competitors[0].share, competitors[1].share),
            (Num { lo: 0.2, hi: 0.3 }, Num { lo: 0.1, hi: 0.2 })
        );
    }

    #[test]
    fn a_version_1_check_folds_by_its_words() {
        let c = Check::legacy(
            "CPU held by participants",
            "≥ 95% of wall time",
            "round 1: 30.0%; round 2: 42.5%",
            false,
        );
        assert_eq!(folded(&c), "30.0–42.5%");
        assert_eq!(observed(&c), "round 1: 30.0%; round 2: 42.5%");
    }

    /// The line a check renders, also after a JSON write and re-read.
    fn lines(c: &Check) -> [String; 2] {
        let back: Check = serde_json::from_str(&serde_json::to_string(c).unwrap()).unwrap();
        assert_eq!(&back, c);
        [line(c), line(&back)]
    }

    #[test]
    fn the_alone_check_reads_as_its_sentence_did() {
        use crate::evidence::task::Alone;
        let c = crate::probes::syscall::alone_check(&Alone {
            threads: Some(1),
            forked: Some(vec![]),
        });
        assert!(c.ok);
        let old = format!(
            "{}: expected 1 thread, its files shared with no other task, observed {}",
            crate::probes::syscall::ALONE,
            "1 thread, its files shared with no other task"
        );
        assert_eq!(lines(&c), [old.clone(), old]);
        let c = crate::probes::syscall::alone_check(&Alone {
            threads: Some(3),
            forked: Some(vec![41, 42]),
        });
        assert!(!c.ok);
        let old = format!(
            "alone in its process: expected 1 thread, its files shared with no other task, \
             observed {}",
            "3 threads, 2 child process(es) forked while its files were open (pid 41, 42)"
        );
        assert_eq!(lines(&c), [old.clone(), old]);
        let c = crate::probes::syscall::alone_check(&Alone {
            threads: None,
            forked: None,
        });
        assert!(!c.ok);
        assert!(
            lines(&c)[1].ends_with("observed threads unreadable, its children could not be listed")
        );
    }

    #[test]
    fn the_hop_check_reads_as_its_sentence_did() {
        use crate::probes::ctx::ring::Policy;
        use crate::probes::ctx::sweep::switches_per_hop_check;
        let c = switches_per_hop_check(1.5, 8, Policy::Normal);
        let old = format!(
            "context switches per hop: expected {}, observed {:.3}",
            "1 to 2 ±5% (normal scheduling: 1 + the share of hops whose woken member \
             preempted its waker)",
            1.5
        );
        assert!(c.ok);
        assert_eq!(lines(&c), [old.clone(), old]);
        assert!(!switches_per_hop_check(2.5, 8, Policy::Normal).ok);
    }

    #[test]
    fn the_corrected_checks_read_as_their_sentences_did() {
        use crate::probes::rpc::correct::{sum_check, SUM_CHECK, SUM_CHECK_MOVED};
        let t = crate::units::fmt_time;
        let c = sum_check(7400.0, Some(4000.0), Some(4100.0));
        assert!(!c.ok);
        let off = 7400.0 / 4000.0 - 1.0;
        let old = format!(
            "{SUM_CHECK}: expected within ±15%, observed {} vs {} ({:+.1}%)",
            t(7400.0),
            t(4000.0),
            100.0 * off
        );
        assert_eq!(lines(&c), [old.clone(), old]);
        assert!(sum_check(4100.0, Some(4000.0), None).ok);
        let c = sum_check(7400.0, Some(4000.0), Some(7300.0));
        assert!(!c.ok);
        let old = format!(
            "{SUM_CHECK_MOVED}: expected within ±15%, observed {} vs {} ({:+.1}%); beside the \
             traced batches the untraced RPC took {} ({:+.1}% from rpc.total), which the \
             corrected parts match: the machine's state changed between the two \
             measurements, not the correction",
            t(7400.0),
            t(4000.0),
            100.0 * off,
            t(7300.0),
            100.0 * (7300.0 / 4000.0 - 1.0)
        );
        assert_eq!(lines(&c), [old.clone(), old]);
        let c = sum_check(7400.0, None, None);
        assert!(!c.ok);
        let old = format!(
            "{SUM_CHECK}: expected within ±15%, observed {}, untraced rpc.total not measured",
            t(7400.0)
        );
        assert_eq!(lines(&c), [old.clone(), old]);
    }

    #[test]
    fn the_nonnegative_check_reads_as_its_sentence_did() {
        use crate::probes::rpc::traced::corrected_nonnegative;
        let est = |value: f64, hi: f64| crate::model::Estimate {
            value,
            ci95: [value - 10.0, hi],
        };
        let c = corrected_nonnegative(&[(0, est(120.0, 130.0)), (1, est(-40.0, -5.0))]);
        assert!(!c.ok);
        let old = format!(
            "every corrected part ≥ 0: expected each mean's interval reaches ≥ 0 ns, observed \
             lowest: {} {:.0} ns, interval up to {:.0}",
            crate::probes::rpc::breakdown::PARTS[1],
            -40.0,
            -5.0
        );
        assert_eq!(lines(&c), [old.clone(), old]);
        assert!(corrected_nonnegative(&[(0, est(120.0, 130.0))]).ok);
        let c = corrected_nonnegative(&[]);
        assert!(!c.ok);
        assert!(lines(&c)[1].ends_with("observed no parts"));
    }
}
