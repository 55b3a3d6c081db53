//! The lmbench lat_syscall set, plus vDSO clock_gettime as the contrast: a call that looks
//! like a system call and is not. Each loop issues the call directly (getppid through
//! syscall(2), never a libc wrapper that might cache), against the empty loop.

use crate::engine::measure::{measure, Context, Spec};
use crate::engine::measure::{Participants, Workloads};
use crate::error::Result;
use crate::evidence::clock::now_ns;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::task::{Alone, TaskState};
use crate::evidence::Participant;
use crate::model::{Check, Measurement};
use crate::units::{Per, Unit};
use std::hint::black_box;

/// Which call to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Syscall {
    /// getppid through syscall(2): the cheapest real kernel entry.
    Null,
    /// read 1 byte from /dev/zero.
    Read,
    /// write 1 byte to /dev/null.
    Write,
    /// stat("/dev/null").
    Stat,
    /// fstat on an open /dev/null.
    Fstat,
    /// open("/dev/null") + close.
    Open,
    /// clock_gettime(CLOCK_MONOTONIC) through the vDSO: no kernel entry expected.
    Vdso,
}

impl Syscall {
    pub const ALL: [Syscall; 7] = [
        Syscall::Null,
        Syscall::Read,
        Syscall::Write,
        Syscall::Stat,
        Syscall::Fstat,
        Syscall::Open,
        Syscall::Vdso,
    ];

    pub fn probe_id(self) -> crate::model::ProbeId {
        crate::model::ProbeId(match self {
            Syscall::Null => "syscall.null",
            Syscall::Read => "syscall.read",
            Syscall::Write => "syscall.write",
            Syscall::Stat => "syscall.stat",
            Syscall::Fstat => "syscall.fstat",
            Syscall::Open => "syscall.open",
            Syscall::Vdso => "vdso.clock_gettime",
        })
    }

    fn definition(self) -> &'static str {
        match self {
            Syscall::Null => "getppid via syscall(2), minus the empty loop",
            Syscall::Read => "read(2) of 1 byte from /dev/zero, minus the empty loop",
            Syscall::Write => "write(2) of 1 byte to /dev/null, minus the empty loop",
            Syscall::Stat => "stat(2) of /dev/null (path walk included), minus the empty loop",
            Syscall::Fstat => "fstat(2) of an open /dev/null, minus the empty loop",
            Syscall::Open => "openat(2)+close(2) of /dev/null, minus the empty loop",
            Syscall::Vdso => {
                "clock_gettime(CLOCK_MONOTONIC) through the vDSO, minus the empty loop: \
                 it reads the clock in user space and should not enter the kernel"
            }
        }
    }
}

/// Open /dev/null or /dev/zero; closed on drop.
struct Fd(i32);

impl Fd {
    fn open(path: &std::ffi::CStr, flags: i32) -> Result<Fd> {
        // SAFETY: valid NUL-terminated path.
        let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) };
        if fd < 0 {
            let what = format_args!("cannot open {}", path.to_string_lossy());
            return Err(super::os_error(what));
        }
        Ok(Fd(fd))
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: our own fd, closed once.
        unsafe { libc::close(self.0) };
    }
}

/// `iters` calls of `which` (on /dev/zero's `zfd` and /dev/null's `nfd`): their wall time in ns.
fn timed(which: Syscall, zfd: i32, nfd: i32, iters: u64) -> u64 {
    let mut byte = 0u8;
    // SAFETY: a zeroed stat buffer is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let bp = &mut byte as *mut u8 as *mut libc::c_void;
    let t0 = now_ns();
    // SAFETY (all arms): valid fds, buffers and NUL-terminated paths.
    match which {
        Syscall::Null => {
            for _ in 0..iters {
                black_box(unsafe { libc::syscall(libc::SYS_getppid) });
            }
        }
        Syscall::Read => {
            for _ in 0..iters {
                // SAFETY: a one-byte buffer that lives across the call, on a descriptor this task owns.
                black_box(unsafe { libc::syscall(libc::SYS_read, zfd, bp, 1usize) });
            }
        }
        Syscall::Write => {
            for _ in 0..iters {
                // SAFETY: a one-byte buffer that lives across the call, on a descriptor this task owns.
                black_box(unsafe { libc::syscall(libc::SYS_write, nfd, bp, 1usize) });
            }
        }
        Syscall::Stat => {
            for _ in 0..iters {
                // SAFETY: a NUL-terminated path or an owned descriptor, and a stat buffer that lives across the call.
                black_box(unsafe { libc::stat(c"/dev/null".as_ptr(), &mut st) });
            }
        }
        Syscall::Fstat => {
            for _ in 0..iters {
                // SAFETY: a NUL-terminated path or an owned descriptor, and a stat buffer that lives across the call.
                black_box(unsafe { libc::fstat(nfd, &mut st) });
            }
        }
        Syscall::Open => {
            for _ in 0..iters {
                // SAFETY: a NUL-terminated literal path.
                let fd = unsafe {
                    libc::syscall(
                        libc::SYS_openat,
                        libc::AT_FDCWD,
                        c"/dev/null".as_ptr(),
                        libc::O_RDONLY,
                    )
                };
                if fd >= 0 {
                    // SAFETY: closing descriptors this task owns and no longer uses.
                    unsafe { libc::syscall(libc::SYS_close, fd) };
                }
            }
        }
        Syscall::Vdso => {
            for _ in 0..iters {
                // SAFETY: a timespec that lives across the call.
                black_box(unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) });
            }
        }
    }
    now_ns() - t0
}

/// The name of the check of the state a system call is defined in.
pub const ALONE: &str = "alone in its process";

/// One thread, and no child forked while the probe's descriptors were open: otherwise the
/// kernel takes a reference on every descriptor it looks up, and the figure is another one.
pub fn alone_check(a: &Alone) -> Check {
    Check::new(
        crate::model::CheckKind::Alone,
        crate::model::Bound::Kind,
        crate::model::Reading::Alone {
            threads: a.threads,
            forked: a.forked.clone(),
        },
        a.holds(),
    )
}

pub fn measure_call(ctx: &Context, which: Syscall, cpu: usize) -> Result<Measurement> {
    let _pin = AffinityGuard::pin_current(&[cpu])?;
    let before = TaskState::now();
    let zero = Fd::open(c"/dev/zero", libc::O_RDONLY)?;
    let null = Fd::open(c"/dev/null", libc::O_WRONLY)?;
    let (zfd, nfd) = (zero.0, null.0);
    let unit = if which == Syscall::Open {
        Unit::ns(Per::OpenClose)
    } else {
        Unit::ns(Per::Call)
    };
    let spec = Spec::new(which.probe_id().0, unit, Unit::ns(Per::Iteration), 1.0)
        .param("cpus", vec![cpu])
        .note(which.definition());

    let mut raw = move |iters: u64| -> Result<u64> { Ok(timed(which, zfd, nfd, iters)) };
    let mut base = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        for i in 0..iters {
            black_box(i);
        }
        Ok(now_ns() - t0)
    };
    let me = Participant::this_thread("caller", vec![cpu]);
    let expect_kernel = which != Syscall::Vdso;
    measure(
        ctx,
        spec,
        Participants::new(vec![me], vec![None]),
        Workloads::paired(&mut raw, &mut base),
        // A vDSO loop that entered the kernel warns from the verdict itself (measure and
        // merge: checks::entered_kernel), never from one round's undecided window.
        |ev| {
            let (mut checks, warnings) = super::single_thread_verdict(ev, expect_kernel);
            checks.push(alone_check(&Alone::between(&before, &TaskState::now())));
            (checks, warnings)
        },
    )
}
