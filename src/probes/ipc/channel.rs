//! The seven IPC mechanisms as one two-way channel between the measuring side (A) and a
//! forked partner (B): created before the fork, each side sends one small message and waits
//! for one. Every operation is allocation-free (the partner runs it after fork).

use crate::engine::partner::{errno, futex, spawn_ready_child, Child, SharedPage, ThreadPartner};
use crate::error::{Error, Result};
use crate::evidence::Participant;
use crate::probes::os_error;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

/// The mechanism carrying the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Mech {
    /// Two pipes, one byte each way.
    Pipe,
    /// Two unix stream socketpairs (one per direction), one byte each way.
    Unix,
    /// Two unix datagram socketpairs (one per direction), one 1-byte datagram each way.
    UnixDgram,
    /// Two eventfds, one 8-byte count each way.
    Eventfd,
    /// Two futex words in shared memory: set, wake; wait until set.
    Futex,
    /// Two POSIX message queues, one 1-byte message each way.
    Mqueue,
    /// Two flags in shared memory, each side busy-polling: no kernel at all.
    Spin,
}

crate::units::name::named!(Mech);

impl Mech {
    pub const ALL: [Mech; 7] = [
        Mech::Pipe,
        Mech::Unix,
        Mech::UnixDgram,
        Mech::Eventfd,
        Mech::Futex,
        Mech::Mqueue,
        Mech::Spin,
    ];

    /// Whether a waiting side sleeps in the kernel (and so switches out) rather than polls.
    pub fn blocks(self) -> bool {
        self != Mech::Spin
    }
}

/// Shared-page slots: one word per direction, each on its own cache line.
const TO_B: usize = 0;
const TO_A: usize = 16;

/// One direction's endpoint: the descriptor to send on and the one to receive on.
#[derive(Debug, Clone, Copy)]
struct End {
    tx: i32,
    rx: i32,
    tx_word: usize,
    rx_word: usize,
}

/// A two-way channel. Dropping it closes every descriptor it still owns.
pub struct Channel {
    pub mech: Mech,
    a: End,
    b: End,
    /// Descriptors only B uses (the parent closes them after the fork).
    b_only: [i32; 2],
    /// Descriptors only A uses (the partner closes them first thing).
    a_only: [i32; 2],
    owned: Vec<i32>,
    mq: bool,
    page: SharedPage,
}

impl Channel {
    pub fn new(mech: Mech) -> Result<Channel> {
        let page = SharedPage::new()?;
        let none = End {
            tx: -1,
            rx: -1,
            tx_word: TO_B,
            rx_word: TO_A,
        };
        let mut ch = Channel {
            mech,
            a: none,
            b: End {
                tx_word: TO_A,
                rx_word: TO_B,
                ..none
            },
            b_only: [-1; 2],
            a_only: [-1; 2],
            owned: Vec::new(),
            mq: false,
            page,
        };
        match mech {
            Mech::Pipe => {
                let (r1, w1) = pipe()?;
                let (r2, w2) = pipe()?;
                ch.owned.extend([r1, w1, r2, w2]);
                (ch.a.tx, ch.b.rx, ch.b.tx, ch.a.rx) = (w1, r1, w2, r2);
                ch.a_only = [w1, r2];
                ch.b_only = [r1, w2];
            }
            Mech::Unix | Mech::UnixDgram => {
                // One socketpair per direction, like the two pipes. Over one stream socket
                // both ways, B's read frees A's send buffer: `sock_wfree` → `unix_write_space`
                // wakes every sleeper on A's socket, and A, asleep in `unix_stream_data_wait`
                // for the reply, is woken although no data came (that wait does not filter by
                // poll key; the datagram wait does). Each round trip then paid for spurious
                // wake-ups and their switches. With a socketpair per direction A sleeps on a
                // socket whose buffer nobody frees meanwhile.
                let kind = if mech == Mech::Unix {
                    libc::SOCK_STREAM
                } else {
                    libc::SOCK_DGRAM
                };
                let to_b = socketpair(kind)?;
                ch.owned.extend(to_b);
                let to_a = socketpair(kind)?;
                ch.owned.extend(to_a);
                (ch.a.tx, ch.b.rx, ch.b.tx, ch.a.rx) = (to_b[0], to_b[1], to_a[1], to_a[0]);
                ch.a_only = [to_b[0], to_a[0]];
                ch.b_only = [to_b[1], to_a[1]];
            }
            Mech::Eventfd => {
                let mk = || {
                    // SAFETY: eventfd has no memory arguments.
                    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
                    if fd < 0 {
                        Err(os_error("cannot create an eventfd"))
                    } else {
                        Ok(fd)
                    }
                };
                let to_b = mk()?;
                ch.owned.push(to_b);
                let to_a = mk()?;
                ch.owned.push(to_a);
                (ch.a.tx, ch.b.rx, ch.b.tx, ch.a.rx) = (to_b, to_b, to_a, to_a);
            }
            Mech::Mqueue => {
                let to_b = mq_open_unlinked()?;
                ch.owned.push(to_b);
                let to_a = mq_open_unlinked()?;
                ch.owned.push(to_a);
                ch.mq = true;
                (ch.a.tx, ch.b.rx, ch.b.tx, ch.a.rx) = (to_b, to_b, to_a, to_a);
            }
            Mech::Futex | Mech::Spin => {}
        }
        Ok(ch)
    }

