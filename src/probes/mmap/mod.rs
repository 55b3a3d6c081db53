//! `mmap.lab`: the advanced-OS mmap lab. The same block walk over nine mapping variants
//! (anonymous private/shared, file-backed shared in order, at random, populated, with
//! memset+msync, and three beside a competing memory hog), each run in a fresh forked child
//! so its getrusage figures and peak RSS are its own, as `/usr/bin/time -v ./lab` would show.
//!
//! Variants are interleaved repetition by repetition (the hog's variants as a second block,
//! since starting the hog costs seconds). The parent records evidence on the child with the
//! engine's Recorder (perf software and hardware events, store events included); the child
//! times itself and reports its own getrusage deltas through shared memory, because a child's
//! rusage is only visible to the parent after it is reaped, and procfs counts CPU time in ticks.

use crate::units::name::Named;
pub mod cgroup;
pub mod hog;
pub mod shared;
pub mod workload;

/// The lab's one probe.
pub const LAB: crate::model::ProbeId = crate::model::ProbeId("mmap.lab");

use self::cgroup::MemCgroup;
use self::hog::Hog;
use self::shared::Slots;
use super::scratch::ScratchDir;
use crate::engine::checks::{at_least, at_most};
use crate::engine::measure::{from_samples, Context, Spec};
use crate::engine::partner::Child;
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::perf::EventSet;
use crate::evidence::procfs::accumulate;
use crate::evidence::recorder::Recorder;
use crate::evidence::Participant;
use crate::model::{Check, Evidence, Measurement, Occupancy, Placement, Rusage};
use crate::units::size::{fmt_bytes, ByteStyle};
use crate::units::{Per, Unit};

/// The nine rows of the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Variant {
    AnonPrivate,
    AnonShared,
    FileShared,
    /// File-backed shared, blocks always in random order.
    // Option names are the names the output uses (`Named`); the short forms stay aliases.
    #[value(name = "file-shared-random", alias = "file-random")]
    FileRandom,
    #[value(name = "file-shared-populate", alias = "file-populate")]
    FilePopulate,
    /// File-backed shared; after the walk, memset the whole buffer and msync(MS_SYNC).
    #[value(name = "file-shared-msync-memset", alias = "file-msync")]
    FileMsync,
    CompeteAnon,
    #[value(name = "compete-file-shared", alias = "compete-file")]
    CompeteFile,
    #[value(name = "compete-file-shared-populate", alias = "compete-file-populate")]
    CompeteFilePopulate,
}

impl Variant {
    pub const ALL: [Variant; 9] = [
        Variant::AnonPrivate,
        Variant::AnonShared,
        Variant::FileShared,
        Variant::FileRandom,
        Variant::FilePopulate,
        Variant::FileMsync,
        Variant::CompeteAnon,
        Variant::CompeteFile,
        Variant::CompeteFilePopulate,
    ];

    pub fn file(self) -> bool {
        !matches!(
            self,
            Variant::AnonPrivate | Variant::AnonShared | Variant::CompeteAnon
        )
    }
    pub fn compete(self) -> bool {
        matches!(
            self,
            Variant::CompeteAnon | Variant::CompeteFile | Variant::CompeteFilePopulate
        )
    }
    fn populate(self) -> bool {
        matches!(self, Variant::FilePopulate | Variant::CompeteFilePopulate)
    }
    fn mmap_flags(self) -> i32 {
        let share = match self {
            Variant::AnonPrivate | Variant::CompeteAnon => libc::MAP_PRIVATE,
            _ => libc::MAP_SHARED,
        };
        let anon = if self.file() { 0 } else { libc::MAP_ANONYMOUS };
        let pop = if self.populate() {
            libc::MAP_POPULATE
        } else {
            0
        };
        share | anon | pop
    }
}

/// Block order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Pattern {
    Seq,
    Random,
}

crate::units::name::named!(Variant, Pattern);

/// How memory pressure is applied to the compete variants.
pub enum Pressure {
    /// A forked hog of this many bytes (and the share of available memory it is).
    Hog { bytes: u64, share: String },
    /// Every lab child (all variants) runs in a cgroup v2 with memory.max = bytes.
    Limit { cgroup: MemCgroup, bytes: u64 },
}

/// One lab run.
pub struct Lab {
    pub size: usize,
    pub reps: usize,
    pub seed: u64,
    pub rows: Vec<(Variant, Pattern)>,
    pub pressure: Pressure,
    pub dir: ScratchDir,
    /// The CPU every lab child is pinned to, and the one the competing process is pinned to
    /// (None: wherever the scheduler puts it).
    pub place: Place,
}

