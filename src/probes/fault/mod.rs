//! `fault.*`: what a page fault costs, counted rather than assumed.
//!
//! Every sample ("round") is one fresh mapping of the whole size, touched once per page, so
//! each touch is a first touch. The sampler's auto-scaling does not fit (a round is hundreds
//! of MiB, and eviction must happen between rounds), so rounds run in a small loop here while
//! the engine's Recorder brackets each timed touch loop and `from_samples` summarizes, derives
//! and judges exactly as for every other probe. The raw figure is ns per page touched; the
//! value is ns per fault, where faults are what the kernel counted (getrusage minflt+majflt,
//! which also counts the faults MAP_POPULATE takes inside the kernel).

pub mod mem;
pub mod touch;
mod verdict;

pub use verdict::{verdict, Facts};

use self::mem::Mapping;
use self::touch::{touch_all, touch_each, TouchClock};
use super::pattern::page_order;
use super::scratch::{ScratchDir, ScratchFile};
use crate::engine::clock::now_ns;
use crate::engine::measure::{from_samples, Context, Spec};
use crate::engine::stats::{relative_half_width, summarize};
use crate::error::{Error, Result};
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::procfs::thread_times_us;
use crate::evidence::recorder::Recorder;
use crate::evidence::Participant;
use crate::model::Measurement;
use std::cell::{OnceCell, RefCell};

/// What kind of memory is faulted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Private anonymous memory (first touch allocates and zeroes a page).
    Anon,
    /// Anonymous memory mapped with MAP_POPULATE, and the touch afterwards.
    Populate,
    /// A file whose pages are all in the page cache (minor faults, fault-around).
    FileCached,
    /// The same file after its pages were evicted (major faults, real I/O, readahead).
    FileEvicted,
}

impl Kind {
    pub fn id(self) -> &'static str {
        match self {
            Kind::Anon => "anon",
            Kind::Populate => "populate",
            Kind::FileCached => "file-cached",
            Kind::FileEvicted => "file-evicted",
        }
    }
    pub fn is_file(self) -> bool {
        matches!(self, Kind::FileCached | Kind::FileEvicted)
    }
}

/// Write touch or read touch (on anonymous memory a read maps the shared zero page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Touch {
    Write,
    Read,
}

/// Transparent huge pages for this mapping, by madvise (the system setting is not changed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Thp {
    /// MADV_NOHUGEPAGE: 4 KiB pages, one fault each.
    Never,
    /// MADV_HUGEPAGE on a 2 MiB-aligned mapping: one fault per 2 MiB where THP allows it.
    Always,
}

/// The order pages are touched in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    Seq,
    Random,
}

/// Readahead advice on file mappings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Readahead {
    /// No advice (MADV_NORMAL): the kernel's adaptive readahead.
    Default,
    /// MADV_SEQUENTIAL: aggressive readahead.
    Sequential,
    /// MADV_RANDOM: readahead off.
    Random,
}

impl Readahead {
    fn advice(self) -> Option<(i32, &'static str)> {
        match self {
            Readahead::Default => None,
            Readahead::Sequential => Some((libc::MADV_SEQUENTIAL, "MADV_SEQUENTIAL")),
            Readahead::Random => Some((libc::MADV_RANDOM, "MADV_RANDOM")),
        }
    }
    fn id(self) -> &'static str {
        match self {
            Readahead::Default => "default",
            Readahead::Sequential => "sequential",
            Readahead::Random => "random",
        }
    }
}

/// For `populate`: the MAP_POPULATE call itself, or the touch afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Map,
    Touch,
}

/// One measured configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    pub kind: Kind,
    pub touch: Touch,
    pub thp: Thp,
    pub order: Order,
    pub readahead: Readahead,
    pub phase: Phase,
    /// Time every touch (the latency distribution) instead of the loop as a whole.
    pub per_touch: bool,
}

impl Case {
    pub fn probe_id(&self) -> String {
        let base = format!("fault.{}", self.kind.id());
        if self.per_touch {
            format!("{base}.latency")
        } else {
            base
        }
    }

