//! Which perf events this process can open, and why not when it cannot. Probed once by
//! opening each event on ourselves (then closing it), so the run's JSON says up front which
//! evidence will exist: VMs usually have no PMU, and perf_event_paranoid may forbid counting.
//! The table of the events themselves lives here too, for the evidence collector to open.

use serde::{Deserialize, Serialize};

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software};
use perf_event::Builder;

/// One perf event and whether it opens here.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct EventSupport {
    /// perf-tool name, e.g. `context-switches`, `cycles`, `L1-dcache-load-misses`.
    pub name: String,
    /// Hardware (PMU) event rather than a kernel software event.
    pub hardware: bool,
    pub supported: bool,
    /// Why not, or a restriction when supported (e.g. user-space only).
    pub reason: Option<String>,
    /// Kernel-side work is counted too (false: user-space only, paranoid setting).
    pub counts_kernel: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Pmu {
    /// The events were actually tried (false for a recorded tree or an old JSON).
    pub probed: bool,
    pub events: Vec<EventSupport>,
}

impl Pmu {
    /// At least one hardware event opened.
    pub fn has_hardware(&self) -> bool {
        self.events.iter().any(|e| e.hardware && e.supported)
    }
    /// The reason given by the first hardware event that failed.
    pub fn hardware_reason(&self) -> Option<&str> {
        self.events
            .iter()
            .find(|e| e.hardware && !e.supported)
            .and_then(|e| e.reason.as_deref())
    }
}

/// A perf event the evidence collector counts, by perf-tool name, and whether it is counted
/// in the kernel (scheduler events only exist there).
pub struct PerfEvent {
    pub name: &'static str,
    pub kernel_side: bool,
    event: Event,
}

/// The perf event behind a [`PerfEvent`].
enum Event {
    Sw(Software),
    Hw(Hardware),
    Cache(CacheId, CacheOp, CacheResult),
}

impl PerfEvent {
    /// A builder counting this event (of this process, on any CPU, until told otherwise).
    pub fn builder(&self) -> Builder<'static> {
        let mut b = Builder::new(Software::DUMMY);
        match self.event {
            Event::Sw(e) => b.event(e),
            Event::Hw(e) => b.event(e),
            Event::Cache(which, operation, result) => b.event(Cache {
                which,
                operation,
                result,
            }),
        };
        b
    }
}

const fn sw(name: &'static str, kernel_side: bool, e: Software) -> PerfEvent {
    PerfEvent {
        name,
        kernel_side,
        event: Event::Sw(e),
    }
}
const fn hw(name: &'static str, e: Hardware) -> PerfEvent {
    PerfEvent {
        name,
        kernel_side: false,
        event: Event::Hw(e),
    }
}
const READ: CacheOp = CacheOp::READ;
const WRITE: CacheOp = CacheOp::WRITE;
const ACCESS: CacheResult = CacheResult::ACCESS;
const MISS: CacheResult = CacheResult::MISS;

const fn cache(name: &'static str, which: CacheId, op: CacheOp, result: CacheResult) -> PerfEvent {
    PerfEvent {
        name,
        kernel_side: false,
        event: Event::Cache(which, op, result),
    }
}

pub const SOFTWARE: &[PerfEvent] = &[
    sw("context-switches", true, Software::CONTEXT_SWITCHES),
    sw("cpu-migrations", true, Software::CPU_MIGRATIONS),
    sw("page-faults", false, Software::PAGE_FAULTS),
    sw("minor-faults", false, Software::PAGE_FAULTS_MIN),
    sw("major-faults", false, Software::PAGE_FAULTS_MAJ),
    sw("task-clock", false, Software::TASK_CLOCK),
];

pub const HARDWARE: &[PerfEvent] = &[
    hw("cycles", Hardware::CPU_CYCLES),
    hw("instructions", Hardware::INSTRUCTIONS),
    cache("L1-dcache-loads", CacheId::L1D, READ, ACCESS),
    cache("L1-dcache-load-misses", CacheId::L1D, READ, MISS),
    cache("dTLB-loads", CacheId::DTLB, READ, ACCESS),
    cache("dTLB-load-misses", CacheId::DTLB, READ, MISS),
    cache("LLC-load-misses", CacheId::LL, READ, MISS),
];

pub const CACHE_REFS: &[PerfEvent] = &[
    hw("cache-references", Hardware::CACHE_REFERENCES),
    hw("cache-misses", Hardware::CACHE_MISSES),
];

pub const STORES: &[PerfEvent] = &[
    cache("L1-dcache-stores", CacheId::L1D, WRITE, ACCESS),
    cache("L1-dcache-store-misses", CacheId::L1D, WRITE, MISS),
    cache("dTLB-stores", CacheId::DTLB, WRITE, ACCESS),
    cache("dTLB-store-misses", CacheId::DTLB, WRITE, MISS),
];

/// Every event oscost can count, by perf-stat name: software events first, then hardware.
pub fn event_names() -> impl Iterator<Item = &'static str> {
    all_specs().map(|s| s.name)
}

