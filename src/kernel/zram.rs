//! zram block devices: `/sys/block/zram<N>/{mm_stat, disksize, comp_algorithm}`.
//!
//! `mm_stat` is one line of right-aligned columns (`%8llu`, so small values
//! have leading spaces). The first five columns are stable; later ones were
//! added over time, so a reader must accept 7, 8 or 9 of them (and ignore
//! more):
//!
//! | # | column | unit | since |
//! |---|---|---|---|
//! | 1 | orig_data_size | bytes | 4.1 |
//! | 2 | compr_data_size | bytes | 4.1 |
//! | 3 | mem_used_total | bytes | 4.1 |
//! | 4 | mem_limit | bytes, 0 = no limit | 4.1 |
//! | 5 | mem_used_max | bytes | 4.1 |
//! | 6 | same_pages (was zero_pages) | pages | 4.1 |
//! | 7 | pages_compacted (was num_migrated) | pages | 4.1 |
//! | 8 | huge_pages | pages | 4.19 |
//! | 9 | huge_pages_since | pages | 5.11 |
//!
//! Devices are found by listing `/sys/block` for `zram<digits>`, never by
//! counting up from `zram0`: a hot-removed device leaves a gap.
//!
//! # References
//! `Documentation/admin-guide/blockdev/zram.rst`, zramctl(8).

use core::mem::MaybeUninit;

use rustix::fd::BorrowedFd;
use rustix::io::Errno;

use crate::kernel::kept::{Kept, Shape};
use crate::kernel::parse::{ParseError, ParseErrorKind, fields, parse_u64, trim};
use crate::kernel::root::{ReadError, for_each_entry, read_at};
use crate::kernel::swaps::is_zram_name;

/// Path of the block-device directory, relative to the root; the caller
/// opens it once and passes it to [`totals`] and [`device`].
pub const SYS_BLOCK: &str = "sys/block";

/// Read buffer for one zram attribute file, in bytes.
///
/// `mm_stat` is at most 9 columns of up to 20 digits plus separators (~190
/// bytes); `comp_algorithm` lists every compiled-in algorithm, ~50 bytes for
/// the usual eight; `disksize` is one number. 512 bytes leaves room.
pub const BUF_LEN: usize = 512;

/// The counters of `/sys/block/zram<N>/mm_stat`.
///
/// Sizes are in bytes, page counts in pages of the kernel's page size.
/// Columns 4–9 are `Option` because older kernels print fewer of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmStat {
    /// Uncompressed size of the data stored, in bytes.
    pub orig_data_size: u64,
    /// Compressed size of the data stored, in bytes.
    pub compr_data_size: u64,
    /// RAM the device really occupies, including allocator overhead, in
    /// bytes.
    pub mem_used_total: u64,
    /// Limit on `mem_used_total`, in bytes; `Some(0)` means no limit.
    pub mem_limit: Option<u64>,
    /// Highest `mem_used_total` seen, in bytes.
    pub mem_used_max: Option<u64>,
    /// Pages that were all one repeated value and take no memory, in pages
    /// (named `zero_pages` before 4.12).
    pub same_pages: Option<u64>,
    /// Pages freed by compaction, in pages.
    pub pages_compacted: Option<u64>,
    /// Incompressible pages stored whole, in pages (since Linux 4.19).
    pub huge_pages: Option<u64>,
    /// Incompressible pages stored since the device was set up, in pages
    /// (since Linux 5.11).
    pub huge_pages_since: Option<u64>,
}

/// Parses the contents of `mm_stat`.
///
/// Leading and repeated white space is accepted; at least three columns are
/// required; columns after the ninth are ignored without being parsed.
///
/// # Errors
/// [`ParseErrorKind::Missing`] naming the first absent required column;
/// [`ParseErrorKind::BadNumber`] for any of the first nine columns that is
/// not a decimal number. Errors carry line 1.
pub fn parse_mm_stat(b: &[u8]) -> Result<MmStat, ParseError> {
    let mut cols = [None::<u64>; 9];
    for (slot, f) in cols.iter_mut().zip(fields(b)) {
        *slot = Some(parse_u64(f).ok_or(ParseError::at(ParseErrorKind::BadNumber, 1))?);
    }
    let [a, c, m, limit, max, same, compacted, huge, huge_since] = cols;
    Ok(MmStat {
        orig_data_size: a.ok_or(ParseError::missing("orig_data_size"))?,
        compr_data_size: c.ok_or(ParseError::missing("compr_data_size"))?,
        mem_used_total: m.ok_or(ParseError::missing("mem_used_total"))?,
        mem_limit: limit,
        mem_used_max: max,
        same_pages: same,
        pages_compacted: compacted,
        huge_pages: huge,
        huge_pages_since: huge_since,
    })
}

