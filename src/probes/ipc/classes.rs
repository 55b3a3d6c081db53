//! Placement classes: how far apart two CPUs are in this machine's topology (same CPU, SMT
//! sibling, same last-level cache, other LLC, other NUMA node), from the machine facts, and one
//! representative pair per class. Shared by `ipc`, `c2c` and `rpc`.

use crate::error::{Error, Result};
use crate::machine::Machine;
use crate::units::name::Named;

/// The distance between two logical CPUs, nearest first: named as an option's value
/// ([`Named`]), worded for tables and figures ([`crate::units::name::Word`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum, strum::IntoStaticStr,
)]
pub enum Class {
    /// Both on one logical CPU: every hand-off is a context switch.
    #[strum(serialize = "same CPU")]
    SameCpu,
    /// Two hardware threads of one physical core.
    #[strum(serialize = "SMT sibling")]
    Smt,
    /// Different cores sharing the last-level cache.
    #[strum(serialize = "same LLC")]
    SameLlc,
    /// Different last-level caches on one NUMA node.
    #[strum(serialize = "other LLC")]
    OtherLlc,
    /// Different NUMA nodes.
    #[strum(serialize = "other node")]
    OtherNode,
}

crate::units::name::named!(Class);

impl Class {
    pub const ALL: [Class; 5] = [
        Class::SameCpu,
        Class::Smt,
        Class::SameLlc,
        Class::OtherLlc,
        Class::OtherNode,
    ];

    /// The class a measurement was taken in (its `class` parameter).
    pub fn of(m: &crate::model::Measurement) -> Option<Class> {
        m.param_str("class").and_then(Class::from_name)
    }
}

/// The CPUs sharing `cpu`'s last-level cache (the highest-level unified or data cache listing
/// it), or None when the machine facts do not say.
fn llc_of(m: &Machine, cpu: usize) -> Option<Vec<usize>> {
    m.caches_for_cpu(cpu)
        .into_iter()
        .filter(|c| !c.shared_cpus.is_empty() && c.kind != crate::machine::CacheType::Instruction)
        .max_by_key(|c| c.level)
        .map(|c| c.shared_cpus.clone())
}

fn node_of(m: &Machine, cpu: usize) -> Option<usize> {
    m.topology
        .iter()
        .find(|t| t.cpu == cpu)
        .and_then(|t| t.numa_node)
}

/// The class of the pair (a, b). Unknown cache sharing counts as "other LLC" only when the
/// facts say so; without cache facts two cores on one node are taken as sharing nothing
/// known, i.e. other LLC.
pub fn classify(m: &Machine, a: usize, b: usize) -> Class {
    if a == b {
        return Class::SameCpu;
    }
    if m.smt_siblings_of(a).contains(&b) {
        return Class::Smt;
    }
    if let (Some(x), Some(y)) = (node_of(m, a), node_of(m, b)) {
        if x != y {
            return Class::OtherNode;
        }
    }
    match llc_of(m, a) {
        Some(l) if l.contains(&b) => Class::SameLlc,
        _ => Class::OtherLlc,
    }
}

/// A measuring CPU and a partner CPU, with the class of the pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    pub class: Class,
}

/// One representative pair per class this machine has among `cpus` (the allowed CPUs): the
/// same-CPU pair on the last CPU (CPU 0 usually takes more interrupts), and for the others
/// the first pair found counting down from the last CPU.
pub fn representatives(m: &Machine, cpus: &[usize]) -> Vec<Pair> {
    let mut out: Vec<Pair> = Vec::new();
    let Some(&last) = cpus.last() else {
        return out;
    };
    out.push(Pair {
        a: last,
        b: last,
        class: Class::SameCpu,
    });
    for (i, &a) in cpus.iter().enumerate().rev() {
        for &b in cpus[..i].iter().rev() {
            let class = classify(m, a, b);
            if !out.iter().any(|p| p.class == class) {
                out.push(Pair { a, b, class });
            }
        }
    }
    out.sort_by_key(|p| p.class);
    out
}

/// Parse `--pairs 0:1,2:3` (`option` names the option in messages: `--pairs`, `--pair`)
/// against the allowed CPUs. A pair given again is measured once (the first place it was
/// named keeps its order).
pub fn parse_pairs(
    m: &Machine,
    spec: &[String],
    allowed: &[usize],
    option: &str,
) -> Result<Vec<Pair>> {
    let mut out: Vec<Pair> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for s in spec {
        let (x, y) = s.split_once(':').ok_or_else(|| {
            Error::usage(format!(
                "{option}: '{s}' is not a pair; write A:B, e.g. 0:1 (the measuring CPU, then \
                 the partner's)"
            ))
        })?;
        let num = |t: &str| -> Result<usize> {
            let c: usize = t.trim().parse().map_err(|_| {
                Error::usage(format!("{option}: '{t}' in '{s}' is not a CPU number"))
            })?;
            if !allowed.contains(&c) {
                return Err(Error::usage(format!(
                    "{option}: CPU {c} is not in this process's allowed set ({})",
                    crate::evidence::placement::format_cpu_list(allowed)
                )));
            }
            Ok(c)
        };
        let (a, b) = (num(x)?, num(y)?);
        if seen.insert((a, b)) {
            out.push(Pair {
                a,
                b,
                class: classify(m, a, b),
            });
        }
    }
    Ok(out)
}

