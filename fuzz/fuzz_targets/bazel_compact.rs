//! Fuzz target: bazel_compact, a decompressed Bazel compact execution log. Never panics, whatever the bytes.
#![no_main]

use headroom::remote::logs::Collector;
#[allow(unused_imports)]
use headroom::remote::{bazel, buck2_json, buck2_log, logs};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut out = Collector::new();
    let _ = bazel::read_compact_plain(data, "fuzz", &mut out);
    check(out.finish());
});

/// What a reader found is consistent: digests once each, valid hashes.
fn check(found: headroom::remote::action::Found) {
    let mut seen = std::collections::HashSet::new();
    for n in &found.actions {
        assert!(seen.insert(n.digest.clone()));
        assert!(
            n.digest
                .hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
        assert!(n.digest.size_bytes >= 0);
    }
    assert!(found.truncated.len() <= 1);
}
