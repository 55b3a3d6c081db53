//! The observer's cost, measured: what one recorded event adds to the RPC in this
//! configuration (ring buffer, clock, filters, this kernel, this VM).
//!
//! The traced run interleaves, round after round, batches of the same RPC loop with nothing
//! recording, with each group of events alone (the scheduler's tracepoints, the system
//! calls', the IPIs', perf's switch records), and with all of them (the batches the
//! breakdown is split from). Each batch's (trimmed) mean RPC time is regressed on the events per RPC
//! on the timed path (probes::rpc::path) of the groups recording in it, with one intercept
//! per round so that drift between rounds does not enter the slopes (engine::fit). A
//! slope is the cost of one event of that group; the fit's residual and how far all groups
//! at once are from the sum of the groups alone say how well a per-event cost describes the
//! observer here.
//!
//! Assumed, and said with --explain: the events of one group cost alike; an event costs the
//! same with other groups recording or not (tested by the together-vs-alone residual); the
//! events on the path per RPC are those of the fully traced batches whichever groups record.
//! Not an event cost, and so not in the slopes: what the tracer costs while open with nothing
//! recording (registered tracepoints send every system call through the slow path); it
//! shows as the fit's intercept above the untraced rpc.total.

use super::path::GROUPS;
use crate::engine::fit::{blocked, Fit, Row};
use crate::engine::stats::t_975;
use crate::evidence::trace::Group;
use crate::model::{Calibration, CalibrationConfig, Estimate, EventCost};
use crate::units::name::Word;
use std::collections::BTreeMap;

/// The configurations timed in each round, by the groups recording; the last is the full
/// trace the breakdown comes from.
pub const CONFIGS: [&[Group]; 6] = [
    &[],
    &[Group::Sched],
    &[Group::Syscalls],
    &[Group::Ipi],
    &[Group::Switches],
    &Group::ALL,
];

/// Index of the fully traced configuration in [`CONFIGS`].
pub const TRACED: usize = CONFIGS.len() - 1;

/// Groups with fewer events than this on the path per RPC get no cost (there is none to take
/// out, and their alone-batches cannot tell it).
const MIN_EVENTS: f64 = 0.05;

/// Rounds needed for a calibration: the untraced time is the mean of the rounds'
/// intercepts, its interval from their spread.
pub const MIN_ROUNDS: usize = 3;

/// One timed batch of RPCs.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub round: u32,
    /// Index in [`CONFIGS`].
    pub config: usize,
    /// The batch's RPC time, ns: the client's clock around each RPC, the mean of the middle
    /// 80% (additive::trimmed_mean): what a recorded event adds shifts every RPC, while an
    /// RPC that lost its vCPU for a while does not swing a batch.
    pub mean_ns: f64,
    /// Records per RPC the rings held, by group (on the path or not).
    pub recorded: [f64; GROUPS],
}

/// The calibrated costs: per group, and what the correction needs to carry their uncertainty
/// through.
#[derive(Debug, Clone)]
pub struct Costs {
    /// ns per event by group (0 for a group without a fitted cost).
    pub cost: [f64; GROUPS],
    /// The groups fitted, in the fit's regressor order.
    fitted: Vec<usize>,
    fit: Fit,
    /// What the JSON keeps.
    pub fitted_json: Calibration,
}

impl Costs {
    /// Variance of the calibrated cost of `events` (per group): the fit's covariance.
    pub fn cost_var(&self, events: &[f64; GROUPS]) -> f64 {
        let w: Vec<f64> = self.fitted.iter().map(|&g| events[g]).collect();
        self.fit.var_of(&w)
    }

    /// The calibrated cost of `events` (per group), ns.
    pub fn cost_of(&self, events: &[f64; GROUPS]) -> f64 {
        events.iter().zip(&self.cost).map(|(n, c)| n * c).sum()
    }

    /// t quantile for the fit's degrees of freedom.
    pub fn t(&self) -> f64 {
        t_975(self.fit.dof)
    }
}

/// Fit the batches. `on_path` is the events per RPC on the timed path by group, from the
/// fully traced batches. None when there is no fit (fewer than [`MIN_ROUNDS`] rounds, or no
/// group with events).
pub fn calibrate(batches: &[Batch], on_path: [f64; GROUPS]) -> Option<Costs> {
    if rounds(batches).len() < MIN_ROUNDS {
        return None;
    }
    let fitted: Vec<usize> = (0..GROUPS).filter(|&g| on_path[g] >= MIN_EVENTS).collect();
    let x_of = |config: usize| -> Vec<f64> {
        fitted
            .iter()
            .map(|&g| {
                if CONFIGS[config].contains(&Group::ALL[g]) {
                    on_path[g]
                } else {
                    0.0
                }
            })
            .collect()
    };
    let rows: Vec<Row> = batches
        .iter()
        .map(|b| Row {
            block: b.round,
            y: b.mean_ns,
            x: x_of(b.config),
        })
        .collect();
    let fit = blocked(&rows)?;
    if fit.dof == 0 {
        return None;
    }
    let t = t_975(fit.dof);
    let mut cost = [0.0; GROUPS];
    let mut costs = Vec::new();
    for (j, &g) in fitted.iter().enumerate() {
        cost[g] = fit.coef[j];
        let half = t * fit.se(j);
        costs.push(EventCost {
            group: Group::ALL[g].word().into(),
            ns: Estimate {
                value: fit.coef[j],
                ci95: [fit.coef[j] - half, fit.coef[j] + half],
            },
            per_rpc: on_path[g],
        });
    }
    let fitted_json = Calibration {
        costs,
        residual_ns: fit.sigma(),
        dof: fit.dof,
        together_ns: together(batches),
        untraced_fit: super::additive::mean(&fit.intercepts)?,
        corrected_sum: None,
    };
    Some(Costs {
        cost,
        fitted,
        fit,
        fitted_json,
    })
}

