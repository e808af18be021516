//! CPU temperature: thermal zones (`/sys/class/thermal/thermal_zone<N>/`)
//! and hwmon sensors (`/sys/class/hwmon/hwmon<N>/`), chosen at start by
//! their `type` or `name`, never by their number.
//!
//! Both print millidegrees Celsius as a signed decimal integer (`54500` is
//! 54.5 °C). A zone's `type` is its device-tree node name (`cpu-thermal`)
//! or the driver's (`x86_pkg_temp`); a zone's own hwmon twin, made by
//! `drivers/thermal/thermal_hwmon.c`, is named after that type with `-`
//! turned into `_` (`cpu_thermal`: hwmon names cannot hold `-`) and reads
//! the same sensor, so it is never kept beside its zone.
//!
//! Which names are the CPU (anything else, `acpitz` above all — the ACPI
//! zone of the board or chassis — is not):
//!
//! | name | where | source |
//! |---|---|---|
//! | `cpu-thermal`, `cpu_thermal` | Raspberry Pi (BCM2711/2712), Allwinner, Amlogic, i.MX8, StarFive JH7110; RK3288's `cpu_thermal` node | device trees' `thermal-zones` |
//! | `cpu<N>-thermal` | Exynos, Qualcomm: one zone per core | device trees |
//! | `soc-thermal`, `soc_thermal` | RK3328: its only zone, on the CPU die | `rk3328.dtsi` |
//! | `bcm2835_thermal` | Raspberry Pi kernels before the device-tree zone | raspberrypi/linux `bcm2835-thermal.c` |
//! | `x86_pkg_temp` | Intel package sensor (a zone without hwmon twin) | `x86_pkg_temp_thermal.c` |
//! | hwmon `coretemp`, `k10temp` | Intel, AMD: `temp1_input` is the package / Tctl | `Documentation/hwmon/coretemp.rst`, `k10temp.rst` |
//! | hwmon `sfctemp` | StarFive JH7100/JH7110 | `drivers/hwmon/sfctemp.c` |
//! | `sfc_temp_sensor` | StarFive's vendor driver, not a hwmon: `temp1_input` under `/sys/bus/platform/drivers/sfc_temp_sensor/<device>/`, printed as decimal °C (`40.84`) | starfive-tech/freelight-u-sdk#16 |
//!
//! Reads fail in the field: EINVAL from a Pi 3B+ zone on a 5.10 arm64
//! kernel and from a BeagleV zone whose hwmon works, ETIMEDOUT now and
//! then on a VisionFive 2, ENODATA and EAGAIN from sensors not ready. A
//! failed read drops that sensor's sample for that tick, never reads as
//! 0 °C; a value outside −40…150 °C (`-650788984` from old Pi firmware,
//! `-273000` from an unset emulated zone) is dropped too. Trip points
//! (`trip_point_<N>_temp`, same unit, [`parse_temp`] reads them) drive
//! fans and the critical shutdown: crossing one is not throttling.
//!
//! # References
//! `Documentation/driver-api/thermal/sysfs-api.rst`,
//! `Documentation/hwmon/sysfs-interface.rst` (`temp[1-*]_input`:
//! millidegree Celsius).

use core::mem::MaybeUninit;

use rustix::fd::{AsFd, BorrowedFd};

use crate::kernel::hwmon::{HWMON_DIR, Hwmons};
use crate::kernel::kept::{Kept, Shape};
use crate::kernel::parse::{parse_u64, trim};
use crate::kernel::root::{ReadError, Root, for_each_entry, open_dir_at, read_at};
use crate::kernel::sysfs::{self, Path, entry_path, for_each_numbered, insert_lowest};

/// The thermal zone class directory, relative to the root.
pub const THERMAL_DIR: &str = "sys/class/thermal";

/// The StarFive vendor driver's directory, holding one link per device.
pub const SFC_VENDOR_DIR: &str = "sys/bus/platform/drivers/sfc_temp_sensor";

/// Most CPU sensors kept (one descriptor each): two packages, or a zone
/// and the hwmon it may fail without (BeagleV).
pub const KEPT_SENSORS: usize = 2;

/// Buffer for one temperature, `type` or `name` file, in bytes: the
/// longest value is a zone type of `THERMAL_NAME_LENGTH` (20) bytes;
/// a temperature is at most 12.
pub const BUF_LEN: usize = 64;

/// Lowest temperature believed, in millidegrees Celsius (−40 °C: the
/// industrial grade's floor).
pub const MIN_MILLI_C: i64 = -40_000;

/// Highest temperature believed, in millidegrees Celsius (150 °C: above
/// every CPU's critical trip, 110 °C on a Pi 5).
pub const MAX_MILLI_C: i64 = 150_000;

