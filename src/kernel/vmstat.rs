//! `/proc/vmstat`: kernel virtual-memory event counters.
//!
//! One `name value` pair per line; the set and order of names changes with
//! every kernel (fixture 20: 3.10 vs 6.1; 45: per-zone counters before
//! 4.8), so keys are looked up by exact name anywhere in the file, all in
//! one pass. headroom takes:
//! - `oom_kill`, the processes the kernel OOM killer has killed since boot
//!   (Linux 4.13);
//! - `pswpin`/`pswpout`, pages swapped in/out, and `pgmajfault`, major page
//!   faults (counts of pages and events, not KiB: `pgpgin`/`pgpgout` are
//!   KiB of block I/O of every device and are not swap);
//! - refaults, pages read back soon after their eviction: one
//!   `workingset_refault` before Linux 5.9, `workingset_refault_anon` +
//!   `workingset_refault_file` since;
//! - `pgscan_direct`, pages scanned by direct reclaim of the host's own
//!   memory: a cgroup's limit reclaim is not counted here, only in that
//!   cgroup's `memory.stat` (`mm/vmscan.c`: global events only when not
//!   `cgroup_reclaim`), which is how a limit above a container is told
//!   from the host's own shortage (`govern::jobserver::ceiling`).
//!
//! All are host-wide, even inside a container (lxcfs does not virtualise
//! this file).
//!
//! # References
//! proc(5) `/proc/vmstat`; `mm/vmstat.c` (`vmstat_text`, `vmstat_start`).

use crate::kernel::parse::{ParseError, ParseErrorKind, parse_u64, space_values, trim};
use crate::kernel::root::{ReadError, Root};

/// Path of the file, relative to the root.
pub const PATH: &str = "proc/vmstat";

/// Buffer size for [`read`], in bytes.
///
/// The file is about 3.9 KB (192 lines) on a 6.18 host and 2.4 KB on 3.10;
/// each new kernel adds a few counters. 16 KiB leaves room for years of them.
pub const BUF_LEN: usize = 16 * 1024;

/// The counters headroom takes from `/proc/vmstat`, each `None` when its key
/// is absent: unknown, which is not the same as 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VmStat {
    /// `oom_kill`: processes killed by the kernel OOM killer since boot, a
    /// count (since Linux 4.13).
    pub oom_kill: Option<u64>,
    /// `pswpin`: pages swapped in since boot (pages of the running
    /// kernel's page size).
    pub pswpin: Option<u64>,
    /// `pswpout`: pages swapped out since boot.
    pub pswpout: Option<u64>,
    /// `pgmajfault`: major page faults (those that needed I/O) since boot.
    pub pgmajfault: Option<u64>,
    /// `workingset_refault_anon` (Linux 5.9+): anonymous pages refaulted.
    pub refault_anon: Option<u64>,
    /// `workingset_refault_file` (Linux 5.9+): page-cache pages refaulted.
    pub refault_file: Option<u64>,
    /// `workingset_refault` (before 5.9): all refaults, with no split.
    pub refault_total: Option<u64>,
    /// `pgscan_direct`: pages scanned by direct reclaim of the host's
    /// memory since boot (not a cgroup's limit reclaim).
    pub pgscan_direct: Option<u64>,
}

impl VmStat {
    /// Refaults since boot: `workingset_refault` where the kernel has it,
    /// else `_anon` + `_file` (never both); `None` when neither layout is
    /// complete.
    pub fn refaults(&self) -> Option<u64> {
        self.refault_total.or_else(|| {
            self.refault_anon
                .zip(self.refault_file)
                .map(|(a, f)| a.saturating_add(f))
        })
    }
}

/// The keys parsed, in the order of [`VmStat`]'s fields.
const KEYS: [&[u8]; 8] = [
    b"oom_kill",
    b"pswpin",
    b"pswpout",
    b"pgmajfault",
    b"workingset_refault_anon",
    b"workingset_refault_file",
    b"workingset_refault",
    b"pgscan_direct",
];

