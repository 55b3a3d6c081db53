//! How to measure: the clock, the one sampling loop, statistics, subtraction, checks, and the
//! partner processes/threads that probes run against.

pub mod canary;
pub mod checks;
pub mod clock;
pub mod derive;
pub mod estimate;
pub mod eta;
pub mod fit;
pub mod interrupt;
pub mod measure;
pub mod merge;
pub mod modes;
pub mod partner;
pub mod plan;
pub mod sampler;
pub mod stats;
