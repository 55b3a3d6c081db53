//! The pipeline diagram of `sim run --pipeview` as a self-contained HTML page: one SVG figure
//! with a row per instruction and a column per cycle, stages in colour, stalls hatched, flushed
//! instructions struck through and faded, and each flush drawn as an arrow from the instruction
//! that resolved it (in EX) to the instruction fetched at the redirect target, labelled with
//! its cause; under it the hazard lines and totals of the terminal view, in the same words.

use std::fmt::Write;

use rvsim::pipetrace::text::{hazard_line, title, totals_line, Symbols};
use rvsim::pipetrace::{Cell, Diagram, Fate, HazardKind, Stage, Via};

use crate::report::html::{esc, page_head};

/// Most cycles drawn: beyond this the page says which cycles are left out.
pub const MAX_CYCLES: u64 = 600;

const LABEL_W: f64 = 300.0;
const CELL_W: f64 = 34.0;
const ROW_H: f64 = 20.0;
const HEAD_H: f64 = 44.0;

fn stage_colour(s: Stage) -> &'static str {
    match s {
        Stage::If => "#4e79a7",
        Stage::Id => "#f28e2b",
        Stage::Ex => "#59a14f",
        Stage::Mem => "#b07aa1",
        Stage::Wb => "#76b7b2",
    }
}

/// The short name of a flush for its arrow.
fn arrow_label(kind: HazardKind, via: Via) -> String {
    let what = match kind {
        HazardKind::Branch { taken: true } => "taken branch",
        HazardKind::Branch { taken: false } => "branch not taken",
        HazardKind::Jump => "jump",
        HazardKind::Mret => "mret",
        HazardKind::HostEcall => "ecall (host)",
        HazardKind::Exception { .. } => "exception",
        HazardKind::Interrupt { .. } => "interrupt",
        _ => "",
    };
    format!("{what} → {}", via.name())
}

/// The page for one diagram; `program` names what ran.
pub fn html(d: &Diagram, symbols: &Symbols, program: &str) -> String {
    let mut h = page_head(&format!("Pipeline: {program}"));
    let _ = writeln!(h, "<h1>Pipeline of {}</h1>", esc(program));
    let _ = writeln!(h, "<p class=\"meta\">{}</p>", esc(&title(d)));
    let first = d.first_cycle();
    let last = d.last_cycle().min(first + MAX_CYCLES - 1);
    if d.last_cycle() > last {
        let _ = writeln!(
            h,
            "<ul class=\"warn\"><li>cycles {}..{} are not drawn (at most {MAX_CYCLES} cycles per page): open the page of a later window with --pipeview</li></ul>",
            last + 1,
            d.last_cycle()
        );
    }
    h.push_str("<figure><div class=\"scroll\">\n");
    h.push_str(&svg(d, first, last));
    h.push_str("</div></figure>\n");
    h.push_str(
        "<p class=\"meta\">Each column is a cycle. A stage drawn again (hatched) is a stall; \
         -- is an empty slot (an interrupted instruction reaching EX); x is where a flushed \
         instruction (struck through) is squashed; arrows go from the instruction that \
         redirected fetch, in EX, to the instruction fetched at the new address.</p>\n",
    );
    if !d.hazards.is_empty() {
        h.push_str("<h2>Hazards</h2>\n<ol class=\"hazards\">\n");
        let mut by_cycle: Vec<_> = d.hazards.iter().collect();
        by_cycle.sort_by_key(|h| h.cycle);
        for hz in by_cycle {
            let _ = writeln!(h, "<li>{}</li>", esc(&hazard_line(d, hz, symbols)));
        }
        h.push_str("</ol>\n");
    }
    let class = if d.agrees() { "meta" } else { "warn" };
    let _ = writeln!(h, "<p class=\"{class}\">{}</p>", esc(&totals_line(d)));
    h.push_str("</body>\n</html>\n");
    h
}

