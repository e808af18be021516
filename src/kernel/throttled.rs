//! The Raspberry Pi firmware's throttle word (`get_throttled` of the
//! firmware's platform device: `/sys/devices/platform/soc/soc:firmware/`
//! on a Pi 4 and before, `…/soc@107c000000/soc@107c000000:firmware/` on
//! a Pi 5, found by [`find_get_throttled`]) and, where that file is absent
//! (upstream kernels, Pi OS kernels since it was removed), the
//! under-voltage alarm of the `rpi_volt` hwmon device (`in0_lcrit_alarm`).
//!
//! The sysfs word is deprecated and cached: `get_throttled_show()` prints
//! the value the firmware gave the last time something asked it (the
//! hwmon driver's poll), so it can read 0 while `vcgencmd get_throttled`
//! says throttled, and the first read logs "deprecated, use hwmon sysfs
//! instead" with a backtrace. Every output that shows the word says so
//! ([`WORD_SOURCE`]).
//!
//! `get_throttled_show()` prints the firmware's 32-bit word as `%x\n`:
//! lowercase hex, no `0x`, no padding (`50005`; read as decimal it would
//! be garbage flags). `vcgencmd get_throttled` prints `throttled=0x50005`;
//! both forms are accepted, in either case. The bits:
//!
//! | bit | now (live) | bit | has occurred since boot (sticky) |
//! |---|---|---|---|
//! | 0 | `under-voltage` | 16 | under-voltage |
//! | 1 | `freq-capped` (ARM frequency capped) | 17 | frequency capping |
//! | 2 | `throttled` | 18 | throttling |
//! | 3 | `soft-temp-limit` (soft temperature limit active) | 19 | soft temperature limit |
//!
//! Other bits are kept in [`Throttled::raw`], never rejected. The live
//! bits decay over ≈3 s (a history shifted every 100 ms), so a 1 s sampler
//! sees short dips; the sticky bits stay set until reboot, so a build that
//! starts with them set tells nothing: [`sticky_turned_on`] gives what set
//! during an interval.
//!
//! `rpi_volt`'s `in0_lcrit_alarm` is `!!(throttled & BIT(16))` from a poll
//! every 2 s that clears the sticky bits: 1 means under-voltage in the last
//! poll window, and is all it tells (no voltage, no other flag).
//!
//! # References
//! raspberrypi/linux `drivers/firmware/raspberrypi.c` (`get_throttled_show`),
//! `drivers/hwmon/raspberrypi-hwmon.c`, `Documentation/hwmon/sysfs-interface.rst`
//! (`in[0-*]_lcrit_alarm`); raspberrypi/documentation, `vcgencmd get_throttled`.

use core::mem::MaybeUninit;

use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::FileType;

use crate::kernel::hwmon::{HWMON_DIR, Hwmons};
use crate::kernel::kept::{Kept, Shape};
use crate::kernel::parse::{ParseError, ParseErrorKind, parse_hex_u64, trim};
use crate::kernel::root::{ReadError, Root, for_each_entry, open_dir_at, read_at};
use crate::kernel::sysfs::{self, Path, entry_path};

/// The platform devices, relative to the root: the firmware's node is
/// one of them or the child of one (the SoC's bus, `soc` or
/// `soc@107c000000`).
pub const PLATFORM_DIR: &str = "sys/devices/platform";

/// How the firmware's device name ends: `soc:firmware`,
/// `soc@107c000000:firmware` (the parent's name, `:`, the device-tree
/// node's).
pub const FIRMWARE_SUFFIX: &[u8] = b":firmware";

/// The throttle word's file in the firmware's node.
pub const GET_THROTTLED: &str = "get_throttled";

/// Where the word comes from, as every output names it.
pub const WORD_SOURCE: &str =
    "sysfs get_throttled (cached: refreshed only when the firmware is polled)";

/// Where `rpi_volt`'s alarm comes from, as every output names it.
pub const ALARM_SOURCE: &str = "rpi_volt in0_lcrit_alarm (under-voltage only)";

/// The name of the Pi's voltage hwmon device.
pub const RPI_VOLT: &[u8] = b"rpi_volt";

/// Buffer for one read of either file, in bytes (`ffffffff\n` is 9).
pub const BUF_LEN: usize = 64;

/// A set of the four throttle conditions, bit 0 `under-voltage` … bit 3
/// `soft-temp-limit` (the live bits' positions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(pub u8);

