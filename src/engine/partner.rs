//! Partners for probes that need two parties: forked processes and threads.
//!
//! After fork() the child runs only the pre-built closure (which must not allocate, lock or
//! print: the parent may have other threads) and then `_exit`s. Children die with the parent
//! (PR_SET_PDEATHSIG) and are killed and reaped when their handle drops, on success, error
//! and Ctrl-C alike.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicI32, Ordering};

/// A forked child. Dropping it kills (SIGKILL) and reaps it.
pub struct Child {
    pid: libc::pid_t,
    reaped: bool,
    /// The wait status, once [`Child::has_exited`] reaped it.
    status: Option<i32>,
}

impl Child {
    /// Fork a child that pins itself to `cpu` (if given) and runs `body`, exiting with its
    /// return value. `body` runs in a forked copy of a possibly multi-threaded process: it
    /// must use only raw system calls on memory prepared before the fork.
    pub fn spawn(cpu: Option<usize>, body: impl FnOnce() -> i32) -> Result<Child> {
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: fork; the child only runs async-signal-safe code below and _exits.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(Error::env(format!(
                "fork failed: {} (process limit reached?)",
                std::io::Error::last_os_error()
            )));
        }
        if pid == 0 {
            // Child.
            // SAFETY: plain syscalls in the freshly forked child; no locks are taken.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // The parent may have died between fork and prctl.
                if libc::getppid() != parent {
                    libc::_exit(125);
                }
                // Termination signals go to the parent, which kills us itself.
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                libc::signal(libc::SIGHUP, libc::SIG_IGN);
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
            }
            if let Some(c) = cpu {
                if crate::evidence::placement::pin(0, &[c]).is_err() {
                    // SAFETY: _exit ends the child without running the parent's destructors.
                    unsafe { libc::_exit(126) };
                }
            }
            let code = body();
            // SAFETY: _exit ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        stopped::watch(pid);
        Ok(Child {
            pid,
            reaped: false,
            status: None,
        })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Kill and reap now (idempotent).
    pub fn kill(&mut self) {
        if self.reaped {
            return;
        }
        stopped::unwatch(self.pid);
        // SAFETY: pid is our own unreaped child, so it cannot have been recycled.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            let mut status = 0;
            while libc::waitpid(self.pid, &mut status, 0) < 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
        }
        self.reaped = true;
    }

    /// Whether the child has already exited (reaps it if so).
    pub fn has_exited(&mut self) -> bool {
        if self.reaped || stopped::which() == Some(self.pid) {
            return true;
        }
        let mut status = 0;
        // SAFETY: non-blocking wait on our own child.
        let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if r == self.pid {
            self.reaped = true;
            self.status = Some(status);
        }
        self.reaped
    }

    /// How the child ended (a `waitpid` status), when [`Child::has_exited`] reaped it.
    pub fn wait_status(&self) -> Option<i32> {
        self.status
    }

    /// Whether the child has exited, without reaping it (so `&self` is enough and the guard
    /// still reaps it on drop): lets a waiter that holds only shared references stop waiting
    /// for a partner that was killed.
    pub fn is_gone(&self) -> bool {
        if self.reaped || stopped::which() == Some(self.pid) {
            return true;
        }
        // SAFETY: siginfo_t is plain data; waitid only writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: non-blocking, non-reaping wait (WNOWAIT) on our own child.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        // SAFETY: reading the pid field waitid filled in (0 when the child is still running).
        r != 0 || unsafe { info.si_pid() } != 0
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A page of memory shared with forked children (MAP_SHARED | MAP_ANONYMOUS): futex words,
/// ready flags and the CPU each child reports. Unmapped on drop.
pub struct SharedPage {
    ptr: *mut AtomicI32,
    len: usize,
}

// SAFETY: the page is only accessed through atomics, and unmapped once, on drop.
unsafe impl Send for SharedPage {}
// SAFETY: as above: shared access is atomic.
unsafe impl Sync for SharedPage {}

impl SharedPage {
    pub const SLOTS: usize = 1024;

    pub fn new() -> Result<SharedPage> {
        let len = Self::SLOTS * std::mem::size_of::<AtomicI32>();
        // SAFETY: anonymous shared mapping; checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::env(format!(
                "cannot map shared memory: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(SharedPage {
            ptr: p as *mut AtomicI32,
            len,
        })
    }

    /// Slot `i` (zero-initialized).
    pub fn slot(&self, i: usize) -> &AtomicI32 {
        assert!(i < Self::SLOTS);
        // SAFETY: in bounds of the live mapping; AtomicI32 has i32's layout.
        unsafe { &*self.ptr.add(i) }
    }

    /// Slot `i` of the same page viewed as 64-bit words (SLOTS / 2 of them); a caller uses
    /// one view or the other, never both.
    pub fn slot64(&self, i: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(i < Self::SLOTS / 2);
        // SAFETY: in bounds of the live, page-aligned mapping; AtomicU64 has u64's layout.
        unsafe { &*(self.ptr as *const std::sync::atomic::AtomicU64).add(i) }
    }

    /// Wait (spinning with yields, bounded) until `slot(i)` holds a non-zero value, which is
    /// returned; fails if the partner dies or takes more than 10 s to get ready.
    pub fn wait_nonzero(&self, i: usize, child: &mut Child) -> Result<i32> {
        wait_ready("a partner process", || {
            let v = self.slot(i).load(Ordering::Acquire);
            if v != 0 {
                return Ok(Some(v));
            }
            if child.has_exited() {
                return Err(Error::env("a partner process exited before it was ready"));
            }
            Ok(None)
        })
    }
}

