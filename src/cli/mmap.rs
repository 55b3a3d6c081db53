//! `oscost mmap lab`: the mmap lab's nine variants (or a chosen subset) with getrusage and
//! perf columns, one SVG per metric, and the competing memory hog or a cgroup memory limit.

use super::common::MeasureOpts;
use super::execute::{execute, finish_after, Extras};
use super::fault::{page_round, parse_size};
use crate::engine::plan::{Plan, PlanItem};
use crate::error::{Error, Result};
use crate::probes::mmap::cgroup::MemCgroup;
use crate::probes::mmap::workload::walk;
use crate::probes::mmap::{run_lab, Lab, Pattern, Place, Pressure, Variant};
use crate::probes::scratch::{check_disk, check_memory, headroom, Keep, MemRoom, ScratchDir};
use crate::report::family::{Ask, Family};
use crate::units::size::{fmt_bytes, ByteStyle};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct MmapArgs {
    #[command(subcommand)]
    pub cmd: MmapCmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum MmapCmd {
    /// The mmap lab: a block walk over nine mapping variants, with rusage and perf columns.
    Lab(LabArgs),
}

#[derive(Debug, clap::Args)]
pub struct LabArgs {
    /// Buffer size, e.g. 256m, 1g (default 256m; 64m with --quick).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// Block order(s) for every variant (file-shared-random is always random).
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["seq"])]
    pub pattern: Vec<Pattern>,
    /// Variants to run (default: all nine).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub variant: Vec<Variant>,
    /// Repetitions of each variant, interleaved (default 3; 1 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub reps: Option<u64>,
    /// The competing process's memory: a share of available memory ("50%") or a size ("2g").
    #[arg(long, default_value = "50%", conflicts_with = "memory_limit")]
    pub compete: String,
    /// Run every variant in a cgroup v2 with this memory.max instead of beside a hog.
    #[arg(long, value_parser = parse_size)]
    pub memory_limit: Option<u64>,
    /// Directory for the file-backed variants' files (default: a new temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Write one SVG bar chart per metric, and lab.csv, into this directory.
    #[arg(long)]
    pub svg_dir: Option<PathBuf>,
    /// CPU every lab child is pinned to (default: the last allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// CPU the competing process is pinned to (default: another allowed CPU than --cpu's,
    /// where there is one).
    #[arg(long)]
    pub competitor_cpu: Option<usize>,
    /// Seed of the xorshift block order.
    #[arg(long, default_value_t = 0x5EED)]
    pub seed: u64,
    #[command(flatten)]
    pub opts: MeasureOpts,
}

/// This CPU's time per byte of the lab's block walk over a warm buffer (the fastest of three
/// 4 MiB walks after one untimed pass, so a busy moment does not inflate it): the unit of
/// the lab's duration estimate.
fn walk_ns_per_byte() -> f64 {
    const LEN: usize = 4 << 20;
    let mut buf = vec![1u8; LEN];
    // SAFETY: buf holds LEN readable and writable bytes.
    std::hint::black_box(unsafe { walk(buf.as_mut_ptr(), LEN, false, 1) });
    let best = (0..3)
        .map(|_| {
            let t = std::time::Instant::now();
            // SAFETY: as above.
            std::hint::black_box(unsafe { walk(buf.as_mut_ptr(), LEN, false, 1) });
            t.elapsed().as_nanos()
        })
        .min()
        .unwrap_or(0);
    best as f64 / LEN as f64
}

/// How long the lab takes: every row walks `size` bytes `reps` times, about one warm walk
/// each (faults and page cache included) and 1.3 beside the hog; plus writing each file once
/// (about 1 GB/s) and the hog taking and re-touching its memory (about 0.5 GB/s, and from half
/// to twice that on a loaded machine, so with a large hog the estimate is rough). The engine's
/// one-budget default does not fit a lab that walks every row `reps` times.
fn lab_estimate(lab: &Lab, ns_per_byte: f64) -> std::time::Duration {
    let walk_s = lab.size as f64 * ns_per_byte / 1e9;
    let mut s = 0.0;
    for (v, _) in &lab.rows {
        let factor = if v.compete() { 1.3 } else { 1.0 };
        s += lab.reps as f64 * walk_s * factor;
        if v.file() {
            s += lab.size as f64 / 1e9;
        }
    }
    if let Pressure::Hog { bytes, .. } = &lab.pressure {
        if lab.rows.iter().any(|(v, _)| v.compete()) {
            s += *bytes as f64 / 0.5e9;
        }
    }
    std::time::Duration::from_secs_f64(s)
}

