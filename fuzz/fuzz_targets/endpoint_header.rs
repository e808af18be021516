//! Fuzz target: endpoint_header, a `--header 'NAME: VALUE'`. Never
//! panics; what it accepts parses back from `NAME: VALUE` to itself (name
//! lowercase and not `-bin`, value trimmed); a refused value is named by
//! its header only, never shown (it may be a secret).
#![no_main]

use headroom::remote::endpoint::{EndpointError, parse_header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    match parse_header(s) {
        Ok((name, value)) => {
            assert!(!name.is_empty() && !name.ends_with("-bin"), "{s:?}");
            assert_eq!(name, name.to_ascii_lowercase(), "{s:?}");
            assert_eq!(value, value.trim(), "{s:?}");
            let again = parse_header(&format!("{name}: {value}"));
            assert_eq!(again, Ok((name, value)), "{s:?}");
        }
        Err(EndpointError::HeaderValue { name }) => {
            let shown = EndpointError::HeaderValue { name: name.clone() }.to_string();
            assert_eq!(
                shown,
                format!("the value of header '{name}' has characters a header cannot carry")
            );
            assert_eq!(Some(name.as_str()), s.split_once(':').map(|(n, _)| n.trim()).map(str::to_ascii_lowercase).as_deref());
        }
        Err(_) => {}
    }
});
