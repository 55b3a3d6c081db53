//! Two figures of a function call, each against the same loop without it:
//! `call.function`, what a call adds to a loop whose iterations overlap (each call's argument
//! is the loop counter, so the core runs calls of several iterations at once), and
//! `call.chain`, what it adds to a dependent chain (each call's argument is the previous
//! call's result, so no call starts before the one before it returns).

use crate::engine::measure::{measure, Context, Spec};
use crate::engine::measure::{Participants, Workloads};
use crate::error::Result;
use crate::evidence::clock::now_ns;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::{Measurement, ProbeId};

use super::call_loop::FIXED_SHAPE;
use crate::units::{Per, Unit};
use std::hint::black_box;

/// What a call adds to a loop whose iterations overlap.
pub const FUNCTION: ProbeId = ProbeId("call.function");
/// What a call adds to a dependent chain.
pub const CHAIN: ProbeId = ProbeId("call.chain");

/// One figure: its id, its loop with the call and without, and its note where the loops are
/// in assembly and where they are Rust.
struct Figure {
    id: ProbeId,
    loops: [fn(u64) -> u64; 2],
    notes: [&'static str; 2],
}

pub fn function(ctx: &Context, cpu: usize) -> Result<Measurement> {
    let fig = Figure {
        id: FUNCTION,
        loops: [super::call_loop::raw, super::call_loop::base],
        notes: [
            "what a call adds to a loop whose iterations overlap (f(i) of the loop counter), \
             minus the same loop without it (both loops in assembly, so their shape does not \
             vary by build)",
            "what a call adds to a loop whose iterations overlap (f(i) of the loop counter; a \
             function the compiler may not inline), minus the same loop without it",
        ],
    };
    against_loop(ctx, cpu, fig)
}

pub fn chain(ctx: &Context, cpu: usize) -> Result<Measurement> {
    let fig = Figure {
        id: CHAIN,
        loops: [super::call_loop::chain_raw, super::call_loop::chain_base],
        notes: [
            "what a call adds to a dependent chain (x = f(x), f(x) = x + 1: each call waits \
             for the one before), minus the same chain with x + 1 in place (both in assembly)",
            "what a call adds to a dependent chain (x = f(x), f(x) = x + 1, a function the \
             compiler may not inline), minus the same chain with x + 1 in place",
        ],
    };
    against_loop(ctx, cpu, fig)
}

/// `fig` measured on `cpu`: its loop with the call timed against the one without, each given
/// the iteration count and returning what it computed.
fn against_loop(ctx: &Context, cpu: usize, fig: Figure) -> Result<Measurement> {
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    let [fixed, rust] = fig.notes;
    let note = if FIXED_SHAPE { fixed } else { rust };
    let spec = Spec::new(fig.id.0, Unit::ns(Per::Call), Unit::ns(Per::Iteration), 1.0)
        .note(note)
        .param("cpus", vec![cpu])
        .events_set(EventSet::Standard);
    let [with, without] = fig.loops;
    let timed = |f: fn(u64) -> u64| {
        move |iters: u64| {
            let t0 = now_ns();
            black_box(f(black_box(iters)));
            Ok(now_ns() - t0)
        }
    };
    let (mut raw, mut base) = (timed(with), timed(without));
    let me = Participant::this_thread("caller", vec![cpu]);
    measure(
        ctx,
        spec,
        Participants::new(vec![me], vec![None]),
        Workloads::paired(&mut raw, &mut base),
        |ev| super::single_thread_verdict(ev, false),
    )
}
