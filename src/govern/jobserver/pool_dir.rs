//! A shared memory pool on disk (`run --jobserver --pool DIR`): the
//! directory, its pool-wide lock, this governor's lease, and a look at
//! everyone else's.
//!
//! - `DIR/.headroom-pool.lock` is the pool-wide lock: flock(2) `LOCK_EX`
//!   around every look and every rewrite of a lease, so that admissions
//!   happen one at a time and nobody reads half a lease.
//! - `DIR/lease-PID-N` is one governor's [`Lease`], created (`O_EXCL`) and
//!   flock'ed `LOCK_EX` while the pool lock is held, so nobody ever sees it
//!   unlocked; rewritten in place (pwrite at 0, then ftruncate), never by
//!   temp-and-rename, which would move the name off the locked inode.
//! - `DIR/peak-RUN` is the peak per job the last run of run id RUN
//!   measured (`jobserver::peakfile`), written whole at its end;
//!   `DIR/jobs-RUN` the peak of each of its jobs by key
//!   (`jobserver::job_peaks`), merged under the pool lock and written
//!   whole at its end; a look reads only `lease-*`.
//! - A lease whose `LOCK_SH | LOCK_NB` succeeds belongs to a governor that
//!   is gone (killed, OOM-killed, its container stopped: the kernel drops
//!   a flock with the last descriptor): it counts nothing and is removed,
//!   its paused jobs handed to the caller to continue.
//! - flock locks belong to the open file description, so a `close` of
//!   another descriptor of the same file never drops them (a POSIX
//!   `fcntl` record lock would be dropped); every descriptor here is
//!   close-on-exec, so CMD never holds one.
//!
//! Trust: a directory that others may write is refused unless it is
//! sticky (as /tmp is), and then only leases owned by this user or root
//! count (the file's owner, never what it says). Nothing is followed
//! through a symlink (`O_NOFOLLOW`). The lock file and the leases are
//! 0644 whatever the umask, so that every user of a shared pool can lock
//! the one and read the others (`jobserver::pool_open`).
//!
//! A DIR that does not exist is created, with its missing parents, as a
//! cache directory is ([`create_pool_dir`]): mode 01777 less the umask,
//! so that the umask says who shares it and the sticky bit makes any
//! sharing it allows one the trust rule accepts. How DIR, the lock file
//! and a lease are opened or made, and each way that fails, is
//! `jobserver::pool_open`.
//!
//! No daemon, no root: any governor that may write DIR takes part, across
//! PID namespaces and containers that share it.
//!
//! # References
//! flock(2), openat(2) (`O_EXCL`, `O_NOFOLLOW`), pwrite(2), ftruncate(2),
//! inode(7) (`S_ISVTX`).

use core::mem::MaybeUninit;

use heapless::{String, Vec};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::govern::jobserver::job_peaks::{self, JobPeaks};
use crate::govern::jobserver::lease::{LEASE_CAP, Lease, LeaseError};
use crate::govern::jobserver::peakfile::PeakIssue;
pub use crate::govern::jobserver::pool_open::{
    Access, LEASE_PREFIX, LOCK_NAME, OpenError, PARENT_DIR_MODE, POOL_DIR_MODE, create_pool_dir,
};
use crate::govern::jobserver::pool_open::{create_lease, open_dir, open_lock, take};
use crate::kernel::root::{ReadError, for_each_entry, read_fd};

/// Most other leases one look counts; more are reported as
/// [`Issue::TooMany`] (a pool of 32 builds on one host is far past useful).
pub const LEASES_CAP: usize = 32;

/// A file in DIR that a look did not count, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // no heap to box into: one at a time, on the stack
pub enum Issue {
    /// A symlink, a directory or a device with a lease's name: ignored,
    /// never followed.
    NotRegular,
    /// Owned by another user in a directory others may write.
    Untrusted {
        /// The file's owner.
        uid: u32,
    },
    /// Its bytes are not a lease.
    Unparsable(LeaseError),
    /// It claims more growth than the host has memory (MiB).
    Absurd {
        /// Its `growth_mb`.
        growth_mb: u64,
    },
    /// It could not be read.
    Unreadable(Errno),
    /// Its governor is gone: it was removed; its paused jobs are to be
    /// continued.
    Dead(Lease),
    /// More live leases than [`LEASES_CAP`]: not counted.
    TooMany,
}

/// A shared pool and this governor's lease in it.
pub struct PoolDir {
    dir: OwnedFd,
    lock: OwnedFd,
    lease: OwnedFd,
    name: String<64>,
    /// Others may write DIR (it is sticky): only leases of `uid` or root
    /// count.
    shared: bool,
    uid: u32,
}

/// The pool lock, held until dropped.
pub struct Locked<'p> {
    pool: &'p PoolDir,
}

