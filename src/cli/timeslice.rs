//! `oscost ctx timeslice`: relative runtime of two working-set tasks sharing one CPU, per
//! time slice.

use super::common::{parse_duration, pick_cpu, MeasureOpts};
use super::ctx::check_memory;
use super::execute::{execute, finish, Plan, PlanItem};
use crate::analysis::sizes::{fmt_size, parse_size};
use crate::engine::measure::Context;
use crate::error::{Error, Result};
use crate::probes::ctx::timeslice::{live_env, measure_slice, sampling, select, Config, SliceMech};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct TimesliceArgs {
    /// Time slices to compare (comma-separated durations).
    #[arg(long, value_delimiter = ',', value_parser = parse_slice, default_values = ["1ms", "2ms", "4ms", "8ms"])]
    pub slices: Vec<Duration>,
    /// Working set each task writes over and over.
    #[arg(long, value_parser = parse_size, default_value = "256k")]
    pub work_set: u64,
    /// CPU time each task needs when alone (default 250ms, quick 60ms).
    #[arg(long, value_parser = parse_duration)]
    pub work: Option<Duration>,
    /// Force a mechanism (default: EEVDF custom slices on Linux ≥ 6.12, else SCHED_RR).
    #[arg(long, value_enum)]
    pub mech: Option<SliceMech>,
    /// The CPU both tasks share (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

/// A slice: a duration from 10 µs to 1 s (the mechanism narrows it further).
fn parse_slice(s: &str) -> std::result::Result<Duration, String> {
    let d = humantime::parse_duration(s.trim())
        .map_err(|e| format!("'{s}' is not a duration ({e}); use e.g. 1ms, 4ms"))?;
    if d < Duration::from_micros(10) || d > Duration::from_secs(1) {
        return Err(format!("'{s}' is out of range: use 10us to 1s"));
    }
    Ok(d)
}

pub fn run(a: TimesliceArgs) -> Result<i32> {
    a.opts.check_outputs()?;
    if a.work_set == 0 {
        return Err(Error::usage(
            "--work-set 0: each task needs a working set to walk (at least 4k)",
        ));
    }
    check_memory(
        a.work_set.saturating_mul(4),
        &format!("two tasks of {}", fmt_size(a.work_set)),
    )?;
    let cpu = pick_cpu(a.cpu)?;
    let machine = crate::machine::collect();
    let mech = select(live_env(&machine), a.mech).map_err(Error::usage)?;
    for &s in &a.slices {
        mech.check_slice(s).map_err(Error::usage)?;
    }
    let home = crate::evidence::placement::allowed_cpus()
        .into_iter()
        .find(|&c| c != cpu)
        .unwrap_or(cpu);
    let work = a.work.unwrap_or(if a.opts.quick {
        Duration::from_millis(60)
    } else {
        Duration::from_millis(250)
    });
    let budget = a.opts.budget.unwrap_or(if a.opts.quick {
        Duration::from_secs(2)
    } else {
        Duration::from_secs(8)
    });
    let mut plan = Plan::default();
    for &slice in &a.slices {
        let c = Config {
            slice,
            mech,
            work_set: a.work_set,
            work,
            cpu,
            home,
        };
        plan.push(PlanItem::new(
            format!("ctx.timeslice {}", humantime::format_duration(slice)),
            move |ctx: &Context| {
                let mut own = ctx.clone();
                own.sampling = sampling(budget);
                measure_slice(&own, c)
            },
        ));
    }
    let run = execute(plan, &a.opts)?;
    finish(&run, &a.opts)
}
