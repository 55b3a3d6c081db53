//! A measurement is never lost: an output that cannot be written does not stop the history
//! save; a history that refuses the run after measuring (any error, a full file system) gets
//! it as a run file under the data directory, with the command that imports it; a history
//! that cannot take runs at all is found before measuring.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run-quick.json");

fn oscost(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oscost"));
    c.env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .env("OSCOST_RUNTIME_DIR", dir.join("rt"))
        .env_remove("OSCOST_DB");
    c
}

fn runs_in(db: &Path) -> usize {
    oscost::store::Store::open_existing(db)
        .unwrap()
        .map(|s| s.list().unwrap().len())
        .unwrap_or(0)
}

/// A history whose runs table refuses every new row with `why`, as a failing disk would.
fn refusing_history(db: &Path, why: &str) {
    drop(oscost::store::Store::open(db).unwrap());
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(&format!(
            "CREATE TRIGGER refuse BEFORE INSERT ON runs BEGIN SELECT RAISE(FAIL, '{why}'); END;"
        ))
        .unwrap();
}

fn allow(db: &Path) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch("DROP TRIGGER refuse;")
        .unwrap();
}

/// The run file and the import command a "kept" message names.
fn kept(err: &str) -> (String, String) {
    let file = err
        .split("It is kept in ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .unwrap_or_else(|| panic!("no kept file in: {err}"))
        .to_string();
    let cmd = err
        .split("import it with: ")
        .nth(1)
        .and_then(|s| s.lines().next())
        .unwrap_or_else(|| panic!("no import command in: {err}"))
        .to_string();
    (file, cmd)
}

/// Runs an import command as printed, through the shell, with this test's binary.
fn run_printed(dir: &Path, cmd: &str) -> Output {
    let cmd = cmd.replacen("oscost ", &format!("{} ", env!("CARGO_BIN_EXE_oscost")), 1);
    Command::new("sh")
        .args(["-c", &cmd])
        .env("HOME", dir)
        .env("OSCOST_RUNTIME_DIR", dir.join("rt"))
        .output()
        .unwrap()
}

#[test]
fn an_output_that_cannot_be_written_does_not_stop_the_save() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("ok.sqlite");
    let csv = t.path().join("r.csv");
    let o = oscost(t.path())
        .args(["call", "--quick", "--json", "/dev/full", "--csv"])
        .arg(&csv)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("/dev/full: No space left on device"), "{err}");
    assert!(err.contains("saved as run 1"), "{err}");
    assert_eq!(runs_in(&db), 1, "the run was not saved");
    assert!(csv.exists(), "the other output was not written");
}

#[test]
fn a_history_that_refuses_the_run_gets_it_as_a_file_with_its_import_command() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("h.sqlite");
    refusing_history(&db, "disk I/O error");
    let o = oscost(t.path())
        .args(["call", "--quick", "--quiet", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    // Asked for by --db: an error, but the run is kept.
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("disk I/O error"), "{err}");
    let (file, cmd) = kept(&err);
    assert!(
        Path::new(&file).starts_with(t.path().join("xdg/oscost/unsaved")),
        "{file}"
    );
    assert_eq!(runs_in(&db), 0);
    allow(&db);
    let o = run_printed(t.path(), &cmd);
    assert!(o.status.success(), "{cmd}: {o:?}");
    assert_eq!(
        runs_in(&db),
        1,
        "the printed command did not import the run"
    );

    // The default history: a warning, the exit code of the measuring, the run kept.
    let default = t.path().join("xdg/oscost/history.sqlite");
    refusing_history(&default, "database or disk is full");
    let o = oscost(t.path())
        .args(["call", "--quick", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code().unwrap() <= 1, "{err}");
    assert!(
        err.starts_with("oscost: warning: the run was not saved"),
        "{err}"
    );
    let (file, _) = kept(&err);
    assert!(Path::new(&file).is_file());
}

#[test]
fn a_full_file_system_under_the_history_keeps_the_run() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("h.sqlite");
    let o = oscost(t.path())
        .args(["history", "import", FIXTURE, "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    // The history cannot grow by a byte: writing past its size fails with EFBIG, as a full
    // disk fails with ENOSPC (smaller files, such as the kept run, still fit).
    let limit = std::fs::metadata(&db).unwrap().len();
    let mut cmd = oscost(t.path());
    cmd.args(["call", "--quick", "--quiet", "--db"]).arg(&db);
    // SAFETY: between fork and exec the child only calls setrlimit and signal, which are
    // async-signal-safe; an ignored SIGXFSZ stays ignored across exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let (file, _) = kept(&err);
    assert_eq!(runs_in(&db), 1, "only the imported run");
    let run = oscost::input::read_run(Path::new(&file)).unwrap();
    assert_eq!(run.measurements[0].probe, "call.function");
}

#[test]
fn a_history_that_cannot_take_runs_is_refused_before_measuring() {
    let t = tempfile::tempdir().unwrap();
    let damaged = t.path().join("d.sqlite");
    drop(oscost::store::Store::open(&damaged).unwrap());
    rusqlite::Connection::open(&damaged)
        .unwrap()
        .execute_batch("DROP TABLE measurements;")
        .unwrap();
    // The default history too: a damaged one is found before measuring, not after.
    let default = t.path().join("xdg/oscost/history.sqlite");
    std::fs::create_dir_all(default.parent().unwrap()).unwrap();
    std::fs::copy(&damaged, &default).unwrap();
    for extra in [&["--db", damaged.to_str().unwrap()][..], &[]] {
        let o = oscost(t.path())
            .args(["call", "--quick"])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "measured first: {err}");
        assert!(err.contains("without table measurements"), "{err}");
    }
}
