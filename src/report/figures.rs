//! Each kind of result owns its figure, drawn from its analysis rather than from the rows:
//! the context-switch sweep (one line per ring size over a log2 working-set axis, knees and
//! cache sizes), memory latency (log axes, plateaus and knees), the mmap lab (one small chart
//! per metric). The HTML report and the commands' `--svg` options call the same functions,
//! so a figure looks the same wherever it is read.

use crate::model::Run;

/// How a figure is laid out in the HTML report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Full width.
    Wide,
    /// One of a grid of small multiples.
    Small,
}

/// The probes whose figures come from their analysis here (the generic bars, lines and
/// heatmaps of the HTML report skip them).
pub const OWNED: [&str; 3] = [
    crate::probes::ctx::sweep::PROBE,
    crate::probes::mem::latency::PROBE,
    "mmap.lab",
];

/// The CPU a sweep ran on (its caches are the ones that matter), from the first
/// measurement's `cpus` parameter; CPU 0 when unrecorded.
fn measured_cpu(run: &Run, probe: &str) -> usize {
    run.measurements
        .iter()
        .find(|m| m.probe == probe)
        .and_then(|m| m.params.get("cpus"))
        .and_then(|v| {
            v.as_array()
                .and_then(|a| a.first().cloned())
                .or(Some(v.clone()))
        })
        .and_then(|v| v.as_u64())
        .unwrap_or(0) as usize
}

/// The analysis figures of `probe` in `run` (None when the probe has no figure of its own or
/// no measurement in the run), each an SVG document with its layout size.
pub fn for_probe(run: &Run, probe: &str, subtitle: &str) -> Option<Vec<(Size, String)>> {
    if !run.measurements.iter().any(|m| m.probe == probe) {
        return None;
    }
    let caches = run.machine.data_cache_sizes(measured_cpu(run, probe));
    match probe {
        p if p == crate::probes::ctx::sweep::PROBE => {
            let a = crate::analysis::sweep::analyze(run, &caches, &[]);
            Some(vec![(
                Size::Wide,
                crate::report::sweep::svg(&a, subtitle).ok()?,
            )])
        }
        p if p == crate::probes::mem::latency::PROBE => {
            let a = crate::analysis::memlat::analyze(run, &caches);
            Some(vec![(
                Size::Wide,
                crate::report::memlat::svg(&a, subtitle).ok()?,
            )])
        }
        "mmap.lab" => Some(
            crate::report::lab::svgs(run)
                .into_iter()
                .map(|(_, svg)| (Size::Small, svg))
                .collect(),
        ),
        _ => None,
    }
}

/// The comparison figure: ratio B/A per paired probe with its 95% interval, a line at 1,
/// the minimum effect on both sides and the `--fail-above` gate when given.
pub fn compare_svg(
    c: &crate::compare::Comparison,
    fail_above: Option<f64>,
    min_effect: f64,
) -> String {
    use crate::compare::Verdict;
    use crate::report::plot::{RatioPlot, RatioRow, Threshold};
    let rows = c
        .pairs
        .iter()
        .map(|p| RatioRow {
            label: format!("{} {}", p.probe, p.params).trim().to_string(),
            ratio: match (p.ratio, p.ratio_ci95) {
                (Some(r), Some([lo, hi])) => Some([r, lo, hi]),
                (Some(r), None) => Some([r, r, r]),
                _ => None,
            },
            slower: match p.verdict {
                Verdict::Slower => Some(true),
                Verdict::Faster => Some(false),
                _ => None,
            },
            note: if p.note.is_empty() {
                p.verdict.as_str().to_string()
            } else {
                p.note.clone()
            },
        })
        .collect();
    let mut thresholds = Vec::new();
    if min_effect > 0.0 {
        let f = min_effect;
        thresholds.push(Threshold {
            at: 1.0 - min_effect / 100.0,
            label: format!("−{f}%"),
        });
        thresholds.push(Threshold {
            at: 1.0 + min_effect / 100.0,
            label: format!("+{f}% (minimum effect)"),
        });
    }
    if let Some(x) = fail_above {
        thresholds.push(Threshold {
            at: 1.0 + x / 100.0,
            label: format!("fail above +{x}%"),
        });
    }
    RatioPlot {
        title: "oscost compare: B / A per probe (95% interval)".into(),
        subtitle: format!("A: {} · B: {}", c.a, c.b),
        x_label: "B / A (ratio of medians, log scale; right of 1 = B higher)".into(),
        rows,
        thresholds,
    }
    .to_svg()
}

