//! The estimate per job: how much memory one job of the build may grow to.
//! Token handout ([`crate::govern::jobserver::handout::Handout`]), admission in a
//! shared pool ([`crate::govern::jobserver::admit`]) and pausing
//! ([`crate::govern::jobserver::pause_rule`]) all weigh this one figure, and
//! [`per_job_mb`] is its one rule.
//!
//! What it starts from, surest first: a peak an earlier run of the build
//! measured (`run --from FILE.csv`, or the one the pool directory
//! remembers for the run id), plus the margin; a figure the user gave
//! (`--peak-mb`, the profile's environment variable, a profile named with
//! `--profile`); else headroom's own guess, the default profile's
//! (`generic`, 2000 MiB).
//!
//! How it moves:
//!
//! - **measured**: once a job of this build has been measured whole (a
//!   compiler that reached the largest peak seen has ended: a live
//!   process's VmHWM never falls, so the largest VmHWM seen dropping out
//!   of the live ones, on two ticks in a row, means its process is gone),
//!   the estimate is the largest peak seen in this build plus
//!   [`MARGIN_PCT`] — down from the start as well as up. A job that later
//!   grows larger raises it at once (below), and pausing guards against
//!   it meanwhile;
//! - **before that, up**: what a running job has reached (its compiler's
//!   VmHWM, or its processes' RSS) is a lower bound of its peak: when that
//!   plus the margin is above the estimate, the estimate rises to it;
//! - **before that, headroom's guess is lowered**: the default profile's
//!   figure is a guess about builds in general, nobody having said
//!   anything about this one. When it is more than two jobs can share of
//!   the memory the build could use (at the first tick that reads memory),
//!   it cannot tell one job from two: it is lowered to the largest peak at
//!   which two jobs, with the margin, fit ([`lowered_guess_mb`]). Two, not
//!   one: one job at a time is what a measured peak above half the memory
//!   calls for, and a guess is not a measurement; holding the build to one
//!   job until its first job ends loses about half the wall time of a
//!   build of equal jobs on two cores (SQLite's amalgamation four times in
//!   a 1 GiB cgroup: 121 s against 62 s for `make -j2`). Two, not the
//!   cores: each job started before one is measured may have to be
//!   paused, keeping what it holds; with two, at most one is. A job that
//!   outgrows half the memory raises the estimate as it grows, and the job
//!   started later is paused (SIGSTOP), not OOM-killed.
//!
//! What the guess cannot save: two jobs started together that each need
//! more than about half the memory grow in step, so the later one is
//! paused holding about half, and the earlier may then not fit beside it
//! (no swap); one job at a time would have. Hence only headroom's own
//! guess is lowered: a figure the user gave (`--peak-mb`, `--profile
//! heavy`, the environment variable) is their word about the build, kept
//! until its jobs are measured, and a measured start needs no lowering.
//!
//! The margin, [`MARGIN_PCT`] = 10 %: VmHWM is read every tick (0.25 s),
//! so a compiler can grow between the last read and its exit; the jobs of
//! one build differ (one translation unit is larger than the rest); and 10
//! % is the headroom `jobs --from` keeps over a measured peak, so that
//! the governor and `jobs` size the same build alike.
//!
//! Pure: the caller reads memory and the build's compilers and jobs.

use crate::govern::jobserver::room::room_mb;
use crate::report::jobserver_block::{Basis, PeakReport, Source};

/// The margin kept over a measured peak, percent.
pub const MARGIN_PCT: u64 = 10;

/// Jobs headroom's guess may not keep from running side by side before
/// anything is measured (see the module documentation).
pub const GUESS_JOBS: u64 = 2;

/// `mb` plus [`MARGIN_PCT`], rounded up.
pub fn with_margin(mb: u64) -> u64 {
    mb.saturating_add((mb.saturating_mul(MARGIN_PCT)).div_ceil(100))
}

