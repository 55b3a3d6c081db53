//! Golden outputs: recorded runs (tests/fixtures/run-quick.json and tests/fixtures/runs/*.json,
//! one per family, made by tests/fixtures/runs/record.sh) rendered through the real commands
//! (`history show` at 80 and 100 columns, `export` as JSON, CSV and Markdown, `report`,
//! `compare` in every format with its SVG and HTML, `fleet` over a synthetic fleet made from
//! the recorded run) and compared byte for byte with the files under tests/golden/. The
//! sections and figures that only a measuring command prints after measuring (the sweep and
//! memory-latency reports, the fault and mmap-lab tables, their SVGs and CSV) are rendered
//! from the same recorded runs by the report functions those commands call.
//!
//! A change to any output shows here as a failure naming each file that differs and its
//! first differing line. When the change is intended, rewrite the goldens with
//! `OSCOST_BLESS=1 cargo test --test golden` and commit them with the change.
//!
//! Nothing here depends on the machine or the clock: no colour (NO_COLOR, output to a pipe),
//! a fixed COLUMNS, HOME and the history inside a temporary directory whose path is masked as
//! `<tmp>`, and the time a run was imported (the only "now" that reaches an output) masked.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

use common::{read_recorded_run as read_run, recorded_run_file as run_file, recorded_runs};

/// Where the commands find a recorded run: `runs/NAME.json` relative to the temporary
/// directory they run in (a copy), so that no output depends on where the repository is.
fn run_arg(name: &str) -> String {
    format!("runs/{name}.json")
}

/// Collects every golden that differs, so one run of the test names them all.
struct Goldens {
    tmp: tempfile::TempDir,
    bless: bool,
    failures: Vec<String>,
    seen: Vec<PathBuf>,
    /// The recorded runs, and the outputs of each gathered for its one golden file.
    runs: Vec<&'static str>,
    bundles: Vec<(&'static str, Vec<Section>)>,
}

/// One output of a run's golden file: its name ("show/fault.80.txt") and bytes.
type Section = (String, Vec<u8>);

/// The directories of the outputs that belong to one recorded run: they are kept together in
/// `tests/golden/runs/NAME.txt` (one file a run, so a family's goldens are one file).
const PER_RUN: &[&str] = &["show", "export", "report", "shown"];

/// How a section of a run's golden file starts: its output's name and length.
fn section_head(name: &str, len: usize) -> String {
    format!("==> {name} ({len} bytes)\n")
}

/// A run's golden file as its sections (name, bytes); None when it is not one.
fn sections(mut bytes: &[u8]) -> Option<Vec<Section>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let nl = bytes.iter().position(|&b| b == b'\n')?;
        let head = std::str::from_utf8(&bytes[..nl]).ok()?;
        let (name, len) = head.strip_prefix("==> ")?.rsplit_once(" (")?;
        let len: usize = len.strip_suffix(" bytes)")?.parse().ok()?;
        let body = bytes.get(nl + 1..nl + 1 + len)?;
        out.push((name.to_string(), body.to_vec()));
        bytes = bytes.get(nl + 2 + len..)?;
    }
    Some(out)
}

