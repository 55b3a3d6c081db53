//! `ctx.pipe`: two partners on one CPU, two pipes, one byte ping-pong (OSTEP, lmbench
//! lat_ctx with no working set, perf bench sched pipe). Per switch = (round trip − the same
//! pipe writes and reads inside one thread) / 2, lat_ctx's definition.

use super::tax::{drop_counterless_evidence, measure_tax, note as tax_note, quiet_hooks};
use super::{same_core_verdict, ClockMethod, Mode};
use crate::engine::measure::{measure, Context, Spec};
use crate::engine::measure::{Participants, Workloads};
use crate::engine::partner::{
    partner_error, read_byte, spawn_ready_child, write_byte, Child, Pipe, SharedPage, ThreadPartner,
};
use crate::engine::sampler::auto_scale;
use crate::error::Result;
use crate::evidence::clock::{self, now_ns};
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::Measurement;
use crate::units::name::Named;
use crate::units::{Per, Unit};

/// Echo bytes from `rfd` to `wfd` until EOF or error. Allocation-free (runs after fork).
fn echo(rfd: i32, wfd: i32) -> i32 {
    let mut b = 0u8;
    loop {
        if read_byte(rfd, &mut b).is_err() || write_byte(wfd, &b).is_err() {
            return 0;
        }
    }
}

/// `iters` round trips: write a byte to the partner, read its echo.
#[inline(always)]
fn round_trips(to: i32, from: i32, iters: u64) -> Result<()> {
    let mut b = 0u8;
    for _ in 0..iters {
        write_byte(to, &1).map_err(|e| partner_error("pipe write", e))?;
        read_byte(from, &mut b).map_err(|e| partner_error("pipe read", e))?;
    }
    Ok(())
}

pub fn measure_pipe(
    ctx: &Context,
    mode: Mode,
    cpu: usize,
    method: ClockMethod,
) -> Result<Measurement> {
    measure_pipe_on(ctx, mode, cpu, cpu, method)
}

/// The ping-pong with the partner pinned to `partner_cpu`. Same-core probes pass the same CPU
/// twice; a different one must fail the same-CPU check (the tests rely on that).
pub fn measure_pipe_on(
    ctx: &Context,
    mode: Mode,
    cpu: usize,
    partner_cpu_req: usize,
    method: ClockMethod,
) -> Result<Measurement> {
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    let pair = Pair::start(mode, cpu, partner_cpu_req)?;
    let own = Pipe::new()?;

    // No perf counters in the figure's samples (not even in its evidence samples), and none
    // closed in the last second: see tax.rs. The counts come from the tax pass afterwards.
    let spec = Spec::new(
        "ctx.pipe",
        Unit::ns(Per::Switch),
        Unit::ns(Per::RoundTrip),
        2.0,
    )
    .param("mode", mode.name())
    .param("cpus", vec![cpu])
    .events_set(EventSet::None);
    let spec = quiet_hooks(ctx, spec)?;
    let people = [pair.me.clone(), pair.partner.clone()];
    let result = match method {
        ClockMethod::Direct => measure_direct(ctx, spec, &pair, &own),
        ClockMethod::Cputime => measure_cputime(ctx, spec, people, pair.partner_cpu, pair.ends),
    };
    let mut m = result?;
    drop_counterless_evidence(&mut m);
    // The observer's tax, in its own pass after the figure's samples (see tax.rs): here when
    // the probe runs alone, else after every item's samples (the plan's evidence pass).
    if !ctx.evidence_later && ctx.is_last_round() {
        add_tax(ctx, &pair, &mut m)?;
    }
    Ok(m)
}

/// The evidence pass of a ctx.pipe measurement taken with `Context::evidence_later`: the
/// observer-tax pass (tax.rs) with the partner started again, after every figure's samples.
pub fn tax_pass(ctx: &Context, mode: Mode, cpu: usize, m: &mut Measurement) -> Result<()> {
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    let pair = Pair::start(mode, cpu, cpu)?;
    add_tax(ctx, &pair, m)
}

/// The measuring thread's partner, pinned and echoing, and the two pipe ends that reach it.
/// Dropping it ends the partner (a thread sees EOF and is joined, a child is killed and
/// reaped) before the pipes close.
struct Pair {
    /// Held for their Drop, which ends the partner.
    _thread: Option<ThreadPartner>,
    _child: Option<Child>,
    me: Participant,
    partner: Participant,
    partner_cpu: Option<usize>,
    /// (write to the partner, read its echo).
    ends: (i32, i32),
    _pipes: [Pipe; 2],
}

