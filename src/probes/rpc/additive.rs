//! The additive figures of a breakdown: the parts of every RPC add up exactly, and so do
//! their means over the RPCs, but not their medians (the median of a sum is not the sum of
//! medians, and several parts are bimodal). So a part's figure in a breakdown is its mean,
//! with the median beside it, and a note when the samples have two modes.
//!
//! The means are taken over the middle 80% of the RPCs by their traced span (the same RPCs
//! for every part, so the parts still add up exactly): an RPC whose vCPU the host or another
//! task took for hundreds of µs would otherwise swing every mean it enters. The client's
//! traced time and the calibration's batches are trimmed alike ([`trimmed_mean`]).

use crate::engine::modes::bimodal;
use crate::engine::stats::t_975;
use crate::model::{Additive, Estimate, ModeShares};
use std::collections::BTreeMap;

/// Smallest share of the RPCs each mode must hold, as engine::modes asks.
const MIN_SHARE: f64 = 0.15;

/// The mean of `samples` with its 95% interval (Student's t); None without samples.
pub fn mean(samples: &[f64]) -> Option<Estimate> {
    let n = samples.len();
    if n == 0 {
        return None;
    }
    let m = samples.iter().sum::<f64>() / n as f64;
    let half = if n < 2 {
        f64::INFINITY
    } else {
        let var = samples.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        t_975(n - 1) * (var / n as f64).sqrt()
    };
    Some(Estimate {
        value: m,
        ci95: [m - half, m + half],
    })
}

/// Share of the values left out at each end before a mean is taken.
pub const TRIM: f64 = 0.1;

/// Indexes of `values` without the lowest and the highest [`TRIM`] share, in their order.
pub fn middle(values: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let cut = (values.len() as f64 * TRIM).floor() as usize;
    let mut kept = order[cut..values.len() - cut].to_vec();
    kept.sort_unstable();
    kept
}

/// The mean of the middle 80% of `values`, with its 95% interval from the winsorized
/// variance (Tukey and McLaughlin); None without values.
pub fn trimmed_mean(values: &[f64]) -> Option<Estimate> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let cut = (n as f64 * TRIM).floor() as usize;
    let kept = &v[cut..n - cut];
    let m = kept.iter().sum::<f64>() / kept.len() as f64;
    let (lo, hi) = (v[cut], v[n - 1 - cut]);
    let w: Vec<f64> = v.iter().map(|x| x.clamp(lo, hi)).collect();
    let wm = w.iter().sum::<f64>() / n as f64;
    let half = if kept.len() < 2 {
        f64::INFINITY
    } else {
        let wvar = w.iter().map(|x| (x - wm).powi(2)).sum::<f64>() / (n - 1) as f64;
        let se = wvar.sqrt() / ((kept.len() as f64 / n as f64) * (n as f64).sqrt());
        t_975(kept.len() - 1) * se
    };
    Some(Estimate {
        value: m,
        ci95: [m - half, m + half],
    })
}

/// Two modes of a part's samples: a part that did not happen in some RPCs (0) and did in
/// others, each in at least 15% of them; otherwise two groups as engine::modes finds them.
pub fn modes(samples: &[f64]) -> Option<ModeShares> {
    let n = samples.len() as f64;
    let happened: Vec<f64> = samples.iter().copied().filter(|&x| x != 0.0).collect();
    let zero_share = 1.0 - happened.len() as f64 / n.max(1.0);
    if (MIN_SHARE..=1.0 - MIN_SHARE).contains(&zero_share) {
        return Some(ModeShares {
            low: 0.0,
            low_share: zero_share,
            high: crate::engine::stats::median(&happened),
            high_share: 1.0 - zero_share,
        });
    }
    let m = bimodal(samples)?;
    let total = (m.low_n + m.high_n) as f64;
    Some(ModeShares {
        low: m.low,
        low_share: m.low_n as f64 / total,
        high: m.high,
        high_share: m.high_n as f64 / total,
    })
}

