//! A run where people already look for results: the Prometheus text exposition (what
//! node_exporter's textfile collector reads from `*.prom` files, and what `promtool check
//! metrics` checks), github-action-benchmark's `customSmallerIsBetter` JSON and Bencher's
//! metric format (BMF).
//!
//! Each measurement is one sample per family: its probe is the family (`oscost_ctx_pipe_seconds`
//! for `ctx.pipe` in ns/switch, scaled to seconds as Prometheus asks of time), its inputs
//! and the run's labels (`host` first) its labels; the 95% interval is the `_lower` and
//! `_upper` families and validity the `_valid` family (1 or 0), so a series keeps its labels
//! whether a run was valid or not. A figure that is noise (unstable) has no value sample,
//! only its interval; a figure below resolution and an invalid one have neither. No
//! sample carries a timestamp (the textfile collector refuses them): the run's start is
//! the `oscost_run_start_time_seconds` gauge.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::model::{Measurement, Run, Status};
use crate::units::Unit;

/// A family name from a probe id: `oscost_` and the id with every character outside
/// `[a-zA-Z0-9_]` as `_`.
fn family_name(probe: &str, suffix: &str) -> String {
    let mut n = String::from("oscost_");
    n.extend(
        probe
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
    );
    n.push_str(suffix);
    n
}

/// A label name from a key: `[a-zA-Z_][a-zA-Z0-9_]*`, never the reserved `__` prefix.
fn label_name(key: &str) -> String {
    let mut n: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if n.is_empty() || n.starts_with(|c: char| c.is_ascii_digit()) || n.starts_with("__") {
        n.insert(0, 'k');
    }
    n
}

/// How a measurement's unit reads in the exposition: time units in seconds with what they
/// are per (`ns/switch`: seconds, per switch), others as they are, in a `unit` label.
struct Scale {
    factor: f64,
    suffix: &'static str,
    label: (&'static str, String),
}

fn scale_of(unit: &Unit) -> Scale {
    match unit {
        Unit::Ns(per) => Scale {
            factor: 1e-9,
            suffix: "_seconds",
            label: (
                "per",
                per.as_ref().map(|p| p.to_string()).unwrap_or_default(),
            ),
        },
        _ => Scale {
            factor: 1.0,
            suffix: "",
            label: ("unit", unit.to_string()),
        },
    }
}

/// A number as the exposition writes it (Go's float syntax: `NaN`, `+Inf`).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v:e}")
    }
}

/// `{k="v",...}`: the run's labels first, then the measurement's inputs (a key the run's
/// labels hold already gets a `param_` prefix), then the unit.
fn labels_of(run: &Run, m: &Measurement, unit: &(&str, String)) -> String {
    let mut seen = BTreeSet::new();
    let mut parts = Vec::new();
    let mut push = |k: String, v: &str| {
        let k = if seen.contains(&k) {
            format!("param_{k}")
        } else {
            k
        };
        if seen.insert(k.clone()) {
            parts.push(format!("{k}=\"{}\"", crate::escape::prometheus(v)));
        }
    };
    for (k, v) in &host_labels(run) {
        push(label_name(k), v);
    }
    for (k, v) in m.inputs() {
        push(label_name(&k), &crate::model::param_text(&v));
    }
    push(unit.0.to_string(), &unit.1);
    format!("{{{}}}", parts.join(","))
}

/// The run's labels, with `host` from the machine's host name where a run (an older one)
/// has none.
fn host_labels(run: &Run) -> BTreeMap<String, String> {
    let mut l = run.labels.clone();
    if let Some(h) = &run.machine.hostname {
        l.entry("host".into()).or_insert_with(|| h.clone());
    }
    l
}

/// Families in the order first met, each with its help and samples (label set, value);
/// a label set met twice in one family keeps its first sample.
#[derive(Default)]
struct Families {
    order: Vec<String>,
    help: BTreeMap<String, String>,
    samples: BTreeMap<String, Vec<(String, f64)>>,
}

impl Families {
    fn add(&mut self, name: String, help: &str, labels: &str, v: f64) {
        if !self.help.contains_key(&name) {
            self.order.push(name.clone());
            self.help.insert(name.clone(), help.to_string());
        }
        let s = self.samples.entry(name).or_default();
        if !s.iter().any(|(l, _)| l == labels) {
            s.push((labels.to_string(), v));
        }
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for name in &self.order {
            let _ = writeln!(out, "# HELP {name} {}", self.help[name]);
            let _ = writeln!(out, "# TYPE {name} gauge");
            for (labels, v) in &self.samples[name] {
                let _ = writeln!(out, "{name}{labels} {}", number(*v));
            }
        }
        out
    }
}

