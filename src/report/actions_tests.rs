//! Unit tests of `report::actions` (src/report/actions.rs).

extern crate std;
use super::*;
use std::string::String as StdString;
use std::vec::Vec as StdVec;

const CRAFTED: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/actions-crafted.csv"
));
const CRAFTED_TXT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/actions-crafted.txt"
));
const CRAFTED_JSON: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/actions-crafted.json"
));

fn act(id: &str, wall_ms: u64, user_ms: u64, sys_ms: u64) -> Action {
    let mut a = Action {
        id: Id::new(),
        start: Iso::from_epoch(1_796_000_585),
        wall_ms,
        user_ms,
        sys_ms,
        max_rss_kib: 0,
        signal: None,
        exit: Some(0),
        counts: None,
    };
    a.id.push_str(id).unwrap();
    a
}

fn read_all(data: &[u8], chunk: usize) -> (Result<(), ActionsError>, StdVec<Action>, u64) {
    let mut r = ActionRows::new();
    let mut got = StdVec::new();
    for c in data.chunks(chunk.max(1)) {
        if let Err(e) = r.feed(c, &mut |a| got.push(a.clone())) {
            return (Err(e), got, r.skipped);
        }
    }
    let res = r.feed(&[], &mut |a| got.push(a.clone()));
    assert_eq!(r.rows, got.len() as u64);
    (res, got, r.skipped)
}

fn table_of(data: &[u8], top: usize, min_wall_ms: u64) -> Table {
    let mut t = Table::new(top, min_wall_ms);
    let (res, rows, skipped) = read_all(data, 4096);
    assert_eq!(res, Ok(()));
    for a in &rows {
        t.observe(a);
    }
    t.skipped_rows = skipped;
    t
}

fn text(t: &Table) -> StdString {
    let mut s: String<8192> = String::new();
    t.render(&mut s).unwrap();
    StdString::from(s.as_str())
}

fn json(t: &Table) -> StdString {
    let mut s: String<16384> = String::new();
    t.render_json(&mut s).unwrap();
    StdString::from(s.as_str())
}

// Hand check of the 0-5 s bucket of actions-crafted.csv (11 actions):
// cores (user+sys)/wall, rounded half up to 0.01:
//   a.c 0.800/0.812 = 0.985 -> 0.99   b.c 1.200/1.250 -> 0.96
//   c.c 4.900/4.999 = 0.980 -> 0.98   start.S 0.040/0.050 -> 0.80
//   ld.lld 4.000/3.400 = 1.176 -> 1.18   d.c 0.390/0.400 = 0.975 -> 0.98
//   e.c 1.950/2.000 = 0.975 -> 0.98   ar 0.100/0.120 = 0.833 -> 0.83
//   f.c 2.950/3.000 = 0.983 -> 0.98   sh 0/0.010 -> 0.00
//   g.c 4.200/4.100 = 1.024 -> 1.02
// sum = 970 hundredths, avg 970/11 = 88.2 -> 0.88; sorted, the p90
// (nearest rank ceil(0.9 * 11) = 10th) is 1.02; wall 20.141 s of
// 1832.989 s = 1.099 % -> 1.1; max RSS 310 MiB = 0.303 GiB -> 0.30.
#[test]
fn crafted_file_renders_the_golden_text_and_json() {
    for chunk in [1, 3, 64, 100_000] {
        let (res, rows, skipped) = read_all(CRAFTED, chunk);
        assert_eq!(res, Ok(()));
        assert_eq!(rows.len(), 25, "chunk {chunk}");
        // The garbage line and the row cut at the end.
        assert_eq!(skipped, 2, "chunk {chunk}");
    }
    let t = table_of(CRAFTED, 5, 0);
    let b = t.bucket(0).unwrap();
    assert_eq!(
        (b.actions, b.wall_ms, b.avg_cores_centi, b.p90_cores_centi),
        (11, 20_141, 88, 102)
    );
    assert_eq!(b.max_rss_kib, 310 * 1024);
    assert_eq!(text(&t), CRAFTED_TXT);
    assert_eq!(json(&t), CRAFTED_JSON);
}

