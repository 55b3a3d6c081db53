//! 64-bit slots in memory shared with a forked child: the go/done handshake and the figures
//! the child measures about itself (wall time, getrusage). Unmapped on drop.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Slots {
    ptr: *mut AtomicU64,
}

// Only accessed through atomics.
unsafe impl Send for Slots {}
unsafe impl Sync for Slots {}

impl Slots {
    pub const N: usize = 512;

    pub fn new() -> Result<Slots> {
        // SAFETY: a fresh shared anonymous page; checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::env(format!(
                "cannot map shared memory: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(Slots {
            ptr: p as *mut AtomicU64,
        })
    }

    pub fn get(&self, i: usize) -> u64 {
        self.slot(i).load(Ordering::Acquire)
    }
    pub fn set(&self, i: usize, v: u64) {
        self.slot(i).store(v, Ordering::Release)
    }
    fn slot(&self, i: usize) -> &AtomicU64 {
        assert!(i < Self::N);
        // SAFETY: in bounds of the live page; AtomicU64 has u64's layout.
        unsafe { &*self.ptr.add(i) }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        // SAFETY: unmapping the page mapped in new().
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, 4096) };
    }
}
