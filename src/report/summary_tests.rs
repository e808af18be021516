//! Unit tests of `report::summary` (src/report/summary.rs).

extern crate std;
use super::*;
use crate::report::csvread::CsvRows;

fn summarize(data: &[u8], near: Option<u64>, low: Option<u64>) -> std::string::String {
    let mut s = Summary::new(near, low);
    let mut r = CsvRows::new();
    r.feed(data, &mut |row| s.observe(row)).unwrap();
    r.feed(&[], &mut |row| s.observe(row)).unwrap();
    s.skipped = r.skipped;
    let mut t = Text::new();
    s.render(&mut t).unwrap();
    std::string::String::from(t.as_str())
}

const SAMPLE: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/toolchain-cargo-build.csv"
));

#[test]
fn toolchain_sample_summary_whole() {
    let got = summarize(SAMPLE, None, None);
    let want = "=== resource-monitor summary ===
samples=18  duration=0m18s

PEAK MEMORY USE:
  689 MB used  (only 23416 MB available)  at 2026-11-30T01:03:09Z
  stage=build  context= Compiling syn v2.0.119

MIN MEMORY AVAILABLE (closest to OOM):
  23416 MB free  at 2026-11-30T01:03:09Z
  stage=build  context= Compiling syn v2.0.119

PEAK SWAP USE: 0 MB  at -  (stage=-)  [no swapping — good]

MIN DISK FREE (build fs):
  76 GB free  at 2026-11-30T01:03:05Z
  stage=build  context=

PEAK LOAD: 0.84  at 2026-11-30T01:03:18Z (stage=build)   PEAK CPU: 100%
samples below 4096 MB free RAM (near-OOM): 0
samples below 20 GB free disk: 0
kernel OOM-kill events: unknown (no oom_kill counter: kernel before 4.13 or a 14-column CSV)
thresholds: near-OOM < 4096 MiB (toolchain default), low-disk < 20480 MiB (toolchain default)
";
    assert_eq!(got, want);
}

#[test]
fn zeros_count_as_near_oom_and_low_disk() {
    let data = b"epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context
100,1970-01-01T00:01:40Z,0,1.00,50,3000,900,76,0,1,97,1,a,\"x\"
115,1970-01-01T00:01:55Z,15,1.00,50,3900,0,100,200,0,100,1,b,\"y\"
";
    let got = summarize(data, None, None);
    // RAM 3900 MB < 8192: threshold 3900/8 = 487; disk total 1024 ×
    // 100 / 3 = 34133 MB: 3413 MB, "below 4 GB" (rounded up) in the
    // compatible line.
    assert!(
        got.contains("samples below 487 MB free RAM (near-OOM): 1\n"),
        "{got}"
    );
    assert!(got.contains("samples below 4 GB free disk: 2\n"), "{got}");
    assert!(
        got.contains("low-disk < 3413 MiB (default scaled to 1/10 of 34133 MiB disk)\n"),
        "{got}"
    );
    assert!(got.contains("PEAK SWAP USE: 200 MB  at 1970-01-01T00:01:55Z  (stage=b)\n"));
    assert!(got.contains("MIN MEMORY AVAILABLE (closest to OOM):\n  0 MB free  at 1970-01-01T00:01:55Z\n  stage=b  context=y\n"));
    assert!(
        got.contains("(default scaled to 1/8 of 3900 MiB RAM)"),
        "{got}"
    );
    let given = summarize(data, Some(1000), Some(1));
    assert!(given.contains("samples below 1000 MB free RAM (near-OOM): 2\n"));
    assert!(given.contains("samples below 1 GB free disk: 1\n"));
    assert!(given.contains("near-OOM < 1000 MiB (given)"));
    assert!(given.contains("low-disk < 1024 MiB (given)"), "{given}");
    let mut sum = Summary::new(None, None);
    let mut r = CsvRows::new();
    r.feed(data, &mut |row| sum.observe(row)).unwrap();
    sum.run = Some((
        String::try_from("make -j2").unwrap(),
        Usage {
            wall_ms: 1500,
            user_ms: 2000,
            sys_ms: 100,
            max_rss_kib: 2048,
            counts: crate::followed::rusage::Counts::from_values([1, 2, 3, 4, 5, 6]),
            end: crate::followed::rusage::End::Signaled(9),
        },
    ));
    let mut j = Text::new();
    sum.render_json(&mut j).unwrap();
    assert!(j.contains(",\"near_oom\":{\"below_mb\":487,\"from\":\"scaled\",\"scaled_from_ram_mb\":3900,\"scaled_from_cgroup_limit_mb\":null,\"samples\":1}"), "{j}");
    assert!(j.contains("\"interrupted\":null,\"run\":{\"command\":\"make -j2\",\"wall_ms\":1500,\"user_ms\":2000,\"sys_ms\":100,\"cores_centi\":140,\"max_rss_kib\":2048,\"majflt\":1,\"minflt\":2,\"nvcsw\":3,\"nivcsw\":4,\"inblock\":5,\"oublock\":6,\"exit\":null,\"signal\":\"KILL\"},\"jobserver\":null,\"memory_lock\":null}\n"), "{j}");
    let mut t = Text::new();
    sum.render(&mut t).unwrap();
    assert!(!t.contains("interrupted"), "{t}");
    // Interrupted: the RUN block says which figures are partial, right
    // after how the command ended, and the JSON says it was.
    sum.partial = crate::followed::rusage::Partial {
        interrupt: Some(crate::followed::rusage::Interrupt {
            signal: 2,
            after_ms: 1200,
        }),
        unreaped: 2,
    };
    let mut t = Text::new();
    sum.render(&mut t).unwrap();
    assert!(t.contains("  killed by signal KILL (9), exit status 137\n  interrupted: SIGINT after 1.200 s: wall is to the interrupt; CPU and max RSS cover only the processes that were reaped (2 were not): lower bounds\n"), "{t}");
    let mut j = Text::new();
    sum.render_json(&mut j).unwrap();
    assert!(
        j.contains(",\"interrupted\":{\"signal\":\"INT\",\"after_ms\":1200},\"run\":{"),
        "{j}"
    );
}

