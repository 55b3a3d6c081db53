//! Scratch space for the fault and mmap probes: a directory and files that are created
//! exclusively (never through a symlink an attacker planted) and removed by Drop guards on
//! success, error and interrupt; plus the room checks (free disk, free memory) that must pass
//! before anything large is created or mapped, so a probe refuses with numbers instead of
//! filling the disk or getting the machine OOM-killed.

use crate::error::{Error, Result};
use crate::units::size::{fmt_bytes, ByteStyle};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A scratch directory. When oscost created it, it is removed (with anything left in it) on
/// drop; a user-given `--dir` is kept and only our own files in it are removed.
pub struct ScratchDir {
    path: PathBuf,
    owned: bool,
}

impl ScratchDir {
    /// A new directory in oscost's runtime directory, named for this process so the next
    /// start removes it if this process is killed (see [`crate::journal`]).
    pub fn create_default() -> Result<ScratchDir> {
        Ok(ScratchDir {
            path: crate::journal::new_scratch_dir()?,
            owned: true,
        })
    }

    /// A user-given directory: must exist, be a directory and be writable (checked by
    /// creating and removing a probe file). Usage error otherwise.
    pub fn user(path: &Path) -> Result<ScratchDir> {
        let meta = std::fs::metadata(path)
            .map_err(|e| Error::usage(format!("--dir {}: {e}", path.display())))?;
        if !meta.is_dir() {
            return Err(Error::usage(format!(
                "--dir {}: not a directory",
                path.display()
            )));
        }
        let dir = ScratchDir {
            path: path.to_path_buf(),
            owned: false,
        };
        dir.create_file("probe")
            .map_err(|e| Error::usage(format!("--dir {}: not writable ({e})", path.display())))?;
        Ok(dir)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Create a new file exclusively (O_CREAT|O_EXCL|O_NOFOLLOW) and remove its name at once:
    /// the probes use only its descriptor, so nothing of it outlives this process, a kill -9
    /// included (no journal entry names a user's directory); closed when the guard drops.
    pub fn create_file(&self, stem: &str) -> Result<ScratchFile> {
        for i in 0..1000u32 {
            let path = self
                .path
                .join(format!(".oscost-{}-{stem}-{i}", std::process::id()));
            let c = CString::new(path.as_os_str().as_bytes())
                .map_err(|_| Error::usage(format!("{}: path contains NUL", path.display())))?;
            // SAFETY: a valid NUL-terminated path; the fd is owned by the guard below.
            let fd = unsafe {
                libc::open(
                    c.as_ptr(),
                    libc::O_RDWR
                        | libc::O_CREAT
                        | libc::O_EXCL
                        | libc::O_NOFOLLOW
                        | libc::O_CLOEXEC,
                    0o600,
                )
            };
            if fd >= 0 {
                // SAFETY: the same valid path; the open descriptor keeps the file.
                unsafe { libc::unlink(c.as_ptr()) };
                return Ok(ScratchFile { path, fd });
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EEXIST) {
                continue;
            }
            return Err(Error::io(path.display(), err));
        }
        Err(Error::env(format!(
            "{}: no free scratch file name",
            self.path.display()
        )))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_dir_all(&self.path);
            crate::journal::tidy();
        }
    }
}

/// A scratch file: open read-write, unlinked and closed on drop.
pub struct ScratchFile {
    path: PathBuf,
    fd: i32,
}

impl ScratchFile {
    pub fn fd(&self) -> i32 {
        self.fd
    }
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Set the length (a sparse file: no blocks are written).
    pub fn set_len(&self, len: u64) -> Result<()> {
        // SAFETY: ftruncate on our own fd.
        if unsafe { libc::ftruncate(self.fd, len as libc::off_t) } != 0 {
            return Err(Error::io(
                self.path.display(),
                std::io::Error::last_os_error(),
            ));
        }
        Ok(())
    }

    /// Fill the file with `len` bytes of non-zero data (so it has real blocks to read back),
    /// checking for Ctrl-C between chunks, then fsync it.
    pub fn fill(&self, len: u64) -> Result<()> {
        const CHUNK: usize = 1 << 20;
        let mut buf = vec![0u8; CHUNK];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i % 251) as u8 | 1;
        }
        let mut done = 0u64;
        while done < len {
            crate::engine::interrupt::check()?;
            let n = (len - done).min(CHUNK as u64) as usize;
            // SAFETY: writing from a live buffer of at least n bytes.
            let w = unsafe {
                libc::pwrite(
                    self.fd,
                    buf.as_ptr() as *const libc::c_void,
                    n,
                    done as libc::off_t,
                )
            };
            if w < 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(Error::io(self.path.display(), err));
            }
            done += w as u64;
        }
        self.sync()
    }

    /// fsync: dirty pages written, so they can be evicted.
    pub fn sync(&self) -> Result<()> {
        // SAFETY: fsync on our own fd.
        if unsafe { libc::fsync(self.fd) } != 0 {
            return Err(Error::io(
                self.path.display(),
                std::io::Error::last_os_error(),
            ));
        }
        Ok(())
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        // SAFETY: closing our own fd once.
        unsafe { libc::close(self.fd) };
    }
}

