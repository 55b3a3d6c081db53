//! `oscost sim conformance DIR`: runs a folder of riscv-tests style ELFs (the user's own
//! builds of the official suite, say) and prints the pass table; exit 1 if any failed.

use super::ConformanceArgs;
use crate::error::{Error, Result};

pub fn conformance(a: ConformanceArgs) -> Result<i32> {
    if !a.dir.is_dir() {
        return Err(Error::usage(format!(
            "{}: not a folder of test ELFs",
            a.dir.display()
        )));
    }
    let results = rvsim::conformance::run_dir(&a.dir).map_err(|e| Error::io(a.dir.display(), e))?;
    if results.is_empty() {
        return Err(Error::usage(format!(
            "{}: no files to run",
            a.dir.display()
        )));
    }
    // Test names are file names: shown, never acted on by the terminal.
    for line in rvsim::conformance::table(&results).lines() {
        println!("{}", crate::escape::terminal(line));
    }
    Ok(if results.iter().all(|r| r.passed) {
        0
    } else {
        1
    })
}
