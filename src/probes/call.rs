//! `call.function`: the cost of a non-inlined function call, against the empty loop.

use crate::engine::measure::{measure, Context, Spec};
use crate::engine::measure::{Participants, Workloads};
use crate::error::Result;
use crate::evidence::clock::now_ns;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::Measurement;
use std::hint::black_box;

pub fn function(ctx: &Context, cpu: usize) -> Result<Measurement> {
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    let spec = Spec::new("call.function", "ns/call", "ns/iteration", 1.0)
        .param("cpus", vec![cpu])
        .note(if super::call_loop::FIXED_SHAPE {
            "a call to a function, minus the same loop without it (both loops in assembly, so \
             their shape does not vary by build)"
        } else {
            "a call to a function the compiler may not inline, minus the same loop without it"
        })
        .events_set(EventSet::Standard);
    let mut raw = |iters: u64| {
        let t0 = now_ns();
        black_box(super::call_loop::raw(iters));
        Ok(now_ns() - t0)
    };
    let mut base = |iters: u64| {
        let t0 = now_ns();
        black_box(super::call_loop::base(iters));
        Ok(now_ns() - t0)
    };
    let me = Participant::this_thread("caller", vec![cpu]);
    measure(
        ctx,
        spec,
        Participants::new(vec![me], vec![None]),
        Workloads {
            raw: &mut raw,
            baseline: Some(&mut base),
        },
        |ev| super::single_thread_verdict(ev, false),
    )
}

/// What an item of this probe takes beyond its samples (see [`crate::engine::estimate::Cost`]): inside `run`
/// (quiet VM, rounds spread) call and the system calls spent nearly their whole budget, 2.7 s
/// of 2.8 s. On the quiet fast host: 1.78–2.50 s in `run`, share 0.6.
pub const COST: crate::engine::estimate::Cost =
    crate::engine::estimate::Cost::converging(0.9, 0.0).quiet(0.6);
