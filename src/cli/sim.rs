//! `oscost sim`: run programs on the modeled RISC-V machine (the `rvsim` crate) to see what
//! real hardware hides: I-cache behaviour of compressed vs uncompressed code, and the cycles a
//! pipeline loses to hazards, branches, traps and interrupts.

mod bench;
mod compile;
mod conformance;
mod hotloop;
mod pipeview;
mod report;
mod sweep;
mod timeline;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use rvsim::{CacheConfig, Config, Machine, Program, SimError, Stop};

use crate::cli::outputs::{given, Format, Outputs, SimOut};
use crate::error::{Error, Result};

#[derive(Debug, Args)]
pub struct SimArgs {
    #[command(subcommand)]
    pub command: SimCommand,
}

#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// Run an RV32 ELF and report instructions, cache counts, cycles, CPI and how it ended.
    /// The exit code is the program's status (see the README for traps and limits).
    Run(RunArgs),
    /// Compare builds of one program (a C file compiled per -march, or ELF files): code
    /// size, I-cache and cycles.
    Compare(CompareArgs),
    /// Run riscv-tests style ELFs (ending through tohost) from a folder; print the pass table.
    Conformance(ConformanceArgs),
    /// Compile a C file per -march and sweep the I-cache size; optional SVG plot.
    Sweep(SweepArgs),
    /// Measure the simulator's speed (MIPS) on CoreMark and a loop, beside qemu-riscv32 when
    /// installed.
    Bench(BenchArgs),
}

/// `--time-limit`'s default, in seconds (see its help).
const DEFAULT_TIME_LIMIT: f64 = 60.0;

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
    /// How I-cache accesses are counted: per-instruction (one per line an executed
    /// instruction touches) or per-cycle (one per clock cycle and one at reset, wrong-path and
    /// stall re-fetches included, with Ripes' 5-stage timing rules: see crates/rvsim/docs/RIPES.md).
    #[arg(
        long,
        default_value = "per-instruction",
        value_name = "per-instruction|per-cycle"
    )]
    pub count: String,
    /// The 5-stage model's branch predictor: not-taken (static, no BTB: the model without
    /// one), btfn (backward taken, forward not), 1bit:N, 2bit:N or gshare:N (tables of N
    /// counters), each with a BTB of 64 entries or ,btb=N. Branches still resolve in EX.
    #[arg(long, default_value = "not-taken", value_name = "KIND[:N][,btb=N]")]
    pub predictor: String,
    /// Raise a machine timer interrupt every N instructions.
    #[arg(long, value_name = "N")]
    pub timer_interrupt: Option<u64>,
    /// End the run (with its statistics) after this many instructions.
    #[arg(long, default_value_t = 10_000_000_000)]
    pub max_instructions: u64,
    /// End the run (with its statistics, exit code 124) after this many seconds of wall-clock
    /// time; 0: no bound. The 10^10-instruction default limit takes up to about a minute on
    /// the fast path (150-500 MIPS, by model) but minutes where the reference engine runs
    /// (trap loops: ebreak, ecall, mret, CSR accesses, some 50 MIPS): 60 s bounds those
    /// without ending what the instruction limit would have. Where a run stops by time
    /// depends on the host: not deterministic, unlike every other ending.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIME_LIMIT)]
    pub time_limit: f64,
    /// Memory size from the program's lowest page, e.g. 4M, 1G (default: its segments plus
    /// the stack, and up to a __stack symbol).
    #[arg(long)]
    pub memory: Option<String>,
    /// Stack room above the program when --memory is not given [default: 1M].
    #[arg(long)]
    pub stack: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// An RV32 ELF executable (little-endian, linked at any address).
    pub elf: PathBuf,
    #[command(flatten)]
    pub machine: MachineOpts,
    /// Model an RV32IM core without the C extension (16-bit instructions are illegal).
    #[arg(long)]
    pub no_compressed: bool,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Show the 5-stage pipeline cycle by cycle for COUNT instructions from FROM: an
    /// instruction number (0 = the first), trap, interrupt or branch (the first one), or a
    /// symbol; FROM-K opens K instructions earlier (interrupt-4:16). Printed after the
    /// statistics, with every stall and flush and its cause.
    #[arg(long, value_name = "FROM:COUNT")]
    pub pipeview: Option<String>,
    /// Also draw the --pipeview window as an HTML page (SVG figure) in this file.
    #[arg(long, value_name = "FILE", requires = "pipeview")]
    pub pipeview_html: Option<PathBuf>,
    /// Also write the --pipeview window as a Kanata log (the Konata pipeline viewer's
    /// format) to this file.
    #[arg(long, value_name = "FILE", requires = "pipeview")]
    pub kanata: Option<PathBuf>,
    /// Draw the I-cache's hit rate so far against cycles over the whole run (as Ripes'
    /// cache tab plots it) as an SVG figure in this file.
    #[arg(long, value_name = "FILE", conflicts_with = "pipeview")]
    pub timeline: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// One C file (compiled once per --march), or two or more RV32 ELF files.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Comma-separated -march values to compare (C input only).
    #[arg(long, value_delimiter = ',', default_value = "rv32im,rv32imc")]
    pub march: Vec<String>,
    /// Extra compiler flags (split on spaces).
    #[arg(long, default_value = "-O2", allow_hyphen_values = true)]
    pub cflags: String,
    /// Start-up code for C input: rvsim (shipped crt0, picolibc, link at 0x80000000) or none
    /// (-nostdlib at the linker's default address: main is the entry and returns to 0).
    #[arg(long, default_value = "rvsim")]
    pub runtime: String,
    #[command(flatten)]
    pub machine: MachineOpts,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write one CSV row per build to this file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ConformanceArgs {
    /// Folder of test ELFs (riscv-tests naming SUITE-p-TEST; each ends by writing tohost).
    pub dir: PathBuf,
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
    /// Numbers of sets (lines of a direct-mapped cache) to sweep instead of --icache-sizes,
    /// e.g. 2,4,8,16,32,64 (the size is sets x ways x words x 4 bytes).
    #[arg(long, value_delimiter = ',', conflicts_with = "icache_sizes")]
    pub lines: Vec<u32>,
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
    /// Start-up code: rvsim or none (as for compare).
    #[arg(long, default_value = "rvsim")]
    pub runtime: String,
    #[command(flatten)]
    pub machine: MachineOpts,
    /// Also write every point as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write one CSV row per point to this file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Program to time instead of the benchmarks (CoreMark for rv32im and rv32imc, built
    /// when the cross compiler is installed, and the built-in loop, 56 million instructions).
    pub elf: Option<PathBuf>,
    /// Runs per configuration; the median speed is reported, with the range.
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Do not run qemu-riscv32 even if it is installed.
    #[arg(long)]
    pub no_qemu: bool,
    /// Folder of EEMBC CoreMark's sources [default: ../shared/coremark, skipped with a note
    /// when absent].
    #[arg(long, value_name = "DIR")]
    pub coremark: Option<PathBuf>,
    /// Also write every timing (each run's seconds) as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also copy the CoreMark builds (coremark-rv32im.elf, coremark-rv32imc.elf) into this
    /// existing folder, e.g. to time them with another simulator or another version.
    #[arg(long, value_name = "DIR")]
    pub keep_builds: Option<PathBuf>,
}

