//! Each gap split among its causes from the tracepoints recorded on its CPU: a handler's part
//! is its entry-to-exit time (an NMI's the duration it reports), another task's the time from
//! the switch to it to the switch back (less the handlers that ran inside it), and what is
//! left of the gap (kernel entry and exit around the handlers) goes to the event that opened
//! it. A gap with no kernel event is "outside the kernel". The counts of interrupt entries
//! over the /proc window are what the checks hold against /proc/interrupts and
//! /proc/softirqs.

use crate::engine::stats::median;
use crate::evidence::trace::{Event, Kind, Vector};
use crate::model::noise::{Cause, CauseRow, CountCheck};
use std::collections::BTreeMap;

/// What an interrupt's handler is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    Vector(Vector),
    Irq(i32),
    Softirq(u32),
}

/// One recorded event of a measured CPU, as the attribution reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Enter(Source),
    Exit(Source),
    /// An NMI handler that ran `ns` (recorded at its end).
    Nmi {
        ns: u64,
    },
    /// The CPU switched from task `prev` to `next` (its command name `comm`).
    Switch {
        prev: i32,
        next: i32,
        comm: String,
    },
}

/// A step at a time (CLOCK_MONOTONIC ns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timed {
    pub time: u64,
    pub step: Step,
}

/// The step of a decoded event (and the command name a switch goes to); None for events
/// the attribution does not read (perf's own switch records, system calls).
pub fn step_of(e: &Event, comm: Option<String>) -> Option<Step> {
    let edge = |s: Source, entry: bool| if entry { Step::Enter(s) } else { Step::Exit(s) };
    Some(match e.kind {
        Kind::Vector { vector, entry } => edge(Source::Vector(vector), entry),
        Kind::ReschedEntry => Step::Enter(Source::Vector(Vector::Reschedule)),
        Kind::ReschedExit => Step::Exit(Source::Vector(Vector::Reschedule)),
        Kind::CallFuncEntry => Step::Enter(Source::Vector(Vector::CallFunctionSingle)),
        Kind::Irq { irq, entry } => edge(Source::Irq(irq), entry),
        Kind::Softirq { vec, entry } => edge(Source::Softirq(vec), entry),
        Kind::Nmi { delta_ns } => Step::Nmi {
            ns: delta_ns.max(0) as u64,
        },
        Kind::Switch { prev, next } => Step::Switch {
            prev,
            next,
            comm: comm.unwrap_or_default(),
        },
        _ => return None,
    })
}

/// The cause a handler stands for; `irq_name` names a device IRQ (from /proc/interrupts).
pub fn cause_of(s: Source, irq_name: &dyn Fn(i32) -> Option<String>) -> Cause {
    match s {
        Source::Vector(Vector::LocalTimer) => Cause::Timer,
        Source::Vector(Vector::Reschedule) => Cause::Reschedule,
        Source::Vector(Vector::CallFunction | Vector::CallFunctionSingle) => Cause::CallFunction,
        Source::Vector(Vector::IrqWork) => Cause::IrqWork,
        Source::Vector(v) => Cause::Vector {
            name: v.stem().to_string(),
        },
        Source::Irq(irq) => Cause::Irq {
            irq,
            name: irq_name(irq).unwrap_or_default(),
        },
        Source::Softirq(vec) => Cause::Softirq { vec },
    }
}

/// The /proc row an interrupt entry is counted in: (softirq table?, row key).
pub fn proc_row(s: Source) -> Option<(bool, String)> {
    Some(match s {
        Source::Vector(v) => (
            false,
            match v {
                Vector::LocalTimer => "LOC",
                Vector::Reschedule => "RES",
                Vector::CallFunction | Vector::CallFunctionSingle => "CAL",
                Vector::IrqWork => "IWI",
                Vector::PlatformIpi => "PLT",
                Vector::Thermal => "TRM",
                Vector::Spurious => "SPU",
                Vector::ErrorApic => return None,
            }
            .to_string(),
        ),
        Source::Irq(irq) => (false, irq.to_string()),
        Source::Softirq(vec) => (true, Cause::softirq_name(vec)),
    })
}

/// One gap's parts: (cause, ns), one per event (a handler run, a task's turn), in order.
pub type Parts = Vec<(Cause, u64)>;

