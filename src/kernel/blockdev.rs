//! The build disk: the block device that holds a directory, and the `stat`
//! file to read its I/O from each tick.
//!
//! The chain (`Documentation/ABI/stable/sysfs-block`): the directory's
//! mount in `/proc/self/mountinfo` gives the device number `major:minor`
//! (field 3; on the live root `stat(2)`'s `st_dev` of the directory, which
//! also sees through symbolic links in the path); `/sys/dev/block/MAJ:MIN`
//! is a symbolic link to the device's directory, whose last component is
//! its kernel name; a directory with a `partition` file is a partition,
//! and its disk is the parent directory. The disk's own `stat` is read,
//! never the disk plus its partitions (that counts the I/O twice). Names
//! are never cut (`mmcblk0p2` is no `mmcblk0p` plus 2) and minors are
//! never masked (`minor & ~7`: mmc cards have 8 or 32 minors each).
//!
//! Major 0 is an anonymous device (btrfs, overlay, tmpfs, NFS): no
//! `/sys/dev/block/0:N` exists. Then the mount's type says there is no disk
//! (RAM, overlay, network) or its source names one: `/dev/mapper/NAME`,
//! the device-mapper device whose `dm/name` is NAME, or `/dev/X`, found as
//! `/sys/class/block/X`. `/dev/root` names no device (there is no
//! `/sys/class/block/root`): the Pi's root is found by its number. A
//! device-mapper device has its own `stat` (its I/O once, whatever is under
//! it); its `slaves/` are named. Nothing is ever guessed ("the first disk
//! in diskstats").
//!
//! Under `--root`, a copied tree often holds each symbolic link as a
//! regular file whose text is the link's target (git and shared copies
//! keep no links): when readlinkat(2) says EINVAL (not a link) on a root
//! that is not the live one, the file's text is taken as the target.
//! Resolution is done once, at start; [`KeptStat`] then reads the one file.
//!
//! # References
//! `Documentation/ABI/stable/sysfs-block`, `Documentation/admin-guide/iostats.rst`,
//! proc(5) (`/proc/pid/mountinfo`), readlinkat(2), stat(2),
//! `Documentation/admin-guide/device-mapper/` (`dm/name`).

use core::mem::MaybeUninit;

use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::{Access, AtFlags};
use rustix::io::Errno;

use crate::kernel::diskstats::{DiskCounters, parse_stat};
use crate::kernel::kept::{Kept, Shape};
use crate::kernel::mountinfo::{self, Mount, mount_of, unescape};
use crate::kernel::parse::{ParseError, parse_u64, trim};
use crate::kernel::root::{ReadError, Root, for_each_entry, open_dir_at, read_at};
use crate::kernel::swaps::is_zram_name;

/// Longest kernel block-device name kept, in bytes (`DISK_NAME_LEN`, 32,
/// in `include/linux/blkdev.h`).
pub const NAME_LEN: usize = 32;

/// Longest path under the root kept, in bytes: the paths handed to
/// openat(2) stay on the stack below 256 bytes (see [`crate::kernel::root`]).
/// A sysfs device directory is 40–120 bytes (`sys/devices/pci0000:00/…/
/// block/nvme0n1`).
pub const PATH_LEN: usize = 255;

/// Longest device-mapper name, in bytes (`DM_NAME_LEN`, 128, in
/// `include/uapi/linux/dm-ioctl.h`).
pub const DM_NAME_LEN: usize = 128;

/// Most slaves of a device-mapper device named; more are counted.
pub const MAX_SLAVES: usize = 4;

/// A kernel block-device name (`mmcblk0`, `dm-0`, `nvme0n1p2`).
pub type Name = heapless::String<NAME_LEN>;

/// A path relative to the root (`sys/block/mmcblk0/stat`).
pub type SysPath = heapless::String<PATH_LEN>;

/// What the build disk is.
#[allow(clippy::large_enum_variant)] // no heap to box into: found once at start, on the stack
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiskKind {
    /// The mount's device is the whole disk.
    Whole,
    /// The mount is on this partition (`mmcblk0p2`) of the disk.
    PartitionOf(Name),
    /// A device-mapper device (LVM, LUKS): its own I/O counters.
    DeviceMapper {
        /// Its `dm/name` (`vg0-root`, the `/dev/mapper/` name); empty when
        /// unreadable.
        dm_name: heapless::String<DM_NAME_LEN>,
        /// The first [`MAX_SLAVES`] devices under it (`sda3`, `nvme0n1p3`,
        /// `dm-0`), as listed (unsorted).
        slaves: heapless::Vec<Name, MAX_SLAVES>,
        /// How many slaves there are in all.
        slave_count: u32,
    },
}

/// What kind of device the build disk is, as sysfs names it: the advice
/// for a busy or stalled disk follows it (card advice only for a card).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// An SD card or eMMC (`mmcblk*`, under an mmc host).
    Card,
    /// A disk behind USB: its device directory is under a `usbN` bus
    /// (a USB stick, SSD, hard disk or card reader, named `sd*`).
    Usb,
    /// NVMe (`nvme*`).
    Nvme,
    /// SATA or SCSI (`sd*`, `hd*` not on USB).
    Sata,
    /// A virtual machine's disk: virtio (`vd*`, or any disk under a
    /// `virtioN` device: virtio-scsi) or Xen (`xvd*`).
    Virtual,
    /// A network file system (NFS, CIFS/SMB, 9p, sshfs…): by
    /// mountinfo's type ([`no_disk_for_type`]).
    Network,
    /// None of those (a loop device, a dm device with no slave seen…).
    Other,
}

impl Device {
    /// Every kind, in declaration order.
    pub const ALL: [Device; 7] = [
        Device::Card,
        Device::Usb,
        Device::Nvme,
        Device::Sata,
        Device::Virtual,
        Device::Network,
        Device::Other,
    ];

