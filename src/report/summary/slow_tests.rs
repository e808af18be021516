//! Unit tests of `report::summary::slow` (src/report/summary/slow.rs).

extern crate std;
use std::string::String;

use super::*;
use crate::report::csvread::CsvRows;
use crate::report::summary::{Summary, Text};
use crate::tick::row::HEADER_FULL;

/// One full row at `elapsed` seconds (epoch 1796000000 + elapsed) with
/// `stage`, `context` and the ten slow columns `slow`
/// (`si,so,mf,rf,rd,wr,util,temp,freq,thr`).
fn line(elapsed: u64, stage: &str, context: &str, slow: &str) -> String {
    let epoch = 1_796_000_000 + elapsed;
    let iso = Iso::from_epoch(epoch);
    std::format!(
        "{epoch},{},{elapsed},0.50,50,1000,3000,25,0,50,50,1,{stage},\"{context}\",0,,,,,51200,0,,,,,,,{slow},\n",
        iso.as_str()
    )
}

/// A CSV of `rows` (elapsed, stage, context, slow columns).
fn csv(rows: &[(u64, &str, &str, &str)]) -> String {
    let mut s = String::from(HEADER_FULL);
    for (e, st, cx, sl) in rows {
        s.push_str(&line(*e, st, cx, sl));
    }
    s
}

fn summary(data: &str) -> Summary {
    let mut s = Summary::new(None, None);
    let mut r = CsvRows::new();
    r.feed(data.as_bytes(), &mut |row| s.observe(row)).unwrap();
    r.feed(&[], &mut |row| s.observe(row)).unwrap();
    assert_eq!(r.skipped, 0, "{data}");
    s
}

fn text(s: &Summary) -> String {
    let mut t = Text::new();
    s.render(&mut t).unwrap();
    String::from(t.as_str())
}

/// The slow columns of a quiet row.
const QUIET: &str = "0.00,0.00,0,0,0.00,0.00,5,45.0,60,";

#[test]
fn thrash_counts_only_runs_of_two_rows_or_more() {
    let thrash = "2.00,0.50,10,300,0.00,0.00,5,45.0,60,";
    let faults = "0.00,0.00,150,0,0.00,0.00,5,45.0,60,";
    let s = summary(&csv(&[
        (0, "a", "x", QUIET),
        (10, "a", "x", thrash), // alone: not counted
        (20, "a", "x", QUIET),
        (30, "b", "y", thrash), // a run of two: 10 + 10 s
        (40, "b", "y", faults),
        (50, "b", "y", QUIET),
        (55, "c", "z", faults), // a run of three: 5 + 5 + 5 s
        (60, "c", "z", faults),
        (65, "c", "z", faults),
    ]));
    assert_eq!(s.slow().thrashing_s(), 35);
    let t = text(&s);
    assert!(
        t.contains("\nWHY IT WAS SLOW:\n  thrashing: 35s (swap-in >= 1 MiB/s or >= 100 major faults/s, 2 rows or more)\n"),
        "{t}"
    );
    assert!(
        t.contains("    peaks: 2.00 MiB/s swap-in, 0.50 MiB/s swap-out, 150 major faults/s, 300 refaults/s\n"),
        "{t}"
    );
    assert!(
        t.contains(&std::format!("    advice: {ADVICE_ZRAM}\n")),
        "{t}"
    );
}

#[test]
fn times_come_from_elapsed_with_uneven_intervals() {
    let busy = "0.00,0.00,0,0,1.00,20.00,95,45.0,60,";
    // Intervals of 1, 2, 4, 8 and 15 s, as `run`'s widening interval
    // gives: 29 s busy, where rows × an interval would say anything else.
    let s = summary(&csv(&[
        (0, "a", "x", busy),
        (1, "a", "x", busy),
        (3, "a", "x", busy),
        (7, "a", "x", QUIET),
        (15, "a", "x", busy),
        (30, "a", "x", busy),
        (31, "a", "x", "0.00,0.00,0,0,0.00,0.00,89,45.0,60,"),
    ]));
    assert_eq!(s.slow().disk_busy_s(), 1 + 2 + 8 + 15);
    assert_eq!(s.slow().thrashing_s(), 0);
}

