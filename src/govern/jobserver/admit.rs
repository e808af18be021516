//! Admission in a shared memory pool: how many jobs one governor may allow
//! when the other governors' leases are counted, and who gets the next slot
//! when builds want more than fits.
//!
//! Pure arithmetic over one look at the pool (taken under its lock):
//!
//! - a build allowing `k` jobs may grow by `g(k) = k × peak − held` (at
//!   least 0, `room::growth_mb`; with per-job peaks, `room::Weight`): every allowed job, running or not yet started, is assumed
//!   able to grow to the peak per job;
//! - room(k) = min(MemAvailable − Σ others' growth − g(k), for each cgroup
//!   limiting this build: its available memory − Σ growth of the others
//!   inside it − g(k)) − the reserve ([`room_mb`]); `k` is allowed while
//!   room(k) ≥ 0;
//! - jobs already running grow whatever is allowed: `k` below them
//!   reserves g(running);
//! - max-min fairness: a slot above the jobs this build runs now is left
//!   for another build that wants more, runs fewer jobs and whose peak fits
//!   in the room that is left; it takes it on its own tick. When the pool
//!   is full (that build's next job does not fit), this build allows one
//!   job fewer than it runs, down to one above the other: the slot its
//!   next ending job frees is kept by its governor (make and ninja read a
//!   returned token again at once) and taken by the other;
//! - every build keeps at least one job (its client's implicit slot), so
//!   the pool can be over its budget by those: [`Admission::over_budget`]
//!   says so;
//! - a change must be seen on two looks in a row ([`steady`]): a lease is
//!   up to a tick old while memory is read fresh, so for a tick after a job
//!   starts or ends the figures disagree by about a peak; a governor that
//!   acted on one look would grant a slot that is not there (a job ended,
//!   its memory freed, its lease still counting it held) or take back a
//!   token a client waits for (a job grew after its lease was written).
//!
//! Nothing here reads a file or the clock.

use crate::govern::jobserver::lease::{Lease, reserved_mb, taken_mb};
use crate::govern::jobserver::room::{Weight, room_mb};
use crate::kernel::cgroup::is_unseen_id;

/// A cgroup that limits this build: its identity and what is available
/// in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The inode of its directory (as leases name it), or the id of a
    /// limit above the mount (`kernel::cgroup::unseen_id`).
    pub ino: u64,
    /// Its available memory, MiB: limit − (usage − inactive file cache),
    /// as [`crate::kernel::cgroup::Available::available_bytes`] (the cache
    /// the kernel reclaims before it OOM-kills is not counted as held).
    pub available_mb: u64,
}

/// The id of the pool's budget among the limits (`budget_file`): every
/// build of the pool is inside it, and what they hold counts, as under a
/// limit above the mount (it is an `unseen_id`, of no limit's size).
pub const POOL_BUDGET_ID: u64 = crate::kernel::cgroup::UNSEEN_ID_BIT;

/// True when lease `l` is inside limit `ino`: it names it, or `ino` is
/// the pool's budget ([`POOL_BUDGET_ID`]).
pub fn is_inside(l: &Lease, ino: u64) -> bool {
    ino == POOL_BUDGET_ID || l.limits.contains(&ino)
}

/// This build's side of one admission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Own {
    /// MemAvailable, MiB.
    pub available_mb: u64,
    /// Jobs running now.
    pub running: u32,
    /// Most jobs at once (cores or `--max-jobs`).
    pub cap: u32,
    /// What its jobs weigh (`room::Weight`): the growth still ahead of
    /// those running, and the peak of its next job (`next_mb`, the
    /// governor's estimate when no job has a peak of its own).
    pub weight: Weight,
    /// What its compilers hold now, MiB (the lease says it).
    pub held_mb: u64,
}

