//! How THE BUILD was followed, and its `OOM kills in this build` line:
//! the figure and how it was counted, the same words in the text and in
//! the JSON.
//!
//! A build in a cgroup of its own has its cgroup's `oom_kill`: exact. A
//! process tree's are the kills whose victims the kernel named among its
//! processes ([`crate::followed::oom_victims`]); a kill on the host during
//! it whose victim could not be placed (not named: `/dev/kmsg` cannot be
//! read; or gone before a listing saw it) may be its, and then the figure
//! is a range, said as `unknown, K to K+M` with why, never a number that
//! would read as exact.

use ufmt::{uWrite, uwrite};

use crate::kernel::cgroup::Version;
use crate::kernel::kmsg::Unusable;

/// How THE BUILD was followed (SPEC.md "The build and the host").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildScope {
    /// `run` put CMD in a memory cgroup of its own, on this hierarchy.
    Cgroup(Version),
    /// CMD's (or `--watch-pid`'s) process tree: why there is no cgroup
    /// (empty for `--watch-pid`, which never makes one), and why
    /// `/dev/kmsg` names no victim (`None`: it does).
    Tree(&'static str, Option<Unusable>),
}

impl BuildScope {
    /// One word for JSON: `cgroup` or `process_tree`.
    pub(super) fn word(self) -> &'static str {
        match self {
            BuildScope::Cgroup(_) => "cgroup",
            BuildScope::Tree(..) => "process_tree",
        }
    }

    /// The cgroup files behind the RUN block's build figures.
    pub(super) fn files(self) -> (&'static str, &'static str) {
        match self {
            BuildScope::Cgroup(Version::V2) => ("memory.peak", "anon"),
            _ => ("memory.max_usage_in_bytes", "total_rss"),
        }
    }

    /// Why there is no cgroup: empty for a cgroup and for `--watch-pid`.
    pub(super) fn no_cgroup_because(self) -> &'static str {
        match self {
            BuildScope::Tree(why, _) => why,
            BuildScope::Cgroup(_) => "",
        }
    }
}

/// The build's OOM kills as far as they are known: `known`, the kills
/// counted as its (`None`: unknown, no counter), and `unplaced`, kills on
/// the host during it that may be its (a process tree's only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildOom {
    /// Counted as the build's; `None` when no counter could be read.
    pub known: Option<u64>,
    /// May be the build's, not counted: the figure is then a range.
    pub unplaced: u64,
}

impl BuildOom {
    /// The exact count: `known` when nothing is unplaced.
    pub fn exact(self) -> Option<u64> {
        self.known.filter(|_| self.unplaced == 0)
    }

    /// The least and the most it can be; `None` when unknown.
    pub fn range(self) -> Option<(u64, u64)> {
        self.known.map(|k| (k, k.saturating_add(self.unplaced)))
    }

    /// `N`, `unknown, K to K+M` or `unknown`: the figure of the line.
    pub(super) fn render_figure<W: uWrite>(self, w: &mut W) -> Result<(), W::Error> {
        match (self.exact(), self.range()) {
            (Some(n), _) => uwrite!(w, "{}", n),
            (None, Some((lo, hi))) => uwrite!(w, "unknown, {} to {}", lo, hi),
            (None, None) => w.write_str("unknown"),
        }
    }

    /// How it was counted (the words in the line's parentheses, without
    /// why there is no cgroup).
    pub(super) fn render_how<W: uWrite>(
        self,
        w: &mut W,
        scope: BuildScope,
    ) -> Result<(), W::Error> {
        let kmsg = match scope {
            BuildScope::Cgroup(Version::V1) => {
                return w.write_str("its cgroup's memory.oom_control oom_kill");
            }
            BuildScope::Cgroup(Version::V2) => {
                return w.write_str("its cgroup's memory.events oom_kill");
            }
            BuildScope::Tree(_, kmsg) => kmsg,
        };
        let Some((lo, _)) = self.range() else {
            return w.write_str("no oom_kill counter in /proc/vmstat: kernel before 4.13");
        };
        match (kmsg, self.unplaced) {
            (None, 0) => w.write_str(
                "victims named by the kernel's OOM reports in /dev/kmsg, matched against its processes",
            ),
            (None, m) => uwrite!(
                w,
                "{} of the victims named by the kernel's OOM reports in /dev/kmsg were its processes; {} more kill(s) on the host during it could not be placed: started and gone between two looks at its processes, or not named",
                lo,
                m
            ),
            (Some(_), 0) => w.write_str("the host's OOM-kill counter did not rise during it"),
            (Some(why), m) => uwrite!(
                w,
                "the host counted {} during it; /dev/kmsg, which names each victim, cannot be read: {}",
                m,
                why.describe()
            ),
        }
    }