impl Flags {
    /// Under-voltage (below ≈4.63 V).
    pub const UNDER_VOLTAGE: Flags = Flags(1);
    /// ARM frequency capped.
    pub const FREQ_CAPPED: Flags = Flags(1 << 1);
    /// Throttled.
    pub const THROTTLED: Flags = Flags(1 << 2);
    /// Soft temperature limit active.
    pub const SOFT_TEMP_LIMIT: Flags = Flags(1 << 3);
    /// All four.
    pub const ALL: Flags = Flags(0x0f);

    /// The names, in bit order, as the CSV's `throttled` field spells them.
    pub const NAMES: [&'static str; 4] = [
        "under-voltage",
        "freq-capped",
        "throttled",
        "soft-temp-limit",
    ];

    /// True when no condition is set.
    pub const fn is_empty(self) -> bool {
        self.0 & 0x0f == 0
    }

    /// The conditions of both.
    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// True when every condition of `other` is set.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Longest text [`format_flags`] writes, in bytes: all four names and
/// three `|`.
pub const FLAGS_TEXT_LEN: usize = 51;

/// The text of no condition: the source was read and no flag is set (an
/// empty field is no reading).
pub const NONE: &str = "none";

/// Writes the set conditions' names joined by `|` in bit order
/// (`under-voltage|throttled`; [`NONE`] for none) into `out`.
///
/// `None` when `out` is shorter than the text ([`FLAGS_TEXT_LEN`] always
/// suffices).
///
/// ```
/// use headroom::kernel::throttled::{FLAGS_TEXT_LEN, Flags, format_flags};
/// let mut out = [0u8; FLAGS_TEXT_LEN];
/// assert_eq!(format_flags(Flags(0b101), &mut out), Some("under-voltage|throttled"));
/// assert_eq!(format_flags(Flags(0), &mut out), Some("none"));
/// assert_eq!(format_flags(Flags(0xff), &mut out).map(str::len), Some(FLAGS_TEXT_LEN));
/// assert_eq!(format_flags(Flags(0b101), &mut [0u8; 8]), None);
/// ```
pub fn format_flags(flags: Flags, out: &mut [u8]) -> Option<&str> {
    if flags.is_empty() {
        return Some(NONE);
    }
    let mut len = 0;
    for (bit, name) in Flags::NAMES.iter().enumerate() {
        if flags.0 & (1 << bit) == 0 {
            continue;
        }
        if len > 0 {
            *out.get_mut(len)? = b'|';
            len += 1;
        }
        out.get_mut(len..len + name.len())?
            .copy_from_slice(name.as_bytes());
        len += name.len();
    }
    core::str::from_utf8(out.get(..len)?).ok()
}

/// Parses the text [`format_flags`] writes, in any order, white space
/// around it ignored; [`NONE`] is no condition.
///
/// # Errors
/// [`ParseErrorKind::Malformed`] for an unknown name or an empty one
/// (empty text, `a||b`, a trailing `|`, `none` beside a name).
pub fn parse_flags(b: &[u8]) -> Result<Flags, ParseError> {
    let t = trim(b);
    if t == NONE.as_bytes() {
        return Ok(Flags(0));
    }
    let mut flags = 0;
    for part in t.split(|&c| c == b'|') {
        let bit = Flags::NAMES
            .iter()
            .position(|n| n.as_bytes() == part)
            .ok_or(ParseError::at(ParseErrorKind::Malformed, 1))?;
        flags |= 1 << bit;
    }
    Ok(Flags(flags))
}

/// The firmware's throttle word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Throttled(pub u32);

impl Throttled {
    /// The whole word, unknown bits included.
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// The conditions active now (bits 0–3).
    pub const fn live(self) -> Flags {
        Flags((self.0 & 0x0f) as u8)
    }

