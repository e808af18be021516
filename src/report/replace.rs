//! Replacing a file whole: the new content goes to a temporary file beside
//! it, which rename(2) then puts in its place, so a reader (node_exporter,
//! a browser, a script) sees the old file or the new one, never half of
//! one. Used by the summary, by `--prom` after every tick and by `plot`.
//!
//! # References
//! rename(2) ("atomically replaced"), openat(2) O_NOFOLLOW, unlinkat(2).

use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use ufmt::uwrite;

/// Byte capacity of a temporary name `.<name>.<pid>.tmp`: a name of up to
/// 240 bytes, a pid of up to 10 digits and 7 bytes of dots and suffix,
/// under NAME_MAX (255).
pub const TMP_CAP: usize = 257;

/// The temporary name for `name`: hidden, unique to this process, and not
/// ending in `name`'s suffix (node_exporter reads only `*.prom`).
///
/// # Errors
/// [`Errno::NAMETOOLONG`] when `name` is longer than 240 bytes.
pub fn tmp_name(name: &str) -> Result<heapless::String<TMP_CAP>, Errno> {
    if name.len() > 240 {
        return Err(Errno::NAMETOOLONG);
    }
    let pid = rustix::process::getpid().as_raw_nonzero().get();
    let mut tmp = heapless::String::new();
    uwrite!(tmp, ".{}.{}.tmp", name, pid).map_err(|_| Errno::NAMETOOLONG)?;
    Ok(tmp)
}

/// What is at the path a file is about to replace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Nothing (or nothing statat(2) can see): the file will be created.
    Absent,
    /// A regular file, with its device and inode numbers (to tell it from
    /// an input file).
    Regular {
        /// `st_dev`.
        dev: u64,
        /// `st_ino`.
        ino: u64,
    },
    /// A symlink. Callers refuse it, as the CSV refuses one: someone put
    /// it there, and rename(2) would silently replace the link rather than
    /// write where it points.
    Symlink,
    /// A directory, device node, FIFO or socket: never replaced (as root,
    /// `-o /dev/null` would otherwise put a regular file in its place).
    Other,
}

/// Looks at `name` in `dir` without following a symlink.
pub fn target(dir: BorrowedFd<'_>, name: &str) -> Target {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Err(_) => Target::Absent,
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Target::Regular {
                dev: st.st_dev,
                ino: st.st_ino,
            },
            FileType::Symlink => Target::Symlink,
            _ => Target::Other,
        },
    }
}

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
///
/// # Errors
/// The errno of write(2); ENOSPC when it wrote nothing without saying why.
pub fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8]) -> Result<(), Errno> {
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(0) => return Err(Errno::NOSPC),
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Replaces `name` in `dir` with what `fill` writes to the temporary file
/// `tmp` (mode 0644 less the umask; made anew, so never through a
/// symlink nor into a FIFO or another's file left there), then
/// renames it over `name`. On any failure the temporary file is removed
/// and `name` keeps its old content.
///
/// # Errors
/// The errno of openat(2), of `fill`, or of rename(2).
pub fn replace(
    dir: BorrowedFd<'_>,
    name: &str,
    tmp: &str,
    fill: impl FnOnce(BorrowedFd<'_>) -> Result<(), Errno>,
) -> Result<(), Errno> {
    // A file left at `tmp` (a crashed writer of the same pid, or one
    // someone put in a directory others may write: a FIFO would hold
    // open(2) for ever) is removed, and the temporary made anew: O_EXCL
    // opens only a regular file this process created. One that cannot be
    // removed (another user's, sticky directory) fails with EEXIST.
    let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
    let fd = rustix::fs::openat(
        dir,
        tmp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )?;
    let r = fill(fd.as_fd()).and_then(|()| rustix::fs::renameat(dir, tmp, dir, name));
    if r.is_err() {
        let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
    }
    r
}

/// Replaces `name` in `dir` with `bytes` through the temporary file `tmp`
/// ([`replace`] with [`write_all`]): the summary, the `--prom` file.
///
/// # Errors
/// As [`replace`].
pub fn write(dir: BorrowedFd<'_>, name: &str, tmp: &str, bytes: &[u8]) -> Result<(), Errno> {
    replace(dir, name, tmp, |fd| write_all(fd, bytes))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::fs;

    fn scratch(name: &str) -> (std::path::PathBuf, rustix::fd::OwnedFd) {
        let d = std::env::temp_dir().join(std::format!(
            "headroom-replace-{name}-{}",
            std::process::id()
        ));
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
    fn a_failed_fill_keeps_the_old_file_and_leaves_no_temporary() {
        let (d, dir) = scratch("fail");
        fs::write(d.join("x.prom"), "old").unwrap();
        let tmp = tmp_name("x.prom").unwrap();
        let r = replace(dir.as_fd(), "x.prom", &tmp, |fd| {
            write_all(fd, b"half")?;
            Err(Errno::NOSPC)
        });
        assert_eq!(r, Err(Errno::NOSPC));
        assert_eq!(fs::read_to_string(d.join("x.prom")).unwrap(), "old");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        let r = replace(dir.as_fd(), "x.prom", &tmp, |fd| write_all(fd, b"new"));
        assert_eq!(r, Ok(()));
        assert_eq!(fs::read_to_string(d.join("x.prom")).unwrap(), "new");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn temporary_names_are_hidden_and_bounded() {
        let t = tmp_name("headroom.prom").unwrap();
        assert!(
            t.starts_with(".headroom.prom.") && t.ends_with(".tmp"),
            "{t}"
        );
        let long: heapless::String<241> = (0..241).map(|_| 'a').collect();
        assert_eq!(tmp_name(&long), Err(Errno::NAMETOOLONG));
        assert!(tmp_name(&long[..240]).unwrap().len() <= 255);
    }

    #[test]
    fn targets_are_told_apart() {
        let (d, dir) = scratch("link");
        fs::write(d.join("f"), "").unwrap();
        std::os::unix::fs::symlink(d.join("f"), d.join("l")).unwrap();
        fs::create_dir(d.join("sub")).unwrap();
        let fifo = d.join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            fifo.to_str().unwrap(),
            Mode::from_raw_mode(0o600),
        )
        .unwrap();
        assert!(matches!(target(dir.as_fd(), "f"), Target::Regular { .. }));
        assert_eq!(target(dir.as_fd(), "l"), Target::Symlink);
        assert_eq!(target(dir.as_fd(), "sub"), Target::Other);
        assert_eq!(target(dir.as_fd(), "fifo"), Target::Other);
        assert_eq!(target(dir.as_fd(), "missing"), Target::Absent);
        let _ = fs::remove_dir_all(&d);
    }
}
