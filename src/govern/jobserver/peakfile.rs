//! The peak per job a pool remembers for each run id: when `run
//! --jobserver --pool DIR --run-id ID` ends, the largest peak its build's
//! jobs measured is written to `DIR/peak-ID`, and the next run with the
//! same id and pool starts from it (`jobserver::estimate`).
//!
//! The file, text, whole lines:
//!
//! ```text
//! headroom-peak 1
//! peak_mb 350
//! ```
//!
//! - the first line names the format and its version;
//! - `peak_mb`: the largest memory a job of the build reached (a
//!   compiler's VmHWM, or a job's RSS), MiB, from 1 to [`PEAK_MAX_MB`];
//!   the margin is not in it (the reader adds its own);
//! - other `key value` lines are ignored (a later version may add some);
//!   at most [`PEAK_FILE_CAP`] bytes.
//!
//! It is written whole: a temporary file beside it, renamed over it
//! (`report::replace`), so a reader sees the old figure or the new one.
//! A run id is used in the name only when it is 1 to 64 bytes of letters,
//! digits, `.`, `_` and `-`, not starting with a dot: no path, no hidden
//! file, nothing a look at the pool's leases (`lease-*`) would read. The
//! pool's trust rules hold: never through a symlink, only regular files,
//! and in a directory others may write, only this user's or root's.
//!
//! # References
//! openat(2) `O_NOFOLLOW`, rename(2).

use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::kernel::root::{ReadError, read_fd};
use crate::report::replace;

/// The first line of the file.
pub const MAGIC: &str = "headroom-peak 1";

/// The start of every peak file's name.
pub const PEAK_PREFIX: &str = "peak-";

/// The largest peak a file may state, MiB (16 TiB): more is not a job's.
pub const PEAK_MAX_MB: u64 = 1 << 24;

/// The longest file read, bytes.
pub const PEAK_FILE_CAP: usize = 512;

/// Why a file's bytes are not a peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeakError {
    /// The first line is not [`MAGIC`].
    Magic,
    /// No `peak_mb` line.
    Missing,
    /// `peak_mb`'s value is not a whole number from 1 to [`PEAK_MAX_MB`].
    Value,
    /// Longer than [`PEAK_FILE_CAP`], or not UTF-8.
    Shape,
}

/// Why a pool's peak file was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeakIssue {
    /// The run id cannot name a file (see the module documentation).
    BadName,
    /// A symlink, a directory or a device: ignored, never followed.
    NotRegular,
    /// Owned by another user in a directory others may write.
    Untrusted {
        /// The file's owner.
        uid: u32,
    },
    /// It could not be read.
    Unreadable(Errno),
    /// Its bytes are not a peak.
    Unparsable(PeakError),
}

/// The file name for run id `run`: `peak-RUN`; `None` when `run` is not
/// a safe name.
pub fn name(run: &str) -> Option<heapless::String<72>> {
    name_with(PEAK_PREFIX, run)
}

/// The file name `PREFIX` + `run` (`peak-RUN`, `jobs-RUN`); `None` when
/// `run` is not a safe name (see the module documentation) or `prefix` is
/// longer than 8 bytes.
pub fn name_with(prefix: &str, run: &str) -> Option<heapless::String<72>> {
    let safe = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let ok = (1..=64).contains(&run.len()) && !run.starts_with('.') && run.bytes().all(safe);
    let mut n = heapless::String::new();
    (ok && n.push_str(prefix).is_ok() && n.push_str(run).is_ok()).then_some(n)
}

/// The peak in a file's `bytes`, MiB.
///
/// # Errors
/// [`PeakError`].
pub fn parse(bytes: &[u8]) -> Result<u64, PeakError> {
    parse_figure(bytes, MAGIC, "peak_mb", PEAK_MAX_MB)
}

/// The one figure of a small pool file of this shape (a peak file, a
/// budget file): at most [`PEAK_FILE_CAP`] bytes of UTF-8, first line
/// `magic`, then a `key VALUE` line whose VALUE is 1 to `max`; other
/// lines ignored.
///
/// # Errors
/// [`PeakError`]: `Shape`, `Magic`, `Missing` (no `key` line), `Value`.
pub fn parse_figure(bytes: &[u8], magic: &str, key: &str, max: u64) -> Result<u64, PeakError> {
    if bytes.len() > PEAK_FILE_CAP {
        return Err(PeakError::Shape);
    }
    let text = core::str::from_utf8(bytes).map_err(|_| PeakError::Shape)?;
    let mut lines = text.lines();
    if lines.next() != Some(magic) {
        return Err(PeakError::Magic);
    }
    let value = lines
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .ok_or(PeakError::Missing)?;
    match value.parse::<u64>() {
        Ok(mb) if (1..=max).contains(&mb) => Ok(mb),
        _ => Err(PeakError::Value),
    }
}

