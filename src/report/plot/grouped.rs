//! Variant labs and side-by-side runs: for each group (a mechanism, a probe) one bar per series
//! (a variant, a run), each with its 95% whisker. A missing value leaves a gap marked "n/a".

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{color, no_data, render, short_number, DrawResult, DESC_PT, FONT, LABEL_PT};

/// One series across all groups: `values[g]` is `[value, lo, hi]` for group `g`, or None.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupedSeries {
    pub name: String,
    pub values: Vec<Option<[f64; 3]>>,
}

/// Grouped vertical bars. Fill it and call [`GroupedBars::to_svg`].
#[derive(Debug, Clone, Default)]
pub struct GroupedBars {
    pub title: String,
    pub subtitle: String,
    /// What the groups are, e.g. "mmap variant".
    pub x_label: String,
    /// The value axis with its unit.
    pub y_label: String,
    pub groups: Vec<String>,
    pub series: Vec<GroupedSeries>,
}

impl GroupedBars {
    pub fn to_svg(&self) -> String {
        let bars = self.groups.len().max(1) * self.series.len().max(1);
        let w = (160 + bars as u32 * 34 + self.groups.len() as u32 * 20).clamp(640, 1300);
        let svg = super::tag_legend(
            render((w, 500), &self.title, &self.subtitle, |a| self.draw(a)),
            self.series.len().min(super::MAX_LEGEND),
        );
        super::finish(svg, &self.tally())
    }

