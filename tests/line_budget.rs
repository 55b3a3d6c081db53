//! Quiet by default, complete on request: what `run --quick` and
//! `rpc --quick` print after measuring, rendered from their recorded runs at COLUMNS=80 by
//! the function the commands print with (report::screen::measured), stays within a line
//! budget: one line per probe whose checks pass, warnings once per kind. `--verbose`
//! (implied by `--explain`) prints what the default leaves out.
//!
//! The budgets are for these recordings (9 probes of a quick run; an rpc quick run of two
//! scenarios, every row but one invalid): before this rule they printed 49 and 83 lines;
//! 29 and 55 before the parameters every row shares were printed once above the table, and
//! 29 and 54 since (the budgets are what they print now).
//! The goal on a quiet machine (`run --quick` ≤ 45 lines, `rpc --quick` ≤ 60) is measured
//! there, with the binary.

mod common;

use common::read_recorded_run as read_run;
use oscost::model::Run;
use oscost::report::screen::{self, Detail};
use oscost::report::term::Term;

/// The command's stdout at 80 columns, as `detail` asks.
fn printed(run: &Run, detail: Detail) -> String {
    // The families lay their tables out for stdout: COLUMNS is what they read.
    std::env::set_var("COLUMNS", "80");
    std::env::set_var("NO_COLOR", "1");
    screen::measured(run, &Term::plain(80), None, None, detail)
}

const QUIET: Detail = Detail {
    verbose: false,
    explain: false,
};
const VERBOSE: Detail = Detail {
    verbose: true,
    explain: false,
};

#[test]
fn the_recorded_quick_run_and_rpc_run_stay_within_their_budget() {
    for (name, budget) in [("run-quick", 29), ("rpc", 54), ("run-quick-slowed", 39)] {
        let text = printed(&read_run(name), QUIET);
        let n = text.lines().count();
        assert!(n <= budget, "{name}: {n} lines, budget {budget}:\n{text}");
        // What the default leaves out is there on request.
        let all = printed(&read_run(name), VERBOSE);
        assert!(all.lines().count() > n, "{name}: --verbose adds nothing");
    }
}

/// A quick run during which the host slowed the core for a few samples of five probes
/// (recorded on the 2-vCPU VM; 51 lines before the canary's warnings had a brief form, 39
/// after): their warnings, each in its numbers and units, share one line by default, and
/// each is there in full with --verbose.
#[test]
fn core_slowed_warnings_of_several_probes_share_one_line() {
    let run = read_run("run-quick-slowed");
    let slowed: Vec<String> = run
        .measurements
        .iter()
        .flat_map(|m| &m.warnings)
        .map(oscost::report::remarks::words)
        .filter(|w| w.starts_with("core slowed for "))
        .collect();
    assert_eq!(slowed.len(), 5, "{slowed:?}");
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let quiet = flat(&printed(&run, QUIET));
    assert_eq!(quiet.matches("core slowed for").count(), 0, "{quiet}");
    assert_eq!(quiet.matches("core slowed during").count(), 1, "{quiet}");
    assert!(
        quiet.contains("core slowed during some samples; figures from the fast ones (in 5: "),
        "{quiet}"
    );
    let verbose = flat(&printed(&run, VERBOSE));
    for w in slowed {
        assert!(verbose.contains(&flat(&w)), "{w}");
    }
}

