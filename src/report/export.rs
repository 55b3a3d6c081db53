//! JSON and CSV files. Files are written to a temporary sibling and renamed into place, so an
//! interrupted run never leaves a truncated file that looks complete.

use crate::error::{Error, Result};
use crate::model::Run;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What writing to a path will do, decided before measuring from what is there now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A regular file (or a new one): written to a temporary sibling and renamed into place.
    File(PathBuf),
    /// A FIFO, a terminal, `/dev/null`, `/dev/stdout` or `-`: written in place as a stream,
    /// never replaced (renaming over a device node would replace the device).
    Stream(PathBuf),
}

impl Target {
    pub fn path(&self) -> &Path {
        match self {
            Target::File(p) | Target::Stream(p) => p,
        }
    }
}

/// Decides how `path` will be written and checks that it can be, so a long run does not end
/// in a write error: a directory, a block device, a socket or a dangling symlink is refused;
/// a symlink to a file is followed (the link stays, its target gets the new content); a
/// character device or FIFO streams; a new file needs an existing, writable directory.
pub fn resolve_target(path: &Path) -> Result<Target> {
    use std::os::unix::fs::FileTypeExt;
    let shown = path.display();
    if path.as_os_str() == "-" {
        return Ok(Target::Stream(PathBuf::from("/dev/stdout")));
    }
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(Error::usage(format!(
            "{shown}: ends in '/', which names a directory; name the file"
        )));
    }
    let resolved = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).map_err(|_| {
            Error::usage(format!(
                "{shown}: a symlink to a missing file; name the target directly"
            ))
        })?,
        _ => path.to_path_buf(),
    };
    match std::fs::metadata(&resolved) {
        Ok(m) => {
            let t = m.file_type();
            if t.is_dir() {
                return Err(Error::usage(format!("{shown}: is a directory, not a file")));
            }
            if t.is_fifo() || t.is_char_device() {
                // Not opened here: opening a FIFO for writing waits for its reader, which
                // may only start once the results are ready.
                let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(
                    resolved.as_os_str(),
                ))
                .map_err(|_| Error::usage(format!("{shown}: path contains NUL")))?;
                // SAFETY: access(2) on a valid NUL-terminated path; it only reads permissions.
                if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
                    return Err(Error::usage(format!(
                        "{shown}: cannot write ({})",
                        std::io::Error::last_os_error()
                    )));
                }
                return Ok(Target::Stream(resolved));
            }
            if !t.is_file() {
                return Err(Error::usage(format!(
                    "{shown}: not a regular file (a block device or socket); refusing to replace it"
                )));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::usage(format!("{shown}: {e}"))),
    }
    let parent = parent_of(&resolved);
    if !parent.is_dir() {
        return Err(Error::usage(format!(
            "{shown}: directory {} does not exist",
            parent.display()
        )));
    }
    drop(tempfile_in(&parent)?);
    Ok(Target::File(resolved))
}

