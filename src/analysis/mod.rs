//! What a run's curves say: knee detection on a latency-versus-size curve (pure, pinned down
//! on synthetic data), and the curves of the working-set sweep and of memory latency read
//! from a finished Run with their knees matched against the cache sizes. Nothing here
//! measures or prints: report::sweep and report::memlat render what it finds.

pub mod knees;
pub mod memlat;
pub mod sweep;
