//! headroom's own memory: every page a tick can touch is made resident
//! before the first tick, then locked in RAM when permitted.
//!
//! A recorder whose resident size grows the first time a rare path runs (a
//! warning, an OOM row in the summary, a deeper stack under a 64 KiB log
//! line) does not have a fixed footprint; one whose pages can be reclaimed
//! stalls on page-ins exactly when the host is short of memory, the moment
//! it is there to witness. So, before the first tick:
//!
//! 1. [`commit_stack`] writes a [`STACK_COMMIT`]-byte array below the
//!    recording's frame: the stack a tick uses is mapped and resident (and
//!    painted with [`PAINT`], so the depth ticks reach can be read back:
//!    `ci/soak` does).
//! 2. [`commit_mappings`] faults in every page of every private mapping
//!    headroom has (the executable's text and data, `.bss`, the
//!    allocator's arenas, the stack from the committed region up),
//!    writable ones as a write would, so copy-on-write pages of `.data`
//!    become headroom's own: from then on nothing a tick touches is
//!    missing. The stack below the committed region, which only start-up
//!    reached, is given back first. Left out: the release binaries' range
//!    of code no recording runs ([`cold_range`]: std's backtrace printer,
//!    the commands that read files or print the host once).
//! 3. [`lock`] calls mlockall(2) with `MCL_CURRENT | MCL_ONFAULT`: the
//!    resident pages stay in RAM, pages of those mappings faulted later are
//!    locked as they come, and later mappings (the summary's allocations
//!    after the loop) are not locked, so none of them can fail for want of
//!    RLIMIT_MEMLOCK (`MCL_FUTURE` would make an allocation past it fail).
//!    Skipped when RLIMIT_MEMLOCK is below what headroom maps and it has no
//!    CAP_IPC_LOCK, or when `HEADROOM_NO_MLOCK` is set.
//!
//! # References
//! mlockall(2), madvise(2) (`MADV_POPULATE_READ`/`_WRITE`, Linux 5.14),
//! mlock(2), getrlimit(2) (`RLIMIT_MEMLOCK`), capabilities(7)
//! (`CAP_IPC_LOCK`); `mm/mlock.c` (`mlockall` compares `total_vm` with the
//! limit), `mm/gup.c` (`populate_vma_page_range`), earlyoom's `main.c`
//! (`mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)`, of which headroom
//! keeps all but `MCL_FUTURE`).

use core::ffi::c_void;

use rustix::fd::AsFd;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use rustix::mm::{Advice, MlockAllFlags};
use ufmt::{uWrite, uwrite};

use crate::kernel::maps::{self, Kind, Mapping};
use crate::kernel::parse::ParseError;
use crate::kernel::root::{ReadError, read_fd};

/// Bytes of stack [`commit_stack`] commits below its caller's frame.
///
/// Measured by painting 256 KiB and reading the paint back from
/// /proc/PID/mem (as `ci/soak` does) on x86_64, release build: the deepest
/// tick of `record` — compilers of every kind, PIDs gone mid-scan, a
/// 70 KiB log line, an unreadable log and the first warning on stderr —
/// reached 5 KiB below the recording's frame; a `run --jobserver` tick
/// 19 KiB; the summary and advice written after the loop 19 KiB. 64 KiB
/// holds the deepest three times over, for larger frames on another
/// architecture or compiler version.
pub const STACK_COMMIT: usize = 64 * 1024;

/// The byte [`commit_stack`] fills its region with: what is still this
/// value after a run was never reached by a tick.
pub const PAINT: u8 = 0xA5;

/// Room the locked mappings may still need to grow by after the lock, in
/// bytes: the kernel counts a locked stack's growth and an mremap(2) of a
/// locked allocation against RLIMIT_MEMLOCK too, so locking is only tried
/// when the limit holds what is mapped plus this.
pub const LOCK_SLACK: u64 = 256 * 1024;

/// Writes [`STACK_COMMIT`] bytes of [`PAINT`] in a frame of its own, below
/// the caller's: the stack pages a tick called from the same frame will
/// use are mapped and resident from now on. Call it from the function
/// that runs the loop, just before the loop.
///
/// Never inlined: its frame must lie below the caller's, not inside it.
#[inline(never)]
pub fn commit_stack() {
    let mut region = [PAINT; STACK_COMMIT];
    // The array escapes: every byte of it is written.
    core::hint::black_box(&mut region);
}

/// What [`commit_mappings`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Commit {
    /// The kernel's `total_vm` (`VmSize`) by /proc/self/maps, in bytes:
    /// what mlockall(2) compares with RLIMIT_MEMLOCK.
    pub vm_size: u64,
    /// Bytes of mappings faulted in.
    pub populated: u64,
    /// True when the kernel has no `MADV_POPULATE_*` (before 5.14) and
    /// mlock(2) + munlock(2) faulted the pages in instead.
    pub by_mlock: bool,
}