#[test]
fn a_recording_says_whether_its_memory_was_locked() {
    use crate::tick::footprint::{Lock, NotLocked};
    let mut sum = Summary::new(None, None);
    let mut r = CsvRows::new();
    r.feed(SAMPLE, &mut |row| sum.observe(row)).unwrap();
    let plain = summarize(SAMPLE, None, None);
    let render = |s: &Summary| {
        let (mut t, mut j) = (Text::new(), Text::new());
        s.render(&mut t).unwrap();
        s.render_json(&mut j).unwrap();
        (
            std::string::String::from(t.as_str()),
            std::string::String::from(j.as_str()),
        )
    };
    // summarize of a CSV: no line, null.
    assert!(!plain.contains("headroom's memory"));
    assert!(render(&sum).1.ends_with(",\"memory_lock\":null}\n"));
    sum.memory_lock = Some(Lock::Locked);
    let (t, j) = render(&sum);
    // One line more, at the end of headroom's own sections; the
    // toolchain's headings above it are untouched.
    assert_eq!(
        t,
        std::format!("{plain}\nheadroom's memory: locked in RAM (mlockall)\n")
    );
    assert!(
        j.ends_with(",\"memory_lock\":{\"locked\":true,\"reason\":null}}\n"),
        "{j}"
    );
    sum.memory_lock = Some(Lock::NotLocked(NotLocked::Limit {
        limit_kib: 64,
        need_kib: 1800,
    }));
    let (t, j) = render(&sum);
    assert!(t.ends_with("\nheadroom's memory: not locked: RLIMIT_MEMLOCK is 64 KiB, locking needs 1800 KiB (ulimit -l, or CAP_IPC_LOCK)\n"), "{t}");
    assert!(j.ends_with(",\"memory_lock\":{\"locked\":false,\"reason\":\"RLIMIT_MEMLOCK is 64 KiB, locking needs 1800 KiB (ulimit -l, or CAP_IPC_LOCK)\"}}\n"), "{j}");
}

