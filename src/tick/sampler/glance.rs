//! A glance: the few facts `run --jobserver`'s governor decides from,
//! read between rows at its own pace instead of a whole tick.
//!
//! Usable memory and the tightest cgroup's available memory come from the same
//! readers as a row's ([`Sampler::tick`], through the same kept
//! descriptors); the build's compilers from the same [`Scan`] and the
//! same table of kept compilers. For a build in a cgroup of its own, only
//! the pids of its `cgroup.procs` are visited
//! ([`crate::followed::buildcg::Members::for_each`]): a kept compiler is one
//! pread(2) of its `status`, another member its `comm` (and for a new
//! compiler `stat`, `cgroup`, `status`), and `/proc` is never listed. A
//! process-tree build has no such list: its compilers are found by the
//! same pass over `/proc` a row makes. Nothing else is read: no CPU,
//! load, swap, zram, disk, log, /proc/vmstat (a row's). A process tree's
//! build still has the OOM victims the kernel named since the last pass
//! placed before that pass replaces the older of its tables
//! ([`crate::followed::oom_victims`]).
//!
//! # References
//! proc(5) (`/proc/meminfo`, `/proc/PID/comm`, `stat`, `status`,
//! `cgroup`), cgroups(7) (`cgroup.procs`).

use rustix::fd::AsFd;

use super::buffers::{Buffers, SCRATCH_LEN};
use super::{Build, Sampler, Warn};
use crate::followed::compilers::{ProcDir, Scan, ScanResult};
use crate::kernel::cgroup::TopReclaim;
use crate::tick::row::Row;

/// What the governor decides from, as a row or a glance read it: the
/// fields of [`Row`] of the same names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Glance {
    /// /proc/meminfo was read ([`Row::mem_known`]).
    pub mem_known: bool,
    /// MemAvailable, MiB ([`Row::mem_avail_mb`]).
    pub mem_avail_mb: u64,
    /// The available memory of the tightest memory cgroup on headroom's
    /// path, limit − (usage − inactive file cache), MiB
    /// ([`crate::tick::row::Ext::cg_mem_avail_mb`]); `None` without a
    /// limit.
    pub cg_mem_avail_mb: Option<u64>,
    /// The build's compilers' VmRSS summed, MiB ([`Row::build_rss_mb`]).
    pub build_rss_mb: u64,
    /// The build's largest compiler's VmHWM, MiB
    /// ([`crate::tick::row::Ext::build_peak_rss_mb`]); `None` while none
    /// runs.
    pub build_peak_rss_mb: Option<u64>,
    /// The build's live compilers ([`Row::build_compilers`]); `None`
    /// without a build or when they could not be read.
    pub build_compilers: Option<u32>,
    /// At a row, on cgroup v2 when the mount hides the cgroups above it:
    /// the mount's top cgroup's usage and reclaim, and the host's direct
    /// reclaim (`/proc/vmstat` `pgscan_direct`), for noticing a limit
    /// above it ([`Sampler::top_reclaim`]); `None` between rows and
    /// elsewhere.
    pub top_reclaim: Option<(TopReclaim, Option<u64>)>,
}

impl Glance {
    /// The governor's facts of a row just sampled.
    pub fn of_row(row: &Row) -> Glance {
        Glance {
            mem_known: row.mem_known,
            mem_avail_mb: row.mem_avail_mb,
            cg_mem_avail_mb: row.ext.cg_mem_avail_mb,
            build_rss_mb: row.build_rss_mb,
            build_peak_rss_mb: row.ext.build_peak_rss_mb,
            build_compilers: row
                .build_compilers
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
            top_reclaim: None,
        }
    }
}

#[cfg(test)]
impl<'a> super::Options<'a> {
    /// Tests' options: no log, the live / and /tmp, `compilers`.
    pub(crate) fn for_tests(compilers: &'a crate::followed::compilers::CompilerList) -> Self {
        super::Options {
            disk_path: "/",
            tmp_path: "/tmp",
            stage_log: super::StageLog::None,
            label: None,
            compilers,
            log_since: None,
        }
    }
}

