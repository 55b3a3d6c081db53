//! Per-cycle counting (`FetchCount::PerCycle`) checked against Ripes itself: the same ELF
//! through Ripes v2.2.6's 5-stage processor (`../shared/ripes/run.sh`) and through this model
//! must give the same cycles, I-cache hits and I-cache misses, exactly, on the quiz program
//! and the lab program (both builds each, five cache geometries), the riscv-tests Ripes can run from `.text`, the
//! loop program built without a C library, and 200 random straight-line-and-branch programs.
//! One difference is Ripes' and stays: its ALU shifts a register by all of rs2, not by its low
//! 5 bits (`ripes_register_shift` in `common`); the random programs that shift by 32 or more
//! and branch on the result are listed in [`KNOWN`] with both tools' counts, and the model
//! with Ripes' shifts put in must count as Ripes does on them.
//!
//! Ripes comes from `RIPES=path/to/Ripes`, or from an earlier build of this test under the
//! target folder, or is built there from `../shared/ripes` (4-6 minutes) when
//! `RVSIM_REQUIRE_RIPES=1`. Without Ripes the test says so and passes, except with
//! `RVSIM_REQUIRE_RIPES=1`, where it fails. The random programs need the cross assembler
//! (`riscv64-unknown-elf-gcc`), required the same way. The programs run one per CPU at once,
//! across the tests of this file ([`par_map`]); each test still lists every program that
//! differs, in its own order. CI runs it with Ripes built from `../shared/ripes` (`.ci/run`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

mod common;
use common::{run_with_ripes_shifts, Rng};
use rvsim::{CacheConfig, Config, FetchCount, Machine, Program, Stop};

const GCC: &str = "riscv64-unknown-elf-gcc";

/// The riscv-tests that Ripes v2.2.6 runs to their end from `.text` (`run.sh -e`): the
/// others use CSRs (which it decodes as ecall and then blocks on a dialog), the A extension,
/// misaligned accesses or `fence.i`.
const RISCV_TESTS: &[&str] = &[
    "rv32ui-p-add",
    "rv32ui-p-addi",
    "rv32ui-p-and",
    "rv32ui-p-andi",
    "rv32ui-p-auipc",
    "rv32ui-p-beq",
    "rv32ui-p-bge",
    "rv32ui-p-bgeu",
    "rv32ui-p-blt",
    "rv32ui-p-bltu",
    "rv32ui-p-bne",
    "rv32ui-p-jal",
    "rv32ui-p-jalr",
    "rv32ui-p-lb",
    "rv32ui-p-lbu",
    "rv32ui-p-ld_st",
    "rv32ui-p-lh",
    "rv32ui-p-lhu",
    "rv32ui-p-lui",
    "rv32ui-p-lw",
    "rv32ui-p-or",
    "rv32ui-p-ori",
    "rv32ui-p-sb",
    "rv32ui-p-sh",
    "rv32ui-p-simple",
    "rv32ui-p-sll",
    "rv32ui-p-slli",
    "rv32ui-p-slt",
    "rv32ui-p-slti",
    "rv32ui-p-sltiu",
    "rv32ui-p-sltu",
    "rv32ui-p-sra",
    "rv32ui-p-srai",
    "rv32ui-p-srl",
    "rv32ui-p-srli",
    "rv32ui-p-st_ld",
    "rv32ui-p-sub",
    "rv32ui-p-sw",
    "rv32ui-p-xor",
    "rv32ui-p-xori",
    "rv32um-p-div",
    "rv32um-p-divu",
    "rv32um-p-mul",
    "rv32um-p-mulh",
    "rv32um-p-mulhsu",
    "rv32um-p-mulhu",
    "rv32um-p-rem",
    "rv32um-p-remu",
    "rv32uc-p-rvc",
];

/// I-cache geometries (sets, ways, words per line): the quiz's 8 and 4 lines of 2 words,
/// and three others (more words per line, two and four ways with LRU).
const GEOMETRIES: &[(u32, u32, u32)] = &[(8, 1, 2), (4, 1, 2), (16, 1, 4), (4, 2, 2), (2, 4, 1)];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shared() -> PathBuf {
    repo_root().join("../shared")
}

