//! oscost: measures what the operating system and the hardware under it cost, and explains why.
//!
//! Data flows one way: CLI → plan → engine runs probes → Run → report/store.

pub mod analysis;
pub mod cli;
pub mod compare;
pub mod engine;
pub mod error;
pub mod escape;
pub mod evidence;
pub mod input;
pub mod journal;
pub mod machine;
pub mod model;
pub mod probes;
pub mod report;
pub mod store;
pub mod units;
