//! The official RISC-V ISA tests (riscv-tests: rv32ui, rv32um, rv32ua, rv32uc, rv32mi), all
//! prebuilt ELFs from `../shared/riscv-tests/elf` beside the workspace. Every one must pass.

use std::path::PathBuf;

use rvsim::conformance;

fn suite_dir() -> PathBuf {
    // CARGO_MANIFEST_DIR is crates/rvsim; the workspace root is two levels up, and the suite
    // sits beside the workspace.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/riscv-tests/elf")
}

#[test]
fn all_riscv_tests_pass() {
    let dir = suite_dir();
    assert!(
        dir.is_dir(),
        "the riscv-tests ELFs are missing: expected them in {} (../shared/riscv-tests/elf \
         beside the workspace root; see its README for how to build them)",
        dir.display()
    );
    let results = conformance::run_dir(&dir).expect("reading the test folder");
    let table = conformance::table(&results);
    println!("{table}");
    assert_eq!(results.len(), 77, "expected the 77 RV32 tests:\n{table}");
    assert!(results.iter().all(|r| r.passed), "{table}");
}
