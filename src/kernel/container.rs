//! Whether headroom runs in a container: the one rule every command uses
//! to say that a host-wide figure (the load, CPU %, `/proc/pressure`, the
//! kernel's OOM count, MemAvailable) is the host's, not the container's.
//!
//! headroom is *in a container* when, at start-up:
//! 1. a memory limit below MemTotal binds its memory cgroup path, or
//! 2. a CPU quota, or a cpuset smaller than the CPUs online, binds its
//!    cpu cgroup path, or
//! 3. `/proc/self/cgroup` names a memory or cpu cgroup whose files cannot
//!    be read (a container without `/sys`: its limits are unknown), or
//! 4. a runtime's marker file is there: `/.dockerenv` (Docker) or
//!    `/run/.containerenv` (Podman, CRI-O).
//!
//! A systemd service with `MemoryMax=` counts (its load is the host's
//! too); an unlimited Kubernetes pod without a marker does not, and its
//! figures are then shown as a host's are.
//!
//! # References
//! cgroups(7), `Documentation/admin-guide/cgroup-v2.rst`, podman-run(1)
//! (`/run/.containerenv`).

use rustix::fs::{Access, AtFlags};

use crate::kernel::cgroup::{self, CgroupError, MemCgroup};
use crate::kernel::meminfo;
use crate::kernel::root::Root;

/// `sys/devices/system/cpu/online`: the CPUs online (`0-15`).
const CPU_ONLINE: &str = "sys/devices/system/cpu/online";

/// The marker files of container runtimes, relative to the root.
pub const MARKERS: [&str; 2] = [".dockerenv", "run/.containerenv"];

/// Why headroom takes itself to be in a container (the first that holds,
/// in the order of the module's list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// A memory limit below MemTotal on its memory cgroup path.
    MemoryLimit,
    /// A CPU quota, or a cpuset smaller than the CPUs online.
    CpuLimit,
    /// A memory or cpu cgroup is named but its files cannot be read.
    LimitsUnknown,
    /// A runtime's marker file (one of [`MARKERS`]).
    Marker(&'static str),
}

impl Why {
    /// A few words for the screen and JSON (`memory limit`, `/.dockerenv`).
    pub fn describe(self) -> &'static str {
        match self {
            Why::MemoryLimit => "memory limit",
            Why::CpuLimit => "cpu limit",
            Why::LimitsUnknown => "cgroup limits unknown",
            Why::Marker(".dockerenv") => "/.dockerenv",
            Why::Marker(_) => "/run/.containerenv",
        }
    }
}

/// What the cgroups say of headroom's process, read by the caller once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Confinement {
    /// A memory limit below MemTotal binds some level of its path.
    pub memory_limit: bool,
    /// A CPU quota binds, or the cpuset is smaller than the CPUs online.
    pub cpu_limit: bool,
    /// Its memory or cpu cgroup is named but could not be read.
    pub limits_unknown: bool,
}

/// The rule of the module: `Some(why)` in a container, `None` outside;
/// markers are looked for under `root` only when no cgroup fact decides.
pub fn judge(c: Confinement, root: &Root) -> Option<Why> {
    if c.memory_limit {
        Some(Why::MemoryLimit)
    } else if c.cpu_limit {
        Some(Why::CpuLimit)
    } else if c.limits_unknown {
        Some(Why::LimitsUnknown)
    } else {
        marker(root).map(Why::Marker)
    }
}

/// The first of [`MARKERS`] that exists under `root` (faccessat(2), so
/// nothing is opened); `None` when neither does.
pub fn marker(root: &Root) -> Option<&'static str> {
    MARKERS
        .into_iter()
        .find(|m| rustix::fs::accessat(root.fd(), *m, Access::EXISTS, AtFlags::empty()).is_ok())
}