    /// In the partner, right after the fork: close A's descriptors so that a dead measuring
    /// side reads as end-of-file here. Allocation-free.
    pub fn partner_close(&self) {
        for fd in self.a_only.into_iter().filter(|&f| f >= 0) {
            // SAFETY: closing this process's copy of a descriptor we own.
            unsafe { libc::close(fd) };
        }
    }

    /// In the parent, after the fork: close B's descriptors, so a dead partner reads as EOF.
    pub fn parent_close(&mut self) {
        for fd in self.b_only.into_iter().filter(|&f| f >= 0) {
            // SAFETY: closing our copy exactly once; removed from `owned` below.
            unsafe { libc::close(fd) };
            self.owned.retain(|&o| o != fd);
        }
        self.b_only = [-1; 2];
    }

    fn word(&self, i: usize) -> &AtomicI32 {
        self.page.slot(i)
    }

    /// The partner: receive, reply, until the channel fails. Allocation-free.
    pub fn serve(&self) -> i32 {
        self.serve_until(&|| false)
    }

    /// [`Channel::serve`] in a thread of this process: returns when `stop` says so (checked
    /// when a wait is interrupted, and now and then while polling).
    pub fn serve_until(&self, stop: &dyn Fn() -> bool) -> i32 {
        loop {
            if self.recv_on(self.b, stop).is_err() || self.send_on(self.b).is_err() {
                return 0;
            }
        }
    }

    /// One round trip from A: send, then wait for the reply. `gone` tells whether the partner
    /// died (checked when a wait is interrupted, and now and then while polling).
    #[inline(always)]
    pub fn round_trip(&self, gone: &dyn Fn() -> bool) -> std::result::Result<(), i32> {
        self.send_on(self.a)?;
        self.recv_on(self.a, gone)
    }

    #[inline(always)]
    fn send_on(&self, e: End) -> std::result::Result<(), i32> {
        let one: u64 = 1;
        loop {
            // SAFETY: every pointer below is to a live local of the stated size.
            let r = unsafe {
                match self.mech {
                    Mech::Pipe | Mech::Unix => {
                        libc::write(e.tx, &one as *const u64 as *const libc::c_void, 1)
                    }
                    Mech::UnixDgram => {
                        libc::send(e.tx, &one as *const u64 as *const libc::c_void, 1, 0)
                    }
                    Mech::Eventfd => {
                        libc::write(e.tx, &one as *const u64 as *const libc::c_void, 8)
                    }
                    Mech::Mqueue => {
                        let r =
                            libc::mq_send(e.tx, &one as *const u64 as *const libc::c_char, 1, 0);
                        if r == 0 {
                            1
                        } else {
                            -1
                        }
                    }
                    Mech::Futex => {
                        let w = self.word(e.tx_word);
                        w.store(1, Ordering::Release);
                        futex::wake(w, 1, false);
                        1
                    }
                    Mech::Spin => {
                        self.word(e.tx_word).store(1, Ordering::Release);
                        1
                    }
                }
            };
            if r > 0 {
                return Ok(());
            }
            let err = errno();
            if r < 0 && err == libc::EINTR && !crate::engine::interrupt::requested() {
                continue;
            }
            return Err(if r < 0 { err } else { libc::EPIPE });
        }
    }

