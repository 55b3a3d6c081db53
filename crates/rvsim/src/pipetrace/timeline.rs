//! From recorded steps to the cycle-by-cycle picture: which stage each instruction is in at
//! each cycle, and the hazards that shaped it.
//!
//! The pipeline model is analytic (it adds cycles per event); this module replays its events
//! through a five-slot in-order pipeline so that every cycle it charged shows up in a cell:
//!
//! * a cache miss holds the missing stage (IF for the I-cache, MEM for the D-cache) for the
//!   miss penalty, and everything behind it;
//! * a load-use stall holds the consumer in ID (and the instruction behind it in IF) for one
//!   cycle while a bubble goes down the pipeline;
//! * a taken branch, a jump, `mret` or an `ecall` served by the host squashes the two younger
//!   instructions (in ID and IF) when it leaves EX; an exception squashes itself as well; an
//!   interrupt is taken on the instruction about to enter EX, which becomes a bubble, and
//!   squashes it with the two behind it. Fetch resumes at the redirect target the next cycle.
//!
//! Holds are applied one at a time, deepest first, so they add up exactly as the model adds
//! them; a test checks that every retired instruction's write-back cycle equals the model's
//! count (`elapsed after it - its own flush + 4`) over whole runs.

use super::record::{FlushCause, Recording, StepKind, StepRecord, Window};
use crate::decode::instruction_len;
use crate::disasm::disassemble;
use crate::pipeline::PipelineStats;

/// The five stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    If,
    Id,
    Ex,
    Mem,
    Wb,
}

impl Stage {
    pub const ALL: [Stage; 5] = [Stage::If, Stage::Id, Stage::Ex, Stage::Mem, Stage::Wb];

    pub fn name(self) -> &'static str {
        match self {
            Stage::If => "IF",
            Stage::Id => "ID",
            Stage::Ex => "EX",
            Stage::Mem => "MEM",
            Stage::Wb => "WB",
        }
    }
}

/// What one row shows in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    Stage(Stage),
    /// The instruction's slot holds no work: an interrupted instruction as it reaches EX.
    Bubble,
    /// The cycle its flushed slot is gone (fetch is redirected in this cycle).
    Squashed,
}

impl Cell {
    /// The cell as the terminal view prints it.
    pub fn label(self) -> &'static str {
        match self {
            Cell::Stage(s) => s.name(),
            Cell::Bubble => "--",
            Cell::Squashed => "x",
        }
    }
}

/// What became of an instruction that entered the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Retired,
    /// Squashed by the hazard with this index in [`Diagram::hazards`].
    Flushed(usize),
    /// The run ended on it without it retiring (an unknown ABI `ecall`).
    Ended,
}

/// One instruction that entered the pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The instruction step it belongs to (a flushed younger instruction belongs to the step
    /// that flushed it).
    pub step: u64,
    pub pc: u32,
    pub bits: Option<u32>,
    /// Its disassembly, or why there is none.
    pub text: String,
    pub fate: Fate,
    /// The cycle of `cells[0]`.
    pub first_cycle: u64,
    pub cells: Vec<Cell>,
}

impl Row {
    pub fn last_cycle(&self) -> u64 {
        self.first_cycle + self.cells.len() as u64 - 1
    }
    pub fn cell_at(&self, cycle: u64) -> Option<Cell> {
        let i = cycle.checked_sub(self.first_cycle)?;
        self.cells.get(i as usize).copied()
    }
    /// Whether the cell at index `i` repeats the stage before it (a stall).
    pub fn stalled_at(&self, i: usize) -> bool {
        i > 0 && matches!(self.cells[i], Cell::Stage(_)) && self.cells[i] == self.cells[i - 1]
    }
}

/// Where fetch went after a flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// The branch or jump target.
    Target,
    /// The trap vector.
    Mtvec,
    /// The return address of `mret`.
    Mepc,
    /// The instruction after a host-served `ecall`.
    Next,
    /// Nowhere: the run ended.
    RunEnded,
}

