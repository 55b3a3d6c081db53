//! One RPC split into its parts from kernel events. Definitions (times are tracepoint
//! timestamps on CLOCK_MONOTONIC; C = the client, S = the server it called):
//!
//! | part | from | to |
//! |---|---|---|
//! | send | C enters the system call that sends (sys_enter) | S is marked waking (sched_waking) |
//! | IPI | an IPI is sent to S's CPU (ipi_send_cpu) | S's CPU enters the reschedule interrupt |
//! | wake-up | sched_waking of S | S's CPU switches to S (sched_switch), minus the IPI part |
//! | switch-in | the switch to S | S's receiving system call returns (sys_exit) |
//! | server | S's receive returned | S marks C waking (its reply) |
//! | reply IPI, reply wake-up | as IPI and wake-up, for C | |
//! | return | the switch to C | C's receiving system call returns |
//!
//! The parts telescope: they add up exactly to C's send entry → C's receive exit. A part that
//! did not happen (S already running, no IPI) is 0. What the breakdown does not see: user-space
//! time before the send's sys_enter and after the receive's sys_exit, the hypervisor (a vCPU
//! that was not running), and polling hand-offs that make no system call at all.

use crate::evidence::trace::{Event, Kind};

/// The parts in the order they happen (the stacked bar's fixed order).
pub const PARTS: [&str; 8] = [
    "send",
    "IPI",
    "wake-up",
    "switch-in",
    "server",
    "reply IPI",
    "reply wake-up",
    "return",
];

/// One RPC's parts (ns, in PARTS order) and what the trace showed about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rpc {
    pub parts: [f64; 8],
    /// The server's CPU was idle when it switched to the server.
    pub from_idle: bool,
    /// The traced span, C's send entry → C's receive exit.
    pub span_ns: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Times {
    enter: u64,
    wake: u64,
    ipi_send: Option<u64>,
    ipi_recv: Option<u64>,
    switch_in: u64,
    srv_exit: u64,
    reply_wake: u64,
    ipi2_send: Option<u64>,
    ipi2_recv: Option<u64>,
    client_in: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Waiting for C to enter a system call.
    Idle,
    /// C is in a system call: waiting for it to wake a server.
    Sending,
    /// S is waking: waiting for the switch to it.
    Waking,
    /// S runs: waiting for its receive to return.
    ServerIn,
    /// S works: waiting for it to wake C.
    Serving,
    /// C is waking: waiting for the switch to it.
    Replying,
    /// C runs: waiting for its receive to return.
    ClientIn,
}

