//! A memory limit above the container that no file states, noticed from
//! what the container can see.
//!
//! On cgroup v2 a cgroup namespace (every container, each RUN step of a
//! BuildKit build) shows its own cgroup as the root: a limit set on a
//! parent (a builder's, a pod's, a slice's) binds the build while every
//! `memory.max` the mount shows reads `max`, and v2 has no
//! `hierarchical_memory_limit` to say it. The build then runs into a
//! ceiling it was never told of: the kernel reclaims its pages (and swaps
//! them to zram) over and over, a silent thrash.
//!
//! What shows it: the mount's top cgroup sees direct reclaim
//! (`memory.stat` `pgscan_direct`, counted for limit reclaim of it and its
//! ancestors) that the host's own direct reclaim (`/proc/vmstat`
//! `pgscan_direct`, which limit reclaim never counts) does not explain,
//! while the host has memory to spare (MemAvailable far above what the
//! container uses) and no limit the mount shows is near. Then what the
//! container uses is the ceiling: it is taken as a limit there (available
//! = ceiling − (usage − inactive file cache), as for a seen limit), so no
//! slot is handed out and the newest job is paused until room returns,
//! and it is said once. Use above the ceiling later (the limit's other
//! cgroups let go of memory) raises it.
//!
//! Pure arithmetic over one reading at a time; the readings are taken at
//! each row (`tick::sampler`).
//!
//! # References
//! `Documentation/admin-guide/cgroup-v2.rst` (`memory.stat`: pgscan,
//! "Namespace"); `mm/vmscan.c` (`cgroup_reclaim`: global vm events are
//! counted only for reclaim that is not a cgroup's).

use crate::tick::sampler::glance::Glance;

/// Pages of limit reclaim between two readings below which nothing is
/// noticed: a few pages reclaimed is no ceiling.
pub const MIN_SCANNED_PAGES: u64 = 256;

/// How far above what the container uses the host's MemAvailable must be
/// for a stall to be a limit's, MiB: at least this plus a quarter of the
/// use (the host's own shortage reclaims too, and is the host's to say).
pub const FAR_MB: u64 = 256;

/// A limit the mount shows with less than this available, MiB, explains
/// reclaim: nothing above it is noticed.
pub const SEEN_NEAR_MB: u64 = 64;

/// One reading, at a row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// What the mount's top cgroup uses, MiB (`memory.current`).
    pub usage_mb: u64,
    /// Its inactive file cache, MiB (reclaimed before anything else).
    pub inactive_mb: u64,
    /// Its `memory.stat` `pgscan_direct`, pages.
    pub cg_scanned: u64,
    /// The host's `/proc/vmstat` `pgscan_direct`, pages; `None` unread.
    pub host_scanned: Option<u64>,
    /// The host's MemAvailable, MiB.
    pub host_avail_mb: u64,
    /// The tightest limit the mount shows: its available memory, MiB.
    pub seen_avail_mb: Option<u64>,
}

/// The reading of glance `g`, when it carries one (a row's, on v2 with a
/// mount that hides the cgroups above it).
pub fn reading(g: &Glance) -> Option<Reading> {
    let (top, host) = g.top_reclaim?;
    Some(Reading {
        usage_mb: top.usage_bytes >> 20,
        inactive_mb: top.inactive_file_bytes >> 20,
        cg_scanned: top.pgscan_direct,
        host_scanned: host,
        host_avail_mb: g.mem_avail_mb,
        seen_avail_mb: g.cg_mem_avail_mb,
    })
}

/// What was noticed, said once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Noticed {
    /// The ceiling, MiB.
    pub ceiling_mb: u64,
    /// The host's MemAvailable then, MiB.
    pub host_avail_mb: u64,
}

/// The ceiling noticed so far, and the last reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ceiling {
    last: Option<Reading>,
    ceiling_mb: Option<u64>,
}

impl Ceiling {
    /// Nothing read, nothing noticed.
    pub const fn new() -> Ceiling {
        Ceiling {
            last: None,
            ceiling_mb: None,
        }
    }

    /// The ceiling, MiB, once noticed.
    pub fn ceiling_mb(&self) -> Option<u64> {
        self.ceiling_mb
    }

