//! Per-process files: `/proc/PID/stat`, `/proc/PID/status`, `/proc/PID/comm`.
//!
//! `stat` is one line whose second field, the command name in parentheses,
//! may itself hold spaces and parentheses (`1591 (Plex Media Serv) S 1 …`,
//! `6666 (x) R 9 9 9 0 () S …`). The only safe split takes the name between
//! the FIRST `(` and the LAST `)` and counts the remaining fields after that
//! `)`. `status` is `Key:\tvalue` lines; kernel threads and zombies have no
//! `Vm*` lines at all.
//!
//! # References
//! proc(5) (`/proc/pid/stat`, `/proc/pid/status`, `/proc/pid/comm`), kernel
//! `fs/proc/array.c`.

use crate::kernel::parse::{
    ParseError, ParseErrorKind, colon_value, colon_values, fields, parse_u64,
};

/// `PF_KTHREAD` in the `flags` field of `stat`: the task is a kernel thread
/// (`include/linux/sched.h`).
pub const PF_KTHREAD: u32 = 0x0020_0000;

/// `PF_EXITING` in the `flags` field of `stat`: the process is exiting
/// (set by `do_exit` before it frees the memory, which for a large
/// compiler takes a moment; `include/linux/sched.h`). It is still listed
/// in `cgroup.procs` then, and cannot be moved to another cgroup.
pub const PF_EXITING: u32 = 0x0000_0004;

/// Read buffer for `stat` or `status`, in bytes.
///
/// `stat` is 52 fields, at most ~700 bytes with 20-digit numbers; `status`
/// is ~1.5 KiB on 6.x (its `Cpus_allowed`/`Mems_allowed` masks grow with the
/// CPU and node counts, a few hundred bytes on big servers). 4 KiB leaves
/// room; a larger file is reported as truncated.
pub const BUF_LEN: usize = 4096;

/// The fields of `/proc/PID/stat` that headroom uses, with the name
/// borrowed from the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PidStat<'a> {
    /// Field 1: the process id.
    pub pid: u32,
    /// Field 2 without its parentheses: the command name, at most 15 bytes
    /// on a real kernel, any bytes (spaces, parentheses) allowed.
    pub comm: &'a [u8],
    /// Field 3: the state letter (`R`, `S`, `D`, `Z`, `I`, …).
    pub state: u8,
    /// Field 4: the parent's process id.
    pub ppid: u32,
    /// Field 9: the kernel flags word (`PF_*`).
    pub flags: u32,
    /// Field 14: user-mode CPU time, in clock ticks (`sysconf(_SC_CLK_TCK)`).
    pub utime: u64,
    /// Field 15: kernel-mode CPU time, in clock ticks.
    pub stime: u64,
    /// Field 22: when the process started, clock ticks after boot: with
    /// the pid, what tells one process from a later one given the same pid.
    pub start_ticks: u64,
    /// Field 24: resident set size, in pages of the kernel's page size (not
    /// necessarily 4 KiB).
    pub rss_pages: u64,
}

impl PidStat<'_> {
    /// True for a kernel thread (`PF_KTHREAD` set in `flags`).
    pub fn is_kernel_thread(&self) -> bool {
        self.flags & PF_KTHREAD != 0
    }

    /// True for a zombie or a dead task (state `Z`, `X`, or `x` as printed
    /// by Linux 2.6.33–3.13).
    pub fn is_zombie(&self) -> bool {
        matches!(self.state, b'Z' | b'X' | b'x')
    }

    /// True while the process is exiting: `PF_EXITING` set (it is ending,
    /// not running on), or already a zombie.
    pub fn is_exiting(&self) -> bool {
        self.flags & PF_EXITING != 0 || self.is_zombie()
    }
}

