//! Fuzz target: pid. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = headroom::kernel::pid::parse_stat(data).map(|p| (p.is_zombie(), p.is_kernel_thread()));
    let _ = headroom::kernel::pid::parse_status(data).is_zombie();
    let _ = headroom::kernel::pid::status_name(data);
    let _ = headroom::kernel::pid::parse_comm(data);
    let _ = headroom::kernel::oom_score_adj::parse(data);
});
