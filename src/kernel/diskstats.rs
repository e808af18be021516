//! Block-device I/O counters: one line of `/proc/diskstats`, or a device's
//! own `/sys/dev/block/MAJ:MIN/stat` (`/sys/block/NAME/stat`).
//!
//! A diskstats line is `major minor name` then the counters; a `stat` file
//! is the counters alone. Fields are separated by runs of spaces (the
//! kernel right-aligns with `%4d %7d`, `stat` pads each value to width 8;
//! copies lose the alignment), so a line is split on white space, never on
//! columns. The counters, in `Documentation/admin-guide/iostats.rst`'s
//! numbering:
//!
//! | # | field | unit | since |
//! |---|---|---|---|
//! | 1–4 | reads completed, merged, sectors read, ms reading | –, –, sectors, ms | |
//! | 5–8 | writes completed, merged, sectors written, ms writing | –, –, sectors, ms | |
//! | 9 | I/Os in flight | – | |
//! | 10 | ms doing I/O (`io_ticks`) | ms | |
//! | 11 | weighted ms doing I/O | ms | |
//! | 12–15 | discards completed, merged, sectors discarded, ms | –, –, sectors, ms | 4.18 |
//! | 16–17 | flushes completed, ms flushing | –, ms | 5.5 |
//!
//! So a diskstats line has 14, 18 or 20 columns and a `stat` file 11, 15 or
//! 17 values. Kernels before 2.6.25 printed partitions with four counters
//! only (`3 1 hda1 35486 38030 38030 38030`: reads, sectors read, writes,
//! sectors written): such a line is [`Stats::Partition`], never read as the
//! first four of eleven.
//!
//! A sector here is 512 bytes whatever the device's logical block size
//! (the block layer counts in `SECTOR_SHIFT` 9 units). The time fields are
//! printed as `unsigned int` (32 bits: they wrap after 49.7 days of busy
//! time); the counts are `unsigned long`: 64 bits on a 64-bit kernel, 32
//! on a 32-bit one (armhf), where sectors wrap after 2 TiB
//! ([`crate::kernel::arch`]). Flush counters are not kept for partitions
//! (always 0 there).
//!
//! A device that hangs (an SD card or a USB bridge that stops answering)
//! keeps its requests in flight (field 9) and completes none; the kernels
//! from 5.0 (`update_io_ticks`, counted at a request's start and end) until
//! `diskstats_show` learnt to bring `io_ticks` up to date while requests are
//! in flight (commit 86d7331299fd, 2022; some vendor kernels later or never)
//! then leave `io_ticks` flat: the interval reads 0 % busy. [`delta`] calls
//! it stalled ([`DiskDelta::stalled`]).
//!
//! # References
//! `Documentation/admin-guide/iostats.rst`, `Documentation/ABI/stable/sysfs-block`
//! (`/sys/block/<disk>/stat`), proc(5) (`/proc/diskstats`), kernel
//! `block/genhd.c` (`diskstats_show`, `part_stat_show`).

use crate::kernel::arch::LongWidth;
use crate::kernel::parse::{ParseError, ParseErrorKind, fields, lines, parse_u64};

/// Path of the all-devices table, relative to the root.
pub const PATH: &str = "proc/diskstats";

/// Bytes in one sector of these counters: always 512 (`SECTOR_SHIFT`).
pub const SECTOR_BYTES: u64 = 512;

/// Read buffer for one device's `stat` file, in bytes.
///
/// 17 values of at most 20 digits, each padded to width 8 and followed by a
/// space, and a newline: at most 358 bytes; a fresh disk's file is 17 × 9 =
/// 153 bytes. 512 leaves room for two more fields.
pub const STAT_BUF_LEN: usize = 512;

/// The discard counters (iostats fields 12–15, since Linux 4.18).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Discards {
    /// Discards completed successfully.
    pub discards: u64,
    /// Adjacent discards merged into one.
    pub discards_merged: u64,
    /// Sectors discarded, 512 bytes each. Not writes.
    pub sectors_discarded: u64,
    /// Time spent discarding, in ms.
    pub discard_ms: u64,
}

