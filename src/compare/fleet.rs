//! The fleet report: the same probes on many hosts side by side, each host's median as a
//! ratio to the fleet's median, the odd hosts named, and the machine facts that set them
//! apart. Pure analysis here (no database, no output); report::fleet draws it.
//!
//! The outlier rule asks two questions, and a host is odd only when both say yes:
//! 1. is the fleet median outside the host's own 95% interval (its difference is not noise of
//!    its own measurement)?
//! 2. is the host beyond the fleet's robust spread: modified z-score |0.6745·(x − M)/MAD| >
//!    3.5 (Iglewicz & Hoaglin), with M the fleet median and MAD the median absolute deviation
//!    of the hosts' medians? When more than half the hosts agree exactly (MAD = 0), the mean
//!    absolute deviation stands in (z = (x − M)/(1.253314·MeanAD)); with no spread at all, or
//!    fewer than 3 hosts, nothing is called an outlier.
//!
//! The second question alone would flag a precise host in a tight fleet for a difference its
//! own run cannot resolve; the first alone would flag every host of a noisy fleet.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::engine::stats::{median, median_ci_indices};
use crate::machine::facts::{or_unknown, Facts};
use crate::machine::Machine;
use crate::units::Unit;

/// Modified z-score beyond which a host is outside the fleet's spread.
pub const Z_LIMIT: f64 = 3.5;
/// Fewest hosts for which a spread means anything.
pub const MIN_HOSTS: usize = 3;
/// A fact value held by at most this share of the other hosts sets an odd host apart.
pub const APART_SHARE: f64 = 0.1;

/// The machine facts a fleet is compared on (the names `--group-by` accepts).
pub const FACTS: &[&str] = &[
    "cpu",
    "cpus",
    "kernel",
    "mitigations",
    "thp",
    "governor",
    "hypervisor",
    "clocksource",
    "microcode",
    "memory",
    "perf_event_paranoid",
    "hostname",
];

/// The facts of `m` by the names in [`FACTS`], from the machine's one view model
/// ([`Facts`]); missing facts read "unknown".
pub fn machine_facts(m: &Machine) -> BTreeMap<String, String> {
    let f = Facts::of(m);
    let opt = or_unknown;
    let mitigations = match (&f.boot_mitigations, &f.entry_mitigations) {
        (Some(v), _) => format!("mitigations={v} (boot)"),
        (None, None) => "unknown".into(),
        (None, Some(names)) if names.is_empty() => "none on kernel entry".into(),
        (None, Some(names)) => names.join(","),
    };
    let pairs = [
        ("cpu", opt(&f.cpu_model)),
        ("cpus", f.cpus_online.to_string()),
        ("kernel", opt(&f.kernel)),
        ("mitigations", mitigations),
        ("thp", opt(&f.thp)),
        (
            "governor",
            if f.governors.is_empty() {
                "none (no cpufreq)".into()
            } else {
                f.governors.join("/")
            },
        ),
        ("hypervisor", f.hypervisor_or("none")),
        ("clocksource", opt(&f.clocksource)),
        ("microcode", opt(&f.microcode)),
        ("memory", f.memory()),
        ("perf_event_paranoid", f.paranoid()),
        ("hostname", opt(&f.hostname)),
    ];
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// `host=a rack=b4`.
pub fn labels_text(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One valid figure of a stored run.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub probe: String,
    /// `mode=process cpus=0` (Measurement::params_label).
    pub params: String,
    pub unit: Unit,
    pub median: f64,
    pub ci: [f64; 2],
}

/// A stored run as the fleet report needs it: its labels (with `host`), the fleet facts of its
/// machine, and its valid figures (invalid, below-resolution or unstable ones never enter a
/// fleet median).
#[derive(Debug, Clone)]
pub struct FleetRun {
    pub uid: String,
    pub started_at: String,
    pub labels: BTreeMap<String, String>,
    pub facts: BTreeMap<String, String>,
    pub figures: Vec<Figure>,
    /// Figures of this run left out: invalid, below resolution, unstable, or without a value.
    pub left_out: usize,
}

impl FleetRun {
    pub fn host(&self) -> &str {
        self.labels
            .get("host")
            .map(String::as_str)
            .unwrap_or("unknown-host")
    }
}

/// What `--group-by NAME` groups on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum GroupBy {
    Fact(String),
    Label(String),
}

