//! Cleanup that survives kill -9. Drop guards remove scratch files and restore kernel knobs
//! on success, error, Ctrl-C and panic, but SIGKILL runs no code. So everything left behind
//! is named in one runtime directory with its owner's PID (and the owner's start time, so a
//! reused PID is not mistaken for the owner): scratch directories, the user `--dir`s that
//! hold our scratch files, and each kernel knob's old value, written *before* the knob is
//! changed. Every oscost start calls [`recover`], which removes the scratch of dead owners
//! and writes back the knobs they changed, saying so in one line per knob.
//!
//! The directory is `$OSCOST_RUNTIME_DIR`, else `oscost-<uid>` in the temp directory
//! (`$TMPDIR`), created 0700 and refused if it is a symlink or another user's.

use crate::error::{Error, Result};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Where the runtime directory is (it may not exist).
fn root_path() -> PathBuf {
    match std::env::var_os("OSCOST_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        // SAFETY: getuid has no preconditions and cannot fail.
        None => std::env::temp_dir().join(format!("oscost-{}", unsafe { libc::getuid() })),
    }
}

/// Removes the runtime directory when nothing is left in it (rmdir fails otherwise), so a
/// finished oscost leaves nothing in the temp directory.
pub fn tidy() {
    let _ = std::fs::remove_dir(root_path());
}

/// The runtime directory (created on first use).
pub fn root() -> Result<PathBuf> {
    let dir = root_path();
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(Error::io(dir.display(), e)),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(|e| Error::io(dir.display(), e))?;
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    if !meta.is_dir() || meta.uid() != uid {
        return Err(Error::env(format!(
            "{}: not a directory of this user; refusing to keep oscost's scratch there \
             (set OSCOST_RUNTIME_DIR)",
            dir.display()
        )));
    }
    Ok(dir)
}

/// This process's tag in file names: `<pid>-<start time in clock ticks>`.
pub fn owner_tag() -> String {
    let pid = std::process::id();
    format!("{pid}-{}", start_time(pid).unwrap_or(0))
}

/// A running process's start time since boot in clock ticks (/proc/PID/stat field 22);
/// None when there is no such process or it is a zombie (killed, not yet reaped: its guards
/// will never run).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields after the last ')'.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    if matches!(rest.next(), Some("Z") | Some("X") | None) {
        return None;
    }
    rest.nth(18)?.parse().ok()
}

/// Is the owner named by `tag` (`<pid>-<start>`) still running? Unparseable tags count as
/// alive, so nothing of unknown origin is touched.
pub fn owner_alive(tag: &str) -> bool {
    let mut it = tag.splitn(2, '-');
    let (Some(pid), Some(start)) = (it.next(), it.next()) else {
        return true;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return true;
    };
    match start_time(pid) {
        None => false,
        Some(s) => start == 0 || s == start,
    }
}

/// A new scratch directory `scratch-<owner>-<i>` in the runtime directory (mkdir is
/// exclusive: an existing name, also a symlink, fails and the next name is tried).
pub fn new_scratch_dir() -> Result<PathBuf> {
    new_scratch_dir_in(&root()?)
}

fn new_scratch_dir_in(root: &Path) -> Result<PathBuf> {
    let tag = owner_tag();
    for i in 0..1000u32 {
        let path = root.join(format!("scratch-{tag}-{i}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            // Another oscost tidied the empty runtime directory away just now.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && i < 3 => {
                let _ = std::fs::DirBuilder::new().mode(0o700).create(root);
                continue;
            }
            Err(e) => return Err(Error::io(root.display(), e)),
        }
    }
    Err(Error::env(format!(
        "{}: cannot create a scratch directory (1000 names taken)",
        root.display()
    )))
}

/// Writes `text` to the entry `name` in the runtime directory atomically (temp + rename +
/// fsync), so recovery never reads half an entry.
fn write_entry(root: &Path, name: &str, text: &str) -> Result<PathBuf> {
    let path = root.join(name);
    let tmp = root.join(format!("tmp-{}-{name}", owner_tag()));
    let write = || {
        std::fs::File::create(&tmp)
            .and_then(|mut f| {
                f.write_all(text.as_bytes())?;
                f.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, &path))
    };
    let mut r = write();
    for _ in 0..3 {
        match &r {
            // Another oscost tidied the empty runtime directory away just now.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = std::fs::DirBuilder::new().mode(0o700).create(root);
                r = write();
            }
            _ => break,
        }
    }
    r.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path.display(), e)
    })?;
    Ok(path)
}

