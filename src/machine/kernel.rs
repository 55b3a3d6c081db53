//! The kernel and its knobs: release, boot parameters that change costs, speculative-execution
//! mitigations, transparent huge pages, the clocksource and perf_event_paranoid.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::parse::{parse_bracketed, parse_cmdline};
use super::source::Source;

/// Boot parameters that change what the measured mechanisms cost: mitigations and PTI make
/// every kernel entry dearer, isolcpus/nohz_full/rcu_nocbs change scheduling noise, THP and
/// pstate/idle settings change faults and frequency.
pub const BOOT_PARAMS_THAT_MATTER: &[&str] = &[
    "mitigations",
    "pti",
    "nopti",
    "spectre_v2",
    "spec_store_bypass_disable",
    "retbleed",
    "mds",
    "isolcpus",
    "nohz_full",
    "rcu_nocbs",
    "transparent_hugepage",
    "intel_pstate",
    "amd_pstate",
    "idle",
    "processor.max_cstate",
    "intel_idle.max_cstate",
    "clocksource",
    "tsc",
    "nosmt",
    "preempt",
];

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Kernel {
    /// `uname -r`, e.g. `6.18.44-fc-v669`.
    pub release: Option<String>,
    /// `uname -v`, e.g. `#1 SMP PREEMPT_DYNAMIC ...`.
    pub version: Option<String>,
    /// The whole /proc/cmdline, for the record.
    pub cmdline: Option<String>,
    /// Only the parameters of [`BOOT_PARAMS_THAT_MATTER`] present on the command line.
    pub boot_params: BTreeMap<String, String>,
    /// /sys/devices/system/cpu/vulnerabilities: name → kernel's text.
    pub vulnerabilities: BTreeMap<String, String>,
    pub thp: Thp,
    pub clocksource: Clocksource,
    pub perf_event_paranoid: Option<i32>,
}

/// Transparent huge pages: the selected mode of `enabled` and `defrag`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Thp {
    pub enabled: Option<String>,
    pub defrag: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Clocksource {
    pub current: Option<String>,
    pub available: Vec<String>,
}

/// Keeps the boot parameters that matter, in command-line order (last one wins, as in the kernel).
pub fn boot_params_that_matter(cmdline: &str) -> BTreeMap<String, String> {
    parse_cmdline(cmdline)
        .into_iter()
        .filter(|(k, _)| BOOT_PARAMS_THAT_MATTER.contains(&k.as_str()))
        .collect()
}

/// The vulnerabilities whose active mitigation is paid on kernel entry/exit (system calls,
/// interrupts, context switches): names with their text, for the warning.
pub fn syscall_mitigations(vulns: &BTreeMap<String, String>) -> Vec<(String, String)> {
    // Each of these, when mitigated, adds work to every user/kernel transition or switch:
    // page-table switches (meltdown/PTI), retpolines/IBRS/RSB stuffing (spectre_v2, retbleed,
    // SRSO, ITS), buffer clearing with VERW (mds, taa, mmio, rfds, tsa), IBPB (vmscape).
    const ENTRY_COST: &[&str] = &[
        "meltdown",
        "spectre_v2",
        "retbleed",
        "spec_rstack_overflow",
        "indirect_target_selection",
        "mds",
        "tsx_async_abort",
        "mmio_stale_data",
        "reg_file_data_sampling",
        "tsa",
        "vmscape",
        "l1tf",
    ];
    vulns
        .iter()
        .filter(|(k, _)| ENTRY_COST.contains(&k.as_str()))
        .filter(|(_, v)| {
            // "Vulnerable: Safe RET, no microcode" still runs the Safe-RET sequence.
            v.starts_with("Mitigation") || v.contains("Safe RET")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

pub fn read_kernel(src: &Source, notes: &mut Vec<String>) -> Kernel {
    let cmdline = src.read_trim("/proc/cmdline");
    if cmdline.is_none() {
        notes.push("/proc/cmdline unreadable: boot parameters unknown".into());
    }
    let vdir = "/sys/devices/system/cpu/vulnerabilities";
    let vulnerabilities: BTreeMap<String, String> = src
        .list(vdir)
        .into_iter()
        .filter_map(|n| {
            let t = src.read_trim(&format!("{vdir}/{n}"))?;
            Some((n, t))
        })
        .collect();
    if vulnerabilities.is_empty() {
        notes.push(format!("{vdir} missing: mitigation state unknown"));
    }
    let cs = "/sys/devices/system/clocksource/clocksource0";
    let k = Kernel {
        release: src.read_trim("/proc/sys/kernel/osrelease"),
        version: src.read_trim("/proc/sys/kernel/version"),
        boot_params: cmdline
            .as_deref()
            .map(boot_params_that_matter)
            .unwrap_or_default(),
        cmdline,
        vulnerabilities,
        thp: Thp {
            enabled: src
                .read("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|s| parse_bracketed(&s)),
            defrag: src
                .read("/sys/kernel/mm/transparent_hugepage/defrag")
                .and_then(|s| parse_bracketed(&s)),
        },
        clocksource: Clocksource {
            current: src.read_trim(&format!("{cs}/current_clocksource")),
            available: src
                .read(&format!("{cs}/available_clocksource"))
                .map(|s| s.split_whitespace().map(String::from).collect())
                .unwrap_or_default(),
        },
        perf_event_paranoid: src.read_num("/proc/sys/kernel/perf_event_paranoid"),
    };
    if k.release.is_none() {
        notes.push("/proc/sys/kernel/osrelease unreadable: kernel release unknown".into());
    }
    if k.thp.enabled.is_none() {
        notes.push("transparent_hugepage not in sysfs: THP mode unknown".into());
    }
    if k.perf_event_paranoid.is_none() {
        notes.push("perf_event_paranoid unreadable (no perf support in this kernel?)".into());
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_params_filtered() {
        let p = boot_params_that_matter(
            "mitigations=auto,no_guest_host console=ttyS0 quiet isolcpus=2-3 nohz_full=2-3 -- pti=off",
        );
        assert_eq!(p.len(), 3);
        assert_eq!(p["mitigations"], "auto,no_guest_host");
        assert_eq!(p["isolcpus"], "2-3");
        assert!(
            !p.contains_key("pti"),
            "init's arguments are not kernel parameters"
        );
    }

    #[test]
    fn entry_mitigations_from_vm() {
        let v: BTreeMap<String, String> = [
            ("meltdown", "Not affected"),
            ("spec_rstack_overflow", "Vulnerable: Safe RET, no microcode"),
            ("spec_store_bypass", "Vulnerable"),
            (
                "spectre_v1",
                "Mitigation: usercopy/swapgs barriers and __user pointer sanitization",
            ),
            (
                "spectre_v2",
                "Mitigation: Retpolines; STIBP: disabled; RSB filling",
            ),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let m: Vec<String> = syscall_mitigations(&v).into_iter().map(|x| x.0).collect();
        assert_eq!(m, vec!["spec_rstack_overflow", "spectre_v2"]);
    }

    #[test]
    fn mitigations_off_has_none() {
        let v: BTreeMap<String, String> =
            [("meltdown", "Vulnerable"), ("spectre_v2", "Vulnerable")]
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
        assert!(syscall_mitigations(&v).is_empty());
    }
}