impl Via {
    pub fn name(self) -> &'static str {
        match self {
            Via::Target => "target",
            Via::Mtvec => "mtvec",
            Via::Mepc => "mepc",
            Via::Next => "next instruction",
            Via::RunEnded => "run ended",
        }
    }
}

/// The kinds of hazard, with what each one needs to be told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HazardKind {
    /// The instruction read a register the load just before it writes.
    LoadUse {
        load_row: Option<usize>,
    },
    ICacheMiss,
    DCacheMiss,
    /// A mispredicted branch: taken (static not-taken's only kind), or predicted taken and
    /// not taken.
    Branch {
        taken: bool,
    },
    Jump,
    Mret,
    HostEcall,
    Exception {
        cause: u32,
        tval: u32,
    },
    Interrupt {
        cause: u32,
    },
}

impl HazardKind {
    pub fn is_flush(self) -> bool {
        !matches!(
            self,
            HazardKind::LoadUse { .. } | HazardKind::ICacheMiss | HazardKind::DCacheMiss
        )
    }
}

/// One hazard in the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hazard {
    pub kind: HazardKind,
    /// The row of the instruction it belongs to (the stalled or flushing one).
    pub row: usize,
    /// The cycle it happened: a stall's first held cycle, a flush's resolution in EX.
    pub cycle: u64,
    /// The cycles it cost in the model.
    pub cycles: u64,
    /// The rows it squashed (flushes only).
    pub flushed: Vec<usize>,
    /// Where fetch was redirected (flushes only).
    pub redirect: Option<(u32, Via)>,
}

/// Stall and flush cycles by cause, and instructions retired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub retired: u64,
    pub load_use: u64,
    pub icache_miss: u64,
    pub dcache_miss: u64,
    pub branch: u64,
    /// jal, jalr, mret.
    pub jump: u64,
    /// Exceptions and host-served ecalls.
    pub trap: u64,
    pub interrupt: u64,
}

impl Totals {
    pub fn stalls(&self) -> u64 {
        self.load_use + self.icache_miss + self.dcache_miss
    }
    pub fn flushes(&self) -> u64 {
        self.branch + self.jump + self.trap + self.interrupt
    }

    /// What the model's counters say between two readings.
    pub fn between(before: &PipelineStats, after: &PipelineStats) -> Totals {
        Totals {
            retired: after.retired - before.retired,
            load_use: after.load_use_stalls - before.load_use_stalls,
            icache_miss: after.icache_miss_stalls - before.icache_miss_stalls,
            dcache_miss: after.dcache_miss_stalls - before.dcache_miss_stalls,
            branch: after.branch_flushes - before.branch_flushes,
            jump: after.jump_flushes - before.jump_flushes,
            trap: after.trap_flushes - before.trap_flushes,
            interrupt: after.interrupt_flushes - before.interrupt_flushes,
        }
    }
}

/// The window as a diagram.
#[derive(Clone, Debug)]
pub struct Diagram {
    pub window: Window,
    /// The first step of the window and how many steps were recorded (fewer than asked when
    /// the run ended first).
    pub first_step: u64,
    pub steps: u64,
    /// Whether the run ended inside the window.
    pub run_ended: bool,
    pub rows: Vec<Row>,
    pub hazards: Vec<Hazard>,
    /// What the rows and hazards add up to.
    pub shown: Totals,
    /// What the model's counters say over the same steps.
    pub counted: Totals,
}

impl Diagram {
    pub fn first_cycle(&self) -> u64 {
        self.rows.iter().map(|r| r.first_cycle).min().unwrap_or(0)
    }
    pub fn last_cycle(&self) -> u64 {
        self.rows.iter().map(|r| r.last_cycle()).max().unwrap_or(0)
    }
    /// Whether the diagram's totals equal the model's counters over the window.
    pub fn agrees(&self) -> bool {
        self.shown == self.counted
    }
}

