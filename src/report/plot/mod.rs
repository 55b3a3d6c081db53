//! The one plotting module every probe family uses, so all figures look alike and read the
//! same way: a title, a subtitle naming the machine, axis labels with units, a legend.
//!
//! Each plot kind is a plain struct filled by the caller and rendered with `to_svg()`, which
//! returns a standalone SVG document (a string). Rendering never fails: non-finite points are
//! dropped, and a plot with nothing to draw (or an internal drawing error) becomes a small SVG
//! that says so, because a report must never lose its other figures to one bad one.
//!
//! | data                                   | struct           |
//! |----------------------------------------|------------------|
//! | single figures with 95% intervals      | [`BarChart`]     |
//! | sweeps (working set, ring size ...)    | [`LinePlot`]     |
//! | matrices (core-to-core latency)        | [`Heatmap`]      |
//! | latency distributions, log-binned ones | [`Histogram`]    |
//! | variant labs (mechanism × variant)     | [`GroupedBars`]  |
//! | comparisons (ratio B/A per probe)      | [`RatioPlot`]    |
//! | breakdowns (RPC parts per scenario)    | [`StackedBars`]  |
//!
//! Text is measured with plotters' built-in naive font metrics (no font files are read), so
//! label areas are sized from character counts with room to spare.

mod bar;
mod grouped;
mod heatmap;
mod histogram;
mod line;
mod place;
mod ratio;
mod stacked;
mod tally;

pub use bar::{Bar, BarChart};
pub use grouped::{GroupedBars, GroupedSeries};
pub use heatmap::Heatmap;
pub use histogram::{Histogram, LogBin, Values};
pub use line::{Annotation, LinePlot, Marker, Point, Series, MAX_LEGEND};
pub use ratio::{RatioPlot, RatioRow, Threshold};
pub use stacked::{StackedBars, StackedRow};
pub use tally::stack;
pub use tally::Tally;
pub(crate) use tally::{finish, mark_style};

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Errors inside a drawing closure; turned into an explanatory SVG, never propagated.
pub(crate) type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Okabe–Ito palette: distinguishable with the common colour-vision deficiencies.
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// The colour of the i-th series.
pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

pub(crate) const FONT: &str = "sans-serif";
/// Font sizes as passed to plotters, which renders them at 1/1.24 of the value: these give
/// roughly 18 px titles, 12 px subtitles and 13 px labels.
pub(crate) const TITLE_PT: u32 = 22;
pub(crate) const SUBTITLE_PT: u32 = 15;
pub(crate) const LABEL_PT: u32 = 16;
pub(crate) const DESC_PT: u32 = 17;
/// Approximate width of one character of 13 px sans-serif text, used to size label areas.
pub(crate) const CHAR_W: u32 = 8;
/// The red of a reference drawn across the data (a knee, the untraced time of an RPC): the
/// browser's label check (.ci/label_probe.js) knows marker lines by this colour, so a label
/// drawn across one is refused.
pub(crate) const MARKER_RED: RGBColor = RGBColor(200, 40, 30);
/// Widths of one character of the bold 18 px title and of the 12 px subtitle, a little over
/// the average (the browser check measures the real ones).
const TITLE_CHAR_W: u32 = 10;
const SUBTITLE_CHAR_W: u32 = 6;
/// Height taken by the title and subtitle above the chart.
const HEADER_H: u32 = 48;

/// Draws the white page, the title and the subtitle, then hands the area below to `body`.
/// Any error from `body` (or an empty plot, signalled by `Err`) yields an SVG with the reason.
pub(crate) fn render(
    size: (u32, u32),
    title: &str,
    subtitle: &str,
    body: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> DrawResult,
) -> String {
    let mut out = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw_page(&root, title, subtitle, body).and_then(|_| root.present().map_err(Into::into))
    };
    match result {
        Ok(()) => out,
        Err(e) => message_svg(size, title, subtitle, &e.to_string()),
    }
}

fn draw_page(
    root: &DrawingArea<SVGBackend, Shift>,
    title: &str,
    subtitle: &str,
    body: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> DrawResult,
) -> DrawResult {
    root.fill(&WHITE)?;
    let room = root.dim_in_pixel().0.saturating_sub(24);
    root.draw(&Text::new(
        fit(title, room, TITLE_CHAR_W),
        (12, 8),
        (FONT, TITLE_PT)
            .into_font()
            .style(FontStyle::Bold)
            .color(&BLACK),
    ))?;
    root.draw(&Text::new(
        fit(subtitle, room, SUBTITLE_CHAR_W),
        (12, 32),
        (FONT, SUBTITLE_PT).into_font().color(&RGBColor(90, 90, 90)),
    ))?;
    let (_, plot) = root.split_vertically(HEADER_H);
    body(&plot)
}

