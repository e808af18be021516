//! What `status` shows, read once: every kernel file (and the board tree's
//! statvfs capture) opened at most once, into one value that the screen
//! ([`super::render`]), `--json` ([`super::render_json`]) and the binary's
//! pool block render. Rendering does no I/O.
//!
//! The files that several figures need are read once and handed to each
//! reader: `/proc/self/cgroup` (the memory and CPU cgroups, the limit's
//! path), `/proc/self/mountinfo` (both cgroups, the `/tmp` and build disk
//! filesystems, the build disk's block device), `/proc/vmstat` (OOM kills,
//! swap traffic), each zram device (its row and the swap row on it), the
//! cgroup limit files (the available memory and the swap allowance).
//!
//! Fixed size, no allocation: [`Snapshot`] is some 30 KiB (most of it
//! `/proc/swaps` kept whole, [`swaps::BUF_LEN`]).

use core::mem::MaybeUninit;

use rustix::fd::{AsFd, BorrowedFd};

use super::slow_now;
use crate::kernel::blockdev;
use crate::kernel::cgroup::{self, CgroupError, Version};
use crate::kernel::container;
use crate::kernel::fsstat::FsStat;
use crate::kernel::meminfo;
use crate::kernel::mountinfo;
use crate::kernel::parse::trim;
use crate::kernel::root::{ReadError, Root, for_each_entry, page_kib};
use crate::kernel::swaps::{self, Swap, is_zram_name};
use crate::kernel::vmstat::{self, VmStat};
use crate::kernel::{psi, zram};
use crate::plan::host::{self, Cores, FsType, Memory, MemoryError};

/// What [`Snapshot::read`] reads and the screen ([`super::render`]) shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusOpts<'a> {
    /// True for the machine headroom runs on (`--root /`): statvfs(3) is
    /// called and the affinity mask is shown. False for a board tree.
    pub live: bool,
    /// The build disk (`--disk-path`), an absolute path.
    pub disk_path: &'a str,
    /// The temporary directory, normally `/tmp`.
    pub tmp_path: &'a str,
    /// Whether a recording started here would lock its memory in RAM
    /// (the `memlock` line); `None` for a board tree, whose limits are not
    /// this process's.
    pub memlock: Option<crate::tick::footprint::Outlook>,
}

/// Zram devices listed at most; more are counted ("and N more"). Boards run
/// one device, zram-config scripts one per CPU (4–8); 32 keeps the screen.
pub const MAX_ZRAM: usize = 32;

/// getdents64(2) buffer for listing `sys/block` (and, for the slow lines,
/// the hwmon, thermal and cpufreq directories), in bytes: a board has 20–40
/// entries (loop, ram, mmcblk, zram) of ~24 bytes each; a larger directory
/// only takes more calls.
const DIR_SCRATCH_LEN: usize = 1024;

/// Bytes of the scratch buffer [`Snapshot::read`] needs: the mount table
/// ([`mountinfo::BUF_LEN`]) and `/proc/self/cgroup` ([`CGROUP_TEXT_LEN`])
/// held while both cgroups, the filesystems and the build disk are
/// resolved from them, and room for the small files read meanwhile
/// ([`cgroup::TICK_BUF_LEN`]). Afterwards the whole buffer is scratch
/// (`/proc/stat` of a many-core host, `/proc/vmstat`).
pub const SCRATCH_LEN: usize = mountinfo::BUF_LEN + CGROUP_TEXT_LEN + cgroup::TICK_BUF_LEN;

/// Bytes kept for `/proc/self/cgroup`: 13 lines on a hybrid host, each a
/// path of at most a few hundred bytes (a Kubernetes pod's is ~120).
pub const CGROUP_TEXT_LEN: usize = 8 * 1024;

/// Rows of `/proc/swaps` a zram verdict is kept for: every row the
/// [`swaps::BUF_LEN`] buffer can hold (each at least a byte and a newline).
const SWAP_ENTRIES: usize = swaps::BUF_LEN / 2 + 1;

/// How a zram swap device stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZramSwap {
    /// No page left: used ≥ size − one page, or zram holds as much data as
    /// its disksize; however much other swap is free, pages already on this
    /// device stay in RAM.
    Full,
    /// Room left.
    Room,
    /// Not full by `/proc/swaps`, and `sys/block/zramN` cannot be read.
    Unreadable,
}

