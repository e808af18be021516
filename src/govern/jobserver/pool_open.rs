//! A pool directory (`run --jobserver --pool DIR`) opened for
//! `jobserver::pool_dir`: made when missing, its trust judged, its lock
//! file opened or made, this governor's lease file made; and each way
//! that fails, as its own [`OpenError`].
//!
//! Who may use a pool: a user who may list DIR peeks at it (`headroom
//! status`); one who may also make files in it joins it. The lock file
//! and every lease are made mode [`FILE_MODE`] (0644) whatever the umask
//! (fchmod(2) after the create): each stays its maker's, and every user
//! of the pool may open it, the lock file to lock (flock(2) needs no more
//! than a read-only descriptor), a lease to read (root's leases count for
//! everyone). A user who may not make files in DIR is refused with
//! [`OpenError::NotWritable`], naming DIR's owner and mode, before any
//! file of its own is made.
//!
//! # References
//! mkdir(2), openat(2) (`O_CREAT | O_EXCL`, `O_NOFOLLOW`), fchmod(2),
//! flock(2), stat(2), inode(7) (`S_ISVTX`).

use heapless::String;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::kernel::root::join_num;

/// The pool-wide lock file's name in DIR.
pub const LOCK_NAME: &str = ".headroom-pool.lock";

/// The start of every lease file's name.
pub const LEASE_PREFIX: &str = "lease-";

/// The mode of the lock file and of each lease, whatever the umask:
/// its maker's to write, everyone's to read (and so to lock).
pub const FILE_MODE: u32 = 0o644;

/// Why the pool cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// DIR does not exist and cannot be created (the errno of mkdir(2):
    /// EACCES for a parent this user may not write, ENOTDIR for a parent
    /// that is a file, EROFS, …).
    Create(Errno),
    /// DIR cannot be opened as a directory (the errno of open(2): ENOTDIR
    /// for a file, EACCES for a parent this user may not search, …).
    Dir(Errno),
    /// DIR is a symlink: never followed.
    Symlink,
    /// This user may not list DIR (open(2) gave EACCES): DIR's owner and
    /// mode.
    NotReadable(Access),
    /// This user may not make files in DIR (its lock file, or its lease:
    /// EACCES or EPERM): DIR's owner and mode.
    NotWritable(Access),
    /// Others may write DIR and it is not sticky: anyone could replace a
    /// lease. The directory's mode is given.
    Untrusted {
        /// `st_mode & 0o7777`.
        mode: u32,
    },
    /// The lock file is there but this user may not open it (its maker's
    /// umask left it unreadable, as a headroom before 0644 did): the lock
    /// file's owner and mode.
    LockDenied(Access),
    /// The lock file cannot be opened or made (the errno of openat(2):
    /// ELOOP for a symlink, EROFS, ENOSPC, …).
    Lock(Errno),
    /// flock(2) on the lock file failed other than by contention (the
    /// errno: ENOLCK, or EINVAL on a file system without locks).
    Locking(Errno),
    /// The pool lock was not free within the tries (another governor
    /// stopped while holding it).
    Busy,
    /// This governor's lease cannot be created or written (the errno:
    /// EROFS, ENOSPC, EDQUOT, …).
    Lease(Errno),
}

/// Who was refused, and what the directory or file refusing allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The user refused (the effective uid).
    pub uid: u32,
    /// The owner of the directory or file.
    pub owner: u32,
    /// Its mode, `st_mode & 0o7777`.
    pub mode: u32,
}

/// The mode a missing pool directory is created with, less the umask
/// (mkdir(2) keeps `S_ISVTX` on Linux): `drwxr-xr-t` under the usual umask
/// 022 (only its creator's builds join it), `drwxrwxr-t` under 002 (the
/// group's too), `drwxrwxrwt` under 000 (everyone's, as /tmp). Sticky, so
/// a directory the umask lets others write is one [`open_dir`] trusts,
/// and nobody removes another user's lease.
pub const POOL_DIR_MODE: u32 = 0o1777;

/// The mode missing parents of a pool directory are created with, less
/// the umask (as `mkdir -p`).
pub const PARENT_DIR_MODE: u32 = 0o777;

