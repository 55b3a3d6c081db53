//! Where a figure's free text goes (cache-size and knee labels, plateau levels): each label
//! takes the first of its candidate positions that stays inside the plot area and clear of
//! the lines, the data and the labels placed before it. Fixed offsets put "L1d 32 KiB"
//! across the knee line drawn a little to its right, and stacked knee labels over each other.
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

    fn overlaps(&self, o: &Rect) -> bool {
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

/// What a figure's labels must keep clear of, and the labels placed so far.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// The plot area: a label stays inside it.
    pub area: Rect,
    /// Lines drawn on the figure (data curves, marker lines), in pixels.
    pub lines: Vec<((i32, i32), (i32, i32))>,
    /// Boxes already taken: data points, the legend, labels placed before.
    pub taken: Vec<Rect>,
}

/// Pixels kept between a label and a line.
const LINE_PAD: i32 = 2;

impl Layout {
    pub fn new(area: Rect) -> Self {
        Layout {
            area,
            lines: Vec::new(),
            taken: Vec::new(),
        }
    }

    /// Whether `r` lies in the area, clear of every line and every taken box.
    pub fn free(&self, r: &Rect) -> bool {
        r.within(&self.area)
            && !self.taken.iter().any(|t| t.overlaps(r))
            && !self
                .lines
                .iter()
                .any(|(a, b)| r.crossed_by(*a, *b, LINE_PAD))
    }

    /// The first free box of `candidates`, taken from now on; when none is free, the first
    /// candidate (a label is never dropped: the browser check reports the overlap).
    pub fn place(&mut self, candidates: &[Rect]) -> Option<Rect> {
        let chosen = candidates
            .iter()
            .find(|r| self.free(r))
            .or(candidates.first())
            .copied()?;
        self.taken.push(chosen);
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
        assert!(!l.free(&right));
        assert_eq!(l.place(&[right, left]), Some(left));
        // The same box is now taken: a second label there moves on too.
        let below = left.shifted(0, LINE_H);
        assert_eq!(l.place(&[left, below]), Some(below));
    }

    #[test]
    fn a_label_stays_inside_the_area_and_falls_back_to_its_first_place() {
        let mut l = layout();
        let outside = Rect::text("far", 390, 4);
        assert!(!l.free(&outside));
        let blocked = Rect::text("over", 90, 4);
        assert_eq!(l.place(&[blocked, outside]), Some(blocked));
        assert_eq!(l.place(&[]), None);
    }

    #[test]
    fn a_sloping_curve_blocks_the_boxes_it_passes_through() {
        let mut l = Layout::new(Rect::new(0, 0, 400, 200));
        l.lines.push(((0, 200), (400, 0)));
        assert!(!l.free(&Rect::new(190, 90, 20, 20)));
        assert!(l.free(&Rect::new(10, 10, 40, 16)));
    }
}
