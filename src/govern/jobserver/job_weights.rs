//! Each job its own weight: the build's jobs keyed when they start
//! (`followed::jobkey`), weighed by the peak the pool remembers for their
//! key (`job_peaks`, plus the margin), measured while they run (the most
//! their processes held at once, RSS summed, read every tick) and, when
//! they end, remembered for the next run.
//!
//! - A job the table left out when it was full (`job_peaks::KEYS_CAP`,
//!   the heaviest kept) is expected to reach at most the largest peak it
//!   left out (`others_mb`), plus the margin, and so is weighed as one
//!   with a remembered peak; a job left out may yet be new, and heavier:
//!   once it outgrows that, it is weighed as one with none.
//! - A job with a remembered peak is expected to reach it plus
//!   `estimate::MARGIN_PCT`; one without, or one that outgrows it, the build's
//!   learned peak (`estimate`), as before per-job peaks.
//! - A job not yet started weighs the lightest remembered peak among the
//!   keys that have not run yet in this build ([`JobWeights::next_mb`]): a
//!   slot is offered for the job that fits best, and a heavier job the
//!   tool starts in it instead is paused at its start and its core handed
//!   on (`pause_rule`, `handout`). When every remembered key has run, or
//!   nothing is remembered, the build's learned peak.
//! - With nothing remembered ([`JobWeights::has_history`] false) the
//!   governor weighs every job by the build's peak: the rule before
//!   per-job peaks, unchanged.
//!
//! Fixed tables: [`KEYS_CAP`] keys remembered and as many measured,
//! [`JOBS_CAP`] jobs followed at once. No allocation; the caller reads the
//! command lines (`key_of`).

use heapless::Vec;

use crate::followed::jobkey::Work;
use crate::followed::jobtree::{self, JOBS_CAP};
use crate::govern::jobserver::estimate::with_margin;
use crate::govern::jobserver::job_peaks::{JobPeaks, KEYS_CAP, Key, key};
use crate::report::jobserver_block::PerJob;

/// One job followed: who it is, what it is, what it reached.
#[derive(Clone, Debug)]
struct Live {
    pid: u32,
    start_ticks: u64,
    /// Its key; `None` when its command line named nothing.
    key: Option<Key>,
    /// The peak remembered for its key, MiB.
    remembered_mb: Option<u64>,
    /// The most its processes held at once, KiB.
    peak_kib: u64,
    /// Scans that read no key for it yet; past [`KEY_TRIES`], it has
    /// none.
    tries: u8,
}

/// Scans that may find a job's command line empty before it is taken
/// to name nothing: a process in execve(2) has its new name (`comm`)
/// before its arguments (`cmdline` reads empty then, proc(5)), so a scan
/// may see the job before its command line is there.
pub const KEY_TRIES: u8 = 4;

/// A job that started this tick, as `--explain` tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Started {
    /// Its first process.
    pub pid: u32,
    /// Its key, if its command line named one.
    pub key: Option<Key>,
    /// The peak remembered for it, MiB.
    pub remembered_mb: Option<u64>,
}

/// The per-job weights of one run.
pub struct JobWeights {
    remembered: JobPeaks,
    measured: JobPeaks,
    /// Remembered keys whose job started in this run, one bit each.
    ran: [u64; KEYS_CAP.div_ceil(64)],
    live: Vec<Live, JOBS_CAP>,
    /// How the remembered peaks fared so far (its `remembered` set when
    /// asked, [`JobWeights::fared`]).
    fared: PerJob,
    /// [`JobWeights::next_mb`], kept while no key starts.
    next: Option<Option<u64>>,
}

impl Default for JobWeights {
    fn default() -> Self {
        JobWeights::new()
    }
}

impl JobWeights {
    /// Nothing remembered, nothing followed.
    pub const fn new() -> JobWeights {
        JobWeights {
            remembered: JobPeaks::new(),
            measured: JobPeaks::new(),
            ran: [0; KEYS_CAP.div_ceil(64)],
            live: Vec::new(),
            fared: PerJob {
                remembered: 0,
                known: 0,
                measured: 0,
                largest_error: None,
                key: heapless::Vec::new(),
            },
            next: None,
        }
    }

