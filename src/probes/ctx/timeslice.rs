//! `ctx.timeslice`: the indirect cost of sharing a CPU at the scale of a time slice. Two
//! CPU-bound tasks, each walking its own working set, run on one CPU one after the other and
//! then together; together / sequential is the relative runtime, and what exceeds 1 is what
//! each slice's switch costs in refilled caches and TLB. The slice is set with
//! sched_setattr's sched_runtime where the kernel has EEVDF custom slices (Linux ≥ 6.12),
//! else with SCHED_RR and /proc/sys/kernel/sched_rr_timeslice_ms (root; the old value is put
//! back on every exit path), else the probe says it cannot be set. The involuntary switch
//! rate while running together must match the slice, or the slice did not take effect.

use crate::engine::checks;
use crate::engine::measure::{measure, Context, Spec, Verdict};
use crate::engine::measure::{Participants, Workloads};
use crate::engine::partner::{futex, spawn_ready_child, Child, SharedPage};
use crate::engine::sampler::SamplingConfig;
use crate::engine::stats::summarize;
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::{Bound, Check, CheckKind, Evidence, Measurement, Reading, Status};
use crate::probes::workset::{Access, WorkingSet};
use crate::units::name::Named;
use crate::units::size::fmt_size;
use crate::units::{Per, Unit};
use std::sync::atomic::Ordering;
use std::time::Duration;

pub const PROBE: crate::model::ProbeId = crate::model::ProbeId("ctx.timeslice");

/// How the slice is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SliceMech {
    /// sched_setattr(sched_runtime) on SCHED_OTHER tasks: EEVDF custom slices, Linux ≥ 6.12.
    Eevdf,
    /// SCHED_RR with the global sched_rr_timeslice_ms (root).
    Rr,
}

crate::units::name::named!(SliceMech);

impl SliceMech {
    /// The slices this mechanism can express.
    pub fn check_slice(self, slice: Duration) -> std::result::Result<(), String> {
        let us = slice.as_micros();
        match self {
            SliceMech::Eevdf if !(100..=100_000).contains(&us) => Err(format!(
                "slice {} is outside what EEVDF accepts (0.1 ms to 100 ms)",
                humantime::format_duration(slice)
            )),
            SliceMech::Rr if !us.is_multiple_of(1000) || !(1_000..=1_000_000).contains(&us) => {
                Err(format!(
                    "slice {} cannot be set with SCHED_RR: use whole milliseconds from 1 ms to 1 s",
                    humantime::format_duration(slice)
                ))
            }
            _ => Ok(()),
        }
    }
}

/// What decides the mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceEnv {
    /// (major, minor) of the running kernel.
    pub kernel: Option<(u32, u32)>,
    /// Root or CAP_SYS_NICE (needed for SCHED_RR).
    pub may_rt: bool,
    /// Whether sched_rr_timeslice_ms can be written.
    pub rr_knob_writable: bool,
}

/// "6.18.44-fc" → (6, 18).
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Pick the mechanism: EEVDF custom slices on Linux ≥ 6.12, else SCHED_RR when permitted,
/// else a reason why the slice cannot be set. `requested` forces one (and fails if it cannot
/// work here).
pub fn select(
    env: SliceEnv,
    requested: Option<SliceMech>,
) -> std::result::Result<SliceMech, String> {
    let eevdf = env.kernel.is_some_and(|v| v >= (6, 12));
    let rr_ok = env.may_rt && env.rr_knob_writable;
    let kernel = env
        .kernel
        .map(|(a, b)| format!("Linux {a}.{b}"))
        .unwrap_or_else(|| "an unknown kernel".into());
    let rr_why = if !env.may_rt {
        "SCHED_RR needs root or CAP_SYS_NICE"
    } else {
        "/proc/sys/kernel/sched_rr_timeslice_ms is not writable"
    };
    match requested {
        Some(SliceMech::Eevdf) if !eevdf => Err(format!(
            "EEVDF custom slices need Linux 6.12 or later; this is {kernel}"
        )),
        Some(SliceMech::Rr) if !rr_ok => Err(format!("cannot use SCHED_RR slices: {rr_why}")),
        Some(m) => Ok(m),
        None if eevdf => Ok(SliceMech::Eevdf),
        None if rr_ok => Ok(SliceMech::Rr),
        None => Err(format!(
            "the time slice cannot be set here: {kernel} has no EEVDF custom slices (6.12+) \
             and {rr_why}"
        )),
    }
}