#[test]
fn min_wall_and_top_limit_the_longest_list() {
    let t = table_of(CRAFTED, 100, 60_000);
    let ids: StdVec<&str> = t.longest().iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "rustc librustc_driver.rs",
            "link firmware",
            "nvcc kernels/attn.cu",
            "c++ src/huge_tables.cpp",
            "rustc compiler/big.rs"
        ]
    );
    let s = text(&t);
    assert!(s.contains("\nlongest 5 with wall >= 60 s:\n"), "{s}");
    assert!(json(&t).contains("\"top\":100,\"min_wall_s\":60,"));
    // Top 0: no list at all.
    let t = table_of(CRAFTED, 0, 0);
    assert!(t.longest().is_empty());
    assert!(!text(&t).contains("longest"));
    // A --top above the cap is clamped.
    assert_eq!(Table::new(1000, 0).top, TOP_CAP);
}

#[test]
fn longest_keeps_ties_in_file_order_and_evicts_the_shortest() {
    let mut t = Table::new(3, 0);
    for (id, wall) in [
        ("a", 10),
        ("b", 30),
        ("c", 20),
        ("d", 30),
        ("e", 5),
        ("f", 25),
    ] {
        t.observe(&act(id, wall, 0, 0));
    }
    let got: StdVec<(&str, u64)> = t
        .longest()
        .iter()
        .map(|a| (a.id.as_str(), a.wall_ms))
        .collect();
    assert_eq!(got, [("b", 30), ("d", 30), ("f", 25)]);
}

#[test]
fn format_row_then_read_back_round_trips() {
    let mut a = act("cc1plus src/x,y \"z\".cpp", 12_345, 11_000, 1_001);
    a.max_rss_kib = 210 * 1024;
    a.signal = Some(Signal::try_from("KILL").unwrap());
    a.exit = None;
    let mut out = Vec::new();
    format_row(&a, &mut out).unwrap();
    assert_eq!(
        out.as_slice(),
        b"cc1plus src/x y z .cpp,2026-11-30T01:03:05Z,12.345,11.000,1.001,0.97,210,KILL,\n"
    );
    let (res, rows, skipped) = read_all(&out, 5);
    assert_eq!((res, skipped), (Ok(()), 0));
    let mut want = a.clone();
    want.id = Id::try_from("cc1plus src/x y z .cpp").unwrap();
    assert_eq!(rows, [want]);

    // Extremes: every field at its widest still fits ROW_CAP.
    let mut big = act("", u64::MAX, u64::MAX, u64::MAX);
    for _ in 0..ID_CAP {
        big.id.push('x').unwrap();
    }
    big.max_rss_kib = u64::MAX;
    big.signal = Some(Signal::try_from("VTALRM").unwrap());
    big.exit = Some(i32::MIN);
    big.counts = Some(crate::followed::rusage::Counts::from_values([u64::MAX; 6]));
    format_row(&big, &mut out).unwrap();
    let (res, rows, skipped) = read_all(&out, 64);
    assert_eq!((res, skipped), (Ok(()), 0));
    assert_eq!(rows[0].wall_ms, u64::MAX);
    assert_eq!(rows[0].exit, Some(i32::MIN));
    assert_eq!(rows[0].max_rss_kib, u64::MAX / 1024 * 1024);
    assert_eq!(rows[0].id, big.id);
    assert_eq!(rows[0].counts, big.counts);

    // An empty id is written as `?`; exit and wall 0.
    let e = act("", 0, 0, 0);
    format_row(&e, &mut out).unwrap();
    assert_eq!(
        out.as_slice(),
        b"?,2026-11-30T01:03:05Z,0.000,0.000,0.000,0.00,0,,0\n"
    );
}

#[test]
fn header_text_matches_the_row_shape() {
    assert_eq!(HEADER.trim_end().split(',').count(), COLUMNS);
    let (res, rows, skipped) = read_all(HEADER.as_bytes(), 7);
    assert_eq!((res, rows.len(), skipped), (Ok(()), 0, 0));
    // Header only, without its newline: still not a malformed row.
    let (res, rows, skipped) = read_all(HEADER.trim_end().as_bytes(), 7);
    assert_eq!((res, rows.len(), skipped), (Ok(()), 0, 0));
    let (res, rows, skipped) = read_all(b"", 7);
    assert_eq!((res, rows.len(), skipped), (Ok(()), 0, 0));
}

