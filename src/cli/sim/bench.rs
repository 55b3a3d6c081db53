//! `oscost sim bench`: how fast the simulator runs (million instructions per second) in its
//! main configurations, on CoreMark (built for rv32im and rv32imc from EEMBC's sources when
//! the cross compiler is installed, validated on every run) and on the built-in loop, beside
//! qemu-riscv32 (Linux user mode) on the same ELF when it is installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use rvsim::coremark::{self, Report};
use rvsim::runtime::{bench_configs, BENCH_ELF, BENCH_USER_ELF};
use rvsim::{Config, Machine, Program, Stop};
use serde_json::{json, Value};

use super::{compile, load_elf, BenchArgs};
use crate::cli::outputs::{Format, Outputs, SimOut};
use crate::engine::stats::median;
use crate::error::{Error, Result};
use crate::probes::scratch::ScratchDir;
use crate::units::fmt_num;

/// Where CoreMark's sources are looked for when `--coremark` is not given.
const COREMARK_DEFAULT: &str = "../shared/coremark";

/// One program to time.
struct Workload {
    /// Short name, for the table and the JSON (`coremark-rv32imc`, `loop`).
    name: String,
    /// What it is, in words.
    about: String,
    program: Program,
    /// CoreMark's iterations, when it is CoreMark (its output is then checked).
    coremark: Option<u32>,
    /// The file qemu-riscv32 runs (the same work: a user-mode build), or why it does not.
    qemu_elf: std::result::Result<PathBuf, String>,
}

/// The timings of one workload in one configuration.
struct Timing {
    label: String,
    instructions: u64,
    seconds: Vec<f64>,
    /// Why the runs do not count (a wrong ending, CoreMark not validated).
    invalid: Option<String>,
}

impl Timing {
    fn median(&self) -> f64 {
        median(&self.seconds)
    }
    fn mips(&self, seconds: f64) -> f64 {
        self.instructions as f64 / seconds / 1e6
    }
}

/// The options that contradict each other or name what is not there, refused before
/// anything is built or run.
fn check_options(a: &BenchArgs) -> Result<()> {
    if a.repeat == 0 {
        return Err(Error::usage("--repeat 0: run at least once"));
    }
    if a.elf.is_some() && a.coremark.is_some() {
        return Err(Error::usage(
            "--coremark builds CoreMark to time; with an ELF given only that ELF is timed",
        ));
    }
    if let Some(dir) = &a.keep_builds {
        if a.elf.is_some() {
            return Err(Error::usage(
                "--keep-builds keeps the CoreMark builds; with an ELF given none is built",
            ));
        }
        if !dir.is_dir() {
            return Err(Error::usage(format!(
                "--keep-builds {}: not an existing folder",
                dir.display()
            )));
        }
    }
    Ok(())
}

pub fn bench(a: BenchArgs) -> Result<()> {
    check_options(&a)?;
    let outputs = Outputs::new().with(Format::Json, a.json.as_deref());
    outputs.check(
        &[],
        &a.elf.iter().map(|p| p.as_path()).collect::<Vec<_>>(),
        None,
    )?;
    // Dropped after the scratch: a Ctrl-C or SIGTERM removes it, then ends the process.
    let _signals = crate::engine::interrupt::Scope::new();
    let scratch = ScratchDir::create_default()?;
    let mut notes = Vec::new();
    let mut workloads = Vec::new();
    match &a.elf {
        Some(path) => workloads.push(Workload {
            name: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            ),
            about: path.display().to_string(),
            program: load_elf(path)?,
            coremark: None,
            qemu_elf: Err(
                "not run on a given ELF (it may not be a Linux user-mode program)".into(),
            ),
        }),
        None => {
            match coremark_dir(a.coremark.as_deref())? {
                Ok(dir) => match compile::compiler_present() {
                    Ok(()) => {
                        for march in ["rv32im", "rv32imc"] {
                            let w = coremark_workload(&dir, march, scratch.path())?;
                            if let (Some(keep), Ok(elf)) = (&a.keep_builds, &w.qemu_elf) {
                                keep_build(elf, keep)?;
                            }
                            workloads.push(w);
                        }
                    }
                    Err(e) => notes.push(format!("CoreMark not built: {e}")),
                },
                Err(why) => notes.push(why),
            }
            let user_elf = scratch.path().join("loop-user-rv32imc.elf");
            write_executable(&user_elf, BENCH_USER_ELF)?;
            workloads.push(Workload {
                name: "loop".into(),
                about: "built in: programs/c/loop.c, REPEAT=200, rv32imc".into(),
                program: Program::from_elf(BENCH_ELF).map_err(|e| Error::env(e.to_string()))?,
                coremark: None,
                qemu_elf: Ok(user_elf),
            });
        }
    }
    let width = crate::report::term::Term::stdout().width;
    let mut out = String::new();
    let mut json_workloads = Vec::new();
    for w in &workloads {
        let mut timings = Vec::new();
        for (label, cfg) in bench_configs() {
            crate::engine::interrupt::check()?;
            timings.push(time_sim(w, label, &cfg, a.repeat)?);
        }
        let qemu = if a.no_qemu {
            Err("--no-qemu".to_string())
        } else {
            w.qemu_elf
                .clone()
                .and_then(|elf| time_qemu(w, &elf, a.repeat))
        };
        out.push_str(&table(w, &timings, &qemu, width));
        json_workloads.push(workload_json(w, &timings, &qemu));
    }
    // Notes are prose, word-wrapped to the terminal ("CoreMark not built: …" is 140
    // characters).
    for note in &notes {
        out.push_str(&crate::report::term::wrap(note, width, "", "  "));
        out.push('\n');
    }
    print!("{out}");
    outputs.write(&SimOut {
        json: json!({
            "schema": 1,
            "repeat": a.repeat,
            "workloads": json_workloads,
            "notes": notes,
        }),
        ..SimOut::default()
    })
}

