//! `sim run --pipeview FROM:COUNT` (and `--pipeview-html`, `--kanata`): which window to
//! record, running the machine through it on the per-instruction engine, and the diagram's
//! outputs.

use std::path::PathBuf;

use rvsim::pipetrace::{self, text::Symbols, Diagram, Start, Window};
use rvsim::{Machine, Program, Stop};

use crate::error::{Error, Result};

/// Most instructions one window records (each is kept in memory with its wrong-path ones).
pub const MAX_COUNT: u64 = 1_000_000;
/// Most instructions a window may open ahead of its event.
pub const MAX_BEFORE: u64 = 10_000;

/// What `--pipeview` and its companions asked for.
pub struct PipeviewRequest {
    pub window: Window,
    pub html: Option<PathBuf>,
    pub kanata: Option<PathBuf>,
}

/// Parses `FROM:COUNT`: FROM is an instruction number (0 = the first), `trap`, `interrupt`,
/// `branch` or a symbol of the program, optionally followed by `-K` to open K instructions
/// earlier.
pub fn parse_window(text: &str, program: &Program) -> Result<Window> {
    let bad = |why: &str| Error::usage(format!("--pipeview {text}: {why}"));
    let (from, count) = text
        .rsplit_once(':')
        .ok_or_else(|| bad("expected FROM:COUNT, e.g. interrupt:12 or main:20"))?;
    let count: u64 = count
        .parse()
        .map_err(|_| bad("COUNT must be a whole number of instructions"))?;
    if !(1..=MAX_COUNT).contains(&count) {
        return Err(bad(&format!("COUNT must be between 1 and {MAX_COUNT}")));
    }
    let (from, before) = match from.rsplit_once('-') {
        Some((f, k)) if !f.is_empty() && !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => {
            let k: u64 = k.parse().map_err(|_| bad("the -K offset is too large"))?;
            if k > MAX_BEFORE {
                return Err(bad(&format!(
                    "-K opens at most {MAX_BEFORE} instructions earlier"
                )));
            }
            (f, k)
        }
        _ => (from, 0),
    };
    let start = match from {
        "trap" => Start::Trap,
        "interrupt" => Start::Interrupt,
        "branch" => Start::Branch,
        n if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => Start::Step(
            n.parse()
                .map_err(|_| bad("the instruction number is too large"))?,
        ),
        name => match program.symbols.get(name) {
            Some(&addr) => Start::Address {
                name: name.to_string(),
                addr,
            },
            None => {
                return Err(bad(&format!(
                    "FROM must be an instruction number, trap, interrupt, branch or a symbol of the program; it has no symbol {name:?}"
                )))
            }
        },
    };
    Ok(Window {
        start,
        before,
        count,
    })
}

/// Runs the machine to its end, recording the window; the diagram when the window opened.
pub fn run(m: &mut Machine, window: &Window) -> (Stop, Option<Diagram>) {
    let (stop, rec) = pipetrace::record(m, window);
    (stop, rec.as_ref().map(pipetrace::build))
}

/// Prints the diagram (after the run's statistics) and writes the requested files; a window
/// that never opened is an error, once the statistics are out.
pub fn finish(
    req: &PipeviewRequest,
    diagram: Option<&Diagram>,
    program: &Program,
    label: &str,
) -> Result<()> {
    let Some(d) = diagram else {
        return Err(Error::usage(format!(
            "--pipeview: the window never opened: the run reached no {} (nothing drawn or written)",
            req.window.start.describe()
        )));
    };
    let symbols = Symbols::of(program);
    let width = crate::report::term::Term::stdout().width;
    print!("\n{}", pipetrace::text::render(d, width, &symbols));
    use crate::cli::outputs::{Format, Outputs, PipeviewOut};
    Outputs::new()
        .with(Format::Html, req.html.as_deref())
        .with(Format::Kanata, req.kanata.as_deref())
        .write(&PipeviewOut {
            diagram: d,
            symbols: &symbols,
            label,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Program {
        let mut p = Program::from_code(0x8000_0000, &[0x13, 0, 0, 0]);
        p.symbols.insert("main".into(), 0x8000_0000);
        p
    }

    #[test]
    fn windows_parse_and_bad_ones_are_refused() {
        let p = program();
        let w = |s: &str| parse_window(s, &p);
        assert_eq!(w("interrupt:12").unwrap().start, Start::Interrupt);
        assert_eq!(w("trap:3").unwrap().start, Start::Trap);
        assert_eq!(w("branch:3").unwrap().start, Start::Branch);
        assert_eq!(w("1000:20").unwrap().start, Start::Step(1000));
        let k = w("interrupt-4:16").unwrap();
        assert_eq!((k.start, k.before, k.count), (Start::Interrupt, 4, 16));
        assert_eq!(
            w("main:5").unwrap().start,
            Start::Address {
                name: "main".into(),
                addr: 0x8000_0000
            }
        );
        for bad in [
            "",
            "12",
            "x:1",
            "main:0",
            "main:-1",
            "main:1000001",
            "nosuch:3",
            ":3",
            "trap-99999:3",
        ] {
            let e = w(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
        }
    }
}
