//! The `rpc` summary: per scenario and mechanism the RPC time without tracing, with tracing
//! ("tracing adds", with its interval), the kernel-traced parts and the same parts with the
//! observer's cost taken out, and what one recorded event costs (the calibration pass) — in
//! the terminal under the table (parts as means, which add up; details with --explain), and
//! in the HTML report as two stacked bars per scenario × mechanism (traced, corrected) with
//! the untraced time marked.

use super::ipc::text_table as table;
use super::plot::{StackedBars, StackedRow};
use crate::model::{Calibration, Estimate, Measurement, Run, Status};
use crate::probes::rpc::breakdown::PARTS;
use crate::probes::rpc::{self, Scenario};
use crate::report::family::{About, Evidence, Family};
use crate::units::name::{Named, Word};
use crate::units::Unit;
use crate::units::{fmt_num, fmt_time, time_unit};

/// One scenario × mechanism and its measurements.
struct Case<'a> {
    scenario: Scenario,
    mech: String,
    total: Option<&'a Measurement>,
    traced: Option<&'a Measurement>,
    parts: Vec<Option<&'a Measurement>>,
    corrected: Vec<Option<&'a Measurement>>,
}

fn cases(run: &Run) -> Vec<Case<'_>> {
    let mut out: Vec<Case> = Vec::new();
    for m in run
        .measurements
        .iter()
        .filter(|m| m.in_section(crate::probes::rpc::SECTION))
    {
        let Some(scenario) = Scenario::from_name(m.param_str("scenario").unwrap_or("")) else {
            continue;
        };
        let mech = m.param_str("mech").unwrap_or("").to_string();
        let is = |c: &Case| c.scenario == scenario && c.mech == mech;
        let i = super::find_or_push(&mut out, is, || Case {
            scenario,
            mech: mech.clone(),
            total: None,
            traced: None,
            parts: vec![None; PARTS.len()],
            corrected: vec![None; PARTS.len()],
        });
        let c = &mut out[i];
        let part = PARTS
            .iter()
            .position(|p| *p == m.param_str("part").unwrap_or(""));
        match part {
            _ if m.is(rpc::TOTAL) => c.total = Some(m),
            _ if m.is(rpc::TRACED) => c.traced = Some(m),
            Some(k) if m.is(rpc::PART) => c.parts[k] = Some(m),
            Some(k) if m.is(rpc::CORRECTED) => c.corrected[k] = Some(m),
            _ => {}
        }
    }
    out.sort_by(|a, b| (a.scenario, &a.mech).cmp(&(b.scenario, &b.mech)));
    out
}

impl Case<'_> {
    fn label(&self) -> String {
        format!("{} {}", short(self.scenario), self.mech)
    }

    /// The untraced figure (rpc.total's median), invalid or not: "tracing adds" and the
    /// corrected check are read against it either way, and its row says whether it held.
    fn untraced(&self) -> Option<f64> {
        self.total.and_then(|m| m.value.as_ref()).map(|v| v.median)
    }

    fn calibration(&self) -> Option<&Calibration> {
        self.traced?.observer.as_ref()?.calibration.as_ref()
    }

    /// The corrected breakdown's verdict: the failed check that made it invalid.
    fn corrected_failure(&self) -> Option<&crate::model::Check> {
        self.corrected
            .iter()
            .flatten()
            .find_map(|m| m.failed_checks().next())
    }

    fn has_corrected(&self) -> bool {
        self.corrected.iter().any(Option::is_some)
    }
}

/// The additive figure (mean per RPC) of a valid measurement.
fn mean(m: Option<&Measurement>) -> Option<Estimate> {
    m.filter(|m| m.status != Status::Invalid)?
        .additive
        .as_ref()
        .map(|a| a.mean)
}

