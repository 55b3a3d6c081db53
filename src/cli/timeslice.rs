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

/// One slice's time: each sample runs both tasks together and then one after the other
/// (about 4 × `work`); sampling goes on until the budget is spent but takes at least its
/// minimum samples, and the last sample, the calibration and the partners' start add about
/// one more sample. (The engine's default, 2 s per item, was a quarter of it: "about 9 s",
/// took 36 s.)
fn slice_estimate(budget: Duration, work: Duration) -> Duration {
    let per_sample = work * 4;
    let min = per_sample * sampling(budget).min_samples as u32;
    budget.max(min) + per_sample
}

pub fn run(mut a: TimesliceArgs) -> Result<i32> {
    super::common::dedup(&mut a.slices);
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
    let ci = a.opts.ci;
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
        plan.push(
            PlanItem::new(
                format!("ctx.timeslice {}", humantime::format_duration(slice)),
                move |ctx: &Context| {
                    let mut own = ctx.clone();
                    own.sampling = slice_sampling(budget, ci);
                    measure_slice(&own, c)
                },
            )
            .with_estimate(slice_estimate(budget, work))
            .once(
                "the figure is the ratio of each together sample to its sequential pair, \
                 computed after sampling",
            ),
        );
    }
    let run = execute(plan, &a.opts)?;
    finish(&run, &a.opts)
}

/// Whole-run sampling for one slice: the budget, and `--ci` (percent) as the stop rule when
/// given (otherwise the whole-run default of 1%).
fn slice_sampling(
    budget: Duration,
    ci_percent: Option<f64>,
) -> crate::engine::sampler::SamplingConfig {
    let mut cfg = sampling(budget);
    if let Some(p) = ci_percent {
        cfg.rel_ci_target = p / 100.0;
    }
    cfg
}

#[cfg(test)]
mod tests {
    #[test]
    fn ci_option_is_the_stop_rule() {
        let d = std::time::Duration::from_secs(2);
        assert_eq!(super::slice_sampling(d, Some(5.0)).rel_ci_target, 0.05);
        assert_eq!(
            super::slice_sampling(d, None).rel_ci_target,
            super::sampling(d).rel_ci_target
        );
        assert_eq!(super::slice_sampling(d, Some(5.0)).budget_ns, 2_000_000_000);
    }

    use super::*;

    #[test]
    fn a_slice_takes_its_budget_or_its_minimum_samples() {
        // Default: an 8 s budget, 250 ms of work: 8 s + one 1 s sample.
        assert_eq!(
            slice_estimate(Duration::from_secs(8), Duration::from_millis(250)),
            Duration::from_secs(9)
        );
        // Long work: the minimum samples outlast the budget.
        assert_eq!(
            slice_estimate(Duration::from_secs(1), Duration::from_millis(250)),
            Duration::from_secs(6)
        );
    }
}