/// What the rule knows at one tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// The starting figure, MiB: a measured peak (without the margin), the
    /// user's figure or headroom's guess.
    pub start_mb: u64,
    /// Where it came from.
    pub source: Source,
    /// The ceiling of headroom's guess ([`lowered_guess_mb`]); `None`
    /// before memory was read, or when the cap allows one job only.
    pub guess_ceiling_mb: Option<u64>,
    /// The most a job of this build has reached so far (compiler VmHWM,
    /// or a job's RSS), MiB; 0 before any.
    pub seen_mb: u64,
    /// A job that reached `seen_mb` has ended: it is a whole job's peak.
    pub measured: bool,
}

/// The estimate per job, MiB (at least 1), and why: the rule of the
/// module documentation.
pub fn per_job_mb(k: &Known) -> (u64, Basis) {
    let seen = (k.seen_mb > 0).then(|| with_margin(k.seen_mb));
    if let (true, Some(mb)) = (k.measured, seen) {
        return (mb, Basis::Measured(k.seen_mb));
    }
    let (base, basis) = match (k.source, k.guess_ceiling_mb) {
        (Source::FromCsv(mb) | Source::Pool(mb), _) => (with_margin(mb), Basis::Start),
        (Source::Guess(_), Some(c)) if c < k.start_mb => (c, Basis::Lowered),
        _ => (k.start_mb, Basis::Start),
    };
    match seen {
        Some(mb) if mb > base => (mb, Basis::Reached(k.seen_mb)),
        _ => (base.max(1), basis),
    }
}

/// The ceiling of headroom's guess before anything is measured: the
/// largest peak at which two jobs (at most `cap`), with the margin, fit in
/// the room of `budget_mb` (the memory the build could use) with nothing
/// growing yet (`room::room_mb`: less the reserve);
/// `None` when `cap` allows one job only (nothing to lower it for).
pub fn lowered_guess_mb(budget_mb: u64, cap: u32) -> Option<u64> {
    let jobs = GUESS_JOBS.min(u64::from(cap));
    if jobs < 2 {
        return None;
    }
    let room = u64::try_from(room_mb(i128::from(budget_mb), 0)).unwrap_or(0);
    let share = room / jobs;
    // The largest p with p + margin ≤ share.
    let mut p = share.saturating_mul(100) / (100 + MARGIN_PCT);
    while p > 1 && with_margin(p) > share {
        p -= 1;
    }
    Some(p.max(1))
}

/// What the peak per job may start from, as the run was given it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Starts {
    /// `--from FILE.csv`'s measured peak, MiB.
    pub from_csv: Option<u64>,
    /// The peak the pool remembers for the run id (`--pool`), MiB.
    pub remembered: Option<u64>,
    /// `--peak-mb`, MiB.
    pub peak_mb: Option<u64>,
    /// The profile's environment variable, and its value, MiB, when set
    /// to a number.
    pub env: (&'static str, Option<u64>),
    /// The profile's own figure, MiB, its name, and whether `--profile`
    /// named it (else it is the default profile: headroom's guess).
    pub profile: (u64, &'static str, bool),
}

/// The peak per job to start from, and where it came from, surest first:
/// `--from`'s measured peak, else the one the pool remembers, else
/// `--peak-mb`, else the profile's environment override, else the
/// profile: named with `--profile`, the user's choice; else the default
/// profile's, headroom's guess.
pub fn starting_peak(s: &Starts) -> (u64, Source) {
    let (var, from_env) = s.env;
    let (profile_mb, name, given) = s.profile;
    match (s.from_csv.or(s.remembered), s.peak_mb, from_env) {
        (Some(p), ..) if s.from_csv.is_some() => (p, Source::FromCsv(p)),
        (Some(p), ..) => (p, Source::Pool(p)),
        (None, Some(p), _) => (p, Source::PeakMb),
        (None, None, Some(p)) if p > 0 => (p, Source::Env(var)),
        _ if given => (profile_mb, Source::Profile(name)),
        _ => (profile_mb, Source::Guess(name)),
    }
}

/// One tick's measurements of the build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// Usable memory now, MiB (`None`: unknown this tick).
    pub usable_mb: Option<u64>,
    /// What the build's compilers hold now (RSS summed), MiB.
    pub held_mb: u64,
    /// The largest VmHWM among the build's live compilers now, MiB;
    /// `None` when none runs.
    pub compiler_peak_mb: Option<u64>,
    /// The largest RSS of one job of the build now (its processes summed),
    /// MiB; `None` when its jobs are not followed.
    pub job_mb: Option<u64>,
}

