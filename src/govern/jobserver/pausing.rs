//! The pausing of `run --jobserver`'s build: its jobs found at each
//! governor tick, the one `pause_rule` names stopped (SIGSTOP) or
//! continued (SIGCONT). The jobs are `followed::jobtree`'s, read from the
//! `stat` of the build cgroup's members when it has a cgroup (no listing
//! of `/proc`), else by a scan of `/proc`.
//!
//! # References
//! kill(2), signal(7) (`SIGSTOP`, `SIGCONT`), proc(5) (`/proc/PID/stat`).

use core::mem::MaybeUninit;

use rustix::fd::{AsFd, OwnedFd};
use rustix::process::{Pid, Signal};

use crate::followed::buildcg::{BuildCgroup, Members};
use crate::followed::compilers::{PidFiles, ProcDir, pid_path};
use crate::followed::jobkey::{self, Work};
use crate::followed::jobtree::{JOBS_CAP, Job, JobTree, PROCS_CAP};
use crate::followed::makeshell;
use crate::govern::jobserver::estimate::with_margin;
use crate::govern::jobserver::job_weights::{JobWeights, Started};
use crate::govern::jobserver::lease::{PAUSED_CAP, Paused};
use crate::govern::jobserver::notes::{Note, Tell};
use crate::govern::jobserver::pause_rule::{self, Act, Pauser};
use crate::govern::jobserver::room::Weight;
use crate::kernel::root::Root;

/// Bytes of the directory-listing buffer a scan of `/proc` or of a
/// cgroup's members reads through (getdents64(2)).
pub const SCRATCH_LEN: usize = 8 * 1024;

/// Bytes of a job's command line read to key it (`followed::jobkey`):
/// one page, what one read(2) of `/proc/PID/cmdline` gives.
pub const CMDLINE_LEN: usize = 4096;

/// Bytes of a directory name kept: the build's, and a job's.
pub const DIR_LEN: usize = 256;

/// Where a scan of the build's jobs works: the job table (about 40 KiB)
/// and the buffers it reads `/proc` through.
pub struct JobWork {
    tree: JobTree,
    scratch: [MaybeUninit<u8>; SCRATCH_LEN],
    buf: [u8; crate::kernel::pid::BUF_LEN],
    cmdline: [u8; CMDLINE_LEN],
}

impl JobWork {
    /// An empty table and buffers.
    pub fn new() -> JobWork {
        JobWork {
            tree: JobTree::new(),
            scratch: [MaybeUninit::uninit(); SCRATCH_LEN],
            buf: [0; crate::kernel::pid::BUF_LEN],
            cmdline: [0; CMDLINE_LEN],
        }
    }
}

impl Default for JobWork {
    fn default() -> Self {
        JobWork::new()
    }
}

/// Pausing while CMD runs.
pub struct Pausing {
    work: JobWork,
    /// The build cgroup's directory when CMD is in one: its jobs are then
    /// found among its members, not by a scan of all of `/proc`.
    members: Option<Members<OwnedFd>>,
    /// The members' pids, read each tick ([`PROCS_CAP`] at most).
    pids: heapless::Vec<u32, PROCS_CAP>,
    pauser: Pauser,
    /// CMD's pid and start time (clock ticks after boot).
    cmd: (u32, u64),
    proc_dir: OwnedFd,
    page_kib: u64,
    /// When each paused job was paused (monotonic ms), for `--explain`.
    since: heapless::Vec<(Paused, u64), PAUSED_CAP>,
    explain: bool,
    /// The last [`Pausing::scan`] read the jobs.
    scanned: bool,
    /// The jobs the last [`Pausing::scan`] found; `None` when it could
    /// not read them.
    seen: Option<u32>,
    /// Each job's own weight: its key, its remembered peak, its peak.
    pub weights: JobWeights,
    /// Jobs are keyed and measured (`--pool`: where their peaks are
    /// remembered); off, a scan reads no command line or `status`.
    pub weighing: bool,
    /// The jobs the last scan saw start, told by the next
    /// [`Pausing::act`] with `--explain`.
    started: heapless::Vec<Started, JOBS_CAP>,
    /// The jobs of make already looked at for a `$(shell …)`
    /// (`followed::makeshell`): pid, start time, and whether it runs one
    /// (then no job). Each is looked at once, when first seen.
    shell_fns: heapless::Vec<(u32, u64, bool), JOBS_CAP>,
}

