//! `run --jobserver --pool DIR`: this governor's side of a memory pool
//! shared with every governor that names the same DIR: its lease kept, the
//! others looked at each tick under the pool lock (`pool_dir`), the jobs
//! the pool admits (`admit`), the jobs a dead governor had paused
//! continued.

use core::mem::MaybeUninit;

use heapless::{String, Vec};

use crate::govern::jobserver::admit::{self, Admission, Limit, Own};
use crate::govern::jobserver::lease::{self, LEASE_CAP, Lease, Paused};
use crate::govern::jobserver::notes::{Note, Tell};
use crate::govern::jobserver::pausing::{JobWork, continue_jobs};
use crate::govern::jobserver::peakfile::PeakIssue;
use crate::govern::jobserver::pool_dir::{Issue, LEASES_CAP, OpenError, PoolDir};
use crate::kernel::cgroup::{MemCgroup, TICK_BUF_LEN, is_unseen_id};
use crate::kernel::root::Root;
use crate::report::jobserver_block::PoolShare;
use crate::tick::row::PoolFigures;

/// Longest pool directory kept as given, bytes (PATH_MAX).
pub const DIR_CAP: usize = 4096;

/// Why the pool cannot be joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinError {
    /// `proc/meminfo` could not be read (the host's size bounds a lease).
    Meminfo,
    /// The directory, its trust, its lock or this governor's lease.
    Pool(OpenError),
}

/// The shared pool while the build runs.
pub struct PoolMember {
    pool: PoolDir,
    /// The pool directory as given, for messages.
    dir: String<DIR_CAP>,
    /// This governor's lease, as last written.
    me: Lease,
    /// headroom's memory cgroup: the limits the build lies in.
    cg: Option<MemCgroup>,
    /// MemTotal, KiB: a lease claiming more is absurd.
    mem_total_kib: u64,
    /// The other live leases at the last look.
    others: Vec<Lease, LEASES_CAP>,
    /// The limits the build lies in, and the pool's budget, at the last
    /// look (`refresh_limits`).
    limits: Vec<Limit, 8>,
    /// Run ids of every other build seen (for the summary).
    seen: Vec<String<64>, 16>,
    /// Files already warned about (each is said once).
    warned: Vec<String<64>, 16>,
    /// The last rewrite of the lease failed (said once).
    write_failing: bool,
    /// Looks taken so far.
    looks: u32,
    /// The pool's budget at the last look (`budget_file`), as last told.
    budget: Result<Option<u64>, PeakIssue>,
    /// What the last look admitted: before [`admit::steady`], and after.
    admitted_last: (u32, u32),
    dir_buf: [MaybeUninit<u8>; 8 * 1024],
    file_buf: [u8; LEASE_CAP + 1],
    cg_buf: [u8; TICK_BUF_LEN],
    /// Where the jobs of a dead governor's lease are found to continue.
    orphans: JobWork,
}

impl PoolMember {
    /// Opens the pool `dir` and puts this governor's first lease in it:
    /// run `run_id`, at most `cap` jobs of `peak_mb` each. `buf` reads
    /// `root`'s meminfo and cgroup files (`kernel::cgroup::OPEN_BUF_LEN`).
    ///
    /// # Errors
    /// [`JoinError`].
    pub fn join(
        dir: &str,
        run_id: &str,
        cap: u32,
        peak_mb: u64,
        root: &Root,
        buf: &mut [u8],
    ) -> Result<PoolMember, JoinError> {
        let mem = crate::plan::host::memory(root, buf).map_err(|_| JoinError::Meminfo)?;
        let cg = crate::kernel::cgroup::open_memory(root, buf).ok().flatten();
        let mut me = Lease::empty();
        me.uid = rustix::process::geteuid().as_raw();
        me.pid = rustix::process::getpid()
            .as_raw_nonzero()
            .get()
            .unsigned_abs();
        me.run = lease::cut(run_id);
        me.cap = cap;
        me.running = 1;
        me.allowed = 1;
        me.peak_mb = peak_mb;
        me.growth_mb = peak_mb;
        let pool = PoolDir::open(dir, me.pid, me.uid, &me).map_err(JoinError::Pool)?;
        let mut s = PoolMember {
            pool,
            dir: String::try_from(dir).unwrap_or_else(|_| lease::cut(dir)),
            me,
            cg,
            mem_total_kib: mem.meminfo.mem_total_kib,
            others: Vec::new(),
            limits: Vec::new(),
            seen: Vec::new(),
            warned: Vec::new(),
            dir_buf: [MaybeUninit::uninit(); 8 * 1024],
            file_buf: [0; LEASE_CAP + 1],
            cg_buf: [0; TICK_BUF_LEN],
            orphans: JobWork::new(),
            write_failing: false,
            looks: 0,
            budget: Ok(None),
            admitted_last: (1, 1),
        };
        s.refresh_limits();
        Ok(s)
    }

