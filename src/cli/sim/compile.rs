//! Cross-compiling a user's C file for the modeled machine: Debian's riscv64-unknown-elf-gcc
//! with picolibc, plus the start-up code and linker script shipped in `rvsim::runtime`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rvsim::Program;

use crate::error::{Error, Result};

const GCC: &str = "riscv64-unknown-elf-gcc";
const INSTALL: &str = "install the RISC-V cross compiler and picolibc with: sudo apt-get install -y gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf";

/// One program built for one -march.
pub struct Build {
    pub march: String,
    /// Whether the build may contain 16-bit instructions (the C extension).
    pub compressed: bool,
    pub program: Program,
    /// The functions the user's source defines (from its object file's symbol table).
    pub own_functions: BTreeMap<String, u32>,
}

/// Whether compare's inputs are one C file (true) or ELF files (false); anything else is
/// refused.
pub fn is_c_source(inputs: &[PathBuf]) -> Result<bool> {
    let is_c = |p: &PathBuf| p.extension().is_some_and(|e| e == "c");
    match inputs {
        [one] if is_c(one) => Ok(true),
        _ if inputs.iter().any(is_c) => Err(Error::usage(
            "give one C file (built once per --march) or two or more ELF files, not a mix",
        )),
        [_] => Err(Error::usage(
            "one ELF file: give two or more to compare (or a .c file to build per --march)",
        )),
        _ => Ok(false),
    }
}

/// Checks a -march value against what the model implements and says whether it has C.
pub fn check_march(march: &str) -> Result<bool> {
    let base = march.split('_').next().unwrap_or("");
    let Some(letters) = base.strip_prefix("rv32") else {
        return Err(Error::usage(format!(
            "--march {march}: the model runs RV32 only (e.g. rv32im, rv32imc)"
        )));
    };
    if !letters.starts_with('i') || letters.chars().any(|c| !"imac".contains(c)) {
        return Err(Error::usage(format!(
            "--march {march}: the model implements the I, M, A and C extensions (e.g. rv32i, rv32im, rv32imac)"
        )));
    }
    Ok(letters.contains('c'))
}

/// Compiles `source` once per -march value, with the shipped start-up code (`runtime` =
/// "rvsim") or none at all ("none": -nostdlib at the linker's default address).
pub fn build_all(
    source: &Path,
    marches: &[String],
    cflags: &str,
    runtime: &str,
) -> Result<Vec<Build>> {
    let with_runtime = match runtime {
        "rvsim" => true,
        "none" => false,
        other => {
            return Err(Error::usage(format!(
            "--runtime {other}: use rvsim (shipped start-up code and picolibc) or none (-nostdlib)"
        )))
        }
    };
    if marches.is_empty() {
        return Err(Error::usage("--march: give at least one value"));
    }
    let flags: Vec<bool> = marches
        .iter()
        .map(|m| check_march(m))
        .collect::<Result<_>>()?;
    match std::fs::metadata(source) {
        Ok(m) if m.is_file() => {}
        Ok(m) => {
            return Err(Error::usage(format!(
                "{}: {}, not a C file (only regular files are compiled)",
                source.display(),
                crate::input::kind_of(m.file_type())
            )))
        }
        Err(_) => {
            return Err(Error::usage(format!(
                "{}: no such C file",
                source.display()
            )))
        }
    }
    compiler_present()?;
    // A file name is never read as an option: `-fdump-tree-original=x.c` is `./-fdump-…`.
    let source = &not_an_option(source);
    // Created exclusively in oscost's private runtime directory (never a guessable name in
    // the shared temp directory, where a planted symlink would steer the compiler's output),
    // removed on drop and, after a kill -9, by the next start.
    // Declared before the scratch, so it drops after it: a Ctrl-C or SIGTERM while building
    // removes the scratch first, then ends the process as the signal would.
    let _signals = crate::engine::interrupt::Scope::new();
    let scratch = crate::probes::scratch::ScratchDir::create_default()?;
    let dir = scratch.path();
    write_files(dir, &RUNTIME)?;
    let mut builds = Vec::new();
    for (march, compressed) in marches.iter().zip(flags) {
        let out = dir.join(format!("{march}.elf"));
        let mut cmd = gcc(march, cflags);
        if with_runtime {
            cmd.args(["--specs=picolibc.specs", "-nostartfiles"])
                .arg("-T")
                .arg(dir.join("link.ld"))
                .arg("-Wl,--no-warn-rwx-segments")
                .arg(dir.join("crt0.S"))
                .arg(dir.join("syscalls.c"));
        } else {
            // Course style: no start-up code or libraries; main (first in .text) is the entry.
            // picolibc's specs put its headers on the include path, so <stdint.h> is found
            // as the lab expects; -nostdlib keeps every library out.
            cmd.args(FREESTANDING);
        }
        compile(cmd.arg(source).arg("-o").arg(&out), source, march)?;
        let mode = match with_runtime {
            true => "--specs=picolibc.specs -nostartfiles -T link.ld crt0.S syscalls.c".into(),
            false => FREESTANDING.join(" "),
        };
        let line = format!(
            "oscost: built for {march}: {GCC} -march={march} -mabi=ilp32 {} {mode} {}",
            cflags.split_whitespace().collect::<Vec<_>>().join(" "),
            crate::escape::terminal(&source.to_string_lossy())
        );
        let width = crate::report::term::Term::stdout().width;
        eprintln!("{}", crate::report::term::wrap(&line, width, "", "    "));
        // The same source alone, as an object: its symbol table names the user's functions.
        let obj = dir.join(format!("{march}.o"));
        let mut cmd = gcc(march, cflags);
        cmd.arg("--specs=picolibc.specs");
        compile(cmd.arg("-c").arg(source).arg("-o").arg(&obj), source, march)?;
        let obj_bytes = std::fs::read(&obj).map_err(|e| Error::io(obj.display(), e))?;
        let own_functions = rvsim::elf::defined_functions(&obj_bytes)
            .map_err(|e| Error::env(format!("{}: {e}", obj.display())))?;
        let program = super::load_elf(&out)?;
        builds.push(Build {
            march: march.clone(),
            compressed,
            program,
            own_functions,
        });
    }
    Ok(builds)
}