/// The parts of one gap `[start, start + len]` from the steps inside it (time-ordered).
/// `reader` is the reader's thread id.
pub fn split_gap(
    (start, len): (u64, u64),
    steps: &[Timed],
    reader: i32,
    irq_name: &dyn Fn(i32) -> Option<String>,
) -> Parts {
    let end = start + len;
    if steps.is_empty() {
        return vec![(Cause::Outside, len)];
    }
    let mut parts: Parts = Vec::new();
    // Open handlers: (source, entry time, whether a task other than the reader was on).
    let mut open: Vec<(Source, u64, bool)> = Vec::new();
    // The task other than the reader on the CPU: (its part's index, since, nested ns).
    let mut task: Option<(usize, u64, u64)> = None;
    let close_task = |parts: &mut Parts, task: &mut Option<(usize, u64, u64)>, at: u64| {
        if let Some((i, since, nested)) = task.take() {
            parts[i].1 = at.saturating_sub(since).saturating_sub(nested);
        }
    };
    for t in steps {
        match &t.step {
            // Its exit cannot be recorded (see trace::NOISE_EVENTS): an instant, whose
            // time is what the handlers leave of the gap when it opened the gap.
            Step::Enter(s @ Source::Vector(Vector::IrqWork)) => {
                parts.push((cause_of(*s, irq_name), 0))
            }
            Step::Enter(s) => open.push((*s, t.time, task.is_some())),
            Step::Exit(s) => {
                let (since, in_task) = match open.iter().rposition(|(o, _, _)| o == s) {
                    Some(i) => {
                        let (_, since, in_task) = open.remove(i);
                        (since, in_task)
                    }
                    None => (start, false),
                };
                let ns = t.time.saturating_sub(since);
                if in_task {
                    if let Some((_, _, nested)) = task.as_mut() {
                        *nested += ns;
                    }
                }
                parts.push((cause_of(*s, irq_name), ns));
            }
            Step::Nmi { ns } => parts.push((Cause::Nmi, (*ns).min(len))),
            Step::Switch { next, comm, .. } => {
                close_task(&mut parts, &mut task, t.time);
                if *next != reader {
                    parts.push((Cause::Task { comm: comm.clone() }, 0));
                    task = Some((parts.len() - 1, t.time, 0));
                }
            }
        }
    }
    for (s, since, _) in open {
        parts.push((cause_of(s, irq_name), end.saturating_sub(since)));
    }
    close_task(&mut parts, &mut task, end);
    settle(parts, len)
}

/// Parts that add up to the gap: scaled down where they overrun it (the clocks of the reader
/// and of the tracepoints differ by a little), the rest of the gap given to the first part.
fn settle(mut parts: Parts, len: u64) -> Parts {
    if parts.is_empty() {
        return vec![(Cause::Outside, len)];
    }
    let sum: u64 = parts.iter().map(|p| p.1).sum();
    if sum > len {
        let f = len as f64 / sum as f64;
        for p in &mut parts {
            p.1 = (p.1 as f64 * f) as u64;
        }
        let scaled: u64 = parts.iter().map(|p| p.1).sum();
        parts[0].1 += len - scaled;
    } else {
        parts[0].1 += len - sum;
    }
    parts
}

/// The causes of many gaps: each cause's count, summed cost and median cost of one event.
#[derive(Debug, Default)]
pub struct Tally {
    costs: BTreeMap<Cause, Vec<u64>>,
}

impl Tally {
    pub fn add(&mut self, parts: &Parts) {
        for (c, ns) in parts {
            self.costs.entry(c.clone()).or_default().push(*ns);
        }
    }

    /// The rows, most time first (ties by cause, so the order is fixed).
    pub fn rows(self) -> Vec<CauseRow> {
        let mut rows: Vec<CauseRow> = self
            .costs
            .into_iter()
            .map(|(cause, v)| CauseRow {
                count: v.len() as u64,
                total_ns: v.iter().sum(),
                median_ns: median(&v.iter().map(|&ns| ns as f64).collect::<Vec<_>>()),
                cause,
            })
            .collect();
        rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.cause.cmp(&b.cause)));
        rows
    }
}

/// Interrupt entries of one CPU between two times, by /proc row: (softirq table?, key) →
/// count.
pub fn entries_between(steps: &[Timed], from: u64, to: u64) -> BTreeMap<(bool, String), u64> {
    let mut out = BTreeMap::new();
    for t in steps.iter().filter(|t| t.time >= from && t.time <= to) {
        let row = match &t.step {
            Step::Enter(s) => proc_row(*s),
            Step::Nmi { .. } => Some((false, "NMI".to_string())),
            _ => None,
        };
        if let Some(r) = row {
            *out.entry(r).or_insert(0) += 1;
        }
    }
    out
}

