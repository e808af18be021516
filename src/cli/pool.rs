//! `run --jobserver --pool DIR`: this governor's side of a memory pool
//! shared with every governor that names the same DIR: its lease kept, the
//! others looked at each tick under the pool lock, the jobs the pool
//! admits.

use std::io::Write;
use std::mem::MaybeUninit;

use headroom::govern::admit::{self, Admission, Limit, Own};
use headroom::govern::lease::{LEASE_CAP, Lease};
use headroom::govern::pool::{Issue, LEASES_CAP, MemPool, OpenError};
use headroom::kernel::cgroup::MemCgroup;
use headroom::kernel::root::Root;

use super::messages::{Fail, errtext};

/// The shared pool while the build runs.
pub struct Shared {
    pool: MemPool,
    /// The pool directory as given, for messages.
    pub dir: String,
    /// This governor's lease, as last written.
    me: Lease,
    /// headroom's memory cgroup: the limits the build lies in.
    cg: Option<MemCgroup>,
    /// MemTotal, KiB: a lease claiming more is absurd.
    mem_total_kib: u64,
    /// The other live leases at the last look.
    pub others: heapless::Vec<Lease, LEASES_CAP>,
    /// Run ids of every other build seen (for the summary).
    pub seen: heapless::Vec<heapless::String<64>, 16>,
    /// Files already warned about (each is said once).
    warned: heapless::Vec<heapless::String<64>, 16>,
    /// The last rewrite of the lease failed (said once).
    write_failing: bool,
    /// Looks taken so far.
    looks: u32,
    /// What the last look admitted: before [`admit::steady`], and after.
    admitted_last: (u32, u32),
    dir_buf: Vec<MaybeUninit<u8>>,
    file_buf: Vec<u8>,
    cg_buf: Vec<u8>,
}

impl Shared {
    /// Opens the pool DIR (named by `from`: `--pool` or `$HEADROOM_POOL`)
    /// and puts this governor's first lease in it.
    ///
    /// # Errors
    /// One line naming DIR and why (not a directory, others may write it,
    /// the lock or lease cannot be made).
    pub fn open(
        dir: &str,
        from: &str,
        run_id: &str,
        cap: u32,
        peak_mb: u64,
        root: &Root,
    ) -> Result<Shared, Fail> {
        let mut buf = vec![0u8; headroom::kernel::cgroup::OPEN_BUF_LEN];
        let mem = headroom::plan::host::memory(root, &mut buf)
            .map_err(|_| Fail(format!("{from} {dir}: cannot read proc/meminfo")))?;
        let cg = headroom::kernel::cgroup::open_memory(root, &mut buf)
            .ok()
            .flatten();
        let mut me = Lease::empty();
        me.uid = rustix::process::geteuid().as_raw();
        me.pid = rustix::process::getpid()
            .as_raw_nonzero()
            .get()
            .unsigned_abs();
        me.run = headroom::govern::lease::cut(run_id);
        me.cap = cap;
        me.running = 1;
        me.allowed = 1;
        me.peak_mb = peak_mb;
        me.growth_mb = peak_mb;
        let pool =
            MemPool::open(dir, me.pid, me.uid, &me).map_err(|e| Fail(open_text(from, dir, e)))?;
        let mut s = Shared {
            pool,
            dir: dir.to_string(),
            me,
            cg,
            mem_total_kib: mem.meminfo.mem_total_kib,
            others: heapless::Vec::new(),
            seen: heapless::Vec::new(),
            warned: heapless::Vec::new(),
            dir_buf: vec![MaybeUninit::uninit(); 8 * 1024],
            file_buf: vec![0u8; LEASE_CAP + 1],
            cg_buf: vec![0u8; headroom::kernel::cgroup::TICK_BUF_LEN],
            write_failing: false,
            looks: 0,
            admitted_last: (1, 1),
        };
        s.refresh_limits();
        Ok(s)
    }

    /// The pool at the last look, for the row (and `--prom`).
    pub fn figures(&self) -> headroom::tick::row::PoolFigures {
        headroom::tick::row::PoolFigures {
            others: u32::try_from(self.others.len()).unwrap_or(u32::MAX),
            others_growth_mb: self
                .others
                .iter()
                .fold(0u64, |a, l| a.saturating_add(l.growth_mb)),
            own_growth_mb: self.me.growth_mb,
        }
    }

    /// The pool and the other builds seen, for the summary.
    pub fn share(&self) -> headroom::report::jobserver_block::PoolShare {
        headroom::report::jobserver_block::PoolShare {
            dir: headroom::govern::lease::cut(&self.dir),
            others: self.seen.clone(),
        }
    }

