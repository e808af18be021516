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

/// What a build's jobs weigh against the room: the growth still ahead of
/// the jobs it runs, and what one more would add. Token handout
/// (`handout`) and pool admission (`admit`) weigh `k` jobs as
/// [`Weight::growth_at`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weight {
    /// Jobs whose growth is in `growth_mb` (seen running, or paused).
    pub counted: u32,
    /// What they may still grow by, MiB, before `held_mb` is taken off.
    pub growth_mb: u64,
    /// Taken off the growth, MiB: what the jobs hold already when every
    /// job is weighed at one peak ([`Weight::uniform`]); 0 when
    /// `growth_mb` is already each job's own peak less what it holds.
    pub held_mb: u64,
    /// What a job not counted yet may grow to, MiB (at least 1).
    pub next_mb: u64,
    /// Jobs paused now: their cores are idle, and as many more jobs may
    /// start beyond the cap when memory holds them (`handout`).
    pub paused: u32,
}

impl Weight {
    /// Every job at `peak_mb`, its compilers holding `held_mb`: the
    /// weight when no job has a peak of its own ([`growth_mb`]).
    pub fn uniform(peak_mb: u64, held_mb: u64) -> Weight {
        Weight {
            counted: 0,
            growth_mb: 0,
            held_mb,
            next_mb: peak_mb.max(1),
            paused: 0,
        }
    }

    /// The growth `k` jobs may still add, MiB: the counted jobs' growth,
    /// plus [`Weight::next_mb`] for each job beyond them, less what is
    /// held; at least 0. For [`Weight::uniform`], `growth_mb(k, peak,
    /// held)`.
    pub fn growth_at(&self, k: u32) -> u64 {
        let more = u64::from(k.saturating_sub(self.counted));
        self.growth_mb
            .saturating_add(more.saturating_mul(self.next_mb))
            .saturating_sub(self.held_mb)
    }
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
    fn a_uniform_weight_is_the_one_peak_rule_and_a_per_job_one_adds_the_next() {
        for (k, peak, held) in [
            (3, 100, 250),
            (3, 100, 400),
            (0, 7, 0),
            (u32::MAX, u64::MAX, 0),
        ] {
            assert_eq!(
                Weight::uniform(peak, held).growth_at(k),
                growth_mb(k, peak, held)
            );
        }
        // Two jobs seen, 400 MiB still ahead of them; new ones at 65.
        let w = Weight {
            counted: 2,
            growth_mb: 400,
            held_mb: 0,
            next_mb: 65,
            paused: 1,
        };
        assert_eq!(w.growth_at(1), 400);
        assert_eq!(w.growth_at(2), 400);
        assert_eq!(w.growth_at(4), 530);
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
