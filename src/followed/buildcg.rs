//! The build's own memory cgroup (`run`): made before CMD starts, joined
//! by CMD before it execs, read while it runs, removed when it ends.
//!
//! With a cgroup of its own, "the build" is exactly what the kernel charges
//! to it: every process CMD starts, however it daemonizes, and nothing
//! else on the host. Its `oom_kill` counter counts only the build's kills,
//! and its peak charge is the build's memory as one figure.
//!
//! Where it goes, below the cgroup headroom starts in (`P`, found as
//! [`crate::kernel::cgroup::open_memory`] finds it):
//! - cgroup v1 (root, or a delegated memory hierarchy): `P/headroom-<pid>.build`.
//! - cgroup v2: `P/headroom-<pid>.build`, and headroom itself moves into
//!   `P/headroom-<pid>.self` first, because of v2's no-internal-process
//!   rule: `P` can enable `memory` for its children (`+memory` in its
//!   `cgroup.subtree_control`) only once no process is left in `P` itself.
//!   When another process is in `P` (a shell in the same scope), that
//!   write fails with EBUSY: headroom moves back and the build is its
//!   process tree. This works without root in a delegated scope such as
//!   `systemd-run --user --scope`.
//!
//! At the end, processes left behind in the build's cgroup are moved out
//! (to `P` on v1, to headroom's own leaf on v2) and the cgroup is removed.
//! A cgroup left by a headroom that was killed is removed by the next
//! `run` in the same place, once it is empty ([`remove_stale`]).
//!
//! # References
//! `Documentation/admin-guide/cgroup-v2.rst` ("No Internal Process
//! Constraint", "Delegation", `memory.peak`, `memory.events`, `memory.stat`),
//! `Documentation/admin-guide/cgroup-v1/memory.rst`
//! (`memory.max_usage_in_bytes`, `memory.oom_control`, `memory.stat`),
//! cgroups(7).

use core::mem::MaybeUninit;

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::kernel::cgroup::{self, MemCgroup, Version};
use crate::kernel::kept::{Kept, Shape};
use crate::kernel::mountinfo::PATH_MAX;
use crate::kernel::parse::{fields, lines, parse_u64, space_value};
use crate::kernel::root::{Root, for_each_entry, join_num, read_at};

/// What the names of headroom's cgroups start with.
pub const PREFIX: &str = "headroom-";

/// Size of a buffer for [`BuildCgroup`]'s reads, bytes: v2 `memory.stat`
/// is ~1.5 KiB on 6.x (about 50 lines), v1's ~1 KiB; `cgroup.procs` is
/// read in pieces of this size. 4 KiB leaves room.
pub const BUF_LEN: usize = 4096;

/// Why the build got no cgroup of its own (it is then its process tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateError {
    /// No memory controller for this process (none mounted, v2 without
    /// `memory`, `cgroup_disable=memory`), or `proc/self/cgroup` unusable.
    NoController,
    /// A step was refused (not root on v1, a v2 cgroup not delegated):
    /// which step, and the errno.
    Refused(&'static str, Errno),
    /// v2: other processes share headroom's cgroup, so it cannot enable
    /// `memory` for a child (the no-internal-process rule).
    Busy,
}

impl core::fmt::Display for CreateError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CreateError::NoController => f.write_str("no memory cgroup controller to use"),
            CreateError::Refused(step, e) => write!(f, "{step}: {}", e),
            CreateError::Busy => f.write_str(
                "other processes share this cgroup (cgroup v2 no-internal-process rule)",
            ),
        }
    }
}

/// A name like `headroom-1234.build`.
type Name = heapless::String<40>;

/// The build's memory cgroup; see the module documentation.
#[derive(Debug)]
pub struct BuildCgroup {
    /// The hierarchy it is on.
    pub version: Version,
    parent: OwnedFd,
    dir: OwnedFd,
    name: Name,
    /// Its path as `/proc/PID/cgroup` shows it (for membership).
    path: heapless::Vec<u8, PATH_MAX>,
    /// `cgroup.procs` of the build's cgroup, open for writing: CMD writes
    /// `0` to it between fork and exec ([`BuildCgroup::join_fd`]).
    procs: OwnedFd,
    /// [`BuildCgroup::remove`] has run.
    done: bool,
    /// v2: headroom's own leaf, and whether headroom enabled `memory` in
    /// the parent's `cgroup.subtree_control` (to undo at the end).
    own_leaf: Option<(OwnedFd, Name, bool)>,
}

/// What [`BuildCgroup::remove`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    /// Processes left in the build's cgroup, moved out first.
    pub moved: u32,
    /// The cgroup directory is gone.
    pub removed: bool,
}

/// Other names tried when `headroom-<pid>.build` is taken (by a headroom
/// of the same pid in another PID namespace): `headroom-<pid>-2.build` …
const NAME_TRIES: u32 = 8;

