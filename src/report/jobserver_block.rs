//! The summary's JOBSERVER block: what `run --jobserver`'s governor did
//! (its cap, the jobs at once, the time memory held it back), as
//! `Governor::report` in `govern::jobserver` states it.
//!
//! A report type of its own, below the governor, so that the summary can
//! carry it without importing the layer that governs.

/// The jobserver block of the summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// Most jobs at once it would allow (cores or `--max-jobs`).
    pub cap: u32,
    /// Jobs running at once: min, average × 100, max over the ticks.
    pub min: u32,
    /// See `min`.
    pub avg_centi: u64,
    /// See `min`.
    pub max: u32,
    /// Time during which memory, not the cap, set the slots, ms.
    pub throttled_ms: u64,
    /// From the first tick to the last, ms.
    pub span_ms: u64,
    /// The peak per job: where it started and how it moved.
    pub peak: PeakReport,
    /// `--pool`: the pool and the other builds seen in it.
    pub pool: Option<PoolShare>,
    /// Jobs paused (SIGSTOP) because their growth would outrun memory,
    /// and the time they spent paused summed over jobs, ms; `None` with
    /// `--no-pause`.
    pub pausing: Option<(u32, u64)>,
    /// The most jobs seen running at once in the build's own processes
    /// (its jobs, `followed::jobtree`, else its compilers); `None` when
    /// they were not looked at.
    pub seen_max: Option<u32>,
    /// The most slots ever in circulation: tokens given out + the one a
    /// client runs without. A client bound by the slots never runs more.
    pub slots_most: u32,
    /// `--pool`: how the peaks the pool remembered per job fared; `None`
    /// without a pool, or with `--no-pause` (jobs not followed).
    pub per_job: Option<PerJob>,
}

/// Bytes of a job's key the report keeps (`job_peaks::KEY_LEN`).
pub const PER_JOB_KEY_LEN: usize = 96;

/// How the peaks a pool remembered per job (`job_weights`) fared in one
/// run: how many jobs had one, and the largest miss.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerJob {
    /// Keys the pool remembered for the run id when the run started.
    pub remembered: u32,
    /// Jobs started with a remembered peak.
    pub known: u32,
    /// Jobs measured whole (they ended), with a key: what the pool
    /// remembers for the next run.
    pub measured: u32,
    /// The largest miss of a remembered peak: measured − remembered, MiB
    /// (signed), the remembered and the measured peak, MiB; `None` before
    /// a job with a remembered peak ended.
    pub largest_error: Option<(i64, u64, u64)>,
    /// The key of that job.
    pub key: heapless::Vec<u8, PER_JOB_KEY_LEN>,
}

impl PerJob {
    /// The block's line: `  per-job peaks: K of N jobs had a remembered
    /// peak; largest error +E MiB (KEY: remembered R MiB, measured M
    /// MiB)`.
    ///
    /// # Errors
    /// Those of `w`.
    pub fn render<W: ufmt::uWrite + ?Sized>(&self, w: &mut W) -> Result<(), W::Error> {
        ufmt::uwrite!(
            w,
            "  per-job peaks: {} of {} job(s) started with a remembered peak",
            self.known,
            self.known.max(self.measured)
        )?;
        if self.remembered == 0 {
            ufmt::uwrite!(w, " (none remembered yet)")?;
        }
        match self.largest_error {
            Some((e, r, m)) => {
                let sign = if e < 0 { "-" } else { "+" };
                let key = core::str::from_utf8(&self.key).unwrap_or("?");
                ufmt::uwrite!(
                    w,
                    "; largest error {}{} MiB ({}: remembered {} MiB, measured {} MiB)",
                    sign,
                    e.unsigned_abs(),
                    key,
                    r,
                    m
                )?;
            }
            None if self.known > 0 => ufmt::uwrite!(w, "; largest error -")?,
            None => {}
        }
        ufmt::uwrite!(w, "; {} measured for the next run\n", self.measured)
    }
}

