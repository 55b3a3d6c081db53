//! Which perf events this process can open, and why not when it cannot. Probed once by
//! opening each event on ourselves (then closing it), so the run's JSON says up front which
//! evidence will exist: VMs usually have no PMU, and perf_event_paranoid may forbid counting.

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

/// The events the evidence collector uses, with their perf-tool names.
pub const EVENT_NAMES: &[(&str, bool)] = &[
    ("context-switches", false),
    ("cpu-migrations", false),
    ("page-faults", false),
    ("major-faults", false),
    ("minor-faults", false),
    ("task-clock", false),
    ("cycles", true),
    ("instructions", true),
    ("L1-dcache-loads", true),
    ("L1-dcache-load-misses", true),
    ("dTLB-loads", true),
    ("dTLB-load-misses", true),
    ("LLC-load-misses", true),
];

/// A perf builder for one of [`EVENT_NAMES`], counting this process on any CPU.
pub fn builder_for(name: &str) -> Option<Builder<'static>> {
    let cache = |which, result| Cache {
        which,
        operation: CacheOp::READ,
        result,
    };
    let b = match name {
        "context-switches" => Builder::new(Software::CONTEXT_SWITCHES),
        "cpu-migrations" => Builder::new(Software::CPU_MIGRATIONS),
        "page-faults" => Builder::new(Software::PAGE_FAULTS),
        "major-faults" => Builder::new(Software::PAGE_FAULTS_MAJ),
        "minor-faults" => Builder::new(Software::PAGE_FAULTS_MIN),
        "task-clock" => Builder::new(Software::TASK_CLOCK),
        "cycles" => Builder::new(Hardware::CPU_CYCLES),
        "instructions" => Builder::new(Hardware::INSTRUCTIONS),
        "L1-dcache-loads" => Builder::new(cache(CacheId::L1D, CacheResult::ACCESS)),
        "L1-dcache-load-misses" => Builder::new(cache(CacheId::L1D, CacheResult::MISS)),
        "dTLB-loads" => Builder::new(cache(CacheId::DTLB, CacheResult::ACCESS)),
        "dTLB-load-misses" => Builder::new(cache(CacheId::DTLB, CacheResult::MISS)),
        "LLC-load-misses" => Builder::new(cache(CacheId::LL, CacheResult::MISS)),
        _ => return None,
    };
    Some(b)
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
        .map(|&(name, hardware)| {
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
        for (name, _) in EVENT_NAMES {
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
