//! The tracer: every recorded tracepoint opened on every traced CPU, all of one CPU's events
//! writing into one sample ring (PERF_EVENT_IOC_SET_OUTPUT), timestamps on CLOCK_MONOTONIC so
//! they compare with the times the client takes itself, and filters (PERF_EVENT_IOC_SET_FILTER)
//! that keep only the participants' records where the kernel accepts them.

use super::tracefs::Tracefs;
use super::{Decoder, Group, RawRecord};
use crate::error::{Error, Result};
use perf_event::events::{Software, Tracepoint};
use perf_event::{Builder, Clock, Counter, ReadFormat, SampleFlag, Sampler};
use std::os::fd::AsRawFd;

/// `_IO('$', 5)` and `_IOW('$', 6, char *)` from linux/perf_event.h.
const PERF_EVENT_IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const PERF_EVENT_IOC_SET_FILTER: libc::c_ulong = 0x4008_2406;

/// Bytes of ring per CPU (plus the header page); the caller drains between batches.
const RING_BYTES: usize = 4 << 20;

pub struct Tracer {
    /// One ring per CPU, owned by a dummy event that writes perf's switch records
    /// ([`Group::Switches`]); every tracepoint of that CPU writes into it.
    rings: Vec<Sampler>,
    /// The tracepoints, each with its group (enabled and disabled by group), its CPU and
    /// its name.
    others: Vec<(Group, Opened, Counter)>,
    pub decoder: Decoder,
    /// Filters the kernel refused (the records are then kept unfiltered).
    pub unfiltered: Vec<String>,
}

/// Which tracepoint a counter counts, on which CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Opened {
    cpu: usize,
    event: String,
}

/// How many times one tracepoint fired on one CPU while it was enabled: the event's own
/// counter, read after it is disabled. The kernel adds to it before it writes the sample, so
/// a count above the records written is samples the kernel counted and did not write.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counted {
    pub cpu: usize,
    /// The tracepoint, `group:name`.
    pub event: String,
    pub count: u64,
    /// The samples the kernel could not write for want of room in the ring (None where the
    /// kernel does not say).
    #[serde(default)]
    pub ring_full: Option<u64>,
}

/// Whether this process may trace every task on a CPU: Err holds the kernel's
/// perf_event_paranoid when it may not (root, or CAP_PERFMON with paranoid ≤ -1, is needed).
pub fn permission() -> std::result::Result<(), i32> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(2);
    if !root && paranoid > -1 {
        return Err(paranoid);
    }
    Ok(())
}

/// Whether tracing can run here, and if not, the one line that says what is missing and how
/// to get it.
pub fn permitted() -> std::result::Result<(), String> {
    if let Err(paranoid) = permission() {
        return Err(format!(
            "the kernel-traced breakdown needs root (or CAP_PERFMON with \
             kernel.perf_event_paranoid ≤ -1; it is {paranoid}) and readable tracefs: run \
             `sudo oscost rpc`"
        ));
    }
    Ok(())
}

/// The filter for one event: only records about the participants.
fn filter_for(event: &str, pids: &[i32]) -> Option<String> {
    let any = |field: &str| {
        pids.iter()
            .map(|p| format!("{field} == {p}"))
            .collect::<Vec<_>>()
            .join(" || ")
    };
    match event {
        "sched:sched_waking" | "sched:sched_wakeup" => Some(any("pid")),
        "sched:sched_switch" => Some(format!("{} || {}", any("prev_pid"), any("next_pid"))),
        // Recorded in the sender's / waker's context: the participant is the current task.
        "raw_syscalls:sys_enter"
        | "raw_syscalls:sys_exit"
        | "ipi:ipi_send_cpu"
        | "sched:sched_wake_idle_without_ipi"
        | "tlb:tlb_flush"
        | "x86_fpu:x86_fpu_regs_deactivated" => Some(any("common_pid")),
        _ => None,
    }
}

