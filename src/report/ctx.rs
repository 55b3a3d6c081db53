//! Same-core context switches (pipe, futex and yield ping-pong, time slices): rows of the
//! common table whose evidence is the switches per operation. The sweep, which has a report
//! of its own, is report::sweep.

use crate::report::family::{About, Evidence, Family};

/// The `ctx` probes other than the sweep.
pub struct Ctx;

impl Family for Ctx {
    fn about(&self) -> About {
        About {
            fixture: Some("timeslice"),
            quick: &[
                "ctx",
                "timeslice",
                "--quick",
                "--slices",
                "1ms",
                "--work",
                "20ms",
                "--budget",
                "200ms",
            ],
            evidence: Evidence::Switches,
            ..About::of("ctx")
        }
    }
}
