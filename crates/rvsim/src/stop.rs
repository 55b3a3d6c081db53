//! Why a run ended. Every run ends with one of these, and the statistics up to that point are
//! always available: a program that crashes or loops is exactly the one whose counts a user
//! wants to see.

use std::fmt;

use crate::trap::*;

/// The reason a run stopped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// The exit call of the program ABI (`ecall` with a7 = 93 and no trap handler installed).
    Exit(i32),
    /// The program wrote this value to its `tohost` symbol (HTIF, as on spike): an odd value
    /// `(status << 1) | 1` ends the run with that status (riscv-tests: 1 = pass).
    Tohost(u32),
    /// Execution reached address 0 outside memory: the return from a `main` entered with
    /// `ra = 0` (programs without start-up code). The status is `a0`.
    ReturnToZero(i32),
    /// `ebreak` with no trap handler installed (no debugger attached).
    Ebreak { pc: u32 },
    /// A trap with no handler installed (`mtvec` is 0 or outside memory).
    Trap { cause: u32, pc: u32, tval: u32 },
    /// The instruction limit was reached.
    Limit { limit: u64, pc: u32 },
    /// The wall-clock time limit (`Config::time_limit`, in seconds) ran out after this many
    /// instruction steps. Unlike every other ending it depends on the host's speed: the same
    /// program and configuration may stop elsewhere on another run.
    TimeLimit {
        seconds: f64,
        instructions: u64,
        pc: u32,
    },
}

impl Stop {
    /// A short machine-readable name: exit, tohost, return, ebreak, trap, limit
    /// or time-limit.
    pub fn kind(&self) -> &'static str {
        match self {
            Stop::Exit(_) => "exit",
            Stop::Tohost(_) => "tohost",
            Stop::ReturnToZero(_) => "return",
            Stop::Ebreak { .. } => "ebreak",
            Stop::Trap { .. } => "trap",
            Stop::Limit { .. } => "limit",
            Stop::TimeLimit { .. } => "time-limit",
        }
    }

    /// The status the program itself reported, when it reported one.
    pub fn status(&self) -> Option<i32> {
        match *self {
            Stop::Exit(s) | Stop::ReturnToZero(s) => Some(s),
            Stop::Tohost(v) if v & 1 == 1 => Some((v >> 1) as i32),
            _ => None,
        }
    }

    /// The process exit code a command line should use for this ending, shell-style:
    /// the program's status when it gave one (255 when outside 0..=255), 128 + a signal
    /// number for a trap (SIGTRAP 5 for ebreak, SIGILL 4, SIGBUS 7 for misaligned accesses,
    /// SIGSEGV 11 for access faults, SIGSYS 31 for an unknown ecall), 124 for the
    /// instruction and time limits (as `timeout` does) and 125 for an HTIF command that is not an exit.
    pub fn exit_code(&self) -> u8 {
        match *self {
            Stop::Exit(_) | Stop::ReturnToZero(_) | Stop::Tohost(_) => match self.status() {
                Some(s) => u8::try_from(s).unwrap_or(255),
                None => 125,
            },
            Stop::Ebreak { .. } => 128 + 5,
            Stop::Trap { cause, .. } => match cause {
                ILLEGAL_INSTRUCTION => 128 + 4,
                BREAKPOINT => 128 + 5,
                INSTRUCTION_MISALIGNED | LOAD_MISALIGNED | STORE_MISALIGNED => 128 + 7,
                ECALL_FROM_M => 128 + 31,
                _ => 128 + 11,
            },
            Stop::Limit { .. } | Stop::TimeLimit { .. } => 124,
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Stop::Exit(s) => write!(f, "exit call with status {s}"),
            Stop::Tohost(v) if v & 1 == 1 => {
                write!(f, "tohost write 0x{v:x}: status {}", v >> 1)?;
                match v >> 1 {
                    0 => write!(f, " (riscv-tests: pass)"),
                    n => write!(f, " (riscv-tests: test case {n} failed)"),
                }
            }
            Stop::Tohost(v) => write!(f, "tohost write 0x{v:x}: an HTIF command (not modeled)"),
            Stop::ReturnToZero(s) => write!(f, "returned to address 0 with a0 = {s}"),
            Stop::Ebreak { pc } => {
                write!(f, "ebreak at pc 0x{pc:08x} with no trap handler (no debugger)")
            }
            Stop::Trap { cause, pc, tval } => write!(
                f,
                "unhandled trap: {} (mcause {cause}) at pc 0x{pc:08x}, mtval 0x{tval:08x}; no trap handler installed",
                cause_name(cause)
            ),
            Stop::Limit { limit, pc } => write!(
                f,
                "instruction limit of {limit} reached at pc 0x{pc:08x}"
            ),
            Stop::TimeLimit {
                seconds,
                instructions,
                pc,
            } => write!(
                f,
                "time limit of {seconds} s reached after {instructions} instructions at pc 0x{pc:08x} (where a run stops by time depends on the host: not deterministic)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_exit_codes() {
        assert_eq!(Stop::Exit(3).exit_code(), 3);
        assert_eq!(Stop::Exit(-1).exit_code(), 255);
        assert_eq!(Stop::Exit(256).exit_code(), 255);
        assert_eq!(Stop::Tohost(1).status(), Some(0));
        assert_eq!(Stop::Tohost(7).status(), Some(3));
        assert_eq!(Stop::Tohost(8).status(), None);
        assert_eq!(Stop::Tohost(8).exit_code(), 125);
        assert_eq!(Stop::ReturnToZero(9).exit_code(), 9);
        assert_eq!(Stop::Ebreak { pc: 0 }.exit_code(), 133);
        let trap = |cause| {
            Stop::Trap {
                cause,
                pc: 0,
                tval: 0,
            }
            .exit_code()
        };
        assert_eq!(trap(ILLEGAL_INSTRUCTION), 132);
        assert_eq!(trap(LOAD_MISALIGNED), 135);
        assert_eq!(trap(LOAD_ACCESS_FAULT), 139);
        assert_eq!(trap(ECALL_FROM_M), 159);
        assert_eq!(Stop::Limit { limit: 1, pc: 0 }.exit_code(), 124);
        let time = Stop::TimeLimit {
            seconds: 0.5,
            instructions: 7,
            pc: 0x100,
        };
        assert_eq!((time.kind(), time.exit_code()), ("time-limit", 124));
        assert!(time
            .to_string()
            .starts_with("time limit of 0.5 s reached after 7 instructions at pc 0x00000100"));
        assert!(Stop::Tohost(5).to_string().contains("test case 2 failed"));
    }
}
