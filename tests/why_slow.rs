//! End-to-end: `headroom summarize` of a recording whose build disk was
//! busy prints WHY IT WAS SLOW naming the stage and context of the
//! busiest minute (issue 17's acceptance), and `--json` carries the same.

use std::fs;
use std::path::{Path, PathBuf};

mod common;
use common::{headroom, scratch};
use headroom::tick::row::HEADER_FULL;

/// One row of the full format at `elapsed` seconds with the ten slow
/// columns `slow` (`si,so,mf,rf,rd,wr,util,temp,freq,thr`).
fn row(elapsed: u64, stage: &str, context: &str, slow: &str) -> String {
    let epoch = 1_796_000_000 + elapsed;
    // 1796000000 is 2026-11-30T00:53:20Z.
    let t = 53 * 60 + 20 + elapsed;
    let iso = format!(
        "2026-11-30T{:02}:{:02}:{:02}Z",
        t / 3600,
        t / 60 % 60,
        t % 60
    );
    format!(
        "{epoch},{iso},{elapsed},1.50,80,1500,2500,37,0,20,60,2,{stage},\"{context}\",0,0,0,400,10,20480,0,,0.00,700,cc1plus,700,cc1plus,{slow},\n"
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
    advice: a faster card (A2 class) or a USB SSD for the build directory
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