/// The memory cgroup's own figures beyond [`Memory`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemCgroupFacts {
    /// The hierarchy the memory controller is on.
    pub version: Version,
    /// Bytes charged to the cgroup now, read only when no level limits
    /// memory (with a limit, [`Memory::cgroup`] has the usage); `None`
    /// when unreadable.
    pub usage_bytes: Option<u64>,
    /// OOM kills in the cgroup ([`cgroup::MemCgroup::oom_kills`]).
    pub oom_kills: Option<u64>,
    /// The `some` averages of its own `memory.pressure` (v2 only, since
    /// Linux 4.20); `None` on v1, or when absent, empty or malformed.
    pub pressure: Option<PsiAvgs>,
}

/// v2 `memory.pressure` of the cgroup itself (its leaf).
pub const CGROUP_PRESSURE: &str = "memory.pressure";

/// `/proc/swaps` as read, and the verdict on each zram row.
pub struct Swaps {
    text: [u8; swaps::BUF_LEN],
    read: Result<usize, ReadError>,
    zram: [Option<ZramSwap>; SWAP_ENTRIES],
}

impl Swaps {
    /// The file's bytes, or why it could not be read.
    ///
    /// # Errors
    /// The read error.
    pub fn text(&self) -> Result<&[u8], ReadError> {
        self.read.map(|n| &self.text[..n])
    }

    /// The zram verdict of entry `i` of [`swaps::entries`] (`None` for a
    /// row that is not zram or does not parse).
    pub fn zram(&self, i: usize) -> Option<ZramSwap> {
        self.zram.get(i).copied().flatten()
    }
}

/// A zram device's name (`zram0`).
pub type ZramName = heapless::String<16>;

/// The zram devices under `sys/block`, zram10 after zram9, each read.
pub struct ZramDevices {
    /// At most [`MAX_ZRAM`] devices, each with its figures or why not.
    pub devices: heapless::Vec<(ZramName, Result<zram::Device, zram::DeviceError>), MAX_ZRAM>,
    /// Devices beyond [`MAX_ZRAM`] (or with a name too long), not read.
    pub more: u32,
}

/// One filesystem (`/tmp` or the build disk).
pub struct FsFacts<'a> {
    /// The path asked for.
    pub path: &'a str,
    /// Its type in the mount table, when found.
    pub fs_type: Option<FsType>,
    /// The mount's source (`/dev/mmcblk0p2`); empty when unknown.
    pub source: heapless::String<128>,
    /// statvfs figures: the syscall live, the tree's capture otherwise.
    pub stat: Option<FsStat>,
    /// A board tree's [`host::STATVFS_FILE`] could be read (then a missing
    /// `stat` is a missing line in it).
    pub capture_read: bool,
}

/// The `some` averages of `/proc/pressure/memory`, hundredths of a percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PsiAvgs {
    /// `avg10`.
    pub avg10_centi: u64,
    /// `avg60`.
    pub avg60_centi: u64,
    /// `avg300`.
    pub avg300_centi: u64,
}

/// Why there are no PSI figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsiMiss {
    /// The file could not be read.
    Read(ReadError),
    /// It is empty: PSI disabled.
    Empty,
    /// It does not parse.
    Parse,
}

/// Why there are no `/proc/vmstat` counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmMiss {
    /// The file could not be read.
    Read(ReadError),
    /// It does not parse.
    Parse,
}

/// Everything `status` shows, read once; see the module.
pub struct Snapshot<'a> {
    /// What was asked (live or a tree, the paths, the `memlock` outlook).
    pub opts: StatusOpts<'a>,
    /// Memory: /proc/meminfo and the memory cgroup's limits.
    pub mem: Result<Memory, MemoryError>,
    /// The path of the cgroup level whose limit [`Memory::cgroup`] is;
    /// empty when unknown or there is none.
    pub mem_limit_path: heapless::String<256>,
    /// The memory cgroup, `None` without a usable controller.
    pub memcg: Result<Option<MemCgroupFacts>, CgroupError>,
    /// `/proc/swaps` and its zram verdicts.
    pub swaps: Swaps,
    /// The zram devices, or why `sys/block` could not be listed.
    pub zram: Result<ZramDevices, ReadError>,
    /// `/tmp`.
    pub tmp: FsFacts<'a>,
    /// The build disk.
    pub disk: FsFacts<'a>,
    /// The CPU cgroup's hierarchy, `None` without a cpu controller.
    pub cpu_cgroup: Result<Option<Version>, CgroupError>,
    /// Usable cores and their inputs.
    pub cores: Cores,
    /// Memory pressure.
    pub psi: Result<PsiAvgs, PsiMiss>,
    /// `/proc/vmstat`.
    pub vmstat: Result<VmStat, VmMiss>,
    /// The build disk's device and I/O, swap traffic, heat and clock.
    pub slow: slow_now::Facts,
    /// Whether and why headroom runs in a container
    /// ([`container::judge`]); `None` outside one.
    pub container: Option<container::Why>,
}