    /// The table the pool's file is read into before the run starts.
    pub fn remembered_mut(&mut self) -> &mut JobPeaks {
        self.next = None;
        &mut self.remembered
    }

    /// The pool remembers a peak for some job of this run id.
    pub fn has_history(&self) -> bool {
        !self.remembered.is_empty()
    }

    /// This run's measured peaks, for the pool at its end.
    pub fn measured(&self) -> &JobPeaks {
        &self.measured
    }

    /// Follows this tick's `jobs`: a job seen for the first time is keyed
    /// through `key_of(job)` (its command line read; `None` when it named
    /// nothing or could not be read) and pushed to `started`; each job's
    /// peak rises to what `reach_of(job)` says it reached (KiB: its
    /// largest process's VmHWM with the others' RSS, else its RSS); a job
    /// no longer among them has ended and its peak is measured.
    pub fn follow<const N: usize>(
        &mut self,
        jobs: &[jobtree::Job],
        mut key_of: impl FnMut(&jobtree::Job) -> Option<Work>,
        mut reach_of: impl FnMut(&jobtree::Job) -> u64,
        started: &mut Vec<Started, N>,
    ) {
        let mut k = 0;
        while k < self.live.len() {
            let l = &self.live[k];
            if jobs
                .iter()
                .any(|j| (j.pid, j.start_ticks) == (l.pid, l.start_ticks))
            {
                k += 1;
            } else {
                let ended = self.live.swap_remove(k);
                self.ended(&ended);
            }
        }
        for j in jobs {
            let reached = reach_of(j).max(j.rss_kib);
            let l = match self
                .live
                .iter()
                .position(|l| (l.pid, l.start_ticks) == (j.pid, j.start_ticks))
            {
                Some(i) => &mut self.live[i],
                None => {
                    let l = Live {
                        pid: j.pid,
                        start_ticks: j.start_ticks,
                        key: None,
                        remembered_mb: None,
                        peak_kib: 0,
                        tries: 0,
                    };
                    // Past the table: weighed by the build's peak, not measured.
                    if self.live.push(l).is_err() {
                        continue;
                    }
                    let last = self.live.len() - 1;
                    &mut self.live[last]
                }
            };
            l.peak_kib = l.peak_kib.max(reached);
            if l.key.is_some() || l.tries >= KEY_TRIES {
                continue;
            }
            l.tries += 1;
            let key = key_of(j).map(|w| key(&w));
            if key.is_none() && l.tries < KEY_TRIES {
                continue;
            }
            let found = key.as_ref().and_then(|k| self.remembered.get(k));
            // Not in a table that was full: at most the largest it left out.
            let others = key
                .as_ref()
                .map(|_| self.remembered.others_mb())
                .filter(|&mb| mb > 0);
            l.key = key;
            l.remembered_mb = found.map(|(_, mb)| mb).or(others);
            let _ = started.push(Started {
                pid: l.pid,
                key: l.key.clone(),
                remembered_mb: l.remembered_mb,
            });
            if let Some((i, _)) = found {
                self.ran[i / 64] |= 1 << (i % 64);
                self.fared.known = self.fared.known.saturating_add(1);
                self.next = None;
            }
        }
    }

    /// Every job still followed is taken to have ended (the run is
    /// over: CMD has ended, and with it its jobs).
    pub fn end_all(&mut self) {
        while let Some(l) = self.live.pop() {
            self.ended(&l);
        }
    }

    /// A job ended: its peak remembered under its key, its miss counted.
    fn ended(&mut self, l: &Live) {
        let Some(k) = &l.key else { return };
        let mb = l.peak_kib.div_ceil(1024);
        if mb == 0 {
            return;
        }
        self.measured.set(k, mb);
        self.fared.measured = self.fared.measured.saturating_add(1);
        if let Some(r) = l.remembered_mb {
            let miss = i64::try_from(mb).unwrap_or(i64::MAX) - i64::try_from(r).unwrap_or(i64::MAX);
            let larger = self
                .fared
                .largest_error
                .is_none_or(|(e, ..)| miss.unsigned_abs() > e.unsigned_abs());
            if larger {
                self.fared.largest_error = Some((miss, r, mb));
                self.fared.key.clear();
                let _ = self.fared.key.extend_from_slice(k);
            }
        }
    }

