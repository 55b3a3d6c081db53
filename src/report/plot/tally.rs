//! What a figure drew of the points it was given, carried in its markup so no figure can
//! drop a point without saying so. Every plot kind's `to_svg` ends in [`finish`]: the root
//! element gets `data-points-given`, `data-points-drawn` and `data-points-omitted`
//! (given − drawn), each drawn data mark gets `class="pt"`, and when a point is left out a
//! visible line under the figure says how many and why ("3 points not drawn: ≤ 0 on a log
//! axis"). The browser check (.ci/check_report_dom.py --points) counts the `.pt` marks the
//! page really shows against these numbers.
//!
//! plotters cannot put attributes on the elements it writes, so a data mark is drawn with an
//! opacity a hair below the one asked for ([`mark_style`]); [`finish`] turns exactly those
//! opacities back into the intended value plus `class="pt"`. No other element uses them.

use plotters::prelude::{Color, RGBColor, ShapeStyle};

/// How far below the requested opacity (a multiple of 0.001) a data mark is drawn:
/// invisible, and an opacity nothing else on a figure has.
const MARK_NUDGE: f64 = 1e-9;

/// The style of one data mark (a point, a bar, a cell): `c` at opacity `alpha`, filled,
/// recognised by [`finish`] as a drawn point.
pub(crate) fn mark_style(c: RGBColor, alpha: f64) -> ShapeStyle {
    let alpha = (alpha.clamp(0.01, 1.0) * 1000.0).round() / 1000.0;
    c.mix(alpha - MARK_NUDGE).filled()
}

/// The points a figure was given and the ones it left out, by reason.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Valid, resolved points handed to the figure (including those a caller left out on
    /// purpose, e.g. S = 0 on a log axis, which it adds with [`Tally::leave_out`]).
    pub given: usize,
    /// (count, reason) for each kind of point not drawn, in the order first seen.
    pub omitted: Vec<(usize, String)>,
    /// What one point is ("point", "sample"): the noun of the visible statement.
    pub noun: &'static str,
    /// Each drawn point has its own mark (false for a histogram, whose bars hold many).
    pub one_mark_each: bool,
}

impl Tally {
    pub fn new(noun: &'static str) -> Self {
        Tally {
            noun,
            one_mark_each: true,
            ..Default::default()
        }
    }

    /// A tally of points gathered into shared marks (samples into a histogram's bins).
    pub fn binned(noun: &'static str) -> Self {
        Tally {
            one_mark_each: false,
            ..Tally::new(noun)
        }
    }

    /// One more point handed to the figure: drawn when `left_out` is None, else not drawn
    /// for that reason.
    pub fn count(&mut self, left_out: Option<&str>) {
        self.given += 1;
        if let Some(reason) = left_out {
            self.leave_out(1, reason);
        }
    }

    /// `n` valid points not drawn, for `reason`.
    pub fn leave_out(&mut self, n: usize, reason: &str) {
        if n == 0 {
            return;
        }
        match self.omitted.iter_mut().find(|(_, r)| r == reason) {
            Some((k, _)) => *k += n,
            None => self.omitted.push((n, reason.to_string())),
        }
    }

    pub fn not_drawn(&self) -> usize {
        self.omitted.iter().map(|(n, _)| n).sum()
    }

    pub fn drawn(&self) -> usize {
        self.given.saturating_sub(self.not_drawn())
    }

    /// "8 points not drawn: ≤ 0 on a log axis (5), not a finite number (3)", or None.
    pub fn statement(&self) -> Option<String> {
        let n = self.not_drawn();
        if n == 0 {
            return None;
        }
        let noun = if n == 1 {
            self.noun.to_string()
        } else {
            format!("{}s", self.noun)
        };
        let reasons: Vec<String> = if self.omitted.len() == 1 {
            vec![self.omitted[0].1.clone()]
        } else {
            self.omitted
                .iter()
                .map(|(k, r)| format!("{r} ({k})"))
                .collect()
        };
        Some(format!("{n} {noun} not drawn: {}", reasons.join(", ")))
    }
}

/// Height added under a figure for the statement of what it left out.
const STATEMENT_H: u32 = 26;

