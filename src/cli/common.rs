//! What every command shares: the error type and its exit codes, one-line
//! messages, the warning sink, the stop-signal flags and their self-pipe,
//! environment defaults, and opening the files commands read and write.
//!
//! Exit codes: 0 success; 1 runtime failure (one line on stderr, [`Fail`]);
//! 2 usage ([`usage`]).

use std::io::Write;
use std::os::raw::c_int;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use rustix::fd::{BorrowedFd, OwnedFd};

use headroom::govern::record::StopFlag;
use headroom::kernel::root::Root;
use headroom::tick::sampler::{Source, Warn};

/// The message of a std I/O error ("No such file or directory").
pub fn io_text(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => errtext(rustix::io::Errno::from_raw_os_error(n)),
        None => e.to_string(),
    }
}

/// The C library's message for an errno, without the "(os error N)" tail.
pub fn errtext(e: rustix::io::Errno) -> String {
    let msg = std::io::Error::from_raw_os_error(e.raw_os_error()).to_string();
    // "No such file or directory (os error 2)" -> keep the words only.
    match msg.rfind(" (os error") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

/// A runtime failure: one line on stderr, exit 1.
pub struct Fail(pub String);

impl<E: std::fmt::Display> From<E> for Fail {
    fn from(e: E) -> Fail {
        Fail(e.to_string())
    }
}

/// A usage error found after argh: one line, exit 2.
pub fn usage(msg: &str) -> Result<ExitCode, Fail> {
    let _ = writeln!(std::io::stderr(), "headroom: {}", shown(msg));
    Ok(ExitCode::from(2))
}

/// `s` for a one-line message: control characters (a newline in a run id)
/// shown as `?`. (Not `{:?}`: its Unicode escaping tables cost ~10 KB.)
pub fn shown(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// `$key` when set, non-empty and UTF-8 (not UTF-8: one warning, then as unset).
pub fn env_nonempty(key: &str) -> Option<String> {
    match std::env::var(key) {
        Ok(v) => Some(v).filter(|v| !v.is_empty()),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(v)) => {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: ${key} ('{}') is not valid UTF-8: ignored",
                shown(&v.to_string_lossy())
            );
            None
        }
    }
}

/// `--disk-path`, else $BUILDKIT_CACHE_DIR, else $HOME, else `/`; `/` when
/// the path is not a directory (as the toolchain does), said in one
/// warning on stderr.
pub fn disk_path(arg: Option<String>) -> String {
    let p = arg
        .or_else(|| env_nonempty("BUILDKIT_CACHE_DIR"))
        .or_else(|| env_nonempty("HOME"))
        .unwrap_or_else(|| "/".into());
    let why = match std::fs::metadata(&p) {
        Ok(m) if m.is_dir() => return p,
        Ok(_) => "is not a directory".to_string(),
        Err(e) => io_text(&e),
    };
    let _ = writeln!(
        std::io::stderr(),
        "headroom: warning: disk path '{}': {why}: using / instead",
        shown(&p)
    );
    "/".into()
}

/// The build-disk path for the planning commands: [`disk_path`] on the live
/// host; in a `--root` tree, `--disk-path` or the tree's `/` (this
/// machine's $HOME means nothing there).
pub fn disk_for(live: bool, arg: Option<String>) -> String {
    if live {
        disk_path(arg)
    } else {
        arg.unwrap_or_else(|| "/".into())
    }
}

/// The sampler's warnings, one line each on stderr.
pub struct StderrWarn;

impl Warn for StderrWarn {
    fn warn(&mut self, source: Source, why: &'static str) {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: {}: {why} (its field stays empty)",
            source.path()
        );
    }

    fn note(&mut self, source: Source, what: &'static str) {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: {}: {what}",
            source.path()
        );
    }

    fn log(&mut self, option: &'static str, path: &str, what: &'static str) {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: {option} {}: {what}",
            shown(path)
        );
    }
}

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