/// The file's text for a peak of `mb` MiB.
pub fn render(mb: u64) -> heapless::String<64> {
    let mut t = heapless::String::new();
    // 16 + 8 + 20 bytes at most: always fits.
    let _ = ufmt::uwrite!(t, "{}\npeak_mb {}\n", MAGIC, mb);
    t
}

/// The peak remembered for `run` in the pool directory `dir` (`shared`:
/// others may write it, so only `uid`'s or root's file counts); `Ok(None)`
/// when there is none. `buf` holds the file (at least
/// [`PEAK_FILE_CAP`] + 1 bytes).
///
/// # Errors
/// [`PeakIssue`]: the file is there but not used.
pub fn read(
    dir: BorrowedFd<'_>,
    run: &str,
    shared: bool,
    uid: u32,
    buf: &mut [u8],
) -> Result<Option<u64>, PeakIssue> {
    let file = name(run).ok_or(PeakIssue::BadName)?;
    match read_trusted(dir, file.as_str(), shared, uid, buf)? {
        None => Ok(None),
        Some(bytes) => parse(bytes).map(Some).map_err(PeakIssue::Unparsable),
    }
}

/// The bytes of the file `file` in the pool directory `dir`, read into
/// `buf` under the pool's trust rules: never through a symlink, only a
/// regular file, and when `shared` (others may write `dir`) only `uid`'s
/// or root's; `Ok(None)` when there is none.
///
/// # Errors
/// [`PeakIssue`]: the file is there but not used; one larger than `buf`
/// is `Unparsable(PeakError::Shape)`.
pub fn read_trusted<'b>(
    dir: BorrowedFd<'_>,
    file: &str,
    shared: bool,
    uid: u32,
    buf: &'b mut [u8],
) -> Result<Option<&'b [u8]>, PeakIssue> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, file, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP) => return Err(PeakIssue::NotRegular),
        Err(e) => return Err(PeakIssue::Unreadable(e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(PeakIssue::Unreadable)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(PeakIssue::NotRegular);
    }
    if shared && st.st_uid != uid && st.st_uid != 0 {
        return Err(PeakIssue::Untrusted { uid: st.st_uid });
    }
    match read_fd(fd.as_fd(), buf) {
        Ok(b) => Ok(Some(b)),
        Err(ReadError::Read(e)) => Err(PeakIssue::Unreadable(e)),
        Err(_) => Err(PeakIssue::Unparsable(PeakError::Shape)),
    }
}

