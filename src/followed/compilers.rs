//! Which processes are compilers or linkers, and the per-tick scan of
//! `/proc` that counts them and finds the largest.
//!
//! A process counts when its `comm` equals a name of the list (default:
//! `cc1 cc1plus cc1obj cc1objplus lto1 f951 gnat1 rustc clang clang++ ld lld
//! mold cicc ptxas javac go compile`, plus `clang-<N>`, `clang++-<N>` and
//! `ld.<anything>`), it is not a kernel thread and not a zombie. Wrappers that
//! only wait (collect2, lto-wrapper, gcc, make, cargo) are not on the list.
//!
//! The scan reads `comm` first (the cheapest file), and `stat` and `status`
//! only for matching names. A process that vanishes mid-scan (ENOENT or
//! ESRCH on any read) is skipped silently. Its size is `VmHWM`, else
//! `VmRSS`, else `stat`'s rss pages × the page size of the kernel read
//! ([`crate::kernel::root::page_kib`]: a `--root` tree's own).
//!
//! # References
//! proc(5) (`/proc/pid/comm`, `stat`, `status`); `TASK_COMM_LEN` (16 with
//! the NUL) in `include/linux/sched.h`.

use core::ffi::CStr;
use core::mem::MaybeUninit;

use rustix::fd::{BorrowedFd, OwnedFd};
use rustix::io::Errno;

use crate::kernel::parse::{ParseError, ParseErrorKind, parse_u64, trim};
use crate::kernel::pid::{parse_comm, parse_stat, parse_status};
use crate::kernel::root::{ReadError, for_each_entry, join_num, open_file_at, read_once_at};

mod classes;
pub mod kept_status;
pub use classes::{CLASSIFIED, Classes, Known};

/// Longest name a pattern may have, in bytes: `comm` is at most 15 bytes.
pub const NAME_MAX: usize = 15;

/// Most patterns a [`CompilerList`] holds.
pub const CAPACITY: usize = 32;

/// Read buffer for [`Scan::visit`], in bytes: it receives `comm` (16 bytes),
/// `stat` (~700 bytes) and `status` (~1.5 KiB on 6.x) in turn; 4 KiB leaves
/// room, as [`crate::kernel::pid::BUF_LEN`].
pub const BUF_LEN: usize = crate::kernel::pid::BUF_LEN;

/// How a pattern compares with a `comm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The whole comm.
    Exact,
    /// The comm starts with the text (`name*`, `ld.`).
    Prefix,
    /// The text followed by one or more decimal digits (`clang-17`).
    Digits,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Pattern {
    text: heapless::Vec<u8, NAME_MAX>,
    kind: Kind,
}

impl Pattern {
    fn matches(&self, comm: &[u8]) -> bool {
        match self.kind {
            Kind::Exact => comm == self.text.as_slice(),
            Kind::Prefix => comm.starts_with(&self.text),
            Kind::Digits => comm
                .strip_prefix(self.text.as_slice())
                .is_some_and(|n| !n.is_empty() && n.iter().all(u8::is_ascii_digit)),
        }
    }
}

/// The names a process's `comm` is compared with: at most [`CAPACITY`]
/// patterns of at most [`NAME_MAX`] bytes, stored inline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompilerList {
    patterns: heapless::Vec<Pattern, CAPACITY>,
}

const DEFAULT: [(&[u8], Kind); 21] = [
    (b"cc1", Kind::Exact),
    (b"cc1plus", Kind::Exact),
    (b"cc1obj", Kind::Exact),
    (b"cc1objplus", Kind::Exact),
    (b"lto1", Kind::Exact),
    (b"f951", Kind::Exact),
    (b"gnat1", Kind::Exact),
    (b"rustc", Kind::Exact),
    (b"clang", Kind::Exact),
    (b"clang++", Kind::Exact),
    (b"ld", Kind::Exact),
    (b"lld", Kind::Exact),
    (b"mold", Kind::Exact),
    (b"cicc", Kind::Exact),
    (b"ptxas", Kind::Exact),
    (b"javac", Kind::Exact),
    (b"go", Kind::Exact),
    (b"compile", Kind::Exact),
    (b"clang-", Kind::Digits),
    (b"clang++-", Kind::Digits),
    (b"ld.", Kind::Prefix),
];

impl Default for CompilerList {
    fn default() -> Self {
        Self::default_list()
    }
}

impl CompilerList {
    /// The list of SPEC.md: `cc1 cc1plus cc1obj cc1objplus lto1 f951 gnat1
    /// rustc clang clang++ ld lld mold cicc ptxas javac go compile` (whole
    /// comm), `clang-<N>` and `clang++-<N>` (N: one or more digits) and
    /// `ld.<anything>` (ld.bfd, ld.gold, ld.lld).
    pub fn default_list() -> Self {
        let mut patterns = heapless::Vec::new();
        for (text, kind) in DEFAULT {
            // 21 patterns of at most 10 bytes: within both capacities.
            if let Ok(text) = heapless::Vec::from_slice(text) {
                let _ = patterns.push(Pattern { text, kind });
            }
        }
        CompilerList { patterns }
    }