fn required() -> bool {
    std::env::var("RVSIM_REQUIRE_RIPES").is_ok_and(|v| v == "1")
}

/// Says why a part cannot run: a failure when Ripes is required, else a line and a skip.
fn unavailable(why: &str) {
    assert!(!required(), "{why}, but RVSIM_REQUIRE_RIPES=1");
    eprintln!("skipped: {why} (RIPES=path/to/Ripes, or RVSIM_REQUIRE_RIPES=1 to build it from ../shared/ripes)");
}

/// The Ripes binary and its run script.
struct Ripes {
    bin: PathBuf,
    run_sh: PathBuf,
}

/// Ripes, or `None` (after saying why) when there is none. Found, or built, once for all the
/// tests of this file, which run at once.
fn ripes() -> Option<&'static Ripes> {
    static FOUND: OnceLock<Result<Ripes, String>> = OnceLock::new();
    match FOUND.get_or_init(find_ripes) {
        Ok(ripes) => Some(ripes),
        Err(why) => {
            unavailable(why);
            None
        }
    }
}

fn find_ripes() -> Result<Ripes, String> {
    let run_sh = shared().join("ripes/run.sh");
    if !run_sh.exists() {
        return Err(format!("no {}", run_sh.display()));
    }
    if let Some(bin) = std::env::var_os("RIPES") {
        let bin = PathBuf::from(bin);
        if !bin.exists() {
            return Err(format!("RIPES={} does not exist", bin.display()));
        }
        return Ok(Ripes { bin, run_sh });
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ripes-build");
    let bin = out.join("build/Ripes");
    if bin.exists() {
        return Ok(Ripes { bin, run_sh });
    }
    if !required() {
        return Err("Ripes is not built".into());
    }
    eprintln!("building Ripes into {} (4-6 minutes)", out.display());
    let status = Command::new("bash")
        .arg(shared().join("ripes/build.sh"))
        .arg(&out)
        .status()
        .map_err(|e| format!("running build.sh: {e}"))?;
    if !status.success() {
        return Err(format!("building Ripes failed: {status}"));
    }
    if !bin.exists() {
        return Err(format!("build.sh did not make {}", bin.display()));
    }
    Ok(Ripes { bin, run_sh })
}

/// How many programs run at once, across all the tests of this file: one per CPU (each is
/// one Ripes process, or the assembler, then the model).
fn cpus() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// A place among the [`cpus`] programs that may run at once, given back when dropped.
struct Slot;

static FREE: Mutex<Option<usize>> = Mutex::new(None);
static FREED: Condvar = Condvar::new();

impl Slot {
    fn take() -> Slot {
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let n = free.get_or_insert_with(cpus);
            if *n > 0 {
                *n -= 1;
                return Slot;
            }
            free = FREED.wait(free).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        *free.get_or_insert_with(cpus) += 1;
        FREED.notify_one();
    }
}

/// `f` of every item, in the items' order, computed by [`cpus`] threads that each hold a
/// [`Slot`] while they compute one.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..cpus().min(items.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let slot = Slot::take();
                let r = f(item);
                drop(slot);
                done.lock().unwrap()[i] = Some(r);
            });
        }
    });
    done.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item computed"))
        .collect()
}

/// What both tools counted for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    cycles: u64,
    hits: u64,
    misses: u64,
}

/// One program under one cache geometry.
struct Case {
    name: String,
    elf: PathBuf,
    geometry: (u32, u32, u32),
    /// Start at `.text` instead of the ELF entry (`run.sh -e`).
    text_entry: bool,
}

fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

