//! Every view fits the terminal: each command's terminal output, rendered from the
//! recorded runs (tests/fixtures/runs/*.json, tests/fixtures/run-quick.json) without
//! measuring, at COLUMNS=80 and 100, has no line wider than COLUMNS.
//!
//! Every command's `--help` runs as the binary at those widths too.
//!
//! The commands that read runs (history list/show, compare, fleet, report) and the simulator
//! (sim run/compare/sweep/bench/conformance on the committed tiny programs) run as the
//! binary. `machine` runs as the binary on this machine and renders the recorded machines'
//! trees. The measuring commands (run, call, syscall, ctx, ctx sweep, ctx timeslice,
//! mem latency, fault, mmap lab, ipc, c2c, rpc) cannot print without measuring: their stdout
//! after measuring is rendered from the recorded run of their kind by the function they
//! print with (report::screen::measured) and their family's report (report::family), with
//! and without `--explain`.

mod common;

use oscost::model::Run;
use oscost::report::family::Ask;
use oscost::report::term::Term;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const WIDTHS: [usize; 2] = [80, 100];

use common::{read_recorded_run as read_run, recorded_run_file as run_file, recorded_runs};

/// The lines of `text` wider than `width` (in characters): (view, columns, line), the view
/// named by `what` and the width.
fn too_wide(what: &str, text: &str, width: usize) -> Vec<(String, usize, String)> {
    text.lines()
        .map(|l| (l.chars().count(), l))
        .filter(|(n, _)| *n > width)
        .map(|(n, l)| (format!("{what} at {width} columns"), n, l.to_string()))
        .collect()
}

/// Collects every line over the width, so one run of the test names them all.
struct Widths {
    tmp: tempfile::TempDir,
    over: Vec<(String, usize, String)>,
    checked: usize,
}

impl Widths {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        Widths {
            tmp,
            over: Vec::new(),
            checked: 0,
        }
    }

    fn check(&mut self, what: &str, text: &str, width: usize) {
        assert!(!text.trim().is_empty(), "{what}: printed nothing");
        self.checked += 1;
        self.over.extend(too_wide(what, text, width));
    }

    /// Imports run files into a history (its message names the files: not a view).
    fn import(&self, runs: &Path, db: &Path) {
        let o = Command::new(env!("CARGO_BIN_EXE_oscost"))
            .env("HOME", self.tmp.path())
            .env("XDG_DATA_HOME", self.tmp.path().join("xdg"))
            .env("TMPDIR", self.tmp.path())
            .arg("history")
            .arg("import")
            .arg(runs)
            .arg("--db")
            .arg(db)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    /// The binary with HOME, XDG_DATA_HOME and TMPDIR in the temporary directory, no colour,
    /// `width` columns; its stdout and stderr are checked, and its exit code must be
    /// one of `codes`.
    fn oscost(&mut self, args: &[&str], width: usize, codes: &[i32]) -> String {
        let o = Command::new(env!("CARGO_BIN_EXE_oscost"))
            .current_dir(self.tmp.path())
            .env("HOME", self.tmp.path())
            .env("XDG_DATA_HOME", self.tmp.path().join("xdg"))
            .env("TMPDIR", self.tmp.path())
            .env("NO_COLOR", "1")
            .env("COLUMNS", width.to_string())
            .env_remove("OSCOST_DB")
            .args(args)
            .output()
            .unwrap();
        let tmp = self.tmp.path().to_str().unwrap();
        let what = format!("oscost {}", args.join(" "))
            .replace(&format!("{ROOT}/"), "")
            .replace(tmp, "<tmp>");
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        );
        let code = o.status.code().unwrap_or(-1);
        assert!(codes.contains(&code), "{what}: exit {code}\n{out}{err}");
        // A refusal is one line by design (exit 2): it names the user's files, at any length.
        if code == 2 {
            assert!(!err.trim().is_empty(), "{what}: exit 2 without a reason");
            self.checked += 1;
            self.over.extend(too_wide(&what, &out, width));
        } else {
            self.check(&what, &format!("{out}{err}"), width);
        }
        out
    }
}

