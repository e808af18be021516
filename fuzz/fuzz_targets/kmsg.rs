//! Fuzz target: a /dev/kmsg record and the OOM victim it names. Never
//! panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(r) = headroom::kernel::kmsg::parse_record(data) {
        let _ = headroom::kernel::kmsg::oom_victim(&r);
    }
});
