//! The status screen's "why it would be slow" lines: the block device the
//! build disk's I/O is read from (or why there is none) with its traffic
//! since boot, swap traffic since boot, the CPU temperature and clock, and
//! a Raspberry Pi's throttle flags now and since boot. Read once, with the
//! same readers a recording keeps (`tick::sampler`), opened by name here.
//!
//! # References
//! `Documentation/admin-guide/iostats.rst`, proc(5) `/proc/vmstat`,
//! `Documentation/driver-api/thermal/sysfs-api.rst`,
//! `Documentation/admin-guide/pm/cpufreq.rst`; raspberrypi/linux
//! `drivers/firmware/raspberrypi.c` (`get_throttled`).

use core::mem::MaybeUninit;

use ufmt::{uWrite, uwrite};

use super::screen_text::{label, show};
use crate::kernel::blockdev::{BuildDisk, DiskKind, KeptStat, NoDisk};
use crate::kernel::cpufreq::KeptPolicies;
use crate::kernel::diskstats::{self, DiskCounters};
use crate::kernel::root::Root;
use crate::kernel::thermal::KeptSensors;
use crate::kernel::throttled::{self, Flags, KeptPower, Power};
use crate::kernel::vmstat::VmStat;
use crate::report::json_write;
use crate::tick::row::Tenths;
use crate::tick::sampler::discovery_hwmons;

/// What the lines show, read once.
pub struct Facts {
    /// The build disk, or why it has none.
    pub disk: Result<BuildDisk, NoDisk>,
    /// Its counters since boot.
    pub io: Option<DiskCounters>,
    /// `pswpin`, `pswpout` since boot, MiB (× the page size `status` judges
    /// by: this kernel's, 4 KiB for a board tree).
    pub swap_in_out_mib: Option<(u64, u64)>,
    /// The hottest CPU sensor's reading, tenths of °C, and that sensor's
    /// `type`/`name`.
    pub temp: Option<(i32, heapless::String<{ crate::kernel::thermal::NAME_LEN }>)>,
    /// Mean `scaling_cur_freq` / max, %.
    pub freq_pct: Option<u32>,
    /// A CPU sensor and cpufreq were found (a `None` figure is then a
    /// failed read, not an absent file).
    pub found: (bool, bool),
    /// The throttle word or rpi_volt's alarm; `None` on a board without.
    pub power: Option<Power>,
}

impl Facts {
    /// Reads them under `root`: `disk` is the build disk as resolved (or
    /// why not), `vm` `/proc/vmstat` as read, `page_kib` the page size the
    /// swap counts are in (the snapshot's, [`crate::kernel::root::page_kib`]);
    /// `dir` is getdents64(2) scratch for the hwmon, thermal and cpufreq
    /// directories and `buf` the status screen's scratch (both the
    /// snapshot's).
    pub(super) fn read(
        root: &Root,
        disk: Result<BuildDisk, NoDisk>,
        vm: Option<&VmStat>,
        page_kib: u64,
        dir: &mut [MaybeUninit<u8>],
        buf: &mut [u8],
    ) -> Facts {
        let io = disk.as_ref().ok().and_then(|d| {
            KeptStat::new(d, false)
                .read(root.fd(), &mut buf[..diskstats::STAT_BUF_LEN])
                .ok()
        });
        let page = page_kib * 1024;
        let swap_in_out_mib = vm
            .and_then(|v| v.pswpin.zip(v.pswpout))
            .map(|(i, o)| (i.saturating_mul(page) >> 20, o.saturating_mul(page) >> 20));
        let hwmons = discovery_hwmons(root, dir, buf);
        let mut sensors = KeptSensors::discover(root, false, &hwmons, dir, buf);
        let mut freq = KeptPolicies::discover(root, false, dir, buf);
        let found = (!sensors.is_empty(), !freq.is_empty());
        let temp = sensors
            .read_hottest(root, buf)
            .map(|(t, s)| (t.tenths(), s.name.clone()));
        let freq_pct = freq.read(root, 0, buf);
        // Discovery's own read is the figure: the word is read once.
        let power = KeptPower::discover(root, false, &hwmons, dir, buf).first();
        Facts {
            disk,
            io,
            swap_in_out_mib,
            temp,
            freq_pct,
            found,
            power,
        }
    }
}

/// The line under the `disk` lines: which block device its I/O is, and
/// how much it has moved since boot.
pub(super) fn disk_io_line<W: uWrite>(w: &mut W, f: &Facts) -> Result<(), W::Error> {
    label(w, "")?;
    let d = match &f.disk {
        Ok(d) => d,
        Err(why) => return uwrite!(w, "I/O: no block device ({})\n", why.describe()),
    };
    w.write_str("I/O: ")?;
    show(w, d.name.as_bytes(), 32)?;
    match &d.kind {
        DiskKind::Whole => w.write_str(" (whole disk)")?,
        DiskKind::PartitionOf(p) => {
            w.write_str(" (the disk of ")?;
            show(w, p.as_bytes(), 32)?;
            w.write_str(")")?;
        }
        DiskKind::DeviceMapper {
            dm_name,
            slaves,
            slave_count,
        } => {
            w.write_str(" (device mapper ")?;
            show(w, dm_name.as_bytes(), 32)?;
            for (i, s) in slaves.iter().enumerate() {
                w.write_str(if i == 0 { " on " } else { ", " })?;
                show(w, s.as_bytes(), 32)?;
            }
            if *slave_count as usize > slaves.len() {
                uwrite!(w, " and {} more", *slave_count as usize - slaves.len())?;
            }
            w.write_str(")")?;
        }
    }
    match &f.io {
        Some(c) => uwrite!(
            w,
            "  read {} MiB  written {} MiB since boot\n",
            c.read_bytes() >> 20,
            c.write_bytes() >> 20
        ),
        None => w.write_str("  counters not available\n"),
    }
}

