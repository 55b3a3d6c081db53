//! tracefs: where it is, mounting it when absent (as root), and reading an event's id and the
//! field layout of its records from `events/<group>/<name>/{id,format}` — never hard-coded,
//! because ids differ between kernels and boots and field offsets between kernel versions.
//! (perf-event2's `Tracepoint::with_name` only looks under /sys/kernel/debug/tracing, so the id
//! read here is passed to `Tracepoint::with_id`.)

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// One field of a tracepoint record, from its format file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
}

/// An event's id and record layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// "sched:sched_switch".
    pub name: String,
    pub id: u64,
    pub fields: Vec<Field>,
}

impl Format {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// Parse a format file's text. The field name is the last word of the declaration, without an
/// array suffix (`char prev_comm[16]` → `prev_comm`).
pub fn parse_format(name: &str, id: u64, text: &str) -> Result<Format> {
    let mut fields = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("field:") else {
            continue;
        };
        let mut decl = None;
        let (mut offset, mut size, mut signed) = (None, None, false);
        for part in rest.split(';').map(str::trim) {
            if let Some(v) = part.strip_prefix("offset:") {
                offset = v.parse().ok();
            } else if let Some(v) = part.strip_prefix("size:") {
                size = v.parse().ok();
            } else if let Some(v) = part.strip_prefix("signed:") {
                signed = v == "1";
            } else if decl.is_none() && !part.is_empty() {
                decl = Some(part);
            }
        }
        let (Some(decl), Some(offset), Some(size)) = (decl, offset, size) else {
            return Err(Error::env(format!(
                "tracefs format of {name}: cannot read the line '{line}'"
            )));
        };
        let word = decl.split_whitespace().last().unwrap_or(decl);
        let word = word.split('[').next().unwrap_or(word);
        fields.push(Field {
            name: word.to_string(),
            offset,
            size,
            signed,
        });
    }
    if fields.is_empty() {
        return Err(Error::env(format!(
            "tracefs format of {name} lists no fields"
        )));
    }
    Ok(Format {
        name: name.into(),
        id,
        fields,
    })
}

/// Read a little-endian integer field of `size` bytes at `offset` (sign-extended if signed).
pub fn read_int(raw: &[u8], f: &Field) -> Option<i64> {
    let b = raw.get(f.offset..f.offset + f.size)?;
    let mut v: u64 = 0;
    for (i, byte) in b.iter().enumerate().take(8) {
        v |= (*byte as u64) << (8 * i);
    }
    if f.signed && f.size < 8 && f.size > 0 {
        let shift = 64 - 8 * f.size as u32;
        return Some(((v << shift) as i64) >> shift);
    }
    Some(v as i64)
}

/// tracefs, mounted for as long as this lives when we mounted it.
pub struct Tracefs {
    pub root: PathBuf,
    /// The mount this process made (journaled first, so the next start unmounts it if this
    /// process is killed; see `journal::mount`).
    _mounted: Option<crate::journal::MountGuard>,
}

/// Where tracefs usually is.
const CANDIDATES: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

impl Tracefs {
    /// Find tracefs, or mount it at /sys/kernel/tracing (root only). The error says what is
    /// missing and how to get it.
    pub fn open() -> Result<Tracefs> {
        for c in CANDIDATES {
            if Path::new(c).join("events").is_dir() {
                return Ok(Tracefs {
                    root: c.into(),
                    _mounted: None,
                });
            }
        }
        let m = crate::journal::Mount::Tracefs;
        let target = Path::new(m.target());
        if !target.is_dir() {
            return Err(Error::env(
                "tracefs is not available (no /sys/kernel/tracing): a kernel with \
                 CONFIG_TRACING is needed",
            ));
        }
        match crate::journal::MountGuard::mount(m)? {
            Ok(guard) => Ok(Tracefs {
                root: target.into(),
                _mounted: Some(guard),
            }),
            // Mounted by someone else in between: use it.
            Err(_) if target.join("events").is_dir() => Ok(Tracefs {
                root: target.into(),
                _mounted: None,
            }),
            Err(e) => Err(Error::env(format!(
                "tracefs is not mounted and mounting it failed ({e}): run as root, or \
                 `sudo mount -t tracefs nodev /sys/kernel/tracing`"
            ))),
        }
    }

    /// The id and format of `group:name`, or None when this kernel has no such event.
    pub fn format(&self, event: &str) -> Result<Option<Format>> {
        let (group, name) = event
            .split_once(':')
            .ok_or_else(|| Error::usage(format!("'{event}' is not group:name")))?;
        let dir = self.root.join("events").join(group).join(name);
        if !dir.is_dir() {
            return Ok(None);
        }
        let read = |f: &str| {
            std::fs::read_to_string(dir.join(f)).map_err(|e| {
                Error::env(format!(
                    "cannot read {}: {e} (tracefs needs root)",
                    dir.join(f).display()
                ))
            })
        };
        let id: u64 = read("id")?
            .trim()
            .parse()
            .map_err(|_| Error::env(format!("{}: id is not a number", dir.display())))?;
        parse_format(event, id, &read("format")?).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = include_str!("../../../tests/fixtures/trace/sched_switch.format");

    #[test]
    fn format_fields_come_from_the_file() {
        let f = parse_format("sched:sched_switch", 372, SWITCH).unwrap();
        let next = f.field("next_pid").unwrap();
        assert_eq!((next.offset, next.size, next.signed), (56, 4, true));
        assert_eq!(f.field("prev_comm").unwrap().size, 16);
        assert!(f.field("nope").is_none());
        assert!(parse_format("x:y", 1, "name: y\nID: 1\n").is_err());
        assert!(parse_format("x:y", 1, "\tfield:int a;\toffset:x;\tsize:4;").is_err());
    }

    #[test]
    fn integers_are_little_endian_and_sign_extended() {
        let f = Field {
            name: "a".into(),
            offset: 1,
            size: 4,
            signed: true,
        };
        assert_eq!(read_int(&[0, 0xff, 0xff, 0xff, 0xff], &f), Some(-1));
        let u = Field {
            signed: false,
            ..f.clone()
        };
        assert_eq!(
            read_int(&[0, 0xff, 0xff, 0xff, 0xff], &u),
            Some(0xffff_ffff)
        );
        assert_eq!(read_int(&[0, 1], &f), None, "short record");
    }
}
