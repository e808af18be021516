//! The recording loop: sample, write one row with one write(2), feed the
//! summary, wait for the next tick, a stop signal or the watched process.
//!
//! Nothing here allocates: the row is formatted into a fixed buffer and the
//! summary keeps only peak rows.
//!
//! # References
//! write(2), fallocate(2), ftruncate(2), poll(2), pidfd_open(2), kill(2),
//! clock_gettime(2).

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::govern::jobserver::driver::Driver;
use crate::govern::jobserver::notes::Tell;
use crate::report::summary::Summary;
use crate::tick::clock;
use crate::tick::row::Row;
use crate::tick::row::columns::ROW_CAP;
use crate::tick::sampler::glance::Glance;
use crate::tick::sampler::{Buffers, Sampler};

/// Why the CSV could not be opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// The path is a symlink (O_NOFOLLOW gave ELOOP): refused, target untouched.
    Symlink,
    /// Any other openat(2) failure.
    Io(Errno),
    /// The header could not be written (ENOSPC, EDQUOT, EFBIG, or another
    /// write(2) error): the empty file was removed.
    Header(Errno),
}

/// The CSV being written: every row goes out in one write(2) and is
/// complete or absent.
pub struct CsvOut {
    fd: OwnedFd,
    /// The directory and name, to create the file again if it is deleted.
    dir: OwnedFd,
    name: heapless::String<256>,
    /// The header, written first and again if the file is emptied under us.
    header: &'static str,
    failing: bool,
    /// Rows that could not be written (disk full, I/O error).
    pub lost: u64,
    /// Set when the last [`CsvOut::append`] found the file deleted and
    /// created it anew (the caller warns, then clears it).
    pub recreated: bool,
}

/// How the CSV is opened: write-only, appending, never through a symlink.
const CSV_FLAGS: OFlags = OFlags::WRONLY
    .union(OFlags::APPEND)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

impl CsvOut {
    /// Creates or truncates `name` in `dir` (O_NOFOLLOW: a symlink planted
    /// at the path is refused; O_APPEND: rows land at the end even after
    /// someone else truncated the file) and writes the header. Truncating
    /// in place frees an earlier run's space first, so a disk it filled
    /// takes the new recording. When not even the header can be written
    /// (a full disk), the empty file is removed: nothing is left that
    /// looks like a recording, as `cc` leaves no half object file.
    ///
    /// `header` is one of [`crate::tick::row::columns::header`]'s.
    ///
    /// # Errors
    /// [`OpenError::Symlink`], [`OpenError::Io`] (ENAMETOOLONG for a
    /// name over 256 bytes) or [`OpenError::Header`].
    pub fn create(
        dir: BorrowedFd<'_>,
        name: &str,
        header: &'static str,
    ) -> Result<CsvOut, OpenError> {
        let name =
            heapless::String::try_from(name).map_err(|_| OpenError::Io(Errno::NAMETOOLONG))?;
        let fd = rustix::fs::openat(
            dir,
            name.as_str(),
            CSV_FLAGS | OFlags::CREATE | OFlags::TRUNC,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| {
            if e == Errno::LOOP {
                OpenError::Symlink
            } else {
                OpenError::Io(e)
            }
        })?;
        let dir = rustix::io::fcntl_dupfd_cloexec(dir, 0).map_err(OpenError::Io)?;
        let mut out = CsvOut {
            fd,
            dir,
            name,
            header,
            failing: false,
            lost: 0,
            recreated: false,
        };
        if let Err(e) = out.append_whole(header.as_bytes(), 0) {
            out.remove_if_ours();
            return Err(OpenError::Header(e));
        }
        Ok(out)
    }

    /// Unlinks the name when it is still this file (same device and
    /// inode: never another file put there since).
    fn remove_if_ours(&self) {
        let (Ok(ours), Ok(there)) = (
            rustix::fs::fstat(&self.fd),
            rustix::fs::statat(
                &self.dir,
                self.name.as_str(),
                rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
            ),
        ) else {
            return;
        };
        if (ours.st_dev, ours.st_ino) == (there.st_dev, there.st_ino) {
            let _ =
                rustix::fs::unlinkat(&self.dir, self.name.as_str(), rustix::fs::AtFlags::empty());
        }
    }

    /// Appends one row. When the file was emptied by someone else since
    /// the last row (`: > file`, logrotate's copytruncate), the header goes
    /// first, so the file stays a CSV `summarize` reads. When the file was
    /// deleted (no link left: `rm` of the CSV mid-run), rows would go
    /// nowhere: it is created again at its name (never through a symlink
    /// planted there since), with the header, and [`CsvOut::recreated`] is
    /// set.
    ///
    /// # Errors
    /// The errno of fstat(2) or openat(2), or as [`CsvOut::append_whole`].
    pub fn append(&mut self, row: &[u8]) -> Result<(), Errno> {
        let st = rustix::fs::fstat(&self.fd)?;
        let mut end = u64::try_from(st.st_size).unwrap_or(0);
        if st.st_nlink == 0 {
            self.fd = rustix::fs::openat(
                &self.dir,
                self.name.as_str(),
                CSV_FLAGS | OFlags::CREATE | OFlags::EXCL,
                Mode::from_raw_mode(0o644),
            )?;
            self.recreated = true;
            end = 0;
        }
        if end == 0 {
            self.append_whole(self.header.as_bytes(), 0)?;
            end = self.header.len() as u64;
        }
        self.append_whole(row, end)
    }

