//! A working set: an anonymous private mapping that a task fills (so every page is its own,
//! never the shared zero page or a copy-on-write page still shared with a parent) and then
//! walks on every turn. Allocation-free after mapping, so forked partners can use it.

use crate::error::Result;

/// How a walk touches the working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Load one word per stride (lines stay clean).
    Read,
    /// Load and store one word per stride (lines are dirtied and must be written back).
    Write,
}

/// Page size policy for a mapping (madvise); what the kernel actually did is evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Pages {
    /// 4 KB pages (MADV_NOHUGEPAGE).
    #[value(name = "4k")]
    Small,
    /// Transparent huge pages (MADV_HUGEPAGE on a 2 MB-aligned mapping).
    Thp,
}

crate::units::name::named!(Access, Pages);

const HUGE: usize = 2 << 20;

/// An anonymous private mapping. Unmapped on drop.
pub struct WorkingSet {
    base: *mut u8,
    map_len: usize,
    ptr: *mut u8,
    len: usize,
}

// Only raw memory; the users coordinate access (one task per working set).
// SAFETY: the mapping is plain memory owned by this value; users give each working set to one task at a time, so moving it between threads is sound.
unsafe impl Send for WorkingSet {}
// SAFETY: shared references only read the pointer and length; writes to the memory go through one task at a time (see Send above).
unsafe impl Sync for WorkingSet {}

impl WorkingSet {
    /// Map `len` bytes without touching them. `len == 0` maps nothing.
    pub fn map(len: usize, pages: Option<Pages>) -> Result<WorkingSet> {
        if len == 0 {
            return Ok(WorkingSet {
                base: std::ptr::null_mut(),
                map_len: 0,
                ptr: std::ptr::null_mut(),
                len: 0,
            });
        }
        // Over-allocate for THP so the region can start on a 2 MB boundary.
        let map_len = if pages == Some(Pages::Thp) {
            len.div_ceil(HUGE) * HUGE + HUGE
        } else {
            len
        };
        // SAFETY: anonymous private mapping; checked for MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(super::os_error(format_args!(
                "cannot map a {len}-byte working set"
            )));
        }
        let base = base as *mut u8;
        let ptr = if pages == Some(Pages::Thp) {
            let off = (HUGE - (base as usize % HUGE)) % HUGE;
            // SAFETY: off < HUGE and map_len ≥ len + HUGE.
            unsafe { base.add(off) }
        } else {
            base
        };
        let ws = WorkingSet {
            base,
            map_len,
            ptr,
            len,
        };
        if let Some(p) = pages {
            let advice = match p {
                Pages::Small => libc::MADV_NOHUGEPAGE,
                Pages::Thp => libc::MADV_HUGEPAGE,
            };
            // SAFETY: advising our own mapping; failure only means the advice is not taken,
            // which the caller reads back as evidence.
            unsafe { libc::madvise(ws.base as *mut libc::c_void, ws.map_len, advice) };
        }
        Ok(ws)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Write every word, so every page belongs to the caller (allocation-free).
    pub fn fill(&self) {
        let words = self.len / 8;
        let p = self.ptr as *mut u64;
        for i in 0..words {
            // SAFETY: i < len / 8 within the mapping.
            unsafe { p.add(i).write_volatile(i as u64 | 1) };
        }
    }

    /// Touch one word every `stride` bytes; returns a sum so the loads are not elided.
    /// Allocation-free.
    #[inline(never)]
    pub fn walk(&self, stride: usize, access: Access) -> u64 {
        // SAFETY: our own live mapping.
        unsafe { walk_raw(self.ptr, self.len, stride, access) }
    }
}

/// The walk on raw memory (threads hold the address, not the mapping). Reading every word
/// (stride 8), lat_ctx's walk, is lmbench's `bread`, instruction for instruction
/// on x86-64; other walks are one loop with the stride in a register.
///
/// # Safety
/// `ptr..ptr + len` must be a live, 8-aligned mapping that no one else writes meanwhile.
#[inline(never)]
pub unsafe fn walk_raw(ptr: *mut u8, len: usize, stride: usize, access: Access) -> u64 {
    let mut sum = 0u64;
    if len < 8 {
        return 0;
    }
    if stride == 8 && access == Access::Read {
        // SAFETY: the caller's contract, passed on.
        return unsafe { bread(ptr, len) };
    }
    let mut off = 0;
    while off + 8 <= len {
        // SAFETY: off + 8 ≤ len inside the live mapping; u64 reads at 8-aligned offsets of a
        // page-aligned mapping (stride is a multiple of 8).
        unsafe {
            let w = ptr.add(off) as *mut u64;
            let v = w.read_volatile();
            sum = sum.wrapping_add(v);
            if access == Access::Write {
                w.write_volatile(v.wrapping_add(1));
            }
        }
        off += stride;
    }
    sum
}