/// How one row moves through the replayed pipeline.
#[derive(Clone, Copy, Default)]
struct Plan {
    record: usize,
    /// Cycles still to hold in IF, ID (load-use), EX and MEM.
    holds: [u64; 4],
    /// When it leaves EX: squash the two younger instructions, and itself.
    squash_younger: bool,
    squash_self: bool,
    /// It reaches EX as a bubble (an interrupt was taken on it).
    bubble_in_ex: bool,
    /// Held cycles spent in each stage, the first cycle one was, and the cycle it left EX.
    spent: [u64; 4],
    held_at: [Option<i64>; 4],
    resolved_at: Option<i64>,
}

const IF: usize = 0;
const ID: usize = 1;
const EX: usize = 2;
const MEM: usize = 3;
const WB: usize = 4;

/// Builds the diagram of a recording.
pub fn build(rec: &Recording) -> Diagram {
    let (mut rows, mut plans) = (Vec::new(), Vec::new());
    let mut window_row = 0;
    for (i, r) in rec.records.iter().enumerate() {
        if i == rec.first {
            window_row = rows.len();
        }
        add_rows(i, r, &mut rows, &mut plans);
    }
    if rec.first >= rec.records.len() {
        window_row = rows.len();
    }
    let cycles = replay(&mut plans);
    let offset = anchor(rec, &rows, &plans, &cycles);
    for (row, cells) in rows.iter_mut().zip(cycles) {
        row.first_cycle = (cells.0 + offset) as u64;
        row.cells = cells.1;
    }
    let hazards = hazards(rec, &mut rows, &plans, window_row, offset);
    let rows: Vec<Row> = rows.split_off(window_row);
    let shown = totals_shown(&rows, &hazards, &plans[window_row..]);
    let p = |c: &crate::machine::Progress| c.pipeline.unwrap_or_default();
    let counted = Totals::between(&p(&rec.counters_before), &p(&rec.counters_after));
    let steps = rec.steps();
    Diagram {
        window: rec.window.clone(),
        first_step: steps.first().map_or(0, |s| s.step),
        steps: steps.len() as u64,
        run_ended: steps.last().is_some_and(|s| s.last),
        rows,
        hazards,
        shown,
        counted,
    }
}

/// The disassembly of an instruction, or why there is none.
pub fn describe(pc: u32, bits: Option<u32>) -> String {
    match bits {
        Some(b) => disassemble(b, pc),
        None => "(no instruction: outside memory)".into(),
    }
}

/// The rows one step puts into the pipeline: its own instruction, then the younger ones it
/// flushed.
fn add_rows(i: usize, r: &StepRecord, rows: &mut Vec<Row>, plans: &mut Vec<Plan>) {
    let row = |pc: u32, bits: Option<u32>, fate: Fate| Row {
        step: r.step,
        pc,
        bits,
        text: describe(pc, bits),
        fate,
        first_cycle: 0,
        cells: Vec::new(),
    };
    let (fate, squash_self) = match r.kind {
        StepKind::Retired => (Fate::Retired, false),
        StepKind::Ended => (Fate::Ended, false),
        // The hazard index is filled in once hazards are numbered.
        StepKind::Exception { .. } | StepKind::Interrupt { .. } => (Fate::Flushed(0), true),
    };
    rows.push(row(r.pc, r.bits, fate));
    let (ex_hold, mem_hold) = if squash_self {
        (r.dmiss_stall, 0)
    } else {
        (0, r.dmiss_stall)
    };
    plans.push(Plan {
        record: i,
        holds: [r.imiss_stall, r.load_use, ex_hold, mem_hold],
        squash_younger: r.flush.is_some(),
        squash_self,
        bubble_in_ex: matches!(r.kind, StepKind::Interrupt { .. }),
        ..Plan::default()
    });
    for &(pc, bits) in &r.wrong_path {
        rows.push(row(pc, bits, Fate::Flushed(0)));
        plans.push(Plan {
            record: i,
            ..Plan::default()
        });
    }
}

