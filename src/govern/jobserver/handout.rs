//! Token handout: how many jobs memory allows at once, and so how many
//! tokens (job slots) go out into the FIFO or come back from it.
//!
//! The protocol: a pipe (or named FIFO) holds one byte per free slot. A
//! client (make, cargo, rustc, ninja ≥ 1.13) reads a byte before it starts
//! a job beyond its first and writes a byte back when that job ends; its
//! first job needs no byte (the "implicit slot"). The server decides how
//! many bytes are in circulation.
//!
//! [`Handout`] is that decision, pure arithmetic over one tick's figures;
//! the FIFO it acts on is `govern::jobserver::token_fifo`'s. Each tick:
//!
//! - held by clients = issued − bytes in the FIFO (FIONREAD); running jobs
//!   = held + 1 (the implicit slot);
//! - every running job is assumed able to grow to the peak per job
//!   ([`crate::govern::jobserver::estimate`]); what compilers already hold (RSS) is
//!   taken off that growth (`room::growth_mb`);
//! - room = usable memory (MemAvailable, or the cgroup's available memory when
//!   smaller) − that growth − the reserve (`room::room_mb`, the one room
//!   formula);
//! - allowed = running + ⌊room / peak⌋ (fewer when room is negative),
//!   between 1 and the cap (cores, or `--max-jobs`, or CMD's `-jN`); a
//!   job paused holds its slot, and only the cores' cap rises by the
//!   paused jobs ([`CapFrom`]);
//! - bytes are written while issued < allowed − 1, and read back (taken
//!   into headroom's hand) from the FIFO while issued > allowed − 1. A job
//!   already running is never stopped: a withheld slot is one a client
//!   returned.
//!
//! The peak per job is [`Estimate`]'s: where it starts and how it moves
//! with what the build's jobs reach is `jobserver::estimate`'s rule, which
//! the pool's admission and pausing weigh too.
//!
//! # References
//! GNU make manual, "Sharing Job Slots with GNU make" (`--jobserver-auth=
//! R,W` and `fifo:PATH`); fifo(7); ioctl FIONREAD in tty_ioctl(4)/pipe(7).

use crate::govern::jobserver::estimate::{Estimate, Seen};
use crate::govern::jobserver::room::{Weight, room_mb};
use crate::kernel::root::Root;
use crate::report::jobserver_block::{Basis, Report, Source};

/// Most slots headroom hands out: far above any core count it meets, far
/// below a pipe's 64 KiB (a write of tokens never blocks).
pub const MAX_SLOTS: u32 = 4096;

/// Bytes of the buffer [`default_cap`] reads the host through
/// (`plan::host::cores`: /proc/stat and mountinfo).
pub const CORES_BUF_LEN: usize = 64 * 1024;

/// The cap without `--max-jobs`: the cores usable on `root`
/// (`plan::host::cores`: the affinity on the live host, else the online
/// CPUs; capped by a cgroup's CPU quota and cpuset), read through `buf`
/// ([`CORES_BUF_LEN`] bytes).
pub fn default_cap(root: &Root, buf: &mut [u8]) -> u32 {
    crate::plan::host::cores(root, root.is_live(), buf).usable
}

/// Where the cap came from, which says whether a paused job's slot may
/// go to another job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapFrom {
    /// The host's usable cores ([`default_cap`]): it is there to keep
    /// each core busy, so a paused job's idle core is lent to a job that
    /// fits in memory (the cap rises by the jobs paused).
    Cores,
    /// The user's: CMD's own `-jN` taken out (`cli::jobs_flag`), or
    /// `--max-jobs N`. At most N jobs, paused ones included: a paused job
    /// still holds its slot, and no slot goes out beyond N (make(1):
    /// `-j` is "the number of jobs (commands) to run simultaneously").
    Given,
}

