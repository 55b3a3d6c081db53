//! Any bytes as a run file: loading refuses or accepts, rendering finishes; never a panic or
//! a hang (libFuzzer's -timeout catches the hangs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = oscost::report::untrusted::load_and_render(data);
});