impl Drop for SharedPage {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping created in new().
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Fork a partner pinned to `cpu` and wait until it is ready: the one way ctx probes start a
/// process partner (pipe, futex, ring, timeslice). In the child, `prepare` runs first (close
/// inherited descriptors, fill a working set: whatever must be done before it counts as
/// ready), then the child reports the CPU it runs on in `page.slot(ready)` and runs `body`,
/// whose return value is its exit code. Both closures run after fork, so they must use only
/// raw system calls on memory prepared beforehand (see [`Child::spawn`]). Returns the child
/// (killed and reaped on drop, also when it fails to get ready) and the CPU it reported.
pub fn spawn_ready_child(
    page: &SharedPage,
    ready: usize,
    cpu: usize,
    prepare: impl FnOnce(),
    body: impl FnOnce() -> i32,
) -> Result<(Child, Option<usize>)> {
    let slot = page.slot(ready);
    let mut child = Child::spawn(Some(cpu), move || {
        prepare();
        slot.store(
            // SAFETY: no preconditions; only reads the calling task's state.
            encode_cpu(unsafe { libc::sched_getcpu() }),
            Ordering::Release,
        );
        body()
    })?;
    let v = page.wait_nonzero(ready, &mut child)?;
    Ok((child, decode_cpu(v)))
}

/// How long a partner may take to get ready.
const READY_WITHIN_NS: u64 = 10_000_000_000;

/// Polls `ready` (spinning with yields) until it gives a value or an error, for at most
/// [`READY_WITHIN_NS`]: Ctrl-C ends the wait, and so does the deadline, as "`who` did not
/// get ready".
fn wait_ready<T>(who: &str, ready: impl FnMut() -> Result<Option<T>>) -> Result<T> {
    wait_ready_within(who, READY_WITHIN_NS, ready)
}

fn wait_ready_within<T>(
    who: &str,
    within_ns: u64,
    mut ready: impl FnMut() -> Result<Option<T>>,
) -> Result<T> {
    let deadline = crate::evidence::clock::now_ns() + within_ns;
    loop {
        if let Some(v) = ready()? {
            return Ok(v);
        }
        crate::engine::interrupt::check()?;
        if crate::evidence::clock::now_ns() > deadline {
            return Err(Error::env(format!(
                "{who} did not get ready within {} s",
                within_ns as f64 / 1e9
            )));
        }
        std::thread::yield_now();
    }
}

/// Encode a CPU number for a "ready" slot (0 means "not yet").
pub fn encode_cpu(cpu: i32) -> i32 {
    cpu + 1
}

/// Decode a "ready" slot value back to a CPU number.
pub fn decode_cpu(v: i32) -> Option<usize> {
    (v > 0).then(|| (v - 1) as usize)
}

/// A pair of pipe ends; closed on drop.
pub struct Pipe {
    pub read: i32,
    pub write: i32,
}

impl Pipe {
    pub fn new() -> Result<Pipe> {
        let mut fds = [0i32; 2];
        // SAFETY: fds is a valid 2-element out-array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(Error::env(format!(
                "cannot create a pipe: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(Pipe {
            read: fds[0],
            write: fds[1],
        })
    }

    /// Close one end early (after fork, each side closes the ends it does not use, so that a
    /// dead partner shows up as EOF instead of a hang).
    pub fn close_read(&mut self) {
        close_fd(&mut self.read);
    }
    pub fn close_write(&mut self) {
        close_fd(&mut self.write);
    }
}

