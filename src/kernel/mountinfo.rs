//! `/proc/PID/mountinfo`: which file system is mounted where.
//!
//! One line per mount, fields separated by single spaces:
//!
//! ```text
//! 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//! (1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)   (10)         (11)
//! ```
//!
//! (1) mount id, (2) parent id, (3) major:minor, (4) root of the mount inside
//! its file system, (5) mount point, (6) per-mount options, (7) zero or more
//! optional fields (`shared:N`, `master:N`, …) ended by (8) the lone `-`,
//! then (9) file system type, (10) source and (11) per-superblock options.
//! Space, tab, newline and backslash inside paths are written as 3-digit
//! octal escapes (`\040`, `\011`, `\012`, `\134`); [`unescape`] undoes them.
//!
//! headroom uses it to find the cgroup mounts ([`crate::kernel::cgroup`]) and to tell
//! whether `/tmp` is a tmpfs ([`fs_type_of`]).
//!
//! # References
//! proc(5) (`/proc/pid/mountinfo`), `Documentation/filesystems/proc.rst`
//! section 3.5, `fs/proc_namespace.c` (`show_mountinfo`).

use crate::kernel::parse::{ParseError, ParseErrorKind, lines};

/// Path of the calling process's mount table, relative to the root.
pub const PATH: &str = "proc/self/mountinfo";

/// Buffer size for reading [`PATH`], in bytes.
///
/// A Raspberry Pi OS or desktop host has 30–60 mounts of about 120 bytes
/// (4–8 KiB), but a Docker host lists every container's overlay (whose
/// lowerdir/upperdir options make a line 300–1,000 bytes), its `/proc`,
/// `/sys`, cgroup and shm mounts: a few hundred lines, estimated at 30–50 KiB (not measured)
/// with a few dozen containers. 64 KiB covers that; a larger table is a
/// [`crate::kernel::root::ReadError::Truncated`] error, never a silent cut.
pub const BUF_LEN: usize = 64 * 1024;

/// Longest path the kernel hands out (`PATH_MAX`, including the NUL), in
/// bytes; a bound for the stack buffers that hold an unescaped mount point.
pub const PATH_MAX: usize = 4096;

/// One line of mountinfo, as zero-copy views into the caller's buffer.
///
/// Paths are left exactly as the kernel printed them (still octal-escaped);
/// use [`unescape`] to get the real bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mount<'a> {
    /// Field 3: the file system's device number as `major:minor` (its
    /// `st_dev`: `179:2` for a partition, `0:33` for an anonymous device
    /// of btrfs, overlay, tmpfs or NFS), unparsed.
    pub dev: &'a [u8],
    /// Field 4: the directory of the file system that is the root of this
    /// mount (`/` for a whole file system; `/docker/<id>` for a cgroup v1
    /// hierarchy seen from inside a container). Escaped.
    pub root: &'a [u8],
    /// Field 5: where it is mounted, relative to the process's root
    /// directory. Escaped.
    pub mount_point: &'a [u8],
    /// Field 9: file system type (`ext4`, `tmpfs`, `cgroup`, `cgroup2`,
    /// `fuse.sshfs`, …).
    pub fs_type: &'a [u8],
    /// Field 10: mount source (`/dev/mmcblk0p2`, `tmpfs`, `none`, …); may be
    /// empty when the mount was made with an empty source string. Escaped.
    pub source: &'a [u8],
    /// Field 11: per-superblock options, comma-separated (for a cgroup v1
    /// mount these name its controllers: `rw,cpu,cpuacct`).
    pub super_options: &'a [u8],
}

