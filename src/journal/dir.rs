//! The runtime directory, opened so that nobody else can steer what oscost does in it.
//!
//! Recovery acts on what it finds there (removes files, writes kernel knobs back, unmounts),
//! so the directory must be this user's alone: it is created with `mkdir` (never through an
//! existing name), opened with `O_NOFOLLOW | O_DIRECTORY`, and refused — neither used nor
//! removed — when it is a symlink, another user's, or writable by group or others. Every
//! later operation goes through the opened descriptor (`*at` calls), so a directory swapped
//! in after the check is never the one used; an entry is read only when it is a regular file
//! of this user, opened without following a symlink and without blocking on a FIFO.

use crate::error::{Error, Result};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The largest entry recovery reads: an entry is a knob name and a value, or a directory
/// path; anything longer was not written by oscost.
const MAX_ENTRY: u64 = 8192;

/// The effective user id: the owner of everything oscost creates.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Where the runtime directory is (it may not exist): `$OSCOST_RUNTIME_DIR`, else
/// `oscost-<uid>` in the temp directory.
pub fn location() -> PathBuf {
    match std::env::var_os("OSCOST_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => std::env::temp_dir().join(format!("oscost-{}", euid())),
    }
}

/// Where the entries for kernel knobs and mounts go (it may not exist): never a place taken
/// from `TMPDIR`, so the next start finds them whatever its environment. Only root changes
/// knobs and mounts: `/run/oscost` for root (a root-only tmpfs, emptied at boot with the state
/// it describes), else `/tmp/oscost-<uid>`; `$OSCOST_RUNTIME_DIR` when set (tests).
pub fn journal_location() -> PathBuf {
    journal_location_for(
        std::env::var_os("OSCOST_RUNTIME_DIR").filter(|v| !v.is_empty()),
        euid(),
        Path::new("/run").is_dir(),
    )
}

fn journal_location_for(runtime: Option<std::ffi::OsString>, uid: u32, run: bool) -> PathBuf {
    match runtime {
        Some(d) => PathBuf::from(d),
        None if uid == 0 && run => PathBuf::from("/run/oscost"),
        None => PathBuf::from(format!("/tmp/oscost-{uid}")),
    }
}

/// An opened, checked runtime directory.
pub struct RuntimeDir {
    fd: OwnedFd,
    path: PathBuf,
    uid: u32,
}

/// What to do when the directory does not exist.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    Create,
    Absent,
}

impl RuntimeDir {
    /// Opens the runtime directory of this user (see [`RuntimeDir::open_at`]).
    pub fn open(missing: Missing) -> Result<Option<RuntimeDir>> {
        Self::open_at(&location(), euid(), missing)
    }

