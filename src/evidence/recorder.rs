//! Collects evidence over the raw-sample windows of one measurement: rusage deltas of every
//! participant, perf event deltas, and placement. Baseline samples run between windows and are
//! not counted, so per-iteration figures describe the mechanism being measured.
//!
//! Observer effect: a task with perf counters attached pays for them at every context switch
//! (about 1 µs per switch in a VM). So perf counters are opened only for evidence windows
//! ([`begin`](Recorder::begin)/[`end`](Recorder::end)) and closed after; quiet windows
//! ([`begin_quiet`](Recorder::begin_quiet)/[`end_quiet`](Recorder::end_quiet)) read only
//! procfs, which costs the measured tasks nothing.

use super::cputime::{self, CpuReading, Whose};
use super::others;
use super::perf::{EventSet, PerfSet};
use super::procfs::{self, TaskSnapshot};
use super::Participant;
use crate::model::{Evidence, Occupancy, ParticipantRusage, Placement, Rusage, RusageEvidence};

pub struct Recorder {
    participants: Vec<Participant>,
    events: EventSet,
    /// Totals of all closed evidence windows.
    perf_totals: Option<PerfSet>,
    /// Counters of the evidence window in progress.
    perf_live: Option<PerfSet>,
    perf_iterations: u64,
    before: Vec<Option<TaskSnapshot>>,
    totals: Vec<Rusage>,
    first: Vec<Option<usize>>,
    iterations: u64,
    window_start: u64,
    /// CPU-time readings at the start of the window in progress.
    cpu_before: Vec<Option<CpuReading>>,
    /// Affinity masks at the first window (to tell that pinning held throughout).
    first_affinity: Vec<Option<Vec<usize>>>,
    /// Each participant's kind, and the order they are read in at opening and closing edges.
    whose: Vec<Whose>,
    order_opening: Vec<usize>,
    order_closing: Vec<usize>,
    /// Occupancy over the windows whose edges were read exactly.
    occ: OccupancyTotals,
    /// /proc/interrupts at the windows' edges.
    irqs: super::interrupts::Windows,
    /// Every task, read before the first window (see [`super::others`]).
    others_before: Option<others::Reading>,
}

/// Running sums behind [`Occupancy`]: only windows whose every reading was current count.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OccupancyTotals {
    pub windows: u64,
    pub exact_windows: u64,
    pub wall_ns: u64,
    pub oncpu_ns: u64,
    pub delay_windows: u64,
    pub delay_wall_ns: u64,
    pub run_delay_ns: u64,
    /// Any participant had a readable CPU time at all.
    pub readable: bool,
}

impl OccupancyTotals {
    /// Add one window given each participant's readings at its start and end.
    pub fn add_window(
        &mut self,
        wall_ns: u64,
        before: &[Option<CpuReading>],
        after: &[Option<CpuReading>],
    ) {
        self.windows += 1;
        let pairs: Vec<(CpuReading, CpuReading)> = before
            .iter()
            .zip(after)
            .filter_map(|(b, a)| b.zip(*a))
            .collect();
        if pairs.is_empty() {
            return;
        }
        self.readable = true;
        let complete = pairs.len() == before.len();
        if complete && pairs.iter().all(|(b, a)| b.exact && a.exact) {
            self.exact_windows += 1;
            self.wall_ns += wall_ns;
            self.oncpu_ns += pairs
                .iter()
                .map(|(b, a)| a.oncpu_ns.saturating_sub(b.oncpu_ns))
                .sum::<u64>();
        }
        if complete && pairs.iter().all(|(b, a)| b.delay_exact && a.delay_exact) {
            self.delay_windows += 1;
            self.delay_wall_ns += wall_ns;
            self.run_delay_ns += pairs
                .iter()
                .map(|(b, a)| {
                    a.run_delay_ns
                        .unwrap_or(0)
                        .saturating_sub(b.run_delay_ns.unwrap_or(0))
                })
                .sum::<u64>();
        }
    }

