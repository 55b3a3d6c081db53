//! The machine: one RV32IMAC hart in machine mode, the program's memory, the CLINT timer,
//! optional caches and the pipeline timing model, and the run loop that ties them together.
//!
//! Memory is one region placed where the program was linked: from the page of its lowest
//! segment up to its highest segment plus a stack (or `Config::memory` bytes). The zeroed
//! allocation is lazy, so a large `--memory` costs only the pages the program touches.
//!
//! Instructions are decoded once and executed from a predecode cache allocated page by page
//! for the code that actually runs; a store that changes the bytes of decoded instructions
//! forgets them (and the blocks that hold them), so what is decoded always matches memory and
//! self-modifying code stays correct with or without `fence.i` (which has nothing left to
//! forget). The run loop allocates nothing once the code's pages are decoded.
//!
//! Two engines run the machine with identical counts: the block engine ([`blocks`], the
//! default and the fast one) and the per-instruction engine in this file, which is the
//! reference ([`Engine`]).

mod blocks;

use crate::cache::{Cache, CacheConfig, CacheStats};
use crate::clint::{Clint, CLINT_BASE, CLINT_SIZE};
use crate::csr::{Counters, Csrs, MSTATUS_MIE, MSTATUS_MPIE};
use crate::decode::{decode, instruction_len, Decoded, Op};
use crate::elf::{Program, Segment};
use crate::error::SimError;
use crate::percycle::{self, FetchCount, FetchMemory, FlushKind, PerCycle, Slot};
use crate::pipeline::{Pipeline, PipelineStats};
use crate::predictor::{Predictor, PredictorConfig, PredictorKind, Transfer};
use crate::stop::Stop;
use crate::trap::*;

use std::time::{Duration, Instant};

/// Where the shipped linker script places programs.
pub const RAM_BASE: u32 = 0x8000_0000;
/// Name of the variable in which the shipped start-up code reads the timer interval.
pub const TIMER_INTERVAL_SYMBOL: &str = "rvsim_timer_interval";
/// The HTIF word through which riscv-tests (and spike programs) report their end.
pub const TOHOST_SYMBOL: &str = "tohost";
/// A linker-script symbol for the top of the stack; memory is extended to cover it.
pub const STACK_SYMBOL: &str = "__stack";
/// The linker's global pointer, loaded into gp at reset.
pub const GLOBAL_POINTER_SYMBOL: &str = "__global_pointer$";
/// Largest memory the machine models.
pub const MAX_MEMORY: u64 = 1 << 30;
/// Stack room added above the program when the memory is sized from its segments.
pub const DEFAULT_STACK: u32 = 1 << 20;
/// Program output kept per stream; beyond this it is counted but dropped.
const OUTPUT_CAP: usize = 64 << 20;
/// Predecode granularity: one table of halfword slots per 4 KiB page that runs code.
const PAGE_SHIFT: u32 = 12;
const SLOTS_PER_PAGE: usize = 1 << (PAGE_SHIFT - 1);
const NO_PAGE: u32 = u32::MAX;
/// The block engine forgets blocks by chunks of a page, so a store into one instruction
/// kills only the blocks with an instruction within 128 bytes of it, not the whole page's.
const CHUNK_SHIFT: u32 = 7;
const CHUNKS_PER_PAGE: usize = 1 << (PAGE_SHIFT - CHUNK_SHIFT);

/// The index of the chunk holding memory offset `off`, whose page has predecode table
/// `table`.
#[inline(always)]
fn chunk_of(table: u32, off: usize) -> usize {
    table as usize * CHUNKS_PER_PAGE + ((off & ((1 << PAGE_SHIFT) - 1)) >> CHUNK_SHIFT)
}
/// Steps between two readings of the clock under a time limit: about 20 ms on the reference
/// engine (the slowest path, a trap loop at some 50 million instructions a second), a few on
/// the block engine, and one clock read per million steps costs nothing measurable.
pub const TIME_CHECK_STEPS: u64 = 1 << 20;
/// `tohost` address when the program has none: odd, so no word address ever equals it.
const NO_TOHOST: u32 = 1;

/// Which engine runs the program. Both report identical statistics, registers and memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// Blocks of pre-decoded instructions with their counts summed per block (fast).
    #[default]
    Blocks,
    /// One instruction at a time (the reference the block engine is tested against).
    Reference,
}

/// How the machine is built.
#[derive(Clone, Debug)]
pub struct Config {
    /// Memory size in bytes, from the page of the program's lowest segment. `None`: the
    /// segments plus `stack` (and up to the program's `__stack` symbol, if it has one).
    pub memory: Option<u32>,
    /// Stack room above the program when `memory` is `None`.
    pub stack: u32,
    /// Whether the C extension is implemented (an RV32IMA machine traps on 16-bit encodings).
    pub compressed: bool,
    pub icache: Option<CacheConfig>,
    pub dcache: Option<CacheConfig>,
    /// Run the 5-stage pipeline timing model (false: functional only).
    pub pipeline: bool,
    /// Stall cycles per cache miss in the pipeline model.
    pub miss_penalty: u32,
    /// Raise a timer interrupt every this many instruction steps (sets mtimecmp at reset and
    /// the start-up code's `rvsim_timer_interval` variable, if the program has one).
    pub timer_interval: Option<u64>,
    /// Stop after this many instruction steps.
    pub max_instructions: u64,
    /// Stop once this much wall-clock time has passed since the machine was built
    /// ([`Stop::TimeLimit`]; `None`: no bound, the default here, so that a library run ends
    /// the same way on any host). The clock is read once per [`TIME_CHECK_STEPS`] steps, not
    /// per instruction. Where a run stops by time depends on the host's speed and load: it
    /// is not deterministic.
    pub time_limit: Option<Duration>,
    /// Serve `ecall` with a7=64 (write) and a7=93 (exit) in the host when the program has no
    /// trap handler; with a handler installed `ecall` always traps to it.
    pub host_abi: bool,
    /// The engine [`Machine::run`] uses.
    pub engine: Engine,
    /// How I-cache accesses and the pipeline's cycles are counted: per instruction
    /// (default), or per cycle as Ripes' 5-stage processor does ([`crate::percycle`]; needs
    /// the pipeline, no miss penalty, and runs on the per-instruction engine).
    pub count: FetchCount,
    /// The 5-stage model's branch predictor ([`crate::predictor`]; static not-taken, the
    /// default, is the model's timing without one). Another needs the pipeline and the
    /// per-instruction count, and runs on the per-instruction engine.
    pub predictor: PredictorConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            memory: None,
            stack: DEFAULT_STACK,
            compressed: true,
            icache: None,
            dcache: None,
            pipeline: false,
            miss_penalty: 0,
            timer_interval: None,
            max_instructions: 10_000_000_000,
            time_limit: None,
            host_abi: true,
            engine: Engine::Blocks,
            count: FetchCount::PerInstruction,
            predictor: PredictorConfig::default(),
        }
    }
}

/// Counts of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Instructions retired (trapping instructions excluded).
    pub instret: u64,
    /// Instruction steps: retired + trapped (what mtime counts).
    pub steps: u64,
    pub exceptions: u64,
    pub interrupts: u64,
    /// 32-bit instructions whose fetch touched two cache lines (I-cache only).
    pub straddling_fetches: u64,
    /// Retired compressed (16-bit) instructions.
    pub compressed_retired: u64,
    /// Whether the program ever enabled the timer interrupt (mstatus.MIE and mie.MTIE).
    pub timer_enabled: bool,
    pub icache: Option<CacheStats>,
    pub dcache: Option<CacheStats>,
    pub pipeline: Option<PipelineStats>,
}