    /// Parses a `--compilers` value, `a,b,c`, which replaces the whole list.
    ///
    /// Each name is trimmed of surrounding white space and compared with the
    /// whole comm; a name ending in `*` matches every comm that starts with
    /// the rest (`cc1*` matches `cc1` and `cc1plus`).
    ///
    /// # Errors
    /// [`ParseErrorKind::Malformed`] for an empty name (`a,,b`, a trailing
    /// comma, a lone `*`), a `*` anywhere but at the end, or a name longer
    /// than [`NAME_MAX`] (15) bytes, which no comm could equal;
    /// [`ParseErrorKind::TooMany`] for more than [`CAPACITY`] names.
    pub fn parse(list: &[u8]) -> Result<Self, ParseError> {
        let malformed = ParseError::at(ParseErrorKind::Malformed, 0);
        let mut patterns = heapless::Vec::new();
        for name in list.split(|&c| c == b',') {
            let name = trim(name);
            let (text, kind) = match name.strip_suffix(b"*") {
                Some(t) => (t, Kind::Prefix),
                None => (name, Kind::Exact),
            };
            if text.is_empty() || text.contains(&b'*') {
                return Err(malformed);
            }
            let text = heapless::Vec::from_slice(text).map_err(|_| malformed)?;
            patterns
                .push(Pattern { text, kind })
                .map_err(|_| ParseError::at(ParseErrorKind::TooMany, 0))?;
        }
        Ok(CompilerList { patterns })
    }

    /// True when `comm` (as from [`parse_comm`]) matches a pattern.
    pub fn matches(&self, comm: &[u8]) -> bool {
        self.patterns.iter().any(|p| p.matches(comm))
    }

    /// Number of patterns.
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// True when the list has no pattern (never after a successful
    /// [`CompilerList::parse`]).
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }
}

/// Where the per-process files come from: the real `/proc` ([`ProcDir`]) or
/// a test double that injects errors.
pub trait PidFiles {
    /// Reads the whole of `/proc/<pid>/<file>` (`file` is `comm`, `stat` or
    /// `status`) into `buf`.
    ///
    /// # Errors
    /// A [`ReadError`]; [`ReadError::is_gone`] when the process has exited.
    fn read<'b>(&mut self, pid: u32, file: &str, buf: &'b mut [u8]) -> Result<&'b [u8], ReadError>;

    /// Opens `file` of process `pid` to keep it ([`kept_status::KeptCompilers`]);
    /// `None` where files cannot be kept (the default: test doubles).
    fn open(&mut self, pid: u32, file: &str) -> Option<OwnedFd> {
        let _ = (pid, file);
        None
    }
}

/// [`PidFiles`] over an open `proc/` directory; paths `<pid>/<file>` are
/// formatted on the stack.
#[derive(Clone, Copy, Debug)]
pub struct ProcDir<'fd>(pub BorrowedFd<'fd>);

impl PidFiles for ProcDir<'_> {
    /// Reads `<pid>/<file>` relative to the directory.
    ///
    /// # Errors
    /// As [`read_at`]; `Open(ENAMETOOLONG)` when `file` is longer than 40
    /// bytes.
    fn read<'b>(&mut self, pid: u32, file: &str, buf: &'b mut [u8]) -> Result<&'b [u8], ReadError> {
        let mut path = [0u8; 64];
        let p = pid_path(&mut path, pid, file).ok_or(ReadError::Open(Errno::NAMETOOLONG))?;
        // comm, stat and status are generated whole per read: one read(2).
        read_once_at(self.0, p, buf)
    }

    /// Opens `<pid>/<file>` relative to the directory.
    fn open(&mut self, pid: u32, file: &str) -> Option<OwnedFd> {
        let mut path = [0u8; 64];
        open_file_at(self.0, pid_path(&mut path, pid, file)?).ok()
    }
}

/// `<pid>/<file>` formatted into `out` with its terminating NUL, as the
/// C string openat(2) takes (passed as it is: no copy made to add the
/// NUL); `None` when it does not fit or `file` holds a NUL. Once per
/// process per tick.
pub fn pid_path<'o>(out: &'o mut [u8; 64], pid: u32, file: &str) -> Option<&'o CStr> {
    let head = join_num(out, "", u64::from(pid), "/").map(str::len)?;
    let end = head.checked_add(file.len())?;
    out.get_mut(head..end)?.copy_from_slice(file.as_bytes());
    *out.get_mut(end)? = 0;
    CStr::from_bytes_with_nul(out.get(..=end)?).ok()
}

/// What [`Scan::visit_comm`] learnt of a process.
#[derive(Clone, Copy, Debug, Default)]
struct Visit {
    /// Whether it is a kernel thread; `None` when not learnt (not asked,
    /// or its files could not be read).
    kernel_thread: Option<bool>,
    /// Its comm (16 bytes, the length) when it was counted as one of the
    /// build's compilers.
    own: Option<([u8; 16], usize)>,
    /// Its parent, when its `stat` was read.
    ppid: Option<u32>,
}

impl Visit {
    /// A user process whose parent is `ppid`, nothing else to say.
    fn user(ppid: u32) -> Visit {
        Visit {
            kernel_thread: Some(false),
            own: None,
            ppid: Some(ppid),
        }
    }
}

