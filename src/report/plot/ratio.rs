//! Comparisons: one row per probe, the ratio B/A as a dot with its 95% interval as a whisker,
//! a line at 1 (no change) and dashed lines at the thresholds (the minimum effect, and the
//! `--fail-above` gate when set). Log-scaled, so twice as slow and twice as fast are equally
//! far from 1. A row without a ratio keeps its place and says why.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{label_width, no_data, plottable, render, DrawResult, DESC_PT, FONT, LABEL_PT};

/// One compared probe.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioRow {
    pub label: String,
    /// `[ratio, lo, hi]`, or None with `note` saying why there is none.
    pub ratio: Option<[f64; 3]>,
    /// True when the change is a slowdown the verdict calls significant (drawn red), false
    /// for a significant speed-up (green); None for no meaningful difference (grey).
    pub slower: Option<bool>,
    pub note: String,
}

/// A labelled threshold: a vertical dashed line at ratio `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub at: f64,
    pub label: String,
}

/// The comparison figure. Fill it and call [`RatioPlot::to_svg`].
#[derive(Debug, Clone, Default)]
pub struct RatioPlot {
    pub title: String,
    pub subtitle: String,
    /// E.g. "B / A (ratio of medians; > 1: B costs more)".
    pub x_label: String,
    pub rows: Vec<RatioRow>,
    pub thresholds: Vec<Threshold>,
}

impl RatioPlot {
    pub fn to_svg(&self) -> String {
        let n = self.rows.len().max(1) as u32;
        let labels = label_width(self.rows.iter().map(|r| r.label.as_str())).min(420);
        let size = ((labels + 620).clamp(760, 1100), 48 + 110 + 30 * n);
        let svg = render(size, &self.title, &self.subtitle, |a| self.draw(a));
        super::finish(svg, &self.tally())
    }

    /// Rows with a ratio are the points given; one that is not a positive finite number
    /// cannot sit on the log axis and is left out (a row without a ratio says why on it),
    /// and an unstable one is drawn as its interval without a point.
    pub fn tally(&self) -> super::Tally {
        let mut t = super::Tally::new("point");
        for v in self.rows.iter().filter_map(|r| r.ratio) {
            let placeable = v.iter().all(|x| plottable(*x) && *x > 0.0);
            t.count(if !placeable {
                Some("not a positive finite ratio")
            } else if crate::units::interval::is_unstable(v[0], v[1], v[2]) {
                Some("unstable, drawn as its interval")
            } else {
                None
            });
        }
        t
    }

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        if self.rows.is_empty() {
            return Err(no_data("no paired measurements"));
        }
        let n = self.rows.len();
        let finite = |r: &RatioRow| {
            r.ratio
                .filter(|v| v.iter().all(|x| plottable(*x) && *x > 0.0))
        };
        let mut lo = 1.0f64;
        let mut hi = 1.0f64;
        for v in self.rows.iter().filter_map(finite) {
            lo = lo.min(v[1]);
            hi = hi.max(v[2]);
        }
        for t in self
            .thresholds
            .iter()
            .filter(|t| plottable(t.at) && t.at > 0.0)
        {
            lo = lo.min(t.at);
            hi = hi.max(t.at);
        }
        // At least ±10% around 1, and some room beyond the widest interval.
        let (lo, hi) = ((lo / 1.05).min(0.9), (hi * 1.05).max(1.1));
        let labels: Vec<&str> = self.rows.iter().map(|r| r.label.as_str()).collect();
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .margin_top(12 + 16 * self.thresholds.len().min(4) as u32)
            .margin_right(30)
            .x_label_area_size(48)
            .y_label_area_size(label_width(labels.iter().copied()).min(420))
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..n as f64)?;
        let x_fmt = |v: &f64| format!("{}×", crate::units::fmt_num(*v));
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(8)
            .x_label_formatter(&x_fmt)
            .x_desc(self.x_label.as_str())
            .label_style((FONT, LABEL_PT))
            .axis_desc_style((FONT, DESC_PT))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        let top = n as f64;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(1.0, 0.0), (1.0, top)],
            BLACK.stroke_width(1),
        )))?;
        let grey = RGBColor(120, 120, 120);
        for (i, t) in self
            .thresholds
            .iter()
            .filter(|t| plottable(t.at) && t.at > 0.0)
            .enumerate()
        {
            chart.draw_series(DashedLineSeries::new(
                vec![(t.at, 0.0), (t.at, top)],
                5,
                4,
                grey.stroke_width(1),
            ))?;
            // Right of its line, or left of it where the figure ends before the label does
            // ("+2% (minimum effect)" near the right edge ran past it).
            let x = chart.backend_coord(&(t.at, top)).0;
            let width = t.label.chars().count() as i32 * super::CHAR_W as i32;
            let edge = chart.plotting_area().get_pixel_range().0.end + 24;
            let dx = if x + 4 + width > edge { -4 - width } else { 4 };
            // Above the plotting area, staggered: never over a row.
            let offset = (dx, -16 * (i as i32 + 1));
            let style = (FONT, LABEL_PT).into_font().color(&grey);
            super::write_at(&mut chart, (t.at, top), t.label.clone(), offset, style)?;
        }
        self.draw_rows(&mut chart, lo)?;
        Ok(())
    }

    /// Each row: its label left of the axis, and its ratio with the interval (red when B is
    /// slower, green when faster), or why it was not compared.
    fn draw_rows<X>(
        &self,
        chart: &mut ChartContext<SVGBackend, Cartesian2d<X, RangedCoordf64>>,
        lo: f64,
    ) -> DrawResult
    where
        X: Ranged<ValueType = f64>,
    {
        let n = self.rows.len();
        let finite = |r: &RatioRow| {
            r.ratio
                .filter(|v| v.iter().all(|x| plottable(*x) && *x > 0.0))
        };
        let x_fmt = |v: &f64| format!("{}×", crate::units::fmt_num(*v));
        for (i, r) in self.rows.iter().enumerate() {
            let mid = (n - 1 - i) as f64 + 0.5;
            super::row_label(chart, (lo, mid), r.label.clone())?;
            let Some([v, l, h]) = finite(r) else {
                let note = format!("not compared: {}", short_note(&r.note));
                let red = (FONT, LABEL_PT).into_font().color(&super::NOTE_RED);
                super::write_at(chart, (lo, mid), note, (6, -7), red)?;
                continue;
            };
            let c = match r.slower {
                Some(true) => RGBColor(200, 40, 30),
                Some(false) => RGBColor(0, 140, 80),
                None => RGBColor(90, 90, 90),
            };
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(l, mid), (h, mid)],
                c.stroke_width(2),
            )))?;
            // Noise is its spread, never a ratio: the interval without a point, labelled as
            // the table labels it ("unstable (±0.41)").
            let unstable = crate::units::interval::is_unstable(v, l, h);
            if !unstable {
                chart.draw_series(std::iter::once(Circle::new(
                    (v, mid),
                    5,
                    super::mark_style(c, 1.0),
                )))?;
            }
            let text = if unstable {
                crate::units::interval::fmt_bounds(v, l, h)
            } else {
                x_fmt(&v)
            };
            let (at, offset) = value_label_place(chart, [v, l, h], mid, &text, i == 0);
            let style = (FONT, LABEL_PT).into_font().color(&c);
            super::write_at(chart, (at, mid), text, offset, style)?;
        }
        Ok(())
    }
}

