//! A save killed mid-transaction leaves the history as it was. This file holds a single test
//! so the test binary is single-threaded when it forks (the child then only touches SQLite).

use oscost::report::input::parse_run;
use oscost::store::Store;

#[test]
fn killed_save_leaves_previous_runs_intact() {
    let run = parse_run(include_str!("fixtures/run-quick.json"), "fixture").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    let first = Store::open(&path).unwrap().save(&run, None).unwrap();
    // Another run (the same run again would be recognized as already stored).
    let mut second = run.clone();
    second.measurements[0].samples[0] += 1.0;

    // SAFETY (every unsafe block below): plain pipe/fork/read/write/kill/waitpid calls on
    // our own fds, buffers and child; the child only calls _exit, never returns.
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // Child: write every row of a second run, then stop just before COMMIT and wait to
        // be killed. Exiting any other way is a failure the parent will see.
        let mut s = match Store::open(&path) {
            Ok(s) => s,
            // SAFETY: _exit in a forked child ends it without running the parent's destructors.
            Err(_) => unsafe { libc::_exit(3) },
        };
        // SAFETY: arguments are valid for the call (owned descriptors, live buffers).
        let _ = s.save_with_hook(&second, Some("doomed.json"), || unsafe {
            libc::write(fds[1], b"x".as_ptr().cast(), 1);
            loop {
                libc::pause();
            }
        });
        // SAFETY: _exit in a forked child ends it without running the parent's destructors.
        unsafe { libc::_exit(4) };
    }
    // SAFETY: closing descriptors this task owns and no longer uses.
    unsafe { libc::close(fds[1]) };
    let mut b = [0u8; 1];
    // SAFETY: a one-byte buffer that lives across the call, on a descriptor this task owns.
    let n = unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) };
    assert_eq!(n, 1, "child did not reach the commit point");
    // SAFETY: closing descriptors this task owns and no longer uses.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        assert!(
            libc::WIFSIGNALED(status),
            "child was not killed: status {status}"
        );
    }

    let mut s = Store::open(&path).unwrap();
    let list = s.list().unwrap();
    assert_eq!(
        list.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![first],
        "partial run visible"
    );
    assert_eq!(
        s.get(first).unwrap().measurements.len(),
        run.measurements.len()
    );
    let ok: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    // And the database still takes new runs.
    let next = s.save(&second, None).unwrap();
    assert_eq!(s.list().unwrap().len(), 2);
    assert!(next > first);
}
