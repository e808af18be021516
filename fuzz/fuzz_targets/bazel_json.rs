//! Fuzz target: bazel_json, a Bazel `--execution_log_json_file` stream. Never panics, whatever the bytes.
#![no_main]

use headroom::remote::action::Collector;
use headroom::remote::bazel;
use libfuzzer_sys::fuzz_target;

#[path = "common/found.rs"]
mod found;
use found::check;

fuzz_target!(|data: &[u8]| {
    let mut out = Collector::new();
    let _ = bazel::read_json_stream(data, 0, "fuzz", &mut out);
    check(out.finish());
});
