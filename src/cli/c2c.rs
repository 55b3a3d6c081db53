//! `oscost c2c`: the core-to-core latency map, one cache-line ping-pong per CPU pair.

use super::common::MeasureOpts;
use super::execute::{execute, finish};
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::c2c::{measure_pair, pairs};
use crate::probes::ipc::classes::{classify, parse_cpu_list, Pair};
use crate::units::name::Named;

#[derive(Debug, clap::Args)]
pub struct C2cArgs {
    /// CPUs to pair up, e.g. 0-7,16 (default: every allowed CPU).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Measure only N of the pairs, spread evenly over the list (large machines).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub sample: Option<u64>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

pub fn run(a: C2cArgs) -> Result<i32> {
    a.opts.check_outputs()?;
    let allowed = crate::machine::affinity::allowed_cpus();
    let cpus = match &a.cpus {
        Some(s) => parse_cpu_list(s, &allowed)?,
        None => allowed.clone(),
    };
    if cpus.len() < 2 {
        return Err(Error::env(format!(
            "c2c needs at least two CPUs; {} {} available (see --cpus and taskset)",
            crate::evidence::placement::format_cpu_list(&cpus),
            if cpus.len() == 1 {
                "is the only one"
            } else {
                "are"
            }
        )));
    }
    let machine = crate::machine::collect();
    let mut plan = Plan::default();
    for (i, j) in pairs(&cpus, a.sample.map(|n| n as usize)) {
        let pair = Pair {
            a: i,
            b: j,
            class: classify(&machine, i, j),
        };
        plan.push(PlanItem::new(
            format!("c2c {i}↔{j} ({})", pair.class.name()),
            move |ctx| measure_pair(ctx, pair),
        ));
    }
    let run = execute(plan, &a.opts)?;
    finish(&run, &a.opts)
}
