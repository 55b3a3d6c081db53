//! The block engine (`Engine::Blocks`, what `Machine::run` uses) against the per-instruction
//! reference engine (`Engine::Reference`): every program here runs on both under many model
//! combinations, and everything they report must be equal: the ending, every counter of
//! `Stats` (instructions, steps, cycles by cause, every cache and 3C count, straddling
//! fetches, compressed count, exceptions, interrupts), the registers, the pc, the output and
//! all of memory.
//!
//! The programs: every riscv-test, every committed program, and thousands of random programs
//! built to hit what blocks make hard: branches and jumps into the middle of blocks,
//! compressed code with fetches straddling cache lines, self-modifying code with and without
//! `fence.i` (also into the running block), traps and timer interrupts at every offset of a
//! block, CSR reads of the counters, timer-device accesses, AMOs, misaligned data; and
//! CoreMark, built from `../shared/coremark` with the cross compiler.

mod common;

use std::path::PathBuf;

use common::*;
use rvsim::{CacheConfig, Config, Engine, Machine, Program, Stop};

/// The model combinations (I-cache, D-cache, pipeline, policies, penalties) runs use.
fn configs() -> Vec<(&'static str, Config)> {
    let cache = |spec: &str| Some(CacheConfig::parse(spec).unwrap());
    let base = Config::default();
    vec![
        ("functional", base.clone()),
        (
            "icache 8x1x2",
            Config {
                icache: cache("sets=8,ways=1,words=2"),
                ..base.clone()
            },
        ),
        (
            "icache 4x2x1 random",
            Config {
                icache: cache("sets=4,ways=2,words=1,repl=random,seed=7"),
                ..base.clone()
            },
        ),
        (
            "dcache 4x2x2 fifo",
            Config {
                dcache: cache("sets=4,ways=2,words=2,repl=fifo"),
                ..base.clone()
            },
        ),
        (
            "pipeline",
            Config {
                pipeline: true,
                ..base.clone()
            },
        ),
        (
            "icache+pipeline",
            Config {
                icache: cache("sets=16,ways=1,words=4"),
                pipeline: true,
                miss_penalty: 5,
                ..base.clone()
            },
        ),
        (
            "all, write-through no-allocate",
            Config {
                icache: cache("sets=8,ways=2,words=2"),
                dcache: cache("sets=2,ways=1,words=1,write=through,alloc=no"),
                pipeline: true,
                miss_penalty: 3,
                ..base.clone()
            },
        ),
        (
            "all (sim bench)",
            Config {
                icache: cache("sets=8,ways=1,words=2"),
                dcache: cache("sets=16,ways=2,words=4"),
                pipeline: true,
                miss_penalty: 10,
                ..base
            },
        ),
    ]
}

/// Everything a finished run shows, by name, for comparison.
struct Outcome {
    stop: Stop,
    machine: Machine,
}

fn run(program: &Program, cfg: &Config, engine: Engine) -> Outcome {
    run_after_steps(program, cfg, engine, 0)
}

/// Runs `program` after `first` single steps (as a tool that watches the start of a run
/// step by step and then lets it run does).
fn run_after_steps(program: &Program, cfg: &Config, engine: Engine, first: u64) -> Outcome {
    let cfg = Config {
        engine,
        ..cfg.clone()
    };
    let mut machine = Machine::new(&cfg, program).unwrap();
    for _ in 0..first {
        if let Some(stop) = machine.step() {
            return Outcome { stop, machine };
        }
    }
    let stop = machine.run();
    Outcome { stop, machine }
}

/// The first difference between two outcomes, named.
fn difference(a: &Outcome, b: &Outcome) -> Option<String> {
    let (sa, sb) = (a.machine.stats(), b.machine.stats());
    let checks: [(&str, String, String); 12] = [
        ("ending", format!("{:?}", a.stop), format!("{:?}", b.stop)),
        ("instret", sa.instret.to_string(), sb.instret.to_string()),
        ("steps", sa.steps.to_string(), sb.steps.to_string()),
        (
            "exceptions",
            sa.exceptions.to_string(),
            sb.exceptions.to_string(),
        ),
        (
            "interrupts",
            sa.interrupts.to_string(),
            sb.interrupts.to_string(),
        ),
        (
            "straddling fetches",
            sa.straddling_fetches.to_string(),
            sb.straddling_fetches.to_string(),
        ),
        (
            "compressed retired",
            sa.compressed_retired.to_string(),
            sb.compressed_retired.to_string(),
        ),
        (
            "icache",
            format!("{:?}", sa.icache),
            format!("{:?}", sb.icache),
        ),
        (
            "dcache",
            format!("{:?}", sa.dcache),
            format!("{:?}", sb.dcache),
        ),
        (
            "pipeline",
            format!("{:?}", sa.pipeline),
            format!("{:?}", sb.pipeline),
        ),
        (
            "registers and pc",
            format!("{:x?} pc={:x}", a.machine.regs, a.machine.pc),
            format!("{:x?} pc={:x}", b.machine.regs, b.machine.pc),
        ),
        (
            "output",
            format!("{:?}{:?}", a.machine.stdout(), a.machine.stderr()),
            format!("{:?}{:?}", b.machine.stdout(), b.machine.stderr()),
        ),
    ];
    for (what, x, y) in checks {
        if x != y {
            return Some(format!("{what}: blocks {x}, reference {y}"));
        }
    }
    // Whatever is not named above (a counter added later) is still compared.
    if sa != sb {
        return Some(format!("stats: blocks {sa:?}, reference {sb:?}"));
    }
    let (ma, mb) = (a.machine.memory_contents(), b.machine.memory_contents());
    if let Some(i) = (0..ma.len().max(mb.len())).find(|&i| ma.get(i) != mb.get(i)) {
        return Some(format!("memory differs from offset {i:#x}"));
    }
    None
}

/// Runs `program` on both engines; panics naming the first difference.
fn check(name: &str, label: &str, program: &Program, cfg: &Config) -> Outcome {
    check_after_steps(name, label, program, cfg, 0)
}

/// [`check`], both runs starting after `first` single steps.
fn check_after_steps(
    name: &str,
    label: &str,
    program: &Program,
    cfg: &Config,
    first: u64,
) -> Outcome {
    let blocks = run_after_steps(program, cfg, Engine::Blocks, first);
    let reference = run_after_steps(program, cfg, Engine::Reference, first);
    if let Some(diff) = difference(&blocks, &reference) {
        panic!("{name} with {label}: {diff}");
    }
    blocks
}

