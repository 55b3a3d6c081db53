//! A measured run is never lost: when it cannot be saved to the history after measuring
//! (locked beyond a long wait, disk full, a damaged database, any error), it is written as a
//! run file under the data directory, and the message says where and how to import it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Store;
use crate::error::{Error, Result};
use crate::model::Run;

/// How long a save waits for the history's lock: first as every open does, then (after
/// saying so) this much longer, before the run goes to a recovery file instead.
pub const LONG_WAIT: Duration = Duration::from_secs(60);

/// Where a save went.
#[derive(Debug)]
pub enum Saved {
    /// In the history, as run `id`.
    Stored { id: i64, db: PathBuf },
    /// Not in the history (`why`), but in this run file.
    Kept {
        why: Error,
        file: PathBuf,
        db: PathBuf,
    },
    /// Neither: why not in the history, and why not in a file.
    Lost { why: Error, kept: Error },
}

impl Saved {
    /// The line to print for a run that is not in the history: why, where it is instead and
    /// the command that imports it.
    pub fn explain(&self) -> Option<String> {
        match self {
            Saved::Stored { .. } => None,
            Saved::Kept { why, file, db } => Some(format!(
                "the run was not saved to the history: {why}. It is kept in {}; import it \
                 with: oscost history import {} --db {}",
                file.display(),
                shell_word(file),
                shell_word(db)
            )),
            Saved::Lost { why, kept } => Some(format!(
                "the run was not saved to the history: {why}; nor could it be kept in a file \
                 ({kept}): it remains only in the results printed above"
            )),
        }
    }
}

/// A path as one shell word, quoted when it holds anything a shell would split or expand.
pub fn shell_word(p: &Path) -> String {
    let s = p.display().to_string();
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(&b))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Saves `run` to the history at `db`, waiting `waits.0` for a lock and then, after saying
/// so on stderr (unless `quiet`), `waits.1` more; if it still cannot be saved, writes it to a
/// run file in the first of `keep_dirs` that takes it.
pub fn save_or_keep(
    run: &Run,
    db: &Path,
    keep_dirs: &[&Path],
    waits: (Duration, Duration),
    quiet: bool,
) -> Saved {
    let said = std::cell::Cell::new(false);
    let on_wait = || {
        if !quiet && !said.replace(true) {
            eprintln!(
                "oscost: the history {} is locked by another process; waiting up to {} s more",
                db.display(),
                waits.1.as_secs()
            );
        }
    };
    // The lock may be met opening the history (its schema is read) or saving: both wait
    // `waits.0`, then `waits.1` more.
    let opened = match Store::open_with(db, waits.0) {
        Err(_) if super::is_locked(db) => {
            on_wait();
            Store::open_with(db, waits.1)
        }
        r => r,
    };
    let saved = opened.and_then(|mut store| store.save_waiting(run, waits.0, waits.1, on_wait));
    let why = match saved {
        Ok(id) => {
            return Saved::Stored {
                id,
                db: db.to_path_buf(),
            }
        }
        Err(e) => e,
    };
    // Compact, not pretty: the file is for `history import`, and at half the size it gets
    // through a file-size limit or a nearly full disk that refused the history.
    let text = serde_json::to_string(run).expect("a Run always serializes");
    let mut kept = Error::env("no directory to keep it in");
    for dir in keep_dirs {
        match keep_in(dir, run, &text) {
            Ok(file) => {
                return Saved::Kept {
                    why,
                    file,
                    db: db.to_path_buf(),
                }
            }
            Err(e) => kept = e,
        }
    }
    Saved::Lost { why, kept }
}

/// The data directory's place for runs the history could not take (never the current
/// directory).
pub fn default_keep_dir() -> Option<PathBuf> {
    super::default_path()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("unsaved")))
}

