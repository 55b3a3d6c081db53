//! `fault.*`: what a page fault costs, counted rather than assumed.
//!
//! Every sample ("round") is one fresh mapping of the whole size, touched once per page, so
//! each touch is a first touch. Samples are taken by the engine's sampler like every other
//! probe's (warm-up, rounds, evidence windows, the budget and `--ci`), one mapping per sample;
//! the mapping is prepared (and evicted, for evicted files) and unmapped outside the timed
//! touch loop. The raw figure is ns per page touched; the value is ns per fault, where faults
//! are what the kernel counted (getrusage minflt+majflt, which also counts the faults
//! MAP_POPULATE takes inside the kernel). Only the per-touch latency distribution
//! (`--histogram`) times one round by itself.

use crate::engine::measure::{Participants, Workloads};
use crate::units::name::Named;
pub mod mem;
pub mod touch;
mod verdict;

use crate::model::ProbeId;

/// The family's section: every `fault.*` probe.
pub const SECTION: &str = "fault";
/// Anonymous memory, first touch.
pub const ANON: ProbeId = ProbeId("fault.anon");
/// MAP_POPULATE: the mapping, then the touch of a populated mapping.
pub const POPULATE: ProbeId = ProbeId("fault.populate");
/// A file in the page cache.
pub const FILE_CACHED: ProbeId = ProbeId("fault.file-cached");
/// A file evicted from the page cache (major faults).
pub const FILE_EVICTED: ProbeId = ProbeId("fault.file-evicted");

pub use verdict::{verdict, Facts};

use self::mem::Mapping;
use self::touch::{touch_all, touch_each, TouchClock};
use super::pattern::page_order;
use super::scratch::{ScratchDir, ScratchFile};
use crate::engine::derive::scale_summary;
use crate::engine::measure::{from_samples, measure, Context, Spec, Verdict};
use crate::engine::sampler::SamplingConfig;
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::perf::EventSet;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::recorder::Recorder;
use crate::evidence::Participant;
use crate::model::{Evidence, Measurement, Remark, RemarkKind, StopReason};
use crate::units::{Per, Unit};
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
}

crate::units::name::named!(Kind, Touch, Thp, Order, Readahead);

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
    /// Anonymous memory, write touch, THP off, in order, timed as a whole: the case every
    /// other varies from.
    pub const BASE: Case = Case {
        kind: Kind::Anon,
        touch: Touch::Write,
        thp: Thp::Never,
        order: Order::Seq,
        readahead: Readahead::Default,
        phase: Phase::Touch,
        per_touch: false,
    };

    pub fn probe_id(&self) -> String {
        let base = format!("fault.{}", self.kind.name());
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
            Kind::Anon => s += &format!(" {} thp={}", self.touch.name(), self.thp.name()),
            Kind::Populate => {
                s += match self.phase {
                    Phase::Map => " map",
                    Phase::Touch => " touch",
                }
            }
            Kind::FileCached | Kind::FileEvicted => {
                s += &format!(" readahead={}", self.readahead.name())
            }
        }
        if !(self.kind == Kind::Populate && self.phase == Phase::Map) {
            s += &format!(" {}", self.order.name());
        }
        s
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

/// What a fault run is asked for: sizes, placement, and what the CLI prints besides the
/// table.
pub struct SetupArgs {
    pub size: usize,
    pub page: usize,
    pub cpu: usize,
    pub evict: Evict,
    pub show_maps: bool,
    /// `--rounds N`: samples (mappings) per case; None = as the sampler decides (the budget
    /// and `--ci`, like every measurement).
    pub rounds: Option<usize>,
    /// The system's THP mode (the `enabled` file's selection), recorded with anon cases.
    pub system_thp: String,
    pub dir: Option<ScratchDir>,
}

/// What a fault run shares across its cases: what it was asked for, the scratch file, and
/// what the CLI prints besides the table (maps lines, latency histograms).
pub struct Setup {
    pub ask: SetupArgs,
    pub seed: u64,
    file: RefCell<Option<ScratchFile>>,
    clock: OnceCell<TouchClock>,
    /// Maps lines per case label (with --show-maps).
    pub maps: RefCell<Vec<(String, Vec<String>)>>,
}

