//! Writing an output file as the kernel would let the user write it, all or nothing.
//!
//! An existing output is first opened by the kernel for writing (`O_WRONLY`, no truncation):
//! so its rules decide, not oscost's own link resolution. A symlink another user planted in
//! a sticky directory is refused under `fs.protected_symlinks`, another user's file there
//! under `fs.protected_regular`, a file the user may not write is refused. The new content
//! goes to an unnamed file (`O_TMPFILE`) in the directory of the file the kernel opened; it
//! takes the old file's mode and group (and owner, as root) and is named and renamed into
//! place only once written and synced, so an interrupted write, a kill -9 included, leaves
//! the old file or none and no temporary behind. Where the file system has no unnamed files
//! a named `.oscost-PID-START-N.tmp` beside the target is used instead.
//!
//! Files whose names the command chooses inside a directory output (`--svg-dir`, `man
//! --dir`, `sim bench --keep-builds`) are never written through a link: a symlink found
//! there is refused, and the rename replaces a name, never what a link points to.

use crate::error::{Error, Result};
use std::ffi::{CString, OsStr};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
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

/// The file an output replaces: what the new one keeps of it.
#[derive(Debug, Clone, Copy)]
struct Existing {
    mode: u32,
    uid: u32,
    gid: u32,
}

/// A target and, for a regular file that exists, what the replacement keeps.
struct Resolved {
    target: Target,
    existing: Option<Existing>,
}

fn cpath(p: &Path) -> Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| Error::usage(format!("{}: path contains NUL", p.display())))
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// open(2) of `path` relative to `dir` (`AT_FDCWD` for a plain path).
fn open_at(dir: libc::c_int, path: &CString, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    // SAFETY: a valid NUL-terminated path; the returned descriptor is owned by the caller.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), flags | libc::O_CLOEXEC, 0o666) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: fd was just returned by openat and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: &OwnedFd) -> std::io::Result<libc::stat> {
    // SAFETY: a zeroed stat is a valid out-buffer; fd is open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(errno());
    }
    Ok(st)
}

/// The refusal of an output the kernel would not let the user write.
fn refused(shown: &Path, link: bool, e: std::io::Error) -> Error {
    let what = if link {
        "a symbolic link the kernel does not let you write through"
    } else {
        "cannot write"
    };
    Error::usage(format!("{}: {what} ({e})", shown.display()))
}

/// Decides how `path` will be written and checks that it can be, so a long run does not end
/// in a write error: a directory, a block device, a socket or a dangling symlink is refused;
/// an existing file is opened by the kernel for writing, so its permission and link rules
/// decide; a character device or FIFO streams; a new file needs a directory the user may
/// write.
pub fn resolve_target(path: &Path) -> Result<Target> {
    resolve(path).map(|r| r.target)
}

fn resolve(path: &Path) -> Result<Resolved> {
    use std::os::unix::fs::FileTypeExt;
    let shown = path.display();
    if path.as_os_str() == "-" {
        return Ok(Resolved {
            target: Target::Stream(PathBuf::from("/dev/stdout")),
            existing: None,
        });
    }
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(Error::usage(format!(
            "{shown}: ends in '/', which names a directory; name the file"
        )));
    }
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && link => {
            return Err(Error::usage(format!(
                "{shown}: a symlink to a missing file; name the target directly"
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = parent_of(path);
            if !parent.is_dir() {
                return Err(Error::usage(format!(
                    "{shown}: directory {} does not exist",
                    parent.display()
                )));
            }
            may_create_in(&parent)?;
            return Ok(Resolved {
                target: Target::File(path.to_path_buf()),
                existing: None,
            });
        }
        Err(e) => return Err(Error::usage(format!("{shown}: {e}"))),
    };
    let t = meta.file_type();
    if t.is_dir() {
        return Err(Error::usage(format!("{shown}: is a directory, not a file")));
    }
    let c = cpath(path)?;
    let flags = libc::O_WRONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
    if t.is_fifo() || t.is_char_device() {
        // Opened without waiting and closed again: a FIFO with no reader yet (ENXIO) is fine,
        // its reader may only start once the results are ready.
        return match open_at(libc::AT_FDCWD, &c, flags) {
            Ok(_) => Ok(Resolved {
                target: Target::Stream(path.to_path_buf()),
                existing: None,
            }),
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(Resolved {
                target: Target::Stream(path.to_path_buf()),
                existing: None,
            }),
            Err(e) => Err(refused(path, link, e)),
        };
    }
    if !t.is_file() {
        return Err(Error::usage(format!(
            "{shown}: not a regular file (a block device or socket); refusing to replace it"
        )));
    }
    // O_CREAT on a file that exists creates nothing, but makes the kernel apply
    // fs.protected_regular as `echo > path` would; no O_TRUNC: nothing is changed yet.
    let fd =
        open_at(libc::AT_FDCWD, &c, flags | libc::O_CREAT).map_err(|e| refused(path, link, e))?;
    let st = fstat(&fd).map_err(|e| Error::io(path.display(), e))?;
    let real = if link {
        opened_path(&fd, &st).ok_or_else(|| {
            Error::usage(format!(
                "{shown}: the file behind this link changed while it was opened"
            ))
        })?
    } else {
        path.to_path_buf()
    };
    Ok(Resolved {
        target: Target::File(real),
        existing: Some(Existing {
            mode: st.st_mode,
            uid: st.st_uid,
            gid: st.st_gid,
        }),
    })
}

/// The path of the file open on `fd`, when that path still names the same file.
fn opened_path(fd: &OwnedFd, st: &libc::stat) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let p = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
    let m = std::fs::symlink_metadata(&p).ok()?;
    (m.dev() == st.st_dev && m.ino() == st.st_ino).then_some(p)
}

