//! Knees on a latency-versus-size curve: where the cost steps up because the working set
//! stopped fitting a cache (or the TLB's reach). A pure function of the measured points, so
//! it is tested on synthetic curves with known steps, and both `mem latency` and `ctx sweep`
//! use it the same way.
//!
//! Method: a step between neighbouring sizes is significant when the larger size costs at
//! least `min_step` more *and* the two 95% intervals do not overlap (noise cannot make a
//! knee). Runs of consecutive significant steps form one transition; a transition is a knee
//! when its total rise is at least `min_rise` between the facing ends of the intervals (the
//! upper end before, the lower end after), so the same data always give the same knees and a
//! knee is never one that the points' own uncertainty could erase.
//!
//! A cache of size C explains a rise only when the working set crosses C during it: C is at
//! least the last size before the rise (a flat point beyond C proves crossing C cost nothing
//! there) and at most where the rise ends. Associativity lets a rise start a little before C,
//! so C may also lie up to `tolerance`× beyond the first size that costs more. A knee's
//! matches are ordered by how close they lie to where the rise starts, so its label names the
//! level nearest the step.

use serde::{Deserialize, Serialize};

/// One measured point: size in bytes, the median and its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

/// A detected rise in the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Last size on the lower level (bytes).
    pub last_below: f64,
    /// First size that costs significantly more (bytes).
    pub first_above: f64,
    /// Size where the rise ends (bytes).
    pub end: f64,
    /// Value at `last_below`.
    pub y_before: f64,
    /// Value at `end` (the point the rise is measured to).
    pub y_after: f64,
    /// Value at `first_above` (equal to `y_after` when the rise is one step).
    #[serde(default)]
    pub y_first_above: f64,
    /// Cache boundaries (label, bytes on this curve's axis) that fall on this knee.
    pub matches: Vec<String>,
}

impl Knee {
    /// " (L2 total, 1m/4)" — the first cache boundary this knee matches, for its label on a
    /// figure; empty when it matches none. The boundary's own parenthesis becomes a comma:
    /// "knee 48 KiB (L1d (32k))" read as a typo.
    pub fn match_suffix(&self) -> String {
        self.matches
            .first()
            .map(
                |m| match m.strip_suffix(')').and_then(|m| m.rsplit_once(" (")) {
                    Some((level, size)) => format!(" ({level}, {size})"),
                    None => format!(" ({m})"),
                },
            )
            .unwrap_or_default()
    }

    /// One line for reports, citing the two points it compares (the last size before the
    /// rise and the size where it ends) and, when the rise spans several steps, where it
    /// starts: "64k → 2m (1.85×, 3.28 µs → 6.08 µs; rises from 256k at 4.37 µs); matches
    /// ...", with `y` formatting the curve's values in its own unit.
    pub fn describe(&self, y: impl Fn(f64) -> String) -> String {
        let size = |b: f64| crate::units::size::fmt_size(b as u64);
        let via = if self.end > self.first_above && self.y_first_above > 0.0 {
            format!(
                "; rises from {} at {}",
                size(self.first_above),
                y(self.y_first_above)
            )
        } else {
            String::new()
        };
        format!(
            "{} → {} ({:.2}×, {} → {}{via}); {}",
            size(self.last_below),
            size(self.end),
            self.rise(),
            y(self.y_before),
            y(self.y_after),
            if self.matches.is_empty() {
                "matches no cache boundary".to_string()
            } else {
                format!("matches {}", self.matches.join(", "))
            }
        )
    }
    /// y_after / y_before.
    pub fn rise(&self) -> f64 {
        self.y_after / self.y_before
    }
}

/// Thresholds of the detector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KneeParams {
    pub min_step: f64,
    pub min_rise: f64,
    pub tolerance: f64,
}

impl Default for KneeParams {
    fn default() -> Self {
        KneeParams {
            min_step: 0.05,
            min_rise: 0.25,
            tolerance: 1.5,
        }
    }
}