/// One tick's figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// MemAvailable, or the cgroup's available memory when smaller, MiB; `None`
    /// when /proc/meminfo could not be read this tick (nothing changes).
    pub usable_mb: Option<u64>,
    /// RSS summed over the live compilers, MiB.
    pub compiler_rss_mb: u64,
    /// Bytes sitting in the FIFO (FIONREAD).
    pub in_pipe: u32,
    /// A monotonic clock, milliseconds: the time between ticks is what
    /// counts as throttled.
    pub now_ms: u64,
    /// With a shared pool: the most jobs it admits this build
    /// (`jobserver::admit`), which then bounds `allowed` too.
    pub pool_allowed: Option<u32>,
    /// Jobs running now as the build's own processes show them (its
    /// jobs, `followed::jobtree`, else its compilers); `None` when not
    /// looked at. More than the slots allow: the build runs slots of its
    /// own (a `-j` headroom could not take out).
    pub seen: Option<u32>,
    /// Each job by its own peak (`job_weights`, via `pausing`); `None`:
    /// every job at the peak per job, less what compilers hold
    /// (`room::Weight::uniform`).
    pub weight: Option<Weight>,
}

/// What one tick decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Jobs running now: slots held by clients + the implicit one.
    pub running: u32,
    /// Jobs allowed at once from now on (≥ 1, ≤ the cap).
    pub allowed: u32,
    /// Bytes to write into the FIFO.
    pub put: u32,
    /// Bytes to read back from it (at most `in_pipe`): tokens withheld,
    /// plus any a client forged (more in the FIFO than were given out).
    pub take: u32,
    /// Room for new jobs, MiB (negative: the running ones may outgrow
    /// memory).
    pub room_mb: i64,
    /// Memory, not the cap, sets `allowed`.
    pub memory_bound: bool,
}

/// The jobserver's policy and what it saw over the run.
#[derive(Clone, Debug)]
pub struct Handout {
    /// Most jobs at once: cores, or `--max-jobs` (or CMD's `-jN`).
    pub cap: u32,
    /// Where `cap` came from: whether paused jobs raise it
    /// ([`Handout::cap_with`]).
    pub cap_from: CapFrom,
    /// The peak per job: where it started, how it moves.
    estimate: Estimate,
    /// Bytes in circulation: in the FIFO or held by clients.
    issued: u32,
    /// Bytes found in the FIFO beyond `issued` at the last decision.
    surplus: u32,
    allowed: u32,
    ticks: u64,
    /// Samples of the jobs running: each tick's, and each idle slot's
    /// ([`Handout::idle_slot`]); `running_sum` over them is the average.
    samples: u64,
    running_sum: u64,
    running_min: u32,
    running_max: u32,
    /// The previous tick: its time and what it left clients until the
    /// next ([`Left`]).
    last: Option<(u64, Left)>,
    /// This tick's figures, between [`Handout::decide`] and
    /// [`Handout::settled`]: memory bound it, tokens clients held, bytes
    /// in the FIFO.
    deciding: (bool, u32, u32),
    throttled_ms: u64,
    /// Time memory refused a slot while clients held none: throttled only
    /// once a slot offered after it is taken at once (a client was
    /// waiting); else the start-up or a lone last job, not a wait.
    unproven_ms: u64,
    started_ms: Option<u64>,
    /// The most slots ever in circulation: tokens given out + the
    /// implicit one. A client bound by them never runs more jobs.
    slots_most: u32,
    /// The most jobs seen at once in the build's processes.
    seen_max: Option<u32>,
}

/// What a tick left clients until the next: a slot free, or none and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Left {
    /// This many tokens in the FIFO for any client to take.
    Free(u32),
    /// None free and memory (not the cap) refusing more, clients holding
    /// this many tokens: holding one, a client is one that asks for
    /// slots, and it is refused its next.
    Refused(u32),
    /// None free, at the cap: not memory's doing.
    Capped,
}

