//! Fuzz target: psi. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = headroom::kernel::psi::parse(data);
});
