//! The OOM kills of a build that has no memory cgroup of its own (`run`
//! where it may not make one, `record --watch-pid`): each kill's victim,
//! as the kernel names it in `/dev/kmsg` ([`crate::kernel::kmsg`]),
//! looked up among the build's processes.
//!
//! /proc/vmstat `oom_kill` counts every kill on the host and names none.
//! Counting the build's compilers that vanished while it rose missed a
//! killed test program, script or linker wrapper (counted 0 while the
//! host said 1), and took another process's kill for the build's when a
//! compiler ended at the same moment. The kernel names each victim in
//! the record it logs as it kills, and every process headroom lists is
//! remembered as the build's or not ([`Classes::member`], learnt from its
//! parent when first listed): a victim is the build's when it was one of
//! its processes at the last listing or the one before, or, still listed
//! (exiting, or a zombie not yet reaped), when its parent chain reaches
//! CMD. A victim that started and ended between two listings cannot be
//! placed: it is counted apart, as one that may be the build's.
//!
//! The log is read at each listing of /proc (a row's, and a glance's
//! under `run --jobserver`), before the listing replaces the older of
//! the two tables: one read(2) that fails with EAGAIN when nothing was
//! logged. Reading it only when /proc/vmstat's counter rose would leave
//! victims of kills between two rows to tables that glances may have
//! replaced since; the rows still read the counter, for kills no record
//! named ([`Victims::unplaced_of`]).
//!
//! # References
//! `mm/oom_kill.c` (`__oom_kill_process`: the counter, then the record);
//! `Documentation/ABI/testing/dev-kmsg`.

use crate::followed::compilers::{Classes, PidFiles, Scan};
use crate::kernel::kmsg::{self, Kmsg, Unusable};

/// The kills named so far, and where their victims were placed.
#[derive(Debug)]
pub struct Victims {
    kmsg: Result<Kmsg, Unusable>,
    /// Kills whose victim was one of the build's processes.
    pub build: u64,
    /// Kills whose victim was another process.
    pub others: u64,
    /// Kills named whose victim could not be placed: it started and ended
    /// between two listings.
    pub unplaced: u64,
}

impl Victims {
    /// Victims read from `kmsg` (opened before the build's first row), or
    /// none to read, for the reason given.
    pub fn new(kmsg: Result<Kmsg, Unusable>) -> Victims {
        Victims {
            kmsg,
            build: 0,
            others: 0,
            unplaced: 0,
        }
    }

    /// Why the log names no victim here; `None` while it is read.
    pub fn unusable(&self) -> Option<Unusable> {
        self.kmsg.as_ref().err().copied()
    }

    /// Kills named so far, placed or not.
    pub fn named(&self) -> u64 {
        self.build
            .saturating_add(self.others)
            .saturating_add(self.unplaced)
    }

    /// Kills that may be the build's and are not counted as its: those
    /// named and not placed, and those the host counted (`host_rise`,
    /// since the build's first row) that no record named (the log was
    /// unreadable, or overwritten before it was read).
    pub fn unplaced_of(&self, host_rise: u64) -> u64 {
        let unnamed = host_rise.saturating_sub(self.named());
        self.unplaced.saturating_add(unnamed)
    }

