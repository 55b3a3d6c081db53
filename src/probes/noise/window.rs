//! One window of busy readers, with the tracer on where it may be: the readers calibrate and
//! sleep, the main thread switches the tracer on, snapshots /proc, sets the start and sleeps
//! in the readers' joins until they end, then snapshots /proc again and collects the records.
//! The main thread is asleep for the whole window, so it takes no CPU from a reader there.

use super::reader::{mono_ns, run, Orders, ReaderOut, Start};
use crate::error::{Error, Result};
use crate::evidence::interrupts::Snapshot;
use crate::evidence::trace::ring::{permission, Counted, Recording, Tracer};
use crate::evidence::trace::{Decoder, RawRecord, NOISE_EVENTS};

/// What to take.
#[derive(Debug, Clone)]
pub struct Asked {
    pub cpus: Vec<usize>,
    pub duration_ns: u64,
    /// None: calibrated on each CPU.
    pub threshold_ns: Option<u64>,
    /// Record tracepoints (where permitted).
    pub trace: bool,
}

/// How the tracer fared.
#[derive(Debug, Clone)]
pub enum Tracing {
    Recorded(Decoder),
    NotPermitted { paranoid: i32 },
    NotAsked,
    Unavailable(String),
}

/// Everything a window gave, before it is concluded.
#[derive(Debug, Clone)]
pub struct Window {
    pub readers: Vec<ReaderOut>,
    pub before: Snapshot,
    pub after: Snapshot,
    pub records: Vec<RawRecord>,
    /// Each tracepoint's own count on each CPU over the time it was enabled (empty where
    /// nothing was traced).
    pub counted: Vec<Counted>,
    pub tracing: Tracing,
}

/// The start is this long after the main thread's snapshot (the readers wake and spin).
const START_AFTER_NS: u64 = 5_000_000;
/// Gaps kept one by one per CPU and second of window, and at most in all (more are counted
/// and summed).
const GAPS_PER_S: u64 = 200_000;
const GAPS_MAX: u64 = 4 << 20;

/// Bytes of ring per CPU for a window of `duration_ns`: about 1 MiB a second, a power of two
/// between 4 and 32 MiB (a full ring drops records, and the attribution says so).
fn ring_bytes(duration_ns: u64) -> usize {
    let want = (duration_ns / 1_000_000_000 + 1) << 20;
    (want.next_power_of_two() as usize).clamp(4 << 20, 32 << 20)
}

fn open_tracer(a: &Asked) -> (Option<Tracer>, Tracing) {
    if !a.trace {
        return (None, Tracing::NotAsked);
    }
    if let Err(paranoid) = permission() {
        return (None, Tracing::NotPermitted { paranoid });
    }
    let rec = Recording {
        events: &NOISE_EVENTS,
        pids: None,
        ring_bytes: ring_bytes(a.duration_ns),
    };
    match Tracer::open_recording(&a.cpus, rec) {
        Ok(t) => {
            let d = t.decoder.clone();
            (Some(t), Tracing::Recorded(d))
        }
        Err(e) => (None, Tracing::Unavailable(e.to_string())),
    }
}

/// Take one window on every asked CPU.
pub fn take(a: &Asked) -> Result<Window> {
    let (mut tracer, tracing) = open_tracer(a);
    let start_at = Start::default();
    let capacity = (a.duration_ns / 1_000_000 * GAPS_PER_S / 1000).clamp(1024, GAPS_MAX) as usize;
    let (tx, rx) = std::sync::mpsc::channel();
    let mut before = Snapshot::default();
    let outs: Vec<std::result::Result<ReaderOut, String>> = std::thread::scope(|scope| {
        let handles = a
            .cpus
            .iter()
            .map(|&cpu| {
                let (tx, start_at) = (tx.clone(), &start_at);
                let orders = Orders {
                    cpu,
                    duration_ns: a.duration_ns,
                    start_at,
                    threshold_ns: a.threshold_ns,
                    capacity,
                };
                // Named, so that its CPU's switches name it apart from other oscost tasks.
                let builder = std::thread::Builder::new().name("oscost-reader".into());
                builder.spawn_scoped(scope, move || {
                    crate::engine::interrupt::block_in_this_thread();
                    let tid = crate::evidence::placement::gettid();
                    if let Err(e) = crate::evidence::placement::pin(tid, &[cpu]) {
                        let _ = tx.send(0);
                        return Err(format!("cannot pin a reader to CPU {cpu}: {e}"));
                    }
                    Ok(run(&orders, &tx))
                })
            })
            .collect::<std::io::Result<Vec<_>>>();
        drop(tx);
        let handles = match handles {
            Ok(h) => h,
            Err(e) => {
                start_at.set(1);
                return vec![Err(format!("cannot start a reader thread: {e}"))];
            }
        };
        for _ in &a.cpus {
            let _ = rx.recv();
        }
        if let Some(t) = tracer.as_mut() {
            if t.enable().is_err() {
                tracer = None;
            }
        }
        before = Snapshot::take();
        start_at.set(mono_ns() + START_AFTER_NS);
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a reader thread panicked".into()))
            })
            .collect()
    });
    let after = Snapshot::take();
    let mut records = Vec::new();
    let mut counted = Vec::new();
    if let Some(t) = tracer.as_mut() {
        t.disable();
        t.drain(&mut records);
        counted = t.counts();
    }
    crate::engine::interrupt::check()?;
    let readers = outs
        .into_iter()
        .collect::<std::result::Result<Vec<_>, String>>()
        .map_err(Error::env)?;
    Ok(Window {
        readers,
        before,
        after,
        records,
        counted,
        tracing: match (tracing, tracer.is_some()) {
            (Tracing::Recorded(_), false) => {
                Tracing::Unavailable("the tracer could not be switched on".into())
            }
            (t, _) => t,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_grow_with_the_window_within_bounds() {
        assert_eq!(ring_bytes(1_000_000_000), 4 << 20);
        assert_eq!(ring_bytes(10_000_000_000), 16 << 20);
        assert_eq!(ring_bytes(600_000_000_000), 32 << 20);
    }

    #[test]
    fn a_window_without_tracing_reads_every_cpu() {
        let cpus = crate::machine::affinity::allowed_cpus();
        let w = take(&Asked {
            cpus: cpus[..1].to_vec(),
            duration_ns: 5_000_000,
            threshold_ns: None,
            trace: false,
        })
        .unwrap();
        assert!(matches!(w.tracing, Tracing::NotAsked));
        assert_eq!(w.readers.len(), 1);
        assert_eq!(w.readers[0].cpu, cpus[0]);
        assert!(w.before.time_ns < w.readers[0].t0 && w.readers[0].t1 < w.after.time_ns);
        assert!(w.records.is_empty() && w.counted.is_empty());
    }
}
