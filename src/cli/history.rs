//! `oscost history [list|show ID|export ID|delete ID|import FILE...]`: the saved runs,
//! grouped by machine.

use super::export::{write_run, ExportFormat};
use super::store_opts::DbOpts;
use crate::error::{Error, Result};
use crate::input::read_run;
use crate::store::Outcome;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: Option<HistoryCmd>,
    #[command(flatten)]
    pub db: DbOpts,
}

#[derive(Debug, clap::Subcommand)]
pub enum HistoryCmd {
    /// List saved runs, grouped by machine (the default).
    List,
    /// Print one run's table.
    Show {
        id: i64,
        /// Every detail: each probe's evidence lines, each round's reading of a failed
        /// check, each warning under its probe, why probes were skipped.
        #[arg(long, short = 'v')]
        verbose: bool,
    },
    /// Write one run as CSV, Markdown or JSON.
    Export {
        id: i64,
        #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
        format: ExportFormat,
        /// Output file (default: standard output).
        #[arg(short, long, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
    /// Delete one run.
    Delete { id: i64 },
    /// Import run JSON files or directories of them (e.g. fetched from a fleet), in one
    /// transaction; runs already stored are skipped; a bad file is named and the rest imported.
    Import {
        #[arg(required = true, value_name = "DIR|FILE")]
        files: Vec<std::path::PathBuf>,
    },
}

pub fn run(a: HistoryArgs) -> Result<i32> {
    let cmd = a.command.unwrap_or(HistoryCmd::List);
    // Only import writes a new history (once it has a run to import); reading commands never
    // create a file or directory.
    if let HistoryCmd::Import { files } = &cmd {
        return import(&a.db, files);
    }
    let mut store = match &cmd {
        HistoryCmd::List => match a.db.open_existing()? {
            Some(s) => s,
            None => {
                println!("no saved runs in {}", a.db.path()?.display());
                return Ok(0);
            }
        },
        _ => a.db.open_read()?,
    };
    match cmd {
        HistoryCmd::List => {
            let runs = store.list()?;
            if runs.is_empty() {
                println!("no saved runs in {}", store.path().display());
            }
            let term = crate::report::term::Term::stdout();
            let mut host = None;
            let mut rows: Vec<Vec<String>> = Vec::new();
            let flush = |rows: &mut Vec<Vec<String>>| {
                if !rows.is_empty() {
                    print!(
                        "{}",
                        crate::report::term::grid(
                            &["  id", "started", "kind", "probes", "valid", "command"],
                            rows,
                            &term
                        )
                    );
                    rows.clear();
                }
            };
            for r in runs {
                if host.as_ref() != Some(&r.host_key) {
                    flush(&mut rows);
                    let header = format!("{}  [{}]", r.machine, r.host_key);
                    println!(
                        "{}",
                        crate::report::term::wrap(&header, term.width, "", "    ")
                    );
                    host = Some(r.host_key.clone());
                }
                let mut valid = if r.invalid == 0 {
                    format!("all {}", r.measurements)
                } else {
                    format!("{} of {}", r.measurements - r.invalid, r.measurements)
                };
                if !r.complete {
                    valid.push_str(", incomplete");
                }
                let mut command = shorten_command(&r.command);
                if !r.labels.is_empty() {
                    command.push_str(&format!("  [{}]", r.labels));
                }
                if let Some(o) = &r.origin {
                    command.push_str(&format!(" (imported from {o})"));
                }
                rows.push(vec![
                    format!("  {}", r.id),
                    r.started_at
                        .get(..19)
                        .unwrap_or(&r.started_at)
                        .replace('T', " "),
                    kind_of(&r.command),
                    r.probes.to_string(),
                    valid,
                    command,
                ]);
            }
            flush(&mut rows);
        }
        HistoryCmd::Show { id, verbose } => show(&store.get(id)?, id, verbose),
        HistoryCmd::Export { id, format, output } => {
            super::outputs::Outputs::new()
                .with(format.into(), output.as_deref())
                .check(&[], &[], Some(store.path()))?;
            write_run(&store.get(id)?, format, output.as_deref())?
        }
        HistoryCmd::Delete { id } => {
            store.delete(id)?;
            println!("deleted run {id}");
        }
        // Imported above, before any database is opened.
        HistoryCmd::Import { .. } => {}
    }
    Ok(0)
}

/// The files named: a file as given, a directory as every `*.json` below it (sorted, so an
/// import is reproducible).
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let before = out.len();
            walk(p, &mut out)?;
            if out.len() == before {
                return Err(Error::usage(format!(
                    "{}: no .json run files in this directory",
                    p.display()
                )));
            }
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Collects `*.json` below `dir`. A symlink to a directory is not followed (a link to an
/// ancestor would never end); anything named `.json` that is not a regular file is still
/// listed, so the import names it and says what it is instead of passing over it.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<(PathBuf, bool)> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir.display(), e))?
        .filter_map(|e| {
            let e = e.ok()?;
            Some((e.path(), e.file_type().ok()?.is_dir()))
        })
        .collect();
    entries.sort();
    for (p, is_dir) in entries {
        if is_dir {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    Ok(())
}

/// Imports every file in one transaction with a progress bar on a terminal. A file that
/// cannot be read as a run is named on stderr and skipped; the others are imported, and the
/// exit code is 2 so scripts notice. The history is opened (created if new) only once a file
/// has been read as a run: an import of nothing usable leaves no empty database behind.
fn import(db: &DbOpts, paths: &[PathBuf]) -> Result<i32> {
    let files = expand(paths)?;
    let bar = ProgressBar::with_draw_target(
        Some(files.len() as u64),
        if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} files {wide_msg} (ETA {eta})")
            .expect("static template is valid"),
    );
    let mut bad: Vec<Error> = Vec::new();
    let runs = files.iter().filter_map(|f| {
        // read_run checks labels by the --label rules, and everything else a run holds.
        match read_run(f) {
            Ok(run) => Some((f.display().to_string(), run)),
            Err(e) => {
                bar.inc(1);
                bar.suspend(|| eprintln!("oscost: {e}"));
                bad.push(e);
                None
            }
        }
    });
    let mut runs = runs.peekable();
    if runs.peek().is_none() {
        bar.finish_and_clear();
        // Each file was named with its problem; one file needs no summary.
        if files.len() > 1 {
            eprintln!(
                "oscost: imported nothing: none of the {} files is a run (named above)",
                files.len()
            );
        }
        return Ok(2);
    }
    let mut store = db.open()?;
    let outcomes = store.import(runs, |_, _| bar.inc(1))?;
    bar.finish_and_clear();
    let imported = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Imported(_)))
        .count();
    let duplicates = outcomes.len() - imported;
    println!(
        "imported {imported} run(s) from {} file(s) into {}; {duplicates} already stored (skipped){}",
        files.len(),
        store.path().display(),
        if bad.is_empty() {
            String::new()
        } else {
            format!("; {} bad file(s) skipped (named above)", bad.len())
        }
    );
    Ok(if bad.is_empty() { 0 } else { 2 })
}

