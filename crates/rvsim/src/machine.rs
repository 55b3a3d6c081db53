//! The machine: one RV32IMC hart in machine mode, RAM, the CLINT timer, optional caches and the
//! pipeline timing model, and the run loop that ties them together.
//!
//! Instructions are decoded once per address into `decoded` (one slot per halfword of RAM) and
//! executed from there; a store into RAM invalidates the slots it overlaps, so self-modifying
//! code stays correct. The run loop allocates nothing.

use crate::cache::{Cache, CacheConfig, CacheStats};
use crate::clint::{Clint, CLINT_BASE, CLINT_SIZE};
use crate::csr::{Counters, Csrs, MSTATUS_MIE, MSTATUS_MPIE};
use crate::decode::{decode, instruction_len, Decoded, Op};
use crate::elf::Program;
use crate::error::SimError;
use crate::pipeline::{Pipeline, PipelineStats};
use crate::trap::*;

/// Default RAM base, where the shipped linker script places programs.
pub const RAM_BASE: u32 = 0x8000_0000;
/// Name of the variable in which the shipped start-up code reads the timer interval.
pub const TIMER_INTERVAL_SYMBOL: &str = "rvsim_timer_interval";
/// Program output kept per stream; beyond this it is counted but dropped.
const OUTPUT_CAP: usize = 64 << 20;

/// How the machine is built.
#[derive(Clone, Debug)]
pub struct Config {
    pub ram_base: u32,
    pub ram_size: u32,
    /// Whether the C extension is implemented (an RV32IM machine traps on 16-bit encodings).
    pub compressed: bool,
    pub icache: Option<CacheConfig>,
    pub dcache: Option<CacheConfig>,
    /// Run the 5-stage pipeline timing model (false: functional only).
    pub pipeline: bool,
    /// Stall cycles per cache miss in the pipeline model.
    pub miss_penalty: u32,
    /// Raise a timer interrupt every this many instruction steps (sets mtimecmp at reset and
    /// the start-up code's `rvsim_timer_interval` variable, if the program has one).
    pub timer_interval: Option<u64>,
    /// Stop with an error after this many instruction steps.
    pub max_instructions: u64,
    /// Serve `ecall` with a7=64 (write) and a7=93 (exit) in the host; other ecalls trap.
    pub host_abi: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ram_base: RAM_BASE,
            ram_size: 4 << 20,
            compressed: true,
            icache: None,
            dcache: None,
            pipeline: false,
            miss_penalty: 0,
            timer_interval: None,
            max_instructions: 10_000_000_000,
            host_abi: true,
        }
    }
}

/// Counts of one run.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Instructions retired (trapping instructions excluded).
    pub instret: u64,
    /// Instruction steps: retired + trapped (what mtime counts).
    pub steps: u64,
    pub exceptions: u64,
    pub interrupts: u64,
    /// 32-bit instructions whose fetch touched two cache lines (I-cache only).
    pub straddling_fetches: u64,
    /// Retired compressed (16-bit) instructions.
    pub compressed_retired: u64,
    pub icache: Option<CacheStats>,
    pub dcache: Option<CacheStats>,
    pub pipeline: Option<PipelineStats>,
}

/// What stops the current instruction from completing normally.
enum Flow {
    Exception(Exception),
    Exit(i32),
}

impl From<Exception> for Flow {
    fn from(e: Exception) -> Self {
        Flow::Exception(e)
    }
}

pub struct Machine {
    pub regs: [u32; 32],
    pub pc: u32,
    pub csr: Csrs,
    pub clint: Clint,
    ram: Vec<u8>,
    base: u32,
    decoded: Vec<Decoded>,
    compressed: bool,
    /// Jump targets must satisfy `target & align_mask == 0`.
    align_mask: u32,
    icache: Option<Cache>,
    dcache: Option<Cache>,
    pipeline: Option<Pipeline>,
    host_abi: bool,
    max_steps: u64,
    dmiss: u32,
    stats: Stats,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    dropped_output: u64,
}