/// Replays the plans through five slots, one cycle at a time. Returns, per row, its first
/// cycle (relative to the first fetch at 0) and its cells.
fn replay(plans: &mut [Plan]) -> Vec<(i64, Vec<Cell>)> {
    let mut out: Vec<(i64, Vec<Cell>)> = vec![(0, Vec::new()); plans.len()];
    let mut slots: [Option<usize>; 5] = [None; 5];
    let mut next = 0;
    let mut cycle: i64 = 0;
    loop {
        if slots[IF].is_none() && next < plans.len() {
            slots[IF] = Some(next);
            out[next].0 = cycle;
            next += 1;
        }
        if slots.iter().all(Option::is_none) {
            return out;
        }
        for (stage, slot) in slots.iter().enumerate() {
            if let Some(r) = *slot {
                let cell = if stage == EX && plans[r].bubble_in_ex {
                    Cell::Bubble
                } else {
                    Cell::Stage(Stage::ALL[stage])
                };
                out[r].1.push(cell);
            }
        }
        // The deepest stage still holding keeps itself and everything behind it in place;
        // the stages ahead of it drain, leaving a bubble.
        let held = [MEM, EX, ID, IF]
            .into_iter()
            .find(|&s| slots[s].is_some_and(|r| plans[r].holds[s] > 0));
        if let Some(s) = held {
            let r = slots[s].unwrap();
            plans[r].holds[s] -= 1;
            plans[r].spent[s] += 1;
            // The held cycle is the next one (the stage repeats there).
            plans[r].held_at[s].get_or_insert(cycle + 1);
            for k in (s + 1..=WB).rev() {
                slots[k] = if k == s + 1 { None } else { slots[k - 1] };
            }
        } else {
            let ex = slots[EX].map(|r| plans[r]);
            let younger = ex.is_some_and(|p| p.squash_younger);
            let itself = ex.is_some_and(|p| p.squash_self);
            if let Some(r) = slots[EX] {
                if younger {
                    plans[r].resolved_at = Some(cycle);
                }
            }
            let mut squashed = Vec::new();
            if itself {
                squashed.extend(slots[EX]);
            }
            if younger {
                squashed.extend(slots[ID]);
                squashed.extend(slots[IF]);
            }
            for r in squashed {
                out[r].1.push(Cell::Squashed);
            }
            slots = [
                None,
                if younger { None } else { slots[IF] },
                if younger { None } else { slots[ID] },
                if itself { None } else { slots[EX] },
                slots[MEM],
            ];
        }
        cycle += 1;
    }
}

/// The offset from replayed cycles to the run's cycles (1 = the first fetch of the run), from
/// the first retired instruction: its write-back is at `elapsed after it - its own flush + 4`.
fn anchor(rec: &Recording, rows: &[Row], plans: &[Plan], cycles: &[(i64, Vec<Cell>)]) -> i64 {
    for (i, row) in rows.iter().enumerate() {
        if row.fate != Fate::Retired {
            continue;
        }
        let r = &rec.records[plans[i].record];
        let wb = cycles[i]
            .1
            .iter()
            .position(|c| *c == Cell::Stage(Stage::Wb));
        if let Some(wb) = wb {
            let own_flush = r.flush.map_or(0, |f| f.cycles);
            let at = (r.elapsed_after - own_flush + 4) as i64;
            return at - (cycles[i].0 + wb as i64);
        }
    }
    rec.records
        .first()
        .map_or(1, |r| r.elapsed_before as i64 + 1)
}

