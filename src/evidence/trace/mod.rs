//! Kernel tracepoints as evidence: the scheduler's wake-ups and switches, system-call entry and
//! exit, and (where the kernel has them) IPIs, recorded through perf_event_open
//! (PERF_TYPE_TRACEPOINT, one sample ring buffer per CPU, CLOCK_MONOTONIC timestamps) and
//! decoded with the field offsets tracefs gives for this kernel.

pub mod ring;
pub mod tracefs;

use crate::error::{Error, Result};
use tracefs::{read_int, Format};

/// The events recorded, and whether a breakdown is possible without them. An IPI that wakes a
/// task arrives as a reschedule interrupt (the wake-up was done by the sender) or, when the
/// target CPU was idle, as a call-function-single interrupt (the sender queued the wake-up on
/// the target's wake list, which the target runs); a target idling with its polling flag set
/// needs no IPI at all (`sched_wake_idle_without_ipi`).
pub const EVENTS: [(&str, bool); 10] = [
    ("sched:sched_waking", true),
    ("sched:sched_wakeup", true),
    ("sched:sched_switch", true),
    ("raw_syscalls:sys_enter", true),
    ("raw_syscalls:sys_exit", true),
    ("ipi:ipi_send_cpu", false),
    ("irq_vectors:reschedule_entry", false),
    ("irq_vectors:reschedule_exit", false),
    ("irq_vectors:call_function_single_entry", false),
    ("sched:sched_wake_idle_without_ipi", false),
];

/// The events `oscost noise` records on the CPUs it measures: every interrupt the kernel has
/// a tracepoint for (entry and exit, so a handler's time is its own), softirqs, NMIs and the
/// scheduler's switches (another task in the reader's place). Only the switch is required.
/// `irq_work_exit` is not among them: the kernel refuses it to sampling perf events (perf's
/// own wake-ups run as irq work), so an irq_work entry stands for the whole handler.
pub const NOISE_EVENTS: [(&str, bool); 23] = [
    ("sched:sched_switch", true),
    ("irq_vectors:local_timer_entry", false),
    ("irq_vectors:local_timer_exit", false),
    ("irq_vectors:reschedule_entry", false),
    ("irq_vectors:reschedule_exit", false),
    ("irq_vectors:call_function_entry", false),
    ("irq_vectors:call_function_exit", false),
    ("irq_vectors:call_function_single_entry", false),
    ("irq_vectors:call_function_single_exit", false),
    ("irq_vectors:irq_work_entry", false),
    ("irq_vectors:x86_platform_ipi_entry", false),
    ("irq_vectors:x86_platform_ipi_exit", false),
    ("irq_vectors:thermal_apic_entry", false),
    ("irq_vectors:thermal_apic_exit", false),
    ("irq_vectors:error_apic_entry", false),
    ("irq_vectors:error_apic_exit", false),
    ("irq_vectors:spurious_apic_entry", false),
    ("irq_vectors:spurious_apic_exit", false),
    ("irq:irq_handler_entry", false),
    ("irq:irq_handler_exit", false),
    ("irq:softirq_entry", false),
    ("irq:softirq_exit", false),
    ("nmi:nmi_handler", false),
];

/// An x86 system vector with entry and exit tracepoints (`irq_vectors:<name>_entry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Vector {
    LocalTimer,
    Reschedule,
    CallFunction,
    CallFunctionSingle,
    IrqWork,
    PlatformIpi,
    Thermal,
    ErrorApic,
    Spurious,
}

impl Vector {
    pub const ALL: [Vector; 9] = [
        Vector::LocalTimer,
        Vector::Reschedule,
        Vector::CallFunction,
        Vector::CallFunctionSingle,
        Vector::IrqWork,
        Vector::PlatformIpi,
        Vector::Thermal,
        Vector::ErrorApic,
        Vector::Spurious,
    ];

    /// The tracepoints' stem: `irq_vectors:<stem>_entry`.
    pub fn stem(self) -> &'static str {
        match self {
            Vector::LocalTimer => "local_timer",
            Vector::Reschedule => "reschedule",
            Vector::CallFunction => "call_function",
            Vector::CallFunctionSingle => "call_function_single",
            Vector::IrqWork => "irq_work",
            Vector::PlatformIpi => "x86_platform_ipi",
            Vector::Thermal => "thermal_apic",
            Vector::ErrorApic => "error_apic",
            Vector::Spurious => "spurious_apic",
        }
    }

    /// The vector of a tracepoint name (`irq_vectors:local_timer_exit`) and whether it is
    /// the entry.
    pub fn of_tracepoint(name: &str) -> Option<(Vector, bool)> {
        let short = name.strip_prefix("irq_vectors:")?;
        let (stem, entry) = match short.strip_suffix("_entry") {
            Some(s) => (s, true),
            None => (short.strip_suffix("_exit")?, false),
        };
        Vector::ALL
            .into_iter()
            .find(|v| v.stem() == stem)
            .map(|v| (v, entry))
    }
}

