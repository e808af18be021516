//! Pause, don't kill: which job of the build to stop (SIGSTOP) when its
//! running jobs may outgrow the room they have, and which to continue when
//! room returns.
//!
//! Token gating only stops jobs from starting; a job that grows past its
//! estimate can still get the build OOM-killed. So, each tick:
//!
//! - the growth still ahead of a running job is the larger of what it
//!   lacks to the peak per job (peak − RSS; the governor's estimate,
//!   `jobserver::estimate`, which the largest job raises) and what it would add in
//!   [`HORIZON_MS`] at the rate it grew since the last tick (the peak is an
//!   estimate; a job above it is not done growing); a paused job does not
//!   grow;
//! - when the running jobs' growth exceeds the room (usable memory less
//!   the other builds' reservations and the reserve), the running job that
//!   started last is paused, never the last one running;
//! - when room holds a paused job's own growth again (with the reserve to
//!   spare, so a job is not paused and continued on alternate ticks), the
//!   paused job that started first is continued;
//! - a paused job that started before a running one goes first: when room
//!   would hold the paused job's growth with the later one paused, the later
//!   one is paused (the next tick continues the earlier), so a job the tool
//!   started in a freed slot does not starve a paused one;
//! - when the jobs still running have made no progress (CPU time or RSS)
//!   for [`STALL_MS`] while one is paused (it may hold a lock they wait
//!   on), every paused job is continued, whatever the room, and none is
//!   paused again for [`STALL_MS`] (the one that holds the lock is not
//!   known: continuing one by one could keep the holder stopped for
//!   good); when none runs, the paused job that started first goes on;
//! - a paused job does not grow, but it is taken to go on growing at the
//!   rate it had when it was paused, so it is not continued the moment
//!   its growth left the sum.
//!
//! One action a tick. [`decide`] is the rule, pure; [`Pauser`] keeps what
//! it needs between ticks (who is paused, the last RSS and CPU, the
//! counts); the caller reads the jobs (`followed::jobtree`) and sends the
//! signals.

use heapless::Vec;

use crate::followed::jobtree::{self, JOBS_CAP};
use crate::govern::jobserver::lease::{PAUSED_CAP, Paused};
use crate::govern::jobserver::room;

/// How far ahead a growing job's rate is carried, ms: eight governor
/// ticks, time to pause the next job before the growing ones arrive.
pub const HORIZON_MS: u64 = 2000;

/// How long the running jobs may make no progress while one is paused
/// before it is continued (it may hold what they wait for), ms.
pub const STALL_MS: u64 = 5000;

/// One job of the build as the rule sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// The job's first process.
    pub pid: u32,
    /// Its start time, clock ticks after boot (`/proc/PID/stat` field 22):
    /// the order jobs started in, and what makes a reused PID another job.
    pub start_ticks: u64,
    /// What its processes hold now (RSS), MiB.
    pub rss_mb: u64,
    /// How fast that grew since the last tick, MiB/s (0 when it did not;
    /// over at least a governor tick, [`Pauser::new`]'s pace, so that two ticks close
    /// together do not make a step of a few MiB a torrent).
    pub rate_mb_s: u64,
    /// Stopped by us.
    pub paused: bool,
    /// The peak it is expected to reach, MiB, when it has one of its own
    /// (`job_weights`: remembered for its key); `None`: the build's.
    pub peak_mb: Option<u64>,
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
    /// Continue every paused job (the running ones made no progress).
    ResumeAll,
}

/// The growth still ahead of `job`, MiB: to its own peak (a job's own
/// peak was measured whole: a job that outgrows it has none any more,
/// `job_weights`), else to the build's `peak_mb` per job or as far as
/// its rate carries it, whichever is more.
pub fn ahead(job: &Job, peak_mb: u64) -> u64 {
    if let Some(own) = job.peak_mb {
        return own.saturating_sub(job.rss_mb);
    }
    let carried = job.rate_mb_s.saturating_mul(HORIZON_MS) / 1000;
    peak_mb.saturating_sub(job.rss_mb).max(carried)
}

