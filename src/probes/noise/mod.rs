//! `noise.lost`: how much of a CPU the operating system and the machine under it take from a
//! program that never gives it up. One busy reader per CPU reads the clock in a tight loop
//! ([`reader`]); every step longer than the threshold is a gap. Per CPU: the share of the
//! window lost, gaps per second, their distribution and the longest of them; where
//! tracepoints are readable, each gap split among its causes ([`attribute`]), and the counts
//! of interrupts held against /proc/interrupts and /proc/softirqs.
//!
//! The figure is the lost share of each 100 ms of the window (its median and interval); the
//! whole window's share, the gaps and their causes are in the measurement's `noise` field.

pub mod attribute;
pub mod reader;
pub mod summary;
pub mod window;

use crate::engine::measure::{from_samples, Spec};
use crate::error::Result;
use crate::evidence::trace::ring::Counted;
use crate::evidence::trace::{Decoder, Event, PERF_RECORD_LOST, PERF_RECORD_SAMPLE};
use crate::model::noise::Unwritten;
use crate::model::noise::{Attribution, NoiseCpu, ThresholdFrom, Traced};
use crate::model::{Check, Evidence, FamilyRemark, Measurement, Placement, Remark};
use crate::units::Unit;
use attribute::{count_checks, entries_between, split_gap, step_of, Tally, Timed};
use std::collections::BTreeMap;
use window::{Asked, Tracing, Window};

pub const PROBE: crate::model::ProbeId = crate::model::ProbeId("noise.lost");

/// The longest gaps kept per CPU.
const LONGEST: usize = 5;

/// What the reader's thread clock says, as a check: the gaps must hold at least the time the
/// reader was off its CPU (wall time minus its CPU time), within 2% and 20 µs (the clock's
/// reads sit just outside the window). Interrupt time counts as the reader's own CPU time on
/// kernels without CONFIG_IRQ_TIME_ACCOUNTING, so the gaps may hold more, never less.
pub fn clock_check(n: &NoiseCpu) -> Check {
    let missed = n.clock_lost_ns();
    let slack = (missed as f64 * 0.02).max(20_000.0);
    Check::new(
        crate::model::CheckKind::NoiseClock,
        crate::model::Bound::AtLeast(missed as f64),
        crate::model::Reading::values(&[
            n.cpu as f64,
            n.lost_ns as f64,
            n.wall_ns as f64,
            n.thread_cpu_ns as f64,
        ]),
        n.lost_ns as f64 + slack >= missed as f64,
    )
}

/// A CPU's causes are partial (values: the /proc rows not all recorded, the records the
/// kernel said it dropped, and of what it counted and wrote no record of, the entry/exit
/// pairs and the other events, [`UnwrittenTold`](crate::model::noise::UnwrittenTold); runs
/// recorded before the pairs were told apart hold one count there, entries and exits
/// summed). The lost share stands: the busy reader measures it without tracing, so a
/// shortfall of the recording limits the attribution only.
pub const PARTIAL: FamilyRemark = FamilyRemark("noise.partial");

/// The count checks: each /proc row against the entries traced of its kind over the /proc
/// window, with the entries its tracepoint's own counter holds and the kernel wrote no sample
/// of ([`Unwritten`]). On this kernel a /proc row and a tracefs trace of the same tracepoint
/// on the same CPU agree to the event, so a row the trace and the counter cannot reach is
/// entries the recording lost itself, or counted on the wrong CPU or in the wrong window:
/// the check fails and the measurement is invalid. Entries counted and not written make the
/// causes partial ([`PARTIAL`]) without failing it.
pub fn count_check_list(n: &NoiseCpu) -> Vec<Check> {
    let Attribution::Traced(t) = &n.attribution else {
        return Vec::new();
    };
    t.counts
        .iter()
        .map(|c| Check {
            subject: c.row.clone(),
            ..Check::new(
                crate::model::CheckKind::NoiseCount,
                crate::model::Bound::Near {
                    value: c.proc_delta as f64,
                    tol: 0.02,
                },
                crate::model::Reading::values(&[n.cpu as f64, c.traced as f64, c.unwritten as f64]),
                c.agrees(),
            )
        })
        .collect()
}