    /// A short label for progress and extras: "fault.anon write thp=never seq".
    pub fn label(&self) -> String {
        let mut s = self.probe_id();
        match self.kind {
            Kind::Anon => s += &format!(" {} thp={}", touch_id(self.touch), thp_id(self.thp)),
            Kind::Populate => {
                s += match self.phase {
                    Phase::Map => " map",
                    Phase::Touch => " touch",
                }
            }
            Kind::FileCached | Kind::FileEvicted => {
                s += &format!(" readahead={}", self.readahead.id())
            }
        }
        if !(self.kind == Kind::Populate && self.phase == Phase::Map) {
            s += if self.order == Order::Seq {
                " seq"
            } else {
                " random"
            };
        }
        s
    }
}

fn touch_id(t: Touch) -> &'static str {
    match t {
        Touch::Write => "write",
        Touch::Read => "read",
    }
}

fn thp_id(t: Thp) -> &'static str {
    match t {
        Thp::Never => "never",
        Thp::Always => "always",
    }
}

/// How file pages are evicted before a file-evicted round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evict {
    /// fsync, then posix_fadvise(POSIX_FADV_DONTNEED): only this file's clean pages.
    Fadvise,
    /// sync, then `echo 1 > /proc/sys/vm/drop_caches` (root, and only when asked): the whole
    /// page cache of the machine.
    DropCaches,
}

/// What a fault run shares across its cases: sizes, placement, the scratch file, and what
/// the CLI prints besides the table (maps lines, latency histograms).
pub struct Setup {
    pub size: usize,
    pub page: usize,
    pub cpu: usize,
    pub evict: Evict,
    pub show_maps: bool,
    /// Rounds: at least `min_rounds`, at most `max_rounds`, stopping between them when the
    /// interval is tight or the time budget is spent.
    pub min_rounds: usize,
    pub max_rounds: usize,
    pub seed: u64,
    /// The system's THP mode (the `enabled` file's selection), recorded with anon cases.
    pub system_thp: String,
    pub dir: Option<ScratchDir>,
    file: RefCell<Option<ScratchFile>>,
    clock: OnceCell<TouchClock>,
    /// Maps lines per case label (with --show-maps).
    pub maps: RefCell<Vec<(String, Vec<String>)>>,
}

