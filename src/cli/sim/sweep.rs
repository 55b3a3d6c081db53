//! `oscost sim sweep`: the same program, several builds, a range of I-cache sizes; a table and
//! an optional SVG plot of hit rate and cycles against cache size.

use rvsim::CacheConfig;

use super::{compile, parse_size, report, simulate, SweepArgs};
use crate::cli::outputs::{Format, Outputs, SimOut};
use crate::error::{Error, Result};
use crate::report::plot::{stack, LinePlot, Point as PlotPoint, Series};

struct Point {
    size: u64,
    hit_rate: f64,
    cycles: Option<u64>,
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    let outputs = Outputs::new()
        .with(Format::Json, a.json.as_deref())
        .with(Format::Csv, a.csv.as_deref())
        .with(Format::Svg, a.svg.as_deref());
    outputs.check(&[], &[a.source.as_path()], None)?;
    let (sizes, caches) = sizes_and_caches(&a)?;
    // Bad machine options are refused before anything is compiled.
    a.machine.config(true)?;
    let builds = compile::build_all(&a.source, &a.march, &a.cflags, &a.runtime)?;
    let mut series = Vec::new();
    let mut rows = Vec::new();
    let mut runs = Vec::new();
    println!(
        "{:<10}{:>8}{:>12}{:>14}{:>10}",
        "march", "bytes", "hit rate", "cycles", "misses"
    );
    for build in builds {
        let mut points = Vec::new();
        for (&size, cache) in sizes.iter().zip(&caches) {
            let mut config = a.machine.config(build.compressed)?;
            config.icache = Some(*cache);
            let o = simulate(
                &build.march,
                build.program.clone(),
                config,
                Some(&build.own_functions),
            )?;
            if o.stop.status().is_none() {
                eprintln!(
                    "oscost: note: {} ended without a status: {}",
                    build.march, o.stop
                );
                if let Some(hint) = report::raise_hint(&o.stop) {
                    eprintln!("oscost: note: {hint}");
                }
            }
            let mut row = vec![size.to_string()];
            row.extend(report::csv_row(&o));
            rows.push(row);
            runs.push(report::run_json(&o));
            let ic = o.stats.icache.unwrap_or_default();
            let cycles = o.stats.pipeline.map(|p| p.cycles());
            println!(
                "{:<10}{:>8}{:>11.2}%{:>14}{:>10}",
                build.march,
                size,
                100.0 * ic.hit_rate(),
                cycles.map_or("-".into(), |c| c.to_string()),
                ic.misses
            );
            points.push(Point {
                size,
                hit_rate: 100.0 * ic.hit_rate(),
                cycles,
            });
        }
        series.push((build.march, points));
    }
    let mut header = vec!["icache_bytes"];
    header.extend(report::CSV_HEADER);
    let geometry = format!("{}-way, {} words/line, {}", a.ways, a.words, a.repl);
    let svg = a
        .svg
        .as_ref()
        .map(|_| figure(&series, &geometry, a.machine.miss_penalty));
    outputs.write(&SimOut {
        json: serde_json::json!({"schema": 1, "points": runs}),
        table: Some((header, rows)),
        svg,
    })?;
    if let Some(path) = &a.svg {
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The swept I-cache sizes (sorted, each once) and the cache geometry of each, from
/// `--icache-sizes`, `--ways`, `--words` and `--repl`; a usage error names the bad option.
fn sizes_and_caches(a: &SweepArgs) -> Result<(Vec<u64>, Vec<CacheConfig>)> {
    if a.machine.icache.is_some() {
        return Err(Error::usage(
            "--icache: sweep sets the I-cache itself; use --icache-sizes, --ways, --words, --repl",
        ));
    }
    let line_bytes = a.ways as u64 * a.words as u64 * 4;
    let mut sizes = if a.lines.is_empty() {
        a.icache_sizes
            .iter()
            .map(|s| parse_size(s, "--icache-sizes"))
            .collect::<Result<Vec<u64>>>()?
    } else {
        a.lines.iter().map(|&n| n as u64 * line_bytes).collect()
    };
    sizes.sort_unstable();
    sizes.dedup();
    for (name, v) in [("--ways", a.ways), ("--words", a.words)] {
        if v == 0 {
            return Err(Error::usage(format!(
                "{name} 0: a cache line needs at least 1"
            )));
        }
    }
    let geometry = |size: u64| -> Result<CacheConfig> {
        let line = a.ways as u64 * a.words as u64 * 4;
        if line == 0 || !size.is_multiple_of(line) {
            return Err(Error::usage(format!(
                "--icache-sizes {size}: not a multiple of ways x words x 4 = {line} bytes"
            )));
        }
        let spec = format!(
            "sets={},ways={},words={},repl={}",
            size / line,
            a.ways,
            a.words,
            a.repl
        );
        CacheConfig::parse(&spec).map_err(|e| Error::usage(format!("--icache-sizes {size}: {e}")))
    };
    let caches = sizes
        .iter()
        .map(|&s| geometry(s))
        .collect::<Result<Vec<_>>>()?;
    Ok((sizes, caches))
}

/// The figure: hit rate and, when the builds ran the 5-stage model, cycles against the
/// I-cache size, one line per build, drawn by the plot module (so it counts its points and
/// states any it leaves out, as every figure of a report does), one panel above the other.
fn figure(series: &[(String, Vec<Point>)], geometry: &str, miss_penalty: u32) -> String {
    let line = |name: &str, points: Vec<PlotPoint>| Series {
        name: name.to_string(),
        points,
        gaps: Vec::new(),
    };
    let panel = |title: String, y_label: &str| LinePlot {
        title,
        subtitle: format!("rvsim, I-cache {geometry}"),
        x_label: "I-cache size (bytes)".into(),
        y_label: y_label.into(),
        log_x: true,
        x_bytes: true,
        ..Default::default()
    };
    let mut hits = panel("I-cache hit rate vs size".into(), "hit rate (%)");
    hits.series = series
        .iter()
        .map(|(name, ps)| {
            let points = ps
                .iter()
                .map(|p| exact(p.size as f64, p.hit_rate))
                .collect();
            line(name, points)
        })
        .collect();
    let mut panels = vec![hits.to_svg()];
    if series
        .iter()
        .flat_map(|(_, ps)| ps)
        .any(|p| p.cycles.is_some())
    {
        let mut cycles = panel(
            format!("cycles vs I-cache size (5-stage, miss penalty {miss_penalty})"),
            "cycles",
        );
        let without = series
            .iter()
            .flat_map(|(_, ps)| ps)
            .filter(|p| p.cycles.is_none())
            .count();
        if without > 0 {
            cycles
                .left_out
                .push((without, "ran without the pipeline (no cycles)".into()));
        }
        cycles.series = series
            .iter()
            .map(|(name, ps)| {
                let points = ps
                    .iter()
                    .filter_map(|p| Some(exact(p.size as f64, p.cycles? as f64)))
                    .collect();
                line(name, points)
            })
            .collect();
        panels.push(cycles.to_svg());
    }
    stack(&panels)
}

/// A simulated figure: exact, so its interval is the point itself.
fn exact(x: f64, y: f64) -> PlotPoint {
    PlotPoint::new(x, y, y, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(sizes: &[u64], cycles: bool) -> Vec<Point> {
        sizes
            .iter()
            .map(|&size| Point {
                size,
                hit_rate: 90.0 + size as f64 / 1000.0,
                cycles: cycles.then_some(10_000 - size),
            })
            .collect()
    }

    /// The sweep's SVG was drawn outside the plot module, without the point count
    /// every other figure carries.
    #[test]
    fn the_sweep_figure_counts_every_point_of_both_panels() {
        let sizes = [64, 128, 256, 512, 1024, 2048];
        let series = vec![
            ("rv32im".to_string(), points(&sizes, true)),
            ("rv32imc".to_string(), points(&sizes, true)),
        ];
        let svg = figure(&series, "1-way, 2 words/line, lru", 8);
        assert!(svg.starts_with("<svg data-points-given=\"24\" data-points-drawn=\"24\""));
        // Each panel counts its own, and draws one mark per point.
        assert_eq!(svg.matches("data-points-given=\"12\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"pt\"").count(), 24);
        assert!(svg.contains("I-cache hit rate vs size") && svg.contains("miss penalty 8"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn without_the_pipeline_the_figure_is_the_hit_rates_alone() {
        let series = vec![("rv32im".to_string(), points(&[64, 128, 256], false))];
        let svg = figure(&series, "1-way", 8);
        assert!(svg.starts_with("<svg data-points-given=\"3\" data-points-drawn=\"3\""));
        assert!(!svg.contains("cycles vs"));
    }
}