#[test]
fn unreadable_sources_are_not_oom_or_low_disk() {
    let mut data = std::format!("{}\n", crate::tick::row::header_27());
    data.push_str("100,1970-01-01T00:01:40Z,0,0,0,0,0,0,0,0,0,0,?,\"\",,,,,,,,,,,,,\n");
    data.push_str("101,1970-01-01T00:01:41Z,1,0,0,0,0,0,0,0,0,0,?,\"\",,,,,,,,,,,,,\n");
    let got = summarize(data.as_bytes(), None, None);
    assert!(
        got.contains("samples below 4096 MB free RAM (near-OOM): 0\n"),
        "{got}"
    );
    assert!(got.contains("samples below 20 GB free disk: 0\n"), "{got}");
    assert!(got.contains("MIN MEMORY AVAILABLE (closest to OOM):\n  unknown: /proc/meminfo could not be read on any sample\n"), "{got}");
    assert!(
        got.contains("MIN DISK FREE (build fs):\n  unknown"),
        "{got}"
    );
    assert!(
        got.contains("PEAK LOAD: 0  at 1970-01-01T00:01:40Z"),
        "{got}"
    );
}

#[test]
fn empty_csv_prints_samples_zero_and_no_peaks() {
    let got = summarize(crate::tick::row::HEADER_FULL.as_bytes(), None, None);
    assert_eq!(
        got,
        "=== resource-monitor summary ===\nsamples=0  duration=0m00s\n"
    );
}

#[test]
fn oom_rows_and_own_sections() {
    let mut data = std::format!("{}\n", crate::tick::row::header_27());
    data.push_str("100,1970-01-01T00:01:40Z,0,1.00,50,3000,900,76,0,1,97,1,a,\"x\",0,0,0,500,10,1100,0,,,700,cc1plus,,\n");
    data.push_str("115,1970-01-01T00:01:55Z,15,1.00,50,3000,900,76,0,1,97,1,b,\"[ 41%] Building CXX\",0,100,40,400,20,1000,2,300,0.50,800,cc1plus,,\n");
    let got = summarize(data.as_bytes(), None, None);
    assert!(got.contains("kernel OOM-kill events: 2\n"), "{got}");
    assert!(got.contains("OOM KILLS (rows where the host-wide kernel counter rose: any process on the host):\n  +2 at 1970-01-01T00:01:55Z  stage=b  context=[ 41%] Building CXX\n"), "{got}");
    assert!(got.contains("\nPEAK COMPILER RSS: 800 MiB (cc1plus)  at 1970-01-01T00:01:55Z  [host-wide: every compiler on the host; no build followed]\n"), "{got}");
    assert!(!got.contains("this build"), "{got}");
    // Stored over RAM used is the RAM saving (issue 12: it was called
    // "ratio", as the status table's stored / compressed is).
    assert!(
        got.contains("ZRAM: peak 100 MiB stored in 40 MiB of RAM (RAM saving 2.50:1)  at "),
        "{got}"
    );
    assert!(!got.contains("(ratio "), "{got}");
    assert!(got.contains("/TMP: min 400 MiB available (20% used)"));
    assert!(got.contains("CGROUP HEADROOM: min 300 MiB left"));
}

