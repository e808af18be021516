//! `headroom status`: one screen to read before starting a build.
//!
//! Memory, swap devices, zram devices, `/tmp` and the build disk, the cgroup
//! limits, usable cores, memory pressure and the OOM-kill count, each with
//! where it came from. Every source is optional: one that is missing or
//! unreadable prints "not available" (with the reason) on its own line and
//! the rest of the screen is still printed.
//!
//! Plain aligned text, at most [`MAX_COLUMNS`] columns a line; sizes in whole
//! MiB (rounded down), ratios with two decimals. With `live = false` (a
//! `--root` board tree) filesystem figures come from the tree's
//! [`host::STATVFS_FILE`] capture, and the affinity mask and the `memlock`
//! line (which belong to the process running headroom, not to the board)
//! are not shown.
//!
//! `memlock` says whether `record` and `run` started here would lock their
//! memory in RAM ([`crate::tick::footprint::Outlook`]); `status` itself runs once
//! and locks nothing.
//!
//! # References
//! proc(5) (`/proc/meminfo`, `/proc/swaps`, `/proc/vmstat`),
//! `Documentation/admin-guide/blockdev/zram.rst`,
//! `Documentation/admin-guide/cgroup-v2.rst`,
//! `Documentation/accounting/psi.rst`, statvfs(3), sched_getaffinity(2).

use core::mem::MaybeUninit;

use rustix::fd::{AsFd, BorrowedFd};
use ufmt::{uWrite, uwrite};

use crate::followed::figures::write_centi;
use crate::kernel::cgroup::{self, CgroupError, Version};
use crate::kernel::parse::trim;
use crate::kernel::root::{ReadError, Root, for_each_entry};
use crate::kernel::swaps::{self, Swap, is_zram_name};
use crate::kernel::{psi, vmstat, zram};
use crate::plan::host::{self, CoreLimit, Cores, Memory, MemoryError};

/// Width of the label column (`memory`, `swap dev`, …), in columns.
pub const LABEL_WIDTH: usize = 12;

/// Longest line [`render`] writes, in columns (one column per character).
pub const MAX_COLUMNS: usize = 100;

/// Scratch buffer [`render`] needs, in bytes: `/proc/self/mountinfo` of a
/// host with many container mounts (see [`crate::kernel::mountinfo::BUF_LEN`]).
pub const SCRATCH_LEN: usize = 64 * 1024;

/// Zram devices listed at most; more are counted ("and N more"). Boards run
/// one device, zram-config scripts one per CPU (4–8); 32 keeps the screen.
pub const MAX_ZRAM: usize = 32;

/// Swap devices listed one per line; more are counted ("and N more") so the
/// screen stays one screen (Ubuntu's zram-config makes one per core).
pub const MAX_SWAP_ROWS: usize = 8;

/// zram devices listed one per line; more are counted.
pub const MAX_ZRAM_ROWS: usize = 8;

/// Page size assumed for a `--root` tree, in KiB: the tree does not record
/// the board's page size, and the smallest one flags the fewest devices
/// "full" (a device whose used == size is full with any page size).
const TREE_PAGE_KIB: u64 = 4;

/// getdents64(2) buffer for listing `sys/block`, in bytes: a board has 20–40
/// entries (loop, ram, mmcblk, zram) of ~24 bytes each; a larger directory
/// only takes more calls.
const DIR_SCRATCH_LEN: usize = 1024;

/// Swap-name column width: the name and one space. Longer names get a line
/// of their own.
const NAME_WIDTH: usize = 24;

/// What [`render`] shows.
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