#[test]
fn a_difference_in_any_counter_is_reported() {
    // Two runs of one program that differ by one instruction step: the comparison must
    // name it (if it could not fail, the tests below would prove nothing).
    let words = [
        addi(10, 0, 1),
        addi(10, 10, 1),
        addi(10, 10, 1),
        EXIT[0],
        EXIT[1],
    ];
    let program = Program::from_code(BASE, &code(&words));
    let cfg = Config::default();
    let full = run(&program, &cfg, Engine::Reference);
    let cut = run(
        &program,
        &Config {
            max_instructions: 4,
            ..cfg.clone()
        },
        Engine::Reference,
    );
    let diff = difference(&full, &cut).expect("a different ending must be reported");
    assert!(diff.starts_with("ending:"), "{diff}");
    // Same ending, different counts: the pipeline's cycles.
    let pipe = |penalty| Config {
        pipeline: true,
        icache: Some(CacheConfig::parse("sets=2,ways=1,words=1").unwrap()),
        miss_penalty: penalty,
        ..Config::default()
    };
    let a = run(&program, &pipe(0), Engine::Reference);
    let b = run(&program, &pipe(1), Engine::Reference);
    let diff = difference(&a, &b).expect("different cycles must be reported");
    assert!(diff.starts_with("pipeline:"), "{diff}");
    assert!(difference(&a, &run(&program, &pipe(0), Engine::Blocks)).is_none());
}

fn load(path: &std::path::Path) -> Program {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Program::from_elf(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn elf_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_riscv_test_counts_the_same_on_both_engines() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/riscv-tests/elf");
    let files = elf_files(&dir);
    assert_eq!(
        files.len(),
        77,
        "expected the 77 riscv-tests in {}",
        dir.display()
    );
    for path in files {
        let program = load(&path);
        let name = path.file_name().unwrap().to_string_lossy();
        for (label, cfg) in configs() {
            let cfg = Config {
                max_instructions: 1_000_000,
                ..cfg
            };
            let out = check(&name, label, &program, &cfg);
            assert_eq!(out.stop, Stop::Tohost(1), "{name} with {label}");
        }
        let rv32im = Config {
            compressed: false,
            max_instructions: 1_000_000,
            ..configs()[6].1.clone()
        };
        check(&name, "RV32IMA machine", &program, &rv32im);
    }
}

#[test]
fn every_committed_program_counts_the_same_on_both_engines() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("programs/elf");
    for path in elf_files(&dir) {
        let program = load(&path);
        let name = path.file_name().unwrap().to_string_lossy();
        let mut all = configs();
        all.push((
            "all + timer",
            Config {
                timer_interval: Some(997),
                ..all[7].1.clone()
            },
        ));
        all.push((
            "RV32IMA machine",
            Config {
                compressed: false,
                ..all[7].1.clone()
            },
        ));
        for (label, cfg) in all {
            // The benchmark builds run 56 million instructions; their first 2 million are
            // enough here (a run that hits the limit is compared like any other).
            let cfg = Config {
                max_instructions: 2_000_000,
                ..cfg
            };
            let out = check(&name, label, &program, &cfg);
            // (A compressed build on a machine without C stops at its first 16-bit one.)
            let s = out.machine.stats();
            let ran = if label == "RV32IMA machine" {
                s.steps
            } else {
                s.instret
            };
            assert!(ran > 0, "{name} with {label}: {s:?}");
        }
    }
}

/// Registers the random code writes (x1 is written as a link register, x8/x9/x2 hold the
/// data, code and stack addresses, x28..x31 belong to the trap handler).
const DEST: std::ops::RangeInclusive<u32> = 10..=27;
const DATA: u32 = BASE + 0x8000;
const MEMORY: u32 = 0x1_0000;
/// Where the trap handler is placed, and the random body starts.
const HANDLER: u32 = 0x40;
const BODY: u32 = 0x100;

/// An instruction of a generated program; branches get their targets once laid out.
#[derive(Clone, Copy)]
enum Item {
    W32(u32),
    W16(u16),
    /// A conditional branch (funct3) to item `target`.
    Branch(u32, u32, u32, usize),
    Jal(u32, usize),
    CJ(usize),
    CBz(bool, u32, usize),
    /// jalr `rd`, to item `target`'s address through x9 (the code base).
    Jalr(u32, usize),
    /// sw x31 over a random instruction of the body (self-modifying code).
    Overwrite,
}

impl Item {
    fn len(self) -> u32 {
        match self {
            Item::W16(_) | Item::CJ(_) | Item::CBz(..) => 2,
            _ => 4,
        }
    }
}

/// The trap handler: an exception skips its (4-byte) instruction; a timer interrupt re-arms
/// the timer `rearm` steps ahead. Uses x28..x31 only.
fn handler(rearm: i32) -> Vec<u32> {
    vec![
        csrr(28, 0x342),     // mcause
        b(20, 0, 28, 4),     // blt x28, x0, +20: interrupt
        csrr(29, 0x341),     // mepc
        addi(29, 29, 4),     //
        csrw(0x341, 29),     //
        MRET,                //
        lui(29, 0x200c),     // x29 = 0x0200c000
        lw(30, 29, -8),      // mtime (low word)
        addi(30, 30, rearm), //
        lui(29, 0x2004),     // x29 = mtimecmp
        sw(0, 29, 4),        // high word 0 first (interrupts are off in the handler)
        sw(30, 29, 0),       //
        MRET,
    ]
}

