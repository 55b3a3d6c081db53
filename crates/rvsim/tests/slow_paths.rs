//! The block engine's slow paths, counted rather than timed: stores into a page that holds
//! code, code that rewrites itself, `fence.i` and trap loops. Each test runs a loop of a
//! known number of rounds and bounds what the engine did for it ([`EngineCounts`]): blocks
//! built and killed, blocks cut short, instructions left to the reference engine, batches.
//! An engine that rebuilds or cuts a block, or starts a batch, every round (what makes such
//! loops run at a few MIPS) fails these bounds, which do not grow with the rounds.
//! Every run is also compared with the reference engine: same ending, registers, memory and
//! counts.

mod common;

use common::*;
use rvsim::{Config, Engine, EngineCounts, Machine, Program, Stop};

const ROUNDS: u32 = 1000;

fn xor(rd: u32, rs1: u32, rs2: u32) -> u32 {
    r([0, rs2, rs1, 4, rd, 0x33])
}
fn slli(rd: u32, rs1: u32, shamt: i32) -> u32 {
    i(shamt, rs1, 1, rd, 0x13)
}

/// Runs `program` on both engines with `cfg`, requires the same ending, registers, memory and
/// statistics, and returns the block engine's machine.
fn both(program: &Program, cfg: &Config) -> Machine {
    let run = |engine| {
        let cfg = Config {
            engine,
            ..cfg.clone()
        };
        let mut m = Machine::new(&cfg, program).unwrap();
        let stop = m.run();
        (stop, m)
    };
    let (stop, m) = run(Engine::Blocks);
    let (ref_stop, r) = run(Engine::Reference);
    assert!(matches!(stop, Stop::Exit(_)), "{stop}");
    assert_eq!(stop, ref_stop);
    assert_eq!(m.regs, r.regs);
    assert_eq!(m.stats(), r.stats());
    assert!(m.memory_contents() == r.memory_contents());
    m
}

fn configs() -> Vec<Config> {
    let ic = rvsim::CacheConfig::parse("sets=8,ways=1,words=2").unwrap();
    let dc = rvsim::CacheConfig::parse("sets=16,ways=2,words=4").unwrap();
    vec![
        Config::default(),
        Config {
            icache: Some(ic),
            dcache: Some(dc),
            pipeline: true,
            miss_penalty: 10,
            ..Config::default()
        },
    ]
}

fn program(words: &[u32]) -> Program {
    Program::from_code(BASE, &code(words))
}

/// A loop that stores a counter into a word of its own page, 1 KiB past the code.
fn data_in_the_code_page() -> Vec<u32> {
    let mut w = vec![auipc(13, 0), addi(20, 0, ROUNDS as i32)];
    w.extend([
        addi(10, 10, 1),
        sw(10, 13, 0x400),
        addi(20, 20, -1),
        bne(20, 0, -12),
    ]);
    w.extend(EXIT);
    w
}

#[test]
fn data_stores_into_a_page_with_code_stay_in_their_block() {
    for cfg in configs() {
        let m = both(&program(&data_in_the_code_page()), &cfg);
        let word = &m.memory_contents()[0x400..0x404];
        assert_eq!(word, ROUNDS.to_le_bytes());
        let c = m.engine_counts();
        // Each round's store stopping its block would make this ROUNDS.
        assert_eq!(c.cuts, 0, "{c:?}");
        assert!(c.reference_steps <= 2, "{c:?}");
    }
}

/// A loop that loads its own first instruction and stores it back, unchanged.
fn rewrites_itself_unchanged() -> Vec<u32> {
    let mut w = vec![auipc(12, 0), addi(12, 12, 12), addi(20, 0, ROUNDS as i32)];
    w.extend([
        addi(10, 10, 1),
        lw(11, 12, 0),
        sw(11, 12, 0),
        addi(20, 20, -1),
        bne(20, 0, -16),
    ]);
    w.extend(EXIT);
    w
}

#[test]
fn storing_the_bytes_already_there_kills_no_block() {
    for cfg in configs() {
        let m = both(&program(&rewrites_itself_unchanged()), &cfg);
        assert_eq!(m.regs[10], ROUNDS);
        let c = m.engine_counts();
        // Forgetting the unchanged instruction would kill and build a block every round.
        assert_eq!(c.blocks_killed, 0, "{c:?}");
        assert!(c.blocks_built <= 4, "{c:?}");
    }
}

/// A loop whose first instruction, `addi a0, a0, imm`, is rewritten every round with the
/// round's count (low 11 bits) as the immediate.
fn rewrites_itself() -> Vec<u32> {
    let mut w = li(13, addi(10, 10, 0)).to_vec();
    w.extend([auipc(12, 0), addi(12, 12, 12), addi(20, 0, ROUNDS as i32)]);
    w.extend([
        addi(10, 10, 0),
        andi(11, 20, 0x7ff),
        slli(11, 11, 20),
        add(11, 11, 13),
        sw(11, 12, 0),
        addi(20, 20, -1),
        bne(20, 0, -24),
    ]);
    w.extend(EXIT);
    w
}

