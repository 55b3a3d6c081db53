//! Running the lab under a memory limit instead of beside a hog: a child cgroup (cgroup v2,
//! memory controller) with memory.max set, into which each lab child is moved; removed on
//! drop once its processes are gone. Where cgroup v2 memory control is not available (no v2
//! mount, memory bound to v1, no permission) `create` says which, and nothing is changed.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

pub struct MemCgroup {
    path: PathBuf,
}

/// The cgroup2 mount point from /proc/self/mountinfo text.
pub fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        if post.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        pre.split_whitespace().nth(4).map(PathBuf::from)
    })
}

/// This process's v2 cgroup path ("0::/path") from /proc/self/cgroup text.
pub fn own_v2_path(cgroup: &str) -> Option<String> {
    cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::").map(|p| p.to_string()))
}

impl MemCgroup {
    /// A child cgroup with memory.max = `limit` bytes.
    pub fn create(limit: u64) -> Result<MemCgroup> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mount = cgroup2_mount(&mountinfo).ok_or_else(|| {
            Error::env("--memory-limit: no cgroup v2 hierarchy is mounted here; use --compete")
        })?;
        let own = own_v2_path(&std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default())
            .unwrap_or_else(|| "/".into());
        let parent = mount.join(own.trim_start_matches('/'));
        let controllers =
            std::fs::read_to_string(parent.join("cgroup.controllers")).unwrap_or_default();
        if !controllers.split_whitespace().any(|c| c == "memory") {
            return Err(Error::env(format!(
                "--memory-limit: the cgroup v2 memory controller is not available in {} \
                 (controllers: {}; memory may be bound to cgroup v1); use --compete",
                parent.display(),
                if controllers.trim().is_empty() {
                    "none"
                } else {
                    controllers.trim()
                }
            )));
        }
        let sub =
            std::fs::read_to_string(parent.join("cgroup.subtree_control")).unwrap_or_default();
        if !sub.split_whitespace().any(|c| c == "memory") {
            std::fs::write(parent.join("cgroup.subtree_control"), b"+memory").map_err(|e| {
                Error::env(format!(
                    "--memory-limit: cannot enable the memory controller below {} ({e}; a cgroup \
                     with processes cannot delegate controllers); use --compete",
                    parent.display()
                ))
            })?;
        }
        let path = parent.join(format!("oscost-lab-{}", std::process::id()));
        std::fs::create_dir(&path)
            .map_err(|e| Error::env(format!("--memory-limit: {}: {e}", path.display())))?;
        let cg = MemCgroup { path };
        std::fs::write(cg.path.join("memory.max"), limit.to_string())
            .map_err(|e| Error::env(format!("--memory-limit: memory.max: {e}")))?;
        let _ = std::fs::write(cg.path.join("memory.swap.max"), b"0");
        Ok(cg)
    }

    /// Move a process into the cgroup.
    pub fn add(&self, pid: i32) -> Result<()> {
        std::fs::write(self.path.join("cgroup.procs"), pid.to_string())
            .map_err(|e| Error::env(format!("--memory-limit: moving pid {pid}: {e}")))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        // The lab children are killed and reaped before this guard drops; rmdir then succeeds.
        let _ = std::fs::remove_dir(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_v2_mount_and_own_path() {
        let mi = "24 22 0:21 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                  31 22 0:28 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup2_mount(mi),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(cgroup2_mount("1 2 0:1 / / rw - ext4 /dev/vda rw\n"), None);
        assert_eq!(
            own_v2_path("4:memory:/x\n0::/user.slice/s\n").as_deref(),
            Some("/user.slice/s")
        );
        assert_eq!(own_v2_path("4:memory:/x\n"), None);
    }
}