impl Goldens {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("runs")).unwrap();
        for r in recorded_runs() {
            std::fs::copy(run_file(r), tmp.path().join(run_arg(r))).unwrap();
        }
        let runs = recorded_runs();
        Goldens {
            tmp,
            bless: std::env::var_os("OSCOST_BLESS").is_some_and(|v| v == "1"),
            failures: Vec::new(),
            seen: Vec::new(),
            bundles: runs.iter().map(|r| (*r, Vec::new())).collect(),
            runs,
        }
    }

    fn dir(&self) -> &Path {
        self.tmp.path()
    }

    /// The temporary directory's path, and the import time of a stored run, masked.
    fn mask(&self, bytes: &[u8]) -> Vec<u8> {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return bytes.to_vec();
        };
        let tmp = self.dir().to_string_lossy().to_string();
        let mut out = text.replace(&tmp, "<tmp>");
        for key in ["\"imported_at\": \"", "\"saved_at\": \""] {
            out = mask_after(&out, key);
        }
        out.into_bytes()
    }

    /// The recorded run an output belongs to ("show/fault.80.txt": fault), if any.
    fn run_of(&self, name: &str) -> Option<usize> {
        let (dir, file) = name.split_once('/')?;
        PER_RUN.contains(&dir).then_some(())?;
        self.runs.iter().position(|r| {
            file.strip_prefix(r)
                .is_some_and(|rest| rest.starts_with('.'))
        })
    }

    fn check(&mut self, name: &str, bytes: &[u8]) {
        let bytes = self.mask(bytes);
        if let Some(i) = self.run_of(name) {
            self.bundles[i].1.push((name.to_string(), bytes));
            return;
        }
        self.compare(name, bytes);
    }

    /// Each run's outputs against its one golden file.
    fn check_runs(&mut self) {
        for (run, outputs) in std::mem::take(&mut self.bundles) {
            let mut all = Vec::new();
            for (name, bytes) in &outputs {
                all.extend_from_slice(section_head(name, bytes.len()).as_bytes());
                all.extend_from_slice(bytes);
                all.push(b'\n');
            }
            let name = format!("runs/{run}.txt");
            let golden = std::fs::read(Path::new(ROOT).join("tests/golden").join(&name));
            match golden.ok().and_then(|g| sections(&g)) {
                // Name the outputs that differ, each with its first differing line.
                Some(want) if !self.bless => {
                    for (out, bytes) in &outputs {
                        match want.iter().find(|(n, _)| n == out) {
                            Some((_, w)) if w == bytes => {}
                            Some((_, w)) => self.failures.push(format!(
                                "{name} ({out}): {}",
                                first_difference(
                                    &String::from_utf8_lossy(w),
                                    &String::from_utf8_lossy(bytes)
                                )
                            )),
                            None => self.failures.push(format!("{name}: no section {out}")),
                        }
                    }
                    let stale: Vec<&String> = want
                        .iter()
                        .map(|(n, _)| n)
                        .filter(|n| !outputs.iter().any(|(o, _)| o == *n))
                        .collect();
                    if !stale.is_empty() {
                        self.failures
                            .push(format!("{name}: sections no output produces: {stale:?}"));
                    }
                    self.seen
                        .push(Path::new(ROOT).join("tests/golden").join(&name));
                }
                _ => self.compare(&name, all),
            }
        }
    }

    fn compare(&mut self, name: &str, bytes: Vec<u8>) {
        let path = Path::new(ROOT).join("tests/golden").join(name);
        self.seen.push(path.clone());
        if self.bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
            return;
        }
        match std::fs::read(&path) {
            Ok(want) if want == bytes => {}
            Ok(want) => self.failures.push(format!(
                "{name}: {}",
                first_difference(
                    &String::from_utf8_lossy(&want),
                    &String::from_utf8_lossy(&bytes)
                )
            )),
            Err(e) => self.failures.push(format!("{name}: no golden file ({e})")),
        }
    }

    /// Runs oscost with HOME, XDG_DATA_HOME and TMPDIR in the temporary directory, no colour
    /// and `columns` columns: its exit code, stdout and stderr.
    fn oscost(&self, args: &[&str], columns: usize) -> (i32, Vec<u8>, Vec<u8>) {
        let o = Command::new(env!("CARGO_BIN_EXE_oscost"))
            .current_dir(self.dir())
            .env("HOME", self.dir())
            .env("XDG_DATA_HOME", self.dir().join("xdg"))
            .env("TMPDIR", self.dir())
            .env("NO_COLOR", "1")
            .env("COLUMNS", columns.to_string())
            .env_remove("OSCOST_DB")
            .env_remove("CLICOLOR_FORCE")
            .args(args)
            .output()
            .unwrap();
        (o.status.code().unwrap_or(-1), o.stdout, o.stderr)
    }

    /// A command's whole terminal output: stdout, then its exit code and stderr.
    fn check_command(&mut self, name: &str, args: &[&str], columns: usize) {
        let (code, out, err) = self.oscost(args, columns);
        let mut all = out;
        all.extend_from_slice(format!("--- exit {code}; stderr:\n").as_bytes());
        all.extend_from_slice(&err);
        self.check(name, &all);
    }

    /// A file a command wrote (its path relative to the temporary directory).
    fn check_file(&mut self, name: &str, path: &Path) {
        let bytes = std::fs::read(self.dir().join(path)).unwrap_or_else(|e| panic!("{name}: {e}"));
        self.check(name, &bytes);
    }

    /// A file the commands write or read, relative to the temporary directory they run in
    /// (an absolute path would put the directory's name, and its length, into the output).
    fn path(&self, name: &str) -> String {
        name.to_string()
    }
}