/// A random program: a prologue (x8, x9, x2, trap handler, timer), a random body that loops
/// forever, and the handler. The run ends at its instruction limit or a trap without
/// handler. Returns the bytes and the body's length in bytes.
fn random_program(rng: &mut Rng, with_handler: bool, with_timer: bool) -> Vec<u8> {
    let mut bytes = vec![0u8; BODY as usize];
    let mut prologue = vec![auipc(9, 0)];
    prologue.extend(li(8, DATA));
    prologue.push(addi(2, 8, 1024));
    if with_handler {
        prologue.push(addi(28, 9, HANDLER as i32));
        prologue.push(csrw(0x305, 28));
    }
    if with_timer {
        prologue.push(addi(28, 0, 0x80));
        prologue.push(i(0x304, 28, 2, 0, 0x73)); // csrs mie, x28
        prologue.push(i(0x300, 8, 6, 0, 0x73)); // csrsi mstatus, 8
    }
    prologue.push(jal(0, (BODY - 4 * prologue.len() as u32) as i32));
    let rearm = 1 + (rng.next() % 60) as i32;
    for (k, w) in prologue.iter().enumerate() {
        bytes[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
    }
    for (k, w) in handler(rearm).iter().enumerate() {
        let at = HANDLER as usize + 4 * k;
        bytes[at..at + 4].copy_from_slice(&w.to_le_bytes());
    }

    let n = 40 + (rng.next() % 200) as usize;
    let mut items = Vec::new();
    while items.len() < n {
        let rd = pick(rng, DEST);
        let rs1 = (rng.next() % 32) as u32;
        let rs2 = (rng.next() % 32) as u32;
        let imm = (rng.next() % 4096) as i32 - 2048;
        let target = (rng.next() as usize) % n;
        match rng.next() % 100 {
            0..=17 => {
                // ALU, register-register (M included).
                let (f7, f3) = [
                    (0, 0),
                    (0x20, 0),
                    (0, 1),
                    (0, 2),
                    (0, 3),
                    (0, 4),
                    (0, 5),
                    (0x20, 5),
                    (0, 6),
                    (0, 7),
                    (1, 0),
                    (1, 1),
                    (1, 2),
                    (1, 3),
                    (1, 4),
                    (1, 5),
                    (1, 6),
                    (1, 7),
                ][(rng.next() % 18) as usize];
                items.push(Item::W32(r([f7, rs2, rs1, f3, rd, 0x33])));
            }
            18..=31 => {
                // ALU with an immediate, lui, auipc.
                let f3 = (rng.next() % 8) as u32;
                let w = match f3 {
                    1 => r([0, rs2, rs1, 1, rd, 0x13]),
                    5 => r([if rng.one_in(2) { 0 } else { 0x20 }, rs2, rs1, 5, rd, 0x13]),
                    _ => i(imm, rs1, f3, rd, 0x13),
                };
                items.push(Item::W32(match rng.next() % 8 {
                    0 => lui(rd, rng.next() as u32),
                    1 => auipc(rd, rng.next() as u32 & 0xfffff),
                    2 => addi(rd, 0, imm),
                    3 => addi(rd, rs1, 0),
                    _ => w,
                }));
            }
            32..=43 => {
                // Compressed ALU.
                let rd = pick(rng, 10..=15);
                let rs = pick(rng, 1..=31);
                let small = (rng.next() % 63) as i32 - 31;
                items.push(Item::W16(match rng.next() % 6 {
                    0 => c_addi(rd, if small == 0 { 1 } else { small }),
                    1 => c_li(rd, small),
                    2 => c_mv(rd, rs),
                    3 => c_add(rd, rs),
                    4 => c_slli(rd, 1 + (rng.next() % 31) as u32),
                    _ => c_lw_sw(false, rd, 8, 4 * (rng.next() % 32) as u32),
                }));
            }
            44..=53 => {
                // Loads around the data pointer (misaligned ones included).
                let f3 = [0, 1, 2, 4, 5][(rng.next() % 5) as usize];
                let base = if rng.one_in(4) { 2 } else { 8 };
                let rd = if rng.one_in(16) { 0 } else { rd };
                items.push(Item::W32(i(imm, base, f3, rd, 0x03)));
            }
            54..=61 => {
                let f3 = (rng.next() % 3) as u32;
                if rng.one_in(3) {
                    items.push(Item::W16(c_lw_sw(
                        true,
                        pick(rng, 8..=15),
                        8,
                        4 * (rng.next() % 32) as u32,
                    )));
                } else {
                    items.push(Item::W32(s(imm, rs2, 8, f3)));
                }
            }
            62..=63 => {
                // Self-modifying code: write a valid instruction over a random place of the
                // body (perhaps the block running), with or without fence.i.
                let new = if rng.one_in(2) {
                    addi(pick(rng, DEST), rs1, imm)
                } else {
                    r([0, rs2, rs1, 0, pick(rng, DEST), 0x33])
                };
                items.extend(li(31, new).map(Item::W32));
                items.push(Item::Overwrite);
                if rng.one_in(2) {
                    items.push(Item::W32(FENCE_I));
                }
            }
            64..=72 => items.push(Item::Branch(
                [0, 1, 4, 5, 6, 7][(rng.next() % 6) as usize],
                rs1,
                rs2,
                target,
            )),
            73..=75 => {
                let rs = pick(rng, 8..=15);
                let near = items.len().saturating_sub(20) + (rng.next() % 40) as usize;
                items.push(Item::CBz(rng.one_in(2), rs, near.min(n - 1)));
            }
            76..=78 => items.push(match rng.next() % 3 {
                0 => Item::Jal(1, target),
                1 => Item::Jal(0, target),
                _ => Item::CJ(items.len().saturating_sub(100) + (rng.next() % 200) as usize % n),
            }),
            79..=80 => items.push(Item::Jalr(if rng.one_in(2) { 0 } else { 1 }, target)),
            81 => items.push(match rng.next() % 3 {
                // Returns and calls through registers that may hold anything.
                0 => Item::W32(jalr(0, 1, 0)),
                1 => Item::W16(c_jr(1)),
                _ => Item::W16(c_jalr(pick(rng, 10..=27))),
            }),
            82..=86 => {
                // CSRs: the counters, scratch, and writes to the counters.
                let csr = [
                    0xb00, 0xb02, 0xc00, 0xc01, 0xc02, 0x340, 0x300, 0x344, 0xb80,
                ][(rng.next() % 9) as usize];
                items.push(Item::W32(match rng.next() % 6 {
                    0 => csrw(0x340, rs1),
                    1 => csrw(if rng.one_in(2) { 0xb02 } else { 0xb00 }, rs1),
                    _ => csrr(rd, csr),
                }));
            }
            87..=88 => items.push(Item::W32(
                [ECALL, EBREAK, ILLEGAL, lw(rd, 0, 16)][(rng.next() % 4) as usize],
            )),
            89..=90 => {
                // The timer device: read mtime, or write mtimecmp.
                if rng.one_in(4) {
                    items.push(Item::W32(lui(31, 0x2004)));
                    items.push(Item::W32(sw(rs2, 31, 0)));
                } else {
                    items.push(Item::W32(lui(31, 0x200c)));
                    items.push(Item::W32(lw(rd, 31, -8)));
                }
            }
            91..=93 => items.push(Item::W32(amo(
                [0, 1, 2, 3, 4, 8, 12, 16, 20, 24, 28][(rng.next() % 11) as usize],
                rd,
                if rng.one_in(8) { 2 } else { 8 },
                rs2,
            ))),
            94 => items.push(Item::W32(
                [FENCE_I, 0x0ff0_000f, 0x1050_0073][(rng.next() % 3) as usize],
            )),
            _ => items.push(Item::W16(c_lw_sw(
                false,
                pick(rng, 10..=15),
                9,
                4 * (rng.next() % 32) as u32,
            ))),
        }
    }
    items.push(Item::Jal(0, 0));
    // Lay out, then encode with the targets' offsets.
    let mut at = Vec::with_capacity(items.len());
    let mut off = BODY;
    for it in &items {
        at.push(off);
        off += it.len();
    }
    let pc_of = |t: usize| at[t.min(items.len() - 1)];
    for (k, it) in items.iter().enumerate() {
        let pc = at[k];
        let rel = |t: usize| pc_of(t) as i32 - pc as i32;
        let word = match *it {
            Item::Overwrite => {
                // Any instruction start of the body.
                let dest = pc_of((rng.next() as usize) % items.len());
                sw(31, 9, dest as i32) as u64 | 4 << 32
            }
            Item::W32(w) => w as u64 | 4 << 32,
            Item::W16(h) => h as u64 | 2 << 32,
            Item::Branch(f3, rs1, rs2, t) => b(rel(t), rs2, rs1, f3) as u64 | 4 << 32,
            Item::Jal(rd, t) => jal(rd, rel(t)) as u64 | 4 << 32,
            Item::CJ(t) => c_j(rel(t).clamp(-2048, 2046)) as u64 | 2 << 32,
            Item::CBz(ne, rs, t) => c_bz(ne, rs, rel(t).clamp(-256, 254)) as u64 | 2 << 32,
            Item::Jalr(rd, t) => jalr(rd, 9, pc_of(t) as i32) as u64 | 4 << 32,
        };
        let len = (word >> 32) as usize;
        bytes.extend_from_slice(&(word as u32).to_le_bytes()[..len]);
    }
    bytes
}

/// A number in `range`.
fn pick(rng: &mut Rng, range: std::ops::RangeInclusive<u32>) -> u32 {
    range.start() + (rng.next() % (range.end() - range.start() + 1) as u64) as u32
}

fn random_config(rng: &mut Rng, timer: bool) -> (String, Config) {
    let all = configs();
    let (label, mut cfg) = all[(rng.next() % all.len() as u64) as usize].clone();
    cfg.memory = Some(MEMORY);
    cfg.max_instructions = 500 + rng.next() % 6000;
    if timer {
        cfg.timer_interval = Some(1 + rng.next() % 150);
    }
    let compressed = !rng.one_in(8);
    cfg.compressed = compressed;
    (
        format!(
            "{label}, limit {}, timer {:?}, compressed {compressed}",
            cfg.max_instructions, cfg.timer_interval
        ),
        cfg,
    )
}

#[test]
fn random_programs_count_the_same_on_both_engines() {
    let mut rng = Rng(0x5eed_b10c);
    let mut endings = std::collections::BTreeMap::new();
    let (mut interrupts, mut exceptions) = (0, 0);
    for n in 0..3000 {
        let with_handler = !rng.one_in(8);
        let with_timer = with_handler && rng.one_in(2);
        let bytes = random_program(&mut rng, with_handler, with_timer);
        let program = Program::from_code(BASE, &bytes);
        let (label, cfg) = random_config(&mut rng, with_timer);
        let first = if rng.one_in(4) { rng.next() % 300 } else { 0 };
        let name = format!("random program {n}, run after {first} steps");
        let out = check_after_steps(&name, &label, &program, &cfg, first);
        let s = out.machine.stats();
        interrupts += s.interrupts;
        exceptions += s.exceptions;
        let kind = format!("{:?}", out.stop);
        *endings
            .entry(kind.split([' ', '(', '{']).next().unwrap().to_string())
            .or_insert(0) += 1;
    }
    // The generator does what it is for: all kinds of endings, many traps and interrupts.
    println!("endings {endings:?}, {exceptions} exceptions, {interrupts} interrupts");
    assert!(endings.len() >= 3, "{endings:?}");
    assert!(
        exceptions > 10_000 && interrupts > 10_000,
        "{exceptions} {interrupts}"
    );
}

/// A loop of `body` (straight-line), with the handler installed and, if `timer`, the timer
/// interrupt enabled: 40 rounds, then exit. x8 points to data, x7 to the timer device.
fn looped(body: &[u32], timer: bool, rearm: i32) -> Program {
    let mut w = vec![auipc(9, 0), lui(7, 0x200c)];
    w.extend(li(8, DATA));
    w.push(addi(28, 9, HANDLER as i32));
    w.push(csrw(0x305, 28));
    if timer {
        w.push(addi(28, 0, 0x80));
        w.push(i(0x304, 28, 2, 0, 0x73));
        w.push(i(0x300, 8, 6, 0, 0x73));
    }
    w.push(addi(20, 0, 40));
    w.push(jal(0, (BODY - 4 * w.len() as u32) as i32));
    let mut bytes = code(&w);
    bytes.resize(HANDLER as usize, 0);
    bytes.extend(code(&handler(rearm)));
    bytes.resize(BODY as usize, 0);
    let mut tail = body.to_vec();
    tail.push(addi(20, 20, -1));
    tail.push(bne(20, 0, -4 * (tail.len() as i32)));
    // exit: with the handler installed an ecall traps, so remove it first (interrupts off)
    tail.push(i(0x300, 8, 7, 0, 0x73));
    tail.push(csrw(0x305, 0));
    tail.extend(EXIT);
    bytes.extend(code(&tail));
    Program::from_code(BASE, &bytes)
}

/// Straight-line work: ALU, loads and stores around x8, 12 instructions.
fn straight_line() -> Vec<u32> {
    vec![
        addi(10, 10, 3),
        lw(11, 8, 0),
        add(12, 11, 10),
        sw(12, 8, 4),
        addi(13, 12, -1),
        lw(14, 8, 4),
        add(15, 14, 13),
        sw(15, 8, 8),
        r([1, 15, 14, 0, 16, 0x33]),
        lw(17, 8, 8),
        add(18, 17, 16),
        sw(18, 8, 0),
    ]
}

fn checked_configs() -> Vec<(&'static str, Config)> {
    configs()
        .into_iter()
        .map(|(l, c)| {
            (
                l,
                Config {
                    memory: Some(MEMORY),
                    ..c
                },
            )
        })
        .collect()
}

#[test]
fn timer_interrupts_at_every_offset_of_a_block_count_the_same() {
    // The handler takes 11 steps: a re-arm shorter than that would interrupt it forever.
    for interval in 1..=30 {
        for rearm in [12, 17, 23, 41] {
            let program = looped(&straight_line(), true, rearm);
            for (label, cfg) in checked_configs() {
                let cfg = Config {
                    timer_interval: Some(interval),
                    max_instructions: 100_000,
                    ..cfg
                };
                let out = check(
                    &format!("interval {interval}, re-arm {rearm}"),
                    label,
                    &program,
                    &cfg,
                );
                assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
                assert!(out.machine.stats().interrupts > 10);
            }
        }
    }
}

#[test]
fn traps_at_every_offset_of_a_block_count_the_same() {
    // A load and a store outside memory, illegal, ecall and ebreak into the handler, and a
    // load from the timer device (not a trap, but an access the block engine hands over).
    let faults = [
        lw(19, 0, 16),
        sw(19, 0, 16),
        ILLEGAL,
        ECALL,
        EBREAK,
        lw(19, 7, -8),
    ];
    for fault in faults {
        for at in 0..=straight_line().len() {
            let mut body = straight_line();
            body.insert(at, fault);
            let program = looped(&body, false, 1);
            for (label, cfg) in checked_configs() {
                let out = check(&format!("{fault:08x} at {at}"), label, &program, &cfg);
                assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
                let traps = if fault == lw(19, 7, -8) { 0 } else { 40 };
                assert_eq!(out.machine.stats().exceptions, traps);
            }
        }
    }
}

#[test]
fn self_modifying_code_counts_the_same_and_runs_the_new_instructions() {
    let new = addi(10, 10, 100);
    // Body: x11 = the new instruction; store it `ahead` instructions past the store (in the
    // running block when ahead is small, else past the loop's branch), optionally fence.i.
    for fence in [false, true] {
        for ahead in 1..=6u32 {
            let mut body = li(11, new).to_vec();
            body.push(auipc(12, 0));
            body.push(sw(11, 12, 4 * (ahead as i32 + 1)));
            if fence {
                body.push(FENCE_I);
            }
            for _ in 0..8 {
                body.push(addi(10, 10, 1));
            }
            let program = looped(&body, false, 1);
            for (label, cfg) in checked_configs() {
                let out = check(
                    &format!("store {ahead} ahead, fence.i {fence}"),
                    label,
                    &program,
                    &cfg,
                );
                // Each round runs the new instruction at least once (rounds after the first
                // find it already in memory).
                let a0 = out.machine.regs[10];
                assert!(a0 >= 40 * 100, "a0 = {a0}: the new instruction did not run");
            }
        }
    }
}

#[test]
fn stores_into_code_from_a_page_without_code_count_the_same_and_run_the_new_code() {
    // Two stores from pages without code that change code: a word store that crosses into
    // the first instruction of the next page (the routine at 0x3000 then sets x11 to x10 + 1
    // instead of incrementing x10), and a halfword store to the first halfword of a page that holds only the
    // end of an instruction straddling into it (the `jal` at 0x4ffe then skips the increment
    // of x16). The block engine's plain-store test must send both to the reference engine.
    let srli = |rd, rs1, shamt| i(shamt, rs1, 5, rd, 0x13);
    let sh = |rs2, rs1, imm| s(imm, rs2, rs1, 1);
    let jalr_ra = i(0, 1, 0, 0, 0x67);
    let (routine, straddler, lp) = (0x3000u32, 0x4ffeu32, 0x40u32);
    let new_jal = jal(0, (lp + 12) as i32 - straddler as i32);
    let mut w = vec![
        lui(8, (BASE + routine) >> 12),
        lui(12, (addi(11, 10, 1) & 0xffff) << 4),
        lui(14, (BASE + straddler + 2) >> 12),
    ];
    w.extend(li(13, new_jal));
    w.push(srli(13, 13, 16));
    w.push(addi(20, 0, 40));
    w.resize(lp as usize / 4, addi(0, 0, 0));
    w.extend([
        jal(1, routine as i32 - lp as i32),
        jal(1, straddler as i32 - (lp + 4) as i32),
        addi(16, 16, 1),
        sw(12, 8, -2),
        sh(13, 14, 0),
        addi(20, 20, -1),
        bne(20, 0, -24),
    ]);
    w.extend(EXIT);
    let mut bytes = code(&w);
    bytes.resize(routine as usize, 0);
    bytes.extend(code(&[addi(10, 10, 1), jalr_ra]));
    bytes.resize(straddler as usize, 0);
    bytes.extend(code(&[jal(0, (lp + 8) as i32 - straddler as i32)]));
    let program = Program::from_code(BASE, &bytes);
    for (label, cfg) in checked_configs() {
        let out = check(
            "stores into code from pages without it",
            label,
            &program,
            &cfg,
        );
        if cfg.compressed {
            assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
            let r = &out.machine.regs;
            assert_eq!((r[10], r[11], r[16]), (1, 2, 1), "{label}");
        }
    }
}

#[test]
fn stores_near_the_end_of_a_memory_that_ends_inside_a_page_count_the_same() {
    // Memory ends half-way into its last page. Stores to the last word of the last whole
    // page (the block engine's own path), to the last word of memory (in the partial page:
    // left to the reference engine) and just past it (a store access fault the handler
    // skips), each round; the values read back are summed in x23.
    let end = BASE + MEMORY + 0x800;
    let mut body = Vec::new();
    body.extend(li(22, end - 4));
    body.extend(li(25, BASE + MEMORY - 4));
    body.extend([
        sw(20, 25, 0),
        lw(24, 25, 0),
        add(23, 23, 24),
        sw(20, 22, 0),
        lw(24, 22, 0),
        add(23, 23, 24),
        sw(20, 22, 8),
        addi(26, 26, 1),
    ]);
    let program = looped(&body, false, 1);
    for (label, cfg) in checked_configs() {
        let cfg = Config {
            memory: Some(MEMORY + 0x800),
            ..cfg
        };
        let out = check("stores near a partial page's end", label, &program, &cfg);
        assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
        assert_eq!(out.machine.stats().exceptions, 40, "{label}");
        assert_eq!(out.machine.regs[23], 2 * (1..=40).sum::<u32>(), "{label}");
    }
}

/// Every pair the block engine fuses into one op (an ALU op, a load immediate, a move or a
/// load, then a conditional branch), each branch taken in some rounds and not in others and
/// skipping one instruction, after a branch that jumps into the second half of one of them
/// in odd rounds. x8 points to data (the loads read the round number stored there), x20
/// counts the rounds down; x26 is never written.
fn fused_pairs() -> Vec<u32> {
    let srli = |rd, rs1, shamt| i(shamt, rs1, 5, rd, 0x13);
    let lh = |rd, rs1, imm| i(imm, rs1, 1, rd, 0x03);
    let lbu = |rd, rs1, imm| i(imm, rs1, 4, rd, 0x03);
    let firsts = [
        addi(10, 0, 5),  // li
        addi(10, 20, 0), // mv
        add(10, 20, 21),
        addi(10, 20, -7),
        andi(10, 20, 3),
        srli(10, 20, 2),
        lw(10, 8, 0),
        lh(10, 8, 0),
        lbu(10, 8, 0),
        r([0, 21, 20, 4, 10, 0x33]), // xor
        // x26 stays 0, so x10 equals x21: the case that tells bltu from a `<=` and bgeu from
        // a `>` (every other add here gives x10 > x21)
        add(10, 21, 26),
    ];
    let mut pairs = Vec::new();
    for first in firsts {
        // beq, bne, bltu, bgeu on x10 and x21 (the round number's low three bits)
        for f3 in [0, 1, 6, 7] {
            pairs.extend([first, b(8, 21, 10, f3), addi(11, 11, 1)]);
        }
    }
    // Into the second half of the fifth pair: the branch after its first half.
    let into = 4 * (4 + 3 * 4 + 1);
    let mut body = vec![
        sw(20, 8, 0),
        andi(21, 20, 7),
        andi(12, 20, 1),
        bne(12, 0, into),
    ];
    body.extend(pairs);
    // Every fused pair of two ops that are not branches, each result feeding the next, and
    // in rounds with bit 1 set a jump into the second half of the fourth (srli+andi).
    let op_pairs = op_pairs();
    body.extend([andi(12, 20, 2), bne(12, 0, 4 * (1 + 7))]);
    body.extend(op_pairs);
    body
}

/// The pairs of ops other than branches the block engine fuses, in order: addi+add,
/// andi+andi (the second andi also fuses with the andi after it), andi+li, srli+andi,
/// mul+add, add+mul, mv+lw, lw+sw, lh+addi, lh+lh, sw+mv, andi+sub (a negation), srli+and,
/// sb+add. Uses x13..x19, x22, x23, x8 (data) and x20, x21 (the round).
fn op_pairs() -> Vec<u32> {
    let srli = |rd, rs1, shamt| i(shamt, rs1, 5, rd, 0x13);
    let lh = |rd, rs1, imm| i(imm, rs1, 1, rd, 0x03);
    let mul = |rd, rs1, rs2| r([1, rs2, rs1, 0, rd, 0x33]);
    vec![
        addi(13, 20, 3),
        add(14, 13, 21),
        andi(15, 14, 0x7f),
        andi(16, 15, 0x3c),
        andi(17, 16, 12),
        addi(18, 0, 9),
        srli(13, 14, 1),
        andi(15, 13, 0x55),
        mul(16, 13, 15),
        add(17, 16, 14),
        add(13, 16, 17),
        mul(14, 13, 15),
        addi(22, 8, 0),
        lw(15, 22, 0),
        lw(16, 8, 0),
        sw(16, 8, 8),
        lh(17, 8, 8),
        addi(18, 17, 5),
        lh(13, 8, 0),
        lh(14, 8, 2),
        sw(14, 8, 12),
        addi(19, 14, 0),
        // From the round, summed in x23: only the last round's values would reach the
        // registers compared at the end, and they can hide a wrong result.
        andi(13, 20, 1),
        r([0x20, 13, 0, 0, 14, 0x33]), // neg
        srli(15, 20, 1),
        r([0, 14, 15, 7, 16, 0x33]), // and
        s(13, 16, 8, 0),             // sb
        add(17, 16, 13),
        add(23, 23, 17),
    ]
}

#[test]
fn fused_pairs_count_the_same_with_interrupts_at_every_offset() {
    for interval in 1..=30 {
        for rearm in [12, 23] {
            let program = looped(&fused_pairs(), true, rearm);
            for (label, cfg) in checked_configs() {
                let cfg = Config {
                    timer_interval: Some(interval),
                    max_instructions: 100_000,
                    ..cfg
                };
                let out = check(
                    &format!("fused pairs, interval {interval}, re-arm {rearm}"),
                    label,
                    &program,
                    &cfg,
                );
                assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
                assert!(out.machine.stats().interrupts > 10);
            }
        }
    }
}

#[test]
fn fused_pairs_count_the_same_with_a_trap_in_either_half_at_every_offset() {
    // A fused pair whose first half traps (a load outside memory: the handler skips it and
    // returns into the second half) or reads the timer device (the block engine hands it
    // over), and a trap right after a pair's branch.
    let faults: [&[u32]; 3] = [
        &[lw(19, 0, 16), bne(19, 0, 8), addi(11, 11, 1)],
        &[lw(19, 7, -8), beq(19, 0, 8), addi(11, 11, 1)],
        &[ILLEGAL],
    ];
    check_faults_at_every_offset(&faults, fused_pairs(), |fault| fault[0] == lw(19, 7, -8));
}

#[test]
fn op_pairs_count_the_same_with_a_trap_in_either_half_at_every_offset() {
    // Pairs of ops other than branches (mv+lw, lw+sw, lh+lh, sw+mv, sb+add) whose first or second
    // half traps (an access outside memory: the handler skips it) or reads the timer device
    // (handed over to the reference engine), spliced in at every offset of the other pairs.
    let lh = |rd, rs1, imm| i(imm, rs1, 1, rd, 0x03);
    let faults: [&[u32]; 8] = [
        &[add(19, 0, 0), lw(19, 19, 16)],
        &[addi(19, 7, 0), lw(19, 19, -8)],
        &[lw(19, 0, 16), sw(19, 8, 4)],
        &[lw(19, 8, 0), sw(19, 0, 16)],
        &[lh(19, 0, 16), lh(18, 8, 0)],
        &[lh(19, 8, 0), lh(18, 0, 16)],
        &[sw(20, 0, 16), addi(19, 20, 0)],
        &[s(16, 20, 0, 0), add(19, 20, 21)],
    ];
    check_faults_at_every_offset(&faults, op_pairs(), |fault| fault[0] == addi(19, 7, 0));
}

/// Runs `body` with each of `faults` spliced in at every offset on both engines; a fault
/// for which `untrapped` holds must take no exception, the others must trap in most places.
fn check_faults_at_every_offset(faults: &[&[u32]], body: Vec<u32>, untrapped: fn(&[u32]) -> bool) {
    for &fault in faults {
        let mut trapped = 0;
        for at in 0..=body.len() {
            let mut body = body.clone();
            body.splice(at..at, fault.iter().copied());
            let program = looped(&body, false, 1);
            for (label, cfg) in checked_configs() {
                let out = check(&format!("{:08x} at {at}", fault[0]), label, &program, &cfg);
                assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
                // Some places are skipped in some rounds or in all (taken branches).
                let exceptions = out.machine.stats().exceptions;
                assert!(exceptions <= 40, "{exceptions}");
                trapped += exceptions;
            }
        }
        if untrapped(fault) {
            assert_eq!(trapped, 0);
        } else {
            assert!(trapped > 20 * body.len() as u64, "{trapped}");
        }
    }
}

/// Builds CoreMark with the port for `march` into `dir` (the runtime files written there).
fn build_coremark(dir: &std::path::Path, march: &str, iterations: u32) -> Program {
    use rvsim::{coremark, runtime};
    let sources = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/coremark");
    assert!(
        sources.join("core_main.c").is_file(),
        "CoreMark's sources are missing: expected them in {} (../shared/coremark beside the \
         workspace root)",
        sources.display()
    );
    for (name, text) in [
        ("crt0.S", runtime::CRT0_S),
        ("syscalls.c", runtime::SYSCALLS_C),
        ("link.ld", runtime::LINK_LD),
        ("core_portme.c", coremark::PORTME_C),
        ("core_portme.h", coremark::PORTME_H),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let out = dir.join(format!("coremark-{march}.elf"));
    let status = std::process::Command::new("riscv64-unknown-elf-gcc")
        .arg(format!("-march={march}"))
        .args(["-mabi=ilp32", "--specs=picolibc.specs", "-nostartfiles"])
        .arg("-T")
        .arg(dir.join("link.ld"))
        .arg("-Wl,--no-warn-rwx-segments")
        .args(coremark::compiler_flags(iterations, dir, &sources))
        .args(["crt0.S", "syscalls.c", "core_portme.c"].map(|f| dir.join(f)))
        .args(coremark::SOURCES.map(|f| sources.join(f)))
        .arg("-o")
        .arg(&out)
        .status()
        .expect(
            "running riscv64-unknown-elf-gcc (apt-get install -y gcc-riscv64-unknown-elf \
             picolibc-riscv64-unknown-elf)",
        );
    assert!(status.success(), "building CoreMark for {march} failed");
    load(&out)
}

#[test]
fn coremark_counts_the_same_on_both_engines_and_validates() {
    // 40 iterations: at the port's nominal 1 MHz more than the 10 seconds CoreMark wants.
    let iterations = 40;
    let dir = tempfile::tempdir().unwrap();
    for march in ["rv32im", "rv32imc"] {
        let program = build_coremark(dir.path(), march, iterations);
        for (label, cfg) in configs() {
            let out = check(&format!("CoreMark {march}"), label, &program, &cfg);
            assert_eq!(out.stop, Stop::Exit(0), "CoreMark {march} with {label}");
            let text = String::from_utf8_lossy(out.machine.stdout());
            let report = rvsim::coremark::Report::parse(&text).unwrap();
            assert_eq!(report.check(iterations), Ok(()), "{march} {label}:\n{text}");
        }
    }
}

/// An instruction of [`superblock_body`]: a word, or a jump or branch to a label.
#[derive(Clone, Copy)]
enum Asm {
    W(u32),
    Label(&'static str),
    Jal(u32, &'static str),
    Bne(u32, u32, &'static str),
}

/// A body for [`looped`] whose blocks go on through direct jumps (superblocks): a `jal` into
/// the middle of a block that a branch enters at its start in every other pass (with the
/// link used after the jump), a load right before a `j` that skips one instruction and its
/// result read right after (by the rules, no load-use stall across the jump), and a `jal` to
/// the next instruction. The two short jumps stay in line order, so a block goes on through
/// them with an I-cache too (where its lines allow). `fault`, if any, is inserted before
/// instruction `at` (labels keep their meaning).
fn superblock_body(fault: Option<(usize, &[u32])>) -> Vec<u32> {
    use Asm::*;
    let xori = |rd, rs1, imm| i(imm, rs1, 4, rd, 0x13);
    let mut items = vec![
        W(addi(10, 10, 3)),
        W(lw(11, 8, 0)),
        Jal(1, "middle"),
        Label("start"),
        W(addi(21, 21, 1)),
        W(lw(12, 8, 4)),
        Label("middle"),
        W(add(23, 23, 1)),
        W(lw(13, 8, 8)),
        W(add(14, 13, 1)),
        W(xori(25, 25, 1)),
        Bne(25, 0, "start"),
        W(lw(15, 8, 12)),
        Jal(0, "skipped"),
        W(addi(26, 26, 1)),
        Label("skipped"),
        W(add(16, 15, 10)),
        Jal(1, "next"),
        Label("next"),
        W(sw(16, 8, 0)),
        W(add(17, 1, 16)),
    ];
    if let Some((at, fault)) = fault {
        // `at` counts instructions, not labels.
        let index = items
            .iter()
            .enumerate()
            .filter(|(_, it)| !matches!(it, Label(_)))
            .map(|(k, _)| k)
            .nth(at)
            .unwrap_or(items.len());
        items.splice(index..index, fault.iter().map(|&w| W(w)));
    }
    let mut labels = std::collections::HashMap::new();
    let mut n = 0;
    for it in &items {
        match it {
            Label(l) => {
                labels.insert(*l, n);
            }
            _ => n += 1,
        }
    }
    let mut words = Vec::new();
    for it in &items {
        let off = |l: &str| 4 * (labels[l] - words.len() as i32);
        match *it {
            W(w) => words.push(w),
            Label(_) => {}
            Jal(rd, l) => words.push(jal(rd, off(l))),
            Bne(rs1, rs2, l) => words.push(bne(rs1, rs2, off(l))),
        }
    }
    words
}

#[test]
fn superblocks_count_the_same_with_interrupts_at_every_offset() {
    for interval in 1..=30 {
        for rearm in [12, 17, 23, 41] {
            let program = looped(&superblock_body(None), true, rearm);
            for (label, cfg) in checked_configs() {
                let cfg = Config {
                    timer_interval: Some(interval),
                    max_instructions: 100_000,
                    ..cfg
                };
                let out = check(
                    &format!("superblocks, interval {interval}, re-arm {rearm}"),
                    label,
                    &program,
                    &cfg,
                );
                assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
                assert!(out.machine.stats().interrupts > 10);
            }
        }
    }
}

#[test]
fn superblocks_count_the_same_with_a_trap_at_every_offset() {
    let faults: [&[u32]; 4] = [&[lw(19, 0, 16)], &[ILLEGAL], &[ECALL], &[lw(19, 7, -8)]];
    let len = superblock_body(None).len();
    for fault in faults {
        let mut trapped = 0;
        for at in 0..=len {
            let program = looped(&superblock_body(Some((at, fault))), false, 1);
            for (label, cfg) in checked_configs() {
                let out = check(
                    &format!("superblocks, {:08x} at {at}", fault[0]),
                    label,
                    &program,
                    &cfg,
                );
                assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
                trapped += out.machine.stats().exceptions;
            }
        }
        if fault[0] == lw(19, 7, -8) {
            assert_eq!(trapped, 0);
        } else {
            assert!(trapped > 20 * len as u64, "{trapped}");
        }
    }
}

#[test]
fn a_superblock_dies_when_the_code_it_jumped_to_in_another_page_changes() {
    // The loop calls a routine in another page (`jal` into it: the loop's block goes on
    // there up to its `ret`), then overwrites the routine's first instruction, an increment
    // of x10 by 1, with an increment by the round's counter x20 (40 down to 1). The block
    // that went on into the routine's page must die with that page's code: the round with
    // counter k adds k + 1 (the first adds 1), 820 in all.
    let jalr_ra = i(0, 1, 0, 0, 0x67);
    let (routine, lp) = (0x3000u32, 0x40u32);
    let mut w = vec![lui(8, (BASE + routine) >> 12)];
    w.extend(li(12, addi(10, 10, 0)));
    w.push(addi(20, 0, 40));
    w.resize(lp as usize / 4, addi(0, 0, 0));
    w.extend([
        addi(11, 11, 1),
        jal(1, routine as i32 - (lp + 4) as i32),
        i(20, 20, 1, 14, 0x13), // slli x14, x20, 20
        add(14, 14, 12),
        sw(14, 8, 0),
        addi(20, 20, -1),
        bne(20, 0, -24),
    ]);
    w.extend(EXIT);
    let mut bytes = code(&w);
    bytes.resize(routine as usize, 0);
    bytes.extend(code(&[addi(10, 10, 1), addi(13, 13, 1), jalr_ra]));
    let program = Program::from_code(BASE, &bytes);
    for (label, cfg) in checked_configs() {
        let out = check("a superblock into a changed page", label, &program, &cfg);
        assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
        assert_eq!(out.machine.regs[10], 820, "{label}");
    }
}

#[test]
fn a_block_that_branches_to_its_own_start_counts_the_same_at_every_offset() {
    // The block at the body's start branches back to itself from its third instruction
    // (taken three times in four) and again from its end (the loop of `looped`): the op
    // interpreter goes round again in place while the steps left hold the whole block, so
    // timer interrupts and instruction limits at every offset test where it must stop.
    let mut body = vec![
        addi(21, 21, 1),
        andi(22, 21, 3),
        bne(22, 0, -8),
        addi(23, 23, 1),
    ];
    body.extend(straight_line());
    check_loop_at_every_offset("a loop in one block", &body);
}

#[test]
fn blocks_that_branch_to_each_other_count_the_same_at_every_offset() {
    // Block A (the body's start) branches forward over one instruction into the middle of
    // itself (taken three times in four), where block B starts; B's end branches back to A
    // (the loop of `looped`). Both taken branches lead to another block, chained once the
    // run has followed them: the op interpreter goes on there in place while the steps left
    // hold that whole block, so timer interrupts and instruction limits at every offset test
    // where it must stop and what it adds.
    let mut body = vec![
        addi(21, 21, 1),
        andi(22, 21, 3),
        bne(22, 0, 8),
        addi(24, 24, 1),
        addi(23, 23, 1),
    ];
    // Short blocks (11 and 7 instructions with the loop's end), so that limits up to 120
    // and the timer's intervals leave room for many chained passes.
    body.extend(&straight_line()[..4]);
    check_loop_at_every_offset("two blocks branching to each other", &body);
}

/// Runs `body` in `looped` with timer interrupts at every interval from 1 to 30 (four
/// re-arm delays) and with instruction limits 1 to 120, on both engines.
fn check_loop_at_every_offset(what: &str, body: &[u32]) {
    for interval in 1..=30 {
        for rearm in [12, 17, 23, 41] {
            let program = looped(body, true, rearm);
            for (label, cfg) in checked_configs() {
                let cfg = Config {
                    timer_interval: Some(interval),
                    max_instructions: 100_000,
                    ..cfg
                };
                let name = format!("{what}, interval {interval}, re-arm {rearm}");
                let out = check(&name, label, &program, &cfg);
                assert!(matches!(out.stop, Stop::Exit(_)), "{:?}", out.stop);
                assert!(out.machine.stats().interrupts > 10);
            }
        }
    }
    let program = looped(body, false, 1);
    for limit in 1..=120 {
        for (label, cfg) in checked_configs() {
            let cfg = Config {
                max_instructions: limit,
                ..cfg
            };
            let out = check(&format!("{what}, limit {limit}"), label, &program, &cfg);
            assert!(matches!(out.stop, Stop::Limit { .. }), "{:?}", out.stop);
        }
    }
}

#[test]
fn coremark_validates_under_branch_predictors_with_the_same_counts() {
    // Prediction changes timing only: CoreMark validates under each predictor, in fewer
    // cycles than static not-taken's. (What runs is not quite the same: CoreMark reads the
    // cycle counter and prints it, and printing other digits takes other instructions; the
    // riscv-tests, which read no counter, hold the counts equal in `tests/predictor.rs`.)
    // Prints the CPI of each.
    let iterations = 40;
    let dir = tempfile::tempdir().unwrap();
    let program = build_coremark(dir.path(), "rv32imc", iterations);
    let run = |predictor: &str| {
        let cfg = Config {
            pipeline: true,
            icache: Some(CacheConfig::parse("sets=64,ways=2,words=8").unwrap()),
            dcache: Some(CacheConfig::parse("sets=64,ways=2,words=8").unwrap()),
            predictor: rvsim::PredictorConfig::parse(predictor).unwrap(),
            ..Config::default()
        };
        let mut m = Machine::new(&cfg, &program).unwrap();
        assert_eq!(m.run(), Stop::Exit(0), "CoreMark with {predictor}");
        let text = String::from_utf8_lossy(m.stdout()).into_owned();
        let report = rvsim::coremark::Report::parse(&text).unwrap();
        assert_eq!(report.check(iterations), Ok(()), "{predictor}:\n{text}");
        m.stats()
    };
    let base = run("not-taken");
    for predictor in [
        "not-taken",
        "btfn",
        "1bit:1024",
        "2bit:1024",
        "gshare:4096,btb=256",
    ] {
        let s = run(predictor);
        let p = s.pipeline.unwrap();
        eprintln!(
            "{predictor:<22} CPI {:.4}  {} mispredicted",
            p.cpi(),
            p.mispredictions()
        );
        if predictor != "not-taken" {
            assert!(p.cycles() < base.pipeline.unwrap().cycles(), "{predictor}");
        }
    }
}