/// The name for `pid`, try `k` (0: `headroom-<pid><suffix>`, else
/// `headroom-<pid>-<k+1><suffix>`), `suffix` `.build` or `.self`.
fn name_for(pid: u32, k: u32, suffix: &str) -> Name {
    let mut out = [0u8; 40];
    let mut name = Name::new();
    let head = join_num(&mut out, PREFIX, u64::from(pid), "").map(str::len);
    if let Some(n) = head
        && let Some(Ok(s)) = out.get(..n).map(core::str::from_utf8)
    {
        let _ = name.push_str(s);
    }
    if k > 0 {
        let mut more = [0u8; 16];
        if let Some(s) = join_num(&mut more, "-", u64::from(k) + 1, "") {
            let _ = name.push_str(s);
        }
    }
    let _ = name.push_str(suffix);
    name
}

/// In unit tests a tree of plain files plays the cgroup file system, where
/// every control file of a new cgroup exists at once: there, writing one
/// creates it.
const TEST_CREATE: OFlags = if cfg!(test) {
    OFlags::CREATE
} else {
    OFlags::empty()
};

/// Opens `file` in `dir` for writing (no truncation: cgroup files take
/// one write each).
fn open_w(dir: BorrowedFd<'_>, file: &str) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        file,
        OFlags::WRONLY | OFlags::CLOEXEC | TEST_CREATE,
        Mode::from_raw_mode(0o644),
    )
}

/// Writes `text` to `file` in `dir` with one write(2).
fn write_file(dir: BorrowedFd<'_>, file: &str, text: &[u8]) -> Result<(), Errno> {
    let fd = open_w(dir, file)?;
    rustix::io::write(&fd, text).map(|_| ())
}

/// Writes the decimal `pid` to `cgroup.procs` in `dir`: moves that process.
fn move_pid(dir: BorrowedFd<'_>, pid: u32) -> Result<(), Errno> {
    let mut out = [0u8; 24];
    let text = join_num(&mut out, "", u64::from(pid), "\n").ok_or(Errno::INVAL)?;
    write_file(dir, "cgroup.procs", text.as_bytes())
}

