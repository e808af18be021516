//! `/proc/cgroups`: the kernel's table of cgroup controllers, one line
//! each, `subsys_name hierarchy num_cgroups enabled`.
//!
//! Read only when `/proc/self/cgroup` names a controller's cgroup but no
//! mount shows it ([`crate::kernel::cgroup`]): a controller the table
//! shows disabled (`cgroup_disable=memory`, as Raspberry Pi OS boots) or
//! does not list is no limit; an enabled one may carry a limit that this
//! mount namespace cannot see, which is then unknown.
//!
//! # References
//! cgroups(7), "/proc/cgroups".

use crate::kernel::parse::{fields, lines, parse_u64};
use crate::kernel::root::Root;

/// Path of the table, relative to the root.
pub const PATH: &str = "proc/cgroups";

/// Bytes of the stack buffer it is read into: the table is 12–16 lines of
/// 15–25 bytes (this VM's, Linux 6.18: 13 lines, 206 bytes); a larger one
/// is `Truncated` and reads as unknown.
pub const BUF_LEN: usize = 1024;

/// Whether the table `b` has `controller` enabled: the fourth field of
/// its line is non-zero; `None` without a line for it (or a line too short
/// to say). The `#subsys_name` heading is skipped: no controller has that
/// name.
pub fn controller_enabled(b: &[u8], controller: &[u8]) -> Option<bool> {
    lines(b).find_map(|line| {
        let mut f = fields(line);
        if f.next()? != controller {
            return None;
        }
        let enabled = parse_u64(f.nth(2)?)?;
        Some(enabled != 0)
    })
}

/// True when `root`'s `/proc/cgroups` shows that `controller` is off: its
/// line says `enabled` 0, or the table has no line for it (not built into
/// the kernel). False when the table cannot be read, or the controller is
/// enabled.
pub fn disabled(root: &Root, controller: &[u8]) -> bool {
    let mut buf = [0u8; BUF_LEN];
    match root.read(PATH, &mut buf) {
        Ok(b) => controller_enabled(b, controller) != Some(true),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of `kernel::proc_cgroups` (src/kernel/proc_cgroups.rs).

    use super::*;

    #[test]
    fn controller_enabled_reads_the_fourth_field_of_its_own_line() {
        let b =
            b"#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\t1\nmemory\t0\t1\t0\n";
        assert_eq!(controller_enabled(b, b"memory"), Some(false));
        assert_eq!(controller_enabled(b, b"cpuset"), Some(true));
        // `cpu` is not `cpuset`; a missing or short line is no answer.
        assert_eq!(controller_enabled(b, b"cpu"), None);
        assert_eq!(controller_enabled(b"memory 4 1\n", b"memory"), None);
        assert_eq!(controller_enabled(b"", b"memory"), None);
    }

    #[test]
    fn fixture_08_rpi_memory_cgroup_disabled() {
        let b = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/08-rpi-memory-cgroup-disabled/proc/cgroups"
        ));
        assert_eq!(controller_enabled(b, b"memory"), Some(false));
        assert_eq!(controller_enabled(b, b"cpu"), Some(true));
        let root = Root::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/08-rpi-memory-cgroup-disabled"
        ))
        .unwrap();
        assert!(disabled(&root, b"memory"));
        assert!(!disabled(&root, b"cpu"));
        // Unreadable (no such file under the root): not known to be off.
        let root = Root::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/remote"
        ))
        .unwrap();
        assert!(!disabled(&root, b"memory"));
    }
}