impl Pausing {
    /// Follows CMD (`pid`, just started) in the live `root`'s `proc/`,
    /// among the members of its build cgroup `cg` when it has one;
    /// `explain`: each pause and continue is told; `pace_ms`: the
    /// governor's pace (`driver::TICK_MS`). `None` when `root` is not the
    /// live host (a tree's pids are not this host's to stop), or when
    /// CMD's `stat` cannot be read (CMD already gone).
    pub fn follow(
        root: &Root,
        pid: u32,
        explain: bool,
        cg: Option<&BuildCgroup>,
        pace_ms: u64,
    ) -> Option<Pausing> {
        if !root.is_live() {
            return None;
        }
        let members = cg.and_then(|cg| cg.members().ok());
        let proc_dir = root.open_dir("proc").ok()?;
        let mut work = JobWork::new();
        let start = stat_start(&proc_dir, pid, &mut work.buf)?;
        Some(Pausing {
            work,
            pids: heapless::Vec::new(),
            members,
            pauser: Pauser::new(pace_ms),
            cmd: (pid, start),
            proc_dir,
            page_kib: crate::kernel::root::page_kib(root, true),
            since: heapless::Vec::new(),
            explain,
            scanned: false,
            seen: None,
            weights: JobWeights::new(),
            weighing: false,
            started: heapless::Vec::new(),
            shell_fns: heapless::Vec::new(),
        })
    }

    /// The first half of a tick: the jobs found ([`Pausing::find_jobs`]),
    /// make's `$(shell …)` commands left out. Returns the most one of
    /// them holds now, MiB, for the estimate per job
    /// (`pause_rule::largest_mb`); `None` when none was found.
    pub fn scan(&mut self) -> Option<u64> {
        self.scanned = self.find_jobs().is_ok();
        if self.scanned {
            self.drop_shell_functions();
        }
        self.seen = self
            .scanned
            .then(|| u32::try_from(self.work.tree.jobs().len()).unwrap_or(u32::MAX));
        if !self.scanned {
            return None;
        }
        if !self.weighing {
            return pause_rule::largest_mb(self.work.tree.jobs());
        }
        let proc_dir = &self.proc_dir;
        let (cmdline, buf) = (&mut self.work.cmdline, &mut self.work.buf);
        // The build tool's own directory (after make's -C), read once a
        // scan and only when a job is keyed.
        let tool = self.work.tree.tool;
        let mut tool_dir: Option<heapless::Vec<u8, DIR_LEN>> = None;
        self.started.clear();
        self.weights.follow(
            self.work.tree.jobs(),
            |j| {
                let base = tool_dir.get_or_insert_with(|| {
                    let mut d = heapless::Vec::new();
                    let _ = read_cwd(proc_dir, tool, &mut d);
                    d
                });
                key_of(proc_dir, j, base, cmdline)
            },
            |j| reached_kib(proc_dir, j, buf),
            &mut self.started,
        );
        pause_rule::largest_mb(self.work.tree.jobs())
    }

    /// The build's [`Weight`] for the token handout and the pool, each
    /// job of the last scan by its own expected peak, a job not started
    /// yet by the lightest remembered peak still to run (`job_weights`),
    /// `peak_mb` (the build's) for the rest; `None` when the pool
    /// remembers no job of this run id: every job then weighs `peak_mb`,
    /// the one-peak rule.
    pub fn weight(&mut self, peak_mb: u64) -> Option<Weight> {
        if !self.weights.has_history() || self.seen.is_none() {
            return None;
        }
        let jobs = self.work.tree.jobs();
        let mut growth: u64 = 0;
        for j in jobs {
            if self
                .pauser
                .paused()
                .iter()
                .any(|p| (p.pid, p.start_ticks) == (j.pid, j.start_ticks))
            {
                continue;
            }
            let peak = self
                .weights
                .expected_mb(j.pid, j.start_ticks)
                .unwrap_or(peak_mb);
            growth = growth.saturating_add(peak.saturating_sub(j.rss_kib / 1024));
        }
        Some(Weight {
            counted: u32::try_from(jobs.len()).unwrap_or(u32::MAX),
            growth_mb: growth,
            held_mb: 0,
            next_mb: self.weights.next_mb().unwrap_or(peak_mb).max(1),
            paused: self.paused_now(),
        })
    }

