//! The corrected breakdown: each part's time minus the calibrated cost of the events recorded
//! on its path (probes::rpc::path, probes::rpc::calibrate), so that the parts describe the
//! untraced RPC; and the check that they do: the corrected parts add up to the untraced
//! `rpc.total` within ±15%, judged once both are measured ([`judge_run`]).

use super::breakdown::Rpc;
use super::calibrate::Costs;
use super::path::{PathEvents, GROUPS};
use crate::model::{Check, Estimate, Measurement, Run, Status};

/// How far the corrected parts' sum may be from the untraced RPC time.
pub const SUM_TOLERANCE: f64 = 0.15;

/// Every RPC's parts with the cost of the events on each part's path taken out.
pub fn corrected(rpcs: &[Rpc], paths: &[PathEvents], cal: &Costs) -> Vec<[f64; 8]> {
    rpcs.iter()
        .zip(paths)
        .map(|(r, p)| std::array::from_fn(|k| r.parts[k] - cal.cost_of(&p.parts[k])))
        .collect()
}

/// Mean events per RPC on part `k`'s path by group (`k` = None: on every part's).
pub fn mean_events(paths: &[PathEvents], k: Option<usize>) -> [f64; GROUPS] {
    let n = paths.len().max(1) as f64;
    std::array::from_fn(|g| {
        paths
            .iter()
            .map(|p| match k {
                Some(k) => p.parts[k][g],
                None => p.parts.iter().map(|x| x[g]).sum(),
            })
            .sum::<f64>()
            / n
    })
}

/// The mean of corrected samples with its interval: the mean's own (Student's t over the
/// RPCs) and the calibrated costs' (the fit's covariance, for the mean events on the path)
/// in quadrature. The two are treated as independent (the fully traced batches are one
/// configuration of six in the fit).
pub fn corrected_mean(samples: &[f64], events: &[f64; GROUPS], cal: &Costs) -> Option<Estimate> {
    let m = super::additive::mean(samples)?;
    let own = (m.ci95[1] - m.ci95[0]) / 2.0;
    let half = (own * own + cal.t().powi(2) * cal.cost_var(events)).sqrt();
    Some(Estimate {
        value: m.value,
        ci95: [m.value - half, m.value + half],
    })
}

/// The check's name.
pub const SUM_CHECK: &str = "corrected parts vs untraced rpc.total";

/// The check's name when the untraced RPC itself moved between its two measurements (see
/// [`sum_check`]): the one line that says so, once for every scenario it concerns.
pub const SUM_CHECK_MOVED: &str =
    "corrected parts vs untraced rpc.total (the untraced RPC itself moved between the two \
     measurements)";

/// The check: the corrected parts add up to the untraced RPC time within ±15%.
///
/// `beside` is the untraced RPC as the calibration pass timed it between the traced batches
/// (the median of its batches over the rounds: tracer open, nothing recording). rpc.total is
/// measured apart from the traced session, and the untraced RPC can take two times a
/// second apart on the same CPUs (on a VM the host wakes an idle vCPU at two speeds, each
/// held for a while). When
/// the corrected parts match `beside` but rpc.total is beyond the tolerance from both, the
/// RPC itself moved between the two measurements, not the correction: the check says so in
/// its name and reading. It still fails: nothing measured then tells the correction holds
/// against the untraced RPC of rpc.total.
pub fn sum_check(corrected_sum: f64, untraced: Option<f64>, beside: Option<f64>) -> Check {
    use crate::model::{Bound, CheckKind, Reading};
    let bound = Bound::Near {
        value: 1.0,
        tol: SUM_TOLERANCE,
    };
    let off = |a: f64, b: f64| a / b - 1.0;
    let within = |a: f64, b: f64| off(a, b).abs() <= SUM_TOLERANCE;
    match untraced {
        Some(u) if u > 0.0 => {
            let ok = within(corrected_sum, u);
            let moved =
                beside.filter(|&b| !ok && b > 0.0 && !within(b, u) && within(corrected_sum, b));
            let mut values = vec![corrected_sum, u, off(corrected_sum, u)];
            let kind = match moved {
                Some(b) => {
                    values.extend([b, off(b, u)]);
                    CheckKind::CorrectedSumMoved
                }
                None => CheckKind::CorrectedSum,
            };
            Check::new(kind, bound, Reading::values(&values), ok)
        }
        _ => Check::new(
            CheckKind::CorrectedSum,
            bound,
            Reading::value(corrected_sum),
            false,
        ),
    }
}