/// The estimate per job across a run: what [`per_job_mb`] is given, kept
/// from tick to tick, and how far it moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    known: Known,
    /// The cap on jobs (a guess is lowered for two only when it is ≥ 2).
    cap: u32,
    /// The largest live compiler VmHWM seen, MiB.
    compiler_mb: u64,
    /// The last tick saw no live compiler as large as `compiler_mb`.
    gone_once: bool,
    now: (u64, Basis),
    start_mb: u64,
    least_mb: u64,
    most_mb: u64,
}

impl Estimate {
    /// An estimate starting from `start_mb` given by `source`, for a build
    /// of at most `cap` jobs at once.
    pub fn new(start_mb: u64, source: Source, cap: u32) -> Estimate {
        let known = Known {
            start_mb: start_mb.max(1),
            source,
            guess_ceiling_mb: None,
            seen_mb: 0,
            measured: false,
        };
        let now = per_job_mb(&known);
        Estimate {
            known,
            cap,
            compiler_mb: 0,
            gone_once: false,
            now,
            start_mb: now.0,
            least_mb: now.0,
            most_mb: now.0,
        }
    }

    /// Takes in one tick's measurements; returns the estimate before them
    /// when it moved.
    pub fn observe(&mut self, s: &Seen) -> Option<(u64, Basis)> {
        let k = &mut self.known;
        if let (None, Some(usable)) = (k.guess_ceiling_mb, s.usable_mb) {
            k.guess_ceiling_mb = lowered_guess_mb(usable.saturating_add(s.held_mb), self.cap);
        }
        self.rise(s);
        let before = self.now;
        self.now = per_job_mb(&self.known);
        self.least_mb = self.least_mb.min(self.now.0);
        self.most_mb = self.most_mb.max(self.now.0);
        (self.now != before).then_some(before)
    }

    /// The peak the build's jobs reached, rising to the largest seen: the
    /// largest VmHWM of a live compiler (a live process's VmHWM never
    /// falls), or of a job's RSS; and whether a job at that peak has ended
    /// (then it is a whole job's peak). The one place the peak rises.
    fn rise(&mut self, s: &Seen) {
        let k = &mut self.known;
        match s.compiler_peak_mb {
            Some(live) if live >= self.compiler_mb => {
                self.compiler_mb = live;
                self.gone_once = false;
            }
            // The compiler that reached the largest VmHWM is gone: its
            // peak is whole. Seen on two ticks in a row, so that one tick
            // whose read of the compilers failed (none seen) is not taken
            // for it.
            _ if self.compiler_mb > 0 => {
                k.measured |= self.gone_once;
                self.gone_once = true;
            }
            _ => {}
        }
        k.seen_mb = k.seen_mb.max(self.compiler_mb).max(s.job_mb.unwrap_or(0));
    }

    /// The estimate per job now, MiB.
    pub fn per_job_mb(&self) -> u64 {
        self.now.0
    }

    /// The largest a job of this build reached (a compiler's VmHWM, or a
    /// job's RSS), MiB, once a compiler of it was seen; `None` before. At
    /// the end of a build, every job has ended: what the pool remembers
    /// for its next run.
    pub fn build_peak_mb(&self) -> Option<u64> {
        (self.compiler_mb > 0).then_some(self.known.seen_mb)
    }

