//! `run`'s CMD as a child process: started (its own process group without
//! a terminal, its OOM score adjustment, its cgroup joined before exec),
//! stop signals passed on to it, and reaped with wait4(2) for its rusage.

use std::os::raw::c_int;
use std::sync::atomic::Ordering;

use rustix::fd::{AsRawFd, BorrowedFd};

use headroom::build::usage::{End, Usage};
use headroom::govern::record::{self, StopFlag, Watch};

use super::common::{SIG_DFL, SIGNAL, io_text, signal};

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
    /// CMD's pid.
    pub pid: rustix::process::Pid,
    /// CMD leads a process group of its own (no controlling terminal).
    pub own_group: bool,
    /// The self-pipe's read end, emptied at each look.
    pub wake: BorrowedFd<'a>,
}

impl StopFlag for Forward<'_> {
    fn signal(&self) -> Option<i32> {
        use rustix::process::{Signal, kill_process, kill_process_group};
        // Empty the self-pipe so the next poll(2) waits again.
        let mut sink = [0u8; 64];
        while matches!(rustix::io::read(self.wake, &mut sink), Ok(n) if n > 0) {}
        let forward = match (SIGNAL.swap(0, Ordering::SeqCst), self.own_group) {
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
pub fn die_like(end: headroom::build::usage::End) {
    use rustix::process::Signal;
    let sig = match (end, SIGNAL.load(Ordering::SeqCst)) {
        (headroom::build::usage::End::Signaled(2), _) | (_, 2) => Signal::INT,
        (headroom::build::usage::End::Signaled(3), _) | (_, 3) => Signal::QUIT,
        _ => return,
    };
    // SAFETY: SIG_DFL is a valid disposition for SIGINT and SIGQUIT.
    unsafe {
        signal(sig.as_raw(), SIG_DFL);
    }
    let _ = rustix::process::kill_process(rustix::process::getpid(), sig);
}

/// A started child: its pid and when it started.
pub struct Started {
    pub pid: rustix::process::Pid,
    /// When it started, Unix seconds.
    pub start_epoch: u64,
    /// When it started, for its wall time.
    pub start: std::time::Instant,
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
    let prog = prog_os.to_string_lossy();
    let start_epoch = headroom::tick::clock::now_epoch();
    let start = std::time::Instant::now();
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
                start,
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err((127, format!("{prog}: command not found")))
        }
        Err(e) => Err((126, format!("{prog}: cannot execute: {}", io_text(&e)))),
    }
}

/// `struct timeval` of the 64-bit Linux ABIs headroom is built for.
#[repr(C)]
#[derive(Default)]
struct Timeval {
    tv_sec: std::os::raw::c_long,
    tv_usec: std::os::raw::c_long,
}

/// `struct rusage` (getrusage(2)): two timevals and fourteen longs.
#[repr(C)]
#[derive(Default)]
struct Rusage {
    ru_utime: Timeval,
    ru_stime: Timeval,
    ru_maxrss: std::os::raw::c_long,
    rest: [std::os::raw::c_long; 13],
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Rusage>() == 144);

unsafe extern "C" {
    /// wait4(2) from the C library: waits for `pid` and fills `rusage` with
    /// the resources of it and its waited-for descendants.
    fn wait4(pid: c_int, status: *mut c_int, options: c_int, rusage: *mut Rusage) -> c_int;
}

fn tv_ms(t: &Timeval) -> u64 {
    let s = u64::try_from(t.tv_sec).unwrap_or(0);
    let us = u64::try_from(t.tv_usec).unwrap_or(0);
    s.saturating_mul(1000).saturating_add(us / 1000)
}

/// Waits for the child to exit, forwarding stop signals meanwhile, then
/// reaps it with wait4(2) for its status and rusage.
pub fn finish_child(c: &Started, watch: &Watch, wake: BorrowedFd<'_>, own_group: bool) -> Usage {
    let fwd = Forward {
        pid: c.pid,
        own_group,
        wake,
    };
    while !watch.exited() {
        // Wakes at once on the exit (pidfd) or a signal (the self-pipe).
        record::wait(1000, Some(wake), watch);
        fwd.signal();
    }
    let mut status: c_int = 0;
    let mut ru = Rusage::default();
    loop {
        // SAFETY: `status` and `ru` are valid, writable and of the C types
        // wait4(2) expects (Rusage's size is checked at compile time).
        let r = unsafe { wait4(c.pid.as_raw_nonzero().get(), &mut status, 0, &mut ru) };
        if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
        fwd.signal();
    }
    Usage {
        wall_ms: u64::try_from(c.start.elapsed().as_millis()).unwrap_or(u64::MAX),
        user_ms: tv_ms(&ru.ru_utime),
        sys_ms: tv_ms(&ru.ru_stime),
        max_rss_kib: u64::try_from(ru.ru_maxrss).unwrap_or(0),
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
}
