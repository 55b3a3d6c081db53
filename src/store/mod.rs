//! Run history in SQLite: every run saved (unless `--no-save`), machine facts normalized so runs
//! from one machine group together, imports from other machines grouped by host.
//!
//! Safety: each save is one transaction (a process killed mid-save leaves the database as it
//! was: SQLite's journal rolls the partial write back on the next open); a file that is not an
//! oscost history, or of a newer schema, is refused before anything is written to it; a
//! locked, corrupt or read-only database yields one line naming the file (exit code 2).

pub mod elapsed;
pub mod import;
pub mod recovery;
mod schema;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OptionalExtension};

use crate::error::{Error, Result};
use crate::input::parse_run;
use crate::model::Run;

pub use import::Outcome;
pub use schema::latest as schema_version;

/// `$XDG_DATA_HOME/oscost/history.sqlite`, else `~/.local/share/oscost/history.sqlite`, the
/// home directory being `$HOME`, else the user's entry in the password database.
pub fn default_path() -> Result<PathBuf> {
    let home = || {
        std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(passwd_home)
    };
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match home() {
            Some(h) => h.join(".local/share"),
            None => {
                return Err(Error::env(
                    "no HOME, XDG_DATA_HOME or home directory in the password database: cannot place the history database; use --db PATH or --no-save",
                ))
            }
        },
    };
    Ok(base.join("oscost").join("history.sqlite"))
}

/// This user's home directory from the password database, when it names an existing
/// directory (not `/nonexistent`).
fn passwd_home() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: a zeroed passwd is a valid out-buffer; getpwuid_r writes only into it and buf.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: valid out-pointers and a buffer of the length given.
    let r = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    if r != 0 || found.is_null() || pw.pw_dir.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded: pw_dir points to a NUL-terminated string inside buf.
    let dir = unsafe { std::ffi::CStr::from_ptr(pw.pw_dir) };
    let dir = PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()));
    (dir.is_absolute() && dir.is_dir()).then_some(dir)
}

/// How long a save waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Removes a database file this process just created if it holds nothing (a failed first
/// open on a full disk).
fn remove_if_empty(path: &Path) {
    if std::fs::metadata(path)
        .map(|m| m.len() == 0)
        .unwrap_or(false)
    {
        let _ = std::fs::remove_file(path);
    }
    let journal = PathBuf::from(format!("{}-journal", path.display()));
    if std::fs::metadata(&journal)
        .map(|m| m.len() == 0)
        .unwrap_or(false)
    {
        let _ = std::fs::remove_file(journal);
    }
}

/// Whether a database exists at `path` (following a symlink to it). Anything there must be a
/// regular file: a FIFO would hang SQLite's first read, a device or directory is no database,
/// and a symlink loop or a link to a missing file is named for what it is, not taken for a
/// missing database.
pub fn check_db_path(path: &Path) -> Result<bool> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(true),
        Ok(m) => Err(Error::usage(format!(
            "{shown}: {}, not a history database",
            crate::input::kind_of(m.file_type())
        ))),
        // A file where a directory of the path should be: nothing can be there (saving says
        // which part is not a directory).
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match std::fs::symlink_metadata(path)
        {
            Ok(l) if l.file_type().is_symlink() => Err(Error::usage(format!(
                "{shown}: a symlink to a missing file; name the database itself"
            ))),
            // Created by another process since the first look (many first saves at once):
            // judge what is there now.
            Ok(_) => check_db_path(path),
            Err(_) => Ok(false),
        },
        Err(e) => Err(Error::usage(format!("{shown}: {e}"))),
    }
}