impl PoolDir {
    /// Opens the pool DIR (created first when it does not exist:
    /// [`create_pool_dir`]), checks that it can be trusted, and creates
    /// this governor's lease in it (holding its lock from then on),
    /// written once from `first`.
    ///
    /// # Errors
    /// [`OpenError`]: DIR's creation, DIR, its trust, this user's access
    /// to it, the lock file, the lease.
    pub fn open(path: &str, pid: u32, uid: u32, first: &Lease) -> Result<PoolDir, OpenError> {
        create_pool_dir(path).map_err(OpenError::Create)?;
        let (dir, others_write) = open_dir(path, uid)?;
        let Some(lock) = open_lock(dir.as_fd(), uid, true)? else {
            return Err(OpenError::Lock(Errno::NOENT)); // made, then gone
        };
        take(&lock, FlockOperation::NonBlockingLockExclusive)?;
        let made = create_lease(dir.as_fd(), pid, uid);
        let _ = rustix::fs::flock(&lock, FlockOperation::Unlock);
        let (lease, name) = made?;
        let pool = PoolDir {
            dir,
            lock,
            lease,
            name,
            shared: others_write,
            uid,
        };
        // A failure from here on drops `pool`, which removes the lease.
        pool.lock_pool()?.write(first).map_err(OpenError::Lease)?;
        Ok(pool)
    }

    /// Takes the pool lock: `LOCK_EX | LOCK_NB`, tried a few times over
    /// about 20 ms, so a governor stopped while holding it (Ctrl-Z) delays
    /// the others' ticks instead of hanging them.
    ///
    /// # Errors
    /// [`OpenError::Busy`] when it stays taken; [`OpenError::Locking`] for
    /// any other flock(2) error.
    pub fn lock_pool(&self) -> Result<Locked<'_>, OpenError> {
        take(&self.lock, FlockOperation::NonBlockingLockExclusive)?;
        Ok(Locked { pool: self })
    }

    /// This governor's lease file name in DIR.
    pub fn lease_name(&self) -> &str {
        self.name.as_str()
    }

    /// Removes this governor's lease (under the pool lock when it can be
    /// had): called at the end; a lease left by a crash is removed by the
    /// next look of anyone.
    pub fn leave(&mut self) {
        if self.name.is_empty() {
            return;
        }
        let guard = self.lock_pool().ok();
        let _ = rustix::fs::unlinkat(&self.dir, self.name.as_str(), AtFlags::empty());
        drop(guard);
        self.name.clear();
    }
}

impl PoolDir {
    /// Writes `mb` as the peak per job the build of run id `run` measured
    /// (`jobserver::peakfile`), for the next run with that id.
    ///
    /// # Errors
    /// As [`crate::govern::jobserver::peakfile::write`].
    pub fn remember_peak(&self, run: &str, mb: u64) -> Result<(), Errno> {
        crate::govern::jobserver::peakfile::write(self.dir.as_fd(), run, mb)
    }

    /// The pool's budget now, MiB (`jobserver::budget_file`); `Ok(None)`
    /// when none is set. `buf`: at least `BUDGET_FILE_CAP` + 1 bytes.
    ///
    /// # Errors
    /// [`PeakIssue`]: a file is there but not used.
    pub fn budget(&self, buf: &mut [u8]) -> Result<Option<u64>, PeakIssue> {
        crate::govern::jobserver::budget_file::read(self.dir.as_fd(), self.shared, self.uid, buf)
    }

    /// Merges the peaks of the jobs the build of run id `run` measured
    /// into `DIR/jobs-RUN` (`jobserver::job_peaks`), for the next run with
    /// that id: under the pool lock, the file is read again (another build
    /// of the same run id may have written it since this one started),
    /// `measured` is merged into it (measured wins) and it is written
    /// whole (a temporary file renamed over it). A file that is not a
    /// table (or not a regular file) is replaced. `buf`: at least
    /// [`job_peaks::JOB_PEAKS_BUF`] bytes; about 56 KiB of stack hold the
    /// merge. It takes the pool lock itself: never call it holding a
    /// [`Locked`] (the lock is one, and would be dropped on return).
    ///
    /// # Errors
    /// `EINVAL` for a run id that cannot name a file; `EWOULDBLOCK` when
    /// the pool lock stays taken for about a second; `EPERM` for another
    /// user's file in a shared pool; `ENOBUFS` for a `buf` too short; the
    /// errno of reading the file, of flock(2), openat(2), write(2) or
    /// rename(2).
    pub fn remember_job_peaks(
        &self,
        run: &str,
        measured: &JobPeaks,
        buf: &mut [u8],
    ) -> Result<(), Errno> {
        let file = job_peaks::name(run).ok_or(Errno::INVAL)?;
        let tmp = crate::report::replace::tmp_name(file.as_str())?;
        let guard = self.lock_pool_patiently()?;
        let mut merged = JobPeaks::new();
        let dir = self.dir.as_fd();
        match job_peaks::read(dir, run, self.shared, self.uid, buf, &mut merged) {
            Ok(_) | Err(PeakIssue::Unparsable(_) | PeakIssue::NotRegular) => {}
            Err(PeakIssue::Untrusted { .. }) => return Err(Errno::PERM),
            Err(PeakIssue::Unreadable(e)) => return Err(e),
            Err(PeakIssue::BadName) => return Err(Errno::INVAL),
        }
        merged.merge(measured);
        let text = job_peaks::render(&merged, buf).map_err(|_| Errno::NOBUFS)?;
        let written = crate::report::replace::write(dir, file.as_str(), tmp.as_str(), text);
        drop(guard);
        written
    }

    /// [`PoolDir::lock_pool`], tried for about a second: for a write at
    /// the end of a run, which may wait for the others' looks.
    fn lock_pool_patiently(&self) -> Result<Locked<'_>, Errno> {
        for _ in 0..50 {
            match self.lock_pool() {
                Ok(g) => return Ok(g),
                Err(OpenError::Busy) => {}
                Err(OpenError::Locking(e)) => return Err(e),
                Err(_) => return Err(Errno::IO),
            }
        }
        Err(Errno::WOULDBLOCK)
    }
}