/// Writes the status screen of `root` to `w`.
///
/// `buf` is scratch for the kernel files, [`SCRATCH_LEN`] bytes (a smaller
/// one makes the larger files "not available (larger than its buffer)").
/// Never fails on missing or malformed sources: each prints "not available"
/// or "unknown" on its own line.
///
/// # Errors
/// Only the writer's error.
pub fn render<W: uWrite>(
    root: &Root,
    opts: &StatusOpts<'_>,
    buf: &mut [u8],
    w: &mut W,
) -> Result<(), W::Error> {
    let mem = host::memory(root, buf);
    memory_lines(w, &mem)?;
    binding_lines(w, root, &mem, buf)?;
    swap_total_line(w, &mem)?;

    let sys_block = root.open_dir(zram::SYS_BLOCK);
    let sb = sys_block.as_ref().map(|fd| fd.as_fd()).map_err(|&e| e);
    swap_lines(w, root, sb.ok(), page_kib(opts.live), buf)?;
    zram_lines(w, sb)?;

    fs_lines(w, root, opts.live, "tmp", opts.tmp_path, buf)?;
    fs_lines(w, root, opts.live, "disk", opts.disk_path, buf)?;
    let slow = slow_now::Facts::read(root, opts.disk_path, buf);
    slow_now::disk_io_line(w, &slow)?;

    let memcg = cgroup::open_memory(root, buf);
    cgroup_memory_lines(w, root, &mem, &memcg, buf)?;
    let cores = host::cores(root, opts.live, buf);
    cgroup_cpu_line(w, root, &cores, buf)?;
    cores_line(w, &cores, opts.live)?;

    psi_line(w, root, buf)?;
    oom_line(w, root, &memcg, buf)?;
    slow_now::heat_lines(w, &slow)?;
    if let Some(o) = opts.memlock {
        label(w, "memlock")?;
        o.write(w)?;
        w.write_str("\n")?;
    }
    Ok(())
}

/// The page size a zram swap device is judged full by, KiB: this
/// machine's, or [`TREE_PAGE_KIB`] for a board tree.
fn page_kib(live: bool) -> u64 {
    if live {
        u64::try_from(rustix::param::page_size() / 1024)
            .unwrap_or(TREE_PAGE_KIB)
            .max(1)
    } else {
        TREE_PAGE_KIB
    }
}

// ---- sections ----

fn memory_lines<W: uWrite>(w: &mut W, mem: &Result<Memory, MemoryError>) -> Result<(), W::Error> {
    label(w, "memory")?;
    let m = match mem {
        Ok(m) => m.meminfo,
        Err(e) => {
            w.write_str("not available (")?;
            w.write_str(crate::kernel::meminfo::PATH)?;
            memory_error(w, *e)?;
            return w.write_str(")\n");
        }
    };
    uwrite!(
        w,
        "total {} MiB  available {} MiB  used {}%\n",
        m.mem_total_kib / 1024,
        m.mem_available_kib / 1024,
        m.mem_used_pct()
    )?;
    if m.mem_available_estimated {
        label(w, "")?;
        w.write_str("estimated: kernel has no MemAvailable\n")?;
    }
    Ok(())
}

/// Under the host's figure, when a cgroup limits memory: its available
/// memory, named by its path (`cgroup /x: available 1004 MiB of 1024
/// (usage 719, inactive file 700)`), and which of the two binds
/// (`usable 1004 MiB: the cgroup binds`).
fn binding_lines<W: uWrite>(
    w: &mut W,
    root: &Root,
    mem: &Result<Memory, MemoryError>,
    buf: &mut [u8],
) -> Result<(), W::Error> {
    let Some((m, a)) = mem.as_ref().ok().and_then(|m| m.cgroup.map(|a| (m, a))) else {
        return Ok(());
    };
    // The figures first, so that the path gets the rest of the line.
    let mut figures = heapless::String::<96>::new();
    let _ = uwrite!(
        figures,
        ": available {} MiB of {} (usage {}, inactive file ",
        a.available_bytes >> 20,
        a.limit_bytes >> 20,
        a.usage_bytes >> 20
    );
    let _ = match a.inactive_file_bytes {
        Some(i) => uwrite!(figures, "{})", i >> 20),
        None => uwrite!(figures, "unknown)"),
    };
    label(w, "")?;
    w.write_str("cgroup ")?;
    let mut path = heapless::String::<256>::new();
    host::cgroup_path(root, b"memory", a.depth, buf, &mut path);
    let room = MAX_COLUMNS.saturating_sub(LABEL_WIDTH + 7 + figures.len());
    if path.is_empty() {
        w.write_str("(path unknown)")?;
    } else {
        show(w, path.as_bytes(), room)?;
    }
    w.write_str(&figures)?;
    w.write_str("\n")?;
    label(w, "")?;
    uwrite!(w, "usable {} MiB: ", m.usable_mb)?;
    w.write_str(match m.limit {
        host::MemLimit::Cgroup => "the cgroup binds\n",
        host::MemLimit::MemAvailable => "MemAvailable binds\n",
    })
}

