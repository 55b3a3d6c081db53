//! Per-cycle counting (`FetchCount::PerCycle`, Ripes' convention) on hand-written programs
//! whose cycles and I-cache reads are worked out by hand in the comments. `tests/ripes.rs`
//! checks the same model against Ripes itself.

mod common;
use common::*;
use rvsim::{CacheConfig, Config, FetchCount, Machine, Program, Stop};

fn per_cycle() -> Config {
    Config {
        icache: Some(CacheConfig::parse("sets=8,ways=1,words=2").unwrap()),
        pipeline: true,
        count: FetchCount::PerCycle,
        ..Config::default()
    }
}

/// (cycles, hits, misses) of a run that must end with `want`.
fn counts(words: &[u32], cfg: &Config, want: Stop) -> (u64, u64, u64) {
    let mut m = machine(words, cfg);
    assert_eq!(m.run(), want);
    let s = m.stats();
    let ic = s.icache.unwrap();
    (s.pipeline.unwrap().cycles(), ic.hits, ic.misses)
}

#[test]
fn an_ecall_waits_for_older_register_writes_and_the_front_end_reads_on() {
    // addi, addi, addi a7, ecall: in EX in cycles 2, 3, 4; the ecall enters EX in 5 and
    // waits until `addi a7` (EX in 4) has left WB: EX in 7, the end 3 cycles later (10).
    // Reads: 4 instructions and 5 more behind the ecall (0x10..0x20), 2 stall re-reads.
    // 8-byte lines: 0x00 0x08 0x10 0x18 0x20 miss; 0x04 0x0c 0x14 0x1c and both re-reads hit.
    let prog = [addi(5, 0, 1), addi(6, 0, 2), EXIT[0], EXIT[1]];
    assert_eq!(counts(&prog, &per_cycle(), Stop::Exit(0)), (10, 6, 5));
    let mut m = machine(&prog, &per_cycle());
    m.run();
    assert_eq!(m.stats().pipeline.unwrap().ecall_stalls, 2);
}

#[test]
fn a_load_stalls_an_immediate_that_names_its_register() {
    // Ripes compares the load's rd with bits 24:20 of the next instruction whatever its
    // format: `addi x6, x0, 5` after a load into x5 waits a cycle, `addi x6, x0, 4` does not.
    let load = i(0, 2, 2, 5, 0x03); // lw x5, 0(sp)
    let stall = |imm| {
        let mut m = machine(&[load, addi(6, 0, imm), EXIT[0], EXIT[1]], &per_cycle());
        m.run();
        m.stats().pipeline.unwrap().load_use_stalls
    };
    assert_eq!((stall(5), stall(4)), (1, 0));
    // The per-instruction count looks at the registers the instruction reads.
    let default = Config {
        pipeline: true,
        ..Config::default()
    };
    let mut m = machine(&[load, addi(6, 0, 5), EXIT[0], EXIT[1]], &default);
    m.run();
    assert_eq!(m.stats().pipeline.unwrap().load_use_stalls, 0);
}

#[test]
fn a_taken_branch_reads_the_two_instructions_behind_it() {
    // beq x0, x0, +12 over two instructions to `addi a7; ecall`: the branch (EX in 2)
    // flushes 2, addi a7 in EX in 5, the ecall waits 2 (EX in 8): 11 cycles. Reads: 0x00,
    // the wrong-path 0x04 and 0x08, then 0x0c, 0x10 and 5 behind (0x14..0x24), 2 re-reads:
    // misses at 0x00 0x08 0x10 0x18 0x20.
    let prog = [
        beq(0, 0, 12),
        addi(5, 0, 1),
        addi(5, 0, 2),
        EXIT[0],
        EXIT[1],
    ];
    assert_eq!(counts(&prog, &per_cycle(), Stop::Exit(0)), (11, 7, 5));
    // Counted per instruction, the wrong path is not read: 3 accesses.
    let default = Config {
        count: FetchCount::PerInstruction,
        ..per_cycle()
    };
    let mut m = machine(&prog, &default);
    m.run();
    assert_eq!(m.stats().icache.unwrap().accesses, 3);
}

#[test]
fn a_return_to_zero_ends_without_its_flush_and_reads_outside_memory() {
    // addi, ret (to 0): EX in 2 and 3; the pipeline is empty 3 cycles later (6), the ret's
    // flush overlapping the drain. Reads: 0x00 0x04, the wrong path 0x08 0x0c, then address 0
    // and on (0, 4, 8: outside memory, where nothing is, so 4-byte steps): 7 = 6 + 1.
    let prog = [addi(5, 0, 1), jalr(0, 1, 0)];
    assert_eq!(
        counts(&prog, &per_cycle(), Stop::ReturnToZero(0)),
        (6, 3, 4)
    );
    let default = Config {
        count: FetchCount::PerInstruction,
        ..per_cycle()
    };
    let mut m = machine(&prog, &default);
    m.run();
    assert_eq!(m.stats().pipeline.unwrap().cycles(), 8);
}