/// The count checks of one CPU: every row the tracer could see (its tracepoint exists,
/// `seen`) with a traced count or a /proc delta, against that delta.
pub fn count_checks(
    traced: &BTreeMap<(bool, String), u64>,
    proc_delta: &dyn Fn(bool, &str) -> Option<u64>,
    rows: &[(bool, String)],
) -> Vec<CountCheck> {
    let mut keys: Vec<&(bool, String)> = rows.iter().collect();
    keys.extend(traced.keys());
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let delta = proc_delta(k.0, &k.1)?;
            let n = traced.get(k).copied().unwrap_or(0);
            (delta > 0 || n > 0).then(|| CountCheck {
                row: if k.0 {
                    format!("softirq {}", k.1)
                } else {
                    k.1.clone()
                },
                proc_delta: delta,
                traced: n,
                unwritten: 0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const READER: i32 = 100;

    fn at(time: u64, step: Step) -> Timed {
        Timed { time, step }
    }

    fn names(irq: i32) -> Option<String> {
        (irq == 36).then(|| "virtio1-req.0".to_string())
    }

    #[test]
    fn a_gap_without_events_is_outside_the_kernel() {
        assert_eq!(
            split_gap((1000, 500), &[], READER, &names),
            vec![(Cause::Outside, 500)]
        );
    }

    #[test]
    fn a_tick_and_its_softirq_share_the_gap_the_rest_to_the_tick() {
        let timer = Source::Vector(Vector::LocalTimer);
        let steps = [
            at(1100, Step::Enter(timer)),
            at(1400, Step::Exit(timer)),
            at(1450, Step::Enter(Source::Softirq(1))),
            at(1650, Step::Exit(Source::Softirq(1))),
        ];
        let parts = split_gap((1000, 1000), &steps, READER, &names);
        // The tick: 300 of its own + 500 the handlers leave over; the softirq 200.
        assert_eq!(
            parts,
            vec![(Cause::Timer, 800), (Cause::Softirq { vec: 1 }, 200)]
        );
        assert_eq!(parts.iter().map(|p| p.1).sum::<u64>(), 1000);
    }

    #[test]
    fn another_task_is_named_and_loses_the_handlers_inside_its_turn() {
        let irq = Source::Irq(36);
        let steps = [
            at(
                1100,
                Step::Switch {
                    prev: READER,
                    next: 7,
                    comm: "competitor".into(),
                },
            ),
            at(5000, Step::Enter(irq)),
            at(6000, Step::Exit(irq)),
            at(
                9000,
                Step::Switch {
                    prev: 7,
                    next: READER,
                    comm: "oscost".into(),
                },
            ),
        ];
        let parts = split_gap((1000, 9000), &steps, READER, &names);
        let irq_cause = Cause::Irq {
            irq: 36,
            name: "virtio1-req.0".into(),
        };
        assert_eq!(
            parts,
            vec![
                // 7900 on the CPU less the 1000 of the IRQ, and the 1100 left over.
                (
                    Cause::Task {
                        comm: "competitor".into()
                    },
                    6900 + 1100
                ),
                (irq_cause, 1000),
            ]
        );
    }

    #[test]
    fn parts_that_overrun_the_gap_are_scaled_to_it() {
        let t = Source::Vector(Vector::LocalTimer);
        let steps = [at(1400, Step::Exit(t)), at(1450, Step::Nmi { ns: 5000 })];
        let parts = split_gap((900, 1000), &steps, READER, &names);
        assert_eq!(parts.iter().map(|p| p.1).sum::<u64>(), 1000);
        assert_eq!(parts[1].0, Cause::Nmi);
    }

    #[test]
    fn the_tally_orders_by_time_with_median_costs() {
        let mut t = Tally::default();
        t.add(&vec![(Cause::Timer, 100), (Cause::Softirq { vec: 9 }, 50)]);
        t.add(&vec![(Cause::Timer, 300)]);
        t.add(&vec![(Cause::Timer, 200), (Cause::Outside, 10)]);
        let rows = t.rows();
        assert_eq!(rows[0].cause, Cause::Timer);
        assert_eq!((rows[0].count, rows[0].total_ns), (3, 600));
        assert_eq!(rows[0].median_ns, 200.0);
        assert_eq!(rows[1].cause, Cause::Softirq { vec: 9 });
        assert_eq!(rows.last().unwrap().cause, Cause::Outside);
    }

    #[test]
    fn entries_are_counted_by_proc_row_and_checked() {
        let steps = [
            at(10, Step::Enter(Source::Vector(Vector::LocalTimer))),
            at(20, Step::Enter(Source::Vector(Vector::CallFunction))),
            at(30, Step::Enter(Source::Vector(Vector::CallFunctionSingle))),
            at(40, Step::Enter(Source::Softirq(1))),
            at(50, Step::Exit(Source::Softirq(1))),
            at(500, Step::Enter(Source::Vector(Vector::LocalTimer))),
        ];
        let n = entries_between(&steps, 0, 100);
        assert_eq!(n.get(&(false, "LOC".into())), Some(&1));
        assert_eq!(n.get(&(false, "CAL".into())), Some(&2));
        assert_eq!(n.get(&(true, "TIMER".into())), Some(&1));
        let proc = |soft: bool, key: &str| match (soft, key) {
            (false, "LOC") => Some(1),
            (false, "CAL") => Some(5),
            (true, "TIMER") => Some(1),
            (false, "RES") => Some(0),
            _ => None,
        };
        let rows = [(false, "RES".to_string()), (false, "LOC".to_string())];
        let checks = count_checks(&n, &proc, &rows);
        // RES: neither traced nor counted, not a check.
        assert_eq!(checks.len(), 3, "{checks:?}");
        let cal = checks.iter().find(|c| c.row == "CAL").unwrap();
        assert!(!cal.agrees(), "2 traced against 5 counted fails");
        assert!(checks
            .iter()
            .find(|c| c.row == "softirq TIMER")
            .unwrap()
            .agrees());
    }
}