/// A time no more precise than its interval, by the units' one rule (the figure of
/// "45 ±19 µs" is "45 µs", as the common table prints it), in the value's unit. An
/// interval that holds 0 says the time may be nothing: "≈0 ±3.3 µs" (its larger side), never
/// a signed value such as "-2 µs" that the interval does not back.
pub fn fmt_within(e: &Estimate) -> String {
    let [lo, hi] = e.ci95;
    if lo.is_finite() && hi.is_finite() && lo <= 0.0 && hi >= 0.0 && hi > lo {
        let (d, u) = time_unit((hi - e.value).max(e.value - lo));
        return format!(
            "≈0 {} {u}",
            crate::units::interval::fmt_spread(e.value / d, lo / d, hi / d)
        );
    }
    if lo.is_finite() && hi.is_finite() {
        return crate::units::interval::fmt_figure_alone(e.value, lo, hi, &Unit::NS);
    }
    let half = (e.ci95[1] - e.ci95[0]) / 2.0;
    let (d, u) = time_unit(e.value.abs().max(half.min(e.value.abs() * 10.0)));
    let v = e.value / d;
    let s = fmt_num(v);
    if !(half.is_finite() && half > 0.0) {
        return format!("{s} {u}");
    }
    let allowed = (-(half / d).log10().floor()).max(0.0) as usize;
    let has = s.split_once('.').map_or(0, |(_, f)| f.len());
    let shown = if has > allowed {
        format!("{v:.allowed$}")
    } else {
        s
    };
    // A small negative value rounded to zero is zero, not "-0".
    let shown = match shown.strip_prefix('-') {
        Some(rest) if rest.parse::<f64>() == Ok(0.0) => rest.to_string(),
        _ => shown,
    };
    format!("{shown} {u}")
}

/// "680 ±17 ns": a time and its interval by the units' one precision rule; "unstable (±1.1
/// µs)" when the interval reaches beyond ±50% of the value (noise, not a number).
pub fn fmt_est(e: &Estimate) -> String {
    if !(e.ci95[0].is_finite() && e.ci95[1].is_finite()) {
        return format!("{} (no interval)", crate::units::fmt_time(e.value));
    }
    crate::units::fmt_figure(e.value, e.ci95[0], e.ci95[1], &Unit::NS)
}

/// "+165% ±15": a relative change and its interval, in percent, by the same rule; "unstable
/// (±120%)" when the ratio's interval reaches beyond ±50% of it (an untraced interval that
/// reaches 0 leaves the ratio unbounded: "0% ±120" would read as a bound).
fn fmt_rel(e: &Estimate) -> String {
    use crate::units::interval::{fmt_spread, is_unstable};
    let [lo, hi] = e.ci95;
    if is_unstable(1.0 + e.value, 1.0 + lo, 1.0 + hi) {
        let pct = |x: f64| 100.0 * x;
        return format!("unstable ({}%)", fmt_spread(pct(e.value), pct(lo), pct(hi)));
    }
    crate::units::fmt_percent(e.value, lo, hi)
}

/// The figure as the common table prints it ("45 µs" beside its "45 ±19 µs/RPC").
fn cell(m: Option<&Measurement>) -> String {
    super::figure_cell(m, "—", |v| {
        crate::units::interval::fmt_figure_alone(v.median, v.ci95[0], v.ci95[1], &Unit::NS)
    })
}

fn short(s: Scenario) -> &'static str {
    match s {
        Scenario::Local => "local",
        Scenario::RemoteExclusive => "r-excl",
        Scenario::RemotePolling => "r-poll",
        Scenario::RemoteShared => "r-shared",
    }
}

/// The terminal summary (empty without rpc measurements): times per RPC, the parts traced
/// and corrected, the per-event costs (with `verbose`: --verbose), and the lines that say
/// what is invalid.
pub fn text(run: &Run, verbose: bool) -> String {
    text_within(run, verbose, &super::term::Term::stdout())
}

/// [`text`], its lines of prose wrapped to `term`'s width (its tables read stdout's).
fn text_within(run: &Run, verbose: bool, term: &super::term::Term) -> String {
    let cs = cases(run);
    if cs.is_empty() {
        return String::new();
    }
    // One statistic per table: the medians of the table above here, the parts' means
    // (which add up) below.
    let mut out = String::from("\nrpc: time per RPC, median (the table above's figures)\n");
    out.push_str(&table(&summary_rows(&cs)));
    let traced: Vec<&Case> = cs.iter().filter(|c| c.traced.is_some()).collect();
    if traced.is_empty() {
        return out;
    }
    out.push_str("\nrpc: parts of an RPC, means (they add up): traced → corrected (--explain)\n");
    // At most three cases side by side, so the table fits 80 columns.
    for (i, chunk) in traced.chunks(3).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&table(&parts_rows(chunk)));
    }
    out.push_str(&corrected_against_untraced(&cs, term));
    let calibrated = traced.iter().any(|c| c.calibration().is_some());
    if calibrated && !verbose {
        out.push_str("(corrected: the calibration pass's cost of each event: --verbose)\n");
    }
    if calibrated && verbose {
        out.push_str("\nrpc: what one recorded event adds to an RPC (calibration pass)\n");
        for (i, chunk) in traced.chunks(3).enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&table(&cost_rows(chunk)));
        }
    }
    out.push_str(&corrected_failures(&cs, term, verbose));
    if traced
        .iter()
        .any(|c| c.parts.iter().flatten().any(|m| modes(m).is_some()))
    {
        out.push_str("* two modes: both, with their shares, with --explain\n");
    }
    out
}