    /// The occupancy over `cpus` pinned CPUs, None when no participant's CPU time was
    /// readable at all.
    pub fn occupancy(&self, cpus: usize) -> Option<Occupancy> {
        if !self.readable || self.windows == 0 {
            return None;
        }
        Some(Occupancy {
            wall_ns: self.wall_ns,
            oncpu_ns: self.oncpu_ns,
            run_delay_ns: self.run_delay_ns,
            share: if self.wall_ns > 0 {
                self.oncpu_ns as f64 / (self.wall_ns as f64 * cpus.max(1) as f64)
            } else {
                0.0
            },
            delay_wall_ns: self.delay_wall_ns,
            windows: self.windows,
            exact_windows: self.exact_windows,
            cpus,
            method: OCCUPANCY_METHOD.into(),
            others: None,
        })
    }
}

/// A task's affinity mask, sorted (None when unreadable).
fn sorted_affinity(tid: i32) -> Option<Vec<usize>> {
    let mut a = crate::machine::affinity::affinity_of(tid)?;
    a.sort_unstable();
    Some(a)
}

/// How occupancy is read (recorded with it, so older runs read from stale schedstat can be
/// told apart).
pub const OCCUPANCY_METHOD: &str =
    "thread CPU clocks and settled schedstat at the window edges (exact at read)";

impl Recorder {
    pub fn new(participants: Vec<Participant>, events: EventSet) -> Recorder {
        let n = participants.len();
        let whose: Vec<Whose> = participants
            .iter()
            .map(|p| Whose::of(p.pid, p.tid))
            .collect();
        Recorder {
            events,
            perf_totals: None,
            perf_live: None,
            perf_iterations: 0,
            participants,
            before: vec![None; n],
            totals: vec![Rusage::default(); n],
            first: vec![None; n],
            iterations: 0,
            window_start: 0,
            cpu_before: vec![None; n],
            first_affinity: vec![None; n],
            order_opening: {
                let mut o: Vec<usize> = (0..n).collect();
                o.sort_by_key(|&i| whose[i] != Whose::Other);
                o
            },
            order_closing: {
                let mut o: Vec<usize> = (0..n).collect();
                o.sort_by_key(|&i| whose[i] == Whose::Other);
                o
            },
            whose,
            occ: OccupancyTotals::default(),
            irqs: Default::default(),
            others_before: None,
        }
    }

    /// Whether the measurement has partners: a participant other than the calling thread (a
    /// child, another thread), which a spread measurement starts afresh at every call. Why
    /// the sampler asks: fresh partners settle for longer than a later round's short warm-up
    /// (engine::sampler::round_warmup).
    pub fn has_partners(&self) -> bool {
        self.whose.iter().any(|w| *w != Whose::Caller)
    }

    /// Whether an evidence window attaches perf counters (not `EventSet::None`). Why: the
    /// sampler takes no evidence samples for a figure without them (ctx.pipe, ctx.sweep),
    /// whose time it would otherwise throw away (a quarter of the samples).
    pub fn attaches_counters(&self) -> bool {
        self.events != EventSet::None
    }

    /// Start an evidence window: perf counters attached, plus everything a quiet window reads.
    pub fn begin(&mut self) {
        self.read_others();
        // Before the participants are read: its reading allocates, which their rusage must
        // not count.
        self.irqs.opening(super::interrupts::read_table());
        let tids: Vec<i32> = self.participants.iter().map(|p| p.tid).collect();
        self.perf_live = Some(PerfSet::open(&tids, self.events));
        self.snapshot_all();
        if let Some(p) = self.perf_live.as_mut() {
            p.begin();
        }
        self.start_clocks();
    }

    /// Close an evidence window that ran `iterations` raw iterations; its counters are closed.
    pub fn end(&mut self, iterations: u64) {
        let now = crate::evidence::clock::now_ns();
        let cpu_after = self.read_cpu(false);
        if let Some(mut live) = self.perf_live.take() {
            live.end();
            live.close();
            match self.perf_totals.as_mut() {
                Some(t) => t.absorb(&live),
                None => self.perf_totals = Some(live),
            }
            self.perf_iterations += iterations;
        }
        self.close_window(now, cpu_after, iterations);
    }

