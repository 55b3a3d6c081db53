//! The register state and the speculation control of `ctx anatomy`'s tasks: which SIMD state
//! the CPU offers and what XSAVE stores of it (CPUID leaf 0xD), how a task makes that state
//! live before a switch and how it proves it (XINUSE, `xgetbv(1)`); on arm64 the NEON and SVE
//! states (`getauxval(AT_HWCAP)`, `prctl(PR_SVE_GET_VL)`) and a read-back of the loaded
//! registers in place of XINUSE (below); AMX permission
//! (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), the TLB's reach (CPUID leaf 0x18), and the
//! indirect-branch speculation control (`prctl(PR_SET_SPECULATION_CTRL)`) with the kernel's
//! answer read back. Everything a task calls after fork is a plain instruction or a raw
//! system call on memory prepared before.

use crate::units::name::Word;

/// A SIMD register state a task leaves live at every switch; its words name its rung and
/// its `regs` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Regs {
    /// None beyond what every task holds (the compiler's xmm registers).
    Sse,
    /// The upper halves of ymm0-15.
    Avx,
    /// zmm0-31 and the opmask registers.
    #[strum(serialize = "avx-512")]
    Avx512,
    /// The AMX tiles (with the AVX-512 state under them).
    Amx,
    /// arm64: the 32 128-bit V registers (512 bytes), which the kernel saves and restores at
    /// every switch of a task that has run in user mode, whatever the task left in them.
    Neon,
    /// arm64: the Z registers at the vector length, the P registers and FFR. A system call
    /// discards them (the syscall ABI keeps only the V registers), so a task switched inside
    /// one has only its V registers saved; what SVE use adds to such a switch is the kernel's
    /// discard at every system call and, where the kernel disables SVE until the next SVE
    /// instruction, that instruction's trap.
    Sve,
}

impl Regs {
    #[cfg(not(target_arch = "aarch64"))]
    pub const LADDER: [Regs; 3] = [Regs::Avx, Regs::Avx512, Regs::Amx];
    #[cfg(target_arch = "aarch64")]
    pub const LADDER: [Regs; 2] = [Regs::Neon, Regs::Sve];

    /// Whether this is an arm64 state (read back, not read from XINUSE).
    pub fn arm64(self) -> bool {
        matches!(self, Regs::Neon | Regs::Sve)
    }

    /// The rung's baseline: (the state its tasks load, whether they release it before the
    /// switch). XSAVE states and NEON: the same loads, released, so only the liveness at the
    /// switch differs. SVE: the NEON loads of the same V registers and no SVE instruction,
    /// since any SVE instruction engages the kernel's SVE handling whatever is left live.
    pub fn baseline(self) -> (Regs, bool) {
        match self {
            Regs::Sve => (Regs::Neon, false),
            r => (r, true),
        }
    }

    /// The state below this one on the ladder (its rung's baseline).
    pub fn below(self) -> Regs {
        match self {
            Regs::Sse | Regs::Avx => Regs::Sse,
            Regs::Avx512 => Regs::Avx,
            Regs::Amx => Regs::Avx512,
            Regs::Neon => Regs::Sse,
            Regs::Sve => Regs::Neon,
        }
    }

    /// The XSAVE components this state adds over the one below (bits of XCR0/XINUSE); for the
    /// arm64 states, their bits of [`Xsave::xcr0`] and of the read-back ([`NEON_BIT`],
    /// [`SVE_BIT`]).
    pub fn components(self) -> u64 {
        match self {
            Regs::Sse => 1 << 1,
            Regs::Avx => 1 << 2,
            Regs::Avx512 => (1 << 5) | (1 << 6) | (1 << 7),
            Regs::Amx => (1 << 17) | (1 << 18),
            Regs::Neon => NEON_BIT,
            Regs::Sve => SVE_BIT,
        }
    }
}

/// The arm64 states' bits, above every XSAVE component: in [`Xsave::xcr0`] the state is
/// offered, in a read-back the task's registers hold what it loaded.
pub const NEON_BIT: u64 = 1 << 40;
pub const SVE_BIT: u64 = 1 << 41;

/// Bytes the kernel stores of a task's SVE state at vector length `vl` bytes: 32 Z registers
/// of `vl`, 16 P registers and FFR of `vl / 8` each.
pub fn sve_state_bytes(vl: u32) -> u32 {
    32 * vl + 17 * (vl / 8)
}

/// XSAVE's facts from CPUID leaf 0xD and XCR0; on arm64 the same facts of its NEON and SVE
/// state (the fields say which).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Xsave {
    /// The components the OS enabled (XCR0); on arm64 [`NEON_BIT`] always and [`SVE_BIT`]
    /// where `AT_HWCAP` has HWCAP_SVE.
    pub xcr0: u64,
    /// Bytes of the XSAVE area for the enabled components (CPUID 0xD.0 EBX); on arm64 the
    /// largest state the kernel stores for a task (the SVE state where offered, else the V
    /// registers).
    pub enabled_bytes: u32,
    /// Bytes for every component the CPU supports (CPUID 0xD.0 ECX); on arm64 as above.
    pub max_bytes: u32,
    /// Whether liveness can be read: `xgetbv(1)` reads XINUSE (CPUID 0xD.1 EAX bit 2); on
    /// arm64 the read-back of the loaded registers, always.
    pub xinuse: bool,
    /// arm64: the SVE vector length in bytes (`prctl(PR_SVE_GET_VL)`), 0 without SVE.
    pub sve_vl: u32,
}