/// Where the lab's processes run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub cpu: usize,
    pub competitor: Option<usize>,
}

impl Lab {
    fn pressure_label(&self, v: Variant) -> String {
        match &self.pressure {
            Pressure::Hog { bytes, share } if v.compete() => {
                format!(
                    "hog {} ({share})",
                    fmt_bytes(*bytes as f64, ByteStyle::GibMib)
                )
            }
            Pressure::Hog { .. } => "none".into(),
            Pressure::Limit { bytes, .. } => format!(
                "cgroup v2 memory.max {}",
                fmt_bytes(*bytes as f64, ByteStyle::GibMib)
            ),
        }
    }
}

// Shared-slot layout between the parent and a lab child.
const READY: usize = 0;
const GO: usize = 1;
const DONE: usize = 2;
const FAILED: usize = 3;
const WALL: usize = 4;
/// getrusage deltas: utime_us, stime_us, maxrss_kb, minflt, majflt, inblock, oublock, nvcsw,
/// nivcsw.
const RU: usize = 8;
/// The child's own CPU time (thread CPU clock) at its timed edges, and its CPU at each edge
/// (+1; 0 = unknown).
const CPU_NS: usize = 20;
const CPU_AT_START: usize = 21;
const CPU_AT_END: usize = 22;

/// This process's usage (getrusage is async-signal-safe and allocates nothing).
fn rusage_self() -> Rusage {
    // SAFETY: zeroed rusage is a valid out-buffer; getrusage is async-signal-safe.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    crate::probes::fault::mem::usage_of(&r)
}

/// What a lab child maps and how it walks it: `len` bytes of `fd` (-1: anonymous) with the
/// mmap `flags`, blocks in order or in the random order of `seed`, then (`msync`) a memset
/// of the whole buffer and msync(MS_SYNC).
#[derive(Debug, Clone, Copy)]
struct ChildWalk {
    fd: i32,
    len: usize,
    flags: i32,
    random: bool,
    seed: u64,
    msync: bool,
}

/// The body of a lab child: wait for go, then mmap, walk, (memset+msync), munmap, timed and
/// with getrusage deltas, reported through `s`. Raw system calls only: no allocation.
fn child_body(s: &Slots, walk: ChildWalk) -> i32 {
    let ChildWalk {
        fd,
        len,
        flags,
        random,
        seed,
        msync,
    } = walk;
    s.set(READY, 1);
    while s.get(GO) == 0 {
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
    }
    let r0 = rusage_self();
    s.set(CPU_AT_START, current_cpu_slot());
    let c0 = thread_cpu_ns();
    let t0 = now_ns();
    // SAFETY: mapping `len` bytes (of `fd`, or anonymous); the walk stays inside them.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            0,
        );
        if p == libc::MAP_FAILED {
            s.set(FAILED, 1);
            return 1;
        }
        std::hint::black_box(workload::walk(p as *mut u8, len, random, seed));
        if msync {
            std::ptr::write_bytes(p as *mut u8, 0x5a, len);
            libc::msync(p, len, libc::MS_SYNC);
        }
        libc::munmap(p, len);
    }
    let t1 = now_ns();
    let c1 = thread_cpu_ns();
    s.set(CPU_AT_END, current_cpu_slot());
    let r1 = rusage_self();
    s.set(WALL, t1 - t0);
    s.set(CPU_NS, c1.saturating_sub(c0));
    let mut d = Rusage::default();
    crate::probes::fault::mem::add_delta(&mut d, &r0, &r1);
    let vals = [
        d.utime_us,
        d.stime_us,
        d.maxrss_kb,
        d.minflt,
        d.majflt,
        d.inblock,
        d.oublock,
        d.nvcsw,
        d.nivcsw,
    ];
    for (i, v) in vals.iter().enumerate() {
        s.set(RU + i, *v);
    }
    s.set(DONE, 1);
    loop {
        // SAFETY: pause until the parent kills us (it reads our procfs counters first).
        unsafe { libc::pause() };
    }
}

