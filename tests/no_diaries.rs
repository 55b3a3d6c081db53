//! Comments in `src/` and `crates/*/src/` say what code does and why, never when: no dates,
//! no times of day and no issue numbers of a tracker outside the repository. A figure that
//! backs a claim names the machine and the command that reproduces it; git keeps the
//! history of when it was measured.

use std::path::{Path, PathBuf};

/// Why a comment reads as a diary entry, if it does.
fn diary(comment: &str) -> Option<&'static str> {
    let b = comment.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let digits = |from: usize, n: usize| (from..from + n).all(digit);
    for i in 0..b.len() {
        // A digit run starts here (not inside a longer number).
        if !digit(i) || (i > 0 && (digit(i - 1) || b[i - 1] == b':' || b[i - 1] == b'.')) {
            continue;
        }
        // 2026-11-26: a date.
        if digits(i, 4)
            && b.get(i + 4) == Some(&b'-')
            && digits(i + 5, 2)
            && b.get(i + 7) == Some(&b'-')
            && digits(i + 8, 2)
        {
            return Some("a date");
        }
        // 12:22 (or 12:22:05): a time of day.
        if digits(i, 2) && b.get(i + 2) == Some(&b':') && digits(i + 3, 2) && !digit(i + 5) {
            let hour = (b[i] - b'0') * 10 + (b[i + 1] - b'0');
            let minute = (b[i + 3] - b'0') * 10 + (b[i + 4] - b'0');
            if hour < 24 && minute < 60 {
                return Some("a time of day");
            }
        }
    }
    // "issue 21", "Issue #12", "issues 12 and 27".
    let lower = comment.to_ascii_lowercase();
    for (at, _) in lower.match_indices("issue") {
        let rest = lower[at + "issue".len()..].trim_start_matches('s');
        let rest = rest.trim_start().trim_start_matches('#');
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Some("an issue number");
        }
    }
    None
}

/// The comment of a line of Rust source: the text after the first `//` outside a string
/// literal (a line that opens or closes a multi-line string is read as code, good enough
/// for comments, which are what is checked).
fn comment_of(line: &str) -> Option<&str> {
    let mut in_str = false;
    let mut escaped = false;
    let bytes = line.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'/' if bytes.get(i + 1) == Some(&b'/') => return Some(&line[i + 2..]),
            _ => {}
        }
    }
    None
}

/// Every diary line of a file's source: (line number, why, the line).
fn diary_lines(src: &str) -> Vec<(usize, &'static str, String)> {
    src.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let why = diary(comment_of(line)?)?;
            Some((i + 1, why, line.trim().to_string()))
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_comment_carries_a_date_a_time_of_day_or_an_issue_number() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let crates = std::fs::read_dir(root.join("crates")).expect("crates/");
    for c in crates.flatten() {
        rust_files(&c.path().join("src"), &mut files);
    }
    files.sort();
    assert!(files.len() > 50, "found only {} files", files.len());
    let mut found = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("read source");
        for (line, why, text) in diary_lines(&src) {
            let rel = f.strip_prefix(root).unwrap_or(f).display().to_string();
            found.push(format!("{rel}:{line}: {why}: {text}"));
        }
    }
    assert!(
        found.is_empty(),
        "comments that read as a diary:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_planted_diary_line_is_found() {
    let planted = "fn f() {}\n\
                   // measured 2026-11-26 on the VM\n\
                   let x = 1; // the sitting of 12:22-12:28\n\
                   /// Issue 21: labels ran off the edge.\n\
                   //! see issues #12 and 27\n";
    let whys: Vec<_> = diary_lines(planted)
        .into_iter()
        .map(|(l, w, _)| (l, w))
        .collect();
    assert_eq!(
        whys,
        [
            (2, "a date"),
            (3, "a time of day"),
            (4, "an issue number"),
            (5, "an issue number")
        ]
    );
}

#[test]
fn figures_ratios_and_strings_are_not_diaries() {
    let innocent = "// 1.06-1.54 ns at 230-250 ns; bits 11 and 10; interrupt-4:16\n\
                    let url = \"http://example.org/2026-11-26\";\n\
                    // a ratio of 3:1, 1.5:2.5, the issue of a store, 10:100 columns\n\
                    // campaign=2026-11 (a label)\n";
    assert_eq!(diary_lines(innocent), vec![]);
}
