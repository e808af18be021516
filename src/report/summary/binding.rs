//! The memory a build could really use at one row: the smaller of the
//! host's MemAvailable (`mem_avail_mb`) and the available memory under the
//! tightest cgroup limit (`cg_mem_avail_mb`), and which of the two it was
//! (SPEC.md "Summary": the tightest limit is the host).
//!
//! The summary's compatible memory lines, its near-OOM count and its JSON
//! carry this figure; the plot draws the cgroup when it binds.

use crate::tick::row::Row;

/// Which limit gave a row's [`Binding`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundBy {
    /// MemAvailable: no cgroup limit, or the cgroup had as much room or more.
    Host,
    /// The cgroup: its available memory was below MemAvailable. Its limit,
    /// MiB (`cg_mem_limit_mb`); `None` in a CSV written before that column.
    Cgroup {
        /// The cgroup's memory limit, MiB.
        limit_mb: Option<u64>,
    },
}

impl BoundBy {
    /// One word for JSON: `host` or `cgroup`.
    pub fn word(self) -> &'static str {
        match self {
            BoundBy::Host => "host",
            BoundBy::Cgroup { .. } => "cgroup",
        }
    }
}

/// A row's memory as the build could use it, MiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// min(`mem_avail_mb`, `cg_mem_avail_mb`).
    pub avail_mb: u64,
    /// What is used of the same limit: the cgroup's use (its limit less
    /// its available memory) when the cgroup binds and its limit is known,
    /// else the host's `mem_used_mb`.
    pub used_mb: u64,
    /// Which limit binds.
    pub by: BoundBy,
}

impl Binding {
    /// The binding figures of `row` (its memory columns must have been
    /// read: [`Row::mem_known`]). A cgroup binds only when its available
    /// memory is strictly below MemAvailable: on a tie the host's figures,
    /// and the toolchain's lines, stay as they were.
    pub fn of(row: &Row) -> Binding {
        let avail = avail_mb(row.mem_avail_mb, row.ext.cg_mem_avail_mb);
        match row.ext.cg_mem_avail_mb {
            Some(_) if avail < row.mem_avail_mb => Binding {
                avail_mb: avail,
                used_mb: row.ext.cg_mem_used_mb().unwrap_or(row.mem_used_mb),
                by: BoundBy::Cgroup {
                    limit_mb: row.ext.cg_mem_limit_mb,
                },
            },
            _ => Binding {
                avail_mb: row.mem_avail_mb,
                used_mb: row.mem_used_mb,
                by: BoundBy::Host,
            },
        }
    }

    /// Whether the cgroup binds.
    pub fn by_cgroup(self) -> bool {
        matches!(self.by, BoundBy::Cgroup { .. })
    }
}

/// The memory a build could use, MiB: `mem_avail_mb` (MemAvailable), or
/// `cg_mem_avail_mb` (the tightest cgroup's available memory) when it is
/// smaller. The one rule: [`Binding::of`] and the jobserver's governor
/// (`govern::jobserver::room::usable_mb`) both take it from here.
pub fn avail_mb(mem_avail_mb: u64, cg_mem_avail_mb: Option<u64>) -> u64 {
    cg_mem_avail_mb.map_or(mem_avail_mb, |cg| cg.min(mem_avail_mb))
}

/// The size the near-OOM default scales to, MiB, and whether it is a
/// cgroup's limit: the row's RAM (used + available), or the cgroup's limit
/// (`cg_mem_limit_mb`) when that is smaller. `None` when neither is known.
pub fn memory_size_mb(row: &Row) -> Option<(u64, bool)> {
    let ram = row.mem_used_mb.saturating_add(row.mem_avail_mb);
    match row.ext.cg_mem_limit_mb {
        Some(limit) if limit > 0 && (ram == 0 || limit < ram) => Some((limit, true)),
        _ if ram > 0 => Some((ram, false)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(used: u64, avail: u64, cg: Option<u64>, limit: Option<u64>) -> Row {
        let mut r = Row::empty(1);
        r.mem_used_mb = used;
        r.mem_avail_mb = avail;
        r.ext.cg_mem_avail_mb = cg;
        r.ext.cg_mem_limit_mb = limit;
        r
    }

    #[test]
    fn the_smaller_available_binds_and_is_named() {
        // No cgroup: the host's figures.
        let b = Binding::of(&row(3790, 10, None, None));
        assert_eq!((b.avail_mb, b.used_mb, b.by), (10, 3790, BoundBy::Host));
        // A 1 GiB cgroup on a 22 GiB host: its use is limit − available.
        let b = Binding::of(&row(3790, 18210, Some(77), Some(1024)));
        assert_eq!(
            (b.avail_mb, b.used_mb, b.by),
            (
                77,
                947,
                BoundBy::Cgroup {
                    limit_mb: Some(1024)
                }
            )
        );
        assert!(b.by_cgroup());
        assert_eq!(b.by.word(), "cgroup");
        // The cgroup has more room than the host: the host binds.
        let b = Binding::of(&row(3790, 10, Some(77), Some(1024)));
        assert_eq!((b.avail_mb, b.by), (10, BoundBy::Host));
        // A tie is the host's.
        assert_eq!(
            Binding::of(&row(100, 77, Some(77), Some(1024))).by,
            BoundBy::Host
        );
        // A CSV without cg_mem_limit_mb: the cgroup's available binds, the
        // use stays the host's (the cgroup's is unknown).
        let b = Binding::of(&row(3790, 18210, Some(77), None));
        assert_eq!(
            (b.avail_mb, b.used_mb, b.by),
            (77, 3790, BoundBy::Cgroup { limit_mb: None })
        );
    }

    #[test]
    fn the_size_is_the_smaller_of_ram_and_the_limit() {
        assert_eq!(
            memory_size_mb(&row(900, 2900, None, None)),
            Some((3800, false))
        );
        assert_eq!(
            memory_size_mb(&row(900, 21100, Some(799), Some(1024))),
            Some((1024, true))
        );
        // A limit above RAM does not bind the size.
        assert_eq!(
            memory_size_mb(&row(900, 2900, Some(5100), Some(8192))),
            Some((3800, false))
        );
        assert_eq!(memory_size_mb(&row(0, 0, None, Some(0))), None);
        assert_eq!(
            memory_size_mb(&row(0, 0, None, Some(512))),
            Some((512, true))
        );
    }
}