impl GroupBy {
    /// A machine fact by name, else a label key some run carries; else an error naming both.
    pub fn resolve(name: &str, runs: &[FleetRun]) -> Result<GroupBy, String> {
        if FACTS.contains(&name) {
            return Ok(GroupBy::Fact(name.into()));
        }
        if runs.iter().any(|r| r.labels.contains_key(name)) {
            return Ok(GroupBy::Label(name.into()));
        }
        Err(format!(
            "--group-by {name}: not a machine fact ({}) nor a label of the selected runs",
            FACTS.join(", ")
        ))
    }

    pub fn name(&self) -> &str {
        match self {
            GroupBy::Fact(n) | GroupBy::Label(n) => n,
        }
    }

    fn value(&self, host: &Host) -> String {
        let v = match self {
            GroupBy::Fact(n) => host.facts.get(n),
            GroupBy::Label(n) => host.labels.get(n),
        };
        v.cloned().unwrap_or_else(|| "(none)".into())
    }
}

/// The fleet's centre and robust spread of one probe's host medians.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub hosts: usize,
    /// Median of the hosts' medians.
    pub median: f64,
    /// Median absolute deviation from it.
    pub mad: f64,
    /// The scale z-scores divide by (1.4826·MAD, or 1.253314·MeanAD when MAD = 0); None when
    /// the fleet is too small or shows no spread at all.
    pub scale: Option<f64>,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let m = median(values);
        let dev: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
        let mad = median(&dev);
        let scale = if values.len() < MIN_HOSTS {
            None
        } else if mad > 0.0 {
            Some(1.4826 * mad)
        } else {
            let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
            (mean_ad > 0.0).then_some(1.253314 * mean_ad)
        };
        Spread {
            hosts: values.len(),
            median: m,
            mad,
            scale,
        }
    }

    /// Modified z-score of `x` (None when there is no spread to judge against).
    pub fn z(&self, x: f64) -> Option<f64> {
        self.scale.map(|s| (x - self.median) / s)
    }

    /// The outlier rule: the fleet median outside the host's own interval AND |z| > 3.5.
    pub fn is_outlier(&self, x: f64, ci: [f64; 2]) -> bool {
        let outside_own = self.median < ci[0] || self.median > ci[1];
        outside_own && self.z(x).is_some_and(|z| z.abs() > Z_LIMIT)
    }
}

/// A host: its latest labels and facts, and how many of its runs were selected.
#[derive(Debug, Clone, Serialize)]
pub struct Host {
    pub name: String,
    pub runs: usize,
    pub latest: String,
    pub labels: BTreeMap<String, String>,
    pub facts: BTreeMap<String, String>,
}

/// One row of the matrix (a host, or a group of hosts) for one probe.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// The host or group this cell belongs to.
    pub name: String,
    pub median: f64,
    /// The host's own 95% interval (a group: the distribution-free interval of its hosts'
    /// median, the full range below 6 hosts).
    pub ci: [f64; 2],
    /// median / fleet median.
    pub ratio: f64,
    pub z: Option<f64>,
    pub outlier: bool,
    /// Hosts behind the cell (1 for a host).
    pub hosts: usize,
}

/// One probe (at one set of parameters) across the fleet.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeRow {
    pub probe: String,
    pub params: String,
    pub unit: Unit,
    pub spread: Spread,
    pub cells: Vec<Cell>,
}

impl ProbeRow {
    /// `syscall.null` or `ctx.pipe mode=thread`.
    pub fn label(&self) -> String {
        if self.params.is_empty() {
            self.probe.clone()
        } else {
            format!("{} {}", self.probe, self.params)
        }
    }
}

/// A fact value that an odd host holds and few others do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Apart {
    pub fact: String,
    pub value: String,
    /// The value most other hosts hold, and how many of them.
    pub usual: String,
    pub usual_hosts: usize,
    /// Other (not odd) hosts holding `value`, of `others`.
    pub others_with: usize,
    pub others: usize,
}

/// An odd host (or group), its odd probes and what sets it apart.
#[derive(Debug, Clone, Serialize)]
pub struct Odd {
    pub name: String,
    /// (row index into `probes`, ratio).
    pub probes: Vec<(usize, f64)>,
    pub apart: Vec<Apart>,
}

/// A fact value shared by odd hosts and rare elsewhere: the fleet-level explanation.
#[derive(Debug, Clone, Serialize)]
pub struct SharedApart {
    pub fact: String,
    pub value: String,
    pub odd_with: usize,
    pub odd: usize,
    pub others_with: usize,
    pub others: usize,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    pub rule: String,
    pub filter: BTreeMap<String, String>,
    pub group_by: Option<GroupBy>,
    pub runs: usize,
    /// Figures of the selected runs left out (invalid, below resolution, no value).
    pub left_out: usize,
    pub hosts: Vec<Host>,
    /// Row names of the matrix: the hosts, or the groups with `--group-by`.
    pub rows: Vec<String>,
    pub probes: Vec<ProbeRow>,
    pub odd: Vec<Odd>,
    pub shared: Vec<SharedApart>,
}

