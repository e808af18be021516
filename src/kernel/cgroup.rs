//! Control groups: the memory and CPU limits that apply to this process.
//!
//! Three steps, kept apart:
//!
//! 1. Pure parsers, in `cgroup/control_files.rs`: [`path_for`] over
//!    `/proc/self/cgroup`, and one parser per small control file
//!    ([`parse_limit`], [`parse_cpu_max`], [`parse_cfs_quota`],
//!    [`parse_cpu_list_count`], [`parse_oom_kill`], [`parse_stat_value`]
//!    for `memory.stat`).
//! 2. Resolution, once at start-up ([`open_memory`], [`open_cpu`]): pick the
//!    hierarchy that carries the controller (a v1 line naming it wins over
//!    the `0::` line, whatever the line order: hybrid hosts have both), find
//!    its mount in `/proc/self/mountinfo`, strip the mount's own root from
//!    the cgroup path (inside a container `/sys/fs/cgroup/memory` often
//!    already *is* `/docker/<id>`), and open the leaf directory and every
//!    ancestor up to the mount point.
//! 3. Per tick, no allocation and no path building: read the small files
//!    relative to the directories opened in step 2
//!    ([`MemCgroup::available`], [`CpuCgroup::quota_millicpus`], …).
//!
//! A cgroup's **available** memory is the cgroup analogue of MemAvailable:
//! its limit less what it cannot give back, `limit − (usage −
//! inactive_file)`. Usage counts the page cache charged to the cgroup, and
//! the kernel reclaims the inactive file pages among it before it OOM-kills
//! anything in the cgroup; clean cache left by an earlier build is not
//! "used" (Kubernetes and cAdvisor call `usage − inactive_file` the working
//! set). The inactive file cache is `inactive_file` of v2 `memory.stat`
//! (hierarchical, like `memory.current`) and `total_inactive_file` of v1's
//! (the hierarchical one, like `memory.usage_in_bytes`; v1's plain
//! `inactive_file` leaves the children out). See [`Available`].
//!
//! "Unlimited" is never recognised by a magic number: v1 prints
//! `PAGE_COUNTER_MAX × PAGE_SIZE`, which is 9223372036854771712 with 4 KiB
//! pages, 9223372036854759424 with 16 KiB (Pi 5), 9223372036854710272 with
//! 64 KiB, 8796093018112 on 32-bit and 18446744073709551615 before 3.19. A
//! limit is a limit only when it is below MemTotal ([`Limit::effective`]).
//!
//! # References
//! cgroups(7), `Documentation/admin-guide/cgroup-v2.rst`,
//! `Documentation/admin-guide/cgroup-v1/memory.rst`,
//! `Documentation/scheduler/sched-bwc.rst` (CFS bandwidth), cpuset(7).

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Access, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::kernel::kept::{Kept, Shape};
use crate::kernel::mountinfo::{self, PATH_MAX};
use crate::kernel::parse::ParseError;
use crate::kernel::proc_cgroups;
use crate::kernel::root::{ReadError, Root, read_at, read_once_at};

mod above;
mod control_files;
pub use above::{
    HIERARCHICAL_MEMORY_LIMIT, HIERARCHICAL_MEMSW_LIMIT, PGSCAN_DIRECT, TopReclaim, unseen_limit,
    unseen_memsw_limit,
};
pub use control_files::{
    CpuMax, Limit, Version, inactive_file_key, is_within, parse_bytes, parse_cfs_quota,
    parse_cpu_list_count, parse_cpu_max, parse_limit, parse_oom_kill, parse_stat_value, path_for,
};
use control_files::{lists_controller, millicpus, strip_dir_prefix};

/// Path of the calling process's cgroup membership, relative to the root.
pub const PATH_SELF: &str = "proc/self/cgroup";

/// Minimum useful size of the buffer given to [`open_memory`] and
/// [`open_cpu`], in bytes: it holds `/proc/self/cgroup` (at most ~1.5 KiB:
/// 13 lines on a hybrid host, each path under a few hundred bytes) and then
/// `/proc/self/mountinfo`, the larger, so [`mountinfo::BUF_LEN`].
pub const OPEN_BUF_LEN: usize = mountinfo::BUF_LEN;

/// Recommended size of the buffer given to the per-tick readers, in bytes.
///
/// The largest file they read is `memory.stat`: v1 prints ~42 lines, 755
/// bytes measured for a 1 GiB cgroup on Linux 6.18 and ~890 at a busy root
/// (values of 10 digits); v2 on 6.x prints ~65–75 lines (one per counter
/// of `memory_stats[]` and `memcg_vm_event_stat[]` in `mm/memcontrol.c`),
/// 1.5–2.3 KiB as reported from 6.x hosts (this VM's memory controller is
/// on v1, so not measured here; 907 bytes for fixture 46's 6.8 file of
/// small values): more than the 1 KiB this buffer was. 4 KiB, a page,
/// holds v2's with room for counters of 13 digits (a test prints 75 such
/// lines) and for the lines later kernels add. The
/// rest are small: `memory.max`/`limit_in_bytes` at most 21 bytes,
/// `cpu.max` 42, `memory.events` about 90, `memory.oom_control` about 50,
/// `cpuset.cpus.effective` under 100 bytes unless hundreds of CPUs are
/// offline in a checkerboard. A longer file is `Truncated` and reads as
/// unknown (for `memory.stat`: inactive file cache not counted).
pub const TICK_BUF_LEN: usize = 4096;

/// The statistics file of a memory cgroup (both versions): `key value`
/// lines, values in bytes or events.
pub const STAT_FILE: &str = "memory.stat";

/// Most directories kept from the leaf cgroup up to its mount point. systemd
/// hosts are 3–5 deep (`user.slice/user-1000.slice/user@1000.service/app.slice/x.scope`),
/// nested containers a few more; 32 is far above anything seen.
pub const MAX_DEPTH: usize = 32;

/// What resolving one controller's cgroup found ([`open_memory`],
/// [`open_cpu`]), in three states that callers must keep apart:
///
/// - `Ok(Some(_))`: the cgroup, opened; its limits can be read.
/// - `Ok(None)`: **no limit**: no `/proc/self/cgroup` or no line for the
///   controller, none of its cgroups can limit (`/proc/cgroups`: disabled,
///   or the root cgroup alone), or a v2 tree that does not enable it.
/// - `Err(why)`: **unknown**: `/proc/self/cgroup` names a cgroup for the
///   controller, but its files cannot be read ([`CgroupError`]: no cgroup
///   filesystem mounted, as in a container without /sys; the directory
///   missing; a read error). A limit may exist that nothing here can see:
///   callers say so, never plan as if there were none.
pub type Resolution<T> = Result<Option<T>, CgroupError>;

/// Why a controller's limit is unknown although `/proc/self/cgroup` names
/// a cgroup for it; the `Err` of a [`Resolution`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgroupError {
    /// No cgroup filesystem of the controller's hierarchy is mounted in
    /// this mount namespace (`/proc/self/mountinfo` lists none): a
    /// container without /sys, or without /sys/fs/cgroup.
    NotMounted,
    /// The cgroup lies outside every mounted tree of its hierarchy: a
    /// `/../` path (the process is outside its cgroup namespace's root) or
    /// no mount's root is an ancestor of it.
    Outside,
    /// A file or directory could not be read: its path (relative to the
    /// root, or a control file name, or `"cgroup directory"`) and the error.
    Read(&'static str, ReadError),
    /// A file that must parse did not: its path and the error.
    Parse(&'static str, ParseError),
    /// The cgroup path is longer than `PATH_MAX` or deeper than
    /// [`MAX_DEPTH`] levels below its mount point.
    TooDeep,
}

impl CgroupError {
    /// The words of [`CgroupError::NotMounted`] and
    /// [`CgroupError::Outside`] (which carry no path or errno), the same on
    /// the status screen, in its JSON and in warnings; empty for the others.
    pub fn words(self) -> &'static str {
        match self {
            CgroupError::NotMounted => {
                "proc/self/cgroup names a cgroup, but no cgroup filesystem is mounted"
            }
            CgroupError::Outside => "its cgroup is outside the mounted cgroup tree",
            _ => "",
        }
    }
}

/// One line for a warning: `proc/self/cgroup: cannot open: symlink loop
/// (ELOOP)`, `memory.max: unexpected format (line 1)`.
impl core::fmt::Display for CgroupError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CgroupError::Read(path, e) => write!(f, "{path}: {}", e.describe()),
            CgroupError::Parse(path, e) => {
                write!(f, "{path}: unexpected format (line {})", e.line)
            }
            CgroupError::TooDeep => f.write_str("the cgroup path is too long or too deep"),
            CgroupError::NotMounted | CgroupError::Outside => f.write_str(self.words()),
        }
    }
}

/// Open directories from the leaf cgroup (index 0) up to the mount point.
type Dirs = heapless::Vec<OwnedFd, MAX_DEPTH>;

/// What resolution found for a controller: its hierarchy, the directories
/// opened, and whether the mount's root lies below the hierarchy's root
/// (a container's view: ancestors above the mount are not shown).
type Opened = (Version, Dirs, bool);

/// The memory cgroup of this process, resolved once; see [`open_memory`].
#[derive(Debug)]
pub struct MemCgroup {
    /// Hierarchy the memory controller is on.
    pub version: Version,
    /// Leaf first, then each ancestor up to and including the mount point.
    dirs: Dirs,
    /// The mount point is not the hierarchy's root: ancestors above it
    /// are hidden, and on v1 their limit is read from the top level's
    /// `memory.stat` ([`unseen_limit`]).
    hidden_above: bool,
}

/// The memory of one limiting level of the cgroup path: its limit, what
/// is charged to it, and what is available under it; see
/// [`MemCgroup::available`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Available {
    /// The limit at that level, bytes (below MemTotal): v2 `memory.max`,
    /// v1 `memory.limit_in_bytes`.
    pub limit_bytes: u64,
    /// Usage at that level (including its descendants and the page cache
    /// charged to them), bytes: v2 `memory.current`, v1
    /// `memory.usage_in_bytes`.
    pub usage_bytes: u64,
    /// The inactive file cache among that usage, bytes ([`inactive_file_key`]
    /// of [`STAT_FILE`]); `None` when `memory.stat` is missing, unreadable
    /// or lacks the key: the cache then counts as used.
    pub inactive_file_bytes: Option<u64>,
    /// `limit − (usage − inactive file)`: the memory a build can still
    /// have there before the kernel must reclaim more than cache or
    /// OOM-kill, bytes; 0 when the limit is exceeded. Without
    /// `inactive_file_bytes`, `limit − usage`. See [`available_bytes`].
    pub available_bytes: u64,
    /// Level it was found at: 0 = the process's own cgroup, 1 = its parent…;
    /// [`MemCgroup::levels`] for an ancestor above the mount, whose usage
    /// is the mount's top cgroup's (the least it can be).
    pub depth: u8,
}

