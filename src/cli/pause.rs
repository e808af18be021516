//! `run --jobserver`: the build's jobs paused (SIGSTOP) when their growth
//! would outrun the memory left, and continued (SIGCONT) when it returns;
//! the rule is `govern::pause`, the jobs `followed::jobtree`, read at each
//! governor tick from the `stat` of the build cgroup's members when it
//! has a cgroup (no listing of `/proc`), else by a scan of `/proc`.

use std::io::Write;
use std::mem::MaybeUninit;

use rustix::fd::{AsFd, OwnedFd};
use rustix::process::{Pid, Signal};

use headroom::followed::buildcg::Members;
use headroom::followed::compilers::ProcDir;
use headroom::followed::jobtree::{JobTree, PROCS_CAP};
use headroom::govern::lease::Paused;
use headroom::govern::pause::{Act, Pauser};
use headroom::kernel::root::Root;

/// Pausing while CMD runs.
pub struct Pausing {
    tree: JobTree,
    /// The build cgroup's directory when CMD is in one: its jobs are then
    /// found among its members, not by a scan of all of `/proc`.
    members: Option<Members<OwnedFd>>,
    /// The members' pids, read each tick ([`PROCS_CAP`] at most).
    pids: Vec<u32>,
    pauser: Pauser,
    /// CMD's pid and start time (clock ticks after boot).
    cmd: (u32, u64),
    proc_dir: OwnedFd,
    page_kib: u64,
    /// When each paused job was paused (monotonic ms), for `--explain`.
    since: Vec<(Paused, u64)>,
    explain: bool,
    /// The last [`Pausing::scan`] read the jobs.
    scanned: bool,
    scratch: Vec<MaybeUninit<u8>>,
    buf: Vec<u8>,
}

impl Pausing {
    /// Follows CMD (`pid`, just started) in the live `root`'s `proc/`,
    /// among the `members` of its build cgroup when it has one; `None`
    /// when its `stat` cannot be read (CMD already gone).
    ///
    /// Never inlined: the job table (about 40 KiB) may be built on its
    /// frame before it is boxed, which inlined into `record_job` every
    /// recording would carry and make resident, `--jobserver` or not.
    #[inline(never)]
    pub fn follow(
        root: &Root,
        pid: u32,
        explain: bool,
        members: Option<Members<OwnedFd>>,
    ) -> Option<Box<Pausing>> {
        let proc_dir = root.open_dir("proc").ok()?;
        let mut buf = vec![0u8; headroom::kernel::pid::BUF_LEN];
        let start = stat_start(&proc_dir, pid, &mut buf)?;
        Some(Box::new(Pausing {
            tree: JobTree::new(),
            pids: Vec::with_capacity(if members.is_some() { PROCS_CAP } else { 0 }),
            members,
            pauser: Pauser::new(),
            cmd: (pid, start),
            proc_dir,
            page_kib: (rustix::param::page_size() / 1024).max(1) as u64,
            since: Vec::with_capacity(headroom::govern::lease::PAUSED_CAP),
            explain,
            scanned: false,
            scratch: vec![MaybeUninit::uninit(); 8 * 1024],
            buf,
        }))
    }

    /// The first half of a tick: the jobs found ([`Pausing::find_jobs`]).
    /// Returns the most one of them holds now, MiB, for the estimate per
    /// job (`govern::pause::largest_mb`); `None` when none was found.
    pub fn scan(&mut self) -> Option<u64> {
        self.scanned = self.find_jobs().is_ok();
        if !self.scanned {
            return None;
        }
        headroom::govern::pause::largest_mb(self.tree.jobs())
    }

    /// The second half: the rule applied to the jobs of the last
    /// [`Pausing::scan`] with `peak_mb` per job (the estimate, which has
    /// taken them in) and `room_mb` (usable memory less the other builds'
    /// growth and the reserve), the signal sent. Returns the jobs paused
    /// now.
    pub fn act(&mut self, peak_mb: u64, room_mb: i64, now_ms: u64) -> u32 {
        if !std::mem::take(&mut self.scanned) {
            return self.paused_now();
        }
        let act = self.pauser.tick(self.tree.jobs(), peak_mb, room_mb, now_ms);
        match act {
            Act::Hold => {}
            Act::Pause(i) => {
                self.signal(i, Signal::STOP);
                let j = self.tree.jobs()[i];
                let p = Paused {
                    pid: j.pid,
                    start_ticks: j.start_ticks,
                };
                self.since.push((p, now_ms));
                self.say(format_args!(
                    "paused job {} ({} MiB, started last): the running jobs may grow by more than the {room_mb} MiB left",
                    j.pid,
                    j.rss_kib / 1024
                ));
            }
            Act::Resume(i) => {
                self.signal(i, Signal::CONT);
                let j = self.tree.jobs()[i];
                let at = self
                    .since
                    .iter()
                    .position(|(p, _)| (p.pid, p.start_ticks) == (j.pid, j.start_ticks));
                let held = at.map_or(0, |k| now_ms.saturating_sub(self.since.swap_remove(k).1));
                self.say(format_args!(
                    "continued job {} after {}.{} s paused: the {room_mb} MiB left hold its growth, or none runs",
                    j.pid,
                    held / 1000,
                    held % 1000 / 100
                ));
            }
            Act::ResumeAll => {
                let paused: Vec<Paused> = self.since.iter().map(|(p, _)| *p).collect();
                for p in &paused {
                    let at = self
                        .tree
                        .jobs()
                        .iter()
                        .position(|j| (j.pid, j.start_ticks) == (p.pid, p.start_ticks));
                    if let Some(i) = at {
                        self.signal(i, Signal::CONT);
                    }
                }
                self.say(format_args!(
                    "the running jobs made no progress for {} s: continued the {} paused job(s) (one may hold what they wait for); none is paused for {} s",
                    headroom::govern::pause::STALL_MS / 1000,
                    paused.len(),
                    headroom::govern::pause::STALL_MS / 1000
                ));
            }
        }
        self.since.retain(|(p, _)| self.pauser.paused().contains(p));
        self.paused_now()
    }

