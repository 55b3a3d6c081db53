//! `oscost stat`: a user's program, run as `perf stat -r N` and hyperfine run one. Each run
//! is a fork, the child pinned (as `taskset -c` pins) and its output sent where asked, then
//! an exec of the program; counters are opened on the child before its exec, counting from
//! the exec on in every task it starts (as `perf stat CMD` counts), and `wait4` gives the
//! run's own resource usage (what `/usr/bin/time -v` prints). One sample is one run's wall
//! time, from releasing the child to reaping it.
//!
//! A run that fails (exits non-zero, is killed by a signal, cannot be executed) is an error:
//! a failing program has no figure.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::engine::measure::{from_samples, Context, Spec, Verdict};
use crate::error::{Error, Result};
use crate::evidence::perf::PerfSet;
use crate::model::{Evidence, Measurement, Rusage, RusageEvidence};
use crate::units::name::Named;
use crate::units::{Per, Unit};

/// The probe id of a program's runs.
pub const PROBE: crate::model::ProbeId = crate::model::ProbeId("stat.run");

/// Where the program's standard input, output and error go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// All three to /dev/null (hyperfine's default): the terminal's speed is not measured.
    Null,
    /// The program reads and writes oscost's own standard streams.
    Inherit,
}

crate::units::name::named!(Output);

/// The software events counted by default, in perf stat's order.
pub const DEFAULT_SOFTWARE: &[&str] = &[
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
];

/// The hardware events counted by default where a PMU allows: the lab's `perf stat -e
/// cache-references,cache-misses,dTLB-loads,dTLB-load-misses`, with cycles and instructions.
pub const DEFAULT_HARDWARE: &[&str] = &[
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "dTLB-loads",
    "dTLB-load-misses",
];

/// A program resolved before anything runs: its path (found on PATH as a shell finds it) and
/// its arguments, ready for exec.
#[derive(Debug, Clone)]
pub struct Program {
    /// The command line as given.
    pub argv: Vec<String>,
    path: CString,
    args: Vec<CString>,
}

impl Program {
    /// `argv[0]` found (a name with a slash as it is, else the first executable of that name
    /// on PATH). A missing or unusable program is a one-line error.
    pub fn resolve(argv: &[String]) -> Result<Program> {
        let Some(name) = argv.first() else {
            return Err(Error::usage(
                "no program given: oscost stat [OPTIONS] -- PROGRAM [ARGS...]",
            ));
        };
        let nul = |s: &str| {
            CString::new(s.as_bytes()).map_err(|_| {
                Error::usage(format!(
                    "{}: an argument holds a NUL byte",
                    crate::escape::terminal(name)
                ))
            })
        };
        let path = find_program(name, std::env::var_os("PATH").as_deref())?;
        Ok(Program {
            argv: argv.to_vec(),
            path: nul(&path.to_string_lossy())?,
            args: argv.iter().map(|a| nul(a)).collect::<Result<_>>()?,
        })
    }

