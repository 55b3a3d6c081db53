//! Counting as Ripes' 5-stage processor counts (`FetchCount::PerCycle`): one I-cache access
//! per clock cycle and one at reset, and Ripes' own timing rules.
//!
//! What Ripes v2.2.6 does (read from its `rv5s` processor and checked against it run for run,
//! see `docs/RIPES.md`):
//!
//! * the instruction memory is read every cycle at the PC register, and its cache sees that
//!   read: the state after reset and after each clock is one access. A stalled front end reads
//!   the same address again (a hit that changes nothing); after a taken branch or a jump
//!   (resolved in EX) the two sequential instructions behind it were read too (wrong path);
//!   a 32-bit instruction at an address ending in 2 is one access, to the word holding its
//!   first half;
//! * the PC steps by 4 when the 32-bit word at it has its low two bits set or is zero, by 2
//!   otherwise (C enabled), so a wrong-path address depends on what memory holds there;
//! * the load-use hazard compares the load's `rd` with bits 15-19 and 20-24 of the next
//!   instruction (expanded from its compressed form) whatever its format, x0 included: an
//!   `addi` whose immediate's low 5 bits name the loaded register waits too;
//! * an `ecall` waits in EX until no older instruction that writes a register (by opcode,
//!   x0 included) is in MEM or WB; it flushes nothing;
//! * the run ends when no stage holds an instruction: 3 cycles after the last one leaves EX,
//!   so a final jump's flush is not counted.
//!
//! The machine calls [`PerCycle::slot`] for each instruction that reaches EX (and for each
//! trap, which takes the place of one) and [`PerCycle::finish`] once at the end.

use crate::cache::Cache;
use crate::decode::{Decoded, Op};
use crate::pipeline::{PipelineStats, BRANCH_PENALTY, TRAP_PENALTY};

/// How I-cache accesses (and, with them, the pipeline's cycle rules) are counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FetchCount {
    /// One access per cache line an executed instruction touches (oscost's convention).
    #[default]
    PerInstruction,
    /// One access per cycle, as Ripes' 5-stage processor counts (see the module docs).
    PerCycle,
}

impl FetchCount {
    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            FetchCount::PerInstruction => "per-instruction",
            FetchCount::PerCycle => "per-cycle",
        }
    }

    pub fn parse(text: &str) -> Option<FetchCount> {
        match text {
            "per-instruction" | "instruction" => Some(FetchCount::PerInstruction),
            "per-cycle" | "cycle" => Some(FetchCount::PerCycle),
            _ => None,
        }
    }
}

/// Which counter of [`PipelineStats`] a slot's flush went to (taken back at the end when the
/// slot is the last one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FlushKind {
    Jump,
    Branch,
    Trap,
    Interrupt,
}

/// What the per-cycle model needs of one instruction that reached EX.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    pub pc: u32,
    /// Bits 31:0 of the instruction as Ripes' decoder sees it (a compressed one expanded);
    /// any value where [`PerCycle::reads_bits`] says they are not read.
    pub bits: u32,
    pub load: bool,
    /// Writes a register, by opcode (Ripes' control: x0 included).
    pub writes: bool,
    pub ecall: bool,
    /// Where fetch goes after it when it redirects (a taken branch, a jump, a trap), and
    /// the counter its flush goes to.
    pub redirect: Option<(u32, FlushKind)>,
    /// Where fetch goes on after it when it does not redirect.
    pub next: u32,
}

/// The memory the front end reads, as Ripes holds it: the machine's memory, and outside it
/// the sections a loader that writes every section puts there (see
/// [`crate::elf::Program::other_sections`]).
pub(crate) trait FetchMemory {
    fn byte(&self, addr: u32) -> u8;
    /// The little-endian word at `addr`: [`word`]'s bytes, which a memory may read at once.
    fn word(&self, addr: u32) -> u32 {
        word(self, addr)
    }
}

/// The state of the per-cycle model between instructions.
#[derive(Clone, Debug)]
pub(crate) struct PerCycle {
    compressed: bool,
    /// The cycle in which the last two slots left EX (the newest first), and whether each
    /// writes a register. Before the first slot, 1: the first slot enters EX in cycle 2,
    /// by the same sum as every other (no slot before it writes, loads or redirects).
    ex_left: [u64; 2],
    writes: [bool; 2],
    /// The previous slot's destination when it was a load.
    load_rd: Option<u32>,
    /// The previous slot's flush, if it redirected.
    redirected: Option<FlushKind>,
    /// Where the front end goes on reading after the last slot.
    after: u32,
    started: bool,
    finished: bool,
}

impl PerCycle {
    pub fn new(compressed: bool) -> PerCycle {
        PerCycle {
            compressed,
            ex_left: [1, 0],
            writes: [false; 2],
            load_rd: None,
            redirected: None,
            after: 0,
            started: false,
            finished: false,
        }
    }

