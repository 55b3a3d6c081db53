//! Runs a plan for a command: calibrates the clock, collects machine facts, says how long
//! it will take, runs the plan through the engine (engine::plan) with a progress bar on a
//! terminal, assembles the Run, and turns it into the command's outputs. Ctrl-C stops at the
//! next sample boundary; partners are reaped by their guards and nothing partial is written.

use super::common::MeasureOpts;
use crate::engine::estimate::{History, PlanEstimate, HISTORY_RUNS};
use crate::engine::eta::Eta;
use crate::engine::measure::Context;
use crate::engine::plan::{take_passes, Plan, Progress};
use crate::error::{Error, Result};
use crate::model::{Run, SCHEMA_VERSION};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

/// The plan's duration estimate: each item's bound (engine::estimate), corrected by this
/// machine's past runs in the history when it exists (read only, never created).
fn estimate_plan(
    plan: &Plan,
    sampling: &crate::engine::sampler::SamplingConfig,
    opts: &MeasureOpts,
    host_key: &str,
) -> PlanEstimate {
    let history = opts
        .db
        .path()
        .ok()
        .and_then(|p| crate::store::elapsed::past_item_times(&p, host_key, 4 * HISTORY_RUNS).ok())
        .map(|runs| History::from_runs(&runs))
        .unwrap_or_default();
    PlanEstimate::new(plan.shapes(sampling), &history)
}

/// The bar's style: item-rounds done of all, the current item, and an ETA from the item
/// estimates (not indicatif's linear extrapolation over items of very different lengths).
fn bar_style(eta: &Arc<Mutex<Eta>>) -> ProgressStyle {
    let eta = Arc::clone(eta);
    // `wide_msg`: a long item label is cut to the terminal's width, so the bar stays one line
    // at 80 columns (a label with "(evidence)" after it reached 83).
    ProgressStyle::with_template("{bar:30} {pos}/{len} {wide_msg} (ETA {item_eta})")
        .expect("static template is valid")
        .with_key(
            "item_eta",
            move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let left = eta
                    .lock()
                    .map(|e| e.remaining_now(std::time::Instant::now()))
                    .unwrap_or(0.0);
                let _ = w.write_str(&crate::engine::eta::format_eta(left));
            },
        )
}

/// The command's bar as the plan's progress.
struct Bar(ProgressBar);

impl Progress for Bar {
    fn call(&self, what: &str) {
        self.0.set_message(what.to_string());
    }
    fn ran(&self) {
        self.0.inc(1);
    }
    fn resize(&self, delta: i64) {
        let len = self.0.length().unwrap_or(0);
        self.0.set_length(len.saturating_add_signed(delta));
    }
    fn interrupted(&self) {
        self.0.abandon_with_message("interrupted");
    }
}

/// Execute a plan and return the complete Run (or Interrupted).
pub fn execute(plan: Plan, opts: &MeasureOpts) -> Result<Run> {
    // Malformed or repeated labels are refused before anything is measured.
    super::common::labels(&opts.labels, None)?;
    crate::engine::interrupt::install();
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let sampling = opts.sampling();
    let show = !opts.quiet && std::io::stderr().is_terminal();
    // The PMU probe opens counters: it runs after the figures' samples (see with_evidence_pass).
    let mut machine = crate::machine::collect_without_pmu();
    let estimate = estimate_plan(&plan, &sampling, opts, &machine.host_key());
    if !opts.quiet {
        eprintln!("oscost: {}", estimate.line());
    }
    let eta = Arc::new(Mutex::new(Eta::new(&estimate, &plan.modes())));
    let ctx = Context::new(sampling);
    let bar = Bar(progress_bar(plan.calls(), show, &eta));
    let mut passes = take_passes(plan, &ctx, &eta, &bar)?;
    crate::machine::add_pmu(&mut machine);
    // The probe opened counters on this task: the kernel's perf hooks linger after them too.
    crate::evidence::perf::note_closed_now();
    let measurements = passes.conclude(&ctx, &bar)?;
    bar.0.finish_and_clear();
    let labels = super::common::labels(&opts.labels, machine.hostname.as_deref())?;
    let mut run = Run {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        command: std::env::args().collect(),
        machine,
        clock: Some(ctx.clock.clone()),
        measurements,
        skipped: std::mem::take(&mut passes.skipped),
        complete: true,
        labels,
        run_id: None,
        item_times: item_times(&estimate, &passes.spent, passes.made_up),
        warnings: Vec::new(),
    };
    run.measurements
        .iter_mut()
        .for_each(crate::model::Measurement::settle_status);
    // The run is named by its content (run_id).
    run.run_id = Some(crate::store::import::derive_uid(&run));
    // The host name, the CPU model (the hypervisor's to choose) and the command line can hold
    // control characters like any run file: made inert before any view, figure or file of
    // the command sees them.
    Ok(crate::input::inert(&run))
}