#[test]
fn malformed_rows_are_counted_never_fatal() {
    let good = "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0\n";
    let bad = [
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,extra\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,\n",
        "cc x.c,2026-11-30 01:00:00Z,1.000,0.500,0.500,1.00,10,,0\n",
        "cc x.c,2026-11-30T01:00:00Z,1.0000,0.500,0.500,1.00,10,,0\n",
        "cc x.c,2026-11-30T01:00:00Z,1.,0.500,0.500,1.00,10,,0\n",
        "cc x.c,2026-11-30T01:00:00Z,-1,0.500,0.500,1.00,10,,0\n",
        "cc x.c,2026-11-30T01:00:00Z,99999999999999999999,0,0,0,10,,0\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,x,10,,0\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10.5,,0\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,kill,0\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,VERYLONGSIG,0\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,2147483648\n",
        // Counters: all six or none, each a non-negative integer.
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,4,5\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,4,5,6,7\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,-4,5,6\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,4,5,\n",
        "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,4.5,5,6\n",
        "\x00\u{ff},,,\n",
        "id\n",
    ];
    let mut data = StdString::from(good);
    for b in bad {
        data.push_str(b);
    }
    let mut bytes = data.into_bytes();
    // A record longer than FIELD_BUF, and one with too many fields.
    bytes.extend_from_slice(&[b'x'; 3 * FIELD_BUF]);
    bytes.push(b'\n');
    bytes.extend_from_slice(&[b','; 100]);
    bytes.push(b'\n');
    bytes.extend_from_slice(good.as_bytes());
    for chunk in [1, 13, 4096] {
        let (res, rows, skipped) = read_all(&bytes, chunk);
        assert_eq!(res, Ok(()));
        assert_eq!(rows.len(), 2, "chunk {chunk}");
        assert_eq!(skipped, bad.len() as u64 + 2, "chunk {chunk}");
    }
}

/// A file begun before the counters existed keeps its old header and
/// rows; the rows appended after it have them: both read, the old ones
/// without counters (null in the JSON).
#[test]
fn rows_before_and_after_the_counters_read_in_one_file() {
    let data = b"id,start,wall_s,user_s,sys_s,cores,max_rss_mb,signal,exit\n\
        old.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0\n\
        new.c,2026-11-30T01:00:01Z,2.000,1.500,0.500,1.00,20,,0,7,8000, 9 ,10,11,12\n";
    let (res, rows, skipped) = read_all(data, 5);
    assert_eq!((res, skipped), (Ok(()), 0));
    assert_eq!(rows[0].counts, None);
    let c = rows[1].counts.unwrap();
    assert_eq!(c.values(), [7, 8000, 9, 10, 11, 12]);
    assert_eq!((c.majflt, c.minflt, c.nvcsw), (7, 8000, 9));
    assert_eq!((c.nivcsw, c.inblock, c.oublock), (10, 11, 12));
    let mut out = Vec::new();
    format_row(&rows[1], &mut out).unwrap();
    assert!(out.ends_with(b",0,7,8000,9,10,11,12\n"));
    let mut t = Table::new(5, 0);
    for a in &rows {
        t.observe(a);
    }
    let j = json(&t);
    assert!(j.contains("\"exit\":0,\"majflt\":7,\"minflt\":8000,\"nvcsw\":9,\"nivcsw\":10,\"inblock\":11,\"oublock\":12}"), "{j}");
    assert!(j.contains("\"exit\":0,\"majflt\":null,\"minflt\":null,\"nvcsw\":null,\"nivcsw\":null,\"inblock\":null,\"oublock\":null}"), "{j}");
}