/// Why [`commit_mappings`] could not commit every page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitError {
    /// /proc/self/maps could not be read (no /proc in a chroot, …).
    Maps(ReadError),
    /// A line of it did not parse.
    Parse(ParseError),
    /// madvise(2) failed, or on a kernel before 5.14 mlock(2) (EPERM or
    /// ENOMEM: RLIMIT_MEMLOCK 0, or less than one page).
    Populate(Errno),
}

impl CommitError {
    /// One line for a warning: what failed, with the errno.
    pub fn write<W: uWrite>(self, w: &mut W) -> Result<(), W::Error> {
        match self {
            CommitError::Maps(e) => uwrite!(w, "{}: {}", maps::PATH, e.describe()),
            CommitError::Parse(e) => uwrite!(w, "{}: line {} does not parse", maps::PATH, e.line),
            CommitError::Populate(e) => {
                uwrite!(w, "faulting its pages in failed: ")?;
                errno(w, e)
            }
        }
    }
}

/// Faults in every page of every private mapping of this process that
/// holds pages of its own: writable ones (`.data`, `.bss`, the heap, the
/// stack from [`STACK_COMMIT`] below the caller's frame up: the part below
/// is given back, see `release_below_commit`) as a write would (breaking
/// copy-on-write), read-only file ones
/// (the text) as a read. Kernel mappings (`[vdso]`, `[vvar]`,
/// `[vsyscall]`), shared and inaccessible (guard) mappings are left alone.
/// No byte of memory changes.
///
/// `buf` receives /proc/self/maps ([`maps::BUF_LEN`] bytes). Uses
/// madvise(2) `MADV_POPULATE_WRITE`/`_READ` (Linux 5.14); on an older
/// kernel (EINVAL), mlock(2) then munlock(2) of pieces no larger than
/// RLIMIT_MEMLOCK, which fault the pages in the same way.
///
/// # Errors
/// [`CommitError`]: the file could not be read or parsed, or faulting in
/// failed (the mappings before the failing one are committed).
pub fn commit_mappings(buf: &mut [u8]) -> Result<Commit, CommitError> {
    let fd = rustix::fs::open(maps::PATH, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| CommitError::Maps(ReadError::Open(e)))?;
    let text = read_fd(fd.as_fd(), buf).map_err(CommitError::Maps)?;
    let vm_size = maps::vm_size(text).map_err(CommitError::Parse)?;
    let mut done = Commit {
        vm_size,
        populated: 0,
        by_mlock: false,
    };
    // An address in this frame: just below the recording's (the caller's
    // caller's), where the committed stack region begins.
    let here = 0u8;
    let sp = u64::try_from(core::hint::black_box(&raw const here).addr()).unwrap_or(u64::MAX);
    // The stack's start-up pages first: the peak RSS is reached when the
    // rest is faulted in, and they are no longer part of it.
    for m in maps::parse(text) {
        let (m, _) = m.map_err(CommitError::Parse)?;
        if m.kind == Kind::Stack && holds_own_pages(&m) {
            release_below_commit(m, sp).map_err(CommitError::Populate)?;
        }
    }
    let cold = cold_range();
    for m in maps::parse(text) {
        let (mut m, _) = m.map_err(CommitError::Parse)?;
        if !holds_own_pages(&m) {
            continue;
        }
        if m.kind == Kind::Stack {
            m = Mapping {
                start: commit_low(&m, sp),
                ..m
            };
        }
        for part in outside(m, cold) {
            commit_one(&part, &mut done)?;
        }
    }
    release_cold(cold).map_err(CommitError::Populate)?;
    Ok(done)
}

/// Gives back the pages of `cold` ([`cold_range`]) that faulting in its
/// neighbours mapped anyway (a read fault maps the page cache's pages
/// around it too: `fault_around_bytes`, 64 KiB, in `mm/memory.c`):
/// madvise(2) `MADV_DONTNEED`, before anything is locked.
fn release_cold((lo, hi): (u64, u64)) -> Result<(), Errno> {
    if lo >= hi {
        return Ok(());
    }
    let len = usize::try_from(hi - lo).unwrap_or(0);
    // SAFETY: the range is read-only code of the executable's private file
    // mapping, never written: dropping its page table entries loses
    // nothing (a later access reads the page from the file again), and no
    // recording runs that code (ci/release.ld gathers it).
    unsafe {
        rustix::mm::madvise(
            core::ptr::without_provenance_mut(usize::try_from(lo).unwrap_or(usize::MAX)),
            len,
            Advice::LinuxDontNeed,
        )
    }
}

/// Faults in the pages of `m` (nothing when it is empty), by madvise(2)
/// or, once that was found missing, by mlock(2); counts them in `done`.
fn commit_one(m: &Mapping, done: &mut Commit) -> Result<(), CommitError> {
    if m.is_empty() {
        return Ok(());
    }
    if !done.by_mlock {
        match populate(m) {
            Ok(()) => {
                done.populated = done.populated.saturating_add(m.len());
                return Ok(());
            }
            // No MADV_POPULATE_* before 5.14.
            Err(Errno::INVAL) => done.by_mlock = true,
            Err(e) => return Err(CommitError::Populate(e)),
        }
    }
    populate_by_mlock(m).map_err(CommitError::Populate)?;
    done.populated = done.populated.saturating_add(m.len());
    Ok(())
}

