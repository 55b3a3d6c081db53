//! CPU caches from /sys/devices/system/cpu/cpu*/cache/index*: each CPU lists the caches it
//! sees, so the same L3 appears once per CPU; they are merged into cache *instances* keyed by
//! level, type and the set of CPUs sharing them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::parse::{format_cpu_list, parse_cpu_list};
use super::source::{numbered, Source};

/// What a cache holds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum CacheType {
    Data,
    Instruction,
    #[default]
    Unified,
}

/// One cache instance: a physical cache and the logical CPUs that share it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CacheInfo {
    pub level: u32,
    #[serde(rename = "type")]
    pub kind: CacheType,
    pub size_bytes: Option<u64>,
    pub line_size: Option<u64>,
    pub ways: Option<u64>,
    pub sets: Option<u64>,
    /// The CPUs sharing this cache, as the kernel's list text (`"0-1"`).
    pub shared_cpu_list: String,
    /// The same CPUs, expanded.
    pub shared_cpus: Vec<usize>,
}

impl CacheInfo {
    /// `"L1d"`, `"L1i"`, `"L2"`, `"L3"`: the names people and lscpu use.
    pub fn label(&self) -> String {
        match self.kind {
            CacheType::Data => format!("L{}d", self.level),
            CacheType::Instruction => format!("L{}i", self.level),
            CacheType::Unified => format!("L{}", self.level),
        }
    }
}

/// Builds a cache from the files of one `index*` directory, given as file name → content.
/// Returns `None` without a usable `level`.
pub fn parse_cache_index(files: &BTreeMap<String, String>) -> Option<CacheInfo> {
    let get = |k: &str| files.get(k).map(|s| s.trim());
    let num = |k: &str| {
        get(k)
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|&n| n > 0)
    };
    let level = get("level")?.parse().ok()?;
    let kind = match get("type").unwrap_or("Unified") {
        "Data" => CacheType::Data,
        "Instruction" => CacheType::Instruction,
        _ => CacheType::Unified,
    };
    let shared_cpus = get("shared_cpu_list")
        .map(parse_cpu_list)
        .unwrap_or_default();
    Some(CacheInfo {
        level,
        kind,
        // sysfs writes "48K", "32768K", "1M": the tool's one size grammar.
        size_bytes: get("size").and_then(|s| crate::units::size::parse_size(s).ok()),
        line_size: num("coherency_line_size"),
        ways: num("ways_of_associativity"),
        sets: num("number_of_sets"),
        shared_cpu_list: format_cpu_list(&shared_cpus),
        shared_cpus,
    })
}

/// Merges per-CPU cache views into instances: two entries are the same cache when level,
/// type and sharing CPUs agree. A cache whose shared list is unknown is kept per CPU.
pub fn dedup_caches(per_cpu: Vec<(usize, CacheInfo)>) -> Vec<CacheInfo> {
    let mut out: Vec<CacheInfo> = Vec::new();
    for (cpu, mut c) in per_cpu {
        if c.shared_cpus.is_empty() {
            c.shared_cpus = vec![cpu];
            c.shared_cpu_list = cpu.to_string();
        }
        if !out
            .iter()
            .any(|o| o.level == c.level && o.kind == c.kind && o.shared_cpus == c.shared_cpus)
        {
            out.push(c);
        }
    }
    out.sort_by(|a, b| {
        (a.level, a.kind, a.shared_cpus.first()).cmp(&(b.level, b.kind, b.shared_cpus.first()))
    });
    out
}

const INDEX_FILES: &[&str] = &[
    "level",
    "type",
    "size",
    "coherency_line_size",
    "ways_of_associativity",
    "number_of_sets",
    "shared_cpu_list",
];

/// Reads every online CPU's cache directories and returns the deduplicated instances.
pub fn read_caches(src: &Source, online: &[usize]) -> Vec<CacheInfo> {
    let mut per_cpu = Vec::new();
    for &cpu in online {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
        for idx in numbered(&src.list(&dir), "index") {
            let files: BTreeMap<String, String> = INDEX_FILES
                .iter()
                .filter_map(|f| Some((f.to_string(), src.read(&format!("{dir}/index{idx}/{f}"))?)))
                .collect();
            if let Some(c) = parse_cache_index(&files) {
                per_cpu.push((cpu, c));
            }
        }
    }
    dedup_caches(per_cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache's sysfs index directory: its level, type, size, ways, sets and shared CPUs.
    fn idx([level, ty, size, ways, sets, shared]: [&str; 6]) -> CacheInfo {
        let files: BTreeMap<String, String> = [
            ("level", level),
            ("type", ty),
            ("size", size),
            ("coherency_line_size", "64"),
            ("ways_of_associativity", ways),
            ("number_of_sets", sets),
            ("shared_cpu_list", shared),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), format!("{v}\n")))
        .collect();
        parse_cache_index(&files).unwrap()
    }

    #[test]
    fn parses_vm_l1d() {
        let c = idx(["1", "Data", "48K", "12", "64", "0"]);
        assert_eq!(c.label(), "L1d");
        assert_eq!(c.size_bytes, Some(48 * 1024));
        assert_eq!(
            (c.line_size, c.ways, c.sets),
            (Some(64), Some(12), Some(64))
        );
        // size = line * ways * sets, as it must be for a consistent record.
        assert_eq!(c.size_bytes, Some(64 * 12 * 64));
    }

    #[test]
    fn missing_level_is_rejected_and_zero_ways_unknown() {
        assert!(parse_cache_index(&BTreeMap::new()).is_none());
        let c = idx(["3", "Unified", "32768K", "0", "32768", "0-1"]);
        assert_eq!(c.ways, None);
    }

    #[test]
    fn shared_l3_deduplicates() {
        // The VM: private L1d/L1i/L2 per CPU, one L3 shared by CPUs 0-1.
        let mut v = Vec::new();
        for cpu in 0..2 {
            let me = cpu.to_string();
            v.push((cpu, idx(["1", "Data", "48K", "12", "64", &me])));
            v.push((cpu, idx(["1", "Instruction", "32K", "8", "64", &me])));
            v.push((cpu, idx(["2", "Unified", "1024K", "16", "1024", &me])));
            v.push((cpu, idx(["3", "Unified", "32768K", "16", "32768", "0-1"])));
        }
        let d = dedup_caches(v);
        assert_eq!(d.len(), 7);
        assert_eq!(d.iter().filter(|c| c.level == 3).count(), 1);
        assert_eq!(d.last().unwrap().shared_cpu_list, "0-1");
    }
}