#[test]
fn tolerant_forms_are_read() {
    // Fewer decimals, SIG prefix, CRLF, quoted id, spaces around numbers,
    // a numeric (realtime) signal and a negative exit.
    let data = b"\"cc, quoted.c\",2026-11-30T01:00:00Z,2, 1.5 ,0.25,0.9,7,SIGTERM,\r\n\
                     x,2026-11-30T01:00:00Z,2.5,0,0,0,0,34,-1\n";
    let (res, rows, skipped) = read_all(data, 3);
    assert_eq!((res, skipped), (Ok(()), 0));
    assert_eq!(rows[0].id.as_str(), "cc quoted.c");
    assert_eq!(
        (rows[0].wall_ms, rows[0].user_ms, rows[0].sys_ms),
        (2000, 1500, 250)
    );
    assert_eq!(rows[0].max_rss_kib, 7 * 1024);
    assert_eq!(rows[0].signal.as_deref(), Some("TERM"));
    assert_eq!(rows[0].exit, None);
    assert_eq!(rows[1].wall_ms, 2500);
    assert_eq!(rows[1].signal.as_deref(), Some("34"));
    assert_eq!(rows[1].exit, Some(-1));
}

#[test]
fn an_id_named_id_is_a_row_not_a_header() {
    // The coreutils `id` command, wrapped.
    let data = b"id,2026-11-30T01:00:00Z,0.002,0.001,0.001,1.00,2,,0\n";
    let (res, rows, skipped) = read_all(data, 8);
    assert_eq!((res, rows.len(), skipped), (Ok(()), 1, 0));
    assert_eq!(rows[0].id.as_str(), "id");
}

#[test]
fn a_resources_csv_is_an_error() {
    let (res, rows, _) = read_all(crate::tick::row::HEADER_FULL.as_bytes(), 16);
    assert_eq!((res, rows.len()), (Err(ActionsError::ResourceCsv), 0));
    // Only as the first record: later it is just a malformed row.
    let mut data = StdVec::from(HEADER.as_bytes());
    data.extend_from_slice(crate::tick::row::HEADER_COMPAT.as_bytes());
    let (res, _, skipped) = read_all(&data, 16);
    assert_eq!((res, skipped), (Ok(()), 1));
}

#[test]
fn cores_round_half_up_and_survive_extremes() {
    assert_eq!(act("", 0, 5, 5).cores_centi(), 0);
    assert_eq!(act("", 2000, 1950, 0).cores_centi(), 98); // 97.5
    assert_eq!(act("", 3000, 1000, 0).cores_centi(), 33); // 33.33
    assert_eq!(act("", 3000, 2000, 0).cores_centi(), 67); // 66.67
    assert_eq!(act("", 1, u64::MAX, u64::MAX).cores_centi(), u64::MAX);
    assert_eq!(act("", u64::MAX, u64::MAX, 0).cores_centi(), 100);
}

#[test]
fn bucket_boundaries() {
    let cases = [
        (0, 0),
        (4_999, 0),
        (5_000, 1),
        (19_999, 1),
        (20_000, 2),
        (59_999, 2),
        (60_000, 3),
        (299_999, 3),
        (300_000, 4),
        (u64::MAX, 4),
    ];
    for (ms, b) in cases {
        assert_eq!(bucket_of(ms), b, "{ms} ms");
    }
    let mut t = Table::new(0, 0);
    t.observe(&act("five", 5_000, 5_000, 0));
    assert_eq!(t.bucket(0).unwrap().actions, 0);
    assert_eq!(t.bucket(1).unwrap().actions, 1);
    assert_eq!(t.bucket(BUCKETS), None);
}

fn with_cores(t: &mut Table, wall_ms: u64, cores_centi: u64) {
    // cpu = cores × wall exactly when wall is a multiple of 100 ms.
    t.observe(&act("x", wall_ms, cores_centi * wall_ms / 100, 0));
}

