//! Everything that turns a Run into something a person or a script reads: terminal tables,
//! JSON/CSV, plots, the HTML report, comparisons of runs. Reports never measure.

pub mod export;
pub mod fault;
pub mod lab;
pub mod plot;
pub mod table;
pub mod timev;
pub mod units;
