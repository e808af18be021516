//! Fuzz target: buck2_json, `buck2 log show` lines. Never panics, whatever the bytes.
#![no_main]

use headroom::remote::action::Collector;
use headroom::remote::buck2_json;
use libfuzzer_sys::fuzz_target;

#[path = "common/found.rs"]
mod found;
use found::check;

fuzz_target!(|data: &[u8]| {
    let mut out = Collector::new();
    let _ = buck2_json::read_lines(data, 0, "fuzz", &mut out);
    check(out.finish());
});