    /// The command line as one string, each word quoted where a shell would need it.
    pub fn command_line(&self) -> String {
        self.argv
            .iter()
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A word as a shell reads it back: bare when it is only safe characters, else in single
/// quotes.
fn shell_word(w: &str) -> String {
    let safe = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if safe {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Where `name` runs from: itself when it names a path, else the first executable regular
/// file of that name in `path_var`'s directories.
fn find_program(name: &str, path_var: Option<&std::ffi::OsStr>) -> Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let shown = crate::escape::terminal(name);
    let runnable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = std::path::PathBuf::from(name);
        return match std::fs::metadata(&p) {
            Err(e) => Err(Error::usage(format!("{shown}: {e}"))),
            Ok(_) if !runnable(&p) => Err(Error::usage(format!("{shown}: not an executable file"))),
            Ok(_) => Ok(p),
        };
    }
    if name.is_empty() {
        return Err(Error::usage("the program's name is empty"));
    }
    let dirs = path_var.map(std::env::split_paths).into_iter().flatten();
    for d in dirs {
        let p = if d.as_os_str().is_empty() {
            std::path::PathBuf::from(".").join(name)
        } else {
            d.join(name)
        };
        if runnable(&p) {
            return Ok(p);
        }
    }
    Err(Error::usage(format!("{shown}: command not found on PATH")))
}

/// What `oscost stat` runs and how.
#[derive(Debug, Clone)]
pub struct Config {
    pub program: Program,
    /// Runs that make the figure.
    pub repeat: u32,
    /// Runs before them, not recorded (caches, page cache, the dynamic loader warmed).
    pub warmup: u32,
    /// The CPUs the program is pinned to (empty: not pinned).
    pub cpus: Vec<usize>,
    pub output: Output,
    /// The perf events to count (perf-stat names; empty: none).
    pub events: Vec<&'static str>,
}

impl Config {
    /// The measurement's description: the command and placement are its inputs (what
    /// `compare` pairs on), the repeat count its budget.
    fn spec(&self) -> Spec {
        let mut s = Spec::new(PROBE.0, Unit::ns(Per::Run), Unit::ns(Per::Run), 1.0)
            .param("command", self.program.command_line())
            .param("output", self.output.name())
            .param("reps", self.repeat)
            .note(
                "one sample is one run's wall time, from releasing the forked child to \
                 reaping it: the exec, the dynamic loader and the program's exit included, \
                 as hyperfine and perf stat time a command",
            );
        if !self.cpus.is_empty() {
            s = s.param("cpus", self.cpus.clone());
        }
        if self.warmup > 0 {
            s = s.note(format!(
                "{} warm-up run{} before the recorded ones, not counted",
                self.warmup,
                if self.warmup == 1 { "" } else { "s" }
            ));
        }
        if !self.events.is_empty() {
            s = s.note(
                "perf counters are attached to every run, as perf stat attaches them: the \
                 wall time includes what they cost at each context switch",
            );
        }
        s
    }

    /// Which of the `repeat` runs the call `ctx` takes: its round's share (all of them
    /// when it takes every round), and whether it warms up first.
    fn share(&self, ctx: &Context) -> (u32, bool) {
        match ctx.round {
            None => (self.repeat, true),
            Some(slot) => {
                let of = slot.of.max(1);
                let i = slot.index % of;
                let n = self.repeat * (i + 1) / of - self.repeat * i / of;
                (n, slot.index == 0)
            }
        }
    }
}

/// One run of the program: its wall time, resource usage and counters.
pub struct RunReading {
    pub wall_ns: u64,
    pub rusage: Rusage,
    pub counters: Option<PerfSet>,
}

/// The runs of one call (`ctx`: a round's share, or every run), concluded as one
/// measurement whose samples are tagged with the round.
pub fn measure_runs(ctx: &Context, cfg: &Config) -> Result<Measurement> {
    let (runs, warm) = cfg.share(ctx);
    if warm {
        for _ in 0..cfg.warmup {
            crate::engine::interrupt::check()?;
            run_once(cfg)?;
        }
    }
    let mut samples = Vec::with_capacity(runs as usize);
    let mut total = Rusage::default();
    let mut counters: Option<PerfSet> = None;
    for _ in 0..runs {
        crate::engine::interrupt::check()?;
        let r = run_once(cfg)?;
        samples.push(r.wall_ns as f64);
        crate::evidence::procfs::accumulate(&mut total, &r.rusage);
        match (&mut counters, r.counters) {
            (Some(all), Some(c)) => all.absorb(&c),
            (none @ None, c) => *none = c,
            (Some(_), None) => {}
        }
    }
    let evidence = Evidence {
        rusage: RusageEvidence {
            total,
            iterations: runs as u64,
            wall_ns: Some(samples.iter().sum::<f64>() as u64),
            participants: Vec::new(),
        },
        events: counters
            .map(|c| c.readings(runs as u64))
            .unwrap_or_default(),
        ..Evidence::default()
    };
    let verdict = verdict(cfg, &evidence);
    let mut m = from_samples(
        cfg.spec(),
        crate::engine::measure::OwnSamples {
            samples,
            iterations: 1,
        },
        crate::model::StopReason::FixedCount,
        evidence,
        verdict,
    )?;
    if let Some(slot) = ctx.round {
        m.sample_rounds = vec![slot.index; m.samples.len()];
    }
    Ok(m)
}

/// The checks of a program's runs: pinned to one CPU, it never moved off it.
pub fn verdict(cfg: &Config, ev: &Evidence) -> Verdict {
    let mut checks = Vec::new();
    let counted = ev.events.get("cpu-migrations").is_some_and(|e| e.supported);
    if cfg.cpus.len() == 1 && counted {
        checks.push(crate::engine::checks::no_migrations(ev));
    }
    (checks, Vec::new())
}

/// Kills and reaps the child on every way out before it was waited for.
struct Child {
    pid: libc::pid_t,
    reaped: bool,
}

impl Child {
    /// Waits for the child, through interruptions by signals; Ctrl-C kills it first.
    fn wait(&mut self) -> Result<(libc::c_int, libc::rusage)> {
        loop {
            let mut status = 0;
            // SAFETY: a zeroed rusage is a valid out-parameter.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: waiting for our own child with valid out-pointers.
            let r = unsafe { libc::wait4(self.pid, &mut status, 0, &mut ru) };
            if r == self.pid {
                self.reaped = true;
                return Ok((status, ru));
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                self.reaped = true;
                return Err(Error::env(format!("waiting for the program: {e}")));
            }
            if crate::engine::interrupt::requested() {
                return Err(Error::Interrupted);
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            // SAFETY: our own child, not yet reaped: its pid is still ours.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                let mut status = 0;
                while libc::waitpid(self.pid, &mut status, 0) < 0
                    && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                {
                }
            }
        }
    }
}

/// A pipe whose two ends close on exec.
fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(super::os_error("pipe"));
    }
    // SAFETY: both were just opened and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// What the child does between fork and exec, prepared before the fork: after it the child
/// makes only raw system calls (no allocation, no locks), then execs or `_exit`s.
struct Prepared {
    path: *const libc::c_char,
    argv: Vec<*const libc::c_char>,
    cpus: Option<libc::cpu_set_t>,
    devnull: Option<OwnedFd>,
    parent: libc::pid_t,
}

/// Why the child could not exec, sent to the parent: the step and the errno.
const STEP_AFFINITY: u32 = 1;
const STEP_EXEC: u32 = 2;

/// The child's side: never returns.
///
/// # Safety
/// Called only in a freshly forked child.
unsafe fn child(p: &Prepared, go: libc::c_int, report: libc::c_int) -> ! {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    if libc::getppid() != p.parent {
        libc::_exit(127);
    }
    // The program starts with the signals a shell gives it: none blocked, SIGPIPE default
    // (the Rust runtime ignores it, and an ignored signal stays ignored across exec).
    let mut none: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut none);
    libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    if let Some(set) = &p.cpus {
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
            fail(report, STEP_AFFINITY);
        }
    }
    if let Some(null) = &p.devnull {
        for fd in 0..3 {
            libc::dup2(null.as_raw_fd(), fd);
        }
    }
    let mut b = 0u8;
    loop {
        let r = libc::read(go, (&mut b as *mut u8).cast(), 1);
        if r == 1 {
            break;
        }
        if r == 0 || *libc::__errno_location() != libc::EINTR {
            libc::_exit(127);
        }
    }
    libc::execv(p.path, p.argv.as_ptr());
    fail(report, STEP_EXEC)
}

