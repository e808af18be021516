//! Issue 42, item 1, without Docker: a limit set on a parent cgroup that
//! the container's mount does not show binds the build all the same.
//!
//! The test makes a 400 MiB memory cgroup (swap capped) with a child
//! `lane` below it, and runs headroom in the child with private mount,
//! PID and cgroup namespaces and the cgroup hierarchies mounted read-only
//! from inside ([`common::namespace::in_container`]): as in a BuildKit
//! RUN step under dockerd's `--cgroup-parent`, every directory the mount
//! shows reads unlimited, and the parent's limit is only in cgroup v1's
//! `memory.stat` (`hierarchical_memory_limit`).
//!
//! - `status` says the 400 MiB limit, set above the mount, and (with swap
//!   accounting) that it allows no swap (`hierarchical_memsw_limit`);
//! - `run --jobserver --max-jobs 8` of eight jobs of ~150 MiB is never
//!   OOM-killed and runs at most two at once (planned from the host's
//!   GiBs, it ran eight and the kernel killed them).
//!
//! v1 only (v2 prints no hierarchical limit: a limit above a v2 mount is
//! noticed instead, tests/small_host.rs). Needs root, a writable memory
//! controller and util-linux `unshare`: `#[ignore]`d in a plain `cargo
//! test`, run by `ci/test` (the `container` stage). About 10 s.

mod common;

use std::fs;

use common::namespace::{Sys, in_container};
use common::{BIN, Cgroup, HOG, makefile, output_within, overlap, scratch};

/// The parent's limit: dockerd's `--cgroup-parent`, a limited builder.
const LIMIT_BYTES: u64 = 400 << 20;

/// OOM kills counted in `dir`'s own `memory.oom_control` (v1 counts a
/// kill in the cgroup the killed process was in).
fn oom_kills(dir: &std::path::Path) -> u64 {
    fs::read_to_string(dir.join("memory.oom_control"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
        .expect("oom_kill in memory.oom_control (kernel 4.13+)")
}

#[test]
#[ignore = "root: makes cgroups and namespaces"]
fn a_parent_s_limit_above_the_mount_binds_status_and_the_governor() {
    let parent = Cgroup::create("above", LIMIT_BYTES).expect("memory cgroup");
    if !parent.is_v1() {
        eprintln!("cgroup v2: no hierarchical_memory_limit; tests/small_host.rs covers v2");
        return;
    }
    let lane = parent.dir.join("lane");
    fs::create_dir(&lane).expect("the child cgroup");
    let d = scratch("above");
    makefile(&d, 8, HOG);
    let inside = |argv: &[&str]| {
        let out = output_within(&mut in_container(&[&lane], Sys::CgroupReadOnly, argv), 180);
        assert!(
            !matches!(out.status.code(), Some(97 | 98)),
            "the container could not be made: {out:?}"
        );
        out
    };

    let out = inside(&[BIN, "status"]);
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        screen.contains("cgroup mem  limit 400 MiB  (v1)\n"),
        "{screen}"
    );
    assert!(
        screen.contains(
            "limit set at a cgroup above the mount (memory.stat hierarchical_memory_limit)"
        ),
        "{screen}"
    );
    // Its memsw limit is the limit (swap capped): hierarchical_memsw_limit
    // says so, where swap accounting is on.
    if parent.dir.join("memory.memsw.limit_in_bytes").exists() {
        assert!(screen.contains("swap: none allowed"), "{screen}");
    }

    let script = format!(
        "cd '{}' && exec {BIN} run --jobserver --max-jobs 8 --peak-mb 160 --run-id j --out-dir out -- make",
        d.display()
    );
    let out = inside(&["sh", "-c", &script]);
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{summary}");
    assert_eq!(oom_kills(&lane) + oom_kills(&parent.dir), 0, "{summary}");
    let (max, ended) = overlap(&[&d]);
    assert_eq!(ended, 8, "{summary}");
    assert!((1..=2).contains(&max), "{max} at once: {summary}");
}