/// The live environment.
pub fn live_env(m: &crate::machine::Machine) -> SliceEnv {
    let writable = std::fs::OpenOptions::new()
        .write(true)
        .open(crate::journal::Knob::SchedRrTimesliceMs.path())
        .is_ok();
    SliceEnv {
        kernel: m.kernel.release.as_deref().and_then(kernel_version),
        may_rt: m.privileges.root || m.privileges.cap_sys_nice == Some(true),
        rr_knob_writable: writable,
    }
}

/// Sets sched_rr_timeslice_ms and puts the old value back when dropped (on success, error,
/// Ctrl-C and panic alike); the old value is journaled first, so the next oscost start
/// restores it after a kill -9 (see `journal`).
pub struct RrKnobGuard {
    _knob: crate::journal::KnobGuard,
}

impl RrKnobGuard {
    pub fn set(ms: u64) -> Result<RrKnobGuard> {
        use crate::journal::{Knob, KnobGuard};
        let knob = KnobGuard::set(Knob::SchedRrTimesliceMs, &ms.to_string())
            .map_err(|e| Error::usage(format!("cannot set a {ms} ms RR slice: {e}")))?;
        Ok(RrKnobGuard { _knob: knob })
    }
}

/// Linux's struct sched_attr (the fields up to sched_period; size tells the kernel).
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

fn set_eevdf_slice(pid: i32, slice: Duration) -> Result<u64> {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_runtime: slice.as_nanos() as u64,
        ..Default::default()
    };
    // SAFETY: a valid sched_attr of the declared size.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, pid, &attr as *const SchedAttr, 0) };
    if r != 0 {
        return Err(Error::usage(format!(
            "the kernel rejected a {} slice: {}",
            humantime::format_duration(slice),
            std::io::Error::last_os_error()
        )));
    }
    let mut got = SchedAttr::default();
    // SAFETY: out-buffer of the size passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            pid,
            &mut got as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as u32,
            0,
        )
    };
    Ok(if r == 0 { got.sched_runtime } else { 0 })
}

