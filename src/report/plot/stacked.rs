//! Horizontal stacked bars: one row per case (e.g. an RPC scenario and mechanism), split into
//! named segments in a fixed colour order (segment k always has colour k and the legend lists
//! them in that order), with the row's total and its 95% interval written at the bar's end,
//! and where a row has one, a reference drawn across it as a tick (e.g. the untraced time an
//! RPC's parts should add up to).

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{color, label_width, no_data, render, short_number, DrawResult, FONT, LABEL_PT};

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
    pub value_label: String,
    /// Segment names, in drawing (and colour) order.
    pub segments: Vec<String>,
    pub rows: Vec<StackedRow>,
}

impl StackedBars {
    pub fn to_svg(&self) -> String {
        let n = self.rows.len().max(1) as u32;
        let labels = label_width(self.rows.iter().map(|r| r.label.as_str())).min(420);
        let size = ((labels + 760).clamp(900, 1200), 48 + 130 + 40 * n);
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

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        let rows: Vec<&StackedRow> = self.rows.iter().filter(|r| drawable(r)).collect();
        if rows.iter().all(|r| r.segments.is_empty()) {
            return Err(no_data("no rows with finite, non-negative parts"));
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
        // Room for the total text after the longest bar.
        let max = if max > 0.0 { max * 1.45 } else { 1.0 };
        let (legend, plot) = area.split_vertically(34);
        self.draw_legend(&legend)?;
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .margin_right(30)
            .x_label_area_size(48)
            .y_label_area_size(label_width(rows.iter().map(|r| r.label.as_str())).min(420))
            .build_cartesian_2d(0.0..max, 0.0..n as f64)?;
        let x_fmt = |v: &f64| short_number(*v);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_label_formatter(&x_fmt)
            .x_desc(self.value_label.as_str())
            .label_style((FONT, LABEL_PT))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        for (i, r) in rows.iter().enumerate() {
            draw_row(&mut chart, (n - 1 - i) as f64, r, &self.value_label)?;
        }
        Ok(())
    }

    /// The segment names in colour order, one swatch each, across the top.
    fn draw_legend(&self, legend: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        let mut x = 12i32;
        for (k, name) in self.segments.iter().enumerate() {
            legend.draw(&Rectangle::new(
                [(x, 8), (x + 14, 22)],
                color(k).mix(0.85).filled(),
            ))?;
            legend.draw(&Text::new(
                name.clone(),
                (x + 18, 8),
                (FONT, LABEL_PT).into_font(),
            ))?;
            x += 26 + 8 * name.chars().count() as i32;
        }
        Ok(())
    }
}

/// Whether a row's parts can be stacked: all finite and non-negative.
fn drawable(r: &StackedRow) -> bool {
    r.segments.iter().all(|v| v.is_finite() && *v >= 0.0)
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One row at height `row`: its label, its segments end to end (or the reason it has none),
/// the marker, and the total with its interval after the bar.
fn draw_row(chart: &mut Chart<'_, '_>, row: f64, r: &StackedRow, unit: &str) -> DrawResult {
    let mid = row + 0.5;
    chart.draw_series(std::iter::once(
        EmptyElement::at((0.0, mid))
            + Text::new(
                r.label.clone(),
                (-8, 0),
                (FONT, LABEL_PT)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            ),
    ))?;
    if r.segments.is_empty() {
        chart.draw_series(std::iter::once(
            EmptyElement::at((0.0, mid))
                + Text::new(
                    format!("not plotted: {}", r.note),
                    (6, 0),
                    (FONT, LABEL_PT)
                        .into_font()
                        .color(&RGBColor(170, 40, 40))
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ),
        ))?;
        return Ok(());
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
            RGBColor(200, 0, 0).stroke_width(3),
        )))?;
    }
    let [t, lo, hi] = r.total;
    // The total and its interval by the units module's rule, as every view writes them
    // ("18.4 ±<0.05 µs/RPC"), never "18.4k [18.4k, 18.4k]".
    let text = format!(
        "{}{}",
        crate::units::interval::fmt_figure(t, lo, hi, unit),
        if r.note.is_empty() {
            String::new()
        } else {
            format!("  {}", r.note)
        }
    );
    chart.draw_series(std::iter::once(
        EmptyElement::at((at.max(hi), mid))
            + Text::new(
                text,
                (8, 0),
                (FONT, LABEL_PT)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ),
    ))?;
    Ok(())
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
