//! `ctx.yield`: two threads on one CPU calling sched_yield (the CMPT300 method). Yield may
//! return without switching (nothing else runnable, or the scheduler prefers the caller), so
//! the probe counts the switches and refuses the figure when they did not happen.
//! Per switch = (time per measuring-thread yield − a yield with the partner parked) / 2.

use super::same_core_verdict;
use super::tax::{counts_pass, drop_counterless_evidence, quiet_hooks};
use crate::engine::measure::{measure, Context, Spec};
use crate::engine::measure::{Participants, Workloads};
use crate::engine::partner::{futex, SharedPage, ThreadPartner};
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::Measurement;
use crate::units::{Per, Unit};
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

/// The measuring thread's policy and its partner thread (when it has one), all on `cpu`.
/// Dropping it ends the partner and restores the policy.
struct Yielders {
    page: Arc<SharedPage>,
    /// Held for its Drop, which ends the partner (before the policy is restored).
    _thread: Option<ThreadPartner>,
    _policy: PolicyGuard,
    participants: Vec<Participant>,
    start_cpus: Vec<Option<usize>>,
}

impl Yielders {
    fn start(cpu: usize, fifo: bool, with_partner: bool) -> Result<Yielders> {
        let page = Arc::new(SharedPage::new()?);
        let policy = if fifo {
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
        Ok(Yielders {
            page,
            _thread: thread,
            _policy: policy,
            participants,
            start_cpus,
        })
    }
}

/// `iters` yields of the measuring thread. Returns the ns.
fn yields(iters: u64) -> Result<u64> {
    let t0 = now_ns();
    for _ in 0..iters {
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
    }
    Ok(now_ns() - t0)
}

/// `with_partner = false` runs the same loop alone, which must be reported as "no switch".
/// The figure's samples attach no perf counters and start once the kernel's perf hooks are
/// off (see tax.rs): lingering hooks slow the yields, not the parked baseline. The counts come from
/// a pass after the samples ([`evidence_pass`] in a plan).
pub fn measure_yield(
    ctx: &Context,
    cpu: usize,
    policy: Policy,
    with_partner: bool,
) -> Result<Measurement> {
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    let fifo = policy == Policy::Fifo;
    let yielders = Yielders::start(cpu, fifo, with_partner)?;
    let (pause, parked) = (yielders.page.slot(PAUSE), yielders.page.slot(PARKED));
    let mut spec = Spec::new(
        "ctx.yield",
        Unit::ns(Per::Switch),
        Unit::ns(Per::Yield),
        2.0,
    )
    .param("mode", "thread")
    .param("policy", if fifo { "fifo" } else { "normal" })
    .param("cpus", vec![cpu])
    .events_set(EventSet::None)
    .note(
        "per switch = (time per yield of the measuring thread, which includes the partner's \
             yield − a yield with the partner parked) / 2 switches",
    );
    if !with_partner {
        spec = spec.param("partner", false);
    }
    spec = quiet_hooks(ctx, spec)?;
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
        Participants::new(yielders.participants.clone(), yielders.start_cpus.clone()),
        Workloads::paired(&mut yields, &mut base),
        |ev| same_core_verdict(ev, 2.0, "yield"),
    );
    let mut m = result?;
    drop_counterless_evidence(&mut m);
    if !ctx.evidence_later && ctx.is_last_round() {
        counts_pass(
            &yielders.participants,
            &yielders.start_cpus,
            &mut yields,
            &mut m,
        )?;
    }
    Ok(m)
}

/// The evidence pass of a measurement taken with `Context::evidence_later`: the partner
/// started again (under the same policy) after every figure's samples, for the perf counts.
pub fn evidence_pass(cpu: usize, policy: Policy, m: &mut Measurement) -> Result<()> {
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    let y = Yielders::start(cpu, policy == Policy::Fifo, true)?;
    counts_pass(&y.participants, &y.start_cpus, &mut yields, m)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sampler::SamplingConfig;

    /// As for ctx.futex: no perf counters in the figure's samples (a round's first sample,
    /// before its first counter-attached one, read 15% below the rest); the counts come from
    /// the pass after them, and the switch check reads rusage.
    #[test]
    fn the_figure_takes_no_counters_and_the_counts_pass_supplies_them() {
        let cfg = SamplingConfig::small(100_000_000);
        let later = Context {
            evidence_later: true,
            ..Context::new(cfg)
        };
        let cpu = *crate::machine::affinity::allowed_cpus().last().unwrap();
        let mut m = measure_yield(&later, cpu, Policy::Normal, true).unwrap();
        assert!(m.evidence.events.is_empty());
        assert!(m.evidence_samples.is_empty());
        let c = m
            .checks
            .iter()
            .find(|c| crate::report::checks::name(c).starts_with("context switches"))
            .unwrap();
        assert!(
            crate::report::checks::observed(c).contains("rusage"),
            "{}",
            crate::report::checks::observed(c)
        );
        evidence_pass(cpu, Policy::Normal, &mut m).unwrap();
        assert!(m.evidence.events.contains_key("context-switches"));
        assert!(m
            .notes
            .iter()
            .any(|n| n.starts_with("perf counts come from")));
    }
}