fn run_ripes(ripes: &Ripes, case: &Case) -> Result<Counts, String> {
    let (s, w, k) = case.geometry;
    let mut cmd = Command::new("bash");
    cmd.arg(&ripes.run_sh)
        .args(["-i", &format!("{s},{w},{k},lru")])
        .env("RIPES", &ripes.bin)
        .env("RIPES_WALL_S", "120");
    if case.text_entry {
        cmd.arg("-e");
    }
    let out = cmd.arg(&case.elf).output().map_err(|e| e.to_string())?;
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    let ended = line.contains("end=exit(") || line.contains("end=finished");
    match (
        field(&line, "cycles"),
        field(&line, "L1I_hits"),
        field(&line, "L1I_misses"),
    ) {
        (Some(cycles), Some(hits), Some(misses)) if ended => Ok(Counts {
            cycles,
            hits,
            misses,
        }),
        _ => Err(format!(
            "Ripes did not finish: {} {}",
            line.trim_end(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        )),
    }
}

/// The address of the ELF's `.text` section.
fn text_address(bytes: &[u8]) -> u32 {
    let file = elf::ElfBytes::<elf::endian::LittleEndian>::minimal_parse(bytes).unwrap();
    let (shdrs, names) = file.section_headers_with_strtab().unwrap();
    let (shdrs, names) = (shdrs.unwrap(), names.unwrap());
    shdrs
        .iter()
        .find(|s| names.get(s.sh_name as usize).is_ok_and(|n| n == ".text"))
        .expect(".text")
        .sh_addr as u32
}

/// The case's program, and the model's configuration for it.
fn model_setup(case: &Case) -> (Program, Config) {
    let bytes = std::fs::read(&case.elf).unwrap();
    let mut program = Program::from_elf(&bytes).unwrap();
    if case.text_entry {
        program.entry = text_address(&bytes);
    }
    let (s, w, k) = case.geometry;
    let cfg = Config {
        icache: Some(CacheConfig::parse(&format!("sets={s},ways={w},words={k},repl=lru")).unwrap()),
        pipeline: true,
        compressed: program.rvc,
        count: FetchCount::PerCycle,
        ..Config::default()
    };
    (program, cfg)
}

fn counts_of(m: &Machine) -> Counts {
    let st = m.stats();
    let ic = st.icache.unwrap();
    Counts {
        cycles: st.pipeline.unwrap().cycles(),
        hits: ic.hits,
        misses: ic.misses,
    }
}

/// What the model counts for one case, and how its run ended.
fn run_model(case: &Case) -> (Counts, Stop) {
    let (program, cfg) = model_setup(case);
    let mut m = Machine::new(&cfg, &program).unwrap();
    let stop = m.run();
    (counts_of(&m), stop)
}

/// What the model counts for one case with register shifts as Ripes computes them
/// (`ripes_register_shift` in `common`), and how many register shifts gave another value
/// in Ripes' reckoning (amounts of 32 or more).
fn run_model_ripes_shifts(case: &Case) -> (Counts, u64) {
    let (program, cfg) = model_setup(case);
    let mut m = Machine::new(&cfg, &program).unwrap();
    let (_, shifts_differed) = run_with_ripes_shifts(&mut m);
    (counts_of(&m), shifts_differed)
}

/// One case through both tools: Ripes' counts (or why it gave none), the model's, how the
/// model's run ended, and whether Ripes' register shifts explain a difference.
struct Outcome {
    theirs: Result<Counts, String>,
    ours: Counts,
    stop: Stop,
    shifted: bool,
}

fn run_both(ripes: &Ripes, case: &Case) -> Outcome {
    let theirs = run_ripes(ripes, case);
    let (ours, stop) = run_model(case);
    // The model with Ripes' shifts runs only where the two differ.
    let shifted = match &theirs {
        Ok(t) if *t != ours => {
            let (counts, differed) = run_model_ripes_shifts(case);
            differed > 0 && counts == *t
        }
        _ => false,
    };
    Outcome {
        theirs,
        ours,
        stop,
        shifted,
    }
}

/// Runs every case through both and fails on any difference but one explained by Ripes'
/// register shifts: where the model differs from Ripes, a program that shifted by 32 or more
/// and that the model counts as Ripes does once its shifts are Ripes' is such a difference.
/// Returns the names of those, which each test holds to the list it expects. The cases run
/// [`cpus`] at a time; the table and the failures list them in the order given.
fn compare(ripes: &Ripes, cases: &[Case]) -> Vec<String> {
    let outcomes = par_map(cases, |case| run_both(ripes, case));
    let mut table = String::new();
    let mut bad = Vec::new();
    let mut explained = Vec::new();
    for (case, outcome) in cases.iter().zip(outcomes) {
        let (s, w, k) = case.geometry;
        let ours = outcome.ours;
        let theirs = match outcome.theirs {
            Ok(theirs) => theirs,
            Err(e) => {
                let _ = writeln!(table, "{:<28} {s}x{w}x{k}  Ripes gave no counts", case.name);
                bad.push(format!("{} {s}x{w}x{k}: {e}", case.name));
                continue;
            }
        };
        let _ = writeln!(
            table,
            "{:<28} {s}x{w}x{k}  cycles {:>8} {:>8}  hits {:>8} {:>8}  misses {:>6} {:>6}{}",
            case.name,
            theirs.cycles,
            ours.cycles,
            theirs.hits,
            ours.hits,
            theirs.misses,
            ours.misses,
            if theirs != ours && outcome.shifted {
                "  Ripes' shift"
            } else {
                ""
            }
        );
        if theirs == ours {
            continue;
        }
        if outcome.shifted {
            explained.push(case.name.clone());
        } else {
            bad.push(format!(
                "{} {s}x{w}x{k} ({}): Ripes {theirs:?}, model {ours:?}",
                case.name, outcome.stop
            ));
        }
    }
    eprint!("{table}");
    assert!(
        bad.is_empty(),
        "{} of {} runs differ:\n{}",
        bad.len(),
        cases.len(),
        bad.join("\n")
    );
    explained
}

/// The random programs that Ripes v2.2.6 counts otherwise than the model, with what each
/// counts (geometry: `GEOMETRIES[seed % 5]`). Each shifts a register by 32 or more
/// (`sll x10, x5, x12` in 63's first loop, `sll x12, x9, x11` in 157's), where Ripes' ALU
/// gives 0 and RV32 the value shifted by the amount's low 5 bits (`ripes_register_shift` in
/// `common`); a later branch on what followed from it goes the other way (in 63, `bgeu x10,
/// x11` at 0x1018c: taken in Ripes, 2 cycles of flush, one `c.addi` fewer). The model keeps
/// RV32's shift; with Ripes' shift it counts as Ripes does.
const KNOWN: &[Known] = &[
    Known {
        seed: 63,
        ripes: Counts {
            cycles: 316,
            hits: 265,
            misses: 52,
        },
        model: Counts {
            cycles: 315,
            hits: 264,
            misses: 52,
        },
    },
    Known {
        seed: 157,
        ripes: Counts {
            cycles: 295,
            hits: 274,
            misses: 22,
        },
        model: Counts {
            cycles: 292,
            hits: 271,
            misses: 22,
        },
    },
];

/// A random program on which Ripes and the model are known to differ.
struct Known {
    seed: u64,
    ripes: Counts,
    model: Counts,
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/elf")
}

#[test]
fn quiz_and_loop_match_ripes() {
    let Some(ripes) = ripes() else { return };
    let mut cases = Vec::new();
    for build in ["quiz-rv32im", "quiz-rv32imc", "lab-rv32im", "lab-rv32imc"] {
        for &geometry in GEOMETRIES {
            cases.push(Case {
                name: build.into(),
                elf: programs_dir().join(format!("{build}.elf")),
                geometry,
                text_entry: false,
            });
        }
    }
    for build in ["loop-bare-rv32im", "loop-bare-rv32imc"] {
        cases.push(Case {
            name: build.into(),
            elf: programs_dir().join(format!("{build}.elf")),
            geometry: (8, 1, 2),
            text_entry: false,
        });
    }
    assert_eq!(compare(ripes, &cases), Vec::<String>::new());
}

#[test]
fn riscv_tests_match_ripes() {
    let Some(ripes) = ripes() else { return };
    let dir = shared().join("riscv-tests/elf");
    if !dir.exists() {
        unavailable(&format!("no {}", dir.display()));
        return;
    }
    let cases: Vec<Case> = RISCV_TESTS
        .iter()
        .enumerate()
        .map(|(i, name)| Case {
            name: name.to_string(),
            elf: dir.join(name),
            // Two geometries, alternating, so both direct-mapped and LRU sets are covered.
            geometry: GEOMETRIES[i % 2 * 3],
            text_entry: true,
        })
        .collect();
    assert_eq!(compare(ripes, &cases), Vec::<String>::new());
}

/// Random program `n`, assembled in `dir` (rv32im for even `n`, rv32imc for odd), as a case
/// under its geometry.
fn random_case(dir: &Path, n: u64) -> Case {
    let march = random_march(n);
    let src = dir.join(format!("r{n}.s"));
    let elf = dir.join(format!("r{n}-{march}.elf"));
    std::fs::write(&src, random_program(n)).unwrap();
    let out = Command::new(GCC)
        .args(["-nostdlib", "-mabi=ilp32", &format!("-march={march}"), "-o"])
        .arg(&elf)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Case {
        name: random_name(n),
        elf,
        geometry: GEOMETRIES[n as usize % GEOMETRIES.len()],
        text_entry: false,
    }
}

fn random_march(n: u64) -> &'static str {
    if n.is_multiple_of(2) {
        "rv32im"
    } else {
        "rv32imc"
    }
}

