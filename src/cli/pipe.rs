//! Standard output that fails ends oscost as it ends Unix tools, never as a crash: a closed
//! pipe (`oscost history list | head -1`) quietly with exit 141 (128 + SIGPIPE), any other
//! failure (`>/dev/full`: no space; a file size limit) with one line and exit 2. Rust ignores
//! SIGPIPE, so `print!` panics with "failed printing to stdout: …"; the entry point
//! recognizes that panic and, after unwinding has run every cleanup guard, exits so. A
//! measuring command writes its table through [`print_out`] instead, after the run is kept.

use std::any::Any;
use std::io::Write;

/// The exit code of a process killed by SIGPIPE, which scripts already expect.
pub const EXIT_BROKEN_PIPE: i32 = 128 + libc::SIGPIPE;

/// The text std's `print!` panics with when standard output fails.
const PRINT_FAILED: &str = "failed printing to stdout: ";

/// How standard output failed.
#[derive(Debug, PartialEq, Eq)]
pub enum StdoutFailure {
    /// The reader has gone (EPIPE).
    Closed,
    /// Any other error, as the OS words it.
    Failed(String),
}

/// Why [`print_out`] printed nothing, or not all.
#[derive(Debug)]
pub enum Unprinted {
    Closed,
    Failed(std::io::Error),
}

/// Writes `bytes` to standard output and flushes it.
pub fn print_out(bytes: &[u8]) -> Result<(), Unprinted> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Unprinted::Closed,
            _ => Unprinted::Failed(e),
        })
}

/// Ends the command as a closed standard output does (exit 141, nothing printed), unwinding
/// so every guard on the way out still runs.
pub fn end_closed() -> ! {
    std::panic::resume_unwind(Box::new(format!(
        "{PRINT_FAILED}{}",
        std::io::Error::from_raw_os_error(libc::EPIPE)
    )))
}

/// The standard-output failure a panic's payload reports, if it is one.
pub fn stdout_failure(payload: &(dyn Any + Send)) -> Option<StdoutFailure> {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())?;
    let why = msg.strip_prefix(PRINT_FAILED)?;
    let closed = why.contains("Broken pipe") || why.contains("os error 32");
    Some(if closed {
        StdoutFailure::Closed
    } else {
        StdoutFailure::Failed(why.to_string())
    })
}

/// The exit code of a command that a failed standard output ended.
pub fn exit_code(f: &StdoutFailure) -> i32 {
    match f {
        StdoutFailure::Closed => EXIT_BROKEN_PIPE,
        StdoutFailure::Failed(_) => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// True for the panic `print!` raises when standard output is a closed pipe.
    fn is_broken_pipe(payload: &(dyn Any + Send)) -> bool {
        stdout_failure(payload) == Some(StdoutFailure::Closed)
    }

    #[test]
    fn only_stdout_panics_are_recognized_and_a_closed_pipe_apart() {
        let yes: Box<dyn Any + Send> = Box::new(String::from(
            "failed printing to stdout: Broken pipe (os error 32)",
        ));
        assert!(is_broken_pipe(yes.as_ref()));
        let no: Box<dyn Any + Send> = Box::new("index out of bounds");
        assert!(!is_broken_pipe(no.as_ref()));
        assert_eq!(stdout_failure(no.as_ref()), None);
        let full: Box<dyn Any + Send> = Box::new(String::from(
            "failed printing to stdout: No space left on device (os error 28)",
        ));
        assert!(!is_broken_pipe(full.as_ref()));
        let f = stdout_failure(full.as_ref()).unwrap();
        assert_eq!(
            f,
            StdoutFailure::Failed("No space left on device (os error 28)".into())
        );
        assert_eq!(exit_code(&f), 2);
        assert_eq!(EXIT_BROKEN_PIPE, 141);
        // The payload end_closed unwinds with is a closed pipe.
        let ours = std::panic::catch_unwind(|| end_closed()).unwrap_err();
        assert!(is_broken_pipe(ours.as_ref()));
    }
}
