//! Fuzz target: zram. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = headroom::kernel::zram::parse_mm_stat(data);
    let _ = headroom::kernel::zram::parse_disksize(data);
    let _ = headroom::kernel::zram::parse_comp_algorithm(data);
});