    /// The conditions that have occurred since boot (bits 16–19).
    pub const fn sticky(self) -> Flags {
        Flags(((self.0 >> 16) & 0x0f) as u8)
    }
}

/// Parses the throttle word: bare hex as sysfs prints it (`50005\n`),
/// with `0x`, or vcgencmd's `throttled=0x50005`; either case; white space
/// around it ignored.
///
/// # Errors
/// [`ParseErrorKind::BadNumber`] when what is left is not 1–8 hex digits.
///
/// ```
/// use headroom::kernel::throttled::{Flags, parse_throttled};
/// let w = parse_throttled(b"throttled=0x50005").unwrap();
/// assert_eq!(w.live(), Flags(0b101));
/// assert_eq!(parse_throttled(b"50005\n"), Ok(w));
/// ```
pub fn parse_throttled(b: &[u8]) -> Result<Throttled, ParseError> {
    let t = trim(b);
    let t = t.strip_prefix(b"throttled=").unwrap_or(t);
    let t = t
        .strip_prefix(b"0x")
        .or_else(|| t.strip_prefix(b"0X"))
        .unwrap_or(t);
    parse_hex_u64(t)
        .and_then(|v| u32::try_from(v).ok())
        .map(Throttled)
        .ok_or(ParseError::at(ParseErrorKind::BadNumber, 1))
}

/// The sticky conditions (bits 16–19) set in `now` but not in `before`:
/// what occurred between two reads, not what was already set when the
/// build began.
///
/// ```
/// use headroom::kernel::throttled::{Flags, Throttled, sticky_turned_on};
/// let start = Throttled(0x50000);
/// assert!(sticky_turned_on(start, Throttled(0x50005)).is_empty());
/// assert_eq!(sticky_turned_on(start, Throttled(0xd0000)), Flags::SOFT_TEMP_LIMIT);
/// ```
pub const fn sticky_turned_on(before: Throttled, now: Throttled) -> Flags {
    Flags(now.sticky().0 & !before.sticky().0)
}

/// Parses `in0_lcrit_alarm`: `0` or `1`.
///
/// # Errors
/// [`ParseErrorKind::Malformed`] for anything else.
pub fn parse_alarm(b: &[u8]) -> Result<bool, ParseError> {
    match trim(b) {
        b"0" => Ok(false),
        b"1" => Ok(true),
        _ => Err(ParseError::at(ParseErrorKind::Malformed, 1)),
    }
}

/// The conditions the source of a `throttled` field read back from a CSV
/// could see. The CSV does not name its source, but only the firmware's
/// word sets freq-capped, throttled or soft-temp-limit: a field naming one
/// shows all four were seen. `none` and `under-voltage`, which `rpi_volt`
/// writes too, show under-voltage alone.
///
/// ```
/// use headroom::kernel::throttled::{Flags, seen_in_field};
/// assert_eq!(seen_in_field(Flags(0)), Flags::UNDER_VOLTAGE);
/// assert_eq!(seen_in_field(Flags::UNDER_VOLTAGE), Flags::UNDER_VOLTAGE);
/// assert_eq!(seen_in_field(Flags::THROTTLED), Flags::ALL);
/// ```
pub const fn seen_in_field(flags: Flags) -> Flags {
    if flags.0 & !Flags::UNDER_VOLTAGE.0 & Flags::ALL.0 != 0 {
        Flags::ALL
    } else {
        Flags::UNDER_VOLTAGE
    }
}

/// What one read of the power source gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Power {
    /// The firmware's whole word.
    Word(Throttled),
    /// `rpi_volt`'s alarm: under-voltage in its last 2 s poll, or not.
    UnderVoltageAlarm(bool),
}

impl Power {
    /// The conditions active now (only `under-voltage` from the alarm).
    pub const fn live(self) -> Flags {
        match self {
            Power::Word(w) => w.live(),
            Power::UnderVoltageAlarm(true) => Flags::UNDER_VOLTAGE,
            Power::UnderVoltageAlarm(false) => Flags(0),
        }
    }

    /// The conditions this source can see: all four from the word,
    /// under-voltage alone from the alarm (the other three are unknown,
    /// not unset).
    pub const fn seen(self) -> Flags {
        match self {
            Power::Word(_) => Flags::ALL,
            Power::UnderVoltageAlarm(_) => Flags::UNDER_VOLTAGE,
        }
    }

    /// Where it was read, as outputs name it: [`WORD_SOURCE`] or
    /// [`ALARM_SOURCE`].
    pub const fn source(self) -> &'static str {
        match self {
            Power::Word(_) => WORD_SOURCE,
            Power::UnderVoltageAlarm(_) => ALARM_SOURCE,
        }
    }

    /// The word, when the source is the firmware's.
    pub const fn word(self) -> Option<Throttled> {
        match self {
            Power::Word(w) => Some(w),
            Power::UnderVoltageAlarm(_) => None,
        }
    }
}

/// Why one read of the power source gave nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleError {
    /// No source was found at start.
    Absent,
    /// The read failed.
    Read(ReadError),
    /// The text did not parse.
    Parse(ParseError),
}