    /// Its name in words, as the summary writes it (and `summarize`
    /// reads it back: [`Device::from_words`]).
    pub fn words(self) -> &'static str {
        match self {
            Device::Card => "SD/eMMC card",
            Device::Usb => "USB disk",
            Device::Nvme => "NVMe disk",
            Device::Sata => "SATA/SCSI disk",
            Device::Virtual => "virtual disk (virtio/Xen)",
            Device::Network => "network file system",
            Device::Other => "other block device",
        }
    }

    /// One word for JSON: `card`, `usb`, `nvme`, `sata`, `virtual`,
    /// `network`, `other`.
    pub fn key(self) -> &'static str {
        match self {
            Device::Card => "card",
            Device::Usb => "usb",
            Device::Nvme => "nvme",
            Device::Sata => "sata",
            Device::Virtual => "virtual",
            Device::Network => "network",
            Device::Other => "other",
        }
    }

    /// The kind whose [`Device::words`] are `w`.
    pub fn from_words(w: &str) -> Option<Device> {
        Device::ALL.into_iter().find(|d| d.words() == w)
    }
}

/// The kind of the disk named `name` (`mmcblk0`, `sda`, `vda`), whose
/// device directory under the root is `dir` (`sys/devices/…/block/sda`):
/// a `usbN` component in `dir` is USB whatever the name, a `virtioN`
/// component is a virtual disk; else the kernel name's prefix. Pure.
///
/// ```
/// use headroom::kernel::blockdev::{Device, device_of};
/// let usb = "sys/devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/usb2/2-2/2-2:1.0/host0/target0:0:0/0:0:0:0/block/sda";
/// assert_eq!(device_of("sda", usb), Device::Usb);
/// assert_eq!(device_of("sda", "sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda"), Device::Sata);
/// assert_eq!(device_of("vda", "sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda"), Device::Virtual);
/// ```
pub fn device_of(name: &str, dir: &str) -> Device {
    let numbered = |part: &str, prefix: &str| {
        part.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if dir.split('/').any(|p| numbered(p, "usb")) {
        return Device::Usb;
    }
    if dir.split('/').any(|p| numbered(p, "virtio")) {
        return Device::Virtual;
    }
    let starts = |p: &str| name.starts_with(p);
    if starts("mmcblk") {
        Device::Card
    } else if starts("nvme") {
        Device::Nvme
    } else if starts("vd") || starts("xvd") {
        Device::Virtual
    } else if starts("sd") || starts("hd") {
        Device::Sata
    } else {
        Device::Other
    }
}

/// The block device under the build directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildDisk {
    /// Its kernel name: a whole disk's or a dm device's (`mmcblk0`,
    /// `dm-0`), never a partition's; the name of its `/proc/diskstats`
    /// line.
    pub name: Name,
    /// Its device directory under the root (`sys/devices/…/mmcblk0`).
    pub dir: SysPath,
    /// The `stat` file to read each tick, relative to the root:
    /// `sys/block/NAME/stat` when that opens, else `DIR/stat`.
    pub stat_path: SysPath,
    /// Whole disk, a partition's disk, or device-mapper.
    pub kind: DiskKind,
    /// The kind of device ([`device_of`]; a dm device's is its first
    /// slave's).
    pub device: Device,
}

/// Why the build directory has no disk to report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoDisk {
    /// The mount table could not be read.
    MountTable(ReadError),
    /// No mount holds the path (not absolute, or an empty table).
    NoMount,
    /// Field 3 of the mount's line is no `major:minor`.
    BadDevice,
    /// tmpfs or ramfs: the files are in RAM.
    Ram,
    /// A zram device (or a `ram` disk): RAM-backed, compressed.
    Zram,
    /// overlay (a container's root): no single device.
    Overlay,
    /// NFS, CIFS/SMB, 9p, sshfs, Ceph…: the disk is on another machine.
    Network,
    /// An anonymous device (`0:N`) whose mount source names no device of
    /// `/sys` (btrfs on a device not found, FUSE, …).
    Unknown {
        /// Major number (0).
        major: u32,
        /// Minor number.
        minor: u32,
    },
    /// A sysfs path or name is longer than its fixed buffer ([`PATH_LEN`],
    /// [`NAME_LEN`]).
    TooLong,
    /// `sys/dev/block/MAJ:MIN` is absent or unreadable.
    NotInSysfs {
        /// Major number.
        major: u32,
        /// Minor number.
        minor: u32,
    },
}

impl NoDisk {
    /// A short reason for a one-line message.
    pub fn describe(self) -> &'static str {
        match self {
            NoDisk::MountTable(_) => "mount table unreadable",
            NoDisk::NoMount => "no mount holds the path",
            NoDisk::BadDevice => "mount table has no device number",
            NoDisk::Ram => "in RAM (tmpfs): no disk",
            NoDisk::Zram => "on zram: RAM-backed, no disk",
            NoDisk::Overlay => "on overlay: no single disk",
            NoDisk::Network => {
                "on a network file system: no local disk (a local disk builds faster)"
            }
            NoDisk::Unknown { .. } => "anonymous device: disk unknown",
            NoDisk::TooLong => "sysfs path longer than its buffer",
            NoDisk::NotInSysfs { .. } => "device not in /sys/dev/block",
        }
    }
}

/// Parses mountinfo's `major:minor` (`179:2`).
pub fn parse_dev(b: &[u8]) -> Option<(u32, u32)> {
    let colon = b.iter().position(|&c| c == b':')?;
    let num = |x: &[u8]| parse_u64(x).and_then(|v| u32::try_from(v).ok());
    Some((num(&b[..colon])?, num(&b[colon + 1..])?))
}