/// `text` cut with "…" to at most `px` pixels at `char_w` pixels a character: a title longer
/// than its figure would run past the right edge.
pub(crate) fn fit(text: &str, px: u32, char_w: u32) -> String {
    let room = (px / char_w.max(1)).max(2) as usize;
    if text.chars().count() <= room {
        return text.to_string();
    }
    let cut: String = text.chars().take(room - 1).collect();
    format!("{}…", cut.trim_end())
}

/// A standalone SVG carrying only a title, a subtitle and a message ("no data", an error).
pub(crate) fn message_svg(size: (u32, u32), title: &str, subtitle: &str, msg: &str) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (size.0, 120.min(size.1))).into_drawing_area();
        let _ = draw_page(&root, title, subtitle, |area| {
            area.draw(&Text::new(
                msg.to_string(),
                (12, 20),
                (FONT, DESC_PT).into_font().color(&RGBColor(120, 120, 120)),
            ))?;
            Ok(())
        });
        let _ = root.present();
    }
    out
}

/// Records on the root element how many legend entries the figure drew
/// (`data-legend-entries`), so a browser test can hold every figure to [`MAX_LEGEND`]
/// from the rendered page.
pub(crate) fn tag_legend(svg: String, entries: usize) -> String {
    svg.replacen(
        "<svg ",
        &format!("<svg data-legend-entries=\"{entries}\" "),
        1,
    )
}

/// "Nothing to draw" as an error, so `render` shows the reason instead of empty axes.
pub(crate) fn no_data(what: &str) -> Box<dyn std::error::Error> {
    format!("no data to plot ({what})").into()
}

/// The message every figure without a single valid point carries (tests and the browser
/// check look for "no data to plot").
pub const NO_VALID_POINTS: &str =
    "no data to plot (every point is invalid or below resolution; the table says why)";

/// A number in at most 4 significant digits with a k/M/G suffix: tick labels stay short.
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if scaled == 0.0 {
        "0".to_string()
    } else if scaled.abs() >= 100.0 {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 10.0 {
        format!("{scaled:.1}")
    } else if scaled.abs() >= 1.0 {
        format!("{scaled:.2}")
    } else {
        format!("{scaled:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

/// A value the plot code can place: finite and far from f64's limits, so that padding a
/// range (×1.5, + 8%) or computing its span never overflows into an infinite range on
/// which tick generation would never end. No measurement comes near 1e100.
pub(crate) fn plottable(v: f64) -> bool {
    v.is_finite() && v.abs() < 1e100
}

/// (min, max) of plottable values, widened so a single value or a flat line still has a range.
pub(crate) fn finite_range(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.into_iter().filter(|v| plottable(*v)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return None;
    }
    if lo == hi {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return Some((lo - pad, hi + pad));
    }
    Some((lo, hi))
}

/// The red of a reason written where a mark would be ("not plotted: …").
pub(crate) const NOTE_RED: RGBColor = RGBColor(170, 40, 40);

/// Writes `text` at the data point `at`, `offset` pixels from it, in `style`.
pub(crate) fn write_at<'s, CT: CoordTranslate>(
    chart: &mut ChartContext<SVGBackend, CT>,
    at: CT::From,
    text: String,
    offset: (i32, i32),
    style: impl Into<TextStyle<'s>>,
) -> DrawResult {
    chart.draw_series(std::iter::once(
        EmptyElement::at(at) + Text::new(text, offset, style.into()),
    ))?;
    Ok(())
}

/// A 95% interval's whisker: the line between its `ends`, and at each end a cap reaching
/// `cap` pixels either side of it.
pub(crate) fn whisker<CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<SVGBackend, CT>,
    ends: [(f64, f64); 2],
    (dx, dy): (i32, i32),
    stroke: ShapeStyle,
) -> DrawResult {
    chart.draw_series(std::iter::once(PathElement::new(ends.to_vec(), stroke)))?;
    for end in ends {
        let cap = PathElement::new(vec![(-dx, -dy), (dx, dy)], stroke);
        chart.draw_series(std::iter::once(EmptyElement::at(end) + cap))?;
    }
    Ok(())
}

/// A row's label, right-aligned just left of `at` (the value axis at the row's centre).
pub(crate) fn row_label<CT: CoordTranslate>(
    chart: &mut ChartContext<SVGBackend, CT>,
    at: CT::From,
    text: String,
) -> DrawResult {
    let style = (FONT, LABEL_PT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    write_at(chart, at, text, (-8, 0), style)
}

/// The legend of a figure's series, at `at`, in the box every figure draws it in.
pub(crate) fn draw_legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    at: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FONT, LABEL_PT))
        .draw()?;
    Ok(())
}