impl Setup {
    pub fn new(ask: SetupArgs) -> Setup {
        Setup {
            ask,
            seed: 0x5EED_F00D,
            file: RefCell::new(None),
            clock: OnceCell::new(),
            maps: RefCell::new(Vec::new()),
        }
    }

    fn pages(&self) -> usize {
        self.ask.size / self.ask.page
    }

    /// The scratch file, created and filled (then fsynced) on first use.
    fn file_fd(&self) -> Result<i32> {
        if let Some(f) = self.file.borrow().as_ref() {
            return Ok(f.fd());
        }
        let dir = self
            .ask
            .dir
            .as_ref()
            .ok_or_else(|| Error::env("file kinds need a scratch directory"))?;
        let f = dir.create_file("fault")?;
        f.fill(self.ask.size as u64)?;
        let fd = f.fd();
        *self.file.borrow_mut() = Some(f);
        Ok(fd)
    }

    /// Make every page of the file resident by reading it (no-op when it already is).
    fn cache_file(&self, fd: i32, map: &Mapping) -> Result<()> {
        if map.resident_pages(self.ask.page)? >= self.pages() {
            return Ok(());
        }
        let mut buf = vec![0u8; 1 << 20];
        let mut off = 0usize;
        while off < self.ask.size {
            crate::engine::interrupt::check()?;
            let n = (self.ask.size - off).min(buf.len());
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
                return Err(super::os_error("fsync"));
            }
            match self.ask.evict {
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
                let m = Mapping::anon(self.ask.size, false, libc::MAP_POPULATE)?;
                Ok((Some(m), None))
            }
            (Kind::Anon, _) => {
                let m = Mapping::anon(self.ask.size, case.thp == Thp::Always, 0)?;
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
                let m = Mapping::file(fd, self.ask.size, false, 0)?;
                if case.kind == Kind::FileCached {
                    self.cache_file(fd, &m)?;
                }
                if let Some((adv, name)) = case.readahead.advice() {
                    m.advise(adv, name)?;
                }
                let resident = m.resident_pages(self.ask.page)?;
                Ok((Some(m), Some(resident)))
            }
        }
    }
}

/// Measure one case. A figure samples through the engine (`engine::measure`), so `--budget`,
/// `--ci` and `--quick` mean what they mean everywhere: each sample is one fresh mapping
/// (prepared and unmapped outside the timed touch loop), touched once per page. The
/// per-touch latency distribution (`--histogram`) times every touch of one round instead.
pub fn measure_case(ctx: &Context, s: &Setup, case: Case) -> Result<Measurement> {
    if case.per_touch {
        measure_latency(s, case)
    } else {
        measure_sampled(ctx, s, case)
    }
}

/// The sampler's settings for fault samples: one mapping per sample (the auto-scaler would
/// otherwise batch mappings whose untimed setup, a fresh mmap and munmap of the whole size,
/// costs more than the timed touch), and `--rounds N` as the number of samples, whatever the
/// budget: the sampler takes them in its 3 rounds of ⌈N/3⌉, at least 3 each (so N rounded up
/// to a multiple of 3, at least 9).
pub fn case_sampling(cfg: &SamplingConfig, rounds: Option<usize>) -> SamplingConfig {
    let mut cfg = cfg.clone();
    cfg.target_sample_ns = 1;
    if let Some(n) = rounds {
        cfg.min_samples = n;
        cfg.max_samples = n;
        // A day: the count ends sampling, not the time.
        cfg.budget_ns = 86_400_000_000_000;
    }
    cfg
}

/// What the prepared-and-touched mappings showed, beyond their time.
#[derive(Default)]
struct Seen {
    /// Mappings timed (every call: warm-up and samples alike, each a fresh first touch).
    rounds: usize,
    /// Their timed parts' wall time, ns: the window `touch` covers.
    touch_ns: u64,
    /// This thread's usage inside the timed parts only: the faults a touch takes, not those
    /// of preparing the mapping (MAP_POPULATE faults every page in, reading a file into the
    /// cache allocates) or of unmapping it, which run inside the engine's evidence windows.
    touch: crate::model::Rusage,
    resident_before: Vec<usize>,
    resident_after: Vec<usize>,
    /// The peak RSS could not be reset before some mapping.
    peak_not_reset: bool,
    maps: Vec<String>,
}

