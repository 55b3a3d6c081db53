//! The core-to-core map: from-CPU down, to-CPU across, the one-way latency in each cell — in
//! the terminal under the table (small machines), and as heatmaps in the HTML report, the
//! latency beside the pair classes so the topology is visible.

use super::plot::Heatmap;
use crate::model::{Measurement, Run};
use crate::probes::ipc::classes::Class;
use crate::report::family::{About, Evidence, Family};
use crate::units::fmt_time;
use crate::units::name::Word;

/// Above this many CPUs the terminal matrix is too wide to read; CSV/HTML carry it.
const MAX_TEXT_CPUS: usize = 12;

struct Cell<'a> {
    from: usize,
    to: usize,
    m: &'a Measurement,
}

fn cells(run: &Run) -> Vec<Cell<'_>> {
    run.measurements
        .iter()
        .filter(|m| m.is(crate::probes::c2c::PAIR))
        .filter_map(|m| {
            let n = |k: &str| m.params.get(k).and_then(|v| v.as_u64()).map(|v| v as usize);
            Some(Cell {
                from: n("from")?,
                to: n("to")?,
                m,
            })
        })
        .collect()
}

fn cpus(cs: &[Cell]) -> Vec<usize> {
    let mut v: Vec<usize> = cs.iter().flat_map(|c| [c.from, c.to]).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The pair's figure, looked up in either direction (one measurement per unordered pair).
fn lookup<'a>(cs: &'a [Cell<'a>], i: usize, j: usize) -> Option<&'a Measurement> {
    cs.iter()
        .find(|c| (c.from, c.to) == (i, j) || (c.from, c.to) == (j, i))
        .map(|c| c.m)
}

/// The terminal matrix (empty without c2c measurements).
pub fn text(run: &Run) -> String {
    let cs = cells(run);
    if cs.is_empty() {
        return String::new();
    }
    let list = cpus(&cs);
    if list.len() > MAX_TEXT_CPUS {
        return format!(
            "\nc2c: {} pairs over {} CPUs: the matrix is in --csv (one row per pair) and --html\n",
            cs.len(),
            list.len()
        );
    }
    let fmt = |m| super::figure_cell(m, "·", |v| fmt_time(v.median));
    let mut rows = vec![std::iter::once("from\\to".to_string())
        .chain(list.iter().map(|c| c.to_string()))
        .collect::<Vec<_>>()];
    for &i in &list {
        let mut r = vec![i.to_string()];
        for &j in &list {
            r.push(if i == j {
                "·".into()
            } else {
                fmt(lookup(&cs, i, j))
            });
        }
        rows.push(r);
    }
    let w = rows
        .iter()
        .flatten()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(1);
    let mut out = String::from("\nc2c: one-way latency, median (· not measured)\n");
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .map(|c| format!("{}{c}", " ".repeat(w - c.chars().count())))
            .collect();
        out.push_str(line.join(" ").trim_end());
        out.push('\n');
    }
    out
}

/// The HTML figures for the `c2c` family: latency heatmap and the class of each pair.
pub fn figures(runs: &[Run]) -> Vec<String> {
    let mut out = Vec::new();
    for run in runs {
        let cs = cells(run);
        if cs.is_empty() {
            continue;
        }
        let list = cpus(&cs);
        let grid = |f: &dyn Fn(&Measurement) -> Option<f64>| -> Vec<Vec<Option<f64>>> {
            list.iter()
                .map(|&i| {
                    list.iter()
                        .map(|&j| lookup(&cs, i, j).filter(|_| i != j).and_then(f))
                        .collect()
                })
                .collect()
        };
        let labels: Vec<String> = list.iter().map(|c| c.to_string()).collect();
        out.push(
            Heatmap {
                title: "c2c: one-way core-to-core latency".into(),
                subtitle: run.machine.short_name(),
                x_label: "to CPU".into(),
                y_label: "from CPU".into(),
                unit: "ns/one-way".into(),
                col_labels: labels.clone(),
                row_labels: labels.clone(),
                cells: grid(&|m| {
                    (m.valid && !m.is_unstable())
                        .then(|| m.value.as_ref().map(|v| v.median))
                        .flatten()
                }),
            }
            .to_svg(),
        );
        let legend: Vec<String> = Class::ALL
            .iter()
            .enumerate()
            .map(|(k, c)| format!("{k} {}", c.word()))
            .collect();
        out.push(
            Heatmap {
                title: "c2c: class of each pair".into(),
                subtitle: legend.join(" · "),
                x_label: "to CPU".into(),
                y_label: "from CPU".into(),
                unit: "class".into(),
                col_labels: labels.clone(),
                row_labels: labels,
                cells: grid(&|m| {
                    Class::of(m)
                        .and_then(|c| Class::ALL.iter().position(|x| *x == c).map(|p| p as f64))
                }),
            }
            .to_svg(),
        );
    }
    out
}

/// The core-to-core map: under the terminal table, and as heatmaps per run.
pub struct C2c;

impl Family for C2c {
    fn about(&self) -> About {
        About {
            fixture: Some("c2c"),
            quick: &["c2c", "--quick"],
            evidence: Evidence::Switches,
            ..About::of("c2c")
        }
    }

    fn under_table(&self, run: &Run, _verbose: bool) -> String {
        text(run)
    }

    fn section_figures(&self, runs: &[Run]) -> Vec<String> {
        figures(runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(from: usize, to: usize, median: f64) -> Measurement {
        let mut x = crate::report::ipc::tests::fixture().measurements[0].clone();
        x.probe = "c2c.pair".into();
        x.params.clear();
        x.params.insert("from".into(), from.into());
        x.params.insert("to".into(), to.into());
        x.params.insert("class".into(), "same-llc".into());
        x.status = crate::model::Status::Ok;
        x.valid = true;
        x.value.as_mut().unwrap().median = median;
        x
    }

    #[test]
    fn matrix_is_symmetric_with_an_empty_diagonal() {
        let mut run = crate::report::ipc::tests::fixture();
        run.measurements = vec![pair(0, 1, 50.0), pair(0, 2, 120.0), pair(1, 2, 60.0)];
        let t = text(&run);
        let lines: Vec<&str> = t.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 5, "{t}");
        // Row 2: to 0 = 120 ns (looked up in either direction), itself ·, to 1 = 60 ns.
        let row2: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(row2, vec!["2", "120", "ns", "60.0", "ns", "·"]);
        assert_eq!(
            crate::report::section_figures(std::slice::from_ref(&run), "c2c").len(),
            2
        );
    }
}
