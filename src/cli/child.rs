//! `run`'s CMD as a child process: started (its own process group without
//! a terminal, its OOM score adjustment, its cgroup joined before exec),
//! stop signals passed on to it, and reaped with the wait4(2) system call
//! for its rusage.

use std::cell::Cell;
use std::os::raw::c_int;
use std::sync::atomic::Ordering;

use rustix::fd::{AsRawFd, BorrowedFd};

use headroom::followed::rusage::{Counts, End, Interrupt, Usage};
use headroom::govern::recording::{self, StopFlag, Watch};
use headroom::tick::clock;

use super::messages::io_text;
use super::signals::{SIG_DFL, SIGNAL, SIGNAL_NS, signal};

/// Passes stop signals on to CMD instead of stopping: the recording ends
/// when CMD does.
///
/// With a controlling terminal CMD shares headroom's process group, as
/// under `time`: the terminal's Ctrl-C, Ctrl-\\ and Ctrl-Z reach CMD (and
/// a make or script around headroom) directly, so SIGINT is not sent again;
/// Ctrl-Z stops headroom with CMD and the shell's `fg` continues both.
/// Without one (CI, cron, systemd), CMD leads a process group of its own
/// and every signal goes to that whole group, grandchildren included.
pub struct Forward<'a> {
    /// CMD's pid; with `own_group`, also its process group.
    pub pid: rustix::process::Pid,
    /// CMD leads a process group of its own (no controlling terminal).
    pub own_group: bool,
    /// The self-pipe's read end, emptied at each look.
    pub wake: BorrowedFd<'a>,
    /// Where the first stop signal is kept.
    pub stops: &'a Stops,
}

/// The first stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) that reached
/// headroom while CMD ran, and when (CLOCK_MONOTONIC ns): passed on to
/// CMD, or sent to it by the terminal as well, it means CMD did not end
/// by itself.
#[derive(Default)]
pub struct Stops(Cell<Option<(i32, u64)>>);

impl Stops {
    /// Keeps `sig`, which came at `at_ns` ([`SIGNAL_NS`]), unless a
    /// signal is kept already.
    fn saw(&self, sig: i32, at_ns: u64) {
        if sig != 0 && self.0.get().is_none() {
            self.0.set(Some((sig, at_ns)));
        }
    }

    /// Keeps a stop signal not yet passed on (the recording may see CMD's
    /// exit before the signal that caused it), leaving it in place for
    /// [`die_like`]; one that came after the exit is no interruption
    /// ([`Stops::interrupt`]).
    fn pending(&self) {
        self.saw(
            SIGNAL.load(Ordering::SeqCst),
            SIGNAL_NS.load(Ordering::SeqCst),
        );
    }

    /// The interruption of `c`, which used `u`: the first stop signal,
    /// unless it came after CMD had ended, to the millisecond of its wall
    /// time (Ctrl-C during the summary interrupts nothing).
    pub fn interrupt(&self, c: &Started, u: &Usage) -> Option<Interrupt> {
        let (signal, at_ns) = self.0.get()?;
        let after_ms = at_ns.saturating_sub(c.start_ns) / 1_000_000;
        (after_ms <= u.wall_ms).then_some(Interrupt { signal, after_ms })
    }
}

impl StopFlag for Forward<'_> {
    fn signal(&self) -> Option<i32> {
        use rustix::process::{Signal, kill_process, kill_process_group};
        // Empty the self-pipe so the next poll(2) waits again.
        let mut sink = [0u8; 64];
        while matches!(rustix::io::read(self.wake, &mut sink), Ok(n) if n > 0) {}
        // The handler sets the time before the signal: read after it, the
        // time is this signal's (or a later one's).
        let sig = SIGNAL.swap(0, Ordering::SeqCst);
        self.stops.saw(sig, SIGNAL_NS.load(Ordering::SeqCst));
        let forward = match (sig, self.own_group) {
            (0, _) => return None,
            // From the terminal, CMD got it as we did.
            (2 | 3, false) => return None,
            (2, true) => Signal::INT,
            (3, true) => Signal::QUIT,
            (15, _) => Signal::TERM,
            _ => Signal::HUP,
        };
        let send = if self.own_group {
            kill_process_group
        } else {
            kill_process
        };
        let _ = send(self.pid, forward);
        // A stopped command (SIGTSTP, SIGTTIN) would never see it: wake it.
        let _ = send(self.pid, Signal::CONT);
        None
    }
}