/// What a mount's file system type says when its device is anonymous:
/// `Some` reason for no disk, `None` to look at its source.
pub fn no_disk_for_type(fs_type: &[u8]) -> Option<NoDisk> {
    const NETWORK: &[&[u8]] = &[
        b"nfs",
        b"nfs4",
        b"cifs",
        b"smb3",
        b"smbfs",
        b"9p",
        b"ceph",
        b"afs",
        b"glusterfs",
        b"fuse.sshfs",
        b"fuse.glusterfs",
        b"virtiofs",
    ];
    match fs_type {
        b"tmpfs" | b"ramfs" => Some(NoDisk::Ram),
        b"overlay" | b"aufs" => Some(NoDisk::Overlay),
        t if NETWORK.contains(&t) => Some(NoDisk::Network),
        _ => None,
    }
}

/// A mount source that may name a block device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source<'a> {
    /// `/dev/mapper/NAME`: the dm device whose `dm/name` is NAME.
    Mapper(&'a [u8]),
    /// `/dev/X`: the device `X` of `/sys/class/block` (which has no
    /// `root`: `/dev/root` names nothing).
    Dev(&'a [u8]),
}

/// The device a mount source (unescaped) names, if it has that shape.
pub fn parse_source(source: &[u8]) -> Option<Source<'_>> {
    let plain = |n: &[u8]| !n.is_empty() && !n.contains(&b'/') && n != b"." && n != b"..";
    if let Some(name) = source.strip_prefix(b"/dev/mapper/") {
        return plain(name).then_some(Source::Mapper(name));
    }
    let name = source.strip_prefix(b"/dev/")?;
    plain(name).then_some(Source::Dev(name))
}

/// The path a symbolic link at `link` (relative to the root) points to,
/// relative to the root and without `.` or `..`, into `out`: a relative
/// `target` is taken from the link's directory, an absolute one from the
/// root. `None` when it climbs above the root, is not UTF-8 or does not
/// fit.
///
/// ```
/// use headroom::kernel::blockdev::{SysPath, resolve_link};
/// let mut out = SysPath::new();
/// assert_eq!(
///     resolve_link("sys/dev/block/179:2", b"../../devices/mmc0/block/mmcblk0/mmcblk0p2", &mut out),
///     Some("sys/devices/mmc0/block/mmcblk0/mmcblk0p2")
/// );
/// assert_eq!(resolve_link("sys/block/x", b"../../../..", &mut out), None);
/// ```
pub fn resolve_link<'o>(link: &str, target: &[u8], out: &'o mut SysPath) -> Option<&'o str> {
    out.clear();
    let target = trim(target);
    if !target.starts_with(b"/") {
        out.push_str(parent(link)).ok()?;
    }
    for part in target.split(|&c| c == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                if out.is_empty() {
                    return None;
                }
                let keep = parent(out).len();
                out.truncate(keep);
            }
            _ => {
                let part = core::str::from_utf8(part).ok()?;
                if !out.is_empty() {
                    out.push('/').ok()?;
                }
                out.push_str(part).ok()?;
            }
        }
    }
    Some(out.as_str())
}

/// The last component of `path` (`mmcblk0p2` of `…/mmcblk0/mmcblk0p2`).
pub fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `path` without its last component (`""` for a single one).
pub fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// The disk's directory for a device directory `dev_dir`: its parent when
/// it is a partition (`partition` says it has a `partition` file), else
/// itself. Never derived from the name.
pub fn disk_dir(dev_dir: &str, partition: bool) -> &str {
    if partition { parent(dev_dir) } else { dev_dir }
}

/// Finds the build disk of the directory `dir` under `root` (absolute; on
/// the live root a relative one is found by its device),
/// reading the mount table into `mountinfo_buf` ([`mountinfo::BUF_LEN`]
/// bytes). The table is searched by path, which does not follow symbolic
/// links in `dir`; on the live root `stat(2)` of `dir` says the real
/// device, and the mount with that number is taken when there is one
/// (`/home/me/build` a link to a tmpfs `/tmp/build`), its number alone
/// when there is none (a btrfs subvolume's own anonymous number).
///
/// # Errors
/// A [`NoDisk`] saying why there is no disk to read.
pub fn resolve(root: &Root, dir: &[u8], mountinfo_buf: &mut [u8]) -> Result<BuildDisk, NoDisk> {
    resolve_in(
        root,
        dir,
        read_at(root.fd(), mountinfo::PATH, mountinfo_buf),
    )
}

/// [`resolve`] with the mount table already read (or why it could not
/// be), for a caller that reads it once for several uses (`status`).
///
/// # Errors
/// As [`resolve`].
pub fn resolve_in(
    root: &Root,
    dir: &[u8],
    mountinfo_text: Result<&[u8], ReadError>,
) -> Result<BuildDisk, NoDisk> {
    let live = root.is_live();
    let table = mountinfo_text.map_err(NoDisk::MountTable)?;
    let real = match live.then(|| rustix::fs::stat(dir)) {
        Some(Ok(st)) => Some((rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev))),
        _ => None,
    };
    // On the live root a relative `dir` is found by its device alone.
    let (mount, dev) = match (real, real.and_then(|r| mount_by_dev(table, r))) {
        (Some(r), Some(m)) => (m, r),
        (real, None) => {
            let m = mount_of(table, dir).ok_or(NoDisk::NoMount)?;
            match real {
                Some(r) if r.0 != 0 => (m, r),
                _ => (m, parse_dev(m.dev).ok_or(NoDisk::BadDevice)?),
            }
        }
        (None, Some(_)) => return Err(NoDisk::NoMount),
    };
    let sys = Sys {
        fd: root.fd(),
        live,
    };
    let mut dev_dir = SysPath::new();
    sys.device_dir(dev, &mount, &mut dev_dir)?;
    sys.disk(&dev_dir)
}

/// The last mount of the table `b` whose field 3 is `dev`.
pub fn mount_by_dev(b: &[u8], dev: (u32, u32)) -> Option<Mount<'_>> {
    mountinfo::entries(b)
        .flatten()
        .filter(|m| parse_dev(m.dev) == Some(dev))
        .last()
}

/// The root's `sys/` as [`resolve`] reads it.
struct Sys<'f> {
    fd: BorrowedFd<'f>,
    live: bool,
}