#[test]
fn p90_on_known_distributions() {
    // 1..=100 hundredths: the 90th value is 0.90.
    let mut t = Table::new(0, 0);
    for c in 1..=100 {
        with_cores(&mut t, 1_000, c);
    }
    assert_eq!(t.bucket(0).unwrap().p90_cores_centi, 90);
    assert_eq!(t.bucket(0).unwrap().avg_cores_centi, 51); // 50.5 half up

    // Ten actions, nine at 1.00 and one at 8.00: p90 is 1.00.
    let mut t = Table::new(0, 0);
    for _ in 0..9 {
        with_cores(&mut t, 10_000, 100);
    }
    with_cores(&mut t, 10_000, 800);
    assert_eq!(t.bucket(1).unwrap().p90_cores_centi, 100);
    // An eleventh at 8.00: ceil(9.9) = 10th value is now 8.00.
    with_cores(&mut t, 10_000, 800);
    assert_eq!(t.bucket(1).unwrap().p90_cores_centi, 800);

    // One action: its own value, including 0.
    let mut t = Table::new(0, 0);
    with_cores(&mut t, 30_000, 0);
    assert_eq!(t.bucket(2).unwrap().p90_cores_centi, 0);

    // Above the histogram: the overflow bin reports the largest seen.
    let mut t = Table::new(0, 0);
    with_cores(&mut t, 100_000, 100);
    for c in [5_000, 9_600, 6_400] {
        with_cores(&mut t, 100_000, c);
    }
    assert_eq!(t.bucket(3).unwrap().p90_cores_centi, 9_600);
    // The last in-range bin is exact.
    let mut t = Table::new(0, 0);
    with_cores(&mut t, 400_000, CORE_BINS as u64 - 1);
    assert_eq!(t.bucket(4).unwrap().p90_cores_centi, 4095);
}

#[test]
fn signal_list_is_bounded_and_counts_the_rest() {
    let mut t = Table::new(0, 0);
    for i in 0..40u32 {
        let mut a = act("", 100, 0, 0);
        ufmt::uwrite!(a.id, "job{}", i).unwrap();
        a.signal = Some(Signal::try_from(signal_name(9).unwrap()).unwrap());
        t.observe(&a);
    }
    assert_eq!(t.signalled(), 40);
    assert_eq!(t.signal_ids().len(), SIGNAL_IDS);
    let s = text(&t);
    assert!(s.contains("actions that ended on a signal: 40\n  job0 (KILL)\n"));
    assert!(s.contains("  job31 (KILL)\n  and 8 more\n"), "{s}");
    assert!(json(&t).contains("\"more\":8}"));
}

#[test]
fn empty_table_renders() {
    let t = Table::new(10, 0);
    assert_eq!(
        text(&t),
        "0 actions | wall 0.00 s | cpu 0.00 s | average 0.00 cores while running\n\
             \nactions that ended on a signal: 0\n"
    );
    let j = json(&t);
    assert!(j.starts_with("{\"actions\":0,\"skipped_rows\":0,\"wall_s\":0.000,"));
    assert!(j.contains("\"avg_cores\":null,\"p90_cores\":null"));
    assert!(j.ends_with("\"actions\":[]}}\n"));
}

#[test]
fn from_usage_maps_the_end_and_round_trips() {
    use crate::followed::rusage::{End, Usage};
    let mut u = Usage {
        wall_ms: 812_700,
        user_ms: 4_900_000,
        sys_ms: 120_300,
        max_rss_kib: 7400 * 1024,
        counts: crate::followed::rusage::Counts::from_values([1, 2, 3, 4, 5, 6]),
        end: End::Exited(0),
    };
    let id = Id::try_from("rustc librustc_driver.rs").unwrap();
    let a = Action::from_usage(id.clone(), 1_796_000_585, &u);
    assert_eq!((a.signal.clone(), a.exit), (None, Some(0)));
    assert_eq!(a.cores_centi(), u.cores_centi());
    let mut out = Vec::new();
    format_row(&a, &mut out).unwrap();
    let (_, rows, _) = read_all(&out, 10);
    assert_eq!(rows, [a]);
    u.end = End::Signaled(11);
    let a = Action::from_usage(id.clone(), 0, &u);
    assert_eq!((a.signal.as_deref(), a.exit), (Some("SEGV"), None));
    u.end = End::Signaled(35);
    let a = Action::from_usage(id, 0, &u);
    assert_eq!(a.signal.as_deref(), Some("35"));
    format_row(&a, &mut out).unwrap();
    let (_, rows, skipped) = read_all(&out, 10);
    assert_eq!((rows.len(), skipped), (1, 0));
    assert_eq!(rows[0].signal.as_deref(), Some("35"));
}

