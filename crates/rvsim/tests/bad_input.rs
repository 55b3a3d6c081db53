//! Bad input gives a one-line error naming what is wrong, never a panic: ELF files of the wrong
//! kind or layout, programs that jump out of memory, trap without a handler or never exit.

mod common;
use common::*;
use rvsim::{Config, Machine, Program, SimError};

/// A minimal ELF32 LE RISC-V executable with the given (paddr, file bytes, memsz) segments.
fn elf(segments: &[(u32, &[u8], u32)]) -> Vec<u8> {
    let phoff = 52u32;
    let data_start = phoff + 32 * segments.len() as u32;
    let mut out = vec![0u8; data_start as usize];
    out[0..4].copy_from_slice(b"\x7fELF");
    out[4] = 1; // 32-bit
    out[5] = 1; // little-endian
    out[6] = 1;
    let put16 =
        |o: &mut Vec<u8>, at: usize, v: u16| o[at..at + 2].copy_from_slice(&v.to_le_bytes());
    let put32 =
        |o: &mut Vec<u8>, at: usize, v: u32| o[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put16(&mut out, 16, 2); // ET_EXEC
    put16(&mut out, 18, 243); // EM_RISCV
    put32(&mut out, 20, 1);
    put32(&mut out, 24, segments.first().map_or(BASE, |s| s.0));
    put32(&mut out, 28, phoff);
    put16(&mut out, 40, 52);
    put16(&mut out, 42, 32);
    put16(&mut out, 44, segments.len() as u16);
    put16(&mut out, 46, 40);
    let mut offset = data_start;
    for (n, (addr, bytes, memsz)) in segments.iter().enumerate() {
        let ph = 52 + 32 * n;
        put32(&mut out, ph, 1); // PT_LOAD
        put32(&mut out, ph + 4, offset);
        put32(&mut out, ph + 8, *addr);
        put32(&mut out, ph + 12, *addr);
        put32(&mut out, ph + 16, bytes.len() as u32);
        put32(&mut out, ph + 20, *memsz);
        put32(&mut out, ph + 24, 7);
        offset += bytes.len() as u32;
    }
    for (_, bytes, _) in segments {
        out.extend_from_slice(bytes);
    }
    out
}

fn elf_error(bytes: &[u8]) -> String {
    match Program::from_elf(bytes) {
        Err(SimError::Elf(m)) => m,
        other => panic!("expected an ELF error, got {other:?}"),
    }
}

#[test]
fn a_hand_made_elf_loads_and_runs() {
    let prog = code(&[addi(10, 0, 7), EXIT[0], EXIT[1]]);
    let p = Program::from_elf(&elf(&[(BASE, &prog, 64)])).unwrap();
    assert_eq!(p.entry, BASE);
    let mut m = Machine::new(&Config::default(), &p).unwrap();
    assert_eq!(m.run().unwrap(), 7);
}

#[test]
fn wrong_kinds_of_file_are_named() {
    let good = elf(&[(BASE, &code(&EXIT), 8)]);
    assert!(elf_error(b"#!/bin/sh\necho hi\n").contains("not an ELF"));
    assert!(elf_error(b"").contains("not an ELF"));
    let mut b = good.clone();
    b[4] = 2;
    assert!(elf_error(&b).contains("64-bit"));
    let mut b = good.clone();
    b[5] = 2;
    assert!(elf_error(&b).contains("big-endian"));
    let mut b = good.clone();
    b[18] = 62; // x86-64
    assert!(elf_error(&b).contains("not RISC-V"));
    let mut b = good.clone();
    b[16] = 1; // ET_REL
    assert!(elf_error(&b).contains("not an executable"));
    let real = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/elf/selftest-rv32imc.elf"
    ))
    .unwrap();
    assert!(Program::from_elf(&real).is_ok());
    let err = elf_error(&real[..real.len() / 8]);
    assert!(err.contains("truncated") || err.contains("parse"), "{err}");
}

#[test]
fn truncated_and_overlapping_segments_are_rejected() {
    let mut b = elf(&[(BASE, &[0u8; 64], 64)]);
    b.truncate(b.len() - 10);
    assert!(elf_error(&b).contains("segment 0 is truncated"));
    let b = elf(&[(BASE, &[0u8; 16], 32), (BASE + 16, &[0u8; 16], 16)]);
    let err = elf_error(&b);
    assert!(
        err.contains("overlap") && err.contains("0x80000010"),
        "{err}"
    );
    let b = elf(&[(BASE, &[0u8; 16], 8)]);
    assert!(elf_error(&b).contains("more file bytes"));
}

#[test]
fn a_program_outside_memory_is_refused() {
    let p = Program::from_code(0x1000, &code(&EXIT));
    let err = Machine::new(&Config::default(), &p)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("0x00001000") && err.contains("does not fit"),
        "{err}"
    );
}

fn run_err(words: &[u32], cfg: &Config) -> String {
    machine(words, cfg).run().unwrap_err().to_string()
}

#[test]
fn runtime_failures_name_the_pc() {
    // Jump to address 0: nothing is there and no handler is installed.
    let err = run_err(&[i(0, 0, 0, 0, 0x67)], &Config::default());
    assert_eq!(
        err,
        "instruction access fault (jump outside memory) at pc 0x00000000 (mtval 0x00000000) and no trap handler (mtvec = 0x00000000)"
    );
    let err = run_err(&[addi(1, 0, 1), ILLEGAL], &Config::default());
    assert!(
        err.starts_with("illegal instruction at pc 0x80000004 (mtval 0xffffffff)"),
        "{err}"
    );
    let err = run_err(&[0x0010_0073], &Config::default());
    assert!(
        err.starts_with("breakpoint (ebreak) at pc 0x80000000"),
        "{err}"
    );
    let cfg = Config {
        max_instructions: 1000,
        ..Config::default()
    };
    let err = run_err(&[jal(0, 0)], &cfg);
    assert!(
        err.contains("did not exit after 1000 instructions (pc 0x80000000)"),
        "{err}"
    );
}

#[test]
fn bad_machine_parameters_are_named() {
    let p = Program::from_code(BASE, &code(&EXIT));
    for (cfg, needle) in [
        (
            Config {
                ram_size: 3,
                ..Config::default()
            },
            "memory size 3",
        ),
        (
            Config {
                ram_base: 0x0200_0000,
                ..Config::default()
            },
            "overlaps the timer",
        ),
        (
            Config {
                timer_interval: Some(0),
                ..Config::default()
            },
            "timer interval",
        ),
    ] {
        let err = Machine::new(&cfg, &p).err().unwrap().to_string();
        assert!(err.contains(needle), "{err}");
    }
}
