//! `oscost rpc`: one request/response in four placements (local, remote-exclusive,
//! remote-polling, remote-shared), the totals always, and the kernel-traced breakdown when
//! tracing is permitted.

use super::common::MeasureOpts;
use super::execute::{execute, finish_after};
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::ipc::channel::Mech;
use crate::probes::ipc::classes::{parse_pairs, representatives, Class};
use crate::probes::rpc::traced::measure_traced;
use crate::probes::rpc::{measure_total, Scenario};
use crate::units::name::Named;

#[derive(Debug, clap::Args)]
pub struct RpcArgs {
    /// Scenarios (comma-separated; default all four).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub scenario: Vec<Scenario>,
    /// Mechanisms carrying request and response (comma-separated; remote-polling always
    /// uses the shared-memory spin flag).
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["pipe"])]
    pub mech: Vec<Mech>,
    /// CLIENT:SERVER CPUs for the remote scenarios (default: the nearest pair of different
    /// CPUs; local runs on CLIENT).
    #[arg(long)]
    pub pair: Option<String>,
    /// Totals only: skip the kernel-traced breakdown.
    #[arg(long)]
    pub no_trace: bool,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

/// The client's CPU and the server's for the remote scenarios: --pair, or the nearest pair
/// of different CPUs (none when only one CPU is allowed: only local can run).
fn client_and_server(
    a: &RpcArgs,
    machine: &crate::machine::Machine,
    allowed: &[usize],
) -> Result<(usize, Option<usize>)> {
    Ok(match &a.pair {
        Some(p) => {
            let pair = parse_pairs(machine, std::slice::from_ref(p), allowed, "--pair")?[0];
            if pair.a == pair.b {
                return Err(Error::usage(format!(
                    "--pair {p}: the remote scenarios need two different CPUs"
                )));
            }
            (pair.a, Some(pair.b))
        }
        None => {
            // The nearest pair of different CPUs; alone on one CPU, only local can run.
            let last = *allowed
                .last()
                .ok_or_else(|| Error::env("no CPU is in this process's allowed set"))?;
            representatives(machine, allowed)
                .into_iter()
                .find(|p| p.class != Class::SameCpu)
                .map_or((last, None), |p| (p.a, Some(p.b)))
        }
    })
}

pub fn run(a: RpcArgs) -> Result<i32> {
    a.opts.check_outputs()?;
    if a.mech.contains(&Mech::Spin) {
        return Err(Error::usage(
            "--mech spin: the polling hand-off is the remote-polling scenario; pick blocking \
             mechanisms (pipe, unix, unix-dgram, eventfd, futex, mqueue)",
        ));
    }
    let machine = crate::machine::collect();
    let allowed = crate::machine::affinity::allowed_cpus();
    let (client, server) = client_and_server(&a, &machine, &allowed)?;
    let scenarios = if a.scenario.is_empty() {
        Scenario::ALL.to_vec()
    } else {
        a.scenario.clone()
    };
    let trace = if a.no_trace {
        Err(None)
    } else {
        crate::evidence::trace::ring::permitted().map_err(Some)
    };
    let mut plan = Plan::default();
    let mut traced_items = Vec::new();
    for &sc in &scenarios {
        let mut done: Vec<Mech> = Vec::new();
        for &asked in &a.mech {
            let mech = sc.mech(asked);
            if done.contains(&mech) {
                continue;
            }
            done.push(mech);
            let label = format!("rpc {} {}", sc.name(), mech.name());
            let server_cpu = match (sc.remote(), server) {
                (false, _) => client,
                (true, Some(s)) => s,
                (true, None) => {
                    plan.skip(
                        &label,
                        format!(
                            "only one CPU is allowed ({}): the remote scenarios need two \
                             (taskset or a bigger machine)",
                            crate::evidence::placement::format_cpu_list(&allowed)
                        ),
                    );
                    continue;
                }
            };
            plan.push(PlanItem::new(label.clone(), move |ctx| {
                measure_total(ctx, sc, mech, client, server_cpu)
            }));
            if trace.is_ok() && sc != Scenario::RemotePolling {
                traced_items.push(
                    PlanItem::group(format!("{label} traced"), move |ctx| {
                        measure_traced(ctx, sc, mech, client, server_cpu)
                    })
                    .once("the traced breakdown samples with its own loop"),
                );
            }
        }
    }
    match trace {
        Ok(()) => {
            for item in traced_items {
                plan.push(item);
            }
            if scenarios.contains(&Scenario::RemotePolling) {
                plan.skip(
                    "rpc remote-polling breakdown",
                    "a polling hand-off makes no system calls or wake-ups: the kernel sees \
                     nothing to split",
                );
            }
        }
        Err(Some(why)) => plan.skip("rpc breakdown", why),
        Err(None) => {}
    }
    let mut run = execute(plan, &a.opts)?;
    crate::probes::rpc::correct::judge_run(&mut run);
    // The parts in detail (means and medians with their intervals, events on each part's
    // path, both modes of a bimodal part) with --explain only: the summary stays short.
    let detail = if a.opts.explain {
        crate::report::rpc::detail(&run)
    } else {
        String::new()
    };
    finish_after(&run, &a.opts, detail, Vec::new())
}
