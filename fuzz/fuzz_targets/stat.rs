//! Fuzz target: stat. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(a) = headroom::kernel::stat::aggregate(data) {
        let _ = headroom::kernel::stat::delta(&a, &Default::default()).busy_pct();
        let _ = headroom::kernel::stat::delta(&Default::default(), &a).busy_pct();
    }
    let _ = headroom::kernel::stat::per_cpu(data).count();
    let _ = headroom::kernel::stat::procs_blocked(data);
});
