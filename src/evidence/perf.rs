//! perf_event_open counters (through the perf-event2 crate) on every participant.
//!
//! Each event is its own counter (not one group), so an event the PMU cannot schedule
//! together with the others is multiplexed and scaled by time_enabled/time_running instead
//! of silently reading zero; scaling is flagged in the reading. An event that cannot be opened
//! records why (no PMU, paranoid setting, permission) and never fails the probe.

use crate::model::EventReading;
use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software};
use perf_event::{Builder, Counter};
use std::collections::BTreeMap;

/// The events a probe wants, by perf-stat name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventSet {
    /// Scheduler and fault software events (always cheap).
    Software,
    /// Software events plus the standard hardware set (cycles, instructions, L1D, dTLB, LLC).
    Standard,
    /// Standard plus generic cache references/misses (the lat_ctx lab's perf stat view).
    WithCacheRefs,
    /// Standard plus L1D and dTLB store accesses/misses (the mmap lab's read/write columns).
    WithStores,
}

/// A named event and whether it is counted in the kernel (scheduler events only exist there).
struct Spec {
    name: &'static str,
    kernel_side: bool,
    make: fn(&mut Builder<'_>),
}

fn sw(b: &mut Builder<'_>, e: Software) {
    b.event(e);
}
fn hw(b: &mut Builder<'_>, e: Hardware) {
    b.event(e);
}
fn cache(b: &mut Builder<'_>, which: CacheId, op: CacheOp, result: CacheResult) {
    b.event(Cache {
        which,
        operation: op,
        result,
    });
}

const SOFTWARE: &[Spec] = &[
    Spec {
        name: "context-switches",
        kernel_side: true,
        make: |b| sw(b, Software::CONTEXT_SWITCHES),
    },
    Spec {
        name: "cpu-migrations",
        kernel_side: true,
        make: |b| sw(b, Software::CPU_MIGRATIONS),
    },
    Spec {
        name: "page-faults",
        kernel_side: false,
        make: |b| sw(b, Software::PAGE_FAULTS),
    },
    Spec {
        name: "minor-faults",
        kernel_side: false,
        make: |b| sw(b, Software::PAGE_FAULTS_MIN),
    },
    Spec {
        name: "major-faults",
        kernel_side: false,
        make: |b| sw(b, Software::PAGE_FAULTS_MAJ),
    },
    Spec {
        name: "task-clock",
        kernel_side: false,
        make: |b| sw(b, Software::TASK_CLOCK),
    },
];

const HARDWARE: &[Spec] = &[
    Spec {
        name: "cycles",
        kernel_side: false,
        make: |b| hw(b, Hardware::CPU_CYCLES),
    },
    Spec {
        name: "instructions",
        kernel_side: false,
        make: |b| hw(b, Hardware::INSTRUCTIONS),
    },
    Spec {
        name: "L1-dcache-loads",
        kernel_side: false,
        make: |b| cache(b, CacheId::L1D, CacheOp::READ, CacheResult::ACCESS),
    },
    Spec {
        name: "L1-dcache-load-misses",
        kernel_side: false,
        make: |b| cache(b, CacheId::L1D, CacheOp::READ, CacheResult::MISS),
    },
    Spec {
        name: "dTLB-loads",
        kernel_side: false,
        make: |b| cache(b, CacheId::DTLB, CacheOp::READ, CacheResult::ACCESS),
    },
    Spec {
        name: "dTLB-load-misses",
        kernel_side: false,
        make: |b| cache(b, CacheId::DTLB, CacheOp::READ, CacheResult::MISS),
    },
    Spec {
        name: "LLC-load-misses",
        kernel_side: false,
        make: |b| cache(b, CacheId::LL, CacheOp::READ, CacheResult::MISS),
    },
];

const CACHE_REFS: &[Spec] = &[
    Spec {
        name: "cache-references",
        kernel_side: false,
        make: |b| hw(b, Hardware::CACHE_REFERENCES),
    },
    Spec {
        name: "cache-misses",
        kernel_side: false,
        make: |b| hw(b, Hardware::CACHE_MISSES),
    },
];

const STORES: &[Spec] = &[
    Spec {
        name: "L1-dcache-stores",
        kernel_side: false,
        make: |b| cache(b, CacheId::L1D, CacheOp::WRITE, CacheResult::ACCESS),
    },
    Spec {
        name: "L1-dcache-store-misses",
        kernel_side: false,
        make: |b| cache(b, CacheId::L1D, CacheOp::WRITE, CacheResult::MISS),
    },
    Spec {
        name: "dTLB-stores",
        kernel_side: false,
        make: |b| cache(b, CacheId::DTLB, CacheOp::WRITE, CacheResult::ACCESS),
    },
    Spec {
        name: "dTLB-store-misses",
        kernel_side: false,
        make: |b| cache(b, CacheId::DTLB, CacheOp::WRITE, CacheResult::MISS),
    },
];

fn specs(set: EventSet) -> Vec<&'static Spec> {
    let mut v: Vec<&Spec> = SOFTWARE.iter().collect();
    if matches!(
        set,
        EventSet::Standard | EventSet::WithCacheRefs | EventSet::WithStores
    ) {
        v.extend(HARDWARE.iter());
    }
    if set == EventSet::WithCacheRefs {
        v.extend(CACHE_REFS.iter());
    }
    if set == EventSet::WithStores {
        v.extend(STORES.iter());
    }
    v
}

