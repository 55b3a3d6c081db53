//! The one error type of the simulator. Every message is a single line that names the PC, the
//! file property or the parameter at fault, so a caller can print it as is.

use std::fmt;

use crate::trap::cause_name;

/// Why loading or running a program stopped without a normal exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// The file is not an ELF this machine can run (class, endianness, machine, layout).
    Elf(String),
    /// A configuration value is out of range (cache geometry, memory size ...).
    Config(String),
    /// A trap was raised but no handler is installed (mtvec does not point into memory).
    UnhandledTrap {
        cause: u32,
        pc: u32,
        tval: u32,
        mtvec: u32,
    },
    /// The program executed `limit` instructions without exiting.
    InstructionLimit { limit: u64, pc: u32 },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Elf(m) => write!(f, "bad ELF file: {m}"),
            SimError::Config(m) => write!(f, "bad simulator parameter: {m}"),
            SimError::UnhandledTrap {
                cause,
                pc,
                tval,
                mtvec,
            } => write!(
                f,
                "{} at pc 0x{pc:08x} (mtval 0x{tval:08x}) and no trap handler (mtvec = 0x{mtvec:08x})",
                cause_name(*cause)
            ),
            SimError::InstructionLimit { limit, pc } => write!(
                f,
                "program did not exit after {limit} instructions (pc 0x{pc:08x}); raise the limit or check for an endless loop"
            ),
        }
    }
}

impl std::error::Error for SimError {}
