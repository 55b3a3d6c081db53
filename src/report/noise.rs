//! OS noise (`noise.lost`): under the terminal table, each CPU's gaps (their rate and
//! distribution, the threshold they were cut at), their causes by time taken, the longest
//! gaps and a histogram of their lengths; in the HTML report and `--svg-dir`, each CPU's gap
//! histogram on log axes and the causes as stacked bars; the causes as a CSV beside them.

use super::family::{About, Ask, Family, Shown};
use super::figures::Size;
use super::plot::{Histogram, LogBin, StackedBars, StackedRow, Values};
use crate::model::noise::{Attribution, Cause, CauseRow, NoiseCpu, ThresholdFrom, Unwritten};
use crate::model::{Num, Remark, Run};
use crate::units::Unit;
use crate::units::{fmt_num, fmt_thousands, fmt_time};

pub use crate::probes::noise::PROBE;

/// Causes shown per CPU by default (the timer tick and "outside the kernel" are shown too).
const TOP: usize = 8;
/// The segments of the stacked bars: the causes that take most, the rest as "other".
const SEGMENTS: usize = 6;

/// Every CPU's window in the run, in CPU order.
pub fn cpus(run: &Run) -> Vec<&NoiseCpu> {
    let mut v: Vec<&NoiseCpu> = run
        .measurements
        .iter()
        .filter(|m| m.is(PROBE))
        .filter_map(|m| m.noise.as_ref())
        .collect();
    v.sort_by_key(|n| n.cpu);
    v
}

/// The measurement of a CPU's window (None where the run has none).
fn measurement(run: &Run, cpu: usize) -> Option<&crate::model::Measurement> {
    run.measurements
        .iter()
        .filter(|m| m.is(PROBE))
        .find(|m| m.noise.as_ref().is_some_and(|n| n.cpu == cpu))
}

/// A CPU's figure, as every view says it: the median of its 100 ms windows' lost shares
/// and the 95% interval of that median, in percent (the measurement's value; its raw
/// samples' where the measurement is invalid). None where the run has no measurement of it.
pub fn figure(run: &Run, cpu: usize) -> Option<[f64; 3]> {
    measurement(run, cpu).map(|m| {
        let s = m.value.as_ref().unwrap_or(&m.raw);
        [s.median, s.ci95[0], s.ci95[1]]
    })
}

/// Whether a CPU's figure is noise: its measurement says unstable, or its interval reaches
/// beyond ±50% of it. Every view then says "unstable" with its spread, never the median.
pub fn is_unstable(run: &Run, cpu: usize) -> bool {
    measurement(run, cpu).map(|m| m.status) == Some(crate::model::Status::Unstable)
        || figure(run, cpu)
            .is_some_and(|[v, lo, hi]| crate::units::interval::is_unstable(v, lo, hi))
}

/// Whether a CPU's measurement failed its checks: every view then says INVALID, as the
/// table above does, never its figure.
pub fn is_invalid(run: &Run, cpu: usize) -> bool {
    measurement(run, cpu).is_some_and(|m| !m.valid || m.status == crate::model::Status::Invalid)
}

/// A CPU's figure in a column whose intervals are in the table above it: "2.4%" (no more
/// precise than its interval), "unstable" or "INVALID".
fn lost_cell(run: &Run, n: &NoiseCpu) -> String {
    match figure(run, n.cpu) {
        None => pct(n.lost_ns, n.wall_ns),
        Some(_) if is_invalid(run, n.cpu) => "INVALID".into(),
        Some(_) if is_unstable(run, n.cpu) => "unstable".into(),
        Some([v, lo, hi]) => format!("{}%", crate::units::interval::fmt_estimate(v, lo, hi).0),
    }
}

/// What the figure is, in the words every view uses.
pub const FIGURE_IS: &str = "median of the 100 ms windows' lost shares, 95% interval";

/// A cause as people read it ("timer tick", "irq 36 virtio1-req.0", "task rustc"); names
/// from the run made inert for a terminal.
pub fn cause_label(c: &Cause) -> String {
    let inert = |s: &str| crate::escape::terminal(s).into_owned();
    match c {
        Cause::Timer => "timer tick".into(),
        Cause::Irq { irq, name } if name.is_empty() => format!("irq {irq}"),
        Cause::Irq { irq, name } => format!("irq {irq} {}", inert(name)),
        Cause::Softirq { vec } => format!("softirq {}", Cause::softirq_name(*vec)),
        Cause::Reschedule => "IPI reschedule".into(),
        Cause::CallFunction => "IPI call function".into(),
        Cause::IrqWork => "irq work".into(),
        Cause::Vector { name } => inert(name),
        Cause::Nmi => "NMI".into(),
        Cause::Task { comm } => format!("task {}", inert(comm)),
        Cause::Outside => "outside the kernel".into(),
    }
}

