//! The noise section, figures and CSV of the recorded window (probes::noise's fixture).

use super::*;
use crate::model::noise::Traced;
use crate::units::Unit;

/// A run holding one measurement per CPU of the recorded window.
fn run() -> Run {
    let (w, _) = crate::probes::noise::tests::recorded();
    let mut run = crate::report::ipc::tests::fixture();
    run.measurements = crate::probes::noise::conclude(&w)
        .into_iter()
        .zip(&w.readers)
        .map(|(n, r)| crate::probes::noise::measurement(n, r, None).unwrap())
        .collect();
    run
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn the_section_names_the_causes_within_80_columns() {
    let run = run();
    for verbose in [false, true] {
        let t = text(&run, verbose);
        assert!(widest(&t) <= 80, "{t}");
        assert!(
            t.contains("OS noise: a busy reader on each of 2 CPUs"),
            "{t}"
        );
        assert!(t.contains("task competitor"), "{t}");
        assert!(t.contains("timer tick"), "{t}");
        assert!(
            t.contains("CPU 0 longest gaps:") && t.contains("CPU 1 causes"),
            "{t}"
        );
        assert_eq!(t.contains("gap lengths"), verbose, "{t}");
    }
    let mut empty = run.clone();
    empty.measurements.clear();
    assert!(text(&empty, true).is_empty());
    assert!(svgs(&empty, "host").is_empty());
}

#[test]
fn an_untraced_run_says_why_once() {
    let mut run = run();
    for m in &mut run.measurements {
        m.noise.as_mut().unwrap().attribution = Attribution::NotPermitted { paranoid: 2 };
    }
    let t = text(&run, false);
    assert_eq!(t.matches("not traced").count(), 1, "{t}");
    assert!(t.contains("it is 2"), "{t}");
    assert!(!t.contains("causes by time taken"), "{t}");
    assert!(widest(&t) <= 80, "{t}");
    // No causes, no stacked bars: the histograms only.
    let figs = svgs(&run, "host");
    assert_eq!(figs.len(), 2);
    assert!(figs
        .iter()
        .all(|(stem, _)| stem.starts_with("noise-gaps-cpu")));
}

#[test]
fn low_coverage_and_dropped_records_are_said() {
    let mut run = run();
    let n = run.measurements[0].noise.as_mut().unwrap();
    let lost = n.lost_ns;
    let Attribution::Traced(t) = &mut n.attribution else {
        panic!("traced")
    };
    *t = Traced {
        covered_ns: lost / 2,
        lost_records: 1234,
        ..t.clone()
    };
    let s = text(&run, false);
    assert!(s.contains("the causes cover 50"), "{s}");
    assert!(s.contains("dropped 1,234 trace records"), "{s}");
    assert!(widest(&s) <= 80, "{s}");
    // The other CPU, fully covered, says neither.
    assert_eq!(s.matches("the causes cover").count(), 1);
}

#[test]
fn figures_are_the_causes_then_each_cpus_gaps() {
    let run = run();
    let figs = svgs(&run, "host");
    let stems: Vec<&str> = figs.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        stems,
        ["noise-causes", "noise-gaps-cpu0", "noise-gaps-cpu1"]
    );
    for (_, svg) in &figs {
        assert!(svg.starts_with("<svg") && !svg.contains("no data to plot"));
    }
    assert!(figs[0].1.contains("CPU 0") && figs[0].1.contains("CPU 1"));
    let own = Noise.own_figures(&run, "host");
    assert_eq!(own[0].0, Size::Wide);
    assert!(own[1..].iter().all(|f| f.0 == Size::Small));
}

