//! The `rpc` summary: per scenario and mechanism the RPC time without tracing, with tracing
//! (the observer effect as a number), and the kernel-traced parts — in the terminal under the
//! table, and in the HTML report as one stacked bar per scenario × mechanism.

use super::ipc::text_table as table;
use super::plot::{StackedBars, StackedRow};
use crate::model::{Measurement, Run, Status};
use crate::probes::rpc::breakdown::PARTS;
use crate::probes::rpc::Scenario;
use crate::report::family::{Evidence, Family};
use crate::units::fmt_time;

/// One scenario × mechanism and its measurements.
struct Case<'a> {
    scenario: Scenario,
    mech: String,
    total: Option<&'a Measurement>,
    traced: Option<&'a Measurement>,
    parts: Vec<Option<&'a Measurement>>,
}

fn cases(run: &Run) -> Vec<Case<'_>> {
    let mut out: Vec<Case> = Vec::new();
    for m in run
        .measurements
        .iter()
        .filter(|m| m.probe.starts_with("rpc."))
    {
        let Some(scenario) = Scenario::parse_name(m.param_str("scenario").unwrap_or("")) else {
            continue;
        };
        let mech = m.param_str("mech").unwrap_or("").to_string();
        let i = match out
            .iter()
            .position(|c| c.scenario == scenario && c.mech == mech)
        {
            Some(i) => i,
            None => {
                out.push(Case {
                    scenario,
                    mech: mech.clone(),
                    total: None,
                    traced: None,
                    parts: vec![None; PARTS.len()],
                });
                out.len() - 1
            }
        };
        let c = &mut out[i];
        match m.probe.as_str() {
            "rpc.total" => c.total = Some(m),
            "rpc.traced" => c.traced = Some(m),
            "rpc.part" => {
                if let Some(k) = PARTS
                    .iter()
                    .position(|p| *p == m.param_str("part").unwrap_or(""))
                {
                    c.parts[k] = Some(m);
                }
            }
            _ => {}
        }
    }
    out.sort_by(|a, b| (a.scenario, &a.mech).cmp(&(b.scenario, &b.mech)));
    out
}

fn median(m: Option<&Measurement>) -> Option<f64> {
    m.filter(|m| m.status != Status::Invalid)
        .and_then(|m| m.value.as_ref())
        .map(|v| v.median)
}

fn cell(m: Option<&Measurement>) -> String {
    match m {
        None => "—".into(),
        Some(x) if x.status == Status::Invalid => "INVALID".into(),
        Some(x) => x
            .value
            .as_ref()
            .map(|v| fmt_time(v.median))
            .unwrap_or_else(|| "—".into()),
    }
}

/// The part medians, a part left out (an IPI that could not be seen, said in a line under
/// rpc.traced) as 0 width; None when no part was reported or one is invalid.
fn present_parts(c: &Case) -> Option<Vec<f64>> {
    if c.parts.iter().all(Option::is_none) {
        return None;
    }
    c.parts
        .iter()
        .map(|m| match m {
            None => Some(0.0),
            Some(_) => median(*m),
        })
        .collect()
}

fn short(s: Scenario) -> &'static str {
    match s {
        Scenario::Local => "local",
        Scenario::RemoteExclusive => "r-excl",
        Scenario::RemotePolling => "r-poll",
        Scenario::RemoteShared => "r-shared",
    }
}

/// The terminal summary (empty without rpc measurements).
pub fn text(run: &Run) -> String {
    let cs = cases(run);
    if cs.is_empty() {
        return String::new();
    }
    let mut rows = vec![vec![
        "scenario".to_string(),
        "mech".into(),
        "untraced".into(),
        "traced".into(),
        "tracing adds".into(),
    ]];
    for c in &cs {
        let effect = match (median(c.total), median(c.traced)) {
            (Some(u), Some(t)) => format!("{:+.0}%", 100.0 * (t / u - 1.0)),
            _ => "—".into(),
        };
        rows.push(vec![
            c.scenario.as_str().into(),
            c.mech.clone(),
            cell(c.total),
            cell(c.traced),
            effect,
        ]);
    }
    let mut out = String::from("\nrpc: median time per RPC\n");
    out.push_str(&table(&rows));
    let traced: Vec<&Case> = cs.iter().filter(|c| c.traced.is_some()).collect();
    if !traced.is_empty() {
        out.push_str("\nrpc: kernel-traced parts (definitions: --explain)\n");
    }
    // At most four cases side by side, so the table fits 80 columns.
    for (i, chunk) in traced.chunks(4).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&table(&parts_rows(chunk)));
    }
    out
}

/// The parts table of some traced cases: a header, one row per part, the sum of parts.
fn parts_rows(traced: &[&Case]) -> Vec<Vec<String>> {
    let mut rows = vec![std::iter::once("part (median)".to_string())
        .chain(
            traced
                .iter()
                .map(|c| format!("{} {}", short(c.scenario), c.mech)),
        )
        .collect::<Vec<_>>()];
    for (k, p) in PARTS.iter().enumerate() {
        rows.push(
            std::iter::once(p.to_string())
                .chain(traced.iter().map(|c| cell(c.parts[k])))
                .collect(),
        );
    }
    rows.push(
        std::iter::once("sum of parts".to_string())
            .chain(traced.iter().map(|c| {
                present_parts(c)
                    .map(|v| fmt_time(v.iter().sum()))
                    .unwrap_or_else(|| "—".into())
            }))
            .collect(),
    );
    rows
}

