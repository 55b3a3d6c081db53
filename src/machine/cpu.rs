//! The processor: what it is (cpuinfo) and how its logical CPUs are laid out (sysfs topology).

use serde::{Deserialize, Serialize};

use super::parse::{parse_cpu_list, parse_cpuinfo, CpuinfoBlock};
use super::source::{numbered, Source};

/// What the processor is, from the first block of /proc/cpuinfo (all CPUs of one machine are
/// assumed to be the same model; hybrid P/E-core parts show up in the topology instead).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CpuModel {
    pub vendor: Option<String>,
    pub model_name: Option<String>,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub stepping: Option<u32>,
    pub microcode: Option<String>,
    /// The cpuinfo `hypervisor` flag: the CPU itself says it is virtual.
    pub hypervisor_flag: bool,
    /// cpuinfo flags that change how numbers should be read (constant_tsc, nonstop_tsc, ht, pti ...).
    pub notable_flags: Vec<String>,
    /// The cpuinfo `bugs` line: the speculative-execution issues the kernel knows this CPU has.
    pub bugs: Vec<String>,
}

/// Flags worth keeping with a result: they decide whether TSC-based timing is trustworthy,
/// whether SMT exists, and which kernel-entry mitigations are in use.
const NOTABLE_FLAGS: &[&str] = &[
    "hypervisor",
    "ht",
    "tsc",
    "constant_tsc",
    "nonstop_tsc",
    "tsc_known_freq",
    "rdtscp",
    "pti",
    "pcid",
    "invpcid",
    "ibrs",
    "ibrs_enhanced",
    "ibpb",
    "stibp",
    "ssbd",
    "md_clear",
    "arch_perfmon",
];

/// Reads the model from /proc/cpuinfo text. Non-x86 cpuinfo (ARM's `CPU implementer`,
/// RISC-V's `isa`) still yields what it can; nothing is required.
pub fn parse_model(cpuinfo: &str) -> CpuModel {
    let blocks = parse_cpuinfo(cpuinfo);
    let Some(b) = blocks.first() else {
        return CpuModel::default();
    };
    let get = |k: &str| b.get(k).cloned();
    let num = |k: &str| -> Option<u32> {
        let v = b.get(k)?;
        v.strip_prefix("0x")
            .map(|h| u32::from_str_radix(h, 16).ok())
            .unwrap_or_else(|| v.parse().ok())
    };
    let flags: Vec<&str> = b
        .get("flags")
        .or_else(|| b.get("Features"))
        .map(|f| f.split_whitespace().collect())
        .unwrap_or_default();
    CpuModel {
        vendor: get("vendor_id")
            .or_else(|| get("CPU implementer").map(|i| format!("ARM implementer {i}"))),
        model_name: get("model name")
            .or_else(|| get("Model"))
            .or_else(|| get("uarch"))
            .or_else(|| get("isa")),
        family: num("cpu family"),
        model: num("model"),
        stepping: num("stepping"),
        microcode: get("microcode"),
        hypervisor_flag: flags.contains(&"hypervisor"),
        notable_flags: NOTABLE_FLAGS
            .iter()
            .filter(|f| flags.contains(f))
            .map(|f| f.to_string())
            .collect(),
        bugs: b
            .get("bugs")
            .map(|s| s.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
    }
}

/// Where one logical CPU sits: its physical core, its package (socket), the logical CPUs
/// sharing its core (SMT siblings, itself included) and its NUMA node.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CpuTopo {
    pub cpu: usize,
    pub core_id: Option<usize>,
    pub package_id: Option<usize>,
    /// Logical CPUs on the same physical core, this one included (`thread_siblings_list`).
    pub smt_siblings: Vec<usize>,
    pub numa_node: Option<usize>,
}

/// Reads the topology of each online CPU from sysfs; when sysfs lacks `topology/` (some
/// containers) falls back to cpuinfo's `physical id` / `core id`.
pub fn read_topology(src: &Source, online: &[usize], cpuinfo: &[CpuinfoBlock]) -> Vec<CpuTopo> {
    online
        .iter()
        .map(|&cpu| {
            let base = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
            let info = cpuinfo
                .iter()
                .find(|b| b.get("processor").and_then(|p| p.parse().ok()) == Some(cpu));
            let from_info = |k: &str| info.and_then(|b| b.get(k)).and_then(|v| v.parse().ok());
            let core_id = src
                .read_num(&format!("{base}/core_id"))
                .or_else(|| from_info("core id"));
            let package_id = src
                .read_num::<i64>(&format!("{base}/physical_package_id"))
                .and_then(|p| usize::try_from(p).ok())
                .or_else(|| from_info("physical id"));
            let smt_siblings = src
                .read(&format!("{base}/thread_siblings_list"))
                .or_else(|| src.read(&format!("{base}/core_cpus_list")))
                .map(|s| parse_cpu_list(&s))
                .unwrap_or_else(|| vec![cpu]);
            let numa_node = numbered(
                &src.list(&format!("/sys/devices/system/cpu/cpu{cpu}")),
                "node",
            )
            .first()
            .copied();
            CpuTopo {
                cpu,
                core_id,
                package_id,
                smt_siblings,
                numa_node,
            }
        })
        .collect()
}

/// Counts of distinct physical cores (package, core) and packages in a topology.
pub fn count_cores_sockets(topo: &[CpuTopo]) -> (usize, usize) {
    let mut cores: Vec<(Option<usize>, Option<usize>)> = topo
        .iter()
        .map(|t| (t.package_id, t.core_id.or(Some(t.cpu))))
        .collect();
    cores.sort();
    cores.dedup();
    let mut pk: Vec<Option<usize>> = topo.iter().map(|t| t.package_id).collect();
    pk.sort();
    pk.dedup();
    (cores.len(), pk.len().max(usize::from(!topo.is_empty())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const VM_CPUINFO: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\nstepping\t: 1\nmicrocode\t: 0x1000065\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu tsc ht constant_tsc nonstop_tsc hypervisor rdtscp\nbugs\t\t: sysret_ss_attrs spectre_v1 spectre_v2\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n";

    #[test]
    fn model_from_vm_cpuinfo() {
        let m = parse_model(VM_CPUINFO);
        assert_eq!(m.vendor.as_deref(), Some("AuthenticAMD"));
        assert_eq!(m.model_name.as_deref(), Some("AMD EPYC"));
        assert_eq!(
            (m.family, m.model, m.stepping),
            (Some(26), Some(2), Some(1))
        );
        assert_eq!(m.microcode.as_deref(), Some("0x1000065"));
        assert!(m.hypervisor_flag);
        assert!(m.notable_flags.contains(&"constant_tsc".to_string()));
        assert_eq!(m.bugs.len(), 3);
    }

    #[test]
    fn model_from_empty_cpuinfo() {
        assert_eq!(parse_model(""), CpuModel::default());
    }

    #[test]
    fn counts_with_smt() {
        let t = |cpu, core, pkg| CpuTopo {
            cpu,
            core_id: Some(core),
            package_id: Some(pkg),
            ..Default::default()
        };
        // 2 sockets x 2 cores x 2 threads.
        let topo: Vec<CpuTopo> = vec![
            t(0, 0, 0),
            t(1, 1, 0),
            t(2, 0, 1),
            t(3, 1, 1),
            t(4, 0, 0),
            t(5, 1, 0),
            t(6, 0, 1),
            t(7, 1, 1),
        ];
        assert_eq!(count_cores_sockets(&topo), (4, 2));
        assert_eq!(count_cores_sockets(&[]), (0, 0));
    }
}
