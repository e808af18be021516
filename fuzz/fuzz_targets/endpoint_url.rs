//! Fuzz target: endpoint_url, a `--remote` / `.buckconfig` address with
//! each `tls` override (none, Buck2's `tls = true`, `tls = false`). Never
//! panics; what it accepts is a URL of the same server, which parses back
//! to the same endpoint.
#![no_main]

use headroom::remote::endpoint::parse_url;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    for tls in [None, Some(true), Some(false)] {
        let Ok(e) = parse_url(s, tls) else {
            continue;
        };
        if let Some(t) = tls {
            assert_eq!(e.tls, t, "{s:?}");
        }
        let scheme = if e.tls { "https" } else { "http" };
        assert_eq!(e.url, format!("{scheme}://{}", e.authority), "{s:?}");
        assert!(!e.host.is_empty() && e.instance.is_empty() && e.headers.is_empty());
        let again = parse_url(&e.url, None).expect("its own URL parses");
        assert_eq!(again, e, "{s:?}");
    }
});
