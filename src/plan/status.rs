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

use ufmt::{uWrite, uwrite};

use crate::followed::figures::write_centi;
use crate::kernel::cgroup::{self, CgroupError, Version};
use crate::kernel::root::ReadError;
use crate::kernel::swaps;
use crate::kernel::vmstat::VmStat;
use crate::kernel::{psi, vmstat, zram};
use crate::plan::host::{self, Cores, Memory, MemoryError};
use screen_text::{
    centi_len, cgroup_error, display_len, label, left, limited_by, right, right_int, right_num,
    show, spaces,
};
use snapshot::{
    FsFacts, MemCgroupFacts, PsiAvgs, PsiMiss, PsiScope, Snapshot, Swaps, VmMiss, ZramDevices,
    ZramSwap,
};

/// Longest line [`render`] writes, in columns (one column per character).
pub const MAX_COLUMNS: usize = 100;

/// Swap devices listed one per line; more are counted ("and N more") so the
/// screen stays one screen (Ubuntu's zram-config makes one per core).
pub const MAX_SWAP_ROWS: usize = 8;

/// zram devices listed one per line; more are counted.
pub const MAX_ZRAM_ROWS: usize = 8;

/// Swap-name column width: the name and one space. Longer names get a line
/// of their own.
const NAME_WIDTH: usize = 24;

/// Writes the status screen of `s` to `w`, then what `more` writes (the
/// binary's pool block). Never fails on missing or malformed sources: each
/// prints "not available" or "unknown" on its own line.
///
/// # Errors
/// Only the writer's error (and `more`'s, which is the writer's).
pub fn render<W: uWrite>(
    s: &Snapshot<'_>,
    w: &mut W,
    more: Option<Extra<'_, W>>,
) -> Result<(), W::Error> {
    memory_lines(w, &s.mem, s.container.is_some())?;
    binding_lines(w, &s.mem, &s.mem_limit_path)?;
    swap_total_line(w, &s.mem)?;
    swap_lines(w, &s.swaps)?;
    zram_lines(w, &s.zram)?;

    fs_lines(w, s.opts.live, "tmp", &s.tmp)?;
    fs_lines(w, s.opts.live, "disk", &s.disk)?;
    slow_now::disk_io_line(w, &s.slow)?;

    cgroup_memory_lines(w, &s.mem, &s.memcg, &s.mem_limit_path)?;
    cgroup_cpu_line(w, &s.cores, &s.cpu_cgroup)?;
    cores_line(w, &s.cores, s.opts.live)?;
    if let Some(why) = s.container {
        label(w, "container")?;
        uwrite!(
            w,
            "yes ({}): figures marked the host's or host-wide are not its own\n",
            why.describe()
        )?;
    }

    psi_line(w, s.psi_shown())?;
    oom_line(w, &s.vmstat, &s.memcg)?;
    slow_now::heat_lines(w, &s.slow)?;
    if let Some(o) = s.opts.memlock {
        label(w, "memlock")?;
        o.write(w)?;
        w.write_str("\n")?;
    }
    match more {
        Some(more) => more(w),
        None => Ok(()),
    }
}

// ---- sections ----

fn memory_lines<W: uWrite>(
    w: &mut W,
    mem: &Result<Memory, MemoryError>,
    in_container: bool,
) -> Result<(), W::Error> {
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
        "total {} MiB  available {} MiB  used {}%",
        m.mem_total_kib / 1024,
        m.mem_available_kib / 1024,
        m.mem_used_pct()
    )?;
    w.write_str(if in_container {
        "  (the host's)\n"
    } else {
        "\n"
    })?;
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
    mem: &Result<Memory, MemoryError>,
    path: &str,
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

fn swap_lines<W: uWrite>(w: &mut W, sw: &Swaps) -> Result<(), W::Error> {
    label(w, "swap dev")?;
    let b = match sw.text() {
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
        zram_swap_note(w, sw.zram(shown))?;
        w.write_str("\n")?;
    }
    Ok(())
}

/// "zram full" or "zram: not available" after a zram swap device's row.
fn zram_swap_note<W: uWrite>(w: &mut W, v: Option<ZramSwap>) -> Result<(), W::Error> {
    match v {
        Some(ZramSwap::Full) => w.write_str("  zram full"),
        Some(ZramSwap::Unreadable) => w.write_str("  zram: not available"),
        Some(ZramSwap::Room) | None => Ok(()),
    }
}

