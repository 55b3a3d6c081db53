//! What the machine saw while a probe ran: per-task rusage counters, perf events and CPU
//! placement. The engine opens a [`recorder::Recorder`] around the raw samples; probes only
//! name their participants.

pub mod clock;
pub mod cputime;
pub mod interrupts;
pub mod others;
pub mod perf;
pub mod placement;
pub mod procfs;
pub mod recorder;
pub mod task;
pub mod trace;

/// A task whose behaviour is evidence: the measuring thread, a forked partner, a partner thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Participant {
    pub role: String,
    pub pid: i32,
    pub tid: i32,
    /// CPUs it was pinned to (empty = unpinned).
    pub requested: Vec<usize>,
}

impl Participant {
    /// A forked, single-threaded partner process.
    pub fn child(pid: i32, requested: Vec<usize>) -> Self {
        Participant {
            role: "child".into(),
            pid,
            tid: pid,
            requested,
        }
    }

    /// Another thread of this process.
    pub fn thread(role: &str, tid: i32, requested: Vec<usize>) -> Self {
        Participant {
            role: role.into(),
            pid: std::process::id() as i32,
            tid,
            requested,
        }
    }

    /// The calling thread.
    pub fn this_thread(role: &str, requested: Vec<usize>) -> Self {
        Participant {
            role: role.into(),
            pid: std::process::id() as i32,
            tid: placement::gettid(),
            requested,
        }
    }
}