/// Parses `disksize`: the device's capacity in bytes (0 when the device is
/// not initialised).
///
/// # Errors
/// [`ParseErrorKind::BadNumber`] when the trimmed content is not one decimal
/// number.
pub fn parse_disksize(b: &[u8]) -> Result<u64, ParseError> {
    parse_u64(trim(b)).ok_or(ParseError::at(ParseErrorKind::BadNumber, 1))
}

/// The selected algorithm of `comp_algorithm`: the name inside `[…]`, e.g.
/// `lzo-rle` from `lzo [lzo-rle] lz4 lz4hc 842 zstd`.
///
/// `None` when no non-empty bracketed name is present.
pub fn parse_comp_algorithm(b: &[u8]) -> Option<&[u8]> {
    let open = b.iter().position(|&c| c == b'[')?;
    let rest = b.get(open + 1..)?;
    let close = rest.iter().position(|&c| c == b']')?;
    let name = rest.get(..close)?;
    if name.is_empty() || name.iter().any(|&c| c.is_ascii_whitespace()) {
        None
    } else {
        Some(name)
    }
}

/// The least data a zram device must store before it has a ratio, in
/// bytes: 1 MiB (256 pages of 4 KiB, 16 of 64 KiB).
///
/// An idle device holds a page or a few: a VM's idle zram swap stored one
/// 4 KiB page in 74 bytes (`mm_stat` `4096 74 12288 …`), a ratio of
/// 55.35. zram can reach that, so no cap would catch it (a same-filled
/// page adds 4 KiB to `orig_data_size` and nothing to `compr_data_size`);
/// but a handful of pages says nothing of what a build's pages will
/// compress to, and `advise` sizes zram swap from the ratio. 1 MiB is the
/// unit `status`, the CSV and the summary show zram sizes in: a device
/// below it shows 0 MiB stored, and gets no ratio beside it.
pub const MIN_STORED_FOR_RATIO: u64 = 1 << 20;

/// The compression ratio: data stored over its compressed size,
/// `orig_data_size / compr_data_size` (zramctl's DATA / COMPR), in
/// hundredths, rounded half up (`317` for 3.17). What the algorithm
/// achieves; the RAM zram occupies is more (see [`ram_saving_centi`]).
/// Both in bytes.
///
/// `None` when less than [`MIN_STORED_FOR_RATIO`] is stored (an idle
/// device: no ratio it cannot have), when `compr` is 0 (no division by
/// zero) or when the result does not fit in a `u64`.
pub fn compression_centi(orig: u64, compr: u64) -> Option<u64> {
    if orig < MIN_STORED_FOR_RATIO {
        return None;
    }
    centi(orig, compr)
}

/// The RAM saving: data stored over the RAM zram occupies for it,
/// `orig_data_size / mem_used_total` (the CSV's `zram_stored_mb /
/// zram_ram_mb`), in hundredths, rounded half up. Lower than the
/// compression ratio by zram's allocator overhead and metadata; what the
/// summary and the status line of `record` show, which have only those two
/// columns. Both in MiB, as the CSV has them.
///
/// `None` when less than [`MIN_STORED_FOR_RATIO`] (0 MiB) is stored, when
/// `ram_used_mib` is 0 or the result does not fit in a `u64`.
///
/// ```
/// use headroom::kernel::zram::{compression_centi, ram_saving_centi};
/// // 768 MiB stored, 301 compressed, 316 of RAM used (a Pi 4 under load).
/// assert_eq!(compression_centi(768 << 20, 301 << 20), Some(255));
/// assert_eq!(ram_saving_centi(768, 316), Some(243));
/// // An idle device: one 4 KiB page in 74 bytes, 12 KiB of RAM.
/// assert_eq!(compression_centi(4096, 74), None);
/// assert_eq!(ram_saving_centi(4096 >> 20, 1), None);
/// ```
pub fn ram_saving_centi(stored_mib: u64, ram_used_mib: u64) -> Option<u64> {
    if stored_mib < MIN_STORED_FOR_RATIO >> 20 {
        return None;
    }
    centi(stored_mib, ram_used_mib)
}