/// lmbench's `bread` (lib_timing.c), the walk lat_ctx makes on every receive: every 8-byte
/// word in address order, summed 128 words at a time, then 16, then one by one.
///
/// On x86-64 these are the instructions gcc -O2 makes of it (`bench/ref/lat_ctx.c`'s): per
/// 1 KiB chunk an inner loop of `add (p),sum; add $8,p; cmp p,next; jne`, here starting a
/// 64-byte line of code (as the reference's, which asks gcc for that). Why not the generic
/// loop: its stride is a register (`add reg,reg`, not `add $8,reg`), and it walks about 25%
/// slower per word; the same instructions with the inner loop straddling a 64-byte boundary,
/// or starting at 32 mod 64, walk slower too (docs/SWEEP.md), so the position is fixed to a
/// 64-byte boundary on both sides. Rust cannot say "do
/// not unroll" (LLVM unrolls this loop written in Rust by 8), so asm fixes the instructions;
/// elsewhere the same structure in Rust.
///
/// # Safety
/// `ptr..ptr + len` must be a live mapping that no one else writes meanwhile.
#[cfg(target_arch = "x86_64")]
unsafe fn bread(ptr: *const u8, len: usize) -> u64 {
    let mut sum = 0u64;
    // SAFETY: one past the end of the caller's mapping.
    let end = unsafe { ptr.add(len) };
    // SAFETY: reads only words with p + 8 ≤ next ≤ end, inside the caller's live mapping;
    // touches no stack and writes no memory (readonly, nostack); every register it changes
    // is an operand.
    unsafe {
        std::arch::asm!(
            "2:",
            "lea 1024({p}), {next}",
            "cmp {end}, {next}",
            "ja 4f",
            ".p2align 6",
            "3:",
            "add ({p}), {sum}",
            "add $8, {p}",
            "cmp {p}, {next}",
            "jne 3b",
            "jmp 2b",
            "4:",
            "lea 128({p}), {next}",
            "cmp {end}, {next}",
            "ja 6f",
            ".p2align 6",
            "5:",
            "add ({p}), {sum}",
            "add $8, {p}",
            "cmp {p}, {next}",
            "jne 5b",
            "jmp 4b",
            "6:",
            "lea 8({p}), {next}",
            "cmp {end}, {next}",
            "ja 7f",
            "add ({p}), {sum}",
            "mov {next}, {p}",
            "jmp 6b",
            "7:",
            p = inout(reg) ptr => _,
            end = in(reg) end,
            next = out(reg) _,
            sum = inout(reg) sum,
            options(att_syntax, nostack, readonly),
        );
    }
    sum
}

/// lmbench's `bread` on other architectures: the same words in the same order and chunks,
/// the instructions left to the compiler.
///
/// # Safety
/// As the x86-64 one.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn bread(ptr: *const u8, len: usize) -> u64 {
    let mut sum = 0u64;
    let mut p = ptr as *const u64;
    // SAFETY: the words below stay inside the caller's mapping (p + chunk ≤ end).
    unsafe {
        let end = ptr.add(len) as *const u64;
        for chunk in [128usize, 16, 1] {
            while (end as usize - p as usize) / 8 >= chunk {
                let next = p.add(chunk);
                while p != next {
                    sum = sum.wrapping_add(p.read_volatile());
                    p = p.add(1);
                }
            }
        }
    }
    sum
}

impl Drop for WorkingSet {
    fn drop(&mut self) {
        if self.map_len > 0 {
            // SAFETY: unmapping exactly the mapping created in map().
            unsafe { libc::munmap(self.base as *mut libc::c_void, self.map_len) };
        }
    }
}

/// Share of a mapping backed by huge pages, from /proc/self/smaps (AnonHugePages of the
/// mapping containing `addr`). None when smaps cannot tell.
pub fn huge_page_share(addr: *const u8, len: usize) -> Option<f64> {
    let mut huge_kb = 0u64;
    for line in smaps_entry(addr as usize)? {
        if let Some(v) = line.strip_prefix("AnonHugePages:") {
            huge_kb += v.trim().trim_end_matches("kB").trim().parse::<u64>().ok()?;
        }
    }
    (len > 0).then(|| (huge_kb as f64 * 1024.0 / len as f64).min(1.0))
}