/// Plain words for an errno from perf_event_open.
pub fn open_error_reason(err: &std::io::Error) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    match err.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            "not supported: this CPU or VM exposes no such counter (no PMU?)".into()
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            format!("permission denied (perf_event_paranoid={paranoid}; needs root or CAP_PERFMON)")
        }
        Some(libc::ENOSYS) => "perf_event_open is not available in this kernel".into(),
        Some(libc::EMFILE) => "too many open files for more counters".into(),
        _ => format!("cannot open: {err}"),
    }
}

/// One event's counters on every participant, and what was accumulated over raw windows.
struct Slot {
    name: &'static str,
    counters: Vec<Counter>,
    last: Vec<(u64, u64, u64)>,
    count: u64,
    enabled: u64,
    running: u64,
    reason: Option<String>,
    failed: bool,
}

/// Counters for a set of events on a set of tasks (by tid).
pub struct PerfSet {
    slots: Vec<Slot>,
}

impl PerfSet {
    /// Open every event of `set` on every task. Counters start enabled; only the deltas of
    /// [`begin`](Self::begin)/[`end`](Self::end) windows count.
    pub fn open(tids: &[i32], set: EventSet) -> PerfSet {
        let mut slots = Vec::new();
        for spec in specs(set) {
            let mut slot = Slot {
                name: spec.name,
                counters: Vec::new(),
                last: Vec::new(),
                count: 0,
                enabled: 0,
                running: 0,
                reason: None,
                failed: false,
            };
            for &tid in tids {
                match open_one(spec, tid) {
                    Ok((c, note)) => {
                        if note.is_some() {
                            slot.reason = note;
                        }
                        slot.counters.push(c);
                    }
                    Err(reason) => {
                        slot.reason = Some(reason);
                        slot.failed = true;
                        slot.counters.clear();
                        break;
                    }
                }
            }
            slot.last = vec![(0, 0, 0); slot.counters.len()];
            slots.push(slot);
        }
        PerfSet { slots }
    }

    fn read_all(&mut self) -> Vec<Vec<(u64, u64, u64)>> {
        self.slots
            .iter_mut()
            .map(|s| {
                s.counters
                    .iter_mut()
                    .map(|c| match c.read_count_and_time() {
                        Ok(v) => (v.count, v.time_enabled, v.time_running),
                        Err(_) => (0, 0, 0),
                    })
                    .collect()
            })
            .collect()
    }

    /// Start a measured window.
    pub fn begin(&mut self) {
        let now = self.read_all();
        for (slot, vals) in self.slots.iter_mut().zip(now) {
            slot.last = vals;
        }
    }

    /// Close a measured window, adding its deltas.
    pub fn end(&mut self) {
        let now = self.read_all();
        for (slot, vals) in self.slots.iter_mut().zip(now) {
            for (prev, cur) in slot.last.iter().zip(vals.iter()) {
                slot.count += cur.0.saturating_sub(prev.0);
                slot.enabled += cur.1.saturating_sub(prev.1);
                slot.running += cur.2.saturating_sub(prev.2);
            }
        }
    }