fn random_name(n: u64) -> String {
    format!("random {n} {}", random_march(n))
}

fn have_gcc() -> bool {
    Command::new(GCC).arg("--version").output().is_ok()
}

#[test]
fn random_programs_match_ripes() {
    let Some(ripes) = ripes() else { return };
    if !have_gcc() {
        unavailable(&format!("{GCC} is not installed"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let seeds: Vec<u64> = (0..200).collect();
    let cases = par_map(&seeds, |&n| random_case(dir.path(), n));
    let want: Vec<String> = KNOWN.iter().map(|k| random_name(k.seed)).collect();
    assert_eq!(compare(ripes, &cases), want);
}

#[test]
fn the_known_differences_are_ripes_register_shifts() {
    // Without Ripes: on the random programs Ripes counts otherwise, the model gives what it
    // gave beside Ripes, and, with Ripes' register shifts put in, Ripes' own counts.
    if !have_gcc() {
        eprintln!("skipped: {GCC} is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for k in KNOWN {
        let case = random_case(dir.path(), k.seed);
        assert_eq!(run_model(&case).0, k.model, "{}", case.name);
        let (ripes_shifts, differed) = run_model_ripes_shifts(&case);
        assert!(differed > 0, "{}", case.name);
        assert_eq!(ripes_shifts, k.ripes, "{}", case.name);
    }
}

/// Registers the random programs compute with (x8 holds the data address, x30 counts loops,
/// x1 stays 0 so that `ret` returns to address 0).
const REGS: &[u32] = &[5, 6, 7, 9, 10, 11, 12, 13, 14, 15];

/// A random program of blocks of straight-line code, forward branches and jumps, and counted
/// loops, ending with the exit call or a return to address 0. Loads are often followed by a
/// use of what they loaded, and immediates often name a register (Ripes' hazard unit reads
/// the register fields of every format).
fn random_program(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut pick = |n: u64| (rng.next() % n) as u32;
    let mut out = String::from(".globl _start\n.text\n_start:\n  la x8, buf\n");
    let blocks = 4 + pick(12);
    let mut label = 0;
    for b in 0..blocks {
        let looped = pick(3) == 0;
        if looped {
            let _ = writeln!(out, "  li x30, {}\nL{b}_loop:", 1 + pick(6));
        }
        let len = 2 + pick(12);
        let mut last_load = None;
        for _ in 0..len {
            let reg = |k: u32| REGS[k as usize % REGS.len()];
            let (rd, rs1, rs2) = (reg(pick(10)), reg(pick(10)), reg(pick(10)));
            // After a load, often use what it loaded.
            let rs1 = match last_load {
                Some(r) if pick(2) == 0 => r,
                _ => rs1,
            };
            last_load = None;
            match pick(16) {
                0..=3 => {
                    let imm = if pick(2) == 0 {
                        rs2 as i32
                    } else {
                        pick(64) as i32 - 32
                    };
                    let _ = writeln!(out, "  addi x{rd}, x{rs1}, {imm}");
                }
                4..=6 => {
                    let op = [
                        "add", "sub", "xor", "or", "and", "sll", "srl", "sra", "slt", "sltu",
                        "mul", "div", "remu",
                    ][pick(13) as usize];
                    let _ = writeln!(out, "  {op} x{rd}, x{rs1}, x{rs2}");
                }
                7..=9 => {
                    let (op, align) =
                        [("lw", 4), ("lh", 2), ("lhu", 2), ("lb", 1), ("lbu", 1)][pick(5) as usize];
                    let _ = writeln!(out, "  {op} x{rd}, {}(x8)", pick(64) * align);
                    last_load = Some(rd);
                }
                10 | 11 => {
                    let (op, align) = [("sw", 4), ("sh", 2), ("sb", 1)][pick(3) as usize];
                    let _ = writeln!(out, "  {op} x{rs2}, {}(x8)", pick(64) * align);
                }
                12 => {
                    let _ = writeln!(out, "  lui x{rd}, {}", pick(1 << 20));
                }
                13 | 14 => {
                    let op = ["beq", "bne", "blt", "bge", "bltu", "bgeu"][pick(6) as usize];
                    let _ = writeln!(out, "  {op} x{rs1}, x{rs2}, F{label}");
                    for _ in 0..pick(3) {
                        let _ = writeln!(out, "  addi x{rd}, x{rd}, {}", pick(16));
                    }
                    let _ = writeln!(out, "F{label}:");
                    label += 1;
                }
                _ => {
                    let _ = writeln!(out, "  j F{label}\n  addi x{rd}, x{rs1}, 1\nF{label}:");
                    label += 1;
                }
            }
        }
        if looped {
            let _ = writeln!(out, "  addi x30, x30, -1\n  bnez x30, L{b}_loop");
        }
    }
    if seed.is_multiple_of(3) {
        out.push_str("  li a0, 0\n  ret\n");
    } else {
        out.push_str("  li a7, 93\n  li a0, 0\n  ecall\n");
    }
    out.push_str(".data\nbuf:\n  .space 256\n");
    out
}

#[test]
fn random_programs_run_to_their_end_in_the_model() {
    // Without Ripes: every random program ends as it was written to, and the model's own
    // invariant holds (one access per cycle and one at reset).
    if !have_gcc() {
        eprintln!("skipped: {GCC} is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for n in 0..12u64 {
        let case = Case {
            geometry: (8, 1, 2),
            ..random_case(dir.path(), n)
        };
        let (counts, stop) = run_model(&case);
        let want = if n.is_multiple_of(3) {
            Stop::ReturnToZero(0)
        } else {
            Stop::Exit(0)
        };
        assert_eq!(stop, want, "program {n}");
        assert_eq!(
            counts.hits + counts.misses,
            counts.cycles + 1,
            "program {n}"
        );
    }
}

/// A stand-in for Ripes behind `run.sh`: for each I-cache spec in `reports` (`8,1,2,lru`)
/// it writes that report, for any other `other`, as Ripes' `--output` JSON.
fn fake_ripes(dir: &Path, reports: &[(&str, String)], other: &str) -> Ripes {
    let mut script = String::from(
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in --output) out=$2;; --icache) spec=$2;; esac\n  shift\ndone\ncase \"$spec\" in\n",
    );
    for (spec, report) in reports {
        let _ = writeln!(script, "  {spec}) echo '{report}' >\"$out\";;");
    }
    let _ = writeln!(script, "  *) echo '{other}' >\"$out\";;\nesac");
    let bin = dir.join("fake-ripes");
    std::fs::write(&bin, script).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    Ripes {
        bin,
        run_sh: shared().join("ripes/run.sh"),
    }
}

/// Ripes' JSON report of `counts` for a program that ran to its end.
fn report(counts: Counts) -> String {
    format!(
        r#"{{"cycles": {}, "cache": {{"L1I hits": {}, "L1I misses": {}, "L1I hit rate": 0.5}}, "endstate": {{"finished": "yes"}}}}"#,
        counts.cycles, counts.hits, counts.misses
    )
}

/// The message `compare` fails with on `cases` beside `ripes`.
fn compare_fails(ripes: &Ripes, cases: &[Case]) -> String {
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compare(ripes, cases)))
        .expect_err("compare passed");
    err.downcast_ref::<String>().expect("a message").clone()
}

fn three_cases() -> Vec<Case> {
    [
        ("loop-bare-rv32im", (8, 1, 2)),
        ("quiz-rv32imc", (4, 2, 2)),
        ("loop-bare-rv32imc", (2, 4, 1)),
    ]
    .into_iter()
    .map(|(build, geometry)| Case {
        name: build.into(),
        elf: programs_dir().join(format!("{build}.elf")),
        geometry,
        text_entry: false,
    })
    .collect()
}

#[test]
fn a_ripes_that_counts_otherwise_fails_each_program_it_differs_on_in_order() {
    // Without Ripes: a stand-in gives the model's own counts for the first program and other
    // counts for the two after it, which run at once; the failure names those two, in order.
    if !shared().join("ripes/run.sh").exists() {
        eprintln!("skipped: no ../shared/ripes/run.sh");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = three_cases();
    let first = run_model(&cases[0]).0;
    let wrong = Counts {
        cycles: 5,
        hits: 4,
        misses: 2,
    };
    let ripes = fake_ripes(dir.path(), &[("8,1,2,lru", report(first))], &report(wrong));
    let mut want = String::from("2 of 3 runs differ:");
    for case in &cases[1..] {
        let (ours, stop) = run_model(case);
        let (s, w, k) = case.geometry;
        let _ = write!(
            want,
            "\n{} {s}x{w}x{k} ({stop}): Ripes {wrong:?}, model {ours:?}",
            case.name
        );
    }
    assert_eq!(compare_fails(&ripes, &cases), want);

    // With the model's own counts for each, all three pass.
    let specs: Vec<(String, String)> = cases
        .iter()
        .map(|case| {
            let (s, w, k) = case.geometry;
            (format!("{s},{w},{k},lru"), report(run_model(case).0))
        })
        .collect();
    let specs: Vec<(&str, String)> = specs.iter().map(|(s, r)| (s.as_str(), r.clone())).collect();
    let ripes = fake_ripes(dir.path(), &specs, &report(wrong));
    assert_eq!(compare(&ripes, &cases), Vec::<String>::new());
}

#[test]
fn a_ripes_that_stops_short_fails_every_program() {
    // Without Ripes: a stand-in whose processor never finishes gives no counts, and every
    // program is a failure of its own, named in order.
    if !shared().join("ripes/run.sh").exists() {
        eprintln!("skipped: no ../shared/ripes/run.sh");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = three_cases();
    let stopped = r#"{"cycles": 5, "cache": {"L1I hits": 4, "L1I misses": 2, "L1I hit rate": 0.5}, "endstate": {"finished": "no"}}"#;
    let ripes = fake_ripes(dir.path(), &[], stopped);
    let failed = compare_fails(&ripes, &cases);
    let lines: Vec<&str> = failed.lines().collect();
    assert_eq!(lines.len(), 4, "{failed}");
    assert_eq!(lines[0], "3 of 3 runs differ:");
    for (line, case) in lines[1..].iter().zip(&cases) {
        let (s, w, k) = case.geometry;
        let head = format!("{} {s}x{w}x{k}: Ripes did not finish: ", case.name);
        assert!(line.starts_with(&head), "{line}");
        assert!(line.contains(" end=stopped "), "{line}");
    }
}

#[test]
fn the_lab_program_counts_what_ripes_counted() {
    // Without Ripes: the lab program's counts as Ripes v2.2.6 gave them (`run.sh -i 4,1,2,lru`
    // and `-i 8,1,2,lru`), the 0.5000 / 0.7498 of 4 lines included; the model must repeat them.
    let ripes = [
        ("lab-rv32im", 4, (164_004, 82_005, 82_000)),
        ("lab-rv32imc", 4, (164_025, 122_989, 41_037)),
        ("lab-rv32im", 8, (164_004, 163_863, 142)),
        ("lab-rv32imc", 8, (164_025, 163_954, 72)),
    ];
    for (build, sets, (cycles, hits, misses)) in ripes {
        let case = Case {
            name: build.into(),
            elf: programs_dir().join(format!("{build}.elf")),
            geometry: (sets, 1, 2),
            text_entry: false,
        };
        let (counts, stop) = run_model(&case);
        assert_eq!(stop, Stop::ReturnToZero(210), "{build}, {sets} lines");
        assert_eq!(
            (counts.cycles, counts.hits, counts.misses),
            (cycles, hits, misses),
            "{build}, {sets} lines"
        );
    }
}
