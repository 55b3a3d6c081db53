//! `oscost call`, `oscost syscall` and `oscost ctx` (same-core switches), and the plan pieces
//! the default suite reuses.

use super::common::{pick_cpu, MeasureOpts};
use super::execute::{execute, finish};
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::ctx::pipe::{measure_pipe, tax_pass};
use crate::probes::ctx::yield_::{
    evidence_pass as yield_evidence_pass, fifo_permitted, measure_yield, Policy,
};
use crate::probes::ctx::{futex::measure_futex, ClockMethod, Mech, Mode};
use crate::probes::syscall::{measure_call, Syscall};
use crate::units::name::Named;

#[derive(Debug, clap::Args)]
pub struct CallArgs {
    /// CPU to pin the measuring thread to (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

#[derive(Debug, clap::Args)]
pub struct SyscallArgs {
    /// Which calls (comma-separated; default all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub which: Vec<Syscall>,
    /// CPU to pin the measuring thread to (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

#[derive(Debug, clap::Args)]
pub struct CtxArgs {
    /// Mechanisms (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["pipe", "futex", "yield"])]
    pub mech: Vec<Mech>,
    /// Partners as processes and/or threads.
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["process", "thread"])]
    pub mode: Vec<Mode>,
    /// The one CPU both partners are pinned to (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// How pipe round trips are timed: direct (subtracting the in-process pipe), cputime
    /// (the CMPT300 method), or both.
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["direct"])]
    pub clock: Vec<ClockMethod>,
    /// Also run ctx.yield with both threads SCHED_FIFO (needs root or RLIMIT_RTPRIO).
    #[arg(long)]
    pub fifo: bool,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

pub fn plan_call(plan: &mut Plan, cpu: usize) {
    plan.push(PlanItem::new("call.function", move |ctx| {
        crate::probes::call::function(ctx, cpu)
    }));
    plan.push(PlanItem::new("call.chain", move |ctx| {
        crate::probes::call::chain(ctx, cpu)
    }));
}

pub fn plan_syscalls(plan: &mut Plan, which: &[Syscall], cpu: usize) {
    for &w in which {
        plan.push(PlanItem::new(w.probe_id().0, move |ctx| {
            measure_call(ctx, w, cpu)
        }));
    }
}

pub fn plan_ctx(plan: &mut Plan, a: &CtxArgs, cpu: usize) {
    for &mech in &a.mech {
        for &mode in &a.mode {
            match mech {
                Mech::Pipe => {
                    for &clock in &a.clock {
                        if clock == ClockMethod::Cputime && mode == Mode::Thread {
                            plan.skip(
                                "ctx.pipe thread cputime",
                                "the CPU-time method needs the partner in another process \
                                 (a thread's CPU time is counted in the measuring process)",
                            );
                            continue;
                        }
                        plan.push(
                            PlanItem::new(
                                format!("ctx.pipe {} {}", mode.name(), clock.name()),
                                move |ctx| measure_pipe(ctx, mode, cpu, clock),
                            )
                            .hook_free()
                            .with_evidence_pass(move |ctx, m| tax_pass(ctx, mode, cpu, m)),
                        );
                    }
                }
                Mech::Futex => plan.push(
                    PlanItem::new(format!("ctx.futex {}", mode.name()), move |ctx| {
                        measure_futex(ctx, mode, cpu)
                    })
                    .hook_free()
                    .with_evidence_pass(move |_, m| {
                        crate::probes::ctx::futex::evidence_pass(mode, cpu, m)
                    }),
                ),
                Mech::Yield if mode == Mode::Thread => {
                    plan.push(
                        PlanItem::new("ctx.yield thread", move |ctx| {
                            measure_yield(ctx, cpu, Policy::Normal, true)
                        })
                        .hook_free()
                        .with_evidence_pass(move |_, m| {
                            yield_evidence_pass(cpu, Policy::Normal, m)
                        }),
                    );
                    if a.fifo {
                        match fifo_permitted() {
                            Ok(()) => plan.push(
                                PlanItem::new("ctx.yield fifo", move |ctx| {
                                    measure_yield(ctx, cpu, Policy::Fifo, true)
                                })
                                .hook_free()
                                .with_evidence_pass(
                                    move |_, m| yield_evidence_pass(cpu, Policy::Fifo, m),
                                ),
                            ),
                            Err(why) => plan.skip("ctx.yield fifo", why),
                        }
                    }
                }
                Mech::Yield => {
                    if !a.mode.contains(&Mode::Thread) {
                        plan.skip(
                            "ctx.yield process",
                            "sched_yield ping-pong is defined between threads; add --mode thread",
                        );
                    }
                }
            }
        }
    }
}

pub fn call(a: CallArgs) -> Result<i32> {
    a.opts.check_outputs()?;
    let cpu = pick_cpu(a.cpu)?;
    let mut plan = Plan::default();
    plan_call(&mut plan, cpu);
    let run = execute(plan, &a.opts)?;
    finish(&run, &a.opts)
}

pub fn syscall(mut a: SyscallArgs) -> Result<i32> {
    super::common::dedup(&mut a.which);
    a.opts.check_outputs()?;
    let cpu = pick_cpu(a.cpu)?;
    let which = if a.which.is_empty() {
        Syscall::ALL.to_vec()
    } else {
        a.which.clone()
    };
    let mut plan = Plan::default();
    plan_syscalls(&mut plan, &which, cpu);
    let run = execute(plan, &a.opts)?;
    finish(&run, &a.opts)
}

pub fn ctx(mut a: CtxArgs) -> Result<i32> {
    super::common::dedup(&mut a.mech);
    super::common::dedup(&mut a.mode);
    super::common::dedup(&mut a.clock);
    a.opts.check_outputs()?;
    // Asked for by name, SCHED_FIFO that cannot be set is refused before anything is
    // measured, as `ctx timeslice --mech rr` refuses SCHED_RR (the suite skips it instead).
    if a.fifo && a.mech.contains(&Mech::Yield) && a.mode.contains(&Mode::Thread) {
        fifo_permitted().map_err(|why| Error::usage(format!("cannot use --fifo: {why}")))?;
    }
    let cpu = pick_cpu(a.cpu)?;
    let mut plan = Plan::default();
    plan_ctx(&mut plan, &a, cpu);
    let run = execute(plan, &a.opts)?;
    finish(&run, &a.opts)
}