/// `limit − (usage − inactive_file)`, bytes, saturating: the inactive file
/// cache is taken off the usage (at most all of it: the counters are read
/// one after the other and may disagree by a little), and the result is
/// 0 when what cannot be reclaimed is above the limit. `None` for the
/// inactive file cache counts it as used (`limit − usage`).
pub fn available_bytes(limit: u64, usage: u64, inactive_file: Option<u64>) -> u64 {
    limit.saturating_sub(usage.saturating_sub(inactive_file.unwrap_or(0)))
}

/// Levels of the memory cgroup path (from the leaf) whose limit and usage
/// files a recording keeps open between ticks: three covers a container's
/// or a systemd session's path; farther levels are read by name.
pub const KEPT_LEVELS: usize = 3;

/// The kept limit and usage files of the first [`KEPT_LEVELS`] levels;
/// see [`MemCgroup::available_kept`].
///
/// `memory.stat` is not kept: it is read by name, and only at a level
/// whose limit is effective (one on nearly every host). Keeping it would
/// cost a seq_file buffer per level, and [`crate::kernel::kept`]'s budget
/// (`tick::sampler::MAX_KEPT`, at most 128 KiB at 4 KiB pages) has room
/// for one more descriptor, not three. By name it costs little: on this
/// VM (Linux 6.18, v1, 20000 reads) openat + pread + close of
/// `memory.stat` took 3.7 µs against 2.3 µs for a pread of a kept
/// descriptor: 1.4 µs a tick for each limiting level.
#[derive(Debug)]
pub struct KeptLevels {
    levels: [KeptLevel; KEPT_LEVELS],
}

#[derive(Debug)]
struct KeptLevel {
    limit: Kept,
    usage: Kept,
    /// The limit file did not exist at the first read.
    absent: bool,
}

impl KeptLevels {
    /// Nothing open yet; kept from the first read when `keep` (the live
    /// root).
    pub const fn new(keep: bool) -> KeptLevels {
        const fn level(keep: bool) -> KeptLevel {
            KeptLevel {
                limit: Kept::new(keep),
                usage: Kept::new(keep),
                absent: false,
            }
        }
        KeptLevels {
            levels: [level(keep), level(keep), level(keep)],
        }
    }

    /// Descriptors held now.
    pub fn open(&self) -> usize {
        self.levels
            .iter()
            .map(|l| usize::from(l.limit.is_open()) + usize::from(l.usage.is_open()))
            .sum()
    }
}

/// Where a limit above the mount is set, in words (`status`'s "limit set
/// at"): no path names it.
pub const ABOVE_MOUNT: &str = "a cgroup above the mount (memory.stat hierarchical_memory_limit)";

/// The bit that marks a [`Level::ino`] as no inode but the id of a
/// limit above the mount ([`unseen_id`]).
pub const UNSEEN_ID_BIT: u64 = 1 << 63;

/// The id a level above the mount with limit `limit_bytes` goes by, in
/// place of the inode no directory shows: [`UNSEEN_ID_BIT`] and the
/// limit in 4 KiB pages. Builds under one hidden parent name the same id;
/// so do builds under two hidden parents of the same limit, which are
/// then counted together (the safe side).
pub fn unseen_id(limit_bytes: u64) -> u64 {
    UNSEEN_ID_BIT | (limit_bytes >> 12)
}

/// True when `id` is an [`unseen_id`], not an inode: what is used under
/// it is not the kernel's count of every build inside, only this one's.
pub fn is_unseen_id(id: u64) -> bool {
    id & UNSEEN_ID_BIT != 0
}

/// One limiting level of a memory cgroup path; see [`MemCgroup::limits`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// The inode number of the cgroup's directory; for a level above the
    /// mount, an [`unseen_id`].
    pub ino: u64,
    /// Its limit, usage, inactive file cache and available memory.
    pub mem: Available,
}

/// Resolves the memory cgroup of the calling process under `root`.
///
/// Reads `/proc/self/cgroup` and `/proc/self/mountinfo` into `buf` (give it
/// [`OPEN_BUF_LEN`] bytes), and opens the leaf directory and every ancestor
/// up to the mount point, relative to `root`. For v2 the controller must
/// also be enabled: `memory.max` or `memory.current` exists on the path, or
/// `cgroup.controllers` lists `memory`.
///
/// Returns `Ok(None)` when there is no memory controller: no
/// `/proc/self/cgroup`, no line for it, none of its cgroups can limit
/// (`/proc/cgroups`: Raspberry Pi OS boots with `cgroup_disable=memory`),
/// or v2 without `memory` enabled on the path. See [`Resolution`].
///
/// # Errors
/// [`CgroupError`]: the limit is unknown (a cgroup named that no mount
/// shows, its files unreadable or malformed, the path too deep).
pub fn open_memory(root: &Root, buf: &mut [u8]) -> Resolution<MemCgroup> {
    let Some(opened) = open_controller(root, buf, b"memory")? else {
        return Ok(None);
    };
    memory_enabled(opened, buf)
}

/// [`open_memory`] from the texts of `/proc/self/cgroup` and
/// `/proc/self/mountinfo` already read (or why they could not be), for a
/// caller that reads each once for several uses (`status`). `buf` is
/// scratch for the v2 check ([`TICK_BUF_LEN`]).
///
/// # Errors
/// As [`open_memory`].
pub fn open_memory_in(
    root: &Root,
    cgroup_text: Result<&[u8], ReadError>,
    mountinfo_text: Result<&[u8], ReadError>,
    buf: &mut [u8],
) -> Resolution<MemCgroup> {
    let Some(opened) = open_controller_in(root, cgroup_text, mountinfo_text, b"memory")? else {
        return Ok(None);
    };
    memory_enabled(opened, buf)
}

/// The memory cgroup on `dirs`, when its controller is usable there.
fn memory_enabled((version, dirs, hidden_above): Opened, buf: &mut [u8]) -> Resolution<MemCgroup> {
    if version == Version::V2
        && !v2_enabled(&dirs, buf, b"memory", &["memory.max", "memory.current"])
    {
        return Ok(None);
    }
    Ok(Some(MemCgroup {
        version,
        dirs,
        hidden_above,
    }))
}

/// Checks that a v2 controller is usable somewhere on the path: one of
/// its `files` is readable at some level (asked with faccessat(2), not
/// opened: the figures open them once, later), else some level's
/// `cgroup.controllers` lists `name` (read only when no file answers, so
/// that the memory and cpu checks seldom both read it).
fn v2_enabled(dirs: &Dirs, buf: &mut [u8], name: &[u8], files: &[&str]) -> bool {
    let readable = |d: &OwnedFd| {
        files
            .iter()
            .any(|f| rustix::fs::accessat(d.as_fd(), *f, Access::READ_OK, AtFlags::empty()).is_ok())
    };
    dirs.iter().any(readable)
        || dirs.iter().any(|d| {
            read_at(d.as_fd(), "cgroup.controllers", buf).is_ok_and(|b| lists_controller(b, name))
        })
}

/// Steps 1 and 2 of resolution for any controller: which hierarchy, which
/// mount, which directories; `/proc/self/cgroup` and then
/// `/proc/self/mountinfo` read into `buf`.
fn open_controller(
    root: &Root,
    buf: &mut [u8],
    controller: &[u8],
) -> Result<Option<Opened>, CgroupError> {
    // The cgroup path must outlive `buf`, which is reused for mountinfo.
    let mut path_store = [0u8; PATH_MAX];
    let Some((version, path)) = controller_path(root.read(PATH_SELF, buf), controller)? else {
        return Ok(None);
    };
    let dst = path_store
        .get_mut(..path.len())
        .ok_or(CgroupError::TooDeep)?;
    dst.copy_from_slice(path);
    open_dirs(
        root,
        version,
        dst,
        root.read(mountinfo::PATH, buf),
        controller,
    )
}

/// [`open_controller`] from the texts already read.
fn open_controller_in(
    root: &Root,
    cgroup_text: Result<&[u8], ReadError>,
    mountinfo_text: Result<&[u8], ReadError>,
    controller: &[u8],
) -> Result<Option<Opened>, CgroupError> {
    let Some((version, path)) = controller_path(cgroup_text, controller)? else {
        return Ok(None);
    };
    open_dirs(root, version, path, mountinfo_text, controller)
}

/// Step 1: the hierarchy and path of `controller` in `/proc/self/cgroup`;
/// `None` without the file or a line for it.
fn controller_path<'t>(
    text: Result<&'t [u8], ReadError>,
    controller: &[u8],
) -> Result<Option<(Version, &'t [u8])>, CgroupError> {
    match text {
        Ok(t) => Ok(path_for(t, controller)),
        Err(ReadError::Open(Errno::NOENT)) => Ok(None),
        Err(e) => Err(CgroupError::Read(PATH_SELF, e)),
    }
}

