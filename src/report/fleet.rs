//! The fleet report as text (80 columns), CSV (one row per host and probe), JSON, and a
//! self-contained HTML page with a hosts × probes heatmap of ratios to the fleet median.

use std::fmt::Write;

use crate::compare::fleet::{Fleet, ProbeRow};
use crate::error::Result;
use crate::report::html::{esc, inline, page_head};
use crate::report::plot::Heatmap;

/// Rows of the terminal matrix and the heatmap before only odd rows are shown.
pub const MAX_ROWS_SHOWN: usize = 40;

/// "51.5 ns/call", "1.93 µs/switch".
pub fn value_text(v: f64, unit: &crate::units::Unit) -> String {
    crate::units::fmt_with_unit(v, unit)
}

fn what(f: &Fleet) -> &'static str {
    if f.group_by.is_some() {
        "group"
    } else {
        "host"
    }
}

/// Which rows the matrix shows: all of them in a small fleet, else the odd ones.
fn shown_rows(f: &Fleet) -> Vec<usize> {
    if f.rows.len() <= MAX_ROWS_SHOWN {
        return (0..f.rows.len()).collect();
    }
    (0..f.rows.len())
        .filter(|i| f.odd.iter().any(|o| o.name == f.rows[*i]))
        .collect()
}

/// The heatmap's rows: all of them in a small fleet, else the odd ones and then those
/// furthest from the fleet median (largest |z| on any probe), so the odd hosts are seen
/// against the nearest runners-up; in name order.
fn heatmap_rows(f: &Fleet) -> Vec<usize> {
    if f.rows.len() <= MAX_ROWS_SHOWN {
        return (0..f.rows.len()).collect();
    }
    let far = |r: usize| -> f64 {
        f.probes
            .iter()
            .filter_map(|p| cell(p, &f.rows[r])?.z)
            .fold(0.0, |m, z| m.max(z.abs()))
    };
    let mut rows = shown_rows(f);
    let mut rest: Vec<(usize, f64)> = (0..f.rows.len())
        .filter(|r| !rows.contains(r))
        .map(|r| (r, far(r)))
        .collect();
    rest.sort_by(|a, b| b.1.total_cmp(&a.1));
    let room = MAX_ROWS_SHOWN.saturating_sub(rows.len());
    rows.extend(rest.into_iter().take(room).map(|(r, _)| r));
    rows.sort_unstable();
    rows
}

fn cell<'a>(p: &'a ProbeRow, row: &str) -> Option<&'a crate::compare::fleet::Cell> {
    p.cells.iter().find(|c| c.name == row)
}

fn headline(f: &Fleet) -> String {
    let mut s = format!(
        "fleet: {} hosts ({} runs; each host's latest figure per probe), {} probes",
        f.hosts.len(),
        f.runs,
        f.probes.len()
    );
    if !f.filter.is_empty() {
        let _ = write!(
            s,
            "; labels {}",
            crate::compare::fleet::labels_text(&f.filter)
        );
    }
    if let Some(g) = &f.group_by {
        let _ = write!(s, "; grouped by {} ({} groups)", g.name(), f.rows.len());
    }
    if f.left_out > 0 {
        let _ = write!(
            s,
            "; {} invalid, below-resolution or unstable figures left out",
            f.left_out
        );
    }
    s
}

