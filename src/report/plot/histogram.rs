//! Latency distributions: how the per-sample or per-event times spread, with the median and
//! p95 marked, because a median alone hides a bimodal or long-tailed mechanism; and lengths
//! that span decades (an OS-noise gap of 400 ns beside one of 40 ms), pre-binned in bins of
//! equal ratio on log axes.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{color, no_data, render, short_number, DrawResult, DESC_PT, FONT, LABEL_PT};

/// A histogram of what [`Values`] holds.
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    pub title: String,
    pub subtitle: String,
    /// The value axis with its unit, e.g. "ns/fault".
    pub x_label: String,
    pub values: Values,
}

/// What a histogram counts.
#[derive(Debug, Clone)]
pub enum Values {
    /// Raw values. Bins are computed here (Freedman–Diaconis or √n, whichever is finer,
    /// 5..=60 bins); the top 0.5% of values is left out of the axis range when it would
    /// squash the body, and the number left out is said under the plot (plot::tally).
    /// `log_count`: a log-scaled count axis, for long tails.
    Samples { values: Vec<f64>, log_count: bool },
    /// Bins counted already, each a bar from its lower edge to the next one's, on log axes
    /// (counts that span decades too).
    LogBins(Vec<LogBin>),
}

impl Default for Values {
    fn default() -> Values {
        Values::LogBins(Vec::new())
    }
}

/// One bin: `[lo, hi)` and how many values fell in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogBin {
    pub lo: f64,
    pub hi: f64,
    pub count: u64,
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    if i + 1 < sorted.len() {
        sorted[i] * (1.0 - f) + sorted[i + 1] * f
    } else {
        sorted[i]
    }
}

/// Bin edges and counts for `sorted` values within `[lo, hi]`.
fn bins(sorted: &[f64], lo: f64, hi: f64) -> (f64, Vec<u32>) {
    let n = sorted.len() as f64;
    let iqr = quantile(sorted, 0.75) - quantile(sorted, 0.25);
    let fd = 2.0 * iqr / n.cbrt();
    let k = if fd > 0.0 {
        ((hi - lo) / fd).ceil() as usize
    } else {
        10
    };
    // Freedman–Diaconis is coarse on multimodal data; never use fewer than sqrt(n) bins.
    let k = k.max(n.sqrt() as usize).clamp(5, 60);
    let w = ((hi - lo) / k as f64).max(f64::MIN_POSITIVE);
    let mut counts = vec![0u32; k];
    for &v in sorted.iter().filter(|v| **v >= lo && **v <= hi) {
        counts[(((v - lo) / w) as usize).min(k - 1)] += 1;
    }
    (w, counts)
}

impl Histogram {
    pub fn to_svg(&self) -> String {
        let svg = render((900, 420), &self.title, &self.subtitle, |a| self.draw(a));
        super::finish(svg, &self.tally())
    }

