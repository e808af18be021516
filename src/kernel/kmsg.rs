//! `/dev/kmsg`: the kernel's log, read from the moment it is opened, for
//! one kind of record only: the OOM killer's `Killed process PID (comm)`,
//! which names each process it kills.
//!
//! /proc/vmstat `oom_kill` counts the kills (Linux 4.13) but names no
//! victim; the kernel logs every kill it counts, right after counting it,
//! in `__oom_kill_process()` (`mm/oom_kill.c`):
//!
//! ```text
//! Out of memory: Killed process 15784 (python3) total-vm:11964kB, …        (5.1 and later)
//! Memory cgroup out of memory: Killed process 26802 (python3) total-vm:…   (a memory cgroup's limit)
//! Killed process 27438 (R) total-vm:38349780kB, anon-rss:1041924kB, …      (4.13 to 5.0)
//! ```
//!
//! The selection message of kernels before 5.1 (`Kill process N (x) score
//! S or sacrifice child`), the one-line summary of 4.19 and later
//! (`oom-kill:…,task=x,pid=N,…`) and the OOM reaper's `reaped process`
//! name the same victim again and are not counted.
//!
//! Each read(2) of `/dev/kmsg` returns one record, `prio,seq,usec,flags;`
//! then the message (non-printable bytes escaped as `\xNN`) and a newline,
//! then dictionary lines that start with a space; `prio` is the syslog
//! facility × 8 + level, and the kernel's own messages have facility 0
//! (user space may write records too, at facility 1 by default: they are
//! not the kernel's and are never taken for a kill). Opened with
//! O_NONBLOCK, a read with nothing new fails with EAGAIN; EPIPE says
//! records were overwritten before they were read (the next read goes
//! on from the oldest left); a buffer smaller than the record fails with
//! EINVAL and does not move on, hence [`BUF_LEN`].
//!
//! Opening it needs root or CAP_SYSLOG where `kernel.dmesg_restrict` is 1
//! (Debian and Ubuntu kernels), and the PIDs it names are those of the
//! initial PID namespace: a headroom in a PID namespace of its own (most
//! containers) cannot match them with its /proc ([`open`] refuses).
//!
//! # References
//! `Documentation/ABI/testing/dev-kmsg`; `mm/oom_kill.c`
//! (`__oom_kill_process`, `dump_oom_summary`); `kernel/printk/printk.c`
//! (`devkmsg_read`, `CONSOLE_EXT_LOG_MAX`); `include/linux/proc_ns.h`
//! (`PROC_PID_INIT_INO`).

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, SeekFrom};
use rustix::io::Errno;

use crate::kernel::parse::parse_u64;
use crate::kernel::root::Root;

/// Path of the device, relative to the root.
pub const PATH: &str = "dev/kmsg";

/// Size of the buffer a record is read into, bytes: the kernel formats a
/// record into at most `CONSOLE_EXT_LOG_MAX` (8192) bytes, and a read
/// into less fails with EINVAL without moving on.
pub const BUF_LEN: usize = 8192;

/// Most records one [`Kmsg::drain`] reads; the rest wait for the next
/// (a kernel that logs without pause cannot hold a tick).
pub const DRAIN_MAX: usize = 256;

/// The inode number of the initial PID namespace's `/proc/PID/ns/pid`
/// (`PROC_PID_INIT_INO`, fixed since Linux 3.8): the namespace whose PIDs
/// `/dev/kmsg` prints.
pub const INIT_PID_NS_INO: u64 = 0xEFFF_FFFC;

/// One record of `/dev/kmsg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Syslog facility × 8 + level; below 8 for the kernel's own messages.
    pub prio: u64,
    /// The record's sequence number.
    pub seq: u64,
    /// The message, without the header, the newline and the dictionary.
    pub message: &'a [u8],
}

impl Record<'_> {
    /// Whether the kernel wrote it (facility 0), not user space.
    pub fn is_kernel(&self) -> bool {
        self.prio < 8
    }
}