/// Makes a new cgroup for `pid` in `dir` (mode 0755) and opens it: the
/// first of [`NAME_TRIES`] names with `suffix` that does not exist yet. An
/// existing one is never taken over: its counters, limits and processes
/// are another's.
fn make_dir(dir: BorrowedFd<'_>, pid: u32, suffix: &str) -> Result<(OwnedFd, Name), Errno> {
    for k in 0..NAME_TRIES {
        let name = name_for(pid, k, suffix);
        match rustix::fs::mkdirat(dir, name.as_str(), Mode::from_raw_mode(0o755)) {
            Ok(()) => return crate::kernel::root::open_dir_at(dir, &name).map(|d| (d, name)),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Errno::EXIST)
}

/// True when the `cgroup.controllers` or `cgroup.subtree_control` text
/// lists `memory`.
fn lists_memory(b: &[u8]) -> bool {
    lines(b).flat_map(fields).any(|w| w == b"memory")
}

impl BuildCgroup {
    /// Makes the build's cgroup below `own` (headroom's memory cgroup, as
    /// opened by [`crate::kernel::cgroup::open_memory`] under `root`), for the
    /// headroom process `pid`. `buf`: [`crate::kernel::cgroup::OPEN_BUF_LEN`]
    /// bytes (it first holds `proc/self/cgroup`).
    ///
    /// # Errors
    /// [`CreateError`]: the build is then its process tree. Nothing is left
    /// behind on failure (headroom is back in its cgroup, the directories
    /// it made are removed).
    pub fn create(
        root: &Root,
        own: &MemCgroup,
        pid: u32,
        buf: &mut [u8],
    ) -> Result<BuildCgroup, CreateError> {
        let mut path = heapless::Vec::<u8, PATH_MAX>::new();
        {
            let text = root
                .read(cgroup::PATH_SELF, buf)
                .map_err(|_| CreateError::NoController)?;
            let (_, p) = cgroup::path_for(text, b"memory").ok_or(CreateError::NoController)?;
            path.extend_from_slice(p)
                .map_err(|_| CreateError::NoController)?;
        }
        let parent = rustix::io::dup(own.leaf()).map_err(|e| CreateError::Refused("dup", e))?;
        let own_leaf = match own.version {
            Version::V1 => None,
            Version::V2 => Some(enter_own_leaf(parent.as_fd(), pid, buf)?),
        };
        let made = make_dir(parent.as_fd(), pid, ".build")
            .map_err(|e| CreateError::Refused("mkdir", e))
            .and_then(|(dir, name)| match open_w(dir.as_fd(), "cgroup.procs") {
                Ok(procs) => Ok((dir, name, procs)),
                Err(e) => {
                    let _ = rustix::fs::unlinkat(parent.as_fd(), name.as_str(), AtFlags::REMOVEDIR);
                    Err(CreateError::Refused("cgroup.procs", e))
                }
            });
        let (dir, name, procs) = match made {
            Ok(v) => v,
            Err(e) => {
                if let Some(leaf) = own_leaf {
                    leave_own_leaf(parent.as_fd(), leaf, buf);
                }
                return Err(e);
            }
        };
        if path.last() != Some(&b'/') {
            let _ = path.push(b'/');
        }
        let _ = path.extend_from_slice(name.as_bytes());
        Ok(BuildCgroup {
            version: own.version,
            parent,
            dir,
            name,
            path,
            procs,
            done: false,
            own_leaf,
        })
    }

    /// The descriptor CMD writes `0` to (itself) between fork and exec:
    /// `cgroup.procs` of the build's cgroup. It is close-on-exec.
    pub fn join_fd(&self) -> BorrowedFd<'_> {
        self.procs.as_fd()
    }

    /// Its path as `/proc/PID/cgroup` shows it, for
    /// [`crate::followed::compilers::Scope::Cgroup`].
    pub fn path(&self) -> &[u8] {
        &self.path
    }

    /// Its directory name (`headroom-<pid>.build`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// OOM kills in the build's cgroup so far: `oom_kill` of v1
    /// `memory.oom_control` / v2 `memory.events` (Linux ≥ 4.13); `None`
    /// when unreadable. Read through `kept` (kept open between ticks when
    /// it keeps). `buf`: [`BUF_LEN`].
    pub fn oom_kills(&self, kept: &mut Kept, buf: &mut [u8]) -> Option<u64> {
        let file = match self.version {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        };
        let b = kept.read(self.dir.as_fd(), file, buf, Shape::Whole).ok()?;
        cgroup::parse_oom_kill(b).ok().flatten()
    }

    /// The build's peak memory charge since it started, bytes: v1
    /// `memory.max_usage_in_bytes`, v2 `memory.peak` (Linux ≥ 5.19). It
    /// counts every process of the build together, and the page cache the
    /// build caused. `None` when unreadable. `buf`: [`BUF_LEN`].
    pub fn peak_bytes(&self, buf: &mut [u8]) -> Option<u64> {
        let file = match self.version {
            Version::V1 => "memory.max_usage_in_bytes",
            Version::V2 => "memory.peak",
        };
        let b = read_at(self.dir.as_fd(), file, buf).ok()?;
        cgroup::parse_bytes(b).ok()
    }

    /// The build's anonymous memory now, bytes: `anon` of v2 `memory.stat`,
    /// `total_rss` of v1's (anon and swap cache, the cgroup and its
    /// children). `None` when unreadable. Read through `kept`, as
    /// [`BuildCgroup::oom_kills`]. `buf`: [`BUF_LEN`].
    pub fn anon_bytes(&self, kept: &mut Kept, buf: &mut [u8]) -> Option<u64> {
        let b = kept
            .read(self.dir.as_fd(), "memory.stat", buf, Shape::Whole)
            .ok()?;
        parse_anon(b, self.version)
    }

    /// Its processes, listed through its own directory.
    pub fn members_here(&self) -> Members<BorrowedFd<'_>> {
        Members(self.dir.as_fd())
    }

    /// The cgroup's directory, opened again, to list its processes from
    /// where the [`BuildCgroup`] cannot be borrowed (the pausing of
    /// `run --jobserver`).
    ///
    /// # Errors
    /// The errno of fcntl(2) `F_DUPFD_CLOEXEC`.
    pub fn members(&self) -> Result<Members<OwnedFd>, Errno> {
        rustix::io::fcntl_dupfd_cloexec(&self.dir, 0).map(Members)
    }

    /// Moves the processes left in the build's cgroup out (v1: to the
    /// parent; v2: to headroom's own leaf), removes the cgroup, and on v2
    /// returns headroom to the cgroup it started in. Done once; dropping a
    /// [`BuildCgroup`] does it too. `buf`: [`BUF_LEN`].
    pub fn remove(&mut self, buf: &mut [u8]) -> Removed {
        let mut out = Removed::default();
        if self.done {
            return out;
        }
        self.done = true;
        let to = match &self.own_leaf {
            Some((leaf, _, _)) => leaf.as_fd(),
            None => self.parent.as_fd(),
        };
        out.moved = empty_into(self.dir.as_fd(), to, buf);
        out.removed = rmdir(self.parent.as_fd(), &self.name);
        if let Some(leaf) = self.own_leaf.take() {
            leave_own_leaf(self.parent.as_fd(), leaf, buf);
        }
        out
    }
}

impl Drop for BuildCgroup {
    /// Removes the cgroup if [`BuildCgroup::remove`] has not (an early
    /// return): a stack buffer of [`BUF_LEN`] bytes.
    fn drop(&mut self) {
        let mut buf = [0u8; BUF_LEN];
        let _ = self.remove(&mut buf);
    }
}

/// v2: moves headroom (`pid`) into `P/headroom-<pid>.self` and enables
/// `memory` for `P`'s children when it is not yet. Undone on failure.
fn enter_own_leaf(
    parent: BorrowedFd<'_>,
    pid: u32,
    buf: &mut [u8],
) -> Result<(OwnedFd, Name, bool), CreateError> {
    let controllers =
        read_at(parent, "cgroup.controllers", buf).map_err(|_| CreateError::NoController)?;
    if !lists_memory(controllers) {
        return Err(CreateError::NoController);
    }
    let enabled = read_at(parent, "cgroup.subtree_control", buf).is_ok_and(lists_memory);
    let (leaf, name) =
        make_dir(parent, pid, ".self").map_err(|e| CreateError::Refused("mkdir", e))?;
    if let Err(e) = move_pid(leaf.as_fd(), pid) {
        let _ = rustix::fs::unlinkat(parent, name.as_str(), AtFlags::REMOVEDIR);
        return Err(CreateError::Refused("moving headroom to its own leaf", e));
    }
    if enabled {
        return Ok((leaf, name, false));
    }
    match write_file(parent, "cgroup.subtree_control", b"+memory") {
        Ok(()) => Ok((leaf, name, true)),
        Err(e) => {
            leave_own_leaf(parent, (leaf, name, false), buf);
            Err(match e {
                Errno::BUSY => CreateError::Busy,
                e => CreateError::Refused("cgroup.subtree_control", e),
            })
        }
    }
}

