//! Plain-words warnings about what makes this machine's numbers noisy or unrepresentative.
//! Each rule is a small function over [`Machine`], so each can be tested on a recorded
//! machine where it must fire and one where it must not.

use super::kernel::syscall_mitigations;
use super::load::BUSY_THRESHOLD;
use super::parse::format_cpu_list;
use super::Machine;

impl Machine {
    /// Everything worth telling the user before trusting the numbers, most important first.
    pub fn warnings(&self) -> Vec<String> {
        let rules: &[fn(&Machine) -> Option<String>] = &[
            vm,
            one_cpu,
            busy_sibling,
            busy_others,
            steal,
            governor,
            turbo,
            no_pmu,
            paranoid,
            thp_always,
            clocksource,
            mitigations,
            not_root,
        ];
        rules.iter().filter_map(|r| r(self)).collect()
    }

    /// x86 processors, where the TSC should be the clocksource.
    fn is_x86(&self) -> bool {
        matches!(
            self.cpu.vendor.as_deref(),
            Some("GenuineIntel" | "AuthenticAMD" | "HygonGenuine" | "CentaurHauls")
        )
    }
}

fn vm(m: &Machine) -> Option<String> {
    if !m.hypervisor.detected {
        return None;
    }
    let who = m
        .hypervisor
        .name
        .as_deref()
        .map_or("a virtual machine".to_string(), |n| {
            format!("a virtual machine ({n})")
        });
    Some(format!(
        "running in {who}: cross-CPU wake-ups, IPIs and timers are slower than on bare metal, \
         vCPUs may be descheduled by the host, and hardware counters are usually unavailable; \
         numbers describe this VM, not the hardware"
    ))
}

fn one_cpu(m: &Machine) -> Option<String> {
    (m.cpus_allowed.len() == 1).then(|| {
        format!(
            "only 1 CPU allowed (CPU {}): cross-core probes will be skipped and every partner \
             process shares that CPU",
            m.cpus_allowed[0]
        )
    })
}

fn busy_cpus(m: &Machine) -> Vec<(usize, f64)> {
    m.load
        .per_cpu
        .iter()
        .filter(|b| b.busy > BUSY_THRESHOLD)
        .map(|b| (b.cpu, b.busy))
        .collect()
}

fn busy_sibling(m: &Machine) -> Option<String> {
    let busy = busy_cpus(m);
    let pairs: Vec<String> = busy
        .iter()
        .filter_map(|&(cpu, frac)| {
            let of: Vec<usize> = m
                .smt_siblings_of(cpu)
                .into_iter()
                .filter(|s| m.cpus_allowed.contains(s) && !busy.iter().any(|b| b.0 == *s))
                .collect();
            (!of.is_empty()).then(|| {
                format!(
                    "CPU {cpu} ({:.0}% busy, SMT sibling of CPU {})",
                    frac * 100.0,
                    format_cpu_list(&of)
                )
            })
        })
        .collect();
    (!pairs.is_empty()).then(|| {
        format!(
            "SMT sibling busy: {} — it shares the core's execution units and L1/L2 caches with \
             anything measured on its sibling",
            pairs.join(", ")
        )
    })
}

fn busy_others(m: &Machine) -> Option<String> {
    let busy = busy_cpus(m);
    if busy.is_empty() {
        return None;
    }
    let list: Vec<String> = busy
        .iter()
        .map(|(c, f)| format!("{c} ({:.0}%)", f * 100.0))
        .collect();
    let load = m
        .load
        .loadavg
        .map(|l| format!("; load average {:.2}", l[0]))
        .unwrap_or_default();
    Some(format!(
        "other work is running: CPU {} busy during a {} ms sample{load}; results will be noisier",
        list.join(", "),
        m.load.window_ms.unwrap_or(0)
    ))
}

fn steal(m: &Machine) -> Option<String> {
    let s: Vec<String> = m
        .load
        .per_cpu
        .iter()
        .filter(|b| b.steal > 0.05)
        .map(|b| format!("{} ({:.0}%)", b.cpu, b.steal * 100.0))
        .collect();
    (!s.is_empty()).then(|| {
        format!(
            "hypervisor steal time on CPU {}: the host is running other guests on our vCPUs",
            s.join(", ")
        )
    })
}

