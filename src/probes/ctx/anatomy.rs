//! `ctx.anatomy`: why a context switch costs what it does. A ladder of same-CPU futex
//! ping-pongs, each rung a paired difference between two sides that differ by one cause:
//!
//! | rung | side measured | its baseline |
//! |---|---|---|
//! | base | two threads switching | the same futex calls in one thread |
//! | address space | two processes | two threads |
//! | register state (one per size) | processes leaving that state live | the same loads, released before the switch |
//! | speculation barrier | processes with PR_SPEC_FORCE_DISABLE | processes without |
//! | cache refill at S | processes walking S bytes on every turn | processes + the same walks, hot, without switching |
//! | TLB refill | processes walking one line in each of P pages | the same P lines packed |
//! | another CPU | the partner pinned to another CPU | both on one CPU |
//! | all | every cause at once | the same calls, loads and walks in one task, no switch |
//!
//! The two sides of a rung run interleaved inside every sample (interleave.rs, as the sweep's
//! ring and overhead), each side's tasks started afresh at every call, and the plan spreads
//! every rung's rounds across its passes. The sum of the rungs is checked against `all`
//! (report/anatomy.rs).

use super::anatomy_regs::{self as regs, Regs, Xsave};
use super::anatomy_task::{pages_touched, Pair, Side, Walk, LINE};
use super::anatomy_trace::{around, tally, Tally};
use super::interleave::{self, Halves, Part};
use super::Mode;
use crate::engine::checks;
use crate::engine::measure::{
    measure, Context, Participants, Spec, Verdict, Workloads, BASELINE_NOTE,
};
use crate::error::Result;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::model::switch_trace::{SideTrace, SwitchTrace, TracedSides};
use crate::model::{
    Bound, Check, CheckKind, Evidence, Handoffs, Measurement, Num, Placement, Reading,
    RoundTripBand,
};
use crate::units::name::Word;
use crate::units::size::fmt_size;
use crate::units::{Per, Unit};
use std::cell::RefCell;

/// The probe id of every rung.
pub const PROBE: crate::model::ProbeId = crate::model::switch_trace::ANATOMY;

/// What a rung's baseline samples are, in place of the engine's BASELINE_NOTE.
pub const INTERLEAVED_NOTE: &str = "baseline samples are the baseline halves of the figure's \
     samples: the measured side's round trips and the baseline side's alternate in two chunks \
     each (measured, baseline, baseline, measured), so a linear drift of the host adds the same \
     to both; the evidence windows hold both sides' tasks";

/// One rung of the ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rung {
    Base,
    AddressSpace,
    Regs(Regs),
    Barrier,
    Cache {
        bytes: usize,
    },
    Tlb {
        pages: usize,
    },
    OtherCpu,
    /// Every cause at once, measured directly.
    All,
}

impl Rung {
    /// The `rung` parameter: stable, for JSON, CSV and comparisons.
    pub fn id(self) -> String {
        match self {
            Rung::Base => "base".into(),
            Rung::AddressSpace => "address-space".into(),
            Rung::Regs(r) => format!("regs-{}", r.word()),
            Rung::Barrier => "barrier".into(),
            Rung::Cache { bytes } => format!("cache-{}", fmt_size(bytes as u64)),
            Rung::Tlb { pages } => format!("tlb-{pages}p"),
            Rung::OtherCpu => "other-cpu".into(),
            Rung::All => "all".into(),
        }
    }

    /// Which of the quiz's reasons the rung answers.
    pub fn cause(self) -> &'static str {
        match self {
            Rung::Base => "scheduler",
            Rung::AddressSpace => "address space",
            Rung::Regs(_) => "register state",
            Rung::Barrier => "speculation barrier",
            Rung::Cache { .. } => "caches",
            Rung::Tlb { .. } => "TLB",
            Rung::OtherCpu => "another CPU",
            Rung::All => "all",
        }
    }
}

/// What the ladder runs on: the CPU, the other CPU where there is one, the register states
/// the CPU offers, whether the barrier can be asked for, the TLB walk's pages.
#[derive(Debug, Clone)]
pub struct Ladder {
    pub cpu: usize,
    pub other: Option<usize>,
    pub regs: Vec<Regs>,
    pub barrier: bool,
    pub pages: usize,
    pub xsave: Xsave,
}

impl Ladder {
    /// The largest register state the ladder makes live.
    pub fn top_regs(&self) -> Option<Regs> {
        self.regs.iter().copied().max()
    }

    /// The two sides of a rung: (measured, baseline).
    pub fn sides(&self, rung: Rung) -> (Side, Side) {
        let (t, p) = (Side::threads(self.cpu), Side::processes(self.cpu));
        match rung {
            Rung::Base => (
                t,
                Side {
                    switching: false,
                    ..t
                },
            ),
            Rung::AddressSpace => (p, t),
            Rung::Regs(r) => {
                let (regs, release) = r.baseline();
                (Side { regs: r, ..p }, Side { regs, release, ..p })
            }
            Rung::Barrier => (Side { barrier: true, ..p }, p),
            Rung::Cache { bytes } => {
                let w = Walk::Packed {
                    lines: bytes / LINE,
                };
                (Side { walk: w, ..p }, Side { hot: w, ..p })
            }
            Rung::Tlb { pages } => (
                Side {
                    walk: Walk::PageStride { pages },
                    ..p
                },
                Side {
                    walk: Walk::Packed { lines: pages },
                    ..p
                },
            ),
            Rung::OtherCpu => (
                Side {
                    partner_cpu: self.other.unwrap_or(self.cpu),
                    ..p
                },
                p,
            ),
            Rung::All => {
                let regs = self.top_regs().unwrap_or(Regs::Sse);
                let all = Side {
                    regs,
                    barrier: self.barrier,
                    walk: Walk::PageStride { pages: self.pages },
                    partner_cpu: self.other.unwrap_or(self.cpu),
                    ..p
                };
                let alone = Side {
                    mode: Mode::Thread,
                    switching: false,
                    regs,
                    release: true,
                    hot: Walk::Packed { lines: self.pages },
                    ..t
                };
                (all, alone)
            }
        }
    }

