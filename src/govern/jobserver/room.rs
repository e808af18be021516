//! The governor's one model of memory: what the build can use, the room
//! left for new jobs, and what running jobs may still grow by. Token
//! handout (`jobserver::handout`), pool admission (`jobserver::admit`) and
//! pausing (`jobserver::pause_rule`) all call these; the peak per job they
//! weigh is `jobserver::estimate`'s.

use crate::report::summary::binding::avail_mb;
use crate::tick::sampler::glance::Glance;

/// Memory kept free beyond the running jobs' growth, MiB: room for make,
/// the shell, headroom and the kernel's own needs between two ticks.
pub const RESERVE_MB: u64 = 32;

/// The room for new jobs, MiB: `left_mb` (usable memory, less what other
/// builds reserve when they share a pool) − `growth_mb` (what the running
/// jobs may still grow by) − [`RESERVE_MB`]; negative when the running
/// ones may outgrow memory; saturated, never wrapped. The one room
/// formula: token handout, pool admission and pausing all use it.
pub fn room_mb(left_mb: i128, growth_mb: u64) -> i64 {
    let r = left_mb
        .saturating_sub(i128::from(growth_mb))
        .saturating_sub(i128::from(RESERVE_MB));
    i64::try_from(r).unwrap_or(if r < 0 { i64::MIN } else { i64::MAX })
}

/// The growth `k` jobs may still add at `peak_mb` each when their
/// compilers hold `held_mb` already: `k × peak − held`, at least 0, MiB.
pub fn growth_mb(k: u32, peak_mb: u64, held_mb: u64) -> u64 {
    u64::from(k).saturating_mul(peak_mb).saturating_sub(held_mb)
}

/// The memory the build can use now, MiB: MemAvailable, or the tightest
/// cgroup's available memory when smaller (the report's one rule,
/// `report::summary::binding`); `None` when /proc/meminfo could not be
/// read at this glance.
pub fn usable_mb(g: &Glance) -> Option<u64> {
    g.mem_known
        .then(|| avail_mb(g.mem_avail_mb, g.cg_mem_avail_mb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_room_formula_saturates() {
        assert_eq!(room_mb(1000, 600), 1000 - 600 - RESERVE_MB as i64);
        assert_eq!(room_mb(0, 0), -(RESERVE_MB as i64));
        assert_eq!(room_mb(i128::MAX, 0), i64::MAX);
        assert_eq!(room_mb(i128::MIN, u64::MAX), i64::MIN);
        assert_eq!(growth_mb(3, 100, 250), 50);
        assert_eq!(growth_mb(3, 100, 400), 0);
        assert_eq!(growth_mb(u32::MAX, u64::MAX, 0), u64::MAX);
    }

    #[test]
    fn usable_memory_is_the_smaller_of_host_and_cgroup() {
        let g = |known, host, cg| Glance {
            mem_known: known,
            mem_avail_mb: host,
            cg_mem_avail_mb: cg,
            ..Glance::default()
        };
        assert_eq!(usable_mb(&g(true, 900, None)), Some(900));
        assert_eq!(usable_mb(&g(true, 900, Some(400))), Some(400));
        assert_eq!(usable_mb(&g(true, 300, Some(400))), Some(300));
        assert_eq!(usable_mb(&g(false, 900, Some(400))), None);
    }
}
