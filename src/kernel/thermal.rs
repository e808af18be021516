//! CPU temperature: thermal zones (`/sys/class/thermal/thermal_zone<N>/`)
//! and hwmon sensors (`/sys/class/hwmon/hwmon<N>/`), chosen at start by
//! their `type` or `name`, never by their number.
//!
//! Both print millidegrees Celsius as a signed decimal integer (`54500` is
//! 54.5 °C: `thermal_zone_get_temp()` through `temp_show()`'s `%d\n`),
//! except that some SBC kernels' zones print whole degrees (the legacy
//! Allwinner kernel of the Pine A64: `31` is 31 °C): a zone value below
//! [`DEGREES_BELOW`] in magnitude is read as degrees, the rule DietPi and
//! pi-hole use ([`parse_zone_temp`]). hwmon is millidegrees by ABI, always.
//! A value at or below absolute zero (`-274000`, `THERMAL_TEMP_INVALID`
//! of an unset trip; `-273150`, an unset hwmon limit) or the 16-bit "not
//! set" value −32768 (°C or m°C) is no reading ([`TempError::NoReading`]).
//! A zone's `type` is its device-tree node name (`cpu-thermal`)
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
//! 0 °C; a value outside −40…150 °C (`-273000` from an unset emulated
//! zone) or no reading (`-650788984` from old Pi firmware, below absolute
//! zero) is read once more, then dropped. Trip points
//! (`trip_point_<N>_temp`, same unit, [`parse_zone_temp`] reads them) drive
//! fans and the critical shutdown: crossing one is not throttling.
//!
//! Old Pi firmware also returned `85000` now and then when the chip was
//! much cooler (raspberrypi/firmware#133): in range, so only its
//! neighbours tell. A jump of [`JUMP_MILLI_C`] or more from the previous
//! reading that the next one does not confirm is a bogus read
//! ([`is_bogus_jump`]); [`JumpGuard`] applies the rule to readings as they
//! come, for the sampler's rows and the summary's peak alike.
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

/// A zone's integer value below this in magnitude is whole degrees
/// Celsius, not millidegrees: no CPU is within 0.2 °C of freezing, and no
/// whole-degree value is 200 °C or more (DietPi's `G_OBTAIN_CPU_TEMP`,
/// pi-hole/web#129 for the Pine A64's `31`).
pub const DEGREES_BELOW: u64 = 200;

/// Absolute zero in millidegrees Celsius: a value at or below it is no
/// reading (an unset limit or trip, `THERMAL_TEMP_INVALID` −274000).
pub const ABSOLUTE_ZERO_MILLI_C: i64 = -273_150;

/// The "not set" value of a 16-bit signed temperature (`i16::MIN`), in
/// whatever unit the file prints: −32768 °C or m°C is no reading.
pub const NOT_SET: i64 = -32_768;

/// A jump between two readings, in millidegrees Celsius (20 °C), that
/// the next reading must confirm ([`is_bogus_jump`]).
pub const JUMP_MILLI_C: u32 = 20_000;

/// One temperature reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Temp {
    /// The temperature in millidegrees Celsius, within
    /// [`MIN_MILLI_C`]…[`MAX_MILLI_C`].
    pub milli_c: i32,
    /// The text was degrees, not the ABI's integer millidegrees: decimal
    /// (`40.84`, StarFive's vendor driver) or a whole zone value below
    /// [`DEGREES_BELOW`] (`31`, a legacy Allwinner kernel).
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
    /// No reading: at or below absolute zero ([`ABSOLUTE_ZERO_MILLI_C`]),
    /// or the "not set" value [`NOT_SET`].
    NoReading,
}

