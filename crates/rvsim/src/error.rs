//! The one error type of the simulator. Every message is a single line that names the PC, the
//! file property or the parameter at fault, so a caller can print it as is.

use std::fmt;

/// Why a program cannot be loaded or a machine cannot be built (how a run ends is a
/// [`crate::Stop`], never an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// The file is not an ELF this machine can run (class, endianness, machine, layout).
    Elf(String),
    /// A configuration value is out of range (cache geometry, memory size ...).
    Config(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Elf(m) => write!(f, "bad ELF file: {m}"),
            SimError::Config(m) => write!(f, "bad simulator parameter: {m}"),
        }
    }
}

impl std::error::Error for SimError {}
