//! The host's capacity as a build sees it: usable cores and memory, and the
//! filesystems, each with where its number came from.
//!
//! Shared by `jobs`, `advise` and `status`. With `--root` other than `/` the
//! tree is a captured board, not this machine: cores then come from the
//! tree's `sys/devices/system/cpu/online` (the affinity mask of the process
//! running headroom says nothing about the board), and filesystem figures
//! from the tree's `statvfs` capture file (see [`STATVFS_FILE`]) instead of
//! the statvfs(3) syscall, so a board can be planned for from any machine.
//!
//! # References
//! sched_getaffinity(2), cgroups(7), `Documentation/admin-guide/cgroup-v2.rst`
//! (cpu.max, memory.max, memory.stat, memory.swap.max), cgroup-v1
//! `cpu.cfs_quota_us` and `memory.memsw.limit_in_bytes`, statvfs(3),
//! `Documentation/admin-guide/cputopology.rst` (`online`).

use crate::kernel::cgroup::{self, Version};
use crate::kernel::fsstat::FsStat;
use crate::kernel::meminfo::{self, MemInfo};
use crate::kernel::parse::{fields, lines, parse_u64};
use crate::kernel::root::{ReadError, Root};

/// Path (under a `--root` tree) of the statvfs capture: one line per
/// captured path, `PATH FRSIZE BLOCKS BFREE BAVAIL FILES FFREE FSTYPE`, as
/// `ci/capture-board` writes it from `stat -f`. Not a kernel file: statvfs
/// is a syscall, so a board tree records its results here.
pub const STATVFS_FILE: &str = "statvfs";

/// `sys/devices/system/cpu/online`: the online CPU list (`0-3`).
pub const CPU_ONLINE: &str = "sys/devices/system/cpu/online";

/// What limits the usable cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreLimit {
    /// The CPUs online (a `--root` tree, or no affinity available).
    Online,
    /// The affinity mask (`taskset`).
    Affinity,
    /// A cgroup CPU quota (v2 cpu.max, v1 cfs_quota_us / cfs_period_us).
    Quota,
    /// The cgroup cpuset.
    Cpuset,
}

/// Cores a build can use, and every input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cores {
    /// CPUs online (from `sys/devices/system/cpu/online`, else the `cpuN`
    /// lines of /proc/stat).
    pub online: Option<u32>,
    /// The file `online` came from.
    pub online_from: &'static str,
    /// CPUs in this process's affinity mask (live host only).
    pub affinity: Option<u32>,
    /// The tightest CPU quota on the cgroup path, in thousandths of a CPU.
    pub quota_millicpus: Option<u64>,
    /// CPUs in the cgroup cpuset (v2 `cpuset.cpus.effective`).
    pub cpuset: Option<u32>,
    /// The result: the smallest of the above (quota rounded up), at least 1.
    pub usable: u32,
    /// Which input gave `usable`.
    pub limit: CoreLimit,
    /// `/proc/self/cgroup` names a cpu cgroup whose files cannot be read:
    /// a quota or cpuset may bind that `usable` does not know (callers
    /// warn; see [`cgroup::Resolution`]).
    pub cgroup_error: Option<cgroup::CgroupError>,
}

/// Counts the CPUs online: the `online` list, else the `cpuN` lines of
/// /proc/stat; with the file it came from. `None` when neither is readable.
fn online_cpus(root: &Root, buf: &mut [u8]) -> Option<(u32, &'static str)> {
    if let Ok(b) = root.read(CPU_ONLINE, buf) {
        return cgroup::parse_cpu_list_count(b)
            .ok()
            .filter(|&n| n > 0)
            .map(|n| (n, CPU_ONLINE));
    }
    let b = root.read(crate::kernel::stat::PATH, buf).ok()?;
    let n = crate::kernel::stat::per_cpu(b).count();
    u32::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .map(|n| (n, crate::kernel::stat::PATH))
}

/// Usable cores: affinity (live) or online CPUs (a tree), capped by the
/// cgroup quota (rounded up) and cpuset. `buf` needs 64 KiB (/proc/stat and
/// mountinfo).
pub fn cores(root: &Root, live: bool, buf: &mut [u8]) -> Cores {
    let cpu_cg = cgroup::open_cpu(root, buf);
    cores_with(
        root,
        live,
        cpu_cg.as_ref().map(Option::as_ref).map_err(|&e| e),
        buf,
    )
}

