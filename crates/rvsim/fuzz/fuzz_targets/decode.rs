//! Any 32-bit word decodes (as RV32IMC and as RV32IM) without panicking, to a 2- or 4-byte
//! instruction, and a compressed form decodes like its own low halfword.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rvsim::decode::decode;

fuzz_target!(|data: [u8; 4]| {
    let w = u32::from_le_bytes(data);
    for c in [true, false] {
        let d = decode(w, c);
        assert!(d.len == 2 || d.len == 4);
        if d.len == 2 {
            assert_eq!(decode(w & 0xffff, c), d);
        }
    }
});
