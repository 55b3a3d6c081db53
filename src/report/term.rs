//! What the terminal can show: its width (so tables fit instead of wrapping into the next
//! row) and whether colour is wanted (never into files or pipes, never with NO_COLOR).

use anstream::ColorChoice;
use std::io::IsTerminal;

/// Width used when stdout is not a terminal and COLUMNS is unset: wide enough for most
/// rows of a file or a CI log, narrow enough to read.
pub const DEFAULT_WIDTH: usize = 100;

/// The two facts a renderer needs about where its text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Term {
    /// Columns available; rows never exceed this.
    pub width: usize,
    /// ANSI colour for verdicts.
    pub color: bool,
}

impl Term {
    /// The facts for stdout: COLUMNS when set (the user's override, and what shells export),
    /// else the terminal's width, else [`DEFAULT_WIDTH`]; colour as anstream decides it
    /// (NO_COLOR, CLICOLOR, CLICOLOR_FORCE, TERM=dumb and whether stdout is a terminal).
    pub fn stdout() -> Self {
        let out = std::io::stdout();
        let env_width = std::env::var("COLUMNS").ok();
        let tty_width = if out.is_terminal() {
            terminal_size::terminal_size_of(&out)
                .map(|(w, _)| w.0 as usize)
                .or_else(|| columns_of(&out))
        } else {
            None
        };
        let color = anstream::AutoStream::choice(&out) != ColorChoice::Never;
        Term {
            width: pick_width(env_width.as_deref(), tty_width),
            color,
        }
    }

    /// No colour, a fixed width (files, tests).
    pub fn plain(width: usize) -> Self {
        Term {
            width,
            color: false,
        }
    }
}

/// The terminal's column count when it reports no rows: terminal_size gives nothing unless
/// both are set, and a pty whose rows are 0 (`script` before `stty rows`, some containers'
/// first moments) then laid out an 80-column terminal at the 100-column default.
fn columns_of(out: &impl std::os::fd::AsRawFd) -> Option<usize> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct we own; the fd is borrowed from
    // an open file for the whole call.
    let rc = unsafe { libc::ioctl(out.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
    (rc == 0 && ws.ws_col > 0).then_some(ws.ws_col as usize)
}

/// COLUMNS when it is a sensible number, else the terminal's width, else the default. Widths
/// below 40 are raised to 40: narrower than that nothing can be laid out usefully.
pub fn pick_width(columns: Option<&str>, tty: Option<usize>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&w| w > 0)
        .or(tty.filter(|&w| w > 0))
        .unwrap_or(DEFAULT_WIDTH)
        .max(40)
}

/// A verdict's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Good,
    Bad,
    Caution,
}

impl Tone {
    fn style(self) -> anstyle::Style {
        let c = match self {
            Tone::Good => anstyle::AnsiColor::Green,
            Tone::Bad => anstyle::AnsiColor::Red,
            Tone::Caution => anstyle::AnsiColor::Yellow,
        };
        anstyle::Style::new().fg_color(Some(c.into()))
    }

    /// The comfy-table colour for a cell.
    pub fn cell_color(self) -> comfy_table::Color {
        match self {
            Tone::Good => comfy_table::Color::Green,
            Tone::Bad => comfy_table::Color::Red,
            Tone::Caution => comfy_table::Color::Yellow,
        }
    }
}

/// `text` in the tone's colour when `on`, unchanged otherwise.
pub fn paint(text: &str, tone: Tone, on: bool) -> String {
    if on {
        let s = tone.style();
        format!("{}{text}{}", s.render(), s.render_reset())
    } else {
        text.to_string()
    }
}

/// Word-wraps `text` to `width` columns, the first line indented by `first`, the rest by
/// `rest` (a hanging indent), so notes under a row never run past the terminal's edge. Lines
/// break at spaces only ("kernel-entry" and "posix_fadvise(DONTNEED)" stay whole), a word
/// wider than the line being the one thing split.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let opts = textwrap::Options::new(width.max(20))
        .initial_indent(first)
        .subsequent_indent(rest)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::fill(text, opts)
}