fn svg(d: &Diagram, first: u64, last: u64) -> String {
    let rows: Vec<usize> = (0..d.rows.len())
        .filter(|&i| d.rows[i].first_cycle <= last)
        .collect();
    let cols = (last - first + 1) as f64;
    let width = LABEL_W + cols * CELL_W + 160.0;
    let height = HEAD_H + rows.len() as f64 * ROW_H + 10.0;
    let x_of = |cycle: u64| LABEL_W + (cycle - first) as f64 * CELL_W;
    let y_of = |row: usize| {
        let k = rows.iter().position(|&r| r == row).unwrap_or(0);
        HEAD_H + k as f64 * ROW_H
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg viewBox=\"0 0 {width:.0} {height:.0}\" width=\"{width:.0}\" height=\"{height:.0}\" \
         style=\"max-width:none\" font-family=\"monospace\" font-size=\"12\" \
         data-legend-entries=\"5\" role=\"img\" aria-label=\"pipeline diagram\">"
    );
    s.push_str(
        "<defs><pattern id=\"stall\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff\" \
         fill-opacity=\"0.0\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#fff\" \
         stroke-width=\"2.5\"/></pattern>\
         <marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" \
         markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" \
         fill=\"#c0392b\"/></marker></defs>\n",
    );
    // Legend: the five stages.
    for (k, st) in Stage::ALL.iter().enumerate() {
        let x = 8.0 + k as f64 * 56.0;
        let _ = writeln!(
            s,
            "<rect x=\"{x}\" y=\"6\" width=\"14\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"16\">{}</text>",
            stage_colour(*st),
            x + 18.0,
            st.name()
        );
    }
    // Cycle numbers, every column (every fifth when they get long).
    let step = if last >= 10_000 { 5 } else { 1 };
    for c in first..=last {
        if (c - first).is_multiple_of(step) {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\" font-size=\"10\">{c}</text>",
                x_of(c) + CELL_W / 2.0,
                HEAD_H - 6.0
            );
        }
    }
    let axes = Axes {
        x_of: &x_of,
        y_of: &y_of,
        last,
    };
    for &i in &rows {
        row_svg(&mut s, d, i, &axes);
    }
    arrows(&mut s, d, &rows, &axes);
    s.push_str("</svg>\n");
    s
}

/// Where the diagram's cells go: the x of a cycle's column, the y of a row, the last cycle
/// shown.
struct Axes<'a> {
    x_of: &'a dyn Fn(u64) -> f64,
    y_of: &'a dyn Fn(usize) -> f64,
    last: u64,
}

fn row_svg(s: &mut String, d: &Diagram, i: usize, axes: &Axes) {
    let (x_of, last, y) = (axes.x_of, axes.last, (axes.y_of)(i));
    let r = &d.rows[i];
    let flushed = matches!(r.fate, Fate::Flushed(_));
    if i % 2 == 1 {
        let _ = writeln!(
            s,
            "<rect x=\"0\" y=\"{y}\" width=\"100%\" height=\"{ROW_H}\" fill=\"#f6f6f6\"/>"
        );
    }
    let deco = if flushed {
        " text-decoration=\"line-through\" fill=\"#9b1c10\""
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "<text x=\"6\" y=\"{:.1}\" fill=\"#666\">{:08x}</text><text x=\"76\" y=\"{:.1}\"{deco}>{}</text>",
        y + 14.0,
        r.pc,
        y + 14.0,
        esc(&r.text)
    );
    for (k, cell) in r.cells.iter().enumerate() {
        let c = r.first_cycle + k as u64;
        if c > last {
            break;
        }
        let x = x_of(c);
        let opacity = if flushed { "0.45" } else { "1" };
        match cell {
            Cell::Stage(st) => {
                let _ = write!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\" fill=\"{}\" fill-opacity=\"{opacity}\"/>",
                    x + 1.0,
                    y + 2.0,
                    CELL_W - 2.0,
                    ROW_H - 4.0,
                    stage_colour(*st)
                );
                if r.stalled_at(k) {
                    let _ = write!(
                        s,
                        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\" fill=\"url(#stall)\"/>",
                        x + 1.0,
                        y + 2.0,
                        CELL_W - 2.0,
                        ROW_H - 4.0
                    );
                }
                let _ = writeln!(
                    s,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#fff\" font-size=\"11\">{}</text>",
                    x + CELL_W / 2.0,
                    y + 14.0,
                    st.name()
                );
            }
            Cell::Bubble => {
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\" fill=\"none\" stroke=\"#999\" stroke-dasharray=\"3 2\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#999\">--</text>",
                    x + 1.0,
                    y + 2.0,
                    CELL_W - 2.0,
                    ROW_H - 4.0,
                    x + CELL_W / 2.0,
                    y + 14.0
                );
            }
            Cell::Squashed => {
                let _ = writeln!(
                    s,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#c0392b\" font-weight=\"bold\" font-size=\"14\">x</text>",
                    x + CELL_W / 2.0,
                    y + 15.0
                );
            }
        }
    }
}

