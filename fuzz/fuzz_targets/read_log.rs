//! Fuzz target: read_log, any log: format detection, zstd, then the readers. Never panics, whatever the bytes.
#![no_main]

use headroom::remote::action::Collector;
use headroom::remote::logs;
use libfuzzer_sys::fuzz_target;

#[path = "common/found.rs"]
mod found;
use found::check;

fuzz_target!(|data: &[u8]| {
    let mut out = Collector::new();
    let _ = logs::read_log(data, "fuzz", &mut out);
    check(out.finish());
});