/// Runs a `sim` subcommand; returns the process exit code (for `run`, the guest's).
pub fn run(args: SimArgs) -> Result<i32> {
    match args.command {
        SimCommand::Run(a) => run_elf(a),
        SimCommand::Compare(a) => compare(a).map(|()| 0),
        SimCommand::Conformance(a) => conformance::conformance(a),
        SimCommand::Sweep(a) => sweep::sweep(a).map(|()| 0),
        SimCommand::Bench(a) => bench::bench(a).map(|()| 0),
    }
}

/// A simulator error as a user error (bad file, bad parameter, or a program that failed).
fn sim_err(context: &str, e: SimError) -> Error {
    Error::usage(format!("{context}: {e}"))
}

/// Parses a size option in the tool's one size grammar (`4M`, `512k`, `2048`, `1.5m`).
pub(crate) fn parse_size(text: &str, what: &str) -> Result<u64> {
    crate::units::size::parse_size(text).map_err(|e| Error::usage(format!("{what} {e}")))
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
        let memory = match &self.memory {
            Some(text) => {
                let m = parse_size(text, "--memory")?;
                if !(16..=rvsim::machine::MAX_MEMORY).contains(&m) || m % 4 != 0 {
                    return Err(Error::usage(format!(
                        "--memory {text}: a multiple of 4 bytes between 16 and 1G"
                    )));
                }
                Some(m as u32)
            }
            None => None,
        };
        let stack = match &self.stack {
            Some(text) => parse_size(text, "--stack")?,
            None => rvsim::machine::DEFAULT_STACK as u64,
        };
        if stack > rvsim::machine::MAX_MEMORY || stack % 16 != 0 {
            return Err(Error::usage(format!(
                "--stack {stack}: a multiple of 16 bytes up to 1G"
            )));
        }
        if memory.is_some() && self.stack.is_some() {
            return Err(Error::usage(
                "--stack applies only when the memory is sized from the program; with --memory the stack is the top of that memory",
            ));
        }
        let Some(count) = rvsim::FetchCount::parse(&self.count) else {
            return Err(Error::usage(format!(
                "--count {}: use per-instruction or per-cycle",
                self.count
            )));
        };
        if count == rvsim::FetchCount::PerCycle && !pipeline {
            return Err(Error::usage(
                "--count per-cycle counts the 5-stage pipeline's cycles: it cannot be used with --pipeline none",
            ));
        }
        if count == rvsim::FetchCount::PerCycle && self.miss_penalty != 0 {
            return Err(Error::usage(
                "--count per-cycle follows Ripes, whose caches add no stall cycles: it cannot be used with --miss-penalty",
            ));
        }
        let predictor = rvsim::PredictorConfig::parse(&self.predictor)
            .map_err(|e| Error::usage(format!("--predictor: {e}")))?;
        if predictor.kind != rvsim::PredictorKind::NotTaken && !pipeline {
            return Err(Error::usage(
                "--predictor changes the 5-stage pipeline's timing: it cannot be used with --pipeline none",
            ));
        }
        if predictor.kind != rvsim::PredictorKind::NotTaken && count == rvsim::FetchCount::PerCycle
        {
            return Err(Error::usage(
                "--count per-cycle follows Ripes, which has no branch predictor: it cannot be used with --predictor",
            ));
        }
        if self.max_instructions == 0 {
            return Err(Error::usage(
                "--max-instructions 0: the limit must be at least 1",
            ));
        }
        if !(self.time_limit.is_finite() && self.time_limit >= 0.0) {
            return Err(Error::usage(format!(
                "--time-limit {}: give seconds, 0 or more (0: no bound)",
                self.time_limit
            )));
        }
        if self.timer_interrupt == Some(0) {
            return Err(Error::usage(
                "--timer-interrupt 0: the interval must be at least 1",
            ));
        }
        Ok(Config {
            memory,
            stack: stack as u32,
            compressed,
            icache: cache(&self.icache, "--icache")?,
            dcache: cache(&self.dcache, "--dcache")?,
            pipeline,
            miss_penalty: self.miss_penalty,
            timer_interval: self.timer_interrupt,
            max_instructions: self.max_instructions,
            time_limit: (self.time_limit > 0.0)
                .then(|| Duration::try_from_secs_f64(self.time_limit).ok())
                .flatten(),
            count,
            predictor,
            ..Config::default()
        })
    }
}

