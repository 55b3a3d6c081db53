//! CoreMark on the modeled machine: the port (`programs/coremark/`), how to build it with
//! EEMBC's unmodified sources (which are not part of this crate: pass their folder), and the
//! check of its output.
//!
//! The port reads the `cycle` and `instret` counters (the unprivileged views of mcycle and
//! minstret) and writes through the program ABI, and the start-up code is built without its
//! machine-mode set-up (`-DRVSIM_USER_MODE`), so the same ELF also runs under a Linux
//! user-mode emulator such as qemu-riscv32: the two can be timed on identical work.
//!
//! Build (what [`compiler_flags`] returns, plus the runtime of [`crate::runtime`]):
//!
//! ```text
//! riscv64-unknown-elf-gcc -march=rv32imc -mabi=ilp32 -O2 --specs=picolibc.specs \
//!     -nostartfiles -T link.ld -DRVSIM_USER_MODE -DPERFORMANCE_RUN=1 -DITERATIONS=200 \
//!     '-DFLAGS_STR="-O2"' -I PORT -I COREMARK crt0.S syscalls.c PORT/core_portme.c \
//!     COREMARK/core_list_join.c COREMARK/core_main.c COREMARK/core_matrix.c \
//!     COREMARK/core_state.c COREMARK/core_util.c -o coremark.elf
//! ```

use std::path::Path;

/// The port's platform file.
pub const PORTME_C: &str = include_str!("../programs/coremark/core_portme.c");
/// The port's configuration header.
pub const PORTME_H: &str = include_str!("../programs/coremark/core_portme.h");
/// CoreMark's own sources, in its folder.
pub const SOURCES: [&str; 5] = [
    "core_list_join.c",
    "core_main.c",
    "core_matrix.c",
    "core_state.c",
    "core_util.c",
];
/// Iterations of the benchmark build: about 62 million instructions (rv32imc), and at the
/// port's nominal 1 MHz clock more than the 10 seconds CoreMark requires of a valid run.
pub const ITERATIONS: u32 = 200;

/// What a correct 2K performance run prints (CoreMark's README): the seeds' CRC and the
/// CRCs of the three algorithms, which do not depend on the number of iterations.
pub const SEEDCRC: u16 = 0xe9f5;
pub const CRCLIST: u16 = 0xe714;
pub const CRCMATRIX: u16 = 0x1fd7;
pub const CRCSTATE: u16 = 0x8e3a;

/// Compiler flags of a build with `iterations` iterations (the `-march` and `-mabi` flags,
/// the runtime files and the sources are the caller's).
pub fn compiler_flags(iterations: u32, port_dir: &Path, coremark_dir: &Path) -> Vec<String> {
    vec![
        "-O2".into(),
        "-DRVSIM_USER_MODE".into(),
        "-DPERFORMANCE_RUN=1".into(),
        format!("-DITERATIONS={iterations}"),
        "-DFLAGS_STR=\"-O2\"".into(),
        format!("-I{}", port_dir.display()),
        format!("-I{}", coremark_dir.display()),
    ]
}

/// What a CoreMark run reported about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub iterations: u64,
    pub seedcrc: u16,
    pub crclist: u16,
    pub crcmatrix: u16,
    pub crcstate: u16,
    pub crcfinal: u16,
    /// Whether it printed "Correct operation validated.".
    pub validated: bool,
    /// Cycles and instructions of the timed part, as the port read them.
    pub timed_cycles: u64,
    pub timed_instret: u64,
}

impl Report {
    /// Parses CoreMark's output (the port's lines included). Errors name what is missing.
    pub fn parse(output: &str) -> Result<Report, String> {
        let value = |label: &str| -> Result<&str, String> {
            output
                .lines()
                .find_map(|l| {
                    let (key, v) = l.split_once(':')?;
                    (key.trim() == label).then_some(v.trim())
                })
                .ok_or_else(|| format!("no '{label}' line in CoreMark's output"))
        };
        let crc = |label: &str| -> Result<u16, String> {
            let v = value(label)?;
            u16::from_str_radix(v.trim_start_matches("0x"), 16)
                .map_err(|_| format!("'{label}' is not a 16-bit hexadecimal CRC: {v}"))
        };
        let number = |label: &str| -> Result<u64, String> {
            let v = value(label)?;
            v.parse()
                .map_err(|_| format!("'{label}' is not a whole number: {v}"))
        };
        Ok(Report {
            iterations: number("Iterations")?,
            seedcrc: crc("seedcrc")?,
            crclist: crc("[0]crclist")?,
            crcmatrix: crc("[0]crcmatrix")?,
            crcstate: crc("[0]crcstate")?,
            crcfinal: crc("[0]crcfinal")?,
            validated: output
                .lines()
                .any(|l| l.starts_with("Correct operation validated.")),
            timed_cycles: number("Timed cycles")?,
            timed_instret: number("Timed instret")?,
        })
    }

    /// Whether this is a correct 2K performance run of `iterations` iterations: CoreMark
    /// validated itself and the CRCs are the known ones. Errors say what is wrong.
    pub fn check(&self, iterations: u32) -> Result<(), String> {
        let crcs = [
            ("seedcrc", self.seedcrc, SEEDCRC),
            ("crclist", self.crclist, CRCLIST),
            ("crcmatrix", self.crcmatrix, CRCMATRIX),
            ("crcstate", self.crcstate, CRCSTATE),
        ];
        for (name, got, want) in crcs {
            if got != want {
                return Err(format!("{name} 0x{got:04x}, expected 0x{want:04x}"));
            }
        }
        if self.iterations != iterations as u64 {
            return Err(format!(
                "{} iterations ran, {iterations} were built in",
                self.iterations
            ));
        }
        if !self.validated {
            return Err("CoreMark did not print \"Correct operation validated.\"".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "2K performance run parameters for coremark.
CoreMark Size    : 666
Total ticks      : 61629127
Iterations       : 200
seedcrc          : 0xe9f5
[0]crclist       : 0xe714
[0]crcmatrix     : 0x1fd7
[0]crcstate      : 0x8e3a
[0]crcfinal      : 0x382f
Correct operation validated. See README.md for run and reporting rules.
Timed cycles     : 61629127
Timed instret    : 61629131
";

    #[test]
    fn a_correct_run_passes() {
        let r = Report::parse(GOOD).unwrap();
        assert_eq!(r.crcfinal, 0x382f);
        assert_eq!((r.timed_cycles, r.timed_instret), (61629127, 61629131));
        assert_eq!(r.check(200), Ok(()));
    }

    #[test]
    fn wrong_crcs_iterations_or_no_validation_fail() {
        let bad_crc = GOOD.replace("0x1fd7", "0x1fd8");
        let err = Report::parse(&bad_crc).unwrap().check(200).unwrap_err();
        assert!(err.contains("crcmatrix 0x1fd8"), "{err}");
        assert!(Report::parse(GOOD).unwrap().check(100).is_err());
        let unvalidated = GOOD.replace("Correct operation validated.", "Errors detected");
        let err = Report::parse(&unvalidated).unwrap().check(200).unwrap_err();
        assert!(err.contains("validated"), "{err}");
        let truncated = &GOOD[..GOOD.find("[0]crcstate").unwrap()];
        let err = Report::parse(truncated).unwrap_err();
        assert!(err.contains("[0]crcstate"), "{err}");
    }
}
