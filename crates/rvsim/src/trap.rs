//! Trap causes (mcause values) of the privileged architecture, and their names for messages.

pub const INSTRUCTION_MISALIGNED: u32 = 0;
pub const INSTRUCTION_ACCESS_FAULT: u32 = 1;
pub const ILLEGAL_INSTRUCTION: u32 = 2;
pub const BREAKPOINT: u32 = 3;
pub const LOAD_MISALIGNED: u32 = 4;
pub const LOAD_ACCESS_FAULT: u32 = 5;
pub const STORE_MISALIGNED: u32 = 6;
pub const STORE_ACCESS_FAULT: u32 = 7;
pub const ECALL_FROM_M: u32 = 11;
/// Machine timer interrupt: the interrupt bit (31) set, code 7.
pub const MACHINE_TIMER_INTERRUPT: u32 = 0x8000_0007;

/// A synchronous exception raised by an instruction: mcause and mtval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exception {
    pub cause: u32,
    pub tval: u32,
}

impl Exception {
    pub fn new(cause: u32, tval: u32) -> Self {
        Exception { cause, tval }
    }
}

/// The name of an mcause value, as the specification words it.
pub fn cause_name(cause: u32) -> &'static str {
    match cause {
        INSTRUCTION_MISALIGNED => "instruction address misaligned",
        INSTRUCTION_ACCESS_FAULT => "instruction access fault (jump outside memory)",
        ILLEGAL_INSTRUCTION => "illegal instruction",
        BREAKPOINT => "breakpoint (ebreak)",
        LOAD_MISALIGNED => "misaligned load",
        LOAD_ACCESS_FAULT => "load access fault (address outside memory)",
        STORE_MISALIGNED => "misaligned store",
        STORE_ACCESS_FAULT => "store access fault (address outside memory)",
        ECALL_FROM_M => "ecall",
        MACHINE_TIMER_INTERRUPT => "machine timer interrupt",
        _ => "unknown trap",
    }
}