    /// The second half: the rule applied to the jobs of the last
    /// [`Pausing::scan`] with `peak_mb` per job (the estimate, which has
    /// taken them in) and `room_mb` (`room::room_mb` of usable memory less
    /// the other builds' growth), the signal sent, and what was done told
    /// to `tell` with `--explain`. Returns the jobs paused now.
    pub fn act(&mut self, peak_mb: u64, room_mb: i64, now_ms: u64, tell: &mut impl Tell) -> u32 {
        if !core::mem::take(&mut self.scanned) {
            return self.paused_now();
        }
        if self.explain {
            for s in &self.started {
                tell.tell(&Note::JobStarted {
                    pid: s.pid,
                    key: s.key.as_deref().unwrap_or_default(),
                    expected_mb: s.remembered_mb.map_or(peak_mb, with_margin),
                    remembered_mb: s.remembered_mb,
                });
            }
        }
        let weights = &self.weights;
        let act = self.pauser.tick(
            self.work.tree.jobs(),
            |pid, start| weights.expected_mb(pid, start),
            peak_mb,
            room_mb,
            now_ms,
        );
        let told = |i: usize| {
            let j = self.work.tree.jobs()[i];
            let key = self.weights.key(j.pid, j.start_ticks).unwrap_or_default();
            let expected_mb = self
                .weights
                .expected_mb(j.pid, j.start_ticks)
                .unwrap_or(peak_mb);
            (key, expected_mb)
        };
        let note = match act {
            Act::Hold => None,
            Act::Pause(i) => {
                self.signal(i, Signal::STOP);
                let j = self.work.tree.jobs()[i];
                let p = Paused {
                    pid: j.pid,
                    start_ticks: j.start_ticks,
                };
                let _ = self.since.push((p, now_ms));
                let (key, expected_mb) = told(i);
                Some(Note::Paused {
                    pid: j.pid,
                    key,
                    expected_mb,
                    rss_mb: j.rss_kib / 1024,
                    room_mb,
                })
            }
            Act::Resume(i) => {
                self.signal(i, Signal::CONT);
                let j = self.work.tree.jobs()[i];
                let at = self
                    .since
                    .iter()
                    .position(|(p, _)| (p.pid, p.start_ticks) == (j.pid, j.start_ticks));
                let held = at.map_or(0, |k| now_ms.saturating_sub(self.since.swap_remove(k).1));
                let (key, expected_mb) = told(i);
                Some(Note::Continued {
                    pid: j.pid,
                    key,
                    expected_mb,
                    held_ms: held,
                    room_mb,
                })
            }
            Act::ResumeAll => {
                for (p, _) in &self.since {
                    let at = self
                        .work
                        .tree
                        .jobs()
                        .iter()
                        .position(|j| (j.pid, j.start_ticks) == (p.pid, p.start_ticks));
                    if let Some(i) = at {
                        self.signal(i, Signal::CONT);
                    }
                }
                Some(Note::ContinuedAll {
                    jobs: self.since.len(),
                })
            }
        };
        if let (Some(n), true) = (note, self.explain) {
            tell.tell(&n);
        }
        let pauser = &self.pauser;
        self.since.retain(|(p, _)| pauser.paused().contains(p));
        self.paused_now()
    }

    /// Leaves out of the tree the children of make that run a
    /// `$(shell …)` (`followed::makeshell::runs_shell_function`): they
    /// hold no slot, and are not counted, paused, keyed or remembered.
    /// Each job of make is looked at when first seen; the verdict is kept
    /// while it lives (its fd 1 was set before it became another program
    /// than make: until then it is a build tool, no job).
    fn drop_shell_functions(&mut self) {
        let (tree, scratch) = (&mut self.work.tree, &mut self.work.scratch);
        let known = &mut self.shell_fns;
        let jobs = tree.jobs();
        known
            .retain(|&(pid, start, _)| jobs.iter().any(|j| (j.pid, j.start_ticks) == (pid, start)));
        for j in jobs.iter().filter(|j| j.by_make) {
            if known.iter().any(|k| (k.0, k.1) == (j.pid, j.start_ticks)) {
                continue;
            }
            let shell =
                makeshell::runs_shell_function(self.proc_dir.as_fd(), j.pid, j.parent, scratch);
            // Within JOBS_CAP, as the jobs are.
            let _ = known.push((j.pid, j.start_ticks, shell));
        }
        if known.iter().any(|k| k.2) {
            tree.retain_jobs(|j| !known.contains(&(j.pid, j.start_ticks, true)));
        }
    }