    /// Values present are the points given; one beyond the last group or not a finite
    /// number is left out (a missing value is not a point: its gap says "n/a").
    pub fn tally(&self) -> super::Tally {
        let mut t = super::Tally::new("point");
        for s in &self.series {
            for (g, v) in s.values.iter().enumerate() {
                let Some(v) = v else { continue };
                t.count(if g >= self.groups.len() {
                    Some("no group to draw it in")
                } else if !v.iter().all(|x| super::plottable(*x)) {
                    Some("not a finite number")
                } else {
                    None
                });
            }
        }
        t
    }

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> DrawResult {
        let ng = self.groups.len();
        let ns = self.series.len();
        let finite = |v: &&[f64; 3]| v.iter().all(|x| super::plottable(*x));
        let all = || {
            self.series
                .iter()
                .flat_map(|s| s.values.iter().flatten())
                .filter(finite)
        };
        if ng == 0 || ns == 0 || all().next().is_none() {
            return Err(no_data("no values"));
        }
        let top = all().map(|v| v[0].max(v[2])).fold(0.0f64, f64::max);
        let bottom = all().map(|v| v[0].min(v[1])).fold(0.0f64, f64::min);
        let top = if top > 0.0 { top * 1.15 } else { 1.0 };
        // Group g spans x in [g, g+1); bars share 80% of it.
        let longest = self
            .groups
            .iter()
            .map(|g| g.chars().count())
            .max()
            .unwrap_or(1);
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .margin_right(20)
            .x_label_area_size(if longest > 14 { 88 } else { 48 })
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..ng as f64, bottom..top)?;
        let x_fmt = |v: &f64| {
            let g = v.floor() as usize;
            if (v - g as f64 - 0.5).abs() < 1e-9 && g < ng {
                self.groups[g].clone()
            } else {
                String::new()
            }
        };
        let y_fmt = |v: &f64| short_number(*v);
        // Ticks exactly at group centres: plotters places `n` labels evenly over the range
        // only for its own choice of values, so draw the mesh without x labels and add them.
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .label_style((FONT, LABEL_PT))
            .axis_desc_style((FONT, DESC_PT))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        // Labels wider than their group alternate between two rows, each fitted to two
        // groups' width: side by side they ran into each other ("pipe clock=direct
        // mode=process" over "pipe clock=cputime mode=process").
        let (px, _) = chart.plotting_area().get_pixel_range();
        let group_px = ((px.end - px.start) / ng.max(1) as i32).max(1) as u32;
        let stagger = longest as u32 * super::CHAR_W > group_px;
        for (g, name) in self.groups.iter().enumerate() {
            let (text, dy) = if stagger {
                let row = if g % 2 == 0 { 8 } else { 26 };
                (super::fit(name, 2 * group_px - 8, super::CHAR_W), row)
            } else {
                (name.clone(), 8)
            };
            let style = (FONT, LABEL_PT)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            super::write_at(&mut chart, (g as f64 + 0.5, bottom), text, (0, dy), style)?;
        }
        self.draw_bars(&mut chart)?;
        super::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
    }

    /// Each series' bar in each group, with its 95% interval, or "n/a" where it has no value;
    /// a series is listed in the legend with its first bar, or as "NAME (no value)" when it
    /// has none: every series up to [`super::MAX_LEGEND`] has exactly one entry.
    fn draw_bars(
        &self,
        chart: &mut ChartContext<
            SVGBackend,
            Cartesian2d<
                plotters::coord::types::RangedCoordf64,
                plotters::coord::types::RangedCoordf64,
            >,
        >,
    ) -> DrawResult {
        let (ng, ns) = (self.groups.len(), self.series.len());
        let finite = |v: &&[f64; 3]| v.iter().all(|x| super::plottable(*x));
        let slot = 0.8 / ns as f64;
        for (si, s) in self.series.iter().enumerate() {
            let c = color(si);
            let mut first = true;
            for (g, v) in s.values.iter().enumerate().take(ng) {
                let x0 = g as f64 + 0.1 + si as f64 * slot;
                let xm = x0 + slot / 2.0;
                match v.as_ref().filter(finite) {
                    Some(&[y, lo, hi]) => {
                        let mut r =
                            Rectangle::new([(x0, 0.0), (x0 + slot, y)], super::mark_style(c, 0.8));
                        r.set_margin(0, 0, 2, 2);
                        let anno = chart.draw_series(std::iter::once(r))?;
                        // Beyond the legend's limit, series are drawn but not listed.
                        if first && si < super::MAX_LEGEND {
                            anno.label(s.name.clone()).legend(move |(x, y)| {
                                Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.mix(0.8).filled())
                            });
                            first = false;
                        }
                        let black = BLACK.stroke_width(1);
                        super::whisker(chart, [(xm, lo), (xm, hi)], (4, 0), black)?;
                    }
                    None => {
                        let na = "n/a".to_string();
                        super::write_at(chart, (xm, 0.0), na, (-9, -18), (FONT, LABEL_PT - 2))?;
                    }
                }
            }
            // A series without a single bar keeps its legend entry and says why, as a line
            // figure's ring size "(no valid point)" does: its "n/a" marks need a name, and
            // the entry count on the root element then matches the entries drawn.
            if first && si < super::MAX_LEGEND {
                chart
                    .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
                    .label(format!("{} (no value)", s.name))
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.mix(0.8).stroke_width(1))
                    });
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
    fn each_value_present_is_one_bar() {
        let svg = GroupedBars {
            title: "t".into(),
            subtitle: "s".into(),
            groups: vec!["a".into(), "b".into()],
            series: vec![GroupedSeries {
                name: "run 1".into(),
                values: vec![Some([1.0, 0.9, 1.1]), None, Some([2.0, 1.9, 2.1])],
            }],
            ..Default::default()
        }
        .to_svg();
        assert_eq!(super::super::test_support::count(&svg, "class=\"pt\""), 1);
        assert!(svg.contains("1 point not drawn: no group to draw it in"));
    }

    /// A series without a bar was counted in `data-legend-entries` but had no entry: the
    /// count on the root element must match the entries drawn, and the empty series says why.
    #[test]
    fn a_series_without_bars_has_a_legend_entry_saying_so() {
        let svg = GroupedBars {
            title: "t".into(),
            subtitle: "s".into(),
            groups: vec!["a".into(), "b".into()],
            series: vec![
                GroupedSeries {
                    name: "run 1".into(),
                    values: vec![Some([1.0, 0.9, 1.1]), Some([2.0, 1.9, 2.1])],
                },
                GroupedSeries {
                    name: "run 2".into(),
                    values: vec![None, None],
                },
            ],
            ..Default::default()
        }
        .to_svg();
        assert!(svg.contains("data-legend-entries=\"2\""));
        assert!(has_text(&svg, "run 1"));
        assert!(has_text(&svg, "run 2 (no value)"), "{svg}");
    }

    /// A report of three runs drew the ctx group labels over each other.
    #[test]
    fn long_group_labels_alternate_rows_and_fit_their_room() {
        let groups: Vec<String> = [
            "direct mode=process",
            "cputime mode=process",
            "direct mode=thread",
        ]
        .iter()
        .cycle()
        .take(8)
        .map(|g| format!("pipe clock={g}"))
        .collect();
        let svg = GroupedBars {
            title: "ctx: ns/switch".into(),
            subtitle: "s".into(),
            series: (0..3)
                .map(|i| GroupedSeries {
                    name: format!("run {i}"),
                    values: vec![Some([1.0, 0.9, 1.1]); 8],
                })
                .collect(),
            groups,
            ..Default::default()
        }
        .to_svg();
        // (x, y, text) of the group labels: centred at x, 2 groups' width apart per row.
        let mut labels = Vec::new();
        let mut head = "";
        for line in svg.lines() {
            if line.trim().starts_with("pipe clock=") {
                let num = |k: &str| super::super::test_support::int_after(head, k);
                labels.push((
                    num(" x=\""),
                    num(" y=\""),
                    line.trim().chars().count() as i32 * 8,
                ));
            }
            head = line;
        }
        assert_eq!(labels.len(), 8);
        for (i, a) in labels.iter().enumerate() {
            for b in &labels[i + 1..] {
                let apart = a.1 != b.1 || (a.0 - b.0).abs() * 2 >= a.2 + b.2;
                assert!(apart, "labels overlap: {a:?} {b:?}");
            }
        }
    }

    #[test]
    fn grouped_bars_have_one_bar_per_value_legend_and_gaps() {
        let svg = GroupedBars {
            title: "mmap: cost per page".into(),
            subtitle: "testhost".into(),
            x_label: "variant".into(),
            y_label: "ns/page".into(),
            groups: vec!["read".into(), "mmap".into(), "mmap+populate".into()],
            series: vec![
                GroupedSeries {
                    name: "4 KiB pages".into(),
                    values: vec![
                        Some([100.0, 95.0, 105.0]),
                        Some([300.0, 280.0, 310.0]),
                        None,
                    ],
                },
                GroupedSeries {
                    name: "THP".into(),
                    values: vec![
                        Some([90.0, 88.0, 93.0]),
                        Some([40.0, 38.0, 42.0]),
                        Some([20.0, 19.0, 21.0]),
                    ],
                },
            ],
        }
        .to_svg();
        assert_standalone(&svg, "mmap: cost per page", "testhost");
        for t in [
            "read",
            "mmap",
            "mmap+populate",
            "4 KiB pages",
            "THP",
            "n/a",
            "ns/page",
            "variant",
        ] {
            assert!(has_text(&svg, t), "{t} missing");
        }
        // 5 bars + 2 legend swatches + backgrounds
        assert!(count(&svg, "<rect") >= 7 + 2);
        // a whisker and two caps per bar
        assert!(count(&svg, "<polyline") >= 15);
    }
}