impl Pair {
    fn start(mode: Mode, cpu: usize, partner_cpu_req: usize) -> Result<Pair> {
        let mut to_partner = Pipe::new()?;
        let mut from_partner = Pipe::new()?;
        let page = SharedPage::new()?;
        let (pr, pw) = (to_partner.read, from_partner.write);
        let (my_w, my_r) = (to_partner.write, from_partner.read);
        let mut child: Option<Child> = None;
        let mut thread: Option<ThreadPartner> = None;
        let (partner, partner_cpu) = match mode {
            Mode::Process => {
                let (c, started_on) = spawn_ready_child(
                    &page,
                    0,
                    partner_cpu_req,
                    // Close the parent's ends so that a dead parent reads as EOF here.
                    // SAFETY: closing descriptors this task owns and no longer uses.
                    || unsafe {
                        libc::close(my_w);
                        libc::close(my_r);
                    },
                    || echo(pr, pw),
                )?;
                let p = Participant::child(c.pid(), vec![partner_cpu_req]);
                to_partner.close_read();
                from_partner.close_write();
                child = Some(c);
                (p, started_on)
            }
            Mode::Thread => {
                // The stop closure owns the write end the partner reads from: closing it makes
                // the partner see EOF and return, then Drop joins it.
                let stop_fd = my_w;
                to_partner.write = -1;
                let (t, tid, c) = ThreadPartner::spawn_ready(
                    partner_cpu_req,
                    move || {
                        echo(pr, pw);
                    },
                    // SAFETY: closing descriptors this task owns and no longer uses.
                    move || unsafe {
                        libc::close(stop_fd);
                    },
                )?;
                thread = Some(t);
                (
                    Participant::thread("partner thread", tid, vec![partner_cpu_req]),
                    c,
                )
            }
        };
        Ok(Pair {
            _thread: thread,
            _child: child,
            me: Participant::this_thread("measuring thread", vec![cpu]),
            partner,
            partner_cpu,
            ends: (my_w, my_r),
            _pipes: [to_partner, from_partner],
        })
    }
}

/// The direct method: round trips against the same two writes and reads in one thread.
fn measure_direct(ctx: &Context, spec: Spec, pair: &Pair, own: &Pipe) -> Result<Measurement> {
    let [me, partner] = [pair.me.clone(), pair.partner.clone()];
    let (partner_cpu, (my_w, my_r)) = (pair.partner_cpu, pair.ends);
    let spec = spec.param("clock", "direct").note(
        "per switch = (pipe round trip − the same 2 writes and 2 reads inside one \
         thread) / 2 switches, lmbench lat_ctx's definition. The raw round trip is what `perf bench \
         sched pipe` reports per op (there as usecs/op).",
    );
    let mut raw = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        round_trips(my_w, my_r, iters)?;
        Ok(now_ns() - t0)
    };
    let (ow, or) = (own.write, own.read);
    let mut base = |iters: u64| -> Result<u64> {
        let mut b = 0u8;
        let t0 = now_ns();
        for _ in 0..iters {
            for _ in 0..2 {
                write_byte(ow, &1).map_err(|e| partner_error("pipe write", e))?;
                read_byte(or, &mut b).map_err(|e| partner_error("pipe read", e))?;
            }
        }
        Ok(now_ns() - t0)
    };
    measure(
        ctx,
        spec,
        Participants::new(vec![me, partner], vec![None, partner_cpu]),
        Workloads::paired(&mut raw, &mut base),
        |ev| same_core_verdict(ev, 2.0, "round trip"),
    )
}

/// The CMPT300 method: wall time less the measuring process's CPU time.
fn measure_cputime(
    ctx: &Context,
    spec: Spec,
    [me, partner]: [Participant; 2],
    partner_cpu: Option<usize>,
    (my_w, my_r): (i32, i32),
) -> Result<Measurement> {
    let spec = spec.param("clock", "cputime").note(
        "CMPT300 method: (CLOCK_MONOTONIC wall time − the measuring process's \
         CLOCK_PROCESS_CPUTIME_ID) / 2 per round trip. It keeps only what ran outside \
         the measuring process — the partner's CPU time with its pipe calls and the part \
         of each switch charged to the partner — and subtracts the part charged to the \
         measuring process, so it measures a different quantity than the direct method \
         and can come out lower or higher",
    );
    let mut raw = |iters: u64| -> Result<u64> {
        let w0 = clock::read(libc::CLOCK_MONOTONIC);
        let c0 = clock::read(libc::CLOCK_PROCESS_CPUTIME_ID);
        round_trips(my_w, my_r, iters)?;
        let c1 = clock::read(libc::CLOCK_PROCESS_CPUTIME_ID);
        let w1 = clock::read(libc::CLOCK_MONOTONIC);
        Ok((w1 - w0).saturating_sub(c1 - c0).max(1))
    };
    measure(
        ctx,
        spec,
        Participants::new(vec![me, partner], vec![None, partner_cpu]),
        Workloads::alone(&mut raw),
        |ev| same_core_verdict(ev, 2.0, "round trip"),
    )
}