/// `key` followed by a value up to the next quote: the value replaced by `<masked>`.
fn mask_after(text: &str, key: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(key) {
        let start = i + key.len();
        out.push_str(&rest[..start]);
        out.push_str("<masked>");
        let end = rest[start..]
            .find('"')
            .map(|j| start + j)
            .unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn first_difference(want: &str, got: &str) -> String {
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!("line {}:\n  golden: {w}\n  now:    {g}", i + 1);
        }
    }
    format!(
        "{} lines in the golden, {} now (or a difference in line endings)",
        want.lines().count(),
        got.lines().count()
    )
}

/// The recorded runs through the commands that read a run file or the history.
fn run_outputs(g: &mut Goldens) {
    let db = g.path("history.sqlite");
    let runs = recorded_runs();
    let files: Vec<String> = runs.iter().map(|r| run_arg(r)).collect();
    for f in &files {
        let (code, _, err) = g.oscost(&["history", "import", f, "--db", &db], 100);
        assert_eq!(code, 0, "{f}: {}", String::from_utf8_lossy(&err));
    }
    g.check_command("history/list.txt", &["history", "list", "--db", &db], 100);
    for (i, (name, file)) in runs.iter().zip(&files).enumerate() {
        let id = (i + 1).to_string();
        for cols in [80, 100] {
            g.check_command(
                &format!("show/{name}.{cols}.txt"),
                &["history", "show", &id, "--db", &db],
                cols,
            );
        }
        for (format, ext) in [("json", "json"), ("csv", "csv"), ("markdown", "md")] {
            g.check_command(
                &format!("export/{name}.{ext}"),
                &["export", file, "--format", format],
                100,
            );
        }
        let html = g.path(&format!("{name}.html"));
        g.check_command(
            &format!("report/{name}.txt"),
            &["report", file, "-o", &html],
            100,
        );
        g.check_file(&format!("report/{name}.html"), Path::new(&html));
    }
    // Several runs side by side, two of them from the history.
    let html = g.path("side-by-side.html");
    g.check_command(
        "report/side-by-side.txt",
        &[
            "report", &files[1], "3", &files[6], "-o", &html, "--db", &db,
        ],
        100,
    );
    g.check_file("report/side-by-side.html", Path::new(&html));
}

