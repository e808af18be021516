//! Unit tests of `plan::status` (src/plan/status.rs).

extern crate std;
use super::*;
use std::string::String;
use std::vec::Vec;

struct Out(String);

impl uWrite for Out {
    type Error = core::convert::Infallible;
    fn write_str(&mut self, s: &str) -> Result<(), Self::Error> {
        self.0.push_str(s);
        Ok(())
    }
}

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

fn render_at(dir: &str, disk: &str) -> String {
    let root = Root::open(dir).unwrap();
    let opts = StatusOpts {
        live: false,
        disk_path: disk,
        tmp_path: "/tmp",
        memlock: None,
    };
    let mut buf = std::vec![0u8; SCRATCH_LEN];
    let mut out = Out(String::new());
    let Ok(()) = render(&root, &opts, &mut buf, &mut out);
    for line in out.0.lines() {
        assert!(line.chars().count() <= MAX_COLUMNS, "too wide: {line:?}");
        assert!(!line.ends_with(' '), "trailing space: {line:?}");
    }
    assert!(
        out.0.lines().count() <= 40,
        "more than a screen:\n{}",
        out.0
    );
    out.0
}

fn fixture(case: &str) -> String {
    render_at(&std::format!("{FIX}{case}"), "/")
}

#[track_caller]
fn has(out: &str, line: &str) {
    assert!(
        out.lines().any(|l| l == line),
        "no line {line:?} in:\n{out}"
    );
}

/// Whole lines `text` (several, each ending in a newline), in order.
#[track_caller]
fn has_lines(out: &str, text: &str) {
    assert!(
        out.starts_with(text) || out.contains(&std::format!("\n{text}")),
        "no lines {text:?} in:\n{out}"
    );
}

/// A scratch tree under the temp dir, removed on drop.
struct Tree(std::path::PathBuf);