/// Errs unless this user may create a file in `dir` (write and search permission, a file
/// system that is not read-only), as the kernel decides it; creates nothing.
fn may_create_in(dir: &Path) -> Result<()> {
    let c = cpath(dir)?;
    // SAFETY: a valid NUL-terminated path; faccessat only reads permissions.
    if unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::W_OK | libc::X_OK,
            libc::AT_EACCESS,
        )
    } != 0
    {
        return Err(Error::usage(format!(
            "cannot write in {}: {}",
            dir.display(),
            errno()
        )));
    }
    Ok(())
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

/// The name of temporary output number `i` of the owner `<pid>-<start>`.
fn temp_name(owner: &str, i: u32) -> String {
    format!(".oscost-{owner}-{i}.tmp")
}

/// A directory opened for writing files into it by name.
struct Dir {
    fd: OwnedFd,
    shown: PathBuf,
}

impl Dir {
    /// Opens `dir` (following links as the kernel does for any path).
    fn open(dir: &Path) -> Result<Dir> {
        let fd = open_at(
            libc::AT_FDCWD,
            &cpath(dir)?,
            libc::O_RDONLY | libc::O_DIRECTORY,
        )
        .map_err(|e| Error::usage(format!("cannot write in {}: {e}", dir.display())))?;
        Ok(Dir {
            fd,
            shown: dir.to_path_buf(),
        })
    }

    fn raw(&self) -> libc::c_int {
        self.fd.as_raw_fd()
    }
}

/// The new content of one output while it is written: an unnamed file in the target's
/// directory (or, where the file system has none, a named one, removed on drop).
struct Temp<'a> {
    dir: &'a Dir,
    file: std::fs::File,
    /// The temporary name, once the file has one.
    name: Option<CString>,
}

impl Drop for Temp<'_> {
    fn drop(&mut self) {
        if let Some(n) = self.name.take() {
            // SAFETY: a valid NUL-terminated name relative to an open directory.
            unsafe { libc::unlinkat(self.dir.raw(), n.as_ptr(), 0) };
        }
    }
}

