//! A memory limit set on an ancestor that the cgroup mount does not show.
//!
//! Inside a container (and in each RUN step of a BuildKit build) the
//! cgroup filesystem is mounted with the container's own cgroup as its
//! root: a limit set on a parent (dockerd's `--cgroup-parent`, a limited
//! builder or pod) binds the container, while every directory the mount
//! shows reads unlimited. cgroup v1 prints that binding figure in each
//! cgroup's `memory.stat`: `hierarchical_memory_limit` is the smallest
//! `memory.limit_in_bytes` of the cgroup and all its ancestors, and
//! `hierarchical_memsw_limit` the same for `memory.memsw.limit_in_bytes`.
//! cgroup v2 has no such line; a limit above a v2 mount is noticed by the
//! governor instead (`govern::jobserver::ceiling`).
//!
//! An ancestor's usage cannot be read: what the mount's top cgroup uses is
//! the least it can be (the containers beside it, under the same parent,
//! use the rest).
//!
//! # References
//! `Documentation/admin-guide/cgroup-v1/memory.rst` (5.2 "stat file":
//! `hierarchical_memory_limit`, `hierarchical_memsw_limit`).

use super::control_files::{Limit, parse_stat_value};

/// The key of v1 `memory.stat` giving the smallest memory limit of the
/// cgroup and its ancestors, bytes.
pub const HIERARCHICAL_MEMORY_LIMIT: &[u8] = b"hierarchical_memory_limit";

/// The key of v1 `memory.stat` giving the smallest memory+swap limit of
/// the cgroup and its ancestors, bytes (present with swap accounting).
pub const HIERARCHICAL_MEMSW_LIMIT: &[u8] = b"hierarchical_memsw_limit";

/// The key of v2 `memory.stat` counting the pages its cgroup's direct
/// reclaim scanned (limit reclaim of it or an ancestor, and the host's
/// own direct reclaim), hierarchical.
pub const PGSCAN_DIRECT: &[u8] = b"pgscan_direct";

/// What the v2 mount's top cgroup shows of a limit above it, read at one
/// moment: how much it uses and how much reclaim it has seen
/// ([`super::MemCgroup::top_reclaim`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TopReclaim {
    /// `memory.current`, bytes.
    pub usage_bytes: u64,
    /// `memory.stat` `inactive_file`, bytes (0 when absent).
    pub inactive_file_bytes: u64,
    /// `memory.stat` `pgscan_direct`, pages since the cgroup was made.
    pub pgscan_direct: u64,
}

/// The limit of an ancestor the mount does not show, bytes, from the v1
/// `memory.stat` text `stat` of the mount's top cgroup, whose own limit
/// is `own` (`memory.limit_in_bytes`; `None`: unreadable): the
/// hierarchical limit when it is below MemTotal (`mem_total_bytes`, as
/// [`Limit::effective`]) and below the top cgroup's own (else the top
/// cgroup's own limit is the binding one, and the path shows it). `None`
/// when there is none, or the text has no such line or a bad value (one
/// under a MiB too).
pub fn unseen_limit(stat: &[u8], own: Option<Limit>, mem_total_bytes: u64) -> Option<u64> {
    let hier = parse_stat_value(stat, HIERARCHICAL_MEMORY_LIMIT).ok()??;
    let hier = Limit::Bytes(hier).effective(mem_total_bytes)?;
    // Under a MiB no cgroup that holds this process can be: a hostile or
    // broken file, not a limit of 0 MiB that binds.
    if hier < 1 << 20 {
        return None;
    }
    match own.and_then(|l| l.effective(mem_total_bytes)) {
        Some(own) if own <= hier => None,
        _ => Some(hier),
    }
}

/// The memory+swap limit of an ancestor the mount does not show, bytes:
/// `hierarchical_memsw_limit` of `stat` when below `memsw_total_bytes`
/// (MemTotal + SwapTotal). `None` when absent, unlimited or bad.
pub fn unseen_memsw_limit(stat: &[u8], memsw_total_bytes: u64) -> Option<u64> {
    let hier = parse_stat_value(stat, HIERARCHICAL_MEMSW_LIMIT).ok()??;
    Limit::Bytes(hier).effective(memsw_total_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The top of a BuildKit step's v1 mount on a 23 GiB host, its parent
    /// (dockerd's `--cgroup-parent`) limited to 2,560 MiB: the step's own
    /// `memory.limit_in_bytes` is the 4 KiB-page "unlimited".
    const STEP: &[u8] = b"cache 1048576\nrss 52428800\n\
hierarchical_memory_limit 2684354560\nhierarchical_memsw_limit 2684354560\n\
total_cache 1048576\ntotal_inactive_file 524288\n";

    const GIB: u64 = 1 << 30;

    #[test]
    fn a_parent_s_limit_is_found_below_an_unlimited_step() {
        let own = Some(Limit::Bytes(9_223_372_036_854_771_712));
        assert_eq!(unseen_limit(STEP, own, 23 * GIB), Some(2560 << 20));
        assert_eq!(unseen_memsw_limit(STEP, 23 * GIB), Some(2560 << 20));
        // Its own limit unreadable: the hierarchical one still binds.
        assert_eq!(unseen_limit(STEP, None, 23 * GIB), Some(2560 << 20));
    }

    #[test]
    fn the_top_s_own_limit_when_tighter_or_equal_is_no_unseen_one() {
        let own = Some(Limit::Bytes(2560 << 20));
        assert_eq!(unseen_limit(STEP, own, 23 * GIB), None);
        let own = Some(Limit::Bytes(1 << 30));
        assert_eq!(unseen_limit(STEP, own, 23 * GIB), None);
        // Above the top's own limit by a page: the ancestor's is tighter.
        let own = Some(Limit::Bytes((2560 << 20) + 4096));
        assert_eq!(unseen_limit(STEP, own, 23 * GIB), Some(2560 << 20));
    }

    #[test]
    fn unlimited_absent_or_bad_hierarchical_lines_are_none() {
        // The host's own size or more is no limit.
        assert_eq!(unseen_limit(STEP, None, 2 * GIB), None);
        let unlimited = b"hierarchical_memory_limit 9223372036854771712\n";
        assert_eq!(unseen_limit(unlimited, None, 23 * GIB), None);
        assert_eq!(unseen_limit(b"cache 0\n", None, 23 * GIB), None);
        assert_eq!(
            unseen_limit(b"hierarchical_memory_limit x\n", None, 23 * GIB),
            None
        );
        assert_eq!(unseen_limit(b"", None, 23 * GIB), None);
        assert_eq!(unseen_memsw_limit(b"cache 0\n", 23 * GIB), None);
    }

    #[test]
    fn a_hierarchical_limit_under_a_mib_is_no_limit() {
        extern crate std;
        // No cgroup that holds this process can be limited to less than a
        // MiB: 0, a byte or a page is a hostile or broken file, never a
        // limit of 0 MiB that binds.
        for v in ["0", "1", "4096", "1048575"] {
            let stat = std::format!("hierarchical_memory_limit {v}\n");
            assert_eq!(unseen_limit(stat.as_bytes(), None, 23 * GIB), None, "{v}");
            let stat = std::format!(
                "hierarchical_memory_limit {v}\nhierarchical_memory_limit 1073741824\n"
            );
            assert_eq!(unseen_limit(stat.as_bytes(), None, 23 * GIB), None, "{v}");
        }
        let stat = b"hierarchical_memory_limit 1048576\n";
        assert_eq!(unseen_limit(stat, None, 23 * GIB), Some(1 << 20));
    }
}