impl Sys<'_> {
    /// The device directory of `dev` (or, for an anonymous device, of what
    /// the mount's type and source say) into `out`.
    fn device_dir(
        &self,
        dev: (u32, u32),
        mount: &Mount<'_>,
        out: &mut SysPath,
    ) -> Result<(), NoDisk> {
        let (major, minor) = dev;
        if major != 0 {
            let missing = NoDisk::NotInSysfs { major, minor };
            let mut link = SysPath::new();
            ufmt::uwrite!(link, "sys/dev/block/{}:{}", major, minor).map_err(|_| missing)?;
            return self.follow(&link, out).ok_or(missing);
        }
        if let Some(why) = no_disk_for_type(mount.fs_type) {
            return Err(why);
        }
        let unknown = NoDisk::Unknown { major, minor };
        let mut raw = [0u8; mountinfo::PATH_MAX];
        let source = unescape(mount.source, &mut raw).and_then(parse_source);
        match source.ok_or(unknown)? {
            Source::Dev(name) => {
                let mut p = SysPath::new();
                push_all(&mut p, &[b"sys/class/block/", name]).ok_or(unknown)?;
                self.follow(&p, out).ok_or(unknown)
            }
            Source::Mapper(name) => self.mapper(name, out).ok_or(unknown),
        }
    }

    /// The directory of the dm device whose `dm/name` is `name`, by listing
    /// `sys/block` for `dm-*`.
    fn mapper(&self, name: &[u8], out: &mut SysPath) -> Option<()> {
        let dir = open_dir_at(self.fd, "sys/block").ok()?;
        let mut scratch = [MaybeUninit::<u8>::uninit(); 2048];
        let mut found = false;
        let _ = for_each_entry(dir.as_fd(), &mut scratch, |entry, _| {
            let mut link = SysPath::new();
            if !entry.starts_with(b"dm-") || push_all(&mut link, &[b"sys/block/", entry]).is_none()
            {
                return true;
            }
            let mut buf = [0u8; DM_NAME_LEN + 2];
            found = self.follow(&link, out).is_some() && self.dm_name(out, &mut buf) == Some(name);
            !found
        });
        found.then_some(())
    }

    /// The `dm/name` of the device directory `dev_dir`, trimmed.
    fn dm_name<'b>(&self, dev_dir: &str, buf: &'b mut [u8]) -> Option<&'b [u8]> {
        let mut p = SysPath::new();
        push_all(&mut p, &[dev_dir.as_bytes(), b"/dm/name"])?;
        read_at(self.fd, &p, buf).ok().map(trim)
    }

    /// Resolves the symbolic link `link` into `out` (see [`resolve_link`]).
    /// Off the live root, where a copy keeps no links, a regular file's
    /// text stands for its target and a real directory for itself.
    fn follow(&self, link: &str, out: &mut SysPath) -> Option<()> {
        let mut buf = [0u8; PATH_LEN + 1];
        let n = match rustix::fs::readlinkat_raw(self.fd, link, &mut buf[..]) {
            Ok(n) => n,
            Err(Errno::INVAL) if !self.live => match read_at(self.fd, link, &mut buf) {
                Ok(text) => text.len(),
                Err(ReadError::Read(Errno::ISDIR)) => {
                    out.clear();
                    return out.push_str(link).ok();
                }
                Err(_) => return None,
            },
            Err(_) => return None,
        };
        if n > PATH_LEN {
            return None;
        }
        resolve_link(link, &buf[..n], out).map(|_| ())
    }

    /// True when `path` (relative to the root) exists.
    fn exists(&self, path: &str) -> bool {
        rustix::fs::accessat(self.fd, path, Access::EXISTS, AtFlags::empty()).is_ok()
    }

    /// The build disk of the device directory `dev_dir`.
    fn disk(&self, dev_dir: &str) -> Result<BuildDisk, NoDisk> {
        let mut p = SysPath::new();
        let too_long = NoDisk::TooLong;
        push_all(&mut p, &[dev_dir.as_bytes(), b"/partition"]).ok_or(too_long)?;
        let partition = self.exists(&p);
        let dir = disk_dir(dev_dir, partition);
        let name = basename(dir);
        if is_zram_name(name.as_bytes()) || is_ram_name(name.as_bytes()) {
            return Err(NoDisk::Zram);
        }
        let kind = if partition {
            DiskKind::PartitionOf(Name::try_from(basename(dev_dir)).map_err(|_| too_long)?)
        } else if name.starts_with("dm-") {
            self.device_mapper(dir)
        } else {
            DiskKind::Whole
        };
        let device = match &kind {
            DiskKind::DeviceMapper { slaves, .. } => self.slave_device(slaves.first()),
            _ => device_of(name, dir),
        };
        let mut stat_path = SysPath::new();
        push_all(&mut stat_path, &[b"sys/block/", name.as_bytes(), b"/stat"]).ok_or(too_long)?;
        if !self.exists(&stat_path) {
            stat_path.clear();
            push_all(&mut stat_path, &[dir.as_bytes(), b"/stat"]).ok_or(too_long)?;
        }
        Ok(BuildDisk {
            name: Name::try_from(name).map_err(|_| too_long)?,
            dir: SysPath::try_from(dir).map_err(|_| too_long)?,
            stat_path,
            kind,
            device,
        })
    }

    /// The kind of a dm device's slave `slave` (`sda3`, `dm-0`), by its
    /// `sys/class/block` link; [`Device::Other`] when there is none or it
    /// is itself a dm device.
    fn slave_device(&self, slave: Option<&Name>) -> Device {
        let Some(slave) = slave else {
            return Device::Other;
        };
        let mut link = SysPath::new();
        let mut dir = SysPath::new();
        if slave.starts_with("dm-")
            || push_all(&mut link, &[b"sys/class/block/", slave.as_bytes()]).is_none()
            || self.follow(&link, &mut dir).is_none()
        {
            return Device::Other;
        }
        device_of(slave, &dir)
    }

    /// The dm name and slaves of the dm device directory `dir`.
    fn device_mapper(&self, dir: &str) -> DiskKind {
        let mut buf = [0u8; DM_NAME_LEN + 2];
        let dm_name = self
            .dm_name(dir, &mut buf)
            .and_then(|n| core::str::from_utf8(n).ok())
            .and_then(|n| heapless::String::try_from(n).ok())
            .unwrap_or_default();
        let mut slaves = heapless::Vec::new();
        let mut slave_count = 0u32;
        let mut p = SysPath::new();
        if push_all(&mut p, &[dir.as_bytes(), b"/slaves"]).is_some()
            && let Ok(d) = open_dir_at(self.fd, &p)
        {
            let mut scratch = [MaybeUninit::<u8>::uninit(); 1024];
            let _ = for_each_entry(d.as_fd(), &mut scratch, |entry, _| {
                slave_count = slave_count.saturating_add(1);
                if let Some(n) = core::str::from_utf8(entry)
                    .ok()
                    .and_then(|n| Name::try_from(n).ok())
                {
                    let _ = slaves.push(n);
                }
                true
            });
        }
        DiskKind::DeviceMapper {
            dm_name,
            slaves,
            slave_count,
        }
    }
}