    /// The PID (in its own namespace) of another live build in the pool
    /// whose run id is this build's, if any: their remembered peaks
    /// (`DIR/peak-RUN`, `DIR/jobs-RUN`) would mix. To be asked once, just
    /// after [`PoolMember::join`]; `None` too when the pool lock or the
    /// listing cannot be had. Only leases a look counts are seen (the
    /// same user's or root's in a directory others may write).
    pub fn run_id_shared(&mut self) -> Option<u32> {
        let guard = self.pool.lock_pool().ok()?;
        let host_mb = self.mem_total_kib / 1024;
        let run = self.me.run.as_str();
        let found = guard.run_in_use(run, host_mb, &mut self.dir_buf, &mut self.file_buf);
        found.ok().flatten()
    }

    /// The pool directory as given.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The other builds at the last look.
    pub fn others(&self) -> usize {
        self.others.len()
    }

    /// The pool at the last look, for the row (and `--prom`).
    pub fn figures(&self) -> PoolFigures {
        PoolFigures {
            others: u32::try_from(self.others.len()).unwrap_or(u32::MAX),
            others_growth_mb: lease::reserved_mb(&self.others),
            own_growth_mb: self.me.growth_mb,
        }
    }

    /// The pool and the other builds seen, for the summary.
    pub fn share(&self) -> PoolShare {
        PoolShare {
            dir: lease::cut(&self.dir),
            others: self.seen.clone(),
        }
    }

    /// What is left under the tightest limit above the mount that the
    /// build lies in, at the last look, MiB: its available memory (this
    /// build's side) less what the other builds inside hold and reserve
    /// (`admit::room_with_leases`'s rule); `None` without such a limit.
    /// The pausing step weighs it beside usable memory less the others'
    /// growth.
    pub fn unseen_left_mb(&self) -> Option<i128> {
        self.limits
            .iter()
            .filter(|c| is_unseen_id(c.ino))
            .map(|c| {
                let inside = self.others.iter().filter(|l| admit::is_inside(l, c.ino));
                i128::from(c.available_mb) - i128::from(lease::taken_mb(inside))
            })
            .min()
    }

    /// The jobs this governor has paused, into its lease (written at the
    /// next tick), so that whoever clears a dead lease continues them.
    pub fn set_paused(&mut self, paused: &[Paused]) {
        self.me.paused.clear();
        for p in paused {
            let _ = self.me.paused.push(*p);
        }
    }

    /// Leaves the pool: the lease removed, its share free for the others at
    /// their next tick (the build has ended).
    pub fn leave(&mut self) {
        self.pool.leave();
    }

    /// Remembers `mb` as the peak per job run `run_id`'s build measured,
    /// for the next run with that id (`jobserver::peakfile`).
    ///
    /// # Errors
    /// As [`PoolDir::remember_peak`].
    pub fn remember(&self, run_id: &str, mb: u64) -> Result<(), rustix::io::Errno> {
        self.pool.remember_peak(run_id, mb)
    }

    /// Merges the peaks of the jobs run `run_id`'s build `measured`
    /// (`job_peaks`) into what the pool remembers for that id; `buf`: at
    /// least `job_peaks::JOB_PEAKS_BUF` bytes.
    ///
    /// # Errors
    /// As [`PoolDir::remember_job_peaks`].
    pub fn remember_jobs(
        &self,
        run_id: &str,
        measured: &crate::govern::jobserver::job_peaks::JobPeaks,
        buf: &mut [u8],
    ) -> Result<(), rustix::io::Errno> {
        self.pool.remember_job_peaks(run_id, measured, buf)
    }

    /// The limits the build lies in, read now: into its lease and
    /// [`PoolMember::limits`].
    fn refresh_limits(&mut self) {
        self.me.limits.clear();
        self.limits.clear();
        if let Some(cg) = &self.cg {
            for l in cg.limits(self.mem_total_kib, &mut self.cg_buf) {
                let _ = self.me.limits.push(l.ino);
                let _ = self.limits.push(Limit {
                    ino: l.ino,
                    available_mb: l.mem.available_bytes >> 20,
                });
            }
        }
    }