/// Whether this process has a controlling terminal (job control applies).
pub fn controlling_terminal() -> bool {
    rustix::fs::open(
        "/dev/tty",
        rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::NOCTTY
            | rustix::fs::OFlags::NONBLOCK
            | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .is_ok()
}

/// After `run` has reported: when CMD died of SIGINT or SIGQUIT, headroom
/// dies of it too, so that a shell loop or make around it stops as it
/// would without headroom ("wait and cooperative exit"); the shell's `$?`
/// is the same 128 + signal either way. So it does when such a signal
/// reached headroom after CMD had ended (Ctrl-C during the summary), since
/// CMD never saw it. Returns otherwise: CMD that caught SIGINT and exited
/// normally decided for both.
pub fn die_like(end: headroom::followed::rusage::End) {
    use rustix::process::Signal;
    let sig = match (end, SIGNAL.load(Ordering::SeqCst)) {
        (headroom::followed::rusage::End::Signaled(2), _) | (_, 2) => Signal::INT,
        (headroom::followed::rusage::End::Signaled(3), _) | (_, 3) => Signal::QUIT,
        _ => return,
    };
    // SAFETY: SIG_DFL is a valid disposition for SIGINT and SIGQUIT.
    unsafe {
        signal(sig.as_raw(), SIG_DFL);
    }
    let _ = rustix::process::kill_process(rustix::process::getpid(), sig);
}

/// Whether `prog` names a file that execvp(3) finds: a word with a `/`
/// as it is, else in a directory of `$PATH` (an empty entry is the
/// current directory; musl's default list when `PATH` is unset). A
/// recording asks before it opens its files, so a mistyped command costs
/// no earlier CSV; a file found but not executable is left to [`spawn`]
/// (126).
pub fn findable(prog: &std::ffi::OsStr) -> bool {
    use std::path::{Path, PathBuf};
    if prog.is_empty() {
        return false;
    }
    if prog.as_encoded_bytes().contains(&b'/') {
        return Path::new(prog).exists();
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/bin:/usr/bin".into());
    std::env::split_paths(&path).any(|dir| {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        dir.join(prog).is_file()
    })
}

/// The message and shell exit code of a command [`findable`] did not find.
pub fn not_found(prog: &std::ffi::OsStr) -> (u8, String) {
    let prog = super::shell::quote(&prog.to_string_lossy());
    (127, format!("{prog}: command not found"))
}

/// A started child: its pid and when it started.
pub struct Started {
    pub pid: rustix::process::Pid,
    /// When it started, Unix seconds.
    pub start_epoch: u64,
    /// When it started, CLOCK_MONOTONIC ns ([`clock::monotonic_ns`]), for
    /// its wall time.
    pub start_ns: u64,
}

/// Starts `argv` — in a process group of its own when `own_group` (see
/// [`Forward`]) — with `oom_score_adj` (when known) as its OOM score
/// adjustment: the value headroom had before it lowered its own, and, with
/// `join`, in the build's cgroup (it writes `0`, itself, to that
/// `cgroup.procs` before it execs; a refused write fails the spawn).
/// A command that cannot be started is reported like a shell would: 127
/// not found, 126 otherwise.
pub fn spawn(
    argv: &[std::ffi::OsString],
    oom_score_adj: Option<i16>,
    own_group: bool,
    env: &[(&str, std::ffi::OsString)],
    join: Option<BorrowedFd<'_>>,
) -> Result<Started, (u8, String)> {
    use std::os::unix::process::CommandExt;
    let (prog_os, args) = argv.split_first().ok_or((2, "no command".to_string()))?;
    // As a shell would need it typed: control characters and an empty
    // word are never printed raw.
    let prog = super::shell::quote(&prog_os.to_string_lossy());
    let start_epoch = clock::now_epoch();
    let start_ns = clock::monotonic_ns();
    let mut cmd = std::process::Command::new(prog_os);
    cmd.args(args);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    if own_group {
        cmd.process_group(0);
    }
    let join_raw = join.map(|fd| fd.as_raw_fd());
    if oom_score_adj.is_some() || join_raw.is_some() {
        // SAFETY: the closure runs in the forked child before execve; it
        // only calls open(2), write(2) and close(2) through rustix with a
        // stack buffer: no allocation, no lock, async-signal-safe. The raw
        // descriptor is the parent's open `cgroup.procs`, which outlives
        // this call (the caller borrows it for the whole spawn) and is
        // inherited by the child until its execve closes it.
        unsafe {
            cmd.pre_exec(move || {
                // CMD must not run outside the cgroup it is counted by:
                // a refused move fails the spawn (the caller retries
                // without a cgroup).
                if let Some(fd) = join_raw {
                    rustix::io::write(BorrowedFd::borrow_raw(fd), b"0")
                        .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
                }
                if let Some(v) = oom_score_adj {
                    let _ = headroom::kernel::oom_score_adj::write_self(v);
                }
                Ok(())
            });
        }
    }
    match cmd.spawn() {
        Ok(child) => {
            let raw = i32::try_from(child.id()).unwrap_or(0);
            let pid =
                rustix::process::Pid::from_raw(raw).ok_or((126, format!("{prog}: bad pid")))?;
            // The child is reaped with wait4(2) below, for its rusage.
            drop(child);
            Ok(Started {
                pid,
                start_epoch,
                start_ns,
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not_found(prog_os)),
        Err(e) => Err((126, format!("{prog}: cannot execute: {}", io_text(&e)))),
    }
}

/// The kernel's `struct timeval` in `struct rusage` (`__kernel_old_timeval`):
/// two `long`s on every Linux ABI, also where the C library's own
/// `time_t` is 64-bit on a 32-bit target (musl 1.2, glibc with
/// `_TIME_BITS=64`).
#[repr(C)]
#[derive(Default)]
struct Timeval {
    tv_sec: std::os::raw::c_long,
    tv_usec: std::os::raw::c_long,
}

/// The kernel's `struct rusage` as the wait4 system call writes it
/// (include/uapi/linux/resource.h): two timevals and fourteen `long`s,
/// 144 bytes on 64-bit targets and 72 on 32-bit ones.
///
/// The system call is made directly, not through the C library's
/// `wait4`, because on 32-bit musl 1.2 that symbol is a time32
/// compatibility shim for old binaries (the 64-bit-time function is
/// `__wait4_time64`, with a larger struct), and the shim of musl 1.2.x
/// copies the figures only when wait4 returns 0 — which it never does for
/// a reaped child — so every field would read 0 on armv7 and armv6.
#[repr(C)]
#[derive(Default)]
struct Rusage {
    ru_utime: Timeval,
    ru_stime: Timeval,
    ru_maxrss: std::os::raw::c_long,
    ru_ixrss: std::os::raw::c_long,
    ru_idrss: std::os::raw::c_long,
    ru_isrss: std::os::raw::c_long,
    ru_minflt: std::os::raw::c_long,
    ru_majflt: std::os::raw::c_long,
    ru_nswap: std::os::raw::c_long,
    ru_inblock: std::os::raw::c_long,
    ru_oublock: std::os::raw::c_long,
    ru_msgsnd: std::os::raw::c_long,
    ru_msgrcv: std::os::raw::c_long,
    ru_nsignals: std::os::raw::c_long,
    ru_nvcsw: std::os::raw::c_long,
    ru_nivcsw: std::os::raw::c_long,
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Rusage>() == 144);
#[cfg(target_pointer_width = "32")]
const _: () = assert!(std::mem::size_of::<Rusage>() == 72);

/// The wait4 system call's number (asm/unistd.h of each architecture).
#[cfg(target_arch = "x86_64")]
const SYS_WAIT4: std::os::raw::c_long = 61;
#[cfg(any(
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
))]
const SYS_WAIT4: std::os::raw::c_long = 260;
#[cfg(any(
    target_arch = "arm",
    target_arch = "x86",
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "s390x"
))]
const SYS_WAIT4: std::os::raw::c_long = 114;

