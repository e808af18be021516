//! A memory pool (`run --jobserver --pool DIR`) in words: why a pool cannot
//! be used or a file in it is not counted, the remembered peaks read before
//! a run (the build's and each job's; their warnings), and a pool's leases
//! and per-job peaks peeked at without joining it (which `status --pool`,
//! `cli/status_pool.rs`, shows). This governor's
//! side of the pool while it runs is the library's
//! `govern::jobserver::pool_member`.

use std::io::Write;
use std::mem::MaybeUninit;

use headroom::govern::jobserver::budget_file::BUDGET_NAME;
use headroom::govern::jobserver::job_peaks::{JOB_PEAKS_BUF, JOBS_PREFIX, JobPeaks};
use headroom::govern::jobserver::lease::{LEASE_CAP, Lease};
use headroom::govern::jobserver::peakfile::PeakIssue;
use headroom::govern::jobserver::pool_dir::{
    Access, Issue, LEASES_CAP, LOCK_NAME, OpenError, remembered_job_peaks,
};

use super::messages::{Fail, errtext};

/// The peak per job pool DIR (named by `from`) remembers for `run_id`,
/// MiB; `None` when it has none. A file that is there but cannot be used
/// is warned about and ignored, and so is a run id that cannot name one.
pub fn remembered(dir: &str, from: &str, run_id: &str) -> Option<u64> {
    use headroom::govern::jobserver::peakfile::{PEAK_FILE_CAP, PEAK_PREFIX};
    let uid = rustix::process::geteuid().as_raw();
    let mut buf = vec![0u8; PEAK_FILE_CAP + 1];
    let issue =
        match headroom::govern::jobserver::pool_dir::remembered_peak(dir, uid, run_id, &mut buf) {
            Ok(peak) => return peak,
            Err(i) => i,
        };
    if issue == PeakIssue::BadName {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: {from} {dir}: run id '{}' is not a safe file name (1 to 64 letters, digits, . _ -, no leading dot): its peak per job is not remembered",
            super::messages::shown(run_id)
        );
        return None;
    }
    let why = peak_what(issue, "a peak file");
    let _ = writeln!(
        std::io::stderr(),
        "headroom: warning: {from} {dir}: {PEAK_PREFIX}{run_id}: {why}; ignored"
    );
    None
}

/// What is wrong with a pool's remembered-peak file (`kind`: what it is
/// not, e.g. "a peak file").
pub fn peak_what(issue: PeakIssue, kind: &str) -> String {
    match issue {
        PeakIssue::BadName => "its name is not a safe run id".into(),
        PeakIssue::NotRegular => "not a regular file (a symlink?), never followed".into(),
        PeakIssue::Untrusted { uid } => format!("owned by uid {uid}, not this user or root"),
        PeakIssue::Unreadable(e) => format!("cannot be read: {}", errtext(e)),
        PeakIssue::Unparsable(e) => format!("not {kind} ({e:?})"),
    }
}