impl Handout {
    /// A governor with at most `cap` jobs at once (clamped to
    /// 1..=[`MAX_SLOTS`]), a cap that came `from` the cores or the user,
    /// and `peak_mb` per job to start with, given by `source`
    /// ([`Estimate::new`]).
    pub fn new(cap: u32, from: CapFrom, peak_mb: u64, source: Source) -> Handout {
        let cap = cap.clamp(1, MAX_SLOTS);
        Handout {
            cap,
            cap_from: from,
            estimate: Estimate::new(peak_mb, source, cap),
            issued: 0,
            surplus: 0,
            allowed: 1,
            ticks: 0,
            samples: 0,
            running_sum: 0,
            running_min: u32::MAX,
            running_max: 0,
            last: None,
            deciding: (false, 0, 0),
            throttled_ms: 0,
            unproven_ms: 0,
            started_ms: None,
            slots_most: 1,
            seen_max: None,
        }
    }

    /// The peak per job now, MiB ([`Estimate::per_job_mb`]).
    pub fn peak_mb(&self) -> u64 {
        self.estimate.per_job_mb()
    }

    /// The peak per job: where it started, how it moved.
    pub fn estimate(&self) -> &Estimate {
        &self.estimate
    }

    /// Takes in what the build's jobs reach this tick, before pausing and
    /// [`Handout::decide`] weigh the peak per job; returns the estimate
    /// before when it moved ([`Estimate::observe`]).
    pub fn measure(&mut self, seen: &Seen) -> Option<(u64, Basis)> {
        self.estimate.observe(seen)
    }

    /// Decides this tick from `inp` at the peak per job now. Call
    /// [`Handout::settled`] with what the FIFO really took and gave
    /// before the next tick.
    pub fn decide(&mut self, inp: &Inputs) -> Decision {
        // Bytes beyond those given out were forged by a client (returned
        // twice, or written): they are read back first, whatever else.
        let surplus = inp.in_pipe.saturating_sub(self.issued);
        self.surplus = surplus;
        let held = self.issued.saturating_sub(inp.in_pipe);
        let running = held.saturating_add(1);
        let (allowed, room_mb) = match inp.usable_mb {
            // Nothing to decide from: keep what was allowed.
            None => (self.allowed, 0),
            Some(usable) => {
                let w = self.weight(inp);
                let room_mb = room_mb(i128::from(usable), w.growth_at(running));
                let fit = i128::from(room_mb).div_euclid(i128::from(w.next_mb.max(1)));
                let cap = self.cap_with(w.paused);
                let allowed = (i128::from(running) + fit).clamp(1, i128::from(cap));
                (u32::try_from(allowed).unwrap_or(1), room_mb)
            }
        };
        let allowed = inp.pool_allowed.map_or(allowed, |p| allowed.min(p.max(1)));
        let memory_bound = allowed < self.cap;
        self.allowed = allowed;
        self.ticks += 1;
        self.sample(running);
        if let Some(seen) = inp.seen {
            self.seen_max = Some(self.seen_max.map_or(seen, |m| m.max(seen)));
        }
        self.throttle(inp.now_ms, inp.in_pipe);
        // What it leaves clients is known once the FIFO has acted
        // (`settled`).
        self.last = Some((inp.now_ms, Left::Capped));
        self.deciding = (memory_bound, held, inp.in_pipe);
        self.started_ms.get_or_insert(inp.now_ms);
        let want = allowed - 1;
        let ours_in_pipe = inp.in_pipe - surplus;
        let (put, take) = if self.issued < want {
            (want - self.issued, surplus)
        } else {
            (0, (self.issued - want).min(ours_in_pipe) + surplus)
        };
        Decision {
            running,
            allowed,
            put,
            take,
            room_mb,
            memory_bound,
        }
    }

    /// Most jobs at once while `paused` jobs are paused (`room::Weight`'s,
    /// counted in the slots they hold): a cap the user gave ([`CapFrom::Given`])
    /// whatever is paused; the cores ([`CapFrom::Cores`]) and one more per
    /// paused job, whose core is idle.
    pub fn cap_with(&self, paused: u32) -> u32 {
        match self.cap_from {
            CapFrom::Given => self.cap,
            CapFrom::Cores => self.cap.saturating_add(paused).min(MAX_SLOTS),
        }
    }