/// Width in pixels to reserve for the longest of `labels`.
pub(crate) fn label_width<'a>(labels: impl IntoIterator<Item = &'a str>) -> u32 {
    labels
        .into_iter()
        .map(|l| l.chars().count() as u32)
        .max()
        .unwrap_or(4)
        * CHAR_W
        + 14
}

#[cfg(test)]
pub(crate) mod test_support {
    /// The whole number after `key` (which ends in `="`) in `text`: the first `x`, `y` or
    /// `width` of an SVG element line, for tests that check where a mark landed.
    pub fn int_after(text: &str, key: &str) -> i32 {
        let from = text
            .find(key)
            .unwrap_or_else(|| panic!("no {key} in {text}"))
            + key.len();
        text[from..].split('"').next().unwrap().parse().unwrap()
    }

    /// Checks what every oscost plot must contain to be readable on its own.
    pub fn assert_standalone(svg: &str, title: &str, subtitle: &str) {
        assert!(
            svg.starts_with("<svg"),
            "not an SVG document: {}",
            &svg[..40.min(svg.len())]
        );
        assert!(svg.trim_end().ends_with("</svg>"), "SVG not closed");
        assert!(svg.contains(title), "title {title:?} missing");
        assert!(svg.contains(subtitle), "subtitle {subtitle:?} missing");
        assert!(!svg.contains("NaN"), "NaN coordinates in SVG");
    }

    /// The trimmed contents of every `<text>` element (plotters puts them on their own lines).
    pub fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_string())
            })
            .collect()
    }

    pub fn has_text(svg: &str, text: &str) -> bool {
        texts(svg).iter().any(|t| t == text)
    }

    pub fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers_stay_short() {
        assert_eq!(short_number(0.0), "0");
        assert_eq!(short_number(1.0), "1");
        assert_eq!(short_number(12.345), "12.3");
        assert_eq!(short_number(0.1234), "0.123");
        assert_eq!(short_number(25_000.0), "25k");
        assert_eq!(short_number(3_500_000.0), "3.5M");
    }

    #[test]
    fn a_title_wider_than_its_figure_is_cut_with_an_ellipsis() {
        assert_eq!(fit("short", 100, 10), "short");
        assert_eq!(fit("0123456789abc", 100, 10), "012345678…");
        let svg = LinePlot {
            title: "mem.latency cpus=1 fits=L1d huge_page_share=0.0 order=random ".repeat(3),
            subtitle: "host".into(),
            width: 400,
            ..Default::default()
        }
        .to_svg();
        let title = &test_support::texts(&svg)[0];
        assert!(
            title.ends_with('…') && title.chars().count() <= 376 / 10,
            "{title}"
        );
    }

    #[test]
    fn range_of_one_value_is_widened() {
        assert_eq!(finite_range([5.0, f64::NAN]), Some((4.5, 5.5)));
        assert_eq!(finite_range([f64::NAN]), None);
        // Extremes that would overflow the padded range are dropped, not plotted.
        assert_eq!(
            finite_range([f64::MAX, -f64::MAX, 1.0, 3.0]),
            Some((1.0, 3.0))
        );
        assert_eq!(finite_range([f64::INFINITY, f64::NEG_INFINITY]), None);
    }

    #[test]
    fn empty_plot_says_no_data() {
        let svg = LinePlot {
            title: "empty".into(),
            subtitle: "host".into(),
            ..Default::default()
        }
        .to_svg();
        test_support::assert_standalone(&svg, "empty", "host");
        assert!(svg.contains("no data to plot"));
        // No legend was drawn, and the figure says so to the browser check.
        assert!(svg.contains("data-legend-entries=\"0\""));
    }
}
