//! The governor's driver: a glance goes in, decisions come out and are
//! acted on — tokens handed out or taken back through the FIFO, jobs
//! stopped or continued, the pool lease rewritten — and what `--explain`
//! and the warnings say goes to the warning sink ([`Tell`]).
//!
//! Each tick, in this order:
//!
//! 1. the build's jobs found (`pausing`), so that the peak per job
//!    (`estimate`) takes in what they reach before anything weighs it,
//!    and counted (else its compilers): what really runs, slots or not;
//! 2. pausing: room (`room::room_mb`) of usable memory less the other
//!    builds' growth, the job `pause_rule` names stopped or continued;
//! 3. tokens: how many jobs memory allows (`handout`), bounded by what the
//!    pool admits (`pool_member`, under its lock, the lease rewritten
//!    after), the difference written into the FIFO or read back;
//! 4. the row's jobs columns kept ([`JobsColumns`]; `jobs_running` never
//!    fewer than the jobs seen in the build's processes), and
//!    `--explain`'s lines when the slots or the peak per job moved.
//!
//! While nothing but CMD's own job runs, the glances between rows wait
//! ([`Driver::idle`], [`IDLE_TICK_MS`]).
//!
//! The recording loop (`govern::recording`) calls [`Driver::tick`] at each
//! row and each glance between rows, [`Driver::fill_row`] on each row, and
//! [`Driver::reclaim`] when the FIFO ([`Driver::watch_fd`]) is readable
//! between them. The binary starts the parts (the FIFO made, CMD's
//! environment, the pool joined, CMD followed) and ends them
//! ([`Driver::finish`]).

use rustix::fd::BorrowedFd;

use crate::followed::buildcg::BuildCgroup;
use crate::followed::rusage::End;
use crate::govern::jobserver::admit::{Admission, Own};
use crate::govern::jobserver::ceiling::{self, Ceiling};
use crate::govern::jobserver::estimate::Seen;
use crate::govern::jobserver::handout::{Decision, Handout, Inputs};
use crate::govern::jobserver::notes::{Note, SlotsWhy, Tell};
use crate::govern::jobserver::pausing::Pausing;
use crate::govern::jobserver::peakfile;
use crate::govern::jobserver::pool_member::PoolMember;
use crate::govern::jobserver::room::{room_mb, usable_mb};
use crate::govern::jobserver::token_fifo::TokenFifo;
use crate::kernel::root::Root;
use crate::report::jobserver_block::{Basis, Report};
use crate::tick::row::Row;
use crate::tick::sampler::glance::Glance;

/// The governor's pace: the longest time between two of its ticks,
/// milliseconds. A job that starts right after a tick has grown at most
/// this long before the next one sees it; the recording loop glances for
/// a tick this often between rows (`govern::recording`).
pub const TICK_MS: u64 = 250;

/// The longest a governor with no job to watch goes between two of its
/// ticks, milliseconds ([`Driver::idle`]): while only CMD's own job runs
/// and every token it gave out is still in the FIFO, the glances between
/// rows are one ioctl(FIONREAD) each until this long after its last tick
/// (a row's tick counts). A client that takes a token ends it at the next
/// glance; a host whose memory shrinks meanwhile has its tokens taken back
/// at most this late.
pub const IDLE_TICK_MS: u64 = 1000;

/// The governor's own state between ticks: the token handout and its FIFO,
/// the jobs columns of the next row, what `--explain` said last.
pub struct Governor {
    /// How many slots memory allows, tick by tick.
    pub handout: Handout,
    /// The FIFO (or pipe) whose bytes are the job slots.
    pub fifo: TokenFifo,
    /// Its pace, ms: [`TICK_MS`] (a test may set its own). The recording
    /// loop ticks it this often between rows.
    pub pace_ms: u64,
    explain: bool,
    /// The slots last said (with --explain): (allowed, memory-bound, left
    /// to other builds).
    said: Option<(u32, bool, u32)>,
    /// The peak per job last said (with --explain), and why.
    said_peak: (u64, Basis),
    /// The jobs columns of the next row, tick by tick.
    columns: JobsColumns,
    /// When it last ticked, ms of the monotonic clock it is given.
    ticked_ms: Option<u64>,
    /// The jobs the last tick saw in the build's processes (`None`: not
    /// looked at).
    seen: Option<u32>,
    /// What the last tick weighed a job not started yet at, MiB
    /// (`room::Weight::next_mb`), for `--explain`.
    next_mb: u64,
    /// A limit above the container no file states, once noticed.
    ceiling: Ceiling,
}