    /// What the jobs weigh this tick: `inp`'s per-job weight, else every
    /// job at the peak per job less what its compilers hold. A job paused
    /// frees its core: under the cores' cap, the cap rises by the paused
    /// jobs ([`Handout::cap_with`]; a per-job weight only, the one-peak
    /// rule never starts a job for a paused one).
    pub fn weight(&self, inp: &Inputs) -> Weight {
        inp.weight
            .unwrap_or_else(|| Weight::uniform(self.peak_mb(), inp.compiler_rss_mb))
    }

    /// The time since the previous tick, until `now_ms` with `in_pipe`
    /// bytes in the FIFO, counted as throttled by memory when a client
    /// waited for a slot and memory refused it ([`Left`]): at once when
    /// it held slots already; when it held none (the start, before any
    /// client asked; a lone last job), only if the next slot offered was
    /// taken by the tick after.
    fn throttle(&mut self, now_ms: u64, in_pipe: u32) {
        let Some((at, left)) = self.last else {
            return;
        };
        let span = now_ms.saturating_sub(at);
        match left {
            Left::Refused(1..) => self.throttled_ms += span,
            Left::Refused(0) => self.unproven_ms += span,
            Left::Free(n) => {
                let unproven = core::mem::take(&mut self.unproven_ms);
                if in_pipe < n {
                    self.throttled_ms += unproven;
                }
            }
            Left::Capped => self.unproven_ms = 0,
        }
    }

    /// Records what the FIFO really did: `put` bytes written, `taken`
    /// bytes read back.
    pub fn settled(&mut self, put: u32, taken: u32) {
        // Forged bytes read back were never counted as given out.
        let ours = taken.saturating_sub(self.surplus);
        self.surplus = 0;
        self.issued = self.issued.saturating_add(put).saturating_sub(ours);
        self.slots_most = self.slots_most.max(self.issued.saturating_add(1));
        let (memory_bound, held, in_pipe) = self.deciding;
        let free = in_pipe.saturating_add(put).saturating_sub(taken);
        let left = match (free, memory_bound) {
            (1.., _) => Left::Free(free),
            (0, true) => Left::Refused(held),
            (0, false) => Left::Capped,
        };
        if let Some((_, l)) = self.last.as_mut() {
            *l = left;
        }
    }

    /// Tokens it still wants back: given out beyond `allowed − 1`, and so
    /// held by clients now. Each is kept when it comes back
    /// ([`Handout::reclaimed`]): a client such as make writes a token back
    /// and reads one again at once when a job ends, so a token withheld
    /// only at ticks is almost never withheld.
    pub fn withholding(&self) -> u32 {
        self.issued.saturating_sub(self.allowed.saturating_sub(1))
    }

    /// `n` tokens read back between ticks, as they came back.
    pub fn reclaimed(&mut self, n: u32) {
        self.issued = self.issued.saturating_sub(n);
        if let Some((_, Left::Free(f))) = self.last.as_mut() {
            *f = f.saturating_sub(n);
        }
    }

    /// Jobs running now for `in_pipe` bytes in the FIFO: slots held by
    /// clients + the implicit one.
    pub fn running(&self, in_pipe: u32) -> u32 {
        self.issued.saturating_sub(in_pipe).saturating_add(1)
    }

    /// True when `in_pipe` bytes in the FIFO are exactly the tokens given
    /// out: no client holds one and none forged one (more bytes than
    /// given out, which the next [`Handout::decide`] reads back).
    pub fn at_rest(&self, in_pipe: u32) -> bool {
        in_pipe == self.issued
    }

    /// One sample of the jobs running.
    fn sample(&mut self, running: u32) {
        self.samples += 1;
        self.running_sum += u64::from(running);
        self.running_min = self.running_min.min(running);
        self.running_max = self.running_max.max(running);
    }

    /// A slot of the governor's pace without a tick, seen idle (only the
    /// implicit job running: `driver::Driver::idle`): counted in the jobs'
    /// average as a tick there would have been, so skipping it does not
    /// raise the average.
    pub fn idle_slot(&mut self) {
        if self.ticks > 0 {
            self.sample(1);
        }
    }

