//! Fuzz target: a job's command line made its key. Never panics, whatever
//! the bytes; a key is at most `WORK_LEN` bytes, empty only when none.
#![no_main]

use libfuzzer_sys::fuzz_target;

use headroom::followed::jobkey::{WORK_LEN, Work, work_of};

fuzz_target!(|data: &[u8]| {
    // The first byte splits the bytes into the job's directory and its
    // command line.
    let (dir, rest) = match data.split_first() {
        Some((&n, rest)) => rest.split_at(usize::from(n).min(rest.len())),
        None => (data, data),
    };
    let mut cmdline = rest.to_vec();
    let mut out = Work::new();
    let named = work_of(&mut cmdline, dir, &mut out);
    assert!(out.len() <= WORK_LEN);
    assert_eq!(named, !out.is_empty());
});
