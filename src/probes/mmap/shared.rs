//! 64-bit slots in memory shared with a forked child: the go/done handshake and the figures
//! the child measures about itself (wall time, getrusage). Unmapped on drop.

use crate::engine::partner::SharedPage;
use crate::error::Result;
use std::sync::atomic::{AtomicU64, Ordering};

/// A view of the engine's shared page as 64-bit words.
pub struct Slots {
    page: SharedPage,
}

impl Slots {
    pub fn new() -> Result<Slots> {
        Ok(Slots {
            page: SharedPage::new()?,
        })
    }

    pub fn get(&self, i: usize) -> u64 {
        self.slot(i).load(Ordering::Acquire)
    }
    pub fn set(&self, i: usize, v: u64) {
        self.slot(i).store(v, Ordering::Release)
    }
    fn slot(&self, i: usize) -> &AtomicU64 {
        self.page.slot64(i)
    }
}