/// `HEADROOM_NO_MLOCK` is set (to anything but `0`): record and run do not
/// lock their memory (for measuring what the lock is worth).
pub fn no_mlock() -> bool {
    env_nonempty("HEADROOM_NO_MLOCK").is_some_and(|v| v != "0")
}

/// Opens `--root` (default `/`); `live` is true for the real machine.
pub fn open_root(root: &Option<String>) -> Result<(Root, bool), Fail> {
    let path = root.as_deref().unwrap_or("/");
    let r = Root::open(path).map_err(|e| Fail(format!("--root {path}: {}", errtext(e))))?;
    let live = r.is_live();
    Ok((r, live))
}

/// Opens the directory of `path` (which must exist) and returns it with
/// the file name; `what` names the path in messages (`--prom`, `-o`).
pub fn open_parent(path: &str, what: &str) -> Result<(OwnedFd, String), Fail> {
    let p = std::path::Path::new(path);
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Fail(format!("{what} {path}: not a file path")))?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_string_lossy().into_owned(),
        _ => ".".into(),
    };
    let dir = rustix::fs::open(
        parent.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| {
        Fail(format!(
            "cannot write {what} {path}: {parent}: {}",
            errtext(e)
        ))
    })?;
    Ok((dir, name))
}

/// True when `a` and `b` are the same file (device and inode).
pub fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    match (rustix::fs::fstat(a), rustix::fs::fstat(b)) {
        (Ok(x), Ok(y)) => x.st_dev == y.st_dev && x.st_ino == y.st_ino,
        _ => false,
    }
}

/// Opens `path` for reading, refusing anything but a regular file (a FIFO
/// would block, /dev/zero never ends).
pub fn open_regular(path: &str) -> Result<OwnedFd, Fail> {
    let fd = rustix::fs::open(
        path,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC | rustix::fs::OFlags::NONBLOCK,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Fail(format!("{path}: {}", errtext(e))))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| Fail(format!("{path}: {}", errtext(e))))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(Fail(format!("{path}: not a regular file")));
    }
    Ok(fd)
}

/// Feeds the whole of `fd` to `feed` in 64 KiB chunks, then an empty chunk
/// for end of file.
pub fn stream<E>(
    fd: &OwnedFd,
    path: &str,
    mut feed: impl FnMut(&[u8]) -> Result<(), E>,
    on_err: impl Fn(E) -> Fail,
) -> Result<(), Fail> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match rustix::io::read(fd, &mut buf[..]) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(Fail(format!("{path}: {}", errtext(e)))),
        };
        feed(&buf[..n]).map_err(&on_err)?;
        if n == 0 {
            return Ok(());
        }
    }
}

/// Prints `text` on stdout; a closed stdout (`| head`) is not an error.
///
/// # Errors
/// Any other failed write (a full disk under `> status.json`, `/dev/full`):
/// the output is lost, so the command must not exit 0.
pub fn print_text(text: &str) -> Result<(), Fail> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Fail(format!("cannot write to stdout: {}", io_text(&e))))
        }
        _ => Ok(()),
    }
}

/// Makes sure fds 0, 1 and 2 are open (on /dev/null if closed), so that a
/// file headroom opens can never become "stdout" and receive the summary.
pub fn guard_std_fds() {
    for fd in 0..3 {
        // SAFETY: only queried with fcntl(F_GETFD), never closed or used for I/O.
        let probe = unsafe { BorrowedFd::borrow_raw(fd) };
        if rustix::io::fcntl_getfd(probe) == Err(rustix::io::Errno::BADF) {
            // open(2) returns the lowest free descriptor: this one.
            if let Ok(null) = rustix::fs::open(
                "/dev/null",
                rustix::fs::OFlags::RDWR,
                rustix::fs::Mode::empty(),
            ) {
                std::mem::forget(null);
            }
        }
    }
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