/// The run's item times: each item's own calls against its model, then the make-up rounds'
/// as their own entry (an item's history is its own rounds' time; the make-up rounds' is what
/// the estimate's make-up share learns from, engine::estimate::PlanEstimate::make_up).
fn item_times(
    estimate: &PlanEstimate,
    spent: &[std::time::Duration],
    made_up: std::time::Duration,
) -> Vec<crate::model::ItemTime> {
    let mut timings = crate::engine::estimate::Timings::default();
    for (e, t) in estimate.items.iter().zip(spent) {
        timings.record(e, *t);
    }
    timings.record(&estimate.make_up, made_up);
    timings.into_vec()
}

/// The bar: item-rounds done of all, drawn on a terminal only.
fn progress_bar(total: u64, show: bool, eta: &Arc<Mutex<Eta>>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(total),
        if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(bar_style(eta));
    // No steady tick: its thread would make every probe run in a process of two threads,
    // and a system call's figure is defined for one (probes::syscall). The bar redraws as
    // rounds finish.
    bar
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

impl Extras {
    /// A family's report ([`Shown`]), its one figure written to `svg` (a command's
    /// `--svg FILE`) when given.
    ///
    /// [`Shown`]: crate::report::family::Shown
    pub fn one_figure(shown: crate::report::family::Shown, svg: Option<&std::path::Path>) -> Self {
        let files = match (svg, shown.figures.into_iter().next()) {
            (Some(p), Some((_, figure))) => vec![(p.to_path_buf(), figure.into_bytes())],
            _ => Vec::new(),
        };
        Extras {
            text: shown.text,
            after: Some(shown.after).filter(|a| !a.is_empty()),
            analysis: shown.analysis,
            files,
        }
    }

    /// A family's figures (`STEM.svg`) and tables (by their names) as files in `dir` (a
    /// command's `--svg-dir`); none without one.
    pub fn in_dir(
        shown: &crate::report::family::Shown,
        dir: Option<&std::path::Path>,
    ) -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let Some(d) = dir else {
            return Vec::new();
        };
        let figures = shown
            .figures
            .iter()
            .map(|(stem, svg)| (d.join(format!("{stem}.svg")), svg.clone().into_bytes()));
        let tables = shown
            .tables
            .iter()
            .map(|(name, text)| (d.join(name), text.clone().into_bytes()));
        figures.chain(tables).collect()
    }
}

/// The run with each value's interval widened by the run-to-run drift the history shows
/// (compare::interval), when there is a history to read: the `--db` or `OSCOST_DB`
/// the user named, or the default one when this run is to be saved there. Read only; a
/// history that does not exist is not created. With `--no-save` and no database named,
/// the run is left as it is.
fn with_history(run: &Run, opts: &MeasureOpts) -> Run {
    let mut run = run.clone();
    if !opts.no_save || opts.db.explicit() {
        let history = super::compare::history_runs(&opts.db, &[]);
        crate::compare::interval::widen_with_history(&mut run, &history);
        crate::engine::canary::judge_run(&mut run, &history);
    }
    run
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
///
/// The run is kept first (the history, or a run file under unsaved/), before anything is
/// printed or written, so nothing that can end the process afterwards (a closed or full
/// standard output, a file size limit) costs the run; then the table, then the files. A
/// failed output is an error of that output only: every other output is still attempted.
pub fn finish_with(run: &Run, opts: &MeasureOpts, extras: Extras) -> Result<i32> {
    nothing_refused_only(run)?;
    let run = &with_history(run, opts);
    let kept = (!opts.no_save && run.complete).then(|| keep(run, opts));
    let table = crate::report::screen::measured(
        run,
        &crate::report::term::Term::stdout(),
        extras.text.as_deref(),
        extras.after.as_deref(),
        crate::report::screen::Detail::asked(opts.verbose, opts.explain),
    );
    let mut failed = Vec::new();
    let closed = match super::pipe::print_out(table.as_bytes()) {
        Ok(()) => false,
        Err(super::pipe::Unprinted::Closed) => true,
        Err(super::pipe::Unprinted::Failed(e)) => {
            failed.push(Error::io("standard output", e));
            false
        }
    };
    let outputs = opts.outputs();
    failed.extend(outputs.write_each(&super::outputs::RunOut {
        run,
        analysis: extras.analysis.as_ref(),
    }));
    failed.extend(outputs.write_late(&extras.files));
    if let Some(e) = kept.and_then(|k| tell_kept(k, opts)) {
        failed.push(e);
    }
    if let Some(line) = invalid_line(run).filter(|_| !opts.quiet) {
        eprintln!("oscost: {line}");
    }
    if closed {
        // Everything is kept and written: end as a closed pipe ends a Unix tool.
        super::pipe::end_closed();
    }
    // Each failure on its line; the last is the command's error (exit 2).
    if let Some(last) = failed.pop() {
        for e in failed {
            eprintln!("oscost: {e}");
        }
        return Err(last);
    }
    let invalid = run.measurements.iter().any(|m| !m.valid);
    Ok(if opts.strict && invalid { 1 } else { 0 })
}

/// "28 of 40 measurements invalid: see the reasons above", or None when none is. It counts
/// measurements, the rows of the views, out of all of them: the plan's line at the start
/// counts items, of which one may give several measurements.
pub fn invalid_line(run: &Run) -> Option<String> {
    let invalid = run.measurements.iter().filter(|m| !m.valid).count();
    let all = run.measurements.len();
    (invalid > 0).then(|| {
        format!(
            "{invalid} of {all} measurement{} invalid: see the reasons above",
            if all == 1 { "" } else { "s" }
        )
    })
}

/// Was `p` just written as a regular file (not a stream such as /dev/null)?
fn written(p: &std::path::Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file())
}

