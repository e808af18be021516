//! Tests of [`super`]: the fixture cases 31–33 and 35's stat file, the
//! column layouts, and the delta's wraps and resets.

extern crate std;
use super::*;
use std::vec::Vec;

macro_rules! fixture {
    ($p:literal) => {
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $p))
    };
}

/// The full counters of the line named `name`.
fn full(b: &[u8], name: &str) -> DiskCounters {
    match find(b, name.as_bytes()).unwrap().unwrap().stats {
        Stats::Full(c) => c,
        Stats::Partition(p) => panic!("{name}: partition layout {p:?}"),
    }
}

/// Every line, parsed.
fn all(b: &[u8]) -> Vec<Line<'_>> {
    lines(b).map(|l| parse_line(l).unwrap()).collect()
}

/// Read and written bytes summed over `it` (the four-counter partition
/// lines add nothing).
fn sum_bytes<'a>(it: impl Iterator<Item = &'a Line<'a>>) -> (u64, u64) {
    it.fold((0, 0), |(r, w), l| match l.stats {
        Stats::Full(c) => (r + c.read_bytes(), w + c.write_bytes()),
        Stats::Partition(_) => (r, w),
    })
}

#[test]
fn fixture_31_diskstats_pre_4_18_layouts() {
    let b = fixture!("31-diskstats-pre-4.18-layouts/proc/diskstats");
    let lines = all(b);
    assert_eq!(lines.len(), 10);
    for l in &lines {
        let Stats::Full(c) = l.stats else {
            panic!("{l:?}")
        };
        assert_eq!((c.discard, c.flush), (None, None), "{l:?}");
    }
    let m = find(b, b"mmcblk0").unwrap().unwrap();
    assert_eq!((m.major, m.minor, m.name), (179, 0, &b"mmcblk0"[..]));
    let c = full(b, "mmcblk0");
    assert_eq!((c.reads, c.reads_merged, c.sectors_read), (137, 183, 8619));
    assert_eq!(c.read_bytes(), 4_412_928);
    assert_eq!((c.read_ms, c.writes, c.sectors_written), (360, 0, 0));
    assert_eq!((c.in_flight, c.io_ticks_ms, c.weighted_ms), (0, 160, 360));
    let p1 = full(b, "mmcblk0p1");
    assert_eq!((p1.sectors_read, p1.read_bytes()), (6515, 3_335_680));
    let sda = full(b, "sda");
    assert_eq!(
        (sda.sectors_read, sda.read_bytes()),
        (2_163_548, 1_107_736_576)
    );
    assert_eq!(
        (sda.sectors_written, sda.write_bytes()),
        (699_690, 358_241_280)
    );
    assert_eq!(sda.io_ticks_ms, 182_512);
    // Whole disks only: sda, sr0, mmcblk0.
    let whole = ["sda", "sr0", "mmcblk0"];
    let disks = sum_bytes(
        lines
            .iter()
            .filter(|l| whole.iter().any(|w| w.as_bytes() == l.name)),
    );
    assert_eq!(disks, (1_112_149_504, 358_241_280));
    let everything = sum_bytes(lines.iter());
    assert!(everything.1 > disks.1 * 19 / 10, "{everything:?}");
    // Trailing spaces (sda6, sr0) are no extra column.
    assert_eq!(full(b, "sda6").weighted_ms, 2776);
    assert_eq!(full(b, "sr0"), DiskCounters::default());
}

