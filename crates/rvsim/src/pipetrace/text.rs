//! The diagram for a terminal: one row per instruction that entered the pipeline, one
//! four-character column per cycle, then one line per hazard and the totals beside the model's
//! counters. It never exceeds the given width: it shows as many cycles as fit and says how to
//! see the rest.

use std::fmt::Write;

use super::timeline::{Diagram, Fate, Hazard, HazardKind, Row, Via};
use crate::elf::Program;
use crate::trap::cause_name;

/// Width of one cycle column ("MEM" and a space).
const COL: usize = 4;
/// Longest disassembly shown before it is cut.
const TEXT_MAX: usize = 28;
const TEXT_MIN: usize = 12;

/// The program's symbols, to name addresses as objdump does (`main+0x1c`).
#[derive(Clone, Debug, Default)]
pub struct Symbols(Vec<(u32, String)>);

impl Symbols {
    pub fn of(program: &Program) -> Symbols {
        let mut v: Vec<(u32, String)> = program
            .symbols
            .iter()
            .filter(|(name, _)| !name.is_empty() && !name.starts_with('$'))
            // A name is the file's text: control characters never reach a terminal.
            .map(|(n, &a)| {
                (
                    a,
                    n.chars()
                        .map(|c| if c.is_control() { '?' } else { c })
                        .collect(),
                )
            })
            .collect();
        v.sort();
        Symbols(v)
    }

    /// `name` or `name+0xN` for the nearest symbol at or below `addr`.
    pub fn label(&self, addr: u32) -> Option<String> {
        let i = self.0.partition_point(|(a, _)| *a <= addr);
        let (a, name) = self.0.get(i.checked_sub(1)?)?;
        Some(match addr - a {
            0 => name.clone(),
            off => format!("{name}+0x{off:x}"),
        })
    }

    /// `80000064 <rvsim_trap>` (the address alone without a symbol).
    pub fn address(&self, addr: u32) -> String {
        match self.label(addr) {
            Some(l) => format!("{addr:08x} <{l}>"),
            None => format!("{addr:08x}"),
        }
    }
}

/// One line per hazard kind, in words.
pub fn hazard_line(d: &Diagram, h: &Hazard, symbols: &Symbols) -> String {
    let row = &d.rows[h.row];
    let who = format!("`{}` at {:08x}", row.text, row.pc);
    let mut line = match h.kind {
        HazardKind::LoadUse { load_row } => {
            let load = load_row.map_or("the load before it".to_string(), |k| {
                format!("`{}`", d.rows[k].text)
            });
            format!("load-use stall: {who} reads what {load} loads: 1 cycle in ID")
        }
        HazardKind::ICacheMiss => format!("I-cache miss fetching {who}: {} cycles in IF", h.cycles),
        HazardKind::DCacheMiss => format!("D-cache miss by {who}: {} cycles in MEM", h.cycles),
        HazardKind::Branch { taken: true } => {
            format!("mispredicted branch {who}, taken (resolved in EX)")
        }
        HazardKind::Branch { taken: false } => {
            format!("mispredicted branch {who}, predicted taken (resolved in EX)")
        }
        HazardKind::Jump => format!("jump {who} (resolved in EX)"),
        HazardKind::Mret => format!("return from the trap handler {who}"),
        HazardKind::HostEcall => format!("{who} served by the host (program ABI)"),
        HazardKind::Exception { cause, tval } => format!(
            "exception in EX: {} (mcause {cause}, mtval 0x{tval:08x}) by {who}",
            cause_name(cause)
        ),
        HazardKind::Interrupt { cause } => format!(
            "interrupt: {} (mcause 0x{cause:08x}) taken as {who} was about to enter EX",
            cause_name(cause)
        ),
    };
    if h.kind.is_flush() {
        let n = h.flushed.len();
        let _ = write!(line, ": flushed {n}");
        let names: Vec<String> = h
            .flushed
            .iter()
            .map(|&k| format!("`{}`", d.rows[k].text))
            .collect();
        if !names.is_empty() {
            let _ = write!(line, " ({})", names.join(", "));
        }
        match h.redirect {
            Some((_, Via::RunEnded)) | None => line.push_str("; the run ended"),
            Some((pc, via)) => {
                let _ = write!(
                    line,
                    "; fetch redirected to {} ({})",
                    symbols.address(pc),
                    via.name()
                );
                if matches!(
                    h.kind,
                    HazardKind::Exception { .. } | HazardKind::Interrupt { .. }
                ) {
                    let _ = write!(line, ", mepc = {:08x}", row.pc);
                }
            }
        }
    }
    format!("cycle {}  {line}", h.cycle)
}

/// The totals line: what the diagram shows, and whether the model's counters agree.
pub fn totals_line(d: &Diagram) -> String {
    let t = &d.shown;
    let mut parts = Vec::new();
    for (n, what) in [
        (t.load_use, "load-use"),
        (t.icache_miss, "I-cache miss"),
        (t.dcache_miss, "D-cache miss"),
    ] {
        if n > 0 {
            parts.push(format!("{what} {n}"));
        }
    }
    let stalls = if parts.is_empty() {
        "0".to_string()
    } else {
        format!("{} ({})", t.stalls(), parts.join(", "))
    };
    let mut parts = Vec::new();
    for (n, what) in [
        (t.branch, "branch"),
        (t.jump, "jump"),
        (t.trap, "trap"),
        (t.interrupt, "interrupt"),
    ] {
        if n > 0 {
            parts.push(format!("{what} {n}"));
        }
    }
    let flushes = if parts.is_empty() {
        "0".to_string()
    } else {
        format!("{} ({})", t.flushes(), parts.join(", "))
    };
    let verdict = if d.agrees() {
        "equal to the model's counters over these steps".to_string()
    } else {
        let c = &d.counted;
        format!(
            "NOT equal to the model's counters over these steps ({} retired, stalls {}, flushes {}): the diagram is wrong",
            c.retired,
            c.stalls(),
            c.flushes()
        )
    };
    format!(
        "{} instructions entered the pipeline, {} retired; stall cycles {stalls}; flush cycles {flushes}: {verdict}",
        d.rows.len(),
        t.retired
    )
}