/// (bytes free to this user, total bytes) of the filesystem holding `path`.
fn disk_space(path: &Path) -> Result<(u64, u64)> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::usage(format!("{}: path contains NUL", path.display())))?;
    // SAFETY: zeroed statvfs is a valid out-buffer.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and out-buffer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(Error::io(path.display(), std::io::Error::last_os_error()));
    }
    let frsize = st.f_frsize as u64;
    Ok((
        (st.f_bavail as u64).saturating_mul(frsize),
        (st.f_blocks as u64).saturating_mul(frsize),
    ))
}

/// Disk that must stay free: 5% of the filesystem, at least 16 MiB and at most 1 GiB (a
/// fixed 1 GiB made a small --dir, e.g. a 512 MiB tmpfs, unusable), or 5% of what is free
/// if that is more.
pub fn disk_reserve(free: u64, total: u64) -> u64 {
    (total / 20).clamp(16 << 20, 1 << 30).max(free / 20)
}

/// What must stay free: 10% of the total, and at least 1 GiB, or a quarter of the total
/// where that is less (a small memory cgroup: 16 MiB of 64 MiB).
pub fn headroom(total: u64) -> u64 {
    (1u64 << 30).min(total / 4).max(total / 10)
}

/// Memory facts for the room checks: MemTotal and MemAvailable, lowered to a cgroup memory
/// limit when this process runs under one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemRoom {
    pub total: u64,
    pub available: u64,
}

impl MemRoom {
    /// Read /proc/meminfo and the cgroup limit (v2 memory.max or v1 memory.limit_in_bytes).
    pub fn read() -> Result<MemRoom> {
        let text = std::fs::read_to_string("/proc/meminfo")
            .map_err(|e| Error::env(format!("/proc/meminfo: {e}")))?;
        let m = crate::machine::parse::parse_meminfo(&text);
        let total = m.get("MemTotal").copied();
        let available = m.get("MemAvailable").or(m.get("MemFree")).copied();
        let (Some(total), Some(mut available)) = (total, available) else {
            return Err(Error::env(
                "/proc/meminfo has no MemTotal/MemAvailable: cannot check free memory",
            ));
        };
        // Under a memory cgroup its limit is the memory there is: the reserve is taken from
        // it, not from the host's RAM.
        let mut total = total;
        if let Some((limit, usage)) = cgroup_limit() {
            available = available.min(limit.saturating_sub(usage));
            total = total.min(limit);
        }
        Ok(MemRoom { total, available })
    }

    /// What may be used without going below the headroom.
    pub fn usable(&self) -> u64 {
        self.available.saturating_sub(headroom(self.total))
    }
}

/// (limit, usage) of this process's memory cgroup when a finite limit is set.
fn cgroup_limit() -> Option<(u64, u64)> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cg.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrl, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (limit, usage) = if ctrl.is_empty() {
            let d = format!("/sys/fs/cgroup{path}");
            (format!("{d}/memory.max"), format!("{d}/memory.current"))
        } else if ctrl.split(',').any(|c| c == "memory") {
            let d = format!("/sys/fs/cgroup/memory{path}");
            (
                format!("{d}/memory.limit_in_bytes"),
                format!("{d}/memory.usage_in_bytes"),
            )
        } else {
            continue;
        };
        let read =
            |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
        if let (Some(l), Some(u)) = (read(&limit), read(&usage)) {
            if l < (1u64 << 60) {
                return Some((l, u));
            }
        }
    }
    None
}

/// How much of the available memory must stay free for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// [`headroom`]: 10% of the total, at least 1 GiB or a quarter. One large buffer or file that is the point
    /// of the measurement (mmap, page faults), which may take all but the headroom.
    Headroom,
    /// Half of what is available: working sets walked while measuring (a ring of them, two
    /// tasks sharing a CPU, a pointer chase), which must stay resident without pushing the
    /// rest of the system out.
    Half,
}

impl MemRoom {
    /// What may be used while `keep` stays free.
    pub fn usable_keeping(&self, keep: Keep) -> u64 {
        match keep {
            Keep::Headroom => self.usable(),
            Keep::Half => self.available / 2,
        }
    }
}