/// What the block engine did to run a program: how it met self-modifying code and traps.
/// Not part of [`Stats`] (the reference engine has no blocks), and not the same from one
/// engine or version to the next: these say which path the run took, for tests and
/// diagnosis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineCounts {
    /// Blocks decoded and built (a block whose code changed is built again at its next use).
    pub blocks_built: u64,
    /// Live blocks killed because a store changed their code.
    pub blocks_killed: u64,
    /// Blocks stopped before an op the fast path cannot finish (a store over decoded code or
    /// to `tohost`, an access outside memory or to the timer, a jump that would trap).
    pub cuts: u64,
    /// Instructions the reference engine ran for the block engine: those blocks leave to it
    /// (CSR access, `ecall`, `ebreak`, `mret`, `fence.i`, AMOs), the instruction at each cut,
    /// and the code of chunks left to it.
    pub reference_steps: u64,
    /// Batches of steps started, on either engine: one per timer interrupt or limit step,
    /// and one after each instruction that may make the timer fire sooner.
    pub batches: u64,
    /// 128-byte chunks of code left to the reference engine because their code kept
    /// changing (see `machine/blocks`).
    pub volatile_chunks: u64,
}

/// The counters that say what one step did (see [`Machine::progress`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub steps: u64,
    pub instret: u64,
    pub exceptions: u64,
    pub interrupts: u64,
    pub pipeline: Option<PipelineStats>,
}

/// The memory region a program gets: `[base, base + size)`, and the initial stack pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub base: u32,
    pub size: u32,
    pub stack_top: u32,
}

impl Layout {
    /// Sizes the memory for `program` under `cfg`, or says in one line why it cannot run.
    pub fn of(cfg: &Config, program: &Program) -> Result<Layout, SimError> {
        let lowest = program.segments.iter().map(|s| s.addr).min().unwrap_or(0);
        let end = program
            .segments
            .iter()
            .map(|s| s.addr as u64 + s.mem_size as u64)
            .max()
            .unwrap_or(lowest as u64);
        let base = lowest & !((1 << PAGE_SHIFT) - 1);
        let span = end - base as u64;
        if span > MAX_MEMORY {
            return Err(SimError::Elf(format!(
                "segments span 0x{base:08x}..0x{end:08x} ({span} bytes); this machine models at most 1 GiB of contiguous memory"
            )));
        }
        let size = match cfg.memory {
            Some(m) => {
                if (m as u64) < span {
                    return Err(SimError::Config(format!(
                        "memory of {m} bytes is too small: the program's segments need {span} bytes from 0x{base:08x}"
                    )));
                }
                m as u64
            }
            None => {
                let page = 1u64 << PAGE_SHIFT;
                let mut size = span.div_ceil(page) * page + cfg.stack as u64;
                if let Some(&top) = program.symbols.get(STACK_SYMBOL) {
                    let want = (top as u64).wrapping_sub(base as u64);
                    if top as u64 > end && want <= MAX_MEMORY {
                        size = size.max(want);
                    }
                }
                size
            }
        };
        if !(16..=MAX_MEMORY).contains(&size) || size % 4 != 0 {
            return Err(SimError::Config(format!(
                "memory size {size} bytes: must be a multiple of 4 between 16 bytes and 1 GiB"
            )));
        }
        if base as u64 + size > 1 << 32 {
            return Err(SimError::Config(format!(
                "memory 0x{base:08x} + {size} bytes runs past the 32-bit address space"
            )));
        }
        let mem_end = base as u64 + size;
        let clint_end = CLINT_BASE as u64 + CLINT_SIZE as u64;
        let overlaps_clint = (base as u64) < clint_end && (CLINT_BASE as u64) < mem_end;
        if overlaps_clint && end > CLINT_BASE as u64 && (lowest as u64) < clint_end {
            return Err(SimError::Elf(format!(
                "program segments 0x{lowest:08x}..0x{end:08x} overlap the timer device at 0x{CLINT_BASE:08x}"
            )));
        }
        if overlaps_clint && cfg.timer_interval.is_some() {
            return Err(SimError::Config(format!(
                "memory 0x{base:08x}..0x{mem_end:08x} covers the timer at 0x{CLINT_BASE:08x}, which a timer interrupt needs; use a smaller memory"
            )));
        }
        Ok(Layout {
            base,
            size: size as u32,
            stack_top: (mem_end as u32).wrapping_sub(16) & !15,
        })
    }
}

/// What stops the current instruction from completing normally. Kept small (it is the error
/// type of every instruction) so it travels in registers.
enum Flow {
    Exception(Exception),
    /// The exit call.
    Exit(i32),
    /// A write to tohost.
    Tohost(u32),
    /// An ecall of the program ABI that is neither write nor exit, with no handler.
    UnknownEcall,
}

impl From<Exception> for Flow {
    fn from(e: Exception) -> Self {
        Flow::Exception(e)
    }
}

pub struct Machine {
    pub regs: [u32; 32],
    pub pc: u32,
    pub csr: Csrs,
    pub clint: Clint,
    ram: Vec<u8>,
    base: u32,
    /// Per memory page: index of its predecode table in `decoded`, or NO_PAGE.
    page_table: Vec<u32>,
    /// Per 128-byte chunk of memory: 1 if a byte of it was ever part of a decoded
    /// instruction. A store into a chunk at 0 changes no decoded instruction (and no block),
    /// whatever else its page holds.
    code_chunks: Vec<u8>,
    /// Predecode tables, SLOTS_PER_PAGE halfword slots each, for the pages that ran code.
    decoded: Vec<Decoded>,
    /// The page of the last fetch (its address with the low 12 bits clear, or 1 = none) and
    /// the index of its first slot in `decoded`: sequential code skips the page table.
    fetch_page: u32,
    fetch_slot0: usize,
    compressed: bool,
    /// Jump targets must satisfy `target & align_mask == 0`.
    align_mask: u32,
    icache: Option<Cache>,
    dcache: Option<Cache>,
    pipeline: Option<Pipeline>,
    /// The per-cycle model (`FetchCount::PerCycle`) and the sections outside memory its
    /// front end may read.
    per_cycle: Option<PerCycle>,
    other_sections: Vec<Segment>,
    /// The branch predictor, when it is not static not-taken.
    predictor: Option<Box<Predictor>>,
    /// Where the front end fetched after the last instruction retired with a predictor
    /// (the wrong path starts there when it was mispredicted).
    fetched_after: u32,
    engine: Engine,
    /// The block engine's blocks (empty with the reference engine).
    blocks: blocks::BlockCache,
    host_abi: bool,
    max_steps: u64,
    /// The time limit and when it runs out (`None`: no bound).
    deadline: Option<(Duration, Instant)>,
    /// The step at which the clock is next read (`u64::MAX` without a time limit).
    next_time_check: u64,
    tohost: u32,
    /// Address reserved by the last LR.W (A extension), if any.
    reservation: Option<u32>,
    /// mtime = steps + mtime_offset (mtime is derived, not ticked, and set by CLINT writes).
    mtime_offset: u64,
    /// Set when something the run loop's batch relies on may have changed (the timer may
    /// now fire before the batch's checked step: interrupts enabled, mtimecmp or mtime
    /// written): the batch ends and its length is recomputed.
    recheck: bool,
    /// The step the current batch checks for the timer (see [`Machine::start_batch`]).
    batch_end: u64,
    /// Batches started (see [`EngineCounts::batches`]).
    batches: u64,
    dmiss: u32,
    stats: Stats,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    dropped_output: u64,
}

/// Where an instruction ran: its address, the address after it, and the I-cache misses of
/// its fetch.
#[derive(Debug, Clone, Copy)]
struct Step {
    pc: u32,
    next: u32,
    imiss: u32,
}