/// What one scan of the processes found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanResult {
    /// Live compiler processes (kernel threads, zombies and vanished
    /// processes excluded).
    pub compilers: u32,
    /// Processes with a compiler's name that were zombies (or dead).
    pub zombies: u32,
    /// Sum over the compilers of `VmRSS` (else rss pages × page size), in
    /// KiB.
    pub rss_sum_kib: u64,
    /// Sum over the compilers of their size (`VmHWM`, else `VmRSS`, else rss
    /// pages × page size), in KiB.
    pub hwm_sum_kib: u64,
    /// Size of the largest compiler, in KiB; 0 when none runs.
    pub peak_kib: u64,
    /// Comm of the largest compiler, first [`ScanResult::peak_comm_len`]
    /// bytes; see [`ScanResult::peak_comm`].
    pub peak_comm: [u8; 16],
    /// Length of the name in [`ScanResult::peak_comm`].
    pub peak_comm_len: u8,
    /// Of the compilers, those descending from the build's process (see
    /// [`Scan::within`]; none without a build): their number, …
    pub build_compilers: u32,
    /// … their `VmRSS` summed, KiB, …
    pub build_rss_sum_kib: u64,
    /// … the size (as `peak_kib`) of the largest, KiB, …
    pub build_peak_kib: u64,
    /// … its comm (first [`ScanResult::build_peak_comm_len`] bytes), …
    pub build_peak_comm: [u8; 16],
    /// Length of the name in [`ScanResult::build_peak_comm`].
    pub build_peak_comm_len: u8,
    /// … and their pids, the first [`BUILD_PIDS`] (which processes were
    /// counted as the build's); see [`ScanResult::build_pids`].
    pub build_pids: [u32; BUILD_PIDS],
    /// Number of pids in [`ScanResult::build_pids`].
    pub build_pids_len: u8,
}

/// Most build compilers whose pids one scan keeps: `-j` rarely passes 32
/// on the hosts headroom is for; 64 leaves room. Past it, more are counted
/// but not named.
pub const BUILD_PIDS: usize = 64;

/// Which processes are THE BUILD (SPEC.md "The build and the host").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// No build is followed (plain `record`): the `build_*` totals stay 0.
    None,
    /// The process `pid` and its descendants: a process belongs when its
    /// parent chain (at most [`MAX_DEPTH`] steps, read from `stat`)
    /// reaches `pid`.
    Tree(u32),
    /// The processes of one memory cgroup and its descendants: a process
    /// belongs when the path of its `memory` line in `/proc/PID/cgroup`
    /// (v1: the line naming `memory`; v2: `0::`) is this path or below it.
    Cgroup(&'a [u8]),
}

impl Default for ScanResult {
    fn default() -> Self {
        ScanResult {
            compilers: 0,
            zombies: 0,
            rss_sum_kib: 0,
            hwm_sum_kib: 0,
            peak_kib: 0,
            peak_comm: [0; 16],
            peak_comm_len: 0,
            build_compilers: 0,
            build_rss_sum_kib: 0,
            build_peak_kib: 0,
            build_peak_comm: [0; 16],
            build_peak_comm_len: 0,
            build_pids: [0; BUILD_PIDS],
            build_pids_len: 0,
        }
    }
}

impl ScanResult {
    /// The comm of the largest compiler; empty when none runs. A real comm
    /// is at most 15 bytes; a longer one (only from a hand-made tree) keeps
    /// its first 16.
    pub fn peak_comm(&self) -> &[u8] {
        self.peak_comm
            .get(..usize::from(self.peak_comm_len))
            .unwrap_or(&self.peak_comm)
    }

    /// The comm of the build's largest compiler; empty when none runs.
    pub fn build_peak_comm(&self) -> &[u8] {
        self.build_peak_comm
            .get(..usize::from(self.build_peak_comm_len))
            .unwrap_or(&self.build_peak_comm)
    }

    /// The pids of the build's compilers (at most [`BUILD_PIDS`]), in the
    /// order they were visited.
    pub fn build_pids(&self) -> &[u32] {
        self.build_pids
            .get(..usize::from(self.build_pids_len))
            .unwrap_or(&self.build_pids)
    }
}

/// One pass over the processes: feed each pid to [`Scan::visit`] (or let
/// [`Scan::visit_dir`] list them), then take [`Scan::finish`].
#[derive(Clone, Debug)]
pub struct Scan<'l> {
    list: &'l CompilerList,
    page_size_kib: u64,
    scope: Scope<'l>,
    result: ScanResult,
}

/// True when `pid` (whose parent is `ppid`) is `root` or descends from it,
/// following parents through `stat` at most [`MAX_DEPTH`] steps.
fn descends_from(
    root: u32,
    pid: u32,
    ppid: u32,
    files: &mut impl PidFiles,
    buf: &mut [u8],
) -> bool {
    let mut cur = (pid, ppid);
    // Step 0 is the process itself; MAX_DEPTH steps up is the farthest.
    for _ in 0..=MAX_DEPTH {
        if cur.0 == root {
            return true;
        }
        if cur.1 <= 1 {
            return false;
        }
        cur = match files.read(cur.1, "stat", buf).map(parse_stat) {
            Ok(Ok(s)) => (s.pid, s.ppid),
            _ => return false,
        };
    }
    false
}

/// Longest parent chain followed from a compiler up to the build's
/// process: make → sh → gcc → cc1plus is 4; recursive makes and wrappers
/// add a few. A deeper chain counts as not the build's.
pub const MAX_DEPTH: usize = 32;