/// The flags of a build with `--runtime none`: picolibc's headers (its specs file adds their
/// directory), no start-up files, no libraries, `main` as the entry.
const FREESTANDING: [&str; 4] = [
    "--specs=picolibc.specs",
    "-nostdlib",
    "-Wl,--no-warn-rwx-segments",
    "-Wl,-e,main",
];

/// `path` as an argument no program takes for an option: `./` before a relative path.
fn not_an_option(path: &Path) -> PathBuf {
    if path.is_absolute() || path.starts_with(".") {
        path.to_path_buf()
    } else {
        Path::new(".").join(path)
    }
}

/// The shipped runtime's files, by name.
const RUNTIME: [(&str, &str); 3] = [
    ("crt0.S", rvsim::runtime::CRT0_S),
    ("syscalls.c", rvsim::runtime::SYSCALLS_C),
    ("link.ld", rvsim::runtime::LINK_LD),
];

/// Errs, saying how to install it, when the cross compiler does not run.
pub fn compiler_present() -> Result<()> {
    match Command::new(GCC).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(Error::env(format!("{GCC} not found; {INSTALL}"))),
    }
}

fn write_files(dir: &Path, files: &[(&str, &str)]) -> Result<()> {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| Error::io(path.display(), e))?;
    }
    Ok(())
}

/// Builds CoreMark (its unmodified sources in `coremark`, the port of `rvsim::coremark`) for
/// `march` with `iterations` iterations, into `dir`; returns the ELF's path.
pub fn build_coremark(
    coremark: &Path,
    march: &str,
    iterations: u32,
    dir: &Path,
) -> Result<PathBuf> {
    write_files(dir, &RUNTIME)?;
    write_files(
        dir,
        &[
            ("core_portme.c", rvsim::coremark::PORTME_C),
            ("core_portme.h", rvsim::coremark::PORTME_H),
        ],
    )?;
    let out = dir.join(format!("coremark-{march}.elf"));
    let mut cmd = gcc(march, "");
    cmd.args(["--specs=picolibc.specs", "-nostartfiles"])
        .arg("-T")
        .arg(dir.join("link.ld"))
        .arg("-Wl,--no-warn-rwx-segments")
        .args(rvsim::coremark::compiler_flags(iterations, dir, coremark))
        .args(["crt0.S", "syscalls.c", "core_portme.c"].map(|f| dir.join(f)))
        .args(rvsim::coremark::SOURCES.map(|f| coremark.join(f)))
        .arg("-o")
        .arg(&out);
    compile(&mut cmd, &coremark.join("core_main.c"), march)?;
    Ok(out)
}

