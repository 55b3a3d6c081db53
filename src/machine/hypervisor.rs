//! Is this a virtual machine, and whose? Cross-CPU wake-ups, timers and PMU access behave
//! very differently under a hypervisor, so results must say where they were taken.

use serde::{Deserialize, Serialize};

use super::source::Source;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Hypervisor {
    /// Any evidence of virtualization was found.
    pub detected: bool,
    /// A human name (`KVM`, `Xen`, `Microsoft Hyper-V`, `Amazon EC2` ...), when one is known.
    pub name: Option<String>,
    /// cpuinfo's `hypervisor` flag.
    pub cpuinfo_flag: bool,
    /// The CPUID 0x40000000 vendor signature (x86 only, read on the live host).
    pub cpuid_vendor: Option<String>,
    /// /sys/hypervisor/type (Xen exposes it).
    pub sys_type: Option<String>,
    pub dmi_sys_vendor: Option<String>,
    pub dmi_product_name: Option<String>,
}

impl Hypervisor {
    /// Recomputes `detected` and `name` from the raw fields (after every field is filled in).
    pub fn resolve(&mut self) {
        self.name = hypervisor_name(self);
        self.detected = self.cpuinfo_flag || self.sys_type.is_some() || self.name.is_some();
    }
}

/// Picks the most specific name: the cloud/vendor from DMI beats the CPUID engine name,
/// which beats /sys/hypervisor/type. Bare-metal DMI (e.g. "Dell Inc.") names nothing.
pub fn hypervisor_name(h: &Hypervisor) -> Option<String> {
    let dmi = format!(
        "{} {}",
        h.dmi_sys_vendor.as_deref().unwrap_or(""),
        h.dmi_product_name.as_deref().unwrap_or("")
    );
    const DMI_NAMES: &[(&str, &str)] = &[
        ("Amazon EC2", "Amazon EC2"),
        ("Google Compute Engine", "Google Compute Engine"),
        ("Microsoft Corporation Virtual Machine", "Microsoft Hyper-V"),
        ("VMware", "VMware"),
        ("VirtualBox", "VirtualBox"),
        ("innotek", "VirtualBox"),
        ("QEMU", "QEMU"),
        ("Xen", "Xen"),
        ("Parallels", "Parallels"),
        ("OpenStack", "OpenStack"),
        ("Alibaba Cloud", "Alibaba Cloud"),
        ("DigitalOcean", "DigitalOcean"),
        ("Hetzner", "Hetzner vServer"),
        ("KVM", "KVM"),
    ];
    if let Some((_, n)) = DMI_NAMES.iter().find(|(pat, _)| dmi.contains(pat)) {
        return Some(n.to_string());
    }
    if let Some(v) = &h.cpuid_vendor {
        let n = match v.trim_end_matches('\0').trim() {
            "KVMKVMKVM" => "KVM",
            "Microsoft Hv" => "Microsoft Hyper-V",
            "VMwareVMware" => "VMware",
            "XenVMMXenVMM" => "Xen",
            "TCGTCGTCGTCG" => "QEMU (TCG emulation)",
            "ACRNACRNACRN" => "ACRN",
            "bhyve bhyve" => "bhyve",
            "lrpepyh  vr" => "Parallels",
            "" => return h.sys_type.clone(),
            other => other,
        };
        return Some(n.to_string());
    }
    h.sys_type.clone()
}

pub fn read_hypervisor(src: &Source, cpuinfo_flag: bool) -> Hypervisor {
    let mut h = Hypervisor {
        cpuinfo_flag,
        sys_type: src.read_trim("/sys/hypervisor/type"),
        dmi_sys_vendor: src.read_trim("/sys/class/dmi/id/sys_vendor"),
        dmi_product_name: src.read_trim("/sys/class/dmi/id/product_name"),
        ..Default::default()
    };
    h.resolve();
    h
}

/// The CPUID hypervisor vendor signature, only asked when cpuinfo says a hypervisor is
/// present (the leaf is undefined on bare metal).
#[cfg(target_arch = "x86_64")]
pub fn cpuid_vendor() -> Option<String> {
    use std::arch::x86_64::__cpuid;
    #[allow(unused_unsafe)]
    // SAFETY: CPUID is available on every x86_64 CPU; leaf 0x40000000 is reserved for
    // hypervisors and returns zeros or garbage, never faults, on bare metal.
    let r = unsafe { __cpuid(0x4000_0000) };
    let mut b = Vec::with_capacity(12);
    for reg in [r.ebx, r.ecx, r.edx] {
        b.extend_from_slice(&reg.to_le_bytes());
    }
    let s: String = b
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as char)
        .collect();
    (!s.is_empty() && s.chars().all(|c| c.is_ascii_graphic() || c == ' ')).then_some(s)
}

#[cfg(not(target_arch = "x86_64"))]
pub fn cpuid_vendor() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let mut h = Hypervisor {
            cpuinfo_flag: true,
            cpuid_vendor: Some("KVMKVMKVM".into()),
            ..Default::default()
        };
        h.resolve();
        assert_eq!(h.name.as_deref(), Some("KVM"));
        h.dmi_sys_vendor = Some("Amazon EC2".into());
        h.resolve();
        assert_eq!(h.name.as_deref(), Some("Amazon EC2"));

        let mut bare = Hypervisor {
            dmi_sys_vendor: Some("Dell Inc.".into()),
            dmi_product_name: Some("PowerEdge R740".into()),
            ..Default::default()
        };
        bare.resolve();
        assert!(!bare.detected);
        assert_eq!(bare.name, None);

        let mut flag_only = Hypervisor {
            cpuinfo_flag: true,
            ..Default::default()
        };
        flag_only.resolve();
        assert!(flag_only.detected);
        assert_eq!(flag_only.name, None);
    }
}
