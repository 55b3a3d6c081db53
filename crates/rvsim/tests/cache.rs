//! Cache behaviour on hand-computed access sequences.

use rvsim::{Cache, CacheConfig, Replacement, WritePolicy};

const BASE: u32 = 0x8000_0000;

fn cache(spec: &str) -> Cache {
    Cache::new(CacheConfig::parse(spec).unwrap(), BASE, 1 << 20).unwrap()
}

/// Reads each line number (of 4-byte lines) and returns the hit/miss pattern as "HM..".
fn reads(c: &mut Cache, lines: &[u32]) -> String {
    lines
        .iter()
        .map(|&l| {
            if c.access(BASE + 4 * l, false) {
                'M'
            } else {
                'H'
            }
        })
        .collect()
}

#[test]
fn lru_and_fifo_differ_on_a_reuse_sequence() {
    // One set, two ways: A B A C A.
    let mut lru = cache("sets=1,ways=2,words=1,repl=lru");
    assert_eq!(reads(&mut lru, &[0, 1, 0, 2, 0]), "MMHMH");
    // FIFO evicts A (filled first) for C although A was just used.
    let mut fifo = cache("sets=1,ways=2,words=1,repl=fifo");
    assert_eq!(reads(&mut fifo, &[0, 1, 0, 2, 0]), "MMHMM");
    let s = fifo.stats();
    assert_eq!((s.accesses, s.hits, s.misses), (5, 1, 4));
    // The last miss: a fully-associative LRU cache of 2 lines holds A, so it is a conflict
    // (the policy's fault), the first three misses are compulsory.
    assert_eq!((s.compulsory, s.capacity, s.conflict), (3, 0, 1));
}

#[test]
fn random_replacement_is_reproducible_from_its_seed() {
    let seq: Vec<u32> = (0..200).map(|i| (i * 7 + i / 3) % 5).collect();
    let run = |seed| {
        let mut c = cache(&format!("sets=1,ways=4,words=1,repl=random,seed={seed}"));
        (reads(&mut c, &seq), c.stats())
    };
    let (a, sa) = run(7);
    let (b, _) = run(7);
    assert_eq!(a, b);
    assert_eq!(sa.hits + sa.misses, 200);
    assert_eq!(sa.misses, sa.compulsory + sa.capacity + sa.conflict);
    // 5 lines cycling through 4 ways: LRU misses every time after warm-up, random does not.
    let mut lru = cache("sets=1,ways=4,words=1,repl=lru");
    let lru_pattern = reads(&mut lru, &[0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
    assert_eq!(lru_pattern, "MMMMMMMMMM");
    assert!(sa.hits > 0);
}

#[test]
fn three_c_classification_on_a_direct_mapped_cache() {
    // 4 sets x 1 way: lines 0 and 4 map to set 0.
    let mut c = cache("sets=4,ways=1,words=1");
    assert_eq!(reads(&mut c, &[0, 4, 0, 4]), "MMMM");
    let s = c.stats();
    // Two compulsory, then two conflicts: a 4-line fully-associative cache would hold both.
    assert_eq!((s.compulsory, s.capacity, s.conflict), (2, 0, 2));

    // 2 sets x 1 way, cycling through 3 lines: 0 1 2 0 -> the last miss is capacity (a
    // 2-line fully-associative LRU cache has evicted line 0 too).
    let mut c = cache("sets=2,ways=1,words=1");
    assert_eq!(reads(&mut c, &[0, 1, 2, 0]), "MMMM");
    let s = c.stats();
    assert_eq!((s.compulsory, s.capacity, s.conflict), (3, 1, 0));
}

#[test]
fn a_fetch_straddling_two_lines_costs_two_accesses() {
    let mut c = cache("sets=8,ways=1,words=2");
    assert_eq!(c.fetch(BASE + 4, 4), 1); // inside line 0
    assert_eq!(c.fetch(BASE + 6, 4), 1); // line 0 (hit) + line 1 (miss)
    assert_eq!(c.stats().accesses, 3);
    assert_eq!(c.fetch(BASE + 6, 2), 0); // a 16-bit instruction never straddles
    assert_eq!(c.fetch(BASE + 14, 4), 1); // line 1 hit + line 2 miss
    let s = c.stats();
    assert_eq!((s.accesses, s.hits, s.misses), (6, 3, 3));
}

#[test]
fn write_back_write_through_and_no_allocate() {
    // Write-back: a dirty line is written back when evicted.
    let mut wb = cache("sets=1,ways=1,words=1,write=back");
    assert!(wb.access(BASE, true));
    assert!(wb.access(BASE + 4, false));
    assert!(wb.access(BASE, false));
    assert_eq!((wb.stats().writebacks, wb.stats().memory_writes), (1, 0));

    // Write-through: every store goes to memory, nothing is written back.
    let mut wt = cache("sets=1,ways=1,words=1,write=through");
    wt.access(BASE, true);
    wt.access(BASE, true);
    wt.access(BASE + 4, false);
    assert_eq!((wt.stats().writebacks, wt.stats().memory_writes), (0, 2));
    assert_eq!((wt.stats().hits, wt.stats().misses), (1, 2));

    // No-allocate: a store miss leaves the cache alone, so the next load misses.
    let mut na = cache("sets=1,ways=1,words=1,alloc=no");
    assert!(na.access(BASE, true));
    assert!(na.access(BASE, false));
    assert!(!na.access(BASE, false));
    assert_eq!(na.stats().memory_writes, 1);
}

#[test]
fn bad_cache_parameters_name_the_parameter() {
    for (spec, needle) in [
        ("sets=3", "sets=3"),
        ("words=0", "words=0"),
        ("ways=0", "ways=0"),
        ("words=6", "words=6"),
        ("repl=plru", "repl=plru"),
        ("sets=x", "sets=x"),
        ("color=red", "color"),
        ("sets", "sets"),
        ("sets=1048576,ways=1024,words=4", "larger than"),
        ("sets=8,sets=16", "sets given twice"),
        ("repl=lru,ways=2,repl=fifo", "repl given twice"),
    ] {
        let err = CacheConfig::parse(spec).unwrap_err().to_string();
        assert!(err.contains(needle), "{spec}: {err}");
    }
    let ok = CacheConfig::parse("sets=16,ways=2,words=4,repl=fifo,write=through,alloc=no").unwrap();
    assert_eq!(ok.size_bytes(), 16 * 2 * 16);
    assert_eq!(ok.replacement, Replacement::Fifo);
    assert_eq!(ok.write_policy, WritePolicy::WriteThrough);
    assert!(!ok.write_allocate);
}