impl Governor {
    /// A governor deciding with `handout` over `fifo`; `explain`: its
    /// decisions are told as they change (`--explain`).
    pub fn new(handout: Handout, fifo: TokenFifo, explain: bool) -> Governor {
        Governor {
            said_peak: (handout.peak_mb(), Basis::Start),
            handout,
            fifo,
            pace_ms: TICK_MS,
            explain,
            said: None,
            columns: JobsColumns::default(),
            ticked_ms: None,
            seen: None,
            next_mb: 0,
            ceiling: Ceiling::new(),
        }
    }
}

impl Governor {
    /// The pausing of CMD's jobs, CMD just started as `pid` (in the build
    /// cgroup `cg` when it joined one): `Pausing::follow` at this
    /// governor's pace, telling each pause with `--explain`. `None` when
    /// `root` is not the live host (its pids are not this host's to
    /// signal) or CMD is already gone.
    pub fn follow(&self, root: &Root, pid: u32, cg: Option<&BuildCgroup>) -> Option<Pausing> {
        Pausing::follow(root, pid, self.explain, cg, self.pace_ms)
    }
}

/// The governor's parts for one stretch of ticks: its own state, the pool
/// it shares (`--pool`), and the pausing of CMD's jobs (once CMD runs,
/// unless `--no-pause`). The binary keeps each part where it likes and
/// lends them here.
pub struct Driver<'a> {
    /// The handout, the FIFO and what was said.
    pub gov: &'a mut Governor,
    /// `--pool`: the memory budget shared with other governors.
    pub pool: Option<&'a mut PoolMember>,
    /// The pausing of CMD's jobs.
    pub pausing: Option<&'a mut Pausing>,
}

/// What one tick decided (and has acted on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decided {
    /// The tokens: jobs running and allowed, tokens put and taken (`None`
    /// only if no step was taken).
    pub tokens: Option<Decision>,
    /// What the pool admitted, with `--pool` when its lock was had.
    pub admitted: Option<Admission>,
    /// Jobs paused now.
    pub paused: u32,
}