/// Prepare a mapping, time the case's work on it (the touch loop, or for populate/map the
/// mmap(MAP_POPULATE) call itself), note what it showed, unmap it. `each` times every touch
/// into `latencies` instead of the loop as a whole.
fn one_round(
    s: &Setup,
    case: &Case,
    order: &[u32],
    each: Option<(&TouchClock, &mut Vec<f64>)>,
    seen: &mut Seen,
) -> Result<u64> {
    let (mut map, before) = s.prepare(case)?;
    seen.peak_not_reset |= !mem::reset_peak_rss();
    let write = case.touch == Touch::Write;
    let usage0 = mem::thread_rusage();
    let ns = match &map {
        None => {
            let t0 = now_ns();
            let m = Mapping::anon(s.ask.size, false, libc::MAP_POPULATE)?;
            let t = now_ns() - t0;
            map = Some(m);
            t
        }
        Some(m) => match each {
            // SAFETY: the mapping covers `pages` pages and is writable where written.
            Some((c, lat)) => unsafe {
                lat.clear();
                touch_each(
                    m.ptr(),
                    s.ask.page,
                    order,
                    write,
                    touch::PerTouch { clock: c, out: lat },
                )?
            },
            // SAFETY: as above.
            None => unsafe { touch_all(m.ptr(), s.ask.page, order, write)? },
        },
    };
    mem::add_delta(&mut seen.touch, &usage0, &mem::thread_rusage());
    seen.rounds += 1;
    seen.touch_ns += ns;
    if let Some(b) = before {
        seen.resident_before.push(b);
    }
    if let Some(m) = &map {
        if case.kind == Kind::Populate && case.phase == Phase::Map {
            seen.resident_after.push(m.resident_pages(s.ask.page)?);
        }
        if s.ask.show_maps {
            seen.maps = m.describe();
        }
    }
    drop(map);
    Ok(ns)
}

/// What both ways of timing a case start from: this thread pinned to the case's CPU (while
/// the guard lives), the pages and the order they are touched in, and the toucher.
fn start_case(s: &Setup, case: &Case) -> Result<(AffinityGuard, usize, Vec<u32>, Participant)> {
    let pin = AffinityGuard::pin_current(&[s.ask.cpu])?;
    let pages = s.pages();
    let order = page_order(pages, case.order == Order::Random, s.seed);
    let toucher = Participant::this_thread("toucher", vec![s.ask.cpu]);
    Ok((pin, pages, order, toucher))
}

fn measure_sampled(ctx: &Context, s: &Setup, case: Case) -> Result<Measurement> {
    let (_pin, pages, order, toucher) = start_case(s, &case)?;
    let seen = RefCell::new(Seen::default());
    let mut raw = |iters: u64| -> Result<u64> {
        let mut t = 0;
        for _ in 0..iters {
            crate::engine::interrupt::check()?;
            t += one_round(s, &case, &order, None, &mut seen.borrow_mut())?;
        }
        Ok(t)
    };
    let mut own = ctx.clone();
    own.sampling = case_sampling(&ctx.sampling, s.ask.rounds);
    // Units are settled afterwards, from the faults counted: a raw iteration here is one
    // mapping.
    let spec = spec_for(s, &case, pages, 0);
    let mut judged = None;
    let mut m = measure(
        &own,
        spec,
        Participants::new(vec![toucher], vec![None]),
        Workloads::alone(&mut raw),
        |ev| {
            let (verdict, facts) = judge(s, &case, ev, &seen.borrow());
            judged = Some(facts);
            verdict
        },
    )?;
    let facts = judged.expect("the checker ran");
    let mut seen = seen.into_inner();
    touch_usage(s, &case, &mut m.evidence, &mut seen);
    m.notes.push(format!(
        "faults, blocks read and CPU times are those of the timed touch loops of all {} \
         mappings (warm-up included; each a first touch), not of preparing and unmapping them",
        seen.rounds
    ));
    // From ns per mapping to ns per page (raw) and per fault (value).
    let faults = (facts.minflt + facts.majflt) as f64;
    let rounds = facts.rounds.max(1) as f64;
    let per_page = faults / (pages as f64 * rounds);
    let pages_f = pages as f64;
    // The bimodality warning names the modes in the samples' unit: per page now.
    let per_mapping = crate::engine::modes::bimodal(&m.samples)
        .map(|modes| crate::engine::modes::remark(&modes, &Unit::NS));
    m.raw = scale_summary(&m.raw, 1.0 / pages_f);
    for v in m.samples.iter_mut().chain(m.evidence_samples.iter_mut()) {
        *v /= pages_f;
    }
    if let Some(old) = per_mapping {
        let new = crate::engine::modes::bimodal(&m.samples)
            .map(|modes| crate::engine::modes::remark(&modes, &Unit::NS));
        m.warnings.retain(|w| *w != old);
        m.warnings.extend(new);
    }
    // The canary's warning quotes sample values too: per page now.
    crate::engine::canary::rewarn(&mut m);
    m.iterations_per_sample *= pages as u64;
    m.units_per_iteration = if per_page > 0.0 { per_page } else { 1.0 };
    m.value = m
        .value
        .as_ref()
        .map(|v| scale_summary(v, 1.0 / (pages_f * m.units_per_iteration)));
    m.params
        .insert("rounds".into(), (facts.rounds as u64).into());
    finish_figure(&mut m, &facts);
    Ok(m)
}

