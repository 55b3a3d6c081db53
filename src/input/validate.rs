//! What no oscost writes, refused with the file and the field: a key given twice in one
//! object (JSON parsers keep one of them, silently), a schema version below 1, a start time
//! that does not parse, a number no measurement produces, text beyond its bound (a 1 MB host
//! name printed in every list), labels that break the `--label` rules.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The largest magnitude any measured number may have (1e18: beyond every count, size or
/// duration in nanoseconds a machine produces, and far enough from f64's limit that a
/// plot's axis range, max − min, stays finite).
pub const MAX_MAGNITUDE: f64 = 1e18;

/// The longest host name: a fully qualified name is at most 255 bytes (RFC 1035), and
/// Linux's own host name at most 64.
pub const MAX_HOST: usize = 255;

/// The longest text of any other field (a warning, a command line, a CPU model): far beyond
/// what oscost writes, short enough that no view is flooded.
pub const MAX_TEXT: usize = 16 * 1024;

/// A label `key=value` by the rules of `--label`: the key is 1-64 of lower-case letters,
/// digits, `_ . -`, starting with a letter (so it is safe as a CSV header, SQL value and
/// file-name part); the value is 1-256 printable characters and may contain `=`.
pub fn check_label(k: &str, v: &str) -> std::result::Result<(), String> {
    let key_ok = !k.is_empty()
        && k.len() <= 64
        && k.starts_with(|c: char| c.is_ascii_lowercase())
        && k.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_.-".contains(c));
    if !key_ok {
        return Err(format!(
            "'{}' is not a label key: use 1-64 of a-z 0-9 _ . - starting with a letter",
            crate::escape::terminal(k)
        ));
    }
    if v.trim().is_empty() || v.chars().count() > 256 || v.chars().any(crate::escape::is_unsafe) {
        return Err(format!(
            "label {k}: the value must be 1-256 printable characters, not blank"
        ));
    }
    Ok(())
}

/// Refuses a key given twice in one object, naming it and where it is.
pub fn no_duplicate_keys(text: &str) -> std::result::Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(text);
    Unique {
        path: &mut Vec::new(),
    }
    .deserialize(&mut de)
    .map_err(|e| e.to_string())
}

/// Walks a JSON document checking that no object has a key twice.
struct Unique<'p> {
    path: &'p mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Unique<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        for i in 0.. {
            self.path.push(i.to_string());
            let more = seq.next_element_seed(Unique {
                path: &mut *self.path,
            })?;
            self.path.pop();
            if more.is_none() {
                break;
            }
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let mut seen = std::collections::BTreeSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !seen.insert(k.clone()) {
                let place = match self.path.is_empty() {
                    true => "the run".to_string(),
                    false => self.path.join("."),
                };
                return Err(A::Error::custom(format!(
                    "the key \"{}\" is given twice in {place}",
                    crate::escape::terminal(&k)
                )));
            }
            self.path.push(k);
            map.next_value_seed(Unique {
                path: &mut *self.path,
            })?;
            self.path.pop();
        }
        Ok(())
    }
}

/// Calls `check` on every value of the document with its path (`machine.hostname`,
/// `measurements.0.samples.3`); the first complaint wins.
fn find(
    v: &Value,
    path: &mut Vec<String>,
    check: &mut impl FnMut(&[String], &Value) -> Option<String>,
) -> Option<String> {
    if let Some(why) = check(path, v) {
        return Some(why);
    }
    match v {
        Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| {
            path.push(i.to_string());
            let r = find(x, path, check);
            path.pop();
            r
        }),
        Value::Object(o) => o.iter().find_map(|(k, x)| {
            path.push(k.clone());
            let r = find(x, path, check);
            path.pop();
            r
        }),
        _ => None,
    }
}

/// A time as RFC 3339 writes it: UTC (`Z`, or no zone at all as oscost's older runs did) or
/// a numeric offset from it (plus or minus hours and minutes, `+HH:MM`), as a point in time.
pub fn parse_time(s: &str) -> Option<std::time::SystemTime> {
    if let Ok(t) = humantime::parse_rfc3339_weak(s) {
        return Some(t);
    }
    let cut = s.len().checked_sub(6)?;
    let (base, zone) = (s.get(..cut)?, s.get(cut..)?.as_bytes());
    let digit = |i: usize| zone[i].is_ascii_digit().then(|| u64::from(zone[i] - b'0'));
    let (sign, colon) = (zone[0], zone[3]);
    if !matches!(sign, b'+' | b'-') || colon != b':' || !base.contains(['T', 't', ' ']) {
        return None;
    }
    let hours = digit(1)? * 10 + digit(2)?;
    let minutes = digit(4)? * 10 + digit(5)?;
    if hours > 23 || minutes > 59 {
        return None;
    }
    let local = humantime::parse_rfc3339_weak(base).ok()?;
    let offset = std::time::Duration::from_secs(hours * 3600 + minutes * 60);
    // Local time is UTC plus the offset.
    if sign == b'+' {
        local.checked_sub(offset)
    } else {
        local.checked_add(offset)
    }
}

