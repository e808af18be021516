//! Reading kernel files relative to a root directory opened once.
//!
//! `--root DIR` makes every reader look at `DIR/proc/…` and `DIR/sys/…`
//! instead of the live ones, so a captured board tree (`boards/<name>/`) or a
//! fixture is read by exactly the code that reads the real kernel. Paths are
//! passed as `&str` shorter than 256 bytes, which rustix turns into C strings
//! on the stack: opening a file allocates nothing.
//!
//! A tree may hold a second capture of its counters taken a moment after
//! the first, under `later/` (`later/proc/diskstats`, `later/sys/…/stat`):
//! once the sampler's first tick is taken ([`Root::advance`]), a file read
//! through [`Root::at`] comes from `later/` when it is there, from the tree
//! itself otherwise, so the second tick has rates. The live root never has
//! one.
//!
//! # References
//! openat(2), read(2), getdents64(2), faccessat(2).

use core::cell::Cell;
use core::mem::MaybeUninit;

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Access, AtFlags, Mode, OFlags, RawDir};
use rustix::io::Errno;

/// Why a file could not be read into its fixed buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// openat(2) failed (ENOENT: absent; EACCES; …).
    Open(Errno),
    /// read(2) failed after a successful open (EOPNOTSUPP on a PSI file of a
    /// kernel booted without `psi=1`, ESRCH on a vanished PID, EIO, …).
    Read(Errno),
    /// The file is larger than the buffer: the fixed size chosen for it was
    /// wrong for this kernel. Never a silent cut.
    Truncated {
        /// Capacity of the buffer that overflowed, in bytes.
        capacity: usize,
    },
    /// Not a regular file (a FIFO, a device, a directory) where one is
    /// required: reading it could block forever or never end.
    NotRegular,
}

impl ReadError {
    /// The errno behind the failure, if any.
    pub fn errno(self) -> Option<Errno> {
        match self {
            ReadError::Open(e) | ReadError::Read(e) => Some(e),
            ReadError::Truncated { .. } | ReadError::NotRegular => None,
        }
    }

    /// True when the file (or the process it belonged to) does not exist:
    /// ENOENT or ESRCH, which /proc/PID files return interchangeably when a
    /// process exits mid-scan.
    pub fn is_gone(self) -> bool {
        matches!(self.errno(), Some(Errno::NOENT) | Some(Errno::SRCH))
    }

    /// A short description for a one-line warning, naming the errno for
    /// the failures a user can look up (`read failed: I/O error (EIO)`).
    pub fn describe(self) -> &'static str {
        match self {
            ReadError::Open(Errno::NOENT) => "not found",
            ReadError::Open(Errno::ACCESS) | ReadError::Open(Errno::PERM) => "permission denied",
            ReadError::Open(Errno::LOOP) => "cannot open: symlink loop (ELOOP)",
            ReadError::Open(Errno::NXIO) => "cannot open: no such device (ENXIO)",
            ReadError::Open(Errno::NODEV) => "cannot open: no such device (ENODEV)",
            ReadError::Open(_) => "cannot open",
            ReadError::Read(Errno::OPNOTSUPP) => "not supported by this kernel (EOPNOTSUPP)",
            ReadError::Read(Errno::IO) => "read failed: I/O error (EIO)",
            ReadError::Read(Errno::ISDIR) => "read failed: a directory (EISDIR)",
            ReadError::Read(Errno::INVAL) => "read failed: invalid argument (EINVAL)",
            ReadError::Read(Errno::NODEV) => "read failed: no such device (ENODEV)",
            ReadError::Read(Errno::SRCH) => "read failed: process gone (ESRCH)",
            ReadError::Read(Errno::AGAIN) => "read failed: would block (EAGAIN)",
            ReadError::Read(_) => "read failed",
            ReadError::Truncated { .. } => "larger than its buffer",
            ReadError::NotRegular => "not a regular file",
        }
    }
}

/// The directory of a tree's second capture, relative to the tree.
pub const LATER: &str = "later";

/// The directory that `proc/` and `sys/` are read under (`/` by default).
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    /// A tree's `later/` capture; never on the live root.
    later: Option<OwnedFd>,
    /// Set by [`Root::advance`]: reads prefer `later/`.
    on_later: Cell<bool>,
}