/// The swap totals of /proc/meminfo.
fn swap_total_line<W: uWrite>(
    w: &mut W,
    mem: &Result<Memory, MemoryError>,
) -> Result<(), W::Error> {
    label(w, "swap")?;
    let Ok(m) = mem.as_ref().map(|m| m.meminfo) else {
        return w.write_str("total unknown (no meminfo)\n");
    };
    uwrite!(
        w,
        "total {} MiB  used {} MiB",
        m.swap_total_kib / 1024,
        m.swap_used_kib() / 1024
    )?;
    if m.swap_free_clamped {
        w.write_str("  (SwapFree above SwapTotal: clamped)")?;
    }
    w.write_str("\n")
}

fn memory_error<W: uWrite>(w: &mut W, e: MemoryError) -> Result<(), W::Error> {
    match e {
        MemoryError::Read(e) => {
            w.write_str(": ")?;
            w.write_str(e.describe())
        }
        MemoryError::Parse(_) => w.write_str(" does not parse"),
    }
}

fn swap_lines<W: uWrite>(
    w: &mut W,
    root: &Root,
    sys_block: Option<BorrowedFd<'_>>,
    page_kib: u64,
    buf: &mut [u8],
) -> Result<(), W::Error> {
    label(w, "swap dev")?;
    let b = match root.read(swaps::PATH, buf) {
        Ok(b) => b,
        Err(e) => return not_available(w, swaps::PATH, e),
    };
    if swaps::entries(b).next().is_none() {
        return w.write_str("no swap\n");
    }
    left(w, "name", NAME_WIDTH)?;
    left(w, "type", 10)?;
    right(w, "size MiB", 10)?;
    right(w, "used MiB", 10)?;
    right(w, "prio", 6)?;
    w.write_str("\n")?;
    let mut zbuf = [0u8; zram::BUF_LEN];
    let mut name = [0u8; swaps::NAME_MAX_LEN];
    let total = swaps::entries(b).count();
    for (shown, s) in swaps::entries(b).enumerate() {
        if shown == MAX_SWAP_ROWS && total > MAX_SWAP_ROWS + 1 {
            label(w, "")?;
            uwrite!(w, "and {} more\n", total - shown)?;
            break;
        }
        label(w, "")?;
        let s = match s {
            Ok(s) => s,
            Err(e) => {
                uwrite!(w, "line {} does not parse\n", e.line)?;
                continue;
            }
        };
        let decoded = s.unescape(&mut name);
        if display_len(decoded) < NAME_WIDTH {
            let n = show(w, decoded, NAME_WIDTH)?;
            spaces(w, NAME_WIDTH.saturating_sub(n))?;
        } else {
            show(w, decoded, MAX_COLUMNS - LABEL_WIDTH)?;
            w.write_str("\n")?;
            label(w, "")?;
            spaces(w, NAME_WIDTH)?;
        }
        let kind_width = show(w, s.kind, 9)?;
        spaces(w, 10usize.saturating_sub(kind_width))?;
        right_num(w, s.size_kib / 1024, 10)?;
        right_num(w, s.used_kib / 1024, 10)?;
        right_int(w, s.priority, 6)?;
        if s.is_zram() {
            zram_swap_note(w, &s, sys_block, page_kib, &mut zbuf)?;
        }
        w.write_str("\n")?;
    }
    Ok(())
}

/// How a zram swap device stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ZramSwap {
    /// No page left: used ≥ size − one page, or zram holds as much data as
    /// its disksize; however much other swap is free, pages already on this
    /// device stay in RAM.
    Full,
    /// Room left.
    Room,
    /// Not full by `/proc/swaps`, and `sys/block/zramN` cannot be read.
    Unreadable,
}

