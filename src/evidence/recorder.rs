//! Collects evidence over the raw-sample windows of one measurement: rusage deltas of every
//! participant, perf event deltas, and placement. Baseline samples run between windows and are
//! not counted, so per-iteration figures describe the mechanism being measured.

use super::perf::{EventSet, PerfSet};
use super::procfs::{self, TaskSnapshot};
use super::Participant;
use crate::model::{Evidence, ParticipantRusage, Placement, Rusage, RusageEvidence};

pub struct Recorder {
    participants: Vec<Participant>,
    perf: PerfSet,
    before: Vec<Option<TaskSnapshot>>,
    totals: Vec<Rusage>,
    first: Vec<Option<usize>>,
    iterations: u64,
}

impl Recorder {
    pub fn new(participants: Vec<Participant>, events: EventSet) -> Recorder {
        let tids: Vec<i32> = participants.iter().map(|p| p.tid).collect();
        let n = participants.len();
        Recorder {
            perf: PerfSet::open(&tids, events),
            participants,
            before: vec![None; n],
            totals: vec![Rusage::default(); n],
            first: vec![None; n],
            iterations: 0,
        }
    }

    /// Start a raw-sample window.
    pub fn begin(&mut self) {
        for (i, p) in self.participants.iter().enumerate() {
            let snap = procfs::snapshot(p.pid, p.tid);
            if self.first[i].is_none() {
                self.first[i] = snap.and_then(|s| s.processor);
            }
            self.before[i] = snap;
        }
        self.perf.begin();
    }

    /// Close a raw-sample window that ran `iterations` raw iterations.
    pub fn end(&mut self, iterations: u64) {
        self.perf.end();
        for (i, p) in self.participants.iter().enumerate() {
            if let (Some(b), Some(a)) = (self.before[i], procfs::snapshot(p.pid, p.tid)) {
                procfs::accumulate(&mut self.totals[i], &procfs::delta(&b, &a));
            }
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
        Evidence {
            rusage: RusageEvidence {
                total,
                iterations: self.iterations,
                participants: parts,
            },
            events: self.perf.readings(self.iterations),
            cpus,
        }
    }
}