impl Machine {
    /// Builds the machine and places the program in RAM. The stack pointer starts at the top
    /// of RAM.
    pub fn new(cfg: &Config, program: &Program) -> Result<Machine, SimError> {
        check_layout(cfg)?;
        let mut ram = vec![0u8; cfg.ram_size as usize];
        let end = cfg.ram_base as u64 + cfg.ram_size as u64;
        for seg in &program.segments {
            let seg_end = seg.addr as u64 + seg.mem_size as u64;
            if seg.addr < cfg.ram_base || seg_end > end {
                return Err(SimError::Config(format!(
                    "program segment 0x{:08x}..0x{seg_end:08x} does not fit in memory 0x{:08x}..0x{end:08x} (link at 0x{:08x} or enlarge the memory)",
                    seg.addr, cfg.ram_base, cfg.ram_base
                )));
            }
            let off = (seg.addr - cfg.ram_base) as usize;
            ram[off..off + seg.data.len()].copy_from_slice(&seg.data);
        }
        let entry_ok = program.entry.wrapping_sub(cfg.ram_base) < cfg.ram_size
            && program.entry & if cfg.compressed { 1 } else { 3 } == 0;
        if !entry_ok {
            return Err(SimError::Elf(format!(
                "entry point 0x{:08x} is not an aligned address in memory 0x{:08x}..0x{end:08x}",
                program.entry, cfg.ram_base
            )));
        }
        let cache = |c: &Option<CacheConfig>| {
            c.map(|c| Cache::new(c, cfg.ram_base, cfg.ram_size))
                .transpose()
        };
        let mut m = Machine {
            regs: [0; 32],
            pc: program.entry,
            csr: Csrs::new(cfg.compressed),
            clint: Clint::default(),
            ram,
            base: cfg.ram_base,
            decoded: vec![Decoded::UNDECODED; (cfg.ram_size / 2) as usize],
            compressed: cfg.compressed,
            align_mask: if cfg.compressed { 0 } else { 2 },
            icache: cache(&cfg.icache)?,
            dcache: cache(&cfg.dcache)?,
            pipeline: cfg.pipeline.then(|| Pipeline::new(cfg.miss_penalty as u64)),
            host_abi: cfg.host_abi,
            max_steps: cfg.max_instructions,
            dmiss: 0,
            stats: Stats::default(),
            stdout: Vec::new(),
            stderr: Vec::new(),
            dropped_output: 0,
        };
        m.regs[2] = (end as u32).wrapping_sub(16) & !15;
        if let Some(n) = cfg.timer_interval {
            if n == 0 {
                return Err(SimError::Config("timer interval must be at least 1".into()));
            }
            m.clint.mtimecmp = n;
            if let Some(&addr) = program.symbols.get(TIMER_INTERVAL_SYMBOL) {
                m.poke_u32(addr, n.min(u32::MAX as u64) as u32)?;
            }
        }
        Ok(m)
    }

    /// Runs until the program exits; returns its exit status.
    pub fn run(&mut self) -> Result<i32, SimError> {
        loop {
            if self.stats.steps >= self.max_steps {
                return Err(SimError::InstructionLimit {
                    limit: self.max_steps,
                    pc: self.pc,
                });
            }
            if let Some(code) = self.step()? {
                return Ok(code);
            }
        }
    }

    /// Executes one instruction (or takes one interrupt). Returns the exit status once the
    /// program has exited.
    #[inline(always)]
    pub fn step(&mut self) -> Result<Option<i32>, SimError> {
        self.stats.steps += 1;
        self.clint.mtime = self.clint.mtime.wrapping_add(1);
        if self.clint.pending() && self.csr.timer_enabled() {
            if let Some(p) = &mut self.pipeline {
                p.interrupt();
            }
            self.stats.interrupts += 1;
            self.enter_trap(MACHINE_TIMER_INTERRUPT, 0, self.pc)?;
            return Ok(None);
        }
        let pc = self.pc;
        let idx = (pc.wrapping_sub(self.base) >> 1) as usize;
        let d = match self.decoded.get(idx) {
            Some(d) if d.op != Op::Undecoded => *d,
            _ => match self.decode_at(pc) {
                Ok(d) => d,
                Err(e) => {
                    self.exception(e, pc, 0)?;
                    return Ok(None);
                }
            },
        };
        let imiss = match &mut self.icache {
            Some(ic) => {
                let len = d.len as u32;
                if len == 4 && (pc & (ic.line_bytes() - 1)) == ic.line_bytes() - 2 {
                    self.stats.straddling_fetches += 1;
                }
                ic.fetch(pc, len)
            }
            None => 0,
        };
        self.dmiss = 0;
        match self.execute(d, pc) {
            Ok(()) => {
                self.retire(&d, pc, imiss);
                Ok(None)
            }
            Err(Flow::Exit(code)) => {
                self.retire(&d, pc, imiss);
                Ok(Some(code))
            }
            Err(Flow::Exception(e)) => {
                self.exception(e, pc, imiss)?;
                Ok(None)
            }
        }
    }

