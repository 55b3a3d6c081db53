//! Sweeps: one line per series with a shaded 95% band, optional log axes, and labelled
//! vertical markers (cache sizes on a working-set sweep, so the steps can be read against them).

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::place::{self, Layout, Rect};
use super::{color, finite_range, label_width, no_data, plottable, render, short_number};
use super::{DrawResult, DESC_PT, FONT, LABEL_PT};
use crate::units::size::{fmt_bytes, ByteStyle};

/// One point of a sweep: `y` with its 95% interval `[lo, hi]` (set lo = hi = y when unknown).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Point {
    pub fn new(x: f64, y: f64, lo: f64, hi: f64) -> Self {
        Point { x, y, lo, hi }
    }
    /// The point as drawn: an interval bound that is not a number is taken as the value
    /// (the point itself is still drawn).
    fn bounded(&self) -> Point {
        let or_y = |v: f64| if plottable(v) { v } else { self.y };
        Point::new(self.x, self.y, or_y(self.lo), or_y(self.hi))
    }
}

/// A named line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    /// x positions of this series' rows that have no value: its line breaks there instead
    /// of running across them.
    pub gaps: Vec<f64>,
}

impl Series {
    /// `p` (sorted by x) cut into runs the line may join: no gap lies between two
    /// neighbours of a run.
    fn runs<'a>(&self, p: &'a [Point]) -> Vec<&'a [Point]> {
        let mut out = Vec::new();
        let mut start = 0;
        for i in 1..p.len() {
            let (a, b) = (p[i - 1].x, p[i].x);
            if self.gaps.iter().any(|&g| g > a && g < b) {
                out.push(&p[start..i]);
                start = i;
            }
        }
        if !p.is_empty() {
            out.push(&p[start..]);
        }
        out
    }
}

/// A labelled vertical line at `x` (e.g. "L1d 32 KiB").
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

/// A text label placed at a data point (e.g. a plateau's level, "≈ 1.2 ns").
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub x: f64,
    pub y: f64,
    pub text: String,
}

/// Most legend entries a plot shows; further series are drawn but summarized in one entry
/// ("+ 5 more, see the table"), so a legend never buries the figure.
pub const MAX_LEGEND: usize = 12;

/// A line plot of sweeps. Fill it and call [`LinePlot::to_svg`].
#[derive(Debug, Clone, Default)]
pub struct LinePlot {
    pub title: String,
    /// Usually the machine's short name, so a figure read on its own says where it came from.
    pub subtitle: String,
    /// With the unit, e.g. "working set (bytes)".
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    /// Format x ticks as byte sizes (KiB, MiB) instead of plain numbers.
    pub x_bytes: bool,
    pub series: Vec<Series>,
    /// Grey vertical lines: known boundaries (cache sizes).
    pub markers: Vec<Marker>,
    /// Red dashed vertical lines: knees detected on the measured curves (the same knees the
    /// terminal text lists, from `analysis::knees`).
    pub knees: Vec<Marker>,
    /// Labels at data points: plateau levels.
    pub annotations: Vec<Annotation>,
    /// Valid points the caller did not put in a series, with the reason (e.g. the S = 0
    /// point of a log-x sweep, whose value the legend gives): stated under the figure.
    pub left_out: Vec<(usize, String)>,
    /// Each point's 95% interval also drawn as a vertical error bar with caps: for a sparse
    /// sweep (a few slices), whose band between few points hides the intervals, and a lone
    /// point, which has no band at all.
    pub error_bars: bool,
    /// Pixels; 0 means the default (900 × 480).
    pub width: u32,
    pub height: u32,
}

