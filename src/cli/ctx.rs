//! `oscost ctx` (same-core ping-pong, unchanged), `oscost ctx sweep` (the lat_ctx working-set
//! sweep) and `oscost ctx timeslice` (the indirect cost at the scale of a time slice).

use super::common::{pick_cpu, MeasureOpts};
use super::execute::{execute, finish_with, Extras};
use super::probes::CtxArgs;
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::ctx::ring::{Policy, MAX_MEMBERS};
use crate::probes::ctx::sweep::{evidence_pass, measure_point, Point};
use crate::probes::ctx::Mode;
use crate::probes::scratch::{check_memory, Keep, MemRoom};
use crate::probes::workset::Access;
use crate::report::family::{Ask, Family};
use crate::report::sweep::Sweep;
use crate::units::size::{fmt_size, parse_size};
use std::path::PathBuf;

/// `oscost ctx [--mech ...]`, or one of its subcommands.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CtxCommand {
    #[command(subcommand)]
    pub sub: Option<CtxSub>,
    #[command(flatten)]
    pub args: CtxArgs,
}

#[derive(Debug, clap::Subcommand)]
pub enum CtxSub {
    /// lmbench lat_ctx done right: a ring of N processes passing a token, each walking its
    /// own working set of S bytes; per-switch cost by size, direct vs indirect, cache knees.
    Sweep(SweepArgs),
    /// Two CPU-bound tasks with working sets on one CPU: together vs one after the other,
    /// per time slice.
    Timeslice(super::timeslice::TimesliceArgs),
    /// Why a switch costs what it does: a ladder of same-CPU ping-pongs, each rung adding
    /// one cause (address space, register state, speculation barrier, caches, TLB, another
    /// CPU), checked against all causes at once.
    Anatomy(super::anatomy::AnatomyArgs),
}

/// Output styles of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The table with evidence, knees and cache labels.
    Table,
    /// lat_ctx's lines ("size=0k ovr=..." then "N µs") for old scripts.
    Lmbench,
}

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Working-set sizes per process (comma-separated; 0 = the direct cost).
    #[arg(long, value_delimiter = ',', value_parser = parse_size,
          default_values = ["0", "4k", "16k", "32k", "64k", "128k", "256k", "512k", "1m"])]
    pub sizes: Vec<u64>,
    /// Ring sizes N (comma-separated; each at least 2).
    #[arg(long, value_delimiter = ',', default_values = ["2", "4", "8"])]
    pub procs: Vec<usize>,
    /// Ring members are threads of one process instead of processes (no address-space
    /// switch).
    #[arg(long)]
    pub threads: bool,
    /// Scheduling policy of the ring members (normal: lat_ctx's SCHED_OTHER, where a woken
    /// member may preempt its waker; batch: one voluntary switch per hop).
    #[arg(long, value_enum, default_value = "normal")]
    pub policy: Policy,
    /// How each member touches its working set.
    #[arg(long, value_enum, default_value = "read")]
    pub access: Access,
    /// Bytes between touched words (a multiple of 8; 8 = every word, as lat_ctx; 64 = one
    /// word per cache line).
    #[arg(long, value_parser = parse_size, default_value = "8")]
    pub stride: u64,
    /// The one CPU every member is pinned to (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Output style on stdout.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write an SVG plot of per-switch cost against working-set size.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// A `mem latency --json` result whose knees label this sweep's knees too.
    #[arg(long, value_name = "FILE")]
    pub mem_json: Option<PathBuf>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

pub fn run(c: Box<CtxCommand>) -> Result<i32> {
    let c = *c;
    match c.sub {
        None => super::probes::ctx(c.args),
        Some(CtxSub::Sweep(a)) => sweep(a),
        Some(CtxSub::Timeslice(a)) => super::timeslice::run(a),
        Some(CtxSub::Anatomy(a)) => super::anatomy::run(a),
    }
}

