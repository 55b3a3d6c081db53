//! A tiny RV32 assembler for hand-written test sequences, and a runner for them.
#![allow(dead_code)]

use rvsim::{Config, Machine, Program, Stop};

pub const BASE: u32 = 0x8000_0000;

pub fn r(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, op: u32) -> u32 {
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
pub fn add(rd: u32, rs1: u32, rs2: u32) -> u32 {
    r(0, rs2, rs1, 0, rd, 0x33)
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