impl Setup {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        size: usize,
        page: usize,
        cpu: usize,
        evict: Evict,
        show_maps: bool,
        rounds: (usize, usize),
        system_thp: String,
        dir: Option<ScratchDir>,
    ) -> Setup {
        Setup {
            size,
            page,
            cpu,
            evict,
            show_maps,
            min_rounds: rounds.0,
            max_rounds: rounds.1,
            seed: 0x5EED_F00D,
            system_thp,
            dir,
            file: RefCell::new(None),
            clock: OnceCell::new(),
            maps: RefCell::new(Vec::new()),
        }
    }

    fn pages(&self) -> usize {
        self.size / self.page
    }

    /// The scratch file, created and filled (then fsynced) on first use.
    fn file_fd(&self) -> Result<i32> {
        if let Some(f) = self.file.borrow().as_ref() {
            return Ok(f.fd());
        }
        let dir = self
            .dir
            .as_ref()
            .ok_or_else(|| Error::env("file kinds need a scratch directory"))?;
        let f = dir.create_file("fault")?;
        f.fill(self.size as u64)?;
        let fd = f.fd();
        *self.file.borrow_mut() = Some(f);
        Ok(fd)
    }

    /// Make every page of the file resident by reading it (no-op when it already is).
    fn cache_file(&self, fd: i32, map: &Mapping) -> Result<()> {
        if map.resident_pages(self.page)? >= self.pages() {
            return Ok(());
        }
        let mut buf = vec![0u8; 1 << 20];
        let mut off = 0usize;
        while off < self.size {
            crate::engine::interrupt::check()?;
            let n = (self.size - off).min(buf.len());
            // SAFETY: reading into a live buffer of at least n bytes.
            let r = unsafe {
                libc::pread(
                    fd,
                    buf.as_mut_ptr() as *mut libc::c_void,
                    n,
                    off as libc::off_t,
                )
            };
            if r <= 0 {
                let err = std::io::Error::last_os_error();
                if r < 0 && err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(Error::env(format!("reading the scratch file: {err}")));
            }
            off += r as usize;
        }
        Ok(())
    }

    /// Evict the file's pages from the page cache.
    fn evict_file(&self, fd: i32) -> Result<()> {
        // SAFETY: fsync/fadvise/sync on our own fd or the whole system; no memory involved.
        unsafe {
            if libc::fsync(fd) != 0 {
                return Err(Error::env(format!(
                    "fsync: {}",
                    std::io::Error::last_os_error()
                )));
            }
            match self.evict {
                Evict::Fadvise => {
                    let r = libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
                    if r != 0 {
                        return Err(Error::env(format!(
                            "posix_fadvise(DONTNEED): {}",
                            std::io::Error::from_raw_os_error(r)
                        )));
                    }
                }
                Evict::DropCaches => {
                    libc::sync();
                    std::fs::write("/proc/sys/vm/drop_caches", b"1")
                        .map_err(|e| Error::env(format!("/proc/sys/vm/drop_caches: {e}")))?;
                }
            }
        }
        Ok(())
    }

    fn touch_clock(&self) -> &TouchClock {
        self.clock.get_or_init(TouchClock::new)
    }

    /// The untimed part of a round: the mapping the touch loop will fault in, and how many of
    /// its pages were resident beforehand.
    fn prepare(&self, case: &Case) -> Result<(Option<Mapping>, Option<usize>)> {
        match (case.kind, case.phase) {
            (Kind::Populate, Phase::Map) => Ok((None, None)),
            (Kind::Populate, Phase::Touch) => {
                let m = Mapping::anon(self.size, false, libc::MAP_POPULATE)?;
                Ok((Some(m), None))
            }
            (Kind::Anon, _) => {
                let m = Mapping::anon(self.size, case.thp == Thp::Always, 0)?;
                match case.thp {
                    Thp::Always => m.advise(libc::MADV_HUGEPAGE, "MADV_HUGEPAGE")?,
                    Thp::Never => m.advise(libc::MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE")?,
                }
                Ok((Some(m), None))
            }
            (Kind::FileCached | Kind::FileEvicted, _) => {
                let fd = self.file_fd()?;
                if case.kind == Kind::FileEvicted {
                    self.evict_file(fd)?;
                }
                let m = Mapping::file(fd, self.size, false, 0)?;
                if case.kind == Kind::FileCached {
                    self.cache_file(fd, &m)?;
                }
                if let Some((adv, name)) = case.readahead.advice() {
                    m.advise(adv, name)?;
                }
                let resident = m.resident_pages(self.page)?;
                Ok((Some(m), Some(resident)))
            }
        }
    }
}

