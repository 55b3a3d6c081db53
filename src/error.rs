//! One error type for the whole tool, and the exit code each kind maps to.
//!
//! The contract with users' scripts: 0 = ok, 1 = some measurement invalid (only with
//! `--strict`) or a regression gate tripped, 2 = bad usage, bad input or an environment that
//! cannot run what was asked, 128 + the signal when interrupted (130 Ctrl-C, 143 SIGTERM, 129
//! SIGHUP: the code the CLI picks from `engine::interrupt`). Never a panic or backtrace.

use std::fmt;

/// What went wrong, in words a user can act on.
#[derive(Debug)]
pub enum Error {
    /// Bad arguments or bad input files: names the bad value and what is allowed. Exit 2.
    Usage(String),
    /// The machine cannot do what was asked (missing permission, no room, no such CPU). Exit 2.
    Environment(String),
    /// Ctrl-C, SIGTERM or SIGHUP arrived; partners were reaped and nothing partial was
    /// written. Exit 128 + the signal (130 here, where the signal is not known).
    Interrupted,
}

impl Error {
    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }
    pub fn env(msg: impl Into<String>) -> Self {
        Error::Environment(msg.into())
    }
    /// An I/O failure on a named file, worded for the user.
    pub fn io(path: impl fmt::Display, err: std::io::Error) -> Self {
        Error::Environment(format!("{path}: {err}"))
    }
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::Environment(_) => 2,
            Error::Interrupted => 130,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Messages name files and values from runs: shown, never acted on by the terminal.
            Error::Usage(m) | Error::Environment(m) => f.write_str(&crate::escape::terminal(m)),
            Error::Interrupted => {
                f.write_str("interrupted: partners reaped, no partial results written")
            }
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
