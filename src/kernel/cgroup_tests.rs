//! Unit tests of `kernel::cgroup` (src/kernel/cgroup.rs).

extern crate std;
use super::*;
use crate::kernel::parse::colon_value;
use std::vec;

#[test]
fn errors_read_as_one_line_not_debug_text() {
    use std::string::ToString;
    let e = CgroupError::Read("proc/self/cgroup", ReadError::Open(rustix::io::Errno::LOOP));
    assert_eq!(
        e.to_string(),
        "proc/self/cgroup: cannot open: symlink loop (ELOOP)"
    );
    let e = CgroupError::Read("memory.max", ReadError::Truncated { capacity: 64 });
    assert_eq!(e.to_string(), "memory.max: larger than its buffer");
}

const MIB: u64 = 1024 * 1024;

macro_rules! fixture {
    ($p:literal) => {
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $p))
    };
}
macro_rules! root {
    ($p:literal) => {
        Root::open(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $p)).unwrap()
    };
}

fn mem_total_kib(meminfo: &[u8]) -> u64 {
    parse_u64(colon_value(meminfo, b"MemTotal").unwrap()).unwrap()
}

fn bigbuf() -> std::vec::Vec<u8> {
    vec![0u8; OPEN_BUF_LEN]
}

// ---- path_for ----

#[test]
fn path_for_v1_line_wins_wherever_it_is() {
    let b = b"0::/init.scope\n2:cpu,cpuacct:/a\n5:memory:/m\n";
    assert_eq!(path_for(b, b"memory"), Some((Version::V1, &b"/m"[..])));
    assert_eq!(path_for(b, b"cpu"), Some((Version::V1, &b"/a"[..])));
    assert_eq!(path_for(b, b"cpuacct"), Some((Version::V1, &b"/a"[..])));
    // Not a v1 controller here: falls to the unified line.
    assert_eq!(
        path_for(b, b"pids"),
        Some((Version::V2, &b"/init.scope"[..]))
    );
}

#[test]
fn path_for_matches_whole_controller_names() {
    let b = b"3:cpuset:/s\n1:name=systemd:/x\n";
    assert_eq!(path_for(b, b"cpu"), None);
    assert_eq!(path_for(b, b"systemd"), None);
    assert_eq!(path_for(b, b"cpuset"), Some((Version::V1, &b"/s"[..])));
    // Only `0::` is the unified line.
    assert_eq!(path_for(b"1::/x\n", b"memory"), None);
}

#[test]
fn path_for_keeps_colons_in_path_and_skips_garbage() {
    let b = b"garbage\n:memory:/x\n9:memory:\n0::/a:b\n";
    assert_eq!(path_for(b, b"memory"), Some((Version::V2, &b"/a:b"[..])));
    assert_eq!(path_for(b"", b"memory"), None);
}

// ---- small parsers ----