/// The child's way out when a step before the program failed: the step and errno to the
/// parent, then `_exit`.
///
/// # Safety
/// Called only in a forked child.
unsafe fn fail(report: libc::c_int, step: u32) -> ! {
    let msg = [step, *libc::__errno_location() as u32];
    libc::write(report, msg.as_ptr().cast(), 8);
    libc::_exit(127)
}

/// Runs the program once, to its end. Its failure is an error that says how it failed.
pub fn run_once(cfg: &Config) -> Result<RunReading> {
    let mut argv: Vec<*const libc::c_char> = cfg.program.args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let cpus = (!cfg.cpus.is_empty()).then(|| {
        // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET stays within it below.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cfg.cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            // SAFETY: as above.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        set
    });
    let devnull = match cfg.output {
        Output::Null => Some(
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null")
                .map_err(|e| Error::io("/dev/null", e))?
                .into(),
        ),
        Output::Inherit => None,
    };
    let prepared = Prepared {
        path: cfg.program.path.as_ptr(),
        argv,
        cpus,
        devnull,
        // SAFETY: getpid cannot fail.
        parent: unsafe { libc::getpid() },
    };
    let (go_r, go_w) = pipe()?;
    let (rep_r, rep_w) = pipe()?;
    // SAFETY: the child runs only `child`, which makes raw system calls on what was prepared.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(super::os_error("fork"));
    }
    if pid == 0 {
        // SAFETY: in the forked child.
        unsafe { child(&prepared, go_r.as_raw_fd(), rep_w.as_raw_fd()) }
    }
    let mut kid = Child { pid, reaped: false };
    drop(go_r);
    drop(rep_w);
    let counters = (!cfg.events.is_empty()).then(|| PerfSet::open_on_exec(pid, &cfg.events));
    let t0 = crate::evidence::clock::now_ns();
    let one = [1u8];
    // SAFETY: writing one byte from a valid buffer to our pipe end.
    unsafe { libc::write(go_w.as_raw_fd(), one.as_ptr().cast(), 1) };
    drop(go_w);
    let failed_step = read_report(&rep_r);
    let (status, ru) = kid.wait()?;
    let t1 = crate::evidence::clock::now_ns();
    crate::engine::interrupt::check()?;
    if let Some((step, errno)) = failed_step {
        let e = std::io::Error::from_raw_os_error(errno as i32);
        let what = if step == STEP_AFFINITY {
            format!("cannot pin it to CPUs {}", fmt_cpus(&cfg.cpus))
        } else {
            "cannot execute it".to_string()
        };
        return Err(Error::usage(format!(
            "{}: {what}: {e}",
            crate::escape::terminal(&cfg.program.argv[0])
        )));
    }
    failed(status, &cfg.program.argv[0])?;
    let mut counters = counters;
    if let Some(c) = &mut counters {
        c.end();
        c.close();
    }
    Ok(RunReading {
        wall_ns: t1.saturating_sub(t0),
        rusage: crate::probes::fault::mem::usage_of(&ru),
        counters,
    })
}

