//! Which parameters tell a table's rows apart. A table whose every row repeats the same
//! parameters (`cpus=1 pages=1024 size_bytes=4194304` on each fault case) wraps each probe
//! cell over several lines: the parameters the rows share are printed once above the table,
//! and each row's cell keeps only those that distinguish it. The JSON and CSV keep every
//! parameter of every row.

use std::collections::BTreeMap;

use crate::model::{param_kind, param_text, Measurement, ParamKind};

/// The parameters a set of rows shares: those every row sets to one value (`everywhere`),
/// those set to one value by every row that sets them (two rows at least) but absent from
/// some (`where_set`, only beside one of the others), and the sampling budgets (rounds, reps: how long a case was
/// measured, not which case it is) whose values differ, as their range (`budget`).
#[derive(Debug, Default, PartialEq)]
pub struct Shared {
    pub everywhere: BTreeMap<String, String>,
    pub where_set: BTreeMap<String, String>,
    pub budget: BTreeMap<String, (u64, u64)>,
}

/// What `rows` share ([`Shared`]); nothing for fewer than two rows (a lone row's parameters
/// are its own, not shared).
pub fn shared(rows: &[&Measurement]) -> Shared {
    let mut out = Shared::default();
    if rows.len() < 2 {
        return out;
    }
    for (k, vs) in values(rows) {
        if vs.iter().any(|v| *v != vs[0]) {
            let counts: Option<Vec<u64>> = vs.iter().map(|v| v.as_u64()).collect();
            if let (ParamKind::Budget, Some(counts)) = (param_kind(k), counts) {
                let lo = counts.iter().copied().min().unwrap_or(0);
                let hi = counts.iter().copied().max().unwrap_or(0);
                out.budget.insert(k.to_string(), (lo, hi));
            }
            continue;
        }
        if vs.len() < 2 {
            continue;
        }
        let set = if vs.len() == rows.len() {
            &mut out.everywhere
        } else {
            &mut out.where_set
        };
        set.insert(k.to_string(), param_text(vs[0]));
    }
    // Parameters only some rows set ride on a line printed anyway: a line of its own for
    // them ("rows that set them: class=same-llc" over two rows of fifteen) saves nothing.
    if out.everywhere.is_empty() && out.budget.is_empty() {
        out.where_set.clear();
    }
    out
}

/// Every value each parameter takes in `rows`, one entry per row that sets it.
fn values<'a>(rows: &[&'a Measurement]) -> BTreeMap<&'a str, Vec<&'a serde_json::Value>> {
    let mut out: BTreeMap<&str, Vec<&serde_json::Value>> = BTreeMap::new();
    for m in rows {
        for (k, v) in &m.params {
            out.entry(k.as_str()).or_default().push(v);
        }
    }
    out
}

/// The parameters that take more than one value in `rows` (rows that do not set one are
/// not counted): what a figure can sweep over or split into lines.
pub fn varying(rows: &[&Measurement]) -> Vec<String> {
    values(rows)
        .into_iter()
        .filter(|(_, vs)| vs.iter().any(|v| *v != vs[0]))
        .map(|(k, _)| k.to_string())
        .collect()
}

/// Parameters recorded twice, once as the input and once rendered for people: (the input,
/// its rendering, the name views show them under). Views show the rendering once ("size=4k",
/// not "size=4096 size_label=4k"); the JSON and CSV keep both.
const RENDERINGS: [(&str, &str, &str); 3] = [
    ("size", "size_label", "size"),
    ("slice_ns", "slice", "slice"),
    ("work_set", "work_set_label", "work_set"),
];

/// `params` as views show them, (name, text) in key order: an input that has its rendering
/// beside it is left out, and the rendering takes the input's shown name. Only the
/// parameters whose key `keep` accepts (the rendering's key for a pair).
fn shown<'a>(
    params: &'a BTreeMap<String, serde_json::Value>,
    keep: &dyn Fn(&str) -> bool,
) -> Vec<(&'a str, String)> {
    let pairs: Vec<(&str, &str)> = RENDERINGS
        .iter()
        .filter(|(input, rendering, _)| {
            params.contains_key(*input) && params.contains_key(*rendering)
        })
        .map(|(input, _, name)| (*input, *name))
        .collect();
    params
        .iter()
        .filter(|(k, _)| !pairs.iter().any(|(input, _)| input == k) && keep(k))
        .map(|(k, v)| {
            let name = RENDERINGS
                .iter()
                .find(|(input, rendering, _)| {
                    rendering == k && pairs.iter().any(|(i, _)| i == input)
                })
                .map_or(k.as_str(), |(_, _, name)| name);
            (name, param_text(v))
        })
        .collect()
}

