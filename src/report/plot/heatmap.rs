//! Matrices (core-to-core latency, placement × mechanism): coloured cells with their value
//! written in, a colour scale, and empty cells (not measured, invalid) left hatched grey.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{finite_range, label_width, render, short_number};
use super::{DrawResult, DESC_PT, FONT, LABEL_PT};

/// A heatmap: `cells[row][col]`, rows labelled by `row_labels` (top to bottom), columns by
/// `col_labels` (left to right). None marks a cell without a number.
#[derive(Debug, Clone, Default)]
pub struct Heatmap {
    pub title: String,
    pub subtitle: String,
    /// e.g. "to CPU".
    pub x_label: String,
    /// e.g. "from CPU".
    pub y_label: String,
    /// Unit of the cell values, shown on the colour scale, e.g. "ns/round trip".
    pub unit: String,
    pub col_labels: Vec<String>,
    pub row_labels: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
}

/// Light yellow (low) to dark blue (high): monotone in lightness, so it reads in grey too.
fn ramp(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let (a, b) = ((255.0, 247.0, 188.0), (8.0, 48.0, 107.0));
    let mix = |x: f64, y: f64| (x + (y - x) * t).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

impl Heatmap {
    pub fn to_svg(&self) -> String {
        let rows = self.row_labels.len().max(self.cells.len()).max(1) as u32;
        let cols = self.col_labels.len().max(1) as u32;
        let cell = (700 / cols).clamp(28, 80);
        let w =
            (cell * cols + label_width(self.row_labels.iter().map(String::as_str)) + 200).max(520);
        let h = 48 + 100 + cell * rows;
        let svg = render((w, h), &self.title, &self.subtitle, |a| self.draw(a));
        super::finish(svg, &self.tally())
    }

    /// Cells with a value are the points given; one that is not a finite number is left
    /// out (an empty cell is not a point: it is drawn grey).
    pub fn tally(&self) -> super::Tally {
        let mut t = super::Tally::new("cell");
        for v in self.cells.iter().flatten().flatten() {
            t.count((!super::plottable(*v)).then_some("not a finite number"));
        }
        t
    }

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        let nrows = self.cells.len();
        let ncols = self.cells.iter().map(Vec::len).max().unwrap_or(0);
        let (lo, hi) = finite_range(self.cells.iter().flatten().flatten().copied())
            .ok_or_else(|| -> Box<dyn std::error::Error> { super::NO_VALID_POINTS.into() })?;
        let (plot, scale) = area.split_horizontally(area.dim_in_pixel().0 - 130);
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(label_width(self.row_labels.iter().map(String::as_str)) + 30)
            // A one-column (or one-row) range 0..0 has no width: every cell would be drawn
            // with a negative width. Such a map gets one spare, unlabelled segment.
            .build_cartesian_2d(
                (0..(ncols - 1).max(1)).into_segmented(),
                (0..(nrows - 1).max(1)).into_segmented(),
            )?;
        let col = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(c) => self.col_labels.get(*c).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        // Row 0 is drawn at the top.
        let row = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(r) if *r < nrows => self
                .row_labels
                .get(nrows - 1 - *r)
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(ncols)
            .y_labels(nrows)
            .x_label_formatter(&col)
            .y_label_formatter(&row)
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .label_style((FONT, LABEL_PT))
            .axis_desc_style((FONT, DESC_PT))
            .draw()?;
        for (r, cells) in self.cells.iter().enumerate() {
            let y = nrows - 1 - r;
            for (c, v) in cells.iter().enumerate() {
                let corners = [
                    (SegmentValue::Exact(c), SegmentValue::Exact(y)),
                    (SegmentValue::Exact(c + 1), SegmentValue::Exact(y + 1)),
                ];
                let (fill, text) = match v.filter(|v| super::plottable(*v)) {
                    Some(v) => {
                        let t = (v - lo) / (hi - lo);
                        (
                            ramp(t),
                            Some((short_number(v), if t > 0.55 { WHITE } else { BLACK })),
                        )
                    }
                    None => (RGBColor(225, 225, 225), None),
                };
                let style = if text.is_some() {
                    super::mark_style(fill, 1.0)
                } else {
                    fill.filled()
                };
                let mut rect = Rectangle::new(corners, style);
                rect.set_margin(1, 1, 1, 1);
                chart.draw_series(std::iter::once(rect))?;
                if let Some((s, ink)) = text {
                    let at = (SegmentValue::CenterOf(c), SegmentValue::CenterOf(y));
                    let style = (FONT, LABEL_PT - 2)
                        .into_font()
                        .color(&ink)
                        .pos(Pos::new(HPos::Center, VPos::Center));
                    super::write_at(&mut chart, at, s, (0, 0), style)?;
                }
            }
        }
        self.draw_scale(&scale, lo, hi)
    }

    /// A vertical colour bar with its low/high values and the unit.
    fn draw_scale(&self, area: &DrawingArea<SVGBackend, Shift>, lo: f64, hi: f64) -> DrawResult {
        let steps = 40;
        let (x0, y0, bar_h) = (10, 24, 200);
        for i in 0..steps {
            let t = 1.0 - i as f64 / steps as f64;
            let y = y0 + i * bar_h / steps;
            area.draw(&Rectangle::new(
                [(x0, y), (x0 + 18, y + bar_h / steps + 1)],
                ramp(t).filled(),
            ))?;
        }
        let font = (FONT, LABEL_PT).into_font();
        area.draw(&Text::new(short_number(hi), (x0 + 24, y0), font.clone()))?;
        area.draw(&Text::new(
            short_number(lo),
            (x0 + 24, y0 + bar_h - 12),
            font.clone(),
        ))?;
        area.draw(&Text::new(self.unit.clone(), (x0, y0 - 20), font))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_standalone, count, has_text};
    use super::*;

    #[test]
    fn a_cell_with_a_value_is_a_point() {
        let svg = Heatmap {
            title: "t".into(),
            subtitle: "s".into(),
            col_labels: vec!["0".into(), "1".into()],
            row_labels: vec!["0".into(), "1".into()],
            cells: vec![vec![Some(1.0), None], vec![Some(f64::NAN), Some(2.0)]],
            ..Default::default()
        }
        .to_svg();
        assert_eq!(super::super::test_support::count(&svg, "class=\"pt\""), 2);
        assert!(svg.contains("1 cell not drawn: not a finite number"));
    }

    #[test]
    fn heatmap_has_one_cell_per_entry_values_and_scale() {
        let cells = vec![
            vec![None, Some(120.0), Some(250.0)],
            vec![Some(118.0), None, Some(260.0)],
            vec![Some(251.0), Some(262.0), None],
        ];
        let svg = Heatmap {
            title: "ipc.c2c: core-to-core round trip".into(),
            subtitle: "testhost".into(),
            x_label: "to CPU".into(),
            y_label: "from CPU".into(),
            unit: "ns/round trip".into(),
            col_labels: vec!["0".into(), "1".into(), "2".into()],
            row_labels: vec!["0".into(), "1".into(), "2".into()],
            cells,
        }
        .to_svg();
        assert_standalone(&svg, "ipc.c2c: core-to-core round trip", "testhost");
        for t in ["120", "262", "ns/round trip", "to CPU", "from CPU"] {
            assert!(has_text(&svg, t), "{t} missing");
        }
        // 9 cells + 40 scale steps + page/plot backgrounds
        assert!(count(&svg, "<rect") >= 49);
        assert!(svg.contains("fill=\"#E1E1E1\""), "missing cells not grey");
    }

    #[test]
    fn a_single_column_or_row_draws_cells_with_positive_size() {
        for (cols, rows) in [(1usize, 2usize), (2, 1), (1, 1)] {
            let svg = Heatmap {
                title: "one class".into(),
                subtitle: "testhost".into(),
                x_label: "class".into(),
                y_label: "mechanism".into(),
                unit: "ns".into(),
                col_labels: (0..cols).map(|c| c.to_string()).collect(),
                row_labels: (0..rows).map(|r| r.to_string()).collect(),
                cells: (0..rows)
                    .map(|r| (0..cols).map(|c| Some((r * 10 + c + 1) as f64)).collect())
                    .collect(),
            }
            .to_svg();
            assert!(
                !svg.contains("width=\"-") && !svg.contains("height=\"-"),
                "{cols}x{rows}: a cell with a negative size"
            );
        }
    }
}