/// [`cores`] with the CPU cgroup already opened (`Ok(None)` without one,
/// `Err` when its limit is unknown).
pub fn cores_with(
    root: &Root,
    live: bool,
    cpu_cg: Result<Option<&cgroup::CpuCgroup>, cgroup::CgroupError>,
    buf: &mut [u8],
) -> Cores {
    let (cpu_cg, cgroup_error) = match cpu_cg {
        Ok(c) => (c, None),
        Err(e) => (None, Some(e)),
    };
    let (online, online_from) = match online_cpus(root, buf) {
        Some((n, from)) => (Some(n), from),
        None => (None, "none"),
    };
    let affinity = if live {
        rustix::thread::sched_getaffinity(None)
            .ok()
            .map(|s| s.count())
            .filter(|&n| n > 0)
    } else {
        None
    };
    let quota_millicpus = cpu_cg.and_then(|c| c.quota_millicpus(buf));
    let cpuset = cpu_cg.and_then(|c| c.cpuset_count(buf));

    let mut usable = u32::MAX;
    let mut limit = CoreLimit::Online;
    let mut take = |n: Option<u32>, l: CoreLimit| {
        if let Some(n) = n
            && n < usable
        {
            usable = n;
            limit = l;
        }
    };
    // On a live host the affinity mask is the measured figure (ties go to
    // it); online CPUs bind only in a tree, or when affinity is unknown.
    take(affinity, CoreLimit::Affinity);
    take(online, CoreLimit::Online);
    take(
        quota_millicpus.map(|m| u32::try_from(m.div_ceil(1000)).unwrap_or(u32::MAX)),
        CoreLimit::Quota,
    );
    take(cpuset, CoreLimit::Cpuset);
    if usable == u32::MAX {
        usable = 1;
    }
    Cores {
        online,
        online_from,
        affinity,
        quota_millicpus,
        cpuset,
        usable: usable.max(1),
        limit,
        cgroup_error,
    }
}

/// What limits the usable memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemLimit {
    /// MemAvailable of /proc/meminfo (or its estimate).
    MemAvailable,
    /// The available memory under a cgroup limit ([`cgroup::Available`]).
    Cgroup,
}

/// Memory a build can use, and its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// /proc/meminfo.
    pub meminfo: MemInfo,
    /// The tightest limiting level of the cgroup path (the smallest
    /// available memory), when one limits.
    pub cgroup: Option<cgroup::Available>,
    /// The memory controller's hierarchy, when one is usable.
    pub cgroup_version: Option<Version>,
    /// The swap the cgroup's processes may use, bytes
    /// ([`cgroup::MemCgroup::swap_allowance_bytes`]); `None` when no level
    /// limits it (or there is no memory controller).
    pub cgroup_swap_allowance_bytes: Option<u64>,
    /// min(MemAvailable, the cgroup's available memory), MiB.
    pub usable_mb: u64,
    /// Which input gave `usable_mb`: the limit that binds.
    pub limit: MemLimit,
    /// `/proc/self/cgroup` names a memory cgroup whose files cannot be
    /// read: a limit may exist that `usable_mb` does not know (callers
    /// warn; see [`cgroup::Resolution`]).
    pub cgroup_error: Option<cgroup::CgroupError>,
}

impl Memory {
    /// The binding cgroup level, when a cgroup (not MemAvailable) binds.
    pub fn binding_cgroup(&self) -> Option<cgroup::Available> {
        self.cgroup.filter(|_| self.limit == MemLimit::Cgroup)
    }
}

/// Reads /proc/meminfo and the memory cgroup path under `root`: usable
/// memory is the smaller of MemAvailable and the available memory of the
/// tightest limiting cgroup level (limit − (usage − inactive file cache);
/// see [`cgroup::Available`]), and the limit that gives it binds.
///
/// # Errors
/// Reading or parsing /proc/meminfo (the cgroup is optional).
pub fn memory(root: &Root, buf: &mut [u8]) -> Result<Memory, MemoryError> {
    let b = meminfo::read(root, buf).map_err(MemoryError::Read)?;
    let m = meminfo::parse(b).map_err(MemoryError::Parse)?;
    let cg = cgroup::open_memory(root, buf);
    Ok(memory_of(
        m,
        cg.as_ref().map(Option::as_ref).map_err(|&e| e),
        buf,
    ))
}

