//! Where the history lives (`--db`, `--no-save`) and how a run is named on the command line:
//! a JSON file, or the id of a run saved in the history.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::input::read_run;
use crate::model::Run;
use crate::store::{default_path, Store};

/// The history database option, shared by every command that reads or writes history.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DbOpts {
    /// History database (default: $OSCOST_DB, else $XDG_DATA_HOME/oscost/history.sqlite).
    #[arg(long, value_name = "PATH", global = true)]
    pub db: Option<PathBuf>,
}

/// `OSCOST_DB` when set and not empty.
fn env_db() -> Option<PathBuf> {
    std::env::var_os("OSCOST_DB")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl DbOpts {
    /// `--db`, then `OSCOST_DB`, then the XDG data directory.
    pub fn path(&self) -> Result<PathBuf> {
        match self.db.clone().or_else(env_db) {
            // A database is a file: `-` would be a file named `-`, not standard output.
            Some(p) if p.as_os_str() == "-" => Err(Error::usage(
                "--db -: the history is a database file, not a stream; name the file",
            )),
            Some(p) => Ok(p),
            None => default_path(),
        }
    }
    /// The user named the database (`--db` or `OSCOST_DB`): a problem saving is an error,
    /// not a warning.
    pub fn explicit(&self) -> bool {
        self.db.is_some() || env_db().is_some()
    }
    /// Opens the history for writing, creating it if needed.
    pub fn open(&self) -> Result<Store> {
        Store::open(&self.path()?)
    }
    /// Opens the history for reading; None when there is none yet. Never creates a file or
    /// directory.
    pub fn open_existing(&self) -> Result<Option<Store>> {
        Store::open_existing(&self.path()?)
    }
    /// Opens the history for reading; an error naming the path when there is none.
    pub fn open_read(&self) -> Result<Store> {
        let path = self.path()?;
        Store::open_existing(&path)?.ok_or_else(|| {
            Error::usage(format!(
                "{}: no history there yet (nothing has been saved; see --db)",
                path.display()
            ))
        })
    }
}

/// The run saved under history id `id`, and its name for display ("run 3 (path)").
pub fn load_id(id: i64, db: &DbOpts) -> Result<(Run, String)> {
    let store = db.open_read()?;
    let run = store.get(id)?;
    Ok((run, format!("run {id} ({})", store.path().display())))
}

/// Loads a run named by a file path or a history id; returns it with a label for output.
pub fn load_run(spec: &str, db: &DbOpts) -> Result<(Run, String)> {
    let path = Path::new(spec);
    if path.exists() {
        let name = crate::escape::terminal(spec).into_owned();
        return Ok((read_run(path)?, name));
    }
    match spec.parse::<i64>() {
        Ok(id) => load_id(id, db),
        Err(_) => Err(Error::usage(format!(
            "{spec}: no such file, and not a run id from history"
        ))),
    }
}