    /// The jobs this governor has paused, into its lease (written at the
    /// next tick), so that whoever clears a dead lease continues them.
    pub fn set_paused(&mut self, paused: &[headroom::govern::lease::Paused]) {
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
    /// for the next run with that id (`govern::peakfile`); a failure is
    /// warned about. Returns whether it was written.
    pub fn remember(&self, run_id: &str, mb: u64) -> bool {
        let Err(e) = self.pool.remember_peak(run_id, mb) else {
            return true;
        };
        let why = match e {
            rustix::io::Errno::INVAL => "the run id is not a safe file name".to_string(),
            e => errtext(e),
        };
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: --pool {}: cannot remember run {run_id}'s peak per job ({mb} MiB): {why}",
            self.dir
        );
        false
    }

    /// The limits the build lies in, into its lease.
    fn refresh_limits(&mut self) -> heapless::Vec<Limit, 8> {
        let mut out = heapless::Vec::new();
        self.me.limits.clear();
        if let Some(cg) = &self.cg {
            for l in cg.limits(self.mem_total_kib, &mut self.cg_buf) {
                let _ = self.me.limits.push(l.ino);
                let _ = out.push(Limit {
                    ino: l.ino,
                    available_mb: l.mem.available_bytes >> 20,
                });
            }
        }
        out
    }

    /// One tick in the pool: locked, the others looked at, how many jobs
    /// it admits this build handed to `decide` (the governor's tick, which
    /// returns the jobs running and allowed, and whether the build would
    /// start more), then this governor's lease rewritten, and unlocked.
    /// When the lock cannot be had this tick, `decide` gets what the pool
    /// admitted last and the lease stays as it was.
    ///
    /// Never inlined: its look holds a few KiB of names and leases on the
    /// stack, which inlined into the recording loop every recording's
    /// frame would carry (and make resident), `--pool` or not.
    #[inline(never)]
    pub fn tick(
        &mut self,
        own: Own,
        decide: impl FnOnce(u32) -> (u32, u32, bool),
    ) -> Option<Admission> {
        let limits = self.refresh_limits();
        let Ok(guard) = self.pool.lock_pool() else {
            decide(self.me.allowed.max(1));
            return None;
        };
        let host_mb = self.mem_total_kib / 1024;
        let before = self.others.len();
        let mut issues: heapless::Vec<(heapless::String<64>, Issue), 8> = heapless::Vec::new();
        let looked = guard.look(
            host_mb,
            &mut self.dir_buf,
            &mut self.file_buf,
            &mut self.others,
            &mut |name, issue| {
                let name = core::str::from_utf8(name).unwrap_or("?");
                let name = heapless::String::try_from(name).unwrap_or_default();
                let _ = issues.push((name, issue));
            },
        );
        if looked.is_err() {
            self.others.clear();
        }
        let mut a = admit::admit(&own, &limits, &self.others);
        // Builds started together make their leases within moments of each
        // other, before CMD starts: the first look admits no job beyond the
        // implicit one, so that by the next (a tick later) everyone started
        // with this one is counted and none takes the whole pool first.
        // After that, a change is acted on once two looks agree, but for
        // a build that left: its lease went after its jobs, so its share is
        // free and the survivors take it at once (PAR5).
        let (prev, granted) = self.admitted_last;
        let now = a.allowed;
        let left = self.others.len() < before;
        a.allowed = match self.looks {
            0 => 1,
            _ if left && now > granted => now,
            _ => admit::steady(granted, prev, now),
        };
        self.admitted_last = (now, a.allowed);
        self.looks = self.looks.saturating_add(1);
        let (running, allowed, wants_more) = decide(a.allowed);
        let me = &mut self.me;
        me.running = running;
        me.allowed = allowed;
        me.peak_mb = own.peak_mb;
        me.held_mb = own.held_mb;
        me.growth_mb =
            headroom::govern::jobserver::growth_mb(allowed.max(running), own.peak_mb, own.held_mb);
        me.wants_more = wants_more;
        let written = guard.write(me);
        drop(guard);
        if let Err(e) = written
            && !self.write_failing
        {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: --pool {}: cannot rewrite its lease: {}; the others count its last figures",
                self.dir,
                errtext(e)
            );
        }
        self.write_failing = written.is_err();
        for (name, issue) in issues {
            say(&self.dir, &mut self.warned, &name, &issue);
        }
        for l in &self.others {
            if !self.seen.iter().any(|s| s.as_str() == l.run.as_str()) {
                let _ = self.seen.push(l.run.clone());
            }
        }
        Some(a)
    }
}

