//! Writes one SVG per plot kind (synthetic data) and an HTML page showing them, so a change to
//! the plotting module can be looked at in a browser: `cargo run --example plot_gallery DIR`.

use oscost::report::plot::*;

fn main() -> std::io::Result<()> {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "gallery".into()));
    std::fs::create_dir_all(&dir)?;
    let sub = "example host · 2 CPUs · Linux 6.1".to_string();
    let sweep = |k: f64| -> Vec<Point> {
        (10..=26)
            .map(|e| {
                let x = f64::from(1u32 << e);
                let y = k * (1.0 + ((e as f64 - 14.0).max(0.0)).powf(1.5));
                Point::new(x, y, y * 0.93, y * 1.08)
            })
            .collect()
    };
    let plots = [
        (
            "bar",
            BarChart {
                title: "syscall: cost of one system call".into(),
                subtitle: sub.clone(),
                value_label: "ns/call".into(),
                bars: vec![
                    Bar::new("syscall.null", 62.0, 61.0, 63.5),
                    Bar::new("syscall.read bytes=1", 110.0, 108.0, 113.0),
                    Bar::new("syscall.open", 1450.0, 1380.0, 1500.0),
                    Bar::missing("vdso.clock_gettime", "below resolution"),
                ],
                ..Default::default()
            }
            .to_svg(),
        ),
        (
            "line",
            LinePlot {
                title: "mem.latency: load-to-use latency vs working set".into(),
                subtitle: sub.clone(),
                x_label: "working set (bytes)".into(),
                y_label: "latency (ns/load)".into(),
                log_x: true,
                x_bytes: true,
                series: vec![
                    Series {
                        name: "sequential".into(),
                        points: sweep(1.0),
                        gaps: Vec::new(),
                    },
                    Series {
                        name: "random".into(),
                        points: sweep(2.5),
                        gaps: Vec::new(),
                    },
                ],
                markers: vec![
                    Marker {
                        x: 32768.0,
                        label: "L1d 32 KiB".into(),
                    },
                    Marker {
                        x: 524288.0,
                        label: "L2 512 KiB".into(),
                    },
                    Marker {
                        x: 33554432.0,
                        label: "L3 32 MiB".into(),
                    },
                ],
                ..Default::default()
            }
            .to_svg(),
        ),
        (
            "heatmap",
            Heatmap {
                title: "ipc.c2c: core-to-core round trip".into(),
                subtitle: sub.clone(),
                x_label: "to CPU".into(),
                y_label: "from CPU".into(),
                unit: "ns/round trip".into(),
                col_labels: (0..4).map(|i| i.to_string()).collect(),
                row_labels: (0..4).map(|i| i.to_string()).collect(),
                cells: (0..4)
                    .map(|r| {
                        (0..4)
                            .map(|c| {
                                (r != c).then(|| 100.0 + 40.0 * ((r as f64) - (c as f64)).abs())
                            })
                            .collect()
                    })
                    .collect(),
            }
            .to_svg(),
        ),
        (
            "histogram",
            Histogram {
                title: "fault.minor: per-fault latency".into(),
                subtitle: sub.clone(),
                x_label: "latency (ns/fault)".into(),
                values: Values::Samples {
                    values: (0..2000)
                        .map(|i| {
                            500.0
                                + f64::from((i * 7919) % 300)
                                + if i % 10 == 0 { 900.0 } else { 0.0 }
                        })
                        .collect(),
                    log_count: false,
                },
            }
            .to_svg(),
        ),
        (
            "grouped",
            GroupedBars {
                title: "mmap: cost per page by variant".into(),
                subtitle: sub.clone(),
                x_label: "variant".into(),
                y_label: "ns/page".into(),
                groups: vec![
                    "read()".into(),
                    "mmap".into(),
                    "mmap+populate".into(),
                    "MADV_SEQUENTIAL".into(),
                ],
                series: vec![
                    GroupedSeries {
                        name: "4 KiB pages".into(),
                        values: vec![
                            Some([100.0, 95.0, 105.0]),
                            Some([300.0, 280.0, 310.0]),
                            Some([80.0, 78.0, 83.0]),
                            None,
                        ],
                    },
                    GroupedSeries {
                        name: "THP".into(),
                        values: vec![
                            Some([90.0, 88.0, 93.0]),
                            Some([40.0, 38.0, 42.0]),
                            Some([20.0, 19.0, 21.0]),
                            Some([35.0, 30.0, 38.0]),
                        ],
                    },
                ],
            }
            .to_svg(),
        ),
    ];
    let mut html =
        String::from("<!doctype html><meta charset=utf-8><body style='font-family:sans-serif'>");
    for (name, svg) in &plots {
        std::fs::write(dir.join(format!("{name}.svg")), svg)?;
        html.push_str(&format!("<h2>{name}</h2>{svg}"));
    }
    std::fs::write(dir.join("index.html"), html)?;
    println!("{}", dir.join("index.html").display());
    Ok(())
}