    /// The rungs this ladder measures, in order; `sizes` are the cache rungs' working sets.
    /// The cache rung at the TLB walk's own lines (P × 64 B) is always among them: the sum
    /// of the rungs adds that one, whose lines the direct measurement's walk touches.
    pub fn rungs(&self, sizes: &[usize]) -> Vec<Rung> {
        let mut out = vec![Rung::Base, Rung::AddressSpace];
        out.extend(self.regs.iter().map(|&r| Rung::Regs(r)));
        if self.barrier {
            out.push(Rung::Barrier);
        }
        let mut s: Vec<usize> = sizes.to_vec();
        s.push(self.pages * LINE);
        s.sort_unstable();
        s.dedup();
        out.extend(s.into_iter().map(|bytes| Rung::Cache { bytes }));
        out.push(Rung::Tlb { pages: self.pages });
        if self.other.is_some() {
            out.push(Rung::OtherCpu);
        }
        out.push(Rung::All);
        out
    }
}

/// Why a rung cannot run on this machine, one line each, for the ones that cannot: register
/// states the CPU or OS does not offer, a barrier the kernel does not offer, one CPU.
pub fn cannot_apply(
    xsave: &Xsave,
    amx: &std::result::Result<(), String>,
    other: Option<usize>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for r in Regs::LADDER {
        if let Some(why) = regs::regs_unavailable(xsave, r, amx) {
            out.push((Rung::Regs(r).id(), why));
        }
    }
    if let Some(why) = regs::barrier_unavailable(regs::spec_get()) {
        out.push((Rung::Barrier.id(), why));
    }
    if other.is_none() {
        out.push((
            Rung::OtherCpu.id(),
            "only one CPU is allowed here: the partner cannot sleep on another".into(),
        ));
    }
    out
}

/// The XSAVE bytes a register state adds, for its label.
fn regs_bytes(x: &Xsave, r: Regs) -> u32 {
    x.bytes_of(r.components())
}

/// The rung's spec: its parameters and what it measures.
fn rung_spec(l: &Ladder, rung: Rung, sides: &(Side, Side)) -> Spec {
    let mut spec = Spec::new(
        PROBE.0,
        Unit::ns(Per::Switch),
        Unit::ns(Per::RoundTrip),
        2.0,
    )
    .param("rung", rung.id())
    .param("cause", rung.cause())
    .param("cpus", vec![l.cpu])
    .events_set(EventSet::None)
    .note(format!(
        "per switch = (round trip of {} − round trip of {}) / 2 switches; the two sides \
             alternate in two chunks each inside every sample (measured, baseline, baseline, \
             measured)",
        describe(&sides.0),
        describe(&sides.1)
    ));
    match rung {
        Rung::Regs(r) if r.arm64() => {
            spec = spec
                .param("regs", r.word())
                .param("state_bytes", regs_bytes(&l.xsave, r))
                .param("sve_vector_bytes", l.xsave.sve_vl)
        }
        Rung::Regs(r) => {
            spec = spec
                .param("regs", r.word())
                .param("xsave_bytes", regs_bytes(&l.xsave, r))
                .param("xsave_area_bytes", l.xsave.enabled_bytes)
        }
        Rung::Cache { bytes } => spec = spec.param("size", bytes as u64),
        Rung::Tlb { pages } => spec = spec.param("pages", pages),
        Rung::OtherCpu => spec = spec.param("partner_cpu", l.other.unwrap_or(l.cpu)),
        Rung::All => {
            spec = spec
                .param("regs", l.top_regs().unwrap_or(Regs::Sse).word())
                .param("barrier", l.barrier)
                .param("pages", l.pages)
                .param("partner_cpu", l.other.unwrap_or(l.cpu))
        }
        _ => {}
    }
    spec
}

/// A side in words, for the rung's note.
pub fn describe(s: &Side) -> String {
    let mut w = vec![match (s.mode, s.switching) {
        (_, false) => "one task alone (no switch)".to_string(),
        (Mode::Thread, true) => "two threads".into(),
        (Mode::Process, true) => "two processes".into(),
    }];
    if s.regs != Regs::Sse {
        w.push(format!(
            "{} state loaded{}",
            s.regs.word(),
            match (s.regs, s.release) {
                (Regs::Sve, _) => " (a system call discards it)",
                (_, true) => " then released",
                (_, false) => " and live",
            }
        ));
    }
    if s.barrier {
        w.push("indirect-branch barrier asked for".into());
    }
    match s.walk {
        Walk::None => {}
        Walk::Packed { lines } => w.push(format!("each walks {lines} packed lines")),
        Walk::PageStride { pages } => {
            w.push(format!("each walks one line in each of {pages} pages"))
        }
    }
    if s.hot != Walk::None {
        w.push(format!("{} lines walked twice hot", s.hot.lines()));
    }
    if s.partner_cpu != s.cpu {
        w.push(format!("partner on CPU {}", s.partner_cpu));
    }
    w.join(", ")
}

/// What the controls of a rung saw, for its checks.
#[derive(Debug, Clone, Default)]
pub struct Controls {
    /// XINUSE AND over both measured tasks, OR over both baseline tasks.
    pub live_and: Option<u64>,
    pub released_or: Option<u64>,
    /// The measured tasks' prctl answers and status lines; the baseline's status lines.
    pub spec: Vec<i64>,
    pub status_on: Vec<Option<String>>,
    pub status_off: Vec<Option<String>>,
    /// (lines, resident pages) of the measured and the baseline walk on fresh mappings.
    pub walk_on: Option<(usize, usize)>,
    pub walk_off: Option<(usize, usize)>,
}