/// The additive view of one part's samples and the events on its path per RPC.
pub fn of(samples: &[f64], events: BTreeMap<String, f64>) -> Option<Additive> {
    Some(Additive {
        mean: mean(samples)?,
        modes: modes(samples),
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two interleaved parts, each bimodal: their medians do not add up to the median of
    /// their sum, their means add up to its mean exactly.
    #[test]
    fn means_add_up_where_medians_do_not() {
        // send: 1.1 µs in 55% of RPCs, 4.3 µs in 45%; server: 2.1 µs in 57%, 5.7 µs in 43%,
        // interleaved (as on one CPU): medians 1.1 + 2.1 µs, the sum's median 6.4 µs.
        let send: Vec<f64> = (0..1000)
            .map(|i| if i % 20 < 11 { 1100.0 } else { 4300.0 })
            .collect();
        let server: Vec<f64> = (0..1000)
            .map(|i| if i % 7 < 4 { 2100.0 } else { 5700.0 })
            .collect();
        let total: Vec<f64> = send.iter().zip(&server).map(|(a, b)| a + b).collect();
        let med = crate::engine::stats::median;
        let sum_of_medians = med(&send) + med(&server);
        assert!((sum_of_medians - med(&total)).abs() / med(&total) > 0.1);
        let (a, b, t) = (
            mean(&send).unwrap(),
            mean(&server).unwrap(),
            mean(&total).unwrap(),
        );
        assert!((a.value + b.value - t.value).abs() < 1e-6);
        assert!(t.ci95[0] < t.value && t.value < t.ci95[1]);
        // Both modes are named with their shares.
        let m = modes(&send).unwrap();
        assert!(
            (m.low - 1100.0).abs() < 10.0 && (m.high - 4300.0).abs() < 10.0,
            "{m:?}"
        );
        assert!((m.low_share - 0.55).abs() < 1e-9, "{m:?}");
        // One tight mode: nothing to say.
        assert!(modes(&vec![1000.0; 100]).is_none());
    }

    /// A few RPCs that lost their CPU for a millisecond do not move the trimmed figures; the
    /// parts of the kept RPCs still add up to their spans' mean.
    #[test]
    fn trimming_leaves_out_the_stalled_rpcs_and_keeps_the_sum() {
        let mut spans: Vec<f64> = (0..100).map(|i| 5000.0 + (i % 10) as f64).collect();
        spans[3] = 1.0e6;
        spans[50] = 2.0e6;
        let t = trimmed_mean(&spans).unwrap();
        assert!((t.value - 5004.5).abs() < 1.0, "{t:?}");
        assert!(t.ci95[1] - t.ci95[0] < 10.0, "{t:?}");
        assert!(mean(&spans).unwrap().value > 30_000.0);
        let kept = middle(&spans);
        assert_eq!(kept.len(), 80);
        assert!(!kept.contains(&3) && !kept.contains(&50));
        // Two parts of every RPC, taken over the same kept RPCs, add up to the kept spans.
        let a: Vec<f64> = spans.iter().map(|s| s * 0.3).collect();
        let pick = |v: &[f64]| kept.iter().map(|&i| v[i]).collect::<Vec<f64>>();
        let b: Vec<f64> = spans.iter().zip(&a).map(|(s, x)| s - x).collect();
        let sum = mean(&pick(&a)).unwrap().value + mean(&pick(&b)).unwrap().value;
        assert!((sum - mean(&pick(&spans)).unwrap().value).abs() < 1e-6);
    }

    #[test]
    fn a_part_that_sometimes_did_not_happen_has_a_zero_mode() {
        let v: Vec<f64> = (0..100)
            .map(|i| if i < 30 { 0.0 } else { 2000.0 })
            .collect();
        let m = modes(&v).unwrap();
        assert_eq!((m.low, m.high), (0.0, 2000.0));
        assert!((m.low_share - 0.3).abs() < 1e-9);
        // Rarely 0: no mode of its own.
        let v: Vec<f64> = (0..100).map(|i| if i < 5 { 0.0 } else { 2000.0 }).collect();
        assert!(modes(&v).is_none());
        assert!(mean(&[]).is_none());
        assert!(mean(&[5.0]).unwrap().ci95[1].is_infinite());
    }
}
