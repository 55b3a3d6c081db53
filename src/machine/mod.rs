//! Facts about the host (DESIGN.md principle 5): what the machine is, how it is configured,
//! and what will make numbers noisy or unrepresentative. Collected once per run and embedded
//! in the run's JSON, so every result carries the environment it was measured in.
//!
//! Everything is read from procfs/sysfs under an injectable root ([`collect_from`]) so whole
//! recorded trees are tested; [`collect`] adds what only the live process can know (its
//! affinity, the PMU, the CPUID hypervisor leaf, a short busy sample).

pub mod affinity;
mod caches;
pub mod clock;
mod cpu;
pub mod facts;
pub mod fits;
mod freq;
mod hypervisor;
mod kernel;
mod load;
mod memory;
pub mod parse;
pub mod pmu;
mod privileges;
mod render;
mod source;
mod warnings;

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use affinity::allowed_cpus;
pub use caches::{CacheInfo, CacheType};
pub use cpu::{CpuModel, CpuTopo};
pub use freq::{CpuFreq, Frequency};
pub use hypervisor::Hypervisor;
pub use kernel::{syscall_mitigations, Clocksource, Kernel, Thp, BOOT_PARAMS_THAT_MATTER};
pub use load::{CpuBusy, Load, BUSY_THRESHOLD};
pub use memory::{live_page_size, Memory};
pub use pmu::{builder_for, errno_reason, EventSupport, Pmu, EVENT_NAMES};
pub use privileges::Privileges;
pub use render::{render_text, render_text_within};

use parse::{parse_cpu_list, parse_cpuinfo, parse_loadavg, status_field};
use source::{numbered, Source};

/// Everything oscost knows about the host. Every field tolerates absence in JSON
/// (`#[serde(default)]`), so runs stored by older or newer versions still load.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Machine {
    pub hostname: Option<String>,
    pub cpu: CpuModel,
    /// Logical CPUs the kernel has online.
    pub cpus_online: Vec<usize>,
    /// CPUs this process may run on (sched_getaffinity); probes may only pin to these.
    pub cpus_allowed: Vec<usize>,
    /// One entry per online CPU.
    pub topology: Vec<CpuTopo>,
    /// Distinct physical cores.
    pub cores: usize,
    pub sockets: usize,
    pub numa_nodes: usize,
    /// Cache instances (each physical cache once, with the CPUs sharing it).
    pub caches: Vec<CacheInfo>,
    pub kernel: Kernel,
    pub frequency: Frequency,
    pub hypervisor: Hypervisor,
    pub pmu: Pmu,
    pub memory: Memory,
    pub privileges: Privileges,
    pub load: Load,
    /// The core clock as a chain of dependent adds measured it (absent in runs recorded
    /// before it was taken, and then left out of their exports too).
    #[serde(skip_serializing_if = "clock::CoreClock::is_absent")]
    pub core_clock: clock::CoreClock,
    /// What could not be read, and what was assumed instead.
    pub notes: Vec<String>,
}

/// Collects the facts of the running host. Never fails and never panics: what cannot be
/// read becomes `None`/empty plus a note. Takes about 100 ms (the busy sample).
pub fn collect() -> Machine {
    let mut m = collect_without_pmu();
    add_pmu(&mut m);
    m
}

/// The host's facts without the PMU probe (`pmu.probed` false until [`add_pmu`]). Why: the
/// probe opens a counter of every event on this process, which keeps the kernel's perf
/// scheduling hooks on for a second after (evidence::perf::HOOKS_LINGER_NS); a run probes
/// after its figures' samples, not before them.
pub fn collect_without_pmu() -> Machine {
    let mut m = for_planning();
    add_busy_sample(&mut m);
    m.core_clock = clock::estimate();
    m
}

