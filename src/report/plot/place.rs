//! Where a figure's free text goes (cache-size and knee labels, plateau levels): each label
//! takes the first of its candidate positions that stays inside the plot area and clear of
//! the lines, the data and the labels placed before it: fixed offsets can put a cache label
//! across a knee line, or knee labels over each other.
//!
//! Text is measured as the plot module sizes label areas ([`super::CHAR_W`] a character), a
//! little wider than the browser draws it, so a free box is free on the page too.

/// A box in pixels: `left..right` × `top..bottom`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rect {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

/// Height of one line of label text, with room for antialiased edges.
pub(crate) const LINE_H: i32 = 16;

impl Rect {
    pub fn new(left: i32, top: i32, width: i32, height: i32) -> Self {
        Rect {
            left,
            top,
            right: left + width,
            bottom: top + height,
        }
    }

    /// The box of one line of `text` whose top-left corner is (`left`, `top`).
    pub fn text(text: &str, left: i32, top: i32) -> Self {
        let width = text.chars().count() as i32 * super::CHAR_W as i32;
        Rect::new(left, top, width, LINE_H)
    }

    /// The same box moved by (`dx`, `dy`).
    pub fn shifted(self, dx: i32, dy: i32) -> Self {
        Rect::new(self.left + dx, self.top + dy, self.width(), self.height())
    }

    pub fn width(&self) -> i32 {
        self.right - self.left
    }

    pub fn height(&self) -> i32 {
        self.bottom - self.top
    }

    pub fn overlaps(&self, o: &Rect) -> bool {
        self.left < o.right && o.left < self.right && self.top < o.bottom && o.top < self.bottom
    }

    fn within(&self, o: &Rect) -> bool {
        self.left >= o.left && self.right <= o.right && self.top >= o.top && self.bottom <= o.bottom
    }

    /// Whether the segment a–b passes through the box grown by `pad` pixels (sampled every
    /// pixel along it).
    fn crossed_by(&self, a: (i32, i32), b: (i32, i32), pad: i32) -> bool {
        let (dx, dy) = (f64::from(b.0 - a.0), f64::from(b.1 - a.1));
        let n = dx.hypot(dy).ceil().max(1.0) as i32;
        (0..=n).any(|i| {
            let t = f64::from(i) / f64::from(n);
            let (x, y) = (f64::from(a.0) + dx * t, f64::from(a.1) + dy * t);
            x > f64::from(self.left - pad)
                && x < f64::from(self.right + pad)
                && y > f64::from(self.top - pad)
                && y < f64::from(self.bottom + pad)
        })
    }
}

/// A line segment in pixels.
pub(crate) type Segment = ((i32, i32), (i32, i32));

/// What a figure's labels must keep clear of, and the labels placed so far.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// The plot area: a label stays inside it.
    pub area: Rect,
    /// Marker lines (cache sizes, knees): a label never crosses one.
    pub lines: Vec<Segment>,
    /// Boxes already taken: the legend, labels placed before; a label never covers one.
    pub taken: Vec<Rect>,
    /// The data, curves and points: kept clear of wherever a candidate position allows.
    pub curves: Vec<Segment>,
    pub points: Vec<Rect>,
}

/// Pixels kept between a label and a line.
const LINE_PAD: i32 = 2;

impl Layout {
    pub fn new(area: Rect) -> Self {
        Layout {
            area,
            lines: Vec::new(),
            taken: Vec::new(),
            curves: Vec::new(),
            points: Vec::new(),
        }
    }

    /// Whether `r` lies in the area, clear of every marker line and every taken box, and
    /// (with `of_data`) of the curves and points too.
    pub fn free(&self, r: &Rect, of_data: bool) -> bool {
        let crosses = |lines: &[Segment]| lines.iter().any(|(a, b)| r.crossed_by(*a, *b, LINE_PAD));
        let on_data = || crosses(&self.curves) || self.points.iter().any(|p| p.overlaps(r));
        r.within(&self.area)
            && !self.taken.iter().any(|t| t.overlaps(r))
            && !crosses(&self.lines)
            && (!of_data || !on_data())
    }

    /// The first box of `first`, else of `second`, that is clear of everything, taken;
    /// None when there is none (true: the box is one of `second`'s).
    pub fn place_clear(&mut self, first: &[Rect], second: &[Rect]) -> Option<(Rect, bool)> {
        let clear = |c: &[Rect]| c.iter().find(|r| self.free(r, true)).copied();
        let chosen = clear(first)
            .map(|r| (r, false))
            .or_else(|| clear(second).map(|r| (r, true)))?;
        self.taken.push(chosen.0);
        Some(chosen)
    }