#[test]
fn the_csv_has_a_row_per_cpu_and_cause() {
    let run = run();
    let c = csv(&run);
    let mut lines = c.lines();
    assert_eq!(
        lines.next(),
        Some("cpu,cause,count,per_s,median_ns,total_ns,share_of_cpu")
    );
    let rows: Vec<&str> = lines.collect();
    let causes: usize = super::cpus(&run)
        .iter()
        .map(|n| match &n.attribution {
            Attribution::Traced(t) => t.causes.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(rows.len(), causes);
    assert!(rows.iter().any(|r| r.starts_with("0,\"task competitor\",")));
    assert!(rows.iter().all(|r| r.split(',').count() >= 7));
}

#[test]
fn cause_labels_are_inert() {
    assert_eq!(
        cause_label(&Cause::Task {
            comm: "a\u{1b}[31mb".into()
        }),
        "task a\\u{1b}[31mb"
    );
    assert_eq!(cause_label(&Cause::Softirq { vec: 9 }), "softirq RCU");
    assert_eq!(
        cause_label(&Cause::Irq {
            irq: 36,
            name: String::new()
        }),
        "irq 36"
    );
}

#[test]
fn a_count_that_disagrees_is_said_with_both_numbers_and_the_family_words() {
    let mut run = run();
    assert!(!text(&run, false).contains("partial"));
    let n = run.measurements[0].noise.as_mut().unwrap();
    let Attribution::Traced(t) = &mut n.attribution else {
        panic!("traced")
    };
    t.counts.push(crate::model::noise::CountCheck {
        row: "42".into(),
        proc_delta: 123,
        traced: 98,
        unwritten: 0,
    });
    let s = text(&run, false);
    assert!(
        s.contains("IRQ 42 traced 98 against the /proc delta 123"),
        "{s}"
    );
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("(±2%): the recording missed some"), "{s}");
    assert!(widest(&s) <= 80, "{s}");
    let words = |values: &[f64]| {
        Noise
            .words(&crate::model::Remark::family(
                crate::probes::noise::PARTIAL,
                values,
            ))
            .unwrap()
    };
    let stands = "; the lost share stands (the reader measures it without tracing)";
    // Only what is partial is named: a part at zero is left out.
    assert_eq!(
        words(&[1.0, 0.0, 0.0, 18.0]),
        format!(
            "causes partial: 1 /proc row not all recorded, 18 events the kernel counted and \
             wrote no record of{stands}"
        )
    );
    assert_eq!(
        words(&[0.0, 7.0, 0.0, 0.0]),
        format!("causes partial: 7 records dropped{stands}")
    );
    assert_eq!(
        words(&[0.0, 0.0, 0.0, 1.0]),
        format!("causes partial: 1 event the kernel counted and wrote no record of{stands}")
    );
    assert_eq!(
        words(&[2.0, 1.0, 0.0, 30.0]),
        format!(
            "causes partial: 2 /proc rows not all recorded, 1 record dropped, 30 events the \
             kernel counted and wrote no record of{stands}"
        )
    );
    // An entry and its exit counted alike are counted as pairs, never as events: 9 timer
    // interrupts unwritten are 9 pairs, not 18 events.
    assert_eq!(
        words(&[0.0, 0.0, 9.0, 0.0]),
        format!(
            "causes partial: 9 entry/exit pairs the kernel counted and wrote no record \
             of{stands}"
        )
    );
    assert_eq!(
        words(&[1.0, 0.0, 1.0, 3.0]),
        format!(
            "causes partial: 1 /proc row not all recorded, 1 entry/exit pair and 3 events the \
             kernel counted and wrote no record of{stands}"
        )
    );
    // A run recorded before the pairs were told apart holds entries and exits summed: said
    // as trace events, each entry and exit one.
    assert_eq!(
        words(&[1.0, 0.0, 18.0]),
        format!(
            "causes partial: 1 /proc row not all recorded, 18 trace events the kernel counted \
             and wrote no record of (an entry and its exit count two){stands}"
        )
    );
    // A run recorded before the counters were read says the two it has.
    assert_eq!(
        words(&[1.0, 0.0]),
        format!("causes partial: 1 /proc row not all recorded{stands}")
    );
    for w in [
        words(&[1.0, 0.0, 0.0, 18.0]),
        words(&[0.0, 7.0, 0.0, 0.0]),
        words(&[0.0, 0.0, 9.0, 0.0]),
        words(&[0.0, 0.0, 0.0, 1.0]),
        words(&[1.0, 0.0, 0.0]),
        words(&[1.0, 0.0]),
    ] {
        assert!(!w.contains(" 0 "), "{w}");
    }
    assert!(Noise
        .words(&crate::model::Remark::family(
            crate::model::FamilyRemark("noise.other"),
            &[]
        ))
        .is_none());
}

#[test]
fn entries_the_kernel_counted_unwritten_are_said_with_the_counter_and_the_records() {
    let mut run = run();
    let n = run.measurements[0].noise.as_mut().unwrap();
    let Attribution::Traced(t) = &mut n.attribution else {
        panic!("traced")
    };
    t.counts.push(crate::model::noise::CountCheck {
        row: "softirq RCU".into(),
        proc_delta: 57,
        traced: 39,
        unwritten: 18,
    });
    t.unwritten.push(crate::model::noise::Unwritten {
        event: "irq:softirq_entry".into(),
        counted: 120,
        recorded: 102,
        ring_full: 0,
    });
    let s = text(&run, false);
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("traced 39 against the /proc delta 57 (±2%): the kernel counted the rest"),
        "{s}"
    );
    assert!(
        flat.contains(
            "the kernel counted 120 irq:softirq_entry events and wrote 102: no lost record"
        ),
        "{s}"
    );
    assert!(widest(&s) <= 80, "{s}");
}