impl Driver<'_> {
    /// One tick from glance `g` at `now_ms` (a monotonic clock): the
    /// steps of the module documentation, each decision acted on, notes
    /// told to `tell`.
    pub fn tick(&mut self, g: Glance, now_ms: u64, tell: &mut impl Tell) -> Decided {
        self.gov.ticked_ms = Some(now_ms);
        if let Some(n) = ceiling::reading(&g).and_then(|r| self.gov.ceiling.observe(r)) {
            tell.tell(&Note::Ceiling(n));
        }
        let usable = usable_mb(&g).map(|u| self.gov.ceiling.bound(u));
        // What the jobs reach first: pausing, slots and the pool then
        // weigh the same peak per job.
        let job_mb = self.pausing.as_mut().and_then(|p| p.scan());
        // What really runs: the build's jobs, else its compilers.
        let seen = self
            .pausing
            .as_ref()
            .and_then(|p| p.jobs_seen())
            .or(g.build_compilers);
        self.gov.seen = seen;
        let moved = self.gov.handout.measure(&Seen {
            usable_mb: usable,
            held_mb: g.build_rss_mb,
            compiler_peak_mb: g.build_peak_rss_mb,
            job_mb,
        });
        if self.gov.explain && moved.is_some() {
            self.gov.say_peak(tell);
        }
        let paused = self.pause(usable, now_ms, tell);
        let (tokens, admitted) = self.tokens(&g, usable, seen, now_ms, tell);
        let gov = &mut *self.gov;
        // jobs_running: what runs, slots or not (a -j of the build's own).
        let running = |d: &Decision| d.running.max(seen.unwrap_or(0));
        gov.columns
            .ticked(tokens.map(|d| (running(&d), d.allowed)), paused);
        let yielded = admitted.map_or(0, |a| a.yielded);
        if let Some(d) = tokens
            && gov.explain
            && gov.said != Some((d.allowed, d.memory_bound, yielded))
        {
            gov.said = Some((d.allowed, d.memory_bound, yielded));
            let why = self.slots_why(&d, usable, admitted);
            tell.tell(&Note::Slots {
                allowed: d.allowed,
                why,
            });
        }
        Decided {
            tokens,
            admitted,
            paused,
        }
    }

    /// The pausing step of a tick, before the slots are decided: room is
    /// `usable` less the other builds' growth and the reserve. Returns the
    /// jobs paused now (also into the lease).
    fn pause(&mut self, usable: Option<u64>, now_ms: u64, tell: &mut impl Tell) -> u32 {
        let (Some(p), Some(usable)) = (self.pausing.as_deref_mut(), usable) else {
            return self.pausing.as_ref().map_or(0, |p| p.paused_now());
        };
        let others = self
            .pool
            .as_ref()
            .map_or(0, |member| member.figures().others_growth_mb);
        let mut left = i128::from(usable) - i128::from(others);
        // Under a limit above the mount, the others hold their part too.
        if let Some(unseen) = self.pool.as_ref().and_then(|m| m.unseen_left_mb()) {
            left = left.min(unseen);
        }
        // The running jobs' growth is the pauser's to weigh: none here.
        let room = room_mb(left, 0);
        let n = p.act(self.gov.handout.peak_mb(), room, now_ms, tell);
        if let Some(member) = self.pool.as_deref_mut() {
            member.set_paused(p.paused());
        }
        n
    }

    /// The token step: decided from `g` (and, with `--pool`, from what the
    /// pool admits, its lease rewritten), acted on in the FIFO.
    fn tokens(
        &mut self,
        g: &Glance,
        usable: Option<u64>,
        seen: Option<u32>,
        now_ms: u64,
        tell: &mut impl Tell,
    ) -> (Option<Decision>, Option<Admission>) {
        let gov = &mut *self.gov;
        let in_pipe = gov.fifo.in_pipe().unwrap_or(0);
        let weight = self
            .pausing
            .as_deref_mut()
            .and_then(|p| p.weight(gov.handout.peak_mb()));
        let mut inp = Inputs {
            usable_mb: usable,
            compiler_rss_mb: g.build_rss_mb,
            in_pipe,
            now_ms,
            pool_allowed: None,
            seen,
            weight,
        };
        let w = gov.handout.weight(&inp);
        gov.next_mb = w.next_mb;
        let own = Own {
            available_mb: gov.ceiling.bound(g.mem_avail_mb),
            running: gov.handout.running(in_pipe),
            cap: gov.handout.cap_with(w.paused),
            weight: w,
            held_mb: g.build_rss_mb,
        };
        let (handout, fifo) = (&mut gov.handout, &mut gov.fifo);
        let mut d = None;
        let mut step = |pool_allowed: Option<u32>| {
            inp.pool_allowed = pool_allowed;
            let dec = handout.decide(&inp);
            let put = fifo.put(dec.put);
            let taken = fifo.take(dec.take);
            handout.settled(put, taken);
            d = Some(dec);
            // It would start more: no token waits in its FIFO, below its cap.
            (
                dec.running,
                dec.allowed,
                in_pipe == 0 && dec.running < handout.cap_with(w.paused),
            )
        };
        let admitted = match (self.pool.as_deref_mut(), g.mem_known) {
            (Some(member), true) => member.tick(own, |a| step(Some(a)), tell),
            _ => {
                step(None);
                None
            }
        };
        (d, admitted)
    }

    /// `--explain`: why `d` allows what it allows.
    fn slots_why(
        &self,
        d: &Decision,
        usable: Option<u64>,
        admitted: Option<Admission>,
    ) -> SlotsWhy<'_> {
        // What the next job was weighed at: the peak per job, or with
        // per-job peaks the lightest still to run.
        let peak_mb = self.gov.next_mb;
        match (admitted, self.pool.as_deref()) {
            (Some(a), Some(member)) if d.memory_bound => SlotsWhy::Pool {
                dir: member.dir(),
                room_mb: a.room_mb,
                peak_mb,
                others: member.others(),
                yielded: a.yielded,
            },
            _ if d.memory_bound => SlotsWhy::Memory {
                room_mb: d.room_mb,
                peak_mb,
                usable_mb: usable.unwrap_or(0),
                running: d.running,
            },
            _ if d.allowed > self.gov.handout.cap => SlotsWhy::Handed {
                cap: self.gov.handout.cap,
                paused: d.allowed - self.gov.handout.cap,
            },
            _ => SlotsWhy::Cap(self.gov.handout.cap),
        }
    }

    /// Fills the jobs columns of `row`, whose tick was the last
    /// ([`JobsColumns`]), the pauses so far and, with `--pool`, the pool's
    /// figures.
    pub fn fill_row(&mut self, row: &mut Row) {
        row.jobs = self.gov.columns.row();
        row.pauses = self.pausing.as_ref().map(|p| p.counts());
        row.pool = self.pool.as_ref().map(|member| member.figures());
    }

    /// True when a glance at `now_ms` has nothing to watch, and the tick
    /// it would feed can wait ([`IDLE_TICK_MS`]): no job runs but CMD's
    /// own (every token given out is in the FIFO: one ioctl(FIONREAD);
    /// and the last tick saw at most one job in the build's processes: a
    /// build on slots of its own is watched at the governor's pace),
    /// none is paused, no pool is shared (the others' leases move), and
    /// the last tick was less than [`IDLE_TICK_MS`] ago. The slot then
    /// counts in the jobs' average as one job running
    /// ([`Handout::idle_slot`]). More bytes in the FIFO than were given
    /// out (a client forged them) is no rest: the glance ticks and reads
    /// them back.
    pub fn idle(&mut self, now_ms: u64) -> bool {
        let recent = self
            .gov
            .ticked_ms
            .is_some_and(|t| now_ms.saturating_sub(t) < IDLE_TICK_MS);
        let idle = recent
            && self.pool.is_none()
            && self.gov.seen.is_none_or(|n| n <= 1)
            && self.pausing.as_ref().is_none_or(|p| p.paused_now() == 0)
            && self
                .gov
                .fifo
                .in_pipe()
                .is_ok_and(|n| self.gov.handout.at_rest(n));
        if idle {
            self.gov.handout.idle_slot();
        }
        idle
    }

    /// The FIFO to watch between ticks while tokens are withheld (see
    /// [`Driver::reclaim`]); `None` otherwise.
    pub fn watch_fd(&self) -> Option<BorrowedFd<'_>> {
        (self.gov.handout.withholding() > 0).then(|| self.gov.fifo.own_fd())
    }

    /// Between ticks: tokens that came back while withheld are kept at
    /// once, before the client that returned them reads them again.
    pub fn reclaim(&mut self) {
        let want = self.gov.handout.withholding();
        if want > 0 {
            let got = self.gov.fifo.take(want);
            self.gov.handout.reclaimed(got);
        }
    }

    /// The end of the run: every paused job continued (CMD may be ending,
    /// or be stopped itself), the FIFO's name gone (CMD has ended or is
    /// being waited for), this build's share of the pool freed (the others
    /// may grow at once). Returns the summary's jobserver block.
    pub fn finish(&mut self) -> Option<Report> {
        let pausing = self.pausing.as_deref_mut().map(|p| {
            p.release();
            p.weights.end_all();
            p.counts()
        });
        let per_job = self
            .pausing
            .as_deref()
            .filter(|_| self.pool.is_some())
            .map(|p| p.weights.fared());
        let mut report = self.gov.handout.report();
        if let Some(r) = report.as_mut() {
            r.pausing = pausing;
            r.per_job = per_job;
            r.pool = self.pool.as_ref().map(|member| member.share());
        }
        self.gov.fifo.unlink();
        if let Some(member) = self.pool.as_deref_mut() {
            member.leave();
        }
        report
    }

    /// After CMD ended `end` (by itself): with `--pool`, the peak per job
    /// its build measured is remembered for the next run of `run_id` —
    /// when CMD exited with status 0 (a build that failed or was stopped
    /// may not have run its largest job) and a compiler of it was
    /// measured. Every job of a build that ended has ended: the largest
    /// seen is whole. A failure is told; so is success, with `--explain`.
    ///
    /// So are the peaks of its jobs by key (`job_weights`, merged into
    /// what the pool remembers, `job_peaks`), through `buf` (at least
    /// `job_peaks::JOB_PEAKS_BUF` bytes).
    pub fn remember(&self, end: End, run_id: &str, buf: &mut [u8], tell: &mut impl Tell) {
        let Some(member) = self.pool.as_deref() else {
            return;
        };
        if end != End::Exited(0) || peakfile::name(run_id).is_none() {
            return;
        }
        if let Some(p) = self.pausing.as_deref()
            && !p.weights.measured().is_empty()
        {
            let written = member.remember_jobs(run_id, p.weights.measured(), buf);
            if written.is_err() || self.gov.explain {
                tell.tell(&Note::RememberedJobs {
                    dir: member.dir(),
                    run_id,
                    jobs: u32::try_from(p.weights.measured().len()).unwrap_or(u32::MAX),
                    written,
                });
            }
        }
        let Some(mb) = self.gov.handout.estimate().build_peak_mb() else {
            return;
        };
        let written = member.remember(run_id, mb);
        if written.is_err() || self.gov.explain {
            tell.tell(&Note::Remembered {
                dir: member.dir(),
                run_id,
                mb,
                written,
            });
        }
    }
}