/// One temperature reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Temp {
    /// The temperature in millidegrees Celsius, within
    /// [`MIN_MILLI_C`]…[`MAX_MILLI_C`].
    pub milli_c: i32,
    /// The text was decimal degrees (`40.84`, StarFive's vendor driver),
    /// not the ABI's integer millidegrees: worth a once-only note.
    pub non_standard: bool,
}

impl Temp {
    /// The temperature in tenths of a degree Celsius, rounded half away
    /// from zero (54 550 m°C → 546, −1 250 → −13): the row's one decimal.
    pub const fn tenths(self) -> i32 {
        let q = (self.milli_c.abs() + 50) / 100;
        if self.milli_c < 0 { -q } else { q }
    }
}

/// Why a temperature text was not believed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TempError {
    /// Not a signed decimal integer or a decimal with a point.
    Malformed,
    /// A number outside −40…150 °C, in millidegrees Celsius (saturated).
    OutOfRange {
        /// The value read, in millidegrees Celsius.
        milli_c: i64,
    },
}

/// Parses a temperature: a signed decimal integer of millidegrees Celsius
/// (`54500\n` → 54.5 °C, the ABI), or a decimal with a point as degrees
/// Celsius (`40.84` → 40.84 °C, flagged [`Temp::non_standard`]; digits past
/// the third decimal are cut).
///
/// # Errors
/// [`TempError::Malformed`] for anything else (empty, `+5`, `1e3`, a
/// number past `u64`); [`TempError::OutOfRange`] outside −40…150 °C.
///
/// ```
/// use headroom::kernel::thermal::{TempError, parse_temp};
/// assert_eq!(parse_temp(b"54500\n").unwrap().tenths(), 545);
/// assert_eq!(parse_temp(b"40.84").unwrap().milli_c, 40_840);
/// assert_eq!(
///     parse_temp(b"-273000"),
///     Err(TempError::OutOfRange { milli_c: -273_000 })
/// );
/// ```
pub fn parse_temp(b: &[u8]) -> Result<Temp, TempError> {
    let t = trim(b);
    let (negative, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    let (magnitude, non_standard) = match digits.iter().position(|&c| c == b'.') {
        None => (parse_u64(digits).ok_or(TempError::Malformed)?, false),
        Some(dot) => (decimal_milli(&digits[..dot], &digits[dot + 1..])?, true),
    };
    let magnitude = i64::try_from(magnitude).unwrap_or(i64::MAX);
    let milli_c = if negative { -magnitude } else { magnitude };
    if !(MIN_MILLI_C..=MAX_MILLI_C).contains(&milli_c) {
        return Err(TempError::OutOfRange { milli_c });
    }
    let milli_c = i32::try_from(milli_c).map_err(|_| TempError::Malformed)?;
    Ok(Temp {
        milli_c,
        non_standard,
    })
}

/// `int.frac` degrees as millidegrees: both parts non-empty digits.
fn decimal_milli(int: &[u8], frac: &[u8]) -> Result<u64, TempError> {
    let whole = parse_u64(int).ok_or(TempError::Malformed)?;
    parse_u64(frac).ok_or(TempError::Malformed)?;
    let mut milli = 0;
    for i in 0..3 {
        milli = milli * 10 + frac.get(i).map_or(0, |&c| u64::from(c - b'0'));
    }
    whole
        .checked_mul(1000)
        .and_then(|w| w.checked_add(milli))
        .ok_or(TempError::Malformed)
}

/// True for a thermal zone `type` (or its hwmon twin's name) that is the
/// CPU; see the module's table.
pub fn is_cpu_zone(kind: &[u8]) -> bool {
    let base = kind
        .strip_suffix(b"-thermal")
        .or_else(|| kind.strip_suffix(b"_thermal"));
    match base {
        Some(b"cpu" | b"soc" | b"bcm2835") => true,
        Some(b) => b
            .strip_prefix(b"cpu")
            .is_some_and(|n| parse_u64(n).is_some()),
        None => kind == b"x86_pkg_temp",
    }
}

/// True for a hwmon `name` that is the CPU: the drivers of the module's
/// table, or the twin of a CPU zone.
pub fn is_cpu_hwmon(name: &[u8]) -> bool {
    matches!(name, b"coretemp" | b"k10temp" | b"sfctemp") || is_cpu_zone(name)
}

/// True when hwmon `name` is the twin `thermal_hwmon.c` makes for a zone of
/// type `zone` (its type with every `-` turned into `_`).
pub fn is_zone_twin(name: &[u8], zone: &[u8]) -> bool {
    name.len() == zone.len()
        && name
            .iter()
            .zip(zone)
            .all(|(&n, &z)| n == if z == b'-' { b'_' } else { z })
}

/// Why one sensor gave no temperature this tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleError {
    /// The read failed (EINVAL, ENODATA, EAGAIN, ETIMEDOUT, …).
    Read(ReadError),
    /// The text was not a believable temperature.
    Temp(TempError),
}