/// `n` zero bytes, or None when the allocator cannot give them. Zeroed by the allocator (pages
/// the program never touches are never touched here either).
fn zeroed_bytes(n: usize) -> Option<Vec<u8>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).ok()?;
    // SAFETY: a layout of non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return None;
    }
    // SAFETY: p comes from the global allocator with this layout (size n, align 1), and all n
    // bytes are initialized (zero).
    Some(unsafe { Vec::from_raw_parts(p, n, n) })
}

impl Machine {
    /// Builds the machine and places the program in memory. The stack pointer starts at the
    /// top of memory; the program counter at the ELF entry point.
    pub fn new(cfg: &Config, program: &Program) -> Result<Machine, SimError> {
        let layout = Layout::of(cfg, program)?;
        // Reserved before it is used, so a memory limit (ulimit -v, a cgroup) is a refusal
        // with the size, not an abort of the whole process.
        let mut ram = zeroed_bytes(layout.size as usize).ok_or_else(|| {
            SimError::Config(format!(
                "cannot allocate the modeled memory of {} bytes (a memory limit?): give a smaller --memory",
                layout.size
            ))
        })?;
        for seg in &program.segments {
            let off = (seg.addr - layout.base) as usize;
            ram[off..off + seg.data.len()].copy_from_slice(&seg.data);
        }
        let end = layout.base as u64 + layout.size as u64;
        let in_segment = program.segments.iter().any(|s| {
            program.entry >= s.addr && (program.entry as u64) < s.addr as u64 + s.mem_size as u64
        });
        if !in_segment || program.entry & if cfg.compressed { 1 } else { 3 } != 0 {
            return Err(SimError::Elf(format!(
                "entry point 0x{:08x} is not an aligned address inside a loaded segment",
                program.entry
            )));
        }
        let cache = |c: &Option<CacheConfig>| {
            c.map(|c| Cache::new(c, layout.base, layout.size))
                .transpose()
        };
        let pages = (layout.size as usize).div_ceil(1 << PAGE_SHIFT);
        let chunks = (layout.size as usize).div_ceil(1 << CHUNK_SHIFT);
        let code_chunks = zeroed_bytes(chunks).ok_or_else(|| {
            SimError::Config(format!(
                "cannot allocate the map of the modeled memory's code ({chunks} bytes; a memory limit?): give a smaller --memory"
            ))
        })?;
        let per_cycle = cfg.count == FetchCount::PerCycle;
        if per_cycle && !cfg.pipeline {
            return Err(SimError::Config(
                "per-cycle counting counts the 5-stage pipeline's cycles: it needs the pipeline model".into(),
            ));
        }
        if per_cycle && cfg.miss_penalty != 0 {
            return Err(SimError::Config(
                "per-cycle counting follows Ripes, whose caches add no stall cycles: use a miss penalty of 0".into(),
            ));
        }
        let predicted = cfg.predictor.kind != PredictorKind::NotTaken;
        if predicted && !cfg.pipeline {
            return Err(SimError::Config(
                "a branch predictor changes the 5-stage pipeline's timing: it needs the pipeline model".into(),
            ));
        }
        if predicted && per_cycle {
            return Err(SimError::Config(
                "per-cycle counting follows Ripes, which has no branch predictor: use static not-taken".into(),
            ));
        }
        let mut m = Machine {
            regs: [0; 32],
            pc: program.entry,
            csr: Csrs::new(cfg.compressed),
            clint: Clint::default(),
            ram,
            base: layout.base,
            page_table: vec![NO_PAGE; pages],
            code_chunks,
            decoded: Vec::new(),
            fetch_page: 1,
            fetch_slot0: 0,
            compressed: cfg.compressed,
            align_mask: if cfg.compressed { 0 } else { 2 },
            icache: cache(&cfg.icache)?,
            dcache: cache(&cfg.dcache)?,
            pipeline: cfg.pipeline.then(|| Pipeline::new(cfg.miss_penalty as u64)),
            per_cycle: per_cycle.then(|| PerCycle::new(cfg.compressed)),
            other_sections: if per_cycle {
                program.other_sections.clone()
            } else {
                Vec::new()
            },
            predictor: predicted.then(|| Box::new(Predictor::new(cfg.predictor))),
            fetched_after: 0,
            // The per-cycle model and a predictor follow each instruction: the reference
            // engine runs them.
            engine: if per_cycle || predicted {
                Engine::Reference
            } else {
                cfg.engine
            },
            blocks: blocks::BlockCache::default(),
            host_abi: cfg.host_abi,
            max_steps: cfg.max_instructions,
            // A bound too far out for the clock to represent is none.
            deadline: cfg
                .time_limit
                .and_then(|d| Some((d, Instant::now().checked_add(d)?))),
            next_time_check: if cfg.time_limit.is_some() {
                0
            } else {
                u64::MAX
            },
            tohost: program
                .symbols
                .get(TOHOST_SYMBOL)
                .map_or(NO_TOHOST, |&a| a & !3),
            reservation: None,
            mtime_offset: 0,
            recheck: false,
            batch_end: 0,
            batches: 0,
            dmiss: 0,
            stats: Stats::default(),
            stdout: Vec::new(),
            stderr: Vec::new(),
            dropped_output: 0,
        };
        debug_assert!(end <= 1 << 32);
        m.regs[2] = layout.stack_top;
        // What start-up code would do, for programs linked without any (-nostdlib): the
        // linker may have relaxed global accesses to gp-relative ones.
        if let Some(&gp) = program.symbols.get(GLOBAL_POINTER_SYMBOL) {
            m.regs[3] = gp;
        }
        if let Some(n) = cfg.timer_interval {
            if n == 0 {
                return Err(SimError::Config("timer interval must be at least 1".into()));
            }
            m.clint.mtimecmp = n;
            if let Some(&addr) = program.symbols.get(TIMER_INTERVAL_SYMBOL) {
                m.poke_u32(addr, n.min(u32::MAX as u64) as u32)?;
            }
        }
        Ok(m)
    }

    /// The memory region this machine models: `(base, size)`.
    pub fn memory(&self) -> (u32, u32) {
        (self.base, self.ram.len() as u32)
    }

    /// The bytes of that memory region, as the program left them.
    pub fn memory_contents(&self) -> &[u8] {
        &self.ram
    }

    /// Runs until the program ends, one way or another, and says how.
    ///
    /// Instructions run in batches that cannot see a timer interrupt or the instruction
    /// limit, so those checks cost once per batch rather than once per instruction: a batch
    /// lasts until the step on which the timer could fire or the limit is reached, and ends
    /// early when a CSR write, `mret` or a CLINT store may have changed either.
    pub fn run(&mut self) -> Stop {
        let stop = self.run_engine();
        self.finish_per_cycle();
        stop
    }

    fn run_engine(&mut self) -> Stop {
        let (ic, dc, pipe) = (
            self.icache.is_some(),
            self.dcache.is_some(),
            self.pipeline.is_some(),
        );
        match (self.engine, ic, dc, pipe) {
            (Engine::Reference, false, _, false) => self.run_with::<false, false>(),
            (Engine::Reference, true, _, false) => self.run_with::<true, false>(),
            (Engine::Reference, false, _, true) => self.run_with::<false, true>(),
            (Engine::Reference, true, _, true) => self.run_with::<true, true>(),
            (Engine::Blocks, false, false, false) => self.run_blocks::<false, false, false>(),
            (Engine::Blocks, true, false, false) => self.run_blocks::<true, false, false>(),
            (Engine::Blocks, false, true, false) => self.run_blocks::<false, true, false>(),
            (Engine::Blocks, true, true, false) => self.run_blocks::<true, true, false>(),
            (Engine::Blocks, false, false, true) => self.run_blocks::<false, false, true>(),
            (Engine::Blocks, true, false, true) => self.run_blocks::<true, false, true>(),
            (Engine::Blocks, false, true, true) => self.run_blocks::<false, true, true>(),
            (Engine::Blocks, true, true, true) => self.run_blocks::<true, true, true>(),
        }
    }

