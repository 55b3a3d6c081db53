//! The block engine: the fast way to run the machine, with counts identical to the
//! per-instruction engine (`Machine::run_with`, kept as the reference).
//!
//! Code is decoded once into *blocks* of pre-decoded ops. A block runs on through conditional
//! branches that are not taken and through direct jumps (`jal`, `j`: it goes on at their
//! target, a *superblock*; with an I-cache only where its lines stay consecutive, see
//! `build::follows_in_fetch_order`), and ends at an indirect jump, before an instruction the block engine
//! leaves to the reference engine (CSR access, `ecall`, `ebreak`, `mret`, `fence.i`, AMO,
//! illegal, a jump to a misaligned target), at the end of a 4 KiB page, or at
//! [`MAX_BLOCK_LEN`] instructions. A jump the block goes on through is an op that writes its
//! link value (known at decode) or does nothing; its flush is in the timing of the exits
//! after it, and a block is registered with every page its instructions are in, so a change
//! to any of them kills it. Each branch is one of the block's *exits* (taken, the run
//! leaves the block there), and so is its last instruction. Decoding resolves what only
//! depends on the instruction's address (AUIPC values, jump and branch targets, link values)
//! and specialises common forms (load immediate, register move, writes to x0 as no-ops), so
//! an op does one thing and no op writes x0.
//!
//! Everything the models need per instruction is summed per exit when a block is built:
//! instruction and compressed counts, the fetches up to that exit (straddling fetches count
//! two) and the I-cache lines they touch in order (a fetch from the line of the fetch before
//! it adds none: it is a hit that changes no state), and the pipeline's load-use stalls among
//! them ([`BlockTiming`]). A block that leaves by an exit adds that exit's sums at once; only
//! the D-cache is accessed op by op. When an op cannot finish on the fast path (an access outside memory or
//! to the timer device, a store into a 128-byte chunk of memory that ever held a decoded
//! instruction or to `tohost`, a jump that would trap), the block stops *before* it: the ops before it are accounted one by one through the
//! reference's own model calls, and the reference engine executes that instruction. Traps,
//! interrupts, CSR reads of the counters and self-modifying code therefore see exactly the
//! state the reference would show.
//!
//! Blocks are found through a table of block ids parallel to the reference's predecode
//! tables (one slot per halfword of each page that runs code), and chained: each exit keeps
//! the id of the block that followed it on its fall-through and on its taken path, and a
//! small direct-mapped table remembers the targets of indirect jumps (returns, calls through
//! pointers). Blocks then run one after another in a loop that touches nothing of the machine
//! but registers, memory and the models ([`exec`]), until a chain is missing or the batch's
//! steps run out. A store that changes the bytes of a predecoded instruction marks every block
//! with an instruction in that instruction's 128-byte chunk dead (a store of the bytes already
//! there changes nothing; `fence.i` forgets nothing), which every chain and table entry into
//! them sees at the next use. A chunk whose live code changed [`VOLATILE_AFTER`] times is left
//! to the reference engine (blocks stop before it), which decodes only the instruction that
//! changed instead of building blocks again after every store. When the arena grows past
//! [`MAX_BLOCKS`] blocks or [`MAX_OPS`] ops it is emptied and refilled on demand (and every
//! chunk is given to blocks again).

mod build;
mod exec;

use crate::decode::Decoded;
use crate::pipeline::BlockTiming;

/// No block: an empty table slot or chain. Block 0 is a dead block, so following it needs no
/// test of its own.
pub(super) const NO_BLOCK: u32 = 0;
/// `Block::len` of a block whose code changed: rebuilt at its next use.
pub(super) const LEN_DEAD: u32 = u32::MAX;
/// `Block::len` of an entry for an instruction the reference engine executes.
pub(super) const LEN_REFERENCE: u32 = u32::MAX - 1;
/// Most steps the chained loop is given at once: below both special lengths, so one
/// comparison of a block's length with the steps left also catches them.
pub(super) const MAX_LEFT: u32 = u32::MAX - 2;
/// Entries of the indirect-jump table (a power of two).
const JUMPS: usize = 4096;
/// No exit (the run entered a block from elsewhere than a chain).
pub(super) const NO_EXIT: u32 = u32::MAX;
/// Longest block, in instructions.
pub(super) const MAX_BLOCK_LEN: usize = 64;
/// Arena limits; beyond them every block is dropped (self-modifying code would otherwise
/// grow the arena without bound).
const MAX_BLOCKS: usize = 1 << 16;
const MAX_OPS: usize = 1 << 20;
/// Times a chunk's live code may change before the block engine leaves that chunk to the
/// reference engine (until the arena is next emptied): code that rewrites itself all the
/// time would otherwise be decoded into blocks again after every store, at a few MIPS,
/// where the reference engine, which decodes only the instruction that changed, keeps its
/// own speed.
const VOLATILE_AFTER: u32 = 16;

