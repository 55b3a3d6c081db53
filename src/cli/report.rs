//! `oscost report FILE... -o report.html`: the self-contained HTML report for saved runs
//! (files or history ids), or `--last [N]` for the newest N runs of the history; several
//! runs are shown side by side.

use std::path::PathBuf;

use super::outputs::{Format, Outputs};
use super::store_opts::{load_id, load_run, DbOpts};
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Run JSON files or history ids (see `oscost history list`).
    #[arg(required_unless_present = "last", value_name = "RUN")]
    pub runs: Vec<String>,
    /// The last N saved runs of the history (default 1), oldest first, side by side.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "1",
          conflicts_with = "runs")]
    pub last: Option<usize>,
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
    let runs = match a.last {
        // Ids from the history, loaded as ids (a file named "3" does not stand in for run 3).
        Some(n) => last_ids(&a.db, n)?
            .into_iter()
            .map(|id| load_id(id, &a.db).map(|(r, _)| r))
            .collect::<Result<Vec<_>>>()?,
        None => a
            .runs
            .iter()
            .map(|s| load_run(s, &a.db).map(|(r, _)| r))
            .collect::<Result<Vec<_>>>()?,
    };
    outputs.write(runs.as_slice())?;
    println!("report written to {}", a.output.display());
    Ok(0)
}

/// The ids of the newest `n` runs of the history, oldest first; refused when it holds fewer
/// (a report of fewer runs than asked for would not be the report asked for).
fn last_ids(db: &DbOpts, n: usize) -> Result<Vec<i64>> {
    if n == 0 {
        return Err(Error::usage("--last 0: need at least 1 run"));
    }
    let ids = match db.open_existing()? {
        Some(store) => store.last(n)?,
        None => Vec::new(),
    };
    if ids.len() < n {
        return Err(Error::usage(format!(
            "--last {n}: the history holds {} run(s); see `oscost history list`",
            ids.len()
        )));
    }
    Ok(ids)
}
