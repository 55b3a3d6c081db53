//! `oscost stat [--repeat N] [--warmup N] [--cpu LIST] [-e EVENTS] -- CMD [ARGS...]`: the
//! user's own program run N times through the engine (rounds, intervals, evidence, checks)
//! and the common way out (table, JSON/CSV/HTML, history), so `compare` gates a program as
//! it gates a probe. What `perf stat -r N`, `hyperfine -N` and `/usr/bin/time -v` each show
//! of a command, in one run.

use super::common::MeasureOpts;
use super::execute::{execute, finish};
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::stat::{measure_runs, Config, Output, Program};

#[derive(Debug, clap::Args)]
pub struct StatArgs {
    /// Runs that make the figure, each one sample (default 10; --quick 3).
    #[arg(long, short = 'r', value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub repeat: Option<u32>,
    /// Runs before them, not recorded (caches and the page cache warmed).
    #[arg(long, short = 'w', value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub warmup: u32,
    /// Pin the program (and every task it starts) to these CPUs, as `taskset -c LIST`
    /// does, e.g. 0 or 0-3,6.
    #[arg(long, value_name = "LIST")]
    pub cpu: Option<String>,
    /// perf events to count, by perf stat's names, comma-separated (`none`: no counters).
    /// Default: task-clock, context-switches, cpu-migrations, page-faults and, where a PMU
    /// allows, cycles, instructions, cache-references, cache-misses, dTLB-loads and
    /// dTLB-load-misses.
    #[arg(
        short = 'e',
        long = "events",
        value_name = "EVENTS",
        value_delimiter = ','
    )]
    pub events: Vec<String>,
    /// Where the program's standard input, output and error go.
    #[arg(long, value_enum, default_value_t = Output::Null)]
    pub output: Output,
    #[command(flatten)]
    pub opts: MeasureOpts,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(a: Box<StatArgs>) -> Result<i32> {
    let a = *a;
    refuse_sampling(&a.opts)?;
    a.opts.check_outputs()?;
    let cfg = config(&a)?;
    let mut plan = Plan::default();
    let label = format!("stat {}", cfg.program.command_line());
    let few = cfg.repeat < crate::engine::sampler::ROUNDS as u32;
    let mut item = PlanItem::new(label, move |ctx| measure_runs(ctx, &cfg));
    if few {
        item = item.once("fewer runs than rounds: every run is taken in one call");
    }
    plan.push(item);
    let run = execute(plan, &a.opts)?;
    finish(&run, &a.opts)
}

/// `--budget` and `--ci` choose how long the sampler samples; `stat` runs the program as
/// many times as `--repeat` says, so both are refused rather than ignored.
fn refuse_sampling(o: &MeasureOpts) -> Result<()> {
    let given = [("--budget", o.budget.is_some()), ("--ci", o.ci.is_some())];
    match given.iter().find(|(_, g)| *g) {
        Some((name, _)) => Err(Error::usage(format!(
            "{name}: oscost stat runs the program --repeat N times; give --repeat instead"
        ))),
        None => Ok(()),
    }
}

/// The arguments checked and turned into what the probe runs: the program found, the CPUs
/// allowed, the events known.
fn config(a: &StatArgs) -> Result<Config> {
    let program = Program::resolve(&a.command)?;
    let allowed = crate::machine::affinity::allowed_cpus();
    let cpus = match &a.cpu {
        Some(list) => parse_cpu_list(list, &allowed)?,
        None => Vec::new(),
    };
    Ok(Config {
        program,
        repeat: a.repeat.unwrap_or(if a.opts.quick { 3 } else { 10 }),
        warmup: a.warmup,
        cpus,
        output: a.output,
        events: events(&a.events)?,
    })
}

/// `taskset -c`'s list: CPUs and ranges, comma-separated, each in this process's allowed set;
/// an empty piece is refused.
pub fn parse_cpu_list(s: &str, allowed: &[usize]) -> Result<Vec<usize>> {
    crate::machine::affinity::cpus_asked(s, allowed, "--cpu", false)
}

/// The events asked for (perf stat's names), or the default set; `none` alone: no counters.
pub fn events(given: &[String]) -> Result<Vec<&'static str>> {
    use crate::probes::stat::{DEFAULT_HARDWARE, DEFAULT_SOFTWARE};
    if given.is_empty() {
        return Ok(DEFAULT_SOFTWARE
            .iter()
            .chain(DEFAULT_HARDWARE)
            .copied()
            .collect());
    }
    if given.len() == 1 && given[0] == "none" {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for g in given {
        let name = crate::machine::pmu::event_names()
            .find(|n| n == g)
            .ok_or_else(|| {
                Error::usage(format!(
                    "-e: '{}' is not an event oscost counts; use one of: {}",
                    crate::escape::terminal(g),
                    crate::machine::pmu::event_names()
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_taskset_reads_them() {
        let allowed = [0, 1, 2, 3, 6];
        assert_eq!(parse_cpu_list("0", &allowed).unwrap(), [0]);
        assert_eq!(parse_cpu_list("3,0-2", &allowed).unwrap(), [0, 1, 2, 3]);
        assert_eq!(parse_cpu_list("6, 6", &allowed).unwrap(), [6]);
        for bad in ["", "x", "3-1", "0-", "1,,2"] {
            let e = parse_cpu_list(bad, &allowed).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains("--cpu"), "{bad}: {e}");
        }
        let e = parse_cpu_list("4", &allowed).unwrap_err();
        assert!(e.to_string().contains("allowed set (0-3,6)"), "{e}");
    }

    #[test]
    fn events_are_perf_stat_names() {
        let all = events(&[]).unwrap();
        assert!(all.contains(&"cache-misses") && all.contains(&"task-clock"));
        assert!(events(&["none".into()]).unwrap().is_empty());
        let two = events(&["cycles".into(), "instructions".into(), "cycles".into()]).unwrap();
        assert_eq!(two, ["cycles", "instructions"]);
        let e = events(&["cache-miss".into()]).unwrap_err();
        assert!(
            e.to_string().contains("use one of: context-switches"),
            "{e}"
        );
    }
}