/// Where the peak per job a governor started from came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `run --from FILE.csv`: the largest compiler a recorded run of the
    /// build measured, MiB.
    FromCsv(u64),
    /// `--pool DIR`: the peak the last run of the same `--run-id` measured,
    /// remembered in the pool directory, MiB.
    Pool(u64),
    /// `--peak-mb N`: the user's figure.
    PeakMb,
    /// A profile's environment override (`DEFAULT_MB_PER_JOB`, …): the
    /// user's figure.
    Env(&'static str),
    /// The default of a profile named with `--profile` (`generic`, `rust`,
    /// `heavy`): the user's choice of figure.
    Profile(&'static str),
    /// The default profile's default, nobody having said anything about
    /// the build (`generic`): headroom's guess.
    Guess(&'static str),
}

impl Source {
    /// Its name as the summary and `--explain` say it: `--from`,
    /// `--pool`, `--peak-mb`, the variable or the profile.
    pub fn name(self) -> &'static str {
        match self {
            Source::FromCsv(_) => "--from",
            Source::Pool(_) => "--pool",
            Source::PeakMb => "--peak-mb",
            Source::Env(v) | Source::Profile(v) | Source::Guess(v) => v,
        }
    }

    /// The peak an earlier run measured (`--from`, the pool's), MiB;
    /// `None` for a figure given or guessed.
    pub fn measured_mb(self) -> Option<u64> {
        match self {
            Source::FromCsv(mb) | Source::Pool(mb) => Some(mb),
            _ => None,
        }
    }
}

/// Why the peak per job is what it is (`govern::jobserver::estimate::per_job_mb`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// The starting figure as given or guessed (a measured start: its
    /// peak plus the margin).
    Start,
    /// A guess lowered so that two jobs fit: nothing measured yet.
    Lowered,
    /// A job of this build running now has reached this many MiB, more
    /// than the estimate held: that plus the margin (a lower bound).
    Reached(u64),
    /// This build's jobs measured: the largest peak seen, MiB, a job of it
    /// having ended; that plus the margin.
    Measured(u64),
}

/// The peak per job over a run: where it started, where it ended, how far
/// it moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeakReport {
    /// The estimate it started with, MiB (a measured start with its
    /// margin).
    pub start_mb: u64,
    /// Where that came from.
    pub source: Source,
    /// The estimate now (at the end of a run), MiB.
    pub now_mb: u64,
    /// Why it is there.
    pub basis: Basis,
    /// The least and the most it was over the run, MiB.
    pub least_mb: u64,
    /// See `least_mb`.
    pub most_mb: u64,
    /// The margin kept over a measured peak, percent.
    pub margin_pct: u64,
}

impl PeakReport {
    /// Its figure never moved from where it started (why may have: a
    /// start measured again at the same figure).
    pub fn fixed(&self) -> bool {
        self.least_mb == self.start_mb && self.most_mb == self.start_mb
    }

    /// Writes why the estimate is `now_mb`, as it follows `peak per job N
    /// MiB ` in the summary and `--explain`: e.g. `(measured 350 MiB + 10
    /// %)`, `(profile generic, a guess)`.
    ///
    /// # Errors
    /// Those of `w`.
    pub fn write_basis<W: ufmt::uWrite + ?Sized>(&self, w: &mut W) -> Result<(), W::Error> {
        let (name, pct) = (self.source.name(), self.margin_pct);
        match self.basis {
            Basis::Start => match self.source {
                Source::FromCsv(mb) | Source::Pool(mb) => ufmt::uwrite!(
                    w,
                    "({}: an earlier run measured {} MiB, + {} %)",
                    name,
                    mb,
                    pct
                ),
                Source::Guess(p) => ufmt::uwrite!(w, "(profile {}, a guess)", p),
                Source::Profile(p) => ufmt::uwrite!(w, "(--profile {}, as given)", p),
                s => ufmt::uwrite!(w, "({}, as given)", s.name()),
            },
            Basis::Lowered => ufmt::uwrite!(
                w,
                "({}'s guess of {} MiB lowered so that two jobs fit, nothing being measured yet)",
                name,
                self.start_mb
            ),
            Basis::Reached(mb) => {
                ufmt::uwrite!(w, "(a running job reached {} MiB, + {} %)", mb, pct)
            }
            Basis::Measured(mb) => ufmt::uwrite!(w, "(measured {} MiB + {} %)", mb, pct),
        }
    }
}