/// Validate the ring sizes against the tool's cap and the process limit.
pub fn check_procs(procs: &[usize], threads: bool) -> Result<()> {
    for &n in procs {
        if !(2..=MAX_MEMBERS).contains(&n) {
            return Err(Error::usage(format!(
                "--procs {n}: a ring needs 2 to {MAX_MEMBERS} members"
            )));
        }
    }
    if !threads {
        let max = procs.iter().copied().max().unwrap_or(0) as u64;
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: valid out-pointer.
        if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) } == 0
            && lim.rlim_cur != libc::RLIM_INFINITY
            && max > lim.rlim_cur / 2
        {
            return Err(Error::usage(format!(
                "--procs {max}: more processes than this user may start (RLIMIT_NPROC {})",
                lim.rlim_cur
            )));
        }
    }
    Ok(())
}

fn check_stride(stride: u64) -> Result<usize> {
    if stride == 0 || !stride.is_multiple_of(8) || stride > 1 << 20 {
        return Err(Error::usage(format!(
            "--stride {stride}: use a multiple of 8 bytes between 8 and 1m"
        )));
    }
    Ok(stride as usize)
}

fn sweep(mut a: SweepArgs) -> Result<i32> {
    super::common::dedup(&mut a.procs);
    use super::outputs::given;
    a.opts
        .check_outputs_and(&given(&[&a.svg]), &given(&[&a.mem_json]))?;
    let mem_knees = match &a.mem_json {
        Some(p) => read_mem_knees(p)?,
        None => Vec::new(),
    };
    let cpu = pick_cpu(a.cpu)?;
    check_procs(&a.procs, a.threads)?;
    let mut sizes = a.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let stride = check_stride(a.stride)?;
    let max_n = a.procs.iter().copied().max().unwrap_or(2) as u64;
    let max_s = a.sizes.iter().copied().max().unwrap_or(0);
    check_memory(
        &format!("a ring of {max_n} × {}", fmt_size(max_s)),
        max_n.saturating_mul(max_s),
        &MemRoom::read()?,
        Keep::Half,
    )?;
    let mode = if a.threads {
        Mode::Thread
    } else {
        Mode::Process
    };
    let machine = crate::machine::for_planning();
    let caches = machine.data_cache_sizes(cpu);
    let mut plan = Plan::default();
    for &n in &a.procs {
        for &s in &sizes {
            let p = Point {
                procs: n,
                size: s,
                stride,
                access: a.access,
                mode,
                cpu,
                policy: a.policy,
            };
            let c = caches.clone();
            plan.push(
                PlanItem::new(format!("ctx.sweep N={n} S={}", fmt_size(s)), move |ctx| {
                    measure_point(ctx, p, &c)
                })
                .hook_free()
                .with_evidence_pass(move |_, m| evidence_pass(p, m)),
            );
        }
    }
    let run = execute(plan, &a.opts)?;
    let ask = Ask {
        caches,
        mem_knees,
        lmbench: a.format == Format::Lmbench,
        figures: a.svg.is_some(),
        verbose: (a.opts.verbose || a.opts.explain) && a.format == Format::Table,
    };
    let shown = Sweep.shown(&run, &ask)?;
    let mut opts = a.opts.clone();
    // The lmbench format is for old scripts: its definitions would break their parsing.
    opts.explain &= a.format == Format::Table;
    opts.verbose &= a.format == Format::Table;
    finish_with(&run, &opts, Extras::one_figure(shown, a.svg.as_deref()))
}

/// The knee positions (last size before each rise, bytes) of a `mem latency --json` file.
pub fn read_mem_knees(p: &std::path::Path) -> Result<Vec<f64>> {
    use crate::input::{read_regular, MAX_RUN_FILE};
    let bytes = read_regular(p, MAX_RUN_FILE, "a run file")?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        Error::usage(format!(
            "{}: not a JSON file from oscost ({e})",
            p.display()
        ))
    })?;
    let curves = v["analysis"]["curves"].as_array().ok_or_else(|| {
        Error::usage(format!(
            "{}: has no memory-latency analysis (write one with `oscost mem latency --json`)",
            p.display()
        ))
    })?;
    let mut knees: Vec<f64> = curves
        .iter()
        .take(1)
        .flat_map(|c| c["knees"].as_array().cloned().unwrap_or_default())
        .filter_map(|k| k["last_below"].as_f64())
        .collect();
    knees.sort_by(f64::total_cmp);
    Ok(knees)
}
