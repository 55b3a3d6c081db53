//! `oscost fleet`: the runs of many hosts from one history side by side: each host's median
//! per probe as a ratio to the fleet median, the odd hosts, and the facts that set them
//! apart; `--group-by FACT` compares groups of hosts instead.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::common::parse_label;
use super::outputs::{Format, Outputs};
use super::store_opts::DbOpts;
use crate::compare::fleet::{analyze, labels_text, GroupBy, MIN_HOSTS};
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct FleetArgs {
    /// Only runs carrying this label, e.g. --label campaign=2026-11 (repeatable; all must match).
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Compare groups of hosts by a machine fact (kernel, cpu, mitigations, thp, governor,
    /// hypervisor, ...) or by a label key, instead of host by host.
    #[arg(long, value_name = "FACT")]
    pub group_by: Option<String>,
    /// Write the HTML page (heatmap of ratios, odd hosts, every host's figures) to FILE.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the report as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per host (or group) and probe.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbOpts,
}

pub fn run(a: FleetArgs) -> Result<i32> {
    let mut filter = BTreeMap::new();
    for (k, v) in &a.labels {
        if filter.insert(k.clone(), v.clone()).is_some() {
            return Err(Error::usage(format!(
                "--label {k}: given more than once; a run carries one value per key"
            )));
        }
    }
    let outputs = Outputs::new()
        .with(Format::Json, a.json.as_deref())
        .with(Format::Csv, a.csv.as_deref())
        .with(Format::Html, a.html.as_deref());
    outputs.check(&[], &[], a.db.path().ok().as_deref())?;
    // Reading only: a missing history is never created.
    let Some(store) = a.db.open_existing()? else {
        return Err(Error::usage(format!(
            "{}: no complete runs (no history there yet); import some with `oscost history import DIR`",
            a.db.path()?.display()
        )));
    };
    let runs = store.fleet_runs(&filter)?;
    if runs.is_empty() {
        return Err(Error::usage(format!(
            "{}: no complete runs{}; import some with `oscost history import DIR`",
            store.path().display(),
            if filter.is_empty() {
                String::new()
            } else {
                format!(" with labels {}", labels_text(&filter))
            }
        )));
    }
    let group_by = a
        .group_by
        .as_deref()
        .map(|g| GroupBy::resolve(g, &runs))
        .transpose()
        .map_err(Error::usage)?;
    let fleet = analyze(&runs, filter, group_by);
    super::outputs::print(&fleet, Format::Text)?;
    if fleet.hosts.len() < MIN_HOSTS {
        println!(
            "note: {} host(s): a fleet spread needs at least {MIN_HOSTS}, so no host is called odd",
            fleet.hosts.len()
        );
    }
    outputs.write(&fleet)?;
    Ok(0)
}
