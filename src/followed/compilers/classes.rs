//! Which processes of the last /proc listing were kernel threads, so that a
//! tick reads nothing of them.
//!
//! A small board runs 60–150 kernel threads (kworkers, ksoftirqd, rcu_*,
//! mmc and USB threads), often more than it runs user processes, and the
//! scan used to read every one's `comm` every tick: three syscalls each,
//! for a name that is never a compiler. A kernel thread never execs, so
//! once its `stat` has said so (the `PF_KTHREAD` flag) it can be skipped
//! for as long as it lives. "As long as it lives" is told by the inode
//! number of its /proc directory, which getdents64(2) returns with the
//! name: procfs gives each new process's directory a new inode
//! (`get_next_ino`), so a PID reused by another process comes back with
//! another number and is read again. User processes are remembered too,
//! only so that their `stat` is read once (to learn they are not kernel
//! threads), not every tick: their `comm` is still read every tick, since
//! an exec changes it.
//!
//! The table is in listing order (procfs lists PIDs ascending), so each
//! tick is one merge-walk over the last tick's table; [`CLASSIFIED`]
//! entries at most, past which processes are simply read as before.
//!
//! A user process is also remembered as the build's or not (a process
//! tree's build: [`Classes::learn_member`], from its parent's entry, when
//! it is first seen), so that an OOM kill the kernel names
//! ([`crate::kernel::kmsg`]) can be told to be the build's after its
//! victim has gone: [`Classes::member`] looks in this listing's table and
//! the last one's.
//!
//! # References
//! proc(5) (`/proc/pid/stat` field 9, flags; `PF_KTHREAD` in
//! `include/linux/sched.h`), getdents64(2).

/// Most processes whose class is remembered from one tick to the next.
pub const CLASSIFIED: usize = 512;

/// One process of the last listing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    pid: u32,
    /// The low 32 bits of its /proc directory's inode (procfs numbers them
    /// from a 32-bit counter).
    ino: u32,
    kernel_thread: bool,
    /// A process of the build's tree (never a kernel thread).
    build: bool,
}

/// What the last listing said of a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    /// A kernel thread: nothing to read.
    KernelThread,
    /// A user process: read its `comm`, no need to learn its class.
    User,
    /// Not seen (new, reused PID, or the table was full): read it, and
    /// learn its class.
    Unknown,
}

/// The classes of the processes of the last listing; see the module.
#[derive(Debug)]
pub struct Classes {
    /// The last listing's table and this listing's, by turns.
    tables: [heapless::Vec<Seen, CLASSIFIED>; 2],
    /// Index of the last listing's table.
    last: usize,
    /// Position of the merge-walk in the last listing's table.
    cursor: usize,
    on: bool,
    /// Between [`Classes::begin`] and [`Classes::end`].
    listing: bool,
}

impl Classes {
    /// An empty table; remembering only when `on` (the live /proc: in a
    /// `--root` tree a directory's inode may be reused).
    pub const fn new(on: bool) -> Classes {
        Classes {
            tables: [heapless::Vec::new(), heapless::Vec::new()],
            last: 0,
            cursor: 0,
            on,
            listing: false,
        }
    }

    /// Forgets every process: the next listing learns each anew (the
    /// build followed has changed, and with it who is the build's).
    pub fn forget(&mut self) {
        for t in &mut self.tables {
            t.clear();
        }
        self.cursor = 0;
    }

    /// Starts a listing.
    pub fn begin(&mut self) {
        self.cursor = 0;
        self.tables[1 - self.last].clear();
        self.listing = true;
    }

    /// What the last listing said of `pid`, listed now with inode `ino`;
    /// a process known is carried into this listing's table.
    pub fn lookup(&mut self, pid: u32, ino: u64) -> Known {
        if !self.on {
            return Known::Unknown;
        }
        let last = &self.tables[self.last];
        while last.get(self.cursor).is_some_and(|s| s.pid < pid) {
            self.cursor += 1;
        }
        let Some(&seen) = last.get(self.cursor) else {
            return Known::Unknown;
        };
        if seen.pid != pid || seen.ino != ino as u32 {
            return Known::Unknown;
        }
        self.push(seen);
        if seen.kernel_thread {
            Known::KernelThread
        } else {
            Known::User
        }
    }

    /// Remembers that `pid`, listed with inode `ino`, is (or is not) a
    /// kernel thread.
    pub fn learn(&mut self, pid: u32, ino: u64, kernel_thread: bool) {
        self.learn_member(pid, ino, kernel_thread, false);
    }

    /// [`Classes::learn`], remembering too whether the user process `pid`
    /// is one of the build's (`build`).
    pub fn learn_member(&mut self, pid: u32, ino: u64, kernel_thread: bool, build: bool) {
        if self.on {
            self.push(Seen {
                pid,
                ino: ino as u32,
                kernel_thread,
                build: build && !kernel_thread,
            });
        }
    }