/// Which file the power flags come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The firmware's [`GET_THROTTLED`], at this path.
    Firmware(Path),
    /// The `in0_lcrit_alarm` of the `rpi_volt` hwmon device, at this path.
    RpiVolt(Path),
    /// Neither: not a Raspberry Pi, or its kernel has neither file.
    None,
}

/// Finds the firmware's throttle word under the root `dir`: the
/// [`GET_THROTTLED`] file of an entry of [`PLATFORM_DIR`], or of an entry
/// one level below, whose name ends in [`FIRMWARE_SUFFIX`], that reads and
/// parses; the path and the word read. Looks at every entry of
/// [`PLATFORM_DIR`] (each directory among them listed in turn), in constant
/// memory. `None` when there is none: unknown, not 0.
///
/// `scratch` is the getdents64(2) buffer (split in two for the two
/// levels: 64 bytes or more); `buf` receives the word ([`BUF_LEN`]).
pub fn find_get_throttled(
    dir: BorrowedFd<'_>,
    scratch: &mut [MaybeUninit<u8>],
    buf: &mut [u8],
) -> Option<(Path, Throttled)> {
    let platform = open_dir_at(dir, PLATFORM_DIR).ok()?;
    let half = scratch.len() / 2;
    let (outer, inner) = scratch.split_at_mut(half);
    let base = PLATFORM_DIR.as_bytes();
    let mut found = None;
    let _ = for_each_entry(platform.as_fd(), outer, |name, kind| {
        if name.ends_with(FIRMWARE_SUFFIX) {
            found = word_at(dir, &[base, b"/", name], buf);
        } else if matches!(kind, FileType::Directory | FileType::Unknown)
            && let Some(sub) = sysfs::path(&[base, b"/", name])
            && let Ok(fd) = open_dir_at(dir, &sub)
        {
            let _ = for_each_entry(fd.as_fd(), inner, |child, _| {
                if child.ends_with(FIRMWARE_SUFFIX) {
                    found = word_at(dir, &[sub.as_bytes(), b"/", child], buf);
                }
                found.is_none()
            });
        }
        found.is_none()
    });
    found
}

/// The [`GET_THROTTLED`] of the node at `node` (parts of its path under
/// the root) when it reads and parses.
fn word_at(dir: BorrowedFd<'_>, node: &[&[u8]; 3], buf: &mut [u8]) -> Option<(Path, Throttled)> {
    let [a, b, c] = *node;
    let p = sysfs::path(&[a, b, c, b"/", GET_THROTTLED.as_bytes()])?;
    let w = parse_throttled(read_at(dir, &p, buf).ok()?).ok()?;
    Some((p, w))
}

/// The power source found at start, read through one kept descriptor.
#[derive(Debug)]
pub struct KeptPower {
    source: Source,
    kept: Kept,
    /// What discovery read from the source, parsed ([`KeptPower::first`]).
    first: Option<Power>,
}

impl KeptPower {
    /// Finds the source under `root`, once: the firmware's word when
    /// [`find_get_throttled`] finds one, else the lowest-numbered hwmon
    /// named `rpi_volt` with an `in0_lcrit_alarm`, else [`Source::None`]
    /// (no error: most hosts). Kept open from its first read when `keep`
    /// (the live root).
    ///
    /// `scratch` is the getdents64(2) buffer (64 bytes or more); `buf`
    /// receives each file ([`BUF_LEN`] bytes).
    pub fn discover(
        root: &Root,
        keep: bool,
        hwmons: &Hwmons,
        scratch: &mut [MaybeUninit<u8>],
        buf: &mut [u8],
    ) -> KeptPower {
        let dir = root.fd();
        let (source, first) = match find_get_throttled(dir, scratch, buf) {
            Some((p, w)) => (Source::Firmware(p), Some(Power::Word(w))),
            None => rpi_volt(dir, hwmons, buf),
        };
        KeptPower {
            source,
            kept: Kept::new(keep),
            first,
        }
    }

    /// What discovery read from the source it chose, parsed: the figure
    /// now for a caller that reads once (`status`), with no second read.
    /// `None` when there is no source or its alarm did not parse.
    pub fn first(&self) -> Option<Power> {
        self.first
    }

    /// The source found at start.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Descriptors held now (0 or 1).
    pub fn open(&self) -> usize {
        usize::from(self.kept.is_open())
    }