impl Root {
    /// Opens `path` as the root directory (O_DIRECTORY | O_CLOEXEC).
    ///
    /// # Errors
    /// The errno of openat(2), e.g. ENOENT or ENOTDIR.
    pub fn open(path: &str) -> Result<Root, Errno> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut root = Root {
            later: open_dir_at(fd.as_fd(), LATER).ok(),
            fd,
            on_later: Cell::new(false),
        };
        if root.later.is_some() && root.is_live() {
            root.later = None;
        }
        Ok(root)
    }

    /// True when the tree has a second capture (`later/`).
    pub fn has_later(&self) -> bool {
        self.later.is_some()
    }

    /// From now on, files are read from `later/` where it has them: the
    /// sampler calls this once its first tick is taken.
    pub fn advance(&self) {
        self.on_later.set(self.later.is_some());
    }

    /// The directory to read `path` (relative) from: `later/` after
    /// [`Root::advance`] when it holds `path`, else the root's own.
    pub fn at(&self, path: &str) -> BorrowedFd<'_> {
        match &self.later {
            Some(l)
                if self.on_later.get()
                    && rustix::fs::accessat(l, path, Access::EXISTS, AtFlags::empty()).is_ok() =>
            {
                l.as_fd()
            }
            _ => self.fd.as_fd(),
        }
    }

    /// True when this root is the running system's `/` (same device and
    /// inode): its /proc and /sys are the kernel's, whose files may be kept
    /// open ([`crate::kernel::kept`]); any other root is a tree of ordinary
    /// files.
    pub fn is_live(&self) -> bool {
        let (Ok(a), Ok(b)) = (rustix::fs::fstat(&self.fd), rustix::fs::stat("/")) else {
            return false;
        };
        a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// The root directory's file descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Reads the whole of `path` (relative, e.g. `proc/meminfo`) into `buf`,
    /// through [`Root::at`].
    ///
    /// # Errors
    /// See [`ReadError`]; a file that does not fit is `Truncated`.
    pub fn read<'b>(&self, path: &str, buf: &'b mut [u8]) -> Result<&'b [u8], ReadError> {
        read_at(self.at(path), path, buf)
    }

    /// Opens the directory `path` under the root.
    ///
    /// # Errors
    /// The errno of openat(2).
    pub fn open_dir(&self, path: &str) -> Result<OwnedFd, Errno> {
        open_dir_at(self.fd.as_fd(), path)
    }
}

/// Opens directory `path` relative to `dir` (O_DIRECTORY | O_CLOEXEC).
///
/// # Errors
/// The errno of openat(2).
pub fn open_dir_at(dir: BorrowedFd<'_>, path: &str) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Reads the whole of `path`, relative to `dir`, into `buf`.
///
/// Reads until end of file. When `buf` fills, one more byte is attempted: if
/// the file had more, the result is [`ReadError::Truncated`].
///
/// # Errors
/// [`ReadError::Open`], [`ReadError::Read`] or [`ReadError::Truncated`].
pub fn read_at<'b>(
    dir: BorrowedFd<'_>,
    path: &str,
    buf: &'b mut [u8],
) -> Result<&'b [u8], ReadError> {
    read_fd(open_file_at(dir, path)?.as_fd(), buf)
}

/// Opens `path` relative to `dir` for reading. O_NONBLOCK: a FIFO planted
/// in a --root tree reads as empty instead of blocking the sampler; /proc
/// and /sys files ignore the flag.
///
/// # Errors
/// [`ReadError::Open`] with the errno of openat(2).
///
/// `path` is a `&str` or, to spare rustix the copy that adds the NUL, a
/// `&CStr` (per-process paths: [`crate::followed::compilers::pid_path`]).
pub fn open_file_at<P: rustix::path::Arg>(
    dir: BorrowedFd<'_>,
    path: P,
) -> Result<OwnedFd, ReadError> {
    rustix::fs::openat(
        dir,
        path,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(ReadError::Open)
}

/// Reads `path`, relative to `dir`, with ONE read(2): for files the kernel
/// generates whole on each read (/proc/PID/comm, stat and status are
/// `single_open` seq files, at most a few KiB), a read shorter than `buf`
/// has everything, and the second read(2) that would only confirm end of
/// file is saved; on the per-process path that is a quarter of the
/// syscalls. A read that fills `buf` is [`ReadError::Truncated`], as in
/// [`read_at`].
///
/// # Errors
/// [`ReadError::Open`], [`ReadError::Read`] or [`ReadError::Truncated`].
pub fn read_once_at<'b, P: rustix::path::Arg>(
    dir: BorrowedFd<'_>,
    path: P,
    buf: &'b mut [u8],
) -> Result<&'b [u8], ReadError> {
    let fd = open_file_at(dir, path)?;
    let n = loop {
        match rustix::io::read(&fd, &mut *buf) {
            Err(Errno::INTR) => continue,
            Err(e) => return Err(ReadError::Read(e)),
            Ok(n) => break n,
        }
    };
    if n >= buf.len() {
        return Err(ReadError::Truncated {
            capacity: buf.len(),
        });
    }
    Ok(&buf[..n])
}

