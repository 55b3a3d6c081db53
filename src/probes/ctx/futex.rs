//! `ctx.futex`: the same ping-pong as ctx.pipe, handing a turn word back and forth with
//! futex wait/wake on shared memory (tsuna-style). The baseline is the same wake (with no
//! waiter) and wait (returning at once, the value already changed) in one thread.

use super::{same_core_verdict, Mode};
use crate::engine::measure::{measure, Context, Spec};
use crate::engine::partner::{
    futex, partner_error, spawn_ready_child, Child, SharedPage, ThreadPartner,
};
use crate::error::Result;
use crate::evidence::clock::now_ns;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::Measurement;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// Slots of the shared page.
const TURN: usize = 0; // 1: the partner's turn, 0: the measuring side's turn
const STOP: usize = 16; // non-zero: partner must return (own cache line)
const READY: usize = 32; // encode_cpu() of the partner
const SCRATCH: usize = 48; // baseline word

/// The partner's side: wait for its turn, hand it back. Allocation-free (runs after fork).
fn partner_loop(page: &SharedPage, private: bool) -> i32 {
    let turn = page.slot(TURN);
    let stop = page.slot(STOP);
    loop {
        while turn.load(Ordering::Acquire) == 0 {
            if stop.load(Ordering::Acquire) != 0 {
                return 0;
            }
            futex::wait(turn, 0, private);
        }
        if stop.load(Ordering::Acquire) != 0 {
            return 0;
        }
        turn.store(0, Ordering::Release);
        futex::wake(turn, 1, private);
    }
}

pub fn measure_futex(ctx: &Context, mode: Mode, cpu: usize) -> Result<Measurement> {
    let page = Arc::new(SharedPage::new()?);
    let private = mode == Mode::Thread;
    let _pin = AffinityGuard::pin_current(&[cpu])?;

    let mut child: Option<Child> = None;
    let mut thread: Option<ThreadPartner> = None;
    let (partner, partner_cpu) = match mode {
        Mode::Process => {
            let (c, started_on) =
                spawn_ready_child(&page, READY, cpu, || {}, || partner_loop(&page, false))?;
            let part = Participant::child(c.pid(), vec![cpu]);
            child = Some(c);
            (part, started_on)
        }
        Mode::Thread => {
            let (p, q) = (page.clone(), page.clone());
            let (t, tid, c) = ThreadPartner::spawn_ready(
                cpu,
                move || {
                    partner_loop(&p, true);
                },
                move || {
                    q.slot(STOP).store(1, Ordering::Release);
                    q.slot(TURN).store(1, Ordering::Release);
                    futex::wake(q.slot(TURN), 1, true);
                },
            )?;
            thread = Some(t);
            (Participant::thread("partner thread", tid, vec![cpu]), c)
        }
    };
    let me = Participant::this_thread("measuring thread", vec![cpu]);
    let turn: &AtomicI32 = page.slot(TURN);
    let scratch: &AtomicI32 = page.slot(SCRATCH);
    let mut child_ref = child.as_mut();

    let spec = Spec::new("ctx.futex", "ns/switch", "ns/round trip", 2.0)
        .param("mode", mode.as_str())
        .param("cpus", vec![cpu])
        .note(
            "per switch = (futex round trip − the same wake and wait returning at once, in one \
             thread) / 2 switches",
        );
    let mut raw = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        for _ in 0..iters {
            turn.store(1, Ordering::Release);
            futex::wake(turn, 1, private);
            while turn.load(Ordering::Acquire) == 1 {
                let e = futex::wait(turn, 1, private);
                if e == libc::EINTR {
                    // A signal: Ctrl-C, or SIGCHLD from a partner that died.
                    crate::engine::interrupt::check()?;
                    if child_ref.as_deref_mut().is_some_and(|c| c.has_exited()) {
                        return Err(partner_error("futex wait", 0));
                    }
                }
            }
        }
        Ok(now_ns() - t0)
    };
    let mut base = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        for _ in 0..iters {
            for _ in 0..2 {
                scratch.store(1, Ordering::Release);
                futex::wake(scratch, 1, private);
                // Returns EAGAIN at once: the word is not 0.
                futex::wait(scratch, 0, private);
            }
        }
        Ok(now_ns() - t0)
    };
    let result = measure(
        ctx,
        spec,
        vec![me, partner],
        vec![None, partner_cpu],
        &mut raw,
        Some(&mut base),
        |ev| same_core_verdict(ev, 2.0, "round trip"),
    );
    drop(thread);
    drop(child);
    result
}

/// What an item of this probe takes beyond its samples (see [`crate::engine::estimate::Cost`]): like every
/// same-core ping-pong, 1.8 s of a 2.2 s budget and its partner at every call.
pub const COST: crate::engine::estimate::Cost =
    crate::engine::estimate::Cost::with_partners(0.7, 0.02);