pub const RULE: &str = "odd = the fleet median is outside the host's own 95% interval AND its \
modified z-score (0.6745·|x − median| / MAD of the hosts) is above 3.5; at least 3 hosts";

/// Builds the report from the selected runs. Each host contributes its latest valid figure
/// of each probe (a host measured twice is not counted twice).
pub fn analyze(
    runs: &[FleetRun],
    filter: BTreeMap<String, String>,
    group_by: Option<GroupBy>,
) -> Fleet {
    // Latest first, so the first figure seen per (host, probe) is the latest.
    let mut order: Vec<&FleetRun> = runs.iter().collect();
    order.sort_by(|a, b| b.started_at.cmp(&a.started_at).then(b.uid.cmp(&a.uid)));
    let mut hosts: BTreeMap<String, Host> = BTreeMap::new();
    type Key = (String, String, Unit);
    let mut figures: BTreeMap<Key, BTreeMap<String, Figure>> = BTreeMap::new();
    for r in &order {
        let h = hosts.entry(r.host().to_string()).or_insert_with(|| Host {
            name: r.host().to_string(),
            runs: 0,
            latest: r.started_at.clone(),
            labels: r.labels.clone(),
            facts: r.facts.clone(),
        });
        h.runs += 1;
        for f in &r.figures {
            figures
                .entry((f.probe.clone(), f.params.clone(), f.unit.clone()))
                .or_default()
                .entry(h.name.clone())
                .or_insert_with(|| f.clone());
        }
    }
    let groups: BTreeMap<String, Vec<String>> = match &group_by {
        None => hosts.keys().map(|h| (h.clone(), vec![h.clone()])).collect(),
        Some(g) => {
            let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for h in hosts.values() {
                m.entry(g.value(h)).or_default().push(h.name.clone());
            }
            m
        }
    };
    let rows: Vec<String> = groups.keys().cloned().collect();
    let probes: Vec<ProbeRow> = figures
        .into_iter()
        .map(|(key, by_host)| probe_row(key, &by_host, &groups))
        .collect();
    let mut odd: BTreeMap<String, Vec<(usize, f64)>> = BTreeMap::new();
    for (i, p) in probes.iter().enumerate() {
        for c in p.cells.iter().filter(|c| c.outlier) {
            odd.entry(c.name.clone()).or_default().push((i, c.ratio));
        }
    }
    let explain = group_by.is_none();
    let odd_names: BTreeSet<&str> = odd.keys().map(String::as_str).collect();
    let odd: Vec<Odd> = odd
        .iter()
        .map(|(name, ps)| Odd {
            name: name.clone(),
            probes: ps.clone(),
            apart: if explain {
                hosts
                    .get(name)
                    .map(|h| apart(h, &hosts, &odd_names))
                    .unwrap_or_default()
            } else {
                Vec::new()
            },
        })
        .collect();
    let shared = if explain {
        shared_apart(&hosts, &odd_names)
    } else {
        Vec::new()
    };
    Fleet {
        rule: RULE.into(),
        filter,
        group_by,
        runs: runs.len(),
        left_out: runs.iter().map(|r| r.left_out).sum(),
        hosts: hosts.into_values().collect(),
        rows,
        probes,
        odd,
        shared,
    }
}

/// One probe across the fleet: its spread over the hosts, and each row's (host's or
/// group's) cell judged against it.
fn probe_row(
    (probe, params, unit): (String, String, Unit),
    by_host: &BTreeMap<String, Figure>,
    groups: &BTreeMap<String, Vec<String>>,
) -> ProbeRow {
    let values: Vec<f64> = by_host.values().map(|f| f.median).collect();
    let spread = Spread::of(&values);
    let cells = groups
        .iter()
        .filter_map(|(name, members)| {
            let mine: Vec<&Figure> = members.iter().filter_map(|h| by_host.get(h)).collect();
            let (median_v, ci) = combine(&mine)?;
            Some(Cell {
                name: name.clone(),
                median: median_v,
                ci,
                ratio: median_v / spread.median,
                z: spread.z(median_v),
                outlier: spread.is_outlier(median_v, ci),
                hosts: mine.len(),
            })
        })
        .collect();
    ProbeRow {
        probe,
        params,
        unit,
        spread,
        cells,
    }
}

