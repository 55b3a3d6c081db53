//! Reading run JSON written by `oscost run --json` (or exported from history), with one clear
//! line for every way a file can be wrong: unreadable, not JSON, truncated, not an oscost run,
//! or written by a newer oscost whose schema this build does not know.

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::{Run, SCHEMA_VERSION};

/// Reads and checks one run file; errors name the file and the problem (exit code 2).
pub fn read_run(path: &Path) -> Result<Run> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
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
        Some(v) => v.as_u64().ok_or_else(|| {
            Error::usage(format!(
                "{name}: not an oscost run (schema_version is not a number)"
            ))
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
    serde_json::from_value(value)
        .map_err(|e| Error::usage(format!("{name}: not a valid oscost run ({e})")))
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
    fn wrong_field_types_are_reported() {
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["measurements"] = "nope".into();
        assert!(err(&v.to_string()).contains("not a valid oscost run"));
    }
}
