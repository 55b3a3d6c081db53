//! Access orders shared by the fault and mmap probes: a seeded xorshift generator (so a
//! "random" run is the same every time and can be tested) and a page permutation built from
//! it. Nothing here allocates after construction, so the generator can run in a forked child.

/// Marsaglia's xorshift64 (13, 7, 17): tiny, fast, seeded, never zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator; seed 0 (which would stay 0 forever) is replaced by a fixed constant.
    pub fn new(seed: u64) -> Self {
        XorShift(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A value in `0..n` (n > 0). The modulo bias is below 2^-40 for the sizes used here.
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// The order pages are touched in: `0..n` in order, or a seeded Fisher–Yates shuffle (every
/// page exactly once, so fault counts stay comparable with the sequential order).
pub fn page_order(n: usize, random: bool, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    if random {
        let mut rng = XorShift::new(seed);
        for i in (1..n).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_known_sequence_and_seed_zero() {
        let mut r = XorShift::new(1);
        // From 1: x ^= x << 13 gives 8193; x ^= x >> 7 gives 8257; x ^= x << 17.
        assert_eq!(r.next_u64(), 8257 ^ (8257 << 17));
        let mut z = XorShift::new(0);
        assert_ne!(z.next_u64(), 0);
        let mut s1 = XorShift::new(42);
        let mut s2 = XorShift::new(42);
        for _ in 0..100 {
            assert_eq!(s1.next_u64(), s2.next_u64());
        }
        for _ in 0..1000 {
            assert!(s1.below(7) < 7);
        }
    }

    #[test]
    fn random_order_is_a_permutation_and_differs_from_in_order() {
        let seq = page_order(1000, false, 1);
        assert_eq!(seq, (0..1000).collect::<Vec<u32>>());
        let rnd = page_order(1000, true, 1);
        assert_ne!(rnd, seq);
        let mut sorted = rnd.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, seq, "every page exactly once");
        assert_eq!(rnd, page_order(1000, true, 1), "seeded: reproducible");
        assert_ne!(rnd, page_order(1000, true, 2));
    }
}
