//! `oscost ctx timeslice`: relative runtime of two working-set tasks sharing one CPU, per
//! time slice.

use super::common::{parse_duration, pick_cpu, MeasureOpts};
use super::execute::{execute, finish};
use crate::engine::measure::Context;
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::ctx::timeslice::{live_env, measure_slice, sampling, select, Config, SliceMech};
use crate::probes::scratch::{check_memory, Keep, MemRoom};
use crate::units::size::{fmt_size, parse_size};

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

/// One slice's expected time: the sampler's longest run (engine::estimate::call_bound_s)
/// with whole-run samples, each running both tasks together and then one after the other
/// (2 × `work` each); plus the calibration (about 4 × 20 ms) and filling the tasks' working
/// sets. Whole-run samples rarely converge within ±1% at 3 samples a round, and with
/// `--quick` the minimum samples outlast the budget, so budget + one sample would miss the
/// warm-up batches and the samples with counters.
fn slice_estimate(budget: Duration, work: Duration, ci: Option<f64>) -> Duration {
    let half = 2.0 * work.as_secs_f64();
    let rounds = crate::engine::sampler::plan(
        &slice_sampling(budget, ci),
        crate::engine::sampler::Call::Whole,
    );
    let longest = crate::engine::estimate::call_bound_s(&rounds, 2.0 * half);
    Duration::from_secs_f64(longest + 0.1)
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
        &format!("two tasks of {}", fmt_size(a.work_set)),
        a.work_set.saturating_mul(4),
        &MemRoom::read()?,
        Keep::Half,
    )?;
    let cpu = pick_cpu(a.cpu)?;
    let machine = crate::machine::collect();
    let mech = select(live_env(&machine), a.mech).map_err(Error::usage)?;
    for &s in &a.slices {
        mech.check_slice(s).map_err(Error::usage)?;
    }
    let home = crate::machine::affinity::allowed_cpus()
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
            .with_estimate(slice_estimate(budget, work, ci))
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
        let s =
            |b: u64, w: u64| slice_estimate(Duration::from_secs(b), Duration::from_millis(w), None);
        // --quick: 2 s budget, 60 ms of work: the minimum samples take about 4 s.
        let q = s(2, 60).as_secs_f64();
        assert!(q > 3.5 && q < 4.6, "{q}");
        // A long budget is not spent: the sample limit (15) ends the slice first.
        let long = s(30, 60).as_secs_f64();
        assert!(long > q && long < 15.0, "{long}");
        // Long work: the minimum samples outlast the budget.
        assert!(s(1, 250) > Duration::from_secs(12));
    }
}
