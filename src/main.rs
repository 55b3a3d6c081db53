//! oscost entry point: parse, dispatch, exit. Everything else lives in the library.

fn main() {
    use oscost::cli::pipe::{exit_code, stdout_failure, StdoutFailure};
    use std::io::Write;
    // A file size limit (`ulimit -f`) makes a write fail with EFBIG, an error of that output,
    // instead of killing the process with SIGXFSZ in the middle of saving a run.
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    // An unexpected internal error must not print a backtrace at the user; a failed stdout
    // is one line (a closed one, `oscost history list | head -1`, not even that).
    std::panic::set_hook(Box::new(|info| {
        let line = match stdout_failure(info.payload()) {
            Some(StdoutFailure::Closed) => return,
            Some(StdoutFailure::Failed(why)) => format!("oscost: standard output: {why}"),
            None => format!("oscost: internal error: {info} (please report this)"),
        };
        let _ = writeln!(std::io::stderr(), "{line}");
    }));
    // Unwinding (rather than exiting from the hook) runs every guard on the way out:
    // partners reaped, scratch files removed, kernel knobs restored.
    let guarded = || {
        std::panic::catch_unwind(oscost::cli::main).unwrap_or_else(|payload| {
            stdout_failure(payload.as_ref()).map_or(101, |f| exit_code(&f))
        })
    };
    let code = if main_stack() < MIN_STACK {
        on_a_stack_of_its_own(guarded)
    } else {
        guarded()
    };
    std::process::exit(code);
}

/// The least main-thread stack oscost runs on; under a smaller limit (`ulimit -s 64`) the
/// command runs in a thread with a stack of [`OWN_STACK`] instead.
const MIN_STACK: u64 = 1 << 20;
const OWN_STACK: usize = 16 << 20;

/// The main thread's stack limit in bytes.
fn main_stack() -> u64 {
    // SAFETY: a zeroed rlimit is a valid out-buffer for getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut r) } != 0
        || r.rlim_cur == libc::RLIM_INFINITY
    {
        return u64::MAX;
    }
    r.rlim_cur as u64
}

/// Runs `f` in a thread with a stack of its own size; the main thread only waits, with the
/// termination signals blocked so they reach the thread that runs the command.
fn on_a_stack_of_its_own(f: impl FnOnce() -> i32 + Send + 'static) -> i32 {
    oscost::engine::interrupt::block_in_this_thread();
    let worker = std::thread::Builder::new()
        .stack_size(OWN_STACK)
        .spawn(move || {
            oscost::engine::interrupt::unblock_in_this_thread();
            f()
        });
    match worker {
        Ok(h) => h.join().unwrap_or(101),
        Err(e) => {
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!(
                "oscost: cannot start under a stack limit this small: {e}; raise it (ulimit -s)\n"
                ),
            );
            2
        }
    }
}