/// Split every complete RPC in `events` (time-ordered). `client` is C's tid, `servers` the
/// servers' tids, `server_cpu` / `client_cpu` where they are pinned. RPCs whose events do not
/// follow the pattern (e.g. cut by the start of the trace) are left out.
pub fn split(
    events: &[Event],
    client: i32,
    servers: &[i32],
    client_cpu: u32,
    server_cpu: u32,
) -> Vec<Rpc> {
    let mut out = Vec::new();
    let mut st = State::Idle;
    let mut t = Times::default();
    let mut server = 0;
    let mut from_idle = false;
    for e in events {
        // A new request restarts the pattern wherever we were.
        if let Kind::Waking { pid, .. } = e.kind {
            if e.tid == client && servers.contains(&pid) {
                if !matches!(st, State::Sending) {
                    // The send's sys_enter was not seen in this pattern: unusable.
                    st = State::Idle;
                    continue;
                }
                server = pid;
                t.wake = e.time;
                st = State::Waking;
                continue;
            }
        }
        match (st, e.kind) {
            (State::Idle | State::Sending, Kind::SysEnter { .. }) if e.tid == client => {
                t = Times {
                    enter: e.time,
                    ..Default::default()
                };
                st = State::Sending;
            }
            (State::Waking, Kind::IpiSend { cpu }) if cpu as u32 == server_cpu => {
                t.ipi_send.get_or_insert(e.time);
            }
            (State::Waking, Kind::ReschedEntry) if e.cpu == server_cpu && t.ipi_send.is_some() => {
                t.ipi_recv.get_or_insert(e.time);
            }
            (State::Waking, Kind::Switch { prev, next }) if next == server => {
                t.switch_in = e.time;
                from_idle = prev == 0;
                st = State::ServerIn;
            }
            (State::Waking, Kind::SysExit { .. }) if e.tid == server => {
                // S was still running (never slept): no switch to it.
                t.switch_in = t.wake;
                t.srv_exit = e.time;
                from_idle = false;
                st = State::Serving;
            }
            (State::ServerIn, Kind::SysExit { .. }) if e.tid == server => {
                t.srv_exit = e.time;
                st = State::Serving;
            }
            (State::Serving, Kind::Switch { prev, next }) if prev == server && next == client => {
                // One CPU, the client preempted while runnable (not asleep): the reply needs no
                // wake-up, the server's block hands the CPU straight back.
                t.reply_wake = e.time;
                t.client_in = e.time;
                st = State::ClientIn;
            }
            (State::Serving, Kind::Waking { pid, .. }) if e.tid == server && pid == client => {
                t.reply_wake = e.time;
                st = State::Replying;
            }
            (State::Replying, Kind::IpiSend { cpu }) if cpu as u32 == client_cpu => {
                t.ipi2_send.get_or_insert(e.time);
            }
            (State::Replying, Kind::ReschedEntry)
                if e.cpu == client_cpu && t.ipi2_send.is_some() =>
            {
                t.ipi2_recv.get_or_insert(e.time);
            }
            (State::Replying, Kind::Switch { next, .. }) if next == client => {
                t.client_in = e.time;
                st = State::ClientIn;
            }
            (State::Replying, Kind::SysExit { .. }) if e.tid == client => {
                // C had not gone to sleep yet: the reply found it running.
                t.client_in = t.reply_wake;
                out.push(finish(&t, e.time, from_idle));
                st = State::Idle;
            }
            (State::ClientIn, Kind::SysExit { .. }) if e.tid == client => {
                out.push(finish(&t, e.time, from_idle));
                st = State::Idle;
            }
            _ => {}
        }
    }
    out
}

fn ipi(send: Option<u64>, recv: Option<u64>, from: u64, to: u64) -> u64 {
    match (send, recv) {
        (Some(s), Some(r)) if s >= from && r >= s && r <= to => r - s,
        _ => 0,
    }
}

fn finish(t: &Times, end: u64, from_idle: bool) -> Rpc {
    let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
    let ipi1 = ipi(t.ipi_send, t.ipi_recv, t.wake, t.switch_in);
    let ipi2 = ipi(t.ipi2_send, t.ipi2_recv, t.reply_wake, t.client_in);
    Rpc {
        parts: [
            d(t.enter, t.wake),
            ipi1 as f64,
            d(t.wake, t.switch_in) - ipi1 as f64,
            d(t.switch_in, t.srv_exit),
            d(t.srv_exit, t.reply_wake),
            ipi2 as f64,
            d(t.reply_wake, t.client_in) - ipi2 as f64,
            d(t.client_in, end),
        ],
        from_idle,
        span_ns: end.saturating_sub(t.enter),
    }
}