/// Parses one record as a read(2) of `/dev/kmsg` returns it:
/// `prio,seq,usec,flags[,…];message\n[ KEY=value\n]…`. `None` when the
/// header is not of that shape.
pub fn parse_record(b: &[u8]) -> Option<Record<'_>> {
    let semi = b.iter().position(|&c| c == b';')?;
    let (head, rest) = b.split_at(semi);
    let mut fields = head.split(|&c| c == b',');
    let prio = parse_u64(fields.next()?)?;
    let seq = parse_u64(fields.next()?)?;
    // The timestamp must be there too (its value is not needed).
    parse_u64(fields.next()?)?;
    let rest = rest.get(1..)?;
    let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
    Some(Record {
        prio,
        seq,
        message: rest.get(..end)?,
    })
}

/// The PID the OOM killer's `Killed process PID (comm)` message names;
/// `None` for any other message, and for a record user space wrote.
pub fn oom_victim(record: &Record<'_>) -> Option<u32> {
    const KEY: &[u8] = b"Killed process ";
    if !record.is_kernel() {
        return None;
    }
    let m = record.message;
    let at = m.windows(KEY.len()).position(|w| w == KEY)?;
    let rest = m.get(at + KEY.len()..)?;
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    let (pid, tail) = rest.split_at(digits);
    if !tail.starts_with(b" (") {
        return None;
    }
    parse_u64(pid)
        .and_then(|p| u32::try_from(p).ok())
        .filter(|&p| p > 0)
}

/// Why `/dev/kmsg` cannot name the victims here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unusable {
    /// `--root` is a tree, not this host.
    NotLive,
    /// Opening it was refused (`kernel.dmesg_restrict` is 1 and headroom
    /// has neither root nor CAP_SYSLOG).
    NotPermitted,
    /// There is no `/dev/kmsg` (a container's /dev).
    Absent,
    /// headroom runs in a PID namespace of its own: the PIDs the log
    /// names are not those its /proc shows.
    OtherPidNamespace,
    /// A read failed in a way that does not pass (the errno).
    Failed(Errno),
}

impl Unusable {
    /// In a few words, for the summary.
    pub fn describe(self) -> &'static str {
        match self {
            Unusable::NotLive => "--root is not this host",
            Unusable::NotPermitted => {
                "not permitted (kernel.dmesg_restrict: root or CAP_SYSLOG can read it)"
            }
            Unusable::Absent => "there is none here",
            Unusable::OtherPidNamespace => {
                "headroom runs in a PID namespace of its own, and the log names the host's PIDs"
            }
            Unusable::Failed(_) => "a read of it failed",
        }
    }
}

/// `/dev/kmsg`, open and positioned after its last record.
#[derive(Debug)]
pub struct Kmsg {
    fd: OwnedFd,
}

/// Opens `/dev/kmsg` of the live `root` (O_RDONLY | O_NONBLOCK |
/// O_CLOEXEC) after its last record: what it reads from then on is
/// logged after this call.
///
/// # Errors
/// [`Unusable`]: a tree, no device, not permitted, or a PID namespace of
/// headroom's own (`proc/self/ns/pid` not the initial one).
pub fn open(root: &Root) -> Result<Kmsg, Unusable> {
    if !root.is_live() {
        return Err(Unusable::NotLive);
    }
    match rustix::fs::statat(root.fd(), "proc/self/ns/pid", AtFlags::empty()) {
        Ok(st) if st.st_ino == INIT_PID_NS_INO => {}
        _ => return Err(Unusable::OtherPidNamespace),
    }
    let fd = rustix::fs::openat(
        root.fd(),
        PATH,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::PERM | Errno::ACCESS => Unusable::NotPermitted,
        Errno::NOENT | Errno::NXIO | Errno::NODEV => Unusable::Absent,
        e => Unusable::Failed(e),
    })?;
    rustix::fs::seek(&fd, SeekFrom::End(0)).map_err(Unusable::Failed)?;
    Ok(Kmsg { fd })
}

