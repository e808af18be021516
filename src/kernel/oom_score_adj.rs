//! `/proc/self/oom_score_adj`: how eagerly the OOM killer picks us.
//!
//! The file holds one decimal in −1000..=1000 and a newline. The kernel
//! adds it (as thousandths of RAM + swap) to a process's badness, the
//! size the OOM killer ranks candidates by; −1000 exempts a process.
//! Lowering it needs CAP_SYS_RESOURCE (EACCES otherwise); any process may
//! raise it back, and a child inherits its parent's value across fork and
//! execve.
//!
//! headroom is the witness of a build that runs out of memory: when the
//! kernel must kill something, it should kill the build, not the recorder
//! that explains the kill. So `record` and `run` lower their own value to
//! [`WITNESS`] when permitted, and `run` gives CMD back the value headroom
//! started with.
//!
//! # References
//! proc(5) `/proc/pid/oom_score_adj`; `fs/proc/base.c` (`__set_oom_adj`),
//! `mm/oom_kill.c` (`oom_badness`).

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::kernel::parse::{ParseError, ParseErrorKind, parse_i64, trim};

/// The file, on the host (it is about this process, not a `--root` tree).
pub const PATH: &str = "/proc/self/oom_score_adj";

/// The value headroom gives itself: far below any build process, so it is
/// chosen only when nothing else can be (−1000 would forbid that too, and
/// a host with nothing killable left panics instead).
pub const WITNESS: i16 = -900;

/// Longest text of a value: `-1000` and a newline.
pub const TEXT_LEN: usize = 6;

/// Parses the file: one integer in −1000..=1000, surrounding white space
/// allowed.
///
/// # Errors
/// `Missing("oom_score_adj")` for empty input, `BadNumber` (line 1) for
/// anything else that is not an integer in range.
pub fn parse(b: &[u8]) -> Result<i16, ParseError> {
    let t = trim(b);
    if t.is_empty() {
        return Err(ParseError::missing("oom_score_adj"));
    }
    match parse_i64(t) {
        Some(v) if (-1000..=1000).contains(&v) => Ok(v as i16),
        _ => Err(ParseError::at(ParseErrorKind::BadNumber, 1)),
    }
}

/// Writes `v` as the file expects it (`-900\n`) into `out`; returns the
/// bytes to write.
pub fn format(v: i16, out: &mut [u8; TEXT_LEN]) -> &[u8] {
    let sign = if v < 0 { "-" } else { "" };
    // At most 6 bytes (`-1000\n`): always fits.
    crate::kernel::root::join_num(out, sign, u64::from(v.unsigned_abs()), "\n")
        .map_or(&[], str::as_bytes)
}

/// Reads this process's value.
///
/// # Errors
/// The errno of open(2) or read(2) (ENOENT without /proc), or EINVAL when
/// the contents do not parse.
pub fn read_self() -> Result<i16, Errno> {
    let fd = rustix::fs::open(PATH, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
    let mut buf = [0u8; 16];
    let b = crate::kernel::root::read_fd(rustix::fd::AsFd::as_fd(&fd), &mut buf)
        .map_err(|e| e.errno().unwrap_or(Errno::INVAL))?;
    parse(b).map_err(|_| Errno::INVAL)
}

/// Sets this process's value with one write(2). Allocation-free and
/// async-signal-safe (open, write, close), so a forked child may call it
/// before execve.
///
/// # Errors
/// EACCES when lowering below the minimum without CAP_SYS_RESOURCE; the
/// errno of open(2) or write(2) otherwise.
pub fn write_self(v: i16) -> Result<(), Errno> {
    let mut text = [0u8; TEXT_LEN];
    let bytes = format(v, &mut text);
    let fd = rustix::fs::open(PATH, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::io::write(&fd, bytes).map(|_| ())
}

/// Lowers this process to [`WITNESS`] unless it is already lower. Returns
/// the value it had before (to hand back to a child), or `None` when it
/// could not be read; a refused write (not root) leaves it as it was.
pub fn protect_self() -> Option<i16> {
    let before = read_self().ok()?;
    if before > WITNESS {
        let _ = write_self(WITNESS);
    }
    Some(before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_text() {
        assert_eq!(parse(b"0\n"), Ok(0));
        assert_eq!(parse(b"-1000\n"), Ok(-1000));
        assert_eq!(parse(b"1000\n"), Ok(1000));
        assert_eq!(parse(b"  -17 \n"), Ok(-17));
        assert!(parse(b"").is_err());
        assert!(parse(b"\n").is_err());
        assert!(parse(b"1001\n").is_err());
        assert!(parse(b"-1001").is_err());
        assert!(parse(b"12x").is_err());
        assert!(parse(b"99999999999999999999999").is_err());
    }

    #[test]
    fn format_round_trips_every_value() {
        let mut out = [0u8; TEXT_LEN];
        for v in -1000..=1000i16 {
            let b = format(v, &mut out);
            assert_eq!(b.last(), Some(&b'\n'));
            assert_eq!(parse(b), Ok(v));
        }
        assert_eq!(format(-900, &mut out), b"-900\n");
        assert_eq!(format(0, &mut out), b"0\n");
    }

    #[test]
    fn this_process_has_a_readable_value() {
        let v = read_self().expect("proc is mounted where tests run");
        assert!((-1000..=1000).contains(&v));
    }
}