/// Parses a hwmon temperature: a signed decimal integer of millidegrees
/// Celsius (`54500\n` → 54.5 °C, the ABI), or a decimal with a point as
/// degrees Celsius (`40.84` → 40.84 °C, flagged [`Temp::non_standard`];
/// digits past the third decimal are cut).
///
/// # Errors
/// [`TempError::Malformed`] for anything else (empty, `+5`, `1e3`, a
/// number past `u64`); [`TempError::NoReading`] at or below absolute zero
/// or for [`NOT_SET`]; [`TempError::OutOfRange`] outside −40…150 °C.
///
/// ```
/// use headroom::kernel::thermal::{TempError, parse_temp};
/// assert_eq!(parse_temp(b"54500\n").unwrap().tenths(), 545);
/// assert_eq!(parse_temp(b"40.84").unwrap().milli_c, 40_840);
/// assert_eq!(
///     parse_temp(b"-273000"),
///     Err(TempError::OutOfRange { milli_c: -273_000 })
/// );
/// assert_eq!(parse_temp(b"-273150"), Err(TempError::NoReading));
/// ```
pub fn parse_temp(b: &[u8]) -> Result<Temp, TempError> {
    parse_scaled(b, false)
}

/// Parses a thermal zone's `temp` (or `trip_point_<N>_temp`): as
/// [`parse_temp`], except that an integer below [`DEGREES_BELOW`] in
/// magnitude is whole degrees Celsius (`31` → 31 °C, flagged
/// [`Temp::non_standard`]).
///
/// # Errors
/// As [`parse_temp`].
///
/// ```
/// use headroom::kernel::thermal::{TempError, parse_zone_temp};
/// assert_eq!(parse_zone_temp(b"31").unwrap().milli_c, 31_000);
/// assert_eq!(parse_zone_temp(b"41318\n").unwrap().milli_c, 41_318);
/// assert_eq!(parse_zone_temp(b"-274000"), Err(TempError::NoReading));
/// ```
pub fn parse_zone_temp(b: &[u8]) -> Result<Temp, TempError> {
    parse_scaled(b, true)
}

