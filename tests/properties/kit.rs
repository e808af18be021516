//! What the property tests (`tests/properties_*.rs`) share: the method,
//! the proptest settings, the check that the library agrees with a naive
//! parser, the naive number and path parsers, and the generators of
//! kernel text and its damage. Each of those files includes this one and
//! uses part of it: hence `dead_code` allowed for the whole module.
//!
//! For each kernel-file parser of the library, proptest generates the file
//! as the kernel (or lxcfs, OpenVZ, an emulation) prints it, with random
//! values and the oddities met in the wild: runs of spaces and tabs instead
//! of the kernel's own separator, keys and lines in any order, unknown keys,
//! optional keys or columns missing, values near and past `u64::MAX`, a
//! final newline or none, octal escapes in paths, `)` and `) ` inside a
//! process name. About half of the cases are then spoiled in one place (a
//! token replaced by junk, inserted or removed, a line dropped, doubled or
//! blanked).
//!
//! Each property asserts that the library returns exactly what a naive
//! parser written beside it returns on the same text: the same values, and an
//! error exactly when the naive parser finds the text bad (same kind and
//! line). Where the library's order of checks is not documented and the text
//! has several faults, its error must be one of those the naive parser
//! found.
//!
//! The naive side states each module's documented semantics in the most
//! obvious std code (`lines`, `split_whitespace`, `split_once`,
//! `str::parse`, `String`, `Vec`) and never calls the library's byte-level
//! helpers; it allocates freely. The white space in generated kernel text
//! is spaces, tabs and newlines only (no `\r`), so `str::lines` and
//! `split_whitespace` split exactly where the library's separators are.
//!
//! A disagreement found and not fixed stays in its file as an `#[ignore]`d property
//! whose reason gives the smallest failing input. No
//! `proptest-regressions/` files are written: a failure prints its shrunk
//! input, which belongs in a unit test next to the parser.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Debug;

use headroom::kernel::parse::{ParseError, ParseErrorKind};
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::Config;

// ------------------------------------------------------------------ common

/// `cases` cases, and no regression files written next to this one.
pub fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

pub const BAD: ParseErrorKind = ParseErrorKind::BadNumber;
pub const MALFORMED: ParseErrorKind = ParseErrorKind::Malformed;

pub fn at(kind: ParseErrorKind, line: usize) -> ParseError {
    ParseError {
        kind,
        line: u32::try_from(line).unwrap(),
    }
}

pub fn missing(key: &'static str) -> ParseError {
    ParseError {
        kind: ParseErrorKind::Missing(key),
        line: 0,
    }
}

/// The library's `got` agrees with the naive `want`: equal values, or an
/// error that the naive parser found too.
pub fn agree<T: PartialEq + Debug>(
    got: Result<T, ParseError>,
    want: Result<T, Vec<ParseError>>,
) -> Result<(), TestCaseError> {
    match (&got, &want) {
        (Ok(g), Ok(w)) => prop_assert_eq!(g, w),
        (Err(e), Err(es)) => prop_assert!(
            es.contains(e),
            "library error {:?} is none of the naive errors {:?}",
            e,
            es
        ),
        _ => prop_assert!(false, "library {:?}, naive {:?}", got, want),
    }
    Ok(())
}

/// A u64 as the kernel prints it: ASCII digits only (`str::parse` alone
/// would take a leading `+`), and it must fit.
pub fn naive_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// An i64: an optional `-`, then ASCII digits, and it must fit.
pub fn naive_i64(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `%lu.%02lu` (exactly two decimals) in hundredths, if it fits a u64.
pub fn naive_centi2(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.')?;
    if frac.len() != 2 {
        return None;
    }
    let v = u128::from(naive_u64(whole)?) * 100 + u128::from(naive_u64(frac)?);
    u64::try_from(v).ok()
}

/// Decodes `\ooo` (three octal digits, value below 256); any other
/// backslash stays.
pub fn naive_unescape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        let octal = raw
            .get(i + 1..i + 4)
            .filter(|d| raw[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)))
            .map(|d| d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0')));
        if let Some(Ok(byte)) = octal.map(u8::try_from) {
            out.push(byte);
            i += 4;
            continue;
        }
        out.push(raw[i]);
        i += 1;
    }
    out
}