/// What an op does. The last op of a block is always a terminator (a jump or `End`), so the
/// op loop needs no bounds test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
    /// An instruction without effect on registers or memory: fence, wfi, an ALU op on x0.
    Nop,
    /// `rd = imm` (lui, auipc with its pc added, addi/ori from x0).
    Li,
    /// `rd = rs1` (addi with 0, add with x0).
    Mv,
    Addi,
    Slti,
    Sltiu,
    Xori,
    Ori,
    Andi,
    Slli,
    Srli,
    Srai,
    Add,
    Sub,
    Sll,
    Slt,
    Sltu,
    Xor,
    Srl,
    Sra,
    Or,
    And,
    Mul,
    Mulh,
    Mulhsu,
    Mulhu,
    Div,
    Divu,
    Rem,
    Remu,
    Lb,
    Lh,
    Lw,
    Lbu,
    Lhu,
    /// A load into x0: the access (and its D-cache count) without a result; size in `rd`.
    LoadX0,
    Sb,
    Sh,
    Sw,
    // Exits. Branch targets are in `imm`, and the index of the branch's exit among its
    // block's exits in `rd` (a branch that is the block's last instruction is followed by an
    // `End`, which leaves by the same exit: so a branch not taken always goes on to the next
    // op, and a taken one finds its exit without a test); a jump's link value is the block's
    // fall-through address. Jumps and `End` end the block.
    Beq,
    Bne,
    Blt,
    Bge,
    Bltu,
    Bgeu,
    /// jal with a link register; target in `imm`.
    Jal,
    /// jal x0 (j); target in `imm`.
    J,
    /// jalr with a link register.
    Jalr,
    /// jalr x0 (jr, ret).
    Jr,
    /// Not an instruction: the block continues at its fall-through address.
    End,
    // Fused pairs (macro-op fusion): this op's own instruction, then the conditional branch
    // right after it in the block, run as one op (one dispatch instead of two). The branch
    // keeps its own op in the next slot, where the fused op reads it: op indices stay
    // instruction indices, so a cut, the exits and the accounting of a block stopped early
    // are unchanged. Only the first half can stop the block (a load), before it does
    // anything. A jump to the branch itself enters another block, which starts there.
    LiBeq,
    LiBne,
    LiBltu,
    LiBgeu,
    MvBeq,
    MvBne,
    AddBeq,
    AddBne,
    AddiBeq,
    AddiBne,
    AndiBeq,
    AndiBne,
    SrliBeq,
    SrliBne,
    LwBeq,
    LwBne,
    LhBeq,
    LhBne,
    LbuBeq,
    LbuBne,
    XorBne,
    AddBltu,
    // Fused pairs of two ops that are not branches: this op's own instruction, then the one
    // right after it in the block, as one op. As with the pairs above, the second keeps its
    // op in the next slot (read there by this one), so op indices stay instruction indices;
    // either half can stop the block before it does anything (a load or a store), the
    // second after the first is done, as the reference engine would have left it.
    AddiAdd,
    AndiAndi,
    AndiLi,
    SrliAndi,
    MulAdd,
    AddMul,
    MvLw,
    LwSw,
    LhAddi,
    LhLh,
    SwMv,
    AndiSub,
    SrliAnd,
    SbAdd,
}

/// One pre-decoded op: 8 bytes. The second source register first: the op loop reads it
/// where it is used, through the pointer to the op (at its offset 0 the compiler keeps no
/// second pointer to the field).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(super) struct BlockOp {
    pub rs2: u8,
    pub kind: Kind,
    pub rd: u8,
    pub rs1: u8,
    pub imm: u32,
}

/// A block: where its ops are and its exits. 32 bytes (aligned so): finding a block by its id
/// is a shift, not a multiplication.
#[derive(Clone, Debug)]
#[repr(align(32))]
pub(super) struct Block {
    /// Instructions, or [`LEN_DEAD`], or [`LEN_REFERENCE`].
    pub len: u32,
    /// Index of the first op in [`BlockCache::ops`] (and of its source in `sources`).
    pub ops: u32,
    /// Its exits: `exits[exits..=last_exit]`, the branches inside it in order, then its end.
    pub exits: u32,
    pub last_exit: u32,
    /// Its first I-cache line in `lines`.
    pub lines: u32,
    /// The address of its first instruction.
    pub pc: u32,
    /// The address after its last instruction (its last exit's `fall`, here so that entering
    /// a block reads one record).
    pub fall: u32,
}