/// What one admission decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// Jobs this build may run at once (1 ..= cap).
    pub allowed: u32,
    /// The growth it reserves with that (its lease's `growth_mb`), MiB.
    pub growth_mb: u64,
    /// Room left after that, MiB (negative: over the budget).
    pub room_mb: i64,
    /// Slots it left for builds running fewer jobs.
    pub yielded: u32,
    /// Even one job each (every build's implicit slot) does not fit.
    pub over_budget: bool,
}

/// The room, MiB, when this build reserves `own_growth` and the `others`
/// (live leases, this build's own left out) theirs.
///
/// A limit above the mount ([`is_unseen_id`]) has no usage the kernel
/// counts for every build inside: its available memory is this build's
/// side only, so the others inside take what they hold as well as what
/// they reserve ([`taken_mb`]).
pub fn room_with_leases(own_growth: u64, own: &Own, limits: &[Limit], others: &[Lease]) -> i64 {
    let mut least = i128::from(own.available_mb) - i128::from(reserved_mb(others));
    for c in limits {
        let inside = others.iter().filter(|l| is_inside(l, c.ino));
        let taken = match is_unseen_id(c.ino) {
            true => taken_mb(inside),
            false => reserved_mb(inside),
        };
        least = least.min(i128::from(c.available_mb) - i128::from(taken));
    }
    room_mb(least, own_growth)
}

/// How many jobs this build may allow now.
pub fn admit(own: &Own, limits: &[Limit], others: &[Lease]) -> Admission {
    let peak = own.weight.next_mb.max(1);
    let cap = own.cap.max(1);
    // Jobs already running grow whatever is allowed: `k` below them
    // reserves what they need.
    let need = |k: u32| own.weight.growth_at(k.max(own.running));
    let room_at = |k: u32| room_with_leases(need(k), own, limits, others);
    // The most that fits, by memory alone (1 at least: the implicit slot).
    let mut allowed = 1;
    while allowed < cap && room_at(allowed + 1) >= 0 {
        allowed += 1;
    }
    let mut yielded = 0;
    while allowed > 1 && yields(allowed, own.running, peak, room_at(allowed), others) {
        allowed -= 1;
        yielded += 1;
    }
    let growth_mb = need(allowed);
    let room_mb = room_at(allowed);
    Admission {
        allowed,
        growth_mb,
        room_mb,
        yielded,
        over_budget: room_at(1) < 0,
    }
}

/// Max-min: whether a build allowing `allowed` jobs (running `running`,
/// `left` MiB of room after them) leaves its last slot to another. Above
/// what it runs, for a build that wants more, runs fewer and whose next
/// job fits once this slot is left. At or below what it runs (the slot
/// comes back when one of its jobs ends), only for a build that would get
/// nothing else: its next job does not fit in the room left now.
fn yields(allowed: u32, running: u32, peak: u64, left: i64, others: &[Lease]) -> bool {
    let level = allowed - 1; // jobs this build runs before slot `allowed`
    let left = i128::from(left);
    others.iter().any(|l| {
        let next = i128::from(l.peak_mb);
        let helps = l.wants_more
            && l.running < level
            && l.running < l.cap
            && left + i128::from(peak) >= next;
        helps && (allowed > running.max(1) || left < next)
    })
}