/// A share of `wall` in percent, three digits.
fn pct(ns: u64, wall: u64) -> String {
    format!("{}%", fmt_num(ns as f64 * 100.0 / wall.max(1) as f64))
}

/// Why a CPU's gaps have no causes, in one line (None when they were traced).
fn untraced(a: &Attribution) -> Option<String> {
    match a {
        Attribution::Traced(_) => None,
        Attribution::NotPermitted { paranoid } => Some(format!(
            "not traced: tracing every task on a CPU needs root (or CAP_PERFMON with \
             kernel.perf_event_paranoid ≤ -1; it is {paranoid}); gaps and shares are measured, \
             their causes are not (`sudo oscost noise`)"
        )),
        Attribution::NotAsked => Some("not traced (--no-trace)".into()),
        Attribution::Unavailable { reason } => Some(format!(
            "not traced: {}; gaps and shares are measured, their causes are not",
            crate::escape::terminal(reason)
        )),
    }
}

/// The per-CPU table: lost share, gaps per second, distribution, threshold.
fn overview(run: &Run, cs: &[&NoiseCpu]) -> String {
    let mut s = format!(
        "{:<4} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "CPU", "lost", "gaps/s", "median", "p99", "p99.9", "max", "threshold"
    );
    for n in cs {
        let d = &n.distribution;
        s.push_str(&format!(
            "{:<4} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
            n.cpu,
            lost_cell(run, n),
            fmt_num(n.gaps_per_s()),
            fmt_time(d.median_ns),
            fmt_time(d.p99_ns),
            fmt_time(d.p999_ns),
            fmt_time(d.max_ns),
            fmt_time(n.threshold_ns as f64),
        ));
    }
    let whole: Vec<String> = cs.iter().map(|n| pct(n.lost_ns, n.wall_ns)).collect();
    s.push_str(&paragraph(&format!(
        "lost: each CPU's figure in the table above, the {FIGURE_IS}; the whole window's \
         gaps, which the causes split: {}",
        whole.join(", ")
    )));
    let steps: Vec<String> = cs.iter().map(|n| fmt_time(n.step_ns)).collect();
    let given = cs.iter().any(|n| n.threshold_from == ThresholdFrom::Given);
    s.push_str(&if given {
        format!(
            "threshold given (--threshold); the loop's median step: {}\n",
            steps.join(", ")
        )
    } else {
        paragraph(&format!(
            "threshold: {}× the loop's median step on each CPU ({}), calibrated before the \
             window",
            crate::probes::noise::reader::THRESHOLD_STEPS,
            steps.join(", ")
        ))
    });
    s
}

/// The rows shown by default: the first `TOP`, and the timer tick and "outside the kernel"
/// wherever they are.
fn shown_rows(rows: &[CauseRow], verbose: bool) -> Vec<&CauseRow> {
    rows.iter()
        .enumerate()
        .filter(|(i, r)| verbose || *i < TOP || matches!(r.cause, Cause::Timer | Cause::Outside))
        .map(|(_, r)| r)
        .collect()
}