/// The HTML figure for the `rpc` family: one stacked bar per traced scenario × mechanism.
pub fn figures(runs: &[Run]) -> Vec<String> {
    let mut out = Vec::new();
    for run in runs {
        let rows: Vec<StackedRow> = cases(run)
            .iter()
            .filter_map(|c| {
                let traced = c.traced?;
                let label = format!("{} {}", c.scenario.as_str(), c.mech);
                let segments = present_parts(c);
                match (segments, traced.value.as_ref()) {
                    (Some(segments), Some(v)) if traced.valid => Some(StackedRow {
                        label,
                        segments,
                        total: [v.median, v.ci95[0], v.ci95[1]],
                        note: median(c.total)
                            .map(|u| format!("untraced {}", fmt_time(u)))
                            .unwrap_or_default(),
                    }),
                    _ => Some(StackedRow {
                        label,
                        segments: Vec::new(),
                        total: [f64::NAN; 3],
                        note: traced
                            .failed_checks()
                            .next()
                            .map(|c| format!("invalid: {} ({})", c.name, c.observed))
                            .unwrap_or_else(|| "no parts".into()),
                    }),
                }
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        out.push(
            StackedBars {
                title: "rpc: where an RPC's time goes (kernel-traced parts, medians)".into(),
                subtitle: format!(
                    "{} · total = client's RPC time with tracing on, median [95% CI]",
                    run.machine.short_name()
                ),
                value_label: "ns/RPC".into(),
                segments: PARTS.iter().map(|p| p.to_string()).collect(),
                rows,
            }
            .to_svg(),
        );
    }
    out
}

/// The request/response tables under the terminal table, and the stacked parts per run.
pub struct Rpc;

impl Family for Rpc {
    fn section(&self) -> &'static str {
        "rpc"
    }

    fn evidence(&self) -> Evidence {
        Evidence::Switches
    }

    fn under_table(&self, run: &Run) -> String {
        text(run)
    }

    fn section_figures(&self, runs: &[Run]) -> Vec<String> {
        figures(runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(probe: &str, scenario: &str, part: Option<&str>, median: f64) -> Measurement {
        let mut x = crate::report::ipc::tests::fixture().measurements[0].clone();
        x.probe = probe.into();
        x.params.clear();
        x.params.insert("scenario".into(), scenario.into());
        x.params.insert("mech".into(), "pipe".into());
        if let Some(p) = part {
            x.params.insert("part".into(), p.into());
        }
        x.status = Status::Ok;
        x.valid = true;
        x.value.as_mut().unwrap().median = median;
        x
    }

    #[test]
    fn summary_shows_observer_effect_and_parts_in_order() {
        let mut run = crate::report::ipc::tests::fixture();
        run.measurements = vec![
            m("rpc.total", "local", None, 4000.0),
            m("rpc.traced", "local", None, 5000.0),
        ];
        for p in PARTS {
            run.measurements
                .push(m("rpc.part", "local", Some(p), 625.0));
        }
        run.measurements
            .push(m("rpc.total", "remote-polling", None, 300.0));
        let t = text(&run);
        assert!(t.contains("+25%"), "{t}");
        let send = t.lines().position(|l| l.starts_with("send")).unwrap();
        let ret = t.lines().position(|l| l.starts_with("return")).unwrap();
        assert!(send < ret);
        assert!(t.contains("sum of parts") && t.contains("5.00 µs"), "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert_eq!(
            crate::report::section_figures(std::slice::from_ref(&run), "rpc").len(),
            1
        );
    }

    #[test]
    fn many_traced_cases_wrap_into_tables_that_fit_80_columns() {
        let mut run = crate::report::ipc::tests::fixture();
        run.measurements.clear();
        for sc in ["local", "remote-exclusive", "remote-shared"] {
            for mech in ["pipe", "futex"] {
                let mut t = m("rpc.traced", sc, None, 5000.0);
                t.params.insert("mech".into(), mech.into());
                run.measurements.push(t);
                for p in PARTS {
                    let mut x = m("rpc.part", sc, Some(p), 625.0);
                    x.params.insert("mech".into(), mech.into());
                    run.measurements.push(x);
                }
            }
        }
        let t = text(&run);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert_eq!(t.matches("part (median)").count(), 2, "{t}");
        assert_eq!(t.matches("sum of parts").count(), 2, "{t}");
    }

    #[test]
    fn parts_left_out_show_as_a_dash_and_the_rest_still_add_up() {
        let mut run = crate::report::ipc::tests::fixture();
        run.measurements = vec![m("rpc.traced", "local", None, 5000.0)];
        for p in PARTS.iter().filter(|p| !p.contains("IPI")) {
            run.measurements
                .push(m("rpc.part", "local", Some(p), 500.0));
        }
        let t = text(&run);
        let ipi = t.lines().find(|l| l.starts_with("IPI")).unwrap();
        assert!(ipi.ends_with('—'), "{t}");
        assert!(t.contains("3.00 µs"), "{t}");
        // An invalid part is not summed.
        run.measurements[1].status = Status::Invalid;
        let t = text(&run);
        let sum = t.lines().find(|l| l.starts_with("sum of parts")).unwrap();
        assert!(sum.ends_with('—'), "{t}");
    }
}
