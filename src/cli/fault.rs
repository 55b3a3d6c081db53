//! `oscost fault`: page-fault costs by kind (anonymous, populated, page-cache file, evicted
//! file), with THP, order and readahead variants, the time -v block per case (--verbose),
//! latency percentiles and the mapping as the kernel shows it.

use super::common::{pick_cpu, MeasureOpts};
use super::execute::{execute, finish_with, Extras};
use crate::engine::plan::{Plan, PlanItem};
use crate::engine::sampler::SamplingConfig;
use crate::error::{Error, Result};
use crate::probes::fault::{
    measure_case, Case, Evict, Kind, Order, Phase, Readahead, Setup, Thp, Touch,
};
use crate::probes::scratch::{check_disk, check_memory, Keep, MemRoom, ScratchDir};
use crate::report::family::{Ask, Family};
use crate::report::fault::Fault;
use crate::units::name::Named;
use crate::units::size::{fmt_bytes, ByteStyle};
use std::path::PathBuf;
use std::rc::Rc;

#[derive(Debug, clap::Args)]
pub struct FaultArgs {
    /// What to fault in (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',',
          default_values = ["anon", "populate", "file-cached", "file-evicted"])]
    pub kind: Vec<Kind>,
    /// Bytes per mapping, e.g. 256m, 1g, 65536 (default 256m; 64m with --quick).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// First touch by writing and/or reading (anonymous kinds; file kinds are read).
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["write", "read"])]
    pub touch: Vec<Touch>,
    /// THP for anonymous mappings, by madvise on the mapping (the system setting is untouched).
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["never"])]
    pub thp: Vec<Thp>,
    /// Page order: in order and/or a seeded random permutation.
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["seq"])]
    pub order: Vec<Order>,
    /// Readahead advice for file kinds.
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["default"])]
    pub readahead: Vec<Readahead>,
    /// Also time every touch and report p50/p90/p99/max (and a histogram with --svg-dir).
    #[arg(long)]
    pub histogram: bool,
    /// Print the mapping's /proc/self/maps line and smaps counters (AnonHugePages ...).
    #[arg(long)]
    pub show_maps: bool,
    /// Directory for the scratch file (default: a new directory under the system temp dir).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Evict with drop_caches (whole machine's page cache; root only) instead of fadvise.
    #[arg(long)]
    pub drop_caches: bool,
    /// Allow a file-evicted --size beyond available memory (after a disk check).
    #[arg(long)]
    pub beyond_ram: bool,
    /// Measured rounds (fresh mappings) per case, whatever the budget: the sampler takes them
    /// in 3 rounds of at least 3, so N rounded up to a multiple of 3, at least 9 (default:
    /// until the interval is tight or the budget is spent).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub rounds: Option<u64>,
    /// CPU to pin the touching thread to (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Write latency histograms (with --histogram) as SVG files into this directory.
    #[arg(long)]
    pub svg_dir: Option<PathBuf>,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

/// Sizes for fault and mmap options: the one size grammar, zero refused.
pub use crate::units::size::parse_nonzero_size as parse_size;

/// Round `--size` up to whole pages; a size so large that rounding overflows is a usage
/// error, not a wrap to 0 that measures nothing.
pub fn page_round(bytes: u64, page: u64) -> Result<u64> {
    bytes
        .div_ceil(page)
        .checked_mul(page)
        .ok_or_else(|| Error::usage(format!("--size {bytes}: too large for this machine")))
}

