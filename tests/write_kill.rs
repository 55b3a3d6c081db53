//! An output write killed (-9) between writing its new content and the rename leaves nothing
//! in the output directory: the new content is an unnamed file until the moment it is renamed
//! into place, and the kernel frees it with its dead writer. No journal entry names the
//! directory. This file holds a single test so the test binary is single-threaded when it
//! forks.

mod common;

use oscost::report::export::write_atomic_with_hook;

fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_writer_killed_mid_write_leaves_nothing_after_the_next_start() {
    let out = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    // The journal lives here, not in the user's temp directory (set before the fork, while
    // this process has one thread).
    std::env::set_var("OSCOST_RUNTIME_DIR", runtime.path().join("rt"));
    let target = out.path().join("run.json");
    std::fs::write(out.path().join("keep.txt"), "not ours").unwrap();

    // Write the temporary file, then stop before the rename and be killed there.
    common::kill_at(|stop| {
        let _ = write_atomic_with_hook(&target, &[b'x'; 1 << 16], stop);
    });
    // Nothing of the write is left, no target appeared, and the next start has nothing to do.
    assert_eq!(listing(out.path()), vec!["keep.txt".to_string()]);
    let rec = oscost::journal::recover();
    assert_eq!(rec.removed, 0, "{rec:?}");
    assert!(!runtime.path().join("rt").exists());

    // A write that completes leaves only its target, and nothing in the journal.
    oscost::report::export::write_atomic(&target, b"{}").unwrap();
    assert_eq!(listing(out.path()), vec!["keep.txt", "run.json"]);
    assert!(!runtime.path().join("rt").exists());
}
