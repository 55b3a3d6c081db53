//! `ctx.yield`: two threads on one CPU calling sched_yield (the CMPT300 method). Yield may
//! return without switching (nothing else runnable, or the scheduler prefers the caller), so
//! the probe counts the switches and refuses the figure when they did not happen.
//! Per switch = (time per measuring-thread yield − a yield with the partner parked) / 2.

use super::same_core_verdict;
use crate::engine::measure::{measure, Context, Spec};
use crate::engine::partner::{futex, SharedPage, ThreadPartner};
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::Measurement;
use std::sync::atomic::Ordering;
use std::sync::Arc;

const PAUSE: usize = 0; // 1: partner must park
const PARKED: usize = 16; // 1: partner is parked
const STOP: usize = 32;

/// Scheduling policy for both threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Normal,
    /// SCHED_FIFO priority 1: yield always hands over to the other runnable FIFO thread.
    Fifo,
}

/// Set the calling thread's policy; restores SCHED_OTHER when dropped.
struct PolicyGuard(bool);

fn set_fifo(tid: i32) -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: valid param pointer.
    if unsafe { libc::sched_setscheduler(tid, libc::SCHED_FIFO, &param) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl Drop for PolicyGuard {
    fn drop(&mut self) {
        if self.0 {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: valid param pointer; tid 0 = caller.
            unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
        }
    }
}

/// Whether SCHED_FIFO may be used by this process (root, CAP_SYS_NICE or RLIMIT_RTPRIO).
pub fn fifo_permitted() -> std::result::Result<(), String> {
    let _g = PolicyGuard(set_fifo(0).is_ok());
    if _g.0 {
        Ok(())
    } else {
        Err("SCHED_FIFO needs root, CAP_SYS_NICE or an RLIMIT_RTPRIO above 0".into())
    }
}

/// `with_partner = false` runs the same loop alone, which must be reported as "no switch".
pub fn measure_yield(
    ctx: &Context,
    cpu: usize,
    policy: Policy,
    with_partner: bool,
) -> Result<Measurement> {
    let page = Arc::new(SharedPage::new()?);
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    let fifo = policy == Policy::Fifo;
    let _policy = if fifo {
        set_fifo(0).map_err(|e| {
            Error::env(format!(
                "cannot use SCHED_FIFO: {e} (needs root, CAP_SYS_NICE or RLIMIT_RTPRIO)"
            ))
        })?;
        PolicyGuard(true)
    } else {
        PolicyGuard(false)
    };

    let mut thread: Option<ThreadPartner> = None;
    let mut participants = vec![Participant::this_thread("measuring thread", vec![cpu])];
    let mut start_cpus = vec![None];
    if with_partner {
        let (t, tid, c) = spawn_partner(&page, cpu, fifo)?;
        participants.push(Participant::thread("partner thread", tid, vec![cpu]));
        start_cpus.push(c);
        thread = Some(t);
    }

    let (pause, parked) = (page.slot(PAUSE), page.slot(PARKED));
    let mut spec = Spec::new("ctx.yield", "ns/switch", "ns/yield", 2.0)
        .param("mode", "thread")
        .param("policy", if fifo { "fifo" } else { "normal" })
        .param("cpus", vec![cpu])
        .note(
            "per switch = (time per yield of the measuring thread, which includes the partner's \
             yield − a yield with the partner parked) / 2 switches",
        );
    if !with_partner {
        spec = spec.param("partner", false);
    }
    let mut raw = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        for _ in 0..iters {
            // SAFETY: sched_yield has no preconditions.
            unsafe { libc::sched_yield() };
        }
        Ok(now_ns() - t0)
    };
    let mut base = |iters: u64| -> Result<u64> {
        // Park the partner, so a yield finds nothing else runnable on this CPU.
        if with_partner {
            pause.store(1, Ordering::Release);
            let deadline = now_ns() + 5_000_000_000;
            while parked.load(Ordering::Acquire) == 0 {
                // SAFETY: no preconditions; only reads or yields the calling task's state.
                unsafe { libc::sched_yield() };
                if now_ns() > deadline {
                    return Err(Error::env("the yield partner did not park within 5 s"));
                }
            }
        }
        let t0 = now_ns();
        for _ in 0..iters {
            for _ in 0..2 {
                // SAFETY: no preconditions; only reads or yields the calling task's state.
                unsafe { libc::sched_yield() };
            }
        }
        let t = now_ns() - t0;
        if with_partner {
            pause.store(0, Ordering::Release);
            futex::wake(pause, 1, true);
            while parked.load(Ordering::Acquire) != 0 {
                // SAFETY: no preconditions; only reads or yields the calling task's state.
                unsafe { libc::sched_yield() };
            }
        }
        Ok(t)
    };
    let result = measure(
        ctx,
        spec,
        participants,
        start_cpus,
        &mut raw,
        Some(&mut base),
        |ev| same_core_verdict(ev, 2.0, "yield"),
    );
    drop(thread);
    result
}

/// The partner thread on `cpu`: yields until asked to park (PAUSE), parks on the futex, and
/// leaves when told to stop. Returns it with its thread id and the CPU it started on.
fn spawn_partner(
    page: &Arc<SharedPage>,
    cpu: usize,
    fifo: bool,
) -> Result<(ThreadPartner, i32, Option<usize>)> {
    let (p, q) = (page.clone(), page.clone());
    ThreadPartner::spawn_ready(
        cpu,
        move || {
            if fifo && set_fifo(0).is_err() {
                return;
            }
            let (pause, parked, stop) = (p.slot(PAUSE), p.slot(PARKED), p.slot(STOP));
            while stop.load(Ordering::Acquire) == 0 {
                if pause.load(Ordering::Acquire) != 0 {
                    parked.store(1, Ordering::Release);
                    futex::wait(pause, 1, true);
                    parked.store(0, Ordering::Release);
                    continue;
                }
                // SAFETY: sched_yield has no preconditions.
                unsafe { libc::sched_yield() };
            }
        },
        move || {
            q.slot(STOP).store(1, Ordering::Release);
            q.slot(PAUSE).store(0, Ordering::Release);
            futex::wake(q.slot(PAUSE), 1, true);
        },
    )
}

/// What an item of this probe takes beyond its samples (see [`crate::engine::estimate::Cost`]): like every
/// same-core ping-pong, 1.8 s of a 2.2 s budget and its partner at every call.
pub const COST: crate::engine::estimate::Cost =
    crate::engine::estimate::Cost::with_partners(0.7, 0.02);
