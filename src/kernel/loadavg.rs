//! `/proc/loadavg`: load averages and task counts.
//!
//! One line, `8.12 7.58 6.86 1/121 17580`: the 1-, 5- and 15-minute load
//! averages (printed by the kernel as `%lu.%02lu`), runnable/total
//! scheduling entities, and the last PID handed out.
//!
//! Load counts tasks that are runnable *or* in uninterruptible sleep (state
//! D), so on a small board it says little about CPU use (fixture 18: load 8
//! on one idle core). headroom reports it verbatim and takes CPU saturation
//! from [`crate::kernel::stat`] instead.
//!
//! # References
//! proc(5) `/proc/loadavg`; `fs/proc/loadavg.c`.

use crate::kernel::parse::{ParseError, ParseErrorKind, fields, parse_u64, trim};
use crate::kernel::root::{ReadError, Root};

/// Path of the file, relative to the root.
pub const PATH: &str = "proc/loadavg";

/// Buffer size for [`read`], in bytes.
///
/// The file is one line of about 30 bytes (25 on a 6.18 host); its widest
/// possible form (three `%lu.%02lu` loads, two 10-digit counts, a 7-digit
/// PID) stays under 80 bytes. 128 bytes leaves room.
pub const BUF_LEN: usize = 128;

/// The parsed contents of `/proc/loadavg`; borrows the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadAvg<'a> {
    /// The 1-minute load average exactly as the kernel printed it (`b"8.12"`),
    /// for the CSV's `load1` column.
    pub load1_text: &'a [u8],
    /// 1-minute load average in hundredths (`8.12` → 812).
    pub load1_centi: u64,
    /// 5-minute load average in hundredths.
    pub load5_centi: u64,
    /// 15-minute load average in hundredths.
    pub load15_centi: u64,
    /// Scheduling entities currently runnable (the number before `/`).
    pub runnable: u64,
    /// Scheduling entities (processes and threads) that exist (after `/`).
    pub threads: u64,
    /// The PID most recently allocated in the reader's PID namespace.
    pub last_pid: u64,
}

/// Parses `/proc/loadavg`.
///
/// Exactly five white-space-separated fields are required. Each load must be
/// `<digits>.<2 digits>` as the kernel prints it; the fourth field is
/// `<runnable>/<threads>`.
///
/// # Errors
/// - `Missing("loadavg")` for empty input;
/// - `Malformed` (line 1) for a wrong field count or a fourth field without `/`;
/// - `BadNumber` (line 1) for a load not in `d.dd` form or a bad integer.
pub fn parse(b: &[u8]) -> Result<LoadAvg<'_>, ParseError> {
    let line = trim(b);
    if line.is_empty() {
        return Err(ParseError::missing("loadavg"));
    }
    let malformed = ParseError::at(ParseErrorKind::Malformed, 1);
    let bad = ParseError::at(ParseErrorKind::BadNumber, 1);
    if line.contains(&b'\n') {
        return Err(malformed);
    }
    let mut f = fields(line);
    let (Some(l1), Some(l5), Some(l15), Some(tasks), Some(pid), None) =
        (f.next(), f.next(), f.next(), f.next(), f.next(), f.next())
    else {
        return Err(malformed);
    };
    let load = |t: &[u8]| parse_centi_exact(t).ok_or(bad);
    let (run, thr) = split_once(tasks, b'/').ok_or(malformed)?;
    Ok(LoadAvg {
        load1_text: l1,
        load1_centi: load(l1)?,
        load5_centi: load(l5)?,
        load15_centi: load(l15)?,
        runnable: parse_u64(run).ok_or(bad)?,
        threads: parse_u64(thr).ok_or(bad)?,
        last_pid: parse_u64(pid).ok_or(bad)?,
    })
}

/// Parses a non-negative decimal with one or two decimals into hundredths:
/// `"8.12"` → 812, `"0.5"` → 50.
///
/// `None` for anything else: no decimals (`"8"`), three or more (`"8.123"`),
/// a sign, white space, an empty part (`".5"`, `"8."`), or overflow of `u64`.
///
/// ```
/// use headroom::kernel::loadavg::parse_centi;
/// assert_eq!(parse_centi(b"8.12"), Some(812));
/// assert_eq!(parse_centi(b"0.5"), Some(50));
/// assert_eq!(parse_centi(b"8"), None);
/// ```
pub fn parse_centi(b: &[u8]) -> Option<u64> {
    let (int, frac) = split_once(b, b'.')?;
    let whole = parse_u64(int)?;
    let frac_v = match frac.len() {
        1 => parse_u64(frac)?.checked_mul(10)?,
        2 => parse_u64(frac)?,
        _ => return None,
    };
    whole.checked_mul(100)?.checked_add(frac_v)
}

/// Like [`parse_centi`], but only the kernel's own `%lu.%02lu` form (exactly
/// two decimals) is accepted; used for /proc/loadavg and PSI files.
pub(crate) fn parse_centi_exact(b: &[u8]) -> Option<u64> {
    let dot = b.iter().position(|&c| c == b'.')?;
    if b.len() != dot + 3 {
        return None;
    }
    parse_centi(b)
}