    /// Where it started, where it is, how far it moved.
    pub fn report(&self) -> PeakReport {
        PeakReport {
            start_mb: self.start_mb,
            source: self.known.source,
            now_mb: self.now.0,
            basis: self.now.1,
            least_mb: self.least_mb,
            most_mb: self.most_mb,
            margin_pct: MARGIN_PCT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::govern::jobserver::room::RESERVE_MB;

    const GENERIC: Source = Source::Guess("generic");

    fn seen(usable: u64, compiler: Option<u64>) -> Seen {
        Seen {
            usable_mb: Some(usable),
            held_mb: 0,
            compiler_peak_mb: compiler,
            job_mb: None,
        }
    }

    #[test]
    fn the_margin_is_ten_percent_rounded_up() {
        assert_eq!(with_margin(350), 385);
        assert_eq!(with_margin(351), 387);
        assert_eq!(with_margin(0), 0);
        assert_eq!(with_margin(u64::MAX), u64::MAX);
    }

    #[test]
    fn a_guess_too_large_for_two_jobs_is_lowered_until_measured() {
        // 1 GiB cgroup, 990 MiB usable at the first tick: two jobs of p +
        // 10 % in 990 − 32 = 958 MiB → p = 435 (2 × 479 = 958).
        assert_eq!(lowered_guess_mb(990, 2), Some(435));
        assert_eq!(with_margin(435) * 2 + RESERVE_MB, 990);
        let mut e = Estimate::new(2000, GENERIC, 2);
        assert_eq!(e.per_job_mb(), 2000);
        assert_eq!(e.observe(&seen(990, None)), Some((2000, Basis::Start)));
        assert_eq!(e.report().basis, Basis::Lowered);
        assert_eq!(e.per_job_mb(), 435);
        // A later tick with less memory does not lower it again.
        assert_eq!(e.observe(&seen(200, None)), None);
        // One job only: nothing to lower it for.
        assert_eq!(lowered_guess_mb(990, 1), None);
        let mut one = Estimate::new(2000, GENERIC, 1);
        one.observe(&seen(990, None));
        assert_eq!(one.per_job_mb(), 2000);
        // A guess that two jobs can share stays: 64 GiB, 2000 MiB.
        let mut big = Estimate::new(2000, GENERIC, 16);
        big.observe(&seen(64_000, None));
        assert_eq!((big.per_job_mb(), big.report().basis), (2000, Basis::Start));
    }

    #[test]
    fn the_guess_is_replaced_by_the_measurement_down() {
        let mut e = Estimate::new(2000, GENERIC, 2);
        e.observe(&seen(990, Some(40)));
        // cc1 grows: a lower bound, still below the lowered guess.
        e.observe(&seen(700, Some(350)));
        assert_eq!(e.per_job_mb(), 435);
        assert_eq!(e.report().basis, Basis::Lowered);
        // It ends: the live compilers now peak lower (the next one), on
        // two ticks in a row.
        assert_eq!(e.observe(&seen(900, Some(30))), None);
        assert_eq!(e.observe(&seen(900, Some(31))), Some((435, Basis::Lowered)));
        assert_eq!(e.per_job_mb(), 385);
        assert_eq!(e.report().basis, Basis::Measured(350));
        assert_eq!(e.build_peak_mb(), Some(350));
        let r = e.report();
        assert_eq!((r.start_mb, r.least_mb, r.most_mb), (2000, 385, 2000));
    }

    #[test]
    fn one_tick_without_the_compiler_is_not_its_end() {
        // A tick whose read of the compilers failed shows none: the
        // compiler is back at the next, still running.
        let mut e = Estimate::new(2000, GENERIC, 2);
        e.observe(&seen(990, Some(300)));
        e.observe(&seen(990, None));
        e.observe(&seen(990, Some(310)));
        e.observe(&seen(990, None));
        assert_eq!((e.per_job_mb(), e.report().basis), (435, Basis::Lowered));
        e.observe(&seen(990, Some(5)));
        assert_eq!(e.report().basis, Basis::Measured(310));
    }

    #[test]
    fn the_guess_is_replaced_by_the_measurement_up() {
        // A stated 100 MiB, jobs reaching 180: it rises as they grow
        // (a lower bound), and stays once one ended.
        let mut e = Estimate::new(100, Source::PeakMb, 8);
        e.observe(&seen(10_000, Some(60)));
        assert_eq!(e.per_job_mb(), 100);
        e.observe(&seen(10_000, Some(120)));
        assert_eq!(
            (e.per_job_mb(), e.report().basis),
            (132, Basis::Reached(120))
        );
        e.observe(&seen(10_000, Some(180)));
        e.observe(&seen(10_000, None));
        e.observe(&seen(10_000, None));
        assert_eq!(
            (e.per_job_mb(), e.report().basis),
            (198, Basis::Measured(180))
        );
    }

    #[test]
    fn a_figure_given_is_not_lowered_and_a_measured_start_keeps_the_margin() {
        for given in [
            Source::PeakMb,
            Source::Profile("heavy"),
            Source::Env("CPP_HEAVY_MB_PER_JOB"),
        ] {
            let mut e = Estimate::new(4096, given, 4);
            e.observe(&seen(900, None));
            assert_eq!((e.per_job_mb(), e.report().basis), (4096, Basis::Start));
        }
        let mut e = Estimate::new(350, Source::Pool(350), 2);
        assert_eq!(e.per_job_mb(), 385);
        e.observe(&seen(900, None));
        assert_eq!((e.per_job_mb(), e.report().basis), (385, Basis::Start));
        // This run's jobs, once measured, replace it: down to 220.
        e.observe(&seen(900, Some(200)));
        e.observe(&seen(900, None));
        e.observe(&seen(900, None));
        assert_eq!(e.per_job_mb(), 220);
    }

    #[test]
    fn a_late_larger_job_raises_the_measured_estimate_at_once() {
        let mut e = Estimate::new(2000, GENERIC, 2);
        e.observe(&seen(990, Some(100)));
        e.observe(&seen(990, None));
        e.observe(&seen(990, None));
        assert_eq!(e.per_job_mb(), 110);
        // A larger job grows: each tick a lower bound above the estimate.
        e.observe(&seen(990, Some(150)));
        assert_eq!(e.per_job_mb(), 165);
        assert_eq!(e.report().basis, Basis::Measured(150));
        e.observe(&seen(990, Some(600)));
        assert_eq!(e.per_job_mb(), 660);
        // It ends: the estimate stays at the largest seen.
        e.observe(&seen(990, Some(20)));
        assert_eq!(e.per_job_mb(), 660);
        assert_eq!(e.report().most_mb, 2000);
    }

    #[test]
    fn a_job_s_rss_raises_the_estimate_but_measures_nothing() {
        // Jobs that run no compiler (a python script): their RSS is a lower
        // bound; nothing is measured whole, a guess is kept below it.
        let mut e = Estimate::new(100, Source::PeakMb, 4);
        let mut s = seen(10_000, None);
        s.job_mb = Some(50);
        e.observe(&s);
        assert_eq!(e.per_job_mb(), 100);
        s.job_mb = Some(180);
        e.observe(&s);
        assert_eq!(
            (e.per_job_mb(), e.report().basis),
            (198, Basis::Reached(180))
        );
        s.job_mb = Some(10);
        e.observe(&s);
        assert_eq!(e.per_job_mb(), 198);
        assert_eq!(e.build_peak_mb(), None);
    }

    #[test]
    fn unknown_memory_and_absurd_figures_do_not_panic() {
        let mut e = Estimate::new(0, GENERIC, u32::MAX);
        assert_eq!(e.per_job_mb(), 1);
        e.observe(&Seen::default());
        e.observe(&seen(u64::MAX, Some(u64::MAX)));
        e.observe(&seen(0, None));
        assert_eq!(e.per_job_mb(), u64::MAX);
        assert_eq!(lowered_guess_mb(0, 8), Some(1));
        assert_eq!(lowered_guess_mb(u64::MAX, 8).map(|p| p > 0), Some(true));
    }
}
