//! Branch prediction for the 5-stage model (beyond Ripes, which predicts every branch not
//! taken and has no predictor).
//!
//! Branches and jumps still resolve in EX, so a misprediction costs what a taken branch costs
//! today: the 2 younger instructions (IF, ID) are flushed. What a predictor changes is which
//! control transfers are mispredicted:
//!
//! * the front end redirects in IF only when the branch target buffer (BTB: direct-mapped,
//!   tagged with the whole PC, filled in EX by every taken branch and jump) holds the PC; a
//!   jump found there is predicted taken, a conditional branch as the direction predictor
//!   says; without an entry, fetch goes on sequentially;
//! * a prediction is right when the address fetched next is the one EX computes: a taken
//!   prediction to a stale target (a `jalr` that returns elsewhere) is a misprediction too;
//! * the direction predictors: backward taken / forward not taken (by the BTB's target),
//!   tables of 1-bit or 2-bit saturating counters indexed by the PC, and gshare (2-bit
//!   counters indexed by the PC xor the global history of the last log2(entries) outcomes).
//!
//! Static not-taken ([`PredictorKind::NotTaken`]) uses no BTB: every taken branch and every
//! jump is mispredicted, the model's timing without a predictor, cycle for cycle. Prediction
//! changes timing only: what runs, and the per-instruction cache counts (which never fetch a
//! wrong path), stay the same.

use std::fmt;

/// Which direction predictor the front end uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PredictorKind {
    /// Static not taken, without a BTB: every taken branch and jump flushes.
    #[default]
    NotTaken,
    /// Backward taken, forward not taken (static, by the BTB's target).
    Btfn,
    /// A table of 1-bit counters (the last outcome), indexed by the PC.
    OneBit,
    /// A table of 2-bit saturating counters, indexed by the PC.
    TwoBit,
    /// 2-bit counters indexed by the PC xor the global history.
    Gshare,
}

/// A predictor: its kind, its table's and its BTB's entries (powers of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PredictorConfig {
    pub kind: PredictorKind,
    /// Counters in the direction table (1-bit, 2-bit, gshare).
    pub entries: u32,
    /// Entries in the branch target buffer.
    pub btb: u32,
}

impl Default for PredictorConfig {
    fn default() -> Self {
        PredictorConfig {
            kind: PredictorKind::NotTaken,
            entries: DEFAULT_ENTRIES,
            btb: DEFAULT_BTB,
        }
    }
}

const DEFAULT_ENTRIES: u32 = 256;
const DEFAULT_BTB: u32 = 64;
/// The largest table or BTB accepted (entries).
const MAX_ENTRIES: u32 = 1 << 20;

impl PredictorKind {
    pub fn name(self) -> &'static str {
        match self {
            PredictorKind::NotTaken => "not-taken",
            PredictorKind::Btfn => "btfn",
            PredictorKind::OneBit => "1bit",
            PredictorKind::TwoBit => "2bit",
            PredictorKind::Gshare => "gshare",
        }
    }

    fn has_table(self) -> bool {
        matches!(
            self,
            PredictorKind::OneBit | PredictorKind::TwoBit | PredictorKind::Gshare
        )
    }
}

impl PredictorConfig {
    /// Parses `KIND[:ENTRIES][,btb=N]`: `not-taken`, `btfn`, `1bit:N`, `2bit:N`,
    /// `gshare:N`, e.g. `2bit:512,btb=128`.
    pub fn parse(text: &str) -> Result<PredictorConfig, String> {
        let mut parts = text.split(',');
        let head = parts.next().unwrap_or_default();
        let (kind, entries) = match head.split_once(':') {
            Some((k, n)) => (k, Some(n)),
            None => (head, None),
        };
        let kind = match kind {
            "not-taken" | "static" => PredictorKind::NotTaken,
            "btfn" => PredictorKind::Btfn,
            "1bit" => PredictorKind::OneBit,
            "2bit" => PredictorKind::TwoBit,
            "gshare" => PredictorKind::Gshare,
            _ => {
                return Err(format!(
                    "unknown predictor '{kind}': not-taken, btfn, 1bit:N, 2bit:N or gshare:N"
                ))
            }
        };
        let mut cfg = PredictorConfig {
            kind,
            ..PredictorConfig::default()
        };
        if let Some(n) = entries {
            if !kind.has_table() {
                return Err(format!("predictor '{}' has no table to size", kind.name()));
            }
            cfg.entries = entries_of(n, "table")?;
        }
        for part in parts {
            match part.split_once('=') {
                Some(("btb", n)) if kind != PredictorKind::NotTaken => {
                    cfg.btb = entries_of(n, "BTB")?;
                }
                Some(("btb", _)) => {
                    return Err("static not-taken uses no BTB".into());
                }
                _ => return Err(format!("unknown predictor option '{part}': btb=N")),
            }
        }
        Ok(cfg)
    }
}