/// The hazards of the window's steps, and the fate of the rows they flushed.
fn hazards(
    rec: &Recording,
    rows: &mut [Row],
    plans: &[Plan],
    window_row: usize,
    offset: i64,
) -> Vec<Hazard> {
    let mut out = Vec::new();
    let at = |c: Option<i64>| c.map_or(0, |c| (c + offset) as u64);
    let local = |i: usize| i - window_row;
    for i in window_row..rows.len() {
        let p = plans[i];
        let r = &rec.records[p.record];
        // Only the step's own row carries its hazards (its wrong-path rows follow it).
        if i > 0 && plans[i - 1].record == p.record {
            continue;
        }
        if r.imiss_stall > 0 {
            out.push(stall(
                HazardKind::ICacheMiss,
                local(i),
                at(p.held_at[IF]),
                r.imiss_stall,
            ));
        }
        if r.load_use > 0 {
            // The load is the instruction of the step before (the first row of its step).
            // Rows are in record order: look back only over the step before.
            let mut load_row = None;
            for k in (window_row..i).rev() {
                match plans[k].record + 1 {
                    n if n == p.record => load_row = Some(local(k)),
                    n if n < p.record => break,
                    _ => {}
                }
            }
            let kind = HazardKind::LoadUse { load_row };
            out.push(stall(kind, local(i), at(p.held_at[ID]), r.load_use));
        }
        if r.dmiss_stall > 0 {
            let held = p.held_at[MEM].or(p.held_at[EX]);
            out.push(stall(
                HazardKind::DCacheMiss,
                local(i),
                at(held),
                r.dmiss_stall,
            ));
        }
        if let Some(f) = r.flush {
            let kind = match (f.cause, r.kind) {
                (_, StepKind::Exception { cause, tval }) => HazardKind::Exception { cause, tval },
                (_, StepKind::Interrupt { cause }) => HazardKind::Interrupt { cause },
                (FlushCause::Branch, _) => HazardKind::Branch {
                    taken: r.next_pc
                        != r.pc
                            .wrapping_add(r.bits.map_or(4, |b| instruction_len(b & 0xffff) as u32)),
                },
                (FlushCause::Mret, _) => HazardKind::Mret,
                (FlushCause::HostEcall, _) => HazardKind::HostEcall,
                _ => HazardKind::Jump,
            };
            let via = match kind {
                _ if r.last => Via::RunEnded,
                HazardKind::Branch { .. } | HazardKind::Jump => Via::Target,
                HazardKind::Mret => Via::Mepc,
                HazardKind::HostEcall => Via::Next,
                _ => Via::Mtvec,
            };
            let index = out.len();
            let itself = matches!(
                kind,
                HazardKind::Exception { .. } | HazardKind::Interrupt { .. }
            );
            let mut flushed = Vec::new();
            if itself {
                flushed.push(local(i));
            }
            flushed.extend((i + 1..i + 1 + r.wrong_path.len()).map(local));
            for &k in &flushed {
                rows[k + window_row].fate = Fate::Flushed(index);
            }
            out.push(Hazard {
                kind,
                row: local(i),
                cycle: at(p.resolved_at),
                cycles: f.cycles,
                flushed,
                redirect: Some((r.next_pc, via)),
            });
        }
    }
    out
}

fn stall(kind: HazardKind, row: usize, cycle: u64, cycles: u64) -> Hazard {
    Hazard {
        kind,
        row,
        cycle,
        cycles,
        flushed: Vec::new(),
        redirect: None,
    }
}

/// What the diagram itself shows: rows that reached write-back, the held cycles the replay
/// spent for each kind of stall, and the rows each flush squashed, by its cause.
fn totals_shown(rows: &[Row], hazards: &[Hazard], plans: &[Plan]) -> Totals {
    let wb = Cell::Stage(Stage::Wb);
    let mut t = Totals {
        retired: rows
            .iter()
            .filter(|r| r.fate == Fate::Retired && r.cells.contains(&wb))
            .count() as u64,
        ..Totals::default()
    };
    for p in plans {
        t.icache_miss += p.spent[IF];
        t.load_use += p.spent[ID];
        t.dcache_miss += p.spent[EX] + p.spent[MEM];
    }
    for h in hazards {
        let n = h
            .flushed
            .iter()
            .filter(|&&k| rows[k].cells.contains(&Cell::Squashed))
            .count() as u64;
        match h.kind {
            HazardKind::Branch { .. } => t.branch += n,
            HazardKind::Jump | HazardKind::Mret => t.jump += n,
            HazardKind::Exception { .. } | HazardKind::HostEcall => t.trap += n,
            HazardKind::Interrupt { .. } => t.interrupt += n,
            _ => {}
        }
    }
    t
}
