//! The kernel's own view of an anatomy rung: `tlb:tlb_flush` (a TLB flush and its reason:
//! 0 is "flush on task switch") and `x86_fpu:x86_fpu_regs_deactivated` (a task's register
//! state saved as it leaves the CPU, with the components XSAVE found live), recorded through
//! perf_event_open for the rung's tasks after its samples, as `rpc` records the scheduler's
//! events (evidence::trace: tracefs through the journal, ids and offsets from the format
//! files, the same sample layout and fixture format).

use crate::error::{Error, Result};
use crate::evidence::trace::ring::{Recording, Tracer};
use crate::evidence::trace::tracefs::{read_int, Format};
use crate::evidence::trace::{Group, RawRecord, PERF_RECORD_LOST, PERF_RECORD_SAMPLE};

/// The events recorded.
pub const EVENTS: [&str; 2] = ["tlb:tlb_flush", "x86_fpu:x86_fpu_regs_deactivated"];

/// `reason` values of tlb_flush (arch/x86 `enum tlb_flush_reason`), as its format prints them.
pub const REASONS: [&str; 6] = [
    "flush on task switch",
    "remote shootdown",
    "local shootdown",
    "local MM shootdown",
    "remote IPI send",
    "remote wrong CPU",
];

/// One decoded record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    TlbFlush {
        reason: i64,
        pages: u64,
    },
    /// A task's registers saved at a switch; `xfeatures` the live components.
    FpuSaved {
        xfeatures: u64,
    },
}

/// A decoded record with the task it was recorded for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub tid: i32,
    pub seen: Seen,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Decode one sample body (sample_type TID | TIME | CPU | RAW: pid, tid, time, cpu, res,
/// then the raw record's size and bytes); None for another event or a truncated record.
pub fn decode(formats: &[Format], body: &[u8]) -> Option<Record> {
    let tid = u32_at(body, 4)? as i32;
    let size = u32_at(body, 24)? as usize;
    let raw = body.get(28..28 + size)?;
    let ty = u64::from(u16::from_le_bytes(raw.get(0..2)?.try_into().ok()?));
    let f = formats.iter().find(|f| f.id == ty)?;
    let get = |name: &str| f.field(name).and_then(|x| read_int(raw, x));
    let seen = match f.name.as_str() {
        "tlb:tlb_flush" => Seen::TlbFlush {
            reason: get("reason")?,
            pages: get("pages")? as u64,
        },
        "x86_fpu:x86_fpu_regs_deactivated" => Seen::FpuSaved {
            xfeatures: get("xfeatures")? as u64,
        },
        _ => return None,
    };
    Some(Record { tid, seen })
}

/// What the records of one side say, per switch of its tasks.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Tally {
    /// tlb_flush records by reason name.
    pub tlb_flush: std::collections::BTreeMap<String, u64>,
    /// Register saves at a switch, and the components live in every one (AND) and in any
    /// (OR).
    pub fpu_saves: u64,
    pub fpu_live_in_all: u64,
    pub fpu_live_in_any: u64,
    /// Records the kernel reported lost (a full ring).
    pub lost: u64,
}

/// Tally the records of the tasks `tids`.
pub fn tally(formats: &[Format], records: &[RawRecord], tids: &[i32]) -> Tally {
    let mut t = Tally {
        fpu_live_in_all: !0,
        ..Tally::default()
    };
    for r in records {
        if r.ty == PERF_RECORD_LOST {
            t.lost += r
                .body
                .get(8..16)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_le_bytes);
            continue;
        }
        if r.ty != PERF_RECORD_SAMPLE {
            continue;
        }
        let Some(rec) = decode(formats, &r.body).filter(|x| tids.contains(&x.tid)) else {
            continue;
        };
        match rec.seen {
            Seen::TlbFlush { reason, pages } => {
                let why = usize::try_from(reason)
                    .ok()
                    .and_then(|i| REASONS.get(i))
                    .map_or_else(|| format!("reason {reason}"), |s| s.to_string());
                // At a switch the kernel records 0 pages where PCID kept the TLB and all
                // (-1) where it flushed.
                let name = match pages {
                    0 => format!("{why}, nothing flushed"),
                    u64::MAX => format!("{why}, all flushed"),
                    n => format!("{why}, {n} pages"),
                };
                *t.tlb_flush.entry(name).or_default() += 1;
            }
            Seen::FpuSaved { xfeatures } => {
                t.fpu_saves += 1;
                t.fpu_live_in_all &= xfeatures;
                t.fpu_live_in_any |= xfeatures;
            }
        }
    }
    if t.fpu_saves == 0 {
        t.fpu_live_in_all = 0;
    }
    t
}

/// The events as the tracer opens them: each optional there, so that a missing one is said
/// here, by name.
const RECORDED: [(&str, bool); 2] = [(EVENTS[0], false), (EVENTS[1], false)];

