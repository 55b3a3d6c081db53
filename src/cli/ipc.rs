//! `oscost ipc`: the round trip of seven IPC mechanisms × the placement classes this machine
//! has, one representative CPU pair per class (or `--pairs`).

use super::common::MeasureOpts;
use super::execute::{execute, finish};
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::ipc::channel::Mech;
use crate::probes::ipc::classes::{parse_pairs, representatives, Class, Pair};
use crate::probes::ipc::{measure_cell, unsupported};
use crate::units::name::{Named, Word};

#[derive(Debug, clap::Args)]
pub struct IpcArgs {
    /// Mechanisms (comma-separated; default all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub mech: Vec<Mech>,
    /// Placement classes to measure (comma-separated; default every class this machine has).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub class: Vec<Class>,
    /// CPU pairs instead of one representative per class: MEASURING:PARTNER, comma-separated,
    /// e.g. 3:3,3:2 (each pair is labelled with its class).
    #[arg(long, value_delimiter = ',', conflicts_with = "class")]
    pub pairs: Vec<String>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

/// The cells to measure for `mechs` × `pairs`, skipping (with the reason) what cannot run.
pub fn plan_cells(plan: &mut Plan, mechs: &[Mech], pairs: &[Pair]) {
    for &mech in mechs {
        for &pair in pairs {
            let label = format!(
                "ipc.{} {} (CPU {}↔{})",
                mech.name(),
                pair.class.name(),
                pair.a,
                pair.b
            );
            if let Some(why) = unsupported(mech, pair.class) {
                plan.skip(&label, why);
                continue;
            }
            plan.push(PlanItem::new(label, move |ctx| {
                measure_cell(ctx, mech, pair)
            }));
        }
    }
}

/// Placement classes that need two CPUs, skipped with the reason on a one-CPU machine.
pub fn skip_cross_cpu(plan: &mut Plan, what: &str, allowed: &[usize]) {
    if allowed.len() < 2 {
        plan.skip(
            what,
            format!(
                "only one CPU is allowed ({}): cross-CPU placements need two (taskset or a \
                 bigger machine)",
                crate::evidence::placement::format_cpu_list(allowed)
            ),
        );
    }
}

pub fn run(a: IpcArgs) -> Result<i32> {
    a.opts.check_outputs()?;
    let machine = crate::machine::collect();
    let allowed = crate::machine::affinity::allowed_cpus();
    if allowed.is_empty() {
        return Err(Error::env("no CPU is in this process's allowed set"));
    }
    let mechs = if a.mech.is_empty() {
        Mech::ALL.to_vec()
    } else {
        a.mech.clone()
    };
    let mut plan = Plan::default();
    let pairs = if a.pairs.is_empty() {
        let mut reps = representatives(&machine, &allowed);
        if !a.class.is_empty() {
            for c in &a.class {
                if !reps.iter().any(|p| p.class == *c) {
                    plan.skip(
                        &format!("ipc {}", c.name()),
                        format!("this machine has no CPU pair of class {}", c.word()),
                    );
                }
            }
            reps.retain(|p| a.class.contains(&p.class));
        }
        reps
    } else {
        parse_pairs(&machine, &a.pairs, &allowed, "--pairs")?
    };
    if a.pairs.is_empty() && (a.class.is_empty() || a.class.iter().any(|c| *c != Class::SameCpu)) {
        skip_cross_cpu(&mut plan, "ipc cross-CPU placements", &allowed);
    }
    plan_cells(&mut plan, &mechs, &pairs);
    let run = execute(plan, &a.opts)?;
    finish(&run, &a.opts)
}

/// The default suite's cross-core contrast: a pipe round trip (blocking) and a spin-flag round
/// trip (polling) on the nearest pair of different CPUs, skipped with the reason on one CPU.
pub fn plan_suite(plan: &mut Plan) {
    let allowed = crate::machine::affinity::allowed_cpus();
    if allowed.len() < 2 {
        skip_cross_cpu(plan, "ipc.pipe / ipc.spin cross-CPU", &allowed);
        return;
    }
    let machine = crate::machine::for_planning();
    let nearest = representatives(&machine, &allowed)
        .into_iter()
        .find(|p| p.class != Class::SameCpu);
    if let Some(pair) = nearest {
        plan_cells(plan, &[Mech::Pipe, Mech::Spin], &[pair]);
    }
}
