//! How every report writes a number: fixed-point decimals (hundredths,
//! thousandths), seconds, durations, GiB, and a stage's name; one place
//! for each, so the summary, the plot, the actions table, `status` and
//! `actions --remote` write a figure the same way.
//!
//! Integers only: a figure is kept as a whole number of its smallest unit
//! (hundredths of a core or GiB, milliseconds, tenths of a percent) and
//! written with the point put back. Rounding is half up ([`div_round`]).
//!
//! In `followed`, the lowest layer that writes figures
//! ([`crate::followed::rusage`]'s `RUN:` block); every layer above uses it.

use ufmt::{uWrite, uwrite};

/// Writes `v / scale` as a decimal with as many fraction digits as `scale`
/// has zeros (`scale` is 10, 100 or 1000): 12345 at 1000 → `12.345`, 7 at
/// 100 → `0.07`.
///
/// # Errors
/// The writer's error.
pub fn fixed<W: uWrite + ?Sized>(w: &mut W, v: u64, scale: u64) -> Result<(), W::Error> {
    uwrite!(w, "{}.", v / scale)?;
    let frac = v % scale;
    let mut s = scale / 10;
    while s > 1 && frac < s {
        w.write_char('0')?;
        s /= 10;
    }
    uwrite!(w, "{}", frac)
}

/// Writes hundredths with two decimals (`1.72`): cores, GiB, PSI averages.
///
/// # Errors
/// The writer's error.
pub fn write_centi<W: uWrite + ?Sized>(w: &mut W, centi: u64) -> Result<(), W::Error> {
    fixed(w, centi, 100)
}

/// Writes milliseconds as seconds with three decimals (`12.345`).
///
/// # Errors
/// The writer's error.
pub fn write_milli<W: uWrite + ?Sized>(w: &mut W, ms: u64) -> Result<(), W::Error> {
    fixed(w, ms, 1000)
}

/// Writes milliseconds as seconds: whole (`60`) or with 3 decimals (2500
/// → `2.500`).
///
/// # Errors
/// The writer's error.
pub fn seconds<W: uWrite + ?Sized>(w: &mut W, ms: u64) -> Result<(), W::Error> {
    if ms.is_multiple_of(1000) {
        uwrite!(w, "{}", ms / 1000)
    } else {
        write_milli(w, ms)
    }
}

/// Writes seconds as `45s`, `12m05s`, `3h07m` or `2d05h` (cut, not
/// rounded, to the two largest units).
///
/// # Errors
/// The writer's error.
pub fn duration<W: uWrite + ?Sized>(w: &mut W, s: u64) -> Result<(), W::Error> {
    if s >= 86400 {
        let h = s / 3600 % 24;
        uwrite!(w, "{}d{}{}h", s / 86400, if h < 10 { "0" } else { "" }, h)
    } else if s < 60 {
        uwrite!(w, "{}s", s)
    } else if s < 3600 {
        uwrite!(
            w,
            "{}m{}{}s",
            s / 60,
            if s % 60 < 10 { "0" } else { "" },
            s % 60
        )
    } else {
        let m = s / 60 % 60;
        uwrite!(w, "{}h{}{}m", s / 3600, if m < 10 { "0" } else { "" }, m)
    }
}

/// A stage ([`crate::followed::text::Stage`]) as the reports show it: `?`
/// when empty.
pub fn stage_str(s: &str) -> &str {
    if s.is_empty() { "?" } else { s }
}

/// `a / b` rounded half up, clamped to `u64::MAX`; 0 when `b` is 0.
pub fn div_round(a: u128, b: u128) -> u64 {
    if b == 0 {
        return 0;
    }
    let q = a / b;
    let r = a % b;
    // r >= b - r  <=>  2r >= b, without overflowing.
    let q = if r >= b - r { q.saturating_add(1) } else { q };
    u64::try_from(q).unwrap_or(u64::MAX)
}

/// KiB as hundredths of a GiB (2^30 bytes), rounded half up.
pub fn gib_centi(kib: u64) -> u64 {
    div_round(u128::from(kib).saturating_mul(100), 1024 * 1024)
}

/// Bytes as hundredths of a GiB (2^30 bytes), rounded half up.
pub fn gib_centi_of_bytes(bytes: u64) -> u64 {
    div_round(u128::from(bytes) * 100, 1 << 30)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a writer wrote.
    fn shown(
        f: impl FnOnce(&mut heapless::String<32>) -> Result<(), heapless::CapacityError>,
    ) -> heapless::String<32> {
        let mut s = heapless::String::new();
        f(&mut s).unwrap();
        s
    }

    #[test]
    fn fixed_point_keeps_its_zeros() {
        assert_eq!(shown(|s| fixed(s, 12345, 1000)).as_str(), "12.345");
        assert_eq!(shown(|s| fixed(s, 12005, 1000)).as_str(), "12.005");
        assert_eq!(shown(|s| fixed(s, 3000, 1000)).as_str(), "3.000");
        assert_eq!(shown(|s| fixed(s, 7, 10)).as_str(), "0.7");
        assert_eq!(shown(|s| write_milli(s, 5)).as_str(), "0.005");
        assert_eq!(shown(|s| write_centi(s, 7)).as_str(), "0.07");
        assert_eq!(shown(|s| write_centi(s, 172)).as_str(), "1.72");
        assert_eq!(
            shown(|s| write_centi(s, u64::MAX)).as_str(),
            "184467440737095516.15"
        );
        assert_eq!(shown(|s| seconds(s, 60_000)).as_str(), "60");
        assert_eq!(shown(|s| seconds(s, 2500)).as_str(), "2.500");
    }

    #[test]
    fn durations() {
        let d = |t| shown(|s| duration(s, t));
        assert_eq!(d(0), "0s");
        assert_eq!(d(59), "59s");
        assert_eq!(d(65), "1m05s");
        assert_eq!(d(3600 + 7 * 60 + 5), "1h07m");
        assert_eq!(d(86400 * 2 + 5 * 3600 + 59), "2d05h");
        assert_eq!(d(u64::MAX), "213503982334601d07h");
    }

    #[test]
    fn stages_and_rounding() {
        assert_eq!(stage_str(""), "?");
        assert_eq!(stage_str("link"), "link");
        assert_eq!(div_round(5, 10), 1);
        assert_eq!(div_round(4, 10), 0);
        assert_eq!(div_round(1, 0), 0);
        assert_eq!(div_round(u128::MAX, 1), u64::MAX);
        assert_eq!(gib_centi(1024 * 1024), 100);
        assert_eq!(gib_centi(5243), 1); // 0.005 GiB rounds up
        assert_eq!(gib_centi_of_bytes(1 << 30), 100);
        assert_eq!(gib_centi_of_bytes(5_368_709), 0);
        assert_eq!(gib_centi_of_bytes(5_368_710), 1);
    }
}