#[test]
fn rows_partial_for_one_reason_are_one_remark() {
    let mut run = run();
    let n = run.measurements[0].noise.as_mut().unwrap();
    let Attribution::Traced(t) = &mut n.attribution else {
        panic!("traced")
    };
    let row = |row: &str, proc_delta, traced| crate::model::noise::CountCheck {
        row: row.into(),
        proc_delta,
        traced,
        unwritten: proc_delta - traced,
    };
    let missed = crate::model::noise::CountCheck {
        unwritten: 0,
        ..row("LOC", 560, 500)
    };
    t.counts = vec![row("RES", 76, 74), row("softirq TIMER", 96, 94), missed];
    t.unwritten.clear();
    t.lost_records = 0;
    let lines = remark_lines(run.measurements[0].noise.as_ref().unwrap(), false);
    assert_eq!(
        lines,
        [
            "causes partial: RES traced 74 against the /proc delta 76, softirq TIMER traced \
             94 against 96 (±2%): the kernel counted the rest and wrote no record of them",
            // A row short for another reason keeps its own remark.
            "causes partial: LOC traced 500 against the /proc delta 560 (±2%): the recording \
             missed some",
        ]
    );
    let s = text(&run, false);
    assert!(widest(&s) <= 80, "{s}");
}

#[test]
fn an_entry_and_its_exit_counted_alike_are_one_line() {
    let mut run = run();
    let n = run.measurements[0].noise.as_mut().unwrap();
    let Attribution::Traced(t) = &mut n.attribution else {
        panic!("traced")
    };
    let u = |event: &str, counted, recorded| crate::model::noise::Unwritten {
        event: event.into(),
        counted,
        recorded,
        ring_full: 0,
    };
    t.unwritten = vec![
        u("irq_vectors:local_timer_entry", 545, 543),
        u("irq_vectors:local_timer_exit", 545, 543),
        u("irq:softirq_entry", 64, 62),
        // An exit whose counts differ from its entry's is a fact of its own.
        u("irq:softirq_exit", 64, 61),
    ];
    t.counts.clear();
    t.lost_records = 0;
    let noise = |run: &Run| run.measurements[0].noise.clone().unwrap();
    // One reason, said once, for the three facts that share it.
    assert_eq!(
        remark_lines(&noise(&run), false),
        ["the kernel counted these events and wrote fewer: \
             irq_vectors:local_timer_entry and _exit 545 each, wrote 543 of each; \
             irq:softirq_entry 64, wrote 62; irq:softirq_exit 64, wrote 61: no lost record: \
             they came while a task whose tracepoints do not fire ran"]
    );
    let s = text(&run, false);
    assert!(widest(&s) <= 80, "{s}");
    // A reason of its own is a remark of its own, in the one-event words.
    let Attribution::Traced(t) = &mut run.measurements[0].noise.as_mut().unwrap().attribution
    else {
        panic!("traced")
    };
    t.unwritten[3].ring_full = 3;
    assert_eq!(
        remark_lines(&noise(&run), false),
        [
            "the kernel counted these events and wrote fewer: \
             irq_vectors:local_timer_entry and _exit 545 each, wrote 543 of each; \
             irq:softirq_entry 64, wrote 62: no lost record: they came while a task whose \
             tracepoints do not fire ran",
            "the kernel counted 64 irq:softirq_exit events and wrote 61: 3 for want of room \
             in the ring",
        ]
    );
    // The remark counts the timer's entries and exits unwritten as 2 pairs, the softirq's
    // as 2 pairs and the exit beyond them as 1 event: never the 9 of all four summed.
    let remark =
        crate::probes::noise::partial(run.measurements[0].noise.as_ref().unwrap()).unwrap();
    let said = Noise.words(&remark).unwrap();
    assert!(
        said.contains("4 entry/exit pairs and 1 event the kernel counted and wrote no record of"),
        "{said}"
    );
    assert!(!said.contains("9 events"), "{said}");
}