/// `text` cut to `width` characters, "…" ending a cut one.
pub fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// A label (`probe key=value …`) wrapped within `width`, continuation lines indented by
/// `rest`: it breaks at spaces, and a token longer than a line just after '(', ',', '+',
/// '/' or '-' ("evict=fsync+posix_fadvise(" / "DONTNEED)"), inside a word only when no such
/// point is left. comfy-table cannot do this itself (it splits a token too long for its
/// column at any character, with no hook for break points), so the probe cell reaches it
/// already wrapped.
pub fn wrap_label(text: &str, width: usize, rest: &str) -> String {
    use textwrap::core::{break_words, Word};
    let width = width.max(16);
    let room = width.saturating_sub(rest.chars().count()).max(1);
    let mut words: Vec<Word> = Vec::new();
    for token in text.split_inclusive(' ') {
        let word = Word::from(token);
        if word.word.chars().count() <= room {
            words.push(word);
            continue;
        }
        let mut start = 0;
        for (i, c) in token.char_indices() {
            let end = i + c.len_utf8();
            if "(,+/-".contains(c) && end < word.word.len() {
                words.push(Word::from(&token[start..end]));
                start = end;
            }
        }
        words.push(Word::from(&token[start..]));
    }
    let words = break_words(words, room);
    let widths = [width as f64, room as f64];
    let lines = textwrap::wrap_algorithms::wrap_first_fit(&words, &widths);
    let mut out = String::new();
    for (n, line) in lines.iter().enumerate() {
        if n > 0 {
            out.push('\n');
            out.push_str(rest);
        }
        for (i, w) in line.iter().enumerate() {
            out.push_str(w.word);
            if i + 1 < line.len() {
                out.push_str(w.whitespace);
            }
        }
    }
    out
}

/// `text` with every line wider than `width` word-wrapped, its continuation indented two
/// columns past the line's own indent: for prose built line by line (warnings, notes, facts),
/// never for aligned tables (lay those out with [`grid`]).
pub fn fit(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let indent: String = body.chars().take_while(|c| *c == ' ').collect();
        let rest = format!("{indent}  ");
        out.push_str(&wrap(body.trim_start(), width, &indent, &rest));
        out.push_str(nl);
    }
    out
}

