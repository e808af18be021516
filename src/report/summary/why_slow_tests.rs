//! Unit tests of `report::summary::why_slow` (src/report/summary/why_slow.rs).

extern crate std;
use std::string::String;

use super::*;
use crate::report::csvread::CsvRows;
use crate::report::summary::{Summary, Text};
use crate::tick::row::HEADER_FULL;

/// One full row at `elapsed` seconds (epoch 1796000000 + elapsed) with
/// `stage`, `context`, 1024 MiB of swap and the ten slow columns `slow`
/// (`si,so,mf,rf,rd,wr,util,temp,freq,thr`).
fn line(elapsed: u64, stage: &str, context: &str, slow: &str) -> String {
    let epoch = 1_796_000_000 + elapsed;
    let iso = Iso::from_epoch(epoch);
    std::format!(
        "{epoch},{},{elapsed},0.50,50,1000,3000,25,0,50,50,1,{stage},\"{context}\",1024,,,,,51200,0,,,,,,,{slow},\n",
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
        t.contains("\nWHY IT WAS SLOW:\n  thrashing: 35s (swap-in >= 1 MiB/s, >= 100 major faults/s or >= 1000 refaults/s, 2 rows or more)\n"),
        "{t}"
    );
    // 10 s of swap thrash (the row at 30 s), 25 s of faults without
    // swap-in: file pages, the larger.
    assert!(
        t.contains("    peaks: 2.00 MiB/s swap-in, 0.50 MiB/s swap-out, 150 major faults/s, 300 refaults/s\n    of which: swap 10s, file pages 25s\n    advice: file pages thrashed, no swap-in: too many jobs for the memory — fewer jobs (no compiler peak recorded to size them): headroom run --jobserver\n"),
        "{t}"
    );
    assert!(!t.contains(ADVICE_ZRAM), "{t}");
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
    data = data.replace(",1024,,,,,51200,", ",1024,300,100,,,51200,");
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
        ",\"why_slow\":{{\"thrashing_s\":30,\"thrashing_minute\":{{\"swap_in_mib\":45.00,\"seconds\":30,\"from_s\":0,\"to_s\":30,\"to_iso\":\"{0}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"peak_swap_in_mibps\":1.50,\"peak_swap_out_mibps\":0.25,\"peak_majflt_ps\":120,\"peak_refaults_ps\":7,\"thrash_kind\":\"swap\",\"swap_thrashing_s\":30,\"file_thrashing_s\":0,\"fitting_jobs\":null,\"fitting_peak_mb\":null,\"fitting_usable_mb\":null,\"thrash_compilers\":null,\"disk_busy_s\":30,\"disk_busy_minute\":{{\"busy_centi_s\":3000,\"seconds\":30,\"from_s\":0,\"to_s\":30,\"to_iso\":\"{0}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"peak_disk_read_mibps\":0.50,\"peak_disk_write_mibps\":30.00,\"disk_busy_thrash_s\":0,\"throttled_s\":30,\"throttled_minute\":{{\"throttled_s\":30,\"seconds\":30,\"from_s\":0,\"to_s\":30,\"to_iso\":\"{0}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"under_voltage_s\":0,\"under_voltage_minute\":null,\"peak_cpu_temp\":{{\"cpu_temp_c\":81.5,\"iso\":\"{1}\",\"stage\":\"link\",\"context\":\"ld big\"}}}}",
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

/// A row of four `sqlite3.c` compiles in a 1 GiB memory cgroup on a 24
/// GiB host (22604 MiB available): `compilers` running, `swap_total` MiB
/// of swap, `cg` MiB available under the cgroup's limit (empty: no
/// limit), the build's largest compiler `peak` MiB (empty: none), and the
/// ten slow columns `slow`.
fn cg_line(
    elapsed: u64,
    compilers: u64,
    swap_total: u64,
    cg: &str,
    peak: &str,
    slow: &str,
) -> String {
    let epoch = 1_796_000_000 + elapsed;
    let iso = Iso::from_epoch(epoch);
    let comm = if peak.is_empty() { "" } else { "cc1" };
    std::format!(
        "{epoch},{},{elapsed},4.00,100,1400,22604,6,0,50,50,{compilers},compile,\"[1/4] CC sqlite3.c\",{swap_total},,,,,51200,0,{cg},,{peak},{comm},{peak},{comm},{slow},\n",
        iso.as_str()
    )
}

/// The slow columns of a row thrashing file pages: 52000 major faults/s,
/// no swap-in, the disk 40 % busy.
const FILE_THRASH: &str = "0.00,0.00,52000,210000,40.00,1.00,40,55.0,100,";
/// The same with the build disk 100 % busy reading the pages again.
const FILE_THRASH_READING: &str = "0.00,0.00,52000,210000,840.00,1.00,100,55.0,100,";

/// `make -j4` in the cgroup: 1010 MiB available before the jobs, three
/// rows of 15 s thrashing with `thrash` (the build's compiler peaking at
/// `peak` MiB on the first), then the jobs gone; `swap_total` MiB of swap.
fn make_j4(swap_total: u64, cg: &str, peak: &str, thrash: &str) -> String {
    let mut s = String::from(HEADER_FULL);
    s.push_str(&cg_line(0, 0, swap_total, cg, "", QUIET));
    for (e, left) in [(15, "120"), (30, "20"), (45, "10")] {
        let left = if cg.is_empty() { "" } else { left };
        let p = if e == 15 { peak } else { "" };
        s.push_str(&cg_line(e, 4, swap_total, left, p, thrash));
    }
    s.push_str(&cg_line(60, 0, swap_total, cg, "", QUIET));
    s
}

/// The advice line of file-page thrash, after `— `.
fn file_advice(fit: &str) -> String {
    std::format!(
        "    advice: file pages thrashed, no swap-in: too many jobs for the memory — {fit}\n"
    )
}

#[test]
fn file_thrash_without_swap_in_advises_the_j_that_fits_not_zram() {
    let s = summary(&make_j4(1024, "1010", "350", FILE_THRASH));
    let slow = s.slow();
    assert_eq!(slow.thrash_kind(), Some(ThrashKind::File));
    assert_eq!(slow.thrashing_kind_s(ThrashKind::File), 45);
    assert_eq!(slow.thrashing_kind_s(ThrashKind::Swap), 0);
    // 1010 MiB before the jobs (22604 on the host): 0.9 × 1010 / 350 = 2.
    assert_eq!(
        slow.fit(Some(350)),
        Some(Fit {
            jobs: 2,
            memory_jobs: 2,
            peak_mb: 350,
            usable_mb: 1010,
            thrash_compilers: 4
        })
    );
    let t = text(&s);
    let want = std::format!(
        "\nWHY IT WAS SLOW:
  thrashing: 45s (swap-in >= 1 MiB/s, >= 100 major faults/s or >= 1000 refaults/s, 2 rows or more)
    worst minute: 0s to 45s after the start (to {}): 9450000 refaults
    stage=compile  context=[1/4] CC sqlite3.c
    peaks: 0.00 MiB/s swap-in, 0.00 MiB/s swap-out, 52000 major faults/s, 210000 refaults/s
{}  peak temperature: 55.0 °C  at ",
        Iso::from_epoch(1_796_000_045).as_str(),
        file_advice(
            "-j2 fits (peak 350 MiB per job, 1010 MiB usable): make -j2 or headroom run --jobserver"
        )
    );
    assert!(t.contains(&want), "{t}");
    assert!(!t.contains(ADVICE_ZRAM) && !t.contains(ADVICE_DISK), "{t}");
}

#[test]
fn swap_thrash_keeps_the_zram_advice() {
    let swapping = "5.00,4.00,1500,900,6.00,4.00,40,55.0,100,";
    let s = summary(&make_j4(1024, "1010", "350", swapping));
    assert_eq!(s.slow().thrash_kind(), Some(ThrashKind::Swap));
    let t = text(&s);
    assert!(
        t.contains(&std::format!(
            ": 225.00 MiB swapped in\n    stage=compile  context=[1/4] CC sqlite3.c\n    peaks: 5.00 MiB/s swap-in, 4.00 MiB/s swap-out, 1500 major faults/s, 900 refaults/s\n    advice: {ADVICE_ZRAM}\n"
        )),
        "{t}"
    );
    assert!(!t.contains("file pages"), "{t}");
    let j = json(&s);
    assert!(
        j.contains(",\"thrash_kind\":\"swap\",\"swap_thrashing_s\":45,\"file_thrashing_s\":0,\"fitting_jobs\":null,"),
        "{j}"
    );
}

#[test]
fn a_disk_busy_reading_while_file_pages_thrash_is_not_the_cards_fault() {
    let s = summary(&make_j4(1024, "1010", "350", FILE_THRASH_READING));
    assert_eq!(s.slow().disk_busy_s(), 45);
    assert_eq!(s.slow().disk_busy_thrash_s(), 45);
    let t = text(&s);
    let want = std::format!(
        "  build disk >= 90% busy: 45s
    busiest minute: 0s to 1m00s after the start (to {}): busy 45 s of 60
    stage=compile  context=[1/4] CC sqlite3.c
    peaks: 840.00 MiB/s read, 1.00 MiB/s write
    45s of it while file pages thrashed: the thrash's own reads (evicted pages read again), not the disk's fault
    advice: {ADVICE_DISK_THRASH}
",
        Iso::from_epoch(1_796_000_060).as_str()
    );
    assert!(t.contains(&want), "{t}");
    assert!(
        t.contains("too many jobs for the memory — -j2 fits ("),
        "{t}"
    );
    assert!(!t.contains(ADVICE_DISK), "{t}");
    let j = json(&s);
    assert!(
        j.contains(",\"thrash_kind\":\"file\",\"swap_thrashing_s\":0,\"file_thrashing_s\":45,\"fitting_jobs\":2,\"fitting_peak_mb\":350,\"fitting_usable_mb\":1010,\"thrash_compilers\":4,\"disk_busy_s\":45,"),
        "{j}"
    );
    assert!(j.contains(",\"disk_busy_thrash_s\":45,"), "{j}");
}

#[test]
fn a_disk_busy_outside_the_thrash_keeps_the_card_advice() {
    let mut data = make_j4(1024, "1010", "350", FILE_THRASH_READING);
    // Then 30 s of linking, writing, with nothing thrashing.
    let link = "0.00,0.00,3,0,1.00,60.00,100,55.0,100,";
    data.push_str(&cg_line(75, 1, 1024, "900", "", link));
    data.push_str(&cg_line(90, 1, 1024, "900", "", link));
    let s = summary(&data);
    assert_eq!(
        (s.slow().disk_busy_s(), s.slow().disk_busy_thrash_s()),
        (75, 45)
    );
    let t = text(&s);
    assert!(
        t.contains(&std::format!(
            "    45s of it while file pages thrashed: the thrash's own reads (evicted pages read again), not the disk's fault\n    advice for the other 30s: {ADVICE_DISK}\n"
        )),
        "{t}"
    );
    // Busy writing while thrashing is not the thrash's reading.
    let writing = "0.00,0.00,52000,210000,10.00,80.00,100,55.0,100,";
    let s = summary(&make_j4(1024, "1010", "350", writing));
    assert_eq!(s.slow().disk_busy_thrash_s(), 0);
    assert!(text(&s).contains(&std::format!("    advice: {ADVICE_DISK}\n")));
}

#[test]
fn no_swap_at_all_is_file_thrash_and_the_fit_stays_below_the_jobs_that_thrashed() {
    // No swap device: even a swap-in column above 1 MiB/s (a swapoff
    // reading pages back) is not swap thrash.
    let odd = "1.50,0.00,52000,210000,40.00,1.00,40,55.0,100,";
    for thrash in [FILE_THRASH, odd] {
        let s = summary(&make_j4(0, "1010", "200", thrash));
        assert_eq!(s.slow().thrash_kind(), Some(ThrashKind::File));
        // 0.9 × 1010 / 200 = 4, but four compilers thrashed: 3.
        let want = "-j3 at most: 4 compilers thrashed, though peak 200 MiB per job would allow 4 in 1010 MiB usable (the thrash kept the peak low): make -j3 or headroom run --jobserver";
        let t = text(&s);
        let advice = if thrash == odd {
            file_advice(want).replace("no swap-in", "no swap")
        } else {
            file_advice(want)
        };
        assert!(t.contains(&advice), "{t}");
        assert!(!t.contains(ADVICE_ZRAM), "{t}");
    }
}

#[test]
fn a_little_swap_in_beside_the_faults_is_still_file_thrash() {
    let little = "0.40,0.10,52000,210000,40.00,1.00,40,55.0,100,";
    let s = summary(&make_j4(1024, "1010", "350", little));
    assert_eq!(s.slow().thrash_kind(), Some(ThrashKind::File));
    let t = text(&s);
    let want = file_advice(
        "-j2 fits (peak 350 MiB per job, 1010 MiB usable): make -j2 or headroom run --jobserver",
    );
    assert!(
        t.contains(&want.replace("no swap-in", "swap-in under 1 MiB/s")),
        "{t}"
    );
    // Named by its refaults, not by the 18 MiB it swapped in.
    assert!(t.contains(": 9450000 refaults\n"), "{t}");
}

#[test]
fn the_fit_without_a_cgroup_a_peak_or_room_for_one_job() {
    // No cgroup limit: the host's 22604 MiB; 0.9 × 22604 / 5000 = 4,
    // one fewer than the four compilers.
    let t = text(&summary(&make_j4(1024, "", "5000", FILE_THRASH)));
    assert!(t.contains(&file_advice("-j3 at most: 4 compilers thrashed, though peak 5000 MiB per job would allow 4 in 22604 MiB usable (the thrash kept the peak low): make -j3 or headroom run --jobserver")), "{t}");
    let t = text(&summary(&make_j4(1024, "", "9000", FILE_THRASH)));
    assert!(t.contains(&file_advice("-j2 fits (peak 9000 MiB per job, 22604 MiB usable): make -j2 or headroom run --jobserver")), "{t}");
    let t = text(&summary(&make_j4(1024, "1010", "950", FILE_THRASH)));
    assert!(t.contains(&file_advice("not even -j1 fits (peak 950 MiB per job, 1010 MiB usable): make -j1, and more memory (headroom advise)")), "{t}");
    let s = summary(&make_j4(1024, "1010", "", FILE_THRASH));
    let t = text(&s);
    assert!(
        t.contains(&file_advice(
            "fewer jobs (no compiler peak recorded to size them): headroom run --jobserver"
        )),
        "{t}"
    );
    assert!(json(&s).contains(",\"thrash_kind\":\"file\",\"swap_thrashing_s\":0,\"file_thrashing_s\":45,\"fitting_jobs\":null,"));
}

#[test]
fn refaults_alone_are_file_thrash_when_the_faults_stay_under_100() {
    // Four workers in a 200 MiB cgroup re-reading mapped files: each major
    // fault read the pages around it, 90 faults/s beside 150000 refaults/s.
    let refaulting = "0.00,0.00,90,150000,600.00,2.00,55,50.0,100,";
    let s = summary(&make_j4(0, "181", "78", refaulting));
    assert_eq!(s.slow().thrashing_s(), 45);
    assert_eq!(s.slow().thrash_kind(), Some(ThrashKind::File));
    let t = text(&s);
    assert!(t.contains(": 6750000 refaults\n"), "{t}");
    assert!(
        t.contains(&file_advice(
            "-j2 fits (peak 78 MiB per job, 181 MiB usable): make -j2 or headroom run --jobserver"
        )),
        "{t}"
    );
    assert!(json(&s).contains(",\"thrashing_minute\":{\"refaults\":6750000,"));
    // 999 refaults/s and 99 faults/s: not thrashing.
    let below = "0.00,0.00,99,999,600.00,2.00,55,50.0,100,";
    let s = summary(&make_j4(0, "181", "78", below));
    assert_eq!(s.slow().thrashing_s(), 0);
}
