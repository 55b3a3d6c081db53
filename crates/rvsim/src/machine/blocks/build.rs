//! Finding and building blocks: decoding a run of straight-line instructions into ops, and
//! summing what the models need of them.

use super::{
    Block, BlockCache, BlockOp, Exit, Kind, JUMPS, LEN_DEAD, LEN_REFERENCE, MAX_BLOCKS,
    MAX_BLOCK_LEN, MAX_OPS, NO_BLOCK, NO_EXIT,
};
use crate::decode::{Decoded, Op};
use crate::machine::{chunk_of, Machine, CHUNKS_PER_PAGE, NO_PAGE, PAGE_SHIFT, SLOTS_PER_PAGE};
use crate::pipeline::BlockTiming;

impl BlockCache {
    /// Drops every block (the tables stay allocated).
    fn clear(&mut self) {
        self.blocks.truncate(1);
        self.exits.clear();
        self.ops.clear();
        self.sources.clear();
        self.lines.clear();
        self.slots.fill(NO_BLOCK);
        self.jumps.fill(NO_BLOCK);
        for ids in &mut self.chunk_blocks {
            ids.clear();
        }
        self.chunk_changes.fill(0);
        self.flushes += 1;
    }

    /// Sizes the per-slot and per-table vectors to the predecode tables (`slots` halfword
    /// slots).
    fn cover(&mut self, slots: usize) {
        if self.slots.len() < slots {
            self.slots.resize(slots, NO_BLOCK);
            let chunks = slots / SLOTS_PER_PAGE * CHUNKS_PER_PAGE;
            self.chunk_blocks.resize_with(chunks, Vec::new);
            self.chunk_changes.resize(chunks, 0);
        }
        if self.jumps.is_empty() {
            self.jumps = vec![NO_BLOCK; JUMPS];
        }
    }

    /// The block remembered for an indirect jump to `pc`, or [`NO_BLOCK`].
    #[inline(always)]
    pub(super) fn jump_target(&self, pc: u32) -> u32 {
        match self.jumps.get((pc >> 1) as usize & (JUMPS - 1)) {
            Some(&id) => {
                debug_assert!((id as usize) < self.blocks.len());
                // SAFETY: the table holds ids of blocks in the arena (`follow` stores a block
                // it just found, `clear` empties the table with the arena).
                let b = unsafe { self.blocks.get_unchecked(id as usize) };
                if b.pc == pc {
                    id
                } else {
                    NO_BLOCK
                }
            }
            None => NO_BLOCK,
        }
    }
}

impl Machine {
    /// The live block starting at `pc`, built if need be; [`NO_BLOCK`] when `pc` is outside
    /// memory or its instruction cannot be fetched (the reference engine then raises the
    /// fault, or ends the run at address 0).
    #[inline(always)]
    pub(super) fn block_at(&mut self, pc: u32) -> u32 {
        let slot = ((pc >> 1) as usize) & (SLOTS_PER_PAGE - 1);
        if pc & !((1 << PAGE_SHIFT) - 1) != self.fetch_page {
            let off = pc.wrapping_sub(self.base) as usize;
            match self.page_table.get(off >> PAGE_SHIFT) {
                Some(&p) if p != NO_PAGE => {
                    self.fetch_page = pc & !((1 << PAGE_SHIFT) - 1);
                    self.fetch_slot0 = p as usize * SLOTS_PER_PAGE;
                }
                _ => return self.build_block(pc),
            }
        }
        match self.blocks.slots.get(self.fetch_slot0 + slot) {
            Some(&id) if self.blocks.blocks[id as usize].len != LEN_DEAD => id,
            _ => self.build_block(pc),
        }
    }

    /// The block at `pc`, where exit `from` led by `way` (0: falling through, 1: its static
    /// target, 2: an indirect jump); remembered in `from`'s chain or the indirect-jump table.
    pub(super) fn follow(&mut self, pc: u32, from: u32, way: usize) -> u32 {
        let flushes = self.blocks.flushes;
        let id = self.block_at(pc);
        // Building may have emptied the arena: then `from` is gone.
        if id != NO_BLOCK && from != NO_EXIT && self.blocks.flushes == flushes {
            if way < 2 {
                self.blocks.exits[from as usize].chain[way] = id;
            } else {
                self.blocks.jumps[(pc >> 1) as usize & (JUMPS - 1)] = id;
            }
        }
        id
    }