/// Breaks `text` into lines of at most `width` characters at spaces, continuation lines
/// indented by `indent` spaces (a word longer than a line is cut).
pub fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let len = cur.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
            cur = " ".repeat(indent);
        }
        if !cur.is_empty() && !cur.ends_with(' ') {
            cur.push(' ');
        }
        cur.push_str(word);
        while cur.chars().count() > width {
            let head: String = cur.chars().take(width).collect();
            let tail: String = cur.chars().skip(width).collect();
            lines.push(head);
            cur = format!("{}{tail}", " ".repeat(indent));
        }
    }
    if !cur.trim().is_empty() {
        lines.push(cur);
    }
    lines
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max - 1).collect();
    s.push('~');
    s
}

/// The title line: which steps, from where.
pub fn title(d: &Diagram) -> String {
    let w = &d.window;
    let from = match w.before {
        0 => w.start.describe(),
        n => format!("{n} before {}", w.start.describe()),
    };
    let mut s = format!(
        "Pipeline (5-stage, IF ID EX MEM WB): instructions {}..{} of the run, {} from {from}",
        d.first_step,
        d.first_step + d.steps.max(1) - 1,
        d.steps
    );
    if d.steps < w.count {
        let _ = write!(
            s,
            " (the run ended after {} of the {} asked for)",
            d.steps, w.count
        );
    }
    s
}

/// Draws the diagram in at most `width` columns.
pub fn render(d: &Diagram, width: usize, symbols: &Symbols) -> String {
    let mut out = String::new();
    for l in wrap(&title(d), width, 4) {
        let _ = writeln!(out, "{l}");
    }
    if d.rows.is_empty() {
        out.push_str("no instruction entered the pipeline in this window\n");
        return out;
    }
    let longest = d
        .rows
        .iter()
        .map(|r| r.text.chars().count())
        .max()
        .unwrap_or(0);
    let mut text_w = longest.clamp(TEXT_MIN, TEXT_MAX);
    // Address, flushed marker, disassembly: shrink the disassembly before the cycles.
    let label = |t: usize| 8 + 3 + t + 1;
    while text_w > TEXT_MIN && width < label(text_w) + 8 * COL {
        text_w -= 1;
    }
    let first = d.first_cycle();
    let last = d.last_cycle();
    let fit = (width.saturating_sub(label(text_w)) / COL).max(1) as u64;
    let shown_last = last.min(first + fit - 1);
    let short = last >= 1000;
    let mut header = " ".repeat(label(text_w));
    for c in first..=shown_last {
        let n = if short {
            format!("{:03}", c % 1000)
        } else {
            c.to_string()
        };
        let _ = write!(header, "{n:<COL$}");
    }
    let _ = writeln!(out, "{}", header.trim_end());
    let shown: Vec<&Row> = d
        .rows
        .iter()
        .filter(|r| r.first_cycle <= shown_last)
        .collect();
    for r in &shown {
        let mark = if matches!(r.fate, Fate::Flushed(_)) {
            'x'
        } else {
            ' '
        };
        let mut line = format!(
            "{:08x} {mark} {:<tw$} ",
            r.pc,
            cut(&r.text, text_w),
            tw = text_w
        );
        for c in first..=shown_last {
            let cell = r.cell_at(c).map_or("", |c| c.label());
            let _ = write!(line, "{cell:<COL$}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let mut notes = Vec::new();
    if short {
        notes.push(format!(
            "cycle columns show the last three digits of cycles {first}..{shown_last}"
        ));
    }
    if shown_last < last {
        let rest = d.rows.iter().find(|r| r.last_cycle() > shown_last);
        let hidden = d.rows.len() - shown.len();
        let mut s = format!(
            "cycles {}..{last} do not fit in {width} columns{}",
            shown_last + 1,
            if hidden > 0 {
                format!(" ({hidden} more instructions)")
            } else {
                String::new()
            }
        );
        if let Some(r) = rest {
            let left = d.first_step + d.steps - r.step;
            let _ = write!(
                s,
                "; to see them: --pipeview {}:{left}, a wider terminal (COLUMNS), or --pipeview-html FILE",
                r.step
            );
        }
        notes.push(s);
    }
    notes.push(
        "a repeated stage is a stall; -- an empty slot; x where a flushed instruction is squashed"
            .into(),
    );
    for n in notes {
        for l in wrap(&n, width, 4) {
            let _ = writeln!(out, "{l}");
        }
    }
    let mut visible: Vec<&Hazard> = d
        .hazards
        .iter()
        .filter(|h| d.rows[h.row].first_cycle <= shown_last)
        .collect();
    visible.sort_by_key(|h| h.cycle);
    if !d.hazards.is_empty() {
        out.push_str("hazards:\n");
    }
    for h in &visible {
        for l in wrap(&hazard_line(d, h, symbols), width.saturating_sub(2), 4) {
            let _ = writeln!(out, "  {l}");
        }
    }
    if visible.len() < d.hazards.len() {
        let more = format!(
            "({} more hazards in the cycles not shown)",
            d.hazards.len() - visible.len()
        );
        for l in wrap(&more, width.saturating_sub(2), 4) {
            let _ = writeln!(out, "  {l}");
        }
    }
    for l in wrap(&totals_line(d), width, 4) {
        let _ = writeln!(out, "{l}");
    }
    out
}