    /// Every sample is given; those not finite and those past the cut (a far tail would
    /// squash the body into one bin) are left out and counted under the figure. A bin holds
    /// many samples, so the marks are not counted one per sample. Of pre-counted bins, those
    /// with a count are the marks; one whose edges are not positive and finite, or not in
    /// order, is left out and counted.
    pub fn tally(&self) -> super::Tally {
        let values = match &self.values {
            Values::Samples { values, .. } => values,
            Values::LogBins(bins) => {
                let mut t = super::Tally::binned("bin");
                for b in bins.iter().filter(|b| b.count > 0) {
                    t.count((!drawable(b)).then_some("its edges are not positive and in order"));
                }
                return t;
            }
        };
        let mut t = super::Tally::binned("sample");
        let v = finite_sorted(values);
        t.given = values.len();
        t.leave_out(values.len() - v.len(), "not a finite number");
        if let Some(hi) = upper_cut(&v) {
            let above = v.iter().filter(|x| **x > hi).count();
            t.leave_out(
                above,
                &format!("above {} (the 99.5th percentile)", short_number(hi)),
            );
        }
        t
    }

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        let (values, log_count) = match &self.values {
            Values::Samples { values, log_count } => (values, *log_count),
            Values::LogBins(bins) => return self.draw_log_bins(area, bins),
        };
        let v = finite_sorted(values);
        let Some(hi) = upper_cut(&v) else {
            return Err(no_data("no finite values"));
        };
        let (min, max) = (v[0], v[v.len() - 1]);
        let (lo, hi) = if hi > min {
            (min, hi)
        } else {
            (min - 0.5, max + 0.5)
        };
        let (w, counts) = bins(&v, lo, hi);
        let top = f64::from(counts.iter().copied().max().unwrap_or(1).max(1));
        let median = quantile(&v, 0.5);
        let p95 = quantile(&v, 0.95);
        let d = Drawn {
            lo,
            hi,
            w,
            counts: &counts,
            median,
            p95,
        };
        // Headroom above the tallest bar holds the legend and the "not shown" note, so no
        // label lies across a bar or the median and p95 lines (which stop at the tallest bar).
        if log_count {
            self.plot(area, (0.8..top * 8.0).log_scale(), 0.8, &d)
        } else {
            self.plot(area, 0.0..top * 1.6, 0.0, &d)
        }
    }

    fn draw_log_bins(&self, area: &DrawingArea<SVGBackend, Shift>, bins: &[LogBin]) -> DrawResult {
        let bins: Vec<&LogBin> = bins.iter().filter(|b| b.count > 0 && drawable(b)).collect();
        if bins.is_empty() {
            return Err(no_data("no bin holds a value"));
        }
        let lo = bins.iter().map(|b| b.lo).fold(f64::INFINITY, f64::min);
        let hi = bins.iter().map(|b| b.hi).fold(0.0, f64::max);
        let top = bins.iter().map(|b| b.count).max().unwrap_or(1) as f64;
        let axes = (
            (lo / 1.2..hi * 1.2).log_scale(),
            (0.8..top * 4.0).log_scale(),
        );
        let bars = bins.iter().map(|b| ([b.lo, b.hi], b.count as f64));
        draw_bins(area, axes, &self.x_label, bars, 0.8)?;
        Ok(())
    }

    fn plot<Y>(
        &self,
        area: &DrawingArea<SVGBackend, Shift>,
        y: Y,
        floor: f64,
        d: &Drawn,
    ) -> DrawResult
    where
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let pad = (d.hi - d.lo) * 0.03;
        let bars = d
            .counts
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| {
                let x0 = d.lo + i as f64 * d.w;
                ([x0, x0 + d.w], f64::from(*n))
            });
        let axes = (d.lo - pad..d.hi + pad, y);
        let mut chart = draw_bins(area, axes, &self.x_label, bars, floor)?;
        let peak = f64::from(d.counts.iter().copied().max().unwrap_or(1).max(1));
        for (x, name, col) in [(d.median, "median", BLACK), (d.p95, "p95", color(5))] {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, floor), (x, peak)],
                    col.stroke_width(2),
                )))?
                .label(format!("{name} {}", short_number(x)))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], col.stroke_width(2))
                });
        }
        super::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}

fn finite_sorted(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values
        .iter()
        .copied()
        .filter(|x| super::plottable(*x))
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

fn drawable(b: &LogBin) -> bool {
    b.lo.is_finite() && b.hi.is_finite() && b.lo > 0.0 && b.hi > b.lo
}

/// A histogram's axes (the value axis labelled `x_label`, the count axis "count") and its
/// bars, each `[x0, x1)` from `floor` up to its count; the chart, for marks drawn over them.
fn draw_bins<'a, 'b, X, Y>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    (x, y): (X, Y),
    x_label: &str,
    bars: impl Iterator<Item = ([f64; 2], f64)>,
    floor: f64,
) -> Result<BinChart<'a, 'b, X, Y>, Box<dyn std::error::Error>>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .margin_right(24)
        .x_label_area_size(48)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y)?;
    let fmt = |v: &f64| short_number(*v);
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("count")
        .x_label_formatter(&fmt)
        .y_label_formatter(&fmt)
        .label_style((FONT, LABEL_PT))
        .axis_desc_style((FONT, DESC_PT))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    let c = color(0);
    chart.draw_series(bars.map(|([x0, x1], n)| {
        let mut r = Rectangle::new([(x0, floor), (x1, n)], super::mark_style(c, 0.7));
        r.set_margin(0, 0, 1, 1);
        r
    }))?;
    Ok(chart)
}