    /// Decodes the block starting at `pc` and enters it in the tables.
    #[cold]
    #[inline(never)]
    fn build_block(&mut self, pc: u32) -> u32 {
        if pc & 1 != 0 || !self.in_ram(pc, 2) {
            return NO_BLOCK;
        }
        if self.blocks.blocks.len() >= MAX_BLOCKS
            || self.blocks.ops.len() + MAX_BLOCK_LEN + 1 > MAX_OPS
        {
            self.blocks.clear();
        }
        let line_shift = self.icache.as_ref().map(|c| c.line_shift());
        let mut page_end = page_end_of(pc);
        let mut code = [(0u32, Decoded::UNDECODED); MAX_BLOCK_LEN];
        let mut n = 0;
        let mut at = pc;
        while n < MAX_BLOCK_LEN {
            let Ok(d) = self.decode_at(at) else {
                if n == 0 {
                    return NO_BLOCK;
                }
                break;
            };
            if at as u64 + d.len as u64 > page_end
                || !self.fits_in_block(d, at)
                || self.in_volatile_chunk(at, d.len)
            {
                break;
            }
            code[n] = (at, d);
            n += 1;
            let next = at.wrapping_add(d.len as u32);
            if d.op == Op::Jal {
                // A superblock: the block goes on at the jump's target (its first instruction
                // there is checked as any other; if it cannot join, the jump ends the block).
                let target = at.wrapping_add(d.imm as u32);
                if !follows_in_fetch_order(line_shift, next, target) {
                    break;
                }
                at = target;
                page_end = page_end_of(target);
                continue;
            }
            at = next;
            if d.op == Op::Jalr {
                break;
            }
        }
        let code = &code[..n];
        self.blocks.built += !code.is_empty() as u64;
        // The address after the last instruction (a jump's link when it ends the block).
        let fall = code
            .last()
            .map_or(pc, |&(a, d)| a.wrapping_add(d.len as u32));
        self.blocks.cover(self.decoded.len());
        let id = self.blocks.blocks.len() as u32;
        let block = self.new_block(code, pc, fall);
        self.blocks.blocks.push(block);
        // Every chunk the block's instructions' bytes are in (each one decoded, so each page
        // has a predecode table; an instruction does not cross a page): a change to any of
        // them kills the block.
        let mut chunks = [usize::MAX; 2 * MAX_BLOCK_LEN];
        let mut spanned = 0;
        for &(a, d) in code.iter() {
            let off = (a - self.base) as usize;
            let table = self.page_table[off >> PAGE_SHIFT];
            for byte in [off, off + d.len as usize - 1] {
                let chunk = chunk_of(table, byte);
                if !chunks[..spanned].contains(&chunk) {
                    chunks[spanned] = chunk;
                    spanned += 1;
                    self.blocks.chunk_blocks[chunk].push(id);
                }
            }
        }
        // The first instruction decoded, so its page has a predecode table.
        let table = self.page_table[((pc - self.base) >> PAGE_SHIFT) as usize] as usize;
        let slot = table * SLOTS_PER_PAGE + ((pc >> 1) as usize & (SLOTS_PER_PAGE - 1));
        self.blocks.slots[slot] = id;
        id
    }