/// The run in the Prometheus text exposition format (version 0.0.4), as a `*.prom` file of
/// node_exporter's textfile collector.
pub fn openmetrics(run: &Run) -> String {
    let mut f = Families::default();
    let run_labels = {
        let parts: Vec<String> = host_labels(run)
            .iter()
            .map(|(k, v)| format!("{}=\"{}\"", label_name(k), crate::escape::prometheus(v)))
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!("{{{}}}", parts.join(","))
        }
    };
    if let Ok(t) = humantime::parse_rfc3339_weak(&run.started_at) {
        if let Ok(d) = t.duration_since(std::time::UNIX_EPOCH) {
            f.add(
                "oscost_run_start_time_seconds".into(),
                "When the oscost run started, seconds since the Unix epoch.",
                &run_labels,
                d.as_secs() as f64,
            );
        }
    }
    for m in &run.measurements {
        let scale = scale_of(&m.unit);
        let labels = labels_of(run, m, &scale.label);
        let name = family_name(&m.probe, scale.suffix);
        let probe = crate::escape::prometheus(&m.probe);
        let what = if scale.suffix.is_empty() {
            "median"
        } else {
            "median, seconds"
        };
        if let (Some(v), true) = (&m.value, m.valid) {
            if m.status == Status::Ok {
                f.add(
                    name.clone(),
                    &format!("oscost {probe}: the {what}."),
                    &labels,
                    v.median * scale.factor,
                );
            }
            if matches!(m.status, Status::Ok | Status::Unstable) {
                f.add(
                    format!("{name}_lower"),
                    &format!("oscost {probe}: lower end of the median's 95% interval."),
                    &labels,
                    v.ci95[0] * scale.factor,
                );
                f.add(
                    format!("{name}_upper"),
                    &format!("oscost {probe}: upper end of the median's 95% interval."),
                    &labels,
                    v.ci95[1] * scale.factor,
                );
            }
        }
        f.add(
            family_name(&m.probe, "_valid"),
            &format!("oscost {probe}: 1 when the evidence agreed with the probe's checks."),
            &labels,
            if m.valid { 1.0 } else { 0.0 },
        );
    }
    f.render()
}

/// The name a continuous-benchmark tool tracks a measurement by: its probe and inputs
/// (`ctx.pipe cpus=0 mode=process`), the same across runs of the same plan.
fn bench_name(m: &Measurement) -> String {
    let inputs = crate::model::params_label(&m.inputs());
    let name = if inputs.is_empty() {
        m.probe.clone()
    } else {
        format!("{} {inputs}", m.probe)
    };
    crate::escape::terminal(&name).into_owned()
}

/// The measurements with a figure (valid, not unstable, not below resolution): what the
/// continuous-benchmark formats hold; the others, by name, for the one line that says they
/// were left out.
pub fn with_figure(run: &Run) -> (Vec<&Measurement>, Vec<String>) {
    let (kept, left): (Vec<&Measurement>, Vec<&Measurement>) = run
        .measurements
        .iter()
        .partition(|m| m.valid && m.status == Status::Ok && m.value.is_some());
    (kept, left.into_iter().map(bench_name).collect())
}

/// github-action-benchmark's `customSmallerIsBetter` input: a JSON array of `{name, unit,
/// value, range, extra}` (value a number; range and extra text), one per figure.
pub fn benchmark_action(run: &Run) -> String {
    let (kept, _) = with_figure(run);
    let labels = host_labels(run);
    let host = labels.get("host").map(|h| crate::escape::terminal(h));
    let items: Vec<serde_json::Value> = kept
        .iter()
        .filter_map(|m| {
            let v = m.value.as_ref()?;
            let half = (v.ci95[1] - v.ci95[0]) / 2.0;
            let mut extra = format!(
                "median of {} samples; 95% interval {} to {} {}",
                v.n,
                crate::units::fmt_num(v.ci95[0]),
                crate::units::fmt_num(v.ci95[1]),
                m.unit
            );
            if let Some(h) = &host {
                extra.push_str(&format!("\nhost: {h}"));
            }
            Some(serde_json::json!({
                "name": bench_name(m),
                "unit": crate::escape::terminal(&m.unit.to_string()),
                "value": v.median,
                "range": format!("± {}", crate::units::fmt_num(half)),
                "extra": extra,
            }))
        })
        .collect();
    serde_json::to_string_pretty(&items).expect("values serialize") + "\n"
}

