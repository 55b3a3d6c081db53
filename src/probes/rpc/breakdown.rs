//! One RPC split into its parts from kernel events. Definitions (times are tracepoint
//! timestamps on CLOCK_MONOTONIC; C = the client, S = the server it called; "send" and
//! "receive" are the mechanism's system calls: write/read, sendto/recvfrom,
//! mq_timedsend/mq_timedreceive, futex with FUTEX_WAKE / FUTEX_WAIT — see [`Calls`]):
//!
//! | part | from | to |
//! |---|---|---|
//! | send | C enters its send (sys_enter) | S is marked waking (sched_waking) |
//! | IPI | C sends an IPI to S's CPU (ipi_send_cpu) | that CPU enters the reschedule or call-function-single interrupt |
//! | wake-up | sched_waking of S | S's CPU switches to S (sched_switch), minus the IPI part |
//! | switch-in | the switch to S | S's receive returns (sys_exit) |
//! | server | S's receive returned | S marks C waking (its reply) |
//! | reply IPI | S sends an IPI to C's CPU | that CPU enters the interrupt |
//! | reply wake-up | sched_waking of C | C's CPU switches to C, minus the reply IPI |
//! | return | the switch to C | C's receive returns (sys_exit); without one, C's switch-in record |
//!
//! "Switches to" is sched_switch, or perf's switch-in record written by the incoming task
//! (ring owners are opened with context_switch), whichever comes first: on some guests no
//! tracepoint fires in a CPU's idle task, so a switch away from idle is seen only that way.
//!
//! The parts telescope: they add up exactly to C's send entry → C's receive exit (its last
//! event before user space, below). A part that did not happen is 0: no IPI (one CPU, or an idle target polling for work); no wake-up when
//! the task was runnable but not asleep (on one CPU a preempted S is switched to when C
//! blocks; a reply to a C that is not asleep counts from S's send entry, or on one CPU to the
//! switch back to C); no switch-in when S takes its message without a receive system call (a
//! futex word already set when it looked: the part ends at the switch to it). A C that takes
//! the reply that way (on one CPU, the server it woke preempted it before it waited) returns
//! to user space from the switch: "return" ends at C's switch-in record, the last event C
//! writes before user space, as it ends at the receive's sys_exit when C slept (at the switch
//! itself where switch records are not kept). Either way the RPC ends at C's last event
//! before user space, so the client's timed call exceeds the parts by the same user-space
//! stretch in every pattern.
//! What the breakdown does not see: user-space time before the send's sys_enter and after the
//! receive's sys_exit, the hypervisor (a vCPU that was not running), and polling hand-offs
//! that make no system call at all.

use crate::evidence::trace::{Event, Kind};
use crate::probes::ipc::channel::Mech;
use std::collections::HashMap;

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

/// Indexes of the two IPI parts in [`PARTS`].
pub const IPI_PARTS: [usize; 2] = [1, 5];

/// One RPC's parts (ns, in PARTS order) and what the trace showed about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rpc {
    pub parts: [f64; 8],
    /// The server's CPU was idle when it switched to the server.
    pub from_idle: bool,
    /// When each part began and the RPC ended: what places a recorded event in a part
    /// (probes::rpc::path).
    pub marks: Marks,
}

impl Rpc {
    /// The traced span, C's send entry → C's receive exit.
    pub fn span_ns(&self) -> u64 {
        self.marks.end.saturating_sub(self.marks.enter)
    }
}

/// The instants that bound an RPC's parts (CLOCK_MONOTONIC ns). Each hand-off (request,
/// reply) starts at the waking and ends at the switch to the woken task; its IPI as sent,
/// and as received when the IPI part was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Marks {
    pub enter: u64,
    pub wake: u64,
    pub switch_in: u64,
    pub srv_exit: u64,
    pub reply_wake: u64,
    pub client_in: u64,
    pub end: u64,
    /// An IPI sent towards the server's / the client's CPU (whether or not its arrival was
    /// seen).
    pub ipi_send: [Option<u64>; 2],
    /// The IPI parts' intervals, when counted (sent and seen arriving within the hand-off).
    pub ipi: [Option<(u64, u64)>; 2],
}

/// What a participant's system call does in an RPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Send,
    Receive,
    Other,
}

/// Which system calls send and receive a message of one mechanism: numbers from libc for the
/// architecture we run on; futex sends and receives with one system call, told apart by its
/// op (FUTEX_WAKE sends, FUTEX_WAIT receives).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Calls {
    send: i64,
    recv: i64,
    futex: bool,
}