    /// Appends the ops, sources, exits and I-cache lines of `code` (the instructions from `pc`
    /// up to `fall`) and returns its block (an entry for the reference engine if `code` is
    /// empty).
    fn new_block(&mut self, code: &[(u32, Decoded)], pc: u32, fall: u32) -> Block {
        let line_shift = self.icache.as_ref().map(|c| c.line_shift());
        let bc = &mut self.blocks;
        let block = Block {
            len: if code.is_empty() {
                LEN_REFERENCE
            } else {
                code.len() as u32
            },
            ops: bc.ops.len() as u32,
            exits: bc.exits.len() as u32,
            last_exit: bc.exits.len() as u32,
            lines: bc.lines.len() as u32,
            pc,
            fall: if code.is_empty() { pc } else { fall },
        };
        // Each exit's lines are a prefix of the block's (a read leaves its line the cache's
        // last, so a repeat needs no entry, whichever exit follows).
        let first_line = block.lines as usize;
        let mut compressed = 0;
        let mut straddles = 0;
        for (i, &(at, d)) in code.iter().enumerate() {
            let last = i + 1 == code.len();
            let mut op = if last {
                op_for(d, at)
            } else {
                inner_op_for(d, at)
            };
            compressed += (d.len == 2) as u32;
            if let Some(shift) = line_shift {
                let first = at >> shift;
                let end = at.wrapping_add(d.len as u32 - 1) >> shift;
                add_fetch(&mut bc.lines, first_line, first);
                if end != first {
                    straddles += 1;
                    add_fetch(&mut bc.lines, first_line, end);
                }
            }
            let is_exit = last || is_branch(op.kind);
            if is_branch(op.kind) {
                op.rd = (bc.exits.len() as u32 - block.exits) as u8;
            }
            if i > 0 {
                // The op before is this block's (`i > 0`): fuse the pair if it is one.
                if let Some(prev) = bc.ops.last_mut() {
                    prev.kind = fused(prev.kind, op.kind).unwrap_or(prev.kind);
                }
            }
            bc.ops.push(op);
            bc.sources.push((at, d));
            if is_exit {
                let next = at.wrapping_add(d.len as u32);
                bc.exits.push(Exit {
                    len: i as u32 + 1,
                    compressed,
                    fall: next,
                    chain: [NO_BLOCK; 2],
                    lines_end: bc.lines.len() as u32,
                    fetches: i as u32 + 1 + straddles,
                    straddles,
                    timing: BlockTiming::of(code[..=i].iter().map(|&(_, d)| d)),
                });
            }
        }
        // After the last instruction unless it is a jump: also after a branch, whose exit it
        // shares (see `Kind::Beq`).
        if code
            .last()
            .is_none_or(|&(_, d)| d.op != Op::Jal && d.op != Op::Jalr)
        {
            bc.ops.push(BlockOp {
                kind: Kind::End,
                rd: 0,
                rs1: 0,
                rs2: 0,
                imm: 0,
            });
            bc.sources.push((fall, Decoded::UNDECODED));
        }
        Block {
            last_exit: bc.exits.len().saturating_sub(1).max(block.exits as usize) as u32,
            ..block
        }
    }

    /// Whether the `len`-byte instruction at `pc` (decoded, so its page has a predecode
    /// table) has a byte in a chunk left to the reference engine.
    fn in_volatile_chunk(&self, pc: u32, len: u8) -> bool {
        let off = (pc - self.base) as usize;
        let table = self.page_table[off >> PAGE_SHIFT];
        self.blocks.volatile(chunk_of(table, off))
            || self
                .blocks
                .volatile(chunk_of(table, off + len as usize - 1))
    }

    /// Whether the block engine may run `d` (at `pc`) itself: everything but the
    /// instructions that read or change machine state beyond registers and memory, and jumps
    /// whose static target would trap.
    fn fits_in_block(&self, d: Decoded, pc: u32) -> bool {
        match d.op {
            Op::Undecoded
            | Op::Illegal
            | Op::FenceI
            | Op::Ecall
            | Op::Ebreak
            | Op::Mret
            | Op::Csrrw
            | Op::Csrrs
            | Op::Csrrc
            | Op::Csrrwi
            | Op::Csrrsi
            | Op::Csrrci => false,
            op if op.is_atomic() => false,
            op if op == Op::Jal || op.is_branch() => {
                pc.wrapping_add(d.imm as u32) & self.align_mask == 0
            }
            _ => true,
        }
    }
}

/// The end of the 4 KiB page holding `pc` (an instruction of a block may not cross it).
fn page_end_of(pc: u32) -> u64 {
    (pc as u64 | ((1 << PAGE_SHIFT) - 1)) + 1
}

