//! On a real machine: a competitor pinned to the probes' CPU, taking a fixed share of it by a
//! duty cycle, makes every affected probe invalid through its occupancy checks. No timing
//! thresholds: the assertions are on verdicts, and the competitor's share is set, not measured.
//!
//! The direction asserted holds on a busy machine too (more load only adds invalidity). With
//! `OSCOST_QUIET_MACHINE=1` (the lead's quiet machine) the control is asserted as well: the
//! same probes without the competitor pass their occupancy checks.

use oscost::engine::checks::contested;
use oscost::engine::measure::Context;
use oscost::engine::sampler::SamplingConfig;
use oscost::machine::affinity::allowed_cpus;
use oscost::model::{Measurement, SchedPolicy};
use oscost::probes::ctx::{futex::measure_futex, pipe, ClockMethod, Mode};
use oscost::probes::syscall::{measure_call, Syscall};
use serde_json::Value;
use std::process::Command;

/// A forked process pinned to `cpu` that spins `on_us` then sleeps `off_us`, forever, until
/// dropped (killed and reaped).
struct Competitor(libc::pid_t);

/// A competitor's priority below the participants'.
#[derive(Clone, Copy, Debug)]
enum Low {
    /// `SCHED_IDLE` (what `chrt -i 0` sets).
    Idle,
    /// `nice -n 19`.
    Nice19,
}

impl Competitor {
    fn start(cpu: usize, on_us: u64, off_us: u64) -> Competitor {
        Competitor::spawn(cpu, on_us, off_us, None)
    }

    /// A loop that always wants `cpu`, at a priority below the participants'; any user may
    /// set both.
    fn low(cpu: usize, low: Low) -> Competitor {
        Competitor::spawn(cpu, 10_000, 0, Some(low))
    }

    fn spawn(cpu: usize, on_us: u64, off_us: u64, low: Option<Low>) -> Competitor {
        // SAFETY: the child only calls clock_gettime/nanosleep (no allocation, no locks) and
        // never returns; the parent kills and reaps it in Drop.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: a zeroed cpu_set_t with one bit set is a valid mask for this process.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                let param = libc::sched_param { sched_priority: 0 };
                let rc = match low {
                    None => 0,
                    Some(Low::Idle) => libc::sched_setscheduler(0, libc::SCHED_IDLE, &param),
                    Some(Low::Nice19) => libc::setpriority(libc::PRIO_PROCESS, 0, 19),
                };
                if rc != 0 {
                    libc::_exit(3);
                }
            }
            let now = || {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: valid out-buffer.
                unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
                ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000
            };
            loop {
                let end = now() + on_us;
                while now() < end {
                    std::hint::spin_loop();
                }
                if off_us > 0 {
                    let ts = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: (off_us * 1000) as i64,
                    };
                    // SAFETY: valid timespec; a null remainder is allowed.
                    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
                }
            }
        }
        // Let it start spinning.
        std::thread::sleep(std::time::Duration::from_millis(20));
        Competitor(pid)
    }
}

impl Drop for Competitor {
    fn drop(&mut self) {
        // SAFETY: killing and reaping our own child.
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
            libc::waitpid(self.0, std::ptr::null_mut(), 0);
        }
    }
}

fn ctx() -> Context {
    Context::new(SamplingConfig {
        warmup_ns: 10_000_000,
        target_sample_ns: 5_000_000,
        min_samples: 15,
        max_samples: 60,
        rel_ci_target: 0.02,
        budget_ns: 300_000_000,
        evidence_every: oscost::engine::sampler::EVIDENCE_EVERY,
    })
}

fn cpu() -> usize {
    *allowed_cpus().last().unwrap()
}

