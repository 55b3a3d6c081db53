//! `oscost export RUN --format csv|markdown|json`: one run (a file or a history id) in
//! another format, to standard output or a file.

use std::path::{Path, PathBuf};

use super::store_opts::{load_run, DbOpts};
use crate::error::Result;
use crate::model::Run;
use crate::report::export::{to_csv, to_json, write_atomic};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Csv,
    Markdown,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// A run JSON file or a history id.
    #[arg(value_name = "RUN")]
    pub run: String,
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// Output file (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbOpts,
}

pub fn run(a: ExportArgs) -> Result<i32> {
    let outputs: Vec<&Path> = a.output.iter().map(|p| p.as_path()).collect();
    super::outputs::check(&outputs, &[Path::new(&a.run)], a.db.path().ok().as_deref())?;
    let (run, _) = load_run(&a.run, &a.db)?;
    write_run(&run, a.format, a.output.as_deref())?;
    Ok(0)
}

/// Writes `run` in `format` to `output` (atomically) or to standard output.
pub fn write_run(run: &Run, format: ExportFormat, output: Option<&Path>) -> Result<()> {
    let text = match format {
        ExportFormat::Csv => to_csv(run)?,
        ExportFormat::Markdown => crate::report::markdown::run_to_markdown(run),
        ExportFormat::Json => to_json(run),
    };
    match output {
        Some(p) => write_atomic(p, text.as_bytes()),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}