#[test]
fn every_cycle_is_one_read_and_reset_one_more() {
    // Loads, uses, branches both ways, a loop: whatever the program, reads = cycles + 1.
    let mut rng = Rng(0x5eed);
    for _ in 0..50 {
        let mut prog = vec![addi(6, 0, 3)];
        for _ in 0..(rng.next() % 20) {
            prog.push(match rng.next() % 4 {
                0 => i(0, 2, 2, 5, 0x03),
                1 => add(7, 5, 6),
                2 => bne(5, 6, 8),
                _ => addi(5, 5, (rng.next() % 32) as i32),
            });
        }
        prog.extend([addi(6, 6, -1), bne(6, 0, -4), EXIT[0], EXIT[1]]);
        let mut m = machine(&prog, &per_cycle());
        m.run();
        let s = m.stats();
        let ic = s.icache.unwrap();
        assert_eq!(ic.accesses, s.pipeline.unwrap().cycles() + 1);
        assert_eq!(s.straddling_fetches, 0);
    }
}

#[test]
fn per_cycle_counting_needs_the_pipeline_and_no_miss_penalty() {
    let program = Program::from_code(BASE, &code(&EXIT));
    for cfg in [
        Config {
            pipeline: false,
            ..per_cycle()
        },
        Config {
            miss_penalty: 5,
            ..per_cycle()
        },
    ] {
        let err = Machine::new(&cfg, &program).err().expect("refused");
        assert!(err.to_string().contains("per-cycle"), "{err}");
    }
}

#[test]
fn a_register_shift_by_32_or_more_is_where_ripes_differs() {
    // Ripes v2.2.6 shifts by all of rs2 where RV32 shifts by rs2[4:0] (see
    // `ripes_register_shift`), so a register shift by 32 to 63 gives another value there,
    // and a branch on it can go the other way. Here each of `sll`, `sra`, `srl` by 35 feeds a
    // branch over an `addi x28` that Ripes takes and RV32 does not; `sll` by 67 is by 3 in
    // both. Ripes itself on this program (assembled at 0x8000_0000, `run.sh -i 8,1,2,lru`):
    // 28 cycles, 17 hits, 12 misses, x28 = 8 (only the last `addi` ran). The model keeps
    // RV32's shifts (x28 = 1 + 2 + 4 + 8); with Ripes' shifts put in, it counts as Ripes does.
    let (sll, srl, sra) = (
        |rd, rs1, rs2| r([0, rs2, rs1, 1, rd, 0x33]),
        |rd, rs1, rs2| r([0, rs2, rs1, 5, rd, 0x33]),
        |rd, rs1, rs2| r([0x20, rs2, rs1, 5, rd, 0x33]),
    );
    let prog = [
        addi(5, 0, 7),
        addi(6, 0, 35),
        sll(7, 5, 6),
        beq(7, 0, 8),
        addi(28, 28, 1),
        lui(9, 0x80000),
        sra(7, 9, 6),
        addi(29, 0, -1),
        beq(7, 29, 8),
        addi(28, 28, 2),
        srl(7, 9, 6),
        beq(7, 0, 8),
        addi(28, 28, 4),
        addi(6, 0, 67),
        sll(7, 5, 6),
        beq(7, 0, 8),
        addi(28, 28, 8),
        EXIT[0],
        EXIT[1],
    ];
    let cfg = per_cycle();
    let mut m = machine(&prog, &cfg);
    assert_eq!(m.run(), Stop::Exit(0));
    assert_eq!(m.regs[28], 15);
    let s = m.stats();
    let ic = s.icache.unwrap();
    assert_eq!(
        (s.pipeline.unwrap().cycles(), ic.hits, ic.misses),
        (25, 14, 12)
    );

    let mut m = machine(&prog, &cfg);
    assert_eq!(run_with_ripes_shifts(&mut m), (Stop::Exit(0), 3));
    assert_eq!(m.regs[28], 8);
    let s = m.stats();
    let ic = s.icache.unwrap();
    assert_eq!(
        (s.pipeline.unwrap().cycles(), ic.hits, ic.misses),
        (28, 17, 12)
    );
}
