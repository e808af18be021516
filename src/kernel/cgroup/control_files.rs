//! The cgroup files' texts, parsed: which hierarchy and path
//! `/proc/self/cgroup` names for a controller, and one pure parser per
//! small control file (`memory.max`, `memory.limit_in_bytes`, `cpu.max`,
//! `cpu.cfs_quota_us`, cpuset lists, `memory.events` /
//! `memory.oom_control`, `memory.stat`, `cgroup.controllers`). No I/O here:
//! the parent module opens and reads the files ([`super::open_memory`],
//! [`super::open_cpu`]).
//!
//! # References
//! cgroups(7), `Documentation/admin-guide/cgroup-v2.rst`,
//! `Documentation/admin-guide/cgroup-v1/memory.rst`,
//! `Documentation/scheduler/sched-bwc.rst`, cpuset(7).

use crate::kernel::parse::{
    ParseError, ParseErrorKind, fields, lines, parse_i64, parse_u64, space_value, trim,
};

/// Which cgroup hierarchy carries a controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// cgroup v1: one hierarchy per controller group, fs type `cgroup`.
    V1,
    /// cgroup v2: the unified hierarchy, fs type `cgroup2` (since Linux 4.5).
    V2,
}

/// Finds the cgroup of `controller` (e.g. `b"memory"`, `b"cpu"`) in the
/// contents of `/proc/self/cgroup` (lines `hierarchy-ID:controller-list:path`).
///
/// A v1 line whose comma-separated controller list contains `controller`
/// exactly (`cpu` matches `cpu,cpuacct`, not `cpuset`) wins wherever it
/// appears; otherwise the v2 line `0::path`. Returns the version and the
/// path (absolute, relative to the cgroup namespace root; not escaped).
/// `None` when neither exists (the controller may still be missing from a
/// v2 tree: the caller checks). Malformed lines are skipped.
///
/// Source: cgroups(7), "/proc/[pid]/cgroup".
pub fn path_for<'a>(b: &'a [u8], controller: &[u8]) -> Option<(Version, &'a [u8])> {
    let mut v2 = None;
    for line in lines(b) {
        let mut parts = line.splitn(3, |&c| c == b':');
        let (Some(id), Some(list), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if parse_u64(id).is_none() || path.is_empty() {
            continue;
        }
        if list.is_empty() {
            if id == b"0" && v2.is_none() {
                v2 = Some((Version::V2, path));
            }
        } else if list.split(|&c| c == b',').any(|c| c == controller) {
            return Some((Version::V1, path));
        }
    }
    v2
}

/// True when the cgroup path `p` (as [`path_for`] returns it) is `scope`
/// or lies below it, on a `/` boundary: `/a/b` is within `/a` and `/a/b`,
/// not within `/a/bc`; everything is within `/`.
pub fn is_within(p: &[u8], scope: &[u8]) -> bool {
    strip_dir_prefix(p, scope).is_some()
}

/// A memory limit as the kernel prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// `max` (v2): no limit.
    Max,
    /// A number of bytes; v1 prints its "no limit" as a huge number too,
    /// so see [`Limit::effective`].
    Bytes(u64),
}

impl Limit {
    /// The limit in bytes when it really limits: below `mem_total_bytes`
    /// (MemTotal × 1024). `Max`, and any value ≥ MemTotal (which includes
    /// every page-size-dependent v1 "unlimited" sentinel), give `None`.
    pub fn effective(self, mem_total_bytes: u64) -> Option<u64> {
        match self {
            Limit::Bytes(n) if n < mem_total_bytes => Some(n),
            _ => None,
        }
    }
}

pub(super) fn bad_number() -> ParseError {
    ParseError {
        kind: ParseErrorKind::BadNumber,
        line: 1,
    }
}

pub(super) fn single_line(b: &[u8]) -> Result<&[u8], ParseError> {
    let t = trim(b);
    if t.is_empty() {
        return Err(ParseError {
            kind: ParseErrorKind::Missing("value"),
            line: 0,
        });
    }
    if t.contains(&b'\n') {
        return Err(ParseError {
            kind: ParseErrorKind::Malformed,
            line: 1,
        });
    }
    Ok(t)
}