    /// The build's jobs into the tree: from the `stat` of its cgroup's
    /// members when it has a cgroup (no listing of `/proc`), else by a
    /// scan of all of `/proc`.
    ///
    /// # Errors
    /// The errno of reading the cgroup's `cgroup.procs` or of listing
    /// `/proc`.
    fn find_jobs(&mut self) -> Result<(), rustix::io::Errno> {
        let w = &mut self.work;
        let Some(m) = &self.members else {
            return w.tree.scan(
                self.proc_dir.as_fd(),
                self.cmd,
                self.page_kib,
                &mut w.scratch,
                &mut w.buf,
            );
        };
        let pids = &mut self.pids;
        pids.clear();
        m.for_each(&mut w.scratch, &mut w.buf, &mut |pid| {
            // Kept within the table: past it, left out.
            let _ = pids.push(pid);
        })?;
        let mut files = ProcDir(self.proc_dir.as_fd());
        w.tree.fill(
            self.pids.iter().copied(),
            self.cmd,
            self.page_kib,
            &mut files,
            &mut w.buf,
        );
        Ok(())
    }

    /// The build's jobs the last [`Pausing::scan`] found, paused ones
    /// included: what really runs at once, whatever the slots say; `None`
    /// when it could not read them.
    pub fn jobs_seen(&self) -> Option<u32> {
        self.seen
    }

    /// Jobs paused now.
    pub fn paused_now(&self) -> u32 {
        u32::try_from(self.pauser.paused().len()).unwrap_or(u32::MAX)
    }

    /// The jobs paused now, for the lease.
    pub fn paused(&self) -> &[Paused] {
        self.pauser.paused()
    }

    /// Pauses so far, and the time jobs spent paused, ms.
    pub fn counts(&self) -> (u32, u64) {
        self.pauser.counts()
    }

    /// Continues every paused job (the run ends, or headroom is stopped):
    /// none is left stopped behind it.
    pub fn release(&mut self) {
        let paused: heapless::Vec<Paused, PAUSED_CAP> =
            self.pauser.paused().iter().copied().collect();
        continue_jobs(&paused, &mut self.work);
        self.pauser.release();
        self.since.clear();
    }

    /// Sends `sig` to every process of job `i` of the last scan (its pids
    /// read this tick, so a pid reused since is all but impossible).
    fn signal(&self, i: usize, sig: Signal) {
        for pid in self.work.tree.processes_of(i) {
            if let Some(p) = Pid::from_raw(pid.cast_signed()) {
                let _ = rustix::process::kill_process(p, sig);
            }
        }
    }
}

/// Continues `jobs` (each whose pid still has the recorded start time): a
/// job's first process and every process below it, found by a scan of the
/// live `/proc` in `work`. Returns how many jobs were found.
pub fn continue_jobs(jobs: &[Paused], work: &mut JobWork) -> u32 {
    let Ok(root) = Root::open("/") else { return 0 };
    let Ok(proc_dir) = root.open_dir("proc") else {
        return 0;
    };
    let mut found = 0;
    for p in jobs {
        if stat_start(&proc_dir, p.pid, &mut work.buf) != Some(p.start_ticks) {
            continue;
        }
        found += 1;
        // The job as the build's CMD: its tree is every process below it.
        let scanned = work.tree.scan(
            proc_dir.as_fd(),
            (p.pid, p.start_ticks),
            1,
            &mut work.scratch,
            &mut work.buf,
        );
        let below = scanned.is_ok().then(|| work.tree.processes());
        for pid in core::iter::once(p.pid).chain(below.into_iter().flatten()) {
            if let Some(pid) = Pid::from_raw(pid.cast_signed()) {
                let _ = rustix::process::kill_process(pid, Signal::CONT);
            }
        }
    }
    found
}