#[test]
fn fixture_31_diskstats_pre_4_18_layouts_kernel_pre_2_6_25() {
    let b = fixture!("31-diskstats-pre-4.18-layouts/hosts/kernel-pre-2.6.25/proc/diskstats");
    let sda = full(b, "sda");
    assert_eq!(sda.sectors_read, 1_087_215);
    assert_eq!(
        (sda.sectors_written, sda.write_bytes()),
        (1_811_485_376, 927_480_512_512)
    );
    assert_eq!(sda.io_ticks_ms, 18_093_240);
    let sda1 = find(b, b"sda1").unwrap().unwrap();
    assert_eq!(
        sda1.stats,
        Stats::Partition(PartitionCounters {
            reads: 22754,
            sectors_read: 483_028,
            writes: 5_686_677,
            sectors_written: 45_493_256,
        })
    );
    for p in ["sda2", "sda3", "sda4"] {
        let l = find(b, p.as_bytes()).unwrap().unwrap();
        assert!(matches!(l.stats, Stats::Partition(_)), "{p}");
    }
    assert_eq!(full(b, "md0"), DiskCounters::default());
    assert_eq!(all(b).len(), 30);
    let stat = parse_stat(fixture!(
        "31-diskstats-pre-4.18-layouts/hosts/kernel-pre-2.6.25/sys/block/sda/stat"
    ))
    .unwrap();
    assert_eq!(stat.sectors_written, 1_811_640_504);
    assert_eq!(
        (stat.reads, stat.sectors_read, stat.io_ticks_ms),
        (30537, 1_087_303, 18_094_108)
    );
    assert_eq!((stat.discard, stat.flush), (None, None));
    // Read a moment after the diskstats line: a rate, not a reset.
    let d = delta(&sda, &stat, 1000).unwrap();
    assert_eq!(d.write_bytes, (1_811_640_504 - 1_811_485_376) * 512);
}

#[test]
fn fixture_32_diskstats_18_fields_nvme_hidden_paths() {
    let b = fixture!("32-diskstats-18-fields-nvme-hidden-paths/proc/diskstats");
    let n = find(b, b"nvme0n1").unwrap().unwrap();
    assert_eq!((n.major, n.minor), (259, 1));
    let c = full(b, "nvme0n1");
    assert_eq!((c.reads, c.sectors_read), (4_700_929, 2_373_217_865));
    assert_eq!(c.read_bytes(), 1_215_087_546_880);
    assert_eq!((c.writes, c.writes_merged), (154_543_530, 1_871_494_743));
    assert_eq!(c.sectors_written, 60_129_413_264);
    assert_eq!(c.write_bytes(), 30_786_259_591_168);
    assert_eq!(
        (c.in_flight, c.io_ticks_ms, c.weighted_ms),
        (0, 148_907_668, 935_043_132)
    );
    let d = c.discard.unwrap();
    assert_eq!(
        (
            d.discards,
            d.discards_merged,
            d.sectors_discarded,
            d.discard_ms
        ),
        (66_469, 0, 1_313_221_176, 140_219)
    );
    assert_eq!(d.sectors_discarded * SECTOR_BYTES, 672_369_242_112);
    assert_eq!(c.flush, None);
    // Discards are not writes: a discard-only interval writes nothing.
    let mut later = c;
    later.discard = Some(Discards {
        sectors_discarded: d.sectors_discarded + 1_000_000,
        ..d
    });
    assert_eq!(delta(&c, &later, 1000).unwrap().write_bytes, 0);
    // The 0:0 multipath path device: no device number matches it.
    assert_eq!(find_dev(b, 0, 0), None);
    assert_eq!(find_dev(b, 259, 1).unwrap().unwrap().name, b"nvme0n1");
    assert_eq!(find_dev(b, 259, 6).unwrap().unwrap().name, b"nvme0n1p1");
    assert_eq!(find_dev(b, 259, 9), None);
    let path = full(b, "nvme2c2n1");
    assert_eq!(path.sectors_read, 11832);
    assert_eq!(full(b, "loop0").io_ticks_ms, 240);
}