#[test]
fn the_busiest_minute_names_its_stage_and_context() {
    // 0–60 s: 50 % busy in "configure"; 60–120 s: "link" at 100 % for
    // 45 s, then 15 s of "install" at 90 %; the busiest 60 s is 60–120 s
    // (45 + 13.5 = 58.5 busy seconds), where "link" gives the most.
    let half = "0.00,0.00,0,0,0.00,5.00,50,45.0,60,";
    let full = "0.00,0.00,0,0,0.50,30.00,100,45.0,60,";
    let ninety = "0.00,0.00,0,0,0.00,10.00,90,45.0,60,";
    let s = summary(&csv(&[
        (0, "configure", "cmake", half),
        (15, "configure", "cmake", half),
        (30, "configure", "cmake", half),
        (45, "configure", "cmake", half),
        (60, "configure", "cmake", half),
        (75, "link", "[9/10] Linking CXX executable big", full),
        (90, "link", "[9/10] Linking CXX executable big", full),
        (105, "link", "[9/10] Linking CXX executable big", full),
        (120, "install", "Installing big", ninety),
        (135, "install", "Installing big", QUIET),
    ]));
    let worst = s.slow().worst(Finding::DiskBusy).unwrap();
    assert_eq!((worst.from_s, worst.to_s, worst.sum), (60, 120, 5850));
    assert_eq!(worst.stage.as_str(), "link");
    assert_eq!(worst.context.as_str(), "[9/10] Linking CXX executable big");
    assert_eq!(
        worst.to_iso.as_str(),
        Iso::from_epoch(1_796_000_120).as_str()
    );
    assert_eq!(s.slow().disk_busy_s(), 60);
    let t = text(&s);
    let want = std::format!(
        "\nWHY IT WAS SLOW:\n  build disk >= 90% busy: 1m00s\n    busiest minute: 1m00s to 2m00s after the start (to {}): busy 58 s of 60\n    stage=link  context=[9/10] Linking CXX executable big\n    peaks: 0.50 MiB/s read, 30.00 MiB/s write\n    advice: {ADVICE_DISK}\n",
        worst.to_iso.as_str()
    );
    assert!(t.contains(&want), "{t}");
}

#[test]
fn a_window_shorter_than_a_minute_and_the_earliest_of_equals() {
    let busy = "0.00,0.00,0,0,0.00,0.00,100,45.0,60,";
    let s = summary(&csv(&[
        (0, "a", "x", QUIET),
        (10, "a", "x", busy),
        (20, "b", "y", busy),
        (30, "c", "z", "0.00,0.00,0,0,0.00,0.00,0,45.0,60,"),
    ]));
    let worst = s.slow().worst(Finding::DiskBusy).unwrap();
    // Both busy rows give 10 s: the earlier names it.
    assert_eq!((worst.from_s, worst.to_s, worst.seconds), (0, 20, 20));
    assert_eq!(worst.stage.as_str(), "a");
}

#[test]
fn a_long_row_is_stepped_at_most_a_minute() {
    let busy = "0.00,0.00,0,0,0.00,0.00,100,45.0,60,";
    let s = summary(&csv(&[
        (0, "a", "x", QUIET),
        (1_000_000_000, "b", "y", busy),
        (1_000_000_030, "c", "z", QUIET),
    ]));
    assert_eq!(s.slow().disk_busy_s(), 1_000_000_000);
    let worst = s.slow().worst(Finding::DiskBusy).unwrap();
    assert_eq!(worst.sum, 6000);
    assert_eq!(worst.stage.as_str(), "b");
    assert_eq!(worst.to_s, 60);
}

