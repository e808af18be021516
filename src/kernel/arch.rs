//! `/proc/sys/kernel/arch`: the kernel's machine name (`uname -m`), and
//! from it the width of the kernel's `unsigned long`, which the block
//! layer's sector and I/O counts are kept in.
//!
//! On a 32-bit kernel (`armv7l`, `armv6l`, `i686`, …: armhf Raspberry Pi
//! OS on `kernel7.img`) those counts wrap after 2^32 (2 TiB of sectors);
//! on a 64-bit kernel they do not, whatever this binary's own width: an
//! armhf userland on the Pi's 64-bit kernel sees 64-bit counts. So the
//! kernel's machine decides, never `usize::BITS`.
//!
//! The live kernel's machine is uname(2)'s, read once at start; a board
//! tree under `--root` has it in `proc/sys/kernel/arch` (the sysctl
//! printing the same string, Linux 6.1 and later; `ci/capture-board`
//! writes `uname -m` into it on older kernels). A tree without the file is
//! taken as 64-bit (no wrap), as before this file was read.
//!
//! # References
//! uname(2); `kernel/utsname_sysctl.c` (`arch`); `include/linux/part_stat.h`
//! (`struct disk_stats`: `unsigned long sectors[]`, `ios[]`, `merges[]`);
//! `block/genhd.c` (`diskstats_show`, `part_stat_show`: `%lu`).

use crate::kernel::parse::trim;
use crate::kernel::root::Root;

/// Path of the sysctl, relative to the root.
pub const PATH: &str = "proc/sys/kernel/arch";

/// Width of the kernel's `unsigned long`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LongWidth {
    /// 32 bits: a 32-bit kernel; counts wrap at 2^32.
    Bits32,
    /// 64 bits (or unknown): counts never wrap in practice.
    Bits64,
}

/// The width of `unsigned long` on a kernel whose uname machine is
/// `machine` (`armv7l`, `aarch64`, …; surrounding white space ignored).
/// 64-bit machines name their width (`x86_64`, `aarch64`, `riscv64`,
/// `ppc64le`, `mips64`, `loongarch64`, `sparc64`, `ia64`) or are `s390x`
/// or `alpha`; any other name is a 32-bit kernel's (`armv7l`, `armv6l`,
/// `i686`, `mips`, `ppc`, `riscv32`). An empty name is unknown: 64.
///
/// ```
/// use headroom::kernel::arch::{LongWidth, long_width};
/// assert_eq!(long_width(b"armv7l\n"), LongWidth::Bits32);
/// assert_eq!(long_width(b"aarch64\n"), LongWidth::Bits64);
/// ```
pub fn long_width(machine: &[u8]) -> LongWidth {
    let m = trim(machine);
    let wide = m.is_empty() || m.windows(2).any(|w| w == b"64") || m == b"s390x" || m == b"alpha";
    if wide {
        LongWidth::Bits64
    } else {
        LongWidth::Bits32
    }
}

/// The width of `unsigned long` of the kernel under `root`: uname(2)'s
/// machine when `live` ([`Root::is_live`]), else the tree's [`PATH`]
/// ([`LongWidth::Bits64`] when absent or unreadable). Read once, at start.
pub fn of_root(root: &Root, live: bool) -> LongWidth {
    if live {
        return long_width(rustix::system::uname().machine().to_bytes());
    }
    let mut buf = [0u8; 64];
    root.read(PATH, &mut buf)
        .map_or(LongWidth::Bits64, long_width)
}

#[cfg(test)]
mod tests {
    //! Tests of [`super`]: the machine names of fixture 48 and the boards.

    extern crate std;
    use super::*;

    #[test]
    fn fixture_48_diskstats_32bit_sector_wrap_machine_names() {
        let arch = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/48-diskstats-32bit-sector-wrap/proc/sys/kernel/arch"
        ));
        assert_eq!(long_width(arch), LongWidth::Bits32);
        for m in ["armv6l", "armv7l", "i686", "i386", "mips", "ppc", "riscv32"] {
            assert_eq!(long_width(m.as_bytes()), LongWidth::Bits32, "{m}");
        }
        for m in [
            "x86_64",
            "aarch64",
            "riscv64",
            "ppc64le",
            "mips64",
            "s390x",
            "alpha",
            "ia64",
            "loongarch64",
            "",
            "\n",
        ] {
            assert_eq!(long_width(m.as_bytes()), LongWidth::Bits64, "{m:?}");
        }
    }

    #[test]
    fn a_tree_without_the_file_is_64_bit_and_the_live_kernel_is_this_machine() {
        let base = std::env::temp_dir().join(std::format!("headroom-arch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("proc/sys/kernel")).unwrap();
        let root = Root::open(base.to_str().unwrap()).unwrap();
        assert_eq!(of_root(&root, false), LongWidth::Bits64);
        std::fs::write(base.join(PATH), "armv7l\n").unwrap();
        assert_eq!(of_root(&root, false), LongWidth::Bits32);
        // Live: uname(2), not the file. A 64-bit binary runs on a 64-bit
        // kernel, whatever the tree says.
        if cfg!(target_pointer_width = "64") {
            assert_eq!(of_root(&root, true), LongWidth::Bits64);
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