/// The probes a competitor on their CPU affects, each with its verdict: (name, valid, the
/// names of failed checks).
fn probes() -> Vec<(String, bool, Vec<String>)> {
    let c = ctx();
    let cpu = cpu();
    let mut out = Vec::new();
    let mut push = |name: &str, m: Measurement| {
        let failed = m
            .checks
            .iter()
            .filter(|c| !c.ok)
            .map(oscost::report::checks::name)
            .collect();
        out.push((name.to_string(), m.valid, failed));
    };
    push(
        "syscall.null",
        measure_call(&c, Syscall::Null, cpu).unwrap(),
    );
    push(
        "ctx.pipe process",
        pipe::measure_pipe(&c, Mode::Process, cpu, ClockMethod::Direct).unwrap(),
    );
    push(
        "ctx.futex thread",
        measure_futex(&c, Mode::Thread, cpu).unwrap(),
    );
    // The fault probe through the CLI, as a user runs it; 64 MiB rounds last longer than the
    // competitor's 10 ms period, so every round meets it.
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("f.json");
    let st = Command::new(env!("CARGO_BIN_EXE_oscost"))
        .args([
            "fault", "--kind", "anon", "--touch", "write", "--size", "64m",
        ])
        .args([
            "--rounds",
            "4",
            "--cpu",
            &cpu.to_string(),
            "--quiet",
            "--no-save",
        ])
        .arg("--json")
        .arg(&json)
        .env("OSCOST_DB", tmp.path().join("db.sqlite"))
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.code().is_some_and(|c| c == 0 || c == 1), "{st:?}");
    let run: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for m in run["measurements"].as_array().unwrap() {
        let failed = m["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["ok"] == false)
            .map(|c| {
                let c: oscost::model::Check = serde_json::from_value(c.clone()).unwrap();
                oscost::report::checks::name(&c)
            })
            .collect();
        out.push((
            m["probe"].as_str().unwrap().to_string(),
            m["valid"].as_bool().unwrap(),
            failed,
        ));
    }
    out
}

/// The occupancy checks (the ones a competitor must trip).
fn occupancy_family(name: &str) -> bool {
    contested(&oscost::model::Check::legacy(
        name,
        String::new(),
        String::new(),
        false,
    )) || name == "CPU time within the window"
}

fn assert_all_caught(share: &str, results: &[(String, bool, Vec<String>)]) {
    for (name, valid, failed) in results {
        assert!(
            !valid,
            "{name} passed as valid beside a {share} competitor on its CPU"
        );
        assert!(
            failed.iter().any(|f| occupancy_family(f)),
            "{name} beside a {share} competitor failed only {failed:?}, not an occupancy check"
        );
    }
}

#[test]
fn a_competitor_on_the_cpu_makes_every_affected_probe_invalid() {
    if std::env::var_os("OSCOST_QUIET_MACHINE").is_some() {
        for (name, _, failed) in probes() {
            assert!(
                !failed.iter().any(|f| occupancy_family(f)),
                "{name} failed {failed:?} on a quiet machine without a competitor"
            );
        }
    }
    // 100% and 50% of the CPU: spin then sleep, with short periods (10 ms) so every probe's
    // windows meet the competitor many times. Smaller competitors are not caught every time
    // (measured on a quiet machine, docs/EVIDENCE.md: 20% in 12 of 12 runs, 10% in 10-11 of 12),
    // so asserting them here would make a flaky test, not a stronger one; 50% left the
    // participants 62-81% of the CPU against the 95% limit in every run.
    for (share, on, off) in [("100%", 10_000, 0), ("50%", 5_000, 5_000)] {
        let _c = Competitor::start(cpu(), on, off);
        let results = probes();
        assert_all_caught(share, &results);
    }
}

/// The other-tasks evidence of a measurement: its check, and whether the competitor `pid` is
/// named there as runnable throughout, at its priority.
fn named(m: &Measurement, pid: i32, low: Low) -> (Option<&oscost::model::Check>, bool) {
    let check = m
        .checks
        .iter()
        .find(|c| c.kind == oscost::model::CheckKind::OtherTasks);
    let seen = m
        .evidence
        .occupancy
        .as_ref()
        .and_then(|o| o.others.as_ref())
        .is_some_and(|o| {
            o.tasks.iter().any(|t| {
                t.pid == pid
                    && t.competes()
                    && match low {
                        Low::Idle => t.policy == SchedPolicy::Idle,
                        Low::Nice19 => t.nice == 19,
                    }
            })
        });
    (check, seen)
}