/// What is wrong with a file the pool does not count.
pub fn what(issue: &Issue) -> String {
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

/// Reads into `into` the peaks pool `dir` remembers for the jobs of run
/// `run_id` (`job_peaks`); a file there that is not used is warned about
/// and ignored (nothing remembered: every job weighs the build's peak).
pub fn remembered_jobs(dir: &str, run_id: &str, into: &mut JobPeaks) {
    let uid = rustix::process::geteuid().as_raw();
    let mut buf = vec![0u8; JOB_PEAKS_BUF];
    let why = match remembered_job_peaks(dir, uid, run_id, &mut buf, into) {
        Ok(_) | Err(PeakIssue::BadName) => return,
        Err(issue) => peak_what(issue, "a table of job peaks"),
    };
    into.clear();
    let _ = writeln!(
        std::io::stderr(),
        "headroom: warning: --pool {dir}: {JOBS_PREFIX}{run_id}: {why}; ignored"
    );
}

/// The one line for a pool that cannot be used: the pool directory, the
/// cause, and what to do where the user can do something.
pub fn open_text(from: &str, dir: &str, e: OpenError) -> String {
    use rustix::io::Errno;
    let uid = rustix::process::geteuid().as_raw();
    let at = format!("{from} {dir}");
    let whose = |a: Access| format!("owner {}, mode {:04o}", a.owner, a.mode);
    match e {
        OpenError::Create(Errno::ACCESS | Errno::PERM) => format!(
            "{at}: cannot create it: uid {uid} may not write its parent directory, or search one above it: make it once as a user who may (install -d -m 1777 {dir}), or name another"
        ),
        OpenError::Create(Errno::NOTDIR) => {
            format!("{at}: cannot create it: Not a directory (a parent of it is a file)")
        }
        OpenError::Create(e) => format!("{at}: cannot create it: {}", errtext(e)),
        OpenError::Symlink => {
            format!("{at}: is a symlink, never followed; name the directory itself")
        }
        OpenError::Dir(Errno::ACCESS) => format!(
            "{at}: uid {uid} may not reach it (a directory above it is not searchable: {})",
            errtext(Errno::ACCESS)
        ),
        OpenError::Dir(e) => format!("{at}: {}", errtext(e)),
        OpenError::NotReadable(a) => format!(
            "{at}: not readable by uid {} ({}): make it readable and writable (BuildKit: --mount=type=cache,...,mode=1777), or run as its owner",
            a.uid,
            whose(a)
        ),
        OpenError::NotWritable(a) => format!(
            "{at}: not writable by uid {} ({}): make it writable (BuildKit: --mount=type=cache,...,mode=1777), or run as its owner",
            a.uid,
            whose(a)
        ),
        OpenError::Untrusted { mode } => format!(
            "{at}: users other than its owner may write it (mode {mode:04o}) and it is not sticky: refused (chmod +t it, as /tmp is, or chmod go-w)"
        ),
        OpenError::LockDenied(a) => format!(
            "{at}: its lock file {LOCK_NAME} is not readable by uid {} ({}): make it mode 0644 (chmod, as its owner or root)",
            a.uid,
            whose(a)
        ),
        OpenError::Lock(Errno::LOOP) => {
            format!("{at}: its lock file {LOCK_NAME} is a symlink, never followed: remove it")
        }
        OpenError::Lock(e) => format!(
            "{at}: cannot open or make its lock file {LOCK_NAME}: {}",
            errtext(e)
        ),
        OpenError::Locking(e) => format!(
            "{at}: cannot lock its lock file {LOCK_NAME} with flock(2): {} (name a directory on a file system with locks)",
            errtext(e)
        ),
        OpenError::Busy => format!("{at}: its lock stays taken (a stopped governor?)"),
        OpenError::Lease(e) => format!("{at}: cannot write a lease: {}", errtext(e)),
    }
}

/// `status --pool DIR --set-budget`: pool `dir`'s budget set to `mb`
/// MiB, or removed (`None`).
///
/// # Errors
/// One line: DIR cannot be used as a pool, or the file cannot be written
/// or removed.
pub fn set_budget(dir: &str, mb: Option<u64>) -> Result<(), Fail> {
    use headroom::govern::jobserver::pool_dir;
    match pool_dir::set_budget(dir, mb) {
        Ok(()) => Ok(()),
        Err(OpenError::Lease(e)) => Err(Fail(format!(
            "--pool {dir}: cannot {} its {BUDGET_NAME} file: {}",
            if mb.is_some() { "write" } else { "remove" },
            errtext(e)
        ))),
        Err(e) => Err(Fail(open_text("--pool", dir, e))),
    }
}

/// The warning for a build that joins pool DIR (named by `from`) with
/// the run id `run_id` of another live build there, whose governor is
/// `pid` in its own namespace.
pub fn run_id_shared_text(from: &str, dir: &str, run_id: &str, pid: u32) -> String {
    format!(
        "headroom: warning: {from} {dir}: run id {} is also used by a live build (pid {pid}): give each lane its own --run-id; their remembered peaks mix",
        super::messages::shown(run_id)
    )
}

/// Pool DIR's leases as peeked at for `status`: those that count, and the
/// files it did not count; and the per-job peaks it remembers.
pub struct Peeked {
    /// The leases that count (live governors, growth no larger than the
    /// host's memory), at most [`LEASES_CAP`].
    pub leases: Box<heapless::Vec<Lease, LEASES_CAP>>,
    /// The per-job peak files (`jobs-RUN`) that could be read, by run id.
    pub job_peaks: Vec<Remembered>,
    /// The files not counted (leases, then per-job peak files), in the
    /// order the directory lists them.
    pub not_counted: Vec<NotCounted>,
    /// The pool's budget (`budget_file`), MiB; `None` when none is set
    /// (or its file is not used: then it is among `not_counted`).
    pub budget_mb: Option<u64>,
}

/// How many of a run's heaviest jobs `status --pool` names.
pub const HEAVIEST_SHOWN: usize = 5;

/// What a pool remembers of one run id's jobs (its `jobs-RUN` file).
pub struct Remembered {
    /// The run id.
    pub run: String,
    /// How many jobs it remembers.
    pub jobs: usize,
    /// The largest peak of a job not kept (the table was full), MiB; 0
    /// when none.
    pub others_mb: u64,
    /// Lines of the file skipped (malformed, or a torn last line).
    pub bad_lines: u32,
    /// Its [`HEAVIEST_SHOWN`] heaviest jobs, heaviest first: the key
    /// (invalid UTF-8 shown as U+FFFD) and the peak, MiB.
    pub heaviest: Vec<(String, u32)>,
}

/// A file of a pool directory that is not counted.
pub struct NotCounted {
    /// Its name, invalid UTF-8 shown as U+FFFD.
    pub file: String,
    /// Why, as one phrase (`not a lease (…); not counted`).
    pub why: String,
}

/// Reads pool DIR's leases as `status` shows them.
///
/// # Errors
/// One line when DIR cannot be used as a pool (as `run --pool` would
/// refuse it).
pub fn peek_pool(dir: &str, mem_total_kib: u64) -> Result<Peeked, Fail> {
    let mut dir_buf = vec![MaybeUninit::<u8>::uninit(); 8 * 1024];
    let mut file_buf = vec![0u8; LEASE_CAP + 1];
    let mut leases: Box<heapless::Vec<Lease, LEASES_CAP>> = Box::default();
    let mut not_counted = Vec::new();
    let uid = rustix::process::geteuid().as_raw();
    headroom::govern::jobserver::pool_dir::peek(
        dir,
        uid,
        mem_total_kib / 1024,
        &mut dir_buf,
        &mut file_buf,
        &mut leases,
        &mut |name, issue| {
            let file = String::from_utf8_lossy(name).into_owned();
            let why = match issue {
                Issue::Dead(_) => format!("{} (the next run in the pool removes it)", what(&issue)),
                _ => format!("{}; not counted", what(&issue)),
            };
            not_counted.push(NotCounted { file, why });
        },
    )
    .map_err(|e| Fail(open_text("--pool", dir, e)))?;
    let job_peaks = peek_job_peaks(dir, uid, &mut dir_buf, &mut not_counted)?;
    let budget_mb =
        match headroom::govern::jobserver::pool_dir::peek_budget(dir, uid, &mut file_buf) {
            Ok(mb) => mb,
            Err(issue) => {
                not_counted.push(NotCounted {
                    file: BUDGET_NAME.into(),
                    why: format!("{}; not used", peak_what(issue, "a budget")),
                });
                None
            }
        };
    Ok(Peeked {
        leases,
        job_peaks,
        not_counted,
        budget_mb,
    })
}

/// Reads every `jobs-RUN` of pool DIR as `status` shows them, by run id;
/// each file that cannot be used goes to `not_counted`.
fn peek_job_peaks(
    dir: &str,
    uid: u32,
    dir_buf: &mut [MaybeUninit<u8>],
    not_counted: &mut Vec<NotCounted>,
) -> Result<Vec<Remembered>, Fail> {
    use headroom::govern::jobserver::job_peaks::{JOB_PEAKS_BUF, JOBS_PREFIX, JobPeaks};
    let mut file_buf = vec![0u8; JOB_PEAKS_BUF];
    let mut table = Box::new(JobPeaks::new());
    let mut found = Vec::new();
    headroom::govern::jobserver::pool_dir::peek_job_peaks(
        dir,
        uid,
        dir_buf,
        &mut file_buf,
        &mut table,
        &mut |name, read| {
            let file = String::from_utf8_lossy(name).into_owned();
            let t = match read {
                Ok(t) => t,
                Err(issue) => {
                    let why = format!("{}; not used", peak_what(issue, "a per-job peak file"));
                    not_counted.push(NotCounted { file, why });
                    return;
                }
            };
            let mut top = heapless::Vec::<_, HEAVIEST_SHOWN>::new();
            t.heaviest(&mut top);
            found.push(Remembered {
                run: file.strip_prefix(JOBS_PREFIX).unwrap_or(&file).to_string(),
                jobs: t.len(),
                others_mb: t.others_mb(),
                bad_lines: t.skipped(),
                heaviest: top
                    .iter()
                    .map(|e| (String::from_utf8_lossy(&e.key).into_owned(), e.peak_mb))
                    .collect(),
            });
        },
    )
    .map_err(|e| Fail(open_text("--pool", dir, e)))?;
    // Stable, as `sort_by` was: ties keep the order they were found in.
    headroom::kernel::order::sort_stable_by(&mut found, |a, b| a.run < b.run);
    Ok(found)
}