/// The corrected breakdowns' failed checks, once per kind with the cases they concern
/// ("✗ corrected parts vs untraced rpc.total (in 3: local, r-excl, r-shared; each with
/// --verbose)"), as the table's warnings are (report::table::remark_block); a case alone
/// in its kind, and every case with `verbose`, in full. Each case stands as its summary
/// row (its traced measurement, or its total), so "every row" means every scenario row.
fn corrected_failures(cs: &[Case], term: &super::term::Term, verbose: bool) -> String {
    let rows: Vec<&Measurement> = cs.iter().filter_map(|c| c.traced.or(c.total)).collect();
    let case_of = |m: &Measurement| {
        cs.iter()
            .find(|c| c.traced.or(c.total).is_some_and(|r| std::ptr::eq(r, m)))
    };
    let label = |m: &Measurement| {
        case_of(m).map_or_else(String::new, |c| format!("{} corrected", c.label()))
    };
    let failed = |m: &Measurement| {
        let mut texts: Vec<String> = Vec::new();
        for x in case_of(m)
            .into_iter()
            .flat_map(|c| c.corrected.iter().flatten())
        {
            for f in x.failed_checks() {
                let t = format!(
                    "{}: {}, expected {}",
                    crate::report::checks::name(f),
                    crate::report::checks::observed(f),
                    crate::report::checks::expected(f)
                );
                if !texts.contains(&t) {
                    texts.push(t);
                }
            }
        }
        texts
    };
    let rows = super::table::Labelled {
        shown: &rows,
        label: &label,
    };
    super::table::remark_block(&rows, &failed, "✗", term, verbose)
}

/// The summary table, medians as the common table prints them: untraced, traced, and what
/// tracing adds (traced over untraced median, [`crate::probes::rpc::correct::tracing_adds`]).
fn summary_rows(cs: &[Case]) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        "scenario".to_string(),
        "mech".into(),
        "untraced".into(),
        "traced".into(),
        "tracing adds".into(),
    ]];
    let median = |m: Option<&Measurement>| {
        let m = m.filter(|m| m.status != Status::Invalid)?;
        m.value.as_ref().map(|v| Estimate {
            value: v.median,
            ci95: v.ci95,
        })
    };
    for c in cs {
        let adds = match (median(c.traced), median(c.total)) {
            (Some(t), Some(u)) => crate::probes::rpc::correct::tracing_adds(&t, &u),
            _ => None,
        }
        .map(|e| fmt_rel(&e))
        .unwrap_or_else(|| "—".into());
        rows.push(vec![
            c.scenario.name().into(),
            c.mech.clone(),
            cell(c.total),
            cell(c.traced),
            adds,
        ]);
    }
    rows
}

/// Each corrected breakdown's sum beside the untraced median it should match, one line per
/// case that has both ("corrected vs untraced: local pipe 4.20 µs vs 4.00 µs (+5%)"); an
/// invalid breakdown's reason follows the table ([`corrected_failures`]).
fn corrected_against_untraced(cs: &[Case], term: &super::term::Term) -> String {
    let parts: Vec<String> = cs
        .iter()
        .filter(|c| c.has_corrected() && c.corrected_failure().is_none())
        .filter_map(|c| {
            let s = c.calibration()?.corrected_sum?;
            let u = c.total?.value.as_ref()?;
            (u.median > 0.0).then(|| {
                format!(
                    "{} {} vs {} ({:+.0}%)",
                    c.label(),
                    fmt_within(&s),
                    crate::units::interval::fmt_figure_alone(
                        u.median,
                        u.ci95[0],
                        u.ci95[1],
                        &Unit::NS
                    ),
                    100.0 * (s.value / u.median - 1.0)
                )
            })
        })
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    let line = format!("corrected vs untraced: {}", parts.join(" · "));
    super::term::wrap(&line, term.width, "", "  ") + "\n"
}

fn modes(m: &Measurement) -> Option<crate::model::ModeShares> {
    m.additive.as_ref()?.modes
}