/// What the kernel's `mangle()`/`seq_file_path(…, " \t\n\\")` prints for a
/// path in /proc/swaps and /proc/PID/mountinfo.
pub fn kernel_escape(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.chars() {
        match c {
            ' ' => out.push_str("\\040"),
            '\t' => out.push_str("\\011"),
            '\n' => out.push_str("\\012"),
            '\\' => out.push_str("\\134"),
            c => out.push(c),
        }
    }
    out
}

/// The first value of each `Key:` line (the key starts the line and is
/// followed by `:` and white space), with its 1-based line.
pub fn colon_values(s: &str) -> HashMap<&str, (usize, &str)> {
    let mut found = HashMap::new();
    for (i, line) in s.lines().enumerate() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            continue;
        }
        if let Some(value) = rest.split_whitespace().next() {
            found.entry(key).or_insert((i + 1, value));
        }
    }
    found
}

// -------------------------------------------------------------- generators

pub const WS: &[char] = &[' ', '\t'];

pub fn text_from(alphabet: &'static [char], len: std::ops::Range<usize>) -> BoxedStrategy<String> {
    prop::collection::vec(select(alphabet), len)
        .prop_map(String::from_iter)
        .boxed()
}

/// A u64 as the kernel prints it: mostly small, often anywhere, sometimes
/// at the very top (lxcfs prints 2^64 − 128).
pub fn num() -> BoxedStrategy<u64> {
    prop_oneof![
        4 => 0u64..10_000,
        2 => any::<u64>(),
        1 => (0u64..=300).prop_map(|d| u64::MAX - d),
    ]
    .boxed()
}

pub fn num_s() -> BoxedStrategy<String> {
    num().prop_map(|v| v.to_string()).boxed()
}

/// A token that may spoil a numeric field: just or far past `u64::MAX`,
/// signs, letters, decimals, units, a non-ASCII digit, or a valid number.
pub fn junk() -> BoxedStrategy<String> {
    prop_oneof![
        (1u128..=1000).prop_map(|d| (u128::from(u64::MAX) + d).to_string()),
        Just("123456789012345678901234567890".to_string()),
        (0u64..100).prop_map(|v| format!("-{v}")),
        (0u64..100).prop_map(|v| format!("+{v}")),
        (0u64..100).prop_map(|v| format!("{v}x")),
        (0u64..100, 0u64..1000).prop_map(|(a, b)| format!("{a}.{b}")),
        select(&["x", "max", "-", "kB", "0x1f", "\u{661}", "1/2"][..]).prop_map(String::from),
        num_s(),
    ]
    .boxed()
}

/// One damage done to the token lines of a generated file.
#[derive(Clone, Debug)]
pub enum Mutation {
    Keep,
    Replace(Index, Index, String),
    Insert(Index, Index, String),
    Remove(Index, Index),
    DropLine(Index),
    DupLine(Index),
    BlankLine(Index),
}

impl Mutation {
    fn apply(&self, lines: &mut Vec<Vec<String>>) {
        let n = lines.len();
        match self {
            Mutation::Replace(l, t, s) if n > 0 => {
                let line = &mut lines[l.index(n)];
                if !line.is_empty() {
                    let i = t.index(line.len());
                    line[i] = s.clone();
                }
            }
            Mutation::Insert(l, t, s) if n > 0 => {
                let line = &mut lines[l.index(n)];
                line.insert(t.index(line.len() + 1), s.clone());
            }
            Mutation::Remove(l, t) if n > 0 => {
                let line = &mut lines[l.index(n)];
                if !line.is_empty() {
                    line.remove(t.index(line.len()));
                }
            }
            Mutation::DropLine(l) if n > 0 => {
                lines.remove(l.index(n));
            }
            Mutation::DupLine(l) if n > 0 => {
                let i = l.index(n);
                let dup = lines[i].clone();
                lines.insert(i + 1, dup);
            }
            Mutation::BlankLine(l) => lines.insert(l.index(n + 1), Vec::new()),
            _ => {}
        }
    }
}

pub fn mutation(junk: BoxedStrategy<String>) -> BoxedStrategy<Mutation> {
    let ix = any::<Index>;
    prop_oneof![
        6 => Just(Mutation::Keep),
        2 => (ix(), ix(), junk.clone()).prop_map(|(l, t, s)| Mutation::Replace(l, t, s)),
        1 => (ix(), ix(), junk).prop_map(|(l, t, s)| Mutation::Insert(l, t, s)),
        1 => (ix(), ix()).prop_map(|(l, t)| Mutation::Remove(l, t)),
        1 => ix().prop_map(Mutation::DropLine),
        1 => ix().prop_map(Mutation::DupLine),
        1 => ix().prop_map(Mutation::BlankLine),
    ]
    .boxed()
}