/// The system THP mode ("always", "madvise", "never", or "unknown").
pub fn system_thp() -> String {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .ok()
        .and_then(|s| crate::machine::parse::parse_bracketed(&s))
        .unwrap_or_else(|| "unknown (no THP support?)".into())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The cases a set of arguments asks for.
pub fn cases(a: &FaultArgs) -> Vec<Case> {
    let mut out = Vec::new();
    let base = Case::BASE;
    for &kind in &a.kind {
        let c = Case { kind, ..base };
        match kind {
            Kind::Anon => {
                for &touch in &a.touch {
                    for &thp in &a.thp {
                        for &order in &a.order {
                            out.push(Case {
                                touch,
                                thp,
                                order,
                                ..c
                            });
                        }
                    }
                }
            }
            Kind::Populate => {
                out.push(Case {
                    phase: Phase::Map,
                    ..c
                });
                for &order in &a.order {
                    out.push(Case { order, ..c });
                }
            }
            Kind::FileCached | Kind::FileEvicted => {
                for &readahead in &a.readahead {
                    for &order in &a.order {
                        out.push(Case {
                            touch: Touch::Read,
                            readahead,
                            order,
                            ..c
                        });
                    }
                }
                // The evicted file also read with readahead off in a random order: every
                // touch one major fault, the case that answers what a major fault costs.
                let major = Case {
                    touch: Touch::Read,
                    readahead: Readahead::Random,
                    order: Order::Random,
                    ..c
                };
                if kind == Kind::FileEvicted && !out.contains(&major) {
                    out.push(major);
                }
            }
        }
    }
    if a.histogram {
        let timed: Vec<Case> = out
            .iter()
            .filter(|c| c.phase == Phase::Touch)
            .map(|c| Case {
                per_touch: true,
                ..*c
            })
            .collect();
        out.extend(timed);
    }
    out
}

/// Check sizes against memory and disk; refuse with the numbers.
fn check_room(a: &FaultArgs, size: u64, dir: &std::path::Path) -> Result<()> {
    let room = MemRoom::read()?;
    let files = a.kind.iter().any(|k| k.is_file());
    let needs_ram: Vec<&str> = a
        .kind
        .iter()
        .filter(|k| !(a.beyond_ram && **k == Kind::FileEvicted))
        .map(|k| k.name())
        .collect();
    if !needs_ram.is_empty() {
        let what = format!(
            "--size {} ({})",
            fmt_bytes(size as f64, ByteStyle::GibMib),
            needs_ram.join(", ")
        );
        check_memory(&what, size, &room, Keep::Headroom).map_err(|e| {
            if a.kind.contains(&Kind::FileEvicted) && !a.beyond_ram {
                Error::usage(format!(
                    "{e} (only --kind file-evicted may exceed memory, with --beyond-ram)"
                ))
            } else {
                e
            }
        })?;
    }
    if files {
        check_disk(
            &format!(
                "--size {} (scratch file)",
                fmt_bytes(size as f64, ByteStyle::GibMib)
            ),
            dir,
            size,
        )?;
    }
    Ok(())
}

pub fn run(mut a: FaultArgs) -> Result<i32> {
    use super::common::dedup;
    dedup(&mut a.kind);
    dedup(&mut a.touch);
    dedup(&mut a.thp);
    dedup(&mut a.order);
    dedup(&mut a.readahead);
    a.opts.check_outputs()?;
    if a.rounds.is_some() && (a.opts.budget.is_some() || a.opts.ci.is_some()) {
        return Err(Error::usage(
            "--rounds fixes how many rounds each case takes; it cannot be combined with \
             --budget or --ci, which decide when sampling stops",
        ));
    }
    let cpu = pick_cpu(a.cpu)?;
    let page = crate::machine::live_page_size().unwrap_or(4096);
    let size = page_round(
        a.size
            .unwrap_or(if a.opts.quick { 64 << 20 } else { 256 << 20 }),
        page,
    )?;
    if a.drop_caches && !is_root() {
        return Err(Error::usage(
            "--drop-caches needs root (it empties the whole machine's page cache); \
             without it, eviction uses posix_fadvise(DONTNEED)",
        ));
    }
    if let Some(d) = &a.svg_dir {
        super::outputs::check_svg_dir(d)?;
    }
    let files = a.kind.iter().any(|k| k.is_file());
    let dir = match (&a.dir, files) {
        (Some(d), _) => Some(ScratchDir::user(d)?),
        (None, true) => Some(ScratchDir::create_default()?),
        (None, false) => None,
    };
    let check_in = dir
        .as_ref()
        .map(|d| d.path().to_path_buf())
        .unwrap_or_else(std::env::temp_dir);
    check_room(&a, size, &check_in)?;
    let rounds = a.rounds.map(|n| n as usize);
    let setup = Rc::new(Setup::new(crate::probes::fault::SetupArgs {
        size: size as usize,
        page: page as usize,
        cpu,
        evict: if a.drop_caches {
            Evict::DropCaches
        } else {
            Evict::Fadvise
        },
        show_maps: a.show_maps,
        rounds,
        system_thp: system_thp(),
        dir,
    }));
    let mut plan = Plan::default();
    let sampling = crate::probes::fault::case_sampling(&a.opts.sampling(), rounds);
    let mut file_made = false;
    for case in cases(&a) {
        let s = Rc::clone(&setup);
        let mut est = case_estimate(&case, size, &sampling);
        if case.kind.is_file() && !file_made {
            // The scratch file is written (and fsynced) once, by the first file case.
            est += size as f64 * FILL_S_PER_BYTE;
            file_made = true;
        }
        plan.push(
            PlanItem::new(case.label(), move |ctx| measure_case(ctx, &s, case))
                .with_estimate(std::time::Duration::from_secs_f64(est))
                .once(
                    "a fault case's figure is settled after sampling (per page, per fault, \
                     faults counted around the timed touches only)",
                ),
        );
    }
    let run = execute(plan, &a.opts)?;
    finish_fault(&run, &a, &setup, page, size)
}

/// The way out of `fault`: the page facts, the family's tables, each case's mapping as
/// smaps shows it, and the figures for `--svg-dir`.
fn finish_fault(
    run: &crate::model::Run,
    a: &FaultArgs,
    setup: &Setup,
    page: u64,
    size: u64,
) -> Result<i32> {
    use std::fmt::Write as _;
    let mut after = String::new();
    let _ = writeln!(
        after,
        "\nsystem THP mode: {} (not changed; --thp applies madvise per mapping); page size {} B; \
         size {} = {} pages",
        setup.ask.system_thp,
        page,
        fmt_bytes(size as f64, ByteStyle::GibMib),
        size / page
    );
    let ask = Ask {
        figures: a.svg_dir.is_some(),
        verbose: a.opts.verbose || a.opts.explain,
        ..Ask::default()
    };
    let shown = Fault.shown(run, &ask)?;
    after.push_str(&shown.after);
    let files = Extras::in_dir(&shown, a.svg_dir.as_deref());
    let analysis = shown.analysis;
    for (label, lines) in setup.maps.borrow().iter() {
        let _ = writeln!(
            after,
            "\n{label}: the mapping after the touch (/proc/self/smaps)"
        );
        for l in lines {
            let _ = writeln!(after, "  {l}");
        }
    }
    finish_with(
        run,
        &a.opts,
        Extras {
            after: Some(after),
            analysis,
            files,
            ..Extras::default()
        },
    )
}

/// Seconds per byte of one round (map, first touch of every page, unmap) on a quiet machine,
/// the engine's per-call costs included. An evicted file waits for the disk instead (a guess; history
/// corrects it).
const ROUND_S_PER_BYTE: f64 = 0.22e-9;
const EVICTED_S_PER_BYTE: f64 = 1.5e-9;
/// An evicted file read with readahead off: every touch a major fault, one 4 KiB read from
/// the disk each (about 80 µs on a VM's virtual disk, less on local flash; history corrects
/// it), so 13 times the readahead case's round.
const MAJOR_S_PER_BYTE: f64 = 80e-6 / 4096.0;
/// Writing the scratch file (about 1 GB/s).
const FILL_S_PER_BYTE: f64 = 1e-9;

/// One case's expected time: the longest run of the engine's sampler with one round (map,
/// touch every page, unmap) per sample (engine::estimate::call_bound_s); with
/// `--histogram`, a warm-up round and one timed round.
fn case_estimate(case: &Case, size: u64, sampling: &SamplingConfig) -> f64 {
    let per_byte = match (case.kind, case.readahead) {
        (Kind::FileEvicted, Readahead::Random) => MAJOR_S_PER_BYTE,
        (Kind::FileEvicted, _) => EVICTED_S_PER_BYTE,
        _ => ROUND_S_PER_BYTE,
    };
    let round = size as f64 * per_byte;
    if case.per_touch {
        return 2.0 * round;
    }
    let rounds = crate::engine::sampler::plan(sampling, crate::engine::sampler::Call::Whole);
    crate::engine::estimate::call_bound_s(&rounds, round)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_takes_its_rounds_within_the_budget() {
        let case = Case::BASE;
        let mib = 1 << 20;
        let std = crate::probes::fault::case_sampling(&SamplingConfig::standard(), None);
        // 256 MiB, about 0.08 s a round: the 2 s budget bounds it.
        let e = case_estimate(&case, 256 * mib, &std);
        assert!(e > 1.0 && e < 2.3, "{e}");
        // --rounds 30 of 256 MiB: the samples outlast the budget, and their count ends them.
        let fixed = crate::probes::fault::case_sampling(&SamplingConfig::standard(), Some(30));
        let thirty = 30.0 * 256.0 * mib as f64 * ROUND_S_PER_BYTE;
        let e = case_estimate(&case, 256 * mib, &fixed);
        assert!(e > thirty.max(2.0) && e < 2.0 * thirty, "{e}");
        // An evicted file waits for the disk: longer rounds.
        let ev = Case {
            kind: Kind::FileEvicted,
            ..case
        };
        assert!(case_estimate(&ev, 64 * mib, &std) > case_estimate(&case, 64 * mib, &std));
        // Readahead off: a disk read per page, the longest rounds of all.
        let major = Case {
            readahead: Readahead::Random,
            ..ev
        };
        let (m, e) = (
            case_estimate(&major, 64 * mib, &std),
            case_estimate(&ev, 64 * mib, &std),
        );
        assert!(m > 5.0 * e, "{m} against {e}");
        // --histogram: one warm-up and one timed round.
        let lat = Case {
            per_touch: true,
            ..case
        };
        let e = case_estimate(&lat, 64 * mib, &std);
        assert!((e - 2.0 * 64.0 * mib as f64 * ROUND_S_PER_BYTE).abs() < 1e-9);
    }

    #[test]
    fn sizes_parse_in_binary_units_and_zero_is_refused() {
        assert_eq!(parse_size("256m").unwrap(), 256 << 20);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("512MB").unwrap(), 512 << 20);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("0").unwrap_err().contains("above zero"));
        assert!(parse_size("0m").is_err());
        assert!(parse_size("lots").unwrap_err().contains("not a size"));
        assert!(parse_size("3x").unwrap_err().contains("not a size"));
        assert!(parse_size("-1m").is_err());
        assert!(parse_size("99999999999t")
            .unwrap_err()
            .contains("too large"));
        assert_eq!(page_round(1, 4096).unwrap(), 4096);
        assert_eq!(page_round(8192, 4096).unwrap(), 8192);
        assert_eq!(page_round(u64::MAX, 4096).unwrap_err().exit_code(), 2);
    }
}