/// The parts table of some traced cases: one row per part some case has, "traced →
/// corrected", the sums.
fn parts_rows(traced: &[&Case]) -> Vec<Vec<String>> {
    // A breakdown whose corrected parts failed their check: its column is marked ✗ once
    // (the line after the table says why), its cells keep the numbers it rejects.
    let label = |c: &Case| match c.corrected_failure() {
        Some(_) => format!("✗ {}", c.label()),
        None => c.label(),
    };
    let mut rows = vec![std::iter::once("part".to_string())
        .chain(traced.iter().map(|c| label(c)))
        .collect::<Vec<_>>()];
    for (k, p) in PARTS.iter().enumerate() {
        let cells: Vec<String> = traced.iter().map(|c| part_cell(c, k)).collect();
        // A part left out of every case (the IPIs a CPU could not record: the warning under
        // rpc.traced says why and where its time went) is a row of dashes: not printed.
        if cells.iter().all(|x| x == "—") {
            continue;
        }
        rows.push(std::iter::once(p.to_string()).chain(cells).collect());
    }
    rows.push(
        std::iter::once("sum".to_string())
            .chain(traced.iter().map(|c| sum_cell(c)))
            .collect(),
    );
    rows
}

/// "2.41 µs → 780 ns": the traced part's mean and the corrected one; "—" for a part left
/// out (an IPI that could not be seen, said under rpc.traced), INVALID for an invalid one.
fn part_cell(c: &Case, k: usize) -> String {
    let Some(m) = c.parts[k] else {
        return "—".into();
    };
    if m.status == Status::Invalid {
        return "INVALID".into();
    }
    let Some(traced) = mean(Some(m)) else {
        return cell(Some(m));
    };
    let star = if modes(m).is_some() { "*" } else { "" };
    let corrected = match c.corrected[k] {
        None => return format!("{}{star}", fmt_within(&traced)),
        // Invalid (the breakdown failed its check): the number it rejects, under the
        // column's ✗ ([`parts_rows`]), which the line after the table explains.
        Some(x) => x
            .additive
            .as_ref()
            .map(|a| fmt_within(&a.mean))
            .unwrap_or_else(|| "—".into()),
    };
    format!("{}{star} → {corrected}", fmt_within(&traced))
}

/// The sum of the parts' means (they add up), traced → corrected.
fn sum_cell(c: &Case) -> String {
    let traced: Option<f64> = c
        .parts
        .iter()
        .flatten()
        .map(|m| mean(Some(m)).map(|e| e.value))
        .sum();
    let Some(t) = traced.filter(|_| c.parts.iter().any(Option::is_some)) else {
        return "—".into();
    };
    let corrected = match c.calibration().and_then(|k| k.corrected_sum) {
        Some(s) if c.corrected_failure().is_some() => format!(" → {}", fmt_within(&s)),
        Some(s) if c.has_corrected() => format!(" → {}", fmt_within(&s)),
        _ => String::new(),
    };
    format!("{}{corrected}", fmt_time(t))
}

/// The calibration table: each group's cost per event, the fit's residual, the groups at
/// once against alone, the RPC with nothing recording.
fn cost_rows(traced: &[&Case]) -> Vec<Vec<String>> {
    let mut rows = vec![std::iter::once("events".to_string())
        .chain(traced.iter().map(|c| c.label()))
        .collect::<Vec<_>>()];
    for g in crate::evidence::trace::Group::ALL {
        rows.push(
            std::iter::once(format!("{} (each)", g.word()))
                .chain(traced.iter().map(|c| {
                    c.calibration()
                        .and_then(|k| k.costs.iter().find(|x| x.group == g.word()))
                        .map(|x| fmt_est(&x.ns))
                        .unwrap_or_else(|| "—".into())
                }))
                .collect(),
        );
    }
    let row = |name: &str, f: &dyn Fn(&Calibration) -> String| {
        std::iter::once(name.to_string())
            .chain(
                traced
                    .iter()
                    .map(|c| c.calibration().map(f).unwrap_or_else(|| "—".into())),
            )
            .collect::<Vec<_>>()
    };
    rows.push(row("fit residual", &|k| fmt_time(k.residual_ns)));
    rows.push(row("all vs alone", &|k| {
        format!(
            "{}{}",
            if k.together_ns >= 0.0 { "+" } else { "" },
            fmt_time(k.together_ns)
        )
    }));
    rows.push(row("none recording", &|k| fmt_within(&k.untraced_fit)));
    rows
}

