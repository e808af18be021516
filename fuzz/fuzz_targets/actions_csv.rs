//! Fuzz target: actions_csv. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut rows = headroom::report::actions::ActionRows::new();
    let mut table = headroom::report::actions::Table::new(10, 0);
    if rows.feed(data, &mut |a| table.observe(a)).is_ok() {
        let _ = rows.feed(&[], &mut |a| table.observe(a));
    }
    let mut t = headroom::report::summary::Text::new();
    let _ = table.render(&mut t);
});
