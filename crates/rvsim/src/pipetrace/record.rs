//! Recording a window of a run, one step at a time on the per-instruction engine: before and
//! after each step the machine's counters are read, and their differences say what the
//! pipeline model charged to that instruction (a load-use stall, cache-miss stalls, a flush and
//! its cause). Nothing in the machine's run loop knows about this: a run without a window pays
//! nothing for it.

use std::collections::VecDeque;

use crate::decode::{decode, instruction_len, Op};
use crate::machine::{Machine, Progress};
use crate::pipeline::PipelineStats;
use crate::stop::Stop;

/// Steps recorded before the window so the instructions already in the pipeline when its
/// first one is fetched are known (at most four: IF holds the first one).
pub const PRE_CONTEXT: usize = 4;

/// Where a window opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// At this instruction step (0 = the first; an interrupt taken is a step, as mtime counts).
    Step(u64),
    /// At the first exception.
    Trap,
    /// At the first interrupt taken.
    Interrupt,
    /// At the first conditional branch that flushed (taken, or mispredicted by a predictor).
    Branch,
    /// The first time the program counter reaches this address (a symbol's value).
    Address { name: String, addr: u32 },
}

impl Start {
    fn matches(&self, r: &StepRecord) -> bool {
        match self {
            Start::Step(n) => r.step == *n,
            Start::Trap => matches!(r.kind, StepKind::Exception { .. }),
            Start::Interrupt => matches!(r.kind, StepKind::Interrupt { .. }),
            Start::Branch => r.flush.is_some_and(|f| f.cause == FlushCause::Branch),
            Start::Address { addr, .. } => r.pc == *addr,
        }
    }

    /// How the start is named in messages (`the first interrupt`, `main`).
    pub fn describe(&self) -> String {
        match self {
            Start::Step(n) => format!("instruction {n}"),
            Start::Trap => "the first exception".into(),
            Start::Interrupt => "the first interrupt".into(),
            Start::Branch => "the first flushed branch".into(),
            Start::Address { name, addr } => format!("{name} (0x{addr:08x})"),
        }
    }
}

/// Which instructions to look at: `count` steps, opening `before` steps ahead of `start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: Start,
    pub before: u64,
    pub count: u64,
}

/// What a step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    Retired,
    /// The instruction raised an exception (it does not retire).
    Exception {
        cause: u32,
        tval: u32,
    },
    /// An interrupt was taken on the instruction about to enter EX (it does not execute).
    Interrupt {
        cause: u32,
    },
    /// The run ended on this step without the instruction retiring or trapping (an `ecall`
    /// of the program ABI that is neither write nor exit).
    Ended,
}

/// Why younger instructions were flushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushCause {
    Branch,
    Jump,
    Mret,
    /// An `ecall` served by the host ABI (write, exit): it retires and flushes as a trap.
    HostEcall,
    Exception,
    Interrupt,
}

/// A flush the model charged to a step: its cause and its cycles (one per flushed slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flush {
    pub cause: FlushCause,
    pub cycles: u64,
}

/// One instruction step as the pipeline model accounted it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRecord {
    pub step: u64,
    pub pc: u32,
    /// The instruction's bits (`None`: its fetch faulted).
    pub bits: Option<u32>,
    pub kind: StepKind,
    /// The program counter after the step: a flush's redirect target.
    pub next_pc: u32,
    /// Whether this step ended the run.
    pub last: bool,
    pub load_use: u64,
    pub imiss_stall: u64,
    pub dmiss_stall: u64,
    pub flush: Option<Flush>,
    /// The younger instructions fetched sequentially behind it and flushed: address, bits.
    pub wrong_path: Vec<(u32, Option<u32>)>,
    /// The model's elapsed cycles before and after the step.
    pub elapsed_before: u64,
    pub elapsed_after: u64,
}