impl<'a> Snapshot<'a> {
    /// Reads everything `status` shows of `root`, each file once. `buf` is
    /// scratch of [`SCRATCH_LEN`] bytes (a smaller one makes the larger
    /// files "not available (larger than its buffer)"). Never fails: a
    /// source that is missing or malformed is kept as its error.
    pub fn read(root: &Root, opts: StatusOpts<'a>, buf: &mut [u8]) -> Snapshot<'a> {
        let meminfo = meminfo::read(root, buf)
            .map_err(MemoryError::Read)
            .and_then(|b| meminfo::parse(b).map_err(MemoryError::Parse));
        let tables = Tables::read(root, &opts, meminfo, buf);
        let sys_block = root.open_dir(zram::SYS_BLOCK);
        let sb = sys_block.as_ref().ok().map(|fd| fd.as_fd());
        let zram = match &sys_block {
            Ok(fd) => zram_devices(fd.as_fd()),
            Err(e) => Err(ReadError::Open(*e)),
        };
        let page_kib = page_kib(root, opts.live);
        let swaps = read_swaps(root, sb, zram.as_ref().ok(), page_kib);
        let (tmp_stat, disk_stat, capture_read) = fs_stats(root, &opts, buf);
        let cores = host::cores_with(
            root,
            opts.live,
            tables.cpu.as_ref().map(Option::as_ref).map_err(|&e| e),
            buf,
        );
        let vmstat = read_vmstat(root, buf);
        let mut dir = [MaybeUninit::<u8>::uninit(); DIR_SCRATCH_LEN];
        let vm = vmstat.as_ref().ok();
        let slow = slow_now::Facts::read(root, tables.build_disk, vm, page_kib, &mut dir, buf);
        let confined = container::Confinement {
            memory_limit: tables.mem.as_ref().is_ok_and(|m| m.cgroup.is_some()),
            cpu_limit: container::cpu_bound(cores.quota_millicpus, cores.cpuset, cores.online),
            limits_unknown: tables.memcg.is_err() || tables.cpu.is_err(),
        };
        Snapshot {
            container: container::judge(confined, root),
            mem: tables.mem,
            mem_limit_path: tables.mem_limit_path,
            memcg: tables.memcg,
            swaps,
            zram,
            tmp: FsFacts {
                stat: tmp_stat,
                capture_read,
                ..tables.tmp
            },
            disk: FsFacts {
                stat: disk_stat,
                capture_read,
                ..tables.disk
            },
            cpu_cgroup: tables.cpu.map(|c| c.map(|c| c.version)),
            cores,
            psi: read_psi(root, buf),
            vmstat,
            slow,
            opts,
        }
    }
}

/// Whose memory pressure the screen and JSON show ([`Snapshot::psi_shown`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsiScope {
    /// The host's `/proc/pressure/memory`, outside a container.
    Host,
    /// The host's, in a container, and why not the container's own.
    HostInContainer(&'static str),
    /// The container's: its cgroup's own [`CGROUP_PRESSURE`] (v2).
    Cgroup,
}

impl Snapshot<'_> {
    /// The PSI figures to show and whose they are: in a container, its
    /// cgroup's own `memory.pressure` when readable (v2), else the host's
    /// `/proc/pressure/memory`, said to be the host's and why.
    pub fn psi_shown(&self) -> (Result<PsiAvgs, PsiMiss>, PsiScope) {
        if self.container.is_none() {
            return (self.psi, PsiScope::Host);
        }
        match &self.memcg {
            Ok(Some(MemCgroupFacts {
                pressure: Some(p), ..
            })) => (Ok(*p), PsiScope::Cgroup),
            Ok(Some(MemCgroupFacts {
                version: Version::V1,
                ..
            })) => (
                self.psi,
                PsiScope::HostInContainer("cgroup v1 has no memory.pressure"),
            ),
            _ => (
                self.psi,
                PsiScope::HostInContainer("no readable memory.pressure in its cgroup"),
            ),
        }
    }
}

/// What is read from `/proc/self/cgroup` and the mount table while both
/// are held.
struct Tables<'a> {
    mem: Result<Memory, MemoryError>,
    mem_limit_path: heapless::String<256>,
    memcg: Result<Option<MemCgroupFacts>, CgroupError>,
    cpu: Result<Option<cgroup::CpuCgroup>, CgroupError>,
    tmp: FsFacts<'a>,
    disk: FsFacts<'a>,
    build_disk: Result<blockdev::BuildDisk, blockdev::NoDisk>,
}