/// Make `pid` SCHED_RR; returns the slice the kernel then gives it (sched_rr_get_interval),
/// in ns.
fn set_rr(pid: i32) -> Result<u64> {
    let p = libc::sched_param { sched_priority: 1 };
    // SAFETY: valid sched_param.
    if unsafe { libc::sched_setscheduler(pid, libc::SCHED_RR, &p) } != 0 {
        return Err(crate::probes::os_error("cannot make a task SCHED_RR"));
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a timespec that lives across the call, for a task of ours.
    if unsafe { libc::sched_rr_get_interval(pid, &mut ts) } != 0 {
        return Err(crate::probes::os_error(
            "cannot read a SCHED_RR task's slice",
        ));
    }
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// One configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub slice: Duration,
    pub mech: SliceMech,
    pub work_set: u64,
    /// CPU time each task needs alone.
    pub work: Duration,
    pub cpu: usize,
    /// Where the coordinating thread waits (another CPU when there is one).
    pub home: usize,
}

/// Sampling for whole runs: one run per sample, a few samples.
pub fn sampling(budget: Duration) -> SamplingConfig {
    SamplingConfig {
        warmup_ns: 0,
        target_sample_ns: 1,
        min_samples: 5,
        max_samples: 15,
        rel_ci_target: 0.01,
        budget_ns: budget.as_nanos() as u64,
        evidence_every: crate::engine::sampler::EVIDENCE_EVERY,
    }
}

/// Slots of the shared page.
const GO: [usize; 2] = [0, 1];
const DONE: [usize; 2] = [2, 3];
const READY: [usize; 2] = [4, 5];

/// Measure one slice.
pub fn measure_slice(ctx: &Context, c: Config) -> Result<Measurement> {
    let _home = AffinityGuard::pin_current(&[c.home])?;
    let passes = calibrate_passes(&c)?;
    let page = SharedPage::new()?;
    let sets = [
        WorkingSet::map(c.work_set as usize, None)?,
        WorkingSet::map(c.work_set as usize, None)?,
    ];
    let kids = spawn_tasks(&page, &sets, c.cpu, passes)?;
    let _rr_guard = match c.mech {
        SliceMech::Rr => Some(RrKnobGuard::set(c.slice.as_millis() as u64)?),
        SliceMech::Eevdf => None,
    };
    let mut reported = Vec::new();
    for k in &kids {
        match c.mech {
            SliceMech::Eevdf => reported.push(set_eevdf_slice(k.pid(), c.slice)?),
            SliceMech::Rr => reported.push(set_rr(k.pid())?),
        }
    }
    // Start the given tasks and wait until each has finished one run.
    let run = |which: &[usize]| -> Result<u64> {
        let targets: Vec<i32> = which
            .iter()
            .map(|&i| page.slot(DONE[i]).load(Ordering::Acquire) + 1)
            .collect();
        let t0 = now_ns();
        for &i in which {
            page.slot(GO[i]).fetch_add(1, Ordering::Release);
            futex::wake(page.slot(GO[i]), 1, false);
        }
        for (&i, &want) in which.iter().zip(&targets) {
            loop {
                let d = page.slot(DONE[i]).load(Ordering::Acquire);
                if d >= want {
                    break;
                }
                crate::engine::interrupt::check()?;
                // A task killed from outside never finishes its run: wait in bounded steps
                // and stop with a reason instead of hanging.
                if futex::wait_for(page.slot(DONE[i]), d, false, 250_000_000) == libc::ETIMEDOUT
                    && kids.iter().any(|k| k.is_gone())
                {
                    return Err(crate::error::Error::env(
                        "a time-slice task exited before finishing its run (killed from outside?)",
                    ));
                }
            }
        }
        Ok(now_ns() - t0)
    };
    let mut together = |iters: u64| -> Result<u64> {
        let mut t = 0;
        for _ in 0..iters {
            t += run(&[0, 1])?;
        }
        Ok(t)
    };
    let mut sequential = |iters: u64| -> Result<u64> {
        let mut t = 0;
        for _ in 0..iters {
            t += run(&[0])?;
            t += run(&[1])?;
        }
        Ok(t)
    };
    let participants: Vec<Participant> = kids
        .iter()
        .enumerate()
        .map(|(i, k)| Participant {
            role: format!("task {}", ["A", "B"][i]),
            pid: k.pid(),
            tid: k.pid(),
            requested: vec![c.cpu],
        })
        .collect();
    let slice = SliceSet {
        asked: c.slice,
        reported: reported
            .iter()
            .copied()
            .find(|&ns| ns > 0)
            .map(Duration::from_nanos),
        mech: c.mech,
    };
    let spec = slice_spec(&c, reported);
    let m = measure(
        ctx,
        spec,
        Participants::new(participants, vec![Some(c.cpu), Some(c.cpu)]),
        Workloads::paired(&mut together, &mut sequential),
        |ev| slice_verdict(ev, slice),
    );
    drop(kids);
    m.map(ratio_figure)
}

/// The figure is the ratio of each together sample to its interleaved sequential pair (not
/// a difference, so never "below resolution").
fn ratio_figure(mut m: Measurement) -> Measurement {
    let ratios: Vec<f64> = m
        .samples
        .iter()
        .zip(&m.baseline_samples)
        .map(|(t, s)| t / s)
        .collect();
    m.value = summarize(&ratios);
    if m.status == Status::BelowResolution {
        m.status = Status::Ok;
    }
    m
}

/// How many walks of the working set take `c.work` of CPU time on the measured CPU.
fn calibrate_passes(c: &Config) -> Result<u64> {
    let _p = AffinityGuard::pin_current(&[c.cpu])?;
    let ws = WorkingSet::map(c.work_set as usize, None)?;
    ws.fill();
    let mut n = 1u64;
    Ok(loop {
        let t0 = now_ns();
        for _ in 0..n {
            std::hint::black_box(ws.walk(64, Access::Write));
        }
        let t = now_ns() - t0;
        if t > 20_000_000 {
            break ((c.work.as_nanos() as f64 / t as f64) * n as f64).ceil() as u64;
        }
        n *= 4;
    })
}

/// The two tasks on `cpu`, each filling its own working set, then walking it `passes` times
/// whenever its GO slot moves and counting the runs in its DONE slot.
fn spawn_tasks(
    page: &SharedPage,
    sets: &[WorkingSet; 2],
    cpu: usize,
    passes: u64,
) -> Result<Vec<Child>> {
    let mut kids: Vec<Child> = Vec::new();
    for (i, ws) in sets.iter().enumerate() {
        let (go, done) = (page.slot(GO[i]), page.slot(DONE[i]));
        let (child, _) = spawn_ready_child(
            page,
            READY[i],
            cpu,
            || ws.fill(),
            move || {
                let mut seen = 0;
                loop {
                    let g = go.load(Ordering::Acquire);
                    if g == seen {
                        futex::wait(go, seen, false);
                        continue;
                    }
                    seen = g;
                    let mut sink = 0u64;
                    for _ in 0..passes {
                        sink = sink.wrapping_add(ws.walk(64, Access::Write));
                    }
                    std::hint::black_box(sink);
                    done.fetch_add(1, Ordering::Release);
                    futex::wake(done, 1, false);
                }
            },
        )?;
        kids.push(child);
    }
    Ok(kids)
}

/// The measurement's spec: the slice, how it was set, the work and what the value means.
fn slice_spec(c: &Config, reported: Vec<u64>) -> Spec {
    Spec::new(PROBE.0, Unit::TimesSequential, Unit::ns(Per::Run), 1.0)
        .param("slice_ns", c.slice.as_nanos() as u64)
        .param("slice", humantime::format_duration(c.slice).to_string())
        .param("mechanism", c.mech.name())
        .param("work_set", c.work_set)
        .param("work_set_label", fmt_size(c.work_set))
        .param("work_ns", c.work.as_nanos() as u64)
        .param("cpus", vec![c.cpu])
        .param("slice_reported_ns", reported)
        .events_set(EventSet::Standard)
        .note(format!(
            "two tasks on CPU {}, each writing its own {} working set for about {} of CPU \
             time: value = (both together) / (one after the other), paired per sample; above \
             1 is the cost of sharing the CPU at this slice (refilled caches and TLB, switch \
             costs). Slice set with {}",
            c.cpu,
            fmt_size(c.work_set),
            humantime::format_duration(c.work),
            match c.mech {
                SliceMech::Eevdf => "sched_setattr(sched_runtime), EEVDF custom slices",
                SliceMech::Rr => "SCHED_RR and sched_rr_timeslice_ms (restored afterwards)",
            }
        ))
}

/// The slice a measurement asked for and the one the kernel reports it set
/// (sched_rr_get_interval under SCHED_RR, which gives the RR knob's slice rounded to the
/// tick; sched_runtime read back under EEVDF).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SliceSet {
    pub asked: Duration,
    pub reported: Option<Duration>,
    pub mech: SliceMech,
}

