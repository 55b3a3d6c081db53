//! Where the history lives (`--db`, `--no-save`) and how a run is named on the command line:
//! a JSON file, or the id of a run saved in the history.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::Run;
use crate::report::input::read_run;
use crate::store::{default_path, Store};

/// The history database option, shared by every command that reads or writes history.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DbOpts {
    /// History database (default: $XDG_DATA_HOME/oscost/history.sqlite).
    #[arg(long, value_name = "PATH", global = true)]
    pub db: Option<PathBuf>,
}

impl DbOpts {
    pub fn path(&self) -> Result<PathBuf> {
        match &self.db {
            Some(p) => Ok(p.clone()),
            None => default_path(),
        }
    }
    pub fn open(&self) -> Result<Store> {
        Store::open(&self.path()?)
    }
}

/// Loads a run named by a file path or a history id; returns it with a label for output.
pub fn load_run(spec: &str, db: &DbOpts) -> Result<(Run, String)> {
    let path = Path::new(spec);
    if path.exists() {
        return Ok((read_run(path)?, spec.to_string()));
    }
    match spec.parse::<i64>() {
        Ok(id) => {
            let store = db.open()?;
            let run = store.get(id)?;
            Ok((run, format!("run {id} ({})", store.path().display())))
        }
        Err(_) => Err(Error::usage(format!(
            "{spec}: no such file, and not a run id from history"
        ))),
    }
}
