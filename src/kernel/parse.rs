//! Byte-level helpers shared by every kernel-file parser.
//!
//! All functions are pure, work on `&[u8]` and never allocate. Numbers in
//! /proc and /sys are ASCII decimal; anything else is rejected rather than
//! guessed.

/// What went wrong while parsing one kernel file.
///
/// Small and `Copy`, like bstr's `Utf8Error`: a kind plus the 1-based line
/// where it happened (0 when the error is not tied to a line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What kind of failure.
    pub kind: ParseErrorKind,
    /// 1-based line number in the input, 0 when not applicable.
    pub line: u32,
}

/// The kinds of [`ParseError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// A key or field that the format requires is absent.
    Missing(&'static str),
    /// A field that must be a decimal number is not one (or overflows u64).
    BadNumber,
    /// The line or file does not have the expected shape.
    Malformed,
    /// More entries than the fixed capacity documented by the parser.
    TooMany,
}

impl ParseError {
    /// A [`ParseErrorKind::Missing`] error for `key`, not tied to a line.
    pub const fn missing(key: &'static str) -> Self {
        ParseError {
            kind: ParseErrorKind::Missing(key),
            line: 0,
        }
    }

    /// An error of `kind` at 1-based `line`.
    pub const fn at(kind: ParseErrorKind, line: usize) -> Self {
        ParseError {
            kind,
            line: line as u32,
        }
    }
}

/// Parses an unsigned ASCII decimal with no sign and no white space.
///
/// Returns `None` for an empty slice, any non-digit byte, or a value above
/// `u64::MAX` (so lxcfs's `18446744073709551488` parses, one more digit does not).
///
/// ```
/// use headroom::kernel::parse::parse_u64;
/// assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
/// assert_eq!(parse_u64(b"18446744073709551616"), None);
/// assert_eq!(parse_u64(b"12a"), None);
/// assert_eq!(parse_u64(b""), None);
/// ```
pub fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    // 19 digits stay below u64::MAX: no overflow to check (`summarize`
    // parses some twenty numbers a row).
    if b.len() <= 19 {
        for &c in b {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        return Some(v);
    }
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

/// Parses an unsigned ASCII hexadecimal number without a `0x` prefix, digits
/// in either case (`7ffd1000`, as /proc/PID/maps prints addresses).
///
/// Returns `None` for an empty slice, any other byte, or a value above
/// `u64::MAX`.
///
/// ```
/// use headroom::kernel::parse::parse_hex_u64;
/// assert_eq!(parse_hex_u64(b"7ffdA000"), Some(0x7ffd_a000));
/// assert_eq!(parse_hex_u64(b"ffffffffffffffff"), Some(u64::MAX));
/// assert_eq!(parse_hex_u64(b"10000000000000000"), None);
/// assert_eq!(parse_hex_u64(b"0x10"), None);
/// assert_eq!(parse_hex_u64(b""), None);
/// ```
pub fn parse_hex_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = v.checked_mul(16)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Parses a signed ASCII decimal (`-1`, `42`); `None` on anything else or
/// overflow of `i64`.
///
/// ```
/// use headroom::kernel::parse::parse_i64;
/// assert_eq!(parse_i64(b"-1"), Some(-1));
/// assert_eq!(parse_i64(b"-"), None);
/// ```
pub fn parse_i64(b: &[u8]) -> Option<i64> {
    match b.split_first() {
        Some((b'-', rest)) => {
            let v = parse_u64(rest)?;
            if v <= i64::MAX as u64 {
                Some(-(v as i64))
            } else if v == i64::MAX as u64 + 1 {
                Some(i64::MIN)
            } else {
                None
            }
        }
        _ => i64::try_from(parse_u64(b)?).ok(),
    }
}

/// Strips ASCII white space (space, tab, CR, LF, VT, FF) from both ends.
pub fn trim(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|c| !is_space(*c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !is_space(*c))
        .map_or(start, |e| e + 1);
    &b[start..end]
}

/// True for the bytes the kernel uses as field separators or line ends.
pub const fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The 1-based line of `b` on which `sub`, a sub-slice of `b` (e.g. a
/// value found by [`colon_value`]), starts; for [`ParseError::at`]. A
/// slice from elsewhere gives 0 ("not tied to a line").
pub fn line_of(b: &[u8], sub: &[u8]) -> usize {
    let start = b.as_ptr() as usize;
    let Some(off) = (sub.as_ptr() as usize).checked_sub(start) else {
        return 0;
    };
    if off.saturating_add(sub.len()) > b.len() {
        return 0;
    }
    b.get(..off).map_or(0, |before| {
        before.iter().filter(|&&c| c == b'\n').count() + 1
    })
}

/// Iterates over the lines of `b`, split on `\n`, without the `\n`.
///
/// A final line without a newline is yielded; an empty input or a trailing
/// newline does not yield an extra empty line.
pub fn lines(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    Lines {
        rest: (!b.is_empty()).then(|| b.strip_suffix(b"\n").unwrap_or(b)),
    }
}

/// [`lines`]' iterator: `rest` is what is left, `None` once the last line
/// was given.
struct Lines<'a> {
    rest: Option<&'a [u8]>,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        match find_newline(rest) {
            Some(i) => {
                let (line, tail) = rest.split_at(i);
                self.rest = tail.get(1..);
                Some(line)
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

/// The index of the first `\n` in `b`, eight bytes at a time (a tick
/// splits ~6 KiB of /proc text into lines: this is most of its parsing).
pub fn find_newline(b: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const NL: u64 = u64::from_ne_bytes([b'\n'; 8]);
    let mut chunks = b.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_ne_bytes(word) ^ NL;
        // A zero byte of x (a newline of the chunk) sets its high bit here.
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            return chunk.iter().position(|&c| c == b'\n').map(|i| at + i);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&c| c == b'\n')
        .map(|i| at + i)
}

/// Iterates over the fields of `line` separated by runs of ASCII white space.
pub fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&c| is_space(c)).filter(|f| !f.is_empty())
}