impl SliceSet {
    /// The slice the tasks run with: the kernel's where it reports one, else the asked.
    fn in_effect(&self) -> Duration {
        self.reported.unwrap_or(self.asked)
    }

    /// Whether the kernel's slice differs from the asked one (by more than 1%).
    fn differs(&self) -> bool {
        let (a, e) = (self.asked.as_secs_f64(), self.in_effect().as_secs_f64());
        (a - e).abs() > 0.01 * a
    }
}

/// Involuntary switches per second while running together ≈ 1 / slice (±35%), the slice
/// the kernel reports it set: with two CPU-bound tasks, every expired slice preempts one of
/// them. Plus placement.
pub fn slice_verdict(ev: &Evidence, set: SliceSet) -> Verdict {
    let slice = set.in_effect();
    let wall_s = ev.rusage.total.utime_us as f64 / 1e6 + ev.rusage.total.stime_us as f64 / 1e6;
    let rate = if wall_s > 0.0 {
        ev.rusage.total.nivcsw as f64 / wall_s
    } else {
        0.0
    };
    let expected = 1.0 / slice.as_secs_f64();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let c = Check {
        bound: Bound::Slice {
            per_s: expected,
            tol: 0.35,
            set: set.differs().then(|| [ms(slice), ms(set.asked)]),
        },
        reading: Reading::values(&[rate, ev.rusage.total.nivcsw as f64, wall_s]),
        ..Check::near(CheckKind::SliceRate, expected, 0.35, rate)
    };
    let mut warnings = Vec::new();
    if !c.ok && rate > 0.0 {
        warnings.push(crate::model::Remark::slice_not_taken(
            1000.0 / rate,
            slice.as_secs_f64() * 1000.0,
            set.mech.name(),
        ));
    }
    let mut checks = vec![c, checks::no_migrations(ev), checks::placement(&ev.cpus)];
    checks::add_occupancy(ev, &mut checks, &mut warnings);
    (checks, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(ms: u64, mech: SliceMech) -> SliceSet {
        SliceSet {
            asked: Duration::from_millis(ms),
            reported: None,
            mech,
        }
    }

    fn env(kernel: Option<(u32, u32)>, may_rt: bool, knob: bool) -> SliceEnv {
        SliceEnv {
            kernel,
            may_rt,
            rr_knob_writable: knob,
        }
    }

    #[test]
    fn mechanism_follows_kernel_and_permission() {
        assert_eq!(
            select(env(Some((6, 12)), false, false), None),
            Ok(SliceMech::Eevdf)
        );
        assert_eq!(
            select(env(Some((6, 18)), true, true), None),
            Ok(SliceMech::Eevdf)
        );
        assert_eq!(
            select(env(Some((6, 11)), true, true), None),
            Ok(SliceMech::Rr)
        );
        assert_eq!(
            select(env(Some((5, 15)), true, true), None),
            Ok(SliceMech::Rr)
        );
        let e = select(env(Some((6, 6)), false, false), None).unwrap_err();
        assert!(
            e.contains("cannot be set") && e.contains("6.6") && e.contains("root"),
            "{e}"
        );
        let e = select(env(Some((6, 6)), true, false), None).unwrap_err();
        assert!(e.contains("not writable"), "{e}");
        assert!(select(env(None, false, false), None).is_err());
        // Forced choices.
        assert_eq!(
            select(env(Some((6, 18)), true, true), Some(SliceMech::Rr)),
            Ok(SliceMech::Rr)
        );
        assert!(select(env(Some((6, 18)), false, true), Some(SliceMech::Rr)).is_err());
        assert!(
            select(env(Some((6, 1)), true, true), Some(SliceMech::Eevdf))
                .unwrap_err()
                .contains("6.12")
        );
    }

    #[test]
    fn kernel_versions_parse() {
        assert_eq!(kernel_version("6.18.44-fc-v669"), Some((6, 18)));
        assert_eq!(kernel_version("5.15.0-91-generic"), Some((5, 15)));
        assert_eq!(kernel_version("6.12"), Some((6, 12)));
        assert_eq!(kernel_version("garbage"), None);
    }

    #[test]
    fn slices_each_mechanism_can_express() {
        let ms = Duration::from_millis;
        assert!(SliceMech::Eevdf.check_slice(ms(1)).is_ok());
        assert!(SliceMech::Eevdf
            .check_slice(Duration::from_micros(50))
            .is_err());
        assert!(SliceMech::Eevdf.check_slice(ms(200)).is_err());
        assert!(SliceMech::Rr.check_slice(ms(8)).is_ok());
        assert!(SliceMech::Rr
            .check_slice(Duration::from_micros(1500))
            .is_err());
    }

    #[test]
    fn switch_rate_must_match_the_slice() {
        let mut ev = Evidence::default();
        // 2 s of CPU time, 4 ms slices: 500 preemptions expected.
        ev.rusage.total.utime_us = 2_000_000;
        ev.rusage.total.nivcsw = 480;
        let (c, w) = slice_verdict(&ev, asked(4, SliceMech::Eevdf));
        assert!(c[0].ok, "{:?}", c[0]);
        assert!(w.is_empty());
        // 1 ms asked, but preempted only at the 4 ms tick.
        let (c, w) = slice_verdict(&ev, asked(1, SliceMech::Eevdf));
        assert!(!c[0].ok);
        assert!(crate::report::remarks::words(&w[0]).contains("did not take effect"));
        assert!(
            crate::report::remarks::words(&w[0]).contains("To try: --mech rr"),
            "{:?}",
            w[0]
        );
        // Under SCHED_RR already, the advice does not suggest it.
        let (_, w) = slice_verdict(&ev, asked(1, SliceMech::Rr));
        let said = crate::report::remarks::words(&w[0]);
        assert!(!said.contains("--mech rr"), "{said}");
        assert!(
            said.contains("To try: slices of at least the tick"),
            "{said}"
        );
    }

    #[test]
    fn the_rate_check_reads_as_its_sentence_did() {
        // The bound and the reading as the verdict wrote them when they were sentences, the
        // bound's value at the checks' three significant digits.
        let sentence = |ev: &Evidence, set: &SliceSet| {
            let fmt_ms = |d: Duration| {
                let s = format!("{:.3}", d.as_secs_f64() * 1000.0);
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            };
            let slice = set.in_effect();
            let t = &ev.rusage.total;
            let wall_s = t.utime_us as f64 / 1e6 + t.stime_us as f64 / 1e6;
            let rate = if wall_s > 0.0 {
                t.nivcsw as f64 / wall_s
            } else {
                0.0
            };
            let expected = 1.0 / slice.as_secs_f64();
            let bound = if set.differs() {
                format!(
                    "{} ±35% (the kernel's {} ms slice; {} ms asked)",
                    crate::units::fmt_num(expected),
                    fmt_ms(slice),
                    fmt_ms(set.asked)
                )
            } else {
                format!("{} ±35%", crate::units::fmt_num(expected))
            };
            let every = if rate > 0.0 {
                1000.0 / rate
            } else {
                f64::INFINITY
            };
            format!(
                "involuntary switches per second: expected {bound}, observed {rate:.0}/s ({} \
                 over {wall_s:.2} s of CPU time), i.e. one every {every:.2} ms",
                t.nivcsw
            )
        };
        let run = |utime_us: u64, stime_us: u64, nivcsw: u64| {
            let mut ev = Evidence::default();
            ev.rusage.total.utime_us = utime_us;
            ev.rusage.total.stime_us = stime_us;
            ev.rusage.total.nivcsw = nivcsw;
            ev
        };
        let rr_at = |reported_us: u64, asked_ms: u64| SliceSet {
            reported: Some(Duration::from_micros(reported_us)),
            ..asked(asked_ms, SliceMech::Rr)
        };
        let mut failed = 0;
        for (ev, set) in [
            (run(2_000_000, 0, 480), asked(4, SliceMech::Eevdf)),
            (run(2_000_000, 0, 480), asked(1, SliceMech::Eevdf)),
            (run(1_234_567, 345_678, 333), asked(3, SliceMech::Eevdf)),
            (run(2_000_000, 0, 480), rr_at(4_000, 1)),
            (run(2_000_000, 0, 480), rr_at(1_500, 1)),
            (run(2_000_000, 0, 480), rr_at(1_000, 1)),
            // No CPU time: no rate, a preemption every infinite ms.
            (run(0, 0, 0), asked(4, SliceMech::Eevdf)),
        ] {
            let c = &slice_verdict(&ev, set).0[0];
            let back: Check = serde_json::from_str(&serde_json::to_string(c).unwrap()).unwrap();
            for c in [c, &back] {
                assert_eq!(crate::report::checks::line(c), sentence(&ev, &set));
            }
            failed += usize::from(!c.ok);
        }
        assert_eq!(failed, 5);
    }

    #[test]
    fn the_rate_is_expected_from_the_slice_the_kernel_reports() {
        let mut ev = Evidence::default();
        ev.rusage.total.utime_us = 2_000_000;
        ev.rusage.total.nivcsw = 480;
        // 1 ms asked under SCHED_RR, the kernel set 4 ms (slice_reported_ns=4000000).
        let set = SliceSet {
            reported: Some(Duration::from_nanos(4_000_000)),
            ..asked(1, SliceMech::Rr)
        };
        let (c, w) = slice_verdict(&ev, set);
        assert!(c[0].ok, "{:?}", c[0]);
        assert!(w.is_empty(), "{w:?}");
        // The bound holds the kernel's slice and the one asked, in ms.
        assert!(
            matches!(c[0].bound, Bound::Slice { per_s, set: Some([k, a]), .. }
                if per_s == 250.0 && k == 4.0 && a == 1.0),
            "{:?}",
            c[0]
        );
        // The same rate against a kernel slice that is the asked one fails.
        let set = SliceSet {
            reported: Some(Duration::from_millis(1)),
            ..asked(1, SliceMech::Rr)
        };
        let (c, _) = slice_verdict(&ev, set);
        assert!(
            !c[0].ok && matches!(c[0].bound, Bound::Slice { set: None, .. }),
            "{:?}",
            c[0]
        );
    }
}
