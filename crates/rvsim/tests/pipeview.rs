//! The pipeline view against the pipeline model: a hand-made program with a load-use pair, a
//! taken branch, an illegal instruction, an `ecall` and a timer interrupt, every row and cell
//! of its diagram checked; the diagram's totals against the model's counters; and, over whole
//! runs of every committed program, every retired instruction's write-back cycle against the
//! model's cycle count.

mod common;
use common::*;
use std::collections::BTreeMap;

use rvsim::pipetrace::{self, text::Symbols, Cell, Diagram, Fate, HazardKind, Start, Via, Window};
use rvsim::trap::{ECALL_FROM_M, ILLEGAL_INSTRUCTION, MACHINE_TIMER_INTERRUPT};
use rvsim::{Config, Machine, Program, Stop};

fn csrs(csr: u32, rs1: u32) -> u32 {
    i(csr as i32, rs1, 2, 0, 0x73)
}
fn csrsi(csr: u32, uimm: u32) -> u32 {
    i(csr as i32, uimm, 6, 0, 0x73)
}
fn bltz(rs1: u32, off: i32) -> u32 {
    b(off, 0, rs1, 4)
}

/// The program: enables the timer interrupt, a load-use pair, a taken branch over one
/// instruction, an illegal instruction and an `ecall` (both skipped by the handler), the timer
/// interrupt (the handler turns it off), then the exit call with the handler removed.
fn program() -> Vec<u32> {
    let (t0, t1, t2, t3, t4, t5, sp, a0) = (5, 6, 7, 28, 29, 30, 2, 10);
    let mut w = vec![
        auipc(t0, 0),       // 00
        addi(t0, t0, 0x40), // 04 handler
        csrw(0x305, t0),    // 08 mtvec
        addi(t1, 0, 128),   // 0c
        csrs(0x304, t1),    // 10 mie.MTIE
        csrsi(0x300, 8),    // 14 mstatus.MIE
        lw(t2, sp, 0),      // 18 load
        add(t3, t2, t2),    // 1c uses it: load-use
        beq(0, 0, 8),       // 20 taken
        addi(a0, 0, 1),     // 24 skipped
        ILLEGAL,            // 28
        ECALL,              // 2c with a handler: traps
        addi(a0, 0, 0),     // 30
        csrw(0x305, 0),     // 34 remove the handler (interrupted first)
        EXIT[0],            // 38
        EXIT[1],            // 3c
        csrr(t4, 0x342),    // 40 handler: mcause
        bltz(t4, 0x14),     // 44 interrupt?
        csrr(t5, 0x341),    // 48 mepc
        addi(t5, t5, 4),    // 4c skip the trapping instruction
        csrw(0x341, t5),    // 50
        MRET,               // 54
        csrw(0x304, 0),     // 58 interrupt: timer off
        MRET,               // 5c
    ];
    w.extend([addi(0, 0, 0), addi(0, 0, 0)]); // 60, 64: nops
    w
}

fn config() -> Config {
    Config {
        pipeline: true,
        timer_interval: Some(25),
        ..Config::default()
    }
}

fn diagram(words: &[u32], cfg: &Config, window: Window) -> (Machine, Stop, Diagram) {
    let mut m = machine(words, cfg);
    let (stop, rec) = pipetrace::record(&mut m, &window);
    let rec = rec.expect("the window opened");
    let d = pipetrace::build(&rec);
    (m, stop, d)
}

fn window(start: Start, before: u64, count: u64) -> Window {
    Window {
        start,
        before,
        count,
    }
}