impl Calls {
    pub fn of(mech: Mech) -> Calls {
        let (send, recv) = match mech {
            Mech::Pipe | Mech::Unix | Mech::Eventfd | Mech::Spin => {
                (libc::SYS_write, libc::SYS_read)
            }
            // glibc's send/recv are the sendto/recvfrom system calls.
            Mech::UnixDgram => (libc::SYS_sendto, libc::SYS_recvfrom),
            Mech::Mqueue => (libc::SYS_mq_timedsend, libc::SYS_mq_timedreceive),
            Mech::Futex => (libc::SYS_futex, libc::SYS_futex),
        };
        Calls {
            send,
            recv,
            futex: mech == Mech::Futex,
        }
    }

    /// The role of system call `id` entered with second argument `arg1`.
    pub fn role(&self, id: i64, arg1: u64) -> Role {
        if self.futex {
            if id != self.send {
                return Role::Other;
            }
            let op = arg1 as i32 & !(libc::FUTEX_PRIVATE_FLAG | libc::FUTEX_CLOCK_REALTIME);
            return match op {
                libc::FUTEX_WAKE => Role::Send,
                libc::FUTEX_WAIT => Role::Receive,
                _ => Role::Other,
            };
        }
        self.role_at_exit(id)
    }

    /// The role of a call known only by its number (its entry was not seen).
    fn role_at_exit(&self, id: i64) -> Role {
        if self.futex {
            Role::Other
        } else if id == self.send {
            Role::Send
        } else if id == self.recv {
            Role::Receive
        } else {
            Role::Other
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Times {
    enter: u64,
    wake: u64,
    /// Each hand-off's IPI (0: the request's, 1: the reply's) as sent and as received.
    ipi_send: [Option<u64>; 2],
    ipi_recv: [Option<u64>; 2],
    switch_in: u64,
    srv_exit: u64,
    /// S entered the system call that sends its reply.
    srv_send: Option<u64>,
    reply_wake: u64,
    client_in: u64,
    /// C's switch-in record after the switch back to it: the last event C writes before
    /// user space when it takes the reply without a receive system call.
    client_back: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Waiting for C to enter a sending system call.
    Idle,
    /// C is sending: waiting for it to wake a server.
    Sending,
    /// S is waking: waiting for the switch to it.
    Waking,
    /// S runs: waiting for its receive to return.
    ServerIn,
    /// S works: waiting for it to reply.
    Serving,
    /// C is waking: waiting for the switch to it.
    Replying,
    /// C runs: waiting for its receive to return.
    ClientIn,
}

/// The pattern matcher over one time-ordered event list.
struct Matcher<'a> {
    who: Who<'a>,
    calls: Calls,
    st: State,
    t: Times,
    server: i32,
    from_idle: bool,
    /// The system call each participant is in (or last made) and its role.
    in_call: HashMap<i32, (i64, Role)>,
    out: Vec<Rpc>,
}

/// An IPI arrived: the CPU entered the interrupt that a wake-up's IPI raises (reschedule, or
/// call-function-single when the wake-up was queued on the target's wake list).
fn ipi_arrival(k: Kind) -> bool {
    matches!(k, Kind::ReschedEntry | Kind::CallFuncEntry)
}

impl Matcher<'_> {
    fn finish(&mut self, end: u64) {
        self.out.push(finish(&self.t, end, self.from_idle));
        self.st = State::Idle;
    }

    fn step(&mut self, e: &Event) {
        let (c, st) = (self.who.client, self.st);
        let role = self.role_of(e);
        let enter = matches!(e.kind, Kind::SysEnter { .. });
        // C sends a new request: it starts an RPC wherever we were. In ClientIn, C was
        // switched back in and took the reply without a receive system call (a futex word
        // already set when it looked): that RPC ended at the last event C wrote before user
        // space, its switch-in record (the switch itself where switch records are not kept).
        if e.tid == c && enter && role == Role::Send {
            if st == State::ClientIn {
                self.finish(self.t.client_back.unwrap_or(self.t.client_in));
            }
            self.t = Times {
                enter: e.time,
                ..Default::default()
            };
            self.st = State::Sending;
            return;
        }
        if let Kind::Waking { pid, .. } = e.kind {
            if e.tid == c && self.who.servers.contains(&pid) {
                if st != State::Sending {
                    // The send's sys_enter was not seen in this pattern: unusable.
                    self.st = State::Idle;
                    return;
                }
                self.server = pid;
                self.t.wake = e.time;
                self.st = State::Waking;
                return;
            }
        }
        // perf's switch-in record says the same as sched_switch, a little later (after the
        // switch); whichever comes first moves the pattern on and the other finds it moved.
        let kind = match e.kind {
            Kind::SwitchIn { prev } => {
                if st == State::ClientIn && e.tid == c {
                    self.t.client_back.get_or_insert(e.time);
                }
                Kind::Switch { prev, next: e.tid }
            }
            k => k,
        };
        if self.on_ipi(e, kind) {
            return;
        }
        match st {
            State::Sending | State::Waking | State::ServerIn => self.on_request(e, kind, role),
            State::Serving | State::Replying | State::ClientIn => self.on_reply(e, kind, role),
            State::Idle => {}
        }
    }

    /// Inside a hand-off (S waking: the request's; C waking: the reply's), the waker's IPI to
    /// the woken task's CPU as sent and as it arrives there; whether `e` was one of them.
    fn on_ipi(&mut self, e: &Event, kind: Kind) -> bool {
        let (k, waker, target) = match self.st {
            State::Waking => (0, self.who.client, self.who.server_cpu),
            State::Replying => (1, self.server, self.who.client_cpu),
            _ => return false,
        };
        let t = &mut self.t;
        match kind {
            Kind::IpiSend { cpu } if e.tid == waker && cpu as u32 == target => {
                t.ipi_send[k].get_or_insert(e.time);
            }
            k2 if ipi_arrival(k2) && e.cpu == target && t.ipi_send[k].is_some() => {
                t.ipi_recv[k].get_or_insert(e.time);
            }
            _ => return false,
        }
        true
    }

    /// The request half: from C's send to S's receive returning.
    fn on_request(&mut self, e: &Event, kind: Kind, role: Role) {
        let (c, s, st) = (self.who.client, self.server, self.st);
        let t = &mut self.t;
        match (st, kind) {
            (State::Sending, Kind::Switch { prev, next })
                if prev == c && self.who.servers.contains(&next) =>
            {
                // One CPU, S runnable but not asleep (preempted before it waited again): the
                // request woke nobody and C's block hands the CPU to S.
                self.server = next;
                t.wake = e.time;
                t.switch_in = e.time;
                self.from_idle = false;
                self.st = State::ServerIn;
            }
            (State::Waking, Kind::Switch { prev, next }) if next == s => {
                t.switch_in = e.time;
                self.from_idle = prev == 0;
                self.st = State::ServerIn;
            }
            (State::Waking, Kind::SysExit { .. }) if e.tid == s && role == Role::Receive => {
                // S was still running (never slept): no switch to it.
                t.switch_in = t.wake;
                t.srv_exit = e.time;
                self.from_idle = false;
                self.st = State::Serving;
            }
            (State::ServerIn, Kind::SysExit { .. }) if e.tid == s && role == Role::Receive => {
                t.srv_exit = e.time;
                self.st = State::Serving;
            }
            (State::ServerIn, Kind::SysEnter { .. }) if e.tid == s && role == Role::Send => {
                // S took the request without a receive system call (a futex word already
                // set when it looked) and replies: its receive ended when it got the CPU.
                t.srv_exit = t.switch_in;
                t.srv_send = Some(e.time);
                self.st = State::Serving;
            }
            _ => {}
        }
    }

    /// The reply half: from S serving to C's receive returning.
    fn on_reply(&mut self, e: &Event, kind: Kind, role: Role) {
        let (c, s, st) = (self.who.client, self.server, self.st);
        let t = &mut self.t;
        match (st, kind) {
            (State::Serving, Kind::SysEnter { .. }) if e.tid == s && role == Role::Send => {
                t.srv_send.get_or_insert(e.time);
            }
            (State::Serving, Kind::Switch { prev, next })
                if prev == s && next == c && t.srv_send.is_some() =>
            {
                // One CPU, C preempted while runnable (not asleep): the reply wakes nobody;
                // S's block after replying hands the CPU straight back.
                t.reply_wake = e.time;
                t.client_in = e.time;
                self.st = State::ClientIn;
            }
            (State::Serving, Kind::Waking { pid, .. }) if e.tid == s && pid == c => {
                t.reply_wake = e.time;
                self.st = State::Replying;
            }
            (State::Serving, Kind::SysExit { .. }) if e.tid == c && role == Role::Receive => {
                // C's receive found the reply without sleeping (it was not asleep when S
                // sent): the reply counts from S's sending system call.
                if let Some(sent) = t.srv_send {
                    t.reply_wake = sent.min(e.time);
                    t.client_in = t.reply_wake;
                    self.finish(e.time);
                }
            }
            (State::Replying, Kind::Switch { next, .. }) if next == c => {
                t.client_in = e.time;
                self.st = State::ClientIn;
            }
            (State::Replying, Kind::SysExit { .. }) if e.tid == c && role == Role::Receive => {
                // C had not gone to sleep yet: the reply found it running.
                t.client_in = t.reply_wake;
                self.finish(e.time);
            }
            (State::ClientIn, Kind::SysExit { .. }) if e.tid == c && role == Role::Receive => {
                self.finish(e.time);
            }
            _ => {}
        }
    }

    /// The role of the call a participant enters or leaves (remembered at entry, so an exit
    /// knows futex's op).
    fn role_of(&mut self, e: &Event) -> Role {
        match e.kind {
            Kind::SysEnter { id, arg1 } => {
                let r = self.calls.role(id, arg1);
                self.in_call.insert(e.tid, (id, r));
                r
            }
            // A call whose entry was not seen (before the trace began): its number still
            // tells, except futex's op.
            Kind::SysExit { id } => match self.in_call.get(&e.tid) {
                Some(&(entered, r)) if entered == id => r,
                _ => self.calls.role_at_exit(id),
            },
            _ => Role::Other,
        }
    }
}

/// Who the RPCs were between and where they ran.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    pub client: i32,
    pub servers: &'a [i32],
    pub client_cpu: u32,
    pub server_cpu: u32,
}