/// The flush counters (iostats fields 16–17, since Linux 5.5; 0 for
/// partitions, which do not track them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flushes {
    /// Flush requests completed successfully.
    pub flushes: u64,
    /// Time spent flushing, in ms.
    pub flush_ms: u64,
}

/// A device's counters (iostats fields 1–17), each as the kernel printed it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// Field 1: reads completed.
    pub reads: u64,
    /// Field 2: adjacent reads merged.
    pub reads_merged: u64,
    /// Field 3: sectors read, 512 bytes each ([`Self::read_bytes`]).
    pub sectors_read: u64,
    /// Field 4: time spent reading, in ms (32 bits in the kernel).
    pub read_ms: u64,
    /// Field 5: writes completed.
    pub writes: u64,
    /// Field 6: adjacent writes merged.
    pub writes_merged: u64,
    /// Field 7: sectors written, 512 bytes each ([`Self::write_bytes`]).
    pub sectors_written: u64,
    /// Field 8: time spent writing, in ms (32 bits in the kernel).
    pub write_ms: u64,
    /// Field 9: I/Os issued to the driver and not yet completed (a gauge).
    pub in_flight: u64,
    /// Field 10: time the device had I/O in flight, in ms (`io_ticks`; 32
    /// bits in the kernel, so it wraps). Its rise over a wall interval is
    /// the utilisation.
    pub io_ticks_ms: u64,
    /// Field 11: weighted time doing I/O, in ms. Its meaning has changed
    /// across kernels (on 5.x+ the sum of the per-direction times): never
    /// checked against the other fields.
    pub weighted_ms: u64,
    /// Fields 12–15; `None` when the kernel does not print them (before
    /// 4.18), not zeros.
    pub discard: Option<Discards>,
    /// Fields 16–17; `None` when the kernel does not print them (before
    /// 5.5), not zeros.
    pub flush: Option<Flushes>,
}

impl DiskCounters {
    /// Bytes read: sectors read × 512 (saturating).
    pub fn read_bytes(&self) -> u64 {
        self.sectors_read.saturating_mul(SECTOR_BYTES)
    }

    /// Bytes written: sectors written × 512 (saturating); discarded sectors
    /// are not included.
    pub fn write_bytes(&self) -> u64 {
        self.sectors_written.saturating_mul(SECTOR_BYTES)
    }
}

/// The four counters a partition line had before Linux 2.6.25.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionCounters {
    /// Reads issued to the partition.
    pub reads: u64,
    /// Sectors read, 512 bytes each.
    pub sectors_read: u64,
    /// Writes issued to the partition.
    pub writes: u64,
    /// Sectors written, 512 bytes each.
    pub sectors_written: u64,
}

/// What a diskstats line carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stats {
    /// The 11, 15 or 17 counters of every current line.
    Full(DiskCounters),
    /// A partition line of a kernel before 2.6.25: four counters only.
    Partition(PartitionCounters),
}

/// One line of `/proc/diskstats`, the name borrowed from the caller's
/// buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// Column 1: the device's major number (0 for hidden devices such as
    /// NVMe multipath paths `nvmeXcYnZ`, which are no block device number).
    pub major: u32,
    /// Column 2: the device's minor number.
    pub minor: u32,
    /// Column 3: the kernel's name (`sda`, `mmcblk0p1`, `dm-0`).
    pub name: &'a [u8],
    /// Columns 4 and on.
    pub stats: Stats,
}

/// Most values read: fields past the 17th (a future kernel's) are ignored
/// unparsed, as new fields are appended.
const MAX_VALUES: usize = 17;

/// The counters from the values of a line, `n` of them read (more may have
/// been ignored): 11, 15 or 17 (or more) make a [`DiskCounters`].
fn counters(v: &[u64; MAX_VALUES], n: usize) -> Option<DiskCounters> {
    if !matches!(n, 11 | 15 | 17) {
        return None;
    }
    Some(DiskCounters {
        reads: v[0],
        reads_merged: v[1],
        sectors_read: v[2],
        read_ms: v[3],
        writes: v[4],
        writes_merged: v[5],
        sectors_written: v[6],
        write_ms: v[7],
        in_flight: v[8],
        io_ticks_ms: v[9],
        weighted_ms: v[10],
        discard: (n >= 15).then(|| Discards {
            discards: v[11],
            discards_merged: v[12],
            sectors_discarded: v[13],
            discard_ms: v[14],
        }),
        flush: (n >= 17).then(|| Flushes {
            flushes: v[15],
            flush_ms: v[16],
        }),
    })
}

