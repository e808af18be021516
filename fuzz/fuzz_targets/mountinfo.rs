//! Fuzz target: mountinfo. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut out = [0u8; 4096];
    for m in headroom::kernel::mountinfo::entries(data).flatten() {
        let _ = headroom::kernel::mountinfo::unescape(m.mount_point, &mut out);
    }
    let _ = headroom::kernel::mountinfo::fs_type_of(data, b"/tmp");
});
