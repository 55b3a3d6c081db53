//! What a CPU's gaps come to: their distribution, a log-scale histogram, the longest ones
//! with their causes, and the lost share of each 100 ms of the window (the figure's samples).

use super::attribute::Parts;
use crate::model::noise::{Cause, GapBin, GapDistribution, LongGap};

/// The length of one slice of the window whose lost share is one sample, ns.
pub const SLICE_NS: u64 = 100_000_000;

/// Nearest-rank quantile of sorted values.
fn rank(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64
}

/// Median, p99, p99.9 and max of the gaps' lengths.
pub fn distribution(gaps: &[(u64, u64)]) -> GapDistribution {
    let mut v: Vec<u64> = gaps.iter().map(|g| g.1).collect();
    v.sort_unstable();
    GapDistribution {
        median_ns: rank(&v, 0.5),
        p99_ns: rank(&v, 0.99),
        p999_ns: rank(&v, 0.999),
        max_ns: v.last().copied().unwrap_or(0) as f64,
    }
}

/// The lower edge of bin `k`: two bins per octave from the threshold.
fn edge(threshold: u64, k: u32) -> u64 {
    (threshold.max(1) as f64 * 2f64.powf(k as f64 / 2.0)).round() as u64
}

/// Gaps in bins two per octave from the threshold, empty bins between kept (the figure's
/// axis is continuous), none past the last gap.
pub fn histogram(gaps: &[(u64, u64)], threshold: u64) -> Vec<GapBin> {
    let mut bins: Vec<GapBin> = Vec::new();
    for &(_, len) in gaps {
        let mut k = ((len as f64 / threshold.max(1) as f64).log2() * 2.0)
            .floor()
            .max(0.0) as u32;
        // Rounding of the edges: a length sits in the bin whose edges hold it.
        while k > 0 && len < edge(threshold, k) {
            k -= 1;
        }
        while len >= edge(threshold, k + 1) {
            k += 1;
        }
        while bins.len() <= k as usize {
            let lo = edge(threshold, bins.len() as u32);
            bins.push(GapBin {
                lo_ns: lo,
                count: 0,
                total_ns: 0,
            });
        }
        bins[k as usize].count += 1;
        bins[k as usize].total_ns += len;
    }
    bins
}

/// The `n` longest gaps, longest first (the earlier of two alike), each with its start after
/// `t0` and its causes by their share of it (none where `parts` is empty: no tracing).
pub fn longest(gaps: &[(u64, u64)], parts: &[Parts], t0: u64, n: usize) -> Vec<LongGap> {
    let mut idx: Vec<usize> = (0..gaps.len()).collect();
    idx.sort_by(|&a, &b| gaps[b].1.cmp(&gaps[a].1).then(a.cmp(&b)));
    idx.into_iter()
        .take(n)
        .map(|i| {
            let mut causes: Vec<(Cause, u64)> = Vec::new();
            for (c, ns) in parts.get(i).map(Vec::as_slice).unwrap_or(&[]) {
                match causes.iter_mut().find(|x| &x.0 == c) {
                    Some(x) => x.1 += ns,
                    None => causes.push((c.clone(), *ns)),
                }
            }
            causes.sort_by_key(|c| std::cmp::Reverse(c.1));
            LongGap {
                start_ns: gaps[i].0.saturating_sub(t0),
                len_ns: gaps[i].1,
                causes: causes.into_iter().map(|c| c.0).collect(),
            }
        })
        .collect()
}

/// The lost share (percent) of each whole 100 ms slice of `[t0, t1]`, a gap counted in the
/// slice it starts in; one slice of the whole window when it is shorter than two slices.
pub fn window_shares(gaps: &[(u64, u64)], t0: u64, t1: u64) -> Vec<f64> {
    let wall = t1.saturating_sub(t0).max(1);
    let slices = (wall / SLICE_NS).max(1);
    let slice = if slices == 1 { wall } else { SLICE_NS };
    let mut lost = vec![0u64; slices as usize];
    for &(start, len) in gaps {
        let i = (start.saturating_sub(t0) / slice) as usize;
        if let Some(l) = lost.get_mut(i) {
            *l += len;
        }
    }
    lost.into_iter()
        .map(|l| l as f64 * 100.0 / slice as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_distribution_is_nearest_rank() {
        let gaps: Vec<(u64, u64)> = (1..=1000).map(|i| (i, i)).collect();
        let d = distribution(&gaps);
        assert_eq!(
            (d.median_ns, d.p99_ns, d.p999_ns, d.max_ns),
            (500.0, 990.0, 999.0, 1000.0)
        );
        assert_eq!(distribution(&[]).max_ns, 0.0);
    }

    #[test]
    fn bins_are_two_per_octave_from_the_threshold() {
        let gaps = [(0, 100), (0, 141), (0, 142), (0, 399), (0, 400)];
        let h = histogram(&gaps, 100);
        let lows: Vec<u64> = h.iter().map(|b| b.lo_ns).collect();
        assert_eq!(lows, vec![100, 141, 200, 283, 400]);
        let counts: Vec<u64> = h.iter().map(|b| b.count).collect();
        assert_eq!(counts, vec![1, 2, 0, 1, 1]);
        assert_eq!(h[1].total_ns, 283);
    }

    #[test]
    fn the_longest_come_first_with_their_causes() {
        let gaps = [(1000, 50), (2000, 900), (3000, 900), (4000, 10)];
        let parts = vec![
            vec![],
            vec![
                (Cause::Softirq { vec: 1 }, 100),
                (Cause::Timer, 700),
                (Cause::Softirq { vec: 1 }, 100),
            ],
            vec![(Cause::Outside, 900)],
            vec![],
        ];
        let l = longest(&gaps, &parts, 500, 2);
        assert_eq!(l.len(), 2);
        assert_eq!((l[0].start_ns, l[0].len_ns), (1500, 900));
        assert_eq!(l[0].causes, vec![Cause::Timer, Cause::Softirq { vec: 1 }]);
        assert_eq!(l[1].causes, vec![Cause::Outside]);
        assert!(longest(&gaps, &[], 0, 9)[0].causes.is_empty());
    }

    #[test]
    fn shares_are_per_slice_in_percent() {
        let t0 = 1_000;
        let gaps = [(t0 + 10, 1_000_000), (t0 + SLICE_NS + 5, 2_000_000)];
        let s = window_shares(&gaps, t0, t0 + 3 * SLICE_NS + 7);
        assert_eq!(s, vec![1.0, 2.0, 0.0]);
        // Shorter than two slices: one share of the whole.
        let s = window_shares(&[(t0, 500_000)], t0, t0 + 50_000_000);
        assert_eq!(s, vec![1.0]);
    }
}
