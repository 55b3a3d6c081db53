//! JSON and CSV files. Files are written to a temporary sibling and renamed into place, so an
//! interrupted run never leaves a truncated file that looks complete.

use crate::error::{Error, Result};
use crate::model::Run;

pub use super::write::{
    resolve_target, same_file, set_before_rename, write_atomic, write_atomic_with_hook, Target,
};

pub fn to_json(run: &Run) -> String {
    serde_json::to_string_pretty(run).expect("a Run always serializes")
}

/// What a measurement that passed its checks shows instead of a value (the terminal's and
/// the HTML's text: report::instead_of_value); empty where it has a value or is invalid or
/// below resolution (the status column says so).
fn instead(m: &crate::model::Measurement) -> String {
    use crate::model::Status;
    match (m.status, &m.value) {
        (Status::Ok | Status::Unstable, None) if m.valid => super::instead_of_value(m),
        _ => String::new(),
    }
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
        "mean",
        "mean_ci_lo",
        "mean_ci_hi",
        "instead_of_value",
        "per_major_fault_ns",
        "per_major_fault_ci_lo",
        "per_major_fault_ci_hi",
        "io_share",
    ])
    .map_err(|e| Error::env(e.to_string()))?;
    let majors = crate::analysis::faults::major_fault_costs(run);
    for m in &run.measurements {
        let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
        // An evicted-file case's major faults, costed as every other view costs them.
        let major = majors
            .iter()
            .find(|c| c.probe == m.probe && c.params == m.params);
        // A bound (no file-cached cost to take the minor faults out) is not a figure.
        let per_major = major
            .filter(|c| {
                c.derivation != Some(crate::analysis::faults::Derivation::AtMostElapsedOverMajor)
            })
            .and_then(|c| c.per_major_fault_ns);
        let per_major_ci = major.and_then(|c| c.per_major_fault_ci95);
        let status = m.status.name();
        let failed: Vec<String> = m.failed_checks().map(crate::report::checks::line).collect();
        // Text cells through the one CSV escape (no cell starts a formula); numbers as numbers.
        let text = |s: &str| crate::escape::csv(s).into_owned();
        w.write_record([
            text(&m.probe),
            text(&m.params_label()),
            text(&m.unit.to_string()),
            status,
            m.valid.to_string(),
            opt(m.value.as_ref().map(|v| v.median)),
            opt(m.value.as_ref().map(|v| v.ci95[0])),
            opt(m.value.as_ref().map(|v| v.ci95[1])),
            m.raw.median.to_string(),
            text(&m.raw_unit.to_string()),
            opt(m.baseline.as_ref().map(|b| b.median)),
            m.raw.n.to_string(),
            m.iterations_per_sample.to_string(),
            m.checks.iter().filter(|c| c.ok).count().to_string(),
            m.checks.len().to_string(),
            text(&failed.join("; ")),
            text(&crate::report::remarks::all_words(&m.warnings).join("; ")),
            opt(m.additive.as_ref().map(|a| a.mean.value)),
            opt(m.additive.as_ref().map(|a| a.mean.ci95[0])),
            opt(m.additive.as_ref().map(|a| a.mean.ci95[1])),
            text(&instead(m)),
            opt(per_major),
            opt(per_major.and(per_major_ci.map(|c| c[0]))),
            opt(per_major.and(per_major_ci.map(|c| c[1]))),
            opt(major.and_then(|c| c.io_share)),
        ])
        .map_err(|e| Error::env(e.to_string()))?;
    }
    let bytes = w.into_inner().map_err(|e| Error::env(e.to_string()))?;
    Ok(String::from_utf8(bytes).expect("csv of utf-8 strings is utf-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn unwritable_targets_are_usage_errors() {
        let e = resolve_target(Path::new("/nonexistent-dir/x.json")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("does not exist"));
        let e = resolve_target(Path::new("/tmp")).unwrap_err();
        assert!(e.to_string().contains("is a directory"));
        let e = resolve_target(Path::new("x.csv/")).unwrap_err();
        assert!(e.to_string().contains("ends in '/'"), "{e}");
    }

    #[test]
    fn devices_stream_and_are_never_replaced() {
        assert_eq!(
            resolve_target(Path::new("/dev/null")).unwrap(),
            Target::Stream("/dev/null".into())
        );
        write_atomic(Path::new("/dev/null"), b"gone").unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        assert_eq!(
            resolve_target(Path::new("-")).unwrap(),
            Target::Stream("/dev/stdout".into())
        );
    }

    #[test]
    fn a_fifo_streams_and_stays_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        // Checking it before measuring must not wait for a reader.
        assert_eq!(resolve_target(&fifo).unwrap(), Target::Stream(fifo.clone()));
        // Nobody reading: an error at once, never a wait.
        let e = write_atomic(&fifo, b"lost").unwrap_err().to_string();
        assert!(e.contains("nobody is reading"), "{e}");
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let mut reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        write_atomic(&fifo, b"streamed").unwrap();
        let mut got = Vec::new();
        reader.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"streamed");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }

    #[test]
    fn symlinks_keep_the_link_and_write_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("missing/x"), &dangling).unwrap();
        assert!(resolve_target(&dangling)
            .unwrap_err()
            .to_string()
            .contains("symlink to a missing file"));
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