/// The facts a plan needs (CPUs, topology, caches): neither the PMU probe nor the 100 ms busy
/// sample, which describe the run and are taken by cli::execute. Why: planning with
/// [`collect`] would wait 100 ms for a load figure it never uses, and open counters.
pub fn for_planning() -> Machine {
    std::panic::catch_unwind(collect_live).unwrap_or_else(|_| Machine {
        notes: vec!["machine facts could not be collected (internal error)".into()],
        ..Default::default()
    })
}

/// The per-CPU busy share over a 100 ms window, into `m.load`.
fn add_busy_sample(m: &mut Machine) {
    let src = Source::new(Path::new("/"));
    let window = Duration::from_millis(100);
    match load::sample_busy(&src, window) {
        Some(b) => {
            m.load.per_cpu = b;
            m.load.window_ms = Some(window.as_millis() as u64);
        }
        None => m
            .notes
            .push("/proc/stat unreadable: per-CPU busy sample skipped".into()),
    }
}

/// Probe which perf events this process may open, into `m.pmu`.
pub fn add_pmu(m: &mut Machine) {
    let (paranoid, in_vm) = (m.kernel.perf_event_paranoid, m.hypervisor.detected);
    match std::panic::catch_unwind(|| pmu::probe_events(paranoid, in_vm)) {
        Ok(p) => m.pmu = p,
        Err(_) => m
            .notes
            .push("perf events could not be probed (internal error)".into()),
    }
    clock::check_with_pmu(&mut m.core_clock);
}

fn collect_live() -> Machine {
    let mut m = collect_from(Path::new("/"));
    let allowed = allowed_cpus();
    if allowed.is_empty() {
        m.notes
            .push("sched_getaffinity failed: allowed CPUs taken from /proc/self/status".into());
    } else {
        m.cpus_allowed = allowed;
    }
    m.memory.page_size = memory::live_page_size();
    if m.hypervisor.cpuinfo_flag {
        m.hypervisor.cpuid_vendor = hypervisor::cpuid_vendor();
        m.hypervisor.resolve();
    }
    m
}

/// Collects everything readable from files under `root` (`/` for the host, a recorded tree in
/// tests). Live-only facts are left unprobed: the PMU (`pmu.probed == false`), the page
/// size, the busy sample; the allowed CPUs come from `/proc/self/status`.
pub fn collect_from(root: &Path) -> Machine {
    let src = Source::new(root);
    let mut notes = Vec::new();

    let cpuinfo_text = src.read("/proc/cpuinfo").unwrap_or_default();
    if cpuinfo_text.is_empty() {
        notes.push("/proc/cpuinfo unreadable: CPU model unknown".into());
    }
    let cpuinfo = parse_cpuinfo(&cpuinfo_text);
    let cpu = cpu::parse_model(&cpuinfo_text);

    let mut cpus_online = src
        .read("/sys/devices/system/cpu/online")
        .map(|s| parse_cpu_list(&s))
        .unwrap_or_default();
    if cpus_online.is_empty() {
        cpus_online = cpuinfo
            .iter()
            .filter_map(|b| b.get("processor")?.parse().ok())
            .collect();
        notes.push("/sys/devices/system/cpu/online unreadable: CPUs taken from cpuinfo".into());
    }
    if cpus_online.is_empty() {
        cpus_online = vec![0];
        notes.push("no CPU list found: assuming one CPU (0)".into());
    }

    let status = src.read("/proc/self/status").unwrap_or_default();
    let mut cpus_allowed = status_field(&status, "Cpus_allowed_list")
        .map(parse_cpu_list)
        .unwrap_or_default();
    if cpus_allowed.is_empty() {
        cpus_allowed = cpus_online.clone();
    }

    let topology = cpu::read_topology(&src, &cpus_online, &cpuinfo);
    let (cores, sockets) = cpu::count_cores_sockets(&topology);
    let numa_nodes = {
        let online = src
            .read("/sys/devices/system/node/online")
            .map(|s| parse_cpu_list(&s))
            .unwrap_or_default();
        if online.is_empty() {
            numbered(&src.list("/sys/devices/system/node"), "node")
                .len()
                .max(1)
        } else {
            online.len()
        }
    };
    let caches = caches::read_caches(&src, &cpus_online);
    if caches.is_empty() {
        notes.push("no cache information in sysfs: cache sizes unknown".into());
    }
    let kernel = kernel::read_kernel(&src, &mut notes);
    let hypervisor = hypervisor::read_hypervisor(&src, cpu.hypervisor_flag);
    let frequency = freq::read_frequency(&src, &cpus_online, hypervisor.detected);
    if let Some(r) = &frequency.unavailable_reason {
        notes.push(r.clone());
    }
    let memory = memory::read_memory(&src, &mut notes);
    let privileges = privileges::privileges_from_status(&status);
    if status.is_empty() {
        notes.push("/proc/self/status unreadable: privileges unknown".into());
    }
    let load = Load {
        loadavg: src.read("/proc/loadavg").and_then(|s| parse_loadavg(&s)),
        ..Default::default()
    };

    Machine {
        hostname: src.read_trim("/proc/sys/kernel/hostname"),
        cpu,
        cpus_online,
        cpus_allowed,
        topology,
        cores,
        sockets,
        numa_nodes,
        caches,
        kernel,
        frequency,
        hypervisor,
        pmu: Pmu::default(),
        memory,
        privileges,
        load,
        core_clock: clock::CoreClock::default(),
        notes,
    }
}

