//! Horizontal stacked bars: one row per case (e.g. an RPC scenario and mechanism), split into
//! named segments in a fixed colour order (segment k always has colour k and the legend lists
//! them in that order), with the row's total and its 95% interval written at the bar's end,
//! and where a row has one, a reference drawn across it as a tick (e.g. the untraced time an
//! RPC's parts should add up to).

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::units::Unit;

use super::{
    color, label_width, no_data, render, short_number, DrawResult, CHAR_W, FONT, LABEL_PT,
};

/// One row: segment lengths in the chart's segment order, and the total to write at the end.
/// A row without segments keeps its place and shows `note` as the reason instead of a bar.
#[derive(Debug, Clone, PartialEq)]
pub struct StackedRow {
    pub label: String,
    pub segments: Vec<f64>,
    /// `[total, lo, hi]`, written after the bar as the units module writes a figure with
    /// its interval, in the chart's `value_label` unit.
    pub total: [f64; 3],
    /// Shown after the total (e.g. "untraced 48.2 µs").
    pub note: String,
    /// A reference value drawn as a red tick across the row.
    pub marker: Option<f64>,
}

#[derive(Debug, Clone, Default)]
pub struct StackedBars {
    pub title: String,
    pub subtitle: String,
    /// The values' unit: the axis's label and the unit the totals are written in.
    pub value_label: Unit,
    /// Segment names, in drawing (and colour) order.
    pub segments: Vec<String>,
    pub rows: Vec<StackedRow>,
}

impl StackedBars {
    pub fn to_svg(&self) -> String {
        let n = self.rows.len().max(1) as u32;
        let labels = label_width(self.rows.iter().map(|r| r.label.as_str())).min(420);
        let width = (labels + 760).clamp(900, 1200);
        let lines = self.legend_places(width).last().map_or(1, |p| p.1 + 1);
        let size = (width, 48 + 130 + LEGEND_LINE * (lines - 1) + 40 * n);
        let svg = render(size, &self.title, &self.subtitle, |a| self.draw(a));
        super::finish(svg, &self.tally())
    }

    /// Rows with parts are the points given (a row without parts is not a point: it says
    /// why on its row); a row is drawn as one point, its first non-empty part the mark.
    pub fn tally(&self) -> super::Tally {
        let mut t = super::Tally::new("point");
        for r in self.rows.iter().filter(|r| !r.segments.is_empty()) {
            t.count(if !drawable(r) {
                Some("a part is negative or not a finite number")
            } else if r.segments.iter().all(|v| *v == 0.0) {
                Some("every part is 0")
            } else {
                None
            });
        }
        t
    }