/// The groups of recorded events the calibration pass switches on and off one at a time
/// (probes::rpc::calibrate): each costs the traced task something per event, and events of
/// one group are assumed to cost alike. Its words name it in the calibration's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Group {
    /// The scheduler's tracepoints: wake-ups and switches.
    Sched,
    /// raw_syscalls enter and exit.
    Syscalls,
    /// IPIs sent and the interrupts they arrive by.
    Ipi,
    /// perf's own context-switch records (in and out), written into each CPU's ring.
    #[strum(serialize = "switch records")]
    Switches,
}

impl Group {
    pub const ALL: [Group; 4] = [Group::Sched, Group::Syscalls, Group::Ipi, Group::Switches];

    /// The group a tracepoint (`group:name`) belongs to.
    pub fn of_tracepoint(name: &str) -> Group {
        match name.split(':').next().unwrap_or("") {
            "raw_syscalls" => Group::Syscalls,
            "ipi" | "irq_vectors" | "irq" | "nmi" => Group::Ipi,
            _ => Group::Sched,
        }
    }

    /// The group of a decoded event.
    pub fn of(kind: &Kind) -> Group {
        match kind {
            Kind::Waking { .. }
            | Kind::Wakeup { .. }
            | Kind::Switch { .. }
            | Kind::WakeIdleNoIpi { .. }
            | Kind::TlbFlush { .. }
            | Kind::FpuSaved { .. } => Group::Sched,
            Kind::SysEnter { .. } | Kind::SysExit { .. } => Group::Syscalls,
            Kind::IpiSend { .. }
            | Kind::ReschedEntry
            | Kind::ReschedExit
            | Kind::CallFuncEntry
            | Kind::Vector { .. }
            | Kind::Irq { .. }
            | Kind::Softirq { .. }
            | Kind::Nmi { .. } => Group::Ipi,
            Kind::SwitchIn { .. } | Kind::SwitchOut { .. } => Group::Switches,
        }
    }

    /// Index in [`Group::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// perf record types this module reads.
pub const PERF_RECORD_LOST: u32 = 2;
pub const PERF_RECORD_SAMPLE: u32 = 9;
pub const PERF_RECORD_SWITCH_CPU_WIDE: u32 = 15;
/// `misc` flag of a switch record: the task is switched out (else in).
pub const PERF_RECORD_MISC_SWITCH_OUT: u16 = 1 << 13;

/// What happened, decoded from one tracepoint record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `pid` is being woken (by the recording task), to run on `target_cpu`.
    Waking {
        pid: i32,
        target_cpu: i32,
    },
    /// `pid` is on a run queue now.
    Wakeup {
        pid: i32,
        target_cpu: i32,
    },
    /// The CPU switched from `prev` to `next` (0 = the idle task).
    Switch {
        prev: i32,
        next: i32,
    },
    /// A system call entered: its number and its second argument (futex's op).
    SysEnter {
        id: i64,
        arg1: u64,
    },
    SysExit {
        id: i64,
    },
    /// An IPI sent to `cpu`.
    IpiSend {
        cpu: i32,
    },
    ReschedEntry,
    ReschedExit,
    /// The CPU entered the call-function-single interrupt (e.g. to run its wake list).
    CallFuncEntry,
    /// A wake-up of idle `cpu` needed no IPI: it was polling for work.
    WakeIdleNoIpi {
        cpu: i32,
    },
    /// The recording task was switched in, after `prev` (0 = the idle task): perf's own
    /// switch record, written in the incoming task's context once the switch is done. It
    /// stands in for a `sched_switch` that was not recorded: on some guests no tracepoint
    /// fires in a CPU's idle task, so a switch away from idle is seen only this way.
    SwitchIn {
        prev: i32,
    },
    /// The recording task was switched out for `next`: perf's switch record written before
    /// the switch. Not used to split an RPC; counted as a recorded event (its cost is on the
    /// path when the switch is).
    SwitchOut {
        next: i32,
    },
    /// A system vector's handler entered (or left): the local timer, an IPI, irq work.
    Vector {
        vector: Vector,
        entry: bool,
    },
    /// A device interrupt's handler entered (or left), by its number.
    Irq {
        irq: i32,
        entry: bool,
    },
    /// A softirq vector's handler entered (or left).
    Softirq {
        vec: u32,
        entry: bool,
    },
    /// An NMI handler ran for `delta_ns` (recorded when it returns).
    Nmi {
        delta_ns: i64,
    },
    /// A TLB flush (`tlb:tlb_flush`) and its reason (arch/x86 `enum tlb_flush_reason`; 0 is
    /// "flush on task switch"), of `pages` pages (all: u64::MAX).
    TlbFlush {
        reason: i64,
        pages: u64,
    },
    /// A task's register state saved as it leaves the CPU
    /// (`x86_fpu:x86_fpu_regs_deactivated`), with the components XSAVE found live.
    FpuSaved {
        xfeatures: u64,
    },
}

