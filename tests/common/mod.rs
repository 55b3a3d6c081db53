//! Helpers shared by integration tests.

// Each test crate includes this module and uses only some of it.
#![allow(dead_code)]

use std::path::Path;

/// Expands a recorded `.tree` fixture (tests/fixtures/machine/*.tree: `### /path` headers
/// followed by the file's text) into a temporary directory and collects machine facts from
/// it with the same `collect_from` the live collector uses.
pub fn load_machine_tree(name: &str) -> (tempfile::TempDir, oscost::machine::Machine) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/machine")
            .join(name),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cur: Option<(String, String)> = None;
    let flush = |cur: &mut Option<(String, String)>| {
        if let Some((p, body)) = cur.take() {
            let path = dir.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
    };
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("### ") {
            flush(&mut cur);
            cur = Some((p.to_string(), String::new()));
        } else if let Some((_, body)) = cur.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(&mut cur);
    let m = oscost::machine::collect_from(dir.path());
    (dir, m)
}

/// Runs the oscost binary with `--db DB` appended and XDG_DATA_HOME beside it, so a test
/// never touches the user's history.
pub fn oscost_with_db(db: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_oscost"))
        .env("XDG_DATA_HOME", db.parent().unwrap())
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}

/// Kills a process at the worst moment: forks; the child runs `body`, handing it a `stop`
/// that tells the parent it got there and then waits forever; the parent waits for that,
/// kills the child with SIGKILL, reaps it and checks it died of the signal. Returns the
/// child's PID. Call it from a test binary with a single test, so the process is
/// single-threaded when it forks (the child then only touches what `body` touches).
pub fn kill_at(body: impl FnOnce(&dyn Fn())) -> i32 {
    kill_at_owned(|stop| body(&*stop))
}

/// [`kill_at`], handing `body` a `stop` it may keep (install as a hook the code under test
/// calls).
pub fn kill_at_owned(body: impl FnOnce(Box<dyn Fn() + Send + Sync>)) -> i32 {
    // SAFETY (every unsafe block below): plain pipe/fork/read/write/kill/waitpid calls on
    // our own fds, buffers and child; the child only calls _exit, never returns.
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let w = fds[1];
        // Exiting any other way than by the kill is a failure the parent will see.
        body(Box::new(move || unsafe {
            libc::write(w, b"x".as_ptr().cast(), 1);
            loop {
                libc::pause();
            }
        }));
        // SAFETY: _exit in a forked child ends it without running the parent's destructors.
        unsafe { libc::_exit(4) };
    }
    // SAFETY: closing a descriptor this task owns and no longer uses.
    unsafe { libc::close(fds[1]) };
    let mut b = [0u8; 1];
    // SAFETY: a one-byte buffer that lives across the call, on a descriptor this task owns.
    let n = unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) };
    assert_eq!(n, 1, "the child did not reach the point where it is killed");
    // SAFETY: killing and reaping our own child; closing our own descriptor.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        assert!(
            libc::WIFSIGNALED(status),
            "child was not killed: status {status}"
        );
        libc::close(fds[0]);
    }
    pid
}

/// The recorded runs of the suite (`oscost run`), which no family owns.
pub const SUITE_RUNS: &[&str] = &["run-quick", "run-quick-a", "run-quick-b"];

/// The recorded runs the golden and width tests render: the suite's and every family's
/// ([`oscost::report::family::About::fixture`]), in the order they were recorded (their
/// start times), which is the order the golden test imports them (their history ids are 1,
/// 2, ...).
pub fn recorded_runs() -> Vec<&'static str> {
    let mut runs: Vec<&'static str> = SUITE_RUNS.to_vec();
    runs.extend(
        oscost::report::FAMILIES
            .iter()
            .filter_map(|f| f.about().fixture),
    );
    let mut by_start: Vec<(String, &'static str)> = runs
        .into_iter()
        .map(|r| (read_recorded_run(r).started_at, r))
        .collect();
    by_start.sort();
    by_start.into_iter().map(|(_, r)| r).collect()
}

/// The family whose recorded run is `name`.
pub fn family_of_fixture(name: &str) -> Option<&'static dyn oscost::report::family::Family> {
    oscost::report::FAMILIES
        .iter()
        .copied()
        .find(|f| f.about().fixture == Some(name))
}

/// The file of a recorded run in the repository.
pub fn recorded_run_file(name: &str) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    if name == "run-quick" {
        root.join("run-quick.json")
    } else {
        root.join("runs").join(format!("{name}.json"))
    }
}

/// A recorded run, parsed as every reader parses it.
pub fn read_recorded_run(name: &str) -> oscost::model::Run {
    let text = std::fs::read_to_string(recorded_run_file(name)).unwrap();
    oscost::input::parse_run(&text, name).unwrap()
}
