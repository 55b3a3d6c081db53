//! A save killed mid-transaction leaves the history as it was. This file holds a single test
//! so the test binary is single-threaded when it forks (the child then only touches SQLite).

mod common;

use oscost::input::parse_run;
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

    // Write every row of a second run, then stop just before COMMIT and be killed there.
    common::kill_at(|stop| {
        let Ok(mut s) = Store::open(&path) else {
            return;
        };
        let _ = s.save_with_hook(&second, Some("doomed.json"), stop);
    });

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