/// A self-contained HTML page for a comparison: machine differences, the figure, the table.
pub fn compare_html(c: &crate::compare::Comparison, svg: String) -> String {
    use crate::report::html::esc;
    use crate::units::{fmt_num, fmt_with_unit};
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>oscost compare</title>\n<style>{}</style>\n</head>\n<body>\n\
         <h1>oscost compare</h1>\n<p class=\"meta\">A: {} · B: {}</p>\n",
        crate::report::html::CSS,
        esc(&c.a),
        esc(&c.b)
    );
    if c.machine_differences.is_empty() {
        h.push_str("<p>machines: no differences in the key facts</p>\n");
    } else {
        h.push_str("<ul class=\"warn\">\n");
        for d in &c.machine_differences {
            h.push_str(&format!(
                "<li>{}: {} → {}</li>\n",
                esc(&d.fact),
                esc(&d.a),
                esc(&d.b)
            ));
        }
        h.push_str("</ul>\n");
    }
    h.push_str(&crate::report::html::inline(svg));
    h.push_str(
        "<div class=\"scroll\"><table class=\"results\">\n<tr><th>probe</th><th>A</th>\
         <th>B</th><th>B/A [95% CI]</th><th>verdict</th><th>note</th></tr>\n",
    );
    let med = |v: Option<f64>, unit: &str| v.map(|v| fmt_with_unit(v, unit)).unwrap_or("—".into());
    for p in &c.pairs {
        let ratio = match (p.ratio, p.ratio_ci95) {
            (Some(r), Some([lo, hi])) => {
                format!("{} [{}, {}]", fmt_num(r), fmt_num(lo), fmt_num(hi))
            }
            (Some(r), None) => fmt_num(r),
            _ => "—".into(),
        };
        h.push_str(&format!(
            "<tr><td><code>{}</code> {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&p.probe),
            esc(&p.params),
            esc(&med(p.a_median, &p.unit)),
            esc(&med(p.b_median, &p.unit)),
            esc(&ratio),
            esc(p.verdict.as_str()),
            esc(&p.note)
        ));
    }
    h.push_str("</table></div>\n");
    for (name, list) in [("only in A", &c.only_in_a), ("only in B", &c.only_in_b)] {
        if !list.is_empty() {
            h.push_str(&format!(
                "<p>unpaired, {name}: {}</p>\n",
                esc(&list.join(", "))
            ));
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// " (L2 total (1m/4))" — the first cache boundary a knee matches, for its label on a
/// figure; empty when it matches none.
pub fn knee_match_suffix(k: &crate::analysis::knees::Knee) -> String {
    k.matches
        .first()
        .map(|m| format!(" ({m})"))
        .unwrap_or_default()
}

/// Checked before measuring: `--svg-dir` is a directory, or can become one (it does not
/// exist and its nearest existing ancestor is a directory). Nothing is created yet, so a run
/// refused or interrupted later leaves no empty directory behind.
pub fn check_svg_dir(d: &std::path::Path) -> crate::error::Result<()> {
    let refuse = |why: &str| {
        Err(crate::error::Error::usage(format!(
            "--svg-dir {}: {why}",
            d.display()
        )))
    };
    if d.is_dir() {
        return Ok(());
    }
    if d.exists() {
        return refuse("exists and is not a directory");
    }
    let mut up = d.parent();
    while let Some(p) = up {
        if p.as_os_str().is_empty() || p.is_dir() {
            return Ok(());
        }
        if p.exists() {
            return refuse(&format!("{} is not a directory", p.display()));
        }
        up = p.parent();
    }
    Ok(())
}

/// Writes `(stem, svg)` files into `d`, creating it (and its parents) when missing.
pub fn write_svgs(
    d: &std::path::Path,
    files: impl IntoIterator<Item = (String, String)>,
) -> crate::error::Result<()> {
    std::fs::create_dir_all(d).map_err(|e| crate::error::Error::io(d.display(), e))?;
    for (stem, svg) in files {
        crate::report::export::write_atomic(&d.join(format!("{stem}.svg")), svg.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_owned_probes_with_measurements_have_figures() {
        let run = crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
            .unwrap();
        assert!(for_probe(&run, "ctx.pipe", "host").is_none());
        assert!(for_probe(&run, "ctx.sweep", "host").is_none());
    }

    #[test]
    fn svg_dir_is_created_when_missing_and_refused_when_a_file() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b");
        check_svg_dir(&d).unwrap();
        assert!(!d.exists(), "checking must not create");
        write_svgs(&d, [("x".to_string(), "<svg/>".to_string())]).unwrap();
        assert!(d.join("x.svg").is_file());
        let f = t.path().join("file");
        std::fs::write(&f, "").unwrap();
        let e = check_svg_dir(&f).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        let e = check_svg_dir(&f.join("sub")).unwrap_err().to_string();
        assert!(e.contains("is not a directory"), "{e}");
    }

    #[test]
    fn compare_page_has_the_ratio_figure_and_thresholds() {
        let run = crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
            .unwrap();
        let c = crate::compare::compare(&run, "a.json", &run, "b.json");
        let svg = compare_svg(&c, Some(5.0), 2.0);
        assert!(svg.contains("fail above +5%"), "{svg}");
        assert!(svg.contains("minimum effect"));
        let page = compare_html(&c, svg);
        assert!(page.contains("<svg") && page.contains("B/A [95% CI]"));
        assert!(!page.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    }
}