    /// Takes in reading `r`; returns what was noticed when a ceiling is
    /// first seen (see the module documentation).
    pub fn observe(&mut self, r: Reading) -> Option<Noticed> {
        let prev = self.last.replace(r)?;
        let cg = r.cg_scanned.saturating_sub(prev.cg_scanned);
        let host = match (r.host_scanned, prev.host_scanned) {
            (Some(now), Some(then)) => now.saturating_sub(then),
            _ => 0,
        };
        let limit_reclaim = cg >= MIN_SCANNED_PAGES && cg > host;
        let far = r.host_avail_mb >= FAR_MB.saturating_add(r.usage_mb / 4);
        let seen_near = r.seen_avail_mb.is_some_and(|a| a < SEEN_NEAR_MB);
        let first = self.ceiling_mb.is_none();
        if limit_reclaim && far && !seen_near {
            self.ceiling_mb = Some(r.usage_mb);
            return first.then_some(Noticed {
                ceiling_mb: r.usage_mb,
                host_avail_mb: r.host_avail_mb,
            });
        }
        if let Some(c) = self.ceiling_mb.as_mut() {
            *c = (*c).max(r.usage_mb);
        }
        None
    }

    /// `usable_mb` bounded by what is available under the ceiling at the
    /// last reading (ceiling − (usage − inactive file cache)); as given
    /// before a ceiling is noticed.
    pub fn bound(&self, usable_mb: u64) -> u64 {
        match (self.ceiling_mb, self.last) {
            (Some(c), Some(r)) => {
                let held = r.usage_mb.saturating_sub(r.inactive_mb);
                usable_mb.min(c.saturating_sub(held))
            }
            _ => usable_mb,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lane in a v2 cgroup namespace under a 2,560 MiB parent, on a host
    /// with 20 GiB available.
    fn at(usage_mb: u64, cg: u64, host: u64) -> Reading {
        Reading {
            usage_mb,
            inactive_mb: 10,
            cg_scanned: cg,
            host_scanned: Some(host),
            host_avail_mb: 20_480,
            seen_avail_mb: None,
        }
    }

    #[test]
    fn limit_reclaim_with_the_host_far_above_is_a_ceiling_said_once() {
        let mut c = Ceiling::new();
        assert_eq!(c.observe(at(1200, 0, 500)), None);
        assert_eq!(c.observe(at(2400, 0, 500)), None);
        assert_eq!(c.bound(20_000), 20_000);
        let n = c.observe(at(2550, 90_000, 500));
        assert_eq!(
            n,
            Some(Noticed {
                ceiling_mb: 2550,
                host_avail_mb: 20_480
            })
        );
        // Available under it: 2550 − (2550 − 10).
        assert_eq!(c.bound(20_000), 10);
        // Still reclaiming: said once; the ceiling is where it reclaims.
        assert_eq!(c.observe(at(2548, 180_000, 500)), None);
        assert_eq!(c.ceiling_mb(), Some(2548));
        // Jobs ended: room again, under the ceiling.
        assert_eq!(c.observe(at(1500, 180_000, 500)), None);
        assert_eq!(c.bound(20_000), 2548 - 1490);
        // Used above it without reclaim: the ceiling rises.
        c.observe(at(2700, 180_000, 500));
        assert_eq!(c.ceiling_mb(), Some(2700));
    }

    #[test]
    fn the_host_s_own_shortage_or_a_seen_limit_is_no_ceiling() {
        // The host's direct reclaim explains the cgroup's.
        let mut c = Ceiling::new();
        c.observe(at(2400, 0, 0));
        assert_eq!(c.observe(at(2550, 90_000, 95_000)), None);
        // The host has little to spare.
        let mut c = Ceiling::new();
        let short = |r: Reading| Reading {
            host_avail_mb: 700,
            ..r
        };
        c.observe(short(at(2400, 0, 0)));
        assert_eq!(c.observe(short(at(2550, 90_000, 0))), None);
        // A limit the mount shows is near: it is the one reclaiming.
        let mut c = Ceiling::new();
        let seen = |r: Reading| Reading {
            seen_avail_mb: Some(20),
            ..r
        };
        c.observe(seen(at(2400, 0, 0)));
        assert_eq!(c.observe(seen(at(2550, 90_000, 0))), None);
        // A few pages is no ceiling.
        let mut c = Ceiling::new();
        c.observe(at(2400, 0, 0));
        assert_eq!(c.observe(at(2550, MIN_SCANNED_PAGES - 1, 0)), None);
        assert_eq!(c.ceiling_mb(), None);
    }
}
