//! What people read: plots, the HTML report, comparisons of runs. Reports never measure.

pub mod plot;