fn zram_swap(
    s: &Swap<'_>,
    sys_block: Option<BorrowedFd<'_>>,
    page_kib: u64,
    zbuf: &mut [u8],
) -> ZramSwap {
    let by_swaps = s.size_kib > 0 && s.used_kib >= s.size_kib.saturating_sub(page_kib);
    let dev = sys_block
        .and_then(|sb| core::str::from_utf8(s.basename()).ok().map(|n| (sb, n)))
        .map(|(sb, n)| zram::device(sb, n, zbuf));
    let by_device = match &dev {
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

/// "zram full" or "zram: not available" after a zram swap device's row.
fn zram_swap_note<W: uWrite>(
    w: &mut W,
    s: &Swap<'_>,
    sys_block: Option<BorrowedFd<'_>>,
    page_kib: u64,
    zbuf: &mut [u8],
) -> Result<(), W::Error> {
    match zram_swap(s, sys_block, page_kib, zbuf) {
        ZramSwap::Full => w.write_str("  zram full"),
        ZramSwap::Unreadable => w.write_str("  zram: not available"),
        ZramSwap::Room => Ok(()),
    }
}

/// The zram devices' names under `sys/block`, at most [`MAX_ZRAM`],
/// zram10 after zram9, and how many more there are.
type ZramNames = heapless::Vec<heapless::String<16>, MAX_ZRAM>;

fn zram_names(sb: BorrowedFd<'_>) -> Result<(ZramNames, u32), rustix::io::Errno> {
    let mut names = ZramNames::new();
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
    })?;
    names.sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    Ok((names, more))
}

fn zram_lines<W: uWrite>(
    w: &mut W,
    sys_block: Result<BorrowedFd<'_>, rustix::io::Errno>,
) -> Result<(), W::Error> {
    label(w, "zram")?;
    let sb = match sys_block {
        Ok(sb) => sb,
        Err(e) => return not_available(w, zram::SYS_BLOCK, ReadError::Open(e)),
    };
    let (names, more) = match zram_names(sb) {
        Ok(n) => n,
        Err(e) => return not_available(w, zram::SYS_BLOCK, ReadError::Read(e)),
    };
    if names.is_empty() && more == 0 {
        return w.write_str("none\n");
    }
    left(w, "device", 8)?;
    left(w, "algorithm", 10)?;
    right(w, "disksize", 9)?;
    right(w, "stored", 8)?;
    right(w, "compressed", 12)?;
    right(w, "RAM used", 10)?;
    right(w, "compression", 13)?;
    w.write_str("  (MiB)\n")?;
    let mut zbuf = [0u8; zram::BUF_LEN];
    let more = more.saturating_add(
        u32::try_from(names.len().saturating_sub(MAX_ZRAM_ROWS)).unwrap_or(u32::MAX),
    );
    for name in names.iter().take(MAX_ZRAM_ROWS) {
        label(w, "")?;
        left(w, name, 8)?;
        let d = match zram::device(sb, name, &mut zbuf) {
            Ok(d) => d,
            Err(e) => {
                w.write_str("not available (")?;
                match e {
                    zram::DeviceError::BadName => w.write_str("bad name")?,
                    zram::DeviceError::Read(e) => w.write_str(e.describe())?,
                    zram::DeviceError::Parse(_) => w.write_str("does not parse")?,
                }
                w.write_str(")\n")?;
                continue;
            }
        };
        if !d.initialised {
            w.write_str("not initialised\n")?;
            continue;
        }
        let n = show(
            w,
            d.algorithm.as_deref().unwrap_or("unknown").as_bytes(),
            31,
        )?;
        spaces(w, 10usize.saturating_sub(n).max(1))?;
        right_num(w, d.disksize >> 20, 9)?;
        right_num(w, d.mm_stat.orig_data_size >> 20, 8)?;
        right_num(w, d.mm_stat.compr_data_size >> 20, 12)?;
        right_num(w, d.mm_stat.mem_used_total >> 20, 10)?;
        // The compression ratio, DATA / COMPR as zramctl shows them; not
        // the RAM saving (stored / RAM used) that the summary shows.
        match d.compression_centi() {
            Some(r) => {
                spaces(w, 13usize.saturating_sub(centi_len(r)))?;
                write_centi(w, r)?;
            }
            None => right(w, "-", 13)?,
        }
        w.write_str("\n")?;
    }
    if more > 0 {
        label(w, "")?;
        uwrite!(w, "and {} more\n", more)?;
    }
    Ok(())
}

