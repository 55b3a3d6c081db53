//! Reading run JSON written by `oscost run --json` (or exported from history), with one clear
//! line for every way a file can be wrong: unreadable, not JSON, truncated, not an oscost run,
//! or written by a newer oscost whose schema this build does not know.

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::{Run, SCHEMA_VERSION};

/// The largest run file read: far beyond any run oscost writes (a long sweep is a few MB),
/// small enough that parsing it cannot take the machine's memory.
pub const MAX_RUN_FILE: u64 = 1 << 30;

/// Reads and checks one run file; errors name the file and the problem (exit code 2).
pub fn read_run(path: &Path) -> Result<Run> {
    let bytes = read_regular(path, MAX_RUN_FILE, "a run file")?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!(
            "{}: not a run file (not UTF-8 text)",
            path.display()
        ))
    })?;
    parse_run(&text, &path.display().to_string())
}

/// What a file that is not a regular file is, in words.
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symlink"
    } else {
        "a regular file"
    }
}

/// Reads `path` when it is a regular file (or a symlink to one) of at most `cap` bytes;
/// `what` names what it should be ("a run file") in the refusal of anything else. Opened
/// with `O_NONBLOCK` and checked on the opened descriptor, so a FIFO is refused at once,
/// never waited on, and a device (`/dev/zero`) is never read until memory runs out.
pub fn read_regular(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::usage(format!("{shown}: {e}")))?;
    let meta = file.metadata().map_err(|e| Error::io(&shown, e))?;
    if !meta.is_file() {
        return Err(Error::usage(format!(
            "{shown}: {}, not {what} (only regular files are read)",
            kind_of(meta.file_type())
        )));
    }
    let too_big = || {
        Error::usage(format!(
            "{shown}: larger than {what} can be ({}); refusing to read it",
            crate::units::size::fmt_bytes(cap as f64)
        ))
    };
    if meta.len() > cap {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file that grows while it is read stops at the cap too.
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&shown, e))?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    Ok(bytes)
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
    check_magnitudes(&value, name)?;
    serde_json::from_value(value)
        .map_err(|e| Error::usage(format!("{name}: not a valid oscost run ({e})")))
}

/// The largest magnitude any measured number may have (1e18: beyond every count, size or
/// duration in nanoseconds a machine produces, and far enough from f64's limit that a
/// plot's axis range, max − min, stays finite).
pub const MAX_MAGNITUDE: f64 = 1e18;

/// Refuses a run (measurements or machine facts) holding a number no measurement can produce: plotting
/// ±1e308 made an infinite axis range and hung the plotting library's tick search. Names
/// the field so a hand-edited file can be fixed.
fn check_magnitudes(v: &serde_json::Value, name: &str) -> Result<()> {
    fn walk(v: &serde_json::Value, path: &mut Vec<String>) -> Option<(String, f64)> {
        match v {
            serde_json::Value::Number(n) => {
                let x = n.as_f64().unwrap_or(f64::INFINITY);
                (!x.is_finite() || x.abs() > MAX_MAGNITUDE).then(|| (path.join("."), x))
            }
            serde_json::Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| {
                path.push(i.to_string());
                let r = walk(x, path);
                path.pop();
                r
            }),
            serde_json::Value::Object(o) => o.iter().find_map(|(k, x)| {
                path.push(k.clone());
                let r = walk(x, path);
                path.pop();
                r
            }),
            _ => None,
        }
    }
    match walk(v, &mut Vec::new()) {
        Some((field, x)) => Err(Error::usage(format!(
            "{name}: {field} = {x:e} is beyond ±{MAX_MAGNITUDE:e}, which no measurement produces; refusing the file"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../tests/fixtures/run-quick.json");

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
    fn only_regular_files_of_bounded_size_are_read() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would wait forever; this returns at once.
        let e = read_run(&fifo).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("fifo: a FIFO, not a run file (only regular files are read)"),
            "{e}"
        );
        assert_eq!(e.exit_code(), 2);
        for (p, kind) in [("/dev/zero", "a character device"), ("/", "a directory")] {
            let e = read_run(Path::new(p)).unwrap_err().to_string();
            assert!(e.contains(kind), "{p}: {e}");
        }
        let big = t.path().join("big.json");
        std::fs::write(&big, vec![b' '; 4097]).unwrap();
        let e = read_regular(&big, 4096, "a run file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("larger than a run file can be (4 KiB)"), "{e}");
        assert_eq!(read_regular(&big, 4097, "x").unwrap().len(), 4097);
        let link = t.path().join("link.json");
        std::os::unix::fs::symlink(&big, &link).unwrap();
        assert_eq!(read_regular(&link, 4097, "x").unwrap().len(), 4097);
        std::fs::write(&big, [0xff, 0xfe]).unwrap();
        assert!(read_run(&big)
            .unwrap_err()
            .to_string()
            .contains("not UTF-8"));
    }

    #[test]
    fn wrong_field_types_are_reported() {
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        v["measurements"] = "nope".into();
        assert!(err(&v.to_string()).contains("not a valid oscost run"));
    }
}