    /// Opens `path` as the runtime directory of user `uid`, creating it (mode 0700) when
    /// `missing` says so; None when it does not exist and is not to be created. Refused with
    /// one line when it is not a directory of `uid` that only `uid` can write.
    pub fn open_at(path: &Path, uid: u32, missing: Missing) -> Result<Option<RuntimeDir>> {
        if missing == Missing::Create {
            match rustix::fs::mkdir(path, Mode::RWXU) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(Error::io(path.display(), e.into())),
            }
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) if missing == Missing::Absent => return Ok(None),
            Err(rustix::io::Errno::LOOP) | Err(rustix::io::Errno::NOTDIR) => {
                return Err(refusal(path, "is a symlink or not a directory"))
            }
            Err(e) => return Err(Error::io(path.display(), e.into())),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| Error::io(path.display(), e.into()))?;
        if st.st_uid != uid {
            return Err(refusal(
                path,
                &format!("belongs to user {}, not to you ({uid})", st.st_uid),
            ));
        }
        if st.st_mode & 0o022 != 0 {
            return Err(refusal(
                path,
                &format!(
                    "is writable by {} (mode {:o})",
                    if st.st_mode & 0o002 != 0 {
                        "everyone"
                    } else {
                        "its group"
                    },
                    st.st_mode & 0o7777
                ),
            ));
        }
        Ok(Some(RuntimeDir {
            fd,
            path: path.to_path_buf(),
            uid,
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The user whose directory this is.
    pub fn uid(&self) -> u32 {
        self.uid
    }

    /// A second handle on the same directory (an entry guard keeps its own).
    pub fn duplicate(&self) -> std::io::Result<RuntimeDir> {
        Ok(RuntimeDir {
            fd: self.fd.try_clone()?,
            path: self.path.clone(),
            uid: self.uid,
        })
    }

    /// The same directory seen as user `uid`'s (tests of entries of another user).
    #[cfg(test)]
    pub fn as_user(d: RuntimeDir, uid: u32) -> RuntimeDir {
        RuntimeDir { uid, ..d }
    }

    /// The path of entry `name` (for code that must hand a path on, e.g. a scratch directory
    /// to a probe).
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The names in the directory.
    pub fn names(&self) -> Vec<String> {
        let Ok(mut dir) = rustix::fs::Dir::read_from(&self.fd) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Some(Ok(e)) = dir.read() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name != "." && name != ".." {
                out.push(name);
            }
        }
        out
    }

    /// Creates the directory `name` (mode 0700); false when the name is taken (by anything,
    /// a symlink included).
    pub fn create_dir(&self, name: &str) -> std::io::Result<bool> {
        match rustix::fs::mkdirat(&self.fd, name, Mode::RWXU) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::EXIST) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes `text` to entry `name` atomically: a new temporary file (never through an
    /// existing name), synced, then renamed into place, so recovery never reads half an entry.
    pub fn write_entry(&self, name: &str, tmp: &str, text: &str) -> std::io::Result<()> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let fd = rustix::fs::openat(
            &self.fd,
            tmp,
            flags | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )?;
        let mut file = std::fs::File::from(fd);
        let written = std::io::Write::write_all(&mut file, text.as_bytes())
            .and_then(|()| file.sync_all())
            .and_then(|()| Ok(rustix::fs::renameat(&self.fd, tmp, &self.fd, name)?));
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, tmp, AtFlags::empty());
        }
        written
    }

    /// The text of entry `name` when it is a regular file of this directory's user, at most
    /// [`MAX_ENTRY`] bytes; why not otherwise.
    pub fn read_entry(&self, name: &str) -> std::result::Result<String, String> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::empty())
            .map_err(|e| format!("cannot open it ({e})"))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| e.to_string())?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err("not a regular file".into());
        }
        if st.st_uid != self.uid {
            return Err(format!("belongs to user {}, not to you", st.st_uid));
        }
        let mut text = String::new();
        std::fs::File::from(fd)
            .take(MAX_ENTRY + 1)
            .read_to_string(&mut text)
            .map_err(|e| e.to_string())?;
        if text.len() as u64 > MAX_ENTRY {
            return Err(format!("longer than {MAX_ENTRY} bytes"));
        }
        Ok(text)
    }

    /// Is entry `name` a directory (not a symlink) of this directory's user?
    pub fn is_own_dir(&self, name: &str) -> bool {
        rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
            FileType::from_raw_mode(st.st_mode) == FileType::Directory && st.st_uid == self.uid
        })
    }

    /// Removes the file entry `name`.
    pub fn remove(&self, name: &str) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// Is the path still this directory (the same device and inode)? Path-based work (a
    /// scratch tree's removal) is done only then.
    pub fn still_here(&self) -> bool {
        match (rustix::fs::fstat(&self.fd), rustix::fs::lstat(&self.path)) {
            (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
            _ => false,
        }
    }

    /// Removes the directory when it is empty (rmdir fails otherwise) and still the one that
    /// was checked, so a finished oscost leaves nothing in the temp directory.
    pub fn remove_if_empty(&self) {
        if self.still_here() {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

/// The refusal of a runtime directory: what is wrong and what to do, in full the first time
/// this process refuses `path` (the warning at start), shortly after that (the command that
/// then needs it), so one run does not say the same paragraph twice.
fn refusal(path: &Path, why: &str) -> Error {
    static SAID: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if said.iter().any(|p| p == path) {
        return Error::env(format!(
            "{}: not usable as the runtime directory (see the warning above)",
            path.display()
        ));
    }
    said.push(path.to_path_buf());
    Error::env(format!(
        "{}: {why}; oscost keeps its journal of kernel changes and scratch there only in a \
         directory of your own that nobody else can write: not using it (set \
         OSCOST_RUNTIME_DIR to such a directory, or remove this one)",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_of_knobs_does_not_move_with_tmpdir() {
        assert_eq!(
            journal_location_for(None, 0, true),
            Path::new("/run/oscost")
        );
        assert_eq!(
            journal_location_for(None, 1000, true),
            Path::new("/tmp/oscost-1000")
        );
        assert_eq!(
            journal_location_for(None, 0, false),
            Path::new("/tmp/oscost-0")
        );
        assert_eq!(
            journal_location_for(Some("/x".into()), 0, true),
            Path::new("/x")
        );
    }
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_directory_is_private_and_its_entries_are_read_back() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("rt");
        assert!(RuntimeDir::open_at(&p, euid(), Missing::Absent)
            .unwrap()
            .is_none());
        assert!(!p.exists(), "opening without creating creates nothing");
        let d = RuntimeDir::open_at(&p, euid(), Missing::Create)
            .unwrap()
            .unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        d.write_entry("e", "tmp-e", "hello\n").unwrap();
        assert_eq!(d.read_entry("e").unwrap(), "hello\n");
        assert_eq!(d.names(), ["e"]);
        d.remove("e").unwrap();
        d.remove_if_empty();
        assert!(!p.exists());
    }

    #[test]
    fn shared_symlinked_and_foreign_directories_are_refused_and_kept() {
        let t = tempfile::tempdir().unwrap();
        let shared = t.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let e = RuntimeDir::open_at(&shared, euid(), Missing::Create)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("writable by everyone (mode 1777)"), "{e}");
        let group = t.path().join("group");
        std::fs::create_dir(&group).unwrap();
        std::fs::set_permissions(&group, std::fs::Permissions::from_mode(0o770)).unwrap();
        assert!(RuntimeDir::open_at(&group, euid(), Missing::Create)
            .err()
            .unwrap()
            .to_string()
            .contains("writable by its group"));

        let real = t.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = RuntimeDir::open_at(&link, euid(), Missing::Create)
            .err()
            .unwrap();
        assert!(e.to_string().contains("is a symlink"), "{e}");
        assert_eq!(e.exit_code(), 2);

        // Another user's directory (the owner this process is not).
        let e = RuntimeDir::open_at(&real, euid() + 1, Missing::Create)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not to you"), "{e}");
        for p in [&shared, &group, &real] {
            assert!(p.is_dir(), "{} was removed", p.display());
        }
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    }

    #[test]
    fn entries_that_are_not_own_regular_files_are_not_read() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("rt");
        let d = RuntimeDir::open_at(&p, euid(), Missing::Create)
            .unwrap()
            .unwrap();
        let secret = t.path().join("secret");
        std::fs::write(&secret, "x").unwrap();
        std::os::unix::fs::symlink(&secret, p.join("link")).unwrap();
        assert!(d.read_entry("link").is_err());
        rustix::fs::mkfifoat(&d.fd, "fifo", Mode::RUSR | Mode::WUSR).unwrap();
        // A FIFO with no writer: refused at once, not waited on.
        assert_eq!(d.read_entry("fifo").unwrap_err(), "not a regular file");
        std::fs::write(p.join("big"), vec![b'x'; MAX_ENTRY as usize + 1]).unwrap();
        assert!(d.read_entry("big").unwrap_err().contains("longer than"));
        // Owned by someone else (this process reads it as a directory of another user).
        std::fs::write(p.join("mine"), "x").unwrap();
        let other = RuntimeDir {
            fd: rustix::fs::open(&p, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap(),
            path: p.clone(),
            uid: euid() + 1,
        };
        assert!(other
            .read_entry("mine")
            .unwrap_err()
            .contains("belongs to user"));
    }
}