/// Creates the pool directory `path` when it does not exist, and its
/// missing parents first (`mkdir -p`): DIR with [`POOL_DIR_MODE`], the
/// parents with [`PARENT_DIR_MODE`], both less the umask. One that is
/// there already (made by another governor at the same moment, or a
/// symlink, which [`open_dir`] then refuses) is left as it is.
///
/// # Errors
/// The errno of the mkdir(2) that failed, other than EEXIST.
pub fn create_pool_dir(path: &str) -> Result<(), Errno> {
    // `pool/`, `pool/.`, `pool//`: the pool is `pool`, not a parent of it.
    let mut path = path;
    while let Some(p) = path.strip_suffix('/').or_else(|| path.strip_suffix("/.")) {
        if p.is_empty() {
            break;
        }
        path = p;
    }
    let made = |p: &str, mode: u32| match rustix::fs::mkdir(p, Mode::from_raw_mode(mode)) {
        Ok(()) | Err(Errno::EXIST) => Ok(()),
        Err(e) => Err(e),
    };
    match made(path, POOL_DIR_MODE) {
        Err(Errno::NOENT) => {}
        done => return done,
    }
    for (i, _) in path.match_indices('/').filter(|&(i, _)| i > 0) {
        made(&path[..i], PARENT_DIR_MODE)?;
    }
    made(path, POOL_DIR_MODE)
}

/// Opens the pool DIR for user `uid`, never through a symlink, and says
/// whether others may write it (then it must be sticky, and only one's
/// own and root's leases count).
///
/// # Errors
/// [`OpenError::Symlink`], [`OpenError::NotReadable`],
/// [`OpenError::Untrusted`], else [`OpenError::Dir`] with open(2)'s or
/// fstat(2)'s errno.
pub fn open_dir(path: &str, uid: u32) -> Result<(OwnedFd, bool), OpenError> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| {
        // O_DIRECTORY | O_NOFOLLOW on a symlink gives ENOTDIR, not ELOOP.
        let st = rustix::fs::lstat(path);
        match (e, st) {
            (Errno::NOTDIR | Errno::LOOP, Ok(st)) if is_symlink(st.st_mode) => OpenError::Symlink,
            (Errno::ACCESS, Ok(st)) => OpenError::NotReadable(access(uid, &st)),
            _ => OpenError::Dir(e),
        }
    })?;
    let st = rustix::fs::fstat(&dir).map_err(OpenError::Dir)?;
    let mode = st.st_mode & 0o7777;
    let others_write = mode & 0o022 != 0;
    if others_write && mode & 0o1000 == 0 {
        return Err(OpenError::Untrusted { mode });
    }
    Ok((dir, others_write))
}

/// Opens the pool-wide lock file of `dir` read-only (flock(2) needs no
/// more); when it is missing, makes it with [`FILE_MODE`] if `create`,
/// else `Ok(None)`. An EACCES is tried again for about 20 ms: a lock file
/// another governor has just made is readable once its fchmod is done.
///
/// # Errors
/// [`OpenError::NotWritable`] (it cannot be made: `uid` may not write
/// DIR), [`OpenError::LockDenied`] (it is there and `uid` may not read
/// it), [`OpenError::NotReadable`] (`uid` may not search DIR), else
/// [`OpenError::Lock`] with openat(2)'s errno.
pub fn open_lock(
    dir: BorrowedFd<'_>,
    uid: u32,
    create: bool,
) -> Result<Option<OwnedFd>, OpenError> {
    let base = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let mut last = Errno::NOENT;
    for _ in 0..20 {
        last = match rustix::fs::openat(dir, LOCK_NAME, base, Mode::empty()) {
            Ok(fd) => return Ok(Some(fd)),
            Err(Errno::NOENT) if !create => return Ok(None),
            Err(Errno::NOENT) => match make_file(dir, LOCK_NAME, base) {
                Ok(fd) => return Ok(Some(fd)),
                Err(Errno::EXIST) => Errno::EXIST, // made meanwhile: open it
                Err(Errno::ACCESS | Errno::PERM) => {
                    return Err(OpenError::NotWritable(dir_access(dir, uid)?));
                }
                Err(e) => return Err(OpenError::Lock(e)),
            },
            Err(Errno::ACCESS) => {
                pause_1ms();
                Errno::ACCESS
            }
            Err(e) => return Err(OpenError::Lock(e)),
        };
    }
    if last != Errno::ACCESS {
        return Err(OpenError::Lock(last));
    }
    match rustix::fs::statat(dir, LOCK_NAME, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Err(OpenError::LockDenied(access(uid, &st))),
        Err(_) => Err(OpenError::NotReadable(dir_access(dir, uid)?)),
    }
}

