//! Signals: the stop-signal flags and the self-pipe that wakes the loop,
//! SIGXFSZ caught, and signal(2) itself.

use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use rustix::fd::{BorrowedFd, OwnedFd};

use headroom::govern::recording::StopFlag;

use super::messages::{Fail, errtext};

/// The signal that asked us to stop (0: none yet).
pub static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// When [`SIGNAL`] was last set, CLOCK_MONOTONIC ns
/// ([`headroom::tick::clock::monotonic_ns`]): the time a stop signal
/// came, which `run` compares with CMD's exit.
pub static SIGNAL_NS: AtomicU64 = AtomicU64::new(0);

/// Write end of the self-pipe that wakes the loop's poll(2).
pub static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

/// SIGXFSZ: nothing to do, the write(2) that raised it fails with EFBIG.
pub extern "C" fn on_xfsz(_sig: c_int) {}

pub extern "C" fn on_signal(sig: c_int) {
    // clock_gettime(2) is async-signal-safe (signal-safety(7)).
    SIGNAL_NS.store(headroom::tick::clock::monotonic_ns(), Ordering::SeqCst);
    SIGNAL.store(sig, Ordering::SeqCst);
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: `fd` is the write end of the self-pipe created in
        // `install_signals`, kept open for the life of the process
        // (`std::mem::forget`); write(2) is async-signal-safe.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let _ = rustix::io::write(fd, &[0u8]);
    }
}

unsafe extern "C" {
    /// signal(2) from the C library linked into every Rust binary; the
    /// handler is a function address (SIG_DFL = 0, SIG_IGN = 1).
    pub fn signal(signum: c_int, handler: usize) -> usize;
}

/// `record`'s stop flag: the signal the handlers saw, if any.
pub struct Signals;

impl StopFlag for Signals {
    fn signal(&self) -> Option<i32> {
        match SIGNAL.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

/// signal(2)'s SIG_DFL: the default disposition.
pub const SIG_DFL: usize = 0;
/// signal(2)'s SIG_IGN: ignored.
pub const SIG_IGN: usize = 1;

/// Sets the stop-signal handlers (INT, TERM, HUP, and QUIT for `run`, whose
/// terminal sends Ctrl-\\ to the whole job) and returns the read end of the
/// self-pipe they write to.
pub fn install_signals(quit: bool) -> Result<OwnedFd, Fail> {
    let (r, w) = rustix::pipe::pipe_with(
        rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
    )
    .map_err(|e| Fail(format!("cannot create a pipe: {}", errtext(e))))?;
    WAKE_FD.store(rustix::fd::AsRawFd::as_raw_fd(&w), Ordering::SeqCst);
    std::mem::forget(w);
    let quit = quit.then_some(rustix::process::Signal::QUIT);
    for sig in [
        rustix::process::Signal::INT,
        rustix::process::Signal::TERM,
        rustix::process::Signal::HUP,
    ]
    .into_iter()
    .chain(quit)
    {
        // SAFETY: `on_signal` only touches atomics and calls write(2), both
        // async-signal-safe; it has the C ABI signal(2) expects.
        let before = unsafe { signal(sig.as_raw(), on_signal as *const () as usize) };
        // `nohup headroom record &` (SIGHUP ignored) and a background job
        // of a non-interactive shell (SIGINT ignored) keep ignoring them,
        // as the GNU coding standards ask; SIGTERM is always caught.
        if before == SIG_IGN && sig != rustix::process::Signal::TERM {
            // (SIGQUIT ignored at start stays ignored too.)
            // SAFETY: SIG_IGN is a valid disposition for any of these.
            unsafe {
                signal(sig.as_raw(), SIG_IGN);
            }
        }
    }
    Ok(r)
}

/// Past the file-size limit (ulimit -f), write(2) fails with EFBIG, as a
/// full disk does, instead of SIGXFSZ killing headroom mid-summary. A
/// handler, not SIG_IGN, so CMD of `run` starts with the default.
pub fn catch_xfsz() {
    // SAFETY: `on_xfsz` does nothing; it has the C ABI signal(2) expects.
    unsafe {
        signal(
            rustix::process::Signal::XFSZ.as_raw(),
            on_xfsz as *const () as usize,
        );
    }
}