/// Measure one case: rounds of (prepare, timed touch inside a Recorder window, unmap).
pub fn measure_case(ctx: &Context, s: &Setup, case: Case) -> Result<Measurement> {
    let _pin = AffinityGuard::pin_current(&[s.cpu])?;
    let pages = s.pages();
    let order = page_order(pages, case.order == Order::Random, s.seed);
    let write = case.touch == Touch::Write;
    let mut rec = Recorder::new(
        vec![Participant::this_thread("toucher", vec![s.cpu])],
        EventSet::Standard,
    );
    let clock = case.per_touch.then(|| s.touch_clock().clone());
    // One unrecorded round first (page allocator and page-table caches warm), except where a
    // round is expensive I/O that a warm-up would not make more representative.
    let warmup = case.kind != Kind::FileEvicted;
    let (min_rounds, max_rounds) = if case.per_touch {
        (1, 1)
    } else {
        (s.min_rounds, s.max_rounds)
    };
    let mut samples = Vec::new();
    let mut latencies = Vec::new();
    let mut resident_before = Vec::new();
    let mut resident_after = Vec::new();
    let (mut user_us, mut sys_us) = (0u64, 0u64);
    let mut peak_reset = true;
    let mut maps = Vec::new();
    let start = now_ns();
    let stop;
    let mut round = 0usize;
    loop {
        crate::engine::interrupt::check()?;
        let (mut map, before) = s.prepare(&case)?;
        let keep = round > 0 || !warmup;
        if keep {
            peak_reset &= mem::reset_peak_rss();
            rec.begin();
        }
        let (u0, s0) = thread_times_us();
        let ns = match &map {
            None => {
                // populate/map: the timed work is the mmap(MAP_POPULATE) call itself.
                let t0 = now_ns();
                let m = Mapping::anon(s.size, false, libc::MAP_POPULATE)?;
                let t = now_ns() - t0;
                map = Some(m);
                t
            }
            Some(m) => match (&clock, keep) {
                // SAFETY: the mapping covers `pages` pages and is writable where written.
                (Some(c), true) => unsafe {
                    latencies.clear();
                    touch_each(m.ptr(), s.page, &order, write, c, &mut latencies)?
                },
                // SAFETY: as above.
                _ => unsafe { touch_all(m.ptr(), s.page, &order, write)? },
            },
        };
        let (u1, s1) = thread_times_us();
        if keep {
            rec.end(pages as u64);
            user_us += u1 - u0;
            sys_us += s1 - s0;
            samples.push(ns as f64 / pages as f64);
            if let Some(b) = before {
                resident_before.push(b);
            }
            if let Some(m) = &map {
                if case.kind == Kind::Populate && case.phase == Phase::Map {
                    resident_after.push(m.resident_pages(s.page)?);
                }
                if s.show_maps {
                    maps = m.describe();
                }
            }
        }
        drop(map);
        round += 1;
        let n = samples.len();
        if n >= max_rounds {
            stop = if case.per_touch {
                "one round"
            } else {
                "sample limit"
            };
            break;
        }
        if n >= min_rounds {
            let tight = summarize(&samples)
                .is_some_and(|x| relative_half_width(&x) <= ctx.sampling.rel_ci_target);
            if tight && n >= 3 {
                stop = "converged";
                break;
            }
            if now_ns() - start >= ctx.sampling.budget_ns {
                stop = "time budget spent";
                break;
            }
        }
    }

    let mut evidence = rec.finish(&[None]);
    // getrusage(RUSAGE_THREAD) resolves CPU time in µs, procfs only in clock ticks.
    evidence.rusage.total.utime_us = user_us;
    evidence.rusage.total.stime_us = sys_us;
    if let Some(p) = evidence.rusage.participants.first_mut() {
        p.rusage.utime_us = user_us;
        p.rusage.stime_us = sys_us;
    }
    let t = evidence.rusage.total;
    let rounds = samples.len();
    let facts = Facts {
        kind: case.kind,
        thp: case.thp,
        phase: case.phase,
        pages,
        rounds,
        minflt: t.minflt,
        majflt: t.majflt,
        inblock: t.inblock,
        resident_before: resident_before
            .iter()
            .copied()
            .min()
            .zip(resident_before.iter().copied().max()),
        resident_after_min: resident_after.iter().copied().min(),
        system_thp: s.system_thp.clone(),
        perf_faults: evidence
            .events
            .get("page-faults")
            .filter(|e| e.supported)
            .and_then(|e| e.total),
    };
    let (mut checks, mut warnings) = verdict(&facts);
    // A fault handler runs on the CPU like any loop: a competitor inflates it the same way.
    // Evicted-file faults wait for the disk, so there only run-queue wait counts.
    checks.push(crate::engine::checks::placement(&evidence.cpus));
    let holding = if case.kind == Kind::FileEvicted {
        crate::engine::checks::Holding::MaySleep
    } else {
        crate::engine::checks::Holding::Continuous
    };
    crate::engine::checks::add_occupancy_with(&evidence, holding, &mut checks, &mut warnings);
    if !peak_reset {
        warnings.push(
            "could not reset the peak RSS (/proc/self/clear_refs): max RSS is the process's peak"
                .into(),
        );
    }
    if !maps.is_empty() {
        s.maps.borrow_mut().push((case.label(), maps));
    }
    let faults = (t.minflt + t.majflt) as f64;
    let per_page = faults / (pages * rounds).max(1) as f64;
    let mut spec = spec_for(s, &case, pages, rounds);
    let mut m = if case.per_touch {
        spec.units_per_iteration = 1.0;
        if let Some(c) = &clock {
            spec = spec.note(c.describe());
        }
        let mut m = from_samples(spec, latencies, 1, stop, evidence, (checks, warnings))?;
        // Evidence of one round of `pages` touches, each a sample of one touch.
        m.evidence.rusage.iterations = pages as u64;
        m
    } else {
        spec.units_per_iteration = if per_page > 0.0 { per_page } else { 1.0 };
        from_samples(
            spec,
            samples,
            pages as u64,
            stop,
            evidence,
            (checks, warnings),
        )?
    };
    if !case.per_touch && t.majflt > 0 && t.minflt > 0 {
        // A major fault waits for the disk, a minor one does not: their average is neither.
        m.value = None;
        m.notes.push(mixed_faults_note(t.majflt, t.minflt));
    }
    if !case.per_touch && faults == 0.0 {
        m.value = None;
        m.notes
            .push("no faults were counted, so there is no cost per fault (only per page)".into());
    }
    Ok(m)
}

