//! Machine-mode control and status registers (Zicsr), the subset a bare-metal M-mode program
//! uses: trap setup and handling, interrupt enables, and the counters.
//!
//! Counters (cycle, time, instret and their machine/high halves) are not stored here: the
//! machine supplies their current values on a read, so they cost nothing while not read.
//! Writes to the counters are ignored (they are read-only in this model).

pub const MSTATUS: u32 = 0x300;
pub const MISA: u32 = 0x301;
pub const MIE: u32 = 0x304;
pub const MTVEC: u32 = 0x305;
pub const MSTATUSH: u32 = 0x310;
pub const MCOUNTINHIBIT: u32 = 0x320;
pub const MSCRATCH: u32 = 0x340;
pub const MEPC: u32 = 0x341;
pub const MCAUSE: u32 = 0x342;
pub const MTVAL: u32 = 0x343;
pub const MIP: u32 = 0x344;
pub const MCYCLE: u32 = 0xB00;
pub const MINSTRET: u32 = 0xB02;
pub const MCYCLEH: u32 = 0xB80;
pub const MINSTRETH: u32 = 0xB82;
pub const CYCLE: u32 = 0xC00;
pub const TIME: u32 = 0xC01;
pub const INSTRET: u32 = 0xC02;
pub const CYCLEH: u32 = 0xC80;
pub const TIMEH: u32 = 0xC81;
pub const INSTRETH: u32 = 0xC82;
pub const MVENDORID: u32 = 0xF11;
pub const MARCHID: u32 = 0xF12;
pub const MIMPID: u32 = 0xF13;
pub const MHARTID: u32 = 0xF14;

/// mstatus.MIE: interrupts globally enabled in M-mode.
pub const MSTATUS_MIE: u32 = 1 << 3;
/// mstatus.MPIE: MIE before the last trap.
pub const MSTATUS_MPIE: u32 = 1 << 7;
/// mstatus.MPP: always 3 (machine) since only M-mode exists.
pub const MSTATUS_MPP: u32 = 3 << 11;
/// mie.MTIE / mip.MTIP: the machine timer interrupt bit.
pub const MTI_BIT: u32 = 1 << 7;

/// Values of the counters at the moment of a CSR read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub cycle: u64,
    pub time: u64,
    pub instret: u64,
    /// Whether the timer interrupt is pending (mip.MTIP).
    pub timer_pending: bool,
}

/// The stored machine-mode CSRs.
#[derive(Clone, Debug, Default)]
pub struct Csrs {
    /// Only MIE and MPIE are stored; MPP always reads as machine mode.
    pub mstatus: u32,
    pub mie: u32,
    pub mtvec: u32,
    pub mscratch: u32,
    pub mepc: u32,
    pub mcause: u32,
    pub mtval: u32,
    /// misa value (reports I, M and, when enabled, C).
    pub misa: u32,
    /// Mask applied to mepc: ~1 with C, ~3 without.
    pub epc_mask: u32,
}

/// Why a CSR access is an illegal instruction.
pub struct IllegalCsr;

impl Csrs {
    pub fn new(compressed: bool) -> Csrs {
        let c = if compressed { 1 << 2 } else { 0 };
        Csrs {
            misa: (1 << 30) | (1 << 8) | (1 << 12) | c,
            epc_mask: if compressed { !1 } else { !3 },
            ..Csrs::default()
        }
    }

    /// Whether a pending timer interrupt would be taken now.
    #[inline]
    pub fn timer_enabled(&self) -> bool {
        self.mstatus & MSTATUS_MIE != 0 && self.mie & MTI_BIT != 0
    }

    pub fn read(&self, csr: u32, c: &Counters) -> Result<u32, IllegalCsr> {
        Ok(match csr {
            MSTATUS => self.mstatus | MSTATUS_MPP,
            MISA => self.misa,
            MIE => self.mie,
            MTVEC => self.mtvec,
            MSTATUSH | MCOUNTINHIBIT => 0,
            MSCRATCH => self.mscratch,
            MEPC => self.mepc,
            MCAUSE => self.mcause,
            MTVAL => self.mtval,
            MIP => {
                if c.timer_pending {
                    MTI_BIT
                } else {
                    0
                }
            }
            MCYCLE | CYCLE => c.cycle as u32,
            MCYCLEH | CYCLEH => (c.cycle >> 32) as u32,
            MINSTRET | INSTRET => c.instret as u32,
            MINSTRETH | INSTRETH => (c.instret >> 32) as u32,
            TIME => c.time as u32,
            TIMEH => (c.time >> 32) as u32,
            MVENDORID | MARCHID | MIMPID | MHARTID => 0,
            _ => return Err(IllegalCsr),
        })
    }

    /// Writes a CSR. Read-only CSRs (number bits 11:10 == 3) and unknown ones are illegal.
    pub fn write(&mut self, csr: u32, value: u32) -> Result<(), IllegalCsr> {
        if csr >> 10 == 3 {
            return Err(IllegalCsr);
        }
        match csr {
            MSTATUS => self.mstatus = value & (MSTATUS_MIE | MSTATUS_MPIE),
            MIE => self.mie = value & ((1 << 3) | MTI_BIT | (1 << 11)),
            // Direct (0) and vectored (1) modes; base is 4-byte aligned.
            MTVEC => self.mtvec = value & !2,
            MSCRATCH => self.mscratch = value,
            MEPC => self.mepc = value & self.epc_mask,
            MCAUSE => self.mcause = value,
            MTVAL => self.mtval = value,
            // MTIP is read-only (cleared by writing mtimecmp); misa and the counters ignore
            // writes.
            MIP | MISA | MSTATUSH | MCOUNTINHIBIT | MCYCLE | MCYCLEH | MINSTRET | MINSTRETH => {}
            _ => return Err(IllegalCsr),
        }
        Ok(())
    }
}