/// The VmFlags of the mapping containing `addr` (e.g. "nh" after MADV_NOHUGEPAGE, "hg" after
/// MADV_HUGEPAGE), from /proc/self/smaps; None when smaps cannot tell.
#[cfg(test)]
pub fn vm_flags(addr: *const u8) -> Option<Vec<String>> {
    smaps_entry(addr as usize)?.iter().find_map(|l| {
        l.strip_prefix("VmFlags:")
            .map(|f| f.split_whitespace().map(String::from).collect())
    })
}

/// The lines of /proc/self/smaps describing the mapping that holds `addr` (after its range
/// line); None when smaps cannot be read or no mapping holds it.
pub(crate) fn smaps_entry(addr: usize) -> Option<Vec<String>> {
    let text = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut entry: Option<Vec<String>> = None;
    for line in text.lines() {
        let range = line.split_once(' ').map_or("", |(r, _)| r);
        if let Some((lo, hi)) = range.split_once('-') {
            if let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                if entry.is_some() {
                    break;
                }
                if lo <= addr && addr < hi {
                    entry = Some(Vec::new());
                }
                continue;
            }
        }
        if let Some(e) = entry.as_mut() {
            e.push(line.to_string());
        }
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_and_walk_touch_every_stride() {
        let ws = WorkingSet::map(4096, None).unwrap();
        ws.fill();
        // Words 0, 8, 16, ... (stride 64 bytes) hold i|1 for i = 0, 8, 16, ...
        let expected: u64 = (0..4096 / 64).map(|k| (k * 8) as u64 | 1).sum();
        assert_eq!(ws.walk(64, Access::Read), expected);
        assert_eq!(ws.walk(64, Access::Write), expected);
        // The write walk incremented each touched word.
        assert_eq!(ws.walk(64, Access::Read), expected + 64);
        let empty = WorkingSet::map(0, None).unwrap();
        assert_eq!(empty.walk(64, Access::Read), 0);
    }

    #[test]
    fn the_every_word_read_walk_sums_each_word_once_at_every_length() {
        // Lengths around bread's chunk edges (1 KiB, 128 B, one word), with a trailing part
        // word. Each word holds a distinct value, so a skipped or repeated word (a chunk
        // test off by one, a chunk walked twice) changes the sum.
        let ws = WorkingSet::map(64 << 10, None).unwrap();
        let words = ws.len() / 8;
        let p = ws.as_ptr() as *mut u64;
        for i in 0..words {
            // SAFETY: i < words inside the mapping.
            unsafe {
                p.add(i)
                    .write((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
            };
        }
        let lens = [
            8, 16, 120, 127, 128, 136, 1016, 1024, 1030, 1032, 1152, 1160, 2048, 4096,
        ];
        for len in lens.into_iter().chain([17 << 10, (64 << 10) - 8, 64 << 10]) {
            let expected = (0..len / 8)
                // SAFETY: k < len / 8 ≤ words.
                .map(|k| unsafe { p.add(k).read() })
                .fold(0u64, u64::wrapping_add);
            // SAFETY: len ≤ the mapping's length.
            let got = unsafe { walk_raw(ws.as_ptr(), len, 8, Access::Read) };
            assert_eq!(got, expected, "len {len}");
        }
        // SAFETY: as above.
        assert_eq!(unsafe { walk_raw(ws.as_ptr(), 7, 8, Access::Read) }, 0);
    }

    #[test]
    fn page_advice_shows_in_the_mappings_flags() {
        let has = |ws: &WorkingSet, f: &str| vm_flags(ws.as_ptr()).unwrap().iter().any(|x| x == f);
        let small = WorkingSet::map(1 << 20, Some(Pages::Small)).unwrap();
        assert!(has(&small, "nh") && !has(&small, "hg"));
        let thp = WorkingSet::map(1 << 20, Some(Pages::Thp)).unwrap();
        assert!(has(&thp, "hg") && !has(&thp, "nh"));
        let plain = WorkingSet::map(1 << 20, None).unwrap();
        assert!(!has(&plain, "hg") && !has(&plain, "nh"));
        assert!(
            vm_flags(std::ptr::null()).is_none(),
            "no mapping holds address 0"
        );
    }

    #[test]
    fn thp_mapping_is_aligned() {
        let ws = WorkingSet::map(4 << 20, Some(Pages::Thp)).unwrap();
        assert_eq!(ws.as_ptr() as usize % HUGE, 0);
        ws.fill();
        let share = huge_page_share(ws.as_ptr(), ws.len());
        assert!(share.is_some_and(|s| (0.0..=1.0).contains(&s)));
    }
}
