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
    let code = std::panic::catch_unwind(oscost::cli::main)
        .unwrap_or_else(|payload| stdout_failure(payload.as_ref()).map_or(101, |f| exit_code(&f)));
    std::process::exit(code);
}