/// The reader stayed on its CPU.
fn placement_check(r: &reader::ReaderOut) -> Check {
    Check::new(
        crate::model::CheckKind::NoiseReaderPlaced,
        crate::model::Bound::OnCpus(vec![r.cpu]),
        crate::model::Reading::Seen {
            start: r.start_cpu,
            end: r.end_cpu,
        },
        r.start_cpu == Some(r.cpu) && r.end_cpu == Some(r.cpu),
    )
}

/// What a window's records hold, by CPU.
#[derive(Debug, Default)]
struct ByCpu {
    /// Every decoded event with its step, in time order.
    steps: BTreeMap<u32, Vec<Timed>>,
    /// The records the kernel said it dropped (PERF_RECORD_LOST).
    lost: BTreeMap<u32, u64>,
    /// The samples each tracepoint wrote.
    written: BTreeMap<(u32, String), u64>,
}

/// Sort a window's records by CPU.
fn by_cpu(records: &[crate::evidence::trace::RawRecord], d: &Decoder) -> ByCpu {
    let mut out = ByCpu::default();
    for r in records {
        match r.ty {
            PERF_RECORD_SAMPLE => {
                let Some(e): Option<Event> = d.decode(&r.body) else {
                    continue;
                };
                if let Some(name) = d.event_of(&r.body) {
                    *out.written.entry((e.cpu, name.to_string())).or_default() += 1;
                }
                if let Some(step) = step_of(&e, d.next_comm(&r.body)) {
                    out.steps
                        .entry(e.cpu)
                        .or_default()
                        .push(Timed { time: e.time, step });
                }
            }
            PERF_RECORD_LOST => {
                // u64 id, u64 lost, then the sample id: u32 pid, tid; u64 time; u32 cpu.
                let at = |o: usize| r.body.get(o..o + 8).map(|b| b.try_into().unwrap());
                if let (Some(n), Some(c)) = (at(8), r.body.get(32..36)) {
                    let cpu = u32::from_le_bytes(c.try_into().unwrap());
                    *out.lost.entry(cpu).or_default() += u64::from_le_bytes(n);
                }
            }
            _ => {}
        }
    }
    for v in out.steps.values_mut() {
        v.sort_by_key(|t| t.time);
    }
    out
}

/// The tracepoints of `cpu` that counted more entries than they wrote samples.
fn unwritten_on(
    cpu: usize,
    counted: &[Counted],
    written: &BTreeMap<(u32, String), u64>,
) -> Vec<Unwritten> {
    counted
        .iter()
        .filter(|c| c.cpu == cpu)
        .map(|c| Unwritten {
            event: c.event.clone(),
            counted: c.count,
            recorded: written
                .get(&(cpu as u32, c.event.clone()))
                .copied()
                .unwrap_or(0),
            ring_full: c.ring_full.unwrap_or(0),
        })
        .filter(|u| u.missing() > 0)
        .collect()
}

/// The tracepoints whose entries a /proc row counts.
fn row_events(soft: bool, row: &str) -> &'static [&'static str] {
    if soft {
        return &["irq:softirq_entry"];
    }
    match row {
        "LOC" => &["irq_vectors:local_timer_entry"],
        "RES" => &["irq_vectors:reschedule_entry"],
        "CAL" => &[
            "irq_vectors:call_function_entry",
            "irq_vectors:call_function_single_entry",
        ],
        "IWI" => &["irq_vectors:irq_work_entry"],
        "PLT" => &["irq_vectors:x86_platform_ipi_entry"],
        "TRM" => &["irq_vectors:thermal_apic_entry"],
        "SPU" => &["irq_vectors:spurious_apic_entry"],
        "NMI" => &["nmi:nmi_handler"],
        r if r.chars().all(|c| c.is_ascii_digit()) => &["irq:irq_handler_entry"],
        _ => &[],
    }
}

/// The /proc rows the tracer could count on this kernel (its tracepoint is recorded).
fn countable_rows(d: &Decoder, w: &Window) -> Vec<(bool, String)> {
    use crate::evidence::trace::Vector;
    let has = |n: &str| d.formats.iter().any(|f| f.name == n);
    let mut rows = Vec::new();
    for v in Vector::ALL {
        if has(&format!("irq_vectors:{}_entry", v.stem())) {
            if let Some(r) = attribute::proc_row(attribute::Source::Vector(v)) {
                rows.push(r);
            }
        }
    }
    if has("irq:irq_handler_entry") {
        rows.extend(
            w.before
                .interrupts
                .rows
                .iter()
                .filter(|r| r.key.chars().all(|c| c.is_ascii_digit()))
                .map(|r| (false, r.key.clone())),
        );
    }
    if has("irq:softirq_entry") {
        rows.extend(w.before.softirqs.rows.iter().map(|r| (true, r.key.clone())));
    }
    if has("nmi:nmi_handler") {
        rows.push((false, "NMI".into()));
    }
    rows
}

