//! Branch predictors in the 5-stage model: they change the timing only. Every predictor runs
//! the riscv-tests to a pass with the same instructions, registers and per-instruction cache
//! counts, and a loop's mispredictions are worked out by hand. (Static not-taken, the
//! default, is the model without a predictor: `tests/pipeline.rs` holds its cycles.)

mod common;
use common::*;
use rvsim::{conformance, CacheConfig, Config, Machine, PredictorConfig, Program, Stop};

const PREDICTORS: &[&str] = &[
    "not-taken",
    "btfn",
    "1bit:64",
    "2bit:256",
    "gshare:256,btb=16",
    // One BTB entry and a 4-counter table: every transfer aliases.
    "2bit:4,btb=1",
];

fn with(predictor: &str) -> Config {
    Config {
        pipeline: true,
        icache: Some(CacheConfig::parse("sets=8,ways=1,words=2").unwrap()),
        predictor: PredictorConfig::parse(predictor).unwrap(),
        ..Config::default()
    }
}

#[test]
fn a_counted_loop_is_mispredicted_as_each_predictor_says() {
    // li x5, 10; loop: addi x5, x5, -1; bne x5, x0, loop; exit. 23 instructions retire,
    // the pipeline fills in 4 and the exit ecall flushes 2: 29 cycles and 2 per
    // misprediction. Not taken: the 9 taken iterations. BTFN, 1-bit and 2-bit: the first
    // (the BTB has no entry yet) and the exit. gshare of 8 history bits: each iteration
    // finds a fresh counter (weakly not taken) until the history is all ones, so all 9
    // taken ones, and the exit, predicted taken there once the counter has learnt.
    let prog = [
        addi(5, 0, 10),
        addi(5, 5, -1),
        bne(5, 0, -4),
        EXIT[0],
        EXIT[1],
    ];
    for (predictor, mispredicted) in [
        ("not-taken", 9),
        ("btfn", 2),
        ("1bit:64", 2),
        ("2bit:64", 2),
        ("gshare:256", 10),
    ] {
        let m = run(&prog, &with(predictor));
        let p = m.stats().pipeline.unwrap();
        assert_eq!(p.mispredictions(), mispredicted, "{predictor}");
        assert_eq!(p.branch_flushes, 2 * mispredicted, "{predictor}");
        assert_eq!(p.cycles(), 29 + 2 * mispredicted, "{predictor}");
        assert_eq!(p.retired, 23, "{predictor}");
    }
}

#[test]
fn a_jump_predicted_by_the_btb_costs_nothing_the_second_time() {
    // li x5, 3; loop: jal x0, +8 (over an addi); addi x5, x5, -1; bne x5, x0, loop; exit.
    // With a BTB the jump is mispredicted only on its first pass; without, on each.
    let prog = [
        addi(5, 0, 3),
        jal(0, 8),
        addi(6, 0, 1),
        addi(5, 5, -1),
        bne(5, 0, -12),
        EXIT[0],
        EXIT[1],
    ];
    let jumps = |predictor| {
        run(&prog, &with(predictor))
            .stats()
            .pipeline
            .unwrap()
            .jump_flushes
    };
    assert_eq!(jumps("not-taken"), 3 * 2);
    assert_eq!(jumps("2bit:64"), 2);
}

#[test]
fn a_predictor_needs_the_pipeline_and_the_per_instruction_count() {
    let program = Program::from_code(BASE, &code(&EXIT));
    for cfg in [
        Config {
            pipeline: false,
            ..with("2bit:64")
        },
        Config {
            count: rvsim::FetchCount::PerCycle,
            ..with("2bit:64")
        },
    ] {
        let err = Machine::new(&cfg, &program).err().expect("refused");
        assert!(err.to_string().contains("predictor"), "{err}");
    }
}

#[test]
fn every_riscv_test_passes_under_every_predictor_with_the_same_counts() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/riscv-tests/elf");
    if !dir.is_dir() {
        eprintln!("skipped: no {}", dir.display());
        return;
    }
    for path in conformance::test_files(&dir).unwrap() {
        let program = Program::from_elf(&std::fs::read(&path).unwrap()).unwrap();
        let name = path.display();
        let run_with = |predictor: &str| {
            let cfg = Config {
                max_instructions: 1_000_000,
                ..with(predictor)
            };
            let mut m = Machine::new(&cfg, &program).unwrap();
            let stop = m.run();
            (stop, m.stats(), m.regs)
        };
        let (stop, base, regs) = run_with("not-taken");
        assert_eq!(stop, Stop::Tohost(1), "{name}");
        for predictor in &PREDICTORS[1..] {
            let (s, stats, r) = run_with(predictor);
            assert_eq!(s, Stop::Tohost(1), "{name} {predictor}");
            assert_eq!(r, regs, "{name} {predictor}");
            assert_eq!(stats.instret, base.instret, "{name} {predictor}");
            assert_eq!(stats.icache, base.icache, "{name} {predictor}");
            assert_eq!(stats.dcache, base.dcache, "{name} {predictor}");
            let (p, q) = (stats.pipeline.unwrap(), base.pipeline.unwrap());
            assert_eq!(p.retired, q.retired, "{name} {predictor}");
            assert_eq!(p.load_use_stalls, q.load_use_stalls, "{name} {predictor}");
        }
    }
}

#[test]
fn the_pipeline_view_marks_a_branch_predicted_taken_and_its_wrong_path() {
    // The counted loop under BTFN: the first pass's `bne` (no BTB entry yet) is a taken
    // misprediction, squashing the exit's `addi a7` and `ecall` behind it; the last one was
    // predicted taken and falls through, squashing the loop's `addi` and `bne` fetched from
    // the predicted target.
    use rvsim::pipetrace::{self, HazardKind, Start, Window};
    let prog = [
        addi(5, 0, 10),
        addi(5, 5, -1),
        bne(5, 0, -4),
        EXIT[0],
        EXIT[1],
    ];
    let mut m = machine(&prog, &with("btfn"));
    let window = Window {
        start: Start::Step(0),
        before: 0,
        count: 30,
    };
    let (stop, rec) = pipetrace::record(&mut m, &window);
    assert_eq!(stop, Stop::Exit(0));
    let d = pipetrace::build(&rec.unwrap());
    let branches: Vec<(HazardKind, Vec<u32>)> = d
        .hazards
        .iter()
        .filter(|h| matches!(h.kind, HazardKind::Branch { .. }))
        .map(|h| {
            (
                h.kind,
                h.flushed.iter().map(|&k| d.rows[k].pc - BASE).collect(),
            )
        })
        .collect();
    assert_eq!(
        branches,
        [
            (HazardKind::Branch { taken: true }, vec![0xc, 0x10]),
            (HazardKind::Branch { taken: false }, vec![0x4, 0x8]),
        ]
    );
}