/// True for `ram<digits>` (the brd RAM disk).
fn is_ram_name(name: &[u8]) -> bool {
    name.strip_prefix(b"ram")
        .is_some_and(|n| !n.is_empty() && n.iter().all(u8::is_ascii_digit))
}

/// Appends each of `parts` to `out`; `None` when one does not fit or is not
/// UTF-8.
fn push_all(out: &mut SysPath, parts: &[&[u8]]) -> Option<()> {
    for p in parts {
        out.push_str(core::str::from_utf8(p).ok()?).ok()?;
    }
    Some(())
}

/// A disk's `stat` file, kept open between ticks on the live root: one
/// pread(2) per tick, one descriptor.
#[derive(Debug)]
pub struct KeptStat {
    stat: Kept,
    path: SysPath,
}

/// Why [`KeptStat::read`] gave no counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatError {
    /// The file could not be opened or read (the device was removed:
    /// ENOENT, ENODEV).
    Read(ReadError),
    /// Its text is no `stat` line.
    Parse(ParseError),
}

impl KeptStat {
    /// The `stat` of `disk`, not yet opened; kept open from its first read
    /// when `keep` (`Root::is_live`).
    pub fn new(disk: &BuildDisk, keep: bool) -> KeptStat {
        KeptStat {
            stat: Kept::new(keep),
            path: disk.stat_path.clone(),
        }
    }

    /// The path read, relative to the root.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// True while its descriptor is held (at most one).
    pub fn is_open(&self) -> bool {
        self.stat.is_open()
    }

    /// Reads and parses the counters, with `buf` of
    /// [`crate::kernel::diskstats::STAT_BUF_LEN`] bytes: one pread(2) of
    /// the kept descriptor, or an open by name when none is kept (a failed
    /// read opens it once more by name: a re-created device is found).
    ///
    /// # Errors
    /// [`StatError::Read`] or [`StatError::Parse`].
    pub fn read(
        &mut self,
        root: BorrowedFd<'_>,
        buf: &mut [u8],
    ) -> Result<DiskCounters, StatError> {
        let raw = self
            .stat
            .read(root, &self.path, buf, Shape::Whole)
            .map_err(StatError::Read)?;
        parse_stat(raw).map_err(StatError::Parse)
    }
}

#[cfg(test)]
mod tests {
    //! Tests of [`super`]: case 35 (both trees), trees made here with real
    //! symbolic links and with links copied as text, the reasons for no disk,
    //! and the live root.

    extern crate std;
    use super::*;
    use crate::kernel::diskstats::{self, STAT_BUF_LEN};
    use std::os::unix::fs::symlink;
    use std::path::{Path, PathBuf};
    use std::vec;
    use std::vec::Vec;
    use std::{format, fs};

