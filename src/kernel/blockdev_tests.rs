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
    let d = std::env::temp_dir().join(format!("headroom-blockdev-{tag}-{}", std::process::id()));
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
    assert!(diskstats::delta(&a, &b, 1).is_some());
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