unsafe extern "C" {
    /// syscall(2) from the C library: the system call `number` with its
    /// arguments, -1 and errno on failure.
    fn syscall(number: std::os::raw::c_long, ...) -> std::os::raw::c_long;
}

/// wait4(2), the system call: waits for `pid` and fills `ru` with the
/// resources of it and its waited-for descendants; returns the pid, or
/// -1 with errno set.
fn wait4(pid: c_int, status: &mut c_int, ru: &mut Rusage) -> std::os::raw::c_long {
    let (status, ru): (*mut c_int, *mut Rusage) = (status, ru);
    // SAFETY: wait4 writes one int at `status` and one kernel
    // `struct rusage` at `ru`; both are valid and writable for the call,
    // and Rusage has the kernel's layout (its size is checked at compile
    // time for each pointer width). Options 0: block until it exits.
    unsafe {
        syscall(
            SYS_WAIT4,
            std::os::raw::c_long::from(pid),
            status,
            std::os::raw::c_long::from(0i32),
            ru,
        )
    }
}

fn tv_ms(t: &Timeval) -> u64 {
    let s = u64::try_from(t.tv_sec).unwrap_or(0);
    let us = u64::try_from(t.tv_usec).unwrap_or(0);
    s.saturating_mul(1000).saturating_add(us / 1000)
}

/// A kernel counter (`long`, never negative) as u64.
fn count(v: std::os::raw::c_long) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl Rusage {
    /// The counters `/usr/bin/time -v` shows beside the times.
    fn counts(&self) -> Counts {
        Counts {
            majflt: count(self.ru_majflt),
            minflt: count(self.ru_minflt),
            nvcsw: count(self.ru_nvcsw),
            nivcsw: count(self.ru_nivcsw),
            inblock: count(self.ru_inblock),
            oublock: count(self.ru_oublock),
        }
    }
}