    /// [`Machine::run`] compiled once per model combination (`IC`: an I-cache is modeled,
    /// `PIPE`: the pipeline is), so the functional loop carries no test for either. The
    /// program counter travels in a register within a batch (`self.pc` is written, never
    /// read back, on the way).
    fn run_with<const IC: bool, const PIPE: bool>(&mut self) -> Stop {
        loop {
            if self.stats.steps >= self.max_steps {
                return Stop::Limit {
                    limit: self.max_steps,
                    pc: self.pc,
                };
            }
            if self.stats.steps >= self.next_time_check {
                if let Some(stop) = self.check_time() {
                    return stop;
                }
            }
            let budget = self.start_batch();
            let mut pc = self.pc;
            for _ in 1..budget {
                self.stats.steps += 1;
                pc = match self.execute_next::<IC, PIPE>(pc) {
                    Ok(next) => next,
                    Err(stop) => return stop,
                };
                if self.recheck {
                    break;
                }
            }
            if !self.recheck {
                if let Some(stop) = self.step_with::<IC, PIPE>() {
                    return stop;
                }
            }
        }
    }

    /// Starts a batch and returns its steps (see [`Machine::batch_budget`]).
    #[inline(always)]
    fn start_batch(&mut self) -> u64 {
        let budget = self.batch_budget();
        self.batch_end = self.stats.steps + budget;
        self.recheck = false;
        self.batches += 1;
        budget
    }

    /// Whether the timer interrupt may now fire on a step of the current batch before its
    /// checked step (which checks for it anyway): then the batch must end. A trap entry, an
    /// `mret` or a CSR write that leaves the timer disabled, or enabled with mtimecmp no
    /// nearer than the batch's end, leaves the batch as it is (a trap loop then runs in one
    /// batch instead of one per instruction that touches the trap state).
    #[inline(always)]
    fn timer_may_fire_in_batch(&self) -> bool {
        let until = self.clint.mtimecmp.saturating_sub(self.mtime()).max(1);
        self.csr.timer_enabled() && self.stats.steps.saturating_add(until) < self.batch_end
    }

    /// Steps in the next batch (at least 1): up to the instruction limit or the first step on
    /// which the timer interrupt could fire. Its last step is the one that checks for it.
    #[inline(always)]
    fn batch_budget(&self) -> u64 {
        let mut budget = (self.max_steps - self.stats.steps)
            .min(self.next_time_check.saturating_sub(self.stats.steps).max(1));
        if self.csr.timer_enabled() {
            // Step k of the batch sees mtime = now + k; the interrupt can fire first on
            // step mtimecmp - now.
            let until = self.clint.mtimecmp.saturating_sub(self.mtime()).max(1);
            budget = budget.min(until);
        }
        budget
    }

    /// Reads the clock: the time-limit ending once the deadline has passed, otherwise
    /// `None` and the next check [`TIME_CHECK_STEPS`] steps on. The run loops call it at the
    /// start of a batch whose step has reached `next_time_check` (batches end there), and
    /// [`Machine::step`] before its step, so the clock is read once per that many steps.
    #[cold]
    fn check_time(&mut self) -> Option<Stop> {
        let (limit, deadline) = self.deadline?;
        if Instant::now() >= deadline {
            return Some(Stop::TimeLimit {
                seconds: limit.as_secs_f64(),
                instructions: self.stats.steps,
                pc: self.pc,
            });
        }
        self.next_time_check = self.stats.steps.saturating_add(TIME_CHECK_STEPS);
        None
    }

    /// The current mtime (one tick per instruction step, plus what the program wrote).
    #[inline(always)]
    fn mtime(&self) -> u64 {
        self.stats.steps.wrapping_add(self.mtime_offset)
    }

    /// Executes one instruction (or takes one interrupt). Returns why the run ended once it
    /// has.
    pub fn step(&mut self) -> Option<Stop> {
        if self.stats.steps >= self.next_time_check {
            if let Some(stop) = self.check_time() {
                self.finish_per_cycle();
                return Some(stop);
            }
        }
        let stop = match (self.icache.is_some(), self.pipeline.is_some()) {
            (false, false) => self.step_with::<false, false>(),
            (true, false) => self.step_with::<true, false>(),
            (false, true) => self.step_with::<false, true>(),
            (true, true) => self.step_with::<true, true>(),
        };
        if stop.is_some() {
            self.finish_per_cycle();
        }
        stop
    }

    #[inline(always)]
    fn step_with<const IC: bool, const PIPE: bool>(&mut self) -> Option<Stop> {
        self.stats.steps += 1;
        if self.csr.timer_enabled() && self.mtime() >= self.clint.mtimecmp {
            if self.per_cycle.is_some() {
                let pc = self.pc;
                self.stats.interrupts += 1;
                let end = self.enter_trap(MACHINE_TIMER_INTERRUPT, 0, pc).err();
                self.per_cycle_trap(pc, 0, FlushKind::Interrupt);
                return end;
            }
            if let Some(p) = &mut self.pipeline {
                p.interrupt();
            }
            self.stats.interrupts += 1;
            return self.enter_trap(MACHINE_TIMER_INTERRUPT, 0, self.pc).err();
        }
        self.execute_next::<IC, PIPE>(self.pc).err()
    }

    /// Fetches, executes and retires the instruction at `pc` (its step already counted).
    /// Returns the pc of the next instruction, also stored in `self.pc`.
    #[inline(always)]
    fn execute_next<const IC: bool, const PIPE: bool>(&mut self, pc: u32) -> Result<u32, Stop> {
        let d = self.cached(pc);
        if d.op == Op::Undecoded {
            return self.decode_and_execute::<IC, PIPE>(pc);
        }
        self.execute_decoded::<IC, PIPE>(d, pc)
    }

    /// [`Machine::execute_next`] for an instruction not decoded yet. Kept out of line so the
    /// hot path's decoded record comes straight from the table (merging it with a freshly
    /// decoded one made the compiler shuffle it through the stack on every step).
    #[cold]
    #[inline(never)]
    fn decode_and_execute<const IC: bool, const PIPE: bool>(
        &mut self,
        pc: u32,
    ) -> Result<u32, Stop> {
        match self.decode_at(pc) {
            Ok(d) => self.execute_decoded::<IC, PIPE>(d, pc),
            Err(e) if pc == 0 && e.cause == INSTRUCTION_ACCESS_FAULT => {
                // Not an instruction: take back the step counted for it.
                self.stats.steps -= 1;
                Err(Stop::ReturnToZero(self.regs[10] as i32))
            }
            Err(e) => {
                // A fetch fault accesses no data: the previous instruction's D-cache misses
                // (already charged when it retired) are not this one's.
                self.dmiss = 0;
                self.exception(e, pc, 0).map(|()| self.pc)
            }
        }
    }

    /// Fetches `d` (at `pc`) through the I-cache, executes and retires it.
    #[inline(always)]
    fn execute_decoded<const IC: bool, const PIPE: bool>(
        &mut self,
        d: Decoded,
        pc: u32,
    ) -> Result<u32, Stop> {
        let imiss = if self.per_cycle.is_some() {
            0
        } else {
            self.fetch::<IC>(pc, d.len)
        };
        if PIPE {
            self.dmiss = 0;
        }
        match self.execute(d, pc) {
            Ok(next) => {
                self.pc = next;
                self.retire::<PIPE>(d, pc, next, imiss);
                Ok(next)
            }
            Err(flow) => {
                // As a completed instruction would leave it (a trap entry overrides it).
                let next = pc.wrapping_add(d.len as u32);
                self.pc = next;
                self.stop_flow::<PIPE>(flow, d, Step { pc, next, imiss })
            }
        }
    }

