//! A simulator command killed (-9) while it writes its outputs leaves no truncated file: the
//! file it was replacing keeps its old, complete content, no new one appears and nothing of the
//! write is left (its new content is an unnamed file until the rename). The whole `sim compare`
//! runs in a forked child, through its own command-line parsing, and is killed between the
//! temporary file of its first output and the rename. This file holds a single test so the
//! test binary is single-threaded when it forks.

mod common;

use clap::Parser;

const ELF_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/rvsim/programs/elf");

fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `oscost sim …` in this process, as the binary runs it.
fn sim(args: &[&str]) -> oscost::error::Result<i32> {
    let cli = oscost::cli::Cli::parse_from(std::iter::once("oscost").chain(args.iter().copied()));
    match cli.command {
        oscost::cli::Command::Sim(a) => oscost::cli::sim::run(a),
        _ => unreachable!("a sim command"),
    }
}

#[test]
fn a_sim_command_killed_while_writing_leaves_no_truncated_file() {
    let out = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    // The journal lives here, not in the user's temp directory (set before the fork, while
    // this process has one thread).
    std::env::set_var("OSCOST_RUNTIME_DIR", runtime.path().join("rt"));
    let csv = out.path().join("builds.csv");
    let json = out.path().join("builds.json");
    std::fs::write(&csv, "an earlier, complete table\n").unwrap();
    let a = format!("{ELF_DIR}/loop-rv32imc.elf");
    let b = format!("{ELF_DIR}/loop-rv32im.elf");
    let args = [
        "sim",
        "compare",
        &a,
        &b,
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];

    common::kill_at_owned(|stop| {
        oscost::report::export::set_before_rename(stop);
        let _ = sim(&args);
    });
    // Killed before its first rename: the old table is whole, no JSON appeared, and no
    // temporary file is left.
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        "an earlier, complete table\n"
    );
    assert_eq!(listing(out.path()), vec!["builds.csv".to_string()]);
    let rec = oscost::journal::recover();
    assert_eq!(rec.removed, 0, "{rec:?}");

    // Not killed, the same command writes both files whole.
    assert_eq!(sim(&args).unwrap(), 0);
    let table = std::fs::read_to_string(&csv).unwrap();
    assert!(table.starts_with("build,text_bytes,"), "{table}");
    assert_eq!(table.lines().count(), 3, "{table}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["builds"].as_array().unwrap().len(), 2);
    assert_eq!(listing(out.path()), vec!["builds.csv", "builds.json"]);
    assert!(!runtime.path().join("rt").exists());
}
