//! `/proc/vmstat`: kernel virtual-memory event counters.
//!
//! One `name value` pair per line; the set and order of names changes with
//! every kernel (fixture 20: 3.10 vs 6.1), so keys are looked up by exact
//! name anywhere in the file. headroom needs only `oom_kill`, the count of
//! processes the kernel OOM killer has killed since boot (host-wide, even
//! inside a container).
//!
//! # References
//! proc(5) `/proc/vmstat`; `mm/vmstat.c` (`vmstat_text`).

use crate::kernel::parse::{ParseError, ParseErrorKind, parse_u64, space_value, trim};
use crate::kernel::root::{ReadError, Root};

/// Path of the file, relative to the root.
pub const PATH: &str = "proc/vmstat";

/// Buffer size for [`read`], in bytes.
///
/// The file is about 3.9 KB (192 lines) on a 6.18 host and 2.4 KB on 3.10;
/// each new kernel adds a few counters. 16 KiB leaves room for years of them.
pub const BUF_LEN: usize = 16 * 1024;

/// The counters headroom takes from `/proc/vmstat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VmStat {
    /// `oom_kill`: processes killed by the kernel OOM killer since boot, a
    /// count (since Linux 4.13). `None` when the key is absent — unknown,
    /// which is not the same as 0 kills.
    pub oom_kill: Option<u64>,
}

/// Parses `/proc/vmstat`.
///
/// # Errors
/// - `Missing("vmstat")` for an empty (or all-blank) input: a 0-byte read
///   says nothing, not "no OOM kills";
/// - `BadNumber` at the line of an `oom_kill` whose value is not a decimal.
pub fn parse(b: &[u8]) -> Result<VmStat, ParseError> {
    if trim(b).is_empty() {
        return Err(ParseError::missing("vmstat"));
    }
    let oom_kill = match space_value(b, b"oom_kill") {
        None => None,
        Some(v) => Some(parse_u64(v).ok_or_else(|| {
            ParseError::at(
                ParseErrorKind::BadNumber,
                crate::kernel::parse::line_of(b, v),
            )
        })?),
    };
    Ok(VmStat { oom_kill })
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

    #[test]
    fn fixture_20_a_kernel_3_10_no_oom_kill() {
        let b = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/20-vmstat-no-oom-kill/a-kernel-3.10-no-oom_kill/proc/vmstat"
        ));
        assert_eq!(parse(b), Ok(VmStat { oom_kill: None }));
    }

    #[test]
    fn fixture_20_b_rpi3_kernel_6_1_with_oom_kill() {
        let b = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/20-vmstat-no-oom-kill/b-rpi3-kernel-6.1-with-oom_kill/proc/vmstat"
        ));
        assert_eq!(parse(b), Ok(VmStat { oom_kill: Some(4) }));
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
        assert_eq!(parse(b), Ok(VmStat { oom_kill: Some(7) }));
    }

    #[test]
    fn key_is_matched_whole_anywhere() {
        let b = b"oom_kill_total 9\nnr_free_pages 1\nxoom_kill 8\noom_kill 2\n";
        assert_eq!(parse(b), Ok(VmStat { oom_kill: Some(2) }));
        assert_eq!(parse(b"oom_kills 3\n"), Ok(VmStat { oom_kill: None }));
        assert_eq!(parse(b"oom_kill 0"), Ok(VmStat { oom_kill: Some(0) }));
    }

    #[test]
    fn empty_garbage_and_overflow() {
        assert_eq!(parse(b""), Err(ParseError::missing("vmstat")));
        assert_eq!(parse(b"\n \n"), Err(ParseError::missing("vmstat")));
        let bad = |n| Err(ParseError::at(ParseErrorKind::BadNumber, n));
        assert_eq!(parse(b"nr_free_pages 1\noom_kill x\n"), bad(2));
        assert_eq!(parse(b"oom_kill -1"), bad(1));
        assert_eq!(
            parse(b"a 1\n\nb 2\noom_kill 18446744073709551616\n"),
            bad(4)
        );
        assert_eq!(
            parse(b"oom_kill 18446744073709551615"),
            Ok(VmStat {
                oom_kill: Some(u64::MAX)
            })
        );
        assert_eq!(parse(b"\xff\xfe garbage"), Ok(VmStat { oom_kill: None }));
    }
}
