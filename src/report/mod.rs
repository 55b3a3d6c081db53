//! Everything that turns a Run into something a person or a script reads. Reports never
//! measure.

pub mod export;
pub mod memlat;
pub mod sweep;
pub mod table;
pub mod units;
