//! What `oscost noise` keeps of one CPU: the busy reader's window, its gaps (every stretch
//! longer than the threshold between two of its clock reads), their distribution and the
//! longest of them, and, where tracepoints were readable, each gap's causes and the counts
//! of interrupts checked against /proc. Serialized under a `noise.lost` measurement.

use serde::{Deserialize, Serialize};

/// One CPU's window as the busy reader saw it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NoiseCpu {
    pub cpu: usize,
    /// The reader's window (its first clock read to its last), ns.
    pub wall_ns: u64,
    /// The reader's own CPU time over the window (its thread clock), ns.
    pub thread_cpu_ns: u64,
    /// A gap is a step between two clock reads longer than this, ns.
    pub threshold_ns: u64,
    /// Whether the threshold was calibrated (a multiple of the loop's own step) or given.
    pub threshold_from: ThresholdFrom,
    /// The median step of the reader's loop (one clock read and a compare), ns.
    pub step_ns: f64,
    /// Clock reads in the window.
    pub reads: u64,
    /// Gaps in the window, and their summed length (the time lost), ns.
    pub gaps: u64,
    pub lost_ns: u64,
    /// Gaps counted and summed but not kept one by one (the record was full).
    #[serde(default)]
    pub unrecorded_gaps: u64,
    pub distribution: GapDistribution,
    /// Gap lengths on a log scale: bins two per octave, from the threshold up.
    pub histogram: Vec<GapBin>,
    /// The longest gaps, longest first.
    pub longest: Vec<LongGap>,
    /// Steal time the kernel accounted to this CPU over the window (/proc/stat), ns; None
    /// where it could not be read.
    #[serde(default)]
    pub steal_ns: Option<u64>,
    /// The causes of the gaps, or why they could not be told.
    pub attribution: Attribution,
}

/// Where the threshold came from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdFrom {
    /// A multiple of the loop's median step, measured on the CPU before the window.
    Calibrated,
    /// `--threshold`.
    Given,
}

/// Median, p99, p99.9 and the longest of the gaps, ns (0 when there were none).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct GapDistribution {
    pub median_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
    pub max_ns: f64,
}

/// Gaps from `lo_ns` (inclusive) to the next bin's `lo_ns`: how many, and their summed
/// length.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct GapBin {
    pub lo_ns: u64,
    pub count: u64,
    pub total_ns: u64,
}

/// One long gap: when it began (ns after the window's start), how long, and its causes
/// (largest share first; empty without tracing).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LongGap {
    pub start_ns: u64,
    pub len_ns: u64,
    #[serde(default)]
    pub causes: Vec<Cause>,
}

/// What took a CPU from the reader.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// The local timer interrupt (the scheduler tick, hrtimers).
    Timer,
    /// A device interrupt, by its number and its name in /proc/interrupts.
    Irq { irq: i32, name: String },
    /// A softirq, by its vector (0 HI ... 9 RCU).
    Softirq { vec: u32 },
    /// The reschedule IPI.
    Reschedule,
    /// Function-call IPIs (call_function and call_function_single; TLB shootdowns among them).
    CallFunction,
    /// The irq_work self-IPI.
    IrqWork,
    /// Another x86 system vector (platform IPI, thermal, APIC error, spurious), by its
    /// tracepoint name.
    Vector { name: String },
    /// Non-maskable interrupts.
    Nmi,
    /// Another task ran on the CPU, by its command name.
    Task { comm: String },
    /// A gap that holds no kernel event at all: the hypervisor, an SMI, the vCPU descheduled.
    Outside,
}

impl Cause {
    /// The softirq vectors' names, as /proc/softirqs lists them.
    pub const SOFTIRQS: [&'static str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];

    /// The name of a softirq vector ("TIMER"), or its number where unknown.
    pub fn softirq_name(vec: u32) -> String {
        Cause::SOFTIRQS
            .get(vec as usize)
            .map_or_else(|| vec.to_string(), |s| s.to_string())
    }
}

/// The causes of one CPU's gaps, or why they are unknown.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Attribution {
    Traced(Traced),
    /// Tracing needs root (or CAP_PERFMON with perf_event_paranoid ≤ -1).
    NotPermitted {
        paranoid: i32,
    },
    /// `--no-trace`.
    NotAsked,
    /// Tracing was permitted but could not be set up; the tracer's reason.
    Unavailable {
        reason: String,
    },
}