/// Parses the values of `f` (what follows the name, or a `stat` file) into
/// `v`; returns how many were read, at most [`MAX_VALUES`] (the rest are
/// left unparsed).
fn values<'a>(
    f: impl Iterator<Item = &'a [u8]>,
    v: &mut [u64; MAX_VALUES],
) -> Result<usize, ParseError> {
    let mut n = 0;
    for (slot, x) in v.iter_mut().zip(f) {
        *slot = parse_u64(x).ok_or(ParseError::at(ParseErrorKind::BadNumber, 1))?;
        n += 1;
    }
    Ok(n)
}

/// Parses one `/sys/dev/block/MAJ:MIN/stat` (or `/sys/block/NAME/stat`)
/// file: 11, 15 or 17 values, leading and repeated white space accepted,
/// values past the 17th ignored.
///
/// # Errors
/// [`ParseErrorKind::BadNumber`] for a value that is not a decimal u64;
/// [`ParseErrorKind::Malformed`] for any other count of values (the four
/// of a pre-2.6.25 partition included). Errors carry line 1.
///
/// ```
/// use headroom::kernel::diskstats::parse_stat;
/// let c = parse_stat(b"  137  183  8619  360  0  0  0  0  0  160  360\n").unwrap();
/// assert_eq!((c.read_bytes(), c.io_ticks_ms, c.discard), (4_412_928, 160, None));
/// assert!(parse_stat(b"1 2 3 4\n").is_err());
/// ```
pub fn parse_stat(b: &[u8]) -> Result<DiskCounters, ParseError> {
    let mut v = [0u64; MAX_VALUES];
    let n = values(fields(b), &mut v)?;
    counters(&v, n).ok_or(ParseError::at(ParseErrorKind::Malformed, 1))
}

/// Parses one line of `/proc/diskstats`: major, minor, name, then 11, 15 or
/// 17 counters (14, 18 or 20 columns; more are ignored), or the 4 of a
/// pre-2.6.25 partition (7 columns).
///
/// # Errors
/// [`ParseErrorKind::Missing`] for an absent major, minor or name;
/// [`ParseErrorKind::BadNumber`] for a non-decimal number (a major or minor
/// past u32 included); [`ParseErrorKind::Malformed`] for another column
/// count. Errors carry line 1; [`find`] gives the real line.
pub fn parse_line(line: &[u8]) -> Result<Line<'_>, ParseError> {
    let bad = ParseError::at(ParseErrorKind::BadNumber, 1);
    let mut f = fields(line);
    let major = f.next().ok_or(ParseError::missing("major"))?;
    let minor = f.next().ok_or(ParseError::missing("minor"))?;
    let name = f.next().ok_or(ParseError::missing("name"))?;
    let number = |x| parse_u64(x).and_then(|v| u32::try_from(v).ok()).ok_or(bad);
    let (major, minor) = (number(major)?, number(minor)?);
    let mut v = [0u64; MAX_VALUES];
    let n = values(f, &mut v)?;
    let stats = match (n, counters(&v, n)) {
        (_, Some(c)) => Stats::Full(c),
        (4, None) => Stats::Partition(PartitionCounters {
            reads: v[0],
            sectors_read: v[1],
            writes: v[2],
            sectors_written: v[3],
        }),
        _ => return Err(ParseError::at(ParseErrorKind::Malformed, 1)),
    };
    Ok(Line {
        major,
        minor,
        name,
        stats,
    })
}

/// The line of `/proc/diskstats` for the device named `name` (exactly, as
/// the kernel names it: `mmcblk0`, not `/dev/mmcblk0`), parsed; `None`
/// when no line has that name. An error carries the line's number.
pub fn find<'a>(b: &'a [u8], name: &[u8]) -> Option<Result<Line<'a>, ParseError>> {
    find_where(b, |line| fields(line).nth(2) == Some(name))
}