/// v2: undoes [`enter_own_leaf`]: `-memory` when headroom enabled it, then
/// every process of the leaf (headroom, leftovers) back to the parent, and
/// the leaf removed. A step that fails leaves the leaf for
/// [`remove_stale`].
fn leave_own_leaf(parent: BorrowedFd<'_>, leaf: (OwnedFd, Name, bool), buf: &mut [u8]) {
    let (dir, name, enabled) = leaf;
    if enabled && write_file(parent, "cgroup.subtree_control", b"-memory").is_err() {
        return;
    }
    empty_into(dir.as_fd(), parent, buf);
    drop(dir);
    rmdir(parent, &name);
}

/// The pids of a `cgroup.procs` text (one decimal pid a line,
/// cgroups(7)), read in pieces: [`ProcsParser::feed`] each piece in turn,
/// then [`ProcsParser::end`]. A pid cut between two pieces is joined.
/// Pure: no I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcsParser {
    /// The digits of a pid not yet ended by a newline.
    cur: Option<u32>,
}

impl ProcsParser {
    /// Calls `f` with each pid that `piece` ends (a run of digits
    /// followed by any other byte); a pid of more than 10 digits gives
    /// `u32::MAX`.
    pub fn feed(&mut self, piece: &[u8], f: &mut impl FnMut(u32)) {
        for &b in piece {
            if b.is_ascii_digit() {
                let d = u32::from(b - b'0');
                self.cur = Some(self.cur.unwrap_or(0).saturating_mul(10).saturating_add(d));
            } else if let Some(p) = self.cur.take() {
                f(p);
            }
        }
    }

    /// The end of the text: the last pid when no newline ended it.
    pub fn end(self, f: &mut impl FnMut(u32)) {
        if let Some(p) = self.cur {
            f(p);
        }
    }
}

/// Calls `f` with each pid of `cgroup.procs` in `dir`, read in pieces of
/// `buf`'s size (a cgroup of thousands of processes lists more than any
/// fixed buffer holds). `Err` when the file cannot be opened or read.
fn for_each_pid(dir: BorrowedFd<'_>, buf: &mut [u8], mut f: impl FnMut(u32)) -> Result<(), Errno> {
    let fd = rustix::fs::openat(
        dir,
        "cgroup.procs",
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut parser = ProcsParser::default();
    loop {
        let n = match rustix::io::read(&fd, &mut *buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e),
        };
        parser.feed(buf.get(..n).unwrap_or(&[]), &mut f);
    }
    parser.end(&mut f);
    Ok(())
}

/// Least getdents64(2) buffer a level of [`members_of`] lists child
/// cgroups with: a cgroup directory's ~60 control files take a few calls.
const MEMBERS_LIST_MIN: usize = 512;

/// Calls `f` with each pid of the cgroup `dir` and of its child cgroups,
/// to `depth` levels: each level lists its directory with the first half
/// of `list` and hands the rest to the level below, which is not listed
/// once that is under [`MEMBERS_LIST_MIN`]. A child that cannot be read
/// (removed meanwhile) is passed over.
///
/// # Errors
/// The errno of reading `cgroup.procs` of `dir` itself, or of listing it.
fn members_of(
    dir: BorrowedFd<'_>,
    list: &mut [MaybeUninit<u8>],
    buf: &mut [u8],
    depth: u32,
    f: &mut dyn FnMut(u32),
) -> Result<(), Errno> {
    for_each_pid(dir, buf, &mut *f)?;
    let (mine, below) = list.split_at_mut(list.len() / 2);
    if depth == 0 || mine.len() < MEMBERS_LIST_MIN {
        return Ok(());
    }
    for_each_entry(dir, mine, |name, kind| {
        if kind == rustix::fs::FileType::Directory
            && let Ok(name) = core::str::from_utf8(name)
            && let Ok(child) = crate::kernel::root::open_dir_at(dir, name)
        {
            let _ = members_of(child.as_fd(), below, buf, depth - 1, f);
        }
        true
    })
}

/// The build cgroup's directory, to list its processes
/// ([`Members::for_each`]): borrowed from its [`BuildCgroup`]
/// ([`BuildCgroup::members_here`]) or kept open apart from it
/// ([`BuildCgroup::members`]).
#[derive(Debug)]
pub struct Members<F>(F);