/// One sensor's sample from the result of reading its file: the read's
/// error, or the parsed text. Taking the read result lets a test give the
/// errno a real sensor returned (a file in a tree cannot fail that way).
///
/// # Errors
/// [`SampleError::Read`] or [`SampleError::Temp`]; never a 0 °C stand-in.
pub fn sample(read: Result<&[u8], ReadError>) -> Result<Temp, SampleError> {
    parse_temp(read.map_err(SampleError::Read)?).map_err(SampleError::Temp)
}

/// The hottest of the samples that succeeded; `None` when none did.
pub fn hottest(samples: impl IntoIterator<Item = Result<Temp, SampleError>>) -> Option<Temp> {
    samples
        .into_iter()
        .fold(None, |best, s| hotter(best, (s, ())))
        .map(|(t, ())| t)
}

/// `best`, or the sample (with its `tag`, the sensor it came from) when it
/// succeeded and is hotter (the first of equals stays).
fn hotter<T>(
    best: Option<(Temp, T)>,
    (sample, tag): (Result<Temp, SampleError>, T),
) -> Option<(Temp, T)> {
    match (best, sample) {
        (Some(b), Ok(t)) if t.milli_c <= b.0.milli_c => Some(b),
        (_, Ok(t)) => Some((t, tag)),
        (b, Err(_)) => b,
    }
}

/// `first`, or when it was out of range (old Pi firmware's occasional
/// `-650788984`; "re-reading the temperature will usually return a sane
/// value", raspberrypi/firmware#133) the result of `again`, a second read.
pub fn retry_out_of_range(
    first: Result<Temp, SampleError>,
    again: impl FnOnce() -> Result<Temp, SampleError>,
) -> Result<Temp, SampleError> {
    match first {
        Err(SampleError::Temp(TempError::OutOfRange { .. })) => again(),
        r => r,
    }
}

/// Where a kept sensor was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A thermal zone's `temp`.
    Zone,
    /// A hwmon device's `temp1_input`.
    Hwmon,
    /// StarFive's vendor driver's `temp1_input` (decimal °C).
    Vendor,
}

/// Capacity of a sensor's name: a zone type is at most 19 bytes.
pub const NAME_LEN: usize = 24;

/// A CPU sensor chosen at start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sensor {
    /// Zone, hwmon or vendor file.
    pub kind: Kind,
    /// Its `type` or `name` (`cpu-thermal`, `k10temp`), or the vendor
    /// driver's name.
    pub name: heapless::String<NAME_LEN>,
    /// The file read each tick, relative to the root.
    pub path: Path,
}

/// The CPU sensors found at start, each read through its own descriptor.
#[derive(Debug)]
pub struct KeptSensors {
    sensors: heapless::Vec<(Sensor, Kept), KEPT_SENSORS>,
}

impl KeptSensors {
    /// Finds at most [`KEPT_SENSORS`] CPU sensors under `root`: the CPU
    /// thermal zones of lowest number first, then CPU hwmon devices that
    /// are not the twin of a kept zone, then StarFive's vendor file. Kept
    /// open from their first read when `keep` (the live root).
    ///
    /// `scratch` is the getdents64(2) buffer (any size); `buf` receives
    /// each `type` and `name` ([`BUF_LEN`] bytes). Reads the `type` of
    /// every `thermal_zone<N>`, however many the directory lists
    /// ([`sysfs::for_each_numbered`]).
    /// Absent directories and unreadable names are not errors: a VM or a
    /// container has none, and [`KeptSensors::is_empty`] says so.
    pub fn discover(
        root: &Root,
        keep: bool,
        hwmons: &Hwmons,
        scratch: &mut [MaybeUninit<u8>],
        buf: &mut [u8],
    ) -> KeptSensors {
        let dir = root.fd();
        let mut zones = heapless::Vec::<(u32, Sensor), KEPT_SENSORS>::new();
        let _ = for_each_numbered(dir, THERMAL_DIR, b"thermal_zone", scratch, |n| {
            if let Some(s) = cpu_zone(dir, n, buf) {
                insert_lowest(&mut zones, n, s);
            }
        });
        let mut found = heapless::Vec::<(u32, Sensor), KEPT_SENSORS>::new();
        for (n, name) in hwmons.iter().filter(|(_, m)| is_cpu_hwmon(m.as_bytes())) {
            let Some(s) = hwmon_sensor(n, name) else {
                continue;
            };
            let twin = zones
                .iter()
                .any(|(_, z)| is_zone_twin(s.name.as_bytes(), z.name.as_bytes()));
            if !twin {
                insert_lowest(&mut found, n, s);
            }
        }
        let mut sensors = heapless::Vec::new();
        for (_, s) in zones.into_iter().chain(found) {
            let _ = sensors.push((s, Kept::new(keep)));
        }
        if !sensors.is_full()
            && let Some(s) = vendor(dir, scratch, buf)
        {
            let _ = sensors.push((s, Kept::new(keep)));
        }
        KeptSensors { sensors }
    }

