//! The mmap lab's report: one row per variant with the getrusage and perf columns, hardware
//! counters or why they are missing, one bar chart per metric (the lab's figures), and the
//! variant × metric CSV. Everything is read from the recorded measurements.

use super::plot::{Bar, BarChart};
use crate::model::{Measurement, Run};
use crate::report::family::{About, Ask, Evidence, Family, Shown};
use crate::report::figures::Size;
use crate::units::fmt_num;
use crate::units::size::{fmt_bytes, ByteStyle};

/// The lab's probe id.
pub const PROBE: crate::model::ProbeId = crate::probes::mmap::LAB;

/// A metric: a column, a chart and a CSV field.
pub struct Metric {
    pub key: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    /// A perf counter of the cache or TLB (not a software count): listed once per reason
    /// when no variant could read it, never a column of the software table.
    pub hardware: bool,
    /// Per walk; Err(reason) when the machine could not count it.
    pub get: fn(&Measurement) -> Result<f64, String>,
}

fn per_walk(m: &Measurement, v: u64) -> f64 {
    v as f64 / m.evidence.rusage.iterations.max(1) as f64
}

fn event(m: &Measurement, name: &str) -> Result<f64, String> {
    match m.evidence.events.get(name) {
        Some(e) if e.supported => e
            .per_op
            .ok_or_else(|| e.reason.clone().unwrap_or_else(|| "no reading".into())),
        Some(e) => {
            let r = e.reason.clone().unwrap_or_else(|| "no reason given".into());
            Err(if r.starts_with("not supported") {
                r
            } else {
                format!("not supported: {r}")
            })
        }
        None => Err("not supported: not requested".into()),
    }
}

macro_rules! ev {
    ($key:expr, $title:expr, $hardware:expr) => {
        Metric {
            key: $key,
            title: $title,
            unit: "events/walk",
            hardware: $hardware,
            get: |m| event(m, $key),
        }
    };
}

/// A getrusage count per walk (a time in µs divided by 1e6: seconds per walk).
macro_rules! ru {
    ($key:expr, $title:expr, $unit:expr, $field:ident $(/ $div:expr)?) => {
        Metric {
            key: $key,
            title: $title,
            unit: $unit,
            hardware: false,
            get: |m| Ok(per_walk(m, m.evidence.rusage.total.$field) $(/ $div)?),
        }
    };
}

/// Every metric, in the lab's order.
pub fn metrics() -> Vec<Metric> {
    vec![
        Metric {
            key: "wall",
            title: "wall time",
            unit: "s/walk",
            hardware: false,
            get: |m| Ok(m.raw.median / 1e9),
        },
        ru!("user", "user time", "s/walk", utime_us / 1e6),
        ru!("sys", "system time", "s/walk", stime_us / 1e6),
        ev!("minor-faults", "minor faults (perf)", false),
        ev!("major-faults", "major faults (perf)", false),
        ru!(
            "page-reclaims",
            "page reclaims (ru_minflt)",
            "per walk",
            minflt
        ),
        ru!(
            "hard-faults",
            "page faults needing I/O (ru_majflt)",
            "per walk",
            majflt
        ),
        Metric {
            key: "maxrss",
            title: "max RSS",
            unit: "KiB",
            hardware: false,
            get: |m| Ok(m.evidence.rusage.total.maxrss_kb as f64),
        },
        ru!("inblock", "block input", "512-byte blocks/walk", inblock),
        ru!("oublock", "block output", "512-byte blocks/walk", oublock),
        ru!("nvcsw", "voluntary context switches", "per walk", nvcsw),
        ru!("nivcsw", "involuntary context switches", "per walk", nivcsw),
        ev!("L1-dcache-loads", "L1D read accesses", true),
        ev!("L1-dcache-load-misses", "L1D read misses", true),
        ev!("L1-dcache-stores", "L1D write accesses", true),
        ev!("L1-dcache-store-misses", "L1D write misses", true),
        ev!("dTLB-loads", "dTLB read accesses", true),
        ev!("dTLB-load-misses", "dTLB read misses", true),
        ev!("dTLB-stores", "dTLB write accesses", true),
        ev!("dTLB-store-misses", "dTLB write misses", true),
    ]
}

fn rows(run: &Run) -> Vec<&Measurement> {
    run.measurements
        .iter()
        .filter(|m| m.is(crate::probes::mmap::LAB))
        .collect()
}