/// Step 2: the mount of `version`'s hierarchy (carrying `controller` on
/// v1) that exposes `path` deepest, in the mount table `mountinfo_text`,
/// and the directories from `path`'s leaf up to that mount point, opened.
/// No such mount is [`CgroupError::NotMounted`] (none of the hierarchy)
/// or [`CgroupError::Outside`] (none shows `path`), unless
/// `/proc/cgroups` says no cgroup of it can limit: then `Ok(None)`.
fn open_dirs(
    root: &Root,
    version: Version,
    path: &[u8],
    mountinfo_text: Result<&[u8], ReadError>,
    controller: &[u8],
) -> Result<Option<Opened>, CgroupError> {
    let mut mp_store = [0u8; PATH_MAX];
    let (mount_point, rest) = {
        let text = mountinfo_text.map_err(|e| CgroupError::Read(mountinfo::PATH, e))?;
        let mut best: Option<(mountinfo::Mount<'_>, &[u8])> = None;
        // A mount of the hierarchy was seen, whether or not it shows `path`.
        let mut seen = false;
        for m in mountinfo::entries(text) {
            let m = m.map_err(|e| CgroupError::Parse(mountinfo::PATH, e))?;
            let is_it = match version {
                Version::V2 => m.fs_type == b"cgroup2",
                Version::V1 => {
                    m.fs_type == b"cgroup"
                        && m.super_options
                            .split(|&c| c == b',')
                            .any(|o| o == controller)
                }
            };
            if !is_it {
                continue;
            }
            seen = true;
            let mut root_store = [0u8; PATH_MAX];
            let Some(mroot) = mountinfo::unescape(m.root, &mut root_store) else {
                continue;
            };
            let Some(rest) = strip_dir_prefix(path, mroot) else {
                continue;
            };
            // The mount exposing the deepest part of the hierarchy wins;
            // on a tie, the first (the canonical /sys/fs/cgroup one).
            if best.is_none_or(|(_, r)| rest.len() < r.len()) {
                best = Some((m, rest));
            }
        }
        let Some((m, rest)) = best else {
            return match (seen, proc_cgroups::no_limit_possible(root, controller)) {
                (_, true) => Ok(None),
                (false, false) => Err(CgroupError::NotMounted),
                (true, false) => Err(CgroupError::Outside),
            };
        };
        let mp = mountinfo::unescape(m.mount_point, &mut mp_store).ok_or(CgroupError::TooDeep)?;
        (mp, rest)
    };

    if components(rest).any(|c| c == b"..") {
        return Err(CgroupError::Outside);
    }
    let mut dirs = Dirs::new();
    let mut cur = open_components(root.fd(), mount_point)?;
    for c in components(rest) {
        let next = open_dir(cur.as_fd(), c)?;
        dirs.push(cur).map_err(|_| CgroupError::TooDeep)?;
        cur = next;
    }
    dirs.push(cur).map_err(|_| CgroupError::TooDeep)?;
    dirs.as_mut_slice().reverse();
    let hidden_above = rest.len() < path.len() || dirs.last().is_some_and(|d| !is_root(version, d));
    Ok(Some((version, dirs, hidden_above)))
}

/// True when `dir` is its hierarchy's root cgroup, by a file only the
/// root has (v1 `release_agent`) or only the others have (v2
/// `cgroup.type`). A mount whose top is not the root hides the cgroups
/// above it: a container's mount of its own cgroup, or any mount made in
/// a cgroup namespace (its paths then read `/` at the namespace's root,
/// so the path alone does not tell).
fn is_root(version: Version, dir: &OwnedFd) -> bool {
    let has = |f: &str| rustix::fs::accessat(dir, f, Access::EXISTS, AtFlags::empty()).is_ok();
    match version {
        Version::V1 => has("release_agent"),
        Version::V2 => !has("cgroup.type"),
    }
}

/// The non-empty, non-`.` components of a `/`-separated path.
fn components(p: &[u8]) -> impl Iterator<Item = &[u8]> {
    p.split(|&c| c == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
}

fn open_dir(dir: BorrowedFd<'_>, name: &[u8]) -> Result<OwnedFd, CgroupError> {
    // One component at a time: each is at most NAME_MAX (255) bytes, so
    // rustix builds the C string on the stack, and no UTF-8 is required.
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| CgroupError::Read("cgroup directory", ReadError::Open(e)))
}

/// Opens the absolute `path` relative to `start` (the root), component by
/// component.
fn open_components(start: BorrowedFd<'_>, path: &[u8]) -> Result<OwnedFd, CgroupError> {
    let mut cur = open_dir(start, b".")?;
    for c in components(path) {
        if c == b".." {
            return Err(CgroupError::Read(
                "cgroup directory",
                ReadError::Open(Errno::INVAL),
            ));
        }
        cur = open_dir(cur.as_fd(), c)?;
    }
    Ok(cur)
}

/// The memory limit file of `version`: v2 `memory.max`, v1
/// `memory.limit_in_bytes`.
pub fn limit_file(version: Version) -> &'static str {
    match version {
        Version::V2 => "memory.max",
        Version::V1 => "memory.limit_in_bytes",
    }
}

/// The memory usage file of `version`: v2 `memory.current`, v1
/// `memory.usage_in_bytes`.
pub fn usage_file(version: Version) -> &'static str {
    match version {
        Version::V2 => "memory.current",
        Version::V1 => "memory.usage_in_bytes",
    }
}

/// The file that limits swap in `version`: v2 `memory.swap.max` (swap
/// alone), v1 `memory.memsw.limit_in_bytes` (memory and swap together);
/// see [`MemCgroup::swap_allowance_bytes`].
pub fn swap_limit_file(version: Version) -> &'static str {
    match version {
        Version::V2 => "memory.swap.max",
        Version::V1 => "memory.memsw.limit_in_bytes",
    }
}

/// Reads `file` in `dir` and parses it; `None` on any failure. One
/// read(2): a cgroup attribute is generated whole by one read.
fn read_parse<T>(
    dir: &OwnedFd,
    file: &str,
    buf: &mut [u8],
    parse: impl FnOnce(&[u8]) -> Result<T, ParseError>,
) -> Option<T> {
    read_once_at(dir.as_fd(), file, buf)
        .ok()
        .and_then(|b| parse(b).ok())
}

impl MemCgroup {
    /// Number of directories held, leaf to mount point (≥ 1).
    pub fn levels(&self) -> usize {
        self.dirs.len()
    }

