//! `run --jobserver`: headroom as the GNU make jobserver of the build,
//! handing out job slots only while memory allows.
//!
//! The protocol: a pipe (or named FIFO) holds one byte per free slot. A
//! client (make, cargo, rustc, ninja ≥ 1.13) reads a byte before it starts
//! a job beyond its first and writes a byte back when that job ends; its
//! first job needs no byte (the "implicit slot"). The server decides how
//! many bytes are in circulation.
//!
//! [`Governor`] is that decision, pure arithmetic over one tick's figures;
//! [`Pool`] is the FIFO it acts on. Each tick:
//!
//! - held by clients = issued − bytes in the FIFO (FIONREAD); running jobs
//!   = held + 1 (the implicit slot);
//! - every running job is assumed able to grow to the peak per job
//!   ([`crate::govern::estimate`]); what compilers already hold (RSS) is
//!   taken off that growth ([`growth_mb`]);
//! - room = usable memory (MemAvailable, or the cgroup's available memory when
//!   smaller) − that growth − [`RESERVE_MB`] ([`room_mb`]);
//! - allowed = running + ⌊room / peak⌋ (fewer when room is negative),
//!   between 1 and the cap (cores, or `--max-jobs`);
//! - bytes are written while issued < allowed − 1, and read back (taken
//!   into headroom's hand) from the FIFO while issued > allowed − 1. A job
//!   already running is never stopped: a withheld slot is one a client
//!   returned.
//!
//! The peak per job is [`Estimate`]'s: where it starts and how it moves
//! with what the build's jobs reach is `govern::estimate`'s rule, which
//! the pool's admission and pausing weigh too.
//!
//! # References
//! GNU make manual, "Sharing Job Slots with GNU make" (`--jobserver-auth=
//! R,W` and `fifo:PATH`); fifo(7); ioctl FIONREAD in tty_ioctl(4)/pipe(7).

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::govern::estimate::{Estimate, Seen};
use crate::report::jobserver_block::{Basis, Report, Source};

/// Memory kept free beyond the running jobs' growth, MiB: room for make,
/// the shell, headroom and the kernel's own needs between two ticks.
pub const RESERVE_MB: u64 = 32;

/// The room for new jobs, MiB: `left_mb` (usable memory, less what other
/// builds reserve when they share a pool) − `growth_mb` (what the running
/// jobs may still grow by) − [`RESERVE_MB`]; negative when the running
/// ones may outgrow memory; saturated, never wrapped. The one room
/// formula: token handout, pool admission and pausing all use it.
pub fn room_mb(left_mb: i128, growth_mb: u64) -> i64 {
    let r = left_mb
        .saturating_sub(i128::from(growth_mb))
        .saturating_sub(i128::from(RESERVE_MB));
    i64::try_from(r).unwrap_or(if r < 0 { i64::MIN } else { i64::MAX })
}

/// The growth `k` jobs may still add at `peak_mb` each when their
/// compilers hold `held_mb` already: `k × peak − held`, at least 0, MiB.
pub fn growth_mb(k: u32, peak_mb: u64, held_mb: u64) -> u64 {
    u64::from(k).saturating_mul(peak_mb).saturating_sub(held_mb)
}

/// Longest time between two governor ticks, milliseconds: a job that
/// starts right after a tick has grown at most this long before the next
/// one sees it.
pub const TICK_MS: u64 = 250;

/// Most slots headroom hands out: far above any core count it meets, far
/// below a pipe's 64 KiB (a write of tokens never blocks).
pub const MAX_SLOTS: u32 = 4096;

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
    /// (`govern::admit`), which then bounds `allowed` too.
    pub pool_allowed: Option<u32>,
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
pub struct Governor {
    /// Most jobs at once: cores, or `--max-jobs`.
    pub cap: u32,
    /// The peak per job: where it started, how it moves.
    estimate: Estimate,
    /// Bytes in circulation: in the FIFO or held by clients.
    issued: u32,
    /// Bytes found in the FIFO beyond `issued` at the last decision.
    surplus: u32,
    allowed: u32,
    ticks: u64,
    running_sum: u64,
    running_min: u32,
    running_max: u32,
    /// The previous tick: its time and whether memory bound it.
    last: Option<(u64, bool)>,
    throttled_ms: u64,
    started_ms: Option<u64>,
}