/// Tags a rendered figure with its tally (see the module doc), marks its drawn data marks and
/// writes the statement of what it left out under it.
pub(crate) fn finish(svg: String, tally: &Tally) -> String {
    let svg = mark_points(&svg);
    let svg = match tally.statement() {
        Some(s) => add_statement(&svg, &s),
        None => svg,
    };
    svg.replacen(
        "<svg ",
        &format!(
            "<svg data-points-given=\"{}\" data-points-drawn=\"{}\" data-points-omitted=\"{}\" data-points-marks=\"{}\" ",
            tally.given,
            tally.drawn(),
            tally.not_drawn(),
            if tally.one_mark_each { "each" } else { "shared" }
        ),
        1,
    )
}

/// Rewrites each nudged opacity (see [`mark_style`]) as the intended one plus `class="pt"`.
fn mark_points(svg: &str) -> String {
    const KEY: &str = " opacity=\"";
    let mut out = String::with_capacity(svg.len() + 256);
    let mut rest = svg;
    while let Some(at) = rest.find(KEY) {
        let start = at + KEY.len();
        let Some(len) = rest[start..].find('"') else {
            break;
        };
        let value = &rest[start..start + len];
        out.push_str(&rest[..at]);
        match value.parse::<f64>().ok().and_then(nudged) {
            Some(intended) => {
                out.push_str(&format!(" class=\"pt\" opacity=\"{intended}\""));
            }
            _ => out.push_str(&rest[at..start + len + 1]),
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// The opacity a data mark was asked for, when `v` is one nudged by [`mark_style`] (just
/// under a multiple of 0.001); None for any other opacity.
fn nudged(v: f64) -> Option<f64> {
    let intended = (v * 1000.0).round() / 1000.0;
    ((intended - v - MARK_NUDGE).abs() < 1e-12).then_some(intended)
}

/// The figure made `STATEMENT_H` taller for each line of `text`, wrapped to its width (a
/// long list of reasons ran past the figure's right edge), written in its new bottom strip.
fn add_statement(svg: &str, text: &str) -> String {
    let Some((w, h)) = root_size(svg) else {
        return svg.to_string();
    };
    let lines = wrap(
        text,
        (w.saturating_sub(24) / super::CHAR_W).max(20) as usize,
    );
    let strip = STATEMENT_H + (lines.len() as u32 - 1) * (STATEMENT_H - 8);
    let grown = h + strip;
    let svg = svg.replacen(
        &format!("width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\""),
        &format!("width=\"{w}\" height=\"{grown}\" viewBox=\"0 0 {w} {grown}\""),
        1,
    );
    let Some(end) = svg.rfind("</svg>") else {
        return svg;
    };
    let texts: String = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            format!(
                "<text x=\"12\" y=\"{}\" font-family=\"sans-serif\" font-size=\"13\" fill=\"#AA2828\">{}</text>\n",
                h + 18 + i as u32 * (STATEMENT_H - 8),
                crate::escape::xml(line)
            )
        })
        .collect();
    format!(
        "{}<rect x=\"0\" y=\"{h}\" width=\"{w}\" height=\"{strip}\" fill=\"#FFFFFF\"/>\n{texts}{}",
        &svg[..end],
        &svg[end..]
    )
}

/// `text` in lines of at most `width` characters, broken between words.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Figures rendered by this module, one above the other, as one SVG document that counts
/// their points together (each keeps its own count and statement too): for a file that
/// holds two panels of one result.
pub fn stack(figures: &[String]) -> String {
    let mut body = String::new();
    let (mut width, mut height) = (0, 0);
    let mut tally = [0usize; 3];
    for svg in figures {
        let Some((w, h)) = root_size(svg) else {
            continue;
        };
        for (i, key) in ["given", "drawn", "omitted"].into_iter().enumerate() {
            tally[i] += attr(svg, &format!("data-points-{key}")).unwrap_or(0) as usize;
        }
        body.push_str(&svg.replacen("<svg ", &format!("<svg x=\"0\" y=\"{height}\" "), 1));
        body.push('\n');
        width = width.max(w);
        height += h;
    }
    format!(
        "<svg data-points-given=\"{}\" data-points-drawn=\"{}\" data-points-omitted=\"{}\" data-points-marks=\"each\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" xmlns=\"http://www.w3.org/2000/svg\">\n{body}</svg>\n",
        tally[0], tally[1], tally[2]
    )
}

/// (width, height) of the root `<svg width=".." height="..">`.
fn root_size(svg: &str) -> Option<(u32, u32)> {
    Some((attr(svg, "width")?, attr(svg, "height")?))
}

/// A whole-number attribute `name` of the root `<svg>` element.
fn attr(svg: &str, name: &str) -> Option<u32> {
    let head = &svg[..svg.find('>')?];
    let key = format!(" {name}=\"");
    let from = head.find(&key)? + key.len();
    head[from..].split('"').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_names_each_reason_with_its_count() {
        let mut t = Tally::new("point");
        t.count(None);
        t.count(Some("≤ 0 on a log axis"));
        t.count(Some("not a finite number"));
        t.count(Some("≤ 0 on a log axis"));
        assert_eq!((t.given, t.drawn(), t.not_drawn()), (4, 1, 3));
        assert_eq!(
            t.statement().unwrap(),
            "3 points not drawn: ≤ 0 on a log axis (2), not a finite number (1)"
        );
        let mut one = Tally::new("sample");
        one.leave_out(1, "above 9k");
        assert_eq!(one.statement().unwrap(), "1 sample not drawn: above 9k");
        assert_eq!(Tally::new("point").statement(), None);
    }

    #[test]
    fn finish_marks_nudged_opacities_only_and_states_omissions() {
        let svg = "<svg width=\"400\" height=\"50\" viewBox=\"0 0 400 50\">\n\
                   <circle cx=\"1\" cy=\"1\" r=\"3\" opacity=\"0.999999999\" fill=\"#000000\"/>\n\
                   <rect x=\"0\" y=\"0\" width=\"1\" height=\"1\" opacity=\"0.749999999\"/>\n\
                   <rect x=\"0\" y=\"0\" width=\"1\" height=\"1\" opacity=\"0.75\"/>\n</svg>\n";
        let mut t = Tally::new("point");
        t.count(None);
        t.count(None);
        t.count(Some("a <reason>"));
        let out = finish(svg.to_string(), &t);
        assert_eq!(out.matches("class=\"pt\"").count(), 2, "{out}");
        assert!(out.contains("class=\"pt\" opacity=\"0.75\""));
        assert!(out.contains("class=\"pt\" opacity=\"1\""));
        assert!(out.contains("opacity=\"0.75\"/>"));
        assert!(out
            .contains("data-points-given=\"3\" data-points-drawn=\"2\" data-points-omitted=\"1\""));
        assert!(out.contains("height=\"76\" viewBox=\"0 0 400 76\""));
        assert!(out.contains(">1 point not drawn: a &lt;reason&gt;</text>"));
    }

    /// A sweep's statement of three reasons ran past its figure's right edge.
    #[test]
    fn a_long_statement_is_wrapped_to_the_figure() {
        let svg = "<svg width=\"300\" height=\"50\" viewBox=\"0 0 300 50\">\n</svg>\n";
        let mut t = Tally::new("point");
        t.count(Some(
            "S = 0 has no place on the log axis (each line's legend gives its cost)",
        ));
        t.count(Some("no value at N=2 process"));
        let out = finish(svg.to_string(), &t);
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("<text"))
            .map(|l| &l[l.find('>').unwrap() + 1..l.find("</text>").unwrap()])
            .collect();
        assert!(lines.len() >= 3, "{lines:?}");
        assert!(lines[0].starts_with("2 points not drawn:"));
        let len = |l: &str| l.replace("&#39;", "'").chars().count();
        assert!(lines.iter().all(|l| len(l) * 8 <= 276), "{lines:?}");
        assert!(
            out.contains("height=\"112\" viewBox=\"0 0 300 112\"") || lines.len() != 3,
            "{out}"
        );
    }

    #[test]
    fn only_nudged_opacities_are_marks() {
        // plotters writes the colour's alpha with f64's Display: the nudge must survive it.
        for alpha in [1.0, 0.85, 0.8, 0.75, 0.7, 0.18] {
            let written: f64 = format!("{}", alpha - MARK_NUDGE).parse().unwrap();
            assert_eq!(nudged(written), Some(alpha), "{alpha}");
            assert_eq!(nudged(alpha), None, "{alpha}");
        }
        assert_eq!(nudged(0.5 * 0.85), None);
    }
}
