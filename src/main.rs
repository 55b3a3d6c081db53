//! oscost entry point: parse, dispatch, exit. Everything else lives in the library.

fn main() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("oscost: internal error: {info} (please report this)");
    }));
    std::process::exit(oscost::cli::main());
}