/// Before measuring: can a run be saved at `path`? An existing file must be an oscost
/// history (or empty) that this user may write; a new one needs a writable directory (or
/// one that can be created). Nothing is created or changed.
pub fn check_can_save(path: &Path) -> Result<()> {
    let shown = path.display();
    if check_db_path(path)? {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::usage(format!("{shown}: cannot write the history ({e})")))?;
        // A history another process holds locked now can still take the run: the save
        // waits for the lock and keeps the run in a file if it is still held then.
        match Store::open_existing(path) {
            Err(_) if is_locked(path) => {}
            r => {
                r?;
            }
        }
        return Ok(());
    }
    let mut dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    while !dir.exists() {
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p.to_path_buf(),
            _ => dir = PathBuf::from("."),
        }
    }
    if !dir.is_dir() {
        return Err(Error::usage(format!(
            "{shown}: {} is not a directory",
            dir.display()
        )));
    }
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()))
        .map_err(|_| Error::usage(format!("{shown}: path contains NUL")))?;
    // SAFETY: access(2) on a valid NUL-terminated path; it only reads permissions.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(Error::usage(format!(
            "{shown}: cannot create the history ({} is not writable)",
            dir.display()
        )));
    }
    Ok(())
}

/// One saved run, as `history list` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunInfo {
    pub id: i64,
    pub host_key: String,
    pub machine: String,
    pub started_at: String,
    pub tool_version: String,
    pub measurements: i64,
    pub invalid: i64,
    pub complete: bool,
    /// The file a run was imported from; None for runs saved by `oscost run`.
    pub origin: Option<String>,
    /// The command line as saved (argv joined by spaces).
    pub command: String,
    /// Distinct probes measured.
    pub probes: i64,
    /// The run's labels as `host=a rack=b` (host first), empty when it has none stored.
    pub labels: String,
}

/// An open history database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Turns an SQLite error into one line naming the file and the problem.
fn db_error(path: &Path, e: rusqlite::Error) -> Error {
    let p = path.display();
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        let msg = match f.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                "database is locked by another process; try again when it is done".into()
            }
            ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => {
                "not an SQLite database or corrupt; nothing was written (use --db for another file)"
                    .into()
            }
            ErrorCode::ReadOnly => {
                "database is read-only; nothing was written (use --db or --no-save)".into()
            }
            ErrorCode::CannotOpen | ErrorCode::PermissionDenied => {
                "cannot open the database (missing directory or no permission)".into()
            }
            ErrorCode::DiskFull => "disk full; nothing was written".into(),
            _ => format!("database error: {e}"),
        };
        return Error::env(format!("{p}: {msg}"));
    }
    Error::env(format!("{p}: database error: {e}"))
}