    /// Why a figure with no row to draw is empty: the rows' own reasons ("CPU 0: unstable
    /// (±29 %)"), the first two and a count beyond three, else that no row had parts.
    fn why_empty(&self) -> String {
        let why: Vec<String> = self
            .rows
            .iter()
            .filter(|r| r.segments.is_empty() && !r.note.is_empty())
            .map(|r| format!("{}: {}", r.label, r.note))
            .collect();
        match why.len() {
            0 => "no rows with finite, non-negative parts".to_string(),
            1..=3 => why.join(", "),
            n => format!(
                "{}, and {} more: the table says why",
                why[..2].join(", "),
                n - 2
            ),
        }
    }

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        let rows: Vec<&StackedRow> = self.rows.iter().filter(|r| drawable(r)).collect();
        if rows.iter().all(|r| r.segments.is_empty()) {
            return Err(no_data(&self.why_empty()));
        }
        let n = rows.len();
        let max = rows
            .iter()
            .map(|r| {
                r.segments
                    .iter()
                    .sum::<f64>()
                    .max(r.total[2])
                    .max(r.marker.unwrap_or(0.0))
            })
            .fold(0.0f64, f64::max);
        let lines = self
            .legend_places(area.dim_in_pixel().0)
            .last()
            .map_or(1, |p| p.1 + 1);
        let (legend, plot) = area.split_vertically(34 + LEGEND_LINE * (lines - 1));
        self.draw_legend(&legend)?;
        let y_labels = label_width(rows.iter().map(|r| r.label.as_str())).min(420);
        // The plotting area's width: the area less the margins (12 left, 30 right) and the
        // row labels, as the chart below is built.
        let plot_px = (plot.dim_in_pixel().0 as f64 - 42.0 - y_labels as f64).max(100.0);
        let range = if max > 0.0 {
            x_range(&rows, max, plot_px, &self.value_label)
        } else {
            1.0
        };
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .margin_right(30)
            .x_label_area_size(48)
            .y_label_area_size(y_labels)
            .build_cartesian_2d(0.0..range, 0.0..n as f64)?;
        let x_fmt = |v: &f64| short_number(*v);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_label_formatter(&x_fmt)
            .x_desc(self.value_label.to_string())
            .label_style((FONT, LABEL_PT))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        for (i, r) in rows.iter().enumerate() {
            let row = (n - 1 - i) as f64;
            let axis = Axis {
                unit: &self.value_label,
                range,
                plot_px,
            };
            draw_row(&mut chart, row, r, &axis)?;
        }
        Ok(())
    }

    /// Where each segment's legend entry goes in a figure `width` pixels wide: its x and its
    /// line, entries going on to a new line where the next would run past the right margin.
    fn legend_places(&self, width: u32) -> Vec<(i32, u32)> {
        let right = width as i32 - 12;
        let (mut x, mut line) = (12i32, 0u32);
        self.segments
            .iter()
            .map(|name| {
                let chars = name.chars().count() as i32;
                if x > 12 && x + 18 + CHAR_W as i32 * chars > right {
                    (x, line) = (12, line + 1);
                }
                let at = (x, line);
                x += 26 + CHAR_W as i32 * chars;
                at
            })
            .collect()
    }

    /// The segment names in colour order, one swatch each, across the top (on as many lines
    /// as they need).
    fn draw_legend(&self, legend: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        let places = self.legend_places(legend.dim_in_pixel().0);
        for (k, (name, (x, line))) in self.segments.iter().zip(places).enumerate() {
            let y = 8 + (LEGEND_LINE * line) as i32;
            legend.draw(&Rectangle::new(
                [(x, y), (x + 14, y + 14)],
                color(k).mix(0.85).filled(),
            ))?;
            legend.draw(&Text::new(
                name.clone(),
                (x + 18, y),
                (FONT, LABEL_PT).into_font(),
            ))?;
        }
        Ok(())
    }
}

/// The height of one more line of legend, pixels.
const LEGEND_LINE: u32 = 20;

/// Pixels from a text's anchor to its end (plus its 8-pixel offset from the anchor).
fn text_px(text: &str) -> f64 {
    (text.chars().count() as u32 * super::CHAR_W + 8) as f64
}

/// Where a row's total text starts on an axis of `range` units over `plot_px` pixels: after
/// its bar (or its interval), or after its marker when the text would run across the
/// marker's tick.
fn text_anchor(r: &StackedRow, unit: &Unit, range: f64, plot_px: f64) -> f64 {
    let end = r.segments.iter().sum::<f64>().max(r.total[2]);
    let width = text_px(&total_text(r, unit)) * range / plot_px;
    match r.marker.filter(|v| v.is_finite()) {
        Some(m) if m >= end && m <= end + width => m,
        _ => end,
    }
}

/// The x axis's extent: every bar and marker, and every total text after its bar or marker
/// inside the plotting area (a text anchored at `a` ends at `a + px·range/plot_px`, so the
/// range must be at least `a / (1 − px/plot_px)`).
fn x_range(rows: &[&StackedRow], max: f64, plot_px: f64, unit: &Unit) -> f64 {
    let fits = |range: f64| {
        rows.iter()
            .filter(|r| !r.segments.is_empty())
            .map(|r| {
                let room = (1.0 - text_px(&total_text(r, unit)) / plot_px).max(0.2);
                text_anchor(r, unit, range, plot_px) / room
            })
            .fold(range, f64::max)
    };
    // Widening the axis shrinks each text in axis units, so a second pass settles it.
    fits(fits(max * 1.05))
}

