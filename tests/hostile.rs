//! Hostile and careless input that once hung, ate memory or misled: every reader refuses a
//! FIFO, a device or a directory at once, with one line and exit 2; a broken `--db` is named
//! for what it is; an output path that cannot be a file is refused before measuring; an
//! import of nothing leaves no database; a signal's exit code says which signal it was.
//! (`.ci/hostile.sh` replays the same cases against a release binary.)

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run-quick.json");
const ELF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/rvsim/programs/elf/loop-rv32imc.elf"
);

fn oscost(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oscost"));
    c.env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .env("OSCOST_RUNTIME_DIR", dir.join("rt"))
        .env_remove("OSCOST_DB")
        .stdin(Stdio::null());
    c
}

/// Runs `args` and fails the test if it has not ended within 20 s (the hang the cases are
/// about), killing it first.
fn run_bounded(dir: &Path, args: &[&str]) -> Output {
    let mut child = oscost(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?} still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// Exit 2, one line on stderr containing `needle`.
fn refused(dir: &Path, args: &[&str], needle: &str) {
    let o = run_bounded(dir, args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

fn mkfifo(p: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        p,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .unwrap();
}

#[test]
fn no_reader_waits_on_a_fifo_or_reads_a_device() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let fifo = dir.join("run.json");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    // A FIFO inside a directory being imported.
    let inside = dir.join("fleet");
    std::fs::create_dir(&inside).unwrap();
    mkfifo(&inside.join("host-a.json"));
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    let out = dir.join("out.html");
    let o = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["history", "import", f, "--db", d],
            "a FIFO, not a run file",
        ),
        (&["report", f, "-o", o], "a FIFO, not a run file"),
        (&["compare", f, FIXTURE], "a FIFO, not a run file"),
        (&["export", f, "--format", "csv"], "a FIFO, not a run file"),
        (&["sim", "run", f], "a FIFO, not an ELF"),
        (&["sim", "bench", f, "--no-qemu"], "a FIFO, not an ELF"),
        (&["sim", "compare", f, ELF], "a FIFO, not an ELF"),
        (
            &["sim", "run", "/dev/zero"],
            "a character device, not an ELF",
        ),
        (&["report", "/dev/zero", "-o", o], "a character device"),
        (&["compare", "/dev/urandom", FIXTURE], "a character device"),
        (
            &["history", "list", "--db", f],
            "a FIFO, not a history database",
        ),
        (
            &["syscall", "--quick", "--db", f],
            "a FIFO, not a history database",
        ),
    ];
    for (args, needle) in cases {
        refused(dir, args, needle);
    }
    // The directory import names the FIFO and imports nothing: no database appears.
    let o = run_bounded(
        dir,
        &["history", "import", inside.to_str().unwrap(), "--db", d],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("host-a.json: a FIFO"), "{err}");
    assert!(!db.exists() && !out.exists());
}

#[test]
fn a_broken_history_path_is_named_for_what_it_is() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let lp = dir.join("loop.sqlite");
    std::os::unix::fs::symlink(&lp, &lp).unwrap();
    let l = lp.to_str().unwrap();
    refused(dir, &["history", "list", "--db", l], "symbolic links");
    // Found before measuring, not after.
    refused(dir, &["call", "--quick", "--db", l], "symbolic links");
    // A file that is not there: nothing imported, and no empty database left behind.
    let db = dir.join("new.sqlite");
    let d = db.to_str().unwrap();
    let o = run_bounded(dir, &["history", "import", "nonexistent.json", "--db", d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!db.exists(), "an empty database was left behind");
}

#[test]
fn an_output_that_cannot_be_a_file_is_refused_before_measuring() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let o = run_bounded(dir, &["call", "--quick", "--no-save", "--csv", "x.csv/"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    // The refusal is the only line: the estimate printed before measuring never appeared.
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("ends in '/'"), "{err}");
}