/// Measure one rung.
pub fn measure_rung(ctx: &Context, l: &Ladder, rung: Rung) -> Result<Measurement> {
    let _pin = AffinityGuard::pin_current(&[l.cpu])?;
    let sides = l.sides(rung);
    let observe = l.xsave.xinuse;
    let on = RefCell::new(Pair::start(sides.0, observe, true)?);
    let off = RefCell::new(Pair::start(sides.1, observe, true)?);
    let mut ctl = Controls::default();
    if let Rung::Tlb { .. } | Rung::All = rung {
        ctl.walk_on = Some(pages_touched(sides.0.walk)?);
        ctl.walk_off = Some(pages_touched(sides.1.walk)?);
    }
    let mut participants = on.borrow().participants.clone();
    participants.extend(off.borrow().participants.iter().cloned());
    let mut start = on.borrow().start_cpus.clone();
    start.extend(off.borrow().start_cpus.iter().copied());
    let halves = Halves::default();
    let mut raw = |iters: u64| {
        halves.ring(iters, |n| {
            interleave::run(n, |part, k| match part {
                Part::Ring => on.borrow_mut().run(k),
                Part::Overhead => off.borrow_mut().run(k),
            })
        })
    };
    let mut base = |iters: u64| halves.overhead(iters, |n| off.borrow_mut().run(n));
    let spec = rung_spec(l, rung, &sides);
    let (s_on, s_off) = sides;
    let m = measure(
        ctx,
        spec,
        Participants::new(participants, start),
        Workloads::paired(&mut raw, &mut base),
        |ev| {
            let (a, b) = (on.borrow(), off.borrow());
            if observe {
                ctl.live_and = Some(a.seen.and[0] & a.seen.and[1]);
                ctl.released_or = Some(b.seen.or[0] | b.seen.or[1]);
            }
            ctl.spec = a.spec_answers().to_vec();
            ctl.status_on = a.status_lines();
            ctl.status_off = b.status_lines();
            rung_verdict(ev, rung, (&s_on, &s_off), &ctl)
        },
    );
    let mut m = m?;
    m.notes.retain(|n| n != BASELINE_NOTE);
    m.notes.push(INTERLEAVED_NOTE.into());
    if rung == Rung::Barrier {
        if let Some(Some(s)) = on.borrow().status_lines().first() {
            m.params
                .insert("speculation_status".into(), s.clone().into());
        }
    }
    // In the first round: the merged measurement keeps the first round's parameters.
    if !ctx.make_up && ctx.round.is_none_or(|r| r.index == 0) {
        let (mut a, mut b) = (on.borrow_mut(), off.borrow_mut());
        trace_pass(&mut a, &mut b, &mut m, rung)?;
    }
    Ok(m)
}

/// Round trips of each side the trace pass records.
const TRACED_ROUND_TRIPS: u64 = 200;

/// After the first round's samples: the kernel's tlb_flush and register-save records of both
/// sides' tasks over [`TRACED_ROUND_TRIPS`] round trips each, per switch, in the measurement's
/// typed trace; where the rung makes a register state live, a check that every save found it
/// live. Where tracing cannot run, the one line why (the trace then holds it) and the rest
/// stands.
fn trace_pass(on: &mut Pair, off: &mut Pair, m: &mut Measurement, rung: Rung) -> Result<()> {
    let mut cpus = vec![on.side.cpu, on.side.partner_cpu, off.side.partner_cpu];
    cpus.sort_unstable();
    cpus.dedup();
    let tids: Vec<i32> = on
        .participants
        .iter()
        .chain(&off.participants)
        .map(|p| p.tid)
        .collect();
    let mut rec = match super::anatomy_trace::open(&cpus, &tids) {
        Ok(r) => r,
        Err(e) => {
            m.switch_trace = Some(SwitchTrace::NotRecorded(e.to_string()));
            return Ok(());
        }
    };
    let n = TRACED_ROUND_TRIPS;
    let ((), rec_on) = around(&mut rec, || on.run(n).map(|_| ()))?;
    let ((), rec_off) = around(&mut rec, || off.run(n).map(|_| ()))?;
    let tids_of = |p: &Pair| p.participants.iter().map(|x| x.tid).collect::<Vec<_>>();
    let t_on = tally(&rec.decoder, &rec_on, &tids_of(on));
    let t_off = tally(&rec.decoder, &rec_off, &tids_of(off));
    m.switch_trace = Some(SwitchTrace::Recorded(TracedSides {
        round_trips: n,
        measured: side_trace(&t_on, on.side.switching, n),
        baseline: side_trace(&t_off, off.side.switching, n),
    }));
    if let Rung::Regs(r) = rung {
        let c = saved_live_check(r, &t_on);
        if !c.ok {
            m.valid = false;
            m.status = crate::model::Status::Invalid;
        }
        m.checks.push(c);
    }
    Ok(())
}

/// One side's records over `n` round trips, per switch (per round trip for a task alone).
pub fn side_trace(t: &Tally, switching: bool, n: u64) -> SideTrace {
    let per = (n * if switching { 2 } else { 1 }).max(1) as f64;
    SideTrace {
        switching,
        tlb_flush_per_switch: t
            .tlb_flush
            .iter()
            .map(|(k, v)| (k.clone(), *v as f64 / per))
            .collect(),
        fpu_saves_per_switch: t.fpu_saves as f64 / per,
        fpu_live_in_every_save: if t.fpu_saves > 0 {
            t.fpu_live_in_all
        } else {
            0
        },
        lost: t.lost,
    }
}

/// Every register save the kernel recorded at the measured side's switches found the state
/// live (x86_fpu_regs_deactivated's xfeatures).
pub fn saved_live_check(r: Regs, t: &Tally) -> Check {
    let want = r.components();
    Check {
        subject: r.word().to_string(),
        ..Check::new(
            CheckKind::StateSavedLive,
            Bound::Mask {
                bits: want,
                read_back: false,
            },
            Reading::values(&[(t.fpu_live_in_all & want) as f64, t.fpu_saves as f64]),
            t.fpu_saves > 0 && t.fpu_live_in_all & want == want,
        )
    }
}

