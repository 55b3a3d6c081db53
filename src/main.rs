//! oscost entry point: parse, dispatch, exit. Everything else lives in the library.

fn main() {
    // An unexpected internal error must not print a backtrace at the user; a closed stdout
    // (`oscost history list | head -1`) is not an error at all.
    std::panic::set_hook(Box::new(|info| {
        if !oscost::cli::pipe::is_broken_pipe(info.payload()) {
            eprintln!("oscost: internal error: {info} (please report this)");
        }
    }));
    // Unwinding (rather than exiting from the hook) runs every guard on the way out:
    // partners reaped, scratch files removed, kernel knobs restored.
    let code = std::panic::catch_unwind(oscost::cli::main).unwrap_or_else(|payload| {
        if oscost::cli::pipe::is_broken_pipe(payload.as_ref()) {
            oscost::cli::pipe::EXIT_BROKEN_PIPE
        } else {
            101
        }
    });
    std::process::exit(code);
}
