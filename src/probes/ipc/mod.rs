//! `ipc.*`: the round trip of one small message and its reply between the measuring thread
//! and a forked partner (a partner thread for the spin flag, see measure_cell), for seven
//! mechanisms and each placement class the machine has (same CPU, SMT sibling, same LLC,
//! other LLC, other node). One-way = round trip / 2: both directions use the same mechanism
//! and the same pair of CPUs, so the halves are alike.

use crate::engine::measure::{Participants, Workloads};
use crate::units::name::Named;
pub mod channel;
pub mod classes;

use crate::engine::checks;
use crate::engine::measure::{measure, Context, Spec, Verdict};
use crate::engine::partner::{partner_error, SharedPage};
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::{Bound, Check, CheckKind, Evidence, Measurement, Placement, Reading};
use crate::units::{Per, Unit};
use channel::{Channel, Mech, Server};
use classes::{Class, Pair};

/// Why a cell cannot be measured here, if it cannot: a spin flag on one CPU only waits out
/// the other side's time slice.
pub fn unsupported(mech: Mech, class: Class) -> Option<&'static str> {
    (mech == Mech::Spin && class == Class::SameCpu).then_some(
        "a spin flag needs two CPUs: on one CPU the poller only waits out its partner's \
         time slice",
    )
}

/// Switches per round trip a placement and mechanism must show, as (low, high).
/// Same CPU: exactly the two hand-offs. Across CPUs, blocking: each side sleeps once per round
/// trip (2), a little less when a reply arrives before its reader has gone to sleep.
/// Polling: none.
pub fn expected_switches(mech: Mech, class: Class) -> (f64, f64) {
    match (mech.blocks(), class) {
        (true, Class::SameCpu) => (1.9, 2.1),
        (true, _) => (1.5, 2.2),
        (false, _) => (0.0, 0.01),
    }
}

/// The checks of one cell: switches per round trip in the expected range, no migrations,
/// every participant where it was pinned, and (same CPU) one CPU / (across) two distinct CPUs.
pub fn cell_verdict(ev: &Evidence, mech: Mech, class: Class) -> Verdict {
    let (lo, hi) = expected_switches(mech, class);
    let (sw, _) = checks::switches_per_op(ev);
    let c = Check::new(
        CheckKind::Named,
        Bound::Between { lo, hi },
        checks::switches_reading(ev, 3),
        sw >= lo && sw <= hi,
    )
    .named("context switches per round trip");
    let mut warnings = Vec::new();
    let mut list = vec![c, checks::no_migrations(ev), checks::placement(&ev.cpus)];
    if class == Class::SameCpu {
        list.push(checks::same_cpu(&ev.cpus));
    } else {
        list.push(distinct_cpus(&ev.cpus));
    }
    // Blocking partners on two CPUs leave both idle most of the time: the share of CPU they
    // hold says nothing there, but time spent runnable and waiting for a CPU does. Where they
    // hold their CPUs (one CPU, or polling), the held share is the test.
    if class == Class::SameCpu || !mech.blocks() {
        checks::add_occupancy(ev, &mut list, &mut warnings);
    } else {
        list.extend(run_queue_wait(ev));
    }
    (list, warnings)
}

/// Largest share of the measured wall time the participants may together spend runnable but
/// waiting for their CPU (others running there) in a blocking cross-CPU hand-off.
pub const MAX_RUN_QUEUE_WAIT: f64 = 0.1;

/// The participants were not kept waiting for their CPUs by other tasks (schedstat run delay
/// over the measured windows). None where schedstat does not tell.
pub fn run_queue_wait(ev: &Evidence) -> Option<Check> {
    let o = ev.occupancy.as_ref()?;
    let share = o.run_delay_ns as f64 / o.wall_ns.max(1) as f64;
    Some(Check::at_most(
        CheckKind::PartnersRunQueueWait,
        MAX_RUN_QUEUE_WAIT,
        share,
    ))
}

/// The two participants were seen on two different CPUs (a cross-CPU cell that silently ran
/// on one CPU would be a same-CPU figure under the wrong name).
pub fn distinct_cpus(placements: &[Placement]) -> Check {
    // The complement of the same-CPU check, over the same observed CPUs (two participants,
    // each pinned to one CPU: not one CPU and something seen means two).
    let same = checks::same_cpu(placements);
    let seen = matches!(&same.reading, Reading::Cpus(c) if !c.is_empty());
    Check::new(
        CheckKind::DistinctCpus,
        Bound::Kind,
        same.reading,
        !same.ok && seen,
    )
}

/// Measure one cell: `mech` between the measuring thread on `pair.a` and a forked partner on
/// `pair.b`.
pub fn measure_cell(ctx: &Context, mech: Mech, pair: Pair) -> Result<Measurement> {
    if let Some(why) = unsupported(mech, pair.class) {
        return Err(Error::env(why));
    }
    let ch = Channel::new(mech)?;
    let ready = SharedPage::new()?;
    let _pin = AffinityGuard::pin_current(&[pair.a])?;
    // The spinning partner is a thread of this process: it never sleeps, and only a thread
    // of the reader's own process has a CPU clock that is current while it runs on another
    // CPU (another process's lags by up to a tick; see evidence::cputime). The blocking
    // mechanisms keep a forked partner, as the other IPC tools do.
    let (ch, server, partner_cpu) = Server::start(ch, mech == Mech::Spin, (&ready, 0), pair.b)?;
    let participants = vec![
        Participant::this_thread("measuring thread", vec![pair.a]),
        server.participant("partner thread", pair.b),
    ];
    let gone = || server.gone();
    let who = Participants::new(participants, vec![Some(pair.a), partner_cpu]);
    let result = time_cell(ctx, &ch, pair, who, &gone);
    drop(server);
    result
}

