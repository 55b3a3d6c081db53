//! JSON and CSV files. Files are written to a temporary sibling and renamed into place, so an
//! interrupted run never leaves a truncated file that looks complete.

use crate::error::{Error, Result};
use crate::model::{Run, Status};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Check before measuring that `path` can be written (parent exists and is writable, the
/// path is not a directory), so a long run does not end in a write error.
pub fn check_writable(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Err(Error::usage(format!(
            "{}: is a directory, not a file",
            path.display()
        )));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(Error::usage(format!(
            "{}: directory {} does not exist",
            path.display(),
            parent.display()
        )));
    }
    let probe = tempfile_in(&parent)?;
    drop(probe);
    Ok(())
}

struct TempFile {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.file.take();
        let _ = std::fs::remove_file(&self.path);
    }
}

fn tempfile_in(dir: &Path) -> Result<TempFile> {
    for i in 0..100u32 {
        let path = dir.join(format!(".oscost-{}-{i}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                return Ok(TempFile {
                    path,
                    file: Some(f),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Error::usage(format!(
                    "cannot write in {}: {e}",
                    dir.display()
                )))
            }
        }
    }
    Err(Error::env(format!(
        "cannot create a temporary file in {}",
        dir.display()
    )))
}

/// Write `bytes` to `path` atomically (temp file + rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile_in(&parent)?;
    let f = tmp.file.as_mut().expect("temp file is open");
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(path.display(), e))?;
    std::fs::rename(&tmp.path, path).map_err(|e| Error::io(path.display(), e))?;
    tmp.file.take();
    tmp.path = PathBuf::new();
    Ok(())
}

pub fn to_json(run: &Run) -> String {
    serde_json::to_string_pretty(run).expect("a Run always serializes")
}

/// One row per measurement with the headline fields.
pub fn to_csv(run: &Run) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "probe",
        "params",
        "unit",
        "status",
        "valid",
        "value_median",
        "value_ci_lo",
        "value_ci_hi",
        "raw_median",
        "raw_unit",
        "baseline_median",
        "n",
        "iterations_per_sample",
        "checks_passed",
        "checks_total",
        "failed_checks",
        "warnings",
    ])
    .map_err(|e| Error::env(e.to_string()))?;
    for m in &run.measurements {
        let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
        let status = match m.status {
            Status::Ok => "ok",
            Status::BelowResolution => "below_resolution",
            Status::Invalid => "invalid",
        };
        let failed: Vec<String> = m
            .failed_checks()
            .map(|c| {
                format!(
                    "{}: expected {}, observed {}",
                    c.name, c.expected, c.observed
                )
            })
            .collect();
        w.write_record([
            m.probe.clone(),
            m.params_label(),
            m.unit.clone(),
            status.into(),
            m.valid.to_string(),
            opt(m.value.as_ref().map(|v| v.median)),
            opt(m.value.as_ref().map(|v| v.ci95[0])),
            opt(m.value.as_ref().map(|v| v.ci95[1])),
            m.raw.median.to_string(),
            m.raw_unit.clone(),
            opt(m.baseline.as_ref().map(|b| b.median)),
            m.raw.n.to_string(),
            m.iterations_per_sample.to_string(),
            m.checks.iter().filter(|c| c.ok).count().to_string(),
            m.checks.len().to_string(),
            failed.join("; "),
            m.warnings.join("; "),
        ])
        .map_err(|e| Error::env(e.to_string()))?;
    }
    let bytes = w.into_inner().map_err(|e| Error::env(e.to_string()))?;
    Ok(String::from_utf8(bytes).expect("csv of utf-8 strings is utf-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritable_targets_are_usage_errors() {
        let e = check_writable(Path::new("/nonexistent-dir/x.json")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("does not exist"));
        let e = check_writable(Path::new("/tmp")).unwrap_err();
        assert!(e.to_string().contains("is a directory"));
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
