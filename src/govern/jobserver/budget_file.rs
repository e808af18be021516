//! A pool's budget set by its operator: the most memory, MiB, that all
//! the builds sharing the pool may use together, written once in the pool
//! directory by `headroom pool DIR --budget MIB` and read by every
//! governor of the pool at each tick.
//!
//! It is for a limit no build can see: a builder whose memory is capped
//! above its containers on cgroup v2 (a pod, a VM's size, a limit set on a
//! slice the steps' cgroup namespace hides). A file in the pool directory
//! changes no layer's cache key when it changes, where a build argument or
//! an environment variable in the Dockerfile would: BuildKit's cache
//! mounts are outside the key.
//!
//! The file, `DIR/budget`, text, whole lines:
//!
//! ```text
//! headroom-budget 1
//! budget_mb 2560
//! ```
//!
//! - the first line names the format and its version;
//! - `budget_mb`: MiB, from 1 to [`BUDGET_MAX_MB`];
//! - other `key value` lines are ignored; at most [`BUDGET_FILE_CAP`]
//!   bytes.
//!
//! It is written whole (a temporary file renamed over it), under the
//! pool's trust rules when read: never through a symlink, only a regular
//! file, and in a directory others may write, only this user's or root's
//! (`peakfile::read_trusted`).
//!
//! Against the budget, each build counts what its compilers hold and what
//! its running jobs may still grow by, as its lease states them
//! (`admit::room_with_leases`).
//!
//! # References
//! openat(2) `O_NOFOLLOW`, rename(2), unlinkat(2).

use rustix::fd::BorrowedFd;
use rustix::io::Errno;

use crate::govern::jobserver::peakfile::{PeakError, PeakIssue, parse_figure, read_trusted};
use crate::report::replace;

/// The file's name in the pool directory.
pub const BUDGET_NAME: &str = "budget";

/// The first line of the file.
pub const MAGIC: &str = "headroom-budget 1";

/// The largest budget a file may state, MiB (16 TiB).
pub const BUDGET_MAX_MB: u64 = 1 << 24;

/// The longest file read, bytes (a peak file's: one reader parses both).
pub const BUDGET_FILE_CAP: usize = crate::govern::jobserver::peakfile::PEAK_FILE_CAP;

/// The budget in a file's `bytes`, MiB.
///
/// # Errors
/// [`PeakError`], as for a peak file: `Magic` (another first line),
/// `Missing` (no `budget_mb`), `Value` (not 1 to [`BUDGET_MAX_MB`]),
/// `Shape` (too long, not UTF-8).
pub fn parse(bytes: &[u8]) -> Result<u64, PeakError> {
    parse_figure(bytes, MAGIC, "budget_mb", BUDGET_MAX_MB)
}

/// The file's text for a budget of `mb` MiB.
pub fn render(mb: u64) -> heapless::String<64> {
    let mut t = heapless::String::new();
    // 18 + 11 + 20 bytes at most: always fits.
    let _ = ufmt::uwrite!(t, "{}\nbudget_mb {}\n", MAGIC, mb);
    t
}

/// The budget of the pool directory `dir` (`shared`: others may write it,
/// so only `uid`'s or root's file counts); `Ok(None)` when none is set.
/// `buf`: at least [`BUDGET_FILE_CAP`] + 1 bytes.
///
/// # Errors
/// [`PeakIssue`]: the file is there but not used.
pub fn read(
    dir: BorrowedFd<'_>,
    shared: bool,
    uid: u32,
    buf: &mut [u8],
) -> Result<Option<u64>, PeakIssue> {
    match read_trusted(dir, BUDGET_NAME, shared, uid, buf)? {
        None => Ok(None),
        Some(bytes) => parse(bytes).map(Some).map_err(PeakIssue::Unparsable),
    }
}

/// Sets the budget of the pool directory `dir` to `mb` MiB (written
/// whole), or removes it (`None`; none set is no error).
///
/// # Errors
/// `EINVAL` for 0 or more than [`BUDGET_MAX_MB`]; the errno of openat(2),
/// write(2), rename(2) or unlinkat(2) (`EPERM` in a sticky directory
/// where another user's file has the name).
pub fn set(dir: BorrowedFd<'_>, mb: Option<u64>) -> Result<(), Errno> {
    let Some(mb) = mb else {
        return match rustix::fs::unlinkat(dir, BUDGET_NAME, rustix::fs::AtFlags::empty()) {
            Err(Errno::NOENT) => Ok(()),
            r => r,
        };
    };
    if !(1..=BUDGET_MAX_MB).contains(&mb) {
        return Err(Errno::INVAL);
    }
    let tmp = replace::tmp_name(BUDGET_NAME)?;
    replace::write(dir, BUDGET_NAME, tmp.as_str(), render(mb).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_reads_back_as_written() {
        assert_eq!(parse(render(2560).as_bytes()), Ok(2560));
        assert_eq!(
            parse(b"headroom-budget 1\nnote later\nbudget_mb 1\n"),
            Ok(1)
        );
    }

    #[test]
    fn a_file_that_is_no_budget_is_refused() {
        assert_eq!(
            parse(b"headroom-peak 1\nbudget_mb 5\n"),
            Err(PeakError::Magic)
        );
        assert_eq!(parse(b"headroom-budget 1\n"), Err(PeakError::Missing));
        assert_eq!(
            parse(b"headroom-budget 1\nbudget_mb 0\n"),
            Err(PeakError::Value)
        );
        assert_eq!(
            parse(b"headroom-budget 1\nbudget_mb -5\n"),
            Err(PeakError::Value)
        );
        assert_eq!(
            parse(b"headroom-budget 1\nbudget_mb 16777217\n"),
            Err(PeakError::Value)
        );
        assert_eq!(parse(&[0xff; 8]), Err(PeakError::Shape));
        assert_eq!(parse(&[b'a'; BUDGET_FILE_CAP + 1]), Err(PeakError::Shape));
    }
}
