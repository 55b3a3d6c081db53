//! Ctrl-C and SIGTERM: the handler only sets a flag. Blocking calls in the measuring thread
//! return EINTR (the handler is installed without SA_RESTART), the sampler checks the flag
//! between samples, and every probe's guards then kill and reap partners and remove files.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked to stop (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // The first signal names the exit code; a second one does not change it.
    let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
}

/// SIGCHLD does nothing but interrupt a blocking wait (futex, read) in the measuring thread,
/// so a partner that dies shows up at once instead of as a hang.
extern "C" fn on_child(_sig: libc::c_int) {}

/// Install the SIGINT/SIGTERM handlers (idempotent).
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask is well-formed;
        // the handler only touches an atomic, which is async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0; // no SA_RESTART: blocking reads return EINTR
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    // SAFETY: as above, with an empty handler.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_child as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = libc::SA_NOCLDSTOP;
        libc::sigaction(libc::SIGCHLD, &sa, std::ptr::null_mut());
    }
}

/// A stretch of a command that holds scratch files outside a measurement (a compiler's
/// builds, `sim bench`'s workloads): while it lives, Ctrl-C, SIGTERM and SIGHUP only set the
/// flag (its owner checks it and unwinds, removing its scratch); when it drops, the
/// handlers it replaced return, and a signal that arrived meanwhile is raised again, so the
/// process ends as the signal would have ended it, only after the cleanup.
pub struct Scope {
    old: [libc::sigaction; 3],
}

const STOPS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

impl Scope {
    pub fn new() -> Scope {
        // SAFETY: zeroed sigactions are valid out-buffers.
        let mut old: [libc::sigaction; 3] = unsafe { std::mem::zeroed() };
        for (sig, old) in STOPS.iter().zip(old.iter_mut()) {
            // SAFETY: as in install: a handler that only touches an atomic.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(*sig, &sa, old);
            }
        }
        Scope { old }
    }
}

impl Default for Scope {
    fn default() -> Self {
        Scope::new()
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        for (sig, old) in STOPS.iter().zip(self.old.iter()) {
            // SAFETY: restoring the disposition saved by Scope::new.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
        let sig = SIGNAL.load(Ordering::SeqCst);
        if sig != 0 {
            // SAFETY: raising a signal at this process, under its restored disposition.
            unsafe { libc::raise(sig) };
        }
    }
}

/// True once Ctrl-C, SIGTERM or SIGHUP arrived.
pub fn requested() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// Mark as interrupted (tests, and a partner that died under us), as Ctrl-C would.
pub fn request() {
    let _ = SIGNAL.compare_exchange(0, libc::SIGINT, Ordering::SeqCst, Ordering::SeqCst);
}

/// The exit code of an interrupted run: 128 + the signal, as shells report a process the
/// signal ended (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
pub fn exit_code() -> i32 {
    128 + match SIGNAL.load(Ordering::SeqCst) {
        0 => libc::SIGINT,
        s => s,
    }
}

/// Block the termination signals in the calling thread, so they reach the measuring thread
/// (partner threads call this first).
pub fn block_in_this_thread() {
    // SAFETY: building a signal set and masking it for this thread only.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Unblocks the termination signals in the calling thread (a thread started by one that
/// blocked them, to run the command).
pub fn unblock_in_this_thread() {
    // SAFETY: building a signal set and unmasking it for this thread only.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in STOPS {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Err(Interrupted) once a stop was requested.
pub fn check() -> crate::error::Result<()> {
    if requested() {
        Err(crate::error::Error::Interrupted)
    } else {
        Ok(())
    }
}
