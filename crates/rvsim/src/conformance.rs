//! Running riscv-tests style conformance programs: each ELF runs on a default machine until
//! it writes its `tohost` word; 1 means pass, `(N << 1) | 1` means test case N failed, and any
//! other ending (a trap without handler, the instruction limit ...) is a failure with its
//! reason.

use std::path::{Path, PathBuf};

use crate::{Config, Machine, Program, Stop};

/// Instruction limit per test: the official tests need a few thousand; a test that runs
/// this long has hung.
pub const TEST_LIMIT: u64 = 10_000_000;

/// The result of one test program.
#[derive(Clone, Debug)]
pub struct TestResult {
    /// File name, e.g. `rv32ui-p-add`.
    pub name: String,
    /// Suite: the name up to the first `-` (rv32ui, rv32mi ...).
    pub suite: String,
    pub passed: bool,
    /// Why it ended, in words (the loading error if it could not be loaded).
    pub reason: String,
    pub instructions: u64,
}

/// Runs one test ELF.
pub fn run_test(path: &Path) -> TestResult {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let suite = name.split('-').next().unwrap_or("").to_string();
    let fail = |reason: String| TestResult {
        name: name.clone(),
        suite: suite.clone(),
        passed: false,
        reason,
        instructions: 0,
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return fail(format!("cannot read: {e}")),
    };
    let program = match Program::from_elf(&bytes) {
        Ok(p) => p,
        Err(e) => return fail(e.to_string()),
    };
    if !program.symbols.contains_key(crate::machine::TOHOST_SYMBOL) {
        return fail("no tohost symbol: not a riscv-tests style program".into());
    }
    let cfg = Config {
        max_instructions: TEST_LIMIT,
        ..Config::default()
    };
    let mut m = match Machine::new(&cfg, &program) {
        Ok(m) => m,
        Err(e) => return fail(e.to_string()),
    };
    let stop = m.run();
    TestResult {
        passed: stop == Stop::Tohost(1),
        reason: stop.to_string(),
        instructions: m.stats().instret,
        name,
        suite,
    }
}

/// The test ELFs in `dir`: regular files whose name contains `-p-` (riscv-tests naming) or,
/// when there are none, every regular file; sorted by name.
pub fn test_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned());
            // Skip dumps and sources that sit beside the ELFs in some build trees.
            !n.is_some_and(|n| n.ends_with(".dump") || n.ends_with(".S") || n.starts_with('.'))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Runs every test in `dir`.
pub fn run_dir(dir: &Path) -> std::io::Result<Vec<TestResult>> {
    Ok(test_files(dir)?.iter().map(|p| run_test(p)).collect())
}

/// Per suite: (suite, passed, total), in order of first appearance.
pub fn summary(results: &[TestResult]) -> Vec<(String, usize, usize)> {
    let mut out: Vec<(String, usize, usize)> = Vec::new();
    for r in results {
        match out.iter_mut().find(|(s, _, _)| *s == r.suite) {
            Some(row) => {
                row.1 += r.passed as usize;
                row.2 += 1;
            }
            None => out.push((r.suite.clone(), r.passed as usize, 1)),
        }
    }
    out
}

/// The pass table as text: one line per suite, then every failure with its reason.
pub fn table(results: &[TestResult]) -> String {
    let mut out = String::new();
    for (suite, passed, total) in summary(results) {
        out.push_str(&format!("{suite:<10} {passed:>3}/{total:<3} passed\n"));
    }
    let passed = results.iter().filter(|r| r.passed).count();
    out.push_str(&format!(
        "{:<10} {passed:>3}/{:<3} passed\n",
        "total",
        results.len()
    ));
    for r in results.iter().filter(|r| !r.passed) {
        out.push_str(&format!("FAIL {}: {}\n", r.name, r.reason));
    }
    out
}
