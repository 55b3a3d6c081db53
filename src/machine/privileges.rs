//! Who we run as: root and the capabilities that unlock drop_caches, SCHED_FIFO and
//! kernel-side perf counting.

use serde::{Deserialize, Serialize};

use super::parse::status_field;

/// Capability bit numbers from linux/capability.h.
const CAP_SYS_ADMIN: u32 = 21;
const CAP_SYS_NICE: u32 = 23;
const CAP_PERFMON: u32 = 38;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Privileges {
    pub euid: Option<u32>,
    pub root: bool,
    pub cap_sys_admin: Option<bool>,
    pub cap_perfmon: Option<bool>,
    /// Needed for SCHED_FIFO without root.
    pub cap_sys_nice: Option<bool>,
}

impl Privileges {
    /// May open perf events that count kernel work regardless of perf_event_paranoid.
    pub fn perf_privileged(&self) -> bool {
        self.root || self.cap_perfmon == Some(true) || self.cap_sys_admin == Some(true)
    }
}

/// Reads euid and effective capabilities from /proc/self/status text.
pub fn privileges_from_status(status: &str) -> Privileges {
    let euid = status_field(status, "Uid")
        .and_then(|v| v.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok());
    let caps = status_field(status, "CapEff").and_then(|v| u64::from_str_radix(v, 16).ok());
    let has = |bit: u32| caps.map(|c| c & (1u64 << bit) != 0);
    Privileges {
        euid,
        root: euid == Some(0),
        cap_sys_admin: has(CAP_SYS_ADMIN),
        cap_perfmon: has(CAP_PERFMON),
        cap_sys_nice: has(CAP_SYS_NICE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_with_all_caps() {
        let p = privileges_from_status("Uid:\t0\t0\t0\t0\nCapEff:\t000001fffeffffff\n");
        assert!(p.root);
        assert_eq!(p.cap_perfmon, Some(true));
        assert_eq!(p.cap_sys_admin, Some(true));
        assert!(p.perf_privileged());
    }

    #[test]
    fn plain_user() {
        let p = privileges_from_status("Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n");
        assert!(!p.root);
        assert_eq!(p.euid, Some(1000));
        assert_eq!(p.cap_perfmon, Some(false));
        assert!(!p.perf_privileged());
    }

    #[test]
    fn setuid_uses_effective_uid() {
        let p = privileges_from_status("Uid:\t1000\t0\t0\t0\n");
        assert!(p.root);
        assert_eq!(p.cap_sys_admin, None);
    }
}