    /// Appends `bytes` at `end` (the file's size: O_APPEND puts them there)
    /// whole or not at all when the disk is full: the space is reserved
    /// first ([`reserve`]), so a full disk fails before anything is
    /// written. On a filesystem without fallocate, a short write is cut
    /// back with ftruncate(2). One cut no writer can prevent: write(2)
    /// copies a row that crosses a page of the file one page at a time and
    /// stops between pages for a pending SIGKILL, leaving the row's first
    /// part at a page boundary; readers skip a last row cut short and
    /// count it.
    ///
    /// # Errors
    /// ENOSPC, EDQUOT or EFBIG (the file-size limit) when the space cannot
    /// be reserved or the write was short; the errno of write(2) otherwise.
    fn append_whole(&mut self, bytes: &[u8], end: u64) -> Result<(), Errno> {
        reserve(self.fd.as_fd(), end, bytes.len())?;
        let r = loop {
            match rustix::io::write(&self.fd, bytes) {
                Err(Errno::INTR) => continue,
                other => break other,
            }
        };
        match r {
            Ok(n) if n == bytes.len() => Ok(()),
            Ok(n) => {
                // Writing the rest tells why (ENOSPC, EDQUOT, EFBIG).
                let why = match rustix::io::write(&self.fd, &bytes[n..]) {
                    Err(e) => e,
                    Ok(_) => Errno::NOSPC,
                };
                let _ = rustix::fs::ftruncate(&self.fd, end);
                Err(why)
            }
            Err(e) => Err(e),
        }
    }
}

/// Reserves `len` bytes of `fd` from `offset` with fallocate(2)
/// (KEEP_SIZE: the file does not grow until they are written), so that a
/// write into them cannot fail for lack of space.
///
/// # Errors
/// Only "no room": ENOSPC (the disk), EDQUOT (a quota), EFBIG (the
/// file-size limit, `ulimit -f`). A filesystem that cannot reserve
/// (EOPNOTSUPP and the like) is `Ok`: the write then goes ahead unreserved.
pub fn reserve(fd: BorrowedFd<'_>, offset: u64, len: usize) -> Result<(), Errno> {
    let len = u64::try_from(len).unwrap_or(u64::MAX);
    match rustix::fs::fallocate(fd, rustix::fs::FallocateFlags::KEEP_SIZE, offset, len) {
        Err(e @ (Errno::NOSPC | Errno::DQUOT | Errno::FBIG)) => Err(e),
        _ => Ok(()),
    }
}

/// What ended a recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `--count N` rows were taken.
    Count,
    /// The watched process exited: `at_ns` is when the loop first saw it
    /// (CLOCK_MONOTONIC ns, [`clock::monotonic_ns`]), before the final row
    /// and any wait for its second — a command's wall time ends there.
    WatchedExited {
        /// When the exit was first seen, CLOCK_MONOTONIC ns.
        at_ns: u64,
    },
    /// SIGINT, SIGTERM or SIGHUP (the number).
    Signal(i32),
}

/// How the loop learns that it must stop.
pub trait StopFlag {
    /// The signal received so far, if any.
    fn signal(&self) -> Option<i32>;
}

/// Watching `--watch-pid`: a pidfd when the kernel has pidfd_open (5.3+),
/// else kill(pid, 0) where EPERM still means alive.
pub enum Watch {
    /// Nothing to watch.
    None,
    /// A pidfd: readable once the process has exited.
    PidFd(OwnedFd),
    /// Polled with kill(pid, 0).
    Kill(rustix::process::Pid),
    /// Our own child on a kernel without pidfd: polled with
    /// waitid(WNOHANG | WNOWAIT), which sees the exit without reaping, so
    /// the caller's wait4(2) still gets the status and rusage. (kill(pid, 0)
    /// would keep succeeding on the unreaped zombie.)
    Child(rustix::process::Pid),
}

impl Watch {
    /// Starts watching our own child `pid` (for `run`): a pidfd, else
    /// [`Watch::Child`].
    pub fn child(pid: i32) -> Option<Watch> {
        let p = rustix::process::Pid::from_raw(pid)?;
        match rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()) {
            Ok(fd) => Some(Watch::PidFd(fd)),
            Err(_) => Some(Watch::Child(p)),
        }
    }

    /// Starts watching `pid`; a process already gone gives `None`.
    pub fn pid(pid: i32) -> Option<Watch> {
        let p = rustix::process::Pid::from_raw(pid)?;
        match rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()) {
            Ok(fd) => Some(Watch::PidFd(fd)),
            Err(Errno::SRCH) => None,
            Err(_) => Some(Watch::Kill(p)),
        }
    }

    /// True once the watched process has exited (checked without blocking).
    pub fn exited(&self) -> bool {
        match self {
            Watch::None => false,
            Watch::PidFd(fd) => {
                let mut fds = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
                let zero = rustix::time::Timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                matches!(rustix::event::poll(&mut fds, Some(&zero)), Ok(n) if n > 0)
            }
            Watch::Kill(p) => {
                matches!(rustix::process::test_kill_process(*p), Err(Errno::SRCH))
            }
            Watch::Child(p) => {
                use rustix::process::{WaitId, WaitIdOptions, waitid};
                let opts = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG;
                matches!(
                    waitid(WaitId::Pid(*p), opts),
                    Ok(Some(_)) | Err(Errno::CHILD)
                )
            }
        }
    }
}

/// What a recording's owner does after each row and between rows
/// (`--prom` and the status line, in the binary): a hook after each row,
/// and the status line's clock between rows. Any `FnMut(&Row, WriteState,
/// &Summary)` is one that wants no seconds.
pub trait Hooks {
    /// Called after each row with the row, how its write went and the
    /// summary so far.
    fn row_done(&mut self, row: &Row, state: WriteState, summary: &Summary);
    /// True when [`Hooks::second`] is wanted: the loop then also wakes at
    /// each whole second after a row until the next row.
    fn wants_seconds(&self) -> bool {
        false
    }
    /// Called after each wait between rows when [`Hooks::wants_seconds`],
    /// with the whole seconds since the last row was taken (the status
    /// line's clock ticks on it without a sample).
    fn second(&mut self, since_row_s: u64) {
        let _ = since_row_s;
    }
}

