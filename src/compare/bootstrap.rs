//! Percentile bootstrap of a ratio of medians, with a fixed-seed generator so the same two
//! runs always give the same interval (a CI gate must not flip on a re-run of the report).

/// xorshift64*: tiny, fast, and good enough to pick resample indices.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform index in 0..n (n > 0); the modulo bias is negligible for sample counts.
    pub fn index(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// FNV-1a, to derive a per-probe seed from its label: deterministic and independent of order.
pub fn seed_for(label: &str) -> u64 {
    label.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn resampled_median(rng: &mut Rng, src: &[f64], buf: &mut Vec<f64>) -> f64 {
    buf.clear();
    buf.extend((0..src.len()).map(|_| src[rng.index(src.len())]));
    median(buf)
}

/// One side of a comparison: raw samples, optional baseline samples, and the divisor. The
/// statistic is the derived figure as the engine computes it: with a baseline taken in pairs
/// (one baseline sample after each raw one), `median(raw[i] − baseline[i]) / units`, and the
/// pairs are resampled together; otherwise `(median(raw) − median(baseline)) / units`.
pub struct Samples<'a> {
    pub raw: &'a [f64],
    pub baseline: &'a [f64],
    pub units: f64,
}

impl Samples<'_> {
    /// Raw and baseline samples come in pairs.
    pub fn paired(&self) -> bool {
        !self.baseline.is_empty() && self.baseline.len() == self.raw.len()
    }

    /// The per-sample values the statistic is the median of (paired differences, or raw).
    pub fn values(&self) -> Vec<f64> {
        if self.paired() {
            self.raw
                .iter()
                .zip(self.baseline)
                .map(|(r, b)| r - b)
                .collect()
        } else {
            self.raw.to_vec()
        }
    }

    fn stat(&self, rng: &mut Rng, buf: &mut Vec<f64>) -> f64 {
        if self.paired() {
            buf.clear();
            let n = self.raw.len();
            buf.extend((0..n).map(|_| {
                let i = rng.index(n);
                self.raw[i] - self.baseline[i]
            }));
            return median(buf) / self.units;
        }
        let r = resampled_median(rng, self.raw, buf);
        let b = if self.baseline.is_empty() {
            0.0
        } else {
            resampled_median(rng, self.baseline, buf)
        };
        (r - b) / self.units
    }
}

/// Resamples used for every interval.
pub const RESAMPLES: usize = 2000;

/// 95% percentile-bootstrap interval of stat(B) / stat(A). None when a side has no samples
/// or the statistic of A is not positive in most resamples (a ratio would be meaningless).
pub fn ratio_interval(a: &Samples, b: &Samples, seed: u64) -> Option<[f64; 2]> {
    if a.raw.is_empty() || b.raw.is_empty() || a.units <= 0.0 || b.units <= 0.0 {
        return None;
    }
    let mut rng = Rng::new(seed);
    let mut buf = Vec::new();
    let mut ratios = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let sa = a.stat(&mut rng, &mut buf);
        let sb = b.stat(&mut rng, &mut buf);
        if sa > 0.0 && sb.is_finite() {
            ratios.push(sb / sa);
        }
    }
    if ratios.len() < RESAMPLES * 9 / 10 {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let q = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
    Some([q(0.025), q(0.975)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_covers_indices() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<usize> = (0..1000).map(|_| a.index(10)).collect();
        let ys: Vec<usize> = (0..1000).map(|_| b.index(10)).collect();
        assert_eq!(xs, ys);
        for k in 0..10 {
            assert!(xs.contains(&k));
        }
    }

    #[test]
    fn identical_samples_give_an_interval_around_one() {
        let s: Vec<f64> = (0..30).map(|i| 100.0 + f64::from(i % 7)).collect();
        let side = Samples {
            raw: &s,
            baseline: &[],
            units: 1.0,
        };
        let [lo, hi] = ratio_interval(&side, &side, 1).unwrap();
        assert!(lo <= 1.0 && hi >= 1.0, "[{lo}, {hi}]");
    }

    #[test]
    fn pairs_are_resampled_together() {
        // Raw and baseline drift together (each pair shares a slow or fast moment): the
        // paired differences are exactly 10, so the interval of the ratio is exactly 1; an
        // independent resampling of raw and baseline would see ±50 of noise.
        let base: Vec<f64> = (0..40).map(|i| 100.0 + 50.0 * ((i % 2) as f64)).collect();
        let raw: Vec<f64> = base.iter().map(|b| b + 10.0).collect();
        let side = Samples {
            raw: &raw,
            baseline: &base,
            units: 1.0,
        };
        assert!(side.paired());
        let [lo, hi] = ratio_interval(&side, &side, 5).unwrap();
        assert_eq!((lo, hi), (1.0, 1.0));
    }

    #[test]
    fn baseline_is_subtracted_before_the_ratio() {
        // raw 110 − baseline 10 = 100 vs raw 210 − 10 = 200: ratio 2, not 210/110.
        let a: Vec<f64> = vec![110.0; 20];
        let b: Vec<f64> = vec![210.0; 20];
        let base = vec![10.0; 20];
        let [lo, hi] = ratio_interval(
            &Samples {
                raw: &a,
                baseline: &base,
                units: 1.0,
            },
            &Samples {
                raw: &b,
                baseline: &base,
                units: 1.0,
            },
            3,
        )
        .unwrap();
        assert!((lo - 2.0).abs() < 1e-9 && (hi - 2.0).abs() < 1e-9);
    }
}