/// Waits for the child to exit, forwarding stop signals meanwhile
/// through `fwd` (which keeps the first in its [`Stops`]), then
/// reaps it with wait4(2) for its status and rusage. Its wall time ends at
/// `exited_ns` (CLOCK_MONOTONIC ns) when the recording saw the exit first
/// ([`recording::Stop::WatchedExited`]: the final row and its wait for a new
/// second are headroom's, not the command's), else when this wait sees it.
pub fn finish_child(
    c: &Started,
    watch: &Watch,
    fwd: &Forward<'_>,
    exited_ns: Option<u64>,
) -> Usage {
    while !watch.exited() {
        // Wakes at once on the exit (pidfd) or a signal (the self-pipe).
        recording::wait(1000, Some(fwd.wake), watch);
        fwd.signal();
    }
    let end_ns = exited_ns.unwrap_or_else(clock::monotonic_ns);
    fwd.stops.pending();
    let mut status: c_int = 0;
    let mut ru = Rusage::default();
    loop {
        let r = wait4(c.pid.as_raw_nonzero().get(), &mut status, &mut ru);
        if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
        fwd.signal();
    }
    Usage {
        wall_ms: end_ns.saturating_sub(c.start_ns) / 1_000_000,
        user_ms: tv_ms(&ru.ru_utime),
        sys_ms: tv_ms(&ru.ru_stime),
        max_rss_kib: count(ru.ru_maxrss),
        counts: ru.counts(),
        end: End::from_wait_status(status),
    }
}

/// Characters of the RUN line's command at most; a longer one ends in `...`.
const LABEL_CHARS: usize = 100;

/// The RUN line's command: its words quoted as sh needs them
/// ([`super::shell::join`]: `sh -c 'exit 3'`), cut to [`LABEL_CHARS`].
pub fn command_label(argv: &[String]) -> heapless::String<128> {
    let mut label = heapless::String::<128>::new();
    let joined = super::shell::join(argv);
    if joined.chars().count() <= LABEL_CHARS && label.push_str(&joined).is_ok() {
        return label;
    }
    label.clear();
    for c in joined.chars().take(LABEL_CHARS - 3) {
        if label.len() + c.len_utf8() + 3 > label.capacity() || label.push(c).is_err() {
            break;
        }
    }
    let _ = label.push_str("...");
    label
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_label_quotes_and_cuts() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            command_label(&words(&["sh", "-c", "exit 3"])).as_str(),
            "sh -c 'exit 3'"
        );
        let long = command_label(&words(&["echo", &"é".repeat(200)]));
        assert!(long.ends_with("..."), "{long}");
        assert!(long.chars().count() <= LABEL_CHARS, "{long}");
    }

    /// The first stop signal is the interruption, unless it came after
    /// CMD's exit; none is none.
    #[test]
    fn the_first_stop_before_the_exit_interrupts() {
        let c = Started {
            pid: rustix::process::Pid::from_raw(1).unwrap(),
            start_epoch: 0,
            start_ns: 5_000_000_000,
        };
        let u = Usage {
            wall_ms: 3000,
            user_ms: 0,
            sys_ms: 0,
            max_rss_kib: 0,
            counts: Counts::default(),
            end: End::Signaled(2),
        };
        let stops = Stops::default();
        assert_eq!(stops.interrupt(&c, &u), None);
        stops.saw(0, 6_000_000_000);
        assert_eq!(stops.interrupt(&c, &u), None, "0 is no signal");
        stops.saw(2, 6_500_000_000);
        stops.saw(15, 7_000_000_000);
        let int = Interrupt {
            signal: 2,
            after_ms: 1500,
        };
        assert_eq!(stops.interrupt(&c, &u), Some(int));
        let late = Stops::default();
        late.saw(2, 8_001_000_000);
        assert_eq!(late.interrupt(&c, &u), None, "after the exit");
    }

    /// Each counter comes from its own field of the kernel's struct.
    #[test]
    fn counts_come_from_their_own_fields() {
        let ru = Rusage {
            ru_minflt: 5,
            ru_majflt: 6,
            ru_nswap: 7,
            ru_inblock: 8,
            ru_oublock: 9,
            ru_msgsnd: 10,
            ru_nsignals: 12,
            ru_nvcsw: 13,
            ru_nivcsw: 14,
            ..Rusage::default()
        };
        assert_eq!(ru.counts().values(), [6, 5, 13, 14, 8, 9]);
        let ms = Timeval {
            tv_sec: 2,
            tv_usec: 345_678,
        };
        assert_eq!(tv_ms(&ms), 2345);
    }
}