impl Governor {
    /// `--explain`: the peak per job moved: from what was last said, to
    /// what it is now, and why. Said when why changes, or when it moved by
    /// a tenth or more since (a job growing past it would raise it a few
    /// MiB every tick).
    fn say_peak(&mut self, tell: &mut impl Tell) {
        let p = self.handout.estimate().report();
        let (was, why) = self.said_peak;
        let moved_far = p.now_mb.abs_diff(was).saturating_mul(10) >= was;
        if core::mem::discriminant(&why) == core::mem::discriminant(&p.basis) && !moved_far {
            return;
        }
        self.said_peak = (p.now_mb, p.basis);
        tell.tell(&Note::PeakMoved {
            was_mb: was,
            now: p,
        });
    }
}

/// The jobs columns of a row from the governor's ticks since the
/// previous row (it ticks between rows too): `jobs_running` and
/// `jobs_allowed` as decided at the row's own tick, `jobs_paused` the most
/// jobs paused at once since the previous row's tick, so that a job paused
/// and continued between two rows still shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobsColumns {
    /// The last tick's (running, allowed); `None` when it decided nothing.
    decided: Option<(u32, u32)>,
    /// Jobs paused at the last tick.
    paused_now: u32,
    /// The most jobs paused at once at the ticks since the last row.
    paused_most: u32,
}