/// This tick's action for the build's `jobs`, `room_mb` (usable memory
/// less the other builds' reserved growth and the reserve; may be
/// negative) and `peak_mb` per job; `stalled`: the running jobs made no
/// progress lately while one is paused.
pub fn decide(jobs: &[Job], peak_mb: u64, room_mb: i64, stalled: bool) -> Act {
    let running = jobs.iter().filter(|j| !j.paused).count();
    let growth = |skip: Option<usize>| -> i128 {
        (0..jobs.len())
            .filter(|&i| !jobs[i].paused && Some(i) != skip)
            .map(|i| i128::from(ahead(&jobs[i], peak_mb)))
            .sum()
    };
    let room = i128::from(room_mb);
    let first_paused = first(jobs, |j| j.paused);
    let last_running = last(jobs, |j| !j.paused);
    if let Some(i) = first_paused {
        if stalled {
            return Act::ResumeAll;
        }
        if running == 0 {
            return Act::Resume(i);
        }
    }
    if growth(None) > room
        && running > 1
        && let Some(i) = last_running
    {
        return Act::Pause(i);
    }
    let Some(p) = first_paused else {
        return Act::Hold;
    };
    // The paused job's growth fits with the reserve to spare: room's
    // one formula, over what is left once the running ones grow.
    let fits = |left: i128| room::room_mb(left, ahead(&jobs[p], peak_mb)) >= 0;
    if fits(room - growth(None)) {
        return Act::Resume(p);
    }
    match last_running {
        Some(r) if later(&jobs[r], &jobs[p]) && fits(room - growth(Some(r))) => Act::Pause(r),
        _ => Act::Hold,
    }
}

/// The most one of `jobs` holds now (its processes' RSS summed), MiB;
/// `None` when there is none: what the build's jobs reach, for the
/// estimate per job (`jobserver::estimate::Seen::job_mb`).
pub fn largest_mb(jobs: &[jobtree::Job]) -> Option<u64> {
    jobs.iter().map(|j| j.rss_kib / 1024).max()
}