/// The definition of a part, for `--explain` and the notes of each `rpc.part`.
pub fn definition(part: &str) -> &'static str {
    match part {
        "send" => "send: the client enters the sending system call (sys_enter) → the server is marked waking (sched_waking)",
        "IPI" => "IPI: an IPI is sent to the server's CPU (ipi_send_cpu) → that CPU enters the reschedule interrupt (0 when none was needed or the kernel lacks these tracepoints)",
        "wake-up" => "wake-up: the server is marked waking → its CPU switches to it (sched_switch), minus the IPI part",
        "switch-in" => "switch-in: the switch to the server → its receiving system call returns (sys_exit)",
        "server" => "server: the server's receive returned → it marks the client waking (its reply sent)",
        "reply IPI" => "reply IPI: as IPI, towards the client's CPU",
        "reply wake-up" => "reply wake-up: the client is marked waking → its CPU switches to it, minus the reply IPI",
        _ => "return: the switch to the client → the client's receiving system call returns",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::trace::tests::{fixture_decoder, fixture_records};

    /// The fixture: 40 pipe round trips, client 14054 on CPU 1, server 16600 on CPU 0.
    #[test]
    fn the_recorded_rpcs_split_into_parts_that_add_up() {
        let (events, _) = fixture_decoder().decode_all(&fixture_records());
        let rpcs = split(&events, 14054, &[16600], 1, 0);
        assert!(rpcs.len() >= 35, "{} of 40 matched", rpcs.len());
        for r in &rpcs {
            assert!(r.parts.iter().all(|&p| p >= 0.0), "{r:?}");
            let sum: f64 = r.parts.iter().sum();
            assert_eq!(sum, r.span_ns as f64);
            // A pipe hand-off between CPUs: a wake-up and a switch-in always happen.
            assert!(r.parts[2] > 0.0 && r.parts[3] > 0.0, "{r:?}");
        }
        // The request's IPI is visible in this kernel's trace.
        assert!(rpcs.iter().any(|r| r.parts[1] > 0.0));
        // Naming the wrong server finds nothing.
        assert!(split(&events, 14054, &[1], 1, 0).is_empty());
    }

    /// 40 pipe round trips on one CPU (client 32054, server 1827, CPU 1): the woken server
    /// preempts the client on its way out of write, so the reply wakes nobody.
    #[test]
    fn the_recorded_local_rpcs_split_too() {
        let recs = crate::evidence::trace::parse_fixture(include_str!(
            "../../../tests/fixtures/trace/pipe-local.records"
        ))
        .unwrap();
        let (events, _) = fixture_decoder().decode_all(&recs);
        let rpcs = split(&events, 32054, &[1827], 1, 1);
        assert!(rpcs.len() >= 35, "{} of 40 matched", rpcs.len());
        for r in &rpcs {
            assert_eq!(r.parts.iter().sum::<f64>(), r.span_ns as f64);
            assert_eq!(r.parts[1] + r.parts[5], 0.0, "no IPI on one CPU: {r:?}");
            assert!(!r.from_idle);
        }
    }

    fn ev(time: u64, cpu: u32, tid: i32, kind: Kind) -> Event {
        Event {
            time,
            cpu,
            pid: tid,
            tid,
            kind,
        }
    }

    #[test]
    fn a_server_found_running_and_an_idle_switch_are_told_apart() {
        let (c, s) = (10, 20);
        let w = |pid| Kind::Waking { pid, target_cpu: 0 };
        let events = [
            ev(100, 1, c, Kind::SysEnter { id: 1 }),
            ev(110, 1, c, w(s)),
            ev(130, 0, 0, Kind::Switch { prev: 0, next: s }),
            ev(140, 0, s, Kind::SysExit { id: 0 }),
            ev(150, 0, s, w(c)),
            ev(170, 1, 0, Kind::Switch { prev: 0, next: c }),
            ev(175, 1, c, Kind::SysExit { id: 0 }),
            // Second RPC: S never slept, C never slept.
            ev(200, 1, c, Kind::SysEnter { id: 1 }),
            ev(205, 1, c, w(s)),
            ev(209, 0, s, Kind::SysExit { id: 0 }),
            ev(215, 0, s, w(c)),
            ev(220, 1, c, Kind::SysExit { id: 0 }),
        ];
        let r = split(&events, c, &[s], 1, 0);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].parts, [10.0, 0.0, 20.0, 10.0, 10.0, 0.0, 20.0, 5.0]);
        assert!(r[0].from_idle);
        assert_eq!(r[1].parts, [5.0, 0.0, 0.0, 4.0, 6.0, 0.0, 0.0, 5.0]);
        assert!(!r[1].from_idle);
    }
}
