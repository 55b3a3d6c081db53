//! `ctx.futex`: the same ping-pong as ctx.pipe, handing a turn word back and forth with
//! futex wait/wake on shared memory (tsuna-style). The baseline is the same wake (with no
//! waiter) and wait (returning at once, the value already changed) in one thread.

use super::tax::{counts_pass, drop_counterless_evidence, quiet_hooks};
use super::{same_core_verdict, Mode};
use crate::engine::measure::{measure, Context, Spec};
use crate::engine::measure::{Participants, Workloads};
use crate::engine::partner::{
    futex, partner_error, spawn_ready_child, Child, SharedPage, ThreadPartner,
};
use crate::error::Result;
use crate::evidence::clock::now_ns;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::Measurement;
use crate::units::name::Named;
use crate::units::{Per, Unit};
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

/// The measuring thread's partner on the same CPU, spinning on the shared page's turn word.
/// Dropping it ends the partner (a thread is told to stop and joined, a child is killed and
/// reaped).
struct Pair {
    page: Arc<SharedPage>,
    private: bool,
    /// Held for its Drop, which ends the partner.
    _thread: Option<ThreadPartner>,
    child: Option<Child>,
    people: [Participant; 2],
    start_cpus: [Option<usize>; 2],
}

impl Pair {
    fn start(mode: Mode, cpu: usize) -> Result<Pair> {
        let page = Arc::new(SharedPage::new()?);
        let private = mode == Mode::Thread;
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
        Ok(Pair {
            page,
            private,
            _thread: thread,
            child,
            people: [me, partner],
            start_cpus: [None, partner_cpu],
        })
    }

    /// `iters` round trips: hand the turn to the partner, wait for it back. Returns the ns.
    fn round_trips(&mut self, iters: u64) -> Result<u64> {
        let turn: &AtomicI32 = self.page.slot(TURN);
        let t0 = now_ns();
        for _ in 0..iters {
            turn.store(1, Ordering::Release);
            futex::wake(turn, 1, self.private);
            while turn.load(Ordering::Acquire) == 1 {
                let e = futex::wait(turn, 1, self.private);
                if e == libc::EINTR {
                    // A signal: Ctrl-C, or SIGCHLD from a partner that died.
                    crate::engine::interrupt::check()?;
                    if self.child.as_mut().is_some_and(|c| c.has_exited()) {
                        return Err(partner_error("futex wait", 0));
                    }
                }
            }
        }
        Ok(now_ns() - t0)
    }

    /// The perf counts, after all the figure's samples (tax::counts_pass).
    fn add_counts(&mut self, m: &mut Measurement) -> Result<()> {
        let (people, start) = (self.people.clone(), self.start_cpus);
        counts_pass(&people, &start, &mut |n| self.round_trips(n), m)
    }
}

/// The ping-pong's figure. Its samples attach no perf counters and start once the kernel's
/// perf hooks are off (see tax.rs): lingering hooks slow the round trip, not the
/// single-thread baseline, so rounds would disagree. The counts come from a pass after the samples ([`evidence_pass`] in a plan).
pub fn measure_futex(ctx: &Context, mode: Mode, cpu: usize) -> Result<Measurement> {
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    let mut pair = Pair::start(mode, cpu)?;
    let page = pair.page.clone();
    let scratch: &AtomicI32 = page.slot(SCRATCH);
    let private = pair.private;

    let spec = Spec::new(
        "ctx.futex",
        Unit::ns(Per::Switch),
        Unit::ns(Per::RoundTrip),
        2.0,
    )
    .param("mode", mode.name())
    .param("cpus", vec![cpu])
    .events_set(EventSet::None)
    .note(
        "per switch = (futex round trip − the same wake and wait returning at once, in one \
             thread) / 2 switches",
    );
    let spec = quiet_hooks(ctx, spec)?;
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
    let (people, start) = (pair.people.to_vec(), pair.start_cpus.to_vec());
    let result = measure(
        ctx,
        spec,
        Participants::new(people, start),
        Workloads::paired(&mut |n| pair.round_trips(n), &mut base),
        |ev| same_core_verdict(ev, 2.0, "round trip"),
    );
    let mut m = result?;
    drop_counterless_evidence(&mut m);
    if !ctx.evidence_later && ctx.is_last_round() {
        pair.add_counts(&mut m)?;
    }
    Ok(m)
}

/// The evidence pass of a measurement taken with `Context::evidence_later`: the partner
/// started again after every figure's samples, for the perf counts.
pub fn evidence_pass(mode: Mode, cpu: usize, m: &mut Measurement) -> Result<()> {
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    Pair::start(mode, cpu)?.add_counts(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sampler::SamplingConfig;

    /// The figure's samples carry no perf counters (they were taken alternating with
    /// counter-attached evidence samples, and the hooks those left on moved the round trip
    /// by 8% within a round); the counts come from the pass after them.
    #[test]
    fn the_figure_takes_no_counters_and_the_counts_pass_supplies_them() {
        let cfg = SamplingConfig::small(100_000_000);
        let ctx = Context::new(cfg);
        let cpu = *crate::machine::affinity::allowed_cpus().last().unwrap();
        // In a plan the counts are left to the evidence pass: the call opens no counters.
        let later = Context {
            evidence_later: true,
            ..ctx.clone()
        };
        for mode in [Mode::Thread, Mode::Process] {
            let mut m = measure_futex(&later, mode, cpu).unwrap();
            assert!(m.evidence.events.is_empty(), "{mode:?}");
            assert!(m.evidence_samples.is_empty(), "{mode:?}");
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
            evidence_pass(mode, cpu, &mut m).unwrap();
            assert!(m.evidence.events.contains_key("context-switches"));
            assert!(m
                .notes
                .iter()
                .any(|n| n.starts_with("perf counts come from")));
        }
        // Alone, the probe takes its counts itself, after the samples.
        let m = measure_futex(&ctx, Mode::Thread, cpu).unwrap();
        assert!(m.evidence.events.contains_key("context-switches"));
        assert!(m.evidence_samples.is_empty());
    }
}
