//! `oscost sim`: run programs on the modeled RISC-V machine (the `rvsim` crate) to see what
//! real hardware hides: I-cache behaviour of compressed vs uncompressed code, and the cycles a
//! pipeline loses to hazards, branches, traps and interrupts.

mod bench;
mod compile;
mod report;
mod sweep;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use rvsim::{CacheConfig, Config, Machine, Program, SimError};

use crate::error::{Error, Result};

#[derive(Debug, Args)]
pub struct SimArgs {
    #[command(subcommand)]
    pub command: SimCommand,
}

#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// Run an RV32 ELF and report instructions, cache counts, cycles and CPI.
    Run(RunArgs),
    /// Compile a C file once per -march and compare code size, I-cache and cycles.
    Compare(CompareArgs),
    /// Compile a C file per -march and sweep the I-cache size; optional SVG plot.
    Sweep(SweepArgs),
    /// Measure the simulator's speed (MIPS), beside qemu-riscv32 when installed.
    Bench(BenchArgs),
}

/// The modeled machine, shared by run, compare and sweep.
#[derive(Debug, Args, Clone)]
pub struct MachineOpts {
    /// Instruction cache, e.g. sets=8,ways=1,words=2,repl=lru (repl: lru|fifo|random,
    /// write: back|through, alloc: yes|no, seed: N). No cache when omitted.
    #[arg(long)]
    pub icache: Option<String>,
    /// Data cache, same syntax as --icache.
    #[arg(long)]
    pub dcache: Option<String>,
    /// Timing model: 5stage (IF ID EX MEM WB) or none (functional only, fastest).
    #[arg(long, default_value = "5stage")]
    pub pipeline: String,
    /// Stall cycles per cache miss in the pipeline model.
    #[arg(long, default_value_t = 0)]
    pub miss_penalty: u32,
    /// Raise a machine timer interrupt every N instructions.
    #[arg(long, value_name = "N")]
    pub timer_interrupt: Option<u64>,
    /// Stop with an error after this many instructions.
    #[arg(long, default_value_t = 10_000_000_000)]
    pub max_instructions: u64,
    /// Memory size at 0x80000000, e.g. 4M, 512k.
    #[arg(long, default_value = "4M")]
    pub memory: String,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// An RV32 ELF executable (little-endian, linked at 0x80000000).
    pub elf: PathBuf,
    #[command(flatten)]
    pub machine: MachineOpts,
    /// Model an RV32IM core without the C extension (16-bit instructions are illegal).
    #[arg(long)]
    pub no_compressed: bool,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// A C source file (built with the shipped start-up code, linker script and picolibc).
    pub source: PathBuf,
    /// Comma-separated -march values to compare.
    #[arg(long, value_delimiter = ',', default_value = "rv32im,rv32imc")]
    pub march: Vec<String>,
    /// Extra compiler flags (split on spaces).
    #[arg(long, default_value = "-O2", allow_hyphen_values = true)]
    pub cflags: String,
    #[command(flatten)]
    pub machine: MachineOpts,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// A C source file.
    pub source: PathBuf,
    #[arg(long, value_delimiter = ',', default_value = "rv32im,rv32imc")]
    pub march: Vec<String>,
    /// I-cache sizes in bytes (k and M suffixes allowed).
    #[arg(long, value_delimiter = ',', default_value = "64,128,256,512,1k,2k")]
    pub icache_sizes: Vec<String>,
    /// Ways of every swept I-cache.
    #[arg(long, default_value_t = 1)]
    pub ways: u32,
    /// Words per line of every swept I-cache.
    #[arg(long, default_value_t = 2)]
    pub words: u32,
    /// Replacement policy of every swept I-cache (lru, fifo, random).
    #[arg(long, default_value = "lru")]
    pub repl: String,
    /// Write a plot of hit rate and cycles against cache size to this SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[arg(long, default_value = "-O2", allow_hyphen_values = true)]
    pub cflags: String,
    #[command(flatten)]
    pub machine: MachineOpts,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Program to run (default: the built-in loop benchmark, 56 million instructions).
    pub elf: Option<PathBuf>,
    /// Runs per configuration; the median speed is reported.
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Do not run qemu-riscv32 even if it is installed.
    #[arg(long)]
    pub no_qemu: bool,
}