/// Wraps `text` at `width` columns, keeping its leading spaces; continuation lines are
/// indented by `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let body = text.trim_start_matches(' ');
    let mut out = String::new();
    let mut line = text[..text.len() - body.len()].to_string();
    let mut fresh = true;
    for word in body.split(' ') {
        if !fresh && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_string();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        line.push_str(word);
        fresh = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The terminal report (fits 80 columns).
pub fn text(f: &Fleet) -> String {
    let mut o = String::new();
    o.push_str(&wrap(&headline(f), 80, "  "));
    if f.hosts.len() <= MAX_ROWS_SHOWN {
        let names: Vec<&str> = f.hosts.iter().map(|h| h.name.as_str()).collect();
        o.push_str(&wrap(&format!("hosts: {}", names.join(", ")), 80, "  "));
    }
    o.push_str(&wrap(&f.rule, 80, "  "));
    o.push('\n');
    if f.probes.is_empty() {
        o.push_str(&wrap(
            "no valid figures to compare: every figure of the selected runs is invalid or \
             below resolution (see `oscost history show ID`)",
            80,
            "  ",
        ));
        return o;
    }
    for (i, p) in f.probes.iter().enumerate() {
        o.push_str(&wrap(&format!("P{:<3} {}", i + 1, p.label()), 80, "     "));
        let _ = writeln!(
            o,
            "     fleet median {}, MAD {}, {} hosts, {} odd",
            value_text(p.spread.median, &p.unit),
            value_text(p.spread.mad, &p.unit),
            p.spread.hosts,
            p.cells.iter().filter(|c| c.outlier).count()
        );
    }
    o.push('\n');
    if f.odd.is_empty() {
        let _ = writeln!(o, "no odd {}: every one is within the rule above", what(f));
    } else {
        let _ = writeln!(o, "odd {}s ({})", what(f), f.odd.len());
        for odd in &f.odd {
            let _ = writeln!(o, "  {}", odd.name);
            for (i, ratio) in &odd.probes {
                let p = &f.probes[*i];
                if let Some(c) = cell(p, &odd.name) {
                    o.push_str(&wrap(
                        &format!(
                            "    P{} {}: {:.2}× ({} vs fleet {}, z {:+.1})",
                            i + 1,
                            p.probe,
                            ratio,
                            value_text(c.median, &p.unit),
                            value_text(p.spread.median, &p.unit),
                            c.z.unwrap_or(0.0)
                        ),
                        80,
                        "      ",
                    ));
                }
            }
            for a in &odd.apart {
                o.push_str(&wrap(
                    &format!(
                        "    set apart by {} = {} ({} of {} other hosts; usual {} on {})",
                        a.fact, a.value, a.others_with, a.others, a.usual, a.usual_hosts
                    ),
                    80,
                    "      ",
                ));
            }
        }
        if !f.shared.is_empty() {
            let _ = writeln!(o, "\nfacts that set the odd hosts apart");
            for s in f.shared.iter().take(10) {
                o.push_str(&wrap(
                    &format!(
                        "  {} = {}: {} of {} odd hosts, {} of {} others",
                        s.fact, s.value, s.odd_with, s.odd, s.others_with, s.others
                    ),
                    80,
                    "    ",
                ));
            }
        }
    }
    o.push('\n');
    o.push_str(&matrix(f));
    o
}

/// The ratio matrix, `*` marking odd cells, wrapped into column blocks that fit 80 columns.
fn matrix(f: &Fleet) -> String {
    let mut o = String::new();
    let rows = shown_rows(f);
    let _ = writeln!(
        o,
        "ratio to the fleet median ({}s × probes, * = odd)",
        what(f)
    );
    if rows.is_empty() {
        o.push_str(&wrap(
            &format!(
                "  {} {}s, none odd: not listed (all are in --csv, --json and -o)",
                f.rows.len(),
                what(f)
            ),
            80,
            "  ",
        ));
        return o;
    }
    let name_w = rows
        .iter()
        .map(|r| f.rows[*r].chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 24);
    let per_block = ((80 - name_w - 1) / 8).max(1);
    let probes: Vec<usize> = (0..f.probes.len()).collect();
    for block in probes.chunks(per_block) {
        let _ = write!(o, "{:<name_w$}", what(f));
        for i in block {
            let _ = write!(o, " {:>7}", format!("P{}", i + 1));
        }
        o.push('\n');
        for r in &rows {
            let name: String = f.rows[*r].chars().take(name_w).collect();
            let _ = write!(o, "{name:<name_w$}");
            for i in block {
                let t = match cell(&f.probes[*i], &f.rows[*r]) {
                    Some(c) => format!("{:.2}{}", c.ratio, if c.outlier { "*" } else { " " }),
                    None => "-  ".into(),
                };
                let _ = write!(o, " {t:>7}");
            }
            let end = o.trim_end_matches(' ').len();
            o.truncate(end);
            o.push('\n');
        }
    }
    if rows.len() < f.rows.len() {
        o.push_str(&wrap(
            &format!(
                "({} other {}s within the fleet's spread not listed; all are in --csv, \
                 --json and -o)",
                f.rows.len() - rows.len(),
                what(f)
            ),
            80,
            " ",
        ));
    }
    o
}

/// One row per host (or group) and probe.
pub fn csv(f: &Fleet) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let head = [
        what(f),
        "probe",
        "params",
        "unit",
        "median",
        "ci_lo",
        "ci_hi",
        "fleet_median",
        "fleet_mad",
        "ratio",
        "z",
        "odd",
        "hosts",
    ];
    let err = |e: csv::Error| crate::error::Error::env(format!("writing CSV: {e}"));
    w.write_record(head).map_err(err)?;
    // Text cells (host names, label values, probes, params) through the one CSV escape.
    let text = |s: &str| crate::escape::csv(s).into_owned();
    for p in &f.probes {
        for c in &p.cells {
            w.write_record([
                text(&c.name),
                text(&p.probe),
                text(&p.params),
                text(&p.unit.to_string()),
                c.median.to_string(),
                c.ci[0].to_string(),
                c.ci[1].to_string(),
                p.spread.median.to_string(),
                p.spread.mad.to_string(),
                c.ratio.to_string(),
                c.z.map(|z| z.to_string()).unwrap_or_default(),
                c.outlier.to_string(),
                c.hosts.to_string(),
            ])
            .map_err(err)?;
        }
    }
    let bytes = w
        .into_inner()
        .map_err(|e| crate::error::Error::env(format!("writing CSV: {e}")))?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}