/// One CPU's gaps split by cause.
fn traced(
    r: &reader::ReaderOut,
    steps: &[Timed],
    w: &Window,
    d: &Decoder,
    unwritten: Vec<Unwritten>,
) -> (Traced, Vec<attribute::Parts>) {
    let irq_name = |irq: i32| w.before.interrupts.irq_name(irq).map(str::to_string);
    let mut tally = Tally::default();
    let mut per_gap = Vec::with_capacity(r.gaps.len());
    let (mut covered, mut off_cpu) = (0u64, 0u64);
    let mut in_gaps = 0u64;
    for &(start, len) in &r.gaps {
        let lo = steps.partition_point(|t| t.time < start);
        let hi = steps.partition_point(|t| t.time <= start + len);
        let inside = &steps[lo..hi];
        in_gaps += entries_between(inside, start, start + len)
            .values()
            .sum::<u64>();
        let parts = split_gap((start, len), inside, r.tid, &irq_name);
        for (c, ns) in &parts {
            match c {
                crate::model::noise::Cause::Outside => {}
                crate::model::noise::Cause::Task { .. } => {
                    covered += ns;
                    off_cpu += ns;
                }
                _ => covered += ns,
            }
        }
        tally.add(&parts);
        per_gap.push(parts);
    }
    let in_window: u64 = entries_between(steps, r.t0, r.t1).values().sum();
    // Each /proc file against the events traced between its two reads.
    let hard = entries_between(steps, w.before.time_ns, w.after.time_ns);
    let soft = entries_between(steps, w.before.softirqs_ns, w.after.softirqs_ns);
    let traced_counts = hard
        .into_iter()
        .filter(|(k, _)| !k.0)
        .chain(soft.into_iter().filter(|(k, _)| k.0))
        .collect();
    let proc_delta = |soft: bool, key: &str| {
        let (b, a) = if soft {
            (&w.before.softirqs, &w.after.softirqs)
        } else {
            (&w.before.interrupts, &w.after.interrupts)
        };
        crate::evidence::interrupts::delta(b, a, key, r.cpu)
    };
    let mut counts = count_checks(&traced_counts, &proc_delta, &countable_rows(d, w));
    for c in &mut counts {
        let (soft, row) = match c.row.strip_prefix("softirq ") {
            Some(name) => (true, name),
            None => (false, c.row.as_str()),
        };
        let events = row_events(soft, row);
        c.unwritten = unwritten
            .iter()
            .filter(|u| events.contains(&u.event.as_str()))
            .map(Unwritten::missing)
            .sum();
    }
    (
        Traced {
            causes: tally.rows(),
            covered_ns: covered,
            off_cpu_ns: off_cpu,
            lost_records: 0,
            unwritten,
            counts,
            outside_gaps: in_window.saturating_sub(in_gaps),
        },
        per_gap,
    )
}

