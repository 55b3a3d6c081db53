//! The memory-latency curve as a table, with knees matched against the cache sizes. A pure
//! function of a finished Run.

use crate::analysis::knees::{self, CurvePoint, Knee, KneeParams};
use crate::analysis::sizes::fmt_size;
use crate::model::{Measurement, Run, Status};
use crate::probes::mem::latency::{Order, PROBE};
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
    pub knees: Vec<Knee>,
    pub boundaries: Vec<(String, bool)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemAnalysis {
    pub caches: Vec<(String, u64)>,
    pub curves: Vec<MemCurve>,
}

fn p_str(m: &Measurement, k: &str) -> String {
    m.params
        .get(k)
        .map(|v| {
            v.as_str()
                .map(String::from)
                .unwrap_or_else(|| v.to_string())
        })
        .unwrap_or_default()
}

/// The chase order; runs saved before the parameter existed chased a random cycle.
fn order_of(m: &Measurement) -> String {
    match p_str(m, "order") {
        o if o.is_empty() => "random".into(),
        o => o,
    }
}

fn p_u64(m: &Measurement, k: &str) -> u64 {
    m.params.get(k).and_then(|v| v.as_u64()).unwrap_or(0)
}

pub fn analyze(run: &Run, caches: &[(String, u64)]) -> MemAnalysis {
    let mut keys: Vec<(String, u64, String)> = Vec::new();
    for m in run.measurements.iter().filter(|m| m.probe == PROBE) {
        let k = (p_str(m, "pages"), p_u64(m, "stride"), order_of(m));
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let bounds: Vec<(String, f64)> = caches
        .iter()
        .map(|(l, b)| (format!("{l} ({})", fmt_size(*b)), *b as f64))
        .collect();
    let curves = keys
        .into_iter()
        .map(|(pages, stride, order)| {
            let mut points: Vec<(u64, f64, f64, f64)> = run
                .measurements
                .iter()
                .filter(|m| {
                    m.probe == PROBE
                        && p_str(m, "pages") == pages
                        && p_u64(m, "stride") == stride
                        && order_of(m) == order
                })
                .filter(|m| m.valid && m.status == Status::Ok)
                .filter_map(|m| {
                    let v = m.value.as_ref()?;
                    Some((p_u64(m, "size"), v.median, v.ci95[0], v.ci95[1]))
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
            let shown: Vec<(String, f64)> = bounds
                .iter()
                .filter(|(_, b)| *b >= lo && *b < hi)
                .cloned()
                .collect();
            let boundaries = knees::match_boundaries(&mut found, &shown, params.tolerance);
            MemCurve {
                definition: Order::definition(&order).into(),
                pages,
                stride,
                order,
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

pub fn render(a: &MemAnalysis, run: &Run) -> String {
    let mut out = String::new();
    for c in &a.curves {
        out.push_str(&format!(
            "\nmem.latency {} pages, stride {} B, {} order\n  ({})\n  {:>8}  {:>7}  {:>18}  {:>10}  {:>10}  {:>6}\n",
            c.pages, c.stride, c.order, c.definition, "size", "fits", "ns/load ±95%", "L1Dmiss/ld", "dTLBmiss/ld", "huge"
        ));
        for m in run.measurements.iter().filter(|m| {
            m.probe == PROBE
                && p_str(m, "pages") == c.pages
                && p_u64(m, "stride") == c.stride
                && order_of(m) == c.order
        }) {
            let per = |n: &str| {
                m.evidence
                    .events
                    .get(n)
                    .filter(|e| e.supported)
                    .and_then(|e| e.per_op)
                    .map(crate::report::units::fmt_num)
                    .unwrap_or_else(|| "n/a".into())
            };
            let val = match (&m.value, m.status) {
                (Some(v), Status::Ok) => {
                    use crate::report::units::fmt_num;
                    format!(
                        "{} ±{}",
                        fmt_num(v.median),
                        fmt_num((v.ci95[1] - v.ci95[0]) / 2.0)
                    )
                }
                (_, Status::Invalid) => "INVALID".into(),
                _ => "below resolution".into(),
            };
            let huge = m
                .params
                .get("huge_page_share")
                .and_then(|v| v.as_f64())
                .map(|s| format!("{:.0}%", s * 100.0))
                .unwrap_or_else(|| "?".into());
            out.push_str(&format!(
                "  {:>8}  {:>7}  {:>18}  {:>10}  {:>10}  {:>6}\n",
                fmt_size(p_u64(m, "size")),
                p_str(m, "fits"),
                val,
                per("L1-dcache-load-misses"),
                per("dTLB-load-misses"),
                huge
            ));
            for f in m.failed_checks() {
                out.push_str(&format!(
                    "    ✗ {}: expected {}, observed {}\n",
                    f.name, f.expected, f.observed
                ));
            }
        }
        if c.knees.is_empty() {
            out.push_str(
                "  knees: none detected (no rise of ≥25% beyond the points' 95% intervals)\n",
            );
        }
        for k in &c.knees {
            out.push_str(&format!(
                "  knee: {}\n",
                k.describe(|v| format!("{v:.2} ns"))
            ));
        }
        let missed = knees::missed(&c.boundaries);
        if !missed.is_empty() {
            out.push_str(&format!("  no knee at: {}\n", missed.join(", ")));
        }
    }
    out
}

/// The memory-latency figure: latency against buffer size on log–log axes (levels an order
/// of magnitude apart stay readable), one line per page mode and stride with its 95% band,
/// cache sizes as grey lines, the detected knees (the same as the table's) as red dashed
/// lines, and each plateau's level written on it. Shared by `--svg` and the HTML report.
pub fn svg(a: &MemAnalysis, machine: &str) -> crate::error::Result<String> {
    use crate::report::plot::{bytes_label, Annotation, LinePlot, Marker, Point, Series};
    let mut plot = LinePlot {
        title: "Memory latency: dependent loads on a random cycle (mem.latency)".into(),
        subtitle: machine.to_string(),
        x_label: "buffer size (bytes)".into(),
        y_label: "ns per load (log)".into(),
        log_x: true,
        log_y: true,
        x_bytes: true,
        ..Default::default()
    };
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for (i, c) in a.curves.iter().enumerate() {
        for p in &c.points {
            lo = lo.min(p.0 as f64);
            hi = hi.max(p.0 as f64);
        }
        plot.series.push(Series {
            name: format!("{} pages, stride {} B, {}", c.pages, c.stride, c.order),
            points: c
                .points
                .iter()
                .map(|&(x, y, l, h)| Point::new(x as f64, y, l, h))
                .collect(),
        });
        for k in &c.knees {
            let what = crate::report::figures::knee_match_suffix(k);
            plot.knees.push(Marker {
                x: k.first_above,
                label: format!("knee {}{what}", bytes_label(k.first_above)),
            });
        }
        // Plateau levels for the first curve only: a second curve's labels land on the first's.
        if i == 0 {
            for (x, y) in plateaus(&c.points, &c.knees) {
                plot.annotations.push(Annotation {
                    x,
                    y,
                    text: format!("≈ {}", crate::report::units::fmt_time(y)),
                });
            }
        }
    }
    plot.mark_caches(&a.caches, lo, hi);
    Ok(plot.to_svg())
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
