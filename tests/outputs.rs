//! The one way out, command by command: every measuring command, run small, with every
//! output option — the files are written, the history gets its row (or none with
//! --no-save), --quiet is quiet, --strict's exit code follows the invalid count — and every
//! bad output is refused before anything is measured.

use std::path::Path;
use std::process::{Command, Output};

/// The measuring commands no family owns, in their smallest useful form.
const SUITE_COMMANDS: &[&[&str]] = &[
    &["run", "--quick"],
    &["call", "--quick"],
    &["syscall", "--quick", "--which", "null"],
    &["ctx", "--quick", "--mech", "pipe"],
];

/// Every measuring command: the suite's, then every family's (report::Family::quick).
fn commands() -> Vec<&'static [&'static str]> {
    let mut all: Vec<&'static [&'static str]> = SUITE_COMMANDS.to_vec();
    all.extend(
        oscost::report::FAMILIES
            .iter()
            .map(|f| f.quick())
            .filter(|q| !q.is_empty()),
    );
    all
}

/// oscost with HOME, XDG and TMPDIR inside `dir`, so nothing reaches the real ones.
fn oscost(dir: &Path, args: &[&str], extra: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oscost"))
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .env_remove("OSCOST_DB")
        .args(args)
        .args(extra)
        .output()
        .unwrap()
}

fn saved_runs(db: &Path) -> usize {
    oscost::store::Store::open_existing(db)
        .unwrap()
        .map(|s| s.list().unwrap().len())
        .unwrap_or(0)
}

fn refused_before_measuring(o: &Output, needle: &str, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert!(err.contains(needle), "{what}: {err}");
    assert!(
        !err.contains("to measure, about"),
        "{what}: measured first: {err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[test]
fn every_command_honours_every_output_option() {
    for cmd in commands() {
        let what = cmd.join(" ");
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (json, csv, html, db) = (
            d.join("r.json"),
            d.join("r.csv"),
            d.join("r.html"),
            d.join("h/history.sqlite"),
        );
        let o = oscost(
            d,
            cmd,
            &[
                "--json".as_ref(),
                json.as_os_str(),
                "--csv".as_ref(),
                csv.as_os_str(),
                "--html".as_ref(),
                html.as_os_str(),
                "--db".as_ref(),
                db.as_os_str(),
                "--quiet".as_ref(),
                "--strict".as_ref(),
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap())
            .unwrap_or_else(|e| panic!("{what}: {e}; {err}"));
        let ms = v["measurements"].as_array().unwrap();
        assert!(!ms.is_empty() || !v["skipped"].as_array().unwrap().is_empty());
        let invalid = ms.iter().filter(|m| m["valid"] == false).count();
        assert_eq!(
            o.status.code(),
            Some(if invalid > 0 { 1 } else { 0 }),
            "{what}: --strict with {invalid} invalid: {err}"
        );
        assert!(err.trim().is_empty(), "{what}: --quiet printed: {err}");
        let csv_text = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(csv_text.lines().count(), ms.len() + 1, "{what}: csv rows");
        assert!(
            std::fs::read_to_string(&html).unwrap().contains("<html"),
            "{what}"
        );
        assert_eq!(saved_runs(&db), 1, "{what}: one history row");
        assert!(
            !d.join("xdg").exists(),
            "{what}: --db was not honoured, the default history was created"
        );

        // --no-save, and a JSON that streams to a device instead of replacing it.
        let o = oscost(
            d,
            cmd,
            &[
                "--no-save".as_ref(),
                "--db".as_ref(),
                db.as_os_str(),
                "--json".as_ref(),
                "/dev/null".as_ref(),
            ],
        );
        assert!(
            o.status.code() == Some(0) || o.status.code() == Some(1),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(saved_runs(&db), 1, "{what}: --no-save saved");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());

        // Refusals, all before measuring.
        let o = oscost(
            d,
            cmd,
            &[
                "--json".as_ref(),
                db.as_os_str(),
                "--db".as_ref(),
                db.as_os_str(),
            ],
        );
        refused_before_measuring(&o, "history database", &what);
        assert_eq!(saved_runs(&db), 1, "{what}: the history survived");
        let o = oscost(d, cmd, &["--csv".as_ref(), d.as_os_str()]);
        refused_before_measuring(&o, "is a directory", &what);
        let o = oscost(
            d,
            cmd,
            &[
                "--json".as_ref(),
                json.as_os_str(),
                "--html".as_ref(),
                json.as_os_str(),
            ],
        );
        refused_before_measuring(&o, "two outputs", &what);
        let not_db = d.join("r.csv");
        let o = oscost(d, cmd, &["--db".as_ref(), not_db.as_os_str()]);
        refused_before_measuring(&o, "not an SQLite database", &what);
        let under_file = d.join("r.csv/h.sqlite");
        let o = oscost(d, cmd, &["--db".as_ref(), under_file.as_os_str()]);
        refused_before_measuring(&o, "is not a directory", &what);
    }
}