/// The jobs a governor allows after this look: `cur` allowed since the
/// last one, `prev` and `now` what the last look and this one admit. It
/// moves only as far as both looks agree: up to the smaller of them when
/// both are above `cur`, down to the larger when both are below.
pub fn steady(cur: u32, prev: u32, now: u32) -> u32 {
    if now > cur {
        now.min(prev).max(cur)
    } else {
        now.max(prev).min(cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::govern::jobserver::room::RESERVE_MB;

    #[test]
    fn a_change_seen_on_one_look_only_is_not_acted_on() {
        // A dip for one look (a job grew after its lease was written).
        assert_eq!(steady(3, 3, 2), 3);
        // Two looks below: down to the larger of them.
        assert_eq!(steady(3, 2, 1), 2);
        assert_eq!(steady(3, 1, 2), 2);
        // A rise for one look (a job ended, its lease still counting it).
        assert_eq!(steady(2, 2, 3), 2);
        assert_eq!(steady(2, 4, 3), 3);
        assert_eq!(steady(2, 3, 5), 3);
        assert_eq!(steady(2, 2, 2), 2);
    }

    fn lease(running: u32, growth_mb: u64, wants_more: bool, limits: &[u64]) -> Lease {
        let mut l = Lease::empty();
        l.running = running;
        l.allowed = running;
        l.cap = 8;
        l.peak_mb = 100;
        l.growth_mb = growth_mb;
        l.wants_more = wants_more;
        l.limits.extend_from_slice(limits).unwrap();
        l
    }

    fn own(available_mb: u64, running: u32) -> Own {
        Own {
            available_mb,
            running,
            cap: 8,
            weight: Weight::uniform(100, 0),
            held_mb: 0,
        }
    }

    #[test]
    fn alone_it_is_the_single_governor_rule() {
        // 32 MiB reserve: 5 jobs of 100 MiB fit in 532 MiB, not in 531.
        assert_eq!(admit(&own(532, 1), &[], &[]).allowed, 5);
        assert_eq!(admit(&own(531, 1), &[], &[]).allowed, 4);
        // What compilers already hold is taken off their growth.
        let held = Own {
            weight: Weight::uniform(100, 250),
            held_mb: 250,
            ..own(532, 3)
        };
        assert_eq!(admit(&held, &[], &[]).allowed, 7);
        // The cap holds whatever the room.
        assert_eq!(admit(&own(1 << 40, 1), &[], &[]).allowed, 8);
    }

    #[test]
    fn two_governors_never_spend_the_same_megabytes() {
        // 1032 MiB: alone, 10 jobs would fit (the cap is 8). A second
        // build already reserving 600 MiB leaves room for 4.
        let other = lease(6, 600, false, &[]);
        let a = admit(&own(1032, 1), &[], &[other]);
        assert_eq!(a.allowed, 4);
        assert_eq!(a.growth_mb + 600 + RESERVE_MB, 1032);
        assert_eq!(a.room_mb, 0);
    }

    #[test]
    fn a_cgroup_counts_only_the_leases_inside_it() {
        // The host has plenty; this build's cgroup has 432 MiB left. A
        // lease inside the same cgroup (inode 77) reserves 200 of it; one
        // elsewhere (inode 99) does not.
        let limits = [Limit {
            ino: 77,
            available_mb: 432,
        }];
        let inside = lease(2, 200, false, &[5, 77]);
        let outside = lease(2, 200, false, &[99]);
        assert_eq!(admit(&own(10_000, 1), &limits, &[]).allowed, 4);
        assert_eq!(admit(&own(10_000, 1), &limits, &[outside]).allowed, 4);
        assert_eq!(admit(&own(10_000, 1), &limits, &[inside]).allowed, 2);
    }

    /// Issue 42: three lanes under one parent the mount does not show
    /// (v1 `hierarchical_memory_limit`): each sees the limit less only its
    /// own usage, so the others' held memory counts as well as their
    /// growth, and a lane under another limit is not counted.
    #[test]
    fn a_limit_above_the_mount_counts_what_the_others_inside_hold() {
        let id = crate::kernel::cgroup::unseen_id(2560 << 20);
        let limits = [Limit {
            ino: id,
            available_mb: 2432,
        }];
        // Two lanes inside, each holding 700 MiB and reserving 300.
        let mut a = lease(2, 300, false, &[id]);
        a.held_mb = 700;
        let b = Lease {
            pid: 2,
            ..a.clone()
        };
        // 2432 − 2 × 1000 − 32 = 400: four jobs of 100.
        assert_eq!(admit(&own(20_000, 1), &limits, &[a.clone(), b]).allowed, 4);
        // A real cgroup's available memory already counts what they hold.
        let seen = [Limit {
            ino: 77,
            ..limits[0]
        }];
        let mut c = a.clone();
        c.limits = heapless::Vec::from_slice(&[77]).unwrap();
        assert_eq!(admit(&own(20_000, 1), &seen, &[c.clone(), c]).allowed, 8);
        // A lane under another hidden limit is not inside this one.
        let mut other = a;
        other.limits =
            heapless::Vec::from_slice(&[crate::kernel::cgroup::unseen_id(1 << 30)]).unwrap();
        assert_eq!(admit(&own(20_000, 1), &limits, &[other]).allowed, 8);
    }

    #[test]
    fn the_build_running_fewer_gets_the_next_slot() {
        // 632 MiB holds 6 jobs. This build runs 3; another wants more and
        // runs 1: this one keeps its 3 and leaves the 2 free slots to the
        // other (max-min: 3 and 3, not 5 and 1).
        let poor = lease(1, 100, true, &[]);
        let a = admit(&own(632, 3), &[], &[poor]);
        assert_eq!((a.allowed, a.yielded, a.growth_mb), (3, 2, 300));
        // The other, at its tick, sees this build's lease and takes them.
        let mut me = lease(3, a.growth_mb, true, &[]);
        me.allowed = a.allowed;
        let b = admit(&own(632, 1), &[], &[me]);
        assert_eq!((b.allowed, b.yielded, b.room_mb), (3, 0, 0));
        // At equal levels the one that looks first takes the slot.
        let even = lease(3, 300, true, &[]);
        assert_eq!(admit(&own(732, 3), &[], &[even]).allowed, 4);
        // A build that wants nothing more is not waited for.
        let content = lease(1, 100, false, &[]);
        assert_eq!(admit(&own(632, 3), &[], &[content]).yielded, 0);
        // Nor one whose next job would not fit anyway.
        let mut big = lease(1, 100, true, &[]);
        big.peak_mb = 4096;
        assert_eq!(admit(&own(632, 3), &[], &[big]).yielded, 0);
    }

    #[test]
    fn a_full_pool_gives_the_next_slot_of_a_richer_build_to_a_starved_one() {
        // 432 MiB hold 4 jobs: this build runs 3 (300 MiB ahead), the
        // other 1 and wants more; no room is left for its second job. This
        // build allows 2: the slot its next ending job frees is kept for
        // the other (2 and 2), while its 3 running still reserve theirs.
        let poor = lease(1, 100, true, &[]);
        let a = admit(&own(432, 3), &[], core::slice::from_ref(&poor));
        assert_eq!((a.allowed, a.yielded, a.growth_mb), (2, 1, 300));
        // One fewer is not starved: 2 and 1 stay.
        let a = admit(&own(332, 2), &[], core::slice::from_ref(&poor));
        assert_eq!((a.allowed, a.yielded), (2, 0));
        // Room for the other's next job: only the free slot is left to it,
        // none of those this build runs.
        let a = admit(&own(532, 3), &[], &[poor]);
        assert_eq!((a.allowed, a.yielded), (3, 1));
    }

    #[test]
    fn over_budget_keeps_one_job_and_says_so() {
        let other = lease(8, 5000, false, &[]);
        let a = admit(&own(1000, 3), &[], &[other]);
        assert_eq!(a.allowed, 1);
        assert!(a.over_budget && a.room_mb < 0);
    }

    #[test]
    fn absurd_figures_saturate_instead_of_wrapping() {
        let huge = lease(1, u64::MAX, false, &[1]);
        let limits = [Limit {
            ino: 1,
            available_mb: u64::MAX,
        }];
        let a = admit(&own(u64::MAX, 1), &limits, &[huge.clone(), huge]);
        assert_eq!(a.allowed, 1);
        let peakless = Own {
            weight: Weight::uniform(0, 0),
            ..own(100, 0)
        };
        assert!(admit(&peakless, &[], &[]).allowed >= 1);
    }
}