/// One finished simulation: what ran, on what, and what it counted.
pub(crate) struct Outcome {
    pub label: String,
    pub program: Program,
    pub config: Config,
    /// Why the run ended.
    pub stop: Stop,
    /// The memory it ran in: (base, size).
    pub memory: (u32, u32),
    /// Bytes of .text in the program's own functions, when they are known.
    pub own_text: Option<u32>,
    pub stats: rvsim::Stats,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The program's hot loop (found by `compare`, which shows whether it fits the I-cache).
    pub hot_loop: Option<hotloop::HotLoop>,
}

/// Runs `program` to its end, whatever the end is: the statistics are kept in every case.
pub(crate) fn simulate(
    label: &str,
    program: Program,
    config: Config,
    own: Option<&BTreeMap<String, u32>>,
) -> Result<Outcome> {
    simulate_with(label, program, config, own, Machine::run)
}

/// [`simulate`], with `drive` running the machine to its end.
fn simulate_with(
    label: &str,
    program: Program,
    config: Config,
    own: Option<&BTreeMap<String, u32>>,
    drive: impl FnOnce(&mut Machine) -> Stop,
) -> Result<Outcome> {
    let mut m = Machine::new(&config, &program).map_err(|e| sim_err(label, e))?;
    let stop = drive(&mut m);
    // No function symbols (hand-written assembly, stripped files): nothing to report.
    let own_text = own
        .filter(|names| !names.is_empty())
        .map(|names| program.functions_size(names.keys()));
    Ok(Outcome {
        // A file name from the command line or a directory: shown, never acted on.
        label: crate::escape::terminal(label).into_owned(),
        stats: m.stats(),
        stdout: m.stdout().to_vec(),
        stderr: m.stderr().to_vec(),
        memory: m.memory(),
        own_text,
        program,
        config,
        stop,
        hot_loop: None,
    })
}

pub(crate) fn load_elf(path: &std::path::Path) -> Result<Program> {
    // An ELF larger than the largest memory the machine models cannot be loaded.
    let bytes = crate::input::read_regular(
        path,
        rvsim::machine::MAX_MEMORY,
        "an ELF the machine can load",
    )?;
    Program::from_elf(&bytes).map_err(|e| sim_err(&path.display().to_string(), e))
}