impl<F: FnMut(&Row, WriteState, &Summary)> Hooks for F {
    fn row_done(&mut self, row: &Row, state: WriteState, summary: &Summary) {
        self(row, state, summary);
    }
}

/// `run`'s time between rows without `--interval`, in milliseconds, for a
/// row due `elapsed_ms` after the first: 1 s for the first 2 minutes, 5 s
/// until 30 minutes, then 15 s (the toolchain's interval).
///
/// A 20 s build gets 20 rows instead of 2; a 10-minute one 216 rows,
/// enough to tell its compile steps apart at 5 s, a 2-hour one 816, about
/// the 480 the toolchain's 15 s would give plus its first half hour at
/// a finer grain. Each step's start is a multiple of the intervals on
/// both sides of it (120 of 1 and 5, 1800 of 5 and 15), so the rows stay
/// on one grid of whole seconds from the first row.
///
/// ```
/// use headroom::govern::recording::widening_interval_ms;
/// assert_eq!(widening_interval_ms(0), 1000);
/// assert_eq!(widening_interval_ms(120_000), 5000);
/// assert_eq!(widening_interval_ms(1_800_000), 15_000);
/// ```
pub fn widening_interval_ms(elapsed_ms: u64) -> u64 {
    match elapsed_ms {
        0..120_000 => 1000,
        120_000..1_800_000 => 5000,
        _ => 15_000,
    }
}

/// The time between rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interval {
    /// Always this many milliseconds (`--interval`; 0: as fast as possible).
    Fixed(u64),
    /// [`widening_interval_ms`] of the time since the first row (`run`
    /// without `--interval`).
    Widening,
}

impl Interval {
    /// The interval, in nanoseconds, after a row due `elapsed_ns` after
    /// the first.
    pub fn after_ns(self, elapsed_ns: u64) -> u64 {
        let ms = match self {
            Interval::Fixed(ms) => ms,
            Interval::Widening => widening_interval_ms(elapsed_ns / 1_000_000),
        };
        ms.saturating_mul(1_000_000)
    }

    /// True when every interval is at least `ms` milliseconds.
    pub fn at_least_ms(self, ms: u64) -> bool {
        match self {
            Interval::Fixed(i) => i >= ms,
            Interval::Widening => widening_interval_ms(0) >= ms,
        }
    }
}

/// The loop's settings: when rows are taken, how many, which columns.
/// (The governor's pace between rows is its own, `Governor::pace_ms`.)
#[derive(Clone, Copy, Debug)]
pub struct LoopSettings {
    /// Time between rows.
    pub interval: Interval,
    /// Stop after this many rows.
    pub count: Option<u64>,
    /// Write only the 14 compatible columns.
    pub compat: bool,
}

/// Waits up to `ms` milliseconds for the stop fd or the watched process's
/// pidfd to become readable (a signal, or the exit): whichever comes first.
pub fn wait(ms: u64, stop_fd: Option<BorrowedFd<'_>>, watch: &Watch) {
    let _ = wait_also(ms, stop_fd, watch, None);
}

/// [`wait`], also ending when `also` becomes readable. Returns true when
/// the time ran out with none of them readable (poll(2) returned 0).
pub fn wait_also(
    ms: u64,
    stop_fd: Option<BorrowedFd<'_>>,
    watch: &Watch,
    also: Option<BorrowedFd<'_>>,
) -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    // Without a pidfd, wake at least once a second to re-check kill(pid, 0).
    let ms = if matches!(watch, Watch::Kill(_)) {
        ms.min(1000)
    } else {
        ms
    };
    let ts = rustix::time::Timespec {
        tv_sec: (ms / 1000) as i64,
        tv_nsec: ((ms % 1000) * 1_000_000) as i64,
    };
    let mut fds: heapless::Vec<PollFd<'_>, 3> = heapless::Vec::new();
    if let Some(s) = stop_fd {
        let _ = fds.push(PollFd::from_borrowed_fd(s, PollFlags::IN));
    }
    if let Some(a) = also {
        let _ = fds.push(PollFd::from_borrowed_fd(a, PollFlags::IN));
    }
    if let Watch::PidFd(p) = watch {
        let _ = fds.push(PollFd::from_borrowed_fd(p.as_fd(), PollFlags::IN));
    }
    // EINTR (a signal arrived) simply ends the wait; the flag says why.
    matches!(poll(&mut fds, Some(&ts)), Ok(0))
}

/// Intervals from which two rows never share an epoch (SPEC.md: a
/// dashboard keys rows on it). Below this (`--interval 0.5`) rows share
/// epochs by nature.
pub const DISTINCT_EPOCHS_FROM_MS: u64 = 1000;

/// Longest wait for the wall clock to leave the previous row's second:
/// within the same second it is at most 1000 ms; more means the clock was
/// stepped back, and the row is taken at once on the new clock rather than
/// held for as long as the step.
const MAX_SECOND_WAIT_MS: u64 = 2000;

