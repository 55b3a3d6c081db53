//! Replays the fuzz corpus and every input the fuzzer (or a user) found to crash or hang
//! the run-JSON loader and the report path, on stable Rust, each under a time limit: a
//! panic fails the test, and so does an input that does not finish in time (the ±1e308
//! values that once hung `oscost report` forever).

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// Far above what one input takes in a debug build (well under a second), far below forever.
const LIMIT: Duration = Duration::from_secs(60);

fn replay(dir: &str) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(|| oscost::report::untrusted::load_and_render(&bytes));
            let _ = tx.send(r.map(|r| r.is_ok()).map_err(|_| ()));
        });
        match rx.recv_timeout(LIMIT) {
            Ok(Ok(_)) => {}
            Ok(Err(())) => panic!("{}: panicked", f.display()),
            Err(_) => panic!("{}: did not finish within {LIMIT:?} (a hang)", f.display()),
        }
    }
    files.len()
}

#[test]
fn corpus_and_found_hangs_finish_without_panic() {
    assert!(replay("fuzz/corpus/run_json") >= 1);
    assert!(replay("fuzz/regressions/run_json") >= 3);
}

#[test]
fn the_found_hangs_are_refused_not_rendered() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/run_json");
    for name in ["hang-value-ci-1e308.json", "hang-samples-1e308.json"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert!(
            !oscost::report::untrusted::load_and_render(&bytes).unwrap(),
            "{name}"
        );
    }
    let ok = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/run_json/run-quick.json"),
    )
    .unwrap();
    assert!(oscost::report::untrusted::load_and_render(&ok).unwrap());
}
