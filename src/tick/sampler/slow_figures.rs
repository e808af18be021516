//! The figures of "why it was slow": swap and page-fault rates from
//! /proc/vmstat (the file the OOM count comes from: no other read), the
//! build disk's I/O, CPU heat and the Raspberry Pi's throttle flags.
//!
//! Each rate is the growth of a kernel counter since the previous tick
//! over the monotonic time between the two reads ([`crate::tick::rates`]);
//! the first tick has none (empty fields), and a counter that is absent
//! gives an empty field, never 0.
//!
//! # References
//! proc(5) `/proc/vmstat`; SPEC.md "CSV" (`swap_in_mibps` … `throttled`).

use core::mem::MaybeUninit;

use super::buffers::Buffers;
use super::source::Source;
use crate::kernel::arch::{self, LongWidth};
use crate::kernel::blockdev::{self, KeptStat, NoDisk, StatError};
use crate::kernel::cpufreq::KeptPolicies;
use crate::kernel::diskstats::{self, DiskCounters};
use crate::kernel::hwmon::Hwmons;
use crate::kernel::root::Root;
use crate::kernel::thermal::{self, JumpGuard, KeptSensors};
use crate::kernel::throttled::{self, KeptPower, SampleError, Throttled};
use crate::kernel::uptime;
use crate::kernel::vmstat::VmStat;
use crate::tick::clock::monotonic_ns;
use crate::tick::rates::{growth, mibps, per_second};
use crate::tick::row::{Row, Tenths};

/// Descriptors the readers of this module keep at most: the disk's
/// `stat`, [`crate::kernel::thermal::KEPT_SENSORS`] sensors, the throttle
/// word and [`crate::kernel::cpufreq::KEPT_POLICIES`] cpufreq policies.
pub const MAX_KEPT: usize =
    1 + crate::kernel::thermal::KEPT_SENSORS + 1 + crate::kernel::cpufreq::KEPT_POLICIES;

/// The hwmon devices the sampler's discoveries choose from, each `name`
/// read once: CPU sensors ([`thermal::is_cpu_hwmon`]) and the Pi's
/// [`throttled::RPI_VOLT`]. `status` lists them the same way.
pub fn discovery_hwmons(root: &Root, scratch: &mut [MaybeUninit<u8>], buf: &mut [u8]) -> Hwmons {
    let wanted = |n: &[u8]| thermal::is_cpu_hwmon(n) || n == throttled::RPI_VOLT;
    Hwmons::list(root, wanted, scratch, buf)
}

/// What a tick of [`Slow::read`] has to say, once per source (the
/// sampler keeps it to one): `note` when the figures are absent by nature
/// (a build directory in RAM), else a warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Said {
    pub source: Source,
    pub note: bool,
    pub what: &'static str,
}

/// What one tick said, at most one per source.
pub(super) type Sayings = heapless::Vec<Said, 4>;

fn say(out: &mut Sayings, source: Source, note: bool, what: &'static str) {
    let _ = out.push(Said { source, note, what });
}

/// The build disk, found at start-up, and its counters at the previous
/// tick.
struct Disk {
    stat: KeptStat,
    /// Its kind, for the advice.
    device: blockdev::Device,
    prev: Option<(u64, DiskCounters)>,
    /// The kernel's count width: 32-bit kernels wrap sectors at 2^32.
    width: LongWidth,
}

/// Now, in ns, for the rates of a tick: the monotonic clock, or for a tree
/// with a second capture ([`Root::has_later`]) the `proc/uptime` of the
/// capture being read, so that its rates are those of the captures'
/// interval (0 when a capture has none).
pub(super) fn clock_ns(root: &Root) -> u64 {
    if !root.has_later() {
        return monotonic_ns();
    }
    let mut buf = [0u8; uptime::BUF_LEN];
    let centi = root
        .read(uptime::PATH, &mut buf)
        .ok()
        .and_then(uptime::parse_centi_s);
    centi.unwrap_or(0).saturating_mul(10_000_000)
}

