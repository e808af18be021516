//! The row `run --actions FILE` appends for each command it ran: one
//! O_APPEND write, header first in a new file.

use std::io::Write;

use rustix::fd::AsFd;

use headroom::followed::rusage::Usage;
use headroom::govern::recording;

use super::child::Started;
use super::messages::errtext;

/// Appends the action row for a finished run to `path` with one
/// O_APPEND write (header first when the file is new), so concurrent
/// wrapped commands never interleave.
pub fn append_action(path: &str, id_label: Option<&str>, argv: &[String], c: &Started, u: &Usage) {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut id = heapless::String::<96>::new();
    headroom::report::actions::action_id(id_label, &words, &mut id);
    let action = headroom::report::actions::Action::from_usage(id, c.start_epoch, u);
    let mut line = heapless::Vec::<u8, { headroom::report::actions::ROW_CAP }>::new();
    if headroom::report::actions::format_row(&action, &mut line).is_err() {
        return;
    }
    // O_NONBLOCK: a FIFO without a reader fails at once instead of
    // blocking; O_NOFOLLOW: a planted symlink is refused.
    // Read and write: the last byte is checked before appending.
    let flags = rustix::fs::OFlags::RDWR
        | rustix::fs::OFlags::APPEND
        | rustix::fs::OFlags::CREATE
        | rustix::fs::OFlags::NOFOLLOW
        | rustix::fs::OFlags::NONBLOCK
        | rustix::fs::OFlags::CLOEXEC;
    let mode = rustix::fs::Mode::from_raw_mode(0o644);
    // A table we may append to but not read (mode 0222, 0622 of another
    // user): write-only, without the torn-row check.
    let opened = match rustix::fs::open(path, flags, mode) {
        Err(rustix::io::Errno::ACCESS) => {
            let write_only = (flags - rustix::fs::OFlags::RDWR) | rustix::fs::OFlags::WRONLY;
            rustix::fs::open(path, write_only, mode)
        }
        other => other,
    };
    let fd = match opened {
        Ok(fd) => fd,
        Err(rustix::io::Errno::LOOP) => {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: --actions {path} is a symlink: refusing to write through it"
            );
            return;
        }
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: --actions {path}: {}",
                errtext(e)
            );
            return;
        }
    };
    let st = rustix::fs::fstat(&fd).ok();
    let regular = st.is_some_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
    });
    if !regular {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: --actions {path}: not a regular file"
        );
        return;
    }
    let size = st.map_or(0, |st| u64::try_from(st.st_size).unwrap_or(0));
    let mut bytes = Vec::with_capacity(line.len() + 64);
    if size == 0 {
        bytes.extend_from_slice(headroom::report::actions::HEADER.as_bytes());
    } else {
        // A row torn by an earlier full disk must not swallow this one.
        let mut last = [0u8; 1];
        if matches!(rustix::io::pread(&fd, &mut last, size - 1), Ok(1) if last[0] != b'\n') {
            bytes.push(b'\n');
        }
    }
    bytes.extend_from_slice(&line);
    // Reserve the space first (with slack for parallel appenders), so a
    // full disk refuses the row instead of tearing it; the file is shared,
    // so a torn row could not be cut back.
    let written = recording::reserve(fd.as_fd(), size, bytes.len() + 4096)
        .and_then(|()| rustix::io::write(&fd, &bytes));
    let problem = match written {
        Ok(n) if n == bytes.len() => return,
        Ok(_) => "short write (disk full?): the row is torn".to_string(),
        Err(e) => format!("row not written: {}", errtext(e)),
    };
    let _ = writeln!(std::io::stderr(), "headroom: --actions {path}: {problem}");
}
