//! perf_event_open counters (through the perf-event2 crate) on every participant.
//!
//! Each event is its own counter (not one group), so an event the PMU cannot schedule
//! together with the others is multiplexed and scaled by time_enabled/time_running instead
//! of silently reading zero; scaling is flagged in the reading. An event that cannot be opened
//! records why (no PMU, paranoid setting, permission) and never fails the probe.

use crate::machine::pmu::{spec_named, PerfEvent, CACHE_REFS, HARDWARE, SOFTWARE, STORES};
use crate::model::EventReading;
use perf_event::Counter;
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
    /// No counters at all: evidence from rusage, procfs and CPU clocks only. For figures that
    /// must not carry the kernel's perf scheduling hooks, which stay on for a second after
    /// any per-task counter closes (see [`since_last_close_ns`]).
    None,
}

/// When this process last closed per-task counters (ns on the engine's clock; 0 = never).
static LAST_CLOSE_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How long the kernel keeps its perf scheduling hooks on after the last per-task counter
/// closes: kernel/events/core.c unaccount_event() switches the `perf_sched_events` static key
/// off from a work item delayed by HZ (1 s). Until then every context switch on the machine
/// runs perf's sched-out/sched-in hooks, even with no counter attached (a few % of a pipe
/// round trip here, measured by ctx::tax). A margin of 0.1 s is added.
pub const HOOKS_LINGER_NS: u64 = 1_100_000_000;

/// Nanoseconds since this process last closed per-task counters, or None if it never did.
pub fn since_last_close_ns() -> Option<u64> {
    match LAST_CLOSE_NS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        t => Some(crate::evidence::clock::now_ns().saturating_sub(t)),
    }
}

/// Record that this process closed per-task counters just now, for [`since_last_close_ns`]:
/// every [`PerfSet`] does when it closes, and so must anything else that opens counters on a
/// task (the machine facts' PMU probe), since the hooks linger after those too.
pub fn note_closed_now() {
    LAST_CLOSE_NS.store(
        crate::evidence::clock::now_ns().max(1),
        std::sync::atomic::Ordering::Relaxed,
    );
}

fn specs(set: EventSet) -> Vec<&'static PerfEvent> {
    if set == EventSet::None {
        return Vec::new();
    }
    let mut v: Vec<&PerfEvent> = SOFTWARE.iter().collect();
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

/// A counter that can be read: count, time enabled, time running. The seam between the
/// accounting here (windows, multiplex scaling, per-op figures, reasons) and the PMU: tests
/// feed recorded values through it on machines (and CI) that have no PMU.
pub trait ReadCounter {
    fn read(&mut self) -> std::io::Result<(u64, u64, u64)>;
}

impl ReadCounter for Counter {
    fn read(&mut self) -> std::io::Result<(u64, u64, u64)> {
        let v = self.read_count_and_time()?;
        Ok((v.count, v.time_enabled, v.time_running))
    }
}

/// What an event is, for an opener: its perf-stat name and whether it is counted only in
/// the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventInfo {
    pub name: &'static str,
    pub kernel_side: bool,
}

/// Opens one event on one task: the counter and an optional note, or why it cannot be.
pub type Opener<'a> =
    dyn FnMut(EventInfo, i32) -> Result<(Box<dyn ReadCounter>, Option<String>), String> + 'a;

