//! Pure analysis of measured curves: byte sizes as users type them, knee detection on a
//! latency-versus-size curve, and which cache level a working set exceeds. Nothing here
//! measures or prints; probes and reports both call it, and the tests pin it down on
//! synthetic data.

pub mod caches;
pub mod fit;
pub mod knees;
pub mod modes;
pub mod sizes;