#[test]
fn throttling_under_voltage_and_heat() {
    let s = summary(&csv(&[
        (0, "a", "x", QUIET),
        (
            15,
            "a",
            "x",
            "0.00,0.00,0,0,0.00,0.00,5,82.3,60,throttled|soft-temp-limit",
        ),
        (
            30,
            "b",
            "y",
            "0.00,0.00,0,0,0.00,0.00,5,84.9,60,under-voltage|freq-capped",
        ),
        (
            45,
            "b",
            "y",
            "0.00,0.00,0,0,0.00,0.00,5,84.9,60,under-voltage",
        ),
        (60, "c", "z", QUIET),
    ]));
    let slow = s.slow();
    assert_eq!(slow.throttled_s(), 30);
    assert_eq!(slow.under_voltage_s(), 30);
    assert_eq!(slow.peak_temp(), Some(Tenths(849)));
    let t = text(&s);
    let end = Iso::from_epoch(1_796_000_045);
    let peak = Iso::from_epoch(1_796_000_030);
    let want = std::format!(
        "  throttled (freq-capped, throttled or soft-temp-limit): 30s
    worst minute: 0s to 30s after the start (to {}): throttled 30 s of 30
    stage=a  context=x
    advice: {ADVICE_HEAT}
  under-voltage: 30s
    worst minute: 0s to 45s after the start (to {}): under-voltage 30 s of 45
    stage=b  context=y
    advice: {ADVICE_POWER}
  peak temperature: 84.9 °C  at {}
    stage=b  context=y
",
        peak.as_str(),
        end.as_str(),
        peak.as_str()
    );
    assert!(t.contains(&want), "{t}");
    // The heat advice once, under throttling.
    assert_eq!(t.matches(ADVICE_HEAT).count(), 1, "{t}");
}

#[test]
fn heat_alone_is_a_finding_and_warm_is_not() {
    let warm = summary(&csv(&[
        (0, "a", "x", QUIET),
        (15, "a", "x", "0.00,0.00,0,0,0.00,0.00,5,79.9,60,"),
    ]));
    assert!(!text(&warm).contains("WHY IT WAS SLOW"));
    assert!(warm.slow().has_data());
    let hot = summary(&csv(&[
        (0, "a", "x", QUIET),
        (15, "a", "hot", "0.00,0.00,0,0,0.00,0.00,5,80.0,60,"),
    ]));
    let t = text(&hot);
    assert!(
        t.contains(&std::format!(
            "\nWHY IT WAS SLOW:\n  peak temperature: 80.0 °C  at {}\n    stage=a  context=hot\n    advice: {ADVICE_HEAT}\n",
            Iso::from_epoch(1_796_000_015).as_str()
        )),
        "{t}"
    );
}

#[test]
fn zram_swap_changes_the_thrash_advice() {
    let thrash = "5.00,5.00,500,0,0.00,0.00,5,45.0,60,";
    let mut data = csv(&[
        (0, "a", "x", thrash),
        (15, "a", "x", thrash),
        (30, "a", "x", thrash),
    ]);
    // zram_stored_mb 300 on every row (column 16).
    data = data.replace(",0,,,,,51200,", ",0,300,100,,,51200,");
    let t = text(&summary(&data));
    assert!(
        t.contains(&std::format!("    advice: {ADVICE_FEWER_JOBS}\n")),
        "{t}"
    );
    assert!(!t.contains(ADVICE_ZRAM), "{t}");
    assert!(t.contains("worst minute: 0s to 30s after the start"), "{t}");
    assert!(t.contains(": 150.00 MiB swapped in\n"), "{t}");
}

#[test]
fn faults_alone_name_the_minute_by_faults() {
    let faults = "0.00,0.00,200,0,0.00,0.00,5,45.0,60,";
    let t = text(&summary(&csv(&[
        (0, "a", "x", QUIET),
        (10, "a", "x", faults),
        (20, "a", "x", faults),
    ])));
    assert!(t.contains(": 4000 major faults\n"), "{t}");
}