/// One host's figure as it is; several hosts' as the median of their medians with a
/// distribution-free interval (the full range below 6 hosts).
fn combine(figs: &[&Figure]) -> Option<(f64, [f64; 2])> {
    match figs {
        [] => None,
        [one] => Some((one.median, one.ci)),
        many => {
            let mut v: Vec<f64> = many.iter().map(|f| f.median).collect();
            v.sort_by(f64::total_cmp);
            let (lo, hi) = median_ci_indices(v.len());
            Some((median(&v), [v[lo], v[hi]]))
        }
    }
}

/// The most common value of `fact` among `hosts`, with its count.
fn usual<'a>(fact: &str, hosts: impl Iterator<Item = &'a Host>) -> Option<(String, usize)> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for h in hosts {
        if let Some(v) = h.facts.get(fact) {
            *count.entry(v).or_default() += 1;
        }
    }
    count
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(v, n)| (v.to_string(), n))
}

/// Facts of `host` that at most [`APART_SHARE`] of the hosts that are not odd share.
fn apart(host: &Host, hosts: &BTreeMap<String, Host>, odd: &BTreeSet<&str>) -> Vec<Apart> {
    let others: Vec<&Host> = hosts
        .values()
        .filter(|h| !odd.contains(h.name.as_str()))
        .collect();
    if others.is_empty() {
        return Vec::new();
    }
    FACTS
        .iter()
        .filter(|f| **f != "hostname")
        .filter_map(|f| {
            let value = host.facts.get(*f)?;
            let with = others
                .iter()
                .filter(|h| h.facts.get(*f) == Some(value))
                .count();
            if with as f64 > APART_SHARE * others.len() as f64 {
                return None;
            }
            let (usual, usual_hosts) = usual(f, others.iter().copied())?;
            Some(Apart {
                fact: f.to_string(),
                value: value.clone(),
                usual,
                usual_hosts,
                others_with: with,
                others: others.len(),
            })
        })
        .collect()
}