    /// How much of the data `r` covers: the curve segments through it and the points in it.
    pub fn data_under(&self, r: &Rect) -> usize {
        let segments = self.curves.iter();
        segments
            .filter(|(a, b)| r.crossed_by(*a, *b, LINE_PAD))
            .count()
            + self.points.iter().filter(|p| p.overlaps(r)).count()
    }

    /// The first box of `candidates` clear of everything; else the one clear of the lines
    /// and the other labels that covers least of the data; else the first candidate (a label is never dropped: the browser check reports the overlap).
    /// Taken from now on.
    pub fn place(&mut self, candidates: &[Rect]) -> Option<Rect> {
        self.place_either(candidates, &[]).map(|(r, _)| r)
    }

    /// As [`Layout::place`], from `first` or else `second` at each step (a label written
    /// across, else one written along its line); true when the box is one of `second`'s.
    pub fn place_either(&mut self, first: &[Rect], second: &[Rect]) -> Option<(Rect, bool)> {
        if let Some(placed) = self.place_clear(first, second) {
            return Some(placed);
        }
        // Over the data, the box that covers least of it (the first of equals).
        let least = || {
            let tagged = first.iter().map(|r| (*r, false));
            let tagged = tagged.chain(second.iter().map(|r| (*r, true)));
            tagged
                .filter(|(r, _)| self.free(r, false))
                .min_by_key(|(r, _)| self.data_under(r))
        };
        let chosen = least().or_else(|| first.first().map(|r| (*r, false)))?;
        self.taken.push(chosen.0);
        Some(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        let mut l = Layout::new(Rect::new(0, 0, 400, 200));
        // A vertical marker line at x = 100 and another at x = 140.
        l.lines.push(((100, 0), (100, 200)));
        l.lines.push(((140, 0), (140, 200)));
        l
    }

    #[test]
    fn a_label_crossing_a_line_takes_its_next_candidate() {
        let mut l = layout();
        // "L1d 32 KiB" right of x = 100 runs across the line at 140; left of it is free.
        let right = Rect::text("L1d 32 KiB", 104, 4);
        let left = right.shifted(-right.width() - 8, 0);
        assert!(!l.free(&right, false));
        assert_eq!(l.place(&[right, left]), Some(left));
        // The same box is now taken: a second label there moves on too.
        let below = left.shifted(0, LINE_H);
        assert_eq!(l.place(&[left, below]), Some(below));
    }

    #[test]
    fn a_label_stays_inside_the_area_and_falls_back_to_its_first_place() {
        let mut l = layout();
        let outside = Rect::text("far", 390, 4);
        assert!(!l.free(&outside, false));
        let blocked = Rect::text("over", 90, 4);
        assert_eq!(l.place(&[blocked, outside]), Some(blocked));
        assert_eq!(l.place(&[]), None);
    }

    #[test]
    fn a_sloping_curve_blocks_the_boxes_it_passes_through() {
        let mut l = Layout::new(Rect::new(0, 0, 400, 200));
        l.curves.push(((0, 200), (400, 0)));
        assert!(!l.free(&Rect::new(190, 90, 20, 20), true));
        assert!(l.free(&Rect::new(190, 90, 20, 20), false));
        assert!(l.free(&Rect::new(10, 10, 40, 16), true));
    }

    /// A live ctx sweep drew its knee labels over each other: every bottom row crossed a
    /// curve, and each label fell back to the same first place.
    #[test]
    fn where_the_data_leaves_no_room_labels_still_keep_clear_of_each_other() {
        let mut l = Layout::new(Rect::new(0, 0, 400, 40));
        l.curves.push(((0, 20), (400, 20)));
        let a = Rect::text("N=8 knee", 10, 4);
        let candidates = [a, a.shifted(0, 18)];
        let first = l.place(&candidates).unwrap();
        let second = l.place(&candidates).unwrap();
        assert!(!first.overlaps(&second), "{first:?} {second:?}");
    }

    #[test]
    fn a_label_with_no_room_across_is_written_along_its_line() {
        let mut l = layout();
        // 40 px between the lines: "N=2 knee (L2 total)" fits neither right nor left of 100
        // (the other side runs into 60 and beyond), but upright between them it does.
        l.lines.push(((60, 0), (60, 200)));
        let across = Rect::text("N=2 knee (L2 total)", 104, 180);
        let across = [across, across.shifted(-across.width() - 8, 0)];
        let along = [Rect::new(103, 20, 16, 152)];
        assert_eq!(l.place_either(&across, &along), Some((along[0], true)));
    }
}