/// All groups at once against the groups alone, without the fit: per round, (all − none) −
/// Σ (alone − none), averaged over the rounds that have every configuration.
fn together(batches: &[Batch]) -> f64 {
    let per_round: Vec<f64> = rounds(batches)
        .iter()
        .filter_map(|&r| {
            let y = |c: usize| {
                batches
                    .iter()
                    .find(|b| b.round == r && b.config == c)
                    .map(|b| b.mean_ns)
            };
            let none = y(0)?;
            let alone = (1..TRACED)
                .map(|c| y(c).map(|v| v - none))
                .sum::<Option<f64>>()?;
            Some(y(TRACED)? - none - alone)
        })
        .collect();
    per_round.iter().sum::<f64>() / per_round.len().max(1) as f64
}

/// The rounds the batches were timed in, in order.
fn rounds(batches: &[Batch]) -> Vec<u32> {
    let mut rounds: Vec<u32> = batches.iter().map(|b| b.round).collect();
    rounds.sort_unstable();
    rounds.dedup();
    rounds
}

/// What each configuration recorded and timed, for the JSON.
pub fn configs(batches: &[Batch]) -> Vec<CalibrationConfig> {
    CONFIGS
        .iter()
        .enumerate()
        .map(|(c, groups)| {
            let mine: Vec<&Batch> = batches.iter().filter(|b| b.config == c).collect();
            let n = mine.len().max(1) as f64;
            let recorded: BTreeMap<String, f64> = groups
                .iter()
                .map(|g| {
                    let per = mine.iter().map(|b| b.recorded[g.index()]).sum::<f64>() / n;
                    (g.word().to_string(), per)
                })
                .collect();
            CalibrationConfig {
                groups: groups.iter().map(|g| g.word().to_string()).collect(),
                batch_ns: mine.iter().map(|b| b.mean_ns).collect(),
                rounds: mine.iter().map(|b| b.round).collect(),
                recorded_per_rpc: recorded,
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Batches as a quiet machine would time them with known per-event costs: `rounds`
    /// rounds of every configuration, each round drifting, a deterministic ±`noise` ns.
    pub(crate) fn synthetic(
        on_path: [f64; GROUPS],
        cost: [f64; GROUPS],
        untraced: f64,
        rounds: u32,
        noise: f64,
    ) -> Vec<Batch> {
        let mut out = Vec::new();
        for r in 0..rounds {
            for (c, groups) in CONFIGS.iter().enumerate() {
                let added: f64 = groups
                    .iter()
                    .map(|g| on_path[g.index()] * cost[g.index()])
                    .sum();
                // A fixed pseudo-random sign pattern, so the test is repeatable.
                let wobble = noise * (((r as usize * 7 + c * 3) % 5) as f64 - 2.0) / 2.0;
                out.push(Batch {
                    round: r,
                    config: c,
                    mean_ns: untraced + 50.0 * r as f64 + added + wobble,
                    recorded: std::array::from_fn(|g| {
                        if groups.contains(&Group::ALL[g]) {
                            on_path[g] * 1.5
                        } else {
                            0.0
                        }
                    }),
                });
            }
        }
        out
    }

    /// A fixture with known per-event costs gives them back, each inside its interval, and
    /// a group without events on the path gets no cost.
    #[test]
    fn known_costs_come_back() {
        let on_path = [6.0, 8.0, 0.0, 4.0];
        let cost = [180.0, 95.0, 0.0, 60.0];
        let cal = calibrate(&synthetic(on_path, cost, 7000.0, 8, 40.0), on_path).unwrap();
        let o = &cal.fitted_json;
        assert_eq!(o.costs.len(), 3, "{o:?}");
        for c in &o.costs {
            let g = Group::ALL.iter().position(|g| g.word() == c.group).unwrap();
            assert!(
                c.ns.ci95[0] <= cost[g] && cost[g] <= c.ns.ci95[1],
                "{}: {:?} vs {}",
                c.group,
                c.ns,
                cost[g]
            );
            assert!((c.ns.value - cost[g]).abs() < 10.0, "{c:?}");
        }
        assert!(
            o.residual_ns > 0.0 && o.residual_ns < 40.0,
            "{}",
            o.residual_ns
        );
        // The rounds' drift goes into the intercepts: the untraced time is their mean.
        assert!(
            (o.untraced_fit.value - (7000.0 + 50.0 * 3.5)).abs() < 20.0,
            "{o:?}"
        );
        let b = synthetic(on_path, cost, 7000.0, 8, 40.0);
        let timed = configs(&b);
        assert_eq!(timed.len(), CONFIGS.len());
        assert_eq!(timed[TRACED].batch_ns.len(), 8);
        assert_eq!(timed[1].recorded_per_rpc["sched"], 9.0);
        // The cost of an RPC's events and its uncertainty.
        let c = cal.cost_of(&[1.0, 1.0, 5.0, 0.0]);
        assert!((c - 275.0).abs() < 15.0, "{c}");
        assert!(cal.cost_var(&[1.0, 1.0, 0.0, 0.0]) > 0.0);
    }

    /// Costs that do not add up (all groups at once costing more than the groups alone) show
    /// in the together-vs-alone residual.
    #[test]
    fn costs_that_do_not_add_up_are_seen() {
        let on_path = [6.0, 8.0, 0.0, 4.0];
        let mut b = synthetic(on_path, [180.0, 95.0, 0.0, 60.0], 7000.0, 6, 0.0);
        for x in b.iter_mut().filter(|x| x.config == TRACED) {
            x.mean_ns += 900.0;
        }
        let o = calibrate(&b, on_path).unwrap().fitted_json;
        assert!((o.together_ns - 900.0).abs() < 1e-6, "{o:?}");
        // Two rounds are not enough to tell the drift between rounds.
        let one: Vec<Batch> = b.into_iter().filter(|x| x.round < 2).collect();
        assert!(calibrate(&one, on_path).is_none());
    }
}

#[cfg(test)]
pub(crate) mod recorded {
    use super::*;

    /// The calibration pass of a recorded local run: its batches, and the events per RPC on
    /// the timed path by group.
    pub(crate) fn fixture() -> (Vec<Batch>, [f64; GROUPS]) {
        let v: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/trace/calibration-local.json"
        ))
        .unwrap();
        let on_path =
            std::array::from_fn(|g| v["on_path"][Group::ALL[g].word()].as_f64().unwrap_or(0.0));
        let mut batches = Vec::new();
        for (config, c) in v["configs"].as_array().unwrap().iter().enumerate() {
            let names: Vec<&str> = c["groups"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g.as_str().unwrap())
                .collect();
            let expect: Vec<&str> = CONFIGS[config].iter().map(|g| g.word()).collect();
            assert_eq!(names, expect);
            for (y, r) in c["batch_ns"]
                .as_array()
                .unwrap()
                .iter()
                .zip(c["rounds"].as_array().unwrap())
            {
                batches.push(Batch {
                    round: r.as_u64().unwrap() as u32,
                    config,
                    mean_ns: y.as_f64().unwrap(),
                    recorded: [0.0; GROUPS],
                });
            }
        }
        (batches, on_path)
    }

    /// The recorded batches fit with a residual of a few hundred ns and costs of a few
    /// hundred ns per event, each known to a few %; all groups at once cost less than the
    /// groups alone added up.
    #[test]
    fn the_recorded_calibration_fits() {
        let (batches, on_path) = fixture();
        let c = calibrate(&batches, on_path).unwrap().fitted_json;
        assert_eq!(c.costs.len(), 3, "no IPI on one CPU: {c:?}");
        for e in &c.costs {
            assert!(e.ns.value > 100.0 && e.ns.value < 2000.0, "{e:?}");
            assert!(e.ns.ci95[1] - e.ns.ci95[0] < 0.2 * e.ns.value, "{e:?}");
        }
        assert!(c.residual_ns < 500.0, "{c:?}");
        assert!(c.together_ns < 0.0, "{c:?}");
    }

    /// The recorded timings with their events' fitted cost swapped for known costs: the fit
    /// gives the known costs back, each inside its interval (the noise is the recording's).
    #[test]
    fn known_costs_come_back_from_recorded_timings() {
        let (batches, on_path) = fixture();
        let fitted = calibrate(&batches, on_path).unwrap();
        let known = [250.0, 1200.0, 0.0, 90.0];
        let swapped: Vec<Batch> = batches
            .iter()
            .map(|b| {
                let n: [f64; GROUPS] = std::array::from_fn(|g| {
                    if CONFIGS[b.config].contains(&Group::ALL[g]) {
                        on_path[g]
                    } else {
                        0.0
                    }
                });
                let added: f64 = n.iter().zip(&known).map(|(n, c)| n * c).sum();
                Batch {
                    mean_ns: b.mean_ns - fitted.cost_of(&n) + added,
                    ..b.clone()
                }
            })
            .collect();
        let c = calibrate(&swapped, on_path).unwrap();
        for e in &c.fitted_json.costs {
            let g = Group::ALL.iter().position(|g| g.word() == e.group).unwrap();
            assert!(
                e.ns.ci95[0] <= known[g] && known[g] <= e.ns.ci95[1],
                "{}: {:?} vs {}",
                e.group,
                e.ns,
                known[g]
            );
        }
        assert!((c.fitted_json.residual_ns - fitted.fitted_json.residual_ns).abs() < 1.0);
    }
}