/// A `SCHED_IDLE` or `nice 19` loop on the probe's CPU runs only in the participants' gaps,
/// so their own CPU time may not show it; the figure must still end invalid, naming it.
/// The loop is pinned beside short probes; this holds as an unprivileged user and on one
/// CPU (the loop then shares it with everything else).
#[test]
fn a_low_priority_loop_on_the_cpu_is_named_and_the_figure_invalid() {
    let c = ctx();
    let cpu = cpu();
    for low in [Low::Idle, Low::Nice19] {
        let comp = Competitor::low(cpu, low);
        let pid = comp.0;
        let ms = [
            pipe::measure_pipe(&c, Mode::Process, cpu, ClockMethod::Direct).unwrap(),
            measure_futex(&c, Mode::Thread, cpu).unwrap(),
        ];
        // The child is still there (it exits 3 when its priority cannot be set).
        let mut status = 0;
        // SAFETY: polling our own child without blocking.
        let gone = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        assert_eq!(gone, 0, "the {low:?} loop ended (status {status})");
        for m in &ms {
            assert!(!m.valid, "{} valid beside a {low:?} loop", m.probe);
            let (check, seen) = named(m, pid, low);
            let check = check.expect("an other-tasks check");
            assert!(
                !check.ok,
                "{} passed {check:?} beside a {low:?} loop",
                m.probe
            );
            assert!(
                seen,
                "{}: the {low:?} loop (pid {pid}) is not named: {:?}",
                m.probe,
                m.evidence.occupancy.as_ref().map(|o| &o.others)
            );
        }
        drop(comp);
    }
}

/// Spin on `cpu` until this process has run `cpu_ns` of CPU time, then exit: a set amount of
/// work, however long the machine takes to give it.
fn spin_for(cpu: usize, cpu_ns: u64) -> ! {
    // SAFETY: a zeroed cpu_set_t with one bit set is a valid mask for this process; the
    // clock read has a valid out-buffer; _exit ends the forked child without unwinding.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        loop {
            libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
            if ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64 >= cpu_ns {
                libc::_exit(0);
            }
            std::hint::spin_loop();
        }
    }
}

/// A loop that starts after the first reading of the other tasks and exits before the last is
/// in neither reading; the CPUs' busy time from /proc/stat shows it. The participant is
/// declared on every CPU, so every task the readings saw counts where it ran (none ran
/// elsewhere, where a task that moved would count against the CPUs' time as a bound), and
/// the loop runs a set amount of its own CPU time (2 s). More load only adds time that no
/// task seen took; the loop's time fails the check unless the loop got under about 15% of
/// its CPU.
#[test]
fn a_loop_that_started_and_exited_between_the_readings_fails_the_check() {
    use oscost::engine::checks::others_check;
    use oscost::evidence::{recorder::Recorder, Participant};
    use oscost::model::{Reading, Unseen};
    let cpus = allowed_cpus();
    let mut rec = Recorder::new(
        vec![Participant::this_thread("waiter", cpus.clone())],
        oscost::evidence::perf::EventSet::None,
    );
    // The first reading of the other tasks, then the loop, reaped before the last.
    rec.begin_quiet();
    // SAFETY: the child only spins and reads its CPU clock, then _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        spin_for(cpu(), 2_000_000_000);
    }
    let mut status = 0;
    // SAFETY: reaping our own child, with a valid rusage out-buffer.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!((reaped, status), (pid, 0));
    let child_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) as f64 * 1e3
        + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) as f64 / 1e3;
    rec.end_quiet(1);
    let ev = rec.finish(&[None]);
    let mut others = ev
        .occupancy
        .and_then(|o| o.others)
        .expect("the other tasks were read");
    // The time no task seen took, by itself: without the tasks the readings saw (on a busy
    // machine some of them stay runnable, which fails the check for its own reason).
    others.tasks.clear();
    others.oncpu_ns = 0;
    let c = others_check(&others);
    let Reading::Others {
        unseen:
            Some(Unseen::Took {
                ms,
                allowance_ms,
                judged,
                ..
            }),
        ..
    } = &c.reading
    else {
        panic!("no account of the CPUs' time: {c:?}");
    };
    assert!(
        !c.ok && *judged,
        "a loop of {child_ms:.0} ms that came and went passed: {c:?}"
    );
    // The figure is the loop's: it ran on one of these CPUs and no reading saw it (irq
    // ticks on its CPU are kept apart).
    let irq_ms = match &others.account {
        Some(oscost::model::CpuAccount::Counted(a)) => a.irq_ns as f64 / 1e6,
        a => panic!("{a:?}"),
    };
    assert!(
        ms.lo + allowance_ms.lo + irq_ms >= child_ms,
        "{ms:?} ± {allowance_ms:?} (irq {irq_ms} ms) of a {child_ms} ms loop"
    );
}