/// `a` started after `b`.
fn later(a: &Job, b: &Job) -> bool {
    (a.start_ticks, a.pid) > (b.start_ticks, b.pid)
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

/// A job as the last tick saw it.
#[derive(Clone, Copy, Debug)]
struct Seen {
    pid: u32,
    start_ticks: u64,
    rss_kib: u64,
    cpu_ticks: u64,
}

/// The pausing of one build across ticks.
#[derive(Clone, Debug, Default)]
pub struct Pauser {
    paused: Vec<Paused, PAUSED_CAP>,
    /// The rate each paused job grew at when it was paused, MiB/s (in the
    /// order of `paused`).
    rates: Vec<u64, PAUSED_CAP>,
    /// No job is paused before this time (after a stall), ms.
    calm_until: u64,
    prev: Vec<Seen, JOBS_CAP>,
    prev_ms: Option<u64>,
    progress_ms: u64,
    pauses: u32,
    paused_ms: u64,
    /// The governor's pace, ms (`driver::TICK_MS`): a job's rate is taken
    /// over at least this long.
    pace_ms: u64,
}

impl Pauser {
    /// Nothing paused yet; the governor ticks every `pace_ms` at most
    /// (`driver::TICK_MS`).
    pub fn new(pace_ms: u64) -> Pauser {
        Pauser {
            pace_ms,
            ..Pauser::default()
        }
    }

    /// This tick: `jobs` as scanned now (`followed::jobtree`), the
    /// governor's `peak_mb` per job (`jobserver::estimate`, which has taken in
    /// [`largest_mb`] of these jobs) for the jobs `own_peak` (pid, start
    /// ticks) gives none of their own (`job_weights`), `room_mb` as for
    /// [`decide`], `now_ms` a monotonic clock. The action
    /// is already booked (a `Pause` is in [`Pauser::paused`]); the caller
    /// sends the signal to `jobs[i]`'s processes.
    pub fn tick(
        &mut self,
        jobs: &[jobtree::Job],
        own_peak: impl Fn(u32, u64) -> Option<u64>,
        peak_mb: u64,
        room_mb: i64,
        now_ms: u64,
    ) -> Act {
        let dt = self.prev_ms.map_or(0, |p| now_ms.saturating_sub(p));
        let held = u64::try_from(self.paused.len()).unwrap_or(u64::MAX);
        self.paused_ms = self.paused_ms.saturating_add(held.saturating_mul(dt));
        self.forget_ended(jobs);
        let mut now: Vec<Job, JOBS_CAP> = Vec::new();
        let mut progress = false;
        for j in jobs {
            let before = self
                .prev
                .iter()
                .find(|s| (s.pid, s.start_ticks) == (j.pid, j.start_ticks));
            let paused = self.paused_at(j.pid, j.start_ticks);
            progress |= paused.is_none()
                && before.is_none_or(|s| (s.rss_kib, s.cpu_ticks) != (j.rss_kib, j.cpu_ticks));
            let rate_mb_s = match (paused, before) {
                (Some(k), _) => self.rates.get(k).copied().unwrap_or(0),
                (None, Some(s)) => {
                    j.rss_kib.saturating_sub(s.rss_kib).saturating_mul(1000)
                        / dt.max(self.pace_ms)
                        / 1024
                }
                _ => 0,
            };
            let _ = now.push(Job {
                pid: j.pid,
                start_ticks: j.start_ticks,
                rss_mb: j.rss_kib / 1024,
                rate_mb_s,
                paused: paused.is_some(),
                peak_mb: own_peak(j.pid, j.start_ticks),
            });
        }
        if progress || self.paused.is_empty() {
            self.progress_ms = now_ms;
        }
        let stalled = now_ms.saturating_sub(self.progress_ms) >= STALL_MS;
        let act = match decide(&now, peak_mb, room_mb, stalled) {
            Act::Pause(_) if now_ms < self.calm_until => Act::Hold,
            act => act,
        };
        self.book(act, &now, now_ms);
        self.prev.clear();
        for j in jobs.iter().take(JOBS_CAP) {
            let _ = self.prev.push(Seen {
                pid: j.pid,
                start_ticks: j.start_ticks,
                rss_kib: j.rss_kib,
                cpu_ticks: j.cpu_ticks,
            });
        }
        self.prev_ms = Some(now_ms);
        act
    }

    /// Books `act` on `jobs`: a pause that finds the table full holds.
    fn book(&mut self, act: Act, jobs: &[Job], now_ms: u64) {
        match act {
            Act::Pause(i) => {
                let p = Paused {
                    pid: jobs[i].pid,
                    start_ticks: jobs[i].start_ticks,
                };
                if self.paused.push(p).is_ok() {
                    let _ = self.rates.push(jobs[i].rate_mb_s);
                    self.pauses = self.pauses.saturating_add(1);
                }
            }
            Act::Resume(i) => {
                if let Some(k) = self.paused_at(jobs[i].pid, jobs[i].start_ticks) {
                    self.paused.remove(k);
                    self.rates.remove(k);
                }
                self.progress_ms = now_ms;
            }
            Act::ResumeAll => {
                self.release();
                self.progress_ms = now_ms;
                self.calm_until = now_ms.saturating_add(STALL_MS);
            }
            Act::Hold => {}
        }
    }

    /// Forgets the paused jobs that are not among `jobs` (they ended).
    fn forget_ended(&mut self, jobs: &[jobtree::Job]) {
        let mut k = 0;
        while k < self.paused.len() {
            let p = self.paused[k];
            if jobs
                .iter()
                .any(|j| (j.pid, j.start_ticks) == (p.pid, p.start_ticks))
            {
                k += 1;
            } else {
                self.paused.remove(k);
                self.rates.remove(k);
            }
        }
    }

    /// Where job (`pid`, `start_ticks`) is in `paused`, if it is.
    fn paused_at(&self, pid: u32, start_ticks: u64) -> Option<usize> {
        self.paused
            .iter()
            .position(|p| (p.pid, p.start_ticks) == (pid, start_ticks))
    }

    /// The jobs stopped now (for the lease, and to continue at the end).
    pub fn paused(&self) -> &[Paused] {
        &self.paused
    }

    /// Forgets every paused job: the caller continues them all (the end
    /// of the run).
    pub fn release(&mut self) {
        self.paused.clear();
        self.rates.clear();
    }

    /// Pauses so far, and the time jobs spent paused (summed over jobs),
    /// ms.
    pub fn counts(&self) -> (u32, u64) {
        (self.pauses, self.paused_ms)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::govern::jobserver::driver::TICK_MS;
    use crate::govern::jobserver::estimate::{Estimate, Seen};
    use crate::govern::jobserver::room::{RESERVE_MB, room_mb};
    use crate::report::jobserver_block::Source;

    fn job(pid: u32, start_ticks: u64, rss_mb: u64, paused: bool) -> Job {
        Job {
            pid,
            start_ticks,
            rss_mb,
            rate_mb_s: 0,
            paused,
            peak_mb: None,
        }
    }

    /// No job has a peak of its own.
    fn none(_: u32, _: u64) -> Option<u64> {
        None
    }

    /// Issue 35: a job whose remembered peak does not fit beside the
    /// running one is paused at its start, before it grows; a light one
    /// started after it runs; the heavy one continues first once the
    /// first ends, and pausing the light one for it is what makes room.
    #[test]
    fn a_known_heavy_job_is_paused_at_its_start_and_keeps_its_place() {
        let heavy = |pid, start, rss, paused| Job {
            peak_mb: Some(396),
            ..job(pid, start, rss, paused)
        };
        let light = |pid, start, rss, paused| Job {
            peak_mb: Some(65),
            ..job(pid, start, rss, paused)
        };
        // 568 MiB of room beside the first heavy job (it holds 20 MiB,
        // 376 ahead), the second starts with 3 MiB (393 ahead).
        let jobs = [heavy(1, 10, 20, false), heavy(2, 11, 3, false)];
        assert_eq!(decide(&jobs, 2000, 568, false), Act::Pause(1));
        // Paused, a light one beside it fits and runs.
        let jobs = [
            heavy(1, 10, 200, false),
            heavy(2, 11, 3, true),
            light(3, 12, 10, false),
        ];
        assert_eq!(decide(&jobs, 2000, 300, false), Act::Hold);
        // The first ended: 520 MiB of room, the light one 55 ahead, the
        // heavy one's 393 fits with the reserve: it goes on.
        let jobs = [heavy(2, 11, 3, true), light(3, 12, 10, false)];
        assert_eq!(decide(&jobs, 2000, 520, false), Act::Resume(0));
        // Not with only 440: but it would with the later light one paused.
        let jobs = [
            heavy(2, 11, 3, true),
            light(3, 12, 10, false),
            light(4, 13, 10, false),
        ];
        assert_eq!(decide(&jobs, 2000, 500, false), Act::Pause(2));
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
    fn a_stall_continues_every_paused_job_whatever_the_room() {
        let jobs = [job(10, 100, 40, false), job(11, 300, 60, true)];
        assert_eq!(decide(&jobs, 180, -1000, false), Act::Hold);
        assert_eq!(decide(&jobs, 180, -1000, true), Act::ResumeAll);
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

    #[test]
    fn a_job_growing_past_the_peak_counts_its_rate_ahead() {
        // At 40 MiB/s a job above the 100 MiB peak still has 80 MiB ahead.
        let mut j = job(10, 1, 150, false);
        assert_eq!(ahead(&j, 100), 0);
        j.rate_mb_s = 40;
        assert_eq!(ahead(&j, 100), 80);
        assert_eq!(ahead(&j, 300), 150);
    }

    #[test]
    fn a_paused_job_that_started_first_takes_the_place_of_a_later_one() {
        // 11 paused at 60 of 180 (120 ahead); 12 started later and runs.
        let jobs = [job(11, 100, 60, true), job(12, 200, 10, false)];
        let need = 120 + RESERVE_MB as i64;
        // Room for 11 only without 12's growth: 12 is paused first …
        assert_eq!(decide(&jobs, 180, need, false), Act::Pause(1));
        // … and not when even that would not hold 11.
        assert_eq!(decide(&jobs, 180, need - 1, false), Act::Hold);
        // A later paused job never displaces an earlier running one.
        let jobs = [job(11, 100, 60, false), job(12, 200, 10, true)];
        assert_eq!(decide(&jobs, 180, 150, false), Act::Hold);
    }

    fn tree_job(pid: u32, start_ticks: u64, rss_mb: u64, cpu_ticks: u64) -> jobtree::Job {
        jobtree::Job {
            pid,
            start_ticks,
            parent: 1,
            by_make: true,
            rss_kib: rss_mb * 1024,
            cpu_ticks,
            procs: 1,
            largest: (0, 0),
        }
    }

    #[test]
    fn the_pauser_books_pauses_counts_their_time_and_forgets_ended_jobs() {
        let mut p = Pauser::new(TICK_MS);
        let a = [tree_job(10, 1, 50, 5), tree_job(11, 2, 50, 5)];
        assert_eq!(p.tick(&a, none, 100, 1000, 0), Act::Hold);
        assert_eq!(p.tick(&a, none, 100, 60, 250), Act::Pause(1));
        assert_eq!(
            p.paused(),
            [Paused {
                pid: 11,
                start_ticks: 2
            }]
        );
        // Job 10 grows (progress); room is still short: 11 stays.
        let b = [tree_job(10, 1, 60, 9), tree_job(11, 2, 50, 5)];
        assert_eq!(p.tick(&b, none, 100, 40, 500), Act::Hold);
        assert_eq!(p.counts(), (1, 250));
        // A reused pid (another start) is another job: 11 ended.
        let c = [tree_job(10, 1, 60, 9), tree_job(11, 7, 5, 0)];
        p.tick(&c, none, 100, 1000, 750);
        assert!(p.paused().is_empty());
        assert_eq!(p.counts(), (1, 500));
    }

    #[test]
    fn a_step_between_two_close_ticks_is_not_taken_for_a_torrent() {
        let mut p = Pauser::new(TICK_MS);
        let a = [tree_job(10, 1, 10, 5), tree_job(11, 2, 10, 5)];
        p.tick(&a, none, 100, 1000, 0);
        // +10 MiB each 10 ms later: 40 MiB/s over a tick (80 MiB carried),
        // not 1000 MiB/s; 90 + 90 ahead fit in 200.
        let b = [tree_job(10, 1, 20, 6), tree_job(11, 2, 20, 6)];
        assert_eq!(p.tick(&b, none, 100, 200, 10), Act::Hold);
    }

    #[test]
    fn a_stall_of_the_running_jobs_continues_the_paused_one() {
        let mut p = Pauser::new(TICK_MS);
        let a = [tree_job(10, 1, 50, 5), tree_job(11, 2, 50, 5)];
        p.tick(&a, none, 100, 1000, 0);
        assert_eq!(p.tick(&a, none, 100, 60, 250), Act::Pause(1));
        // Job 10 neither runs nor grows: after STALL_MS, 11 goes on.
        let mut t = 250;
        while t < 250 + STALL_MS - 250 {
            t += 250;
            assert_eq!(p.tick(&a, none, 100, 60, t), Act::Hold, "at {t} ms");
        }
        assert_eq!(p.tick(&a, none, 100, 60, t + 250), Act::ResumeAll);
        assert!(p.paused().is_empty());
    }

    #[test]
    fn the_lock_holder_goes_on_when_the_waiters_stall() {
        // Waiters 10 and 11 started first and block on a lock; 12 holds it
        // and is paused (started last). Continuing the first paused one
        // only (a waiter) would leave the holder stopped for good.
        let mut p = Pauser::new(TICK_MS);
        let a = [
            tree_job(10, 1, 3, 5),
            tree_job(11, 2, 3, 5),
            tree_job(12, 3, 50, 5),
        ];
        p.tick(&a, none, 100, 1000, 0);
        assert_eq!(p.tick(&a, none, 100, 100, 250), Act::Pause(2));
        assert_eq!(p.tick(&a, none, 100, 100, 500), Act::Pause(1));
        let mut t = 500;
        let act = loop {
            t += 250;
            match p.tick(&a, none, 100, 100, t) {
                Act::Hold => assert!(t < 500 + STALL_MS + 250, "never continued"),
                act => break act,
            }
        };
        assert_eq!(act, Act::ResumeAll);
        // Nothing is paused again for STALL_MS, whatever the room …
        let b = [
            tree_job(10, 1, 3, 5),
            tree_job(11, 2, 3, 5),
            tree_job(12, 3, 60, 9),
        ];
        for k in 1..STALL_MS / 250 {
            assert_eq!(p.tick(&b, none, 100, 0, t + k * 250), Act::Hold);
        }
        // … then the rule holds again.
        assert_eq!(p.tick(&b, none, 100, 0, t + STALL_MS), Act::Pause(2));
    }

    /// The estimate per job after `jobs` at a start of `peak_mb` stated.
    fn estimated(e: &mut Estimate, jobs: &[jobtree::Job]) -> u64 {
        e.observe(&Seen {
            job_mb: largest_mb(jobs),
            ..Seen::default()
        });
        e.per_job_mb()
    }

    #[test]
    fn a_paused_job_keeps_the_rate_it_was_paused_at() {
        // 11 grows at 40 MiB/s past a 100 MiB peak it was declared at.
        let mut e = Estimate::new(100, Source::PeakMb, 4);
        let mut p = Pauser::new(TICK_MS);
        let a = [tree_job(10, 1, 50, 5), tree_job(11, 2, 100, 5)];
        p.tick(&a, none, estimated(&mut e, &a), 1000, 0);
        let a = [tree_job(10, 1, 60, 6), tree_job(11, 2, 110, 6)];
        // The estimate rises with it: 110 + 10 %.
        let peak = estimated(&mut e, &a);
        assert_eq!(peak, 121);
        assert_eq!(p.tick(&a, none, peak, 100, 250), Act::Pause(1));
        // Its growth left the sum, but it is taken to go on at 40 MiB/s (80
        // ahead): it needs 10's 61 + 80 + the reserve.
        let b = [tree_job(10, 1, 60, 7), tree_job(11, 2, 110, 6)];
        let need = 61 + 80 + RESERVE_MB as i64;
        assert_eq!(p.tick(&b, none, peak, 100, 500), Act::Hold);
        assert_eq!(p.tick(&b, none, peak, need - 1, 750), Act::Hold);
        assert_eq!(p.tick(&b, none, peak, need, 1000), Act::Resume(1));
    }

    /// Memory of a 400 MiB cgroup, tick by tick (250 ms), holding jobs that
    /// were declared at 100 MiB and grow to 180 MiB at 40 MiB/s after a
    /// delay of 0, 0.5 or 1 s; a paused job keeps what it holds. Returns
    /// the most memory in use and whether all ended.
    fn simulate(pausing: bool) -> (u64, bool) {
        let (limit, base, peak, tick) = (400u64, 10u64, 180u64, 250u64);
        let mut rss = [base; 3];
        let mut done = [false; 3];
        let mut p = Pauser::new(TICK_MS);
        let mut e = Estimate::new(100, Source::PeakMb, 3);
        let mut most = 0;
        for step in 0..400u64 {
            let t = step * tick;
            let used: u64 = (0..3).filter(|&i| !done[i]).map(|i| rss[i]).sum::<u64>() + 15;
            most = most.max(used);
            let jobs: std::vec::Vec<jobtree::Job> = (0..3)
                .filter(|&i| !done[i])
                .map(|i| tree_job(100 + i as u32, 1, rss[i], t))
                .collect();
            let room = room_mb(i128::from(limit) - i128::from(used), 0);
            let act = if pausing {
                let peak = estimated(&mut e, &jobs);
                p.tick(&jobs, none, peak, room, t)
            } else {
                Act::Hold
            };
            let _ = act;
            for i in 0..3 {
                let paused = p.paused().iter().any(|q| q.pid == 100 + i as u32);
                if done[i] || paused || t < i as u64 * 500 {
                    continue;
                }
                rss[i] = (rss[i] + 10).min(peak + base);
                if rss[i] == peak + base {
                    done[i] = true;
                }
            }
            if done.iter().all(|&d| d) {
                return (most, true);
            }
        }
        (most, false)
    }

    #[test]
    fn staggered_jobs_that_outgrow_their_estimate_fit_when_paused() {
        let (most, ended) = simulate(false);
        assert!(most > 400 && ended, "{most}");
        let (most, ended) = simulate(true);
        assert!(most <= 400 && ended, "{most}");
    }
}
