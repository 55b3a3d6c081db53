//! A tiny RV32 assembler for hand-written test sequences, and a runner for them.
#![allow(dead_code)]

use rvsim::{Config, Machine, Program, Stop};

pub const BASE: u32 = 0x8000_0000;

/// An R-type instruction from its fields, in encoding order: funct7, rs2, rs1, funct3, rd,
/// opcode.
pub fn r([f7, rs2, rs1, f3, rd, op]: [u32; 6]) -> u32 {
    (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op
}
pub fn i(imm: i32, rs1: u32, f3: u32, rd: u32, op: u32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op
}
pub fn s(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let imm = imm as u32;
    ((imm >> 5 & 0x7f) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((imm & 31) << 7) | 0x23
}
pub fn b(off: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let o = off as u32;
    ((o >> 12 & 1) << 31)
        | ((o >> 5 & 0x3f) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (f3 << 12)
        | ((o >> 1 & 0xf) << 8)
        | ((o >> 11 & 1) << 7)
        | 0x63
}
pub fn jal(rd: u32, off: i32) -> u32 {
    let o = off as u32;
    ((o >> 20 & 1) << 31)
        | ((o >> 1 & 0x3ff) << 21)
        | ((o >> 11 & 1) << 20)
        | ((o >> 12 & 0xff) << 12)
        | (rd << 7)
        | 0x6f
}
pub fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 0, rd, 0x13)
}
pub fn andi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 7, rd, 0x13)
}
pub fn add(rd: u32, rs1: u32, rs2: u32) -> u32 {
    r([0, rs2, rs1, 0, rd, 0x33])
}
pub fn lw(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 2, rd, 0x03)
}
pub fn sw(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 2)
}
pub fn beq(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 0)
}
pub fn bne(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 1)
}
pub fn auipc(rd: u32, imm: u32) -> u32 {
    (imm << 12) | (rd << 7) | 0x17
}
pub fn csrw(csr: u32, rs1: u32) -> u32 {
    i(csr as i32, rs1, 1, 0, 0x73)
}
pub fn csrr(rd: u32, csr: u32) -> u32 {
    i(csr as i32, 0, 2, rd, 0x73)
}
pub const ECALL: u32 = 0x73;
pub const MRET: u32 = 0x3020_0073;
pub const ILLEGAL: u32 = 0xffff_ffff;
/// `addi a7, zero, 93; ecall`: exit with the status in a0.
pub const EXIT: [u32; 2] = [0x05d0_0893, ECALL];

pub fn code(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub fn machine(words: &[u32], cfg: &Config) -> Machine {
    Machine::new(cfg, &Program::from_code(BASE, &code(words))).unwrap()
}

/// Runs `words` (which must exit) and returns the machine afterwards.
pub fn run(words: &[u32], cfg: &Config) -> Machine {
    let mut m = machine(words, cfg);
    let stop = m.run();
    assert!(matches!(stop, Stop::Exit(_)), "{stop}");
    m
}

/// xorshift64: cheap, seeded, reproducible random numbers for the randomized tests.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// True once in `n` draws, on average.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

pub fn lui(rd: u32, imm20: u32) -> u32 {
    ((imm20 & 0xfffff) << 12) | (rd << 7) | 0x37
}
pub fn jalr(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 0, rd, 0x67)
}
/// `lui` + `addi` loading any 32-bit value into `rd`.
pub fn li(rd: u32, value: u32) -> [u32; 2] {
    let lo = ((value & 0xfff) as i32) << 20 >> 20;
    let hi = value.wrapping_sub(lo as u32) >> 12;
    [lui(rd, hi), addi(rd, rd, lo)]
}
/// A word AMO (funct5 = `f5`: 0 amoadd, 1 amoswap, 2 lr, 3 sc, 4 amoxor, ...).
pub fn amo(f5: u32, rd: u32, rs1: u32, rs2: u32) -> u32 {
    r([f5 << 2, rs2, rs1, 2, rd, 0x2f])
}
pub const FENCE_I: u32 = 0x0000_100f;
pub const EBREAK: u32 = 0x0010_0073;