    /// Whether the next slot's [`Slot::bits`] are read: only by the load-use test after a
    /// load, and for a load's destination (`load`: the slot is one). Otherwise any value
    /// counts the same, and the machine need not read and expand the instruction.
    #[inline(always)]
    pub fn reads_bits(&self, load: bool) -> bool {
        load || self.load_rd.is_some()
    }

    /// The PC step after the word at `addr` (Ripes' `Uncompress::Pc_Inc`).
    pub fn step(&self, mem: &impl FetchMemory, addr: u32) -> u32 {
        if !self.compressed {
            return 4;
        }
        let w = mem.word(addr);
        if w & 3 == 3 || w == 0 {
            4
        } else {
            2
        }
    }

    /// Accounts for one slot: its cycles into `p`, its fetches into `ic`.
    #[inline(always)]
    pub fn slot(
        &mut self,
        s: &Slot,
        p: &mut PipelineStats,
        mut ic: Option<&mut Cache>,
        mem: &impl FetchMemory,
    ) {
        let (rs1, rs2) = ((s.bits >> 15) & 31, (s.bits >> 20) & 31);
        let load_use = matches!(self.load_rd, Some(rd) if rd == rs1 || rd == rs2);
        // The cycle this slot enters EX.
        let enter = self.ex_left[0]
            + 1
            + BRANCH_PENALTY * self.redirected.is_some() as u64
            + load_use as u64;
        // An ecall waits while an older register write is in MEM or WB (it is there up to
        // 2 cycles after leaving EX).
        let mut wait = 0;
        if s.ecall {
            for k in 0..2 {
                if self.writes[k] {
                    wait = wait.max((self.ex_left[k] + 3).saturating_sub(enter));
                }
            }
        }
        p.load_use_stalls += load_use as u64;
        p.ecall_stalls += wait;
        self.ex_left = [enter + wait, self.ex_left[0]];
        self.writes = [s.writes, self.writes[0]];
        self.load_rd = s.load.then_some((s.bits >> 7) & 31);
        self.started = true;
        if let Some(ic) = ic.as_deref_mut() {
            ic.fetch_any(s.pc);
            // A stalled front end reads its address again: hits that change nothing.
            ic.repeat_hits(load_use as u64 + wait);
        }
        self.redirected = s.redirect.map(|(_, kind)| kind);
        match s.redirect {
            Some((target, kind)) => {
                // A trap does not retire: its own cycle in EX is counted with its flush.
                match kind {
                    FlushKind::Jump => p.jump_flushes += BRANCH_PENALTY,
                    FlushKind::Branch => p.branch_flushes += BRANCH_PENALTY,
                    FlushKind::Trap => p.trap_flushes += TRAP_PENALTY,
                    FlushKind::Interrupt => p.interrupt_flushes += TRAP_PENALTY,
                }
                // The two sequential reads behind it, flushed.
                let w1 = s.pc.wrapping_add(self.step(mem, s.pc));
                let w2 = w1.wrapping_add(self.step(mem, w1));
                if let Some(ic) = ic {
                    ic.fetch_any(w1);
                    ic.fetch_any(w2);
                }
                self.after = target;
            }
            None => self.after = s.next,
        }
    }

    /// The end of the run: the pipeline drains (3 cycles after the last slot left EX, which
    /// takes back a last redirect's flush) while the front end goes on reading.
    pub fn finish(
        &mut self,
        p: &mut PipelineStats,
        ic: Option<&mut Cache>,
        mem: &impl FetchMemory,
    ) {
        if self.finished || !self.started {
            self.finished = true;
            return;
        }
        self.finished = true;
        let reads = match self.redirected {
            Some(kind) => {
                let field = match kind {
                    FlushKind::Jump => &mut p.jump_flushes,
                    FlushKind::Branch => &mut p.branch_flushes,
                    FlushKind::Trap => &mut p.trap_flushes,
                    FlushKind::Interrupt => &mut p.interrupt_flushes,
                };
                *field -= BRANCH_PENALTY;
                3
            }
            None => 5,
        };
        if let Some(ic) = ic {
            let mut a = self.after;
            for _ in 0..reads {
                ic.fetch_any(a);
                a = a.wrapping_add(self.step(mem, a));
            }
        }
    }
}

/// The little-endian word at `addr`, byte by byte.
pub(crate) fn word<M: FetchMemory + ?Sized>(mem: &M, addr: u32) -> u32 {
    (0..4).fold(0, |w, i| {
        w | (mem.byte(addr.wrapping_add(i)) as u32) << (8 * i)
    })
}