/// The peaks of the jobs the pool DIR remembers for run id `run`
/// (`jobserver::job_peaks`), into `into` (cleared first), read before this
/// governor joins it; `Ok(false)` when there is none, or when DIR cannot
/// be used as a pool (joining it says why). `buf`: at least
/// [`job_peaks::JOB_PEAKS_BUF`] bytes.
///
/// # Errors
/// [`PeakIssue`]: a file is there but not used.
pub fn remembered_job_peaks(
    path: &str,
    uid: u32,
    run: &str,
    buf: &mut [u8],
    into: &mut JobPeaks,
) -> Result<bool, PeakIssue> {
    into.clear();
    let Ok((dir, shared)) = open_dir(path, uid) else {
        return Ok(false);
    };
    job_peaks::read(dir.as_fd(), run, shared, uid, buf, into)
}

/// One per-job peak file as [`peek_job_peaks`] read it: its jobs, or why
/// it is not used.
pub type JobPeaksRead<'t> = Result<&'t JobPeaks, PeakIssue>;

/// Every per-job peak file in the pool DIR (`jobs-RUN`,
/// `jobserver::job_peaks`), for `headroom status`: each read into `table`
/// in turn and handed to `each` with its run id, or with why it is not
/// used (`BadName`: its name after `jobs-` is not a safe run id), in the
/// order the directory lists them. No lock: each file is replaced whole.
/// `dir_buf`: the getdents64(2) buffer; `file_buf`: at least
/// [`job_peaks::JOB_PEAKS_BUF`] bytes.
///
/// # Errors
/// [`OpenError`]: DIR or its trust; the errno of listing it
/// (`OpenError::Dir`).
pub fn peek_job_peaks(
    path: &str,
    uid: u32,
    dir_buf: &mut [MaybeUninit<u8>],
    file_buf: &mut [u8],
    table: &mut JobPeaks,
    each: &mut dyn FnMut(&[u8], JobPeaksRead<'_>),
) -> Result<(), OpenError> {
    let (dir, shared) = open_dir(path, uid)?;
    let listed = for_each_entry(dir.as_fd(), dir_buf, |name, _| {
        let Some(run) = name.strip_prefix(job_peaks::JOBS_PREFIX.as_bytes()) else {
            return true;
        };
        let run = core::str::from_utf8(run).unwrap_or("");
        match job_peaks::read(dir.as_fd(), run, shared, uid, file_buf, table) {
            Ok(true) => each(name, Ok(table)),
            Ok(false) => {} // gone meanwhile
            Err(i) => each(name, Err(i)),
        }
        true
    });
    listed.map_err(OpenError::Dir)
}

/// The peak per job the pool DIR remembers for run id `run`
/// (`jobserver::peakfile`), read before this governor joins it; `Ok(None)`
/// when there is none, or when DIR cannot be used as a pool (joining it
/// says why). `buf`: at least `peakfile::PEAK_FILE_CAP` + 1 bytes.
///
/// # Errors
/// [`crate::govern::jobserver::peakfile::PeakIssue`]: a file is there but not used.
pub fn remembered_peak(
    path: &str,
    uid: u32,
    run: &str,
    buf: &mut [u8],
) -> Result<Option<u64>, crate::govern::jobserver::peakfile::PeakIssue> {
    let Ok((dir, shared)) = open_dir(path, uid) else {
        return Ok(None);
    };
    crate::govern::jobserver::peakfile::read(dir.as_fd(), run, shared, uid, buf)
}

/// The budget the pool DIR `path` states (`jobserver::budget_file`),
/// read without joining it; `Ok(None)` when none is set or DIR cannot be
/// used as a pool (joining it says why). `buf`: at least
/// `budget_file::BUDGET_FILE_CAP` + 1 bytes.
///
/// # Errors
/// [`PeakIssue`]: the file is there but not used.
pub fn peek_budget(path: &str, uid: u32, buf: &mut [u8]) -> Result<Option<u64>, PeakIssue> {
    let Ok((dir, shared)) = open_dir(path, uid) else {
        return Ok(None);
    };
    crate::govern::jobserver::budget_file::read(dir.as_fd(), shared, uid, buf)
}

/// Sets (or with `None` removes) the budget of the pool DIR `path`
/// (`jobserver::budget_file`), DIR created first when it does not exist,
/// under the same trust rule as joining it.
///
/// # Errors
/// [`OpenError`] for DIR (`Create`, `Dir`, `Untrusted`); `Lease(errno)`
/// for the file's write or removal (`budget_file::set`'s errno).
pub fn set_budget(path: &str, mb: Option<u64>) -> Result<(), OpenError> {
    create_pool_dir(path).map_err(OpenError::Create)?;
    let (dir, _) = open_dir(path, rustix::process::geteuid().as_raw())?;
    crate::govern::jobserver::budget_file::set(dir.as_fd(), mb).map_err(OpenError::Lease)
}

impl Drop for PoolDir {
    fn drop(&mut self) {
        self.leave();
    }
}

impl Locked<'_> {
    /// Rewrites this governor's lease in place.
    ///
    /// # Errors
    /// The errno of pwrite(2) or ftruncate(2) (ENOSPC on a full disk: the
    /// lease keeps its previous figures).
    pub fn write(&self, lease: &Lease) -> Result<(), Errno> {
        let mut text: Vec<u8, LEASE_CAP> = Vec::new();
        lease.write(&mut text).map_err(|_| Errno::NOSPC)?;
        let fd = self.pool.lease.as_fd();
        let mut done = 0;
        while done < text.len() {
            match rustix::io::pwrite(fd, &text[done..], done as u64) {
                Ok(0) => return Err(Errno::NOSPC),
                Ok(n) => done += n,
                Err(Errno::INTR) => {}
                Err(e) => return Err(e),
            }
        }
        rustix::fs::ftruncate(fd, text.len() as u64)
    }

    /// Looks at every other lease in DIR: the live ones counted into
    /// `out` (cleared first), each other file told to `issue` (the dead
    /// removed first). `host_mb`: the host's memory, above which a claimed
    /// growth is absurd. `dir_buf`: the getdents64(2) buffer; `file_buf`
    /// holds one lease at a time (at least [`LEASE_CAP`] + 1 bytes).
    ///
    /// # Errors
    /// The errno of listing DIR.
    pub fn look(
        &self,
        host_mb: u64,
        dir_buf: &mut [MaybeUninit<u8>],
        file_buf: &mut [u8],
        out: &mut Vec<Lease, LEASES_CAP>,
        issue: &mut dyn FnMut(&[u8], Issue),
    ) -> Result<(), Errno> {
        let view = View {
            dir: self.pool.dir.as_fd(),
            own: self.pool.name.as_bytes(),
            shared: self.pool.shared,
            uid: self.pool.uid,
            remove_dead: true,
        };
        view.look(host_mb, dir_buf, file_buf, out, issue)
    }

    /// The PID (in its governor's namespace) of another live lease that
    /// a look would count (trusted, growth within `host_mb`) whose run id
    /// is `run` (as [`crate::govern::jobserver::lease::cut`] keeps it),
    /// the first found; `None` when there is none. Nothing is removed: a
    /// dead lease is left for the next look, which continues its jobs.
    /// `dir_buf`: the getdents64(2) buffer; `file_buf`: at least
    /// [`LEASE_CAP`] + 1 bytes.
    ///
    /// # Errors
    /// The errno of listing DIR.
    pub fn run_in_use(
        &self,
        run: &str,
        host_mb: u64,
        dir_buf: &mut [MaybeUninit<u8>],
        file_buf: &mut [u8],
    ) -> Result<Option<u32>, Errno> {
        let view = View {
            dir: self.pool.dir.as_fd(),
            own: self.pool.name.as_bytes(),
            shared: self.pool.shared,
            uid: self.pool.uid,
            remove_dead: false,
        };
        let mut found = None;
        for_each_entry(view.dir, dir_buf, |name, _| {
            if name.starts_with(LEASE_PREFIX.as_bytes())
                && name != view.own
                && let Ok(name) = core::str::from_utf8(name)
                && let Ok(l) = view.one(name, host_mb, file_buf)
                && l.run.as_str() == run
            {
                found = Some(l.pid);
                return false;
            }
            true
        })?;
        Ok(found)
    }
}