/// Parses every line of a mountinfo file.
///
/// Yields one [`Mount`] per non-empty line, in file order (later mounts may
/// hide earlier ones at the same mount point). A line with fewer than six
/// fields before the ` - ` separator, no separator, or fewer than three
/// fields after it yields a [`ParseErrorKind::Malformed`] error carrying its
/// 1-based line number; iteration continues with the next line.
pub fn entries(b: &[u8]) -> impl Iterator<Item = Result<Mount<'_>, ParseError>> {
    lines(b)
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .map(|(i, line)| {
            parse_line(line).ok_or(ParseError {
                kind: ParseErrorKind::Malformed,
                line: u32::try_from(i.saturating_add(1)).unwrap_or(u32::MAX),
            })
        })
}

/// Splits one mountinfo line; `None` when it does not have the shape.
///
/// Fields are split on single spaces, not runs of white space: the kernel
/// writes exactly one space between fields, and an empty source prints as
/// an empty field (`- tmpfs  rw`) that must not shift the super options.
fn parse_line(line: &[u8]) -> Option<Mount<'_>> {
    let mut f = line.split(|&c| c == b' ');
    let _mount_id = f.next().filter(|x| !x.is_empty())?;
    let _parent_id = f.next().filter(|x| !x.is_empty())?;
    let dev = f.next().filter(|x| !x.is_empty())?;
    let root = f.next().filter(|x| !x.is_empty())?;
    let mount_point = f.next().filter(|x| !x.is_empty())?;
    let _options = f.next().filter(|x| !x.is_empty())?;
    // Optional fields, then the lone "-". Paths never contain a raw space,
    // so a field that is exactly "-" can only be the separator.
    f.find(|x| *x == b"-")?;
    let fs_type = f.next().filter(|x| !x.is_empty())?;
    let source = f.next()?;
    let super_options = f.next().filter(|x| !x.is_empty())?;
    if f.next().is_some() {
        return None;
    }
    Some(Mount {
        dev,
        root,
        mount_point,
        fs_type,
        source,
        super_options,
    })
}

/// Iterator over the bytes of an escaped mountinfo path, decoded.
///
/// `\` followed by three octal digits (value ≤ 255) is one byte; any other
/// backslash is kept as is (the kernel never writes one unescaped, but
/// garbage must not be rejected or mangled further).
#[derive(Clone)]
struct Decoded<'a> {
    raw: &'a [u8],
}

impl Iterator for Decoded<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        let (&c, rest) = self.raw.split_first()?;
        if c == b'\\'
            && let Some(v) = rest.get(..3).and_then(octal3)
        {
            self.raw = rest.get(3..).unwrap_or(&[]);
            return Some(v);
        }
        self.raw = rest;
        Some(c)
    }
}

/// The byte written as three octal digits `ooo`, if they are octal and the
/// value fits a byte.
fn octal3(d: &[u8]) -> Option<u8> {
    let mut v: u16 = 0;
    for &c in d {
        if !(b'0'..=b'7').contains(&c) {
            return None;
        }
        v = v * 8 + u16::from(c - b'0');
    }
    u8::try_from(v).ok()
}

/// Undoes the kernel's octal escapes in a mountinfo path (`\040` → space,
/// `\011` → tab, `\012` → newline, `\134` → backslash) into `out`.
///
/// Returns the decoded bytes, or `None` when `out` is too small (a buffer of
/// [`PATH_MAX`] bytes always suffices for a kernel-written path).
///
/// ```
/// use headroom::kernel::mountinfo::unescape;
/// let mut out = [0u8; 32];
/// assert_eq!(unescape(br"/mnt/my\040disk", &mut out), Some(&b"/mnt/my disk"[..]));
/// ```
pub fn unescape<'o>(raw: &[u8], out: &'o mut [u8]) -> Option<&'o [u8]> {
    let mut len = 0;
    for c in (Decoded { raw }) {
        *out.get_mut(len)? = c;
        len += 1;
    }
    out.get(..len)
}