impl Shared {
    /// The line printed once above the table ("all rows: cpus=1 pages=1024; rows that set
    /// them: order=seq; rounds 36–166 (each row's in the JSON)"), or None when the rows
    /// share nothing.
    pub fn line(&self) -> Option<String> {
        // A shared input and its shared rendering are printed once, as `shown` does.
        let text = |set: &BTreeMap<String, String>| {
            set.iter()
                .filter(|(k, _)| {
                    !RENDERINGS
                        .iter()
                        .any(|(input, rendering, _)| input == k && set.contains_key(*rendering))
                })
                .map(|(k, v)| {
                    let name = RENDERINGS
                        .iter()
                        .find(|(input, rendering, _)| rendering == k && set.contains_key(*input))
                        .map_or(k.as_str(), |(_, _, name)| name);
                    format!("{name}={v}")
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut parts: Vec<String> = [
            ("all rows", &self.everywhere),
            ("rows that set them", &self.where_set),
        ]
        .into_iter()
        .filter(|(_, set)| !set.is_empty())
        .map(|(name, set)| format!("{name}: {}", text(set)))
        .collect();
        if !self.budget.is_empty() {
            let ranges: Vec<String> = self
                .budget
                .iter()
                .map(|(k, (lo, hi))| format!("{k} {lo}–{hi}"))
                .collect();
            parts.push(format!("{} (each row's in the JSON)", ranges.join(", ")));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// Whether the parameter `k` is shared or a budget (printed above the table, not in the
    /// row).
    fn has(&self, k: &str) -> bool {
        self.everywhere.contains_key(k)
            || self.where_set.contains_key(k)
            || self.budget.contains_key(k)
    }
}

/// `m`'s label with only the parameters `shared` leaves out and `keep` accepts:
/// "fault.anon rounds=44 touch=write".
pub fn label(m: &Measurement, shared: &Shared, keep: &dyn Fn(&str) -> bool) -> String {
    let mut s = m.probe.clone();
    for (name, text) in shown(&m.params, &|k| !shared.has(k) && keep(k)) {
        s += &format!(" {name}={text}");
    }
    s
}

/// `m`'s label with only the parameters (among `keys`) that another of `peers` of the same
/// probe sets to another value ("fault.anon touch=write"; "fault.file-cached" when no other
/// case of its probe differs in them).
pub fn distinguishing_label(m: &Measurement, peers: &[&Measurement], keys: &[&str]) -> String {
    label(m, &Shared::default(), &|k| {
        keys.contains(&k) && differs_from_peers(m, peers, k)
    })
}

/// `m`'s inputs (with their renderings; no budget or observed fact) that another of `peers`
/// of the same probe sets to another value, as views show them ("touch=write", "slice=1ms";
/// empty when none differs): what tells a case apart in a figure's label or a table cell.
pub fn distinguishing(m: &Measurement, peers: &[&Measurement]) -> String {
    let case = |k: &str| matches!(param_kind(k), ParamKind::Input | ParamKind::Label);
    shown(&m.params, &|k| case(k) && differs_from_peers(m, peers, k))
        .into_iter()
        .map(|(name, text)| format!("{name}={text}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether another of `peers` of `m`'s probe sets `k` to another value than `m` does.
fn differs_from_peers(m: &Measurement, peers: &[&Measurement], k: &str) -> bool {
    let mine = m.params.get(k);
    peers
        .iter()
        .filter(|c| c.probe == m.probe)
        .filter_map(|c| c.params.get(k))
        .any(|other| Some(other) != mine)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A recorded measurement as `probe` with `params`.
    fn case(probe: &str, params: serde_json::Value) -> Measurement {
        let run = crate::input::parse_run(
            include_str!("../../tests/fixtures/run-quick.json"),
            "fixture",
        )
        .unwrap();
        let mut m = run.measurements[0].clone();
        m.probe = probe.into();
        m.params = serde_json::from_value(params).unwrap();
        m
    }

    #[test]
    fn a_shared_parameter_is_printed_once_and_rows_keep_what_tells_them_apart() {
        let a = case(
            "fault.anon",
            json!({"cpus": [1], "rounds": 5, "touch": "write", "order": "seq"}),
        );
        let b = case(
            "fault.anon",
            json!({"cpus": [1], "rounds": 5, "touch": "read", "order": "seq"}),
        );
        let c = case(
            "fault.populate",
            json!({"cpus": [1], "rounds": 5, "phase": "map", "evict": "fsync"}),
        );
        let rows = [&a, &b, &c];
        let s = shared(&rows);
        assert_eq!(
            s.line().as_deref(),
            Some("all rows: cpus=1 rounds=5; rows that set them: order=seq")
        );
        let all = |_: &str| true;
        assert_eq!(label(&a, &s, &all), "fault.anon touch=write");
        assert_eq!(label(&b, &s, &all), "fault.anon touch=read");
        // A parameter only one row sets is that row's own.
        assert_eq!(label(&c, &s, &all), "fault.populate evict=fsync phase=map");
        // A parameter whose values differ stays in every row that sets it.
        let d = case("fault.anon", json!({"cpus": [0], "rounds": 5}));
        let s = shared(&[&a, &d]);
        assert_eq!(s.line().as_deref(), Some("all rows: rounds=5"));
        assert_eq!(label(&d, &s, &all), "fault.anon cpus=0");
        // Rounds that differ say how long a case was sampled, not which case it is: their
        // range is printed once.
        let e = case("fault.anon", json!({"cpus": [0], "rounds": 44}));
        let s = shared(&[&a, &e]);
        assert_eq!(
            s.line().as_deref(),
            Some("rounds 5–44 (each row's in the JSON)")
        );
        assert_eq!(label(&e, &s, &all), "fault.anon cpus=0");
        // Parameters only some rows set are not a line of their own.
        let f = case("fault.anon", json!({"cpus": [0], "order": "seq"}));
        let s = shared(&[&a, &f, &c]);
        assert_eq!(s, Shared::default());
        assert_eq!(label(&f, &s, &all), "fault.anon cpus=0 order=seq");
        // One row shares nothing: its parameters stay its own.
        assert_eq!(shared(&[&a]), Shared::default());
    }

    #[test]
    fn a_case_label_names_only_what_differs_within_its_probe() {
        let a = case("fault.anon", json!({"touch": "write", "thp": "never"}));
        let b = case("fault.anon", json!({"touch": "read", "thp": "never"}));
        let c = case("fault.file-cached", json!({"touch": "read"}));
        let peers = [&a, &b, &c];
        let keys = ["touch", "thp"];
        assert_eq!(
            distinguishing_label(&a, &peers, &keys),
            "fault.anon touch=write"
        );
        assert_eq!(distinguishing_label(&c, &peers, &keys), "fault.file-cached");
    }

    /// Mem latency rows showed "size=4096 size_label=4k", the same thing twice,
    /// and a timeslice case "slice=1ms slice_ns=1000000".
    #[test]
    fn an_input_and_its_rendering_are_shown_once() {
        let a = case(
            "mem.latency",
            json!({"size": 4096, "size_label": "4k", "fits": "L1d", "rounds": 9}),
        );
        let b = case(
            "mem.latency",
            json!({"size": 8192, "size_label": "8k", "fits": "L1d", "rounds": 12}),
        );
        let all = |_: &str| true;
        assert_eq!(
            label(&a, &Shared::default(), &all),
            "mem.latency fits=L1d rounds=9 size=4k"
        );
        // Shared, the pair is printed once too.
        let s = shared(&[&a, &a.clone()]);
        assert_eq!(
            s.line().as_deref(),
            Some("all rows: fits=L1d rounds=9 size=4k")
        );
        // A rendering without its input is shown under its own name.
        let c = case("ctx.timeslice", json!({"slice": "1ms"}));
        assert_eq!(
            label(&c, &Shared::default(), &all),
            "ctx.timeslice slice=1ms"
        );
        // What tells cases apart: inputs only, the rendering once, no budget or observed fact.
        assert_eq!(distinguishing(&a, &[&a, &b]), "size=4k");
        let t = |ns: u64, slice: &str, reported: u64| {
            case(
                "ctx.timeslice",
                json!({"slice_ns": ns, "slice": slice, "slice_reported_ns": [reported], "cpus": [1]}),
            )
        };
        let (t1, t4) = (t(1_000_000, "1ms", 999), t(4_000_000, "4ms", 3999));
        assert_eq!(distinguishing(&t1, &[&t1, &t4]), "slice=1ms");
        assert_eq!(distinguishing(&t1, &[&t1]), "");
    }

    #[test]
    fn varying_names_the_parameters_with_more_than_one_value() {
        let a = case("p", json!({"size": 1, "mode": "x", "only_a": 1}));
        let b = case("p", json!({"size": 2, "mode": "x"}));
        assert_eq!(varying(&[&a, &b]), vec!["size".to_string()]);
        assert!(varying(&[&a]).is_empty());
    }
}