/// What `fault --quick` prints after measuring (the common table, then the family's: the
/// fault table, why a case has no ns/fault, the evicted file's cost per major fault) stays
/// within its budget: each case's 12-line `/usr/bin/time -v` view is printed with --verbose
/// only (the recording printed 171 lines at 80 columns with them by default, 64 without;
/// 44 since the parameters every case shares, cpus=1 pages=1024 size_bytes=4194304 …, are
/// printed once above the table instead of wrapping each case's cell over 3–6 lines).
#[test]
fn the_recorded_fault_run_stays_within_its_budget() {
    use oscost::report::family::{Ask, Family};
    let run = read_run("fault");
    std::env::set_var("COLUMNS", "80");
    let shown = |detail: Detail| {
        let ask = Ask {
            verbose: detail.verbose,
            ..Ask::default()
        };
        let after = oscost::report::fault::Fault
            .shown(&run, &ask)
            .unwrap()
            .after;
        screen::measured(&run, &Term::plain(80), None, Some(&after), detail)
    };
    let quiet = shown(QUIET);
    let n = quiet.lines().count();
    assert!(n <= 44, "fault: {n} lines, budget 44:\n{quiet}");
    assert_eq!(quiet.matches("size_bytes=4194304").count(), 1, "{quiet}");
    assert!(!quiet.contains("Maximum resident set size"), "{quiet}");
    assert!(
        quiet.contains("/usr/bin/time -v shows it: --verbose"),
        "{quiet}"
    );
    let verbose = shown(VERBOSE);
    let cases = run.measurements.len();
    assert_eq!(
        verbose
            .matches("Maximum resident set size (kbytes)")
            .count(),
        cases,
        "{verbose}"
    );
    assert!(quiet.lines().all(|l| l.chars().count() <= 80), "{quiet}");
}

/// A row whose checks all pass is one line (its label may wrap inside its cell): its
/// evidence is the checks cell, "✓ 5/5"; the raw figure and the rusage evidence that do
/// not fit beside it are printed with --verbose only.
#[test]
fn a_row_whose_checks_pass_is_one_line_by_default() {
    for name in ["run-quick", "run-quick-a", "rpc", "ipc"] {
        let run = read_run(name);
        let text = printed(&run, QUIET);
        assert!(!text.contains("\n    raw "), "{name}:\n{text}");
        let verbose = printed(&run, VERBOSE);
        // A raw reading that is the figure itself (no baseline) is not printed again.
        let shown = run
            .measurements
            .iter()
            .filter(|m| oscost::report::shown_alone(m) && !oscost::report::raw_is_the_figure(m))
            .count();
        assert_eq!(
            verbose.matches("\n    raw ").count(),
            shown,
            "{name}: every row's raw figure with --verbose:\n{verbose}"
        );
    }
}

/// --verbose is complete: every failed check's reading in every round, every skipped
/// probe's reason, and the machine's warnings in full; the default says each is there.
#[test]
fn verbose_prints_every_reading_reason_and_warning_the_default_folds() {
    let run = read_run("run-quick-a");
    let quiet = printed(&run, QUIET);
    let verbose = printed(&run, VERBOSE);
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let (quiet, verbose) = (flat(&quiet), flat(&verbose));
    for m in &run.measurements {
        for c in m.failed_checks() {
            assert!(
                verbose.contains(&flat(&oscost::report::checks::observed(c))),
                "{}",
                oscost::report::checks::observed(c)
            );
        }
    }
    let multi_round = run
        .measurements
        .iter()
        .flat_map(|m| m.failed_checks())
        .find(|c| oscost::report::checks::observed(c).contains("; round "))
        .expect("the recording has a check failed in two rounds");
    assert!(!quiet.contains(&flat(&oscost::report::checks::observed(multi_round))));
    assert!(!quiet.contains("observed round "), "{quiet}");
    assert!(!run.skipped.is_empty());
    for s in &run.skipped {
        assert!(verbose.contains(&flat(&s.reason)), "{}", s.reason);
        assert!(!quiet.contains(&flat(&s.reason)), "{}", s.reason);
        assert!(quiet.contains(&format!("skipped {} (why: --verbose)", s.probe)));
    }
    for w in run.machine.warnings() {
        assert!(verbose.contains(&flat(&w)), "{w}");
    }
    assert!(quiet.contains("(in full with --verbose)"), "{quiet}");
    // Warnings of one kind whose numbers (and units) differ too much to fold are one line
    // with the probes they concern, each in full with --verbose.
    assert_eq!(quiet.matches("samples are bimodal").count(), 1, "{quiet}");
    assert!(quiet.contains("samples are bimodal (in 4: "), "{quiet}");
    assert_eq!(
        verbose.matches("samples are bimodal").count(),
        4,
        "{verbose}"
    );
}