    const CASE_35: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/35-mount-to-diskstats-pi-root"
    );

    const PI_DISK_DIR: &str =
        "sys/devices/platform/soc/3f202000.mmc/mmc_host/mmc0/mmc0:59b4/block/mmcblk0";

    fn find_disk(root: &str, dir: &str) -> Result<BuildDisk, NoDisk> {
        let root = Root::open(root).unwrap();
        let mut buf = vec![0u8; mountinfo::BUF_LEN];
        resolve(&root, dir.as_bytes(), &mut buf)
    }

    /// A fresh directory for a tree made by a test.
    fn tree(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("headroom-blockdev-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// Writes `text` at `rel` under `root`, making its directories.
    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    /// A symbolic link at `rel` under `root` to `target`.
    fn link(root: &Path, rel: &str, target: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        symlink(target, p).unwrap();
    }

    #[test]
    fn fixture_35_mount_to_diskstats_pi_root() {
        let root_disk = find_disk(CASE_35, "/").unwrap();
        assert_eq!(root_disk.name, "mmcblk0");
        assert_eq!(
            root_disk.kind,
            DiskKind::PartitionOf(Name::try_from("mmcblk0p2").unwrap())
        );
        assert_eq!(root_disk.dir, PI_DISK_DIR);
        // sys/block/mmcblk0 is a copied link (a file): its stat is read from
        // the device directory.
        assert_eq!(root_disk.stat_path, format!("{PI_DISK_DIR}/stat").as_str());
        let boot = find_disk(CASE_35, "/boot/config.txt").unwrap();
        assert_eq!(boot.name, "mmcblk0");
        assert_eq!(
            boot.kind,
            DiskKind::PartitionOf(Name::try_from("mmcblk0p1").unwrap())
        );
        assert_eq!(find_disk(CASE_35, "/home/pi/src").unwrap(), root_disk);
        // Each tick: the disk's own stat, 17 values.
        let root = Root::open(CASE_35).unwrap();
        let mut k = KeptStat::new(&root_disk, root.is_live());
        let mut buf = [0u8; STAT_BUF_LEN];
        let c = k.read(root.fd(), &mut buf).unwrap();
        assert_eq!(
            (c.sectors_read, c.read_bytes(), c.io_ticks_ms),
            (8619, 4_412_928, 160)
        );
        assert!(!k.is_open(), "a --root tree is read by name");
        // /dev/root, the mount source of /, names no device.
        assert_eq!(parse_source(b"/dev/root"), Some(Source::Dev(b"root")));
        assert!(!Path::new(CASE_35).join("sys/class/block/root").exists());
    }

    #[test]
    fn fixture_35_mount_to_diskstats_pi_root_btrfs_on_lvm() {
        let host = format!("{CASE_35}/hosts/btrfs-on-lvm");
        // No /sys in this tree: the mapper sources resolve to nothing, and
        // the answer is "unknown", never some other disk.
        assert_eq!(
            find_disk(&host, "/"),
            Err(NoDisk::Unknown {
                major: 0,
                minor: 33
            })
        );
        assert_eq!(
            find_disk(&host, "/home/lowne/src"),
            Err(NoDisk::Unknown {
                major: 0,
                minor: 66
            })
        );
        // The same mounts with the dm devices' sysfs: found by their dm/name.
        let d = tree("lvm");
        fs::copy(format!("{host}/proc/self/mountinfo"), {
            fs::create_dir_all(d.join("proc/self")).unwrap();
            d.join("proc/self/mountinfo")
        })
        .unwrap();
        // dm-0 with real links, dm-1 with links copied as text.
        link(&d, "sys/block/dm-0", "../devices/virtual/block/dm-0");
        put(&d, "sys/devices/virtual/block/dm-0/dm/name", "vgX-lvY\n");
        put(&d, "sys/devices/virtual/block/dm-0/stat", &" 1".repeat(17));
        link(
            &d,
            "sys/devices/virtual/block/dm-0/slaves/nvme0n1p3",
            "../../../../pci0000:00/nvme/nvme0n1/nvme0n1p3",
        );
        put(&d, "sys/block/dm-1", "../devices/virtual/block/dm-1");
        put(&d, "sys/devices/virtual/block/dm-1/dm/name", "home-lowne\n");
        put(&d, "sys/devices/virtual/block/dm-1/stat", &" 2".repeat(11));
        put(
            &d,
            "sys/devices/virtual/block/dm-1/slaves/sda2",
            "../../../../pci0000:00/sda/sda2",
        );
        put(
            &d,
            "sys/devices/virtual/block/dm-1/slaves/sdb1",
            "../../../../pci0000:00/sdb/sdb1",
        );
        let dir = d.to_str().unwrap();
        let lv = find_disk(dir, "/").unwrap();
        assert_eq!(
            (lv.name.as_str(), lv.stat_path.as_str()),
            ("dm-0", "sys/block/dm-0/stat")
        );
        let DiskKind::DeviceMapper {
            dm_name,
            slaves,
            slave_count,
        } = &lv.kind
        else {
            panic!("{lv:?}")
        };
        assert_eq!((dm_name.as_str(), slave_count), ("vgX-lvY", &1));
        assert_eq!(slaves.as_slice(), [Name::try_from("nvme0n1p3").unwrap()]);
        let home = find_disk(dir, "/home/lowne").unwrap();
        assert_eq!(home.name, "dm-1");
        assert_eq!(home.stat_path, "sys/devices/virtual/block/dm-1/stat");
        let DiskKind::DeviceMapper {
            dm_name,
            slaves,
            slave_count,
        } = &home.kind
        else {
            panic!("{home:?}")
        };
        let mut names: Vec<&str> = slaves.iter().map(|s| s.as_str()).collect();
        names.sort();
        assert_eq!(
            (dm_name.as_str(), *slave_count, names),
            ("home-lowne", 2, vec!["sda2", "sdb1"])
        );
        let root = Root::open(dir).unwrap();
        let mut buf = [0u8; STAT_BUF_LEN];
        let c = KeptStat::new(&home, false)
            .read(root.fd(), &mut buf)
            .unwrap();
        assert_eq!((c.reads, c.discard), (2, None));
        let _ = fs::remove_dir_all(&d);
    }

    /// A Pi-like tree with real symbolic links, the partition of a whole disk
    /// whose name ends in a digit, and mmc boot partitions beside it.
    #[test]
    fn real_links_partition_parent_and_mmc_boot_partitions() {
        let d = tree("mmc");
        put(
            &d,
            "proc/self/mountinfo",
            "22 1 179:34 / / rw - ext4 /dev/root rw\n23 22 179:32 / /mnt/boot0 ro - ext4 /dev/mmcblk0boot0 ro\n",
        );
        let disk = "devices/mmc/block/mmcblk0";
        put(&d, &format!("sys/{disk}/stat"), &" 3".repeat(15));
        put(&d, &format!("sys/{disk}/mmcblk0p2/partition"), "2\n");
        put(
            &d,
            "sys/devices/mmc/block/mmcblk0boot0/stat",
            &" 4".repeat(11),
        );
        link(
            &d,
            "sys/dev/block/179:34",
            &format!("../../{disk}/mmcblk0p2"),
        );
        link(
            &d,
            "sys/dev/block/179:32",
            "../../devices/mmc/block/mmcblk0boot0",
        );
        link(&d, "sys/block/mmcblk0", &format!("../{disk}"));
        let dir = d.to_str().unwrap();
        let got = find_disk(dir, "/").unwrap();
        // Not `minor & ~7` (179:32, the boot partition), not "mmcblk0p".
        assert_eq!(
            (got.name.as_str(), got.stat_path.as_str()),
            ("mmcblk0", "sys/block/mmcblk0/stat")
        );
        assert_eq!(
            got.kind,
            DiskKind::PartitionOf(Name::try_from("mmcblk0p2").unwrap())
        );
        // A boot partition is a disk of its own (no partition file).
        let boot = find_disk(dir, "/mnt/boot0").unwrap();
        assert_eq!(
            (boot.name.as_str(), &boot.kind),
            ("mmcblk0boot0", &DiskKind::Whole)
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn no_disk_says_why() {
        let d = tree("none");
        put(
            &d,
            "proc/self/mountinfo",
            "1 0 0:40 / / rw - overlay overlay rw,lowerdir=/a\n\
         2 1 0:41 / /tmp rw - tmpfs tmpfs rw\n\
         3 1 0:42 / /mnt/nfs rw - nfs4 srv:/export rw\n\
         4 1 253:1 / /var/tmp rw - ext4 /dev/zram1 rw\n\
         5 1 0:43 / /b rw - btrfs /dev/root rw\n\
         6 1 0:44 / /c rw - btrfs /dev/sdz9 rw\n\
         7 1 8:5 / /d rw - ext4 /dev/sda5 rw\n\
         8 1 x / /e rw - ext4 /dev/sda6 rw\n\
         9 1 0:45 / /f rw - fuse.rclone remote: rw\n\
         10 1 8:7 / /g rw - ext4 /dev/sdg rw\n",
        );
        link(
            &d,
            "sys/dev/block/253:1",
            "../../devices/virtual/block/zram1",
        );
        fs::create_dir_all(d.join("sys/devices/virtual/block/zram1")).unwrap();
        let long = "x".repeat(NAME_LEN + 1);
        link(&d, "sys/dev/block/8:7", &format!("../../devices/{long}"));
        let dir = d.to_str().unwrap();
        assert_eq!(find_disk(dir, "/g"), Err(NoDisk::TooLong));
        assert_eq!(find_disk(dir, "/src"), Err(NoDisk::Overlay));
        assert_eq!(find_disk(dir, "/tmp/x"), Err(NoDisk::Ram));
        assert_eq!(find_disk(dir, "/mnt/nfs"), Err(NoDisk::Network));
        assert_eq!(find_disk(dir, "/var/tmp"), Err(NoDisk::Zram));
        assert_eq!(
            find_disk(dir, "/b"),
            Err(NoDisk::Unknown {
                major: 0,
                minor: 43
            })
        );
        assert_eq!(
            find_disk(dir, "/c"),
            Err(NoDisk::Unknown {
                major: 0,
                minor: 44
            })
        );
        assert_eq!(
            find_disk(dir, "/d"),
            Err(NoDisk::NotInSysfs { major: 8, minor: 5 })
        );
        assert_eq!(find_disk(dir, "/e"), Err(NoDisk::BadDevice));
        assert_eq!(
            find_disk(dir, "/f"),
            Err(NoDisk::Unknown {
                major: 0,
                minor: 45
            })
        );
        assert_eq!(find_disk(dir, "relative"), Err(NoDisk::NoMount));
        let empty = tree("empty");
        assert_eq!(
            find_disk(empty.to_str().unwrap(), "/"),
            Err(NoDisk::MountTable(ReadError::Open(Errno::NOENT)))
        );
        for why in [NoDisk::Ram, NoDisk::Unknown { major: 0, minor: 1 }] {
            assert!(!why.describe().is_empty());
        }
        let _ = fs::remove_dir_all(&d);
        let _ = fs::remove_dir_all(&empty);
    }

    #[test]
    fn pure_helpers() {
        assert_eq!(parse_dev(b"179:2"), Some((179, 2)));
        assert_eq!(parse_dev(b"0:33"), Some((0, 33)));
        for bad in [&b"179"[..], b":2", b"179:", b"a:1", b"4294967296:0", b""] {
            assert_eq!(parse_dev(bad), None, "{bad:?}");
        }
        assert_eq!(
            parse_source(b"/dev/mapper/vg0-root"),
            Some(Source::Mapper(b"vg0-root"))
        );
        assert_eq!(parse_source(b"/dev/sda1"), Some(Source::Dev(b"sda1")));
        for none in [
            &b"/dev/disk/by-uuid/x"[..],
            b"tmpfs",
            b"/dev/",
            b"/dev/..",
            b"srv:/x",
            b"/dev/mapper/",
        ] {
            assert_eq!(parse_source(none), None, "{none:?}");
        }
        let mut out = SysPath::new();
        assert_eq!(
            resolve_link("sys/block/sda", b"../devices/pci/sda\n", &mut out),
            Some("sys/devices/pci/sda")
        );
        assert_eq!(
            resolve_link("sys/class/block/x", b"/sys/devices/./a//b/", &mut out),
            Some("sys/devices/a/b")
        );
        assert_eq!(resolve_link("a", b"..", &mut out), None);
        let long = "x/".repeat(200);
        assert_eq!(resolve_link("sys/l", long.as_bytes(), &mut out), None);
        assert_eq!(resolve_link("sys/l", b"\xff", &mut out), None);
        assert_eq!(
            (
                basename("a/b/c"),
                basename("c"),
                parent("a/b/c"),
                parent("c")
            ),
            ("c", "c", "a/b", "")
        );
        assert_eq!(disk_dir("d/mmcblk0/mmcblk0p1", true), "d/mmcblk0");
        assert_eq!(disk_dir("d/nvme0n1", false), "d/nvme0n1");
        assert_eq!(no_disk_for_type(b"ext4"), None);
        assert_eq!(no_disk_for_type(b"btrfs"), None);
        assert!(!is_ram_name(b"ram") && is_ram_name(b"ram0") && !is_ram_name(b"ramfs"));
    }

    /// The live root: the disk found for `/`, if any (a container's overlay
    /// has none), is read through one kept descriptor, and its line is in
    /// /proc/diskstats with counters that never go down.
    #[test]
    fn live_root_disk_is_read_through_one_kept_descriptor() {
        let root = Root::open("/").unwrap();
        let mut buf = vec![0u8; mountinfo::BUF_LEN];
        let Ok(disk) = resolve(&root, b"/", &mut buf) else {
            return;
        };
        let mut k = KeptStat::new(&disk, root.is_live());
        let mut stat = [0u8; STAT_BUF_LEN];
        let a = k.read(root.fd(), &mut stat).unwrap();
        assert!(k.is_open());
        let table = fs::read("/proc/diskstats").unwrap();
        let line = diskstats::find(&table, disk.name.as_bytes())
            .unwrap()
            .unwrap();
        let diskstats::Stats::Full(c) = line.stats else {
            panic!("{line:?}")
        };
        let b = k.read(root.fd(), &mut stat).unwrap();
        assert!(a.sectors_written <= c.sectors_written && c.sectors_written <= b.sectors_written);
        assert!(diskstats::delta(&a, &b, 1, crate::kernel::arch::of_root(&root, true)).is_some());
    }

    /// Issue 33: the kind of each build disk by its sysfs name and path:
    /// the boards' trees (the Pi's card, the VM's virtio disk, the Pi 5's
    /// NVMe, the VisionFive 2's eMMC) and real paths of the others.
    #[test]
    fn device_kind_follows_sysfs_name_and_path() {
        let board = |b: &str| {
            let root = std::format!("{}/boards/{b}", env!("CARGO_MANIFEST_DIR"));
            find_disk(&root, "/").unwrap().device
        };
        assert_eq!(board("rpi3b-1g"), Device::Card);
        assert_eq!(board("visionfive2-8g-emmc"), Device::Card);
        assert_eq!(board("x86_64-vm-2c-24g"), Device::Virtual);
        assert_eq!(board("rpi5-8g-16k"), Device::Nvme);
        assert_eq!(board("cgroupv1-host-4g"), Device::Sata);
        assert_eq!(find_disk(CASE_35, "/").unwrap().device, Device::Card);
        for (name, dir, want) in [
            // A USB SSD on a Pi 4: sd*, under the xHCI's usb2 bus.
            (
                "sda",
                "sys/devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/usb2/2-2/2-2:1.0/host0/target0:0:0/0:0:0:0/block/sda",
                Device::Usb,
            ),
            // A card in a USB reader is the reader's, USB.
            (
                "sdb",
                "sys/devices/pci0000:00/0000:00:14.0/usb1/1-3/1-3:1.0/host2/target2:0:0/2:0:0:0/block/sdb",
                Device::Usb,
            ),
            (
                "sda",
                "sys/devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sda",
                Device::Sata,
            ),
            // virtio-scsi: sd*, under a virtio device.
            (
                "sda",
                "sys/devices/pci0000:00/0000:00:04.0/virtio2/host0/target0:0:1/0:0:1:0/block/sda",
                Device::Virtual,
            ),
            ("xvda", "sys/devices/vbd-51712/block/xvda", Device::Virtual),
            (
                "nvme0n1",
                "sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1",
                Device::Nvme,
            ),
            (
                "mmcblk0",
                "sys/devices/platform/soc/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0",
                Device::Card,
            ),
            ("loop0", "sys/devices/virtual/block/loop0", Device::Other),
            // `usbmon`, `virtio_blk`: not a bus component.
            ("sdc", "sys/devices/usbx/virtio_blk/block/sdc", Device::Sata),
        ] {
            assert_eq!(device_of(name, dir), want, "{dir}");
        }
        for d in Device::ALL {
            assert_eq!(Device::from_words(d.words()), Some(d));
        }
        assert_eq!(Device::from_words("SD card"), None);
        // A dm device is its first slave's kind.
        let d = tree("dm-kind");
        put(
            &d,
            "proc/self/mountinfo",
            "1 0 253:0 / / rw - ext4 /dev/mapper/vg-root rw\n",
        );
        link(
            &d,
            "sys/dev/block/253:0",
            "../../devices/virtual/block/dm-0",
        );
        put(&d, "sys/devices/virtual/block/dm-0/stat", &" 1".repeat(17));
        link(
            &d,
            "sys/devices/virtual/block/dm-0/slaves/nvme0n1p3",
            "../../../../pci0000:00/nvme/nvme0/nvme0n1/nvme0n1p3",
        );
        link(
            &d,
            "sys/class/block/nvme0n1p3",
            "../../devices/pci0000:00/nvme/nvme0/nvme0n1/nvme0n1p3",
        );
        let got = find_disk(d.to_str().unwrap(), "/").unwrap();
        assert_eq!((got.name.as_str(), got.device), ("dm-0", Device::Nvme));
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn mount_by_dev_takes_the_last_with_that_number() {
        let t = b"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 0:41 / /tmp rw - tmpfs tmpfs rw\n\
              3 1 8:1 /home /home rw - ext4 /dev/sda1 rw\n";
        assert_eq!(mount_by_dev(t, (0, 41)).unwrap().fs_type, b"tmpfs");
        assert_eq!(mount_by_dev(t, (8, 1)).unwrap().mount_point, b"/home");
        assert_eq!(mount_by_dev(t, (8, 2)), None);
    }

    /// On the live root a path through a symbolic link is judged by where it
    /// lands: a link under / to /dev/shm (a tmpfs here) is in RAM.
    #[test]
    fn live_root_follows_a_symlinked_build_dir() {
        let shm = Path::new("/dev/shm");
        let root = Root::open("/").unwrap();
        let mut buf = vec![0u8; mountinfo::BUF_LEN];
        if resolve(&root, b"/dev/shm", &mut buf) != Err(NoDisk::Ram) || !shm.is_dir() {
            return;
        }
        let d = tree("live-link");
        let target = shm.join(format!("headroom-blockdev-{}", std::process::id()));
        fs::create_dir_all(&target).unwrap();
        symlink(&target, d.join("build")).unwrap();
        let via = d.join("build");
        let got = resolve(&root, via.to_str().unwrap().as_bytes(), &mut buf);
        let _ = fs::remove_dir_all(&d);
        let _ = fs::remove_dir_all(&target);
        assert_eq!(got, Err(NoDisk::Ram));
    }
}