impl Governor {
    /// A governor with at most `cap` jobs at once (clamped to
    /// 1..=[`MAX_SLOTS`]) and `peak_mb` per job to start with, given by
    /// `source` ([`Estimate::new`]).
    pub fn new(cap: u32, peak_mb: u64, source: Source) -> Governor {
        let cap = cap.clamp(1, MAX_SLOTS);
        Governor {
            cap,
            estimate: Estimate::new(peak_mb, source, cap),
            issued: 0,
            surplus: 0,
            allowed: 1,
            ticks: 0,
            running_sum: 0,
            running_min: u32::MAX,
            running_max: 0,
            last: None,
            throttled_ms: 0,
            started_ms: None,
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
    /// [`Governor::decide`] weigh the peak per job; returns the estimate
    /// before when it moved ([`Estimate::observe`]).
    pub fn measure(&mut self, seen: &Seen) -> Option<(u64, Basis)> {
        self.estimate.observe(seen)
    }

    /// Decides this tick from `inp` at the peak per job now. Call
    /// [`Governor::settled`] with what the FIFO really took and gave
    /// before the next tick.
    pub fn decide(&mut self, inp: &Inputs) -> Decision {
        // Bytes beyond those given out were forged by a client (returned
        // twice, or written): they are read back first, whatever else.
        let surplus = inp.in_pipe.saturating_sub(self.issued);
        self.surplus = surplus;
        let held = self.issued.saturating_sub(inp.in_pipe);
        let running = held.saturating_add(1);
        let peak = self.peak_mb();
        let (allowed, room_mb) = match inp.usable_mb {
            // Nothing to decide from: keep what was allowed.
            None => (self.allowed, 0),
            Some(usable) => {
                let growth = growth_mb(running, peak, inp.compiler_rss_mb);
                let room_mb = room_mb(i128::from(usable), growth);
                let fit = i128::from(room_mb).div_euclid(i128::from(peak));
                let allowed = (i128::from(running) + fit).clamp(1, i128::from(self.cap));
                (u32::try_from(allowed).unwrap_or(1), room_mb)
            }
        };
        let allowed = inp.pool_allowed.map_or(allowed, |p| allowed.min(p.max(1)));
        let memory_bound = allowed < self.cap;
        self.allowed = allowed;
        self.ticks += 1;
        self.running_sum += u64::from(running);
        self.running_min = self.running_min.min(running);
        self.running_max = self.running_max.max(running);
        if let Some((at, true)) = self.last {
            self.throttled_ms += inp.now_ms.saturating_sub(at);
        }
        self.last = Some((inp.now_ms, memory_bound));
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

    /// Records what the FIFO really did: `put` bytes written, `taken`
    /// bytes read back.
    pub fn settled(&mut self, put: u32, taken: u32) {
        // Forged bytes read back were never counted as given out.
        let ours = taken.saturating_sub(self.surplus);
        self.surplus = 0;
        self.issued = self.issued.saturating_add(put).saturating_sub(ours);
    }

    /// Tokens it still wants back: given out beyond `allowed − 1`, and so
    /// held by clients now. Each is kept when it comes back
    /// ([`Governor::reclaimed`]): a client such as make writes a token back
    /// and reads one again at once when a job ends, so a token withheld
    /// only at ticks is almost never withheld.
    pub fn withholding(&self) -> u32 {
        self.issued.saturating_sub(self.allowed.saturating_sub(1))
    }

    /// `n` tokens read back between ticks, as they came back.
    pub fn reclaimed(&mut self, n: u32) {
        self.issued = self.issued.saturating_sub(n);
    }

    /// Jobs running now for `in_pipe` bytes in the FIFO: slots held by
    /// clients + the implicit one.
    pub fn running(&self, in_pipe: u32) -> u32 {
        self.issued.saturating_sub(in_pipe).saturating_add(1)
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
                self.running_sum * 100 / self.ticks,
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
        })
    }
}

/// The jobserver's FIFO: a named FIFO made private (mode 0600) in a
/// directory headroom writes to. headroom reads and writes it through its
/// own non-blocking open file description, so a read-back never waits and
/// never changes the blocking mode clients see on theirs.
pub struct Pool {
    ours: OwnedFd,
    client: OwnedFd,
    client_w: OwnedFd,
    dir: OwnedFd,
    name: heapless::String<64>,
    linked: bool,
}

impl Pool {
    /// Makes the FIFO `.headroom-jobserver-<pid>-<n>` in `dir` (the first
    /// free `n`) and opens it.
    /// The client's descriptor is blocking and inherited across exec (it
    /// is the `R,W` of the pipe style).
    ///
    /// # Errors
    /// The errno of mkfifoat(2) or openat(2) (EACCES, EROFS, ENOSPC;
    /// EEXIST after 64 names taken).
    pub fn create(dir: BorrowedFd<'_>) -> Result<Pool, Errno> {
        let pid = rustix::process::getpid().as_raw_nonzero().get();
        // A name left by a headroom that was killed (in a container,
        // often pid 1 again) is passed over, not taken for ours.
        let mut name: heapless::String<64> = heapless::String::new();
        let mut made = Err(Errno::EXIST);
        for n in 0..64u32 {
            name.clear();
            ufmt::uwrite!(name, ".headroom-jobserver-{}-{}", pid, n)
                .map_err(|_| Errno::NAMETOOLONG)?;
            made = rustix::fs::mkfifoat(dir, name.as_str(), Mode::from_raw_mode(0o600));
            if made != Err(Errno::EXIST) {
                break;
            }
        }
        made?;
        let open = |flags| rustix::fs::openat(dir, name.as_str(), flags, Mode::empty());
        let opened = open(OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOFOLLOW)
            .and_then(|ours| Ok((ours, open(OFlags::RDWR | OFlags::NOFOLLOW)?)));
        let (ours, client) = match opened {
            Ok(fds) => fds,
            Err(e) => {
                let _ = rustix::fs::unlinkat(dir, name.as_str(), rustix::fs::AtFlags::empty());
                return Err(e);
            }
        };
        Ok(Pool {
            client_w: rustix::io::dup(&client)?,
            ours,
            client,
            dir: rustix::io::fcntl_dupfd_cloexec(dir, 0)?,
            name,
            linked: true,
        })
    }

