//! Fuzz target: logtail. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for start in [true, false] {
        let f = headroom::build::logtail::scan(data, start);
        let mut c = headroom::build::text::Context::new();
        if let Some(raw) = f.context {
            headroom::build::logtail::context_into(raw, &mut c);
        }
        assert!(!c.contains(',') && !c.contains('"'));
    }
});