/// Waits until CLOCK_REALTIME has left second `prev` (the previous row's
/// epoch), so that the next row's epoch is a later one, never bumped:
/// its `epoch` and `iso` stay the time it was sampled. `last` says the
/// watched process has exited (then its pidfd, readable for good, is not
/// polled); it is set when the process exits meanwhile. Returns the stop
/// signal when one arrives first.
///
/// # References
/// clock_gettime(2), poll(2).
fn wait_past_second(
    prev: u64,
    stop_fd: Option<BorrowedFd<'_>>,
    watch: &Watch,
    stop: &impl StopFlag,
    exited: &mut Option<u64>,
) -> Option<i32> {
    loop {
        let ms = clock::ms_until_second(prev.saturating_add(1), clock::now_realtime());
        if ms == 0 || ms > MAX_SECOND_WAIT_MS {
            return None;
        }
        wait(
            ms,
            stop_fd,
            if exited.is_some() {
                &Watch::None
            } else {
                watch
            },
        );
        if let Some(sig) = stop.signal() {
            return Some(sig);
        }
        if exited.is_none() && watch.exited() {
            *exited = Some(clock::monotonic_ns());
        }
    }
}

/// A recording loop's parts and settings, filled once and handed to
/// [`run`] whole.
pub struct Loop<'l, 's, S, W, H> {
    /// Reads each row and each glance.
    pub sampler: &'l mut Sampler<'s>,
    /// The sampler's buffers.
    pub bufs: &'l mut Buffers,
    /// Where the rows go.
    pub csv: &'l mut CsvOut,
    /// Fed with each row.
    pub summary: &'l mut Summary,
    /// Interval, count, columns.
    pub settings: LoopSettings,
    /// The process whose exit ends the recording.
    pub watch: &'l Watch,
    /// The stop signal received so far.
    pub stop: &'l S,
    /// Readable when a stop signal arrives (it ends a wait at once).
    pub stop_fd: Option<BorrowedFd<'l>>,
    /// The warning sink: the sampler's warnings and the governor's notes.
    pub warn: &'l mut W,
    /// `run --jobserver`: the governor, ticked at each row and, between
    /// rows, at each of its pace's glances: a [`Sampler::glance`] every
    /// `Governor::pace_ms` after the row's slot, skipping the slots a
    /// stall missed; a slot at or after the next row's is that row's (so
    /// an interval of at most its pace gives no glances).
    pub governor: Option<Driver<'l>>,
    /// The owner's hooks after each row and between rows.
    pub hooks: &'l mut H,
}

/// Runs the loop until `--count`, the watched process or a signal stops it.
/// When the watched process exits, one final row is taken (the state after
/// the build's last step) before the loop ends: at once, or, at intervals
/// of [`DISTINCT_EPOCHS_FROM_MS`] or more, only when the wall clock has
/// left the previous row's second (else the previous row, under a second
/// old, is the last: the caller is not kept waiting for a new second), or
/// when an OOM kill came after that row ([`Sampler::oom_since_tick`]: it
/// must be in a row, so the final row waits for the next second).
///
/// At those intervals no two rows share an epoch: a tick that would fall
/// in the previous row's second (after a late one) waits for the next
/// second; the epoch is never made up. Only a wall
/// clock stepped back by more than a second can repeat one.
///
/// Each tick: [`Loop::row`]. A row that cannot be written is counted in
/// `summary.lost` and in `csv.lost`; the loop warns once and keeps
/// sampling, writing again when space returns.
///
/// With a governor, the governor keeps its own pace
/// (`Governor::pace_ms`, `driver::TICK_MS`) between rows: a [`Sampler::glance`] for its tick at each of its
/// slots after a row's until the next row (see [`Loop::until_row`]); rows
/// keep their grid.
pub fn run<S: StopFlag, W: Tell, H: Hooks>(mut l: Loop<'_, '_, S, W, H>) -> Stop {
    let mut line: heapless::Vec<u8, ROW_CAP> = heapless::Vec::new();
    let start_ns = clock::monotonic_ns();
    let mut rows: u64 = 0;
    // The grid slot of the tick just taken, in ns after the start (0: the
    // first, at start).
    let mut slot: u64 = 0;
    let interval = l.settings.interval;
    // When the watched process was seen to exit: one last row shows the
    // state after the build's final step, then the loop ends.
    let mut exited_at: Option<u64> = None;
    let distinct = interval.at_least_ms(DISTINCT_EPOCHS_FROM_MS);
    let mut prev_epoch: Option<u64> = None;
    loop {
        // The final row would share the previous row's second: that row,
        // under a second old, is the state after the build's last step.
        // Waiting for the next second would keep CMD's caller waiting up
        // to a second after CMD has exited (a 2 s make took 3 s). Unless
        // the kernel OOM-killed since that row: a kill in the build's last
        // second (its last step, killed) must be in a row.
        if distinct
            && let (Some(at_ns), Some(prev)) = (exited_at, prev_epoch)
            && clock::now_epoch() <= prev
            && !l.sampler.oom_since_tick(l.bufs)
        {
            return Stop::WatchedExited { at_ns };
        }
        if distinct
            && let Some(prev) = prev_epoch
            && let Some(sig) = wait_past_second(prev, l.stop_fd, l.watch, l.stop, &mut exited_at)
        {
            return Stop::Signal(sig);
        }
        let epoch = clock::now_epoch();
        prev_epoch = Some(epoch);
        l.row(epoch, &mut line);
        let row_ns = clock::monotonic_ns();
        rows += 1;

        if let Some(sig) = l.stop.signal() {
            return Stop::Signal(sig);
        }
        if l.settings.count.is_some_and(|c| rows >= c) {
            return Stop::Count;
        }
        if let Some(at_ns) = exited_at {
            return Stop::WatchedExited { at_ns };
        }
        if l.watch.exited() {
            exited_at = Some(clock::monotonic_ns());
            continue;
        }
        // Next tick on a fixed grid from the start, so a slow tick does not
        // drift the series; after a stall (SIGSTOP, a host thrashing in
        // swap) the missed slots are skipped, as sar does, not made up in
        // a burst of rows with the same time stamp.
        let row_slot = slot;
        slot = next_slot(
            slot,
            clock::monotonic_ns().saturating_sub(start_ns),
            interval,
        );
        let due = start_ns.saturating_add(slot);
        let glances = l.governor.as_ref().map(|d| {
            (
                start_ns.saturating_add(row_slot),
                d.gov.pace_ms.saturating_mul(1_000_000),
            )
        });
        match l.until_row(row_ns, due, glances) {
            Waited::Due => {}
            Waited::Exited(at_ns) => exited_at = Some(at_ns),
            Waited::Signal(sig) => return Stop::Signal(sig),
        }
        // A stall during the wait (stopped, starved) made this tick late:
        // it stands for the latest slot begun, so the next is in the future.
        slot = slot.max(slot_begun(
            clock::monotonic_ns().saturating_sub(start_ns),
            interval,
        ));
    }
}

