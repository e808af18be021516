//! Pause, don't kill: which job of the build to stop (SIGSTOP) when its
//! running jobs may outgrow the room they have, and which to continue when
//! room returns.
//!
//! Token gating only stops jobs from starting; a job that grows past its
//! estimate can still get the build OOM-killed. So, each tick:
//!
//! - the growth still ahead of the running jobs is Σ max(peak − RSS, 0)
//!   over the jobs not paused (a paused job does not grow);
//! - when that exceeds the room (usable memory less the other builds'
//!   reservations and the reserve), the running job that started last is
//!   paused, never the last one running;
//! - when room holds a paused job's own growth again (with the reserve to
//!   spare, so a job is not paused and continued on alternate ticks), the
//!   paused job that started first is continued;
//! - when the jobs still running have made no CPU progress for a while
//!   (`stalled`: a paused job may hold a lock they wait on), the paused job
//!   that started first is continued, whatever the room.
//!
//! One action a tick. Pure: the caller reads the jobs and sends signals.

use crate::govern::jobserver::RESERVE_MB;

/// One job of the build: a child of the build tool (make, ninja) and its
/// descendants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// The job's first process.
    pub pid: u32,
    /// Its start time, clock ticks after boot (`/proc/PID/stat` field 22):
    /// the order jobs started in, and what makes a reused PID another job.
    pub start_ticks: u64,
    /// What its processes hold now (RSS), MiB.
    pub rss_mb: u64,
    /// Stopped by us.
    pub paused: bool,
}

/// What one tick does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// Nothing.
    Hold,
    /// Stop `jobs[i]` (SIGSTOP to its processes).
    Pause(usize),
    /// Continue `jobs[i]` (SIGCONT).
    Resume(usize),
}

/// The growth still ahead of `job` at `peak_mb` per job, MiB.
pub fn ahead(job: &Job, peak_mb: u64) -> u64 {
    peak_mb.saturating_sub(job.rss_mb)
}

/// This tick's action for the build's `jobs`, `room_mb` (usable memory
/// less the other builds' reserved growth and the reserve; may be
/// negative) and `peak_mb` per job; `stalled`: the running jobs made no CPU
/// progress lately while one is paused.
pub fn decide(jobs: &[Job], peak_mb: u64, room_mb: i64, stalled: bool) -> Act {
    let running = jobs.iter().filter(|j| !j.paused).count();
    let growth: i128 = jobs
        .iter()
        .filter(|j| !j.paused)
        .map(|j| i128::from(ahead(j, peak_mb)))
        .sum();
    let first_paused = first(jobs, |j| j.paused);
    if stalled && let Some(i) = first_paused {
        return Act::Resume(i);
    }
    if growth > i128::from(room_mb)
        && running > 1
        && let Some(i) = last(jobs, |j| !j.paused)
    {
        return Act::Pause(i);
    }
    if let Some(i) = first_paused {
        let left = i128::from(room_mb) - growth;
        if left >= i128::from(ahead(&jobs[i], peak_mb)) + i128::from(RESERVE_MB) || running == 0 {
            return Act::Resume(i);
        }
    }
    Act::Hold
}

/// The index of the job that started first among those `keep` selects.
fn first(jobs: &[Job], keep: impl Fn(&Job) -> bool) -> Option<usize> {
    (0..jobs.len())
        .filter(|&i| keep(&jobs[i]))
        .min_by_key(|&i| (jobs[i].start_ticks, jobs[i].pid))
}

/// The index of the job that started last among those `keep` selects.
fn last(jobs: &[Job], keep: impl Fn(&Job) -> bool) -> Option<usize> {
    (0..jobs.len())
        .filter(|&i| keep(&jobs[i]))
        .max_by_key(|&i| (jobs[i].start_ticks, jobs[i].pid))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(pid: u32, start_ticks: u64, rss_mb: u64, paused: bool) -> Job {
        Job {
            pid,
            start_ticks,
            rss_mb,
            paused,
        }
    }

    #[test]
    fn the_job_started_last_is_paused_when_growth_outruns_room() {
        // Three jobs of a 180 MiB peak at 40, 60 and 20 MiB: 420 MiB ahead.
        let jobs = [
            job(10, 100, 40, false),
            job(11, 300, 60, false),
            job(12, 200, 20, false),
        ];
        assert_eq!(decide(&jobs, 180, 420, false), Act::Hold);
        assert_eq!(decide(&jobs, 180, 419, false), Act::Pause(1));
        // Never the last one running.
        let alone = [job(10, 100, 40, false), job(11, 300, 60, true)];
        assert_eq!(decide(&alone, 180, 0, false), Act::Hold);
        assert_eq!(decide(&alone, 180, -500, false), Act::Hold);
    }

    #[test]
    fn room_returning_continues_the_first_paused_with_a_margin() {
        let jobs = [
            job(10, 100, 170, false),
            job(11, 300, 60, true),
            job(12, 200, 20, true),
        ];
        // Running growth 10; job 12 (started first of the paused) needs
        // 160 more, plus the reserve.
        assert_eq!(
            decide(&jobs, 180, 10 + 160 + RESERVE_MB as i64 - 1, false),
            Act::Hold
        );
        assert_eq!(
            decide(&jobs, 180, 10 + 160 + RESERVE_MB as i64, false),
            Act::Resume(2)
        );
        // With nothing running, a paused job goes on whatever the room.
        let none = [job(11, 300, 60, true)];
        assert_eq!(decide(&none, 180, -1000, false), Act::Resume(0));
    }

    #[test]
    fn a_stall_continues_a_paused_job_whatever_the_room() {
        let jobs = [job(10, 100, 40, false), job(11, 300, 60, true)];
        assert_eq!(decide(&jobs, 180, -1000, false), Act::Hold);
        assert_eq!(decide(&jobs, 180, -1000, true), Act::Resume(1));
        // A stall with nothing paused changes nothing.
        let running = [job(10, 100, 40, false), job(11, 300, 60, false)];
        assert_eq!(decide(&running, 180, 1000, true), Act::Hold);
    }

    #[test]
    fn ties_and_empty_sets_are_decided_without_panic() {
        assert_eq!(decide(&[], 180, -5, true), Act::Hold);
        // The same start tick: the higher PID counts as later.
        let jobs = [job(20, 5, 0, false), job(21, 5, 0, false)];
        assert_eq!(decide(&jobs, 180, 0, false), Act::Pause(1));
        let huge = [job(1, 1, 0, false), job(2, 2, 0, false)];
        assert_eq!(decide(&huge, u64::MAX, i64::MAX, false), Act::Pause(1));
    }
}
