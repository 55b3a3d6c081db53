//! What a run's curves and counts say: knee detection on a latency-versus-size curve (pure, pinned down
//! on synthetic data), and the curves of the working-set sweep and of memory latency read
//! from a finished Run with their knees matched against the cache sizes, and what an evicted
//! file's major faults cost (faults). Nothing here
//! measures or prints: report::sweep and report::memlat render what it finds.

pub mod faults;
pub mod knees;
pub mod memlat;
pub mod sweep;