/// Whether an instruction writes a register in Ripes' control (by opcode, x0 included).
pub(crate) fn writes_register(op: Op) -> bool {
    use Op::*;
    // As a mask by opcode number: one shift and test per instruction.
    const WRITES: u128 = {
        let ops = [
            Lui, Auipc, Jal, Jalr, Lb, Lh, Lw, Lbu, Lhu, Addi, Slti, Sltiu, Xori, Ori, Andi, Slli,
            Srli, Srai, Add, Sub, Sll, Slt, Sltu, Xor, Srl, Sra, Or, And, Mul, Mulh, Mulhsu, Mulhu,
            Div, Divu, Rem, Remu,
        ];
        let mut mask = 0u128;
        let mut i = 0;
        while i < ops.len() {
            mask |= 1 << ops[i] as u8;
            i += 1;
        }
        mask
    };
    (WRITES >> (op as u8 & 127)) & 1 != 0
}

/// Whether `d` reads memory in Ripes' control (the A extension is not in Ripes).
pub(crate) fn is_plain_load(d: &Decoded) -> bool {
    matches!(d.op, Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu)
}

/// Ripes' expansion of a compressed instruction (`Uncompress::exp_instr`, RV32): `word` is
/// the 32 bits read at its address. Encodings it does not expand come back as read.
pub fn expand_rvc(word: u32) -> u32 {
    const OPIMM: u32 = 0x13;
    const LOAD: u32 = 0x03;
    const STORE: u32 = 0x23;
    const OP: u32 = 0x33;
    const LUI: u32 = 0x37;
    const JAL: u32 = 0x6f;
    const JALR: u32 = 0x67;
    const BRANCH: u32 = 0x63;
    let quadrant = word & 3;
    if quadrant == 3 {
        return word;
    }
    let bits = |lo: u32, n: u32| (word >> lo) & ((1 << n) - 1);
    let f3 = (word & 0xe000) >> 13;
    // The fields Ripes' parsers return, named by the bits they hold.
    let b6_2 = bits(2, 5);
    let b11_7 = bits(7, 5);
    let b12 = bits(12, 1);
    let b4_2 = bits(2, 3);
    let b9_7 = bits(7, 3);
    let b12_10 = bits(10, 3);
    let b6_5 = bits(5, 2);
    let b11_10 = bits(10, 2);
    let sext = |imm: u32, neg: bool, mask: u32| if neg { imm | mask } else { imm };
    let cj_imm = || {
        let f = bits(2, 11);
        let imm = ((f & 0x040) << 3)
            | (f & 0x180)
            | ((f & 0x010) << 2)
            | (f & 0x020)
            | ((f & 0x001) << 4)
            | ((f & 0x200) >> 6)
            | ((f & 0x00e) >> 1);
        let imm = sext(imm, f & 0x400 != 0, 0xffe00);
        (((imm & 0x003ff) << 9)
            | ((imm & 0x00400) >> 2)
            | ((imm & 0x7f800) >> 11)
            | (imm & 0x80000))
            << 12
    };
    let cb_imm = || {
        let (f2, f4) = (b12_10, b6_2);
        let imm = ((f4 & 0x18) << 2) | ((f4 & 0x01) << 4) | ((f2 & 0x03) << 2) | ((f4 & 0x06) >> 1);
        let imm = sext(imm, f2 & 0x04 != 0, 0xff80);
        ((((imm & 0x0800) >> 5) | ((imm & 0x03f0) >> 4)) << 25)
            | ((((imm & 0x000f) << 1) | ((imm & 0x0400) >> 10)) << 7)
    };
    match (quadrant, f3) {
        (0, 0b000) if word != 0 => {
            let rd = b4_2 | 8;
            let f = bits(5, 8);
            let uimm =
                (((f & 0x3c) << 2) | ((f & 0xc0) >> 4) | ((f & 0x01) << 1) | ((f & 0x02) >> 1))
                    << 2;
            (uimm << 20) | (2 << 15) | (rd << 7) | OPIMM
        }
        (0, 0b010) => {
            let (rd, rs1) = (b4_2 | 8, b9_7 | 8);
            let uimm = ((b6_5 & 1) << 6) | (b12_10 << 3) | ((b6_5 & 2) << 1);
            (uimm << 20) | (rs1 << 15) | (0b010 << 12) | (rd << 7) | LOAD
        }
        (0, 0b110) => {
            let (rs1, rs2) = (b9_7 | 8, b4_2 | 8);
            let uimm = ((b6_5 & 1) << 6) | (b12_10 << 3) | ((b6_5 & 2) << 1);
            (((uimm & 0xfe0) >> 5) << 25)
                | (rs2 << 20)
                | (rs1 << 15)
                | (0b010 << 12)
                | ((uimm & 0x1f) << 7)
                | STORE
        }
        (1, 0b000) => {
            let imm = sext(b6_2, b12 != 0, 0xffff_ffe0);
            (imm << 20) | (b11_7 << 15) | (b11_7 << 7) | OPIMM
        }
        (1, 0b001) => cj_imm() | (1 << 7) | JAL,
        (1, 0b010) => {
            let imm = sext(b6_2, b12 != 0, 0xffff_ffe0);
            (imm << 20) | (b11_7 << 7) | OPIMM
        }
        (1, 0b011) if b11_7 == 2 => {
            let f = b6_2;
            let imm =
                (((f & 0x06) << 2) | ((f & 0x08) >> 1) | ((f & 0x01) << 1) | ((f & 0x10) >> 4))
                    << 4;
            let imm = sext(imm, b12 != 0, 0xffe00);
            (imm << 20) | (2 << 15) | (2 << 7) | OPIMM
        }
        (1, 0b011) => {
            let imm = sext(b6_2, b12 != 0, 0xfffe0);
            (imm << 12) | (b11_7 << 7) | LUI
        }
        (1, 0b100) => {
            let (rd, rs2) = (b9_7 | 8, b4_2 | 8);
            match b11_10 {
                0b00 => {
                    let uimm = (b12 << 6) | b6_2;
                    (uimm << 20) | (rd << 15) | (0b101 << 12) | (rd << 7) | OPIMM
                }
                0b01 => {
                    let uimm = (b12 << 6) | b6_2;
                    (0b0100000 << 25)
                        | (uimm << 20)
                        | (rd << 15)
                        | (0b101 << 12)
                        | (rd << 7)
                        | OPIMM
                }
                0b10 => {
                    let imm = sext(b6_2, b12 != 0, 0xfe0);
                    (imm << 20) | (rd << 15) | (0b111 << 12) | (rd << 7) | OPIMM
                }
                _ => {
                    let r = |f3: u32| (rs2 << 20) | (rd << 15) | (f3 << 12) | (rd << 7) | OP;
                    match (b12 << 2) | b6_5 {
                        0b000 => (0b0100000 << 25) | r(0b000),
                        0b001 => r(0b100),
                        0b010 => r(0b110),
                        0b011 => r(0b111),
                        0b100 => (0b0100000 << 25) | (rs2 << 20) | (rd << 15) | (rd << 7) | 0x3b,
                        0b101 => (rs2 << 20) | (rd << 15) | (rd << 7) | 0x3b,
                        _ => word,
                    }
                }
            }
        }
        (1, 0b101) => cj_imm() | JAL,
        (1, 0b110) => cb_imm() | ((b9_7 | 8) << 15) | BRANCH,
        (1, 0b111) => cb_imm() | ((b9_7 | 8) << 15) | (0b001 << 12) | BRANCH,
        (2, 0b000) if b12 == 0 => {
            (b6_2 << 20) | (b11_7 << 15) | (0b001 << 12) | (b11_7 << 7) | OPIMM
        }
        (2, 0b010) => {
            let f = b6_2;
            let uimm = ((f & 0x03) << 6) | (b12 << 5) | (f & 0x1c);
            (uimm << 20) | (2 << 15) | (0b010 << 12) | (b11_7 << 7) | LOAD
        }
        (2, 0b100) => {
            let (rd, rs2) = (b11_7, b6_2);
            match (b12 != 0, rs2 != 0) {
                (true, true) => (rs2 << 20) | (rd << 15) | (rd << 7) | OP,
                (true, false) if rd != 0 => (rd << 15) | (1 << 7) | JALR,
                (true, false) => word,
                (false, true) => (rs2 << 20) | (rd << 7) | OP,
                (false, false) => (rd << 15) | JALR,
            }
        }
        (2, 0b110) => {
            let f = bits(7, 6);
            let uimm = ((f & 0x03) << 6) | (f & 0x3c);
            (((uimm & 0xfe0) >> 5) << 25)
                | (b6_2 << 20)
                | (2 << 15)
                | (0b010 << 12)
                | ((uimm & 0x1f) << 7)
                | STORE
        }
        _ => word,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansions_are_the_standard_ones_where_the_fields_are_registers() {
        // c.lw a5, 4(a0) = lw a5, 4(a0)
        assert_eq!(expand_rvc(0x415c), 0x00452783);
        // c.add a0, a1 = add a0, a0, a1
        assert_eq!(expand_rvc(0x952e), 0x00b50533);
        // c.mv a0, a1 = add a0, x0, a1
        assert_eq!(expand_rvc(0x852e), 0x00b00533);
        // c.jr ra = jalr x0, 0(ra)
        assert_eq!(expand_rvc(0x8082), 0x00008067);
        // c.li a0, -1: addi a0, x0, -1 (bits 24:20 are the immediate's, all ones)
        assert_eq!(expand_rvc(0x557d), 0xfff00513);
        // a 32-bit instruction comes back as read
        assert_eq!(expand_rvc(0x00452783), 0x00452783);
    }
}