impl Kmsg {
    /// Reads the records logged since the last call, at most
    /// [`DRAIN_MAX`], each into `buf` ([`BUF_LEN`] bytes or more) and
    /// handed to `each`; returns how many were read. Overwritten records
    /// (EPIPE) are passed over.
    ///
    /// # Errors
    /// A read that failed otherwise than with nothing new (EAGAIN): EINVAL
    /// for a `buf` too small, which the next call would meet again.
    pub fn drain(&mut self, buf: &mut [u8], mut each: impl FnMut(&[u8])) -> Result<usize, Errno> {
        let mut n = 0;
        while n < DRAIN_MAX {
            match rustix::io::read(self.fd.as_fd(), &mut *buf) {
                Ok(0) | Err(Errno::AGAIN) => break,
                Ok(len) => {
                    n += 1;
                    each(buf.get(..len).unwrap_or(buf));
                }
                Err(Errno::PIPE | Errno::INTR) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of `kernel::kmsg` (src/kernel/kmsg.rs).

    extern crate std;
    use super::*;

    const RECORDS: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/54-kmsg-oom-kill-records/records"
    ));

    /// The records of fixture 54, one a line (a dictionary line, which
    /// starts with a space, stays with its record).
    fn records() -> std::vec::Vec<&'static [u8]> {
        let mut out: std::vec::Vec<&[u8]> = std::vec::Vec::new();
        let mut start = 0;
        for (i, &c) in RECORDS.iter().enumerate() {
            let next = RECORDS.get(i + 1).copied();
            if c == b'\n' && next != Some(b' ') {
                out.push(&RECORDS[start..=i]);
                start = i + 1;
            }
        }
        out
    }

    #[test]
    fn fixture_54_kmsg_oom_kill_records() {
        let victims: std::vec::Vec<Option<u32>> = records()
            .iter()
            .map(|r| parse_record(r).and_then(|r| oom_victim(&r)))
            .collect();
        assert_eq!(
            victims,
            [
                // 6.18, this VM: the one-line summary, then the kill.
                None,
                Some(26802),
                // 5.x: a global kill with a hostile comm, the reaper.
                Some(15925),
                None,
                // 4.x: the selection, then the kill.
                None,
                Some(27438),
                // RHEL 7's 3.10 layout (comm then `, UID`).
                Some(42452),
                // User space writing the same words: not the kernel's.
                None,
                // A device record with a dictionary line.
                None,
            ]
        );
        let r = parse_record(records()[1]).unwrap();
        assert_eq!((r.prio, r.seq), (3, 425));
        assert!(
            r.message
                .starts_with(b"Memory cgroup out of memory: Killed")
        );
        assert!(r.message.ends_with(b"oom_score_adj:0"));
        let dev = parse_record(records()[8]).unwrap();
        assert!(!dev.message.contains(&b'\n'), "{dev:?}");
    }

    #[test]
    fn near_misses_are_no_victim() {
        let victim = |m: &[u8]| parse_record(m).and_then(|r| oom_victim(&r));
        assert_eq!(
            victim(b"3,1,2,-;Killed process 7 (x) total-vm:1kB\n"),
            Some(7)
        );
        for m in [
            &b"3,1,2,-;Killed process (x)\n"[..],
            b"3,1,2,-;Killed process 7(x)\n",
            b"3,1,2,-;Killed process 0 (x)\n",
            b"3,1,2,-;Killed process 99999999999 (x)\n",
            b"3,1,2,-;Killed process -7 (x)\n",
            b"3,1,2,-;Kill process 7 (x) score 9 or sacrifice child\n",
            b"3,1,2,-;oom_reaper: reaped process 7 (x), now anon-rss:0kB\n",
            b"14,1,2,-;Killed process 7 (x)\n",
            b"3,1;Killed process 7 (x)\n",
            b"x,1,2,-;Killed process 7 (x)\n",
            b"Killed process 7 (x)\n",
            b"",
        ] {
            assert_eq!(
                victim(m),
                None,
                "{:?}",
                std::string::String::from_utf8_lossy(m)
            );
        }
        // No newline at the end, and a timestamp without flags.
        assert_eq!(victim(b"0,5,6;Killed process 12 (y)"), Some(12));
    }

    /// The live device, when this process may read it: opened after its
    /// last record, a drain with nothing new reads nothing.
    #[test]
    fn the_live_log_is_read_from_its_end() {
        let root = Root::open("/").unwrap();
        let Ok(mut k) = open(&root) else {
            return;
        };
        let mut buf = [0u8; BUF_LEN];
        // Whatever the kernel logs meanwhile, never a record from before.
        let _ = k.drain(&mut buf, |_| {});
        let tree = Root::open(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).unwrap();
        assert_eq!(open(&tree).unwrap_err(), Unusable::NotLive);
    }
}