#[test]
fn signal_names_follow_signal7() {
    let want = [
        (1, "HUP"),
        (2, "INT"),
        (3, "QUIT"),
        (6, "ABRT"),
        (7, "BUS"),
        (9, "KILL"),
        (10, "USR1"),
        (11, "SEGV"),
        (13, "PIPE"),
        (15, "TERM"),
        (16, "STKFLT"),
        (17, "CHLD"),
        (19, "STOP"),
        (24, "XCPU"),
        (26, "VTALRM"),
        (29, "IO"),
        (30, "PWR"),
        (31, "SYS"),
    ];
    for (n, name) in want {
        assert_eq!(signal_name(n), Some(name), "{n}");
    }
    for n in [0, -1, 32, 34, 64, i32::MIN, i32::MAX] {
        assert_eq!(signal_name(n), None, "{n}");
    }
    // Every name fits a Signal.
    for n in 1..=31 {
        assert!(signal_name(n).unwrap().len() <= SIGNAL_CAP);
    }
}

#[test]
fn action_ids() {
    let mut id = Id::new();
    let mut check = |label: Option<&str>, argv: &[&str], want: &str| {
        action_id(label, argv, &mut id);
        assert_eq!(id.as_str(), want, "{label:?} {argv:?}");
    };
    check(None, &["gcc", "-c", "a.c", "-o", "a.o"], "gcc a.c");
    // The last source argument, path kept.
    check(
        None,
        &["/usr/bin/cc", "x/one.c", "../two.cpp"],
        "cc ../two.cpp",
    );
    for ext in SOURCE_EXTS {
        let arg = std::format!("d/f.{ext}");
        check(None, &["cc", &arg], &std::format!("cc d/f.{ext}"));
    }
    // Not sources: other extensions, options, bare extensions, case.
    check(None, &["cc", "-o", "x.o", "lib.a", "-MF", "x.d"], "cc");
    check(
        None,
        &["cc", "-fsrc=y.c", ".c", "dir.c/", "X.CPP", "f.F"],
        "cc",
    );
    check(None, &["as", "start.S"], "as start.S");
    // Label wins, and is sanitized; a blank label is ignored.
    check(Some("stage 2, \"final\""), &["cc", "a.c"], "stage 2 final");
    check(Some("  "), &["cc", "a.c"], "cc a.c");
    // No argv, empty program.
    check(None, &[], "?");
    check(None, &["", "a.c"], "? a.c");
    check(None, &["dir/"], "?");
    // Sanitized: a comma in a path.
    check(None, &["cc", "we,ird \"dir\"/x.c"], "cc we ird dir /x.c");
    // A long path keeps its end.
    let long = std::format!("{}/deep/file.cpp", "a".repeat(300));
    check(None, &["c++", &long], &{
        let mut w = StdString::from("c++ ...");
        let keep = ID_CAP - 4 - 3;
        w.push_str(&long[long.len() - keep..]);
        w
    });
    action_id(None, &["c++", &long], &mut id);
    assert_eq!(id.len(), ID_CAP);
    // Multibyte: the cut lands on a character boundary.
    let wide = std::format!("{}.c", "é".repeat(100));
    action_id(None, &["cc", &wide], &mut id);
    assert!(id.starts_with("cc ...é"), "{id}");
    assert!(id.ends_with("é.c") && !id.contains('?'));
    // A huge program name leaves no room for the path.
    let prog = "p".repeat(200);
    action_id(None, &[&prog, "a.c"], &mut id);
    assert_eq!(id.as_str(), "p".repeat(ID_CAP));
}

