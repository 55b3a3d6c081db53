//! Instruction decoding: RV32I + M + A + Zicsr + the machine-mode system instructions, and the C
//! extension expanded to the same form.
//!
//! Every instruction, 16 or 32 bits, decodes to one flat [`Decoded`] record. A compressed
//! instruction decodes to exactly the record of its 32-bit expansion except for `len`, so the
//! executor never needs to know about C, and the tests can check each C form against the
//! expansion the assembler produces. Register fields an instruction does not read are set to 0,
//! which lets the pipeline model detect a load-use hazard by comparing register numbers alone
//! (x0 is never a hazard).

/// What an instruction does. `Undecoded` marks an empty slot of the decode cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    Undecoded,
    Illegal,
    Lui,
    Auipc,
    Jal,
    Jalr,
    Beq,
    Bne,
    Blt,
    Bge,
    Bltu,
    Bgeu,
    Lb,
    Lh,
    Lw,
    Lbu,
    Lhu,
    Sb,
    Sh,
    Sw,
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
    Fence,
    FenceI,
    Ecall,
    Ebreak,
    Mret,
    Wfi,
    Csrrw,
    Csrrs,
    Csrrc,
    Csrrwi,
    Csrrsi,
    Csrrci,
    /// A extension: load-reserved / store-conditional and the word AMOs.
    LrW,
    ScW,
    AmoSwapW,
    AmoAddW,
    AmoXorW,
    AmoAndW,
    AmoOrW,
    AmoMinW,
    AmoMaxW,
    AmoMinuW,
    AmoMaxuW,
}

impl Op {
    /// Loads: their result is available only after MEM, the source of load-use stalls.
    pub fn is_load(self) -> bool {
        matches!(self, Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu) || self.is_atomic()
    }
    /// LR/SC and the AMOs: they read memory in MEM like a load (and SC/AMOs also write it).
    pub fn is_atomic(self) -> bool {
        (self as u8) >= (Op::LrW as u8)
    }
    /// Conditional branches, resolved in EX.
    pub fn is_branch(self) -> bool {
        matches!(
            self,
            Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu
        )
    }
}

/// One decoded instruction. 12 bytes, copied out of the decode cache on every step.
///
/// For CSR instructions `imm` holds the CSR number in bits 0..12 and, for the immediate forms,
/// the 5-bit zero-extended immediate in bits 12..17 (`rs1` is then 0). For `Illegal`, `imm`
/// holds the raw instruction bits (reported in mtval).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub op: Op,
    pub rd: u8,
    pub rs1: u8,
    pub rs2: u8,
    /// 2 for a compressed instruction, 4 otherwise.
    pub len: u8,
    pub imm: i32,
}

impl Decoded {
    pub const UNDECODED: Decoded = Decoded {
        op: Op::Undecoded,
        rd: 0,
        rs1: 0,
        rs2: 0,
        len: 0,
        imm: 0,
    };

    /// `regs` are rd, rs1 and rs2.
    fn new(op: Op, [rd, rs1, rs2]: [u32; 3], imm: i32, len: u8) -> Decoded {
        Decoded {
            op,
            rd: rd as u8,
            rs1: rs1 as u8,
            rs2: rs2 as u8,
            len,
            imm,
        }
    }

    fn illegal(bits: u32, len: u8) -> Decoded {
        Decoded::new(Op::Illegal, [0, 0, 0], bits as i32, len)
    }
}

/// Length in bytes of the instruction whose low halfword is `low16` (2 or 4).
#[inline]
pub fn instruction_len(low16: u32) -> u8 {
    if low16 & 3 == 3 {
        4
    } else {
        2
    }
}

/// Decodes the instruction in `word` (the low 16 bits only, if it is compressed).
/// With `compressed == false` every 16-bit encoding is illegal (an RV32IM machine).
pub fn decode(word: u32, compressed: bool) -> Decoded {
    if word & 3 == 3 {
        decode32(word)
    } else if compressed {
        decode16(word & 0xffff)
    } else {
        Decoded::illegal(word & 0xffff, 2)
    }
}