    /// Fetches the `len`-byte instruction at `pc` through the I-cache (when `IC`). Returns
    /// misses.
    #[inline(always)]
    fn fetch<const IC: bool>(&mut self, pc: u32, len: u8) -> u32 {
        match &mut self.icache {
            Some(ic) if IC => {
                let len = len as u32;
                if len == 4 && (pc & (ic.line_bytes() - 1)) == ic.line_bytes() - 2 {
                    self.stats.straddling_fetches += 1;
                }
                ic.fetch(pc, len)
            }
            _ => 0,
        }
    }

    /// The rare ends of an instruction: a trap, or the end of the run.
    #[cold]
    #[inline(never)]
    fn stop_flow<const PIPE: bool>(
        &mut self,
        flow: Flow,
        d: Decoded,
        at: Step,
    ) -> Result<u32, Stop> {
        let Step { pc, next, imiss } = at;
        match flow {
            Flow::Exception(e) => self.exception(e, pc, imiss).map(|()| self.pc),
            Flow::Exit(status) => {
                self.retire::<PIPE>(d, pc, next, imiss);
                Err(Stop::Exit(status))
            }
            Flow::Tohost(value) => {
                self.retire::<PIPE>(d, pc, next, imiss);
                Err(Stop::Tohost(value))
            }
            Flow::UnknownEcall => Err(Stop::Trap {
                cause: ECALL_FROM_M,
                pc,
                tval: 0,
            }),
        }
    }

    /// The predecoded instruction at `pc`, or `Decoded::UNDECODED` if it has not been
    /// decoded yet (a plain value rather than an Option: this is the hottest path).
    #[inline(always)]
    fn cached(&mut self, pc: u32) -> Decoded {
        let slot = ((pc >> 1) as usize) & (SLOTS_PER_PAGE - 1);
        if pc & !((1 << PAGE_SHIFT) - 1) != self.fetch_page {
            let off = pc.wrapping_sub(self.base) as usize;
            let page = match self.page_table.get(off >> PAGE_SHIFT) {
                Some(&p) if p != NO_PAGE => p,
                _ => return Decoded::UNDECODED,
            };
            // Page tables are never freed or moved, so this stays valid for the run.
            self.fetch_page = pc & !((1 << PAGE_SHIFT) - 1);
            self.fetch_slot0 = page as usize * SLOTS_PER_PAGE;
        }
        self.decoded[self.fetch_slot0 + slot]
    }

    #[inline(always)]
    fn retire<const PIPE: bool>(&mut self, d: Decoded, pc: u32, next: u32, imiss: u32) {
        self.stats.instret += 1;
        self.stats.compressed_retired += (d.len == 2) as u64;
        if !PIPE {
            return;
        }
        if self.per_cycle.is_some() {
            self.per_cycle_retire(d, pc, next);
            return;
        }
        if self.predictor.is_some() {
            self.predicted_retire(d, pc, next, imiss);
            return;
        }
        if let Some(p) = &mut self.pipeline {
            let redirected = next != pc.wrapping_add(d.len as u32);
            p.retire(d, redirected, imiss, self.dmiss);
        }
    }

    /// A retired instruction's timing with a branch predictor: a branch or jump flushes only
    /// when it was mispredicted.
    #[cold]
    #[inline(never)]
    fn predicted_retire(&mut self, d: Decoded, pc: u32, next: u32, imiss: u32) {
        let seq = pc.wrapping_add(d.len as u32);
        let transfer = match d.op {
            Op::Jal | Op::Jalr | Op::Mret => Some(Transfer::Jump),
            op if op.is_branch() => Some(Transfer::Branch),
            _ => None,
        };
        let fetched = match (transfer, &mut self.predictor) {
            (Some(t), Some(bp)) => bp.resolve_from(t, pc, seq, next),
            _ => next,
        };
        self.fetched_after = fetched;
        if let Some(p) = &mut self.pipeline {
            p.retire_predicted(d, fetched != next, imiss, self.dmiss);
        }
    }

    /// A retired instruction in the per-cycle model.
    #[cold]
    #[inline(never)]
    fn per_cycle_retire(&mut self, d: Decoded, pc: u32, next: u32) {
        if let Some(p) = &mut self.pipeline {
            p.stats.retired += 1;
        }
        let seq = pc.wrapping_add(d.len as u32);
        let kind = match d.op {
            Op::Jal | Op::Jalr | Op::Mret => Some(FlushKind::Jump),
            op if op.is_branch() => {
                let (a, b) = (
                    self.regs[d.rs1 as usize & 31],
                    self.regs[d.rs2 as usize & 31],
                );
                (next != seq || branch_taken(op, a, b)).then_some(FlushKind::Branch)
            }
            _ => None,
        };
        let load = percycle::is_plain_load(&d);
        let bits = match &self.per_cycle {
            Some(model) if model.reads_bits(load) => {
                let word = self.fetch_memory().word(pc);
                if d.len == 2 {
                    percycle::expand_rvc(word)
                } else {
                    word
                }
            }
            _ => 0,
        };
        let slot = Slot {
            pc,
            bits,
            load,
            writes: percycle::writes_register(d.op),
            ecall: d.op == Op::Ecall,
            redirect: kind.map(|k| (next, k)),
            next: seq,
        };
        self.per_cycle_slot(&slot);
    }

    /// A trap in the per-cycle model: it takes an instruction's place in EX at `pc` and
    /// redirects fetch to the handler (`self.pc` once the trap is entered).
    #[cold]
    #[inline(never)]
    fn per_cycle_trap(&mut self, pc: u32, len: u32, kind: FlushKind) {
        let slot = Slot {
            pc,
            bits: 0,
            load: false,
            writes: false,
            ecall: false,
            redirect: Some((self.pc, kind)),
            next: pc.wrapping_add(len),
        };
        self.per_cycle_slot(&slot);
    }

    #[inline(always)]
    fn per_cycle_slot(&mut self, slot: &Slot) {
        let mem = FetchView {
            ram: &self.ram,
            base: self.base,
            other: &self.other_sections,
        };
        if let (Some(pc), Some(p)) = (&mut self.per_cycle, &mut self.pipeline) {
            pc.slot(slot, &mut p.stats, self.icache.as_mut(), &mem);
        }
    }

    /// The end of a run in the per-cycle model (the pipeline drains, fetch goes on).
    fn finish_per_cycle(&mut self) {
        let mem = FetchView {
            ram: &self.ram,
            base: self.base,
            other: &self.other_sections,
        };
        if let (Some(pc), Some(p)) = (&mut self.per_cycle, &mut self.pipeline) {
            pc.finish(&mut p.stats, self.icache.as_mut(), &mem);
        }
    }

