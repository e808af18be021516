//! `/proc/meminfo`: system memory and swap, in KiB.
//!
//! `Key:   value kB` lines (the kernel's `kB` is KiB); the `HugePages_*`
//! lines are page counts with no unit. Keys are looked up anchored at the
//! start of a line, in any order (OpenVZ prints `Cached` before `Buffers`,
//! fixture 01), and most are optional.
//!
//! Two kinds of lie are corrected here rather than passed on:
//! - no `MemAvailable` (kernels before 3.14, OpenVZ, WSL1): estimated as
//!   `MemFree + Buffers + Cached − Shmem` and flagged;
//! - lxcfs containers printing `SwapFree` above `SwapTotal` (even 2^64−128,
//!   fixture 02): clamped and flagged.
//!
//! Values stay in KiB as `u64`; callers converting to bytes must use
//! checked or saturating multiplication.
//!
//! # References
//! proc(5) `/proc/meminfo`; `Documentation/filesystems/proc.rst`;
//! `Documentation/admin-guide/mm/hugetlbpage.rst`.

use crate::kernel::parse::{ParseError, ParseErrorKind, colon_values, parse_u64};
use crate::kernel::root::{ReadError, Root};

/// Path of the file, relative to the root.
pub const PATH: &str = "proc/meminfo";

/// Buffer size for [`read`], in bytes.
///
/// meminfo is 1.5 KB (54 lines) on a 6.18 host; every key is under 40 bytes
/// per line and kernels add a few keys per year (plus the per-arch
/// `DirectMap*` lines). 8 KiB leaves room.
pub const BUF_LEN: usize = 8 * 1024;

/// The `/proc/meminfo` values headroom uses. Sizes in KiB, counts in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemInfo {
    /// `MemTotal`: usable RAM, KiB (for a container behind lxcfs, its limit).
    pub mem_total_kib: u64,
    /// `MemAvailable` (since Linux 3.14), KiB, clamped to `mem_total_kib`;
    /// estimated when absent, see [`MemInfo::mem_available_estimated`].
    pub mem_available_kib: u64,
    /// True when the file had no `MemAvailable` and `mem_available_kib` is
    /// `MemFree + Buffers + Cached − Shmem` (missing keys count 0).
    pub mem_available_estimated: bool,
    /// `MemFree`, KiB; 0 when absent.
    pub mem_free_kib: u64,
    /// `Shmem`: shared memory and tmpfs, KiB (since Linux 2.6.32).
    pub shmem_kib: Option<u64>,
    /// `SwapTotal`, KiB; 0 when absent.
    pub swap_total_kib: u64,
    /// `SwapFree`, KiB, clamped to `swap_total_kib`; 0 when absent.
    pub swap_free_kib: u64,
    /// True when the file's `SwapFree` exceeded `SwapTotal` and was clamped
    /// (lxcfs underflow).
    pub swap_free_clamped: bool,
    /// `HugePages_Total`: size of the hugetlb pool, in huge pages
    /// (`CONFIG_HUGETLB_PAGE`).
    pub hugepages_total: Option<u64>,
    /// `HugePages_Free`: pool pages not yet faulted in, in huge pages.
    pub hugepages_free: Option<u64>,
    /// `HugePages_Rsvd`: pool pages promised to mappings but not yet faulted
    /// in, in huge pages (since Linux 2.6.17).
    pub hugepages_rsvd: Option<u64>,
    /// `HugePages_Surp`: surplus pages above the configured pool, in huge
    /// pages (since Linux 2.6.24).
    pub hugepages_surp: Option<u64>,
    /// `Hugepagesize`: the default huge page size, KiB.
    pub hugepagesize_kib: Option<u64>,
    /// `Hugetlb`: RAM held by hugetlb pools of all page sizes, KiB (since
    /// Linux 4.16).
    pub hugetlb_kib: Option<u64>,
}

