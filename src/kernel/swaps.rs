//! `/proc/swaps`: the active swap areas, one row each.
//!
//! Layout (kernel `mm/swapfile.c`, `swap_show()`): a header line
//! `Filename Type Size Used Priority`, then one row per area. The name is
//! printed through `seq_file_path(…, " \t\n\\")`, so a space, tab, newline or
//! backslash in it appears as the octal escape `\040`, `\011`, `\012` or
//! `\134`. Columns are padded with tabs on current kernels, single tabs on
//! 3.x, a single space after a name of 40 bytes or more, and only spaces in
//! some emulations: so a row is split on runs of white space, never on "the
//! first tab". `Size` and `Used` are in KiB; the priority is signed.
//!
//! With swap off the file is the header alone: that is zero areas, not an
//! error.
//!
//! # References
//! proc(5) (`/proc/swaps`), swapon(8), kernel `mm/swapfile.c`.

use crate::kernel::parse::{ParseError, ParseErrorKind, fields, lines, parse_i64, parse_u64};

/// Path of the file, relative to the root.
pub const PATH: &str = "proc/swaps";

/// Read buffer for [`PATH`], in bytes.
///
/// The header is 48 bytes and a typical row 60–80 bytes; a kernel allows at
/// most 32 swap areas (`MAX_SWAPFILES`, fewer with some configs). 16 KiB holds
/// 32 rows with escaped names of ~450 bytes each; a larger file is reported as
/// truncated by the reader, never cut.
pub const BUF_LEN: usize = 16 * 1024;

/// Output length that [`Swap::unescape`] never exceeds for a name the kernel
/// prints: the unescaped name is the original path, at most `PATH_MAX` (4096)
/// bytes.
pub const NAME_MAX_LEN: usize = 4096;

/// One row of `/proc/swaps`, borrowed from the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swap<'a> {
    /// The `Filename` column exactly as printed: still octal-escaped (see
    /// [`Swap::unescape`]).
    pub name_raw: &'a [u8],
    /// The `Type` column: `partition` or `file` on current kernels.
    pub kind: &'a [u8],
    /// The `Size` column: size of the area in KiB.
    pub size_kib: u64,
    /// The `Used` column: KiB of the area in use.
    pub used_kib: u64,
    /// The `Priority` column (negative when assigned by the kernel).
    pub priority: i64,
}

impl<'a> Swap<'a> {
    /// Writes the name with its `\ooo` escapes decoded into `out` and returns
    /// the written part.
    ///
    /// Only valid three-digit octal escapes with a value below 256 are
    /// decoded (the kernel writes `\040 \011 \012 \134`); any other
    /// backslash is kept verbatim. Decoding only shrinks the name, so an
    /// `out` of `name_raw.len()` bytes always suffices, and [`NAME_MAX_LEN`]
    /// (4096) bytes suffice for any name the kernel prints. If `out` is
    /// smaller than that the result is cut to what fits; use
    /// [`Swap::try_unescape`] to detect that instead.
    pub fn unescape<'o>(&self, out: &'o mut [u8]) -> &'o [u8] {
        let mut len = 0;
        for c in Unescape::new(self.name_raw) {
            let Some(slot) = out.get_mut(len) else {
                break;
            };
            *slot = c;
            len += 1;
        }
        out.get(..len).unwrap_or(&[])
    }

    /// Like [`Swap::unescape`], but `None` when `out` is too small for the
    /// whole decoded name.
    pub fn try_unescape<'o>(&self, out: &'o mut [u8]) -> Option<&'o [u8]> {
        let mut len = 0;
        for c in Unescape::new(self.name_raw) {
            *out.get_mut(len)? = c;
            len += 1;
        }
        out.get(..len)
    }

    /// The last `/`-separated component of [`Swap::name_raw`] (still
    /// escaped), e.g. `zram0` for `/dev/zram0`.
    pub fn basename(&self) -> &'a [u8] {
        match self.name_raw.iter().rposition(|&c| c == b'/') {
            Some(i) => self.name_raw.get(i + 1..).unwrap_or(&[]),
            None => self.name_raw,
        }
    }

    /// True when the area is a zram device: its basename is `zram` followed
    /// by one or more decimal digits (`/dev/zram0`, `/dev/zram12`).
    pub fn is_zram(&self) -> bool {
        is_zram_name(self.basename())
    }
}