/// If the (escaped) mount point `raw_mp` contains `path` — it is `path`
/// itself or a directory above it, compared on a `/` boundary — returns the
/// mount point's decoded length.
fn covers(raw_mp: &[u8], path: &[u8]) -> Option<usize> {
    let mut n = 0;
    let mut last = 0u8;
    for c in (Decoded { raw: raw_mp }) {
        if path.get(n) != Some(&c) {
            return None;
        }
        last = c;
        n += 1;
    }
    if n == 0 {
        return None;
    }
    match path.get(n) {
        None | Some(b'/') => Some(n),
        Some(_) if last == b'/' => Some(n),
        Some(_) => None,
    }
}

/// File system type of the mount that holds `path` (absolute, already
/// unescaped, e.g. `b"/tmp"`): the mount whose mount point is the longest
/// prefix of `path` on a `/` boundary (`/tmp` holds `/tmp/cc1.s` but not
/// `/tmpfoo`). When several mounts share that mount point, the last one in
/// the file is the visible one and wins.
///
/// `None` when no mount covers `path` (not absolute, or an empty table).
/// Malformed lines are skipped. Symbolic links in `path` are not resolved.
pub fn fs_type_of<'a>(b: &'a [u8], path: &[u8]) -> Option<&'a [u8]> {
    mount_of(b, path).map(|m| m.fs_type)
}