fn close_fd(fd: &mut i32) {
    if *fd >= 0 {
        // SAFETY: closing an fd we own exactly once.
        unsafe { libc::close(*fd) };
        *fd = -1;
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        close_fd(&mut self.read);
        close_fd(&mut self.write);
    }
}

/// Write one byte, retrying on EINTR unless a stop was requested. Allocation-free.
#[inline(always)]
pub fn write_byte(fd: i32, b: &u8) -> std::result::Result<(), i32> {
    loop {
        // SAFETY: one byte from a valid reference.
        let r = unsafe { libc::write(fd, b as *const u8 as *const libc::c_void, 1) };
        if r == 1 {
            return Ok(());
        }
        let e = errno();
        if r < 0 && e == libc::EINTR && !given_up() {
            continue;
        }
        return Err(if r < 0 { e } else { libc::EPIPE });
    }
}

/// Read one byte; Err(0) on EOF (the partner is gone). Allocation-free.
#[inline(always)]
pub fn read_byte(fd: i32, b: &mut u8) -> std::result::Result<(), i32> {
    loop {
        // SAFETY: one byte into a valid reference.
        let r = unsafe { libc::read(fd, b as *mut u8 as *mut libc::c_void, 1) };
        if r == 1 {
            return Ok(());
        }
        if r == 0 {
            return Err(0);
        }
        let e = errno();
        if e == libc::EINTR && !given_up() {
            continue;
        }
        return Err(e);
    }
}

/// A wait interrupted by a signal ends (rather than waiting again) once a stop was requested
/// or a partner was found stopped.
#[inline(always)]
fn given_up() -> bool {
    crate::engine::interrupt::requested() || stopped::which().is_some()
}

/// Partners that stop answering because they were stopped (SIGSTOP, a debugger, a job-control
/// stop): a watcher thread (nice 19), running while any forked partner lives, reads each partner's
/// state every [`stopped::POLL`]; one stopped for longer than [`stopped::BOUND`] is recorded
/// and the thread that forked it is interrupted (SIGALRM, no restart), so its blocking read,
/// write or futex wait returns and the run ends with the reason instead of hanging until the
/// partner is continued. Nothing is added to the measured loops: they only see EINTR.
pub mod stopped {
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    /// How long a partner may stay stopped before the run gives up on it.
    pub const BOUND: Duration = Duration::from_secs(1);
    pub const POLL: Duration = Duration::from_millis(100);

    /// The stopped partner's pid (0: none).
    static STOPPED: AtomicI32 = AtomicI32::new(0);
    /// (partner pid, the thread waiting on it, since when it is seen stopped).
    static WATCHED: Mutex<Vec<(i32, i32, Option<Instant>)>> = Mutex::new(Vec::new());
    static RUNNING: AtomicI32 = AtomicI32::new(0);

    extern "C" fn on_alarm(_sig: libc::c_int) {}

    /// The partner found stopped, if any.
    #[inline(always)]
    pub fn which() -> Option<i32> {
        match STOPPED.load(Ordering::Relaxed) {
            0 => None,
            p => Some(p),
        }
    }