/// A loaded machine fails the same checks in most rows: each failed check is one line
/// after the table with the range of its readings and the rows it concerns, never a
/// reading under every row (run-quick-a: 11 rows failed "CPU held by participants" and
/// printed 22 lines of it; a quick run on a busy machine printed 91 lines, 51 since). A
/// check failed by one row names the row and keeps its whole reading (why it is invalid is
/// never cut to a name). With --verbose each row's readings are under it, every round.
#[test]
fn a_failed_check_is_one_line_per_kind_with_the_range_of_its_readings() {
    let run = read_run("run-quick-a");
    let quiet = printed(&run, QUIET);
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let failing = |name: &str| {
        run.measurements
            .iter()
            .filter(|m| {
                m.failed_checks()
                    .any(|c| oscost::report::checks::name(c) == name)
            })
            .count()
    };
    assert_eq!(failing("CPU held by participants"), 11);
    assert_eq!(
        quiet.matches("CPU held by participants").count(),
        1,
        "{quiet}"
    );
    assert!(
        flat(&quiet).contains(
            "✗ CPU held by participants: expected ≥ 95% of wall time, observed 40.0–91.1% \
             (run-queue wait 0.0–38.1% per participant) (in 11: "
        ),
        "{quiet}"
    );
    assert!(
        !quiet.contains("\n    ✗ "),
        "no reading under a row:\n{quiet}"
    );
    let quick_b = flat(&printed(&read_run("run-quick-b"), QUIET));
    assert!(
        quick_b.contains("✗ call.function cpus=1: kernel share of CPU time: expected")
            && quick_b.contains("use a longer --budget"),
        "{quick_b}"
    );
    let verbose = printed(&run, VERBOSE);
    assert_eq!(
        verbose.matches("\n    ✗ CPU held by participants").count(),
        11,
        "{verbose}"
    );
}

/// `--explain` prints everything `--verbose` does, and the definitions.
#[test]
fn explain_implies_verbose() {
    assert_eq!(
        Detail::asked(false, true),
        Detail {
            verbose: true,
            explain: true
        }
    );
    assert_eq!(Detail::asked(false, false), QUIET);
    assert_eq!(Detail::asked(true, false), VERBOSE);
}

/// A command with its own report honours --verbose too: the sweep prints each size's
/// warnings under its curve with it, and each kind once (with the sizes it concerns)
/// without; the skipped probes and machine warnings framing it follow the same rule.
#[test]
fn the_sweep_report_honours_verbose() {
    use oscost::report::family::Ask;
    let run = read_run("sweep");
    std::env::set_var("COLUMNS", "80");
    let shown = |verbose: bool| {
        let ask = Ask {
            caches: run.machine.data_cache_sizes(1),
            verbose,
            ..Ask::default()
        };
        let family = oscost::report::family_of("ctx.sweep").unwrap();
        family.shown(&run, &ask).unwrap().text.unwrap()
    };
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let (quiet, verbose) = (flat(&shown(false)), flat(&shown(true)));
    assert_eq!(quiet.matches("samples are outliers").count(), 1, "{quiet}");
    assert!(
        quiet.contains("flagged, kept (in 3: 0, 16k, 256k)"),
        "{quiet}"
    );
    assert_eq!(
        verbose.matches("samples are outliers").count(),
        3,
        "{verbose}"
    );
    assert!(
        verbose.contains("16k: ! 1 of 12 samples are outliers"),
        "{verbose}"
    );
    assert!(quiet.contains("(in full with --verbose)"), "{quiet}");
    for w in run.machine.warnings() {
        assert!(verbose.contains(&flat(&w)), "{w}");
    }
}