/// A row's total with its interval by the units module's rule, as every view writes them
/// ("18.4 ±<0.05 µs/RPC"), never "18.4k [18.4k, 18.4k]", then its note.
fn total_text(r: &StackedRow, unit: &Unit) -> String {
    let [t, lo, hi] = r.total;
    format!(
        "{}{}",
        crate::units::interval::fmt_figure(t, lo, hi, unit),
        if r.note.is_empty() {
            String::new()
        } else {
            format!("  {}", r.note)
        }
    )
}

/// Whether a row's parts can be stacked: all finite and non-negative.
fn drawable(r: &StackedRow) -> bool {
    r.segments.iter().all(|v| v.is_finite() && *v >= 0.0)
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The value axis the rows are drawn on: its unit, the value at its right end, its width in
/// pixels.
struct Axis<'a> {
    unit: &'a Unit,
    range: f64,
    plot_px: f64,
}

/// One row at height `row`: its label, its segments end to end (or the reason it has none),
/// the marker, and the total with its interval after the bar.
fn draw_row(chart: &mut Chart<'_, '_>, row: f64, r: &StackedRow, axis: &Axis) -> DrawResult {
    let &Axis {
        unit,
        range,
        plot_px,
    } = axis;
    let mid = row + 0.5;
    super::row_label(chart, (0.0, mid), r.label.clone())?;
    if r.segments.is_empty() {
        // Cut to the plotting area (it ran off the figure's edge); the table says it in full.
        let reason = super::fit(
            &format!("not plotted: {}", r.note),
            plot_px as u32 - 12,
            super::CHAR_W,
        );
        return super::write_at(chart, (0.0, mid), reason, (6, 0), left(super::NOTE_RED));
    }
    let mut at = 0.0;
    let mut first = true;
    for (k, v) in r.segments.iter().enumerate() {
        if *v > 0.0 {
            // The row's first part is its data mark (plot::tally): one per row.
            let style = if first {
                super::mark_style(color(k), 0.85)
            } else {
                color(k).mix(0.85).filled()
            };
            first = false;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(at, row + 0.2), (at + v, row + 0.8)],
                style,
            )))?;
        }
        at += v;
    }
    if let Some(v) = r.marker.filter(|v| v.is_finite()) {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(v, row + 0.08), (v, row + 0.92)],
            super::MARKER_RED.stroke_width(3),
        )))?;
    }
    let at = (text_anchor(r, unit, range, plot_px), mid);
    super::write_at(chart, at, total_text(r, unit), (8, 0), left(BLACK))
}

