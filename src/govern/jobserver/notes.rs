//! What the governor tells while it runs, as values: the warning sink
//! (`tick::sampler::Warn`) hears them through [`Tell`] and words them.
//! Whether a note is told (once, on a change, with `--explain` only) is
//! decided where it arises; the sink only renders it.

use rustix::io::Errno;

use crate::govern::jobserver::ceiling::Noticed;
use crate::govern::jobserver::peakfile::PeakIssue;
use crate::govern::jobserver::pool_dir::Issue;
use crate::report::jobserver_block::PeakReport;
use crate::tick::sampler::Warn;

/// One thing the governor tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note<'a> {
    /// `--explain`: the peak per job moved from `was_mb` to `now`'s.
    PeakMoved {
        /// What was last told, MiB.
        was_mb: u64,
        /// The estimate now, and why.
        now: PeakReport,
    },
    /// `--explain`: the jobs allowed at once changed, and why.
    Slots {
        /// Jobs allowed at once now.
        allowed: u32,
        /// Why that many.
        why: SlotsWhy<'a>,
    },
    /// `--explain`: job `pid` started, named `key` (`followed::jobkey`;
    /// empty when its command line named nothing), expected to reach
    /// `expected_mb`: its `remembered_mb` plus the margin, else the
    /// build's peak per job.
    JobStarted {
        /// The job's first process.
        pid: u32,
        /// Its key.
        key: &'a [u8],
        /// The peak it is weighed at, MiB.
        expected_mb: u64,
        /// The peak the pool remembers for its key, MiB.
        remembered_mb: Option<u64>,
    },
    /// `--explain`: job `pid` (`rss_mb` held) paused: the running jobs may
    /// grow by more than `room_mb`.
    Paused {
        /// The job's first process.
        pid: u32,
        /// Its key (empty: none).
        key: &'a [u8],
        /// The peak it is weighed at, MiB.
        expected_mb: u64,
        /// What its processes hold, MiB.
        rss_mb: u64,
        /// The room left, MiB.
        room_mb: i64,
    },
    /// `--explain`: job `pid` continued after `held_ms` paused.
    Continued {
        /// The job's first process.
        pid: u32,
        /// Its key (empty: none).
        key: &'a [u8],
        /// The peak it is weighed at, MiB.
        expected_mb: u64,
        /// How long it was paused, ms.
        held_ms: u64,
        /// The room left, MiB.
        room_mb: i64,
    },
    /// `--explain`: the running jobs stalled: all `jobs` paused ones
    /// continued (`pause_rule::STALL_MS`).
    ContinuedAll {
        /// Jobs continued.
        jobs: usize,
    },
    /// A file of pool `dir` not counted (each file once), or a dead lease
    /// removed (each time), whose `continued` paused jobs were continued.
    PoolFile {
        /// The pool directory as given.
        dir: &'a str,
        /// The file's name in it.
        name: &'a str,
        /// Why it is not counted.
        issue: &'a Issue,
        /// Jobs of a dead lease continued.
        continued: u32,
    },
    /// A limit above the container that no file states was noticed
    /// (`ceiling`): told once, whatever `--explain`.
    Ceiling(Noticed),
    /// The budget of pool `dir` (`budget_file`) changed: set or moved to
    /// `Ok(Some(mb))`, removed (`Ok(None)`), or a file that cannot be
    /// used (`Err`): told when first seen.
    PoolBudget {
        /// The pool directory as given.
        dir: &'a str,
        /// The budget now, MiB.
        now: Result<Option<u64>, PeakIssue>,
    },
    /// This governor's lease in pool `dir` could not be rewritten (told
    /// when that starts).
    LeaseUnwritable {
        /// The pool directory as given.
        dir: &'a str,
        /// pwrite(2)'s or ftruncate(2)'s.
        errno: Errno,
    },
    /// At the end: pool `dir` remembers `mb` for run `run_id` (`--explain`),
    /// or could not (`errno`: `EINVAL` for a run id that names no file).
    Remembered {
        /// The pool directory as given.
        dir: &'a str,
        /// The run id.
        run_id: &'a str,
        /// The peak per job remembered, MiB.
        mb: u64,
        /// `Err`: why it was not written.
        written: Result<(), Errno>,
    },
    /// With `--pool`, at the end of a run that exited 0: the peaks of its
    /// `jobs` jobs (by key, `job_peaks`) merged into what pool `dir`
    /// remembers for `run_id` (told with `--explain`, or when it failed).
    RememberedJobs {
        /// The pool directory as given.
        dir: &'a str,
        /// The run id.
        run_id: &'a str,
        /// Jobs measured with a key.
        jobs: u32,
        /// `Err`: why it was not written.
        written: Result<(), Errno>,
    },
}

/// Why the jobs allowed at once are what they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotsWhy<'a> {
    /// Memory, as the pool `dir` admits it with `others` other builds.
    Pool {
        /// The pool directory as given.
        dir: &'a str,
        /// The room after this build's growth, MiB.
        room_mb: i64,
        /// The peak per job, MiB.
        peak_mb: u64,
        /// Other builds in the pool.
        others: usize,
        /// Slots left to builds running fewer jobs.
        yielded: u32,
    },
    /// Memory, this build alone.
    Memory {
        /// The room for new jobs, MiB.
        room_mb: i64,
        /// The peak per job, MiB.
        peak_mb: u64,
        /// Usable memory, MiB.
        usable_mb: u64,
        /// Jobs running.
        running: u32,
    },
    /// The cap (cores or `--max-jobs`).
    Cap(u32),
    /// The cores' cap (`handout::CapFrom::Cores`: no `-jN`, no
    /// `--max-jobs`), and as many more slots as jobs are paused (their
    /// cores are idle) that memory holds: `paused`. A cap the user gave
    /// is never exceeded (`handout::Handout::cap_with`).
    Handed {
        /// The cap: the usable cores.
        cap: u32,
        /// Slots beyond it.
        paused: u32,
    },
}

/// The warning sink, hearing the governor too.
pub trait Tell: Warn {
    /// Words `note` for the user.
    fn tell(&mut self, note: &Note<'_>);
}
