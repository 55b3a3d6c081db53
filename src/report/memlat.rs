//! The memory-latency curve as a table, with knees matched against the cache sizes. A pure
//! function of a finished Run.

use crate::analysis::knees::{self, CurvePoint, Knee, KneeParams};
use crate::analysis::sizes::fmt_size;
use crate::model::{Measurement, Run, Status};
use crate::probes::mem::latency::PROBE;
use serde::Serialize;

/// One curve: a stride and page mode.
#[derive(Debug, Clone, Serialize)]
pub struct MemCurve {
    pub pages: String,
    pub stride: u64,
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

fn p_u64(m: &Measurement, k: &str) -> u64 {
    m.params.get(k).and_then(|v| v.as_u64()).unwrap_or(0)
}

pub fn analyze(run: &Run, caches: &[(String, u64)]) -> MemAnalysis {
    let mut keys: Vec<(String, u64)> = Vec::new();
    for m in run.measurements.iter().filter(|m| m.probe == PROBE) {
        let k = (p_str(m, "pages"), p_u64(m, "stride"));
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
        .map(|(pages, stride)| {
            let mut points: Vec<(u64, f64, f64, f64)> = run
                .measurements
                .iter()
                .filter(|m| {
                    m.probe == PROBE && p_str(m, "pages") == pages && p_u64(m, "stride") == stride
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
                pages,
                stride,
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
            "\nmem.latency {} pages, stride {} B\n  {:>8}  {:>7}  {:>18}  {:>10}  {:>10}  {:>6}\n",
            c.pages, c.stride, "size", "fits", "ns/load ±95%", "L1Dmiss/ld", "dTLBmiss/ld", "huge"
        ));
        for m in run.measurements.iter().filter(|m| {
            m.probe == PROBE && p_str(m, "pages") == c.pages && p_u64(m, "stride") == c.stride
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
            out.push_str("  knees: none detected\n");
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

/// ns per load against buffer size (log x), one line per page mode and stride with its
/// 95% band, vertical lines at the cache sizes and at detected knees.
pub fn svg(a: &MemAnalysis, machine: &str) -> crate::error::Result<String> {
    use crate::report::plot::{LinePlot, Marker, Point, Series};
    let mut plot = LinePlot {
        title: "Memory latency: dependent loads on a random cycle (mem.latency)".into(),
        subtitle: machine.to_string(),
        x_label: "buffer size (bytes)".into(),
        y_label: "ns per load".into(),
        log_x: true,
        x_bytes: true,
        ..Default::default()
    };
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for c in &a.curves {
        for p in &c.points {
            lo = lo.min(p.0 as f64);
            hi = hi.max(p.0 as f64);
        }
        plot.series.push(Series {
            name: format!("{} pages, stride {} B", c.pages, c.stride),
            points: c
                .points
                .iter()
                .map(|&(x, y, l, h)| Point::new(x as f64, y, l, h))
                .collect(),
        });
        for k in &c.knees {
            plot.markers.push(Marker {
                x: k.first_above,
                label: format!("knee ({})", c.pages),
            });
        }
    }
    plot.mark_caches(&a.caches, lo, hi);
    Ok(plot.to_svg())
}