/// The peak per job pool DIR (named by `from`) remembers for `run_id`,
/// MiB; `None` when it has none. A file that is there but cannot be used
/// is warned about and ignored, and so is a run id that cannot name one.
pub fn remembered(dir: &str, from: &str, run_id: &str) -> Option<u64> {
    use headroom::govern::peakfile::{PEAK_FILE_CAP, PEAK_PREFIX, PeakIssue};
    let uid = rustix::process::geteuid().as_raw();
    let mut buf = vec![0u8; PEAK_FILE_CAP + 1];
    let issue = match headroom::govern::pool::remembered_peak(dir, uid, run_id, &mut buf) {
        Ok(peak) => return peak,
        Err(i) => i,
    };
    let why = match issue {
        PeakIssue::BadName => {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: {from} {dir}: run id '{}' is not a safe file name (1 to 64 letters, digits, . _ -, no leading dot): its peak per job is not remembered",
                super::messages::shown(run_id)
            );
            return None;
        }
        PeakIssue::NotRegular => "not a regular file (a symlink?), never followed".into(),
        PeakIssue::Untrusted { uid } => format!("owned by uid {uid}, not this user or root"),
        PeakIssue::Unreadable(e) => format!("cannot be read: {}", errtext(e)),
        PeakIssue::Unparsable(e) => format!("not a peak file ({e:?})"),
    };
    let _ = writeln!(
        std::io::stderr(),
        "headroom: warning: {from} {dir}: {PEAK_PREFIX}{run_id}: {why}; ignored"
    );
    None
}

/// What is wrong with a file the pool does not count.
fn what(issue: &Issue) -> String {
    match issue {
        Issue::Dead(l) => format!("run {}, whose governor is gone", l.run.as_str()),
        Issue::NotRegular => "not a regular file (a symlink?), never followed".into(),
        Issue::Untrusted { uid } => format!("owned by uid {uid}, not this user or root"),
        Issue::Unparsable(e) => format!("not a lease ({e:?})"),
        Issue::Absurd { growth_mb } => {
            format!("claims {growth_mb} MiB of growth, more than this host has")
        }
        Issue::Unreadable(e) => format!("cannot be read: {}", errtext(*e)),
        Issue::TooMany => format!("more than {LEASES_CAP} leases"),
    }
}

/// One line for a file the pool did not count, once per file; a dead
/// lease (removed) every time, with the jobs it had paused continued.
fn say(dir: &str, warned: &mut heapless::Vec<heapless::String<64>, 16>, name: &str, issue: &Issue) {
    if let Issue::Dead(l) = issue {
        let continued = match super::pause::continue_jobs(&l.paused) {
            0 => String::new(),
            n => format!(", and the {n} job(s) it had paused continued"),
        };
        let _ = writeln!(
            std::io::stderr(),
            "headroom: --pool {dir}: {name} ({}); removed{continued}",
            what(issue)
        );
        return;
    }
    if warned.iter().any(|w| w.as_str() == name) {
        return;
    }
    if let Ok(n) = heapless::String::try_from(name) {
        let _ = warned.push(n);
    }
    let _ = writeln!(
        std::io::stderr(),
        "headroom: warning: --pool {dir}: {name}: {}; ignored",
        what(issue)
    );
}

/// The one line for a pool that cannot be used.
fn open_text(from: &str, dir: &str, e: OpenError) -> String {
    match e {
        OpenError::Dir(rustix::io::Errno::LOOP) => {
            format!("{from} {dir}: is a symlink; name the directory itself")
        }
        OpenError::Dir(e) => format!("{from} {dir}: {}", errtext(e)),
        OpenError::Untrusted { mode } => format!(
            "{from} {dir}: others may write it (mode {mode:o}) and it is not sticky: refused (chmod o-w, or +t as /tmp)"
        ),
        OpenError::Lock(e) => format!("{from} {dir}: cannot open its lock file: {}", errtext(e)),
        OpenError::Busy => format!("{from} {dir}: its lock stays taken (a stopped governor?)"),
        OpenError::Lease(e) => format!("{from} {dir}: cannot write a lease: {}", errtext(e)),
    }
}

/// The leases of pool DIR that count, and the files it did not count
/// (name, why), for `status`.
pub type Peeked = (Box<heapless::Vec<Lease, LEASES_CAP>>, Vec<(String, String)>);

/// Reads pool DIR's leases as `status` shows them.
///
/// # Errors
/// One line when DIR cannot be used as a pool (as `run --pool` would
/// refuse it).
pub fn peek_pool(dir: &str, mem_total_kib: u64) -> Result<Peeked, Fail> {
    let mut dir_buf = vec![MaybeUninit::<u8>::uninit(); 8 * 1024];
    let mut file_buf = vec![0u8; LEASE_CAP + 1];
    let mut leases: Box<heapless::Vec<Lease, LEASES_CAP>> = Box::default();
    let mut notes = Vec::new();
    let uid = rustix::process::geteuid().as_raw();
    headroom::govern::pool::peek(
        dir,
        uid,
        mem_total_kib / 1024,
        &mut dir_buf,
        &mut file_buf,
        &mut leases,
        &mut |name, issue| {
            let name = String::from_utf8_lossy(name).into_owned();
            let why = match issue {
                Issue::Dead(_) => format!("{} (the next run in the pool removes it)", what(&issue)),
                _ => format!("{}; not counted", what(&issue)),
            };
            notes.push((name, why));
        },
    )
    .map_err(|e| Fail(open_text("--pool", dir, e)))?;
    Ok((leases, notes))
}
