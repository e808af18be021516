//! `status --json`: every figure of the status screen as one JSON object,
//! for scripts and fleet checks.
//!
//! The figures come from the same readers and types as the screen
//! ([`host::memory`], `/proc/swaps` rows, [`zram::device`], [`host::fs_stat`],
//! [`host::cores`], PSI, vmstat, the memory cgroup), each derived figure
//! from the one method or function the screen uses (`mem_used_pct`,
//! `avail_mib`, `compression_centi`, `zram_swap`, …). Keys name
//! the unit (`mem_available_mib`, `used_pct`, `quota_cpus`); a figure the
//! screen shows as "not available", "unknown" or "none" is `null`. Sizes
//! in whole MiB rounded down and ratios with two decimals, as on the
//! screen. Unlike the screen, every swap device is listed (the screen
//! stops at [`super::MAX_SWAP_ROWS`]); zram devices up to
//! [`super::MAX_ZRAM`], with `zram_devices_more` counting the rest.

use ufmt::{uWrite, uwrite};

use super::screen_text::{Extra, cgroup_error, display_chars, limited_by};
use super::snapshot::{
    FsFacts, MemCgroupFacts, PsiAvgs, PsiMiss, PsiScope, Snapshot, Swaps, VmMiss, ZramDevices,
    ZramSwap,
};
use crate::followed::figures::write_centi;
use crate::kernel::cgroup::{CgroupError, Version};
use crate::kernel::container::Why;
use crate::kernel::root::ReadError;
use crate::kernel::swaps;
use crate::kernel::vmstat::VmStat;
use crate::plan::host::{self, Cores, Memory, MemoryError};
use crate::report::json_write::{chars, opt, string};
use crate::tick::footprint::{NotLocked, Outlook};

/// The top-level keys of [`render_json`], in order.
pub const KEYS: [&str; 31] = [
    "mem_total_mib",
    "mem_available_mib",
    "mem_used_pct",
    "mem_available_estimated",
    "mem_usable_mib",
    "mem_limited_by",
    "swap_total_mib",
    "swap_used_mib",
    "swap_free_clamped",
    "swap_devices",
    "zram_devices",
    "zram_devices_more",
    "tmp",
    "disk",
    "cgroup_memory",
    "cgroup_cpu",
    "cores_online",
    "cores_affinity",
    "cores_quota_cpus",
    "cores_cpuset",
    "cores_usable",
    "cores_limited_by",
    "container",
    "psi_memory_some",
    "oom_kills",
    "disk_io",
    "swap_io_mib",
    "cpu_temp_c",
    "cpu_freq_pct",
    "throttled",
    "memlock",
];

/// Writes the status `s` as one JSON object and a newline: the figures
/// of [`super::render`]'s screen, keys [`KEYS`], then the members `more`
/// writes (the binary's `,"pool":{…}`) before the closing brace. Never
/// fails on missing or malformed sources: their figures are `null`.
///
/// # Errors
/// Only the writer's error (and `more`'s, which is the writer's).
pub fn render_json<W: uWrite>(
    s: &Snapshot<'_>,
    w: &mut W,
    more: Option<Extra<'_, W>>,
) -> Result<(), W::Error> {
    memory(w, &s.mem)?;
    swap_devices(w, &s.swaps)?;
    zram_devices(w, &s.zram)?;
    fs(w, "tmp", &s.tmp)?;
    fs(w, "disk", &s.disk)?;
    cgroup_memory(w, &s.mem, &s.memcg, &s.mem_limit_path)?;
    cgroup_cpu(w, &s.cores, &s.cpu_cgroup)?;
    cores_keys(w, &s.cores, s.opts.live)?;
    container(w, s.container)?;
    psi_memory(w, s.psi_shown())?;
    oom_kills(w, &s.vmstat, &s.memcg)?;
    super::slow_now::json_keys(w, &s.slow)?;
    w.write_str(",\"memlock\":")?;
    memlock(w, s.opts.memlock)?;
    if let Some(more) = more {
        more(w)?;
    }
    w.write_str("}\n")
}