/// The observer's tax pass (tax.rs) on a running pair, added to `m`.
fn add_tax(ctx: &Context, pair: &Pair, m: &mut Measurement) -> Result<()> {
    let (my_w, my_r) = pair.ends;
    let mut rt = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        round_trips(my_w, my_r, iters)?;
        Ok(now_ns() - t0)
    };
    let iters = auto_scale(&mut rt, TAX_SAMPLE_NS)?;
    let participants = [pair.me.clone(), pair.partner.clone()];
    let pass = measure_tax(
        &participants,
        &mut rt,
        iters,
        tax_rounds(ctx.sampling.budget_ns),
    )?;
    m.notes.push(tax_note("round trip", &pass.taxes));
    if m.evidence.events.is_empty() {
        m.evidence.events = pass.perf_events;
    }
    Ok(())
}

/// Length of one timed sample of the tax pass, and the most rounds it takes: about 0.2 s in
/// all, beside the figure's 2 s.
const TAX_SAMPLE_NS: u64 = 5_000_000;
const TAX_ROUNDS: usize = 7;
/// The fewest rounds: a median and a range still mean something.
const TAX_ROUNDS_MIN: usize = 3;

/// Rounds of the tax pass for a measurement budget of `budget_ns`: as many as fit in a tenth
/// of it (each round times 5 collectors for [`TAX_SAMPLE_NS`]), from [`TAX_ROUNDS_MIN`] to
/// [`TAX_ROUNDS`]. With `--quick` (0.3 s) 7 rounds take about as long as the figure's own
/// samples; the pass is evidence beside the figure, not one of its checks.
fn tax_rounds(budget_ns: u64) -> usize {
    let per_round = 5 * TAX_SAMPLE_NS;
    ((budget_ns / 10 / per_round) as usize).clamp(TAX_ROUNDS_MIN, TAX_ROUNDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tax_pass_takes_a_tenth_of_the_budget_within_its_bounds() {
        assert_eq!(tax_rounds(2_000_000_000), TAX_ROUNDS);
        assert_eq!(tax_rounds(300_000_000), TAX_ROUNDS_MIN);
        assert_eq!(tax_rounds(1_000_000_000), 4);
        assert_eq!(tax_rounds(0), TAX_ROUNDS_MIN);
        assert_eq!(tax_rounds(u64::MAX), TAX_ROUNDS);
    }
    use crate::engine::sampler::SamplingConfig;

    /// The figure's samples carry no perf counters; the counts shown come from the tax pass,
    /// which runs after them and names the lingering hooks.
    #[test]
    fn the_figure_takes_no_counters_and_the_tax_pass_supplies_the_counts() {
        let cfg = SamplingConfig::small(100_000_000);
        let ctx = Context::new(cfg);
        let cpu = *crate::machine::affinity::allowed_cpus().last().unwrap();
        let m = measure_pipe(&ctx, Mode::Thread, cpu, ClockMethod::Direct).unwrap();
        // Counters were opened (by the tax pass) only after the figure's samples: whatever
        // the machine allows, the context-switch event is listed, supported or with a reason.
        assert!(m.evidence.events.contains_key("context-switches"));
        assert!(m.notes.iter().any(|n| n.contains("perf hooks still on")));
        assert!(!m
            .notes
            .iter()
            .any(|n| n.starts_with("with perf counters attached")));
        // The check's switch count is rusage's, from the figure's own windows.
        let c = m
            .checks
            .iter()
            .find(|c| crate::report::checks::name(c).starts_with("context switches"))
            .unwrap();
        assert!(
            crate::report::checks::observed(c).contains("rusage"),
            "{}",
            crate::report::checks::observed(c)
        );

        // In a plan the tax pass is left to the evidence pass after every figure: the call
        // opens no counters, and the pass (partner started again) supplies them.
        let later = Context {
            evidence_later: true,
            ..ctx.clone()
        };
        let mut m = measure_pipe(&later, Mode::Thread, cpu, ClockMethod::Direct).unwrap();
        assert!(m.evidence.events.is_empty());
        assert!(!m.notes.iter().any(|n| n.starts_with("observer tax")));
        tax_pass(&later, Mode::Thread, cpu, &mut m).unwrap();
        assert!(m.evidence.events.contains_key("context-switches"));
        assert!(m.notes.iter().any(|n| n.starts_with("observer tax")));
    }
}
