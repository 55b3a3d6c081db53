//! The diagram in the Kanata log format (version 4), which the Konata pipeline viewer reads
//! (the format of gem5's O3 pipeline view and of RISC-V BOOM's traces): a header, the first
//! cycle (`C=`), then per cycle the commands for the instructions that change: `I` (a new
//! instruction), `L` (its label: address and disassembly in the left pane, the hazard that
//! squashed it on mouse-over), `S`/`E` (a stage starts/ends; lane 0 the stages, lane 1 a
//! `stall` overlay where a stage repeats), `W` (a load-use dependency: consumer on producer),
//! `R` (retired, type 0, or flushed, type 1), and `C 1` to move to the next cycle.
//!
//! Instruction ids are the row numbers of the diagram; the simulator id is the instruction
//! step; retirement ids count retired instructions (a flushed one carries the next one's).

use std::fmt::Write;

use super::text::{hazard_line, Symbols};
use super::timeline::{Cell, Diagram, Fate, HazardKind};

/// Kanata text for the diagram.
pub fn write(d: &Diagram, symbols: &Symbols) -> String {
    let mut out = String::from("Kanata\t0004\n");
    if d.rows.is_empty() {
        return out;
    }
    let first = d.first_cycle();
    let last = d.last_cycle();
    let _ = writeln!(out, "C=\t{first}");
    let mut retired = 0u64;
    // Consumer row -> load row (the first hazard naming it), for the dependency arrows of
    // load-use stalls.
    let mut deps: std::collections::HashMap<usize, usize> = Default::default();
    for h in &d.hazards {
        if let HazardKind::LoadUse { load_row: Some(l) } = h.kind {
            deps.entry(h.row).or_insert(l);
        }
    }
    // Each cycle visits only the rows alive in it (from their first cycle to the one after
    // their last cell), in row order: the log is linear in the cells, not rows × cycles.
    let mut by_start: Vec<usize> = (0..d.rows.len()).collect();
    by_start.sort_by_key(|&id| (d.rows[id].first_cycle, id));
    let mut next = 0;
    let mut alive: Vec<usize> = Vec::new();
    for cycle in first..=last + 1 {
        if cycle > first {
            out.push_str("C\t1\n");
        }
        let before = alive.len();
        while next < by_start.len() && d.rows[by_start[next]].first_cycle <= cycle {
            alive.push(by_start[next]);
            next += 1;
        }
        if alive.len() > before {
            alive.sort_unstable();
        }
        for &id in &alive {
            let row = &d.rows[id];
            if cycle == row.first_cycle {
                let _ = writeln!(out, "I\t{id}\t{}\t0", row.step);
                let _ = writeln!(out, "L\t{id}\t0\t{:08x}: {}", row.pc, tab_free(&row.text));
                if let Fate::Flushed(h) = row.fate {
                    let why = hazard_line(d, &d.hazards[h], symbols);
                    let _ = writeln!(out, "L\t{id}\t1\tflushed by: {}", tab_free(&why));
                }
            }
            let Some(i) = cycle
                .checked_sub(row.first_cycle)
                .map(|i| i as usize)
                .filter(|&i| i <= row.cells.len())
            else {
                continue;
            };
            let prev = i.checked_sub(1).map(|k| row.cells[k]);
            let cur = row.cells.get(i).copied();
            if i >= 1 && row.stalled_at(i - 1) && !(i < row.cells.len() && row.stalled_at(i)) {
                let _ = writeln!(out, "E\t{id}\t1\tstall");
            }
            let end_prev = |out: &mut String| {
                if let Some(p) = prev.filter(|c| *c != Cell::Squashed) {
                    let _ = writeln!(out, "E\t{id}\t0\t{}", p.label());
                }
            };
            match (prev, cur) {
                (_, Some(Cell::Squashed)) => {
                    end_prev(&mut out);
                    let _ = writeln!(out, "R\t{id}\t{retired}\t1");
                }
                (Some(Cell::Squashed), None) | (None, None) => {}
                (Some(_), None) => {
                    end_prev(&mut out);
                    let _ = writeln!(out, "R\t{id}\t{retired}\t0");
                    retired += 1;
                }
                (p, Some(c)) if p != Some(c) => {
                    end_prev(&mut out);
                    let _ = writeln!(out, "S\t{id}\t0\t{}", c.label());
                }
                _ => {
                    // The same stage again: a stall starts here (lane 1 overlays it).
                    if !row.stalled_at(i - 1) {
                        let _ = writeln!(out, "S\t{id}\t1\tstall");
                        if let Some(load) = deps.get(&id) {
                            let _ = writeln!(out, "W\t{id}\t{load}\t0");
                        }
                    }
                }
            }
        }
        // A row is done after the cycle one past its last cell.
        alive.retain(|&id| {
            let row = &d.rows[id];
            cycle < row.first_cycle + row.cells.len() as u64
        });
    }
    out
}

/// Text for one tab-separated field: tabs and line breaks become spaces.
fn tab_free(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}