#[test]
fn code_that_keeps_changing_is_left_to_the_reference_engine() {
    // Round k (from 0) adds what round k - 1 wrote: the count before it, ROUNDS - (k - 1).
    let want: u32 = (1..ROUNDS).map(|k| (ROUNDS - (k - 1)) & 0x7ff).sum();
    for cfg in configs() {
        let m = both(&program(&rewrites_itself()), &cfg);
        assert_eq!(m.regs[10], want, "the rewritten instruction did not run");
        let c = m.engine_counts();
        // Building blocks again after every change would make both about ROUNDS.
        assert!(c.blocks_built <= 40, "{c:?}");
        assert!(c.blocks_killed <= 40, "{c:?}");
        assert_eq!(c.volatile_chunks, 1, "{c:?}");
    }
}

/// A loop that calls a routine 1 KiB further into the same page and rewrites the routine's
/// first instruction every round (`addi a1, a1, 1` and `addi a1, a1, 2` in turn).
fn patches_another_chunk() -> Vec<u32> {
    let routine = 0x400;
    let mut w = vec![auipc(12, 0)];
    w.extend(li(13, addi(11, 11, 2)));
    w.extend(li(14, addi(11, 11, 1)));
    w.push(addi(20, 0, ROUNDS as i32));
    let lp = 4 * w.len() as i32;
    w.extend([
        jal(1, routine - lp),
        addi(10, 10, 1),
        sw(13, 12, routine),
        xor(13, 13, 14),
        xor(14, 13, 14),
        xor(13, 13, 14),
        addi(20, 20, -1),
        bne(20, 0, -28),
    ]);
    w.extend(EXIT);
    w.resize(routine as usize / 4, addi(0, 0, 0));
    w.extend([addi(11, 11, 1), jalr(0, 1, 0)]);
    w
}

#[test]
fn a_changed_instruction_kills_the_blocks_of_its_chunk_only() {
    for cfg in configs() {
        let m = both(&program(&patches_another_chunk()), &cfg);
        // Rounds alternate 1 and 2, starting with the original 1.
        assert_eq!(m.regs[11], ROUNDS / 2 * 3);
        let c = m.engine_counts();
        // Killing the whole page's blocks would kill the loop's own every round too. The
        // routine's chunk goes to the reference engine after a few changes, and the loop's
        // blocks stop before it and live on: what runs on the reference engine each round is
        // the routine (2 instructions) and the store into it.
        assert!(c.blocks_built <= 50, "{c:?}");
        assert_eq!(c.volatile_chunks, 1, "{c:?}");
        assert!(c.reference_steps <= 3 * ROUNDS as u64 + 60, "{c:?}");
    }
}

#[test]
fn fence_i_forgets_nothing_that_stores_did_not() {
    let mut w = vec![addi(20, 0, ROUNDS as i32)];
    w.extend([addi(10, 10, 1), FENCE_I, addi(20, 20, -1), bne(20, 0, -12)]);
    w.extend(EXIT);
    for cfg in configs() {
        let m = both(&program(&w), &cfg);
        let c = m.engine_counts();
        // A fence.i that forgot every block would kill and build them every round.
        assert_eq!(c.blocks_killed, 0, "{c:?}");
        assert!(c.blocks_built <= 4, "{c:?}");
    }
}

/// A loop of `ebreak`s, each returned from by a handler that steps mepc past it; with
/// `interrupts`, the timer interrupt enabled (mtimecmp never reached), so every `mret`
/// enables it again.
fn trap_loop(interrupts: bool) -> Vec<u32> {
    let handler = 0x40;
    let mut w = vec![auipc(5, 0), addi(5, 5, handler), csrw(0x305, 5)];
    if interrupts {
        w.extend([
            addi(7, 0, 0x80),
            csrw(0x304, 7),
            addi(7, 0, 8),
            csrw(0x300, 7),
        ]);
    }
    w.push(addi(20, 0, ROUNDS as i32));
    w.extend([EBREAK, addi(20, 20, -1), bne(20, 0, -8)]);
    // No handler: the exit call is served by the host.
    w.push(csrw(0x305, 0));
    w.extend(EXIT);
    w.resize(handler as usize / 4, addi(0, 0, 0));
    w.extend([csrr(6, 0x341), addi(6, 6, 4), csrw(0x341, 6), MRET]);
    w
}

#[test]
fn a_trap_loop_runs_in_one_batch() {
    for interrupts in [false, true] {
        for cfg in configs() {
            let m = both(&program(&trap_loop(interrupts)), &cfg);
            assert_eq!(m.stats().exceptions, ROUNDS as u64);
            let c: EngineCounts = m.engine_counts();
            // Ending the batch at the trap entry, the write of mepc and the mret would make
            // three batches a round, though none of them can make the timer fire sooner.
            assert!(c.batches <= 4, "interrupts {interrupts}: {c:?}");
            assert!(c.blocks_built <= 8, "{c:?}");
        }
    }
}