/// `num / den` in hundredths, rounded half up; `None` for `den` 0 or a
/// result past `u64`.
fn centi(num: u64, den: u64) -> Option<u64> {
    if den == 0 {
        return None;
    }
    let n = u128::from(num) * 200 + u128::from(den);
    u64::try_from(n / (u128::from(den) * 2)).ok()
}

/// The sums over every zram device of `/sys/block`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZramTotals {
    /// Number of `zram<N>` devices whose `mm_stat` could be read and parsed.
    pub devices: u32,
    /// Sum of `disksize` over those devices, in bytes (a device whose
    /// `disksize` is unreadable adds 0; 0 when not asked for, see
    /// [`KeptDevices::totals`]).
    pub disksize: u64,
    /// Sum of `orig_data_size`: uncompressed data held, in bytes.
    pub orig_data_size: u64,
    /// Sum of `compr_data_size`, in bytes.
    pub compr_data_size: u64,
    /// Sum of `mem_used_total`: RAM the devices occupy, in bytes.
    pub mem_used_total: u64,
}

/// Sums `mm_stat` (and `disksize`) over every `zram<digits>` entry of the
/// open `sys/block` directory `sys_block`: [`KeptDevices::totals`] with
/// nothing kept, for a one-time look (`advise`, `status`).
///
/// # Errors
/// The errno of listing the directory.
pub fn totals(
    sys_block: BorrowedFd<'_>,
    dir_scratch: &mut [MaybeUninit<u8>],
    buf: &mut [u8],
) -> Result<ZramTotals, Errno> {
    KeptDevices::new(false).totals(sys_block, dir_scratch, buf, true)
}

/// Most zram devices whose `mm_stat` a recording keeps open between ticks
/// (zram-generator and zram-tools make one by default); more are read by
/// name each tick.
pub const KEPT_DEVICES: usize = 2;

/// The `mm_stat` descriptors of the first [`KEPT_DEVICES`] zram devices,
/// by device number, kept between ticks.
#[derive(Debug)]
pub struct KeptDevices {
    devices: heapless::Vec<(u64, Kept), KEPT_DEVICES>,
    keep: bool,
}

impl KeptDevices {
    /// None kept yet; kept from their first read when `keep` (the live
    /// root).
    pub const fn new(keep: bool) -> KeptDevices {
        KeptDevices {
            devices: heapless::Vec::new(),
            keep,
        }
    }

    /// Descriptors held now.
    pub fn open(&self) -> usize {
        self.devices.iter().filter(|(_, k)| k.is_open()).count()
    }