    /// One tick in the pool: locked, the others looked at, how many jobs
    /// it admits this build handed to `decide` (the governor's tick, which
    /// returns the jobs running and allowed, and whether the build would
    /// start more), then this governor's lease rewritten, and unlocked; the
    /// files not counted told to `tell`. When the lock cannot be had this
    /// tick, `decide` gets what the pool admitted last and the lease stays
    /// as it was.
    ///
    /// Never inlined: its look holds a few KiB of names and leases on the
    /// stack, which inlined into the recording loop every recording's
    /// frame would carry (and make resident), `--pool` or not.
    #[inline(never)]
    pub fn tick(
        &mut self,
        own: Own,
        decide: impl FnOnce(u32) -> (u32, u32, bool),
        tell: &mut impl Tell,
    ) -> Option<Admission> {
        self.refresh_limits();
        if let Some(mb) = self.read_budget(tell) {
            let _ = self.limits.push(Limit {
                ino: admit::POOL_BUDGET_ID,
                available_mb: mb.saturating_sub(own.held_mb),
            });
        }
        let Ok(guard) = self.pool.lock_pool() else {
            decide(self.me.allowed.max(1));
            return None;
        };
        let host_mb = self.mem_total_kib / 1024;
        let before = self.others.len();
        let mut issues: Vec<(String<64>, Issue), 8> = Vec::new();
        let looked = guard.look(
            host_mb,
            &mut self.dir_buf,
            &mut self.file_buf,
            &mut self.others,
            &mut |name, issue| {
                let name = core::str::from_utf8(name).unwrap_or("?");
                let name = String::try_from(name).unwrap_or_default();
                let _ = issues.push((name, issue));
            },
        );
        if looked.is_err() {
            self.others.clear();
        }
        let left = self.others.len() < before;
        let a = admit::admit(&own, &self.limits, &self.others);
        let a = held_steady(&mut self.looks, &mut self.admitted_last, a, left);
        let (running, allowed, wants_more) = decide(a.allowed);
        let me = &mut self.me;
        me.running = running;
        me.allowed = allowed;
        me.peak_mb = own.weight.next_mb;
        me.held_mb = own.held_mb;
        me.growth_mb = own.weight.growth_at(allowed.max(running));
        me.wants_more = wants_more;
        let written = guard.write(me);
        drop(guard);
        if let Err(errno) = written
            && !self.write_failing
        {
            tell.tell(&Note::LeaseUnwritable {
                dir: &self.dir,
                errno,
            });
        }
        self.write_failing = written.is_err();
        for (name, issue) in &issues {
            self.told(name, issue, tell);
        }
        for l in &self.others {
            if !self.seen.iter().any(|s| s.as_str() == l.run.as_str()) {
                let _ = self.seen.push(l.run.clone());
            }
        }
        Some(a)
    }

    /// The pool's budget now (`budget_file`), MiB; a change (set, moved,
    /// removed, a file that cannot be used) told when first seen.
    fn read_budget(&mut self, tell: &mut impl Tell) -> Option<u64> {
        let now = self.pool.budget(&mut self.file_buf);
        if now != self.budget {
            self.budget = now;
            tell.tell(&Note::PoolBudget {
                dir: &self.dir,
                now,
            });
        }
        now.ok().flatten()
    }

    /// A file the pool did not count, told once per file; a dead lease
    /// (removed) every time, with the jobs it had paused continued.
    fn told(&mut self, name: &str, issue: &Issue, tell: &mut impl Tell) {
        let continued = match issue {
            Issue::Dead(l) => continue_jobs(&l.paused, &mut self.orphans),
            _ if self.warned.iter().any(|w| w.as_str() == name) => return,
            _ => {
                if let Ok(n) = String::try_from(name) {
                    let _ = self.warned.push(n);
                }
                0
            }
        };
        tell.tell(&Note::PoolFile {
            dir: &self.dir,
            name,
            issue,
            continued,
        });
    }
}

/// What a look admitted (`a`, from [`admit::admit`]), held steady across
/// `looks`; `last`: what the last look admitted, before and after. Builds
/// started together make their leases within moments of each other,
/// before CMD starts: the first look admits no job beyond the implicit
/// one, so that by the next (a tick later) everyone started with this one
/// is counted and none takes the whole pool first. After that, a change
/// is acted on once two looks agree ([`admit::steady`]), but for a build
/// that `left`: its lease went after its jobs, so its share is free and
/// the survivors take it at once (PAR5).
fn held_steady(looks: &mut u32, last: &mut (u32, u32), mut a: Admission, left: bool) -> Admission {
    let (prev, granted) = *last;
    let now = a.allowed;
    a.allowed = match *looks {
        0 => 1,
        _ if left && now > granted => now,
        _ => admit::steady(granted, prev, now),
    };
    *last = (now, a.allowed);
    *looks = looks.saturating_add(1);
    a
}
