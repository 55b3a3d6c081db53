//! The kernel's own view of an anatomy rung: `tlb:tlb_flush` (a TLB flush and its reason:
//! 0 is "flush on task switch") and `x86_fpu:x86_fpu_regs_deactivated` (a task's register
//! state saved as it leaves the CPU, with the components XSAVE found live), recorded through
//! perf_event_open for the rung's tasks after its samples, as `rpc` records the scheduler's
//! events (evidence::trace: tracefs through the journal, ids and offsets from the format
//! files, the same sample layout and fixture format).

use crate::error::{Error, Result};
use crate::evidence::trace::ring::{Recording, Tracer};
use crate::evidence::trace::{Decoder, Group, Kind, RawRecord};

/// The events recorded, each optional to the tracer, so that a missing one is said here, by
/// name.
pub const EVENTS: [(&str, bool); 2] = [
    ("tlb:tlb_flush", false),
    ("x86_fpu:x86_fpu_regs_deactivated", false),
];

/// `reason` values of tlb_flush (arch/x86 `enum tlb_flush_reason`), as its format prints them.
pub const REASONS: [&str; 6] = [
    "flush on task switch",
    "remote shootdown",
    "local shootdown",
    "local MM shootdown",
    "remote IPI send",
    "remote wrong CPU",
];

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
pub fn tally(decoder: &Decoder, records: &[RawRecord], tids: &[i32]) -> Tally {
    let mut t = Tally {
        fpu_live_in_all: !0,
        ..Tally::default()
    };
    let (events, lost) = decoder.decode_all(records);
    t.lost = lost;
    for e in events.iter().filter(|e| tids.contains(&e.tid)) {
        match e.kind {
            Kind::TlbFlush { reason, pages } => {
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
            Kind::FpuSaved { xfeatures } => {
                t.fpu_saves += 1;
                t.fpu_live_in_all &= xfeatures;
                t.fpu_live_in_any |= xfeatures;
            }
            _ => {}
        }
    }
    if t.fpu_saves == 0 {
        t.fpu_live_in_all = 0;
    }
    t
}

/// The two events on the given CPUs, filtered to the given tasks, one ring per CPU (disabled).
/// Err: the one line why tracing cannot run here.
pub fn open(cpus: &[usize], tids: &[i32]) -> Result<Tracer> {
    let rec = Recording {
        events: &EVENTS,
        pids: Some(tids),
        ring_bytes: 1 << 20,
    };
    let tracer = Tracer::open_recording(cpus, rec)?;
    let formats = &tracer.decoder.formats;
    if let Some((e, _)) = EVENTS
        .iter()
        .find(|(e, _)| !formats.iter().any(|f| f.name == *e))
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
    use crate::evidence::trace::tests::fixture_decoder_for;
    use crate::evidence::trace::{parse_fixture, Event, PERF_RECORD_SAMPLE};

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
        let d = fixture_decoder_for(&EVENTS);
        let text = std::fs::read_to_string(dir().join("anatomy-avx512.records")).unwrap();
        let records = parse_fixture(&text).unwrap();
        let t = tally(&d, &records, &tids(&text));
        assert_eq!(t.lost, 0);
        assert!(t.fpu_saves >= 400, "{t:?}");
        assert_eq!(t.fpu_live_in_all & 0xe0, 0xe0, "{t:?}");
        // Another task's records are not the rung's.
        let none = tally(&d, &records, &[1]);
        assert_eq!((none.fpu_saves, none.tlb_flush.len()), (0, 0));
        // A truncated record is skipped, not misread.
        let mut cut = records.clone();
        for r in &mut cut {
            r.body.truncate(30);
        }
        assert_eq!(tally(&d, &cut, &tids(&text)).fpu_saves, 0);
    }

    #[test]
    fn a_tlb_flush_decodes_its_reason_and_pages() {
        let d = fixture_decoder_for(&EVENTS);
        let f = &d.formats[0];
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
        let r = d.decode(&body).unwrap();
        assert_eq!(
            r,
            Event {
                time: 0,
                cpu: 0,
                pid: 77,
                tid: 77,
                kind: Kind::TlbFlush {
                    reason: 0,
                    pages: u64::MAX
                }
            }
        );
        let t = tally(
            &d,
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