/// Detect knees. Points with x ≤ 0 or y ≤ 0 (no log position, or no value) are skipped; the
/// rest are sorted by size.
pub fn detect(points: &[CurvePoint], p: &KneeParams) -> Vec<Knee> {
    let mut pts: Vec<CurvePoint> = points
        .iter()
        .copied()
        .filter(|q| q.x > 0.0 && q.y > 0.0 && q.y.is_finite())
        .collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    let significant =
        |a: &CurvePoint, b: &CurvePoint| b.y >= a.y * (1.0 + p.min_step) && b.lo > a.hi;
    let mut knees = Vec::new();
    let mut i = 0;
    while i + 1 < pts.len() {
        if !significant(&pts[i], &pts[i + 1]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i + 1;
        while end + 1 < pts.len() && significant(&pts[end], &pts[end + 1]) {
            end += 1;
        }
        let (a, b) = (pts[start], pts[end]);
        // The rise must hold even at the pessimistic ends of the two intervals, so a knee
        // that noise could move or erase is not reported.
        if b.lo >= a.hi * (1.0 + p.min_rise) {
            knees.push(Knee {
                last_below: a.x,
                first_above: pts[start + 1].x,
                end: b.x,
                y_before: a.y,
                y_after: b.y,
                y_first_above: pts[start + 1].y,
                matches: Vec::new(),
            });
        }
        i = end;
    }
    knees
}

/// Whether the working set crosses a boundary of `bytes` (on the curve's axis) during
/// `knee`'s rise: never below its last flat size, at most where the rise ends or `tolerance`×
/// beyond its first raised size (associativity starts a rise early).
pub fn boundary_matches(knee: &Knee, bytes: f64, tolerance: f64) -> bool {
    bytes >= knee.last_below && bytes <= knee.end.max(knee.first_above * tolerance)
}

/// How far a boundary lies from where `knee`'s rise starts, as a ratio ≥ 1 on a log axis.
fn distance_from_rise(knee: &Knee, bytes: f64) -> f64 {
    let start = knee.first_above.max(f64::MIN_POSITIVE);
    let r = bytes.max(f64::MIN_POSITIVE) / start;
    if r >= 1.0 {
        r
    } else {
        1.0 / r
    }
}

/// Record on each knee which of `boundaries` (label, bytes on the curve's axis) match it,
/// nearest to where its rise starts first, and return, per boundary, whether some knee
/// matched.
pub fn match_boundaries(
    knees: &mut [Knee],
    boundaries: &[(String, f64)],
    tolerance: f64,
) -> Vec<(String, bool)> {
    let hits = boundaries
        .iter()
        .map(|(label, bytes)| {
            let hit = knees.iter().any(|k| boundary_matches(k, *bytes, tolerance));
            (label.clone(), hit)
        })
        .collect();
    for k in knees.iter_mut() {
        let mut on: Vec<&(String, f64)> = boundaries
            .iter()
            .filter(|(_, bytes)| boundary_matches(k, *bytes, tolerance))
            .collect();
        on.sort_by(|a, b| distance_from_rise(k, a.1).total_cmp(&distance_from_rise(k, b.1)));
        k.matches.extend(on.into_iter().map(|(l, _)| l.clone()));
    }
    hits
}

/// Label every knee from all of `boundaries`, so a knee's label depends on the knee and the
/// caches alone, and return (label, knee found?) for the boundaries the measured sizes can
/// show: from the smallest size to below the largest (`sizes`), where a knee has points on
/// both sides. A boundary at or beyond the largest size can still name a knee whose rise
/// reaches it: filtering before matching made a knee ending at the largest size "match no
/// cache boundary" in a run that stopped there and match it in one that measured further.
pub fn match_shown(
    knees: &mut [Knee],
    boundaries: &[(String, f64)],
    sizes: (f64, f64),
    tolerance: f64,
) -> Vec<(String, bool)> {
    let hits = match_boundaries(knees, boundaries, tolerance);
    hits.into_iter()
        .zip(boundaries)
        .filter(|(_, (_, b))| *b >= sizes.0 && *b < sizes.1)
        .map(|(h, _)| h)
        .collect()
}

/// Labels of the cache boundaries (label, knee found?) that no knee matched.
pub fn missed(boundaries: &[(String, bool)]) -> Vec<&str> {
    boundaries
        .iter()
        .filter(|(_, hit)| !hit)
        .map(|(l, _)| l.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: f64 = 1024.0;
    const M: f64 = 1024.0 * 1024.0;

    /// Sizes 4K..256M in powers of two and their 1.5× midpoints.
    fn grid() -> Vec<f64> {
        let mut v = Vec::new();
        let mut x = 4.0 * K;
        while x <= 256.0 * M {
            v.push(x);
            v.push(x * 1.5);
            x *= 2.0;
        }
        v
    }

    fn pt(x: f64, y: f64, rel: f64) -> CurvePoint {
        CurvePoint {
            x,
            y,
            lo: y * (1.0 - rel),
            hi: y * (1.0 + rel),
        }
    }

    /// A memory hierarchy with L1d 48K, L2 1M, L3 32M: flat levels, sharp steps.
    fn staircase() -> Vec<CurvePoint> {
        grid()
            .into_iter()
            .map(|x| {
                let y = if x <= 48.0 * K {
                    1.3
                } else if x <= M {
                    4.0
                } else if x <= 32.0 * M {
                    15.0
                } else {
                    80.0
                };
                pt(x, y, 0.01)
            })
            .collect()
    }

    #[test]
    fn knee_line_and_missed_boundaries() {
        let k = Knee {
            last_below: 32768.0,
            first_above: 49152.0,
            end: 49152.0,
            y_before: 1.0,
            y_after: 3.5,
            y_first_above: 3.5,
            matches: vec!["L1d (48k)".into()],
        };
        assert_eq!(
            k.describe(|v| format!("{v:.1} ns")),
            "32k → 48k (3.50×, 1.0 ns → 3.5 ns); matches L1d (48k)"
        );
        let b = vec![("L1d".to_string(), true), ("L2".to_string(), false)];
        assert_eq!(missed(&b), vec!["L2"]);
    }

    /// A recorded sweep: 64k 3.28, 256k 4.37, 2m 6.08 µs. The text must cite the two
    /// points it compares (64k and 2m), not 256k's size with 2m's value.
    #[test]
    fn a_multi_step_knee_cites_the_points_it_compares() {
        let pts = [
            pt(16.0 * K, 3.30, 0.01),
            pt(64.0 * K, 3.28, 0.01),
            pt(256.0 * K, 4.37, 0.01),
            pt(2.0 * M, 6.08, 0.01),
        ];
        let knees = detect(&pts, &KneeParams::default());
        assert_eq!(knees.len(), 1, "{knees:?}");
        assert_eq!(
            knees[0].describe(|v| format!("{v:.2} µs")),
            "64k → 2m (1.85×, 3.28 µs → 6.08 µs; rises from 256k at 4.37 µs); matches no \
             cache boundary"
        );
    }

    #[test]
    fn a_rise_that_the_intervals_could_erase_is_no_knee_and_same_data_same_knees() {
        // 10 → 13 (+30%) with ±4% intervals: 10.4 → 12.48 is only +20% at the facing ends.
        let pts = [pt(K, 10.0, 0.04), pt(2.0 * K, 13.0, 0.04)];
        assert!(detect(&pts, &KneeParams::default()).is_empty());
        // The same rise with tight intervals is a knee.
        let pts = [pt(K, 10.0, 0.01), pt(2.0 * K, 13.0, 0.01)];
        assert_eq!(detect(&pts, &KneeParams::default()).len(), 1);
        // Same data in any order: same knees.
        let mut a = staircase();
        let first = detect(&a, &KneeParams::default());
        a.reverse();
        a.swap(3, 17);
        assert_eq!(detect(&a, &KneeParams::default()), first);
    }

    #[test]
    fn finds_the_three_steps_and_matches_the_caches() {
        let mut knees = detect(&staircase(), &KneeParams::default());
        assert_eq!(knees.len(), 3, "{knees:?}");
        assert_eq!(knees[0].last_below, 48.0 * K);
        assert_eq!(knees[0].first_above, 64.0 * K);
        assert_eq!(knees[1].last_below, M);
        assert_eq!(knees[2].last_below, 32.0 * M);
        assert!((knees[2].rise() - 80.0 / 15.0).abs() < 1e-9);
        let b = vec![
            ("L1d".to_string(), 48.0 * K),
            ("L2".to_string(), M),
            ("L3".to_string(), 32.0 * M),
            ("imaginary L4".to_string(), 4.0 * M),
        ];
        let m = match_boundaries(&mut knees, &b, 1.5);
        assert_eq!(
            m.iter().map(|(_, ok)| *ok).collect::<Vec<_>>(),
            vec![true, true, true, false]
        );
        assert_eq!(knees[0].matches, vec!["L1d".to_string()]);
        assert_eq!(knees[1].matches, vec!["L2".to_string()]);
    }

    /// The sweep in README (N=4 on L1d 48k, L2 2m): flat up to 256k per process, then
    /// rising to 4m. The working set crossed L1d (48k per process, 12k in total) before the
    /// flat 64k point, so L1d explains nothing; the rise crosses L2 in total (2m/4 = 512k)
    /// first and L2 per process (2m) later. The old rule (a tolerance below the last flat
    /// size) named "L1d per process (48k)".
    #[test]
    fn a_knee_is_attributed_to_the_level_it_crosses() {
        let pts = [
            pt(4.0 * K, 2.91, 0.01),
            pt(16.0 * K, 2.92, 0.01),
            pt(64.0 * K, 2.93, 0.01),
            pt(256.0 * K, 3.30, 0.01),
            pt(M, 9.8, 0.02),
            pt(2.0 * M, 23.0, 0.03),
            pt(4.0 * M, 106.0, 0.05),
        ];
        let mut knees = detect(&pts, &KneeParams::default());
        assert_eq!(knees.len(), 1, "{knees:?}");
        assert_eq!(knees[0].last_below, 64.0 * K);
        let b = vec![
            ("L1d per process (48k)".to_string(), 48.0 * K),
            ("L1d total (48k/4)".to_string(), 12.0 * K),
            ("L2 per process (2m)".to_string(), 2.0 * M),
            ("L2 total (2m/4)".to_string(), 512.0 * K),
        ];
        let hits = match_boundaries(&mut knees, &b, 1.5);
        assert_eq!(
            hits.iter().map(|(_, ok)| *ok).collect::<Vec<_>>(),
            vec![false, false, true, true]
        );
        assert_eq!(
            knees[0].matches,
            vec![
                "L2 total (2m/4)".to_string(),
                "L2 per process (2m)".to_string()
            ]
        );
        assert_eq!(knees[0].match_suffix(), " (L2 total, 2m/4)");
        // A rise that starts a little before the cache (associativity) still names it.
        let mut early = detect(&staircase(), &KneeParams::default());
        let l2 = vec![("L2".to_string(), 2.0 * M)];
        match_boundaries(&mut early, &l2, 1.5);
        assert_eq!(early[1].matches, vec!["L2".to_string()]);
        assert!(early[0].matches.is_empty() && early[2].matches.is_empty());
    }

    /// The same knee, measured in a run that stops at its end and in one that goes on: the
    /// same label; the boundary beyond the first run's sizes is not called missed there.
    #[test]
    fn a_knees_label_does_not_change_with_the_sizes_measured() {
        let short = [
            pt(256.0 * K, 10.0, 0.02),
            pt(512.0 * K, 10.0, 0.02),
            pt(M, 20.0, 0.02),
        ];
        let mut long = short.to_vec();
        long.extend([pt(2.0 * M, 20.5, 0.02), pt(4.0 * M, 21.0, 0.02)]);
        let bounds = [
            ("L2 total (2m/2)".to_string(), M),
            ("L3 (8m)".into(), 8.0 * M),
        ];
        let p = KneeParams::default();
        let label = |pts: &[CurvePoint]| {
            let mut k = detect(pts, &p);
            let hi = pts.iter().map(|q| q.x).fold(0.0, f64::max);
            let hits = match_shown(&mut k, &bounds, (256.0 * K, hi), p.tolerance);
            (k[0].matches.clone(), hits)
        };
        let (a, hits_a) = label(&short);
        let (b, hits_b) = label(&long);
        assert_eq!(a, vec!["L2 total (2m/2)".to_string()]);
        assert_eq!(a, b);
        // 1m is the short run's largest size: not a boundary it can show, so never missed.
        assert!(hits_a.is_empty(), "{hits_a:?}");
        assert_eq!(hits_b, vec![("L2 total (2m/2)".to_string(), true)]);
        // Matching only the boundaries inside the short run's sizes loses the label.
        let inside: Vec<_> = bounds.iter().filter(|b| b.1 < M).cloned().collect();
        let mut k = detect(&short, &p);
        match_boundaries(&mut k, &inside, p.tolerance);
        assert!(k[0].matches.is_empty());
    }

    #[test]
    fn a_gradual_transition_is_one_knee() {
        // 2 ns up to 256K, then rising 30% per point for four points, then flat.
        let pts: Vec<CurvePoint> = grid()
            .into_iter()
            .enumerate()
            .map(|(i, x)| {
                let k = i.saturating_sub(12).min(4) as i32;
                let y = if x <= 256.0 * K {
                    2.0
                } else {
                    2.0 * 1.3f64.powi(k)
                };
                pt(x, y, 0.02)
            })
            .collect();
        let knees = detect(&pts, &KneeParams::default());
        assert_eq!(knees.len(), 1, "{knees:?}");
        assert!(knees[0].rise() > 2.5);
        assert!(knees[0].end > knees[0].first_above);
    }

    #[test]
    fn noise_and_overlapping_intervals_make_no_knee() {
        // ±8% wiggles whose intervals overlap: nothing to see.
        let pts: Vec<CurvePoint> = grid()
            .into_iter()
            .enumerate()
            .map(|(i, x)| pt(x, 10.0 * (1.0 + 0.08 * ((i % 3) as f64 - 1.0)), 0.1))
            .collect();
        assert!(detect(&pts, &KneeParams::default()).is_empty());
        // A real but small rise (10%) is below min_rise.
        let pts: Vec<CurvePoint> = grid()
            .into_iter()
            .map(|x| pt(x, if x < M { 10.0 } else { 11.0 }, 0.001))
            .collect();
        assert!(detect(&pts, &KneeParams::default()).is_empty());
    }

    #[test]
    fn unusable_points_are_skipped_and_order_does_not_matter() {
        let mut pts = staircase();
        pts.reverse();
        pts.push(pt(0.0, 1.0, 0.01)); // S = 0 has no log position
        pts.push(CurvePoint {
            x: 8.0 * K,
            y: f64::NAN,
            lo: 0.0,
            hi: 0.0,
        });
        assert_eq!(detect(&pts, &KneeParams::default()).len(), 3);
        assert!(detect(&[], &KneeParams::default()).is_empty());
        assert!(detect(&pts[..1], &KneeParams::default()).is_empty());
    }
}