    /// Reads the records logged since the last call, each into `record`
    /// ([`kmsg::BUF_LEN`] bytes or more), and places the victim each OOM
    /// kill names with `scan` (a process tree's) and `classes`, reading
    /// a victim's `stat` from `files` into `buf` when the tables do not
    /// know it. A read that fails for good ends the reading: later kills
    /// are then left to [`Victims::unplaced_of`].
    pub fn drain(
        &mut self,
        record: &mut [u8],
        (scan, classes): (&Scan<'_>, &Classes),
        files: &mut impl PidFiles,
        buf: &mut [u8],
    ) {
        let Ok(k) = &mut self.kmsg else {
            return;
        };
        let (build, others, unplaced) = (&mut self.build, &mut self.others, &mut self.unplaced);
        let read = k.drain(record, |r| {
            let Some(pid) = kmsg::parse_record(r).and_then(|r| kmsg::oom_victim(&r)) else {
                return;
            };
            let slot = match scan.victim_member(pid, classes, files, buf) {
                Some(true) => &mut *build,
                Some(false) => &mut *others,
                None => &mut *unplaced,
            };
            *slot = slot.saturating_add(1);
        });
        if let Err(e) = read {
            self.kmsg = Err(Unusable::Failed(e));
        }
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of `followed::oom_victims` (src/followed/oom_victims.rs).

    extern crate std;
    use super::*;
    use crate::followed::compilers::{CompilerList, Scope};
    use crate::kernel::root::ReadError;
    use rustix::io::Errno;

    /// Processes by pid: (pid, ppid) of those still listed.
    struct Listed(&'static [(u32, u32)]);

    impl PidFiles for Listed {
        fn read<'b>(
            &mut self,
            pid: u32,
            file: &str,
            buf: &'b mut [u8],
        ) -> Result<&'b [u8], ReadError> {
            let Some(&(_, ppid)) = self.0.iter().find(|(p, _)| *p == pid) else {
                return Err(ReadError::Open(Errno::NOENT));
            };
            assert_eq!(file, "stat");
            let text = std::format!(
                "{pid} (x) Z {ppid} 0 0 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
            );
            let out = buf.get_mut(..text.len()).unwrap();
            out.copy_from_slice(text.as_bytes());
            Ok(out)
        }
    }

    /// CMD 100 (make), its child 101 (sh) and 102 (python, killed later),
    /// 200 elsewhere: placed from the tables, from a zombie's parent, or
    /// not at all.
    #[test]
    fn each_victim_is_placed_by_the_build_s_tables() {
        let list = CompilerList::default_list();
        let scan = Scan::new(&list, 4).within(Scope::Tree(100));
        let mut classes = Classes::new(true);
        classes.begin();
        for (pid, ppid) in [(100, 50), (101, 100), (102, 101), (200, 1)] {
            let mut none = Listed(&[]);
            let mut buf = [0u8; 512];
            let build = scan.tree_member((pid, ppid), &classes, &mut none, &mut buf);
            classes.learn_member(pid, u64::from(pid), false, build);
        }
        classes.end();
        let mut buf = [0u8; 512];
        // 102 was listed: the build's; 200 too: not; 103 is a zombie of
        // 101's; 104 is gone and was never listed.
        let mut files = Listed(&[(103, 101)]);
        let place =
            |pid, files: &mut Listed, buf: &mut [u8]| scan.victim_member(pid, &classes, files, buf);
        assert_eq!(place(102, &mut files, &mut buf), Some(true));
        assert_eq!(place(200, &mut files, &mut buf), Some(false));
        assert_eq!(place(103, &mut files, &mut buf), Some(true));
        assert_eq!(place(104, &mut files, &mut buf), None);
        // Outside a process tree's build nothing is the build's.
        let none = Scan::new(&list, 4);
        assert_eq!(
            none.victim_member(103, &Classes::new(true), &mut files, &mut buf),
            Some(false)
        );
    }

    #[test]
    fn kills_no_record_named_are_unplaced() {
        let mut v = Victims::new(Err(Unusable::NotPermitted));
        assert_eq!(v.unusable(), Some(Unusable::NotPermitted));
        assert_eq!((v.named(), v.unplaced_of(0), v.unplaced_of(2)), (0, 0, 2));
        v.build = 1;
        v.others = 1;
        v.unplaced = 1;
        // Named kills the counter did not count yet: none unnamed.
        assert_eq!((v.named(), v.unplaced_of(1), v.unplaced_of(5)), (3, 1, 3));
        let mut record = [0u8; 64];
        let list = CompilerList::default_list();
        let scan = Scan::new(&list, 4);
        v.drain(
            &mut record,
            (&scan, &Classes::new(false)),
            &mut Listed(&[]),
            &mut [0u8; 64],
        );
        assert_eq!(v.named(), 3);
    }
}
