//! `oscost noise` on the real machine: a planted competitor is found and named (when tracing
//! is permitted), the command degrades without tracing or without root, and a CPU list that
//! names an offline CPU or a bad option is refused with one line. No timing thresholds: the
//! assertions are on names, states and verdicts.

use serde_json::Value;
use std::process::Command;

/// A forked process pinned to `cpu`, named "competitor", that spins until dropped (killed and
/// reaped).
struct Competitor(libc::pid_t);

impl Competitor {
    fn start(cpu: usize) -> Competitor {
        // SAFETY: the child only sets its affinity and name and spins (no allocation, no
        // locks) and never returns; the parent kills and reaps it in Drop.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: a zeroed cpu_set_t with one bit set, and a NUL-terminated name.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                libc::prctl(libc::PR_SET_NAME, c"competitor".as_ptr());
            }
            loop {
                std::hint::spin_loop();
            }
        }
        Competitor(pid)
    }
}

impl Drop for Competitor {
    fn drop(&mut self) {
        // SAFETY: our own child: killed, then reaped.
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
            libc::waitpid(self.0, std::ptr::null_mut(), 0);
        }
    }
}

/// Runs `oscost noise ARGS --json` in a fresh directory; (exit code, stderr, the run).
fn noise(args: &[&str], wrap: &[&str]) -> (i32, String, Option<Value>) {
    let dir = tempfile::tempdir().unwrap();
    // Readable and writable by an unprivileged user too (the non-root run).
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let json = dir.path().join("run.json");
    let bin = env!("CARGO_BIN_EXE_oscost");
    let mut cmd = match wrap.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    let out = cmd
        .arg("noise")
        .args(args)
        .args(["--no-save", "--quiet", "--json"])
        .arg(&json)
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let run = std::fs::read_to_string(&json)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout),
        run,
    )
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether every directory from `/` down to `dir` lets other users pass (o+x).
fn others_can_reach(dir: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    dir.ancestors().all(|d| {
        std::fs::metadata(d)
            .map(|m| m.permissions().mode() & 0o001 != 0)
            .unwrap_or(false)
    })
}

fn attribution(run: &Value) -> &Value {
    &run["measurements"][0]["noise"]["attribution"]
}

#[test]
fn a_planted_competitor_is_found_and_named() {
    let cpus = oscost::machine::affinity::allowed_cpus();
    let cpu = *cpus.last().unwrap();
    let _c = Competitor::start(cpu);
    let list = cpu.to_string();
    let (code, out, run) = noise(&["--cpus", &list, "--duration", "300ms"], &[]);
    assert_eq!(code, 0, "{out}");
    let run = run.unwrap();
    let m = &run["measurements"][0];
    assert_eq!(m["probe"], "noise.lost");
    assert_eq!(m["noise"]["cpu"], cpu);
    let a = attribution(&run);
    if a["state"] == "traced" {
        let named = a["causes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["cause"]["kind"] == "task" && c["cause"]["comm"] == "competitor");
        assert!(named, "{a}");
        assert!(out.contains("task competitor"), "{out}");
    } else {
        // Without permission to trace, the window is measured and the reason given.
        assert!(!is_root(), "{a}");
        assert_eq!(a["state"], "not_permitted", "{a}");
        assert!(out.contains("not traced"), "{out}");
    }
}

#[test]
fn without_tracing_gaps_and_shares_are_still_measured() {
    let (code, out, run) = noise(&["--cpus", "0", "--duration", "100ms", "--no-trace"], &[]);
    assert_eq!(code, 0, "{out}");
    let run = run.unwrap();
    assert_eq!(attribution(&run)["state"], "not_asked");
    let n = &run["measurements"][0]["noise"];
    assert!(n["wall_ns"].as_u64().unwrap() > 0 && n["threshold_ns"].as_u64().unwrap() > 0);
    assert!(out.contains("causes: not traced (--no-trace)"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
}

#[test]
fn an_ordinary_user_gets_the_window_and_the_reason() {
    if !is_root() {
        let (code, out, run) = noise(&["--cpus", "0", "--duration", "100ms"], &[]);
        assert_eq!(code, 0, "{out}");
        assert_eq!(attribution(&run.unwrap())["state"], "not_permitted");
        return;
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(setpriv) = setpriv else {
        // Root without setpriv: the permission line is covered by the report's tests.
        return;
    };
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().parse().unwrap_or(2))
        .unwrap_or(2);
    let wrap = [
        setpriv,
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--inh-caps=-all",
    ];
    let scratch = std::env::temp_dir();
    if !others_can_reach(&scratch) {
        // A 0700 directory above TMPDIR: nobody could write the run file; the run is not tried.
        eprintln!(
            "skipped: {} is not reachable for an unprivileged user",
            scratch.display()
        );
        return;
    }
    let (code, out, run) = noise(&["--cpus", "0", "--duration", "100ms"], &wrap);
    assert_eq!(code, 0, "{out}");
    let a = attribution(run.as_ref().unwrap()).clone();
    if paranoid > -1 {
        assert_eq!(a["state"], "not_permitted", "{a}");
        assert_eq!(a["paranoid"], paranoid);
        assert!(out.contains("needs root"), "{out}");
    }
}

#[test]
fn offline_cpus_and_options_that_do_not_apply_are_refused_in_one_line() {
    for (args, says) in [
        (&["--cpus", "4095"][..], "CPU 4095 is not online"),
        (&["--cpus", "zero"][..], "--cpus: 'zero' is not a CPU"),
        (&["--budget", "1s"][..], "--budget and --ci do not apply"),
        (&["--threshold", "0"][..], "--threshold"),
    ] {
        let (code, out, run) = noise(args, &[]);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(out.contains(says), "{args:?}: {out}");
        assert!(run.is_none());
        assert!(
            out.lines().filter(|l| l.starts_with("oscost:")).count() <= 1,
            "{out}"
        );
    }
}