/// The commands that read runs: history list and show, compare (each kind against itself and
/// two quick runs), fleet and report.
fn run_readers(w: &mut Widths, width: usize) {
    let db = w.tmp.path().join("history.sqlite");
    let db = db.to_str().unwrap().to_string();
    let runs = recorded_runs();
    if !Path::new(&db).exists() {
        for r in &runs {
            w.import(&run_file(r), Path::new(&db));
        }
    }
    w.oscost(&["history", "list", "--db", &db], width, &[0]);
    for (i, r) in runs.iter().enumerate() {
        let id = (i + 1).to_string();
        w.oscost(&["history", "show", &id, "--db", &db], width, &[0]);
        let f = run_file(r);
        let f = f.to_str().unwrap();
        // A run against itself: every row comparable where its kind allows.
        w.oscost(&["compare", f, f, "--db", &db], width, &[0]);
        let html = w.tmp.path().join(format!("{r}.html"));
        w.oscost(
            &["report", f, "-o", html.to_str().unwrap(), "--db", &db],
            width,
            &[0],
        );
    }
    let (a, b, q) = (
        run_file("run-quick-a"),
        run_file("run-quick-b"),
        run_file("run-quick"),
    );
    for pair in [[&a, &b], [&b, &a], [&q, &b]] {
        let args = [
            "compare",
            pair[0].to_str().unwrap(),
            pair[1].to_str().unwrap(),
        ];
        w.oscost(&[&args[..], &["--db", &db]].concat(), width, &[0, 2]);
    }
    w.oscost(&["compare", "--last", "2", "--db", &db], width, &[0, 2]);
}

/// `fleet` over eight synthetic hosts made from the recorded run (bench/fleet-synth.py).
fn fleet(w: &mut Widths, width: usize) {
    let dir = w.tmp.path().join("fleet-runs");
    let db = w.tmp.path().join("fleet.sqlite");
    if !db.exists() {
        let o = Command::new("python3")
            .arg(Path::new(ROOT).join("bench/fleet-synth.py"))
            .arg(run_file("run-quick"))
            .arg(&dir)
            .args(["--runs", "8", "--planted", "1", "--seed", "7"])
            .output()
            .expect("python3 runs bench/fleet-synth.py");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        w.import(&dir, &db);
    }
    let db = db.to_str().unwrap();
    w.oscost(&["fleet", "--db", db], width, &[0]);
    w.oscost(&["fleet", "--db", db, "--group-by", "kernel"], width, &[0]);
}

/// The simulator on the committed programs: each prints without measuring anything of the
/// host (sim bench times the simulator, but its table's width does not depend on the times).
fn sim(w: &mut Widths, width: usize) {
    // The programs by relative names (copies in the directory the commands run in): the
    // reports name their files, and a path as long as the checkout's is not a view's fault.
    let tmp = w.tmp.path().to_path_buf();
    let elf = |n: &str| {
        let name = format!("{n}.elf");
        let src = Path::new(ROOT)
            .join("crates/rvsim/programs/elf")
            .join(&name);
        std::fs::copy(src, tmp.join(&name)).unwrap();
        name
    };
    let (im, imc) = (elf("seed-rv32im"), elf("seed-rv32imc"));
    w.oscost(
        &[
            "sim",
            "run",
            &elf("cselftest-rv32imc"),
            "--icache",
            "sets=8,ways=1,words=2",
            "--dcache",
            "sets=16,ways=2,words=4",
            "--timer-interrupt",
            "1000",
        ],
        width,
        &[0],
    );
    w.oscost(
        &[
            "sim",
            "run",
            &elf("timer-rv32imc"),
            "--pipeview",
            "interrupt-4:14",
        ],
        width,
        &[0],
    );
    w.oscost(
        &[
            "sim",
            "compare",
            &im,
            &imc,
            "--icache",
            "sets=8,ways=1,words=2",
        ],
        width,
        &[0],
    );
    w.oscost(
        &[
            "sim",
            "bench",
            &elf("cselftest-rv32imc"),
            "--repeat",
            "1",
            "--no-qemu",
        ],
        width,
        &[0],
    );
    let suite = Path::new(ROOT).join("../shared/riscv-tests/elf");
    let name = format!("conformance-{width}");
    let dir = w.tmp.path().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["rv32ui-p-add", "rv32ui-p-lw", "rv32ua-p-lrsc"] {
        std::fs::copy(suite.join(name), dir.join(name)).unwrap();
    }
    // A failing program too: its reason is a long line.
    std::fs::copy(w.tmp.path().join(&imc), dir.join("rv32ui-p-seed")).unwrap();
    w.oscost(&["sim", "conformance", dir.to_str().unwrap()], width, &[1]);
    // sim sweep compiles a C file per -march: only where the cross compiler is installed
    // (CI installs it, .ci/deps.sh).
    let cc = Command::new("riscv64-unknown-elf-gcc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if cc {
        w.oscost(
            &[
                "sim",
                "sweep",
                &{
                    let src = Path::new(ROOT).join("crates/rvsim/programs/c/loop.c");
                    std::fs::copy(src, w.tmp.path().join("loop.c")).unwrap();
                    "loop.c".to_string()
                },
                "--icache-sizes",
                "64,256,1k",
            ],
            width,
            &[0],
        );
    } else {
        eprintln!("sim sweep not rendered: riscv64-unknown-elf-gcc is not installed");
    }
}