    /// One quiet window whose counts are thrown away, before the first counted one. Why: a
    /// probe forks its partners before it samples, and after a fork every first write to a
    /// page this process shares with the children is a copy-on-write minor fault; the
    /// recorder's own reads and sums write such pages inside the first windows, which the
    /// measuring thread's rusage then counted (4–8 faults per call of a sweep point, failing
    /// the faults check at large working sets, whose windows hold few laps).
    pub fn prime(&mut self) {
        let (totals, occ, iterations) = (self.totals.clone(), self.occ, self.iterations);
        let irqs = self.irqs.clone();
        self.begin_quiet();
        self.end_quiet(0);
        self.totals = totals;
        self.occ = occ;
        self.iterations = iterations;
        self.irqs = irqs;
    }

    /// Start a quiet window: procfs counters, CPU clocks and placement only.
    pub fn begin_quiet(&mut self) {
        self.read_others();
        self.irqs.opening(super::interrupts::read_table());
        self.snapshot_all();
        self.start_clocks();
    }

    /// Close a quiet window that ran `iterations` raw iterations.
    pub fn end_quiet(&mut self, iterations: u64) {
        let now = crate::evidence::clock::now_ns();
        let cpu_after = self.read_cpu(false);
        self.close_window(now, cpu_after, iterations);
    }

    /// Every other task, once, before the first window opens (outside it: a walk of /proc
    /// takes milliseconds).
    fn read_others(&mut self) {
        if self.others_before.is_none() {
            self.others_before = Some(others::read(true));
        }
    }

    /// Opening order as for the CPU clocks ([`Self::read_cpu`]): this process's threads
    /// last, so the reading (and allocating) of the others' procfs files falls outside their
    /// windows, whose rusage would count what that work costs them.
    fn snapshot_all(&mut self) {
        for &i in &self.order_opening {
            let p = &self.participants[i];
            let snap = procfs::snapshot(p.pid, p.tid);
            if self.first[i].is_none() {
                self.first[i] = snap.and_then(|s| s.processor);
                self.first_affinity[i] = sorted_affinity(p.tid);
            }
            self.before[i] = snap;
        }
    }

    /// CPU clocks last and the wall clock right after, so the window's edges are tight (the
    /// reading of CPU time and of wall time are microseconds apart, not a procfs walk).
    fn start_clocks(&mut self) {
        self.cpu_before = self.read_cpu(true);
        self.window_start = crate::evidence::clock::now_ns();
    }

    /// Every participant's CPU time at one edge. Threads of this process (whose clocks the
    /// reading itself advances) are read last when a window opens and first when it closes,
    /// so reading the others' procfs files falls outside the window.
    fn read_cpu(&self, opening: bool) -> Vec<Option<CpuReading>> {
        let mut out = vec![None; self.participants.len()];
        let order = if opening {
            &self.order_opening
        } else {
            &self.order_closing
        };
        for &i in order {
            let p = &self.participants[i];
            out[i] = cputime::read_as(self.whose[i], p.pid, p.tid, opening);
        }
        out
    }

    fn close_window(&mut self, now: u64, cpu_after: Vec<Option<CpuReading>>, iterations: u64) {
        self.occ.add_window(
            now.saturating_sub(self.window_start),
            &self.cpu_before,
            &cpu_after,
        );
        for &i in &self.order_closing {
            let p = &self.participants[i];
            let after = procfs::snapshot(p.pid, p.tid);
            if let (Some(b), Some(a)) = (self.before[i], after) {
                procfs::accumulate(&mut self.totals[i], &procfs::delta(&b, &a));
            }
        }
        // Last: after the participants' rusage is read.
        self.irqs.closing(super::interrupts::read_table());
        self.iterations += iterations;
    }

