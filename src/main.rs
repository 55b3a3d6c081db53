//! oscost entry point: parse, dispatch, exit. Everything else lives in the library.

fn main() {
    // An unexpected internal error must not print a backtrace at the user.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("oscost: internal error: {info} (please report this)");
    }));
    std::process::exit(oscost::cli::main());
}