/// Split every complete RPC in `events` (time-ordered). `who`: C's tid, the servers' tids,
/// and where the client and the servers are pinned; `calls` the mechanism's
/// sending and receiving system calls. RPCs whose events do not follow the pattern (e.g. cut
/// by the start of the trace) are left out.
pub fn split(events: &[Event], who: &Who<'_>, calls: Calls) -> Vec<Rpc> {
    let mut m = Matcher {
        who: *who,
        calls,
        st: State::Idle,
        t: Times::default(),
        server: 0,
        from_idle: false,
        in_call: HashMap::new(),
        out: Vec::new(),
    };
    for e in events {
        m.step(e);
    }
    m.out
}

/// The IPI part's interval: sent and received within its hand-off.
fn ipi(send: Option<u64>, recv: Option<u64>, (from, to): (u64, u64)) -> Option<(u64, u64)> {
    match (send, recv) {
        (Some(s), Some(r)) if s >= from && r >= s && r <= to => Some((s, r)),
        _ => None,
    }
}

fn finish(t: &Times, end: u64, from_idle: bool) -> Rpc {
    let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
    let hand_offs = [(t.wake, t.switch_in), (t.reply_wake, t.client_in)];
    let ipi_at = [0, 1].map(|k| ipi(t.ipi_send[k], t.ipi_recv[k], hand_offs[k]));
    let [ipi1, ipi2] = ipi_at.map(|x| x.map_or(0, |(s, r)| r - s));
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
        marks: Marks {
            enter: t.enter,
            wake: t.wake,
            switch_in: t.switch_in,
            srv_exit: t.srv_exit,
            reply_wake: t.reply_wake,
            client_in: t.client_in,
            end,
            ipi_send: t.ipi_send,
            ipi: ipi_at,
        },
    }
}