impl Xsave {
    /// Bytes XSAVE stores for the components of `mask` (CPUID 0xD.i EAX per component ≥ 2;
    /// the legacy SSE region is 512 bytes of which the xmm registers are 256).
    pub fn bytes_of(&self, mask: u64) -> u32 {
        (0..63)
            .filter(|i| mask & (1u64 << i) != 0)
            .map(|i| match i {
                0 => 160,
                1 => 256,
                40 => 512,
                41 => sve_state_bytes(self.sve_vl).saturating_sub(512),
                i => component_bytes(i),
            })
            .sum()
    }

    /// Whether the OS enabled every component of `regs`.
    pub fn enabled(&self, regs: Regs) -> bool {
        self.xcr0 & regs.components() == regs.components()
    }
}

#[cfg(target_arch = "x86_64")]
fn cpuid(leaf: u32, sub: u32) -> (u32, u32, u32, u32) {
    let r = std::arch::x86_64::__cpuid_count(leaf, sub);
    (r.eax, r.ebx, r.ecx, r.edx)
}

#[cfg(target_arch = "x86_64")]
fn component_bytes(i: u32) -> u32 {
    if cpuid(0, 0).0 < 0xd {
        return 0;
    }
    cpuid(0xd, i).0
}

#[cfg(not(target_arch = "x86_64"))]
fn component_bytes(_i: u32) -> u32 {
    0
}

