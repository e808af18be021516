//! `/proc/self/maps`: the mappings of headroom's own address space.
//!
//! One line per mapping (VMA), in address order:
//!
//! ```text
//! 00400000-00486000 r-xp 00001000 fe:00 5341618    /usr/bin/headroom
//! 004b4000-004b5000 rw-p 00000000 00:00 0
//! 7ffdd32a4000-7ffdd32d7000 rw-p 00000000 00:00 0  [stack]
//! ```
//!
//! start-end (hexadecimal, end exclusive), permissions (`r`, `w`, `x` or
//! `-`, then `p` private or `s` shared), the file offset (hexadecimal), the
//! device (`major:minor`, hexadecimal), the inode (decimal, 0 for anonymous
//! memory) and, after white space, an optional name: a path (which may hold
//! spaces and end in ` (deleted)`) or a pseudo-name in brackets (`[heap]`,
//! `[stack]`, `[vdso]`, `[vvar]`, `[vsyscall]`, `[anon:NAME]`).
//!
//! headroom reads it about itself, on the host (not under `--root`), to
//! commit its own pages before the first tick ([`crate::tick::footprint`]); the
//! sum of the sizes is the kernel's `total_vm` (`VmSize`), which
//! mlockall(2) compares with RLIMIT_MEMLOCK.
//!
//! # References
//! proc(5) `/proc/pid/maps`; `fs/proc/task_mmu.c` (`show_map_vma`).

use crate::kernel::parse::{ParseError, ParseErrorKind, parse_hex_u64, parse_u64};

/// The file, on the host (it is about this process, not a `--root` tree).
pub const PATH: &str = "/proc/self/maps";

/// Buffer for [`PATH`]: headroom maps ~15 regions of ≤ 120 bytes a line
/// (the executable's path is the longest part; 1.7 KiB seen on x86_64
/// 6.x); [`crate::tick::sampler::FILE_LEN`] (16 KiB) leaves room for a path of
/// 4 KiB on every line.
pub const BUF_LEN: usize = 16 * 1024;

/// What a mapping holds, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A file (inode ≠ 0): the executable's text, data and read-only data.
    File,
    /// Anonymous memory without a name: `.bss`, allocator arenas.
    Anon,
    /// `[heap]`: the brk(2) area.
    Heap,
    /// `[stack]`: the main thread's stack.
    Stack,
    /// A kernel-provided mapping (`[vdso]`, `[vvar]`, `[vvar_vclock]`,
    /// `[vsyscall]`, `[uprobes]`…), which has no pages of ours to fault in.
    Special,
}

/// One line of [`PATH`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// First address, inclusive.
    pub start: u64,
    /// Last address, exclusive (`end - start` is a whole number of pages).
    pub end: u64,
    /// `r`: readable.
    pub read: bool,
    /// `w`: writable.
    pub write: bool,
    /// `x`: executable.
    pub exec: bool,
    /// `s`: shared (`p`: private, copy-on-write).
    pub shared: bool,
    /// What it holds.
    pub kind: Kind,
}