/// `{` and the memory and swap totals.
fn memory<W: uWrite>(w: &mut W, mem: &Result<Memory, MemoryError>) -> Result<(), W::Error> {
    let m = mem.as_ref().ok().map(|m| m.meminfo);
    w.write_str("{\"mem_total_mib\":")?;
    opt(w, m.map(|m| m.mem_total_kib / 1024))?;
    w.write_str(",\"mem_available_mib\":")?;
    opt(w, m.map(|m| m.mem_available_kib / 1024))?;
    w.write_str(",\"mem_used_pct\":")?;
    opt(w, m.map(|m| m.mem_used_pct()))?;
    w.write_str(",\"mem_available_estimated\":")?;
    flag(w, m.map(|m| m.mem_available_estimated))?;
    // What a build can use: the smaller of MemAvailable and the tightest
    // cgroup's available memory, and which binds.
    let ok = mem.as_ref().ok();
    w.write_str(",\"mem_usable_mib\":")?;
    opt(w, ok.map(|m| m.usable_mb))?;
    w.write_str(",\"mem_limited_by\":")?;
    // "unknown": the container's limit could not be read; the figure is
    // what can be seen, an upper bound, never "MemAvailable" binds.
    match ok.map(|m| (m.limit, m.cgroup_error.is_some())) {
        Some((_, true)) => string(w, "unknown")?,
        Some((host::MemLimit::Cgroup, false)) => string(w, "cgroup")?,
        Some((host::MemLimit::MemAvailable, false)) => string(w, "MemAvailable")?,
        None => w.write_str("null")?,
    }
    w.write_str(",\"swap_total_mib\":")?;
    opt(w, m.map(|m| m.swap_total_kib / 1024))?;
    w.write_str(",\"swap_used_mib\":")?;
    opt(w, m.map(|m| m.swap_used_kib() / 1024))?;
    w.write_str(",\"swap_free_clamped\":")?;
    flag(w, m.map(|m| m.swap_free_clamped))
}

/// `/proc/swaps`, a row each (rows that do not parse left out).
fn swap_devices<W: uWrite>(w: &mut W, sw: &Swaps) -> Result<(), W::Error> {
    w.write_str(",\"swap_devices\":")?;
    let Ok(b) = sw.text() else {
        return w.write_str("null");
    };
    let mut name = [0u8; swaps::NAME_MAX_LEN];
    w.write_str("[")?;
    let rows = swaps::entries(b)
        .enumerate()
        .filter_map(|(at, s)| s.ok().map(|s| (at, s)));
    for (i, (at, s)) in rows.enumerate() {
        w.write_str(if i == 0 { "{\"name\":" } else { ",{\"name\":" })?;
        chars(w, display_chars(s.unescape(&mut name)))?;
        w.write_str(",\"type\":")?;
        chars(w, display_chars(s.kind))?;
        uwrite!(
            w,
            ",\"size_mib\":{},\"used_mib\":{},\"priority\":{},\"zram\":{},\"zram_full\":",
            s.size_kib / 1024,
            s.used_kib / 1024,
            s.priority,
            s.is_zram()
        )?;
        let full = match sw.zram(at) {
            Some(ZramSwap::Full) => Some(true),
            Some(ZramSwap::Room) => Some(false),
            Some(ZramSwap::Unreadable) | None => None,
        };
        flag(w, full)?;
        w.write_str("}")?;
    }
    w.write_str("]")
}