/// Looks at the pool DIR without taking part (`headroom status`): the
/// live leases into `out`, the other files to `issue`, the dead ones
/// reported but left for a governor to remove. Under the pool lock taken
/// shared, so no lease is read half rewritten. A DIR without a lock file
/// yet has no leases.
///
/// # Errors
/// [`OpenError`]: DIR, its trust, this user's access to it, its lock.
pub fn peek(
    path: &str,
    uid: u32,
    host_mb: u64,
    dir_buf: &mut [MaybeUninit<u8>],
    file_buf: &mut [u8],
    out: &mut Vec<Lease, LEASES_CAP>,
    issue: &mut dyn FnMut(&[u8], Issue),
) -> Result<(), OpenError> {
    out.clear();
    let (dir, shared) = open_dir(path, uid)?;
    let Some(lock) = open_lock(dir.as_fd(), uid, false)? else {
        return Ok(());
    };
    take(&lock, FlockOperation::NonBlockingLockShared)?;
    let view = View {
        dir: dir.as_fd(),
        own: b"",
        shared,
        uid,
        remove_dead: false,
    };
    let looked = view.look(host_mb, dir_buf, file_buf, out, issue);
    let _ = rustix::fs::flock(&lock, FlockOperation::Unlock);
    looked.map_err(OpenError::Dir)
}

/// What a look at DIR needs: the directory, whose lease is one's own,
/// whether only `uid`'s and root's leases count, and whether dead leases
/// are removed.
struct View<'a> {
    dir: BorrowedFd<'a>,
    own: &'a [u8],
    shared: bool,
    uid: u32,
    remove_dead: bool,
}