/// Another process named cc1plus holds 300 MiB outside; the build's own
/// cc1 is at most 50: the build's is the peak, the host's is said to
/// be someone else's, and a plan sizes from the build's.
#[test]
fn the_builds_compilers_are_not_the_hosts() {
    let mut data = std::format!("{}\n", crate::tick::row::header_27());
    data.push_str("100,1970-01-01T00:01:40Z,0,1.00,50,3000,900,76,0,1,97,2,a,\"cc x.c\",0,,,500,10,1100,0,,,300,cc1plus,48,cc1\n");
    data.push_str("101,1970-01-01T00:01:41Z,1,1.00,50,3000,900,76,0,1,97,2,b,\"cc y.c\",0,,,500,10,1100,1,,,301,cc1plus,50,cc1\n");
    data.push_str("102,1970-01-01T00:01:42Z,2,1.00,50,3000,900,76,0,1,97,1,c,\"cc z.c\",0,,,500,10,1100,1,,,301,cc1plus,,\n");
    let mut sum = Summary::new(None, None);
    CsvRows::new()
        .feed(data.as_bytes(), &mut |r| sum.observe(r))
        .unwrap();
    assert_eq!(sum.sizing_peak(), Some((50, PeakOf::Build)));
    let mut t = Text::new();
    sum.render(&mut t).unwrap();
    assert!(t.contains("\nPEAK COMPILER RSS: 50 MiB (cc1)  at 1970-01-01T00:01:41Z  [this build]\n  stage=b  context=cc y.c\n"), "{t}");
    assert!(
        t.contains("\nLARGEST COMPILER ON THE HOST (not this build's): 301 MiB (cc1plus)"),
        "{t}"
    );
    // From a CSV, how the build was followed is not known: no line.
    assert!(!t.contains("OOM kills in this build"), "{t}");

    // Recorded live as a tree with one estimated kill, then as a cgroup.
    let mut row = Row::empty(103);
    row.build_oom_kills = Some(1);
    sum.build = Some(BuildScope::Tree("not permitted to make a cgroup"));
    sum.observe(&row);
    let mut t = Text::new();
    sum.render(&mut t).unwrap();
    assert!(t.contains("kernel OOM-kill events: 1\nOOM kills in this build: 1 (estimated from its processes: its compilers that vanished while the host counter rose, which other processes' kills can inflate; no cgroup of its own: not permitted to make a cgroup)\n"), "{t}");
    sum.build = Some(BuildScope::Cgroup(crate::kernel::cgroup::Version::V1));
    sum.build_oom_final(Some(3));
    sum.build_oom_final(None);
    sum.build_peak_charge_mb = Some(70);
    row.build_anon_mb = Some(40);
    sum.observe(&row);
    sum.run = Some((
        String::try_from("make").unwrap(),
        Usage {
            wall_ms: 1,
            user_ms: 1,
            sys_ms: 1,
            max_rss_kib: 51 * 1024,
            counts: crate::followed::rusage::Counts::default(),
            end: crate::followed::rusage::End::Exited(0),
        },
    ));
    let mut t = Text::new();
    sum.render(&mut t).unwrap();
    assert!(
        t.contains("OOM kills in this build: 3 (its cgroup's memory.oom_control oom_kill)\n"),
        "{t}"
    );
    assert!(t.contains("  max RSS 51 MiB (largest single process, ru_maxrss)\n  page faults: major 0 (requiring I/O)  minor 0\n  context switches: voluntary 0  involuntary 0\n  file system inputs 0  outputs 0 (512-byte blocks)\n  exit 0\n  build cgroup peak 70 MiB (all its processes together, memory.max_usage_in_bytes; includes the page cache it caused)\n  build anon memory: largest sampled 40 MiB (memory.stat total_rss, once per row)\n"), "{t}");
    let mut j = Text::new();
    sum.render_json(&mut j).unwrap();
    assert!(j.contains(",\"build_peak_compiler_rss\":{\"rss_mb\":50,\"comm\":\"cc1\",\"iso\":\"1970-01-01T00:01:41Z\""), "{j}");
    assert!(j.contains(",\"build\":{\"scope\":\"cgroup\",\"oom_kills\":3,\"oom_kills_counted\":\"its cgroup's memory.oom_control oom_kill\",\"no_cgroup_because\":null,\"cgroup_peak_mb\":70,\"anon_peak_mb\":40}"), "{j}");
}

/// Without a build, the host's compilers are the only figure: a plan
/// sizes from them, and says whose they are.
#[test]
fn without_a_build_the_host_peak_is_said_to_be_the_hosts() {
    let mut data = std::format!("{}\n", crate::tick::row::header_27());
    data.push_str("100,1970-01-01T00:01:40Z,0,1.00,50,3000,900,76,0,1,97,2,a,\"x\",0,,,500,10,1100,0,,,300,cc1plus,,\n");
    let mut sum = Summary::new(None, None);
    CsvRows::new()
        .feed(data.as_bytes(), &mut |r| sum.observe(r))
        .unwrap();
    assert_eq!(sum.sizing_peak(), Some((300, PeakOf::Host)));
    // A build followed whose compilers never ran: no peak to size from.
    sum.build = Some(BuildScope::Tree(""));
    assert_eq!(sum.sizing_peak(), None);
}

