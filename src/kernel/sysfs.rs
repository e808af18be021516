//! sysfs directories of numbered entries (`thermal_zone<N>`, `hwmon<N>`,
//! `policy<N>`, `cpu<N>`) and the paths of their attributes, built on the
//! stack.
//!
//! The numbers are the kernel's allocation order, not a meaning: which
//! `hwmon<N>` is the CPU changes between boots and kernels, so readers
//! choose entries by their `type` or `name` and use the number only to
//! order what they keep.
//!
//! # References
//! `Documentation/filesystems/sysfs.rst`, getdents64(2).

use core::mem::MaybeUninit;

use rustix::fd::{AsFd, BorrowedFd};
use rustix::io::Errno;

use crate::kernel::parse::parse_u64;
use crate::kernel::root::{for_each_entry, open_dir_at};

/// Capacity of a relative attribute path, in bytes: the longest one read
/// (`sys/bus/platform/drivers/sfc_temp_sensor/124a0000.tmpsensor/temp1_input`)
/// is 72.
pub const PATH_LEN: usize = 128;

/// A relative path under the root, on the stack.
pub type Path = heapless::String<PATH_LEN>;

/// The concatenation of `parts` as a path; `None` when longer than
/// [`PATH_LEN`] or not UTF-8.
///
/// ```
/// use headroom::kernel::sysfs::path;
/// let p = path(&[b"sys/class/hwmon/", b"hwmon3", b"/name"]).unwrap();
/// assert_eq!(p.as_str(), "sys/class/hwmon/hwmon3/name");
/// assert!(path(&[&[b'a'; 129][..]]).is_none());
/// ```
pub fn path(parts: &[&[u8]]) -> Option<Path> {
    let mut out = Path::new();
    for p in parts {
        out.push_str(core::str::from_utf8(p).ok()?).ok()?;
    }
    Some(out)
}

/// `dir/prefix<n>/file`, e.g. `sys/class/hwmon/hwmon3/name`; `None` when
/// longer than [`PATH_LEN`].
///
/// ```
/// use headroom::kernel::sysfs::entry_path;
/// let p = entry_path("sys/class/thermal", "thermal_zone", 12, "temp").unwrap();
/// assert_eq!(p.as_str(), "sys/class/thermal/thermal_zone12/temp");
/// ```
pub fn entry_path(dir: &str, prefix: &str, n: u32, file: &str) -> Option<Path> {
    use core::fmt::Write;
    let mut out = Path::new();
    write!(out, "{dir}/{prefix}{n}/{file}").ok()?;
    Some(out)
}

/// The `N` of an entry named `prefix` followed by decimal digits only
/// (`thermal_zone12` → 12); `None` for any other name.
pub fn number(name: &[u8], prefix: &[u8]) -> Option<u32> {
    let digits = name.strip_prefix(prefix)?;
    u32::try_from(parse_u64(digits)?).ok()
}

/// Calls `f` with `N` for each entry `prefix<N>` of directory `dir`
/// (relative to `root`), every one of them whatever their count and
/// whatever else the directory holds; `scratch` is the getdents64(2)
/// buffer (any size), the only memory used, reused for each batch.
///
/// No entry is left out: the CPU's sensor may be listed after hundreds of
/// others (an x86 server's ACPI `Processor` cooling devices, one per
/// logical CPU, share `/sys/class/thermal` with its zones; one hwmon per
/// NVMe drive and DIMM), and sysfs lists in no useful order. Callers
/// keep only the few lowest numbers they want (`insert_lowest`); what a
/// listing costs is one small read per matching entry, at discovery.
///
/// # Errors
/// The errno of opening or listing `dir` (ENOENT when it is absent).
pub fn for_each_numbered(
    root: BorrowedFd<'_>,
    dir: &str,
    prefix: &[u8],
    scratch: &mut [MaybeUninit<u8>],
    mut f: impl FnMut(u32),
) -> Result<(), Errno> {
    let fd = open_dir_at(root, dir)?;
    for_each_entry(fd.as_fd(), scratch, |name, _| {
        if let Some(n) = number(name, prefix) {
            f(n);
        }
        true
    })
}