impl StepRecord {
    fn new(
        m: &Machine,
        (before, after): (Progress, Progress),
        pc: u32,
        bits: Option<u32>,
        stop: Option<Stop>,
    ) -> StepRecord {
        let pb = before.pipeline.unwrap_or_default();
        let pa = after.pipeline.unwrap_or_default();
        let d = |f: fn(&PipelineStats) -> u64| f(&pa) - f(&pb);
        let trap = || match stop {
            Some(Stop::Trap { cause, tval, .. }) => (cause, tval),
            Some(Stop::Ebreak { pc }) => (crate::trap::BREAKPOINT, pc),
            _ => (m.csr.mcause, m.csr.mtval),
        };
        let kind = if after.interrupts > before.interrupts {
            StepKind::Interrupt { cause: trap().0 }
        } else if after.exceptions > before.exceptions {
            let (cause, tval) = trap();
            StepKind::Exception { cause, tval }
        } else if after.instret > before.instret {
            StepKind::Retired
        } else {
            StepKind::Ended
        };
        let op = bits.map(|b| decode(b, true).op);
        let flushed = d(|p| p.flush_cycles());
        let flush = (flushed > 0).then(|| Flush {
            cycles: flushed,
            cause: match kind {
                StepKind::Interrupt { .. } => FlushCause::Interrupt,
                StepKind::Exception { .. } => FlushCause::Exception,
                _ if d(|p| p.trap_flushes) > 0 => FlushCause::HostEcall,
                _ if d(|p| p.branch_flushes) > 0 => FlushCause::Branch,
                _ if op == Some(Op::Mret) => FlushCause::Mret,
                _ => FlushCause::Jump,
            },
        });
        // The flushed younger instructions: those fetched behind this one, sequentially or
        // from where a predictor sent fetch (the trapping or interrupted instruction is
        // flushed itself and counts as one).
        let mut wrong_path = Vec::new();
        if let Some(f) = flush {
            let itself = matches!(f.cause, FlushCause::Exception | FlushCause::Interrupt) as u64;
            let len = bits.map_or(4, |b| instruction_len(b & 0xffff) as u32);
            let mut at = match f.cause {
                FlushCause::Branch | FlushCause::Jump | FlushCause::Mret => {
                    m.wrong_path_start(pc, len)
                }
                _ => pc.wrapping_add(len),
            };
            for _ in itself..f.cycles {
                let b = m.instruction_bits(at);
                wrong_path.push((at, b));
                at = at.wrapping_add(b.map_or(4, |b| instruction_len(b & 0xffff) as u32));
            }
        }
        StepRecord {
            step: before.steps,
            pc,
            bits,
            kind,
            next_pc: m.pc,
            last: stop.is_some(),
            load_use: d(|p| p.load_use_stalls),
            imiss_stall: d(|p| p.icache_miss_stalls),
            dmiss_stall: d(|p| p.dcache_miss_stalls),
            flush,
            wrong_path,
            elapsed_before: pb.elapsed(),
            elapsed_after: pa.elapsed(),
        }
    }
}

/// The steps of a window (and up to [`PRE_CONTEXT`] before it), with the model's counters
/// read just before the window's first step and just after its last.
#[derive(Clone, Debug)]
pub struct Recording {
    pub window: Window,
    pub records: Vec<StepRecord>,
    /// Index in `records` of the window's first step.
    pub first: usize,
    pub counters_before: Progress,
    pub counters_after: Progress,
}

impl Recording {
    /// The window's own steps.
    pub fn steps(&self) -> &[StepRecord] {
        &self.records[self.first..]
    }
}

/// Runs `m` to its end, recording the window on the way: one step at a time until the window
/// has been recorded, then the fast run loop. Returns why the run ended and the recording
/// (`None` if the window's start never came). The machine must model the pipeline.
pub fn record(m: &mut Machine, window: &Window) -> (Stop, Option<Recording>) {
    let keep = (window.before as usize).saturating_add(PRE_CONTEXT);
    let mut ring: VecDeque<(Progress, StepRecord)> = VecDeque::new();
    let mut rec: Option<Recording> = None;
    loop {
        let before = m.progress();
        let pc = m.pc;
        let bits = m.instruction_bits(pc);
        let stop = m.step();
        let after = m.progress();
        // A return to address 0 ends the run without a step.
        if after.steps != before.steps {
            let r = StepRecord::new(m, (before, after), pc, bits, stop);
            match &mut rec {
                Some(open) => {
                    open.records.push(r);
                    open.counters_after = after;
                }
                None => {
                    let hit = window.start.matches(&r);
                    ring.push_back((before, r));
                    if hit {
                        rec = Some(open_window(&mut ring, window, after));
                    } else if ring.len() > keep {
                        ring.pop_front();
                    }
                }
            }
        }
        if let Some(stop) = stop {
            return (stop, rec);
        }
        if let Some(open) = &rec {
            if open.steps().len() as u64 >= window.count {
                return (m.run(), rec);
            }
        }
    }
}

/// The window opens `before` steps ahead of the step just recorded (as far back as kept).
fn open_window(
    ring: &mut VecDeque<(Progress, StepRecord)>,
    window: &Window,
    after: Progress,
) -> Recording {
    let hit = ring.len() - 1;
    let first = hit.saturating_sub(window.before as usize);
    let pre = first.saturating_sub(PRE_CONTEXT);
    let counters_before = ring[first].0;
    // A window shorter than its lead-in ends before the event.
    let end = (first as u64)
        .saturating_add(window.count)
        .min(ring.len() as u64) as usize;
    let counters_after = ring.get(end).map_or(after, |(p, _)| *p);
    let records: Vec<StepRecord> = ring.drain(pre..end).map(|(_, r)| r).collect();
    Recording {
        window: window.clone(),
        records,
        first: first - pre,
        counters_before,
        counters_after,
    }
}
