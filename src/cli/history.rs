//! `oscost history [list|show ID|export ID|delete ID|import FILE...]`: the saved runs,
//! grouped by machine.

use super::export::{write_run, ExportFormat};
use super::store_opts::DbOpts;
use crate::error::Result;
use crate::report::input::read_run;

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
    Show { id: i64 },
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
    /// Import run JSON files (e.g. from other machines); they group by host.
    Import {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<std::path::PathBuf>,
    },
}

pub fn run(a: HistoryArgs) -> Result<i32> {
    let cmd = a.command.unwrap_or(HistoryCmd::List);
    // Only import writes a new history; reading commands never create a file or directory.
    let mut store = match &cmd {
        HistoryCmd::Import { .. } => a.db.open()?,
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
            let mut host = None;
            for r in runs {
                if host.as_ref() != Some(&r.host_key) {
                    println!("{}  [{}]", r.machine, r.host_key);
                    host = Some(r.host_key.clone());
                }
                println!(
                    "  {:>5}  {}  {:>3} measurements{}{}{}",
                    r.id,
                    r.started_at,
                    r.measurements,
                    if r.invalid > 0 {
                        format!(", {} invalid", r.invalid)
                    } else {
                        String::new()
                    },
                    if r.complete { "" } else { ", incomplete" },
                    r.origin
                        .map(|o| format!("  (imported from {o})"))
                        .unwrap_or_default()
                );
            }
        }
        HistoryCmd::Show { id } => {
            let run = store.get(id)?;
            println!(
                "run {id}: {} · started {}",
                run.machine.short_name(),
                run.started_at
            );
            print!("{}", crate::report::table::render(&run));
        }
        HistoryCmd::Export { id, format, output } => {
            if let Some(p) = &output {
                crate::report::export::check_not_db(p, store.path())?;
            }
            write_run(&store.get(id)?, format, output.as_deref())?
        }
        HistoryCmd::Delete { id } => {
            store.delete(id)?;
            println!("deleted run {id}");
        }
        HistoryCmd::Import { files } => {
            // Check every file first: a bad file in the list imports nothing.
            let runs = files
                .iter()
                .map(|f| read_run(f))
                .collect::<Result<Vec<_>>>()?;
            for (f, run) in files.iter().zip(&runs) {
                let id = store.save(run, Some(&f.display().to_string()))?;
                println!(
                    "imported {} as run {id} ({})",
                    f.display(),
                    run.machine.short_name()
                );
            }
        }
    }
    Ok(0)
}