/// One way out of a block, and the counts of the instructions from the block's start to it.
#[derive(Clone, Debug)]
pub(super) struct Exit {
    /// Instructions up to and including the exit's.
    pub len: u32,
    pub compressed: u32,
    /// The address after the exit's instruction.
    pub fall: u32,
    /// Successor blocks: `[after falling through, after taking the static target]`.
    pub chain: [u32; 2],
    /// The I-cache lines of the fetches up to the exit, in order, consecutive fetches from
    /// one line given once: `lines[block.lines..lines_end]`.
    pub lines_end: u32,
    /// Fetches up to the exit: instructions and straddling fetches.
    pub fetches: u32,
    /// 32-bit fetches that touch two lines.
    pub straddles: u32,
    pub timing: BlockTiming,
}

/// Every block built so far, and the tables that find them.
pub(super) struct BlockCache {
    blocks: Vec<Block>,
    exits: Vec<Exit>,
    ops: Vec<BlockOp>,
    /// Per op: the address and decoded record of its instruction (`End` has its block's
    /// fall-through address and no record), for accounting a block cut short op by op.
    sources: Vec<(u32, Decoded)>,
    lines: Vec<u32>,
    /// Per halfword slot, parallel to the predecode tables: the block starting there.
    slots: Vec<u32>,
    /// Per chunk of a predecode table's page (`machine::chunk_of`): the blocks with an
    /// instruction in it, built since its code last changed.
    chunk_blocks: Vec<Vec<u32>>,
    /// Per chunk: how many times a change to its code killed a live block.
    chunk_changes: Vec<u32>,
    /// Indirect-jump targets: the block for pc at `(pc >> 1) % JUMPS`, if its pc matches.
    jumps: Vec<u32>,
    /// How many times the arena was emptied (ids from before are meaningless).
    flushes: u64,
    /// Blocks built, live blocks killed, blocks cut short, and instructions the reference
    /// engine ran for the block engine ([`crate::machine::EngineCounts`]).
    pub(super) built: u64,
    pub(super) killed: u64,
    pub(super) cuts: u64,
    pub(super) reference_steps: u64,
}

impl Default for BlockCache {
    fn default() -> Self {
        BlockCache {
            blocks: vec![Block::dead()],
            exits: Vec::new(),
            ops: Vec::new(),
            sources: Vec::new(),
            lines: Vec::new(),
            slots: Vec::new(),
            chunk_blocks: Vec::new(),
            chunk_changes: Vec::new(),
            jumps: Vec::new(),
            flushes: 0,
            built: 0,
            killed: 0,
            cuts: 0,
            reference_steps: 0,
        }
    }
}

impl Block {
    /// Block 0, [`NO_BLOCK`]: never runs.
    fn dead() -> Block {
        Block {
            len: LEN_DEAD,
            ops: 0,
            exits: 0,
            last_exit: 0,
            lines: 0,
            pc: 1,
            fall: 1,
        }
    }
}

impl BlockCache {
    /// Code in chunk `chunk` changed: every block with an instruction in it is dead from now
    /// on. (A block of several chunks stays listed, dead, in the others' lists until they
    /// change or the arena is emptied.)
    pub(super) fn chunk_changed(&mut self, chunk: usize) {
        let Some(ids) = self.chunk_blocks.get_mut(chunk) else {
            return;
        };
        let mut killed = 0;
        for &id in ids.iter() {
            let b = &mut self.blocks[id as usize];
            killed += (b.len != LEN_DEAD) as u64;
            b.len = LEN_DEAD;
        }
        ids.clear();
        if killed > 0 {
            self.killed += killed;
            self.chunk_changes[chunk] += 1;
        }
    }

    /// Whether chunk `chunk` is left to the reference engine (see [`VOLATILE_AFTER`]).
    #[inline]
    pub(super) fn volatile(&self, chunk: usize) -> bool {
        self.chunk_changes
            .get(chunk)
            .is_some_and(|&n| n >= VOLATILE_AFTER)
    }

    /// Chunks left to the reference engine.
    pub(super) fn volatile_chunks(&self) -> u64 {
        self.chunk_changes
            .iter()
            .filter(|&&n| n >= VOLATILE_AFTER)
            .count() as u64
    }

    /// Bytes of blocks built and of their tables (none before the first block).
    pub(super) fn allocated_bytes(&self) -> usize {
        use std::mem::size_of;
        (self.blocks.len() - 1) * size_of::<Block>()
            + self.exits.len() * size_of::<Exit>()
            + self.ops.len() * size_of::<BlockOp>()
            + self.sources.len() * size_of::<(u32, Decoded)>()
            + self.lines.len() * size_of::<u32>()
            + self.slots.len() * size_of::<u32>()
            + self.jumps.len() * size_of::<u32>()
            + self.chunk_changes.len() * size_of::<u32>()
            + self
                .chunk_blocks
                .iter()
                .map(|t| t.len() * size_of::<u32>())
                .sum::<usize>()
    }
}