    /// The whole line, `OOM kills in this build: … (…)` and a newline.
    pub(super) fn render_line<W: uWrite>(
        self,
        w: &mut W,
        scope: BuildScope,
    ) -> Result<(), W::Error> {
        w.write_str("OOM kills in this build: ")?;
        self.render_figure(w)?;
        w.write_str(" (")?;
        self.render_how(w, scope)?;
        let why = scope.no_cgroup_because();
        if !why.is_empty() {
            uwrite!(w, "; no cgroup of its own: {}", why)?;
        }
        w.write_str(")\n")
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of `report::summary::build_oom` (src/report/summary/build_oom.rs).

    use super::*;

    fn line(oom: BuildOom, scope: BuildScope) -> heapless::String<512> {
        let mut s = heapless::String::new();
        oom.render_line(&mut s, scope).unwrap();
        s
    }

    #[test]
    fn each_way_of_counting_says_what_it_knows() {
        let tree = BuildScope::Tree("--no-cgroup", None);
        let exact = BuildOom {
            known: Some(1),
            unplaced: 0,
        };
        assert_eq!(
            line(exact, tree).as_str(),
            "OOM kills in this build: 1 (victims named by the kernel's OOM reports in /dev/kmsg, matched against its processes; no cgroup of its own: --no-cgroup)\n"
        );
        assert_eq!((exact.exact(), exact.range()), (Some(1), Some((1, 1))));
        let open = BuildOom {
            known: Some(1),
            unplaced: 2,
        };
        assert_eq!(
            line(open, BuildScope::Tree("", None)).as_str(),
            "OOM kills in this build: unknown, 1 to 3 (1 of the victims named by the kernel's OOM reports in /dev/kmsg were its processes; 2 more kill(s) on the host during it could not be placed: started and gone between two looks at its processes, or not named)\n"
        );
        assert_eq!((open.exact(), open.range()), (None, Some((1, 3))));
        let unread = BuildScope::Tree(
            "not permitted to make a cgroup",
            Some(Unusable::NotPermitted),
        );
        let rose = BuildOom {
            known: Some(0),
            unplaced: 1,
        };
        assert_eq!(
            line(rose, unread).as_str(),
            "OOM kills in this build: unknown, 0 to 1 (the host counted 1 during it; /dev/kmsg, which names each victim, cannot be read: not permitted (kernel.dmesg_restrict: root or CAP_SYSLOG can read it); no cgroup of its own: not permitted to make a cgroup)\n"
        );
        let quiet = BuildOom {
            known: Some(0),
            unplaced: 0,
        };
        assert_eq!(
            line(quiet, unread).as_str(),
            "OOM kills in this build: 0 (the host's OOM-kill counter did not rise during it; no cgroup of its own: not permitted to make a cgroup)\n"
        );
        assert_eq!(
            line(BuildOom::default(), BuildScope::Tree("", None)).as_str(),
            "OOM kills in this build: unknown (no oom_kill counter in /proc/vmstat: kernel before 4.13)\n"
        );
        assert_eq!(
            line(exact, BuildScope::Cgroup(Version::V2)).as_str(),
            "OOM kills in this build: 1 (its cgroup's memory.events oom_kill)\n"
        );
        assert_eq!(
            line(BuildOom::default(), BuildScope::Cgroup(Version::V1)).as_str(),
            "OOM kills in this build: unknown (its cgroup's memory.oom_control oom_kill)\n"
        );
    }
}
