//! `/proc/pressure/memory` (and the other PSI files): pressure stall
//! information.
//!
//! ```text
//! some avg10=1.21 avg60=0.87 avg300=0.30 total=5312874
//! full avg10=0.54 avg60=0.40 avg300=0.13 total=2218813
//! ```
//!
//! `some` is the share of wall time in which at least one task stalled on the
//! resource, `full` the share in which all non-idle tasks did; the averages
//! are percentages over 10, 60 and 300 s, printed as `%lu.%02lu`, and `total`
//! is the cumulative stall time in microseconds. The cgroup v2
//! `memory.pressure` files use the same format.
//!
//! The files exist since Linux 4.20 with `CONFIG_PSI`; a kernel built with
//! `CONFIG_PSI_DEFAULT_DISABLED` (Raspberry Pi OS) has them but fails every
//! read with EOPNOTSUPP unless booted with `psi=1` (fixture 19). The `full`
//! line of `/proc/pressure/cpu` exists only since Linux 5.13.
//!
//! # References
//! `Documentation/accounting/psi.rst`.

use crate::kernel::loadavg::parse_centi_exact;
use crate::kernel::parse::{ParseError, ParseErrorKind, fields, lines, parse_u64};
use crate::kernel::root::{ReadError, Root};

/// Path of the system-wide memory pressure file, relative to the root.
pub const PATH_MEMORY: &str = "proc/pressure/memory";

/// Buffer size for [`read`], in bytes.
///
/// The file is two lines of at most about 70 bytes each (94 bytes on a 6.18
/// host); 256 bytes leaves room for wide totals.
pub const BUF_LEN: usize = 256;

/// One `some` or `full` line of a PSI file; borrows the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PsiLine<'a> {
    /// `avg10` exactly as the kernel printed it (`b"1.21"`), in percent, for
    /// the CSV's `psi_mem_some_avg10` column.
    pub avg10_text: &'a [u8],
    /// `avg10` in hundredths of a percent (`1.21` → 121).
    pub avg10_centi: u64,
    /// `avg60` in hundredths of a percent.
    pub avg60_centi: u64,
    /// `avg300` in hundredths of a percent.
    pub avg300_centi: u64,
    /// `total`: cumulative stall time, in microseconds.
    pub total_us: u64,
}

/// The parsed contents of a PSI file; borrows the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Psi<'a> {
    /// The `some` line (always present).
    pub some: PsiLine<'a>,
    /// The `full` line; `None` for `/proc/pressure/cpu` before Linux 5.13.
    pub full: Option<PsiLine<'a>>,
}

/// Parses a PSI file (`/proc/pressure/{memory,io,cpu}`, cgroup
/// `*.pressure`).
///
/// Each line is `some` or `full` followed by `avg10=`, `avg60=`, `avg300=`
/// and `total=` in any order; averages must be `<digits>.<2 digits>`. Lines
/// with another first word are ignored (room for future kernels), blank lines
/// are tolerated.
///
/// An empty input is an error, never "0.00 pressure": a 0-byte read means the
/// data is unavailable.
///
/// # Errors
/// - `Missing("some")` when there is no `some` line (including empty input);
/// - `Malformed` at the line of a repeated `some`/`full`, a missing, repeated
///   or unknown `key=` field;
/// - `BadNumber` at the line of a bad average or total.
pub fn parse(b: &[u8]) -> Result<Psi<'_>, ParseError> {
    let mut some = None;
    let mut full = None;
    for (i, line) in lines(b).enumerate() {
        let n = i + 1;
        let mut f = fields(line);
        let slot = match f.next() {
            Some(b"some") => &mut some,
            Some(b"full") => &mut full,
            _ => continue,
        };
        if slot.is_some() {
            return Err(ParseError::at(ParseErrorKind::Malformed, n));
        }
        *slot = Some(parse_line(f, n)?);
    }
    Ok(Psi {
        some: some.ok_or(ParseError::missing("some"))?,
        full,
    })
}

/// Parses the `key=value` fields after `some`/`full` on line `n`.
fn parse_line<'a>(f: impl Iterator<Item = &'a [u8]>, n: usize) -> Result<PsiLine<'a>, ParseError> {
    let malformed = ParseError::at(ParseErrorKind::Malformed, n);
    let bad = ParseError::at(ParseErrorKind::BadNumber, n);
    let mut avg10: Option<&[u8]> = None;
    let mut avg60 = None;
    let mut avg300 = None;
    let mut total = None;
    for field in f {
        let eq = field.iter().position(|&c| c == b'=').ok_or(malformed)?;
        let (key, value) = (
            field.get(..eq).ok_or(malformed)?,
            field.get(eq + 1..).ok_or(malformed)?,
        );
        let slot = match key {
            b"avg10" => &mut avg10,
            b"avg60" => &mut avg60,
            b"avg300" => &mut avg300,
            b"total" => &mut total,
            _ => return Err(malformed),
        };
        if slot.replace(value).is_some() {
            return Err(malformed);
        }
    }
    let (Some(avg10), Some(avg60), Some(avg300), Some(total)) = (avg10, avg60, avg300, total)
    else {
        return Err(malformed);
    };
    Ok(PsiLine {
        avg10_text: avg10,
        avg10_centi: parse_centi_exact(avg10).ok_or(bad)?,
        avg60_centi: parse_centi_exact(avg60).ok_or(bad)?,
        avg300_centi: parse_centi_exact(avg300).ok_or(bad)?,
        total_us: parse_u64(total).ok_or(bad)?,
    })
}