/// Parse a CPU list such as "0-3,6" (for `--cpus`), each CPU checked against `allowed`;
/// empty pieces are skipped, but a list of none is refused.
pub fn parse_cpu_list(s: &str, allowed: &[usize]) -> Result<Vec<usize>> {
    crate::machine::affinity::cpus_asked(s, allowed, "--cpus", true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::name::tests::assert_words;

    #[test]
    fn a_class_has_its_option_name_and_its_own_words() {
        let names = ["same-cpu", "smt", "same-llc", "other-llc", "other-node"];
        let words = [
            "same CPU",
            "SMT sibling",
            "same LLC",
            "other LLC",
            "other node",
        ];
        assert_words(&Class::ALL.into_iter().zip(words).collect::<Vec<_>>());
        for ((c, n), w) in Class::ALL.into_iter().zip(names).zip(words) {
            assert_eq!((c.name(), Class::from_name(n)), (n, Some(c)));
            assert_eq!(Class::from_name(w), None, "words are no option value");
        }
    }
    use crate::machine::{CacheInfo, CacheType, CpuTopo};

    /// Two nodes; node 0 has cores {0,4} (SMT) and {1,5} sharing LLC A, core {2} on LLC B;
    /// node 1 has CPU 3.
    fn machine() -> Machine {
        let topo = |cpu, sib: Vec<usize>, node| CpuTopo {
            cpu,
            smt_siblings: sib,
            numa_node: Some(node),
            ..Default::default()
        };
        let llc = |cpus: Vec<usize>| CacheInfo {
            level: 3,
            kind: CacheType::Unified,
            shared_cpu_list: String::new(),
            shared_cpus: cpus,
            size_bytes: None,
            line_size: None,
            ways: None,
            sets: None,
        };
        Machine {
            topology: vec![
                topo(0, vec![0, 4], 0),
                topo(1, vec![1, 5], 0),
                topo(2, vec![2], 0),
                topo(3, vec![3], 1),
                topo(4, vec![0, 4], 0),
                topo(5, vec![1, 5], 0),
            ],
            caches: vec![llc(vec![0, 1, 4, 5]), llc(vec![2]), llc(vec![3])],
            ..Default::default()
        }
    }

    #[test]
    fn pairs_are_classified_from_topology() {
        let m = machine();
        assert_eq!(classify(&m, 1, 1), Class::SameCpu);
        assert_eq!(classify(&m, 0, 4), Class::Smt);
        assert_eq!(classify(&m, 0, 1), Class::SameLlc);
        assert_eq!(classify(&m, 0, 2), Class::OtherLlc);
        assert_eq!(classify(&m, 0, 3), Class::OtherNode);
    }

    #[test]
    fn one_representative_per_class() {
        let m = machine();
        let reps = representatives(&m, &[0, 1, 2, 3, 4, 5]);
        let classes: Vec<Class> = reps.iter().map(|p| p.class).collect();
        assert_eq!(classes, Class::ALL.to_vec());
        for p in &reps {
            assert_eq!(classify(&m, p.a, p.b), p.class);
        }
        // One CPU: only the same-CPU class exists.
        assert_eq!(representatives(&m, &[2]).len(), 1);
    }

    #[test]
    fn bad_pairs_and_lists_are_usage_errors() {
        let m = machine();
        let allowed = [0, 1, 2];
        assert_eq!(
            parse_pairs(&m, &["0:1".into()], &allowed, "--pairs").unwrap()[0].class,
            Class::SameLlc
        );
        for bad in ["0", "0:9", "x:1"] {
            let e = parse_pairs(&m, &[bad.into()], &allowed, "--pair").unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(e.to_string().starts_with("--pair: "), "{e}");
        }
        // 5,001 copies of one pair and another in between: two pairs, in the order named.
        let mut many = vec!["1:0".to_string(); 5001];
        many.insert(7, "2:2".into());
        let pairs = parse_pairs(&m, &many, &allowed, "--pairs").unwrap();
        assert_eq!(
            pairs.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>(),
            [(1, 0), (2, 2)]
        );
        assert_eq!(parse_cpu_list("0-2", &allowed).unwrap(), vec![0, 1, 2]);
        assert!(parse_cpu_list("2-0", &allowed).is_err());
        assert!(parse_cpu_list("7", &allowed).is_err());
        assert!(parse_cpu_list("", &allowed).is_err());
    }
}