/// What a tracer records: which events, about whom, and how much ring each CPU has.
#[derive(Debug, Clone, Copy)]
pub struct Recording<'a> {
    /// (tracepoint, required) as in [`super::EVENTS`].
    pub events: &'a [(&'a str, bool)],
    /// Keep only records about these tasks where the kernel takes a filter (None: all).
    pub pids: Option<&'a [i32]>,
    /// Bytes of ring per CPU (a power of two times the page size).
    pub ring_bytes: usize,
}

impl Tracer {
    /// Open every event on every CPU in `cpus`, disabled, filtered to `pids`.
    pub fn open(cpus: &[usize], pids: &[i32]) -> Result<Tracer> {
        Tracer::open_recording(
            cpus,
            Recording {
                events: &super::EVENTS,
                pids: Some(pids),
                ring_bytes: RING_BYTES,
            },
        )
    }

    /// Open the events of `rec` on every CPU in `cpus`, disabled.
    pub fn open_recording(cpus: &[usize], rec: Recording<'_>) -> Result<Tracer> {
        permitted().map_err(Error::env)?;
        let decoder = {
            let fs = Tracefs::open()?;
            Decoder::from_tracefs_for(&fs, rec.events)?
            // tracefs is unmounted here if we mounted it: the ids are all perf needs.
        };
        let mut rings = Vec::new();
        let mut others = Vec::new();
        let mut unfiltered = Vec::new();
        for &cpu in cpus {
            // The ring's owner writes perf's switch records (in the incoming or outgoing
            // task's context, with its tid, time and CPU): they show switches away from an
            // idle task in which tracepoints do not fire on some guests. A dummy event owns
            // it so that the switch records can be switched on and off like any tracepoint
            // group (the calibration pass times each group alone).
            let ring = Builder::new(Software::DUMMY)
                .any_pid()
                .one_cpu(cpu)
                .exclude_kernel(false)
                .sample_period(1)
                .sample(SampleFlag::TID | SampleFlag::TIME | SampleFlag::CPU)
                .context_switch(true)
                .sample_id_all(true)
                .clockid(Clock::MONOTONIC)
                .enabled(false)
                .build()
                .map_err(|e| {
                    Error::env(format!(
                        "cannot open perf's switch records on CPU {cpu}: {}",
                        crate::evidence::perf::open_error_reason(&e)
                    ))
                })?
                .sampled(rec.ring_bytes)
                .map_err(|e| Error::env(format!("cannot map a perf ring on CPU {cpu}: {e}")))?;
            for f in &decoder.formats {
                let mut b = Builder::new(Tracepoint::with_id(f.id));
                b.any_pid()
                    .one_cpu(cpu)
                    .exclude_kernel(false)
                    .sample_period(1)
                    .sample(SampleFlag::TID | SampleFlag::TIME | SampleFlag::CPU | SampleFlag::RAW)
                    // The kernel writes a full ring's PERF_RECORD_LOST for the event that
                    // could not write: with the sample id it says which CPU lost records.
                    .sample_id_all(true)
                    .clockid(Clock::MONOTONIC)
                    .enabled(false);
                let times = ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING;
                // The samples it could not write (a full ring), where the kernel (6.0 on)
                // counts them: a ring that stays full never gets its lost record written.
                let counter = b
                    .read_format(times | ReadFormat::LOST)
                    .build()
                    .or_else(|_| b.read_format(times).build())
                    .map_err(|e| {
                        Error::env(format!(
                            "cannot open tracepoint {} on CPU {cpu}: {}",
                            f.name,
                            crate::evidence::perf::open_error_reason(&e)
                        ))
                    })?;
                if let Some(filter) = rec.pids.and_then(|pids| filter_for(&f.name, pids)) {
                    let c = std::ffi::CString::new(filter).expect("no NUL");
                    // SAFETY: a NUL-terminated filter string on our own perf fd.
                    let rc = unsafe {
                        libc::ioctl(counter.as_raw_fd(), PERF_EVENT_IOC_SET_FILTER, c.as_ptr())
                    };
                    if rc != 0 && !unfiltered.contains(&f.name) {
                        unfiltered.push(f.name.clone());
                    }
                }
                // SAFETY: redirecting our own perf fd into another of our perf fds on the
                // same CPU with the same clock, as perf_event_open(2) allows.
                let rc = unsafe {
                    libc::ioctl(
                        counter.as_raw_fd(),
                        PERF_EVENT_IOC_SET_OUTPUT,
                        ring.as_raw_fd(),
                    )
                };
                if rc != 0 {
                    return Err(Error::env(format!(
                        "cannot share one perf ring between tracepoints on CPU {cpu}: {}",
                        std::io::Error::last_os_error()
                    )));
                }
                let opened = Opened {
                    cpu,
                    event: f.name.clone(),
                };
                others.push((Group::of_tracepoint(&f.name), opened, counter));
            }
            rings.push(ring);
        }
        Ok(Tracer {
            rings,
            others,
            decoder,
            unfiltered,
        })
    }