    /// Reads the source now: one pread on the live root. `buf`:
    /// [`BUF_LEN`] bytes.
    ///
    /// # Errors
    /// [`SampleError::Absent`] when nothing was found at start, else the
    /// read or parse error of this tick (the next tick tries again).
    pub fn read(&mut self, root: &Root, buf: &mut [u8]) -> Result<Power, SampleError> {
        let path = match &self.source {
            Source::Firmware(p) | Source::RpiVolt(p) => p.as_str(),
            Source::None => return Err(SampleError::Absent),
        };
        let b = self
            .kept
            .read(root.fd(), path, buf, Shape::Whole)
            .map_err(SampleError::Read)?;
        match self.source {
            Source::Firmware(_) => parse_throttled(b).map(Power::Word),
            _ => parse_alarm(b).map(Power::UnderVoltageAlarm),
        }
        .map_err(SampleError::Parse)
    }
}

/// The lowest-numbered hwmon named [`RPI_VOLT`] in `hwmons` whose
/// `in0_lcrit_alarm` reads, with that read parsed; else [`Source::None`].
fn rpi_volt(dir: BorrowedFd<'_>, hwmons: &Hwmons, buf: &mut [u8]) -> (Source, Option<Power>) {
    for (n, name) in hwmons.iter() {
        if name.as_bytes() != RPI_VOLT {
            continue;
        }
        let Some(p) = entry_path(HWMON_DIR, "hwmon", n, "in0_lcrit_alarm") else {
            continue;
        };
        if let Ok(b) = read_at(dir, &p, buf) {
            let first = parse_alarm(b).ok().map(Power::UnderVoltageAlarm);
            return (Source::RpiVolt(p), first);
        }
    }
    (Source::None, None)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use core::mem::MaybeUninit;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

    fn root(case: &str) -> Root {
        Root::open(&std::format!("{FIX}{case}")).unwrap()
    }

    fn discover(r: &Root, keep: bool) -> KeptPower {
        let mut scratch = [MaybeUninit::uninit(); 1024];
        let hwmons = Hwmons::list(r, |n| n == RPI_VOLT, &mut scratch, &mut [0u8; BUF_LEN]);
        KeptPower::discover(r, keep, &hwmons, &mut scratch, &mut [0u8; BUF_LEN])
    }

    fn firmware(path: &str) -> Source {
        Source::Firmware(Path::try_from(path).unwrap())
    }

    #[test]
    fn fixture_36_rpi_get_throttled_50005() {
        let r = root("36-rpi-get-throttled-50005");
        let mut p = discover(&r, false);
        assert_eq!(
            p.source(),
            &firmware("sys/devices/platform/soc/soc:firmware/get_throttled")
        );
        let w = p.read(&r, &mut [0u8; BUF_LEN]).unwrap().word().unwrap();
        assert_eq!(w.raw(), 0x50005);
        assert_eq!(w.raw(), 327_685);
        assert_eq!(w.live(), Flags(0b0101));
        assert!(w.live().contains(Flags::UNDER_VOLTAGE) && w.live().contains(Flags::THROTTLED));
        assert!(!w.live().contains(Flags::FREQ_CAPPED));
        assert!(!w.live().contains(Flags::SOFT_TEMP_LIMIT));
        assert_eq!(w.sticky(), Flags(0b0101));
        assert_eq!(w.raw() & !0x000f_000f, 0, "other bits 0");
        let mut out = [0u8; FLAGS_TEXT_LEN];
        assert_eq!(
            format_flags(w.live(), &mut out),
            Some("under-voltage|throttled")
        );
        assert_eq!(p.open(), 0, "a tree is never kept");
        // The three textual forms of one word; not decimal (0xC355).
        for text in [
            &b"50005"[..],
            b"50005\n",
            b"0x50005",
            b"0X50005\n",
            b"throttled=0x50005\n",
            b"throttled=0x50005",
        ] {
            assert_eq!(parse_throttled(text), Ok(Throttled(0x50005)), "{text:?}");
        }
        // 0x50000: occurred, not now.
        let occurred = parse_throttled(b"50000\n").unwrap();
        assert!(occurred.live().is_empty());
        assert_eq!(occurred.sticky(), Flags(0b0101));
        // sensor.rpi_power#6 and OctoPrint-NavbarTemp#75.
        let soft = parse_throttled(b"80000").unwrap();
        assert_eq!(
            (soft.live(), soft.sticky()),
            (Flags(0), Flags::SOFT_TEMP_LIMIT)
        );
        let soft_now = parse_throttled(b"80008").unwrap();
        assert_eq!(soft_now.live(), Flags::SOFT_TEMP_LIMIT);
        let capped = parse_throttled(b"throttled=0x20002").unwrap();
        assert_eq!(
            (capped.live(), capped.sticky()),
            (Flags::FREQ_CAPPED, Flags::FREQ_CAPPED)
        );
        assert_eq!(parse_throttled(b"throttled=0x0"), Ok(Throttled(0)));
        // The word from vcgencmd.txt: started at 0x50000, then 0x50005:
        // nothing new occurred during that interval, though it is now.
        assert!(sticky_turned_on(occurred, w).is_empty());
        assert_eq!(
            sticky_turned_on(Throttled(0), w),
            Flags::UNDER_VOLTAGE.union(Flags::THROTTLED)
        );
    }

    #[test]
    fn unknown_bits_are_kept_and_garbage_rejected() {
        let w = parse_throttled(b"e00f000f").unwrap();
        assert_eq!(w.raw(), 0xe00f_000f);
        assert_eq!((w.live(), w.sticky()), (Flags(0x0f), Flags(0x0f)));
        for bad in [
            &b""[..],
            b"0x",
            b"throttled=",
            b"1 2",
            b"-1",
            b"100000000",
            b"5g",
        ] {
            assert!(parse_throttled(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn flags_text_round_trips() {
        let mut out = [0u8; FLAGS_TEXT_LEN];
        for bits in 0..16u8 {
            let text = format_flags(Flags(bits), &mut out).unwrap();
            assert_eq!(parse_flags(text.as_bytes()), Ok(Flags(bits)), "{text}");
        }
        assert_eq!(format_flags(Flags(0), &mut []), Some("none"));
        assert_eq!(parse_flags(b"none\n"), Ok(Flags(0)));
        assert_eq!(parse_flags(b"throttled|under-voltage\n"), Ok(Flags(0b101)));
        // Empty is no reading, not "none": the caller's to say.
        for bad in [
            &b"throttled|"[..],
            b"|",
            b"a||b",
            b"Throttled",
            b"hot",
            b"",
            b"none|throttled",
            b"None",
        ] {
            assert!(parse_flags(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            format_flags(Flags(0xff), &mut out).unwrap().len(),
            FLAGS_TEXT_LEN
        );
        assert_eq!(format_flags(Flags(1), &mut [0u8; 12]), None);
    }

    #[test]
    fn fixture_38_rpi4_hwmon_rpi_volt_cpu_thermal() {
        let r = root("38-rpi4-hwmon-rpi_volt-cpu_thermal");
        let mut p = discover(&r, false);
        assert_eq!(
            p.source(),
            &Source::RpiVolt(Path::try_from("sys/class/hwmon/hwmon1/in0_lcrit_alarm").unwrap())
        );
        let now = p.read(&r, &mut [0u8; BUF_LEN]).unwrap();
        assert_eq!(now, Power::UnderVoltageAlarm(false));
        assert!(now.live().is_empty() && now.word().is_none());
        assert_eq!(Power::UnderVoltageAlarm(true).live(), Flags::UNDER_VOLTAGE);
        assert_eq!(parse_alarm(b"1\n"), Ok(true));
        assert!(parse_alarm(b"2").is_err() && parse_alarm(b"").is_err());
    }

    #[test]
    fn no_source_is_absent_not_an_error_at_start() {
        let r = root("40-riscv-starfive-thermal/hosts/beaglev-jh7100-mainline-wip");
        let mut p = discover(&r, true);
        assert_eq!(p.source(), &Source::None);
        assert_eq!(p.read(&r, &mut [0u8; BUF_LEN]), Err(SampleError::Absent));
        assert_eq!(p.open(), 0);
    }

    /// Case 52: the word is found under the firmware node of a Pi 4 and of
    /// a Pi 5 (`soc@107c000000:firmware`), read as `%x`; a Pi 5 kernel
    /// without the file has no word (unknown, not 0) and falls back on
    /// rpi_volt.
    #[test]
    fn fixture_52_rpi_get_throttled_firmware_nodes() {
        let host = "52-rpi-get-throttled-firmware-nodes/hosts/";
        let mut buf = [0u8; BUF_LEN];
        let r = root(&std::format!("{host}pi4-6.6"));
        let mut p = discover(&r, false);
        let pi4 = "sys/devices/platform/soc/soc:firmware/get_throttled";
        assert_eq!(p.source(), &firmware(pi4));
        assert_eq!(p.first(), Some(Power::Word(Throttled(0x50005))));
        assert_eq!(p.read(&r, &mut buf), Ok(Power::Word(Throttled(0x50005))));
        assert_eq!(p.first().map(Power::source), Some(WORD_SOURCE));
        let r = root(&std::format!("{host}pi5-6.6"));
        let mut p = discover(&r, false);
        let pi5 = "sys/devices/platform/soc@107c000000/soc@107c000000:firmware/get_throttled";
        assert_eq!(p.source(), &firmware(pi5));
        let w = p.read(&r, &mut buf).unwrap();
        assert_eq!(w, Power::Word(Throttled(0)));
        let mut text = [0u8; FLAGS_TEXT_LEN];
        assert_eq!(format_flags(w.live(), &mut text), Some(NONE));
        let r = root(&std::format!("{host}pi5-6.12-removed"));
        let mut scratch = [MaybeUninit::uninit(); 256];
        assert_eq!(find_get_throttled(r.fd(), &mut scratch, &mut buf), None);
        let mut p = discover(&r, false);
        assert_eq!(
            p.source(),
            &Source::RpiVolt(Path::try_from("sys/class/hwmon/hwmon2/in0_lcrit_alarm").unwrap())
        );
        let alarm = p.read(&r, &mut buf).unwrap();
        assert_eq!(alarm, Power::UnderVoltageAlarm(false));
        assert_eq!(alarm.source(), ALARM_SOURCE);
    }

    /// A firmware node right under the platform directory is found too;
    /// one whose word does not parse is skipped for the next; other
    /// devices, files and deeper levels are not taken.
    #[test]
    fn the_firmware_node_is_searched_two_levels_deep() {
        let d = std::env::temp_dir().join(std::format!("headroom-fw-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let put = |rel: &str, text: &str| {
            let f = d.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        };
        let base = "sys/devices/platform";
        put(&std::format!("{base}/uevent"), "");
        put(&std::format!("{base}/serial8250/tty/ttyS0/dev"), "4:64\n");
        put(
            &std::format!("{base}/soc/deep/x:firmware/get_throttled"),
            "4\n",
        );
        put(
            &std::format!("{base}/soc/soc:firmware/get_throttled"),
            "zz\n",
        );
        let r = Root::open(d.to_str().unwrap()).unwrap();
        let mut scratch = [MaybeUninit::uninit(); 256];
        let mut buf = [0u8; BUF_LEN];
        assert_eq!(find_get_throttled(r.fd(), &mut scratch, &mut buf), None);
        put(
            &std::format!("{base}/bcm:firmware/get_throttled"),
            "80008\n",
        );
        let (p, w) = find_get_throttled(r.fd(), &mut scratch, &mut buf).unwrap();
        assert_eq!(
            p.as_str(),
            "sys/devices/platform/bcm:firmware/get_throttled"
        );
        assert_eq!(w.live(), Flags::SOFT_TEMP_LIMIT);
        std::fs::remove_dir_all(&d).unwrap();
        // No platform directory at all (a container's /sys): none.
        let r = root("51-thermal-whole-degrees-and-no-reading/hosts/odroid-c2");
        assert_eq!(find_get_throttled(r.fd(), &mut scratch, &mut buf), None);
    }

    /// The live root keeps the word's descriptor: one, at most.
    #[test]
    fn a_kept_word_holds_one_descriptor() {
        let d = std::env::temp_dir().join(std::format!("headroom-thr-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let fw = d.join("sys/devices/platform/soc/soc:firmware");
        std::fs::create_dir_all(&fw).unwrap();
        std::fs::write(fw.join("get_throttled"), "0\n").unwrap();
        let r = Root::open(d.to_str().unwrap()).unwrap();
        let mut p = discover(&r, true);
        let mut buf = [0u8; BUF_LEN];
        assert_eq!(p.read(&r, &mut buf), Ok(Power::Word(Throttled(0))));
        assert_eq!(p.open(), 1);
        std::fs::write(fw.join("get_throttled"), "zz\n").unwrap();
        assert!(matches!(p.read(&r, &mut buf), Err(SampleError::Parse(_))));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