fn governor(m: &Machine) -> Option<String> {
    let slow: Vec<usize> = m
        .frequency
        .per_cpu
        .iter()
        .filter(|f| f.governor.as_deref().is_some_and(|g| g != "performance"))
        .map(|f| f.cpu)
        .collect();
    if slow.is_empty() {
        return None;
    }
    let govs: Vec<String> = m
        .frequency
        .governors()
        .into_iter()
        .filter(|g| g != "performance")
        .collect();
    Some(format!(
        "frequency scaling active: governor {} on CPU {} (not 'performance'); clock speed \
         changes with load, so short probes run at a lower frequency than long ones",
        govs.join("/"),
        format_cpu_list(&slow)
    ))
}

fn turbo(m: &Machine) -> Option<String> {
    (m.frequency.turbo == Some(true)).then(|| {
        format!(
            "turbo/boost is on ({}): clock speed depends on temperature and on how many cores \
             are busy, so results vary between runs",
            m.frequency.turbo_source.as_deref().unwrap_or("sysfs")
        )
    })
}

fn no_pmu(m: &Machine) -> Option<String> {
    if !m.pmu.probed || m.pmu.has_hardware() {
        return None;
    }
    Some(format!(
        "no hardware counters: cycles, instructions, cache and TLB misses will be missing from \
         the evidence — {}",
        m.pmu.hardware_reason().unwrap_or("reason unknown")
    ))
}

fn paranoid(m: &Machine) -> Option<String> {
    let p = m.kernel.perf_event_paranoid?;
    if m.privileges.perf_privileged() {
        return None;
    }
    match p {
        p if p >= 3 => Some(format!(
            "perf_event_paranoid={p}: perf events are blocked for unprivileged users, so the \
             evidence has no counters (run as root or `sysctl kernel.perf_event_paranoid=1`)"
        )),
        2 => Some(
            "perf_event_paranoid=2: counters see user space only; kernel work inside system \
             calls and faults is not counted (`sysctl kernel.perf_event_paranoid=1` to include it)"
                .into(),
        ),
        _ => None,
    }
}

fn thp_always(m: &Machine) -> Option<String> {
    (m.kernel.thp.enabled.as_deref() == Some("always")).then(|| {
        "transparent huge pages = always: anonymous memory may be faulted 2 MiB at a time, so \
         page-fault counts and costs differ from 4 KiB pages"
            .into()
    })
}

fn clocksource(m: &Machine) -> Option<String> {
    let cur = m.kernel.clocksource.current.as_deref()?;
    (m.is_x86() && cur != "tsc").then(|| {
        format!(
            "clocksource is {cur}, not tsc: clock reads are slower (some enter the kernel), \
             which raises timing overhead and vdso.clock_gettime"
        )
    })
}

fn mitigations(m: &Machine) -> Option<String> {
    let act = syscall_mitigations(&m.kernel.vulnerabilities);
    if act.is_empty() {
        return None;
    }
    let list: Vec<String> = act
        .iter()
        .map(|(name, text)| {
            let how = match text.strip_prefix("Mitigation: ") {
                Some(h) => h,
                None if text.contains("Safe RET") => "Safe RET",
                None => text,
            };
            let how = how.split(';').next().unwrap_or(how).trim();
            format!("{name} ({how})")
        })
        .collect();
    Some(format!(
        "kernel-entry mitigations active, so system calls and context switches cost more than \
         on an unmitigated kernel: {}",
        list.join(", ")
    ))
}

fn not_root(m: &Machine) -> Option<String> {
    if m.privileges.root || m.privileges.euid.is_none() {
        return None;
    }
    let fifo = if m.privileges.cap_sys_nice == Some(true) {
        ""
    } else {
        " and SCHED_FIFO variants"
    };
    Some(format!(
        "not root: drop_caches is unavailable (major faults use fadvise eviction instead){fifo} \
         are skipped"
    ))
}
