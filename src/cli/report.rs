//! `oscost report FILE... -o report.html`: the self-contained HTML report for saved runs
//! (files or history ids); several runs are shown side by side.

use std::path::PathBuf;

use super::outputs::{Format, Outputs};
use super::store_opts::{load_run, DbOpts};
use crate::error::Result;

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Run JSON files or history ids.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    /// Where to write the HTML.
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    #[command(flatten)]
    pub db: DbOpts,
}

pub fn run(a: ReportArgs) -> Result<i32> {
    let inputs: Vec<&std::path::Path> = a.runs.iter().map(std::path::Path::new).collect();
    let outputs = Outputs::new().with(Format::Html, Some(&a.output));
    outputs.check(&[], &inputs, a.db.path().ok().as_deref())?;
    let runs = a
        .runs
        .iter()
        .map(|s| load_run(s, &a.db).map(|(r, _)| r))
        .collect::<Result<Vec<_>>>()?;
    outputs.write(runs.as_slice())?;
    println!("report written to {}", a.output.display());
    Ok(0)
}
