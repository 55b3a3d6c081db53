//! The disassembler against GNU objdump (`riscv64-unknown-elf-objdump -d`): every instruction
//! of every riscv-tests ELF in `../shared/riscv-tests/elf` and of the committed programs, then
//! every 16-bit encoding and a large sample of 32-bit encodings of each major opcode (through
//! `objdump -b binary`). Where objdump prints an instruction, the disassembler must print the
//! same mnemonic and operands (objdump's `<symbol>` suffix and `#` comments aside); where it
//! prints an unknown word (`.word`, `.short`, `.insn`), the encoding is skipped. Encodings that
//! objdump names but that are not instructions of this machine (F/D, Zb*, ...) must be ones
//! the machine decodes as illegal, and the disassembler must print them as unknown words.
//!
//! objdump comes with the cross toolchain (Debian's gcc-riscv64-unknown-elf). Without it the
//! test says why and passes, except when `RVSIM_REQUIRE_OBJDUMP=1` (set by CI, which installs
//! the toolchain): then it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::Rng;
use rvsim::decode::{decode, Op};
use rvsim::disasm::disassemble;

const OBJDUMP: &str = "riscv64-unknown-elf-objdump";

fn objdump_available() -> bool {
    let found = Command::new(OBJDUMP)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let required = std::env::var("RVSIM_REQUIRE_OBJDUMP").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "{OBJDUMP} is not installed but RVSIM_REQUIRE_OBJDUMP=1 (install gcc-riscv64-unknown-elf)"
        );
        eprintln!("skipped: {OBJDUMP} is not installed (Debian: gcc-riscv64-unknown-elf)");
    }
    found
}

/// One disassembled line of objdump: address, instruction bits, and the text after them.
struct Line {
    addr: u32,
    bits: u32,
    text: String,
}

/// Parses `objdump -d` output: `addr:\tHEX \tmnemonic\toperands[ # comment]`.
fn parse(listing: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for line in listing.lines() {
        let mut cols = line.split('\t');
        let (Some(addr), Some(hex), Some(mnem)) = (cols.next(), cols.next(), cols.next()) else {
            continue;
        };
        let Some(addr) = addr.trim().strip_suffix(':') else {
            continue;
        };
        let (Ok(addr), Ok(bits)) = (
            u32::from_str_radix(addr, 16),
            u32::from_str_radix(hex.trim(), 16),
        ) else {
            continue;
        };
        let ops = cols.next().unwrap_or("");
        // Drop objdump's comment (`# 80001000 <tohost>`) and symbol suffixes (`<main+0x4>`).
        let ops = ops.split(" #").next().unwrap_or("");
        let ops = match ops.find(" <") {
            Some(i) => &ops[..i],
            None => ops,
        };
        let text = if ops.is_empty() {
            mnem.trim().to_string()
        } else {
            format!("{} {}", mnem.trim(), ops.trim())
        };
        out.push(Line { addr, bits, text });
    }
    out
}

#[derive(Default)]
struct Tally {
    compared: usize,
    unknown_to_objdump: usize,
    outside_isa: usize,
    mismatches: Vec<String>,
}

impl Tally {
    fn check(&mut self, where_: &str, l: &Line) {
        let ours = disassemble(l.bits, l.addr);
        if l.text.starts_with('.') {
            self.unknown_to_objdump += 1;
            return;
        }
        let compressed = l.bits & 3 != 3;
        let illegal_here = decode(l.bits, true).op == Op::Illegal;
        if ours.starts_with('.') && illegal_here {
            // objdump knows it, this machine does not (F, D, Zb*, hypervisor...).
            self.outside_isa += 1;
            return;
        }
        self.compared += 1;
        if ours != l.text && self.mismatches.len() < 40000 {
            self.mismatches.push(format!(
                "{where_} {:08x}: {:0w$x}  objdump `{}`, ours `{ours}`",
                l.addr,
                l.bits,
                l.text,
                w = if compressed { 4 } else { 8 }
            ));
        }
    }

    fn assert_clean(&self, what: &str) {
        println!(
            "{what}: {} instructions compared, {} unknown to objdump skipped, {} outside RV32IMAC+Zicsr",
            self.compared, self.unknown_to_objdump, self.outside_isa
        );
        assert!(self.compared > 0, "{what}: nothing compared");
        assert!(
            self.mismatches.is_empty(),
            "{what}: {} differences from objdump (first 40):\n{}",
            self.mismatches.len(),
            self.mismatches[..self.mismatches.len().min(40)].join("\n")
        );
    }
}

fn elfs_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

fn objdump(args: &[&str], file: &Path) -> String {
    let out = Command::new(OBJDUMP)
        .args(args)
        .arg(file)
        .output()
        .expect("running objdump");
    assert!(out.status.success(), "objdump failed on {}", file.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_instruction_of_the_riscv_tests_and_programs_reads_as_objdump_prints_it() {
    if !objdump_available() {
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let suite = root.join("../../../shared/riscv-tests/elf");
    assert!(suite.is_dir(), "missing {}", suite.display());
    let mut files = elfs_in(&suite);
    assert_eq!(files.len(), 77, "expected the 77 riscv-tests ELFs");
    files.extend(elfs_in(&root.join("programs/elf")));
    let mut tally = Tally::default();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        for l in parse(&objdump(&["-d"], f)) {
            tally.check(&name, &l);
        }
    }
    tally.assert_clean("ELF files");
}

#[test]
fn every_16_bit_encoding_and_a_sample_of_32_bit_ones_read_as_objdump_prints_them() {
    if !objdump_available() {
        return;
    }
    // Every 16-bit encoding (quadrants 0-2), then 32-bit words of each major opcode with
    // random fields, all laid out as one flat image at address 0.
    let mut image: Vec<u8> = Vec::new();
    for h in 0..=0xffffu32 {
        if h & 3 != 3 {
            image.extend_from_slice(&(h as u16).to_le_bytes());
        }
    }
    let opcodes = [
        0x37, 0x17, 0x6f, 0x67, 0x63, 0x03, 0x23, 0x13, 0x33, 0x2f, 0x0f, 0x73,
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for &op in &opcodes {
        for _ in 0..4000 {
            let w = ((rng.next() >> 16) as u32 & !0x7f) | op;
            image.extend_from_slice(&w.to_le_bytes());
        }
    }
    // Every CSR under each of the six instructions, with rd and rs1/uimm both zero and not.
    for csr in 0..4096u32 {
        for f3 in [1u32, 2, 3, 5, 6, 7] {
            for (rd, rs1) in [(0u32, 0u32), (10, 0), (0, 11), (10, 11)] {
                let w = (csr << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | 0x73;
                image.extend_from_slice(&w.to_le_bytes());
            }
        }
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("disasm-sample-{}.bin", std::process::id()));
    std::fs::write(&path, &image).unwrap();
    let listing = objdump(&["-D", "-b", "binary", "-m", "riscv:rv32"], &path);
    std::fs::remove_file(&path).unwrap();
    let mut tally = Tally::default();
    let mut lines = parse(&listing);
    assert!(lines.len() > 60_000, "objdump listed {} lines", lines.len());
    for l in &mut lines {
        // Without symbols objdump writes targets as 0x...: the ELF form has no prefix.
        if l.text.starts_with('b') || l.text.starts_with('j') {
            l.text = l.text.replace(",0x", ",").replace(" 0x", " ");
        }
        tally.check("sample", l);
    }
    tally.assert_clean("encodings");
}