/// What the rates of the next tick are taken from, and the files of heat
/// and power found at start-up.
pub(super) struct Slow {
    /// The swap and fault rates.
    pub thrash: Thrash,
    /// The build disk's stat file, or why there is none.
    disk: Result<Disk, NoDisk>,
    sensors: KeptSensors,
    /// The readings of `sensors` so far: a jump is held for a tick.
    jumps: JumpGuard,
    power: KeptPower,
    /// The throttle word at the previous tick: a sticky bit that turns on
    /// between two ticks is an event of this interval.
    prev_word: Option<Throttled>,
    cpufreq: KeptPolicies,
}

impl Slow {
    /// Finds the build disk under `disk_path` and the CPU sensors, the
    /// throttle word and the cpufreq policies under `root` (a bounded number
    /// of each, kept open from their first read on the live root).
    pub(super) fn new(root: &Root, disk_path: &str, bufs: &mut Buffers) -> Slow {
        let keep = root.is_live();
        let disk = blockdev::resolve(root, disk_path.as_bytes(), &mut bufs.scratch).map(|d| Disk {
            stat: KeptStat::new(&d, keep),
            device: d.device,
            prev: None,
            width: arch::of_root(root, keep),
        });
        let hwmons = discovery_hwmons(root, &mut bufs.dir, &mut bufs.file);
        Slow {
            thrash: Thrash::default(),
            disk,
            sensors: KeptSensors::discover(root, keep, &hwmons, &mut bufs.dir, &mut bufs.file),
            jumps: JumpGuard::new(),
            power: KeptPower::discover(root, keep, &hwmons, &mut bufs.dir, &mut bufs.file),
            prev_word: None,
            cpufreq: KeptPolicies::discover(root, keep, &mut bufs.dir, &mut bufs.file),
        }
    }

    /// The build disk's kind: its device's, [`blockdev::Device::Network`]
    /// on a network file system; `None` without a disk (RAM, overlay,
    /// unknown).
    pub(super) fn device(&self) -> Option<blockdev::Device> {
        match &self.disk {
            Ok(d) => Some(d.device),
            Err(NoDisk::Network) => Some(blockdev::Device::Network),
            Err(_) => None,
        }
    }

    /// Descriptors held now (at most [`MAX_KEPT`]).
    pub(super) fn open(&self) -> usize {
        let disk = self
            .disk
            .as_ref()
            .map_or(0, |d| usize::from(d.stat.is_open()));
        disk + self.sensors.open() + self.power.open() + self.cpufreq.open()
    }

    /// The build disk's I/O, the CPU's temperature and clock and the
    /// throttle flags of this tick at `epoch` into `row`. A temperature
    /// that jumps ([`thermal::is_bogus_jump`]) is left out of this tick's
    /// row: the next reading confirms it (and is written, within 20 °C of
    /// it) or shows it bogus; a wrong figure is never written.
    pub(super) fn read(
        &mut self,
        row: &mut Row,
        root: &Root,
        epoch: u64,
        bufs: &mut Buffers,
    ) -> Sayings {
        let mut said = Sayings::new();
        self.disk_io(row, root, bufs, &mut said);
        let buf = &mut bufs.file;
        let temp = self.sensors.read(root, buf);
        row.ext.cpu_temp_c = temp
            .filter(|t| self.jumps.push(t.milli_c).this)
            .map(|t| Tenths(t.tenths()));
        row.ext.cpu_freq_pct = self.cpufreq.read(root, epoch, buf).map(u64::from);
        match self.power.read(root, buf) {
            Ok(p) => {
                let mut flags = p.live();
                if let (Some(before), Some(now)) = (self.prev_word, p.word()) {
                    flags.0 |= throttled::sticky_turned_on(before, now).0;
                }
                self.prev_word = p.word().or(self.prev_word);
                row.ext.throttled = Some(flags.0);
                row.throttled_seen = p.seen();
            }
            Err(SampleError::Absent) => {}
            Err(SampleError::Read(e)) => say(&mut said, Source::Power, false, e.describe()),
            Err(SampleError::Parse(_)) => say(&mut said, Source::Power, false, "unexpected format"),
        }
        said
    }