/// Sample the round trips of one cell through the engine, with the cell's checks: `who` are
/// the measuring thread and the partner (a thread for the spin flag, else a forked process).
fn time_cell(
    ctx: &Context,
    ch: &Channel,
    pair: Pair,
    who: Participants,
    gone: &dyn Fn() -> bool,
) -> Result<Measurement> {
    let mech = ch.mech;
    let partner = if mech == Mech::Spin {
        "a partner thread"
    } else {
        "a forked partner"
    };
    let spec = cell_spec(mech, pair, partner);
    let mut raw = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        for _ in 0..iters {
            ch.round_trip(gone)
                .map_err(|e| partner_error(&format!("{} round trip", mech.name()), e))?;
        }
        Ok(now_ns() - t0)
    };
    measure(ctx, spec, who, Workloads::alone(&mut raw), |ev| {
        cell_verdict(ev, mech, pair.class)
    })
}

/// The spec of one cell; `partner` says what the partner is.
fn cell_spec(mech: Mech, pair: Pair, partner: &str) -> Spec {
    Spec::new(
        &format!("ipc.{}", mech.name()),
        Unit::ns(Per::RoundTrip),
        Unit::ns(Per::RoundTrip),
        1.0,
    )
    .param("class", pair.class.name())
    .param("cpus", vec![pair.a, pair.b])
    .note(format!(
        "one message and its reply between the measuring thread and {partner}, each \
         pinned; one-way = round trip / 2 (both directions use the same mechanism and CPUs)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventReading;

    fn placed(req: usize, start: usize, end: usize) -> Placement {
        Placement {
            role: "p".into(),
            pid: 1,
            tid: 1,
            requested: vec![req],
            start: Some(start),
            end: Some(end),
            affinity_held: true,
        }
    }

    fn evidence(switches: f64, cpus: Vec<Placement>) -> Evidence {
        let mut ev = Evidence {
            cpus,
            occupancy: checks::held_occupancy(),
            ..Default::default()
        };
        ev.events.insert(
            "context-switches".into(),
            EventReading {
                per_op: Some(switches),
                total: Some(switches * 1000.0),
                supported: true,
                ..Default::default()
            },
        );
        ev
    }

    fn ok(v: &Verdict) -> bool {
        v.0.iter().all(|c| c.ok)
    }

    #[test]
    fn cross_cpu_blocking_cell_wants_two_switches_on_two_cpus() {
        let good = evidence(2.0, vec![placed(1, 1, 1), placed(0, 0, 0)]);
        assert!(ok(&cell_verdict(&good, Mech::Pipe, Class::SameLlc)));
        // Ran on one CPU under a cross-CPU name: fails.
        let one = evidence(2.0, vec![placed(1, 1, 1), placed(1, 1, 1)]);
        assert!(!ok(&cell_verdict(&one, Mech::Pipe, Class::SameLlc)));
        // Kept waiting for their CPUs by other tasks.
        let mut waited = good.clone();
        waited.occupancy = Some(crate::model::Occupancy {
            wall_ns: 1000,
            oncpu_ns: 300,
            run_delay_ns: 400,
            share: 0.15,
            ..Default::default()
        });
        assert!(!ok(&cell_verdict(&waited, Mech::Pipe, Class::SameLlc)));
        assert_eq!(
            crate::report::checks::line(&run_queue_wait(&waited).unwrap()),
            "run-queue wait (others on the partners' CPUs): expected ≤ 10% of wall time, \
             observed 40.0%"
        );
        waited.occupancy.as_mut().unwrap().run_delay_ns = 20;
        assert!(ok(&cell_verdict(&waited, Mech::Pipe, Class::SameLlc)));
        // Too many switches: someone else took the CPU in between.
        let busy = evidence(3.0, vec![placed(1, 1, 1), placed(0, 0, 0)]);
        assert!(!ok(&cell_verdict(&busy, Mech::Futex, Class::SameLlc)));
    }

    #[test]
    fn polling_cell_fails_on_switches_and_same_cpu_on_two() {
        let cpus = vec![placed(1, 1, 1), placed(0, 0, 0)];
        assert!(ok(&cell_verdict(
            &evidence(0.0, cpus.clone()),
            Mech::Spin,
            Class::SameLlc
        )));
        assert!(!ok(&cell_verdict(
            &evidence(0.5, cpus.clone()),
            Mech::Spin,
            Class::SameLlc
        )));
        // A same-CPU cell seen on two CPUs fails.
        assert!(!ok(&cell_verdict(
            &evidence(2.0, cpus),
            Mech::Pipe,
            Class::SameCpu
        )));
        assert!(unsupported(Mech::Spin, Class::SameCpu).is_some());
        assert!(unsupported(Mech::Pipe, Class::SameCpu).is_none());
    }
}