/// The gaps of one CPU split by cause from kernel tracepoints.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Traced {
    /// Causes by time taken, most first.
    pub causes: Vec<CauseRow>,
    /// Gap time split among kernel events (every cause but `Outside`), ns.
    pub covered_ns: u64,
    /// Time of the reader off the CPU (switched out for another task), ns.
    pub off_cpu_ns: u64,
    /// Records the kernel dropped from this CPU's ring (a full ring).
    pub lost_records: u64,
    /// The tracepoints whose own counter on this CPU is above the samples they wrote: events
    /// the kernel counted and wrote no record of, with no lost record either (empty where
    /// every count was written, or the counters were not read).
    #[serde(default)]
    pub unwritten: Vec<Unwritten>,
    /// Events of each /proc row traced over the /proc window, against the row's delta.
    pub counts: Vec<CountCheck>,
    /// Interrupt and softirq entries traced inside the reader's window but in no gap.
    pub outside_gaps: u64,
}

/// One cause: how many events, their summed cost and the median cost of one, ns.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CauseRow {
    pub cause: Cause,
    pub count: u64,
    pub total_ns: u64,
    pub median_ns: f64,
}

/// One tracepoint on one CPU whose counter says it fired more often than it wrote a sample.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Unwritten {
    /// The tracepoint, `group:name`.
    pub event: String,
    /// The event's own count while it was enabled.
    pub counted: u64,
    /// The samples it wrote over the same time.
    pub recorded: u64,
    /// Of those not written, the ones the kernel says it had no room in the ring for.
    #[serde(default)]
    pub ring_full: u64,
}

impl Unwritten {
    pub fn missing(&self) -> u64 {
        self.counted.saturating_sub(self.recorded)
    }

    /// The entries not written that the kernel accounts for nowhere: no lost record, no
    /// full ring.
    pub fn silent(&self) -> u64 {
        self.missing().saturating_sub(self.ring_full)
    }
}

/// What the kernel counted and wrote no record of, told as it happened: an `_entry` and its
/// `_exit` both unwritten are that many interrupts' entry/exit pairs, whatever else their
/// counters hold (an interrupt under way when the counters stop has its entry counted and
/// not its exit); the entries or exits beyond the pairs and every other tracepoint are
/// events of their own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnwrittenTold {
    pub pairs: u64,
    pub events: u64,
}

impl UnwrittenTold {
    pub fn of(us: &[Unwritten]) -> UnwrittenTold {
        let missing = |event: &str| us.iter().find(|u| u.event == event).map(Unwritten::missing);
        let mut told = UnwrittenTold::default();
        for u in us {
            let entry_of = u.event.strip_suffix("_exit").map(|s| format!("{s}_entry"));
            if entry_of.is_some_and(|entry| missing(&entry).is_some()) {
                // Told with its entry.
                continue;
            }
            let exit = u.event.strip_suffix("_entry").map(|s| format!("{s}_exit"));
            match exit.and_then(|exit| missing(&exit)) {
                Some(exits) => {
                    let pairs = u.missing().min(exits);
                    told.pairs += pairs;
                    told.events += u.missing() + exits - 2 * pairs;
                }
                None => told.events += u.missing(),
            }
        }
        told
    }
}

/// A row of /proc/interrupts or /proc/softirqs for one CPU over the window, against the
/// events traced of its kind over the same window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CountCheck {
    /// The row's name: "LOC", "RES", "CAL", "NMI", "IWI", an IRQ number, or a softirq
    /// ("softirq TIMER").
    pub row: String,
    pub proc_delta: u64,
    pub traced: u64,
    /// Entries of the row's tracepoint on this CPU that its counter counted and the kernel
    /// wrote no sample of ([`Unwritten`]), shared by every row of that tracepoint.
    #[serde(default)]
    pub unwritten: u64,
}

