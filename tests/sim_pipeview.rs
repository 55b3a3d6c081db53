//! `oscost sim run --pipeview` end to end: the diagram after the statistics, the HTML page and
//! the Kanata log, and the refusals (exit 2, one line, nothing written): an output that is the
//! ELF itself, the companions without --pipeview, the functional-only model, a bad window, a
//! window that never opens.

use std::process::Command;

const ELF_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/rvsim/programs/elf");

fn oscost(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_oscost"))
        .args(args)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn timer_elf() -> String {
    format!("{ELF_DIR}/timer-rv32imc.elf")
}

#[test]
fn the_diagram_follows_the_statistics_and_the_files_hold_the_same_window() {
    let dir = tempfile::tempdir().unwrap();
    let (html, kanata) = (dir.path().join("p.html"), dir.path().join("p.kanata"));
    let (code, out, err) = oscost(&[
        "sim",
        "run",
        &timer_elf(),
        "--pipeview",
        "interrupt-4:14",
        "--pipeview-html",
        html.to_str().unwrap(),
        "--kanata",
        kanata.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let stats = out.find("pipeline     5-stage").expect("statistics");
    let diagram = out.find("Pipeline (5-stage").expect("diagram");
    assert!(stats < diagram, "{out}");
    for l in out[diagram..].lines() {
        assert!(l.chars().count() <= 100, "{l:?}");
    }
    // Wrapped lines continue indented: read them whole.
    let out = out.replace("\n      ", " ").replace("\n    ", " ");
    assert!(
        out.contains("14 from 4 before the first interrupt"),
        "{out}"
    );
    // The interrupted instruction: fetched, decoded, an empty slot in EX, squashed.
    assert!(
        out.contains("x blt s0,t0,80000020") && out.contains("IF  ID  --  x"),
        "{out}"
    );
    assert!(out.contains("interrupt: machine timer interrupt"), "{out}");
    assert!(out.contains("<handler> (mtvec), mepc = 80000024"), "{out}");
    assert!(out.contains("equal to the model's counters"), "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<svg") && page.contains("interrupt → mtvec"),
        "{page}"
    );
    assert!(page.contains("text-decoration=\"line-through\""));
    let log = std::fs::read_to_string(&kanata).unwrap();
    assert!(log.starts_with("Kanata\t0004\nC=\t"), "{log}");
    assert_eq!(log.lines().filter(|l| l.starts_with("I\t")).count(), 22);
}

#[test]
fn refusals_write_nothing_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let elf = dir.path().join("copy.elf");
    std::fs::copy(timer_elf(), &elf).unwrap();
    let before = std::fs::read(&elf).unwrap();
    let out = dir.path().join("out.kanata");
    let e = elf.to_str().unwrap();
    let o = out.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        // An output naming the input would replace the program.
        vec!["sim", "run", e, "--pipeview", "0:5", "--kanata", e],
        vec!["sim", "run", e, "--pipeview", "0:5", "--pipeview-html", e],
        vec!["sim", "run", e, "--json", e],
        // Two outputs, one file.
        vec![
            "sim",
            "run",
            e,
            "--pipeview",
            "0:5",
            "--kanata",
            o,
            "--pipeview-html",
            o,
        ],
        // The companions need a window; a window needs the 5-stage model.
        vec!["sim", "run", e, "--kanata", o],
        vec![
            "sim",
            "run",
            e,
            "--pipeview",
            "0:5",
            "--pipeline",
            "none",
            "--kanata",
            o,
        ],
        vec![
            "sim",
            "run",
            e,
            "--pipeview",
            "nosuchsymbol:5",
            "--kanata",
            o,
        ],
        vec!["sim", "run", e, "--pipeview", "0:0", "--kanata", o],
        vec!["sim", "run", e, "--pipeview", "trap", "--kanata", o],
    ];
    for args in cases {
        let (code, _, err) = oscost(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(!err.trim().is_empty(), "{args:?}");
        assert!(!out.exists(), "{args:?} wrote {o}");
        assert_eq!(
            std::fs::read(&elf).unwrap(),
            before,
            "{args:?} changed the ELF"
        );
    }
    // A window that never opens: the statistics are printed, then the error.
    let (code, stdout, err) = oscost(&["sim", "run", e, "--pipeview", "trap:5", "--kanata", o]);
    assert_eq!(code, 2, "{err}");
    assert!(stdout.contains("pipeline     5-stage"), "{stdout}");
    assert!(
        err.contains("never opened") && err.contains("exception"),
        "{err}"
    );
    assert!(!out.exists());
}
