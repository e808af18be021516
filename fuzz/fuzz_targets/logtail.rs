//! Fuzz target: logtail. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for start in [true, false] {
        let f = headroom::followed::logtail::scan(data, start);
        let mut c = headroom::followed::text::Context::new();
        f.context_into(&mut c);
        assert!(!c.contains(',') && !c.contains('"'));
        assert!(c.chars().count() <= headroom::followed::text::CONTEXT_CHARS);
        // The command fallback never hides a marker line.
        assert!(f.context.is_none() || f.command.is_none());
    }
});
