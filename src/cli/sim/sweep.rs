//! `oscost sim sweep`: the same program, several builds, a range of I-cache sizes; a table and
//! an optional SVG plot of hit rate and cycles against cache size.

use plotters::prelude::*;
use rvsim::CacheConfig;

use super::{compile, parse_size, report, simulate, SweepArgs};
use crate::cli::outputs::{Format, Outputs, SimOut};
use crate::error::{Error, Result};

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
    let svg = match &a.svg {
        Some(path) => {
            Some(plot(&series, &a).map_err(|e| Error::env(format!("{}: {e}", path.display())))?)
        }
        None => None,
    };
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
    let mut sizes = a
        .icache_sizes
        .iter()
        .map(|s| parse_size(s, "--icache-sizes"))
        .collect::<Result<Vec<u64>>>()?;
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

/// The figure: hit rate and cycles against the I-cache size, one line per build, as SVG.
fn plot(
    series: &[(String, Vec<Point>)],
    a: &SweepArgs,
) -> std::result::Result<String, Box<dyn std::error::Error>> {
    let mut svg = String::new();
    draw(&mut svg, series, a)?;
    Ok(svg)
}

fn draw(
    svg: &mut String,
    series: &[(String, Vec<Point>)],
    a: &SweepArgs,
) -> std::result::Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, (1000, 450)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(500);
    let sizes: Vec<u64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.size))
        .collect();
    let (lo, hi) = (
        *sizes.iter().min().unwrap_or(&1) as f64,
        *sizes.iter().max().unwrap_or(&2) as f64,
    );
    let x_range = (lo * 0.9)..(hi * 1.1).max(lo + 1.0);
    draw_hit_rates(&left, series, x_range.clone(), a)?;
    draw_cycles(&right, series, x_range, a)?;
    root.present()?;
    Ok(())
}

/// Line colours, one per build, in series order.
const COLORS: [RGBColor; 6] = [RED, BLUE, GREEN, MAGENTA, CYAN, BLACK];

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// The left panel: hit rate against the cache size (log scale), one line per build.
fn draw_hit_rates(
    left: &Area<'_>,
    series: &[(String, Vec<Point>)],
    x_range: std::ops::Range<f64>,
    a: &SweepArgs,
) -> DrawResult {
    let min_rate = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.hit_rate))
        .fold(100.0f64, f64::min);
    let title = format!("I-cache {}-way, {} words/line, {}", a.ways, a.words, a.repl);

    let mut chart = ChartBuilder::on(left)
        .caption(format!("hit rate ({title})"), ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(
            x_range.clone().log_scale(),
            (min_rate.floor() - 1.0).max(0.0)..100.0,
        )?;
    chart
        .configure_mesh()
        .x_desc("cache size (bytes)")
        .y_desc("hit rate (%)")
        .x_labels(6)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(WHITE)
        .draw()?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let data: Vec<(f64, f64)> = points.iter().map(|p| (p.size as f64, p.hit_rate)).collect();
        chart
            .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        chart.draw_series(data.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    Ok(())
}

/// The right panel: cycles of the 5-stage model against the cache size, when the builds
/// ran with the pipeline (nothing drawn otherwise).
fn draw_cycles(
    right: &Area<'_>,
    series: &[(String, Vec<Point>)],
    x_range: std::ops::Range<f64>,
    a: &SweepArgs,
) -> DrawResult {
    let cycles: Vec<u64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().filter_map(|p| p.cycles))
        .collect();
    if let (Some(&min_cycles), Some(&max_cycles)) = (cycles.iter().min(), cycles.iter().max()) {
        let pad = ((max_cycles - min_cycles) as f64 * 0.1).max(1.0);
        let mut chart = ChartBuilder::on(right)
            .caption(
                format!("cycles (5-stage, miss penalty {})", a.machine.miss_penalty),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(
                x_range.log_scale(),
                (min_cycles as f64 - pad).max(0.0)..max_cycles as f64 + pad,
            )?;
        chart
            .configure_mesh()
            .x_desc("cache size (bytes)")
            .y_desc("cycles")
            .x_labels(6)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .light_line_style(WHITE)
            .draw()?;
        for (i, (name, points)) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let data: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|p| p.cycles.map(|c| (p.size as f64, c as f64)))
                .collect();
            chart
                .draw_series(LineSeries::new(data, color.stroke_width(2)))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}