/// The line for device number `major:minor`; `None` when absent and always
/// for major 0 (hidden devices such as NVMe multipath paths are printed as
/// `0 0`, which is no device number). An error carries the line's number.
pub fn find_dev(b: &[u8], major: u32, minor: u32) -> Option<Result<Line<'_>, ParseError>> {
    if major == 0 {
        return None;
    }
    let is = |x: Option<&[u8]>, want: u32| x.and_then(parse_u64) == Some(u64::from(want));
    find_where(b, |line| {
        let mut f = fields(line);
        is(f.next(), major) && is(f.next(), minor)
    })
}

/// The first line whose fields satisfy `pick`, parsed, its error carrying
/// its 1-based line number.
fn find_where(b: &[u8], pick: impl Fn(&[u8]) -> bool) -> Option<Result<Line<'_>, ParseError>> {
    let (i, line) = lines(b).enumerate().find(|(_, line)| pick(line))?;
    Some(parse_line(line).map_err(|e| ParseError::at(e.kind, i + 1)))
}

/// The shortest interval a stall is judged over, in ms: a request to an
/// SD card or a USB disk completes well within a second even under load,
/// so a second with requests in flight and none completed is a hang, while
/// reads a few ms apart (`record --interval 0` under `O_DIRECT` writes)
/// often see one request still being served and prove nothing.
pub const STALL_MIN_MS: u64 = 1000;

/// What a device did over one interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskDelta {
    /// Bytes read in the interval (Δ sectors read × 512).
    pub read_bytes: u64,
    /// Bytes written in the interval (Δ sectors written × 512; discards
    /// are not writes).
    pub write_bytes: u64,
    /// Rise of `io_ticks` in the interval, in ms (across a 32-bit wrap).
    pub busy_ms: u64,
    /// The wall-clock interval, in ms (> 0).
    pub wall_ms: u64,
    /// Requests were in flight at both ends and none completed (no read,
    /// write, discard or flush): the device hung for the whole interval.
    /// `None` for an interval shorter than [`STALL_MIN_MS`], too short to
    /// tell a hang from requests still being served.
    pub stalled: Option<bool>,
}

impl DiskDelta {
    /// Utilisation in per-mille: `busy_ms × 1000 / wall_ms`, rounded half
    /// up, at most 1000 (`io_ticks` is kept in jiffies and can run a tick
    /// ahead of the wall clock); `None` for a stalled interval whose
    /// `io_ticks` did not rise, which is no measure of an idle device.
    pub fn util_permille(&self) -> Option<u16> {
        if self.stalled == Some(true) && self.busy_ms == 0 {
            return None;
        }
        let w = u128::from(self.wall_ms.max(1));
        let p = (u128::from(self.busy_ms) * 2000 + w) / (w * 2);
        Some(u16::try_from(p.min(1000)).unwrap_or(1000))
    }
}

/// The most a count may rise per ms of wall time for a drop to be read as
/// a 32-bit wrap: 16,384 sectors (8 GiB/s) or requests, more than any disk
/// a 32-bit board drives. A larger wrapped rise is a reset (a re-created
/// device whose new count is small), not a rate of terabytes a second.
pub const MAX_WRAP_RISE_PER_MS: u64 = 16_384;

/// The rise of a count (`unsigned long`) from `prev` to `cur`. `wrap_most`
/// is `None` on a 64-bit kernel (any drop is a reset: `None`); on a 32-bit
/// one it is the most a wrapped rise may be: a drop from the top half of
/// 32 bits (`prev` ≥ 2^31) whose `cur + 2^32 − prev` is no more is one
/// wrap, any other drop a reset.
fn rise(prev: u64, cur: u64, wrap_most: Option<u64>) -> Option<u64> {
    const WRAP: u64 = 1 << 32;
    match (cur.checked_sub(prev), wrap_most) {
        (Some(d), _) => Some(d),
        (None, Some(most)) if (WRAP / 2..WRAP).contains(&prev) && cur < WRAP => {
            Some(cur + WRAP - prev).filter(|&d| d <= most)
        }
        (None, _) => None,
    }
}

