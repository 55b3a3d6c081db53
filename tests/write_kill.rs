//! An output write killed (-9) between its temporary file and the rename leaves that file in
//! the output directory; the next oscost start removes it, because the directory was
//! journaled and the file is named after its dead owner. This file holds a single test so the
//! test binary is single-threaded when it forks.

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
    let pid = common::kill_at(|stop| {
        let _ = write_atomic_with_hook(&target, &[b'x'; 1 << 16], stop);
    });
    let left = listing(out.path());
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(
        left[0].starts_with(&format!(".oscost-{pid}-")) && left[0].ends_with(".tmp"),
        "{left:?}"
    );

    // The next start cleans up: the temporary file goes, the user's file stays, no target
    // appears and the runtime directory is left empty.
    let rec = oscost::journal::recover();
    assert!(rec.removed >= 1, "{rec:?}");
    assert_eq!(listing(out.path()), vec!["keep.txt".to_string()]);
    assert!(!runtime.path().join("rt").exists());

    // A write that completes leaves only its target, and nothing in the journal.
    oscost::report::export::write_atomic(&target, b"{}").unwrap();
    assert_eq!(listing(out.path()), vec!["keep.txt", "run.json"]);
    assert!(!runtime.path().join("rt").exists());
}