/// One decoded record: when (CLOCK_MONOTONIC ns), on which CPU, by which task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time: u64,
    pub cpu: u32,
    pub pid: i32,
    pub tid: i32,
    pub kind: Kind,
}

/// A record as read from a ring: its perf type, its header's misc flags and its body
/// (without the 8-byte header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    pub ty: u32,
    pub misc: u16,
    pub body: Vec<u8>,
}

/// Decodes sample bodies laid out for sample_type TID | TIME | CPU | RAW, using the formats
/// read from tracefs (the record's `common_type` says which event it is).
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    pub formats: Vec<Format>,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

impl Decoder {
    /// Read the formats of `events` (name, required) this kernel has; the required ones must
    /// be there.
    pub fn from_tracefs_for(fs: &tracefs::Tracefs, events: &[(&str, bool)]) -> Result<Decoder> {
        let mut formats = Vec::new();
        for &(name, required) in events {
            match fs.format(name)? {
                Some(f) => formats.push(f),
                None if required => {
                    return Err(Error::env(format!(
                        "this kernel has no tracepoint {name} (needs CONFIG_TRACEPOINTS)"
                    )))
                }
                None => {}
            }
        }
        Ok(Decoder { formats })
    }

    /// The names of optional events this kernel lacks.
    pub fn missing(&self) -> Vec<&'static str> {
        EVENTS
            .iter()
            .filter(|(n, _)| !self.formats.iter().any(|f| f.name == *n))
            .map(|(n, _)| *n)
            .collect()
    }

    /// Decode one sample body; None for records of other events or truncated ones.
    pub fn decode(&self, body: &[u8]) -> Option<Event> {
        let pid = u32_at(body, 0)? as i32;
        let tid = u32_at(body, 4)? as i32;
        let time = u64_at(body, 8)?;
        let cpu = u32_at(body, 16)?;
        let (f, raw) = self.raw(body)?;
        let get = |name: &str| f.field(name).and_then(|x| read_int(raw, x));
        let kind = match f.name.as_str() {
            "sched:sched_waking" => Kind::Waking {
                pid: get("pid")? as i32,
                target_cpu: get("target_cpu")? as i32,
            },
            "sched:sched_wakeup" => Kind::Wakeup {
                pid: get("pid")? as i32,
                target_cpu: get("target_cpu")? as i32,
            },
            "sched:sched_switch" => Kind::Switch {
                prev: get("prev_pid")? as i32,
                next: get("next_pid")? as i32,
            },
            "raw_syscalls:sys_enter" => Kind::SysEnter {
                id: get("id")?,
                arg1: second_arg(raw, f.field("args")?)?,
            },
            "raw_syscalls:sys_exit" => Kind::SysExit { id: get("id")? },
            "ipi:ipi_send_cpu" => Kind::IpiSend {
                cpu: get("cpu")? as i32,
            },
            "irq_vectors:reschedule_entry" => Kind::ReschedEntry,
            "irq_vectors:reschedule_exit" => Kind::ReschedExit,
            "irq_vectors:call_function_single_entry" => Kind::CallFuncEntry,
            "sched:sched_wake_idle_without_ipi" => Kind::WakeIdleNoIpi {
                cpu: get("cpu")? as i32,
            },
            "irq:irq_handler_entry" | "irq:irq_handler_exit" => Kind::Irq {
                irq: get("irq")? as i32,
                entry: f.name.ends_with("entry"),
            },
            "irq:softirq_entry" | "irq:softirq_exit" => Kind::Softirq {
                vec: get("vec")? as u32,
                entry: f.name.ends_with("entry"),
            },
            "nmi:nmi_handler" => Kind::Nmi {
                delta_ns: get("delta_ns")?,
            },
            "tlb:tlb_flush" => Kind::TlbFlush {
                reason: get("reason")?,
                pages: get("pages")? as u64,
            },
            "x86_fpu:x86_fpu_regs_deactivated" => Kind::FpuSaved {
                xfeatures: get("xfeatures")? as u64,
            },
            name => match Vector::of_tracepoint(name) {
                Some((vector, entry)) => Kind::Vector { vector, entry },
                None => return None,
            },
        };
        Some(Event {
            time,
            cpu,
            pid,
            tid,
            kind,
        })
    }

    /// The tracepoint (`group:name`) a sample body was written by; None for a truncated body
    /// or an event this decoder does not know.
    pub fn event_of(&self, body: &[u8]) -> Option<&str> {
        self.raw(body).map(|(f, _)| f.name.as_str())
    }

    /// A sample body's raw tracepoint record (after pid, tid, time, cpu, res and its size)
    /// and the format of the event that wrote it (its `common_type`).
    fn raw<'b>(&self, body: &'b [u8]) -> Option<(&Format, &'b [u8])> {
        let size = u32_at(body, 24)? as usize;
        let raw = body.get(28..28 + size)?;
        let ty = u16::from_le_bytes(raw.get(0..2)?.try_into().ok()?) as u64;
        Some((self.formats.iter().find(|f| f.id == ty)?, raw))
    }

    /// The command name of the task a `sched_switch` sample switches to (its `next_comm`);
    /// None for other records.
    pub fn next_comm(&self, body: &[u8]) -> Option<String> {
        let (f, raw) = self.raw(body)?;
        if f.name != "sched:sched_switch" {
            return None;
        }
        let field = f.field("next_comm")?;
        let bytes = raw.get(field.offset..field.offset + field.size)?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
    }

    /// Decode records from all rings into one time-ordered list; also returns how many
    /// records the kernel reported lost (a full ring).
    pub fn decode_all(&self, records: &[RawRecord]) -> (Vec<Event>, u64) {
        let mut lost = 0;
        let mut out = Vec::with_capacity(records.len());
        for r in records {
            match r.ty {
                PERF_RECORD_SAMPLE => out.extend(self.decode(&r.body)),
                PERF_RECORD_SWITCH_CPU_WIDE => out.extend(decode_switch(
                    &r.body,
                    r.misc & PERF_RECORD_MISC_SWITCH_OUT != 0,
                )),
                PERF_RECORD_LOST => lost += u64_at(&r.body, 8).unwrap_or(0),
                _ => {}
            }
        }
        out.sort_by_key(|e| (e.time, e.cpu));
        (out, lost)
    }
}

