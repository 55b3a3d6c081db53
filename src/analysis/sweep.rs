//! The working-set sweep's curves, read from a finished Run: one curve per ring shape (mode ×
//! N × access × stride × policy), its per-switch cost per size with the direct (S = 0) and
//! indirect cost, knees detected on the curve and matched against the cache sizes (and, when
//! given, the knees of a `mem latency` run). report::sweep renders it.

use crate::analysis::knees::{self, CurvePoint, Knee, KneeParams};
use crate::machine::fits::sweep_boundaries;
use crate::model::{Measurement, Run, Status, Summary};
use crate::probes::ctx::sweep::{definition_label, PROBE};
use crate::units::size::fmt_size;
use serde::Serialize;

/// One size of one curve.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub size: u64,
    pub status: Status,
    /// Per switch (ns), when resolved and valid.
    pub per_switch: Option<Summary>,
    /// Per-switch extra over the S = 0 point: [median, lo, hi] (ns); None without S = 0.
    pub indirect: Option<[f64; 3]>,
    pub fits_per_process: String,
    pub fits_total: String,
    /// Why there is no number, in words.
    pub reason: Option<String>,
}

/// One ring shape: mode × N × access × stride × policy.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    pub mode: String,
    pub procs: usize,
    pub access: String,
    pub stride: u64,
    /// Scheduling policy of the members ("normal" or "batch").
    pub policy: String,
    /// lat_ctx's definition, or how this curve differs from it.
    pub definition: String,
    pub rows: Vec<Row>,
    /// The S = 0 cost (ns/switch) when measured and resolved: the direct cost.
    pub direct: Option<Summary>,
    pub knees: Vec<Knee>,
    /// Each cache boundary on this curve's axis and whether a knee fell on it.
    pub boundaries: Vec<(String, bool)>,
}

/// Everything the sweep's table, plot and JSON need.
#[derive(Debug, Clone, Serialize)]
pub struct SweepAnalysis {
    /// Data caches of the measured CPU (label, bytes), smallest first.
    pub caches: Vec<(String, u64)>,
    /// Knees of a memory-latency curve used as extra boundaries (bytes of one working set).
    pub mem_knees: Vec<f64>,
    pub curves: Vec<Curve>,
}

/// Why a point has no number; an invalid one's reason is its failed checks, worded by
/// `invalid`.
pub fn reason(m: &Measurement, invalid: &dyn Fn(&Measurement) -> String) -> Option<String> {
    match m.status {
        Status::Ok => None,
        Status::Invalid => Some(format!("invalid: {}", invalid(m))),
        Status::Unstable => Some(format!(
            "unstable: the 95% interval reaches beyond ±50% of the figure ({})",
            m.value
                .as_ref()
                .map(|v| crate::units::fmt_spread(v.median, v.ci95[0], v.ci95[1]))
                .unwrap_or_default()
        )),
        Status::BelowResolution => Some(match &m.difference {
            Some(d) => format!(
                "below resolution: lap − overhead has a 95% interval of [{:.0}, {:.0}] ns, which \
                 reaches zero (the ring costs no measurably more than the same pipe traffic and \
                 walks without switching)",
                d.ci95[0], d.ci95[1]
            ),
            None => "below resolution".into(),
        }),
    }
}

/// Build the analysis of the sweep measurements in `run`; `invalid` words why an invalid
/// point is.
pub fn analyze(
    run: &Run,
    caches: &[(String, u64)],
    mem_knees: &[f64],
    invalid: &dyn Fn(&Measurement) -> String,
) -> SweepAnalysis {
    let curves = super::curves_by(run, PROBE, Shape::of)
        .into_iter()
        .map(|(shape, mut ms)| {
            ms.sort_by_key(|m| m.param_u64("size").unwrap_or(0));
            curve(shape, &ms, caches, mem_knees, invalid)
        })
        .collect();
    SweepAnalysis {
        caches: caches.to_vec(),
        mem_knees: mem_knees.to_vec(),
        curves,
    }
}

/// The members' policy; runs saved before the parameter existed used SCHED_BATCH.
pub fn policy_of(m: &Measurement) -> String {
    match m.param_text("policy") {
        p if p.is_empty() => "batch".into(),
        p => p,
    }
}

/// What identifies one curve.
#[derive(PartialEq)]
struct Shape {
    mode: String,
    procs: usize,
    access: String,
    stride: u64,
    policy: String,
}

impl Shape {
    fn of(m: &Measurement) -> Shape {
        Shape {
            mode: m.param_text("mode"),
            procs: m.param_u64("procs").unwrap_or(0) as usize,
            access: m.param_text("access"),
            stride: m.param_u64("stride").unwrap_or(0),
            policy: policy_of(m),
        }
    }
}

pub fn usable(m: &Measurement) -> Option<&Summary> {
    m.value
        .as_ref()
        .filter(|_| m.valid && m.status == Status::Ok)
}

fn curve(
    shape: Shape,
    ms: &[&Measurement],
    caches: &[(String, u64)],
    mem_knees: &[f64],
    invalid: &dyn Fn(&Measurement) -> String,
) -> Curve {
    let Shape {
        mode,
        procs,
        access,
        stride,
        policy,
    } = shape;
    let direct = ms
        .iter()
        .find(|m| m.param_u64("size").unwrap_or(0) == 0)
        .and_then(|m| usable(m))
        .cloned();
    let rows = ms
        .iter()
        .map(|m| {
            let v = usable(m).cloned();
            let indirect = match (&v, &direct) {
                (Some(v), Some(d)) => Some([
                    v.median - d.median,
                    v.ci95[0] - d.ci95[1],
                    v.ci95[1] - d.ci95[0],
                ]),
                _ => None,
            };
            Row {
                size: m.param_u64("size").unwrap_or(0),
                status: m.status,
                per_switch: v,
                indirect,
                fits_per_process: m.param_text("fits_per_process"),
                fits_total: m.param_text("fits_total"),
                reason: reason(m, invalid),
            }
        })
        .collect::<Vec<_>>();
    let points: Vec<CurvePoint> = rows
        .iter()
        .filter_map(|r| {
            let v = r.per_switch.as_ref()?;
            Some(CurvePoint {
                x: r.size as f64,
                y: v.median,
                lo: v.ci95[0],
                hi: v.ci95[1],
            })
        })
        .collect();
    let params = KneeParams::default();
    let mut found = knees::detect(&points, &params);
    let mut bounds = sweep_boundaries(caches, procs);
    for (i, k) in mem_knees.iter().enumerate() {
        bounds.push((
            format!(
                "memory-latency knee {} ({}/{procs})",
                i + 1,
                fmt_size(*k as u64)
            ),
            k / procs as f64,
        ));
    }
    // Knees are labelled from every boundary; hits and misses are told only for those the
    // swept sizes can show (a knee needs points on both sides).
    let sizes: Vec<f64> = points.iter().map(|p| p.x).collect();
    let range = (
        sizes.iter().copied().fold(f64::INFINITY, f64::min),
        sizes.iter().copied().fold(0.0, f64::max),
    );
    let boundaries = knees::match_shown(&mut found, &bounds, range, params.tolerance);
    Curve {
        definition: definition_label(&policy, &access, stride),
        mode,
        procs,
        access,
        stride,
        policy,
        rows,
        direct,
        knees: found,
        boundaries,
    }
}
