//! Machine facts on whole recorded procfs/sysfs trees (tests/fixtures/machine/*.tree, one
//! file per machine: `### /path` headers followed by the file's text), through the same
//! `collect_from` the live collector uses.

mod common;

use oscost::machine::{collect, collect_from, render_text, CpuBusy, EventSupport, Machine, Pmu};

fn load(name: &str) -> (tempfile::TempDir, Machine) {
    common::load_machine_tree(name)
}

fn has(w: &[String], needle: &str) -> bool {
    w.iter().any(|x| x.contains(needle))
}

fn no_pmu() -> Pmu {
    Pmu {
        probed: true,
        events: vec![
            EventSupport {
                name: "task-clock".into(),
                supported: true,
                counts_kernel: true,
                ..Default::default()
            },
            EventSupport {
                name: "cycles".into(),
                hardware: true,
                supported: false,
                reason: Some("not supported (ENOENT: no PMU in this VM)".into()),
                counts_kernel: false,
            },
        ],
    }
}

#[test]
fn recorded_vm() {
    let (_d, m) = load("vm-kvm-epyc-2cpu.tree");
    assert_eq!(m.hostname.as_deref(), Some("vm"));
    assert_eq!(m.cpu.model_name.as_deref(), Some("AMD EPYC"));
    assert_eq!(m.cpus_online, vec![0, 1]);
    assert_eq!(m.cpus_allowed, vec![0, 1]);
    assert_eq!((m.cores, m.sockets, m.numa_nodes), (2, 1, 1));
    assert!(m.smt_siblings_of(0).is_empty());
    assert_eq!(m.topology[1].numa_node, Some(0));
    assert_eq!(m.caches.len(), 7, "3 private caches x 2 CPUs + 1 shared L3");
    assert_eq!(m.caches_for_cpu(1).len(), 4);
    assert_eq!(
        m.data_cache_sizes(0),
        vec![
            ("L1d".to_string(), 48 * 1024),
            ("L2".to_string(), 1 << 20),
            ("L3".to_string(), 32 << 20)
        ]
    );
    assert_eq!(m.kernel.release.as_deref(), Some("6.18.44-fc-v669"));
    assert_eq!(
        m.kernel.boot_params["mitigations"],
        "auto,no_guest_host,no_guest_guest"
    );
    assert_eq!(m.kernel.thp.enabled.as_deref(), Some("madvise"));
    assert_eq!(m.kernel.clocksource.current.as_deref(), Some("tsc"));
    assert_eq!(m.kernel.perf_event_paranoid, Some(2));
    assert!(m.hypervisor.detected);
    assert!(m.frequency.per_cpu.is_empty());
    assert!(m
        .frequency
        .unavailable_reason
        .as_deref()
        .unwrap()
        .contains("VM"));
    assert!(m.privileges.root);
    assert_eq!(m.memory.total_bytes, Some(24684084 * 1024));
    assert!(!m.pmu.probed);
    assert_eq!(m.short_name(), "vm · AMD EPYC · 2 CPUs · Linux 6.18");
    assert_eq!(m.host_key(), "vm|AMD EPYC|6.18.44-fc-v669");

    let w = m.warnings();
    assert!(has(&w, "virtual machine"));
    assert!(has(&w, "spectre_v2 (Retpolines)"));
    for absent in [
        "only 1 CPU",
        "governor",
        "turbo",
        "always",
        "clocksource",
        "not root",
        "paranoid",
        "no hardware counters",
        "other work is running",
    ] {
        assert!(!has(&w, absent), "unexpected warning '{absent}': {w:#?}");
    }

    // The PMU probe found no hardware events: the warning says so, with the reason.
    let mut m2 = m.clone();
    m2.pmu = no_pmu();
    assert!(has(&m2.warnings(), "no hardware counters"));
    assert!(has(&m2.warnings(), "ENOENT: no PMU in this VM"));
}

