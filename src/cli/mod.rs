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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the default suite (calls, system calls, same-core context switches, one cross-core
    /// round trip blocking and polling).
    Run(run::RunArgs),
    /// Show what this machine is and what will make numbers noisy.
    Machine(machine::MachineArgs),
    /// A non-inlined function call against the empty loop.
    Call(probes::CallArgs),
    /// The lmbench lat_syscall set and vDSO clock_gettime.
    Syscall(probes::SyscallArgs),
    /// Same-core context switches: pipe, futex and yield ping-pong; `ctx sweep` and
    /// `ctx timeslice` for working sets.
    Ctx(Box<ctx::CtxCommand>),
    /// Memory: `mem latency`, the pointer-chase curve (lmbench lat_mem_rd).
    Mem(mem::MemCommand),
    /// Page faults: anonymous, populated, page-cache and evicted file; THP, order, readahead.
    Fault(fault::FaultArgs),
    /// mmap experiments: `mmap lab` runs the nine-variant mmap lab.
    Mmap(mmap::MmapArgs),
    /// Write the HTML report for saved runs (files, history ids or --last N); side by side.
    Report(report::ReportArgs),
    /// Compare two runs: medians, ratio with a 95% interval, verdict; a regression gate.
    Compare(compare::CompareArgs),
    /// The run history: list, show, export, delete, import.
    History(history::HistoryArgs),
    /// Write one run (a file or a history id) as CSV, Markdown or JSON.
    Export(export::ExportArgs),
    /// Cross-core IPC: round trip of pipe, unix, eventfd, futex, mqueue and a spin flag per
    /// placement class (same CPU, SMT sibling, same LLC, other LLC, other node).
    Ipc(ipc::IpcArgs),
    /// One request/response in four placements (local, remote-exclusive, remote-polling,
    /// remote-shared) and, with permission, its kernel-traced breakdown.
    Rpc(rpc::RpcArgs),
    /// OS noise: a busy reader per CPU; the share of CPU lost, the gaps and, with permission
    /// to trace, who took them (timer ticks, device IRQs, softirqs, IPIs, other tasks).
    Noise(noise::NoiseArgs),
    /// Core-to-core latency map: cache-line ping-pong between every pair of CPUs.
    C2c(c2c::C2cArgs),
    /// Many hosts' runs side by side: ratios to the fleet median, the odd hosts and why.
    Fleet(fleet::FleetArgs),
    /// Run programs on the modeled RISC-V machine (caches, 5-stage pipeline, traps).
    Sim(sim::SimArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs),
    /// Print the man page (roff), or write all pages with --dir.
    Man(shell::ManArgs),
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
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return parse_error(&e),
    };
    // Whatever an oscost killed with SIGKILL left behind: scratch removed, knobs restored.
    for line in crate::journal::recover().lines {
        eprintln!("oscost: {line}");
    }
    let result = match cli.command {
        Command::Run(a) => run::run(a),
        Command::Machine(a) => machine::run(a),
        Command::Call(a) => probes::call(a),
        Command::Syscall(a) => probes::syscall(a),
        Command::Ctx(a) => ctx::run(*a),
        Command::Mem(a) => mem::run(a),
        Command::Fault(a) => fault::run(a),
        Command::Mmap(a) => mmap::run(a),
        Command::Report(a) => report::run(a),
        Command::Compare(a) => compare::run(a),
        Command::History(a) => history::run(a),
        Command::Export(a) => export::run(a),
        Command::Ipc(a) => ipc::run(a),
        Command::C2c(a) => c2c::run(a),
        Command::Noise(a) => noise::run(a),
        Command::Rpc(a) => rpc::run(a),
        Command::Fleet(a) => fleet::run(a),
        Command::Sim(a) => sim::run(a),
        Command::Completions(a) => shell::completions(a),
        Command::Man(a) => shell::man(a),
    };
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