    /// The peak job (`pid`, `start_ticks`) is expected to reach, MiB: its
    /// remembered peak plus the margin; `None` when nothing is remembered
    /// for it, or when it has outgrown that (then the build's learned
    /// peak and its rate weigh it, and pausing catches it, as for any job
    /// without a peak of its own).
    pub fn expected_mb(&self, pid: u32, start_ticks: u64) -> Option<u64> {
        let l = self
            .live
            .iter()
            .find(|l| (l.pid, l.start_ticks) == (pid, start_ticks))?;
        let own = with_margin(l.remembered_mb?);
        (l.peak_kib / 1024 <= own).then_some(own)
    }

    /// The key of job (`pid`, `start_ticks`), when it is followed and its
    /// command line named one.
    pub fn key(&self, pid: u32, start_ticks: u64) -> Option<&[u8]> {
        self.live
            .iter()
            .find(|l| (l.pid, l.start_ticks) == (pid, start_ticks))
            .and_then(|l| l.key.as_deref())
    }

    /// What a job not started yet is expected to reach, MiB: the lightest
    /// remembered peak among keys that have not run in this build (and
    /// the largest left out of a full table, whose jobs run too), plus
    /// the margin; `None` when every one has run or none is remembered.
    pub fn next_mb(&mut self) -> Option<u64> {
        if let Some(n) = self.next {
            return n;
        }
        let others = self.remembered.others_mb();
        let n = (0..self.remembered.len())
            .filter(|&i| self.ran[i / 64] & (1 << (i % 64)) == 0)
            .map(|i| u64::from(self.remembered.entry(i).peak_mb))
            .chain((others > 0).then_some(others))
            .min()
            .map(with_margin);
        self.next = Some(n);
        n
    }