/// The parts of `m` below and above `cold` (`start..end`, bytes; empty
/// when `start >= end`): `m` and an empty mapping when they do not meet.
/// Either part may be empty.
pub fn outside(m: Mapping, cold: (u64, u64)) -> [Mapping; 2] {
    let (lo, hi) = cold;
    if lo >= hi || hi <= m.start || lo >= m.end {
        return [m, Mapping { end: m.start, ..m }];
    }
    [
        Mapping {
            end: lo.max(m.start),
            ..m
        },
        Mapping {
            start: hi.min(m.end),
            ..m
        },
    ]
}

/// The release binaries' range of code no recording runs, `(start, end)`
/// in bytes: the whole pages between `__headroom_cold_start` and
/// `__headroom_cold_end`, where ci/release.ld gathers std's backtrace
/// printer (which only a panic under RUST_BACKTRACE runs) and the commands
/// that never run beside a recording (about 240 KiB of x86_64 text that a
/// recording need not hold). `(0, 0)` in builds without that script (cfg
/// `headroom_cold` unset by ci/build.rs): nothing left out.
pub fn cold_range() -> (u64, u64) {
    #[cfg(headroom_cold)]
    {
        unsafe extern "C" {
            static __headroom_cold_start: u8;
            static __headroom_cold_end: u8;
        }
        // Only the addresses are taken (no read): safe for an extern static.
        let at = |p: *const u8| u64::try_from(p.addr()).unwrap_or(0);
        let page = u64::try_from(rustix::param::page_size()).unwrap_or(4096);
        whole_pages(
            at(&raw const __headroom_cold_start),
            at(&raw const __headroom_cold_end),
            page,
        )
    }
    #[cfg(not(headroom_cold))]
    {
        (0, 0)
    }
}

/// The whole `page`-byte pages within `start..end`: `start` rounded up,
/// `end` down; `(0, 0)` when no whole page is left (or `page` is 0).
pub fn whole_pages(start: u64, end: u64, page: u64) -> (u64, u64) {
    if page == 0 {
        return (0, 0);
    }
    let lo = start.div_ceil(page).saturating_mul(page);
    let hi = end - end % page;
    if lo < hi { (lo, hi) } else { (0, 0) }
}

/// Gives back the stack mapping `m`'s pages below the part a tick can
/// touch ([`commit_low`] of `sp`, an address in the frame of
/// [`commit_mappings`], below the recording's, to its top). Those pages
/// held only the frames of start-up (option checking, the pool joined,
/// the build followed), deeper than any tick goes: madvise(2)
/// `MADV_DONTNEED` gives them back (a later touch maps a zero page, as a
/// new stack page would be), and they are not faulted in again. Without
/// this the stack's resident size is the deepest start-up frame's, or the
/// 128 KiB the kernel maps for a new stack (`setup_arg_pages`), whichever
/// is more.
fn release_below_commit(m: Mapping, sp: u64) -> Result<(), Errno> {
    let below = Mapping {
        end: commit_low(&m, sp),
        ..m
    };
    if !below.is_empty() {
        // SAFETY: the range is the stack below the committed region, more
        // than STACK_COMMIT below this frame: no live frame lies there
        // (the stack grows down from the caller's frames, all above `sp`),
        // and its pages read as zeros when touched again.
        unsafe {
            rustix::mm::madvise(start_ptr(&below), len_usize(&below), Advice::LinuxDontNeed)?;
        }
    }
    Ok(())
}

/// The lowest address of the stack mapping `m` a tick can touch: the page
/// [`STACK_COMMIT`] and one more page below `sp`, within `m`.
fn commit_low(m: &Mapping, sp: u64) -> u64 {
    let page = u64::try_from(rustix::param::page_size())
        .unwrap_or(4096)
        .max(1);
    let low = sp.saturating_sub(STACK_COMMIT as u64 + page);
    (low - low % page).clamp(m.start, m.end)
}

/// True for a mapping whose pages are this process's to fault in: private,
/// accessible, not provided by the kernel.
fn holds_own_pages(m: &Mapping) -> bool {
    !m.shared && (m.read || m.write) && m.kind != Kind::Special && !m.is_empty()
}

/// The mapping's first address as a pointer for a syscall (never read or
/// written through).
fn start_ptr(m: &Mapping) -> *mut c_void {
    core::ptr::without_provenance_mut(usize::try_from(m.start).unwrap_or(usize::MAX))
}

/// Its length as a `usize`.
fn len_usize(m: &Mapping) -> usize {
    usize::try_from(m.len()).unwrap_or(0)
}