/// CoreMark's source folder, or why there is none (an error only when it was named).
fn coremark_dir(given: Option<&Path>) -> Result<std::result::Result<PathBuf, String>> {
    let dir = given.unwrap_or(Path::new(COREMARK_DEFAULT));
    if dir.join("core_main.c").is_file() {
        return Ok(Ok(dir.to_path_buf()));
    }
    let why = format!(
        "{}: no CoreMark sources there (EEMBC CoreMark's core_main.c and the rest)",
        dir.display()
    );
    match given {
        Some(_) => Err(Error::usage(format!("--coremark {why}"))),
        None => Ok(Err(format!(
            "CoreMark not built: {why}; give --coremark DIR to time it"
        ))),
    }
}

fn coremark_workload(dir: &Path, march: &str, scratch: &Path) -> Result<Workload> {
    let elf = compile::build_coremark(dir, march, coremark::ITERATIONS, scratch)?;
    Ok(Workload {
        name: format!("coremark-{march}"),
        about: format!(
            "CoreMark {march}, {} iterations, 2K performance run",
            coremark::ITERATIONS
        ),
        program: load_elf(&elf)?,
        coremark: Some(coremark::ITERATIONS),
        qemu_elf: Ok(elf),
    })
}

/// Copies a build into `dir` under its own name, through the one way files are written.
fn keep_build(elf: &Path, dir: &Path) -> Result<()> {
    let bytes = std::fs::read(elf).map_err(|e| Error::io(elf.display(), e))?;
    let name = elf.file_name().unwrap_or_default().to_string_lossy();
    crate::cli::outputs::write_in(dir, &[(name.into_owned(), bytes)])
}

/// qemu's loader refuses a file that is not executable.
fn write_executable(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, bytes).map_err(|e| Error::io(path.display(), e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| Error::io(path.display(), e))
}

/// Why a timed run does not count, if it does not: it did not end with a status (a trap, the
/// instruction limit), or, for CoreMark (`coremark`: its iterations), it did not exit 0 with
/// its output validated and the known CRCs.
fn run_problem(stop: Stop, stdout: &[u8], coremark: Option<u32>) -> Option<String> {
    if stop.status().is_none() {
        return Some(format!("the program ended: {stop}"));
    }
    let iterations = coremark?;
    if stop != Stop::Exit(0) {
        return Some(format!("CoreMark ended: {stop}"));
    }
    let text = String::from_utf8_lossy(stdout);
    Report::parse(&text)
        .and_then(|r| r.check(iterations))
        .err()
        .map(|e| format!("CoreMark: {e}"))
}

