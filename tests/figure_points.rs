//! Every figure draws every valid, resolved point it is given or says how many it left out
//! and why: the counts each figure carries (plot::tally) agree with the data marks
//! in its markup and with the statement under it, in the report of every recorded run, and
//! the figure paths that once dropped points silently state them.

use oscost::input::parse_run;
use oscost::model::{Run, Status};
use oscost::units::{Per, Unit};

fn fixture(name: &str) -> Run {
    let path = format!(
        "{}/tests/fixtures/runs/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("fixture readable");
    parse_run(&text, name).expect("fixture parses")
}

/// One figure's counts as its markup carries them.
#[derive(Debug)]
struct Counts {
    given: usize,
    drawn: usize,
    omitted: usize,
    one_mark_each: bool,
    /// Data marks (`class="pt"`) in the figure.
    marks: usize,
    /// The number in its "N points not drawn: reason" line, 0 without one.
    stated: usize,
    title: String,
}

fn attr(head: &str, name: &str) -> Option<String> {
    let key = format!("{name}=\"");
    let from = head.find(&key)? + key.len();
    Some(head[from..].split('"').next()?.to_string())
}

/// The counts of every figure in `page` (an SVG or an HTML report); panics on a figure
/// that does not count its points.
fn figures(page: &str) -> Vec<Counts> {
    page.split("<svg ")
        .skip(1)
        .map(|fig| {
            let fig = &fig[..fig.find("</svg>").expect("closed svg")];
            let head = &fig[..fig.find('>').expect("svg tag")];
            let title = fig
                .split("<text")
                .nth(1)
                .and_then(|t| t.split('>').nth(1))
                .map(|t| t.split('<').next().unwrap_or("").trim().to_string())
                .unwrap_or_default();
            let n = |k: &str| -> usize {
                attr(head, &format!("data-points-{k}"))
                    .unwrap_or_else(|| panic!("figure {title:?} does not count its points"))
                    .parse()
                    .expect("a count")
            };
            let stated = fig
                .split("<text")
                .filter_map(|t| t.split('>').nth(1))
                .filter_map(|t| {
                    let t = t.split('<').next()?.trim();
                    let (n, rest) = t.split_once(' ')?;
                    rest.split_once(" not drawn: ")?;
                    n.parse::<usize>().ok()
                })
                .sum();
            Counts {
                given: n("given"),
                drawn: n("drawn"),
                omitted: n("omitted"),
                one_mark_each: attr(head, "data-points-marks").as_deref() == Some("each"),
                marks: fig.matches("class=\"pt\"").count(),
                stated,
                title,
            }
        })
        .collect()
}

/// The rule every figure keeps: drawn = given − omitted, as many marks as points drawn,
/// and every omission stated.
fn assert_accounted(page: &str) -> Vec<Counts> {
    let figs = figures(page);
    for f in &figs {
        assert_eq!(f.drawn + f.omitted, f.given, "{}: {f:?}", f.title);
        if f.one_mark_each {
            assert_eq!(f.marks, f.drawn, "{}: {f:?}", f.title);
        } else {
            assert!(f.drawn == 0 || f.marks > 0, "{}: {f:?}", f.title);
        }
        assert_eq!(f.stated, f.omitted, "{}: {f:?}", f.title);
    }
    figs
}

#[test]
fn every_figure_of_every_recorded_report_accounts_for_its_points() {
    for name in [
        "c2c",
        "fault",
        "noise",
        "ipc",
        "memlat",
        "mmap",
        "rpc",
        "sweep",
        "timeslice",
        "run-quick-a",
    ] {
        let html = oscost::report::html::render(&[fixture(name)]);
        let figs = assert_accounted(&html);
        assert!(!figs.is_empty(), "{name}: no figure");
    }
    // Several runs side by side (grouped bars, one series per run).
    let html = oscost::report::html::render(&[fixture("run-quick-a"), fixture("run-quick-b")]);
    assert_accounted(&html);
}

/// Marks `k` of the memory-latency run's points invalid.
fn memlat_with_invalid(k: usize) -> Run {
    let mut run = fixture("memlat");
    for m in run.measurements.iter_mut().take(k) {
        m.valid = false;
        m.status = Status::Invalid;
    }
    run
}

#[test]
fn the_memory_latency_figure_states_the_sizes_it_has_no_figure_for() {
    let full = fixture("memlat");
    let caches = full.machine.data_cache_sizes(1);
    let a = oscost::analysis::memlat::analyze(&full, &caches);
    let svg = oscost::report::memlat::svg(&a, "host").unwrap();
    let n = figures(&svg)[0].given;
    assert!(n >= 10, "{n}");
    assert_eq!(assert_accounted(&svg)[0].marks, n);

    let run = memlat_with_invalid(3);
    let a = oscost::analysis::memlat::analyze(&run, &caches);
    let svg = oscost::report::memlat::svg(&a, "host").unwrap();
    let f = &assert_accounted(&svg)[0];
    assert_eq!((f.given, f.marks, f.omitted), (n, n - 3, 3), "{f:?}");
    assert!(svg.contains("3 points not drawn: invalid<"));
}

#[test]
fn the_context_switch_sweep_states_the_points_without_a_value() {
    let run = fixture("sweep");
    let caches = run.machine.data_cache_sizes(1);
    let a = oscost::analysis::sweep::analyze(&run, &caches, &[], &|_| String::new());
    let without: usize = a
        .curves
        .iter()
        .flat_map(|c| &c.rows)
        .filter(|r| r.per_switch.is_none())
        .count();
    let drawable = a
        .curves
        .iter()
        .flat_map(|c| &c.rows)
        .filter(|r| r.size > 0 && r.per_switch.is_some())
        .count();
    assert!(without > 0, "the fixture has a point without a value");
    let svg = oscost::report::sweep::svg(&a, "host").unwrap();
    let f = &assert_accounted(&svg)[0];
    assert_eq!((f.marks, f.omitted), (drawable, without), "{f:?}");
    assert!(svg.contains("not drawn: no value at N=2 process"));
}

/// The generic bar chart (one bar per row of a family): of n valid rows with k below
/// resolution it draws n − k bars and says "not plotted" on each of the k rows.
#[test]
fn the_generic_bar_chart_draws_each_resolved_row_and_says_why_for_the_rest() {
    let mut run = fixture("run-quick-a");
    let calls: Vec<usize> = (0..run.measurements.len())
        .filter(|&i| {
            let m = &run.measurements[i];
            m.probe.starts_with("syscall.") && m.unit == Unit::ns(Per::Call) && m.value.is_some()
        })
        .collect();
    let n = calls.len();
    assert!(n >= 4, "{n}");
    for &i in &calls {
        let m = &mut run.measurements[i];
        m.valid = true;
        m.status = Status::Ok;
        m.checks.iter_mut().for_each(|c| c.ok = true);
    }
    for &i in &calls[..2] {
        run.measurements[i].status = Status::BelowResolution;
    }
    let html = oscost::report::html::render(&[run]);
    let figs = assert_accounted(&html);
    let bars = figs
        .iter()
        .find(|f| f.title == "syscall: ns/call")
        .expect("the syscall bar chart");
    assert_eq!((bars.given, bars.marks), (n - 2, n - 2), "{bars:?}");
    let chart = &html[html.find("syscall: ns/call").unwrap()..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert_eq!(chart.matches("not plotted: below resolution").count(), 2);
}
