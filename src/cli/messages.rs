//! What headroom says: the runtime failure [`Fail`] and the usage error
//! [`usage`] with their exit codes, one-line messages from errno and std
//! errors, the sampler's warnings on stderr, and text on stdout.
//!
//! Exit codes: 0 success; 1 runtime failure (one line on stderr, [`Fail`]);
//! 2 usage ([`usage`]).

use std::io::Write;
use std::process::ExitCode;

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
