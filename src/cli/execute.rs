//! Runs a plan: calibrates the clock, collects machine facts, runs each planned measurement
//! with a progress bar on a terminal, and assembles the Run. Ctrl-C stops at the next sample
//! boundary; partners are reaped by their guards and nothing partial is written.

use super::common::MeasureOpts;
use crate::engine::measure::Context;
use crate::error::{Error, Result};
use crate::model::{Measurement, Run, Skipped, SCHEMA_VERSION};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A deferred measurement (or an interleaved group of them): runs once, given the engine
/// context.
pub type Job = Box<dyn FnOnce(&Context) -> Result<Vec<Measurement>>>;

/// One planned measurement, or a group whose variants must be interleaved with each other.
pub struct PlanItem {
    pub label: String,
    pub run: Job,
}

impl PlanItem {
    pub fn new(
        label: impl Into<String>,
        run: impl FnOnce(&Context) -> Result<Measurement> + 'static,
    ) -> Self {
        PlanItem {
            label: label.into(),
            run: Box::new(move |ctx| run(ctx).map(|m| vec![m])),
        }
    }

    /// A group of measurements taken together (e.g. lab variants interleaved rep by rep).
    pub fn group(
        label: impl Into<String>,
        run: impl FnOnce(&Context) -> Result<Vec<Measurement>> + 'static,
    ) -> Self {
        PlanItem {
            label: label.into(),
            run: Box::new(run),
        }
    }
}

/// A plan: what to measure, and what was known up front to be impossible here.
#[derive(Default)]
pub struct Plan {
    pub items: Vec<PlanItem>,
    pub skipped: Vec<Skipped>,
}

impl Plan {
    pub fn push(&mut self, item: PlanItem) {
        self.items.push(item);
    }
    pub fn skip(&mut self, probe: &str, reason: impl Into<String>) {
        self.skipped.push(Skipped {
            probe: probe.into(),
            reason: reason.into(),
        });
    }
}

/// Execute a plan and return the complete Run (or Interrupted).
pub fn execute(plan: Plan, opts: &MeasureOpts) -> Result<Run> {
    // Malformed or repeated labels are refused before anything is measured.
    super::common::labels(&opts.labels, None)?;
    crate::engine::interrupt::install();
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let sampling = opts.sampling();
    let per_item_s = (sampling.budget_ns as f64 + sampling.warmup_ns as f64) / 1e9 + 0.1;
    let n = plan.items.len();
    let show = !opts.quiet && std::io::stderr().is_terminal();
    if !opts.quiet {
        eprintln!(
            "oscost: {n} measurements, about {:.0} s (at most {:.1} s each)",
            (n as f64 * per_item_s).ceil(),
            per_item_s
        );
    }
    let machine = crate::machine::collect();
    let ctx = Context::new(sampling);

    let bar = ProgressBar::with_draw_target(
        Some(n as u64),
        if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} (ETA {eta})")
            .expect("static template is valid"),
    );
    let mut measurements = Vec::with_capacity(n);
    let mut skipped = plan.skipped;
    for item in plan.items {
        bar.set_message(item.label.clone());
        match (item.run)(&ctx) {
            Ok(ms) => measurements.extend(ms),
            Err(Error::Interrupted) => {
                bar.abandon_with_message("interrupted");
                return Err(Error::Interrupted);
            }
            Err(Error::Environment(reason)) => skipped.push(Skipped {
                probe: item.label,
                reason,
            }),
            Err(e) => return Err(e),
        }
        crate::engine::interrupt::check()?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let labels = super::common::labels(&opts.labels, machine.hostname.as_deref())?;
    let mut run = Run {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        command: std::env::args().collect(),
        machine,
        clock: Some(ctx.clock.clone()),
        measurements,
        skipped,
        complete: true,
        labels,
        run_id: None,
    };
    run.run_id = Some(crate::store::import::derive_uid(&run));
    Ok(run)
}

/// A run that measured nothing because every request was refused (or impossible here) is
/// an error (exit 2) that names why, never a silent success.
pub fn nothing_refused_only(run: &Run) -> Result<()> {
    if !run.measurements.is_empty() || run.skipped.is_empty() {
        return Ok(());
    }
    let why: Vec<String> = run
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.probe, s.reason))
        .collect();
    Err(Error::usage(format!(
        "nothing was measured: {}",
        why.join("; ")
    )))
}

/// Print the table, write the requested files, and choose the exit code.
pub fn finish(run: &Run, opts: &MeasureOpts) -> Result<i32> {
    nothing_refused_only(run)?;
    let term = crate::report::term::Term::stdout();
    print!("{}", crate::report::table::preamble(run, &term));
    print!("{}", crate::report::table::render_for(run, &term));
    if opts.explain {
        println!();
        print!("{}", crate::report::table::definitions(run));
    }
    if let Some(p) = &opts.json {
        crate::report::export::write_atomic(p, crate::report::export::to_json(run).as_bytes())?;
    }
    if let Some(p) = &opts.csv {
        crate::report::export::write_atomic(p, crate::report::export::to_csv(run)?.as_bytes())?;
    }
    if let Some(p) = &opts.html {
        crate::report::export::write_atomic(
            p,
            crate::report::html::render(std::slice::from_ref(run)).as_bytes(),
        )?;
    }
    // Saved last: a history problem (locked, read-only) must not cost the files above.
    // With the default database, a history problem is a warning (the results are complete
    // and written); with an explicit --db the user asked for it, so it is an error.
    if !opts.no_save && run.complete {
        match opts.db.open().and_then(|mut store| {
            let id = store.save(run, None)?;
            Ok((id, store.path().to_path_buf()))
        }) {
            Ok((id, path)) => {
                if !opts.quiet {
                    eprintln!("oscost: saved as run {id} in {}", path.display());
                }
            }
            Err(e) if opts.db.db.is_none() => {
                eprintln!("oscost: warning: not saved to history: {e} (results above are complete; use --db PATH or --no-save)");
            }
            Err(e) => return Err(e),
        }
    }
    let invalid = run.measurements.iter().filter(|m| !m.valid).count();
    if invalid > 0 && !opts.quiet {
        eprintln!("oscost: {invalid} measurement(s) invalid: see the reasons under them");
    }
    Ok(if opts.strict && invalid > 0 { 1 } else { 0 })
}