    /// How the remembered peaks fared so far, for the JOBSERVER block.
    pub fn fared(&self) -> PerJob {
        PerJob {
            remembered: u32::try_from(self.remembered.len()).unwrap_or(u32::MAX),
            ..self.fared.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn job(pid: u32, rss_mib: u64) -> jobtree::Job {
        jobtree::Job {
            pid,
            start_ticks: u64::from(pid),
            parent: 1,
            by_make: true,
            rss_kib: rss_mib * 1024,
            cpu_ticks: 0,
            procs: 1,
            largest: (pid, rss_mib * 1024),
        }
    }

    /// What a job reached: its RSS (no VmHWM read).
    fn rss(j: &jobtree::Job) -> u64 {
        j.rss_kib
    }

    fn keyed(j: &jobtree::Job) -> Option<Work> {
        let mut w = Work::new();
        let name: &[u8] = match j.pid {
            1 | 11 => b"h1.c",
            2 => b"h2.c",
            3..=9 => b"light.c",
            _ => return None,
        };
        w.extend_from_slice(name).ok()?;
        Some(w)
    }

    #[test]
    fn a_job_is_weighed_by_its_remembered_peak_and_remembered_when_it_ends() {
        let mut w = JobWeights::new();
        w.remembered_mut().set(b"h1.c", 360);
        w.remembered_mut().set(b"h2.c", 350);
        w.remembered_mut().set(b"light.c", 59);
        assert!(w.has_history());
        // Nothing started: the lightest remembered.
        assert_eq!(w.next_mb(), Some(65));
        let mut started: Vec<Started, 8> = Vec::new();
        w.follow(&[job(1, 3), job(3, 2)], keyed, rss, &mut started);
        assert_eq!(started.len(), 2);
        assert_eq!(started[0].remembered_mb, Some(360));
        assert_eq!(w.expected_mb(1, 1), Some(396));
        assert_eq!(w.expected_mb(3, 3), Some(65));
        // light.c ran: h2.c is the one left.
        assert_eq!(w.next_mb(), Some(385));
        // h1 grows within its margin: still its own; past it: none.
        started.clear();
        w.follow(&[job(1, 380), job(3, 50)], keyed, rss, &mut started);
        assert!(started.is_empty());
        assert_eq!(w.expected_mb(1, 1), Some(396));
        w.follow(&[job(1, 397), job(3, 50)], keyed, rss, &mut started);
        assert_eq!(w.expected_mb(1, 1), None);
        // Both end: measured, the miss counted (h1: +37).
        w.follow(&[], keyed, rss, &mut started);
        assert_eq!(w.measured().get(b"h1.c"), Some((0, 397)));
        assert_eq!(w.measured().get(b"light.c").map(|(_, mb)| mb), Some(50));
        let f = w.fared();
        assert_eq!((f.remembered, f.known, f.measured), (3, 2, 2));
        assert_eq!(f.largest_error, Some((37, 360, 397)));
        assert_eq!(&f.key[..], b"h1.c");
    }

    #[test]
    fn without_history_every_job_is_the_build_s() {
        let mut w = JobWeights::new();
        assert!(!w.has_history());
        assert_eq!(w.next_mb(), None);
        let mut started: Vec<Started, 8> = Vec::new();
        w.follow(&[job(1, 10), job(20, 5)], keyed, rss, &mut started);
        assert_eq!(w.expected_mb(1, 1), None);
        assert_eq!(w.expected_mb(20, 20), None);
        assert_eq!(started.len(), 1, "job 20 names nothing yet");
        // Still measured for the next run, when keyed.
        w.follow(&[job(20, 5)], keyed, rss, &mut started);
        assert_eq!(w.measured().get(b"h1.c").map(|(_, mb)| mb), Some(10));
        assert_eq!(w.fared().largest_error, None);
    }

    #[test]
    fn a_job_left_out_of_a_full_table_weighs_the_largest_left_out() {
        let mut w = JobWeights::new();
        let t = w.remembered_mut();
        for i in 0..KEYS_CAP {
            t.set(std::format!("tu{i:04}.c").as_bytes(), 100 + i as u64);
        }
        // Full: a lighter one is left out, and said.
        t.set(b"light.c", 40);
        assert_eq!(t.others_mb(), 40);
        assert_eq!(w.next_mb(), Some(44));
        let mut started: Vec<Started, 8> = Vec::new();
        w.follow(&[job(3, 5)], keyed, rss, &mut started);
        assert_eq!(w.expected_mb(3, 3), Some(44));
    }

    #[test]
    fn a_command_line_read_empty_in_execve_is_read_again() {
        let mut w = JobWeights::new();
        w.remembered_mut().set(b"h1.c", 360);
        let mut started: Vec<Started, 8> = Vec::new();
        // Seen mid-execve: no command line yet; nothing said.
        w.follow(&[job(1, 2)], |_| None, rss, &mut started);
        assert!(started.is_empty());
        assert_eq!(w.expected_mb(1, 1), None);
        // The next scan reads it.
        w.follow(&[job(1, 3)], keyed, rss, &mut started);
        assert_eq!(started.len(), 1);
        assert_eq!(w.expected_mb(1, 1), Some(396));
        // One that never names anything is said after KEY_TRIES scans.
        started.clear();
        for n in 1..=KEY_TRIES {
            w.follow(&[job(1, 3), job(50, 1)], keyed, rss, &mut started);
            assert_eq!(started.len(), usize::from(n == KEY_TRIES));
        }
        assert_eq!(started[0].key, None);
    }

    #[test]
    fn a_pid_reused_is_another_job() {
        let mut w = JobWeights::new();
        w.remembered_mut().set(b"h1.c", 360);
        let mut started: Vec<Started, 8> = Vec::new();
        w.follow(&[job(1, 100)], keyed, rss, &mut started);
        let mut again = job(1, 5);
        again.start_ticks = 99;
        w.follow(&[again], keyed, rss, &mut started);
        assert_eq!(started.len(), 2);
        assert_eq!(w.measured().get(b"h1.c").map(|(_, mb)| mb), Some(100));
    }
}