    /// Watches the forked partner `pid` on behalf of the calling thread.
    pub fn watch(pid: i32) {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let mut w = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
        w.push((pid, tid, None));
        if RUNNING.swap(1, Ordering::SeqCst) == 0 {
            // SAFETY: a handler that does nothing, without SA_RESTART: a blocking call in the
            // interrupted thread returns EINTR.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_alarm as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(libc::SIGALRM, &sa, std::ptr::null_mut());
            }
            let started = std::thread::Builder::new()
                .name("partner-watch".into())
                .spawn(watcher);
            if started.is_err() {
                RUNNING.store(0, Ordering::SeqCst);
            }
        }
    }

    /// Stops watching `pid` (it is being killed and reaped).
    pub fn unwatch(pid: i32) {
        let mut w = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
        w.retain(|&(p, _, _)| p != pid);
        // The next round's partners start clean.
        let _ = STOPPED.compare_exchange(pid, 0, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Whether `pid` is stopped now (state T or t in /proc/PID/stat).
    fn is_stopped(pid: i32) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next());
        matches!(state, Some("T") | Some("t"))
    }

    fn watcher() {
        crate::engine::interrupt::block_in_this_thread();
        // The lowest normal priority: it seldom preempts a participant, yet is not starved
        // on a busy machine as the idle class would be.
        // SAFETY: setpriority on this thread only (0: the calling thread on Linux).
        unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
        loop {
            std::thread::sleep(POLL);
            let mut w = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
            if w.is_empty() {
                RUNNING.store(0, Ordering::SeqCst);
                return;
            }
            for (pid, tid, since) in w.iter_mut() {
                if !is_stopped(*pid) {
                    *since = None;
                    continue;
                }
                let t = *since.get_or_insert_with(Instant::now);
                if t.elapsed() >= BOUND {
                    let _ = STOPPED.compare_exchange(0, *pid, Ordering::SeqCst, Ordering::SeqCst);
                    // SAFETY: signalling a thread of this process that is still watching.
                    unsafe {
                        libc::syscall(libc::SYS_tgkill, libc::getpid(), *tid, libc::SIGALRM);
                    }
                }
            }
        }
    }
}

pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Turn a failed pipe/futex operation in the measuring thread into the right error.
pub fn partner_error(what: &str, errno: i32) -> Error {
    if crate::engine::interrupt::requested() {
        Error::Interrupted
    } else if let Some(pid) = stopped::which() {
        Error::env(format!(
            "{what}: the partner (process {pid}) was stopped (SIGSTOP, a debugger or job \
             control) for over {} s; the round was ended (its figures would measure the stop)",
            stopped::BOUND.as_secs()
        ))
    } else if errno == 0 || errno == libc::EPIPE {
        Error::env(format!("{what}: the partner exited mid-run"))
    } else {
        Error::env(format!(
            "{what}: {}",
            std::io::Error::from_raw_os_error(errno)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_for_readiness_returns_the_answer_or_gives_up() {
        let mut polls = 0;
        let v = wait_ready_within("p", 1_000_000_000, || {
            polls += 1;
            Ok((polls == 3).then_some(7))
        });
        assert_eq!((v.unwrap(), polls), (7, 3));
        let e = wait_ready_within::<()>("p", 1_000_000_000, || Err(Error::env("gone")));
        assert!(e.unwrap_err().to_string().contains("gone"));
        let e = wait_ready_within::<()>("the partner", 1_000_000, || Ok(None)).unwrap_err();
        assert!(
            e.to_string()
                .contains("the partner did not get ready within 0.001 s"),
            "{e}"
        );
        assert_eq!(format!("{}", READY_WITHIN_NS as f64 / 1e9), "10");
    }

    fn alive(pid: i32) -> bool {
        // A reaped child is gone: kill(pid, 0) fails with ESRCH.
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn a_ready_child_reports_its_cpu_after_its_preparation() {
        let cpu = crate::machine::affinity::allowed_cpus()[0];
        let page = SharedPage::new().unwrap();
        let prepared = page.slot(7);
        let (child, got) = spawn_ready_child(
            &page,
            3,
            cpu,
            || prepared.store(42, Ordering::Release),
            || loop {
                // SAFETY: pause has no preconditions.
                unsafe { libc::pause() };
            },
        )
        .unwrap();
        // Ready only after `prepare`, on the CPU it was pinned to.
        assert_eq!(page.slot(7).load(Ordering::Acquire), 42);
        assert_eq!(got, Some(cpu));
        let pid = child.pid();
        assert!(alive(pid));
        drop(child);
        assert!(!alive(pid));
        // A child that dies before it is ready is an error, and it is reaped.
        let page = SharedPage::new().unwrap();
        let e = spawn_ready_child(
            &page,
            0,
            cpu,
            // SAFETY: _exit ends the forked child at once.
            || unsafe { libc::_exit(3) },
            || 0,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("exited before it was ready"), "{e}");
    }

    #[test]
    fn a_ready_thread_reports_its_tid_and_cpu() {
        let cpu = crate::machine::affinity::allowed_cpus()[0];
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s1, s2) = (stop.clone(), stop.clone());
        let (t, tid, got) = ThreadPartner::spawn_ready(
            cpu,
            move || {
                while !s1.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
            },
            move || s2.store(true, Ordering::Release),
        )
        .unwrap();
        assert_eq!(got, Some(cpu));
        assert!(tid > 0 && tid != crate::evidence::placement::gettid());
        drop(t);
        assert!(stop.load(Ordering::Acquire));
    }

    #[test]
    fn a_stopped_partner_ends_a_blocked_read_within_the_bound() {
        let mut fds = [0i32; 2];
        // SAFETY: a pipe into a valid array; both ends closed below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let child = Child::spawn(None, || loop {
            // SAFETY: pause only waits for a signal.
            unsafe { libc::pause() };
        })
        .unwrap();
        // SAFETY: stopping our own child.
        unsafe { libc::kill(child.pid(), libc::SIGSTOP) };
        let t0 = std::time::Instant::now();
        let mut b = 0u8;
        // Nobody writes: only the stop being seen ends this read.
        let e = read_byte(fds[0], &mut b).unwrap_err();
        assert!(t0.elapsed() < std::time::Duration::from_secs(10));
        let msg = partner_error("pipe read", e).to_string();
        assert!(msg.contains("was stopped"), "{msg}");
        drop(child);
        assert_eq!(stopped::which(), None, "cleared with its partner");
        // SAFETY: closing the pipe's two ends once.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }

    #[test]
    fn child_is_killed_and_reaped_on_drop() {
        let child = Child::spawn(None, || loop {
            // SAFETY: pause has no preconditions.
            unsafe { libc::pause() };
        })
        .unwrap();
        let pid = child.pid();
        assert!(alive(pid));
        drop(child);
        assert!(!alive(pid), "child {pid} survived its handle");
    }

    #[test]
    fn a_killed_child_is_seen_gone_without_reaping_and_a_bounded_wait_times_out() {
        let mut child = Child::spawn(None, || loop {
            // SAFETY: pause has no preconditions.
            unsafe { libc::pause() };
        })
        .unwrap();
        assert!(!child.is_gone(), "a paused child is alive");
        let page = SharedPage::new().unwrap();
        // Nobody changes the word: the bounded wait must come back with ETIMEDOUT.
        assert_eq!(
            futex::wait_for(page.slot(0), 0, false, 1_000_000),
            libc::ETIMEDOUT
        );
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.pid(), libc::SIGKILL) };
        let deadline = crate::evidence::clock::now_ns() + 5_000_000_000;
        while !child.is_gone() {
            assert!(crate::evidence::clock::now_ns() < deadline, "kill not seen");
            std::thread::yield_now();
        }
        // Not reaped by is_gone: the guard still reaps it.
        assert!(alive(child.pid()), "is_gone must not reap");
        assert!(child.has_exited());
    }

    #[test]
    fn child_reports_its_cpu_through_shared_memory() {
        let page = SharedPage::new().unwrap();
        let cpu = *crate::machine::affinity::allowed_cpus().last().unwrap();
        let slot = page.slot(0);
        let mut child = Child::spawn(Some(cpu), || {
            slot.store(
                // SAFETY: sched_getcpu has no preconditions.
                encode_cpu(unsafe { libc::sched_getcpu() }),
                Ordering::Release,
            );
            0
        })
        .unwrap();
        let v = page.wait_nonzero(0, &mut child).unwrap();
        assert_eq!(decode_cpu(v), Some(cpu));
    }

    #[test]
    fn dead_partner_reads_as_eof() {
        let mut p = Pipe::new().unwrap();
        let w = p.write;
        let child = Child::spawn(None, move || {
            let _ = write_byte(w, &7);
            0
        })
        .unwrap();
        p.close_write();
        let mut b = 0u8;
        assert_eq!(read_byte(p.read, &mut b), Ok(()));
        assert_eq!(b, 7);
        assert_eq!(read_byte(p.read, &mut b), Err(0));
        drop(child);
    }
}

/// What a partner thread reports when it is pinned and ready.
#[derive(Default)]
pub struct ThreadReady {
    pub tid: AtomicI32,
    /// encode_cpu() of where it runs; 0 until ready.
    pub cpu: AtomicI32,
}

/// A partner thread. Dropping it runs `stop` (which must make the body return, e.g. close a
/// pipe end or set a flag and wake a futex) and joins it, so no thread outlives its probe.
pub struct ThreadPartner {
    handle: Option<std::thread::JoinHandle<()>>,
    stop: Option<Box<dyn FnOnce() + Send>>,
    pub ready: std::sync::Arc<ThreadReady>,
}