impl Sampler<'_> {
    /// Reads what the governor needs now (see the module documentation);
    /// a source that cannot be read warns once, as at a row, and gives
    /// what a row would (`mem_known` false, no cgroup figure, no
    /// compilers).
    pub fn glance(&mut self, bufs: &mut Buffers, w: &mut impl Warn) -> Glance {
        let mut row = Row::empty(0);
        let mem_total_kib = self.read_memory(&mut row, bufs, w);
        self.read_cgroup(&mut row, bufs, mem_total_kib);
        if let Some(s) = self.glance_compilers(bufs) {
            row.build_rss_mb = s.build_rss_sum_kib / 1024;
            row.ext.build_peak_rss_mb = (s.build_compilers > 0).then_some(s.build_peak_kib / 1024);
            row.build_compilers = self.build.is_some().then_some(u64::from(s.build_compilers));
        }
        Glance::of_row(&row)
    }

    /// The mount's top cgroup's usage and reclaim, on v2 when the mount
    /// hides the cgroups above it (`MemCgroup::top_reclaim`; two reads by
    /// name), and the host's direct reclaim as the row just read it from
    /// /proc/vmstat; `None` elsewhere. For a row's glance, after its tick.
    pub fn top_reclaim(&mut self, bufs: &mut Buffers) -> Option<(TopReclaim, Option<u64>)> {
        let cg = self.mem_cg.as_ref()?;
        let top = cg.top_reclaim(&mut bufs.file[..crate::kernel::cgroup::TICK_BUF_LEN])?;
        Some((top, self.last_pgscan_direct))
    }

    /// The build's compilers: those among its cgroup's members (the kept
    /// ones re-read), else those of the pass over all of `proc/` a row
    /// makes; `None` when `proc/` or the cgroup cannot be read.
    fn glance_compilers(&mut self, bufs: &mut Buffers) -> Option<ScanResult> {
        let Build::Cgroup(cg) = self.build else {
            let (s, listed) = self.list_compilers(bufs)?;
            return listed.ok().map(|()| s);
        };
        let pd = self.proc_dir.as_ref()?;
        let mut scan =
            Scan::new(self.opts.compilers, self.page_size_kib).within(self.build.scope());
        let mut files = ProcDir(pd.as_fd());
        let (procs, _) = bufs
            .scratch
            .split_at_mut(crate::followed::buildcg::BUF_LEN.min(SCRATCH_LEN));
        let file = &mut bufs.file;
        let kept = &mut self.kept.compilers;
        cg.members_here()
            .for_each(&mut bufs.dir, procs, &mut |pid| {
                kept.visit_member(&mut scan, pid, &mut files, file)
            })
            .ok()?;
        // Every kept compiler is the build's: one not among its members
        // has exited.
        kept.sweep();
        Some(scan.finish())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::followed::buildcg::BuildCgroup;
    use crate::followed::compilers::CompilerList;
    use crate::kernel::root::Root;
    use crate::tick::sampler::Options;
    use std::fs;
    use std::path::{Path, PathBuf};

    struct Quiet;
    impl Warn for Quiet {
        fn warn(&mut self, _: crate::tick::sampler::Source, _: &'static str) {}
        fn note(&mut self, _: crate::tick::sampler::Source, _: &'static str) {}
    }

    fn tmp(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(std::format!("headroom-glance-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(d.join("proc")).unwrap();
        d
    }

    /// Process `pid` of `root`: its comm, stat (parent `ppid`) and
    /// status (VmRSS `rss_mib`, VmHWM `hwm_mib`).
    fn process(root: &Path, pid: u32, comm: &str, ppid: u32, rss_mib: u64, hwm_mib: u64) {
        let d = root.join(std::format!("proc/{pid}"));
        fs::create_dir_all(&d).unwrap();
        let (rss, hwm) = (rss_mib * 1024, hwm_mib * 1024);
        for (file, text) in [
            ("comm", std::format!("{comm}\n")),
            (
                "stat",
                std::format!("{pid} ({comm}) S {ppid} 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 0\n"),
            ),
            (
                "status",
                std::format!("VmHWM:\t{hwm} kB\nVmRSS:\t{rss} kB\n"),
            ),
        ] {
            fs::write(d.join(file), text).unwrap();
        }
    }

    /// A process-tree build: the glance gives the row's figures.
    #[test]
    fn a_glance_gives_the_governor_s_figures_of_a_row() {
        let d = tmp("tree");
        fs::write(
            d.join("proc/meminfo"),
            "MemTotal: 8388608 kB\nMemFree: 1048576 kB\nMemAvailable: 3145728 kB\n",
        )
        .unwrap();
        process(&d, 10, "make", 1, 1, 1);
        process(&d, 12, "cc1", 10, 50, 70);
        process(&d, 13, "cc1plus", 10, 40, 90);
        process(&d, 20, "cc1plus", 1, 300, 300);
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let mut s = Sampler::new(&root, Options::for_tests(&list), &mut bufs);
        s.build = Build::Tree(10);
        let g = s.glance(&mut bufs, &mut Quiet);
        assert_eq!(
            g,
            Glance {
                mem_known: true,
                mem_avail_mb: 3072,
                cg_mem_avail_mb: None,
                build_rss_mb: 90,
                build_peak_rss_mb: Some(90),
                build_compilers: Some(2),
                top_reclaim: None,
            }
        );
        assert_eq!(Glance::of_row(&s.tick(1, &mut bufs, &mut Quiet)), g);
        // No meminfo, no build compiler: what a row would say.
        fs::remove_file(d.join("proc/meminfo")).unwrap();
        s.build = Build::Tree(20);
        let g = s.glance(&mut bufs, &mut Quiet);
        assert!(!g.mem_known);
        assert_eq!((g.build_rss_mb, g.build_peak_rss_mb), (300, Some(300)));
        s.build = Build::Tree(99);
        assert_eq!(s.glance(&mut bufs, &mut Quiet).build_peak_rss_mb, None);
        let _ = fs::remove_dir_all(&d);
    }

    /// A build in its own cgroup: only its `cgroup.procs` members are
    /// looked at, never the listing of `proc/` (a compiler of the build
    /// that a listing would find but `cgroup.procs` does not name is not
    /// counted: the glance did not list).
    #[test]
    fn a_cgroup_build_s_glance_reads_only_its_members() {
        let d = tmp("cgroup");
        let cg = d.join("sys/fs/cgroup/memory/build");
        fs::create_dir_all(&cg).unwrap();
        fs::create_dir_all(d.join("proc/self")).unwrap();
        fs::write(d.join("proc/self/cgroup"), "4:memory:/build\n").unwrap();
        fs::write(
            d.join("proc/self/mountinfo"),
            "30 1 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
        )
        .unwrap();
        fs::write(
            d.join("proc/meminfo"),
            "MemTotal: 8388608 kB\nMemAvailable: 3145728 kB\n",
        )
        .unwrap();
        fs::write(cg.join("memory.limit_in_bytes"), "1073741824\n").unwrap();
        fs::write(cg.join("memory.usage_in_bytes"), "268435456\n").unwrap();
        fs::write(cg.join("cgroup.procs"), "").unwrap();
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let mut buf = [0u8; crate::kernel::cgroup::OPEN_BUF_LEN];
        let own = crate::kernel::cgroup::open_memory(&root, &mut buf)
            .unwrap()
            .unwrap();
        let b = BuildCgroup::create(&root, &own, 4242, &mut buf).unwrap();
        let build = cg.join("headroom-4242.build");
        for (pid, comm, rss, hwm) in [
            (10, "make", 1, 1),
            (12, "cc1", 50, 70),
            (13, "cc1", 40, 60),
            (20, "cc1plus", 300, 300),
        ] {
            process(&d, pid, comm, 1, rss, hwm);
            let path = if pid == 20 {
                "/other"
            } else {
                "/build/headroom-4242.build"
            };
            fs::write(
                d.join(std::format!("proc/{pid}/cgroup")),
                std::format!("4:memory:{path}\n"),
            )
            .unwrap();
        }
        // 13 is the build's by its cgroup file, but not among the members.
        fs::write(build.join("cgroup.procs"), "10\n12\n20\n").unwrap();
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let mut s = Sampler::new(&root, Options::for_tests(&list), &mut bufs);
        s.build = Build::Cgroup(&b);
        let g = s.glance(&mut bufs, &mut Quiet);
        // 20 is listed but in another cgroup: not the build's.
        assert_eq!((g.build_rss_mb, g.build_peak_rss_mb), (50, Some(70)));
        assert_eq!((g.mem_avail_mb, g.cg_mem_avail_mb), (3072, Some(768)));
        // The cgroup's inactive file cache is available to the governor
        // too: 1024 − (256 − 128) MiB.
        fs::write(
            cg.join("memory.stat"),
            "inactive_file 0\ntotal_inactive_file 134217728\n",
        )
        .unwrap();
        assert_eq!(s.glance(&mut bufs, &mut Quiet).cg_mem_avail_mb, Some(896));
        // The row's full scan finds 13 too.
        let r = s.tick(1, &mut bufs, &mut Quiet);
        assert_eq!((r.build_rss_mb, r.ext.build_peak_rss_mb), (90, Some(70)));
        let _ = fs::remove_dir_all(&d);
    }
}