/// A plain column-aligned table (no borders) within `term.width`: columns are as wide as
/// their content, and when the whole does not fit, comfy-table wraps the widest cells inside
/// their column instead of letting a row run into the next line.
pub fn grid<S: AsRef<str>>(header: &[&str], rows: &[Vec<S>], term: &Term) -> String {
    // Many columns of numbers cannot wrap usefully: split them into several tables, each
    // repeating the first (label) column, every one within the width.
    let natural: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.as_ref().chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(1)
                + 2
        })
        .collect();
    if header.len() > 2 && natural.iter().sum::<usize>() > term.width {
        let mut chunks: Vec<Vec<usize>> = Vec::new();
        let mut cur: Vec<usize> = Vec::new();
        let mut used = natural[0];
        for i in 1..header.len() {
            if !cur.is_empty() && used + natural[i] > term.width {
                chunks.push(std::mem::take(&mut cur));
                used = natural[0];
            }
            cur.push(i);
            used += natural[i];
        }
        chunks.push(cur);
        if chunks.len() > 1 {
            return chunks
                .iter()
                .map(|cols| {
                    let pick = |i: &usize| *i;
                    let h: Vec<&str> = std::iter::once(0)
                        .chain(cols.iter().map(pick))
                        .map(|i| header[i])
                        .collect();
                    let r: Vec<Vec<&str>> = rows
                        .iter()
                        .map(|row| {
                            std::iter::once(0)
                                .chain(cols.iter().map(pick))
                                .map(|i| row.get(i).map(|c| c.as_ref()).unwrap_or(""))
                                .collect()
                        })
                        .collect();
                    wrapping_grid(&h, &r, term)
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
    }
    wrapping_grid(header, rows, term)
}

/// Whether a cell reads as a figure (a number, a ratio, a change, a bound, a dash for none, or
/// a figure's verdict in its place: INVALID, unstable): such a cell aligns right and is never
/// wrapped.
fn is_number(c: &str) -> bool {
    c.starts_with(|ch: char| ch.is_ascii_digit() || "-–+±<".contains(ch))
        || ["n/s", "n/a", "—"].contains(&c)
        || c.starts_with("INVALID")
        || c.starts_with("unstable")
}

/// A plain column-aligned table within `term.width` that never splits into several tables:
/// columns of numbers keep their whole width and the columns of text wrap inside their cells
/// (a comparison's probe labels and verdicts).
pub fn wrapping_grid<S: AsRef<str>>(header: &[&str], rows: &[Vec<S>], term: &Term) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::NOTHING)
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .set_width(term.width.min(u16::MAX as usize) as u16)
        .force_no_tty()
        .set_header(header.iter().copied());
    for r in rows {
        t.add_row(r.iter().map(|c| c.as_ref().to_string()));
    }
    let last = header.len().saturating_sub(1);
    // Columns of numbers align right, so magnitudes line up.
    let numeric: Vec<bool> = (0..header.len())
        .map(|i| {
            rows.iter()
                .all(|r| r.get(i).is_some_and(|c| is_number(c.as_ref())))
                && !rows.is_empty()
        })
        .collect();
    // Never split a number or a word inside a cell: a column is at least as wide as its
    // longest token, a column of numbers as its longest cell ("2.25 µs/switch" stays on one
    // line); only text with spaces wraps.
    let min_width: Vec<u16> = (0..header.len())
        .map(|i| {
            let whole = numeric.get(i) == Some(&true);
            rows.iter()
                .filter_map(|r| r.get(i))
                .flat_map(|c| {
                    let c = c.as_ref();
                    if whole {
                        vec![c.chars().count()]
                    } else {
                        c.split_whitespace().map(|w| w.chars().count()).collect()
                    }
                })
                .chain(header[i].split_whitespace().map(|w| w.chars().count()))
                .max()
                .unwrap_or(1)
                .min(u16::MAX as usize) as u16
        })
        .collect();
    for (i, c) in t.column_iter_mut().enumerate() {
        c.set_padding((0, if i == last { 0 } else { 2 }));
        c.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
            comfy_table::Width::Fixed(min_width[i] + if i == last { 0 } else { 2 }),
        ));
        if numeric.get(i) == Some(&true) {
            c.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    let mut out: String = t
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_breaks_after_punctuation_never_inside_a_word() {
        let label = "fault.file-evicted evict=fsync+posix_fadvise(DONTNEED) touch=read";
        let text = wrap_label(label, 24, "  ");
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "fault.file-evicted",
                "  evict=fsync+",
                "  posix_fadvise(",
                "  DONTNEED) touch=read"
            ],
            "{text}"
        );
        // A token that fits a line is never cut, even at its punctuation.
        let hog = wrap_label("mmap.lab pressure=hog 64 MiB (0% of 22 GiB)", 20, "  ");
        assert_eq!(
            hog.lines().collect::<Vec<_>>(),
            ["mmap.lab", "  pressure=hog 64", "  MiB (0% of 22 GiB)"],
            "{hog}"
        );
        // Joined back, nothing is lost or added.
        let joined: String = text
            .lines()
            .map(|l| l.trim_start())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(joined.replace("+ ", "+").replace("( ", "("), label);
        // The plain wrap splits the token inside a word at this width.
        let plain = wrap(label, 24, "", "  ");
        assert!(plain.contains("posix_fadv\n"), "{plain}");
    }

    #[test]
    fn a_terminal_with_no_rows_still_gives_its_columns() {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes two fds into the ints we own; the name, termios and
        // winsize arguments may be null.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both fds were just opened by openpty and are owned here alone.
        let (master, slave) = unsafe {
            use std::os::fd::FromRawFd;
            (
                std::fs::File::from_raw_fd(master),
                std::fs::File::from_raw_fd(slave),
            )
        };
        let ws = libc::winsize {
            ws_row: 0,
            ws_col: 80,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        use std::os::fd::AsRawFd;
        // SAFETY: TIOCSWINSZ reads one winsize from a struct we own; the fd is open.
        assert_eq!(
            unsafe { libc::ioctl(slave.as_raw_fd(), libc::TIOCSWINSZ, &ws) },
            0
        );
        // What the crate gives for it, and why columns_of exists.
        assert!(terminal_size::terminal_size_of(&slave).is_none());
        assert_eq!(columns_of(&slave), Some(80));
        // A file is no terminal.
        assert_eq!(columns_of(&std::fs::File::open("/dev/null").unwrap()), None);
        drop(master);
    }

    #[test]
    fn width_prefers_columns_then_terminal_then_default() {
        assert_eq!(pick_width(Some("80"), Some(200)), 80);
        assert_eq!(pick_width(None, Some(132)), 132);
        assert_eq!(pick_width(None, None), DEFAULT_WIDTH);
        assert_eq!(pick_width(Some("junk"), None), DEFAULT_WIDTH);
        assert_eq!(pick_width(Some("0"), Some(90)), 90);
        assert_eq!(pick_width(Some("10"), None), 40);
    }

    #[test]
    fn fit_wraps_only_the_long_lines_with_a_hanging_indent() {
        let text = format!("short\n  {}\nend", "word ".repeat(30).trim_end());
        let out = fit(&text, 40);
        assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "short");
        assert!(lines[1].starts_with("  word") && lines[2].starts_with("    word"));
        assert_eq!(*lines.last().unwrap(), "end");
        assert_eq!(fit("a\nb\n", 40), "a\nb\n");
    }

    #[test]
    fn grid_fits_the_width() {
        let rows = vec![vec![
            "fault.file-evicted touch=read thp=never readahead=random order=seq".to_string(),
            "1234".into(),
            "a long explanation that would otherwise widen the row past the edge".into(),
        ]];
        let out = grid(&["case", "ns/page", "note"], &rows, &Term::plain(60));
        assert!(out.lines().all(|l| l.chars().count() <= 60), "{out}");
        assert!(out.starts_with("case"));
        // Numbers and words are never split, even when the width is too small for them.
        let narrow = grid(
            &["case", "ns/page"],
            &[vec!["a-very-long-label", "123456"]],
            &Term::plain(40),
        );
        assert!(
            narrow.contains("a-very-long-label") && narrow.contains("123456"),
            "{narrow}"
        );
        // Many numeric columns split into tables that each fit, the label column repeated.
        let header = [
            "variant", "wall", "user", "sys", "minflt", "majflt", "reclaims", "inblock",
        ];
        let many = vec![vec![
            "file-shared-random",
            "1.23",
            "1.04",
            "0.0159",
            "2198",
            "1.00",
            "2190",
            "16384",
        ]];
        let split = grid(&header, &many, &Term::plain(50));
        assert!(split.lines().all(|l| l.chars().count() <= 50), "{split}");
        assert_eq!(
            split.matches("file-shared-random").count(),
            split.matches("variant").count()
        );
        assert!(split.matches("variant").count() >= 2, "{split}");
        for h in header {
            assert!(split.contains(h), "{h} lost: {split}");
        }
        let wide = grid(&["case", "ns/page", "note"], &rows, &Term::plain(300));
        assert_eq!(wide.lines().count(), 2, "{wide}");
    }

    #[test]
    fn paint_only_when_asked() {
        assert_eq!(paint("INVALID", Tone::Bad, false), "INVALID");
        let red = paint("INVALID", Tone::Bad, true);
        assert!(
            red.starts_with("\x1b[31m") && red.ends_with("\x1b[0m"),
            "{red:?}"
        );
    }

    #[test]
    fn wrap_keeps_lines_within_width_with_hanging_indent() {
        let t = "other tasks ran in the participants' place 14% of the time, inflating \
                 every sample: stop the competing load or pick an idle CPU with --cpu";
        let w = wrap(t, 60, "    ! ", "      ");
        assert!(w.lines().count() > 1);
        for l in w.lines() {
            assert!(l.chars().count() <= 60, "{l:?}");
        }
        assert!(w.lines().nth(1).unwrap().starts_with("      "));
    }

    /// A hyphenated word is one word ("kernel-" / "entry" was printed); only a word wider
    /// than the line is split.
    #[test]
    fn wrap_breaks_at_spaces_never_at_hyphens() {
        let t = "no hardware counters; kernel-entry mitigations active, so system calls cost";
        for width in 30..t.len() {
            let w = wrap(t, width, "", "  ");
            for l in w.lines() {
                assert!(!l.trim_end().ends_with('-'), "width {width}: {w}");
            }
            assert!(w.contains("kernel-entry"), "width {width}: {w}");
        }
        let long = "x".repeat(50);
        let w = wrap(&format!("a {long} b"), 30, "", "");
        assert!(w.lines().all(|l| l.chars().count() <= 30), "{w}");
        let joined: String = w.split_whitespace().collect();
        assert_eq!(joined, format!("a{long}b"), "{w}");
    }
}
