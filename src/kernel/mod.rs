//! Kernel files, one module each, and reading them relative to a root.
//!
//! The lowest layer: pure parsers over `&[u8]` and the reads that feed them.
//! Nothing here knows of a build, a row or a report.

pub mod kept; // descriptors kept open between ticks, re-read with pread(2)
pub mod order; // sorting in place with little code: heapsort, and insertion sort for ties
pub mod parse; // byte-level number and field parsing shared by every parser
pub mod root; // openat(2) under `--root`, reads into the caller's buffer
pub mod sysfs; // numbered sysfs entries (hwmon<N>, policy<N>) and their paths on the stack

pub mod arch; // /proc/sys/kernel/arch and uname(2): the kernel's `unsigned long` width
pub mod blockdev; // the build disk: mount → /sys/dev/block/MAJ:MIN → whole disk, its stat file
pub mod cgroup; // /proc/self/cgroup and the memory and CPU controller files
pub mod container; // whether headroom runs in a container: cgroup limits, /.dockerenv, /run/.containerenv
pub mod cpufreq; // /sys/devices/system/cpu/cpufreq/policy*/scaling_cur_freq: share of the maximum
pub mod diskstats; // /proc/diskstats and /sys/dev/block/MAJ:MIN/stat: block-device I/O counters
pub mod fsstat; // statvfs(3): free space as `df -P` counts it
pub mod hwmon; // /sys/class/hwmon/hwmon*/name: listed once for the sensor and power discoveries
pub mod kmsg; // /dev/kmsg: the OOM killer's record of each victim it names
pub mod loadavg; // /proc/loadavg
pub mod maps; // /proc/self/maps: headroom's own mappings
pub mod meminfo; // /proc/meminfo
pub mod mountinfo; // /proc/PID/mountinfo
pub mod oom_score_adj; // /proc/self/oom_score_adj
pub mod pid; // /proc/PID/stat, status, comm
pub mod proc_cgroups; // /proc/cgroups: which controllers are enabled
pub mod psi; // /proc/pressure/*
pub mod stat; // /proc/stat
pub mod swaps; // /proc/swaps
pub mod thermal; // /sys/class/thermal and hwmon: the CPU temperature, by type or name
pub mod throttled; // the Raspberry Pi firmware's get_throttled word and rpi_volt's alarm
pub mod uptime; // /proc/uptime: a board capture's own clock
pub mod vmstat; // /proc/vmstat
pub mod zram; // /sys/block/zram*/ mm_stat, disksize, comp_algorithm
