//! The machine facts a reader needs first, as (name, value) rows: shared by the HTML report
//! (side by side for several runs) and by compare (differences listed before any number).

use crate::machine::Machine;
use crate::units::size::{fmt_bytes, ByteStyle};

/// Key facts in display order. Values are plain text; missing facts read "unknown".
pub fn key_facts(m: &Machine) -> Vec<(&'static str, String)> {
    let unknown = || "unknown".to_string();
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(unknown);
    let caches = m
        .data_cache_sizes(m.cpus_online.first().copied().unwrap_or(0))
        .into_iter()
        .map(|(l, s)| format!("{l} {}", fmt_bytes(s as f64, ByteStyle::Trimmed)))
        .collect::<Vec<_>>()
        .join(", ");
    let governors: Vec<String> = {
        let mut g: Vec<String> = m
            .frequency
            .per_cpu
            .iter()
            .filter_map(|f| f.governor.clone())
            .collect();
        g.dedup();
        g
    };
    let freq = if governors.is_empty() {
        m.frequency
            .unavailable_reason
            .clone()
            .unwrap_or_else(unknown)
    } else {
        let max = m.frequency.per_cpu.iter().filter_map(|f| f.max_khz).max();
        format!(
            "governor {}{}",
            governors.join("/"),
            max.map(|k| format!(", max {:.2} GHz", k as f64 / 1e6))
                .unwrap_or_default()
        )
    };
    let pmu = if !m.pmu.probed {
        "not probed".to_string()
    } else {
        let hw: Vec<_> = m.pmu.events.iter().filter(|e| e.hardware).collect();
        let ok = hw.iter().filter(|e| e.supported).count();
        format!("{ok} of {} hardware events open", hw.len())
    };
    let mitigations = m
        .kernel
        .boot_params
        .get("mitigations")
        .cloned()
        .unwrap_or_else(|| "default".into());
    vec![
        ("host", opt(&m.hostname)),
        ("CPU", opt(&m.cpu.model_name)),
        (
            "CPUs",
            format!(
                "{} online, {} allowed; {} core(s), {} socket(s)",
                m.cpus_online.len(),
                m.cpus_allowed.len(),
                m.cores,
                m.sockets
            ),
        ),
        ("caches", if caches.is_empty() { unknown() } else { caches }),
        ("kernel", opt(&m.kernel.release)),
        ("mitigations (boot)", mitigations),
        ("THP", opt(&m.kernel.thp.enabled)),
        ("clocksource", opt(&m.kernel.clocksource.current)),
        (
            "hypervisor",
            if m.hypervisor.detected {
                m.hypervisor.name.clone().unwrap_or_else(|| "yes".into())
            } else {
                "none detected".into()
            },
        ),
        ("frequency", freq),
        ("PMU", pmu),
        (
            "perf_event_paranoid",
            m.kernel
                .perf_event_paranoid
                .map(|p| p.to_string())
                .unwrap_or_else(unknown),
        ),
        (
            "memory",
            m.memory
                .total_bytes
                .map(|b| fmt_bytes(b as f64, ByteStyle::Trimmed))
                .unwrap_or_else(unknown),
        ),
        (
            "root",
            if m.privileges.root {
                "yes".into()
            } else {
                "no".into()
            },
        ),
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