/// The chart [`draw_bins`] drew on.
type BinChart<'a, 'b, X, Y> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// What `draw` computed and `plot` draws.
struct Drawn<'a> {
    lo: f64,
    hi: f64,
    w: f64,
    counts: &'a [u32],
    median: f64,
    p95: f64,
}

/// The largest value drawn from sorted finite samples: their maximum, or the 99.5th
/// percentile when a far tail (over 4× the body's span) would squash the body into one
/// bin. None without samples.
fn upper_cut(v: &[f64]) -> Option<f64> {
    let (min, max) = (*v.first()?, *v.last()?);
    let p995 = quantile(v, 0.995);
    let body = p995 - min;
    Some(if v.len() >= 200 && max - min > 4.0 * body && body > 0.0 {
        p995
    } else {
        max
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_standalone, count, texts};
    use super::*;

    fn values() -> Vec<f64> {
        // A deterministic bimodal body plus two far outliers.
        let mut v: Vec<f64> = (0..600).map(|i| 100.0 + f64::from(i % 37)).collect();
        v.extend((0..200).map(|i| 300.0 + f64::from(i % 11)));
        v.extend([50_000.0, 60_000.0]);
        v
    }

    #[test]
    fn histogram_has_bins_median_p95_and_says_what_it_left_out() {
        let svg = Histogram {
            title: "fault.minor: per-fault latency".into(),
            subtitle: "testhost".into(),
            x_label: "latency (ns/fault)".into(),
            values: Values::Samples {
                values: values(),
                log_count: false,
            },
        }
        .to_svg();
        assert_standalone(&svg, "fault.minor: per-fault latency", "testhost");
        // Two clusters (100..136, 300..310) span at least 7 non-empty bins, plus the background.
        assert!(count(&svg, "<rect") >= 8, "too few bins");
        let t = texts(&svg);
        assert!(
            t.iter().any(|s| s.starts_with("median ")),
            "median legend missing: {t:?}"
        );
        assert!(
            t.iter().any(|s| s.starts_with("p95 ")),
            "p95 legend missing"
        );
        assert!(
            t.iter()
                .any(|s| s.starts_with("2 samples not drawn: above ")),
            "left-out note missing: {t:?}"
        );
        assert!(svg.contains("data-points-drawn=\"800\" data-points-omitted=\"2\""));
        assert!(t.iter().any(|s| s == "count"));
    }

    #[test]
    fn log_count_axis_and_constant_values_render() {
        let svg = Histogram {
            title: "t".into(),
            subtitle: "s".into(),
            x_label: "ns".into(),
            values: Values::Samples {
                values: vec![7.0; 30],
                log_count: true,
            },
        }
        .to_svg();
        assert!(!svg.contains("no data") && count(&svg, "<rect") >= 2);
    }

    #[test]
    fn log_bins_are_drawn_and_bad_ones_counted() {
        let bin = |lo, hi, count| LogBin { lo, hi, count };
        let h = Histogram {
            title: "gaps".into(),
            subtitle: "host".into(),
            x_label: "gap (ns)".into(),
            values: Values::LogBins(vec![
                bin(400.0, 566.0, 12),
                bin(566.0, 800.0, 0),
                bin(1e6, 1.41e6, 1),
                bin(-1.0, 2.0, 3),
            ]),
        };
        let svg = h.to_svg();
        assert_standalone(&svg, "gaps", "host");
        let t = h.tally();
        assert_eq!((t.drawn(), t.not_drawn()), (2, 1));
        let empty = Histogram::default().to_svg();
        assert!(empty.contains("no data to plot"));
    }

    #[test]
    fn bins_count_every_value_in_range() {
        let v: Vec<f64> = (0..100).map(f64::from).collect();
        let (_, c) = bins(&v, 0.0, 99.0);
        assert_eq!(c.iter().sum::<u32>(), 100);
    }
}
