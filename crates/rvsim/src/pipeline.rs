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
    /// Cycles an `ecall` waited in EX for older register writes (per-cycle counting only:
    /// Ripes' rule, see [`crate::percycle`]).
    pub ecall_stalls: u64,
}

impl PipelineStats {
    pub fn stall_cycles(&self) -> u64 {
        self.load_use_stalls + self.icache_miss_stalls + self.dcache_miss_stalls + self.ecall_stalls
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
    /// Branches and jumps that redirected fetch in EX (each flushed 2 cycles): with static
    /// not-taken, every taken branch and every jump.
    pub fn mispredictions(&self) -> u64 {
        (self.branch_flushes + self.jump_flushes) / BRANCH_PENALTY
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
    /// The previous instruction's destination if it was a load, as a register mask
    /// ([`load_mask`]; 0 if it was not a load or wrote x0).
    load_mask: u32,
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
        s.load_use_stalls += (self.load_mask & reads(d.rs1, d.rs2) != 0) as u64;
        self.load_mask = load_mask(d);
        match d.op {
            Op::Jal | Op::Jalr | Op::Mret => s.jump_flushes += BRANCH_PENALTY,
            Op::Ecall => s.trap_flushes += BRANCH_PENALTY,
            op if redirected && op.is_branch() => s.branch_flushes += BRANCH_PENALTY,
            _ => {}
        }
        s.icache_miss_stalls += imiss as u64 * self.miss_penalty;
        s.dcache_miss_stalls += dmiss as u64 * self.miss_penalty;
    }

    /// As [`Pipeline::retire`], with a branch predictor: a branch or jump flushes only when
    /// `mispredicted`.
    pub fn retire_predicted(&mut self, d: Decoded, mispredicted: bool, imiss: u32, dmiss: u32) {
        let s = &mut self.stats;
        s.retired += 1;
        s.load_use_stalls += (self.load_mask & reads(d.rs1, d.rs2) != 0) as u64;
        self.load_mask = load_mask(d);
        match d.op {
            Op::Jal | Op::Jalr | Op::Mret if mispredicted => s.jump_flushes += BRANCH_PENALTY,
            Op::Ecall => s.trap_flushes += BRANCH_PENALTY,
            op if mispredicted && op.is_branch() => s.branch_flushes += BRANCH_PENALTY,
            _ => {}
        }
        s.icache_miss_stalls += imiss as u64 * self.miss_penalty;
        s.dcache_miss_stalls += dmiss as u64 * self.miss_penalty;
    }

    /// Accounts for a whole block of instructions retired in order, as [`Pipeline::retire`]
    /// on each would, except for what [`Pipeline::retire_blocks`] adds for a run of blocks at
    /// once (the instructions and the miss stalls): the stalls inside the block were counted
    /// when it was built, so only the hazard across its first instruction and the flush at
    /// its end are decided here. `redirected`: fetch did not continue after the block's last
    /// instruction.
    #[inline]
    pub fn retire_block(&mut self, t: &BlockTiming, redirected: bool) {
        let s = &mut self.stats;
        s.load_use_stalls += t.inner_stalls as u64 + (self.load_mask & t.first_reads != 0) as u64;
        self.load_mask = t.last_load;
        s.jump_flushes += t.inner_jump_flushes as u64;
        match t.end {
            BlockEnd::Jump => s.jump_flushes += BRANCH_PENALTY,
            BlockEnd::Branch if redirected => s.branch_flushes += BRANCH_PENALTY,
            _ => {}
        }
    }

    /// The rest of [`Pipeline::retire_block`] for a run of blocks: `instructions` retired in
    /// them, with `imiss` and `dmiss` cache misses (the sums over the blocks, so the block
    /// loop adds two numbers per block, not a product per miss kind).
    #[inline]
    pub fn retire_blocks(&mut self, instructions: u64, imiss: u64, dmiss: u64) {
        let s = &mut self.stats;
        s.retired += instructions;
        s.icache_miss_stalls += imiss * self.miss_penalty;
        s.dcache_miss_stalls += dmiss * self.miss_penalty;
    }

    /// Accounts for an instruction that raised an exception (it does not retire).
    pub fn exception(&mut self, imiss: u32, dmiss: u32) {
        self.stats.trap_flushes += TRAP_PENALTY;
        self.stats.icache_miss_stalls += imiss as u64 * self.miss_penalty;
        self.stats.dcache_miss_stalls += dmiss as u64 * self.miss_penalty;
        self.load_mask = 0;
    }

    /// Accounts for a taken interrupt.
    pub fn interrupt(&mut self) {
        self.stats.interrupt_flushes += TRAP_PENALTY;
        self.load_mask = 0;
    }
}

/// The registers an instruction reading `rs1` and `rs2` reads, as a mask (bit r for xr). An
/// instruction waits for a load just before it when this meets that load's [`load_mask`].
#[inline]
fn reads(rs1: u8, rs2: u8) -> u32 {
    (1u32 << (rs1 & 31)) | (1u32 << (rs2 & 31))
}

/// The register a load-use hazard can wait on after `d`, as a mask: its destination if it is a
/// load, none if not or if that is x0 (never a hazard: bit 0 is never set, so a read of x0
/// never meets it).
#[inline]
fn load_mask(d: Decoded) -> u32 {
    if d.op.is_load() {
        (1u32 << (d.rd & 31)) & !1
    } else {
        0
    }
}

/// How a block of straight-line instructions ends, for its flush.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlockEnd {
    /// Falls through (or is cut short): no flush.
    #[default]
    Sequential,
    /// jal or jalr: always flushes.
    Jump,
    /// A conditional branch: flushes when taken.
    Branch,
}

/// What [`Pipeline::retire_block`] needs of a block, computed once when it is built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockTiming {
    /// The registers the first instruction reads, as a mask (the hazard across the block
    /// boundary is one test of it against the load before).
    pub first_reads: u32,
    /// The last instruction's [`load_mask`].
    pub last_load: u32,
    /// Load-use stalls between the block's own instructions.
    pub inner_stalls: u32,
    pub end: BlockEnd,
    /// Flush cycles of the jumps inside the block (a superblock goes on through a jal at
    /// its target): every jump but a last one.
    pub inner_jump_flushes: u32,
}

impl BlockTiming {
    /// The timing of `block`, instructions in program order, by the same rules as
    /// [`Pipeline::retire`]. `block` must not contain mret or ecall (they end blocks).
    pub fn of(block: impl IntoIterator<Item = Decoded>) -> BlockTiming {
        let mut t = BlockTiming::default();
        let mut load = 0;
        let mut jumps = 0;
        for (i, d) in block.into_iter().enumerate() {
            if i == 0 {
                t.first_reads = reads(d.rs1, d.rs2);
            } else {
                t.inner_stalls += (load & reads(d.rs1, d.rs2) != 0) as u32;
            }
            load = load_mask(d);
            debug_assert!(!matches!(d.op, Op::Mret | Op::Ecall));
            t.end = match d.op {
                Op::Jal | Op::Jalr => {
                    jumps += 1;
                    BlockEnd::Jump
                }
                op if op.is_branch() => BlockEnd::Branch,
                _ => BlockEnd::Sequential,
            };
        }
        t.last_load = load;
        let inner_jumps = jumps - (t.end == BlockEnd::Jump) as u32;
        t.inner_jump_flushes = inner_jumps * BRANCH_PENALTY as u32;
        t
    }
}