/// "50%" → share of `available`; "2g" → bytes. Usage error on anything else.
pub fn compete_bytes(s: &str, available: u64) -> Result<(u64, String)> {
    let t = s.trim();
    if let Some(p) = t.strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .map_err(|_| Error::usage(format!("--compete {s}: not a percentage or size")))?;
        if !(v > 0.0 && v < 100.0) {
            return Err(Error::usage(format!(
                "--compete {s}: the share must be above 0% and below 100%"
            )));
        }
        let bytes = (available as f64 * v / 100.0) as u64;
        return Ok((
            bytes,
            format!(
                "{v}% of {} available",
                fmt_bytes(available as f64, ByteStyle::GibMib)
            ),
        ));
    }
    let bytes = parse_size(t).map_err(|e| Error::usage(format!("--compete: {e}")))?;
    Ok((
        bytes,
        format!(
            "{:.0}% of {} available",
            100.0 * bytes as f64 / available.max(1) as f64,
            fmt_bytes(available as f64, ByteStyle::GibMib)
        ),
    ))
}

/// The rows: each variant under each pattern (file-shared-random once).
pub fn rows(variants: &[Variant], patterns: &[Pattern]) -> Vec<(Variant, Pattern)> {
    let mut out = Vec::new();
    for &v in variants {
        if v == Variant::FileRandom {
            out.push((v, Pattern::Random));
        } else {
            for &p in patterns {
                out.push((v, p));
            }
        }
    }
    out
}

pub fn run(a: MmapArgs) -> Result<i32> {
    match a.cmd {
        MmapCmd::Lab(l) => lab(l),
    }
}

/// The line saying how memory was pressed during the lab.
fn pressure_line(pressure: &Pressure, place: Place) -> String {
    match pressure {
        Pressure::Hog { bytes, share } => format!(
            "memory pressure: a competing process holding and re-touching {} ({share}) during \
             the compete-* variants, {}; lab children on CPU {}",
            fmt_bytes(*bytes as f64, ByteStyle::GibMib),
            match place.competitor {
                Some(c) => format!("on CPU {c}"),
                None => "unpinned".to_string(),
            },
            place.cpu
        ),
        Pressure::Limit { cgroup, bytes } => format!(
            "memory pressure: every variant ran in cgroup v2 {} with memory.max = {}",
            cgroup.path().display(),
            fmt_bytes(*bytes as f64, ByteStyle::GibMib)
        ),
    }
}

/// The memory pressure the lab runs under: a cgroup limit (--memory-limit), or a hog of
/// --compete's size, refused when the hog and the buffer would eat into the headroom.
fn pressure(a: &LabArgs, variants: &[Variant], room: &MemRoom, size: u64) -> Result<Pressure> {
    Ok(match a.memory_limit {
        Some(limit) => Pressure::Limit {
            cgroup: MemCgroup::create(limit)?,
            bytes: limit,
        },
        None => {
            let (bytes, share) = compete_bytes(&a.compete, room.available)?;
            if variants.iter().any(|v| v.compete()) && bytes + size > room.usable() {
                let max_share = 100.0 * room.usable().saturating_sub(size) as f64
                    / room.available.max(1) as f64;
                return Err(Error::usage(format!(
                    "--compete {}: a {} hog plus the {} buffer would leave less than the {} \
                     that must stay free of {} available; use at most {:.0}%",
                    a.compete,
                    fmt_bytes(bytes as f64, ByteStyle::GibMib),
                    fmt_bytes(size as f64, ByteStyle::GibMib),
                    fmt_bytes(headroom(room.total) as f64, ByteStyle::GibMib),
                    fmt_bytes(room.available as f64, ByteStyle::GibMib),
                    max_share.floor().max(0.0)
                )));
            }
            Pressure::Hog { bytes, share }
        }
    })
}

/// Where the lab's processes run: --cpu (or the last allowed CPU), and --competitor-cpu (or
/// the last allowed CPU other than the lab's, so the hog does not share the measured CPU).
fn place(cpu: Option<usize>, competitor: Option<usize>) -> Result<Place> {
    let cpu = super::common::pick_cpu(cpu)?;
    let competitor = match competitor {
        Some(c) => Some(crate::evidence::placement::validate_cpu(c)?),
        None => crate::machine::affinity::allowed_cpus()
            .into_iter()
            .rev()
            .find(|&c| c != cpu),
    };
    Ok(Place { cpu, competitor })
}