/// [`parse_temp`], and with `zone` [`parse_zone_temp`]'s whole degrees.
fn parse_scaled(b: &[u8], zone: bool) -> Result<Temp, TempError> {
    let t = trim(b);
    let (negative, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    let (magnitude, non_standard) = match digits.iter().position(|&c| c == b'.') {
        None => {
            let v = parse_u64(digits).ok_or(TempError::Malformed)?;
            if zone && v < DEGREES_BELOW {
                (v * 1000, true)
            } else {
                (v, false)
            }
        }
        Some(dot) => (decimal_milli(&digits[..dot], &digits[dot + 1..])?, true),
    };
    let magnitude = i64::try_from(magnitude).unwrap_or(i64::MAX);
    let milli_c = if negative { -magnitude } else { magnitude };
    // −32768 as printed (m°C), or as degrees (−32768000 m°C).
    let not_set = milli_c == NOT_SET * 1000 || (milli_c == NOT_SET && !non_standard);
    if not_set || milli_c <= ABSOLUTE_ZERO_MILLI_C {
        return Err(TempError::NoReading);
    }
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
/// error, or the text parsed as `kind` prints it ([`parse_zone_temp`] for
/// a zone, [`parse_temp`] else). Taking the read result lets a test give
/// the errno a real sensor returned (a file in a tree cannot fail that
/// way).
///
/// # Errors
/// [`SampleError::Read`] or [`SampleError::Temp`]; never a 0 °C stand-in.
pub fn sample(kind: Kind, read: Result<&[u8], ReadError>) -> Result<Temp, SampleError> {
    let b = read.map_err(SampleError::Read)?;
    match kind {
        Kind::Zone => parse_zone_temp(b),
        Kind::Hwmon | Kind::Vendor => parse_temp(b),
    }
    .map_err(SampleError::Temp)
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

/// `first`, or when its number was not believed (out of range, or no
/// reading: old Pi firmware's occasional `-650788984`, below absolute
/// zero; "re-reading the temperature will usually return a sane value",
/// raspberrypi/firmware#133) the result of `again`, a second read.
pub fn retry_unbelieved(
    first: Result<Temp, SampleError>,
    again: impl FnOnce() -> Result<Temp, SampleError>,
) -> Result<Temp, SampleError> {
    match first {
        Err(SampleError::Temp(TempError::OutOfRange { .. } | TempError::NoReading)) => again(),
        r => r,
    }
}

/// True when readings `a` and `b` (m°C) are [`JUMP_MILLI_C`] or more
/// apart.
const fn is_jump(a: i32, b: i32) -> bool {
    a.abs_diff(b) >= JUMP_MILLI_C
}

/// True when reading `this` (m°C) is a bogus read: a jump of
/// [`JUMP_MILLI_C`] or more from the previous reading `prev` that the next
/// reading `next` does not confirm (it is as far from `this`, or there is
/// none). No previous reading, no jump. Readings are the values read, not
/// ticks: a failed read in between is skipped.
///
/// ```
/// use headroom::kernel::thermal::is_bogus_jump;
/// // raspberrypi/firmware#133: 85 °C once between 48 °C readings.
/// assert!(is_bogus_jump(Some(48_000), 85_000, Some(48_500)));
/// // A step the next reading holds is real.
/// assert!(!is_bogus_jump(Some(48_000), 70_000, Some(71_000)));
/// assert!(!is_bogus_jump(None, 85_000, Some(48_000)));
/// ```
pub fn is_bogus_jump(prev: Option<i32>, this: i32, next: Option<i32>) -> bool {
    prev.is_some_and(|p| is_jump(p, this)) && next.is_none_or(|n| is_jump(this, n))
}

/// [`is_bogus_jump`] over readings as they come, in order: a reading that
/// jumps from the last believed one is held until the next reading
/// confirms or refutes it. Fixed size; one per series (the sampler's rows,
/// a summary's rows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JumpGuard {
    /// The last reading believed, m°C.
    last: Option<i32>,
    /// A reading that jumped from `last`, waiting for the next one.
    held: Option<i32>,
}

/// What one reading given to [`JumpGuard::push`] settles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settled {
    /// This reading is believed now (else it is held, or a held one was
    /// refuted and it jumps as well).
    pub this: bool,
    /// The reading held before: confirmed (`Some(true)`), a bogus read
    /// (`Some(false)`), or none was held.
    pub held: Option<bool>,
}

impl JumpGuard {
    /// Nothing read yet.
    pub const fn new() -> JumpGuard {
        JumpGuard {
            last: None,
            held: None,
        }
    }

    /// Takes the next reading `milli_c` and says what it settles. A reading
    /// held when the series ends is never confirmed: a bogus read.
    pub fn push(&mut self, milli_c: i32) -> Settled {
        let held = self.held.take().map(|h| {
            let confirmed = !is_bogus_jump(self.last, h, Some(milli_c));
            if confirmed {
                self.last = Some(h);
            }
            confirmed
        });
        let this = !self.last.is_some_and(|l| is_jump(l, milli_c));
        if this {
            self.last = Some(milli_c);
        } else {
            self.held = Some(milli_c);
        }
        Settled { this, held }
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
    /// root, and one more for a sensor whose value is not believed (the
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
            let first = sample(s.kind, k.read(root.fd(), &s.path, buf, Shape::Whole));
            let r = retry_unbelieved(first, || {
                sample(s.kind, k.read(root.fd(), &s.path, &mut *buf, Shape::Whole))
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
            let failed = sample(Kind::Zone, Err(ReadError::Read(e)));
            assert_eq!(failed, Err(SampleError::Read(ReadError::Read(e))));
            assert_eq!(hottest([failed]), None);
        }
        // 2013 firmware: the huge negative value, below absolute zero, is no
        // reading (read again); 85 °C is in range (its neighbours judge it:
        // case 51).
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
                Err(TempError::NoReading),
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
        let t = hottest([
            sample(Kind::Zone, Err(ReadError::Read(errs[0].1))),
            sample(Kind::Hwmon, Ok(&hwmon)),
        ])
        .unwrap();
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
            sample(Kind::Zone, Ok(b"45000\n")),
            sample(Kind::Zone, Err(ReadError::Read(Errno::TIMEDOUT))),
            sample(Kind::Zone, Ok(b"45500\n")),
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

    /// Only a value not believed (out of range, no reading) is read a
    /// second time, and the second read's result stands.
    #[test]
    fn an_unbelieved_value_is_read_once_more() {
        let sane = Ok(Temp {
            milli_c: 48_000,
            non_standard: false,
        });
        let bogus = sample(Kind::Zone, Ok(b"-650788984\n"));
        assert_eq!(retry_unbelieved(bogus, || sane), sane);
        assert_eq!(retry_unbelieved(bogus, || bogus), bogus);
        let far = sample(Kind::Zone, Ok(b"151000\n"));
        assert_eq!(retry_unbelieved(far, || sane), sane);
        let failed = sample(Kind::Zone, Err(ReadError::Read(Errno::INVAL)));
        assert_eq!(retry_unbelieved(failed, || unreachable!()), failed);
        let garbage = sample(Kind::Zone, Ok(b"hot\n"));
        assert_eq!(retry_unbelieved(garbage, || unreachable!()), garbage);
        assert_eq!(retry_unbelieved(sane, || unreachable!()), sane);
    }

    /// Case 51: a zone printing whole degrees (Pine A64 BSP `31`) beside a
    /// millidegree one (Odroid C2 `43000`); hwmon is millidegrees always.
    #[test]
    fn fixture_51_zone_in_whole_degrees() {
        let case = "51-thermal-whole-degrees-and-no-reading/hosts/";
        let zone = "sys/class/thermal/thermal_zone0/temp";
        let pine = fixture(&std::format!("{case}pine64-bsp-3.10/{zone}"));
        let t = parse_zone_temp(&pine).unwrap();
        assert_eq!((t.milli_c, t.tenths(), t.non_standard), (31_000, 310, true));
        let c2 = parse_zone_temp(&fixture(&std::format!("{case}odroid-c2/{zone}"))).unwrap();
        assert_eq!((c2.milli_c, c2.non_standard), (43_000, false));
        // The same text from a hwmon file is the ABI's 0.031 °C.
        assert_eq!(parse_temp(&pine).map(|t| t.milli_c), Ok(31));
        assert_eq!(sample(Kind::Hwmon, Ok(&pine)).map(|t| t.milli_c), Ok(31));
        assert_eq!(sample(Kind::Zone, Ok(&pine)).map(|t| t.milli_c), Ok(31_000));
        // The bound: 199 is degrees (out of range: 199 °C), 200 millidegrees.
        assert_eq!(
            parse_zone_temp(b"199\n"),
            Err(TempError::OutOfRange { milli_c: 199_000 })
        );
        assert_eq!(parse_zone_temp(b"200").map(|t| t.milli_c), Ok(200));
        assert_eq!(parse_zone_temp(b"150").map(|t| t.milli_c), Ok(150_000));
        assert_eq!(parse_zone_temp(b"-5").map(|t| t.tenths()), Ok(-50));
        assert_eq!(parse_zone_temp(b"0").map(|t| t.milli_c), Ok(0));
        // Decimal degrees are degrees in either file.
        assert_eq!(parse_zone_temp(b"40.84").map(|t| t.milli_c), Ok(40_840));
        // A live zone of whole degrees is read as such, through discovery.
        let d = tree("pine64");
        write(&d, "sys/class/thermal/thermal_zone0/type", b"cpu_thermal\n");
        write(&d, "sys/class/thermal/thermal_zone0/temp", &pine);
        let r = Root::open(d.to_str().unwrap()).unwrap();
        let t = discover(&r, false).read(&r, &mut [0u8; BUF_LEN]).unwrap();
        assert_eq!((t.tenths(), t.non_standard), (310, true));
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Case 51: unset trips and limits (at or below absolute zero) and the
    /// 16-bit "not set" value are no reading, not a temperature, and not
    /// read again; −273000 is only out of range.
    #[test]
    fn fixture_51_no_reading_values() {
        let case = "51-thermal-whole-degrees-and-no-reading/";
        let trip = fixture(&std::format!(
            "{case}hosts/x86-unset-trips/sys/class/thermal/thermal_zone9/trip_point_0_temp"
        ));
        assert_eq!(parse_zone_temp(&trip), Err(TempError::NoReading));
        let samples = fixture(&std::format!("{case}samples/no-reading.txt"));
        let rows: std::vec::Vec<std::vec::Vec<&[u8]>> = samples
            .split(|&c| c == b'\n')
            .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
            .map(|l| l.split(|&c| c == b'\t').collect())
            .collect();
        assert_eq!(rows.len(), 5);
        for row in rows {
            let (v, unit) = (row[0], row[1]);
            assert_eq!(parse_zone_temp(v), Err(TempError::NoReading), "{v:?}");
            let no = Err(SampleError::Temp(TempError::NoReading));
            assert_eq!(sample(Kind::Hwmon, Ok(v)), no, "{v:?} {unit:?}");
            assert_eq!(retry_unbelieved(no, || no), no, "read twice, still none");
        }
        assert_eq!(parse_temp(b"-273.15"), Err(TempError::NoReading));
        assert_eq!(parse_temp(b"-32768.0"), Err(TempError::NoReading));
        // Just above absolute zero: a number, out of range (read again).
        for v in [&b"-273000"[..], b"-273149", b"-41"] {
            assert!(
                matches!(parse_zone_temp(v), Err(TempError::OutOfRange { .. })),
                "{v:?}"
            );
        }
        // Whole degrees are below 200 in magnitude: −273 is millidegrees.
        assert_eq!(parse_zone_temp(b"-273").map(|t| t.milli_c), Ok(-273));
        assert_eq!(
            parse_zone_temp(b"-199"),
            Err(TempError::OutOfRange { milli_c: -199_000 })
        );
        // −32.767 °C is a (cold) number, not "not set".
        assert_eq!(parse_temp(b"-32767").map(|t| t.milli_c), Ok(-32_767));
    }

    /// Case 51's bogus 85 °C (raspberrypi/firmware#133) between sane
    /// readings: a bogus read by its neighbours, held then dropped by the
    /// guard; a jump the next reading keeps is believed.
    #[test]
    fn fixture_51_bogus_jump() {
        let text = fixture("51-thermal-whole-degrees-and-no-reading/samples/bogus-jump.txt");
        let r: std::vec::Vec<i32> = text
            .split(|&c| c == b'\n')
            .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
            .map(|l| parse_zone_temp(l).unwrap().milli_c)
            .collect();
        assert_eq!(r, [48_000, 48_500, 85_000, 48_300, 49_000]);
        assert!(is_bogus_jump(Some(r[1]), r[2], Some(r[3])));
        assert!(!is_bogus_jump(Some(r[0]), r[1], Some(r[2])));
        let mut g = JumpGuard::new();
        let settled: std::vec::Vec<Settled> = r.iter().map(|&v| g.push(v)).collect();
        let believed: std::vec::Vec<bool> = settled.iter().map(|s| s.this).collect();
        assert_eq!(believed, [true, true, false, true, true]);
        assert_eq!(settled[3].held, Some(false), "85 °C refuted by 48.3 °C");
        // A real step: held once, confirmed by the next reading.
        let mut g = JumpGuard::new();
        let step = [48_000, 70_000, 71_000, 71_500].map(|v| g.push(v));
        assert_eq!(step.map(|s| s.this), [true, false, true, true]);
        assert_eq!(step[2].held, Some(true));
        assert!(!is_bogus_jump(Some(48_000), 70_000, Some(71_000)));
        // Exactly 20 °C is a jump; 19.999 °C is not.
        assert!(is_bogus_jump(Some(40_000), 60_000, Some(40_000)));
        assert!(!is_bogus_jump(Some(40_000), 59_999, Some(40_000)));
        // A downward spike too; no next reading confirms nothing.
        assert!(is_bogus_jump(Some(60_000), 30_000, Some(61_000)));
        assert!(is_bogus_jump(Some(60_000), 30_000, None));
        // A refuted reading that jumps as well is held in turn, judged
        // against the last believed one.
        let mut g = JumpGuard::new();
        let s = [40_000, 85_000, 10_000, 40_500].map(|v| g.push(v));
        assert_eq!(s.map(|s| s.this), [true, false, false, true]);
        assert_eq!(s.map(|s| s.held), [None, None, Some(false), Some(false)]);
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
        let mut p = KeptPower::discover(&r, true, &hwmons, &mut scratch, &mut buf);
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