/// [`memory`] from /proc/meminfo already parsed and the memory cgroup
/// already opened (or why it could not be). `buf`:
/// [`cgroup::TICK_BUF_LEN`].
pub fn memory_of(
    m: MemInfo,
    cg: Result<Option<&cgroup::MemCgroup>, cgroup::CgroupError>,
    buf: &mut [u8],
) -> Memory {
    let (cg, cgroup_error) = match cg {
        Ok(cg) => (cg, None),
        Err(e) => (None, Some(e)),
    };
    let (available, swap) = match cg {
        Some(c) => c.available_and_swap(m.mem_total_kib, m.swap_total_kib, buf),
        None => (None, None),
    };
    let avail_mb = m.mem_available_kib / 1024;
    let (usable_mb, limit) = match available {
        Some(a) if a.available_bytes >> 20 < avail_mb => {
            (a.available_bytes >> 20, MemLimit::Cgroup)
        }
        _ => (avail_mb, MemLimit::MemAvailable),
    };
    Memory {
        meminfo: m,
        cgroup: available,
        cgroup_version: cg.map(|c| c.version),
        cgroup_swap_allowance_bytes: swap,
        usable_mb,
        limit,
        cgroup_error,
    }
}

/// Why [`memory`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryError {
    /// /proc/meminfo could not be read.
    Read(ReadError),
    /// /proc/meminfo did not parse.
    Parse(crate::kernel::parse::ParseError),
}

/// The cgroup path (from /proc/self/cgroup) of `controller`, copied into
/// `out`; with `depth` > 0 the ancestor that many levels up. Empty when
/// unknown. For `--explain` and `status`: "which cgroup path".
pub fn cgroup_path(
    root: &Root,
    controller: &[u8],
    depth: u8,
    buf: &mut [u8],
    out: &mut heapless::String<256>,
) {
    out.clear();
    if let Ok(b) = root.read(cgroup::PATH_SELF, buf) {
        cgroup_path_in(b, controller, depth, out);
    }
}

/// [`cgroup_path`] from the text of `/proc/self/cgroup` already read.
pub fn cgroup_path_in(text: &[u8], controller: &[u8], depth: u8, out: &mut heapless::String<256>) {
    out.clear();
    let Some((_, path)) = cgroup::path_for(text, controller) else {
        return;
    };
    let mut p = path;
    for _ in 0..depth {
        p = match p.iter().rposition(|&c| c == b'/') {
            Some(0) | None => b"/",
            Some(i) => &p[..i],
        };
    }
    let text = core::str::from_utf8(p).unwrap_or("?");
    let _ = out.push_str(text.get(..text.len().min(255)).unwrap_or("?"));
}

/// One filesystem as a build sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fs {
    /// statvfs figures.
    pub stat: FsStat,
    /// Filesystem type from the mount table (`ext4`, `tmpfs`, …), if known.
    pub fs_type: Option<FsType>,
}

/// A filesystem type name, at most 31 bytes.
pub type FsType = heapless::String<32>;

