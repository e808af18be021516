//! Fuzz target: buckconfig, a `.buckconfig` text (and the same text as
//! an included file). Never panics, never loops.
#![no_main]

use headroom::remote::buckconfig::{load_from, parse_lines};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_lines(s);
    let text = s.to_string();
    let read = move |_: &Path| -> std::io::Result<Option<String>> { Ok(Some(text.clone())) };
    let env = |v: &str| (v.len() < 4).then(|| v.to_string());
    let root = Path::new("/p");
    let _ = load_from(&[&root.join(".buckconfig")], root, &read, &env);
});