impl<'a> Temp<'a> {
    /// A new, empty temporary file in `dir`: unnamed when `unnamed` and the file system
    /// allows it.
    fn new(dir: &'a Dir, unnamed: bool) -> Result<Temp<'a>> {
        let cant = |e: std::io::Error| {
            Error::usage(format!("cannot write in {}: {e}", dir.shown.display()))
        };
        if unnamed {
            match open_at(
                dir.raw(),
                &CString::from(c"."),
                libc::O_TMPFILE | libc::O_WRONLY,
            ) {
                Ok(fd) => {
                    return Ok(Temp {
                        dir,
                        file: fd.into(),
                        name: None,
                    })
                }
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL)
                    ) => {}
                Err(e) => return Err(cant(e)),
            }
        }
        let owner = crate::journal::owner_tag();
        for i in 0..100u32 {
            let name = CString::new(temp_name(&owner, i)).expect("no NUL in a temp name");
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
            match open_at(dir.raw(), &name, flags) {
                Ok(fd) => {
                    return Ok(Temp {
                        dir,
                        file: fd.into(),
                        name: Some(name),
                    })
                }
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
                Err(e) => return Err(cant(e)),
            }
        }
        Err(Error::env(format!(
            "cannot create a temporary file in {}",
            dir.shown.display()
        )))
    }

    /// Gives the replacement the mode and group (as root also the owner) of the file it
    /// replaces. Best effort: a group the user is not in stays the user's own.
    fn keep(&self, old: &Existing) {
        let fd = self.file.as_raw_fd();
        // SAFETY: geteuid cannot fail; fchown/fchmod act on our own open file only.
        unsafe {
            let uid = if libc::geteuid() == 0 {
                old.uid
            } else {
                u32::MAX
            };
            libc::fchown(fd, uid, old.gid);
            libc::fchmod(fd, old.mode & 0o777);
        }
    }

    /// Names an unnamed file beside its target (a temporary name), so it can be renamed.
    fn name(&mut self) -> std::io::Result<()> {
        if self.name.is_some() {
            return Ok(());
        }
        let owner = crate::journal::owner_tag();
        let proc = CString::new(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
            .expect("no NUL in a /proc path");
        for i in 0..100u32 {
            let name = CString::new(temp_name(&owner, i)).expect("no NUL in a temp name");
            // SAFETY: valid NUL-terminated paths; links our own open file into our directory.
            let r = unsafe {
                libc::linkat(
                    libc::AT_FDCWD,
                    proc.as_ptr(),
                    self.dir.raw(),
                    name.as_ptr(),
                    libc::AT_SYMLINK_FOLLOW,
                )
            };
            if r == 0 {
                self.name = Some(name);
                return Ok(());
            }
            let e = errno();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(e);
            }
        }
        Err(std::io::Error::from_raw_os_error(libc::EEXIST))
    }

    /// Renames the (named) temporary file to `name` in its directory, replacing what is
    /// there (a link is replaced, never followed).
    fn rename_to(mut self, name: &CString) -> std::io::Result<()> {
        let from = self.name.take().expect("named before the rename");
        // SAFETY: valid NUL-terminated names relative to one open directory.
        let r =
            unsafe { libc::renameat(self.dir.raw(), from.as_ptr(), self.dir.raw(), name.as_ptr()) };
        if r != 0 {
            self.name = Some(from);
            return Err(errno());
        }
        Ok(())
    }
}

/// What to replace: a name in an opened directory and what the replacement keeps.
struct Replace<'a> {
    dir: &'a Dir,
    name: CString,
    existing: Option<Existing>,
    /// Shown in errors: the output as the user named it.
    shown: &'a Path,
}

/// Writes `bytes` as `r`'s new content: all, synced, then renamed into place.
fn replace(r: &Replace, bytes: &[u8], before_rename: impl FnOnce()) -> Result<()> {
    let io = |e: std::io::Error| Error::io(r.shown.display(), e);
    let filled = |unnamed: bool| -> Result<Temp> {
        let mut tmp = Temp::new(r.dir, unnamed)?;
        tmp.file.write_all(bytes).map_err(io)?;
        if let Some(old) = &r.existing {
            tmp.keep(old);
        }
        tmp.file.sync_all().map_err(io)?;
        Ok(tmp)
    };
    let mut tmp = filled(true)?;
    let unnamed = tmp.name.is_none();
    before_rename();
    if tmp.name().is_err() && unnamed {
        // No way to name an unnamed file here (no /proc): a named temporary instead.
        drop(tmp);
        return filled(false)?.rename_to(&r.name).map_err(io);
    }
    tmp.rename_to(&r.name).map_err(io)
}

/// Write `bytes` to `path`: a regular file atomically (see the module's text); a FIFO,
/// terminal or device as a stream in place; through a symlink only where the kernel lets the
/// user follow it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with_hook(path, bytes, before_rename)
}

/// Calls [`BEFORE_RENAME`] when a test set it.
fn before_rename() {
    if let Some(hook) = BEFORE_RENAME.get() {
        hook()
    }
}

/// Called by every [`write_atomic`] of this process once the new content is written and
/// synced, before it is named and renamed: exists so a test can kill a whole command at that
/// moment (a sim output in tests/sim_write_kill.rs); nothing in the tool sets it.
static BEFORE_RENAME: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>> = std::sync::OnceLock::new();

/// Sets the hook every [`write_atomic`] of this process calls before its rename (for tests
/// that kill a command there); a second call changes nothing.
pub fn set_before_rename(hook: Box<dyn Fn() + Send + Sync>) {
    let _ = BEFORE_RENAME.set(hook);
}

/// [`write_atomic`], calling `before_rename` once the new content is written and synced.
/// Exists so a test can kill a writer at that moment; production callers use `write_atomic`.
pub fn write_atomic_with_hook(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(),
) -> Result<()> {
    let resolved = resolve(path)?;
    match &resolved.target {
        Target::Stream(p) if p == Path::new("/dev/stdout") => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|_| out.flush())
                .map_err(|e| Error::io("standard output", e))
        }
        Target::Stream(p) => open_stream(p)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|e| Error::io(path.display(), e)),
        Target::File(real) => {
            let dir = Dir::open(&parent_of(real))?;
            let name = real
                .file_name()
                .ok_or_else(|| Error::usage(format!("{}: names no file", path.display())))?;
            let r = Replace {
                dir: &dir,
                name: CString::new(name.as_bytes())
                    .map_err(|_| Error::usage(format!("{}: path contains NUL", path.display())))?,
                existing: resolved.existing,
                shown: path,
            };
            replace(&r, bytes, before_rename)
        }
    }
}

