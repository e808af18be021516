//! Fuzz target: cgroup. Never panics, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = headroom::kernel::cgroup::path_for(data, b"memory");
    let _ = headroom::kernel::cgroup::parse_limit(data).map(|l| l.effective(1 << 32));
    let _ = headroom::kernel::cgroup::parse_cpu_max(data).map(|c| c.millicpus());
    let _ = headroom::kernel::cgroup::parse_cfs_quota(data);
    let _ = headroom::kernel::cgroup::parse_cpu_list_count(data);
    let _ = headroom::kernel::cgroup::parse_oom_kill(data);
    // /proc/cgroups, read when no cgroup filesystem is mounted.
    let _ = headroom::kernel::proc_cgroups::controller(data, b"memory").map(|c| c.can_limit());
    // A memory cgroup's memory.stat, for its inactive file cache.
    for v in [
        headroom::kernel::cgroup::Version::V1,
        headroom::kernel::cgroup::Version::V2,
    ] {
        let _ = headroom::kernel::cgroup::parse_stat_value(
            data,
            headroom::kernel::cgroup::inactive_file_key(v),
        );
    }
    // A limit above the mount (v1 hierarchical_memory_limit) and the v2
    // top cgroup's reclaim counter, from memory.stat.
    let own = headroom::kernel::cgroup::parse_limit(data).ok();
    let _ = headroom::kernel::cgroup::unseen_limit(data, own, 1 << 34);
    let _ = headroom::kernel::cgroup::unseen_memsw_limit(data, 1 << 35);
    let _ = headroom::kernel::cgroup::parse_stat_value(data, headroom::kernel::cgroup::PGSCAN_DIRECT);
    // The build's cgroup: memory.stat of either version, the names of
    // headroom's cgroups, and membership of one path in another.
    let _ = headroom::followed::buildcg::parse_anon(data, headroom::kernel::cgroup::Version::V1);
    let _ = headroom::followed::buildcg::parse_anon(data, headroom::kernel::cgroup::Version::V2);
    let _ = headroom::followed::buildcg::pid_of_name(data);
    let (a, b) = data.split_at(data.len() / 2);
    let _ = headroom::kernel::cgroup::is_within(a, b);
});
