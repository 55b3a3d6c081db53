use super::*;

fn t(label: &str, expected: f64, elapsed: f64) -> ItemTime {
    ItemTime {
        label: label.into(),
        expected_s: expected,
        elapsed_s: elapsed,
    }
}

fn shape<'a>(label: &'a str, own: Option<u64>, cfg: &'a SamplingConfig) -> ItemShape<'a> {
    let own = own.map(Duration::from_secs);
    let mode = if own.is_some() {
        Mode::Once
    } else {
        Mode::Spread
    };
    ItemShape {
        label,
        own,
        mode,
        sampling: cfg,
    }
}

#[test]
fn the_bound_is_the_budget_and_the_warm_ups_of_the_plan() {
    let std = SamplingConfig::standard();
    // Spread: three calls of a warm-up floor (0.1 s, then 0.03 s), a 0.67 s share and about
    // two samples.
    let spread = item_bound_s(&std, Mode::Spread);
    assert!((2.2..2.4).contains(&spread), "{spread}");
    // Back to back the warm-ups eat into the budget: 2 s and one sample per round.
    let once = item_bound_s(&std, Mode::Once);
    assert!((2.0..2.1).contains(&once) && once < spread, "{once}");
    // Whole-run samples of 0.24 s (ctx timeslice --quick: no warm-up floor, 5 to 15
    // samples in a 2 s budget): the minimum samples outlast the rounds' deadlines.
    let slice = SamplingConfig {
        warmup_ns: 0,
        target_sample_ns: 1,
        min_samples: 5,
        max_samples: 15,
        ..std.clone()
    };
    let b = call_bound_s(&sampler::plan(&slice, Call::Whole), 0.24);
    assert!((3.4..4.0).contains(&b), "{b}");
    // A fixed count and a budget of a day (fault --rounds 30): the count ends each round,
    // not a warm-up cap of a quarter of the day: 30 samples, 6 with counters, the warm-ups.
    let fixed = SamplingConfig {
        min_samples: 30,
        max_samples: 30,
        budget_ns: 86_400_000_000_000,
        ..std
    };
    let b = call_bound_s(&sampler::plan(&fixed, Call::Whole), 0.05);
    assert!((1.8..2.5).contains(&b), "{b}");
}

#[test]
fn history_scales_the_bound_by_the_median_ratio() {
    let q = SamplingConfig::quick();
    let runs = vec![
        vec![t("syscall.getpid", 1.0, 0.2), t("call.function", 1.0, 1.0)],
        vec![t("syscall.getpid", 1.0, 0.3)],
        vec![t("syscall.getpid", 1.0, 0.9)],
        // Unusable entries are ignored.
        vec![
            t("syscall.getpid", 0.0, 1.0),
            t("call.function", 1.0, f64::NAN),
        ],
    ];
    let h = History::from_runs(&runs);
    let est = PlanEstimate::new(
        [
            shape("syscall.getpid", None, &q),
            shape("syscall.null", None, &q),
        ],
        &h,
    );
    let bound = item_bound_s(&q, Mode::Spread);
    assert_eq!(est.items[0].from_runs, 3);
    assert!((est.items[0].expected_s - 0.3 * bound).abs() < 1e-9);
    assert_eq!(est.items[1].expected_s, bound);
    assert!(
        est.line().ends_with(", 1 of 2 from past runs"),
        "{}",
        est.line()
    );
    let all = PlanEstimate::new(
        [
            shape("syscall.getpid", None, &q),
            shape("call.function", None, &q),
        ],
        &h,
    );
    assert!(
        all.line().ends_with("from the last 1 run"),
        "{}",
        all.line()
    );
    let none = PlanEstimate::new([shape("syscall.getpid", None, &q)], &History::default());
    assert!(
        none.line().starts_with("1 item to measure, about ")
            && none
                .line()
                .ends_with(" s (the budgets alone: no past runs here)"),
        "{}",
        none.line()
    );
    // The most recent runs only.
    let runs: Vec<Vec<ItemTime>> = (0..8)
        .map(|i| vec![t("a", 1.0, if i < HISTORY_RUNS { 2.0 } else { 100.0 })])
        .collect();
    assert_eq!(History::from_runs(&runs).ratio("a"), Some((2.0, 5)));
}

#[test]
fn the_make_up_allowance_counts_the_spread_items_and_learns_from_past_runs() {
    let std = SamplingConfig::standard();
    let plan = |h: &History| {
        let mut spread = shape("a", None, &std);
        spread.own = Some(Duration::from_secs(4));
        PlanEstimate::new([spread, shape("once", Some(6), &std)], h)
    };
    // Half the allowance, a tenth of the spread item's 4 s; the item that runs once takes
    // no make-up round.
    let est = plan(&History::default());
    assert!(
        (est.make_up.expected_s - 0.2).abs() < 1e-9,
        "{:?}",
        est.make_up
    );
    assert!((est.total_s() - (FIXED_S + 10.2)).abs() < 1e-9);
    // Past runs took none: a ratio of 0 is a reading, not a gap.
    let none: Vec<Vec<ItemTime>> = (0..3).map(|_| vec![t(MAKE_UP_LABEL, 0.2, 0.0)]).collect();
    let est = plan(&History::from_runs(&none));
    assert_eq!((est.make_up.expected_s, est.make_up.from_runs), (0.0, 3));
    assert!(
        est.line().ends_with("make-up rounds from past runs"),
        "{}",
        est.line()
    );
}