/// The memory pool a governor shared (`run --jobserver --pool DIR`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolShare {
    /// The pool directory as given (cut to 256 bytes).
    pub dir: heapless::String<256>,
    /// The run ids of the other builds whose leases it counted, in the
    /// order first seen (at most 16).
    pub others: heapless::Vec<heapless::String<64>, 16>,
}

/// What the jobs columns of a `run --jobserver` CSV say, row by row: all
/// `summarize` knows of the jobserver (the governor's [`Report`] is not in
/// the CSV).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FromRows {
    /// Rows with the columns.
    pub rows: u64,
    /// `jobs_running`: the least, the sum over the rows, the most.
    pub running_min: u32,
    /// See `running_min`.
    pub running_sum: u64,
    /// See `running_min`.
    pub running_max: u32,
    /// The most `jobs_allowed`.
    pub allowed_max: u32,
    /// Jobs paused: each rise of `jobs_paused` from one row to the next.
    pub pauses: u32,
    /// Time jobs spent paused, ms: `jobs_paused` × the time to the next
    /// row (whole seconds of `epoch`), summed.
    pub paused_ms: u64,
    /// The last row's epoch and `jobs_paused`.
    last: Option<(u64, u32)>,
}

impl FromRows {
    /// Counts one row at `epoch` (seconds) with `jobs` (running, allowed,
    /// paused).
    pub fn observe(&mut self, epoch: u64, jobs: (u32, u32, u32)) {
        let (running, allowed, paused) = jobs;
        self.running_min = if self.rows == 0 {
            running
        } else {
            self.running_min.min(running)
        };
        self.rows = self.rows.saturating_add(1);
        self.running_sum = self.running_sum.saturating_add(u64::from(running));
        self.running_max = self.running_max.max(running);
        self.allowed_max = self.allowed_max.max(allowed);
        if let Some((at, before)) = self.last {
            self.pauses = self.pauses.saturating_add(paused.saturating_sub(before));
            let secs = epoch.saturating_sub(at);
            let held = u64::from(before).saturating_mul(secs).saturating_mul(1000);
            self.paused_ms = self.paused_ms.saturating_add(held);
        } else {
            self.pauses = paused;
        }
        self.last = Some((epoch, paused));
    }

    /// Jobs running on average × 100.
    pub fn avg_centi(&self) -> u64 {
        self.running_sum.saturating_mul(100) / self.rows.max(1)
    }
}

impl Report {
    /// The most jobs the build ran at once when that is more than the
    /// slots ever allowed ([`Report::slots_most`]): it ran slots of its own
    /// (a `-j` inside a script, where headroom could not take it out), and
    /// the slots did not bind; `None` when they did, or nothing was seen.
    pub fn unbound(&self) -> Option<u32> {
        self.seen_max.filter(|&seen| seen > self.slots_most)
    }