    /// Ticks decided so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Jobs allowed at once since the last tick.
    pub fn allowed(&self) -> u32 {
        self.allowed
    }

    /// Running jobs over the ticks: (min, average × 100, max); `None`
    /// before the first tick.
    pub fn concurrency(&self) -> Option<(u32, u64, u32)> {
        (self.ticks > 0).then(|| {
            (
                self.running_min,
                self.running_sum * 100 / self.samples.max(1),
                self.running_max,
            )
        })
    }

    /// What the summary says of the run: see [`Report`].
    pub fn report(&self) -> Option<Report> {
        let (min, avg_centi, max) = self.concurrency()?;
        let span = self
            .last
            .zip(self.started_ms)
            .map_or(0, |((at, _), start)| at.saturating_sub(start));
        Some(Report {
            cap: self.cap,
            min,
            avg_centi,
            max,
            throttled_ms: self.throttled_ms,
            span_ms: span,
            peak: self.estimate.report(),
            pool: None,
            pausing: None,
            seen_max: self.seen_max,
            slots_most: self.slots_most,
            per_job: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(usable: u64, rss: u64, in_pipe: u32) -> Inputs {
        Inputs {
            usable_mb: Some(usable),
            compiler_rss_mb: rss,
            in_pipe,
            now_ms: 0,
            pool_allowed: None,
            seen: None,
            weight: None,
        }
    }

    /// Issue 35: with per-job weights, a job paused frees its core: a
    /// light job may start in its slot beyond the cap, when memory holds
    /// it; the one-peak rule never does.
    #[test]
    fn a_paused_job_s_slot_goes_to_a_job_that_fits() {
        use crate::govern::jobserver::room::Weight;
        let mut g = Handout::new(2, CapFrom::Cores, 396, Source::Pool(360));
        // One heavy job running (implicit slot), one paused holding a
        // token: 600 MiB usable, 376 MiB still ahead of the running one,
        // light jobs at 65 MiB: one more fits (600 − 376 − 32 = 192).
        let w = Weight {
            counted: 2,
            growth_mb: 376,
            held_mb: 0,
            next_mb: 65,
            paused: 1,
        };
        let mut inp = inputs(600, 0, 0);
        inp.weight = Some(w);
        g.issued = 1;
        let d = g.decide(&inp);
        assert_eq!((d.running, d.allowed), (2, 3));
        // Without the pause, the cap holds.
        inp.weight = Some(Weight { paused: 0, ..w });
        assert_eq!(g.decide(&inp).allowed, 2);
        // The one-peak rule: 396 per job, nothing fits beside.
        inp.weight = None;
        assert_eq!(g.decide(&inp).allowed, 1);
    }

    /// Issue 42: `run --jobserver -- make -j4` ran 5 compilers for 264 s
    /// ("the cap, 4, and 1 for the paused job(s)"). A cap the user gave
    /// is at most that many jobs, the paused ones included: a paused job
    /// lends no slot, whatever memory holds.
    #[test]
    fn a_cap_the_user_gave_is_not_raised_by_paused_jobs() {
        use crate::govern::jobserver::room::Weight;
        let w = Weight {
            counted: 4,
            growth_mb: 400,
            held_mb: 0,
            next_mb: 65,
            paused: 1,
        };
        // make -j4 holds its 4 slots (3 tokens out), one job paused;
        // memory would hold dozens more.
        let mut g = Handout::new(4, CapFrom::Given, 396, Source::Pool(360));
        g.issued = 3;
        let mut inp = inputs(64_000, 0, 0);
        inp.weight = Some(w);
        let d = g.decide(&inp);
        assert_eq!((d.running, d.allowed, d.put), (4, 4, 0));
        assert!(!d.memory_bound);
        // Three paused: still 4 (one runs), never more.
        inp.weight = Some(Weight { paused: 3, ..w });
        assert_eq!(g.decide(&inp).allowed, 4);
        assert_eq!((g.cap_with(0), g.cap_with(3)), (4, 4));
        // The cores' cap, same figures: the paused job's core is lent.
        let mut g = Handout::new(4, CapFrom::Cores, 396, Source::Pool(360));
        g.issued = 3;
        inp.weight = Some(w);
        let d = g.decide(&inp);
        assert_eq!((d.running, d.allowed, d.put), (4, 5, 1));
        assert_eq!((g.cap_with(0), g.cap_with(3)), (4, 7));
        assert_eq!(g.cap_with(u32::MAX), MAX_SLOTS);
    }

    /// Runs one tick as the FIFO would: whatever is decided happens.
    fn tick(g: &mut Handout, inp: Inputs) -> Decision {
        let d = g.decide(&inp);
        g.settled(d.put, d.take);
        d
    }

    #[test]
    fn a_400_mib_cgroup_and_160_mib_jobs_allow_two() {
        let mut g = Handout::new(8, CapFrom::Cores, 160, Source::PeakMb);
        // Start: only make's implicit job, nothing held.
        let d = tick(&mut g, inputs(380, 0, 0));
        // room = 380 − 160 − RESERVE_MB: one more job.
        assert_eq!(d.room_mb, room_mb(380, 160));
        assert_eq!((d.running, d.allowed, d.put, d.take), (1, 2, 1, 0));
        assert!(d.memory_bound);
        // make took the token: two run, growing; no third.
        let d = tick(&mut g, inputs(300, 60, 0));
        assert_eq!((d.running, d.allowed, d.put), (2, 2, 0));
        assert_eq!(d.room_mb, room_mb(300, 320 - 60));
    }

    #[test]
    fn plenty_of_memory_gives_the_cap() {
        let mut g = Handout::new(4, CapFrom::Cores, 2000, Source::Guess("generic"));
        let d = tick(&mut g, inputs(64_000, 0, 0));
        assert_eq!((d.allowed, d.put), (4, 3));
        assert!(!d.memory_bound);
        // All three tokens back in the pipe: still the cap, nothing moves.
        let d = tick(&mut g, inputs(64_000, 0, 3));
        assert_eq!((d.running, d.allowed, d.put, d.take), (1, 4, 0, 0));
    }

    #[test]
    fn tokens_withheld_are_kept_as_they_come_back_between_ticks() {
        let mut g = Handout::new(4, CapFrom::Cores, 1000, Source::PeakMb);
        tick(&mut g, inputs(64_000, 0, 0));
        assert_eq!(g.withholding(), 0);
        // Memory collapses while the client holds all 3: one job at once
        // from now on, so all 3 are wanted back.
        let d = tick(&mut g, inputs(500, 1500, 0));
        assert_eq!((d.running, d.allowed, d.take), (4, 1, 0));
        assert_eq!(g.withholding(), 3);
        // One comes back between ticks and is kept: 2 still held.
        g.reclaimed(1);
        assert_eq!(g.withholding(), 2);
        assert_eq!(g.running(0), 3);
        // Room again: it gives out, and withholds nothing.
        tick(&mut g, inputs(64_000, 0, 0));
        assert_eq!(g.withholding(), 0);
    }

    #[test]
    fn shrinking_memory_takes_returned_tokens_back_never_below_one_job() {
        let mut g = Handout::new(4, CapFrom::Cores, 1000, Source::PeakMb);
        tick(&mut g, inputs(64_000, 0, 0));
        // Memory collapses while 2 tokens are held and 1 is back in the
        // pipe: the one in the pipe is taken back.
        let d = tick(&mut g, inputs(500, 1500, 1));
        assert_eq!((d.running, d.allowed, d.take), (3, 1, 1));
        // Later both held ones come back: taken too; one job goes on.
        let d = tick(&mut g, inputs(500, 0, 2));
        assert_eq!((d.running, d.allowed, d.take, d.put), (1, 1, 2, 0));
        let d = tick(&mut g, inputs(0, 0, 0));
        assert_eq!((d.running, d.allowed, d.put, d.take), (1, 1, 0, 0));
    }

    #[test]
    fn tokens_a_client_forged_are_read_back() {
        let mut g = Handout::new(2, CapFrom::Cores, 100, Source::PeakMb);
        let d = tick(&mut g, inputs(10_000, 0, 0));
        assert_eq!(d.put, 1);
        // Six more bytes than were given: all read back, the cap holds.
        let d = tick(&mut g, inputs(10_000, 0, 7));
        assert_eq!((d.running, d.allowed, d.put, d.take), (1, 2, 0, 6));
        let d = tick(&mut g, inputs(10_000, 0, 1));
        assert_eq!((d.running, d.put, d.take), (1, 0, 0));
    }

    /// CI, stop 44: six forged bytes looked like a build at rest (one job
    /// running), so the idle governor waited up to a second before it
    /// read them back, and make took them first.
    #[test]
    fn forged_tokens_are_not_a_build_at_rest() {
        let mut g = Handout::new(2, CapFrom::Cores, 100, Source::PeakMb);
        tick(&mut g, inputs(10_000, 0, 0));
        assert!(g.at_rest(1));
        assert_eq!(g.running(7), 1);
        assert!(!g.at_rest(7));
        assert!(!g.at_rest(0));
    }

    #[test]
    fn the_slots_follow_the_peak_per_job_it_measures() {
        // 1 GiB, two cores, the generic guess: lowered so that two jobs
        // run before anything is measured, then the measured 350 + 10 %.
        let mut g = Handout::new(2, CapFrom::Cores, 2000, Source::Guess("generic"));
        let seen = |compiler| Seen {
            usable_mb: Some(990),
            held_mb: 0,
            compiler_peak_mb: compiler,
            job_mb: None,
        };
        g.measure(&seen(None));
        assert_eq!(g.peak_mb(), 435);
        let d = tick(&mut g, inputs(990, 0, 0));
        assert_eq!((d.running, d.allowed, d.put), (1, 2, 1));
        g.measure(&seen(Some(350)));
        g.measure(&seen(None));
        g.measure(&seen(None));
        assert_eq!(g.peak_mb(), 385);
        let r = g.report().unwrap();
        assert_eq!((r.peak.start_mb, r.peak.now_mb), (2000, 385));
    }

    #[test]
    fn unknown_memory_keeps_the_last_decision() {
        let mut g = Handout::new(8, CapFrom::Cores, 100, Source::PeakMb);
        let d = tick(&mut g, inputs(332, 0, 0));
        assert_eq!(d.allowed, 3);
        let mut inp = inputs(0, 0, 2);
        inp.usable_mb = None;
        let d = tick(&mut g, inp);
        assert_eq!((d.allowed, d.put, d.take), (3, 0, 0));
    }

    /// Issue 28: a slot the governor let pass idle (`Driver::idle`)
    /// counts in the average as the one job running it saw.
    #[test]
    fn idle_slots_count_as_one_job_running() {
        let mut g = Handout::new(2, CapFrom::Cores, 100, Source::PeakMb);
        g.idle_slot();
        assert_eq!(g.concurrency(), None, "no tick yet: nothing to count");
        tick(&mut g, inputs(10_000, 0, 0));
        let (_, first, _) = g.concurrency().unwrap();
        g.idle_slot();
        g.idle_slot();
        g.idle_slot();
        let (min, avg, _) = g.concurrency().unwrap();
        assert_eq!((min, avg), (1, (first + 300) / 4));
        assert_eq!(g.ticks(), 1, "idle slots are no ticks");
    }

    #[test]
    fn concurrency_and_throttling_are_counted() {
        let mut g = Handout::new(2, CapFrom::Cores, 100, Source::PeakMb);
        assert_eq!(g.concurrency(), None);
        assert_eq!(g.report(), None);
        let at = |usable, ms| Inputs {
            now_ms: ms,
            ..inputs(usable, 0, 0)
        };
        tick(&mut g, at(10_000, 1000));
        tick(&mut g, at(10_000, 1250));
        // Bound by memory from 1500 ms to 2500 ms.
        tick(&mut g, at(50, 1500));
        tick(&mut g, at(50, 2000));
        tick(&mut g, at(10_000, 2500));
        assert_eq!(g.concurrency(), Some((1, 180, 2)));
        let r = g.report().unwrap();
        assert_eq!((r.throttled_ms, r.span_ms), (1000, 1500));
        let mut t: heapless::String<256> = heapless::String::new();
        r.render(&mut t).unwrap();
        assert_eq!(
            t.as_str(),
            "JOBSERVER: up to 2 job(s) at once; peak per job 100 MiB (--peak-mb)\n  slots in use (jobs at once): min 1  avg 1.80  max 2\n  throttled by memory: 1.0 s of 1.5 s\n"
        );
    }

    /// Issue 33: the start-up ramp is not "throttled by memory": a slot
    /// waiting in the FIFO, or none asked for yet, refuses nobody. Only
    /// time when memory refused a slot to a client that asked counts.
    #[test]
    fn only_a_slot_refused_to_a_client_that_asked_is_throttled() {
        // Cap 4 (make -j4); memory allows 2 (one token out) throughout.
        let mut g = Handout::new(4, CapFrom::Cores, 100, Source::PeakMb);
        let at = |ms, in_pipe| Inputs {
            now_ms: ms,
            ..inputs(330, 0, in_pipe)
        };
        let d = tick(&mut g, at(0, 0));
        assert_eq!((d.allowed, d.put, d.memory_bound), (2, 1, true));
        // make is still reading its Makefile: the token waits, 2 s.
        tick(&mut g, at(1000, 1));
        tick(&mut g, at(2000, 1));
        assert_eq!(g.report().unwrap().throttled_ms, 0, "the ramp");
        // make took it and wants more: 1.5 s refused.
        tick(&mut g, at(2500, 0));
        tick(&mut g, at(3000, 0));
        tick(&mut g, at(4000, 0));
        let r = g.report().unwrap();
        assert_eq!((r.throttled_ms, r.span_ms), (1500, 4000));
        // The block says it.
        let mut t: heapless::String<512> = heapless::String::new();
        r.render(&mut t).unwrap();
        assert!(
            t.contains("\n  throttled by memory: 1.5 s of 4.0 s\n"),
            "{t}"
        );

        // One job at once from the governor's first glance, no token out:
        // refused only if the next slot offered is taken at once.
        let mut g = Handout::new(4, CapFrom::Cores, 100, Source::PeakMb);
        let low = |ms, in_pipe| Inputs {
            now_ms: ms,
            ..inputs(150, 0, in_pipe)
        };
        assert_eq!(tick(&mut g, low(0, 0)).allowed, 1);
        tick(&mut g, low(1000, 0));
        assert_eq!(g.report().unwrap().throttled_ms, 0, "not yet shown");
        // Room: a token is offered at 2 s and taken by 2.25 s.
        assert_eq!(tick(&mut g, at(2000, 0)).put, 1);
        tick(&mut g, at(2250, 0));
        assert_eq!(g.report().unwrap().throttled_ms, 2000);
        // Once more, but the slot offered is left in the FIFO: the job
        // running alone wanted no other (a last link).
        let mut g = Handout::new(4, CapFrom::Cores, 100, Source::PeakMb);
        tick(&mut g, low(0, 0));
        tick(&mut g, low(1000, 0));
        tick(&mut g, at(2000, 0));
        tick(&mut g, at(2250, 1));
        tick(&mut g, at(3000, 1));
        assert_eq!(g.report().unwrap().throttled_ms, 0);
    }

    #[test]
    fn absurd_figures_do_not_overflow() {
        let mut g = Handout::new(u32::MAX, CapFrom::Cores, u64::MAX, Source::PeakMb);
        assert_eq!(g.cap, MAX_SLOTS);
        let d = tick(&mut g, inputs(u64::MAX, u64::MAX, u32::MAX));
        assert!(d.allowed >= 1 && d.allowed <= MAX_SLOTS);
        let mut g = Handout::new(3, CapFrom::Cores, 1, Source::PeakMb);
        let d = tick(&mut g, inputs(u64::MAX, 0, 0));
        assert_eq!(d.allowed, 3);
    }
}
