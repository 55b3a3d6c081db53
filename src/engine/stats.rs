//! Robust statistics on timing samples: median with a distribution-free 95% interval,
//! MAD, p95 and modified-z outliers. Pure functions, tested on known samples.

use crate::model::Summary;

/// Modified z-score above which a sample is flagged (Iglewicz & Hoaglin).
pub const OUTLIER_Z: f64 = 3.5;

/// Summarize samples. Returns None for an empty slice (there is nothing to summarize).
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let n = sorted.len();
    let median = quantile_sorted(&sorted, 0.5);
    let (lo, hi) = median_ci_indices(n);
    let mad = mad_of(&sorted, median);
    Some(Summary {
        n,
        median,
        ci95: [sorted[lo], sorted[hi]],
        mean: sorted.iter().sum::<f64>() / n as f64,
        min: sorted[0],
        max: sorted[n - 1],
        p95: quantile_sorted(&sorted, 0.95),
        mad,
        outliers: outliers(samples, median, mad),
        ci95_within_run: None,
    })
}

/// Quantile of sorted data with linear interpolation between order statistics (type 7).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 1 {
        return sorted[0];
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let i = h.floor() as usize;
    let frac = h - i as f64;
    if i + 1 >= n {
        sorted[n - 1]
    } else {
        sorted[i] + frac * (sorted[i + 1] - sorted[i])
    }
}

/// Two-sided 97.5% quantile of Student's t with `df` degrees of freedom (df ≥ 1).
pub fn t_975(df: usize) -> f64 {
    const T: [f64; 10] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    ];
    match df {
        0 => f64::INFINITY,
        1..=10 => T[df - 1],
        11..=20 => 2.2,
        21..=30 => 2.06,
        _ => 1.96,
    }
}

/// The 95% interval of the value across rounds: a t interval on the rounds' medians (so the
/// drift between rounds, far apart in time, is part of it), centred on their mean. None with
/// fewer than two rounds. `rounds[i]` is the round of `values[i]`.
pub fn between_rounds(values: &[f64], rounds: &[u32]) -> Option<[f64; 2]> {
    if rounds.len() != values.len() {
        return None;
    }
    let mut ids: Vec<u32> = rounds.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let medians: Vec<f64> = ids
        .iter()
        .filter_map(|&r| {
            let v: Vec<f64> = values
                .iter()
                .zip(rounds)
                .filter(|(_, &x)| x == r)
                .map(|(v, _)| *v)
                .collect();
            (!v.is_empty()).then(|| median(&v))
        })
        .collect();
    let k = medians.len();
    if k < 2 {
        return None;
    }
    let mean = medians.iter().sum::<f64>() / k as f64;
    let var = medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    let half = t_975(k - 1) * (var / k as f64).sqrt();
    Some([mean - half, mean + half])
}

/// Widen a summary's interval to hold the between-rounds interval as well: the interval of
/// one run then covers the within-round spread and the drift between rounds.
pub fn widen_for_rounds(s: &mut Summary, values: &[f64], rounds: &[u32]) {
    if let Some([lo, hi]) = between_rounds(values, rounds) {
        s.ci95 = [s.ci95[0].min(lo), s.ci95[1].max(hi)];
    }
}

/// Median of unsorted data.
pub fn median(samples: &[f64]) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    quantile_sorted(&s, 0.5)
}

fn mad_of(sorted: &[f64], median: f64) -> f64 {
    let dev: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
    self::median(&dev)
}

/// Indices of samples with |modified z| > 3.5. When the MAD is zero, the mean absolute
/// deviation stands in (scaled by 1.2533, as Iglewicz & Hoaglin suggest); when both are zero
/// all samples are equal and none is an outlier.
pub fn outliers(samples: &[f64], median: f64, mad: f64) -> Vec<usize> {
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        let mean_ad =
            samples.iter().map(|x| (x - median).abs()).sum::<f64>() / samples.len() as f64;
        mean_ad * 1.253314
    };
    if scale <= 0.0 {
        return Vec::new();
    }
    samples
        .iter()
        .enumerate()
        .filter(|(_, x)| ((*x - median) / scale).abs() > OUTLIER_Z)
        .map(|(i, _)| i)
        .collect()
}