/// With --explain: per traced case, each part's mean (traced and corrected) with its
/// interval, its median with its interval, the events on its path by group, and both modes
/// with their shares.
pub fn detail(run: &Run) -> String {
    use crate::evidence::trace::Group;
    let mut out = String::new();
    for c in cases(run).iter().filter(|c| c.traced.is_some()) {
        let mut rows = vec![std::iter::once("part")
            .chain(["traced mean", "median [95% CI]", "corrected"])
            .chain(Group::ALL.iter().map(|g| short_group(g.word())))
            .map(String::from)
            .collect::<Vec<_>>()];
        let mut notes = Vec::new();
        for (k, p) in PARTS.iter().enumerate() {
            let Some(m) = c.parts[k] else { continue };
            let median = m
                .value
                .as_ref()
                .filter(|_| !m.is_unstable())
                .map(|v| {
                    let (d, u) = time_unit(v.median.max(v.ci95[1]));
                    format!(
                        "{} [{}, {}] {u}",
                        fmt_num(v.median / d),
                        fmt_num(v.ci95[0] / d),
                        fmt_num(v.ci95[1] / d)
                    )
                })
                .unwrap_or_else(|| cell(Some(m)));
            let mut row = vec![
                p.to_string(),
                mean(Some(m))
                    .map(|e| fmt_est(&e))
                    .unwrap_or_else(|| cell(Some(m))),
                median,
                mean(c.corrected[k])
                    .map(|e| fmt_est(&e))
                    .unwrap_or_else(|| cell(c.corrected[k])),
            ];
            row.extend(Group::ALL.iter().map(|g| {
                m.additive
                    .as_ref()
                    .and_then(|a| a.events.get(g.word()))
                    .filter(|n| **n >= 0.05)
                    .map_or("—".into(), |n| format!("{n:.1}"))
            }));
            rows.push(row);
            if let Some(x) = modes(m) {
                notes.push(modes_line(p, &x));
            }
        }
        if out.is_empty() {
            out.push_str(
                "\nthe parts in detail, with the events on each part's path per RPC by \
                 group:\nsched, sys (system calls), ipi, sw (perf switch records)\n",
            );
        }
        out.push_str(&format!("\nrpc {} {}\n", c.scenario.name(), c.mech));
        out.push_str(&table(&rows));
        for n in notes {
            out.push_str(&format!("* {n}\n"));
        }
    }
    out
}

/// A group's name in the detail table, short enough for 80 columns.
fn short_group(g: &str) -> &str {
    match g {
        "syscalls" => "sys",
        "switch records" => "sw",
        g => g,
    }
}

/// The line that names a part's two modes: "send: 1.13 µs in 62% of RPCs, 4.34 µs in 38%".
pub fn modes_line(part: &str, m: &crate::model::ModeShares) -> String {
    if m.low == 0.0 {
        format!(
            "{part}: 0 in {:.0}% of RPCs (did not happen), {} in {:.0}%",
            100.0 * m.low_share,
            fmt_time(m.high),
            100.0 * m.high_share
        )
    } else {
        format!(
            "{part}: {} in {:.0}% of RPCs, {} in {:.0}%",
            fmt_time(m.low),
            100.0 * m.low_share,
            fmt_time(m.high),
            100.0 * m.high_share
        )
    }
}

/// One bar: the parts' means in order (a part left out as 0 width) and the total, or the
/// reason it is not drawn.
fn bar(
    label: String,
    parts: &[Option<&Measurement>],
    total: Option<Estimate>,
    marker: Option<f64>,
) -> StackedRow {
    let failed = parts.iter().flatten().find_map(|m| {
        m.failed_checks().next().map(|c| {
            format!(
                "invalid: {} ({})",
                crate::report::checks::name(c),
                crate::report::checks::observed(c)
            )
        })
    });
    let segments: Option<Vec<f64>> = parts
        .iter()
        .map(|m| match m {
            None => Some(0.0),
            Some(_) => mean(*m).map(|e| e.value),
        })
        .collect();
    let note = marker
        .map(|u| format!("untraced {}", fmt_time(u)))
        .unwrap_or_default();
    match (failed, segments, total) {
        (None, Some(seg), Some(t)) if seg.iter().all(|v| *v >= 0.0) => StackedRow {
            label,
            segments: seg,
            total: [t.value, t.ci95[0], t.ci95[1]],
            note,
            marker,
        },
        (None, Some(_), Some(_)) => StackedRow {
            label,
            segments: Vec::new(),
            total: [f64::NAN; 3],
            note: "a part's mean is below 0".into(),
            marker: None,
        },
        (failed, _, _) => StackedRow {
            label,
            segments: Vec::new(),
            total: [f64::NAN; 3],
            note: failed.unwrap_or_else(|| "no parts".into()),
            marker: None,
        },
    }
}