/// The untraced RPC as the calibration pass timed it beside the traced batches: the median
/// of the batches with nothing recording, over the rounds (a round's batch can catch the
/// machine in its other state; the median is the state most rounds saw).
pub fn untraced_beside(observer: &crate::model::Observer) -> Option<f64> {
    let batches: Vec<f64> = observer
        .configs
        .iter()
        .filter(|c| c.groups.is_empty())
        .flat_map(|c| c.batch_ns.iter().copied())
        .filter(|x| x.is_finite())
        .collect();
    if batches.is_empty() {
        return None;
    }
    Some(crate::engine::stats::median(&batches))
}

/// Traced over untraced, minus 1, with its interval: the two relative half-widths in
/// quadrature.
pub fn tracing_adds(traced: &Estimate, untraced: &Estimate) -> Option<Estimate> {
    if untraced.value <= 0.0 || traced.value <= 0.0 {
        return None;
    }
    let rel = |e: &Estimate| (e.ci95[1] - e.ci95[0]) / 2.0 / e.value;
    let r = traced.value / untraced.value;
    let h = (rel(traced).powi(2) + rel(untraced).powi(2)).sqrt();
    Some(Estimate {
        value: r - 1.0,
        ci95: [r * (1.0 - h) - 1.0, r * (1.0 + h) - 1.0],
    })
}

/// A measurement's median with its interval.
fn median_of(m: &Measurement) -> Option<Estimate> {
    m.value.as_ref().map(|v| Estimate {
        value: v.median,
        ci95: v.ci95,
    })
}

fn param<'a>(m: &'a Measurement, k: &str) -> &'a str {
    m.param_str(k).unwrap_or("")
}

/// Once a run holds both the untraced and the traced RPCs of a scenario × mechanism: fill
/// "tracing adds" on rpc.traced, and judge the corrected parts against rpc.total (every
/// rpc.corrected of the case gets the check; failing it makes them invalid).
pub fn judge_run(run: &mut Run) {
    let case = |m: &Measurement| {
        (
            param(m, "scenario").to_string(),
            param(m, "mech").to_string(),
        )
    };
    let totals: Vec<((String, String), Option<Estimate>)> = run
        .measurements
        .iter()
        .filter(|m| m.is(super::TOTAL))
        .map(|m| (case(m), median_of(m)))
        .collect();
    let untraced_of = |c: &(String, String)| totals.iter().find(|(k, _)| k == c).and_then(|x| x.1);
    let mut sums = Vec::new();
    for m in run.measurements.iter_mut().filter(|m| m.is(super::TRACED)) {
        let c = case(m);
        // Median over median, as the views print both figures (the mean is the parts').
        let traced = median_of(m);
        if let Some(o) = m.observer.as_mut() {
            o.tracing_adds = match (traced, untraced_of(&c)) {
                (Some(t), Some(u)) => tracing_adds(&t, &u),
                _ => None,
            };
            if let Some(s) = o.calibration.as_ref().and_then(|x| x.corrected_sum) {
                sums.push((c, s.value, untraced_beside(o)));
            }
        }
    }
    for m in run
        .measurements
        .iter_mut()
        .filter(|m| m.is(super::CORRECTED))
    {
        let c = case(m);
        let Some((_, sum, beside)) = sums.iter().find(|(k, _, _)| *k == c) else {
            continue;
        };
        let check = sum_check(*sum, untraced_of(&c).map(|e| e.value), *beside);
        if !check.ok {
            m.valid = false;
            m.status = Status::Invalid;
        }
        m.checks.push(check);
    }
}

/// The part names with the corrected ones' probe: `rpc.corrected` carries `part` like
/// `rpc.part`.
pub const PROBE: crate::model::ProbeId = super::CORRECTED;

