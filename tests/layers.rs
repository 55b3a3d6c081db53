//! The layers of oscost, kept by a test. Every path a file of `src/` names inside the crate
//! (`use crate::…` and `super::…` trees, and the same paths written inline in code) is read;
//! an import from a higher layer, or a cycle between files, fails the test with the file and
//! the import named. Unit tests (`#[cfg(test)]` items) are read by neither rule: like a
//! crate's dev-dependencies they may drive a lower layer with a higher one's helpers (a
//! partner process, a run fixture) without the code depending on it.
//!
//! The layers, from the top; a module imports only from layers below it:
//!
//! ```text
//! main, lib     the binary's entry and the crate's list of modules
//! cli           one file per subcommand: arguments to a plan, a finished run to its outputs
//! store         the run history in SQLite, and the import of many hosts' runs
//! report        renders only: terminal, JSON/CSV/Markdown, SVG, HTML; one file per family
//! compare       judgement across runs and hosts: the regression gate, history drift, fleet
//! analysis      what one run's curves say: knees of the sweep and of memory latency
//! probes        what to measure, one module per family; knows nothing about output
//! engine        how to measure: calibration, sampling loop, statistics, checks, merging
//! evidence      what the machine saw: the clock, rusage, perf events, tracepoints, placement
//! input         reading run files (usable by every layer above the model it returns)
//! model         the data model: Run, Measurement, Summary
//! machine       facts about the host (its CPUs, caches, kernel...), and their views
//! journal       what oscost changed on the machine (knobs, mounts), to undo it
//! units, error  formatting and parsing of quantities; the error type (usable from anywhere)
//! escape        run text made inert for each output: terminal, CSV, Markdown, XML (below
//!               error, whose messages name files and values from runs)
//! ```
//!
//! Against the first order (DESIGN.md: `… report → compare → probes → engine → evidence →
//! model → machine → analysis`), `analysis` moved above `probes`: what it held for the
//! lower layers went where it belongs (sizes to `units`, bimodality to `engine`, which cache
//! a working set fits in to `machine`), and what is left reads a run's curves and the
//! probes' own definitions of them, so it sits above the probes and below `compare`. The
//! clock's read moved from `engine` to `evidence` (every evidence window is timed with it;
//! its calibration stays in the engine), and which CPUs a task may use from `evidence` to
//! `machine` (a fact the machine's collector reads). `journal` (undoing kernel knobs and
//! mounts) uses nothing of the tool and serves the probes, the tracer in `evidence`
//! and the cli, so it sits at the bottom; `input` returns the model, so it stands on it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers from the top; modules on one line are peers and may not import each other.
const LAYERS: &[&[&str]] = &[
    &["main", "lib"],
    &["cli"],
    &["store"],
    &["report"],
    &["compare"],
    &["analysis"],
    &["probes"],
    &["engine"],
    &["evidence"],
    &["input"],
    &["model"],
    &["machine"],
    &["journal"],
    &["units", "error"],
    &["escape"],
];

/// A layer's rank: 0 at the top.
fn rank(top: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&top))
}

