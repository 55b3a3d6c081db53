//! The memory-latency curves, read from a finished Run: one curve per chase order, stride and
//! page mode, its knees matched against the cache sizes, and the flat stretches between them.
//! report::memlat renders it.

use crate::analysis::knees::{self, CurvePoint, Knee, KneeParams};
use crate::model::{Measurement, Run, Status};
use crate::probes::mem::latency::{Order, PROBE};
use crate::units::size::fmt_size;
use serde::Serialize;

/// One curve: a chase order, stride and page mode.
#[derive(Debug, Clone, Serialize)]
pub struct MemCurve {
    pub pages: String,
    pub stride: u64,
    /// "random" (the full latency) or "strided" (lat_mem_rd's default forward walk).
    pub order: String,
    /// What the order means next to lat_mem_rd.
    pub definition: String,
    /// (size, median ns/load, lo, hi) of valid points.
    pub points: Vec<(u64, f64, f64, f64)>,
    /// Sizes measured without a valid, resolved figure, counted by status ("invalid",
    /// "unstable", "below_resolution"): not points of the curve; the figure says how many
    /// of each, the table why.
    pub without_value: Vec<(String, usize)>,
    /// Those sizes themselves: the figure's line breaks at each instead of running straight
    /// across it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<u64>,
    pub knees: Vec<Knee>,
    pub boundaries: Vec<(String, bool)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemAnalysis {
    pub caches: Vec<(String, u64)>,
    pub curves: Vec<MemCurve>,
}

/// The chase order; runs saved before the parameter existed chased a random cycle.
pub fn order_of(m: &Measurement) -> String {
    match m.param_text("order") {
        o if o.is_empty() => "random".into(),
        o => o,
    }
}

/// The measurements of a curve that are not points of it, counted by status.
/// The sizes of `measured` without a valid, resolved figure (the curve's points are the rest).
fn gap_sizes(measured: &[&Measurement]) -> Vec<u64> {
    let mut out: Vec<u64> = measured
        .iter()
        .filter(|m| !(m.valid && m.status == Status::Ok && m.value.is_some()))
        .filter_map(|m| m.param_u64("size"))
        .filter(|&s| s > 0)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn without_value(measured: &[&Measurement]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for m in measured {
        let status = match (m.valid, m.status, &m.value) {
            (true, Status::Ok, Some(_)) => continue,
            (false, _, _) => Status::Invalid,
            (true, Status::Ok, None) => Status::BelowResolution,
            (true, s, _) => s,
        };
        match out.iter_mut().find(|(s, _)| *s == status.name()) {
            Some((_, n)) => *n += 1,
            None => out.push((status.name(), 1)),
        }
    }
    out
}

pub fn analyze(run: &Run, caches: &[(String, u64)]) -> MemAnalysis {
    let bounds: Vec<(String, f64)> = caches
        .iter()
        .map(|(l, b)| (format!("{l} ({})", fmt_size(*b)), *b as f64))
        .collect();
    let key = |m: &Measurement| {
        (
            m.param_text("pages"),
            m.param_u64("stride").unwrap_or(0),
            order_of(m),
        )
    };
    let curves = super::curves_by(run, PROBE, key)
        .into_iter()
        .map(|((pages, stride, order), measured)| {
            let mut points: Vec<(u64, f64, f64, f64)> = measured
                .iter()
                .filter(|m| m.valid && m.status == Status::Ok)
                .filter_map(|m| {
                    let v = m.value.as_ref()?;
                    Some((
                        m.param_u64("size").unwrap_or(0),
                        v.median,
                        v.ci95[0],
                        v.ci95[1],
                    ))
                })
                .collect();
            points.sort_by_key(|p| p.0);
            let cps: Vec<CurvePoint> = points
                .iter()
                .map(|&(x, y, lo, hi)| CurvePoint {
                    x: x as f64,
                    y,
                    lo,
                    hi,
                })
                .collect();
            let params = KneeParams::default();
            let mut found = knees::detect(&cps, &params);
            let (lo, hi) = (
                points.first().map(|p| p.0 as f64).unwrap_or(0.0),
                points.last().map(|p| p.0 as f64).unwrap_or(0.0),
            );
            let boundaries = knees::match_shown(&mut found, &bounds, (lo, hi), params.tolerance);
            MemCurve {
                definition: Order::definition(&order).into(),
                pages,
                stride,
                order,
                without_value: without_value(&measured),
                gaps: gap_sizes(&measured),
                points,
                knees: found,
                boundaries,
            }
        })
        .collect();
    MemAnalysis {
        caches: caches.to_vec(),
        curves,
    }
}

/// The flat stretches between knees: for each, a point in its middle (x) and its median
/// level (y). A stretch needs two points to count as a plateau.
pub fn plateaus(points: &[(u64, f64, f64, f64)], knees: &[Knee]) -> Vec<(f64, f64)> {
    let mut edges = vec![(f64::NEG_INFINITY, f64::INFINITY)];
    for k in knees {
        if let Some(last) = edges.last_mut() {
            last.1 = k.last_below;
        }
        edges.push((k.end.max(k.first_above), f64::INFINITY));
    }
    edges
        .into_iter()
        .filter_map(|(from, to)| {
            let seg: Vec<&(u64, f64, f64, f64)> = points
                .iter()
                .filter(|p| (p.0 as f64) >= from && (p.0 as f64) <= to)
                .collect();
            if seg.len() < 2 {
                return None;
            }
            let mut ys: Vec<f64> = seg.iter().map(|p| p.1).collect();
            ys.sort_by(f64::total_cmp);
            Some((seg[seg.len() / 2].0 as f64, ys[ys.len() / 2]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A size whose figure is unstable or invalid is no point of the curve and a gap in its
    /// line, so the figure's line breaks there instead of joining its neighbours.
    #[test]
    fn a_size_without_a_value_is_a_gap_of_its_curve() {
        let mut run = crate::input::parse_run(
            include_str!("../../tests/fixtures/runs/memlat.json"),
            "memlat",
        )
        .unwrap();
        let caches: Vec<(String, u64)> = Vec::new();
        let before = analyze(&run, &caches);
        let c = &before.curves[0];
        assert!(c.gaps.is_empty() && c.points.len() >= 3, "{:?}", c.gaps);
        let size = c.points[1].0;
        let m = run
            .measurements
            .iter_mut()
            .find(|m| m.is(PROBE) && m.param_u64("size") == Some(size))
            .unwrap();
        let v = m.value.as_mut().unwrap();
        // An interval wider than ±50% of its median: unstable.
        v.ci95 = [v.median * 0.2, v.median * 1.9];
        m.settle_status();
        assert_eq!(m.status, Status::Unstable);
        let after = analyze(&run, &caches);
        let c = &after.curves[0];
        assert_eq!(c.gaps, vec![size]);
        assert!(c.points.iter().all(|p| p.0 != size));
        let svg = crate::report::memlat::svg(&after, "host").unwrap();
        let whole = crate::report::memlat::svg(&before, "host").unwrap();
        // The broken line is drawn as more pieces than the whole one.
        assert!(svg.matches("<polyline").count() > whole.matches("<polyline").count());
    }

    #[test]
    fn plateaus_are_the_flat_stretches_between_knees() {
        let pts: Vec<(u64, f64, f64, f64)> = [
            (4096, 1.0),
            (8192, 1.1),
            (16384, 1.0),
            (32768, 4.0),
            (65536, 5.0),
            (131072, 5.1),
            (262144, 5.0),
        ]
        .iter()
        .map(|&(x, y)| (x, y, y, y))
        .collect();
        let k = Knee {
            last_below: 16384.0,
            first_above: 32768.0,
            end: 65536.0,
            y_first_above: 4.0,
            y_before: 1.0,
            y_after: 5.0,
            matches: vec![],
        };
        let p = plateaus(&pts, &[k]);
        assert_eq!(p, vec![(8192.0, 1.0), (131072.0, 5.0)]);
        // Without knees the whole curve is one plateau.
        assert_eq!(plateaus(&pts, &[]).len(), 1);
    }
}
