//! The start-up code, system hooks and linker script that C programs need to run on this
//! machine (the files in `programs/rt/`), embedded so a tool can compile a user's C file
//! without a checkout of this crate. Build with Debian's cross compiler and picolibc:
//!
//! ```text
//! riscv64-unknown-elf-gcc -march=rv32imc -mabi=ilp32 -O2 --specs=picolibc.specs \
//!     -nostartfiles -T link.ld crt0.S syscalls.c prog.c -o prog.elf
//! ```

/// Start-up code: stack, gp, tp, .bss, trap handler, optional periodic timer, main, exit.
pub const CRT0_S: &str = include_str!("../programs/rt/crt0.S");
/// stdout/stderr and _exit for picolibc through the program ABI (ecall 64 / 93).
pub const SYSCALLS_C: &str = include_str!("../programs/rt/syscalls.c");
/// One RAM at 0x80000000 (4 MiB), stack at the top.
pub const LINK_LD: &str = include_str!("../programs/rt/link.ld");
/// The loop-heavy benchmark program (`programs/c/loop.c`, REPEAT=200) built for rv32imc.
pub const BENCH_ELF: &[u8] = include_bytes!("../programs/elf/bench-rv32imc.elf");
/// The same benchmark built with `-DRVSIM_USER_MODE`: no machine-mode set-up, so it also runs
/// under a Linux user-mode emulator such as qemu-riscv32 (same write/exit system calls).
pub const BENCH_USER_ELF: &[u8] = include_bytes!("../programs/elf/bench-user-rv32imc.elf");

/// The configurations `oscost sim bench` times (and the speed example and tests reuse):
/// functional only; an 8-set direct-mapped I-cache of 2-word lines with 3C classification;
/// that I-cache, a 16x2x4 D-cache and the 5-stage pipeline with a 10-cycle miss penalty; the
/// same with a 2-bit branch predictor (256 counters, a 64-entry BTB); and the I-cache counted
/// per cycle as Ripes does, with the pipeline (no miss penalty).
pub fn bench_configs() -> [(&'static str, crate::Config); 5] {
    use crate::{
        CacheConfig, Config, FetchCount, PredictorConfig, PredictorKind, Replacement, WritePolicy,
    };
    let cache = |sets, ways, words| CacheConfig {
        sets,
        ways,
        words_per_line: words,
        replacement: Replacement::Lru,
        write_policy: WritePolicy::WriteBack,
        write_allocate: true,
        seed: 1,
    };
    let base = Config::default();
    [
        ("functional only", base.clone()),
        (
            "I-cache 8x1x2 (3C)",
            Config {
                icache: Some(cache(8, 1, 2)),
                ..base.clone()
            },
        ),
        (
            "I+D-cache + 5-stage",
            Config {
                icache: Some(cache(8, 1, 2)),
                dcache: Some(cache(16, 2, 4)),
                pipeline: true,
                miss_penalty: 10,
                ..base.clone()
            },
        ),
        (
            "I+D-cache + 5-stage, 2bit",
            Config {
                icache: Some(cache(8, 1, 2)),
                dcache: Some(cache(16, 2, 4)),
                pipeline: true,
                miss_penalty: 10,
                predictor: PredictorConfig {
                    kind: PredictorKind::TwoBit,
                    ..PredictorConfig::default()
                },
                ..base.clone()
            },
        ),
        (
            "I-cache per cycle + 5-stage",
            Config {
                icache: Some(cache(8, 1, 2)),
                pipeline: true,
                count: FetchCount::PerCycle,
                ..base
            },
        ),
    ]
}