/// A CPU-wide switch record: `u32 next_prev_pid, next_prev_tid` (the task switched from,
/// for a switch in; to, for a switch out), then the sample id (sample_id_all with sample_type
/// TID | TIME | CPU): `u32 pid, tid; u64 time; u32 cpu, res`.
fn decode_switch(b: &[u8], out: bool) -> Option<Event> {
    let other = u32_at(b, 4)? as i32;
    Some(Event {
        pid: u32_at(b, 8)? as i32,
        tid: u32_at(b, 12)? as i32,
        time: u64_at(b, 16)?,
        cpu: u32_at(b, 24)?,
        kind: if out {
            Kind::SwitchOut { next: other }
        } else {
            Kind::SwitchIn { prev: other }
        },
    })
}

/// The second element of sys_enter's `unsigned long args[6]` array.
fn second_arg(raw: &[u8], args: &tracefs::Field) -> Option<u64> {
    let elem = args.size / 6;
    let f = tracefs::Field {
        name: "args[1]".into(),
        offset: args.offset + elem,
        size: elem,
        signed: false,
    };
    read_int(raw, &f).map(|v| v as u64)
}

/// The committed fixture format: one record per line, `<type>[/<misc>] <hex body>`.
pub fn parse_fixture(text: &str) -> Result<Vec<RawRecord>> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (head, hex) = l
                .split_once(' ')
                .ok_or_else(|| Error::usage(format!("bad trace fixture line '{l}'")))?;
            let (ty, misc) = head.split_once('/').unwrap_or((head, "0"));
            let bad = || Error::usage(format!("bad record type in '{l}'"));
            let ty = ty.parse().map_err(|_| bad())?;
            let misc = misc.parse().map_err(|_| bad())?;
            let body = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
                .collect::<std::result::Result<Vec<u8>, _>>()
                .map_err(|_| Error::usage(format!("bad hex in '{l}'")))?;
            Ok(RawRecord { ty, misc, body })
        })
        .collect()
}

