//! Fuzz target: loadavg and the other one-line files read beside it
//! (`proc/uptime`, a board's `pagesize`). Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = headroom::kernel::loadavg::parse(data);
    let _ = headroom::kernel::loadavg::parse_centi(data);
    let _ = headroom::kernel::uptime::parse_centi_s(data);
    let _ = headroom::kernel::root::parse_page_kib(data);
});