/// Whether a block may go on at a jump's `target` after fetching up to `next`: always
/// without an I-cache; with one, when the block's I-cache lines stay consecutive and
/// increasing (the target in the line of the jump's last byte or the line after it), which
/// [`crate::cache::Cache::fetch_lines`] requires of a list of lines.
fn follows_in_fetch_order(line_shift: Option<u32>, next: u32, target: u32) -> bool {
    match line_shift {
        None => true,
        Some(shift) => {
            let last = next.wrapping_sub(1) >> shift;
            let to = target >> shift;
            to == last || to == last.wrapping_add(1)
        }
    }
}

/// The op of instruction `d` at `pc` when it is not its block's last: a jal there is one the
/// block went on through (a superblock), so it only writes its link value, known at decode
/// (its flush is in the exits' [`BlockTiming`]).
fn inner_op_for(d: Decoded, pc: u32) -> BlockOp {
    if d.op != Op::Jal {
        return op_for(d, pc);
    }
    BlockOp {
        kind: if d.rd == 0 { Kind::Nop } else { Kind::Li },
        rd: d.rd & 31,
        rs1: 0,
        rs2: 0,
        imm: pc.wrapping_add(d.len as u32),
    }
}

/// Adds a fetch from `line` to the lines of the block whose lines start at `first`: a new
/// entry unless the fetch before it in the block was from the same line.
fn add_fetch(lines: &mut Vec<u32>, first: usize, line: u32) {
    if lines.len() == first || lines.last() != Some(&line) {
        lines.push(line);
    }
}

fn is_branch(k: Kind) -> bool {
    matches!(
        k,
        Kind::Beq | Kind::Bne | Kind::Blt | Kind::Bge | Kind::Bltu | Kind::Bgeu
    )
}

/// The fused op of an op of kind `first` followed by one of kind `second` (see
/// [`Kind::LiBeq`] and [`Kind::AddiAdd`]), if that pair has one: the pairs most frequent in
/// CoreMark, where about a sixth of the ops are a branch after one of these, and the most
/// frequent pairs of other ops (each 1.7-2.8% of the ops); then the built-in loop's most
/// frequent pairs (its CRC's andi+neg, srli+and and xor+bne, 5.8% of its ops each, and its
/// sieve's sb+add and add+bltu, 4.9% each), which CoreMark's profile does not have. An op already fused with the one
/// before it stays its own kind when it is reached inside that pair.
fn fused(first: Kind, second: Kind) -> Option<Kind> {
    use Kind::*;
    Some(match (first, second) {
        (Li, Beq) => LiBeq,
        (Li, Bne) => LiBne,
        (Li, Bltu) => LiBltu,
        (Li, Bgeu) => LiBgeu,
        (Mv, Beq) => MvBeq,
        (Mv, Bne) => MvBne,
        (Add, Beq) => AddBeq,
        (Add, Bne) => AddBne,
        (Addi, Beq) => AddiBeq,
        (Addi, Bne) => AddiBne,
        (Andi, Beq) => AndiBeq,
        (Andi, Bne) => AndiBne,
        (Srli, Beq) => SrliBeq,
        (Srli, Bne) => SrliBne,
        (Lw, Beq) => LwBeq,
        (Lw, Bne) => LwBne,
        (Lh, Beq) => LhBeq,
        (Lh, Bne) => LhBne,
        (Lbu, Beq) => LbuBeq,
        (Lbu, Bne) => LbuBne,
        (Xor, Bne) => XorBne,
        (Add, Bltu) => AddBltu,
        (Addi, Add) => AddiAdd,
        (Andi, Andi) => AndiAndi,
        (Andi, Li) => AndiLi,
        (Srli, Andi) => SrliAndi,
        (Mul, Add) => MulAdd,
        (Add, Mul) => AddMul,
        (Mv, Lw) => MvLw,
        (Lw, Sw) => LwSw,
        (Lh, Addi) => LhAddi,
        (Lh, Lh) => LhLh,
        (Sw, Mv) => SwMv,
        (Andi, Sub) => AndiSub,
        (Srli, And) => SrliAnd,
        (Sb, Add) => SbAdd,
        _ => return None,
    })
}

