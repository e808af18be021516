//! Kernel files kept open between ticks and re-read with pread(2) at
//! offset 0.
//!
//! /proc and /sys files are text the kernel generates on each read from
//! offset 0 (seq_file: `fs/seq_file.c` resets its iterator there; sysfs
//! attributes call their `show` again), so a descriptor opened once can
//! be read every tick with one pread(2) instead of openat + read + close:
//! on this VM meminfo costs 6.8 µs that way against 11.2 µs. The price is
//! kernel memory: a seq_file that has been read keeps its buffer (at least
//! a page: 4 KiB, 16 KiB on a Pi 5's kernel, 64 KiB on some arm64 ones)
//! until the descriptor is closed. So only the files every tick reads are
//! kept, each reader bounds how many it keeps, and the sampler bounds
//! their sum (`tick::sampler::MAX_KEPT`).
//!
//! A `--root` tree is ordinary files that a capture or a test may replace
//! by rename: a kept descriptor would go on reading the old file. There a
//! [`Kept`] is made with `keep == false` and opens the name on every read.
//!
//! # References
//! pread(2), openat(2); `Documentation/filesystems/seq_file.rst`,
//! `Documentation/filesystems/sysfs.rst`.

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;

use crate::kernel::root::{ReadError, open_file_at};

/// How the text of a file comes back from the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One record (`single_open` seq files such as meminfo, stat, loadavg,
    /// psi and /proc/PID/status; sysfs and cgroup attributes): one read
    /// with a larger buffer returns all of it, so a read shorter than the
    /// buffer is the whole file and no second read is made to see the end.
    /// A read that fills the buffer is [`ReadError::Truncated`].
    Whole,
    /// A sequence of records (`/proc/vmstat`, `cgroup.procs`): a read
    /// returns at most the seq_file's buffer (a page), so reads go on at
    /// the next offset until one returns 0.
    Records,
}

/// One file, read through a descriptor kept between reads (`keep`) or
/// opened by name on each read.
#[derive(Debug)]
pub struct Kept {
    fd: Option<OwnedFd>,
    keep: bool,
}

impl Kept {
    /// A file not yet opened; kept open after its first read when `keep`
    /// (the live root), else opened and closed on each read.
    pub const fn new(keep: bool) -> Kept {
        Kept { fd: None, keep }
    }

    /// True while a descriptor is held.
    pub fn is_open(&self) -> bool {
        self.fd.is_some()
    }

    /// Closes the descriptor, if any (the file is opened again by the
    /// next read).
    pub fn close(&mut self) {
        self.fd = None;
    }

    /// Reads `path`, relative to `dir`, into `buf`: through the kept
    /// descriptor when there is one; when that read fails (a zram device
    /// reset, a cgroup removed: ENODEV), the file is opened once more by
    /// name and read, so a file re-created under the same name is found.
    ///
    /// # Errors
    /// [`ReadError::Open`] when the name cannot be opened, else as
    /// [`read_shape`]. Nothing is kept after an error.
    pub fn read<'b>(
        &mut self,
        dir: BorrowedFd<'_>,
        path: &str,
        buf: &'b mut [u8],
        shape: Shape,
    ) -> Result<&'b [u8], ReadError> {
        if let Some(fd) = &self.fd {
            match read_shape(fd.as_fd(), buf, shape) {
                Ok(n) => return Ok(&buf[..n]),
                Err(_) => self.fd = None,
            }
        }
        let fd = open_file_at(dir, path)?;
        let n = read_shape(fd.as_fd(), buf, shape)?;
        if self.keep {
            self.fd = Some(fd);
        }
        Ok(&buf[..n])
    }

    /// Reads through the kept descriptor only, never by name: for a file
    /// whose name may come to mean another object (`/proc/PID/status` of
    /// a PID reused by a new process). `None` when nothing is kept.
    ///
    /// # Errors
    /// As [`read_shape`] (ESRCH: the process has exited); the descriptor
    /// is closed then.
    pub fn reread<'b>(
        &mut self,
        buf: &'b mut [u8],
        shape: Shape,
    ) -> Option<Result<&'b [u8], ReadError>> {
        let fd = self.fd.as_ref()?;
        match read_shape(fd.as_fd(), buf, shape) {
            Ok(n) => Some(Ok(&buf[..n])),
            Err(e) => {
                self.fd = None;
                Some(Err(e))
            }
        }
    }

    /// Keeps `fd` (just opened and read by the caller) when this file is
    /// kept; else it is closed.
    pub fn adopt(&mut self, fd: OwnedFd) {
        if self.keep {
            self.fd = Some(fd);
        }
    }
}

/// Reads `fd` from offset 0 into `buf` with pread(2), as `shape` says;
/// returns the length read.
///
/// # Errors
/// [`ReadError::Read`] with the errno, or [`ReadError::Truncated`] when
/// the text does not fit in `buf`.
pub fn read_shape(fd: BorrowedFd<'_>, buf: &mut [u8], shape: Shape) -> Result<usize, ReadError> {
    let mut len = pread(fd, buf, 0)?;
    if shape == Shape::Whole {
        return if len >= buf.len() {
            Err(ReadError::Truncated {
                capacity: buf.len(),
            })
        } else {
            Ok(len)
        };
    }
    while len < buf.len() {
        match pread(fd, &mut buf[len..], len as u64)? {
            0 => return Ok(len),
            n => len += n,
        }
    }
    let mut probe = [0u8; 1];
    match pread(fd, &mut probe, len as u64)? {
        0 => Ok(len),
        _ => Err(ReadError::Truncated {
            capacity: buf.len(),
        }),
    }
}