/// Reads from `fd` until end of file into `buf`; see [`read_at`].
///
/// # Errors
/// [`ReadError::Read`] or [`ReadError::Truncated`].
pub fn read_fd<'b>(fd: BorrowedFd<'_>, buf: &'b mut [u8]) -> Result<&'b [u8], ReadError> {
    let mut len = 0;
    while len < buf.len() {
        match rustix::io::read(fd, &mut buf[len..]) {
            Ok(0) => return Ok(&buf[..len]),
            Ok(n) => len += n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(ReadError::Read(e)),
        }
    }
    let mut probe = [0u8; 1];
    loop {
        match rustix::io::read(fd, &mut probe) {
            Ok(0) => return Ok(&buf[..len]),
            Ok(_) => {
                return Err(ReadError::Truncated {
                    capacity: buf.len(),
                });
            }
            Err(Errno::INTR) => continue,
            Err(e) => return Err(ReadError::Read(e)),
        }
    }
}

/// Calls `f` with the name of every entry of the directory `dir` (other
/// than `.` and `..`), using `scratch` as the getdents64(2) buffer.
///
/// The directory offset is rewound first, so the same open directory can be
/// listed once per tick. Stops early when `f` returns `false`.
///
/// # Errors
/// The errno of lseek(2) or getdents64(2).
pub fn for_each_entry(
    dir: BorrowedFd<'_>,
    scratch: &mut [MaybeUninit<u8>],
    mut f: impl FnMut(&[u8], rustix::fs::FileType) -> bool,
) -> Result<(), Errno> {
    for_each_entry_ino(dir, scratch, |name, kind, _| f(name, kind))
}

/// [`for_each_entry`], also passing each entry's inode number (`d_ino`).
///
/// # Errors
/// The errno of lseek(2) or getdents64(2).
pub fn for_each_entry_ino(
    dir: BorrowedFd<'_>,
    scratch: &mut [MaybeUninit<u8>],
    mut f: impl FnMut(&[u8], rustix::fs::FileType, u64) -> bool,
) -> Result<(), Errno> {
    rustix::fs::seek(dir, rustix::fs::SeekFrom::Start(0))?;
    let mut it = RawDir::new(dir, scratch);
    while let Some(entry) = it.next() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        if !f(name, entry.file_type(), entry.ino()) {
            break;
        }
    }
    Ok(())
}

/// Formats `prefix`, the decimal `n` and `suffix` into `out` (e.g.
/// `12345/comm`), returning the text; `None` when `out` is too small.
///
/// Used to build per-PID paths on the stack, once per process per tick,
/// without formatting machinery.
pub fn join_num<'o>(out: &'o mut [u8], prefix: &str, n: u64, suffix: &str) -> Option<&'o str> {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let parts: [&[u8]; 3] = [prefix.as_bytes(), &digits[i..], suffix.as_bytes()];
    let mut len = 0;
    for p in parts {
        out.get_mut(len..len + p.len())?.copy_from_slice(p);
        len += p.len();
    }
    core::str::from_utf8(&out[..len]).ok()
}

/// Path (under a `--root` tree) of the board's page size capture: the
/// decimal byte count of `getconf PAGESIZE` (sysconf(3) `_SC_PAGESIZE`,
/// the kernel's `PAGE_SIZE`) and a newline, as `ci/capture-board` writes
/// it. Not a kernel file: the page size is a syscall's answer (the
/// auxiliary vector's `AT_PAGESZ`), so a board tree records it here, as
/// it records statvfs(3) in `statvfs`.
pub const PAGESIZE_FILE: &str = "pagesize";

/// Page size assumed for a `--root` tree without [`PAGESIZE_FILE`] (or
/// with one that is not a whole number of KiB), in KiB: the smallest one
/// flags the fewest zram devices "full" (a device whose used == size is
/// full with any page size).
pub const TREE_PAGE_KIB: u64 = 4;

/// The page size of the system under `root`, KiB: this machine's when
/// `live` ([`Root::is_live`]), else the tree's [`PAGESIZE_FILE`] (absent
/// or malformed: [`TREE_PAGE_KIB`]). The one size every page count read
/// under a root is converted by: `/proc/vmstat` `pswpin`/`pswpout`,
/// `/proc/PID/stat` rss, the zram swap device judged full.
pub fn page_kib(root: &Root, live: bool) -> u64 {
    if live {
        return u64::try_from(rustix::param::page_size() / 1024)
            .unwrap_or(TREE_PAGE_KIB)
            .max(1);
    }
    let mut buf = [0u8; 24];
    root.read(PAGESIZE_FILE, &mut buf)
        .ok()
        .and_then(parse_page_kib)
        .unwrap_or(TREE_PAGE_KIB)
}