/// Text in `colour`, left-aligned on its anchor and centred on its row.
fn left(colour: RGBColor) -> TextStyle<'static> {
    (FONT, LABEL_PT)
        .into_font()
        .color(&colour)
        .pos(Pos::new(HPos::Left, VPos::Center))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_standalone, count};
    use super::*;

    #[test]
    fn a_row_that_cannot_be_stacked_is_stated_not_dropped_silently() {
        let row = |label: &str, segments: Vec<f64>| StackedRow {
            label: label.into(),
            segments,
            total: [3.0, 2.9, 3.1],
            note: String::new(),
            marker: None,
        };
        let svg = StackedBars {
            title: "t".into(),
            subtitle: "s".into(),
            value_label: "ns".into(),
            segments: vec!["a".into(), "b".into()],
            rows: vec![
                row("one", vec![1.0, 2.0]),
                row("two", vec![0.0, 3.0]),
                row("negative", vec![-1.0, 4.0]),
                row("zero", vec![0.0, 0.0]),
            ],
        }
        .to_svg();
        // One mark per drawn row, however many parts it has.
        assert_eq!(count(&svg, "class=\"pt\""), 2);
        assert!(svg.contains(
            "2 points not drawn: a part is negative or not a finite number (1), every part is 0 (1)"
        ));
    }

    /// The x of the `<text>` element whose content starts with `start`, and its length.
    fn text_at(svg: &str, start: &str) -> (i32, i32) {
        let mut head = "";
        for line in svg.lines() {
            if line.trim().starts_with(start) {
                return (
                    super::super::test_support::int_after(head, " x=\""),
                    line.trim().chars().count() as i32,
                );
            }
            head = line;
        }
        panic!("no text {start:?} in {svg}")
    }

    /// The x of the marker tick's `points="x,y x,y"` (the one 3-pixel line).
    fn tick_x(svg: &str) -> i32 {
        let line = svg
            .lines()
            .find(|l| l.contains("stroke-width=\"3\""))
            .unwrap();
        let from = line.find("points=\"").unwrap() + 8;
        line[from..].split(',').next().unwrap().parse().unwrap()
    }

    fn two_rows(marker: f64, note: &str) -> String {
        StackedBars {
            title: "t".into(),
            subtitle: "s".into(),
            value_label: "ns/RPC".into(),
            segments: vec!["a".into(), "b".into()],
            rows: vec![
                StackedRow {
                    label: "traced".into(),
                    segments: vec![10_000.0, 11_200.0],
                    total: [21_200.0, 21_100.0, 21_300.0],
                    note: "untraced 25.9 µs".into(),
                    marker: Some(marker),
                },
                StackedRow {
                    label: "corrected".into(),
                    segments: vec![],
                    total: [f64::NAN; 3],
                    note: note.into(),
                    marker: None,
                },
            ],
        }
        .to_svg()
    }

    /// A noise report's seven causes: the legend ran on in one line past the figure's right
    /// edge ("other" at x 890 of 900).
    #[test]
    fn a_long_legend_goes_on_to_a_new_line_inside_the_figure() {
        let names = [
            "task cc1plus",
            "task rustc",
            "task coordinator",
            "timer tick",
            "task opt 1ho03feh220",
            "task opt 79619pe4lfs",
            "other",
        ];
        let svg = StackedBars {
            title: "t".into(),
            subtitle: "s".into(),
            value_label: "%".into(),
            segments: names.iter().map(|n| n.to_string()).collect(),
            rows: vec![StackedRow {
                label: "CPU 0".into(),
                segments: vec![1.0; names.len()],
                total: [7.0, 6.5, 7.5],
                note: String::new(),
                marker: None,
            }],
        }
        .to_svg();
        let width = super::super::test_support::int_after(&svg, "width=\"");
        for n in names {
            let (x, chars) = text_at(&svg, n);
            assert!(
                x + chars * 8 <= width,
                "{n} runs off the figure: {x}+{chars}"
            );
        }
        // The bar's total is still drawn below the legend, inside the figure.
        let (x, chars) = text_at(&svg, "7.0");
        assert!(x + chars * 8 <= width);
    }

    #[test]
    fn a_figure_whose_every_row_says_why_it_holds_no_parts_says_so() {
        let row = |label: &str, note: &str| StackedRow {
            label: label.into(),
            segments: Vec::new(),
            total: [3.0, 0.1, 9.0],
            note: note.into(),
            marker: None,
        };
        let bars = |rows| StackedBars {
            title: "t".into(),
            subtitle: "s".into(),
            value_label: "ns".into(),
            segments: vec!["a".into()],
            rows,
        };
        let two = bars(vec![
            row("CPU 0", "unstable (±29 %)"),
            row("CPU 1", "INVALID"),
        ]);
        assert_eq!(two.why_empty(), "CPU 0: unstable (±29 %), CPU 1: INVALID");
        // The figure carries it as its message, in place of empty axes.
        assert_eq!(count(&two.to_svg(), &two.why_empty()), 1);
        let many = bars(
            (0..6)
                .map(|i| row(&format!("CPU {i}"), "INVALID"))
                .collect(),
        );
        assert_eq!(
            many.why_empty(),
            "CPU 0: INVALID, CPU 1: INVALID, and 4 more: the table says why"
        );
        let silent = bars(vec![row("CPU 0", "")]);
        assert_eq!(
            silent.why_empty(),
            "no rows with finite, non-negative parts"
        );
    }

    /// An rpc report: the untraced tick at 25.9 µs struck through "21.2 ±0.1 µs/RPC
    /// untraced 25.9 µs", written from the bar's end at 21.2 µs; and a long reason ran off
    /// the figure's right edge.
    #[test]
    fn the_total_text_clears_its_marker_and_every_text_stays_in_the_figure() {
        let long = "invalid: corrected parts vs untraced rpc.total (the untraced RPC itself \
                    moved between the two measurements) (8.08 µs against 25.9 µs, ±15% allowed)";
        let svg = two_rows(25_900.0, long);
        let width = super::super::test_support::int_after(&svg, "width=\"");
        let tick_at = tick_x(&svg);
        let (x, chars) = text_at(&svg, "21.2 ±0.1 µs/RPC");
        assert!(
            x > tick_at,
            "the total at {x} starts before the tick at {tick_at}"
        );
        assert!(
            x + chars * 8 <= width,
            "the total runs off the figure: {x}+{chars}"
        );
        let (x, chars) = text_at(&svg, "not plotted: invalid");
        assert!(
            x + chars * 8 <= width,
            "the reason runs off the figure: {x}+{chars}"
        );
        // A marker well beyond the text leaves the text at the bar's end.
        let svg = two_rows(90_000.0, "invalid");
        let tick_at = tick_x(&svg);
        let (x, chars) = text_at(&svg, "21.2 ±0.1 µs/RPC");
        assert!(
            x < tick_at && x + chars * 8 < tick_at,
            "{x}+{chars} vs tick {tick_at}"
        );
    }

    #[test]
    fn rows_stack_in_fixed_order_with_totals() {
        let svg = StackedBars {
            title: "rpc: where the time goes".into(),
            subtitle: "testhost".into(),
            value_label: "ns/RPC".into(),
            segments: vec!["send".into(), "wake-up".into(), "server".into()],
            rows: vec![
                StackedRow {
                    label: "local pipe".into(),
                    segments: vec![400.0, 1300.0, 2000.0],
                    total: [3700.0, 3650.0, 3760.0],
                    note: "untraced 3.5 µs".into(),
                    marker: Some(3500.0),
                },
                StackedRow {
                    label: "remote-exclusive pipe".into(),
                    segments: vec![],
                    total: [f64::NAN; 3],
                    note: "invalid: no idle switch".into(),
                    marker: None,
                },
                StackedRow {
                    label: "broken".into(),
                    segments: vec![-1.0, 1.0, 1.0],
                    total: [1.0, 1.0, 1.0],
                    note: String::new(),
                    marker: None,
                },
            ],
        }
        .to_svg();
        assert_standalone(&svg, "rpc: where the time goes", "testhost");
        for t in [
            "send",
            "wake-up",
            "server",
            "local pipe",
            "3.70 ±0.06 µs/RPC",
            "untraced",
        ] {
            assert!(svg.contains(t), "{t} missing");
        }
        assert!(
            !svg.contains("[3650"),
            "the total is written by the units rule"
        );
        assert!(
            !svg.contains(">broken<"),
            "a row with a negative part is not drawn"
        );
        // legend swatches (3) + segments (3) at least
        assert!(count(&svg, "<rect") >= 6);
        // The untraced marker of the first row: one thick tick.
        assert_eq!(count(&svg, "stroke-width=\"3\""), 1, "{svg}");
    }
}
