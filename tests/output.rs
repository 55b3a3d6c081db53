//! Output manners, end to end through the binary: tables fit COLUMNS without colour outside
//! a terminal, completions and man pages exist, sizes are refused in one clear line.

use std::process::{Command, Output};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run-quick.json");

fn oscost(env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oscost"));
    c.args(args).env_remove("COLUMNS").env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_saved_run_reads_at_80_columns_without_colour_in_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    assert!(oscost(&[], &["history", "--db", db, "import", FIXTURE])
        .status
        .success());
    for width in [80usize, 120] {
        let w = width.to_string();
        let o = oscost(&[("COLUMNS", &w)], &["history", "--db", db, "show", "1"]);
        assert!(o.status.success());
        let text = stdout(&o);
        for l in text.lines() {
            assert!(l.chars().count() <= width, "{width}: {l:?}");
        }
        assert!(!text.contains('\x1b'), "colour written into a pipe");
        // By default a row is its line (its checks its evidence); --verbose adds the raw
        // figures and evidence beneath, within the width too. At 120 columns the raw figures
        // fit beside the rows (their probe cells no longer repeat the shared parameters).
        assert!(text.contains("ctx.pipe") && text.contains("✓ "), "{text}");
        assert!(width > 80 || !text.contains("raw "), "{text}");
        let o = oscost(
            &[("COLUMNS", &w)],
            &["history", "--db", db, "show", "1", "--verbose"],
        );
        let text = stdout(&o);
        assert!(text.lines().all(|l| l.chars().count() <= width), "{text}");
        assert!(text.contains("raw "), "{text}");
    }
    // The listing names what each run was.
    let list = stdout(&oscost(
        &[("COLUMNS", "100")],
        &["history", "--db", db, "list"],
    ));
    for header in ["kind", "probes", "valid", "command"] {
        assert!(list.contains(header), "{header}: {list}");
    }
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        let o = oscost(&[], &["completions", shell]);
        assert!(o.status.success(), "{shell}");
        assert!(stdout(&o).contains("sweep"), "{shell}");
    }
    let o = oscost(&[], &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    let man = stdout(&oscost(&[], &["man"]));
    assert!(
        man.starts_with(".ie") || man.contains(".TH oscost"),
        "{man}"
    );
}

#[test]
fn a_bad_size_is_one_line_and_exit_2_in_every_command() {
    for args in [
        &["mem", "latency", "--max", "64q"][..],
        &["fault", "--size", "1.2.3m"][..],
        &["ctx", "sweep", "--sizes", "4k,lots"][..],
    ] {
        let o = oscost(&[], args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("is not a size"), "{args:?}: {err}");
    }
}