/// Records that this process keeps scratch files (`.oscost-<pid>-*`) in a user-given
/// directory; the returned guard removes the record when the directory is released.
pub fn note_user_dir(dir: &Path) -> Result<Entry> {
    let abs = std::fs::canonicalize(dir).map_err(|e| Error::io(dir.display(), e))?;
    let name = format!("userdir-{}-{}", owner_tag(), unique());
    write_entry(&root()?, &name, &format!("{}\n", abs.display())).map(|path| Entry { path })
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// A journal entry that is removed when the guard drops.
pub struct Entry {
    path: PathBuf,
}

impl Drop for Entry {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
            tidy();
        }
    }
}

/// A kernel knob (a /proc/sys or /sys file) set to a new value, with the old one journaled
/// first; written back on drop, or by the next oscost start if this process is killed.
pub struct KnobGuard {
    knob: PathBuf,
    old: String,
    _entry: Entry,
}

impl KnobGuard {
    /// Reads the old value, journals it, then writes `value`. If the write fails the
    /// journal entry is removed again.
    pub fn set(knob: &Path, value: &str) -> Result<KnobGuard> {
        Self::set_in(&root()?, knob, value)
    }

    fn set_in(root: &Path, knob: &Path, value: &str) -> Result<KnobGuard> {
        let old = std::fs::read_to_string(knob).map_err(|e| Error::io(knob.display(), e))?;
        let old = old.trim().to_string();
        let name = format!("knob-{}-{}", owner_tag(), unique());
        let entry = Entry {
            path: write_entry(root, &name, &format!("{}\n{old}\n", knob.display()))?,
        };
        std::fs::write(knob, format!("{value}\n")).map_err(|e| Error::io(knob.display(), e))?;
        Ok(KnobGuard {
            knob: knob.to_path_buf(),
            old,
            _entry: entry,
        })
    }

    pub fn old(&self) -> &str {
        &self.old
    }
}

impl Drop for KnobGuard {
    fn drop(&mut self) {
        // The entry (dropped after this) stays if the write fails, so the next start retries.
        if std::fs::write(&self.knob, format!("{}\n", self.old)).is_err() {
            std::mem::forget(std::mem::replace(
                &mut self._entry,
                Entry {
                    path: PathBuf::new(),
                },
            ));
        }
    }
}

/// What [`recover`] did: one line per restored knob, and how many scratch items it removed.
#[derive(Debug, Default)]
pub struct Recovered {
    pub knobs: Vec<String>,
    pub removed: usize,
}

/// Cleans up after oscost processes that died without running their guards: restores the
/// knobs they changed and removes their scratch. Errors are ignored (a start must not fail
/// because an old leftover cannot be removed); a knob that cannot be restored keeps its
/// entry and is reported.
pub fn recover() -> Recovered {
    let path = root_path();
    if !path.exists() {
        return Recovered::default();
    }
    let out = match root() {
        Ok(r) => recover_in(&r),
        Err(_) => Recovered::default(),
    };
    tidy();
    out
}

fn recover_in(root: &Path) -> Recovered {
    let mut out = Recovered::default();
    let Ok(entries) = std::fs::read_dir(root) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((kind, rest)) = name.split_once('-') else {
            continue;
        };
        // rest = "<pid>-<start>-<n>" (tmp: "<pid>-<start>-<entry name>").
        let mut parts = rest.splitn(3, '-');
        let (Some(pid), Some(start)) = (parts.next(), parts.next()) else {
            continue;
        };
        let owner = format!("{pid}-{start}");
        if owner_alive(&owner) {
            continue;
        }
        let path = e.path();
        match kind {
            "scratch" => out.removed += usize::from(std::fs::remove_dir_all(&path).is_ok()),
            "tmp" => {
                let _ = std::fs::remove_file(&path);
            }
            "userdir" => {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    out.removed += remove_user_files(Path::new(text.trim()), pid);
                }
                let _ = std::fs::remove_file(&path);
            }
            "knob" => {
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let mut lines = text.lines();
                let (Some(knob), Some(old)) = (lines.next(), lines.next()) else {
                    let _ = std::fs::remove_file(&path);
                    continue;
                };
                match std::fs::write(knob, format!("{old}\n")) {
                    Ok(()) => {
                        let _ = std::fs::remove_file(&path);
                        out.knobs.push(format!(
                            "restored {knob} to {old} (changed by oscost process {pid}, which died)"
                        ));
                    }
                    Err(err) => out.knobs.push(format!(
                        "could not restore {knob} to {old} (changed by oscost process {pid}, which died): {err}"
                    )),
                }
            }
            _ => {}
        }
    }
    out
}