/// The whole run of [`program`], every row: first cycle, address (from BASE), fate (the
/// number of the hazard that flushed it), cells. Worked out from the model's rules: one fetch
/// per cycle; `add t3` waits one cycle in ID for `lw t2` (and `beqz` behind it in IF); taken
/// branches and `mret` squash the two younger instructions as they leave EX; the illegal
/// instruction and the trapping `ecall` squash themselves too; the interrupt is taken on
/// `csrw mtvec,zero` (0x34) as it would enter EX (`--`); the exit `ecall` flushes 2 and ends
/// the run. Each `x` sits in the cycle the redirect target is fetched.
const EXPECTED: &[(u64, u32, Option<usize>, &str)] = &[
    (1, 0x00, None, "IF ID EX MEM WB"),
    (2, 0x04, None, "IF ID EX MEM WB"),
    (3, 0x08, None, "IF ID EX MEM WB"),
    (4, 0x0c, None, "IF ID EX MEM WB"),
    (5, 0x10, None, "IF ID EX MEM WB"),
    (6, 0x14, None, "IF ID EX MEM WB"),
    (7, 0x18, None, "IF ID EX MEM WB"),
    (8, 0x1c, None, "IF ID ID EX MEM WB"),
    (9, 0x20, None, "IF IF ID EX MEM WB"),
    (11, 0x24, Some(1), "IF ID x"),
    (12, 0x28, Some(1), "IF x"),
    (13, 0x28, Some(2), "IF ID EX x"),
    (14, 0x2c, Some(2), "IF ID x"),
    (15, 0x30, Some(2), "IF x"),
    (16, 0x40, None, "IF ID EX MEM WB"),
    (17, 0x44, None, "IF ID EX MEM WB"),
    (18, 0x48, None, "IF ID EX MEM WB"),
    (19, 0x4c, None, "IF ID EX MEM WB"),
    (20, 0x50, None, "IF ID EX MEM WB"),
    (21, 0x54, None, "IF ID EX MEM WB"),
    (22, 0x58, Some(3), "IF ID x"),
    (23, 0x5c, Some(3), "IF x"),
    (24, 0x2c, Some(4), "IF ID EX x"),
    (25, 0x30, Some(4), "IF ID x"),
    (26, 0x34, Some(4), "IF x"),
    (27, 0x40, None, "IF ID EX MEM WB"),
    (28, 0x44, None, "IF ID EX MEM WB"),
    (29, 0x48, None, "IF ID EX MEM WB"),
    (30, 0x4c, None, "IF ID EX MEM WB"),
    (31, 0x50, None, "IF ID EX MEM WB"),
    (32, 0x54, None, "IF ID EX MEM WB"),
    (33, 0x58, Some(5), "IF ID x"),
    (34, 0x5c, Some(5), "IF x"),
    (35, 0x30, None, "IF ID EX MEM WB"),
    (36, 0x34, Some(6), "IF ID -- x"),
    (37, 0x38, Some(6), "IF ID x"),
    (38, 0x3c, Some(6), "IF x"),
    (39, 0x40, None, "IF ID EX MEM WB"),
    (40, 0x44, None, "IF ID EX MEM WB"),
    (41, 0x48, Some(7), "IF ID x"),
    (42, 0x4c, Some(7), "IF x"),
    (43, 0x58, None, "IF ID EX MEM WB"),
    (44, 0x5c, None, "IF ID EX MEM WB"),
    (45, 0x60, Some(8), "IF ID x"),
    (46, 0x64, Some(8), "IF x"),
    (47, 0x34, None, "IF ID EX MEM WB"),
    (48, 0x38, None, "IF ID EX MEM WB"),
    (49, 0x3c, None, "IF ID EX MEM WB"),
    (50, 0x40, Some(9), "IF ID x"),
    (51, 0x44, Some(9), "IF x"),
];