/// One event's counters on every participant, and what was accumulated over raw windows.
struct Slot {
    name: &'static str,
    counters: Vec<Box<dyn ReadCounter>>,
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
        let specs = specs(set);
        Self::open_with(tids, set, &mut |info, tid| {
            let spec = specs
                .iter()
                .find(|s| s.name == info.name)
                .expect("the opener is asked only for the set's own events");
            open_one(spec, tid, false).map(|(c, note)| (Box::new(c) as Box<dyn ReadCounter>, note))
        })
    }

    /// [`open`](Self::open) through `opener` (the PMU, or recorded values in tests).
    pub fn open_with(tids: &[i32], set: EventSet, opener: &mut Opener<'_>) -> PerfSet {
        Self::open_specs(tids, &specs(set), opener)
    }

    /// Counters for the events `names` (perf-stat names, [`event_names`]) on a program that
    /// is about to exec: opened on `pid` (stopped before its exec) disabled, counting from
    /// its exec on (`enable_on_exec`) and in every task it starts (`inherit`), as `perf
    /// stat CMD` counts a command. Read them after the program was reaped.
    pub fn open_on_exec(pid: i32, names: &[&str]) -> PerfSet {
        Self::open_named_with(&[pid], names, &mut |info, tid| {
            let spec = spec_named(info.name).expect("asked only for known events");
            open_one(spec, tid, true).map(|(c, note)| (Box::new(c) as Box<dyn ReadCounter>, note))
        })
    }

    /// The events `names` (unknown names are left out: [`event_names`] says which exist)
    /// on every task of `tids`, through `opener`.
    pub fn open_named_with(tids: &[i32], names: &[&str], opener: &mut Opener<'_>) -> PerfSet {
        let specs: Vec<&PerfEvent> = names.iter().filter_map(|n| spec_named(n)).collect();
        Self::open_specs(tids, &specs, opener)
    }

    fn open_specs(tids: &[i32], specs: &[&PerfEvent], opener: &mut Opener<'_>) -> PerfSet {
        let mut slots = Vec::new();
        for &spec in specs {
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
            let info = EventInfo {
                name: spec.name,
                kernel_side: spec.kernel_side,
            };
            for &tid in tids {
                match opener(info, tid) {
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
                    .map(|c| c.read().unwrap_or((0, 0, 0)))
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
        let mut any = false;
        for s in &mut self.slots {
            any |= !s.counters.is_empty();
            s.counters.clear();
            s.last.clear();
        }
        if any {
            note_closed_now();
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

impl Drop for PerfSet {
    /// Dropped counters close too: record when, for [`since_last_close_ns`].
    fn drop(&mut self) {
        self.close();
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
/// reason rather than reported as zero. `on_exec`: for a program stopped before its exec,
/// disabled until the exec and inherited by every task it starts; otherwise enabled now.
fn open_one(
    spec: &PerfEvent,
    tid: i32,
    on_exec: bool,
) -> Result<(Counter, Option<String>), String> {
    let build = |include_kernel: bool| {
        let mut b = spec.builder();
        b.observe_pid(tid)
            .any_cpu()
            .inherit(on_exec)
            .enable_on_exec(on_exec)
            .exclude_kernel(!include_kernel)
            .exclude_hv(true);
        let mut c = b.build()?;
        if !on_exec {
            c.enable()?;
        }
        Ok(c)
    };
    open_with_fallback(spec.kernel_side, build)
}

/// The opening rule, apart from the PMU: try with kernel counting; when that is not
/// permitted, fall back to user-space counting with a note, except for kernel-side events
/// (scheduler events would read 0), which are refused with the reason.
pub fn open_with_fallback<C>(
    kernel_side: bool,
    mut build: impl FnMut(bool) -> std::io::Result<C>,
) -> Result<(C, Option<String>), String> {
    match build(true) {
        Ok(c) => Ok((c, None)),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) => {
            if kernel_side {
                return Err(format!(
                    "{}; kernel-side counting is required for this event",
                    open_error_reason(&e)
                ));
            }
            let c = build(false).map_err(|e| open_error_reason(&e))?;
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

    /// A counter replaying recorded (count, enabled, running) readings, one per read.
    struct Recorded(std::collections::VecDeque<(u64, u64, u64)>);

    impl ReadCounter for Recorded {
        fn read(&mut self) -> std::io::Result<(u64, u64, u64)> {
            self.0
                .pop_front()
                .ok_or_else(|| std::io::Error::other("no more recorded readings"))
        }
    }

    fn errno(e: i32) -> std::io::Error {
        std::io::Error::from_raw_os_error(e)
    }

    /// A PMU-less machine as recorded: software events read, hardware ones do not open.
    fn recorded_machine(
        info: EventInfo,
        tid: i32,
    ) -> Result<(Box<dyn ReadCounter>, Option<String>), String> {
        match info.name {
            // Two windows: 1000 switches per task per window, always running.
            "context-switches" => Ok((
                Box::new(Recorded(
                    [(0, 0, 0), (1000, 10, 10), (1000, 10, 10), (2000, 20, 20)].into(),
                )),
                None,
            )),
            // Multiplexed: counted a quarter of the time it was enabled.
            "page-faults" => Ok((
                Box::new(Recorded([(0, 0, 0), (50 + tid as u64, 400, 100)].into())),
                None,
            )),
            "minor-faults" | "major-faults" | "cpu-migrations" | "task-clock" => {
                Ok((Box::new(Recorded([(0, 0, 0), (0, 10, 10)].into())), None))
            }
            _ => Err(open_error_reason(&errno(libc::ENOENT))),
        }
    }

    #[test]
    fn the_none_set_opens_nothing_and_closing_counters_is_remembered() {
        let mut asked = 0;
        let mut opener = |i: EventInfo, t: i32| {
            asked += 1;
            recorded_machine(i, t)
        };
        let set = PerfSet::open_with(&[1, 2], EventSet::None, &mut opener);
        assert!(set.readings(1).is_empty());
        drop(set);
        assert_eq!(asked, 0);
        // Closing a set that held counters stamps the time; it is never in the future.
        let mut set = PerfSet::open_with(&[1], EventSet::Software, &mut recorded_machine);
        set.close();
        let age = since_last_close_ns().expect("a close was recorded");
        assert!(age < 60_000_000_000, "{age}");
    }

    #[test]
    fn recorded_counters_give_per_op_figures_and_scale_multiplexing() {
        let mut set = PerfSet::open_with(&[1, 2], EventSet::Standard, &mut recorded_machine);
        set.begin();
        set.end();
        set.close();
        let r = set.readings(500);
        // 1000 switches on each of two tasks over 500 iterations: 4 per op.
        let cs = &r["context-switches"];
        assert_eq!(
            (cs.total, cs.per_op, cs.scaled),
            (Some(2000.0), Some(4.0), false)
        );
        // (51 + 52) counted over 1/4 of the enabled time: scaled ×4, and flagged.
        let pf = &r["page-faults"];
        assert!(pf.scaled, "{pf:?}");
        assert_eq!(pf.total, Some(412.0));
        assert_eq!(pf.per_op, Some(412.0 / 500.0));
        // No PMU: every hardware event says why, none reads as zero.
        for name in [
            "cycles",
            "instructions",
            "L1-dcache-loads",
            "LLC-load-misses",
        ] {
            let e = &r[name];
            assert!(!e.supported && e.total.is_none(), "{name}: {e:?}");
            assert!(
                e.reason.as_deref().unwrap().contains("no PMU"),
                "{name}: {e:?}"
            );
        }
    }

    #[test]
    fn absorbed_windows_add_up() {
        let mut a = PerfSet::open_with(&[1], EventSet::Software, &mut recorded_machine);
        a.begin();
        a.end();
        let mut b = PerfSet::open_with(&[1], EventSet::Software, &mut recorded_machine);
        b.begin();
        b.end();
        a.absorb(&b);
        assert_eq!(a.readings(100)["context-switches"].total, Some(2000.0));
    }

    #[test]
    fn permission_rules_for_kernel_side_events() {
        // Kernel counting refused: a scheduler event is refused with the reason...
        let denied = |k: bool| if k { Err(errno(libc::EACCES)) } else { Ok(7u8) };
        let e = open_with_fallback(true, denied).unwrap_err();
        assert!(
            e.contains("permission denied") && e.contains("kernel-side counting is required"),
            "{e}"
        );
        // ...a user-space event falls back and says so.
        let (c, note) = open_with_fallback(false, denied).unwrap();
        assert_eq!(c, 7);
        assert!(note.unwrap().contains("user-space only"));
        // Other errors are named in plain words.
        let e = open_with_fallback(false, |_| Err::<u8, _>(errno(libc::ENOSYS))).unwrap_err();
        assert!(e.contains("not available in this kernel"), "{e}");
        let e = open_with_fallback(false, |_| Err::<u8, _>(errno(libc::EMFILE))).unwrap_err();
        assert!(e.contains("too many open files"), "{e}");
        assert_eq!(
            open_with_fallback(true, |_| Ok::<u8, std::io::Error>(1)).unwrap(),
            (1, None)
        );
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
