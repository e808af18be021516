//! The sources a tick reads, each of which may warn once (the sampler's
//! [`super::Warn`] hears them by this name).

use crate::kernel::{loadavg, meminfo, psi, stat, vmstat, zram};

/// A source that may warn once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Source {
    /// /proc/meminfo
    MemInfo = 0,
    /// /proc/stat
    Stat,
    /// /proc/loadavg
    LoadAvg,
    /// /proc/vmstat (oom_kill)
    VmStat,
    /// /proc/pressure/memory
    Psi,
    /// /sys/block zram devices
    Zram,
    /// the memory cgroup files
    Cgroup,
    /// statvfs of the disk path
    Disk,
    /// statvfs of /tmp
    Tmp,
    /// the process list under /proc
    Procs,
    /// the build log
    Log,
    /// the build disk's block-device counters
    DiskIo,
    /// the Raspberry Pi firmware's throttle word (or rpi_volt's alarm)
    Power,
}

impl Source {
    /// The file or directory behind the source, for messages.
    pub fn path(self) -> &'static str {
        match self {
            Source::MemInfo => meminfo::PATH,
            Source::Stat => stat::PATH,
            Source::LoadAvg => loadavg::PATH,
            Source::VmStat => vmstat::PATH,
            Source::Psi => psi::PATH_MEMORY,
            Source::Zram => zram::SYS_BLOCK,
            Source::Cgroup => "sys/fs/cgroup (memory)",
            Source::Disk => "--disk-path",
            Source::Tmp => "/tmp",
            Source::Procs => "proc/<pid>",
            Source::Log => "build log",
            Source::DiskIo => "build disk I/O",
            Source::Power => "the Pi's throttle word (get_throttled or rpi_volt)",
        }
    }
}
