//! Issue 25's first acceptance, live: in a 1 GiB memory cgroup whose swap
//! is capped at the limit (memsw = limit on v1, `memory.swap.max` 0 on v2,
//! as `docker run -m 1g --memory-swap 1g`), after 700 MiB of clean file
//! cache has been charged to it, `jobs --peak-mb 300` gives the cores (the
//! cache is available memory: the kernel reclaims it before it OOM-kills),
//! `advise` asks for no swap even for a job that does not fit (the cgroup
//! may not swap), and `status` shows the cgroup's ~1 GiB available, named.
//!
//! Needs root and a writable memory cgroup, so it is `#[ignore]`d in a
//! plain `cargo test`; `ci/test` runs it. The same figures on a captured
//! tree: fixture 46 in tests/plan.rs.

use std::fs;

mod common;
use common::{Cgroup, scratch, sh_in_cgroup};

const BIN: &str = env!("CARGO_BIN_EXE_headroom");

/// `jobs = max(1, min(cores C, A / 1 / 300 = M)) = J` of `--explain`: C, A,
/// M and J.
fn formula(explain: &str) -> (u64, u64, u64, u64) {
    let line = explain
        .lines()
        .find(|l| l.starts_with("jobs = max(1, min(cores "))
        .unwrap_or_else(|| panic!("no formula in {explain}"));
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    // max(1, min(cores C, A / 1 / 300 = M)) = J
    (n[1], n[2], n[5], n[6])
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn a_gib_cgroup_holding_700_mib_of_clean_cache_plans_by_its_cores() {
    let cg = match Cgroup::create("cache", 1 << 30) {
        Ok(cg) => cg,
        Err(why) => panic!("{why}"),
    };
    let d = scratch("cache");
    // Written, not read back: a second access could move the pages to the
    // active list; written and synced they are clean inactive file cache.
    let script = format!(
        "dd if=/dev/zero of=f bs=1M count=700 status=none && sync && \
         {BIN} jobs --peak-mb 300 --explain && echo @@ && \
         {BIN} advise --profile heavy && echo @@ && {BIN} status"
    );
    let out = sh_in_cgroup(&cg, &d, &script, 120);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{out:?}");
    let parts: Vec<&str> = text.split("@@\n").collect();
    let (explain, advise, status) = (parts[0], parts[1], parts[2]);

    // The cache is available: ~1 GiB less what is not cache (a few MiB of
    // kernel memory and the shell), not the 300 MiB that limit − usage
    // leaves; so 3 jobs fit by memory, and the cores bind at 2 of them.
    let (cores, avail, by_memory, jobs) = formula(explain);
    assert!((900..=1024).contains(&avail), "{explain}");
    assert!(by_memory >= 3, "{explain}");
    assert_eq!(jobs, cores.min(by_memory), "{explain}");
    assert!(explain.contains(" binds: memory."), "{explain}");
    assert!(explain.contains("inactive file 7"), "{explain}");

    // A heavy job does not fit; the cgroup may not swap: no swap advice.
    assert!(advise.starts_with("one job does NOT fit"), "{advise}");
    for never in ["add swap", "zram", "dphys", "swapfile"] {
        assert!(!advise.contains(never), "{never}: {advise}");
    }
    assert!(advise.contains("A larger memory limit can: "), "{advise}");

    // status: the cgroup's available memory under the host's, named.
    let name = cg.dir.file_name().unwrap().to_string_lossy().into_owned();
    let line = status
        .lines()
        .find(|l| l.trim_start().starts_with("cgroup ") && l.contains(": available "))
        .unwrap_or_else(|| panic!("no cgroup line in {status}"));
    assert!(line.contains(&name[name.len() - 6..]), "{line}");
    assert!(line.contains(" of 1024 (usage "), "{line}");
    assert!(status.contains(": the cgroup binds\n"), "{status}");
    assert!(
        status.contains("            swap: none allowed ("),
        "{status}"
    );
    // Uncharge the cache before the cgroup goes.
    fs::remove_dir_all(&d).unwrap();
}