/// The mount that holds `path` (absolute, already unescaped): the one whose
/// (decoded) mount point is the longest prefix of `path` on a `/` boundary;
/// when several share it, the last one in the file (mounted over the
/// others). Malformed lines are skipped.
pub fn mount_of<'a>(b: &'a [u8], path: &[u8]) -> Option<Mount<'a>> {
    let mut best: Option<(usize, Mount<'a>)> = None;
    for m in entries(b).flatten() {
        if let Some(n) = covers(m.mount_point, path)
            && best.as_ref().is_none_or(|(len, _)| n >= *len)
        {
            best = Some((n, m));
        }
    }
    best.map(|(_, m)| m)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    macro_rules! fixture {
        ($p:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $p))
        };
    }

    fn all(b: &[u8]) -> Vec<Mount<'_>> {
        entries(b).map(|r| r.unwrap()).collect()
    }

    #[test]
    fn proc_rst_example_line() {
        let l = b"36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n";
        let m = all(l);
        assert_eq!(
            m,
            [Mount {
                dev: b"98:0",
                root: b"/mnt1",
                mount_point: b"/mnt2",
                fs_type: b"ext3",
                source: b"/dev/root",
                super_options: b"rw,errors=continue",
            }]
        );
    }

    #[test]
    fn zero_and_many_optional_fields() {
        let b = b"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
                  2 1 0:5 / /a rw shared:2 master:3 propagate_from:4 unbindable - tmpfs tmpfs rw\n";
        let m = all(b);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].fs_type, b"ext4");
        assert_eq!(m[1].fs_type, b"tmpfs");
        assert_eq!(m[1].mount_point, b"/a");
    }

    #[test]
    fn empty_source_keeps_super_options_in_place() {
        let m = all(b"3 1 0:9 / /x rw - tmpfs  rw,size=4k\n");
        assert_eq!(m[0].source, b"");
        assert_eq!(m[0].super_options, b"rw,size=4k");
    }

    #[test]
    fn escaped_mount_point_stays_escaped_then_unescapes() {
        let m = all(b"4 1 8:2 / /mnt/my\\040disk\\011x\\134y rw - ext4 /dev/sdb1 rw\n");
        assert_eq!(m[0].mount_point, br"/mnt/my\040disk\011x\134y");
        let mut out = [0u8; 64];
        assert_eq!(
            unescape(m[0].mount_point, &mut out),
            Some(&b"/mnt/my disk\tx\\y"[..])
        );
    }

    #[test]
    fn unescape_edges() {
        let mut out = [0u8; 16];
        // Not three octal digits: kept literally.
        assert_eq!(unescape(br"a\04", &mut out), Some(&br"a\04"[..]));
        assert_eq!(unescape(br"a\089", &mut out), Some(&br"a\089"[..]));
        // Above 255: not a byte, kept literally.
        assert_eq!(unescape(br"\777", &mut out), Some(&br"\777"[..]));
        assert_eq!(unescape(br"\", &mut out), Some(&br"\"[..]));
        assert_eq!(unescape(b"", &mut out), Some(&b""[..]));
        // Output too small.
        let mut small = [0u8; 3];
        assert_eq!(unescape(b"/abcd", &mut small), None);
        assert_eq!(unescape(br"\040\040\040", &mut small), Some(&b"   "[..]));
    }

    #[test]
    fn malformed_lines_report_their_number_and_continue() {
        let b = b"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
                  garbage\n\
                  2 1 0:5 / /a rw shared:2 tmpfs tmpfs rw\n\
                  3 1 0:5 / /b rw - tmpfs tmpfs\n\
                  4 1 0:5 / /c rw - tmpfs tmpfs rw extra\n\
                  \n\
                  5 1 0:5 / /d rw - tmpfs tmpfs rw";
        let r: Vec<_> = entries(b).collect();
        assert_eq!(r.len(), 6);
        assert!(r[0].is_ok());
        for (i, line) in [(1, 2), (2, 3), (3, 4), (4, 5)] {
            assert_eq!(
                r[i],
                Err(ParseError {
                    kind: ParseErrorKind::Malformed,
                    line
                })
            );
        }
        assert_eq!(r[5].unwrap().mount_point, b"/d");
    }

    #[test]
    fn empty_input_has_no_entries() {
        assert_eq!(entries(b"").count(), 0);
        assert_eq!(entries(b"\n").count(), 0);
        assert_eq!(fs_type_of(b"", b"/tmp"), None);
    }

    #[test]
    fn separator_is_not_taken_from_fixed_fields() {
        // A root or mount point of "-" cannot occur (paths are absolute),
        // but a "-" among the first six fields must not end them early.
        let r: Vec<_> = entries(b"1 0 - / /x rw - ext4 /dev/a rw\n").collect();
        assert_eq!(r[0].unwrap().fs_type, b"ext4");
    }

    #[test]
    fn fs_type_of_longest_prefix_on_boundary_last_wins() {
        let b = b"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
                  2 1 0:5 / /tmp rw - tmpfs tmpfs rw\n\
                  3 1 0:6 / /tmp/a\\040b rw - vfat /dev/sdb1 rw\n\
                  4 1 0:7 / /var rw - xfs /dev/sdc1 rw\n\
                  5 1 0:8 / /var rw - btrfs /dev/sdd1 rw\n";
        assert_eq!(fs_type_of(b, b"/tmp"), Some(&b"tmpfs"[..]));
        assert_eq!(fs_type_of(b, b"/tmp/"), Some(&b"tmpfs"[..]));
        assert_eq!(fs_type_of(b, b"/tmp/x/y"), Some(&b"tmpfs"[..]));
        assert_eq!(fs_type_of(b, b"/tmpfoo"), Some(&b"ext4"[..]));
        assert_eq!(fs_type_of(b, b"/tmp/a b/c"), Some(&b"vfat"[..]));
        assert_eq!(fs_type_of(b, b"/tmp/a bc"), Some(&b"tmpfs"[..]));
        assert_eq!(fs_type_of(b, b"/var/lib"), Some(&b"btrfs"[..]));
        assert_eq!(fs_type_of(b, b"/"), Some(&b"ext4"[..]));
        assert_eq!(fs_type_of(b, b"relative"), None);
        assert_eq!(fs_type_of(b, b""), None);
    }

    #[test]
    fn fixture_22_statvfs_inodes_exhausted_and_tmpfs_tmp() {
        let b = fixture!("22-statvfs-inodes-exhausted-and-tmpfs-tmp/proc/self/mountinfo");
        assert_eq!(entries(b).count(), 3);
        assert_eq!(fs_type_of(b, b"/tmp"), Some(&b"tmpfs"[..]));
        assert_eq!(fs_type_of(b, b"/tmp/ccBHN50X.s"), Some(&b"tmpfs"[..]));
        assert_eq!(fs_type_of(b, b"/home/builder/src"), Some(&b"ext4"[..]));
        assert_eq!(fs_type_of(b, b"/"), Some(&b"ext4"[..]));
        assert_eq!(
            fs_type_of(b, b"/boot/firmware/config.txt"),
            Some(&b"vfat"[..])
        );
        let tmp = all(b)[2];
        assert_eq!(tmp.super_options, b"rw,nr_inodes=485674,inode64");
    }

    #[test]
    fn fixture_04_cgroupv1_unlimited_sentinels() {
        let b = fixture!("04-cgroupv1-unlimited-sentinels/proc/self/mountinfo");
        let m = all(b);
        assert_eq!(m.len(), 7);
        let mem = m
            .iter()
            .find(|m| m.mount_point == b"/sys/fs/cgroup/memory")
            .unwrap();
        assert_eq!(mem.fs_type, b"cgroup");
        assert_eq!(
            mem.root,
            b"/docker/7c2f9e4b1a0d5e6f8a9b0c1d2e3f40516273849506a7b8c9d0e1f2a3b4c5d6e7"
        );
        assert_eq!(mem.super_options, b"rw,memory");
        assert_eq!(m[0].fs_type, b"overlay");
        assert_eq!(fs_type_of(b, b"/sys/fs/cgroup"), Some(&b"tmpfs"[..]));
        assert_eq!(
            fs_type_of(b, b"/sys/fs/cgroup/cpu,cpuacct"),
            Some(&b"cgroup"[..])
        );
        assert_eq!(fs_type_of(b, b"/tmp"), Some(&b"overlay"[..]));
    }

    #[test]
    fn fixture_06_cgroupv2_container_cpu_max_unlimited() {
        let b = fixture!("06-cgroupv2-container-cpu-max-unlimited/proc/self/mountinfo");
        let m = all(b);
        assert_eq!(m.len(), 3);
        assert_eq!(m[2].fs_type, b"cgroup2");
        assert_eq!(m[2].root, b"/");
        assert_eq!(m[2].super_options, b"ro,nsdelegate,memory_recursiveprot");
    }

    #[test]
    fn fixture_07_a_ubuntu2004_hybrid() {
        let b =
            fixture!("07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid/proc/self/mountinfo");
        let m = all(b);
        assert_eq!(m.len(), 6);
        assert_eq!(fs_type_of(b, b"/sys/fs/cgroup"), Some(&b"tmpfs"[..]));
        assert_eq!(
            fs_type_of(b, b"/sys/fs/cgroup/unified"),
            Some(&b"cgroup2"[..])
        );
        assert_eq!(
            fs_type_of(b, b"/sys/fs/cgroup/memory/user.slice"),
            Some(&b"cgroup"[..])
        );
    }

    #[test]
    fn fixture_07_b_v2_plus_one_v1_controller() {
        let b = fixture!(
            "07-cgroup-hybrid-memory-on-v1-line/b-v2-plus-one-v1-controller/proc/self/mountinfo"
        );
        assert_eq!(
            fs_type_of(b, b"/sys/fs/cgroup/net_cls"),
            Some(&b"cgroup"[..])
        );
        assert_eq!(
            fs_type_of(b, b"/sys/fs/cgroup/memory.max"),
            Some(&b"cgroup2"[..])
        );
    }

    #[test]
    fn fixture_08_rpi_memory_cgroup_disabled() {
        let b = fixture!("08-rpi-memory-cgroup-disabled/proc/self/mountinfo");
        let m = all(b);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].source, b"/dev/mmcblk0p2");
        assert_eq!(
            fs_type_of(b, b"/sys/fs/cgroup/user.slice"),
            Some(&b"cgroup2"[..])
        );
    }
}
