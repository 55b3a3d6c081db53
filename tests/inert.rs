//! Text from a run file is data, never code: one run file carrying every payload of the
//! hostile-input campaign (terminal escapes, a right-to-left override, spreadsheet formulas,
//! HTML and Markdown injection, in the host name, CPU model, kernel release, command line,
//! params, warnings, probe name, labels and the file's own name) goes through every command
//! and format; nothing executable or raw may come out.

use std::path::PathBuf;
use std::process::{Command, Output};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run-quick.json");
const ELF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/rvsim/programs/elf/loop-rv32imc.elf"
);

/// Every payload at once: an OSC title change, a bell, a screen clear, a C1 CSI, a
/// right-to-left override, a formula, a script, an attribute break-out and a pipe.
const PAYLOAD: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{202e}=HYPERLINK(\"http://evil\",\"click\")<script>alert(1)</script>\"><img src=x onerror=alert(1)>|[x](http://evil)";

/// Labels follow the --label rules (printable), so they carry what those rules allow.
const LABEL_PAYLOAD: &str = "=HYPERLINK(\"http://evil\")<script>alert(1)</script>|x";

fn hostile_run(samples_scale: f64, started: &str) -> serde_json::Value {
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    r["machine"]["hostname"] = format!("h{PAYLOAD}").into();
    r["machine"]["cpu"]["model_name"] = format!("+cpu{PAYLOAD}").into();
    r["machine"]["kernel"]["release"] = format!("=2+2{PAYLOAD}").into();
    r["command"] = serde_json::json!(["oscost", "run", PAYLOAD]);
    r["started_at"] = started.into();
    r["warnings"] = serde_json::json!([format!("@run{PAYLOAD}")]);
    r["labels"] = serde_json::json!({"host": LABEL_PAYLOAD, "rack": "@SUM(A1)"});
    r.as_object_mut().unwrap().remove("run_id");
    for m in r["measurements"].as_array_mut().unwrap() {
        m["probe"] = format!("-{PAYLOAD}{}", m["probe"].as_str().unwrap()).into();
        m["params"][PAYLOAD] = PAYLOAD.into();
        m["warnings"]
            .as_array_mut()
            .unwrap()
            .push(format!("={PAYLOAD}").into());
        for s in m["samples"].as_array_mut().unwrap() {
            *s = (s.as_f64().unwrap() * samples_scale).into();
        }
    }
    r
}

/// The payload's first characters (escapes and the override), for file names.
fn head() -> String {
    PAYLOAD.chars().take(18).collect()
}

struct Bench {
    _t: tempfile::TempDir,
    dir: PathBuf,
}

impl Bench {
    fn oscost(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_oscost"))
            .env("HOME", &self.dir)
            .env("XDG_DATA_HOME", self.dir.join("xdg"))
            .env("OSCOST_RUNTIME_DIR", self.dir.join("rt"))
            .env_remove("OSCOST_DB")
            .env("COLUMNS", "400")
            .args(args)
            .output()
            .unwrap()
    }
    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap()
    }
}

/// No control character but newline and no bidirectional control: nothing a terminal or a
/// text renderer acts on.
fn assert_inert_text(what: &str, text: &str) {
    if let Some(c) = text
        .chars()
        .find(|&c| c != '\n' && (c.is_control() || oscost::escape::is_unsafe(c)))
    {
        panic!("{what}: raw {:?} in:\n{text}", c);
    }
}

/// Nothing a browser or a Markdown viewer would run or render as markup.
fn assert_no_markup(what: &str, text: &str) {
    for raw in ["<script", "<img", "onerror=alert(1)>"] {
        assert!(!text.contains(raw), "{what}: raw {raw:?} in:\n{text}");
    }
}

