//! `oscost export RUN --format csv|markdown|json|openmetrics|benchmark-action|bencher`: one
//! run (a file or a history id) in another format, to standard output or a file.

use std::path::{Path, PathBuf};

use super::outputs::{Format, Outputs, RunOut};
use super::store_opts::{load_run, DbOpts};
use crate::error::Result;
use crate::model::Run;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Csv,
    Markdown,
    Json,
    /// The Prometheus text exposition, as node_exporter's textfile collector reads it.
    Openmetrics,
    /// github-action-benchmark's `customSmallerIsBetter` JSON.
    BenchmarkAction,
    /// Bencher's metric format (BMF).
    Bencher,
}

impl From<ExportFormat> for Format {
    fn from(f: ExportFormat) -> Format {
        match f {
            ExportFormat::Csv => Format::Csv,
            ExportFormat::Markdown => Format::Markdown,
            ExportFormat::Json => Format::Json,
            ExportFormat::Openmetrics => Format::OpenMetrics,
            ExportFormat::BenchmarkAction => Format::BenchmarkAction,
            ExportFormat::Bencher => Format::Bencher,
        }
    }
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
    Outputs::new()
        .with(a.format.into(), a.output.as_deref())
        .check(&[], &[Path::new(&a.run)], a.db.path().ok().as_deref())?;
    let (run, _) = load_run(&a.run, &a.db)?;
    write_run(&run, a.format, a.output.as_deref())?;
    if matches!(
        a.format,
        ExportFormat::BenchmarkAction | ExportFormat::Bencher
    ) {
        let (_, left) = crate::report::formats::with_figure(&run);
        if !left.is_empty() {
            eprintln!(
                "oscost: {} measurement(s) without a figure (invalid, unstable or below \
                 resolution) left out: {}",
                left.len(),
                left.join("; ")
            );
        }
    }
    Ok(0)
}

/// Writes `run` in `format` to `output` (atomically) or to standard output.
pub fn write_run(run: &Run, format: ExportFormat, output: Option<&Path>) -> Result<()> {
    // What the families derive from the run's counts (an evicted file's major faults),
    // as the measuring command's own JSON carries it.
    let analysis = crate::report::analysis_of(run);
    let run = RunOut {
        run,
        analysis: analysis.as_ref(),
    };
    match output {
        Some(p) => Outputs::new().with(format.into(), Some(p)).write(&run),
        None => super::outputs::print(&run, format.into()),
    }
}
