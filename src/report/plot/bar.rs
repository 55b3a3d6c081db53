//! Single figures: horizontal bars with 95% interval whiskers. Horizontal, because labels such
//! as `ctx.pipe mode=thread cpus=0` are long and must stay readable. A bar without a number
//! (invalid, below resolution) keeps its row and says why instead of drawing a length.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    color, label_width, no_data, render, short_number, DrawResult, DESC_PT, FONT, LABEL_PT,
};

/// One row of a bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    /// `[value, lo, hi]` (95% interval), or None for a row that has no number to plot.
    pub value: Option<[f64; 3]>,
    /// Shown instead of a bar when `value` is None (e.g. "invalid: 0 switches observed").
    pub note: String,
}

impl Bar {
    pub fn new(label: impl Into<String>, value: f64, lo: f64, hi: f64) -> Self {
        Bar {
            label: label.into(),
            value: Some([value, lo, hi]),
            note: String::new(),
        }
    }
    /// A row without a number, carrying the reason.
    pub fn missing(label: impl Into<String>, note: impl Into<String>) -> Self {
        Bar {
            label: label.into(),
            value: None,
            note: note.into(),
        }
    }
    fn finite(&self) -> Option<[f64; 3]> {
        self.value
            .filter(|v| v.iter().all(|x| super::plottable(*x)))
    }
}