/// Issue 12: on a disk under 1 GiB the low-disk threshold fell back to
/// 20 GB (whole-GB arithmetic gave a 0 GB disk). A full CSV of a
/// 512 MiB tmpfs build dir: scaled from disk_avail_mb.
#[test]
fn small_disk_full_csv_scales_in_mib() {
    let mut data = std::format!("{}\n", crate::tick::row::header_27());
    for (i, (mb, pct)) in [(460, 10), (100, 80), (50, 90), (0, 100)]
        .iter()
        .enumerate()
    {
        data.push_str(&std::format!(
            "{},1970-01-01T00:01:4{i}Z,{i},0.10,5,300,3000,9,0,0,{pct},0,b,\"x\",0,0,0,400,10,{mb},0,,,,,,\n",
            100 + i
        ));
    }
    let got = summarize(data.as_bytes(), None, None);
    // Total 460 × 100 / 90 = 511 MiB; 1/10: 51 MiB. 50 and 0 are below.
    assert!(got.contains("samples below 1 GB free disk: 2\n"), "{got}");
    assert!(
        got.contains(", low-disk < 51 MiB (default scaled to 1/10 of 511 MiB disk)\n"),
        "{got}"
    );
    let mut s = Summary::new(None, None);
    let mut r = CsvRows::new();
    r.feed(data.as_bytes(), &mut |row| s.observe(row)).unwrap();
    assert_eq!(s.low_disk(), Threshold::Scaled(51, 511));
    let mut j = Text::new();
    s.render_json(&mut j).unwrap();
    assert!(
        j.contains(",\"low_disk\":{\"below_mb\":51,\"below_gb\":1,\"from\":\"scaled\",\"scaled_from_disk_mb\":511,\"samples\":2}"),
        "{j}"
    );
    // --low-disk-gb still counts in whole GiB, exactly as before.
    let given = summarize(data.as_bytes(), None, Some(1));
    assert!(
        given.contains("samples below 1 GB free disk: 4\n"),
        "{given}"
    );
    assert!(given.contains("low-disk < 1024 MiB (given)"), "{given}");
}

/// The same small disk in a 14-column (compat) CSV: only whole GiB,
/// so `0` free is "under 1 GiB" and the total is estimated from 1 GiB:
/// still a scaled threshold, not the 20 GB default. A 4 GB card with
/// 2 GB free scales as before, now to the MiB.
#[test]
fn small_disk_compat_csv_scales_from_whole_gib() {
    let head = "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context\n";
    let mut tmpfs = std::string::String::from(head);
    tmpfs.push_str("100,1970-01-01T00:01:40Z,0,0.10,5,300,3000,9,0,0,10,0,b,\"x\"\n");
    tmpfs.push_str("101,1970-01-01T00:01:41Z,1,0.10,5,300,3000,9,0,0,95,0,b,\"x\"\n");
    let got = summarize(tmpfs.as_bytes(), None, None);
    // 1024 × 100 / 90 = 1137 MiB at most; 1/10: 113 MiB.
    assert!(got.contains("samples below 1 GB free disk: 2\n"), "{got}");
    assert!(
        got.contains("low-disk < 113 MiB (default scaled to 1/10 of 1137 MiB disk)\n"),
        "{got}"
    );
    let mut card = std::string::String::from(head);
    card.push_str("100,1970-01-01T00:01:40Z,0,0.10,5,300,3000,9,0,2,50,0,b,\"x\"\n");
    card.push_str("101,1970-01-01T00:01:41Z,1,0.10,5,300,3000,9,0,0,99,0,b,\"x\"\n");
    let got = summarize(card.as_bytes(), None, None);
    // 2048 × 100 / 50 = 4096 MiB; 1/10: 409 MiB.
    assert!(got.contains("samples below 1 GB free disk: 1\n"), "{got}");
    assert!(
        got.contains("low-disk < 409 MiB (default scaled to 1/10 of 4096 MiB disk)\n"),
        "{got}"
    );
}

// Issue 25: the memory lines carry the figure that binds, host or cgroup.
// tests/data/gen-summary-csvs.py writes the three CSVs.

const HOST_BOUND: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/host-bound.csv"
));
const CGROUP_LOOSE: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/cgroup-loose.csv"
));
const CGROUP_1G: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/cgroup-1g.csv"
));

