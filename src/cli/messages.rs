//! What headroom says: the runtime failure [`Fail`] and the usage error
//! [`usage`] with their exit codes, one-line messages from errno and std
//! errors, the sampler's warnings on stderr, and text on stdout.
//!
//! Exit codes: 0 success; 1 runtime failure (one line on stderr, [`Fail`]);
//! 2 usage ([`usage`]).

use std::io::Write;
use std::process::ExitCode;

use headroom::kernel::cgroup::CgroupError;
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

/// What a command does without a container's limits, and what it takes
/// instead of them, for [`unknown_limits_line`].
pub struct Instead {
    /// What the command's figures then are (`this plan is from the
    /// host's figures`).
    pub then: &'static str,
    /// The option that replaces the memory limit (`--avail-mb N`), if any.
    pub memory: Option<&'static str>,
    /// The option that replaces the CPU limit (`--cores N`), if any.
    pub cpu: Option<&'static str>,
}

/// The one line that says a container's memory and/or CPU limit is
/// unknown (`/proc/self/cgroup` names a cgroup whose files cannot be
/// read: [`headroom::kernel::cgroup::Resolution`]), why, and how to fix
/// it: mount /sys/fs/cgroup, or the command's options of `instead`.
/// `None` when both are known (or were replaced by an option: pass
/// `None` for them).
pub fn unknown_limits_line(
    memory: Option<CgroupError>,
    cpu: Option<CgroupError>,
    instead: &Instead,
) -> Option<String> {
    let (what, why) = match (memory, cpu) {
        (None, None) => return None,
        (Some(m), None) => ("memory limit is", m.to_string()),
        (None, Some(c)) => ("CPU limit is", c.to_string()),
        (Some(m), Some(c)) if m == c => ("memory and CPU limits are", m.to_string()),
        (Some(m), Some(c)) => (
            "memory and CPU limits are",
            format!("memory: {m}; CPU: {c}"),
        ),
    };
    let options: Vec<&str> = [
        instead.memory.filter(|_| memory.is_some()),
        instead.cpu.filter(|_| cpu.is_some()),
    ]
    .into_iter()
    .flatten()
    .collect();
    let or = match options.as_slice() {
        [] => String::new(),
        o => format!(" or pass {}", o.join(" and ")),
    };
    Some(format!(
        "headroom: warning: the container's {what} unknown ({why}): {}; mount /sys/fs/cgroup (read-only is enough){or}",
        instead.then
    ))
}

/// Prints [`unknown_limits_line`] on stderr, when there is one.
pub fn warn_unknown_limits(
    memory: Option<CgroupError>,
    cpu: Option<CgroupError>,
    instead: &Instead,
) {
    if let Some(line) = unknown_limits_line(memory, cpu, instead) {
        let _ = writeln!(std::io::stderr(), "{line}");
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

#[cfg(test)]
mod tests {
    use super::*;

    const JOBS: Instead = Instead {
        then: "this plan is from the host's figures",
        memory: Some("--avail-mb N"),
        cpu: Some("--cores N"),
    };

    #[test]
    fn unknown_limits_are_one_line_with_the_fix() {
        assert_eq!(unknown_limits_line(None, None, &JOBS), None);
        let both = unknown_limits_line(
            Some(CgroupError::NotMounted),
            Some(CgroupError::NotMounted),
            &JOBS,
        )
        .unwrap();
        assert_eq!(
            both,
            "headroom: warning: the container's memory and CPU limits are unknown (proc/self/cgroup names a cgroup, but no cgroup filesystem is mounted): this plan is from the host's figures; mount /sys/fs/cgroup (read-only is enough) or pass --avail-mb N and --cores N"
        );
        assert!(!both.contains('\n'));
        // Only the figure that is unknown, and only its option.
        let cpu = unknown_limits_line(None, Some(CgroupError::Outside), &JOBS).unwrap();
        assert!(cpu.contains("the container's CPU limit is unknown (its cgroup is outside"));
        assert!(cpu.ends_with("or pass --cores N"), "{cpu}");
        let record = Instead {
            then: "its cg_mem_* columns stay empty",
            memory: None,
            cpu: None,
        };
        let mem = unknown_limits_line(Some(CgroupError::TooDeep), None, &record).unwrap();
        assert!(
            mem.ends_with("mount /sys/fs/cgroup (read-only is enough)"),
            "{mem}"
        );
        // Two reasons are both said.
        let two = unknown_limits_line(
            Some(CgroupError::NotMounted),
            Some(CgroupError::TooDeep),
            &JOBS,
        )
        .unwrap();
        assert!(two.contains("(memory: proc/self/cgroup names a cgroup, but no cgroup filesystem is mounted; CPU: the cgroup path is too long or too deep)"), "{two}");
    }
}