/// Splits `b` at the first `sep`, dropping it.
fn split_once(b: &[u8], sep: u8) -> Option<(&[u8], &[u8])> {
    let i = b.iter().position(|&c| c == sep)?;
    Some((b.get(..i)?, b.get(i + 1..)?))
}

/// Reads [`PATH`] under `root` into `buf` (give it [`BUF_LEN`] bytes) and
/// returns the bytes read, for [`parse`].
///
/// # Errors
/// See [`ReadError`].
pub fn read<'b>(root: &Root, buf: &'b mut [u8]) -> Result<&'b [u8], ReadError> {
    root.read(PATH, buf)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    const T0: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/18-loadavg-high-while-cpu-idle/t0/proc/loadavg"
    ));
    const T1: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/18-loadavg-high-while-cpu-idle/t1/proc/loadavg"
    ));

    #[test]
    fn fixture_18_loadavg_high_while_cpu_idle() {
        let t1 = parse(T1).unwrap();
        assert_eq!(
            t1,
            LoadAvg {
                load1_text: b"8.12",
                load1_centi: 812,
                load5_centi: 758,
                load15_centi: 686,
                runnable: 1,
                threads: 121,
                last_pid: 17580,
            }
        );
        let t0 = parse(T0).unwrap();
        assert_eq!(t0.load1_text, b"8.05");
        assert_eq!(
            (t0.load1_centi, t0.load5_centi, t0.load15_centi),
            (805, 756, 685)
        );
    }

    #[test]
    fn fixture_18_read_through_root() {
        let root = Root::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/18-loadavg-high-while-cpu-idle/t1"
        ))
        .unwrap();
        let mut buf = [0u8; BUF_LEN];
        let b = read(&root, &mut buf).unwrap();
        assert_eq!(parse(b).unwrap().load1_centi, 812);
    }

    #[test]
    fn no_trailing_newline_and_wsl_constant() {
        let l = parse(b"0.52 0.58 0.59 1/10 42").unwrap();
        assert_eq!(l.load1_text, b"0.52");
        assert_eq!(l.load15_centi, 59);
    }

    #[test]
    fn rejects_empty_and_garbage() {
        assert_eq!(parse(b""), Err(ParseError::missing("loadavg")));
        assert_eq!(parse(b" \n"), Err(ParseError::missing("loadavg")));
        let malformed = Err(ParseError::at(ParseErrorKind::Malformed, 1));
        let bad = Err(ParseError::at(ParseErrorKind::BadNumber, 1));
        assert_eq!(parse(b"8.12 7.58 6.86 1/121"), malformed);
        assert_eq!(parse(b"8.12 7.58 6.86 1/121 5 6"), malformed);
        assert_eq!(parse(b"8.12 7.58 6.86 1-121 5"), malformed);
        assert_eq!(parse(b"8.12 7.58 6.86 1/121 5\n1 2 3 1/2 3\n"), malformed);
        // Locale-style comma, as `uptime` printed it in fixture 18's report.
        assert_eq!(parse(b"8,05 7.56 6.85 1/121 17577"), bad);
        assert_eq!(parse(b"8.1 7.56 6.85 1/121 17577"), bad);
        assert_eq!(parse(b"8 7.56 6.85 1/121 17577"), bad);
        assert_eq!(parse(b"8.05 7.56 6.85 1/ 17577"), bad);
        assert_eq!(parse(b"8.05 7.56 6.85 1/x 17577"), bad);
        assert_eq!(parse(b"8.05 7.56 6.85 1/121 -1"), bad);
        assert_eq!(parse(b"\xff\xfe"), malformed);
    }

    #[test]
    fn centi_forms_and_overflow() {
        assert_eq!(parse_centi(b"8.12"), Some(812));
        assert_eq!(parse_centi(b"0.00"), Some(0));
        assert_eq!(parse_centi(b"12.4"), Some(1240));
        assert_eq!(parse_centi(b"8"), None);
        assert_eq!(parse_centi(b"8."), None);
        assert_eq!(parse_centi(b".5"), None);
        assert_eq!(parse_centi(b"8.123"), None);
        assert_eq!(parse_centi(b"-1.00"), None);
        assert_eq!(parse_centi(b"1.2.3"), None);
        assert_eq!(parse_centi(b" 1.00"), None);
        assert_eq!(parse_centi(b""), None);
        assert_eq!(parse_centi(b"184467440737095516.15"), Some(u64::MAX));
        assert_eq!(parse_centi(b"184467440737095516.16"), None);
        assert_eq!(parse_centi(b"99999999999999999999.00"), None);
        assert_eq!(parse_centi_exact(b"8.1"), None);
        assert_eq!(parse_centi_exact(b"8.10"), Some(810));
        let long = parse(b"184467440737095516.15 0.00 0.00 4294967295/4294967295 4194304").unwrap();
        assert_eq!(long.load1_centi, u64::MAX);
    }
}
