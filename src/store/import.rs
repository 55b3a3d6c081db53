//! Bringing many hosts' runs into one history: a stable id per run (so importing the same
//! files twice adds nothing), the run's labels and the machine facts a fleet report compares,
//! and the import of hundreds of files in one transaction.

use std::collections::BTreeMap;

use rusqlite::{params, OptionalExtension, Transaction};
use sha2::{Digest, Sha256};

use crate::compare::fleet::{Figure, FleetRun};
use crate::model::Run;

/// The run's identity: its own `run_id` when it carries one, else a SHA-256 over what makes a
/// run itself: host, start time, command line, labels, and every probe with its raw samples
/// (timings no two runs share). Fields that later versions add do not enter it, so an old file
/// gets the same id whichever oscost imports it.
pub fn run_uid(run: &Run) -> String {
    if let Some(id) = run.run_id.as_deref().filter(|s| !s.is_empty()) {
        return id.to_string();
    }
    derive_uid(run)
}

/// The derived id (ignores `run.run_id`): what a new run records as its `run_id`.
pub fn derive_uid(run: &Run) -> String {
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(run.machine.hostname.as_deref().unwrap_or("").as_bytes());
    field(run.started_at.as_bytes());
    for a in &run.command {
        field(a.as_bytes());
    }
    for (k, v) in &run.labels {
        field(k.as_bytes());
        field(v.as_bytes());
    }
    for m in &run.measurements {
        field(m.probe.as_bytes());
        field(m.params_label().as_bytes());
        let bits: Vec<u8> = m
            .samples
            .iter()
            .chain(&m.baseline_samples)
            .flat_map(|s| s.to_bits().to_le_bytes())
            .collect();
        field(&bits);
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The run's labels, with `host` = its hostname when the run has none (runs from before
/// labels existed, or files written by hand).
pub fn effective_labels(run: &Run) -> BTreeMap<String, String> {
    let mut l = run.labels.clone();
    l.entry("host".into()).or_insert_with(|| {
        run.machine
            .hostname
            .clone()
            .unwrap_or_else(|| "unknown-host".into())
    });
    l
}

/// The fleet facts of the run's machine as a JSON object (see `compare::fleet::machine_facts`).
pub fn facts_json(run: &Run) -> String {
    serde_json::to_string(&crate::compare::fleet::machine_facts(&run.machine))
        .expect("a string map always serializes")
}

pub(super) fn insert_labels(tx: &Transaction, run_id: i64, run: &Run) -> rusqlite::Result<()> {
    let mut ins = tx.prepare_cached(
        "INSERT OR REPLACE INTO run_labels (run_id, key, value) VALUES (?1, ?2, ?3)",
    )?;
    for (k, v) in effective_labels(run) {
        ins.execute(params![run_id, k, v])?;
    }
    Ok(())
}

/// What an import did with each file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Stored under this history id.
    Imported(i64),
    /// A run with the same id is already stored (under this history id, when known).
    Duplicate(Option<i64>),
}

pub(super) fn stored_id(tx: &Transaction, uid: &str) -> rusqlite::Result<Option<i64>> {
    tx.query_row("SELECT id FROM runs WHERE run_uid = ?1", [uid], |r| {
        r.get(0)
    })
    .optional()
}

impl super::Store {
    /// The complete runs whose labels include every `filter` pair, as the fleet report reads
    /// them: labels, per-run facts and the valid figures, from the index tables (no run JSON
    /// is parsed, so a thousand runs load in a moment).
    pub fn fleet_runs(
        &self,
        filter: &BTreeMap<String, String>,
    ) -> crate::error::Result<Vec<FleetRun>> {
        self.fleet_runs_inner(filter)
            .map_err(|e| super::db_error(&self.path, e))
    }

    fn fleet_runs_inner(
        &self,
        filter: &BTreeMap<String, String>,
    ) -> rusqlite::Result<Vec<FleetRun>> {
        // Text as stored (host names, facts, probes, params): made inert for any view.
        let t = |s: &str| crate::escape::terminal(s).into_owned();
        let mut labels: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
        let mut st = self
            .conn
            .prepare("SELECT run_id, key, value FROM run_labels")?;
        let rows = st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?)))?;
        for row in rows {
            let (id, k, v) = row?;
            labels.entry(id).or_default().insert(k, v);
        }
        let mut runs: BTreeMap<i64, FleetRun> = BTreeMap::new();
        let mut st = self.conn.prepare(
            "SELECT id, run_uid, started_at, facts_json FROM runs
             WHERE complete = 1 AND facts_json IS NOT NULL",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        for row in rows {
            let (id, uid, started_at, facts) = row?;
            let labels = labels.remove(&id).unwrap_or_default();
            if filter.iter().any(|(k, v)| labels.get(k) != Some(v)) {
                continue;
            }
            let facts: BTreeMap<String, String> = serde_json::from_str(&facts).unwrap_or_default();
            runs.insert(
                id,
                FleetRun {
                    uid: t(&uid.unwrap_or_else(|| format!("row-{id}"))),
                    started_at: t(&started_at),
                    labels: labels.iter().map(|(k, v)| (t(k), t(v))).collect(),
                    facts: facts.iter().map(|(k, v)| (t(k), t(v))).collect(),
                    figures: Vec::new(),
                    left_out: 0,
                },
            );
        }
        let mut st = self.conn.prepare(
            "SELECT run_id, probe, params, unit, median, ci_lo, ci_hi FROM measurements
             WHERE valid = 1 AND status = 'ok' AND median IS NOT NULL
             ORDER BY run_id, idx",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, f64>(4)?,
                r.get::<_, Option<f64>>(5)?,
                r.get::<_, Option<f64>>(6)?,
            ))
        })?;
        for row in rows {
            let (id, probe, params, unit, median, lo, hi) = row?;
            let Some(run) = runs.get_mut(&id) else {
                continue;
            };
            let params: BTreeMap<String, serde_json::Value> =
                serde_json::from_str(&params).unwrap_or_default();
            run.figures.push(Figure {
                probe: t(&probe),
                params: t(&crate::model::params_label(&params)),
                unit: crate::units::Unit::from(t(&unit)),
                median,
                ci: [lo.unwrap_or(median), hi.unwrap_or(median)],
            });
        }
        let mut st = self.conn.prepare(
            "SELECT run_id, count(*) FROM measurements
             WHERE NOT (valid = 1 AND status = 'ok' AND median IS NOT NULL) GROUP BY run_id",
        )?;
        let rows = st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
        for row in rows {
            let (id, n) = row?;
            if let Some(run) = runs.get_mut(&id) {
                run.left_out = n as usize;
            }
        }
        Ok(runs.into_values().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Run {
        crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap()
    }

    #[test]
    fn uid_is_stable_and_tells_runs_apart() {
        let a = fixture();
        assert_eq!(run_uid(&a), run_uid(&fixture()));
        assert_eq!(run_uid(&a).len(), 32);
        let mut b = fixture();
        b.labels.insert("host".into(), "other".into());
        assert_ne!(run_uid(&a), run_uid(&b), "labels are part of the identity");
        let mut c = fixture();
        c.measurements[0].samples[0] += 1.0;
        assert_ne!(run_uid(&a), run_uid(&c), "samples are part of the identity");
        let mut d = fixture();
        d.run_id = Some("given".into());
        assert_eq!(run_uid(&d), "given");
        assert_eq!(derive_uid(&d), run_uid(&a));
    }

    #[test]
    fn host_label_falls_back_to_hostname() {
        let mut r = fixture();
        r.machine.hostname = Some("n7".into());
        assert_eq!(effective_labels(&r)["host"], "n7");
        r.labels.insert("host".into(), "vm-a".into());
        assert_eq!(effective_labels(&r)["host"], "vm-a");
    }
}
