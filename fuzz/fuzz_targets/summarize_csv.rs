//! Fuzz target: summarize_csv. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut rows = headroom::report::csvread::CsvRows::new();
    let mut s = headroom::report::summary::Summary::new(None, None);
    if rows.feed(data, &mut |r| s.observe(r)).is_ok() {
        let _ = rows.feed(&[], &mut |r| s.observe(r));
    }
    let mut t = headroom::report::summary::Text::new();
    let _ = s.render(&mut t);
    let _ = s.render_json(&mut t);
});