fn fs_lines<W: uWrite>(
    w: &mut W,
    root: &Root,
    live: bool,
    name: &str,
    path: &str,
    buf: &mut [u8],
) -> Result<(), W::Error> {
    label(w, name)?;
    show(w, path.as_bytes(), 40)?;
    w.write_str(": ")?;
    let (fs_type, source) = host::fs_type_and_source(root, path, buf);
    match &fs_type {
        Some(t) => {
            show(w, t.as_bytes(), 12)?;
        }
        None => w.write_str("type unknown")?,
    }
    if !source.is_empty() {
        w.write_str(" on ")?;
        show(w, source.as_bytes(), 28)?;
    }
    w.write_str("\n")?;
    label(w, "")?;
    let Some(s) = host::fs_stat(root, live, path, buf) else {
        if live {
            w.write_str("size not available (statvfs failed)\n")?;
        } else if root.read(host::STATVFS_FILE, buf).is_err() {
            w.write_str("size not available (no ")?;
            w.write_str(host::STATVFS_FILE)?;
            w.write_str(" capture in the tree)\n")?;
        } else {
            w.write_str("size not available (no line for it in ")?;
            w.write_str(host::STATVFS_FILE)?;
            w.write_str(")\n")?;
        }
        return tmpfs_note(w, fs_type.as_deref());
    };
    uwrite!(
        w,
        "size {} MiB  available {} MiB  use {}%  ",
        s.total_bytes() >> 20,
        s.avail_mib(),
        s.used_pct()
    )?;
    if s.files == 0 {
        w.write_str("inodes not counted\n")?;
    } else {
        uwrite!(w, "inodes free {}\n", s.ffree)?;
    }
    if s.inodes_exhausted() {
        label(w, "")?;
        uwrite!(
            w,
            "inodes exhausted: {} free, new files fail with ENOSPC\n",
            s.ffree
        )?;
    }
    tmpfs_note(w, fs_type.as_deref())
}

fn tmpfs_note<W: uWrite>(w: &mut W, fs_type: Option<&str>) -> Result<(), W::Error> {
    if fs_type == Some("tmpfs") {
        label(w, "")?;
        w.write_str("tmpfs: counts against RAM\n")?;
    }
    Ok(())
}

fn cgroup_memory_lines<W: uWrite>(
    w: &mut W,
    root: &Root,
    mem: &Result<Memory, MemoryError>,
    memcg: &Result<Option<cgroup::MemCgroup>, CgroupError>,
    buf: &mut [u8],
) -> Result<(), W::Error> {
    label(w, "cgroup mem")?;
    let cg = match memcg {
        Ok(Some(cg)) => cg,
        Ok(None) => return w.write_str("no memory controller\n"),
        Err(e) => {
            w.write_str("unknown (")?;
            cgroup_error(w, *e)?;
            return w.write_str(")\n");
        }
    };
    let Ok(m) = mem else {
        return w.write_str("limit unknown (needs MemTotal from proc/meminfo)\n");
    };
    match m.cgroup {
        Some(a) => {
            uwrite!(w, "limit {} MiB  ", a.limit_bytes >> 20)?;
            version(w, cg.version)?;
            w.write_str("\n")?;
            label(w, "")?;
            w.write_str("limit set at ")?;
            let mut path = heapless::String::<256>::new();
            host::cgroup_path(root, b"memory", a.depth, buf, &mut path);
            if path.is_empty() {
                w.write_str("unknown path")?;
            } else {
                show(w, path.as_bytes(), MAX_COLUMNS - LABEL_WIDTH - 13)?;
            }
            w.write_str("\n")?;
            if a.inactive_file_bytes.is_none() {
                label(w, "")?;
                w.write_str("no inactive_file in ")?;
                w.write_str(cgroup::STAT_FILE)?;
                w.write_str(": its page cache counts as used\n")?;
            }
            swap_allowance_line(w, cg.version, m.cgroup_swap_allowance_bytes)
        }
        None => {
            w.write_str("no memory limit ")?;
            version(w, cg.version)?;
            if let Some(u) = cg.usage_bytes(buf) {
                uwrite!(w, "  usage {} MiB", u >> 20)?;
            }
            w.write_str("\n")
        }
    }
}

/// The swap the cgroup allows (`swap: none allowed (memory.swap.max 0)`),
/// under a memory limit.
fn swap_allowance_line<W: uWrite>(
    w: &mut W,
    v: Version,
    allowance: Option<u64>,
) -> Result<(), W::Error> {
    label(w, "")?;
    let file = cgroup::swap_limit_file(v);
    match (allowance, v) {
        (None, _) => w.write_str("swap: not limited by the cgroup\n"),
        (Some(0), Version::V2) => uwrite!(w, "swap: none allowed ({} 0)\n", file),
        (Some(0), Version::V1) => uwrite!(w, "swap: none allowed ({} = the limit)\n", file),
        (Some(n), _) => uwrite!(w, "swap: at most {} MiB ({})\n", n >> 20, file),
    }
}

