//! Cross-compiling a user's C file for the modeled machine: Debian's riscv64-unknown-elf-gcc
//! with picolibc, plus the start-up code and linker script shipped in `rvsim::runtime`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    // Created exclusively in oscost's private runtime directory (never a guessable name in
    // the shared temp directory, where a planted symlink would steer the compiler's output),
    // removed on drop and, after a kill -9, by the next start.
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
            // Course style: no start-up code; main (first in .text) is the entry.
            cmd.args(["-nostdlib", "-Wl,--no-warn-rwx-segments", "-Wl,-e,main"]);
        }
        compile(cmd.arg(source).arg("-o").arg(&out), source, march)?;
        // The same source alone, as an object: its symbol table names the user's functions.
        let obj = dir.join(format!("{march}.o"));
        let mut cmd = gcc(march, cflags);
        if with_runtime {
            cmd.arg("--specs=picolibc.specs");
        }
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

/// Runs one compiler command; its messages go to stderr when it fails.
fn compile(cmd: &mut Command, source: &Path, march: &str) -> Result<()> {
    let result = cmd
        .output()
        .map_err(|e| Error::env(format!("{GCC}: {e}")))?;
    if !result.status.success() {
        let stderr = String::from_utf8_lossy(&result.stderr);
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
