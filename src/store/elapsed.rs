//! The item times of past runs (`Run::item_times`), read for duration estimates: read-only,
//! never creating or migrating a database, and cheap (SQLite extracts the one JSON field, so
//! the runs' samples are not parsed).

use crate::error::{Error, Result};
use crate::model::ItemTime;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::Duration;

/// Most recent runs of a machine looked at: each is parsed by SQLite to extract one field, so
/// a long history of big runs (mem latency's samples) does not slow every start.
const SCAN: i64 = 100;

/// The `item_times` of up to `limit` most recent runs of the machine `host_key` that have
/// them (among its last [`SCAN`] runs), most recent first. No file: an empty list (nothing is
/// created).
pub fn past_item_times(db: &Path, host_key: &str, limit: usize) -> Result<Vec<Vec<ItemTime>>> {
    if !db.is_file() {
        return Ok(Vec::new());
    }
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| Error::env(format!("{}: {e}", db.display())))?;
    // A save in progress must not stall the estimate for long.
    let _ = conn.busy_timeout(Duration::from_millis(200));
    let query = || -> rusqlite::Result<Vec<String>> {
        let mut stmt = conn.prepare(
            "SELECT t FROM (
                 SELECT r.id, json_extract(r.run_json, '$.item_times') AS t
                 FROM runs r JOIN machines m ON m.id = r.machine_id
                 WHERE m.host_key = ?1
                 ORDER BY r.id DESC LIMIT ?3)
             WHERE t IS NOT NULL ORDER BY id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(rusqlite::params![host_key, limit as i64, SCAN], |r| {
            r.get::<_, String>(0)
        })?;
        rows.collect()
    };
    let texts = query().map_err(|e| Error::env(format!("{}: {e}", db.display())))?;
    Ok(texts
        .iter()
        .filter_map(|t| serde_json::from_str::<Vec<ItemTime>>(t).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Run;

    fn run(host: &str, times: Vec<ItemTime>) -> Run {
        let mut r: Run = serde_json::from_str(
            r#"{"schema_version":1,"tool_version":"t","started_at":"2026-01-01T00:00:00Z",
                "command":["oscost"],"machine":{},"measurements":[]}"#,
        )
        .unwrap();
        r.machine.hostname = Some(host.into());
        r.started_at = format!("2026-01-01T00:00:{:02}Z", times.len());
        r.item_times = times;
        r
    }

    fn t(label: &str, elapsed: f64) -> ItemTime {
        ItemTime {
            label: label.into(),
            expected_s: 1.0,
            elapsed_s: elapsed,
        }
    }

    #[test]
    fn reads_this_machines_runs_newest_first_and_never_creates() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.sqlite");
        assert!(past_item_times(&db, "x", 5).unwrap().is_empty());
        assert!(!db.exists(), "a read created the database");
        let mut s = crate::store::Store::open(&db).unwrap();
        let a = run("a", vec![t("syscall.null", 1.0)]);
        s.save(&a, None).unwrap();
        s.save(
            &run("a", vec![t("syscall.null", 2.0), t("call.function", 3.0)]),
            None,
        )
        .unwrap();
        s.save(&run("other", vec![t("syscall.null", 9.0)]), None)
            .unwrap();
        // A run without item times (older) is skipped.
        s.save(&run("a", vec![]), None).unwrap();
        let got = past_item_times(&db, &a.machine.host_key(), 5).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0][0].elapsed_s, 2.0);
        assert_eq!(got[1], vec![t("syscall.null", 1.0)]);
        assert_eq!(
            past_item_times(&db, &a.machine.host_key(), 1)
                .unwrap()
                .len(),
            1
        );
    }
}