/// True for `zram<digits>` (at least one digit, nothing else).
pub(crate) fn is_zram_name(name: &[u8]) -> bool {
    match name.strip_prefix(b"zram") {
        Some(n) => !n.is_empty() && n.iter().all(u8::is_ascii_digit),
        None => false,
    }
}

/// Decodes `\ooo` escapes byte by byte.
struct Unescape<'a> {
    rest: &'a [u8],
}

impl<'a> Unescape<'a> {
    fn new(b: &'a [u8]) -> Self {
        Unescape { rest: b }
    }
}

impl Iterator for Unescape<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        let (&c, tail) = self.rest.split_first()?;
        if c == b'\\'
            && let Some(&[a, b, d]) = tail.first_chunk::<3>()
            && (b'0'..=b'3').contains(&a)
            && (b'0'..=b'7').contains(&b)
            && (b'0'..=b'7').contains(&d)
        {
            self.rest = tail.get(3..).unwrap_or(&[]);
            return Some(((a - b'0') << 6) | ((b - b'0') << 3) | (d - b'0'));
        }
        self.rest = tail;
        Some(c)
    }
}

/// Iterates over the swap areas in the contents of `/proc/swaps`.
///
/// The first line is skipped when it starts with `Filename` (the header);
/// blank lines are skipped. Each other line is split on runs of white space:
/// the first field is the (escaped) name, the next four are type, size (KiB),
/// used (KiB) and priority; further columns are ignored.
///
/// # Errors
/// Per row: [`ParseErrorKind::Malformed`] for fewer than five fields,
/// [`ParseErrorKind::BadNumber`] for a size, used or priority that is not a
/// decimal number (or overflows), each with its 1-based line.
pub fn entries(b: &[u8]) -> impl Iterator<Item = Result<Swap<'_>, ParseError>> {
    lines(b)
        .enumerate()
        .filter(|(i, line)| !(*i == 0 && line.starts_with(b"Filename")))
        .filter(|(_, line)| fields(line).next().is_some())
        .map(|(i, line)| parse_row(line, i + 1))
}

fn parse_row(line: &[u8], lineno: usize) -> Result<Swap<'_>, ParseError> {
    let mut f = fields(line);
    let malformed = ParseError::at(ParseErrorKind::Malformed, lineno);
    let bad = ParseError::at(ParseErrorKind::BadNumber, lineno);
    let name_raw = f.next().ok_or(malformed)?;
    let kind = f.next().ok_or(malformed)?;
    let size = f.next().ok_or(malformed)?;
    let used = f.next().ok_or(malformed)?;
    let prio = f.next().ok_or(malformed)?;
    Ok(Swap {
        name_raw,
        kind,
        size_kib: parse_u64(size).ok_or(bad)?,
        used_kib: parse_u64(used).ok_or(bad)?,
        priority: parse_i64(prio).ok_or(bad)?,
    })
}