    #[inline(always)]
    fn recv_on(&self, e: End, gone: &dyn Fn() -> bool) -> std::result::Result<(), i32> {
        let mut buf: u64 = 0;
        match self.mech {
            Mech::Futex => {
                let w = self.word(e.rx_word);
                while w.load(Ordering::Acquire) == 0 {
                    if futex::wait(w, 0, false) == libc::EINTR
                        && (crate::engine::interrupt::requested() || gone())
                    {
                        return Err(libc::EINTR);
                    }
                }
                w.store(0, Ordering::Relaxed);
                return Ok(());
            }
            Mech::Spin => {
                let w = self.word(e.rx_word);
                let mut spins: u32 = 0;
                while w.load(Ordering::Acquire) == 0 {
                    std::hint::spin_loop();
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(1 << 22)
                        && (crate::engine::interrupt::requested() || gone())
                    {
                        return Err(libc::EINTR);
                    }
                }
                w.store(0, Ordering::Relaxed);
                return Ok(());
            }
            _ => {}
        }
        loop {
            // SAFETY: buf is a live 8-byte local; message queues were opened with msgsize 8.
            let r = unsafe {
                let p = &mut buf as *mut u64 as *mut libc::c_void;
                match self.mech {
                    Mech::Pipe | Mech::Unix => libc::read(e.rx, p, 1),
                    Mech::UnixDgram => libc::recv(e.rx, p, 1, 0),
                    Mech::Eventfd => libc::read(e.rx, p, 8),
                    _ => libc::mq_receive(e.rx, p as *mut libc::c_char, 8, std::ptr::null_mut()),
                }
            };
            if r > 0 {
                return Ok(());
            }
            if r == 0 {
                return Err(0);
            }
            let err = errno();
            if err == libc::EINTR && !crate::engine::interrupt::requested() && !gone() {
                continue;
            }
            return Err(err);
        }
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        for &fd in &self.owned {
            // SAFETY: descriptors this channel created and has not closed yet.
            unsafe {
                if self.mq {
                    libc::mq_close(fd);
                } else {
                    libc::close(fd);
                }
            }
        }
    }
}

/// A connected unix socketpair of `kind` (stream or datagram).
/// A channel's serving side: a forked process, or a thread of this process. A server that
/// spins never sleeps, and only a thread of the reader's own process has a CPU clock that is
/// current while it runs on another CPU (another process's lags by up to a tick; see
/// evidence::cputime), so the occupancy of a polling server can be checked only when it is a
/// thread.
pub enum Server {
    Process(RefCell<Child>),
    Thread {
        _thread: ThreadPartner,
        tid: i32,
        stopped: Arc<AtomicBool>,
    },
}

impl Server {
    /// `ch` served from `cpu`: by a thread of this process when `thread`, else by a forked
    /// process that reports ready in `ready` (a page and its slot), the parent's copies of
    /// its descriptors then closed. Returns the channel (shared with a thread), the server and
    /// the CPU it started on.
    pub fn start(
        mut ch: Channel,
        thread: bool,
        (page, ready): (&SharedPage, usize),
        cpu: usize,
    ) -> Result<(Arc<Channel>, Server, Option<usize>)> {
        if thread {
            let ch = Arc::new(ch);
            let stopped = Arc::new(AtomicBool::new(false));
            let (serving, watching, stopping) = (ch.clone(), stopped.clone(), stopped.clone());
            let (thread, tid, started) = ThreadPartner::spawn_ready(
                cpu,
                move || {
                    serving.serve_until(&|| watching.load(Ordering::Acquire));
                },
                move || stopping.store(true, Ordering::Release),
            )?;
            let server = Server::Thread {
                _thread: thread,
                tid,
                stopped,
            };
            return Ok((ch, server, started));
        }
        let c = &ch;
        let (child, started) =
            spawn_ready_child(page, ready, cpu, || c.partner_close(), || c.serve())?;
        ch.parent_close();
        Ok((Arc::new(ch), Server::Process(RefCell::new(child)), started))
    }

    pub fn id(&self) -> i32 {
        match self {
            Server::Process(c) => c.borrow().pid(),
            Server::Thread { tid, .. } => *tid,
        }
    }

    /// Whether the server is gone: the process exited, or the thread was told to stop.
    pub fn gone(&self) -> bool {
        match self {
            Server::Process(c) => c.borrow_mut().has_exited(),
            Server::Thread { stopped, .. } => stopped.load(Ordering::Acquire),
        }
    }

    /// The server as a participant pinned to `cpu`; `thread_role` names a thread.
    pub fn participant(&self, thread_role: &str, cpu: usize) -> Participant {
        match self {
            Server::Process(c) => Participant::child(c.borrow().pid(), vec![cpu]),
            Server::Thread { tid, .. } => Participant::thread(thread_role, *tid, vec![cpu]),
        }
    }
}

fn socketpair(kind: i32) -> Result<[i32; 2]> {
    let mut sv = [0i32; 2];
    // SAFETY: sv is a valid 2-element out-array.
    if unsafe { libc::socketpair(libc::AF_UNIX, kind | libc::SOCK_CLOEXEC, 0, sv.as_mut_ptr()) }
        != 0
    {
        return Err(os_error("cannot create a unix socketpair"));
    }
    Ok(sv)
}