/// `machine` here, and the text view of the recorded machines (a two-socket server, a
/// one-CPU cloud VM, the 2-CPU KVM guest).
fn machine(w: &mut Widths, width: usize) {
    std::env::set_var("COLUMNS", width.to_string());
    w.oscost(&["machine"], width, &[0]);
    for tree in ["intel-2s-ht.tree", "gce-1cpu.tree", "vm-kvm-epyc-2cpu.tree"] {
        let (_d, m) = common::load_machine_tree(tree);
        w.check(
            &format!("machine ({tree})"),
            &oscost::machine::render_text_within(&m, width),
            width,
        );
    }
}

/// The run with only the measurements whose probe starts with one of `prefixes`: what `call`,
/// `syscall` and `ctx` measure of the quick run's suite.
fn only(run: &Run, prefixes: &[&str]) -> Run {
    let mut r = run.clone();
    r.measurements
        .retain(|m| prefixes.iter().any(|p| m.probe.starts_with(p)));
    r.skipped
        .retain(|s| prefixes.iter().any(|p| s.probe.starts_with(p)));
    r
}

/// The measuring commands' stdout after measuring, from the recorded run of their kind, as
/// each command assembles it (cli/*: its family's report, then report::screen::measured).
fn measuring(w: &mut Widths, width: usize) {
    use oscost::report::screen;
    // The families lay their tables out for stdout: COLUMNS is what they read.
    std::env::set_var("COLUMNS", width.to_string());
    let term = Term::plain(width);
    let quick = read_run("run-quick");
    let mut plain: Vec<(String, Run)> = vec![
        ("run".into(), quick.clone()),
        ("call".into(), only(&quick, &["call."])),
        ("syscall".into(), only(&quick, &["syscall.", "vdso."])),
        ("ctx".into(), only(&quick, &["ctx."])),
    ];
    // Every family's recorded run, as its command prints it: the common table, and what
    // the family adds (its own text, or the sections after the table).
    let families = oscost::report::FAMILIES
        .iter()
        .filter_map(|f| Some((f, f.about().fixture?)));
    let mut own = Vec::new();
    for (f, name) in families {
        if f.about().has_shown {
            own.push((f, name));
        } else {
            let words: Vec<&str> = f
                .quick()
                .iter()
                .take_while(|w| !w.starts_with('-'))
                .copied()
                .collect();
            plain.push((words.join(" "), read_run(name)));
        }
    }
    for (cmd, run) in &plain {
        for explain in [false, true] {
            let text = screen::measured(run, &term, None, None, detail(explain));
            w.check(&format!("{cmd} (explain: {explain})"), &text, width);
        }
    }
    for (family, name) in own {
        let run = read_run(name);
        let ask = Ask {
            caches: run.machine.data_cache_sizes(1),
            ..Ask::default()
        };
        let shown = family.shown(&run, &ask).unwrap();
        for explain in [false, true] {
            let text = screen::measured(
                &run,
                &term,
                shown.text.as_deref(),
                Some(&shown.after),
                detail(explain),
            );
            w.check(&format!("{name} (explain: {explain})"), &text, width);
        }
    }
    // Two scenarios, nearly every row invalid; and a quick run of all four whose corrected
    // breakdown failed its check in each traced scenario.
    for name in ["rpc", "rpc-quick"] {
        let rpc = read_run(name);
        w.check(
            name,
            &screen::measured(&rpc, &term, None, None, detail(false)),
            width,
        );
        let rpc_detail = oscost::report::rpc::detail(&rpc);
        w.check(
            &format!("{name} --explain"),
            &screen::measured(&rpc, &term, None, Some(&rpc_detail), detail(true)),
            width,
        );
    }
}