    /// Sums `mm_stat` over every `zram<digits>` entry of the open
    /// `sys/block` directory `sys_block`, listed anew on each call (a
    /// device added or hot-removed is seen at once; a kept device that is
    /// no longer listed is let go); `disksize` too when `with_disksize`,
    /// else [`ZramTotals::disksize`] is 0.
    ///
    /// `dir_scratch` is the getdents64(2) buffer (any size works: it is
    /// only read in more calls); `buf` receives each attribute file
    /// ([`BUF_LEN`] bytes). A device whose `mm_stat` cannot be read or
    /// parsed (removed mid-scan, garbage) is skipped, not fatal. Sums
    /// saturate. No zram device gives all zeros.
    ///
    /// # Errors
    /// The errno of listing the directory.
    ///
    /// # References
    /// `Documentation/admin-guide/blockdev/zram.rst`.
    pub fn totals(
        &mut self,
        sys_block: BorrowedFd<'_>,
        dir_scratch: &mut [MaybeUninit<u8>],
        buf: &mut [u8],
        with_disksize: bool,
    ) -> Result<ZramTotals, Errno> {
        let mut t = ZramTotals::default();
        let mut seen = [false; KEPT_DEVICES];
        for_each_entry(sys_block, dir_scratch, |name, _| {
            let (Some(n), true) = (name.get(4..).and_then(parse_u64), is_zram_name(name)) else {
                return true;
            };
            let mut path = [0u8; 64];
            let Some(p) = join(&mut path, name, "/mm_stat") else {
                return true;
            };
            let Ok(Ok(mm)) = self.read_mm_stat(n, sys_block, p, buf, &mut seen) else {
                return true;
            };
            let disksize = with_disksize
                .then(|| join(&mut path, name, "/disksize"))
                .flatten()
                .and_then(|p| read_at(sys_block, p, buf).ok())
                .and_then(|b| parse_disksize(b).ok())
                .unwrap_or(0);
            t.devices = t.devices.saturating_add(1);
            t.disksize = t.disksize.saturating_add(disksize);
            t.orig_data_size = t.orig_data_size.saturating_add(mm.orig_data_size);
            t.compr_data_size = t.compr_data_size.saturating_add(mm.compr_data_size);
            t.mem_used_total = t.mem_used_total.saturating_add(mm.mem_used_total);
            true
        })?;
        let mut i = 0;
        self.devices.retain(|_| {
            i += 1;
            seen[i - 1]
        });
        Ok(t)
    }

    /// Reads device `n`'s `mm_stat` (at `path` under `sys_block`) through
    /// its kept descriptor, taking a free slot for a device not yet kept.
    fn read_mm_stat(
        &mut self,
        n: u64,
        sys_block: BorrowedFd<'_>,
        path: &str,
        buf: &mut [u8],
        seen: &mut [bool; KEPT_DEVICES],
    ) -> Result<Result<MmStat, ParseError>, ReadError> {
        let mut slot = self.devices.iter().position(|(d, _)| *d == n);
        if slot.is_none() && self.keep && self.devices.push((n, Kept::new(true))).is_ok() {
            slot = Some(self.devices.len() - 1);
        }
        let raw = match slot.and_then(|i| Some((i, self.devices.get_mut(i)?))) {
            Some((i, (_, kept))) => {
                seen[i] = true;
                kept.read(sys_block, path, buf, Shape::Whole)?
            }
            None => read_at(sys_block, path, buf)?,
        };
        Ok(parse_mm_stat(raw))
    }
}

/// One zram device, for status screens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Capacity from `disksize`, in bytes.
    pub disksize: u64,
    /// The `mm_stat` counters.
    pub mm_stat: MmStat,
    /// The selected compression algorithm (`lzo-rle`, `zstd`, …); `None`
    /// when `comp_algorithm` is unreadable, has no bracketed name, or the
    /// name is longer than 32 bytes or not UTF-8.
    pub algorithm: Option<heapless::String<32>>,
    /// True when the device has been set up (`disksize` > 0).
    pub initialised: bool,
}

impl Device {
    /// Compression ratio of this device in hundredths; see
    /// [`compression_centi`].
    pub fn compression_centi(&self) -> Option<u64> {
        compression_centi(self.mm_stat.orig_data_size, self.mm_stat.compr_data_size)
    }
}

/// Why [`device`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceError {
    /// `name` is not `zram<digits>` (or too long for a path on the stack).
    BadName,
    /// `disksize` or `mm_stat` could not be read.
    Read(ReadError),
    /// `disksize` or `mm_stat` did not parse.
    Parse(ParseError),
}