impl Store {
    /// Opens (creating if needed) the history at `path` and brings its schema up to date.
    /// A database this call created is removed again when setting it up fails (a full disk
    /// must not leave a 0-byte history behind).
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_with(path, BUSY_TIMEOUT)
    }

    /// [`Store::open`], waiting up to `wait` for another process's transaction to end.
    pub fn open_with(path: &Path, wait: Duration) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
            }
        }
        let existed = check_db_path(path)?;
        let opened = Connection::open(path)
            .map_err(|e| db_error(path, e))
            .and_then(|conn| Store::prepared(conn, path, wait));
        if opened.is_err() && !existed {
            remove_if_empty(path);
        }
        opened
    }

    /// Opens an existing history for reading (bringing an old schema up to date); None when
    /// there is no file at `path`. Never creates a file or a directory.
    pub fn open_existing(path: &Path) -> Result<Option<Store>> {
        if !check_db_path(path)? {
            return Ok(None);
        }
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
            | rusqlite::OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags)
            .or_else(|_| {
                Connection::open_with_flags(
                    path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
            })
            .map_err(|e| db_error(path, e))?;
        Store::prepared(conn, path, BUSY_TIMEOUT).map(Some)
    }

    fn prepared(conn: Connection, path: &Path, wait: Duration) -> Result<Store> {
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .prepare(wait)
            .map_err(|e| db_error(path, e))
            .and_then(|r| r)?;
        // A history at the current version whose tables were altered would fail only when a
        // run is saved, after the measuring: found here, before.
        if let Some(what) = schema::missing(&store.conn).map_err(|e| db_error(path, e))? {
            return Err(Error::env(format!(
                "{}: an oscost history without {what}; it cannot hold runs (move it away, or \
                 use --db for another file)",
                path.display()
            )));
        }
        Ok(store)
    }

    /// Checks the schema and creates or migrates it. Safe when many processes create the
    /// same new history at once: the check is repeated inside an IMMEDIATE transaction (one
    /// writer at a time, others wait up to the busy timeout), the DDL says IF NOT EXISTS,
    /// and a busy database is retried.
    fn prepare(&mut self, wait: Duration) -> rusqlite::Result<Result<()>> {
        self.conn.busy_timeout(wait)?;
        self.conn.execute_batch("PRAGMA foreign_keys = ON;")?;
        if let Some(r) = check_version(&self.path, schema::inspect(&self.conn)?) {
            return Ok(r);
        }
        let mut tries = 0;
        loop {
            match self.migrate_once() {
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                        && tries < 5 =>
                {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(50 * tries));
                }
                other => return other,
            }
        }
    }

    fn migrate_once(&mut self) -> rusqlite::Result<Result<()>> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let found = schema::inspect(&tx)?;
        let from = match found {
            schema::Found::Version(v) => v,
            schema::Found::Empty => 0,
            schema::Found::Foreign => return Ok(check_version(&self.path, found).unwrap_or(Ok(()))),
        };
        if let Some(r) = check_version(&self.path, found) {
            return Ok(r);
        }
        schema::migrate(&tx, from)?;
        tx.commit()?;
        Ok(Ok(()))
    }
}

/// Whether another process holds the history at `path` locked now (a read would have to
/// wait); false when there is no such file or it cannot be read at all.
pub fn is_locked(path: &Path) -> bool {
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let Ok(conn) = Connection::open_with_flags(path, flags) else {
        return false;
    };
    let _ = conn.busy_timeout(Duration::ZERO);
    match conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    }) {
        Err(rusqlite::Error::SqliteFailure(f, _)) => {
            matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
        }
        _ => false,
    }
}

/// Some(outcome) when nothing needs to be created: up to date, foreign or newer.
fn check_version(path: &Path, found: schema::Found) -> Option<Result<()>> {
    let p = path.display();
    match found {
        schema::Found::Foreign => Some(Err(Error::env(format!(
            "{p}: an SQLite database that is not an oscost history; refusing to touch it"
        )))),
        schema::Found::Version(v) if v > schema::latest() => Some(Err(Error::env(format!(
            "{p}: history schema {v} is newer than this oscost knows ({}); upgrade oscost",
            schema::latest()
        )))),
        schema::Found::Version(v) if v == schema::latest() => Some(Ok(())),
        schema::Found::Version(_) | schema::Found::Empty => None,
    }
}

