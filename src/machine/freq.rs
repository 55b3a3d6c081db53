//! Frequency scaling: cpufreq governor and limits per CPU, and turbo/boost state. Absent in
//! most VMs (the host owns the frequency), which is recorded with the reason, not as an error.

use serde::{Deserialize, Serialize};

use super::source::Source;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CpuFreq {
    pub cpu: usize,
    pub driver: Option<String>,
    pub governor: Option<String>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub cur_khz: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Frequency {
    /// One entry per online CPU that has a cpufreq directory.
    pub per_cpu: Vec<CpuFreq>,
    /// Why `per_cpu` is empty, when it is.
    pub unavailable_reason: Option<String>,
    /// Turbo/boost enabled: `Some(true)` = on, `None` = cannot tell.
    pub turbo: Option<bool>,
    /// Which file said so.
    pub turbo_source: Option<String>,
}

impl Frequency {
    /// The governors in use, deduplicated.
    pub fn governors(&self) -> Vec<String> {
        let mut g: Vec<String> = self
            .per_cpu
            .iter()
            .filter_map(|f| f.governor.clone())
            .collect();
        g.sort();
        g.dedup();
        g
    }
}

pub fn read_frequency(src: &Source, online: &[usize], in_vm: bool) -> Frequency {
    let per_cpu: Vec<CpuFreq> = online
        .iter()
        .filter_map(|&cpu| {
            let d = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
            if !src.exists(&d) {
                return None;
            }
            Some(CpuFreq {
                cpu,
                driver: src.read_trim(&format!("{d}/scaling_driver")),
                governor: src.read_trim(&format!("{d}/scaling_governor")),
                min_khz: src.read_num(&format!("{d}/scaling_min_freq")),
                max_khz: src.read_num(&format!("{d}/scaling_max_freq")),
                cur_khz: src
                    .read_num(&format!("{d}/scaling_cur_freq"))
                    .or_else(|| src.read_num(&format!("{d}/cpuinfo_cur_freq"))),
            })
        })
        .collect();
    let unavailable_reason = per_cpu.is_empty().then(|| {
        if in_vm {
            "no cpufreq in sysfs: the hypervisor owns frequency scaling (normal in a VM)"
                .to_string()
        } else {
            "no cpufreq in sysfs: no frequency driver loaded".to_string()
        }
    });
    let (turbo, turbo_source) =
        if let Some(nt) = src.read_num::<u8>("/sys/devices/system/cpu/intel_pstate/no_turbo") {
            (Some(nt == 0), Some("intel_pstate/no_turbo".to_string()))
        } else if let Some(b) = src.read_num::<u8>("/sys/devices/system/cpu/cpufreq/boost") {
            (Some(b == 1), Some("cpufreq/boost".to_string()))
        } else if let Some(b) = src.read_num::<u8>(&format!(
            "/sys/devices/system/cpu/cpu{}/cpufreq/boost",
            online.first().copied().unwrap_or(0)
        )) {
            (Some(b == 1), Some("cpufreq/policy boost".to_string()))
        } else {
            (None, None)
        };
    Frequency {
        per_cpu,
        unavailable_reason,
        turbo,
        turbo_source,
    }
}