/// "file-shared-random" (plus the pattern when it is not implied).
pub fn row_label(m: &Measurement) -> String {
    let v = m.param_str("variant").unwrap_or("?");
    let p = m.param_str("pattern").unwrap_or("?");
    if v.ends_with("random") {
        v.to_string()
    } else {
        format!("{v} {p}")
    }
}

/// The table: software columns per variant, then hardware counters (or why not).
pub fn table(run: &Run) -> String {
    let rows = rows(run);
    let ms = metrics();
    let sw: Vec<&Metric> = ms.iter().filter(|x| !x.hardware).collect();
    let header: Vec<&str> = std::iter::once("variant")
        .chain(sw.iter().map(|x| short(x.key)))
        .collect();
    // An INVALID or unstable row is not a figure here either: each cell says why, as its
    // bars in the charts do.
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|m| {
            std::iter::once(row_label(m))
                .chain(sw.iter().map(|x| match (not_a_figure(m), (x.get)(m)) {
                    (Some(why), _) => why.into(),
                    (None, Ok(v)) => fmt_num(v),
                    (None, Err(_)) => "n/s".into(),
                }))
                .collect()
        })
        .collect();
    let mut out = super::term::grid(&header, &cells, &super::term::Term::stdout());
    out.push_str(&super::term::wrap(
        "(per walk; wall, user and sys in seconds; wall is the median, the rest are means; \
         page reclaims/ru_majflt are getrusage, minor/major faults are perf events, which do \
         not see faults taken inside the kernel such as MAP_POPULATE's)",
        super::term::Term::stdout().width,
        "",
        " ",
    ));
    out.push('\n');
    // Counters no variant could read, once per reason: "L1-dcache-loads, dTLB-loads, …: not
    // supported: …" (eight lines of the same reason on a machine without a PMU).
    let mut missing: Vec<(String, Vec<&str>)> = Vec::new();
    for x in ms.iter().filter(|x| x.hardware) {
        let cells: Vec<Result<f64, String>> = rows.iter().map(|m| (x.get)(m)).collect();
        if let Some(Err(reason)) = cells.iter().find(|c| c.is_err()) {
            if cells.iter().all(|c| c.is_err()) {
                match missing.iter_mut().find(|(r, _)| r == reason) {
                    Some((_, keys)) => keys.push(x.key),
                    None => missing.push((reason.clone(), vec![x.key])),
                }
                continue;
            }
        }
        out.push_str(&format!("{}:", x.key));
        for (m, c) in rows.iter().zip(&cells) {
            let v = match c {
                Ok(v) => fmt_num(*v),
                Err(r) => r.clone(),
            };
            out.push_str(&format!("  {}={v}", row_label(m)));
        }
        out.push('\n');
    }
    for (reason, keys) in missing {
        let text = format!("{}: {reason}", keys.join(", "));
        out.push_str(&super::term::wrap(
            &text,
            super::term::Term::stdout().width,
            "",
            "  ",
        ));
        out.push('\n');
    }
    out
}

fn short(key: &str) -> &str {
    match key {
        "minor-faults" => "minflt(perf)",
        "major-faults" => "majflt(perf)",
        "page-reclaims" => "reclaims",
        "hard-faults" => "ru_majflt",
        other => other,
    }
}

/// Why a row has no bar: INVALID (its checks failed) or unstable (its interval is noise).
fn not_a_figure(m: &Measurement) -> Option<&'static str> {
    match m.status {
        crate::model::Status::Invalid => Some("INVALID"),
        crate::model::Status::Unstable => Some("unstable"),
        _ if !m.valid => Some("INVALID"),
        _ => None,
    }
}