/// One arrow per flush: from the flushing instruction's EX cell to the first cell of the
/// instruction fetched next (at the redirect target), with the flush's name beside it.
fn arrows(s: &mut String, d: &Diagram, rows: &[usize], axes: &Axes) {
    let Axes { x_of, y_of, last } = *axes;
    for h in d.hazards.iter().filter(|h| h.kind.is_flush()) {
        let Some((_, via)) = h.redirect else { continue };
        if h.cycle > last || !rows.contains(&h.row) {
            continue;
        }
        let x1 = x_of(h.cycle) + CELL_W / 2.0;
        let y1 = y_of(h.row) + ROW_H - 2.0;
        let label = arrow_label(h.kind, via);
        // The instruction fetched at the target follows the flushed ones.
        let target = h.flushed.iter().max().map_or(h.row + 1, |&k| k + 1);
        let (x2, y2) = if target < d.rows.len() && rows.contains(&target) {
            let t = &d.rows[target];
            (x_of(t.first_cycle) + 4.0, y_of(target) + ROW_H / 2.0)
        } else {
            (x1 + CELL_W, y1 + ROW_H)
        };
        let _ = writeln!(
            s,
            "<path d=\"M{x1:.1},{y1:.1} C{x1:.1},{:.1} {:.1},{y2:.1} {x2:.1},{y2:.1}\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>",
            y2,
            x2 - CELL_W,
        );
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#c0392b\" font-size=\"11\" font-family=\"sans-serif\">{}</text>",
            // Beside the row's last cell, clear of its stages.
            x_of(d.rows[h.row].last_cycle().min(last)) + CELL_W + 6.0,
            y_of(h.row) + 14.0,
            esc(&label)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rvsim::pipetrace::{self, Start, Window};
    use rvsim::{Config, Machine, Program};

    #[test]
    fn names_from_the_elf_are_escaped_and_the_flush_is_drawn() {
        // j +8; nop; li a7,93; ecall (exit): the jump's target carries a hostile name.
        let words: [u32; 4] = [0x0080_006f, 0x0000_0013, 0x05d0_0893, 0x0000_0073];
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut program = Program::from_code(0x8000_0000, &code);
        program
            .symbols
            .insert("<img src=x onerror=alert(1)>".into(), 0x8000_0008);
        let cfg = Config {
            pipeline: true,
            ..Config::default()
        };
        let mut m = Machine::new(&cfg, &program).unwrap();
        let window = Window {
            start: Start::Step(0),
            before: 0,
            count: 10,
        };
        let (_, rec) = pipetrace::record(&mut m, &window);
        let d = pipetrace::build(&rec.unwrap());
        let page = html(&d, &Symbols::of(&program), "<b>prog</b>");
        assert!(
            !page.contains("<img") && !page.contains("<b>prog"),
            "{page}"
        );
        assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(page.contains("jump → target"), "{page}");
        assert!(page.contains("marker-end=\"url(#arrow)\""));
    }
}