impl<'l> Scan<'l> {
    /// Starts a scan matching against `list`; `page_size_kib` is the read
    /// kernel's page size in KiB (4, 16 or 64; [`crate::kernel::root::page_kib`]),
    /// used only when `status` has no `Vm*` value.
    pub fn new(list: &'l CompilerList, page_size_kib: u64) -> Self {
        Scan {
            list,
            page_size_kib,
            scope: Scope::None,
            result: ScanResult::default(),
        }
    }

    /// Also totals, in the `build_*` fields, the compilers that belong to
    /// the build `scope` (see [`Scope`]).
    pub fn within(mut self, scope: Scope<'l>) -> Self {
        self.scope = scope;
        self
    }

    /// For a process tree's build, whether `pid`, whose parent is `ppid`,
    /// is one of its processes: CMD itself, or a child of one `classes`
    /// remembers as the build's (no read), else by its parent chain
    /// ([`MAX_DEPTH`] `stat` reads at most). False for any other scope.
    pub fn tree_member(
        &self,
        (pid, ppid): (u32, u32),
        classes: &Classes,
        files: &mut impl PidFiles,
        buf: &mut [u8],
    ) -> bool {
        match self.scope {
            Scope::Tree(root) => {
                pid == root
                    || classes
                        .member(ppid)
                        .unwrap_or_else(|| descends_from(root, pid, ppid, files, buf))
            }
            _ => false,
        }
    }

    /// Whether the process `pid`, which an OOM kill named, was one of a
    /// process tree's build: as `classes` remembers it from the last two
    /// listings, else, while it is still listed (exiting, or a zombie
    /// not yet reaped), by its parent ([`Scan::tree_member`]). `None`
    /// when neither can say: it started and ended between two listings.
    pub fn victim_member(
        &self,
        pid: u32,
        classes: &Classes,
        files: &mut impl PidFiles,
        buf: &mut [u8],
    ) -> Option<bool> {
        if let Some(known) = classes.member(pid) {
            return Some(known);
        }
        let ppid = match files.read(pid, "stat", buf).map(parse_stat) {
            Ok(Ok(s)) => s.ppid,
            _ => return None,
        };
        Some(self.tree_member((pid, ppid), classes, files, buf))
    }

    /// True when `pid`, whose parent is `ppid`, belongs to the build.
    fn in_build(&self, pid: u32, ppid: u32, files: &mut impl PidFiles, buf: &mut [u8]) -> bool {
        match self.scope {
            Scope::None => false,
            Scope::Tree(root) => descends_from(root, pid, ppid, files, buf),
            Scope::Cgroup(path) => match files.read(pid, "cgroup", buf) {
                Ok(text) => crate::kernel::cgroup::path_for(text, b"memory")
                    .is_some_and(|(_, p)| crate::kernel::cgroup::is_within(p, path)),
                Err(_) => false,
            },
        }
    }

    /// Looks at process `pid`, reading its files from `files` into `buf`
    /// ([`BUF_LEN`] bytes).
    ///
    /// `comm` is read first; only for a matching name are `stat` (zombies
    /// are counted in [`ScanResult::zombies`] and skipped, kernel threads
    /// skipped) and then `status` read. A read of `comm` or `stat` that
    /// fails, or of `status` that fails with [`ReadError::is_gone`], skips
    /// the process. Any other `status` failure (EACCES, truncation) falls
    /// back to the rss of `stat`.
    pub fn visit(&mut self, pid: u32, files: &mut impl PidFiles, buf: &mut [u8]) {
        self.visit_comm(pid, files, buf, false);
    }

    /// [`Scan::visit`], saying what it learnt of `pid`; when `classify`, a
    /// process whose name is not a compiler's has its `stat` read too, to
    /// learn whether it is a kernel thread ([`Classes`]).
    fn visit_comm(
        &mut self,
        pid: u32,
        files: &mut impl PidFiles,
        buf: &mut [u8],
        classify: bool,
    ) -> Visit {
        let mut comm = [0u8; 16];
        let comm_len = match files.read(pid, "comm", buf) {
            Ok(raw) => {
                let c = parse_comm(raw);
                if !self.list.matches(c) {
                    let stat = classify.then(|| files.read(pid, "stat", buf).map(parse_stat));
                    return match stat {
                        Some(Ok(Ok(s))) => Visit {
                            kernel_thread: Some(s.is_kernel_thread()),
                            own: None,
                            ppid: Some(s.ppid),
                        },
                        _ => Visit::default(),
                    };
                }
                let n = c.len().min(comm.len());
                if let (Some(dst), Some(src)) = (comm.get_mut(..n), c.get(..n)) {
                    dst.copy_from_slice(src);
                }
                n
            }
            Err(_) => return Visit::default(),
        };
        let (rss_pages, ppid) = match files.read(pid, "stat", buf).map(parse_stat) {
            Ok(Ok(s)) if s.is_zombie() => {
                self.result.zombies = self.result.zombies.saturating_add(1);
                return Visit::user(s.ppid);
            }
            Ok(Ok(s)) if s.is_kernel_thread() => {
                return Visit {
                    kernel_thread: Some(true),
                    own: None,
                    ppid: Some(s.ppid),
                };
            }
            Ok(Ok(s)) => (s.rss_pages, s.ppid),
            Ok(Err(_)) | Err(_) => return Visit::default(),
        };
        let own = self.in_build(pid, ppid, files, buf);
        let from_stat = rss_pages.saturating_mul(self.page_size_kib);
        let status = match files.read(pid, "status", buf) {
            Ok(raw) => parse_status(raw),
            Err(e) if e.is_gone() => return Visit::default(),
            Err(_) => Default::default(),
        };
        let rss = status.vm_rss_kib.unwrap_or(from_stat);
        let size = status.vm_hwm_kib.unwrap_or(rss);
        let name = comm.get(..comm_len).unwrap_or(&comm);
        self.add(pid, name, rss, size, own);
        Visit {
            kernel_thread: Some(false),
            own: own.then_some((comm, comm_len)),
            ppid: Some(ppid),
        }
    }

