//! The status screen's words and padding, shared by its lines
//! ([`super::render`], the slow lines of [`super::slow_now`]) and, for
//! kernel names and the cores' limit, `--json`: the label column, numbers
//! padded to a width, kernel bytes made safe to show; and the hook both
//! renderings take for what the caller adds ([`Extra`]). Pure; no I/O.

use ufmt::{uWrite, uwrite};

use crate::kernel::cgroup::CgroupError;
use crate::plan::host::{CoreLimit, Cores};

/// What a caller adds at the end of a rendering, written to the same
/// writer: the binary's pool block, as the screen's last lines (after
/// `memlock`) or as JSON members, each starting with `,`, before the
/// status object's closing brace. Its error is the writer's.
pub type Extra<'m, W> = &'m mut dyn FnMut(&mut W) -> Result<(), <W as uWrite>::Error>;

/// Width of the label column (`memory`, `swap dev`, …), in columns.
pub const LABEL_WIDTH: usize = 12;

/// The label, padded to [`LABEL_WIDTH`] (`""` for a continuation line).
pub(super) fn label<W: uWrite>(w: &mut W, s: &str) -> Result<(), W::Error> {
    left(w, s, LABEL_WIDTH)
}

pub(super) fn spaces<W: uWrite>(w: &mut W, n: usize) -> Result<(), W::Error> {
    for _ in 0..n {
        w.write_char(' ')?;
    }
    Ok(())
}

/// ASCII `s` padded on the right to `width`.
pub(super) fn left<W: uWrite>(w: &mut W, s: &str, width: usize) -> Result<(), W::Error> {
    w.write_str(s)?;
    spaces(w, width.saturating_sub(s.chars().count()))
}

/// ASCII `s` padded on the left to `width`.
pub(super) fn right<W: uWrite>(w: &mut W, s: &str, width: usize) -> Result<(), W::Error> {
    spaces(w, width.saturating_sub(s.chars().count()))?;
    w.write_str(s)
}

/// Decimal digits of `n`.
pub(super) fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Characters `write_centi` writes for `c` (`3.33` is 4).
pub(super) fn centi_len(c: u64) -> usize {
    digits(c / 100) + 3
}

pub(super) fn right_num<W: uWrite>(w: &mut W, n: u64, width: usize) -> Result<(), W::Error> {
    spaces(w, width.saturating_sub(digits(n)))?;
    uwrite!(w, "{}", n)
}

pub(super) fn right_int<W: uWrite>(w: &mut W, n: i64, width: usize) -> Result<(), W::Error> {
    let len = digits(n.unsigned_abs()) + usize::from(n < 0);
    spaces(w, width.saturating_sub(len))?;
    uwrite!(w, "{}", n)
}

/// The characters shown for kernel bytes (a path, a device name): valid
/// UTF-8 as is, each control character and each invalid sequence as `?`,
/// so a name decoded from `\012` cannot break the screen.
pub(super) fn display_chars(b: &[u8]) -> impl Iterator<Item = char> + '_ {
    b.utf8_chunks().flat_map(|c| {
        let bad = if c.invalid().is_empty() {
            None
        } else {
            Some('?')
        };
        c.valid()
            .chars()
            .map(|ch| if ch.is_control() { '?' } else { ch })
            .chain(bad)
    })
}

pub(super) fn display_len(b: &[u8]) -> usize {
    display_chars(b).count()
}

/// Writes `b` as [`display_chars`], at most `max` characters (at least 4):
/// a longer text keeps its end behind `...`, the informative part of a
/// path. Returns the characters written.
pub(super) fn show<W: uWrite>(w: &mut W, b: &[u8], max: usize) -> Result<usize, W::Error> {
    let max = max.max(4);
    let n = display_len(b);
    let skip = if n > max {
        w.write_str("...")?;
        n - (max - 3)
    } else {
        0
    };
    for c in display_chars(b).skip(skip) {
        w.write_char(c)?;
    }
    Ok(n.min(max))
}

/// What sets the usable cores: `online`, `affinity`, `quota` or `cpuset`,
/// or `assumed` when none of them is known.
pub(super) fn limited_by(c: &Cores) -> &'static str {
    let known = c.online.is_some()
        || c.affinity.is_some()
        || c.quota_millicpus.is_some()
        || c.cpuset.is_some();
    if !known {
        return "assumed";
    }
    match c.limit {
        CoreLimit::Online => "online",
        CoreLimit::Affinity => "affinity",
        CoreLimit::Quota => "quota",
        CoreLimit::Cpuset => "cpuset",
    }
}

/// Why a cgroup limit is unknown, in the words of the screen and of
/// `--json`'s `reason` (`proc/self/cgroup: cannot open: …`, `memory.max
/// does not parse`, [`CgroupError::words`]).
pub(super) fn cgroup_error<W: uWrite>(w: &mut W, e: CgroupError) -> Result<(), W::Error> {
    match e {
        CgroupError::Read(path, e) => {
            w.write_str(path)?;
            w.write_str(": ")?;
            w.write_str(e.describe())
        }
        CgroupError::Parse(path, _) => {
            w.write_str(path)?;
            w.write_str(" does not parse")
        }
        CgroupError::TooDeep => w.write_str("cgroup path too deep"),
        CgroupError::NotMounted | CgroupError::Outside => w.write_str(e.words()),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::testkit::Out;
    use std::string::String;

    #[test]
    fn padding_helpers() {
        assert_eq!(
            (digits(0), digits(9), digits(10), digits(u64::MAX)),
            (1, 1, 2, 20)
        );
        assert_eq!((centi_len(5), centi_len(333), centi_len(12345)), (4, 4, 6));
        let mut o = Out(String::new());
        let Ok(n) = show(&mut o, b"abcdefghij", 6);
        assert_eq!((o.0.as_str(), n), ("...hij", 6));
        let mut o = Out(String::new());
        let Ok(n) = show(&mut o, "é\tz".as_bytes(), 6);
        assert_eq!((o.0.as_str(), n), ("é?z", 3));
        let mut o = Out(String::new());
        let Ok(()) = right_int(&mut o, i64::MIN, 3);
        assert_eq!(o.0, "-9223372036854775808");
    }
}