    /// The open directory of this process's own memory cgroup (the leaf).
    pub fn leaf(&self) -> BorrowedFd<'_> {
        // `open_controller` always pushes the leaf: `dirs` is never empty.
        match self.dirs.first() {
            Some(d) => d.as_fd(),
            None => rustix::fs::CWD,
        }
    }

    fn files(&self) -> (&'static str, &'static str, &'static str) {
        let events = match self.version {
            Version::V2 => "memory.events",
            Version::V1 => "memory.oom_control",
        };
        (limit_file(self.version), usage_file(self.version), events)
    }

    /// The available memory of the tightest limiting level of the path,
    /// read now.
    ///
    /// For the leaf and every ancestor up to the mount point: the limit (v2
    /// `memory.max`, v1 `memory.limit_in_bytes`) and the usage (v2
    /// `memory.current`, v1 `memory.usage_in_bytes`), in bytes, and where
    /// the limit is effective, the inactive file cache of [`STAT_FILE`]
    /// ([`inactive_file_key`]). A limit ≥ `mem_total_kib` × 1024 is no
    /// limit (this is what makes every v1 "unlimited" sentinel harmless;
    /// pass 0 only if you want "all unlimited"). Returns the level with the
    /// smallest [`Available::available_bytes`] (the deepest on a tie);
    /// `None` when no level has a readable limit below MemTotal and a
    /// readable usage. `buf`: [`TICK_BUF_LEN`].
    ///
    /// v1 with `memory.use_hierarchy = 0` (deprecated; forced to 1 since Linux
    /// 5.11) would make an ancestor's limit not apply; it is not checked.
    pub fn available(&self, mem_total_kib: u64, buf: &mut [u8]) -> Option<Available> {
        self.available_kept(&mut KeptLevels::new(false), mem_total_kib, buf)
    }

    /// [`MemCgroup::available`], reading the limit and usage files of the
    /// first [`KEPT_LEVELS`] levels through `kept` (descriptors kept
    /// between ticks; `memory.stat` is read by name, see [`KeptLevels`]);
    /// a level whose limit file is found missing (the v2 root cgroup has
    /// no `memory.max`; a removed cgroup) is not read again.
    pub fn available_kept(
        &self,
        kept: &mut KeptLevels,
        mem_total_kib: u64,
        buf: &mut [u8],
    ) -> Option<Available> {
        let total = mem_total_kib.saturating_mul(1024);
        let (limit_file, usage_file, _) = self.files();
        let mut best: Option<Available> = None;
        // The top level's own limit, for a limit above the mount.
        let mut top_own = None;
        for (depth, dir) in self.dirs.iter().enumerate() {
            let mut once = (Kept::new(false), Kept::new(false));
            let (limit_k, usage_k) = match kept.levels.get_mut(depth) {
                Some(l) if l.absent => continue,
                Some(l) => (&mut l.limit, &mut l.usage),
                None => (&mut once.0, &mut once.1),
            };
            let limit = match limit_k.read(dir.as_fd(), limit_file, buf, Shape::Whole) {
                Err(e) if e.is_gone() => {
                    if let Some(l) = kept.levels.get_mut(depth) {
                        l.absent = true;
                    }
                    continue;
                }
                r => r.ok().and_then(|b| parse_limit(b).ok()),
            };
            if depth + 1 == self.dirs.len() {
                top_own = limit;
            }
            let Some(limit) = limit.and_then(|l| l.effective(total)) else {
                continue;
            };
            let Some(usage) = usage_k
                .read(dir.as_fd(), usage_file, buf, Shape::Whole)
                .ok()
                .and_then(|b| parse_bytes(b).ok())
            else {
                continue;
            };
            best = tighter(best, self.level(dir, depth, limit, usage, buf));
        }
        match self.unseen(top_own, total, buf) {
            Some(a) => tighter(best, a),
            None => best,
        }
    }

    /// The level above the mount whose limit binds although no directory
    /// shows it (v1 only: [`unseen_limit`] of the top level's
    /// [`STAT_FILE`]), its usage and inactive file cache the top level's
    /// (the least the ancestor's can be), at depth [`MemCgroup::levels`].
    /// `None` on v2, when the mount shows the hierarchy's root, or when
    /// no hidden ancestor limits more than the path shows. `top_own`: the
    /// top level's own limit, as the caller read it (`None`: unreadable).
    /// Read by name: `memory.stat` and, when such a limit binds, the
    /// usage; in a container on v1 only.
    pub fn unseen(
        &self,
        top_own: Option<Limit>,
        mem_total_bytes: u64,
        buf: &mut [u8],
    ) -> Option<Available> {
        self.unseen_and_swap(top_own, mem_total_bytes, 0, buf).0
    }

    /// The mount's top cgroup's usage and reclaim now, on v2 when the
    /// mount hides the cgroups above it (a cgroup namespace, a
    /// container's mount): what a limit there that no file states is
    /// noticed by (`govern::jobserver::ceiling`). `None` elsewhere, or
    /// when `memory.current` or `memory.stat`'s `pgscan_direct` cannot be
    /// read (before Linux 5.0 no `pgscan_direct`). Two reads by name.
    /// `buf`: [`TICK_BUF_LEN`].
    pub fn top_reclaim(&self, buf: &mut [u8]) -> Option<TopReclaim> {
        if self.version != Version::V2 || !self.hidden_above {
            return None;
        }
        let top = self.dirs.last()?;
        let usage_bytes = read_parse(top, usage_file(self.version), buf, parse_bytes)?;
        let stat = read_once_at(top.as_fd(), STAT_FILE, buf).ok()?;
        let pgscan_direct = parse_stat_value(stat, PGSCAN_DIRECT).ok()??;
        let key = inactive_file_key(self.version);
        let inactive_file_bytes = parse_stat_value(stat, key).ok().flatten().unwrap_or(0);
        Some(TopReclaim {
            usage_bytes,
            inactive_file_bytes,
            pgscan_direct,
        })
    }

    /// [`MemCgroup::unseen`] and the swap that limit allows (its
    /// `hierarchical_memsw_limit` below `memsw_total_bytes`, less its
    /// memory limit: [`unseen_memsw_limit`]), from one read of the top
    /// level's [`STAT_FILE`].
    fn unseen_and_swap(
        &self,
        own: Option<Limit>,
        mem_total_bytes: u64,
        memsw_total_bytes: u64,
        buf: &mut [u8],
    ) -> (Option<Available>, Option<u64>) {
        let top = match self.dirs.last() {
            Some(top) if self.version == Version::V1 && self.hidden_above => top,
            _ => return (None, None),
        };
        let Ok(stat) = read_once_at(top.as_fd(), STAT_FILE, buf) else {
            return (None, None);
        };
        let Some(limit) = unseen_limit(stat, own, mem_total_bytes) else {
            return (None, None);
        };
        let swap = unseen_memsw_limit(stat, memsw_total_bytes).map(|m| m.saturating_sub(limit));
        let inactive = parse_stat_value(stat, inactive_file_key(self.version))
            .ok()
            .flatten();
        let above =
            read_parse(top, usage_file(self.version), buf, parse_bytes).map(|usage| Available {
                limit_bytes: limit,
                usage_bytes: usage,
                inactive_file_bytes: inactive,
                available_bytes: available_bytes(limit, usage, inactive),
                depth: u8::try_from(self.dirs.len()).unwrap_or(u8::MAX),
            });
        (above, swap)
    }

    /// [`MemCgroup::available`] and [`MemCgroup::swap_allowance_bytes`]
    /// at once, each file read once (v1 needs each level's
    /// `memory.limit_in_bytes` for both): for `status`, which shows both.
    /// `buf`: [`TICK_BUF_LEN`].
    pub fn available_and_swap(
        &self,
        mem_total_kib: u64,
        swap_total_kib: u64,
        buf: &mut [u8],
    ) -> (Option<Available>, Option<u64>) {
        let total = mem_total_kib.saturating_mul(1024);
        let limits = self.read_limits(buf);
        let (_, usage_file, _) = self.files();
        let mut best: Option<Available> = None;
        for (depth, dir) in self.dirs.iter().enumerate() {
            let Some(limit) = limits
                .get(depth)
                .copied()
                .flatten()
                .and_then(|l| l.effective(total))
            else {
                continue;
            };
            let Some(usage) = read_parse(dir, usage_file, buf, parse_bytes) else {
                continue;
            };
            best = tighter(best, self.level(dir, depth, limit, usage, buf));
        }
        let top = limits.last().copied().flatten();
        let memsw_total = mem_total_kib
            .saturating_add(swap_total_kib)
            .saturating_mul(1024);
        let (above, above_swap) = self.unseen_and_swap(top, total, memsw_total, buf);
        if let Some(a) = above {
            best = tighter(best, a);
        }
        let swap =
            self.swap_allowance_with(&limits, mem_total_kib, swap_total_kib, above_swap, buf);
        (best, swap)
    }

    /// The memory limit of each level, leaf first, read now; `None` where
    /// unreadable or unparsable.
    fn read_limits(&self, buf: &mut [u8]) -> heapless::Vec<Option<Limit>, MAX_DEPTH> {
        let file = limit_file(self.version);
        // `dirs` holds at most MAX_DEPTH: every push fits.
        self.dirs
            .iter()
            .map(|d| read_parse(d, file, buf, parse_limit))
            .collect()
    }

    /// The figures of the level `dir` at `depth`, whose effective limit
    /// and usage were just read: its inactive file cache read now.
    fn level(
        &self,
        dir: &OwnedFd,
        depth: usize,
        limit: u64,
        usage: u64,
        buf: &mut [u8],
    ) -> Available {
        let inactive = self.inactive_file_bytes(dir, buf);
        Available {
            limit_bytes: limit,
            usage_bytes: usage,
            inactive_file_bytes: inactive,
            available_bytes: available_bytes(limit, usage, inactive),
            depth: u8::try_from(depth).unwrap_or(u8::MAX),
        }
    }

    /// The inactive file cache of the level `dir`, bytes, by name from its
    /// [`STAT_FILE`]; `None` when missing, unreadable, larger than `buf`
    /// or without the key.
    fn inactive_file_bytes(&self, dir: &OwnedFd, buf: &mut [u8]) -> Option<u64> {
        let key = inactive_file_key(self.version);
        read_parse(dir, STAT_FILE, buf, |b| parse_stat_value(b, key)).flatten()
    }

    /// Every level of the path with a limit below MemTotal and a readable
    /// usage, leaf first: the inode of its directory (what identifies it
    /// in every namespace that sees the same hierarchy) and its memory
    /// ([`Available`]: limit, usage, inactive file cache, available). A
    /// shared pool counts a lease against each of these its build lies
    /// in. `buf`: [`TICK_BUF_LEN`].
    pub fn limits(&self, mem_total_kib: u64, buf: &mut [u8]) -> heapless::Vec<Level, MAX_DEPTH> {
        let total = mem_total_kib.saturating_mul(1024);
        let (limit_file, usage_file, _) = self.files();
        let mut out = heapless::Vec::new();
        let mut top_own = None;
        for (depth, dir) in self.dirs.iter().enumerate() {
            let limit = read_parse(dir, limit_file, buf, parse_limit);
            if depth + 1 == self.dirs.len() {
                top_own = limit;
            }
            let Some(limit) = limit.and_then(|l| l.effective(total)) else {
                continue;
            };
            let Some(usage) = read_parse(dir, usage_file, buf, parse_bytes) else {
                continue;
            };
            let Ok(st) = rustix::fs::fstat(dir) else {
                continue;
            };
            // `dirs` holds at most MAX_DEPTH: this always fits.
            let _ = out.push(Level {
                ino: st.st_ino,
                mem: self.level(dir, depth, limit, usage, buf),
            });
        }
        if let Some(mem) = self.unseen(top_own, total, buf) {
            let _ = out.push(Level {
                ino: unseen_id(mem.limit_bytes),
                mem,
            });
        }
        out
    }

    /// The swap the processes of this cgroup may use, bytes: the smallest
    /// allowance over the path. v2: `memory.swap.max` of every level
    /// (`max` allows any; a level without the file, such as the root,
    /// allows any). v1: at each level whose memory limit is effective,
    /// `memory.memsw.limit_in_bytes` (memory and swap together) less that
    /// memory limit: a memsw limit equal to the memory limit (`docker run
    /// -m 1g --memory-swap 1g`) allows no swap at all. A memsw limit not
    /// below MemTotal + SwapTotal (`mem_total_kib`, `swap_total_kib`)
    /// cannot bind: no limit, as every v1 "unlimited" sentinel is. `None`
    /// when no level limits swap, or the files are absent (v1 without
    /// swap accounting: `swapaccount=0`, or no `CONFIG_MEMCG_SWAP`).
    /// Read when planning, not per tick. `buf`: [`TICK_BUF_LEN`].
    ///
    /// Source: `Documentation/admin-guide/cgroup-v2.rst` "memory.swap.max",
    /// `Documentation/admin-guide/cgroup-v1/memory.rst` 2.4 "swap extension".
    pub fn swap_allowance_bytes(
        &self,
        mem_total_kib: u64,
        swap_total_kib: u64,
        buf: &mut [u8],
    ) -> Option<u64> {
        let limits = match self.version {
            Version::V2 => heapless::Vec::new(),
            Version::V1 => self.read_limits(buf),
        };
        let total = mem_total_kib.saturating_mul(1024);
        let memsw_total = mem_total_kib
            .saturating_add(swap_total_kib)
            .saturating_mul(1024);
        let top = limits.last().copied().flatten();
        let above = self.unseen_and_swap(top, total, memsw_total, buf).1;
        self.swap_allowance_with(&limits, mem_total_kib, swap_total_kib, above, buf)
    }

    /// [`MemCgroup::swap_allowance_bytes`] with each level's memory limit
    /// already read (`limits`, leaf first: needed on v1 only), and what a
    /// v1 limit above the mount allows (`above`, [`MemCgroup::unseen_and_swap`]).
    fn swap_allowance_with(
        &self,
        limits: &[Option<Limit>],
        mem_total_kib: u64,
        swap_total_kib: u64,
        above: Option<u64>,
        buf: &mut [u8],
    ) -> Option<u64> {
        let total = mem_total_kib.saturating_mul(1024);
        let memsw_total = mem_total_kib
            .saturating_add(swap_total_kib)
            .saturating_mul(1024);
        self.dirs
            .iter()
            .enumerate()
            .filter_map(|(depth, d)| match self.version {
                Version::V2 => {
                    match read_parse(d, swap_limit_file(self.version), buf, parse_limit)? {
                        Limit::Bytes(n) => Some(n),
                        Limit::Max => None,
                    }
                }
                Version::V1 => {
                    let mem = limits.get(depth).copied().flatten()?.effective(total)?;
                    let memsw = read_parse(d, swap_limit_file(self.version), buf, parse_limit)?
                        .effective(memsw_total)?;
                    Some(memsw.saturating_sub(mem))
                }
            })
            .chain(above)
            .min()
    }

    /// Memory charged to this process's cgroup now, bytes (v2
    /// `memory.current`, v1 `memory.usage_in_bytes`), from the deepest
    /// level where it is readable: a v2 leaf without the memory controller
    /// is charged to the nearest ancestor that has it. `None` when nowhere.
    pub fn usage_bytes(&self, buf: &mut [u8]) -> Option<u64> {
        let (_, usage_file, _) = self.files();
        self.dirs
            .iter()
            .find_map(|d| read_parse(d, usage_file, buf, parse_bytes))
    }

    /// OOM kills in this cgroup (and, on v2, its descendants) since it was
    /// created: `oom_kill` of v2 `memory.events` or v1 `memory.oom_control`
    /// (since Linux 4.13), from the deepest level where the file is
    /// readable. `None` when absent or unreadable: fall back to
    /// `/proc/vmstat`. `buf`: [`TICK_BUF_LEN`].
    pub fn oom_kills(&self, buf: &mut [u8]) -> Option<u64> {
        let (_, _, events) = self.files();
        self.dirs.iter().find_map(|d| {
            let b = read_at(d.as_fd(), events, buf).ok()?;
            parse_oom_kill(b).ok().flatten()
        })
    }

    /// OOM kills at level `depth` of the path alone (0 = the leaf), read
    /// by name: v2 `memory.events` counts that cgroup and its descendants,
    /// v1 `memory.oom_control` only the processes in that very cgroup (v1
    /// does not pass the event up). `None` when the level does not exist
    /// or the file is absent or unreadable. `buf`: [`TICK_BUF_LEN`].
    pub fn oom_kills_at(&self, depth: usize, buf: &mut [u8]) -> Option<u64> {
        let (_, _, events) = self.files();
        // Every tick, by name (the kept descriptors' budget has no room
        // for it): openat, one read (the file is generated whole), close.
        let b = read_once_at(self.dirs.get(depth)?.as_fd(), events, buf).ok()?;
        parse_oom_kill(b).ok().flatten()
    }
}

/// The tighter of `best` and `a`: the smaller available memory (the
/// one found first, the deeper level, on a tie).
fn tighter(best: Option<Available>, a: Available) -> Option<Available> {
    match best {
        Some(b) if b.available_bytes <= a.available_bytes => Some(b),
        _ => Some(a),
    }
}

/// The CPU cgroup of this process, resolved once; see [`open_cpu`].
#[derive(Debug)]
pub struct CpuCgroup {
    /// Hierarchy the cpu controller is on.
    pub version: Version,
    /// Leaf first, then each ancestor up to and including the mount point.
    dirs: Dirs,
}

