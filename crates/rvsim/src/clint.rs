//! A CLINT-style timer (SiFive layout): mtime and mtimecmp as memory-mapped registers.
//!
//! mtime advances one tick per instruction step (retired or trapped), not per modeled cycle,
//! so a program sees the same interrupt schedule with and without the timing model.

/// Base address of the CLINT block.
pub const CLINT_BASE: u32 = 0x0200_0000;
/// Size of the CLINT block.
pub const CLINT_SIZE: u32 = 0x0001_0000;
const MSIP: u32 = 0x0000;
const MTIMECMP: u32 = 0x4000;
const MTIME: u32 = 0xBFF8;

/// The timer registers.
#[derive(Clone, Debug)]
pub struct Clint {
    pub mtime: u64,
    /// u64::MAX means no interrupt is ever raised.
    pub mtimecmp: u64,
}

impl Default for Clint {
    fn default() -> Self {
        Clint {
            mtime: 0,
            mtimecmp: u64::MAX,
        }
    }
}

impl Clint {
    pub fn contains(addr: u32) -> bool {
        addr.wrapping_sub(CLINT_BASE) < CLINT_SIZE
    }

    /// Whether the timer interrupt is pending (mip.MTIP).
    #[inline]
    pub fn pending(&self) -> bool {
        self.mtime >= self.mtimecmp
    }

    /// A 32-bit read at `offset` from the CLINT base; other registers read as zero.
    pub fn read(&self, offset: u32) -> u32 {
        match offset {
            MTIMECMP => self.mtimecmp as u32,
            o if o == MTIMECMP + 4 => (self.mtimecmp >> 32) as u32,
            MTIME => self.mtime as u32,
            o if o == MTIME + 4 => (self.mtime >> 32) as u32,
            _ => 0,
        }
    }

    /// A 32-bit write at `offset`; writes elsewhere (msip included) are ignored.
    pub fn write(&mut self, offset: u32, value: u32) {
        let lo = |old: u64| (old & !0xffff_ffff) | value as u64;
        let hi = |old: u64| (old & 0xffff_ffff) | ((value as u64) << 32);
        match offset {
            MTIMECMP => self.mtimecmp = lo(self.mtimecmp),
            o if o == MTIMECMP + 4 => self.mtimecmp = hi(self.mtimecmp),
            MTIME => self.mtime = lo(self.mtime),
            o if o == MTIME + 4 => self.mtime = hi(self.mtime),
            MSIP => {}
            _ => {}
        }
    }
}