fn fmt_cpus(cpus: &[usize]) -> String {
    crate::evidence::placement::format_cpu_list(cpus)
}

/// The child's report of a failed step before exec: None when the exec happened (the pipe
/// closed on exec with nothing written).
fn read_report(fd: &OwnedFd) -> Option<(u32, u32)> {
    let mut msg = [0u32; 2];
    loop {
        // SAFETY: reading at most 8 bytes into an 8-byte buffer.
        let r = unsafe { libc::read(fd.as_raw_fd(), msg.as_mut_ptr().cast(), 8) };
        if r == 8 {
            return Some((msg[0], msg[1]));
        }
        if r >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
        if crate::engine::interrupt::requested() {
            return None;
        }
    }
}

/// A wait status that is not a clean exit, as an error in the words a shell would use.
pub fn failed(status: libc::c_int, name: &str) -> Result<()> {
    let name = crate::escape::terminal(name);
    if libc::WIFEXITED(status) {
        return match libc::WEXITSTATUS(status) {
            0 => Ok(()),
            code => Err(Error::usage(format!(
                "{name} exited with status {code}: a failing program has no figure (nothing \
                 was saved)"
            ))),
        };
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        return Err(Error::usage(format!(
            "{name} was killed by signal {sig} ({}): a failing program has no figure \
             (nothing was saved)",
            signal_name(sig)
        )));
    }
    Err(Error::usage(format!(
        "{name} stopped with wait status {status:#x}"
    )))
}

