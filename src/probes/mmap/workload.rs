//! The mmap lab's workload: walk a buffer in 512-byte blocks (in order, or blocks drawn by a
//! seeded xorshift), 16 passes over each block, each pass storing to the first byte of every
//! 64-byte cache line and loading the rest of the line. It allocates nothing, so it runs in a
//! forked child.

use crate::probes::pattern::XorShift;

pub const BLOCK: usize = 512;
pub const LINE: usize = 64;
pub const PASSES: usize = 16;

/// Walk `len` bytes at `buf`; returns a checksum of the loaded bytes (kept so the loads are
/// not optimized away). `random` draws each of the len/512 visits from the xorshift
/// (`seed`), with replacement, as the classic lab does.
///
/// # Safety
/// `buf` must point to `len` readable and writable bytes.
pub unsafe fn walk(buf: *mut u8, len: usize, random: bool, seed: u64) -> u64 {
    let blocks = len / BLOCK;
    let mut rng = XorShift::new(seed);
    let mut sum = 0u64;
    for i in 0..blocks {
        let b = if random {
            rng.below(blocks as u64) as usize
        } else {
            i
        };
        sum = sum.wrapping_add(block(buf.add(b * BLOCK)));
    }
    sum
}

/// 16 passes over one block.
#[inline(always)]
// SAFETY (caller): `p` points to at least BLOCK writable bytes of a live mapping.
unsafe fn block(p: *mut u8) -> u64 {
    let mut sum = 0u64;
    for _ in 0..PASSES {
        for line in 0..BLOCK / LINE {
            let l = p.add(line * LINE);
            l.write_volatile(l.read_volatile().wrapping_add(1));
            let rest = std::slice::from_raw_parts(l.add(1), LINE - 1);
            sum = sum.wrapping_add(rest.iter().map(|&x| x as u64).sum::<u64>());
        }
        std::hint::black_box(&mut sum);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_walk_stores_16_times_to_each_line_start_and_loads_the_rest() {
        let len = 8 * BLOCK;
        let mut buf = vec![0u8; len];
        // Mark one loaded byte so the checksum must count it 16 times per visit.
        buf[3 * BLOCK + 5] = 2;
        // SAFETY: the pointer and length come from a live buffer of exactly that many bytes.
        let sum = unsafe { walk(buf.as_mut_ptr(), len, false, 1) };
        for (i, b) in buf.iter().enumerate() {
            let expect = if i % LINE == 0 {
                PASSES as u8
            } else if i == 3 * BLOCK + 5 {
                2
            } else {
                0
            };
            assert_eq!(*b, expect, "byte {i}");
        }
        assert_eq!(sum, 2 * PASSES as u64);
    }

    #[test]
    fn random_walk_visits_the_blocks_the_xorshift_draws() {
        let blocks = 16;
        let len = blocks * BLOCK;
        let mut buf = vec![0u8; len];
        // SAFETY: the pointer and length come from a live buffer of exactly that many bytes.
        unsafe { walk(buf.as_mut_ptr(), len, true, 7) };
        let mut visits = vec![0usize; blocks];
        let mut rng = XorShift::new(7);
        for _ in 0..blocks {
            visits[rng.below(blocks as u64) as usize] += 1;
        }
        assert!(
            visits.contains(&0),
            "with replacement: some block unvisited"
        );
        for (b, &v) in visits.iter().enumerate() {
            for line in 0..BLOCK / LINE {
                assert_eq!(
                    buf[b * BLOCK + line * LINE] as usize,
                    (v * PASSES) % 256,
                    "block {b}"
                );
            }
        }
        // A partial trailing block is never touched.
        let mut odd = vec![0u8; BLOCK + 100];
        // SAFETY: the pointer and length come from a live buffer of exactly that many bytes.
        unsafe { walk(odd.as_mut_ptr(), odd.len(), false, 1) };
        assert!(odd[BLOCK..].iter().all(|&x| x == 0));
    }
}