/// One CPU's causes by time taken.
fn causes(n: &NoiseCpu, verbose: bool) -> String {
    let t = match &n.attribution {
        Attribution::Traced(t) => t,
        a => {
            return format!(
                "CPU {} causes: {}\n",
                n.cpu,
                untraced(a).unwrap_or_default()
            )
        }
    };
    let mut s = format!(
        "CPU {} causes by time taken ({} of the noise time attributed):\n",
        n.cpu,
        pct(t.covered_ns, n.lost_ns)
    );
    s.push_str(&format!(
        "  {:<24} {:>8} {:>8} {:>9} {:>8}\n",
        "cause", "count", "/s", "median", "of CPU"
    ));
    let secs = n.wall_ns.max(1) as f64 / 1e9;
    let rows = shown_rows(&t.causes, verbose);
    for r in &rows {
        let mut line = format!(
            "  {:<24} {:>8} {:>8} {:>9} {:>8}",
            super::term::cut(&cause_label(&r.cause), 24),
            fmt_thousands(r.count),
            fmt_num(r.count as f64 / secs),
            fmt_time(r.median_ns),
            pct(r.total_ns, n.wall_ns)
        );
        if r.cause == Cause::Outside {
            if let Some(steal) = n.steal_ns {
                line.push_str(&format!("  steal {}", fmt_time(steal as f64)));
            }
        }
        s.push_str(&line);
        s.push('\n');
    }
    if rows.len() < t.causes.len() {
        s.push_str(&format!(
            "  … {} (--verbose)\n",
            match t.causes.len() - rows.len() {
                1 => "1 more cause".to_string(),
                k => format!("{k} more causes"),
            }
        ));
    }
    for l in remark_lines(n, verbose) {
        s.push_str(&(super::term::wrap(&format!("! {l}"), 78, "  ", "    ") + "\n"));
    }
    s
}