/// True when `a` and `b` name the same file: the same inode when both exist, else the same
/// canonical directory and file name (`cli::outputs::check` compares every output with the
/// inputs, the history database and the other outputs through it).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return x.dev() == y.dev() && x.ino() == y.ino();
    }
    let canon = |p: &Path| -> Option<PathBuf> {
        let p = std::fs::canonicalize(p).ok().or_else(|| {
            let dir = std::fs::canonicalize(parent_of(p)).ok()?;
            Some(dir.join(p.file_name()?))
        })?;
        Some(p)
    };
    match (canon(a), canon(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary output file next to its target, removed on drop. Its name carries the owner
/// (`.oscost-<pid>-<start>-<i>.tmp`) and its directory is recorded in the journal first, so
/// if this process is killed (-9) mid-write, the next oscost start removes it
/// (journal::recover); the record goes when the file does.
struct TempFile {
    path: PathBuf,
    file: Option<std::fs::File>,
    _journal: Option<crate::journal::Entry>,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.file.take();
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn tempfile_in(dir: &Path) -> Result<TempFile> {
    // Best effort: without a runtime directory the write still works, only a kill -9 in
    // the middle of it would leave the temporary file.
    let journal = crate::journal::note_user_dir(dir).ok();
    let owner = crate::journal::owner_tag();
    for i in 0..100u32 {
        let path = dir.join(temp_name(&owner, i));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                return Ok(TempFile {
                    path,
                    file: Some(f),
                    _journal: journal,
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

/// Write `bytes` to `path`: a regular file atomically (temp file + rename, so an interrupted
/// write never leaves a truncated file that looks complete); a FIFO, terminal or device as a
/// stream in place; through a symlink to its target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with_hook(path, bytes, || {
        if let Some(hook) = BEFORE_RENAME.get() {
            hook()
        }
    })
}

/// Called by every [`write_atomic`] of this process between its temporary file and the
/// rename, once set: exists so a test can kill a whole command at that moment (a sim output
/// in tests/sim_write_kill.rs); nothing in the tool sets it.
static BEFORE_RENAME: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>> = std::sync::OnceLock::new();

/// Sets the hook every [`write_atomic`] of this process calls before its rename (for tests
/// that kill a command there); a second call changes nothing.
pub fn set_before_rename(hook: Box<dyn Fn() + Send + Sync>) {
    let _ = BEFORE_RENAME.set(hook);
}

/// The name of temporary output number `i` of the owner `<pid>-<start>`: it starts with
/// `.oscost-<pid>-`, the prefix the journal's recovery removes from a dead owner's
/// directories.
fn temp_name(owner: &str, i: u32) -> String {
    format!(".oscost-{owner}-{i}.tmp")
}

/// [`write_atomic`], calling `before_rename` once the temporary file is written and synced.
/// Exists so a test can kill a writer at that moment; production callers use `write_atomic`.
pub fn write_atomic_with_hook(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(),
) -> Result<()> {
    let target = resolve_target(path)?;
    let path = target.path();
    if let Target::Stream(p) = &target {
        if p == Path::new("/dev/stdout") {
            let mut out = std::io::stdout().lock();
            return out
                .write_all(bytes)
                .and_then(|_| out.flush())
                .map_err(|e| Error::io(path.display(), e));
        }
        return open_stream(p)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|e| Error::io(path.display(), e));
    }
    let mut tmp = tempfile_in(&parent_of(path))?;
    let f = tmp.file.as_mut().expect("temp file is open");
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(path.display(), e))?;
    before_rename();
    std::fs::rename(&tmp.path, path).map_err(|e| Error::io(path.display(), e))?;
    tmp.file.take();
    tmp.path = PathBuf::new();
    Ok(())
}

/// Opens a FIFO or device for writing without waiting: a FIFO nobody reads is an error at
/// once (`O_NONBLOCK` makes the open fail instead of waiting for a reader that may never
/// come); once open, writes block as usual, so a slow reader gets everything.
fn open_stream(p: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ENXIO) {
                std::io::Error::other("a FIFO that nobody is reading; start its reader first")
            } else {
                e
            }
        })?;
    rustix::fs::fcntl_setfl(&f, rustix::fs::OFlags::empty())?;
    Ok(f)
}

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
    ])
    .map_err(|e| Error::env(e.to_string()))?;
    for m in &run.measurements {
        let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
        let status = m.status.as_str();
        let failed: Vec<String> = m
            .failed_checks()
            .map(|c| {
                format!(
                    "{}: expected {}, observed {}",
                    c.name, c.expected, c.observed
                )
            })
            .collect();
        // Text cells through the one CSV escape (no cell starts a formula); numbers as numbers.
        let text = |s: &str| crate::escape::csv(s).into_owned();
        w.write_record([
            text(&m.probe),
            text(&m.params_label()),
            text(&m.unit),
            status.into(),
            m.valid.to_string(),
            opt(m.value.as_ref().map(|v| v.median)),
            opt(m.value.as_ref().map(|v| v.ci95[0])),
            opt(m.value.as_ref().map(|v| v.ci95[1])),
            m.raw.median.to_string(),
            text(&m.raw_unit),
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