/// Writes `bytes` as the file `name` in the directory `dir` (created when missing): for the
/// files of a directory output, whose names the command chose. A symlink, a directory or
/// anything but a regular file of that name is refused, never written through; an existing
/// file is replaced as the kernel lets the user write it, keeping its mode and group.
pub fn write_in_dir(dir: &Path, name: &OsStr, bytes: &[u8]) -> Result<()> {
    let path = dir.join(name);
    if Path::new(name).components().count() != 1 || name == ".." || name == "." {
        return Err(Error::usage(format!(
            "{}: not a plain file name",
            path.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let d = Dir::open(dir)?;
    let cname = CString::new(name.as_bytes())
        .map_err(|_| Error::usage(format!("{}: path contains NUL", path.display())))?;
    // SAFETY: a zeroed stat is a valid out-buffer; a valid name relative to an open directory.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let found =
        unsafe { libc::fstatat(d.raw(), cname.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } == 0;
    let existing = if found {
        match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => {}
            libc::S_IFLNK => {
                return Err(Error::usage(format!(
                    "{}: a symbolic link; the files of a directory output are never written \
                     through a link (remove it)",
                    path.display()
                )))
            }
            _ => {
                return Err(Error::usage(format!(
                    "{}: not a regular file; refusing to replace it",
                    path.display()
                )))
            }
        }
        let flags = libc::O_WRONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW;
        let fd = open_at(d.raw(), &cname, flags | libc::O_CREAT)
            .map_err(|e| refused(&path, false, e))?;
        let st = fstat(&fd).map_err(|e| Error::io(path.display(), e))?;
        Some(Existing {
            mode: st.st_mode,
            uid: st.st_uid,
            gid: st.st_gid,
        })
    } else {
        None
    };
    let r = Replace {
        dir: &d,
        name: cname,
        existing,
        shown: &path,
    };
    replace(&r, bytes, before_rename)
}

/// Opens a FIFO or device for writing without waiting: a FIFO nobody reads is an error at
/// once (`O_NONBLOCK` makes the open fail instead of waiting for a reader that may never
/// come); once open, writes block as usual, so a slow reader gets everything.
fn open_stream(p: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn listing(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_new_one_takes_the_umask() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("out.json");
        std::fs::write(&f, "old").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let gid = std::fs::metadata(&f).unwrap().gid();
        write_atomic(&f, b"new").unwrap();
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!(m.mode() & 0o777, 0o600);
        assert_eq!(m.gid(), gid);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
        // SAFETY: umask only reads and sets this process's mask.
        let mask = unsafe {
            let m = libc::umask(0o022);
            libc::umask(m);
            m
        };
        let g = t.path().join("new.json");
        write_atomic(&g, b"x").unwrap();
        assert_eq!(
            std::fs::metadata(&g).unwrap().mode() & 0o777,
            0o666 & !(mask as u32)
        );
        assert_eq!(
            listing(t.path()),
            ["new.json", "out.json"],
            "no temporary left"
        );
    }

    #[test]
    fn a_file_the_user_may_not_write_is_refused_not_replaced() {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            return; // root may write any file: nothing to refuse
        }
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("ro.json");
        std::fs::write(&f, "keep").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = write_atomic(&f, b"new").unwrap_err();
        assert!(e.to_string().contains("cannot write"), "{e}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "keep");
    }

    #[test]
    fn a_link_in_a_directory_output_is_refused_and_its_target_kept() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let d = t.path().join("figs");
        std::fs::create_dir(&d).unwrap();
        std::os::unix::fs::symlink(&victim, d.join("a.svg")).unwrap();
        let e = write_in_dir(&d, OsStr::new("a.svg"), b"<svg/>").unwrap_err();
        assert!(
            e.to_string().contains("never written through a link"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        write_in_dir(&d, OsStr::new("b.svg"), b"<svg/>").unwrap();
        assert_eq!(listing(&d), ["a.svg", "b.svg"]);
        assert!(write_in_dir(&d, OsStr::new("../x"), b"").is_err());
    }

    #[test]
    fn a_link_to_a_file_of_ones_own_is_written_through_and_stays_a_link() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("real.json");
        std::fs::write(&target, "old").unwrap();
        let link = t.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }
}
