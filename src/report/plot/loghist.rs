//! A histogram of pre-binned values on log axes: lengths that span decades (an OS-noise gap of
//! 400 ns beside one of 40 ms) in bins of equal ratio, counts that span decades too. Each bin
//! is a bar from its lower edge to the next one's.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{no_data, render, DrawResult};

/// One bin: `[lo, hi)` and how many values fell in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogBin {
    pub lo: f64,
    pub hi: f64,
    pub count: u64,
}

#[derive(Debug, Clone, Default)]
pub struct LogHistogram {
    pub title: String,
    pub subtitle: String,
    /// The value axis with its unit, e.g. "gap length (ns)".
    pub x_label: String,
    pub bins: Vec<LogBin>,
}

impl LogHistogram {
    pub fn to_svg(&self) -> String {
        let svg = render((900, 420), &self.title, &self.subtitle, |a| self.draw(a));
        super::finish(svg, &self.tally())
    }

    /// Bins with a count are the marks; a bin whose edges are not positive and finite, or not
    /// in order, is left out and counted.
    pub fn tally(&self) -> super::Tally {
        let mut t = super::Tally::binned("bin");
        for b in self.bins.iter().filter(|b| b.count > 0) {
            t.count((!drawable(b)).then_some("its edges are not positive and in order"));
        }
        t
    }

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        let bins: Vec<&LogBin> = self
            .bins
            .iter()
            .filter(|b| b.count > 0 && drawable(b))
            .collect();
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
        super::histogram::draw_bins(area, axes, &self.x_label, bars, 0.8)?;
        Ok(())
    }
}

fn drawable(b: &LogBin) -> bool {
    b.lo.is_finite() && b.hi.is_finite() && b.lo > 0.0 && b.hi > b.lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_drawn_and_bad_ones_counted() {
        let h = LogHistogram {
            title: "gaps".into(),
            subtitle: "host".into(),
            x_label: "gap (ns)".into(),
            bins: vec![
                LogBin {
                    lo: 400.0,
                    hi: 566.0,
                    count: 12,
                },
                LogBin {
                    lo: 566.0,
                    hi: 800.0,
                    count: 0,
                },
                LogBin {
                    lo: 1e6,
                    hi: 1.41e6,
                    count: 1,
                },
                LogBin {
                    lo: -1.0,
                    hi: 2.0,
                    count: 3,
                },
            ],
        };
        let svg = h.to_svg();
        super::super::test_support::assert_standalone(&svg, "gaps", "host");
        let t = h.tally();
        assert_eq!((t.drawn(), t.not_drawn()), (2, 1));
        let empty = LogHistogram::default().to_svg();
        assert!(empty.contains("no data to plot"));
    }
}
