//! Pipeline cycle counts on small hand-computed sequences. Every sequence ends with the exit
//! ecall, which retires and flushes 2 (a trap served by the host); the pipeline adds 4 cycles to
//! fill. So cycles = retired + 4 + 2 + the hazard under test.

mod common;
use common::*;
use rvsim::{CacheConfig, Config, PipelineStats};

fn timed() -> Config {
    Config {
        pipeline: true,
        ..Config::default()
    }
}

fn pipe(words: &[u32], cfg: &Config) -> PipelineStats {
    run(words, cfg).stats().pipeline.unwrap()
}

#[test]
fn straight_line_code_has_cpi_near_one() {
    let p = pipe(
        &[addi(1, 0, 5), addi(2, 0, 7), add(3, 1, 2), EXIT[0], EXIT[1]],
        &timed(),
    );
    assert_eq!(p.retired, 5);
    assert_eq!(p.cycles(), 5 + 4 + 2);
    assert_eq!(p.stall_cycles(), 0);
}

#[test]
fn load_use_costs_one_stall_and_an_independent_instruction_hides_it() {
    let sp = 2;
    let using = [
        sw(0, sp, 0),
        lw(3, sp, 0),
        add(4, 3, 3), // uses x3 right after the load
        EXIT[0],
        EXIT[1],
    ];
    let p = pipe(&using, &timed());
    assert_eq!(p.load_use_stalls, 1);
    assert_eq!(p.cycles(), 5 + 4 + 2 + 1);

    let hidden = [
        sw(0, sp, 0),
        lw(3, sp, 0),
        addi(5, 0, 1),
        add(4, 3, 3),
        EXIT[0],
        EXIT[1],
    ];
    let p = pipe(&hidden, &timed());
    assert_eq!(p.load_use_stalls, 0);
    assert_eq!(p.cycles(), 6 + 4 + 2);

    // A store of the loaded value into memory also reads it (rs2).
    let store = [lw(3, sp, 0), sw(3, sp, 4), EXIT[0], EXIT[1]];
    assert_eq!(pipe(&store, &timed()).load_use_stalls, 1);

    // A load into x0 is no hazard, also for an instruction that reads x0.
    let discarded = [sw(0, sp, 0), lw(0, sp, 0), add(4, 0, 0), EXIT[0], EXIT[1]];
    assert_eq!(pipe(&discarded, &timed()).load_use_stalls, 0);
}

#[test]
fn taken_branch_flushes_two_not_taken_costs_nothing() {
    let taken = [beq(0, 0, 8), addi(1, 0, 1), EXIT[0], EXIT[1]];
    let p = pipe(&taken, &timed());
    assert_eq!(p.retired, 3);
    assert_eq!(p.branch_flushes, 2);
    assert_eq!(p.cycles(), 3 + 4 + 2 + 2);

    let not_taken = [bne(0, 0, 8), addi(1, 0, 1), EXIT[0], EXIT[1]];
    let p = pipe(&not_taken, &timed());
    assert_eq!(p.retired, 4);
    assert_eq!(p.branch_flushes, 0);
    assert_eq!(p.cycles(), 4 + 4 + 2);
}

#[test]
fn jumps_always_flush_two() {
    let p = pipe(&[jal(0, 4), EXIT[0], EXIT[1]], &timed());
    assert_eq!(p.jump_flushes, 2);
    assert_eq!(p.cycles(), 3 + 4 + 2 + 2);
}

#[test]
fn an_exception_flushes_three_and_does_not_retire() {
    // auipc t0,0; addi t0,t0,16; csrw mtvec,t0; <illegal>; handler: remove itself, exit
    let words = [
        auipc(5, 0),
        addi(5, 5, 16),
        csrw(0x305, 5),
        ILLEGAL,
        csrw(0x305, 0),
        EXIT[0],
        EXIT[1],
    ];
    let m = run(&words, &timed());
    let s = m.stats();
    let p = s.pipeline.unwrap();
    assert_eq!(s.exceptions, 1);
    assert_eq!(p.retired, 6);
    assert_eq!(p.trap_flushes, 3 + 2);
    assert_eq!(p.cycles(), 6 + 4 + 3 + 2);
    assert_eq!(m.csr.mcause, 2);
    assert_eq!(m.csr.mepc, BASE + 12);
    assert_eq!(m.csr.mtval, ILLEGAL);
}

#[test]
fn miss_penalty_is_charged_per_instruction_cache_miss() {
    let cfg = Config {
        icache: Some(CacheConfig::parse("sets=8,ways=1,words=2").unwrap()),
        miss_penalty: 10,
        ..timed()
    };
    // 5 instructions in 8-byte lines: lines 0, 1, 2 -> 3 misses.
    let words = [
        addi(1, 0, 1),
        addi(2, 0, 2),
        addi(3, 0, 3),
        EXIT[0],
        EXIT[1],
    ];
    let m = run(&words, &cfg);
    let s = m.stats();
    assert_eq!(s.icache.unwrap().misses, 3);
    let p = s.pipeline.unwrap();
    assert_eq!(p.icache_miss_stalls, 30);
    assert_eq!(p.cycles(), 5 + 4 + 2 + 30);
    // Without a penalty the cache changes counts, never time (as in Ripes).
    let p0 = pipe(
        &words,
        &Config {
            miss_penalty: 0,
            ..cfg
        },
    );
    assert_eq!(p0.cycles(), 5 + 4 + 2);
}

#[test]
fn the_cycle_csr_follows_the_timing_model() {
    // lw; use (1 stall); csrr a0, cycle; exit with it
    let words = [lw(3, 2, 0), add(4, 3, 3), csrr(10, 0xc00), EXIT[0], EXIT[1]];
    let m = run(&words, &timed());
    // 2 retired + 1 stall before the csrr executes
    assert_eq!(m.regs[10], 3);
    let m = run(&words, &Config::default());
    assert_eq!(m.regs[10], 2);
}

#[test]
fn a_fetch_fault_after_a_data_cache_miss_does_not_charge_that_miss_again() {
    // nop; nop; auipc t0,0; sw zero,0(t0) (a D-cache miss), then execution runs off the end
    // of a 16-byte memory: the fetch fault is an exception of its own, with no data access.
    let words = [addi(0, 0, 0), addi(0, 0, 0), auipc(5, 0), sw(0, 5, 0)];
    let cfg = Config {
        memory: Some(16),
        dcache: Some(CacheConfig::parse("sets=4,ways=1,words=2").unwrap()),
        miss_penalty: 10,
        ..timed()
    };
    let mut m = machine(&words, &cfg);
    let stop = m.run();
    assert!(matches!(stop, rvsim::Stop::Trap { cause: 1, .. }), "{stop}");
    let s = m.stats();
    assert_eq!(s.dcache.unwrap().misses, 1);
    assert_eq!(s.pipeline.unwrap().dcache_miss_stalls, 10);
}