impl JobsColumns {
    /// A governor tick decided `decided` (running, allowed), if anything,
    /// with `paused` jobs paused.
    pub fn ticked(&mut self, decided: Option<(u32, u32)>, paused: u32) {
        self.decided = decided;
        self.paused_now = paused;
        self.paused_most = self.paused_most.max(paused);
    }

    /// The row's (jobs_running, jobs_allowed, jobs_paused) after its tick;
    /// the next row's paused count starts from those paused now.
    pub fn row(&mut self) -> Option<(u32, u32, u32)> {
        let most = core::mem::replace(&mut self.paused_most, self.paused_now);
        self.decided
            .map(|(running, allowed)| (running, allowed, most))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16: a pause between two rows is in the next row's
    /// jobs_paused; running and allowed are those of the row's own tick.
    #[test]
    fn a_row_s_jobs_paused_is_the_most_since_the_previous_row() {
        let mut c = JobsColumns::default();
        assert_eq!(c.row(), None, "nothing decided yet");
        c.ticked(Some((2, 4)), 0);
        assert_eq!(c.row(), Some((2, 4, 0)));
        // Between rows: one paused, then two, then continued.
        c.ticked(Some((3, 4)), 1);
        c.ticked(Some((3, 3)), 2);
        c.ticked(Some((2, 3)), 0);
        c.ticked(Some((2, 4)), 0);
        assert_eq!(c.row(), Some((2, 4, 2)));
        // Still paused at a row: the next row starts from it.
        c.ticked(Some((1, 2)), 1);
        assert_eq!(c.row(), Some((1, 2, 1)));
        c.ticked(Some((1, 2)), 1);
        assert_eq!(c.row(), Some((1, 2, 1)));
        c.ticked(Some((1, 2)), 0);
        assert_eq!(c.row(), Some((1, 2, 1)));
        c.ticked(Some((1, 2)), 0);
        assert_eq!(c.row(), Some((1, 2, 0)));
        // A tick that decided nothing leaves the row's columns empty.
        c.ticked(None, 0);
        assert_eq!(c.row(), None);
    }
}