/// How a wait between rows ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waited {
    /// The next row is due.
    Due,
    /// The watched process exited, seen at this CLOCK_MONOTONIC ns.
    Exited(u64),
    /// A stop signal arrived.
    Signal(i32),
}

/// The monotonic clock in milliseconds, as the governor counts time.
fn now_ms() -> u64 {
    clock::monotonic_ns() / 1_000_000
}

impl<S: StopFlag, W: Tell, H: Hooks> Loop<'_, '_, S, W, H> {
    /// One row at `epoch`: sampled; the governor's tick on it, which
    /// fills the jobserver's columns; formatted into `line`, one write(2),
    /// the summary fed, then the hooks told how its write went.
    fn row(&mut self, epoch: u64, line: &mut heapless::Vec<u8, ROW_CAP>) {
        let mut row = self.sampler.tick(epoch, self.bufs, self.warn);
        if let Some(d) = self.governor.as_mut() {
            let mut g = Glance::of_row(&row);
            g.top_reclaim = self.sampler.top_reclaim(self.bufs);
            d.tick(g, now_ms(), self.warn);
            d.fill_row(&mut row);
        }
        let state = if row.format(self.settings.compat, line).is_err() {
            WriteState::Lost(Errno::NOBUFS)
        } else {
            append_row(self.csv, self.summary, line)
        };
        self.summary.mem_estimated |= self.sampler.mem_estimated;
        self.summary.observe(&row);
        self.hooks.row_done(&row, state, self.summary);
    }

    /// Waits for the row due at `due` (CLOCK_MONOTONIC ns; the last row
    /// was taken by `row_ns`). Meanwhile: tokens kept as they come back
    /// (the governor's [`Driver::reclaim`]), the status line's seconds
    /// ([`Hooks::second`]), and, with `glances` (the last row's slot and
    /// the governor's step, ns), a glance for the governor's tick at each
    /// of its slots ([`next_glance`]).
    fn until_row(&mut self, row_ns: u64, due: u64, glances: Option<(u64, u64)>) -> Waited {
        let glance_after = |now| glances.and_then(|(at, step)| next_glance(at, step, now, due));
        let mut glance = glance_after(row_ns);
        loop {
            let now = clock::monotonic_ns();
            if now >= due {
                return Waited::Due;
            }
            if let Some(g) = glance
                && now >= g
            {
                // Nothing to watch (`Driver::idle`): no glance this slot.
                if let Some(d) = self.governor.as_mut()
                    && !d.idle(now_ms())
                {
                    let seen = self.sampler.glance(self.bufs, self.warn);
                    d.tick(seen, now_ms(), self.warn);
                }
                glance = glance_after(clock::monotonic_ns());
                continue;
            }
            let mut until = glance.map_or(due, |g| g.min(due));
            if self.hooks.wants_seconds() {
                until = until.min(next_second(row_ns, now));
            }
            let fifo = self.governor.as_ref().and_then(Driver::watch_fd);
            let ran_out = wait_also(
                (until - now).div_ceil(1_000_000),
                self.stop_fd,
                self.watch,
                fifo,
            );
            // Ran out with nothing readable: no stop signal came (its pipe
            // was polled) and a process watched by pidfd has not exited,
            // so neither is asked again (two system calls a wake, four
            // times a second under the governor). A signal that lands
            // just after is seen by the next poll, at once.
            let quiet = ran_out
                && self.stop_fd.is_some()
                && matches!(self.watch, Watch::PidFd(_) | Watch::None);
            if let Some(d) = self.governor.as_mut() {
                d.reclaim();
            }
            if self.hooks.wants_seconds() {
                self.hooks
                    .second(clock::monotonic_ns().saturating_sub(row_ns) / NS_PER_S);
            }
            if quiet {
                continue;
            }
            if let Some(sig) = self.stop.signal() {
                return Waited::Signal(sig);
            }
            if self.watch.exited() {
                return Waited::Exited(clock::monotonic_ns());
            }
        }
    }
}

/// The governor's next slot after `now` on the grid of `step` ns from a
/// row's slot `at` (all CLOCK_MONOTONIC ns): the first `at + k × step`,
/// k ≥ 1, later than `now`, so the slots a stall missed are skipped, not
/// made up; `None` when it is not before `due` (the next row's, which
/// stands for it) or `step` is 0.
fn next_glance(at: u64, step: u64, now: u64, due: u64) -> Option<u64> {
    let k = now.saturating_sub(at).checked_div(step)?.saturating_add(1);
    let slot = at.saturating_add(k.saturating_mul(step));
    (slot < due).then_some(slot)
}

