//! `/proc/cgroups`: the kernel's table of cgroup controllers, one line
//! each, `subsys_name hierarchy num_cgroups enabled`.
//!
//! Read only when `/proc/self/cgroup` names a controller's cgroup but no
//! mount shows it ([`crate::kernel::cgroup`]): a controller the table
//! shows disabled (`cgroup_disable=memory`, as Raspberry Pi OS boots) or
//! with the root cgroup alone (nobody made a cgroup of it: a v1 host that
//! does not mount it) is no limit; any other may carry a limit that this
//! mount namespace cannot see, which is then unknown.
//!
//! A controller the table does not list is unknown too. Before Linux 6.12
//! the table lists every controller built in; from 6.12 (commit
//! af000ce85293) only those with cgroup v1 code, so a kernel built without
//! `CONFIG_MEMCG_V1` (the Raspberry Pi's 6.12, WSL's 6.18) lists no
//! `memory` line while the controller is on in v2, and none either with
//! `cgroup_disable=memory`. Nothing here tells the two apart: only a
//! visible cgroup2 mount (its `cgroup.controllers`) can.
//!
//! # References
//! cgroups(7), "/proc/cgroups"; `kernel/cgroup/cgroup-v1.c`
//! `proc_cgroupstats_show()`.

use crate::kernel::parse::{fields, lines, parse_u64};
use crate::kernel::root::Root;

/// Path of the table, relative to the root.
pub const PATH: &str = "proc/cgroups";

/// Bytes of the stack buffer it is read into: the table is 12–16 lines of
/// 15–25 bytes (this VM's, Linux 6.18: 13 lines, 206 bytes); a larger one
/// is `Truncated` and reads as unknown.
pub const BUF_LEN: usize = 1024;

/// One controller's line of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Controller {
    /// The v1 hierarchy it is bound to; 0 for none (then v2's, if mounted).
    pub hierarchy: u64,
    /// Cgroups in that hierarchy, the root included: 1 is the root alone.
    pub num_cgroups: u64,
    /// Not disabled on the kernel command line (`cgroup_disable=`).
    pub enabled: bool,
}

impl Controller {
    /// Whether any cgroup of this controller can hold a limit: it is
    /// enabled and its hierarchy has a cgroup besides the root (whose
    /// limits cannot be set).
    pub fn can_limit(self) -> bool {
        self.enabled && self.num_cgroups > 1
    }
}

/// The line of `controller` in the table `b`; `None` without one (or a
/// line too short or malformed to say). The `#subsys_name` heading is
/// skipped: no controller has that name.
pub fn controller(b: &[u8], controller: &[u8]) -> Option<Controller> {
    lines(b).find_map(|line| {
        let mut f = fields(line);
        if f.next()? != controller {
            return None;
        }
        let mut num = || f.next().and_then(parse_u64);
        let (hierarchy, num_cgroups, enabled) = (num()?, num()?, num()?);
        Some(Controller {
            hierarchy,
            num_cgroups,
            enabled: enabled != 0,
        })
    })
}

/// True when `root`'s `/proc/cgroups` shows that no cgroup can limit
/// `controller`: its line says it is disabled or has the root cgroup
/// alone ([`Controller::can_limit`]). False when the table cannot be
/// read, has no line for it (from 6.12 a controller built without its v1
/// code is not listed, on or off: see the module's text) or a malformed
/// one, or a limit is possible.
pub fn no_limit_possible(root: &Root, controller_name: &[u8]) -> bool {
    let mut buf = [0u8; BUF_LEN];
    match root.read(PATH, &mut buf) {
        Ok(b) => controller(b, controller_name).is_some_and(|c| !c.can_limit()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of `kernel::proc_cgroups` (src/kernel/proc_cgroups.rs).

    use super::*;

    #[test]
    fn controller_reads_its_own_line() {
        let b = b"#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t5\t1\nmemory\t0\t1\t0\npids\t0\t1\t1\n";
        let line = |name: &[u8]| controller(b, name);
        assert_eq!(
            line(b"cpuset"),
            Some(Controller {
                hierarchy: 3,
                num_cgroups: 5,
                enabled: true
            })
        );
        assert!(line(b"cpuset").unwrap().can_limit());
        // Disabled; enabled with the root cgroup alone: no limit possible.
        assert!(!line(b"memory").unwrap().can_limit());
        assert!(!line(b"pids").unwrap().can_limit());
        // `cpu` is not `cpuset`; a missing, short or malformed line is no answer.
        assert_eq!(line(b"cpu"), None);
        assert_eq!(controller(b"memory 4 1\n", b"memory"), None);
        assert_eq!(controller(b"memory 4 x 1\n", b"memory"), None);
        assert_eq!(controller(b"", b"memory"), None);
    }

    /// A 6.12 kernel without `CONFIG_MEMCG_V1` (raspberrypi/linux#6980):
    /// no `memory` line, whether the controller is on in v2 or not. No
    /// line is no evidence: a limit is not ruled out.
    #[test]
    fn fixture_53_proc_cgroups_no_memory_line_6_12() {
        let b = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/53-proc-cgroups-no-memory-line-6.12/proc/cgroups"
        ));
        assert_eq!(controller(b, b"memory"), None);
        assert!(controller(b, b"cpu").unwrap().can_limit());
        assert!(controller(b, b"cpuset").unwrap().can_limit());
        let root = Root::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/53-proc-cgroups-no-memory-line-6.12"
        ))
        .unwrap();
        assert!(!no_limit_possible(&root, b"memory"));
        assert!(!no_limit_possible(&root, b"cpu"));
    }

    #[test]
    fn fixture_08_rpi_memory_cgroup_disabled() {
        let b = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/08-rpi-memory-cgroup-disabled/proc/cgroups"
        ));
        assert!(!controller(b, b"memory").unwrap().enabled);
        assert!(controller(b, b"cpu").unwrap().can_limit());
        let root = Root::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/08-rpi-memory-cgroup-disabled"
        ))
        .unwrap();
        assert!(no_limit_possible(&root, b"memory"));
        assert!(!no_limit_possible(&root, b"cpu"));
        // Unreadable (no such file under the root): not known to be off.
        let root = Root::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/remote"
        ))
        .unwrap();
        assert!(!no_limit_possible(&root, b"memory"));
    }
}