impl View<'_> {
    /// See [`Locked::look`].
    fn look(
        &self,
        host_mb: u64,
        dir_buf: &mut [MaybeUninit<u8>],
        file_buf: &mut [u8],
        out: &mut Vec<Lease, LEASES_CAP>,
        issue: &mut dyn FnMut(&[u8], Issue),
    ) -> Result<(), Errno> {
        out.clear();
        // Names first (a removal while listing would skip entries).
        let mut names: Vec<String<64>, { 2 * LEASES_CAP }> = Vec::new();
        for_each_entry(self.dir, dir_buf, |name, _| {
            if name.starts_with(LEASE_PREFIX.as_bytes()) && name != self.own {
                if let Ok(n) = core::str::from_utf8(name)
                    && let Ok(s) = String::try_from(n)
                    && names.push(s).is_ok()
                {
                    return true;
                }
                issue(name, Issue::TooMany);
            }
            true
        })?;
        for name in &names {
            match self.one(name.as_str(), host_mb, file_buf) {
                Ok(lease) => {
                    if out.push(lease).is_err() {
                        issue(name.as_bytes(), Issue::TooMany);
                    }
                }
                Err(Some(i)) => issue(name.as_bytes(), i),
                Err(None) => {} // gone meanwhile
            }
        }
        Ok(())
    }

    /// One other lease: live and trusted (`Ok`), not counted (`Err` with
    /// why), or gone since the listing (`Err(None)`).
    #[allow(clippy::result_large_err)] // as `Issue`: one at a time, on the stack
    fn one(&self, name: &str, host_mb: u64, buf: &mut [u8]) -> Result<Lease, Option<Issue>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(self.dir, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Err(None),
            Err(Errno::LOOP) => return Err(Some(Issue::NotRegular)),
            Err(e) => return Err(Some(Issue::Unreadable(e))),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| Some(Issue::Unreadable(e)))?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(Some(Issue::NotRegular));
        }
        if self.shared && st.st_uid != self.uid && st.st_uid != 0 {
            return Err(Some(Issue::Untrusted { uid: st.st_uid }));
        }
        let bytes = match read_fd(fd.as_fd(), buf) {
            Ok(b) => b,
            Err(ReadError::Read(e)) => return Err(Some(Issue::Unreadable(e))),
            Err(_) => return Err(Some(Issue::Unparsable(LeaseError::Truncated))),
        };
        let parsed = Lease::parse(bytes);
        // Its governor holds LOCK_EX for life: a shared lock we can take
        // means it is gone.
        if rustix::fs::flock(&fd, FlockOperation::NonBlockingLockShared).is_ok() {
            if self.remove_dead {
                let _ = rustix::fs::unlinkat(self.dir, name, AtFlags::empty());
            }
            return Err(Some(match parsed {
                Ok(l) => Issue::Dead(l),
                Err(e) => Issue::Unparsable(e),
            }));
        }
        let lease = parsed.map_err(|e| Some(Issue::Unparsable(e)))?;
        if lease.growth_mb > host_mb || lease.held_mb > host_mb {
            return Err(Some(Issue::Absurd {
                growth_mb: lease.growth_mb,
            }));
        }
        Ok(lease)
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(&self.pool.lock, FlockOperation::Unlock);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::string::ToString;

    use super::*;

    /// A fresh directory under the target dir, mode 0755.
    fn scratch(name: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(std::format!("headroom-pool-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        d
    }

    /// `path` opened and flock'ed `LOCK_EX`, as a live governor holds its
    /// lease.
    fn held_open(path: &std::path::Path) -> OwnedFd {
        let p = path.to_str().unwrap();
        let fd = rustix::fs::open(p, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).unwrap();
        rustix::fs::flock(&fd, FlockOperation::LockExclusive).unwrap();
        fd
    }

    fn lease(run: &str, growth_mb: u64) -> Lease {
        let mut l = Lease::empty();
        l.run = String::try_from(run).unwrap();
        l.cap = 4;
        l.running = 1;
        l.allowed = 1;
        l.peak_mb = 100;
        l.growth_mb = growth_mb;
        l
    }

    /// The live leases and the issues of one look.
    fn look(
        p: &PoolDir,
    ) -> (
        std::vec::Vec<Lease>,
        std::vec::Vec<(std::string::String, Issue)>,
    ) {
        let mut dir = [MaybeUninit::<u8>::uninit(); 4096];
        let mut file = [0u8; LEASE_CAP + 1];
        let mut out = Vec::new();
        let mut issues = std::vec::Vec::new();
        let g = p.lock_pool().unwrap();
        g.look(1 << 20, &mut dir, &mut file, &mut out, &mut |n, i| {
            issues.push((std::string::String::from_utf8_lossy(n).to_string(), i))
        })
        .unwrap();
        issues.sort_by(|a, b| a.0.cmp(&b.0));
        (out.iter().cloned().collect(), issues)
    }

    fn open(d: &std::path::Path, pid: u32, l: &Lease) -> PoolDir {
        PoolDir::open(d.to_str().unwrap(), pid, 0, l).unwrap()
    }

    #[test]
    fn governors_see_each_other_and_not_themselves() {
        let d = scratch("see");
        let a = open(&d, 10, &lease("a", 100));
        let b = open(&d, 10, &lease("b", 200));
        // The same PID (another namespace) gets another name.
        assert_ne!(a.lease_name(), b.lease_name());
        let (seen, issues) = look(&a);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(seen.len(), 1);
        assert_eq!((seen[0].run.as_str(), seen[0].growth_mb), ("b", 200));
        // A rewrite is seen at the next look, on the same inode.
        let ino = std::fs::metadata(d.join(b.lease_name())).unwrap().ino();
        b.lock_pool().unwrap().write(&lease("b", 40)).unwrap();
        assert_eq!(look(&a).0[0].growth_mb, 40);
        assert_eq!(
            std::fs::metadata(d.join(b.lease_name())).unwrap().ino(),
            ino
        );
        // One that leaves is gone from the directory at once.
        let name = b.lease_name().to_string();
        drop(b);
        assert!(!d.join(&name).exists());
        assert!(look(&a).0.is_empty());
    }

    /// This process's umask, from `/proc/self/status` (`Umask:`, since
    /// Linux 4.7): setting it to read it would race the other tests.
    fn umask() -> u32 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap();
        let v = s.lines().find_map(|l| l.strip_prefix("Umask:")).unwrap();
        u32::from_str_radix(v.trim(), 8).unwrap()
    }

    /// Issue 28: `--pool DIR` that does not exist is created with its
    /// parents, as a cache directory is, and is then a pool like any other.
    #[test]
    fn a_missing_pool_is_created_with_its_parents() {
        let d = scratch("create");
        let pool = d.join("cache/headroom/pool");
        let l = lease("a", 1);
        let p = PoolDir::open(pool.to_str().unwrap(), 1, 0, &l).unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
        assert_eq!(mode(&pool), POOL_DIR_MODE & !umask());
        assert_eq!(mode(&d.join("cache")), PARENT_DIR_MODE & !umask());
        assert!(pool.join(p.lease_name()).exists());
        drop(p);
        // There already (a trailing slash, a second governor): used as is.
        std::fs::set_permissions(&pool, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(
            create_pool_dir(&std::format!("{}/", pool.display())),
            Ok(())
        );
        assert_eq!(mode(&pool), 0o700);
        // Missing with its parent, named with a trailing `/` or `/.`: the
        // pool itself gets the pool's mode (sticky), not a parent's.
        for (i, tail) in ["/", "/.", "//"].iter().enumerate() {
            let pool = d.join(std::format!("slash{i}/pool"));
            create_pool_dir(&std::format!("{}{tail}", pool.display())).unwrap();
            assert_eq!(mode(&pool), POOL_DIR_MODE & !umask(), "{tail}");
        }
        // A parent that is a file: the mkdir's errno, said as such.
        std::fs::write(d.join("file"), b"").unwrap();
        let under_file = d.join("file/pool");
        assert_eq!(
            PoolDir::open(under_file.to_str().unwrap(), 1, 0, &l).err(),
            Some(OpenError::Create(Errno::NOTDIR))
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// The per-job peaks of `d`'s `jobs-RUN`, `None` when there is none.
    fn job_peaks_of(d: &std::path::Path, run: &str) -> Option<std::boxed::Box<JobPeaks>> {
        let mut buf = std::vec![0u8; job_peaks::JOB_PEAKS_BUF];
        let mut t = std::boxed::Box::new(JobPeaks::new());
        let found = remembered_job_peaks(d.to_str().unwrap(), 0, run, &mut buf, &mut t).unwrap();
        found.then_some(t)
    }

    #[test]
    fn job_peaks_are_merged_into_the_file_measured_wins() {
        let d = scratch("jobs");
        let a = open(&d, 1, &lease("a", 1));
        let mut buf = std::vec![0u8; job_peaks::JOB_PEAKS_BUF];
        let mut measured = std::boxed::Box::new(JobPeaks::new());
        assert!(job_peaks_of(&d, "b").is_none());
        measured.set(b"sqlite-1.o", 360);
        measured.set(b"light-07.o", 59);
        a.remember_job_peaks("b", &measured, &mut buf).unwrap();
        measured.clear();
        measured.set(b"sqlite-1.o", 300);
        measured.set(b"light-08.o", 61);
        a.remember_job_peaks("b", &measured, &mut buf).unwrap();
        let t = job_peaks_of(&d, "b").unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t.get(b"sqlite-1.o").map(|g| g.1), Some(300));
        assert_eq!(t.get(b"light-07.o").map(|g| g.1), Some(59));
        assert_eq!(
            std::fs::read_to_string(d.join("jobs-b")).unwrap(),
            "headroom-job-peaks 1\nothers_mb 0\n300 sqlite-1.o\n61 light-08.o\n59 light-07.o\n"
        );
        // Junk or a symlink under the name is replaced, never written through.
        std::fs::write(d.join("jobs-c"), b"junk").unwrap();
        a.remember_job_peaks("c", &measured, &mut buf).unwrap();
        assert_eq!(job_peaks_of(&d, "c").unwrap().len(), 2);
        std::fs::write(d.join("precious"), b"keep").unwrap();
        std::os::unix::fs::symlink(d.join("precious"), d.join("jobs-l")).unwrap();
        a.remember_job_peaks("l", &measured, &mut buf).unwrap();
        assert_eq!(std::fs::read(d.join("precious")).unwrap(), b"keep");
        assert_eq!(job_peaks_of(&d, "l").unwrap().len(), 2);
        assert_eq!(
            a.remember_job_peaks("../x", &measured, &mut buf),
            Err(Errno::INVAL)
        );
        assert_eq!(
            a.remember_job_peaks("b", &measured, &mut buf[..10]),
            Err(Errno::NOBUFS)
        );
        // No temporary file left.
        let mut left: std::vec::Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| !n.starts_with("lease-"))
            .collect();
        left.sort();
        assert_eq!(left, [LOCK_NAME, "jobs-b", "jobs-c", "jobs-l", "precious"]);
    }

    /// Two governors of the same run id end together, again and again:
    /// each merges under the pool lock, so no job of either is lost, and
    /// a reader beside them (no lock) always finds a whole file.
    #[test]
    fn two_writers_racing_lose_no_job_and_the_file_always_parses() {
        const ROUNDS: u32 = 40;
        let d = scratch("jobs-race");
        // Joined before the race (joining waits only ~20 ms for the lock).
        let pools = [open(&d, 100, &lease("x", 1)), open(&d, 101, &lease("y", 1))];
        std::thread::scope(|s| {
            let writers: std::vec::Vec<_> = pools
                .iter()
                .zip(["x", "y"])
                .map(|(pool, tag)| {
                    s.spawn(move || {
                        let mut buf = std::vec![0u8; job_peaks::JOB_PEAKS_BUF];
                        let mut measured = std::boxed::Box::new(JobPeaks::new());
                        for n in 0..ROUNDS {
                            let k = std::format!("{tag}-{n}.o");
                            measured.set(k.as_bytes(), 10 + u64::from(n));
                            pool.remember_job_peaks("race", &measured, &mut buf)
                                .unwrap();
                        }
                    })
                })
                .collect();
            // Read beside them, without the lock, until both are done.
            while !writers.iter().all(|w| w.is_finished()) {
                if let Some(t) = job_peaks_of(&d, "race") {
                    assert_eq!(t.skipped(), 0);
                }
            }
            for w in writers {
                w.join().unwrap();
            }
        });
        let t = job_peaks_of(&d, "race").unwrap();
        assert_eq!(t.len(), 2 * ROUNDS as usize);
        for tag in ["x", "y"] {
            for n in 0..ROUNDS {
                let k = std::format!("{tag}-{n}.o");
                assert_eq!(
                    t.get(k.as_bytes()).map(|g| g.1),
                    Some(10 + u64::from(n)),
                    "{k}"
                );
            }
        }
    }

    #[test]
    fn a_peek_lists_every_job_peak_file_and_names_the_bad() {
        let d = scratch("jobs-peek");
        std::fs::write(
            d.join("jobs-good"),
            b"headroom-job-peaks 1\nothers_mb 0\n360 s.o\n",
        )
        .unwrap();
        std::fs::write(d.join("jobs-junk"), b"junk\n").unwrap();
        std::fs::write(d.join("jobs-a b"), b"headroom-job-peaks 1\n").unwrap();
        std::fs::write(d.join("peak-good"), b"headroom-peak 1\npeak_mb 3\n").unwrap();
        let mut dir_buf = [MaybeUninit::<u8>::uninit(); 4096];
        let mut buf = std::vec![0u8; job_peaks::JOB_PEAKS_BUF];
        let mut table = std::boxed::Box::new(JobPeaks::new());
        let mut seen = std::vec::Vec::new();
        peek_job_peaks(
            d.to_str().unwrap(),
            0,
            &mut dir_buf,
            &mut buf,
            &mut table,
            &mut |name, r| {
                let name = std::string::String::from_utf8_lossy(name).to_string();
                seen.push((name, r.map(|t| (t.len(), t.get(b"s.o")))));
            },
        )
        .unwrap();
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            seen,
            [
                ("jobs-a b".to_string(), Err(PeakIssue::BadName)),
                ("jobs-good".to_string(), Ok((1, Some((0, 360))))),
                (
                    "jobs-junk".to_string(),
                    Err(PeakIssue::Unparsable(
                        crate::govern::jobserver::peakfile::PeakError::Magic
                    ))
                ),
            ]
        );
    }

    /// Issue 42: a live lease of another governor with the same run id
    /// is found, with its PID; one's own, a dead one (left in place for
    /// the next look) and one of another run id are not.
    #[test]
    fn a_live_lease_of_the_same_run_id_is_found_and_nothing_removed() {
        let d = scratch("same-run");
        let mut first = lease("amd64", 1);
        first.pid = 10;
        let a = open(&d, 10, &first);
        let in_use = |p: &PoolDir, run: &str| {
            let mut dir = [MaybeUninit::<u8>::uninit(); 4096];
            let mut file = [0u8; LEASE_CAP + 1];
            let g = p.lock_pool().unwrap();
            g.run_in_use(run, 1 << 20, &mut dir, &mut file).unwrap()
        };
        assert_eq!(in_use(&a, "amd64"), None);
        let mut dead = lease("amd64", 1);
        dead.pid = 99;
        let mut text = Vec::<u8, LEASE_CAP>::new();
        dead.write(&mut text).unwrap();
        std::fs::write(d.join("lease-99-0"), &text).unwrap();
        let mut other = lease("arm64", 1);
        other.pid = 11;
        let _b = open(&d, 11, &other);
        assert_eq!(in_use(&a, "amd64"), None);
        assert!(d.join("lease-99-0").exists());
        let mut same = lease("amd64", 1);
        same.pid = 12;
        let c = open(&d, 12, &same);
        assert_eq!(in_use(&a, "amd64"), Some(12));
        assert_eq!(in_use(&c, "amd64"), Some(10));
        assert_eq!(in_use(&c, "arm64"), Some(11));
    }

    #[test]
    fn the_pool_lock_admits_one_governor_at_a_time() {
        let d = scratch("lock");
        let a = open(&d, 1, &lease("a", 1));
        let b = open(&d, 2, &lease("b", 1));
        let held = a.lock_pool().unwrap();
        assert_eq!(b.lock_pool().err(), Some(OpenError::Busy));
        drop(held);
        assert!(b.lock_pool().is_ok());
    }

    #[test]
    fn a_lease_nobody_holds_is_a_dead_governors_and_is_removed() {
        let d = scratch("dead");
        let a = open(&d, 1, &lease("a", 1));
        // Written as a killed governor leaves it: whole, but unlocked.
        let mut dead = lease("killed", 500);
        dead.paused
            .push(crate::govern::jobserver::lease::Paused {
                pid: 77,
                start_ticks: 5,
            })
            .unwrap();
        let mut text = Vec::<u8, LEASE_CAP>::new();
        dead.write(&mut text).unwrap();
        std::fs::write(d.join("lease-99-0"), &text).unwrap();
        let (seen, issues) = look(&a);
        assert!(seen.is_empty());
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0], ("lease-99-0".into(), Issue::Dead(dead)));
        assert!(!d.join("lease-99-0").exists());
        // Junk nobody holds goes too, said as such.
        std::fs::write(d.join("lease-98-0"), b"junk").unwrap();
        let (_, issues) = look(&a);
        assert_eq!(
            issues,
            [("lease-98-0".into(), Issue::Unparsable(LeaseError::Magic))]
        );
        assert!(!d.join("lease-98-0").exists());
    }

    #[test]
    fn a_peek_sees_every_lease_and_removes_none() {
        let d = scratch("peek");
        let (mut dir, mut file) = ([MaybeUninit::<u8>::uninit(); 4096], [0u8; LEASE_CAP + 1]);
        let mut out = Vec::new();
        let peek =
            |out: &mut Vec<Lease, LEASES_CAP>, dir: &mut [MaybeUninit<u8>], file: &mut [u8]| {
                let mut dead = 0;
                super::peek(
                    d.to_str().unwrap(),
                    0,
                    1 << 20,
                    dir,
                    file,
                    out,
                    &mut |_, i| dead += usize::from(matches!(i, Issue::Dead(_))),
                )
                .unwrap();
                dead
            };
        // No lock file yet: an empty pool.
        assert_eq!(peek(&mut out, &mut dir, &mut file), 0);
        assert!(out.is_empty());
        let _a = open(&d, 1, &lease("a", 10));
        let _b = open(&d, 2, &lease("b", 20));
        let mut text = Vec::<u8, LEASE_CAP>::new();
        lease("gone", 5).write(&mut text).unwrap();
        std::fs::write(d.join("lease-9-0"), &text).unwrap();
        assert_eq!(peek(&mut out, &mut dir, &mut file), 1);
        let mut runs: std::vec::Vec<&str> = out.iter().map(|l| l.run.as_str()).collect();
        runs.sort();
        assert_eq!(runs, ["a", "b"]);
        // The dead one is left for a governor to remove.
        assert!(d.join("lease-9-0").exists());
    }

    #[test]
    fn hostile_files_are_ignored_and_never_followed() {
        let d = scratch("hostile");
        let a = open(&d, 1, &lease("a", 1));
        // Each is held locked (as a live governor's) by an open descriptor.
        let mut held = std::vec::Vec::new();
        let mut plant = |name: &str, bytes: &[u8]| {
            std::fs::write(d.join(name), bytes).unwrap();
            let f = held_open(&d.join(name));
            held.push(f);
        };
        plant("lease-1-garbage", b"\x00\xffnot a lease");
        let mut text = Vec::<u8, LEASE_CAP>::new();
        lease("greedy", 1 << 40).write(&mut text).unwrap();
        plant("lease-2-greedy", &text);
        let target = d.join("precious");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, d.join("lease-3-link")).unwrap();
        std::fs::create_dir(d.join("lease-4-dir")).unwrap();
        let (seen, issues) = look(&a);
        assert!(seen.is_empty());
        let kinds: std::vec::Vec<&Issue> = issues.iter().map(|(_, i)| i).collect();
        assert_eq!(
            kinds,
            [
                &Issue::Unparsable(LeaseError::Magic),
                &Issue::Absurd { growth_mb: 1 << 40 },
                &Issue::NotRegular,
                &Issue::NotRegular,
            ]
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert!(d.join("lease-3-link").symlink_metadata().is_ok());
    }

    #[test]
    fn a_directory_others_may_write_is_refused_unless_sticky() {
        let d = scratch("trust");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        let r = PoolDir::open(d.to_str().unwrap(), 1, 0, &lease("a", 1));
        assert_eq!(r.err(), Some(OpenError::Untrusted { mode: 0o777 }));
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let a = PoolDir::open(d.to_str().unwrap(), 1, 1000, &lease("a", 1)).unwrap();
        // In a sticky pool only the same user's (or root's) leases count.
        let mut text = Vec::<u8, LEASE_CAP>::new();
        lease("other-user", 10).write(&mut text).unwrap();
        std::fs::write(d.join("lease-5-0"), &text).unwrap();
        let _f = held_open(&d.join("lease-5-0"));
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(d.join("lease-5-0"), Some(4321), None).unwrap();
            let (seen, issues) = look(&a);
            assert!(seen.is_empty());
            assert_eq!(
                issues,
                [("lease-5-0".into(), Issue::Untrusted { uid: 4321 })]
            );
        }
        // A symlink to a pool is refused, never followed (a missing DIR is
        // created: a_missing_pool_is_created_with_its_parents).
        let link = d.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&d, &link).unwrap();
        let r = PoolDir::open(link.to_str().unwrap(), 1, 0, &lease("a", 1));
        // (O_DIRECTORY | O_NOFOLLOW on a symlink gives ENOTDIR: said as
        // a symlink, not as "Not a directory").
        assert_eq!(r.err(), Some(OpenError::Symlink));
        std::fs::remove_file(&link).unwrap();
    }
}
