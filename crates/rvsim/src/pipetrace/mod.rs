//! The pipeline as a picture: a window of a run, cycle by cycle, with every stall and flush
//! and its cause. [`record`] runs the machine one step at a time through the window (the
//! per-instruction engine, nothing added to the run loop), [`build`] turns the steps into rows
//! of cells (`IF ID EX MEM WB`, stalls as repeated stages, `--` for an interrupted
//! instruction's empty slot, `x` where a flushed one is squashed) and hazards, [`text`] draws
//! it for a terminal and [`kanata`] writes it for the Konata pipeline viewer.

pub mod kanata;
pub mod record;
pub mod text;
pub mod timeline;

pub use record::{record, Recording, Start, StepKind, StepRecord, Window};
pub use timeline::{build, Cell, Diagram, Fate, Hazard, HazardKind, Row, Stage, Totals, Via};