/// How a file of token lines is laid out: separators between tokens, white
/// space before and after each line, line order, one damage, final newline.
#[derive(Clone, Debug)]
pub struct Layout {
    pub seps: Vec<String>,
    pub lead: String,
    pub trail: String,
    pub order: Option<Vec<u16>>,
    pub mutation: Mutation,
    pub newline: bool,
}

/// Layouts around the kernel's separator `kernel_sep`: that separator or
/// random runs of spaces and tabs (when `random_seps`), white space around
/// lines (when `edges`), kernel or random line order, and `junk` for the
/// damage.
pub fn layout(
    kernel_sep: &'static str,
    random_seps: bool,
    edges: bool,
    junk: BoxedStrategy<String>,
) -> BoxedStrategy<Layout> {
    let seps = if random_seps {
        prop_oneof![
            Just(vec![kernel_sep.to_string()]),
            prop::collection::vec(text_from(WS, 1..5), 1..6),
        ]
        .boxed()
    } else {
        Just(vec![kernel_sep.to_string()]).boxed()
    };
    let ws = if edges {
        prop_oneof![3 => Just(String::new()), 1 => text_from(WS, 1..4)].boxed()
    } else {
        Just(String::new()).boxed()
    };
    (
        seps,
        ws.clone(),
        ws,
        prop::option::of(prop::collection::vec(any::<u16>(), 64)),
        mutation(junk),
        any::<bool>(),
    )
        .prop_map(|(seps, lead, trail, order, mutation, newline)| Layout {
            seps,
            lead,
            trail,
            order,
            mutation,
            newline,
        })
        .boxed()
}

impl Layout {
    pub fn render(&self, mut lines: Vec<Vec<String>>) -> String {
        if let Some(keys) = &self.order {
            let mut keyed: Vec<_> = lines
                .into_iter()
                .enumerate()
                .map(|(i, l)| (keys.get(i).map_or(u32::MAX, |&k| u32::from(k)), i, l))
                .collect();
            keyed.sort_by_key(|&(k, i, _)| (k, i));
            lines = keyed.into_iter().map(|(_, _, l)| l).collect();
        }
        self.mutation.apply(&mut lines);
        let mut out = String::new();
        let mut k = 0;
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if line.is_empty() {
                continue;
            }
            out.push_str(&self.lead);
            for (j, tok) in line.iter().enumerate() {
                if j > 0 {
                    out.push_str(&self.seps[k % self.seps.len()]);
                    k += 1;
                }
                out.push_str(tok);
            }
            out.push_str(&self.trail);
        }
        if self.newline {
            out.push('\n');
        }
        out
    }
}

pub fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// One value in a one-line file, with white space around it, sometimes a
/// second line.
pub fn one_value_file(value: BoxedStrategy<String>) -> BoxedStrategy<String> {
    (
        text_from(WS, 0..3),
        value.clone(),
        text_from(&[' ', '\t', '\n'], 0..3),
        prop::option::weighted(0.05, value),
    )
        .prop_map(|(lead, v, trail, second)| match second {
            Some(w) => format!("{lead}{v}\n{w}\n"),
            None => format!("{lead}{v}{trail}"),
        })
        .boxed()
}

/// Path bytes, including the four the kernel escapes.
pub const PATH_CHARS: &[char] = &[
    'a', 'b', 'z', '0', '9', '.', '-', '_', ' ', '\t', '\n', '\\', 'é', '(',
];

/// A path as it is before the kernel escapes it: segments of
/// [`PATH_CHARS`], or a swap path met in the wild.
pub fn raw_path() -> BoxedStrategy<String> {
    prop_oneof![
        prop::collection::vec(text_from(PATH_CHARS, 1..12), 1..5)
            .prop_map(|segs| format!("/{}", segs.join("/"))),
        select(
            &[
                "/dev/zram0",
                "/dev/mmcblk0p3",
                "/mnt/usb disk/swapfile",
                "/srv/buildcache/swap-area/raspberrypi-build-swapfile.img",
                "/var/swap",
            ][..]
        )
        .prop_map(String::from),
    ]
    .boxed()
}