/// Parses a [`PAGESIZE_FILE`] (`16384\n`) into KiB; `None` unless it is a
/// power of two from 1 KiB to 256 KiB (every page size Linux has: 4, 16
/// and 64 KiB on arm64, 256 KiB on hexagon and some powerpc).
pub fn parse_page_kib(b: &[u8]) -> Option<u64> {
    let bytes = crate::kernel::parse::parse_u64(crate::kernel::parse::trim(b))?;
    ((1024..=256 * 1024).contains(&bytes) && bytes.is_power_of_two()).then_some(bytes / 1024)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    /// Case `boards/rpi5-8g-16k/pagesize` (a 16 KiB-page Pi 5 kernel,
    /// `CONFIG_ARM64_16K_PAGES`) and the 4 KiB of every other board.
    #[test]
    fn page_size_capture_parses_whole_kib_powers_of_two() {
        assert_eq!(parse_page_kib(b"16384\n"), Some(16));
        assert_eq!(parse_page_kib(b"4096"), Some(4));
        assert_eq!(parse_page_kib(b"65536\n"), Some(64));
        assert_eq!(parse_page_kib(b"262144\n"), Some(256));
        for bad in [
            &b""[..],
            b"0\n",
            b"512\n",
            b"5000\n",
            b"16k\n",
            b"-4096\n",
            b"524288\n",
            b"4611686018427387904\n",
        ] {
            assert_eq!(parse_page_kib(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_tree_gives_its_captured_page_size_else_four_kib() {
        let dir = std::env::temp_dir().join(std::format!("headroom-page-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        assert_eq!(page_kib(&root, false), TREE_PAGE_KIB);
        std::fs::write(dir.join(PAGESIZE_FILE), b"16384\n").unwrap();
        assert_eq!(page_kib(&root, false), 16);
        std::fs::write(dir.join(PAGESIZE_FILE), b"sixteen\n").unwrap();
        assert_eq!(page_kib(&root, false), TREE_PAGE_KIB);
        let live = (rustix::param::page_size() / 1024) as u64;
        assert_eq!(page_kib(&root, true), live);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn join_num_formats_and_checks_capacity() {
        let mut b = [0u8; 32];
        assert_eq!(join_num(&mut b, "", 12345, "/comm"), Some("12345/comm"));
        assert_eq!(
            join_num(&mut b, "zram", 0, "/mm_stat"),
            Some("zram0/mm_stat")
        );
        let mut small = [0u8; 4];
        assert_eq!(join_num(&mut small, "", 12345, ""), None);
    }

    #[test]
    fn read_reports_truncation_not_a_cut() {
        let dir = std::env::temp_dir().join(std::format!("headroom-root-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f"), b"0123456789").unwrap();
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut exact = [0u8; 10];
        assert_eq!(root.read("f", &mut exact).unwrap(), b"0123456789");
        let mut small = [0u8; 9];
        assert_eq!(
            root.read("f", &mut small),
            Err(ReadError::Truncated { capacity: 9 })
        );
        assert!(root.read("absent", &mut exact).unwrap_err().is_gone());
        // One read: whole when shorter than the buffer, Truncated when it fills it.
        let mut big = [0u8; 64];
        assert_eq!(
            read_once_at(root.fd(), "f", &mut big).unwrap(),
            b"0123456789"
        );
        assert_eq!(
            read_once_at(root.fd(), "f", &mut exact),
            Err(ReadError::Truncated { capacity: 10 })
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_later_capture_is_read_after_advance_where_it_has_the_file() {
        let dir = std::env::temp_dir().join(std::format!("headroom-later-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("later/proc")).unwrap();
        std::fs::create_dir_all(dir.join("proc")).unwrap();
        std::fs::write(dir.join("proc/a"), b"first").unwrap();
        std::fs::write(dir.join("proc/b"), b"only").unwrap();
        std::fs::write(dir.join("later/proc/a"), b"later").unwrap();
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        assert!(root.has_later());
        let mut buf = [0u8; 16];
        assert_eq!(root.read("proc/a", &mut buf).unwrap(), b"first");
        root.advance();
        assert_eq!(root.read("proc/a", &mut buf).unwrap(), b"later");
        assert_eq!(root.read("proc/b", &mut buf).unwrap(), b"only");
        // A tree without later/ and the live root: advance changes nothing.
        std::fs::remove_dir_all(dir.join("later")).unwrap();
        let plain = Root::open(dir.to_str().unwrap()).unwrap();
        plain.advance();
        assert!(!plain.has_later());
        assert_eq!(plain.read("proc/a", &mut buf).unwrap(), b"first");
        assert!(!Root::open("/").unwrap().has_later());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
