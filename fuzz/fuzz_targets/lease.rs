//! Fuzz target: a pool lease. Never panics, whatever the bytes; whatever
//! parses writes back to bytes that parse to the same lease.
#![no_main]

use libfuzzer_sys::fuzz_target;

use headroom::govern::jobserver::lease::{LEASE_CAP, Lease};

fuzz_target!(|data: &[u8]| {
    if let Ok(l) = Lease::parse(data) {
        let mut out = heapless::Vec::<u8, LEASE_CAP>::new();
        if l.write(&mut out).is_ok() {
            assert_eq!(Lease::parse(&out).as_ref(), Ok(&l));
        }
    }
});