/// Resolves the CPU-bandwidth cgroup of the calling process under `root`;
/// same steps and buffer as [`open_memory`], for the `cpu` controller (v1
/// mounts list it as `cpu,cpuacct`). For v2 the controller must be enabled:
/// `cpu.max` exists on the path or `cgroup.controllers` lists `cpu`.
///
/// # Errors
/// As [`open_memory`].
pub fn open_cpu(root: &Root, buf: &mut [u8]) -> Resolution<CpuCgroup> {
    let Some((version, dirs, _)) = open_controller(root, buf, b"cpu")? else {
        return Ok(None);
    };
    cpu_enabled(version, dirs, buf)
}

/// [`open_cpu`] from texts already read; see [`open_memory_in`].
///
/// # Errors
/// As [`open_memory`].
pub fn open_cpu_in(
    root: &Root,
    cgroup_text: Result<&[u8], ReadError>,
    mountinfo_text: Result<&[u8], ReadError>,
    buf: &mut [u8],
) -> Resolution<CpuCgroup> {
    let Some((version, dirs, _)) = open_controller_in(root, cgroup_text, mountinfo_text, b"cpu")?
    else {
        return Ok(None);
    };
    cpu_enabled(version, dirs, buf)
}

/// The CPU cgroup on `dirs`, when its controller is usable there.
fn cpu_enabled(version: Version, dirs: Dirs, buf: &mut [u8]) -> Resolution<CpuCgroup> {
    if version == Version::V2 && !v2_enabled(&dirs, buf, b"cpu", &["cpu.max"]) {
        return Ok(None);
    }
    Ok(Some(CpuCgroup { version, dirs }))
}

impl CpuCgroup {
    /// Number of directories held, leaf to mount point (≥ 1).
    pub fn levels(&self) -> usize {
        self.dirs.len()
    }

    /// The tightest CPU quota on the path, in thousandths of a CPU rounded
    /// up (1500 = 1.5 CPUs): v2 `cpu.max`, v1 `cpu.cfs_quota_us` /
    /// `cpu.cfs_period_us`, minimum over the leaf and its ancestors. `None`
    /// when every level is unlimited (`max`, `-1`) or unreadable — never 0
    /// CPUs by mistake. `buf`: [`TICK_BUF_LEN`].
    pub fn quota_millicpus(&self, buf: &mut [u8]) -> Option<u64> {
        self.dirs
            .iter()
            .filter_map(|d| match self.version {
                Version::V2 => read_parse(d, "cpu.max", buf, parse_cpu_max)?.millicpus(),
                Version::V1 => {
                    let quota = read_parse(d, "cpu.cfs_quota_us", buf, parse_cfs_quota)??;
                    let period = read_parse(d, "cpu.cfs_period_us", buf, parse_bytes)?;
                    millicpus(quota, period)
                }
            })
            .min()
    }

