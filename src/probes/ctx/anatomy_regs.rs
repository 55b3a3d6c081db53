//! The register state and the speculation control of `ctx anatomy`'s tasks: which SIMD state
//! the CPU offers and what XSAVE stores of it (CPUID leaf 0xD), how a task makes that state
//! live before a switch and how it proves it (XINUSE, `xgetbv(1)`), AMX permission
//! (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), the TLB's reach (CPUID leaf 0x18), and the
//! indirect-branch speculation control (`prctl(PR_SET_SPECULATION_CTRL)`) with the kernel's
//! answer read back. Everything a task calls after fork is a plain instruction or a raw
//! system call on memory prepared before.

/// A SIMD register state a task leaves live at every switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Regs {
    /// None beyond what every task holds (the compiler's xmm registers).
    Sse,
    /// The upper halves of ymm0-15.
    Avx,
    /// zmm0-31 and the opmask registers.
    Avx512,
    /// The AMX tiles (with the AVX-512 state under them).
    Amx,
}

impl Regs {
    pub const LADDER: [Regs; 3] = [Regs::Avx, Regs::Avx512, Regs::Amx];

    pub fn as_str(self) -> &'static str {
        match self {
            Regs::Sse => "sse",
            Regs::Avx => "avx",
            Regs::Avx512 => "avx-512",
            Regs::Amx => "amx",
        }
    }

    /// The state below this one on the ladder (its rung's baseline).
    pub fn below(self) -> Regs {
        match self {
            Regs::Sse | Regs::Avx => Regs::Sse,
            Regs::Avx512 => Regs::Avx,
            Regs::Amx => Regs::Avx512,
        }
    }

    /// The XSAVE components this state adds over the one below (bits of XCR0/XINUSE).
    pub fn components(self) -> u64 {
        match self {
            Regs::Sse => 1 << 1,
            Regs::Avx => 1 << 2,
            Regs::Avx512 => (1 << 5) | (1 << 6) | (1 << 7),
            Regs::Amx => (1 << 17) | (1 << 18),
        }
    }
}

/// XSAVE's facts from CPUID leaf 0xD and XCR0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Xsave {
    /// The components the OS enabled (XCR0).
    pub xcr0: u64,
    /// Bytes of the XSAVE area for the enabled components (CPUID 0xD.0 EBX).
    pub enabled_bytes: u32,
    /// Bytes for every component the CPU supports (CPUID 0xD.0 ECX).
    pub max_bytes: u32,
    /// Whether `xgetbv(1)` reads XINUSE (CPUID 0xD.1 EAX bit 2).
    pub xinuse: bool,
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
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub fn xsave() -> Xsave {
    Xsave::default()
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
#[repr(C, align(64))]
struct InitArea([u8; 16384]);
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
            Regs::Sse => {}
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

#[cfg(not(target_arch = "x86_64"))]
pub fn dirty(_regs: Regs) {}
#[cfg(not(target_arch = "x86_64"))]
pub fn release(_regs: Regs) {}
#[cfg(not(target_arch = "x86_64"))]
pub fn xgetbv(_ecx: u32) -> u64 {
    0
}

/// Why a register rung cannot run here, or None when it can.
pub fn regs_unavailable(x: &Xsave, regs: Regs, amx_granted: &Result<(), String>) -> Option<String> {
    if !cfg!(target_arch = "x86_64") {
        return Some("the register rungs are written for x86-64".into());
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
    (!x.enabled(regs)).then(|| format!("the OS did not enable {} state (XCR0)", regs.as_str()))
}

const ARCH_REQ_XCOMP_PERM: libc::c_int = 0x1023;
const XFEATURE_XTILEDATA: libc::c_ulong = 18;

/// Ask for AMX tile permission (process-wide, kept for the process's life: it lets tasks
/// use tiles and does not itself enlarge any task's state). Err: the one line why not.
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

/// What a task's indirect-branch speculation control reads back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecAnswer {
    /// prctl(PR_GET_SPECULATION_CTRL) after the set (its bits, or -errno).
    pub get: i64,
}

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
            libc::PR_SET_SPECULATION_CTRL,
            libc::PR_SPEC_INDIRECT_BRANCH as libc::c_ulong,
            libc::PR_SPEC_FORCE_DISABLE as libc::c_ulong,
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
            libc::PR_GET_SPECULATION_CTRL,
            libc::PR_SPEC_INDIRECT_BRANCH as libc::c_ulong,
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