/// madvise(2) `MADV_POPULATE_WRITE` (writable) or `_READ` over `m`.
fn populate(m: &Mapping) -> Result<(), Errno> {
    let advice = if m.write {
        Advice::LinuxPopulateWrite
    } else {
        Advice::LinuxPopulateRead
    };
    // SAFETY: MADV_POPULATE_READ/WRITE only fault the range's pages in, as
    // a read or a write access would, and change no byte of memory,
    // whatever is mapped there (the range is a mapping /proc/self/maps
    // listed just now; were it unmapped since, the call fails with ENOMEM).
    unsafe { rustix::mm::madvise(start_ptr(m), len_usize(m), advice) }
}

/// mlock(2) then munlock(2) over `m`, in pieces no larger than the
/// RLIMIT_MEMLOCK soft limit (one page at least): mlock faults every page
/// in, writable private ones with a write fault (`populate_vma_page_range`).
fn populate_by_mlock(m: &Mapping) -> Result<(), Errno> {
    let page = u64::try_from(rustix::param::page_size())
        .unwrap_or(4096)
        .max(1);
    let limit = rustix::process::getrlimit(rustix::process::Resource::Memlock)
        .current
        .unwrap_or(u64::MAX);
    let piece = (limit / page).max(1).saturating_mul(page);
    let mut at = m.start;
    while at < m.end {
        let n = piece.min(m.end - at);
        let ptr = core::ptr::without_provenance_mut::<c_void>(usize::try_from(at).unwrap_or(0));
        let len = usize::try_from(n).unwrap_or(0);
        // SAFETY: mlock(2) makes the pages of the range resident and
        // munlock(2) only clears the lock again; neither changes a byte of
        // memory, whatever is mapped there (see `populate`). headroom locks
        // nothing of its own before `lock`, so the munlock undoes no lock.
        unsafe {
            rustix::mm::mlock(ptr, len)?;
            rustix::mm::munlock(ptr, len)?;
        }
        at = at.saturating_add(n);
    }
    Ok(())
}

/// Whether headroom's memory is locked in RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lock {
    /// mlockall(2) succeeded.
    Locked,
    /// Not locked, and why.
    NotLocked(NotLocked),
}

/// Why [`lock`] did not lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotLocked {
    /// `HEADROOM_NO_MLOCK` is set (for measuring what the lock is worth).
    Disabled,
    /// The RLIMIT_MEMLOCK soft limit is below what locking needs and the
    /// process has no CAP_IPC_LOCK: mlockall(2) would fail with ENOMEM.
    Limit {
        /// The soft limit, in KiB.
        limit_kib: u64,
        /// What headroom maps plus [`LOCK_SLACK`], in KiB.
        need_kib: u64,
    },
    /// mlockall(2) failed with this errno.
    Failed(Errno),
}

/// The facts the lock decision rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permit {
    /// RLIMIT_MEMLOCK's soft limit in bytes; `None` for unlimited.
    pub limit: Option<u64>,
    /// CAP_IPC_LOCK is in the effective set (the limit does not apply).
    pub cap_ipc_lock: bool,
}

impl Permit {
    /// This process's: getrlimit(2) and capget(2) (a capget failure counts
    /// as no capability).
    pub fn of_self() -> Permit {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Memlock).current;
        let cap_ipc_lock = rustix::thread::capabilities(None)
            .map(|c| {
                c.effective
                    .contains(rustix::thread::CapabilitySet::IPC_LOCK)
            })
            .unwrap_or(false);
        Permit {
            limit,
            cap_ipc_lock,
        }
    }

    /// Whether locking `vm_size` bytes of mappings is permitted: with
    /// CAP_IPC_LOCK or no limit always; otherwise when the limit holds
    /// `vm_size` plus [`LOCK_SLACK`]. `None` (size unknown) leaves the
    /// decision to the kernel.
    ///
    /// # Errors
    /// [`NotLocked::Limit`] when it is not.
    pub fn allows(self, vm_size: Option<u64>) -> Result<(), NotLocked> {
        let (Some(limit), false, Some(size)) = (self.limit, self.cap_ipc_lock, vm_size) else {
            return Ok(());
        };
        let need = size.saturating_add(LOCK_SLACK);
        if need <= limit {
            Ok(())
        } else {
            Err(NotLocked::Limit {
                limit_kib: limit / 1024,
                need_kib: need.div_ceil(1024),
            })
        }
    }
}

/// Locks headroom's memory in RAM when permitted: mlockall(2) with
/// `MCL_CURRENT | MCL_ONFAULT` (kernels before 4.4 have no `MCL_ONFAULT`
/// and refuse it with EINVAL: then `MCL_CURRENT` alone, which faults every
/// current mapping in first). Never `MCL_FUTURE`.
///
/// `vm_size` is what [`commit_mappings`] found mapped (`None` when it could
/// not tell); `disabled` is `HEADROOM_NO_MLOCK`. Call it after
/// [`commit_mappings`], so that the pages locked are all a tick needs.
pub fn lock(vm_size: Option<u64>, disabled: bool, permit: Permit) -> Lock {
    if disabled {
        return Lock::NotLocked(NotLocked::Disabled);
    }
    if let Err(e) = permit.allows(vm_size) {
        return Lock::NotLocked(e);
    }
    let r = match rustix::mm::mlockall(MlockAllFlags::CURRENT | MlockAllFlags::ONFAULT) {
        Err(Errno::INVAL) => rustix::mm::mlockall(MlockAllFlags::CURRENT),
        other => other,
    };
    match r {
        Ok(()) => Lock::Locked,
        Err(e) => Lock::NotLocked(NotLocked::Failed(e)),
    }
}