impl Tree {
    fn new(name: &str) -> Tree {
        let p = std::env::temp_dir().join(std::format!(
            "headroom-status-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Tree(p)
    }
    fn file(&self, rel: &str, content: &[u8]) -> &Self {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn fixture_06_cgroupv2_container_cpu_max_unlimited() {
    let out = fixture("06-cgroupv2-container-cpu-max-unlimited");
    std::println!("{out}");
    // No memory.stat in the case: the cache counts as used, and it says so.
    has_lines(
        &out,
        "            cgroup /: available 4 MiB of 2048 (usage 2044, inactive file unknown)\n            usable 4 MiB: the cgroup binds\nswap        total 8191 MiB",
    );
    has_lines(
        &out,
        "cgroup mem  limit 2048 MiB  (v2)\n            limit set at /\n            no inactive_file in memory.stat: its page cache counts as used\n            swap: at most 2048 MiB (memory.swap.max)\n",
    );
    has(&out, "cgroup cpu  no CPU quota (v2)");
    has(
        &out,
        "cores       online 4  quota none  cpuset 4  usable 4 (online)",
    );
    has(
        &out,
        "oom_kill    7 since boot (host-wide); 3 in this cgroup",
    );
    has(&out, "swap dev    not available (proc/swaps: not found)");
    has(&out, "zram        not available (sys/block: not found)");
    has(
        &out,
        "PSI memory  not available (proc/pressure/memory: not found)",
    );
    has(
        &out,
        "            size not available (no statvfs capture in the tree)",
    );
    assert!(!out.contains("affinity"));
    assert!(out.starts_with("memory      total "));
}

#[test]
fn fixture_08_rpi_memory_cgroup_disabled() {
    let out = fixture("08-rpi-memory-cgroup-disabled");
    // CASE: MemTotal 8052.0 MB (8245232 kB = 8051.98 MiB, shown rounded
    // down like the CSV), MemAvailable 7449.7.
    has(
        &out,
        "memory      total 8051 MiB  available 7449 MiB  used 7%",
    );
    has(&out, "cgroup mem  no memory controller");
    has(&out, "cgroup cpu  no CPU quota (v2)");
    has(&out, "oom_kill    not available (proc/vmstat: not found)");
}

#[test]
fn fixture_09_e_sparse_numbering_only_zram1() {
    let out = fixture("09-zram-mm-stat-field-counts/e-sparse-numbering-only-zram1");
    has(
        &out,
        "swap dev    name                    type        size MiB  used MiB  prio",
    );
    has(
        &out,
        "            /dev/zram1              partition       1023        50   100",
    );
    has(
        &out,
        "zram        device  algorithm  disksize  stored  compressed  RAM used  compression  (MiB)",
    );
    has(
        &out,
        "            zram1   lzo-rle        1024      50          15        17         3.33",
    );
    has(&out, "memory      not available (proc/meminfo: not found)");
    has(&out, "cgroup mem  no memory controller");
}

#[test]
fn fixture_09_d_uninitialized() {
    let out = fixture("09-zram-mm-stat-field-counts/d-uninitialized");
    has(&out, "            zram0   not initialised");
}

#[test]
fn fixture_11_b_escaped_space_and_long_path() {
    let out = fixture("11-proc-swaps-layouts-and-escapes/b-escaped-space-and-long-path");
    has(
        &out,
        "            /mnt/usb disk/swapfile  file            1023         0    -2",
    );
    has(
        &out,
        "            /srv/buildcache/swap-area/raspberrypi-build-swapfile.img",
    );
    has(
        &out,
        "                                    file            2047        10    -3",
    );
    // No sys/block in this tree: the zram line says so.
    has(
        &out,
        "            /dev/zram0              partition        495        12   100  zram: not available",
    );
}

#[test]
fn fixture_11_a_no_swap() {
    let out = fixture("11-proc-swaps-layouts-and-escapes/a-no-swap");
    has(&out, "swap dev    no swap");
}

#[test]
fn fixture_04_cgroupv1_unlimited_sentinels() {
    let out = fixture("04-cgroupv1-unlimited-sentinels");
    // CASE: effective limit = MemTotal 3940.8 MB (4035420 kB): the
    // cgroup's "unlimited" sentinel does not show as a limit.
    has(
        &out,
        "memory      total 3940 MiB  available 2573 MiB  used 34%",
    );
    has(&out, "cgroup mem  no memory limit (v1)  usage 28 MiB");
    has(&out, "cgroup cpu  no CPU quota (v1)");
    has(
        &out,
        "oom_kill    not available (proc/vmstat: not found); 0 in this cgroup",
    );
}

#[test]
fn fixture_01_meminfo_no_memavailable() {
    let out = fixture("01-meminfo-no-memavailable");
    has(&out, "            estimated: kernel has no MemAvailable");
    has(&out, "swap        total 3072 MiB  used 0 MiB");
}

#[test]
fn fixture_19_psi() {
    let out = fixture("19-psi-unavailable/c-psi-enabled");
    has(
        &out,
        "PSI memory  some avg10 1.21%  avg60 0.87%  avg300 0.30%",
    );
    let out = fixture("19-psi-unavailable/b-psi-default-disabled");
    has(&out, "PSI memory  not available (empty: PSI disabled)");
}

#[test]
fn fixture_20_vmstat_no_oom_kill() {
    let out = fixture("20-vmstat-no-oom-kill/a-kernel-3.10-no-oom_kill");
    has(&out, "oom_kill    not counted (kernel before 4.13)");
}

#[test]
fn fixture_22_statvfs_inodes_exhausted_and_tmpfs_tmp() {
    let case = std::format!("{FIX}22-statvfs-inodes-exhausted-and-tmpfs-tmp/");
    let t = Tree::new("22");
    for f in ["proc/self/mountinfo", "proc/meminfo"] {
        t.file(f, &std::fs::read(std::format!("{case}{f}")).unwrap());
    }
    // The capture of statvfs.json in the tree's `statvfs` format.
    t.file(
        host::STATVFS_FILE,
        b"/ 4096 6553344 2359040 1966080 1638400 8 ext4\n\
              /home/builder/src 4096 6553344 2359040 1966080 1638400 8 ext4\n\
              /tmp 4096 485674 31002 31002 485674 485601 tmpfs\n",
    );
    let out = render_at(t.path(), "/home/builder/src");
    has(&out, "tmp         /tmp: tmpfs on tmpfs");
    has(
        &out,
        "            size 1897 MiB  available 121 MiB  use 94%  inodes free 485601",
    );
    has(&out, "            tmpfs: counts against RAM");
    has(
        &out,
        "disk        /home/builder/src: ext4 on /dev/mmcblk0p2",
    );
    has(
        &out,
        "            size 25599 MiB  available 7680 MiB  use 69%  inodes free 8",
    );
    has(
        &out,
        "            inodes exhausted: 8 free, new files fail with ENOSPC",
    );
    assert_eq!(out.matches("tmpfs: counts").count(), 1);
    assert_eq!(out.matches("inodes exhausted").count(), 1);
    let out = render_at(t.path(), "/srv");
    has(&out, "disk        /srv: ext4 on /dev/mmcblk0p2");
    has(
        &out,
        "            size not available (no line for it in statvfs)",
    );
}

fn zram_tree(name: &str, swaps_row: &str, disksize: &str, mm_stat: &str) -> Tree {
    let t = Tree::new(name);
    t.file(
        "proc/swaps",
        std::format!(
            "Filename\tType\tSize\tUsed\tPriority\n{swaps_row}\n/swapfile file 1048572 0 -2\n"
        )
        .as_bytes(),
    )
    .file("sys/block/zram0/disksize", disksize.as_bytes())
    .file("sys/block/zram0/mm_stat", mm_stat.as_bytes())
    .file("sys/block/zram0/comp_algorithm", b"lzo [lz4] zstd\n");
    t
}

#[test]
fn zram_full_when_used_reaches_size_whatever_other_swap_is_free() {
    let t = zram_tree(
        "full",
        "/dev/zram0 partition 524284 524284 100",
        "536870912\n",
        "300000000 100000000 110000000 0 110000000 0 0\n",
    );
    let out = render_at(t.path(), "/");
    has(
        &out,
        "            /dev/zram0              partition        511       511   100  zram full",
    );
    has(
        &out,
        "            /swapfile               file            1023         0    -2",
    );
    has(
        &out,
        "            zram0   lz4             512     286          95       104         3.00",
    );
}

#[test]
fn zram_full_by_one_page_or_by_stored_data() {
    // One 4 KiB page short of the size: full.
    let t = zram_tree(
        "page",
        "/dev/zram0 partition 524284 524280 100",
        "536870912\n",
        "1000 500 4096\n",
    );
    assert!(render_at(t.path(), "/").contains("  zram full\n"));
    // Two pages short, but orig_data_size reached disksize: full.
    let t = zram_tree(
        "stored",
        "/dev/zram0 partition 524284 524276 100",
        "536870912\n",
        "536870912 100000000 110000000\n",
    );
    assert!(render_at(t.path(), "/").contains("  zram full\n"));
    // Two pages short and data below disksize: not full.
    let t = zram_tree(
        "notfull",
        "/dev/zram0 partition 524284 524276 100",
        "536870912\n",
        "1000 500 4096\n",
    );
    let out = render_at(t.path(), "/");
    assert!(!out.contains("zram full"), "{out}");
    has(
        &out,
        "            /dev/zram0              partition        511       511   100",
    );
}

#[test]
fn an_empty_tree_prints_every_line_as_not_available() {
    let t = Tree::new("empty");
    let out = render_at(t.path(), "/");
    let want = [
        "memory      not available (proc/meminfo: not found)",
        "swap        total unknown (no meminfo)",
        "swap dev    not available (proc/swaps: not found)",
        "zram        not available (sys/block: not found)",
        "tmp         /tmp: type unknown",
        "            size not available (no statvfs capture in the tree)",
        "disk        /: type unknown",
        "            size not available (no statvfs capture in the tree)",
        "            I/O: no block device (mount table unreadable)",
        "cgroup mem  no memory controller",
        "cgroup cpu  no CPU quota (no cpu controller)",
        "cores       online unknown  quota none  cpuset none  usable 1 (assumed)",
        "PSI memory  not available (proc/pressure/memory: not found)",
        "oom_kill    not available (proc/vmstat: not found)",
        "cpu temp    no CPU sensor (no thermal zone or hwmon of the CPU)",
        "cpu freq    no cpufreq",
    ];
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
}

#[test]
fn hostile_swap_names_and_garbage_rows() {
    let long = "/x".repeat(200);
    let t = Tree::new("hostile");
    let mut swaps = b"Filename Type Size Used Priority\n/a\\012b\\033[2J\xff file 10240 0 -1\n\
                          /bad file 1x 0 -1\n"
        .to_vec();
    swaps.extend_from_slice(std::format!("{long} file 0 0 -3\n").as_bytes());
    t.file("proc/swaps", &swaps)
        .file("sys/block/zram9/disksize", b"garbage\n");
    let out = render_at(t.path(), "/");
    has(
        &out,
        "            /a?b?[2J?               file              10         0    -1",
    );
    has(&out, "            line 3 does not parse");
    let tail = std::format!("            ...{}", &long[long.len() - 85..]);
    has(&out, &tail);
    has(&out, "            zram9   not available (does not parse)");
}

#[test]
fn boards_fit_one_screen() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/boards/");
    let out = render_at(&std::format!("{dir}rpi5-8g-bookworm"), "/");
    std::println!("{out}");
    has(&out, "cgroup mem  no memory controller");
    assert!(out.contains("            zram0   zstd  "), "{out}");
    let out = render_at(&std::format!("{dir}x86_64-vm-2c-24g"), "/");
    std::println!("{out}");
    has(&out, "            zram0   not initialised");
}

#[test]
fn long_paths_sources_and_types_stay_within_the_width() {
    let long = std::format!("/{}", "d".repeat(150));
    let t = Tree::new("wide");
    t.file(
        "proc/self/mountinfo",
        std::format!(
            "22 1 179:2 / / rw - fuse.a-very-long-filesystem-type {}/source rw\n",
            "s".repeat(120)
        )
        .as_bytes(),
    )
    .file(
        "proc/swaps",
        b"/dev/zram0 partition 1000 1000 100\n/swap\\040file partition 8 0 -1\n",
    );
    // render_at checks every line against MAX_COLUMNS.
    let out = render_at(t.path(), &long);
    let tail = &long[long.len() - 37..];
    has(
        &out,
        &std::format!(
            "disk        ...{tail}: ...stem-type on ...{}/source",
            "s".repeat(18)
        ),
    );
    // Full and without sys/block: "zram full" only.
    has(
        &out,
        "            /dev/zram0              partition          0         0   100  zram full",
    );
    has(
        &out,
        "            /swap file              partition          0         0    -1",
    );
}

#[test]
fn live_host_renders_without_failing() {
    let root = Root::open("/").unwrap();
    let mut buf = std::vec![0u8; SCRATCH_LEN];
    let opts = StatusOpts {
        live: true,
        disk_path: "/",
        tmp_path: "/tmp",
        memlock: Some(crate::tick::footprint::Outlook::of_self(false, &mut buf)),
    };
    let mut out = Out(String::new());
    let Ok(()) = render(&root, &opts, &mut buf, &mut out);
    std::println!("{}", out.0);
    assert!(out.0.contains("  affinity "), "{}", out.0);
    // Last: what a recording started here would do about locking.
    let last = out.0.lines().last().unwrap_or_default();
    assert!(last.starts_with("memlock     record and run "), "{}", out.0);
    assert!(out.0.lines().all(|l| l.chars().count() <= MAX_COLUMNS));
}

#[test]
fn padding_helpers() {
    assert_eq!(
        (digits(0), digits(9), digits(10), digits(u64::MAX)),
        (1, 1, 2, 20)
    );
    assert_eq!((centi_len(5), centi_len(333), centi_len(12345)), (4, 4, 6));
    let mut o = Out(String::new());
    let Ok(n) = show(&mut o, b"abcdefghij", 6);
    assert_eq!((o.0.as_str(), n), ("...hij", 6));
    let mut o = Out(String::new());
    let Ok(n) = show(&mut o, "é\tz".as_bytes(), 6);
    assert_eq!((o.0.as_str(), n), ("é?z", 3));
    let mut o = Out(String::new());
    let Ok(()) = right_int(&mut o, i64::MIN, 3);
    assert_eq!(o.0, "-9223372036854775808");
}

// ---- status --json ----

fn json_at(dir: &str) -> String {
    let root = Root::open(dir).unwrap();
    let opts = StatusOpts {
        live: false,
        disk_path: "/",
        tmp_path: "/tmp",
        memlock: None,
    };
    let mut buf = std::vec![0u8; SCRATCH_LEN];
    let mut out = Out(String::new());
    let Ok(()) = render_json(&root, &opts, &mut buf, &mut out);
    out.0
}

/// Each of [`JSON_KEYS`] once at the top level, in order: a key at depth 1
/// is `"key":` right after `{` or `,` outside any nested object or array.
fn top_level_keys(json: &str) -> Vec<String> {
    let (mut depth, mut in_str, mut keys) = (0, false, Vec::new());
    let b = json.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if in_str => i += 1,
            b'"' if !in_str => {
                in_str = true;
                let prev = json[..i].trim_end().bytes().last();
                if depth == 1 && matches!(prev, Some(b'{' | b',')) {
                    let end = json[i + 1..].find('"').unwrap() + i + 1;
                    keys.push(String::from(&json[i + 1..end]));
                }
            }
            b'"' => in_str = false,
            b'{' | b'[' if !in_str => depth += 1,
            b'}' | b']' if !in_str => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    keys
}

#[test]
fn json_has_every_key_in_order_on_a_full_and_an_empty_tree() {
    let full = json_at(&std::format!(
        "{FIX}06-cgroupv2-container-cpu-max-unlimited"
    ));
    assert_eq!(top_level_keys(&full), JSON_KEYS, "{full}");
    assert!(
        full.starts_with("{\"mem_total_mib\":") && full.ends_with("}\n"),
        "{full}"
    );
    let empty = Tree::new("json-empty");
    let none = json_at(empty.path());
    assert_eq!(top_level_keys(&none), JSON_KEYS, "{none}");
    // Nothing to read: every figure is null (zram: no sys/block).
    for k in [
        "mem_total_mib",
        "mem_usable_mib",
        "mem_limited_by",
        "swap_devices",
        "zram_devices",
        "cgroup_memory",
        "psi_memory_some",
        "swap_io_mib",
        "cpu_temp_c",
        "cpu_freq_pct",
        "throttled",
    ] {
        assert!(none.contains(&std::format!("\"{k}\":null")), "{k}: {none}");
    }
    assert!(none.contains("\"size_mib\":null"), "{none}");
}

#[test]
fn json_zram_and_swap_rows_carry_the_screens_figures() {
    let dir = std::format!("{FIX}09-zram-mm-stat-field-counts/d-uninitialized");
    let out = json_at(&dir);
    assert!(
        out.contains(
            "{\"device\":\"zram0\",\"initialised\":false,\"algorithm\":null,\"disksize_mib\":null"
        ),
        "{out}"
    );
    let swaps = Tree::new("json-swaps");
    swaps.file(
        "proc/swaps",
        b"Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 1048572 1048572 100\n/swap\\040file file 2048 0 -2\n",
    );
    let out = json_at(swaps.path());
    assert!(out.contains("{\"name\":\"/dev/zram0\",\"type\":\"partition\",\"size_mib\":1023,\"used_mib\":1023,\"priority\":100,\"zram\":true,\"zram_full\":true}"), "{out}");
    assert!(out.contains("{\"name\":\"/swap file\",\"type\":\"file\",\"size_mib\":2,\"used_mib\":0,\"priority\":-2,\"zram\":false,\"zram_full\":null}"), "{out}");
}

/// Issue 25's acceptance: in a 1 GiB cgroup holding 700 MiB of clean
/// cache and allowed no swap, the cgroup's available memory (~1 GiB, not
/// 304 MiB) stands under the host's, named, said to bind; the swap it may
/// not use is said too.
#[test]
fn fixture_46_a_v1_docker_memsw_equal() {
    let out = fixture("46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal");
    has_lines(
        &out,
        "memory      total 24105 MiB  available 22999 MiB  used 4%\n            cgroup ...4a5f60718293a4b5c6d: available 1004 MiB of 1024 (usage 719, inactive file 700)\n            usable 1004 MiB: the cgroup binds\nswap        total 0 MiB  used 0 MiB\n",
    );
    has_lines(
        &out,
        "cgroup mem  limit 1024 MiB  (v1)\n            limit set at /docker/3f9d2c7a1b0e4f6d8c5a9b2e1f0d3c4b5a6978e1d2c3b4a5f60718293a4b5c6d\n            swap: none allowed (memory.memsw.limit_in_bytes = the limit)\n",
    );
}

#[test]
fn fixture_46_b_v2_docker_swap_max_0() {
    let out = fixture("46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0");
    has_lines(
        &out,
        "            cgroup /: available 1004 MiB of 1024 (usage 719, inactive file 700)\n            usable 1004 MiB: the cgroup binds\n",
    );
    has(&out, "            swap: none allowed (memory.swap.max 0)");
    // A host limit tighter than the cgroup's: MemAvailable binds, and the
    // cgroup's figures are still shown.
    let t = Tree::new("46b-host-binds");
    let src = std::format!("{FIX}46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0");
    for f in [
        "proc/self/cgroup",
        "proc/self/mountinfo",
        "sys/fs/cgroup/memory.max",
        "sys/fs/cgroup/memory.current",
        "sys/fs/cgroup/memory.stat",
    ] {
        t.file(f, &std::fs::read(std::format!("{src}/{f}")).unwrap());
    }
    t.file(
        "proc/meminfo",
        b"MemTotal: 2097152 kB\nMemFree: 102400 kB\nMemAvailable: 512000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
    );
    let out = render_at(t.path(), "/");
    has_lines(
        &out,
        "            cgroup /: available 1004 MiB of 1024 (usage 719, inactive file 700)\n            usable 500 MiB: MemAvailable binds\n",
    );
    has(&out, "            swap: not limited by the cgroup");
}

/// The JSON of fixture 46: usable memory and what binds beside the host's
/// figures, and the cgroup's limit, usage, inactive file cache, available
/// memory and swap allowance.
#[test]
fn json_of_fixture_46_names_the_binding_cgroup() {
    let j = json_at(&std::format!(
        "{FIX}46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0"
    ));
    assert!(
        j.contains("\"mem_available_mib\":12573,\"mem_used_pct\":21,\"mem_available_estimated\":false,\"mem_usable_mib\":1004,\"mem_limited_by\":\"cgroup\","),
        "{j}"
    );
    assert!(
        j.contains("\"cgroup_memory\":{\"version\":\"v2\",\"limit_mib\":1024,\"usage_mib\":719,\"inactive_file_mib\":700,\"available_mib\":1004,\"binds\":true,\"swap_allowance_mib\":0,\"limit_path\":\"/\"}"),
        "{j}"
    );
    // Fixture 06 has no memory.stat: its inactive file cache is unknown.
    let j = json_at(&std::format!(
        "{FIX}06-cgroupv2-container-cpu-max-unlimited"
    ));
    assert!(
        j.contains("\"inactive_file_mib\":null,\"available_mib\":4,\"binds\":true,\"swap_allowance_mib\":2048,"),
        "{j}"
    );
}