    /// Writes the block (after the RUN block), e.g.
    /// `JOBSERVER: up to 8 jobs at once; peak per job 160 MiB (--peak-mb)`.
    ///
    /// # Errors
    /// Those of `w`.
    pub fn render<W: ufmt::uWrite + ?Sized>(&self, w: &mut W) -> Result<(), W::Error> {
        let p = &self.peak;
        match self.unbound() {
            None => ufmt::uwrite!(w, "JOBSERVER: up to {} job(s) at once", self.cap)?,
            Some(seen) => ufmt::uwrite!(
                w,
                "JOBSERVER: its slots did not bind: the build ran up to {} job(s) at once on slots of its own (a -j headroom could not take out)",
                seen
            )?,
        }
        ufmt::uwrite!(w, "; peak per job {} MiB ", p.now_mb)?;
        let unmoved = p.fixed() && p.basis == Basis::Start;
        if unmoved && p.source.measured_mb().is_none() {
            // As it always was: where the figure came from.
            ufmt::uwrite!(w, "({})\n", p.source.name())?;
        } else {
            p.write_basis(w)?;
            ufmt::uwrite!(w, "\n")?;
        }
        if !unmoved {
            let start = PeakReport {
                now_mb: p.start_mb,
                basis: Basis::Start,
                ..*p
            };
            ufmt::uwrite!(w, "  peak per job: {} MiB to start ", p.start_mb)?;
            start.write_basis(w)?;
            ufmt::uwrite!(w, "; least {} MiB, most {} MiB\n", p.least_mb, p.most_mb)?;
        }
        self.render_slots(w)?;
        if let Some((n @ 1.., ms)) = self.pausing {
            ufmt::uwrite!(
                w,
                "  paused, not killed: {} time(s), {}.{} s in all (a job's growth would have outrun memory)\n",
                n,
                ms / 1000,
                ms % 1000 / 100
            )?;
        }
        if let Some(j) = &self.per_job {
            j.render(w)?;
        }
        let Some(p) = &self.pool else {
            return Ok(());
        };
        ufmt::uwrite!(w, "  pool {}: ", p.dir.as_str())?;
        if p.others.is_empty() {
            return ufmt::uwrite!(w, "no other build seen\n");
        }
        ufmt::uwrite!(w, "shared with {} other build(s):", p.others.len())?;
        for (i, o) in p.others.iter().enumerate() {
            ufmt::uwrite!(w, "{}{}", if i == 0 { " " } else { ", " }, o.as_str())?;
        }
        ufmt::uwrite!(w, "\n")
    }
}

