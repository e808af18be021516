//! The build's compilers whose `/proc/PID/status` is kept open between
//! ticks.
//!
//! A compiler of the build is read every tick for as long as it runs, and
//! by name that is comm, stat (and its cgroup or parent chain) and status:
//! a dozen syscalls. Kept, it is one pread(2) of `status`, which has all
//! the scan needs: `Name` (an exec changes it), `State` (a zombie) and
//! `VmRSS`/`VmHWM`. A kept descriptor refers to the process, not to its
//! number: once it has exited, the read fails with ESRCH even if the PID
//! is reused, so a new process is never taken for the old one. Each
//! descriptor holds a seq_file page in the kernel, so only
//! [`KEPT_COMPILERS`] are kept; the others are read by name as before.
//!
//! # References
//! proc(5) (`/proc/pid/status`), pread(2).

use crate::followed::compilers::{Classes, Known, PidFiles, Scan};
use crate::kernel::kept::{Kept, Shape};
use crate::kernel::pid::{parse_status, status_name};

/// Most of the build's compilers kept open: a small board's `-j` (4–8).
pub const KEPT_COMPILERS: usize = 8;

/// One kept compiler.
#[derive(Debug)]
struct Entry {
    pid: u32,
    status: Kept,
    comm: [u8; 16],
    comm_len: usize,
    /// Listed at this tick.
    seen: bool,
}

/// The kept compilers of the build; see the module.
#[derive(Debug)]
pub struct KeptCompilers {
    entries: heapless::Vec<Entry, KEPT_COMPILERS>,
    keep: bool,
}

impl KeptCompilers {
    /// None kept yet; the build's compilers are kept from their first
    /// tick when `keep` (the live root), never otherwise.
    pub const fn new(keep: bool) -> KeptCompilers {
        KeptCompilers {
            entries: heapless::Vec::new(),
            keep,
        }
    }

    /// Descriptors held now.
    pub fn open(&self) -> usize {
        self.entries.iter().filter(|e| e.status.is_open()).count()
    }

    /// [`Scan::visit`] of `pid`, listed with /proc inode `ino`: nothing
    /// read when `classes` knows it for a kernel thread; through its kept
    /// `status` when it is kept; a build compiler found by name is kept
    /// while there is room. A kept one that has exited, become a zombie
    /// or exec'd into another name is let go (the last is then visited by
    /// name).
    pub fn visit(
        &mut self,
        scan: &mut Scan<'_>,
        (pid, ino): (u32, u64),
        classes: &mut Classes,
        files: &mut impl PidFiles,
        buf: &mut [u8],
    ) {
        let known = classes.lookup(pid, ino);
        if known == Known::KernelThread {
            return;
        }
        let learn = known == Known::Unknown && classes.has_room();
        if let (true, Some((k, ppid))) = (learn, self.visit_process(scan, pid, learn, files, buf)) {
            // A process tree's build: whether it is one of its processes,
            // from its parent's entry (a kill of it can be placed later).
            let build = !k && scan.tree_member((pid, ppid), classes, files, buf);
            classes.learn_member(pid, ino, k, build);
        }
    }

    /// [`KeptCompilers::visit`] of `pid`, a member of the build's cgroup
    /// (never a kernel thread), known from its `cgroup.procs` rather than
    /// a listing: no class to look up or learn. After all the members,
    /// [`KeptCompilers::sweep`].
    pub fn visit_member(
        &mut self,
        scan: &mut Scan<'_>,
        pid: u32,
        files: &mut impl PidFiles,
        buf: &mut [u8],
    ) {
        let _ = self.visit_process(scan, pid, false, files, buf);
    }

    /// The visit of `pid` once it is known not to be a kernel thread
    /// already: through its kept `status`, else by name (reading `stat`
    /// when `learn`), kept when it is a build compiler and there is room.
    /// Returns whether it is a kernel thread, and its parent, when its
    /// `stat` was read.
    fn visit_process(
        &mut self,
        scan: &mut Scan<'_>,
        pid: u32,
        learn: bool,
        files: &mut impl PidFiles,
        buf: &mut [u8],
    ) -> Option<(bool, u32)> {
        if let Some(i) = self.entries.iter().position(|e| e.pid == pid) {
            match self.reread(i, scan, buf) {
                Reread::Counted => return None,
                Reread::Gone => {
                    self.entries.swap_remove(i);
                    return None;
                }
                Reread::Renamed => {
                    self.entries.swap_remove(i);
                }
            }
        }
        let visit = scan.visit_comm(pid, files, buf, learn);
        let class = visit.kernel_thread.zip(visit.ppid);
        let Some((comm, comm_len)) = visit.own else {
            return class;
        };
        if self.keep
            && !self.entries.is_full()
            && let Some(fd) = files.open(pid, "status")
        {
            let mut status = Kept::new(true);
            status.adopt(fd);
            let _ = self.entries.push(Entry {
                pid,
                status,
                comm,
                comm_len,
                seen: true,
            });
        }
        class
    }