/// The summary text up to headroom's own sections: the toolchain's lines,
/// the thresholds line and what follows it in the counts block.
fn compat_part(text: &str) -> &str {
    let end = text.find("\nZRAM:").unwrap_or(text.len());
    &text[..end]
}

/// Without a cgroup that binds, every line is what headroom wrote before
/// issue 25 (the golden was written by that version).
#[test]
fn no_binding_cgroup_is_byte_for_byte_as_before() {
    let golden = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/host-bound.summary.txt"
    ));
    let got = summarize(HOST_BOUND, None, None);
    assert_eq!(got, golden);
    // The same host inside an 8 GiB cgroup that never has less room than
    // MemAvailable: the toolchain's lines are the host's, unchanged; only
    // CGROUP HEADROOM (headroom's own) tells of the cgroup.
    let loose = summarize(CGROUP_LOOSE, None, None);
    assert_eq!(compat_part(&loose), compat_part(golden));
    assert!(!loose.contains("memory that binds"), "{loose}");
    assert!(
        loose.contains("\nCGROUP HEADROOM: min 2210 MiB available under the 8192 MiB memory limit (its inactive file cache counted as available)  at 2026-11-30T00:53:45Z\n"),
        "{loose}"
    );
    // And the 14 compatible columns of the binding CSV alone (no cgroup
    // columns at all) are the host's.
    let compat: std::string::String = std::str::from_utf8(CGROUP_1G)
        .unwrap()
        .lines()
        .map(|l| {
            let f: std::vec::Vec<&str> = l.split(',').take(14).collect();
            std::format!("{}\n", f.join(","))
        })
        .collect();
    let t = summarize(compat.as_bytes(), None, None);
    assert!(
        t.contains(
            "\nMIN MEMORY AVAILABLE (closest to OOM):\n  18210 MB free  at 2026-11-30T00:53:45Z\n"
        ),
        "{t}"
    );
}