/// The inverse of [`parse_fixture`].
pub fn write_fixture(records: &[RawRecord]) -> String {
    let mut s = String::new();
    for r in records {
        s.push_str(&r.ty.to_string());
        if r.misc != 0 {
            s.push_str(&format!("/{}", r.misc));
        }
        s.push(' ');
        for b in &r.body {
            s.push_str(&format!("{b:02x}"));
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::units::name::tests::assert_words;

    #[test]
    fn each_group_has_its_own_words() {
        let words = ["sched", "syscalls", "ipi", "switch records"];
        assert_words(&Group::ALL.into_iter().zip(words).collect::<Vec<_>>());
    }

    /// The formats recorded from the kernel the fixtures come from.
    pub(crate) fn fixture_decoder() -> Decoder {
        fixture_decoder_for(&EVENTS)
    }

    /// [`fixture_decoder`] for another list of events.
    pub(crate) fn fixture_decoder_for(events: &[(&str, bool)]) -> Decoder {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace");
        let formats = events
            .iter()
            .map(|(name, _)| {
                let short = name.split(':').nth(1).unwrap();
                let id: u64 = std::fs::read_to_string(dir.join(format!("{short}.id")))
                    .unwrap()
                    .trim()
                    .parse()
                    .unwrap();
                let text = std::fs::read_to_string(dir.join(format!("{short}.format"))).unwrap();
                tracefs::parse_format(name, id, &text).unwrap()
            })
            .collect();
        Decoder { formats }
    }

    /// The client's time around each RPC of a recording: its "# window <t0> <t1>" lines
    /// (CLOCK_MONOTONIC ns, the trace's clock).
    pub(crate) fn fixture_windows(text: &str) -> Vec<(u64, u64)> {
        text.lines()
            .filter_map(|l| l.strip_prefix("# window "))
            .map(|w| {
                let (a, b) = w.split_once(' ').unwrap();
                (a.parse().unwrap(), b.parse().unwrap())
            })
            .collect()
    }

    pub(crate) fn fixture_records() -> Vec<RawRecord> {
        parse_fixture(include_str!(
            "../../../tests/fixtures/trace/pipe-remote.records"
        ))
        .unwrap()
    }

    #[test]
    fn fixture_records_decode_into_ordered_events_of_every_kind() {
        let d = fixture_decoder();
        let (events, lost) = d.decode_all(&fixture_records());
        assert_eq!(lost, 0);
        assert!(events.len() > 50, "{}", events.len());
        assert!(events.windows(2).all(|w| w[0].time <= w[1].time));
        let has = |f: &dyn Fn(&Kind) -> bool| events.iter().any(|e| f(&e.kind));
        assert!(has(&|k| matches!(k, Kind::Waking { .. })));
        assert!(has(&|k| matches!(k, Kind::Switch { .. })));
        assert!(has(
            &|k| matches!(k, Kind::SysEnter { id, .. } if *id == libc::SYS_write)
        ));
        assert!(has(
            &|k| matches!(k, Kind::SysExit { id } if *id == libc::SYS_read)
        ));
        // A switch names real tasks: the idle task is 0, the others positive.
        for e in &events {
            if let Kind::Switch { prev, next } = e.kind {
                assert!(prev >= 0 && next >= 0 && prev != next);
            }
        }
    }

    #[test]
    fn truncated_and_foreign_records_are_skipped() {
        let d = fixture_decoder();
        let mut recs = fixture_records();
        let n = d.decode_all(&recs).0.len();
        recs[0].body.truncate(20);
        recs.push(RawRecord {
            ty: PERF_RECORD_LOST,
            misc: 0,
            body: [7u64.to_le_bytes(), 5u64.to_le_bytes()].concat(),
        });
        let (events, lost) = d.decode_all(&recs);
        assert_eq!(events.len(), n - 1);
        assert_eq!(lost, 5);
        assert!(parse_fixture("9 zz").is_err());
        assert!(parse_fixture("9/x 00").is_err());
        recs[1].misc = PERF_RECORD_MISC_SWITCH_OUT | 1;
        assert_eq!(parse_fixture(&write_fixture(&recs)).unwrap(), recs);
    }
}