impl<'a> Tables<'a> {
    /// Reads `/proc/self/cgroup` and `/proc/self/mountinfo` into `buf`
    /// and resolves from them the memory and CPU cgroups (with the memory
    /// figures over `meminfo`), the filesystems of `opts`' paths and the
    /// build disk.
    fn read(
        root: &Root,
        opts: &StatusOpts<'a>,
        meminfo: Result<meminfo::MemInfo, MemoryError>,
        buf: &mut [u8],
    ) -> Tables<'a> {
        let (mi_buf, rest) = buf.split_at_mut(buf.len().min(mountinfo::BUF_LEN));
        let (cg_buf, scratch) = rest.split_at_mut(rest.len().min(CGROUP_TEXT_LEN));
        let cg_text = root.read(cgroup::PATH_SELF, cg_buf);
        let table = root.read(mountinfo::PATH, mi_buf);
        let cg_ok = cg_text.as_ref().map(|t| &**t).map_err(|&e| e);
        let table_ok = table.as_ref().map(|t| &**t).map_err(|&e| e);
        let memcg = cgroup::open_memory_in(root, cg_ok, table_ok, scratch);
        let cpu = cgroup::open_cpu_in(root, cg_ok, table_ok, scratch);
        let mem = meminfo.map(|m| {
            let cg = memcg.as_ref().map(Option::as_ref).map_err(|&e| e);
            host::memory_of(m, cg, scratch)
        });
        let mut mem_limit_path = heapless::String::new();
        if let (Ok(text), Ok(Some(a))) = (cg_ok, mem.as_ref().map(|m| m.cgroup)) {
            let levels = memcg
                .as_ref()
                .ok()
                .and_then(|c| c.as_ref())
                .map(|c| c.levels());
            if levels.is_some_and(|n| usize::from(a.depth) >= n) {
                let _ = mem_limit_path.push_str(cgroup::ABOVE_MOUNT);
            } else {
                host::cgroup_path_in(text, b"memory", a.depth, &mut mem_limit_path);
            }
        }
        let limited = mem.as_ref().is_ok_and(|m| m.cgroup.is_some());
        let memcg = memcg.map(|c| {
            c.map(|c| MemCgroupFacts {
                version: c.version,
                usage_bytes: if limited || mem.is_err() {
                    None
                } else {
                    c.usage_bytes(scratch)
                },
                oom_kills: c.oom_kills(scratch),
                pressure: match c.version {
                    Version::V2 => cgroup_psi(c.leaf(), scratch),
                    Version::V1 => None,
                },
            })
        });
        let fs = |path: &'a str| {
            let (fs_type, source) = host::fs_type_and_source_in(table_ok.ok(), path);
            FsFacts {
                path,
                fs_type,
                source,
                stat: None,
                capture_read: false,
            }
        };
        Tables {
            mem,
            mem_limit_path,
            memcg,
            cpu,
            tmp: fs(opts.tmp_path),
            disk: fs(opts.disk_path),
            build_disk: blockdev::resolve_in(root, opts.disk_path.as_bytes(), table_ok),
        }
    }
}

/// `/proc/swaps`, and each zram row's verdict: its device taken from
/// `listed` when there, else read by name under `sys_block`.
fn read_swaps(
    root: &Root,
    sys_block: Option<BorrowedFd<'_>>,
    listed: Option<&ZramDevices>,
    page_kib: u64,
) -> Swaps {
    let mut s = Swaps {
        text: [0; swaps::BUF_LEN],
        read: Ok(0),
        zram: [None; SWAP_ENTRIES],
    };
    s.read = root.read(swaps::PATH, &mut s.text).map(<[u8]>::len);
    let Ok(n) = s.read else {
        return s;
    };
    let mut zbuf = [0u8; zram::BUF_LEN];
    for (i, row) in swaps::entries(&s.text[..n]).enumerate() {
        let Ok(row) = row else { continue };
        if !row.is_zram() {
            continue;
        }
        let dev = listed
            .and_then(|l| {
                l.devices
                    .iter()
                    .find(|(n, _)| n.as_bytes() == row.basename())
            })
            .map(|(_, d)| d.clone())
            .or_else(|| {
                let sb = sys_block?;
                let name = core::str::from_utf8(row.basename()).ok()?;
                Some(zram::device(sb, name, &mut zbuf))
            });
        if let Some(v) = s.zram.get_mut(i) {
            *v = Some(zram_swap(&row, dev.as_ref(), page_kib));
        }
    }
    s
}