pub fn json(f: &Fleet) -> String {
    serde_json::to_string_pretty(f).expect("the fleet report always serializes")
}

/// The heatmap of ratios (rows × probes); in a large fleet the odd rows and the runners-up.
pub fn heatmap(f: &Fleet) -> Heatmap {
    let rows = heatmap_rows(f);
    Heatmap {
        title: "ratio to the fleet median".into(),
        subtitle: headline(f),
        x_label: "probe (P-numbers as in the table below)".into(),
        y_label: what(f).into(),
        unit: "× fleet median".into(),
        col_labels: (1..=f.probes.len()).map(|i| format!("P{i}")).collect(),
        row_labels: rows.iter().map(|r| f.rows[*r].clone()).collect(),
        cells: rows
            .iter()
            .map(|r| {
                f.probes
                    .iter()
                    .map(|p| cell(p, &f.rows[*r]).map(|c| c.ratio))
                    .collect()
            })
            .collect(),
    }
}

/// The HTML page.
pub fn html(f: &Fleet) -> String {
    let mut h = page_head("oscost fleet report");
    let _ = writeln!(h, "<h1>oscost fleet report</h1>");
    let _ = writeln!(
        h,
        "<p class=\"meta\">{}</p>\n<p class=\"meta\">{}</p>",
        esc(&headline(f)),
        esc(&f.rule)
    );
    odd_section(&mut h, f);
    ratios_section(&mut h, f);
    matrix_section(&mut h, f);
    facts_section(&mut h, f);
    h.push_str("</body>\n</html>\n");
    h
}

/// The odd hosts (or groups), what sets them apart, and the facts they share.
fn odd_section(h: &mut String, f: &Fleet) {
    h.push_str("<section id=\"odd\">\n<h2>Odd ");
    h.push_str(what(f));
    h.push_str("s</h2>\n");
    if f.odd.is_empty() {
        let _ = writeln!(h, "<p>None: every {} is within the rule.</p>", what(f));
    } else {
        h.push_str("<ul class=\"warn\">\n");
        for odd in &f.odd {
            let probes: Vec<String> = odd
                .probes
                .iter()
                .map(|(i, r)| format!("P{} {} {:.2}×", i + 1, f.probes[*i].probe, r))
                .collect();
            let apart: Vec<String> = odd
                .apart
                .iter()
                .map(|a| {
                    format!(
                        "{} = {} ({} of {} others; usual {})",
                        a.fact, a.value, a.others_with, a.others, a.usual
                    )
                })
                .collect();
            let _ = writeln!(
                h,
                "<li><b>{}</b>: {}{}</li>",
                esc(&odd.name),
                esc(&probes.join(", ")),
                if apart.is_empty() {
                    String::new()
                } else {
                    format!("<br>set apart by {}", esc(&apart.join("; ")))
                }
            );
        }
        h.push_str("</ul>\n");
        if !f.shared.is_empty() {
            h.push_str("<table><tr><th>fact</th><th>value</th><th>odd hosts with it</th><th>other hosts with it</th></tr>\n");
            for s in &f.shared {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td class=\"num\">{} of {}</td><td class=\"num\">{} of {}</td></tr>",
                    esc(&s.fact), esc(&s.value), s.odd_with, s.odd, s.others_with, s.others
                );
            }
            h.push_str("</table>\n");
        }
    }
}

/// The heatmap of ratios and the table of probes.
fn ratios_section(h: &mut String, f: &Fleet) {
    h.push_str("</section>\n<section id=\"heatmap\">\n<h2>Ratios</h2>\n");
    let drawn = heatmap_rows(f).len();
    if drawn < f.rows.len() {
        let _ = writeln!(
            h,
            "<p>{drawn} of {1} {0}s are drawn: the odd ones and those furthest from the fleet \
             median; every {0} is in the table below.</p>",
            what(f),
            f.rows.len()
        );
    }
    h.push_str(&inline(heatmap(f).to_svg()));
    h.push_str("<div class=\"scroll\"><table><tr><th>#</th><th>probe</th><th>unit</th><th>fleet median</th><th>MAD</th><th>hosts</th><th>odd</th></tr>\n");
    for (i, p) in f.probes.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr><td>P{}</td><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            i + 1,
            esc(&p.label()),
            esc(&p.unit.to_string()),
            esc(&value_text(p.spread.median, &p.unit)),
            esc(&value_text(p.spread.mad, &p.unit)),
            p.spread.hosts,
            p.cells.iter().filter(|c| c.outlier).count()
        );
    }
}