/// The checks of a rung: the switches both sides make, no migrations, placement, and the
/// control the rung's cause needs (below).
pub fn rung_verdict(ev: &Evidence, rung: Rung, sides: (&Side, &Side), ctl: &Controls) -> Verdict {
    let c = switches_check(ev, sides);
    let mut out = vec![c, checks::no_migrations(ev), checks::placement(&ev.cpus)];
    let mut warnings = Vec::new();
    let two_cpus = sides.0.partner_cpu != sides.0.cpu;
    let holding = crate::probes::holding(two_cpus);
    checks::add_occupancy_with(ev, holding, &mut out, &mut warnings);
    out.extend(control_checks(rung, sides, ctl, &ev.cpus));
    (out, warnings)
}

/// How far the switches of the round trips may stray from 2 a round trip of each switching
/// side.
pub const SWITCH_TOLERANCE: f64 = 0.05;

/// The switches the chunk protocol itself adds to one sample of `laps` round trips of each
/// side, at least and at most. The measuring thread shares the timers' CPU and hands the
/// sample out in chunks (interleave::plan: measured, baseline, baseline, measured): at every
/// chunk's end its timer wakes the measuring thread and must leave the CPU before that thread
/// runs, one switch (it sleeps for its next command, or the woken thread preempts it); where
/// the next chunk is the other side's, a timer that was preempted switches once more when it
/// goes to sleep, and the next side's timer may be preempted once for it to. So 4 to 8 a
/// sample of two chunks a side; at 41 round trips a sample (the direct rung at 4096 pages,
/// ~100 µs a round trip) that is 0.10–0.20 a round trip, 5–10% of 2, which a check counting
/// the round trips alone would read as extra switches. The partners sleep through the
/// hand-offs: theirs are in the round trips.
pub fn handoff_switches(laps: u64) -> (u64, u64) {
    let chunks = interleave::plan(laps);
    let ends = chunks.len() as u64;
    // Side changes in the cyclic order: the next sample starts where this one began.
    let changes = (0..chunks.len())
        .filter(|&i| chunks[i].0 != chunks[(i + 1) % chunks.len()].0)
        .count() as u64;
    (ends, ends + 2 * changes)
}

/// Switches per round trip of both sides, against 2 a round trip of each switching side
/// (±[`SWITCH_TOLERANCE`]) plus the chunk hand-offs of every sample ([`handoff_switches`]):
/// a competitor that preempts the tasks adds switches beyond them, a side that does not
/// switch takes them away. Samples are counted by the evidence's windows (one a sample);
/// without that count the hand-offs are not allowed for.
///
/// A pair on two CPUs is not held to 2: a task whose reply was posted before it went to sleep
/// returns from its wait without switching, how often depending on timing alone. It must
/// still sleep on one side of every round trip, 1 a round trip at least, or the rung measures
/// no wake-up.
pub fn switches_check(ev: &Evidence, sides: (&Side, &Side)) -> Check {
    let switching = |s: &Side| f64::from(u8::from(s.switching));
    let per_rt = 2.0 * (switching(sides.0) + switching(sides.1));
    let across = |s: &Side| s.switching && s.partner_cpu != s.cpu;
    let may_skip = f64::from(u8::from(across(sides.0))) + f64::from(u8::from(across(sides.1)));
    let (sw, source) = checks::switches_per_op(ev);
    let iterations = ev.rusage.iterations;
    let handoffs = ev
        .occupancy
        .as_ref()
        .map(|o| o.windows)
        .filter(|&w| w > 0 && iterations >= w)
        .map(|samples| {
            let (least, most) = handoff_switches(iterations / samples);
            Handoffs {
                least,
                most,
                samples,
                round_trips: iterations,
            }
        });
    let band = RoundTripBand {
        per_rt,
        may_skip,
        tol: SWITCH_TOLERANCE,
        handoffs,
    };
    let ok = band.holds(sw);
    Check::new(
        CheckKind::SwitchesPerRoundTrip,
        Bound::RoundTrips(band),
        Reading::Switches {
            per_op: Num::one(sw),
            source,
            digits: 3,
            per_sample: handoffs.as_ref().map(Handoffs::per_sample),
            split: None,
        },
        ok,
    )
}

/// The checks that prove a rung's control took effect.
pub fn control_checks(
    rung: Rung,
    sides: (&Side, &Side),
    ctl: &Controls,
    cpus: &[Placement],
) -> Vec<Check> {
    let mut out = Vec::new();
    let regs_rung = match rung {
        Rung::Regs(r) => Some(r),
        Rung::All => Some(sides.0.regs).filter(|r| *r != Regs::Sse),
        _ => None,
    };
    if let Some(r) = regs_rung {
        out.push(live_check(r, ctl.live_and));
        if rung != Rung::All {
            out.push(released_check(r, ctl.released_or));
        }
    }
    if sides.0.barrier {
        out.push(barrier_check(&ctl.spec, &ctl.status_on, &ctl.status_off));
    }
    if let Walk::PageStride { pages } = sides.0.walk {
        out.push(walk_check(
            "page-stride walk's distinct pages",
            pages,
            pages,
            ctl.walk_on,
        ));
        if let Walk::Packed { lines } = sides.1.walk {
            out.push(walk_check(
                "packed walk's pages",
                lines,
                lines.div_ceil(64),
                ctl.walk_off,
            ));
        }
    }
    if sides.0.partner_cpu != sides.0.cpu {
        out.push(other_cpu_check(cpus, sides.0.cpu, sides.0.partner_cpu));
    }
    out
}

/// The state was live at every switch of both measured tasks: its XINUSE bits set in the AND
/// of every reading taken right before a switch.
///
/// On arm64 there is no XINUSE: the reading is the read-back of the registers the task just
/// loaded (anatomy_regs::prepare), taken right before the system calls of the switch. It
/// proves the state held the loaded values at full vector length when the task entered the
/// kernel; for SVE that entry discards it, which is the cost the rung measures.
pub fn live_check(r: Regs, and: Option<u64>) -> Check {
    mask_check(r, CheckKind::StateLive, and, |a, want| a & want == want)
}