/// Starts a measurement that would take 20 s, waits for its first notice (the handlers are
/// installed by then), sends `sig` and returns the exit code.
fn exit_code_after(sig: i32) -> Option<i32> {
    let t = tempfile::tempdir().unwrap();
    let mut child = oscost(t.path())
        .args(["call", "--budget", "20s", "--no-save"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let mut first = [0u8; 8];
    std::io::Read::read_exact(&mut err, &mut first).unwrap();
    assert_eq!(&first, b"oscost: ");
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: sends a signal to our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    child.wait().unwrap().code()
}

#[test]
fn a_signal_ends_with_128_plus_its_number() {
    assert_eq!(exit_code_after(libc::SIGTERM), Some(143));
    assert_eq!(exit_code_after(libc::SIGHUP), Some(129));
    assert_eq!(exit_code_after(libc::SIGINT), Some(130));
}

#[test]
fn no_input_is_ever_an_output_and_no_two_outputs_share_a_path() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let copy = |from: &str, name: &str| {
        let p = dir.join(name);
        std::fs::copy(from, &p).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (a, b) = (copy(FIXTURE, "a.json"), copy(FIXTURE, "b.json"));
    let (ea, eb) = (copy(ELF, "a.elf"), copy(ELF, "b.elf"));
    let src = copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/crates/rvsim/programs/c/loop.c"
        ),
        "loop.c",
    );
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let l = link.to_str().unwrap();
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    assert!(run_bounded(dir, &["history", "import", &a, "--db", d])
        .status
        .success());
    let x = dir.join("x.out");
    let x = x.to_str().unwrap();
    // The history `machine` would destroy: the default one (it has no --db).
    let default_db = dir.join("xdg/oscost/history.sqlite");
    std::fs::create_dir_all(default_db.parent().unwrap()).unwrap();
    std::fs::copy(&db, &default_db).unwrap();
    let default_db = default_db.to_str().unwrap().to_string();
    let before: Vec<Vec<u8>> = [&a, &b, &ea, &eb, &src, &d.to_string()]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let input = "is this command's input";
    let twice = "named for two outputs";
    let cases: &[(&[&str], &str)] = &[
        (&["report", &a, "-o", &a], input),
        (&["report", &a, &b, "-o", &b], input),
        (&["report", &a, "-o", l], input),
        (&["compare", &a, &b, "--html", &b], input),
        (&["compare", &a, &b, "--svg", &a], input),
        (&["compare", &a, &b, "--svg", x, "--html", x], twice),
        (&["export", &a, "--format", "csv", "-o", &a], input),
        (&["export", "1", "--db", d, "-o", d], "history database"),
        (
            &["history", "export", "1", "--db", d, "-o", d],
            "history database",
        ),
        (&["fleet", "--db", d, "--json", x, "--csv", x], twice),
        (&["fleet", "--db", d, "--json", d], "history database"),
        (&["sim", "run", &ea, "--json", &ea], input),
        (&["sim", "compare", &ea, &eb, "--csv", &eb], input),
        (
            &["sim", "compare", &ea, &eb, "--csv", x, "--json", x],
            twice,
        ),
        (&["sim", "sweep", &src, "--json", &src], input),
        (&["machine", "--json", &default_db], "history database"),
        // A measuring command: refused before measuring (one line, no estimate printed).
        (
            &[
                "ctx",
                "sweep",
                "--quick",
                "--sizes",
                "0",
                "--procs",
                "2",
                "--mem-json",
                &a,
                "--json",
                &a,
            ],
            input,
        ),
    ];
    for (args, needle) in cases {
        refused(dir, args, needle);
    }
    let after: Vec<Vec<u8>> = [&a, &b, &ea, &eb, &src, &d.to_string()]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(before == after, "an input was changed");
    assert!(
        !Path::new(x).exists(),
        "an output was written before the refusal"
    );
}

