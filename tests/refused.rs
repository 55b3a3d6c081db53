//! A command whose every request was refused measured nothing: it exits 2 with one line.

use std::process::Command;

#[test]
fn only_refused_requests_exit_2_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_oscost"))
        .args([
            "ctx", "--mech", "pipe", "--clock", "cputime", "--mode", "thread",
        ])
        .args(["--strict", "--quick", "--quiet", "--no-save"])
        .env("OSCOST_DB", tmp.path().join("db.sqlite"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("oscost: nothing was measured: ctx.pipe thread cputime"));
}