/// Requests completed from `prev` to `cur` (reads, writes, discards,
/// flushes), across the same wraps as [`rise`]; `None` on a reset.
fn completed(prev: &DiskCounters, cur: &DiskCounters, wrap_most: Option<u64>) -> Option<u64> {
    let discards = |c: &DiskCounters| c.discard.map_or(0, |d| d.discards);
    let flushes = |c: &DiskCounters| c.flush.map_or(0, |f| f.flushes);
    let n = rise(prev.reads, cur.reads, wrap_most)?
        .saturating_add(rise(prev.writes, cur.writes, wrap_most)?)
        .saturating_add(rise(discards(prev), discards(cur), wrap_most).unwrap_or(1))
        .saturating_add(rise(flushes(prev), flushes(cur), wrap_most).unwrap_or(1));
    Some(n)
}

/// The interval from `prev` to `cur`, `wall_ms` apart, on a kernel whose
/// counts are `width` wide ([`crate::kernel::arch::of_root`]); `None`
/// when there is no honest rate for it:
/// - `wall_ms` is 0;
/// - a count (reads, writes, sectors read or written) went backwards and
///   it is no 32-bit wrap: the device was re-created, and the interval is
///   lost rather than reported as a huge rate. On a 32-bit kernel a count
///   that drops from 2^31 or more wrapped once: its rise is
///   `cur + 2^32 − prev`, when that is at most [`MAX_WRAP_RISE_PER_MS`]
///   per ms of `wall_ms`; on a 64-bit kernel a drop is always a reset;
/// - `io_ticks` went backwards and it is no 32-bit wrap: `prev` above
///   2^32 − 1, or a wrapped rise larger than twice `wall_ms` plus a second
///   (a device busy all the time cannot gain more than the wall time).
///
/// A `io_ticks` lower than before with `prev` < 2^32 is a wrap: its rise
/// is `cur + 2^32 − prev`.
///
/// ```
/// use headroom::kernel::arch::LongWidth::{Bits32, Bits64};
/// use headroom::kernel::diskstats::{DiskCounters, delta};
/// let a = DiskCounters { sectors_written: 2048, io_ticks_ms: u32::MAX as u64 - 99, ..Default::default() };
/// let b = DiskCounters { sectors_written: 4096, io_ticks_ms: 400, ..a };
/// let d = delta(&a, &b, 1000, Bits64).unwrap();
/// assert_eq!((d.write_bytes, d.busy_ms, d.util_permille()), (1_048_576, 500, Some(500)));
/// assert_eq!(delta(&b, &a, 1000, Bits64), None); // sectors went backwards: a reset
/// let top = DiskCounters { sectors_read: (1 << 32) - 2048, ..a };
/// let wrapped = DiskCounters { sectors_read: 2048, ..a };
/// assert_eq!(delta(&top, &wrapped, 1000, Bits32).unwrap().read_bytes, 2 << 20);
/// assert_eq!(delta(&top, &wrapped, 1000, Bits64), None);
/// ```
pub fn delta(
    prev: &DiskCounters,
    cur: &DiskCounters,
    wall_ms: u64,
    width: LongWidth,
) -> Option<DiskDelta> {
    if wall_ms == 0 {
        return None;
    }
    let wrap_most =
        (width == LongWidth::Bits32).then(|| wall_ms.saturating_mul(MAX_WRAP_RISE_PER_MS));
    let read = rise(prev.sectors_read, cur.sectors_read, wrap_most)?;
    let written = rise(prev.sectors_written, cur.sectors_written, wrap_most)?;
    let done = completed(prev, cur, wrap_most)?;
    let busy = match cur.io_ticks_ms.checked_sub(prev.io_ticks_ms) {
        Some(d) => d,
        None => {
            let wrap = 1u64 << 32;
            let d = (prev.io_ticks_ms < wrap && cur.io_ticks_ms < wrap)
                .then(|| cur.io_ticks_ms + wrap - prev.io_ticks_ms)?;
            let most = wall_ms.saturating_mul(2).saturating_add(1000);
            (d <= most).then_some(d)?
        }
    };
    Some(DiskDelta {
        read_bytes: read.saturating_mul(SECTOR_BYTES),
        write_bytes: written.saturating_mul(SECTOR_BYTES),
        busy_ms: busy,
        wall_ms,
        stalled: (wall_ms >= STALL_MIN_MS)
            .then_some(prev.in_flight > 0 && cur.in_flight > 0 && done == 0),
    })
}