fn run_elf(a: RunArgs) -> Result<i32> {
    let json = Outputs::new()
        .with(Format::Json, a.json.as_deref())
        .with(Format::Svg, a.timeline.as_deref());
    json.check(
        &given(&[&a.pipeview_html, &a.kanata]),
        &[a.elf.as_path()],
        None,
    )?;
    let program = load_elf(&a.elf)?;
    let mut config = a.machine.config(!a.no_compressed)?;
    if config.count == rvsim::FetchCount::PerCycle {
        // Ripes enables the C extension from the ELF header, and its front end steps by
        // what the extension allows.
        config.compressed &= program.rvc;
    }
    let request = match &a.pipeview {
        Some(text) => {
            if !config.pipeline {
                return Err(Error::usage(
                    "--pipeview draws the 5-stage model: it cannot be used with --pipeline none",
                ));
            }
            Some(pipeview::PipeviewRequest {
                window: pipeview::parse_window(text, &program)?,
                html: a.pipeview_html.clone(),
                kanata: a.kanata.clone(),
            })
        }
        None => None,
    };
    let own = program.functions.clone();
    let label = a.elf.display().to_string();
    if a.timeline.is_some() && config.icache.is_none() {
        return Err(Error::usage(
            "--timeline draws the I-cache's hit rate: give an --icache",
        ));
    }
    let mut diagram = None;
    let mut samples = None;
    let out = match &request {
        // The window is recorded on the per-instruction engine, step by step.
        Some(req) => simulate_with(&label, program, config, Some(&own), |m| {
            let (stop, d) = pipeview::run(m, &req.window);
            diagram = d;
            stop
        })?,
        None if a.timeline.is_some() => simulate_with(&label, program, config, Some(&own), |m| {
            let (stop, s) = timeline::run(m);
            samples = Some(s);
            stop
        })?,
        None => simulate(&label, program, config, Some(&own))?,
    };
    use std::io::Write;
    let _ = std::io::stdout().write_all(&out.stdout);
    let _ = std::io::stderr().write_all(&out.stderr);
    print!("{}", fit_stdout(&report::run_text(&out)));
    let svg = samples.as_ref().map(|s| {
        let cache = out
            .config
            .icache
            .map(|c| report::cache_label(&c))
            .unwrap_or_default();
        timeline::figure(s, &out.label, &cache)
    });
    json.write(&SimOut {
        json: report::run_json(&out),
        svg,
        ..SimOut::default()
    })?;
    if let Some(req) = &request {
        pipeview::finish(req, diagram.as_ref(), &out.program, &label)?;
    }
    Ok(out.stop.exit_code() as i32)
}

fn compare(a: CompareArgs) -> Result<()> {
    let outputs = Outputs::new()
        .with(Format::Json, a.json.as_deref())
        .with(Format::Csv, a.csv.as_deref());
    let inputs: Vec<&std::path::Path> = a.inputs.iter().map(|p| p.as_path()).collect();
    outputs.check(&[], &inputs, None)?;
    let mut outcomes = Vec::new();
    if compile::is_c_source(&a.inputs)? {
        let builds = compile::build_all(&a.inputs[0], &a.march, &a.cflags, &a.runtime)?;
        for build in builds {
            let config = a.machine.config(build.compressed)?;
            outcomes.push(simulate(
                &build.march,
                build.program,
                config,
                Some(&build.own_functions),
            )?);
        }
    } else {
        for path in &a.inputs {
            let program = load_elf(path)?;
            // An ELF's own functions are not known apart from its runtime: all of them count.
            let own = program.functions.clone();
            let compressed = program.rvc;
            let config = a.machine.config(compressed)?;
            let label = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            );
            outcomes.push(simulate(&label, program, config, Some(&own))?);
        }
    }
    for o in &mut outcomes {
        if o.config.icache.is_some() {
            o.hot_loop = hotloop::find(&o.program, &o.config);
        }
    }
    print!("{}", fit_stdout(&report::compare_text(&outcomes)));
    let runs: Vec<_> = outcomes.iter().map(report::run_json).collect();
    outputs.write(&SimOut {
        json: serde_json::json!({"schema": 1, "builds": runs}),
        table: Some(report::csv_table(&outcomes)),
        svg: None,
    })
}

/// A report's prose lines word-wrapped to stdout's width.
fn fit_stdout(text: &str) -> String {
    crate::report::term::fit(text, crate::report::term::Term::stdout().width)
}
