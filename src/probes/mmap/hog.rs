//! The competing memory-hungry process: a forked child that maps and touches `bytes` of
//! anonymous memory, says it is ready, then keeps re-touching every page so its memory stays
//! active and the kernel must reclaim elsewhere (the lab's page cache). Its size is checked
//! against available memory by the caller; it is killed and reaped on drop (also on Ctrl-C),
//! and an early death (e.g. the OOM killer) is visible through `alive()`.

use super::shared::Slots;
use crate::engine::partner::Child;
use crate::error::{Error, Result};
use crate::units::size::{fmt_bytes, ByteStyle};

const READY: usize = 0;
const FAILED: usize = 1;

pub struct Hog {
    child: Child,
    _slots: Slots,
    pub bytes: u64,
}

impl Hog {
    /// Start the hog (pinned to `cpu` where given) and wait (interruptibly) until all its
    /// memory is touched.
    pub fn start(bytes: u64, cpu: Option<usize>) -> Result<Hog> {
        let slots = Slots::new()?;
        let page = 4096usize;
        let len = bytes as usize;
        let s: &Slots = &slots;
        let mut child = Child::spawn(cpu, || {
            // SAFETY: raw mmap and byte writes only: nothing allocates after fork.
            unsafe {
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                );
                if p == libc::MAP_FAILED {
                    s.set(FAILED, 1);
                    return 1;
                }
                let p = p as *mut u8;
                let mut round = 1u8;
                loop {
                    let mut off = 0;
                    while off < len {
                        p.add(off).write_volatile(round);
                        off += page;
                    }
                    s.set(READY, 1);
                    round = round.wrapping_add(1);
                }
            }
        })?;
        loop {
            if slots.get(READY) == 1 {
                break;
            }
            if slots.get(FAILED) == 1 || child.has_exited() {
                return Err(Error::env(format!(
                    "the competing process could not map and touch {} (killed? out of memory?)",
                    fmt_bytes(bytes as f64, ByteStyle::GibMib)
                )));
            }
            crate::engine::interrupt::check()?;
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(Hog {
            child,
            _slots: slots,
            bytes,
        })
    }

    /// Still running (not OOM-killed)?
    pub fn alive(&mut self) -> bool {
        !self.child.has_exited()
    }
}