// Table's size is a compile-time constant: nothing in it grows with
// the number of rows. This feeds a million actions and checks every
// figure against a naive computation that keeps them all.
#[test]
fn a_million_actions_stay_exact_in_fixed_memory() {
    const N: u64 = 1_000_000;
    const TOP: usize = 10;
    let size_before = core::mem::size_of::<Table>();
    assert!(size_before < 128 * 1024, "{size_before}");
    let mut t = std::boxed::Box::new(Table::new(TOP, 1_000));
    let mut all: StdVec<Action> = StdVec::with_capacity(N as usize);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..N {
        // xorshift64: deterministic spread of walls and cores.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let wall = match x % 10 {
            0..=5 => x % 5_000,
            6 | 7 => 5_000 + x % 15_000,
            8 => 20_000 + x % 40_000,
            _ => 60_000 + x % 400_000,
        };
        let cpu = wall * ((x >> 20) % 900) / 100;
        let mut a = act("", wall, cpu - cpu / 4, cpu / 4);
        ufmt::uwrite!(a.id, "job{}", i).unwrap();
        a.max_rss_kib = (x >> 30) % 8_000_000;
        if x % 1000 == 7 {
            a.signal = Some(Signal::try_from("KILL").unwrap());
        }
        t.observe(&a);
        all.push(a);
    }
    assert_eq!(core::mem::size_of_val(&*t), size_before);
    assert_eq!(t.actions(), N);
    assert_eq!(t.wall_ms(), all.iter().map(|a| a.wall_ms).sum::<u64>());
    assert_eq!(t.cpu_ms(), all.iter().map(|a| a.cpu_ms()).sum::<u64>());
    for i in 0..BUCKETS {
        let mut cores: StdVec<u64> = all
            .iter()
            .filter(|a| bucket_of(a.wall_ms) == i)
            .map(|a| a.cores_centi())
            .collect();
        cores.sort_unstable();
        let n = cores.len() as u64;
        let b = t.bucket(i).unwrap();
        assert!(n > 10_000, "bucket {i} has {n}");
        assert_eq!(b.actions, n);
        let sum: u64 = cores.iter().sum();
        assert_eq!(b.avg_cores_centi, (sum * 2 + n) / (2 * n), "bucket {i}");
        let rank = (n * 9).div_ceil(10) as usize;
        assert_eq!(b.p90_cores_centi, cores[rank - 1], "bucket {i}");
        let rss = all
            .iter()
            .filter(|a| bucket_of(a.wall_ms) == i)
            .map(|a| a.max_rss_kib)
            .max()
            .unwrap();
        assert_eq!(b.max_rss_kib, rss);
    }
    let mut longest: StdVec<&Action> = all.iter().filter(|a| a.wall_ms >= 1_000).collect();
    longest.sort_by_key(|a| core::cmp::Reverse(a.wall_ms)); // stable: file order on ties
    let want: StdVec<&Action> = longest.into_iter().take(TOP).collect();
    let got: StdVec<&Action> = t.longest().iter().collect();
    assert_eq!(got, want);
    let sig: StdVec<&Action> = all.iter().filter(|a| a.signal.is_some()).collect();
    assert_eq!(t.signalled(), sig.len() as u64);
    for ((id, _), a) in t.signal_ids().iter().zip(&sig) {
        assert_eq!(id, &a.id);
    }
}

/// The first line's totals never read `0.00 h`: seconds below a minute,
/// minutes below an hour, hours from there, one unit for both (the
/// larger's).
#[test]
fn totals_are_in_seconds_minutes_or_hours() {
    let first_line = |acts: &[(u64, u64)]| {
        let mut t = Table::new(0, 0);
        for &(wall, user) in acts {
            t.observe(&act("a", wall, user, 0));
        }
        StdString::from(text(&t).lines().next().unwrap())
    };
    assert_eq!(
        first_line(&[(1_234, 900), (266, 5)]),
        "2 actions | wall 1.50 s | cpu 0.91 s | average 0.60 cores while running"
    );
    // cpu over a minute puts both in minutes.
    assert_eq!(
        first_line(&[(30_000, 90_000)]),
        "1 action | wall 0.50 min | cpu 1.50 min | average 3.00 cores while running"
    );
    assert_eq!(
        first_line(&[(5_400_000, 5_400_000)]),
        "1 action | wall 1.50 h | cpu 1.50 h | average 1.00 cores while running"
    );
    assert_eq!(
        first_line(&[]),
        "0 actions | wall 0.00 s | cpu 0.00 s | average 0.00 cores while running"
    );
}
