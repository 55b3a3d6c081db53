//! The command line: one file per subcommand turns arguments into a plan and prints results.

pub mod anatomy;
pub mod c2c;
pub mod common;
pub mod compare;
pub mod ctx;
pub mod execute;
pub mod export;
pub mod fault;
pub mod fleet;
pub mod history;
pub mod ipc;
pub mod machine;
pub mod mem;
pub mod mmap;
pub mod noise;
pub mod outputs;
pub mod pipe;
pub mod probes;
pub mod report;
pub mod rpc;
pub mod run;
pub mod shell;
pub mod sim;
pub mod stat;
pub mod store_opts;
pub mod timeslice;

use clap::{Parser, Subcommand};

/// Measures what the operating system and the hardware under it cost, and explains why.
#[derive(Debug, Parser)]
#[command(name = "oscost", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Every subcommand, one entry each: its help (the doc comment), its arguments and what runs
/// it. The `Command` enum and its dispatch ([`Command::run`]) are made from this list.
macro_rules! commands {
    ($($(#[$doc:meta])* $name:ident($args:ty) => $run:path,)*) => {
        #[derive(Debug, Subcommand)]
        pub enum Command {
            $($(#[$doc])* $name($args),)*
        }

        impl Command {
            /// Run the subcommand; its exit code.
            pub fn run(self) -> crate::error::Result<i32> {
                match self {
                    $(Command::$name(a) => $run(a),)*
                }
            }
        }
    };
}

commands! {
    /// Run the default suite (calls, system calls, same-core context switches, one cross-core
    /// round trip blocking and polling).
    Run(run::RunArgs) => run::run,
    /// Show what this machine is and what will make numbers noisy.
    Machine(machine::MachineArgs) => machine::run,
    /// A function call: what it adds to an overlapping loop and to a dependent chain.
    Call(probes::CallArgs) => probes::call,
    /// The lmbench lat_syscall set and vDSO clock_gettime.
    Syscall(probes::SyscallArgs) => probes::syscall,
    /// Same-core context switches: pipe, futex and yield ping-pong; `ctx sweep` and
    /// `ctx timeslice` for working sets.
    Ctx(Box<ctx::CtxCommand>) => ctx::run,
    /// Memory: `mem latency`, the pointer-chase curve (lmbench lat_mem_rd).
    Mem(mem::MemCommand) => mem::run,
    /// Page faults: anonymous, populated, page-cache and evicted file; THP, order, readahead.
    Fault(fault::FaultArgs) => fault::run,
    /// mmap experiments: `mmap lab` runs the nine-variant mmap lab.
    Mmap(mmap::MmapArgs) => mmap::run,
    /// Your own program run N times: wall, user and system time, /usr/bin/time -v's
    /// fields and perf stat's counters, with intervals, evidence and history.
    Stat(Box<stat::StatArgs>) => stat::run,
    /// Write the HTML report for saved runs (files, history ids or --last N); side by side.
    Report(report::ReportArgs) => report::run,
    /// Compare two runs: medians, ratio with a 95% interval, verdict; a regression gate.
    Compare(compare::CompareArgs) => compare::run,
    /// The run history: list, show, export, delete, import.
    History(history::HistoryArgs) => history::run,
    /// Write one run (a file or a history id) as CSV, Markdown or JSON.
    Export(export::ExportArgs) => export::run,
    /// Cross-core IPC: round trip of pipe, unix, eventfd, futex, mqueue and a spin flag per
    /// placement class (same CPU, SMT sibling, same LLC, other LLC, other node).
    Ipc(ipc::IpcArgs) => ipc::run,
    /// One request/response in four placements (local, remote-exclusive, remote-polling,
    /// remote-shared) and, with permission, its kernel-traced breakdown.
    Rpc(rpc::RpcArgs) => rpc::run,
    /// OS noise: a busy reader per CPU; the share of CPU lost, the gaps and, with permission
    /// to trace, who took them (timer ticks, device IRQs, softirqs, IPIs, other tasks).
    Noise(noise::NoiseArgs) => noise::run,
    /// Core-to-core latency map: cache-line ping-pong between every pair of CPUs.
    C2c(c2c::C2cArgs) => c2c::run,
    /// Many hosts' runs side by side: ratios to the fleet median, the odd hosts and why.
    Fleet(fleet::FleetArgs) => fleet::run,
    /// Run programs on the modeled RISC-V machine (caches, 5-stage pipeline, traps).
    Sim(sim::SimArgs) => sim::run,
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs) => shell::completions,
    /// Print the man page (roff), or write all pages with --dir.
    Man(shell::ManArgs) => shell::man,
}

/// Parse, dispatch, and map errors to exit codes. Never panics on bad input.
/// Prints what the argument parser said and returns its exit code (help and version 0, on
/// standard output; usage errors 2). An error echoes the rejected argument: it is escaped as
/// oscost's own messages are, so control characters and bidirectional overrides in it reach
/// the terminal as `\u{…}`, never as commands.
fn parse_error(e: &clap::Error) -> i32 {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        use std::io::IsTerminal;
        let styled = e.render();
        let text = if std::io::stdout().is_terminal() {
            styled.ansi().to_string()
        } else {
            styled.to_string()
        };
        return match pipe::print_out(text.as_bytes()) {
            Ok(()) => e.exit_code(),
            Err(pipe::Unprinted::Closed) => pipe::EXIT_BROKEN_PIPE,
            Err(pipe::Unprinted::Failed(why)) => {
                eprintln!("oscost: standard output: {why}");
                2
            }
        };
    }
    let text = e.render().to_string();
    let shown: Vec<_> = text.lines().map(crate::escape::terminal).collect();
    eprintln!("{}", shown.join("\n"));
    e.exit_code()
}

pub fn main() -> i32 {
    // Help wraps at the width every view uses (COLUMNS first, then the terminal's).
    let width = crate::report::term::Term::stdout().width;
    let parsed = <Cli as clap::CommandFactory>::command()
        .term_width(width)
        .try_get_matches()
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => return parse_error(&e),
    };
    // Whatever an oscost killed with SIGKILL left behind: scratch removed, knobs restored.
    for line in crate::journal::recover().lines {
        eprintln!("oscost: {line}");
    }
    let result = cli.command.run();
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("oscost: {e}");
            match e {
                crate::error::Error::Interrupted => crate::engine::interrupt::exit_code(),
                e => e.exit_code(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family's own command, as its descriptor gives it, is a subcommand here.
    #[test]
    fn every_familys_command_parses() {
        let mut seen = 0;
        for f in crate::report::FAMILIES
            .iter()
            .filter(|f| !f.quick().is_empty())
        {
            let words = std::iter::once("oscost").chain(f.quick().iter().copied());
            if let Err(e) = <Cli as clap::Parser>::try_parse_from(words) {
                panic!("{:?}: {e}", f.quick());
            }
            seen += 1;
        }
        assert!(seen >= 8, "{seen} families with a command");
        assert!(<Cli as clap::Parser>::try_parse_from(["oscost", "no-such-family"]).is_err());
    }
}