/// Runs workload `w` `repeat` times on the simulator in one configuration.
fn time_sim(w: &Workload, label: &str, cfg: &Config, repeat: u32) -> Result<Timing> {
    let mut t = Timing {
        label: label.to_string(),
        instructions: 0,
        seconds: Vec::new(),
        invalid: None,
    };
    for _ in 0..repeat {
        let mut m = Machine::new(cfg, &w.program).map_err(|e| Error::usage(e.to_string()))?;
        let start = Instant::now();
        let stop = m.run();
        t.seconds.push(start.elapsed().as_secs_f64());
        t.instructions = m.stats().instret;
        t.invalid = t.invalid.or(run_problem(stop, m.stdout(), w.coremark));
    }
    Ok(t)
}

/// Times qemu-riscv32 on `elf` (wall clock, including its start-up), with the instruction
/// count taken from the simulator on the same file. Errs with why it could not.
fn time_qemu(w: &Workload, elf: &Path, repeat: u32) -> std::result::Result<Timing, String> {
    let bytes = std::fs::read(elf).map_err(|e| format!("{}: {e}", elf.display()))?;
    let program = Program::from_elf(&bytes).map_err(|e| e.to_string())?;
    let mut count = Machine::new(&Config::default(), &program).map_err(|e| e.to_string())?;
    let stop = count.run();
    if stop.status() != Some(0) {
        return Err(format!(
            "its user-mode build ends with {stop} on the simulator"
        ));
    }
    let mut t = Timing {
        label: "qemu-riscv32".into(),
        instructions: count.stats().instret,
        seconds: Vec::new(),
        invalid: None,
    };
    for _ in 0..repeat {
        let start = Instant::now();
        let o = match Command::new("qemu-riscv32").arg(elf).output() {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err("qemu-riscv32 not installed (apt-get install -y qemu-user)".into())
            }
            Err(e) => return Err(format!("qemu-riscv32: {e}")),
        };
        t.seconds.push(start.elapsed().as_secs_f64());
        if !o.status.success() {
            let why = String::from_utf8_lossy(&o.stderr);
            return Err(format!(
                "qemu-riscv32 exited with {}: {}",
                o.status,
                why.trim()
            ));
        }
        // qemu's own clock makes CoreMark's timing rule meaningless there: the CRCs say the
        // work was the same.
        if let Some(n) = w.coremark {
            let text = String::from_utf8_lossy(&o.stdout);
            let report = Report::parse(&text).map_err(|e| format!("qemu-riscv32: {e}"))?;
            let same = Report {
                validated: true,
                ..report
            };
            same.check(n)
                .map_err(|e| format!("qemu-riscv32: CoreMark {e}"))?;
        }
    }
    Ok(t)
}

/// The table of one workload, its prose lines (a given ELF's path, reasons, the validation)
/// word-wrapped to `width` (the rows are 76 columns at most).
fn table(
    w: &Workload,
    timings: &[Timing],
    qemu: &std::result::Result<Timing, String>,
    width: usize,
) -> String {
    let prose = |text: String, first: &str, rest: &str| {
        crate::report::term::wrap(&text, width, first, rest) + "\n"
    };
    let mut s = prose(format!("{}: {}", w.name, w.about), "", "  ");
    let cm = if w.coremark.is_some() {
        "CoreMark/s"
    } else {
        ""
    };
    let header = format!(
        "  {:<28}{:>11}{:>9}  {:<17}{cm:>10}",
        "configuration", "instructions", "seconds", "MIPS (range)"
    );
    s += header.trim_end();
    s.push('\n');
    let mut row = |t: &Timing| {
        let med = t.median();
        let lo = t.seconds.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = t.seconds.iter().copied().fold(0.0, f64::max);
        let mut mips = fmt_num(t.mips(med));
        if t.seconds.len() > 1 {
            mips += &format!(" ({}-{})", fmt_num(t.mips(hi)), fmt_num(t.mips(lo)));
        }
        let per_s = w
            .coremark
            .map(|n| fmt_num(n as f64 / med))
            .unwrap_or_default();
        let line = format!(
            "  {:<28}{:>11}{:>9}  {mips:<17}{per_s:>10}",
            t.label,
            t.instructions,
            fmt_num(med)
        );
        s += line.trim_end();
        s.push('\n');
        if let Some(why) = &t.invalid {
            s += &prose(format!("INVALID: {why}"), "    ", "      ");
        }
    };
    for t in timings {
        row(t);
    }
    match qemu {
        Ok(t) => {
            row(t);
            s += &prose(
                "(qemu-riscv32: Linux user mode, wall clock including its start-up, no cache model)"
                    .into(),
                "  ",
                "   ",
            );
        }
        Err(why) => s += &prose(format!("qemu-riscv32 not timed: {why}"), "  ", "    "),
    }
    if let (Some(n), Some(t)) = (w.coremark, timings.first()) {
        if t.invalid.is_none() {
            s += &prose(
                format!(
                    "validated on every run: {n} iterations, seedcrc 0x{:04x}, crclist 0x{:04x}, crcmatrix 0x{:04x}, crcstate 0x{:04x}",
                    coremark::SEEDCRC,
                    coremark::CRCLIST,
                    coremark::CRCMATRIX,
                    coremark::CRCSTATE
                ),
                "  ",
                "    ",
            );
        }
    }
    s.push('\n');
    s
}