/// The baseline's state was released before every switch: none of its bits in the OR.
pub fn released_check(r: Regs, or: Option<u64>) -> Check {
    mask_check(r, CheckKind::StateReleased, or, |o, want| o & want == 0)
}

/// A check of `r`'s bits in a reading of the tasks' state, as `holds(reading, bits)` says.
fn mask_check(r: Regs, kind: CheckKind, seen: Option<u64>, holds: fn(u64, u64) -> bool) -> Check {
    let want = r.components();
    Check {
        subject: r.word().to_string(),
        ..Check::new(
            kind,
            Bound::Mask {
                bits: want,
                read_back: r.arm64(),
            },
            Reading::Mask(seen.map(|s| s & want)),
            seen.is_some_and(|s| holds(s, want)),
        )
    }
}

/// Both measured tasks read back a forced-off indirect-branch speculation (prctl and their
/// /proc status), the baseline's tasks did not.
pub fn barrier_check(spec: &[i64], on: &[Option<String>], off: &[Option<String>]) -> Check {
    let granted = !spec.is_empty()
        && spec
            .iter()
            .all(|&g| regs::barrier_granted(regs::SpecAnswer { get: g }));
    let forced = |s: &Option<String>| s.as_deref().is_some_and(|v| v.contains("force disabled"));
    let ok = granted && !on.is_empty() && on.iter().all(forced) && !off.iter().any(forced);
    Check::new(
        CheckKind::BarrierGranted,
        Bound::Kind,
        Reading::Barrier {
            spec: spec.to_vec(),
            on: on.to_vec(),
            off: off.to_vec(),
        },
        ok,
    )
}

/// A walk touched the pages it claims, counted on a fresh mapping.
pub fn walk_check(name: &str, lines: usize, pages: usize, seen: Option<(usize, usize)>) -> Check {
    Check {
        subject: name.to_string(),
        ..Check::new(
            CheckKind::WalkPages,
            Bound::Pages { lines, pages },
            Reading::Pages(seen),
            seen == Some((lines, pages)),
        )
    }
}