    /// `disk_read_mibps`, `disk_write_mibps`, `disk_util_pct`,
    /// `disk_stalled`: the build disk's counters against the previous
    /// tick's.
    fn disk_io(&mut self, row: &mut Row, root: &Root, bufs: &mut Buffers, said: &mut Sayings) {
        let disk = match &mut self.disk {
            Ok(d) => d,
            Err(why) => return say(said, Source::DiskIo, true, why.describe()),
        };
        let buf = &mut bufs.file[..diskstats::STAT_BUF_LEN];
        let cur = match disk.stat.read(root.at(disk.stat.path()), buf) {
            Ok(c) => c,
            Err(StatError::Read(e)) => return say(said, Source::DiskIo, false, e.describe()),
            Err(StatError::Parse(_)) => {
                return say(said, Source::DiskIo, false, "unexpected format");
            }
        };
        let now = clock_ns(root);
        // No time between the reads (a tree's second capture read twice):
        // no interval. A reset or a re-created device: no rate this
        // interval. (Two reads under a millisecond apart count as one.)
        if let Some((then, prev)) = disk.prev.replace((now, cur))
            && let dt = now.saturating_sub(then)
            && dt > 0
        {
            let wall_ms = (dt / 1_000_000).max(1);
            if let Some(d) = diskstats::delta(&prev, &cur, wall_ms, disk.width) {
                row.ext.disk_read_mibps = mibps(d.read_bytes, dt);
                row.ext.disk_write_mibps = mibps(d.write_bytes, dt);
                row.ext.disk_util_pct = d.util_permille().map(|p| u64::from(p / 10));
                row.ext.disk_stalled = d.stalled.map(u64::from);
            }
        }
    }
}

/// /proc/vmstat at the previous tick, and when it was read (monotonic
/// ns): what the swap and fault rates are taken from.
#[derive(Debug, Default)]
pub(super) struct Thrash {
    prev_vm: Option<(u64, VmStat)>,
}

