//! Fuzz target: loadavg. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = headroom::kernel::loadavg::parse(data);
    let _ = headroom::kernel::loadavg::parse_centi(data);
});