fn lab(mut a: LabArgs) -> Result<i32> {
    // The lab runs a fixed number of repetitions per variant (--reps), interleaved, each in a
    // fresh child: there is no sampling loop for a time budget or an interval target to stop.
    // Accepting them silently would be worse than refusing.
    if a.opts.budget.is_some() || a.opts.ci.is_some() {
        return Err(Error::usage(
            "mmap lab runs a fixed number of repetitions (--reps N), not a timed sampling loop: \
             --budget and --ci do not apply here",
        ));
    }
    super::common::dedup(&mut a.pattern);
    super::common::dedup(&mut a.variant);
    a.opts.check_outputs()?;
    if let Some(d) = &a.svg_dir {
        super::outputs::check_svg_dir(d)?;
    }
    let size = page_round(
        a.size
            .unwrap_or(if a.opts.quick { 64 << 20 } else { 256 << 20 }),
        4096,
    )?;
    let variants = if a.variant.is_empty() {
        Variant::ALL.to_vec()
    } else {
        a.variant.clone()
    };
    let rows = rows(&variants, &a.pattern);
    let dir = match &a.dir {
        Some(d) => ScratchDir::user(d)?,
        None => ScratchDir::create_default()?,
    };
    let room = MemRoom::read()?;
    check_memory(
        &format!("--size {}", fmt_bytes(size as f64, ByteStyle::GibMib)),
        size,
        &room,
        Keep::Headroom,
    )?;
    if variants.iter().any(|v| v.file()) {
        check_disk(
            &format!(
                "--size {} (lab file)",
                fmt_bytes(size as f64, ByteStyle::GibMib)
            ),
            dir.path(),
            size,
        )?;
    }
    let place = place(a.cpu, a.competitor_cpu)?;
    let pressure = pressure(&a, &variants, &room, size)?;
    let pressure_line = pressure_line(&pressure, place);
    let reps = a
        .reps
        .map(|r| r as usize)
        .unwrap_or(if a.opts.quick { 1 } else { 3 });
    let lab = Lab {
        size: size as usize,
        reps,
        seed: a.seed,
        rows,
        pressure,
        dir,
        place,
    };
    let estimate = lab_estimate(&lab, walk_ns_per_byte());
    let mut plan = Plan::default();
    plan.push(
        PlanItem::group("mmap.lab", move |ctx| run_lab(ctx, &lab))
            .with_estimate(estimate)
            .once("the lab interleaves its rows repetition by repetition (--reps)"),
    );
    let run = execute(plan, &a.opts)?;
    let ask = Ask {
        figures: a.svg_dir.is_some(),
        verbose: a.opts.verbose || a.opts.explain,
        ..Ask::default()
    };
    let shown = crate::report::lab::Lab.shown(&run, &ask)?;
    let after = format!("\n{pressure_line}\n{}", shown.after);
    let files = Extras::in_dir(&shown, a.svg_dir.as_deref());
    finish_after(&run, &a.opts, after, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compete_shares_and_sizes() {
        let (b, why) = compete_bytes("50%", 10 << 30).unwrap();
        assert_eq!(b, 5 << 30);
        assert!(why.contains("50% of 10.00 GiB"));
        assert_eq!(compete_bytes("1g", 10 << 30).unwrap().0, 1 << 30);
        for bad in ["0%", "100%", "x%", "lots"] {
            assert_eq!(
                compete_bytes(bad, 10 << 30).unwrap_err().exit_code(),
                2,
                "{bad}"
            );
        }
    }

    #[test]
    fn the_lab_estimate_counts_walks_files_and_the_hog() {
        let dir = tempfile::tempdir().unwrap();
        let lab = |variants: &[Variant], hog: u64| Lab {
            size: 64 << 20,
            reps: 2,
            seed: 1,
            rows: rows(variants, &[Pattern::Seq]),
            pressure: Pressure::Hog {
                bytes: hog,
                share: "x".into(),
            },
            dir: ScratchDir::user(dir.path()).unwrap(),
            place: Place {
                cpu: 0,
                competitor: None,
            },
        };
        // 1 ns per byte: a 64 MiB walk takes 67 ms.
        let walk = (64u64 << 20) as f64 / 1e9;
        let anon = lab_estimate(&lab(&[Variant::AnonPrivate], 1 << 30), 1.0);
        assert!((anon.as_secs_f64() - 2.0 * walk).abs() < 1e-6, "{anon:?}");
        let file = lab_estimate(&lab(&[Variant::FileShared], 1 << 30), 1.0);
        assert!((file.as_secs_f64() - (2.0 * walk + walk)).abs() < 1e-6);
        let hog = lab_estimate(&lab(&[Variant::CompeteAnon], 1 << 30), 1.0);
        assert!(
            (hog.as_secs_f64() - (2.0 * 1.3 * walk + (1u64 << 30) as f64 / 0.5e9)).abs() < 1e-6
        );
    }

    #[test]
    fn nine_variants_make_nine_rows_and_patterns_multiply_the_rest() {
        assert_eq!(rows(&Variant::ALL, &[Pattern::Seq]).len(), 9);
        let r = rows(&Variant::ALL, &[Pattern::Seq, Pattern::Random]);
        assert_eq!(r.len(), 17);
        assert_eq!(
            r.iter().filter(|(v, _)| *v == Variant::FileRandom).count(),
            1
        );
    }
}