#[test]
fn a_file_of_svg_dir_named_like_another_output_does_not_replace_it() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    // The mmap lab writes lab.csv into --svg-dir; --json names that file too.
    let svg = dir.join("svg");
    std::fs::create_dir(&svg).unwrap();
    let json = svg.join("lab.csv");
    let o = run_bounded(
        dir,
        &[
            "mmap",
            "lab",
            "--size",
            "1m",
            "--reps",
            "1",
            "--compete",
            "64m",
            "--quiet",
            "--db",
            dir.join("h.sqlite").to_str().unwrap(),
            "--svg-dir",
            svg.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the --svg-dir file was not written"), "{err}");
    // The --json output stands, the other figures were written and the run was saved.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["schema_version"], oscost::model::SCHEMA_VERSION);
    assert!(std::fs::read_dir(&svg).unwrap().count() > 1);
    let saved = oscost::store::Store::open_existing(&dir.join("h.sqlite"))
        .unwrap()
        .unwrap()
        .list()
        .unwrap();
    assert_eq!(saved.len(), 1);
}

/// A real-time policy asked for by name and not permitted is refused the same way wherever
/// it is asked for: `ctx --fifo` as `ctx timeslice --mech rr`, exit 2 and one line, before
/// anything is measured. Run as an unprivileged user (root drops to nobody) with no
/// RLIMIT_RTPRIO.
#[test]
fn a_real_time_policy_not_permitted_is_refused_alike() {
    let dir = tempfile::tempdir().unwrap();
    // The unprivileged run must be able to make its runtime directory here.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    for (args, needle) in [
        (
            &[
                "ctx", "--fifo", "--quick", "--mech", "yield", "--mode", "thread",
            ][..],
            "cannot use --fifo: SCHED_FIFO needs root",
        ),
        (&["ctx", "--fifo", "--quick"][..], "cannot use --fifo"),
        (
            &["ctx", "timeslice", "--quick", "--mech", "rr"][..],
            "cannot use SCHED_RR slices: SCHED_RR needs root",
        ),
    ] {
        let mut c = oscost(dir.path());
        c.args(args).arg("--no-save");
        // SAFETY: between fork and exec only async-signal-safe calls: no real-time priority
        // allowed, then (as root) setgid and setuid to nobody.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut c, move || {
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                if libc::setrlimit(libc::RLIMIT_RTPRIO, &none) != 0
                    || root && (libc::setgid(65534) != 0 || libc::setuid(65534) != 0)
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let o = match c.output() {
            Ok(o) => o,
            // The test binary is not reachable for nobody here (e.g. a 0700 home directory).
            Err(_) => return,
        };
        let err = String::from_utf8_lossy(&o.stderr);
        if root && err.contains("Permission denied") {
            return;
        }
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?} measured: {err}");
    }
}

/// A refused runtime directory is said once: the warning at start in full, and the command
/// that then needs the directory refers to it instead of saying the paragraph again.
#[test]
fn a_refused_runtime_directory_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(
        &shared,
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let o = oscost(dir.path())
        .env("OSCOST_RUNTIME_DIR", &shared)
        .args(["fault", "--quick", "--size", "4m", "--no-save"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("writable by everyone").count(), 1, "{err}");
    assert!(
        err.lines()
            .last()
            .unwrap()
            .ends_with("not usable as the runtime directory (see the warning above)"),
        "{err}"
    );
}

/// A run file too large to parse within the process's memory limit (`ulimit -v`) is refused
/// with one line and exit 2 before parsing, where parsing it once aborted the process; a
/// file that fits is read under the same limit.
#[test]
fn a_run_file_too_large_for_the_memory_limit_is_refused_not_aborted() {
    let dir = tempfile::tempdir().unwrap();
    // 4 million more samples written short: 16 MB of text, about 250 MB of parsed values.
    let text = std::fs::read_to_string(FIXTURE).unwrap().replacen(
        "\"samples\": [",
        &format!("\"samples\": [{}", "1.5,".repeat(4_000_000)),
        1,
    );
    let big = dir.path().join("big.json");
    std::fs::write(&big, text).unwrap();
    let limited = |args: &[&std::ffi::OsStr]| {
        let mut c = oscost(dir.path());
        c.args(args);
        // SAFETY: only setrlimit between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut c, || {
                let l = libc::rlimit {
                    rlim_cur: 200 << 20,
                    rlim_max: 200 << 20,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        c.output().unwrap()
    };
    let db = dir.path().join("h.sqlite");
    for args in [
        vec![
            "history".as_ref(),
            "import".as_ref(),
            big.as_os_str(),
            "--db".as_ref(),
            db.as_os_str(),
        ],
        vec![
            "report".as_ref(),
            big.as_os_str(),
            "-o".as_ref(),
            dir.path().join("r.html").as_os_str(),
        ],
    ] {
        let o = limited(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("more memory, which this process cannot get"),
            "{err}"
        );
    }
    let o = limited(&[
        "history".as_ref(),
        "import".as_ref(),
        FIXTURE.as_ref(),
        "--db".as_ref(),
        db.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