fn all_specs() -> impl Iterator<Item = &'static PerfEvent> {
    SOFTWARE
        .iter()
        .chain(HARDWARE)
        .chain(CACHE_REFS)
        .chain(STORES)
}

/// Whether `name` is a software event (counted by the kernel, no PMU needed).
pub fn is_software(name: &str) -> bool {
    SOFTWARE.iter().any(|s| s.name == name)
}

pub fn spec_named(name: &str) -> Option<&'static PerfEvent> {
    all_specs().find(|s| s.name == name)
}

/// The events the machine's probe tries, by perf-tool name, in the order it reports them.
pub const EVENT_NAMES: &[&str] = &[
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "major-faults",
    "minor-faults",
    "task-clock",
    "cycles",
    "instructions",
    "L1-dcache-loads",
    "L1-dcache-load-misses",
    "dTLB-loads",
    "dTLB-load-misses",
    "LLC-load-misses",
];

/// A perf builder for one of [`EVENT_NAMES`], counting this process on any CPU.
pub fn builder_for(name: &str) -> Option<Builder<'static>> {
    spec_named(name).map(PerfEvent::builder)
}

/// Words for a perf_event_open failure: what the errno means for this machine.
pub fn errno_reason(errno: i32, hardware: bool, paranoid: Option<i32>, in_vm: bool) -> String {
    let par = paranoid.map_or("unknown".to_string(), |p| p.to_string());
    match errno {
        libc::ENOENT if hardware && in_vm => "not supported (ENOENT: no PMU in this VM)".into(),
        libc::ENOENT => "not supported (ENOENT: this CPU's PMU has no such event)".into(),
        libc::EOPNOTSUPP if in_vm => "not supported (EOPNOTSUPP: no PMU in this VM)".into(),
        libc::EOPNOTSUPP => "not supported (EOPNOTSUPP: PMU lacks this feature)".into(),
        libc::ENODEV => "not supported (ENODEV: no such PMU)".into(),
        libc::EACCES | libc::EPERM => {
            format!("permission denied (perf_event_paranoid={par})")
        }
        libc::ENOSYS => "not supported (ENOSYS: kernel built without perf events)".into(),
        libc::EMFILE => "too many open files (EMFILE)".into(),
        libc::EBUSY => "PMU busy (EBUSY: another user holds the counters exclusively)".into(),
        libc::EINVAL => "not supported (EINVAL: event rejected by the kernel)".into(),
        e => format!("failed ({})", std::io::Error::from_raw_os_error(e)),
    }
}

/// Tries every event on ourselves: first counting kernel work too, then user-space only when
/// the paranoid setting forbids the former.
pub fn probe_events(paranoid: Option<i32>, in_vm: bool) -> Pmu {
    let events = EVENT_NAMES
        .iter()
        .map(|&name| {
            let hardware = !is_software(name);
            let mut s = EventSupport {
                name: name.to_string(),
                hardware,
                ..Default::default()
            };
            let Some(mut b) = builder_for(name) else {
                s.reason = Some("unknown event".into());
                return s;
            };
            match b.include_kernel().build() {
                Ok(_counter) => {
                    s.supported = true;
                    s.counts_kernel = true;
                }
                Err(e) => {
                    let errno = e.raw_os_error().unwrap_or(0);
                    let denied = errno == libc::EACCES || errno == libc::EPERM;
                    match (denied, b.exclude_kernel(true).build()) {
                        (true, Ok(_counter)) => {
                            s.supported = true;
                            s.reason = Some(format!(
                                "user-space only: kernel work not counted (perf_event_paranoid={})",
                                paranoid.map_or("unknown".into(), |p| p.to_string())
                            ));
                        }
                        (_, Err(e2)) if denied => {
                            s.reason = Some(errno_reason(
                                e2.raw_os_error().unwrap_or(errno),
                                hardware,
                                paranoid,
                                in_vm,
                            ));
                        }
                        _ => s.reason = Some(errno_reason(errno, hardware, paranoid, in_vm)),
                    }
                }
            }
            s
        })
        .collect();
    Pmu {
        probed: true,
        events,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons() {
        assert_eq!(
            errno_reason(libc::ENOENT, true, Some(2), true),
            "not supported (ENOENT: no PMU in this VM)"
        );
        assert_eq!(
            errno_reason(libc::EACCES, true, Some(3), false),
            "permission denied (perf_event_paranoid=3)"
        );
        assert!(errno_reason(libc::ENOENT, true, Some(2), false).contains("no such event"));
    }

    #[test]
    fn every_listed_event_has_a_builder() {
        for name in EVENT_NAMES {
            assert!(builder_for(name).is_some(), "{name}");
        }
        assert!(builder_for("bogus").is_none());
    }

    #[test]
    fn probe_never_fails_and_covers_all_events() {
        // Whatever this host allows, every event gets a verdict, and failures have a reason.
        let p = probe_events(Some(2), false);
        assert_eq!(p.events.len(), EVENT_NAMES.len());
        for e in &p.events {
            assert!(e.supported || e.reason.is_some(), "{e:?}");
        }
    }
}