    /// Counts the live compiler `pid` named `comm`, of `rss` and `size`
    /// KiB (see [`ScanResult`]), among the build's when `own`.
    fn add(&mut self, pid: u32, comm: &[u8], rss: u64, size: u64, own: bool) {
        let mut name = [0u8; 16];
        let n = comm.len().min(name.len());
        name[..n].copy_from_slice(&comm[..n]);
        let len = u8::try_from(n).unwrap_or(16);
        let r = &mut self.result;
        r.compilers = r.compilers.saturating_add(1);
        r.rss_sum_kib = r.rss_sum_kib.saturating_add(rss);
        r.hwm_sum_kib = r.hwm_sum_kib.saturating_add(size);
        // The first compiler is the peak even at 0 KiB, so it has a name.
        if r.compilers == 1 || size > r.peak_kib {
            r.peak_kib = size;
            r.peak_comm = name;
            r.peak_comm_len = len;
        }
        if own {
            r.build_compilers = r.build_compilers.saturating_add(1);
            r.build_rss_sum_kib = r.build_rss_sum_kib.saturating_add(rss);
            if r.build_compilers == 1 || size > r.build_peak_kib {
                r.build_peak_kib = size;
                r.build_peak_comm = name;
                r.build_peak_comm_len = len;
            }
            if let Some(slot) = r.build_pids.get_mut(usize::from(r.build_pids_len)) {
                *slot = pid;
                r.build_pids_len = r.build_pids_len.saturating_add(1);
            }
        }
    }

    /// Lists the open `proc/` directory `proc_dir` and visits every entry
    /// whose name is a pid, reading with [`ProcDir`]. `scratch` is the
    /// getdents64(2) buffer (any size works; 4 KiB lists ~150 entries per
    /// call).
    ///
    /// # Errors
    /// The errno of listing the directory.
    pub fn visit_dir(
        &mut self,
        proc_dir: BorrowedFd<'_>,
        scratch: &mut [MaybeUninit<u8>],
        buf: &mut [u8],
    ) -> Result<(), Errno> {
        let mut files = ProcDir(proc_dir);
        for_each_entry(proc_dir, scratch, |name, _| {
            if let Some(pid) = parse_u64(name).and_then(|p| u32::try_from(p).ok()) {
                self.visit(pid, &mut files, buf);
            }
            true
        })
    }

