//! End-to-end: `headroom summarize` of a recording whose build disk was
//! busy prints WHY IT WAS SLOW naming the stage and context of the
//! busiest minute (issue 17's acceptance), and `--json` carries the same;
//! of one whose file pages thrashed in a memory cgroup, the `-j` that fits
//! and not zram nor a faster card (issue 25).

use std::fs;
use std::path::{Path, PathBuf};

mod common;
use common::{headroom, scratch};
use headroom::tick::row::columns::HEADER_FULL;

/// One row of the full format at `elapsed` seconds with the ten slow
/// columns `slow` (`si,so,mf,rf,rd,wr,util,temp,freq,thr`).
fn row(elapsed: u64, stage: &str, context: &str, slow: &str) -> String {
    let (epoch, iso) = (1_796_000_000 + elapsed, iso(elapsed));
    common::full_width(&format!(
        "{epoch},{iso},{elapsed},1.50,80,1500,2500,37,0,20,60,2,{stage},\"{context}\",0,0,0,400,10,20480,0,,0.00,700,cc1plus,700,cc1plus,{slow},"
    ))
}

/// The UTC time `elapsed` seconds after 1796000000
/// (2026-11-30T00:53:20Z), for less than a day.
fn iso(elapsed: u64) -> String {
    let t = 53 * 60 + 20 + elapsed;
    format!(
        "2026-11-30T{:02}:{:02}:{:02}Z",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

/// A 10-minute recording every 15 s: compiling with the disk 40 % busy,
/// then a minute of linking at 100 % (from 5m00s to 6m00s), then
/// compiling again.
fn busy_disk_csv(dir: &Path) -> PathBuf {
    let mut csv = String::from(HEADER_FULL);
    for i in 0..=40u64 {
        let e = i * 15;
        let (stage, context, slow) = if (315..=360).contains(&e) {
            (
                "link",
                "[120/124] Linking CXX executable chromium",
                "0.00,0.00,3,0,1.00,45.50,100,61.0,100,",
            )
        } else {
            (
                "compile",
                "[77/124] Building CXX object base.o",
                "0.00,0.00,3,0,0.20,8.00,40,58.0,100,",
            )
        };
        csv.push_str(&row(e, stage, context, slow));
    }
    let path = dir.join("resources-busy.csv");
    fs::write(&path, csv).unwrap();
    path
}

fn summarize(args: &[&str], csv: &Path) -> String {
    let out = common::output_within(headroom().arg("summarize").args(args).arg(csv), 60);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn summarize_of_a_busy_disk_names_the_busiest_minute() {
    let d = scratch("busy");
    let csv = busy_disk_csv(&d);
    let text = summarize(&[], &csv);
    let want = "\nWHY IT WAS SLOW:
  build disk >= 90% busy: 1m00s
    busiest minute: 5m00s to 6m00s after the start (to 2026-11-30T00:59:20Z): busy 60 s of 60
    stage=link  context=[120/124] Linking CXX executable chromium
    peaks: 1.00 MiB/s read, 45.50 MiB/s write
    device: unknown (a CSV does not say; the advice is for any disk)
    advice: the build disk was saturated: fewer jobs, or a faster disk (or a tmpfs, when RAM allows) for the build directory
  peak temperature: 61.0 °C  at 2026-11-30T00:58:35Z
    stage=link  context=[120/124] Linking CXX executable chromium
";
    assert!(text.contains(want), "{text}");
    // The same text beside the CSV.
    let beside = fs::read_to_string(d.join("resources-busy.summary.txt")).unwrap();
    assert!(beside.contains(want), "{beside}");
    let json = summarize(&["--json"], &csv);
    assert!(
        json.contains(",\"disk_busy_s\":60,\"disk_busy_minute\":{\"busy_centi_s\":6000,\"seconds\":60,\"from_s\":300,\"to_s\":360,\"to_iso\":\"2026-11-30T00:59:20Z\",\"stage\":\"link\",\"context\":\"[120/124] Linking CXX executable chromium\"}"),
        "{json}"
    );
}

/// A 10-minute recording every 15 s of an SD card that hangs while the
/// build links: from 4m00s to 5m00s requests stay in flight and none
/// completes (`disk_stalled` 1, `disk_util_pct` empty: `io_ticks` did
/// not rise, which is no 0 % busy); the rest of the time it is 20 % busy.
fn stalled_disk_csv(dir: &Path) -> PathBuf {
    let mut csv = String::from(HEADER_FULL);
    for i in 0..=40u64 {
        let e = i * 15;
        let (epoch, iso) = (1_796_000_000 + e, iso(e));
        let (stage, context, slow) = if (255..=300).contains(&e) {
            (
                "link",
                "[124/124] Linking C executable sqlite3",
                "0.00,0.00,0,0,0.00,0.00,,55.0,100,,,1",
            )
        } else {
            (
                "compile",
                "[60/124] Building C object sqlite3.o",
                "0.00,0.00,0,0,0.10,2.00,20,55.0,100,,,0",
            )
        };
        csv.push_str(&common::full_width(&format!(
            "{epoch},{iso},{e},1.50,80,1500,2500,37,0,20,60,2,{stage},\"{context}\",0,0,0,400,10,20480,0,,0.00,700,cc1,700,cc1,{slow}"
        )));
    }
    let path = dir.join("resources-stalled.csv");
    fs::write(&path, csv).unwrap();
    path
}

#[test]
fn summarize_of_a_stalled_disk_names_the_stage_that_waited() {
    let d = scratch("stalled");
    let csv = stalled_disk_csv(&d);
    let text = summarize(&[], &csv);
    let want = "\nWHY IT WAS SLOW:
  build disk stalled (requests in flight, none completed): 1m00s
    worst minute: 4m00s to 5m00s after the start (to 2026-11-30T00:58:20Z): stalled 60 s of 60
    stage=link  context=[124/124] Linking C executable sqlite3
    device: unknown (a CSV does not say; the advice is for any disk)
    advice: the build disk stopped answering: look in dmesg for I/O timeouts and resets (mmc, usb, nvme, ata, virtio)
";
    assert!(text.contains(want), "{text}");
    // Never read as an idle disk, nor as a busy one.
    assert!(!text.contains("busy"), "{text}");
    let json = summarize(&["--json"], &csv);
    assert!(
        json.contains(",\"disk_stalled_s\":60,\"disk_stalled_minute\":{\"disk_stalled_s\":60,\"seconds\":60,\"from_s\":240,\"to_s\":300,\"to_iso\":\"2026-11-30T00:58:20Z\",\"stage\":\"link\",\"context\":\"[124/124] Linking C executable sqlite3\"}"),
        "{json}"
    );
    // The busy-disk recording has no stall: its rows carry no
    // disk_stalled value, so the time is unknown (null), never 0.
    let busy = summarize(&["--json"], &busy_disk_csv(&d));
    assert!(
        busy.contains(",\"disk_stalled_s\":null,\"disk_stalled_minute\":null,"),
        "{busy}"
    );
}

/// A copy of the board `boards/x86_64-vm-2c-24g` (its root `/` on the
/// virtio disk `vda`) in `dir`, with a second capture 1.00 s later
/// (`later/`) in which `vda` was busy the whole second writing 100 MiB.
fn busy_virtio_board(dir: &Path) -> PathBuf {
    let board = concat!(env!("CARGO_MANIFEST_DIR"), "/boards/x86_64-vm-2c-24g");
    let root = dir.join("vm");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(board)
        .arg(&root)
        .status();
    assert!(copied.is_ok_and(|s| s.success()), "cp -a {board}");
    let put = |rel: &str, text: &str| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    put("proc/uptime", "100.00 150.00\n");
    put("later/proc/uptime", "101.00 151.00\n");
    let stat = fs::read_to_string(root.join("sys/block/vda/stat")).unwrap();
    let mut f: Vec<u64> = stat
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    // writes, sectors written (100 MiB), write ticks, io_ticks (+1000 ms).
    for (i, add) in [(4, 1000), (6, 204_800), (7, 10_000), (9, 1000)] {
        f[i] += add;
    }
    let line: Vec<String> = f.iter().map(|n| format!("{n:>8}")).collect();
    put("later/sys/block/vda/stat", &(line.join(" ") + "\n"));
    root
}

/// Issue 33: a busy virtio disk on an x86 VM gets advice for a VM's disk,
/// never card advice: `record` names the kind it found in sysfs, and
/// `summarize` keeps it from the summary beside the CSV; a CSV alone
/// gives advice for any disk.
#[test]
fn a_busy_virtio_disk_names_no_card() {
    let d = scratch("virtio");
    let root = busy_virtio_board(&d);
    let out_dir = d.join("out");
    fs::create_dir_all(&out_dir).unwrap();
    let out = common::output_within(
        headroom()
            .arg("--root")
            .arg(&root)
            .args([
                "record",
                "--count",
                "3",
                "--interval",
                "1",
                "--disk-path",
                "/",
            ])
            .args(["--label", "board", "--out-dir"])
            .arg(&out_dir),
        60,
    );
    assert!(out.status.success(), "{out:?}");
    let summary = out_dir.join("resources-run.summary.txt");
    let csv = out_dir.join("resources-run.csv");
    let virtio = "    device: virtual disk (virtio/Xen)\n    advice: a VM's disk is the host's storage: a faster disk or a higher I/O limit for the VM on the host, or the build directory on a tmpfs or another disk\n";
    let no_card = |text: &str| {
        assert!(text.contains("  build disk >= 90% busy: "), "{text}");
        for card in ["card", "A2", "USB SSD", "mmc"] {
            assert!(!text.contains(card), "{card}: {text}");
        }
    };
    let recorded = fs::read_to_string(&summary).unwrap();
    assert!(recorded.contains(virtio), "{recorded}");
    no_card(&recorded);
    // summarize, later: the kind from the summary it rewrites.
    let again = summarize(&[], &csv);
    assert!(again.contains(virtio), "{again}");
    no_card(&again);
    assert!(
        summarize(&["--json"], &csv).contains(",\"disk_device\":\"virtual\"}"),
        "no disk_device in --json"
    );
    // The CSV alone does not say: advice for any disk, still no card.
    fs::remove_file(&summary).unwrap();
    let alone = summarize(&[], &csv);
    assert!(
        alone.contains("    device: unknown (a CSV does not say; the advice is for any disk)\n"),
        "{alone}"
    );
    no_card(&alone);
    assert!(summarize(&["--json"], &csv).contains(",\"disk_device\":null}"));
}

#[test]
fn summarize_of_a_27_column_recording_has_no_such_section() {
    let d = scratch("old");
    let full = fs::read_to_string(busy_disk_csv(&d)).unwrap();
    // The same recording as a CSV written before the ten columns.
    let old: String = full
        .lines()
        .map(|l| {
            let keep: Vec<&str> = l.split(',').take(27).collect();
            keep.join(",") + "\n"
        })
        .collect();
    let csv = d.join("resources-old.csv");
    fs::write(&csv, old).unwrap();
    let text = summarize(&[], &csv);
    assert!(text.contains("PEAK MEMORY USE:"), "{text}");
    assert!(!text.contains("WHY IT WAS SLOW"), "{text}");
    assert!(summarize(&["--json"], &csv).contains(",\"why_slow\":null,"));
}

/// `make -j4` of four copies of `sqlite3.c` in a 1 GiB memory cgroup
/// (no swap allowed, the host's swap idle) on a 24 GiB host, recorded
/// every 15 s: 1010 MiB available in the cgroup before the jobs, then
/// four cc1 (the largest 350 MiB) thrashing file pages for 3 minutes —
/// no swap-in, 52000 major faults/s, the build disk 100 % busy reading
/// 840 MiB/s — then the jobs gone.
fn file_thrash_csv(dir: &Path) -> PathBuf {
    let mut csv = String::from(HEADER_FULL);
    for i in 0..=13u64 {
        let e = i * 15;
        let thrash = (15..=180).contains(&e);
        let (compilers, cg, peak, slow) = if thrash {
            let peak = if e == 30 { "350" } else { "262" };
            (
                4,
                12,
                peak,
                "0.00,0.00,52000,210000,840.00,0.50,100,58.0,100,",
            )
        } else {
            (0, 1010, "", "0.00,0.00,0,0,0.10,0.20,3,50.0,100,")
        };
        let comm = if peak.is_empty() { "" } else { "cc1" };
        csv.push_str(&common::full_width(&format!(
            "{},{},{e},4.10,100,1400,22604,6,0,20,60,{compilers},compile,\"[1/4] CC sqlite3.c\",8192,0,0,400,10,20480,0,{cg},31.50,{peak},{comm},{peak},{comm},{slow},1024",
            1_796_000_000 + e,
            iso(e)
        )));
    }
    let path = dir.join("resources-sqlite.csv");
    fs::write(&path, csv).unwrap();
    path
}

#[test]
fn summarize_of_file_thrash_advises_the_j_that_fits_not_zram_nor_a_card() {
    let d = scratch("file-thrash");
    let csv = file_thrash_csv(&d);
    let text = summarize(&[], &csv);
    let want = "\nWHY IT WAS SLOW:
  thrashing: 3m00s (swap-in >= 1 MiB/s, or >= 100 major faults/s or >= 1000 refaults/s with memory short, 2 rows or more)
    worst minute: 0s to 1m00s after the start (to 2026-11-30T00:54:20Z): 12600000 refaults
    stage=compile  context=[1/4] CC sqlite3.c
    peaks: 0.00 MiB/s swap-in, 0.00 MiB/s swap-out, 52000 major faults/s, 210000 refaults/s
    advice: file pages thrashed, no swap-in: too many jobs for the memory — -j2 fits (peak 350 MiB per job, 1010 MiB usable): make -j2 or headroom run --jobserver
  build disk >= 90% busy: 3m00s
    busiest minute: 0s to 1m00s after the start (to 2026-11-30T00:54:20Z): busy 60 s of 60
    stage=compile  context=[1/4] CC sqlite3.c
    peaks: 840.00 MiB/s read, 0.50 MiB/s write
    3m00s of it while file pages thrashed: the thrash's own reads (evicted pages read again), not the disk's fault
    advice: fewer jobs, as for the thrashing above (a faster disk would only read the evicted pages faster)
  peak temperature: 58.0 °C  at 2026-11-30T00:53:35Z
";
    assert!(text.contains(want), "{text}");
    assert!(!text.contains("zram instead of swap"), "{text}");
    assert!(!text.contains("a faster card (A2 class)"), "{text}");
    let json = summarize(&["--json"], &csv);
    for key in [
        "\"why_slow\":{\"thrashing_s\":180,\"thrashing_minute\":{\"refaults\":12600000,",
        ",\"thrash_kind\":\"file\",\"swap_thrashing_s\":0,\"file_thrashing_s\":180,\"fitting_jobs\":2,\"fitting_peak_mb\":350,\"fitting_usable_mb\":1010,\"thrash_compilers\":4,",
        ",\"disk_busy_s\":180,",
        ",\"disk_busy_thrash_s\":180,",
    ] {
        assert!(json.contains(key), "{key} in {json}");
    }
}

/// A recording whose slow columns hold the largest u64 (a hand-edited or
/// corrupted CSV: `parse_u64` takes 20 digits): `summarize` must not
/// overflow adding them up over the minute window (a debug build panics
/// in `Window::push`, a release build wraps the window's sum).
/// Each second's amount is capped (`disk_util_pct` at 100).
#[test]
fn summarize_of_u64_max_slow_figures_does_not_overflow() {
    let d = scratch("slow-u64-max");
    let max = u64::MAX;
    for (name, slow) in [
        ("majflt", format!("0.00,0.00,{max},0,0.10,0.20,3,50.0,100,")),
        ("util", format!("0.00,0.00,0,0,0.10,0.20,{max},50.0,100,")),
    ] {
        let mut csv = String::from(HEADER_FULL);
        for i in 0..=8u64 {
            let e = i * 15;
            csv.push_str(&row(e, "compile", "[1/4] CC x.c", &slow));
        }
        let path = d.join(format!("resources-{name}.csv"));
        fs::write(&path, csv).unwrap();
        let text = summarize(&[], &path);
        assert!(text.contains("samples=9"), "{text}");
        if name == "util" {
            assert!(text.contains("busy 60 s of 60"), "{text}");
        }
    }
}