/// Inserts `(n, t)` into `v`, kept sorted by `n` ascending and holding the
/// `K` lowest; when full, the highest is dropped (possibly the new one).
/// A second entry with the same `n` is ignored.
pub fn insert_lowest<T, const K: usize>(v: &mut heapless::Vec<(u32, T), K>, n: u32, t: T) {
    if K == 0 || v.iter().any(|(m, _)| *m == n) {
        return;
    }
    if v.is_full() {
        if v.last().is_some_and(|(m, _)| *m < n) {
            return;
        }
        v.pop();
    }
    let at = v.iter().position(|(m, _)| *m > n).unwrap_or(v.len());
    let _ = v.insert(at, (n, t));
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    #[test]
    fn numbers_only_after_the_exact_prefix() {
        assert_eq!(number(b"thermal_zone12", b"thermal_zone"), Some(12));
        assert_eq!(number(b"thermal_zone", b"thermal_zone"), None);
        assert_eq!(number(b"thermal_zone1a", b"thermal_zone"), None);
        assert_eq!(number(b"cooling_device0", b"thermal_zone"), None);
        assert_eq!(number(b"cpu4294967296", b"cpu"), None);
        assert_eq!(number(b"cpufreq", b"cpu"), None);
    }

    #[test]
    fn insert_lowest_keeps_the_k_lowest_in_order() {
        let mut v = heapless::Vec::<(u32, char), 2>::new();
        insert_lowest(&mut v, 7, 'a');
        insert_lowest(&mut v, 3, 'b');
        insert_lowest(&mut v, 9, 'c');
        assert_eq!(v.as_slice(), &[(3, 'b'), (7, 'a')]);
        insert_lowest(&mut v, 1, 'd');
        insert_lowest(&mut v, 1, 'e');
        assert_eq!(v.as_slice(), &[(1, 'd'), (3, 'b')]);
    }

    /// A fresh scratch tree `headroom-sysfs-<tag>-<pid>` with `n` entries
    /// named `<prefix><i>` under `dir`, each holding `file` = `text(i)`.
    fn tree(tag: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(std::format!("headroom-sysfs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn entries(
        d: &std::path::Path,
        dir: &str,
        prefix: &str,
        n: u32,
        file: &str,
        text: impl Fn(u32) -> &'static str,
    ) {
        for i in 0..n {
            let e = d.join(std::format!("{dir}/{prefix}{i}"));
            std::fs::create_dir_all(&e).unwrap();
            std::fs::write(e.join(file), std::format!("{}\n", text(i))).unwrap();
        }
    }

    #[test]
    fn every_entry_is_listed_and_absent_is_an_errno() {
        let d = tree("all");
        for i in 0..600 {
            std::fs::create_dir_all(d.join(std::format!("x/cpu{i}"))).unwrap();
        }
        std::fs::create_dir_all(d.join("x/cpufreq")).unwrap();
        let root = crate::kernel::root::Root::open(d.to_str().unwrap()).unwrap();
        let mut scratch = [MaybeUninit::uninit(); 512];
        let mut seen = std::vec::Vec::new();
        for_each_numbered(root.fd(), "x", b"cpu", &mut scratch, |n| seen.push(n)).unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..600).collect::<std::vec::Vec<u32>>());
        assert_eq!(
            for_each_numbered(root.fd(), "absent", b"cpu", &mut scratch, |_| ()),
            Err(Errno::NOENT)
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Issue 28: an x86 server's `/sys/class/thermal` holds one ACPI
    /// `Processor` cooling device per logical CPU (300 here, more than
    /// the 256 entries a listing once stopped at) beside its zones, 300
    /// `acpitz` zones before the package's `x86_pkg_temp` at
    /// `thermal_zone300`; its `/sys/class/hwmon` 300 `nvme` devices before
    /// `coretemp` at `hwmon300`. Both CPU sensors are still found.
    #[test]
    fn the_cpu_sensor_is_found_past_hundreds_of_entries() {
        use crate::kernel::hwmon::{HWMON_DIR, Hwmons};
        use crate::kernel::thermal::{BUF_LEN, KeptSensors, THERMAL_DIR, is_cpu_hwmon};
        let d = tree("many");
        entries(
            &d,
            THERMAL_DIR,
            "cooling_device",
            300,
            "type",
            |_| "Processor",
        );
        entries(&d, THERMAL_DIR, "thermal_zone", 301, "type", |i| {
            if i == 300 { "x86_pkg_temp" } else { "acpitz" }
        });
        entries(&d, HWMON_DIR, "hwmon", 301, "name", |i| {
            if i == 300 { "coretemp" } else { "nvme" }
        });
        let root = crate::kernel::root::Root::open(d.to_str().unwrap()).unwrap();
        let mut scratch = [MaybeUninit::uninit(); 1024];
        let mut buf = [0u8; BUF_LEN];
        let hwmons = Hwmons::list(&root, is_cpu_hwmon, &mut scratch, &mut buf);
        assert_eq!(
            hwmons.iter().collect::<std::vec::Vec<_>>(),
            [(300, "coretemp")]
        );
        let sensors = KeptSensors::discover(&root, false, &hwmons, &mut scratch, &mut buf);
        let found: std::vec::Vec<(&str, &str)> = sensors
            .sensors()
            .map(|s| (s.name.as_str(), s.path.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("x86_pkg_temp", "sys/class/thermal/thermal_zone300/temp"),
                ("coretemp", "sys/class/hwmon/hwmon300/temp1_input"),
            ]
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
