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
        tx.execute("UPDATE oscost_schema SET version = ?1", [i as i64 + 1])?;
    }
    Ok(())
}