fn cells(d: &Diagram, row: usize) -> String {
    let r = &d.rows[row];
    r.cells
        .iter()
        .map(|c| c.label())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn every_row_and_cell_of_a_run_with_each_kind_of_hazard() {
    let (m, stop, d) = diagram(&program(), &config(), window(Start::Step(0), 0, 1000));
    assert_eq!(stop, Stop::Exit(0));
    assert_eq!((d.first_step, d.steps), (0, 32));
    assert!(d.run_ended);
    assert_eq!(d.rows.len(), EXPECTED.len());
    for (i, &(first, off, flushed_by, want)) in EXPECTED.iter().enumerate() {
        let r = &d.rows[i];
        let fate = match flushed_by {
            Some(h) => Fate::Flushed(h),
            None => Fate::Retired,
        };
        assert_eq!(
            (r.first_cycle, r.pc, r.fate, cells(&d, i).as_str()),
            (first, BASE + off, fate, want),
            "row {i}"
        );
    }
    // The hazards: kind, the row it belongs to, its cycle, its cost, what it flushed and
    // where fetch went.
    let h = &d.hazards;
    let kinds: Vec<HazardKind> = h.iter().map(|h| h.kind).collect();
    assert_eq!(
        kinds,
        [
            HazardKind::LoadUse { load_row: Some(6) },
            HazardKind::Branch { taken: true },
            HazardKind::Exception {
                cause: ILLEGAL_INSTRUCTION,
                tval: ILLEGAL
            },
            HazardKind::Mret,
            HazardKind::Exception {
                cause: ECALL_FROM_M,
                tval: 0
            },
            HazardKind::Mret,
            HazardKind::Interrupt {
                cause: MACHINE_TIMER_INTERRUPT
            },
            HazardKind::Branch { taken: true },
            HazardKind::Mret,
            HazardKind::HostEcall,
        ]
    );
    let cycles: Vec<(usize, u64, u64)> = h.iter().map(|h| (h.row, h.cycle, h.cycles)).collect();
    assert_eq!(
        cycles,
        [
            (7, 10, 1),
            (8, 12, 2),
            (11, 15, 3),
            (19, 23, 2),
            (22, 26, 3),
            (30, 34, 2),
            (34, 38, 3),
            (38, 42, 2),
            (42, 46, 2),
            (47, 51, 2)
        ]
    );
    let flushed: Vec<Vec<usize>> = h.iter().map(|h| h.flushed.clone()).collect();
    assert_eq!(flushed[1], [9, 10]);
    assert_eq!(flushed[2], [11, 12, 13]);
    assert_eq!(flushed[6], [34, 35, 36]);
    let redirects: Vec<Option<(u32, Via)>> = h.iter().map(|h| h.redirect).collect();
    assert_eq!(
        redirects,
        [
            None,
            Some((BASE + 0x28, Via::Target)),
            Some((BASE + 0x40, Via::Mtvec)),
            Some((BASE + 0x2c, Via::Mepc)),
            Some((BASE + 0x40, Via::Mtvec)),
            Some((BASE + 0x30, Via::Mepc)),
            Some((BASE + 0x40, Via::Mtvec)),
            Some((BASE + 0x58, Via::Target)),
            Some((BASE + 0x34, Via::Mepc)),
            Some((BASE + 0x40, Via::RunEnded)),
        ]
    );
    // The totals equal the model's counters, which equal a plain run's.
    assert!(d.agrees(), "{:?} vs {:?}", d.shown, d.counted);
    let plain = run(&program(), &config()).stats().pipeline.unwrap();
    let p = m.stats().pipeline.unwrap();
    assert_eq!(p, plain);
    let t = d.shown;
    assert_eq!(
        (t.retired, t.load_use, t.branch, t.jump, t.trap, t.interrupt),
        (
            plain.retired,
            plain.load_use_stalls,
            plain.branch_flushes,
            plain.jump_flushes,
            plain.trap_flushes,
            plain.interrupt_flushes
        )
    );
    // The last write-back is the model's cycle count less the exit call's flush.
    assert_eq!(d.last_cycle(), plain.cycles() - 2);
}

#[test]
fn windows_open_at_each_kind_of_event_and_agree_with_the_counters() {
    let cases = [
        (Start::Branch, 8),
        (Start::Trap, 9),
        (Start::Interrupt, 24),
        (
            Start::Address {
                name: "handler".into(),
                addr: BASE + 0x40,
            },
            10,
        ),
        (Start::Step(17), 17),
    ];
    for (start, step) in cases {
        for before in [0, 2] {
            let (_, _, d) = diagram(&program(), &config(), window(start.clone(), before, 5));
            assert_eq!(d.first_step, step - before, "{start:?}");
            assert_eq!(d.steps, 5);
            assert!(d.agrees(), "{start:?}: {:?} vs {:?}", d.shown, d.counted);
            // The same rows as in the whole run's diagram, at the same cycles.
            let first = d.rows[0].first_cycle;
            let all = diagram(&program(), &config(), window(Start::Step(0), 0, 1000)).2;
            let same = all.rows.iter().find(|r| r.step == d.first_step).unwrap();
            assert_eq!(first, same.first_cycle, "{start:?}");
        }
    }
    // The interrupt's window: the interrupted instruction first, then the two behind it.
    let (_, _, d) = diagram(&program(), &config(), window(Start::Interrupt, 0, 3));
    assert_eq!(cells(&d, 0), "IF ID -- x");
    assert_eq!(d.shown.interrupt, 3);
    assert_eq!(d.counted.interrupt, 3);
}

#[test]
fn a_window_that_never_opens_is_none_and_the_run_still_ends() {
    let mut m = machine(
        &program(),
        &Config {
            timer_interval: None,
            ..config()
        },
    );
    let (stop, rec) = pipetrace::record(&mut m, &window(Start::Interrupt, 0, 5));
    assert_eq!(stop, Stop::Exit(0));
    assert!(rec.is_none());
}

/// One instruction of a Kanata log: its lane-0 stage starts (cycle, name) and its end (cycle,
/// 0 retired or 1 flushed).
type KanataInsn = (Vec<(u64, String)>, Option<(u64, u8)>);

/// Parses a Kanata log: per instruction id, its lane-0 stage starts (cycle, name) and its end
/// (cycle, retired or flushed).
fn parse_kanata(text: &str) -> BTreeMap<usize, KanataInsn> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Kanata\t0004"));
    let mut cycle = 0u64;
    let mut out: BTreeMap<usize, KanataInsn> = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        match f[0] {
            "C=" => cycle = f[1].parse().unwrap(),
            "C" => cycle += f[1].parse::<u64>().unwrap(),
            "I" => {
                let id = f[1].parse().unwrap();
                assert!(
                    out.insert(id, (Vec::new(), None)).is_none(),
                    "id {id} twice"
                );
            }
            "S" if f[2] == "0" => {
                let e = out.get_mut(&f[1].parse().unwrap()).expect("S before I");
                e.0.push((cycle, f[3].to_string()));
            }
            "R" => {
                let e = out.get_mut(&f[1].parse().unwrap()).expect("R before I");
                assert!(e.1.is_none(), "R twice");
                e.1 = Some((cycle, f[3].parse().unwrap()));
            }
            "S" | "E" | "L" | "W" => {}
            other => panic!("unknown command {other}"),
        }
    }
    out
}