/// Appends one formatted row to the CSV with one write(2) and says how it
/// went: a lost row is counted in `summary.lost` and `csv.lost`, and only
/// the first of a run of lost rows is [`WriteState::Lost`] (warned once).
fn append_row(csv: &mut CsvOut, summary: &mut Summary, line: &[u8]) -> WriteState {
    match csv.append(line) {
        Ok(()) if csv.recreated => {
            csv.recreated = false;
            csv.failing = false;
            WriteState::Recreated
        }
        Ok(()) if csv.failing => {
            csv.failing = false;
            WriteState::Resumed
        }
        Ok(()) => WriteState::Written,
        Err(e) => {
            csv.lost += 1;
            summary.lost += 1;
            let first = !csv.failing;
            csv.failing = true;
            if first {
                WriteState::Lost(e)
            } else {
                WriteState::StillLost
            }
        }
    }
}

/// Nanoseconds in a second.
const NS_PER_S: u64 = 1_000_000_000;

/// The first whole second after `row_ns` that is later than `now` (both
/// CLOCK_MONOTONIC nanoseconds; `now` not before `row_ns`).
fn next_second(row_ns: u64, now: u64) -> u64 {
    let seconds = now.saturating_sub(row_ns) / NS_PER_S + 1;
    row_ns.saturating_add(seconds.saturating_mul(NS_PER_S))
}

/// The latest grid slot (ns after the start) that has begun `elapsed_ns`
/// after the start (0 for `--interval 0`). With [`Interval::Widening`] the
/// grid's step is the interval there: each step's start is on the grids
/// on both sides of it.
fn slot_begun(elapsed_ns: u64, interval: Interval) -> u64 {
    let step = interval.after_ns(elapsed_ns);
    elapsed_ns
        .checked_div(step)
        .unwrap_or(0)
        .saturating_mul(step)
}

/// The grid slot (ns after the start) after `slot`, now that `elapsed_ns`
/// have passed since the start: the next slot, or, when that one has
/// already passed, the latest slot that has begun (taken at once; the ones
/// before it are skipped).
fn next_slot(slot: u64, elapsed_ns: u64, interval: Interval) -> u64 {
    slot.saturating_add(interval.after_ns(slot))
        .max(slot_begun(elapsed_ns, interval))
}

