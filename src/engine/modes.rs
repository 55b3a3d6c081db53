//! Bimodal samples: two groups of sample times, each tight, far apart. One median of such
//! samples describes neither group (a warm-up that ended too early, a frequency or
//! scheduler change mid-measurement), so the measurement says so instead of hiding it.

use crate::engine::stats::median;
use crate::model::Remark;
use crate::units::Unit;

/// Two groups found in a set of samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Modes {
    pub low: f64,
    pub low_n: usize,
    pub high: f64,
    pub high_n: usize,
    /// Whether the groups follow one another in time (all of one before most of the other):
    /// a change of state during the measurement rather than two interleaved behaviours.
    pub in_sequence: bool,
}

/// Smallest share of the samples each group must hold.
const MIN_SHARE: f64 = 0.15;
/// Smallest distance between the groups' medians, relative to the lower one.
const MIN_SEPARATION: f64 = 0.08;
/// The gap between the groups must exceed this many times the groups' own spread (MAD).
const GAP_OVER_SPREAD: f64 = 4.0;

/// Split `samples` (in time order) at their widest gap and report two modes when each side
/// holds at least [`MIN_SHARE`] of them, their medians differ by [`MIN_SEPARATION`] or more,
/// and the gap is wide against each side's spread.
pub fn bimodal(samples: &[f64]) -> Option<Modes> {
    let n = samples.len();
    let min_n = ((n as f64 * MIN_SHARE).ceil() as usize).max(3);
    if n < 2 * min_n {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (cut, gap) = (min_n..=n - min_n)
        .map(|i| (i, sorted[i] - sorted[i - 1]))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (lo, hi) = sorted.split_at(cut);
    let (ml, mh) = (median(lo), median(hi));
    let mad = |v: &[f64], m: f64| median(&v.iter().map(|x| (x - m).abs()).collect::<Vec<_>>());
    let spread = mad(lo, ml).max(mad(hi, mh)).max(ml * 1e-3);
    if ml <= 0.0 || (mh - ml) / ml < MIN_SEPARATION || gap < GAP_OVER_SPREAD * spread {
        return None;
    }
    let threshold = sorted[cut - 1];
    let high_first = {
        let first_half = &samples[..n / 2];
        let highs_early = first_half.iter().filter(|&&x| x > threshold).count();
        highs_early as f64 >= 0.8 * hi.len().min(first_half.len()) as f64
    };
    let low_first = {
        let first_half = &samples[..n / 2];
        let lows_early = first_half.iter().filter(|&&x| x <= threshold).count();
        lows_early as f64 >= 0.8 * lo.len().min(first_half.len()) as f64
    };
    Some(Modes {
        low: ml,
        low_n: lo.len(),
        high: mh,
        high_n: hi.len(),
        in_sequence: high_first || low_first,
    })
}

/// The remark on bimodal samples, in the unit of the samples.
pub fn remark(m: &Modes, unit: &Unit) -> Remark {
    Remark::bimodal(
        &unit.to_string(),
        (m.low_n, m.low),
        (m.high_n, m.high),
        m.in_sequence,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warm_up_that_ended_too_early_is_two_modes_in_sequence() {
        let mut s = vec![270.0, 268.0, 272.0, 271.0, 269.0, 270.5];
        s.extend([
            203.0, 204.0, 202.5, 203.5, 204.5, 203.0, 202.0, 203.2, 203.9, 204.1,
        ]);
        let m = bimodal(&s).expect("two modes");
        assert_eq!((m.low_n, m.high_n), (10, 6));
        assert!(
            (m.low - 203.5).abs() < 1.0 && (m.high - 270.25).abs() < 1.0,
            "{m:?}"
        );
        assert!(m.in_sequence);
        let w = crate::report::remarks::words(&remark(&m, &Unit::NS));
        assert!(
            w.contains("bimodal") && w.contains("one after the other"),
            "{w}"
        );
        // Through the one formatter: three significant digits, never "203.5000 ns".
        assert!(
            w.contains("near 204 ns") || w.contains("near 203 ns"),
            "{w}"
        );
        assert!(!w.contains(".0000"), "{w}");
    }

    #[test]
    fn alternating_modes_are_reported_as_interleaved() {
        let s: Vec<f64> = (0..20)
            .map(|i| {
                if i % 2 == 0 {
                    100.0 + i as f64 * 0.01
                } else {
                    150.0
                }
            })
            .collect();
        let m = bimodal(&s).expect("two modes");
        assert!(!m.in_sequence, "{m:?}");
    }

    #[test]
    fn one_mode_with_noise_or_a_few_outliers_is_not_bimodal() {
        let s: Vec<f64> = (0..30).map(|i| 100.0 + (i * 37 % 11) as f64).collect();
        assert_eq!(bimodal(&s), None);
        let mut o = vec![100.0; 28];
        o.extend([300.0, 310.0]);
        assert_eq!(bimodal(&o), None, "two outliers are outliers, not a mode");
        assert_eq!(bimodal(&[1.0, 2.0]), None);
        // Two groups only 3% apart: one mode for practical purposes.
        let mut c = vec![100.0; 10];
        c.extend(vec![103.0; 10]);
        assert_eq!(bimodal(&c), None);
    }
}