#[cfg(test)]
mod tests {
    //! Tests of [`super`]: the fixture cases 31–33 and 35's stat file, the
    //! column layouts, and the delta's wraps and resets.

    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// [`super::delta`] on a 64-bit kernel: no count wraps.
    fn delta(p: &DiskCounters, c: &DiskCounters, wall_ms: u64) -> Option<DiskDelta> {
        super::delta(p, c, wall_ms, LongWidth::Bits64)
    }

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
        assert_eq!(d.util_permille(), Some(250));
        // io_ticks a jiffy ahead of the wall clock: capped.
        assert_eq!(
            delta(&at(0, 0, 0), &at(0, 0, 1004), 1000)
                .unwrap()
                .util_permille(),
            Some(1000)
        );
        // Rounded half up.
        assert_eq!(
            delta(&at(0, 0, 0), &at(0, 0, 1), 2000)
                .unwrap()
                .util_permille(),
            Some(1)
        );
        assert_eq!(
            delta(&at(0, 0, 0), &at(0, 0, 1), 2001)
                .unwrap()
                .util_permille(),
            Some(0)
        );
        // Idle.
        assert_eq!(
            delta(&at(5, 5, 5), &at(5, 5, 5), 1000)
                .unwrap()
                .util_permille(),
            Some(0)
        );
    }

    #[test]
    fn fixture_47_diskstats_stalled_in_flight() {
        let stat = |p: &str| {
            let path = std::format!(
                "{}/tests/fixtures/47-diskstats-stalled-in-flight/{p}",
                env!("CARGO_MANIFEST_DIR")
            );
            parse_stat(&std::fs::read(path).unwrap()).unwrap()
        };
        let (a, b) = (
            stat("t0/sys/block/mmcblk0/stat"),
            stat("t1/sys/block/mmcblk0/stat"),
        );
        assert_eq!((a.in_flight, b.in_flight), (3, 3));
        let d = delta(&a, &b, 1000).unwrap();
        assert_eq!(d.stalled, Some(true));
        assert_eq!((d.busy_ms, d.read_bytes, d.write_bytes), (0, 0, 0));
        assert_eq!(d.util_permille(), None, "a hang is no 0 % busy");
        let host = "hosts/io-ticks-advancing";
        let (a, b) = (
            stat(&std::format!("{host}/t0/sys/block/sda/stat")),
            stat(&std::format!("{host}/t1/sys/block/sda/stat")),
        );
        let d = delta(&a, &b, 5000).unwrap();
        assert_eq!(d.stalled, Some(true));
        assert_eq!((d.busy_ms, d.util_permille()), (5000, Some(1000)));
        let host = "hosts/busy-not-stalled";
        let (a, b) = (
            stat(&std::format!("{host}/t0/sys/block/sda/stat")),
            stat(&std::format!("{host}/t1/sys/block/sda/stat")),
        );
        let d = delta(&a, &b, 5000).unwrap();
        assert_eq!(d.stalled, Some(false));
        assert_eq!((d.write_bytes, d.util_permille()), (112 << 20, Some(1000)));
        // In flight at one end only: requests started or finished, no hang.
        let idle_before = DiskCounters { in_flight: 0, ..a };
        assert_eq!(
            delta(&idle_before, &idle_before, 1000).unwrap().stalled,
            Some(false)
        );
        let stuck = DiskCounters { in_flight: 1, ..a };
        assert_eq!(
            delta(&idle_before, &stuck, 1000).unwrap().stalled,
            Some(false)
        );
        assert_eq!(delta(&stuck, &stuck, 1000).unwrap().stalled, Some(true));
        // Too short to tell: reads under a second apart judge no stall.
        assert_eq!(
            delta(&stuck, &stuck, STALL_MIN_MS - 1).unwrap().stalled,
            None
        );
        assert_eq!(
            delta(&stuck, &stuck, STALL_MIN_MS).unwrap().stalled,
            Some(true)
        );
        // A flush completing is progress.
        let flushed = DiskCounters {
            flush: a.flush.map(|f| Flushes {
                flushes: f.flushes + 1,
                ..f
            }),
            ..stuck
        };
        assert_eq!(delta(&stuck, &flushed, 1000).unwrap().stalled, Some(false));
    }

    #[test]
    fn fixture_48_diskstats_32bit_sector_wrap() {
        let case = std::format!(
            "{}/tests/fixtures/48-diskstats-32bit-sector-wrap",
            env!("CARGO_MANIFEST_DIR")
        );
        let read = |p: &str| std::fs::read(std::format!("{case}/{p}")).unwrap();
        let (t0, t1) = (read("t0/proc/diskstats"), read("t1/proc/diskstats"));
        let arch = read("proc/sys/kernel/arch");
        let width = crate::kernel::arch::long_width(&arch);
        assert_eq!(width, LongWidth::Bits32);
        let d = super::delta(&full(&t0, "mmcblk0"), &full(&t1, "mmcblk0"), 1000, width).unwrap();
        assert_eq!((d.read_bytes, d.write_bytes), (10 << 20, 20 << 20));
        assert_eq!(
            (d.busy_ms, d.util_permille(), d.stalled),
            (620, Some(620), Some(false))
        );
        // The partition: reads in the top half without a wrap, writes wrapped.
        let p2 = super::delta(
            &full(&t0, "mmcblk0p2"),
            &full(&t1, "mmcblk0p2"),
            1000,
            width,
        )
        .unwrap();
        assert_eq!((p2.read_bytes, p2.write_bytes), (10 << 20, 20 << 20));
        // The same tables under a 64-bit kernel: a reset, no rate.
        let arm64 = read("hosts/aarch64-kernel/proc/sys/kernel/arch");
        let width = crate::kernel::arch::long_width(&arm64);
        assert_eq!(width, LongWidth::Bits64);
        let (u0, u1) = (
            read("hosts/aarch64-kernel/t0/proc/diskstats"),
            read("hosts/aarch64-kernel/t1/proc/diskstats"),
        );
        assert_eq!(
            super::delta(&full(&u0, "mmcblk0"), &full(&u1, "mmcblk0"), 1000, width),
            None
        );
        // On 32 bits, a drop from the bottom half is a reset, not a wrap.
        let low = DiskCounters {
            sectors_read: (1 << 31) - 1,
            ..DiskCounters::default()
        };
        let back = DiskCounters {
            sectors_read: 5,
            ..low
        };
        assert_eq!(super::delta(&low, &back, 1000, LongWidth::Bits32), None);
        // From the top half to 0, a reset (a re-created SD card) whose
        // "wrap" would be 1 TiB in a second: more than any disk moves.
        let half = DiskCounters {
            sectors_read: 1 << 31,
            ..DiskCounters::default()
        };
        let reset = DiskCounters {
            sectors_read: 0,
            ..half
        };
        assert_eq!(super::delta(&half, &reset, 1000, LongWidth::Bits32), None);
        let most = 1000 * MAX_WRAP_RISE_PER_MS;
        let near = DiskCounters {
            sectors_read: (1 << 32) - most,
            ..half
        };
        assert!(super::delta(&near, &reset, 1000, LongWidth::Bits32).is_some());
        let over = DiskCounters {
            sectors_read: (1 << 32) - most - 1,
            ..half
        };
        assert_eq!(super::delta(&over, &reset, 1000, LongWidth::Bits32), None);
        // A read count that wraps is no reset either.
        let top = DiskCounters {
            reads: u64::from(u32::MAX),
            ..low
        };
        let wrapped = DiskCounters { reads: 3, ..top };
        let w = super::delta(&top, &wrapped, 1000, LongWidth::Bits32).unwrap();
        assert_eq!(w.read_bytes, 0);
    }

    #[test]
    fn a_zero_interval_gives_no_rate() {
        assert_eq!(delta(&at(0, 0, 0), &at(1, 1, 1), 0), None);
    }

    #[test]
    fn io_ticks_wrap_at_32_bits() {
        let top = u64::from(u32::MAX);
        let d = delta(&at(0, 0, top - 299), &at(0, 0, 200), 1000).unwrap();
        assert_eq!((d.busy_ms, d.util_permille()), (500, Some(500)));
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
}
