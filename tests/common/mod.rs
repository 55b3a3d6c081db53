//! Helpers shared by integration tests.

// Each test crate includes this module and uses only some of it.
#![allow(dead_code)]

use std::path::Path;

/// Expands a recorded `.tree` fixture (tests/fixtures/machine/*.tree: `### /path` headers
/// followed by the file's text) into a temporary directory and collects machine facts from
/// it with the same `collect_from` the live collector uses.
pub fn load_machine_tree(name: &str) -> (tempfile::TempDir, oscost::machine::Machine) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/machine")
            .join(name),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cur: Option<(String, String)> = None;
    let flush = |cur: &mut Option<(String, String)>| {
        if let Some((p, body)) = cur.take() {
            let path = dir.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
    };
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("### ") {
            flush(&mut cur);
            cur = Some((p.to_string(), String::new()));
        } else if let Some((_, body)) = cur.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(&mut cur);
    let m = oscost::machine::collect_from(dir.path());
    (dir, m)
}

/// Runs the oscost binary with `--db DB` appended and XDG_DATA_HOME beside it, so a test
/// never touches the user's history.
pub fn oscost_with_db(db: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_oscost"))
        .env("XDG_DATA_HOME", db.parent().unwrap())
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}