impl<F: AsFd> Members<F> {
    /// Calls `f` with the pid of each process in the build's cgroup and
    /// in its child cgroups (to [`CHILD_DEPTH`] levels, as far as `list`
    /// reaches: half of it per level, 8 KiB for 4), from their
    /// `cgroup.procs` (pids in headroom's pid namespace, cgroups(7)), with
    /// no listing of `/proc`. `list`: the getdents64(2) buffer for the
    /// child cgroups; `buf`: the pieces `cgroup.procs` is read in (any
    /// size; [`BUF_LEN`]).
    ///
    /// # Errors
    /// The errno of opening or reading the build cgroup's own
    /// `cgroup.procs`, or of listing its directory (the cgroup removed).
    pub fn for_each(
        &self,
        list: &mut [MaybeUninit<u8>],
        buf: &mut [u8],
        f: &mut dyn FnMut(u32),
    ) -> Result<(), Errno> {
        members_of(self.0.as_fd(), list, buf, CHILD_DEPTH, f)
    }
}

/// Moves every process of the cgroup `from` to `to`, reading again until
/// none is left (a process may fork meanwhile; at most 16 rounds). Returns
/// how many were moved.
fn move_all(from: BorrowedFd<'_>, to: BorrowedFd<'_>, buf: &mut [u8]) -> u32 {
    let mut moved = 0u32;
    for _ in 0..16 {
        let mut listed = 0u32;
        let read = for_each_pid(from, buf, |p| {
            listed += 1;
            if move_pid(to, p).is_ok() {
                moved = moved.saturating_add(1);
            }
        });
        if read.is_err() || listed == 0 {
            break;
        }
    }
    moved
}

/// Most levels of child cgroups below the build's that are emptied and
/// removed with it (a build that makes cgroups of its own: a nested
/// `headroom run`, a container runtime, a test suite).
const CHILD_DEPTH: u32 = 8;

/// Moves every process of `from` and of its child cgroups (to
/// [`CHILD_DEPTH`] levels) to `to`, removing the children, deepest first.
/// Returns how many processes were moved.
fn empty_into(from: BorrowedFd<'_>, to: BorrowedFd<'_>, buf: &mut [u8]) -> u32 {
    empty_tree(from, to, buf, CHILD_DEPTH)
}

fn empty_tree(from: BorrowedFd<'_>, to: BorrowedFd<'_>, buf: &mut [u8], depth: u32) -> u32 {
    let mut moved = move_all(from, to, buf);
    if depth == 0 {
        return moved;
    }
    // Child cgroups are the directories; 16 at a time, again until none.
    for _ in 0..16 {
        let mut children: heapless::Vec<heapless::String<255>, 16> = heapless::Vec::new();
        let mut list = [MaybeUninit::<u8>::uninit(); 2048];
        let _ = for_each_entry(from, &mut list, |name, kind| {
            if kind == rustix::fs::FileType::Directory
                && let Ok(n) = core::str::from_utf8(name)
            {
                let mut s = heapless::String::new();
                if s.push_str(n).is_ok() {
                    let _ = children.push(s);
                }
            }
            true
        });
        if children.is_empty() {
            break;
        }
        let mut removed_any = false;
        for c in &children {
            if let Ok(d) = crate::kernel::root::open_dir_at(from, c) {
                moved = moved.saturating_add(empty_tree(d.as_fd(), to, buf, depth - 1));
            }
            removed_any |= rmdir(from, c);
        }
        if !removed_any {
            break;
        }
    }
    moved
}

/// Removes the cgroup directory `name` in `parent`; true when it is gone.
fn rmdir(parent: BorrowedFd<'_>, name: &str) -> bool {
    // A cgroup whose last process has just exited may be busy a moment.
    for _ in 0..20 {
        match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => return true,
            Err(Errno::BUSY) => {
                let _ = rustix::thread::nanosleep(&rustix::time::Timespec {
                    tv_sec: 0,
                    tv_nsec: 10_000_000,
                });
            }
            Err(_) => return false,
        }
    }
    false
}

/// The anonymous memory of a `memory.stat` text, bytes: `anon` (v2) or
/// `total_rss` (v1). `None` when the key is absent or not a number.
pub fn parse_anon(b: &[u8], version: Version) -> Option<u64> {
    let key: &[u8] = match version {
        Version::V1 => b"total_rss",
        Version::V2 => b"anon",
    };
    space_value(b, key).and_then(parse_u64)
}

/// The headroom pid a cgroup name of [`BuildCgroup`] carries:
/// `headroom-<pid>.build`, `headroom-<pid>.self`, or either with `-<k>`
/// after the pid; `None` for any other name.
pub fn pid_of_name(name: &[u8]) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX.as_bytes())?;
    let stem = rest
        .strip_suffix(b".build")
        .or_else(|| rest.strip_suffix(b".self"))?;
    let digits = match stem.iter().position(|&c| c == b'-') {
        Some(i) => {
            let k = stem.get(i + 1..)?;
            parse_u64(k)?;
            stem.get(..i)?
        }
        None => stem,
    };
    parse_u64(digits).and_then(|p| u32::try_from(p).ok())
}