/// The keys [`parse`] reads, found in one pass ([`colon_values`]).
const KEYS: [&[u8]; 14] = [
    b"MemTotal",
    b"MemFree",
    b"Buffers",
    b"Cached",
    b"Shmem",
    b"MemAvailable",
    b"SwapTotal",
    b"SwapFree",
    b"HugePages_Total",
    b"HugePages_Free",
    b"HugePages_Rsvd",
    b"HugePages_Surp",
    b"Hugepagesize",
    b"Hugetlb",
];

/// Parses `/proc/meminfo`.
///
/// Only `MemTotal` is required. A key that is present must have a decimal
/// value; the `kB` unit is not checked.
///
/// # Errors
/// - `Missing("MemTotal")` when there is no `MemTotal:` line (also for an
///   empty input);
/// - `BadNumber` at the line of any used key whose value is not a decimal
///   that fits `u64`.
pub fn parse(b: &[u8]) -> Result<MemInfo, ParseError> {
    let values = colon_values(b, KEYS);
    let get = |key: &[u8]| -> Result<Option<u64>, ParseError> {
        let at = KEYS.iter().position(|k| *k == key);
        match at.and_then(|i| values.get(i).copied().flatten()) {
            None => Ok(None),
            Some(v) => parse_u64(v).map(Some).ok_or_else(|| {
                ParseError::at(
                    ParseErrorKind::BadNumber,
                    crate::kernel::parse::line_of(b, v),
                )
            }),
        }
    };
    let mem_total_kib = get(b"MemTotal")?.ok_or(ParseError::missing("MemTotal"))?;
    let mem_free_kib = get(b"MemFree")?.unwrap_or(0);
    let buffers = get(b"Buffers")?.unwrap_or(0);
    let cached = get(b"Cached")?.unwrap_or(0);
    let shmem_kib = get(b"Shmem")?;
    let (avail, mem_available_estimated) = match get(b"MemAvailable")? {
        Some(v) => (v, false),
        // In u128, so that a sum past u64 (only a hostile file can print
        // one) is not cut before Shmem comes off; clamped to MemTotal below.
        None => {
            let sum = u128::from(mem_free_kib) + u128::from(buffers) + u128::from(cached);
            let est = sum.saturating_sub(u128::from(shmem_kib.unwrap_or(0)));
            (u64::try_from(est).unwrap_or(u64::MAX), true)
        }
    };
    let swap_total_kib = get(b"SwapTotal")?.unwrap_or(0);
    let swap_free_raw = get(b"SwapFree")?.unwrap_or(0);
    Ok(MemInfo {
        mem_total_kib,
        mem_available_kib: avail.min(mem_total_kib),
        mem_available_estimated,
        mem_free_kib,
        shmem_kib,
        swap_total_kib,
        swap_free_kib: swap_free_raw.min(swap_total_kib),
        swap_free_clamped: swap_free_raw > swap_total_kib,
        hugepages_total: get(b"HugePages_Total")?,
        hugepages_free: get(b"HugePages_Free")?,
        hugepages_rsvd: get(b"HugePages_Rsvd")?,
        hugepages_surp: get(b"HugePages_Surp")?,
        hugepagesize_kib: get(b"Hugepagesize")?,
        hugetlb_kib: get(b"Hugetlb")?,
    })
}

impl MemInfo {
    /// RAM in use, KiB: `MemTotal − MemAvailable` (never negative).
    pub fn mem_used_kib(&self) -> u64 {
        self.mem_total_kib.saturating_sub(self.mem_available_kib)
    }

    /// Swap in use, KiB: `SwapTotal − SwapFree` (never negative; zram swap
    /// included).
    pub fn swap_used_kib(&self) -> u64 {
        self.swap_total_kib.saturating_sub(self.swap_free_kib)
    }