/// The statvfs figures of `path`: the syscall on a live host, the
/// [`STATVFS_FILE`] line for `path` in a `--root` tree.
pub fn fs_stat(root: &Root, live: bool, path: &str, buf: &mut [u8]) -> Option<FsStat> {
    if live {
        let fd = rustix::fs::open(
            path,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok()?;
        return FsStat::of_fd(rustix::fd::AsFd::as_fd(&fd)).ok();
    }
    let b = root.read(STATVFS_FILE, buf).ok()?;
    captured_stat(b, path.as_bytes())
}

/// Parses the [`STATVFS_FILE`] line for `path`.
pub fn captured_stat(b: &[u8], path: &[u8]) -> Option<FsStat> {
    lines(b).find_map(|line| {
        let mut f = fields(line);
        if f.next()? != path {
            return None;
        }
        let mut n = || f.next().and_then(parse_u64);
        Some(FsStat {
            frsize: n()?,
            blocks: n()?,
            bfree: n()?,
            bavail: n()?,
            files: n()?,
            ffree: n()?,
        })
    })
}

/// The filesystem type of `path` from the root's mount table, and the
/// mount's source device (`/dev/mmcblk0p2`), each copied out.
pub fn fs_type_and_source(
    root: &Root,
    path: &str,
    buf: &mut [u8],
) -> (Option<FsType>, heapless::String<128>) {
    fs_type_and_source_in(root.read(crate::kernel::mountinfo::PATH, buf).ok(), path)
}

/// [`fs_type_and_source`] from the mount table already read (`None`
/// when it could not be).
pub fn fs_type_and_source_in(
    table: Option<&[u8]>,
    path: &str,
) -> (Option<FsType>, heapless::String<128>) {
    let mut source = heapless::String::<128>::new();
    let Some(b) = table else {
        return (None, source);
    };
    let Some(m) = crate::kernel::mountinfo::mount_of(b, path.as_bytes()) else {
        return (None, source);
    };
    let mut t = FsType::new();
    let _ = t.push_str(core::str::from_utf8(m.fs_type).unwrap_or("?"));
    let _ = source.push_str(core::str::from_utf8(m.source).unwrap_or(""));
    (Some(t), source)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    #[test]
    fn captured_statvfs_lines() {
        let b = b"/ 4096 6553344 2359040 1966080 1638400 8 ext4\n/tmp 4096 485674 31002 31002 485674 485601 tmpfs\n";
        let s = captured_stat(b, b"/tmp").unwrap();
        assert_eq!((s.blocks, s.bavail, s.ffree), (485_674, 31_002, 485_601));
        assert_eq!(captured_stat(b, b"/").unwrap().ffree, 8);
        assert_eq!(captured_stat(b, b"/home"), None);
        assert_eq!(captured_stat(b"/ 1 2\n", b"/"), None);
    }

    fn root(p: &str) -> Root {
        Root::open(&std::format!(
            "{}/tests/fixtures/{p}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn fixture_06_cores_and_memory_of_a_v2_container() {
        let r = root("06-cgroupv2-container-cpu-max-unlimited");
        let mut buf = std::vec![0u8; 64 * 1024];
        let c = cores(&r, false, &mut buf);
        assert_eq!(c.online, Some(4));
        assert_eq!(c.quota_millicpus, None);
        assert_eq!(c.usable, 4);
        let m = memory(&r, &mut buf).unwrap();
        assert_eq!(m.limit, MemLimit::Cgroup);
        assert_eq!(m.usable_mb, 4);
    }

    #[test]
    fn fixture_07_a_parent_limit_binds_and_names_its_path() {
        let r = root("07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid");
        let mut buf = std::vec![0u8; 64 * 1024];
        let m = memory(&r, &mut buf).unwrap();
        assert_eq!(m.limit, MemLimit::Cgroup);
        assert_eq!(m.usable_mb, 2032);
        let depth = m.cgroup.unwrap().depth;
        let mut path = heapless::String::<256>::new();
        cgroup_path(&r, b"memory", depth, &mut buf, &mut path);
        assert_eq!(path.as_str(), "/user.slice");
    }

    /// The cgroup's available memory (limit − (usage − inactive file
    /// cache)) binds, far below MemAvailable, and it may not swap.
    #[test]
    fn fixture_46_the_cgroup_with_clean_cache_binds_at_its_available_memory() {
        for (case, mem_avail_mb) in [
            ("a-v1-docker-memsw-equal", 22999),
            ("b-v2-docker-swap-max-0", 12573),
        ] {
            let r = root(&std::format!("46-cgroup-page-cache-is-available/{case}"));
            let mut buf = std::vec![0u8; 64 * 1024];
            let m = memory(&r, &mut buf).unwrap();
            assert_eq!(m.meminfo.mem_available_kib / 1024, mem_avail_mb, "{case}");
            assert_eq!((m.limit, m.usable_mb), (MemLimit::Cgroup, 1004), "{case}");
            assert_eq!(m.binding_cgroup().unwrap().depth, 0);
            assert_eq!(m.cgroup_swap_allowance_bytes, Some(0), "{case}");
            assert_eq!(cores(&r, false, &mut buf).usable, 2, "{case}");
        }
    }

    #[test]
    fn fixture_07_b_quota_of_one_and_a_half_rounds_up_to_two() {
        let r = root("07-cgroup-hybrid-memory-on-v1-line/b-v2-plus-one-v1-controller");
        let mut buf = std::vec![0u8; 64 * 1024];
        let c = cores(&r, false, &mut buf);
        assert_eq!(c.quota_millicpus, Some(1500));
        assert_eq!(c.online, None, "the fixture has no CPU list");
        assert_eq!((c.usable, c.limit), (2, CoreLimit::Quota));
    }
}