/// The cross compiler with the flags every build of one -march shares.
fn gcc(march: &str, cflags: &str) -> Command {
    let mut cmd = Command::new(GCC);
    cmd.arg(format!("-march={march}"))
        .arg("-mabi=ilp32")
        .args(cflags.split_whitespace());
    cmd
}

/// How long one compiler command may run: a source that includes a FIFO or `/dev/zero`
/// would otherwise keep it (and oscost) waiting for ever.
pub const COMPILE_LIMIT: Duration = Duration::from_secs(60);

/// The most of the compiler's messages kept (the rest is cut, saying so).
const MAX_MESSAGES: usize = 64 * 1024;

/// Runs `cmd` in a process group of its own (so the compiler's own children go with it),
/// with standard input closed, for at most `limit`; Ctrl-C or SIGTERM to oscost ends it too.
/// Returns its exit status and its messages.
fn run_bounded(cmd: &mut Command, limit: Duration) -> Result<(std::process::ExitStatus, String)> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| Error::env(format!("{GCC}: {e}")))?;
    let pgid = child.id() as libc::pid_t;
    let mut pipe = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut pipe).take(MAX_MESSAGES as u64).read_to_end(&mut buf);
        // Drain the rest so the compiler never blocks on a full pipe.
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        buf
    });
    let start = Instant::now();
    let stopped = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(Error::env(format!("{GCC}: {e}"))),
        }
        if crate::engine::interrupt::requested() {
            break Err(Error::Interrupted);
        }
        if start.elapsed() > limit {
            break Err(Error::usage(format!(
                "{GCC} ran for more than {} s and was stopped (does the source include a FIFO, a device or a very large file?)",
                limit.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    if stopped.is_err() {
        // SAFETY: signalling the process group we created for this compiler only.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = child.wait();
    }
    let messages = reader.join().unwrap_or_default();
    Ok((stopped?, String::from_utf8_lossy(&messages).into_owned()))
}

/// Runs one compiler command; its messages go to stderr when it fails.
fn compile(cmd: &mut Command, source: &Path, march: &str) -> Result<()> {
    let (status, stderr) = run_bounded(cmd, COMPILE_LIMIT)?;
    if !status.success() {
        if stderr.contains("picolibc.specs") {
            return Err(Error::env(format!("picolibc is missing; {INSTALL}")));
        }
        eprint!("{stderr}");
        return Err(Error::usage(format!(
            "compiling {} for {march} failed (compiler messages above)",
            source.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compiler_past_its_limit_is_stopped_with_its_children() {
        let t = tempfile::tempdir().unwrap();
        let mark = t.path().join("child-ran");
        // A "compiler" whose own child outlives it unless the whole group is killed.
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("(sleep 3; touch {}) & sleep 30", mark.display()));
        let start = Instant::now();
        let e = run_bounded(&mut cmd, Duration::from_millis(300)).unwrap_err();
        assert!(e.to_string().contains("was stopped"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_secs(4));
        assert!(!mark.exists(), "the compiler's child was left running");
        // Within its limit, its status and messages come back.
        let mut ok = Command::new("sh");
        ok.arg("-c").arg("echo said >&2; exit 3");
        let (status, said) = run_bounded(&mut ok, Duration::from_secs(30)).unwrap();
        assert_eq!(status.code(), Some(3));
        assert_eq!(said, "said\n");
    }

    #[test]
    fn a_file_name_never_reaches_the_compiler_as_an_option() {
        assert_eq!(
            not_an_option(Path::new("-fdump-tree-original=x.c")),
            Path::new("./-fdump-tree-original=x.c")
        );
        assert_eq!(not_an_option(Path::new("/a/b.c")), Path::new("/a/b.c"));
        assert_eq!(not_an_option(Path::new("./b.c")), Path::new("./b.c"));
    }
}