/// Reads the [`Confinement`] of headroom's process under `root`, once at
/// start-up: `mem` is its memory cgroup as [`cgroup::open_memory`] gave it
/// (the limit is judged against MemTotal of `proc/meminfo`); the cpu
/// cgroup is opened here. `buf`: [`cgroup::OPEN_BUF_LEN`] bytes.
pub fn confinement(
    root: &Root,
    mem: &Result<Option<MemCgroup>, CgroupError>,
    buf: &mut [u8],
) -> Confinement {
    let total = meminfo::read(root, buf)
        .ok()
        .and_then(|b| meminfo::parse(b).ok())
        .map(|m| m.mem_total_kib);
    let memory_limit = match (mem, total) {
        (Ok(Some(cg)), Some(t)) => cg.available(t, buf).is_some(),
        _ => false,
    };
    let cpu = cgroup::open_cpu(root, buf);
    let cpu_limit = match &cpu {
        Ok(Some(c)) => {
            let quota = c.quota_millicpus(buf);
            let set = c.cpuset_count(buf);
            let online = root
                .read(CPU_ONLINE, buf)
                .ok()
                .and_then(|b| cgroup::parse_cpu_list_count(b).ok());
            cpu_bound(quota, set, online)
        }
        _ => false,
    };
    Confinement {
        memory_limit,
        cpu_limit,
        limits_unknown: mem.is_err() || cpu.is_err(),
    }
}

/// Whether a cpuset of `cpuset` CPUs, or a quota, confines a host of
/// `online` CPUs (either unknown counts as no confinement).
pub fn cpu_bound(quota_millicpus: Option<u64>, cpuset: Option<u32>, online: Option<u32>) -> bool {
    quota_millicpus.is_some() || matches!((cpuset, online), (Some(s), Some(n)) if s < n)
}

#[cfg(test)]
mod tests {
    //! Unit tests of `kernel::container` (src/kernel/container.rs).
    extern crate std;
    use super::*;

    fn tree(tag: &str, files: &[&str]) -> (std::path::PathBuf, Root) {
        let d = std::env::temp_dir().join(std::format!(
            "headroom-container-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("run")).unwrap();
        for f in files {
            std::fs::write(d.join(f), "").unwrap();
        }
        let root = Root::open(d.to_str().unwrap()).unwrap();
        (d, root)
    }

    #[test]
    fn cgroup_facts_decide_before_markers_in_the_documented_order() {
        let (d, root) = tree("order", &[".dockerenv"]);
        let mem = Confinement {
            memory_limit: true,
            cpu_limit: true,
            limits_unknown: true,
        };
        assert_eq!(judge(mem, &root), Some(Why::MemoryLimit));
        let cpu = Confinement {
            memory_limit: false,
            ..mem
        };
        assert_eq!(judge(cpu, &root), Some(Why::CpuLimit));
        let unknown = Confinement {
            cpu_limit: false,
            ..cpu
        };
        assert_eq!(judge(unknown, &root), Some(Why::LimitsUnknown));
        let none = Confinement::default();
        assert_eq!(judge(none, &root), Some(Why::Marker(".dockerenv")));
        assert_eq!(judge(none, &root).unwrap().describe(), "/.dockerenv");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn podman_marker_and_none() {
        let (d, root) = tree("podman", &["run/.containerenv"]);
        let why = judge(Confinement::default(), &root);
        assert_eq!(why, Some(Why::Marker("run/.containerenv")));
        assert_eq!(why.unwrap().describe(), "/run/.containerenv");
        let _ = std::fs::remove_dir_all(&d);
        let (d, root) = tree("bare", &[]);
        assert_eq!(judge(Confinement::default(), &root), None);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn cpu_bound_by_quota_or_a_smaller_cpuset_only() {
        assert!(cpu_bound(Some(1500), None, Some(16)));
        assert!(cpu_bound(None, Some(2), Some(16)));
        assert!(!cpu_bound(None, Some(16), Some(16)));
        assert!(!cpu_bound(None, Some(2), None));
        assert!(!cpu_bound(None, None, Some(4)));
    }
}