/// Definition of the correction, for `--explain` and the notes of each `rpc.corrected`.
pub const NOTE: &str = "corrected: each traced part minus the calibrated cost of the events \
    recorded on its path (its own tracepoints, system-call records and perf switch records; \
    events the other CPU records meanwhile run beside the path and are not counted). The \
    cost per event of each group (scheduler, system calls, IPIs, switch records) comes from \
    the calibration pass: batches of the same RPC loop with nothing recording, each group \
    alone, and all together, interleaved in rounds, their mean RPC times regressed on the \
    events per RPC on the path with one intercept per round. Assumed: events of one group \
    cost alike; an event costs the same whatever else records (the all-together batches \
    test it: 'together' in the calibration); the RPCs follow the same pattern whichever \
    groups record. The interval carries the mean's own and the costs' (the fit's \
    covariance). The corrected parts must add up to the untraced rpc.total within ±15%, \
    else they are invalid (and when the untraced RPC timed beside the traced batches is itself \
    beyond ±15% of rpc.total while the corrected parts match it, the check says the RPC moved \
    between the two measurements); what they leave out: the client's user-space time and the edges \
    of its two system calls outside the tracepoints, and what the tracer costs while open \
    with nothing recording (the fit's intercept above rpc.total)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::trace::{parse_fixture, tests::fixture_decoder};
    use crate::probes::ipc::channel::Mech;
    use crate::probes::rpc::breakdown::{split, Calls, PARTS};
    use crate::probes::rpc::calibrate::{calibrate, recorded};
    use crate::probes::rpc::path::{on_path, Who};

    fn costs() -> Costs {
        let (batches, on_path) = recorded::fixture();
        calibrate(&batches, on_path).unwrap()
    }

    /// The recorded local RPCs (client 32054, server 1827, both on CPU 1), split, with the
    /// events on each part's path.
    fn recorded_rpcs() -> (Vec<Rpc>, Vec<PathEvents>) {
        let (events, _) = fixture_decoder().decode_all(
            &parse_fixture(include_str!(
                "../../../tests/fixtures/trace/pipe-local.records"
            ))
            .unwrap(),
        );
        let rpcs = split(
            &events,
            &Who {
                client: 32054,
                servers: &[1827],
                client_cpu: 1,
                server_cpu: 1,
            },
            Calls::of(Mech::Pipe),
        );
        let who = Who {
            client: 32054,
            servers: &[1827],
            client_cpu: 1,
            server_cpu: 1,
        };
        let paths = on_path(&events, &rpcs, &who);
        (rpcs, paths)
    }

    /// Each recorded part loses exactly the calibrated cost of the events on its path; a
    /// part that held no event keeps its time; the corrected RPC is its span minus the cost
    /// of every event inside it; the corrected means carry the costs' uncertainty.
    #[test]
    fn recorded_rpcs_are_corrected_by_their_own_events() {
        let c = costs();
        let (rpcs, paths) = recorded_rpcs();
        assert!(rpcs.len() >= 35);
        let fixed = corrected(&rpcs, &paths, &c);
        for ((r, p), f) in rpcs.iter().zip(&paths).zip(&fixed) {
            for (k, got) in f.iter().enumerate() {
                let n = p.parts[k];
                let want = r.parts[k]
                    - n[0] * c.cost[0]
                    - n[1] * c.cost[1]
                    - n[2] * c.cost[2]
                    - n[3] * c.cost[3];
                assert!((got - want).abs() < 1e-6, "{}: {got} vs {want}", PARTS[k]);
                if n.iter().sum::<f64>() == 0.0 {
                    assert_eq!(*got, r.parts[k]);
                }
            }
            let all: [f64; GROUPS] = std::array::from_fn(|g| p.timed()[g] - p.tail[g]);
            let sum: f64 = f.iter().sum();
            assert!((sum - (r.span_ns() as f64 - c.cost_of(&all))).abs() < 1e-6);
        }
        // Every RPC's send holds its write's entry: at least one system-call record.
        assert!(mean_events(&paths, Some(0))[1] >= 1.0);
        let k = 3; // switch-in
        let plain: Vec<f64> = rpcs.iter().map(|r| r.parts[k]).collect();
        let v: Vec<f64> = fixed.iter().map(|r| r[k]).collect();
        let own = crate::probes::rpc::additive::mean(&v).unwrap();
        let with_costs = corrected_mean(&v, &mean_events(&paths, Some(k)), &c).unwrap();
        assert_eq!(own.value, with_costs.value);
        assert!(with_costs.ci95[1] - with_costs.ci95[0] > own.ci95[1] - own.ci95[0]);
        assert!(with_costs.value < crate::probes::rpc::additive::mean(&plain).unwrap().value);
    }

    fn case(probe: &str, value: f64) -> Measurement {
        let mut x = crate::report::ipc::tests::fixture().measurements[0].clone();
        x.probe = probe.into();
        x.params.clear();
        x.params.insert("scenario".into(), "local".into());
        x.params.insert("mech".into(), "pipe".into());
        x.status = Status::Ok;
        x.valid = true;
        x.checks.clear();
        let v = x.value.as_mut().unwrap();
        v.median = value;
        v.ci95 = [value * 0.98, value * 1.02];
        x
    }

    fn run_with(untraced: f64, corrected_sum: f64) -> Run {
        let mut run = crate::report::ipc::tests::fixture();
        let mut traced = case("rpc.traced", 18000.0);
        traced.additive = Some(crate::model::Additive {
            mean: Estimate {
                value: 18000.0,
                ci95: [17800.0, 18200.0],
            },
            modes: None,
            events: Default::default(),
        });
        let mut cal = costs().fitted_json;
        cal.corrected_sum = Some(Estimate {
            value: corrected_sum,
            ci95: [corrected_sum - 300.0, corrected_sum + 300.0],
        });
        traced.observer = Some(crate::model::Observer {
            tracing_adds: None,
            calibration: Some(cal),
            configs: Vec::new(),
        });
        run.measurements = vec![
            case("rpc.total", untraced),
            traced,
            case(PROBE.0, 1500.0),
            case(PROBE.0, 2000.0),
        ];
        run
    }

    /// The untraced RPC timed beside the traced batches at `beside` (one batch per round).
    fn beside(run: &mut Run, batches: &[f64]) {
        let o = run.measurements[1].observer.as_mut().unwrap();
        o.configs = vec![crate::model::CalibrationConfig {
            groups: Vec::new(),
            batch_ns: batches.to_vec(),
            rounds: (0..batches.len() as u32).collect(),
            recorded_per_rpc: Default::default(),
        }];
    }

    fn sum_checks(run: &Run) -> Vec<&Check> {
        run.measurements
            .iter()
            .filter(|m| m.is(PROBE))
            .filter_map(|m| m.checks.last())
            .collect()
    }

    /// rpc.total at 4.00 µs, the corrected parts at 7.40 µs: when the untraced batches beside
    /// the traced ones took 7.30 µs (their median; one round caught the fast state), the RPC
    /// itself moved between the two measurements and the check says so; when they took what
    /// rpc.total took, or neither, it is the correction that is off, as before. Fails either
    /// way.
    #[test]
    fn a_failed_sum_says_when_the_untraced_rpc_itself_moved() {
        for (batches, moved) in [
            (vec![4100.0, 7300.0, 7500.0, 7200.0, 7350.0], true),
            (vec![4000.0, 4100.0, 3900.0], false),
            (vec![5800.0, 5900.0, 5700.0], false),
            (vec![], false),
        ] {
            let mut run = run_with(4000.0, 7400.0);
            beside(&mut run, &batches);
            judge_run(&mut run);
            for c in sum_checks(&run) {
                assert!(!c.ok, "{c:?}");
                assert!(
                    crate::report::checks::observed(c).starts_with("7.40 µs vs 4.00 µs (+85.0%)"),
                    "{c:?}"
                );
                let name = if moved { SUM_CHECK_MOVED } else { SUM_CHECK };
                assert_eq!(crate::report::checks::name(c), name, "{batches:?}");
                assert_eq!(
                    crate::report::checks::observed(c)
                        .contains("beside the traced batches the untraced RPC took 7.30 µs"),
                    moved,
                    "{c:?}"
                );
            }
        }
        // Corrected parts that match rpc.total pass whatever the batches beside took.
        let mut run = run_with(7000.0, 7400.0);
        beside(&mut run, &[4000.0, 4100.0, 3900.0]);
        judge_run(&mut run);
        assert!(sum_checks(&run)
            .iter()
            .all(|c| c.ok && crate::report::checks::name(c) == SUM_CHECK));
    }

    /// The recorded quick run of the quiet 2-vCPU VM (tests/fixtures/runs/rpc-quick.json),
    /// judged again: rpc.total took 47.6 and 51.8 µs in the remote scenarios, the untraced
    /// batches beside the traced ones 65.4 and 70.4 µs, the corrected parts 68.6 and 72.5 µs:
    /// the RPC moved, not the correction. Local's corrected parts (7.31 µs) are 15.7% under
    /// rpc.total (8.68 µs) while its batches beside took 7.8 µs, within the tolerance of
    /// rpc.total: that one is the correction's, and says so as before.
    #[test]
    fn the_recorded_remote_scenarios_moved_between_their_measurements() {
        let mut run = crate::input::parse_run(
            include_str!("../../../tests/fixtures/runs/rpc-quick.json"),
            "rpc-quick",
        )
        .unwrap();
        for m in run.measurements.iter_mut().filter(|m| m.is(PROBE)) {
            m.checks
                .retain(|c| !crate::report::checks::name(c).starts_with(SUM_CHECK));
        }
        judge_run(&mut run);
        let name_of = |scenario: &str| {
            let m = run
                .measurements
                .iter()
                .find(|m| m.is(PROBE) && m.param_str("scenario") == Some(scenario))
                .unwrap();
            let c = m.checks.last().unwrap();
            assert!(!c.ok && !m.valid, "{c:?}");
            (
                crate::report::checks::name(c),
                crate::report::checks::observed(c),
            )
        };
        for (scenario, beside) in [
            ("remote-exclusive", "65.4 µs"),
            ("remote-shared", "70.4 µs"),
        ] {
            let (name, observed) = name_of(scenario);
            assert_eq!(name, SUM_CHECK_MOVED, "{scenario}: {observed}");
            assert!(
                observed.contains(&format!("untraced RPC took {beside}")),
                "{observed}"
            );
        }
        assert_eq!(name_of("local").0, SUM_CHECK);
    }

    /// Corrected parts that add up to the untraced time pass; an inconsistent fixture (the
    /// untraced time far from their sum) fails, the corrected parts turn invalid and the
    /// check names both numbers. "Tracing adds" is filled either way.
    #[test]
    fn the_corrected_sum_is_judged_against_the_untraced_total() {
        let mut run = run_with(7000.0, 7400.0);
        judge_run(&mut run);
        let adds = run.measurements[1]
            .observer
            .as_ref()
            .unwrap()
            .tracing_adds
            .unwrap();
        assert!((adds.value - (18000.0 / 7000.0 - 1.0)).abs() < 1e-9);
        assert!(adds.ci95[0] < adds.value && adds.value < adds.ci95[1]);
        for m in &run.measurements[2..] {
            assert!(m.valid, "{:?}", m.checks);
            assert_eq!(m.checks.len(), 1);
        }
        let mut run = run_with(4000.0, 7400.0);
        judge_run(&mut run);
        for m in &run.measurements[2..] {
            assert!(!m.valid);
            assert_eq!(m.status, Status::Invalid);
            let c = m.checks.last().unwrap();
            assert!(!c.ok);
            assert!(
                crate::report::checks::observed(c).contains("7.40 µs vs 4.00 µs"),
                "{}",
                crate::report::checks::observed(c)
            );
        }
        assert!(run.measurements[1]
            .observer
            .as_ref()
            .unwrap()
            .tracing_adds
            .is_some());
        // No untraced total at all: the corrected parts cannot be judged, so they fail.
        let mut run = run_with(7000.0, 7400.0);
        run.measurements.remove(0);
        judge_run(&mut run);
        assert!(run.measurements[1..].iter().all(|m| !m.valid));
        assert!(!sum_check(7400.0, None, None).ok);
    }
}