/// Removes `.oscost-<pid>-*` files (scratch files and temp outputs) of a dead process from a
/// user-given directory.
fn remove_user_files(dir: &Path, pid: &str) -> usize {
    let prefix = format!(".oscost-{pid}-");
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The owner tag of a process that has exited (a reaped child).
    fn dead_tag() -> String {
        let mut c = std::process::Command::new("sleep")
            .arg("0.2")
            .spawn()
            .unwrap();
        let pid = c.id();
        let tag = format!("{pid}-{}", start_time(pid).unwrap());
        c.wait().unwrap();
        tag
    }

    #[test]
    fn a_zombie_is_dead() {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        // Exited but not reaped yet.
        while std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(!owner_alive(&format!("{pid}-1")));
        c.wait().unwrap();
    }

    #[test]
    fn own_process_is_alive_and_a_reaped_child_is_not() {
        assert!(owner_alive(&owner_tag()));
        assert!(!owner_alive(&dead_tag()));
        // Same PID, other start time: a reused PID is not the owner.
        let pid = std::process::id();
        assert!(!owner_alive(&format!(
            "{pid}-{}",
            start_time(pid).unwrap() + 1
        )));
        assert!(owner_alive("not-a-tag"));
    }

    #[test]
    fn dead_owners_leftovers_are_cleaned_and_knobs_restored() {
        let rt = tempfile::tempdir().unwrap();

        // A live guard journals, changes and restores; its entry goes with it.
        let knob = rt.path().join("fake_knob");
        std::fs::write(&knob, "100\n").unwrap();
        {
            let g = KnobGuard::set_in(rt.path(), &knob, "7").unwrap();
            assert_eq!(g.old(), "100");
            assert_eq!(std::fs::read_to_string(&knob).unwrap(), "7\n");
            let journaled = std::fs::read_dir(rt.path())
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("knob-"));
            assert!(journaled, "journaled before the change");
            // Our own entries are left alone by recovery.
            assert!(recover_in(rt.path()).knobs.is_empty());
            assert_eq!(std::fs::read_to_string(&knob).unwrap(), "7\n");
        }
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "100\n");

        // What a process killed with SIGKILL leaves: a changed knob, a scratch directory with
        // a file, a scratch file in a user --dir, a half-written entry.
        let dead = dead_tag();
        let dead_pid = dead.split('-').next().unwrap().to_string();
        std::fs::write(&knob, "7\n").unwrap();
        std::fs::write(
            rt.path().join(format!("knob-{dead}-0")),
            format!("{}\n100\n", knob.display()),
        )
        .unwrap();
        let scratch = rt.path().join(format!("scratch-{dead}-0"));
        std::fs::create_dir(&scratch).unwrap();
        std::fs::write(scratch.join(".oscost-x-lab-0"), vec![1u8; 4096]).unwrap();
        let user = tempfile::tempdir().unwrap();
        let leftover = user.path().join(format!(".oscost-{dead_pid}-fault-0"));
        std::fs::write(&leftover, b"x").unwrap();
        let keep = user.path().join("mine.txt");
        std::fs::write(&keep, b"x").unwrap();
        std::fs::write(
            rt.path().join(format!("userdir-{dead}-0")),
            format!("{}\n", user.path().display()),
        )
        .unwrap();
        std::fs::write(rt.path().join(format!("tmp-{dead}-knob-x")), b"half").unwrap();

        let r = recover_in(rt.path());
        assert_eq!(r.knobs.len(), 1, "{r:?}");
        assert!(
            r.knobs[0].contains("restored") && r.knobs[0].contains(&dead_pid),
            "{r:?}"
        );
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "100\n");
        assert!(!scratch.exists() && !leftover.exists() && keep.exists());
        let left: Vec<_> = std::fs::read_dir(rt.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "fake_knob")
            .collect();
        assert!(left.is_empty(), "{left:?}");

        // New scratch directories live there, named for their owner.
        let d = new_scratch_dir_in(rt.path()).unwrap();
        assert!(d.starts_with(rt.path()));
        assert!(d
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(&format!("scratch-{}-", owner_tag())));
    }
}