    #[inline(always)]
    fn retire(&mut self, d: &Decoded, pc: u32, imiss: u32) {
        self.stats.instret += 1;
        if d.len == 2 {
            self.stats.compressed_retired += 1;
        }
        if let Some(p) = &mut self.pipeline {
            let redirected = self.pc != pc.wrapping_add(d.len as u32);
            p.retire(d, redirected, imiss, self.dmiss);
        }
    }

    fn exception(&mut self, e: Exception, pc: u32, imiss: u32) -> Result<(), SimError> {
        if let Some(p) = &mut self.pipeline {
            p.exception(imiss, self.dmiss);
        }
        self.stats.exceptions += 1;
        self.enter_trap(e.cause, e.tval, pc)
    }

    /// Trap entry: save pc and cause, disable interrupts, jump to mtvec.
    fn enter_trap(&mut self, cause: u32, tval: u32, epc: u32) -> Result<(), SimError> {
        let mtvec = self.csr.mtvec;
        let mut target = mtvec & !3;
        if mtvec & 1 == 1 && cause & 0x8000_0000 != 0 {
            target = target.wrapping_add(4 * (cause & 0x7fff_ffff));
        }
        if !self.in_ram(target, 2) {
            return Err(SimError::UnhandledTrap {
                cause,
                pc: epc,
                tval,
                mtvec,
            });
        }
        let c = &mut self.csr;
        c.mepc = epc & c.epc_mask;
        c.mcause = cause;
        c.mtval = tval;
        let mie = c.mstatus & MSTATUS_MIE != 0;
        c.mstatus = if mie { MSTATUS_MPIE } else { 0 };
        self.pc = target;
        Ok(())
    }

    fn decode_at(&mut self, pc: u32) -> Result<Decoded, Exception> {
        if pc & 1 != 0 {
            return Err(Exception::new(INSTRUCTION_MISALIGNED, pc));
        }
        if !self.in_ram(pc, 2) {
            return Err(Exception::new(INSTRUCTION_ACCESS_FAULT, pc));
        }
        let off = (pc - self.base) as usize;
        let low = u16::from_le_bytes([self.ram[off], self.ram[off + 1]]) as u32;
        let word = if instruction_len(low) == 4 {
            if !self.in_ram(pc.wrapping_add(2), 2) {
                return Err(Exception::new(INSTRUCTION_ACCESS_FAULT, pc.wrapping_add(2)));
            }
            low | (u16::from_le_bytes([self.ram[off + 2], self.ram[off + 3]]) as u32) << 16
        } else {
            low
        };
        let d = decode(word, self.compressed);
        self.decoded[off >> 1] = d;
        Ok(d)
    }

    #[inline(always)]
    fn in_ram(&self, addr: u32, len: u32) -> bool {
        let off = addr.wrapping_sub(self.base) as u64;
        off + len as u64 <= self.ram.len() as u64
    }

    /// Writes a word into RAM outside of program execution (loader, tests).
    pub fn poke_u32(&mut self, addr: u32, value: u32) -> Result<(), SimError> {
        if !self.in_ram(addr, 4) {
            return Err(SimError::Config(format!(
                "address 0x{addr:08x} is outside memory"
            )));
        }
        let off = (addr - self.base) as usize;
        self.ram[off..off + 4].copy_from_slice(&value.to_le_bytes());
        self.invalidate(off, 4);
        Ok(())
    }

