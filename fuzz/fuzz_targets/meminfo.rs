//! Fuzz target: meminfo. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = headroom::kernel::meminfo::parse(data).map(|m| {
        (
            m.mem_used_kib(),
            m.swap_used_kib(),
            m.mem_used_pct(),
            m.hugepages_in_use_kib(),
        )
    });
});
