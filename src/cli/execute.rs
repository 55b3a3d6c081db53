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
    /// How long this item is expected to take (not its upper bound), when it does not sample
    /// with the command's own budget (its own loop, a working set to fill, a memory hog to
    /// start); None = the model of its kind in engine::estimate.
    pub estimate: Option<std::time::Duration>,
}

impl PlanItem {
    pub fn new(
        label: impl Into<String>,
        run: impl FnOnce(&Context) -> Result<Measurement> + 'static,
    ) -> Self {
        PlanItem {
            label: label.into(),
            run: Box::new(move |ctx| run(ctx).map(|m| vec![m])),
            estimate: None,
        }
    }

    /// This item's own duration estimate (see [`PlanItem::estimate`]).
    pub fn with_estimate(mut self, d: std::time::Duration) -> Self {
        self.estimate = Some(d);
        self
    }

    /// A group of measurements taken together (e.g. lab variants interleaved rep by rep).
    pub fn group(
        label: impl Into<String>,
        run: impl FnOnce(&Context) -> Result<Vec<Measurement>> + 'static,
    ) -> Self {
        PlanItem {
            label: label.into(),
            run: Box::new(run),
            estimate: None,
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

/// The plan's duration estimate: each item's expected time (engine::estimate), corrected by
/// this machine's past runs in the history when it exists (read only, never created).
fn estimate_plan(
    items: &[PlanItem],
    sampling: &crate::engine::sampler::SamplingConfig,
    opts: &MeasureOpts,
    host_key: &str,
) -> crate::engine::estimate::PlanEstimate {
    use crate::engine::estimate::{History, PlanEstimate};
    let history = opts
        .db
        .path()
        .map(|p| History::load(&p, host_key))
        .unwrap_or_default();
    PlanEstimate::new(
        items.iter().map(|i| (i.label.as_str(), i.estimate)),
        sampling,
        &history,
    )
}

/// The bar: items done of all, the current item, and an ETA from the item estimates (not
/// indicatif's linear extrapolation over items of very different lengths).
fn progress_bar(
    n: usize,
    show: bool,
    eta: &std::sync::Arc<std::sync::Mutex<crate::engine::estimate::Eta>>,
) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(n as u64),
        if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    let eta = std::sync::Arc::clone(eta);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} (ETA {item_eta})")
            .expect("static template is valid")
            .with_key(
                "item_eta",
                move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let left = eta
                        .lock()
                        .map(|e| e.remaining_now(std::time::Instant::now()))
                        .unwrap_or(0.0);
                    let _ = w.write_str(&crate::engine::estimate::format_eta(left));
                },
            ),
    );
    if show {
        bar.enable_steady_tick(std::time::Duration::from_millis(500));
    }
    bar
}

/// Execute a plan and return the complete Run (or Interrupted).
pub fn execute(plan: Plan, opts: &MeasureOpts) -> Result<Run> {
    // Malformed or repeated labels are refused before anything is measured.
    super::common::labels(&opts.labels, None)?;
    crate::engine::interrupt::install();
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let sampling = opts.sampling();
    let n = plan.items.len();
    let show = !opts.quiet && std::io::stderr().is_terminal();
    let machine = crate::machine::collect();
    let estimate = estimate_plan(&plan.items, &sampling, opts, &machine.host_key());
    if !opts.quiet {
        eprintln!("oscost: {}", estimate.line());
    }
    let ctx = Context::new(sampling);

    let eta = std::sync::Arc::new(std::sync::Mutex::new(crate::engine::estimate::Eta::new(
        &estimate,
    )));
    let bar = progress_bar(n, show, &eta);
    let mut timings = crate::engine::estimate::Timings::default();
    let mut measurements = Vec::with_capacity(n);
    let mut skipped = plan.skipped;
    for (i, item) in plan.items.into_iter().enumerate() {
        bar.set_message(item.label.clone());
        let t0 = std::time::Instant::now();
        if let Ok(mut e) = eta.lock() {
            e.start(i, t0);
        }
        let result = (item.run)(&ctx);
        let took = t0.elapsed();
        if let Ok(mut e) = eta.lock() {
            e.finish(took.as_secs_f64());
        }
        timings.record(&estimate.items[i], took);
        match result {
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
        item_times: timings.into_vec(),
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

/// What a command adds to the common way out: its own text instead of the standard table
/// (the sweep and memory-latency reports), an `analysis` object added to the run's JSON, and
/// extra files (SVG plots) checked by [`MeasureOpts::check_outputs_and`] before measuring.
#[derive(Default)]
pub struct Extras {
    /// Printed instead of the clock line, machine warnings and table.
    pub text: Option<String>,
    /// Printed after the table (and `--explain`): a command's own detail tables.
    pub after: Option<String>,
    /// Added to the `--json` output as `analysis` (and kept in the saved run's JSON file only).
    pub analysis: Option<serde_json::Value>,
    /// Further files to write, e.g. `--svg`.
    pub files: Vec<(std::path::PathBuf, Vec<u8>)>,
}

/// Print the table, write the requested files, save to history and choose the exit code:
/// the one way out of every measuring command.
pub fn finish(run: &Run, opts: &MeasureOpts) -> Result<i32> {
    finish_with(run, opts, Extras::default())
}

/// [`finish`] with a command's detail tables after the standard table, and its extra files.
pub fn finish_after(
    run: &Run,
    opts: &MeasureOpts,
    after: String,
    files: Vec<(std::path::PathBuf, Vec<u8>)>,
) -> Result<i32> {
    finish_with(
        run,
        opts,
        Extras {
            after: Some(after),
            files,
            ..Extras::default()
        },
    )
}

/// [`finish`] with a command's own text, JSON analysis and extra files.
pub fn finish_with(run: &Run, opts: &MeasureOpts, extras: Extras) -> Result<i32> {
    nothing_refused_only(run)?;
    match extras.text {
        Some(t) => print!("{t}"),
        None => {
            let term = crate::report::term::Term::stdout();
            print!("{}", crate::report::table::preamble(run, &term));
            print!("{}", crate::report::table::render_for(run, &term));
        }
    }
    if opts.explain {
        println!();
        print!("{}", crate::report::table::definitions(run));
    }
    if let Some(t) = &extras.after {
        print!("{t}");
    }
    use crate::report::export::write_atomic;
    if let Some(p) = &opts.json {
        let text = match &extras.analysis {
            None => crate::report::export::to_json(run),
            Some(a) => {
                let mut v = serde_json::to_value(run).expect("a Run serializes");
                v["analysis"] = a.clone();
                serde_json::to_string_pretty(&v).expect("a value serializes")
            }
        };
        write_atomic(p, text.as_bytes())?;
    }
    if let Some(p) = &opts.csv {
        write_atomic(p, crate::report::export::to_csv(run)?.as_bytes())?;
    }
    if let Some(p) = &opts.html {
        write_atomic(
            p,
            crate::report::html::render(std::slice::from_ref(run)).as_bytes(),
        )?;
    }
    for (p, bytes) in &extras.files {
        // An output directory the user named (--svg-dir) is created when missing.
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
        }
        write_atomic(p, bytes)?;
    }
    // Saved last: a history problem (locked, read-only) must not cost the files above.
    // With the default database, a history problem is a warning (the results are complete
    // and written); with an explicit --db or OSCOST_DB the user asked for it, so it is an
    // error.
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
            Err(e) if !opts.db.explicit() => {
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