/// Finds the value of `key` in a `Key: value [kB]` file (/proc/meminfo,
/// /proc/PID/status) where `key` must start a line and be followed directly
/// by `:`. Returns the first field after the colon, unparsed.
///
/// Anchored: `MemTotal` does not match `aMemTotal:` or `MemTotala:`.
pub fn colon_value<'a>(b: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    lines(b).find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(b":")?;
        match rest.first() {
            None | Some(b' ' | b'\t') => fields(rest).next(),
            Some(_) => None,
        }
    })
}

/// [`colon_value`] of each of `keys`, in one pass over the lines: what a
/// parser wanting a dozen keys of /proc/meminfo (55 lines) would otherwise
/// pay a dozen passes for. Each result is exactly `colon_value(b, key)`:
/// the first line where the key is followed by `:` and a value. Keys
/// contain no `:`.
pub fn colon_values<'a, const N: usize>(b: &'a [u8], keys: [&[u8]; N]) -> [Option<&'a [u8]>; N] {
    let mut out = [None; N];
    let mut left = N;
    for line in lines(b) {
        if left == 0 {
            break;
        }
        let Some(colon) = line.iter().position(|&c| c == b':') else {
            continue;
        };
        let (key, rest) = line.split_at(colon);
        let Some(i) = keys.iter().position(|k| *k == key) else {
            continue;
        };
        let Some(slot) = out.get_mut(i).filter(|v| v.is_none()) else {
            continue;
        };
        let rest = &rest[1..];
        if let (None | Some(b' ' | b'\t'), Some(v)) = (rest.first(), fields(rest).next()) {
            *slot = Some(v);
            left -= 1;
        }
    }
    out
}

/// Finds the value of `key` in a `key value` file (/proc/vmstat,
/// memory.stat, memory.events): the second field of the first line whose
/// first field is exactly `key`.
pub fn space_value<'a>(b: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    lines(b).find_map(|line| {
        // Most lines start with another key: told apart without fields.
        if !line.starts_with(key) && !line.first().copied().is_some_and(is_space) {
            return None;
        }
        let mut f = fields(line);
        if f.next()? == key { f.next() } else { None }
    })
}