fn cgroup_cpu_line<W: uWrite>(
    w: &mut W,
    root: &Root,
    cores: &Cores,
    buf: &mut [u8],
) -> Result<(), W::Error> {
    label(w, "cgroup cpu")?;
    if let Some(m) = cores.quota_millicpus {
        w.write_str("quota ")?;
        write_centi(w, m.div_ceil(10))?;
        return w.write_str(" CPUs\n");
    }
    match cgroup::open_cpu(root, buf) {
        Ok(Some(c)) => {
            w.write_str("no CPU quota ")?;
            version(w, c.version)?;
            w.write_str("\n")
        }
        Ok(None) => w.write_str("no CPU quota (no cpu controller)\n"),
        Err(e) => {
            w.write_str("CPU quota unknown (")?;
            cgroup_error(w, e)?;
            w.write_str(")\n")
        }
    }
}

fn cores_line<W: uWrite>(w: &mut W, c: &Cores, live: bool) -> Result<(), W::Error> {
    label(w, "cores")?;
    match c.online {
        Some(n) => uwrite!(w, "online {}", n)?,
        None => w.write_str("online unknown")?,
    }
    if live {
        match c.affinity {
            Some(n) => uwrite!(w, "  affinity {}", n)?,
            None => w.write_str("  affinity unknown")?,
        }
    }
    match c.quota_millicpus {
        Some(m) => {
            w.write_str("  quota ")?;
            write_centi(w, m.div_ceil(10))?;
        }
        None => w.write_str("  quota none")?,
    }
    match c.cpuset {
        Some(n) => uwrite!(w, "  cpuset {}", n)?,
        None => w.write_str("  cpuset none")?,
    }
    uwrite!(w, "  usable {} ({})\n", c.usable, limited_by(c))
}

/// What sets the usable cores: `online`, `affinity`, `quota` or `cpuset`,
/// or `assumed` when none of them is known.
fn limited_by(c: &Cores) -> &'static str {
    let known = c.online.is_some()
        || c.affinity.is_some()
        || c.quota_millicpus.is_some()
        || c.cpuset.is_some();
    if !known {
        return "assumed";
    }
    match c.limit {
        CoreLimit::Online => "online",
        CoreLimit::Affinity => "affinity",
        CoreLimit::Quota => "quota",
        CoreLimit::Cpuset => "cpuset",
    }
}

fn psi_line<W: uWrite>(w: &mut W, root: &Root, buf: &mut [u8]) -> Result<(), W::Error> {
    label(w, "PSI memory")?;
    let b = match psi::read(root, buf) {
        Ok(b) => b,
        Err(e) => return not_available(w, psi::PATH_MEMORY, e),
    };
    if trim(b).is_empty() {
        return w.write_str("not available (empty: PSI disabled)\n");
    }
    match psi::parse(b) {
        Ok(p) => {
            w.write_str("some avg10 ")?;
            write_centi(w, p.some.avg10_centi)?;
            w.write_str("%  avg60 ")?;
            write_centi(w, p.some.avg60_centi)?;
            w.write_str("%  avg300 ")?;
            write_centi(w, p.some.avg300_centi)?;
            w.write_str("%\n")
        }
        Err(_) => {
            w.write_str("not available (")?;
            w.write_str(psi::PATH_MEMORY)?;
            w.write_str(" does not parse)\n")
        }
    }
}

fn oom_line<W: uWrite>(
    w: &mut W,
    root: &Root,
    memcg: &Result<Option<cgroup::MemCgroup>, CgroupError>,
    buf: &mut [u8],
) -> Result<(), W::Error> {
    label(w, "oom_kill")?;
    match vmstat::read(root, buf) {
        Ok(b) => match vmstat::parse(b) {
            Ok(v) => match v.oom_kill {
                Some(n) => uwrite!(w, "{} since boot (host-wide)", n)?,
                None => w.write_str("not counted (kernel before 4.13)")?,
            },
            Err(_) => {
                w.write_str("not available (")?;
                w.write_str(vmstat::PATH)?;
                w.write_str(" does not parse)")?;
            }
        },
        Err(e) => {
            w.write_str("not available (")?;
            w.write_str(vmstat::PATH)?;
            w.write_str(": ")?;
            w.write_str(e.describe())?;
            w.write_str(")")?;
        }
    }
    if let Ok(Some(cg)) = memcg
        && let Some(n) = cg.oom_kills(buf)
    {
        uwrite!(w, "; {} in this cgroup", n)?;
    }
    w.write_str("\n")
}