    /// The FIFO's name in its directory (for `fifo:PATH`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The clients' read descriptor (the `R` of `R,W`): blocking, not
    /// close-on-exec.
    pub fn client_fd(&self) -> BorrowedFd<'_> {
        self.client.as_fd()
    }

    /// The clients' write descriptor (the `W`): a duplicate of
    /// [`Pool::client_fd`], so that a client closing both closes two.
    pub fn client_fd_w(&self) -> BorrowedFd<'_> {
        self.client_w.as_fd()
    }

    /// Bytes sitting in the FIFO.
    ///
    /// # Errors
    /// The errno of ioctl(FIONREAD).
    pub fn in_pipe(&self) -> Result<u32, Errno> {
        let n = rustix::io::ioctl_fionread(&self.ours)?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Writes `n` tokens (`+`); returns how many went in.
    pub fn put(&self, n: u32) -> u32 {
        const PLUS: [u8; 64] = [b'+'; 64];
        let mut done = 0;
        while done < n {
            let chunk = (n - done).min(64) as usize;
            match rustix::io::write(&self.ours, &PLUS[..chunk]) {
                Ok(k) if k > 0 => done += k as u32,
                Err(Errno::INTR) => {}
                _ => break,
            }
        }
        done
    }

    /// headroom's own descriptor of the FIFO (non-blocking), to poll for
    /// tokens coming back.
    pub fn own_fd(&self) -> BorrowedFd<'_> {
        self.ours.as_fd()
    }

    /// Reads back up to `n` tokens without waiting (whatever bytes they
    /// are); returns how many it got.
    pub fn take(&self, n: u32) -> u32 {
        let mut buf = [0u8; 64];
        let mut got = 0;
        while got < n {
            let chunk = (n - got).min(64) as usize;
            match rustix::io::read(&self.ours, &mut buf[..chunk]) {
                Ok(k) if k > 0 => got += k as u32,
                Err(Errno::INTR) => {}
                _ => break,
            }
        }
        got
    }

    /// Removes the FIFO's name (the pipe style needs no name once the
    /// descriptors are open; the FIFO style removes it at the end).
    pub fn unlink(&mut self) {
        if self.linked {
            let _ =
                rustix::fs::unlinkat(&self.dir, self.name.as_str(), rustix::fs::AtFlags::empty());
            self.linked = false;
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.unlink();
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
        }
    }

    /// Runs one tick as the FIFO would: whatever is decided happens.
    fn tick(g: &mut Governor, inp: Inputs) -> Decision {
        let d = g.decide(&inp);
        g.settled(d.put, d.take);
        d
    }

    #[test]
    fn a_400_mib_cgroup_and_160_mib_jobs_allow_two() {
        let mut g = Governor::new(8, 160, Source::PeakMb);
        // Start: only make's implicit job, nothing held.
        let d = tick(&mut g, inputs(380, 0, 0));
        // room = 380 − 160 − 32 = 188: one more job.
        assert_eq!((d.running, d.allowed, d.put, d.take), (1, 2, 1, 0));
        assert!(d.memory_bound);
        // make took the token: two run, growing; no third.
        let d = tick(&mut g, inputs(300, 60, 0));
        assert_eq!((d.running, d.allowed, d.put), (2, 2, 0));
        assert_eq!(d.room_mb, 300 - (320 - 60) - 32);
    }

    #[test]
    fn plenty_of_memory_gives_the_cap() {
        let mut g = Governor::new(4, 2000, Source::Guess("generic"));
        let d = tick(&mut g, inputs(64_000, 0, 0));
        assert_eq!((d.allowed, d.put), (4, 3));
        assert!(!d.memory_bound);
        // All three tokens back in the pipe: still the cap, nothing moves.
        let d = tick(&mut g, inputs(64_000, 0, 3));
        assert_eq!((d.running, d.allowed, d.put, d.take), (1, 4, 0, 0));
    }

    #[test]
    fn tokens_withheld_are_kept_as_they_come_back_between_ticks() {
        let mut g = Governor::new(4, 1000, Source::PeakMb);
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
        let mut g = Governor::new(4, 1000, Source::PeakMb);
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
        let mut g = Governor::new(2, 100, Source::PeakMb);
        let d = tick(&mut g, inputs(10_000, 0, 0));
        assert_eq!(d.put, 1);
        // Six more bytes than were given: all read back, the cap holds.
        let d = tick(&mut g, inputs(10_000, 0, 7));
        assert_eq!((d.running, d.allowed, d.put, d.take), (1, 2, 0, 6));
        let d = tick(&mut g, inputs(10_000, 0, 1));
        assert_eq!((d.running, d.put, d.take), (1, 0, 0));
    }

    #[test]
    fn the_slots_follow_the_peak_per_job_it_measures() {
        // 1 GiB, two cores, the generic guess: lowered so that two jobs
        // run before anything is measured, then the measured 350 + 10 %.
        let mut g = Governor::new(2, 2000, Source::Guess("generic"));
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
    fn one_room_formula_saturates() {
        assert_eq!(room_mb(1000, 600), 1000 - 600 - RESERVE_MB as i64);
        assert_eq!(room_mb(0, 0), -(RESERVE_MB as i64));
        assert_eq!(room_mb(i128::MAX, 0), i64::MAX);
        assert_eq!(room_mb(i128::MIN, u64::MAX), i64::MIN);
        assert_eq!(growth_mb(3, 100, 250), 50);
        assert_eq!(growth_mb(3, 100, 400), 0);
        assert_eq!(growth_mb(u32::MAX, u64::MAX, 0), u64::MAX);
    }

    #[test]
    fn unknown_memory_keeps_the_last_decision() {
        let mut g = Governor::new(8, 100, Source::PeakMb);
        let d = tick(&mut g, inputs(332, 0, 0));
        assert_eq!(d.allowed, 3);
        let mut inp = inputs(0, 0, 2);
        inp.usable_mb = None;
        let d = tick(&mut g, inp);
        assert_eq!((d.allowed, d.put, d.take), (3, 0, 0));
    }

    #[test]
    fn concurrency_and_throttling_are_counted() {
        let mut g = Governor::new(2, 100, Source::PeakMb);
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

    #[test]
    fn absurd_figures_do_not_overflow() {
        let mut g = Governor::new(u32::MAX, u64::MAX, Source::PeakMb);
        assert_eq!(g.cap, MAX_SLOTS);
        let d = tick(&mut g, inputs(u64::MAX, u64::MAX, u32::MAX));
        assert!(d.allowed >= 1 && d.allowed <= MAX_SLOTS);
        let mut g = Governor::new(3, 1, Source::PeakMb);
        let d = tick(&mut g, inputs(u64::MAX, 0, 0));
        assert_eq!(d.allowed, 3);
    }

    #[test]
    fn the_fifo_counts_takes_and_gives_tokens() {
        extern crate std;
        let d = std::env::temp_dir().join(std::format!("headroom-js-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let dir = rustix::fs::open(d.to_str().unwrap(), OFlags::RDONLY, Mode::empty()).unwrap();
        let mut p = Pool::create(dir.as_fd()).unwrap();
        assert!(d.join(p.name()).exists());
        assert_eq!(p.put(3), 3);
        assert_eq!(p.in_pipe(), Ok(3));
        // A client takes one through its own descriptor.
        let mut b = [0u8; 1];
        assert_eq!(rustix::io::read(p.client_fd(), &mut b), Ok(1));
        assert_eq!(p.in_pipe(), Ok(2));
        // Taking back more than is there does not wait.
        assert_eq!(p.take(5), 2);
        assert_eq!(p.in_pipe(), Ok(0));
        p.unlink();
        assert!(!d.join(".headroom-jobserver").exists());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&d);
    }
}