impl Thrash {
    /// `swap_in_mibps`, `swap_out_mibps`, `majflt_ps` and `refaults_ps`
    /// from `vm`, read at `now_ns`, against the previous tick's; pages are
    /// `page_bytes` long ([`crate::kernel::root::page_kib`] of the root).
    pub(super) fn thrash(&mut self, row: &mut Row, vm: &VmStat, now_ns: u64, page_bytes: u64) {
        if let Some((then, prev)) = self.prev_vm.replace((now_ns, *vm)) {
            let dt = now_ns.saturating_sub(then);
            let grew = |p: Option<u64>, c: Option<u64>| p.zip(c).map(|(p, c)| growth(p, c));
            let e = &mut row.ext;
            e.swap_in_mibps =
                grew(prev.pswpin, vm.pswpin).and_then(|p| mibps(p.saturating_mul(page_bytes), dt));
            e.swap_out_mibps = grew(prev.pswpout, vm.pswpout)
                .and_then(|p| mibps(p.saturating_mul(page_bytes), dt));
            e.majflt_ps = grew(prev.pgmajfault, vm.pgmajfault).and_then(|n| per_second(n, dt));
            e.refaults_ps = grew(prev.refaults(), vm.refaults()).and_then(|n| per_second(n, dt));
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    #[test]
    fn a_sticky_bit_that_turns_on_between_ticks_is_this_intervals_event() {
        let dir = std::env::temp_dir().join(std::format!("headroom-slow-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let fw = dir.join("sys/devices/platform/soc/soc:firmware");
        std::fs::create_dir_all(&fw).unwrap();
        let word = |w: &str| std::fs::write(fw.join("get_throttled"), w).unwrap();
        word("50000\n");
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let mut slow = Slow::new(&root, "/", &mut bufs);
        let mut row = Row::empty(0);
        let mut flags = |w: &str| {
            word(w);
            let said = slow.read(&mut row, &root, 0, &mut bufs);
            (
                row.ext.throttled,
                said.iter().map(|s| s.what).collect::<std::vec::Vec<_>>(),
            )
        };
        // Sticky at start: said nothing of this build.
        assert_eq!(flags("50000\n").0, Some(0));
        // Soft temperature limit occurred between two ticks (bit 19), with
        // nothing live now: it is this interval's.
        assert_eq!(flags("d0000\n").0, Some(0b1000));
        assert_eq!(flags("d0000\n").0, Some(0));
        assert_eq!(flags("d0005\n").0, Some(0b0101));
        // No disk in this tree: said (as a note), no figures.
        let (_, said) = flags("0\n");
        assert_eq!(said, ["mount table unreadable"]);
        assert_eq!(row.ext.disk_util_pct, None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Case 51's bogus 85 °C between sane readings: the row of that tick
    /// has no temperature (never 85.0), the next rows theirs; a jump the
    /// next reading confirms is written from that reading on.
    #[test]
    fn a_jump_waits_a_tick_and_a_bogus_one_is_never_written() {
        let dir = std::env::temp_dir().join(std::format!("headroom-jump-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let zone = dir.join("sys/class/thermal/thermal_zone0");
        std::fs::create_dir_all(&zone).unwrap();
        std::fs::write(zone.join("type"), "cpu-thermal\n").unwrap();
        let root = Root::open(dir.to_str().unwrap()).unwrap();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let mut ticks = |temps: &[&str]| {
            std::fs::write(zone.join("temp"), temps[0]).unwrap();
            let mut slow = Slow::new(&root, "/", &mut bufs);
            let mut row = Row::empty(0);
            temps
                .iter()
                .map(|t| {
                    std::fs::write(zone.join("temp"), t).unwrap();
                    let _ = slow.read(&mut row, &root, 0, &mut bufs);
                    row.ext.cpu_temp_c.map(|t| t.0)
                })
                .collect::<std::vec::Vec<_>>()
        };
        let bogus = ticks(&["48000\n", "48500\n", "85000\n", "48300\n", "49000\n"]);
        assert_eq!(bogus, [Some(480), Some(485), None, Some(483), Some(490)]);
        let real = ticks(&["48000\n", "70000\n", "71000\n", "71500\n"]);
        assert_eq!(real, [Some(480), None, Some(710), Some(715)]);
        // Whole degrees (case 51's Pine A64) are degrees in the row too.
        assert_eq!(ticks(&["31\n", "32\n"]), [Some(310), Some(320)]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn vm(pswpin: u64, pswpout: u64, majflt: Option<u64>, refaults: u64) -> VmStat {
        VmStat {
            pswpin: Some(pswpin),
            pswpout: Some(pswpout),
            pgmajfault: majflt,
            refault_total: Some(refaults),
            ..VmStat::default()
        }
    }

    #[test]
    fn thrash_rates_are_per_second_between_ticks() {
        let mut s = Thrash::default();
        let mut row = Row::empty(0);
        s.thrash(&mut row, &vm(100, 100, Some(10), 5), 1_000_000_000, 4096);
        assert_eq!(row.ext.swap_in_mibps, None, "no rate on the first tick");
        // 2 s later: 512 pages in (2 MiB), 1024 out (4 MiB), 300 faults.
        s.thrash(&mut row, &vm(612, 1124, Some(310), 5), 3_000_000_000, 4096);
        let e = &row.ext;
        assert_eq!(e.swap_in_mibps.as_ref().map(|d| d.centi), Some(100));
        assert_eq!(e.swap_out_mibps.as_ref().map(|d| d.centi), Some(200));
        assert_eq!((e.majflt_ps, e.refaults_ps), (Some(150), Some(0)));
        // A 16 KiB-page kernel: the same pages are 4× the bytes.
        let mut s16 = Thrash::default();
        s16.thrash(&mut row, &vm(0, 0, None, 0), 0, 16384);
        s16.thrash(&mut row, &vm(64, 0, None, 0), 1_000_000_000, 16384);
        assert_eq!(row.ext.swap_in_mibps.as_ref().map(|d| d.centi), Some(100));
        assert_eq!(row.ext.majflt_ps, None, "absent counter: empty, not 0");
    }

    #[test]
    fn counters_that_go_backwards_clamp_to_zero() {
        let mut s = Thrash::default();
        let mut row = Row::empty(0);
        s.thrash(&mut row, &vm(1000, 1000, Some(1000), 1000), 0, 4096);
        s.thrash(&mut row, &vm(1, 1, Some(1), 1), 1_000_000_000, 4096);
        let e = &row.ext;
        assert_eq!(e.swap_in_mibps.as_ref().map(|d| d.centi), Some(0));
        assert_eq!((e.majflt_ps, e.refaults_ps), (Some(0), Some(0)));
    }
}