impl Store {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Saves a run, waiting `first` for another process's transaction to end and, when it is
    /// still running then, calling `on_wait` and waiting `more`.
    pub fn save_waiting(
        &mut self,
        run: &Run,
        first: Duration,
        more: Duration,
        on_wait: impl FnOnce(),
    ) -> Result<i64> {
        let busy = |e: &rusqlite::Error| {
            matches!(e, rusqlite::Error::SqliteFailure(f, _)
                if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
        };
        let r =
            self.conn
                .busy_timeout(first)
                .and_then(|()| match self.save_inner(run, None, || {}) {
                    Err(e) if busy(&e) => {
                        on_wait();
                        self.conn.busy_timeout(more)?;
                        self.save_inner(run, None, || {})
                    }
                    r => r,
                });
        let _ = self.conn.busy_timeout(BUSY_TIMEOUT);
        r.map_err(|e| db_error(&self.path, e))
    }

    /// Saves a run; returns its id. `origin` names the file of an imported run.
    pub fn save(&mut self, run: &Run, origin: Option<&str>) -> Result<i64> {
        self.save_with_hook(run, origin, || {})
    }

    /// Like [`Store::save`], calling `before_commit` inside the transaction after every row is
    /// written. Exists so tests can kill a process at the worst moment and check that nothing
    /// of the run remains; production callers use `save`.
    pub fn save_with_hook(
        &mut self,
        run: &Run,
        origin: Option<&str>,
        before_commit: impl FnOnce(),
    ) -> Result<i64> {
        let path = self.path.clone();
        self.save_inner(run, origin, before_commit)
            .map_err(|e| db_error(&path, e))
    }

    fn save_inner(
        &mut self,
        run: &Run,
        origin: Option<&str>,
        before_commit: impl FnOnce(),
    ) -> rusqlite::Result<i64> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let id = match import::stored_id(&tx, &import::run_uid(run))? {
            // The same run saved again (e.g. its JSON file imported after the run saved it).
            Some(id) => id,
            None => insert_run(&tx, run, origin, &now())?,
        };
        before_commit();
        tx.commit()?;
        Ok(id)
    }