/// The zram devices of `sys/block`, a row each, and how many more.
fn zram_devices<W: uWrite>(
    w: &mut W,
    zram: &Result<ZramDevices, ReadError>,
) -> Result<(), W::Error> {
    w.write_str(",\"zram_devices\":")?;
    let Ok(z) = zram else {
        return w.write_str("null,\"zram_devices_more\":null");
    };
    w.write_str("[")?;
    for (i, (name, d)) in z.devices.iter().enumerate() {
        w.write_str(if i == 0 {
            "{\"device\":"
        } else {
            ",{\"device\":"
        })?;
        string(w, name)?;
        let d = d.as_ref().ok();
        let on = d.as_ref().filter(|d| d.initialised);
        w.write_str(",\"initialised\":")?;
        flag(w, d.as_ref().map(|d| d.initialised))?;
        w.write_str(",\"algorithm\":")?;
        match on.and_then(|d| d.algorithm.as_deref()) {
            Some(a) => chars(w, display_chars(a.as_bytes()))?,
            None => w.write_str("null")?,
        }
        w.write_str(",\"disksize_mib\":")?;
        opt(w, on.map(|d| d.disksize >> 20))?;
        w.write_str(",\"stored_mib\":")?;
        opt(w, on.map(|d| d.mm_stat.orig_data_size >> 20))?;
        w.write_str(",\"compressed_mib\":")?;
        opt(w, on.map(|d| d.mm_stat.compr_data_size >> 20))?;
        w.write_str(",\"ram_used_mib\":")?;
        opt(w, on.map(|d| d.mm_stat.mem_used_total >> 20))?;
        // DATA / COMPR as zramctl shows them, as on the screen.
        w.write_str(",\"compression_ratio\":")?;
        centi(w, on.and_then(|d| d.compression_centi()))?;
        w.write_str("}")?;
    }
    uwrite!(w, "],\"zram_devices_more\":{}", z.more)
}

/// `,"tmp":{…}` or `,"disk":{…}`: the filesystem of `path`.
fn fs<W: uWrite>(w: &mut W, key: &str, f: &FsFacts<'_>) -> Result<(), W::Error> {
    uwrite!(w, ",\"{}\":{{\"path\":", key)?;
    chars(w, display_chars(f.path.as_bytes()))?;
    let (fs_type, source) = (&f.fs_type, &f.source);
    w.write_str(",\"fs_type\":")?;
    match fs_type {
        Some(t) => chars(w, display_chars(t.as_bytes()))?,
        None => w.write_str("null")?,
    }
    w.write_str(",\"source\":")?;
    if source.is_empty() {
        w.write_str("null")?;
    } else {
        chars(w, display_chars(source.as_bytes()))?;
    }
    let s = f.stat;
    w.write_str(",\"size_mib\":")?;
    opt(w, s.map(|s| s.total_bytes() >> 20))?;
    w.write_str(",\"available_mib\":")?;
    opt(w, s.map(|s| s.avail_mib()))?;
    w.write_str(",\"used_pct\":")?;
    opt(w, s.map(|s| s.used_pct()))?;
    // No inode count (btrfs, some FUSE): null, as "inodes not counted".
    w.write_str(",\"inodes_free\":")?;
    opt(w, s.filter(|s| s.files != 0).map(|s| s.ffree))?;
    w.write_str(",\"inodes_exhausted\":")?;
    flag(w, s.map(|s| s.inodes_exhausted()))?;
    w.write_str("}")
}

/// A cgroup limit that `/proc/self/cgroup` names but that cannot be read:
/// `{"state":"unknown","reason":"…"}` (the status screen's words), never
/// `null`, which says there is no limit.
fn unknown<W: uWrite>(w: &mut W, e: CgroupError) -> Result<(), W::Error> {
    let mut reason = heapless::String::<160>::new();
    // A reason longer than its room is cut, not lost.
    let _ = cgroup_error(&mut reason, e);
    w.write_str("{\"state\":\"unknown\",\"reason\":")?;
    string(w, &reason)?;
    w.write_str("}")
}