/// The default output, or everything (`--explain`, which implies `--verbose`).
fn detail(explain: bool) -> oscost::report::screen::Detail {
    oscost::report::screen::Detail::asked(false, explain)
}

/// Every command's help, from the top to the deepest subcommand, wraps at COLUMNS: the long
/// `--help`, the short `-h` and the `help` subcommand's.
fn help(w: &mut Widths, width: usize) {
    fn paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
        out.push(prefix.to_vec());
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = prefix.to_vec();
            p.push(sub.get_name().to_string());
            paths(sub, &p, out);
        }
    }
    let mut all = Vec::new();
    paths(
        &<oscost::cli::Cli as clap::CommandFactory>::command(),
        &[],
        &mut all,
    );
    assert!(all.len() > 20, "only {} commands", all.len());
    for p in all {
        let path: Vec<&str> = p.iter().map(String::as_str).collect();
        for flag in ["--help", "-h"] {
            w.oscost(&[path.as_slice(), &[flag]].concat(), width, &[0]);
        }
        w.oscost(&[&["help"], path.as_slice()].concat(), width, &[0]);
    }
}

/// One test, so that COLUMNS (which the in-process renderers read) is set before any other
/// thread of this binary runs and changes only between the widths.
#[test]
fn every_view_fits_80_and_100_columns() {
    std::env::set_var("NO_COLOR", "1");
    let mut w = Widths::new();
    for width in WIDTHS {
        measuring(&mut w, width);
        machine(&mut w, width);
        run_readers(&mut w, width);
        fleet(&mut w, width);
        help(&mut w, width);
        sim(&mut w, width);
    }
    assert!(w.checked > 100, "only {} outputs checked", w.checked);
    assert!(w.over.is_empty(), "{}", summary(&w.over));
}

/// The lines over the width, grouped by view: how many, the widest, and the first of them.
fn summary(over: &[(String, usize, String)]) -> String {
    let mut views: Vec<(&str, usize, usize, &str)> = Vec::new();
    for (what, cols, line) in over {
        match views.iter_mut().find(|v| v.0 == what) {
            Some(v) => {
                v.1 += 1;
                v.2 = v.2.max(*cols);
            }
            None => views.push((what, 1, *cols, line)),
        }
    }
    let mut text = format!(
        "{} line(s) in {} view(s) wider than the terminal:\n",
        over.len(),
        views.len()
    );
    for (what, n, widest, first) in views {
        text.push_str(&format!(
            "{what}: {n} line(s), widest {widest}; first: {first}\n"
        ));
    }
    text
}

/// The check itself fails on a line one column too wide, and counts characters, not bytes.
#[test]
fn a_line_one_column_too_wide_is_found() {
    let fits = format!("{}\n{}", "µ".repeat(80), "x".repeat(80));
    assert!(too_wide("t", &fits, 80).is_empty());
    let over = format!("ok\n{}", "x".repeat(81));
    let found = too_wide("t", &over, 80);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, 81);
}
