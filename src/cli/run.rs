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
use std::time::Duration;

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

/// The suite's sampling time in all, shared equally among its items (each measurement's
/// budget, unless `--budget` sets one). Why one total: per-measurement budgets grow the suite
/// with every item added (2 s each, plus scaling, warm-ups and make-up rounds); a shared
/// total keeps its length fixed. A measurement
/// whose interval is not at target by the end of its share stops there, its interval as
/// it stands (and says so).
pub const SUITE_SAMPLING: Duration = Duration::from_secs(10);

/// The options the suite's items sample with: each item's share of [`SUITE_SAMPLING`]
/// (quick mode's own budget when shorter).
pub fn shared(plan: &Plan, opts: &MeasureOpts) -> MeasureOpts {
    let items = plan.items.len().max(1) as u32;
    MeasureOpts {
        share: Some(SUITE_SAMPLING / items),
        ..opts.clone()
    }
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
    let opts = shared(&plan, &a.opts);
    let run = execute(plan, &opts)?;
    finish(&run, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::estimate::{History, PlanEstimate, FIXED_S};
    use clap::Parser;

    #[derive(Parser)]
    struct Opts {
        #[command(flatten)]
        o: MeasureOpts,
    }

    /// The suite's planned sampling budget in all (each item's budget summed) and its
    /// estimate, for these command-line options.
    fn planned(args: &[&str]) -> (Duration, PlanEstimate) {
        let o = Opts::parse_from(std::iter::once("run").chain(args.iter().copied())).o;
        let p = plan(0, &o);
        let o = shared(&p, &o);
        let cfg = o.sampling();
        let budgets: u64 = p.shapes(&cfg).iter().map(|s| s.sampling.budget_ns).sum();
        let est = PlanEstimate::new(p.shapes(&cfg), &History::default());
        (Duration::from_nanos(budgets), est)
    }

    #[test]
    fn the_suite_plans_at_most_its_shared_sampling_time_and_quick_plans_less() {
        let (full, est) = planned(&[]);
        assert!(full <= SUITE_SAMPLING, "{full:?}");
        assert!(full <= Duration::from_secs(18), "{full:?}");
        let (quick, quick_est) = planned(&["--quick"]);
        assert!(quick < full, "{quick:?} against {full:?}");
        assert!(quick_est.total_s() < est.total_s());
        // The estimate is the budgets plus the sampler's overheads (scaling, warm-ups, a
        // sample past each deadline), the make-up rounds' share and the fixed start and end.
        let bounds: f64 = est.items.iter().map(|i| i.bound_s).sum();
        assert!(bounds > full.as_secs_f64());
        let total = bounds + est.make_up.expected_s + FIXED_S;
        assert!((est.total_s() - total).abs() < 1e-9);
        assert!(est.total_s() < 2.0 * SUITE_SAMPLING.as_secs_f64());
        // A budget given on the command line keeps its per-measurement meaning.
        let (given, _) = planned(&["--budget", "2s"]);
        assert_eq!(given, Duration::from_secs(2) * est.items.len() as u32);
    }

    #[test]
    fn the_budget_option_says_the_suite_total_it_shares() {
        let cmd = <Opts as clap::CommandFactory>::command();
        let budget = cmd.get_arguments().find(|a| a.get_id() == "budget");
        let help = budget
            .and_then(|a| a.get_help())
            .expect("--budget has help");
        let said = format!("shares {} s", SUITE_SAMPLING.as_secs());
        assert!(help.to_string().contains(&said), "{help}");
    }
}