impl LinePlot {
    /// Why point `p` cannot be drawn on these axes, or None when it can.
    fn unplaceable(&self, p: &Point) -> Option<&'static str> {
        if !(plottable(p.x) && plottable(p.y)) {
            Some("not a finite number")
        } else if self.log_x && p.x <= 0.0 {
            Some("x ≤ 0 on a log axis")
        } else if self.log_y && p.y <= 0.0 {
            Some("≤ 0 on a log axis")
        } else {
            None
        }
    }

    /// The points the figure is given and the ones it cannot draw (see plot::tally).
    pub fn tally(&self) -> super::Tally {
        let mut t = super::Tally::new("point");
        for p in self.series.iter().flat_map(|s| &s.points) {
            t.count(self.unplaceable(p));
        }
        for (n, why) in &self.left_out {
            t.given += n;
            t.leave_out(*n, why);
        }
        t
    }

    /// The points drawn, interval bounds made finite.
    fn placed<'a>(&'a self, points: &'a [Point]) -> impl Iterator<Item = Point> + 'a {
        points
            .iter()
            .filter(|p| self.unplaceable(p).is_none())
            .map(Point::bounded)
    }

    /// Mark each cache size (e.g. ("L1d", 49152)) that falls within [lo, hi] with a labelled
    /// vertical line: sweeps over working sets all want the same markers.
    pub fn mark_caches(&mut self, caches: &[(String, u64)], lo: f64, hi: f64) {
        for (level, bytes) in caches {
            let x = *bytes as f64;
            if x >= lo && x <= hi {
                self.markers.push(Marker {
                    x,
                    label: format!("{level} {}", fmt_bytes(x, ByteStyle::Trimmed)),
                });
            }
        }
    }

    /// Renders a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let size = (
            if self.width == 0 { 900 } else { self.width },
            if self.height == 0 { 480 } else { self.height },
        );
        let named = self.series.iter().filter(|s| !s.name.is_empty()).count();
        let svg = render(size, &self.title, &self.subtitle, |area| self.draw(area));
        // A figure that could not be drawn shows a message and no legend at all.
        let drawn = if svg.contains("no data to plot") {
            0
        } else {
            named.min(MAX_LEGEND)
        };
        super::finish(super::tag_legend(svg, drawn), &self.tally())
    }

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        let pts = || self.series.iter().flat_map(|s| self.placed(&s.points));
        if self.series.iter().all(|s| s.points.is_empty()) {
            return Err(super::NO_VALID_POINTS.into());
        }
        let (x0, x1) =
            finite_range(pts().map(|p| p.x)).ok_or_else(|| no_data("no finite points"))?;
        // On a log axis an interval reaching 0 or below runs off the bottom (clipped there
        // when drawn); its point is still drawn.
        let (y0, y1) = finite_range(
            pts()
                .flat_map(|p| [p.lo, p.hi, p.y])
                .filter(|v| !self.log_y || *v > 0.0),
        )
        .ok_or_else(|| no_data("no finite points"))?;
        let (y0, y1) = if self.log_y {
            (y0 / 1.3, y1 * 1.3)
        } else {
            (
                (y0 - 0.05 * (y1 - y0)).min(0.0f64.max(y0 - (y1 - y0))),
                y1 + 0.08 * (y1 - y0),
            )
        };
        // Markers just outside the data still show; far-away ones would squash the data.
        // A log axis spans at least four octaves, so its ticks fall on round sizes
        // (64 KiB, 128 KiB), not on fractions like 102.4 KiB.
        let (x0, x1) = if self.log_x {
            let (a, b) = (x0 / 1.5, x1 * 1.5);
            let short = (16.0 / (b / a)).max(1.0).sqrt();
            (a / short, b * short)
        } else {
            (x0, x1)
        };
        match (self.log_x, self.log_y) {
            (false, false) => self.draw_in(area, x0..x1, y0..y1),
            // Byte sweeps step in powers of two; ticks at powers of two read as 4 KiB, 1 MiB.
            (true, false) if self.x_bytes => {
                self.draw_in(area, (x0..x1).log_scale().base(2.0), y0..y1)
            }
            (true, true) if self.x_bytes => {
                self.draw_in(area, (x0..x1).log_scale().base(2.0), (y0..y1).log_scale())
            }
            (true, false) => self.draw_in(area, (x0..x1).log_scale(), y0..y1),
            (false, true) => self.draw_in(area, x0..x1, (y0..y1).log_scale()),
            (true, true) => self.draw_in(area, (x0..x1).log_scale(), (y0..y1).log_scale()),
        }
    }

    fn draw_in<XS, YS>(&self, area: &DrawingArea<SVGBackend, Shift>, xs: XS, ys: YS) -> DrawResult
    where
        XS: AsRangedCoord<Value = f64>,
        YS: AsRangedCoord<Value = f64>,
        XS::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
        YS::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .margin_right(24)
            .x_label_area_size(48)
            .y_label_area_size(label_width(["00.00k"]) + 24)
            .build_cartesian_2d(xs, ys)?;
        let x_fmt = |v: &f64| {
            if self.x_bytes {
                fmt_bytes(*v, ByteStyle::Trimmed)
            } else {
                short_number(*v)
            }
        };
        let y_fmt = |v: &f64| short_number(*v);
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style((FONT, LABEL_PT))
            .axis_desc_style((FONT, DESC_PT))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;

        let legend = self.draw_marks(&mut chart)?;
        self.draw_lines(&mut chart)?;
        match legend {
            // Where draw_marks kept room for it, clear of the labels.
            Some((dx, dy)) => {
                super::draw_legend(&mut chart, SeriesLabelPosition::Coordinate(dx, dy))
            }
            None => Ok(()),
        }
    }

    /// The cache markers (grey, labelled at the top), the knees (red, dashed, one per size,
    /// labelled at the bottom) and the annotations; each label where it is clear of the lines,
    /// the data, the legend and the other labels ([`super::place`]). Returns where the legend
    /// goes.
    fn draw_marks<X, Y>(
        &self,
        chart: &mut Chart<'_, '_, X, Y>,
    ) -> Result<Option<(i32, i32)>, Box<dyn std::error::Error>>
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let (xr, yr) = (chart.x_range(), chart.y_range());
        let grey = RGBColor(110, 110, 110);
        let red = super::MARKER_RED;
        let markers: Vec<&Marker> = self
            .markers
            .iter()
            .filter(|m| plottable(m.x) && xr.contains(&m.x))
            .collect();
        // Knees of several curves often fall on the same size: one line and one label each.
        let mut knees: Vec<&Marker> = Vec::new();
        for k in self
            .knees
            .iter()
            .filter(|k| plottable(k.x) && xr.contains(&k.x))
        {
            if !knees.iter().any(|o| o.x == k.x) {
                knees.push(k);
            }
        }
        knees.sort_by(|a, b| a.x.total_cmp(&b.x));
        let (mut layout, legend) = self.layout(chart, markers.iter().chain(&knees).map(|m| m.x));
        for m in &markers {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(m.x, yr.start), (m.x, yr.end)],
                grey.stroke_width(1),
            )))?;
        }
        for k in &knees {
            chart.draw_series(DashedLineSeries::new(
                vec![(k.x, yr.start), (k.x, yr.end)],
                6,
                4,
                red.stroke_width(2),
            ))?;
        }
        // Cache labels in rows from the top, knee labels in rows from the bottom.
        for (m, top, colour) in markers
            .iter()
            .map(|m| (m, true, grey))
            .chain(knees.iter().map(|k| (k, false, red)))
        {
            Self::label_line(chart, &mut layout, m, top, colour)?;
        }
        self.draw_annotations(chart, &mut layout)?;
        Ok(legend)
    }

    /// The label of the marker line `m`, beside it: right of it when that is clear, else
    /// left of it; written upwards along it where lines stand closer than a label is long;
    /// in its short form where neither finds room ([`Layout::place_clear`]). From the top
    /// of the plot area down when `top`, else from the bottom up.
    fn label_line<X, Y>(
        chart: &mut Chart<'_, '_, X, Y>,
        layout: &mut Layout,
        m: &Marker,
        top: bool,
        colour: RGBColor,
    ) -> DrawResult
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let yr = chart.y_range();
        let area = layout.area;
        let anchor = chart.backend_coord(&(m.x, if top { yr.end } else { yr.start }));
        // Every row of the plot area, nearest its end first: a row there usually has
        // room, and a label further along its line is still beside it.
        let rows = (area.height() - 8) / place::LINE_H;
        // Where the whole label finds no clear place, its short form does ("N=2 knee",
        // the part before its parenthesis; the table names the cache).
        let short = m.label.split(" (").next().unwrap_or(&m.label);
        let row_y = |row: i32, height: i32| {
            if top {
                area.top + 4 + place::LINE_H * row
            } else {
                area.bottom - 4 - place::LINE_H * row - height
            }
        };
        let across = |label: &str| -> Vec<Rect> {
            (0..rows)
                .flat_map(|row| {
                    let right = Rect::text(label, anchor.0 + 4, row_y(row, place::LINE_H));
                    [right, right.shifted(-right.width() - 8, 0)]
                })
                .collect()
        };
        let along: Vec<Rect> = (0..rows)
            .flat_map(|row| {
                let text = Rect::text(&m.label, 0, 0);
                let right = Rect::new(
                    anchor.0 + 3,
                    row_y(row, text.width()),
                    text.height(),
                    text.width(),
                );
                [right, right.shifted(-right.width() - 6, 0)]
            })
            .collect();
        let (whole, brief) = (across(&m.label), across(short));
        let (label, (at, upwards)) = match layout.place_clear(&whole, &along) {
            Some(placed) => (m.label.as_str(), placed),
            None => match layout.place_clear(&brief, &[]) {
                Some(placed) => (short, placed),
                None => match layout.place_either(&whole, &along) {
                    Some(placed) => (m.label.as_str(), placed),
                    None => return Ok(()),
                },
            },
        };
        let (font, offset) = if upwards {
            // Rotated about its anchor, the text runs up from it and its lines stack to
            // the right: the anchor is the box's bottom-left corner.
            (
                (FONT, LABEL_PT)
                    .into_font()
                    .transform(FontTransform::Rotate270),
                (at.left - anchor.0, at.bottom - anchor.1),
            )
        } else {
            (
                (FONT, LABEL_PT).into_font(),
                (at.left - anchor.0, at.top - anchor.1),
            )
        };
        let at = (m.x, if top { yr.end } else { yr.start });
        super::write_at(chart, at, label.to_string(), offset, font.color(&colour))
    }

    /// The annotations (plateau levels): above their point, else below it, else further up
    /// or down, where that is clear.
    fn draw_annotations<X, Y>(
        &self,
        chart: &mut Chart<'_, '_, X, Y>,
        layout: &mut Layout,
    ) -> DrawResult
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let (xr, yr) = (chart.x_range(), chart.y_range());
        for a in &self.annotations {
            if !(a.x.is_finite() && a.y.is_finite() && xr.contains(&a.x) && yr.contains(&a.y)) {
                continue;
            }
            let p = chart.backend_coord(&(a.x, a.y));
            let above = Rect::text(&a.text, p.0 - 10, p.1 - 22);
            let candidates: Vec<Rect> = [0, 28, -16, 44, -32]
                .into_iter()
                .flat_map(|dy| [above.shifted(0, dy), above.shifted(-above.width() / 2, dy)])
                .collect();
            let Some(at) = layout.place(&candidates) else {
                continue;
            };
            let style = (FONT, LABEL_PT)
                .into_font()
                .style(FontStyle::Bold)
                .color(&RGBColor(40, 40, 40));
            let offset = (at.left - p.0, at.top - p.1);
            super::write_at(chart, (a.x, a.y), a.text.clone(), offset, style)?;
        }
        Ok(())
    }

    /// What the labels must keep clear of, in pixels: the plot area, the vertical lines at
    /// `verticals`, each series' line and points, and the legend's box; with where the
    /// legend goes (its offset in the plot area), when there is one.
    fn layout<X, Y>(
        &self,
        chart: &Chart<'_, '_, X, Y>,
        verticals: impl Iterator<Item = f64>,
    ) -> (Layout, Option<(i32, i32)>)
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let (px, py) = chart.plotting_area().get_pixel_range();
        let area = Rect::new(px.start, py.start, px.end - px.start, py.end - py.start);
        let mut layout = Layout::new(area);
        for x in verticals {
            let (x, _) = chart.backend_coord(&(x, chart.y_range().start));
            layout.lines.push(((x, area.top), (x, area.bottom)));
        }
        for s in &self.series {
            let mut p: Vec<(i32, i32)> = self
                .placed(&s.points)
                .map(|q| chart.backend_coord(&(q.x, q.y)))
                .collect();
            p.sort();
            layout.curves.extend(p.windows(2).map(|w| (w[0], w[1])));
            layout
                .points
                .extend(p.iter().map(|&(x, y)| Rect::new(x - 4, y - 4, 8, 8)));
        }
        // The legend, where draw_in puts it (plotters sizes it by its longest entry).
        let named: Vec<&str> = self
            .series
            .iter()
            .filter(|s| !s.name.is_empty())
            .map(|s| s.name.as_str())
            .take(MAX_LEGEND)
            .collect();
        let mut legend = None;
        if !named.is_empty() {
            // Below the cache labels at the top when there are markers; in the corner that
            // covers least of the data (the first of equals).
            let top = if self.markers.is_empty() { 5 } else { 58 };
            let longest = named.iter().map(|n| n.chars().count()).max().unwrap_or(0);
            let (w, h) = (
                longest as i32 * super::CHAR_W as i32 + 32,
                20 * named.len() as i32 + 14,
            );
            let (right, bottom) = (area.width() - w - 10, area.height() - h - 10);
            let corner = [(10, top), (right, top), (10, bottom), (right, bottom)]
                .into_iter()
                .min_by_key(|&(dx, dy)| {
                    layout.data_under(&Rect::new(area.left + dx, area.top + dy, w, h))
                })
                .unwrap_or((10, top));
            layout
                .taken
                .push(Rect::new(area.left + corner.0, area.top + corner.1, w, h));
            legend = Some(corner);
        }
        (layout, legend)
    }

    /// Each series: its band, its line and points, and its legend entry (at most
    /// MAX_LEGEND, the rest counted in the last).
    fn draw_lines<X, Y>(&self, chart: &mut Chart<'_, '_, X, Y>) -> DrawResult
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let named = self.series.iter().filter(|s| !s.name.is_empty()).count();
        let mut shown = 0usize;
        for (i, s) in self.series.iter().enumerate() {
            let c = color(i);
            let floor = chart.y_range().start;
            let mut p: Vec<Point> = self
                .placed(&s.points)
                .map(|q| Point {
                    lo: if self.log_y { q.lo.max(floor) } else { q.lo },
                    ..q
                })
                .collect();
            p.sort_by(|a, b| a.x.total_cmp(&b.x));
            if p.is_empty() {
                // Still one legend entry per line: a ring size without a valid point says so.
                if !s.name.is_empty() {
                    shown += 1;
                    if named <= MAX_LEGEND || shown < MAX_LEGEND {
                        chart
                            .draw_series(LineSeries::new(std::iter::empty(), c.stroke_width(2)))?
                            .label(format!("{} (no valid point)", s.name))
                            .legend(move |(x, y)| {
                                PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                            });
                    }
                }
                continue;
            }
            let runs = s.runs(&p);
            for run in &runs[1..] {
                draw_run(chart, run, c)?;
            }
            // The first run carries the legend entry.
            let line = draw_run(chart, runs[0], c)?;
            if !s.name.is_empty() {
                shown += 1;
                if named <= MAX_LEGEND || shown < MAX_LEGEND {
                    line.label(s.name.clone()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                    });
                } else if shown == MAX_LEGEND {
                    let more = named - MAX_LEGEND + 1;
                    line.label(format!("+ {more} more lines, see the table"))
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], WHITE.stroke_width(0))
                        });
                }
            }
            if self.error_bars {
                let stroke = c.stroke_width(1);
                for q in p.iter().filter(|q| q.hi > q.lo) {
                    super::whisker(chart, [(q.x, q.lo), (q.x, q.hi)], (5, 0), stroke)?;
                }
            }
            chart.draw_series(
                p.iter()
                    .map(|q| Circle::new((q.x, q.y), 3, super::mark_style(c, 1.0))),
            )?;
        }
        Ok(())
    }
}