    /// The totals of the scan.
    pub fn finish(self) -> ScanResult {
        self.result
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::kernel::root::Root;
    use rustix::fd::AsFd;
    use std::string::String;
    use std::vec::Vec;

    const F12: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/12-pid-stat-comm-spaces-parens"
    );
    const F14: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/14-kthread-zombie-vanished-pids"
    );

    /// KiB to MiB in tenths, rounded half up (CASE.md convention).
    fn mib_tenths(kib: u64) -> u64 {
        (kib * 10 + 512) / 1024
    }

    /// Wraps [`ProcDir`] and injects the errors of a `FAULTS` file
    /// (`path<TAB>open|read<TAB>ERRNO`, paths starting with `proc/`).
    struct Faulty<'fd> {
        inner: ProcDir<'fd>,
        faults: Vec<(String, String, Errno)>,
    }

    impl<'fd> Faulty<'fd> {
        fn new(inner: ProcDir<'fd>, text: &str) -> Self {
            let faults = text
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
                .map(|l| {
                    let v: Vec<&str> = l.split('\t').collect();
                    let errno = match v[2] {
                        "ENOENT" => Errno::NOENT,
                        "ESRCH" => Errno::SRCH,
                        "EACCES" => Errno::ACCESS,
                        other => panic!("unknown errno {other}"),
                    };
                    (String::from(v[0]), String::from(v[1]), errno)
                })
                .collect();
            Faulty { inner, faults }
        }
    }

    impl PidFiles for Faulty<'_> {
        fn read<'b>(
            &mut self,
            pid: u32,
            file: &str,
            buf: &'b mut [u8],
        ) -> Result<&'b [u8], ReadError> {
            let path = std::format!("proc/{pid}/{file}");
            for (p, op, e) in &self.faults {
                if *p == path {
                    return Err(match op.as_str() {
                        "open" => ReadError::Open(*e),
                        _ => ReadError::Read(*e),
                    });
                }
            }
            self.inner.read(pid, file, buf)
        }
    }

    fn pids(proc_dir: BorrowedFd<'_>) -> Vec<u32> {
        let mut scratch = [MaybeUninit::uninit(); 512];
        let mut v = Vec::new();
        for_each_entry(proc_dir, &mut scratch, |n, _| {
            if let Some(p) = parse_u64(n) {
                v.push(p as u32);
            }
            true
        })
        .unwrap();
        v.sort();
        v
    }

    fn scan_with(root: &str, faults: &str, list: &CompilerList, page_kib: u64) -> ScanResult {
        let root = Root::open(root).unwrap();
        let proc_dir = root.open_dir("proc").unwrap();
        let mut files = Faulty::new(ProcDir(proc_dir.as_fd()), faults);
        let mut scan = Scan::new(list, page_kib);
        let mut buf = [0u8; BUF_LEN];
        for pid in pids(proc_dir.as_fd()) {
            scan.visit(pid, &mut files, &mut buf);
        }
        scan.finish()
    }

    #[test]
    fn pid_path_is_the_c_string_of_pid_slash_file() {
        let mut out = [0xffu8; 64];
        assert_eq!(pid_path(&mut out, 0, "comm"), Some(c"0/comm"));
        assert_eq!(pid_path(&mut out, 1234567, "stat"), Some(c"1234567/stat"));
        assert_eq!(
            pid_path(&mut out, u32::MAX, "status"),
            Some(c"4294967295/status")
        );
        assert_eq!(
            pid_path(&mut out, 7, &"x".repeat(61)).map(|c| c.count_bytes()),
            Some(63)
        );
        assert_eq!(pid_path(&mut out, 7, &"x".repeat(62)), None);
        assert_eq!(pid_path(&mut out, 7, "a\0b"), None);
    }

    #[test]
    fn fixture_14_kthread_zombie_vanished_pids() {
        let faults = std::fs::read_to_string(std::format!("{F14}/FAULTS")).unwrap();
        let list = CompilerList::default_list();
        let r = scan_with(F14, &faults, &list, 4);
        assert_eq!((r.compilers, r.zombies), (2, 1));
        assert_eq!(
            (r.rss_sum_kib, r.hwm_sum_kib),
            (61_440 + 402_000, 64_000 + 455_000)
        );
        assert_eq!(
            (mib_tenths(r.rss_sum_kib), mib_tenths(r.hwm_sum_kib)),
            (4526, 5068)
        );
        assert_eq!((r.peak_kib, r.peak_comm()), (455_000, &b"cc1plus"[..]));

        // Without the injected ESRCH, 5604's empty status falls back to its
        // stat rss (180000 pages): proof the fault is what excludes it.
        let r = scan_with(F14, "", &list, 4);
        assert_eq!(r.compilers, 3);
        assert_eq!(r.peak_kib, 720_000);
        // …and that fallback uses the page size given, never 4 KiB.
        let r = scan_with(F14, "", &list, 16);
        assert_eq!(r.peak_kib, 2_880_000);

        // Kernel threads never count, even when their name is on the list.
        let list = CompilerList::parse(b"kthreadd,kworker*,make").unwrap();
        let r = scan_with(F14, &faults, &list, 4);
        assert_eq!(r.compilers, 1);
        assert_eq!((r.peak_kib, r.peak_comm()), (3300, &b"make"[..]));
    }

    #[test]
    fn fixture_14_other_errors() {
        // EACCES on status is not "gone": fall back to stat rss.
        let list = CompilerList::default_list();
        let r = scan_with(F14, "proc/5602/status\topen\tEACCES\n", &list, 4);
        assert_eq!(r.compilers, 3); // 5602, 5604 (empty status), 5605
        assert_eq!(r.rss_sum_kib, 15_360 * 4 + 180_000 * 4 + 402_000);
        // A comm that vanishes skips the process.
        let r = scan_with(F14, "proc/5605/comm\tread\tESRCH\n", &list, 4);
        assert_eq!(r.compilers, 2);
        // A status that does not fit its buffer falls back too.
        let root = Root::open(F14).unwrap();
        let proc_dir = root.open_dir("proc").unwrap();
        let mut scan = Scan::new(&list, 4);
        let mut small = [0u8; 300]; // stat (~250 bytes) fits, status does not
        scan.visit(5605, &mut ProcDir(proc_dir.as_fd()), &mut small);
        let r = scan.finish();
        assert_eq!((r.compilers, r.peak_kib), (1, 100_500 * 4));
    }

    #[test]
    fn fixture_12_pid_stat_comm_spaces_parens() {
        let root = Root::open(F12).unwrap();
        let proc_dir = root.open_dir("proc").unwrap();
        let list = CompilerList::default_list();
        let mut scan = Scan::new(&list, 4);
        let mut scratch = [MaybeUninit::uninit(); 256];
        let mut buf = [0u8; BUF_LEN];
        scan.visit_dir(proc_dir.as_fd(), &mut scratch, &mut buf)
            .unwrap();
        let r = scan.finish();
        assert_eq!(r.compilers, 1);
        assert_eq!((r.rss_sum_kib, r.hwm_sum_kib), (792_000, 845_000));
        assert_eq!(
            (mib_tenths(r.rss_sum_kib), mib_tenths(r.hwm_sum_kib)),
            (7734, 8252)
        );
        assert_eq!((r.peak_kib, r.peak_comm()), (845_000, &b"cc1plus"[..]));

        // Names with spaces and parentheses can be listed too.
        let list = CompilerList::parse(b"Plex Media Serv, x) R 9 9 9 0 (").unwrap();
        let mut scan = Scan::new(&list, 4);
        scan.visit_dir(proc_dir.as_fd(), &mut scratch, &mut buf)
            .unwrap();
        let r = scan.finish();
        assert_eq!((r.compilers, r.rss_sum_kib), (2, 53_320 + 800));
        assert_eq!(r.peak_comm(), b"Plex Media Serv");
    }

    #[test]
    fn no_compiler_gives_zero_and_empty_comm() {
        let list = CompilerList::parse(b"nothing").unwrap();
        let r = scan_with(F12, "", &list, 4);
        assert_eq!(r, ScanResult::default());
        assert_eq!(r.peak_comm(), b"");
    }

    #[test]
    fn peak_with_zero_size_still_names_it() {
        // A compiler whose status says 0 kB is still the peak (0) with a name.
        struct One;
        impl PidFiles for One {
            fn read<'b>(
                &mut self,
                _: u32,
                file: &str,
                buf: &'b mut [u8],
            ) -> Result<&'b [u8], ReadError> {
                let s: &[u8] = match file {
                    "comm" => b"ld.gold\n",
                    "stat" => b"9 (ld.gold) R 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 0\n",
                    _ => b"VmRSS:\t0 kB\nVmHWM:\t0 kB\n",
                };
                let dst = buf
                    .get_mut(..s.len())
                    .ok_or(ReadError::Truncated { capacity: 0 })?;
                dst.copy_from_slice(s);
                Ok(dst)
            }
        }
        let list = CompilerList::default_list();
        let mut scan = Scan::new(&list, 4);
        scan.visit(9, &mut One, &mut [0u8; 256]);
        let r = scan.finish();
        assert_eq!(
            (r.compilers, r.peak_kib, r.peak_comm()),
            (1, 0, &b"ld.gold"[..])
        );
    }

    #[test]
    fn default_list_matches_and_near_misses() {
        let l = CompilerList::default_list();
        for yes in [
            &b"cc1"[..],
            b"cc1plus",
            b"cc1obj",
            b"cc1objplus",
            b"lto1",
            b"f951",
            b"gnat1",
            b"rustc",
            b"clang",
            b"clang++",
            b"ld",
            b"lld",
            b"mold",
            b"cicc",
            b"ptxas",
            b"javac",
            b"go",
            b"compile",
            b"clang-17",
            b"clang++-18",
            b"ld.bfd",
            b"ld.gold",
            b"ld.lld",
        ] {
            assert!(l.matches(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &b""[..],
            b"cc1plusx",
            b"xcc1",
            b"cc1 ",
            b"collect2",
            b"lto-wrapper",
            b"gcc",
            b"g++",
            b"make",
            b"cargo",
            b"clang-",
            b"clang-17a",
            b"clang-x",
            b"clang++-",
            b"ldd",
            b"gold",
            b"rustc\n",
            b"Rustc",
        ] {
            assert!(!l.matches(no), "{}", String::from_utf8_lossy(no));
        }
        assert_eq!(l.len(), 21);
        assert_eq!(CompilerList::default(), l);
    }

    #[test]
    fn parse_replaces_and_validates() {
        let l = CompilerList::parse(b"cc1*, rustc ,fifteen_bytes_x").unwrap();
        assert_eq!(l.len(), 3);
        assert!(l.matches(b"cc1") && l.matches(b"cc1plus") && l.matches(b"rustc"));
        assert!(l.matches(b"fifteen_bytes_x"));
        assert!(!l.matches(b"fifteen_bytes_"));
        assert!(!l.matches(b"rustc ") && !l.matches(b" rustc"));
        assert!(!l.matches(b"cc"));
        // The default list is replaced, not extended.
        assert!(!l.matches(b"clang"));
        let m = ParseError::at(ParseErrorKind::Malformed, 0);
        assert_eq!(CompilerList::parse(b""), Err(m));
        assert_eq!(CompilerList::parse(b"a,,b"), Err(m));
        assert_eq!(CompilerList::parse(b"a,"), Err(m));
        assert_eq!(CompilerList::parse(b"*"), Err(m));
        assert_eq!(CompilerList::parse(b"a*b"), Err(m));
        assert_eq!(CompilerList::parse(b"sixteen_bytes_xx"), Err(m));
        assert!(CompilerList::parse(b"fifteen_bytes_x").is_ok());
        assert!(CompilerList::parse(b"fifteen_bytes_x*").is_ok());
        let many: Vec<u8> = (0..33).map(|_| &b"a,"[..]).collect::<Vec<_>>().concat();
        assert_eq!(
            CompilerList::parse(&many[..many.len() - 1]),
            Err(ParseError::at(ParseErrorKind::TooMany, 0))
        );
        let exact: Vec<u8> = (0..32).map(|_| &b"a,"[..]).collect::<Vec<_>>().concat();
        assert_eq!(
            CompilerList::parse(&exact[..exact.len() - 1])
                .unwrap()
                .len(),
            32
        );
    }

    #[test]
    fn proc_dir_paths() {
        let root = Root::open(F12).unwrap();
        let proc_dir = root.open_dir("proc").unwrap();
        let mut p = ProcDir(proc_dir.as_fd());
        let mut buf = [0u8; 64];
        assert_eq!(p.read(4242, "comm", &mut buf).unwrap(), b"cc1plus\n");
        assert!(p.read(1, "comm", &mut buf).unwrap_err().is_gone());
        assert_eq!(
            p.read(u32::MAX, &"x".repeat(60), &mut buf),
            Err(ReadError::Open(Errno::NAMETOOLONG))
        );
    }

    #[test]
    fn the_builds_compilers_are_told_apart_by_their_parent_chain() {
        /// make (10) → sh (11) → cc1plus (12); another cc1plus (20) under
        /// init; a cc1plus (30) whose parent chain cannot be read.
        struct Tree;
        impl PidFiles for Tree {
            fn read<'b>(
                &mut self,
                pid: u32,
                file: &str,
                buf: &'b mut [u8],
            ) -> Result<&'b [u8], ReadError> {
                let (comm, ppid, rss) = match pid {
                    10 => ("make", 1, 1),
                    11 => ("sh", 10, 1),
                    12 => ("cc1plus", 11, 300),
                    20 => ("cc1plus", 1, 900),
                    30 => ("cc1plus", 31, 50),
                    _ => return Err(ReadError::Open(Errno::NOENT)),
                };
                let text = match file {
                    "comm" => std::format!("{comm}\n"),
                    // 12 and 30 are in the build's cgroup (30 double-forked
                    // out of its tree); 20 is another cgroup's.
                    "cgroup" => match pid {
                        12 => "4:memory:/ci/headroom-9.build\n0::/\n".into(),
                        30 => "4:memory:/ci/headroom-9.build/sub\n".into(),
                        _ => "4:memory:/ci/headroom-9.buildx\n".into(),
                    },
                    "stat" => std::format!(
                        "{pid} ({comm}) S {ppid} 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 0\n"
                    ),
                    _ => std::format!("VmRSS:\t{} kB\nVmHWM:\t{} kB\n", rss * 1024, rss * 2048),
                };
                let n = text.len();
                buf[..n].copy_from_slice(text.as_bytes());
                Ok(&buf[..n])
            }
        }
        let list = CompilerList::default_list();
        let mut buf = [0u8; BUF_LEN];
        let scan_with = |within| {
            let mut scan = Scan::new(&list, 4).within(within);
            for pid in [10, 11, 12, 20, 30] {
                scan.visit(pid, &mut Tree, &mut buf.clone());
            }
            scan.finish()
        };
        let r = scan_with(Scope::Tree(10));
        assert_eq!((r.compilers, r.build_compilers), (3, 1));
        assert_eq!(r.build_rss_sum_kib, 300 * 1024);
        assert_eq!(r.build_peak_kib, 600 * 1024);
        assert_eq!(r.build_peak_comm(), b"cc1plus");
        assert_eq!(r.build_pids(), &[12]);
        // The host's largest (pid 20, 1800 MiB) is not the build's.
        assert_eq!(r.peak_kib, 1800 * 1024);
        // The compiler itself as the build's process.
        let r = scan_with(Scope::Tree(20));
        assert_eq!((r.build_compilers, r.build_rss_sum_kib), (1, 900 * 1024));
        // No build: no compiler is the build's.
        let r = scan_with(Scope::None);
        assert_eq!((r.build_compilers, r.build_rss_sum_kib), (0, 0));
        assert_eq!((r.build_peak_comm(), r.build_pids()), (&b""[..], &[][..]));
        // A cgroup: its members wherever their parents are, not a sibling
        // whose name merely starts the same.
        let r = scan_with(Scope::Cgroup(b"/ci/headroom-9.build"));
        assert_eq!(r.build_pids(), &[12, 30]);
        assert_eq!(r.build_rss_sum_kib, 350 * 1024);
        let _ = &mut buf;
    }

    /// SPEC: a process belongs when its parent chain, at most 32 steps,
    /// reaches the build's process; 33 steps is too far.
    #[test]
    fn the_parent_chain_reaches_32_steps_not_33() {
        /// cc1 is pid 100; each pid's parent is the next one, up to 140.
        struct Chain;
        impl PidFiles for Chain {
            fn read<'b>(
                &mut self,
                pid: u32,
                file: &str,
                buf: &'b mut [u8],
            ) -> Result<&'b [u8], ReadError> {
                if !(100..=140).contains(&pid) {
                    return Err(ReadError::Open(Errno::NOENT));
                }
                let comm = if pid == 100 { "cc1" } else { "sh" };
                let text = match file {
                    "comm" => std::format!("{comm}\n"),
                    "stat" => std::format!(
                        "{pid} ({comm}) S {} 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 0\n",
                        pid + 1
                    ),
                    _ => "VmRSS:\t1024 kB\n".into(),
                };
                buf[..text.len()].copy_from_slice(text.as_bytes());
                Ok(&buf[..text.len()])
            }
        }
        let list = CompilerList::default_list();
        let mut buf = [0u8; BUF_LEN];
        let builds = |root| {
            let mut scan = Scan::new(&list, 4).within(Scope::Tree(root));
            scan.visit(100, &mut Chain, &mut buf.clone());
            scan.finish().build_compilers
        };
        assert_eq!(builds(100 + 32), 1);
        assert_eq!(builds(100 + 33), 0);
        let _ = &mut buf;
    }
}
