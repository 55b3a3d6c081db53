//! Reading run JSON written by `oscost run --json` (or exported from history), with one clear
//! line for every way a file can be wrong: not a regular file or too large ([`file`]),
//! unreadable, not JSON, truncated, not an oscost run, written by a newer oscost whose schema
//! this build does not know, or holding what no oscost writes ([`validate`]: duplicate keys,
//! absurd numbers, unbounded text, a start time that is no time).

mod file;
pub mod validate;

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::{Run, SCHEMA_VERSION};
pub use file::{kind_of, read_regular};
pub use validate::{check_label, MAX_MAGNITUDE};

/// The largest run file read: far beyond any run oscost writes (a long sweep is a few MB),
/// small enough that parsing it cannot take the machine's memory.
pub const MAX_RUN_FILE: u64 = 1 << 30;

/// Reads and checks one run file; errors name the file and the problem (exit code 2).
pub fn read_run(path: &Path) -> Result<Run> {
    let bytes = read_regular(path, MAX_RUN_FILE, "a run file")?;
    file::room_to_parse(path, &bytes)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!(
            "{}: not a run file (not UTF-8 text)",
            path.display()
        ))
    })?;
    parse_run(&text, &path.display().to_string())
}

/// Parses run JSON from `text`; `name` is used in error messages (a file name, "run 12").
pub fn parse_run(text: &str, name: &str) -> Result<Run> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        if e.is_eof() {
            Error::usage(format!(
                "{name}: truncated JSON ({e}); was the run interrupted while writing?"
            ))
        } else {
            Error::usage(format!("{name}: not valid JSON ({e})"))
        }
    })?;
    let obj = value.as_object().ok_or_else(|| {
        Error::usage(format!(
            "{name}: not an oscost run (expected a JSON object)"
        ))
    })?;
    let version = match obj.get("schema_version") {
        Some(v) => v.as_u64().ok_or_else(|| match v {
            // A number, but no version: negative or with a fraction.
            serde_json::Value::Number(n) => Error::usage(format!(
                "{name}: not an oscost run (schema_version is {n}; a schema version is a whole \
                 number from 1)"
            )),
            _ => Error::usage(format!(
                "{name}: not an oscost run (schema_version is not a number)"
            )),
        })?,
        None => {
            return Err(Error::usage(format!(
                "{name}: not an oscost run (no schema_version field)"
            )))
        }
    };
    if !obj.contains_key("measurements") || !obj.contains_key("machine") {
        return Err(Error::usage(format!(
            "{name}: not an oscost run (no measurements or machine)"
        )));
    }
    if version > u64::from(SCHEMA_VERSION) {
        return Err(Error::usage(format!(
            "{name}: written with run schema {version}, this oscost reads up to {SCHEMA_VERSION}; upgrade oscost"
        )));
    }
    validate::no_duplicate_keys(text).map_err(|e| Error::usage(format!("{name}: {e}")))?;
    if let Some(why) = validate::problem(&value) {
        return Err(Error::usage(format!("{name}: {why}; refusing the file")));
    }
    let mut value = value;
    // One form for every time, so that runs sort by it: a numeric offset becomes UTC.
    if let Some(utc) = value
        .get("started_at")
        .and_then(serde_json::Value::as_str)
        .filter(|s| humantime::parse_rfc3339_weak(s).is_err())
        .and_then(validate::parse_time)
    {
        value["started_at"] = humantime::format_rfc3339(utc).to_string().into();
    }
    inert_value(&mut value);
    let mut run: Run = serde_json::from_value(value)
        .map_err(|e| Error::usage(format!("{name}: not a valid oscost run ({e})")))?;
    for m in run.measurements.iter_mut() {
        m.settle_status();
        crate::model::switch_trace::lift_legacy(m);
    }
    Ok(run)
}

/// Every string and key of a JSON value with the characters that would act on a terminal or
/// a renderer (control and bidirectional characters) replaced by their escapes
/// ([`crate::escape::terminal`]): run text read from anywhere can then reach no output raw.
pub fn inert_value(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(e) = crate::escape::terminal(s) {
                *s = e;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(inert_value),
        Value::Object(o) => {
            if o.keys().any(|k| k.chars().any(crate::escape::is_unsafe)) {
                *o = std::mem::take(o)
                    .into_iter()
                    .map(|(k, x)| (crate::escape::terminal(&k).into_owned(), x))
                    .collect();
            }
            o.values_mut().for_each(inert_value);
        }
        _ => {}
    }
}