fn pipe() -> Result<(i32, i32)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid 2-element out-array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(os_error("cannot create a pipe"));
    }
    Ok((fds[0], fds[1]))
}

/// A message queue that exists only as descriptors: opened under a unique name and unlinked
/// at once, so nothing is left in /dev/mqueue even if we are killed.
fn mq_open_unlinked() -> Result<libc::mqd_t> {
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let name = std::ffi::CString::new(format!(
        "/oscost-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ))
    .expect("no NUL in the name");
    // SAFETY: a zeroed mq_attr is valid; the fields set are the documented ones.
    let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
    attr.mq_maxmsg = 1;
    attr.mq_msgsize = 8;
    // SAFETY: name is NUL-terminated; attr outlives the call.
    let q = unsafe {
        libc::mq_open(
            name.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
            0o600 as libc::mode_t,
            &attr as *const libc::mq_attr,
        )
    };
    if q < 0 {
        return Err(Error::env(format!(
            "cannot open a POSIX message queue: {} (is /dev/mqueue usable here?)",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: as above.
    unsafe { libc::mq_unlink(name.as_ptr()) };
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::partner::Child;

    #[test]
    fn every_mechanism_round_trips_with_a_forked_partner() {
        for mech in Mech::ALL {
            let mut ch = Channel::new(mech).unwrap();
            let c = &ch;
            let child = Child::spawn(None, move || {
                c.partner_close();
                c.serve()
            })
            .unwrap();
            ch.parent_close();
            for _ in 0..100 {
                ch.round_trip(&|| false)
                    .unwrap_or_else(|e| panic!("{mech:?}: {e}"));
            }
            drop(child);
        }
    }

    /// The thread's voluntary context switches so far (it went to sleep this many times).
    fn voluntary_switches() -> i64 {
        // SAFETY: a zeroed rusage is a valid out-parameter.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: ru is a live out-parameter of the right type.
        assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) }, 0);
        ru.ru_nvcsw
    }

    /// The scheduler state letter of thread `tid` of this process ('S' = asleep).
    fn thread_state(tid: i32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        after.chars().next().unwrap()
    }

    fn wait_asleep(tid: &AtomicI32) {
        while tid.load(Ordering::Acquire) == 0 || thread_state(tid.load(Ordering::Acquire)) != 'S' {
            std::thread::yield_now();
        }
    }

    /// A side waiting for its reply sleeps exactly once: the partner reading A's message must
    /// not wake it. With one unix stream socket both ways it did: the read frees A's buffer,
    /// `sock_wfree` calls `unix_write_space` on A's socket, which wakes every sleeper there,
    /// and A's `unix_stream_data_wait` does not filter by poll key, so A woke, found no data
    /// and slept again (3.7 switches per same-CPU round trip instead of 2).
    #[test]
    fn the_receiver_is_woken_only_by_its_message() {
        for mech in [
            Mech::Pipe,
            Mech::Unix,
            Mech::UnixDgram,
            Mech::Eventfd,
            Mech::Mqueue,
        ] {
            let ch = Channel::new(mech).unwrap();
            let a_tid = AtomicI32::new(0);
            let sleeps = std::thread::scope(|s| {
                let a = s.spawn(|| {
                    ch.send_on(ch.a).unwrap();
                    // SAFETY: gettid has no preconditions.
                    a_tid.store(unsafe { libc::gettid() }, Ordering::Release);
                    let before = voluntary_switches();
                    ch.recv_on(ch.a, &|| false).unwrap();
                    voluntary_switches() - before
                });
                // A is asleep waiting for the reply when B takes A's message...
                wait_asleep(&a_tid);
                ch.recv_on(ch.b, &|| false).unwrap();
                // ... and is asleep again (or still) before the reply goes out.
                wait_asleep(&a_tid);
                ch.send_on(ch.b).unwrap();
                a.join().unwrap()
            });
            assert_eq!(sleeps, 1, "{mech:?}: A slept {sleeps} times for one reply");
        }
    }

    #[test]
    fn a_dead_partner_is_an_error_not_a_hang() {
        let mut ch = Channel::new(Mech::Pipe).unwrap();
        let c = &ch;
        let mut child = Child::spawn(None, move || {
            c.partner_close();
            0
        })
        .unwrap();
        ch.parent_close();
        child.kill();
        assert!(ch.round_trip(&|| true).is_err());
    }
}