#[test]
fn every_view_says_the_measurements_figure_not_the_whole_windows() {
    let mut run = run();
    let m = &mut run.measurements[0];
    let n = m.noise.clone().unwrap();
    // Bursty: the median window lost far less than the whole window did.
    let median = n.lost_share() * 100.0 / 2.0;
    let v = m.value.as_mut().unwrap();
    v.median = median;
    v.ci95 = [median * 0.9, median * 1.2];
    let f = figure(&run, n.cpu).unwrap();
    assert_eq!(f, [median, median * 0.9, median * 1.2]);
    let t = text(&run, false);
    let row = t
        .lines()
        .find(|l| l.starts_with(&format!("{:<4} ", n.cpu)))
        .unwrap();
    assert!(row.contains(&format!("{}%", fmt_num(median))), "{row}");
    assert!(t.contains("the whole window's"), "{t}");
    let (_, svg) = stacked(&run, "machine").unwrap();
    let said = crate::units::interval::fmt_figure(f[0], f[1], f[2], &Unit::Percent);
    let number = said.trim_end_matches('%').trim_end();
    assert!(svg.contains(number), "{said} not in the bars");
    let whole =
        crate::units::interval::fmt_figure(n.lost_share() * 100.0, 0.0, 0.0, &Unit::Percent);
    assert!(!svg.contains(whole.trim_end_matches('%').trim_end()));
}

#[test]
fn an_unstable_cpu_is_unstable_in_the_table_and_the_bars_never_a_value() {
    let mut run = run();
    let m = run
        .measurements
        .iter_mut()
        .find(|m| m.noise.as_ref().is_some_and(|n| n.cpu == 0))
        .unwrap();
    // The recorded run's CPU 0: 3.6% with an interval to 21%.
    let v = m.value.as_mut().unwrap();
    v.median = 3.597011;
    v.ci95 = [2.872783, 21.140693];
    m.status = crate::model::Status::Unstable;
    let t = text(&run, false);
    let row = t.lines().find(|l| l.starts_with("0 ")).unwrap();
    assert!(row.contains("unstable"), "{t}");
    assert!(!t.contains("3.60%") && !t.contains("3.6%"), "{t}");
    let bars = &svgs(&run, "host")[0].1;
    assert!(bars.contains("not plotted: unstable (±18 %)"), "{bars}");
    // A figure that is one is printed no more precisely than its interval.
    let cpu1 = t.lines().find(|l| l.starts_with("1 ")).unwrap();
    let [v1, lo1, hi1] = figure(&run, 1).unwrap();
    let want = format!("{}%", crate::units::interval::fmt_estimate(v1, lo1, hi1).0);
    assert!(cpu1.contains(&want), "{cpu1} lacks {want}");
}

/// A CPU whose checks failed said INVALID in the main table but its lost share in the
/// section's table and a bar of causes in the chart.
#[test]
fn an_invalid_cpu_is_invalid_in_the_table_and_the_bars_never_a_value() {
    let mut run = run();
    let m = run
        .measurements
        .iter_mut()
        .find(|m| m.noise.as_ref().is_some_and(|n| n.cpu == 1))
        .unwrap();
    m.valid = false;
    m.status = crate::model::Status::Invalid;
    let [v, lo, hi] = figure(&run, 1).unwrap();
    let number = format!("{}%", crate::units::interval::fmt_estimate(v, lo, hi).0);
    let t = text(&run, false);
    let row = t.lines().find(|l| l.starts_with("1 ")).unwrap();
    assert!(row.contains("INVALID") && !row.contains(&number), "{row}");
    let bars = &svgs(&run, "host")[0].1;
    assert!(bars.contains("not plotted: INVALID"), "{bars}");
    // The valid CPU keeps its figure and its bar.
    let cpu0 = t.lines().find(|l| l.starts_with("0 ")).unwrap();
    assert!(!cpu0.contains("INVALID"), "{cpu0}");
    assert!(bars.contains("class=\"pt\""), "{bars}");
}
