//! From samples to figures: raw, baseline, their difference and the derived value, each with
//! its interval. A derived value whose interval reaches zero is "below resolution", never a
//! number (DESIGN.md principle 2).

use super::canary;
use super::stats::{summarize, widen_for_rounds};
use crate::model::{Status, Summary};

/// Summaries of one measurement's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub raw: Summary,
    pub baseline: Option<Summary>,
    pub difference: Option<Summary>,
    pub value: Option<Summary>,
    pub status: Status,
}

/// Derive the value per unit. Raw and baseline samples are interleaved pairs, so the
/// difference is taken pairwise (drift between pairs cancels) and its median interval is the
/// distribution-free one of the paired differences. Without a baseline, value = raw / units.
pub fn derive(raw: &[f64], baseline: &[f64], units_per_iteration: f64) -> Option<Derived> {
    let raw_s = summarize(raw)?;
    let scale = |s: &Summary| scale_summary(s, 1.0 / units_per_iteration);
    if baseline.is_empty() {
        return Some(Derived {
            value: Some(scale(&raw_s)),
            raw: raw_s,
            baseline: None,
            difference: None,
            status: Status::Ok,
        });
    }
    let base_s = summarize(baseline)?;
    let diffs: Vec<f64> = raw.iter().zip(baseline).map(|(r, b)| r - b).collect();
    let diff_s = summarize(&diffs)?;
    let resolved = diff_s.ci95[0] > 0.0;
    Some(Derived {
        value: resolved.then(|| scale(&diff_s)),
        status: if resolved {
            Status::Ok
        } else {
            Status::BelowResolution
        },
        raw: raw_s,
        baseline: Some(base_s),
        difference: Some(diff_s),
    })
}

/// Whether a subtraction's difference interval [lo, hi] is entirely below zero: the "with"
/// case was faster than the "without" case it is supposed to add to, so the difference is
/// not a cost and is never printed as one ([`crate::model::RemarkKind::NegativeDifference`]).
pub fn negative_finding(lo: f64, hi: f64) -> bool {
    lo <= hi && hi < 0.0
}

/// [`derive`], with every interval widened to hold the drift between rounds (`rounds[i]` is
/// the round of sample pair i; empty = one block). The value is resolved if the paired
/// differences' own interval stays above zero, and a figure whose widened interval reaches
/// beyond ±50% of it is unstable (rounds that disagree widen it so: a t interval on their
/// medians), even where the widened interval reaches zero.
pub fn derive_in_rounds(
    raw: &[f64],
    baseline: &[f64],
    rounds: &[u32],
    units_per_iteration: f64,
) -> Option<Derived> {
    let mut d = widened_for_rounds(raw, baseline, rounds, units_per_iteration)?;
    d.status = Status::of_figure(d.value.as_ref(), d.status);
    Some(d)
}

/// [`derive`] with the intervals widened by the rounds' drift.
fn widened_for_rounds(
    raw: &[f64],
    baseline: &[f64],
    rounds: &[u32],
    units_per_iteration: f64,
) -> Option<Derived> {
    let mut d = derive(raw, baseline, units_per_iteration)?;
    if rounds.len() != raw.len() {
        return Some(d);
    }
    widen_for_rounds(&mut d.raw, raw, rounds);
    if let Some(b) = d.baseline.as_mut() {
        widen_for_rounds(b, baseline, rounds);
    }
    match d.difference.as_mut() {
        Some(diff) => {
            // Resolved is decided within the rounds: when each round's pairs tell the figure
            // from zero but the rounds disagree on its size, the widened interval may reach
            // zero, and the figure is unstable (noise between rounds), not below resolution.
            let resolved = diff.ci95[0] > 0.0;
            let diffs: Vec<f64> = raw.iter().zip(baseline).map(|(r, b)| r - b).collect();
            widen_for_rounds(diff, &diffs, rounds);
            d.value = resolved.then(|| scale_summary(diff, 1.0 / units_per_iteration));
            d.status = if resolved {
                Status::Ok
            } else {
                Status::BelowResolution
            };
        }
        None => d.value = Some(scale_summary(&d.raw, 1.0 / units_per_iteration)),
    }
    Some(d)
}

/// A measurement's samples as its figure uses them (see [`derive_judged`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub derived: Derived,
    /// The raw samples the figure comes from (all of them, or those on a fast core).
    pub raw: Vec<f64>,
    /// What was left out and why, when the canary split the samples.
    pub warning: Option<crate::model::Remark>,
}