/// Parses the contents of `/proc/PID/stat`.
///
/// The pid is the text before the first `(` (one trailing space allowed);
/// the comm is between that `(` and the last `)` of the input; fields 3… are
/// the white-space separated fields after the `)`. Fields after 24 are
/// ignored.
///
/// # Errors
/// [`ParseErrorKind::Malformed`] when there is no `(`…`)` pair or the state
/// is not a single byte; [`ParseErrorKind::Missing`] when fewer than 24
/// fields are present; [`ParseErrorKind::BadNumber`] for a pid, ppid, flags,
/// utime, stime, starttime or rss that is not a decimal number fitting its type.
pub fn parse_stat(b: &[u8]) -> Result<PidStat<'_>, ParseError> {
    let malformed = ParseError::at(ParseErrorKind::Malformed, 1);
    let bad = ParseError::at(ParseErrorKind::BadNumber, 1);
    let open = b.iter().position(|&c| c == b'(').ok_or(malformed)?;
    let close = b.iter().rposition(|&c| c == b')').ok_or(malformed)?;
    if close < open {
        return Err(malformed);
    }
    let head = b.get(..open).ok_or(malformed)?;
    let head = head.strip_suffix(b" ").unwrap_or(head);
    let pid = parse_u32(head).ok_or(bad)?;
    let comm = b.get(open + 1..close).ok_or(malformed)?;
    let rest = b.get(close + 1..).ok_or(malformed)?;

    // Fields 3..=24 after the `)`.
    let mut f = [&b""[..]; 22];
    let mut n = 0;
    for (slot, v) in f.iter_mut().zip(fields(rest)) {
        *slot = v;
        n += 1;
    }
    if n < f.len() {
        return Err(ParseError::missing(match n {
            0 => "state",
            1 => "ppid",
            2..=6 => "flags",
            7..=11 => "utime",
            12 => "stime",
            13..=19 => "starttime",
            _ => "rss",
        }));
    }
    let [
        state,
        ppid,
        _pgrp,
        _session,
        _tty,
        _tpgid,
        flags,
        _minflt,
        _cminflt,
        _majflt,
        _cmajflt,
        utime,
        stime,
        _cutime,
        _cstime,
        _prio,
        _nice,
        _threads,
        _itreal,
        start,
        _vsize,
        rss,
    ] = f;
    let state = match state {
        [s] => *s,
        _ => return Err(malformed),
    };
    Ok(PidStat {
        pid,
        comm,
        state,
        ppid: parse_u32(ppid).ok_or(bad)?,
        flags: parse_u32(flags).ok_or(bad)?,
        utime: parse_u64(utime).ok_or(bad)?,
        stime: parse_u64(stime).ok_or(bad)?,
        start_ticks: parse_u64(start).ok_or(bad)?,
        rss_pages: parse_u64(rss).ok_or(bad)?,
    })
}

fn parse_u32(b: &[u8]) -> Option<u32> {
    u32::try_from(parse_u64(b)?).ok()
}

/// The memory lines of `/proc/PID/status` that headroom uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// `VmRSS`: resident set size now, in KiB. `None` for kernel threads and
    /// zombies (no `Vm*` lines) or when the value is not a number.
    pub vm_rss_kib: Option<u64>,
    /// `VmHWM`: peak resident set size ("high water mark"), in KiB. `None`
    /// like [`Status::vm_rss_kib`].
    pub vm_hwm_kib: Option<u64>,
    /// The letter of `State` (`R`, `S`, `D`, `Z`, …); `None` when absent.
    pub state: Option<u8>,
}

impl Status {
    /// True for a zombie or a dead task (`State:` Z or X).
    pub fn is_zombie(&self) -> bool {
        matches!(self.state, Some(b'Z' | b'X' | b'x'))
    }
}

/// The `Name` of `/proc/PID/status` (its comm), up to the first blank:
/// what a process kept open by its status is now called (an exec changes
/// it); `None` when absent.
pub fn status_name(b: &[u8]) -> Option<&[u8]> {
    colon_value(b, b"Name")
}

/// Parses the contents of `/proc/PID/status`. Never fails: absent or
/// unparsable lines give `None`. Keys are anchored at the start of a line.
pub fn parse_status(b: &[u8]) -> Status {
    let [rss, hwm, state] = colon_values(b, [b"VmRSS", b"VmHWM", b"State"]);
    Status {
        vm_rss_kib: rss.and_then(parse_u64),
        vm_hwm_kib: hwm.and_then(parse_u64),
        state: state.and_then(|v| v.first().copied()),
    }
}

