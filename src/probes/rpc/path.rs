//! Which recorded events lie on an RPC's path, and in which part: the events whose cost a
//! traced part holds (what the correction takes out, probes::rpc::correct).
//!
//! An RPC's path runs on one CPU at a time: the client's until it wakes the server, the
//! server's from the switch to it until it wakes the client, the client's again to the end.
//! Inside a hand-off (the waking → the switch to the woken task) the path is on the waker's
//! CPU until the IPI is sent and on the target's CPU after it. An event counts in the part
//! whose interval holds its timestamp (a tracepoint's cost comes after its timestamp, so an
//! event that starts a part costs that part) when it was recorded on the CPU the path is on
//! then. On the waker's CPU after the IPI went out (or, with no IPI seen, after the wake-up's
//! own `sched_waking`/`sched_wakeup`), the waker goes on in parallel (it leaves its send,
//! enters its receive, switches away): off the path, not counted. On one CPU every event of
//! the RPC is on the path.

pub use super::breakdown::Who;
use super::breakdown::{Marks, Rpc, IPI_PARTS, PARTS};
use crate::evidence::trace::{Event, Group, Kind};

/// Number of event groups ([`Group::ALL`]).
pub const GROUPS: usize = Group::ALL.len();

/// Events on one RPC's path: per part and group, and those at its very end (the client's
/// receive exit, or its switch-in record (the switch back where none is kept) when it took the
/// reply without one: inside its timed RPC, after the last part).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PathEvents {
    pub parts: [[f64; GROUPS]; PARTS.len()],
    pub tail: [f64; GROUPS],
}

impl PathEvents {
    /// Events per group inside the client's timed RPC: every part and the tail.
    pub fn timed(&self) -> [f64; GROUPS] {
        let mut out = self.tail;
        for p in &self.parts {
            for (o, n) in out.iter_mut().zip(p) {
                *o += n;
            }
        }
        out
    }
}

/// The events on each RPC's path (`events` time-ordered, `rpcs` as split from them).
pub fn on_path(events: &[Event], rpcs: &[Rpc], who: &Who) -> Vec<PathEvents> {
    rpcs.iter()
        .map(|r| {
            let mut out = PathEvents::default();
            let from = events.partition_point(|e| e.time < r.marks.enter);
            for e in events[from..].iter().take_while(|e| e.time <= r.marks.end) {
                let g = Group::of(&e.kind).index();
                if e.time == r.marks.end {
                    if e.cpu == who.client_cpu {
                        out.tail[g] += 1.0;
                    }
                } else if let Some(p) = part_of(e, &r.marks, who) {
                    out.parts[p][g] += 1.0;
                }
            }
            out
        })
        .collect()
}

/// The part whose path `e` lies on (index in PARTS), or None when it ran beside the path.
fn part_of(e: &Event, m: &Marks, who: &Who) -> Option<usize> {
    let on = |cpu: u32, part: usize| (e.cpu == cpu).then_some(part);
    let t = e.time;
    if t < m.wake {
        on(who.client_cpu, 0)
    } else if t < m.switch_in {
        hand_off(e, m, 0, who)
    } else if t < m.srv_exit {
        on(who.server_cpu, 3)
    } else if t < m.reply_wake {
        on(who.server_cpu, 4)
    } else if t < m.client_in {
        hand_off(e, m, 1, who)
    } else {
        on(who.client_cpu, 7)
    }
}

