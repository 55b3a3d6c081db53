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

    fn fixture(&self) -> Option<&'static str> {
        Some("timeslice")
    }

    fn quick(&self) -> &'static [&'static str] {
        &[
            "ctx",
            "timeslice",
            "--quick",
            "--slices",
            "1ms",
            "--work",
            "20ms",
            "--budget",
            "200ms",
        ]
    }

    fn evidence(&self) -> Evidence {
        Evidence::Switches
    }
}