#[test]
fn a_timer_enabled_by_mret_with_mtimecmp_passed_fires_at_once_on_both_engines() {
    // The handler of the loop above, with mtimecmp 0: the first mret that enables the timer
    // must end the batch, and the interrupt come on the next step. The interrupt handler
    // (mcause negative) disables the timer interrupt and returns.
    let handler = 0x40;
    let mut w = vec![auipc(5, 0), addi(5, 5, handler), csrw(0x305, 5)];
    w.extend(li(8, 0x0200_4000));
    w.extend([sw(0, 8, 0), sw(0, 8, 4)]);
    w.extend([addi(7, 0, 0x80), csrw(0x304, 7)]);
    w.push(addi(20, 0, 50));
    w.extend([EBREAK, addi(20, 20, -1), bne(20, 0, -8)]);
    w.push(csrw(0x305, 0));
    w.extend(EXIT);
    w.resize(handler as usize / 4, addi(0, 0, 0));
    w.extend([
        csrr(6, 0x342),
        // mcause < 0, the interrupt: on to `addi x21` below, which counts it, and turn the
        // timer off.
        b(4 * 7, 0, 6, 4), // blt x6, x0
        csrr(6, 0x341),
        addi(6, 6, 4),
        csrw(0x341, 6),
        // ebreak: return with the timer enabled (mstatus.MPIE set).
        addi(7, 0, 0x80),
        i(0x300, 7, 2, 0, 0x73), // csrs mstatus, x7 (MPIE)
        MRET,
        addi(21, 21, 1),
        csrw(0x304, 0),
        MRET,
    ]);
    for cfg in configs() {
        let m = both(&program(&w), &cfg);
        let s = m.stats();
        assert_eq!((s.exceptions, s.interrupts), (50, 1), "{s:?}");
        assert_eq!(m.regs[21], 1);
    }
}

fn traploop() -> Program {
    let path = format!(
        "{}/programs/elf/traploop-rv32im.elf",
        env!("CARGO_MANIFEST_DIR")
    );
    Program::from_elf(&std::fs::read(&path).unwrap()).unwrap()
}

/// A trap loop runs on the reference engine; the time limit bounds it. These tests do not
/// depend on the host's speed: a bound of 0 s has passed at the first reading of the clock,
/// a bound of 1 ms long before 10^10 instructions, and where a run stops by time is always
/// a multiple of the steps between two readings (the clock is never read per instruction).
#[test]
fn time_limit_bounds_a_trap_loop() {
    let program = traploop();
    for engine in [Engine::Blocks, Engine::Reference] {
        for cfg in configs() {
            let cfg = Config {
                engine,
                time_limit: Some(std::time::Duration::ZERO),
                ..cfg
            };
            let mut m = Machine::new(&cfg, &program).unwrap();
            let stop = m.run();
            assert_eq!(
                stop,
                Stop::TimeLimit {
                    seconds: 0.0,
                    instructions: 0,
                    pc: program.entry
                }
            );
            assert_eq!((stop.kind(), stop.exit_code()), ("time-limit", 124));
            // Single steps read the clock too.
            let mut m = Machine::new(&cfg, &program).unwrap();
            assert!(matches!(m.step(), Some(Stop::TimeLimit { .. })));

            let cfg = Config {
                time_limit: Some(std::time::Duration::from_millis(1)),
                ..cfg
            };
            let mut m = Machine::new(&cfg, &program).unwrap();
            let Stop::TimeLimit {
                seconds,
                instructions,
                ..
            } = m.run()
            else {
                panic!("a trap loop of 10^10 instructions ended in under 1 ms");
            };
            assert_eq!(seconds, 0.001);
            assert_eq!(m.stats().steps, instructions);
            assert!(instructions > 0);
            assert_eq!(instructions % rvsim::machine::TIME_CHECK_STEPS, 0);
        }
    }
}

/// No time limit, or one too long to matter or to represent, leaves the instruction limit
/// to end the loop, at the same place on both engines.
#[test]
fn no_time_limit_means_none() {
    let program = traploop();
    let limit = 3 * rvsim::machine::TIME_CHECK_STEPS + 5;
    for time_limit in [
        None,
        Some(std::time::Duration::from_secs(3600)),
        Some(std::time::Duration::MAX),
    ] {
        let cfg = Config {
            max_instructions: limit,
            time_limit,
            ..Config::default()
        };
        for engine in [Engine::Blocks, Engine::Reference] {
            let cfg = Config {
                engine,
                ..cfg.clone()
            };
            let mut m = Machine::new(&cfg, &program).unwrap();
            assert!(
                matches!(m.run(), Stop::Limit { limit: l, .. } if l == limit),
                "{time_limit:?}"
            );
            assert_eq!(m.stats().steps, limit);
        }
    }
}