    /// Ends a listing: its table is the one the next listing walks.
    pub fn end(&mut self) {
        self.last = 1 - self.last;
        self.listing = false;
    }

    /// Whether `pid`, as the newest of the two tables it is in (this
    /// listing's so far, the last one's) remembers it, is one of the
    /// build's processes (`Some(false)` for a kernel thread); `None` when
    /// neither remembers it. A binary search in each: both are in PID
    /// order.
    pub fn member(&self, pid: u32) -> Option<bool> {
        let (newer, older) = match self.listing {
            true => (1 - self.last, self.last),
            false => (self.last, 1 - self.last),
        };
        [newer, older].into_iter().find_map(|t| {
            let table = self.tables.get(t)?;
            let i = table.binary_search_by_key(&pid, |s| s.pid).ok()?;
            table.get(i).map(|s| s.build)
        })
    }

    /// Kernel threads remembered from the last listing.
    pub fn kernel_threads(&self) -> usize {
        self.tables[self.last]
            .iter()
            .filter(|s| s.kernel_thread)
            .count()
    }

    /// Appends to this listing's table when it keeps PID order and has
    /// room (else the process is read again next time: never wrong).
    fn push(&mut self, seen: Seen) {
        let next = &mut self.tables[1 - self.last];
        if next.last().is_none_or(|l| l.pid < seen.pid) {
            let _ = next.push(seen);
        }
    }

    /// Whether a process is worth learning: only when the table has room
    /// (learning costs a `stat` read).
    pub fn has_room(&self) -> bool {
        self.on && !self.tables[1 - self.last].is_full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_threads_are_skipped_while_their_inode_stays() {
        let mut c = Classes::new(true);
        c.begin();
        for (pid, ino, k) in [(2, 20, true), (10, 100, false), (15, 150, true)] {
            assert_eq!(c.lookup(pid, ino), Known::Unknown);
            c.learn(pid, ino, k);
        }
        c.end();
        assert_eq!(c.kernel_threads(), 2);
        c.begin();
        assert_eq!(c.lookup(2, 20), Known::KernelThread);
        // 10 is gone; 12 is new.
        assert_eq!(c.lookup(12, 120), Known::Unknown);
        c.learn(12, 120, false);
        // 15's PID was reused: another inode.
        assert_eq!(c.lookup(15, 151), Known::Unknown);
        c.learn(15, 151, false);
        c.end();
        c.begin();
        assert_eq!(c.lookup(2, 20), Known::KernelThread);
        assert_eq!(c.lookup(10, 100), Known::Unknown);
        assert_eq!(c.lookup(12, 120), Known::User);
        assert_eq!(c.lookup(15, 151), Known::User);
        c.end();
        // Off (a --root tree): nothing remembered.
        let mut off = Classes::new(false);
        off.begin();
        off.learn(2, 20, true);
        off.end();
        off.begin();
        assert_eq!(off.lookup(2, 20), Known::Unknown);
        assert!(!off.has_room());
    }

    /// The build's processes are remembered through two listings: one
    /// gone since the last is still known to have been the build's.
    #[test]
    fn members_are_known_for_two_listings() {
        let mut c = Classes::new(true);
        c.begin();
        c.learn(2, 20, true);
        c.learn_member(10, 100, false, true);
        c.learn_member(11, 110, false, false);
        // A kernel thread is never the build's.
        c.learn_member(12, 120, true, true);
        assert_eq!(c.member(10), Some(true));
        c.end();
        assert_eq!(
            [2, 10, 11, 12, 13].map(|p| c.member(p)),
            [Some(false), Some(true), Some(false), Some(false), None]
        );
        c.begin();
        // 10 has gone: the last listing still knows it.
        assert_eq!(c.lookup(11, 110), Known::User);
        c.learn_member(14, 140, false, true);
        c.end();
        assert_eq!((c.member(10), c.member(14)), (Some(true), Some(true)));
        c.begin();
        c.end();
        assert_eq!(c.member(10), None);
        assert_eq!(Classes::new(false).member(10), None);
        assert_eq!(c.member(14), Some(true));
        c.forget();
        assert_eq!((c.member(14), c.kernel_threads()), (None, 0));
    }

    #[test]
    fn a_full_table_or_an_unordered_listing_only_reads_more() {
        let mut c = Classes::new(true);
        c.begin();
        for pid in 0..CLASSIFIED as u32 + 10 {
            if c.has_room() {
                c.learn(pid, u64::from(pid), true);
            }
        }
        assert!(!c.has_room());
        // Out of order: not remembered.
        c.end();
        assert_eq!(c.kernel_threads(), CLASSIFIED);
        c.begin();
        assert_eq!(c.lookup(5, 5), Known::KernelThread);
        c.learn(3, 3, true);
        assert_eq!(c.lookup(CLASSIFIED as u32 + 5, 0), Known::Unknown);
        c.end();
        assert_eq!(c.kernel_threads(), 1);
    }
}