/// Writes `mb` as the peak of `run` into the pool directory `dir`, whole
/// (a temporary file renamed over it).
///
/// # Errors
/// `EINVAL` for a run id that cannot name a file; the errno of
/// openat(2), write(2) or rename(2) (`EPERM` in a sticky directory where
/// another user's file has the name).
pub fn write(dir: BorrowedFd<'_>, run: &str, mb: u64) -> Result<(), Errno> {
    let file = name(run).ok_or(Errno::INVAL)?;
    let tmp = replace::tmp_name(file.as_str())?;
    replace::write(dir, file.as_str(), tmp.as_str(), render(mb).as_bytes())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use rustix::fd::OwnedFd;
    use std::fs;

    #[test]
    fn only_safe_run_ids_name_a_file() {
        assert_eq!(name("sqlite").as_deref(), Some("peak-sqlite"));
        assert_eq!(name("pi-build_2.x").as_deref(), Some("peak-pi-build_2.x"));
        for bad in ["", ".", "..", ".hidden", "a/b", "../x", "a b", "é", "a\nb"] {
            assert_eq!(name(bad), None, "{bad:?}");
        }
        let long: std::string::String = "a".repeat(65);
        assert_eq!(name(&long), None);
        assert!(name(&long[..64]).is_some());
    }

    #[test]
    fn the_text_round_trips_and_bad_content_is_an_error() {
        assert_eq!(render(350).as_str(), "headroom-peak 1\npeak_mb 350\n");
        assert_eq!(parse(render(350).as_bytes()), Ok(350));
        assert_eq!(parse(render(PEAK_MAX_MB).as_bytes()), Ok(PEAK_MAX_MB));
        // Other keys are ignored, before or after.
        assert_eq!(
            parse(b"headroom-peak 1\nat 17\npeak_mb 90\ncomm cc1\n"),
            Ok(90)
        );
        for (bytes, e) in [
            (&b""[..], PeakError::Magic),
            (b"headroom-peak 2\npeak_mb 1\n", PeakError::Magic),
            (b"headroom-lease 1\n", PeakError::Magic),
            (b"headroom-peak 1\n", PeakError::Missing),
            (b"headroom-peak 1\npeak_mb\n", PeakError::Missing),
            (b"headroom-peak 1\npeak_mb 0\n", PeakError::Value),
            (b"headroom-peak 1\npeak_mb -3\n", PeakError::Value),
            (b"headroom-peak 1\npeak_mb 35O\n", PeakError::Value),
            (
                b"headroom-peak 1\npeak_mb 99999999999999999999999\n",
                PeakError::Value,
            ),
            (b"headroom-peak 1\npeak_mb 16777217\n", PeakError::Value),
            (b"headroom-peak 1\n\xff\n", PeakError::Shape),
        ] {
            assert_eq!(parse(bytes), Err(e), "{bytes:?}");
        }
        let big = [b'x'; PEAK_FILE_CAP + 1];
        assert_eq!(parse(&big), Err(PeakError::Shape));
    }

    fn scratch(tag: &str) -> (std::path::PathBuf, OwnedFd) {
        let d =
            std::env::temp_dir().join(std::format!("headroom-peak-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        let fd = rustix::fs::open(
            d.to_str().unwrap(),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        (d, fd)
    }

    #[test]
    fn a_peak_written_is_read_back_and_replaced_whole() {
        let (d, dir) = scratch("rt");
        let mut buf = [0u8; PEAK_FILE_CAP + 1];
        assert_eq!(read(dir.as_fd(), "b", false, 0, &mut buf), Ok(None));
        write(dir.as_fd(), "b", 350).unwrap();
        assert_eq!(read(dir.as_fd(), "b", false, 0, &mut buf), Ok(Some(350)));
        write(dir.as_fd(), "b", 220).unwrap();
        assert_eq!(read(dir.as_fd(), "b", false, 0, &mut buf), Ok(Some(220)));
        // Only the file: no temporary left beside it.
        let names: std::vec::Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["peak-b"]);
        assert_eq!(write(dir.as_fd(), "../b", 1), Err(Errno::INVAL));
        assert_eq!(
            read(dir.as_fd(), "../b", false, 0, &mut buf),
            Err(PeakIssue::BadName)
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn bad_files_are_reported_never_followed() {
        let (d, dir) = scratch("bad");
        let mut buf = [0u8; PEAK_FILE_CAP + 1];
        fs::write(d.join("peak-junk"), "peak_mb 350\n").unwrap();
        assert_eq!(
            read(dir.as_fd(), "junk", false, 0, &mut buf),
            Err(PeakIssue::Unparsable(PeakError::Magic))
        );
        fs::write(d.join("target"), render(10).as_str()).unwrap();
        std::os::unix::fs::symlink(d.join("target"), d.join("peak-link")).unwrap();
        assert_eq!(
            read(dir.as_fd(), "link", false, 0, &mut buf),
            Err(PeakIssue::NotRegular)
        );
        fs::create_dir(d.join("peak-dir")).unwrap();
        assert_eq!(
            read(dir.as_fd(), "dir", false, 0, &mut buf),
            Err(PeakIssue::NotRegular)
        );
        fs::write(d.join("peak-huge"), [b'1'; 4096]).unwrap();
        assert_eq!(
            read(dir.as_fd(), "huge", false, 0, &mut buf),
            Err(PeakIssue::Unparsable(PeakError::Shape))
        );
        // In a directory others may write, another user's file is not
        // trusted: as root, a file given to uid 4242; else our own, read
        // as if we were another user.
        let me = rustix::process::geteuid().as_raw();
        fs::write(d.join("peak-x"), render(10).as_str()).unwrap();
        assert_eq!(read(dir.as_fd(), "x", true, me, &mut buf), Ok(Some(10)));
        let (reader, owner) = if me == 0 {
            std::os::unix::fs::chown(d.join("peak-x"), Some(4242), None).unwrap();
            (0, 4242)
        } else {
            (me + 1, me)
        };
        assert_eq!(
            read(dir.as_fd(), "x", true, reader, &mut buf),
            Err(PeakIssue::Untrusted { uid: owner })
        );
        assert_eq!(
            read(dir.as_fd(), "x", false, reader, &mut buf),
            Ok(Some(10))
        );
        let _ = fs::remove_dir_all(&d);
    }
}
