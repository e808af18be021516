//! Fuzz target: swaps. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut name = [0u8; 4096];
    for s in headroom::kernel::swaps::entries(data).flatten() {
        let _ = s.unescape(&mut name).len();
        let _ = s.is_zram();
    }
    let _ = headroom::kernel::swaps::totals(data);
});