/// Where a row's value label goes: right of its interval; left of it where the figure ends
/// before the label does (an interval reaching the axis' right end); above the point where
/// the interval spans the whole axis, or below it on the top row, whose space above holds the
/// thresholds' labels. Returns the anchor's ratio and the text's offset
/// from it in pixels.
fn value_label_place<X>(
    chart: &ChartContext<SVGBackend, Cartesian2d<X, RangedCoordf64>>,
    [v, l, h]: [f64; 3],
    mid: f64,
    text: &str,
    top_row: bool,
) -> (f64, (i32, i32))
where
    X: Ranged<ValueType = f64>,
{
    let width = text.chars().count() as i32 * super::CHAR_W as i32;
    let (left, right) = {
        let r = chart.plotting_area().get_pixel_range().0;
        (r.start, r.end + 24)
    };
    let x_of = |ratio: f64| chart.backend_coord(&(ratio, mid)).0;
    if x_of(h) + 8 + width <= right {
        (h, (8, -7))
    } else if x_of(l) - 8 - width >= left {
        (l, (-8 - width, -7))
    } else if top_row {
        (v, (-width / 2, 8))
    } else {
        (v, (-width / 2, -22))
    }
}

/// The first clause of a note ("invalid in A"), at most 48 characters: the table under the
/// figure has the whole reason; on the figure it must not run across other rows.
fn short_note(note: &str) -> String {
    let head = note.split([':', ';']).next().unwrap_or(note).trim();
    if head.chars().count() > 48 {
        format!("{}…", head.chars().take(47).collect::<String>())
    } else {
        head.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_standalone, count, has_text};
    use super::*;

    #[test]
    fn a_ratio_that_cannot_sit_on_the_log_axis_is_stated() {
        let row = |ratio| RatioRow {
            label: "p".into(),
            ratio,
            slower: None,
            note: "unpaired".into(),
        };
        let svg = RatioPlot {
            title: "t".into(),
            subtitle: "s".into(),
            rows: vec![
                row(Some([1.1, 1.0, 1.2])),
                row(Some([0.0, 0.0, 0.1])),
                row(None),
            ],
            ..Default::default()
        }
        .to_svg();
        assert_eq!(super::super::test_support::count(&svg, "class=\"pt\""), 1);
        assert!(svg.contains("1 point not drawn: not a positive finite ratio"));
    }

    /// An unstable ratio is drawn as its interval with no point; counted as drawn, the
    /// browser check found 11 data marks for 16 points on a noisy compare page.
    #[test]
    fn an_unstable_ratio_is_stated_as_not_drawn_as_a_point() {
        let row = |ratio| RatioRow {
            label: "p".into(),
            ratio: Some(ratio),
            slower: None,
            note: String::new(),
        };
        let svg = RatioPlot {
            title: "t".into(),
            subtitle: "s".into(),
            rows: vec![row([1.1, 1.0, 1.2]), row([1.0, 0.3, 2.6])],
            ..Default::default()
        }
        .to_svg();
        assert_eq!(super::super::test_support::count(&svg, "class=\"pt\""), 1);
        assert!(svg.contains("data-points-drawn=\"1\""), "{svg}");
        assert!(svg.contains("1 point not drawn: unstable, drawn as its interval"));
    }

    #[test]
    fn ratios_have_whiskers_thresholds_and_reasons() {
        let svg = RatioPlot {
            title: "compare".into(),
            subtitle: "a vs b".into(),
            x_label: "B / A".into(),
            rows: vec![
                RatioRow {
                    label: "ctx.pipe".into(),
                    ratio: Some([1.2, 1.15, 1.25]),
                    slower: Some(true),
                    note: String::new(),
                },
                RatioRow {
                    label: "syscall.null".into(),
                    ratio: Some([1.0, 0.98, 1.02]),
                    slower: None,
                    note: String::new(),
                },
                RatioRow {
                    label: "ctx.yield".into(),
                    ratio: None,
                    slower: None,
                    note: "invalid in B".into(),
                },
                RatioRow {
                    label: "broken".into(),
                    ratio: Some([f64::INFINITY, 0.0, f64::NAN]),
                    slower: None,
                    note: "no finite ratio".into(),
                },
            ],
            thresholds: vec![Threshold {
                at: 1.05,
                label: "fail above +5%".into(),
            }],
        }
        .to_svg();
        assert_standalone(&svg, "compare", "a vs b");
        assert!(has_text(&svg, "fail above +5%"));
        assert!(svg.contains("not compared: invalid in B"));
        assert_eq!(
            short_note("invalid in A: CPU held by participants: expected ≥ 90%"),
            "invalid in A"
        );
        assert!(svg.contains("not compared: no finite ratio"));
        assert_eq!(count(&svg, "<circle"), 2);
        assert!(has_text(&svg, "1.20×"));
    }

    /// "+2% (minimum effect)" ran past the compare figure's right edge.
    #[test]
    fn a_threshold_label_near_the_right_edge_stays_on_the_figure() {
        let label = "+60% (minimum effect)";
        let svg = RatioPlot {
            title: "compare".into(),
            subtitle: "a vs b".into(),
            rows: vec![RatioRow {
                label: "ctx.pipe".into(),
                ratio: Some([1.5, 1.45, 1.55]),
                slower: Some(true),
                note: String::new(),
            }],
            thresholds: vec![Threshold {
                at: 1.6,
                label: label.into(),
            }],
            ..Default::default()
        }
        .to_svg();
        let width = super::super::test_support::int_after(&svg, "width=\"");
        let line = svg
            .lines()
            .zip(svg.lines().skip(1))
            .find(|(_, t)| t.trim() == label)
            .unwrap()
            .0;
        let x = super::super::test_support::int_after(line, " x=\"");
        // 7 px a character: the browser's width of this text, a little generous.
        assert!(
            x + label.len() as i32 * 7 <= width,
            "label at x = {x}, figure {width} wide"
        );
    }

    /// The x at which `text` is drawn (the line before its text line holds it).
    fn text_x(svg: &str, text: &str) -> i32 {
        let line = svg
            .lines()
            .zip(svg.lines().skip(1))
            .find(|(_, t)| t.trim() == text)
            .unwrap_or_else(|| panic!("no text {text}"))
            .0;
        super::super::test_support::int_after(line, " x=\"")
    }

    /// A CI run's compare figure cut off "0.835×": the row with the widest interval reaches
    /// the axis' right end, so its value label, right of the interval, ran past the figure.
    #[test]
    fn a_value_label_at_the_right_end_stays_on_the_figure() {
        let row = |label: &str, ratio| RatioRow {
            label: label.into(),
            ratio: Some(ratio),
            slower: None,
            note: String::new(),
        };
        let svg = RatioPlot {
            title: "compare".into(),
            subtitle: "a vs b".into(),
            rows: vec![
                row("wide", [0.835, 0.7, 3.0]),
                row("narrow", [1.0, 0.98, 1.02]),
                row("all of it", [1.2, 0.05, 3.0]),
            ],
            ..Default::default()
        }
        .to_svg();
        let width = super::super::test_support::int_after(&svg, "width=\"");
        // The wide rows are noise: their labels are their spreads.
        let spreads: Vec<String> = svg
            .lines()
            .map(str::trim)
            .filter(|t| t.starts_with("unstable ("))
            .map(String::from)
            .collect();
        assert_eq!(spreads.len(), 2, "{svg}");
        for label in spreads.iter().map(String::as_str).chain(["1.00×"]) {
            let x = text_x(&svg, label);
            assert!(
                x >= 0 && x + label.chars().count() as i32 * 8 <= width,
                "{label} at x = {x}, figure {width} wide"
            );
        }
        // The narrow row's label keeps its place right of its interval.
        assert!(text_x(&svg, "1.00×") > text_x(&svg, &spreads[0]));
    }

    /// The (x, y) at which `text` is drawn.
    fn text_xy(svg: &str, text: &str) -> (i32, i32) {
        let line = svg
            .lines()
            .zip(svg.lines().skip(1))
            .find(|(_, t)| t.trim() == text)
            .unwrap_or_else(|| panic!("no text {text}"))
            .0;
        (
            text_x(svg, text),
            super::super::test_support::int_after(line, " y=\""),
        )
    }

    /// A top row whose interval spans the axis had its value label above its point, over
    /// the thresholds' labels ("−2%"): there the label goes below the row's point, clear of
    /// every threshold label's box (each box as the figure measures text).
    #[test]
    fn a_spanning_top_row_puts_its_label_below_clear_of_the_thresholds() {
        use super::super::place::Rect;
        let row = |label: &str, ratio| RatioRow {
            label: label.into(),
            ratio: Some(ratio),
            slower: None,
            note: String::new(),
        };
        // The thresholds as compare draws them at a 2% minimum effect; rows under the top
        // one keep its row as thin as a real comparison's.
        let thresholds = vec![
            Threshold {
                at: 0.98,
                label: "−2%".into(),
            },
            Threshold {
                at: 1.02,
                label: "+2% (minimum effect)".into(),
            },
        ];
        let mut rows = vec![row("syscall.read", [1.0, 0.3, 3.0])];
        rows.extend((0..5).map(|i| row(&format!("p{i}"), [1.0, 0.99, 1.01])));
        let svg = RatioPlot {
            title: "compare".into(),
            subtitle: "a vs b".into(),
            rows,
            thresholds: thresholds.clone(),
            ..Default::default()
        }
        .to_svg();
        let label = crate::units::interval::fmt_bounds(1.0, 0.3, 3.0);
        let (x, y) = text_xy(&svg, &label);
        // Neither right nor left of the interval is room for it: the spanning case, the
        // label over the interval.
        let whisker = svg
            .lines()
            .find(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
            .expect("the top row's interval");
        let points = &whisker[whisker.find("points=\"").unwrap() + 8..];
        let ends: Vec<(i32, i32)> = points
            .split_whitespace()
            .filter_map(|p| p.trim_end_matches('"').split_once(','))
            .map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap()))
            .collect();
        let (row_y, (from, to)) = (ends[0].1, (ends[0].0, ends[1].0));
        assert!(
            from < x && x + Rect::text(&label, x, y).width() < to,
            "not spanning: {label} at {x}, interval {from}–{to}"
        );
        assert!(
            y > row_y,
            "{label} at y = {y}, its row's point at y = {row_y}"
        );
        let drawn = Rect::text(&label, x, y);
        for t in &thresholds {
            let (tx, ty) = text_xy(&svg, &t.label);
            let theirs = Rect::text(&t.label, tx, ty);
            assert!(
                !drawn.overlaps(&theirs),
                "{label} {drawn:?} over {} {theirs:?}",
                t.label
            );
        }
    }

    #[test]
    fn nothing_paired_says_so() {
        let svg = RatioPlot::default().to_svg();
        assert!(svg.contains("no paired measurements"));
    }

    /// Noise is drawn as its interval with the table's words, never as a ratio.
    #[test]
    fn an_unstable_ratio_is_labelled_as_noise_without_a_point() {
        let svg = RatioPlot {
            title: "compare".into(),
            rows: vec![RatioRow {
                label: "noisy".into(),
                ratio: Some([0.934, 0.2, 3.0]),
                slower: None,
                note: String::new(),
            }],
            ..Default::default()
        }
        .to_svg();
        assert!(!svg.contains("0.934×"), "{svg}");
        assert!(svg.contains("unstable (±"), "{svg}");
        assert!(
            !svg.contains("<circle"),
            "an unstable ratio has no point: {svg}"
        );
    }
}
