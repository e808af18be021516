//! Fuzz target: a pool lease. Never panics, whatever the bytes; whatever
//! parses writes back to bytes that parse to the same lease. The pool's
//! small files too (a peak, a budget: one figure each, written back the
//! same), and a `/proc/PID/fd` link naming a pipe (`followed::makeshell`).
#![no_main]

use libfuzzer_sys::fuzz_target;

use headroom::govern::jobserver::lease::{LEASE_CAP, Lease};

fuzz_target!(|data: &[u8]| {
    use headroom::govern::jobserver::{budget_file, peakfile};
    if let Ok(mb) = budget_file::parse(data) {
        assert_eq!(budget_file::parse(budget_file::render(mb).as_bytes()), Ok(mb));
    }
    if let Ok(mb) = peakfile::parse(data) {
        assert_eq!(peakfile::parse(peakfile::render(mb).as_bytes()), Ok(mb));
    }
    let _ = headroom::followed::makeshell::pipe_inode(data);
    if let Ok(l) = Lease::parse(data) {
        let mut out = heapless::Vec::<u8, LEASE_CAP>::new();
        if l.write(&mut out).is_ok() {
            assert_eq!(Lease::parse(&out).as_ref(), Ok(&l));
        }
    }
});