/// The name of a signal a child ended by ("another signal" for the rarer ones).
pub fn signal_name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => "another signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(argv: &[&str]) -> Config {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        Config {
            program: Program::resolve(&argv).unwrap(),
            repeat: 3,
            warmup: 0,
            cpus: Vec::new(),
            output: Output::Null,
            events: DEFAULT_SOFTWARE.to_vec(),
        }
    }

    #[test]
    fn programs_are_found_on_path_or_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        let e = find_program("no-such-program-here", Some(&path)).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("command not found"), "{e}");
        // A file that is not executable is passed over on PATH, refused by path.
        let f = dir.path().join("prog");
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        assert!(find_program("prog", Some(&path)).is_err());
        let e = find_program(f.to_str().unwrap(), None).unwrap_err();
        assert!(e.to_string().contains("not an executable"), "{e}");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_program("prog", Some(&path)).unwrap(), f);
        assert!(Program::resolve(&[]).is_err());
        assert!(Program::resolve(&["a\0b".to_string()]).is_err());
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let p = Program {
            argv: vec!["lat_ctx".into(), "-s".into(), "a b".into(), "it's".into()],
            path: CString::new("x").unwrap(),
            args: Vec::new(),
        };
        assert_eq!(p.command_line(), r"lat_ctx -s 'a b' 'it'\''s'");
    }

    #[test]
    fn rounds_share_the_runs_and_only_the_first_warms_up() {
        let mut cfg = config(&["true"]);
        cfg.repeat = 10;
        let ctx = Context::new(crate::engine::sampler::SamplingConfig::quick());
        let memo = Default::default();
        let shares: Vec<(u32, bool)> = (0..3)
            .map(|i| cfg.share(&ctx.in_round(i, 3, &memo)))
            .collect();
        assert_eq!(shares, [(3, true), (3, false), (4, false)]);
        assert_eq!(cfg.share(&ctx), (10, true));
    }

    #[test]
    fn a_run_reads_its_usage_and_a_failing_one_is_an_error() {
        let cfg = config(&["true"]);
        let r = run_once(&cfg).unwrap();
        assert!(r.wall_ns > 0);
        assert!(r.rusage.maxrss_kb > 0, "{:?}", r.rusage);
        let e = run_once(&config(&["false"])).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("exited with status 1"), "{e}");
        let e = run_once(&config(&["sh", "-c", "kill -SEGV $$"]))
            .err()
            .unwrap();
        assert!(e.to_string().contains("signal 11 (SIGSEGV)"), "{e}");
        let mut pinned = config(&["true"]);
        pinned.cpus = vec![1023];
        let e = run_once(&pinned).err().unwrap();
        assert!(e.to_string().contains("cannot pin it"), "{e}");
    }

    #[test]
    fn the_runs_make_one_measurement_with_their_summed_usage() {
        let cfg = config(&["true"]);
        let ctx = Context::new(crate::engine::sampler::SamplingConfig::quick());
        let m = measure_runs(&ctx, &cfg).unwrap();
        assert!(m.is(PROBE), "{}", m.probe);
        assert_eq!(m.samples.len(), 3);
        assert_eq!(m.evidence.rusage.iterations, 3);
        assert_eq!(m.param_str("command"), Some("true"));
        for e in DEFAULT_SOFTWARE {
            let r = &m.evidence.events[*e];
            assert!(r.supported || r.reason.is_some(), "{e}: {r:?}");
        }
    }

    #[test]
    fn a_program_pinned_to_one_cpu_that_moved_fails_its_check() {
        let mut cfg = config(&["true"]);
        let mut ev = Evidence::default();
        ev.events.insert(
            "cpu-migrations".into(),
            crate::model::EventReading {
                per_op: Some(1.0),
                total: Some(3.0),
                scaled: false,
                supported: true,
                reason: None,
            },
        );
        // Not pinned: migrating is allowed.
        assert!(verdict(&cfg, &ev).0.is_empty());
        cfg.cpus = vec![0];
        let (checks, _) = verdict(&cfg, &ev);
        assert_eq!(checks.len(), 1);
        assert!(!checks[0].ok, "{checks:?}");
        ev.events.get_mut("cpu-migrations").unwrap().total = Some(0.0);
        assert!(verdict(&cfg, &ev).0[0].ok);
    }
}