#[test]
fn bare_metal_intel_two_sockets_ht() {
    let (_d, m) = load("intel-2s-ht.tree");
    assert_eq!(m.cpus_online.len(), 16);
    assert_eq!((m.cores, m.sockets, m.numa_nodes), (8, 2, 2));
    assert_eq!(m.smt_siblings_of(0), vec![8]);
    assert_eq!(m.smt_siblings_of(13), vec![5]);
    assert_eq!(m.topology[12].package_id, Some(1));
    assert_eq!(m.topology[12].numa_node, Some(1));
    let l3: Vec<_> = m.caches.iter().filter(|c| c.level == 3).collect();
    assert_eq!(l3.len(), 2, "one L3 per socket");
    assert_eq!(l3[1].shared_cpu_list, "4-7,12-15");
    // Private per-core caches are shared by the two hyperthreads: 8 instances each.
    assert_eq!(m.caches.iter().filter(|c| c.label() == "L1d").count(), 8);
    assert_eq!(m.caches_for_cpu(9)[0].shared_cpus, vec![1, 9]);
    assert_eq!(
        m.data_cache_sizes(5).last(),
        Some(&("L3".to_string(), 15360 * 1024))
    );
    assert_eq!(m.frequency.per_cpu.len(), 16);
    assert_eq!(m.frequency.governors(), vec!["powersave"]);
    assert_eq!(m.frequency.turbo, Some(true));
    assert!(!m.hypervisor.detected);
    assert_eq!(m.kernel.boot_params["intel_pstate"], "active");

    let w = m.warnings();
    assert!(has(&w, "governor powersave on CPU 0-15"), "{w:#?}");
    assert!(has(&w, "turbo/boost is on (intel_pstate/no_turbo)"));
    assert!(has(&w, "transparent huge pages = always"));
    assert!(has(&w, "not root"));
    assert!(has(&w, "perf_event_paranoid=2"));
    assert!(has(&w, "meltdown (PTI)"));
    assert!(has(&w, "mds (Clear CPU buffers)"));
    for absent in [
        "virtual machine",
        "only 1 CPU",
        "clocksource",
        "other work is running",
        "SMT sibling busy",
    ] {
        assert!(!has(&w, absent), "unexpected warning '{absent}': {w:#?}");
    }

    // A tuned box: performance governor, turbo off, THP madvise, root -> those warnings go.
    let mut tuned = m.clone();
    for f in &mut tuned.frequency.per_cpu {
        f.governor = Some("performance".into());
    }
    tuned.frequency.turbo = Some(false);
    tuned.kernel.thp.enabled = Some("madvise".into());
    tuned.privileges.root = true;
    tuned.privileges.euid = Some(0);
    let w = tuned.warnings();
    for absent in ["governor", "turbo", "always", "not root", "paranoid"] {
        assert!(!has(&w, absent), "unexpected warning '{absent}': {w:#?}");
    }

    // CPU 8 busy while we would measure on CPU 0: its hyperthread sibling.
    let mut busy = m.clone();
    busy.load.window_ms = Some(100);
    busy.load.per_cpu = (0..16)
        .map(|cpu| CpuBusy {
            cpu,
            busy: if cpu == 8 { 0.6 } else { 0.0 },
            steal: 0.0,
        })
        .collect();
    let w = busy.warnings();
    assert!(
        has(
            &w,
            "SMT sibling busy: CPU 8 (60% busy, SMT sibling of CPU 0)"
        ),
        "{w:#?}"
    );
    assert!(has(&w, "CPU 8 (60%) busy during a 100 ms sample"));
}

#[test]
fn one_cpu_cloud_vm() {
    let (_d, m) = load("gce-1cpu.tree");
    assert_eq!(m.cpus_online, vec![0]);
    assert_eq!(m.cpus_allowed, vec![0]);
    assert_eq!((m.cores, m.sockets, m.numa_nodes), (1, 1, 1));
    assert_eq!(m.hypervisor.name.as_deref(), Some("Google Compute Engine"));
    assert_eq!(m.kernel.boot_params["mitigations"], "off");
    assert!(!m.privileges.root);
    let w = m.warnings();
    assert!(has(&w, "virtual machine (Google Compute Engine)"));
    assert!(has(
        &w,
        "only 1 CPU allowed (CPU 0): cross-core probes will be skipped"
    ));
    assert!(has(&w, "clocksource is kvm-clock, not tsc"));
    assert!(has(&w, "perf_event_paranoid=4: perf events are blocked"));
    assert!(!has(&w, "mitigations active"), "mitigations=off: {w:#?}");
    assert!(!has(&w, "governor"));
    let text = render_text(&m);
    assert!(text.contains("Google Compute Engine"));
    let warn_at = text.find("Warnings (").unwrap();
    assert!(text[warn_at..].contains("only 1 CPU allowed"));
    assert!(
        !text[warn_at..].contains("\nPerf events"),
        "warnings come last"
    );
}

#[test]
fn empty_tree_degrades_with_notes() {
    let dir = tempfile::tempdir().unwrap();
    let m = collect_from(dir.path());
    assert_eq!(m.cpus_online, vec![0]);
    assert!(m.caches.is_empty());
    assert!(m.notes.iter().any(|n| n.contains("cpuinfo")));
    assert!(m.notes.iter().any(|n| n.contains("cache")));
    // Unknown facts do not invent warnings.
    let w = m.warnings();
    assert!(
        !has(&w, "virtual machine") && !has(&w, "not root"),
        "{w:#?}"
    );
    assert!(render_text(&m).contains("unknown"));
}

#[test]
fn json_round_trip_and_tolerance() {
    let (_d, m) = load("intel-2s-ht.tree");
    let s = serde_json::to_string(&m).unwrap();
    let back: Machine = serde_json::from_str(&s).unwrap();
    assert_eq!(back, m);
    // Older JSON (fields missing) and newer JSON (unknown fields) both load.
    let old: Machine =
        serde_json::from_str(r#"{"hostname":"x","cpu":{"model_name":"Y"}}"#).unwrap();
    assert_eq!(old.hostname.as_deref(), Some("x"));
    assert!(old.caches.is_empty());
    let newer: Machine =
        serde_json::from_str(r#"{"hostname":"x","gpu":{"name":"z"},"kernel":{"future":1}}"#)
            .unwrap();
    assert_eq!(newer.hostname.as_deref(), Some("x"));
    assert!(
        s.contains(r#""type":"data""#),
        "cache type serialized as data/instruction/unified"
    );
}

#[test]
fn live_collect_degrades_not_fails() {
    let m = collect();
    assert!(!m.cpus_online.is_empty());
    assert!(!m.cpus_allowed.is_empty());
    assert!(m.pmu.probed);
    assert_eq!(m.pmu.events.len(), oscost::machine::EVENT_NAMES.len());
    assert!(m.memory.page_size.is_some());
    assert_eq!(m.load.window_ms, Some(100));
    assert!(render_text(&m).contains("Warnings ("));
    let allowed = oscost::machine::allowed_cpus();
    assert!(allowed.iter().all(|c| m.cpus_online.contains(c)));
}