/// Every CSV cell: no formula start (a number is a number), no control character.
fn assert_csv_inert(what: &str, text: &str) {
    assert_inert_text(what, text);
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut cells = 0;
    for rec in r.records() {
        for cell in rec.unwrap().iter() {
            cells += 1;
            if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
                assert!(cell.parse::<f64>().is_ok(), "{what}: formula cell {cell:?}");
            }
        }
    }
    assert!(cells > 10, "{what}: no cells read from:\n{text}");
}

/// Every Markdown table row has as many cells as its header (no pipe broke out of a cell).
fn assert_markdown_inert(what: &str, text: &str) {
    assert_inert_text(what, text);
    assert_no_markup(what, text);
    // No link: every "](" has its bracket escaped.
    for (i, _) in text.match_indices("](") {
        assert!(
            i > 0 && &text[i - 1..i] == "\\",
            "{what}: a link at {i} in:\n{text}"
        );
    }
    let cells = |l: &str| {
        let mut n = 0;
        let mut prev = ' ';
        for c in l.chars() {
            if c == '|' && prev != '\\' {
                n += 1;
            }
            prev = if prev == '\\' && c == '\\' { ' ' } else { c };
        }
        n
    };
    let mut header = None;
    for l in text.lines().filter(|l| l.starts_with('|')) {
        match header {
            None => header = Some(cells(l)),
            Some(h) => assert_eq!(cells(l), h, "{what}: a cell broke out in {l:?}"),
        }
    }
    assert!(header.is_some(), "{what}: no table in:\n{text}");
}

fn assert_svg_well_formed(what: &str, text: &str) {
    assert_no_markup(what, text);
    if let Err(e) = roxmltree::Document::parse(text) {
        panic!("{what}: not well-formed XML ({e})");
    }
}

fn ok(what: &str, o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.code().unwrap_or(9) <= 1, "{what}: {err}");
    assert_inert_text(&format!("{what} (stderr)"), &err);
    out
}

