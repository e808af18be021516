//! The build's jobs, as its build tool runs them: each child of the tool
//! (make, ninja, cargo) with its descendants, their RSS and CPU time
//! summed, and the job's start time. What `run --jobserver` pauses and
//! continues (`govern::jobserver::pause_rule`).
//!
//! One pass over `/proc`: every process's `stat` (proc(5); fields 1–4, 9,
//! 14, 15, 22, 24) is read, and only those that started no earlier than
//! the build's first process are kept (a descendant never starts before
//! its ancestor), so the table holds the build and few others whatever the
//! host runs. A tool is a process of the build's tree whose comm names a
//! build tool; a job is a child of a tool with no tool at or below it (so
//! a recursive make's jobs are those its sub-makes run, and a shell that
//! runs `$(MAKE)` is no job); without a tool in the tree, a child of CMD.
//! A process belongs to the job its parent chain reaches. The caller
//! may drop jobs that are none ([`JobTree::retain_jobs`]: make's
//! `$(shell …)` commands, `followed::makeshell`).
//! Kernel threads and zombies (finished jobs) are left out.
//!
//! Fixed tables: [`PROCS_CAP`] processes, [`JOBS_CAP`] jobs; past them a
//! scan is [`JobTree::truncated`] (jobs then miss processes and read
//! smaller). No allocation.

use core::mem::MaybeUninit;

use heapless::Vec;
use rustix::fd::BorrowedFd;
use rustix::io::Errno;

use crate::followed::compilers::{MAX_DEPTH, PidFiles, ProcDir};
use crate::kernel::parse::parse_u64;
use crate::kernel::pid::parse_stat;
use crate::kernel::root::for_each_entry;

/// Most processes one scan keeps: those started since the build did.
pub const PROCS_CAP: usize = 1024;

/// Most jobs one scan keeps: far above the `-j` of a small host.
pub const JOBS_CAP: usize = 64;

/// Names of build tools whose children are jobs: GNU make (and `gmake`),
/// ninja and samurai, cargo (its children are rustc), meson's and cmake's
/// drivers run one of these.
pub const TOOLS: [&[u8]; 5] = [b"make", b"gmake", b"ninja", b"samu", b"cargo"];

/// The names of [`TOOLS`] that are GNU make, whose children may also be
/// its `$(shell …)` commands (`followed::makeshell`).
pub const MAKES: [&[u8]; 2] = [b"make", b"gmake"];

/// One job of the build: a child of the build tool and its descendants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// The job's first process (the tool's child).
    pub pid: u32,
    /// Its start time, clock ticks after boot (`stat` field 22).
    pub start_ticks: u64,
    /// The process that started it (`stat` field 4): the build tool
    /// whose child it is, CMD without one.
    pub parent: u32,
    /// That parent is GNU make ([`MAKES`]).
    pub by_make: bool,
    /// RSS summed over its live processes, KiB (`stat` field 24 × page
    /// size).
    pub rss_kib: u64,
    /// User + system CPU time summed over its live processes, clock ticks.
    pub cpu_ticks: u64,
    /// Its live processes.
    pub procs: u32,
    /// Its largest process by RSS (the compiler, in a compile job), and
    /// that RSS, KiB: whose VmHWM (`status`) says what the job reached
    /// between two scans.
    pub largest: (u32, u64),
}

/// One process of the table.
#[derive(Clone, Copy, Debug)]
struct Proc {
    pid: u32,
    ppid: u32,
    start_ticks: u64,
    rss_pages: u64,
    cpu_ticks: u64,
    /// Its comm names a build tool.
    tool: bool,
    /// Its comm names GNU make.
    make: bool,
    /// It is in the build's tree and a tool is at or below it.
    tool_below: bool,
    /// Steps below CMD (1: CMD itself); 0 outside the build.
    depth: u8,
    /// 1 + the index of its job; 0 for none.
    job: u8,
}

/// The build's processes and jobs from one scan.
#[derive(Clone, Debug)]
pub struct JobTree {
    procs: Vec<Proc, PROCS_CAP>,
    jobs: Vec<Job, JOBS_CAP>,
    /// The build tool nearest to CMD (CMD itself without one); 0 when the
    /// scan did not find CMD.
    pub tool: u32,
    /// Processes or jobs beyond the tables were left out.
    pub truncated: bool,
}

impl Default for JobTree {
    fn default() -> Self {
        JobTree::new()
    }
}

impl JobTree {
    /// An empty table.
    pub const fn new() -> JobTree {
        JobTree {
            procs: Vec::new(),
            jobs: Vec::new(),
            tool: 0,
            truncated: false,
        }
    }

