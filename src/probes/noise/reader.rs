//! The busy reader: one thread pinned to a CPU that reads CLOCK_MONOTONIC (the tracer's clock,
//! through the vDSO: no system call) in a tight loop and records every step between two reads
//! longer than a threshold, the method of sysjitter and of rtla's osnoise, from user space.
//! Before the window it calibrates: the loop's median step over a short run sets the default
//! threshold. The gap record is allocated before the window, so the loop never allocates.

use crate::evidence::clock::read;
use std::sync::{Condvar, Mutex};

/// How long the calibration loop runs, ns.
const CALIBRATE_NS: u64 = 20_000_000;
/// The default threshold as a multiple of the loop's median step.
pub const THRESHOLD_STEPS: f64 = 10.0;
/// Steps up to this many ns are counted one by one in the calibration (longer ones are gaps).
const STEP_BINS: usize = 1024;

/// A monotonic nanosecond timestamp on the tracer's clock.
#[inline(always)]
pub fn mono_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// What one reader saw in its window.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReaderOut {
    pub cpu: usize,
    pub tid: i32,
    /// Its first and last clock read in the window (CLOCK_MONOTONIC ns).
    pub t0: u64,
    pub t1: u64,
    /// Its thread clock over the window, ns.
    pub cpu_ns: u64,
    /// The calibrated median step, ns.
    pub step_ns: f64,
    pub threshold_ns: u64,
    pub reads: u64,
    /// Every gap as (start = the read before it, length), in order.
    pub gaps: Vec<(u64, u64)>,
    /// Gaps past the record's capacity: counted and summed only.
    pub unrecorded: u64,
    pub unrecorded_ns: u64,
    /// The CPU it ran on at the start and at the end (sched_getcpu).
    pub start_cpu: Option<usize>,
    pub end_cpu: Option<usize>,
}

/// The loop's median step over `CALIBRATE_NS`, ns.
pub fn calibrate() -> f64 {
    let mut bins = [0u32; STEP_BINS];
    let start = mono_ns();
    let mut prev = start;
    let mut n = 0u64;
    while prev - start < CALIBRATE_NS {
        let t = mono_ns();
        let d = (t - prev) as usize;
        if d < STEP_BINS {
            bins[d] += 1;
            n += 1;
        }
        prev = t;
    }
    let mut seen = 0u64;
    for (ns, &c) in bins.iter().enumerate() {
        seen += c as u64;
        if seen * 2 >= n {
            return ns.max(1) as f64;
        }
    }
    STEP_BINS as f64
}

/// The default threshold for a loop of median step `step_ns`.
pub fn default_threshold(step_ns: f64) -> u64 {
    (step_ns * THRESHOLD_STEPS).ceil().max(1.0) as u64
}

/// When the window begins: 0 until the main thread sets it, then the CLOCK_MONOTONIC time.
/// Readers sleep on it until it is set (the main thread's snapshots then take no CPU from a
/// spinning reader) and spin from then until the time comes.
#[derive(Debug, Default)]
pub struct Start {
    at: Mutex<u64>,
    set: Condvar,
}

impl Start {
    /// Begin at `t` (CLOCK_MONOTONIC ns), and wake the readers.
    pub fn set(&self, t: u64) {
        *self.at.lock().unwrap_or_else(|p| p.into_inner()) = t;
        self.set.notify_all();
    }

    /// Sleep until the start is set, and return it.
    fn wait(&self) -> u64 {
        let mut at = self.at.lock().unwrap_or_else(|p| p.into_inner());
        while *at == 0 {
            at = self.set.wait(at).unwrap_or_else(|p| p.into_inner());
        }
        *at
    }
}

/// What a reader is told: where, how long, from what start, the threshold (None:
/// calibrated) and the record's capacity.
pub struct Orders<'a> {
    pub cpu: usize,
    pub duration_ns: u64,
    pub start_at: &'a Start,
    pub threshold_ns: Option<u64>,
    pub capacity: usize,
}

/// Calibrate, say so through `ready` (the threshold), wait for the start, read until the
/// window's end (or Ctrl-C). The caller pins the thread first.
pub fn run(o: &Orders<'_>, ready: &std::sync::mpsc::Sender<u64>) -> ReaderOut {
    let tid = crate::evidence::placement::gettid();
    let step_ns = calibrate();
    let threshold_ns = o.threshold_ns.unwrap_or_else(|| default_threshold(step_ns));
    let mut gaps = Vec::with_capacity(o.capacity);
    let _ = ready.send(threshold_ns);
    let start = o.start_at.wait();
    while mono_ns() < start {
        std::hint::spin_loop();
    }
    let start_cpu = crate::evidence::placement::current_cpu();
    let cpu0 = crate::evidence::cputime::thread_cpu_ns(tid).unwrap_or(0);
    let t0 = mono_ns();
    let end = t0 + o.duration_ns;
    let (mut prev, mut reads, mut unrecorded, mut unrecorded_ns) = (t0, 0u64, 0u64, 0u64);
    while prev < end {
        let t = mono_ns();
        let d = t - prev;
        if d > threshold_ns {
            if gaps.len() < o.capacity {
                gaps.push((prev, d));
            } else {
                unrecorded += 1;
                unrecorded_ns += d;
            }
        }
        prev = t;
        reads += 1;
        if reads & 0xfff == 0 && crate::engine::interrupt::requested() {
            break;
        }
    }
    let cpu1 = crate::evidence::cputime::thread_cpu_ns(tid).unwrap_or(cpu0);
    ReaderOut {
        cpu: o.cpu,
        tid,
        t0,
        t1: prev,
        cpu_ns: cpu1.saturating_sub(cpu0),
        step_ns,
        threshold_ns,
        reads,
        gaps,
        unrecorded,
        unrecorded_ns,
        start_cpu,
        end_cpu: crate::evidence::placement::current_cpu(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_threshold_is_ten_steps() {
        assert_eq!(default_threshold(25.0), 250);
        assert_eq!(default_threshold(0.0), 1);
    }

    #[test]
    fn a_short_window_reads_and_ends() {
        let start = Start::default();
        start.set(mono_ns());
        let (tx, rx) = std::sync::mpsc::channel();
        let out = run(
            &Orders {
                cpu: 0,
                duration_ns: 2_000_000,
                start_at: &start,
                threshold_ns: Some(1),
                capacity: 4,
            },
            &tx,
        );
        assert_eq!(rx.recv().unwrap(), 1);
        assert!(out.reads > 0 && out.t1 >= out.t0 + 2_000_000);
        // Every step longer than 1 ns is a gap: the record holds 4, the rest are counted.
        assert_eq!(out.gaps.len(), 4);
        assert!(out.unrecorded > 0);
        assert!(out.gaps.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