#[test]
fn fixture_33_diskstats_20_fields_partition_double_count() {
    let b = fixture!("33-diskstats-20-fields-partition-double-count/proc/diskstats");
    let c = full(b, "nvme0n1");
    assert_eq!(c.read_bytes(), 12_227_915_791_360);
    assert_eq!(c.write_bytes(), 12_475_407_023_616);
    assert_eq!((c.io_ticks_ms, c.weighted_ms), (28_495_684, 1_409_885_939));
    assert_eq!((c.reads, c.writes), (93_309_610, 95_197_224));
    assert_eq!(c.discard.unwrap().discards, 0);
    // Present with the value 0: not absent.
    assert_eq!(c.flush, Some(Flushes::default()));
    let lines = all(b);
    let parts = lines.iter().filter(|l| l.name != b"nvme0n1");
    let sectors = |f: fn(&DiskCounters) -> u64| {
        parts
            .clone()
            .map(|l| match l.stats {
                Stats::Full(c) => f(&c),
                Stats::Partition(_) => 0,
            })
            .sum::<u64>()
    };
    assert_eq!(sectors(|c| c.sectors_read), 23_882_634_382);
    assert_eq!(sectors(|c| c.sectors_written), 24_366_029_343);
    // The dool#32 bug: every line summed gives twice the disk.
    assert_eq!(sum_bytes(lines.iter()).0, 24_455_824_594_944);
}

#[test]
fn fixture_33_diskstats_20_fields_partition_double_count_kvm_vda_flush() {
    let b = fixture!(
        "33-diskstats-20-fields-partition-double-count/hosts/kvm-vda-flush/proc/diskstats"
    );
    let flush = |n: &str| full(b, n).flush.unwrap();
    assert_eq!(
        flush("vda"),
        Flushes {
            flushes: 9_824_296,
            flush_ms: 2_762_718
        }
    );
    assert_eq!(
        flush("vdb"),
        Flushes {
            flushes: 46_113_207,
            flush_ms: 3_607_532
        }
    );
    assert_eq!(flush("vda1"), Flushes::default());
    assert_eq!(flush("vda2"), Flushes::default());
    let sr0 = find(b, b"sr0").unwrap().unwrap();
    assert_eq!((sr0.major, sr0.minor), (11, 0));
    assert_eq!(full(b, "sr0").sectors_read, 208);
    for i in 0..8 {
        let name = std::format!("loop{i}");
        assert_eq!(
            full(b, &name),
            DiskCounters {
                discard: Some(Discards::default()),
                flush: Some(Flushes::default()),
                ..DiskCounters::default()
            }
        );
    }
    assert_eq!(find_dev(b, 252, 16).unwrap().unwrap().name, b"vdb");
}

#[test]
fn fixture_35_mount_to_diskstats_pi_root_stat_file() {
    let b = fixture!(
        "35-mount-to-diskstats-pi-root/sys/devices/platform/soc/3f202000.mmc/mmc_host/mmc0/mmc0:59b4/block/mmcblk0/stat"
    );
    let c = parse_stat(b).unwrap();
    assert_eq!(
        (c.sectors_read, c.read_bytes(), c.io_ticks_ms),
        (8619, 4_412_928, 160)
    );
    assert_eq!(
        (c.discard, c.flush),
        (Some(Discards::default()), Some(Flushes::default()))
    );
}

#[test]
fn layouts_that_are_no_kernel_s_are_rejected() {
    let malformed = ParseError::at(ParseErrorKind::Malformed, 1);
    // 12, 13, 16, 19 columns: never guessed.
    for n in [9, 10, 13, 16] {
        let line = std::format!("8 0 sda{}", " 1".repeat(n));
        assert_eq!(parse_line(line.as_bytes()), Err(malformed), "{n}");
        assert_eq!(parse_stat(" 1".repeat(n).as_bytes()), Err(malformed), "{n}");
    }
    // A four-value stat file is no current layout either.
    assert_eq!(parse_stat(b"1 2 3 4"), Err(malformed));
    assert_eq!(parse_stat(b""), Err(malformed));
    // More than 17 values: a later kernel's fields, ignored unparsed.
    let more = std::format!("{} x", " 7".repeat(17));
    assert_eq!(
        parse_stat(more.as_bytes()).unwrap().flush,
        Some(Flushes {
            flushes: 7,
            flush_ms: 7
        })
    );
    let more = std::format!("8 0 sda{} 1 2", " 7".repeat(17));
    assert!(parse_line(more.as_bytes()).is_ok());
    assert_eq!(parse_line(b"8 0"), Err(ParseError::missing("name")));
    assert_eq!(parse_line(b""), Err(ParseError::missing("major")));
    let bad = Err(ParseError::at(ParseErrorKind::BadNumber, 1));
    assert_eq!(parse_line(b"4294967296 0 x 1 2 3 4"), bad);
    assert_eq!(parse_line(b"8 0 sda 1 2 -3 4"), bad);
    // An error found by `find` carries its line.
    let b = b"8 0 sda 1 1 1 1 1 1 1 1 1 1 1\n8 1 sda1 1 2 3\n";
    assert_eq!(
        find(b, b"sda1"),
        Some(Err(ParseError::at(ParseErrorKind::Malformed, 2)))
    );
    assert_eq!(find(b, b"sd"), None);
}