/// Every host (or group) by every probe.
fn matrix_section(h: &mut String, f: &Fleet) {
    h.push_str("</table></div>\n</section>\n<section id=\"matrix\">\n<h2>Every ");
    h.push_str(what(f));
    h.push_str("</h2>\n<div class=\"scroll\"><table><tr><th></th>");
    for i in 0..f.probes.len() {
        let _ = write!(h, "<th>P{}</th>", i + 1);
    }
    h.push_str("</tr>\n");
    for row in &f.rows {
        let odd = f.odd.iter().any(|o| &o.name == row);
        let _ = write!(
            h,
            "<tr{}><th>{}</th>",
            if odd { " class=\"invalid\"" } else { "" },
            esc(row)
        );
        for p in &f.probes {
            match cell(p, row) {
                Some(c) => {
                    let _ = write!(
                        h,
                        "<td class=\"num\">{}{}<span class=\"ci\">{:.2}×</span></td>",
                        if c.outlier { "<b>odd</b> " } else { "" },
                        esc(&value_text(c.median, &p.unit)),
                        c.ratio
                    );
                }
                None => h.push_str("<td>–</td>"),
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n</section>\n");
}

/// Every host's machine facts (host by host only).
fn facts_section(h: &mut String, f: &Fleet) {
    if f.group_by.is_none() {
        h.push_str("<section id=\"facts\">\n<h2>Machine facts</h2>\n<div class=\"scroll\"><table><tr><th>host</th>");
        for k in crate::compare::fleet::FACTS {
            let _ = write!(h, "<th>{}</th>", esc(k));
        }
        h.push_str("</tr>\n");
        for host in &f.hosts {
            let _ = write!(h, "<tr><th>{}</th>", esc(&host.name));
            for k in crate::compare::fleet::FACTS {
                let _ = write!(
                    h,
                    "<td>{}</td>",
                    esc(host.facts.get(*k).map(String::as_str).unwrap_or("unknown"))
                );
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table></div>\n</section>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::fleet::tests_support::small_fleet;

    #[test]
    fn text_fits_80_columns_and_names_the_odd_host() {
        let f = small_fleet();
        let t = text(&f);
        for l in t.lines() {
            assert!(l.chars().count() <= 80, "too wide: {l}");
        }
        assert!(t.contains("odd hosts (1)"), "{t}");
        assert!(t.contains("set apart by kernel = 5.10"), "{t}");
        assert!(t.contains("1.75*") || t.contains("*"), "{t}");
        assert!(
            t.lines().any(|l| l.starts_with("n10") && l.contains('*')),
            "{t}"
        );
    }

    #[test]
    fn csv_json_and_html_carry_every_host() {
        let f = small_fleet();
        let c = csv(&f).unwrap();
        assert_eq!(
            c.lines().count(),
            1 + f.probes.iter().map(|p| p.cells.len()).sum::<usize>()
        );
        assert!(c
            .lines()
            .any(|l| l.starts_with("n10,syscall.null,") && l.contains(",true,")));
        let j: serde_json::Value = serde_json::from_str(&json(&f)).unwrap();
        assert_eq!(j["hosts"].as_array().unwrap().len(), 11);
        assert_eq!(j["odd"][0]["name"], "n10");
        let h = html(&f);
        assert!(h.starts_with("<!DOCTYPE html>") && h.ends_with("</html>\n"));
        assert!(h.contains("<svg") && h.contains("ratio to the fleet median"));
        assert!(h.contains("<b>n10</b>"));
        assert!(!h.contains("http://") && !h.contains("https://"));
    }

    #[test]
    fn a_large_fleet_draws_the_odd_hosts_and_the_runners_up() {
        use crate::compare::fleet::tests_support::run;
        let mut runs: Vec<_> = (0..50)
            .map(|i| {
                run(
                    &format!("h{i:02}"),
                    "6.12",
                    "2026-01-02",
                    50.0 + (i % 10) as f64 * 0.1,
                )
            })
            .collect();
        runs.push(run("odd", "5.10", "2026-01-02", 90.0));
        let f = crate::compare::fleet::analyze(&runs, Default::default(), None);
        let m = heatmap(&f);
        assert_eq!(m.row_labels.len(), MAX_ROWS_SHOWN);
        assert!(m.row_labels.contains(&"odd".to_string()));
        // The runners-up are the hosts furthest from the median (50.5): the 50.0 and 50.9
        // ones are drawn, the ones at the median are not.
        assert!(m.row_labels.contains(&"h00".to_string()));
        assert!(m.row_labels.contains(&"h09".to_string()));
        assert!(!m.row_labels.contains(&"h05".to_string()));
        // The terminal lists only the odd host and says how many are not listed.
        let t = text(&f);
        assert!(
            t.contains("(50 other hosts within the fleet's spread not listed"),
            "{t}"
        );
    }
}