/// Writes the run to a new file `run-<start>-<id>.json` in `dir` (created when missing).
fn keep_in(dir: &Path, run: &Run, text: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let stamp: String = run
        .started_at
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(32)
        .collect();
    let id: String = super::import::run_uid(run).chars().take(12).collect();
    let file = dir.join(format!("run-{stamp}-{id}.json"));
    crate::report::export::write_atomic(&file, text.as_bytes())?;
    let file = std::fs::canonicalize(&file).unwrap_or(file);
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Run {
        crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f").unwrap()
    }

    const SHORT: (Duration, Duration) = (Duration::from_millis(50), Duration::from_millis(100));

    /// Imports the kept file into `db` and returns how many runs `db` then holds.
    fn import(file: &Path, db: &Path) -> usize {
        let run = crate::input::read_run(file).unwrap();
        let mut s = Store::open(db).unwrap();
        s.import(std::iter::once(("kept".to_string(), run)), |_, _| {})
            .unwrap();
        s.list().unwrap().len()
    }

    #[test]
    fn a_run_the_history_refuses_is_kept_in_a_file_that_imports() {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("h.sqlite");
        drop(Store::open(&db).unwrap());
        // Any error at the moment of saving: here the database itself refuses the row.
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(
                "CREATE TRIGGER no BEFORE INSERT ON runs BEGIN SELECT RAISE(FAIL, 'disk is full'); END;",
            )
            .unwrap();
        let keep = t.path().join("data/unsaved");
        let saved = save_or_keep(&fixture(), &db, &[&keep], SHORT, true);
        let Saved::Kept { file, why, .. } = &saved else {
            panic!("{saved:?}")
        };
        assert!(why.to_string().contains("disk is full"), "{why}");
        assert!(file.starts_with(&keep), "{}", file.display());
        let line = saved.explain().unwrap();
        assert!(
            line.contains(&format!(
                "import it with: oscost history import {} --db {}",
                file.display(),
                db.display()
            )),
            "{line}"
        );
        assert_eq!(import(file, &t.path().join("other.sqlite")), 1);
    }

    #[test]
    fn a_history_locked_beyond_the_wait_keeps_the_run() {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("h.sqlite");
        drop(Store::open(&db).unwrap());
        // Another writer's transaction, held as the campaign held it.
        let holder = rusqlite::Connection::open(&db).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE;").unwrap();
        let t0 = std::time::Instant::now();
        let saved = save_or_keep(&fixture(), &db, &[t.path()], SHORT, true);
        // Both waits were spent before giving up.
        assert!(t0.elapsed() >= SHORT.0 + SHORT.1, "{:?}", t0.elapsed());
        let Saved::Kept { file, why, .. } = saved else {
            panic!("{saved:?}")
        };
        assert!(why.to_string().contains("locked"), "{why}");
        holder.execute_batch("ROLLBACK;").unwrap();
        assert_eq!(import(&file, &db), 1);
        // A lock released within the wait: saved, nothing kept.
        let holder = rusqlite::Connection::open(&db).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE;").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            holder.execute_batch("ROLLBACK;").unwrap();
        });
        let mut other = fixture();
        other.measurements[0].samples[0] += 1.0;
        other.run_id = None;
        let long = (Duration::from_millis(50), Duration::from_secs(5));
        let saved = save_or_keep(&other, &db, &[t.path()], long, true);
        release.join().unwrap();
        assert!(matches!(saved, Saved::Stored { .. }), "{saved:?}");
    }

    #[test]
    fn nowhere_to_keep_it_says_so() {
        let t = tempfile::tempdir().unwrap();
        let not_a_dir = t.path().join("file");
        std::fs::write(&not_a_dir, "x").unwrap();
        let db = not_a_dir.join("h.sqlite");
        let second = t.path().join("second");
        // The first place cannot take it, the second can.
        let saved = save_or_keep(
            &fixture(),
            &db,
            &[&not_a_dir.join("keep"), &second],
            SHORT,
            true,
        );
        assert!(
            matches!(&saved, Saved::Kept { file, .. } if file.starts_with(&second)),
            "{saved:?}"
        );
        // No place takes it: the line says only the printed results remain.
        let saved = save_or_keep(&fixture(), &db, &[&not_a_dir.join("keep")], SHORT, true);
        assert!(matches!(saved, Saved::Lost { .. }), "{saved:?}");
        assert!(saved
            .explain()
            .unwrap()
            .contains("it remains only in the results printed above"));
        assert_eq!(shell_word(Path::new("/a b/c'd")), "'/a b/c'\\''d'");
        assert_eq!(shell_word(Path::new("/data/x.json")), "/data/x.json");
    }
}