/// What kind of run a command line was: the subcommand words before the first option
/// ("run", "ctx sweep", "mem latency", "fault").
pub fn kind_of(command: &str) -> String {
    crate::model::command_kind(&command.split_whitespace().collect::<Vec<_>>())
}

/// The command without the path to the binary: "oscost run --quick".
fn shorten_command(command: &str) -> String {
    let mut words = command.split_whitespace();
    let first = words.next().unwrap_or("");
    let bin = std::path::Path::new(first)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::iter::once(bin.as_str())
        .chain(words)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `history show ID [--verbose]`: the run's table as the measuring command printed it.
fn show(run: &crate::model::Run, id: i64, verbose: bool) {
    let term = crate::report::term::Term::stdout();
    println!("run {id} · started {}", run.started_at);
    print!(
        "{}",
        crate::report::table::preamble_detail(run, &term, verbose)
    );
    print!(
        "{}",
        crate::report::table::render_detail(run, &term, verbose)
    );
    print!("{}", crate::report::screen::in_cycles(run, &term));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_is_the_subcommand() {
        assert_eq!(kind_of("/usr/bin/oscost run --quick"), "run");
        assert_eq!(kind_of("oscost ctx sweep --sizes 0,4k"), "ctx sweep");
        assert_eq!(kind_of("oscost mem latency"), "mem latency");
        assert_eq!(kind_of("oscost"), "?");
        assert_eq!(
            shorten_command("./target/release/oscost run -q"),
            "oscost run -q"
        );
    }
}