    /// RAM in use as an integer percent of `MemTotal`, rounded down
    /// (`100 × used / total`); 0 when `MemTotal` is 0.
    pub fn mem_used_pct(&self) -> u64 {
        if self.mem_total_kib == 0 {
            return 0;
        }
        let pct = u128::from(self.mem_used_kib()) * 100 / u128::from(self.mem_total_kib);
        u64::try_from(pct).unwrap_or(100)
    }

    /// Default-size huge pages in use, KiB:
    /// `(HugePages_Total − HugePages_Free + HugePages_Rsvd) × Hugepagesize`
    /// (reserved pages are promised, so they count as used).
    ///
    /// `None` when the kernel has no hugetlb lines (`HugePages_Total`,
    /// `HugePages_Free` or `Hugepagesize` absent); a missing
    /// `HugePages_Rsvd` (before 2.6.17) counts 0. Saturates instead of
    /// overflowing.
    pub fn hugepages_in_use_kib(&self) -> Option<u64> {
        let pages = self
            .hugepages_total?
            .saturating_sub(self.hugepages_free?)
            .saturating_add(self.hugepages_rsvd.unwrap_or(0));
        Some(pages.saturating_mul(self.hugepagesize_kib?))
    }

    /// RAM in use other than hugetlb pools, KiB:
    /// `MemTotal − MemAvailable − Hugetlb` (never negative). The kernel
    /// leaves the whole pool out of `MemAvailable`, so a reserved pool looks
    /// like used memory (fixture 25). `None` without a `Hugetlb` line
    /// (before Linux 4.16).
    pub fn mem_used_excluding_hugetlb_kib(&self) -> Option<u64> {
        Some(self.mem_used_kib().saturating_sub(self.hugetlb_kib?))
    }
}