/// `,"cgroup_memory":{…}`, `null` without a memory controller, or
/// [`unknown`].
fn cgroup_memory<W: uWrite>(
    w: &mut W,
    mem: &Result<Memory, MemoryError>,
    memcg: &Result<Option<MemCgroupFacts>, CgroupError>,
    path: &str,
) -> Result<(), W::Error> {
    w.write_str(",\"cgroup_memory\":")?;
    let cg = match memcg {
        Ok(Some(cg)) => cg,
        Ok(None) => return w.write_str("null"),
        Err(e) => return unknown(w, *e),
    };
    w.write_str("{\"version\":")?;
    string(w, version(cg.version))?;
    let m = mem.as_ref().ok();
    let limit = m.and_then(|m| m.cgroup);
    let usage = match limit {
        Some(r) => Some(r.usage_bytes),
        None => cg.usage_bytes,
    };
    w.write_str(",\"limit_mib\":")?;
    opt(w, limit.map(|r| r.limit_bytes >> 20))?;
    w.write_str(",\"usage_mib\":")?;
    opt(w, usage.map(|u| u >> 20))?;
    w.write_str(",\"inactive_file_mib\":")?;
    opt(
        w,
        limit.and_then(|r| r.inactive_file_bytes).map(|i| i >> 20),
    )?;
    w.write_str(",\"available_mib\":")?;
    opt(w, limit.map(|r| r.available_bytes >> 20))?;
    w.write_str(",\"binds\":")?;
    flag(w, m.map(|m| m.binding_cgroup().is_some()))?;
    w.write_str(",\"swap_allowance_mib\":")?;
    opt(
        w,
        m.filter(|_| limit.is_some())
            .and_then(|m| m.cgroup_swap_allowance_bytes)
            .map(|s| s >> 20),
    )?;
    w.write_str(",\"limit_path\":")?;
    if path.is_empty() {
        w.write_str("null")?;
    } else {
        chars(w, display_chars(path.as_bytes()))?;
    }
    w.write_str("}")
}

/// `,"cgroup_cpu":{"version":…,"quota_cpus":…}`, `null` without a cpu
/// controller, or [`unknown`].
fn cgroup_cpu<W: uWrite>(
    w: &mut W,
    cores: &Cores,
    cpu: &Result<Option<Version>, CgroupError>,
) -> Result<(), W::Error> {
    w.write_str(",\"cgroup_cpu\":")?;
    let cpu = match *cpu {
        Ok(cpu) => cpu,
        Err(e) => return unknown(w, e),
    };
    let quota = cores.quota_millicpus.map(|m| m.div_ceil(10));
    if cpu.is_none() && quota.is_none() {
        return w.write_str("null");
    }
    w.write_str("{\"version\":")?;
    match cpu {
        Some(v) => string(w, version(v))?,
        None => w.write_str("null")?,
    }
    w.write_str(",\"quota_cpus\":")?;
    centi(w, quota)?;
    w.write_str("}")
}

/// The `cores_*` keys: online, affinity (this process's, `null` for a
/// board tree), quota, cpuset, usable and what limits it.
fn cores_keys<W: uWrite>(w: &mut W, c: &Cores, live: bool) -> Result<(), W::Error> {
    w.write_str(",\"cores_online\":")?;
    opt(w, c.online.map(u64::from))?;
    w.write_str(",\"cores_affinity\":")?;
    opt(w, c.affinity.filter(|_| live).map(u64::from))?;
    w.write_str(",\"cores_quota_cpus\":")?;
    centi(w, c.quota_millicpus.map(|m| m.div_ceil(10)))?;
    w.write_str(",\"cores_cpuset\":")?;
    opt(w, c.cpuset.map(u64::from))?;
    uwrite!(w, ",\"cores_usable\":{},\"cores_limited_by\":", c.usable)?;
    // As mem_limited_by: an unreadable cpu cgroup's quota may bind.
    match c.cgroup_error {
        Some(_) => string(w, "unknown"),
        None => string(w, limited_by(c)),
    }
}