impl Mapping {
    /// Its size in bytes.
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// True for an empty range (never printed by the kernel).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Parses one line (without its newline); returns the mapping and its name
/// (empty when there is none).
///
/// # Errors
/// `Malformed` when a field is missing or the permissions are not four
/// characters; `BadNumber` for an address, offset or inode that does not
/// parse, or an end below the start. The error's line is 1.
pub fn parse_line(line: &[u8]) -> Result<(Mapping, &[u8]), ParseError> {
    let bad = |k| ParseError::at(k, 1);
    let mut rest = line;
    let mut field = || {
        let s = rest.iter().position(|&c| c != b' ').unwrap_or(rest.len());
        let t = rest.get(s..).unwrap_or_default();
        let e = t.iter().position(|&c| c == b' ').unwrap_or(t.len());
        let (f, r) = t.split_at(e);
        rest = r;
        f
    };
    let range = field();
    let perms = field();
    let offset = field();
    let dev = field();
    let inode = field();
    if inode.is_empty() {
        return Err(bad(ParseErrorKind::Malformed));
    }
    let name = {
        let s = rest.iter().position(|&c| c != b' ').unwrap_or(rest.len());
        rest.get(s..).unwrap_or_default()
    };
    let (start, end) = range
        .iter()
        .position(|&c| c == b'-')
        .map(|i| range.split_at(i))
        .and_then(|(a, b)| Some((parse_hex_u64(a)?, parse_hex_u64(b.get(1..)?)?)))
        .filter(|(a, b)| a <= b)
        .ok_or(bad(ParseErrorKind::BadNumber))?;
    let &[r, w, x, p] = perms else {
        return Err(bad(ParseErrorKind::Malformed));
    };
    let flag = |c: u8, on: u8| match c {
        b'-' => Ok(false),
        c if c == on => Ok(true),
        _ => Err(bad(ParseErrorKind::Malformed)),
    };
    let shared = match p {
        b'p' => false,
        b's' => true,
        _ => return Err(bad(ParseErrorKind::Malformed)),
    };
    if parse_hex_u64(offset).is_none() || !dev.contains(&b':') {
        return Err(bad(ParseErrorKind::BadNumber));
    }
    let inode = parse_u64(inode).ok_or(bad(ParseErrorKind::BadNumber))?;
    let kind = match name {
        b"[stack]" => Kind::Stack,
        b"[heap]" => Kind::Heap,
        _ if inode != 0 => Kind::File,
        [] => Kind::Anon,
        // Named anonymous memory (prctl PR_SET_VMA_ANON_NAME, 5.17+).
        n if n.starts_with(b"[anon:") => Kind::Anon,
        n if n.starts_with(b"[") => Kind::Special,
        // A path with inode 0 (a deleted memfd shows one): not ours to fault.
        _ => Kind::Special,
    };
    Ok((
        Mapping {
            start,
            end,
            read: flag(r, b'r')?,
            write: flag(w, b'w')?,
            exec: flag(x, b'x')?,
            shared,
            kind,
        },
        name,
    ))
}

/// The mappings of a whole [`PATH`] text, one per non-empty line, each
/// with its name; a line that does not parse gives its error with its
/// 1-based line number.
pub fn parse(b: &[u8]) -> impl Iterator<Item = Result<(Mapping, &[u8]), ParseError>> {
    b.split(|&c| c == b'\n')
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            parse_line(l).map_err(|e| ParseError {
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
                ..e
            })
        })
}

