//! Fuzz target: buck2_log, a decompressed Buck2 event log (the records after zstd). Never panics, whatever the bytes.
#![no_main]

use headroom::remote::action::Collector;
use headroom::remote::buck2_log;
use libfuzzer_sys::fuzz_target;

#[path = "common/found.rs"]
mod found;
use found::check;

fuzz_target!(|data: &[u8]| {
    let mut out = Collector::new();
    let _ = buck2_log::read_plain(data, "fuzz", &mut out);
    check(out.finish());
});