/// The verdict on the zram swap row `s` whose device reads `dev` (`None`
/// when it could not be looked for).
fn zram_swap(
    s: &Swap<'_>,
    dev: Option<&Result<zram::Device, zram::DeviceError>>,
    page_kib: u64,
) -> ZramSwap {
    let by_swaps = s.size_kib > 0 && s.used_kib >= s.size_kib.saturating_sub(page_kib);
    let by_device = match dev {
        Some(Ok(d)) => d.initialised && d.mm_stat.orig_data_size >= d.disksize,
        _ => false,
    };
    if by_swaps || by_device {
        ZramSwap::Full
    } else if !matches!(dev, Some(Ok(_))) {
        ZramSwap::Unreadable
    } else {
        ZramSwap::Room
    }
}

/// The zram devices under the open `sys/block`, at most [`MAX_ZRAM`],
/// zram10 after zram9, each read, and how many more there are.
fn zram_devices(sb: BorrowedFd<'_>) -> Result<ZramDevices, ReadError> {
    let mut names = heapless::Vec::<ZramName, MAX_ZRAM>::new();
    let mut more = 0u32;
    let mut scratch = [MaybeUninit::<u8>::uninit(); DIR_SCRATCH_LEN];
    for_each_entry(sb, &mut scratch, |name, _| {
        if is_zram_name(name) {
            let n = core::str::from_utf8(name)
                .ok()
                .and_then(|n| heapless::String::try_from(n).ok());
            let kept = match n {
                Some(n) => names.push(n).is_ok(),
                None => false,
            };
            if !kept {
                more = more.saturating_add(1);
            }
        }
        true
    })
    .map_err(ReadError::Read)?;
    // By length, then bytes: a total order (kernel::order's heapsort is
    // smaller code than core's sort).
    crate::kernel::order::sort_by(&mut names[..], |a, b| {
        (a.len(), a.as_str()) < (b.len(), b.as_str())
    });
    let mut zbuf = [0u8; zram::BUF_LEN];
    let devices = names
        .into_iter()
        .map(|n| {
            let d = zram::device(sb, &n, &mut zbuf);
            (n, d)
        })
        .collect();
    Ok(ZramDevices { devices, more })
}

/// The statvfs figures of `/tmp` and the build disk, and whether a board
/// tree's capture could be read: the syscall live, else the tree's
/// [`host::STATVFS_FILE`], read once for both.
fn fs_stats(
    root: &Root,
    opts: &StatusOpts<'_>,
    buf: &mut [u8],
) -> (Option<FsStat>, Option<FsStat>, bool) {
    if opts.live {
        let tmp = host::fs_stat(root, true, opts.tmp_path, buf);
        return (tmp, host::fs_stat(root, true, opts.disk_path, buf), false);
    }
    match root.read(host::STATVFS_FILE, buf) {
        Ok(b) => (
            host::captured_stat(b, opts.tmp_path.as_bytes()),
            host::captured_stat(b, opts.disk_path.as_bytes()),
            true,
        ),
        Err(_) => (None, None, false),
    }
}

/// The `some` averages of a v2 cgroup's [`CGROUP_PRESSURE`] in `dir`.
fn cgroup_psi(dir: BorrowedFd<'_>, buf: &mut [u8]) -> Option<PsiAvgs> {
    let b = crate::kernel::root::read_at(dir, CGROUP_PRESSURE, buf).ok()?;
    let p = psi::parse(b).ok()?;
    Some(PsiAvgs {
        avg10_centi: p.some.avg10_centi,
        avg60_centi: p.some.avg60_centi,
        avg300_centi: p.some.avg300_centi,
    })
}

/// `/proc/pressure/memory`'s `some` averages.
fn read_psi(root: &Root, buf: &mut [u8]) -> Result<PsiAvgs, PsiMiss> {
    let b = psi::read(root, buf).map_err(PsiMiss::Read)?;
    if trim(b).is_empty() {
        return Err(PsiMiss::Empty);
    }
    let p = psi::parse(b).map_err(|_| PsiMiss::Parse)?;
    Ok(PsiAvgs {
        avg10_centi: p.some.avg10_centi,
        avg60_centi: p.some.avg60_centi,
        avg300_centi: p.some.avg300_centi,
    })
}

/// `/proc/vmstat`'s counters.
fn read_vmstat(root: &Root, buf: &mut [u8]) -> Result<VmStat, VmMiss> {
    let b = vmstat::read(root, buf).map_err(VmMiss::Read)?;
    vmstat::parse(b).map_err(|_| VmMiss::Parse)
}