/// The ipc matrix under the table says nothing new when it has one placement class (its
/// column is the table's rows again, as in `run`): printed with --verbose only; with
/// several classes it is the summary and stays.
#[test]
fn a_one_column_ipc_matrix_is_not_printed_twice_by_default() {
    let quick = read_run("run-quick-a");
    assert!(!printed(&quick, QUIET).contains("ipc: median round trip"));
    assert!(printed(&quick, VERBOSE).contains("ipc: median round trip"));
    let ipc = read_run("ipc");
    let classes: std::collections::BTreeSet<String> = ipc
        .measurements
        .iter()
        .map(|m| m.param_text("class"))
        .collect();
    assert!(classes.len() > 1, "{classes:?}");
    assert!(printed(&ipc, QUIET).contains("ipc: median round trip"));
}

/// An rpc quick run, recorded on the quiet 2-vCPU VM, whose corrected breakdown failed its
/// check in each of the three traced scenarios (`rpc --quick` printed 71 lines at 80
/// columns, 6 of them the three failures, one each): a failed check of the corrected
/// breakdown is one line per kind naming the scenarios it concerns, each scenario's reading
/// in full with --verbose. It printed 68 lines rendered here before (one line or two per
/// failed case, and the untraced "unstable (±29 µs/RPC)" cell split the summary table in
/// two), 58 since, 57 once a part no scenario has (reply IPI, which that CPU could not
/// record) is no longer a row of dashes (the budget; the goal is 60).
#[test]
fn failed_corrected_checks_share_one_line_per_kind() {
    let run = read_run("rpc-quick");
    let failed: Vec<String> = run
        .measurements
        .iter()
        .filter(|m| m.probe == "rpc.corrected")
        .flat_map(|m| m.failed_checks())
        .map(oscost::report::checks::observed)
        .collect();
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let readings: std::collections::BTreeSet<String> = failed.iter().map(|o| flat(o)).collect();
    assert_eq!(readings.len(), 3, "{readings:?}");
    let text = printed(&run, QUIET);
    let n = text.lines().count();
    assert!(n <= 57, "rpc-quick: {n} lines, budget 57:\n{text}");
    let quiet = flat(&text);
    assert_eq!(
        quiet
            .matches("corrected parts vs untraced rpc.total")
            .count(),
        1,
        "{quiet}"
    );
    assert!(
        quiet.contains(
            "✗ corrected parts vs untraced rpc.total (in 3: local, r-excl, r-shared; each with \
             --verbose)"
        ),
        "{quiet}"
    );
    let verbose = flat(&printed(&run, VERBOSE));
    for (case, reading) in [
        ("local pipe", "7.31 µs vs 8.68 µs"),
        ("r-excl pipe", "68.6 µs vs 47.6 µs"),
        ("r-shared pipe", "72.5 µs vs 51.8 µs"),
    ] {
        assert!(
            verbose.contains(&format!(
                "✗ {case} corrected: corrected parts vs untraced rpc.total: {reading}"
            )),
            "{case}: {verbose}"
        );
    }
    for r in &readings {
        assert!(verbose.contains(r.as_str()), "{r}");
    }
}