/// Reads [`PATH`] under `root` into `buf` (give it [`BUF_LEN`] bytes) and
/// returns the bytes read, for [`parse`].
///
/// # Errors
/// See [`ReadError`].
pub fn read<'b>(root: &Root, buf: &'b mut [u8]) -> Result<&'b [u8], ReadError> {
    root.read(PATH, buf)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    /// Found by tests/properties_system.rs: the estimate's sum went past u64 and
    /// saturated before Shmem was taken off, giving 0 instead of 1.
    #[test]
    fn estimate_past_u64_is_exact_then_clamped() {
        let m = parse(
            b"MemTotal: 1 kB\nMemFree: 1 kB\nCached: 18446744073709551615 kB\n\
              Shmem: 18446744073709551615 kB\n",
        )
        .unwrap();
        assert!(m.mem_available_estimated);
        assert_eq!(m.mem_available_kib, 1);
    }

    macro_rules! fixture {
        ($p:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $p))
        };
    }

    /// KiB → MiB in tenths, rounded half away from zero, as CASE.md prints
    /// (`4096.0` → 40960).
    fn mib10(kib: u64) -> u64 {
        (kib * 10 + 512) / 1024
    }

    #[test]
    fn fixture_01_meminfo_no_memavailable() {
        let m = parse(fixture!("01-meminfo-no-memavailable/proc/meminfo")).unwrap();
        assert!(m.mem_available_estimated);
        assert_eq!(mib10(m.mem_total_kib), 40960);
        // MemFree + Cached + Buffers − Shmem, with Cached before Buffers.
        assert_eq!(m.mem_available_kib, 3687344);
        assert_eq!(mib10(m.mem_available_kib), 36009);
        assert_eq!(mib10(m.swap_total_kib), 30720);
        assert_eq!(m.swap_used_kib(), 0);
        assert!(!m.swap_free_clamped);
        assert_eq!(m.shmem_kib.map(mib10), Some(3930));
        assert_eq!(m.hugepages_total, None);
        assert_eq!(m.hugepages_in_use_kib(), None);
        assert_eq!(m.hugetlb_kib, None);
    }

    #[test]
    fn fixture_02_lxcfs_swapfree_underflow() {
        let m = parse(fixture!("02-lxcfs-swapfree-underflow/proc/meminfo")).unwrap();
        assert!(!m.mem_available_estimated);
        assert_eq!(mib10(m.mem_total_kib), 204800);
        assert_eq!(mib10(m.mem_available_kib), 84133);
        assert_eq!(m.swap_total_kib, 0);
        assert_eq!(m.swap_free_kib, 0);
        assert!(m.swap_free_clamped);
        assert_eq!(m.swap_used_kib(), 0);
        assert_eq!(m.shmem_kib.map(mib10), Some(3146));
        // Hugetlb lines present but empty pool; no Hugetlb: line.
        assert_eq!(m.hugepages_in_use_kib(), Some(0));
        assert_eq!(m.mem_used_excluding_hugetlb_kib(), None);
    }

    #[test]
    fn fixture_03_lxcfs_meminfo_mixed_host_values() {
        let m = parse(fixture!("03-lxcfs-meminfo-mixed-host-values/proc/meminfo")).unwrap();
        assert!(!m.mem_available_estimated);
        assert_eq!(mib10(m.mem_total_kib), 40960);
        assert_eq!(mib10(m.mem_available_kib), 26533);
        assert_eq!(mib10(m.mem_used_kib()), 14427);
        assert_eq!(m.mem_used_pct(), 35);
        assert_eq!(mib10(m.swap_total_kib), 36556);
        assert_eq!(mib10(m.swap_used_kib()), 10382);
        assert_eq!(m.shmem_kib.map(mib10), Some(2432));
    }

    #[test]
    fn fixture_25_hugepages_reserved_pool() {
        let m = parse(fixture!("25-hugepages-reserved-pool/proc/meminfo")).unwrap();
        assert_eq!(mib10(m.mem_total_kib), 1286484);
        // Taken as is: free huge pages are not added back.
        assert_eq!(mib10(m.mem_available_kib), 508861);
        let size = m.hugepagesize_kib.unwrap();
        assert_eq!(size, 2048);
        assert_eq!(mib10(m.hugepages_total.unwrap() * size), 643220);
        assert_eq!(mib10(m.hugepages_free.unwrap() * size), 180000);
        assert_eq!(mib10(m.hugepages_rsvd.unwrap() * size), 143820);
        assert_eq!(m.hugepages_surp, Some(0));
        assert_eq!(m.hugepages_in_use_kib().map(mib10), Some(607040));
        assert_eq!(m.hugetlb_kib, Some(65865728));
        assert_eq!(m.mem_used_excluding_hugetlb_kib().map(mib10), Some(134404));
        assert_eq!(mib10(m.swap_total_kib), 40960);
        assert_eq!(m.swap_used_kib(), 0);
    }

    #[test]
    fn fixture_18_loadavg_high_while_cpu_idle() {
        let m = parse(fixture!("18-loadavg-high-while-cpu-idle/t1/proc/meminfo")).unwrap();
        assert_eq!(mib10(m.mem_total_kib), 3574);
        assert_eq!(mib10(m.mem_available_kib), 2356);
        assert_eq!(mib10(m.swap_total_kib), 4900);
        assert_eq!(m.swap_used_kib(), 0);
    }

    #[test]
    fn fixture_06_cgroupv2_container_cpu_max_unlimited() {
        let root = Root::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/06-cgroupv2-container-cpu-max-unlimited"
        ))
        .unwrap();
        let mut buf = [0u8; BUF_LEN];
        let m = parse(read(&root, &mut buf).unwrap()).unwrap();
        // The host's view, not the container's headroom.
        assert_eq!(mib10(m.mem_available_kib), 95813);
        assert_eq!(m.mem_total_kib, 16316412);
        assert_eq!(m.swap_used_kib(), 8388604 - 7581164);
    }

    #[test]
    fn anchored_keys_and_near_misses() {
        let b = b"aMemTotal: 1 kB\nMemTotala: 2 kB\nMemTotal:: 3 kB\nMemTotal:   400 kB\n\
                  SwapFree_x: 9 kB\nXSwapTotal: 9 kB\nMemAvailable: 100 kB\n";
        let m = parse(b).unwrap();
        assert_eq!(m.mem_total_kib, 400);
        assert_eq!(m.swap_total_kib, 0);
        assert_eq!(m.swap_free_kib, 0);
        assert!(!m.swap_free_clamped);
        assert_eq!(m.mem_available_kib, 100);
        assert_eq!(m.mem_used_pct(), 75);
        // `Cached` must not pick up `SwapCached`.
        let e = parse(b"MemTotal: 100 kB\nSwapCached: 90 kB\nMemFree: 5 kB\n").unwrap();
        assert_eq!(e.mem_available_kib, 5);
        assert!(e.mem_available_estimated);
    }

    #[test]
    fn empty_garbage_and_bad_numbers() {
        assert_eq!(parse(b""), Err(ParseError::missing("MemTotal")));
        assert_eq!(
            parse(b"\xff\x00garbage\n"),
            Err(ParseError::missing("MemTotal"))
        );
        let bad = |n| Err(ParseError::at(ParseErrorKind::BadNumber, n));
        assert_eq!(parse(b"MemTotal: x kB\n"), bad(1));
        assert_eq!(parse(b"MemTotal: 1 kB\nMemFree: -1 kB\n"), bad(2));
        assert_eq!(
            parse(b"MemTotal: 1 kB\n\nSwapFree: 18446744073709551616 kB\n"),
            bad(3)
        );
        assert_eq!(
            parse(b"MemTotal:\nMemFree: 1 kB\n"),
            Err(ParseError::missing("MemTotal"))
        );
    }

    #[test]
    fn clamps_and_saturates() {
        // Estimate larger than MemTotal, Shmem larger than the sum.
        let m = parse(b"MemTotal: 100 kB\nMemFree: 90 kB\nCached: 50 kB\n").unwrap();
        assert_eq!(m.mem_available_kib, 100);
        assert_eq!(m.mem_used_kib(), 0);
        let m = parse(b"MemTotal: 100 kB\nMemFree: 10 kB\nShmem: 50 kB\n").unwrap();
        assert_eq!(m.mem_available_kib, 0);
        assert_eq!(m.mem_used_pct(), 100);
        let max = u64::MAX;
        let t = std::format!(
            "MemTotal: {max} kB\nMemFree: {max} kB\nBuffers: {max} kB\nCached: {max} kB\n\
             HugePages_Total: {max}\nHugePages_Free: 0\nHugePages_Rsvd: {max}\nHugepagesize: {max} kB\n"
        );
        let m = parse(t.as_bytes()).unwrap();
        assert_eq!(m.mem_available_kib, max);
        assert_eq!(m.mem_used_pct(), 0);
        assert_eq!(m.hugepages_in_use_kib(), Some(max));
        let m = parse(b"MemTotal: 0 kB\nMemAvailable: 5 kB\n").unwrap();
        assert_eq!((m.mem_available_kib, m.mem_used_pct()), (0, 0));
        // Free above Total in the pool (racy read): no underflow.
        let m = parse(
            b"MemTotal: 1 kB\nHugePages_Total: 1\nHugePages_Free: 3\nHugepagesize: 2048 kB\n",
        )
        .unwrap();
        assert_eq!(m.hugepages_in_use_kib(), Some(0));
        // SwapFree above a non-zero SwapTotal (lxcfs#412).
        let m = parse(b"MemTotal: 1 kB\nSwapTotal: 10 kB\nSwapFree: 11 kB\n").unwrap();
        assert_eq!(
            (m.swap_free_kib, m.swap_used_kib(), m.swap_free_clamped),
            (10, 0, true)
        );
    }
}
