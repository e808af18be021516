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

/// True for the bytes the kernel uses as field separators or line ends:
/// space, tab, LF, VT, FF and CR.
#[inline(always)]
pub const fn is_space(c: u8) -> bool {
    // One bit per separator below 64 (tab to CR are 9 to 13): a shift and
    // a test, where a chain of compares was most of a field split.
    const SEPARATORS: u64 = 1 << b' ' | 0b11_1110_0000_0000;
    c < 64 && SEPARATORS >> c & 1 != 0
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
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    const NL: u64 = u64::from_le_bytes([b'\n'; 8]);
    let mut chunks = b.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ NL;
        // A zero byte of x (a newline of the chunk) sets its high bit
        // here; a borrow can set more above it, never below: the lowest
        // bit set is the first newline (byte 0 is the low byte).
        let found = x.wrapping_sub(ONES) & !x & HIGHS;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&c| c == b'\n')
        .map(|i| at + i)
}

/// The offset just past the first `\n` at or after `from` in `b`, or
/// `b.len()` when there is none: where the next line starts.
#[inline(always)]
fn next_line(b: &[u8], from: usize) -> usize {
    b.get(from..)
        .and_then(find_newline)
        .map_or(b.len(), |i| from + i + 1)
}

/// `b.starts_with(prefix)` byte by byte, inlined: the keys tried differ
/// from most lines within their first bytes, where a call to the
/// library's compare would cost more than the compare.
#[inline(always)]
fn starts_with(b: &[u8], prefix: &[u8]) -> bool {
    if b.len() < prefix.len() {
        return false;
    }
    let mut i = 0;
    while let (Some(x), Some(y)) = (b.get(i), prefix.get(i)) {
        if x != y {
            return false;
        }
        i += 1;
    }
    true
}

/// A set of byte values (256 bits): the first bytes of the keys a
/// one-pass finder looks for, so that a line starting with any other byte
/// is passed over without looking at its key.
#[derive(Default)]
struct ByteSet([u64; 4]);

impl ByteSet {
    #[inline(always)]
    fn add(&mut self, c: u8) {
        if let Some(w) = self.0.get_mut(usize::from(c >> 6)) {
            *w |= 1 << (c & 63);
        }
    }

    #[inline(always)]
    fn has(&self, c: u8) -> bool {
        self.0
            .get(usize::from(c >> 6))
            .is_some_and(|w| w >> (c & 63) & 1 != 0)
    }
}

/// The first of `keys` (those marked `usable`) that `b` holds at `at`
/// followed by a byte that `ends` (or by the end of `b`): the index of
/// the key a line starting at `at` has, found without splitting the line.
#[inline(always)]
fn key_at<const N: usize>(
    b: &[u8],
    at: usize,
    keys: &[&[u8]; N],
    usable: &[bool; N],
    ends: impl Fn(Option<&u8>) -> bool,
) -> Option<usize> {
    let rest = b.get(at..)?;
    let first = rest.first();
    let mut i = 0;
    while let (Some(k), Some(&ok)) = (keys.get(i), usable.get(i)) {
        if ok
            && k.first().is_none_or(|c| Some(c) == first)
            && starts_with(rest, k)
            && ends(rest.get(k.len()))
        {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Iterates over the fields of `line` separated by runs of ASCII white space.
pub fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    Fields { rest: line }
}

/// [`fields`]' iterator: `rest` is what is left to split.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let (start, end) = next_field(self.rest, 0, false);
        let (field, tail) = self.rest.get(start..)?.split_at_checked(end - start)?;
        self.rest = tail;
        (!field.is_empty()).then_some(field)
    }
}

/// The first field of `b` at or after `from`: its start and end offsets
/// (`start == end` when there is none before the end of `b`, or before
/// the end of the line when `in_line`: a `\n` then ends the search and
/// `end` is its offset). Plain loops over the bytes rather than iterator
/// adapters: a tick splits ~6 KiB of /proc text, and at the size-optimised
/// release build each adapter step is a call.
#[inline(always)]
fn next_field(b: &[u8], from: usize, in_line: bool) -> (usize, usize) {
    let mut start = from;
    while let Some(&c) = b.get(start) {
        if !is_space(c) || (in_line && c == b'\n') {
            break;
        }
        start += 1;
    }
    let mut end = start;
    while let Some(&c) = b.get(end) {
        if is_space(c) {
            break;
        }
        end += 1;
    }
    (start, end)
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
    // A line's key is what comes before its first `:`: a key with a `:`
    // or a newline in it is no line's. An empty one is a line's that
    // starts with the `:`.
    let mut firsts = ByteSet::default();
    let usable = keys.map(|k| {
        let ok = !k.iter().any(|&c| c == b':' || c == b'\n');
        if ok {
            firsts.add(k.first().copied().unwrap_or(b':'));
        }
        ok
    });
    let mut at = 0;
    while left > 0 {
        let Some(&c) = b.get(at) else { break };
        let mut scanned = at;
        let key = match firsts.has(c) {
            true => key_at(b, at, &keys, &usable, |c| c == Some(&b':')),
            false => None,
        };
        let slot = key.and_then(|i| Some((i, out.get_mut(i)?)));
        if let Some((i, slot)) = slot.filter(|(_, v)| v.is_none()) {
            let colon = at + keys.get(i).map_or(0, |k| k.len());
            let (start, end) = next_field(b, colon + 1, true);
            let spaced = matches!(b.get(colon + 1), None | Some(b' ' | b'\t' | b'\n'));
            if spaced && start < end {
                *slot = b.get(start..end);
                left -= 1;
            }
            scanned = end;
        }
        at = next_line(b, scanned);
    }
    out
}