    /// The sensors kept, in the order read.
    pub fn sensors(&self) -> impl Iterator<Item = &Sensor> {
        self.sensors.iter().map(|(s, _)| s)
    }

    /// True when no CPU sensor was found (the `cpu_temp_c` field stays
    /// empty).
    pub fn is_empty(&self) -> bool {
        self.sensors.is_empty()
    }

    /// Descriptors held now (at most [`KEPT_SENSORS`]).
    pub fn open(&self) -> usize {
        self.sensors.iter().filter(|(_, k)| k.is_open()).count()
    }

    /// The hottest CPU temperature now: one pread per sensor on the live
    /// root, and one more for a sensor whose value is out of range (the
    /// old Pi firmware's bogus value is gone on the next read). `None`
    /// when no sensor gave a believable value this tick. `buf`:
    /// [`BUF_LEN`] bytes.
    pub fn read(&mut self, root: &Root, buf: &mut [u8]) -> Option<Temp> {
        self.read_hottest(root, buf).map(|(t, _)| t)
    }

    /// As [`KeptSensors::read`], with the sensor that gave the value (the
    /// name `status` shows beside it).
    pub fn read_hottest(&mut self, root: &Root, buf: &mut [u8]) -> Option<(Temp, &Sensor)> {
        let mut best = None;
        for (s, k) in &mut self.sensors {
            let first = sample(k.read(root.fd(), &s.path, buf, Shape::Whole));
            let r = retry_out_of_range(first, || {
                sample(k.read(root.fd(), &s.path, &mut *buf, Shape::Whole))
            });
            best = hotter(best, (r, &*s));
        }
        best
    }
}

/// Thermal zone `n` when its `type` is a CPU zone.
fn cpu_zone(dir: BorrowedFd<'_>, n: u32, buf: &mut [u8]) -> Option<Sensor> {
    let kind = trim(
        read_at(
            dir,
            &entry_path(THERMAL_DIR, "thermal_zone", n, "type")?,
            buf,
        )
        .ok()?,
    );
    if !is_cpu_zone(kind) {
        return None;
    }
    Some(Sensor {
        kind: Kind::Zone,
        name: heapless::String::try_from(core::str::from_utf8(kind).ok()?).ok()?,
        path: entry_path(THERMAL_DIR, "thermal_zone", n, "temp")?,
    })
}

/// Hwmon device `n`, of CPU name `name` (from the [`Hwmons`] listing).
fn hwmon_sensor(n: u32, name: &str) -> Option<Sensor> {
    Some(Sensor {
        kind: Kind::Hwmon,
        name: heapless::String::try_from(name).ok()?,
        path: entry_path(HWMON_DIR, "hwmon", n, "temp1_input")?,
    })
}

/// StarFive's vendor sensor: the first device of its driver directory
/// with a readable `temp1_input`.
fn vendor(dir: BorrowedFd<'_>, scratch: &mut [MaybeUninit<u8>], buf: &mut [u8]) -> Option<Sensor> {
    let drv = open_dir_at(dir, SFC_VENDOR_DIR).ok()?;
    let mut found = None;
    let _ = for_each_entry(drv.as_fd(), scratch, |name, _| {
        if matches!(name, b"bind" | b"unbind" | b"uevent" | b"module") {
            return true;
        }
        let Some(p) = sysfs::path(&[SFC_VENDOR_DIR.as_bytes(), b"/", name, b"/temp1_input"]) else {
            return true;
        };
        if read_at(dir, &p, buf).is_ok() {
            found = Some(p);
        }
        found.is_none()
    });
    Some(Sensor {
        kind: Kind::Vendor,
        name: heapless::String::try_from("sfc_temp_sensor").ok()?,
        path: found?,
    })
}

#[cfg(test)]
mod tests {
    //! Tests of `thermal.rs`: the fixture cases 38–40 and discovery over
    //! trees with real symlinks.

    extern crate std;
    use super::*;
    use rustix::io::Errno;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

    fn root(case: &str) -> Root {
        Root::open(&std::format!("{FIX}{case}")).unwrap()
    }

    fn discover(r: &Root, keep: bool) -> KeptSensors {
        let mut scratch = [MaybeUninit::uninit(); 1024];
        let hwmons = Hwmons::list(r, is_cpu_hwmon, &mut scratch, &mut [0u8; BUF_LEN]);
        KeptSensors::discover(r, keep, &hwmons, &mut scratch, &mut [0u8; BUF_LEN])
    }

