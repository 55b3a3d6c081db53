//! The one view model of a machine's facts ([`Facts`]): what the views show of a machine,
//! each fact derived once here from [`Machine`] (whether a hypervisor runs it, the frequency
//! governors, the mitigations, the data caches of the first CPU, the PMU...). The terminal
//! view (`oscost machine`, machine::render), the HTML report and compare (the key facts
//! below, side by side or as differences listed before any number) and the fleet (its facts
//! by name, compare::fleet) all read it, so a fact reads the same wherever it is shown.

use crate::machine::{syscall_mitigations, Machine};
use crate::units::size::{fmt_bytes, ByteStyle};

/// What runs the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    BareMetal,
    /// A hypervisor, by its name when it says it.
    Virtual(Option<String>),
}

/// The facts of a machine the views show, derived once. `None`: not known.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    pub hostname: Option<String>,
    pub host: Host,
    pub cpu_model: Option<String>,
    pub microcode: Option<String>,
    pub cpus_online: usize,
    pub cpus_allowed: usize,
    pub cores: usize,
    pub sockets: usize,
    /// (level label, bytes) of the data caches of the first online CPU.
    pub caches: Vec<(String, u64)>,
    pub kernel: Option<String>,
    /// The `mitigations=` boot parameter, when given.
    pub boot_mitigations: Option<String>,
    /// The vulnerabilities mitigated on kernel entry (None: the kernel lists none at all).
    pub entry_mitigations: Option<Vec<String>>,
    pub thp: Option<String>,
    pub clocksource: Option<String>,
    /// The frequency governors, each once, sorted (empty: no cpufreq).
    pub governors: Vec<String>,
    /// Why there is no cpufreq, when there is none.
    pub no_cpufreq: Option<String>,
    pub max_khz: Option<u64>,
    /// (hardware events that open, hardware events probed), when the PMU was probed.
    pub pmu: Option<(usize, usize)>,
    pub perf_event_paranoid: Option<i32>,
    pub memory_bytes: Option<u64>,
    pub root: bool,
}

impl Facts {
    pub fn of(m: &Machine) -> Facts {
        let pmu = m.pmu.probed.then(|| {
            let hw: Vec<_> = m.pmu.events.iter().filter(|e| e.hardware).collect();
            (hw.iter().filter(|e| e.supported).count(), hw.len())
        });
        let entry_mitigations = (!m.kernel.vulnerabilities.is_empty()).then(|| {
            syscall_mitigations(&m.kernel.vulnerabilities)
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        });
        Facts {
            hostname: m.hostname.clone(),
            host: if m.hypervisor.detected {
                Host::Virtual(m.hypervisor.name.clone())
            } else {
                Host::BareMetal
            },
            cpu_model: m.cpu.model_name.clone(),
            microcode: m.cpu.microcode.clone(),
            cpus_online: m.cpus_online.len(),
            cpus_allowed: m.cpus_allowed.len(),
            cores: m.cores,
            sockets: m.sockets,
            caches: m.data_cache_sizes(m.cpus_online.first().copied().unwrap_or(0)),
            kernel: m.kernel.release.clone(),
            boot_mitigations: m.kernel.boot_params.get("mitigations").cloned(),
            entry_mitigations,
            thp: m.kernel.thp.enabled.clone(),
            clocksource: m.kernel.clocksource.current.clone(),
            governors: m.frequency.governors(),
            no_cpufreq: m.frequency.unavailable_reason.clone(),
            max_khz: m.frequency.per_cpu.iter().filter_map(|f| f.max_khz).max(),
            pmu,
            perf_event_paranoid: m.kernel.perf_event_paranoid,
            memory_bytes: m.memory.total_bytes,
            root: m.privileges.root,
        }
    }

    /// The hypervisor's name, `yes` when it gives none, or `none_text` on bare metal.
    pub fn hypervisor_or(&self, none_text: &str) -> String {
        match &self.host {
            Host::Virtual(name) => name.clone().unwrap_or_else(|| "yes".into()),
            Host::BareMetal => none_text.into(),
        }
    }

    /// The machine's memory (`16 GiB`), or "unknown".
    pub fn memory(&self) -> String {
        self.memory_bytes
            .map(|b| fmt_bytes(b as f64, ByteStyle::Trimmed))
            .unwrap_or_else(unknown)
    }

    /// perf_event_paranoid, or "unknown".
    pub fn paranoid(&self) -> String {
        self.perf_event_paranoid
            .map(|p| p.to_string())
            .unwrap_or_else(unknown)
    }
}