/// The measured side's partner ran on the other CPU (start and end), its timer on the first.
pub fn other_cpu_check(cpus: &[Placement], cpu: usize, other: usize) -> Check {
    let on = |i: usize, c: usize| {
        cpus.get(i)
            .is_some_and(|p| p.start == Some(c) && p.end == Some(c))
    };
    Check::new(
        CheckKind::PartnerCpu,
        Bound::OnCpus(vec![cpu, other]),
        Reading::Placed(
            cpus.iter()
                .take(2)
                .map(|p| (p.role.clone(), p.start, p.end))
                .collect(),
        ),
        on(0, cpu) && on(1, other) && cpu != other,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sampler::SamplingConfig;

    fn ladder(cpu: usize) -> Ladder {
        Ladder {
            cpu,
            other: None,
            regs: Vec::new(),
            barrier: false,
            pages: 256,
            xsave: regs::xsave(),
        }
    }

    #[test]
    fn the_ladder_always_has_the_tlb_walks_own_cache_rung_and_the_direct_one() {
        let l = Ladder {
            regs: vec![Regs::Avx, Regs::Avx512],
            other: Some(0),
            ..ladder(1)
        };
        let ids: Vec<String> = l.rungs(&[48 << 10]).iter().map(|r| r.id()).collect();
        assert_eq!(
            ids,
            [
                "base",
                "address-space",
                "regs-avx",
                "regs-avx-512",
                "cache-16k",
                "cache-48k",
                "tlb-256p",
                "other-cpu",
                "all"
            ]
        );
        // Each rung's sides differ by its cause alone.
        let (a, b) = l.sides(Rung::Regs(Regs::Avx512));
        assert_eq!(
            Side {
                release: false,
                ..b
            },
            a
        );
        let (a, b) = l.sides(Rung::Tlb { pages: 256 });
        assert_eq!(a.walk.lines(), b.walk.lines());
        assert_ne!(a.walk, b.walk);
    }

    #[test]
    fn a_task_that_forgets_to_dirty_fails_the_liveness_check() {
        assert!(live_check(Regs::Avx512, Some(0xe7)).ok);
        assert!(!live_check(Regs::Avx512, Some(0x07)).ok);
        assert!(!live_check(Regs::Avx, None).ok);
        assert!(released_check(Regs::Avx, Some(0x3)).ok);
        assert!(!released_check(Regs::Avx, Some(0x7)).ok);
        let x = regs::xsave();
        let amx = regs::request_amx();
        let cpu = *crate::machine::affinity::allowed_cpus().last().unwrap();
        let Some(r) = Regs::LADDER
            .into_iter()
            .rev()
            .find(|r| regs::regs_unavailable(&x, *r, &amx).is_none())
        else {
            return;
        };
        let _pin = AffinityGuard::pin_current(&[cpu]).unwrap();
        let side = Side {
            regs: r,
            ..Side::processes(cpu)
        };
        for (dirty, live) in [(true, true), (false, false)] {
            let mut p = Pair::start(side, true, dirty).unwrap();
            p.run(50).unwrap();
            let and = p.seen.and[0] & p.seen.and[1];
            assert_eq!(
                live_check(r, Some(and)).ok,
                live,
                "{r:?} dirty {dirty}: {and:#x}"
            );
        }
        // The rung's own baseline: the same loads released (SVE: the NEON loads alone).
        let (regs, release) = r.baseline();
        let mut p = Pair::start(
            Side {
                regs,
                release,
                ..side
            },
            true,
            true,
        )
        .unwrap();
        p.run(50).unwrap();
        assert!(released_check(r, Some(p.seen.or[0] | p.seen.or[1])).ok);
    }

    #[test]
    fn the_barrier_check_wants_the_answer_the_tasks_read_back() {
        let f = Some("conditional force disabled".to_string());
        let e = Some("conditional enabled".to_string());
        assert!(barrier_check(&[9, 9], &[f.clone(), f.clone()], &[e.clone(), e.clone()]).ok);
        // A task that did not ask: its answer and status say enabled.
        assert!(!barrier_check(&[9, 3], &[f.clone(), e.clone()], std::slice::from_ref(&e)).ok);
        assert!(!barrier_check(&[], &[], &[]).ok);
        // The baseline forced off too: the difference would not be the barrier's.
        assert!(!barrier_check(&[9, 9], &[f.clone(), f.clone()], &[f]).ok);
        if regs::barrier_unavailable(regs::spec_get()).is_some() {
            return;
        }
        let cpu = *crate::machine::affinity::allowed_cpus().last().unwrap();
        let _pin = AffinityGuard::pin_current(&[cpu]).unwrap();
        let on = Pair::start(
            Side {
                barrier: true,
                ..Side::processes(cpu)
            },
            false,
            true,
        )
        .unwrap();
        let off = Pair::start(Side::processes(cpu), false, true).unwrap();
        let c = barrier_check(&on.spec_answers(), &on.status_lines(), &off.status_lines());
        assert!(c.ok, "{c:?}");
        // A side that never asked, judged as if it had: fails.
        let c = barrier_check(&off.spec_answers(), &off.status_lines(), &[]);
        assert!(!c.ok, "{c:?}");
    }

    #[test]
    fn walks_and_placement_are_checked_against_what_they_claim() {
        let real = pages_touched(Walk::PageStride { pages: 100 }).unwrap();
        assert!(walk_check("p", 100, 100, Some(real)).ok);
        // A "page-stride" walk planted with the packed stride touches few pages: fails.
        let planted = pages_touched(Walk::Packed { lines: 100 }).unwrap();
        assert!(!walk_check("p", 100, 100, Some(planted)).ok);
        let at = |c: usize| Placement {
            role: "x".into(),
            requested: vec![c],
            start: Some(c),
            end: Some(c),
            ..Default::default()
        };
        assert!(other_cpu_check(&[at(0), at(1)], 0, 1).ok);
        // A partner that stayed on the timer's CPU.
        assert!(!other_cpu_check(&[at(0), at(0)], 0, 1).ok);
    }

    /// Evidence of `windows` samples of `laps` round trips each with `switches` in all.
    fn counted(windows: u64, laps: u64, switches: u64) -> Evidence {
        let mut ev = Evidence::default();
        ev.rusage.iterations = windows * laps;
        ev.rusage.total.nvcsw = switches * 2 / 3;
        ev.rusage.total.nivcsw = switches - switches * 2 / 3;
        ev.occupancy = Some(crate::model::Occupancy {
            windows,
            ..Default::default()
        });
        ev
    }

    #[test]
    fn the_switch_check_allows_the_chunk_hand_offs_and_nothing_more() {
        assert_eq!(handoff_switches(41), (4, 8));
        assert_eq!(handoff_switches(2), (4, 8));
        // One round trip a sample: measured, baseline; then the next sample's measured.
        assert_eq!(handoff_switches(1), (2, 6));
        assert_eq!(handoff_switches(0), (0, 0));
        let l = Ladder {
            other: Some(0),
            ..ladder(1)
        };
        let (a, b) = l.sides(Rung::All);
        // The direct rung as a quiet run read it: 3 samples of 41 round trips, 2 switches a
        // round trip of the measured side and 6 hand-offs a sample (2.15 a round trip).
        let c = switches_check(&counted(3, 41, 2 * 123 + 18), (&a, &b));
        assert!(c.ok, "{c:?}");
        assert!(
            crate::report::checks::expected(&c).contains("plus 4–8 a sample"),
            "{c:?}"
        );
        assert!(
            crate::report::checks::observed(&c).contains("41 round trips a sample"),
            "{c:?}"
        );
        // Without a count of samples the hand-offs cannot be allowed for: 2.15 fails ±5%.
        let mut bare = counted(3, 41, 2 * 123 + 18);
        bare.occupancy = None;
        assert!(!switches_check(&bare, (&a, &b)).ok);
        // A competitor preempting the tasks: 10% more switches than the round trips make,
        // beyond every hand-off the protocol can make.
        let c = switches_check(&counted(3, 41, 2 * 123 * 11 / 10 + 24), (&a, &b));
        assert!(!c.ok, "{c:?}");
        // A measured side that does not switch: the hand-offs alone.
        assert!(!switches_check(&counted(3, 41, 18), (&a, &b)).ok);
        // On two CPUs a waiter whose reply came first does not sleep: the quiet full run's
        // 1.80 a round trip passes; less than one sleep a round trip does not.
        let c = switches_check(&counted(19, 205, 6995), (&a, &b));
        assert!(c.ok, "{c:?}");
        assert!(
            crate::report::checks::expected(&c).contains("1.00–2.00"),
            "{c:?}"
        );
        assert!(!switches_check(&counted(19, 205, 19 * 205 * 9 / 10), (&a, &b)).ok);
        // The same count on one CPU is missing switches: there the pair always sleeps.
        let (s, t) = l.sides(Rung::Base);
        assert!(!s.switching || s.partner_cpu == s.cpu);
        let c = switches_check(&counted(19, 205, 6995), (&s, &t));
        assert!(
            !c.ok && !crate::report::checks::expected(&c).contains("1.00–"),
            "{c:?}"
        );
        // A sample of 3 round trips: the hand-offs' range (4 a sample, 1.33 a round trip) is
        // wider than ±5% of 2, and the check says so; 41 a sample is not.
        let c = switches_check(&counted(3, 3, 3 * 3 * 2 + 18), (&a, &b));
        assert!(c.ok, "{c:?}");
        assert!(
            crate::report::checks::expected(&c)
                .contains("range, 1.33 a round trip at 3 a sample, is wider"),
            "{c:?}"
        );
        let c = switches_check(&counted(3, 41, 2 * 123 + 18), (&a, &b));
        assert!(
            !crate::report::checks::expected(&c).contains("wider"),
            "{c:?}"
        );
        // A rung of thousands of round trips a sample: the hand-offs are nothing there.
        let (a, b) = l.sides(Rung::AddressSpace);
        assert!(switches_check(&counted(5, 2000, 4 * 10_000 + 30), (&a, &b)).ok);
        assert!(!switches_check(&counted(5, 2000, 43_000), (&a, &b)).ok);
        assert!(!switches_check(&counted(5, 2000, 37_000), (&a, &b)).ok);
    }

    /// The switch check's words as the probe wrote them when they were a sentence: name,
    /// expected, observed and verdict.
    fn switches_sentence(ev: &Evidence, sides: (&Side, &Side)) -> [String; 3] {
        let per_round_trip = |most: f64, may_skip: f64| {
            if may_skip > 0.0 {
                format!("{:.2}–{most:.2}", most - may_skip)
            } else {
                format!("{most:.2}")
            }
        };
        let switching = |s: &Side| f64::from(u8::from(s.switching));
        let per_rt = 2.0 * (switching(sides.0) + switching(sides.1));
        let across = |s: &Side| s.switching && s.partner_cpu != s.cpu;
        let may_skip = f64::from(u8::from(across(sides.0))) + f64::from(u8::from(across(sides.1)));
        let (sw, source) = checks::switches_per_op(ev);
        let iterations = ev.rusage.iterations;
        let windows = ev
            .occupancy
            .as_ref()
            .map(|o| o.windows)
            .filter(|&w| w > 0 && iterations >= w);
        let (least, most) = windows.map_or((0.0, 0.0), |w| {
            let (lo, hi) = handoff_switches(iterations / w);
            let per = w as f64 / iterations as f64;
            (lo as f64 * per, hi as f64 * per)
        });
        let (expected, of_samples) = match windows {
            Some(w) => {
                let (lo, hi) = handoff_switches(iterations / w);
                let range = most - least;
                let wide = (range > 2.0 * SWITCH_TOLERANCE * per_rt)
                    .then_some(range)
                    .map(|r| {
                        format!(
                            "; the hand-offs' range, {r:.2} a round trip at {} a sample, is wider than ±{:.0}%: extra switches within it go unseen",
                            iterations / w,
                            SWITCH_TOLERANCE * 100.0
                        )
                    })
                    .unwrap_or_default();
                (
                    format!(
                        "{} ±{:.0}% a round trip, plus {lo}–{hi} a sample of chunk hand-offs{wide}",
                        per_round_trip(per_rt, may_skip),
                        SWITCH_TOLERANCE * 100.0
                    ),
                    format!("; {} round trips a sample", iterations / w),
                )
            }
            None => (
                format!(
                    "{} ±{:.0}% (hand-offs not allowed for: no sample count)",
                    per_round_trip(per_rt, may_skip),
                    SWITCH_TOLERANCE * 100.0
                ),
                String::new(),
            ),
        };
        [
            "context switches per round trip of both sides".into(),
            expected,
            format!(
                "{sw:.3} ({}{of_samples})",
                crate::report::checks::switch_source(source)
            ),
        ]
    }

    #[test]
    fn the_switch_check_reads_as_its_sentence_did() {
        use crate::report::checks::{expected, line, name, observed};
        let words = |c: &Check| [name(c), expected(c), observed(c)];
        let l = Ladder {
            other: Some(0),
            ..ladder(1)
        };
        let mut bare = counted(3, 41, 2 * 123 + 18);
        bare.occupancy = None;
        let mut by_perf = counted(3, 41, 0);
        by_perf.events.insert(
            "context-switches".into(),
            crate::model::EventReading {
                supported: true,
                per_op: Some(2.1),
                ..Default::default()
            },
        );
        let cases = [
            // The direct rung, on two CPUs: a pair that may skip a sleep (1.00–2.00).
            (Rung::All, counted(3, 41, 2 * 123 + 18)),
            (Rung::All, counted(19, 205, 6995)),
            // No sample count: the hand-offs not allowed for.
            (Rung::All, bare.clone()),
            (Rung::Base, bare),
            // Three round trips a sample: the hand-offs' range is too wide to judge within.
            (Rung::All, counted(3, 3, 3 * 3 * 2 + 18)),
            (Rung::Base, counted(3, 3, 3 * 3 * 2 + 18)),
            // One CPU, both sides switching; many round trips a sample; a competitor.
            (Rung::Base, counted(19, 205, 6995)),
            (Rung::AddressSpace, counted(5, 2000, 4 * 10_000 + 30)),
            (Rung::AddressSpace, counted(5, 2000, 43_000)),
            // A sample count that does not divide the round trips; the perf event's count.
            (Rung::AddressSpace, counted(7, 13, 400)),
            (Rung::Base, by_perf),
        ];
        let mut failed = 0;
        for (rung, ev) in &cases {
            let (a, b) = l.sides(*rung);
            let c = switches_check(ev, (&a, &b));
            let old = switches_sentence(ev, (&a, &b));
            assert_eq!(words(&c), old, "{rung:?} {c:?}");
            let back: Check = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
            assert_eq!(back, c);
            assert_eq!(
                line(&back),
                format!("{}: expected {}, observed {}", old[0], old[1], old[2])
            );
            failed += usize::from(!c.ok);
        }
        assert!(failed > 0 && failed < cases.len(), "{failed} failed");
        // The too-wide clause and the sample count reach the words.
        let (a, b) = l.sides(Rung::All);
        let c = switches_check(&counted(3, 3, 3 * 3 * 2 + 18), (&a, &b));
        assert!(expected(&c).contains("is wider"), "{}", expected(&c));
        assert!(observed(&c).ends_with("; 3 round trips a sample)"));
        // A version 1 run's check loads as its words and prints them as they were.
        let v1 = r#"{"name":"context switches per round trip of both sides","expected":"4.00 ±5% a round trip, plus 4–8 a sample of chunk hand-offs","observed":"round 1: 4.006 (rusage nvcsw+nivcsw; 1217 round trips a sample)","ok":true}"#;
        let c: Check = serde_json::from_str(v1).unwrap();
        assert_eq!(c.kind, CheckKind::Legacy);
        assert_eq!(
            line(&c),
            "context switches per round trip of both sides: expected 4.00 ±5% a round trip, \
             plus 4–8 a sample of chunk hand-offs, observed round 1: 4.006 (rusage \
             nvcsw+nivcsw; 1217 round trips a sample)"
        );
        assert_eq!(serde_json::to_string(&c).unwrap(), v1);
    }

    #[test]
    fn a_switch_count_outside_the_band_fails_the_check() {
        let l = ladder(1);
        let (a, b) = l.sides(Rung::AddressSpace);
        // 5 samples of 2000 round trips: 4 ±5% a round trip plus 4–8 hand-offs a sample.
        let c = switches_check(&counted(5, 2000, 40_000), (&a, &b));
        let Bound::RoundTrips(band) = &c.bound else {
            panic!("{c:?}")
        };
        let (lo, hi) = band.limits();
        assert!(c.ok && lo < 4.0 && 4.0 < hi, "{lo} {hi}");
        assert!(band.holds(lo) && band.holds(hi));
        for sw in [lo - 1e-9, hi + 1e-9, 0.0, f64::NAN, f64::INFINITY] {
            assert!(!band.holds(sw), "{sw}");
        }
        // The band as the check judges it: just above its top, the check fails.
        let over = (hi * 10_000.0).ceil() as u64 + 1;
        assert!(!switches_check(&counted(5, 2000, over), (&a, &b)).ok);
        let under = (lo * 10_000.0).floor() as u64 - 1;
        assert!(!switches_check(&counted(5, 2000, under), (&a, &b)).ok);
    }

    /// A small real rung: both sides' tasks in its evidence, a baseline, a value or a reason.
    #[test]
    fn a_small_real_rung_measures_both_sides() {
        let cfg = SamplingConfig::small(150_000_000);
        let ctx = Context::new(cfg);
        let cpu = *crate::machine::affinity::allowed_cpus().last().unwrap();
        let l = ladder(cpu);
        let m = measure_rung(&ctx, &l, Rung::AddressSpace).unwrap();
        assert_eq!(m.params["rung"], "address-space");
        assert_eq!(m.evidence.cpus.len(), 4);
        assert!(m.baseline.is_some() && m.difference.is_some());
        assert_eq!(m.samples.len(), m.baseline_samples.len());
        let names: Vec<String> = m.checks.iter().map(crate::report::checks::name).collect();
        assert!(names
            .iter()
            .any(|n| n == "context switches per round trip of both sides"));
        assert!(
            m.checks
                .iter()
                .find(|c| crate::report::checks::name(c) == "placement")
                .unwrap()
                .ok
        );
    }

    /// The line a check renders, after a JSON write and re-read too.
    fn both_lines(c: &Check) -> [String; 2] {
        let back: Check = serde_json::from_str(&serde_json::to_string(c).unwrap()).unwrap();
        assert_eq!(&back, c);
        [
            crate::report::checks::line(c),
            crate::report::checks::line(&back),
        ]
    }

    #[test]
    fn the_control_checks_read_as_their_sentences_did() {
        let same = |c: Check, old: String| assert_eq!(both_lines(&c), [old.clone(), old]);
        let (avx, sve) = (Regs::Avx.components(), Regs::Sve.components());
        same(
            live_check(Regs::Avx, Some(0x3)),
            format!(
                "avx state live at every switch: expected XINUSE ⊇ {avx:#x} in both tasks, \
                 observed {:#x}",
                0x3 & avx
            ),
        );
        same(
            live_check(Regs::Sve, None),
            format!(
                "sve state loaded before every switch: expected read-back ⊇ {sve:#x} in both \
                 tasks (the loaded values, read back), observed read-back not read"
            ),
        );
        same(
            released_check(Regs::Avx, Some(0x7)),
            format!(
                "avx state released in the baseline: expected XINUSE ∩ {avx:#x} = 0 at every \
                 switch, observed {:#x}",
                0x7 & avx
            ),
        );
        same(
            released_check(Regs::Sve, None),
            format!(
                "sve state released in the baseline: expected read-back ∩ {sve:#x} = 0 at \
                 every switch, observed read-back not read"
            ),
        );
        let t = Tally {
            fpu_saves: 12,
            fpu_live_in_all: 0x1,
            ..Tally::default()
        };
        let c = saved_live_check(Regs::Avx, &t);
        assert!(!c.ok);
        same(
            c,
            format!(
                "avx state saved live (x86_fpu): expected xfeatures ⊇ {avx:#x} in every save, \
                 observed {:#x} in 12 saves",
                0x1 & avx
            ),
        );
        let f = Some("force disabled".to_string());
        same(
            barrier_check(&[9, 3], &[f.clone(), None], std::slice::from_ref(&f)),
            "indirect-branch barrier granted: expected prctl reads force disabled, status \
             'force disabled' (baseline not), observed prctl [9, 3]; status force disabled, \
             unread (baseline force disabled)"
                .into(),
        );
        same(
            walk_check("packed walk's pages", 64, 1, Some((64, 2))),
            "packed walk's pages: expected 64 lines in 1 pages, observed 64 lines in 2 pages"
                .into(),
        );
        same(
            walk_check("p", 64, 1, None),
            "p: expected 64 lines in 1 pages, observed not counted".into(),
        );
        let at = |role: &str, c: usize| Placement {
            role: role.into(),
            start: Some(c),
            end: None,
            ..Placement::default()
        };
        let c = other_cpu_check(&[at("timer", 0), at("partner", 0)], 0, 1);
        assert!(!c.ok);
        same(
            c,
            "partner ran on another CPU: expected timer on CPU 0, partner on CPU 1, observed \
             timer on Some(0)→None, partner on Some(0)→None"
                .into(),
        );
    }
}