/// The same recording judged by today's rule (its sum checks taken out and judged again):
/// in the remote scenarios the untraced RPC itself moved between rpc.total and the traced
/// session (probes::rpc::correct::sum_check), which the default output says once, for both;
/// local's failure is the correction's and is its own line. 59 lines (the budget; the goal
/// is 60).
#[test]
fn a_moved_untraced_rpc_is_said_once_for_every_scenario_it_concerns() {
    use oscost::probes::rpc::correct::{judge_run, PROBE, SUM_CHECK, SUM_CHECK_MOVED};
    let mut run = read_run("rpc-quick");
    for m in run.measurements.iter_mut().filter(|m| m.is(PROBE)) {
        m.checks
            .retain(|c| !oscost::report::checks::name(c).starts_with(SUM_CHECK));
    }
    judge_run(&mut run);
    let text = printed(&run, QUIET);
    let n = text.lines().count();
    assert!(
        n <= 59,
        "rpc-quick judged again: {n} lines, budget 59:\n{text}"
    );
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let quiet = flat(&text);
    assert_eq!(quiet.matches("moved between").count(), 1, "{quiet}");
    assert!(
        quiet.contains(&format!(
            "✗ {SUM_CHECK_MOVED} (in 2: r-excl, r-shared; each with --verbose)"
        )),
        "{quiet}"
    );
    assert!(
        quiet.contains("✗ local pipe corrected: corrected parts vs untraced rpc.total: 7.31 µs"),
        "{quiet}"
    );
    let verbose = flat(&printed(&run, VERBOSE));
    assert_eq!(
        verbose
            .matches("the machine's state changed between the two measurements")
            .count(),
        2,
        "{verbose}"
    );
}

/// mem latency on a busy machine: every point failed the same check, and each point's
/// readings of every round under it made `mem latency --quick` 416 lines at 80 columns. By
/// default the curve's failed checks follow its table once per kind, with the sizes they
/// concern and the range of their readings; with --verbose each is under its point.
#[test]
fn a_curve_whose_points_fail_one_check_says_it_once() {
    use oscost::model::{Check, Status};
    let mut run = read_run("memlat");
    let mut failed = 0;
    for (i, m) in run.measurements.iter_mut().enumerate().take(3) {
        m.status = Status::Invalid;
        m.checks.push(Check::text(
            "CPU held by participants",
            "≥ 95% of wall time",
            format!("round 1: {}.0%; round 2: 4{i}.5%", 30 + i),
            false,
        ));
        failed += 1;
    }
    assert_eq!(failed, 3);
    std::env::set_var("COLUMNS", "80");
    let caches = run.machine.data_cache_sizes(1);
    let a = oscost::analysis::memlat::analyze(&run, &caches);
    let quiet = oscost::report::memlat::render(&a, &run, false);
    assert_eq!(
        quiet.matches("CPU held by participants").count(),
        1,
        "{quiet}"
    );
    let flat = quiet.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "✗ CPU held by participants: expected ≥ 95% of wall time, observed 30.0–42.5% (in 3: "
        ),
        "{quiet}"
    );
    assert!(!quiet.contains("round 1"), "{quiet}");
    let verbose = oscost::report::memlat::render(&a, &run, true);
    assert_eq!(
        verbose.matches("    ✗ CPU held by participants").count(),
        3,
        "{verbose}"
    );
    assert!(
        verbose.contains("round 1: 30.0%; round 2: 40.5%"),
        "{verbose}"
    );
}

/// The sweep's legend is one paragraph wrapped to the terminal: broken by hand for 100
/// columns, it was broken again at 80 into ragged halves ("… / N," then "all N" alone).
#[test]
fn the_sweep_legend_wraps_as_one_paragraph_at_80_columns() {
    let run = read_run("sweep");
    std::env::set_var("COLUMNS", "80");
    let a = oscost::analysis::sweep::analyze(
        &run,
        &run.machine.data_cache_sizes(1),
        &[],
        &oscost::report::sweep::invalid,
    );
    let text = oscost::report::sweep::render(&a, &run, false);
    let start = text.find("  lap = ").expect("the legend");
    let legend: Vec<&str> = text[start..]
        .lines()
        .take_while(|l| l.starts_with("  ") && !l.starts_with("   "))
        .collect();
    let end = legend
        .iter()
        .position(|l| l.ends_with("(direct) cost"))
        .unwrap_or_else(|| panic!("{text}"));
    for l in &legend[..end] {
        assert!(
            l.chars().count() > 60 && l.chars().count() <= 80,
            "ragged: {l:?}\n{text}"
        );
    }
}