/// The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID: current at the call, a
/// raw system call with no allocation, so a forked child may use it).
fn thread_cpu_ns() -> u64 {
    crate::evidence::clock::read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// sched_getcpu() + 1 for a shared slot (0 = unknown).
fn current_cpu_slot() -> u64 {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    if c < 0 {
        0
    } else {
        c as u64 + 1
    }
}

/// The kernel's count of OOM kills so far (`oom_kill` of /proc/vmstat: every kill, a
/// memory cgroup's too); None on kernels without it.
pub fn oom_kills() -> Option<u64> {
    parse_oom_kills(&std::fs::read_to_string("/proc/vmstat").ok()?)
}

fn parse_oom_kills(vmstat: &str) -> Option<u64> {
    vmstat
        .lines()
        .find_map(|l| l.strip_prefix("oom_kill "))?
        .trim()
        .parse()
        .ok()
}

/// How the lab child ended, from its wait status and the OOM kill count before it started
/// and after it ended: the OOM killer is named only when the count rose.
fn child_died(what: &str, status: Option<i32>, oom: (Option<u64>, Option<u64>)) -> Error {
    let how = match status {
        Some(st) if libc::WIFSIGNALED(st) && libc::WTERMSIG(st) == libc::SIGKILL => match oom {
            (Some(a), Some(b)) if b > a => format!(
                "killed by the OOM killer (the kernel's OOM kill count rose by {} while it \
                     ran; a memory limit too small for --size?)",
                b - a
            ),
            (Some(_), Some(_)) => "killed by SIGKILL from another process (not the OOM \
                                       killer: the kernel's OOM kill count did not change)"
                .into(),
            _ => "killed by SIGKILL (the OOM killer or another process: this kernel \
                      keeps no OOM kill count to tell)"
                .into(),
        },
        Some(st) if libc::WIFSIGNALED(st) => {
            let sig = libc::WTERMSIG(st);
            format!(
                "killed by signal {sig} ({})",
                crate::probes::stat::signal_name(sig)
            )
        }
        Some(st) if libc::WIFEXITED(st) => {
            format!("exited with code {}", libc::WEXITSTATUS(st))
        }
        _ => "ended".into(),
    };
    Error::env(format!("{what}: the lab child {how}"))
}

/// Wait until slot `i` is set, the child dies, or Ctrl-C. `oom_before`: the OOM kill count
/// before the child started.
fn wait_slot(
    s: &Slots,
    i: usize,
    child: &mut Child,
    what: &str,
    oom_before: Option<u64>,
) -> Result<()> {
    loop {
        if s.get(i) != 0 {
            return Ok(());
        }
        if s.get(FAILED) != 0 {
            return Err(Error::env(format!("{what}: mmap failed in the lab child")));
        }
        if child.has_exited() {
            return Err(child_died(
                what,
                child.wait_status(),
                (oom_before, oom_kills()),
            ));
        }
        crate::engine::interrupt::check()?;
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
}

/// What one repetition of one row produced.
struct Rep {
    wall_ns: u64,
    rusage: Rusage,
    evidence: Evidence,
}

fn run_rep(lab: &Lab, v: Variant, p: Pattern) -> Result<Rep> {
    let file = if v.file() {
        let f = lab.dir.create_file("lab")?;
        f.set_len(lab.size as u64)?;
        Some(f)
    } else {
        None
    };
    let fd = file.as_ref().map_or(-1, |f| f.fd());
    let slots = Slots::new()?;
    let random = p == Pattern::Random || v == Variant::FileRandom;
    let walk = ChildWalk {
        fd,
        len: lab.size,
        flags: v.mmap_flags(),
        random,
        seed: lab.seed,
        msync: v == Variant::FileMsync,
    };
    let s: &Slots = &slots;
    let oom_before = oom_kills();
    let mut child = Child::spawn(Some(lab.place.cpu), || child_body(s, walk))?;
    wait_slot(&slots, READY, &mut child, v.name(), oom_before)?;
    if let Pressure::Limit { cgroup, .. } = &lab.pressure {
        cgroup.add(child.pid())?;
    }
    let me = Participant {
        role: "lab".into(),
        pid: child.pid(),
        tid: child.pid(),
        requested: vec![lab.place.cpu],
    };
    let mut rec = Recorder::new(vec![me], EventSet::WithStores);
    rec.begin();
    slots.set(GO, 1);
    wait_slot(&slots, DONE, &mut child, v.name(), oom_before)?;
    rec.end(1);
    let evidence = rec.finish(&[None]);
    let g = |i: usize| slots.get(RU + i);
    let rusage = Rusage {
        utime_us: g(0),
        stime_us: g(1),
        maxrss_kb: g(2),
        minflt: g(3),
        majflt: g(4),
        inblock: g(5),
        oublock: g(6),
        nvcsw: g(7),
        nivcsw: g(8),
    };
    let wall_ns = slots.get(WALL);
    let mut evidence = evidence;
    // The child read its own CPU clock at the edges of its timed walk: current, unlike the
    // parent's view of a child that was spinning in sched_yield when the window opened.
    let oncpu = slots.get(CPU_NS);
    // Other tasks on the lab's CPU, as the recorder read them around the child's walk.
    let others = evidence.occupancy.take().and_then(|o| o.others);
    evidence.occupancy = Some(Occupancy {
        wall_ns,
        oncpu_ns: oncpu,
        run_delay_ns: 0,
        share: oncpu as f64 / wall_ns.max(1) as f64,
        delay_wall_ns: 0,
        windows: 1,
        exact_windows: 1,
        cpus: 1,
        method: "the lab child's CLOCK_THREAD_CPUTIME_ID at the edges of its timed walk".into(),
        others,
    });
    let at = |i: usize| slots.get(i).checked_sub(1).map(|c| c as usize);
    evidence.cpus = vec![Placement {
        role: "lab child".into(),
        pid: child.pid(),
        tid: child.pid(),
        requested: vec![lab.place.cpu],
        start: at(CPU_AT_START),
        end: at(CPU_AT_END),
        affinity_held: false,
    }];
    drop(child);
    drop(file);
    Ok(Rep {
        wall_ns,
        rusage,
        evidence,
    })
}

/// Sum one repetition's evidence into a row's.
fn merge(into: &mut Evidence, rep: &Rep) {
    accumulate(&mut into.rusage.total, &rep.rusage);
    into.rusage.iterations += 1;
    for (name, r) in &rep.evidence.events {
        let e = into.events.entry(name.clone()).or_insert_with(|| {
            let mut z = r.clone();
            z.total = Some(0.0);
            z
        });
        e.supported &= r.supported;
        e.scaled |= r.scaled;
        if e.reason.is_none() {
            e.reason = r.reason.clone();
        }
        e.total = match (e.total, r.total) {
            (Some(a), Some(b)) if e.supported => Some(a + b),
            _ => None,
        };
    }
    into.cpus.extend(rep.evidence.cpus.iter().cloned());
    if let Some(o) = &rep.evidence.occupancy {
        match into.occupancy.as_mut() {
            Some(t) => t.absorb(o),
            None => into.occupancy = Some(o.clone()),
        }
    }
}

/// Run the lab: every row `reps` times, interleaved; rows beside the hog in a second block.
pub fn run_lab(_ctx: &Context, lab: &Lab) -> Result<Vec<Measurement>> {
    let n = lab.rows.len();
    let mut samples = vec![Vec::new(); n];
    let mut evidence = vec![Evidence::default(); n];
    let mut hog_alive = vec![None; n];
    for compete_block in [false, true] {
        let idx: Vec<usize> = (0..n)
            .filter(|&i| lab.rows[i].0.compete() == compete_block)
            .collect();
        if idx.is_empty() {
            continue;
        }
        let mut hog = match (&lab.pressure, compete_block) {
            (Pressure::Hog { bytes, .. }, true) => Some(Hog::start(*bytes, lab.place.competitor)?),
            _ => None,
        };
        for _ in 0..lab.reps {
            for &i in &idx {
                let (v, p) = lab.rows[i];
                let rep = run_rep(lab, v, p)?;
                samples[i].push(rep.wall_ns as f64);
                merge(&mut evidence[i], &rep);
                if let Some(h) = hog.as_mut() {
                    let alive = h.alive();
                    hog_alive[i] = Some(hog_alive[i].unwrap_or(true) && alive);
                }
            }
        }
    }
    let blocks = (lab.size / workload::BLOCK) as f64;
    let pages = lab.size.div_ceil(4096) as f64;
    let mut out = Vec::with_capacity(n);
    for (i, &(v, p)) in lab.rows.iter().enumerate() {
        let mut ev = std::mem::take(&mut evidence[i]);
        let it = ev.rusage.iterations.max(1) as f64;
        for e in ev.events.values_mut() {
            e.per_op = e.total.map(|t| t / it);
        }
        let may_sleep = v.file() || v.compete() || matches!(lab.pressure, Pressure::Limit { .. });
        let (checks, warnings) = row_checks(v, &ev, hog_alive[i], pages, may_sleep);
        let pattern = if v == Variant::FileRandom {
            "random"
        } else {
            p.name()
        };
        let spec = Spec::new(LAB.0, Unit::ns(Per::Block), Unit::ns(Per::Walk), blocks)
            .param("variant", v.name())
            .param("pattern", pattern)
            .param("size_bytes", lab.size as u64)
            .param("blocks", blocks as u64)
            .param("reps", lab.reps as u64)
            .param("pressure", lab.pressure_label(v))
            .param("cpus", vec![lab.place.cpu])
            .events_set(EventSet::WithStores)
            .note(
                "one walk: mmap, then each 512-byte block (in order or drawn by a seeded \
                 xorshift) 16 times: a store to the first byte of each cache line, loads of the \
                 rest; then munmap. Timed and getrusage'd inside a fresh child process. On a private \
                 mapping a page takes one fault when its first access is a store (x86 compiles the \
                 line's load+store into one read-modify-write) and two when a load maps the zero \
                 page first; MAP_POPULATE on a shared file still leaves one \
                 write-protect fault per page for dirty tracking",
            );
        out.push(from_samples(
            spec,
            crate::engine::measure::OwnSamples {
                samples: std::mem::take(&mut samples[i]),
                iterations: 1,
            },
            crate::model::StopReason::FixedRepetitions,
            ev,
            (checks, warnings),
        )?);
    }
    Ok(out)
}

fn row_checks(
    v: Variant,
    ev: &Evidence,
    hog_alive: Option<bool>,
    pages: f64,
    may_sleep: bool,
) -> (Vec<Check>, Vec<crate::model::Remark>) {
    // Every row runs on the CPU it was pinned to and holds it like any probe (rows that may
    // wait for I/O or reclaim are only held to "no more CPU time than the window").
    let mut checks = vec![crate::engine::checks::placement(&ev.cpus)];
    let mut warnings = Vec::new();
    let holding = super::holding(may_sleep);
    crate::engine::checks::add_occupancy_with(ev, holding, &mut checks, &mut warnings);
    if let Some(alive) = hog_alive {
        checks.push(Check::at_least(
            crate::model::CheckKind::CompetitorAlive,
            1.0,
            f64::from(u8::from(alive)),
        ));
    }
    if v.populate() {
        if let Some(pf) = ev
            .events
            .get("page-faults")
            .filter(|e| e.supported)
            .and_then(|e| e.per_op)
        {
            // MAP_POPULATE maps shared file pages read-only (the kernel tracks dirtying), so
            // each first store still takes one write-protect fault; more means it did not hold.
            checks.push(at_most(
                "user-space faults per walk of a populated mapping (≤ 1 write-protect fault per page)",
                (pages * 1.01).ceil(),
                pf,
            ));
        }
    }
    if v == Variant::FileMsync {
        checks.push(at_least(
            "blocks written (msync wrote the file)",
            1.0,
            ev.rusage.total.oublock as f64,
        ));
    }
    (checks, warnings)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_killed_lab_child_is_blamed_on_the_oom_killer_only_with_its_count() {
        let said = |st: Option<i32>, oom: (Option<u64>, Option<u64>)| {
            child_died("anon", st, oom).to_string()
        };
        let sigkill = Some(libc::SIGKILL);
        assert!(said(sigkill, (Some(3), Some(4)))
            .contains("killed by the OOM killer (the kernel's OOM kill count rose by 1"));
        let e = said(sigkill, (Some(3), Some(3)));
        assert!(
            e.contains("killed by SIGKILL from another process (not the OOM killer"),
            "{e}"
        );
        assert!(said(sigkill, (None, None)).contains("this kernel keeps no OOM kill count"));
        assert!(
            said(Some(libc::SIGSEGV), (Some(0), Some(1))).contains("killed by signal 11 (SIGSEGV)")
        );
        assert!(said(Some(3 << 8), (Some(0), Some(0))).contains("exited with code 3"));
        assert_eq!(parse_oom_kills("pgfault 12\noom_kill 7\n"), Some(7));
        assert_eq!(parse_oom_kills("pgfault 12\n"), None);
        // A child killed with SIGKILL from outside, as `kill -9` does, while no OOM kill
        // happens: not blamed on the OOM killer.
        let before = oom_kills();
        let mut child = Child::spawn(None, || loop {
            // SAFETY: pause only waits for a signal.
            unsafe { libc::pause() };
        })
        .unwrap();
        // SAFETY: killing our own child.
        unsafe { libc::kill(child.pid(), libc::SIGKILL) };
        while !child.has_exited() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let e = child_died("anon", child.wait_status(), (before, oom_kills())).to_string();
        assert!(!e.contains("OOM killer ("), "{e}");
        assert!(e.contains("killed by SIGKILL"), "{e}");
    }
    use super::*;
    use crate::engine::checks::held_occupancy;
    use crate::model::EventReading;

    /// One repetition's evidence: on CPU 2 throughout, the CPU held.
    fn quiet() -> Evidence {
        Evidence {
            occupancy: held_occupancy(),
            cpus: vec![Placement {
                role: "lab child".into(),
                requested: vec![2],
                start: Some(2),
                end: Some(2),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn failed(c: &[Check]) -> Vec<String> {
        c.iter()
            .filter(|c| !c.ok)
            .map(crate::report::checks::name)
            .collect()
    }

    #[test]
    fn every_row_has_checks_that_pass_on_quiet_evidence() {
        for v in Variant::ALL {
            let mut ev = quiet();
            ev.rusage.total.oublock = 8;
            let (c, _) = row_checks(v, &ev, v.compete().then_some(true), 1024.0, false);
            assert!(c.len() >= 3, "{v:?}: {c:?}");
            assert!(failed(&c).is_empty(), "{v:?}: {c:?}");
        }
    }

    #[test]
    fn a_row_that_moved_or_lost_its_cpu_fails() {
        let mut ev = quiet();
        ev.cpus[0].end = Some(3);
        let (c, _) = row_checks(Variant::AnonPrivate, &ev, None, 1024.0, false);
        assert_eq!(failed(&c), ["placement"]);
        let mut ev = quiet();
        ev.occupancy.as_mut().unwrap().share = 0.6;
        let (c, _) = row_checks(Variant::AnonShared, &ev, None, 1024.0, false);
        assert_eq!(failed(&c), ["CPU held by participants"]);
        ev.occupancy.as_mut().unwrap().share = 1.4;
        let (c, _) = row_checks(Variant::FileShared, &ev, None, 1024.0, true);
        assert_eq!(failed(&c), ["CPU time within the window"]);
    }

    #[test]
    fn the_competitor_check_reads_as_its_sentence_did() {
        let name = "competing process still alive (not OOM-killed)";
        for (alive, word) in [(true, "alive"), (false, "dead")] {
            let (c, _) = row_checks(Variant::CompeteAnon, &quiet(), Some(alive), 1024.0, true);
            let c = c
                .iter()
                .find(|c| crate::report::checks::name(c) == name)
                .unwrap();
            assert_eq!(c.ok, alive);
            let back: Check = serde_json::from_str(&serde_json::to_string(c).unwrap()).unwrap();
            let old = format!("{name}: expected ≥ 1, observed {word}");
            assert_eq!(crate::report::checks::line(&back), old);
        }
    }

    #[test]
    fn row_expectations_fail_on_contrary_evidence() {
        let ev = quiet();
        let (c, _) = row_checks(Variant::CompeteAnon, &ev, Some(false), 1024.0, true);
        assert_eq!(
            failed(&c),
            ["competing process still alive (not OOM-killed)"]
        );
        let (c, _) = row_checks(Variant::FileMsync, &ev, None, 1024.0, true);
        assert_eq!(failed(&c), ["blocks written (msync wrote the file)"]);
        let mut ev = quiet();
        ev.events.insert(
            "page-faults".into(),
            EventReading {
                per_op: Some(2048.0),
                total: Some(2048.0),
                supported: true,
                ..Default::default()
            },
        );
        let (c, _) = row_checks(Variant::FilePopulate, &ev, None, 1024.0, true);
        assert_eq!(failed(&c).len(), 1);
        assert!(failed(&c)[0].starts_with("user-space faults per walk"));
    }

    #[test]
    fn reps_merge_their_occupancy() {
        let mut into = Evidence::default();
        let rep = Rep {
            wall_ns: 1,
            rusage: Rusage::default(),
            evidence: quiet(),
        };
        merge(&mut into, &rep);
        merge(&mut into, &rep);
        let o = into.occupancy.unwrap();
        assert_eq!((o.windows, o.wall_ns), (2, 2_000_000));
        assert!((o.share - 1.0).abs() < 1e-9);
        assert_eq!(into.cpus.len(), 2);
    }
}