/// The op for instruction `d` at `pc`: pc-relative values resolved, common forms specialised,
/// and no op that writes x0.
fn op_for(d: Decoded, pc: u32) -> BlockOp {
    let imm = d.imm as u32;
    // Register fields are masked here, once: the op interpreter indexes the registers with
    // them unchecked.
    let op = |kind, imm| BlockOp {
        kind,
        rd: d.rd & 31,
        rs1: d.rs1 & 31,
        rs2: d.rs2 & 31,
        imm,
    };
    let target = pc.wrapping_add(imm);
    let kind = match d.op {
        Op::Jal if d.rd == 0 => return op(Kind::J, target),
        Op::Jal => return op(Kind::Jal, target),
        Op::Jalr if d.rd == 0 => Kind::Jr,
        Op::Jalr => Kind::Jalr,
        Op::Beq => return op(Kind::Beq, target),
        Op::Bne => return op(Kind::Bne, target),
        Op::Blt => return op(Kind::Blt, target),
        Op::Bge => return op(Kind::Bge, target),
        Op::Bltu => return op(Kind::Bltu, target),
        Op::Bgeu => return op(Kind::Bgeu, target),
        Op::Lb | Op::Lbu if d.rd == 0 => return load_x0(d, 1),
        Op::Lh | Op::Lhu if d.rd == 0 => return load_x0(d, 2),
        Op::Lw if d.rd == 0 => return load_x0(d, 4),
        Op::Lb => Kind::Lb,
        Op::Lh => Kind::Lh,
        Op::Lw => Kind::Lw,
        Op::Lbu => Kind::Lbu,
        Op::Lhu => Kind::Lhu,
        Op::Sb => Kind::Sb,
        Op::Sh => Kind::Sh,
        Op::Sw => Kind::Sw,
        // Everything below only writes rd.
        _ if d.rd == 0 => Kind::Nop,
        Op::Lui => Kind::Li,
        Op::Auipc => return op(Kind::Li, target),
        Op::Addi | Op::Ori | Op::Xori if d.rs1 == 0 => Kind::Li,
        Op::Addi | Op::Ori | Op::Xori if imm == 0 => Kind::Mv,
        Op::Add | Op::Or | Op::Xor if d.rs2 == 0 => Kind::Mv,
        Op::Add | Op::Or | Op::Xor if d.rs1 == 0 => {
            return BlockOp {
                rs1: d.rs2 & 31,
                ..op(Kind::Mv, 0)
            }
        }
        Op::Addi => Kind::Addi,
        Op::Slti => Kind::Slti,
        Op::Sltiu => Kind::Sltiu,
        Op::Xori => Kind::Xori,
        Op::Ori => Kind::Ori,
        Op::Andi => Kind::Andi,
        Op::Slli => Kind::Slli,
        Op::Srli => Kind::Srli,
        Op::Srai => Kind::Srai,
        Op::Add => Kind::Add,
        Op::Sub => Kind::Sub,
        Op::Sll => Kind::Sll,
        Op::Slt => Kind::Slt,
        Op::Sltu => Kind::Sltu,
        Op::Xor => Kind::Xor,
        Op::Srl => Kind::Srl,
        Op::Sra => Kind::Sra,
        Op::Or => Kind::Or,
        Op::And => Kind::And,
        Op::Mul => Kind::Mul,
        Op::Mulh => Kind::Mulh,
        Op::Mulhsu => Kind::Mulhsu,
        Op::Mulhu => Kind::Mulhu,
        Op::Div => Kind::Div,
        Op::Divu => Kind::Divu,
        Op::Rem => Kind::Rem,
        Op::Remu => Kind::Remu,
        // fence and wfi (the rest never reaches a block: see `fits_in_block`).
        _ => Kind::Nop,
    };
    op(kind, imm)
}

/// A load into x0: its access size in `rd`.
fn load_x0(d: Decoded, size: u8) -> BlockOp {
    BlockOp {
        kind: Kind::LoadX0,
        rd: size,
        rs1: d.rs1 & 31,
        rs2: 0,
        imm: d.imm as u32,
    }
}