/// One bar chart per metric: (file stem, svg).
pub fn svgs(run: &Run) -> Vec<(String, String)> {
    let rows = rows(run);
    let host = run.machine.short_name();
    let size = rows
        .first()
        .and_then(|m| m.params.get("size_bytes"))
        .and_then(|v| v.as_u64())
        .map(|b| fmt_bytes(b as f64, ByteStyle::Trimmed))
        .unwrap_or_default();
    metrics()
        .iter()
        .map(|x| {
            // An INVALID or unstable row is not a figure: its bar says so instead of a value.
            let bars = rows
                .iter()
                .map(|m| match (not_a_figure(m), (x.get)(m)) {
                    (Some(why), _) => Bar::missing(row_label(m), why),
                    (None, Ok(v)) if x.key == "wall" => {
                        Bar::new(row_label(m), v, m.raw.ci95[0] / 1e9, m.raw.ci95[1] / 1e9)
                    }
                    (None, Ok(v)) => Bar::new(row_label(m), v, v, v),
                    (None, Err(r)) => Bar::missing(row_label(m), r),
                })
                .collect();
            let svg = BarChart {
                title: format!("mmap lab: {}", x.title),
                subtitle: format!("{host}, {size} buffer"),
                value_label: x.unit.to_string(),
                bars,
                ..Default::default()
            }
            .to_svg();
            (format!("mmap-lab-{}", x.key), svg)
        })
        .collect()
}

/// variant × metric CSV (unsupported counters left empty, with the reason in a last column).
pub fn csv(run: &Run) -> String {
    let ms = metrics();
    let mut out = String::from("variant,pattern");
    for x in &ms {
        out.push_str(&format!(",{}", x.key));
    }
    out.push_str(",unsupported\n");
    for m in rows(run) {
        let p = |k: &str| m.param_str(k).unwrap_or("");
        out.push_str(&format!("{},{}", p("variant"), p("pattern")));
        let mut why = Vec::new();
        for x in &ms {
            match (x.get)(m) {
                Ok(v) => out.push_str(&format!(",{v}")),
                Err(r) => {
                    out.push(',');
                    why.push(format!("{}: {r}", x.key));
                }
            }
        }
        out.push_str(&format!(",\"{}\"\n", why.join("; ").replace('"', "'")));
    }
    out
}

/// The mmap lab: its table after the common one, one small chart per metric (its figures in
/// the HTML report and `--svg-dir`), and the variant × metric CSV beside them.
pub struct Lab;

impl Family for Lab {
    fn about(&self) -> About {
        About {
            fixture: Some("mmap"),
            quick: &[
                "mmap",
                "lab",
                "--quick",
                "--size",
                "4m",
                "--compete",
                "64m",
                "--variant",
                "anon-private",
            ],
            has_shown: true,
            evidence: Evidence::Faults,
            draws_own_figures: true,
            ..About::of("mmap")
        }
    }

    fn own_figures(&self, run: &Run, _subtitle: &str) -> Vec<(Size, String)> {
        if !run.measurements.iter().any(|m| m.is(PROBE)) {
            return Vec::new();
        }
        svgs(run)
            .into_iter()
            .map(|(_, s)| (Size::Small, s))
            .collect()
    }

    fn shown(&self, run: &Run, ask: &Ask) -> crate::error::Result<Shown> {
        let mut shown = Shown {
            after: table(run),
            ..Shown::default()
        };
        if ask.figures {
            shown.figures = svgs(run);
            shown.tables = vec![("lab.csv".into(), csv(run))];
        }
        Ok(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Run {
        crate::input::parse_run(include_str!("../../tests/fixtures/runs/mmap.json"), "f").unwrap()
    }

    #[test]
    fn an_invalid_row_shows_no_figure_in_the_table_as_in_the_charts() {
        let run = run();
        let bad = rows(&run)
            .into_iter()
            .find(|m| not_a_figure(m).is_some())
            .expect("the fixture holds an INVALID row");
        let label = row_label(bad);
        let t = table(&run);
        let lines: Vec<&str> = t.lines().filter(|l| l.starts_with(&label)).collect();
        assert!(!lines.is_empty(), "{t}");
        for l in lines {
            let cells: Vec<&str> = l[label.len()..].split_whitespace().collect();
            assert!(
                !cells.is_empty() && cells.iter().all(|c| *c == "INVALID"),
                "{l}"
            );
        }
        // The charts say the same of it.
        let svg = &svgs(&run)[0].1;
        assert!(svg.contains("not plotted: INVALID"));
        // A valid row keeps its numbers.
        let good = rows(&run)
            .into_iter()
            .find(|m| not_a_figure(m).is_none())
            .unwrap();
        let l = t.lines().find(|l| l.starts_with(&row_label(good))).unwrap();
        assert!(!l.contains("INVALID"), "{l}");
    }

    #[test]
    fn the_table_says_the_unit_of_its_times() {
        assert!(table(&run()).contains("wall, user and sys in seconds"));
    }
}