#[test]
fn every_payload_through_every_command_and_format_comes_out_inert() {
    let t = tempfile::tempdir().unwrap();
    let b = Bench {
        dir: t.path().to_path_buf(),
        _t: t,
    };
    let write = |name: &str, v: serde_json::Value| {
        std::fs::write(b.dir.join(name), v.to_string()).unwrap();
        b.path(name)
    };
    let a = write("a.json", hostile_run(1.0, "2026-01-01T00:00:00Z"));
    let bb = write("b.json", hostile_run(1.5, "2026-01-02T00:00:00Z"));
    // The file's own name carries the payload too (it is shown as where a run came from).
    let evil_name = format!("n{}.json", head());
    let c = write(&evil_name, hostile_run(2.0, "2026-01-03T00:00:00Z"));
    let db = b.path("h.sqlite");

    let o = b.oscost(&["history", "import", &a, &bb, &c, "--db", &db]);
    let out = ok("history import", &o);
    assert!(out.contains("imported 3 run(s)"), "{out}");
    assert_inert_text("history import", &out);

    let text_commands: &[&[&str]] = &[
        &["history", "list", "--db", &db],
        &["history", "show", "3", "--db", &db],
        &["compare", &a, &bb],
        &["compare", "1", "3", "--db", &db],
        &["fleet", "--db", &db],
        &["fleet", "--db", &db, "--group-by", "kernel"],
        &["fleet", "--db", &db, "--group-by", "rack"],
        &["export", &a, "--format", "json"],
        &["history", "export", "2", "--format", "json", "--db", &db],
    ];
    for args in text_commands {
        let what = args.join(" ");
        let out = ok(&what, &b.oscost(args));
        assert!(out.len() > 100, "{what}: {out}");
        assert_inert_text(&what, &out);
        assert!(
            out.contains("\\u{1b}]0;pwned"),
            "{what}: payload not shown: {out}"
        );
    }

    for (what, args) in [
        ("export csv", vec!["export", &a, "--format", "csv"]),
        (
            "history export csv",
            vec!["history", "export", "1", "--format", "csv", "--db", &db],
        ),
    ] {
        assert_csv_inert(what, &ok(what, &b.oscost(&args)));
    }
    let f_csv = b.path("f.csv");
    for group in [None, Some("kernel"), Some("rack"), Some("host")] {
        let mut args = vec!["fleet", "--db", &db, "--csv", &f_csv];
        args.extend(group.map(|g| ["--group-by", g]).into_iter().flatten());
        let what = args.join(" ");
        ok(&what, &b.oscost(&args));
        assert_csv_inert(&what, &b.read("f.csv"));
    }

    for (what, args) in [
        (
            "export markdown",
            vec!["export", &a, "--format", "markdown"],
        ),
        (
            "history export markdown",
            vec![
                "history", "export", "3", "--format", "markdown", "--db", &db,
            ],
        ),
        (
            "compare markdown",
            vec!["compare", &a, &bb, "--format", "markdown"],
        ),
    ] {
        assert_markdown_inert(what, &ok(what, &b.oscost(&args)));
    }

    // HTML and SVG.
    let (svg, html, report, fleet) = (
        b.path("c.svg"),
        b.path("c.html"),
        b.path("r.html"),
        b.path("f.html"),
    );
    ok(
        "compare --svg --html",
        &b.oscost(&["compare", &a, &bb, "--svg", &svg, "--html", &html]),
    );
    assert_svg_well_formed("compare --svg", &b.read("c.svg"));
    ok(
        "report",
        &b.oscost(&["report", &a, &bb, "3", "--db", &db, "-o", &report]),
    );
    ok("fleet -o", &b.oscost(&["fleet", "--db", &db, "-o", &fleet]));
    for name in ["c.html", "r.html", "f.html"] {
        let page = b.read(name);
        assert_no_markup(name, &page);
        assert_inert_text(name, &page);
        // Every inline figure is well-formed XML.
        for (i, part) in page.split("<svg").skip(1).enumerate() {
            let end = part
                .find("</svg>")
                .unwrap_or_else(|| panic!("{name}: open <svg>"));
            let fig = format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\"{}</svg>",
                &part[..end]
            );
            assert_svg_well_formed(&format!("{name} figure {i}"), &fig);
        }
    }

    // Errors name the file as given: shown, never acted on.
    let missing = b.path(&format!("m{PAYLOAD}.json"));
    let o = b.oscost(&["report", &missing, "-o", &report]);
    assert_eq!(o.status.code(), Some(2));
    assert_inert_text(
        "report of a missing file (stderr)",
        &String::from_utf8_lossy(&o.stderr),
    );

    // The simulator's file names: an ELF named with the payload, in text, JSON and CSV.
    let elf = b.dir.join(format!("={}.elf", head()));
    std::fs::copy(ELF, &elf).unwrap();
    let e = elf.to_str().unwrap();
    let out = ok(
        "sim run",
        &b.oscost(&["sim", "run", e, "--json", &b.path("s.json")]),
    );
    assert_inert_text("sim run", &out);
    assert_inert_text("sim run --json", &b.read("s.json"));
    let out = ok(
        "sim compare",
        &b.oscost(&["sim", "compare", e, ELF, "--csv", &b.path("s.csv")]),
    );
    assert_inert_text("sim compare", &out);
    assert_csv_inert("sim compare --csv", &b.read("s.csv"));
}

#[test]
fn a_run_measured_here_is_inert_too() {
    // The command line is part of the run: a file name with the payload in it.
    let t = tempfile::tempdir().unwrap();
    let b = Bench {
        dir: t.path().to_path_buf(),
        _t: t,
    };
    let json = b.path(&format!("o{}.json", head()));
    let out = ok(
        "call",
        &b.oscost(&["call", "--quick", "--no-save", "--explain", "--json", &json]),
    );
    assert_inert_text("call", &out);
    let text = std::fs::read_to_string(&json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let arg = v["command"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap();
    assert!(arg.contains("\\u{1b}]0;pwned"), "{arg}");
    assert!(!arg.chars().any(oscost::escape::is_unsafe), "{arg:?}");
}