/// The index of the first of `keys` equal to `key`: lengths compared
/// first, so most keys are passed over without a byte compare.
#[inline(always)]
fn wanted(keys: &[&[u8]], key: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(k) = keys.get(i) {
        if k.len() == key.len() && *k == key {
            return Some(i);
        }
        i += 1;
    }
    None
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
    // A field is never empty and holds no separator: no key with one is
    // any line's.
    let mut firsts = ByteSet::default();
    let usable = keys.map(|k| {
        let ok = !k.is_empty() && !k.iter().any(|&c| is_space(c));
        if let Some(&c) = k.first().filter(|_| ok) {
            firsts.add(c);
        }
        ok
    });
    let mut at = 0;
    while left > 0 {
        let Some(&c) = b.get(at) else { break };
        // Where the key ends, and which it is: a line starting with a
        // separator is split as fields (no kernel file has one).
        let (key, key_end) = if c == b'\n' {
            (None, at)
        } else if is_space(c) {
            let (start, end) = next_field(b, at, true);
            (b.get(start..end).and_then(|k| wanted(&keys, k)), end)
        } else if firsts.has(c) {
            let key = key_at(b, at, &keys, &usable, |c| c.is_none_or(|&c| is_space(c)));
            (
                key,
                at + key.and_then(|i| keys.get(i)).map_or(0, |k| k.len()),
            )
        } else {
            (None, at)
        };
        let mut scanned = key_end;
        let slot = key.and_then(|i| out.get_mut(i)).filter(|v| v.is_none());
        if let Some(slot) = slot {
            let (start, end) = next_field(b, key_end, true);
            if start < end {
                *slot = b.get(start..end);
                left -= 1;
            }
            scanned = end;
        }
        at = next_line(b, scanned);
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

    extern crate std;
    use std::vec::Vec;

    /// [`fields`] by its definition: `split` on separators, empties dropped.
    fn fields_by_split(l: &[u8]) -> Vec<&[u8]> {
        l.split(|&c| is_space(c))
            .filter(|f| !f.is_empty())
            .collect()
    }

    /// [`colon_value`] by its definition, line by line.
    fn colon_by_lines<'a>(b: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
        lines(b).find_map(|line| {
            let colon = line.iter().position(|&c| c == b':')?;
            let (k, rest) = line.split_at(colon);
            let rest = &rest[1..];
            let spaced = matches!(rest.first(), None | Some(b' ' | b'\t'));
            (k == key && spaced).then(|| fields_by_split(rest).first().copied())?
        })
    }

    /// [`space_value`] by its definition, line by line.
    fn space_by_lines<'a>(b: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
        lines(b).find_map(|line| match fields_by_split(line)[..] {
            [k, v, ..] if k == key => Some(v),
            _ => None,
        })
    }

    proptest::proptest! {
        /// The one-pass finders and the field splitter agree with their
        /// definitions by lines and `split`, on texts of the bytes that
        /// matter (separators, `:`, newlines, key letters) and keys that
        /// no line can have (empty, with a separator, a `:`, a newline).
        #[test]
        fn one_pass_finders_agree_with_their_definitions(
            b in proptest::collection::vec(
                proptest::sample::select(&b"ab:: \t\n\n\r\x0b1x"[..]),
                0..48,
            )
        ) {
            let keys: [&[u8]; 8] = [b"a", b"ab", b"b", b"", b"a b", b" a", b"a:", b"x\n"];
            proptest::prop_assert_eq!(fields(&b).collect::<Vec<_>>(), fields_by_split(&b));
            let colons = colon_values(&b, keys);
            let spaces = space_values(&b, keys);
            for (i, k) in keys.iter().enumerate() {
                proptest::prop_assert_eq!(colons[i], colon_by_lines(&b, k));
                proptest::prop_assert_eq!(spaces[i], space_by_lines(&b, k));
            }
        }
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
