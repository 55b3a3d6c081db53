//! Where machine facts are read from: a filesystem root that is `/` on the live host and a
//! recorded fake tree in tests, so every reader can be exercised without the real machine.

use std::path::{Path, PathBuf};

/// A procfs/sysfs root. All paths given to it are absolute-looking (`/proc/cpuinfo`) and are
/// resolved under the root.
#[derive(Debug, Clone)]
pub struct Source {
    root: PathBuf,
}

impl Source {
    pub fn new(root: &Path) -> Self {
        Source {
            root: root.to_path_buf(),
        }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.join(p.trim_start_matches('/'))
    }

    /// The file's text, or `None` when it is missing or unreadable (both are normal: VMs
    /// lack cpufreq and DMI, containers hide /sys/hypervisor, some files are root-only).
    pub fn read(&self, p: &str) -> Option<String> {
        std::fs::read_to_string(self.path(p)).ok()
    }

    /// The file's text trimmed, `None` when missing or empty.
    pub fn read_trim(&self, p: &str) -> Option<String> {
        self.read(p)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    }

    /// The file parsed as a number.
    pub fn read_num<T: std::str::FromStr>(&self, p: &str) -> Option<T> {
        self.read_trim(p)?.parse().ok()
    }

    /// Names of the directory's entries, sorted; empty when the directory is missing.
    pub fn list(&self, p: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(p))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// Whether the path exists at all.
    pub fn exists(&self, p: &str) -> bool {
        self.path(p).exists()
    }
}

/// Entries named `<prefix><number>` (e.g. `cpu3`, `index2`, `node1`) as numbers, sorted.
pub fn numbered(entries: &[String], prefix: &str) -> Vec<usize> {
    let mut v: Vec<usize> = entries
        .iter()
        .filter_map(|e| e.strip_prefix(prefix)?.parse().ok())
        .collect();
    v.sort_unstable();
    v
}
