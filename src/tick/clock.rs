//! Wall-clock time as the CSV writes it: Unix seconds and ISO 8601 UTC.
//!
//! # References
//! clock_gettime(2); the civil-calendar conversion is the proleptic
//! Gregorian calendar (days since 1970-01-01), as `date -u` prints it.

/// `YYYY-MM-DDTHH:MM:SSZ`: 20 bytes, always ASCII.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iso([u8; 20]);

impl Iso {
    /// The UTC time of `epoch` (Unix seconds) in the CSV's `iso` form.
    ///
    /// Years past 9999 are clamped to 9999-12-31T23:59:59Z, which keeps the
    /// width fixed; no real clock reaches them.
    ///
    /// ```
    /// use headroom::tick::clock::Iso;
    /// assert_eq!(Iso::from_epoch(1796000585).as_str(), "2026-11-30T01:03:05Z");
    /// assert_eq!(Iso::from_epoch(0).as_str(), "1970-01-01T00:00:00Z");
    /// ```
    pub fn from_epoch(epoch: u64) -> Iso {
        const MAX: u64 = 253_402_300_799; // 9999-12-31T23:59:59Z
        let t = epoch.min(MAX);
        let days = t / 86_400;
        let secs = t % 86_400;
        let (y, m, d) = civil_from_days(days);
        let mut b = *b"0000-00-00T00:00:00Z";
        put(&mut b[0..4], y);
        put(&mut b[5..7], m);
        put(&mut b[8..10], d);
        put(&mut b[11..13], secs / 3600);
        put(&mut b[14..16], secs / 60 % 60);
        put(&mut b[17..19], secs % 60);
        Iso(b)
    }

    /// Accepts text of the exact shape `YYYY-MM-DDTHH:MM:SSZ` (digits where
    /// digits belong); `None` otherwise. Calendar validity is not checked:
    /// the text is kept as the CSV had it.
    pub fn parse(b: &[u8]) -> Option<Iso> {
        let shape = b"0000-00-00T00:00:00Z";
        let arr: [u8; 20] = b.try_into().ok()?;
        // An indexed loop: `summarize` checks one per row.
        for i in 0..arr.len() {
            let (c, s) = (arr[i], shape[i]);
            let ok = if s == b'0' {
                c.is_ascii_digit()
            } else {
                c == s
            };
            if !ok {
                return None;
            }
        }
        Some(Iso(arr))
    }

    /// The text, e.g. `2026-11-30T01:03:05Z`.
    pub fn as_str(&self) -> &str {
        // Only ASCII digits and separators are ever stored.
        core::str::from_utf8(&self.0).unwrap_or("1970-01-01T00:00:00Z")
    }
}

/// Writes `v` as zero-padded decimal filling `out`.
fn put(out: &mut [u8], mut v: u64) {
    for slot in out.iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// (year, month 1–12, day 1–31) of `days` since 1970-01-01.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Shift the epoch to 0000-03-01 so leap days fall at the end of a year.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// Unix seconds now, from CLOCK_REALTIME (clamped at 0 before 1970).
pub fn now_epoch() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    u64::try_from(ts.tv_sec).unwrap_or(0)
}

/// CLOCK_REALTIME now as (Unix seconds, nanoseconds); seconds clamped at 0
/// before 1970.
pub fn now_realtime() -> (u64, u32) {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    let s = u64::try_from(ts.tv_sec).unwrap_or(0);
    let ns = u32::try_from(ts.tv_nsec).unwrap_or(0);
    (s, ns)
}

/// Milliseconds, rounded up, from `now` (seconds, nanoseconds, as
/// [`now_realtime`] gives) until the second `epoch` begins; 0 when it has.
///
/// ```
/// use headroom::tick::clock::ms_until_second;
/// assert_eq!(ms_until_second(101, (100, 250_000_000)), 750);
/// assert_eq!(ms_until_second(101, (100, 999_999_999)), 1);
/// assert_eq!(ms_until_second(101, (101, 0)), 0);
/// assert_eq!(ms_until_second(101, (99, 500_000_000)), 1500);
/// ```
pub fn ms_until_second(epoch: u64, now: (u64, u32)) -> u64 {
    let (s, ns) = now;
    if s >= epoch {
        return 0;
    }
    (epoch - s)
        .saturating_mul(1_000_000_000)
        .saturating_sub(u64::from(ns))
        .div_ceil(1_000_000)
}

/// Nanoseconds from CLOCK_MONOTONIC, for tick scheduling.
pub fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let s = u64::try_from(ts.tv_sec).unwrap_or(0);
    let ns = u64::try_from(ts.tv_nsec).unwrap_or(0);
    s.saturating_mul(1_000_000_000).saturating_add(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leap_days_and_century_rules() {
        assert_eq!(
            Iso::from_epoch(951_782_400).as_str(),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            Iso::from_epoch(1_709_164_800).as_str(),
            "2024-02-29T00:00:00Z"
        );
        assert_eq!(
            Iso::from_epoch(4_107_456_000).as_str(),
            "2100-02-28T00:00:00Z"
        );
        assert_eq!(
            Iso::from_epoch(4_107_542_400).as_str(),
            "2100-03-01T00:00:00Z"
        );
        assert_eq!(
            Iso::from_epoch(1_735_689_599).as_str(),
            "2024-12-31T23:59:59Z"
        );
        assert_eq!(Iso::from_epoch(u64::MAX).as_str(), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn ms_until_second_rounds_up_and_saturates() {
        assert_eq!(ms_until_second(10, (9, 0)), 1000);
        assert_eq!(ms_until_second(10, (9, 1)), 1000);
        assert_eq!(ms_until_second(10, (9, 999_000_001)), 1);
        assert_eq!(ms_until_second(10, (11, 5)), 0);
        assert_eq!(
            ms_until_second(u64::MAX, (0, 0)),
            u64::MAX.div_ceil(1_000_000)
        );
    }

    #[test]
    fn parse_checks_shape() {
        let t = Iso::parse(b"2026-11-30T01:03:05Z").unwrap();
        assert_eq!(t.as_str(), "2026-11-30T01:03:05Z");
        assert_eq!(Iso::parse(b"2026-11-30 01:03:05Z"), None);
        assert_eq!(Iso::parse(b"2026-11-30T01:03:05"), None);
        assert_eq!(Iso::parse(b"2026-1x-30T01:03:05Z"), None);
    }
}