/// Parses a memory limit file: v2 `memory.max`/`memory.high`/
/// `memory.swap.max` (`max` or bytes) or v1 `memory.limit_in_bytes` (bytes).
///
/// # Errors
/// `Missing` for empty input, `BadNumber` for anything but `max` or a
/// decimal that fits `u64`.
pub fn parse_limit(b: &[u8]) -> Result<Limit, ParseError> {
    let t = single_line(b)?;
    if t == b"max" {
        return Ok(Limit::Max);
    }
    parse_u64(t).map(Limit::Bytes).ok_or_else(bad_number)
}

/// Parses a single byte count: v2 `memory.current`, v1
/// `memory.usage_in_bytes`, in bytes.
///
/// # Errors
/// `Missing` for empty input, `BadNumber` otherwise.
pub fn parse_bytes(b: &[u8]) -> Result<u64, ParseError> {
    parse_u64(single_line(b)?).ok_or_else(bad_number)
}

/// The content of v2 `cpu.max`: `$QUOTA $PERIOD`, both in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuMax {
    /// Run time allowed per period, µs; `None` for `max` (no quota).
    pub quota_us: Option<u64>,
    /// Length of the period, µs (default 100000); never 0.
    pub period_us: u64,
}

impl CpuMax {
    /// The quota in thousandths of a CPU, rounded up (`150000 100000` →
    /// 1500); `None` when unlimited.
    pub fn millicpus(self) -> Option<u64> {
        millicpus(self.quota_us?, self.period_us)
    }
}

pub(super) fn millicpus(quota_us: u64, period_us: u64) -> Option<u64> {
    if period_us == 0 {
        return None;
    }
    Some(quota_us.saturating_mul(1000).div_ceil(period_us))
}

/// Parses v2 `cpu.max` (`max 100000`, `150000 100000`).
///
/// # Errors
/// `Missing("period")` when only one field is present, `BadNumber` for a
/// quota that is neither `max` nor a number or a period that is not a
/// positive number, `Malformed` for extra fields.
///
/// Source: `Documentation/admin-guide/cgroup-v2.rst`, "cpu.max".
pub fn parse_cpu_max(b: &[u8]) -> Result<CpuMax, ParseError> {
    let t = single_line(b)?;
    let mut f = fields(t);
    let quota = f.next().ok_or_else(bad_number)?;
    let period = f.next().ok_or(ParseError {
        kind: ParseErrorKind::Missing("period"),
        line: 1,
    })?;
    if f.next().is_some() {
        return Err(ParseError {
            kind: ParseErrorKind::Malformed,
            line: 1,
        });
    }
    let quota_us = if quota == b"max" {
        None
    } else {
        Some(parse_u64(quota).ok_or_else(bad_number)?)
    };
    let period_us = parse_u64(period)
        .filter(|&p| p > 0)
        .ok_or_else(bad_number)?;
    Ok(CpuMax {
        quota_us,
        period_us,
    })
}

/// Parses v1 `cpu.cfs_quota_us` (µs): `Some(quota)`, or `None` for `-1`
/// (any negative value means no quota).
///
/// # Errors
/// `Missing` when empty, `BadNumber` when not a signed decimal.
///
/// Source: `Documentation/scheduler/sched-bwc.rst`.
pub fn parse_cfs_quota(b: &[u8]) -> Result<Option<u64>, ParseError> {
    let v = parse_i64(single_line(b)?).ok_or_else(bad_number)?;
    Ok(u64::try_from(v).ok())
}