/// A bar's value label at the tables' precision rule (units::interval): the figure no more
/// precisely than its interval, "4" for 4.39 ±36, never "4.39"; a figure of 10⁴ or more
/// scaled by k, M or G as the axis's numbers are, the rule applied to the scaled figure.
pub fn value_text(v: f64, lo: f64, hi: f64) -> String {
    let a = v.abs();
    let (k, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let (figure, _) = crate::units::interval::fmt_estimate(v / k, lo / k, hi / k);
    format!("{figure}{suffix}")
}

/// The widest label area, in pixels: the bars keep most of the figure.
const MAX_LABEL_W: u32 = 420;

/// `label` cut to what the label area holds, with "…" where it was cut: a longer label
/// would run off the figure's left edge (the table gives every row's full label).
fn fitted(label: &str) -> String {
    // label_width's reckoning backwards: 14 px of padding, CHAR_W per character.
    super::fit(label, MAX_LABEL_W - 14, super::CHAR_W)
}

/// A bar chart. Fill it and call [`BarChart::to_svg`].
#[derive(Debug, Clone, Default)]
pub struct BarChart {
    pub title: String,
    pub subtitle: String,
    /// The value axis, with its unit, e.g. "ns/call".
    pub value_label: String,
    pub bars: Vec<Bar>,
    /// Pixels; 0 means 900 wide and a height that fits the rows.
    pub width: u32,
    pub height: u32,
}

impl BarChart {
    pub fn to_svg(&self) -> String {
        let n = self.bars.len().max(1) as u32;
        let labels = label_width(self.bars.iter().map(|b| b.label.as_str())).min(MAX_LABEL_W);
        let size = (
            if self.width == 0 {
                (labels + 640).clamp(760, 1100)
            } else {
                self.width
            },
            if self.height == 0 {
                48 + 90 + 34 * n
            } else {
                self.height
            },
        );
        let svg = render(size, &self.title, &self.subtitle, |a| self.draw(a));
        super::finish(svg, &self.tally())
    }

    /// Bars with a value are the points given; one whose value is not a finite number is
    /// left out (rows without a value are not points: each says why on its row).
    pub fn tally(&self) -> super::Tally {
        let mut t = super::Tally::new("point");
        for b in self.bars.iter().filter(|b| b.value.is_some()) {
            t.count(b.finite().is_none().then_some("not a finite number"));
        }
        t
    }

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        if self.bars.is_empty() {
            return Err(no_data("no rows"));
        }
        let n = self.bars.len();
        let max = self
            .bars
            .iter()
            .filter_map(Bar::finite)
            .map(|v| v[0].max(v[2]))
            .fold(0.0f64, f64::max);
        let min = self
            .bars
            .iter()
            .filter_map(Bar::finite)
            .map(|v| v[1].min(v[0]))
            .fold(0.0f64, f64::min);
        let max = if max > 0.0 { max * 1.18 } else { 1.0 };
        // Rows none of which has a value: no value axis (an empty 0–1 scale reads as a
        // figure of nothing); each row says why it has no bar.
        let any_value = self.bars.iter().any(|b| b.finite().is_some());
        let labels: Vec<&str> = self.bars.iter().map(|b| b.label.as_str()).collect();
        // Row i spans y in [n-1-i, n-i) so the first bar is at the top; labels are drawn here
        // (not by the mesh) so each sits exactly at its row's centre.
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .margin_right(30)
            .x_label_area_size(48)
            .y_label_area_size(label_width(labels.iter().copied()).min(MAX_LABEL_W))
            .build_cartesian_2d(min..max, 0.0..n as f64)?;
        let x_fmt = |v: &f64| short_number(*v);
        if any_value {
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(0)
                .x_label_formatter(&x_fmt)
                .x_desc(self.value_label.as_str())
                .label_style((FONT, LABEL_PT))
                .axis_desc_style((FONT, DESC_PT))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()?;
        } else {
            chart
                .configure_mesh()
                .disable_mesh()
                .disable_x_axis()
                .x_labels(0)
                .y_labels(0)
                .x_desc(format!("{}: no row has a value", self.value_label))
                .axis_desc_style((FONT, DESC_PT))
                .draw()?;
        }
        for (i, bar) in self.bars.iter().enumerate() {
            let row = (n - 1 - i) as f64;
            let mid = row + 0.5;
            super::row_label(&mut chart, (min, mid), fitted(&bar.label))?;
            match bar.finite() {
                Some([v, lo, hi]) => {
                    let c = color(0);
                    let rect = Rectangle::new(
                        [(0.0, row + 0.2), (v, row + 0.8)],
                        super::mark_style(c, 0.75),
                    );
                    chart.draw_series(std::iter::once(rect))?;
                    let black = BLACK.stroke_width(1);
                    super::whisker(&mut chart, [(lo, mid), (hi, mid)], (0, 6), black)?;
                    let text = value_text(v, lo, hi);
                    super::write_at(
                        &mut chart,
                        (hi.max(v), mid),
                        text,
                        (6, -7),
                        (FONT, LABEL_PT),
                    )?;
                }
                None => {
                    let note = format!("not plotted: {}", bar.note);
                    let red = (FONT, LABEL_PT).into_font().color(&super::NOTE_RED);
                    super::write_at(&mut chart, (0.0, mid), note, (6, -7), red)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_standalone, count, has_text};
    use super::*;

    #[test]
    fn value_labels_are_no_more_precise_than_their_interval() {
        // ±36 on 4.39: the units digit is already uncertain.
        assert_eq!(value_text(4.39, -31.6, 40.4), "4");
        assert_eq!(short_number(4.39), "4.39");
        assert_eq!(value_text(4.39, 4.38, 4.40), "4.39");
        assert_eq!(value_text(46687.0, 42287.0, 51087.0), "46.7k");
        assert_eq!(value_text(46687.0, 36687.0, 56687.0), "47k");
        assert_eq!(value_text(1400.0, 1350.0, 1460.0), "1400");
        let svg = BarChart {
            title: "t".into(),
            value_label: "ns".into(),
            bars: vec![Bar::new("wide", 4.39, -31.6, 40.4)],
            ..Default::default()
        }
        .to_svg();
        assert!(has_text(&svg, "4") && !svg.contains("4.39"), "{svg}");
    }

    #[test]
    fn bars_have_whiskers_labels_and_missing_rows_say_why() {
        let svg = BarChart {
            title: "syscall: cost per call".into(),
            subtitle: "testhost".into(),
            value_label: "ns/call".into(),
            bars: vec![
                Bar::new("syscall.null", 80.0, 79.0, 81.5),
                Bar::new("syscall.open", 1400.0, 1350.0, 1460.0),
                Bar::missing("syscall.read", "invalid: 0 syscalls entered"),
            ],
            ..Default::default()
        }
        .to_svg();
        assert_standalone(&svg, "syscall: cost per call", "testhost");
        assert!(svg.contains("ns/call"));
        for l in ["syscall.null", "syscall.open", "syscall.read"] {
            assert!(svg.contains(l), "{l} label missing");
        }
        assert!(svg.contains("not plotted: invalid: 0 syscalls entered"));
        // plotting-area background + 2 bars (the rest of the page is a full-size rect too)
        assert!(count(&svg, "<rect") >= 3, "bar rectangles missing");
        // one whisker line + two caps per plotted bar
        assert!(count(&svg, "<polyline") >= 6);
        // At the precision rule: 80 ±1.5 reads "80.0", 1400 ±55 "1400".
        assert!(
            has_text(&svg, "80.0") && has_text(&svg, "1400"),
            "value labels missing"
        );
    }

    #[test]
    fn a_bar_is_a_point_when_drawn_and_a_stated_omission_when_not_finite() {
        let svg = BarChart {
            title: "t".into(),
            subtitle: "s".into(),
            bars: vec![
                Bar::new("a", 1.0, 0.9, 1.1),
                Bar::new("b", f64::INFINITY, 1.0, 2.0),
                Bar::new("c", 2.0, 1.9, 2.1),
                Bar::missing("d", "below resolution"),
            ],
            ..Default::default()
        }
        .to_svg();
        assert_eq!(count(&svg, "class=\"pt\""), 2);
        assert!(svg.contains("data-points-given=\"3\" data-points-drawn=\"2\""));
        assert!(has_text(&svg, "1 point not drawn: not a finite number"));
        assert!(svg.contains("not plotted: below resolution"));
    }

    /// The timeslice figure's labels ran off its left edge.
    #[test]
    fn a_long_label_is_cut_to_the_label_area_not_off_the_figure() {
        let long = format!(
            "timeslice {}",
            "slice_reported_ns=1000000,1000000 ".repeat(3)
        );
        let svg = BarChart {
            title: "t".into(),
            subtitle: "s".into(),
            bars: vec![
                Bar::new(long.as_str(), 1.0, 0.9, 1.1),
                Bar::new("short", 2.0, 1.9, 2.1),
            ],
            ..Default::default()
        }
        .to_svg();
        let texts = super::super::test_support::texts(&svg);
        let cut = texts
            .iter()
            .find(|t| t.starts_with("timeslice"))
            .expect("label drawn");
        assert!(cut.ends_with('…'), "{cut}");
        assert!(label_width([cut.as_str()]) <= MAX_LABEL_W, "{cut}");
        assert!(long.starts_with(cut.trim_end_matches('…')));
        assert!(has_text(&svg, "short"));
    }

    #[test]
    fn all_missing_still_renders_rows() {
        let svg = BarChart {
            title: "t".into(),
            subtitle: "s".into(),
            value_label: "ns/fault".into(),
            bars: vec![Bar::missing("a", "below resolution")],
            ..Default::default()
        }
        .to_svg();
        assert!(svg.contains("not plotted: below resolution"));
        // No empty 0–1 value axis: no tick labels, the axis says no row has a value.
        let texts = super::super::test_support::texts(&svg);
        assert!(!texts.iter().any(|t| t == "0" || t == "1"), "{texts:?}");
        assert!(has_text(&svg, "ns/fault: no row has a value"));
        // With one value the axis is there.
        let drawn = BarChart {
            title: "t".into(),
            subtitle: "s".into(),
            value_label: "ns/fault".into(),
            bars: vec![Bar::new("a", 5.0, 4.0, 6.0)],
            ..Default::default()
        }
        .to_svg();
        assert!(super::super::test_support::texts(&drawn)
            .iter()
            .any(|t| t == "0"));
    }
}