/// 0-based order-statistic indices (lo, hi) bracketing the median with ≥ 95% coverage,
/// from the Binomial(n, 1/2) distribution; distribution-free. For n < 6 no pair reaches
/// 95%, so the full range is returned (the interval is then honest but wide).
pub fn median_ci_indices(n: usize) -> (usize, usize) {
    assert!(n > 0, "median_ci_indices needs at least one sample");
    // Largest k (1-based lower order statistic) with P(Bin(n,1/2) <= k-1) <= 0.025.
    let mut cdf = 0.0;
    let mut ln_choose = 0.0; // ln C(n, 0)
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut k = 0usize; // 1-based rank of the lower bound
    for i in 0..n {
        cdf += (ln_choose + ln_half_n).exp();
        if cdf > 0.025 {
            break;
        }
        k = i + 1;
        ln_choose += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    if k == 0 || 2 * k > n {
        return (0, n - 1);
    }
    // Ranks k and n-k+1 (1-based) are indices k-1 and n-k.
    (k - 1, n - k)
}

/// Half-width of the median interval relative to the median (∞ when the median is 0).
pub fn relative_half_width(s: &Summary) -> f64 {
    if s.median == 0.0 {
        return f64::INFINITY;
    }
    (s.ci95[1] - s.ci95[0]) / 2.0 / s.median.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_quantiles_of_known_samples() {
        let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.median, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 5.0);
        assert_eq!(s.mean, 3.0);
        assert!((s.p95 - 4.8).abs() < 1e-12);
        assert_eq!(s.mad, 1.0);
        let even = summarize(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(even.median, 2.5);
    }

    #[test]
    fn median_interval_matches_binomial_tables() {
        // Classic table values (1-based ranks): n=10 -> (2,9), n=20 -> (6,15), n=100 -> (40,61).
        assert_eq!(median_ci_indices(10), (1, 8));
        assert_eq!(median_ci_indices(20), (5, 14));
        assert_eq!(median_ci_indices(100), (39, 60));
        // Too few samples for 95%: the whole range.
        assert_eq!(median_ci_indices(5), (0, 4));
        assert_eq!(median_ci_indices(1), (0, 0));
        // Large n must not underflow into nonsense.
        let (lo, hi) = median_ci_indices(10_000);
        assert!(lo > 4800 && lo < 4950 && hi == 9999 - lo, "{lo} {hi}");
    }

    #[test]
    fn interval_contains_median() {
        let samples: Vec<f64> = (0..50).map(|i| ((i * 37) % 50) as f64).collect();
        let s = summarize(&samples).unwrap();
        assert!(s.ci95[0] <= s.median && s.median <= s.ci95[1]);
        assert!(s.ci95[0] > s.min && s.ci95[1] < s.max);
    }

    #[test]
    fn outliers_are_flagged_not_dropped() {
        let mut samples = vec![10.0, 10.1, 9.9, 10.0, 10.2, 9.8, 10.05, 9.95];
        samples.push(30.0);
        let s = summarize(&samples).unwrap();
        assert_eq!(s.outliers, vec![8]);
        assert_eq!(s.n, 9);
        assert_eq!(s.max, 30.0);
    }

    #[test]
    fn zero_mad_falls_back_to_mean_deviation() {
        let samples = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 9.0];
        let s = summarize(&samples).unwrap();
        assert_eq!(s.mad, 0.0);
        assert_eq!(s.outliers, vec![6]);
        let flat = summarize(&[2.0; 8]).unwrap();
        assert!(flat.outliers.is_empty());
    }

    #[test]
    fn empty_or_non_finite_input_gives_none() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn relative_width() {
        let s = summarize(&[9.0, 10.0, 11.0]).unwrap();
        assert!((relative_half_width(&s) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn rounds_that_drift_widen_the_interval() {
        // Three rounds whose medians are 100, 110, 120: the within-sample interval of the
        // pooled data is narrow around 110; the rounds' t interval reaches past both ends.
        let mut values = Vec::new();
        let mut rounds = Vec::new();
        for (r, m) in [100.0, 110.0, 120.0].iter().enumerate() {
            for i in 0..20 {
                values.push(m + (i % 3) as f64 * 0.1);
                rounds.push(r as u32);
            }
        }
        let [lo, hi] = between_rounds(&values, &rounds).unwrap();
        assert!(lo < 100.0 && hi > 120.0, "[{lo}, {hi}]");
        let mut s = summarize(&values).unwrap();
        let before = s.ci95;
        widen_for_rounds(&mut s, &values, &rounds);
        assert!(s.ci95[0] < before[0] && s.ci95[1] > before[1]);
        // One round: nothing to add.
        assert!(between_rounds(&values[..20], &rounds[..20]).is_none());
        // Rounds that agree leave the interval as it was.
        let flat: Vec<f64> = values.iter().map(|_| 5.0).collect();
        let mut s = summarize(&flat).unwrap();
        widen_for_rounds(&mut s, &flat, &rounds);
        assert_eq!(s.ci95, [5.0, 5.0]);
    }
}