/// The Bencher measure a unit is tracked as: `latency` (Bencher's own, in nanoseconds) for
/// time units, else the unit as a slug (`faults/page`: `faults-per-page`).
fn measure_slug(unit: &Unit) -> String {
    if unit.is_time() {
        return "latency".into();
    }
    let mut slug = String::new();
    for c in unit.to_string().replace('/', " per ").chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "value".into()
    } else {
        slug.chars().take(64).collect()
    }
}

/// Bencher Metric Format: `{benchmark: {measure: {value, lower_value, upper_value}}}`, one
/// benchmark per figure, its interval as the lower and upper values.
pub fn bencher(run: &Run) -> String {
    let (kept, _) = with_figure(run);
    let mut out = serde_json::Map::new();
    for m in kept {
        let Some(v) = &m.value else { continue };
        let entry = out
            .entry(bench_name(m))
            .or_insert_with(|| serde_json::json!({}));
        let slug = measure_slug(&m.unit);
        if entry.get(&slug).is_none() {
            entry[slug] = serde_json::json!({
                "value": v.median,
                "lower_value": v.ci95[0],
                "upper_value": v.ci95[1],
            });
        }
    }
    serde_json::to_string_pretty(&out).expect("values serialize") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Run {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/run-quick.json"
        ))
        .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// A run whose host name and params are hostile.
    fn hostile() -> Run {
        let mut r = run();
        r.labels
            .insert("host".into(), "evil\"} 1\nowned 1\n\\".into());
        r.measurements[0]
            .params
            .insert("mode".into(), serde_json::json!("a\"b\nc"));
        r
    }

    /// The exposition's grammar, line by line: comments, or `name{labels} value`, where
    /// each label value is a quoted string with only `\\`, `\"` and `\n` escapes.
    fn check_exposition(text: &str) -> Result<usize, String> {
        let mut samples = 0;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# ") {
                if !(rest.starts_with("HELP oscost_") || rest.starts_with("TYPE oscost_")) {
                    return Err(format!("comment: {line}"));
                }
                continue;
            }
            let name_ok = |n: &str| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let Some((name, rest)) = line.split_once('{') else {
                let (name, value) = line.split_once(' ').ok_or(format!("no value: {line}"))?;
                if !name_ok(name) || value.trim().parse::<f64>().is_err() {
                    return Err(format!("sample: {line}"));
                }
                samples += 1;
                continue;
            };
            if !name_ok(name) {
                return Err(format!("name: {line}"));
            }
            let mut chars = rest.chars();
            loop {
                let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
                if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("label name {key:?}: {line}"));
                }
                if chars.next() != Some('"') {
                    return Err(format!("unquoted: {line}"));
                }
                loop {
                    match chars.next() {
                        Some('\\') => match chars.next() {
                            Some('\\' | '"' | 'n') => {}
                            _ => return Err(format!("escape: {line}")),
                        },
                        Some('"') => break,
                        Some(_) => {}
                        None => return Err(format!("open value: {line}")),
                    }
                }
                match chars.next() {
                    Some(',') => continue,
                    Some('}') => break,
                    _ => return Err(format!("after value: {line}")),
                }
            }
            let value: String = chars.collect();
            value
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("value {value:?}: {line}"))?;
            samples += 1;
        }
        Ok(samples)
    }

    #[test]
    fn the_exposition_has_a_family_per_probe_with_its_interval_and_validity() {
        let r = run();
        let text = openmetrics(&r);
        let n = check_exposition(&text).unwrap();
        assert!(n > r.measurements.len(), "{text}");
        let m = r
            .measurements
            .iter()
            .find(|m| m.status == Status::Ok && m.valid && m.unit.is_time_per_op())
            .unwrap();
        let name = family_name(&m.probe, "_seconds");
        assert!(text.contains(&format!("# TYPE {name} gauge\n")), "{text}");
        assert!(text.contains(&format!("# TYPE {name}_lower gauge\n")));
        assert!(text.contains(&format!("# TYPE {name}_upper gauge\n")));
        let host = &host_labels(&r)["host"];
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{host=\"{host}\"")))
            .unwrap();
        let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(
            (v - m.value.as_ref().unwrap().median * 1e-9).abs() < 1e-15,
            "{line}"
        );
        assert!(
            text.contains("oscost_run_start_time_seconds{host="),
            "{text}"
        );
        // Each family's HELP and TYPE once.
        let types: Vec<&str> = text.lines().filter(|l| l.starts_with("# TYPE")).collect();
        let unique: BTreeSet<&&str> = types.iter().collect();
        assert_eq!(types.len(), unique.len());
    }

    #[test]
    fn an_invalid_or_unstable_figure_has_no_value_sample() {
        let mut r = run();
        r.measurements.truncate(2);
        r.measurements[0].valid = false;
        r.measurements[0].status = Status::Invalid;
        r.measurements[1].status = Status::Unstable;
        let text = openmetrics(&r);
        let a = family_name(&r.measurements[0].probe, "");
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("{a}_valid{{")) && l.ends_with(" 0e0")),
            "{text}"
        );
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with(&format!("{a}_seconds{{"))),
            "{text}"
        );
        let b = family_name(&r.measurements[1].probe, "_seconds");
        assert!(
            !text.lines().any(|l| l.starts_with(&format!("{b}{{"))),
            "{text}"
        );
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{b}_lower{{"))),
            "{text}"
        );
    }

    #[test]
    fn hostile_host_names_and_params_stay_inside_their_label_values() {
        let text = openmetrics(&hostile());
        check_exposition(&text).unwrap();
        assert!(!text.lines().any(|l| l.starts_with("owned")), "{text}");
        // The grammar check fails on what an unescaped value would make.
        assert!(check_exposition("oscost_x{host=\"a\"b\"} 1\n").is_err());
        assert!(check_exposition("oscost_x{host=\"a\\q\"} 1\n").is_err());
        assert!(check_exposition("oscost_x{host=\"a\"} x\n").is_err());
        assert_eq!(label_name("__name__"), "k__name__");
        assert_eq!(label_name("rack.row-2"), "rack_row_2");
        assert_eq!(label_name("9x"), "k9x");
    }

    #[test]
    fn benchmark_action_entries_have_its_documented_fields() {
        let r = hostile();
        let v: serde_json::Value = serde_json::from_str(&benchmark_action(&r)).unwrap();
        let items = v.as_array().unwrap();
        let (kept, left) = with_figure(&r);
        assert_eq!(items.len(), kept.len());
        assert_eq!(items.len() + left.len(), r.measurements.len());
        for it in items {
            let o = it.as_object().unwrap();
            let keys: BTreeSet<&str> = o.keys().map(String::as_str).collect();
            assert_eq!(keys, ["extra", "name", "range", "unit", "value"].into());
            assert!(o["name"].is_string() && o["unit"].is_string());
            assert!(o["value"].is_f64(), "{it}");
            assert!(o["range"].as_str().unwrap().starts_with("± "));
            assert!(!o["name"].as_str().unwrap().contains('\n'));
        }
    }

    #[test]
    fn bencher_metrics_follow_the_bmf_schema() {
        let r = run();
        let v: serde_json::Value = serde_json::from_str(&bencher(&r)).unwrap();
        let benches = v.as_object().unwrap();
        assert!(!benches.is_empty());
        for (name, measures) in benches {
            assert!(!name.is_empty());
            for (slug, metric) in measures.as_object().unwrap() {
                assert!(slug.len() <= 64);
                let o = metric.as_object().unwrap();
                assert!(o["value"].is_number(), "{name}: {metric}");
                let lo = o["lower_value"].as_f64().unwrap();
                let hi = o["upper_value"].as_f64().unwrap();
                let val = o["value"].as_f64().unwrap();
                assert!(lo <= val && val <= hi, "{name}: {metric}");
            }
        }
        assert_eq!(measure_slug(&"ns/switch".into()), "latency");
        assert_eq!(measure_slug(&"faults/page".into()), "faults-per-page");
        assert_eq!(measure_slug(&Unit::TimesSequential), "sequential");
        assert_eq!(measure_slug(&"MB/s".into()), "mb-per-s");
    }
}