fn bits(w: u32, hi: u32, lo: u32) -> u32 {
    (w >> lo) & ((1 << (hi - lo + 1)) - 1)
}

fn sext(value: u32, width: u32) -> i32 {
    let shift = 32 - width;
    ((value << shift) as i32) >> shift
}

/// Decodes a 32-bit instruction.
pub fn decode32(w: u32) -> Decoded {
    let opcode = w & 0x7f;
    let rd = bits(w, 11, 7);
    let f3 = bits(w, 14, 12);
    let rs1 = bits(w, 19, 15);
    let rs2 = bits(w, 24, 20);
    let f7 = w >> 25;
    let imm_i = (w as i32) >> 20;
    let imm_s = (((w as i32) >> 25) << 5) | bits(w, 11, 7) as i32;
    let imm_b = sext(
        (bits(w, 31, 31) << 12)
            | (bits(w, 7, 7) << 11)
            | (bits(w, 30, 25) << 5)
            | (bits(w, 11, 8) << 1),
        13,
    );
    let imm_u = (w & 0xffff_f000) as i32;
    let imm_j = sext(
        (bits(w, 31, 31) << 20)
            | (bits(w, 19, 12) << 12)
            | (bits(w, 20, 20) << 11)
            | (bits(w, 30, 21) << 1),
        21,
    );
    let d = |op, rd, rs1, rs2, imm| Decoded::new(op, [rd, rs1, rs2], imm, 4);
    match opcode {
        0x37 => d(Op::Lui, rd, 0, 0, imm_u),
        0x17 => d(Op::Auipc, rd, 0, 0, imm_u),
        0x6f => d(Op::Jal, rd, 0, 0, imm_j),
        0x67 if f3 == 0 => d(Op::Jalr, rd, rs1, 0, imm_i),
        0x63 => {
            let op = match f3 {
                0 => Op::Beq,
                1 => Op::Bne,
                4 => Op::Blt,
                5 => Op::Bge,
                6 => Op::Bltu,
                7 => Op::Bgeu,
                _ => return Decoded::illegal(w, 4),
            };
            d(op, 0, rs1, rs2, imm_b)
        }
        0x03 => {
            let op = match f3 {
                0 => Op::Lb,
                1 => Op::Lh,
                2 => Op::Lw,
                4 => Op::Lbu,
                5 => Op::Lhu,
                _ => return Decoded::illegal(w, 4),
            };
            d(op, rd, rs1, 0, imm_i)
        }
        0x23 => {
            let op = match f3 {
                0 => Op::Sb,
                1 => Op::Sh,
                2 => Op::Sw,
                _ => return Decoded::illegal(w, 4),
            };
            d(op, 0, rs1, rs2, imm_s)
        }
        0x13 => {
            let op = match (f3, f7) {
                (0, _) => Op::Addi,
                (2, _) => Op::Slti,
                (3, _) => Op::Sltiu,
                (4, _) => Op::Xori,
                (6, _) => Op::Ori,
                (7, _) => Op::Andi,
                (1, 0) => Op::Slli,
                (5, 0) => Op::Srli,
                (5, 0x20) => Op::Srai,
                _ => return Decoded::illegal(w, 4),
            };
            let imm = if matches!(op, Op::Slli | Op::Srli | Op::Srai) {
                rs2 as i32
            } else {
                imm_i
            };
            d(op, rd, rs1, 0, imm)
        }
        0x33 => {
            let op = match (f7, f3) {
                (0, 0) => Op::Add,
                (0x20, 0) => Op::Sub,
                (0, 1) => Op::Sll,
                (0, 2) => Op::Slt,
                (0, 3) => Op::Sltu,
                (0, 4) => Op::Xor,
                (0, 5) => Op::Srl,
                (0x20, 5) => Op::Sra,
                (0, 6) => Op::Or,
                (0, 7) => Op::And,
                (1, 0) => Op::Mul,
                (1, 1) => Op::Mulh,
                (1, 2) => Op::Mulhsu,
                (1, 3) => Op::Mulhu,
                (1, 4) => Op::Div,
                (1, 5) => Op::Divu,
                (1, 6) => Op::Rem,
                (1, 7) => Op::Remu,
                _ => return Decoded::illegal(w, 4),
            };
            d(op, rd, rs1, rs2, 0)
        }
        0x2f if f3 == 2 => {
            let op = match w >> 27 {
                0b00010 if rs2 == 0 => Op::LrW,
                0b00011 => Op::ScW,
                0b00001 => Op::AmoSwapW,
                0b00000 => Op::AmoAddW,
                0b00100 => Op::AmoXorW,
                0b01100 => Op::AmoAndW,
                0b01000 => Op::AmoOrW,
                0b10000 => Op::AmoMinW,
                0b10100 => Op::AmoMaxW,
                0b11000 => Op::AmoMinuW,
                0b11100 => Op::AmoMaxuW,
                _ => return Decoded::illegal(w, 4),
            };
            let rs2 = if op == Op::LrW { 0 } else { rs2 };
            d(op, rd, rs1, rs2, 0)
        }
        0x0f => match f3 {
            0 => d(Op::Fence, 0, 0, 0, 0),
            1 => d(Op::FenceI, 0, 0, 0, 0),
            _ => Decoded::illegal(w, 4),
        },
        0x73 => {
            let csr = (w >> 20) as i32;
            match f3 {
                0 => match w {
                    0x0000_0073 => d(Op::Ecall, 0, 0, 0, 0),
                    0x0010_0073 => d(Op::Ebreak, 0, 0, 0, 0),
                    0x3020_0073 => d(Op::Mret, 0, 0, 0, 0),
                    0x1050_0073 => d(Op::Wfi, 0, 0, 0, 0),
                    _ => Decoded::illegal(w, 4),
                },
                1 => d(Op::Csrrw, rd, rs1, 0, csr),
                2 => d(Op::Csrrs, rd, rs1, 0, csr),
                3 => d(Op::Csrrc, rd, rs1, 0, csr),
                5 => d(Op::Csrrwi, rd, 0, 0, csr | ((rs1 as i32) << 12)),
                6 => d(Op::Csrrsi, rd, 0, 0, csr | ((rs1 as i32) << 12)),
                7 => d(Op::Csrrci, rd, 0, 0, csr | ((rs1 as i32) << 12)),
                _ => Decoded::illegal(w, 4),
            }
        }
        _ => Decoded::illegal(w, 4),
    }
}