/// Every CPU's window concluded.
pub fn conclude(w: &Window) -> Vec<NoiseCpu> {
    let by = match &w.tracing {
        Tracing::Recorded(d) => by_cpu(&w.records, d),
        _ => ByCpu::default(),
    };
    w.readers
        .iter()
        .map(|r| {
            let (attribution, per_gap) = match &w.tracing {
                Tracing::Recorded(d) => {
                    let none = Vec::new();
                    let s = by.steps.get(&(r.cpu as u32)).unwrap_or(&none);
                    let unwritten = unwritten_on(r.cpu, &w.counted, &by.written);
                    let (mut t, per_gap) = traced(r, s, w, d, unwritten);
                    t.lost_records = by.lost.get(&(r.cpu as u32)).copied().unwrap_or(0);
                    (Attribution::Traced(t), per_gap)
                }
                Tracing::NotPermitted { paranoid } => (
                    Attribution::NotPermitted {
                        paranoid: *paranoid,
                    },
                    Vec::new(),
                ),
                Tracing::NotAsked => (Attribution::NotAsked, Vec::new()),
                Tracing::Unavailable(why) => (
                    Attribution::Unavailable {
                        reason: why.clone(),
                    },
                    Vec::new(),
                ),
            };
            let steal = |s: &crate::evidence::interrupts::Snapshot| s.steal_ns.get(&r.cpu).copied();
            let lost_ns = r.gaps.iter().map(|g| g.1).sum::<u64>() + r.unrecorded_ns;
            NoiseCpu {
                cpu: r.cpu,
                wall_ns: r.t1 - r.t0,
                thread_cpu_ns: r.cpu_ns,
                threshold_ns: r.threshold_ns,
                threshold_from: ThresholdFrom::Calibrated,
                step_ns: r.step_ns,
                reads: r.reads,
                gaps: r.gaps.len() as u64 + r.unrecorded,
                lost_ns,
                unrecorded_gaps: r.unrecorded,
                distribution: summary::distribution(&r.gaps),
                histogram: summary::histogram(&r.gaps, r.threshold_ns),
                longest: summary::longest(&r.gaps, &per_gap, r.t0, LONGEST),
                steal_ns: steal(&w.after)
                    .zip(steal(&w.before))
                    .map(|(a, b)| a.saturating_sub(b)),
                attribution,
            }
        })
        .collect()
}

/// The measurement of one CPU: its per-100-ms lost shares as the figure, the window in
/// `noise`, its checks.
pub fn measurement(n: NoiseCpu, r: &reader::ReaderOut, note: Option<&str>) -> Result<Measurement> {
    let samples = summary::window_shares(&r.gaps, r.t0, r.t1);
    let mut spec = Spec::new(PROBE.0, Unit::Percent, Unit::Percent, 1.0).param("cpus", vec![n.cpu]);
    if let Some(note) = note {
        spec = spec.note(note);
    }
    let mut checks = vec![placement_check(r), clock_check(&n)];
    checks.extend(count_check_list(&n));
    let partial = partial(&n);
    let evidence = Evidence {
        cpus: vec![Placement {
            role: "reader".into(),
            pid: std::process::id() as i32,
            tid: r.tid,
            requested: vec![n.cpu],
            start: r.start_cpu,
            end: r.end_cpu,
            affinity_held: r.start_cpu == Some(n.cpu) && r.end_cpu == Some(n.cpu),
        }],
        ..Evidence::default()
    };
    let mut m = from_samples(
        spec,
        crate::engine::measure::OwnSamples {
            samples,
            iterations: 1,
        },
        crate::engine::sampler::StopReason::Budget,
        evidence,
        (checks, Vec::new()),
    )?;
    m.warnings.extend(partial);
    m.noise = Some(n);
    Ok(m)
}

/// The remark of causes that are partial: rows not all recorded, records the kernel dropped
/// or events it counted without writing (None when the attribution is whole or was not
/// traced).
pub fn partial(n: &NoiseCpu) -> Option<Remark> {
    let Attribution::Traced(t) = &n.attribution else {
        return None;
    };
    let short = t.counts.iter().filter(|c| !c.whole()).count();
    let told = crate::model::noise::UnwrittenTold::of(&t.unwritten);
    (short > 0 || t.lost_records > 0 || told.pairs + told.events > 0).then(|| {
        Remark::family(
            PARTIAL,
            &[
                short as f64,
                t.lost_records as f64,
                told.pairs as f64,
                told.events as f64,
            ],
        )
    })
}

/// The note of a run whose main thread shares a measured CPU: it sleeps through the window.
pub const ONE_CPU: &str = "one CPU: the reader shared it with oscost's main thread only \
     before the window began and after it ended (the main thread sleeps through the window)";

/// Take the window on `asked.cpus` and make a measurement of each CPU.
pub fn measure(asked: &Asked, given_threshold: bool, one_cpu: bool) -> Result<Vec<Measurement>> {
    let w = window::take(asked)?;
    let mut out = Vec::new();
    for (mut n, r) in conclude(&w).into_iter().zip(&w.readers) {
        if given_threshold {
            n.threshold_from = ThresholdFrom::Given;
        }
        out.push(measurement(n, r, one_cpu.then_some(ONE_CPU))?);
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests;
