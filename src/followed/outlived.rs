//! Which of the build's processes really outlived the command (`run`):
//! each counted once, only those running on (not exiting, not zombies),
//! after a short grace for the ones ending on the same signal.
//!
//! Stopped with SIGINT, a build's compilers get the signal with the
//! command; a large one takes a moment to free its memory while its pid
//! is still listed in the cgroup's `cgroup.procs`, and a move of such a
//! process to another cgroup is accepted and does nothing (the kernel
//! skips tasks that are exiting). Counting the moves of a listing read
//! again and again gave `make -j2` stopped by Ctrl-C "32 process(es)
//! outlived the command": two exiting cc1, sixteen times each. Counting
//! distinct pids by their `stat` once the build's processes have settled
//! gives the processes that are really left: a `sleep 30 &` is 1, the
//! compilers that were ending are 0.
//!
//! # References
//! proc(5) (`/proc/pid/stat`: `state`, `flags`), cgroups(7)
//! (`cgroup.procs`: a pid may be listed more than once on cgroup v1),
//! kernel `cgroup_migrate_add_task` (exiting tasks are skipped).

use crate::kernel::pid::parse_stat;

/// Milliseconds between two looks at the build's processes.
pub const STEP_MS: u64 = 100;

/// At most this long, milliseconds after the command was reaped, is spent
/// waiting for the build's processes to settle.
pub const GRACE_MS: u64 = 2000;

/// What one look at the build's processes found, each counted once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Look {
    /// Processes running on: not exiting, not zombies.
    pub live: u32,
    /// Processes on their way out: exiting (`PF_EXITING`) or zombies.
    pub leaving: u32,
}

/// How a process looks from its `stat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Running on.
    Live,
    /// Exiting, or a zombie.
    Leaving,
    /// Gone (no `stat`), or a `stat` that does not parse.
    Gone,
}

impl Fate {
    /// The fate of a process from the contents of its `/proc/PID/stat`
    /// (`None`: it could not be read, the process is gone).
    ///
    /// ```
    /// use headroom::followed::outlived::Fate;
    /// let live = b"7 (sleep) S 1 7 7 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 5 2269184 130 0";
    /// assert_eq!(Fate::of_stat(Some(live)), Fate::Live);
    /// assert_eq!(Fate::of_stat(Some(b"7 (sleep) Z 1 7 7 0 -1 4227084 90 0 0 0 0 0 0 0 20 0 1 0 5 0 0 0")), Fate::Leaving);
    /// assert_eq!(Fate::of_stat(None), Fate::Gone);
    /// ```
    pub fn of_stat(stat: Option<&[u8]>) -> Fate {
        match stat.map(parse_stat) {
            Some(Ok(s)) if s.is_exiting() => Fate::Leaving,
            Some(Ok(_)) => Fate::Live,
            _ => Fate::Gone,
        }
    }
}

impl Look {
    /// Counts the processes `pids` lists, each pid once (the slice is
    /// sorted in place), by `fate`.
    ///
    /// ```
    /// use headroom::followed::outlived::{Fate, Look};
    /// let mut pids = [30, 12, 30, 40, 12];
    /// let look = Look::of(&mut pids, |p| if p == 40 { Fate::Leaving } else { Fate::Live });
    /// assert_eq!(look, Look { live: 2, leaving: 1 });
    /// ```
    pub fn of(pids: &mut [u32], mut fate: impl FnMut(u32) -> Fate) -> Look {
        crate::kernel::order::sort_by(pids, |a, b| a < b);
        let mut look = Look::default();
        let mut last = None;
        for &p in pids.iter() {
            if last == Some(p) {
                continue;
            }
            last = Some(p);
            match fate(p) {
                Fate::Live => look.live = look.live.saturating_add(1),
                Fate::Leaving => look.leaving = look.leaving.saturating_add(1),
                Fate::Gone => {}
            }
        }
        look
    }

    /// Processes still there, live or leaving: at the first look after the
    /// command was reaped, those it never waited for.
    pub fn present(&self) -> u32 {
        self.live.saturating_add(self.leaving)
    }

    /// Whether the count can be taken from this look, `waited_ms` after
    /// the first: nothing is left; or the grace ([`GRACE_MS`]) is over;
    /// or, for a build that was not `interrupted`, nothing is leaving and
    /// as many run on as at the look before (`prev`). An interrupted
    /// build's processes got the same stop signal and may still be
    /// handling it (a compiler removing its temporary files), running on
    /// for a moment: they are given the whole grace to end.
    ///
    /// ```
    /// use headroom::followed::outlived::Look;
    /// let two = Look { live: 2, leaving: 0 };
    /// assert!(!two.settled(None, false, 0));
    /// assert!(two.settled(Some(two), false, 100));
    /// assert!(!two.settled(Some(two), true, 100));
    /// assert!(two.settled(Some(two), true, 2000));
    /// assert!(Look::default().settled(None, true, 0));
    /// assert!(!Look { live: 0, leaving: 2 }.settled(Some(two), false, 100));
    /// ```
    pub fn settled(&self, prev: Option<Look>, interrupted: bool, waited_ms: u64) -> bool {
        self.present() == 0
            || waited_ms >= GRACE_MS
            || (!interrupted && self.leaving == 0 && prev == Some(*self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `make -j2` stopped by SIGINT: two cc1 exiting, then gone; an
    /// orphaned `sleep` listed twice by a v1 `cgroup.procs`: one, live.
    #[test]
    fn leaving_then_gone_counts_none_and_an_orphan_counts_once() {
        let exiting = b"29379 (cc1) R 29317 29314 6757 0 -1 4195340 119633 0 0 0 2 111 0 0 20 0 1 0 61698 0 0 18446744073709551615 0 0 0 0 0 0 0 16781312 2 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 9\n";
        let mut first = [101, 102];
        let look = Look::of(&mut first, |_| Fate::of_stat(Some(exiting)));
        assert_eq!(
            look,
            Look {
                live: 0,
                leaving: 2
            }
        );
        assert_eq!(look.present(), 2);
        assert!(!look.settled(None, true, 0));
        let mut later = [101, 102];
        let gone = Look::of(&mut later, |_| Fate::of_stat(None));
        assert_eq!(gone.present(), 0);
        assert!(gone.settled(Some(look), true, 100));

        let sleep = b"7 (sleep) S 1 7 7 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 5 2269184 130 0\n";
        let mut listed = [7, 7];
        let orphan = Look::of(&mut listed, |_| Fate::of_stat(Some(sleep)));
        assert_eq!(
            orphan,
            Look {
                live: 1,
                leaving: 0
            }
        );
        assert!(!orphan.settled(Some(look), false, 100));
        assert!(orphan.settled(Some(orphan), false, 200));
        // Interrupted: the same orphan is counted when the grace is over.
        assert!(!orphan.settled(Some(orphan), true, 200));
        assert!(orphan.settled(Some(orphan), true, GRACE_MS));
        assert_eq!(
            Fate::of_stat(Some(b"not a stat")),
            Fate::Gone,
            "unparsable: not counted"
        );
    }
}
