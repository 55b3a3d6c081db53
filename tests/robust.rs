//! Hostile use: a closed stdout ends quietly, reading commands never create a history,
//! outputs never destroy the database, sizes never wrap.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run-quick.json");

fn oscost(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oscost"));
    c.env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .env_remove("OSCOST_DB");
    c
}

fn run(dir: &Path, args: &[&str]) -> Output {
    oscost(dir).args(args).output().unwrap()
}

#[test]
fn a_closed_stdout_ends_quietly_in_every_printing_command() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    for _ in 0..3 {
        assert!(run(dir.path(), &["history", "import", FIXTURE, "--db", db])
            .status
            .success());
    }
    let cases: &[&[&str]] = &[
        &["history", "list", "--db", db],
        &["history", "show", "1", "--db", db],
        &["history", "export", "1", "--db", db],
        &["export", FIXTURE, "--format", "markdown"],
        &["compare", FIXTURE, FIXTURE],
        &["machine"],
        &["call", "--quick", "--no-save"],
        &[
            "ctx",
            "sweep",
            "--quick",
            "--sizes",
            "0",
            "--procs",
            "2",
            "--no-save",
        ],
    ];
    for args in cases {
        let mut child = oscost(dir.path())
            .args(*args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before oscost prints anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0) | Some(141)),
            "{args:?}: {:?} {err}",
            out.status
        );
        assert!(
            !err.contains("panicked") && !err.contains("internal error"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn reading_commands_never_create_a_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("missing/h.sqlite");
    let db = db.to_str().unwrap();
    let o = run(dir.path(), &["history", "list", "--db", db]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("no saved runs"));
    for args in [
        &["compare", "--last", "2", "--db", db][..],
        &["history", "show", "1", "--db", db],
        &["export", "1", "--db", db],
        &["report", "1", "--db", db, "-o", "/dev/null"],
    ] {
        let o = run(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    // The default location too.
    assert!(run(dir.path(), &["history", "list"]).status.success());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "created: {left:?}");
}

#[test]
fn no_output_may_be_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let dbs = db.to_str().unwrap();
    assert!(
        run(dir.path(), &["history", "import", FIXTURE, "--db", dbs])
            .status
            .success()
    );
    let before = std::fs::read(&db).unwrap();
    for args in [
        &["export", "1", "--db", dbs, "-o", dbs][..],
        &["history", "export", "1", "--db", dbs, "-o", dbs],
        &["report", "1", "--db", dbs, "-o", dbs],
        &["call", "--quick", "--json", dbs, "--db", dbs],
    ] {
        let o = run(dir.path(), args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("history database"), "{args:?}: {err}");
    }
    // OSCOST_DB names the database as --db does.
    let o = oscost(dir.path())
        .env("OSCOST_DB", &db)
        .args(["call", "--quick", "--csv", dbs])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn oscost_db_chooses_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("env.sqlite");
    let o = oscost(dir.path())
        .env("OSCOST_DB", &db)
        .args(["history", "import", FIXTURE])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(
        oscost::store::Store::open_existing(&db)
            .unwrap()
            .unwrap()
            .list()
            .unwrap()
            .len(),
        1
    );
    assert!(!dir.path().join("xdg").exists());
}

#[test]
fn sizes_that_overflow_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in [&["fault"][..], &["mmap", "lab"]] {
        let o = oscost(dir.path())
            .args(cmd)
            .args(["--size", "18446744073709551615", "--no-save"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains("too large"), "{err}");
    }
}

#[test]
fn mmap_lab_refuses_the_sampling_options_it_cannot_honour() {
    let dir = tempfile::tempdir().unwrap();
    for opt in [&["--budget", "1s"][..], &["--ci", "2"]] {
        let o = oscost(dir.path())
            .args(["mmap", "lab", "--size", "4m", "--no-save"])
            .args(opt)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{opt:?}: {err}");
        assert!(err.contains("--reps") && err.lines().count() == 1, "{err}");
    }
}

/// Everything in `dir`, recursively.
fn contents(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            out.push(e.path());
            if e.file_type().unwrap().is_dir() {
                out.extend(contents(&e.path()));
            }
        }
    }
    out
}

/// Whether process `pid` has a file open or mapped whose path (deleted or not) lies in `dir`.
fn holds_a_file_in(pid: u32, dir: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    let open = fds
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|target| target.starts_with(dir));
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    open || maps.contains(&format!("{}/", dir.display()))
}

/// Starts `args`, waits until `ready` sees its scratch, then kills it with SIGKILL.
fn kill_when(dir: &Path, rt: &Path, args: &[&str], ready: impl Fn(u32) -> bool) {
    let mut child = oscost(dir)
        .env("OSCOST_RUNTIME_DIR", rt)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !ready(child.id()) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "{args:?} ended before its scratch appeared"
        );
        assert!(start.elapsed().as_secs() < 120, "{args:?}: no scratch");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn scratch_left_by_kill_9_is_removed_by_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let rt = dir.path().join("rt");
    let user = dir.path().join("user");
    std::fs::create_dir(&user).unwrap();
    let fault = [
        "fault",
        "--quick",
        "--size",
        "8m",
        "--kind",
        "file-cached",
        "--no-save",
    ];
    // The default scratch directory, then files in a user --dir.
    kill_when(dir.path(), &rt, &fault, |_| {
        contents(&rt).iter().any(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("scratch-")
        })
    });
    assert!(!contents(&rt).is_empty(), "kill -9 left the scratch behind");
    let mut with_dir = fault.to_vec();
    with_dir.extend(["--dir", user.to_str().unwrap()]);
    // A file in a user's directory loses its name as soon as it is open: the run is
    // seen holding it.
    kill_when(dir.path(), &rt, &with_dir, |pid| {
        holds_a_file_in(pid, &user)
    });
    let o = oscost(dir.path())
        .env("OSCOST_RUNTIME_DIR", &rt)
        .args(["history", "list", "--db"])
        .arg(dir.path().join("h.sqlite"))
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(contents(&rt).is_empty(), "left: {:?}", contents(&rt));
    assert!(contents(&user).is_empty(), "left: {:?}", contents(&user));
}

#[test]
fn a_value_named_twice_is_measured_once() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = run(
        dir.path(),
        &[
            "syscall",
            "--quick",
            "--no-save",
            "--which",
            "null,null",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(o.status.code().unwrap() <= 1, "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["measurements"].as_array().unwrap().len(), 1);
}