/// The two events on the given CPUs, filtered to the given tasks, one ring per CPU (disabled).
/// Err: the one line why tracing cannot run here.
pub fn open(cpus: &[usize], tids: &[i32]) -> Result<Tracer> {
    let rec = Recording {
        events: &RECORDED,
        pids: Some(tids),
        ring_bytes: 1 << 20,
    };
    let tracer = Tracer::open_recording(cpus, rec)?;
    let formats = &tracer.decoder.formats;
    if let Some(e) = EVENTS
        .iter()
        .find(|e| !formats.iter().any(|f| f.name == **e))
    {
        return Err(Error::env(format!("this kernel has no tracepoint {e}")));
    }
    Ok(tracer)
}

/// The records of the two events while `work` runs (both are in [`Group::Sched`]; perf's
/// switch records stay off).
pub fn around<T>(
    tracer: &mut Tracer,
    work: impl FnOnce() -> Result<T>,
) -> Result<(T, Vec<RawRecord>)> {
    tracer.record(&[Group::Sched], work)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::trace::parse_fixture;
    use crate::evidence::trace::tracefs::parse_format;

    /// The formats of the fixtures' kernel (tests/fixtures/trace/<name>.{id,format}).
    pub fn fixture_formats(dir: &std::path::Path) -> Result<Vec<Format>> {
        EVENTS
            .iter()
            .map(|name| {
                let short = name.split(':').nth(1).unwrap_or(name);
                let read = |ext: &str| {
                    std::fs::read_to_string(dir.join(format!("{short}.{ext}")))
                        .map_err(|e| Error::env(format!("{short}.{ext}: {e}")))
                };
                let id = read("id")?
                    .trim()
                    .parse()
                    .map_err(|_| Error::env(format!("{short}.id: not a number")))?;
                parse_format(name, id, &read("format")?)
            })
            .collect()
    }

    fn dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace")
    }

    /// The first line of a recording: "# tids <timer> <partner>".
    fn tids(text: &str) -> Vec<i32> {
        text.lines()
            .find_map(|l| l.strip_prefix("# tids "))
            .unwrap()
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect()
    }

    /// Two processes on one CPU, 200 round trips, each leaving AVX-512 state live at every
    /// switch: one register save per switch with the AVX-512 components live in all of them,
    /// and the switches' TLB flushes by reason.
    #[test]
    fn recorded_fpu_saves_show_the_live_state_and_flushes_their_reason() {
        let formats = fixture_formats(&dir()).unwrap();
        let text = std::fs::read_to_string(dir().join("anatomy-avx512.records")).unwrap();
        let records = parse_fixture(&text).unwrap();
        let t = tally(&formats, &records, &tids(&text));
        assert_eq!(t.lost, 0);
        assert!(t.fpu_saves >= 400, "{t:?}");
        assert_eq!(t.fpu_live_in_all & 0xe0, 0xe0, "{t:?}");
        // Another task's records are not the rung's.
        let none = tally(&formats, &records, &[1]);
        assert_eq!((none.fpu_saves, none.tlb_flush.len()), (0, 0));
        // A truncated record is skipped, not misread.
        let mut cut = records.clone();
        for r in &mut cut {
            r.body.truncate(30);
        }
        assert_eq!(tally(&formats, &cut, &tids(&text)).fpu_saves, 0);
    }

    #[test]
    fn a_tlb_flush_decodes_its_reason_and_pages() {
        let formats = fixture_formats(&dir()).unwrap();
        let f = &formats[0];
        // A sample of reason 0 ("flush on task switch"), pages = -1 (a full flush).
        let mut raw = vec![0u8; 24];
        raw[0..2].copy_from_slice(&(f.id as u16).to_le_bytes());
        raw[4..8].copy_from_slice(&77i32.to_le_bytes());
        raw[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        let mut body = Vec::new();
        for v in [77u32, 77] {
            body.extend(v.to_le_bytes());
        }
        body.extend(0u64.to_le_bytes());
        body.extend([0u32, 0].iter().flat_map(|v| v.to_le_bytes()));
        body.extend((raw.len() as u32).to_le_bytes());
        body.extend(&raw);
        let r = decode(&formats, &body).unwrap();
        assert_eq!(
            r,
            Record {
                tid: 77,
                seen: Seen::TlbFlush {
                    reason: 0,
                    pages: u64::MAX
                }
            }
        );
        let t = tally(
            &formats,
            &[RawRecord {
                ty: PERF_RECORD_SAMPLE,
                misc: 0,
                body,
            }],
            &[77],
        );
        assert_eq!(
            t.tlb_flush.get("flush on task switch, all flushed"),
            Some(&1)
        );
    }
}
