//! A minimal container made by hand for the root-only tests: a CPU quota
//! beside the memory cgroup of [`super::Cgroup`], and a command run inside
//! both with private mount, PID and cgroup namespaces, a fresh /proc and
//! no /sys (or only the cgroup hierarchies, read-only).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::Cgroup;

/// A CFS CPU quota for the processes of a test: on cgroup v1 a child
/// `headroom-<tag>-<pid>` of the cpu hierarchy (removed on drop); on v2
/// the memory cgroup's own `cpu.max` (the cgroup goes with its
/// [`Cgroup`]).
pub struct CpuQuota {
    /// The cgroup directory whose `cgroup.procs` a process joins.
    pub dir: PathBuf,
    /// A v1 cgroup of its own, removed on drop.
    own: bool,
}

impl CpuQuota {
    /// `quota_us` of CPU time per `period_us` (100000/100000: one CPU)
    /// for processes in `mem` (v2) or in a new cpu cgroup (v1), or why
    /// it cannot be set.
    pub fn create(
        mem: &Cgroup,
        tag: &str,
        quota_us: u64,
        period_us: u64,
    ) -> Result<CpuQuota, String> {
        if !mem.is_v1() {
            let max = mem.dir.join("cpu.max");
            fs::write(&max, format!("{quota_us} {period_us}")).map_err(|e| {
                format!(
                    "cannot set {}: {e} (cpu not in subtree_control?)",
                    max.display()
                )
            })?;
            return Ok(CpuQuota {
                dir: mem.dir.clone(),
                own: false,
            });
        }
        let parent = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
            .into_iter()
            .map(Path::new)
            .find(|p| p.join("cpu.cfs_quota_us").exists())
            .ok_or("no v1 cpu hierarchy with CFS bandwidth at /sys/fs/cgroup/cpu")?;
        super::remove_stale(parent, tag);
        let dir = parent.join(format!("headroom-{tag}-{}", std::process::id()));
        fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let q = CpuQuota { dir, own: true };
        for (file, v) in [
            ("cpu.cfs_period_us", period_us),
            ("cpu.cfs_quota_us", quota_us),
        ] {
            fs::write(q.dir.join(file), v.to_string())
                .map_err(|e| format!("cannot set {file}: {e}"))?;
        }
        Ok(q)
    }
}

impl Drop for CpuQuota {
    fn drop(&mut self) {
        if self.own {
            super::remove_tree(&self.dir);
        }
    }
}

/// What the container sees of /sys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sys {
    /// None at all: `umount -l /sys`, as many minimal containers have it.
    Gone,
    /// A tmpfs holding only the memory and cpu cgroup hierarchies, mounted
    /// read-only from inside the cgroup namespace (what headroom advises
    /// when its limits are unknown).
    CgroupReadOnly,
}

/// `argv` run as in a minimal container: a shell joins each cgroup of
/// `cgroups` (writes itself to their `cgroup.procs`), then execs
/// `unshare --mount --pid --cgroup --fork --propagation private`, whose
/// child takes /sys away (`umount -l`, which takes /sys/fs/cgroup with
/// it), mounts a fresh /proc for its PID namespace, sets up `sys`, and
/// execs `argv` as the namespace's PID 1. Everything else of / is kept as
/// is (the debug binary is dynamically linked). The namespaces' root
/// cgroups are the test's own, so /proc/self/cgroup inside reads `/`.
/// A step that fails exits 97 (joining a cgroup) or 98 (a mount), before
/// `argv` runs. Needs root and util-linux `unshare`.
pub fn in_container(cgroups: &[&Path], sys: Sys, argv: &[&str]) -> Command {
    let mut join = String::new();
    for d in cgroups {
        join.push_str(&format!(
            "echo $$ > '{}/cgroup.procs' || exit 97\n",
            d.display()
        ));
    }
    let inner = format!(
        "umount -l /sys || exit 98; mount -t proc proc /proc || exit 98; {}exec \"$@\"",
        match sys {
            Sys::Gone => String::new(),
            Sys::CgroupReadOnly => cgroup_mounts(),
        }
    );
    let script = format!(
        "{join}exec unshare --mount --pid --cgroup --fork --propagation private sh -c '{inner}' sh \"$@\""
    );
    let mut c = Command::new("sh");
    c.args(["-c", &script, "sh"]).args(argv);
    c
}

/// Shell commands that mount a tmpfs on /sys and, read-only under
/// /sys/fs/cgroup, the hierarchies of this host that carry memory or cpu:
/// each v1 one named by its controller list, else the v2 tree. No single
/// quote in them: they go inside [`in_container`]'s quoted script.
fn cgroup_mounts() -> String {
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut s = String::from("mount -t tmpfs -o mode=755 sys /sys || exit 98; ");
    let v1: Vec<&str> = own
        .lines()
        .filter_map(|l| l.split(':').nth(1))
        .filter(|list| list.split(',').any(|c| c == "memory" || c == "cpu"))
        .collect();
    if v1.is_empty() {
        s.push_str(
            "mkdir -p /sys/fs/cgroup && mount -t cgroup2 -o ro cgroup2 /sys/fs/cgroup || exit 98; ",
        );
    }
    for list in v1 {
        s.push_str(&format!(
            "mkdir -p /sys/fs/cgroup/{list} && mount -t cgroup -o ro,{list} cgroup /sys/fs/cgroup/{list} || exit 98; "
        ));
    }
    s
}