    /// Start recording every group.
    pub fn enable(&mut self) -> Result<()> {
        self.enable_only(&Group::ALL)
    }

    /// Start recording the events of `groups` only.
    pub fn enable_only(&mut self, groups: &[Group]) -> Result<()> {
        let err = |e: std::io::Error| Error::env(format!("cannot enable tracing: {e}"));
        if groups.contains(&Group::Switches) {
            for r in &mut self.rings {
                r.enable().map_err(err)?;
            }
        }
        for (g, _, c) in &mut self.others {
            if groups.contains(g) {
                c.enable().map_err(err)?;
            }
        }
        Ok(())
    }

    /// Stop recording (every group).
    pub fn disable(&mut self) {
        for r in &mut self.rings {
            let _ = r.disable();
        }
        for (_, _, c) in &mut self.others {
            let _ = c.disable();
        }
    }

    /// Every tracepoint's own count on every CPU (read after [`Tracer::disable`], so that the
    /// reads send no interrupt to a measured CPU); a counter that cannot be read is left out.
    pub fn counts(&mut self) -> Vec<Counted> {
        self.others
            .iter_mut()
            .filter_map(|(_, o, c)| {
                c.read_full().ok().map(|d| Counted {
                    cpu: o.cpu,
                    event: o.event.clone(),
                    count: d.count(),
                    ring_full: d.lost(),
                })
            })
            .collect()
    }

    /// The records of `groups` while `work` runs.
    pub fn record<T>(
        &mut self,
        groups: &[Group],
        work: impl FnOnce() -> Result<T>,
    ) -> Result<(T, Vec<RawRecord>)> {
        self.enable_only(groups)?;
        let out = work();
        self.disable();
        let mut records = Vec::new();
        self.drain(&mut records);
        Ok((out?, records))
    }

    /// Move every record out of the rings.
    pub fn drain(&mut self, out: &mut Vec<RawRecord>) {
        for r in &mut self.rings {
            while let Some(rec) = r.next_record() {
                out.push(RawRecord {
                    ty: rec.ty(),
                    misc: rec.misc(),
                    body: rec.to_vec(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_name_only_the_participants() {
        let f = filter_for("sched:sched_switch", &[10, 20]).unwrap();
        assert_eq!(
            f,
            "prev_pid == 10 || prev_pid == 20 || next_pid == 10 || next_pid == 20"
        );
        assert_eq!(
            filter_for("raw_syscalls:sys_exit", &[3]).unwrap(),
            "common_pid == 3"
        );
        assert_eq!(
            filter_for("ipi:ipi_send_cpu", &[3]).unwrap(),
            "common_pid == 3"
        );
        // The anatomy's events are recorded in the switching task's context.
        assert_eq!(
            filter_for("tlb:tlb_flush", &[3, 4]).unwrap(),
            "common_pid == 3 || common_pid == 4"
        );
        assert_eq!(
            filter_for("x86_fpu:x86_fpu_regs_deactivated", &[3]).unwrap(),
            "common_pid == 3"
        );
        // Interrupt entries run on behalf of whoever the CPU was running (often idle).
        assert!(filter_for("irq_vectors:reschedule_entry", &[3]).is_none());
    }
}