#[test]
fn parse_limit_forms() {
    assert_eq!(parse_limit(b"max\n"), Ok(Limit::Max));
    assert_eq!(parse_limit(b"2147483648\n"), Ok(Limit::Bytes(2147483648)));
    assert_eq!(
        parse_limit(b"18446744073709551615"),
        Ok(Limit::Bytes(u64::MAX))
    );
    assert_eq!(
        parse_limit(b"18446744073709551616").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(
        parse_limit(b"-1").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(
        parse_limit(b"maxx").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(
        parse_limit(b"1 2").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(
        parse_limit(b"1\n2\n").unwrap_err().kind,
        ParseErrorKind::Malformed
    );
    assert_eq!(
        parse_limit(b"").unwrap_err().kind,
        ParseErrorKind::Missing("value")
    );
    assert_eq!(
        parse_limit(b" \n").unwrap_err().kind,
        ParseErrorKind::Missing("value")
    );
}

#[test]
fn limit_effective_compares_with_memtotal() {
    let total = 4 * 1024 * MIB;
    assert_eq!(Limit::Max.effective(total), None);
    assert_eq!(Limit::Bytes(total).effective(total), None);
    assert_eq!(Limit::Bytes(total - 1).effective(total), Some(total - 1));
    assert_eq!(Limit::Bytes(0).effective(total), Some(0));
}

#[test]
fn parse_cpu_max_forms() {
    assert_eq!(
        parse_cpu_max(b"max 100000\n"),
        Ok(CpuMax {
            quota_us: None,
            period_us: 100000
        })
    );
    let c = parse_cpu_max(b"150000 100000").unwrap();
    assert_eq!(c.millicpus(), Some(1500));
    assert_eq!(parse_cpu_max(b"max 100000").unwrap().millicpus(), None);
    // Rounded up, not down.
    assert_eq!(
        parse_cpu_max(b"50001 100000").unwrap().millicpus(),
        Some(501)
    );
    // Overflowing product saturates instead of panicking.
    assert!(
        parse_cpu_max(b"18446744073709551615 1")
            .unwrap()
            .millicpus()
            .is_some()
    );
    assert_eq!(
        parse_cpu_max(b"max").unwrap_err().kind,
        ParseErrorKind::Missing("period")
    );
    assert_eq!(
        parse_cpu_max(b"max 0").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(
        parse_cpu_max(b"1.5 100000").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(
        parse_cpu_max(b"1 2 3").unwrap_err().kind,
        ParseErrorKind::Malformed
    );
    assert_eq!(
        parse_cpu_max(b"").unwrap_err().kind,
        ParseErrorKind::Missing("value")
    );
}

#[test]
fn parse_cfs_quota_forms() {
    assert_eq!(parse_cfs_quota(b"-1\n"), Ok(None));
    assert_eq!(parse_cfs_quota(b"50000\n"), Ok(Some(50000)));
    assert_eq!(
        parse_cfs_quota(b"-").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(
        parse_cfs_quota(b"").unwrap_err().kind,
        ParseErrorKind::Missing("value")
    );
}

#[test]
fn parse_cpu_list_count_forms() {
    assert_eq!(parse_cpu_list_count(b"0-3\n"), Ok(4));
    assert_eq!(parse_cpu_list_count(b"0-3,5,7-8"), Ok(7));
    assert_eq!(parse_cpu_list_count(b"0"), Ok(1));
    assert_eq!(parse_cpu_list_count(b"\n"), Ok(0));
    assert_eq!(
        parse_cpu_list_count(b"3-1").unwrap_err().kind,
        ParseErrorKind::Malformed
    );
    assert_eq!(
        parse_cpu_list_count(b"0,,1").unwrap_err().kind,
        ParseErrorKind::Malformed
    );
    assert_eq!(
        parse_cpu_list_count(b"0-").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(
        parse_cpu_list_count(b"a").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(
        parse_cpu_list_count(b"0-18446744073709551615,1"),
        Ok(u32::MAX)
    );
}

#[test]
fn parse_oom_kill_forms() {
    assert_eq!(
        parse_oom_kill(b"oom_kill_disable 0\nunder_oom 0\n"),
        Ok(None)
    );
    assert_eq!(
        parse_oom_kill(b"oom_kill_disable 1\noom_kill 4\n"),
        Ok(Some(4))
    );
    assert_eq!(
        parse_oom_kill(b"oom_kill x\n").unwrap_err().kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(parse_oom_kill(b""), Ok(None));
}

#[test]
fn strip_dir_prefix_boundaries() {
    assert_eq!(strip_dir_prefix(b"/a/b", b"/"), Some(&b"/a/b"[..]));
    assert_eq!(strip_dir_prefix(b"/a/b", b"/a"), Some(&b"/b"[..]));
    assert_eq!(strip_dir_prefix(b"/a", b"/a"), Some(&b""[..]));
    assert_eq!(strip_dir_prefix(b"/ab", b"/a"), None);
    assert_eq!(strip_dir_prefix(b"/", b"/"), Some(&b"/"[..]));
}

// ---- fixture 04 ----

const F04_MEMINFO: &[u8] = fixture!("04-cgroupv1-unlimited-sentinels/proc/meminfo");

fn f04_unlimited(limit_file: &[u8]) {
    let total = mem_total_kib(F04_MEMINFO) * 1024;
    assert!(matches!(parse_limit(limit_file), Ok(Limit::Bytes(_))));
    assert_eq!(parse_limit(limit_file).unwrap().effective(total), None);
    // ... but the same machine with a real 1 GiB limit would be limited.
    assert_eq!(Limit::Bytes(1024 * MIB).effective(total), Some(1024 * MIB));
}

#[test]
fn fixture_04_cgroupv1_unlimited_sentinels() {
    let root = root!("04-cgroupv1-unlimited-sentinels");
    let mut buf = bigbuf();
    let mem = open_memory(&root, &mut buf).unwrap().unwrap();
    assert_eq!(mem.version, Version::V1);
    // mountinfo root == cgroup path: the mount point itself, nothing above.
    assert_eq!(mem.levels(), 1);
    let total = mem_total_kib(F04_MEMINFO);
    assert_eq!(total * 10 / 1024, 39408); // 3940.8 MiB
    assert_eq!(mem.available(total, &mut buf), None);
    let usage = mem.usage_bytes(&mut buf).unwrap();
    assert_eq!(usage, 29466624);
    assert_eq!((usage * 10 + MIB / 2) / MIB, 281); // 28.1 MiB
    assert_eq!(mem.oom_kills(&mut buf), Some(0));
    f04_unlimited(fixture!(
        "04-cgroupv1-unlimited-sentinels/sys/fs/cgroup/memory/memory.limit_in_bytes"
    ));
    f04_unlimited(fixture!(
        "04-cgroupv1-unlimited-sentinels/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"
    ));

    let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
    assert_eq!(cpu.version, Version::V1);
    assert_eq!(cpu.levels(), 1);
    assert_eq!(cpu.quota_millicpus(&mut buf), None);
    assert_eq!(cpu.cpuset_count(&mut buf), None);
}

#[test]
fn fixture_04_variant_x86_64_or_arm64_4k_pages() {
    let v = fixture!(
        "04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.x86_64-or-arm64-4k-pages"
    );
    assert_eq!(parse_limit(v), Ok(Limit::Bytes(9223372036854771712)));
    f04_unlimited(v);
}

#[test]
fn fixture_04_variant_arm64_16k_pages_rpi5() {
    let v = fixture!(
        "04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.arm64-16k-pages-rpi5"
    );
    assert_eq!(parse_limit(v), Ok(Limit::Bytes(9223372036854759424)));
    f04_unlimited(v);
}

#[test]
fn fixture_04_variant_arm64_64k_pages() {
    let v =
        fixture!("04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.arm64-64k-pages");
    assert_eq!(parse_limit(v), Ok(Limit::Bytes(9223372036854710272)));
    f04_unlimited(v);
}

#[test]
fn fixture_04_variant_32bit_armhf() {
    let v = fixture!("04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.32bit-armhf");
    assert_eq!(parse_limit(v), Ok(Limit::Bytes(8796093018112)));
    f04_unlimited(v);
}

#[test]
fn fixture_04_variant_pre_3_19_res_counter() {
    let v = fixture!(
        "04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.pre-3.19-res_counter"
    );
    assert_eq!(parse_limit(v), Ok(Limit::Bytes(u64::MAX)));
    f04_unlimited(v);
}

// ---- fixture 06 ----

#[test]
fn fixture_06_cgroupv2_container_cpu_max_unlimited() {
    let root = root!("06-cgroupv2-container-cpu-max-unlimited");
    let mut buf = bigbuf();
    let total = mem_total_kib(fixture!(
        "06-cgroupv2-container-cpu-max-unlimited/proc/meminfo"
    ));
    let mem = open_memory(&root, &mut buf).unwrap().unwrap();
    assert_eq!(mem.version, Version::V2);
    assert_eq!(mem.levels(), 1); // `0::/` joined onto the mount
    let r = mem.available(total, &mut buf).unwrap();
    // No memory.stat in the case: the cache counts as used.
    assert_eq!(
        r,
        Available {
            limit_bytes: 2048 * MIB,
            usage_bytes: 2044 * MIB,
            inactive_file_bytes: None,
            available_bytes: 4 * MIB,
            depth: 0,
        }
    );
    // memory.swap.max 2 GiB (docker's default --memory-swap of twice -m).
    assert_eq!(
        mem.swap_allowance_bytes(total, 0, &mut buf),
        Some(2048 * MIB)
    );
    assert_eq!(mem.usage_bytes(&mut buf), Some(2044 * MIB));
    assert_eq!(mem.oom_kills(&mut buf), Some(3)); // not the host's 7
    // Swap limit file parses with the same parser.
    assert_eq!(
        parse_limit(fixture!(
            "06-cgroupv2-container-cpu-max-unlimited/sys/fs/cgroup/memory.swap.max"
        )),
        Ok(Limit::Bytes(2048 * MIB))
    );
    assert_eq!(
        parse_limit(fixture!(
            "06-cgroupv2-container-cpu-max-unlimited/sys/fs/cgroup/memory.high"
        )),
        Ok(Limit::Max)
    );

    let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
    assert_eq!(cpu.version, Version::V2);
    assert_eq!(cpu.quota_millicpus(&mut buf), None); // never 0 CPUs
    assert_eq!(cpu.cpuset_count(&mut buf), Some(4));
}

// ---- fixture 07 ----

#[test]
fn fixture_07_a_ubuntu2004_hybrid() {
    let root = root!("07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid");
    let mut buf = bigbuf();
    let self_cgroup =
        fixture!("07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid/proc/self/cgroup");
    assert_eq!(
        path_for(self_cgroup, b"memory"),
        Some((
            Version::V1,
            &b"/user.slice/user-1000.slice/session-3.scope"[..]
        ))
    );
    let total = mem_total_kib(fixture!(
        "07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid/proc/meminfo"
    ));
    let mem = open_memory(&root, &mut buf).unwrap().unwrap();
    // Not the memory-less unified tree.
    assert_eq!(mem.version, Version::V1);
    assert_eq!(mem.levels(), 4); // session-3.scope, user-1000.slice, user.slice, mount
    let r = mem.available(total, &mut buf).unwrap();
    // The limiting level (user.slice) has no memory.stat: limit − usage.
    assert_eq!(
        r,
        Available {
            limit_bytes: 3072 * MIB,
            usage_bytes: 1040 * MIB,
            inactive_file_bytes: None,
            available_bytes: 2032 * MIB,
            depth: 2,
        }
    );
    // No memsw file at the limiting level: swap not limited.
    assert_eq!(mem.swap_allowance_bytes(total, 2097148, &mut buf), None);
    assert_eq!(mem.usage_bytes(&mut buf), Some(700 * MIB)); // the leaf's
    assert_eq!(mem.oom_kills(&mut buf), Some(1));

    let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
    assert_eq!(cpu.version, Version::V1);
    assert_eq!(cpu.levels(), 2); // user.slice and the mount
    assert_eq!(cpu.quota_millicpus(&mut buf), None);
}

#[test]
fn fixture_07_b_v2_plus_one_v1_controller() {
    let root = root!("07-cgroup-hybrid-memory-on-v1-line/b-v2-plus-one-v1-controller");
    let mut buf = bigbuf();
    let mem = open_memory(&root, &mut buf).unwrap().unwrap();
    assert_eq!(mem.version, Version::V2);
    // The case gives no meminfo: any host larger than the 1 GiB limit.
    let r = mem.available(4 * 1024 * 1024, &mut buf).unwrap();
    assert_eq!(r.limit_bytes, 1024 * MIB);
    assert_eq!(r.usage_bytes, 300 * MIB);
    assert_eq!(r.available_bytes, 724 * MIB);
    assert_eq!(r.depth, 0);
    // A host with less RAM than the limit: the limit does not bind.
    assert_eq!(mem.available(512 * 1024, &mut buf), None);
    assert_eq!(mem.oom_kills(&mut buf), Some(0));

    let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
    assert_eq!(cpu.version, Version::V2);
    assert_eq!(cpu.quota_millicpus(&mut buf), Some(1500));
}

// ---- fixture 08 ----

#[test]
fn fixture_08_rpi_memory_cgroup_disabled() {
    let root = root!("08-rpi-memory-cgroup-disabled");
    let mut buf = bigbuf();
    // The v2 line exists, but no memory controller: unknown, not 0.
    assert!(
        path_for(
            fixture!("08-rpi-memory-cgroup-disabled/proc/self/cgroup"),
            b"memory"
        )
        .is_some()
    );
    assert!(open_memory(&root, &mut buf).unwrap().is_none());

    let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
    assert_eq!(cpu.version, Version::V2);
    assert_eq!(cpu.levels(), 4);
    assert_eq!(cpu.quota_millicpus(&mut buf), None);
    assert_eq!(cpu.cpuset_count(&mut buf), None);
}

// ---- synthetic trees ----

fn tree(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(std::format!(
        "headroom-cgroup-{}-{}",
        name,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    for (p, c) in files {
        let f = dir.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    }
    dir
}

#[test]
fn tightest_level_and_v1_cpu_quota_on_ancestor() {
    let dir = tree(
        "tight",
        &[
            (
                "proc/self/cgroup",
                "4:memory:/a/b\n3:cpu,cpuacct:/a/b\n0::/\n",
            ),
            (
                "proc/self/mountinfo",
                "1 0 8:1 / / rw - ext4 /dev/sda rw\n\
                     2 1 0:2 / /cg/m\\040x rw - cgroup cgroup rw,memory\n\
                     3 1 0:3 / /cg/cpu rw - cgroup cgroup rw,cpu,cpuacct\n",
            ),
            ("cg/m x/a/b/memory.limit_in_bytes", "1000\n"),
            ("cg/m x/a/b/memory.usage_in_bytes", "990\n"),
            ("cg/m x/a/memory.limit_in_bytes", "5000\n"),
            ("cg/m x/a/memory.usage_in_bytes", "garbage\n"),
            ("cg/m x/memory.limit_in_bytes", "9223372036854771712\n"),
            ("cg/m x/memory.usage_in_bytes", "999999\n"),
            ("cg/cpu/a/b/cpu.cfs_quota_us", "-1\n"),
            ("cg/cpu/a/b/cpu.cfs_period_us", "100000\n"),
            ("cg/cpu/a/cpu.cfs_quota_us", "250000\n"),
            ("cg/cpu/a/cpu.cfs_period_us", "100000\n"),
            ("cg/cpu/cpu.cfs_quota_us", "300000\n"),
            ("cg/cpu/cpu.cfs_period_us", "100000\n"),
        ],
    );
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    let mut buf = bigbuf();
    let mem = open_memory(&root, &mut buf).unwrap().unwrap();
    assert_eq!(mem.levels(), 3);
    let r = mem.available(1_000_000, &mut buf).unwrap();
    assert_eq!((r.available_bytes, r.depth), (10, 0));
    // The limiting levels, each by its directory's inode: the leaf (10
    // left); `a` has a limit but no readable usage; the mount point's
    // limit is the v1 "unlimited" sentinel.
    use std::os::unix::fs::MetadataExt;
    let leaf_ino = std::fs::metadata(dir.join("cg/m x/a/b")).unwrap().ino();
    let levels = mem.limits(1_000_000, &mut buf);
    assert_eq!(
        levels.as_slice(),
        [Level {
            ino: leaf_ino,
            mem: Available {
                limit_bytes: 1000,
                usage_bytes: 990,
                inactive_file_bytes: None,
                available_bytes: 10,
                depth: 0,
            }
        }]
    );
    // No oom_control anywhere.
    assert_eq!(mem.oom_kills(&mut buf), None);
    let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
    assert_eq!(cpu.quota_millicpus(&mut buf), Some(2500));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_mount_outside_path_and_inconsistent_tree() {
    // No cgroup mount at all: Ok(None).
    let dir = tree(
        "nomount",
        &[
            ("proc/self/cgroup", "0::/x\n"),
            ("proc/self/mountinfo", "1 0 8:1 / / rw - ext4 /dev/sda rw\n"),
        ],
    );
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    let mut buf = bigbuf();
    assert!(open_memory(&root, &mut buf).unwrap().is_none());
    std::fs::remove_dir_all(&dir).unwrap();

    // Cgroup outside the namespace's view: Ok(None), nothing escaped.
    let dir = tree(
        "outside",
        &[
            ("proc/self/cgroup", "0::/../../x\n"),
            (
                "proc/self/mountinfo",
                "1 0 0:1 / /cg rw - cgroup2 cgroup2 rw\n",
            ),
            ("cg/memory.max", "max\n"),
        ],
    );
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    assert!(open_memory(&root, &mut buf).unwrap().is_none());
    std::fs::remove_dir_all(&dir).unwrap();

    // Mount's root is not an ancestor of the path: Ok(None).
    let dir = tree(
        "otherroot",
        &[
            ("proc/self/cgroup", "5:memory:/a\n"),
            (
                "proc/self/mountinfo",
                "1 0 0:1 /b /cg rw - cgroup cgroup rw,memory\n",
            ),
            ("cg/memory.limit_in_bytes", "1\n"),
        ],
    );
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    assert!(open_memory(&root, &mut buf).unwrap().is_none());
    std::fs::remove_dir_all(&dir).unwrap();

    // The directory the files name does not exist: an error.
    let dir = tree(
        "gone",
        &[
            ("proc/self/cgroup", "0::/missing\n"),
            (
                "proc/self/mountinfo",
                "1 0 0:1 / /cg rw - cgroup2 cgroup2 rw\n",
            ),
            ("cg/cgroup.controllers", "memory\n"),
        ],
    );
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    assert_eq!(
        open_memory(&root, &mut buf).unwrap_err(),
        CgroupError::Read("cgroup directory", ReadError::Open(Errno::NOENT))
    );
    std::fs::remove_dir_all(&dir).unwrap();

    // No /proc/self/cgroup (kernel without cgroups): Ok(None).
    let dir = tree("nocg", &[("proc/x", "")]);
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    assert!(open_memory(&root, &mut buf).unwrap().is_none());
    assert!(open_cpu(&root, &mut buf).unwrap().is_none());
    std::fs::remove_dir_all(&dir).unwrap();

    // Malformed mountinfo: a parse error with its line.
    let dir = tree(
        "badmi",
        &[
            ("proc/self/cgroup", "0::/\n"),
            (
                "proc/self/mountinfo",
                "1 0 8:1 / / rw - ext4 /dev/sda rw\njunk\n",
            ),
        ],
    );
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    assert_eq!(
        open_memory(&root, &mut buf).unwrap_err(),
        CgroupError::Parse(
            mountinfo::PATH,
            ParseError {
                kind: ParseErrorKind::Malformed,
                line: 2
            }
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn too_deep_is_an_error() {
    let mut deep = std::string::String::new();
    for _ in 0..MAX_DEPTH {
        deep.push_str("/d");
    }
    let cg = std::format!("0::{deep}\n");
    let leaf = std::format!("cg{deep}/memory.max");
    let dir = tree(
        "deep",
        &[
            ("proc/self/cgroup", cg.as_str()),
            (
                "proc/self/mountinfo",
                "1 0 0:1 / /cg rw - cgroup2 cgroup2 rw\n",
            ),
            (leaf.as_str(), "max\n"),
        ],
    );
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    let mut buf = bigbuf();
    assert_eq!(
        open_memory(&root, &mut buf).unwrap_err(),
        CgroupError::TooDeep
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- memory.stat and available memory ----

#[test]
fn parse_stat_value_anchors_whole_keys_at_line_start() {
    let v1 = b"inactive_file 5\ntotal_inactive_file 7\n";
    let v2 = b"total_inactive_file 7\ninactive_file_x 9\ninactive_file 5\n";
    assert_eq!(
        parse_stat_value(v1, inactive_file_key(Version::V1)),
        Ok(Some(7))
    );
    assert_eq!(
        parse_stat_value(v1, inactive_file_key(Version::V2)),
        Ok(Some(5))
    );
    // Near misses: a key inside another, a longer key, a shorter one.
    assert_eq!(parse_stat_value(v2, b"inactive_file"), Ok(Some(5)));
    assert_eq!(parse_stat_value(v2, b"inactive_fil"), Ok(None));
    assert_eq!(parse_stat_value(v2, b"active_file"), Ok(None));
    assert_eq!(
        parse_stat_value(b"xinactive_file 3\n", b"inactive_file"),
        Ok(None)
    );
    // Not at the line start, or not separated by one space: not the key.
    assert_eq!(
        parse_stat_value(b" inactive_file 3\n", b"inactive_file"),
        Ok(None)
    );
    assert_eq!(
        parse_stat_value(b"inactive_file\t3\n", b"inactive_file"),
        Ok(None)
    );
    assert_eq!(
        parse_stat_value(b"inactive_file3\n", b"inactive_file"),
        Ok(None)
    );
    // The first line with the key counts; no final newline; CRLF.
    assert_eq!(
        parse_stat_value(b"inactive_file 1\ninactive_file 2", b"inactive_file"),
        Ok(Some(1))
    );
    assert_eq!(
        parse_stat_value(b"inactive_file 4\r\n", b"inactive_file"),
        Ok(Some(4))
    );
    assert_eq!(parse_stat_value(b"", b"inactive_file"), Ok(None));
    let bad = |b: &[u8]| parse_stat_value(b, b"inactive_file").unwrap_err();
    assert_eq!(
        bad(b"anon 1\ninactive_file -1\n"),
        ParseError {
            kind: ParseErrorKind::BadNumber,
            line: 2
        }
    );
    assert_eq!(
        bad(b"inactive_file 18446744073709551616\n").kind,
        ParseErrorKind::BadNumber
    );
    assert_eq!(bad(b"inactive_file \n").kind, ParseErrorKind::BadNumber);
    assert_eq!(bad(b"inactive_file 1 2\n").kind, ParseErrorKind::BadNumber);
}

#[test]
fn available_is_limit_less_what_cannot_be_reclaimed() {
    assert_eq!(available_bytes(1024, 719, Some(700)), 1005);
    assert_eq!(available_bytes(1024, 719, None), 305);
    // Over the limit with nothing reclaimable: 0, never a wrap.
    assert_eq!(available_bytes(1024, 2000, Some(0)), 0);
    // Counters read apart: more inactive cache than usage gives the limit.
    assert_eq!(available_bytes(1024, 700, Some(719)), 1024);
    assert_eq!(available_bytes(0, u64::MAX, Some(u64::MAX)), 0);
}

/// The largest v2 memory.stat a 6.x kernel prints (~75 keys of
/// `memory_stats[]` and `memcg_vm_event_stat[]`, 28 bytes the longest),
/// every value 13 digits (terabytes): within [`TICK_BUF_LEN`].
#[test]
fn tick_buf_len_holds_a_v2_memory_stat_of_large_values() {
    let mut text = std::string::String::new();
    for i in 0..75 {
        text.push_str(&std::format!(
            "workingset_activate_anon{i:04} 1234567890123\n"
        ));
    }
    assert!(text.len() < TICK_BUF_LEN, "{}", text.len());
    let v2 = fixture!(
        "46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0/sys/fs/cgroup/memory.stat"
    );
    let v1 = fixture!(
        "46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal/sys/fs/cgroup/memory/memory.stat"
    );
    assert!(v1.len() < TICK_BUF_LEN && v2.len() < TICK_BUF_LEN);
}

// ---- fixture 46 ----

const F46_LIMIT: u64 = 1073741824;
const F46_INACTIVE: u64 = 734040064;

#[test]
fn fixture_46_a_v1_docker_memsw_equal() {
    let root = root!("46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal");
    let mut buf = bigbuf();
    let meminfo =
        fixture!("46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal/proc/meminfo");
    let total = mem_total_kib(meminfo);
    let mem = open_memory(&root, &mut buf).unwrap().unwrap();
    assert_eq!((mem.version, mem.levels()), (Version::V1, 1));
    let stat = fixture!(
        "46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal/sys/fs/cgroup/memory/memory.stat"
    );
    // v1 prints both: the hierarchical total is the one taken.
    assert_eq!(
        parse_stat_value(stat, b"total_inactive_file"),
        Ok(Some(F46_INACTIVE))
    );
    assert_eq!(
        parse_stat_value(stat, b"inactive_file"),
        Ok(Some(F46_INACTIVE))
    );
    let a = mem.available(total, &mut buf).unwrap();
    assert_eq!(
        a,
        Available {
            limit_bytes: F46_LIMIT,
            usage_bytes: 754147328,
            inactive_file_bytes: Some(F46_INACTIVE),
            available_bytes: 1053634560,
            depth: 0,
        }
    );
    assert_eq!(a.available_bytes >> 20, 1004); // not 304
    assert_eq!((F46_LIMIT - a.usage_bytes) >> 20, 304);
    // memsw = the limit: no swap at all.
    assert_eq!(mem.swap_allowance_bytes(total, 0, &mut buf), Some(0));
    let levels = mem.limits(total, &mut buf);
    assert_eq!(levels.len(), 1);
    assert_eq!(levels[0].mem, a);
}

#[test]
fn fixture_46_b_v2_docker_swap_max_0() {
    let root = root!("46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0");
    let mut buf = bigbuf();
    let meminfo = fixture!("46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0/proc/meminfo");
    let total = mem_total_kib(meminfo);
    let mem = open_memory(&root, &mut buf).unwrap().unwrap();
    assert_eq!((mem.version, mem.levels()), (Version::V2, 1));
    let a = mem.available(total, &mut buf).unwrap();
    assert_eq!(
        (
            a.limit_bytes,
            a.usage_bytes,
            a.inactive_file_bytes,
            a.available_bytes
        ),
        (F46_LIMIT, 754249728, Some(F46_INACTIVE), 1053532160)
    );
    // memory.swap.max 0 although the host has 4 GiB of swap.
    assert_eq!(mem.swap_allowance_bytes(total, 4194300, &mut buf), Some(0));
    // v2 has no total_ keys: total_inactive_file is absent.
    let stat = fixture!(
        "46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0/sys/fs/cgroup/memory.stat"
    );
    assert_eq!(parse_stat_value(stat, b"total_inactive_file"), Ok(None));
}

/// The binding level is the one with the least available memory, not the
/// least `limit − usage`: a leaf full of clean cache does not bind before
/// a parent full of anonymous memory. A memory.stat missing, larger than
/// the buffer or malformed counts the cache as used.
#[test]
fn the_tightest_level_by_available_memory_and_stat_fallbacks() {
    let dir = tree(
        "avail",
        &[
            ("proc/self/cgroup", "0::/p/leaf\n"),
            (
                "proc/self/mountinfo",
                "1 0 0:1 / /cg rw - cgroup2 cgroup2 rw\n",
            ),
            ("cg/p/leaf/memory.max", "1000\n"),
            ("cg/p/leaf/memory.current", "900\n"),
            ("cg/p/leaf/memory.stat", "anon 100\ninactive_file 800\n"),
            ("cg/p/leaf/memory.swap.max", "max\n"),
            ("cg/p/memory.max", "2000\n"),
            ("cg/p/memory.current", "1500\n"),
            ("cg/p/memory.stat", "anon 1500\ninactive_file 0\n"),
            ("cg/p/memory.swap.max", "300\n"),
            ("cg/memory.swap.max", "100\n"),
        ],
    );
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    let mut buf = vec![0u8; TICK_BUF_LEN];
    let mem = open_memory(&root, &mut bigbuf()).unwrap().unwrap();
    assert_eq!(mem.levels(), 3);
    let a = mem.available(1_000_000, &mut buf).unwrap();
    assert_eq!((a.available_bytes, a.depth), (500, 1));
    let levels = mem.limits(1_000_000, &mut buf);
    let avail: std::vec::Vec<_> = levels.iter().map(|l| l.mem.available_bytes).collect();
    assert_eq!(avail, [900, 500]);
    // v2: the least memory.swap.max of every level, limiting or not.
    assert_eq!(mem.swap_allowance_bytes(1_000_000, 0, &mut buf), Some(100));

    // The leaf's memory.stat without the key, then unparsable, then too
    // large for the buffer, then gone: limit − usage (100) binds.
    let leaf_stat = dir.join("cg/p/leaf/memory.stat");
    let big = "anon 1\n".repeat(TICK_BUF_LEN / 7 + 1) + "inactive_file 800\n";
    for text in ["anon 100\n", "inactive_file x\n", big.as_str()] {
        std::fs::write(&leaf_stat, text).unwrap();
        let a = mem.available(1_000_000, &mut buf).unwrap();
        assert_eq!(
            (a.available_bytes, a.inactive_file_bytes, a.depth),
            (100, None, 0),
            "{}",
            &text[..text.len().min(20)]
        );
    }
    std::fs::remove_file(&leaf_stat).unwrap();
    assert_eq!(
        mem.available(1_000_000, &mut buf).unwrap().available_bytes,
        100
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// v1: the allowance is memsw − the memory limit at each limiting level,
/// the least of them; an "unlimited" memsw (not below MemTotal +
/// SwapTotal) or no memsw file (no swap accounting) allows any.
#[test]
fn v1_swap_allowance_is_memsw_less_the_limit() {
    let dir = tree(
        "memsw",
        &[
            ("proc/self/cgroup", "4:memory:/a/b\n"),
            (
                "proc/self/mountinfo",
                "1 0 0:2 / /m rw - cgroup cgroup rw,memory\n",
            ),
            ("m/a/b/memory.limit_in_bytes", "1000\n"),
            ("m/a/b/memory.usage_in_bytes", "10\n"),
            ("m/a/b/memory.memsw.limit_in_bytes", "1600\n"),
            ("m/a/memory.limit_in_bytes", "3000\n"),
            ("m/a/memory.usage_in_bytes", "10\n"),
            ("m/a/memory.memsw.limit_in_bytes", "3500\n"),
            ("m/memory.limit_in_bytes", "9223372036854771712\n"),
            ("m/memory.memsw.limit_in_bytes", "9223372036854771712\n"),
        ],
    );
    let root = Root::open(dir.to_str().unwrap()).unwrap();
    let mut buf = vec![0u8; TICK_BUF_LEN];
    let mem = open_memory(&root, &mut bigbuf()).unwrap().unwrap();
    // MemTotal 4 KiB (4096 bytes): both memory limits bind, allowing
    // 1600 − 1000 = 600 and 3500 − 3000 = 500; the mount's are sentinels.
    assert_eq!(mem.swap_allowance_bytes(4, 0, &mut buf), Some(500));
    // With 1 KiB of swap, MemTotal + SwapTotal = 5120 bytes: 3500 still binds.
    assert_eq!(mem.swap_allowance_bytes(4, 1, &mut buf), Some(500));
    // A memsw not below MemTotal + SwapTotal cannot bind.
    std::fs::write(dir.join("m/a/memory.memsw.limit_in_bytes"), "5120\n").unwrap();
    assert_eq!(mem.swap_allowance_bytes(4, 1, &mut buf), Some(600));
    // No swap accounting: no memsw files, no allowance known.
    for p in ["m/a/b", "m/a"] {
        std::fs::remove_file(dir.join(p).join("memory.memsw.limit_in_bytes")).unwrap();
    }
    assert_eq!(mem.swap_allowance_bytes(4, 1, &mut buf), None);
    std::fs::remove_dir_all(&dir).unwrap();
}