/// The latency distribution: one unrecorded round first (page allocator and page-table
/// caches warm; not for evicted files, whose round is I/O a warm-up would not make more
/// representative), then one round timing every touch.
fn measure_latency(s: &Setup, case: Case) -> Result<Measurement> {
    let (_pin, pages, order, toucher) = start_case(s, &case)?;
    let mut rec = Recorder::new(vec![toucher], EventSet::Standard);
    let clock = s.touch_clock().clone();
    let mut seen = Seen::default();
    let mut latencies = Vec::new();
    if case.kind != Kind::FileEvicted {
        crate::engine::interrupt::check()?;
        one_round(s, &case, &order, None, &mut Seen::default())?;
    }
    crate::engine::interrupt::check()?;
    rec.begin();
    one_round(s, &case, &order, Some((&clock, &mut latencies)), &mut seen)?;
    rec.end(1);
    let mut evidence = rec.finish(&[None]);
    let (verdict, _) = judge(s, &case, &evidence, &seen);
    touch_usage(s, &case, &mut evidence, &mut seen);
    let mut spec = spec_for(s, &case, pages, 1);
    spec.units_per_iteration = 1.0;
    spec = spec.note(clock.describe());
    let mut m = from_samples(
        spec,
        crate::engine::measure::OwnSamples {
            samples: latencies,
            iterations: 1,
        },
        StopReason::OneRound,
        evidence,
        verdict,
    )?;
    // Evidence of one round of `pages` touches, each a sample of one touch.
    m.evidence.rusage.iterations = pages as u64;
    Ok(m)
}

/// The facts of `rounds` recorded mappings and the case's checks and warnings: the counted
/// faults against what the case expects (verdict), placement, and occupancy (a fault handler
/// runs on the CPU like any loop: a competitor inflates it the same way; evicted-file faults
/// wait for the disk, so there only run-queue wait counts).
fn judge(s: &Setup, case: &Case, ev: &Evidence, seen: &Seen) -> (Verdict, Facts) {
    let t = seen.touch;
    let rounds = seen.rounds;
    let span = |v: &[usize]| v.iter().copied().min().zip(v.iter().copied().max());
    let facts = Facts {
        kind: case.kind,
        thp: case.thp,
        phase: case.phase,
        pages: s.pages(),
        rounds,
        minflt: t.minflt,
        majflt: t.majflt,
        inblock: t.inblock,
        resident_before: span(&seen.resident_before),
        resident_after_min: seen.resident_after.iter().copied().min(),
        system_thp: s.ask.system_thp.clone(),
        // Per raw iteration, which is one mapping while the checks run.
        perf_faults: ev
            .events
            .get("page-faults")
            .filter(|e| e.supported)
            .and_then(|e| e.per_op),
    };
    let (mut checks, mut warnings) = verdict(&facts);
    checks.push(crate::engine::checks::placement(&ev.cpus));
    let holding = super::holding(case.kind == Kind::FileEvicted);
    crate::engine::checks::add_occupancy_with(ev, holding, &mut checks, &mut warnings);
    if seen.peak_not_reset {
        warnings.push(Remark::plain(RemarkKind::PeakRssNotReset));
    }
    ((checks, warnings), facts)
}