fn timing_json(w: &Workload, t: &Timing) -> Value {
    let med = t.median();
    json!({
        "configuration": t.label,
        "instructions": t.instructions,
        "seconds_median": med,
        "seconds": t.seconds,
        "mips": t.mips(med),
        "coremark_iterations_per_second": w.coremark.map(|n| n as f64 / med),
        "valid": t.invalid.is_none(),
        "invalid_reason": t.invalid,
    })
}

fn workload_json(
    w: &Workload,
    timings: &[Timing],
    qemu: &std::result::Result<Timing, String>,
) -> Value {
    json!({
        "name": w.name,
        "about": w.about,
        "coremark_iterations": w.coremark,
        "simulator": timings.iter().map(|t| timing_json(w, t)).collect::<Vec<_>>(),
        "qemu": match qemu {
            Ok(t) => timing_json(w, t),
            Err(why) => json!({"skipped": why}),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "Iterations       : 200
seedcrc          : 0xe9f5
[0]crclist       : 0xe714
[0]crcmatrix     : 0x1fd7
[0]crcstate      : 0x8e3a
[0]crcfinal      : 0x382f
Correct operation validated. See README.md for run and reporting rules.
Timed cycles     : 61629127
Timed instret    : 61629131
";

    /// Every line of a CoreMark table fits 80 columns: the validation line, a long reason and
    /// a given ELF's long path wrap (the validation line alone was 107 columns).
    #[test]
    fn a_workload_table_fits_80_columns() {
        let w = Workload {
            name: "coremark-rv32imc".into(),
            about: format!("/home/someone/{}/coremark.elf", "deep-directory/".repeat(6)),
            program: Program::from_elf(BENCH_ELF).unwrap(),
            coremark: Some(200),
            qemu_elf: Err(String::new()),
        };
        let t = |label: &str, invalid: Option<String>| Timing {
            label: label.into(),
            instructions: 61_682_467,
            seconds: vec![0.151, 0.149, 0.160],
            invalid,
        };
        let timings = [
            t("functional only", None),
            t(
                "I+D-cache + 5-stage",
                Some("CoreMark ended with exit code 1 ".repeat(4)),
            ),
        ];
        let qemu = Err("qemu-riscv32 is not installed: apt-get install qemu-user ".repeat(2));
        let text = table(&w, &timings, &qemu, 80);
        assert!(text.contains("validated on every run"), "{text}");
        assert!(text.contains("crcstate 0x8e3a"), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{} columns: {line}", line.len());
        }
        let with_qemu = table(&w, &timings[..1], &Ok(t("qemu-riscv32", None)), 80);
        assert!(
            with_qemu.lines().all(|l| l.chars().count() <= 80),
            "{with_qemu}"
        );
    }

    #[test]
    fn a_run_counts_only_when_it_ends_as_it_should() {
        assert_eq!(run_problem(Stop::Exit(3), b"", None), None);
        let limit = Stop::Limit { limit: 5, pc: 0 };
        assert!(run_problem(limit, b"", None)
            .unwrap()
            .contains("instruction limit"));
        assert_eq!(
            run_problem(Stop::Exit(0), VALID.as_bytes(), Some(200)),
            None
        );
        let why = run_problem(Stop::Exit(1), VALID.as_bytes(), Some(200)).unwrap();
        assert!(why.starts_with("CoreMark ended"), "{why}");
        let wrong = VALID.replace("0xe714", "0x0000");
        let why = run_problem(Stop::Exit(0), wrong.as_bytes(), Some(200)).unwrap();
        assert!(why.contains("crclist"), "{why}");
        let why = run_problem(Stop::Exit(0), VALID.as_bytes(), Some(100)).unwrap();
        assert!(why.contains("iterations"), "{why}");
    }
}
