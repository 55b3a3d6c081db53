//! Mappings the fault probes touch: created with the flags and advice a case asks for,
//! unmapped on drop (also on error and Ctrl-C), and inspected the way the kernel sees them
//! (mincore residency, the /proc/self/maps line and smaps counters).

use crate::error::Result;
use crate::probes::os_error;

/// The huge page size THP uses on x86-64 and arm64 with 4 KiB base pages.
pub const HUGE: usize = 2 << 20;

/// One mmap'ed region; munmap on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    /// Private anonymous memory of `len` bytes. `huge_aligned` starts it on a 2 MiB boundary
    /// (over-map and trim), so THP can use huge pages from the first byte.
    pub fn anon(len: usize, huge_aligned: bool, extra_flags: i32) -> Result<Mapping> {
        let map_len = if huge_aligned { len + HUGE } else { len };
        // SAFETY: a fresh anonymous mapping; checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | extra_flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_error("mmap (anonymous)"));
        }
        if !huge_aligned {
            return Ok(Mapping {
                ptr: p as *mut u8,
                len,
            });
        }
        let start = p as usize;
        let aligned = (start + HUGE - 1) & !(HUGE - 1);
        // SAFETY: trimming the unused head and tail of the mapping we just created.
        unsafe {
            if aligned > start {
                libc::munmap(p, aligned - start);
            }
            let tail = start + map_len - (aligned + len);
            if tail > 0 {
                libc::munmap((aligned + len) as *mut libc::c_void, tail);
            }
        }
        Ok(Mapping {
            ptr: aligned as *mut u8,
            len,
        })
    }

    /// A shared mapping of `len` bytes of the file `fd`, read-only or read-write.
    pub fn file(fd: i32, len: usize, writable: bool, extra_flags: i32) -> Result<Mapping> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: mapping an open fd; checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED | extra_flags,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_error("mmap (file)"));
        }
        Ok(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// madvise over the whole mapping.
    pub fn advise(&self, advice: i32, name: &str) -> Result<()> {
        // SAFETY: advising our own live mapping.
        if unsafe { libc::madvise(self.ptr as *mut libc::c_void, self.len, advice) } != 0 {
            return Err(os_error(format_args!("madvise({name})")));
        }
        Ok(())
    }

    /// Pages of this mapping that are resident (for a file mapping: in the page cache, whether
    /// or not this process has mapped them yet).
    pub fn resident_pages(&self, page: usize) -> Result<usize> {
        let n = self.len.div_ceil(page);
        let mut vec = vec![0u8; n];
        // SAFETY: vec has one byte per page of the mapping.
        if unsafe { libc::mincore(self.ptr as *mut libc::c_void, self.len, vec.as_mut_ptr()) } != 0
        {
            return Err(os_error("mincore"));
        }
        Ok(vec.iter().filter(|b| *b & 1 != 0).count())
    }

    /// The /proc/self/maps line of this mapping and the smaps counters that tell how the
    /// kernel backs it (Rss, AnonHugePages, FilePmdMapped, THPeligible ...).
    pub fn describe(&self) -> Vec<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        smaps_of(&smaps, self.ptr as usize, self.ptr as usize + self.len)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region this guard owns.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// From smaps text: the header line of every region overlapping [start, end), followed by its
/// size and residency counters.
pub fn smaps_of(smaps: &str, start: usize, end: usize) -> Vec<String> {
    const KEYS: [&str; 7] = [
        "Size:",
        "Rss:",
        "Anonymous:",
        "AnonHugePages:",
        "FilePmdMapped:",
        "Swap:",
        "THPeligible:",
    ];
    let mut out = Vec::new();
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((lo, hi)) = region_of(line) {
            inside = lo < end && hi > start;
            if inside {
                out.push(line.to_string());
            }
        } else if inside && KEYS.iter().any(|k| line.starts_with(k)) {
            out.push(format!(
                "    {}",
                line.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
        }
    }
    out
}

/// "7f00-7f10 rw-p ..." → (0x7f00, 0x7f10) for a maps header line; None for counter lines.
fn region_of(line: &str) -> Option<(usize, usize)> {
    let range = line.split_whitespace().next()?;
    let (a, b) = range.split_once('-')?;
    Some((
        usize::from_str_radix(a, 16).ok()?,
        usize::from_str_radix(b, 16).ok()?,
    ))
}

/// This thread's resource usage (getrusage RUSAGE_THREAD: CPU times in µs, faults, blocks,
/// switches; maxrss is the process's).
pub fn thread_rusage() -> crate::model::Rusage {
    // SAFETY: zeroed rusage is a valid out-buffer.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer; RUSAGE_THREAD needs no other precondition.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    usage_of(&ru)
}

/// A usage as getrusage or wait4 gives it (what `/usr/bin/time -v` reads).
pub fn usage_of(ru: &libc::rusage) -> crate::model::Rusage {
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    crate::model::Rusage {
        utime_us: us(ru.ru_utime),
        stime_us: us(ru.ru_stime),
        maxrss_kb: ru.ru_maxrss as u64,
        minflt: ru.ru_minflt as u64,
        majflt: ru.ru_majflt as u64,
        inblock: ru.ru_inblock as u64,
        oublock: ru.ru_oublock as u64,
        nvcsw: ru.ru_nvcsw as u64,
        nivcsw: ru.ru_nivcsw as u64,
    }
}

/// Add the usage between two readings (`after` − `before`) to `sum`; maxrss keeps the
/// largest reading.
pub fn add_delta(
    sum: &mut crate::model::Rusage,
    before: &crate::model::Rusage,
    after: &crate::model::Rusage,
) {
    let d = |a: u64, b: u64| a.saturating_sub(b);
    sum.utime_us += d(after.utime_us, before.utime_us);
    sum.stime_us += d(after.stime_us, before.stime_us);
    sum.minflt += d(after.minflt, before.minflt);
    sum.majflt += d(after.majflt, before.majflt);
    sum.inblock += d(after.inblock, before.inblock);
    sum.oublock += d(after.oublock, before.oublock);
    sum.nvcsw += d(after.nvcsw, before.nvcsw);
    sum.nivcsw += d(after.nivcsw, before.nivcsw);
    sum.maxrss_kb = sum.maxrss_kb.max(after.maxrss_kb);
}

/// "Reset the peak RSS" (clear_refs 5, Linux ≥ 4.0), so VmHWM describes one round. Returns
/// false where the kernel does not support it (max RSS is then the process peak).
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", b"5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_deltas_add_up_and_never_go_negative() {
        let r = |minflt, utime_us| crate::model::Rusage {
            minflt,
            utime_us,
            maxrss_kb: minflt,
            ..Default::default()
        };
        let mut sum = crate::model::Rusage::default();
        add_delta(&mut sum, &r(10, 100), &r(15, 180));
        add_delta(&mut sum, &r(20, 200), &r(22, 200));
        assert_eq!((sum.minflt, sum.utime_us, sum.maxrss_kb), (7, 80, 22));
        // A counter that went backwards adds nothing.
        add_delta(&mut sum, &r(30, 300), &r(5, 10));
        assert_eq!((sum.minflt, sum.utime_us), (7, 80));
        // Touching fresh memory is counted as this thread's faults.
        let before = thread_rusage();
        let v = vec![1u8; 8 << 20];
        std::hint::black_box(&v);
        assert!(thread_rusage().minflt > before.minflt);
    }

    #[test]
    fn smaps_filter_picks_the_overlapping_region() {
        let text = "00400000-00500000 r-xp 00000000 08:01 1 /bin/x\nSize: 1024 kB\nRss: 100 kB\n\
                    7f0000000000-7f0000400000 rw-p 00000000 00:00 0\nSize:    4096 kB\nRss:    4096 kB\n\
                    AnonHugePages:   4096 kB\nPss: 1 kB\nTHPeligible:    1\n";
        let v = smaps_of(text, 0x7f00_0000_0000, 0x7f00_0040_0000);
        assert_eq!(v[0], "7f0000000000-7f0000400000 rw-p 00000000 00:00 0");
        assert!(v.contains(&"    AnonHugePages: 4096 kB".to_string()));
        assert!(!v.iter().any(|l| l.contains("Pss") || l.contains("/bin/x")));
    }

    #[test]
    fn aligned_anon_mapping_and_residency() {
        let page = 4096;
        let m = Mapping::anon(8 * page, true, 0).unwrap();
        assert_eq!(m.ptr() as usize % HUGE, 0);
        assert_eq!(m.resident_pages(page).unwrap(), 0);
        // SAFETY: writing inside the mapping.
        unsafe { m.ptr().add(3 * page).write_volatile(1) };
        assert_eq!(m.resident_pages(page).unwrap(), 1);
        assert!(m.describe()[0].contains("rw-p"));
    }
}