    fn fetch_memory(&self) -> FetchView<'_> {
        FetchView {
            ram: &self.ram,
            base: self.base,
            other: &self.other_sections,
        }
    }

    fn exception(&mut self, e: Exception, pc: u32, imiss: u32) -> Result<(), Stop> {
        if self.per_cycle.is_some() {
            self.stats.exceptions += 1;
            let len = self
                .instruction_bits(pc)
                .map_or(4, |b| instruction_len(b) as u32);
            let end = self.enter_trap(e.cause, e.tval, pc);
            self.per_cycle_trap(pc, len, FlushKind::Trap);
            return end;
        }
        if let Some(p) = &mut self.pipeline {
            p.exception(imiss, self.dmiss);
        }
        self.stats.exceptions += 1;
        self.enter_trap(e.cause, e.tval, pc)
    }

    /// Whether the program installed a trap handler: mtvec is set and points into memory.
    fn has_handler(&self) -> bool {
        self.csr.mtvec & !3 != 0 && self.in_ram(self.csr.mtvec & !3, 2)
    }

    /// Trap entry: save pc and cause, disable interrupts, jump to mtvec. Without a handler
    /// the run ends.
    fn enter_trap(&mut self, cause: u32, tval: u32, epc: u32) -> Result<(), Stop> {
        let mtvec = self.csr.mtvec;
        let mut target = mtvec & !3;
        if mtvec & 1 == 1 && cause & 0x8000_0000 != 0 {
            target = target.wrapping_add(4 * (cause & 0x7fff_ffff));
        }
        if !self.has_handler() || !self.in_ram(target, 2) {
            return Err(if cause == BREAKPOINT {
                Stop::Ebreak { pc: epc }
            } else {
                Stop::Trap {
                    cause,
                    pc: epc,
                    tval,
                }
            });
        }
        // Interrupts are disabled from here: the timer cannot fire earlier than the batch
        // allowed for, so the batch goes on.
        self.reservation = None;
        let c = &mut self.csr;
        c.mepc = epc & c.epc_mask;
        c.mcause = cause;
        c.mtval = tval;
        let mie = c.mstatus & MSTATUS_MIE != 0;
        c.mstatus = if mie { MSTATUS_MPIE } else { 0 };
        self.pc = target;
        Ok(())
    }

    fn decode_at(&mut self, pc: u32) -> Result<Decoded, Exception> {
        if pc & 1 != 0 {
            return Err(Exception::new(INSTRUCTION_MISALIGNED, pc));
        }
        let Some(word) = self.instruction_bits(pc) else {
            // The first halfword outside memory, or the second half of a 32-bit one.
            let at = if self.in_ram(pc, 2) {
                pc.wrapping_add(2)
            } else {
                pc
            };
            return Err(Exception::new(INSTRUCTION_ACCESS_FAULT, at));
        };
        let off = (pc - self.base) as usize;
        let d = decode(word, self.compressed);
        let page_no = off >> PAGE_SHIFT;
        if self.page_table[page_no] == NO_PAGE {
            self.page_table[page_no] = (self.decoded.len() / SLOTS_PER_PAGE) as u32;
            self.decoded
                .resize(self.decoded.len() + SLOTS_PER_PAGE, Decoded::UNDECODED);
        }
        let page = self.page_table[page_no] as usize;
        self.decoded[page * SLOTS_PER_PAGE + ((off >> 1) & (SLOTS_PER_PAGE - 1))] = d;
        // Its bytes are code from now on (an instruction lies in at most two chunks).
        self.code_chunks[off >> CHUNK_SHIFT] = 1;
        self.code_chunks[(off + instruction_len(word) as usize - 1) >> CHUNK_SHIFT] = 1;
        Ok(d)
    }

    /// How the engine ran the program so far ([`EngineCounts`]).
    pub fn engine_counts(&self) -> EngineCounts {
        let b = &self.blocks;
        EngineCounts {
            blocks_built: b.built,
            blocks_killed: b.killed,
            cuts: b.cuts,
            reference_steps: b.reference_steps,
            batches: self.batches,
            volatile_chunks: b.volatile_chunks(),
        }
    }

    /// Bytes of predecode tables allocated (one table per page that ran code), and of the
    /// block engine's blocks.
    pub fn predecoded_bytes(&self) -> usize {
        self.decoded.len() * std::mem::size_of::<Decoded>() + self.blocks.allocated_bytes()
    }

    #[inline(always)]
    fn in_ram(&self, addr: u32, len: u32) -> bool {
        let off = addr.wrapping_sub(self.base) as u64;
        off + len as u64 <= self.ram.len() as u64
    }

    /// Writes a word into memory outside of program execution (loader, tests).
    pub fn poke_u32(&mut self, addr: u32, value: u32) -> Result<(), SimError> {
        if !self.in_ram(addr, 4) {
            return Err(SimError::Config(format!(
                "address 0x{addr:08x} is outside memory"
            )));
        }
        let off = (addr - self.base) as usize;
        self.write(off, &value.to_le_bytes());
        Ok(())
    }

    /// Where the front end fetched after the instruction at `pc` that just retired and was
    /// flushed: its sequential successor, or with a predictor the predicted target.
    pub fn wrong_path_start(&self, pc: u32, len: u32) -> u32 {
        if self.predictor.is_some() {
            self.fetched_after
        } else {
            pc.wrapping_add(len)
        }
    }

    /// The counters an observer stepping the machine compares before and after each step,
    /// without the cost of [`Machine::stats`] (no cache statistics are gathered).
    pub fn progress(&self) -> Progress {
        Progress {
            steps: self.stats.steps,
            instret: self.stats.instret,
            exceptions: self.stats.exceptions,
            interrupts: self.stats.interrupts,
            pipeline: self.pipeline.as_ref().map(|p| p.stats),
        }
    }

    /// The bits of the instruction at `pc` as memory holds them now (the low halfword alone
    /// for a compressed one), or `None` when `pc` is misaligned or outside memory.
    pub fn instruction_bits(&self, pc: u32) -> Option<u32> {
        if pc & 1 != 0 || !self.in_ram(pc, 2) {
            return None;
        }
        let off = (pc - self.base) as usize;
        let low = u16::from_le_bytes([self.ram[off], self.ram[off + 1]]) as u32;
        if instruction_len(low) == 2 {
            return Some(low);
        }
        if !self.in_ram(pc.wrapping_add(2), 2) {
            return None;
        }
        Some(low | (u16::from_le_bytes([self.ram[off + 2], self.ram[off + 3]]) as u32) << 16)
    }

    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        s.timer_enabled = self.csr.timer_ever_enabled;
        s.icache = self.icache.as_ref().map(|c| c.stats());
        s.dcache = self.dcache.as_ref().map(|c| c.stats());
        s.pipeline = self.pipeline.as_ref().map(|p| p.stats);
        s
    }

    /// What the program wrote to stdout (fd 1).
    pub fn stdout(&self) -> &[u8] {
        &self.stdout
    }
    /// What the program wrote to stderr (fd 2).
    pub fn stderr(&self) -> &[u8] {
        &self.stderr
    }
    /// Output bytes beyond the 64 MiB kept per stream.
    pub fn dropped_output(&self) -> u64 {
        self.dropped_output
    }

    /// Writes `bytes` into memory at offset `off`, forgetting the decoded instructions they
    /// change.
    #[inline(always)]
    fn write(&mut self, off: usize, bytes: &[u8]) {
        let len = bytes.len();
        let chunk = off >> CHUNK_SHIFT;
        // The common case: a store inside a chunk that never held code.
        if self.code_chunks[chunk] == 0 && (off + len - 1) >> CHUNK_SHIFT == chunk {
            self.ram[off..off + len].copy_from_slice(bytes);
            return;
        }
        self.write_near_code(off, bytes);
    }

    /// [`Machine::write`] into or across a chunk that held code. Out of line, so the run loops
    /// that inline stores keep their registers for the common case.
    #[inline(never)]
    fn write_near_code(&mut self, off: usize, bytes: &[u8]) {
        let old = &mut self.ram[off..off + bytes.len()];
        // A store of the bytes already there changes no instruction.
        if old != bytes {
            old.copy_from_slice(bytes);
            self.invalidate(off, bytes.len());
        }
    }

    /// Forgets decoded instructions overlapping memory bytes `off..off+len` (including one
    /// that starts in the halfword before and extends into them).
    fn invalidate(&mut self, off: usize, len: usize) {
        let first = (off >> 1).saturating_sub(1);
        let last = (off + len - 1) >> 1;
        let mut code = false;
        for slot in first..=last {
            let page = match self.page_table.get(slot / SLOTS_PER_PAGE) {
                Some(&p) if p != NO_PAGE => p as usize,
                _ => continue,
            };
            let d = &mut self.decoded[page * SLOTS_PER_PAGE + (slot & (SLOTS_PER_PAGE - 1))];
            // Every instruction of a block is decoded: this one may be in a block.
            code |= d.op != Op::Undecoded;
            *d = Decoded::UNDECODED;
        }
        if code {
            // A block holding one of the changed bytes is one of its chunk's blocks.
            self.code_changed(off);
            if (off + len - 1) >> CHUNK_SHIFT != off >> CHUNK_SHIFT {
                self.code_changed(off + len - 1);
            }
        }
    }

    /// The byte at memory offset `off` changed under a decoded instruction: every block
    /// with an instruction in its chunk is dead from now on.
    #[cold]
    #[inline(never)]
    fn code_changed(&mut self, off: usize) {
        if let Some(&table) = self.page_table.get(off >> PAGE_SHIFT) {
            if table != NO_PAGE {
                self.blocks.chunk_changed(chunk_of(table, off));
            }
        }
    }

    /// Accounts a data access to the D-cache: one access per line the bytes touch.
    #[inline(always)]
    fn dcache_access(&mut self, addr: u32, size: u32, write: bool) {
        if let Some(dc) = &mut self.dcache {
            self.dmiss += dc.access_bytes(addr, size, write);
        }
    }

    /// A load of `size` bytes; misaligned addresses are handled in hardware (as the
    /// privileged spec permits), byte by byte.
    #[inline(always)]
    fn load(&mut self, addr: u32, size: u32) -> Result<u32, Exception> {
        if self.in_ram(addr, size) {
            self.dcache_access(addr, size, false);
            let off = (addr - self.base) as usize;
            let r = &self.ram;
            return Ok(match size {
                1 => r[off] as u32,
                2 => u16::from_le_bytes([r[off], r[off + 1]]) as u32,
                _ => u32::from_le_bytes([r[off], r[off + 1], r[off + 2], r[off + 3]]),
            });
        }
        if size == 4 && addr & 3 == 0 && Clint::contains(addr) {
            self.clint.mtime = self.mtime();
            return Ok(self.clint.read(addr - CLINT_BASE));
        }
        Err(Exception::new(LOAD_ACCESS_FAULT, addr))
    }

    #[inline(always)]
    fn store(&mut self, addr: u32, size: u32, value: u32) -> Result<(), Flow> {
        if self.in_ram(addr, size) {
            self.dcache_access(addr, size, true);
            let off = (addr - self.base) as usize;
            let bytes = value.to_le_bytes();
            self.write(off, &bytes[..size as usize]);
            if addr & !3 == self.tohost && value != 0 {
                return Err(Flow::Tohost(value));
            }
            return Ok(());
        }
        if size == 4 && addr & 3 == 0 && Clint::contains(addr) {
            self.clint.mtime = self.mtime();
            self.clint.write(addr - CLINT_BASE, value);
            self.mtime_offset = self.clint.mtime.wrapping_sub(self.stats.steps);
            self.recheck = true;
            return Ok(());
        }
        Err(Exception::new(STORE_ACCESS_FAULT, addr).into())
    }

    /// LR.W, SC.W and the AMOs: word-aligned only (misaligned ones trap).
    fn atomic(&mut self, op: Op, addr: u32, rs2: u32) -> Result<u32, Flow> {
        if addr & 3 != 0 {
            let cause = if op == Op::LrW {
                LOAD_MISALIGNED
            } else {
                STORE_MISALIGNED
            };
            return Err(Exception::new(cause, addr).into());
        }
        if op == Op::LrW {
            let v = self.load(addr, 4)?;
            self.reservation = Some(addr);
            return Ok(v);
        }
        if !self.in_ram(addr, 4) {
            return Err(Exception::new(STORE_ACCESS_FAULT, addr).into());
        }
        if op == Op::ScW {
            let ok = self.reservation.take() == Some(addr);
            if ok {
                self.store(addr, 4, rs2)?;
            }
            return Ok(!ok as u32);
        }
        let old = self.load(addr, 4)?;
        let new = match op {
            Op::AmoSwapW => rs2,
            Op::AmoAddW => old.wrapping_add(rs2),
            Op::AmoXorW => old ^ rs2,
            Op::AmoAndW => old & rs2,
            Op::AmoOrW => old | rs2,
            Op::AmoMinW => (old as i32).min(rs2 as i32) as u32,
            Op::AmoMaxW => (old as i32).max(rs2 as i32) as u32,
            Op::AmoMinuW => old.min(rs2),
            _ => old.max(rs2),
        };
        self.store(addr, 4, new)?;
        Ok(old)
    }

    fn counters(&self) -> Counters {
        Counters {
            cycle: match &self.pipeline {
                Some(p) => p.stats.elapsed(),
                None => self.stats.instret,
            },
            time: self.mtime(),
            instret: self.stats.instret,
            timer_pending: self.mtime() >= self.clint.mtimecmp,
        }
    }

    #[inline(always)]
    fn jump(&self, target: u32) -> Result<u32, Exception> {
        if target & self.align_mask != 0 {
            return Err(Exception::new(INSTRUCTION_MISALIGNED, target));
        }
        Ok(target)
    }

    /// Executes one decoded instruction at `pc`; on success returns the next pc (`self.pc`
    /// is left alone).
    #[inline(always)]
    fn execute(&mut self, d: Decoded, pc: u32) -> Result<u32, Flow> {
        // Register numbers are below 32 by construction; the mask spares the bounds checks.
        let rs1 = self.regs[(d.rs1 & 31) as usize];
        let rs2 = self.regs[(d.rs2 & 31) as usize];
        let imm = d.imm as u32;
        let next = pc.wrapping_add(d.len as u32);
        let value = match d.op {
            Op::Lui => imm,
            Op::Auipc => pc.wrapping_add(imm),
            Op::Jal => {
                let target = self.jump(pc.wrapping_add(imm))?;
                self.regs[(d.rd & 31) as usize] = next;
                self.regs[0] = 0;
                return Ok(target);
            }
            Op::Jalr => {
                let target = self.jump(rs1.wrapping_add(imm) & !1)?;
                self.regs[(d.rd & 31) as usize] = next;
                self.regs[0] = 0;
                return Ok(target);
            }
            Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
                let taken = match d.op {
                    Op::Beq => rs1 == rs2,
                    Op::Bne => rs1 != rs2,
                    Op::Blt => (rs1 as i32) < (rs2 as i32),
                    Op::Bge => (rs1 as i32) >= (rs2 as i32),
                    Op::Bltu => rs1 < rs2,
                    _ => rs1 >= rs2,
                };
                return if taken {
                    Ok(self.jump(pc.wrapping_add(imm))?)
                } else {
                    Ok(next)
                };
            }
            Op::Lb => self.load(rs1.wrapping_add(imm), 1)? as i8 as i32 as u32,
            Op::Lh => self.load(rs1.wrapping_add(imm), 2)? as i16 as i32 as u32,
            Op::Lw => self.load(rs1.wrapping_add(imm), 4)?,
            Op::Lbu => self.load(rs1.wrapping_add(imm), 1)?,
            Op::Lhu => self.load(rs1.wrapping_add(imm), 2)?,
            Op::Sb => return self.store(rs1.wrapping_add(imm), 1, rs2).map(|()| next),
            Op::Sh => return self.store(rs1.wrapping_add(imm), 2, rs2).map(|()| next),
            Op::Sw => return self.store(rs1.wrapping_add(imm), 4, rs2).map(|()| next),
            Op::Addi => rs1.wrapping_add(imm),
            Op::Slti => ((rs1 as i32) < d.imm) as u32,
            Op::Sltiu => (rs1 < imm) as u32,
            Op::Xori => rs1 ^ imm,
            Op::Ori => rs1 | imm,
            Op::Andi => rs1 & imm,
            Op::Slli => rs1 << (imm & 31),
            Op::Srli => rs1 >> (imm & 31),
            Op::Srai => ((rs1 as i32) >> (imm & 31)) as u32,
            Op::Add => rs1.wrapping_add(rs2),
            Op::Sub => rs1.wrapping_sub(rs2),
            Op::Sll => rs1 << (rs2 & 31),
            Op::Slt => ((rs1 as i32) < (rs2 as i32)) as u32,
            Op::Sltu => (rs1 < rs2) as u32,
            Op::Xor => rs1 ^ rs2,
            Op::Srl => rs1 >> (rs2 & 31),
            Op::Sra => ((rs1 as i32) >> (rs2 & 31)) as u32,
            Op::Or => rs1 | rs2,
            Op::And => rs1 & rs2,
            Op::Mul => rs1.wrapping_mul(rs2),
            Op::Mulh => ((rs1 as i32 as i64 * rs2 as i32 as i64) >> 32) as u32,
            Op::Mulhsu => ((rs1 as i32 as i64).wrapping_mul(rs2 as i64) >> 32) as u32,
            Op::Mulhu => ((rs1 as u64 * rs2 as u64) >> 32) as u32,
            Op::Div => {
                if rs2 == 0 {
                    u32::MAX
                } else {
                    (rs1 as i32).wrapping_div(rs2 as i32) as u32
                }
            }
            Op::Divu => rs1.checked_div(rs2).unwrap_or(u32::MAX),
            Op::Rem => {
                if rs2 == 0 {
                    rs1
                } else {
                    (rs1 as i32).wrapping_rem(rs2 as i32) as u32
                }
            }
            Op::Remu => rs1.checked_rem(rs2).unwrap_or(rs1),
            Op::Fence | Op::Wfi => return Ok(next),
            // Nothing to forget: every store already forgets the decoded instructions and the
            // blocks it changes (`invalidate`), so what is decoded always matches memory.
            Op::FenceI => return Ok(next),
            Op::Ecall => return self.ecall().map(|()| next),
            Op::Ebreak => return Err(Exception::new(BREAKPOINT, pc).into()),
            Op::Mret => {
                let c = &mut self.csr;
                let mpie = c.mstatus & MSTATUS_MPIE != 0;
                c.mstatus = MSTATUS_MPIE | if mpie { MSTATUS_MIE } else { 0 };
                if c.timer_enabled() {
                    c.timer_ever_enabled = true;
                }
                let mepc = c.mepc;
                self.recheck |= self.timer_may_fire_in_batch();
                return Ok(mepc);
            }
            Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => {
                self.csr_op(d.op, d.rd, d.rs1, d.imm)?
            }
            Op::Illegal | Op::Undecoded => {
                return Err(Exception::new(ILLEGAL_INSTRUCTION, imm).into())
            }
            op => self.atomic(op, rs1, rs2)?,
        };
        self.regs[(d.rd & 31) as usize] = value;
        self.regs[0] = 0;
        Ok(next)
    }

    /// A CSR instruction. Takes the record's fields rather than the record: passing it whole
    /// made the compiler keep every step's record in memory.
    fn csr_op(&mut self, op: Op, rd: u8, rs1_reg: u8, imm: i32) -> Result<u32, Exception> {
        let rs1 = self.regs[(rs1_reg & 31) as usize];
        let d = Decoded {
            op,
            rd,
            rs1: rs1_reg,
            rs2: 0,
            len: 4,
            imm,
        };
        let illegal = Exception::new(ILLEGAL_INSTRUCTION, self.raw_csr_bits(d));
        let csr = (d.imm & 0xfff) as u32;
        let uimm = (d.imm >> 12) as u32 & 31;
        let (operand, writes) = match d.op {
            Op::Csrrw => (rs1, true),
            Op::Csrrwi => (uimm, true),
            Op::Csrrs | Op::Csrrc => (rs1, d.rs1 != 0),
            _ => (uimm, uimm != 0),
        };
        let counters = self.counters();
        let old = self.csr.read(csr, &counters).map_err(|_| illegal)?;
        if writes {
            let new = match d.op {
                Op::Csrrw | Op::Csrrwi => operand,
                Op::Csrrs | Op::Csrrsi => old | operand,
                _ => old & !operand,
            };
            self.csr.write(csr, new, &counters).map_err(|_| illegal)?;
            self.recheck |= self.timer_may_fire_in_batch();
        }
        Ok(old)
    }

    /// Re-encodes a CSR instruction for mtval (the decoded record does not keep raw bits).
    fn raw_csr_bits(&self, d: Decoded) -> u32 {
        let f3 = match d.op {
            Op::Csrrw => 1,
            Op::Csrrs => 2,
            Op::Csrrc => 3,
            Op::Csrrwi => 5,
            Op::Csrrsi => 6,
            _ => 7,
        };
        let src = if f3 >= 5 {
            (d.imm as u32 >> 12) & 31
        } else {
            d.rs1 as u32
        };
        ((d.imm as u32 & 0xfff) << 20) | (src << 15) | (f3 << 12) | ((d.rd as u32) << 7) | 0x73
    }

    /// `ecall`: traps to the program's handler when it installed one (the privileged spec's
    /// behaviour). Without one, the program ABI: a7=64 write(fd, buf, len), a7=93
    /// exit(status); any other call ends the run as an unhandled trap.
    fn ecall(&mut self) -> Result<(), Flow> {
        if !self.host_abi || self.has_handler() {
            return Err(Exception::new(ECALL_FROM_M, 0).into());
        }
        let (a0, a1, a2, a7) = (self.regs[10], self.regs[11], self.regs[12], self.regs[17]);
        match a7 {
            93 => Err(Flow::Exit(a0 as i32)),
            64 => {
                self.regs[10] = if a0 != 1 && a0 != 2 {
                    -9i32 as u32 // EBADF
                } else if !self.in_ram(a1, a2) {
                    -14i32 as u32 // EFAULT
                } else {
                    let off = (a1 - self.base) as usize;
                    let bytes = &self.ram[off..off + a2 as usize];
                    let out = if a0 == 1 {
                        &mut self.stdout
                    } else {
                        &mut self.stderr
                    };
                    let room = OUTPUT_CAP.saturating_sub(out.len()).min(bytes.len());
                    out.extend_from_slice(&bytes[..room]);
                    self.dropped_output += (bytes.len() - room) as u64;
                    a2
                };
                Ok(())
            }
            _ => Err(Flow::UnknownEcall),
        }
    }
}