fn zram_lines<W: uWrite>(w: &mut W, zram: &Result<ZramDevices, ReadError>) -> Result<(), W::Error> {
    label(w, "zram")?;
    let (devices, more) = match zram {
        Ok(z) => (&z.devices, z.more),
        Err(e) => return not_available(w, zram::SYS_BLOCK, *e),
    };
    if devices.is_empty() && more == 0 {
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
    let more = more.saturating_add(
        u32::try_from(devices.len().saturating_sub(MAX_ZRAM_ROWS)).unwrap_or(u32::MAX),
    );
    for (name, d) in devices.iter().take(MAX_ZRAM_ROWS) {
        label(w, "")?;
        left(w, name, 8)?;
        let d = match d {
            Ok(d) => d,
            Err(e) => {
                w.write_str("not available (")?;
                match *e {
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

fn fs_lines<W: uWrite>(w: &mut W, live: bool, name: &str, f: &FsFacts<'_>) -> Result<(), W::Error> {
    label(w, name)?;
    show(w, f.path.as_bytes(), 40)?;
    w.write_str(": ")?;
    let (fs_type, source) = (&f.fs_type, &f.source);
    match fs_type {
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
    let Some(s) = f.stat else {
        if live {
            w.write_str("size not available (statvfs failed)\n")?;
        } else if !f.capture_read {
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
    mem: &Result<Memory, MemoryError>,
    memcg: &Result<Option<MemCgroupFacts>, CgroupError>,
    path: &str,
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
            if let Some(u) = cg.usage_bytes {
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
    cores: &Cores,
    cpu: &Result<Option<Version>, CgroupError>,
) -> Result<(), W::Error> {
    label(w, "cgroup cpu")?;
    if let Some(m) = cores.quota_millicpus {
        w.write_str("quota ")?;
        write_centi(w, m.div_ceil(10))?;
        return w.write_str(" CPUs\n");
    }
    match *cpu {
        Ok(Some(v)) => {
            w.write_str("no CPU quota ")?;
            version(w, v)?;
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
        None if c.cgroup_error.is_some() => w.write_str("  quota unknown")?,
        None => w.write_str("  quota none")?,
    }
    match c.cpuset {
        Some(n) => uwrite!(w, "  cpuset {}", n)?,
        None if c.cgroup_error.is_some() => w.write_str("  cpuset unknown")?,
        None => w.write_str("  cpuset none")?,
    }
    uwrite!(w, "  usable {} ({})\n", c.usable, limited_by(c))
}

fn psi_line<W: uWrite>(
    w: &mut W,
    (p, scope): (Result<PsiAvgs, PsiMiss>, PsiScope),
) -> Result<(), W::Error> {
    label(w, "PSI memory")?;
    match p {
        Ok(p) => {
            w.write_str("some avg10 ")?;
            write_centi(w, p.avg10_centi)?;
            w.write_str("%  avg60 ")?;
            write_centi(w, p.avg60_centi)?;
            w.write_str("%  avg300 ")?;
            write_centi(w, p.avg300_centi)?;
            w.write_str("%\n")?;
            match scope {
                PsiScope::Host => Ok(()),
                PsiScope::HostInContainer(why) => {
                    label(w, "")?;
                    uwrite!(w, "the host's ({}): {}\n", psi::PATH_MEMORY, why)
                }
                PsiScope::Cgroup => {
                    label(w, "")?;
                    uwrite!(
                        w,
                        "this container's (its cgroup's {})\n",
                        snapshot::CGROUP_PRESSURE
                    )
                }
            }
        }
        Err(PsiMiss::Read(e)) => not_available(w, psi::PATH_MEMORY, e),
        Err(PsiMiss::Empty) => w.write_str("not available (empty: PSI disabled)\n"),
        Err(PsiMiss::Parse) => {
            w.write_str("not available (")?;
            w.write_str(psi::PATH_MEMORY)?;
            w.write_str(" does not parse)\n")
        }
    }
}

fn oom_line<W: uWrite>(
    w: &mut W,
    vm: &Result<VmStat, VmMiss>,
    memcg: &Result<Option<MemCgroupFacts>, CgroupError>,
) -> Result<(), W::Error> {
    label(w, "oom_kill")?;
    match *vm {
        Ok(v) => match v.oom_kill {
            Some(n) => uwrite!(w, "{} since boot (host-wide)", n)?,
            None => w.write_str("not counted (kernel before 4.13)")?,
        },
        Err(VmMiss::Parse) => {
            w.write_str("not available (")?;
            w.write_str(vmstat::PATH)?;
            w.write_str(" does not parse)")?;
        }
        Err(VmMiss::Read(e)) => {
            w.write_str("not available (")?;
            w.write_str(vmstat::PATH)?;
            w.write_str(": ")?;
            w.write_str(e.describe())?;
            w.write_str(")")?;
        }
    }
    if let Ok(Some(cg)) = memcg
        && let Some(n) = cg.oom_kills
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

/// `not available (PATH: reason)` and a newline.
fn not_available<W: uWrite>(w: &mut W, path: &str, e: ReadError) -> Result<(), W::Error> {
    w.write_str("not available (")?;
    w.write_str(path)?;
    w.write_str(": ")?;
    w.write_str(e.describe())?;
    w.write_str(")\n")
}

mod screen_text;
pub mod slow_now;
pub mod snapshot;
mod status_json;
pub use screen_text::{Extra, LABEL_WIDTH};
pub use snapshot::{MAX_ZRAM, SCRATCH_LEN, StatusOpts};
pub use status_json::{KEYS as JSON_KEYS, render_json};

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::kernel::root::Root;
    use crate::testkit::Out;
    use std::string::String;
    use std::vec::Vec;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

    fn render_at(dir: &str, disk: &str) -> String {
        let root = Root::open(dir).unwrap();
        let opts = StatusOpts {
            live: false,
            disk_path: disk,
            tmp_path: "/tmp",
            memlock: None,
        };
        let mut buf = std::vec![0u8; SCRATCH_LEN];
        let mut out = Out(String::new());
        let snap = Snapshot::read(&root, opts, &mut buf);
        let Ok(()) = render(&snap, &mut out, None);
        for line in out.0.lines() {
            assert!(line.chars().count() <= MAX_COLUMNS, "too wide: {line:?}");
            assert!(!line.ends_with(' '), "trailing space: {line:?}");
        }
        assert!(
            out.0.lines().count() <= 40,
            "more than a screen:\n{}",
            out.0
        );
        out.0
    }

    fn fixture(case: &str) -> String {
        render_at(&std::format!("{FIX}{case}"), "/")
    }

    #[track_caller]
    fn has(out: &str, line: &str) {
        assert!(
            out.lines().any(|l| l == line),
            "no line {line:?} in:\n{out}"
        );
    }

    /// Whole lines `text` (several, each ending in a newline), in order.
    #[track_caller]
    fn has_lines(out: &str, text: &str) {
        assert!(
            out.starts_with(text) || out.contains(&std::format!("\n{text}")),
            "no lines {text:?} in:\n{out}"
        );
    }

    /// A scratch tree under the temp dir, removed on drop.
    struct Tree(std::path::PathBuf);

    impl Tree {
        fn new(name: &str) -> Tree {
            let p = std::env::temp_dir().join(std::format!(
                "headroom-status-{}-{name}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Tree(p)
        }
        fn file(&self, rel: &str, content: &[u8]) -> &Self {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
            self
        }
        fn path(&self) -> &str {
            self.0.to_str().unwrap()
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn fixture_06_cgroupv2_container_cpu_max_unlimited() {
        let out = fixture("06-cgroupv2-container-cpu-max-unlimited");
        std::println!("{out}");
        // No memory.stat in the case: the cache counts as used, and it says so.
        has_lines(
            &out,
            "            cgroup /: available 4 MiB of 2048 (usage 2044, inactive file unknown)\n            usable 4 MiB: the cgroup binds\nswap        total 8191 MiB",
        );
        has_lines(
            &out,
            "cgroup mem  limit 2048 MiB  (v2)\n            limit set at /\n            no inactive_file in memory.stat: its page cache counts as used\n            swap: at most 2048 MiB (memory.swap.max)\n",
        );
        has(&out, "cgroup cpu  no CPU quota (v2)");
        has(
            &out,
            "cores       online 4  quota none  cpuset 4  usable 4 (online)",
        );
        has(
            &out,
            "oom_kill    7 since boot (host-wide); 3 in this cgroup",
        );
        has(&out, "swap dev    not available (proc/swaps: not found)");
        has(&out, "zram        not available (sys/block: not found)");
        has(
            &out,
            "PSI memory  not available (proc/pressure/memory: not found)",
        );
        has(
            &out,
            "            size not available (no statvfs capture in the tree)",
        );
        assert!(!out.contains("affinity"));
        assert!(out.starts_with("memory      total "));
    }

    #[test]
    fn fixture_08_rpi_memory_cgroup_disabled() {
        let out = fixture("08-rpi-memory-cgroup-disabled");
        // CASE: MemTotal 8052.0 MB (8245232 kB = 8051.98 MiB, shown rounded
        // down like the CSV), MemAvailable 7449.7.
        has(
            &out,
            "memory      total 8051 MiB  available 7449 MiB  used 7%",
        );
        has(&out, "cgroup mem  no memory controller");
        has(&out, "cgroup cpu  no CPU quota (v2)");
        has(&out, "oom_kill    not available (proc/vmstat: not found)");
    }

    #[test]
    fn fixture_09_e_sparse_numbering_only_zram1() {
        let out = fixture("09-zram-mm-stat-field-counts/e-sparse-numbering-only-zram1");
        has(
            &out,
            "swap dev    name                    type        size MiB  used MiB  prio",
        );
        has(
            &out,
            "            /dev/zram1              partition       1023        50   100",
        );
        has(
            &out,
            "zram        device  algorithm  disksize  stored  compressed  RAM used  compression  (MiB)",
        );
        has(
            &out,
            "            zram1   lzo-rle        1024      50          15        17         3.33",
        );
        has(&out, "memory      not available (proc/meminfo: not found)");
        has(&out, "cgroup mem  no memory controller");
    }

    /// An idle device (one 4 KiB page in 74 bytes): its sizes, and `-` for
    /// the ratio it cannot have yet (not 55.35).
    #[test]
    fn fixture_09_f_idle_one_page() {
        let dir = std::format!("{FIX}09-zram-mm-stat-field-counts/f-idle-one-page");
        let out = render_at(&dir, "/");
        has(
            &out,
            "            zram0   lzo-rle         512       0           0         0            -",
        );
        let json = json_at(&dir);
        assert!(json.contains("\"compression_ratio\":null"), "{json}");
    }

    #[test]
    fn fixture_09_d_uninitialized() {
        let out = fixture("09-zram-mm-stat-field-counts/d-uninitialized");
        has(&out, "            zram0   not initialised");
    }

    #[test]
    fn fixture_11_b_escaped_space_and_long_path() {
        let out = fixture("11-proc-swaps-layouts-and-escapes/b-escaped-space-and-long-path");
        has(
            &out,
            "            /mnt/usb disk/swapfile  file            1023         0    -2",
        );
        has(
            &out,
            "            /srv/buildcache/swap-area/raspberrypi-build-swapfile.img",
        );
        has(
            &out,
            "                                    file            2047        10    -3",
        );
        // No sys/block in this tree: the zram line says so.
        has(
            &out,
            "            /dev/zram0              partition        495        12   100  zram: not available",
        );
    }

    #[test]
    fn fixture_11_a_no_swap() {
        let out = fixture("11-proc-swaps-layouts-and-escapes/a-no-swap");
        has(&out, "swap dev    no swap");
    }

    #[test]
    fn fixture_04_cgroupv1_unlimited_sentinels() {
        let out = fixture("04-cgroupv1-unlimited-sentinels");
        // CASE: effective limit = MemTotal 3940.8 MB (4035420 kB): the
        // cgroup's "unlimited" sentinel does not show as a limit.
        has(
            &out,
            "memory      total 3940 MiB  available 2573 MiB  used 34%",
        );
        has(&out, "cgroup mem  no memory limit (v1)  usage 28 MiB");
        has(&out, "cgroup cpu  no CPU quota (v1)");
        has(
            &out,
            "oom_kill    not available (proc/vmstat: not found); 0 in this cgroup",
        );
    }

    #[test]
    fn fixture_01_meminfo_no_memavailable() {
        let out = fixture("01-meminfo-no-memavailable");
        has(&out, "            estimated: kernel has no MemAvailable");
        has(&out, "swap        total 3072 MiB  used 0 MiB");
    }

    #[test]
    fn fixture_19_psi() {
        let out = fixture("19-psi-unavailable/c-psi-enabled");
        has(
            &out,
            "PSI memory  some avg10 1.21%  avg60 0.87%  avg300 0.30%",
        );
        let out = fixture("19-psi-unavailable/b-psi-default-disabled");
        has(&out, "PSI memory  not available (empty: PSI disabled)");
    }

    #[test]
    fn fixture_20_vmstat_no_oom_kill() {
        let out = fixture("20-vmstat-no-oom-kill/a-kernel-3.10-no-oom_kill");
        has(&out, "oom_kill    not counted (kernel before 4.13)");
    }

    #[test]
    fn fixture_22_statvfs_inodes_exhausted_and_tmpfs_tmp() {
        let case = std::format!("{FIX}22-statvfs-inodes-exhausted-and-tmpfs-tmp/");
        let t = Tree::new("22");
        for f in ["proc/self/mountinfo", "proc/meminfo"] {
            t.file(f, &std::fs::read(std::format!("{case}{f}")).unwrap());
        }
        // The capture of statvfs.json in the tree's `statvfs` format.
        t.file(
            host::STATVFS_FILE,
            b"/ 4096 6553344 2359040 1966080 1638400 8 ext4\n\
              /home/builder/src 4096 6553344 2359040 1966080 1638400 8 ext4\n\
              /tmp 4096 485674 31002 31002 485674 485601 tmpfs\n",
        );
        let out = render_at(t.path(), "/home/builder/src");
        has(&out, "tmp         /tmp: tmpfs on tmpfs");
        has(
            &out,
            "            size 1897 MiB  available 121 MiB  use 94%  inodes free 485601",
        );
        has(&out, "            tmpfs: counts against RAM");
        has(
            &out,
            "disk        /home/builder/src: ext4 on /dev/mmcblk0p2",
        );
        has(
            &out,
            "            size 25599 MiB  available 7680 MiB  use 69%  inodes free 8",
        );
        has(
            &out,
            "            inodes exhausted: 8 free, new files fail with ENOSPC",
        );
        assert_eq!(out.matches("tmpfs: counts").count(), 1);
        assert_eq!(out.matches("inodes exhausted").count(), 1);
        let out = render_at(t.path(), "/srv");
        has(&out, "disk        /srv: ext4 on /dev/mmcblk0p2");
        has(
            &out,
            "            size not available (no line for it in statvfs)",
        );
    }

    fn zram_tree(name: &str, swaps_row: &str, disksize: &str, mm_stat: &str) -> Tree {
        let t = Tree::new(name);
        t.file(
            "proc/swaps",
            std::format!(
                "Filename\tType\tSize\tUsed\tPriority\n{swaps_row}\n/swapfile file 1048572 0 -2\n"
            )
            .as_bytes(),
        )
        .file("sys/block/zram0/disksize", disksize.as_bytes())
        .file("sys/block/zram0/mm_stat", mm_stat.as_bytes())
        .file("sys/block/zram0/comp_algorithm", b"lzo [lz4] zstd\n");
        t
    }

    #[test]
    fn zram_full_when_used_reaches_size_whatever_other_swap_is_free() {
        let t = zram_tree(
            "full",
            "/dev/zram0 partition 524284 524284 100",
            "536870912\n",
            "300000000 100000000 110000000 0 110000000 0 0\n",
        );
        let out = render_at(t.path(), "/");
        has(
            &out,
            "            /dev/zram0              partition        511       511   100  zram full",
        );
        has(
            &out,
            "            /swapfile               file            1023         0    -2",
        );
        has(
            &out,
            "            zram0   lz4             512     286          95       104         3.00",
        );
    }

    #[test]
    fn zram_full_by_one_page_or_by_stored_data() {
        // One 4 KiB page short of the size: full.
        let t = zram_tree(
            "page",
            "/dev/zram0 partition 524284 524280 100",
            "536870912\n",
            "1000 500 4096\n",
        );
        assert!(render_at(t.path(), "/").contains("  zram full\n"));
        // Two pages short, but orig_data_size reached disksize: full.
        let t = zram_tree(
            "stored",
            "/dev/zram0 partition 524284 524276 100",
            "536870912\n",
            "536870912 100000000 110000000\n",
        );
        assert!(render_at(t.path(), "/").contains("  zram full\n"));
        // Two pages short and data below disksize: not full.
        let t = zram_tree(
            "notfull",
            "/dev/zram0 partition 524284 524276 100",
            "536870912\n",
            "1000 500 4096\n",
        );
        let out = render_at(t.path(), "/");
        assert!(!out.contains("zram full"), "{out}");
        has(
            &out,
            "            /dev/zram0              partition        511       511   100",
        );
    }

    #[test]
    fn an_empty_tree_prints_every_line_as_not_available() {
        let t = Tree::new("empty");
        let out = render_at(t.path(), "/");
        let want = [
            "memory      not available (proc/meminfo: not found)",
            "swap        total unknown (no meminfo)",
            "swap dev    not available (proc/swaps: not found)",
            "zram        not available (sys/block: not found)",
            "tmp         /tmp: type unknown",
            "            size not available (no statvfs capture in the tree)",
            "disk        /: type unknown",
            "            size not available (no statvfs capture in the tree)",
            "            I/O: no block device (mount table unreadable)",
            "cgroup mem  no memory controller",
            "cgroup cpu  no CPU quota (no cpu controller)",
            "cores       online unknown  quota none  cpuset none  usable 1 (assumed)",
            "PSI memory  not available (proc/pressure/memory: not found)",
            "oom_kill    not available (proc/vmstat: not found)",
            "cpu temp    no CPU sensor (no thermal zone or hwmon of the CPU)",
            "cpu freq    no cpufreq",
        ];
        assert_eq!(out.lines().collect::<Vec<_>>(), want);
    }

    #[test]
    fn hostile_swap_names_and_garbage_rows() {
        let long = "/x".repeat(200);
        let t = Tree::new("hostile");
        let mut swaps = b"Filename Type Size Used Priority\n/a\\012b\\033[2J\xff file 10240 0 -1\n\
                          /bad file 1x 0 -1\n"
            .to_vec();
        swaps.extend_from_slice(std::format!("{long} file 0 0 -3\n").as_bytes());
        t.file("proc/swaps", &swaps)
            .file("sys/block/zram9/disksize", b"garbage\n");
        let out = render_at(t.path(), "/");
        has(
            &out,
            "            /a?b?[2J?               file              10         0    -1",
        );
        has(&out, "            line 3 does not parse");
        let tail = std::format!("            ...{}", &long[long.len() - 85..]);
        has(&out, &tail);
        has(&out, "            zram9   not available (does not parse)");
    }

    #[test]
    fn boards_fit_one_screen() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/boards/");
        let out = render_at(&std::format!("{dir}rpi5-8g-bookworm"), "/");
        std::println!("{out}");
        has(&out, "cgroup mem  no memory controller");
        assert!(out.contains("            zram0   zstd  "), "{out}");
        let out = render_at(&std::format!("{dir}x86_64-vm-2c-24g"), "/");
        std::println!("{out}");
        has(&out, "            zram0   not initialised");
    }

    #[test]
    fn long_paths_sources_and_types_stay_within_the_width() {
        let long = std::format!("/{}", "d".repeat(150));
        let t = Tree::new("wide");
        t.file(
            "proc/self/mountinfo",
            std::format!(
                "22 1 179:2 / / rw - fuse.a-very-long-filesystem-type {}/source rw\n",
                "s".repeat(120)
            )
            .as_bytes(),
        )
        .file(
            "proc/swaps",
            b"/dev/zram0 partition 1000 1000 100\n/swap\\040file partition 8 0 -1\n",
        );
        // render_at checks every line against MAX_COLUMNS.
        let out = render_at(t.path(), &long);
        let tail = &long[long.len() - 37..];
        has(
            &out,
            &std::format!(
                "disk        ...{tail}: ...stem-type on ...{}/source",
                "s".repeat(18)
            ),
        );
        // Full and without sys/block: "zram full" only.
        has(
            &out,
            "            /dev/zram0              partition          0         0   100  zram full",
        );
        has(
            &out,
            "            /swap file              partition          0         0    -1",
        );
    }

    #[test]
    fn live_host_renders_without_failing() {
        let root = Root::open("/").unwrap();
        let mut buf = std::vec![0u8; SCRATCH_LEN];
        let opts = StatusOpts {
            live: true,
            disk_path: "/",
            tmp_path: "/tmp",
            memlock: Some(crate::tick::footprint::Outlook::of_self(false, &mut buf)),
        };
        let mut out = Out(String::new());
        let snap = Snapshot::read(&root, opts, &mut buf);
        let Ok(()) = render(&snap, &mut out, None);
        std::println!("{}", out.0);
        assert!(out.0.contains("  affinity "), "{}", out.0);
        // Last: what a recording started here would do about locking.
        let last = out.0.lines().last().unwrap_or_default();
        assert!(last.starts_with("memlock     record and run "), "{}", out.0);
        assert!(out.0.lines().all(|l| l.chars().count() <= MAX_COLUMNS));
    }

    // ---- status --json ----

    fn json_at(dir: &str) -> String {
        let root = Root::open(dir).unwrap();
        let opts = StatusOpts {
            live: false,
            disk_path: "/",
            tmp_path: "/tmp",
            memlock: None,
        };
        let mut buf = std::vec![0u8; SCRATCH_LEN];
        let mut out = Out(String::new());
        let snap = Snapshot::read(&root, opts, &mut buf);
        let Ok(()) = render_json(&snap, &mut out, None);
        out.0
    }

    /// Fixture 46a (a v1 Docker container) as a container without /sys
    /// shows it: the same /proc/self/cgroup, a mount table without the
    /// sysfs and cgroup lines, no sys/ tree. The memory and CPU limits are
    /// unknown, said with the reason, on the screen and in the JSON (not
    /// "no memory controller", not `null`). Issue 33.
    #[test]
    fn fixture_46a_v1_docker_without_sys_says_its_limits_are_unknown() {
        let case = std::format!("{FIX}46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal");
        let read = |rel: &str| std::fs::read(std::format!("{case}/{rel}")).unwrap();
        let table: Vec<u8> = String::from_utf8(read("proc/self/mountinfo"))
            .unwrap()
            .lines()
            .filter(|l| !l.contains(" /sys"))
            .flat_map(|l| std::format!("{l}\n").into_bytes())
            .collect();
        let t = Tree::new("46a-no-sys");
        t.file("proc/self/cgroup", &read("proc/self/cgroup"))
            .file("proc/self/mountinfo", &table)
            .file("proc/meminfo", &read("proc/meminfo"));
        let out = render_at(t.path(), "/");
        let why = "proc/self/cgroup names a cgroup, but no cgroup filesystem is mounted";
        has(&out, &std::format!("cgroup mem  unknown ({why})"));
        has(&out, &std::format!("cgroup cpu  CPU quota unknown ({why})"));
        assert!(!out.contains("no memory controller"), "{out}");
        let j = json_at(t.path());
        let unknown = std::format!("{{\"state\":\"unknown\",\"reason\":\"{why}\"}}");
        assert!(
            j.contains(&std::format!("\"cgroup_memory\":{unknown}")),
            "{j}"
        );
        assert!(j.contains(&std::format!("\"cgroup_cpu\":{unknown}")), "{j}");
        // What a script reads for the usable memory and cores says that
        // what binds is unknown (the figures are what can be seen).
        assert!(j.contains(",\"mem_limited_by\":\"unknown\","), "{j}");
        assert!(j.contains(",\"cores_limited_by\":\"unknown\""), "{j}");
        assert_eq!(top_level_keys(&j), JSON_KEYS);
        // The same container with /sys: its limit is read (the case's own test).
        let with_sys = json_at(&case);
        assert!(!with_sys.contains("\"state\":\"unknown\""), "{with_sys}");
    }

    /// Each of [`JSON_KEYS`] once at the top level, in order: a key at depth 1
    /// is `"key":` right after `{` or `,` outside any nested object or array.
    fn top_level_keys(json: &str) -> Vec<String> {
        let (mut depth, mut in_str, mut keys) = (0, false, Vec::new());
        let b = json.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\\' if in_str => i += 1,
                b'"' if !in_str => {
                    in_str = true;
                    let prev = json[..i].trim_end().bytes().last();
                    if depth == 1 && matches!(prev, Some(b'{' | b',')) {
                        let end = json[i + 1..].find('"').unwrap() + i + 1;
                        keys.push(String::from(&json[i + 1..end]));
                    }
                }
                b'"' => in_str = false,
                b'{' | b'[' if !in_str => depth += 1,
                b'}' | b']' if !in_str => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        keys
    }

    #[test]
    fn json_has_every_key_in_order_on_a_full_and_an_empty_tree() {
        let full = json_at(&std::format!(
            "{FIX}06-cgroupv2-container-cpu-max-unlimited"
        ));
        assert_eq!(top_level_keys(&full), JSON_KEYS, "{full}");
        assert!(
            full.starts_with("{\"mem_total_mib\":") && full.ends_with("}\n"),
            "{full}"
        );
        let empty = Tree::new("json-empty");
        let none = json_at(empty.path());
        assert_eq!(top_level_keys(&none), JSON_KEYS, "{none}");
        // Nothing to read: every figure is null (zram: no sys/block).
        for k in [
            "mem_total_mib",
            "mem_usable_mib",
            "mem_limited_by",
            "swap_devices",
            "zram_devices",
            "cgroup_memory",
            "psi_memory_some",
            "swap_io_mib",
            "cpu_temp_c",
            "cpu_freq_pct",
            "throttled",
        ] {
            assert!(none.contains(&std::format!("\"{k}\":null")), "{k}: {none}");
        }
        assert!(none.contains("\"size_mib\":null"), "{none}");
    }

    #[test]
    fn json_zram_and_swap_rows_carry_the_screens_figures() {
        let dir = std::format!("{FIX}09-zram-mm-stat-field-counts/d-uninitialized");
        let out = json_at(&dir);
        assert!(
        out.contains(
            "{\"device\":\"zram0\",\"initialised\":false,\"algorithm\":null,\"disksize_mib\":null"
        ),
        "{out}"
    );
        let swaps = Tree::new("json-swaps");
        swaps.file(
        "proc/swaps",
        b"Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 1048572 1048572 100\n/swap\\040file file 2048 0 -2\n",
    );
        let out = json_at(swaps.path());
        assert!(out.contains("{\"name\":\"/dev/zram0\",\"type\":\"partition\",\"size_mib\":1023,\"used_mib\":1023,\"priority\":100,\"zram\":true,\"zram_full\":true}"), "{out}");
        assert!(out.contains("{\"name\":\"/swap file\",\"type\":\"file\",\"size_mib\":2,\"used_mib\":0,\"priority\":-2,\"zram\":false,\"zram_full\":null}"), "{out}");
    }

    /// Issue 25's acceptance: in a 1 GiB cgroup holding 700 MiB of clean
    /// cache and allowed no swap, the cgroup's available memory (~1 GiB, not
    /// 304 MiB) stands under the host's, named, said to bind; the swap it may
    /// not use is said too.
    #[test]
    fn fixture_46_a_v1_docker_memsw_equal() {
        let out = fixture("46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal");
        has_lines(
            &out,
            "memory      total 24105 MiB  available 22999 MiB  used 4%  (the host's)\n            cgroup ...4a5f60718293a4b5c6d: available 1004 MiB of 1024 (usage 719, inactive file 700)\n            usable 1004 MiB: the cgroup binds\nswap        total 0 MiB  used 0 MiB\n",
        );
        has_lines(
            &out,
            "cgroup mem  limit 1024 MiB  (v1)\n            limit set at /docker/3f9d2c7a1b0e4f6d8c5a9b2e1f0d3c4b5a6978e1d2c3b4a5f60718293a4b5c6d\n            swap: none allowed (memory.memsw.limit_in_bytes = the limit)\n",
        );
    }

    #[test]
    fn fixture_46_b_v2_docker_swap_max_0() {
        let out = fixture("46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0");
        has_lines(
            &out,
            "            cgroup /: available 1004 MiB of 1024 (usage 719, inactive file 700)\n            usable 1004 MiB: the cgroup binds\n",
        );
        has(&out, "            swap: none allowed (memory.swap.max 0)");
        // A host limit tighter than the cgroup's: MemAvailable binds, and the
        // cgroup's figures are still shown.
        let t = Tree::new("46b-host-binds");
        let src = std::format!("{FIX}46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0");
        for f in [
            "proc/self/cgroup",
            "proc/self/mountinfo",
            "sys/fs/cgroup/memory.max",
            "sys/fs/cgroup/memory.current",
            "sys/fs/cgroup/memory.stat",
        ] {
            t.file(f, &std::fs::read(std::format!("{src}/{f}")).unwrap());
        }
        t.file(
        "proc/meminfo",
        b"MemTotal: 2097152 kB\nMemFree: 102400 kB\nMemAvailable: 512000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
    );
        let out = render_at(t.path(), "/");
        has_lines(
            &out,
            "            cgroup /: available 1004 MiB of 1024 (usage 719, inactive file 700)\n            usable 500 MiB: MemAvailable binds\n",
        );
        has(&out, "            swap: not limited by the cgroup");
    }

    /// A copy of fixture 46's case `case` (a docker container) with the
    /// host's PSI, and `extra` files beside.
    fn container_tree(tag: &str, case: &str, extra: &[(&str, &[u8])]) -> Tree {
        let t = Tree::new(tag);
        let src = std::format!("{FIX}46-cgroup-page-cache-is-available/{case}");
        let out = std::process::Command::new("cp")
            .args(["-a", &std::format!("{src}/."), t.path()])
            .status()
            .unwrap();
        assert!(out.success());
        let psi = b"some avg10=7.50 avg60=2.00 avg300=0.50 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        t.file("proc/pressure/memory", psi);
        for (f, b) in extra {
            t.file(f, b);
        }
        t
    }

    /// Issue 33: in a container the host's memory and PSI say they are the
    /// host's (and why its own PSI is not shown), and v2's own
    /// `memory.pressure` is used when there.
    #[test]
    fn in_a_container_host_figures_say_so_and_its_own_pressure_is_used() {
        let v1 = container_tree("labels-v1", "a-v1-docker-memsw-equal", &[]);
        let out = render_at(v1.path(), "/");
        has(
            &out,
            "memory      total 24105 MiB  available 22999 MiB  used 4%  (the host's)",
        );
        has(
            &out,
            "container   yes (memory limit): figures marked the host's or host-wide are not its own",
        );
        has_lines(
            &out,
            "PSI memory  some avg10 7.50%  avg60 2.00%  avg300 0.50%\n            the host's (proc/pressure/memory): cgroup v1 has no memory.pressure\n",
        );
        let j = json_at(v1.path());
        assert!(j.contains(",\"container\":{\"why\":\"memory limit\"},\"psi_memory_some\":{\"scope\":\"host\",\"avg10_pct\":7.50,"), "{j}");
        let v2 = container_tree("labels-v2", "b-v2-docker-swap-max-0", &[]);
        has(
            &render_at(v2.path(), "/"),
            "            the host's (proc/pressure/memory): no readable memory.pressure in its cgroup",
        );
        let own = b"some avg10=0.25 avg60=0.10 avg300=0.05 total=9\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        let v2 = container_tree(
            "labels-v2-own",
            "b-v2-docker-swap-max-0",
            &[("sys/fs/cgroup/memory.pressure", own)],
        );
        let out = render_at(v2.path(), "/");
        has_lines(
            &out,
            "PSI memory  some avg10 0.25%  avg60 0.10%  avg300 0.05%\n            this container's (its cgroup's memory.pressure)\n",
        );
        let j = json_at(v2.path());
        assert!(
            j.contains(",\"psi_memory_some\":{\"scope\":\"cgroup\",\"avg10_pct\":0.25,"),
            "{j}"
        );
        // Outside a container (no cgroup limit, no marker): as before.
        let host = Tree::new("labels-host");
        host.file(
            "proc/meminfo",
            b"MemTotal: 2097152 kB\nMemAvailable: 512000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
        );
        host.file("proc/pressure/memory", own);
        let out = render_at(host.path(), "/");
        has(
            &out,
            "memory      total 2048 MiB  available 500 MiB  used 75%",
        );
        assert!(
            !out.contains("host's") && !out.contains("container"),
            "{out}"
        );
        assert!(
            json_at(host.path())
                .contains(",\"container\":null,\"psi_memory_some\":{\"scope\":\"host\",")
        );
        // A runtime's marker alone makes it a container.
        host.file(".dockerenv", b"");
        has(
            &render_at(host.path(), "/"),
            "container   yes (/.dockerenv): figures marked the host's or host-wide are not its own",
        );
    }

    /// The JSON of fixture 46: usable memory and what binds beside the host's
    /// figures, and the cgroup's limit, usage, inactive file cache, available
    /// memory and swap allowance.
    #[test]
    fn json_of_fixture_46_names_the_binding_cgroup() {
        let j = json_at(&std::format!(
            "{FIX}46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0"
        ));
        assert!(
        j.contains("\"mem_available_mib\":12573,\"mem_used_pct\":21,\"mem_available_estimated\":false,\"mem_usable_mib\":1004,\"mem_limited_by\":\"cgroup\","),
        "{j}"
    );
        assert!(
        j.contains("\"cgroup_memory\":{\"version\":\"v2\",\"limit_mib\":1024,\"usage_mib\":719,\"inactive_file_mib\":700,\"available_mib\":1004,\"binds\":true,\"swap_allowance_mib\":0,\"limit_path\":\"/\"}"),
        "{j}"
    );
        // Fixture 06 has no memory.stat: its inactive file cache is unknown.
        let j = json_at(&std::format!(
            "{FIX}06-cgroupv2-container-cpu-max-unlimited"
        ));
        assert!(
        j.contains("\"inactive_file_mib\":null,\"available_mib\":4,\"binds\":true,\"swap_allowance_mib\":2048,"),
        "{j}"
    );
    }
}