fn entries_of(text: &str, what: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(n) if n.is_power_of_two() && n <= MAX_ENTRIES => Ok(n),
        _ => Err(format!(
            "{what} entries '{text}': a power of two from 1 to {MAX_ENTRIES}"
        )),
    }
}

impl fmt::Display for PredictorConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())?;
        if self.kind.has_table() {
            write!(f, ":{}", self.entries)?;
        }
        if self.kind != PredictorKind::NotTaken {
            write!(f, ",btb={}", self.btb)?;
        }
        Ok(())
    }
}

/// What kind of control transfer reached EX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transfer {
    Branch,
    Jump,
}

#[derive(Clone, Copy, Debug, Default)]
struct BtbEntry {
    valid: bool,
    tag: u32,
    target: u32,
    jump: bool,
}

/// A predictor's state.
#[derive(Clone, Debug)]
pub(crate) struct Predictor {
    cfg: PredictorConfig,
    /// Counters: 0..=1 (1-bit) or 0..=3 (2-bit, gshare; taken from 2 up).
    table: Vec<u8>,
    btb: Vec<BtbEntry>,
    history: u32,
    #[cfg(test)]
    pub(crate) fault: Fault,
}

/// Faults a test plants to show that the tests catch them.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Fault {
    #[default]
    None,
    /// The direction table is never updated.
    NeverUpdates,
    /// The BTB ignores its tags: a PC finds whatever entry shares its index.
    UntaggedBtb,
}

impl Predictor {
    pub fn new(cfg: PredictorConfig) -> Predictor {
        let table = if cfg.kind.has_table() {
            // Weakly not taken (2-bit), not taken (1-bit).
            let init = if cfg.kind == PredictorKind::OneBit {
                0
            } else {
                1
            };
            vec![init; cfg.entries as usize]
        } else {
            Vec::new()
        };
        Predictor {
            cfg,
            table,
            btb: vec![BtbEntry::default(); cfg.btb as usize],
            history: 0,
            #[cfg(test)]
            fault: Fault::None,
        }
    }

    fn btb_index(&self, pc: u32) -> usize {
        ((pc >> 1) & (self.cfg.btb - 1)) as usize
    }

    fn table_index(&self, pc: u32) -> usize {
        let mut i = pc >> 1;
        if self.cfg.kind == PredictorKind::Gshare {
            i ^= self.history;
        }
        (i & (self.cfg.entries - 1)) as usize
    }

    fn tag_matches(&self, e: &BtbEntry, pc: u32) -> bool {
        #[cfg(test)]
        if self.fault == Fault::UntaggedBtb {
            return e.valid;
        }
        e.valid && e.tag == pc
    }

    /// Where the front end fetched after the control transfer at `pc` (`seq`: the next
    /// sequential address).
    fn predicted_next(&self, pc: u32, seq: u32) -> u32 {
        let e = self.btb[self.btb_index(pc)];
        if !self.tag_matches(&e, pc) {
            return seq;
        }
        let taken = e.jump
            || match self.cfg.kind {
                PredictorKind::NotTaken => false,
                PredictorKind::Btfn => e.target <= pc,
                PredictorKind::OneBit => self.table[self.table_index(pc)] != 0,
                PredictorKind::TwoBit | PredictorKind::Gshare => {
                    self.table[self.table_index(pc)] >= 2
                }
            };
        if taken {
            e.target
        } else {
            seq
        }
    }

    /// Accounts for the control transfer at `pc` that went to `next` (`seq`: the next
    /// sequential address): whether it was mispredicted, and learns from it.
    #[cfg(test)]
    pub fn resolve(&mut self, t: Transfer, pc: u32, seq: u32, next: u32) -> bool {
        self.resolve_from(t, pc, seq, next) != next
    }

    /// As [`Predictor::resolve`], returning where the front end fetched after it: `next`
    /// when the prediction was right.
    pub fn resolve_from(&mut self, t: Transfer, pc: u32, seq: u32, next: u32) -> u32 {
        if self.cfg.kind == PredictorKind::NotTaken {
            return seq;
        }
        let predicted = self.predicted_next(pc, seq);
        let taken = next != seq;
        if t == Transfer::Branch && self.cfg.kind.has_table() && self.updates() {
            let i = self.table_index(pc);
            let c = &mut self.table[i];
            *c = match (self.cfg.kind, taken) {
                (PredictorKind::OneBit, t) => t as u8,
                (_, true) => (*c + 1).min(3),
                (_, false) => c.saturating_sub(1),
            };
            if self.cfg.kind == PredictorKind::Gshare {
                self.history = (self.history << 1 | taken as u32) & (self.cfg.entries - 1);
            }
        }
        if taken {
            let i = self.btb_index(pc);
            self.btb[i] = BtbEntry {
                valid: true,
                tag: pc,
                target: next,
                jump: t == Transfer::Jump,
            };
        }
        predicted
    }

