//! `oscost compare A B` (files or history ids), or `--last 2`: medians, ratio with a 95%
//! interval and a verdict per probe; `--fail-above 5%` makes it a CI regression gate (exit 1).

use super::outputs::{CompareOut, Outputs};
use super::store_opts::{load_run, DbOpts};
use crate::compare::compare;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
}

impl From<Format> for super::outputs::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Text => Self::Text,
            Format::Markdown => Self::Markdown,
            Format::Json => Self::Json,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline run A and the run B compared against it (files or history ids).
    #[arg(value_name = "RUN", num_args = 0..=2)]
    pub runs: Vec<String>,
    /// Compare the last N saved runs' oldest and newest (N ≥ 2), e.g. --last 2.
    #[arg(long, value_name = "N", conflicts_with = "runs")]
    pub last: Option<usize>,
    /// Exit 1 when any valid probe is significantly slower by more than this, e.g. 5%.
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold)]
    pub fail_above: Option<f64>,
    /// Smallest change that counts as a difference: a statistically significant change below
    /// it (run-to-run drift of a shared machine) is reported as no meaningful difference.
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold, default_value = "2")]
    pub min_effect: f64,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the comparison figure (ratio per probe, interval, thresholds) as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<std::path::PathBuf>,
    /// Also write an HTML page with the machine differences, the figure and the table.
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub db: DbOpts,
}

/// Runs of the history a change is held against (the newest, on the same machine).
const HISTORY_RUNS: usize = 30;

/// The newest runs of the history (at most [`HISTORY_RUNS`]), without `exclude` (ids of
/// runs compared). Empty when there is no history yet: nothing is created to find out.
pub fn history_runs(db: &DbOpts, exclude: &[String]) -> Vec<crate::model::Run> {
    let Ok(Some(store)) = db.open_existing() else {
        return Vec::new();
    };
    store
        .last(HISTORY_RUNS)
        .unwrap_or_default()
        .into_iter()
        .filter(|id| !exclude.contains(&id.to_string()))
        .filter_map(|id| store.get(id).ok())
        .collect()
}

/// The subcommand a run was made by (`run`, `ctx`, ...), if its command line was recorded.
pub fn kind(run: &crate::model::Run) -> Option<&str> {
    run.command
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
}

/// "5%" or "5": a slowdown threshold in percent, 0 to 1000.
pub fn parse_threshold(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (e.g. 5%)"))?;
    if !(0.0..=1000.0).contains(&v) {
        return Err(format!("'{s}' is out of range: use 0% to 1000%"));
    }
    Ok(v)
}

pub fn run(a: CompareArgs) -> Result<i32> {
    use super::outputs::Format as Out;
    let outputs = Outputs::new()
        .with(Out::Svg, a.svg.as_deref())
        .with(Out::Html, a.html.as_deref());
    let inputs: Vec<&std::path::Path> = a.runs.iter().map(std::path::Path::new).collect();
    outputs.check(&[], &inputs, a.db.path().ok().as_deref())?;
    let specs: Vec<String> = match a.last {
        Some(n) if n < 2 => return Err(Error::usage(format!("--last {n}: need at least 2 runs"))),
        Some(n) => {
            let ids = match a.db.open_existing()? {
                Some(store) => store.last(n)?,
                None => Vec::new(),
            };
            if ids.len() < 2 {
                return Err(Error::usage(format!(
                    "--last {n}: the history holds {} run(s); need 2",
                    ids.len()
                )));
            }
            vec![ids[0].to_string(), ids[ids.len() - 1].to_string()]
        }
        None if a.runs.len() == 2 => a.runs.clone(),
        None => {
            return Err(Error::usage(
                "compare needs two runs (files or history ids), or --last N",
            ))
        }
    };
    let (ra, na) = load_run(&specs[0], &a.db)?;
    let (rb, nb) = load_run(&specs[1], &a.db)?;
    if let (Some(ka), Some(kb)) = (kind(&ra), kind(&rb)) {
        if ka != kb {
            return Err(Error::usage(format!(
                "runs of different kinds cannot be compared: A is `oscost {ka}`, B is `oscost {kb}`"
            )));
        }
    }
    let mut c = compare(&ra, &na, &rb, &nb);
    if c.pairs.is_empty() {
        return Err(Error::usage(format!(
            "nothing to compare: no measurement of A has a partner in B with the same probe \
             and inputs ({} only in A, {} only in B)",
            c.only_in_a.len(),
            c.only_in_b.len()
        )));
    }
    c.apply_history_drift(&crate::compare::history_drift(
        &history_runs(&a.db, &specs),
        &rb.machine,
    ));
    c.apply_min_effect(a.min_effect);
    let shown = CompareOut {
        comparison: &c,
        fail_above: a.fail_above,
        min_effect: a.min_effect,
    };
    super::outputs::print(&shown, a.format.into())?;
    outputs.write(&shown)?;
    if let Some(x) = a.fail_above {
        let bad = c.regressions(x);
        if !bad.is_empty() {
            for p in &bad {
                eprintln!(
                    "oscost: regression: {} {} is {:+.1}% slower (threshold {x}%)",
                    p.probe,
                    p.params,
                    p.change_pct.unwrap_or(0.0)
                );
            }
            return Ok(1);
        }
    }
    Ok(0)
}