/// Code with comments, string and character literals blanked (newlines kept), so that a
/// path in a doc comment or a message is not read as an import.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let end = (j + 1..b.len())
                .find(|&k| b[k..].starts_with(&close))
                .map_or(b.len(), |k| k + close.len());
            for &x in &b[i..end] {
                blank(&mut out, x);
            }
            i = end;
        } else if c == b'"' {
            blank(&mut out, c);
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            if i < b.len() {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\''), not a lifetime ('a).
            let len = if b.get(i + 1) == Some(&b'\\') {
                (i + 2..b.len().min(i + 12))
                    .find(|&k| b[k] == b'\'')
                    .map(|k| k + 1 - i)
            } else {
                let ch = std::str::from_utf8(&b[i + 1..b.len().min(i + 6)])
                    .ok()
                    .or_else(|| std::str::from_utf8(&b[i + 1..b.len().min(i + 5)]).ok())
                    .and_then(|s| s.chars().next());
                ch.map(|ch| i + 1 + ch.len_utf8())
                    .filter(|&k| b.get(k) == Some(&b'\''))
                    .map(|k| k + 1 - i)
            };
            match len {
                Some(n) => {
                    for &x in &b[i..i + n] {
                        blank(&mut out, x);
                    }
                    i += n;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8(out).expect("only ASCII was replaced")
}

/// Expands a use tree (`crate::{a::b, c::{d as e, f}}`) into its paths, renames dropped.
fn expand(tree: &str) -> Vec<String> {
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut tree = String::new();
    let mut k = 0;
    while k < words.len() {
        if words[k] == "as" {
            // `x as y` and `x as y,` / `x as y}`: keep what follows the new name.
            k += 1;
            if let Some(w) = words.get(k) {
                tree.push_str(w.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'));
            }
        } else {
            tree.push_str(words[k]);
        }
        k += 1;
    }
    let Some(open) = tree.find('{') else {
        return vec![tree.trim_end_matches("::*").to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (k, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            expand(p).into_iter().map(move |s| {
                if s == "self" {
                    prefix.trim_end_matches("::").to_string()
                } else {
                    format!("{prefix}{s}")
                }
            })
        })
        .collect()
}

/// Code with every `#[cfg(test)]` item (a test module, a test-only function or import)
/// blanked, newlines kept.
fn without_tests(code: &str) -> String {
    let mut b = code.as_bytes().to_vec();
    let mut at = 0;
    while let Some(k) = code[at..].find("#[cfg(test)]") {
        let start = at + k;
        // The item ends at its first `;` when that comes before any `{`, else at the brace
        // that closes its first `{`.
        let (semi, brace) = (code[start..].find(';'), code[start..].find('{'));
        let end = match (semi, brace) {
            (Some(s), Some(o)) if s < o => start + s + 1,
            (Some(s), None) => start + s + 1,
            (_, Some(o)) => {
                let mut depth = 0;
                let mut e = code.len();
                for (i, c) in code[start + o..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                e = start + o + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                e
            }
            (None, None) => code.len(),
        };
        for x in &mut b[start..end] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
        at = end;
    }
    String::from_utf8(b).expect("only ASCII was replaced")
}

/// Every path a file names inside the crate outside its unit tests: (line, path as written).
fn paths_in(src: &str) -> Vec<(usize, String)> {
    let code = without_tests(&code_only(src));
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut rest_code = code.clone().into_bytes();
    let mut at = 0;
    while let Some(k) = code[at..].find("use ") {
        let start = at + k;
        at = start + 4;
        let before = code[..start].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = code[start..].find(';').map(|e| start + e) else {
            break;
        };
        let tree = &code[start + 4..end];
        for p in expand(tree) {
            out.push((line_of(start), p));
        }
        for x in &mut rest_code[start..end] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
        at = end;
    }
    let rest = String::from_utf8(rest_code).expect("ASCII replaced");
    for root in ["crate::", "super::"] {
        let mut at = 0;
        while let Some(k) = rest[at..].find(root) {
            let start = at + k;
            at = start + root.len();
            let before = rest[..start].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let end = rest[start..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(rest.len(), |e| start + e);
            out.push((
                line_of(start),
                rest[start..end].trim_end_matches(':').to_string(),
            ));
        }
    }
    out
}

/// The module path of a source file: `src/report/sweep.rs` → [report, sweep];
/// `src/compare/mod.rs` → [compare]; `src/lib.rs` → [lib].
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") && parts.len() > 1 {
        parts.pop();
    }
    parts
}

/// An import, resolved to the module path it names (its items dropped), or None when it
/// leaves the crate (`std::…`, a dependency) or names a child module declared in the file.
fn resolve(from: &[String], path: &str, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = match segs.first().copied() {
        Some("crate") => {
            segs.remove(0);
            Vec::new()
        }
        Some("super") => {
            // In a file `a/b.rs` (module a::b) `super` is `a`; in `a/mod.rs` (module a) it is
            // the crate root.
            let mut m = from.to_vec();
            while segs.first() == Some(&"super") {
                segs.remove(0);
                m.pop();
            }
            m
        }
        Some("self") => {
            segs.remove(0);
            from.to_vec()
        }
        _ => return None,
    };
    if base.len() == 1 && (base[0] == "lib" || base[0] == "main") {
        base.clear();
    }
    // The longest prefix that is a module of the tree.
    let mut best = None;
    let mut cur = base.clone();
    if !cur.is_empty() && modules.contains(&cur) {
        best = Some(cur.clone());
    }
    for s in segs {
        cur.push(s.to_string());
        if modules.contains(&cur) {
            best = Some(cur.clone());
        }
    }
    best
}

/// A module path, e.g. [report, sweep].
type Module = Vec<String>;

/// Who names whom: for each module, the modules it names, with the first line and path.
type Edges = BTreeMap<Module, BTreeMap<Module, (usize, String)>>;

/// One finding: the file, the line, what it names and why that is wrong.
fn check(files: &BTreeMap<PathBuf, String>) -> Vec<String> {
    let modules: BTreeSet<Vec<String>> = files.keys().map(|p| module_of(p)).collect();
    let mut problems = Vec::new();
    let mut edges: Edges = BTreeMap::new();
    for (rel, src) in files {
        let from = module_of(rel);
        let top = from[0].clone();
        let Some(r_from) = rank(&top) else {
            problems.push(format!(
                "{}: module `{top}` is on no layer (add it to LAYERS, with its reason)",
                rel.display()
            ));
            continue;
        };
        for (line, path) in paths_in(src) {
            let Some(to) = resolve(&from, &path, &modules) else {
                continue;
            };
            if to == from {
                continue;
            }
            let to_top = &to[0];
            if *to_top != top {
                match rank(to_top) {
                    Some(r) if r > r_from => {}
                    Some(r) if r == r_from => problems.push(format!(
                        "src/{}:{line}: `{path}`: `{top}` and `{to_top}` are peers on one layer \
                         and may not import each other",
                        rel.display()
                    )),
                    _ => problems.push(format!(
                        "src/{}:{line}: `{path}`: `{top}` may not import from `{to_top}`, a \
                         higher layer",
                        rel.display()
                    )),
                }
            }
            // A module's own submodules are its parts, not its peers: a file may name its
            // children, and a child its parent, without that being a cycle.
            let parent_child = to.starts_with(&from) || from.starts_with(&to);
            if !parent_child {
                edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert((line, path));
            }
        }
    }
    for cycle in cycles(&edges) {
        let names: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
        let mut ties = Vec::new();
        for (i, a) in cycle.iter().enumerate() {
            for b in cycle.iter().skip(i + 1).chain(cycle.iter().take(i)) {
                if let Some((line, path)) = edges.get(a).and_then(|e| e.get(b)) {
                    ties.push(format!("{} (line {line}) names `{path}`", a.join("::")));
                }
            }
        }
        problems.push(format!(
            "cycle between {}: {}",
            names.join(", "),
            ties.join("; ")
        ));
    }
    problems
}

/// The strongly connected components of more than one module (Tarjan).
fn cycles(edges: &Edges) -> Vec<Vec<Vec<String>>> {
    struct State<'a> {
        edges: &'a Edges,
        index: BTreeMap<Vec<String>, usize>,
        low: BTreeMap<Vec<String>, usize>,
        stack: Vec<Vec<String>>,
        on: BTreeSet<Vec<String>>,
        next: usize,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit(s: &mut State, v: &Vec<String>) {
        s.index.insert(v.clone(), s.next);
        s.low.insert(v.clone(), s.next);
        s.next += 1;
        s.stack.push(v.clone());
        s.on.insert(v.clone());
        let targets: Vec<Vec<String>> = s
            .edges
            .get(v)
            .map(|e| e.keys().cloned().collect())
            .unwrap_or_default();
        for w in targets {
            if !s.index.contains_key(&w) {
                visit(s, &w);
                let lw = s.low[&w];
                let lv = s.low[v];
                s.low.insert(v.clone(), lv.min(lw));
            } else if s.on.contains(&w) {
                let iw = s.index[&w];
                let lv = s.low[v];
                s.low.insert(v.clone(), lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(&w);
                let done = &w == v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn read_tree(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            read_tree(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            out.insert(rel, std::fs::read_to_string(&p).unwrap());
        }
    }
}

#[test]
fn src_keeps_its_layers_and_has_no_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    read_tree(&root, &root, &mut files);
    let problems = check(&files);
    assert!(
        problems.is_empty(),
        "{} layering problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn tree(files: &[(&str, &str)]) -> BTreeMap<PathBuf, String> {
    files
        .iter()
        .map(|(p, s)| (PathBuf::from(p), s.to_string()))
        .collect()
}

#[test]
fn the_checker_finds_an_import_from_a_higher_layer() {
    let files = tree(&[
        ("lib.rs", "pub mod cli;\npub mod engine;\npub mod report;\n"),
        ("cli/mod.rs", "pub fn x() {}\n"),
        ("engine/mod.rs", "pub mod clock;\n"),
        (
            "engine/clock.rs",
            "// crate::report::x in a comment is no import\n\
             const S: &str = \"crate::report::table\";\n\
             use crate::report::{table::render, term};\nfn f() {}\n",
        ),
        ("report/mod.rs", "pub mod table;\npub mod term;\n"),
        (
            "report/table.rs",
            "use crate::engine::clock;\npub fn render() {}\n",
        ),
        (
            "report/term.rs",
            "fn g() { let _ = crate::engine::clock::f; }\n\
             #[cfg(test)]\nmod tests { use crate::cli::x; }\n",
        ),
    ]);
    let p = check(&files);
    // Two imports from a higher layer, and the cycle they close; the test module's import
    // of `cli` is not read.
    assert_eq!(p.len(), 3, "{p:#?}");
    assert!(
        p[0].starts_with(
            "src/engine/clock.rs:3: `crate::report::table::render`: `engine` may not import \
             from `report`, a higher layer"
        ),
        "{p:#?}"
    );
    assert!(p[1].contains("`crate::report::term`"), "{p:#?}");
    assert!(
        p[2].starts_with("cycle between engine::clock, report::table, report::term")
            && p[2].contains("report::term (line 1) names `crate::engine::clock::f`"),
        "{p:#?}"
    );
    assert!(!p.iter().any(|x| x.contains("crate::cli")), "{p:#?}");
}

#[test]
fn the_checker_finds_a_cycle_between_files_and_names_the_imports() {
    let files = tree(&[
        ("lib.rs", "pub mod cli;\n"),
        ("cli/mod.rs", "mod ctx;\nmod timeslice;\nmod run;\n"),
        ("cli/ctx.rs", "use super::timeslice::{run, Args};\n"),
        (
            "cli/timeslice.rs",
            "pub fn run() { super::ctx::check_memory(); }\n",
        ),
        ("cli/run.rs", "use super::ctx::x;\n"),
    ]);
    let p = check(&files);
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].starts_with("cycle between cli::ctx, cli::timeslice"),
        "{p:#?}"
    );
    assert!(
        p[0].contains("cli::ctx (line 1) names `super::timeslice::run`")
            && p[0].contains("cli::timeslice (line 1) names `super::ctx::check_memory`"),
        "{p:#?}"
    );
}

#[test]
fn children_and_peers_are_told_apart() {
    // A module file naming its children, and a child naming its parent, is no cycle; two
    // peers on one layer may not import each other; a module on no layer is named.
    let files = tree(&[
        (
            "lib.rs",
            "pub mod compare;\npub mod units;\npub mod error;\npub mod extra;\n",
        ),
        (
            "compare/mod.rs",
            "mod fleet;\nuse fleet::Fleet;\npub fn key() {}\n",
        ),
        (
            "compare/fleet.rs",
            "use super::key;\nuse crate::units::fmt;\npub struct Fleet;\n",
        ),
        ("units.rs", "use crate::error::Error;\npub fn fmt() {}\n"),
        ("error.rs", "pub struct Error;\n"),
        ("extra.rs", "\n"),
    ]);
    let p = check(&files);
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(
        p.iter()
            .any(|x| x.contains("`units` and `error` are peers")),
        "{p:#?}"
    );
    assert!(
        p.iter()
            .any(|x| x.contains("module `extra` is on no layer")),
        "{p:#?}"
    );
}