/// One run of a series' points: its 95% band and its line, whose legend entry is the
/// caller's to give.
fn draw_run<'c, 'a, 'b, X, Y>(
    chart: &'c mut Chart<'a, 'b, X, Y>,
    run: &[Point],
    c: RGBColor,
) -> Result<&'c mut plotters::chart::SeriesAnno<'a, SVGBackend<'b>>, Box<dyn std::error::Error>>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut band: Vec<(f64, f64)> = run.iter().map(|q| (q.x, q.hi)).collect();
    band.extend(run.iter().rev().map(|q| (q.x, q.lo)));
    chart.draw_series(std::iter::once(Polygon::new(band, c.mix(0.18).filled())))?;
    let line = LineSeries::new(run.iter().map(|q| (q.x, q.y)), c.stroke_width(2));
    Ok(chart.draw_series(line)?)
}

/// A chart on an SVG area with the given axes.
type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_standalone, count, has_text};
    use super::*;

    fn sweep() -> LinePlot {
        let pts = |k: f64| {
            (10..=24)
                .map(|e| {
                    let x = f64::from(1u32 << e);
                    let y = k * (1.0 + (e as f64) / 4.0);
                    Point::new(x, y, y * 0.95, y * 1.05)
                })
                .collect()
        };
        LinePlot {
            title: "mem.latency: load-to-use latency".into(),
            subtitle: "testhost · 2 CPUs".into(),
            x_label: "working set (bytes)".into(),
            y_label: "latency (ns/load)".into(),
            log_x: true,
            x_bytes: true,
            series: vec![
                Series {
                    name: "sequential".into(),
                    points: pts(1.0),
                    ..Default::default()
                },
                Series {
                    name: "random".into(),
                    points: pts(3.0),
                    ..Default::default()
                },
            ],
            markers: vec![
                Marker {
                    x: 32768.0,
                    label: "L1d 32 KiB".into(),
                },
                Marker {
                    x: 1048576.0,
                    label: "L2 1 MiB".into(),
                },
                Marker {
                    x: 1e12,
                    label: "far away".into(),
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn a_line_breaks_where_its_series_has_no_value() {
        let whole = sweep();
        let mut broken = sweep();
        let xs: Vec<f64> = broken.series[0].points.iter().map(|p| p.x).collect();
        // A row between the third and the fourth point had no value.
        broken.series[0].gaps = vec![(xs[2] + xs[3]) / 2.0];
        let (a, b) = (whole.to_svg(), broken.to_svg());
        assert_eq!(
            count(&b, "<polygon"),
            count(&a, "<polygon") + 1,
            "band not cut"
        );
        assert_eq!(
            count(&b, "<polyline"),
            count(&a, "<polyline") + 1,
            "line not cut"
        );
    }

    #[test]
    fn line_plot_has_lines_bands_markers_and_legend() {
        let svg = sweep().to_svg();
        assert_standalone(
            &svg,
            "mem.latency: load-to-use latency",
            "testhost · 2 CPUs",
        );
        assert!(svg.contains("working set (bytes)") && svg.contains("latency (ns/load)"));
        assert!(has_text(&svg, "L1d 32 KiB") && has_text(&svg, "L2 1 MiB"));
        assert!(!svg.contains("far away"), "out-of-range marker drawn");
        assert!(
            svg.contains("sequential") && svg.contains("random"),
            "legend missing"
        );
        // Two bands (polygons) and two lines plus legend samples.
        assert_eq!(count(&svg, "<polygon"), 2);
        assert!(count(&svg, "<polyline") >= 2);
        assert!(svg.contains("data-legend-entries=\"2\""));
        assert!(count(&svg, "<circle") >= 30);
        assert!(
            svg.contains("KiB") && svg.contains("MiB"),
            "byte ticks missing"
        );
    }

    #[test]
    fn legend_never_exceeds_its_limit() {
        let mut p = sweep();
        let template = p.series[0].clone();
        p.series = (0..20)
            .map(|i| Series {
                name: format!("N={i}"),
                ..template.clone()
            })
            .collect();
        let svg = p.to_svg();
        assert!(svg.contains(&format!("data-legend-entries=\"{MAX_LEGEND}\"")));
        assert!(
            has_text(&svg, "+ 9 more lines, see the table"),
            "summary entry missing"
        );
        assert!(!has_text(&svg, "N=12") && has_text(&svg, "N=10"));
    }

    #[test]
    fn a_line_without_points_keeps_its_legend_entry() {
        let mut p = sweep();
        p.series[1].points.clear();
        let svg = p.to_svg();
        assert!(
            has_text(&svg, "random (no valid point)"),
            "{:?}",
            super::super::test_support::texts(&svg)
        );
    }

    /// Mem latency's figure dropped 8 of 54 valid points without a word, those
    /// whose interval reached below 0 on its log axis.
    #[test]
    fn a_log_axis_draws_points_whose_interval_reaches_zero_and_states_the_rest() {
        let mut p = sweep();
        p.log_y = true;
        let n: usize = p.series.iter().map(|s| s.points.len()).sum();
        p.series[0].points[3].lo = -40.0;
        p.series[0].points[4].lo = 0.0;
        p.series[1].points[2].y = 0.0;
        p.series[1].points[5].y = f64::NAN;
        p.left_out
            .push((2, "S = 0 has no place on the log axis".into()));
        let svg = p.to_svg();
        assert_eq!(count(&svg, "class=\"pt\""), n - 2);
        assert!(svg.contains(&format!(
            "data-points-given=\"{}\" data-points-drawn=\"{}\" data-points-omitted=\"4\"",
            n + 2,
            n - 2
        )));
        assert!(has_text(
            &svg,
            "4 points not drawn: ≤ 0 on a log axis (1), not a finite number (1), \
             S = 0 has no place on the log axis (2)"
        ));
    }

    #[test]
    fn log_axis_drops_non_positive_points_instead_of_failing() {
        let mut p = sweep();
        p.series[0].points.push(Point::new(0.0, 1.0, 1.0, 1.0));
        p.series[1].points.push(Point::new(f64::NAN, 1.0, 1.0, 1.0));
        let svg = p.to_svg();
        assert!(!svg.contains("no data"));
        assert_eq!(count(&svg, "<polygon"), 2);
    }

    /// The x of each `<text>` whose content is `label`, and of each line of `stroke`.
    fn xs_of(svg: &str, what: &str) -> Vec<i32> {
        svg.lines()
            .zip(svg.lines().skip(1))
            .filter_map(|(a, b)| {
                let hit = if what.starts_with('#') {
                    a.contains(&format!("stroke=\"{what}\"")) && a.starts_with("<polyline")
                } else {
                    a.starts_with("<text") && b.trim() == what
                };
                let key = if a.starts_with("<text") {
                    " x=\""
                } else {
                    "points=\""
                };
                let from = a.find(key)? + key.len();
                hit.then(|| a[from..].split([',', '"']).next()?.parse().ok())?
            })
            .collect()
    }

    /// "L1d 32 KiB" was drawn across the knee line at 48 KiB, just right of it.
    #[test]
    fn a_marker_label_is_placed_clear_of_the_other_lines() {
        let mut p = sweep();
        p.knees.push(Marker {
            x: 49152.0,
            label: "knee 48 KiB".into(),
        });
        let svg = p.to_svg();
        let knee = xs_of(&svg, "#C8281E");
        let label = xs_of(&svg, "L1d 32 KiB");
        assert!(!knee.is_empty() && label.len() == 1, "{knee:?} {label:?}");
        let (x, w) = (label[0], "L1d 32 KiB".len() as i32 * 8);
        assert!(
            knee.iter().all(|k| *k < x || *k > x + w),
            "label at {x}..{} crosses a knee line at {knee:?}",
            x + w
        );
        // The cache line it labels is beside it, not under it.
        let cache = xs_of(&svg, "#6E6E6E");
        assert!(cache.iter().all(|c| *c < x || *c > x + w), "{cache:?}");
    }

    /// A live ctx sweep drew knee labels over each other and across the next knee's
    /// line, where knees stood closer than their labels are long.
    #[test]
    fn knee_labels_closer_than_their_length_cross_no_line_and_no_other_label() {
        let mut p = sweep();
        for (x, n) in [(131072.0, 2), (262144.0, 4), (524288.0, 8)] {
            p.knees.push(Marker {
                x,
                label: format!("N={n} knee (L2 total (1m/{n}))"),
            });
        }
        let svg = p.to_svg();
        let lines: Vec<i32> = xs_of(&svg, "#C8281E")
            .into_iter()
            .chain(xs_of(&svg, "#6E6E6E"))
            .collect();
        // Each knee label, whole or in its short form, as a box (x, y, width, height).
        let mut boxes = Vec::new();
        let mut head = "";
        for line in svg.lines() {
            let text = line.trim();
            if text.starts_with("N=") && head.contains("fill=\"#C8281E\"") {
                let num = |key: &str| super::super::test_support::int_after(head, key);
                let len = text.chars().count() as i32 * 8;
                boxes.push(if head.contains("rotate(270") {
                    (num(" x=\""), num(" y=\"") - len, 16, len)
                } else {
                    (num(" x=\""), num(" y=\""), len, 16)
                });
            }
            head = line;
        }
        assert_eq!(boxes.len(), 3, "{svg}");
        for (i, &(x, y, w, h)) in boxes.iter().enumerate() {
            for l in &lines {
                assert!(
                    *l < x || *l > x + w,
                    "knee label {i} at {x}..{} crosses {l}",
                    x + w
                );
            }
            for &(x2, y2, w2, h2) in &boxes[i + 1..] {
                let apart = x + w <= x2 || x2 + w2 <= x || y + h <= y2 || y2 + h2 <= y;
                assert!(apart, "knee labels overlap: {:?}", boxes);
            }
        }
    }

    /// The simulator's sweep drew its legend over its points in the upper left corner: the
    /// legend goes to the corner with the least data under it.
    #[test]
    fn the_legend_goes_where_the_data_is_not() {
        let falling: Vec<Point> = (10..=24)
            .map(|e| {
                let y = 100.0 - 6.0 * f64::from(e - 10);
                Point::new(f64::from(1u32 << e), y, y, y)
            })
            .collect();
        let svg = LinePlot {
            title: "t".into(),
            subtitle: "s".into(),
            log_x: true,
            series: vec![Series {
                name: "rv32im".into(),
                points: falling,
                ..Default::default()
            }],
            ..Default::default()
        }
        .to_svg();
        let legend = svg
            .lines()
            .find(|l| l.contains("stroke=\"#B4B4B4\""))
            .expect("legend box");
        let x = super::super::test_support::int_after(legend, " x=\"");
        assert!(
            x > 450,
            "legend at x = {x}, over the falling curve's upper left"
        );
    }

    /// Error bars: one line and two caps per point with an interval, none without the flag.
    #[test]
    fn error_bars_draw_each_points_interval() {
        let plot = |error_bars| {
            LinePlot {
                title: "ctx.timeslice".into(),
                subtitle: "s".into(),
                x_label: "slice (ms)".into(),
                y_label: "× sequential".into(),
                series: vec![Series {
                    name: String::new(),
                    points: vec![
                        Point::new(1.0, 1.0, 0.9, 1.2),
                        Point::new(4.0, 1.1, 1.0, 1.3),
                        Point::new(8.0, 1.2, 1.2, 1.2),
                    ],
                    ..Default::default()
                }],
                error_bars,
                ..Default::default()
            }
            .to_svg()
        };
        let (with, without) = (plot(true), plot(false));
        assert_eq!(
            count(&with, "<polyline") - count(&without, "<polyline"),
            6,
            "two points with an interval, three strokes each"
        );
    }
}