/// Counts the CPUs in a cpuset list (`0-3,5,7-8` → 7), as in
/// `cpuset.cpus.effective` or `/sys/devices/system/cpu/online`. An empty
/// list counts 0.
///
/// # Errors
/// `BadNumber` for a non-number, `Malformed` for an empty item or a range
/// whose end is below its start.
///
/// Source: cpuset(7), "List format".
pub fn parse_cpu_list_count(b: &[u8]) -> Result<u32, ParseError> {
    let t = trim(b);
    if t.is_empty() {
        return Ok(0);
    }
    let malformed = ParseError {
        kind: ParseErrorKind::Malformed,
        line: 1,
    };
    let mut count: u32 = 0;
    for item in t.split(|&c| c == b',') {
        if item.is_empty() {
            return Err(malformed);
        }
        let mut ends = item.splitn(2, |&c| c == b'-');
        let lo = ends.next().and_then(parse_u64).ok_or_else(bad_number)?;
        let hi = match ends.next() {
            Some(h) => parse_u64(h).ok_or_else(bad_number)?,
            None => lo,
        };
        if hi < lo {
            return Err(malformed);
        }
        let n = u32::try_from((hi - lo).saturating_add(1)).unwrap_or(u32::MAX);
        count = count.saturating_add(n);
    }
    Ok(count)
}

/// Reads the `oom_kill` count from v2 `memory.events` or v1
/// `memory.oom_control` (both `key value` lines): the number of processes
/// the OOM killer killed in this cgroup. `Ok(None)` when the key is absent
/// (kernels before 4.13).
///
/// # Errors
/// `BadNumber` when the value is not a number.
pub fn parse_oom_kill(b: &[u8]) -> Result<Option<u64>, ParseError> {
    match space_value(b, b"oom_kill") {
        None => Ok(None),
        Some(v) => parse_u64(v).map(Some).ok_or_else(bad_number),
    }
}

/// The key of `memory.stat` holding the inactive file cache of the cgroup
/// and its descendants, bytes: v1 `total_inactive_file` (v1's
/// `inactive_file` is the cgroup's own, without its children), v2
/// `inactive_file` (every v2 figure is hierarchical).
///
/// Source: `Documentation/admin-guide/cgroup-v1/memory.rst` 5.2,
/// `Documentation/admin-guide/cgroup-v2.rst` "memory.stat".
pub fn inactive_file_key(version: Version) -> &'static [u8] {
    match version {
        Version::V1 => b"total_inactive_file",
        Version::V2 => b"inactive_file",
    }
}

/// The value of `key` in a `memory.stat` text: the decimal after the first
/// line that is exactly `key`, one space, the value (the kernel's
/// `"%s %llu\n"`). The key is anchored at the start of the line and
/// matched whole: `inactive_file` is not found in `total_inactive_file`
/// nor in `inactive_file_x`. `Ok(None)` when no line has the key.
///
/// # Errors
/// `BadNumber` (with its line) when the key's value is not a decimal that
/// fits `u64`.
pub fn parse_stat_value(b: &[u8], key: &[u8]) -> Result<Option<u64>, ParseError> {
    for (i, line) in lines(b).enumerate() {
        let Some(rest) = line.strip_prefix(key).and_then(|r| r.strip_prefix(b" ")) else {
            continue;
        };
        return parse_u64(trim(rest)).map(Some).ok_or(ParseError {
            kind: ParseErrorKind::BadNumber,
            line: u32::try_from(i + 1).unwrap_or(u32::MAX),
        });
    }
    Ok(None)
}

/// True when `name` is one of the space-separated words of a
/// `cgroup.controllers` file.
pub(super) fn lists_controller(b: &[u8], name: &[u8]) -> bool {
    fields(b).any(|w| w == name)
}

/// `path` below `prefix` (both absolute), on a `/` boundary: the remainder,
/// possibly empty; `None` when `prefix` is not an ancestor of `path`.
pub(super) fn strip_dir_prefix<'p>(path: &'p [u8], prefix: &[u8]) -> Option<&'p [u8]> {
    let prefix = prefix.strip_suffix(b"/").unwrap_or(prefix);
    let rest = path.strip_prefix(prefix)?;
    match rest.first() {
        None | Some(b'/') => Some(rest),
        Some(_) => None,
    }
}
