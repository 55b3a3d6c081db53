//! `oscost ctx anatomy`: why a context switch costs what it does, each cause a rung of
//! same-CPU ping-pongs measured on this machine (probes::ctx::anatomy), shown as a waterfall.

use super::common::{pick_cpu, MeasureOpts};
use super::execute::{execute, finish_with, Extras};
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::ctx::anatomy::{cannot_apply, measure_rung, Ladder, Rung, PROBE};
use crate::probes::ctx::anatomy_regs::{self as regs, Regs};
use crate::probes::scratch::{check_memory, Keep, MemRoom};
use crate::report::family::{Ask, Family};
use crate::units::size::parse_size;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct AnatomyArgs {
    /// The CPU every same-CPU rung runs on (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// The CPU the partner of the "another CPU" rung sleeps on (default: another allowed
    /// CPU).
    #[arg(long)]
    pub other_cpu: Option<usize>,
    /// Working sets of the cache rungs, per task (comma-separated; default: the L1d and L2
    /// sizes of the CPU). The rung at the TLB walk's own lines is always measured.
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    pub size: Vec<u64>,
    /// Pages of the TLB rung's walk, one line each (default: twice the second-level TLB's
    /// 4 KiB entries from CPUID leaf 0x18, else 4096).
    #[arg(long)]
    pub pages: Option<usize>,
    /// Write the waterfall chart as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

/// The most pages a TLB walk may take (64 Mi lines' worth of mapping would be 256 GiB).
const MAX_PAGES: usize = 1 << 18;

pub fn run(a: AnatomyArgs) -> Result<i32> {
    use super::outputs::given;
    a.opts.check_outputs_and(&given(&[&a.svg]), &[])?;
    let cpu = pick_cpu(a.cpu)?;
    let other = match a.other_cpu {
        Some(o) if o == cpu => {
            return Err(Error::usage(format!(
                "--other-cpu {o}: it must differ from --cpu {cpu}"
            )))
        }
        Some(o) => Some(pick_cpu(Some(o))?),
        None => crate::machine::affinity::allowed_cpus()
            .into_iter()
            .rev()
            .find(|&c| c != cpu),
    };
    let (_, l2_tlb) = regs::tlb_entries();
    let pages = a
        .pages
        .unwrap_or_else(|| l2_tlb.map_or(4096, |e| 2 * e as usize));
    if !(1..=MAX_PAGES).contains(&pages) {
        return Err(Error::usage(format!(
            "--pages {pages}: use 1 to {MAX_PAGES}"
        )));
    }
    let machine = crate::machine::for_planning();
    let caches = machine.data_cache_sizes(cpu);
    let mut sizes: Vec<usize> = if a.size.is_empty() {
        if a.opts.quick {
            Vec::new()
        } else {
            caches
                .iter()
                .filter(|(l, _)| l == "L1d" || l == "L2")
                .map(|(_, b)| *b as usize)
                .collect()
        }
    } else {
        a.size.iter().map(|&s| s as usize).collect()
    };
    if let Some(s) = sizes.iter().find(|&&s| !(64..=1 << 30).contains(&s)) {
        return Err(Error::usage(format!(
            "--size {s}: use 64 bytes to 1g per task"
        )));
    }
    sizes.sort_unstable();
    sizes.dedup();
    let biggest = sizes.iter().copied().max().unwrap_or(0).max(pages * 4160);
    // Two sides of two tasks, each task with its walk (the timer also its hot set).
    check_memory(
        "the anatomy's working sets",
        6 * biggest as u64,
        &MemRoom::read()?,
        Keep::Half,
    )?;
    let xsave = regs::xsave();
    let amx = if xsave.xcr0 & Regs::Amx.components() == Regs::Amx.components() {
        regs::request_amx()
    } else {
        Err("the OS did not enable AMX state (XCR0)".into())
    };
    let mut plan = Plan::default();
    let cannot = cannot_apply(&xsave, &amx, other);
    let ladder = Ladder {
        cpu,
        other,
        regs: Regs::LADDER
            .into_iter()
            .filter(|r| !cannot.iter().any(|(id, _)| *id == Rung::Regs(*r).id()))
            .collect(),
        barrier: !cannot.iter().any(|(id, _)| *id == Rung::Barrier.id()),
        pages,
        xsave,
    };
    for (id, why) in cannot {
        plan.skip(&format!("{PROBE} {id}"), why);
    }
    for rung in ladder.rungs(&sizes) {
        let l = ladder.clone();
        plan.push(PlanItem::new(
            format!("{PROBE} {}", rung.id()),
            move |ctx| measure_rung(ctx, &l, rung),
        ));
    }
    let run = execute(plan, &a.opts)?;
    let ask = Ask {
        caches,
        figures: a.svg.is_some(),
        verbose: a.opts.verbose || a.opts.explain,
        ..Ask::default()
    };
    let shown = crate::report::anatomy::Anatomy.shown(&run, &ask)?;
    finish_with(&run, &a.opts, Extras::one_figure(shown, a.svg.as_deref()))
}