/// `,"psi_memory_some":{"avg10_pct":…,…}`, or `null` without PSI.
/// `,"container":{"why":…}` in a container ([`crate::kernel::container`]),
/// `null` outside one.
fn container<W: uWrite>(w: &mut W, why: Option<Why>) -> Result<(), W::Error> {
    match why {
        Some(why) => uwrite!(w, ",\"container\":{{\"why\":\"{}\"}}", why.describe()),
        None => w.write_str(",\"container\":null"),
    }
}

/// `,"psi_memory_some":{"scope":…,"avg10_pct":…}`: `scope` is `host`
/// (`/proc/pressure/memory`) or `cgroup` (the container's own
/// `memory.pressure`).
fn psi_memory<W: uWrite>(
    w: &mut W,
    (p, scope): (Result<PsiAvgs, PsiMiss>, PsiScope),
) -> Result<(), W::Error> {
    w.write_str(",\"psi_memory_some\":")?;
    let Ok(p) = p else {
        return w.write_str("null");
    };
    let scope = match scope {
        PsiScope::Cgroup => "cgroup",
        PsiScope::Host | PsiScope::HostInContainer(_) => "host",
    };
    uwrite!(w, "{{\"scope\":\"{}\",\"avg10_pct\":", scope)?;
    write_centi(w, p.avg10_centi)?;
    w.write_str(",\"avg60_pct\":")?;
    write_centi(w, p.avg60_centi)?;
    w.write_str(",\"avg300_pct\":")?;
    write_centi(w, p.avg300_centi)?;
    w.write_str("}")
}

/// `,"oom_kills":{"since_boot":…,"cgroup":…}`: host-wide (vmstat, Linux
/// 4.13) and in this cgroup.
fn oom_kills<W: uWrite>(
    w: &mut W,
    vm: &Result<VmStat, VmMiss>,
    memcg: &Result<Option<MemCgroupFacts>, CgroupError>,
) -> Result<(), W::Error> {
    let boot = vm.as_ref().ok().and_then(|v| v.oom_kill);
    w.write_str(",\"oom_kills\":{\"since_boot\":")?;
    opt(w, boot)?;
    w.write_str(",\"cgroup\":")?;
    let cg = match memcg {
        Ok(Some(cg)) => cg.oom_kills,
        _ => None,
    };
    opt(w, cg)?;
    w.write_str("}")
}

/// Whether a recording started here locks its memory, and what decides
/// it; `null` for a board tree.
fn memlock<W: uWrite>(w: &mut W, o: Option<Outlook>) -> Result<(), W::Error> {
    let Some(o) = o else {
        return w.write_str("null");
    };
    let short = match o.permit.allows(o.need) {
        Err(NotLocked::Limit { need_kib, .. }) => Some(need_kib),
        _ => None,
    };
    uwrite!(
        w,
        "{{\"locks\":{},\"disabled\":{},\"cap_ipc_lock\":{},\"rlimit_memlock_kib\":",
        !o.disabled && short.is_none(),
        o.disabled,
        o.permit.cap_ipc_lock
    )?;
    // null: unlimited.
    opt(w, o.permit.limit.map(|l| l / 1024))?;
    // What locking needs, when it is more than the limit allows.
    w.write_str(",\"short_need_kib\":")?;
    opt(w, short)?;
    w.write_str("}")
}

fn version(v: Version) -> &'static str {
    match v {
        Version::V1 => "v1",
        Version::V2 => "v2",
    }
}

/// `true`, `false` or `null`.
fn flag<W: uWrite>(w: &mut W, b: Option<bool>) -> Result<(), W::Error> {
    w.write_str(match b {
        Some(true) => "true",
        Some(false) => "false",
        None => "null",
    })
}

/// Hundredths as a number with two decimals (`2.54`), or `null`.
fn centi<W: uWrite>(w: &mut W, c: Option<u64>) -> Result<(), W::Error> {
    match c {
        Some(c) => write_centi(w, c),
        None => w.write_str("null"),
    }
}