/// The key of job `j` (`followed::jobkey`): its command line read into
/// `cmdline`, its directory that where it started, its parent's (the
/// build tool that forked it: a job's own may change as it runs, `cd
/// sub && …`), taken relative to `tool_dir`, the directory of the build
/// tool nearest CMD (make's after its `-C`): the same key whatever
/// directory headroom or CMD was started in. `None` when it is gone or
/// names nothing.
fn key_of(
    proc_dir: &OwnedFd,
    j: &Job,
    tool_dir: &[u8],
    cmdline: &mut [u8; CMDLINE_LEN],
) -> Option<Work> {
    let n = ProcDir(proc_dir.as_fd())
        .read(j.pid, "cmdline", cmdline)
        .ok()?
        .len();
    let mut dir = heapless::Vec::<u8, DIR_LEN>::new();
    let rel: &[u8] = if !tool_dir.is_empty() && read_cwd(proc_dir, j.parent, &mut dir) {
        relative(&dir, tool_dir)
    } else {
        b""
    };
    let mut work = Work::new();
    jobkey::work_of(cmdline.get_mut(..n)?, rel, &mut work).then_some(work)
}

/// What job `j` reached, KiB: the VmHWM of its largest process (proc(5)
/// `status`: the most it held, also between two scans) with what its
/// other processes hold now; its RSS when that cannot be read.
fn reached_kib(proc_dir: &OwnedFd, j: &crate::followed::jobtree::Job, buf: &mut [u8]) -> u64 {
    let (pid, rss) = j.largest;
    let hwm = ProcDir(proc_dir.as_fd())
        .read(pid, "status", buf)
        .ok()
        .and_then(|b| crate::kernel::pid::parse_status(b).vm_hwm_kib);
    match hwm {
        Some(h) if pid != 0 => j.rss_kib.saturating_sub(rss).saturating_add(h.max(rss)),
        _ => j.rss_kib,
    }
}

/// `dir` relative to `base` (both absolute, as `/proc/PID/cwd` gives
/// them): empty when the same, the rest below it, else `dir` whole.
fn relative<'d>(dir: &'d [u8], base: &[u8]) -> &'d [u8] {
    let base = base.strip_suffix(b"/").unwrap_or(base);
    match dir.strip_prefix(base) {
        Some([]) => b"",
        Some([b'/', rest @ ..]) => rest,
        _ => dir,
    }
}

/// Reads `/proc/PID/cwd` (a symbolic link, proc(5)) into `out`; false
/// when it cannot be read or is longer than [`DIR_LEN`].
fn read_cwd(proc_dir: &OwnedFd, pid: u32, out: &mut heapless::Vec<u8, DIR_LEN>) -> bool {
    let mut path = [0u8; 64];
    let Some(p) = pid_path(&mut path, pid, "cwd") else {
        return false;
    };
    let mut buf = [MaybeUninit::<u8>::uninit(); DIR_LEN];
    let Ok((got, _)) = rustix::fs::readlinkat_raw(proc_dir, p, &mut buf) else {
        return false;
    };
    if got.len() >= DIR_LEN {
        return false;
    }
    out.clear();
    out.extend_from_slice(got).is_ok()
}

/// The start time (`stat` field 22) of `pid`, read from `proc_dir`.
fn stat_start(proc_dir: &OwnedFd, pid: u32, buf: &mut [u8]) -> Option<u64> {
    let raw = ProcDir(proc_dir.as_fd()).read(pid, "stat", buf).ok()?;
    crate::kernel::pid::parse_stat(raw)
        .ok()
        .map(|s| s.start_ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 42: `make` in /src and `make -C /src` from / are one build
    /// tool in /src: a job's directory is taken relative to it, and a
    /// tool in `/` is no exception.
    #[test]
    fn a_directory_is_taken_relative_to_the_tool_s() {
        assert_eq!(relative(b"/src", b"/src"), b"");
        assert_eq!(relative(b"/src/a", b"/src"), b"a");
        assert_eq!(relative(b"/src/a/b", b"/src/"), b"a/b");
        assert_eq!(relative(b"/src", b"/"), b"src");
        assert_eq!(relative(b"/", b"/"), b"");
        // Beside it, or above it: whole.
        assert_eq!(relative(b"/srcx/a", b"/src"), b"/srcx/a");
        assert_eq!(relative(b"/other", b"/src"), b"/other");
    }
}