    fn updates(&self) -> bool {
        #[cfg(test)]
        if self.fault == Fault::NeverUpdates {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mispredictions of a loop branch at 0x100 taken `n - 1` times back to 0xf0, then not
    /// taken, run `passes` times, with a branch at 0x180 that always falls through and shares
    /// the loop branch's index in a BTB of 64 entries (not in a table of 128), and a jump at
    /// 0x204 after each pass.
    fn loop_mispredictions(p: &mut Predictor, n: u32, passes: u32) -> u32 {
        let mut miss = 0;
        for _ in 0..passes {
            for i in 0..n {
                let next = if i + 1 < n { 0xf0 } else { 0x104 };
                miss += p.resolve(Transfer::Branch, 0x100, 0x104, next) as u32;
                miss += p.resolve(Transfer::Branch, 0x180, 0x184, 0x184) as u32;
            }
            miss += p.resolve(Transfer::Jump, 0x204, 0x208, 0x80) as u32;
        }
        miss
    }

    fn predictor(text: &str) -> Predictor {
        Predictor::new(PredictorConfig::parse(text).unwrap())
    }

    #[test]
    fn each_predictor_mispredicts_a_loop_as_it_should() {
        // 10 passes of a 10-iteration loop: 9 taken and 1 not taken each.
        // not-taken: every taken branch (90) and every jump (10).
        assert_eq!(
            loop_mispredictions(&mut predictor("not-taken"), 10, 10),
            100
        );
        // BTFN: the backward branch is predicted taken once the BTB has it: the first
        // iteration (no entry) and each exit (10); the jump, once.
        assert_eq!(
            loop_mispredictions(&mut predictor("btfn"), 10, 10),
            1 + 10 + 1
        );
        // 1-bit: each pass's first iteration (the counter says not taken after the exit)
        // and its exit: 2 per pass; the jump once.
        assert_eq!(
            loop_mispredictions(&mut predictor("1bit:128"), 10, 10),
            20 + 1
        );
        // 2-bit: the first iteration (no BTB entry yet), then only the exits: one not-taken
        // outcome leaves the counter at weakly taken.
        assert_eq!(
            loop_mispredictions(&mut predictor("2bit:128"), 10, 10),
            1 + 10 + 1
        );
    }

    #[test]
    fn a_predictor_that_never_updates_is_caught() {
        let mut p = predictor("2bit:128");
        p.fault = Fault::NeverUpdates;
        // Counters stay weakly not taken: every taken branch is mispredicted.
        assert_eq!(loop_mispredictions(&mut p, 10, 10), 90 + 1);
    }

    #[test]
    fn a_btb_that_aliases_wrongly_is_caught() {
        let mut p = predictor("btfn,btb=64");
        p.fault = Fault::UntaggedBtb;
        // 0x180 finds the loop branch's entry (target 0xf0 <= 0x180: predicted taken), and
        // falls through: mispredicted each time.
        assert_eq!(loop_mispredictions(&mut p, 10, 10), 1 + 10 + 1 + 100);
    }

    #[test]
    fn gshare_learns_a_pattern_a_counter_cannot() {
        // One branch alternating taken / not taken: a 2-bit counter indexed by the PC keeps
        // mispredicting, gshare (the last outcome in its index) learns it.
        let run = |text: &str| {
            let mut p = predictor(text);
            (0..200)
                .filter(|i| {
                    let next = if i % 2 == 0 { 0x80 } else { 0x104 };
                    p.resolve(Transfer::Branch, 0x100, 0x104, next)
                })
                .count()
        };
        let (two_bit, gshare) = (run("2bit:64"), run("gshare:64"));
        assert!(two_bit >= 100, "{two_bit}");
        assert!(gshare <= 10, "{gshare}");
    }

    #[test]
    fn parsing_takes_the_forms_and_refuses_the_rest() {
        let p = PredictorConfig::parse("gshare:1024,btb=16").unwrap();
        assert_eq!(
            (p.kind, p.entries, p.btb),
            (PredictorKind::Gshare, 1024, 16)
        );
        assert_eq!(p.to_string(), "gshare:1024,btb=16");
        assert_eq!(
            PredictorConfig::parse("btfn").unwrap().to_string(),
            "btfn,btb=64"
        );
        assert_eq!(
            PredictorConfig::parse("not-taken").unwrap(),
            PredictorConfig::default()
        );
        for bad in [
            "taken",
            "2bit:100",
            "2bit:0",
            "btfn:64",
            "not-taken,btb=8",
            "2bit:64,ways=2",
            "1bit:4194304",
        ] {
            assert!(PredictorConfig::parse(bad).is_err(), "{bad}");
        }
    }
}
