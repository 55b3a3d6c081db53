//! Collects evidence over the raw-sample windows of one measurement: rusage deltas of every
//! participant, perf event deltas, and placement. Baseline samples run between windows and are
//! not counted, so per-iteration figures describe the mechanism being measured.
//!
//! Observer effect: a task with perf counters attached pays for them at every context switch
//! (about 1 µs per switch in a VM). So perf counters are opened only for evidence windows
//! ([`begin`](Recorder::begin)/[`end`](Recorder::end)) and closed after; quiet windows
//! ([`begin_quiet`](Recorder::begin_quiet)/[`end_quiet`](Recorder::end_quiet)) read only
//! procfs, which costs the measured tasks nothing.

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
    wall_ns: u64,
    oncpu_ns: Option<u64>,
    run_delay_ns: u64,
}

impl Recorder {
    pub fn new(participants: Vec<Participant>, events: EventSet) -> Recorder {
        let n = participants.len();
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
            wall_ns: 0,
            oncpu_ns: Some(0),
            run_delay_ns: 0,
        }
    }

    /// Start an evidence window: perf counters attached, plus everything a quiet window reads.
    pub fn begin(&mut self) {
        let tids: Vec<i32> = self.participants.iter().map(|p| p.tid).collect();
        self.perf_live = Some(PerfSet::open(&tids, self.events));
        self.begin_quiet();
        if let Some(p) = self.perf_live.as_mut() {
            p.begin();
        }
        self.window_start = crate::engine::clock::now_ns();
    }

    /// Close an evidence window that ran `iterations` raw iterations; its counters are closed.
    pub fn end(&mut self, iterations: u64) {
        let now = crate::engine::clock::now_ns();
        if let Some(mut live) = self.perf_live.take() {
            live.end();
            live.close();
            match self.perf_totals.as_mut() {
                Some(t) => t.absorb(&live),
                None => self.perf_totals = Some(live),
            }
            self.perf_iterations += iterations;
        }
        self.end_quiet_at(now, iterations);
    }

    /// Start a quiet window: procfs counters, schedstat and placement only.
    pub fn begin_quiet(&mut self) {
        for (i, p) in self.participants.iter().enumerate() {
            let snap = procfs::snapshot(p.pid, p.tid);
            if self.first[i].is_none() {
                self.first[i] = snap.and_then(|s| s.processor);
            }
            self.before[i] = snap;
        }
        self.window_start = crate::engine::clock::now_ns();
    }

    /// Close a quiet window that ran `iterations` raw iterations.
    pub fn end_quiet(&mut self, iterations: u64) {
        self.end_quiet_at(crate::engine::clock::now_ns(), iterations);
    }

    fn end_quiet_at(&mut self, now: u64, iterations: u64) {
        self.wall_ns += now.saturating_sub(self.window_start);
        for (i, p) in self.participants.iter().enumerate() {
            let after = procfs::snapshot(p.pid, p.tid);
            if let (Some(b), Some(a)) = (self.before[i], after) {
                procfs::accumulate(&mut self.totals[i], &procfs::delta(&b, &a));
            }
            let oncpu = match (self.before[i], after) {
                (Some(b), Some(a)) => b.oncpu_ns.zip(a.oncpu_ns).map(|(x, y)| {
                    let delay = a
                        .run_delay_ns
                        .unwrap_or(0)
                        .saturating_sub(b.run_delay_ns.unwrap_or(0));
                    self.run_delay_ns += delay;
                    y.saturating_sub(x)
                }),
                _ => None,
            };
            self.oncpu_ns = self.oncpu_ns.zip(oncpu).map(|(t, d)| t + d);
        }
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
            });
        }
        let pinned: std::collections::BTreeSet<usize> = self
            .participants
            .iter()
            .flat_map(|p| p.requested.iter().copied())
            .collect();
        let occupancy = self
            .oncpu_ns
            .filter(|_| self.wall_ns > 0 && !self.participants.is_empty())
            .map(|oncpu| Occupancy {
                wall_ns: self.wall_ns,
                oncpu_ns: oncpu,
                run_delay_ns: self.run_delay_ns,
                share: oncpu as f64 / (self.wall_ns as f64 * pinned.len().max(1) as f64),
            });
        Evidence {
            occupancy,
            rusage: RusageEvidence {
                total,
                iterations: self.iterations,
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
