//! Bad input gives a one-line error naming what is wrong, never a panic: ELF files of the wrong
//! kind or layout, programs that jump out of memory, trap without a handler or never exit.

mod common;
use common::*;
use rvsim::{Config, Machine, Program, SimError, Stop};

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
    assert_eq!(m.run(), Stop::Exit(7));
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
fn a_real_elf_cut_short_says_what_it_cuts_off_in_words() {
    let real = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/elf/loop-rv32imc.elf"
    ))
    .unwrap();
    for n in [20, 51] {
        let err = elf_error(&real[..n]);
        assert!(
            err.starts_with(&format!("truncated: {n} bytes, shorter than")),
            "{err}"
        );
    }
    let cut = [
        (52, "program"),
        (60, "program"),
        (3000, "section"),
        (real.len() - 1, "section"),
    ];
    for (n, table) in cut {
        let err = elf_error(&real[..n]);
        assert!(
            err.starts_with(&format!(
                "truncated: its {table} header table ends at byte "
            )) && err.contains(&format!(", the file has {n} (was it cut short")),
            "{n}: {err}"
        );
        assert!(!err.contains("0x") && !err.contains("range ["), "{err}");
    }
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
fn a_program_runs_at_its_own_address_with_memory_sized_from_it() {
    let p = Program::from_code(0x1_0004, &code(&[addi(10, 0, 5), EXIT[0], EXIT[1]]));
    let mut m = Machine::new(&Config::default(), &p).unwrap();
    let (base, size) = m.memory();
    assert_eq!(
        base, 0x1_0000,
        "memory starts at the page of the lowest segment"
    );
    assert_eq!(size, 4096 + rvsim::machine::DEFAULT_STACK);
    assert_eq!(m.regs[2], base + size - 16, "sp at the top of memory");
    assert_eq!(m.run(), Stop::Exit(5));
    // An explicit memory size is used as is, and one too small for the program is refused.
    let cfg = Config {
        memory: Some(1 << 30),
        ..Config::default()
    };
    let m = Machine::new(&cfg, &p).unwrap();
    assert_eq!(m.memory(), (0x1_0000, 1 << 30));
    assert!(m.predecoded_bytes() == 0, "nothing decoded before running");
    let cfg = Config {
        memory: Some(8),
        ..Config::default()
    };
    let err = Machine::new(&cfg, &p).err().unwrap().to_string();
    assert!(err.contains("too small"), "{err}");
}

#[test]
fn segments_too_far_apart_or_on_the_timer_are_refused() {
    let far = elf(&[(0x1000, &code(&EXIT), 8), (0x8000_0000, &[0u8; 4], 4)]);
    let p = Program::from_elf(&far).unwrap();
    let err = Machine::new(&Config::default(), &p)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("at most 1 GiB"), "{err}");
    let p = Program::from_code(0x0200_0000, &code(&EXIT));
    let err = Machine::new(&Config::default(), &p)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("overlap the timer"), "{err}");
    // Memory that covers the timer is fine, unless a timer interrupt is asked for.
    let p = Program::from_code(0x1_0000, &code(&EXIT));
    let cfg = Config {
        memory: Some(1 << 30),
        timer_interval: Some(10),
        ..Config::default()
    };
    let err = Machine::new(&cfg, &p).err().unwrap().to_string();
    assert!(err.contains("covers the timer"), "{err}");
}

#[test]
fn every_ending_is_stated() {
    let run = |words: &[u32], cfg: &Config| machine(words, cfg).run();
    // Jump to address 0 outside memory: the return from a main entered with ra = 0.
    assert_eq!(
        run(&[addi(10, 0, 3), i(0, 0, 0, 0, 0x67)], &Config::default()),
        Stop::ReturnToZero(3)
    );
    assert_eq!(
        run(&[addi(1, 0, 1), ILLEGAL], &Config::default()),
        Stop::Trap {
            cause: 2,
            pc: 0x8000_0004,
            tval: 0xffff_ffff
        }
    );
    assert_eq!(
        run(&[0x0010_0073], &Config::default()),
        Stop::Ebreak { pc: 0x8000_0000 }
    );
    let cfg = Config {
        max_instructions: 1000,
        ..Config::default()
    };
    let stop = run(&[jal(0, 0)], &cfg);
    assert_eq!(
        stop,
        Stop::Limit {
            limit: 1000,
            pc: 0x8000_0000
        }
    );
    let mut m = machine(&[jal(0, 0)], &cfg);
    m.run();
    assert_eq!(
        m.stats().instret,
        1000,
        "statistics up to the limit are kept"
    );
    // An ecall that is neither write nor exit, with no handler: an unhandled trap.
    let stop = run(&[addi(17, 0, 1), ECALL], &Config::default());
    assert!(matches!(stop, Stop::Trap { cause: 11, .. }), "{stop}");
}

#[test]
fn ecall_traps_to_an_installed_handler() {
    // mtvec = handler (at +16); ecall; (skipped) ; handler: a0 = mcause, clear mtvec, exit.
    let words = [
        auipc(5, 0),
        addi(5, 5, 16),
        csrw(0x305, 5),
        ECALL,
        csrr(10, 0x342),
        csrw(0x305, 0),
        EXIT[0],
        EXIT[1],
    ];
    assert_eq!(machine(&words, &Config::default()).run(), Stop::Exit(11));
}

#[test]
fn a_tohost_write_ends_the_run_with_its_status() {
    let mut p = Program::from_code(BASE, &code(&[auipc(5, 0), addi(6, 0, 5), sw(6, 5, 64)]));
    p.segments[0].mem_size = 128;
    p.symbols.insert("tohost".into(), BASE + 64);
    let stop = Machine::new(&Config::default(), &p).unwrap().run();
    assert_eq!(stop, Stop::Tohost(5));
    assert_eq!(stop.status(), Some(2));
    assert!(stop.to_string().contains("test case 2 failed"), "{stop}");
}

#[test]
fn bad_machine_parameters_are_named() {
    let p = Program::from_code(BASE, &code(&EXIT));
    for (cfg, needle) in [
        (
            Config {
                memory: Some(3),
                ..Config::default()
            },
            "too small",
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
