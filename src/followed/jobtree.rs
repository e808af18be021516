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
//! A process belongs to the job its parent chain reaches.
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

/// One job of the build: a child of the build tool and its descendants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// The job's first process (the tool's child).
    pub pid: u32,
    /// Its start time, clock ticks after boot (`stat` field 22).
    pub start_ticks: u64,
    /// RSS summed over its live processes, KiB (`stat` field 24 × page
    /// size).
    pub rss_kib: u64,
    /// User + system CPU time summed over its live processes, clock ticks.
    pub cpu_ticks: u64,
    /// Its live processes.
    pub procs: u32,
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
        self.procs.sort_unstable_by_key(|p| p.pid);
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
        let job = Job {
            pid: p.pid,
            start_ticks: p.start_ticks,
            rss_kib: 0,
            cpu_ticks: 0,
            procs: 0,
        };
        match self.jobs.push(job) {
            Ok(()) => self.procs[i].job = u8::try_from(self.jobs.len()).unwrap_or(0),
            Err(_) => self.truncated = true,
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
#[path = "jobtree_tests.rs"]
mod tests;
