//! `oscost mem latency`: the pointer-chase curve (lmbench lat_mem_rd) with cache sizes and
//! knees.

use super::common::{pick_cpu, MeasureOpts};
use super::execute::{execute, finish_with, Extras};
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::mem::latency::{chase_sampling, measure_point, size_grid, Order, Point};
use crate::probes::scratch::{check_memory, Keep, MemRoom};
use crate::probes::workset::Pages;
use crate::report::family::{Ask, Family};
use crate::report::memlat::MemLatency;
use crate::units::name::Named;
use crate::units::size::{fmt_size, parse_size};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct MemCommand {
    #[command(subcommand)]
    pub sub: MemSub,
}

#[derive(Debug, clap::Subcommand)]
pub enum MemSub {
    /// ns per dependent load from 4 KB to --max: the lat_mem_rd curve.
    Latency(LatencyArgs),
}

#[derive(Debug, clap::Args)]
pub struct LatencyArgs {
    /// Smallest buffer.
    #[arg(long, value_parser = parse_size, default_value = "4k")]
    pub min: u64,
    /// Largest buffer.
    #[arg(long, value_parser = parse_size, default_value = "64m")]
    pub max: u64,
    /// Bytes between chased slots (comma-separated; multiples of 8).
    #[arg(long, value_delimiter = ',', value_parser = parse_size, default_values = ["64"])]
    pub strides: Vec<u64>,
    /// Chase orders: random (a random cycle, the full latency) and/or strided (a forward
    /// walk, lmbench lat_mem_rd's default, which prefetchers can follow).
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["random"])]
    pub order: Vec<Order>,
    /// Page modes: 4k (MADV_NOHUGEPAGE) and/or thp (MADV_HUGEPAGE).
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["4k", "thp"])]
    pub pages: Vec<Pages>,
    /// CPU to pin to (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Write an SVG plot of ns per load against buffer size.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

pub fn run(c: MemCommand) -> Result<i32> {
    match c.sub {
        MemSub::Latency(a) => latency(a),
    }
}

fn latency(mut a: LatencyArgs) -> Result<i32> {
    super::common::dedup(&mut a.strides);
    super::common::dedup(&mut a.pages);
    a.opts
        .check_outputs_and(&super::outputs::given(&[&a.svg]), &[])?;
    if a.min == 0 || a.max == 0 {
        return Err(Error::usage("--min and --max must be above zero"));
    }
    if a.min > a.max {
        return Err(Error::usage(format!(
            "--min {} is larger than --max {}",
            fmt_size(a.min),
            fmt_size(a.max)
        )));
    }
    for &s in &a.strides {
        if s < 8 || !s.is_multiple_of(8) || s * 2 > a.max {
            return Err(Error::usage(format!(
                "--strides {s}: use multiples of 8 bytes no larger than half of --max"
            )));
        }
    }
    check_memory(
        &format!("a {} buffer", fmt_size(a.max)),
        a.max,
        &MemRoom::read()?,
        Keep::Half,
    )?;
    let cpu = pick_cpu(a.cpu)?;
    let machine = crate::machine::collect();
    let caches = machine.data_cache_sizes(cpu);
    let mut plan = Plan::default();
    let mut orders = a.order.clone();
    orders.dedup();
    for &order in &orders {
        for &pages in &a.pages {
            for &stride in &a.strides {
                for size in size_grid(a.min, a.max) {
                    if size < 2 * stride {
                        continue;
                    }
                    let p = Point {
                        size,
                        stride: stride as usize,
                        pages,
                        cpu,
                        order,
                    };
                    let c = caches.clone();
                    plan.push(
                        PlanItem::new(
                            format!(
                                "mem.latency {} {} {} stride {stride}",
                                order.name(),
                                pages.name(),
                                fmt_size(size)
                            ),
                            move |ctx| measure_point(ctx, p, &c),
                        )
                        .with_sampling(chase_sampling(&a.opts.sampling())),
                    );
                }
            }
        }
    }
    let run = execute(plan, &a.opts)?;
    let ask = Ask {
        caches,
        figures: a.svg.is_some(),
        verbose: a.opts.verbose || a.opts.explain,
        ..Ask::default()
    };
    let shown = MemLatency.shown(&run, &ask)?;
    finish_with(&run, &a.opts, Extras::one_figure(shown, a.svg.as_deref()))
}