/// Decodes a 16-bit (C extension) instruction into the record of its 32-bit expansion.
/// Reserved encodings, and the F/D forms (there is no FPU), are illegal.
pub fn decode16(h: u32) -> Decoded {
    let f3 = bits(h, 15, 13);
    // Registers x8..x15 named by a 3-bit field.
    let r_hi = 8 + bits(h, 9, 7);
    let r_lo = 8 + bits(h, 4, 2);
    let rd = bits(h, 11, 7);
    let rs2 = bits(h, 6, 2);
    let imm6 = sext((bits(h, 12, 12) << 5) | bits(h, 6, 2), 6);
    let d = |op, rd, rs1, rs2, imm| Decoded::new(op, [rd, rs1, rs2], imm, 2);
    let ill = Decoded::illegal(h, 2);
    match (h & 3, f3) {
        // Quadrant 0
        (0, 0) => {
            let imm = (bits(h, 12, 11) << 4)
                | (bits(h, 10, 7) << 6)
                | (bits(h, 6, 6) << 2)
                | (bits(h, 5, 5) << 3);
            if imm == 0 {
                ill // includes the all-zero halfword
            } else {
                d(Op::Addi, r_lo, 2, 0, imm as i32)
            }
        }
        (0, 2) | (0, 6) => {
            let imm = ((bits(h, 12, 10) << 3) | (bits(h, 6, 6) << 2) | (bits(h, 5, 5) << 6)) as i32;
            if f3 == 2 {
                d(Op::Lw, r_lo, r_hi, 0, imm)
            } else {
                d(Op::Sw, 0, r_hi, r_lo, imm)
            }
        }
        (0, _) => ill,
        // Quadrant 1
        (1, 0) => d(Op::Addi, rd, rd, 0, imm6),
        (1, 1) | (1, 5) => {
            let imm = sext(
                (bits(h, 12, 12) << 11)
                    | (bits(h, 11, 11) << 4)
                    | (bits(h, 10, 9) << 8)
                    | (bits(h, 8, 8) << 10)
                    | (bits(h, 7, 7) << 6)
                    | (bits(h, 6, 6) << 7)
                    | (bits(h, 5, 3) << 1)
                    | (bits(h, 2, 2) << 5),
                12,
            );
            d(Op::Jal, if f3 == 1 { 1 } else { 0 }, 0, 0, imm)
        }
        (1, 2) => d(Op::Addi, rd, 0, 0, imm6),
        (1, 3) => {
            if rd == 2 {
                let imm = sext(
                    (bits(h, 12, 12) << 9)
                        | (bits(h, 6, 6) << 4)
                        | (bits(h, 5, 5) << 6)
                        | (bits(h, 4, 3) << 7)
                        | (bits(h, 2, 2) << 5),
                    10,
                );
                if imm == 0 {
                    ill
                } else {
                    d(Op::Addi, 2, 2, 0, imm)
                }
            } else if imm6 == 0 {
                ill
            } else {
                d(Op::Lui, rd, 0, 0, imm6 << 12)
            }
        }
        (1, 4) => {
            let shamt = (bits(h, 12, 12) << 5) | bits(h, 6, 2);
            match bits(h, 11, 10) {
                0 | 1 if shamt >= 32 => ill,
                0 => d(Op::Srli, r_hi, r_hi, 0, shamt as i32),
                1 => d(Op::Srai, r_hi, r_hi, 0, shamt as i32),
                2 => d(Op::Andi, r_hi, r_hi, 0, imm6),
                _ if bits(h, 12, 12) == 1 => ill,
                _ => {
                    let op = match bits(h, 6, 5) {
                        0 => Op::Sub,
                        1 => Op::Xor,
                        2 => Op::Or,
                        _ => Op::And,
                    };
                    d(op, r_hi, r_hi, r_lo, 0)
                }
            }
        }
        (1, 6) | (1, 7) => {
            let imm = sext(
                (bits(h, 12, 12) << 8)
                    | (bits(h, 11, 10) << 3)
                    | (bits(h, 6, 5) << 6)
                    | (bits(h, 4, 3) << 1)
                    | (bits(h, 2, 2) << 5),
                9,
            );
            d(if f3 == 6 { Op::Beq } else { Op::Bne }, 0, r_hi, 0, imm)
        }
        // Quadrant 2
        (2, 0) => {
            let shamt = (bits(h, 12, 12) << 5) | bits(h, 6, 2);
            if shamt >= 32 {
                ill
            } else {
                d(Op::Slli, rd, rd, 0, shamt as i32)
            }
        }
        (2, 2) => {
            let imm = (bits(h, 12, 12) << 5) | (bits(h, 6, 4) << 2) | (bits(h, 3, 2) << 6);
            if rd == 0 {
                ill
            } else {
                d(Op::Lw, rd, 2, 0, imm as i32)
            }
        }
        (2, 4) => match (bits(h, 12, 12), rd, rs2) {
            (0, 0, 0) => ill,
            (0, _, 0) => d(Op::Jalr, 0, rd, 0, 0),
            (0, _, _) => d(Op::Add, rd, 0, rs2, 0),
            (_, 0, 0) => d(Op::Ebreak, 0, 0, 0, 0),
            (_, _, 0) => d(Op::Jalr, 1, rd, 0, 0),
            _ => d(Op::Add, rd, rd, rs2, 0),
        },
        (2, 6) => {
            let imm = (bits(h, 12, 9) << 2) | (bits(h, 8, 7) << 6);
            d(Op::Sw, 0, 2, rs2, imm as i32)
        }
        _ => ill,
    }
}