/// A measurement's samples as they were taken: raw and baseline (empty without one) paired
/// by index, each sample's round, and the canary's reading before each (empty: untagged).
#[derive(Debug, Clone, Copy)]
pub struct Samples<'a> {
    pub raw: &'a [f64],
    pub baseline: &'a [f64],
    pub rounds: &'a [u32],
    pub tags: &'a [f64],
}

impl<'a> Samples<'a> {
    /// The samples a measurement carries.
    pub fn of(m: &'a crate::model::Measurement) -> Samples<'a> {
        Samples {
            raw: &m.samples,
            baseline: &m.baseline_samples,
            rounds: &m.sample_rounds,
            tags: &m.sample_canary,
        }
    }
}

/// [`derive_in_rounds`] after the core-speed canary's judgement (engine::canary): `tags[i]`
/// is the reading before sample i and `fastest` the run's fastest reading. Samples that ran
/// on a slowed core are left out of the figure when enough others remain, so a run whose
/// share of the host's slow state differs from the last run's still reports the same cost;
/// the warning gives what the slowed samples read. Without tags every sample counts.
pub fn derive_judged(
    samples: Samples<'_>,
    fastest: Option<f64>,
    units_per_iteration: f64,
    raw_unit: &crate::units::Unit,
) -> Option<Judged> {
    let Samples {
        raw,
        baseline,
        rounds,
        tags,
    } = samples;
    let split = fastest.and_then(|b| canary::split_in_rounds(tags, raw, rounds, b));
    let warning = split.as_ref().map(|s| canary::warning_for(s, raw_unit));
    let (raw, baseline, rounds) = match split.filter(|s| s.leave_out) {
        Some(s) => canary::keep_fast(&s, raw, baseline, rounds),
        None => (raw.to_vec(), baseline.to_vec(), rounds.to_vec()),
    };
    Some(Judged {
        derived: derive_in_rounds(&raw, &baseline, &rounds, units_per_iteration)?,
        raw,
        warning,
    })
}

/// Multiply every location/scale statistic of a summary by `k` (> 0).
pub fn scale_summary(s: &Summary, k: f64) -> Summary {
    Summary {
        n: s.n,
        median: s.median * k,
        ci95: [s.ci95[0] * k, s.ci95[1] * k],
        mean: s.mean * k,
        min: s.min * k,
        max: s.max * k,
        p95: s.p95 * k,
        mad: s.mad * k,
        outliers: s.outliers.clone(),
        ci95_within_run: s.ci95_within_run.map(|[a, b]| [a * k, b * k]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_on_a_slowed_core_are_left_out_when_enough_remain() {
        // syscall.null as recorded on the VM: 175 ns on a fast core, 240 ns slowed, with the
        // canary's readings before each sample.
        let raw = [175.0, 176.0, 240.0, 241.0, 239.0, 174.0, 175.0, 176.0];
        let tags = [0.83, 0.84, 1.20, 1.25, 1.22, 0.82, 0.83, 0.85];
        let rounds = [0, 0, 1, 1, 1, 2, 2, 2];
        let all = derive_judged(
            Samples {
                raw: &raw,
                baseline: &[],
                rounds: &rounds,
                tags: &[],
            },
            Some(0.82),
            1.0,
            &crate::units::Unit::NS,
        )
        .unwrap();
        assert!(all.warning.is_none() && all.raw.len() == 8);
        let judged = |fastest: Option<f64>| {
            let s = Samples {
                raw: &raw,
                baseline: &[],
                rounds: &rounds,
                tags: &tags,
            };
            derive_judged(s, fastest, 1.0, &crate::units::Unit::NS).unwrap()
        };
        let j = judged(Some(0.82));
        assert_eq!(j.raw, vec![175.0, 176.0, 174.0, 175.0, 176.0]);
        assert_eq!(j.derived.value.unwrap().median, 175.0);
        let w = crate::report::remarks::words(&j.warning.unwrap());
        assert!(w.contains("3 of 8 samples") && w.contains("240 ns"), "{w}");
        // No fastest reading, or nothing above the threshold: every sample counts.
        let none = judged(None);
        assert_eq!(none.raw.len(), 8);
        let fast = judged(Some(1.2));
        assert_eq!((fast.raw.len(), fast.warning), (8, None));
        // Paired baseline samples leave with their raw partners.
        let base = [100.0; 8];
        let j = derive_judged(
            Samples {
                raw: &raw,
                baseline: &base,
                rounds: &rounds,
                tags: &tags,
            },
            Some(0.82),
            1.0,
            &crate::units::Unit::NS,
        )
        .unwrap();
        assert_eq!(j.derived.difference.unwrap().median, 75.0);
    }

    #[test]
    fn a_round_mostly_slowed_is_left_out_whole_with_its_edge_sample() {
        // ctx.yield fifo as recorded in `oscost run` (base build): round 3
        // ran slowed but for its first sample, whose baseline ran slowed (1447 ns).
        let raw = [
            3405.4, 3638.2, 3623.6, 3615.2, 3633.7, 3632.1, 3638.5, 3626.4, 3631.0, 3426.0, 3661.1,
            3661.7, 3641.1, 3645.3, 3664.4, 3658.1, 3660.5, 3691.4, 3075.8, 4522.0, 4801.0, 4581.6,
            4526.8, 4605.0, 4562.5, 4551.7, 4674.5,
        ];
        let base = [
            1184.7, 1183.8, 1185.1, 1183.9, 1184.7, 1185.6, 1186.6, 1185.2, 1180.2, 1180.1, 1154.4,
            1155.3, 1148.7, 1151.4, 1148.8, 1153.1, 1173.0, 1158.0, 1447.3, 1443.5, 1476.2, 1469.4,
            1455.9, 1462.3, 1451.4, 1466.9, 1455.7,
        ];
        let rounds: Vec<u32> = (0..27).map(|i| i / 9).collect();
        let mut tags = vec![1.5112; 27];
        tags[19..].copy_from_slice(&[
            2.7858, 2.944, 2.5177, 2.0848, 2.1291, 2.8422, 2.8382, 2.8158,
        ]);
        let best = 1.5102;
        let rel = |s: &Summary| (s.ci95[1] - s.ci95[0]) / 2.0 / s.median;
        let j = derive_judged(
            Samples {
                raw: &raw,
                baseline: &base,
                rounds: &rounds,
                tags: &tags,
            },
            Some(best),
            2.0,
            &crate::units::Unit::NS,
        )
        .unwrap();
        assert_eq!(j.raw.len(), 18);
        let v = j.derived.value.unwrap();
        assert!(rel(&v) < 0.2 && (v.median - 1240.0).abs() < 20.0, "{v:?}");
        assert!(crate::report::remarks::words(&j.warning.unwrap())
            .contains("slowed for 9 of 27 samples"));
        // By the tags alone the edge sample stays, stands for its round, and the rounds' t
        // interval is ±50%.
        let fast: Vec<bool> = tags.iter().map(|&t| !canary::slowed(t, best)).collect();
        let d = derive_in_rounds(
            &canary::select(&raw, &fast, true),
            &canary::select(&base, &fast, true),
            &canary::select(&rounds, &fast, true),
            2.0,
        )
        .unwrap();
        assert!(rel(&d.value.unwrap()) > 0.4);
    }

    #[test]
    fn samples_the_canary_tags_are_never_left_out_when_they_read_faster() {
        // ipc as seen on the VM: one sample tagged slowed read 12.2 µs, the others 28.4 µs.
        // Leaving it out would take the figure from the slower samples: it stays in.
        let mut raw = vec![28_400.0; 18];
        raw.insert(4, 12_200.0);
        let mut tags = vec![0.83; 19];
        tags[4] = 1.4;
        let j = derive_judged(
            Samples {
                raw: &raw,
                baseline: &[],
                rounds: &[],
                tags: &tags,
            },
            Some(0.82),
            1.0,
            &crate::units::Unit::NS,
        )
        .unwrap();
        assert_eq!(j.raw.len(), 19, "a faster sample was left out");
        let w = crate::report::remarks::words(&j.warning.unwrap());
        assert!(
            w.contains("read faster") && w.contains("figure from all"),
            "{w}"
        );
    }

    #[test]
    fn a_direct_figure_wider_than_half_of_itself_is_unstable() {
        // mem.latency as seen at 6 MiB: readings from 3 to 170 ns.
        let raw = [3.1, 170.0, 42.7, 5.0, 160.0, 44.0, 90.0, 4.0, 120.0];
        let d = derive_in_rounds(&raw, &[], &[], 1.0).unwrap();
        assert_eq!(d.status, Status::Unstable);
        // The summary stays (the JSON keeps the spread).
        assert!(d.value.unwrap().is_unstable());
        // A tight figure is not.
        let d = derive_in_rounds(&[10.0, 10.1, 9.9, 10.0, 10.05], &[], &[], 1.0).unwrap();
        assert_eq!(d.status, Status::Ok);
    }

    #[test]
    fn rounds_that_disagree_beyond_their_intervals_make_a_figure_unstable() {
        // Three rounds, each tight around its own level (10, 20, 40): pooled, the samples'
        // median interval is narrow; the rounds' t interval is not.
        let mut raw = Vec::new();
        let mut rounds = Vec::new();
        for (r, level) in [10.0, 20.0, 40.0].iter().enumerate() {
            for i in 0..10 {
                raw.push(level + (i % 3) as f64 * 0.01);
                rounds.push(r as u32);
            }
        }
        assert_eq!(derive(&raw, &[], 1.0).unwrap().status, Status::Ok);
        let d = derive_in_rounds(&raw, &[], &rounds, 1.0).unwrap();
        assert_eq!(d.status, Status::Unstable);
    }

    #[test]
    fn a_subtracted_figure_reaching_zero_stays_below_resolution() {
        let raw: Vec<f64> = (0..20).map(|i| 10.0 + ((i * 7) % 5) as f64 * 0.1).collect();
        let base: Vec<f64> = (0..20)
            .map(|i| 10.2 + ((i * 3) % 5) as f64 * 0.05)
            .collect();
        let d = derive_in_rounds(&raw, &base, &[], 1.0).unwrap();
        assert_eq!(d.status, Status::BelowResolution);
    }

    #[test]
    fn a_negative_difference_is_a_finding_not_a_value() {
        let raw: Vec<f64> = (0..20).map(|i| 40.0 + (i % 3) as f64).collect();
        let base: Vec<f64> = (0..20).map(|i| 50.0 + (i % 3) as f64).collect();
        let d = derive(&raw, &base, 1.0).unwrap();
        assert!(d.value.is_none());
        let diff = d.difference.unwrap();
        assert!(negative_finding(diff.ci95[0], diff.ci95[1]));
        // An interval that reaches zero is below resolution, not this finding.
        assert!(!negative_finding(-1.0, 0.5));
        assert!(!negative_finding(1.0, 2.0));
    }

    #[test]
    fn drift_between_rounds_widens_the_value_and_makes_it_unstable() {
        // Differences of 1, 2 and -1.5 in three rounds: each round is tight, the pooled
        // interval excludes zero, the rounds do not agree on the sign. Noise between rounds,
        // not a figure too small to see: unstable, never below resolution.
        let mut raw = Vec::new();
        let mut base = Vec::new();
        let mut rounds = Vec::new();
        for (r, d) in [1.0, 2.0, -1.5].iter().enumerate() {
            for i in 0..30 {
                raw.push(100.0 + d + (i % 2) as f64 * 0.01);
                base.push(100.0);
                rounds.push(r as u32);
            }
        }
        let pooled = derive(&raw, &base, 1.0).unwrap();
        assert_eq!(pooled.status, Status::Ok);
        let d = derive_in_rounds(&raw, &base, &rounds, 1.0).unwrap();
        assert_eq!(d.status, Status::Unstable);
        assert!(d.value.is_some());
        let w = d.difference.unwrap().ci95;
        let p = pooled.difference.unwrap().ci95;
        assert!(w[0] < p[0] && w[1] > p[1], "{w:?} vs {p:?}");
    }

    #[test]
    fn subtraction_with_interval() {
        let raw: Vec<f64> = (0..20).map(|i| 430.0 + (i % 5) as f64).collect();
        let base: Vec<f64> = (0..20).map(|i| 50.0 + (i % 3) as f64).collect();
        let d = derive(&raw, &base, 2.0).unwrap();
        assert_eq!(d.status, Status::Ok);
        let v = d.value.unwrap();
        assert!((v.median - 190.0).abs() < 2.0, "{}", v.median);
        assert!(v.ci95[0] <= v.median && v.median <= v.ci95[1]);
        assert!(d.baseline.unwrap().median > 49.0);
    }

    #[test]
    fn interval_reaching_zero_is_below_resolution() {
        // The mechanism adds nothing measurable: differences straddle zero.
        let raw: Vec<f64> = (0..20).map(|i| 10.0 + ((i * 7) % 5) as f64 * 0.1).collect();
        let base: Vec<f64> = (0..20)
            .map(|i| 10.2 + ((i * 3) % 5) as f64 * 0.05)
            .collect();
        let d = derive(&raw, &base, 1.0).unwrap();
        assert_eq!(d.status, Status::BelowResolution);
        assert!(d.value.is_none());
        // The difference is still kept for inspection.
        assert!(d.difference.is_some());
    }

    #[test]
    fn negative_difference_is_below_resolution() {
        let d = derive(&[5.0; 10], &[6.0; 10], 1.0).unwrap();
        assert_eq!(d.status, Status::BelowResolution);
    }

    #[test]
    fn no_baseline_scales_raw() {
        let d = derive(&[100.0, 102.0, 98.0], &[], 2.0).unwrap();
        assert_eq!(d.value.unwrap().median, 50.0);
        assert!(d.baseline.is_none() && d.difference.is_none());
    }
}