/// Reads the device `name` (`zram0`, …) under the open `sys/block` directory.
///
/// `buf` receives each attribute file in turn ([`BUF_LEN`] bytes). A missing
/// or odd `comp_algorithm` only leaves [`Device::algorithm`] `None`.
///
/// # Errors
/// [`DeviceError::BadName`], or the read or parse error of `disksize` or
/// `mm_stat`.
///
/// # References
/// `Documentation/admin-guide/blockdev/zram.rst`.
pub fn device(
    sys_block: BorrowedFd<'_>,
    name: &str,
    buf: &mut [u8],
) -> Result<Device, DeviceError> {
    let name = name.as_bytes();
    if !is_zram_name(name) {
        return Err(DeviceError::BadName);
    }
    let mut path = [0u8; 64];
    let p = join(&mut path, name, "/disksize").ok_or(DeviceError::BadName)?;
    let raw = read_at(sys_block, p, buf).map_err(DeviceError::Read)?;
    let disksize = parse_disksize(raw).map_err(DeviceError::Parse)?;
    let p = join(&mut path, name, "/mm_stat").ok_or(DeviceError::BadName)?;
    let raw = read_at(sys_block, p, buf).map_err(DeviceError::Read)?;
    let mm_stat = parse_mm_stat(raw).map_err(DeviceError::Parse)?;
    let algorithm = join(&mut path, name, "/comp_algorithm")
        .and_then(|p| read_at(sys_block, p, buf).ok())
        .and_then(parse_comp_algorithm)
        .and_then(|a| core::str::from_utf8(a).ok())
        .and_then(|a| heapless::String::try_from(a).ok());
    Ok(Device {
        disksize,
        mm_stat,
        algorithm,
        initialised: disksize > 0,
    })
}