impl Lock {
    /// The summary's words after "headroom's memory: ": `locked in RAM
    /// (mlockall)` or `not locked: <why>`.
    pub fn write<W: uWrite>(self, w: &mut W) -> Result<(), W::Error> {
        match self {
            Lock::Locked => uwrite!(w, "locked in RAM (mlockall)"),
            Lock::NotLocked(n) => {
                uwrite!(w, "not locked: ")?;
                n.write(w)
            }
        }
    }
}

impl NotLocked {
    /// Why, in a few words.
    pub fn write<W: uWrite>(self, w: &mut W) -> Result<(), W::Error> {
        match self {
            NotLocked::Disabled => uwrite!(w, "HEADROOM_NO_MLOCK is set"),
            NotLocked::Limit {
                limit_kib,
                need_kib,
            } => uwrite!(
                w,
                "RLIMIT_MEMLOCK is {} KiB, locking needs {} KiB (ulimit -l, or CAP_IPC_LOCK)",
                limit_kib,
                need_kib
            ),
            NotLocked::Failed(e) => {
                uwrite!(w, "mlockall(2) failed: ")?;
                errno(w, e)
            }
        }
    }
}

/// What a recording maps beyond what `status` maps, in bytes (VmSize,
/// x86_64, measured with `ulimit -l 64`): `record` and `run` 136 KiB more
/// in a release build, 344 KiB in a debug one (`cargo test`'s) — the
/// sampler's buffers (88 KiB), the summary and the committed stack
/// ([`STACK_COMMIT`]). The rest is room for other architectures' pages.
pub const RECORD_EXTRA: u64 = per_build(384, 512) * 1024;

/// What `run --jobserver --prom` maps beyond what `status` maps, in bytes,
/// measured as [`RECORD_EXTRA`]: 556 KiB more in a release build, 1,180
/// KiB in a debug one — the governor's pausing state and per-job peaks,
/// the pool, the `--prom` file's buffer.
pub const JOBSERVER_EXTRA: u64 = per_build(768, 1408) * 1024;

/// `release` KiB in a release build, `debug` KiB in a debug one.
const fn per_build(release: u64, debug: u64) -> u64 {
    if cfg!(debug_assertions) {
        debug
    } else {
        release
    }
}

/// Whether `record` and `run`, started here, would lock their memory, for
/// `status`. `status` locks nothing itself: it runs once, for milliseconds,
/// and nothing it does can wait on a page-in later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outlook {
    /// The limit and capability a recording started here inherits.
    pub permit: Permit,
    /// `HEADROOM_NO_MLOCK` is set here.
    pub disabled: bool,
    /// What `record` and `run` would map: this process's `VmSize` plus
    /// [`RECORD_EXTRA`]; `None` when /proc/self/maps cannot be read.
    pub need: Option<u64>,
    /// What `run --jobserver` would map, with `--prom`: `VmSize` plus
    /// [`JOBSERVER_EXTRA`]; `None` as `need`.
    pub need_jobserver: Option<u64>,
}