#[test]
fn old_csvs_and_quiet_runs_have_no_section() {
    let header = crate::tick::row::header_27();
    let mut old = std::format!("{}\n", header.as_str());
    for e in [0u64, 15, 30] {
        let full = line(
            e,
            "a",
            "x",
            "9.00,9.00,900,900,9.00,9.00,100,90.0,60,throttled",
        );
        // The 27 columns: drop the ten slow ones.
        let cut: std::vec::Vec<&str> = full.trim_end().split(',').take(27).collect();
        old.push_str(&cut.join(","));
        old.push('\n');
    }
    let s = summary(&old);
    assert!(!s.slow().has_data());
    let t = text(&s);
    assert!(!t.contains("WHY IT WAS SLOW"), "{t}");
    let quiet = summary(&csv(&[(0, "a", "x", QUIET), (15, "a", "x", QUIET)]));
    assert!(quiet.slow().has_data() && !quiet.slow().has_findings());
    assert!(!text(&quiet).contains("WHY IT WAS SLOW"));
    let empty = summary(&csv(&[
        (0, "a", "x", ",,,,,,,,,"),
        (15, "a", "x", ",,,,,,,,,"),
    ]));
    assert!(!empty.slow().has_data());
}

#[test]
fn the_other_sections_are_unchanged_by_the_new_one() {
    let busy = "0.00,0.00,0,0,0.00,0.00,100,45.0,60,";
    let with = text(&summary(&csv(&[(0, "a", "x", busy), (15, "a", "x", busy)])));
    let without = text(&summary(&csv(&[
        (0, "a", "x", QUIET),
        (15, "a", "x", QUIET),
    ])));
    let (head, section) = with.split_once("\nWHY IT WAS SLOW:\n").unwrap();
    assert_eq!(head, without);
    assert!(
        section.starts_with("  build disk >= 90% busy: 15s\n"),
        "{section}"
    );
}

fn json(s: &Summary) -> String {
    let mut t = Text::new();
    s.render_json(&mut t).unwrap();
    String::from(t.as_str())
}

#[test]
fn json_carries_the_same_figures() {
    let busy = "1.50,0.25,120,7,0.50,30.00,100,81.5,60,throttled";
    let s = summary(&csv(&[
        (0, "a", "x", QUIET),
        (15, "link", "ld big", busy),
        (30, "link", "ld big", busy),
    ]));
    let j = json(&s);
    let iso = Iso::from_epoch(1_796_000_030);
    let want = std::format!(
        ",\"why_slow\":{{\"thrashing_s\":30,\"thrashing_minute\":{{\"swap_in_mib\":45.00,\"seconds\":30,\"from_s\":0,\"to_s\":30,\"to_iso\":\"{0}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"peak_swap_in_mibps\":1.50,\"peak_swap_out_mibps\":0.25,\"peak_majflt_ps\":120,\"peak_refaults_ps\":7,\"disk_busy_s\":30,\"disk_busy_minute\":{{\"busy_centi_s\":3000,\"seconds\":30,\"from_s\":0,\"to_s\":30,\"to_iso\":\"{0}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"peak_disk_read_mibps\":0.50,\"peak_disk_write_mibps\":30.00,\"throttled_s\":30,\"throttled_minute\":{{\"throttled_s\":30,\"seconds\":30,\"from_s\":0,\"to_s\":30,\"to_iso\":\"{0}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"under_voltage_s\":0,\"under_voltage_minute\":null,\"peak_cpu_temp\":{{\"cpu_temp_c\":81.5,\"iso\":\"{1}\",\"stage\":\"link\",\"context\":\"ld big\"}}}}",
        iso.as_str(),
        Iso::from_epoch(1_796_000_015).as_str()
    );
    assert!(j.contains(&want), "{j}");
    let old = summary(&std::format!(
        "{}\n",
        crate::tick::row::header_27().as_str()
    ));
    assert!(json(&old).contains(",\"why_slow\":null,"));
}