/// pread(2), retried on EINTR.
fn pread(fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> Result<usize, ReadError> {
    loop {
        match rustix::io::pread(fd, &mut *buf, offset) {
            Err(Errno::INTR) => continue,
            Err(e) => return Err(ReadError::Read(e)),
            Ok(n) => return Ok(n),
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::kernel::root::Root;
    use std::fs;

    fn dir(tag: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(std::format!("headroom-kept-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// The live /proc: a kept meminfo is read again with the kernel's new
    /// text (one pread), vmstat whole across its page-sized reads.
    #[test]
    fn a_kept_proc_file_is_regenerated_at_offset_zero() {
        let root = Root::open("/").unwrap();
        let mut m = Kept::new(true);
        let mut buf = [0u8; 16 * 1024];
        let a = m
            .read(root.fd(), "proc/meminfo", &mut buf, Shape::Whole)
            .unwrap()
            .len();
        assert!(m.is_open());
        let b = m
            .read(root.fd(), "proc/meminfo", &mut buf, Shape::Whole)
            .unwrap();
        assert!(b.starts_with(b"MemTotal:") && b.len() > 100 && a > 100);
        let mut v = Kept::new(true);
        let whole = v
            .read(root.fd(), "proc/vmstat", &mut buf, Shape::Records)
            .unwrap()
            .len();
        let once = fs::read("/proc/vmstat").unwrap().len();
        assert!(whole + 200 > once && once + 200 > whole, "{whole} {once}");
        let again = v
            .read(root.fd(), "proc/vmstat", &mut buf, Shape::Records)
            .unwrap();
        assert!(again.starts_with(b"nr_free_pages"));
    }

    /// A file replaced by rename: a file not kept follows the name; a kept
    /// one whose read fails is opened again by name.
    #[test]
    fn not_kept_follows_the_name_and_kept_reopens_after_a_failure() {
        let d = dir("rename");
        fs::write(d.join("f"), "old\n").unwrap();
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let mut buf = [0u8; 64];
        let mut follow = Kept::new(false);
        assert_eq!(
            follow.read(root.fd(), "f", &mut buf, Shape::Whole).unwrap(),
            b"old\n"
        );
        assert!(!follow.is_open());
        fs::write(d.join("g"), "new\n").unwrap();
        fs::rename(d.join("g"), d.join("f")).unwrap();
        assert_eq!(
            follow.read(root.fd(), "f", &mut buf, Shape::Whole).unwrap(),
            b"new\n"
        );
        // Kept: still the old inode after a rename (why a --root is not kept).
        let mut kept = Kept::new(true);
        kept.read(root.fd(), "f", &mut buf, Shape::Whole).unwrap();
        fs::write(d.join("g"), "newer\n").unwrap();
        fs::rename(d.join("g"), d.join("f")).unwrap();
        assert_eq!(
            kept.read(root.fd(), "f", &mut buf, Shape::Whole).unwrap(),
            b"new\n"
        );
        // Too large: an error, and nothing kept; the next read opens anew.
        let mut small = [0u8; 4];
        assert_eq!(
            kept.read(root.fd(), "f", &mut small, Shape::Whole),
            Err(ReadError::Truncated { capacity: 4 })
        );
        assert!(!kept.is_open());
        assert_eq!(
            kept.read(root.fd(), "f", &mut buf, Shape::Whole).unwrap(),
            b"newer\n"
        );
        assert_eq!(
            kept.read(root.fd(), "f", &mut small, Shape::Records),
            Err(ReadError::Truncated { capacity: 4 })
        );
        fs::remove_file(d.join("f")).unwrap();
        assert!(
            kept.read(root.fd(), "f", &mut buf, Shape::Whole)
                .unwrap_err()
                .is_gone()
        );
        let _ = fs::remove_dir_all(&d);
    }

    /// `reread` never opens by name: the status of an exited process is an
    /// error (ESRCH) and the descriptor is let go.
    #[test]
    fn reread_of_an_exited_process_is_an_error_and_closes() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let root = Root::open("/").unwrap();
        let path = std::format!("proc/{}/status", child.id());
        let mut k = Kept::new(true);
        let mut buf = [0u8; 4096];
        assert!(
            k.read(root.fd(), &path, &mut buf, Shape::Whole)
                .unwrap()
                .starts_with(b"Name:")
        );
        assert!(matches!(k.reread(&mut buf, Shape::Whole), Some(Ok(_))));
        child.kill().unwrap();
        child.wait().unwrap();
        let r = k.reread(&mut buf, Shape::Whole).unwrap();
        assert!(r.unwrap_err().is_gone());
        assert!(!k.is_open() && k.reread(&mut buf, Shape::Whole).is_none());
    }
}
