//! The command line: one file per subcommand turns arguments into a plan and prints results.
//! (Minimal wiring for `oscost sim`; the full skeleton lives on main.)

pub mod sim;

use clap::{Parser, Subcommand};

/// Measures what the operating system and the hardware under it cost, and explains why.
#[derive(Debug, Parser)]
#[command(name = "oscost", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run programs on the modeled RISC-V machine (caches, 5-stage pipeline, traps).
    Sim(sim::SimArgs),
}

/// Parse, dispatch, and map errors to exit codes. Never panics on bad input.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let result = match cli.command {
        Command::Sim(a) => sim::run(a),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("oscost: {e}");
            e.exit_code()
        }
    }
}