    /// Stop counting: close every counter (the file descriptors), keeping the totals. A task
    /// with counters attached pays for them at every context switch, so counters live only
    /// as long as an evidence window.
    pub fn close(&mut self) {
        for s in &mut self.slots {
            s.counters.clear();
            s.last.clear();
        }
    }

    /// Add another set's totals (opened with the same event set) into this one.
    pub fn absorb(&mut self, other: &PerfSet) {
        for (a, b) in self.slots.iter_mut().zip(other.slots.iter()) {
            a.count += b.count;
            a.enabled += b.enabled;
            a.running += b.running;
            if b.failed {
                a.failed = true;
            }
            if b.reason.is_some() {
                a.reason = b.reason.clone();
            }
        }
    }

    /// Readings normalized by `iterations` raw iterations.
    pub fn readings(&self, iterations: u64) -> BTreeMap<String, EventReading> {
        self.slots
            .iter()
            .map(|s| (s.name.to_string(), reading_of(s, iterations)))
            .collect()
    }
}

fn reading_of(s: &Slot, iterations: u64) -> EventReading {
    if s.failed {
        return EventReading {
            supported: false,
            reason: s.reason.clone(),
            ..Default::default()
        };
    }
    let (total, scaled, reason) = scale(s.count, s.enabled, s.running);
    EventReading {
        per_op: total.map(|t| t / iterations.max(1) as f64),
        total,
        scaled,
        supported: true,
        reason: reason.or_else(|| s.reason.clone()),
    }
}

/// Scale a multiplexed count: count × enabled / running. Returns (total, scaled?, why-none).
pub fn scale(count: u64, enabled: u64, running: u64) -> (Option<f64>, bool, Option<String>) {
    if enabled == 0 {
        return (Some(count as f64), false, None);
    }
    if running == 0 {
        return (
            None,
            false,
            Some("never scheduled on the PMU (too many events multiplexed)".into()),
        );
    }
    if running < enabled {
        (
            Some(count as f64 * enabled as f64 / running as f64),
            true,
            None,
        )
    } else {
        (Some(count as f64), false, None)
    }
}

/// Open one counter on `tid`, including kernel-side counts where permitted. When only
/// user-side counting is allowed, scheduler events would read 0, so they are refused with the
/// reason rather than reported as zero.
fn open_one(spec: &Spec, tid: i32) -> Result<(Counter, Option<String>), String> {
    let build = |include_kernel: bool| {
        let mut b = Builder::new(Software::DUMMY);
        (spec.make)(&mut b);
        b.observe_pid(tid)
            .any_cpu()
            .exclude_kernel(!include_kernel)
            .exclude_hv(true);
        b.build()
    };
    match build(true) {
        Ok(mut c) => {
            c.enable().map_err(|e| open_error_reason(&e))?;
            Ok((c, None))
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) => {
            if spec.kernel_side {
                return Err(format!(
                    "{}; kernel-side counting is required for this event",
                    open_error_reason(&e)
                ));
            }
            let mut c = build(false).map_err(|e| open_error_reason(&e))?;
            c.enable().map_err(|e| open_error_reason(&e))?;
            Ok((
                c,
                Some("user-space only (kernel counting not permitted)".into()),
            ))
        }
        Err(e) => Err(open_error_reason(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_rules() {
        assert_eq!(scale(100, 10, 10), (Some(100.0), false, None));
        assert_eq!(scale(100, 10, 5), (Some(200.0), true, None));
        let (v, s, why) = scale(0, 10, 0);
        assert!(v.is_none() && !s && why.unwrap().contains("multiplexed"));
    }

    #[test]
    fn software_events_count_own_switches() {
        let tid = crate::evidence::placement::gettid();
        let mut set = PerfSet::open(&[tid], EventSet::Standard);
        set.begin();
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        set.end();
        let r = set.readings(5);
        let cs = &r["context-switches"];
        if cs.supported {
            assert!(cs.per_op.unwrap() >= 1.0, "{cs:?}");
        } else {
            assert!(cs.reason.is_some());
        }
        // Every event either reads or says why not.
        for (name, e) in &r {
            assert!(e.supported || e.reason.is_some(), "{name} has no reason");
        }
    }
}