    /// Total raw iterations covered so far.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The evidence. `start_cpus` are CPUs participants reported themselves (sched_getcpu at
    /// ready time) where known; otherwise procfs's view at the first window is used.
    pub fn finish(self, start_cpus: &[Option<usize>]) -> Evidence {
        let mut total = Rusage::default();
        let mut parts = Vec::new();
        let mut cpus = Vec::new();
        for (i, p) in self.participants.iter().enumerate() {
            procfs::accumulate(&mut total, &self.totals[i]);
            parts.push(ParticipantRusage {
                role: p.role.clone(),
                pid: p.pid,
                tid: p.tid,
                rusage: self.totals[i],
            });
            let end = procfs::snapshot(p.pid, p.tid).and_then(|s| s.processor);
            cpus.push(Placement {
                role: p.role.clone(),
                pid: p.pid,
                tid: p.tid,
                requested: p.requested.clone(),
                start: start_cpus.get(i).copied().flatten().or(self.first[i]),
                end,
                affinity_held: !p.requested.is_empty()
                    && self.first_affinity[i].as_deref() == Some(&p.requested[..])
                    && sorted_affinity(p.tid).as_deref() == Some(&p.requested[..]),
            });
        }
        let pinned: std::collections::BTreeSet<usize> = self
            .participants
            .iter()
            .flat_map(|p| p.requested.iter().copied())
            .collect();
        let mut occupancy = self.occ.occupancy(pinned.len());
        if let (Some(o), Some(before)) = (occupancy.as_mut(), &self.others_before) {
            let tids: Vec<i32> = self.participants.iter().map(|p| p.tid).collect();
            o.others = others::between(before, &others::read(false), &pinned, &tids);
        }
        // The probe's CPUs: where it was pinned, else where its participants ran.
        let irq_cpus: Vec<usize> = if pinned.is_empty() {
            cpus.iter()
                .flat_map(|p| p.start.into_iter().chain(p.end))
                .collect()
        } else {
            pinned.iter().copied().collect()
        };
        let interrupts = self.irqs.finish(&irq_cpus);
        Evidence {
            occupancy,
            interrupts,
            rusage: RusageEvidence {
                total,
                iterations: self.iterations,
                wall_ns: None,
                participants: parts,
            },
            events: match &self.perf_totals {
                Some(t) => t.readings(self.perf_iterations),
                None => Default::default(),
            },
            cpus,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The priming window counts nothing: faults, switches and iterations start from the
    /// first counted window, and that window still counts what happens in it.
    #[test]
    fn the_priming_window_is_thrown_away_and_the_next_one_counts() {
        let me = Participant::this_thread("measuring thread", vec![]);
        let mut alone = Recorder::new(vec![me.clone()], EventSet::None);
        alone.prime();
        let ev = alone.finish(&[None]);
        assert_eq!(ev.rusage.iterations, 0);
        let t = &ev.rusage.total;
        assert_eq!(
            (t.minflt, t.nvcsw, t.utime_us, t.stime_us),
            (0, 0, 0, 0),
            "{t:?}"
        );
        let mut rec = Recorder::new(vec![me], EventSet::None);
        rec.prime();
        assert_eq!(rec.iterations(), 0);
        // A fresh mapping written inside the window: minor faults of this thread.
        let ws = crate::probes::workset::WorkingSet::map(64 << 12, None).unwrap();
        rec.begin_quiet();
        ws.fill();
        rec.end_quiet(7);
        let ev = rec.finish(&[None]);
        assert_eq!(ev.rusage.iterations, 7);
        assert!(ev.rusage.total.minflt >= 32, "{:?}", ev.rusage.total);
        // The interrupts of the one counted window (the priming one is thrown away), on
        // the CPU it ran on, where /proc/interrupts is readable.
        if super::super::interrupts::read_table().is_some() {
            let irqs = ev.interrupts.expect("interrupts read");
            assert_eq!(irqs.windows, 1);
            assert!(!irqs.cpus.is_empty(), "{irqs:?}");
        }
    }
}
