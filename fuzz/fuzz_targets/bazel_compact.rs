//! Fuzz target: bazel_compact, a decompressed Bazel compact execution log. Never panics, whatever the bytes.
#![no_main]

use headroom::remote::action::Collector;
use headroom::remote::bazel;
use libfuzzer_sys::fuzz_target;

#[path = "common/found.rs"]
mod found;
use found::check;

fuzz_target!(|data: &[u8]| {
    let mut out = Collector::new();
    let _ = bazel::read_compact_plain(data, "fuzz", &mut out);
    check(out.finish());
});
