//! Fuzz target: cgroup. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = headroom::cgroup::path_for(data, b"memory");
    let _ = headroom::cgroup::parse_limit(data).map(|l| l.effective(1 << 32));
    let _ = headroom::cgroup::parse_cpu_max(data).map(|c| c.millicpus());
    let _ = headroom::cgroup::parse_cfs_quota(data);
    let _ = headroom::cgroup::parse_cpu_list_count(data);
    let _ = headroom::cgroup::parse_oom_kill(data);
});