fn at(sectors_read: u64, sectors_written: u64, io_ticks_ms: u64) -> DiskCounters {
    DiskCounters {
        sectors_read,
        sectors_written,
        io_ticks_ms,
        ..DiskCounters::default()
    }
}

#[test]
fn delta_gives_bytes_and_utilisation_capped_at_a_thousand() {
    let d = delta(&at(0, 0, 0), &at(2048, 4096, 250), 1000).unwrap();
    assert_eq!(
        (d.read_bytes, d.write_bytes, d.busy_ms, d.wall_ms),
        (1 << 20, 2 << 20, 250, 1000)
    );
    assert_eq!(d.util_permille(), 250);
    // io_ticks a jiffy ahead of the wall clock: capped.
    assert_eq!(
        delta(&at(0, 0, 0), &at(0, 0, 1004), 1000)
            .unwrap()
            .util_permille(),
        1000
    );
    // Rounded half up.
    assert_eq!(
        delta(&at(0, 0, 0), &at(0, 0, 1), 2000)
            .unwrap()
            .util_permille(),
        1
    );
    assert_eq!(
        delta(&at(0, 0, 0), &at(0, 0, 1), 2001)
            .unwrap()
            .util_permille(),
        0
    );
    // Idle.
    assert_eq!(
        delta(&at(5, 5, 5), &at(5, 5, 5), 1000)
            .unwrap()
            .util_permille(),
        0
    );
}

#[test]
fn a_zero_interval_gives_no_rate() {
    assert_eq!(delta(&at(0, 0, 0), &at(1, 1, 1), 0), None);
}

#[test]
fn io_ticks_wrap_at_32_bits() {
    let top = u64::from(u32::MAX);
    let d = delta(&at(0, 0, top - 299), &at(0, 0, 200), 1000).unwrap();
    assert_eq!((d.busy_ms, d.util_permille()), (500, 500));
    // A "wrap" that would be busier than the wall allows is a reset.
    assert_eq!(delta(&at(0, 0, 5_000_000), &at(0, 0, 100), 1000), None);
    // A 64-bit io_ticks going backwards is no wrap.
    assert_eq!(delta(&at(0, 0, top + 10), &at(0, 0, 5), 1000), None);
}

#[test]
fn a_reset_device_gives_no_rate_never_a_huge_one() {
    // Re-created: every count back near zero.
    let before = DiskCounters {
        reads: 900,
        writes: 800,
        ..at(1_000_000, 2_000_000, 50_000)
    };
    let after = DiskCounters {
        reads: 3,
        writes: 2,
        ..at(10, 20, 50_100)
    };
    assert_eq!(delta(&before, &after, 1000), None);
    assert_eq!(delta(&at(10, 0, 0), &at(9, 5, 0), 1000), None);
    assert_eq!(delta(&at(0, 10, 0), &at(5, 9, 0), 1000), None);
    let fewer_reads = DiskCounters {
        reads: 1,
        ..at(0, 0, 0)
    };
    assert_eq!(
        delta(
            &DiskCounters {
                reads: 2,
                ..at(0, 0, 0)
            },
            &fewer_reads,
            1000
        ),
        None
    );
}
