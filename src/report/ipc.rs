//! The `ipc` matrix: mechanisms down, placement classes across, the round trip in each cell —
//! in the terminal under the table, and as a heatmap in the HTML report.

use super::plot::Heatmap;
use crate::model::{Measurement, Run};
use crate::probes::ipc::channel::Mech;
use crate::probes::ipc::classes::Class;
use crate::report::family::{About, Evidence, Family};
use crate::units::fmt_time;
use crate::units::name::{Named, Word};

fn ipc_measurements(run: &Run) -> Vec<&Measurement> {
    run.measurements
        .iter()
        .filter(|m| m.in_section("ipc"))
        .collect()
}

fn mech_of(m: &Measurement) -> Option<Mech> {
    m.probe.strip_prefix("ipc.").and_then(Mech::from_name)
}

/// Rows (mechanisms) and columns (classes) present, in their natural order.
fn axes(ms: &[&Measurement]) -> (Vec<Mech>, Vec<Class>) {
    let mut mechs: Vec<Mech> = ms.iter().filter_map(|m| mech_of(m)).collect();
    mechs.sort();
    mechs.dedup();
    let mut classes: Vec<Class> = ms.iter().filter_map(|m| Class::of(m)).collect();
    classes.sort();
    classes.dedup();
    (mechs, classes)
}

fn cell<'a>(ms: &[&'a Measurement], mech: Mech, class: Class) -> Option<&'a Measurement> {
    ms.iter()
        .copied()
        .find(|m| mech_of(m) == Some(mech) && Class::of(m) == Some(class))
}

/// Rows of cells (the first row the header) as aligned text within stdout's width: the
/// columns of numbers right-aligned, two spaces apart; a table too wide for the terminal
/// splits into several that repeat the first column (report::term::grid).
pub(crate) fn text_table(rows: &[Vec<String>]) -> String {
    let Some((head, body)) = rows.split_first() else {
        return String::new();
    };
    let header: Vec<&str> = head.iter().map(String::as_str).collect();
    super::term::grid(&header, body, &super::term::Term::stdout())
}

/// The terminal matrix (empty when the run has no ipc measurements).
pub fn text(run: &Run) -> String {
    let ms = ipc_measurements(run);
    if ms.is_empty() {
        return String::new();
    }
    let (mechs, classes) = axes(&ms);
    let mut rows: Vec<Vec<String>> = vec![std::iter::once("round trip".to_string())
        .chain(classes.iter().map(|c| c.word().to_string()))
        .collect()];
    for &mech in &mechs {
        let mut r = vec![mech.name().to_string()];
        for &class in &classes {
            let m = cell(&ms, mech, class);
            r.push(super::figure_cell(m, "—", |v| fmt_time(v.median)));
        }
        rows.push(r);
    }
    let mut out = String::from("\nipc: median round trip (one-way = half; — not measured)\n");
    out.push_str(&text_table(&rows));
    out
}

/// The HTML figures for the `ipc` family: the matrix as a heatmap per run.
pub fn figures(runs: &[Run]) -> Vec<String> {
    runs.iter()
        .filter_map(|run| {
            let ms = ipc_measurements(run);
            if ms.is_empty() {
                return None;
            }
            let (mechs, classes) = axes(&ms);
            let cells = mechs
                .iter()
                .map(|&mech| {
                    classes
                        .iter()
                        .map(|&class| {
                            cell(&ms, mech, class)
                                .filter(|m| m.valid && !m.is_unstable())
                                .and_then(|m| m.value.as_ref())
                                .map(|v| v.median)
                        })
                        .collect()
                })
                .collect();
            Some(
                Heatmap {
                    title: "ipc: round trip by mechanism and placement".into(),
                    subtitle: run.machine.short_name(),
                    x_label: "placement".into(),
                    y_label: "mechanism".into(),
                    unit: "ns/round trip".into(),
                    col_labels: classes.iter().map(|c| c.word().to_string()).collect(),
                    row_labels: mechs.iter().map(|m| m.name().to_string()).collect(),
                    cells,
                }
                .to_svg(),
            )
        })
        .collect()
}

/// The cross-core IPC matrix: under the terminal table, and as a heatmap per run.
pub struct Ipc;

impl Family for Ipc {
    fn about(&self) -> About {
        About {
            fixture: Some("ipc"),
            quick: &["ipc", "--quick"],
            evidence: Evidence::Switches,
            ..About::of("ipc")
        }
    }

    /// The matrix, unless it would only repeat the table: with one placement class its one
    /// column is the table's rows again (`run`), printed with --verbose only.
    fn under_table(&self, run: &Run, verbose: bool) -> String {
        let (_, classes) = axes(&ipc_measurements(run));
        if classes.len() < 2 && !verbose {
            return String::new();
        }
        text(run)
    }

    fn section_figures(&self, runs: &[Run]) -> Vec<String> {
        figures(runs)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn fixture() -> Run {
        crate::input::parse_run(
            include_str!("../../tests/fixtures/run-quick.json"),
            "fixture",
        )
        .unwrap()
    }

    fn m(mech: &str, class: &str, median: f64, valid: bool) -> Measurement {
        let mut x = fixture().measurements[0].clone();
        x.probe = format!("ipc.{mech}");
        x.params.clear();
        x.status = crate::model::Status::Ok;
        x.params.insert("class".into(), class.into());
        x.value.as_mut().unwrap().median = median;
        x.valid = valid;
        if !valid {
            x.status = crate::model::Status::Invalid;
        }
        x
    }

    #[test]
    fn matrix_has_mechanisms_down_and_classes_across() {
        let mut run = fixture();
        let mut empty = run.clone();
        empty.measurements.clear();
        run.measurements = vec![
            m("pipe", "same-cpu", 4000.0, true),
            m("pipe", "same-llc", 30000.0, true),
            m("spin", "same-llc", 200.0, false),
        ];
        let t = text(&run);
        let lines: Vec<&str> = t.lines().filter(|l| !l.is_empty()).collect();
        assert!(lines[1].contains("same CPU") && lines[1].contains("same LLC"));
        assert!(lines[2].starts_with("pipe") && lines[2].contains("4.00 µs"));
        assert!(lines[3].starts_with("spin") && lines[3].contains("—"));
        assert!(lines[3].contains("INVALID"));
        assert!(lines.iter().all(|l| l.chars().count() <= 90));
        assert!(text(&empty).is_empty());
        assert_eq!(
            crate::report::section_figures(std::slice::from_ref(&run), "ipc").len(),
            1
        );
        assert!(crate::report::section_figures(std::slice::from_ref(&run), "ctx").is_empty());
    }
}