// ---- small pieces ----

fn version<W: uWrite>(w: &mut W, v: Version) -> Result<(), W::Error> {
    w.write_str(match v {
        Version::V1 => "(v1)",
        Version::V2 => "(v2)",
    })
}

fn cgroup_error<W: uWrite>(w: &mut W, e: CgroupError) -> Result<(), W::Error> {
    match e {
        CgroupError::Read(path, e) => {
            w.write_str(path)?;
            w.write_str(": ")?;
            w.write_str(e.describe())
        }
        CgroupError::Parse(path, _) => {
            w.write_str(path)?;
            w.write_str(" does not parse")
        }
        CgroupError::TooDeep => w.write_str("cgroup path too deep"),
    }
}

/// `not available (PATH: reason)` and a newline.
fn not_available<W: uWrite>(w: &mut W, path: &str, e: ReadError) -> Result<(), W::Error> {
    w.write_str("not available (")?;
    w.write_str(path)?;
    w.write_str(": ")?;
    w.write_str(e.describe())?;
    w.write_str(")\n")
}

/// The label, padded to [`LABEL_WIDTH`] (`""` for a continuation line).
fn label<W: uWrite>(w: &mut W, s: &str) -> Result<(), W::Error> {
    left(w, s, LABEL_WIDTH)
}

fn spaces<W: uWrite>(w: &mut W, n: usize) -> Result<(), W::Error> {
    for _ in 0..n {
        w.write_char(' ')?;
    }
    Ok(())
}

/// ASCII `s` padded on the right to `width`.
fn left<W: uWrite>(w: &mut W, s: &str, width: usize) -> Result<(), W::Error> {
    w.write_str(s)?;
    spaces(w, width.saturating_sub(s.chars().count()))
}

/// ASCII `s` padded on the left to `width`.
fn right<W: uWrite>(w: &mut W, s: &str, width: usize) -> Result<(), W::Error> {
    spaces(w, width.saturating_sub(s.chars().count()))?;
    w.write_str(s)
}

/// Decimal digits of `n`.
fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Characters `write_centi` writes for `c` (`3.33` is 4).
fn centi_len(c: u64) -> usize {
    digits(c / 100) + 3
}

fn right_num<W: uWrite>(w: &mut W, n: u64, width: usize) -> Result<(), W::Error> {
    spaces(w, width.saturating_sub(digits(n)))?;
    uwrite!(w, "{}", n)
}

fn right_int<W: uWrite>(w: &mut W, n: i64, width: usize) -> Result<(), W::Error> {
    let len = digits(n.unsigned_abs()) + usize::from(n < 0);
    spaces(w, width.saturating_sub(len))?;
    uwrite!(w, "{}", n)
}

/// The characters shown for kernel bytes (a path, a device name): valid
/// UTF-8 as is, each control character and each invalid sequence as `?`,
/// so a name decoded from `\012` cannot break the screen.
fn display_chars(b: &[u8]) -> impl Iterator<Item = char> + '_ {
    b.utf8_chunks().flat_map(|c| {
        let bad = if c.invalid().is_empty() {
            None
        } else {
            Some('?')
        };
        c.valid()
            .chars()
            .map(|ch| if ch.is_control() { '?' } else { ch })
            .chain(bad)
    })
}

fn display_len(b: &[u8]) -> usize {
    display_chars(b).count()
}

/// Writes `b` as [`display_chars`], at most `max` characters (at least 4):
/// a longer text keeps its end behind `...`, the informative part of a
/// path. Returns the characters written.
fn show<W: uWrite>(w: &mut W, b: &[u8], max: usize) -> Result<usize, W::Error> {
    let max = max.max(4);
    let n = display_len(b);
    let skip = if n > max {
        w.write_str("...")?;
        n - (max - 3)
    } else {
        0
    };
    for c in display_chars(b).skip(skip) {
        w.write_char(c)?;
    }
    Ok(n.min(max))
}

mod slow_now;
mod status_json;
pub use status_json::{KEYS as JSON_KEYS, render_json};

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
