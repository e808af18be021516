//! `/sys/class/hwmon/hwmon<N>/name`, listed once: the devices the CPU
//! temperature ([`crate::kernel::thermal`]) and the Pi's under-voltage
//! alarm ([`crate::kernel::throttled`]) are chosen from, so that each
//! `name` is read once however many discoveries look at it.
//!
//! Source: `Documentation/hwmon/sysfs-interface.rst` (`name`: the chip's
//! name, one line). A device whose `name` is missing or unreadable is left
//! out, as a discovery would skip it.

use core::mem::MaybeUninit;

use crate::kernel::parse::trim;
use crate::kernel::root::{Root, read_at};
use crate::kernel::sysfs::{entry_path, for_each_numbered, insert_lowest};

/// The hwmon class directory, relative to the root.
pub const HWMON_DIR: &str = "sys/class/hwmon";

/// How many devices a listing keeps: the lowest-numbered of those the
/// caller wants (a board has 1–6 hwmon devices; the discoveries keep 2
/// sensors and 1 alarm).
pub const MAX_HWMONS: usize = 8;

/// Capacity of a device's name in bytes (`raspberrypi`, `cpu_thermal`,
/// `k10temp`: a driver or zone name); a longer one is left out.
pub const NAME_LEN: usize = 24;

/// The hwmon devices wanted by the caller, lowest number first, each with
/// its `name` as read.
#[derive(Debug, Default)]
pub struct Hwmons {
    list: heapless::Vec<(u32, heapless::String<NAME_LEN>), MAX_HWMONS>,
}

impl Hwmons {
    /// Lists [`HWMON_DIR`] under `root` and reads each `hwmon<N>/name`
    /// once, keeping the [`MAX_HWMONS`] lowest-numbered devices whose
    /// trimmed name passes `wanted`. An absent directory (a VM, a
    /// container) is an empty listing, not an error.
    ///
    /// `scratch` is the getdents64(2) buffer (any size); `buf` receives
    /// each name (any size above [`NAME_LEN`]).
    pub fn list(
        root: &Root,
        wanted: impl Fn(&[u8]) -> bool,
        scratch: &mut [MaybeUninit<u8>],
        buf: &mut [u8],
    ) -> Hwmons {
        let dir = root.fd();
        let mut list = heapless::Vec::new();
        let _ = for_each_numbered(dir, HWMON_DIR, b"hwmon", scratch, |n| {
            let Some(p) = entry_path(HWMON_DIR, "hwmon", n, "name") else {
                return;
            };
            let Ok(b) = read_at(dir, &p, buf) else {
                return;
            };
            let name = trim(b);
            let Some(name) = core::str::from_utf8(name)
                .ok()
                .filter(|_| wanted(name))
                .and_then(|s| heapless::String::try_from(s).ok())
            else {
                return;
            };
            insert_lowest(&mut list, n, name);
        });
        Hwmons { list }
    }

    /// The devices kept, lowest number first: `(N, name)`.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &str)> {
        self.list.iter().map(|(n, s)| (*n, s.as_str()))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

    fn list(case: &str, wanted: fn(&[u8]) -> bool) -> std::vec::Vec<(u32, std::string::String)> {
        let r = Root::open(&std::format!("{FIX}{case}")).unwrap();
        let mut scratch = [MaybeUninit::uninit(); 4096];
        Hwmons::list(&r, wanted, &mut scratch, &mut [0u8; 64])
            .iter()
            .map(|(n, s)| (n, s.into()))
            .collect()
    }

    /// Fixture 38 (a Pi 4's `/sys/class/hwmon`: `hwmon0` is `cpu_thermal`,
    /// `hwmon1` `rpi_volt`, see its CASE.md): both names, in number order,
    /// and only those wanted.
    #[test]
    fn fixture_38_rpi4_hwmon_rpi_volt_cpu_thermal() {
        let case = "38-rpi4-hwmon-rpi_volt-cpu_thermal";
        let all = list(case, |_| true);
        assert_eq!(all, [(0, "cpu_thermal".into()), (1, "rpi_volt".into())]);
        assert_eq!(list(case, |n| n == b"rpi_volt"), [(1, "rpi_volt".into())]);
    }

    /// A tree with no `sys/class/hwmon` lists nothing.
    #[test]
    fn no_hwmon_class_is_an_empty_listing() {
        assert!(list("36-rpi-get-throttled-50005", |_| true).is_empty());
    }
}