impl Outlook {
    /// This process's outlook; `buf` receives /proc/self/maps
    /// ([`maps::BUF_LEN`] bytes).
    pub fn of_self(disabled: bool, buf: &mut [u8]) -> Outlook {
        let vm_size = rustix::fs::open(maps::PATH, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
            .ok()
            .and_then(|fd| read_fd(fd.as_fd(), buf).ok().map(|t| maps::vm_size(t).ok()))
            .flatten();
        Outlook {
            permit: Permit::of_self(),
            disabled,
            need: vm_size.map(|v| v.saturating_add(RECORD_EXTRA)),
            need_jobserver: vm_size.map(|v| v.saturating_add(JOBSERVER_EXTRA)),
        }
    }

    /// One line for `status` (without the label): `record and run lock
    /// their memory in RAM (CAP_IPC_LOCK)`; `record and run lock, run
    /// --jobserver cannot: 1900 KiB < ~2208 KiB (ulimit -l)` when the limit
    /// holds only the plain recording; `record and run cannot lock:
    /// RLIMIT_MEMLOCK 64 KiB < ~2208 KiB (ulimit -l)` (the larger need: the
    /// limit that lets every recording lock); or `… do not lock:
    /// HEADROOM_NO_MLOCK is set`. At most 88 columns for any limit, and for
    /// any need below 1 GiB.
    pub fn write<W: uWrite>(self, w: &mut W) -> Result<(), W::Error> {
        if self.disabled {
            return uwrite!(w, "record and run do not lock: HEADROOM_NO_MLOCK is set");
        }
        match (
            self.permit.allows(self.need),
            self.permit.allows(self.need_jobserver),
        ) {
            (
                Err(_),
                Err(NotLocked::Limit {
                    limit_kib,
                    need_kib,
                }),
            ) => uwrite!(
                w,
                "record and run cannot lock: RLIMIT_MEMLOCK {} KiB < ~{} KiB (ulimit -l)",
                limit_kib,
                need_kib
            ),
            (
                Ok(()),
                Err(NotLocked::Limit {
                    limit_kib,
                    need_kib,
                }),
            ) => uwrite!(
                w,
                "record and run lock, run --jobserver cannot: {} KiB < ~{} KiB (ulimit -l)",
                limit_kib,
                need_kib
            ),
            _ => {
                uwrite!(w, "record and run lock their memory in RAM (")?;
                match self.permit {
                    Permit {
                        cap_ipc_lock: true, ..
                    } => uwrite!(w, "CAP_IPC_LOCK)"),
                    Permit { limit: None, .. } => uwrite!(w, "RLIMIT_MEMLOCK unlimited)"),
                    Permit { limit: Some(l), .. } => uwrite!(w, "RLIMIT_MEMLOCK {} KiB)", l / 1024),
                }
            }
        }
    }
}

/// `ENOMEM (errno 12)` for the errnos mlockall(2), madvise(2) and mlock(2)
/// document, `errno N` otherwise.
fn errno<W: uWrite>(w: &mut W, e: Errno) -> Result<(), W::Error> {
    let name = match e {
        Errno::NOMEM => "ENOMEM",
        Errno::PERM => "EPERM",
        Errno::INVAL => "EINVAL",
        Errno::AGAIN => "EAGAIN",
        Errno::FAULT => "EFAULT",
        _ => "",
    };
    if name.is_empty() {
        uwrite!(w, "errno {}", e.raw_os_error())
    } else {
        uwrite!(w, "{} (errno {})", name, e.raw_os_error())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::testkit::Out;
    use std::string::String;

    fn text(l: Lock) -> String {
        let mut s = Out(String::new());
        let _ = l.write(&mut s);
        s.0
    }

    const MIB: u64 = 1024 * 1024;

    fn text_at(start: u64, end: u64) -> Mapping {
        let mut m = maps::parse(b"00400000-004bf000 r-xp 00001000 fe:01 42 /usr/bin/headroom\n")
            .next()
            .unwrap()
            .unwrap()
            .0;
        m.start = start;
        m.end = end;
        m
    }

    #[test]
    fn the_cold_range_is_cut_out_of_the_mapping_it_lies_in() {
        let m = text_at(0x40_0000, 0x4b_f000);
        let [lo, hi] = outside(m, (0x40_1000, 0x42_9000));
        assert_eq!((lo.start, lo.end), (0x40_0000, 0x40_1000));
        assert_eq!((hi.start, hi.end), (0x42_9000, 0x4b_f000));
        assert_eq!(lo.len() + hi.len(), m.len() - 0x2_8000);
        // At the mapping's start: the part below is empty.
        let [lo, hi] = outside(m, (0x40_0000, 0x40_2000));
        assert!(lo.is_empty());
        assert_eq!((hi.start, hi.end), (0x40_2000, 0x4b_f000));
        // Past its end, on either side, or no range: the mapping whole.
        for cold in [
            (0x4b_f000, 0x4c_0000),
            (0x30_0000, 0x40_0000),
            (0, 0),
            (5, 5),
        ] {
            let [a, b] = outside(m, cold);
            assert_eq!(a, m, "{cold:x?}");
            assert!(b.is_empty(), "{cold:x?}");
        }
        // Covering it all: nothing left.
        let [a, b] = outside(m, (0x30_0000, 0x50_0000));
        assert!(a.is_empty() && b.is_empty());
    }

    #[test]
    fn only_whole_pages_of_the_cold_section_are_left_out() {
        assert_eq!(
            whole_pages(0x40_1003, 0x43_c5c0, 4096),
            (0x40_2000, 0x43_c000)
        );
        assert_eq!(
            whole_pages(0x40_2000, 0x43_c000, 4096),
            (0x40_2000, 0x43_c000)
        );
        // 16 KiB pages (a Pi 5's kernel).
        assert_eq!(
            whole_pages(0x40_1003, 0x43_c5c0, 16384),
            (0x40_4000, 0x43_c000)
        );
        // Less than a page: nothing.
        assert_eq!(whole_pages(0x40_1003, 0x40_2fff, 4096), (0, 0));
        assert_eq!(whole_pages(0x40_2000, 0x40_2000, 4096), (0, 0));
        assert_eq!(whole_pages(5, 9, 0), (0, 0));
    }

    #[test]
    fn a_build_without_the_release_script_leaves_nothing_out() {
        // Test builds are not release musl builds (ci/build.rs).
        assert_eq!(cold_range(), (0, 0));
    }

    #[test]
    fn the_limit_must_hold_what_is_mapped_and_the_slack() {
        let p = |limit, cap| Permit {
            limit,
            cap_ipc_lock: cap,
        };
        // Linux >= 5.16's default 8 MiB holds headroom's ~1.5 MiB.
        assert_eq!(p(Some(8 * MIB), false).allows(Some(3 * MIB / 2)), Ok(()));
        // The 64 KiB default before 5.16 does not.
        assert_eq!(
            p(Some(64 * 1024), false).allows(Some(3 * MIB / 2)),
            Err(NotLocked::Limit {
                limit_kib: 64,
                need_kib: 1536 + 256
            })
        );
        // Exactly enough, one byte short.
        let size = MIB;
        assert_eq!(p(Some(size + LOCK_SLACK), false).allows(Some(size)), Ok(()));
        assert!(
            p(Some(size + LOCK_SLACK - 1), false)
                .allows(Some(size))
                .is_err()
        );
        // CAP_IPC_LOCK, no limit, an unknown size: up to the kernel.
        assert_eq!(p(Some(0), true).allows(Some(MIB)), Ok(()));
        assert_eq!(p(None, false).allows(Some(u64::MAX)), Ok(()));
        assert_eq!(p(Some(0), false).allows(None), Ok(()));
    }

    #[test]
    fn disabled_and_refused_never_call_mlockall() {
        let small = Permit {
            limit: Some(4096),
            cap_ipc_lock: false,
        };
        assert_eq!(
            lock(Some(MIB), true, small),
            Lock::NotLocked(NotLocked::Disabled)
        );
        assert!(matches!(
            lock(Some(MIB), false, small),
            Lock::NotLocked(NotLocked::Limit { limit_kib: 4, .. })
        ));
        // Nothing was locked by either.
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        assert!(status.contains("VmLck:\t       0 kB"), "{status}");
    }

    /// A fresh anonymous private mapping of `pages` pages, never touched,
    /// between two inaccessible guard pages (so the kernel cannot merge it
    /// with a neighbour: smaps shows it alone); unmapped on drop.
    struct Fresh {
        base: *mut c_void,
        ptr: *mut c_void,
        len: usize,
    }

    impl Fresh {
        fn new(pages: usize) -> Fresh {
            let page = rustix::param::page_size();
            let len = pages * page;
            // SAFETY: a new private anonymous mapping at an address the
            // kernel picks; nothing else refers to it.
            let base = unsafe {
                rustix::mm::mmap_anonymous(
                    core::ptr::null_mut(),
                    len + 2 * page,
                    rustix::mm::ProtFlags::empty(),
                    rustix::mm::MapFlags::PRIVATE,
                )
            }
            .unwrap();
            let ptr = base.wrapping_byte_add(page);
            // SAFETY: the range lies inside the mapping just made.
            unsafe {
                rustix::mm::mprotect(
                    ptr,
                    len,
                    rustix::mm::MprotectFlags::READ | rustix::mm::MprotectFlags::WRITE,
                )
            }
            .unwrap();
            Fresh { base, ptr, len }
        }

        fn mapping(&self) -> Mapping {
            let start = self.ptr.addr() as u64;
            Mapping {
                start,
                end: start + self.len as u64,
                read: true,
                write: true,
                exec: false,
                shared: false,
                kind: Kind::Anon,
            }
        }

        /// (Rss, Locked) of the mapping in /proc/self/smaps, in KiB.
        fn rss_and_locked_kib(&self) -> (u64, u64) {
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
            let head = std::format!("{:x}-", self.ptr.addr());
            let at = smaps
                .lines()
                .position(|l| l.starts_with(&head))
                .expect("the mapping in smaps");
            let kib = |key: &str| {
                smaps
                    .lines()
                    .skip(at + 1)
                    .find_map(|l| l.strip_prefix(key))
                    .and_then(|v| v.trim().strip_suffix(" kB"))
                    .unwrap()
                    .parse::<u64>()
                    .unwrap()
            };
            (kib("Rss:"), kib("Locked:"))
        }

        fn bytes(&self) -> &[u8] {
            // SAFETY: the mapping is readable, `len` bytes long and alive
            // while `self` is; anonymous pages read as zero until written.
            unsafe { core::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
        }
    }

    impl Drop for Fresh {
        fn drop(&mut self) {
            let page = rustix::param::page_size();
            // SAFETY: unmaps what `new` mapped; no reference outlives self.
            let _ = unsafe { rustix::mm::munmap(self.base, self.len + 2 * page) };
        }
    }

    #[test]
    fn populate_makes_every_page_resident_and_changes_nothing() {
        let f = Fresh::new(16);
        assert_eq!(f.rss_and_locked_kib().0, 0);
        populate(&f.mapping()).unwrap();
        let page_kib = (rustix::param::page_size() / 1024) as u64;
        // qemu-user (ci/cross-test runs these tests for aarch64 under it,
        // and says so) accepts madvise(2) as a hint and does nothing: the
        // residency is checked on the kernel the test runs on natively.
        if std::env::var_os("HEADROOM_QEMU_USER").is_none() {
            assert_eq!(f.rss_and_locked_kib(), (16 * page_kib, 0));
        }
        assert!(f.bytes().iter().all(|&b| b == 0));
    }

    #[test]
    fn the_mlock_fallback_makes_every_page_resident_and_leaves_nothing_locked() {
        // What a kernel before 5.14 gets instead of MADV_POPULATE_WRITE.
        let f = Fresh::new(16);
        assert_eq!(f.rss_and_locked_kib().0, 0);
        populate_by_mlock(&f.mapping()).unwrap();
        let page_kib = (rustix::param::page_size() / 1024) as u64;
        // qemu-arm's /proc/self/smaps of a 32-bit guest shows every Rss as
        // 0 (qemu-aarch64's shows the pages): residency is checked natively
        // and on aarch64.
        if std::env::var_os("HEADROOM_QEMU_USER").is_none() {
            assert_eq!(f.rss_and_locked_kib(), (16 * page_kib, 0));
        }
        assert!(f.bytes().iter().all(|&b| b == 0));
    }

    #[test]
    fn kernel_and_guard_mappings_are_left_alone() {
        let m = |read, write, shared, kind| Mapping {
            start: 0x1000,
            end: 0x2000,
            read,
            write,
            exec: false,
            shared,
            kind,
        };
        assert!(holds_own_pages(&m(true, true, false, Kind::Heap)));
        assert!(holds_own_pages(&m(true, false, false, Kind::File)));
        assert!(holds_own_pages(&m(true, true, false, Kind::Stack)));
        assert!(!holds_own_pages(&m(false, false, false, Kind::Anon)));
        assert!(!holds_own_pages(&m(true, true, true, Kind::File)));
        assert!(!holds_own_pages(&m(true, false, false, Kind::Special)));
    }

    #[test]
    fn the_status_line_says_what_a_recording_would_do() {
        // `need` for record and run, 512 KiB more for run --jobserver.
        let o = |limit, cap, disabled, need: Option<u64>| {
            let mut s = Out(String::new());
            let _ = Outlook {
                permit: Permit {
                    limit,
                    cap_ipc_lock: cap,
                },
                disabled,
                need,
                need_jobserver: need.map(|n| n + 512 * 1024),
            }
            .write(&mut s);
            s.0
        };
        let need = Some(1536 * 1024);
        assert_eq!(
            o(Some(64 * 1024), false, false, need),
            "record and run cannot lock: RLIMIT_MEMLOCK 64 KiB < ~2304 KiB (ulimit -l)"
        );
        assert_eq!(
            o(Some(2048 * 1024), false, false, need),
            "record and run lock, run --jobserver cannot: 2048 KiB < ~2304 KiB (ulimit -l)"
        );
        assert_eq!(
            o(Some(2304 * 1024), false, false, need),
            "record and run lock their memory in RAM (RLIMIT_MEMLOCK 2304 KiB)"
        );
        assert_eq!(
            o(Some(64 * 1024), true, false, need),
            "record and run lock their memory in RAM (CAP_IPC_LOCK)"
        );
        assert_eq!(
            o(Some(8 * MIB), false, false, need),
            "record and run lock their memory in RAM (RLIMIT_MEMLOCK 8192 KiB)"
        );
        assert_eq!(
            o(None, false, false, None),
            "record and run lock their memory in RAM (RLIMIT_MEMLOCK unlimited)"
        );
        assert_eq!(
            o(None, true, true, need),
            "record and run do not lock: HEADROOM_NO_MLOCK is set"
        );
        // The longest line fits status's 100 columns with its 12 of label.
        let refused = o(Some(1 << 30), false, false, Some((1 << 30) - 1));
        let allowed = o(Some(u64::MAX), false, false, Some(1));
        for long in [refused, allowed] {
            assert!(long.chars().count() <= 88, "{long}");
        }
    }

    #[test]
    fn the_summarys_words() {
        assert_eq!(text(Lock::Locked), "locked in RAM (mlockall)");
        assert_eq!(
            text(Lock::NotLocked(NotLocked::Disabled)),
            "not locked: HEADROOM_NO_MLOCK is set"
        );
        assert_eq!(
            text(Lock::NotLocked(NotLocked::Limit {
                limit_kib: 64,
                need_kib: 1800
            })),
            "not locked: RLIMIT_MEMLOCK is 64 KiB, locking needs 1800 KiB (ulimit -l, or CAP_IPC_LOCK)"
        );
        assert_eq!(
            text(Lock::NotLocked(NotLocked::Failed(Errno::NOMEM))),
            "not locked: mlockall(2) failed: ENOMEM (errno 12)"
        );
        assert_eq!(
            text(Lock::NotLocked(NotLocked::Failed(Errno::IO))),
            "not locked: mlockall(2) failed: errno 5"
        );
    }
}
