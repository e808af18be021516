//! Fuzz target: vmstat. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = headroom::kernel::vmstat::parse(data);
});