impl ThreadPartner {
    /// Spawn a thread that blocks termination signals, pins itself to `cpu`, reports its tid
    /// and CPU, then runs `body`.
    pub fn spawn(
        cpu: Option<usize>,
        body: impl FnOnce() + Send + 'static,
        stop: impl FnOnce() + Send + 'static,
    ) -> Result<ThreadPartner> {
        let ready = std::sync::Arc::new(ThreadReady::default());
        let r = ready.clone();
        let handle = std::thread::Builder::new()
            .name("oscost-partner".into())
            .spawn(move || {
                crate::engine::interrupt::block_in_this_thread();
                if let Some(c) = cpu {
                    if crate::evidence::placement::pin(0, &[c]).is_err() {
                        r.cpu.store(-1, Ordering::Release);
                        return;
                    }
                }
                r.tid
                    .store(crate::evidence::placement::gettid(), Ordering::Release);
                // SAFETY: sched_getcpu has no preconditions.
                r.cpu.store(
                    encode_cpu(unsafe { libc::sched_getcpu() }),
                    Ordering::Release,
                );
                body();
            })
            .map_err(|e| Error::env(format!("cannot start a partner thread: {e}")))?;
        Ok(ThreadPartner {
            handle: Some(handle),
            stop: Some(Box::new(stop)),
            ready,
        })
    }

    /// [`ThreadPartner::spawn`] pinned to `cpu`, then [`ThreadPartner::wait_ready`]: the
    /// partner and its (tid, cpu). A partner that fails to get ready (Ctrl-C, a 10 s
    /// timeout) is dropped here, so `stop` must end `body` even if it has just started.
    pub fn spawn_ready(
        cpu: usize,
        body: impl FnOnce() + Send + 'static,
        stop: impl FnOnce() + Send + 'static,
    ) -> Result<(ThreadPartner, i32, Option<usize>)> {
        let t = ThreadPartner::spawn(Some(cpu), body, stop)?;
        let (tid, c) = t.wait_ready()?;
        Ok((t, tid, c))
    }

    /// Wait until the thread is pinned and ready; returns (tid, cpu).
    pub fn wait_ready(&self) -> Result<(i32, Option<usize>)> {
        wait_ready("the partner thread", || {
            let c = self.ready.cpu.load(Ordering::Acquire);
            if c < 0 {
                return Err(Error::env("the partner thread could not pin itself"));
            }
            Ok((c > 0).then(|| (self.ready.tid.load(Ordering::Acquire), decode_cpu(c))))
        })
    }
}

impl Drop for ThreadPartner {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop();
        }
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// futex(2) wrappers on a 32-bit word. `private` for threads of one process, shared for
/// words in a MAP_SHARED page used across processes.
pub mod futex {
    use std::sync::atomic::AtomicI32;

    fn op(base: i32, private: bool) -> i32 {
        if private {
            base | libc::FUTEX_PRIVATE_FLAG
        } else {
            base
        }
    }

    /// Sleep while `*word == expected`. Returns 0, or the errno (EAGAIN when the value
    /// already differs, EINTR on a signal).
    #[inline(always)]
    pub fn wait(word: &AtomicI32, expected: i32, private: bool) -> i32 {
        wait_with(word, expected, private, std::ptr::null())
    }

    /// [`wait`] for at most `timeout_ns`: returns ETIMEDOUT when the time ran out, so a
    /// waiter can check that its partner is still alive instead of sleeping forever.
    pub fn wait_for(word: &AtomicI32, expected: i32, private: bool, timeout_ns: u64) -> i32 {
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        wait_with(word, expected, private, &ts)
    }

    /// FUTEX_WAIT with a relative `timeout` (null: none).
    #[inline(always)]
    fn wait_with(
        word: &AtomicI32,
        expected: i32,
        private: bool,
        timeout: *const libc::timespec,
    ) -> i32 {
        // SAFETY: word is a live, aligned 32-bit location; timeout is null or points to a
        // timespec that outlives the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_futex,
                word as *const AtomicI32,
                op(libc::FUTEX_WAIT, private),
                expected,
                timeout,
            )
        };
        if r == 0 {
            0
        } else {
            super::errno()
        }
    }

    /// Wake up to `n` waiters.
    #[inline(always)]
    pub fn wake(word: &AtomicI32, n: i32, private: bool) {
        // SAFETY: word is a live, aligned 32-bit location.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word as *const AtomicI32,
                op(libc::FUTEX_WAKE, private),
                n,
            )
        };
    }
}