/// Creates `lease-PID-N` in `dir` (the first free N: a PID of another
/// namespace may be the same) with [`FILE_MODE`] and takes its lock;
/// called with the pool lock held.
///
/// # Errors
/// [`OpenError::NotWritable`] when `uid` may not make files in DIR, else
/// [`OpenError::Lease`] with openat(2)'s or flock(2)'s errno
/// (ENAMETOOLONG, or EEXIST when 64 names of this PID are taken).
pub fn create_lease(
    dir: BorrowedFd<'_>,
    pid: u32,
    uid: u32,
) -> Result<(OwnedFd, String<64>), OpenError> {
    let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut path = [0u8; 64];
    let mut prefix = [0u8; 40];
    let too_long = OpenError::Lease(Errno::NAMETOOLONG);
    let head = join_num(&mut prefix, LEASE_PREFIX, u64::from(pid), "-").ok_or(too_long)?;
    for n in 0..64u64 {
        let name = join_num(&mut path, head, n, "").ok_or(too_long)?;
        let fd = match make_file(dir, name, flags) {
            Ok(fd) => fd,
            Err(Errno::EXIST) => continue,
            Err(Errno::ACCESS | Errno::PERM) => {
                return Err(OpenError::NotWritable(dir_access(dir, uid)?));
            }
            Err(e) => return Err(OpenError::Lease(e)),
        };
        if let Err(e) = rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
            let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
            return Err(OpenError::Lease(e));
        }
        return Ok((fd, String::try_from(name).map_err(|_| too_long)?));
    }
    Err(OpenError::Lease(Errno::EXIST))
}

/// Takes the lock `op` (non-blocking) on `lock`, tried 20 times over about
/// 20 ms, so that a governor stopped while holding it (Ctrl-Z) delays the
/// others instead of hanging them.
///
/// # Errors
/// [`OpenError::Busy`] when it stays taken; [`OpenError::Locking`] for
/// any other flock(2) error.
pub fn take(lock: &OwnedFd, op: FlockOperation) -> Result<(), OpenError> {
    for _ in 0..20 {
        match rustix::fs::flock(lock, op) {
            Ok(()) => return Ok(()),
            Err(Errno::WOULDBLOCK | Errno::INTR) => pause_1ms(),
            Err(e) => return Err(OpenError::Locking(e)),
        }
    }
    Err(OpenError::Busy)
}

/// Makes the file `name` in `dir` (`O_CREAT | O_EXCL`, with `flags`) and
/// gives it [`FILE_MODE`], which the umask may have cut.
fn make_file(dir: BorrowedFd<'_>, name: &str, flags: OFlags) -> Result<OwnedFd, Errno> {
    let flags = flags | OFlags::CREATE | OFlags::EXCL;
    let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(FILE_MODE))?;
    // Its own file: fchmod(2) fails only on a read-only file system, where
    // the create would have failed first.
    let _ = rustix::fs::fchmod(&fd, Mode::from_raw_mode(FILE_MODE));
    Ok(fd)
}

/// `uid` and the owner and mode of `dir`.
///
/// # Errors
/// [`OpenError::Dir`] with fstat(2)'s errno.
fn dir_access(dir: BorrowedFd<'_>, uid: u32) -> Result<Access, OpenError> {
    let st = rustix::fs::fstat(dir.as_fd()).map_err(OpenError::Dir)?;
    Ok(access(uid, &st))
}

/// `uid` and the owner and mode of `st`.
fn access(uid: u32, st: &rustix::fs::Stat) -> Access {
    Access {
        uid,
        owner: st.st_uid,
        mode: st.st_mode & 0o7777,
    }
}

/// Whether `st_mode` is a symlink's.
fn is_symlink(st_mode: u32) -> bool {
    rustix::fs::FileType::from_raw_mode(st_mode) == rustix::fs::FileType::Symlink
}

/// Sleeps about a millisecond, between tries of a lock or an open.
fn pause_1ms() {
    let pause = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 1_000_000,
    };
    let _ = rustix::thread::nanosleep(&pause);
}