/// [`space_value`] of each of `keys`, in one pass over the lines (the
/// counters headroom takes from /proc/vmstat's ~190 lines). Each result is
/// exactly `space_value(b, key)`: the second field of the first line whose
/// first field is the key.
pub fn space_values<'a, const N: usize>(b: &'a [u8], keys: [&[u8]; N]) -> [Option<&'a [u8]>; N] {
    let mut out = [None; N];
    let mut left = N;
    for line in lines(b) {
        if left == 0 {
            break;
        }
        let mut f = fields(line);
        let (Some(key), Some(v)) = (f.next(), f.next()) else {
            continue;
        };
        let Some(i) = keys.iter().position(|k| *k == key) else {
            continue;
        };
        if let Some(slot) = out.get_mut(i).filter(|v| v.is_none()) {
            *slot = Some(v);
            left -= 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_newline_agrees_with_position() {
        let mut b = [b'a'; 40];
        assert_eq!(find_newline(&b), None);
        for at in 0..40 {
            b[at] = b'\n';
            for start in 0..=at {
                assert_eq!(find_newline(&b[start..]), Some(at - start), "{at} {start}");
            }
            b[at] = 0x8a; // high bit set, not a newline
        }
        assert_eq!(find_newline(&b), None);
        assert_eq!(find_newline(b"\x0b\x09\x0a"), Some(2));
    }

    /// One pass gives what [`colon_value`] gives for each key: the first
    /// line with a value, anchored keys, a bare `Key:` skipped.
    #[test]
    fn colon_values_agree_with_colon_value() {
        let b = b"A:\nAB:\t7 kB\nA:x 1\nA: 2\nxB: 3\nB:  4\nA: 5\n:\nC";
        let keys: [&[u8]; 5] = [b"A", b"AB", b"B", b"C", b""];
        let got = colon_values(b, keys);
        for (k, v) in keys.iter().zip(got) {
            assert_eq!(v, colon_value(b, k), "{k:?}");
        }
        assert_eq!(
            got[..3],
            [Some(&b"2"[..]), Some(&b"7"[..]), Some(&b"4"[..])]
        );
        assert_eq!(colon_values(b"", [b"A"]), [None]);
    }

    #[test]
    fn lines_handles_missing_final_newline_and_empty() {
        assert_eq!(lines(b"").count(), 0);
        assert_eq!(lines(b"\n").count(), 1);
        let v: [&[u8]; 2] = [b"a", b"b"];
        assert!(lines(b"a\nb").eq(v.iter().copied()));
        assert!(lines(b"a\nb\n").eq(v.iter().copied()));
    }

    #[test]
    fn colon_value_is_anchored() {
        let f = b"aMemTotal: 1 kB\nMemTotala: 2 kB\nMemTotal:: 3\nMemTotal:   4 kB\n";
        assert_eq!(colon_value(f, b"MemTotal"), Some(&b"4"[..]));
        assert_eq!(colon_value(b"MemTotal: 5", b"MemTotal"), Some(&b"5"[..]));
        assert_eq!(colon_value(b"Foo: 5", b"MemTotal"), None);
    }

    #[test]
    fn space_value_matches_whole_key() {
        let f = b"oom_kill_x 9\noom_kill 4\n";
        assert_eq!(space_value(f, b"oom_kill"), Some(&b"4"[..]));
        assert_eq!(space_value(f, b"oom"), None);
    }

    #[test]
    fn space_values_is_space_value_of_each_key_in_one_pass() {
        let f = b"oom_kill_x 9\n\noom_kill 4\npswpin\npswpin 7\n pswpout  8 \noom_kill 5\n";
        let keys: [&[u8]; 4] = [b"oom_kill", b"pswpin", b"pswpout", b"pgmajfault"];
        let one = space_values(f, keys);
        for (k, v) in keys.iter().zip(one) {
            assert_eq!(v, space_value(f, k), "{k:?}");
        }
        assert_eq!(one[0], Some(&b"4"[..]));
        assert_eq!(one[3], None);
    }

    #[test]
    fn line_of_counts_newlines_before_the_slice() {
        let b = b"a 1\nb 2\nc 3\n";
        assert_eq!(line_of(b, &b[0..1]), 1);
        assert_eq!(line_of(b, &b[10..11]), 3);
        assert_eq!(line_of(&b[4..], b), 0);
        assert_eq!(line_of(b"x", b"elsewhere"), 0);
    }

    #[test]
    fn trim_both_ends() {
        assert_eq!(trim(b"  x y\t\n"), b"x y");
        assert_eq!(trim(b" \n "), b"");
    }

    #[test]
    fn i64_edges() {
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"+1"), None);
    }
}