/// Hand-off `k` (0: the request, parts IPI and wake-up; 1: the reply, reply IPI and reply
/// wake-up) from the waker's CPU to the target's.
fn hand_off(e: &Event, m: &Marks, k: usize, who: &Who) -> Option<usize> {
    let (ipi_part, wake_part) = (IPI_PARTS[k], IPI_PARTS[k] + 1);
    let (waker_cpu, target_cpu, is_waker) = if k == 0 {
        (who.client_cpu, who.server_cpu, e.tid == who.client)
    } else {
        (who.server_cpu, who.client_cpu, who.servers.contains(&e.tid))
    };
    if waker_cpu == target_cpu {
        return Some(wake_part);
    }
    if e.cpu == target_cpu {
        return Some(match m.ipi[k] {
            Some((sent, seen)) if e.time >= sent && e.time < seen => ipi_part,
            _ => wake_part,
        });
    }
    if e.cpu != waker_cpu {
        return None;
    }
    match m.ipi_send[k] {
        Some(sent) if e.time < sent => Some(wake_part),
        // The IPI's own record: its cost delays the IPI.
        Some(sent) if e.time == sent => Some(if m.ipi[k].is_some() {
            ipi_part
        } else {
            wake_part
        }),
        Some(_) => None,
        None => (is_waker && matches!(e.kind, Kind::Waking { .. } | Kind::Wakeup { .. }))
            .then_some(wake_part),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::ipc::channel::Mech;
    use crate::probes::rpc::breakdown::tests::{enter, ev, exit, pipe_rpcs, waking, C, S};
    use crate::probes::rpc::breakdown::{split, Calls};

    /// One remote pipe RPC (client on CPU 1, server on CPU 0) with IPIs both ways: the
    /// client's leaving its send and entering its receive after the IPI went out, and the
    /// server's after its reply, run beside the path and are not counted.
    #[test]
    fn events_beside_the_path_are_not_counted() {
        let (w, r) = (libc::SYS_write, libc::SYS_read);
        let events = [
            ev(100, 1, C, enter(w)),
            ev(105, 1, C, waking(S)),
            ev(107, 1, C, Kind::IpiSend { cpu: 0 }),
            ev(108, 1, C, exit(w)),
            ev(110, 1, C, enter(r)),
            ev(112, 1, C, Kind::Switch { prev: C, next: 0 }),
            ev(113, 1, C, Kind::SwitchOut { next: 0 }),
            ev(120, 0, 0, Kind::CallFuncEntry),
            ev(
                122,
                0,
                0,
                Kind::Wakeup {
                    pid: S,
                    target_cpu: 0,
                },
            ),
            ev(125, 0, 0, Kind::Switch { prev: 0, next: S }),
            ev(126, 0, S, Kind::SwitchIn { prev: 0 }),
            ev(130, 0, S, exit(r)),
            ev(135, 0, S, enter(w)),
            ev(140, 0, S, waking(C)),
            ev(145, 0, S, exit(w)),
            ev(146, 0, S, enter(r)),
            // CPU 1 records nothing in its idle task: only the client's switch-in record.
            ev(161, 1, C, Kind::SwitchIn { prev: 0 }),
            ev(170, 1, C, exit(r)),
        ];
        let rpcs = pipe_rpcs(&events);
        assert_eq!(rpcs.len(), 1);
        let who = Who {
            client: C,
            servers: &[S],
            client_cpu: 1,
            server_cpu: 0,
        };
        let p = on_path(&events, &rpcs, &who)[0];
        let (sched, sys, ipi, sw) = (0, 1, 2, 3);
        let count = |part: usize| p.parts[part];
        // send: the write's entry.
        assert_eq!(count(0), [0.0, 1.0, 0.0, 0.0]);
        // IPI: its own record (the CPU-1 events after it are beside the path).
        assert_eq!(count(1), [0.0, 0.0, 1.0, 0.0]);
        // wake-up: the waking (before the IPI) and, on CPU 0, the interrupt and the wake-up.
        assert_eq!(count(2)[sched], 2.0);
        assert_eq!(count(2)[ipi], 1.0);
        assert_eq!(count(2)[sys], 0.0);
        // switch-in: the switch and perf's record of it.
        assert_eq!(count(3), [1.0, 0.0, 0.0, 1.0]);
        // server: the read's exit, the write's entry.
        assert_eq!(count(4), [0.0, 2.0, 0.0, 0.0]);
        // reply wake-up: only the waking (no reply IPI seen; the server's exit and entry
        // after it are beside the path).
        assert_eq!(count(6), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(count(5), [0.0; 4]);
        // return: the client's switch-in record; its receive's exit ends the RPC.
        assert_eq!(count(7), [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(p.tail, [0.0, 1.0, 0.0, 0.0]);
        assert_eq!(p.timed()[sw], 2.0);
        // 18 events recorded: 11 in parts, 1 at the end, 6 beside the path.
        let in_parts: f64 = p.parts.iter().flatten().sum();
        assert_eq!(in_parts, 11.0);
    }

    /// On one CPU every event inside the RPC is on its path.
    #[test]
    fn on_one_cpu_every_event_counts() {
        let (events, _) = crate::evidence::trace::tests::fixture_decoder().decode_all(
            &crate::evidence::trace::parse_fixture(include_str!(
                "../../../tests/fixtures/trace/pipe-local.records"
            ))
            .unwrap(),
        );
        let who = Who {
            client: 32054,
            servers: &[1827],
            client_cpu: 1,
            server_cpu: 1,
        };
        let rpcs = split(&events, &who, Calls::of(Mech::Pipe));
        let paths = on_path(&events, &rpcs, &who);
        for (r, p) in rpcs.iter().zip(&paths) {
            let inside = events
                .iter()
                .filter(|e| e.time >= r.marks.enter && e.time <= r.marks.end)
                .count() as f64;
            assert_eq!(p.timed().iter().sum::<f64>(), inside, "{r:?}");
            // A part that took no time holds no event.
            for (k, part) in r.parts.iter().enumerate() {
                if *part == 0.0 {
                    assert_eq!(p.parts[k].iter().sum::<f64>(), 0.0, "{k} {r:?}");
                }
            }
        }
    }
}