    /// Reads entry `i`'s status and counts it in `scan`.
    fn reread(&mut self, i: usize, scan: &mut Scan<'_>, buf: &mut [u8]) -> Reread {
        let Some(e) = self.entries.get_mut(i) else {
            return Reread::Gone;
        };
        let raw = match e.status.reread(buf, Shape::Whole) {
            Some(Ok(raw)) => raw,
            Some(Err(err)) if err.is_gone() => return Reread::Gone,
            _ => return Reread::Renamed,
        };
        let comm = e.comm.get(..e.comm_len).unwrap_or(&e.comm);
        // status shows the comm as `Name` (the first 15 bytes of it).
        if status_name(raw) != Some(comm) {
            return Reread::Renamed;
        }
        let st = parse_status(raw);
        if st.is_zombie() {
            scan.result.zombies = scan.result.zombies.saturating_add(1);
            return Reread::Gone;
        }
        e.seen = true;
        let rss = st.vm_rss_kib.unwrap_or(0);
        let size = st.vm_hwm_kib.unwrap_or(rss);
        scan.add(e.pid, comm, rss, size, true);
        Reread::Counted
    }

    /// After a listing: the kept compilers it did not list have exited and
    /// are let go.
    pub fn sweep(&mut self) {
        self.entries.retain(|e| e.seen);
        for e in &mut self.entries {
            e.seen = false;
        }
    }
}

/// What re-reading a kept compiler found.
enum Reread {
    /// Alive, still the compiler: counted.
    Counted,
    /// Exited (ESRCH) or a zombie: let go, not counted.
    Gone,
    /// Another name now (exec), or unreadable otherwise: let go and
    /// visited by name.
    Renamed,
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::followed::compilers::{CompilerList, ProcDir, ScanResult, Scope};
    use crate::kernel::root::Root;
    use rustix::fd::AsFd;

    /// A live compiler of the build (a `sleep` run under the name `cc1`):
    /// kept from its first tick, then read with one pread a tick; a zombie
    /// and an exited one are let go, never counted.
    /// `pass()` again every 10 ms until `done` says so (an exec or an
    /// exit may take a moment), at most 200 times: the last result.
    fn until(
        mut pass: impl FnMut() -> ScanResult,
        done: impl Fn(&ScanResult) -> bool,
    ) -> ScanResult {
        let mut r = pass();
        for _ in 0..200 {
            if done(&r) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            r = pass();
        }
        r
    }

    /// A `sleep 30` run as `cc1` from directory `d` (made for it).
    fn a_cc1(d: &std::path::Path) -> std::process::Child {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).unwrap();
        std::os::unix::fs::symlink("/bin/sleep", d.join("cc1")).unwrap();
        std::process::Command::new(d.join("cc1"))
            .arg("30")
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_build_compiler_is_kept_until_it_exits() {
        let d = std::env::temp_dir().join(std::format!("headroom-keptcc-{}", std::process::id()));
        let mut child = a_cc1(&d);
        let pid = child.id();
        let root = Root::open("/").unwrap();
        let proc_dir = root.open_dir("proc").unwrap();
        let list = CompilerList::default_list();
        let mut kept = KeptCompilers::new(true);
        let mut classes = Classes::new(true);
        let mut buf = [0u8; 4096];
        let mut tick = |kept: &mut KeptCompilers| {
            let mut scan = Scan::new(&list, 4).within(Scope::Tree(std::process::id()));
            classes.begin();
            let ino = std::fs::metadata(std::format!("/proc/{pid}"))
                .map_or(0, |m| std::os::unix::fs::MetadataExt::ino(&m));
            kept.visit(
                &mut scan,
                (pid, ino),
                &mut classes,
                &mut ProcDir(proc_dir.as_fd()),
                &mut buf,
            );
            classes.end();
            kept.sweep();
            scan.finish()
        };
        // exec may not have happened yet: wait until the comm is cc1.
        let r = until(|| tick(&mut kept), |r| r.build_compilers == 1);
        assert_eq!((r.build_compilers, kept.open()), (1, 1), "{r:?}");
        let again = tick(&mut kept);
        assert_eq!((again.build_compilers, again.build_pids()), (1, &[pid][..]));
        assert!(again.build_rss_sum_kib > 0 && again.build_peak_comm() == b"cc1");
        assert_eq!(kept.open(), 1);
        // Killed, not yet reaped: a zombie, let go.
        child.kill().unwrap();
        let z = until(|| tick(&mut kept), |r| r.zombies == 1);
        assert_eq!((z.zombies, z.build_compilers, kept.open()), (1, 0, 0));
        child.wait().unwrap();
        assert_eq!(tick(&mut kept).compilers, 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A member of the build's cgroup (`run --jobserver`'s glance) is
    /// kept as from a listing, and let go by the sweep once it is gone.
    #[test]
    fn a_cgroup_member_compiler_is_kept_and_let_go() {
        let d =
            std::env::temp_dir().join(std::format!("headroom-keptmember-{}", std::process::id()));
        let mut child = a_cc1(&d);
        let pid = child.id();
        let proc_dir = Root::open("/").unwrap().open_dir("proc").unwrap();
        let list = CompilerList::default_list();
        let mut kept = KeptCompilers::new(true);
        let mut buf = [0u8; 4096];
        let mut glance = |kept: &mut KeptCompilers| {
            // As a tree build: no cgroup file to read in a test.
            let mut scan = Scan::new(&list, 4).within(Scope::Tree(std::process::id()));
            kept.visit_member(&mut scan, pid, &mut ProcDir(proc_dir.as_fd()), &mut buf);
            kept.sweep();
            scan.finish()
        };
        let r = until(|| glance(&mut kept), |r| r.build_compilers == 1);
        assert_eq!((r.build_compilers, kept.open()), (1, 1), "{r:?}");
        let again = glance(&mut kept);
        assert_eq!((again.build_pids(), kept.open()), (&[pid][..], 1));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!((glance(&mut kept).build_compilers, kept.open()), (0, 0));
        let _ = std::fs::remove_dir_all(&d);
    }
}