    /// The jobs of the last scan, in the order of their pids.
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// The pids of job `i`'s processes (its first one included).
    pub fn processes_of(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let tag = u8::try_from(i + 1).unwrap_or(0);
        self.procs
            .iter()
            .filter(move |p| tag != 0 && p.job == tag)
            .map(|p| p.pid)
    }

    /// The pids of every process of the build's tree (CMD and all below
    /// it, the tool and its jobs included).
    pub fn processes(&self) -> impl Iterator<Item = u32> + '_ {
        self.procs.iter().filter(|p| p.depth > 0).map(|p| p.pid)
    }

    /// Scans the open `proc/` directory for the build whose first process
    /// is `cmd` (started at `cmd_start` ticks); `page_kib`: the kernel's
    /// page size, KiB; `scratch`: the getdents64(2) buffer; `buf`: one
    /// `stat` file.
    ///
    /// # Errors
    /// The errno of listing the directory (the table is then empty).
    pub fn scan(
        &mut self,
        proc_dir: BorrowedFd<'_>,
        cmd: (u32, u64),
        page_kib: u64,
        scratch: &mut [MaybeUninit<u8>],
        buf: &mut [u8],
    ) -> Result<(), Errno> {
        self.clear();
        let mut files = ProcDir(proc_dir);
        let listed = for_each_entry(proc_dir, scratch, |name, _| {
            if let Some(pid) = parse_u64(name).and_then(|p| u32::try_from(p).ok()) {
                self.visit(pid, cmd.1, &mut files, buf);
            }
            true
        });
        if let Err(e) = listed {
            self.clear();
            return Err(e);
        }
        self.link(cmd.0, page_kib);
        Ok(())
    }

    /// [`JobTree::scan`] over `pids` read through `files` (tests, other
    /// roots).
    pub fn fill(
        &mut self,
        pids: impl IntoIterator<Item = u32>,
        cmd: (u32, u64),
        page_kib: u64,
        files: &mut impl PidFiles,
        buf: &mut [u8],
    ) {
        self.clear();
        for pid in pids {
            self.visit(pid, cmd.1, files, buf);
        }
        self.link(cmd.0, page_kib);
    }

    fn clear(&mut self) {
        self.procs.clear();
        self.jobs.clear();
        self.tool = 0;
        self.truncated = false;
    }

    /// Reads `pid`'s stat and keeps it when it may be the build's.
    fn visit(&mut self, pid: u32, since: u64, files: &mut impl PidFiles, buf: &mut [u8]) {
        let Ok(Ok(s)) = files.read(pid, "stat", buf).map(parse_stat) else {
            return;
        };
        if s.is_kernel_thread() || s.is_zombie() || s.start_ticks < since {
            return;
        }
        let p = Proc {
            pid: s.pid,
            ppid: s.ppid,
            start_ticks: s.start_ticks,
            rss_pages: s.rss_pages,
            cpu_ticks: s.utime.saturating_add(s.stime),
            tool: TOOLS.contains(&s.comm),
            make: MAKES.contains(&s.comm),
            tool_below: false,
            depth: 0,
            job: 0,
        };
        if self.procs.push(p).is_err() {
            self.truncated = true;
        }
    }

    /// The index of `pid` in the (sorted) table.
    fn find(&self, pid: u32) -> Option<usize> {
        self.procs.binary_search_by_key(&pid, |p| p.pid).ok()
    }

    /// From the processes read: the build's tree, its tools, its jobs.
    fn link(&mut self, cmd: u32, page_kib: u64) {
        crate::kernel::order::sort_by(&mut self.procs[..], |a, b| a.pid < b.pid);
        let Some(c) = self.find(cmd) else { return };
        self.procs[c].depth = 1;
        self.spread(|p| p.depth, |p, d| p.depth = d.saturating_add(1));
        self.mark_tools_below();
        let top = (0..self.procs.len())
            .filter(|&i| self.procs[i].depth > 0 && self.procs[i].tool)
            .min_by_key(|&i| (self.procs[i].depth, self.procs[i].pid));
        self.tool = self.procs[top.unwrap_or(c)].pid;
        for i in 0..self.procs.len() {
            if self.is_job(i, top.is_some()) {
                self.add_job(i);
            }
        }
        self.spread(|p| p.job, |p, j| p.job = j);
        for p in &self.procs {
            if let Some(j) = usize::from(p.job)
                .checked_sub(1)
                .and_then(|j| self.jobs.get_mut(j))
            {
                j.rss_kib = j
                    .rss_kib
                    .saturating_add(p.rss_pages.saturating_mul(page_kib));
                j.cpu_ticks = j.cpu_ticks.saturating_add(p.cpu_ticks);
                j.procs = j.procs.saturating_add(1);
                let rss = p.rss_pages.saturating_mul(page_kib);
                if rss >= j.largest.1 {
                    j.largest = (p.pid, rss);
                }
            }
        }
    }

    /// Marks, in the build's tree, every tool and every process with a
    /// tool below it (a shell running `$(MAKE)`, a sub-make's parent).
    fn mark_tools_below(&mut self) {
        for i in 0..self.procs.len() {
            self.procs[i].tool_below = self.procs[i].depth > 0 && self.procs[i].tool;
        }
        for _ in 0..MAX_DEPTH {
            let mut changed = false;
            for i in 0..self.procs.len() {
                if !self.procs[i].tool_below {
                    continue;
                }
                if let Some(up) = self.find(self.procs[i].ppid)
                    && self.procs[up].depth > 0
                    && !self.procs[up].tool_below
                {
                    self.procs[up].tool_below = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Process `i` is a job: with tools in the tree, a child of a tool
    /// with no tool at or below it (a recursive make's jobs are those of
    /// its sub-makes, never the sub-makes); without, a child of CMD.
    fn is_job(&self, i: usize, tools: bool) -> bool {
        let p = &self.procs[i];
        if p.depth < 2 {
            return false;
        }
        if !tools {
            return p.ppid == self.tool;
        }
        !p.tool_below && self.find(p.ppid).is_some_and(|up| self.procs[up].tool)
    }

    fn add_job(&mut self, i: usize) {
        let p = self.procs[i];
        let by_make = self.find(p.ppid).is_some_and(|up| self.procs[up].make);
        let job = Job {
            pid: p.pid,
            start_ticks: p.start_ticks,
            parent: p.ppid,
            by_make,
            rss_kib: 0,
            cpu_ticks: 0,
            procs: 0,
            largest: (0, 0),
        };
        match self.jobs.push(job) {
            Ok(()) => self.procs[i].job = u8::try_from(self.jobs.len()).unwrap_or(0),
            Err(_) => self.truncated = true,
        }
    }

    /// Keeps the jobs for which `keep` is true, in their order; the
    /// processes of the others belong to no job (as if the scan had not
    /// counted them: make's `$(shell …)` commands, `followed::makeshell`).
    pub fn retain_jobs(&mut self, mut keep: impl FnMut(&Job) -> bool) {
        let mut kept: u8 = 0;
        // The new tag of each old one (index: old tag − 1); 0: dropped.
        let mut tags = [0u8; JOBS_CAP];
        for (i, j) in self.jobs.iter().enumerate() {
            if keep(j) {
                kept += 1;
                tags[i] = kept;
            }
        }
        let mut i = 0;
        self.jobs.retain(|_| {
            i += 1;
            tags[i - 1] != 0
        });
        for p in &mut self.procs {
            if let Some(t) = usize::from(p.job).checked_sub(1) {
                p.job = tags.get(t).copied().unwrap_or(0);
            }
        }
    }

    /// Hands a mark (non-zero `get`) from parents to children, pass after
    /// pass, at most [`MAX_DEPTH`] levels: `set(child, parent's mark)`.
    fn spread(&mut self, get: impl Fn(&Proc) -> u8, set: impl Fn(&mut Proc, u8)) {
        for _ in 0..MAX_DEPTH {
            let mut changed = false;
            for i in 0..self.procs.len() {
                if get(&self.procs[i]) != 0 {
                    continue;
                }
                let Some(parent) = self.find(self.procs[i].ppid) else {
                    continue;
                };
                let mark = get(&self.procs[parent]);
                if mark != 0 {
                    set(&mut self.procs[i], mark);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::kernel::root::ReadError;
    use std::format;
    use std::string::String;
    use std::vec::Vec;

    /// Processes as `stat` lines: (pid, comm, state, ppid, utime, start, rss
    /// pages).
    struct Fake(Vec<(u32, String)>);

    impl Fake {
        fn new(procs: &[(u32, &str, char, u32, u64, u64, u64)]) -> Fake {
            Fake(
                procs
                    .iter()
                    .map(|&(pid, comm, state, ppid, ut, start, rss)| {
                        (
                            pid,
                            format!(
                                "{pid} ({comm}) {state} {ppid} 1 1 0 -1 4194560 0 0 0 0 {ut} 1 0 0 20 0 1 0 {start} 0 {rss}\n"
                            ),
                        )
                    })
                    .collect(),
            )
        }

        fn pids(&self) -> Vec<u32> {
            self.0.iter().map(|p| p.0).collect()
        }
    }

    impl PidFiles for Fake {
        fn read<'b>(
            &mut self,
            pid: u32,
            file: &str,
            buf: &'b mut [u8],
        ) -> Result<&'b [u8], ReadError> {
            assert_eq!(file, "stat");
            let (_, text) = self
                .0
                .iter()
                .find(|p| p.0 == pid)
                .ok_or(ReadError::Open(Errno::NOENT))?;
            let n = text.len();
            buf[..n].copy_from_slice(text.as_bytes());
            Ok(&buf[..n])
        }
    }

    fn scanned(f: &mut Fake, cmd: (u32, u64)) -> JobTree {
        let mut t = JobTree::new();
        let mut buf = [0u8; 512];
        let pids = f.pids();
        t.fill(pids, cmd, 4, f, &mut buf);
        t
    }

    #[test]
    fn make_s_children_are_the_jobs_with_their_descendants_summed() {
        // headroom 100 → make 200 → sh 210 → cc1plus 230; make → sh 220 →
        // python3 240; a zombie job 250; an older sshd and its child.
        let mut f = Fake::new(&[
            (1, "init", 'S', 0, 5, 1, 100),
            (100, "headroom", 'S', 1, 1, 900, 50),
            (200, "make", 'S', 100, 2, 1000, 500),
            (210, "sh", 'S', 200, 1, 1010, 100),
            (220, "sh", 'S', 200, 1, 1012, 100),
            (230, "cc1plus", 'R', 210, 40, 1011, 25_600),
            (240, "python3", 'R', 220, 7, 1013, 2_560),
            (250, "sh", 'Z', 200, 0, 1005, 0),
            (50, "sshd", 'S', 1, 0, 10, 400),
            (1500, "bash", 'S', 50, 0, 1020, 300),
        ]);
        let t = scanned(&mut f, (200, 1000));
        assert_eq!(t.tool, 200);
        assert!(!t.truncated);
        let jobs: Vec<_> = t
            .jobs()
            .iter()
            .map(|j| (j.pid, j.start_ticks, j.rss_kib, j.cpu_ticks, j.procs))
            .collect();
        assert_eq!(
            jobs,
            [
                (210, 1010, 4 * 25_700, 1 + 1 + 40 + 1, 2),
                (220, 1012, 4 * 2_660, 1 + 1 + 7 + 1, 2)
            ]
        );
        let mut of_first: Vec<u32> = t.processes_of(0).collect();
        of_first.sort_unstable();
        assert_eq!(of_first, [210, 230]);
        assert_eq!(t.processes_of(5).count(), 0);
        let mut all: Vec<u32> = t.processes().collect();
        all.sort_unstable();
        assert_eq!(all, [200, 210, 220, 230, 240]);
    }

    #[test]
    fn the_tool_is_the_make_under_a_shell_cmd_and_pids_that_wrapped_still_link() {
        // CMD is `sh -c "make"`: sh 9000 → make 40 (pid wrapped) → jobs.
        let mut f = Fake::new(&[
            (9000, "sh", 'S', 100, 0, 500, 100),
            (40, "make", 'S', 9000, 0, 501, 500),
            (41, "sh", 'S', 40, 0, 502, 100),
            (9100, "ld", 'R', 41, 3, 503, 1000),
            (42, "make", 'S', 40, 0, 504, 400),
            (43, "cc1", 'R', 42, 9, 505, 2000),
        ]);
        let t = scanned(&mut f, (9000, 500));
        assert_eq!(t.tool, 40);
        let jobs: Vec<_> = t.jobs().iter().map(|j| (j.pid, j.rss_kib / 4)).collect();
        // The recursive make is no job: what it runs is.
        assert_eq!(jobs, [(41, 1100), (43, 2000)]);
    }

    #[test]
    fn a_recursive_make_s_jobs_are_its_sub_makes_jobs_never_the_sub_makes() {
        // make 10 → sh 11 → make 12 (a, b); make 10 → make 13 (c); make 10 →
        // sh 14 → cc1 15 (its own job). A Makefile of `$(MAKE) -C sub` alone
        // has one child: pausing it would be pausing the whole build.
        let mut f = Fake::new(&[
            (10, "make", 'S', 1, 0, 100, 500),
            (11, "sh", 'S', 10, 0, 101, 100),
            (12, "make", 'S', 11, 0, 102, 500),
            (20, "sh", 'S', 12, 0, 103, 100),
            (21, "cc1", 'R', 20, 5, 104, 9000),
            (22, "sh", 'S', 12, 0, 105, 100),
            (13, "make", 'S', 10, 0, 106, 500),
            (30, "cc1plus", 'R', 13, 5, 107, 7000),
            (14, "sh", 'S', 10, 0, 108, 100),
            (15, "cc1", 'R', 14, 5, 109, 3000),
        ]);
        let t = scanned(&mut f, (10, 100));
        assert_eq!(t.tool, 10);
        let jobs: Vec<_> = t.jobs().iter().map(|j| (j.pid, j.rss_kib / 4)).collect();
        assert_eq!(jobs, [(14, 3100), (20, 9100), (22, 100), (30, 7000)]);
    }

    #[test]
    fn a_job_names_its_parent_and_a_dropped_job_s_processes_belong_to_none() {
        // make 10 → sh 11 → cc1 12; make 10 → seq 13 (its $(shell));
        // make 10 → ninja 14 → sh 15.
        let mut f = Fake::new(&[
            (10, "make", 'S', 1, 0, 100, 500),
            (11, "sh", 'S', 10, 0, 101, 100),
            (12, "cc1", 'R', 11, 5, 102, 9000),
            (13, "seq", 'R', 10, 0, 103, 50),
            (14, "ninja", 'S', 10, 0, 104, 300),
            (15, "sh", 'S', 14, 0, 105, 70),
        ]);
        let mut t = scanned(&mut f, (10, 100));
        let jobs: Vec<_> = t
            .jobs()
            .iter()
            .map(|j| (j.pid, j.parent, j.by_make))
            .collect();
        assert_eq!(jobs, [(11, 10, true), (13, 10, true), (15, 14, false)]);
        t.retain_jobs(|j| j.pid != 13);
        let jobs: Vec<_> = t.jobs().iter().map(|j| (j.pid, j.rss_kib / 4)).collect();
        assert_eq!(jobs, [(11, 9100), (15, 70)]);
        let mut second: Vec<u32> = t.processes_of(1).collect();
        second.sort_unstable();
        assert_eq!(second, [15]);
        let mut first: Vec<u32> = t.processes_of(0).collect();
        first.sort_unstable();
        assert_eq!(first, [11, 12]);
        assert_eq!(t.processes_of(2).count(), 0);
    }

    #[test]
    fn without_a_tool_cmd_s_children_are_the_jobs_and_a_missing_cmd_gives_none() {
        let mut f = Fake::new(&[
            (300, "build.sh", 'S', 1, 0, 70, 100),
            (301, "cc", 'S', 300, 0, 71, 100),
        ]);
        let t = scanned(&mut f, (300, 70));
        assert_eq!((t.tool, t.jobs().len()), (300, 1));
        let t = scanned(&mut f, (299, 70));
        assert_eq!((t.tool, t.jobs().len()), (0, 0));
    }

    #[test]
    fn processes_older_than_the_build_are_not_kept_and_a_full_table_says_so() {
        let mut procs: Vec<(u32, &str, char, u32, u64, u64, u64)> = (0..2000u32)
            .map(|i| (10_000 + i, "worker", 'S', 1, 0, 5, 1))
            .collect();
        procs.push((200, "make", 'S', 1, 0, 100, 1));
        procs.push((201, "cc1", 'R', 200, 0, 101, 1));
        let mut f = Fake::new(&procs);
        let t = scanned(&mut f, (200, 100));
        assert!(!t.truncated);
        assert_eq!(t.jobs().len(), 1);
        for p in procs.iter_mut() {
            p.5 = 150;
        }
        let mut f = Fake::new(&procs);
        let t = scanned(&mut f, (200, 100));
        assert!(t.truncated);
    }

    #[test]
    fn hostile_stat_lines_are_skipped() {
        let mut f = Fake(std::vec![
            (
                200,
                String::from("200 (make) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 5\n")
            ),
            (201, String::from("201 (cc1) R 200 garbage\n")),
            (
                202,
                String::from(
                    "202 (cc1) R 200 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99999999999999999999 0 5\n"
                )
            ),
            (
                203,
                String::from(
                    "203 (kworker) I 200 1 1 0 -1 2097152 0 0 0 0 0 0 0 0 20 0 1 0 101 0 0\n"
                )
            ),
        ]);
        let t = scanned(&mut f, (200, 100));
        assert_eq!(t.jobs().len(), 0);
    }
}
