//! Reading a file that must be a regular file of bounded size, without ever waiting on a
//! FIFO or reading a device until memory runs out.

use crate::units::size::{fmt_bytes, ByteStyle};
use std::path::Path;

use crate::error::{Error, Result};

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

/// Memory that parsing takes per JSON value: serde_json's 32-byte value, the slack of the
/// vectors that hold them, and what the run keeps of it (an f64 per sample). Measured: a
/// 46 MiB file of 4 million samples peaked at 216 MiB resident, about 50 bytes a value.
pub const PARSE_BYTES_PER_VALUE: u64 = 64;

/// Refuses, before parsing, a run file whose values this process could not hold
/// (`ulimit -v`, an address-space limit): an allocation failure in the middle of parsing
/// aborts the process instead of saying so. The values are counted by their separators
/// (`,` and `:`), so a file of short numbers needs more than one of long ones; the memory is
/// only reserved, never touched, and given back at once.
pub fn room_to_parse(path: &Path, bytes: &[u8]) -> Result<()> {
    let values = bytes.iter().filter(|&&b| b == b',' || b == b':').count() as u64 + 1;
    let need = values.saturating_mul(PARSE_BYTES_PER_VALUE);
    let mut probe: Vec<u8> = Vec::new();
    if usize::try_from(need).is_ok_and(|n| probe.try_reserve_exact(n).is_ok()) {
        return Ok(());
    }
    Err(Error::usage(format!(
        "{}: parsing this {} file takes about {} more memory, which this process cannot get \
         (ulimit -v or a memory limit?); raise the limit or read it elsewhere",
        path.display(),
        fmt_bytes(bytes.len() as f64, ByteStyle::GibMib),
        fmt_bytes(need as f64, ByteStyle::GibMib)
    )))
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
            fmt_bytes(cap as f64, ByteStyle::Trimmed)
        ))
    };
    if meta.len() > cap {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(meta.len() as usize).map_err(|_| {
        Error::usage(format!(
            "{shown}: cannot get the memory to read its {} (ulimit -v or a memory limit?)",
            fmt_bytes(meta.len() as f64, ByteStyle::GibMib)
        ))
    })?;
    // A file that grows while it is read stops at the cap too.
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&shown, e))?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::read_run;

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
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
}
