//! Fuzz target: digest, `HASH/SIZE` / `HASH:SIZE` text. Never panics;
//! what it accepts prints back to the same digest.
#![no_main]

use headroom::remote::digest::parse_digest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(d) = parse_digest(s) {
        assert_eq!(
            parse_digest(&format!("{}/{}", d.hash, d.size_bytes)),
            Ok(d.clone())
        );
        assert_eq!(d.hash, d.hash.to_ascii_lowercase());
    }
});