/// The command name from `/proc/PID/comm`: the contents without one
/// trailing `\n`. Other bytes (spaces, parentheses) are kept as they are.
pub fn parse_comm(b: &[u8]) -> &[u8] {
    b.strip_suffix(b"\n").unwrap_or(b)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    macro_rules! f12 {
        ($pid:literal, $file:literal) => {
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/12-pid-stat-comm-spaces-parens/proc/",
                $pid,
                "/",
                $file
            ))
        };
    }

    macro_rules! f14 {
        ($pid:literal, $file:literal) => {
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/14-kthread-zombie-vanished-pids/proc/",
                $pid,
                "/",
                $file
            ))
        };
    }

    /// One row of the CASE.md table.
    type Row = (u32, &'static [u8], u8, u32, u64, u64, u64, u64, u64);

    fn check(stat: &[u8], status: &[u8], comm: &[u8], row: Row) {
        let (pid, name, state, ppid, ut, st, rss, vmrss, vmhwm) = row;
        let s = parse_stat(stat).unwrap();
        assert_eq!(
            (
                s.pid,
                s.comm,
                s.state,
                s.ppid,
                s.utime,
                s.stime,
                s.rss_pages
            ),
            (pid, name, state, ppid, ut, st, rss),
        );
        assert!(!s.is_kernel_thread() && !s.is_zombie());
        assert_eq!(parse_comm(comm), name);
        let v = parse_status(status);
        assert_eq!((v.vm_rss_kib, v.vm_hwm_kib), (Some(vmrss), Some(vmhwm)));
    }

    #[test]
    fn fixture_12_start_ticks_is_field_22() {
        // "1591 (Plex Media Serv) S 1 … 17 0 1353 596594688 13330 …":
        // threads 17, itrealvalue 0, starttime 1353, vsize, rss.
        let s = parse_stat(f12!("1591", "stat")).unwrap();
        assert_eq!((s.start_ticks, s.rss_pages), (1353, 13330));
        let bad = b"1 (a) S 0 0 0 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 x 0 9\n";
        assert_eq!(
            parse_stat(bad),
            Err(ParseError::at(ParseErrorKind::BadNumber, 1))
        );
    }

    #[test]
    fn fixture_12_pid_stat_comm_spaces_parens() {
        macro_rules! case {
            ($pid:literal, $row:expr) => {
                check(
                    f12!($pid, "stat"),
                    f12!($pid, "status"),
                    f12!($pid, "comm"),
                    $row,
                )
            };
        }
        case!(
            "1591",
            (
                1591,
                b"Plex Media Serv",
                b'S',
                1,
                257,
                95,
                13330,
                53320,
                61200
            )
        );
        case!(
            "2021",
            (
                2021,
                b"myexec (tb) xyz",
                b'R',
                1491,
                1500,
                20,
                300,
                1200,
                1300
            )
        );
        case!(
            "7014",
            (
                7014,
                b":-) 1 2 3 4 5 6",
                b'S',
                5963,
                31,
                7,
                3000,
                12000,
                12400
            )
        );
        case!(
            "3310",
            (3310, b"executable-(nam", b'S', 3300, 3, 1, 500, 2000, 2000)
        );
        case!(
            "6666",
            (6666, b"x) R 9 9 9 0 (", b'S', 6600, 1, 0, 200, 800, 800)
        );
        case!("4243", (4243, b"sle ep", b'S', 6632, 0, 0, 187, 748, 748));
        case!(
            "4242",
            (
                4242, b"cc1plus", b'R', 4240, 1234, 56, 198000, 792000, 845000
            )
        );
    }

    #[test]
    fn fixture_14_kthread_zombie_vanished_pids() {
        for stat in [&f14!("2", "stat")[..], &f14!("17", "stat")[..]] {
            let s = parse_stat(stat).unwrap();
            assert!(s.is_kernel_thread(), "{s:?}");
            assert!(!s.is_zombie());
        }
        assert_eq!(parse_stat(f14!("17", "stat")).unwrap().state, b'I');
        assert_eq!(parse_comm(f14!("17", "comm")), b"kworker/0:1H");
        for (raw, state) in [
            (&f14!("2", "status")[..], b'S'),
            (&f14!("17", "status")[..], b'I'),
        ] {
            let st = parse_status(raw);
            assert_eq!(
                (st.vm_rss_kib, st.vm_hwm_kib, st.state),
                (None, None, Some(state))
            );
        }

        let z = parse_stat(f14!("5601", "stat")).unwrap();
        assert!(z.is_zombie() && !z.is_kernel_thread());
        assert_eq!((z.comm, z.rss_pages), (&b"cc1plus"[..], 0));
        let zs = parse_status(f14!("5601", "status"));
        assert!(zs.is_zombie() && zs.vm_rss_kib.is_none() && zs.vm_hwm_kib.is_none());
        assert_eq!(status_name(f14!("5601", "status")), Some(&b"cc1plus"[..]));

        let d = parse_stat(f14!("5605", "stat")).unwrap();
        assert_eq!((d.state, d.rss_pages), (b'D', 100_500));
        assert!(!d.is_zombie());
        assert_eq!(
            parse_status(f14!("5605", "status")),
            Status {
                vm_rss_kib: Some(402_000),
                vm_hwm_kib: Some(455_000),
                state: Some(b'D'),
            }
        );
        // 5604's status is an empty placeholder (its read fails with ESRCH).
        assert_eq!(parse_status(f14!("5604", "status")), Status::default());
    }

    #[test]
    fn hostile_names() {
        let s =
            parse_stat(b"5 (()()())))) Z 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 7\n").unwrap();
        assert_eq!((s.comm, s.state, s.rss_pages), (&b"()()())))"[..], b'Z', 7));
        let s = parse_stat(b"5 () S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 7").unwrap();
        assert_eq!(s.comm, b"");
        let s = parse_stat(b"5 (: - )) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 7").unwrap();
        assert_eq!(s.comm, b": - )");
    }

    #[test]
    fn stat_errors_not_panics() {
        assert_eq!(parse_stat(b"").unwrap_err().kind, ParseErrorKind::Malformed);
        assert_eq!(
            parse_stat(b"1 x S").unwrap_err().kind,
            ParseErrorKind::Malformed
        );
        assert_eq!(
            parse_stat(b"1 )x( S").unwrap_err().kind,
            ParseErrorKind::Malformed
        );
        assert_eq!(
            parse_stat(b"1 (x)").unwrap_err(),
            ParseError::missing("state")
        );
        assert_eq!(
            parse_stat(b"1 (x) S 1").unwrap_err(),
            ParseError::missing("flags")
        );
        assert_eq!(
            parse_stat(b"1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0").unwrap_err(),
            ParseError::missing("rss")
        );
        // Two-letter state, bad numbers, overflow of u32 pid.
        let bad = |b: &[u8]| parse_stat(b).unwrap_err().kind;
        assert_eq!(
            bad(b"1 (x) SS 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 7"),
            ParseErrorKind::Malformed
        );
        assert_eq!(
            bad(b"x (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 7"),
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            bad(b"4294967296 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 7"),
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            bad(b"1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 -7"),
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            bad(b"1 (x) S 1 1 1 0 -1 4294967296 0 0 0 0 1 2 0 0 20 0 1 0 9 0 7"),
            ParseErrorKind::BadNumber
        );
        assert!(parse_stat(b"\xff(\xfe)\xfd").is_err());
    }

    #[test]
    fn status_keys_are_anchored() {
        let b = b"xVmRSS:\t 1 kB\nVmRSSx:\t 2 kB\nVmHWM:\tlots kB\nVmRSS:\t   3 kB\n";
        assert_eq!(
            parse_status(b),
            Status {
                vm_rss_kib: Some(3),
                vm_hwm_kib: None,
                state: None,
            }
        );
        assert_eq!(parse_status(b""), Status::default());
        assert_eq!(
            parse_status(b"VmHWM:\t18446744073709551616 kB\n").vm_hwm_kib,
            None
        );
    }

    /// A real `stat` of a 1.5 GiB python3 caught while it exited after
    /// SIGKILL (state still `R`, flags 0x40040c with `PF_EXITING`, its
    /// memory already gone), then the same process a zombie.
    #[test]
    fn exiting_is_pf_exiting_or_a_zombie() {
        let exiting = b"29379 (python3) R 29317 29314 6757 0 -1 4195340 119633 0 0 0 2 111 0 0 20 0 1 0 61698 0 0 18446744073709551615 0 0 0 0 0 0 0 16781312 2 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 9\n";
        let s = parse_stat(exiting).unwrap();
        assert!(s.is_exiting() && !s.is_zombie(), "{s:?}");
        let zombie = b"29379 (python3) Z 29317 29314 6757 0 -1 4228108 119633 0 0 0 2 111 0 0 20 0 1 0 61698 0 0 18446744073709551615 0 0 0 0 0 0 0 16781312 2 1 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 9\n";
        assert!(parse_stat(zombie).unwrap().is_exiting());
        let live = parse_stat(f12!("1591", "stat")).unwrap();
        assert!(!live.is_exiting(), "{live:?}");
    }

    #[test]
    fn comm_strips_one_newline() {
        assert_eq!(parse_comm(b"cc1\n"), b"cc1");
        assert_eq!(parse_comm(b"a b\n\n"), b"a b\n");
        assert_eq!(parse_comm(b""), b"");
        assert_eq!(parse_comm(b"x"), b"x");
    }
}