/// The sum of the sizes the kernel counts in `total_vm` (`VmSize`), in
/// bytes, of a whole [`PATH`] text.
///
/// # Errors
/// The first line that does not parse.
pub fn vm_size(b: &[u8]) -> Result<u64, ParseError> {
    let mut total: u64 = 0;
    for m in parse(b) {
        let (m, name) = m?;
        // `[vsyscall]` is printed but is the gate page, not a VMA of ours.
        if name != b"[vsyscall]" {
            total = total.saturating_add(m.len());
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// headroom's own maps, `record` on x86_64 Linux 6.18 (static binary).
    const RECORD_X86_64: &[u8] = b"\
00400000-00401000 r--p 00000000 fe:00 5341618                            /work/wt-foot/target/x86_64-unknown-linux-musl/release/headroom
00401000-00486000 r-xp 00001000 fe:00 5341618                            /work/wt-foot/target/x86_64-unknown-linux-musl/release/headroom
00486000-004b2000 r--p 00086000 fe:00 5341618                            /work/wt-foot/target/x86_64-unknown-linux-musl/release/headroom
004b2000-004b4000 rw-p 000b2000 fe:00 5341618                            /work/wt-foot/target/x86_64-unknown-linux-musl/release/headroom
004b4000-004b5000 rw-p 00000000 00:00 0 
3be2c000-3be2d000 ---p 00000000 00:00 0                                  [heap]
3be2d000-3be2e000 rw-p 00000000 00:00 0                                  [heap]
7f11ef117000-7f11ef133000 rw-p 00000000 00:00 0 
7f11ef133000-7f11ef134000 ---p 00000000 00:00 0 
7f11ef134000-7f11ef136000 rw-p 00000000 00:00 0 
7f11ef136000-7f11ef13a000 r--p 00000000 00:00 0                          [vvar]
7f11ef13a000-7f11ef13c000 r--p 00000000 00:00 0                          [vvar_vclock]
7f11ef13c000-7f11ef13e000 r-xp 00000000 00:00 0                          [vdso]
7ffdd32a4000-7ffdd32d7000 rw-p 00000000 00:00 0                          [stack]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

    #[test]
    fn parses_a_record_process_of_x86_64() {
        let all: Vec<_> = parse(RECORD_X86_64).map(Result::unwrap).collect();
        assert_eq!(all.len(), 15);
        let (text, name) = all[1];
        assert_eq!((text.start, text.end), (0x401000, 0x486000));
        assert!(text.read && !text.write && text.exec && !text.shared);
        assert_eq!(text.kind, Kind::File);
        assert!(name.ends_with(b"/release/headroom"));
        // The trailing space of an anonymous line is no name.
        assert_eq!((all[4].0.kind, all[4].1), (Kind::Anon, &b""[..]));
        assert_eq!(all[5].0.kind, Kind::Heap);
        assert!(!all[5].0.read && !all[5].0.write);
        assert_eq!(all[12].0.kind, Kind::Special);
        assert_eq!(all[13].0.kind, Kind::Stack);
        assert_eq!(all[13].0.len(), 204 * 1024);
    }

    #[test]
    fn vm_size_is_the_kernels_vm_size() {
        // /proc/PID/status said VmSize: 1092 kB for this process.
        assert_eq!(vm_size(RECORD_X86_64), Ok(1092 * 1024));
    }

    #[test]
    fn names_with_spaces_deleted_files_and_named_anonymous_memory() {
        let (m, name) =
            parse_line(b"7f0000000000-7f0000001000 rw-s 00000000 00:05 1234 /my dir/a b (deleted)")
                .unwrap();
        assert_eq!(name, b"/my dir/a b (deleted)");
        assert!(m.shared && m.write);
        assert_eq!(m.kind, Kind::File);
        let (m, _) =
            parse_line(b"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 [anon:glibc: malloc]")
                .unwrap();
        assert_eq!(m.kind, Kind::Anon);
        let (m, _) =
            parse_line(b"7f0000000000-7f0000001000 r-xp 00000000 00:00 0 [uprobes]").unwrap();
        assert_eq!(m.kind, Kind::Special);
        let (m, _) =
            parse_line(b"7f0000000000-7f0000001000 rw-s 00000000 00:01 0 /memfd:x (deleted)")
                .unwrap();
        assert_eq!(m.kind, Kind::Special);
    }

    #[test]
    fn rejects_empty_and_garbage() {
        let e = |l: &[u8]| parse_line(l).unwrap_err().kind;
        assert_eq!(e(b""), ParseErrorKind::Malformed);
        assert_eq!(
            e(b"00400000-00401000 r--p 00000000 fe:00"),
            ParseErrorKind::Malformed
        );
        assert_eq!(
            e(b"00400000 r--p 00000000 fe:00 1"),
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            e(b"00401000-00400000 r--p 00000000 fe:00 1"),
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            e(b"0040000g-00401000 r--p 00000000 fe:00 1"),
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            e(b"00400000-00401000 r--pp 00000000 fe:00 1"),
            ParseErrorKind::Malformed
        );
        assert_eq!(
            e(b"00400000-00401000 w--p 00000000 fe:00 1"),
            ParseErrorKind::Malformed
        );
        assert_eq!(
            e(b"00400000-00401000 r--x 00000000 fe:00 1"),
            ParseErrorKind::Malformed
        );
        assert_eq!(
            e(b"00400000-00401000 r--p 0000000z fe:00 1"),
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            e(b"00400000-00401000 r--p 00000000 fe00 1"),
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            e(b"00400000-00401000 r--p 00000000 fe:00 1a"),
            ParseErrorKind::BadNumber
        );
        // The line number of a bad line in a whole file.
        let bad = b"00400000-00401000 r--p 00000000 fe:00 1\n\nnonsense\n";
        let errs: Vec<_> = parse(bad).filter_map(Result::err).collect();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].line, 3);
        assert_eq!(vm_size(bad).unwrap_err().line, 3);
    }
}