/// The `swap I/O`, `cpu temp`, `cpu freq` and `throttled` lines (the last
/// only where the board has a throttle word or rpi_volt, with the file it
/// came from: the sysfs word is cached).
pub(super) fn heat_lines<W: uWrite>(w: &mut W, f: &Facts) -> Result<(), W::Error> {
    if let Some((i, o)) = f.swap_in_out_mib {
        label(w, "swap I/O")?;
        uwrite!(w, "in {} MiB  out {} MiB since boot (host-wide)\n", i, o)?;
    }
    label(w, "cpu temp")?;
    match &f.temp {
        Some((t, name)) => {
            Tenths(*t).write(w)?;
            w.write_str(" °C (")?;
            show(w, name.as_bytes(), 32)?;
            w.write_str(")\n")?;
        }
        None if f.found.0 => w.write_str("not available (the CPU sensor gave no reading: a failed read, or a value that means none)\n")?,
        None => w.write_str("no CPU sensor (no thermal zone or hwmon of the CPU)\n")?,
    }
    label(w, "cpu freq")?;
    match f.freq_pct {
        Some(p) => uwrite!(
            w,
            "{}% of max (the clock the governor asks for; a Pi's firmware may run slower)\n",
            p
        )?,
        None if f.found.1 => w.write_str("not available (scaling_cur_freq unreadable)\n")?,
        None => w.write_str("no cpufreq\n")?,
    }
    let Some(p) = f.power else {
        return Ok(());
    };
    label(w, "throttled")?;
    w.write_str("now ")?;
    flags(w, p.live())?;
    match p.word() {
        Some(word) => {
            w.write_str("\n")?;
            label(w, "")?;
            w.write_str("since boot ")?;
            flags(w, word.sticky())?;
            w.write_str("\n")?;
            label(w, "")?;
            uwrite!(w, "word {} from {}\n", Hex(word.raw()), p.source())
        }
        None => uwrite!(w, "  from {}\n", p.source()),
    }
}

/// The flags' names, or `none`.
fn flags<W: uWrite>(w: &mut W, f: Flags) -> Result<(), W::Error> {
    let mut text = [0u8; throttled::FLAGS_TEXT_LEN];
    w.write_str(throttled::format_flags(f, &mut text).unwrap_or(throttled::NONE))
}

/// A number in lowercase hex with `0x`.
struct Hex(u32);

impl ufmt::uDisplay for Hex {
    fn fmt<W: uWrite + ?Sized>(&self, f: &mut ufmt::Formatter<'_, W>) -> Result<(), W::Error> {
        f.write_str("0x")?;
        let mut started = false;
        for shift in (0..8).rev() {
            let d = (self.0 >> (shift * 4)) & 0xf;
            if d != 0 || started || shift == 0 {
                started = true;
                let c = b"0123456789abcdef"[d as usize];
                f.write_char(char::from(c))?;
            }
        }
        Ok(())
    }
}

/// `,"disk_io":…,"swap_io_mib":…,"cpu_temp_c":…,"cpu_freq_pct":…,
/// "throttled":…` for `status --json` (`throttled`: `now`, `since_boot`
/// and `source`, the file it came from).
pub(super) fn json_keys<W: uWrite>(w: &mut W, f: &Facts) -> Result<(), W::Error> {
    w.write_str(",\"disk_io\":")?;
    match &f.disk {
        Ok(d) => {
            w.write_str("{\"device\":")?;
            json_write::string(w, &d.name)?;
            w.write_str(",\"read_mib\":")?;
            json_write::opt(w, f.io.map(|c| c.read_bytes() >> 20))?;
            w.write_str(",\"written_mib\":")?;
            json_write::opt(w, f.io.map(|c| c.write_bytes() >> 20))?;
            w.write_str(",\"no_device\":null}")?;
        }
        Err(why) => {
            w.write_str("{\"device\":null,\"read_mib\":null,\"written_mib\":null,\"no_device\":")?;
            json_write::string(w, why.describe())?;
            w.write_str("}")?;
        }
    }
    w.write_str(",\"swap_io_mib\":")?;
    match f.swap_in_out_mib {
        Some((i, o)) => uwrite!(w, "{{\"in\":{},\"out\":{}}}", i, o)?,
        None => w.write_str("null")?,
    }
    w.write_str(",\"cpu_temp_c\":")?;
    match &f.temp {
        Some((t, _)) => Tenths(*t).write(w)?,
        None => w.write_str("null")?,
    }
    w.write_str(",\"cpu_freq_pct\":")?;
    json_write::opt(w, f.freq_pct.map(u64::from))?;
    w.write_str(",\"throttled\":")?;
    let mut text = [0u8; throttled::FLAGS_TEXT_LEN];
    match f.power {
        Some(p) => {
            w.write_str("{\"now\":")?;
            json_write::string(
                w,
                throttled::format_flags(p.live(), &mut text).unwrap_or(""),
            )?;
            w.write_str(",\"since_boot\":")?;
            match p.word() {
                Some(word) => {
                    let t = throttled::format_flags(word.sticky(), &mut text).unwrap_or("");
                    json_write::string(w, t)?;
                }
                None => w.write_str("null")?,
            }
            w.write_str(",\"source\":")?;
            json_write::string(w, p.source())?;
            w.write_str("}")
        }
        None => w.write_str("null"),
    }
}