    /// Reads a word of RAM (tests, inspection).
    pub fn peek_u32(&self, addr: u32) -> Option<u32> {
        if !self.in_ram(addr, 4) {
            return None;
        }
        let off = (addr - self.base) as usize;
        Some(u32::from_le_bytes(self.ram[off..off + 4].try_into().ok()?))
    }

    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        s.icache = self.icache.as_ref().map(|c| c.stats);
        s.dcache = self.dcache.as_ref().map(|c| c.stats);
        s.pipeline = self.pipeline.as_ref().map(|p| p.stats);
        s
    }

    /// What the program wrote to stdout (fd 1).
    pub fn stdout(&self) -> &[u8] {
        &self.stdout
    }
    /// What the program wrote to stderr (fd 2).
    pub fn stderr(&self) -> &[u8] {
        &self.stderr
    }
    /// Output bytes beyond the 64 MiB kept per stream.
    pub fn dropped_output(&self) -> u64 {
        self.dropped_output
    }

    /// Forgets decoded instructions overlapping RAM bytes `off..off+len`.
    #[inline(always)]
    fn invalidate(&mut self, off: usize, len: usize) {
        let first = (off >> 1).saturating_sub(1);
        let last = ((off + len - 1) >> 1).min(self.decoded.len() - 1);
        for slot in &mut self.decoded[first..=last] {
            *slot = Decoded::UNDECODED;
        }
    }

    #[inline(always)]
    fn load(&mut self, addr: u32, size: u32) -> Result<u32, Exception> {
        if addr & (size - 1) != 0 {
            return Err(Exception::new(LOAD_MISALIGNED, addr));
        }
        if self.in_ram(addr, size) {
            if let Some(dc) = &mut self.dcache {
                self.dmiss += dc.access(addr, false) as u32;
            }
            let off = (addr - self.base) as usize;
            let r = &self.ram;
            return Ok(match size {
                1 => r[off] as u32,
                2 => u16::from_le_bytes([r[off], r[off + 1]]) as u32,
                _ => u32::from_le_bytes([r[off], r[off + 1], r[off + 2], r[off + 3]]),
            });
        }
        if size == 4 && Clint::contains(addr) {
            return Ok(self.clint.read(addr - CLINT_BASE));
        }
        Err(Exception::new(LOAD_ACCESS_FAULT, addr))
    }

    #[inline(always)]
    fn store(&mut self, addr: u32, size: u32, value: u32) -> Result<(), Exception> {
        if addr & (size - 1) != 0 {
            return Err(Exception::new(STORE_MISALIGNED, addr));
        }
        if self.in_ram(addr, size) {
            if let Some(dc) = &mut self.dcache {
                self.dmiss += dc.access(addr, true) as u32;
            }
            let off = (addr - self.base) as usize;
            let bytes = value.to_le_bytes();
            self.ram[off..off + size as usize].copy_from_slice(&bytes[..size as usize]);
            self.invalidate(off, size as usize);
            return Ok(());
        }
        if size == 4 && Clint::contains(addr) {
            self.clint.write(addr - CLINT_BASE, value);
            return Ok(());
        }
        Err(Exception::new(STORE_ACCESS_FAULT, addr))
    }

    fn counters(&self) -> Counters {
        Counters {
            cycle: match &self.pipeline {
                Some(p) => p.stats.elapsed(),
                None => self.stats.instret,
            },
            time: self.clint.mtime,
            instret: self.stats.instret,
            timer_pending: self.clint.pending(),
        }
    }

    #[inline(always)]
    fn jump(&mut self, target: u32) -> Result<(), Exception> {
        if target & self.align_mask != 0 {
            return Err(Exception::new(INSTRUCTION_MISALIGNED, target));
        }
        self.pc = target;
        Ok(())
    }

    /// Executes one decoded instruction at `pc`; on success `self.pc` is the next pc.
    #[inline(always)]
    fn execute(&mut self, d: Decoded, pc: u32) -> Result<(), Flow> {
        let rs1 = self.regs[d.rs1 as usize];
        let rs2 = self.regs[d.rs2 as usize];
        let imm = d.imm as u32;
        let next = pc.wrapping_add(d.len as u32);
        self.pc = next;
        let value = match d.op {
            Op::Lui => imm,
            Op::Auipc => pc.wrapping_add(imm),
            Op::Jal => {
                self.jump(pc.wrapping_add(imm))?;
                next
            }
            Op::Jalr => {
                self.jump(rs1.wrapping_add(imm) & !1)?;
                next
            }
            Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
                let taken = match d.op {
                    Op::Beq => rs1 == rs2,
                    Op::Bne => rs1 != rs2,
                    Op::Blt => (rs1 as i32) < (rs2 as i32),
                    Op::Bge => (rs1 as i32) >= (rs2 as i32),
                    Op::Bltu => rs1 < rs2,
                    _ => rs1 >= rs2,
                };
                if taken {
                    self.jump(pc.wrapping_add(imm))?;
                }
                return Ok(());
            }
            Op::Lb => self.load(rs1.wrapping_add(imm), 1)? as i8 as i32 as u32,
            Op::Lh => self.load(rs1.wrapping_add(imm), 2)? as i16 as i32 as u32,
            Op::Lw => self.load(rs1.wrapping_add(imm), 4)?,
            Op::Lbu => self.load(rs1.wrapping_add(imm), 1)?,
            Op::Lhu => self.load(rs1.wrapping_add(imm), 2)?,
            Op::Sb => return Ok(self.store(rs1.wrapping_add(imm), 1, rs2)?),
            Op::Sh => return Ok(self.store(rs1.wrapping_add(imm), 2, rs2)?),
            Op::Sw => return Ok(self.store(rs1.wrapping_add(imm), 4, rs2)?),
            Op::Addi => rs1.wrapping_add(imm),
            Op::Slti => ((rs1 as i32) < d.imm) as u32,
            Op::Sltiu => (rs1 < imm) as u32,
            Op::Xori => rs1 ^ imm,
            Op::Ori => rs1 | imm,
            Op::Andi => rs1 & imm,
            Op::Slli => rs1 << (imm & 31),
            Op::Srli => rs1 >> (imm & 31),
            Op::Srai => ((rs1 as i32) >> (imm & 31)) as u32,
            Op::Add => rs1.wrapping_add(rs2),
            Op::Sub => rs1.wrapping_sub(rs2),
            Op::Sll => rs1 << (rs2 & 31),
            Op::Slt => ((rs1 as i32) < (rs2 as i32)) as u32,
            Op::Sltu => (rs1 < rs2) as u32,
            Op::Xor => rs1 ^ rs2,
            Op::Srl => rs1 >> (rs2 & 31),
            Op::Sra => ((rs1 as i32) >> (rs2 & 31)) as u32,
            Op::Or => rs1 | rs2,
            Op::And => rs1 & rs2,
            Op::Mul => rs1.wrapping_mul(rs2),
            Op::Mulh => ((rs1 as i32 as i64 * rs2 as i32 as i64) >> 32) as u32,
            Op::Mulhsu => ((rs1 as i32 as i64).wrapping_mul(rs2 as i64) >> 32) as u32,
            Op::Mulhu => ((rs1 as u64 * rs2 as u64) >> 32) as u32,
            Op::Div => {
                if rs2 == 0 {
                    u32::MAX
                } else {
                    (rs1 as i32).wrapping_div(rs2 as i32) as u32
                }
            }
            Op::Divu => rs1.checked_div(rs2).unwrap_or(u32::MAX),
            Op::Rem => {
                if rs2 == 0 {
                    rs1
                } else {
                    (rs1 as i32).wrapping_rem(rs2 as i32) as u32
                }
            }
            Op::Remu => rs1.checked_rem(rs2).unwrap_or(rs1),
            Op::Fence | Op::FenceI | Op::Wfi => return Ok(()),
            Op::Ecall => return self.ecall(),
            Op::Ebreak => return Err(Exception::new(BREAKPOINT, pc).into()),
            Op::Mret => {
                let c = &mut self.csr;
                let mpie = c.mstatus & MSTATUS_MPIE != 0;
                c.mstatus = MSTATUS_MPIE | if mpie { MSTATUS_MIE } else { 0 };
                self.pc = c.mepc;
                return Ok(());
            }
            Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => {
                self.csr_op(d, rs1)?
            }
            Op::Illegal | Op::Undecoded => {
                return Err(Exception::new(ILLEGAL_INSTRUCTION, imm).into())
            }
        };
        self.regs[d.rd as usize] = value;
        self.regs[0] = 0;
        Ok(())
    }

    fn csr_op(&mut self, d: Decoded, rs1: u32) -> Result<u32, Exception> {
        let illegal = Exception::new(ILLEGAL_INSTRUCTION, self.raw_csr_bits(d));
        let csr = (d.imm & 0xfff) as u32;
        let uimm = (d.imm >> 12) as u32 & 31;
        let (operand, writes) = match d.op {
            Op::Csrrw => (rs1, true),
            Op::Csrrwi => (uimm, true),
            Op::Csrrs | Op::Csrrc => (rs1, d.rs1 != 0),
            _ => (uimm, uimm != 0),
        };
        let old = self.csr.read(csr, &self.counters()).map_err(|_| illegal)?;
        if writes {
            let new = match d.op {
                Op::Csrrw | Op::Csrrwi => operand,
                Op::Csrrs | Op::Csrrsi => old | operand,
                _ => old & !operand,
            };
            self.csr.write(csr, new).map_err(|_| illegal)?;
        }
        Ok(old)
    }

    /// Re-encodes a CSR instruction for mtval (the decoded record does not keep raw bits).
    fn raw_csr_bits(&self, d: Decoded) -> u32 {
        let f3 = match d.op {
            Op::Csrrw => 1,
            Op::Csrrs => 2,
            Op::Csrrc => 3,
            Op::Csrrwi => 5,
            Op::Csrrsi => 6,
            _ => 7,
        };
        let src = if f3 >= 5 {
            (d.imm as u32 >> 12) & 31
        } else {
            d.rs1 as u32
        };
        ((d.imm as u32 & 0xfff) << 20) | (src << 15) | (f3 << 12) | ((d.rd as u32) << 7) | 0x73
    }

    /// The program ABI: a7=64 write(fd, buf, len), a7=93 exit(status). Anything else traps.
    fn ecall(&mut self) -> Result<(), Flow> {
        let (a0, a1, a2, a7) = (self.regs[10], self.regs[11], self.regs[12], self.regs[17]);
        if !self.host_abi {
            return Err(Exception::new(ECALL_FROM_M, 0).into());
        }
        match a7 {
            93 => Err(Flow::Exit(a0 as i32)),
            64 => {
                self.regs[10] = if a0 != 1 && a0 != 2 {
                    -9i32 as u32 // EBADF
                } else if !self.in_ram(a1, a2) {
                    -14i32 as u32 // EFAULT
                } else {
                    let off = (a1 - self.base) as usize;
                    let bytes = &self.ram[off..off + a2 as usize];
                    let out = if a0 == 1 {
                        &mut self.stdout
                    } else {
                        &mut self.stderr
                    };
                    let room = OUTPUT_CAP.saturating_sub(out.len()).min(bytes.len());
                    out.extend_from_slice(&bytes[..room]);
                    self.dropped_output += (bytes.len() - room) as u64;
                    a2
                };
                Ok(())
            }
            _ => Err(Exception::new(ECALL_FROM_M, 0).into()),
        }
    }
}

fn check_layout(cfg: &Config) -> Result<(), SimError> {
    if cfg.ram_size < 16 || !cfg.ram_size.is_multiple_of(4) || cfg.ram_size > 1 << 30 {
        return Err(SimError::Config(format!(
            "memory size {} bytes: must be a multiple of 4 between 16 bytes and 1 GiB",
            cfg.ram_size
        )));
    }
    if !cfg.ram_base.is_multiple_of(4) || cfg.ram_base as u64 + cfg.ram_size as u64 > 1 << 32 {
        return Err(SimError::Config(format!(
            "memory base 0x{:08x}: must be 4-byte aligned and leave room for the memory below 4 GiB",
            cfg.ram_base
        )));
    }
    let ram_end = cfg.ram_base as u64 + cfg.ram_size as u64;
    let clint_end = CLINT_BASE as u64 + CLINT_SIZE as u64;
    if (cfg.ram_base as u64) < clint_end && (CLINT_BASE as u64) < ram_end {
        return Err(SimError::Config(format!(
            "memory 0x{:08x}..0x{ram_end:08x} overlaps the timer at 0x{CLINT_BASE:08x}",
            cfg.ram_base
        )));
    }
    Ok(())
}