impl Machine {
    /// The caches CPU `cpu` can use, from L1 outwards (data before instruction).
    pub fn caches_for_cpu(&self, cpu: usize) -> Vec<&CacheInfo> {
        let mut v: Vec<&CacheInfo> = self
            .caches
            .iter()
            .filter(|c| c.shared_cpus.contains(&cpu))
            .collect();
        v.sort_by_key(|c| (c.level, c.kind));
        v
    }

    /// The data-holding caches of `cpu` as (`"L1d"`, `"L2"`, `"L3"` ..., size in bytes), the
    /// sizes a working-set sweep should step across. Instruction caches and caches of
    /// unknown size are left out.
    pub fn data_cache_sizes(&self, cpu: usize) -> Vec<(String, u64)> {
        self.caches_for_cpu(cpu)
            .into_iter()
            .filter(|c| c.kind != CacheType::Instruction)
            .filter_map(|c| Some((c.label(), c.size_bytes?)))
            .collect()
    }

    /// A stable identifier grouping runs taken on the same machine and kernel:
    /// hostname, CPU model and kernel release.
    pub fn host_key(&self) -> String {
        format!(
            "{}|{}|{}",
            self.hostname.as_deref().unwrap_or("unknown-host"),
            self.cpu.model_name.as_deref().unwrap_or("unknown-cpu"),
            self.kernel.release.as_deref().unwrap_or("unknown-kernel")
        )
    }

    /// A short label for plot titles, e.g. `vm · AMD EPYC · 2 CPUs · Linux 6.18`.
    pub fn short_name(&self) -> String {
        let mut parts = Vec::new();
        parts.push(
            self.hostname
                .clone()
                .unwrap_or_else(|| "unknown host".into()),
        );
        if let Some(m) = &self.cpu.model_name {
            parts.push(m.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        let n = self.cpus_online.len();
        parts.push(format!("{n} CPU{}", if n == 1 { "" } else { "s" }));
        if let Some(r) = &self.kernel.release {
            let short: Vec<&str> = r
                .split(|c: char| !c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .take(2)
                .collect();
            parts.push(format!("Linux {}", short.join(".")));
        }
        if let Some(h) = &self.hypervisor.name {
            parts.push(format!("VM: {h}"));
        }
        parts.join(" · ")
    }

    /// The SMT siblings of `cpu`, itself excluded.
    pub fn smt_siblings_of(&self, cpu: usize) -> Vec<usize> {
        self.topology
            .iter()
            .find(|t| t.cpu == cpu)
            .map(|t| {
                t.smt_siblings
                    .iter()
                    .copied()
                    .filter(|&c| c != cpu)
                    .collect()
            })
            .unwrap_or_default()
    }
}
