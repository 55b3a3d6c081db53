//! What people read: plots, the HTML report, comparisons of runs. Reports never measure.

pub mod facts;
pub mod html;
pub mod input;
pub mod plot;
