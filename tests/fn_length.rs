//! No function in `src/` is longer than [`MAX_LINES`] lines, counted from the line of its
//! `fn` to the line of its closing brace: a longer one is split into the named steps it
//! already has. The few listed in [`NOT_YET_SPLIT`] are the ones still waiting for that, each
//! with what it holds; the list may only shrink (an entry that is no longer too long, or no
//! longer exists, fails the test too, so it is removed when its function is split).

use std::collections::BTreeMap;
use std::path::Path;

const MAX_LINES: usize = 100;

/// (file, function, why it is still long). Shrink only.
const NOT_YET_SPLIT: &[(&str, &str, &str)] = &[];

#[derive(Debug, PartialEq)]
struct LongFn {
    name: String,
    line: usize,
    lines: usize,
}

/// Every function of `src` (Rust source) with its first line and length in lines. Comments,
/// strings, raw strings and character literals are skipped, so a brace inside them does not
/// count; a `fn` without a body (a trait's declaration) is no function here.
fn functions(src: &str) -> Vec<LongFn> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    // Depth of braces and of parentheses/brackets.
    let (mut braces, mut parens) = (0usize, 0usize);
    // A `fn` seen whose body has not opened yet: (name, line, braces, parens).
    let mut pending: Option<(String, usize, usize, usize)> = None;
    // Open functions: (name, line, brace depth inside the body).
    let mut open: Vec<(String, usize, usize)> = Vec::new();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied().unwrap_or('\0');
        match c {
            '\n' => line += 1,
            '/' if next == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if next == '*' => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 1;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    } else if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                continue;
            }
            'r' if (next == '"' || next == '#') && (i == 0 || !ident(chars[i - 1])) => {
                let mut j = i + 1;
                let mut hashes = 0;
                while chars.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if chars.get(j) == Some(&'"') {
                    j += 1;
                    loop {
                        match chars.get(j) {
                            None => break,
                            Some('\n') => line += 1,
                            Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                                j += hashes + 1;
                                break;
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    i = j;
                    continue;
                }
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    if chars.get(i) == Some(&'\n') {
                        line += 1;
                    }
                    i += 1;
                }
            }
            '\'' => {
                // A character literal ('x', '\n', '\u{1F}'), not a lifetime ('a).
                if next == '\\' {
                    i += 2;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                } else if chars.get(i + 2) == Some(&'\'') {
                    i += 2;
                }
            }
            '(' | '[' => parens += 1,
            ')' | ']' => parens = parens.saturating_sub(1),
            ';' => {
                if matches!(&pending, Some((_, _, b, p)) if *b == braces && *p == parens) {
                    pending = None;
                }
            }
            '{' => {
                braces += 1;
                if let Some((name, at, b, p)) = pending.take() {
                    if b + 1 == braces && p == parens {
                        open.push((name, at, braces));
                    } else {
                        pending = Some((name, at, b, p));
                    }
                }
            }
            '}' => {
                if matches!(open.last(), Some((_, _, d)) if *d == braces) {
                    let (name, at, _) = open.pop().unwrap();
                    out.push(LongFn {
                        name,
                        line: at,
                        lines: line - at + 1,
                    });
                }
                braces = braces.saturating_sub(1);
            }
            'f' if next == 'n'
                && (i == 0 || !ident(chars[i - 1]))
                && chars.get(i + 2).is_some_and(|c| c.is_whitespace()) =>
            {
                let mut j = i + 2;
                while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                    j += 1;
                }
                let name: String = chars[j..].iter().take_while(|c| ident(**c)).collect();
                if !name.is_empty() {
                    pending = Some((name, line, braces, parens));
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_function_in_src_is_longer_than_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut long: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        for func in functions(&std::fs::read_to_string(f).unwrap()) {
            if func.lines <= MAX_LINES {
                continue;
            }
            if NOT_YET_SPLIT
                .iter()
                .any(|(file, name, _)| *file == rel && *name == func.name)
            {
                long.insert((rel.clone(), func.name.clone()), func.lines);
            } else {
                bad.push(format!(
                    "{rel}:{}: fn {} is {} lines (at most {MAX_LINES}): split it into its steps",
                    func.line, func.name, func.lines
                ));
            }
        }
    }
    for (file, name, _) in NOT_YET_SPLIT {
        if !long.contains_key(&(file.to_string(), name.to_string())) {
            bad.push(format!(
                "{file}: fn {name} is listed as not yet split but is no longer over \
                 {MAX_LINES} lines (or gone): remove it from NOT_YET_SPLIT"
            ));
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[test]
fn the_counter_sees_bodies_and_skips_what_only_looks_like_code() {
    let long_body = "    x += 1;\n".repeat(MAX_LINES);
    let src = format!(
        "trait T {{ fn declared(&self) -> [u8; 2]; }}\n\
         /// fn not_code() {{\n\
         fn short() -> &'static str {{ let _c = '{{'; \"}} fn fake() {{\" }}\n\
         fn long<'a>(x: &'a mut u32) {{\n{long_body}    let _r = r#\"}}\"#;\n}}\n\
         fn after() {{\n    /* }} */\n}}\n"
    );
    let found = functions(&src);
    let names: Vec<(&str, usize, usize)> = found
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines))
        .collect();
    assert_eq!(
        names,
        vec![
            ("short", 3, 1),
            ("long", 4, MAX_LINES + 3),
            ("after", MAX_LINES + 7, 3)
        ]
    );
}
