//! Counters turned into per-second rates between two ticks.
//!
//! The kernel's counters (/proc/vmstat, the block devices' stat lines)
//! only grow; a rate is the growth over the wall time between the two
//! reads, measured on CLOCK_MONOTONIC in nanoseconds
//! ([`crate::tick::clock::monotonic_ns`]), so a row's rate is
//! right whatever the interval and however late the tick ran. A counter
//! that went backwards (a reset, a re-created device) gives 0 growth
//! here: never a huge rate.
//!
//! # References
//! clock_gettime(2) (`CLOCK_MONOTONIC`).

use crate::tick::row::Decimal;

/// Nanoseconds per second.
const NS: u128 = 1_000_000_000;

/// Growth of a counter from `prev` to `cur`: 0 when it went backwards.
pub fn growth(prev: u64, cur: u64) -> u64 {
    cur.saturating_sub(prev)
}

/// `events` over `dt_ns` nanoseconds, per second, rounded half up; `None`
/// for an empty interval.
pub fn per_second(events: u64, dt_ns: u64) -> Option<u64> {
    let dt = u128::from(dt_ns);
    (dt > 0).then(|| {
        let v = (u128::from(events) * NS + dt / 2) / dt;
        u64::try_from(v).unwrap_or(u64::MAX)
    })
}

/// `bytes` over `dt_ns` nanoseconds in MiB/s, two decimals (rounded half
/// up); `None` for an empty interval.
pub fn mibps(bytes: u64, dt_ns: u64) -> Option<Decimal> {
    let dt = u128::from(dt_ns) << 20;
    (dt > 0).then(|| {
        let centi = (u128::from(bytes) * NS * 100 + dt / 2) / dt;
        Decimal::from_centi(u64::try_from(centi).unwrap_or(u64::MAX))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_round_and_need_an_interval() {
        assert_eq!(per_second(150, 1_500_000_000), Some(100));
        assert_eq!(per_second(1, 3_000_000_000), Some(0));
        assert_eq!(per_second(2, 3_000_000_000), Some(1));
        assert_eq!(per_second(5, 0), None);
        assert_eq!(per_second(u64::MAX, 1), Some(u64::MAX));
        let mib = 1 << 20;
        assert_eq!(mibps(3 * mib, 2_000_000_000).map(|d| d.centi), Some(150));
        // One 4 KiB page in a second is 0.0039 MiB/s: 0.00, not a made-up
        // 0.01.
        assert_eq!(mibps(4096, 1_000_000_000).map(|d| d.centi), Some(0));
        assert_eq!(mibps(mib, 0), None);
        assert_eq!(growth(10, 4), 0);
        assert_eq!(growth(4, 10), 6);
    }
}