// Compressed (RV32C) encodings. `rd'`/`rs'` registers are x8..x15.
pub fn c_addi(rd: u32, imm: i32) -> u16 {
    let imm = imm as u32;
    ((imm >> 5 & 1) << 12 | rd << 7 | (imm & 31) << 2 | 1) as u16
}
pub fn c_li(rd: u32, imm: i32) -> u16 {
    c_addi(rd, imm) | 0x4000
}
pub fn c_mv(rd: u32, rs2: u32) -> u16 {
    (0x8000 | rd << 7 | rs2 << 2 | 2) as u16
}
pub fn c_add(rd: u32, rs2: u32) -> u16 {
    (0x9000 | rd << 7 | rs2 << 2 | 2) as u16
}
pub fn c_slli(rd: u32, shamt: u32) -> u16 {
    (rd << 7 | (shamt & 31) << 2 | 2) as u16
}
pub fn c_jr(rs1: u32) -> u16 {
    (0x8000 | rs1 << 7 | 2) as u16
}
pub fn c_jalr(rs1: u32) -> u16 {
    (0x9000 | rs1 << 7 | 2) as u16
}
/// c.lw (`store == false`) or c.sw: `reg'`, word offset `off` (0..=124, multiple of 4).
pub fn c_lw_sw(store: bool, reg: u32, base: u32, off: u32) -> u16 {
    let f3 = if store { 6 } else { 2 };
    (f3 << 13
        | (off >> 3 & 7) << 10
        | (base - 8) << 7
        | (off >> 2 & 1) << 6
        | (off >> 6 & 1) << 5
        | (reg - 8) << 2) as u16
}
/// c.j with a byte offset (even, -2048..2046).
pub fn c_j(off: i32) -> u16 {
    let o = off as u32;
    let bits = (o >> 11 & 1) << 10
        | (o >> 4 & 1) << 9
        | (o >> 8 & 3) << 7
        | (o >> 10 & 1) << 6
        | (o >> 6 & 1) << 5
        | (o >> 7 & 1) << 4
        | (o >> 1 & 7) << 1
        | (o >> 5 & 1);
    (0xa000 | bits << 2 | 1) as u16
}
/// c.beqz (`ne == false`) or c.bnez on `rs'` with a byte offset (even, -256..254).
pub fn c_bz(ne: bool, rs: u32, off: i32) -> u16 {
    let o = off as u32;
    let f3 = if ne { 7 } else { 6 };
    (f3 << 13
        | (o >> 8 & 1) << 12
        | (o >> 3 & 3) << 10
        | (rs - 8) << 7
        | (o >> 6 & 3) << 5
        | (o >> 1 & 3) << 3
        | (o >> 5 & 1) << 2
        | 1) as u16
}

/// What Ripes v2.2.6 computes for a register shift (`sll`, `srl`, `sra`: `bits`, on the
/// operands `a` and `b`), or `None` when `bits` is not one. RV32 shifts by `b`'s low 5 bits;
/// Ripes' ALU (`src/processors/RISC-V/rv_alu.h`) shifts `a`, held as a 64-bit value, by all
/// of `b`, and keeps the low 32 bits: by 32 to 63, `sll` and `srl` give 0 and `sra` the sign.
/// The amount is taken modulo 64, as the x86-64 shift instruction its build runs on does
/// (a C++ shift by 64 or more is undefined): by 67, Ripes shifts by 3, as RV32 does.
pub fn ripes_register_shift(bits: u32, a: u32, b: u32) -> Option<u32> {
    let (op, f3, f7) = (bits & 0x7f, bits >> 12 & 7, bits >> 25);
    let n = b & 63;
    match (op, f3, f7) {
        (0x33, 1, 0) => Some(((a as u64) << n) as u32),
        (0x33, 5, 0) => Some(((a as u64) >> n) as u32),
        (0x33, 5, 0x20) => Some(((a as i32 as i64) >> n) as u32),
        _ => None,
    }
}

/// Runs `m` to its end as Ripes computes register shifts ([`ripes_register_shift`]), step by
/// step: after each shift the destination gets Ripes' value. Returns how the run ended and
/// how many shifts gave a value other than RV32's.
pub fn run_with_ripes_shifts(m: &mut Machine) -> (Stop, u64) {
    let mut differed = 0;
    loop {
        let shift = m.instruction_bits(m.pc).and_then(|bits| {
            let (rs1, rs2) = ((bits >> 15 & 31) as usize, (bits >> 20 & 31) as usize);
            let ripes = ripes_register_shift(bits, m.regs[rs1], m.regs[rs2])?;
            Some(((bits >> 7 & 31) as usize, ripes))
        });
        let retired = m.progress().instret;
        let stop = m.step();
        if let (Some((rd, value)), true) = (shift, m.progress().instret > retired) {
            if rd != 0 && m.regs[rd] != value {
                m.regs[rd] = value;
                differed += 1;
            }
        }
        if let Some(stop) = stop {
            return (stop, differed);
        }
    }
}