/// The evidence's usage as the timed touch loops saw it (see [`Seen::touch`]); getrusage
/// also resolves CPU time in µs, where procfs gives clock ticks. The maps lines seen go to
/// the setup, under the case's label.
fn touch_usage(s: &Setup, case: &Case, ev: &mut Evidence, seen: &mut Seen) {
    let pages = s.pages();
    // Counters per page, like the raw figure (the windows' iteration was a mapping).
    for e in ev.events.values_mut() {
        e.per_op = e.per_op.map(|v| v / pages as f64);
    }
    ev.rusage.total = seen.touch;
    ev.rusage.iterations = (seen.rounds * pages) as u64;
    ev.rusage.wall_ns = Some(seen.touch_ns);
    if let Some(p) = ev.rusage.participants.first_mut() {
        p.rusage = seen.touch;
    }
    if !seen.maps.is_empty() {
        s.maps
            .borrow_mut()
            .push((case.label(), std::mem::take(&mut seen.maps)));
    }
}

/// No per-fault figure where it would mislead: both kinds of fault, or none counted.
fn finish_figure(m: &mut Measurement, f: &Facts) {
    if f.kind == Kind::Populate && f.phase == Phase::Touch {
        // The faults are in mmap(): the few a touch may still take (a page migrated under
        // memory pressure) are incidental, and a cost "per fault" over them would be the
        // whole loop's time divided by a handful.
        m.value = None;
        m.notes.push(POPULATED_NOTE.into());
        return;
    }
    if f.majflt > 0 && f.minflt > 0 {
        // A major fault waits for the disk, a minor one does not: their average is neither.
        m.value = None;
        m.notes.push(mixed_faults_note(f.majflt, f.minflt));
    }
    if f.minflt + f.majflt == 0 {
        m.value = None;
        m.notes
            .push("no faults were counted, so there is no cost per fault (only per page)".into());
    }
}

/// Why populate's touch phase has no per-fault figure.
pub const POPULATED_NOTE: &str = "MAP_POPULATE faulted every page in inside mmap(), so the touch \
    loop takes no faults by design (a page migrated under memory pressure at most): its figure \
    is per page only";

/// Why a case that took both kinds of fault has no per-fault figure.
pub fn mixed_faults_note(major: u64, minor: u64) -> String {
    format!(
        "{major} major and {minor} minor faults: a cost per fault would average a disk wait with \
         a page-table update, so there is none (the raw figure is per page)"
    )
}

fn spec_for(s: &Setup, case: &Case, pages: usize, rounds: usize) -> Spec {
    let (unit, raw_unit) = if case.per_touch {
        (Unit::ns(Per::Touch), Unit::ns(Per::Touch))
    } else {
        (Unit::ns(Per::Fault), Unit::ns(Per::Page))
    };
    let mut spec = Spec::new(&case.probe_id(), unit, raw_unit, 1.0)
        .param("size_bytes", s.ask.size as u64)
        .param("pages", pages as u64)
        .param("rounds", rounds as u64)
        .param("cpus", vec![s.ask.cpu])
        .events_set(EventSet::Standard);
    let order = case.order.name();
    match case.kind {
        Kind::Anon => {
            spec = spec
                .param("touch", case.touch.name())
                .param("thp", case.thp.name())
                .param("system_thp", s.ask.system_thp.as_str())
                .param("order", order)
                .note(format!(
                    "first touch ({}) of one byte per page of fresh private anonymous memory; \
                     THP {} by madvise on this mapping only (system THP mode: {}, unchanged). \
                     {}",
                    case.touch.name(),
                    if case.thp == Thp::Always {
                        "requested (MADV_HUGEPAGE, 2 MiB-aligned)"
                    } else {
                        "refused (MADV_NOHUGEPAGE)"
                    },
                    s.ask.system_thp,
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
                .param("system_thp", s.ask.system_thp.as_str());
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
                .param("readahead", case.readahead.name())
                .param("order", order);
            if case.kind == Kind::FileEvicted {
                spec = spec
                    .param(
                        "evict",
                        match s.ask.evict {
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