/// `compare` in every format, its SVG and HTML, the gate's exit code, and the refusal of
/// two runs with nothing in common (other CPUs).
fn compare_outputs(g: &mut Goldens) {
    let (a, b) = (run_arg("run-quick-a"), run_arg("run-quick-b"));
    let db = g.path("empty.sqlite");
    let other = run_arg("run-quick");
    g.check_command(
        "compare/unpaired.txt",
        &["compare", &other, &b, "--db", &db],
        100,
    );
    for cols in [80, 100] {
        g.check_command(
            &format!("compare/text.{cols}.txt"),
            &["compare", &a, &b, "--db", &db],
            cols,
        );
    }
    for format in ["markdown", "json"] {
        g.check_command(
            &format!("compare/{format}.txt"),
            &["compare", &a, &b, "--format", format, "--db", &db],
            100,
        );
    }
    let (svg, html) = (g.path("compare.svg"), g.path("compare.html"));
    g.check_command(
        "compare/gate.txt",
        &[
            "compare",
            &b,
            &a,
            "--fail-above",
            "5%",
            "--svg",
            &svg,
            "--html",
            &html,
            "--db",
            &db,
        ],
        100,
    );
    g.check_file("compare/gate.svg", Path::new(&svg));
    g.check_file("compare/gate.html", Path::new(&html));
}

/// `fleet` over eight synthetic hosts made from the recorded run (bench/fleet-synth.py,
/// seeded), one of them planted slower on another kernel.
fn fleet_outputs(g: &mut Goldens) {
    let o = Command::new("python3")
        .current_dir(g.dir())
        .arg(Path::new(ROOT).join("bench/fleet-synth.py"))
        .arg(run_arg("run-quick"))
        .arg("fleet-runs")
        .args(["--runs", "8", "--planted", "1", "--seed", "7"])
        .output()
        .expect("python3 runs bench/fleet-synth.py");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let db = g.path("fleet.sqlite");
    let (code, _, err) = g.oscost(&["history", "import", "fleet-runs", "--db", &db], 100);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    for cols in [80, 100] {
        g.check_command(
            &format!("fleet/hosts.{cols}.txt"),
            &["fleet", "--db", &db],
            cols,
        );
    }
    let (json, csv, html) = (
        g.path("fleet.json"),
        g.path("fleet.csv"),
        g.path("fleet.html"),
    );
    g.check_command(
        "fleet/files.txt",
        &[
            "fleet", "--db", &db, "--json", &json, "--csv", &csv, "-o", &html,
        ],
        100,
    );
    g.check_file("fleet/fleet.json", Path::new(&json));
    g.check_file("fleet/fleet.csv", Path::new(&csv));
    g.check_file("fleet/fleet.html", Path::new(&html));
    g.check_command(
        "fleet/group-by-kernel.txt",
        &["fleet", "--db", &db, "--group-by", "kernel"],
        100,
    );
}

/// The measuring commands' own sections, figures and CSV, from the recorded runs, as
/// `ctx sweep`, `mem latency`, `fault` and `mmap lab` render them after measuring (the
/// caches are the recorded machine's).
fn command_sections(g: &mut Goldens) {
    use oscost::report;
    let sweep = read_run("sweep");
    let caches = sweep.machine.data_cache_sizes(1);
    let a = oscost::analysis::sweep::analyze(&sweep, &caches, &[], &oscost::report::sweep::invalid);
    g.check(
        "sections/sweep.txt",
        report::sweep::render(&a, &sweep, true).as_bytes(),
    );
    g.check(
        "sections/sweep.lmbench.txt",
        report::sweep::lmbench(&sweep).as_bytes(),
    );
    let svg = report::sweep::svg(&a, &sweep.machine.short_name()).unwrap();
    g.check("sections/sweep.svg", svg.as_bytes());
    g.check(
        "sections/sweep.analysis.json",
        serde_json::to_string_pretty(&a).unwrap().as_bytes(),
    );

    let mem = read_run("memlat");
    let caches = mem.machine.data_cache_sizes(1);
    let a = oscost::analysis::memlat::analyze(&mem, &caches);
    g.check(
        "sections/memlat.txt",
        report::memlat::render(&a, &mem, false).as_bytes(),
    );
    let svg = report::memlat::svg(&a, &mem.machine.short_name()).unwrap();
    g.check("sections/memlat.svg", svg.as_bytes());
    g.check(
        "sections/memlat.analysis.json",
        serde_json::to_string_pretty(&a).unwrap().as_bytes(),
    );
    // The sweep again, with the memory curve's knees as extra boundaries.
    let knees: Vec<f64> = a
        .curves
        .iter()
        .take(1)
        .flat_map(|c| c.knees.iter().map(|k| k.last_below))
        .collect();
    let a = oscost::analysis::sweep::analyze(
        &sweep,
        &sweep.machine.data_cache_sizes(1),
        &knees,
        &oscost::report::sweep::invalid,
    );
    g.check(
        "sections/sweep.mem-knees.txt",
        report::sweep::render(&a, &sweep, true).as_bytes(),
    );

    let fault = read_run("fault");
    let mut text = report::fault::table(&fault);
    text.push_str(&report::fault::latency_table(&fault));
    for m in &fault.measurements {
        text.push_str(&report::timev::render(m));
    }
    g.check("sections/fault.txt", text.as_bytes());
    for (stem, svg) in report::fault::latency_svgs(&fault) {
        g.check(&format!("sections/fault.{stem}.svg"), svg.as_bytes());
    }

    let lab = read_run("mmap");
    g.check("sections/mmap.txt", report::lab::table(&lab).as_bytes());
    g.check("sections/mmap.csv", report::lab::csv(&lab).as_bytes());
    for (stem, svg) in report::lab::svgs(&lab) {
        g.check(&format!("sections/mmap.{stem}.svg"), svg.as_bytes());
    }
}