/// Fact values held by odd hosts and by at most [`APART_SHARE`] of the others, the values
/// shared by most odd hosts first.
fn shared_apart(hosts: &BTreeMap<String, Host>, odd: &BTreeSet<&str>) -> Vec<SharedApart> {
    let (odd_h, others): (Vec<&Host>, Vec<&Host>) =
        hosts.values().partition(|h| odd.contains(h.name.as_str()));
    if odd_h.is_empty() || others.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for f in FACTS.iter().filter(|f| **f != "hostname") {
        let values: BTreeSet<&String> = odd_h.iter().filter_map(|h| h.facts.get(*f)).collect();
        for v in values {
            let has = |h: &&&Host| h.facts.get(*f) == Some(v);
            let others_with = others.iter().filter(has).count();
            if others_with as f64 > APART_SHARE * others.len() as f64 {
                continue;
            }
            out.push(SharedApart {
                fact: f.to_string(),
                value: v.clone(),
                odd_with: odd_h.iter().filter(has).count(),
                odd: odd_h.len(),
                others_with,
                others: others.len(),
            });
        }
    }
    out.sort_by(|a, b| {
        b.odd_with
            .cmp(&a.odd_with)
            .then(a.others_with.cmp(&b.others_with))
    });
    out
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    pub fn run(host: &str, kernel: &str, started: &str, null_ns: f64) -> FleetRun {
        let mut facts = BTreeMap::new();
        facts.insert("kernel".to_string(), kernel.to_string());
        facts.insert("cpu".to_string(), "EPYC".to_string());
        facts.insert("hostname".to_string(), host.to_string());
        let fig = |probe: &str, v: f64| Figure {
            probe: probe.into(),
            params: String::new(),
            unit: "ns/call".into(),
            median: v,
            ci: [v * 0.99, v * 1.01],
        };
        FleetRun {
            uid: format!("{host}-{started}"),
            started_at: started.into(),
            labels: [("host".to_string(), host.to_string())].into(),
            facts,
            figures: vec![fig("syscall.null", null_ns), fig("call.function", 2.0)],
            left_out: 0,
        }
    }

    pub fn fleet() -> Vec<FleetRun> {
        let mut runs: Vec<FleetRun> = (0..10)
            .map(|i| {
                run(
                    &format!("n{i:02}"),
                    "6.12",
                    "2026-01-02",
                    50.0 + i as f64 * 0.3,
                )
            })
            .collect();
        runs.push(run("n10", "5.10", "2026-01-02", 90.0));
        // An older run of n00 that was slow: only the latest run of a host counts.
        runs.push(run("n00", "6.12", "2026-01-01", 95.0));
        runs
    }

    /// Ten hosts on 6.12 near 51 ns, n10 on 5.10 at 90 ns: one odd host.
    pub fn small_fleet() -> Fleet {
        analyze(&fleet(), BTreeMap::new(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::fleet;
    use super::*;

    #[test]
    fn spread_uses_mad_and_falls_back_to_mean_deviation() {
        let s = Spread::of(&[10.0, 11.0, 9.0, 10.0, 30.0]);
        assert_eq!(s.median, 10.0);
        assert_eq!(s.mad, 1.0);
        assert!((s.z(30.0).unwrap() - 20.0 / 1.4826).abs() < 1e-9);
        // More than half agree exactly: MAD is 0, the mean absolute deviation stands in.
        let s = Spread::of(&[5.0, 5.0, 5.0, 5.0, 9.0]);
        assert_eq!(s.mad, 0.0);
        assert!((s.scale.unwrap() - 1.253314 * 0.8).abs() < 1e-9);
        // No spread at all, or too few hosts: no scale, no outliers.
        assert_eq!(Spread::of(&[5.0, 5.0, 5.0]).scale, None);
        assert_eq!(Spread::of(&[5.0, 50.0]).scale, None);
        assert!(!Spread::of(&[5.0, 50.0]).is_outlier(50.0, [49.0, 51.0]));
    }

    #[test]
    fn outlier_needs_both_its_own_interval_and_the_fleet_spread() {
        let s = Spread::of(&[100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 140.0]);
        // Far out and precise: odd.
        assert!(s.is_outlier(140.0, [138.0, 142.0]));
        // Far out, but its own interval reaches the fleet median: not odd.
        assert!(!s.is_outlier(140.0, [90.0, 190.0]));
        // Precise and off the median, but inside the fleet's spread: not odd.
        assert!(!s.is_outlier(101.0, [100.9, 101.1]));
        // Faster is odd too.
        assert!(s.is_outlier(60.0, [59.0, 61.0]));
        // Just inside the 3.5 limit is not, just beyond is.
        let scale = s.scale.unwrap();
        let at = |z: f64| s.median + z * scale;
        assert!(!s.is_outlier(at(3.4), [at(3.3), at(3.45)]));
        assert!(s.is_outlier(at(3.6), [at(3.55), at(3.65)]));
    }

    #[test]
    fn the_odd_host_is_named_with_the_fact_that_sets_it_apart() {
        let f = analyze(&fleet(), BTreeMap::new(), None);
        assert_eq!(f.hosts.len(), 11);
        assert_eq!(f.runs, 12);
        assert_eq!(f.odd.len(), 1, "{:?}", f.odd);
        let odd = &f.odd[0];
        assert_eq!(odd.name, "n10");
        assert_eq!(odd.probes.len(), 1);
        assert_eq!(f.probes[odd.probes[0].0].probe, "syscall.null");
        assert_eq!(
            odd.apart,
            vec![Apart {
                fact: "kernel".into(),
                value: "5.10".into(),
                usual: "6.12".into(),
                usual_hosts: 10,
                others_with: 0,
                others: 10,
            }]
        );
        assert_eq!(f.shared[0].fact, "kernel");
        assert_eq!((f.shared[0].odd_with, f.shared[0].others_with), (1, 0));
        let n00 = f.probes[odd.probes[0].0]
            .cells
            .iter()
            .find(|c| c.name == "n00")
            .unwrap();
        assert_eq!(n00.median, 50.0, "latest run of n00");
        // call.function is identical everywhere: no spread, nobody odd.
        let call = f
            .probes
            .iter()
            .find(|p| p.probe == crate::probes::call::FUNCTION.0)
            .unwrap();
        assert!(call.cells.iter().all(|c| !c.outlier && c.ratio == 1.0));
    }

    #[test]
    fn grouping_by_a_fact_compares_groups() {
        let runs = fleet();
        let g = GroupBy::resolve("kernel", &runs).unwrap();
        let f = analyze(&runs, BTreeMap::new(), Some(g));
        assert_eq!(f.rows, vec!["5.10".to_string(), "6.12".to_string()]);
        let null = f
            .probes
            .iter()
            .find(|p| p.probe == crate::probes::syscall::Syscall::Null.probe_id().0)
            .unwrap();
        let old = &null.cells[0];
        assert_eq!((old.name.as_str(), old.hosts), ("5.10", 1));
        assert!(old.outlier);
        let new = &null.cells[1];
        assert_eq!(new.hosts, 10);
        assert!(!new.outlier);
        assert!(new.ci[0] <= new.median && new.median <= new.ci[1]);
        assert!(GroupBy::resolve("nonsense", &runs)
            .unwrap_err()
            .contains("not a machine fact"));
        assert_eq!(
            GroupBy::resolve("host", &runs).unwrap(),
            GroupBy::Label("host".into())
        );
    }
}