    fn fixture(path: &str) -> std::vec::Vec<u8> {
        std::fs::read(std::format!("{FIX}{path}")).unwrap()
    }

    /// `ERRORS.tsv` of a host: (path, the errno its read fails with).
    fn errors(host: &str) -> std::vec::Vec<(std::string::String, Errno)> {
        let text =
            std::string::String::from_utf8(fixture(&std::format!("{host}/ERRORS.tsv"))).unwrap();
        text.lines()
            .map(|l| {
                let (path, name) = l.split_once('\t').unwrap();
                let errno = match name {
                    "EINVAL" => Errno::INVAL,
                    "ENODATA" => Errno::NODATA,
                    "EAGAIN" => Errno::AGAIN,
                    "ETIMEDOUT" => Errno::TIMEDOUT,
                    other => panic!("errno {other}"),
                };
                (path.into(), errno)
            })
            .collect()
    }

    fn tree(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(std::format!(
            "headroom-thermal-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn write(d: &std::path::Path, rel: &str, text: &[u8]) {
        let f = d.join(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }

    fn link(d: &std::path::Path, rel: &str, target: &str) {
        let f = d.join(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        symlink(target, f).unwrap();
    }

    fn tenths(t: &[u8]) -> i32 {
        parse_temp(t).unwrap().tenths()
    }

    #[test]
    fn fixture_38_rpi4_hwmon_rpi_volt_cpu_thermal() {
        let r = root("38-rpi4-hwmon-rpi_volt-cpu_thermal");
        let mut s = discover(&r, false);
        let kept: std::vec::Vec<_> = s.sensors().cloned().collect();
        assert_eq!(
            kept.len(),
            1,
            "the cpu_thermal hwmon is the zone's twin: {kept:?}"
        );
        assert_eq!(
            (kept[0].kind, kept[0].name.as_str()),
            (Kind::Zone, "cpu-thermal")
        );
        assert_eq!(
            kept[0].path.as_str(),
            "sys/class/thermal/thermal_zone0/temp"
        );
        let t = s.read(&r, &mut [0u8; BUF_LEN]).unwrap();
        assert_eq!(
            (t.milli_c, t.tenths(), t.non_standard),
            (54_500, 545, false)
        );
        let d = "38-rpi4-hwmon-rpi_volt-cpu_thermal/sys/class/hwmon/hwmon0/";
        assert_eq!(tenths(&fixture(&std::format!("{d}temp1_input"))), 545);
        assert_eq!(tenths(&fixture(&std::format!("{d}temp1_crit"))), 1100);
        assert!(is_zone_twin(b"cpu_thermal", b"cpu-thermal"));
        assert!(!is_cpu_hwmon(b"rpi_volt"));
    }

    #[test]
    fn fixture_39_rpi_thermal_zone_einval_bogus_trips() {
        let host = "39-rpi-thermal-zone-einval-bogus-trips/hosts/";
        // Pi 5: trip points (fan steps and the critical trip), not throttling.
        let trips = std::format!("{host}pi5-dietpi/sys/devices/virtual/thermal/thermal_zone0/");
        let got: std::vec::Vec<i32> = (0..5)
            .map(|i| tenths(&fixture(&std::format!("{trips}trip_point_{i}_temp"))))
            .collect();
        assert_eq!(got, [1100, 500, 600, 675, 750]);
        // Pi 3B+ on 5.10.5-v8+: the zone's read fails with EINVAL: no sample,
        // never 0 °C; and so for the other errnos of the case.
        let errs = errors(&std::format!("{host}pi3bplus-5.10.5-arm64"));
        assert_eq!(errs[0].0, "sys/class/thermal/thermal_zone0/temp");
        assert_eq!(errs[0].1, Errno::INVAL);
        for e in [errs[0].1, Errno::NODATA, Errno::AGAIN, Errno::TIMEDOUT] {
            let failed = sample(Err(ReadError::Read(e)));
            assert_eq!(failed, Err(SampleError::Read(ReadError::Read(e))));
            assert_eq!(hottest([failed]), None);
        }
        // 2013 firmware: the huge negative value is dropped; 85 °C is in range.
        let bogus = fixture(&std::format!(
            "{host}pi-2013-bogus/samples/thermal_zone0_temp.txt"
        ));
        let values: std::vec::Vec<_> = bogus
            .split(|&c| c == b'\n')
            .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
            .map(parse_temp)
            .collect();
        assert_eq!(
            values,
            [
                Err(TempError::OutOfRange {
                    milli_c: -650_788_984
                }),
                Ok(Temp {
                    milli_c: 85_000,
                    non_standard: false
                }),
            ]
        );
        // Pi 1/2 (2015): 35.78 °C; its tree has no `type`, so no zone is
        // taken by number.
        let t = parse_temp(&fixture(&std::format!(
            "{host}pi1-pi2-2015/sys/class/thermal/thermal_zone0/temp"
        )))
        .unwrap();
        assert_eq!((t.milli_c, t.tenths()), (35_780, 358));
        assert!(discover(&root(&std::format!("{host}pi1-pi2-2015")), false).is_empty());
    }

    /// The Pi 5 tree of case 39 with its symlinks real (the fixture stores
    /// them as text): the class entries are links into
    /// `devices/virtual/thermal`, and the hwmon twin lives inside the zone.
    /// `type`, `name` and the temperatures are not in the source: made up.
    #[test]
    fn fixture_39_pi5_symlinked_tree_reads_the_zone_once() {
        let d = tree("pi5");
        let zone = "sys/devices/virtual/thermal/thermal_zone0";
        write(&d, &std::format!("{zone}/type"), b"cpu-thermal\n");
        write(&d, &std::format!("{zone}/temp"), b"61250\n");
        write(&d, &std::format!("{zone}/trip_point_0_temp"), b"110000\n");
        write(&d, &std::format!("{zone}/hwmon0/name"), b"cpu_thermal\n");
        write(&d, &std::format!("{zone}/hwmon0/temp1_input"), b"61250\n");
        link(
            &d,
            &std::format!("{zone}/hwmon0/device"),
            "../../thermal_zone0",
        );
        link(
            &d,
            "sys/class/thermal/thermal_zone0",
            "../../devices/virtual/thermal/thermal_zone0",
        );
        link(
            &d,
            "sys/class/hwmon/hwmon0",
            "../../devices/virtual/thermal/thermal_zone0/hwmon0",
        );
        write(&d, "sys/class/thermal/cooling_device0/type", b"pwm-fan\n");
        let r = Root::open(d.to_str().unwrap()).unwrap();
        let mut s = discover(&r, true);
        let kept: std::vec::Vec<_> = s.sensors().map(|s| s.kind).collect();
        assert_eq!(kept, [Kind::Zone]);
        assert_eq!(s.read(&r, &mut [0u8; BUF_LEN]).map(Temp::tenths), Some(613));
        assert_eq!(s.open(), 1, "one descriptor, not two for one sensor");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn fixture_40_riscv_starfive_thermal() {
        let host = "40-riscv-starfive-thermal/hosts/";
        // BeagleV, work-in-progress DT: the zone fails with EINVAL (ERRORS.tsv),
        // the hwmon it is built on reads 33.12 °C: the fallback.
        let wip = std::format!("{host}beaglev-jh7100-mainline-wip");
        let errs = errors(&wip);
        assert_eq!(
            errs,
            [(
                "sys/devices/virtual/thermal/thermal_zone0/temp".into(),
                Errno::INVAL
            )]
        );
        let hwmon = fixture(&std::format!(
            "{wip}/sys/devices/platform/soc/124a0000.thermal-sensor/hwmon/hwmon0/temp1_input"
        ));
        let t = hottest([sample(Err(ReadError::Read(errs[0].1))), sample(Ok(&hwmon))]).unwrap();
        assert_eq!((t.milli_c, t.tenths()), (33_120, 331));
        // Vendor driver: decimal degrees, flagged, never 0.04 °C.
        let r = root(&std::format!("{host}beaglev-vendor-sfc_temp_sensor"));
        let mut s = discover(&r, false);
        let kept: std::vec::Vec<_> = s.sensors().cloned().collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            (kept[0].kind, kept[0].name.as_str()),
            (Kind::Vendor, "sfc_temp_sensor")
        );
        let t = s.read(&r, &mut [0u8; BUF_LEN]).unwrap();
        assert_eq!((t.milli_c, t.tenths(), t.non_standard), (40_840, 408, true));
        // VisionFive 2: ETIMEDOUT (-110) now and then drops that sample only.
        let ticks = [
            sample(Ok(b"45000\n")),
            sample(Err(ReadError::Read(Errno::TIMEDOUT))),
            sample(Ok(b"45500\n")),
        ];
        assert_eq!(
            ticks.map(|r| r.ok().map(Temp::tenths)),
            [Some(450), None, Some(455)]
        );
        // The WIP tree has no class links nor names: nothing taken by path.
        assert!(discover(&root(&wip), false).is_empty());
        assert!(is_cpu_hwmon(b"sfctemp") && is_cpu_zone(b"cpu-thermal"));
    }

    /// BeagleV's layout made whole: zone `cpu-thermal` whose read fails (its
    /// `temp` is a directory here: EISDIR), hwmon `sfctemp` that works. Both
    /// are kept and the hwmon's value is the reading.
    #[test]
    fn fixture_40_beaglev_zone_fails_hwmon_works() {
        let d = tree("beaglev");
        let hw = "sys/devices/platform/soc/124a0000.thermal-sensor/hwmon/hwmon0";
        write(&d, &std::format!("{hw}/name"), b"sfctemp\n");
        let value = fixture(&std::format!(
            "40-riscv-starfive-thermal/hosts/beaglev-jh7100-mainline-wip/{hw}/temp1_input"
        ));
        write(&d, &std::format!("{hw}/temp1_input"), &value);
        let zone = "sys/devices/virtual/thermal/thermal_zone0";
        write(&d, &std::format!("{zone}/type"), b"cpu-thermal\n");
        std::fs::create_dir_all(d.join(std::format!("{zone}/temp"))).unwrap();
        link(
            &d,
            "sys/class/thermal/thermal_zone0",
            &std::format!("../../../{zone}"),
        );
        link(&d, "sys/class/hwmon/hwmon0", &std::format!("../../../{hw}"));
        let r = Root::open(d.to_str().unwrap()).unwrap();
        let mut s = discover(&r, false);
        let kinds: std::vec::Vec<_> = s.sensors().map(|s| s.kind).collect();
        assert_eq!(kinds, [Kind::Zone, Kind::Hwmon]);
        assert_eq!(s.read(&r, &mut [0u8; BUF_LEN]).map(Temp::tenths), Some(331));
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Chosen by type or name, never by number: `acpitz` and the GPU are not
    /// the CPU; at most two kept, lowest-numbered first; the hottest wins;
    /// a sensor out of range gives nothing (not 0) after its second read.
    #[test]
    fn chosen_by_name_bounded_and_hottest() {
        let d = tree("names");
        let zones = [
            ("acpitz", "99000"),
            ("gpu-thermal", "98000"),
            ("cpu0-thermal", "50000"),
            ("cpu1-thermal", "52500"),
            ("cpu2-thermal", "90000"),
        ];
        for (i, (kind, temp)) in zones.iter().enumerate() {
            write(
                &d,
                &std::format!("sys/class/thermal/thermal_zone{i}/type"),
                kind.as_bytes(),
            );
            write(
                &d,
                &std::format!("sys/class/thermal/thermal_zone{i}/temp"),
                temp.as_bytes(),
            );
        }
        write(&d, "sys/class/hwmon/hwmon3/name", b"k10temp\n");
        write(&d, "sys/class/hwmon/hwmon3/temp1_input", b"70000\n");
        let r = Root::open(d.to_str().unwrap()).unwrap();
        let mut s = discover(&r, true);
        let names: std::vec::Vec<_> = s
            .sensors()
            .map(|s| std::string::String::from(s.name.as_str()))
            .collect();
        assert_eq!(names, ["cpu0-thermal", "cpu1-thermal"]);
        let mut buf = [0u8; BUF_LEN];
        assert_eq!(s.read(&r, &mut buf).map(Temp::tenths), Some(525));
        assert_eq!(s.open(), KEPT_SENSORS);
        write(&d, "sys/class/thermal/thermal_zone3/temp", b"-650788984\n");
        assert_eq!(s.read(&r, &mut buf).map(Temp::tenths), Some(500));
        write(&d, "sys/class/thermal/thermal_zone2/temp", b"-273000\n");
        assert_eq!(s.read(&r, &mut buf), None);
        // Without zones, the AMD hwmon.
        let d2 = tree("amd");
        write(&d2, "sys/class/thermal/thermal_zone0/type", b"acpitz\n");
        write(&d2, "sys/class/thermal/thermal_zone0/temp", b"27800\n");
        write(&d2, "sys/class/hwmon/hwmon1/name", b"k10temp\n");
        write(&d2, "sys/class/hwmon/hwmon1/temp1_input", b"70125\n");
        let r2 = Root::open(d2.to_str().unwrap()).unwrap();
        assert_eq!(
            discover(&r2, false).read(&r2, &mut buf).map(Temp::tenths),
            Some(701)
        );
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&d2).unwrap();
    }

    /// Only a value out of range is read a second time, and the second
    /// read's result stands.
    #[test]
    fn an_out_of_range_value_is_read_once_more() {
        let sane = Ok(Temp {
            milli_c: 48_000,
            non_standard: false,
        });
        let bogus = sample(Ok(b"-650788984\n"));
        assert_eq!(retry_out_of_range(bogus, || sane), sane);
        assert_eq!(retry_out_of_range(bogus, || bogus), bogus);
        let failed = sample(Err(ReadError::Read(Errno::INVAL)));
        assert_eq!(retry_out_of_range(failed, || unreachable!()), failed);
        assert_eq!(retry_out_of_range(sane, || unreachable!()), sane);
    }

    #[test]
    fn names() {
        for cpu in [
            &b"cpu-thermal"[..],
            b"cpu_thermal",
            b"cpu0-thermal",
            b"cpu7_thermal",
            b"soc-thermal",
            b"soc_thermal",
            b"bcm2835_thermal",
            b"x86_pkg_temp",
        ] {
            assert!(is_cpu_zone(cpu), "{cpu:?}");
        }
        for other in [
            &b"acpitz"[..],
            b"gpu-thermal",
            b"cpu-thermal2",
            b"cpux-thermal",
            b"thermal",
            b"-thermal",
            b"iwlwifi_1",
            b"pch_cannonlake",
            b"",
        ] {
            assert!(!is_cpu_zone(other), "{other:?}");
        }
        assert!(
            is_cpu_hwmon(b"coretemp") && is_cpu_hwmon(b"k10temp") && is_cpu_hwmon(b"cpu_thermal")
        );
        assert!(!is_cpu_hwmon(b"nvme") && !is_cpu_hwmon(b"acpitz") && !is_cpu_hwmon(b"rpi_volt"));
        assert!(is_zone_twin(b"cpu0_thermal", b"cpu0-thermal"));
        assert!(!is_zone_twin(b"cpu_thermal", b"cpu0-thermal"));
        assert!(!is_zone_twin(b"cpu-thermal", b"cpu_thermal"));
    }

    #[test]
    fn temperature_text() {
        assert_eq!(tenths(b"54500\n"), 545);
        assert_eq!(tenths(b"54550"), 546, "half away from zero");
        assert_eq!(tenths(b"54549"), 545);
        assert_eq!(tenths(b"-1250"), -13);
        assert_eq!(tenths(b"-1249"), -12);
        assert_eq!(tenths(b"0"), 0);
        assert_eq!(tenths(b"40.84"), 408);
        assert_eq!(tenths(b"40.85"), 409);
        assert_eq!(tenths(b"40.8499"), 408, "digits past the third cut");
        assert_eq!(tenths(b"-5.5"), -55);
        assert_eq!(tenths(b"-40000"), -400);
        assert_eq!(tenths(b"150000"), 1500);
        assert_eq!(
            parse_temp(b"150001"),
            Err(TempError::OutOfRange { milli_c: 150_001 })
        );
        assert_eq!(
            parse_temp(b"-40001"),
            Err(TempError::OutOfRange { milli_c: -40_001 })
        );
        assert_eq!(
            parse_temp(b"18446744073709551615"),
            Err(TempError::OutOfRange { milli_c: i64::MAX })
        );
        assert!(parse_temp(b"150.5").is_err());
        for bad in [
            &b""[..],
            b"-",
            b"+5",
            b"1e3",
            b"40.",
            b".5",
            b"4.0.1",
            b"40,84",
            b"18446744073709551616",
            b"99999999999999999.9",
            b"\xff",
        ] {
            assert_eq!(parse_temp(bad), Err(TempError::Malformed), "{bad:?}");
        }
    }

    /// The live root (this VM: no thermal zone, no hwmon, no cpufreq, no Pi
    /// firmware): discovery of all three readers returns without error and
    /// keeps within its bounds; found nothing reads as nothing, never 0.
    #[test]
    fn the_live_root_discovers_within_bounds() {
        use crate::kernel::{cpufreq::KeptPolicies, throttled::KeptPower};
        let r = Root::open("/").unwrap();
        let mut scratch = [MaybeUninit::uninit(); 4096];
        let mut buf = [0u8; 4096];
        let hwmons = Hwmons::list(&r, |_| true, &mut scratch, &mut buf);
        let mut t = KeptSensors::discover(&r, true, &hwmons, &mut scratch, &mut buf);
        let mut f = KeptPolicies::discover(&r, true, &mut scratch, &mut buf);
        let mut p = KeptPower::discover(&r, true, &hwmons, &mut buf);
        let (temp, pct, power) = (
            t.read(&r, &mut buf),
            f.read(&r, 0, &mut buf),
            p.read(&r, &mut buf),
        );
        std::eprintln!(
            "live: sensors {:?} -> {temp:?}; policies {} -> {pct:?}; power {:?} -> {power:?}",
            t.sensors().collect::<std::vec::Vec<_>>(),
            f.len(),
            p.source()
        );
        assert!(!t.is_empty() || temp.is_none());
        assert!(!f.is_empty() || pct.is_none());
        assert!(t.open() <= KEPT_SENSORS && f.open() <= crate::kernel::cpufreq::KEPT_POLICIES);
        assert!(t.open() + f.open() + p.open() <= 7);
    }
}