fn unknown() -> String {
    "unknown".to_string()
}

/// A fact, or "unknown".
pub fn or_unknown(o: &Option<String>) -> String {
    o.clone().unwrap_or_else(unknown)
}

/// Key facts in display order (the HTML report, compare). Values are plain text; missing
/// facts read "unknown".
pub fn key_facts(m: &Machine) -> Vec<(&'static str, String)> {
    let f = Facts::of(m);
    let opt = or_unknown;
    let caches = f
        .caches
        .iter()
        .map(|(l, s)| format!("{l} {}", fmt_bytes(*s as f64, ByteStyle::Trimmed)))
        .collect::<Vec<_>>()
        .join(", ");
    let freq = if f.governors.is_empty() {
        opt(&f.no_cpufreq)
    } else {
        format!(
            "governor {}{}",
            f.governors.join("/"),
            f.max_khz
                .map(|k| format!(", max {:.2} GHz", k as f64 / 1e6))
                .unwrap_or_default()
        )
    };
    let pmu = match f.pmu {
        None => "not probed".to_string(),
        Some((ok, all)) => format!("{ok} of {all} hardware events open"),
    };
    vec![
        ("host", opt(&f.hostname)),
        ("CPU", opt(&f.cpu_model)),
        (
            "CPUs",
            format!(
                "{} online, {} allowed; {} core(s), {} socket(s)",
                f.cpus_online, f.cpus_allowed, f.cores, f.sockets
            ),
        ),
        ("caches", if caches.is_empty() { unknown() } else { caches }),
        ("kernel", opt(&f.kernel)),
        (
            "mitigations (boot)",
            f.boot_mitigations
                .clone()
                .unwrap_or_else(|| "default".into()),
        ),
        ("THP", opt(&f.thp)),
        ("clocksource", opt(&f.clocksource)),
        ("hypervisor", f.hypervisor_or("none detected")),
        ("frequency", freq),
        ("PMU", pmu),
        ("perf_event_paranoid", f.paranoid()),
        ("memory", f.memory()),
        ("root", if f.root { "yes" } else { "no" }.into()),
    ]
}

/// Facts that differ between two machines, as (name, a, b); compare lists these first.
pub fn differences(a: &Machine, b: &Machine) -> Vec<(&'static str, String, String)> {
    key_facts(a)
        .into_iter()
        .zip(key_facts(b))
        .filter(|((_, x), (_, y))| x != y)
        .map(|((k, x), (_, y))| (k, x, y))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        let run = crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
            .unwrap();
        run.machine
    }

    #[test]
    fn facts_name_cpu_kernel_and_caches() {
        let m = machine();
        let f = key_facts(&m);
        let get = |k: &str| f.iter().find(|(n, _)| *n == k).unwrap().1.clone();
        assert_eq!(get("CPU"), m.cpu.model_name.clone().unwrap());
        assert_eq!(get("kernel"), m.kernel.release.clone().unwrap());
        assert!(get("caches").contains("L1d"));
    }

    #[test]
    fn every_view_shows_a_fact_from_the_one_model() {
        let mut m = machine();
        m.hypervisor.detected = true;
        m.hypervisor.name = Some("Hv<x>".into());
        m.cpu.microcode = Some("0xabc".into());
        assert_eq!(Facts::of(&m).host, Host::Virtual(Some("Hv<x>".into())));
        let key = key_facts(&m);
        assert!(
            key.contains(&("hypervisor", "Hv<x>".to_string())),
            "{key:?}"
        );
        let fleet = crate::compare::fleet::machine_facts(&m);
        assert_eq!(fleet["hypervisor"], "Hv<x>");
        assert_eq!(fleet["microcode"], "0xabc");
        let text = crate::machine::render_text(&m);
        assert!(text.contains("virtual machine (Hv<x>)"), "{text}");
        assert!(text.contains("0xabc"), "{text}");
        m.hypervisor.detected = false;
        assert_eq!(Facts::of(&m).host, Host::BareMetal);
        assert_eq!(
            crate::compare::fleet::machine_facts(&m)["hypervisor"],
            "none"
        );
        assert!(crate::machine::render_text(&m).contains("bare metal"));
    }

    #[test]
    fn differences_list_only_what_changed() {
        let a = machine();
        let mut b = a.clone();
        assert!(differences(&a, &b).is_empty());
        b.kernel.release = Some("7.0.0".into());
        let d = differences(&a, &b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].0, "kernel");
        assert_eq!(d[0].2, "7.0.0");
    }
}