/// Reads [`PATH_MEMORY`] under `root` into `buf` (give it [`BUF_LEN`] bytes)
/// and returns the bytes read, for [`parse`].
///
/// # Errors
/// See [`ReadError`]: `Open(ENOENT)` without `CONFIG_PSI` or before 4.20,
/// `Read(EOPNOTSUPP)` when PSI is compiled in but disabled at boot — both
/// mean "unsupported" ([`ReadError::describe`]).
pub fn read<'b>(root: &Root, buf: &'b mut [u8]) -> Result<&'b [u8], ReadError> {
    root.read(PATH_MEMORY, buf)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    const FIX: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/19-psi-unavailable"
    );

    #[test]
    fn fixture_19_a_config_psi_off() {
        let root = Root::open(&std::format!("{FIX}/a-config-psi-off")).unwrap();
        let mut buf = [0u8; BUF_LEN];
        let e = read(&root, &mut buf).unwrap_err();
        assert!(e.is_gone(), "{e:?}");
        assert_eq!(e.describe(), "not found");
    }

    #[test]
    fn fixture_19_b_psi_default_disabled() {
        // The real kernel fails the read with EOPNOTSUPP (the lead injects
        // that); what lands on disk here is a 0-byte file, which must be an
        // error, not 0.00 pressure.
        let root = Root::open(&std::format!("{FIX}/b-psi-default-disabled")).unwrap();
        let mut buf = [0u8; BUF_LEN];
        let b = read(&root, &mut buf).unwrap();
        assert_eq!(b, b"");
        assert_eq!(parse(b), Err(ParseError::missing("some")));
    }

    #[test]
    fn fixture_19_c_psi_enabled() {
        let mem = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/19-psi-unavailable/c-psi-enabled/proc/pressure/memory"
        ));
        let p = parse(mem).unwrap();
        assert_eq!(
            p.some,
            PsiLine {
                avg10_text: b"1.21",
                avg10_centi: 121,
                avg60_centi: 87,
                avg300_centi: 30,
                total_us: 5312874,
            }
        );
        assert_eq!(
            p.full,
            Some(PsiLine {
                avg10_text: b"0.54",
                avg10_centi: 54,
                avg60_centi: 40,
                avg300_centi: 13,
                total_us: 2218813,
            })
        );
        let cpu = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/19-psi-unavailable/c-psi-enabled/proc/pressure/cpu"
        ));
        let c = parse(cpu).unwrap();
        assert_eq!(c.full, None);
        assert_eq!(c.some.avg10_text, b"12.40");
        assert_eq!((c.some.avg10_centi, c.some.total_us), (1240, 90311220));

        let root = Root::open(&std::format!("{FIX}/c-psi-enabled")).unwrap();
        let mut buf = [0u8; BUF_LEN];
        assert_eq!(parse(read(&root, &mut buf).unwrap()).unwrap(), p);
    }

    #[test]
    fn empty_and_full_only_are_errors() {
        assert_eq!(parse(b""), Err(ParseError::missing("some")));
        assert_eq!(parse(b"\n\n"), Err(ParseError::missing("some")));
        assert_eq!(
            parse(b"full avg10=0.54 avg60=0.40 avg300=0.13 total=2"),
            Err(ParseError::missing("some"))
        );
    }

    #[test]
    fn near_misses_and_garbage() {
        let m = |n| Err(ParseError::at(ParseErrorKind::Malformed, n));
        let bad = |n| Err(ParseError::at(ParseErrorKind::BadNumber, n));
        // `somex` is not `some`: ignored, so no `some` at all.
        assert_eq!(
            parse(b"somex avg10=1.00 avg60=1.00 avg300=1.00 total=1"),
            Err(ParseError::missing("some"))
        );
        assert_eq!(parse(b"some avg10=1.00 avg60=1.00 avg300=1.00"), m(1));
        assert_eq!(
            parse(b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1 avg10=2.00"),
            m(1)
        );
        assert_eq!(
            parse(b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1 x=2"),
            m(1)
        );
        assert_eq!(parse(b"some avg10 avg60=1.00 avg300=1.00 total=1"), m(1));
        assert_eq!(
            parse(b"some avg10=1.0 avg60=1.00 avg300=1.00 total=1"),
            bad(1)
        );
        assert_eq!(
            parse(b"some avg10=1.00 avg60=1.00 avg300=1.00 total="),
            bad(1)
        );
        assert_eq!(
            parse(b"some avg10=1.00 avg60=1.00 avg300=1.00 total=18446744073709551616"),
            bad(1)
        );
        let twice = b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1\n\
                      some avg10=1.00 avg60=1.00 avg300=1.00 total=1\n";
        assert_eq!(parse(twice), m(2));
        assert_eq!(
            parse(b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1\nfull avg10=x avg60=1.00 avg300=1.00 total=1"),
            bad(2)
        );
    }

    #[test]
    fn field_order_free_and_unknown_lines_ignored() {
        let p = parse(b"\nsome total=7 avg300=0.03 avg60=0.02 avg10=0.01\nnew stuff=1\n").unwrap();
        assert_eq!(p.some.avg10_text, b"0.01");
        assert_eq!(
            (
                p.some.avg10_centi,
                p.some.avg60_centi,
                p.some.avg300_centi,
                p.some.total_us
            ),
            (1, 2, 3, 7)
        );
        assert_eq!(p.full, None);
    }
}
