//! `oscost run`: the default suite — function call, the system-call set with the vDSO
//! contrast, same-core switches by pipe, futex and yield, as processes and threads, and one
//! cross-core round trip blocking (pipe) and polling (spin flag).

use super::common::{pick_cpu, MeasureOpts};
use super::execute::{execute, finish};
use super::probes::{plan_call, plan_ctx, plan_syscalls, CtxArgs};
use crate::engine::plan::Plan;
use crate::error::Result;
use crate::probes::ctx::{ClockMethod, Mech, Mode};
use crate::probes::syscall::Syscall;

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// CPU for the same-core probes (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Run the suite's probes in reverse order (to check that the order does not move a
    /// result: compare a forward and a reversed run, see bench/order.sh).
    #[arg(long)]
    pub reverse: bool,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

/// The suite's plan.
pub fn plan(cpu: usize, opts: &MeasureOpts) -> Plan {
    let mut plan = Plan::default();
    plan_call(&mut plan, cpu);
    plan_syscalls(&mut plan, &Syscall::ALL, cpu);
    let ctx = CtxArgs {
        mech: vec![Mech::Pipe, Mech::Futex, Mech::Yield],
        mode: vec![Mode::Process, Mode::Thread],
        cpu: Some(cpu),
        clock: vec![ClockMethod::Direct, ClockMethod::Cputime],
        fifo: true,
        opts: opts.clone(),
    };
    plan_ctx(&mut plan, &ctx, cpu);
    super::ipc::plan_suite(&mut plan);
    plan
}

pub fn run(a: RunArgs) -> Result<i32> {
    a.opts.check_outputs()?;
    let cpu = pick_cpu(a.cpu)?;
    let mut plan = plan(cpu, &a.opts);
    if a.reverse {
        plan.items.reverse();
    }
    let run = execute(plan, &a.opts)?;
    finish(&run, &a.opts)
}
