//! Machine-mode control and status registers (Zicsr), the subset a bare-metal M-mode program
//! uses: trap setup and handling, interrupt enables, and the counters.
//!
//! Counters (cycle, time, instret and their machine/high halves) are not stored here: the
//! machine supplies their current values on a read, so they cost nothing while not read.
//! `mcycle` and `minstret` (and their high halves) are writable as the privileged spec
//! requires: a write stores an offset against the machine's own count, so the statistics of a
//! run never change, and the value written is what the next instruction reads (the writing
//! instruction's own increment is suppressed).
//!
//! The PMP registers are present (WARL storage, no enforcement: there is only machine mode,
//! which PMP does not restrict unless an entry is locked) and the trigger registers answer as a
//! core without triggers (`tselect` reads 0 whatever is written, `tdata1` reads type 0).

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
pub const MCONFIGPTR: u32 = 0xF15;
pub const PMPCFG0: u32 = 0x3A0;
pub const PMPADDR0: u32 = 0x3B0;
pub const TSELECT: u32 = 0x7A0;
pub const TDATA1: u32 = 0x7A1;
pub const TDATA2: u32 = 0x7A2;
pub const TDATA3: u32 = 0x7A3;
pub const TINFO: u32 = 0x7A4;

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
    /// Added to the machine's instruction count when minstret is read (set by writes).
    pub instret_offset: u64,
    /// Added to the machine's cycle count when mcycle is read (set by writes).
    pub cycle_offset: u64,
    pub pmpcfg: [u32; 4],
    pub pmpaddr: [u32; 16],
    /// Whether the program ever had the timer interrupt enabled (mstatus.MIE and mie.MTIE).
    pub timer_ever_enabled: bool,
}

/// Why a CSR access is an illegal instruction.
pub struct IllegalCsr;

impl Csrs {
    pub fn new(compressed: bool) -> Csrs {
        let c = if compressed { 1 << 2 } else { 0 };
        Csrs {
            // MXL = 32, I, M, A (+ C).
            misa: (1 << 30) | (1 << 8) | (1 << 12) | 1 | c,
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
            MCYCLE | CYCLE => self.cycle(c) as u32,
            MCYCLEH | CYCLEH => (self.cycle(c) >> 32) as u32,
            MINSTRET | INSTRET => self.instret(c) as u32,
            MINSTRETH | INSTRETH => (self.instret(c) >> 32) as u32,
            TIME => c.time as u32,
            TIMEH => (c.time >> 32) as u32,
            MVENDORID | MARCHID | MIMPID | MHARTID | MCONFIGPTR => 0,
            PMPCFG0..=0x3A3 => self.pmpcfg[(csr - PMPCFG0) as usize],
            PMPADDR0..=0x3BF => self.pmpaddr[(csr - PMPADDR0) as usize],
            TSELECT | TDATA1 | TDATA2 | TDATA3 => 0,
            // tinfo: bit 0 set would announce trigger type 0; "no triggers" reads 1 (type 0
            // only) as the debug spec recommends for a core without them.
            TINFO => 1,
            _ => return Err(IllegalCsr),
        })
    }

    /// minstret as the program sees it.
    pub fn instret(&self, c: &Counters) -> u64 {
        c.instret.wrapping_add(self.instret_offset)
    }

    /// mcycle as the program sees it.
    pub fn cycle(&self, c: &Counters) -> u64 {
        c.cycle.wrapping_add(self.cycle_offset)
    }

    /// Writes a CSR. Read-only CSRs (number bits 11 and 10 both set) and unknown ones are illegal.
    /// `c` holds the counters before the writing instruction retires.
    pub fn write(&mut self, csr: u32, value: u32, c: &Counters) -> Result<(), IllegalCsr> {
        if csr >> 10 == 3 {
            return Err(IllegalCsr);
        }
        let low = |old: u64| (old & !0xffff_ffff) | value as u64;
        let high = |old: u64| (old & 0xffff_ffff) | (value as u64) << 32;
        match csr {
            MSTATUS => self.mstatus = value & (MSTATUS_MIE | MSTATUS_MPIE),
            MIE => self.mie = value & ((1 << 3) | MTI_BIT | (1 << 11)),
            // The next instruction reads the written value: the writer's own retirement
            // (+1) is compensated in the offset.
            MINSTRET | MINSTRETH => {
                let old = self.instret(c);
                let new = if csr == MINSTRET { low(old) } else { high(old) };
                self.instret_offset = new.wrapping_sub(c.instret.wrapping_add(1));
            }
            MCYCLE | MCYCLEH => {
                let old = self.cycle(c);
                let new = if csr == MCYCLE { low(old) } else { high(old) };
                self.cycle_offset = new.wrapping_sub(c.cycle.wrapping_add(1));
            }
            // Bits 5 and 6 of each configuration byte are reserved (read as zero).
            PMPCFG0..=0x3A3 => self.pmpcfg[(csr - PMPCFG0) as usize] = value & 0x9f9f_9f9f,
            PMPADDR0..=0x3BF => self.pmpaddr[(csr - PMPADDR0) as usize] = value,
            TSELECT | TDATA1 | TDATA2 | TDATA3 | TINFO => {}
            // Direct (0) and vectored (1) modes; base is 4-byte aligned.
            MTVEC => self.mtvec = value & !2,
            MSCRATCH => self.mscratch = value,
            MEPC => self.mepc = value & self.epc_mask,
            MCAUSE => self.mcause = value,
            MTVAL => self.mtval = value,
            // MTIP is read-only (cleared by writing mtimecmp); misa and the counters ignore
            // writes.
            MIP | MISA | MSTATUSH | MCOUNTINHIBIT => {}
            _ => return Err(IllegalCsr),
        }
        if self.timer_enabled() {
            self.timer_ever_enabled = true;
        }
        Ok(())
    }
}
