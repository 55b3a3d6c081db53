//! `oscost noise`: one busy reader per CPU for a window; per CPU the share lost, the gaps and,
//! with permission to trace, their causes. A CPU list that names an offline CPU or one this
//! process may not use is refused before anything runs.

use super::common::MeasureOpts;
use super::execute::{execute, finish_after, Extras};
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::noise::window::Asked;
use crate::report::family::{Ask, Family};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct NoiseArgs {
    /// CPUs to measure, e.g. 0,2-3 (default: every CPU this process may use).
    #[arg(long)]
    pub cpus: Option<String>,
    /// How long each reader reads (default 10s; --quick 2s).
    #[arg(long, value_parser = super::common::parse_duration)]
    pub duration: Option<Duration>,
    /// A gap is a step between two clock reads longer than NS nanoseconds (default: 10 times
    /// the reader's median step, calibrated on each CPU and printed).
    #[arg(long, value_name = "NS", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub threshold: Option<u64>,
    /// Gaps and shares only: no tracepoints, so no causes.
    #[arg(long)]
    pub no_trace: bool,
    /// Write the causes' stacked bars and each CPU's gap histogram (SVG), and
    /// noise-causes.csv, into this directory.
    #[arg(long)]
    pub svg_dir: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

/// The CPUs of `--cpus` (or every allowed one), each online and allowed: one line names the
/// first that is not.
pub fn cpus_of(list: Option<&str>, online: &[usize], allowed: &[usize]) -> Result<Vec<usize>> {
    let Some(list) = list else {
        return Ok(allowed
            .iter()
            .copied()
            .filter(|c| online.contains(c))
            .collect());
    };
    let every: Vec<usize> = (0..1 << 16).collect();
    let cpus = crate::probes::ipc::classes::parse_cpu_list(list, &every)?;
    let fmt = crate::evidence::placement::format_cpu_list;
    if let Some(c) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(Error::usage(format!(
            "--cpus: CPU {c} is not online (online: {})",
            fmt(online)
        )));
    }
    if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(Error::usage(format!(
            "--cpus: CPU {c} is not in this process's allowed set ({})",
            fmt(allowed)
        )));
    }
    Ok(cpus)
}

pub fn run(a: NoiseArgs) -> Result<i32> {
    if a.opts.budget.is_some() || a.opts.ci.is_some() {
        return Err(Error::usage(
            "noise reads for one window (--duration), not a sampling loop: --budget and --ci \
             do not apply here",
        ));
    }
    a.opts.check_outputs()?;
    if let Some(d) = &a.svg_dir {
        super::outputs::check_svg_dir(d)?;
    }
    let online = crate::machine::parse::parse_cpu_list(
        &std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default(),
    );
    let allowed = crate::machine::affinity::allowed_cpus();
    let online = if online.is_empty() {
        allowed.clone()
    } else {
        online
    };
    let cpus = cpus_of(a.cpus.as_deref(), &online, &allowed)?;
    if cpus.is_empty() {
        return Err(Error::env("no online CPU is in this process's allowed set"));
    }
    let duration = a.duration.unwrap_or(if a.opts.quick {
        Duration::from_secs(2)
    } else {
        Duration::from_secs(10)
    });
    let asked = Asked {
        cpus: cpus.clone(),
        duration_ns: duration.as_nanos() as u64,
        threshold_ns: a.threshold,
        trace: !a.no_trace,
    };
    let given = a.threshold.is_some();
    // Alone on one CPU, the main thread shares it with the reader (and sleeps through the
    // window).
    let one_cpu = allowed.len() == 1;
    let mut plan = Plan::default();
    plan.push(
        PlanItem::group(
            format!(
                "noise on CPU {}",
                crate::evidence::placement::format_cpu_list(&cpus)
            ),
            move |_ctx| crate::probes::noise::measure(&asked, given, one_cpu),
        )
        .once("one window of busy readers")
        .with_estimate(duration + Duration::from_millis(100)),
    );
    let run = execute(plan, &a.opts)?;
    let ask = Ask {
        figures: a.svg_dir.is_some(),
        verbose: a.opts.verbose || a.opts.explain,
        ..Ask::default()
    };
    let shown = crate::report::noise::Noise.shown(&run, &ask)?;
    let files = Extras::in_dir(&shown, a.svg_dir.as_deref());
    finish_after(&run, &a.opts, shown.after, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_and_forbidden_cpus_are_refused_in_one_line() {
        let online = [0, 1, 2];
        let allowed = [0, 1];
        assert_eq!(cpus_of(None, &online, &allowed).unwrap(), vec![0, 1]);
        assert_eq!(cpus_of(Some("1"), &online, &allowed).unwrap(), vec![1]);
        let e = cpus_of(Some("0,5"), &online, &allowed)
            .unwrap_err()
            .to_string();
        assert!(e.contains("CPU 5 is not online (online: 0-2)"), "{e}");
        assert!(!e.contains('\n'));
        let e = cpus_of(Some("2"), &online, &allowed)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("CPU 2 is not in this process's allowed set (0-1)"),
            "{e}"
        );
        assert!(cpus_of(Some("x"), &online, &allowed).is_err());
    }
}