/// The HTML figure for the `rpc` family: per traced scenario × mechanism two stacked bars,
/// the traced parts and the corrected ones (means per RPC, which add up), the untraced time
/// marked across both.
pub fn figures(runs: &[Run]) -> Vec<String> {
    let mut out = Vec::new();
    for run in runs {
        let mut rows = Vec::new();
        for c in cases(run).iter().filter(|c| c.traced.is_some()) {
            let label = format!("{} {}", c.scenario.name(), c.mech);
            let traced = c.traced.and_then(|m| m.additive.as_ref()).map(|a| a.mean);
            rows.push(bar(
                format!("{label} traced"),
                &c.parts,
                traced,
                c.untraced(),
            ));
            if c.has_corrected() {
                let sum = c.calibration().and_then(|k| k.corrected_sum);
                rows.push(bar(
                    format!("{label} corrected"),
                    &c.corrected,
                    sum,
                    c.untraced(),
                ));
            }
        }
        if rows.is_empty() {
            continue;
        }
        out.push(
            StackedBars {
                title: "rpc: where an RPC's time goes (kernel-traced parts, and with the observer's cost taken out)".into(),
                subtitle: format!(
                    "{} · means per RPC over the middle 80% of RPCs (they add up) · total ± 95% CI · red tick = untraced RPC time",
                    run.machine.short_name()
                ),
                value_label: Unit::ns(crate::units::Per::Rpc),
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
    fn about(&self) -> About {
        About {
            fixture: Some("rpc"),
            quick: &["rpc", "--quick"],
            has_shown: true,
            evidence: Evidence::Switches,
            ..About::of("rpc")
        }
    }

    /// The parts, traced and corrected, are shown in the section under the table (as
    /// means, which add up; the medians with --explain) and as the stacked bars: not as rows
    /// or figures of their own.
    fn shown_alone(&self, m: &Measurement) -> bool {
        !(m.is(rpc::PART) || m.is(rpc::CORRECTED))
    }

    fn under_table(&self, run: &Run, verbose: bool) -> String {
        text(run, verbose)
    }

    fn section_figures(&self, runs: &[Run]) -> Vec<String> {
        figures(runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Additive, EventCost, ModeShares, Observer};

    fn est(value: f64, half: f64) -> Estimate {
        Estimate {
            value,
            ci95: [value - half, value + half],
        }
    }

    fn m(probe: &str, scenario: &str, part: Option<&str>, mean: f64) -> Measurement {
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
        x.checks.clear();
        // The median differs from the mean: the tables must show the mean.
        let v = x.value.as_mut().unwrap();
        v.median = mean * 0.5;
        v.ci95 = [mean * 0.45, mean * 0.55];
        x.additive = Some(Additive {
            mean: est(mean, mean * 0.02),
            modes: None,
            events: Default::default(),
        });
        x
    }

    fn observer(corrected_sum: f64) -> Observer {
        Observer {
            tracing_adds: Some(est(1.5, 0.1)),
            calibration: Some(Calibration {
                costs: vec![EventCost {
                    group: "sched".into(),
                    ns: est(680.0, 17.0),
                    per_rpc: 4.3,
                }],
                residual_ns: 207.0,
                dof: 122,
                together_ns: -1069.0,
                untraced_fit: est(8030.0, 200.0),
                corrected_sum: Some(est(corrected_sum, 300.0)),
            }),
            configs: Vec::new(),
        }
    }

    /// A local case: untraced 4 µs, traced 10 µs, six parts of 1.5 µs (two left out),
    /// corrected to 0.7 µs each.
    fn local_run() -> Run {
        let mut run = crate::report::ipc::tests::fixture();
        let mut traced = m("rpc.traced", "local", None, 10_000.0);
        traced.observer = Some(observer(4200.0));
        run.measurements = vec![m("rpc.total", "local", None, 8000.0), traced];
        run.measurements[0].value.as_mut().unwrap().median = 4000.0;
        for p in PARTS.iter().filter(|p| !p.contains("IPI")) {
            run.measurements
                .push(m("rpc.part", "local", Some(p), 1500.0));
            run.measurements
                .push(m("rpc.corrected", "local", Some(p), 700.0));
        }
        run.measurements
            .push(m("rpc.total", "remote-polling", None, 300.0));
        run
    }

    #[test]
    fn the_summary_shows_means_traced_and_corrected_and_the_per_event_costs() {
        let mut run = local_run();
        run.measurements[2].additive.as_mut().unwrap().modes = Some(ModeShares {
            low: 1100.0,
            low_share: 0.6,
            high: 4300.0,
            high_share: 0.4,
        });
        let t = text(&run, true);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        // Medians only: untraced, traced as the common table prints it, what tracing adds
        // between the two; the corrected sum against the untraced median under the parts.
        let local = t.lines().find(|l| l.starts_with("local")).unwrap();
        let traced = crate::report::table::headline(&run.measurements[1]);
        let traced_figure = traced.split(" ±").next().unwrap();
        for want in ["4.00 µs", traced_figure] {
            assert!(local.contains(want), "{want}: {t}");
        }
        assert!(
            !local.contains("4.20 µs"),
            "no mean in the medians' table: {t}"
        );
        assert!(
            t.contains("corrected vs untraced: local pipe 4.20 µs vs 4.00 µs (+5%)"),
            "{t}"
        );
        let send = t.lines().find(|l| l.starts_with("send")).unwrap();
        assert!(send.contains("1.50 µs* → 700 ns"), "{t}");
        // The IPI parts, left out of the only case (one CPU), are no row of dashes.
        assert!(
            !t.lines()
                .any(|l| l.starts_with("IPI") || l.starts_with("reply IPI")),
            "{t}"
        );
        // The means add up: 6 × 1.5 µs.
        let sum = t.lines().find(|l| l.starts_with("sum")).unwrap();
        assert!(sum.contains("9.00 µs → 4.20 µs"), "{t}");
        assert!(t.contains("680 ±17 ns") && t.contains("-1.07 µs"), "{t}");
        assert!(t.contains("* two modes"), "{t}");
        // The modes, named with their shares, in the detail.
        let d = detail(&run);
        assert!(
            d.contains("send: 1.10 µs in 60% of RPCs, 4.30 µs in 40%"),
            "{d}"
        );
        assert!(
            d.contains("750 [675, 825] ns"),
            "the median beside the mean: {d}"
        );
        assert!(
            d.contains("1.50 ±0.03 µs") && d.contains("700 ±14 ns"),
            "{d}"
        );
        assert!(d.lines().all(|l| l.chars().count() <= 80), "{d}");
        // Two bars (traced, corrected), the untraced time marked.
        let svg = figures(std::slice::from_ref(&run));
        assert_eq!(svg.len(), 1);
        assert!(svg[0].contains("local pipe traced") && svg[0].contains("local pipe corrected"));
        assert!(svg[0].contains("stroke-width=\"3\""), "the untraced marker");
        assert_eq!(
            crate::report::section_figures(std::slice::from_ref(&run), "rpc").len(),
            1
        );
        // The parts are rows of the section, not of the table above it.
        let table = crate::report::table::render(&run);
        assert!(
            !table.contains("rpc.part") && !table.contains("rpc.corrected"),
            "{table}"
        );
        assert!(
            table.contains("rpc.traced") && table.contains("rpc.total"),
            "{table}"
        );
    }

    #[test]
    fn an_invalid_corrected_breakdown_says_so_with_both_numbers() {
        let mut run = local_run();
        for x in run
            .measurements
            .iter_mut()
            .filter(|x| x.is(crate::probes::rpc::CORRECTED))
        {
            x.status = Status::Invalid;
            x.valid = false;
            x.checks.push(crate::probes::rpc::correct::sum_check(
                4200.0,
                Some(2000.0),
                None,
            ));
        }
        let t = text_within(&run, true, &crate::report::term::Term::plain(80));
        let sum = t.lines().find(|l| l.starts_with("sum")).unwrap();
        assert!(sum.contains("→ 4.20 µs"), "{t}");
        let head = t.lines().find(|l| l.starts_with("part ")).unwrap();
        assert!(head.ends_with("✗ local pipe"), "the column marked: {t}");
        assert!(
            !t.contains("corrected vs untraced:"),
            "an invalid breakdown: {t}"
        );
        let joined = t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(joined.contains("4.20 µs vs 2.00 µs (+110.0%)"), "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        let send = t.lines().find(|l| l.starts_with("send")).unwrap();
        assert!(
            send.ends_with("→ 700 ns"),
            "the rejected number under its column's mark: {t}"
        );
        let svg = figures(std::slice::from_ref(&run)).remove(0);
        assert!(
            svg.contains("not plotted: invalid: corrected parts"),
            "{svg}"
        );
    }

    #[test]
    fn many_traced_cases_wrap_into_tables_that_fit_80_columns() {
        let mut run = crate::report::ipc::tests::fixture();
        run.measurements.clear();
        for sc in ["local", "remote-exclusive", "remote-shared"] {
            for mech in ["pipe", "futex"] {
                let mut t = m("rpc.traced", sc, None, 50_000.0);
                t.observer = Some(observer(40_000.0));
                t.params.insert("mech".into(), mech.into());
                run.measurements.push(t);
                for p in PARTS {
                    for probe in ["rpc.part", "rpc.corrected"] {
                        let mut x = m(probe, sc, Some(p), 6250.0);
                        x.params.insert("mech".into(), mech.into());
                        run.measurements.push(x);
                    }
                }
            }
        }
        let t = text(&run, true);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert_eq!(t.matches("\npart ").count(), 2, "{t}");
        assert_eq!(t.matches("\nsum ").count(), 2, "{t}");
        assert_eq!(t.matches("\nfit residual").count(), 2, "{t}");
        // No untraced total: the corrected sum is not compared with anything.
        assert!(!t.contains("(+"), "{t}");
    }

    /// The untraced column prints rpc.total's figure as the common table does, by the
    /// units' one rule: "45 µs" beside "45 ±19 µs/RPC" (it printed "45.3 µs").
    #[test]
    fn the_untraced_figure_reads_the_same_in_both_tables() {
        let mut run = local_run();
        let total = &mut run.measurements[0];
        let v = total.value.as_mut().unwrap();
        v.median = 45_300.0;
        v.ci95 = [26_300.0, 64_300.0];
        total.settle_status();
        assert!(!total.is_unstable());
        let headline = crate::report::table::headline(total);
        assert!(headline.starts_with("45 ±19 µs"), "{headline}");
        let t = text(&run, false);
        let local = t.lines().find(|l| l.starts_with("local")).unwrap();
        assert!(local.contains(" 45 µs "), "{t}");
        assert!(!t.contains("45.3"), "{t}");
    }

    #[test]
    fn figures_are_never_more_precise_than_their_interval() {
        assert_eq!(fmt_est(&est(680.0, 17.0)), "680 ±17 ns");
        assert_eq!(fmt_est(&est(8094.0, 212.0)), "8.09 ±0.21 µs");
        assert_eq!(fmt_est(&est(2026.0, 69.0)), "2.03 ±0.07 µs");
        assert_eq!(fmt_est(&est(1230.0, 430.0)), "1.23 ±0.43 µs");
        assert_eq!(fmt_est(&est(176.0, 1073.0)), "unstable (±1.1 µs)");
        assert_eq!(fmt_within(&est(7451.85, 96.0)), "7.45 µs");
        assert_eq!(fmt_within(&est(7451.85, 1500.0)), "7.5 µs");
        assert_eq!(fmt_est(&est(7451.85, 1500.0)), "7.5 ±1.5 µs");
        // An interval that holds 0: the part may be nothing, whatever the sign of its mean;
        // never "-2 µs" nor "-0".
        assert_eq!(fmt_within(&est(-1571.0, 3300.0)), "≈0 ±3.3 µs");
        assert_eq!(fmt_within(&est(-300.0, 3300.0)), "≈0 ±3.3 µs");
        assert_eq!(fmt_within(&est(250.0, 400.0)), "≈0 ±400 ns");
        // A part that never happened is exactly 0.
        assert_eq!(fmt_within(&est(0.0, 0.0)), "0 ns");
        assert_eq!(fmt_rel(&est(1.968, 0.359)), "+197% ±36");
        // Traced 19.1 µs over an untraced 18.7 µs whose interval reaches below 0 (three
        // bimodal rounds): the ratio has no bound, so no "+2% ±120".
        let u = Estimate {
            value: 18703.0,
            ci95: [-4514.0, 39514.0],
        };
        let adds = crate::probes::rpc::correct::tracing_adds(&est(19085.0, 50.0), &u).unwrap();
        assert_eq!(fmt_rel(&adds), "unstable (±120%)");
    }
}