/// Parses `/proc/vmstat`.
///
/// # Errors
/// - `Missing("vmstat")` for an empty (or all-blank) input: a 0-byte read
///   says nothing, not "no OOM kills";
/// - `BadNumber` at the line of a wanted key whose value is not a decimal.
pub fn parse(b: &[u8]) -> Result<VmStat, ParseError> {
    if trim(b).is_empty() {
        return Err(ParseError::missing("vmstat"));
    }
    let mut v = [None; KEYS.len()];
    for (slot, text) in v.iter_mut().zip(space_values(b, KEYS)) {
        if let Some(t) = text {
            *slot = Some(parse_u64(t).ok_or_else(|| {
                ParseError::at(
                    ParseErrorKind::BadNumber,
                    crate::kernel::parse::line_of(b, t),
                )
            })?);
        }
    }
    let [
        oom_kill,
        pswpin,
        pswpout,
        pgmajfault,
        refault_anon,
        refault_file,
        refault_total,
        pgscan_direct,
    ] = v;
    Ok(VmStat {
        oom_kill,
        pswpin,
        pswpout,
        pgmajfault,
        refault_anon,
        refault_file,
        refault_total,
        pgscan_direct,
    })
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

    fn fixture(case: &str) -> std::vec::Vec<u8> {
        std::fs::read(std::format!(
            "{}/tests/fixtures/{case}/proc/vmstat",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn oom(b: &[u8]) -> Result<Option<u64>, ParseError> {
        parse(b).map(|v| v.oom_kill)
    }

    #[test]
    fn fixture_20_a_kernel_3_10_no_oom_kill() {
        let v = parse(&fixture("20-vmstat-no-oom-kill/a-kernel-3.10-no-oom_kill")).unwrap();
        assert_eq!(v.oom_kill, None);
        // 3.10 has the single refault counter of kernels before 5.9.
        assert_eq!(v.refault_anon, None);
        assert!(v.refault_total.is_some());
    }

    #[test]
    fn fixture_20_b_rpi3_kernel_6_1_with_oom_kill() {
        let b = fixture("20-vmstat-no-oom-kill/b-rpi3-kernel-6.1-with-oom_kill");
        assert_eq!(oom(&b), Ok(Some(4)));
    }

    #[test]
    fn fixture_06_cgroupv2_container_cpu_max_unlimited() {
        let root = Root::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/06-cgroupv2-container-cpu-max-unlimited"
        ))
        .unwrap();
        let mut buf = [0u8; BUF_LEN];
        let b = read(&root, &mut buf).unwrap();
        // The host's counter; the container's own (3) is in memory.events.
        assert_eq!(oom(b), Ok(Some(7)));
    }

    #[test]
    fn fixture_44_vmstat_zram_pi3_split_refault() {
        let v = parse(&fixture("44-vmstat-zram-pi3-split-refault")).unwrap();
        assert_eq!(v.refault_total, None);
        assert_eq!(v.refault_anon, Some(611_061));
        assert_eq!(v.refault_file, Some(2_943_742));
        assert_eq!(v.refaults(), Some(3_554_803));
        assert_eq!(v.pswpin, Some(611_062));
        assert_eq!(v.pswpout, Some(715_924));
        assert_eq!(v.pswpin.map(|p| p * 4096), Some(2_502_909_952));
        assert_eq!(v.pswpout.map(|p| p * 4096), Some(2_932_424_704));
        // Cut before pgmajfault: unknown, not "no major faults".
        assert_eq!(v.pgmajfault, None);
    }

    #[test]
    fn fixture_45_vmstat_pre_5_9_workingset_refault() {
        let v = parse(&fixture("45-vmstat-pre-5.9-workingset_refault")).unwrap();
        assert_eq!(v.refaults(), Some(2_770_103));
        assert_eq!((v.refault_anon, v.refault_file), (None, None));
        assert_eq!((v.pswpin, v.pswpout), (Some(580), Some(5533)));
        assert_eq!(v.pgmajfault, Some(5990));
    }

    #[test]
    fn refaults_take_one_layout_never_both() {
        let both =
            parse(b"workingset_refault 10\nworkingset_refault_anon 1\nworkingset_refault_file 2\n");
        assert_eq!(both.unwrap().refaults(), Some(10));
        let half = parse(b"workingset_refault_anon 1\n").unwrap();
        assert_eq!(half.refaults(), None);
    }

    #[test]
    fn key_is_matched_whole_anywhere() {
        let b = b"oom_kill_total 9\nnr_free_pages 1\nxoom_kill 8\noom_kill 2\n";
        assert_eq!(oom(b), Ok(Some(2)));
        assert_eq!(oom(b"oom_kills 3\n"), Ok(None));
        assert_eq!(oom(b"oom_kill 0"), Ok(Some(0)));
    }

    #[test]
    fn empty_garbage_and_overflow() {
        assert_eq!(parse(b""), Err(ParseError::missing("vmstat")));
        assert_eq!(parse(b"\n \n"), Err(ParseError::missing("vmstat")));
        let bad = |n| Err(ParseError::at(ParseErrorKind::BadNumber, n));
        assert_eq!(oom(b"nr_free_pages 1\noom_kill x\n"), bad(2));
        assert_eq!(oom(b"oom_kill -1"), bad(1));
        assert_eq!(oom(b"pgmajfault 1\npswpin x\n"), bad(2));
        assert_eq!(oom(b"a 1\n\nb 2\noom_kill 18446744073709551616\n"), bad(4));
        assert_eq!(oom(b"oom_kill 18446744073709551615"), Ok(Some(u64::MAX)));
        assert_eq!(parse(b"\xff\xfe garbage"), Ok(VmStat::default()));
    }
}