/// Whether a conditional branch `op` is taken on operands `a` and `b`.
fn branch_taken(op: Op, a: u32, b: u32) -> bool {
    match op {
        Op::Beq => a == b,
        Op::Bne => a != b,
        Op::Blt => (a as i32) < (b as i32),
        Op::Bge => (a as i32) >= (b as i32),
        Op::Bltu => a < b,
        _ => a >= b,
    }
}

/// What the per-cycle front end reads: the machine's memory, and outside it the sections a
/// loader that writes every section leaves there (the last in name order wins), else 0.
struct FetchView<'a> {
    ram: &'a [u8],
    base: u32,
    other: &'a [Segment],
}

impl FetchMemory for FetchView<'_> {
    #[inline]
    fn word(&self, addr: u32) -> u32 {
        let off = addr.wrapping_sub(self.base) as usize;
        match self.ram.get(off..off.wrapping_add(4)) {
            Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
            _ => percycle::word(self, addr),
        }
    }

    fn byte(&self, addr: u32) -> u8 {
        let off = addr.wrapping_sub(self.base) as usize;
        if let Some(&b) = self.ram.get(off) {
            return b;
        }
        self.other
            .iter()
            .rev()
            .find_map(|s| {
                let i = addr.wrapping_sub(s.addr) as usize;
                s.data.get(i).copied()
            })
            .unwrap_or(0)
    }
}
