//! Decoder tests: every C-extension form against the expansion GNU as produces, reserved
//! encodings, and a table of 32-bit instructions executed one at a time.

mod common;
use common::*;
use rvsim::decode::{decode, decode16, decode32, Op};
use rvsim::Config;

#[test]
fn every_compressed_form_decodes_to_its_expansion() {
    let table = include_str!("data/cforms.txt");
    let mut forms = std::collections::BTreeSet::new();
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let mut parts = line.splitn(3, ' ');
        let c = u32::from_str_radix(parts.next().unwrap(), 16).unwrap();
        let w = u32::from_str_radix(parts.next().unwrap(), 16).unwrap();
        let src = parts.next().unwrap();
        forms.insert(src.split(' ').next().unwrap().to_string());
        let short = decode16(c);
        let long = decode32(w);
        assert_ne!(short.op, Op::Illegal, "{src}: {c:04x} decoded as illegal");
        assert_eq!(short.len, 2, "{src}");
        assert_eq!(long.len, 4, "{src}");
        assert_eq!(
            rvsim::decode::Decoded { len: 4, ..short },
            long,
            "{src}: {c:04x} vs expansion {w:08x}"
        );
    }
    // All 27 RV32C integer forms (c.nop included; c.flw & co. need an FPU).
    assert_eq!(forms.len(), 27, "{forms:?}");
}

#[test]
fn reserved_and_floating_point_compressed_encodings_are_illegal() {
    let cases = [
        (0x0000, "all zero"),
        (0x0004, "c.addi4spn with immediate 0"),
        (0x4002, "c.lwsp rd=x0"),
        (0x8002, "c.jr rs1=x0"),
        (0x6101, "c.addi16sp immediate 0"),
        (0x6081, "c.lui immediate 0"),
        (0x9001, "c.srli shamt[5]=1"),
        (0x9401, "c.srai shamt[5]=1"),
        (0x1002, "c.slli shamt[5]=1"),
        (0x9c01, "c.subw (RV64 only)"),
        (0x2000, "c.fld"),
        (0x6000, "c.flw"),
        (0xa000, "c.fsd"),
        (0xe000, "c.fsw"),
        (0x2002, "c.fldsp"),
        (0x6002, "c.flwsp"),
        (0x8000, "quadrant 0 funct3 100"),
    ];
    for (h, what) in cases {
        assert_eq!(decode16(h).op, Op::Illegal, "{what}: {h:04x}");
    }
    // On an RV32IM machine every 16-bit encoding is illegal.
    assert_eq!(decode(0x4501, false).op, Op::Illegal); // c.li a0, 0
    assert_eq!(decode(0x4501, true).op, Op::Addi);
}

#[test]
fn reserved_32bit_encodings_are_illegal() {
    for w in [
        0xffff_ffffu32,
        0x0000_3003,             // load funct3 3 (ld, RV64)
        0x0200_1013,             // slli with imm[5]=1
        0x4000_0033 | (1 << 12), // sll with funct7 0x20
        0x0000_4073,             // system funct3 4
        0x0020_0073,             // unknown system instruction
        0x0000_2063,             // branch funct3 2
    ] {
        let d = decode32(w);
        assert_eq!(d.op, Op::Illegal, "{w:08x}");
        assert_eq!(d.imm as u32, w, "raw bits kept for mtval");
    }
}

/// Executes `op rd=x3, rs1=x1, rs2=x2` with the given operands and returns x3.
fn exec(insn: u32, a: u32, bv: u32) -> u32 {
    let mut words = vec![];
    // x1 = a, x2 = bv via lui/addi pairs.
    for (reg, v) in [(1u32, a), (2, bv)] {
        let hi = v.wrapping_add(0x800) >> 12;
        words.push((hi << 12) | (reg << 7) | 0x37);
        words.push(addi(reg, reg, ((v & 0xfff) as i32) << 20 >> 20));
    }
    words.push(insn);
    words.extend(EXIT);
    run(&words, &Config::default()).regs[3]
}

#[test]
fn each_alu_and_muldiv_instruction_computes_its_result() {
    let rr = |f7, f3| r([f7, 2, 1, f3, 3, 0x33]);
    let ii = |f3, imm| i(imm, 1, f3, 3, 0x13);
    let m = 0x8000_0000u32;
    let cases: &[(&str, u32, u32, u32, u32)] = &[
        ("add", rr(0, 0), 7, 0xffff_fffe, 5),
        ("sub", rr(0x20, 0), 5, 7, 0xffff_fffe),
        ("sll", rr(0, 1), 3, 33, 6),
        ("slt", rr(0, 2), 0xffff_ffff, 0, 1),
        ("sltu", rr(0, 3), 0xffff_ffff, 0, 0),
        ("xor", rr(0, 4), 0b1100, 0b1010, 0b0110),
        ("srl", rr(0, 5), m, 31, 1),
        ("sra", rr(0x20, 5), m, 31, 0xffff_ffff),
        ("or", rr(0, 6), 0b1100, 0b1010, 0b1110),
        ("and", rr(0, 7), 0b1100, 0b1010, 0b1000),
        ("mul", rr(1, 0), 0xffff_ffff, 0xffff_ffff, 1),
        ("mulh", rr(1, 1), m, m, 0x4000_0000),
        ("mulhsu", rr(1, 2), 0xffff_ffff, 2, 0xffff_ffff),
        ("mulhu", rr(1, 3), m, 4, 2),
        ("div", rr(1, 4), 0xffff_fff9, 2, 0xffff_fffd),
        ("div by 0", rr(1, 4), 5, 0, 0xffff_ffff),
        ("div overflow", rr(1, 4), m, 0xffff_ffff, m),
        ("divu", rr(1, 5), 0xffff_fff9, 2, 0x7fff_fffc),
        ("divu by 0", rr(1, 5), 5, 0, 0xffff_ffff),
        ("rem", rr(1, 6), 0xffff_fff9, 2, 0xffff_ffff),
        ("rem by 0", rr(1, 6), 5, 0, 5),
        ("rem overflow", rr(1, 6), m, 0xffff_ffff, 0),
        ("remu", rr(1, 7), 7, 4, 3),
        ("remu by 0", rr(1, 7), 7, 0, 7),
        ("addi", ii(0, -3), 2, 0, 0xffff_ffff),
        ("slti", ii(2, -1), 0xffff_fffe, 0, 1),
        ("sltiu", ii(3, -1), 5, 0, 1),
        ("xori", ii(4, -1), 0x0f, 0, 0xffff_fff0),
        ("ori", ii(6, 0x100), 1, 0, 0x101),
        ("andi", ii(7, 0xff), 0x1234, 0, 0x34),
        ("slli", ii(1, 4), 0x1, 0, 0x10),
        ("srli", ii(5, 4), m, 0, 0x0800_0000),
        ("srai", ii(5, 0x404), m, 0, 0xf800_0000),
        ("lui", (0xabcde << 12) | (3 << 7) | 0x37, 0, 0, 0xabcd_e000),
    ];
    for &(name, insn, a, bv, want) in cases {
        assert_eq!(exec(insn, a, bv), want, "{name}");
    }
}