/// What each measuring command prints and writes after measuring, asked through its family
/// (report::family) as the commands ask it: the text, the lines after the table, and the
/// names of the figures and tables it writes.
fn family_sections(g: &mut Goldens) {
    use oscost::report::family::Ask;
    for family in oscost::report::FAMILIES
        .iter()
        .filter(|f| f.about().has_shown)
    {
        let name = family
            .about()
            .fixture
            .expect("a family that shows its own has a recorded run");
        let run = read_run(name);
        let ask = Ask {
            caches: run.machine.data_cache_sizes(1),
            figures: true,
            ..Ask::default()
        };
        let shown = family.shown(&run, &ask).unwrap();
        let mut text = shown.text.unwrap_or_default();
        text.push_str("--- after the table\n");
        text.push_str(&shown.after);
        text.push_str("--- files\n");
        for (stem, _) in &shown.figures {
            text.push_str(&format!("{stem}.svg\n"));
        }
        for (file, _) in &shown.tables {
            text.push_str(&format!("{file}\n"));
        }
        g.check(&format!("shown/{name}.txt"), text.as_bytes());
    }
}

/// One test, so that the fixed COLUMNS the in-process renderers read is set before any
/// other thread of this binary runs.
#[test]
fn recorded_runs_render_as_the_goldens() {
    std::env::set_var("COLUMNS", "100");
    std::env::set_var("NO_COLOR", "1");
    let mut g = Goldens::new();
    run_outputs(&mut g);
    compare_outputs(&mut g);
    fleet_outputs(&mut g);
    command_sections(&mut g);
    family_sections(&mut g);
    g.check_runs();
    // A golden that nothing produces any more is stale: it must go with the output it held.
    let dir = Path::new(ROOT).join("tests/golden");
    let mut stale = Vec::new();
    for sub in std::fs::read_dir(&dir).unwrap() {
        let sub = sub.unwrap().path();
        for f in std::fs::read_dir(&sub).unwrap() {
            let f = f.unwrap().path();
            if !g.seen.contains(&f) {
                stale.push(f.display().to_string());
            }
        }
    }
    if g.bless {
        for f in &stale {
            std::fs::remove_file(f).unwrap();
        }
        return;
    }
    assert!(stale.is_empty(), "goldens no output produces: {stale:?}");
    assert!(
        g.failures.is_empty(),
        "{} output(s) differ from tests/golden (OSCOST_BLESS=1 rewrites them when the change \
         is intended):\n{}",
        g.failures.len(),
        g.failures.join("\n")
    );
}