    /// Imports many runs in ONE transaction: all of them or (on a database error) none.
    /// A run whose id is already stored, or appeared earlier in `runs`, is skipped as a
    /// duplicate. `on_each` is called after each run (for a progress bar). Runs come from an
    /// iterator so hundreds of files are read one at a time, never all held at once.
    pub fn import(
        &mut self,
        runs: impl Iterator<Item = (String, Run)>,
        mut on_each: impl FnMut(&str, &Outcome),
    ) -> Result<Vec<(String, Outcome)>> {
        let path = self.path.clone();
        let now = now();
        let mut out = Vec::new();
        let r: rusqlite::Result<()> = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            for (origin, run) in runs {
                let outcome = match import::stored_id(&tx, &import::run_uid(&run))? {
                    Some(id) => Outcome::Duplicate(Some(id)),
                    None => Outcome::Imported(insert_run(&tx, &run, Some(&origin), &now)?),
                };
                on_each(&origin, &outcome);
                out.push((origin, outcome));
            }
            tx.commit()
        })();
        r.map_err(|e| db_error(&path, e))?;
        Ok(out)
    }

    /// All runs, grouped by machine (then by start time).
    pub fn list(&self) -> Result<Vec<RunInfo>> {
        self.list_inner().map_err(|e| db_error(&self.path, e))
    }

    fn list_inner(&self) -> rusqlite::Result<Vec<RunInfo>> {
        let mut st = self.conn.prepare(
            "SELECT r.id, m.host_key, m.short_name, r.started_at, r.tool_version, r.complete, r.origin,
                    (SELECT count(*) FROM measurements x WHERE x.run_id = r.id),
                    (SELECT count(*) FROM measurements x WHERE x.run_id = r.id AND x.valid = 0),
                    (SELECT group_concat(key || '=' || value, ' ') FROM
                        (SELECT key, value FROM run_labels l WHERE l.run_id = r.id
                         ORDER BY key != 'host', key)),
                    r.command,
                    (SELECT count(DISTINCT x.probe) FROM measurements x WHERE x.run_id = r.id)
             FROM runs r JOIN machines m ON m.id = r.machine_id
             ORDER BY m.id, r.started_at, r.id",
        )?;
        // Text as stored (an imported file's name, a command line): made inert for any view.
        let text = |r: &rusqlite::Row, i: usize| -> rusqlite::Result<String> {
            Ok(crate::escape::terminal(&r.get::<_, String>(i)?).into_owned())
        };
        let rows = st.query_map([], |r| {
            Ok(RunInfo {
                id: r.get(0)?,
                host_key: text(r, 1)?,
                machine: text(r, 2)?,
                started_at: text(r, 3)?,
                tool_version: text(r, 4)?,
                complete: r.get(5)?,
                origin: r
                    .get::<_, Option<String>>(6)?
                    .map(|o| crate::escape::terminal(&o).into_owned()),
                measurements: r.get(7)?,
                invalid: r.get(8)?,
                labels: r
                    .get::<_, Option<String>>(9)?
                    .map(|l| crate::escape::terminal(&l).into_owned())
                    .unwrap_or_default(),
                command: text(r, 10)?,
                probes: r.get(11)?,
            })
        })?;
        rows.collect()
    }

    /// The run saved under `id`, exactly as it was saved.
    pub fn get(&self, id: i64) -> Result<Run> {
        let json: Option<String> = self
            .conn
            .query_row("SELECT run_json FROM runs WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| db_error(&self.path, e))?;
        let json = json.ok_or_else(|| self.unknown(id))?;
        parse_run(&json, &format!("{}: run {id}", self.path.display()))
    }

    fn unknown(&self, id: i64) -> Error {
        Error::usage(format!(
            "{}: no run with id {id} (see `oscost history list`)",
            self.path.display()
        ))
    }

    /// Deletes a run (its measurements go with it); a machine without runs is removed too.
    pub fn delete(&mut self, id: i64) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| db_error(&path, e))?;
        let n = tx
            .execute("DELETE FROM runs WHERE id = ?1", [id])
            .map_err(|e| db_error(&path, e))?;
        if n == 0 {
            return Err(self_unknown(&path, id));
        }
        tx.execute(
            "DELETE FROM machines WHERE id NOT IN (SELECT machine_id FROM runs)",
            [],
        )
        .map_err(|e| db_error(&path, e))?;
        tx.commit().map_err(|e| db_error(&path, e))
    }

    /// Every run's id and command line (as saved), the most recently started first: what
    /// `report --last` and `compare --last` choose from (a run's kind is in its command).
    pub fn newest_first(&self) -> Result<Vec<(i64, String)>> {
        let mut st = self
            .conn
            .prepare("SELECT id, command FROM runs ORDER BY started_at DESC, id DESC")
            .map_err(|e| db_error(&self.path, e))?;
        // Made inert as `list` does, so a kind derived from it reads as `history list` shows.
        st.query_map([], |r| {
            let command: String = r.get(1)?;
            Ok((r.get(0)?, crate::escape::terminal(&command).into_owned()))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| db_error(&self.path, e))
    }

    /// Ids of the `n` most recently started runs, oldest first (for `compare --last 2`).
    pub fn last(&self, n: usize) -> Result<Vec<i64>> {
        let mut st = self
            .conn
            .prepare("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT ?1")
            .map_err(|e| db_error(&self.path, e))?;
        let mut ids: Vec<i64> = st
            .query_map([n as i64], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| db_error(&self.path, e))?;
        ids.reverse();
        Ok(ids)
    }
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Writes one run (machine row, run row with its id and fleet facts, labels, one row per
/// measurement) inside `tx`; shared by save and import.
fn insert_run(
    tx: &rusqlite::Transaction,
    run: &Run,
    origin: Option<&str>,
    now: &str,
) -> rusqlite::Result<i64> {
    let run_json = serde_json::to_string(run)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    let facts = serde_json::to_string(&run.machine)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    tx.execute(
        "INSERT INTO machines (host_key, short_name, facts_json, first_seen, last_seen)
         VALUES (?1, ?2, ?3, ?4, ?4)
         ON CONFLICT(host_key) DO UPDATE SET short_name = ?2, facts_json = ?3, last_seen = ?4",
        params![run.machine.host_key(), run.machine.short_name(), facts, now],
    )?;
    let machine_id: i64 = tx.query_row(
        "SELECT id FROM machines WHERE host_key = ?1",
        [run.machine.host_key()],
        |r| r.get(0),
    )?;
    tx.execute(
        "INSERT INTO runs (machine_id, started_at, tool_version, schema_version, command, complete, origin, saved_at, run_json, run_uid, facts_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            machine_id,
            run.started_at,
            run.tool_version,
            run.schema_version,
            run.command.join(" "),
            run.complete,
            origin,
            now,
            run_json,
            import::run_uid(run),
            import::facts_json(run),
        ],
    )?;
    let run_id = tx.last_insert_rowid();
    import::insert_labels(tx, run_id, run)?;
    let mut ins = tx.prepare_cached(
        "INSERT INTO measurements (run_id, idx, probe, params, unit, status, valid, median, ci_lo, ci_hi)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for (i, m) in run.measurements.iter().enumerate() {
        let status = m.status.name();
        ins.execute(params![
            run_id,
            i as i64,
            m.probe,
            serde_json::to_string(&m.params).unwrap_or_default(),
            m.unit.to_string(),
            status,
            m.valid,
            m.value.as_ref().map(|v| v.median),
            m.value.as_ref().map(|v| v.ci95[0]),
            m.value.as_ref().map(|v| v.ci95[1]),
        ])?;
    }
    Ok(run_id)
}

fn self_unknown(path: &Path, id: i64) -> Error {
    Error::usage(format!(
        "{}: no run with id {id} (see `oscost history list`)",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Run {
        parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap()
    }

    /// A run other than the fixture (saving the fixture again would be a duplicate).
    fn other_run() -> Run {
        let mut r = fixture();
        r.measurements[0].samples[0] += 1.0;
        r
    }

    #[test]
    fn round_trip_list_get_delete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/history.sqlite");
        let mut s = Store::open(&path).unwrap();
        let run = fixture();
        let id1 = s.save(&run, None).unwrap();
        let mut other = fixture();
        other.machine.hostname = Some("far-away".into());
        other.started_at = "2030-01-01T00:00:00Z".into();
        let id2 = s.save(&other, Some("far.json")).unwrap();
        let mut again = fixture();
        again.measurements[0].samples[0] += 1.0;
        let id3 = s.save(&again, None).unwrap();
        assert_eq!(
            s.save(&run, None).unwrap(),
            id1,
            "the same run is stored once"
        );
        let list = s.list().unwrap();
        assert_eq!(list.len(), 3);
        // Grouped by machine: both runs of the first host come before the other host's run.
        assert_eq!(
            list.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![id1, id3, id2]
        );
        assert_eq!(list[2].origin.as_deref(), Some("far.json"));
        assert_eq!(list[2].labels, "host=far-away");
        assert_eq!(list[0].measurements as usize, run.measurements.len());
        assert_eq!(
            list[0].invalid as usize,
            run.measurements.iter().filter(|m| !m.valid).count()
        );
        let back = s.get(id1).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&run).unwrap()
        );
        assert_eq!(s.last(2).unwrap(), vec![id3, id2]);
        s.delete(id2).unwrap();
        assert_eq!(s.list().unwrap().len(), 2);
        let machines: i64 = s
            .conn
            .query_row("SELECT count(*) FROM machines", [], |r| r.get(0))
            .unwrap();
        assert_eq!(machines, 1, "machine without runs removed");
        let e = s.get(id2).unwrap_err();
        assert!(e.to_string().contains(&format!("no run with id {id2}")) && e.exit_code() == 2);
        assert!(s.delete(id2).is_err());
    }

    #[test]
    fn many_concurrent_first_saves_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/h.sqlite");
        let n = 24;
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(n));
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    // Different runs: the same run saved twice is one run.
                    let mut run = fixture();
                    run.started_at = format!("2030-01-01T00:00:{i:02}Z");
                    run.run_id = None;
                    barrier.wait();
                    Store::open(&path).and_then(|mut s| s.save(&run, None))
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap().unwrap();
        }
        assert_eq!(Store::open(&path).unwrap().list().unwrap().len(), n);
    }

    #[test]
    fn reading_never_creates_a_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/h.sqlite");
        assert!(Store::open_existing(&path).unwrap().is_none());
        assert!(!dir.path().join("missing").exists());
        check_can_save(&path).unwrap();
        assert!(
            !dir.path().join("missing").exists(),
            "the check creates nothing"
        );
    }

    #[test]
    fn import_skips_duplicates_in_one_transaction_and_stores_labels() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("h.sqlite")).unwrap();
        let a = fixture();
        let mut b = fixture();
        b.labels.insert("host".into(), "vm-b".into());
        b.labels.insert("rack".into(), "r2".into());
        let first = s.save(&a, None).unwrap();
        let mut seen = 0;
        let out = s
            .import(
                vec![
                    ("a.json".to_string(), a.clone()),
                    ("b.json".to_string(), b.clone()),
                    ("b-again.json".to_string(), b),
                ]
                .into_iter(),
                |_, _| seen += 1,
            )
            .unwrap();
        assert_eq!(seen, 3);
        assert_eq!(out[0].1, Outcome::Duplicate(Some(first)));
        let Outcome::Imported(bid) = out[1].1 else {
            panic!("b not imported: {out:?}")
        };
        assert_eq!(out[2].1, Outcome::Duplicate(Some(bid)));
        assert_eq!(s.list().unwrap().len(), 2);
        let labels: Vec<(String, String)> = s
            .conn
            .prepare("SELECT key, value FROM run_labels WHERE run_id = ?1 ORDER BY key")
            .unwrap()
            .query_map([bid], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            labels,
            vec![("host".into(), "vm-b".into()), ("rack".into(), "r2".into())]
        );
        let host: String = s
            .conn
            .query_row(
                "SELECT value FROM run_labels WHERE run_id = ?1 AND key = 'host'",
                [first],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            Some(host),
            a.machine.hostname,
            "host defaults to the hostname"
        );
    }

    #[test]
    fn a_failed_first_open_leaves_no_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        // A directory where SQLite wants its journal makes creating the schema fail after
        // the database file was created, as a full disk does.
        std::fs::create_dir(dir.path().join("h.sqlite-journal")).unwrap();
        assert!(Store::open(&path).is_err());
        assert!(!path.exists(), "0-byte database left behind");
    }

    #[test]
    fn version_1_history_gets_ids_labels_and_facts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(schema::MIGRATIONS[0]).unwrap();
        conn.execute_batch(
            "CREATE TABLE oscost_schema (version INTEGER NOT NULL); INSERT INTO oscost_schema VALUES (1);
             INSERT INTO machines VALUES (1, 'k', 'n', '{}', 'x', 'x');",
        )
        .unwrap();
        let json = include_str!("../../tests/fixtures/run-quick.json");
        for _ in 0..2 {
            conn.execute(
                "INSERT INTO runs (machine_id, started_at, tool_version, schema_version, command, complete, saved_at, run_json)
                 VALUES (1, 's', 'v', 1, 'c', 1, 'x', ?1)",
                [json],
            )
            .unwrap();
        }
        drop(conn);
        let s = Store::open(&path).unwrap();
        let rows: Vec<(Option<String>, Option<String>)> = s
            .conn
            .prepare("SELECT run_uid, facts_json FROM runs ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            rows[0].0.as_deref(),
            Some(import::run_uid(&fixture()).as_str())
        );
        assert_eq!(
            rows[1].0, None,
            "the second copy of the same run keeps no id"
        );
        assert!(rows[0].1.as_deref().unwrap().contains("\"kernel\""));
        let labelled: i64 = s
            .conn
            .query_row(
                "SELECT count(*) FROM run_labels WHERE key = 'host'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(labelled, 2);
    }

    #[test]
    fn reopening_keeps_data_and_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        Store::open(&path).unwrap().save(&fixture(), None).unwrap();
        let s = Store::open(&path).unwrap();
        assert_eq!(s.list().unwrap().len(), 1);
        let v: i64 = s
            .conn
            .query_row("SELECT version FROM oscost_schema", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v as u32, schema_version());
    }

    #[test]
    fn garbage_file_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let junk =
            b"this is not a database, just some text that happens to be long enough".repeat(20);
        std::fs::write(&path, &junk).unwrap();
        let e = Store::open(&path).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().starts_with(&path.display().to_string()),
            "{e}"
        );
        assert!(
            e.to_string().contains("not an SQLite database or corrupt"),
            "{e}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), junk);
    }

    #[test]
    fn a_history_missing_a_table_or_column_is_refused_before_use() {
        let dir = tempfile::tempdir().unwrap();
        for (sql, what) in [
            ("DROP TABLE run_labels", "without table run_labels"),
            (
                "ALTER TABLE runs DROP COLUMN facts_json",
                "without column runs.facts_json",
            ),
        ] {
            let path = dir.path().join(format!("{}.sqlite", what.len()));
            Store::open(&path).unwrap().save(&fixture(), None).unwrap();
            Connection::open(&path).unwrap().execute_batch(sql).unwrap();
            for e in [
                Store::open(&path).err().unwrap(),
                check_can_save(&path).unwrap_err(),
            ] {
                assert!(e.to_string().contains(what), "{e}");
                assert_eq!(e.exit_code(), 2);
            }
        }
    }

    #[test]
    fn only_a_regular_file_or_nothing_is_taken_for_a_database() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let lp = dir.path().join("loop");
        std::os::unix::fs::symlink(&lp, &lp).unwrap();
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("missing"), &dangling).unwrap();
        for (p, what) in [
            (&fifo, "a FIFO, not a history database"),
            (&lp, "symbolic links"),
            (&dangling, "a symlink to a missing file"),
            (
                &dir.path().to_path_buf(),
                "a directory, not a history database",
            ),
        ] {
            for e in [
                Store::open_existing(p).err().unwrap(),
                Store::open(p).err().unwrap(),
                check_can_save(p).unwrap_err(),
            ] {
                assert!(e.to_string().contains(what), "{}: {e}", p.display());
                assert_eq!(e.exit_code(), 2);
            }
        }
        assert!(!dir.path().join("missing").exists());
    }

    #[test]
    fn foreign_and_newer_databases_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let foreign = dir.path().join("f.sqlite");
        Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE t (x);")
            .unwrap();
        assert!(Store::open(&foreign)
            .err()
            .unwrap()
            .to_string()
            .contains("not an oscost history"));
        let newer = dir.path().join("n.sqlite");
        drop(Store::open(&newer).unwrap());
        Connection::open(&newer)
            .unwrap()
            .execute("UPDATE oscost_schema SET version = 99", [])
            .unwrap();
        let e = Store::open(&newer).err().unwrap().to_string();
        assert!(e.contains("schema 99 is newer"), "{e}");
    }

    #[test]
    fn locked_database_fails_with_one_line_and_keeps_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let mut s = Store::open(&path).unwrap();
        s.save(&fixture(), None).unwrap();
        let holder = Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN EXCLUSIVE;").unwrap();
        let e = s.save(&other_run(), None).unwrap_err().to_string();
        assert!(e.contains("locked"), "{e}");
        holder.execute_batch("ROLLBACK;").unwrap();
        assert_eq!(s.list().unwrap().len(), 1);
    }

    #[test]
    fn read_only_database_lists_but_refuses_to_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        Store::open(&path).unwrap().save(&fixture(), None).unwrap();
        let conn =
            Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let mut s = Store {
            conn,
            path: path.clone(),
        };
        assert_eq!(s.list().unwrap().len(), 1);
        let e = s.save(&other_run(), None).unwrap_err().to_string();
        assert!(e.contains("read-only"), "{e}");
        assert_eq!(Store::open(&path).unwrap().list().unwrap().len(), 1);
    }
}