/// XSAVE's facts on this CPU (all zero where there is no XSAVE or not x86-64).
#[cfg(target_arch = "x86_64")]
pub fn xsave() -> Xsave {
    let (max_leaf, ..) = cpuid(0, 0);
    let (_, _, ecx1, _) = cpuid(1, 0);
    // OSXSAVE: the OS enabled XSAVE, so xgetbv may run.
    if max_leaf < 0xd || ecx1 & (1 << 27) == 0 {
        return Xsave::default();
    }
    let (_, ebx, ecx, _) = cpuid(0xd, 0);
    let (eax1, ..) = cpuid(0xd, 1);
    Xsave {
        xcr0: xgetbv(0),
        enabled_bytes: ebx,
        max_bytes: ecx,
        xinuse: eax1 & (1 << 2) != 0,
        sve_vl: 0,
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn xsave() -> Xsave {
    Xsave::default()
}

/// HWCAP_SVE of `AT_HWCAP` (arch/arm64/include/uapi/asm/hwcap.h).
#[cfg(target_arch = "aarch64")]
const HWCAP_SVE: libc::c_ulong = 1 << 22;
#[cfg(target_arch = "aarch64")]
const PR_SVE_GET_VL: libc::c_int = 51;
#[cfg(target_arch = "aarch64")]
const PR_SVE_VL_LEN_MASK: libc::c_int = 0xffff;

/// arm64's NEON and SVE facts: NEON always, SVE where HWCAP_SVE is set, its vector length from
/// `prctl(PR_SVE_GET_VL)`.
#[cfg(target_arch = "aarch64")]
pub fn xsave() -> Xsave {
    // SAFETY: getauxval reads the process's auxiliary vector; prctl takes integers only.
    let hwcap = unsafe { libc::getauxval(libc::AT_HWCAP) };
    let vl = if hwcap & HWCAP_SVE != 0 {
        let r = unsafe { libc::prctl(PR_SVE_GET_VL, 0, 0, 0, 0) };
        if r > 0 {
            (r & PR_SVE_VL_LEN_MASK) as u32
        } else {
            0
        }
    } else {
        0
    };
    let bytes = if vl > 0 { sve_state_bytes(vl) } else { 512 };
    Xsave {
        xcr0: NEON_BIT | if vl > 0 { SVE_BIT } else { 0 },
        enabled_bytes: bytes,
        max_bytes: bytes,
        xinuse: true,
        sve_vl: vl,
    }
}

/// `xgetbv(ecx)`: XCR0 for 0, XINUSE (the components not in their initial state) for 1.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn xgetbv(ecx: u32) -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: callers check OSXSAVE (and for ecx = 1 the XINUSE bit) first; xgetbv only reads.
    unsafe {
        std::arch::asm!("xgetbv", in("ecx") ecx, out("eax") lo, out("edx") hi,
                        options(nomem, nostack, preserves_flags));
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// The pattern every dirtied register is loaded from (non-zero, so no component stays in its
/// initial state), 64-byte aligned for the widest loads, and the tile configuration.
#[repr(C, align(64))]
struct Pattern {
    bytes: [u8; 1024],
    tilecfg: [u8; 64],
}

static PATTERN: Pattern = {
    let mut bytes = [0u8; 1024];
    let mut i = 0;
    while i < 1024 {
        bytes[i] = (i as u8) | 1;
        i += 1;
    }
    // Palette 1, eight tiles of 16 rows of 64 bytes.
    let mut tilecfg = [0u8; 64];
    tilecfg[0] = 1;
    let mut t = 0;
    while t < 8 {
        tilecfg[16 + 2 * t] = 64;
        tilecfg[48 + t] = 16;
        t += 1;
    }
    Pattern { bytes, tilecfg }
};

/// A zeroed XSAVE area (standard form: XSTATE_BV = 0), read by XRSTOR to put components back
/// in their initial state. Larger than any XSAVE area (AMX's is about 11 KiB).
#[cfg(target_arch = "x86_64")]
#[repr(C, align(64))]
struct InitArea([u8; 16384]);
#[cfg(target_arch = "x86_64")]
static INIT_AREA: InitArea = InitArea([0; 16384]);

/// Make `regs` live: load every register of that state (and of the states below it) from
/// the pattern. Allocation-free; the caller checked that the CPU and the OS offer it.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn dirty(regs: Regs) {
    let p = PATTERN.bytes.as_ptr();
    // SAFETY: each arm runs only where `xsave()` shows the state enabled (the plan checks);
    // the loads read the static pattern; every register written is declared clobbered
    // (clobber_abi "C" holds xmm/ymm/zmm 0-31, k0-7 and the tiles).
    unsafe {
        match regs {
            Regs::Neon | Regs::Sve => {}
            Regs::Sse => std::arch::asm!(
                "movdqa xmm0, [{p}]", "movdqa xmm8, [{p} + 16]",
                p = in(reg) p, clobber_abi("C"), options(nostack, readonly)),
            Regs::Avx => std::arch::asm!(
                "vmovdqa ymm0, [{p}]", "vmovdqa ymm1, [{p} + 32]",
                "vmovdqa ymm2, [{p} + 64]", "vmovdqa ymm3, [{p} + 96]",
                "vmovdqa ymm4, [{p} + 128]", "vmovdqa ymm5, [{p} + 160]",
                "vmovdqa ymm6, [{p} + 192]", "vmovdqa ymm7, [{p} + 224]",
                "vmovdqa ymm8, [{p} + 256]", "vmovdqa ymm9, [{p} + 288]",
                "vmovdqa ymm10, [{p} + 320]", "vmovdqa ymm11, [{p} + 352]",
                "vmovdqa ymm12, [{p} + 384]", "vmovdqa ymm13, [{p} + 416]",
                "vmovdqa ymm14, [{p} + 448]", "vmovdqa ymm15, [{p} + 480]",
                p = in(reg) p, clobber_abi("C"), options(nostack, readonly)),
            Regs::Avx512 => dirty_avx512(p),
            Regs::Amx => {
                dirty_avx512(p);
                std::arch::asm!(
                    "ldtilecfg [{c}]",
                    "tileloadd tmm0, [{p} + {s}]", "tileloadd tmm1, [{p} + {s}]",
                    "tileloadd tmm2, [{p} + {s}]", "tileloadd tmm3, [{p} + {s}]",
                    "tileloadd tmm4, [{p} + {s}]", "tileloadd tmm5, [{p} + {s}]",
                    "tileloadd tmm6, [{p} + {s}]", "tileloadd tmm7, [{p} + {s}]",
                    c = in(reg) PATTERN.tilecfg.as_ptr(), p = in(reg) p,
                    // Stride 0: every row of a tile is the pattern's first 64 bytes.
                    s = in(reg) 0usize,
                    clobber_abi("C"), options(nostack, readonly))
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn dirty_avx512(p: *const u8) {
    // SAFETY: as dirty's.
    unsafe {
        std::arch::asm!(
            "vmovdqa64 zmm0, [{p}]", "vmovdqa64 zmm1, [{p} + 64]",
            "vmovdqa64 zmm2, [{p} + 128]", "vmovdqa64 zmm3, [{p} + 192]",
            "vmovdqa64 zmm4, [{p} + 256]", "vmovdqa64 zmm5, [{p} + 320]",
            "vmovdqa64 zmm6, [{p} + 384]", "vmovdqa64 zmm7, [{p} + 448]",
            "vmovdqa64 zmm8, [{p} + 512]", "vmovdqa64 zmm9, [{p} + 576]",
            "vmovdqa64 zmm10, [{p} + 640]", "vmovdqa64 zmm11, [{p} + 704]",
            "vmovdqa64 zmm12, [{p} + 768]", "vmovdqa64 zmm13, [{p} + 832]",
            "vmovdqa64 zmm14, [{p} + 896]", "vmovdqa64 zmm15, [{p} + 960]",
            "vmovdqa64 zmm16, [{p}]", "vmovdqa64 zmm17, [{p} + 64]",
            "vmovdqa64 zmm18, [{p} + 128]", "vmovdqa64 zmm19, [{p} + 192]",
            "vmovdqa64 zmm20, [{p} + 256]", "vmovdqa64 zmm21, [{p} + 320]",
            "vmovdqa64 zmm22, [{p} + 384]", "vmovdqa64 zmm23, [{p} + 448]",
            "vmovdqa64 zmm24, [{p} + 512]", "vmovdqa64 zmm25, [{p} + 576]",
            "vmovdqa64 zmm26, [{p} + 640]", "vmovdqa64 zmm27, [{p} + 704]",
            "vmovdqa64 zmm28, [{p} + 768]", "vmovdqa64 zmm29, [{p} + 832]",
            "vmovdqa64 zmm30, [{p} + 896]", "vmovdqa64 zmm31, [{p} + 960]",
            "kmovw k1, [{p}]", "kmovw k2, [{p} + 8]", "kmovw k3, [{p} + 16]",
            "kmovw k4, [{p} + 24]", "kmovw k5, [{p} + 32]", "kmovw k6, [{p} + 40]",
            "kmovw k7, [{p} + 48]",
            p = in(reg) p, clobber_abi("C"), options(nostack, readonly));
    }
}

/// Put the components `regs` adds back in their initial state (the rung's baseline runs the
/// same loads, then this, so only the liveness at the switch differs): `vzeroupper` for AVX,
/// XRSTOR from a zeroed area for AVX-512's opmask and zmm, `tilerelease` for AMX.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn release(regs: Regs) {
    // SAFETY: as dirty's; XRSTOR reads the static zeroed area (XSTATE_BV = 0: every
    // requested component to its initial state) with only enabled components requested.
    unsafe {
        match regs {
            Regs::Sse | Regs::Neon | Regs::Sve => {}
            Regs::Avx => std::arch::asm!("vzeroupper", clobber_abi("C"), options(nostack)),
            Regs::Avx512 => {
                let mask = Regs::Avx512.components();
                std::arch::asm!("xrstor64 [{a}]", a = in(reg) INIT_AREA.0.as_ptr(),
                    in("eax") mask as u32, in("edx") (mask >> 32) as u32,
                    clobber_abi("C"), options(nostack, readonly))
            }
            Regs::Amx => std::arch::asm!("tilerelease", clobber_abi("C"), options(nostack)),
        }
    }
}

/// What a task does before every switch: load `regs` (where `dirty`), release it (where
/// `release`), and where `observe` return the reading that proves what was live (XINUSE).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn prepare(regs: Regs, dirty: bool, release: bool, observe: bool) -> u64 {
    if dirty {
        self::dirty(regs);
        if release {
            self::release(regs);
        }
    }
    if observe {
        xgetbv(1)
    } else {
        0
    }
}

/// What a task does before every switch on arm64: load `regs` (where `dirty`), zero the V
/// registers again (NEON where `release`; SVE's baseline is the NEON loads instead), and
/// where `observe` return the read-back: [`NEON_BIT`] where V0 and V31 hold the pattern they
/// were loaded from, [`SVE_BIT`] where Z0's and Z31's last bytes (beyond the V registers) do
/// and P15 is all true. There is no XINUSE on arm64: the read-back proves the loads took
/// effect at the full vector length right before the system call that switches, which then
/// discards the SVE part (Documentation/arch/arm64/sve.rst, "System call behaviour").
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub fn prepare(regs: Regs, dirty: bool, release: bool, observe: bool) -> u64 {
    let p = PATTERN.bytes.as_ptr();
    let mask = match (regs, dirty) {
        (Regs::Neon, true) => neon_mask(arm::load_v(p, release)),
        (Regs::Sve, true) => sve_mask(arm::load_z(p)),
        (Regs::Neon, false) => neon_mask(arm::read_v()),
        (Regs::Sve, false) => sve_mask(arm::read_z()),
        _ => 0,
    };
    if observe {
        mask
    } else {
        0
    }
}

/// The pattern's 8 bytes at `at`, as a register holds them (little-endian).
fn pattern_u64(at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&PATTERN.bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// NEON's read-back bit from (V0's, V31's low 64 bits): V0 is loaded from the pattern's first
/// bytes, V31 from bytes 496..512.
pub fn neon_mask((v0, v31): (u64, u64)) -> u64 {
    if v0 == pattern_u64(0) && v31 == pattern_u64(496) {
        NEON_BIT
    } else {
        0
    }
}

/// What the SVE read-back saw: Z0's and Z31's last bytes, the active lanes of P15, and the
/// vector length in bytes (`cntb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZReadBack {
    pub z0_last: u8,
    pub z31_last: u8,
    pub p15_lanes: u64,
    pub vl: u64,
}

/// SVE's read-back bit: every Z register is loaded from the pattern's first `vl` bytes and
/// every P register set all true, so Z0's and Z31's last lanes hold byte `vl − 1` and P15 has
/// `vl` active byte lanes. A task that ran no SVE load since its last system call reads the
/// kernel's zeroes there instead.
pub fn sve_mask(r: ZReadBack) -> u64 {
    let vl = r.vl as usize;
    let ok = (16..=PATTERN.bytes.len()).contains(&vl)
        && r.z0_last == PATTERN.bytes[vl - 1]
        && r.z31_last == PATTERN.bytes[vl - 1]
        && r.p15_lanes == r.vl;
    if ok {
        SVE_BIT
    } else {
        0
    }
}

/// The arm64 loads and read-backs, each one `asm!` block so nothing runs between a load and
/// its read-back.
#[cfg(target_arch = "aarch64")]
mod arm {
    use super::ZReadBack;

    /// Load V0-V31 from the 512 bytes at `p` (zeroing them again where `release`), then read
    /// back the low 64 bits of V0 and V31.
    #[inline(always)]
    pub fn load_v(p: *const u8, release: bool) -> (u64, u64) {
        let (a, b): (u64, u64);
        // SAFETY: the loads read the static 1024-byte pattern; every V register is declared
        // written.
        unsafe {
            std::arch::asm!(
                "ld1 {{v0.16b, v1.16b, v2.16b, v3.16b}}, [{p}], #64",
                "ld1 {{v4.16b, v5.16b, v6.16b, v7.16b}}, [{p}], #64",
                "ld1 {{v8.16b, v9.16b, v10.16b, v11.16b}}, [{p}], #64",
                "ld1 {{v12.16b, v13.16b, v14.16b, v15.16b}}, [{p}], #64",
                "ld1 {{v16.16b, v17.16b, v18.16b, v19.16b}}, [{p}], #64",
                "ld1 {{v20.16b, v21.16b, v22.16b, v23.16b}}, [{p}], #64",
                "ld1 {{v24.16b, v25.16b, v26.16b, v27.16b}}, [{p}], #64",
                "ld1 {{v28.16b, v29.16b, v30.16b, v31.16b}}, [{p}], #64",
                "cbz {rel}, 2f",
                "movi v0.2d, #0", "movi v1.2d, #0", "movi v2.2d, #0", "movi v3.2d, #0",
                "movi v4.2d, #0", "movi v5.2d, #0", "movi v6.2d, #0", "movi v7.2d, #0",
                "movi v8.2d, #0", "movi v9.2d, #0", "movi v10.2d, #0", "movi v11.2d, #0",
                "movi v12.2d, #0", "movi v13.2d, #0", "movi v14.2d, #0", "movi v15.2d, #0",
                "movi v16.2d, #0", "movi v17.2d, #0", "movi v18.2d, #0", "movi v19.2d, #0",
                "movi v20.2d, #0", "movi v21.2d, #0", "movi v22.2d, #0", "movi v23.2d, #0",
                "movi v24.2d, #0", "movi v25.2d, #0", "movi v26.2d, #0", "movi v27.2d, #0",
                "movi v28.2d, #0", "movi v29.2d, #0", "movi v30.2d, #0", "movi v31.2d, #0",
                "2:",
                "fmov {a}, d0",
                "fmov {b}, d31",
                p = inout(reg) p => _,
                rel = in(reg) u64::from(release),
                a = lateout(reg) a,
                b = lateout(reg) b,
                out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _, out("v5") _,
                out("v6") _, out("v7") _, out("v8") _, out("v9") _, out("v10") _, out("v11") _,
                out("v12") _, out("v13") _, out("v14") _, out("v15") _, out("v16") _, out("v17") _,
                out("v18") _, out("v19") _, out("v20") _, out("v21") _, out("v22") _, out("v23") _,
                out("v24") _, out("v25") _, out("v26") _, out("v27") _, out("v28") _, out("v29") _,
                out("v30") _, out("v31") _,
                options(nostack, readonly),
            );
        }
        (a, b)
    }

    /// Read back the low 64 bits of V0 and V31 without loading them.
    #[inline(always)]
    pub fn read_v() -> (u64, u64) {
        let (a, b): (u64, u64);
        // SAFETY: reads two registers into general ones.
        unsafe {
            std::arch::asm!("fmov {a}, d0", "fmov {b}, d31", a = out(reg) a, b = out(reg) b,
                            options(nomem, nostack, preserves_flags));
        }
        (a, b)
    }

    /// Load Z0-Z31 from the pattern's first VL bytes and set P0-P15 and FFR all true, then
    /// read them back.
    #[inline(always)]
    pub fn load_z(p: *const u8) -> ZReadBack {
        let (z0, z31, lanes, vl): (u64, u64, u64, u64);
        // SAFETY: run only where HWCAP_SVE is set (the plan checks); the loads read at most
        // 256 bytes (the largest vector length) of the 1024-byte pattern; every V (Z), P and
        // FFR register is declared written.
        unsafe {
            std::arch::asm!(
                ".arch_extension sve",
                "ptrue p0.b",
                "ld1b {{z0.b}}, p0/z, [{p}]", "ld1b {{z1.b}}, p0/z, [{p}]",
                "ld1b {{z2.b}}, p0/z, [{p}]", "ld1b {{z3.b}}, p0/z, [{p}]",
                "ld1b {{z4.b}}, p0/z, [{p}]", "ld1b {{z5.b}}, p0/z, [{p}]",
                "ld1b {{z6.b}}, p0/z, [{p}]", "ld1b {{z7.b}}, p0/z, [{p}]",
                "ld1b {{z8.b}}, p0/z, [{p}]", "ld1b {{z9.b}}, p0/z, [{p}]",
                "ld1b {{z10.b}}, p0/z, [{p}]", "ld1b {{z11.b}}, p0/z, [{p}]",
                "ld1b {{z12.b}}, p0/z, [{p}]", "ld1b {{z13.b}}, p0/z, [{p}]",
                "ld1b {{z14.b}}, p0/z, [{p}]", "ld1b {{z15.b}}, p0/z, [{p}]",
                "ld1b {{z16.b}}, p0/z, [{p}]", "ld1b {{z17.b}}, p0/z, [{p}]",
                "ld1b {{z18.b}}, p0/z, [{p}]", "ld1b {{z19.b}}, p0/z, [{p}]",
                "ld1b {{z20.b}}, p0/z, [{p}]", "ld1b {{z21.b}}, p0/z, [{p}]",
                "ld1b {{z22.b}}, p0/z, [{p}]", "ld1b {{z23.b}}, p0/z, [{p}]",
                "ld1b {{z24.b}}, p0/z, [{p}]", "ld1b {{z25.b}}, p0/z, [{p}]",
                "ld1b {{z26.b}}, p0/z, [{p}]", "ld1b {{z27.b}}, p0/z, [{p}]",
                "ld1b {{z28.b}}, p0/z, [{p}]", "ld1b {{z29.b}}, p0/z, [{p}]",
                "ld1b {{z30.b}}, p0/z, [{p}]", "ld1b {{z31.b}}, p0/z, [{p}]",
                "ptrue p1.b", "ptrue p2.b", "ptrue p3.b", "ptrue p4.b", "ptrue p5.b",
                "ptrue p6.b", "ptrue p7.b", "ptrue p8.b", "ptrue p9.b", "ptrue p10.b",
                "ptrue p11.b", "ptrue p12.b", "ptrue p13.b", "ptrue p14.b", "ptrue p15.b",
                "setffr",
                "lastb {z0:w}, p0, z0.b",
                "lastb {z31:w}, p0, z31.b",
                "cntp {lanes}, p15, p15.b",
                "cntb {vl}",
                p = in(reg) p,
                z0 = lateout(reg) z0,
                z31 = lateout(reg) z31,
                lanes = lateout(reg) lanes,
                vl = lateout(reg) vl,
                out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _, out("v5") _,
                out("v6") _, out("v7") _, out("v8") _, out("v9") _, out("v10") _, out("v11") _,
                out("v12") _, out("v13") _, out("v14") _, out("v15") _, out("v16") _, out("v17") _,
                out("v18") _, out("v19") _, out("v20") _, out("v21") _, out("v22") _, out("v23") _,
                out("v24") _, out("v25") _, out("v26") _, out("v27") _, out("v28") _, out("v29") _,
                out("v30") _, out("v31") _,
                out("p0") _, out("p1") _, out("p2") _, out("p3") _, out("p4") _, out("p5") _,
                out("p6") _, out("p7") _, out("p8") _, out("p9") _, out("p10") _, out("p11") _,
                out("p12") _, out("p13") _, out("p14") _, out("p15") _, out("ffr") _,
                options(nostack, readonly),
            );
        }
        ZReadBack {
            z0_last: z0 as u8,
            z31_last: z31 as u8,
            p15_lanes: lanes,
            vl,
        }
    }

    /// Read back Z0's and Z31's last bytes and P15's active lanes without loading them.
    #[inline(always)]
    pub fn read_z() -> ZReadBack {
        let (z0, z31, lanes, vl): (u64, u64, u64, u64);
        // SAFETY: as load_z's; only p0 is written (all true, for the read).
        unsafe {
            std::arch::asm!(
                ".arch_extension sve",
                "ptrue p0.b",
                "lastb {z0:w}, p0, z0.b",
                "lastb {z31:w}, p0, z31.b",
                "cntp {lanes}, p15, p15.b",
                "cntb {vl}",
                z0 = lateout(reg) z0,
                z31 = lateout(reg) z31,
                lanes = lateout(reg) lanes,
                vl = lateout(reg) vl,
                out("p0") _,
                options(nomem, nostack),
            );
        }
        ZReadBack {
            z0_last: z0 as u8,
            z31_last: z31 as u8,
            p15_lanes: lanes,
            vl,
        }
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn prepare(_regs: Regs, _dirty: bool, _release: bool, _observe: bool) -> u64 {
    0
}

/// Why a register rung cannot run here, or None when it can.
pub fn regs_unavailable(x: &Xsave, regs: Regs, amx_granted: &Result<(), String>) -> Option<String> {
    if regs.arm64() {
        if !cfg!(target_arch = "aarch64") {
            return Some(format!("{} is an arm64 state", regs.word()));
        }
        return (!x.enabled(regs)).then(|| {
            format!(
                "this CPU or kernel offers no {} state (AT_HWCAP)",
                regs.word()
            )
        });
    }
    if !cfg!(target_arch = "x86_64") {
        return Some("the XSAVE register rungs are written for x86-64".into());
    }
    if x.xcr0 == 0 {
        return Some("this CPU or OS offers no XSAVE".into());
    }
    if !x.xinuse {
        return Some("this CPU cannot read XINUSE (xgetbv 1), so liveness is unprovable".into());
    }
    if regs == Regs::Amx {
        if let Err(e) = amx_granted {
            return Some(e.clone());
        }
    }
    (!x.enabled(regs)).then(|| format!("the OS did not enable {} state (XCR0)", regs.word()))
}

#[cfg(target_arch = "x86_64")]
const ARCH_REQ_XCOMP_PERM: libc::c_int = 0x1023;
#[cfg(target_arch = "x86_64")]
const XFEATURE_XTILEDATA: libc::c_ulong = 18;

/// Ask for AMX tile permission (process-wide, kept for the process's life: it lets tasks
/// use tiles and does not itself enlarge any task's state). Err: the one line why not.
#[cfg(target_arch = "x86_64")]
pub fn request_amx() -> Result<(), String> {
    // SAFETY: arch_prctl with an integer argument; no memory is passed.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "arch_prctl(ARCH_REQ_XCOMP_PERM) refused AMX tiles: {}",
            std::io::Error::last_os_error()
        ))
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub fn request_amx() -> Result<(), String> {
    Err("AMX tiles are x86-64 state".into())
}

/// What a task's indirect-branch speculation control reads back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecAnswer {
    /// prctl(PR_GET_SPECULATION_CTRL) after the set (its bits, or -errno).
    pub get: i64,
}

/// prctl's speculation control (include/uapi/linux/prctl.h, the same on every architecture).
const PR_GET_SPECULATION_CTRL: libc::c_int = 52;
const PR_SET_SPECULATION_CTRL: libc::c_int = 53;
const PR_SPEC_INDIRECT_BRANCH: libc::c_ulong = 1;
const PR_SPEC_FORCE_DISABLE: libc::c_ulong = 8;

/// prctl's answer bits.
const PR_SPEC_PRCTL: i64 = 1;
const PR_SPEC_FORCE_DISABLE_BIT: i64 = 8;

/// Ask the kernel to disable indirect-branch speculation for the calling task for good
/// (PR_SPEC_FORCE_DISABLE: the task is a partner that exits when the rung ends) and read the
/// answer back. A raw system call: runs after fork.
#[inline(always)]
pub fn force_disable_indirect_branch() -> SpecAnswer {
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(
            PR_SET_SPECULATION_CTRL,
            PR_SPEC_INDIRECT_BRANCH,
            PR_SPEC_FORCE_DISABLE,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
    SpecAnswer { get: spec_get() }
}

/// PR_GET_SPECULATION_CTRL for indirect branches: the answer bits, or -errno.
pub fn spec_get() -> i64 {
    // SAFETY: prctl with integer arguments only.
    let r = unsafe {
        libc::prctl(
            PR_GET_SPECULATION_CTRL,
            PR_SPEC_INDIRECT_BRANCH,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if r < 0 {
        -(crate::engine::partner::errno() as i64)
    } else {
        r as i64
    }
}

/// Why the speculation rung cannot run here (from this task's PR_GET answer), or None.
pub fn barrier_unavailable(get: i64) -> Option<String> {
    if get < 0 {
        return Some(format!(
            "the kernel has no indirect-branch speculation control (prctl: {})",
            std::io::Error::from_raw_os_error(-get as i32)
        ));
    }
    if get == 0 {
        return Some("this CPU is not affected: the kernel offers no barrier to ask for".into());
    }
    (get & PR_SPEC_PRCTL == 0).then(|| {
        "the kernel decides indirect-branch speculation for every task (no per-task prctl)".into()
    })
}

/// Whether a read-back answer says the barrier was granted.
pub fn barrier_granted(a: SpecAnswer) -> bool {
    a.get > 0 && a.get & PR_SPEC_FORCE_DISABLE_BIT != 0
}

/// The `SpeculationIndirectBranch:` line of a task's /proc status ("conditional force
/// disabled", "always enabled", ...), None where absent.
pub fn status_line(pid: i32, tid: i32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    parse_status_line(&text)
}

/// The value of `SpeculationIndirectBranch:` in a status file's text.
pub fn parse_status_line(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("SpeculationIndirectBranch:"))
        .map(|v| v.trim().to_string())
}

/// The data TLB's reach from CPUID leaf 0x18 (entries for 4 KiB pages): (first level,
/// second level), None where the CPU does not describe it.
#[cfg(target_arch = "x86_64")]
pub fn tlb_entries() -> (Option<u32>, Option<u32>) {
    if cpuid(0, 0).0 < 0x18 {
        return (None, None);
    }
    let max_sub = cpuid(0x18, 0).0;
    let mut subs = Vec::new();
    for s in 0..=max_sub.min(16) {
        let (_, ebx, ecx, edx) = cpuid(0x18, s);
        subs.push((ebx, ecx, edx));
    }
    parse_leaf_18(&subs)
}

#[cfg(not(target_arch = "x86_64"))]
pub fn tlb_entries() -> (Option<u32>, Option<u32>) {
    (None, None)
}

/// Leaf 0x18's sub-leaves as (EBX, ECX, EDX): type in EDX[4:0] (1 data, 3 unified, 4 load
/// only), level in EDX[7:5], 4 KiB pages in EBX bit 0, ways in EBX[31:16], sets in ECX.
pub fn parse_leaf_18(subs: &[(u32, u32, u32)]) -> (Option<u32>, Option<u32>) {
    let mut l1 = None;
    let mut l2 = None;
    for &(ebx, ecx, edx) in subs {
        let ty = edx & 0x1f;
        let level = (edx >> 5) & 0x7;
        if ebx & 1 == 0 || !matches!(ty, 1 | 3 | 4) {
            continue;
        }
        let entries = (ebx >> 16) * ecx;
        let slot = if level == 1 { &mut l1 } else { &mut l2 };
        *slot = Some(slot.unwrap_or(0).max(entries));
    }
    (l1, l2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::name::tests::assert_words;

    #[test]
    fn each_state_has_its_own_words() {
        assert_words(&[
            (Regs::Sse, "sse"),
            (Regs::Avx, "avx"),
            (Regs::Avx512, "avx-512"),
            (Regs::Amx, "amx"),
            (Regs::Neon, "neon"),
            (Regs::Sve, "sve"),
        ]);
    }

    #[test]
    fn the_status_line_is_read_from_the_text() {
        let t =
            "Name:\tx\nSpeculationIndirectBranch:\tconditional force disabled\nCpus_allowed:\t3\n";
        assert_eq!(
            parse_status_line(t).as_deref(),
            Some("conditional force disabled")
        );
        assert_eq!(parse_status_line("Name:\tx\n"), None);
    }

    #[test]
    fn prctl_answers_say_why_a_barrier_cannot_be_asked_for() {
        assert!(barrier_unavailable(-libc::EINVAL as i64).is_some());
        assert!(barrier_unavailable(0).unwrap().contains("not affected"));
        // PR_SPEC_ENABLE only (2): no per-task control.
        assert!(barrier_unavailable(2).unwrap().contains("no per-task"));
        // PR_SPEC_PRCTL | PR_SPEC_ENABLE.
        assert!(barrier_unavailable(3).is_none());
        assert!(barrier_granted(SpecAnswer { get: 1 | 8 }));
        assert!(!barrier_granted(SpecAnswer { get: 1 | 2 }));
        assert!(!barrier_granted(SpecAnswer { get: -1 }));
    }

    #[test]
    fn leaf_18_gives_each_levels_largest_data_tlb() {
        // Sapphire Rapids-like: load-only L1 64 entries (4-way × 16 sets), store-only
        // (type 5, ignored), unified L2 2048 (16-way × 128), instruction TLB ignored.
        let subs = [
            (0, 0, 0),
            ((4 << 16) | 1, 16, (1 << 5) | 4),
            ((4 << 16) | 1, 16, (1 << 5) | 5),
            ((16 << 16) | 1, 128, (2 << 5) | 3),
            ((8 << 16) | 1, 32, (1 << 5) | 2),
            // 2 MiB pages only: not counted for 4 KiB reach.
            ((8 << 16) | 2, 4, (1 << 5) | 1),
        ];
        assert_eq!(parse_leaf_18(&subs), (Some(64), Some(2048)));
        assert_eq!(parse_leaf_18(&[]), (None, None));
    }

    #[test]
    fn components_and_bytes_follow_the_ladder() {
        assert_eq!(Regs::Amx.below(), Regs::Avx512);
        assert_eq!(Regs::Avx.below(), Regs::Sse);
        let x = Xsave {
            xcr0: 0b1110_0111,
            ..Default::default()
        };
        assert!(x.enabled(Regs::Avx512) && !x.enabled(Regs::Amx));
        let none: Result<(), String> = Ok(());
        if !cfg!(target_arch = "x86_64") {
            let why = regs_unavailable(&x, Regs::Avx, &none);
            assert!(why.is_some_and(|w| w.contains("x86-64")));
            return;
        }
        let no_xinuse = regs_unavailable(&x, Regs::Avx, &none);
        assert!(no_xinuse.is_some_and(|w| w.contains("XINUSE")));
        let x = Xsave { xinuse: true, ..x };
        assert!(regs_unavailable(&x, Regs::Avx, &none).is_none());
        let refused = Err("refused".to_string());
        assert_eq!(
            regs_unavailable(&x, Regs::Amx, &refused).as_deref(),
            Some("refused")
        );
    }

    #[test]
    fn arm64_states_have_their_sizes_baselines_and_words() {
        // A 512-bit vector length: 32 Z of 64 B, 16 P and FFR of 8 B.
        assert_eq!(sve_state_bytes(64), 2184);
        let x = Xsave {
            xcr0: NEON_BIT | SVE_BIT,
            sve_vl: 64,
            xinuse: true,
            ..Default::default()
        };
        assert_eq!(x.bytes_of(Regs::Neon.components()), 512);
        assert_eq!(x.bytes_of(Regs::Sve.components()), 2184 - 512);
        assert_eq!(Regs::Sve.baseline(), (Regs::Neon, false));
        assert_eq!(Regs::Neon.baseline(), (Regs::Neon, true));
        assert_eq!(Regs::Avx512.baseline(), (Regs::Avx512, true));
        let none: Result<(), String> = Ok(());
        if cfg!(target_arch = "aarch64") {
            assert!(regs_unavailable(&x, Regs::Sve, &none).is_none());
            let no_sve = Xsave {
                xcr0: NEON_BIT,
                ..x
            };
            let why = regs_unavailable(&no_sve, Regs::Sve, &none);
            assert!(why.is_some_and(|w| w.contains("no sve")));
        } else {
            let why = regs_unavailable(&x, Regs::Neon, &none);
            assert!(why.is_some_and(|w| w.contains("arm64")));
        }
    }

    #[test]
    fn the_arm64_read_back_sees_only_the_loaded_values() {
        assert_eq!(neon_mask((pattern_u64(0), pattern_u64(496))), NEON_BIT);
        // Released (zeroed), or loaded from elsewhere: not the loads.
        assert_eq!(neon_mask((0, 0)), 0);
        assert_eq!(neon_mask((pattern_u64(0), pattern_u64(0))), 0);
        let last = PATTERN.bytes[63];
        let loaded = ZReadBack {
            z0_last: last,
            z31_last: last,
            p15_lanes: 64,
            vl: 64,
        };
        assert_eq!(sve_mask(loaded), SVE_BIT);
        // After a system call the kernel zeroes the bits beyond the V registers and the P
        // registers: a task that ran no SVE load since reads those.
        let discarded = ZReadBack {
            z0_last: 0,
            z31_last: 0,
            p15_lanes: 0,
            ..loaded
        };
        assert_eq!(sve_mask(discarded), 0);
        assert_eq!(
            sve_mask(ZReadBack {
                p15_lanes: 32,
                ..loaded
            }),
            0
        );
        assert_eq!(
            sve_mask(ZReadBack {
                z31_last: 0,
                ..loaded
            }),
            0
        );
        assert_eq!(sve_mask(ZReadBack { vl: 0, ..loaded }), 0);
    }

    /// On arm64 (or under an emulator of it): the loads show in the read-back, NEON's release
    /// and SVE's NEON-only baseline do not, and a task that forgets to load shows nothing.
    #[cfg(target_arch = "aarch64")]
    #[test]
    fn arm64_loads_show_in_the_read_back_and_a_forgetful_task_does_not() {
        let x = xsave();
        assert!(x.enabled(Regs::Neon) && x.xinuse);
        let none: Result<(), String> = Ok(());
        let mut ran = Vec::new();
        for regs in Regs::LADDER {
            if regs_unavailable(&x, regs, &none).is_some() {
                continue;
            }
            if regs == Regs::Sve {
                assert!((16..=256).contains(&x.sve_vl) && x.sve_vl.is_multiple_of(16));
                assert_eq!(x.enabled_bytes, sve_state_bytes(x.sve_vl));
            }
            // A fresh thread: nothing this test loaded is in its registers.
            let (forgot, live, base) = std::thread::spawn(move || {
                let forgot = prepare(regs, false, false, true);
                let live = prepare(regs, true, false, true);
                let (b, release) = regs.baseline();
                (forgot, live, prepare(b, true, release, true))
            })
            .join()
            .unwrap();
            let want = regs.components();
            assert_eq!(forgot & want, 0, "{regs:?} {forgot:#x}");
            assert_eq!(live & want, want, "{regs:?} {live:#x}");
            assert_eq!(base & want, 0, "{regs:?} {base:#x}");
            ran.push(regs.word());
        }
        eprintln!("arm64 states read back: {ran:?}, SVE vector {} B", x.sve_vl);
    }

    /// On a CPU that has the state: dirtying makes its components live, releasing returns
    /// them to their initial state, and a task that forgets to dirty shows them not live.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn dirtying_shows_in_xinuse_and_releasing_clears_it() {
        let x = xsave();
        let granted = request_amx();
        for regs in Regs::LADDER {
            if regs_unavailable(&x, regs, &granted).is_some() {
                continue;
            }
            // A fresh thread: its state starts from nothing this test left live.
            let (live, released) = std::thread::spawn(move || {
                dirty(regs);
                let live = xgetbv(1);
                release(regs);
                (live, xgetbv(1))
            })
            .join()
            .unwrap();
            let want = regs.components();
            assert_eq!(live & want, want, "{regs:?} {live:#x}");
            assert_eq!(released & want, 0, "{regs:?} {released:#x}");
        }
    }
}