    /// Number of CPUs in v2 `cpuset.cpus.effective` (since Linux 5.0 on
    /// v2), from the deepest level where it is readable. `None` on v1 (the
    /// cpuset controller has its own hierarchy there), when absent, or when
    /// the list is empty. `buf`: [`TICK_BUF_LEN`].
    pub fn cpuset_count(&self, buf: &mut [u8]) -> Option<u32> {
        if self.version == Version::V1 {
            return None;
        }
        self.dirs
            .iter()
            .find_map(|d| read_parse(d, "cpuset.cpus.effective", buf, parse_cpu_list_count))
            .filter(|&n| n > 0)
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of `kernel::cgroup` (src/kernel/cgroup.rs).

    extern crate std;
    use super::*;
    use crate::kernel::parse::{ParseErrorKind, colon_value, parse_u64};
    use std::vec;

    #[test]
    fn errors_read_as_one_line_not_debug_text() {
        use std::string::ToString;
        let e = CgroupError::Read("proc/self/cgroup", ReadError::Open(rustix::io::Errno::LOOP));
        assert_eq!(
            e.to_string(),
            "proc/self/cgroup: cannot open: symlink loop (ELOOP)"
        );
        let e = CgroupError::Read("memory.max", ReadError::Truncated { capacity: 64 });
        assert_eq!(e.to_string(), "memory.max: larger than its buffer");
    }

    const MIB: u64 = 1024 * 1024;

    macro_rules! fixture {
        ($p:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $p))
        };
    }
    macro_rules! root {
        ($p:literal) => {
            Root::open(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $p)).unwrap()
        };
    }

    fn mem_total_kib(meminfo: &[u8]) -> u64 {
        parse_u64(colon_value(meminfo, b"MemTotal").unwrap()).unwrap()
    }

    fn bigbuf() -> std::vec::Vec<u8> {
        vec![0u8; OPEN_BUF_LEN]
    }

    // ---- path_for ----

    #[test]
    fn path_for_v1_line_wins_wherever_it_is() {
        let b = b"0::/init.scope\n2:cpu,cpuacct:/a\n5:memory:/m\n";
        assert_eq!(path_for(b, b"memory"), Some((Version::V1, &b"/m"[..])));
        assert_eq!(path_for(b, b"cpu"), Some((Version::V1, &b"/a"[..])));
        assert_eq!(path_for(b, b"cpuacct"), Some((Version::V1, &b"/a"[..])));
        // Not a v1 controller here: falls to the unified line.
        assert_eq!(
            path_for(b, b"pids"),
            Some((Version::V2, &b"/init.scope"[..]))
        );
    }

    #[test]
    fn path_for_matches_whole_controller_names() {
        let b = b"3:cpuset:/s\n1:name=systemd:/x\n";
        assert_eq!(path_for(b, b"cpu"), None);
        assert_eq!(path_for(b, b"systemd"), None);
        assert_eq!(path_for(b, b"cpuset"), Some((Version::V1, &b"/s"[..])));
        // Only `0::` is the unified line.
        assert_eq!(path_for(b"1::/x\n", b"memory"), None);
    }

    #[test]
    fn path_for_keeps_colons_in_path_and_skips_garbage() {
        let b = b"garbage\n:memory:/x\n9:memory:\n0::/a:b\n";
        assert_eq!(path_for(b, b"memory"), Some((Version::V2, &b"/a:b"[..])));
        assert_eq!(path_for(b"", b"memory"), None);
    }

    // ---- small parsers ----

    #[test]
    fn parse_limit_forms() {
        assert_eq!(parse_limit(b"max\n"), Ok(Limit::Max));
        assert_eq!(parse_limit(b"2147483648\n"), Ok(Limit::Bytes(2147483648)));
        assert_eq!(
            parse_limit(b"18446744073709551615"),
            Ok(Limit::Bytes(u64::MAX))
        );
        assert_eq!(
            parse_limit(b"18446744073709551616").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_limit(b"-1").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_limit(b"maxx").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_limit(b"1 2").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_limit(b"1\n2\n").unwrap_err().kind,
            ParseErrorKind::Malformed
        );
        assert_eq!(
            parse_limit(b"").unwrap_err().kind,
            ParseErrorKind::Missing("value")
        );
        assert_eq!(
            parse_limit(b" \n").unwrap_err().kind,
            ParseErrorKind::Missing("value")
        );
    }

    #[test]
    fn limit_effective_compares_with_memtotal() {
        let total = 4 * 1024 * MIB;
        assert_eq!(Limit::Max.effective(total), None);
        assert_eq!(Limit::Bytes(total).effective(total), None);
        assert_eq!(Limit::Bytes(total - 1).effective(total), Some(total - 1));
        assert_eq!(Limit::Bytes(0).effective(total), Some(0));
    }

    #[test]
    fn parse_cpu_max_forms() {
        assert_eq!(
            parse_cpu_max(b"max 100000\n"),
            Ok(CpuMax {
                quota_us: None,
                period_us: 100000
            })
        );
        let c = parse_cpu_max(b"150000 100000").unwrap();
        assert_eq!(c.millicpus(), Some(1500));
        assert_eq!(parse_cpu_max(b"max 100000").unwrap().millicpus(), None);
        // Rounded up, not down.
        assert_eq!(
            parse_cpu_max(b"50001 100000").unwrap().millicpus(),
            Some(501)
        );
        // Overflowing product saturates instead of panicking.
        assert!(
            parse_cpu_max(b"18446744073709551615 1")
                .unwrap()
                .millicpus()
                .is_some()
        );
        assert_eq!(
            parse_cpu_max(b"max").unwrap_err().kind,
            ParseErrorKind::Missing("period")
        );
        assert_eq!(
            parse_cpu_max(b"max 0").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_cpu_max(b"1.5 100000").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_cpu_max(b"1 2 3").unwrap_err().kind,
            ParseErrorKind::Malformed
        );
        assert_eq!(
            parse_cpu_max(b"").unwrap_err().kind,
            ParseErrorKind::Missing("value")
        );
    }

    #[test]
    fn parse_cfs_quota_forms() {
        assert_eq!(parse_cfs_quota(b"-1\n"), Ok(None));
        assert_eq!(parse_cfs_quota(b"50000\n"), Ok(Some(50000)));
        assert_eq!(
            parse_cfs_quota(b"-").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_cfs_quota(b"").unwrap_err().kind,
            ParseErrorKind::Missing("value")
        );
    }

    #[test]
    fn parse_cpu_list_count_forms() {
        assert_eq!(parse_cpu_list_count(b"0-3\n"), Ok(4));
        assert_eq!(parse_cpu_list_count(b"0-3,5,7-8"), Ok(7));
        assert_eq!(parse_cpu_list_count(b"0"), Ok(1));
        assert_eq!(parse_cpu_list_count(b"\n"), Ok(0));
        assert_eq!(
            parse_cpu_list_count(b"3-1").unwrap_err().kind,
            ParseErrorKind::Malformed
        );
        assert_eq!(
            parse_cpu_list_count(b"0,,1").unwrap_err().kind,
            ParseErrorKind::Malformed
        );
        assert_eq!(
            parse_cpu_list_count(b"0-").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_cpu_list_count(b"a").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_cpu_list_count(b"0-18446744073709551615,1"),
            Ok(u32::MAX)
        );
    }

    #[test]
    fn parse_oom_kill_forms() {
        assert_eq!(
            parse_oom_kill(b"oom_kill_disable 0\nunder_oom 0\n"),
            Ok(None)
        );
        assert_eq!(
            parse_oom_kill(b"oom_kill_disable 1\noom_kill 4\n"),
            Ok(Some(4))
        );
        assert_eq!(
            parse_oom_kill(b"oom_kill x\n").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(parse_oom_kill(b""), Ok(None));
    }

    #[test]
    fn strip_dir_prefix_boundaries() {
        assert_eq!(strip_dir_prefix(b"/a/b", b"/"), Some(&b"/a/b"[..]));
        assert_eq!(strip_dir_prefix(b"/a/b", b"/a"), Some(&b"/b"[..]));
        assert_eq!(strip_dir_prefix(b"/a", b"/a"), Some(&b""[..]));
        assert_eq!(strip_dir_prefix(b"/ab", b"/a"), None);
        assert_eq!(strip_dir_prefix(b"/", b"/"), Some(&b"/"[..]));
    }

    // ---- fixture 04 ----

    const F04_MEMINFO: &[u8] = fixture!("04-cgroupv1-unlimited-sentinels/proc/meminfo");

    fn f04_unlimited(limit_file: &[u8]) {
        let total = mem_total_kib(F04_MEMINFO) * 1024;
        assert!(matches!(parse_limit(limit_file), Ok(Limit::Bytes(_))));
        assert_eq!(parse_limit(limit_file).unwrap().effective(total), None);
        // ... but the same machine with a real 1 GiB limit would be limited.
        assert_eq!(Limit::Bytes(1024 * MIB).effective(total), Some(1024 * MIB));
    }

    #[test]
    fn fixture_04_cgroupv1_unlimited_sentinels() {
        let root = root!("04-cgroupv1-unlimited-sentinels");
        let mut buf = bigbuf();
        let mem = open_memory(&root, &mut buf).unwrap().unwrap();
        assert_eq!(mem.version, Version::V1);
        // mountinfo root == cgroup path: the mount point itself, nothing above.
        assert_eq!(mem.levels(), 1);
        let total = mem_total_kib(F04_MEMINFO);
        assert_eq!(total * 10 / 1024, 39408); // 3940.8 MiB
        assert_eq!(mem.available(total, &mut buf), None);
        let usage = mem.usage_bytes(&mut buf).unwrap();
        assert_eq!(usage, 29466624);
        assert_eq!((usage * 10 + MIB / 2) / MIB, 281); // 28.1 MiB
        assert_eq!(mem.oom_kills(&mut buf), Some(0));
        f04_unlimited(fixture!(
            "04-cgroupv1-unlimited-sentinels/sys/fs/cgroup/memory/memory.limit_in_bytes"
        ));
        f04_unlimited(fixture!(
            "04-cgroupv1-unlimited-sentinels/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"
        ));

        let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
        assert_eq!(cpu.version, Version::V1);
        assert_eq!(cpu.levels(), 1);
        assert_eq!(cpu.quota_millicpus(&mut buf), None);
        assert_eq!(cpu.cpuset_count(&mut buf), None);
    }

    #[test]
    fn fixture_04_variant_x86_64_or_arm64_4k_pages() {
        let v = fixture!(
            "04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.x86_64-or-arm64-4k-pages"
        );
        assert_eq!(parse_limit(v), Ok(Limit::Bytes(9223372036854771712)));
        f04_unlimited(v);
    }

    #[test]
    fn fixture_04_variant_arm64_16k_pages_rpi5() {
        let v = fixture!(
            "04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.arm64-16k-pages-rpi5"
        );
        assert_eq!(parse_limit(v), Ok(Limit::Bytes(9223372036854759424)));
        f04_unlimited(v);
    }

    #[test]
    fn fixture_04_variant_arm64_64k_pages() {
        let v = fixture!(
            "04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.arm64-64k-pages"
        );
        assert_eq!(parse_limit(v), Ok(Limit::Bytes(9223372036854710272)));
        f04_unlimited(v);
    }

    #[test]
    fn fixture_04_variant_32bit_armhf() {
        let v =
            fixture!("04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.32bit-armhf");
        assert_eq!(parse_limit(v), Ok(Limit::Bytes(8796093018112)));
        f04_unlimited(v);
    }

    #[test]
    fn fixture_04_variant_pre_3_19_res_counter() {
        let v = fixture!(
            "04-cgroupv1-unlimited-sentinels/variants/memory.limit_in_bytes.pre-3.19-res_counter"
        );
        assert_eq!(parse_limit(v), Ok(Limit::Bytes(u64::MAX)));
        f04_unlimited(v);
    }

    // ---- fixture 06 ----

    #[test]
    fn fixture_06_cgroupv2_container_cpu_max_unlimited() {
        let root = root!("06-cgroupv2-container-cpu-max-unlimited");
        let mut buf = bigbuf();
        let total = mem_total_kib(fixture!(
            "06-cgroupv2-container-cpu-max-unlimited/proc/meminfo"
        ));
        let mem = open_memory(&root, &mut buf).unwrap().unwrap();
        assert_eq!(mem.version, Version::V2);
        assert_eq!(mem.levels(), 1); // `0::/` joined onto the mount
        let r = mem.available(total, &mut buf).unwrap();
        // No memory.stat in the case: the cache counts as used.
        assert_eq!(
            r,
            Available {
                limit_bytes: 2048 * MIB,
                usage_bytes: 2044 * MIB,
                inactive_file_bytes: None,
                available_bytes: 4 * MIB,
                depth: 0,
            }
        );
        // memory.swap.max 2 GiB (docker's default --memory-swap of twice -m).
        assert_eq!(
            mem.swap_allowance_bytes(total, 0, &mut buf),
            Some(2048 * MIB)
        );
        assert_eq!(mem.usage_bytes(&mut buf), Some(2044 * MIB));
        assert_eq!(mem.oom_kills(&mut buf), Some(3)); // not the host's 7
        // Swap limit file parses with the same parser.
        assert_eq!(
            parse_limit(fixture!(
                "06-cgroupv2-container-cpu-max-unlimited/sys/fs/cgroup/memory.swap.max"
            )),
            Ok(Limit::Bytes(2048 * MIB))
        );
        assert_eq!(
            parse_limit(fixture!(
                "06-cgroupv2-container-cpu-max-unlimited/sys/fs/cgroup/memory.high"
            )),
            Ok(Limit::Max)
        );

        let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
        assert_eq!(cpu.version, Version::V2);
        assert_eq!(cpu.quota_millicpus(&mut buf), None); // never 0 CPUs
        assert_eq!(cpu.cpuset_count(&mut buf), Some(4));
    }

    // ---- fixture 07 ----

    #[test]
    fn fixture_07_a_ubuntu2004_hybrid() {
        let root = root!("07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid");
        let mut buf = bigbuf();
        let self_cgroup =
            fixture!("07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid/proc/self/cgroup");
        assert_eq!(
            path_for(self_cgroup, b"memory"),
            Some((
                Version::V1,
                &b"/user.slice/user-1000.slice/session-3.scope"[..]
            ))
        );
        let total = mem_total_kib(fixture!(
            "07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid/proc/meminfo"
        ));
        let mem = open_memory(&root, &mut buf).unwrap().unwrap();
        // Not the memory-less unified tree.
        assert_eq!(mem.version, Version::V1);
        assert_eq!(mem.levels(), 4); // session-3.scope, user-1000.slice, user.slice, mount
        let r = mem.available(total, &mut buf).unwrap();
        // The limiting level (user.slice) has no memory.stat: limit − usage.
        assert_eq!(
            r,
            Available {
                limit_bytes: 3072 * MIB,
                usage_bytes: 1040 * MIB,
                inactive_file_bytes: None,
                available_bytes: 2032 * MIB,
                depth: 2,
            }
        );
        // No memsw file at the limiting level: swap not limited.
        assert_eq!(mem.swap_allowance_bytes(total, 2097148, &mut buf), None);
        assert_eq!(mem.usage_bytes(&mut buf), Some(700 * MIB)); // the leaf's
        assert_eq!(mem.oom_kills(&mut buf), Some(1));

        let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
        assert_eq!(cpu.version, Version::V1);
        assert_eq!(cpu.levels(), 2); // user.slice and the mount
        assert_eq!(cpu.quota_millicpus(&mut buf), None);
    }

    #[test]
    fn fixture_07_b_v2_plus_one_v1_controller() {
        let root = root!("07-cgroup-hybrid-memory-on-v1-line/b-v2-plus-one-v1-controller");
        let mut buf = bigbuf();
        let mem = open_memory(&root, &mut buf).unwrap().unwrap();
        assert_eq!(mem.version, Version::V2);
        // The case gives no meminfo: any host larger than the 1 GiB limit.
        let r = mem.available(4 * 1024 * 1024, &mut buf).unwrap();
        assert_eq!(r.limit_bytes, 1024 * MIB);
        assert_eq!(r.usage_bytes, 300 * MIB);
        assert_eq!(r.available_bytes, 724 * MIB);
        assert_eq!(r.depth, 0);
        // A host with less RAM than the limit: the limit does not bind.
        assert_eq!(mem.available(512 * 1024, &mut buf), None);
        assert_eq!(mem.oom_kills(&mut buf), Some(0));

        let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
        assert_eq!(cpu.version, Version::V2);
        assert_eq!(cpu.quota_millicpus(&mut buf), Some(1500));
    }

    // ---- fixture 08 ----

    #[test]
    fn fixture_08_rpi_memory_cgroup_disabled() {
        let root = root!("08-rpi-memory-cgroup-disabled");
        let mut buf = bigbuf();
        // The v2 line exists, but no memory controller: unknown, not 0.
        assert!(
            path_for(
                fixture!("08-rpi-memory-cgroup-disabled/proc/self/cgroup"),
                b"memory"
            )
            .is_some()
        );
        assert!(open_memory(&root, &mut buf).unwrap().is_none());

        let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
        assert_eq!(cpu.version, Version::V2);
        assert_eq!(cpu.levels(), 4);
        assert_eq!(cpu.quota_millicpus(&mut buf), None);
        assert_eq!(cpu.cpuset_count(&mut buf), None);
    }

    // ---- synthetic trees ----

    fn tree(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(std::format!(
            "headroom-cgroup-{}-{}",
            name,
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for (p, c) in files {
            let f = dir.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, c).unwrap();
        }
        dir
    }

    #[test]
    fn tightest_level_and_v1_cpu_quota_on_ancestor() {
        let dir = tree(
            "tight",
            &[
                (
                    "proc/self/cgroup",
                    "4:memory:/a/b\n3:cpu,cpuacct:/a/b\n0::/\n",
                ),
                (
                    "proc/self/mountinfo",
                    "1 0 8:1 / / rw - ext4 /dev/sda rw\n\
                     2 1 0:2 / /cg/m\\040x rw - cgroup cgroup rw,memory\n\
                     3 1 0:3 / /cg/cpu rw - cgroup cgroup rw,cpu,cpuacct\n",
                ),
                ("cg/m x/a/b/memory.limit_in_bytes", "1000\n"),
                ("cg/m x/a/b/memory.usage_in_bytes", "990\n"),
                ("cg/m x/a/memory.limit_in_bytes", "5000\n"),
                ("cg/m x/a/memory.usage_in_bytes", "garbage\n"),
                ("cg/m x/memory.limit_in_bytes", "9223372036854771712\n"),
                ("cg/m x/memory.usage_in_bytes", "999999\n"),
                ("cg/cpu/a/b/cpu.cfs_quota_us", "-1\n"),
                ("cg/cpu/a/b/cpu.cfs_period_us", "100000\n"),
                ("cg/cpu/a/cpu.cfs_quota_us", "250000\n"),
                ("cg/cpu/a/cpu.cfs_period_us", "100000\n"),
                ("cg/cpu/cpu.cfs_quota_us", "300000\n"),
                ("cg/cpu/cpu.cfs_period_us", "100000\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut buf = bigbuf();
        let mem = open_memory(&root, &mut buf).unwrap().unwrap();
        assert_eq!(mem.levels(), 3);
        let r = mem.available(1_000_000, &mut buf).unwrap();
        assert_eq!((r.available_bytes, r.depth), (10, 0));
        // The limiting levels, each by its directory's inode: the leaf (10
        // left); `a` has a limit but no readable usage; the mount point's
        // limit is the v1 "unlimited" sentinel.
        use std::os::unix::fs::MetadataExt;
        let leaf_ino = std::fs::metadata(dir.join("cg/m x/a/b")).unwrap().ino();
        let levels = mem.limits(1_000_000, &mut buf);
        assert_eq!(
            levels.as_slice(),
            [Level {
                ino: leaf_ino,
                mem: Available {
                    limit_bytes: 1000,
                    usage_bytes: 990,
                    inactive_file_bytes: None,
                    available_bytes: 10,
                    depth: 0,
                }
            }]
        );
        // No oom_control anywhere.
        assert_eq!(mem.oom_kills(&mut buf), None);
        let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
        assert_eq!(cpu.quota_millicpus(&mut buf), Some(2500));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_mount_and_outside_path_are_unknown() {
        // No cgroup mount at all while /proc/self/cgroup names one: the
        // limit is unknown, not absent.
        let dir = tree(
            "nomount",
            &[
                ("proc/self/cgroup", "0::/x\n"),
                ("proc/self/mountinfo", "1 0 8:1 / / rw - ext4 /dev/sda rw\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut buf = bigbuf();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::NotMounted
        );
        std::fs::remove_dir_all(&dir).unwrap();

        // Cgroup outside the namespace's view: unknown, nothing escaped.
        let dir = tree(
            "outside",
            &[
                ("proc/self/cgroup", "0::/../../x\n"),
                (
                    "proc/self/mountinfo",
                    "1 0 0:1 / /cg rw - cgroup2 cgroup2 rw\n",
                ),
                ("cg/memory.max", "max\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::Outside
        );
        std::fs::remove_dir_all(&dir).unwrap();

        // Mount's root is not an ancestor of the path: unknown.
        let dir = tree(
            "otherroot",
            &[
                ("proc/self/cgroup", "5:memory:/a\n"),
                (
                    "proc/self/mountinfo",
                    "1 0 0:1 /b /cg rw - cgroup cgroup rw,memory\n",
                ),
                ("cg/memory.limit_in_bytes", "1\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::Outside
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_directory_no_self_cgroup_and_bad_mountinfo() {
        let mut buf = bigbuf();
        // The directory the files name does not exist: an error.
        let dir = tree(
            "gone",
            &[
                ("proc/self/cgroup", "0::/missing\n"),
                (
                    "proc/self/mountinfo",
                    "1 0 0:1 / /cg rw - cgroup2 cgroup2 rw\n",
                ),
                ("cg/cgroup.controllers", "memory\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::Read("cgroup directory", ReadError::Open(Errno::NOENT))
        );
        std::fs::remove_dir_all(&dir).unwrap();

        // No /proc/self/cgroup (kernel without cgroups): Ok(None).
        let dir = tree("nocg", &[("proc/x", "")]);
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        assert!(open_memory(&root, &mut buf).unwrap().is_none());
        assert!(open_cpu(&root, &mut buf).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();

        // Malformed mountinfo: a parse error with its line.
        let dir = tree(
            "badmi",
            &[
                ("proc/self/cgroup", "0::/\n"),
                (
                    "proc/self/mountinfo",
                    "1 0 8:1 / / rw - ext4 /dev/sda rw\njunk\n",
                ),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::Parse(
                mountinfo::PATH,
                ParseError {
                    kind: ParseErrorKind::Malformed,
                    line: 2
                }
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn too_deep_is_an_error() {
        let mut deep = std::string::String::new();
        for _ in 0..MAX_DEPTH {
            deep.push_str("/d");
        }
        let cg = std::format!("0::{deep}\n");
        let leaf = std::format!("cg{deep}/memory.max");
        let dir = tree(
            "deep",
            &[
                ("proc/self/cgroup", cg.as_str()),
                (
                    "proc/self/mountinfo",
                    "1 0 0:1 / /cg rw - cgroup2 cgroup2 rw\n",
                ),
                (leaf.as_str(), "max\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut buf = bigbuf();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::TooDeep
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    // ---- memory.stat and available memory ----

    #[test]
    fn parse_stat_value_anchors_whole_keys_at_line_start() {
        let v1 = b"inactive_file 5\ntotal_inactive_file 7\n";
        let v2 = b"total_inactive_file 7\ninactive_file_x 9\ninactive_file 5\n";
        assert_eq!(
            parse_stat_value(v1, inactive_file_key(Version::V1)),
            Ok(Some(7))
        );
        assert_eq!(
            parse_stat_value(v1, inactive_file_key(Version::V2)),
            Ok(Some(5))
        );
        // Near misses: a key inside another, a longer key, a shorter one.
        assert_eq!(parse_stat_value(v2, b"inactive_file"), Ok(Some(5)));
        assert_eq!(parse_stat_value(v2, b"inactive_fil"), Ok(None));
        assert_eq!(parse_stat_value(v2, b"active_file"), Ok(None));
        assert_eq!(
            parse_stat_value(b"xinactive_file 3\n", b"inactive_file"),
            Ok(None)
        );
        // Not at the line start, or not separated by one space: not the key.
        assert_eq!(
            parse_stat_value(b" inactive_file 3\n", b"inactive_file"),
            Ok(None)
        );
        assert_eq!(
            parse_stat_value(b"inactive_file\t3\n", b"inactive_file"),
            Ok(None)
        );
        assert_eq!(
            parse_stat_value(b"inactive_file3\n", b"inactive_file"),
            Ok(None)
        );
        // The first line with the key counts; no final newline; CRLF.
        assert_eq!(
            parse_stat_value(b"inactive_file 1\ninactive_file 2", b"inactive_file"),
            Ok(Some(1))
        );
        assert_eq!(
            parse_stat_value(b"inactive_file 4\r\n", b"inactive_file"),
            Ok(Some(4))
        );
        assert_eq!(parse_stat_value(b"", b"inactive_file"), Ok(None));
        let bad = |b: &[u8]| parse_stat_value(b, b"inactive_file").unwrap_err();
        assert_eq!(
            bad(b"anon 1\ninactive_file -1\n"),
            ParseError {
                kind: ParseErrorKind::BadNumber,
                line: 2
            }
        );
        assert_eq!(
            bad(b"inactive_file 18446744073709551616\n").kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(bad(b"inactive_file \n").kind, ParseErrorKind::BadNumber);
        assert_eq!(bad(b"inactive_file 1 2\n").kind, ParseErrorKind::BadNumber);
    }

    #[test]
    fn available_is_limit_less_what_cannot_be_reclaimed() {
        assert_eq!(available_bytes(1024, 719, Some(700)), 1005);
        assert_eq!(available_bytes(1024, 719, None), 305);
        // Over the limit with nothing reclaimable: 0, never a wrap.
        assert_eq!(available_bytes(1024, 2000, Some(0)), 0);
        // Counters read apart: more inactive cache than usage gives the limit.
        assert_eq!(available_bytes(1024, 700, Some(719)), 1024);
        assert_eq!(available_bytes(0, u64::MAX, Some(u64::MAX)), 0);
    }

    /// The largest v2 memory.stat a 6.x kernel prints (~75 keys of
    /// `memory_stats[]` and `memcg_vm_event_stat[]`, 28 bytes the longest),
    /// every value 13 digits (terabytes): within [`TICK_BUF_LEN`].
    #[test]
    fn tick_buf_len_holds_a_v2_memory_stat_of_large_values() {
        let mut text = std::string::String::new();
        for i in 0..75 {
            text.push_str(&std::format!(
                "workingset_activate_anon{i:04} 1234567890123\n"
            ));
        }
        assert!(text.len() < TICK_BUF_LEN, "{}", text.len());
        let v2 = fixture!(
            "46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0/sys/fs/cgroup/memory.stat"
        );
        let v1 = fixture!(
            "46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal/sys/fs/cgroup/memory/memory.stat"
        );
        assert!(v1.len() < TICK_BUF_LEN && v2.len() < TICK_BUF_LEN);
    }

    // ---- fixture 46 ----

    const F46_LIMIT: u64 = 1073741824;
    const F46_INACTIVE: u64 = 734040064;

    #[test]
    fn fixture_46_a_v1_docker_memsw_equal() {
        let root = root!("46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal");
        let mut buf = bigbuf();
        let meminfo =
            fixture!("46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal/proc/meminfo");
        let total = mem_total_kib(meminfo);
        let mem = open_memory(&root, &mut buf).unwrap().unwrap();
        assert_eq!((mem.version, mem.levels()), (Version::V1, 1));
        let stat = fixture!(
            "46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal/sys/fs/cgroup/memory/memory.stat"
        );
        // v1 prints both: the hierarchical total is the one taken.
        assert_eq!(
            parse_stat_value(stat, b"total_inactive_file"),
            Ok(Some(F46_INACTIVE))
        );
        assert_eq!(
            parse_stat_value(stat, b"inactive_file"),
            Ok(Some(F46_INACTIVE))
        );
        let a = mem.available(total, &mut buf).unwrap();
        assert_eq!(
            a,
            Available {
                limit_bytes: F46_LIMIT,
                usage_bytes: 754147328,
                inactive_file_bytes: Some(F46_INACTIVE),
                available_bytes: 1053634560,
                depth: 0,
            }
        );
        assert_eq!(a.available_bytes >> 20, 1004); // not 304
        assert_eq!((F46_LIMIT - a.usage_bytes) >> 20, 304);
        // memsw = the limit: no swap at all.
        assert_eq!(mem.swap_allowance_bytes(total, 0, &mut buf), Some(0));
        let levels = mem.limits(total, &mut buf);
        assert_eq!(levels.len(), 1);
        assert_eq!(levels[0].mem, a);
    }

    #[test]
    fn fixture_46_b_v2_docker_swap_max_0() {
        let root = root!("46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0");
        let mut buf = bigbuf();
        let meminfo =
            fixture!("46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0/proc/meminfo");
        let total = mem_total_kib(meminfo);
        let mem = open_memory(&root, &mut buf).unwrap().unwrap();
        assert_eq!((mem.version, mem.levels()), (Version::V2, 1));
        let a = mem.available(total, &mut buf).unwrap();
        assert_eq!(
            (
                a.limit_bytes,
                a.usage_bytes,
                a.inactive_file_bytes,
                a.available_bytes
            ),
            (F46_LIMIT, 754249728, Some(F46_INACTIVE), 1053532160)
        );
        // memory.swap.max 0 although the host has 4 GiB of swap.
        assert_eq!(mem.swap_allowance_bytes(total, 4194300, &mut buf), Some(0));
        // v2 has no total_ keys: total_inactive_file is absent.
        let stat = fixture!(
            "46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0/sys/fs/cgroup/memory.stat"
        );
        assert_eq!(parse_stat_value(stat, b"total_inactive_file"), Ok(None));
    }

    /// The binding level is the one with the least available memory, not the
    /// least `limit − usage`: a leaf full of clean cache does not bind before
    /// a parent full of anonymous memory. A memory.stat missing, larger than
    /// the buffer or malformed counts the cache as used.
    #[test]
    fn the_tightest_level_by_available_memory_and_stat_fallbacks() {
        let dir = tree(
            "avail",
            &[
                ("proc/self/cgroup", "0::/p/leaf\n"),
                (
                    "proc/self/mountinfo",
                    "1 0 0:1 / /cg rw - cgroup2 cgroup2 rw\n",
                ),
                ("cg/p/leaf/memory.max", "1000\n"),
                ("cg/p/leaf/memory.current", "900\n"),
                ("cg/p/leaf/memory.stat", "anon 100\ninactive_file 800\n"),
                ("cg/p/leaf/memory.swap.max", "max\n"),
                ("cg/p/memory.max", "2000\n"),
                ("cg/p/memory.current", "1500\n"),
                ("cg/p/memory.stat", "anon 1500\ninactive_file 0\n"),
                ("cg/p/memory.swap.max", "300\n"),
                ("cg/memory.swap.max", "100\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut buf = vec![0u8; TICK_BUF_LEN];
        let mem = open_memory(&root, &mut bigbuf()).unwrap().unwrap();
        assert_eq!(mem.levels(), 3);
        let a = mem.available(1_000_000, &mut buf).unwrap();
        assert_eq!((a.available_bytes, a.depth), (500, 1));
        let levels = mem.limits(1_000_000, &mut buf);
        let avail: std::vec::Vec<_> = levels.iter().map(|l| l.mem.available_bytes).collect();
        assert_eq!(avail, [900, 500]);
        // v2: the least memory.swap.max of every level, limiting or not.
        assert_eq!(mem.swap_allowance_bytes(1_000_000, 0, &mut buf), Some(100));

        // The leaf's memory.stat without the key, then unparsable, then too
        // large for the buffer, then gone: limit − usage (100) binds.
        let leaf_stat = dir.join("cg/p/leaf/memory.stat");
        let big = "anon 1\n".repeat(TICK_BUF_LEN / 7 + 1) + "inactive_file 800\n";
        for text in ["anon 100\n", "inactive_file x\n", big.as_str()] {
            std::fs::write(&leaf_stat, text).unwrap();
            let a = mem.available(1_000_000, &mut buf).unwrap();
            assert_eq!(
                (a.available_bytes, a.inactive_file_bytes, a.depth),
                (100, None, 0),
                "{}",
                &text[..text.len().min(20)]
            );
        }
        std::fs::remove_file(&leaf_stat).unwrap();
        assert_eq!(
            mem.available(1_000_000, &mut buf).unwrap().available_bytes,
            100
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// v1: the allowance is memsw − the memory limit at each limiting level,
    /// the least of them; an "unlimited" memsw (not below MemTotal +
    /// SwapTotal) or no memsw file (no swap accounting) allows any.
    #[test]
    fn v1_swap_allowance_is_memsw_less_the_limit() {
        let dir = tree(
            "memsw",
            &[
                ("proc/self/cgroup", "4:memory:/a/b\n"),
                (
                    "proc/self/mountinfo",
                    "1 0 0:2 / /m rw - cgroup cgroup rw,memory\n",
                ),
                ("m/a/b/memory.limit_in_bytes", "1000\n"),
                ("m/a/b/memory.usage_in_bytes", "10\n"),
                ("m/a/b/memory.memsw.limit_in_bytes", "1600\n"),
                ("m/a/memory.limit_in_bytes", "3000\n"),
                ("m/a/memory.usage_in_bytes", "10\n"),
                ("m/a/memory.memsw.limit_in_bytes", "3500\n"),
                ("m/memory.limit_in_bytes", "9223372036854771712\n"),
                ("m/memory.memsw.limit_in_bytes", "9223372036854771712\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut buf = vec![0u8; TICK_BUF_LEN];
        let mem = open_memory(&root, &mut bigbuf()).unwrap().unwrap();
        // MemTotal 4 KiB (4096 bytes): both memory limits bind, allowing
        // 1600 − 1000 = 600 and 3500 − 3000 = 500; the mount's are sentinels.
        assert_eq!(mem.swap_allowance_bytes(4, 0, &mut buf), Some(500));
        // With 1 KiB of swap, MemTotal + SwapTotal = 5120 bytes: 3500 still binds.
        assert_eq!(mem.swap_allowance_bytes(4, 1, &mut buf), Some(500));
        // A memsw not below MemTotal + SwapTotal cannot bind.
        std::fs::write(dir.join("m/a/memory.memsw.limit_in_bytes"), "5120\n").unwrap();
        assert_eq!(mem.swap_allowance_bytes(4, 1, &mut buf), Some(600));
        // No swap accounting: no memsw files, no allowance known.
        for p in ["m/a/b", "m/a"] {
            std::fs::remove_file(dir.join(p).join("memory.memsw.limit_in_bytes")).unwrap();
        }
        assert_eq!(mem.swap_allowance_bytes(4, 1, &mut buf), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    // ---- named but not mounted: unknown, not "no limit" ----

    /// A container without /sys: /proc/self/cgroup names the cgroups,
    /// mountinfo has no cgroup filesystem, /proc/cgroups has them enabled.
    fn no_sys(name: &str, self_cgroup: &str) -> std::path::PathBuf {
        tree(
            name,
            &[
                ("proc/self/cgroup", self_cgroup),
                (
                    "proc/self/mountinfo",
                    "1 0 0:30 / / rw - overlay overlay rw\n2 1 0:31 / /proc rw - proc proc rw\n",
                ),
                (
                    "proc/cgroups",
                    "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t5\t1\nmemory\t4\t73\t1\n",
                ),
            ],
        )
    }

    #[test]
    fn v1_lines_without_a_cgroup_mount_are_unknown() {
        let dir = no_sys("nosys-v1", "4:memory:/\n1:cpu:/\n0::/\n");
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut buf = bigbuf();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::NotMounted
        );
        assert_eq!(
            open_cpu(&root, &mut buf).unwrap_err(),
            CgroupError::NotMounted
        );
        // A controller whose hierarchy holds the root cgroup alone (a host
        // that never made a cgroup of it) can limit nothing: no limit.
        std::fs::write(
            dir.join("proc/cgroups"),
            "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t1\t1\nmemory\t4\t73\t1\n",
        )
        .unwrap();
        assert!(open_cpu(&root, &mut buf).unwrap().is_none());
        assert!(open_memory(&root, &mut buf).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn v2_line_without_a_cgroup2_mount_is_unknown() {
        let dir = no_sys("nosys-v2", "0::/\n");
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut buf = bigbuf();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::NotMounted
        );
        assert_eq!(
            open_cpu(&root, &mut buf).unwrap_err(),
            CgroupError::NotMounted
        );
        // The reason is one line that says what is missing.
        use std::string::ToString;
        assert_eq!(
            CgroupError::NotMounted.to_string(),
            "proc/self/cgroup names a cgroup, but no cgroup filesystem is mounted"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_v1_mount_of_another_controller_does_not_hide_the_unknown() {
        // Only cpu is mounted: memory stays unknown, cpu is read.
        let dir = tree(
            "only-cpu",
            &[
                ("proc/self/cgroup", "4:memory:/\n1:cpu:/\n"),
                (
                    "proc/self/mountinfo",
                    "1 0 0:30 / / rw - overlay overlay rw\n2 1 0:40 / /cg rw - cgroup cgroup rw,cpu\n",
                ),
                ("cg/cpu.cfs_quota_us", "100000\n"),
                ("cg/cpu.cfs_period_us", "100000\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut buf = bigbuf();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::NotMounted
        );
        let cpu = open_cpu(&root, &mut buf).unwrap().unwrap();
        assert_eq!(cpu.quota_millicpus(&mut buf), Some(1000));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Fixture 53: a container on a 6.12 kernel without `CONFIG_MEMCG_V1`,
    /// v2 only, no cgroup filesystem mounted, and a /proc/cgroups with no
    /// `memory` line (such a kernel lists none, on or off): the memory
    /// limit is unknown, as the CPU limit, not "no memory controller".
    #[test]
    fn fixture_53_proc_cgroups_no_memory_line_6_12() {
        let root = root!("53-proc-cgroups-no-memory-line-6.12");
        let mut buf = bigbuf();
        assert_eq!(
            open_memory(&root, &mut buf).unwrap_err(),
            CgroupError::NotMounted
        );
        assert_eq!(
            open_cpu(&root, &mut buf).unwrap_err(),
            CgroupError::NotMounted
        );
        // The same table with a cgroup2 mount whose tree does not enable
        // memory (`cgroup.controllers` without it): no memory controller.
        let dir = tree(
            "no-memory-line-mounted",
            &[
                ("proc/self/cgroup", "0::/\n"),
                (
                    "proc/self/mountinfo",
                    "1 0 0:30 / / rw - overlay overlay rw\n2 1 0:31 / /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
                ),
                (
                    "proc/cgroups",
                    core::str::from_utf8(fixture!(
                        "53-proc-cgroups-no-memory-line-6.12/proc/cgroups"
                    ))
                    .unwrap(),
                ),
                ("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io pids\n"),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        assert!(open_memory(&root, &mut buf).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_disabled_controller_is_no_limit_even_unmounted() {
        // 08-rpi-memory-cgroup-disabled's /proc/cgroups (memory enabled 0),
        // with the cgroup2 mount gone: still no memory controller, and cpu
        // (enabled there) unknown.
        let table = std::string::String::from_utf8(
            fixture!("08-rpi-memory-cgroup-disabled/proc/cgroups").to_vec(),
        )
        .unwrap();
        let dir = tree(
            "disabled",
            &[
                ("proc/self/cgroup", "0::/user.slice\n"),
                (
                    "proc/self/mountinfo",
                    "1 0 0:30 / / rw - ext4 /dev/sda rw\n",
                ),
                ("proc/cgroups", &table),
            ],
        );
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut buf = bigbuf();
        assert!(open_memory(&root, &mut buf).unwrap().is_none());
        assert_eq!(
            open_cpu(&root, &mut buf).unwrap_err(),
            CgroupError::NotMounted
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