/// Writes `dir` + `file` into `out` and returns it as a path; `None` when it
/// does not fit or is not UTF-8.
fn join<'o>(out: &'o mut [u8], dir: &[u8], file: &str) -> Option<&'o str> {
    let len = dir.len().checked_add(file.len())?;
    let dst = out.get_mut(..len)?;
    let (a, b) = dst.split_at_mut(dir.len());
    a.copy_from_slice(dir);
    b.copy_from_slice(file.as_bytes());
    core::str::from_utf8(dst).ok()
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::kernel::root::Root;
    use rustix::fd::AsFd;

    const DIR: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/09-zram-mm-stat-field-counts/"
    );

    /// Bytes to MiB in tenths, rounded half up (CASE.md convention).
    fn mib_tenths(bytes: u64) -> u64 {
        (bytes * 10 + 524_288) / 1_048_576
    }

    fn open(variant: &str) -> Device {
        let root = Root::open(&std::format!("{DIR}{variant}")).unwrap();
        let sb = root.open_dir(SYS_BLOCK).unwrap();
        let mut buf = [0u8; BUF_LEN];
        let name = if variant.starts_with('e') {
            "zram1"
        } else {
            "zram0"
        };
        device(sb.as_fd(), name, &mut buf).unwrap()
    }

    fn sums(variant: &str) -> ZramTotals {
        let root = Root::open(&std::format!("{DIR}{variant}")).unwrap();
        let sb = root.open_dir(SYS_BLOCK).unwrap();
        let mut scratch = [MaybeUninit::uninit(); 1024];
        let mut buf = [0u8; BUF_LEN];
        totals(sb.as_fd(), &mut scratch, &mut buf).unwrap()
    }

    /// (disksize, orig, compr, mem_used) in tenths of MiB.
    fn mibs(d: &Device) -> (u64, u64, u64, u64) {
        (
            mib_tenths(d.disksize),
            mib_tenths(d.mm_stat.orig_data_size),
            mib_tenths(d.mm_stat.compr_data_size),
            mib_tenths(d.mm_stat.mem_used_total),
        )
    }

    #[test]
    fn fixture_09_a_kernel_4_4_7fields() {
        let d = open("a-kernel-4.4-7fields");
        assert_eq!(mibs(&d), (5120, 1735, 547, 615));
        assert_eq!(d.compression_centi(), Some(317));
        assert_eq!(d.algorithm.as_deref(), Some("lzo"));
        assert_eq!(d.mm_stat.pages_compacted, Some(0));
        assert_eq!(d.mm_stat.huge_pages, None);
        assert_eq!(d.mm_stat.huge_pages_since, None);
        assert!(d.initialised);
        assert_eq!(sums("a-kernel-4.4-7fields").devices, 1);
    }

    #[test]
    fn fixture_09_b_rpi3_kernel_5_4_8fields() {
        let d = open("b-rpi3-kernel-5.4-8fields");
        assert_eq!(mibs(&d), (14336, 4383, 1449, 1526));
        assert_eq!(d.compression_centi(), Some(302));
        assert_eq!(d.algorithm.as_deref(), Some("lzo-rle"));
        assert_eq!(d.mm_stat.huge_pages, Some(1077));
        assert_eq!(d.mm_stat.huge_pages_since, None);
    }

    #[test]
    fn fixture_09_c_kernel_6_1_9fields() {
        let d = open("c-kernel-6.1-9fields");
        assert_eq!(mibs(&d), (20480, 10240, 2850, 2970));
        assert_eq!(d.compression_centi(), Some(359));
        assert_eq!(d.algorithm.as_deref(), Some("zstd"));
        assert_eq!(d.mm_stat.huge_pages, Some(4096));
        assert_eq!(d.mm_stat.huge_pages_since, Some(9312));
        assert_eq!(d.mm_stat.mem_used_max, Some(402_653_184));
        assert_eq!(d.mm_stat.same_pages, Some(15380));
    }

    #[test]
    fn fixture_09_d_uninitialized() {
        let d = open("d-uninitialized");
        assert!(!d.initialised);
        assert_eq!(mibs(&d), (0, 0, 0, 0));
        assert_eq!(d.compression_centi(), None);
        let t = sums("d-uninitialized");
        assert_eq!(
            t,
            ZramTotals {
                devices: 1,
                ..ZramTotals::default()
            }
        );
    }

    #[test]
    fn fixture_09_e_sparse_numbering_only_zram1() {
        let t = sums("e-sparse-numbering-only-zram1");
        assert_eq!(t.devices, 1);
        assert_eq!(
            (
                mib_tenths(t.disksize),
                mib_tenths(t.orig_data_size),
                mib_tenths(t.compr_data_size),
                mib_tenths(t.mem_used_total)
            ),
            (10240, 500, 150, 170)
        );
        assert_eq!(
            compression_centi(t.orig_data_size, t.compr_data_size),
            Some(333)
        );
        let d = open("e-sparse-numbering-only-zram1");
        assert_eq!(d.mm_stat.huge_pages_since, Some(40));
        // zram0 was hot-removed: asking for it is a read error, not a panic.
        let root = Root::open(&std::format!("{DIR}e-sparse-numbering-only-zram1")).unwrap();
        let sb = root.open_dir(SYS_BLOCK).unwrap();
        let mut buf = [0u8; BUF_LEN];
        assert!(matches!(
            device(sb.as_fd(), "zram0", &mut buf),
            Err(DeviceError::Read(e)) if e.is_gone()
        ));
        assert_eq!(
            device(sb.as_fd(), "zramx", &mut buf),
            Err(DeviceError::BadName)
        );
        assert_eq!(
            device(sb.as_fd(), "../zram1", &mut buf),
            Err(DeviceError::BadName)
        );
    }

    /// Fixture 09 f, a VM trial's idle zram swap: one 4 KiB page stored in
    /// 74 bytes is no ratio of 55.35 to show or to size swap by.
    #[test]
    fn idle_device_has_no_ratio() {
        let line =
            b"    4096       74    12288        0    12288        0        0        0        0\n";
        let m = parse_mm_stat(line).unwrap();
        assert_eq!(
            (m.orig_data_size, m.compr_data_size, m.mem_used_total),
            (4096, 74, 12288)
        );
        assert_eq!(compression_centi(m.orig_data_size, m.compr_data_size), None);
        let d = open("f-idle-one-page");
        assert!(d.initialised);
        assert_eq!(d.mm_stat, m);
        assert_eq!(d.compression_centi(), None);
        let t = sums("f-idle-one-page");
        assert_eq!(compression_centi(t.orig_data_size, t.compr_data_size), None);
        // The CSV's MiB columns: 0 MiB stored in 0 or 1 MiB of RAM.
        assert_eq!(ram_saving_centi(t.orig_data_size >> 20, 1), None);
        // From 1 MiB stored on, the ratio is the device's.
        assert_eq!(compression_centi(MIN_STORED_FOR_RATIO, 1 << 18), Some(400));
        assert_eq!(compression_centi(MIN_STORED_FOR_RATIO - 1, 1 << 18), None);
        assert_eq!(ram_saving_centi(1, 1), Some(100));
    }

    #[test]
    fn totals_skip_garbage_devices_and_other_entries() {
        let dir = std::env::temp_dir().join(std::format!("headroom-zram-{}", std::process::id()));
        let mk = |name: &str, mm: &[u8]| {
            let d = dir.join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("mm_stat"), mm).unwrap();
            std::fs::write(d.join("disksize"), b"1000\n").unwrap();
        };
        mk("zram0", b"100 50 60 0 0 0 0\n");
        mk("zram3", b"garbage\n");
        mk("zram7", b"1 2\n");
        mk("zramx", b"100 50 60\n");
        mk("loop0", b"100 50 60\n");
        mk("zram12", b"18446744073709551615 1 1\n");
        std::fs::create_dir_all(dir.join("zram9")).unwrap(); // no mm_stat
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut scratch = [MaybeUninit::uninit(); 64];
        let mut buf = [0u8; BUF_LEN];
        let t = totals(root.fd(), &mut scratch, &mut buf).unwrap();
        assert_eq!(
            t,
            ZramTotals {
                devices: 2,
                disksize: 2000,
                orig_data_size: u64::MAX,
                compr_data_size: 51,
                mem_used_total: 61,
            }
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn mm_stat_shapes() {
        assert_eq!(
            parse_mm_stat(b""),
            Err(ParseError::missing("orig_data_size"))
        );
        assert_eq!(
            parse_mm_stat(b"  1 2\n"),
            Err(ParseError::missing("mem_used_total"))
        );
        let m = parse_mm_stat(b"   1    2    3\n").unwrap();
        assert_eq!(
            (m.orig_data_size, m.compr_data_size, m.mem_used_total),
            (1, 2, 3)
        );
        assert_eq!(m.mem_limit, None);
        // Ten columns: the tenth is ignored, even if it is not a number.
        let m = parse_mm_stat(b"1 2 3 4 5 6 7 8 9 x\n").unwrap();
        assert_eq!((m.mem_limit, m.huge_pages_since), (Some(4), Some(9)));
        assert_eq!(
            parse_mm_stat(b"1 2 3 4 5 -6"),
            Err(ParseError::at(ParseErrorKind::BadNumber, 1))
        );
        assert_eq!(
            parse_mm_stat(b"1 2 18446744073709551616"),
            Err(ParseError::at(ParseErrorKind::BadNumber, 1))
        );
        assert!(parse_mm_stat(b"\xff\xfe").is_err());
    }

    #[test]
    fn disksize_and_algorithm() {
        assert_eq!(parse_disksize(b"536870912\n"), Ok(536_870_912));
        assert_eq!(parse_disksize(b"0\n"), Ok(0));
        assert!(parse_disksize(b"").is_err());
        assert!(parse_disksize(b"1 2").is_err());
        assert!(parse_disksize(b"1G").is_err());
        assert_eq!(parse_comp_algorithm(b"[lzo] lz4 \n"), Some(&b"lzo"[..]));
        assert_eq!(parse_comp_algorithm(b"lzo lz4\n"), None);
        assert_eq!(parse_comp_algorithm(b"lzo [] lz4\n"), None);
        assert_eq!(parse_comp_algorithm(b"lzo [lz4\n"), None);
        assert_eq!(parse_comp_algorithm(b""), None);
    }

    #[test]
    fn ratio_rounding_and_edges() {
        // The RAM saving divides by RAM used, not by the compressed size.
        assert_eq!(ram_saving_centi(100, 40), Some(250));
        assert_eq!(ram_saving_centi(1, 3), Some(33));
        assert_eq!(ram_saving_centi(2, 3), Some(67));
        assert_eq!(ram_saving_centi(5, 0), None);
        assert_eq!(ram_saving_centi(0, 5), None);
        const MIB: u64 = MIN_STORED_FOR_RATIO;
        assert_eq!(compression_centi(0, 0), None);
        assert_eq!(compression_centi(MIB, 0), None);
        assert_eq!(compression_centi(2 * MIB, MIB), Some(200));
        // 1/8 = 0.125 -> 0.13 (half up); 1/3 = 0.333 -> 0.33.
        assert_eq!(compression_centi(MIB, 8 * MIB), Some(13));
        assert_eq!(compression_centi(MIB, 3 * MIB), Some(33));
        assert_eq!(compression_centi(u64::MAX, u64::MAX), Some(100));
        assert_eq!(compression_centi(u64::MAX, 1), None);
    }
}