impl Report {
    /// The slots' lines: jobs at once and the time memory throttled them;
    /// when the slots did not bind ([`Report::unbound`]), the jobs really
    /// seen instead, and no throttling (memory held nothing back).
    fn render_slots<W: ufmt::uWrite + ?Sized>(&self, w: &mut W) -> Result<(), W::Error> {
        if let Some(seen) = self.unbound() {
            ufmt::uwrite!(
                w,
                "  jobs at once (the build's own processes): max {}; the jobserver's slots were not what ran\n",
                seen
            )?;
            return ufmt::uwrite!(w, "  throttled by memory: - (its slots did not bind)\n");
        }
        ufmt::uwrite!(
            w,
            "  slots in use (jobs at once): min {}  avg {}.{}{}  max {}\n",
            self.min,
            self.avg_centi / 100,
            self.avg_centi % 100 / 10,
            self.avg_centi % 10,
            self.max
        )?;
        ufmt::uwrite!(
            w,
            "  throttled by memory: {}.{} s of {}.{} s\n",
            self.throttled_ms / 1000,
            self.throttled_ms % 1000 / 100,
            self.span_ms / 1000,
            self.span_ms % 1000 / 100
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(pool: Option<PoolShare>) -> heapless::String<512> {
        let r = Report {
            cap: 4,
            min: 1,
            avg_centi: 250,
            max: 4,
            throttled_ms: 1500,
            span_ms: 9000,
            peak: fixed(160, Source::PeakMb),
            pool,
            pausing: Some((0, 0)),
            seen_max: None,
            slots_most: 4,
            per_job: None,
        };
        let mut out = heapless::String::new();
        r.render(&mut out).unwrap();
        out
    }

    #[test]
    fn the_block_names_the_pool_and_the_builds_it_shared_with() {
        let head = "JOBSERVER: up to 4 job(s) at once; peak per job 160 MiB (--peak-mb)\n  slots in use (jobs at once): min 1  avg 2.50  max 4\n  throttled by memory: 1.5 s of 9.0 s\n";
        assert_eq!(report(None).as_str(), head);
        let mut p = PoolShare {
            dir: heapless::String::try_from("/var/tmp/pool").unwrap(),
            others: heapless::Vec::new(),
        };
        let alone = report(Some(p.clone()));
        assert_eq!(
            &alone[head.len()..],
            "  pool /var/tmp/pool: no other build seen\n"
        );
        for o in ["arm64", "riscv64"] {
            p.others
                .push(heapless::String::try_from(o).unwrap())
                .unwrap();
        }
        let shared = report(Some(p));
        assert_eq!(
            &shared[head.len()..],
            "  pool /var/tmp/pool: shared with 2 other build(s): arm64, riscv64\n"
        );
    }

    fn fixed(mb: u64, source: Source) -> PeakReport {
        PeakReport {
            start_mb: mb,
            source,
            now_mb: mb,
            basis: Basis::Start,
            least_mb: mb,
            most_mb: mb,
            margin_pct: 10,
        }
    }

    fn render(peak: PeakReport, pausing: Option<(u32, u64)>) -> heapless::String<1024> {
        let r = Report {
            cap: 2,
            min: 1,
            avg_centi: 150,
            max: 2,
            throttled_ms: 0,
            span_ms: 4000,
            peak,
            pool: None,
            pausing,
            seen_max: Some(2),
            slots_most: 2,
            per_job: None,
        };
        let mut out = heapless::String::new();
        r.render(&mut out).unwrap();
        out
    }

    #[test]
    fn a_risen_peak_and_the_pauses_are_said() {
        let peak = PeakReport {
            now_mb: 126,
            basis: Basis::Reached(114),
            most_mb: 126,
            ..fixed(80, Source::PeakMb)
        };
        assert_eq!(
            render(peak, Some((3, 4250))).as_str(),
            "JOBSERVER: up to 2 job(s) at once; peak per job 126 MiB (a running job reached 114 MiB, + 10 %)\n  peak per job: 80 MiB to start (--peak-mb, as given); least 80 MiB, most 126 MiB\n  slots in use (jobs at once): min 1  avg 1.50  max 2\n  throttled by memory: 0.0 s of 4.0 s\n  paused, not killed: 3 time(s), 4.2 s in all (a job's growth would have outrun memory)\n"
        );
    }

    #[test]
    fn where_the_peak_per_job_started_and_how_it_moved_are_said() {
        // A guess lowered, then measured down.
        let peak = PeakReport {
            now_mb: 385,
            basis: Basis::Measured(350),
            least_mb: 385,
            ..fixed(2000, Source::Guess("generic"))
        };
        let out = render(peak, None);
        let mut lines = out.lines();
        assert_eq!(
            lines.next(),
            Some(
                "JOBSERVER: up to 2 job(s) at once; peak per job 385 MiB (measured 350 MiB + 10 %)"
            )
        );
        assert_eq!(
            lines.next(),
            Some(
                "  peak per job: 2000 MiB to start (profile generic, a guess); least 385 MiB, most 2000 MiB"
            )
        );
        // The lowered guess, as --explain says it.
        let lowered = PeakReport {
            now_mb: 435,
            basis: Basis::Lowered,
            ..peak
        };
        let mut t: heapless::String<256> = heapless::String::new();
        lowered.write_basis(&mut t).unwrap();
        assert_eq!(
            t.as_str(),
            "(generic's guess of 2000 MiB lowered so that two jobs fit, nothing being measured yet)"
        );
        // A measured start that never moved says so on its one line.
        let remembered = PeakReport {
            now_mb: 385,
            ..fixed(385, Source::Pool(350))
        };
        let out = render(remembered, None);
        assert!(
            out.starts_with("JOBSERVER: up to 2 job(s) at once; peak per job 385 MiB (--pool: an earlier run measured 350 MiB, + 10 %)\n  slots in use"),
            "{out}"
        );
        // Measured again at the same figure: its one figure, both whys.
        let again = PeakReport {
            basis: Basis::Measured(350),
            ..remembered
        };
        assert!(
            render(again, None).starts_with("JOBSERVER: up to 2 job(s) at once; peak per job 385 MiB (measured 350 MiB + 10 %)\n  peak per job: 385 MiB to start (--pool: an earlier run measured 350 MiB, + 10 %); least 385 MiB, most 385 MiB\n"),
            "{}",
            render(again, None)
        );
        let from = fixed(385, Source::FromCsv(350));
        assert!(render(from, None).contains("(--from: an earlier run measured 350 MiB, + 10 %)"));
        // Unmoved, as it always was.
        let env = fixed(900, Source::Env("DEFAULT_MB_PER_JOB"));
        assert!(render(env, None).contains("peak per job 900 MiB (DEFAULT_MB_PER_JOB)\n"));
    }

    /// Issue 33: `sh -c 'make -j4'` on one core: make ran four jobs on
    /// slots of its own while one slot was all headroom gave. The block
    /// says what ran, not the slots that did not bind.
    #[test]
    fn a_build_on_slots_of_its_own_is_said_not_the_slots() {
        let mut r = Report {
            cap: 1,
            min: 1,
            avg_centi: 100,
            max: 1,
            throttled_ms: 0,
            span_ms: 30_000,
            peak: fixed(435, Source::Guess("generic")),
            pool: None,
            pausing: Some((2, 5000)),
            seen_max: Some(4),
            slots_most: 1,
            per_job: None,
        };
        assert_eq!(r.unbound(), Some(4));
        let mut out: heapless::String<1024> = heapless::String::new();
        r.render(&mut out).unwrap();
        assert_eq!(
            out.as_str(),
            "JOBSERVER: its slots did not bind: the build ran up to 4 job(s) at once on slots of its own (a -j headroom could not take out); peak per job 435 MiB (generic)\n  jobs at once (the build's own processes): max 4; the jobserver's slots were not what ran\n  throttled by memory: - (its slots did not bind)\n  paused, not killed: 2 time(s), 5.0 s in all (a job's growth would have outrun memory)\n"
        );
        assert!(!out.contains("up to 1 job(s)") && !out.contains("max 1"));
        // As many seen as the slots could give: they bound it, as before.
        for (seen, most) in [(Some(4), 4), (None, 1), (Some(0), 1)] {
            (r.seen_max, r.slots_most) = (seen, most);
            assert_eq!(r.unbound(), None);
            out.clear();
            r.render(&mut out).unwrap();
            assert!(
                out.starts_with("JOBSERVER: up to 1 job(s) at once; ")
                    && out.contains("\n  slots in use (jobs at once): min 1  avg 1.00  max 1\n"),
                "{out}"
            );
        }
    }

    #[test]
    fn the_jobs_columns_give_jobs_at_once_and_the_pauses() {
        let mut f = FromRows::default();
        // (epoch, running, allowed, paused)
        for (t, r, a, p) in [
            (10, 1, 4, 0),
            (10, 3, 4, 0),
            (11, 4, 4, 1),
            (13, 4, 3, 2),
            (14, 2, 3, 0),
            (15, 3, 4, 1),
        ] {
            f.observe(t, (r, a, p));
        }
        assert_eq!(
            (f.rows, f.running_min, f.running_max, f.allowed_max),
            (6, 1, 4, 4)
        );
        assert_eq!(f.avg_centi(), 1700 / 6);
        // Rises 0→1, 1→2, 0→1: three pauses; held 1 × 2 s + 2 × 1 s.
        assert_eq!((f.pauses, f.paused_ms), (3, 4000));
    }
}