/// Where a run to be saved went.
enum Kept {
    /// No history to save to (no place for the default one), nor a directory to keep it in.
    Nowhere(Error),
    Went {
        saved: crate::store::recovery::Saved,
        db: std::path::PathBuf,
    },
}

/// Saves the run to the history, or (when that fails after measuring) keeps it in a run
/// file under the data directory; says nothing yet ([`tell_kept`] does, after the outputs).
fn keep(run: &Run, opts: &MeasureOpts) -> Kept {
    use crate::store::recovery::{default_keep_dir, save_or_keep, LONG_WAIT};
    let db = match opts.db.path() {
        Ok(db) => db,
        Err(e) => return Kept::Nowhere(e),
    };
    // Kept under the data directory only: never in the current directory, which may be a
    // source tree or anyone's.
    let keep = default_keep_dir();
    let dirs: Vec<&std::path::Path> = keep.iter().map(|p| p.as_path()).collect();
    let waits = (std::time::Duration::from_secs(5), LONG_WAIT);
    Kept::Went {
        saved: save_or_keep(run, &db, &dirs, waits, opts.quiet),
        db,
    }
}

/// Says where the run went. With the default database a run that is not in the history is
/// a warning (the results are complete and kept); with an explicit --db or OSCOST_DB the
/// user asked for it, so it is an error, returned.
fn tell_kept(kept: Kept, opts: &MeasureOpts) -> Option<Error> {
    use crate::store::recovery::Saved;
    let (saved, db) = match kept {
        Kept::Nowhere(e) => {
            eprintln!("oscost: warning: not saved to history: {e}");
            return None;
        }
        Kept::Went { saved, db } => (saved, db),
    };
    let explain = saved.explain().map(|line| match (&saved, &opts.json) {
        // Nowhere to keep it, but the run is in the --json file the user asked for.
        (Saved::Lost { .. }, Some(json)) if written(json) => format!(
            "{line} and the --json file {}; import that with: oscost history import {} --db {}",
            json.display(),
            crate::store::recovery::shell_word(json),
            crate::store::recovery::shell_word(&db)
        ),
        _ => line,
    });
    match (&saved, explain) {
        (Saved::Stored { id, db }, _) => {
            if !opts.quiet {
                eprintln!("oscost: saved as run {id} in {}", db.display());
            }
            None
        }
        (_, Some(line)) if opts.db.explicit() => Some(Error::env(line)),
        (_, line) => {
            eprintln!("oscost: warning: {}", line.unwrap_or_default());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::tests::{job, slowed_in};
    use crate::engine::plan::Plan;
    use clap::Parser;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[derive(Parser)]
    struct Opts {
        #[command(flatten)]
        o: MeasureOpts,
    }

    #[test]
    fn the_end_counts_invalid_measurements_out_of_all_of_them() {
        let mut run =
            crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
                .unwrap();
        for m in &mut run.measurements {
            m.valid = true;
        }
        assert_eq!(invalid_line(&run), None);
        let all = run.measurements.len();
        assert!(all > 2);
        run.measurements[0].valid = false;
        run.measurements[2].valid = false;
        assert_eq!(
            invalid_line(&run).unwrap(),
            format!("2 of {all} measurements invalid: see the reasons above")
        );
        run.measurements.truncate(1);
        assert_eq!(
            invalid_line(&run).unwrap(),
            "1 of 1 measurement invalid: see the reasons above"
        );
    }

    #[test]
    fn rounds_run_in_passes_and_merge_into_one_measurement_each() {
        let opts = Opts::parse_from(["t", "--quick", "--quiet", "--no-save"]).o;
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut plan = Plan::default();
        plan.push(job("a", 100, &log, None));
        plan.push(job(
            "skipped",
            100,
            &log,
            Some((0, Error::env("no such thing"))),
        ));
        plan.push(job("lost", 300, &log, Some((1, Error::env("gone")))));
        plan.push(job("once", 200, &log, None).once("its own loop"));
        let run = execute(plan, &opts).unwrap();
        assert_eq!(
            *log.borrow(),
            [
                ("a", Some(0)),
                ("skipped", Some(0)),
                ("lost", Some(0)),
                ("once", None),
                ("a", Some(1)),
                ("lost", Some(1)),
                ("a", Some(2)),
            ]
        );
        // Skipped in the first pass: skipped with its reason, never re-entered.
        assert_eq!(run.skipped[0].probe, "skipped");
        assert_eq!(run.measurements.len(), 3);
        let a = &run.measurements[0];
        assert_eq!(a.probe, "a");
        let mut tags = a.sample_rounds.clone();
        tags.dedup();
        assert_eq!(tags, [0, 1, 2]);
        assert_eq!(a.value.as_ref().unwrap().median, 100.0);
        assert!(a.valid);
        // A round lost after the first: the rounds taken stand, and it says why.
        let lost = &run.measurements[1];
        assert!(lost.sample_rounds.iter().all(|&r| r == 0));
        assert!(
            lost.warnings
                .iter()
                .any(|w| crate::report::remarks::words(w) == "round 2 of 3 not taken: gone"),
            "{:?}",
            lost.warnings
        );
        // An item that runs once takes its rounds back to back and says why.
        let once = &run.measurements[2];
        let mut tags = once.sample_rounds.clone();
        tags.dedup();
        assert_eq!(tags, [0, 1, 2]);
        assert!(once.notes.iter().any(|n| n.ends_with("its own loop")));
    }

    #[test]
    fn a_round_slowed_through_is_taken_again_after_the_passes() {
        let opts = Opts::parse_from(["t", "--quick", "--quiet", "--no-save"]).o;
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut plan = Plan::default();
        plan.push(slowed_in("slowed", &log, 1, 0.1));
        plan.push(slowed_in("steady", &log, 9, 0.1));
        plan.push(slowed_in("once", &log, 0, 0.1).once("its own loop"));
        let run = execute(plan, &opts).unwrap();
        let calls: Vec<_> = log
            .borrow()
            .iter()
            .filter(|(l, _)| *l == "slowed")
            .cloned()
            .collect();
        assert_eq!(
            calls,
            [
                ("slowed", Some(0)),
                ("slowed", Some(1)),
                ("slowed", Some(2)),
                ("slowed", Some(3))
            ]
        );
        // The make-up round is the last call of the passes; no other item takes one.
        assert_eq!(log.borrow().last(), Some(&("slowed", Some(3))));
        assert_eq!(log.borrow().len(), 8);
        // The figure: rounds 0, 2 and 3 (100 ns); round 1 left out whole.
        let m = &run.measurements[0];
        assert_eq!(m.value.as_ref().unwrap().median, 100.0);
        let mut tags = m.sample_rounds.clone();
        tags.dedup();
        assert_eq!(tags, [0, 1, 2, 3]);
        let kept = crate::engine::canary::figure_view(m);
        let mut tags = kept.sample_rounds.clone();
        tags.dedup();
        assert_eq!(tags, [0, 2, 3]);
        // The make-up round's time is its own entry in the item times, after the items'.
        let labels: Vec<&str> = run.item_times.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "slowed",
                "steady",
                "once",
                crate::engine::estimate::MAKE_UP_LABEL
            ]
        );
    }

    #[test]
    fn an_interrupt_in_a_later_pass_stops_the_run() {
        let opts = Opts::parse_from(["t", "--quick", "--quiet", "--no-save"]).o;
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut plan = Plan::default();
        plan.push(job("a", 100, &log, Some((2, Error::Interrupted))));
        assert!(matches!(execute(plan, &opts), Err(Error::Interrupted)));
    }
}