/// Removes, in headroom's memory cgroup `own`, the build cgroups and own
/// leaves of headrooms that are gone (no `proc/<pid>` under `root` whose
/// comm is `headroom`) and that are empty; a non-empty one stays (rmdir
/// refuses it) for a later run. Called before this headroom (`self_pid`)
/// makes its own, so one named with `self_pid` is another's of the same
/// pid (a PID namespace, or a pid used again): removed when empty too.
/// Returns how many were removed. `dir` is a getdents64(2) buffer; `buf`:
/// 64 bytes or more.
pub fn remove_stale(
    root: &Root,
    own: &MemCgroup,
    self_pid: u32,
    dir: &mut [MaybeUninit<u8>],
    buf: &mut [u8],
) -> u32 {
    let parent = own.leaf();
    let mut stale: heapless::Vec<Name, 16> = heapless::Vec::new();
    let _ = for_each_entry(parent, dir, |name, _| {
        if let Some(pid) = pid_of_name(name)
            && (pid == self_pid || !is_headroom(root, pid, buf))
            && let Ok(s) = core::str::from_utf8(name)
        {
            let mut n = Name::new();
            if n.push_str(s).is_ok() {
                let _ = stale.push(n);
            }
        }
        true
    });
    let mut removed = 0;
    for name in &stale {
        if rustix::fs::unlinkat(parent, name.as_str(), AtFlags::REMOVEDIR).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// True when `proc/<pid>/comm` under `root` reads `headroom`.
fn is_headroom(root: &Root, pid: u32, buf: &mut [u8]) -> bool {
    let mut path = [0u8; 40];
    let Some(p) = join_num(&mut path, "proc/", u64::from(pid), "/comm") else {
        return false;
    };
    root.read(p, buf)
        .is_ok_and(|c| crate::kernel::pid::parse_comm(c) == b"headroom")
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::fs;
    use std::path::PathBuf;

    #[test]
    fn names_carry_the_pid() {
        assert_eq!(name_for(1234, 0, ".build").as_str(), "headroom-1234.build");
        assert_eq!(name_for(1234, 1, ".self").as_str(), "headroom-1234-2.self");
        assert_eq!(pid_of_name(b"headroom-1234.build"), Some(1234));
        assert_eq!(pid_of_name(b"headroom-77.self"), Some(77));
        assert_eq!(pid_of_name(b"headroom-77-8.build"), Some(77));
        for other in [
            &b"headroom-.build"[..],
            b"headroom-12",
            b"headroom-12.buildx",
            b"headroom-x1.build",
            b"xheadroom-1.build",
            b"headroom-jobs-99",
            b"headroom-99999999999.build",
            b"headroom-77-.build",
            b"headroom-77-x.build",
            b"headroom--2.build",
        ] {
            assert_eq!(pid_of_name(other), None, "{:?}", std::str::from_utf8(other));
        }
    }

    #[test]
    fn anon_from_memory_stat_of_each_version() {
        let v1 = b"cache 4096\nrss 8192\nrss_huge 0\ntotal_cache 12288\ntotal_rss 65536\n";
        assert_eq!(parse_anon(v1, Version::V1), Some(65536));
        let v2 = b"anon 1048576\nfile 4096\nkernel 8192\nanon_thp 0\n";
        assert_eq!(parse_anon(v2, Version::V2), Some(1048576));
        // `anon_thp` is not `anon`; a v1 file has no `anon`.
        assert_eq!(parse_anon(b"anon_thp 5\n", Version::V2), None);
        assert_eq!(parse_anon(v1, Version::V2), None);
        assert_eq!(parse_anon(b"total_rss x\n", Version::V1), None);
    }

    /// `cgroup.procs` read in pieces of every size gives its pids whole.
    #[test]
    fn cgroup_procs_pids_in_any_pieces() {
        let text = b"1\n4242\n123456789\n99999999999\n\n7";
        let want = [1, 4242, 123_456_789, u32::MAX, 7];
        for size in 1..=text.len() {
            let mut got = std::vec::Vec::new();
            let mut p = ProcsParser::default();
            for piece in text.chunks(size) {
                p.feed(piece, &mut |pid| got.push(pid));
            }
            p.end(&mut |pid| got.push(pid));
            assert_eq!(got, want, "pieces of {size}");
        }
        let mut none = std::vec::Vec::new();
        let mut p = ProcsParser::default();
        p.feed(b"", &mut |pid| none.push(pid));
        p.feed(b"\n\n", &mut |pid| none.push(pid));
        p.end(&mut |pid| none.push(pid));
        assert!(none.is_empty());
    }

    /// The build's members: its `cgroup.procs` and those of its child
    /// cgroups (a nested build's), the control files passed over; the
    /// same through [`BuildCgroup::members`]; an error once it is gone.
    #[test]
    fn members_are_the_build_cgroup_s_and_its_children_s_processes() {
        let (d, cg, mut b) = v2_build("members");
        let build = cg.join("headroom-4242.build");
        fs::write(build.join("cgroup.procs"), "10\n11\n").unwrap();
        fs::write(build.join("memory.current"), "5\n").unwrap();
        let inner = build.join("headroom-11.build");
        fs::create_dir_all(inner.join("deeper")).unwrap();
        fs::write(inner.join("cgroup.procs"), "20\n").unwrap();
        fs::write(inner.join("deeper/cgroup.procs"), "30\n31").unwrap();
        let mut list = [MaybeUninit::uninit(); 8192];
        let mut small = [0u8; 3];
        let mut got = std::vec::Vec::new();
        b.members_here()
            .for_each(&mut list, &mut small, &mut |p| got.push(p))
            .unwrap();
        got.sort_unstable();
        assert_eq!(got, [10, 11, 20, 30, 31]);
        let m = b.members().unwrap();
        let mut again = std::vec::Vec::new();
        m.for_each(&mut list, &mut small, &mut |p| again.push(p))
            .unwrap();
        again.sort_unstable();
        assert_eq!(again, got);
        // A list too small to go below: only the build's own.
        let mut own_only = std::vec::Vec::new();
        b.members_here()
            .for_each(&mut list[..600], &mut small, &mut |p| own_only.push(p))
            .unwrap();
        assert_eq!(own_only, [10, 11]);
        let _ = fs::remove_dir_all(&inner);
        fs::remove_file(build.join("cgroup.procs")).unwrap();
        fs::remove_file(build.join("memory.current")).unwrap();
        fs::remove_file(cg.join("headroom-4242.self/cgroup.procs")).unwrap();
        b.remove(&mut [0u8; BUF_LEN]);
        assert!(m.for_each(&mut list, &mut small, &mut |_| {}).is_err());
        let _ = fs::remove_dir_all(&d);
    }

    /// A fresh directory of this test process's own.
    fn tmp(tag: &str) -> PathBuf {
        std::env::temp_dir().join(std::format!(
            "headroom-buildcg-{tag}-{}",
            std::process::id()
        ))
    }

    /// A fake v2 tree under a temporary root: `/sys/fs/cgroup/user.slice/app.scope`
    /// is this process's cgroup, with `memory` available and not enabled.
    fn v2_tree(tag: &str, subtree: &str) -> PathBuf {
        let d = tmp(tag);
        let _ = fs::remove_dir_all(&d);
        let cg = d.join("sys/fs/cgroup/user.slice/app.scope");
        fs::create_dir_all(&cg).unwrap();
        fs::create_dir_all(d.join("proc/self")).unwrap();
        fs::write(d.join("proc/self/cgroup"), "0::/user.slice/app.scope\n").unwrap();
        fs::write(
            d.join("proc/self/mountinfo"),
            "30 1 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
        )
        .unwrap();
        fs::write(cg.join("cgroup.controllers"), "cpu io memory pids\n").unwrap();
        fs::write(cg.join("cgroup.subtree_control"), subtree).unwrap();
        fs::write(cg.join("cgroup.procs"), "4242\n").unwrap();
        fs::write(cg.join("memory.max"), "max\n").unwrap();
        fs::write(cg.join("memory.current"), "1000\n").unwrap();
        d
    }

    /// [`v2_tree`] with memory available, and the build cgroup of pid
    /// 4242 made in it: the tree, the scope's directory, the cgroup.
    fn v2_build(tag: &str) -> (PathBuf, PathBuf, BuildCgroup) {
        let d = v2_tree(tag, "cpu\n");
        let cg = d.join("sys/fs/cgroup/user.slice/app.scope");
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let mut buf = [0u8; cgroup::OPEN_BUF_LEN];
        let own = cgroup::open_memory(&root, &mut buf).unwrap().unwrap();
        let b = BuildCgroup::create(&root, &own, 4242, &mut buf).unwrap();
        (d, cg, b)
    }

    #[test]
    fn v2_headroom_moves_to_its_own_leaf_and_enables_memory_for_the_build() {
        let (_d, cg, b) = v2_build("v2");
        assert_eq!(b.version, Version::V2);
        assert_eq!(b.path(), b"/user.slice/app.scope/headroom-4242.build");
        // headroom went first into its own leaf, then memory was enabled.
        let leaf = cg.join("headroom-4242.self");
        assert_eq!(
            fs::read_to_string(leaf.join("cgroup.procs")).unwrap(),
            "4242\n"
        );
        assert!(
            fs::read_to_string(cg.join("cgroup.subtree_control"))
                .unwrap()
                .starts_with("+memory"),
        );
        // CMD joins through this descriptor: `0` is "the writer".
        rustix::io::write(b.join_fd(), b"0").unwrap();
        assert_eq!(
            fs::read_to_string(cg.join("headroom-4242.build/cgroup.procs")).unwrap(),
            "0"
        );
        // The kernel would have emptied it: make it so, then remove.
        fs::remove_file(cg.join("headroom-4242.build/cgroup.procs")).unwrap();
        fs::remove_file(leaf.join("cgroup.procs")).unwrap();
        let mut b = b;
        let r = b.remove(&mut [0u8; BUF_LEN]);
        assert_eq!(
            r,
            Removed {
                moved: 0,
                removed: true
            }
        );
        assert_eq!(b.remove(&mut [0u8; BUF_LEN]), Removed::default(), "once");
        assert!(!cg.join("headroom-4242.build").exists());
        assert!(!leaf.exists());
        // …and memory disabled again, since headroom enabled it.
        assert!(
            fs::read_to_string(cg.join("cgroup.subtree_control"))
                .unwrap()
                .starts_with("-memory"),
        );
    }

    #[test]
    fn v2_without_memory_available_is_no_controller_and_leaves_nothing() {
        let d = v2_tree("v2-nomem", "");
        let cg = d.join("sys/fs/cgroup/user.slice/app.scope");
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let mut buf = [0u8; cgroup::OPEN_BUF_LEN];
        let own = cgroup::open_memory(&root, &mut buf).unwrap().unwrap();
        fs::write(cg.join("cgroup.controllers"), "cpu pids\n").unwrap();
        let e = BuildCgroup::create(&root, &own, 4242, &mut buf).unwrap_err();
        assert_eq!(e, CreateError::NoController);
        assert!(!cg.join("headroom-4242.self").exists());
        assert!(!cg.join("headroom-4242.build").exists());
    }

    #[test]
    fn v2_memory_that_cannot_be_enabled_sends_headroom_back() {
        let d = v2_tree("v2-refused", "");
        let cg = d.join("sys/fs/cgroup/user.slice/app.scope");
        // A subtree_control that refuses the write (a directory here;
        // EBUSY or EACCES on a real cgroup shared or not delegated).
        fs::remove_file(cg.join("cgroup.subtree_control")).unwrap();
        fs::create_dir(cg.join("cgroup.subtree_control")).unwrap();
        fs::write(cg.join("cgroup.procs"), "").unwrap();
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let mut buf = [0u8; cgroup::OPEN_BUF_LEN];
        let own = cgroup::open_memory(&root, &mut buf).unwrap().unwrap();
        let e = BuildCgroup::create(&root, &own, 4242, &mut buf).unwrap_err();
        assert!(
            matches!(e, CreateError::Refused("cgroup.subtree_control", _)),
            "{e:?}"
        );
        // headroom was moved back to the cgroup it started in.
        assert_eq!(
            fs::read_to_string(cg.join("cgroup.procs")).unwrap(),
            "4242\n"
        );
        assert!(!cg.join("headroom-4242.build").exists());
    }

    #[test]
    fn v1_build_cgroup_below_our_own_and_stale_ones_removed() {
        let d = tmp("v1");
        let _ = fs::remove_dir_all(&d);
        let cg = d.join("sys/fs/cgroup/memory/ci/job");
        fs::create_dir_all(&cg).unwrap();
        fs::create_dir_all(d.join("proc/self")).unwrap();
        fs::create_dir_all(d.join("proc/77")).unwrap();
        fs::write(d.join("proc/77/comm"), "headroom\n").unwrap();
        fs::create_dir_all(d.join("proc/88")).unwrap();
        fs::write(d.join("proc/88/comm"), "bash\n").unwrap();
        fs::write(d.join("proc/self/cgroup"), "4:memory:/ci/job\n0::/\n").unwrap();
        fs::write(
            d.join("proc/self/mountinfo"),
            "31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n",
        )
        .unwrap();
        fs::write(cg.join("memory.limit_in_bytes"), "9223372036854771712\n").unwrap();
        // Left by headrooms: 77 still runs; 88's pid now names another
        // program; 99 is gone; 66's still holds a process.
        for n in ["headroom-77.build", "headroom-88.build", "headroom-99.self"] {
            fs::create_dir_all(cg.join(n)).unwrap();
        }
        fs::create_dir_all(cg.join("headroom-66.build")).unwrap();
        fs::write(cg.join("headroom-66.build/cgroup.procs"), "5\n").unwrap();
        fs::create_dir_all(cg.join("not-ours")).unwrap();
        // A headroom of our pid in another PID namespace, its build running.
        fs::create_dir_all(cg.join("headroom-4242.build")).unwrap();
        fs::write(cg.join("headroom-4242.build/cgroup.procs"), "7\n").unwrap();

        let root = Root::open(d.to_str().unwrap()).unwrap();
        let mut buf = [0u8; cgroup::OPEN_BUF_LEN];
        let own = cgroup::open_memory(&root, &mut buf).unwrap().unwrap();
        let mut dirbuf = [MaybeUninit::uninit(); 1024];
        assert_eq!(remove_stale(&root, &own, 4242, &mut dirbuf, &mut buf), 2);
        assert!(cg.join("headroom-77.build").exists());
        assert!(!cg.join("headroom-88.build").exists());
        assert!(!cg.join("headroom-99.self").exists());
        assert!(cg.join("headroom-66.build").exists(), "not empty: kept");
        assert!(cg.join("not-ours").exists());

        let b = BuildCgroup::create(&root, &own, 4242, &mut buf).unwrap();
        assert_eq!(b.version, Version::V1);
        // Never the other's: a name of its own.
        assert_eq!(b.path(), b"/ci/job/headroom-4242-2.build");
        assert_eq!(b.name(), "headroom-4242-2.build");
        assert!(
            !cg.join("headroom-4242.self").exists(),
            "v1 needs no own leaf"
        );
        fs::write(
            cg.join("headroom-4242-2.build/memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        )
        .unwrap();
        fs::write(
            cg.join("headroom-4242-2.build/memory.max_usage_in_bytes"),
            "73400320\n",
        )
        .unwrap();
        let mut small = [0u8; BUF_LEN];
        let mut kept = Kept::new(true);
        assert_eq!(b.oom_kills(&mut kept, &mut small), Some(2));
        assert!(kept.is_open(), "read through its kept descriptor");
        assert_eq!(b.peak_bytes(&mut small), Some(73_400_320));
        assert_eq!(b.anon_bytes(&mut Kept::new(false), &mut small), None);
    }
}