/// `x` (a run measured here, this machine's facts) with its text made inert as
/// [`inert_value`] does for what is read: a host name, a CPU model from the hypervisor or a
/// command-line argument can hold control characters too.
pub fn inert<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(x: &T) -> T {
    let Ok(mut v) = serde_json::to_value(x) else {
        return x.clone();
    };
    inert_value(&mut v);
    serde_json::from_value(v).unwrap_or_else(|_| x.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../tests/fixtures/run-quick.json");

    fn err(text: &str) -> String {
        let e = parse_run(text, "x.json").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        e.to_string()
    }

    /// Every unit of the recorded runs is one this version makes, and reads back as the
    /// text it was recorded as.
    #[test]
    fn recorded_units_are_known_and_read_back_as_recorded() {
        use crate::units::{Per, Unit};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut files = vec![dir.join("run-quick.json")];
        for sub in ["runs", "compare"] {
            for e in std::fs::read_dir(dir.join(sub)).unwrap() {
                files.push(e.unwrap().path());
            }
        }
        let mut seen = 0;
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|x| x == "json"))
        {
            let text = std::fs::read_to_string(f).unwrap();
            let run = parse_run(&text, "fixture").unwrap();
            let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
            for (m, r) in run
                .measurements
                .iter()
                .zip(raw["measurements"].as_array().unwrap())
            {
                for (u, field) in [(&m.unit, "unit"), (&m.raw_unit, "raw_unit")] {
                    let known = !matches!(u, Unit::Other(_) | Unit::Ns(Some(Per::Other(_))));
                    assert!(known, "{}: {} {u}", f.display(), m.probe);
                    assert_eq!(u.to_string(), r[field].as_str().unwrap_or(""));
                    seen += 1;
                }
            }
        }
        assert!(seen > 100, "{seen}");
    }

    #[test]
    fn fixture_parses() {
        let run = parse_run(FIXTURE, "fixture").unwrap();
        assert!(!run.measurements.is_empty());
    }

    #[test]
    fn truncated_file_is_named_as_truncated() {
        let m = err(&FIXTURE[..FIXTURE.len() / 2]);
        assert!(m.starts_with("x.json: truncated JSON"), "{m}");
    }

    #[test]
    fn other_json_is_not_a_run() {
        assert!(err("[1,2]").contains("not an oscost run"));
        assert!(err(r#"{"name": "package.json"}"#).contains("no schema_version"));
        assert!(err("hello").contains("not valid JSON"));
    }

    #[test]
    fn newer_schema_is_refused_with_versions() {
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["schema_version"] = (SCHEMA_VERSION + 1).into();
        let m = err(&v.to_string());
        assert!(
            m.contains(&format!("schema {}", SCHEMA_VERSION + 1)) && m.contains("upgrade"),
            "{m}"
        );
    }

    #[test]
    fn absurd_numbers_are_refused_with_the_field() {
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["measurements"][0]["value"]["ci95"][1] = serde_json::json!(1e308);
        let m = err(&v.to_string());
        assert!(m.contains("measurements.0.value.ci95.1 = 1e308"), "{m}");
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["measurements"][1]["samples"][0] = serde_json::json!(-2e18);
        assert!(err(&v.to_string()).contains("beyond"));
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["measurements"][1]["samples"][0] = serde_json::json!(-9e17);
        parse_run(&v.to_string(), "x.json").unwrap();
    }

    #[test]
    fn a_time_with_an_offset_is_a_time_and_is_kept_in_utc() {
        let with = |t: &str| {
            let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
            v["started_at"] = t.into();
            parse_run(&v.to_string(), "x.json")
        };
        let r = with("2026-01-01T10:00:00+14:00").unwrap();
        assert_eq!(r.started_at, "2025-12-31T20:00:00Z");
        let r = with("2026-01-01T10:00:00.5-09:30").unwrap();
        assert_eq!(r.started_at, "2026-01-01T19:30:00.500000000Z");
        assert_eq!(
            with("2026-01-01T10:00:00Z").unwrap().started_at,
            "2026-01-01T10:00:00Z"
        );
        for bad in [
            "2026-01-01T10:00:00+24:00",
            "2026-01-01T10:00:00+14:60",
            "2026-01-01T10:00:00+1400",
            "2026-01-01+14:00",
            "+14:00",
        ] {
            let e = with(bad).unwrap_err().to_string();
            assert!(e.contains("is not a time"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_schema_version_that_is_a_number_but_no_version_says_so() {
        for (v, says) in [
            (
                serde_json::json!(-1),
                "schema_version is -1; a schema version is a whole",
            ),
            (
                serde_json::json!(1.5),
                "schema_version is 1.5; a schema version is a whole",
            ),
            (serde_json::json!("1"), "schema_version is not a number"),
        ] {
            let mut r: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
            r["schema_version"] = v;
            let e = err(&r.to_string());
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn what_no_oscost_writes_is_refused_with_the_field() {
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["schema_version"] = 0.into();
        assert!(err(&v.to_string()).starts_with("x.json: schema_version is 0"));
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["started_at"] = "not a date".into();
        assert!(err(&v.to_string()).contains("started_at \"not a date\" is not a time"));
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["machine"]["hostname"] = "h".repeat(1 << 20).into();
        assert!(err(&v.to_string()).contains("machine.hostname is 1048576 bytes"));
        // A key twice: the text as written, which a JSON value cannot hold.
        let twice = FIXTURE.replacen("\"started_at\"", "\"started_at\": \"x\", \"started_at\"", 1);
        assert!(err(&twice).contains("the key \"started_at\" is given twice in the run"));
    }

    #[test]
    fn run_text_is_read_inert() {
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["machine"]["hostname"] = "h\u{1b}]0;x\u{7}".into();
        v["measurements"][0]["params"]["m\u{202e}"] = "\u{9b}2J".into();
        let run = parse_run(&v.to_string(), "x.json").unwrap();
        assert_eq!(run.machine.hostname.as_deref(), Some("h\\u{1b}]0;x\\u{7}"));
        let text = serde_json::to_string(&run).unwrap();
        assert!(
            !text.contains("\\u001b") && !text.contains('\u{202e}'),
            "{text}"
        );
        assert!(text.contains("\"m\\\\u{202e}\":\"\\\\u{9b}2J\""), "{text}");
        // A live run the same way, and text without such characters is left as it is.
        let mut live = run.clone();
        live.command = vec!["oscost".into(), "\u{1b}[2J".into()];
        assert_eq!(inert(&live).command[1], "\\u{1b}[2J");
        assert_eq!(
            serde_json::to_value(inert(&run)).unwrap(),
            serde_json::to_value(&run).unwrap()
        );
    }

    #[test]
    fn wrong_field_types_are_reported() {
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["measurements"] = "nope".into();
        assert!(err(&v.to_string()).contains("not a valid oscost run"));
    }
}