    /// The build's jobs into the tree: from the `stat` of its cgroup's
    /// members when it has a cgroup (no listing of `/proc`), else by a
    /// scan of all of `/proc`.
    ///
    /// # Errors
    /// The errno of reading the cgroup's `cgroup.procs` or of listing
    /// `/proc`.
    fn find_jobs(&mut self) -> Result<(), rustix::io::Errno> {
        let Some(m) = &self.members else {
            return self.tree.scan(
                self.proc_dir.as_fd(),
                self.cmd,
                self.page_kib,
                &mut self.scratch,
                &mut self.buf,
            );
        };
        let pids = &mut self.pids;
        pids.clear();
        m.for_each(&mut self.scratch, &mut self.buf, &mut |pid| {
            // Kept within the capacity: no allocation per tick.
            if pids.len() < pids.capacity() {
                pids.push(pid);
            }
        })?;
        let mut files = ProcDir(self.proc_dir.as_fd());
        self.tree.fill(
            self.pids.iter().copied(),
            self.cmd,
            self.page_kib,
            &mut files,
            &mut self.buf,
        );
        Ok(())
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
        let paused: Vec<Paused> = self.pauser.paused().to_vec();
        continue_jobs(&paused);
        self.pauser.release();
        self.since.clear();
    }

    /// Sends `sig` to every process of job `i` of the last scan (its pids
    /// read this tick, so a pid reused since is all but impossible).
    fn signal(&self, i: usize, sig: Signal) {
        for pid in self.tree.processes_of(i) {
            if let Some(p) = Pid::from_raw(pid.cast_signed()) {
                let _ = rustix::process::kill_process(p, sig);
            }
        }
    }

    fn say(&self, what: std::fmt::Arguments<'_>) {
        if self.explain {
            let _ = writeln!(std::io::stderr(), "headroom: jobserver: {what}");
        }
    }
}

/// Continues `jobs` (each whose pid still has the recorded start time): a
/// job's first process and every process below it, found by a scan of the
/// live `/proc`. Returns how many jobs were found. Never inlined (its
/// job table, as [`Pausing::follow`]).
#[inline(never)]
pub fn continue_jobs(jobs: &[Paused]) -> u32 {
    let Ok(root) = Root::open("/") else { return 0 };
    let Ok(proc_dir) = root.open_dir("proc") else {
        return 0;
    };
    let mut buf = vec![0u8; headroom::kernel::pid::BUF_LEN];
    let mut scratch = vec![MaybeUninit::uninit(); 8 * 1024];
    let mut tree = Box::new(JobTree::new());
    let mut found = 0;
    for p in jobs {
        if stat_start(&proc_dir, p.pid, &mut buf) != Some(p.start_ticks) {
            continue;
        }
        found += 1;
        // The job as the build's CMD: its tree is every process below it.
        let scanned = tree.scan(
            proc_dir.as_fd(),
            (p.pid, p.start_ticks),
            1,
            &mut scratch,
            &mut buf,
        );
        let below: Vec<u32> = match scanned {
            Ok(()) => tree.processes().collect(),
            Err(_) => Vec::new(),
        };
        for pid in std::iter::once(p.pid).chain(below) {
            if let Some(pid) = Pid::from_raw(pid.cast_signed()) {
                let _ = rustix::process::kill_process(pid, Signal::CONT);
            }
        }
    }
    found
}

/// The start time (`stat` field 22) of `pid`, read from `proc_dir`.
fn stat_start(proc_dir: &OwnedFd, pid: u32, buf: &mut [u8]) -> Option<u64> {
    use headroom::followed::compilers::PidFiles;
    let raw = ProcDir(proc_dir.as_fd()).read(pid, "stat", buf).ok()?;
    headroom::kernel::pid::parse_stat(raw)
        .ok()
        .map(|s| s.start_ticks)
}