/// A 1 GiB cgroup on a 22 GiB host (the container): the lines keep
/// their exact prefixes and carry the cgroup's figures, said to be its.
#[test]
fn a_binding_cgroup_carries_its_figures_with_the_compatible_prefixes() {
    let got = summarize(CGROUP_1G, None, None);
    let want = "\nPEAK MEMORY USE:
  947 MB used  (only 77 MB available)  at 2026-11-30T00:53:45Z  (the cgroup's, limit 1024 MB; host 3790 MB used, 18210 MB available)
  stage=link  context=[ 90%] Linking CXX executable app

MIN MEMORY AVAILABLE (closest to OOM):
  77 MB free  at 2026-11-30T00:53:45Z  (the cgroup's, limit 1024 MB; host 18210 MB free)
  stage=link  context=[ 90%] Linking CXX executable app
";
    assert!(got.contains(want), "{got}");
    // What scripts grep still matches, and reads the cgroup's number.
    let line = got
        .lines()
        .skip_while(|l| !l.starts_with("MIN MEMORY AVAILABLE"))
        .nth(1)
        .unwrap();
    assert!(
        line.starts_with("  77 MB free  at 2026-11-30T00:53:45Z"),
        "{line}"
    );
    assert_eq!(line.split_whitespace().next(), Some("77"));
    // 1/8 of the 1024 MiB limit: rows at 112 and 77 MiB are near OOM.
    assert!(
        got.contains("\nsamples below 128 MB free RAM (near-OOM): 2\n"),
        "{got}"
    );
    assert!(
        got.contains("thresholds: near-OOM < 128 MiB (default scaled to 1/8 of 1024 MiB cgroup limit), low-disk"),
        "{got}"
    );
    assert!(got.contains("\nmemory that binds: the cgroup's available memory (below MemAvailable) in 10 of 10 samples\n"), "{got}");
    assert!(
        got.contains("\nCGROUP HEADROOM: min 77 MiB available under the 1024 MiB memory limit (its inactive file cache counted as available)  at 2026-11-30T00:53:45Z\n"),
        "{got}"
    );
    // A given threshold is kept, and counts the cgroup's figures (449,
    // 249, 112, 77, 174 and 474 MiB).
    let given = summarize(CGROUP_1G, Some(500), None);
    assert!(
        given.contains("samples below 500 MB free RAM (near-OOM): 6\n"),
        "{given}"
    );
    assert!(given.contains("near-OOM < 500 MiB (given)"), "{given}");
}

#[test]
fn the_near_oom_default_scales_to_the_cgroups_limit() {
    let scaled = |used, avail, cg: Option<u64>, limit: Option<u64>| {
        let mut r = Row::empty(1);
        (r.mem_used_mb, r.mem_avail_mb) = (used, avail);
        (r.ext.cg_mem_avail_mb, r.ext.cg_mem_limit_mb) = (cg, limit);
        let mut s = Summary::new(None, None);
        s.observe(&r);
        s.near_oom()
    };
    assert_eq!(
        scaled(3000, 21000, Some(700), Some(1024)),
        Threshold::ScaledToCgroup(128, 1024)
    );
    assert_eq!(
        scaled(3000, 21000, Some(5000), Some(6144)),
        Threshold::ScaledToCgroup(768, 6144)
    );
    // A cgroup of twice the default or more: the default, as a large host.
    assert_eq!(
        scaled(3000, 21000, Some(5000), Some(8192)),
        Threshold::Default(4096)
    );
    // A limit above RAM: the host's RAM scales it, as before.
    assert_eq!(
        scaled(300, 3500, Some(7000), Some(8000)),
        Threshold::Scaled(475, 3800)
    );
    // No limit recorded (a CSV before cg_mem_limit_mb): RAM alone.
    assert_eq!(
        scaled(3000, 21000, Some(700), None),
        Threshold::Default(4096)
    );
    let t = Threshold::ScaledToCgroup(128, 1024);
    assert_eq!(
        (
            t.value(),
            t.source(),
            t.scaled_from(),
            t.scaled_from_cgroup()
        ),
        (128, "scaled", None, Some(1024))
    );
}

/// A CSV of 37 columns (before cg_mem_limit_mb; cg_mem_avail_mb then meant
/// limit − usage): the cgroup's available still binds; its use and size
/// are unknown, so used stays the host's and the threshold scales to RAM.
#[test]
fn a_37_column_csv_still_summarizes() {
    let old: std::string::String = std::str::from_utf8(CGROUP_1G)
        .unwrap()
        .lines()
        .map(|l| {
            let (head, _) = l.rsplit_once(',').unwrap();
            std::format!("{head}\n")
        })
        .collect();
    assert_eq!(old.lines().next().unwrap().split(',').count(), 37);
    let got = summarize(old.as_bytes(), None, None);
    assert!(got.contains("\nPEAK MEMORY USE:\n  3790 MB used  (only 77 MB available)  at 2026-11-30T00:53:45Z  (used: the host's; available: the cgroup's, limit not in this CSV; host 18210 MB available)\n"), "{got}");
    assert!(got.contains("\nMIN MEMORY AVAILABLE (closest to OOM):\n  77 MB free  at 2026-11-30T00:53:45Z  (the cgroup's, limit not in this CSV; host 18210 MB free)\n"), "{got}");
    // 22 GiB of RAM: the toolchain's default, and every row is below it.
    assert!(
        got.contains("\nsamples below 4096 MB free RAM (near-OOM): 10\n"),
        "{got}"
    );
    assert!(
        got.contains("thresholds: near-OOM < 4096 MiB (toolchain default)"),
        "{got}"
    );
    assert!(
        got.contains(
            "\nCGROUP HEADROOM: min 77 MiB left under the memory limit  at 2026-11-30T00:53:45Z\n"
        ),
        "{got}"
    );
    let mut s = Summary::new(None, None);
    CsvRows::new()
        .feed(old.as_bytes(), &mut |r| s.observe(r))
        .unwrap();
    let mut j = Text::new();
    s.render_json(&mut j).unwrap();
    assert!(j.contains(",\"peak_mem\":{\"mem_used_mb\":3790,\"mem_avail_mb\":77,\"bound_by\":\"cgroup\",\"cg_mem_limit_mb\":null,\"host_mem_used_mb\":3790,\"host_mem_avail_mb\":18210,\"iso\""), "{j}");
}

/// The cgroup binds in some rows and the host in others: each line takes
/// the row with the extreme binding figure, and names what bound there.
#[test]
fn host_and_cgroup_may_take_turns() {
    let mut s = Summary::new(None, None);
    // (host used, host avail, cgroup avail) on a 4000 MiB host in a 2 GiB cgroup.
    for (i, (used, avail, cg)) in [(1000, 3000, 1500), (3800, 200, 300), (2000, 2000, 400)]
        .into_iter()
        .enumerate()
    {
        let mut r = Row::empty(100 + i as u64);
        (r.mem_used_mb, r.mem_avail_mb) = (used, avail);
        (r.ext.cg_mem_avail_mb, r.ext.cg_mem_limit_mb) = (Some(cg), Some(2048));
        s.observe(&r);
    }
    let mut t = Text::new();
    s.render(&mut t).unwrap();
    // Row 2: the host binds (200 < 300); its use, 3800 MB, is the peak.
    assert!(
        t.contains(
            "\nPEAK MEMORY USE:\n  3800 MB used  (only 200 MB available)  at 1970-01-01T00:01:41Z\n"
        ),
        "{t}"
    );
    assert!(
        t.contains(
            "\nMIN MEMORY AVAILABLE (closest to OOM):\n  200 MB free  at 1970-01-01T00:01:41Z\n"
        ),
        "{t}"
    );
    // 1/8 of the 2048 MiB limit; 200 is below it.
    assert!(
        t.contains("samples below 256 MB free RAM (near-OOM): 1\n"),
        "{t}"
    );
    assert!(t.contains("\nmemory that binds: the cgroup's available memory (below MemAvailable) in 2 of 3 samples, MemAvailable in the other 1\n"), "{t}");
    let mut j = Text::new();
    s.render_json(&mut j).unwrap();
    assert!(j.contains(",\"min_mem_avail\":{\"mem_avail_mb\":200,\"bound_by\":\"host\",\"cg_mem_limit_mb\":2048,\"host_mem_avail_mb\":200,\"iso\""), "{j}");
    assert!(j.contains(",\"mem_bound_by_cgroup_samples\":2,"), "{j}");
}

#[test]
fn json_names_the_limit_that_binds() {
    let mut s = Summary::new(None, None);
    CsvRows::new()
        .feed(CGROUP_1G, &mut |r| s.observe(r))
        .unwrap();
    let mut j = Text::new();
    s.render_json(&mut j).unwrap();
    assert!(j.contains(",\"peak_mem\":{\"mem_used_mb\":947,\"mem_avail_mb\":77,\"bound_by\":\"cgroup\",\"cg_mem_limit_mb\":1024,\"host_mem_used_mb\":3790,\"host_mem_avail_mb\":18210,\"iso\":\"2026-11-30T00:53:45Z\""), "{j}");
    assert!(j.contains(",\"min_mem_avail\":{\"mem_avail_mb\":77,\"bound_by\":\"cgroup\",\"cg_mem_limit_mb\":1024,\"host_mem_avail_mb\":18210,\"iso\":\"2026-11-30T00:53:45Z\""), "{j}");
    assert!(j.contains(",\"mem_bound_by_cgroup_samples\":10,"), "{j}");
    assert!(j.contains(",\"near_oom\":{\"below_mb\":128,\"from\":\"scaled\",\"scaled_from_ram_mb\":null,\"scaled_from_cgroup_limit_mb\":1024,\"samples\":2}"), "{j}");
    assert!(
        j.contains(",\"min_cgroup_avail\":{\"cg_mem_avail_mb\":77,\"cg_mem_limit_mb\":1024,"),
        "{j}"
    );
    // Without a cgroup: the host's, said to be the host's.
    let mut s = Summary::new(None, None);
    CsvRows::new()
        .feed(HOST_BOUND, &mut |r| s.observe(r))
        .unwrap();
    let mut j = Text::new();
    s.render_json(&mut j).unwrap();
    assert!(j.contains(",\"min_mem_avail\":{\"mem_avail_mb\":10,\"bound_by\":\"host\",\"cg_mem_limit_mb\":null,\"host_mem_avail_mb\":10,"), "{j}");
    assert!(j.contains(",\"near_oom\":{\"below_mb\":475,\"from\":\"scaled\",\"scaled_from_ram_mb\":3800,\"scaled_from_cgroup_limit_mb\":null,\"samples\":3}"), "{j}");
}
