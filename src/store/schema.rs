//! The history schema and its migrations. Each migration runs inside the same transaction as
//! the version bump, so a database is always at exactly one known version.

use rusqlite::{Connection, OptionalExtension, Transaction};

/// Migrations in order; the database's version is how many have been applied.
pub const MIGRATIONS: &[&str] = &[
    // 1: machines keyed by host_key (hostname | CPU model | kernel release), runs with their
    // full JSON, and one row per measurement for listing without parsing JSON.
    "CREATE TABLE IF NOT EXISTS machines (
        id INTEGER PRIMARY KEY,
        host_key TEXT NOT NULL UNIQUE,
        short_name TEXT NOT NULL,
        facts_json TEXT NOT NULL,
        first_seen TEXT NOT NULL,
        last_seen TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS runs (
        id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL REFERENCES machines(id),
        started_at TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        command TEXT NOT NULL,
        complete INTEGER NOT NULL,
        origin TEXT,
        saved_at TEXT NOT NULL,
        run_json TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS runs_by_machine ON runs(machine_id, started_at);
    CREATE TABLE IF NOT EXISTS measurements (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        probe TEXT NOT NULL,
        params TEXT NOT NULL,
        unit TEXT NOT NULL,
        status TEXT NOT NULL,
        valid INTEGER NOT NULL,
        median REAL,
        ci_lo REAL,
        ci_hi REAL,
        PRIMARY KEY (run_id, idx)
    );
    CREATE INDEX IF NOT EXISTS measurements_by_probe ON measurements(probe);",
    // 2: fleets. A stable run id (duplicates on import are skipped), the run's labels, and
    // the machine facts a fleet report compares, per run (a machine row keeps only the last).
    // Rows saved before this version are filled in by `backfill_v2`.
    "ALTER TABLE runs ADD COLUMN run_uid TEXT;
    ALTER TABLE runs ADD COLUMN facts_json TEXT;
    CREATE UNIQUE INDEX runs_by_uid ON runs(run_uid);
    CREATE TABLE run_labels (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE INDEX run_labels_by_key ON run_labels(key, value);",
];

/// The version this build writes.
pub fn latest() -> u32 {
    MIGRATIONS.len() as u32
}

/// What is in the file, before any change is made to it.
#[derive(Debug, Clone, Copy)]
pub enum Found {
    /// No tables at all: a new database.
    Empty,
    /// An oscost history at this version.
    Version(u32),
    /// Tables, but not ours: never touched.
    Foreign,
}

pub fn inspect(conn: &Connection) -> rusqlite::Result<Found> {
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
        [],
        |r| r.get(0),
    )?;
    if tables == 0 {
        return Ok(Found::Empty);
    }
    let has_version: bool = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'oscost_schema'",
            [],
            |_| Ok(true),
        )
        .optional()?
        .unwrap_or(false);
    if !has_version {
        return Ok(Found::Foreign);
    }
    let v: i64 = conn.query_row("SELECT version FROM oscost_schema", [], |r| r.get(0))?;
    Ok(Found::Version(v as u32))
}

/// The tables and columns of a history at the latest version, `(table, column)`, from an
/// empty database the migrations build (so the check follows the migrations).
fn expected() -> rusqlite::Result<Vec<(String, String)>> {
    let mut conn = Connection::open_in_memory()?;
    let tx = conn.transaction()?;
    migrate(&tx, 0)?;
    tx.commit()?;
    columns(&conn)
}

fn columns(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut st = conn.prepare(
        "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
         WHERE m.type = 'table' ORDER BY m.name, p.cid",
    )?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// The first table or column an up-to-date history must have and `conn` lacks, in words
/// ("table runs", "column runs.run_json"); None when nothing is missing.
pub fn missing(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let have = columns(conn)?;
    Ok(expected()?.into_iter().find_map(|(t, c)| {
        if !have.iter().any(|(ht, _)| *ht == t) {
            Some(format!("table {t}"))
        } else if !have.contains(&(t.clone(), c.clone())) {
            Some(format!("column {t}.{c}"))
        } else {
            None
        }
    }))
}

/// Applies the migrations after `from`, and records the new version, in `tx`.
pub fn migrate(tx: &Transaction, from: u32) -> rusqlite::Result<()> {
    if from == 0 {
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS oscost_schema (version INTEGER NOT NULL);
             INSERT INTO oscost_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM oscost_schema);",
        )?;
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        tx.execute_batch(sql)?;
        if i + 1 == 2 {
            backfill_v2(tx)?;
        }
        tx.execute("UPDATE oscost_schema SET version = ?1", [i as i64 + 1])?;
    }
    Ok(())
}

/// Gives runs saved before version 2 their id, labels and fleet facts, from their JSON. A row
/// whose JSON no longer parses keeps NULLs (it is still listed; fleet reports skip it).
fn backfill_v2(tx: &Transaction) -> rusqlite::Result<()> {
    let rows: Vec<(i64, String)> = {
        let mut st = tx.prepare("SELECT id, run_json FROM runs")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (id, json) in rows {
        let Ok(run) = crate::input::parse_run(&json, "stored run") else {
            continue;
        };
        // Two identical rows (the same file imported twice before ids existed) keep the
        // first row's id; the later copy stays listed without one.
        let uid = super::import::run_uid(&run);
        let taken: bool = tx
            .query_row("SELECT 1 FROM runs WHERE run_uid = ?1", [&uid], |_| {
                Ok(true)
            })
            .optional()?
            .unwrap_or(false);
        tx.execute(
            "UPDATE runs SET run_uid = ?1, facts_json = ?2 WHERE id = ?3",
            rusqlite::params![(!taken).then_some(uid), super::import::facts_json(&run), id],
        )?;
        super::import::insert_labels(tx, id, &run)?;
    }
    Ok(())
}
