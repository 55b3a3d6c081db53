//! Cycle accounting for a classic 5-stage in-order pipeline (IF ID EX MEM WB).
//!
//! The model is analytic rather than stage-by-stage, which keeps it exact for this pipeline and
//! cheap enough to run beside the interpreter:
//!
//! * every retired instruction takes one cycle, and the pipeline takes 4 cycles to fill/drain;
//! * full forwarding, so the only data hazard is load-use: an instruction reading the register
//!   a load just before it writes waits 1 cycle;
//! * branches and jumps are resolved in EX with static not-taken prediction: a taken branch, and
//!   every jump (jal, jalr, mret), flushes the 2 younger instructions (IF, ID): 2 cycles;
//! * an exception is raised in EX: the faulting instruction and the 2 younger ones are flushed
//!   (3 cycles) and it does not retire; an interrupt is taken the same way on the instruction
//!   about to enter EX (3 cycles); an ecall served by the host ABI retires and flushes 2;
//! * each cache miss stalls the pipeline for the configured miss penalty (0 by default, as in
//!   Ripes, where cache settings never change run time).
//!
//! Wrong-path instructions are not fetched through the I-cache.

use crate::decode::{Decoded, Op};

/// Cycles and where they went. `cycles() == retired + 4 + stalls + flushes` (0 if nothing ran).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipelineStats {
    pub retired: u64,
    pub load_use_stalls: u64,
    pub branch_flushes: u64,
    pub jump_flushes: u64,
    pub trap_flushes: u64,
    pub interrupt_flushes: u64,
    pub icache_miss_stalls: u64,
    pub dcache_miss_stalls: u64,
}

impl PipelineStats {
    pub fn stall_cycles(&self) -> u64 {
        self.load_use_stalls + self.icache_miss_stalls + self.dcache_miss_stalls
    }
    pub fn flush_cycles(&self) -> u64 {
        self.branch_flushes + self.jump_flushes + self.trap_flushes + self.interrupt_flushes
    }
    /// Cycles so far, without the final drain (what the cycle CSR reads).
    pub fn elapsed(&self) -> u64 {
        self.retired + self.stall_cycles() + self.flush_cycles()
    }
    /// Total cycles of the run, including filling the pipeline.
    pub fn cycles(&self) -> u64 {
        let e = self.elapsed();
        if e == 0 {
            0
        } else {
            e + 4
        }
    }
    pub fn cpi(&self) -> f64 {
        if self.retired == 0 {
            0.0
        } else {
            self.cycles() as f64 / self.retired as f64
        }
    }
}

/// Cycles lost when a branch or jump redirects fetch (IF and ID flushed).
pub const BRANCH_PENALTY: u64 = 2;
/// Cycles lost when a trap is taken in EX (EX, ID and IF flushed).
pub const TRAP_PENALTY: u64 = 3;

/// The state the model needs between instructions.
#[derive(Clone, Debug, Default)]
pub struct Pipeline {
    pub miss_penalty: u64,
    /// Destination of the previous instruction if it was a load, else 0.
    load_rd: u8,
    pub stats: PipelineStats,
}

impl Pipeline {
    pub fn new(miss_penalty: u64) -> Pipeline {
        Pipeline {
            miss_penalty,
            ..Pipeline::default()
        }
    }

    /// Accounts for one retired instruction. `redirected`: fetch did not continue at the next
    /// sequential instruction. `imiss`/`dmiss`: cache misses caused by this instruction.
    #[inline]
    pub fn retire(&mut self, d: Decoded, redirected: bool, imiss: u32, dmiss: u32) {
        let s = &mut self.stats;
        s.retired += 1;
        if self.load_rd != 0 && (d.rs1 == self.load_rd || d.rs2 == self.load_rd) {
            s.load_use_stalls += 1;
        }
        self.load_rd = if d.op.is_load() { d.rd } else { 0 };
        match d.op {
            Op::Jal | Op::Jalr | Op::Mret => s.jump_flushes += BRANCH_PENALTY,
            Op::Ecall => s.trap_flushes += BRANCH_PENALTY,
            op if redirected && op.is_branch() => s.branch_flushes += BRANCH_PENALTY,
            _ => {}
        }
        s.icache_miss_stalls += imiss as u64 * self.miss_penalty;
        s.dcache_miss_stalls += dmiss as u64 * self.miss_penalty;
    }

    /// Accounts for an instruction that raised an exception (it does not retire).
    pub fn exception(&mut self, imiss: u32, dmiss: u32) {
        self.stats.trap_flushes += TRAP_PENALTY;
        self.stats.icache_miss_stalls += imiss as u64 * self.miss_penalty;
        self.stats.dcache_miss_stalls += dmiss as u64 * self.miss_penalty;
        self.load_rd = 0;
    }

    /// Accounts for a taken interrupt.
    pub fn interrupt(&mut self) {
        self.stats.interrupt_flushes += TRAP_PENALTY;
        self.load_rd = 0;
    }
}