/// What happened to the row just sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteState {
    /// Written whole.
    Written,
    /// Written whole after earlier rows were lost.
    Resumed,
    /// Written whole into a new file: the CSV had been deleted.
    Recreated,
    /// Not written: the first failure of a run of failures (warn once).
    Lost(Errno),
    /// Not written, failures continuing.
    StillLost,
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::{
        Interval, Summary, next_glance, next_second, next_slot, slot_begun, widening_interval_ms,
    };

    #[test]
    fn seconds_after_a_row() {
        const S: u64 = 1_000_000_000;
        assert_eq!(next_second(7, 7), 7 + S);
        assert_eq!(next_second(7, 7 + S - 1), 7 + S);
        assert_eq!(next_second(7, 7 + S), 7 + 2 * S);
        assert_eq!(next_second(7, 7 + 4 * S + 3), 7 + 5 * S);
    }

    #[test]
    fn slots_follow_the_grid_and_skip_what_a_stall_missed() {
        const S: u64 = 1_000_000_000;
        let i = Interval::Fixed(1000);
        // On time: the next slot.
        assert_eq!(next_slot(0, S / 10, i), S);
        assert_eq!(next_slot(4 * S, 4 * S + 3, i), 5 * S);
        // A slow tick that ran into the next slot: that slot, at once.
        assert_eq!(next_slot(4 * S, 5 * S + 1, i), 5 * S);
        // Stopped for 3.5 slots after slot 4: slot 8 (begun), 5–7 skipped.
        assert_eq!(next_slot(4 * S, 8 * S + S / 2, i), 8 * S);
        // --interval 0: every tick is due at the start.
        assert_eq!(next_slot(0, 123, Interval::Fixed(0)), 0);
        // Stopped while waiting for slot 5, resumed in slot 8: the late
        // tick is slot 8's, and the next is 9 (in the future), not 8 again.
        let late = (5 * S).max(slot_begun(8 * S + S / 3, i));
        assert_eq!(late, 8 * S);
        assert_eq!(next_slot(late, 8 * S + S / 3 + 1000, i), 9 * S);
    }

    /// Issue 16: the governor's slots between two rows, every 250 ms
    /// after the row's slot, none at or after the next row's, the ones a
    /// stall missed skipped.
    #[test]
    fn the_governor_glances_between_rows_on_its_own_grid() {
        const MS: u64 = 1_000_000;
        let at = 7_000 * MS;
        let step = 250 * MS;
        let due = at + 1_000 * MS;
        // After a row taken 3 ms into its slot: 250, 500, 750, then the row.
        let mut slots = std::vec::Vec::new();
        let mut now = at + 3 * MS;
        while let Some(g) = next_glance(at, step, now, due) {
            slots.push((g - at) / MS);
            now = g + 2 * MS;
        }
        assert_eq!(slots, [250, 500, 750]);
        // A row that took 300 ms: the first glance is the 500 ms slot's.
        assert_eq!(
            next_glance(at, step, at + 300 * MS, due),
            Some(at + 500 * MS)
        );
        // Stopped from 260 ms to 720 ms: one glance then (the 500 ms slot
        // is skipped), the next at 750.
        assert_eq!(
            next_glance(at, step, at + 720 * MS, due),
            Some(at + 750 * MS)
        );
        // Past the last slot before the row: none; the row stands for it.
        assert_eq!(next_glance(at, step, at + 750 * MS, due), None);
        // Rows every 250 ms (or less): every tick is a row.
        assert_eq!(next_glance(at, step, at, at + step), None);
        assert_eq!(next_glance(at, step, at, at + 100 * MS), None);
        // --interval 0.7: 250 and 500, then the row at 700.
        assert_eq!(next_glance(at, step, at + 500 * MS, at + 700 * MS), None);
        assert_eq!(next_glance(at, 0, at, due), None);
    }

    struct Never;
    impl super::StopFlag for Never {
        fn signal(&self) -> Option<i32> {
            None
        }
    }

    struct Quiet;
    impl crate::tick::sampler::Warn for Quiet {
        fn warn(&mut self, _: crate::tick::sampler::Source, _: &'static str) {}
        fn note(&mut self, _: crate::tick::sampler::Source, _: &'static str) {}
    }
    impl crate::govern::jobserver::notes::Tell for Quiet {
        fn tell(&mut self, _: &crate::govern::jobserver::notes::Note<'_>) {}
    }

    /// A root under the temp dir, `headroom-NAME-<pid>`: MemAvailable 3
    /// GiB of 8, /proc/vmstat's `oom_kill` 5. Its path, and it opened.
    fn test_root(name: &str) -> (std::path::PathBuf, crate::kernel::root::Root) {
        let d = std::env::temp_dir().join(std::format!("headroom-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("proc")).unwrap();
        let meminfo = "MemTotal: 8388608 kB\nMemAvailable: 3145728 kB\n";
        std::fs::write(d.join("proc/meminfo"), meminfo).unwrap();
        std::fs::write(d.join("proc/vmstat"), "pgmajfault 1\noom_kill 5\n").unwrap();
        let root = crate::kernel::root::Root::open(d.to_str().unwrap()).unwrap();
        (d, root)
    }

    /// Runs the loop for `count` rows at `interval` ms with a governor (at
    /// most 4 jobs of 100 MiB) at a pace of `pace_ms` over a root whose
    /// MemAvailable is 3 GiB; the governor's ticks between the rows (its
    /// glances), and the jobs it allows at the end.
    fn paces(tag: &str, interval: u64, pace_ms: u64, count: u64) -> (u64, u32) {
        paces_with(tag, interval, pace_ms, count, true)
    }

    /// [`paces`]; `take`: a client takes a token after the first row (a
    /// job of the build runs), else none does (the governor is idle).
    fn paces_with(tag: &str, interval: u64, pace_ms: u64, count: u64, take: bool) -> (u64, u32) {
        use crate::followed::compilers::CompilerList;
        use crate::govern::jobserver::driver::{Driver, Governor};
        use crate::govern::jobserver::handout::{CapFrom, Handout};
        use crate::govern::jobserver::token_fifo::TokenFifo;
        use crate::report::jobserver_block::Source;
        use crate::tick::sampler::{Buffers, Options, Sampler};
        use rustix::fd::AsFd;
        let (d, root) = test_root(&std::format!("record-{tag}"));
        let list = CompilerList::default_list();
        let opts = Options::for_tests(&list);
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let mut sampler = Sampler::new(&root, opts, &mut bufs);
        let out = crate::kernel::root::open_dir_at(root.fd(), ".").unwrap();
        let mut csv =
            super::CsvOut::create(out.as_fd(), "r.csv", crate::tick::row::columns::HEADER_JOBS)
                .unwrap();
        let mut summary = std::boxed::Box::new(crate::report::summary::Summary::new(None, None));
        let settings = super::LoopSettings {
            interval: Interval::Fixed(interval),
            count: Some(count),
            compat: false,
        };
        let fifo = TokenFifo::create(out.as_fd()).unwrap();
        let mut gov = Governor::new(
            Handout::new(4, CapFrom::Cores, 100, Source::PeakMb),
            fifo,
            false,
        );
        gov.pace_ms = pace_ms;
        let client = rustix::io::dup(gov.fifo.client_fd()).unwrap();
        let mut rows = 0u64;
        let mut hooks = |row: &crate::tick::row::Row, _: super::WriteState, _: &Summary| {
            assert!(row.jobs.is_some(), "the governor filled the row");
            if take && rows == 0 {
                // The first row's tick put tokens in: a job takes one.
                assert_eq!(rustix::io::read(&client, &mut [0u8; 1]), Ok(1));
            }
            rows += 1;
        };
        let stop = super::run(super::Loop {
            sampler: &mut sampler,
            bufs: &mut bufs,
            csv: &mut csv,
            summary: &mut summary,
            settings,
            watch: &super::Watch::None,
            stop: &Never,
            stop_fd: None,
            warn: &mut Quiet,
            governor: Some(Driver {
                gov: &mut gov,
                pool: None,
                pausing: None,
            }),
            hooks: &mut hooks,
        });
        assert_eq!(stop, super::Stop::Count);
        assert_eq!(rows, count);
        let csv = std::fs::read_to_string(d.join("r.csv")).unwrap();
        assert_eq!(csv.lines().count() as u64, count + 1, "a row each, no more");
        let _ = std::fs::remove_dir_all(&d);
        (gov.handout.ticks() - count, gov.handout.allowed())
    }

    /// Issue 41: CMD exits in the first row's second. With an OOM kill
    /// since that row (`oom_kill` in the root's proc/vmstat rose), a final
    /// row is taken in the next second and shows it; with none, the row
    /// under a second old is the last. The rows' count, and the last
    /// row's `oom_kills`.
    fn rows_after_an_exit(tag: &str, kill: bool) -> (usize, std::string::String) {
        use crate::followed::compilers::CompilerList;
        use crate::tick::sampler::{Buffers, Options, Sampler};
        use rustix::fd::AsFd;
        let (d, root) = test_root(&std::format!("final-{tag}"));
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let mut sampler = Sampler::new(&root, Options::for_tests(&list), &mut bufs);
        let out = crate::kernel::root::open_dir_at(root.fd(), ".").unwrap();
        let mut csv =
            super::CsvOut::create(out.as_fd(), "r.csv", crate::tick::row::columns::HEADER_FULL)
                .unwrap();
        let mut summary = std::boxed::Box::new(crate::report::summary::Summary::new(None, None));
        let settings = super::LoopSettings {
            interval: Interval::Fixed(1000),
            count: None,
            compat: false,
        };
        // Early in a second: the child's exit, 50 ms on, falls in it.
        let in_second = || {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            now.map(|t| t.subsec_millis()).unwrap_or(0)
        };
        while in_second() > 100 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let mut child = std::process::Command::new("sleep")
            .arg("0.05")
            .spawn()
            .unwrap();
        let watch = super::Watch::child(child.id() as i32).unwrap();
        let vmstat = d.join("proc/vmstat");
        let mut hooks = |_: &crate::tick::row::Row, _: super::WriteState, _: &Summary| {
            if kill {
                // In place: the sampler keeps the file open.
                std::fs::write(&vmstat, "pgmajfault 1\noom_kill 6\n").unwrap();
            }
        };
        let stop = super::run(super::Loop {
            sampler: &mut sampler,
            bufs: &mut bufs,
            csv: &mut csv,
            summary: &mut summary,
            settings,
            watch: &watch,
            stop: &Never,
            stop_fd: None,
            warn: &mut Quiet,
            governor: None,
            hooks: &mut hooks,
        });
        let _ = child.wait();
        assert!(
            matches!(stop, super::Stop::WatchedExited { .. }),
            "{stop:?}"
        );
        let csv = std::fs::read_to_string(d.join("r.csv")).unwrap();
        let _ = std::fs::remove_dir_all(&d);
        let mut lines = csv.lines();
        let head: std::vec::Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = head.iter().position(|c| *c == "oom_kills").unwrap();
        let rows: std::vec::Vec<&str> = lines.collect();
        let last = rows.last().unwrap().split(',').nth(at).unwrap_or("");
        (rows.len(), last.into())
    }

    #[test]
    fn an_oom_kill_after_the_last_row_gets_a_final_row() {
        assert_eq!(rows_after_an_exit("kill", true), (2, "1".into()));
        // No kill: the last row shows none (one row, unless the machine
        // stalled past the second, when a final row is due anyway).
        assert_eq!(rows_after_an_exit("none", false).1, "0");
    }

    /// Issue 16: rows at the interval, glances for the governor between
    /// them at its own pace, never more than its slots between two rows.
    #[test]
    fn the_loop_keeps_two_paces() {
        // Five slots between two rows (100 … 500 ms after the row's).
        let (glances, allowed) = paces("one", 600, 100, 2);
        assert!((1..=5).contains(&glances), "{glances}");
        // It read the root's meminfo: 3 GiB hold the cap.
        assert_eq!(allowed, 4);
        let (glances, _) = paces("two", 600, 100, 3);
        assert!((1..=10).contains(&glances), "{glances}");
        // Rows at the governor's pace, or faster: rows only.
        assert_eq!(paces("rows", 300, 300, 3).0, 0);
        assert_eq!(paces("fast", 100, 250, 3).0, 0);
    }

    /// Issue 28: while only CMD's own job runs (no token taken), the
    /// slots between rows under `IDLE_TICK_MS` after a tick are no
    /// glances; past it, they are.
    #[test]
    fn an_idle_governor_glances_only_when_its_last_tick_is_old() {
        use crate::govern::jobserver::driver::IDLE_TICK_MS;
        // Rows 600 ms apart, slots every 100 ms: all within the idle pace.
        assert_eq!(paces_with("idle", 600, 100, 3, false).0, 0);
        // Rows further apart than it: the slots past it glance.
        let (glances, _) = paces_with("idle-long", IDLE_TICK_MS + 400, 200, 2, false);
        assert!((1..=2).contains(&glances), "{glances}");
    }

    /// Issue 15: a 17 s build at 15 s gave 3 rows. `run` without
    /// `--interval` widens from 1 s to 5 s to 15 s, on one grid.
    #[test]
    fn the_widening_interval_steps_on_whole_seconds() {
        const S: u64 = 1_000_000_000;
        assert_eq!(widening_interval_ms(0), 1000);
        assert_eq!(widening_interval_ms(119_999), 1000);
        assert_eq!(widening_interval_ms(120_000), 5000);
        assert_eq!(widening_interval_ms(1_799_999), 5000);
        assert_eq!(widening_interval_ms(1_800_000), 15_000);
        assert_eq!(widening_interval_ms(u64::MAX), 15_000);
        let w = Interval::Widening;
        // The rows of the first 40 minutes, on time.
        let mut slots = std::vec![0u64];
        while *slots.last().unwrap() < 2400 * S {
            let last = *slots.last().unwrap();
            slots.push(next_slot(last, last + S / 100, w));
        }
        let secs: std::vec::Vec<u64> = slots.iter().map(|s| s / S).collect();
        assert_eq!(&secs[..3], [0, 1, 2]);
        assert_eq!(&secs[119..123], [119, 120, 125, 130]);
        let at = secs.iter().position(|&s| s == 1800).unwrap();
        assert_eq!(&secs[at - 1..at + 3], [1795, 1800, 1815, 1830]);
        assert!(slots.iter().all(|s| s % S == 0));
        // 120 rows of 1 s, 336 of 5 s, then 15 s.
        assert_eq!(at, 120 + 336);
        // A stall across a step lands on the grid there.
        assert_eq!(next_slot(100 * S, 133 * S + 7, w), 130 * S);
        assert_eq!(next_slot(1790 * S, 1822 * S, w), 1815 * S);
        assert!(w.at_least_ms(1000) && !Interval::Fixed(250).at_least_ms(1000));
    }
}
