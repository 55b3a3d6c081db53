//! Same-core context switches (pipe, futex and yield ping-pong, time slices): rows of the
//! common table whose evidence is the switches per operation. The sweep, which has a report
//! of its own, is report::sweep.

use crate::report::family::{Evidence, Family};

/// The `ctx` probes other than the sweep.
pub struct Ctx;

impl Family for Ctx {
    fn section(&self) -> &'static str {
        "ctx"
    }

    fn evidence(&self) -> Evidence {
        Evidence::Switches
    }
}