/// The one memory check: refuse (usage error, with the numbers) when `need` bytes would eat
/// into what `keep` says must stay free. `what` names the request, e.g. "--size 32g
/// (anonymous)" or "a ring of 8 × 4m".
pub fn check_memory(what: &str, need: u64, room: &MemRoom, keep: Keep) -> Result<()> {
    let usable = room.usable_keeping(keep);
    if need > usable {
        let gm = |b: u64| fmt_bytes(b as f64, ByteStyle::GibMib);
        let kept = match keep {
            Keep::Headroom => format!(
                "{} must stay free (10% of {}, at least 1 GiB or a quarter)",
                gm(headroom(room.total)),
                gm(room.total)
            ),
            Keep::Half => "half of it must stay free".to_string(),
        };
        return Err(Error::usage(format!(
            "{what}: needs {} of memory but only {} is available and {kept}; use at most {}",
            gm(need),
            gm(room.available),
            gm(usable)
        )));
    }
    Ok(())
}

/// Refuse when `need` bytes of files would leave less than 1 GiB (or 5%) of the disk free.
pub fn check_disk(what: &str, dir: &Path, need: u64) -> Result<()> {
    let (free, total) = disk_space(dir)?;
    let keep = disk_reserve(free, total);
    if need.saturating_add(keep) > free {
        return Err(Error::usage(format!(
            "{what}: needs {} of disk in {} but only {} is free and {} must stay free",
            fmt_bytes(need as f64, ByteStyle::GibMib),
            dir.display(),
            fmt_bytes(free as f64, ByteStyle::GibMib),
            fmt_bytes(keep as f64, ByteStyle::GibMib)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_exclusive_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ScratchDir::user(tmp.path()).unwrap();
        let f = dir.create_file("x").unwrap();
        f.set_len(8192).unwrap();
        // SAFETY: a zeroed stat is a valid out-buffer; the fd is open.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::fstat(f.fd(), &mut st) }, 0);
        assert_eq!(st.st_size, 8192);
        // Its name is gone at once: a kill -9 now would leave nothing in the user's directory.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        let g = dir.create_file("x").unwrap();
        assert_ne!(g.fd(), f.fd());
        drop(f);
        drop(g);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_planted_symlink_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("victim");
        std::fs::write(&target, b"keep").unwrap();
        let dir = ScratchDir::user(tmp.path()).unwrap();
        let name = tmp
            .path()
            .join(format!(".oscost-{}-s-0", std::process::id()));
        std::os::unix::fs::symlink(&target, &name).unwrap();
        let f = dir.create_file("s").unwrap();
        assert_ne!(f.path(), name.as_path());
        drop(f);
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }

    #[test]
    fn owned_dir_is_removed_and_bad_dirs_are_usage_errors() {
        let d = ScratchDir::create_default().unwrap();
        let p = d.path().to_path_buf();
        let _f = d.create_file("y").unwrap();
        drop(_f);
        drop(d);
        assert!(!p.exists());
        let e = ScratchDir::user(Path::new("/nonexistent/oscost"))
            .err()
            .unwrap();
        assert_eq!(e.exit_code(), 2);
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, b"").unwrap();
        assert!(ScratchDir::user(&file)
            .err()
            .unwrap()
            .to_string()
            .contains("not a directory"));
    }

    #[test]
    fn refusals_carry_numbers() {
        let room = MemRoom {
            total: 24 << 30,
            available: 20 << 30,
        };
        assert_eq!(headroom(room.total), (24u64 << 30) / 10);
        // A 64 MiB cgroup keeps a quarter of its limit, not 1 GiB of the host's.
        assert_eq!(headroom(64 << 20), 16 << 20);
        assert_eq!(headroom(4 << 30), 1 << 30);
        assert!(check_memory("x", 1 << 30, &room, Keep::Headroom).is_ok());
        let e = check_memory("--size 20g", 20 << 30, &room, Keep::Headroom).unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("only 20.00 GiB is available") && s.contains("use at most 17.60 GiB"),
            "{s}"
        );
        assert_eq!(e.exit_code(), 2);
        let small = MemRoom {
            total: 4 << 30,
            available: 3 << 30,
        };
        assert_eq!(small.usable(), 2 << 30, "1 GiB headroom below 10 GiB");
        // Working sets keep half of what is available.
        assert!(check_memory("a ring", 3 << 29, &small, Keep::Half).is_ok());
        let e = check_memory("a ring of 2 × 1g", 2 << 30, &small, Keep::Half).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a ring of 2 × 1g: needs 2.00 GiB of memory but only 3.00 GiB is available and \
             half of it must stay free; use at most 1.50 GiB"
        );
        let tmp = tempfile::tempdir().unwrap();
        assert!(check_disk("x", tmp.path(), u64::MAX / 2).is_err());
        assert!(check_disk("x", tmp.path(), 4096).is_ok());
        // A 512 MiB filesystem with 500 MiB free keeps 25.6 MiB, not 1 GiB.
        assert_eq!(disk_reserve(500 << 20, 512 << 20), (512 << 20) / 20);
        assert_eq!(disk_reserve(1 << 20, 8 << 20), 16 << 20);
        assert_eq!(disk_reserve(100 << 30, 1 << 40), 5 << 30);
        assert_eq!(disk_reserve(10 << 30, 1 << 40), 1 << 30);
    }
}