/// What in a parsed run file no oscost writes, named by its field; None when nothing is.
pub fn problem(v: &Value) -> Option<String> {
    if v.get("schema_version").and_then(Value::as_u64) == Some(0) {
        return Some("schema_version is 0; oscost's run schema starts at 1".into());
    }
    match v.get("started_at") {
        Some(Value::String(s)) if parse_time(s).is_some() => {}
        Some(Value::String(s)) => {
            return Some(format!(
                "started_at \"{}\" is not a time (RFC 3339, e.g. 2026-01-02T10:00:00Z)",
                crate::escape::terminal(&s.chars().take(64).collect::<String>())
            ))
        }
        _ => return Some("started_at is missing or not text".into()),
    }
    if let Some(Value::String(h)) = v.pointer("/machine/hostname") {
        if h.len() > MAX_HOST {
            return Some(format!(
                "machine.hostname is {} bytes long; a host name has at most {MAX_HOST}",
                h.len()
            ));
        }
    }
    if let Some(Value::Object(labels)) = v.get("labels") {
        for (k, l) in labels {
            let Value::String(l) = l else {
                return Some(format!("labels.{k} is not text"));
            };
            if let Err(why) = check_label(k, l) {
                return Some(why);
            }
        }
    }
    find(v, &mut Vec::new(), &mut |path, x| {
        let field = || path.join(".");
        match x {
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(f64::INFINITY);
                (!x.is_finite() || x.abs() > MAX_MAGNITUDE).then(|| {
                    format!(
                        "{} = {x:e} is beyond ±{MAX_MAGNITUDE:e}, which no measurement produces",
                        field()
                    )
                })
            }
            Value::String(s) if s.len() > MAX_TEXT => Some(format!(
                "{} is {} bytes of text; no field oscost writes is longer than {MAX_TEXT}",
                field(),
                s.len()
            )),
            Value::Object(o) => o
                .keys()
                .find(|k| k.len() > MAX_TEXT)
                .map(|k| format!("{} has a key of {} bytes", field(), k.len())),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_named_with_its_place() {
        assert!(no_duplicate_keys(r#"{"a": 1, "b": {"c": [1, {"d": 2}]}}"#).is_ok());
        let e = no_duplicate_keys(r#"{"a": 1, "a": 2}"#).unwrap_err();
        assert!(
            e.starts_with("the key \"a\" is given twice in the run"),
            "{e}"
        );
        let e = no_duplicate_keys(r#"{"m": [{"x": 1}, {"h": "a", "h": "b"}]}"#).unwrap_err();
        assert!(e.contains("\"h\" is given twice in m.1 at line 1"), "{e}");
    }

    #[test]
    fn each_rule_names_its_field() {
        let ok = serde_json::json!({
            "schema_version": 1,
            "started_at": "2026-01-02T10:00:00Z",
            "machine": {"hostname": "vm"},
            "labels": {"host": "vm", "rack": "b4"},
            "measurements": [{"samples": [1.5, -2e17]}]
        });
        assert_eq!(problem(&ok), None);
        let with = |ptr: &str, x: Value| {
            let mut v = ok.clone();
            *v.pointer_mut(ptr).unwrap() = x;
            problem(&v).unwrap_or_default()
        };
        assert!(with("/schema_version", 0.into()).contains("schema_version is 0"));
        assert!(with("/started_at", "not a date".into()).contains("started_at \"not a date\""));
        assert!(with("/machine/hostname", "h".repeat(256).into())
            .contains("machine.hostname is 256 bytes"));
        assert_eq!(with("/machine/hostname", "h".repeat(255).into()), "");
        assert!(with("/labels/rack", "\u{202E}x".into()).starts_with("label rack"));
        assert!(with("/labels/rack", "".into()).contains("label rack"));
        assert!(with("/measurements/0/samples/1", 1e19.into())
            .starts_with("measurements.0.samples.1 = 1e19 is beyond"));
        assert!(with("/machine/hostname", "x".into()).is_empty());
        let mut v = ok.clone();
        v["tool_version"] = "w".repeat(MAX_TEXT + 1).into();
        assert!(problem(&v)
            .unwrap()
            .starts_with("tool_version is 16385 bytes"));
        let mut v = ok.clone();
        v["labels"]["Bad Key"] = "x".into();
        assert!(problem(&v)
            .unwrap()
            .contains("'Bad Key' is not a label key"));
    }
}