/// Why a case that took both kinds of fault has no per-fault figure.
pub fn mixed_faults_note(major: u64, minor: u64) -> String {
    format!(
        "{major} major and {minor} minor faults: a cost per fault would average a disk wait with \
         a page-table update, so there is none (the raw figure is per page)"
    )
}

fn spec_for(s: &Setup, case: &Case, pages: usize, rounds: usize) -> Spec {
    let (unit, raw_unit) = if case.per_touch {
        ("ns/touch", "ns/touch")
    } else {
        ("ns/fault", "ns/page")
    };
    let mut spec = Spec::new(&case.probe_id(), unit, raw_unit, 1.0)
        .param("size_bytes", s.size as u64)
        .param("pages", pages as u64)
        .param("rounds", rounds as u64)
        .param("cpus", vec![s.cpu])
        .events_set(EventSet::Standard);
    let order = if case.order == Order::Seq {
        "seq"
    } else {
        "random"
    };
    match case.kind {
        Kind::Anon => {
            spec = spec
                .param("touch", touch_id(case.touch))
                .param("thp", thp_id(case.thp))
                .param("system_thp", s.system_thp.as_str())
                .param("order", order)
                .note(format!(
                    "first touch ({}) of one byte per page of fresh private anonymous memory; \
                     THP {} by madvise on this mapping only (system THP mode: {}, unchanged). \
                     {}",
                    touch_id(case.touch),
                    if case.thp == Thp::Always {
                        "requested (MADV_HUGEPAGE, 2 MiB-aligned)"
                    } else {
                        "refused (MADV_NOHUGEPAGE)"
                    },
                    s.system_thp,
                    if case.touch == Touch::Read {
                        "A read fault maps the shared zero page: no page is allocated or zeroed."
                    } else {
                        "A write fault allocates and zeroes a page."
                    }
                ));
        }
        Kind::Populate => {
            spec = spec
                .param(
                    "phase",
                    if case.phase == Phase::Map {
                        "map"
                    } else {
                        "touch"
                    },
                )
                .param("system_thp", s.system_thp.as_str());
            if case.phase == Phase::Touch {
                spec = spec.param("order", order);
            }
            spec = spec.note(
                "MAP_POPULATE faults every page in inside mmap() (counted in getrusage minflt, \
                 not in the perf page-faults event, which only sees faults from user space); \
                 phase=map times that mmap() per page, phase=touch the first write afterwards. \
                 THP follows the system mode here (madvise cannot precede MAP_POPULATE).",
            );
        }
        Kind::FileCached | Kind::FileEvicted => {
            spec = spec
                .param("touch", "read")
                .param("readahead", case.readahead.id())
                .param("order", order);
            if case.kind == Kind::FileEvicted {
                spec = spec
                    .param(
                        "evict",
                        match s.evict {
                            Evict::Fadvise => "fsync+posix_fadvise(DONTNEED)",
                            Evict::DropCaches => "sync+drop_caches",
                        },
                    )
                    .note(
                        "read touch of a MAP_SHARED file mapping after its pages were evicted \
                         (verified with mincore): major faults that wait for the disk; readahead \
                         brings neighbours in, so faults < pages with the default or \
                         MADV_SEQUENTIAL, about one per page with MADV_RANDOM",
                    );
            } else {
                spec = spec.note(
                    "read touch of a MAP_SHARED file mapping whose pages are all in the page \
                     cache (verified with mincore): minor faults only. Fault-around: on such a \
                     fault the kernel also maps already-cached neighbours (fault_around_bytes, \
                     64 KiB by default), so the faults counted are fewer than the pages touched. \
                     The value is per counted fault and the raw figure per page; lmbench \
                     lat_pagefault reports per page with pages touched in a random order, so \
                     its counterpart is the raw ns/page of --order random",
                );
            }
        }
    }
    spec
}