/// The definition of a part, for `--explain` and the notes of each `rpc.part`.
pub fn definition(part: &str) -> &'static str {
    match part {
        "send" => "send: the client enters its sending system call (sys_enter of write, sendto, mq_timedsend or futex FUTEX_WAKE) → the server is marked waking (sched_waking), or is switched to when it was runnable but not asleep",
        "IPI" => "IPI: the client sends an IPI to the server's CPU (ipi_send_cpu) → that CPU enters the reschedule or call-function-single interrupt (0 when no IPI was needed)",
        "wake-up" => "wake-up: the server is marked waking → its CPU switches to it (sched_switch, or perf's switch-in record where no tracepoint fires in the idle task), minus the IPI part",
        "switch-in" => "switch-in: the switch to the server → its receiving system call returns (sys_exit of read, recvfrom, mq_timedreceive or futex FUTEX_WAIT; 0 when it took the request without one)",
        "server" => "server: the server's receive returned → it marks the client waking (its reply sent); when the client is not asleep, → the server enters its send, or on one CPU the switch back to the client",
        "reply IPI" => "reply IPI: the server sends an IPI to the client's CPU → that CPU enters the reschedule or call-function-single interrupt",
        "reply wake-up" => "reply wake-up: the client is marked waking → its CPU switches to it, minus the reply IPI",
        _ => "return: the switch to the client → the client's receiving system call returns; when it took the reply without one (not asleep when the reply came), → its switch-in record, the last event it writes before user space",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::evidence::trace::tests::{fixture_decoder, fixture_records};
    use crate::evidence::trace::{parse_fixture, RawRecord};

    fn fixture_text(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/trace")
            .join(name);
        std::fs::read_to_string(path).unwrap()
    }

    fn fixture(name: &str) -> Vec<RawRecord> {
        parse_fixture(&fixture_text(name)).unwrap()
    }

    /// Split a committed recording; its first line names the client, the server and their
    /// CPUs ("# <scenario> <mech>: client C on CPU c, server [S] on CPU s; ...").
    fn split_fixture(name: &str, mech: Mech) -> Vec<Rpc> {
        let head = fixture_text(name);
        let recs = parse_fixture(&head).unwrap();
        let n: Vec<i64> = head
            .lines()
            .next()
            .unwrap()
            .split(|c: char| !c.is_ascii_digit())
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().unwrap())
            .collect();
        let (events, lost) = fixture_decoder().decode_all(&recs);
        assert_eq!(lost, 0);
        split(
            &events,
            &Who {
                client: n[0] as i32,
                servers: &[n[2] as i32],
                client_cpu: n[1] as u32,
                server_cpu: n[3] as u32,
            },
            Calls::of(mech),
        )
    }

    fn adds_up(rpcs: &[Rpc]) {
        for r in rpcs {
            assert!(r.parts.iter().all(|&p| p >= 0.0), "{r:?}");
            assert_eq!(r.parts.iter().sum::<f64>(), r.span_ns() as f64, "{r:?}");
        }
    }

    /// The fixture: 40 pipe round trips, client 14054 on CPU 1, server 16600 on CPU 0.
    #[test]
    fn the_recorded_rpcs_split_into_parts_that_add_up() {
        let (events, _) = fixture_decoder().decode_all(&fixture_records());
        let pipe = Calls::of(Mech::Pipe);
        let rpcs = split(
            &events,
            &Who {
                client: 14054,
                servers: &[16600],
                client_cpu: 1,
                server_cpu: 0,
            },
            pipe,
        );
        assert!(rpcs.len() >= 35, "{} of 40 matched", rpcs.len());
        adds_up(&rpcs);
        for r in &rpcs {
            // A pipe hand-off between CPUs: a wake-up and a switch-in always happen.
            assert!(r.parts[2] > 0.0 && r.parts[3] > 0.0, "{r:?}");
        }
        // The request's IPI is visible in this kernel's trace.
        assert!(rpcs.iter().any(|r| r.parts[1] > 0.0));
        // Naming the wrong server finds nothing.
        assert!(split(
            &events,
            &Who {
                client: 14054,
                servers: &[1],
                client_cpu: 1,
                server_cpu: 0
            },
            pipe
        )
        .is_empty());
    }

    /// 40 pipe round trips on one CPU (client 32054, server 1827, CPU 1): the woken server
    /// preempts the client on its way out of write, so the reply wakes nobody.
    #[test]
    fn the_recorded_local_rpcs_split_too() {
        let (events, _) = fixture_decoder().decode_all(&fixture("pipe-local.records"));
        let rpcs = split(
            &events,
            &Who {
                client: 32054,
                servers: &[1827],
                client_cpu: 1,
                server_cpu: 1,
            },
            Calls::of(Mech::Pipe),
        );
        assert!(rpcs.len() >= 35, "{} of 40 matched", rpcs.len());
        adds_up(&rpcs);
        for r in &rpcs {
            assert_eq!(r.parts[1] + r.parts[5], 0.0, "no IPI on one CPU: {r:?}");
            assert!(!r.from_idle);
        }
    }

    /// Futex RPCs on one CPU make no read or write: the client's FUTEX_WAKE sends, the server
    /// preempts it on its way out, replies with a FUTEX_WAKE that wakes nobody and blocks in
    /// FUTEX_WAIT; the client, switched back in, finds the word set without a system call.
    /// (Matching on any system call as the send found 13% of these.)
    #[test]
    fn the_recorded_local_futex_rpcs_split() {
        let rpcs = split_fixture("futex-local.records", Mech::Futex);
        assert!(rpcs.len() >= 35, "{} of 40 matched", rpcs.len());
        adds_up(&rpcs);
        for r in &rpcs {
            assert_eq!(r.parts[1] + r.parts[5], 0.0, "no IPI on one CPU: {r:?}");
        }
        // Mostly the server was asleep: woken, then switched to. Otherwise (preempted before
        // it waited again) it took the request without a system call: both parts 0.
        let woken = rpcs
            .iter()
            .filter(|r| r.parts[2] > 0.0 && r.parts[3] > 0.0)
            .count();
        assert!(woken * 2 > rpcs.len(), "{woken} of {}", rpcs.len());
        assert!(rpcs
            .iter()
            .any(|r| r.parts[2] == 0.0 && r.parts[3] == 0.0 && r.parts[6] > 0.0));
        // Most replies found the client runnable: nothing to wake, nothing to return from.
        let direct = rpcs
            .iter()
            .filter(|r| r.parts[6] == 0.0 && r.parts[7] == 0.0)
            .count();
        assert!(direct * 2 > rpcs.len(), "{direct} of {}", rpcs.len());
    }

    /// Local futex RPCs recorded with perf's switch records and the client's time around each
    /// call. In about half of them the reply found the client not asleep (the server it woke
    /// preempted it on its way out of FUTEX_WAKE): it is switched back in and takes the reply
    /// without a system call. Such an RPC ends at the client's switch-in record, the last
    /// event it writes before user space, as an RPC it slept in ends at its receive's
    /// sys_exit: in both, no event of the client is left between the RPC's end and the end of
    /// its timed call, so the parts leave out the same user-space stretch in both patterns.
    #[test]
    fn a_reply_that_found_the_client_running_ends_at_its_last_recorded_event() {
        let name = "futex-local-switch-records.records";
        let rpcs = split_fixture(name, Mech::Futex);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/trace")
            .join(name);
        let windows =
            crate::evidence::trace::tests::fixture_windows(&std::fs::read_to_string(path).unwrap());
        let (events, _) = fixture_decoder().decode_all(&fixture(name));
        assert!(rpcs.len() >= 35, "{} of 40 matched", rpcs.len());
        adds_up(&rpcs);
        let running = |r: &&Rpc| r.marks.reply_wake == r.marks.client_in;
        let not_asleep = rpcs.iter().filter(running).count();
        assert!(not_asleep >= 10 && not_asleep < rpcs.len(), "{not_asleep}");
        for r in &rpcs {
            let &(_, t1) = windows
                .iter()
                .find(|w| (w.0..=w.1).contains(&r.marks.enter))
                .unwrap();
            let after: Vec<&Event> = events
                .iter()
                .filter(|e| e.tid == 10551 && e.time > r.marks.end && e.time <= t1)
                .collect();
            assert!(after.is_empty(), "{r:?}: {after:?}");
            // The switch back and the record it writes are the client's return.
            assert!(r.parts[7] > 0.0, "{r:?}");
        }
    }

    /// Across CPUs the client sleeps for the reply: the reply wake-up is the time from the
    /// server marking it waking to its CPU switching to it, not folded into "return".
    #[test]
    fn the_recorded_remote_replies_have_their_own_wake_up() {
        for (name, mech) in [
            ("futex-remote.records", Mech::Futex),
            ("pipe-remote-exclusive.records", Mech::Pipe),
        ] {
            let rpcs = split_fixture(name, mech);
            assert!(rpcs.len() >= 30, "{name}: {} of 40 matched", rpcs.len());
            adds_up(&rpcs);
            let woken = rpcs.iter().filter(|r| r.parts[6] > 0.0).count();
            assert!(woken * 2 > rpcs.len(), "{name}: {woken} of {}", rpcs.len());
            // The return after the switch is short next to the wake-up (µs, not tens of µs).
            let ret: Vec<f64> = rpcs.iter().map(|r| r.parts[7]).collect();
            let wake: Vec<f64> = rpcs.iter().map(|r| r.parts[6] + r.parts[5]).collect();
            let med = crate::engine::stats::median;
            assert!(med(&ret) < med(&wake), "{name}");
            // The IPIs towards both CPUs are seen.
            assert!(rpcs.iter().any(|r| r.parts[1] > 0.0), "{name}");
            assert!(rpcs.iter().any(|r| r.parts[5] > 0.0), "{name}");
        }
    }

    /// A window of a real traced run with perf's switch records (ring owners opened with
    /// context_switch): every switch to the client seen by sched_switch is also seen as a
    /// switch-in record, at or after it, and splitting with both gives the same RPCs as
    /// with the tracepoint alone.
    #[test]
    fn recorded_switch_in_records_match_the_tracepoint() {
        let name = "pipe-remote-switch-records.records";
        let (events, lost) = fixture_decoder().decode_all(&fixture(name));
        assert_eq!(lost, 0);
        let c = 409;
        let tp: Vec<u64> = events
            .iter()
            .filter(|e| matches!(e.kind, Kind::Switch { next, .. } if next == c))
            .map(|e| e.time)
            .collect();
        let perf: Vec<u64> = events
            .iter()
            .filter(|e| matches!(e.kind, Kind::SwitchIn { .. }) && e.tid == c)
            .map(|e| e.time)
            .collect();
        assert!(tp.len() >= 20, "{}", tp.len());
        assert_eq!(tp.len(), perf.len());
        assert!(tp.iter().zip(&perf).all(|(a, b)| a <= b && b - a < 50_000));
        let with = split_fixture(name, Mech::Pipe);
        let without: Vec<Event> = events
            .iter()
            .filter(|e| !matches!(e.kind, Kind::SwitchIn { .. }))
            .copied()
            .collect();
        let alone = split(
            &without,
            &Who {
                client: c,
                servers: &[438],
                client_cpu: 1,
                server_cpu: 0,
            },
            Calls::of(Mech::Pipe),
        );
        assert!(with.len() >= 20, "{}", with.len());
        assert_eq!(with, alone);
    }

    pub(crate) fn ev(time: u64, cpu: u32, tid: i32, kind: Kind) -> Event {
        Event {
            time,
            cpu,
            pid: tid,
            tid,
            kind,
        }
    }

    pub(crate) fn enter(id: i64) -> Kind {
        Kind::SysEnter { id, arg1: 0 }
    }

    pub(crate) fn exit(id: i64) -> Kind {
        Kind::SysExit { id }
    }

    pub(crate) fn waking(pid: i32) -> Kind {
        Kind::Waking { pid, target_cpu: 0 }
    }

    pub(crate) const C: i32 = 10;
    pub(crate) const S: i32 = 20;

    /// Pipe RPCs of client C on CPU 1 and server S on CPU 0.
    pub(crate) fn pipe_rpcs(events: &[Event]) -> Vec<Rpc> {
        split(
            events,
            &Who {
                client: C,
                servers: &[S],
                client_cpu: 1,
                server_cpu: 0,
            },
            Calls::of(Mech::Pipe),
        )
    }

    #[test]
    fn a_server_found_running_and_an_idle_switch_are_told_apart() {
        let (w, r) = (libc::SYS_write, libc::SYS_read);
        let events = [
            ev(100, 1, C, enter(w)),
            ev(110, 1, C, waking(S)),
            ev(112, 1, C, exit(w)),
            ev(114, 1, C, enter(r)),
            ev(130, 0, 0, Kind::Switch { prev: 0, next: S }),
            ev(140, 0, S, exit(r)),
            ev(145, 0, S, enter(w)),
            ev(150, 0, S, waking(C)),
            ev(170, 1, 0, Kind::Switch { prev: 0, next: C }),
            ev(175, 1, C, exit(r)),
            // Second RPC: S never slept, C never slept.
            ev(200, 1, C, enter(w)),
            ev(205, 1, C, waking(S)),
            ev(207, 1, C, exit(w)),
            ev(208, 1, C, enter(r)),
            ev(209, 0, S, exit(r)),
            ev(212, 0, S, enter(w)),
            ev(215, 0, S, waking(C)),
            ev(220, 1, C, exit(r)),
        ];
        let rpcs = pipe_rpcs(&events);
        assert_eq!(rpcs.len(), 2);
        assert_eq!(rpcs[0].parts, [10.0, 0.0, 20.0, 10.0, 10.0, 0.0, 20.0, 5.0]);
        assert!(rpcs[0].from_idle);
        assert_eq!(rpcs[1].parts, [5.0, 0.0, 0.0, 4.0, 6.0, 0.0, 0.0, 5.0]);
        assert!(!rpcs[1].from_idle);
    }

    /// Waking an idle CPU queues the task on its wake list and sends a call-function IPI, not
    /// a reschedule: both kinds of arrival end the IPI part, in each direction.
    #[test]
    fn ipis_to_idle_cpus_are_split_out_of_both_wake_ups() {
        let (w, r) = (libc::SYS_write, libc::SYS_read);
        let events = [
            ev(100, 1, C, enter(w)),
            ev(105, 1, C, waking(S)),
            ev(107, 1, C, Kind::IpiSend { cpu: 0 }),
            ev(108, 1, C, exit(w)),
            ev(110, 1, C, enter(r)),
            ev(112, 1, C, Kind::Switch { prev: C, next: 0 }),
            // Someone else's IPI to CPU 0 is not ours.
            ev(113, 1, 99, Kind::IpiSend { cpu: 0 }),
            ev(120, 0, 0, Kind::CallFuncEntry),
            ev(125, 0, 0, Kind::Switch { prev: 0, next: S }),
            ev(130, 0, S, exit(r)),
            ev(135, 0, S, enter(w)),
            ev(140, 0, S, waking(C)),
            ev(142, 0, S, Kind::IpiSend { cpu: 1 }),
            ev(150, 1, 0, Kind::ReschedEntry),
            ev(160, 1, 0, Kind::Switch { prev: 0, next: C }),
            ev(170, 1, C, exit(r)),
        ];
        let rpcs = pipe_rpcs(&events);
        assert_eq!(rpcs.len(), 1);
        assert_eq!(rpcs[0].parts, [5.0, 13.0, 7.0, 5.0, 10.0, 8.0, 12.0, 10.0]);
        assert_eq!(rpcs[0].span_ns(), 70);
    }

    /// On some guests no tracepoint fires in a CPU's idle task: the switches away from idle
    /// are seen only as perf switch-in records, written by the incoming task.
    #[test]
    fn switch_in_records_stand_in_for_switches_from_an_idle_cpu() {
        let (w, r) = (libc::SYS_write, libc::SYS_read);
        let events = [
            ev(100, 1, C, enter(w)),
            ev(105, 1, C, waking(S)),
            ev(108, 1, C, exit(w)),
            ev(110, 1, C, enter(r)),
            ev(112, 1, C, Kind::Switch { prev: C, next: 0 }),
            // CPU 0 records its idle side: the tracepoint first, then perf's record.
            ev(125, 0, 0, Kind::Switch { prev: 0, next: S }),
            ev(126, 0, S, Kind::SwitchIn { prev: 0 }),
            ev(130, 0, S, exit(r)),
            ev(135, 0, S, enter(w)),
            ev(140, 0, S, waking(C)),
            ev(145, 0, S, exit(w)),
            // CPU 1 records nothing in its idle task: only C's switch-in record.
            ev(161, 1, C, Kind::SwitchIn { prev: 0 }),
            ev(170, 1, C, exit(r)),
        ];
        let rpcs = pipe_rpcs(&events);
        assert_eq!(rpcs.len(), 1);
        assert_eq!(rpcs[0].parts, [5.0, 0.0, 20.0, 5.0, 10.0, 0.0, 21.0, 9.0]);
        assert!(rpcs[0].from_idle);
    }

    /// Futex: WAKE sends, WAIT receives (the op is the second argument); the client that is
    /// switched back in takes the reply without a system call, so its next WAKE ends the RPC
    /// at the switch. A FUTEX_WAIT is never taken for a send.
    #[test]
    fn futex_rpcs_are_anchored_on_wake_and_wait() {
        let f = libc::SYS_futex;
        let wake = Kind::SysEnter {
            id: f,
            arg1: (libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG) as u64,
        };
        let wait = Kind::SysEnter {
            id: f,
            arg1: libc::FUTEX_WAIT as u64,
        };
        let calls = Calls::of(Mech::Futex);
        assert_eq!(calls.role(f, 129), Role::Send);
        assert_eq!(calls.role(f, 0), Role::Receive);
        assert_eq!(calls.role(f, 9), Role::Other);
        assert_eq!(calls.role(libc::SYS_write, 1), Role::Other);
        let events = [
            ev(90, 1, S, wait),
            ev(100, 1, C, wake),
            ev(104, 1, C, waking(S)),
            ev(106, 1, C, exit(f)),
            ev(110, 1, C, Kind::Switch { prev: C, next: S }),
            ev(115, 1, S, exit(f)),
            ev(120, 1, S, wake),
            ev(122, 1, S, exit(f)),
            ev(124, 1, S, wait),
            ev(130, 1, S, Kind::Switch { prev: S, next: C }),
            // perf's record of the switch, written by C: its last event before user space.
            ev(133, 1, C, Kind::SwitchIn { prev: S }),
            // Next RPC: C waits this time and is woken.
            ev(140, 1, C, wake),
            ev(144, 1, C, waking(S)),
            ev(146, 1, C, exit(f)),
            ev(148, 1, C, wait),
            ev(150, 1, C, Kind::Switch { prev: C, next: S }),
            ev(155, 1, S, exit(f)),
            ev(160, 1, S, wake),
            ev(162, 1, S, waking(C)),
            ev(164, 1, S, exit(f)),
            ev(166, 1, S, wait),
            ev(170, 1, S, Kind::Switch { prev: S, next: C }),
            ev(175, 1, C, exit(f)),
            // A third WAKE starts another RPC that the trace cuts off: not counted.
            ev(180, 1, C, wake),
        ];
        let rpcs = split(
            &events,
            &Who {
                client: C,
                servers: &[S],
                client_cpu: 1,
                server_cpu: 1,
            },
            calls,
        );
        assert_eq!(rpcs.len(), 2);
        assert_eq!(rpcs[0].parts, [4.0, 0.0, 6.0, 5.0, 15.0, 0.0, 0.0, 3.0]);
        assert_eq!(rpcs[1].parts, [4.0, 0.0, 6.0, 5.0, 7.0, 0.0, 8.0, 5.0]);
        // Read as a pipe, the same events hold no RPC at all.
        assert!(split(
            &events,
            &Who {
                client: C,
                servers: &[S],
                client_cpu: 1,
                server_cpu: 1
            },
            Calls::of(Mech::Pipe)
        )
        .is_empty());
    }

    /// The reply was there before the client looked: its receive returns without a wake-up,
    /// and the reply counts from the server's sending system call.
    #[test]
    fn a_reply_waiting_for_the_client_counts_from_the_server_s_send() {
        let (w, r) = (libc::SYS_write, libc::SYS_read);
        let events = [
            ev(100, 1, C, enter(w)),
            ev(105, 1, C, waking(S)),
            ev(120, 0, 0, Kind::Switch { prev: 0, next: S }),
            ev(125, 0, S, exit(r)),
            ev(130, 0, S, enter(w)),
            ev(135, 0, S, exit(w)),
            ev(150, 1, C, exit(w)),
            ev(152, 1, C, enter(r)),
            ev(155, 1, C, exit(r)),
        ];
        let rpcs = pipe_rpcs(&events);
        assert_eq!(rpcs.len(), 1);
        assert_eq!(rpcs[0].parts, [5.0, 0.0, 15.0, 5.0, 5.0, 0.0, 0.0, 25.0]);
    }
}
