//! Free space of a filesystem, computed as `df -P` does.
//!
//! The numbers come from statvfs(3) of `--disk-path` and of `/tmp`. This
//! module keeps the syscall apart from the arithmetic so that the fixture's
//! recorded statvfs results (`22-statvfs-…/statvfs.json`) test the same code.
//!
//! # References
//! statvfs(3); GNU coreutils df(1) (`Use%` = used / (used + avail), rounded
//! up; used = blocks − bfree).

use rustix::fd::BorrowedFd;

/// Free inodes below which a filesystem counts as full: a compile writes
/// dozens of files (objects, temporaries, dependency files) at once.
pub const INODES_FULL_BELOW: u64 = 64;

/// The statvfs fields headroom uses, in units of `frsize` bytes (blocks)
/// and inodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FsStat {
    /// Fragment size in bytes (`f_frsize`); block counts are in this unit.
    pub frsize: u64,
    /// Total blocks (`f_blocks`).
    pub blocks: u64,
    /// Free blocks including root-reserved ones (`f_bfree`).
    pub bfree: u64,
    /// Free blocks for unprivileged users (`f_bavail`): what a build can use.
    pub bavail: u64,
    /// Total inodes (`f_files`); 0 on filesystems without a fixed table.
    pub files: u64,
    /// Free inodes (`f_ffree`).
    pub ffree: u64,
}

impl FsStat {
    /// statvfs(3) of the directory open at `fd` (fstatvfs).
    ///
    /// # Errors
    /// The errno of fstatfs(2).
    pub fn of_fd(fd: BorrowedFd<'_>) -> Result<FsStat, rustix::io::Errno> {
        let s = rustix::fs::fstatvfs(fd)?;
        Ok(FsStat {
            frsize: s.f_frsize,
            blocks: s.f_blocks,
            bfree: s.f_bfree,
            bavail: s.f_bavail,
            files: s.f_files,
            ffree: s.f_ffree,
        })
    }

    /// Bytes available to unprivileged users (`f_bavail × f_frsize`).
    pub fn avail_bytes(&self) -> u64 {
        self.bavail.saturating_mul(self.frsize)
    }

    /// Total size in bytes (`f_blocks × f_frsize`).
    pub fn total_bytes(&self) -> u64 {
        self.blocks.saturating_mul(self.frsize)
    }

    /// Available space in whole MiB, rounded down.
    pub fn avail_mib(&self) -> u64 {
        self.avail_bytes() / (1 << 20)
    }

    /// Available space in whole GiB, rounded down (the CSV's `disk_avail_gb`).
    pub fn avail_gib(&self) -> u64 {
        self.avail_bytes() / (1 << 30)
    }

    /// `Use%` as `df -P` prints it: used / (used + avail), rounded up, where
    /// used = blocks − bfree. 0 for an empty filesystem.
    ///
    /// ```
    /// use headroom::kernel::fsstat::FsStat;
    /// let s = FsStat { frsize: 4096, blocks: 100, bfree: 40, bavail: 30, files: 0, ffree: 0 };
    /// assert_eq!(s.used_pct(), 67); // 60 / 90 = 66.7 %, rounded up
    /// ```
    pub fn used_pct(&self) -> u64 {
        let used = self.blocks.saturating_sub(self.bfree) as u128;
        let denom = used + self.bavail as u128;
        if denom == 0 {
            return 0;
        }
        (used * 100).div_ceil(denom) as u64
    }

    /// True when the filesystem has an inode table (`f_files > 0`) and fewer
    /// than [`INODES_FULL_BELOW`] free inodes: every build's next files fail
    /// with ENOSPC whatever its free bytes (fixture 22: 8 inodes free, 7.5 GB
    /// free, "No space left on device"). Filesystems without a fixed table
    /// (vfat, btrfs report `f_files = 0`) are never inode-full.
    pub fn inodes_exhausted(&self) -> bool {
        self.files > 0 && self.ffree < INODES_FULL_BELOW
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `22-statvfs-inodes-exhausted-and-tmpfs-tmp/statvfs.json`, `/`.
    const ROOT: FsStat = FsStat {
        frsize: 4096,
        blocks: 6_553_344,
        bfree: 2_359_040,
        bavail: 1_966_080,
        files: 1_638_400,
        ffree: 8,
    };
    /// The same file, `/tmp` (tmpfs).
    const TMP: FsStat = FsStat {
        frsize: 4096,
        blocks: 485_674,
        bfree: 31_002,
        bavail: 31_002,
        files: 485_674,
        ffree: 485_601,
    };

    /// MiB with one decimal, half away from zero, as the CASE.md files state them.
    fn mib10(bytes: u64) -> u64 {
        (bytes * 10 + (1 << 19)) / (1 << 20)
    }

    #[test]
    fn fixture_22_statvfs_inodes_exhausted_and_tmpfs_tmp() {
        assert_eq!(mib10(ROOT.total_bytes()), 255_990);
        assert_eq!(mib10(ROOT.avail_bytes()), 76_800);
        assert_eq!(mib10(ROOT.bfree * ROOT.frsize), 92_150);
        // used_pct 68.1 unrounded; df rounds up.
        assert_eq!(ROOT.used_pct(), 69);
        assert!(ROOT.inodes_exhausted());
        assert_eq!(ROOT.avail_gib(), 7);
        assert_eq!(ROOT.avail_mib(), 7680);

        assert_eq!(mib10(TMP.total_bytes()), 18_972);
        assert_eq!(mib10(TMP.avail_bytes()), 1_211);
        assert_eq!(mib10((TMP.blocks - TMP.bfree) * TMP.frsize), 17_761);
        assert!(!TMP.inodes_exhausted());
    }

    #[test]
    fn no_inode_table_is_not_exhausted_and_empty_fs_is_zero_pct() {
        let vfat = FsStat {
            frsize: 512,
            blocks: 10,
            bfree: 10,
            bavail: 10,
            files: 0,
            ffree: 0,
        };
        assert!(!vfat.inodes_exhausted());
        assert_eq!(vfat.used_pct(), 0);
        assert_eq!(FsStat::default().used_pct(), 0);
        let huge = FsStat {
            frsize: u64::MAX,
            blocks: u64::MAX,
            bfree: 0,
            bavail: 0,
            files: 1,
            ffree: 1,
        };
        assert_eq!(huge.used_pct(), 100);
        assert_eq!(huge.avail_mib(), 0);
    }
}