/// Sums size and use over all areas: `(size_kib, used_kib)`, both in KiB,
/// saturating at `u64::MAX`. `(0, 0)` when swap is off.
///
/// # Errors
/// The first row error of [`entries`].
pub fn totals(b: &[u8]) -> Result<(u64, u64), ParseError> {
    let mut size = 0u64;
    let mut used = 0u64;
    for s in entries(b) {
        let s = s?;
        size = size.saturating_add(s.size_kib);
        used = used.saturating_add(s.used_kib);
    }
    Ok((size, used))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    macro_rules! fixture {
        ($p:literal) => {
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/11-proc-swaps-layouts-and-escapes/",
                $p,
                "/proc/swaps"
            ))
        };
    }

    /// KiB to MiB in tenths, rounded half up (CASE.md convention).
    fn mib_tenths(kib: u64) -> u64 {
        (kib * 10 + 512) / 1024
    }

    fn all(b: &[u8]) -> Vec<Swap<'_>> {
        entries(b).collect::<Result<Vec<_>, _>>().unwrap()
    }

    fn name(s: &Swap<'_>) -> Vec<u8> {
        let mut out = [0u8; NAME_MAX_LEN];
        s.unescape(&mut out).to_vec()
    }

    #[test]
    fn fixture_11_a_no_swap() {
        let b = fixture!("a-no-swap");
        assert!(all(b).is_empty());
        assert_eq!(totals(b), Ok((0, 0)));
    }

    #[test]
    fn fixture_11_b_escaped_space_and_long_path() {
        let b = fixture!("b-escaped-space-and-long-path");
        let v = all(b);
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].name_raw, b"/mnt/usb\\040disk/swapfile");
        assert_eq!(name(&v[0]), b"/mnt/usb disk/swapfile");
        assert_eq!(
            (v[0].kind, v[0].size_kib, v[0].used_kib, v[0].priority),
            (&b"file"[..], 1048572, 0, -2)
        );
        assert!(!v[0].is_zram());
        assert_eq!(
            name(&v[1]),
            b"/srv/buildcache/swap-area/raspberrypi-build-swapfile.img"
        );
        assert_eq!(
            (v[1].kind, v[1].size_kib, v[1].used_kib, v[1].priority),
            (&b"file"[..], 2097148, 10240, -3)
        );
        assert_eq!(name(&v[2]), b"/dev/zram0");
        assert_eq!(
            (v[2].kind, v[2].size_kib, v[2].used_kib, v[2].priority),
            (&b"partition"[..], 507900, 12288, 100)
        );
        assert!(v[2].is_zram());
        assert_eq!(v[2].basename(), b"zram0");
        let (size, used) = totals(b).unwrap();
        assert_eq!((mib_tenths(size), mib_tenths(used)), (35680, 220));
    }

    #[test]
    fn fixture_11_c_space_separated_emulation() {
        let v = all(fixture!("c-space-separated-emulation"));
        assert_eq!(v.len(), 1);
        assert_eq!(name(&v[0]), b"/dev/zvol/rpool/swap");
        assert_eq!(v[0].kind, b"partition");
        assert_eq!(
            (mib_tenths(v[0].size_kib), mib_tenths(v[0].used_kib)),
            (40960, 840)
        );
        assert_eq!(v[0].priority, -1);
        assert!(!v[0].is_zram());
    }

    #[test]
    fn fixture_11_d_kernel_3_x_layout() {
        let v = all(fixture!("d-kernel-3.x-layout"));
        assert_eq!(v.len(), 1);
        assert_eq!(name(&v[0]), b"/var/swap");
        assert_eq!(v[0].kind, b"file");
        assert_eq!(
            (mib_tenths(v[0].size_kib), mib_tenths(v[0].used_kib)),
            (1000, 300)
        );
        assert_eq!(v[0].priority, -1);
    }

    #[test]
    fn fixture_09_e_sparse_numbering_only_zram1_swaps() {
        let b = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/09-zram-mm-stat-field-counts/e-sparse-numbering-only-zram1/proc/swaps"
        ));
        let v = all(b);
        assert_eq!(v.len(), 1);
        assert!(v[0].is_zram());
        assert_eq!(v[0].basename(), b"zram1");
        assert_eq!(
            (v[0].size_kib, v[0].used_kib, v[0].priority),
            (1048572, 51200, 100)
        );
    }

    #[test]
    fn unescape_only_valid_octal() {
        let s = |raw: &'static [u8]| Swap {
            name_raw: raw,
            kind: b"file",
            size_kib: 0,
            used_kib: 0,
            priority: 0,
        };
        assert_eq!(name(&s(b"a\\011b\\012c\\134d")), b"a\tb\nc\\d");
        // Not three octal digits, or above 0o377: kept verbatim.
        assert_eq!(name(&s(b"a\\04")), b"a\\04");
        assert_eq!(name(&s(b"a\\049")), b"a\\049");
        assert_eq!(name(&s(b"a\\400")), b"a\\400");
        assert_eq!(name(&s(b"\\")), b"\\");
        assert_eq!(name(&s(b"\\\\040")), b"\\ ");
        // Capacity: exact fits, one less is cut / None.
        let x = s(b"/a\\040b");
        let mut exact = [0u8; 4];
        assert_eq!(x.try_unescape(&mut exact), Some(&b"/a b"[..]));
        let mut small = [0u8; 3];
        assert_eq!(x.try_unescape(&mut small), None);
        assert_eq!(x.unescape(&mut small), b"/a ");
        assert_eq!(x.unescape(&mut []), b"");
    }

    #[test]
    fn empty_input_and_blank_lines() {
        assert_eq!(entries(b"").count(), 0);
        assert_eq!(totals(b""), Ok((0, 0)));
        assert_eq!(
            totals(b"Filename Type Size Used Priority\n\n  \n"),
            Ok((0, 0))
        );
    }

    #[test]
    fn extra_columns_ignored_and_header_only_first_line() {
        let b = b"/dev/sda2 partition 100 5 -2 extra cols\n";
        let v = all(b);
        assert_eq!(
            (v[0].name_raw, v[0].size_kib, v[0].used_kib),
            (&b"/dev/sda2"[..], 100, 5)
        );
        // A second line starting with Filename is a row (and a bad one here).
        let b = b"Filename Type Size Used Priority\nFilename Type Size Used Priority\n";
        assert_eq!(totals(b), Err(ParseError::at(ParseErrorKind::BadNumber, 2)));
    }

    #[test]
    fn garbage_and_short_rows_are_errors_with_lines() {
        let b = b"Filename Type Size Used Priority\n/dev/sda2 partition 100 5\n";
        assert_eq!(
            entries(b).next(),
            Some(Err(ParseError::at(ParseErrorKind::Malformed, 2)))
        );
        let b = b"/x file 1x 0 -1\n";
        assert_eq!(totals(b), Err(ParseError::at(ParseErrorKind::BadNumber, 1)));
        let b = b"/x file 1 -1 -1\n";
        assert_eq!(totals(b), Err(ParseError::at(ParseErrorKind::BadNumber, 1)));
        let b = b"/x file 1 1 9223372036854775808\n";
        assert_eq!(totals(b), Err(ParseError::at(ParseErrorKind::BadNumber, 1)));
        assert!(totals(b"\xff\xfe\x00 \x01").is_err());
    }

    #[test]
    fn totals_saturate_on_overflow() {
        let b = b"/a file 18446744073709551615 18446744073709551615 -1\n/b file 10 10 -2\n";
        assert_eq!(totals(b), Ok((u64::MAX, u64::MAX)));
    }

    #[test]
    fn is_zram_near_misses() {
        let s = |raw: &'static [u8]| Swap {
            name_raw: raw,
            kind: b"partition",
            size_kib: 0,
            used_kib: 0,
            priority: 0,
        };
        assert!(s(b"/dev/zram12").is_zram());
        assert!(s(b"zram0").is_zram());
        assert!(!s(b"/dev/zram").is_zram());
        assert!(!s(b"/dev/zram0p1").is_zram());
        assert!(!s(b"/dev/xzram0").is_zram());
        assert!(!s(b"/dev/zram0/").is_zram());
        assert!(!s(b"/zram0/swapfile").is_zram());
        assert_eq!(s(b"/dev/zram0/").basename(), b"");
    }
}
