//! Memory-hierarchy probes: what one load costs as the working set outgrows each cache and
//! the TLB's reach.

pub mod latency;