#[test]
fn the_kanata_log_parses_back_to_the_diagram_and_the_counters() {
    for (start, before, count) in [(Start::Step(0), 0, 1000), (Start::Interrupt, 3, 10)] {
        let (_, _, d) = diagram(&program(), &config(), window(start, before, count));
        let log = pipetrace::kanata::write(&d, &Symbols::default());
        let parsed = parse_kanata(&log);
        assert_eq!(parsed.len(), d.rows.len());
        let (mut retired, mut flushed) = (0, 0);
        for (id, row) in d.rows.iter().enumerate() {
            let (stages, end) = &parsed[&id];
            // Each stage change of the row is one S record at its cycle.
            let mut want = Vec::new();
            for (i, c) in row.cells.iter().enumerate() {
                if *c != Cell::Squashed && (i == 0 || row.cells[i - 1] != *c) {
                    want.push((row.first_cycle + i as u64, c.label().to_string()));
                }
            }
            assert_eq!(stages, &want, "row {id}");
            let (at, kind) = end.expect("every instruction ends");
            match row.fate {
                Fate::Flushed(_) => {
                    assert_eq!((at, kind), (row.last_cycle(), 1), "row {id}");
                    flushed += 1;
                }
                _ => {
                    assert_eq!((at, kind), (row.last_cycle() + 1, 0), "row {id}");
                    retired += 1;
                }
            }
        }
        assert_eq!(retired, d.counted.retired);
        assert_eq!(flushed, d.counted.flushes());
    }
}

#[test]
fn the_terminal_view_fits_and_says_how_to_see_the_rest() {
    let (_, _, d) = diagram(&program(), &config(), window(Start::Step(0), 0, 1000));
    for width in [40, 60, 80, 100, 132, 300] {
        let text = pipetrace::text::render(&d, width, &Symbols::default());
        for l in text.lines() {
            assert!(l.chars().count() <= width, "width {width}: {l:?}");
        }
        let all_fit = width >= 300;
        assert_eq!(!text.contains("do not fit"), all_fit, "{text}");
        if !all_fit {
            assert!(text.contains("--pipeview "), "{text}");
        }
    }
    let text = pipetrace::text::render(&d, 100, &Symbols::default());
    // The first rows, as a person reads them.
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("8000001c   add t3,t2,t2")
                && l.ends_with("IF  ID  ID  EX  MEM WB")),
        "{text}"
    );
    assert!(text.contains("equal to the model's counters"), "{text}");
}

/// Over whole runs (or their first 60,000 steps) of every committed program, with caches, a
/// miss penalty and timer interrupts: every retired instruction's write-back cycle is the
/// model's count (elapsed after it, less its own flush, plus 4), and the totals agree.
#[test]
fn write_back_cycles_equal_the_model_count_over_whole_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/elf");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let program = Program::from_elf(&std::fs::read(&f).unwrap()).unwrap();
        let cfg = Config {
            pipeline: true,
            icache: Some(rvsim::CacheConfig::parse("sets=8,ways=1,words=2").unwrap()),
            dcache: Some(rvsim::CacheConfig::parse("sets=4,ways=2,words=4").unwrap()),
            miss_penalty: 3,
            timer_interval: Some(997),
            max_instructions: 60_000,
            ..Config::default()
        };
        for (from, count) in [(0, 60_000), (20_000, 400)] {
            let mut m = Machine::new(&cfg, &program).unwrap();
            let (_, rec) = pipetrace::record(&mut m, &window(Start::Step(from), 0, count));
            let Some(rec) = rec else { continue };
            let d = pipetrace::build(&rec);
            let name = f.file_name().unwrap().to_string_lossy();
            assert!(d.agrees(), "{name}: {:?} vs {:?}", d.shown, d.counted);
            let by_step: BTreeMap<u64, &pipetrace::StepRecord> =
                rec.steps().iter().map(|r| (r.step, r)).collect();
            let mut checked = 0;
            for row in d.rows.iter().filter(|r| r.fate == Fate::Retired) {
                let r = by_step[&row.step];
                let wb = row.first_cycle
                    + row
                        .cells
                        .iter()
                        .position(|c| *c == Cell::Stage(pipetrace::Stage::Wb))
                        .unwrap() as u64;
                let own = r.flush.map_or(0, |f| f.cycles);
                assert_eq!(wb, r.elapsed_after - own + 4, "{name}: step {}", row.step);
                checked += 1;
            }
            assert!(checked > 0, "{name}");
        }
    }
}