pub fn run(args: SimArgs) -> Result<()> {
    match args.command {
        SimCommand::Run(a) => run_elf(a),
        SimCommand::Compare(a) => compare(a),
        SimCommand::Sweep(a) => sweep::sweep(a),
        SimCommand::Bench(a) => bench::bench(a),
    }
}

/// A simulator error as a user error (bad file, bad parameter, or a program that failed).
fn sim_err(context: &str, e: SimError) -> Error {
    Error::usage(format!("{context}: {e}"))
}

/// Parses a size option in the tool's one size grammar (`4M`, `512k`, `2048`, `1.5m`).
pub(crate) fn parse_size(text: &str, what: &str) -> Result<u64> {
    crate::analysis::sizes::parse_size(text).map_err(|e| Error::usage(format!("{what} {e}")))
}

impl MachineOpts {
    pub(crate) fn config(&self, compressed: bool) -> Result<Config> {
        let cache = |spec: &Option<String>, name: &str| {
            spec.as_deref()
                .map(CacheConfig::parse)
                .transpose()
                .map_err(|e| sim_err(name, e))
        };
        let pipeline = match self.pipeline.as_str() {
            "5stage" | "5-stage" => true,
            "none" | "off" => false,
            other => {
                return Err(Error::usage(format!(
                    "--pipeline {other}: use 5stage or none"
                )))
            }
        };
        let memory = parse_size(&self.memory, "--memory")?;
        if memory > 1 << 30 {
            return Err(Error::usage(format!(
                "--memory {}: at most 1G",
                self.memory
            )));
        }
        if self.timer_interrupt == Some(0) {
            return Err(Error::usage(
                "--timer-interrupt 0: the interval must be at least 1",
            ));
        }
        Ok(Config {
            ram_size: memory as u32,
            compressed,
            icache: cache(&self.icache, "--icache")?,
            dcache: cache(&self.dcache, "--dcache")?,
            pipeline,
            miss_penalty: self.miss_penalty,
            timer_interval: self.timer_interrupt,
            max_instructions: self.max_instructions,
            ..Config::default()
        })
    }
}

/// One finished simulation: what ran, on what, and what it counted.
pub(crate) struct Outcome {
    pub label: String,
    pub program: Program,
    pub config: Config,
    pub status: i32,
    pub stats: rvsim::Stats,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

pub(crate) fn simulate(label: &str, program: Program, config: Config) -> Result<Outcome> {
    let mut m = Machine::new(&config, &program).map_err(|e| sim_err(label, e))?;
    let status = m.run().map_err(|e| sim_err(label, e))?;
    Ok(Outcome {
        label: label.to_string(),
        stats: m.stats(),
        stdout: m.stdout().to_vec(),
        stderr: m.stderr().to_vec(),
        program,
        config,
        status,
    })
}

pub(crate) fn load_elf(path: &std::path::Path) -> Result<Program> {
    let bytes =
        std::fs::read(path).map_err(|e| Error::usage(format!("{}: {e}", path.display())))?;
    Program::from_elf(&bytes).map_err(|e| sim_err(&path.display().to_string(), e))
}

fn run_elf(a: RunArgs) -> Result<()> {
    let program = load_elf(&a.elf)?;
    let config = a.machine.config(!a.no_compressed)?;
    let out = simulate(&a.elf.display().to_string(), program, config)?;
    use std::io::Write;
    let _ = std::io::stdout().write_all(&out.stdout);
    let _ = std::io::stderr().write_all(&out.stderr);
    print!("{}", report::run_text(&out));
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&report::run_json(&out))
            .map_err(|e| Error::env(format!("JSON: {e}")))?;
        std::fs::write(path, text + "\n").map_err(|e| Error::io(path.display(), e))?;
    }
    Ok(())
}

fn compare(a: CompareArgs) -> Result<()> {
    let builds = compile::build_all(&a.source, &a.march, &a.cflags)?;
    let mut outcomes = Vec::new();
    for build in builds {
        let config = a.machine.config(build.compressed)?;
        outcomes.push(simulate(&build.march, build.program, config)?);
    }
    print!("{}", report::compare_text(&outcomes));
    Ok(())
}