/// What limits a CPU's causes, a remark a line: coverage under 95%, records the kernel
/// dropped, and (with --verbose) interrupts that made no gap.
fn remark_lines(n: &NoiseCpu, verbose: bool) -> Vec<String> {
    let Attribution::Traced(t) = &n.attribution else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(c) = n.coverage().filter(|c| *c < 0.95) {
        out.push(format!(
            "the causes cover {}% of the noise time: the rest is in gaps that hold no kernel \
             event (outside the kernel: the hypervisor, an SMI, the vCPU descheduled)",
            fmt_num(c * 100.0)
        ));
    }
    // Rows, and events, that share a reason are one remark: the reason said once.
    let partial = super::grouped(t.counts.iter().filter(|c| !c.whole()), |c| {
        if c.traced > c.proc_delta {
            "an edge that came while its handler ran is counted once, handled twice"
        } else if c.agrees() {
            "the kernel counted the rest and wrote no record of them"
        } else {
            "the recording missed some"
        }
    });
    for (why, rows) in partial {
        let items: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(i, c)| {
                format!(
                    "{} traced {} against {}{}",
                    count_row_label(&c.row),
                    fmt_thousands(c.traced),
                    if i == 0 { "the /proc delta " } else { "" },
                    fmt_thousands(c.proc_delta),
                )
            })
            .collect();
        out.push(format!("causes partial: {} (±2%): {why}", items.join(", ")));
    }
    let unwritten = super::grouped(entry_exit_pairs(&t.unwritten), |(u, _)| {
        match (u.ring_full, u.silent()) {
            (0, _) => "no lost record: they came while a task whose tracepoints do not fire \
                       ran"
            .to_string(),
            (full, 0) => format!("{} for want of room in the ring", fmt_thousands(full)),
            (full, silent) => format!(
                "{} for want of room in the ring, {} with no lost record",
                fmt_thousands(full),
                fmt_thousands(silent)
            ),
        }
    });
    for (why, items) in unwritten {
        let event = |u: &Unwritten| crate::escape::terminal(&u.event).into_owned();
        out.push(match items[..] {
            [(u, true)] => format!(
                "the kernel counted {} {} and _exit events each and wrote {} of each: {why}",
                fmt_thousands(u.counted),
                event(u),
                fmt_thousands(u.recorded)
            ),
            [(u, false)] => format!(
                "the kernel counted {} {} events and wrote {}: {why}",
                fmt_thousands(u.counted),
                event(u),
                fmt_thousands(u.recorded)
            ),
            _ => format!(
                "the kernel counted these events and wrote fewer: {}: {why}",
                items
                    .iter()
                    .map(|(u, paired)| {
                        let each = if *paired { " each" } else { "" };
                        format!(
                            "{}{} {}{each}, wrote {}{}",
                            event(u),
                            if *paired { " and _exit" } else { "" },
                            fmt_thousands(u.counted),
                            fmt_thousands(u.recorded),
                            if *paired { " of each" } else { "" },
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        });
    }
    if t.lost_records > 0 {
        out.push(format!(
            "the kernel dropped {} trace records (a full ring): counts and causes are short",
            fmt_thousands(t.lost_records)
        ));
    }
    if verbose && t.outside_gaps > 0 {
        out.push(format!(
            "{} interrupt entries in the window made no gap (shorter than the threshold)",
            fmt_thousands(t.outside_gaps)
        ));
    }
    out
}

/// The tracepoints counted unwritten, each said once: an `_entry` whose `_exit` has the same
/// counts stands for both (paired true) and the `_exit` is left out; any other stands alone.
fn entry_exit_pairs(us: &[Unwritten]) -> Vec<(&Unwritten, bool)> {
    let exit_of = |u: &Unwritten| {
        u.event
            .strip_suffix("_entry")
            .map(|stem| format!("{stem}_exit"))
    };
    let same = |a: &Unwritten, b: &Unwritten| {
        (a.counted, a.recorded, a.ring_full) == (b.counted, b.recorded, b.ring_full)
    };
    let pairs = |u: &Unwritten| {
        exit_of(u).is_some_and(|exit| us.iter().any(|e| e.event == exit && same(u, e)))
    };
    us.iter()
        .filter(|u| {
            // An exit said by its entry's line.
            !us.iter()
                .any(|e| exit_of(e).is_some_and(|exit| exit == u.event) && same(e, u))
        })
        .map(|u| (u, pairs(u)))
        .collect()
}

/// A /proc row as people read it: "IRQ 42" for a numbered row, the row's key otherwise.
fn count_row_label(row: &str) -> String {
    if row.chars().all(|c| c.is_ascii_digit()) {
        format!("IRQ {row}")
    } else {
        crate::escape::terminal(row).into_owned()
    }
}

/// One CPU's longest gaps: when, how long, and their first causes.
fn longest(n: &NoiseCpu) -> String {
    if n.longest.is_empty() {
        return String::new();
    }
    let mut s = format!("CPU {} longest gaps:\n", n.cpu);
    for g in &n.longest {
        let mut line = format!(
            "  at +{:<9} {:>9} ",
            format!("{:.3} s", g.start_ns as f64 / 1e9),
            fmt_time(g.len_ns as f64)
        );
        // As many causes as fit, largest share first; "…" where more were left out.
        for (i, c) in g.causes.iter().enumerate() {
            let word = format!("{}{}", if i == 0 { " " } else { ", " }, cause_label(c));
            let more = if i + 1 < g.causes.len() { 3 } else { 0 };
            if line.chars().count() + word.chars().count() + more > 78 {
                line.push_str(if i == 0 { " …" } else { ", …" });
                break;
            }
            line.push_str(&word);
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// One CPU's gap lengths, one bar per octave on a log scale of counts.
fn histogram(n: &NoiseCpu) -> String {
    let octaves: Vec<(u64, u64)> = n
        .histogram
        .chunks(2)
        .map(|c| (c[0].lo_ns, c.iter().map(|b| b.count).sum()))
        .collect();
    let top = octaves.iter().map(|o| o.1).max().unwrap_or(0);
    if top == 0 {
        return String::new();
    }
    let mut s = format!(
        "CPU {} gap lengths (per octave, bars on a log scale of counts):\n",
        n.cpu
    );
    for (lo, count) in octaves {
        let w = ((count as f64 + 1.0).ln() / (top as f64 + 1.0).ln() * 40.0).round() as usize;
        s.push_str(&format!(
            "  {:>9}  {:<40} {:>9}\n",
            format!("≥ {}", fmt_time(lo as f64)),
            "█".repeat(if count > 0 { w.max(1) } else { 0 }),
            fmt_thousands(count)
        ));
    }
    s
}

/// `text` as a paragraph of the section: within 78 columns, its lines after the first
/// indented.
fn paragraph(text: &str) -> String {
    super::term::wrap(text, 78, "", "  ") + "\n"
}

/// The section under the terminal table.
pub fn text(run: &Run, verbose: bool) -> String {
    let cs = cpus(run);
    let Some(first) = cs.first() else {
        return String::new();
    };
    let mut s = String::from("\n");
    s.push_str(&paragraph(&format!(
        "OS noise: a busy reader on {} for {}; a gap is a clock step over the threshold",
        if cs.len() == 1 {
            format!("CPU {}", first.cpu)
        } else {
            format!("each of {} CPUs", cs.len())
        },
        fmt_time(first.wall_ns as f64)
    )));
    s.push_str(&overview(run, &cs));
    let missing: Vec<String> = cs.iter().filter_map(|n| untraced(&n.attribution)).collect();
    if missing.len() == cs.len() && missing.windows(2).all(|w| w[0] == w[1]) {
        s.push_str(&paragraph(&format!("causes: {}", missing[0])));
    }
    for n in &cs {
        s.push('\n');
        if missing.len() != cs.len() {
            s.push_str(&causes(n, verbose));
        }
        s.push_str(&longest(n));
        if verbose {
            s.push_str(&histogram(n));
        }
    }
    s
}

/// Each CPU's gap histogram on log axes.
fn histograms(run: &Run, subtitle: &str) -> Vec<(String, String)> {
    cpus(run)
        .into_iter()
        .filter(|n| !n.histogram.is_empty())
        .map(|n| {
            let bins = n
                .histogram
                .iter()
                .map(|b| LogBin {
                    lo: b.lo_ns as f64,
                    hi: b.lo_ns as f64 * std::f64::consts::SQRT_2,
                    count: b.count,
                })
                .collect();
            let svg = Histogram {
                title: format!("OS noise gaps on CPU {}", n.cpu),
                subtitle: subtitle.to_string(),
                x_label: "gap length (ns)".into(),
                values: Values::LogBins(bins),
            }
            .to_svg();
            (format!("noise-gaps-cpu{}", n.cpu), svg)
        })
        .collect()
}

/// The causes of every CPU as stacked bars, in % of the CPU's time: the causes that take the
/// most over all CPUs, the rest as "other".
fn stacked(run: &Run, subtitle: &str) -> Option<(String, String)> {
    let cs = cpus(run);
    let traced: Vec<(&NoiseCpu, &Vec<CauseRow>)> = cs
        .iter()
        .filter_map(|n| match &n.attribution {
            Attribution::Traced(t) => Some((*n, &t.causes)),
            _ => None,
        })
        .collect();
    if traced.is_empty() {
        return None;
    }
    let mut totals: Vec<(Cause, u64)> = Vec::new();
    for (_, rows) in &traced {
        for r in rows.iter() {
            match totals.iter_mut().find(|t| t.0 == r.cause) {
                Some(t) => t.1 += r.total_ns,
                None => totals.push((r.cause.clone(), r.total_ns)),
            }
        }
    }
    totals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let named: Vec<Cause> = totals.iter().take(SEGMENTS).map(|t| t.0.clone()).collect();
    let mut segments: Vec<String> = named.iter().map(cause_label).collect();
    let other = totals.len() > SEGMENTS;
    if other {
        segments.push("other".into());
    }
    let rows = traced
        .iter()
        .map(|(n, rows)| {
            let share = |ns: u64| ns as f64 * 100.0 / n.wall_ns.max(1) as f64;
            let mut seg: Vec<f64> = named
                .iter()
                .map(|c| {
                    share(
                        rows.iter()
                            .find(|r| &r.cause == c)
                            .map_or(0, |r| r.total_ns),
                    )
                })
                .collect();
            if other {
                seg.push(share(
                    rows.iter()
                        .filter(|r| !named.contains(&r.cause))
                        .map(|r| r.total_ns)
                        .sum(),
                ));
            }
            // The bar is the CPU's figure, split by the causes' shares of its gap time.
            let whole = n.lost_share() * 100.0;
            let total = figure(run, n.cpu).unwrap_or([whole, whole, whole]);
            let scale = if whole > 0.0 { total[0] / whole } else { 0.0 };
            for x in &mut seg {
                *x *= scale;
            }
            // Neither an invalid figure nor noise is drawn as a value: the row says which,
            // noise with its spread.
            let [v, lo, hi] = total;
            let not_a_value = if is_invalid(run, n.cpu) {
                Some("INVALID".to_string())
            } else if is_unstable(run, n.cpu) {
                Some(crate::units::interval::fmt_unstable(
                    v,
                    lo,
                    hi,
                    &Unit::Percent,
                ))
            } else {
                None
            };
            StackedRow {
                label: format!("CPU {}", n.cpu),
                segments: if not_a_value.is_some() {
                    Vec::new()
                } else {
                    seg
                },
                total,
                note: not_a_value.unwrap_or_default(),
                marker: None,
            }
        })
        .collect();
    let svg = StackedBars {
        title: "OS noise: lost share (median of 100 ms windows, 95% interval) by cause".into(),
        subtitle: subtitle.to_string(),
        value_label: Unit::Other("% of the CPU's time".into()),
        segments,
        rows,
    }
    .to_svg();
    Some(("noise-causes".into(), svg))
}

/// Every figure of the run: the causes, then each CPU's gaps.
pub fn svgs(run: &Run, subtitle: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = stacked(run, subtitle).into_iter().collect();
    out.extend(histograms(run, subtitle));
    out
}

/// The causes of every CPU as CSV: one row per CPU and cause.
pub fn csv(run: &Run) -> String {
    let mut s = String::from("cpu,cause,count,per_s,median_ns,total_ns,share_of_cpu\n");
    for n in cpus(run) {
        let Attribution::Traced(t) = &n.attribution else {
            continue;
        };
        let secs = n.wall_ns.max(1) as f64 / 1e9;
        for r in &t.causes {
            let label = crate::escape::csv(&cause_label(&r.cause)).replace('"', "\"\"");
            s.push_str(&format!(
                "{},\"{label}\",{},{},{},{},{}\n",
                n.cpu,
                r.count,
                r.count as f64 / secs,
                r.median_ns,
                r.total_ns,
                r.total_ns as f64 / n.wall_ns.max(1) as f64
            ));
        }
    }
    s
}

/// OS noise: its section under the table, its figures and its CSV.
pub struct Noise;

impl Family for Noise {
    fn about(&self) -> About {
        About {
            fixture: Some("noise"),
            quick: &["noise", "--duration", "100ms"],
            has_shown: true,
            draws_own_figures: true,
            ..About::of("noise")
        }
    }

    fn words(&self, r: &Remark) -> Option<String> {
        if !r.is_family(crate::probes::noise::PARTIAL) {
            return None;
        }
        // Each part by its count, the parts at zero left out. Runs recorded before the
        // counters were read carry the first two; runs recorded before the pairs were told
        // apart carry one count of what was not written, entries and exits summed.
        let counted = |v: &Num, noun: &str| {
            let noun = if v.lo == 1.0 && v.hi == 1.0 {
                noun.to_string()
            } else {
                crate::units::plural_noun(noun)
            };
            format!(
                "{} {noun}",
                super::remarks::span(*v, &|x| format!("{x:.0}"))
            )
        };
        let some = |v: &&Num| !(v.lo == 0.0 && v.hi == 0.0);
        const UNWRITTEN: &str = "the kernel counted and wrote no record of";
        let unwritten = match &r.values[..] {
            [_, _, summed] => some(&summed).then(|| {
                format!(
                    "{} {UNWRITTEN} (an entry and its exit count two)",
                    counted(summed, "trace event")
                )
            }),
            [_, _, pairs, events, ..] => {
                let told: Vec<String> = [(pairs, "entry/exit pair"), (events, "event")]
                    .into_iter()
                    .filter(|(v, _)| some(v))
                    .map(|(v, noun)| counted(v, noun))
                    .collect();
                (!told.is_empty()).then(|| format!("{} {UNWRITTEN}", told.join(" and ")))
            }
            _ => None,
        };
        let mut parts: Vec<String> = [("/proc row", " not all recorded"), ("record", " dropped")]
            .iter()
            .zip(&r.values)
            .filter(|(_, v)| some(v))
            .map(|((noun, what), v)| format!("{}{what}", counted(v, noun)))
            .collect();
        parts.extend(unwritten);
        let parts = if parts.is_empty() {
            String::new()
        } else {
            format!(": {}", parts.join(", "))
        };
        Some(format!(
            "causes partial{parts}; the lost share stands (the reader measures it without \
             tracing)"
        ))
    }

    fn under_table(&self, run: &Run, verbose: bool) -> String {
        text(run, verbose)
    }

    fn own_figures(&self, run: &Run, subtitle: &str) -> Vec<(Size, String)> {
        svgs(run, subtitle)
            .into_iter()
            .enumerate()
            .map(|(i, (_, s))| (if i == 0 { Size::Wide } else { Size::Small }, s))
            .collect()
    }

    fn shown(&self, run: &Run, ask: &Ask) -> crate::error::Result<Shown> {
        let mut shown = Shown::default();
        if ask.figures {
            let subtitle = run.machine.short_name();
            shown.figures = svgs(run, &subtitle);
            shown.tables = vec![("noise-causes.csv".into(), csv(run))];
        }
        Ok(shown)
    }
}

#[cfg(test)]
mod tests;