impl CountCheck {
    /// ±2% of the delta, and at least ±1 event: an interrupt can land between two reads of
    /// one snapshot.
    fn tolerance(&self) -> f64 {
        (self.proc_delta as f64 * 0.02).max(1.0)
    }

    /// Whether the row is accounted for: no more entries traced than the delta, and the
    /// entries traced plus those the kernel counted without writing reach it (each within
    /// the tolerance). A row short beyond what the kernel counted is entries the tracepoint
    /// never saw, or a recording that lost them.
    pub fn agrees(&self) -> bool {
        let (t, d, u) = (
            self.traced as f64,
            self.proc_delta as f64,
            self.unwritten as f64,
        );
        t <= d + self.tolerance() && t + u + self.tolerance() >= d
    }

    /// Whether every entry the row counts was recorded (the delta within the tolerance): the
    /// causes hold all of them.
    pub fn whole(&self) -> bool {
        (self.traced as f64 - self.proc_delta as f64).abs() <= self.tolerance()
    }
}

impl NoiseCpu {
    /// The share of the window lost to gaps, 0..1.
    pub fn lost_share(&self) -> f64 {
        self.lost_ns as f64 / self.wall_ns.max(1) as f64
    }

    /// Gaps per second of window.
    pub fn gaps_per_s(&self) -> f64 {
        self.gaps as f64 * 1e9 / self.wall_ns.max(1) as f64
    }

    /// Wall time minus the reader's own CPU time: what its thread clock missed, ns.
    pub fn clock_lost_ns(&self) -> u64 {
        self.wall_ns.saturating_sub(self.thread_cpu_ns)
    }

    /// The share of the gap time the kernel's events account for (None without tracing).
    pub fn coverage(&self) -> Option<f64> {
        match &self.attribution {
            Attribution::Traced(t) if self.lost_ns > 0 => {
                Some(t.covered_ns as f64 / self.lost_ns as f64)
            }
            Attribution::Traced(_) => Some(1.0),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_within_two_percent_or_one_event() {
        let c = |proc_delta, traced| CountCheck {
            row: "LOC".into(),
            proc_delta,
            traced,
            unwritten: 0,
        };
        for (check, ok) in [
            (c(1000, 1020), true),
            (c(1000, 1021), false),
            (c(1000, 979), false),
            (c(3, 4), true),
            (c(3, 5), false),
            (c(0, 0), true),
        ] {
            assert_eq!(check.agrees(), ok, "{check:?}");
            assert_eq!(check.whole(), ok, "{check:?}");
        }
    }

    #[test]
    fn entries_the_kernel_counted_unwritten_account_for_a_short_row_only() {
        let c = |proc_delta, traced, unwritten| CountCheck {
            row: "softirq RCU".into(),
            proc_delta,
            traced,
            unwritten,
        };
        // A quiet run's row: 39 recorded of 57, 18 counted and not written.
        let short = c(57, 39, 18);
        assert!(short.agrees() && !short.whole(), "{short:?}");
        // Short by more than the counter explains: the recording lost entries itself.
        assert!(!c(57, 39, 16).agrees());
        // Unwritten entries never excuse a row traced above its delta.
        assert!(!c(57, 70, 18).agrees());
        assert_eq!(
            Unwritten {
                event: "irq:softirq_entry".into(),
                counted: 60,
                recorded: 42,
                ring_full: 0,
            }
            .missing(),
            18
        );
    }

    #[test]
    fn a_cause_serializes_with_its_kind() {
        let s = serde_json::to_string(&Cause::Irq {
            irq: 36,
            name: "virtio1-req.0".into(),
        })
        .unwrap();
        assert_eq!(s, r#"{"kind":"irq","irq":36,"name":"virtio1-req.0"}"#);
        assert_eq!(Cause::softirq_name(1), "TIMER");
        assert_eq!(Cause::softirq_name(12), "12");
    }
}
