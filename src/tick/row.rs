//! One CSV row: the model shared by the sampler, the CSV writer, the CSV
//! reader of `summarize` and the summary. Its columns (names, units,
//! headers, how each field is written and read) are the table of
//! [`columns`].

use heapless::String;

use crate::followed::text::{Context, Stage};
use crate::tick::clock::Iso;

pub mod columns;

#[cfg(test)]
pub(crate) use columns::header_27;
pub use columns::{
    CORE_COLUMNS, EXT_COLUMNS, Ext, HEADER_COMPAT, HEADER_FULL, HEADER_JOBS, JOBS_COLUMNS, header,
};

/// Capacity of one formatted row in bytes: 28 numeric fields of at most 20
/// digits (560), the iso time (20), stage (64), quoted context (322), six
/// decimal texts (6 × 12), a temperature (12), two comms (30) and the
/// throttle flags (48), plus 37 commas and a newline: 1166 bytes at most;
/// the jobserver's three counts add 33 (1199). 1280 bytes leave room.
pub const ROW_CAP: usize = 1280;

/// A shared memory pool at one tick (`run --jobserver --pool`), MiB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolFigures {
    /// Other builds whose leases were counted.
    pub others: u32,
    /// The growth they reserve together.
    pub others_growth_mb: u64,
    /// The growth this build reserves.
    pub own_growth_mb: u64,
}

/// A fixed-capacity output buffer was too small for what had to go in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferFull;

/// A fixed-point decimal copied verbatim from the kernel (`0.52`, `1.21`)
/// with its value in hundredths for comparisons.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decimal {
    /// The text as the kernel printed it (at most 12 bytes, e.g. `1234.56`).
    pub text: String<12>,
    /// The value × 100.
    pub centi: u64,
}

impl Decimal {
    /// Parses `<digits>[.<1–2 digits>]`; `None` for anything else or text
    /// longer than 12 bytes. A bare integer is accepted: the CSV writes `0`
    /// for a load it could not read.
    pub fn parse(b: &[u8]) -> Option<Decimal> {
        let centi = match crate::kernel::parse::parse_u64(b) {
            Some(v) => v.checked_mul(100)?,
            None => crate::kernel::loadavg::parse_centi(b)?,
        };
        let s = core::str::from_utf8(b).ok()?;
        let mut text = String::new();
        text.push_str(s).ok()?;
        Some(Decimal { text, centi })
    }

    /// The value `centi` / 100 written with two decimals (`12.05`, `0.00`),
    /// for a rate headroom computes; saturates at `999999999.99`, the most
    /// the text holds.
    pub fn from_centi(centi: u64) -> Decimal {
        let centi = centi.min(99_999_999_999);
        let mut text = String::new();
        let frac = centi % 100;
        let pad = if frac < 10 { "0" } else { "" };
        // 12 bytes hold every value up to the saturation above.
        let _ = ufmt::uwrite!(text, "{}.{}{}", centi / 100, pad, frac);
        Decimal { text, centi }
    }
}

/// A signed value in tenths, written with one decimal (`54.5`, `-3.0`):
/// the CPU temperature, °C.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tenths(pub i32);

impl Tenths {
    /// Writes the value with one decimal (`54.5`, `-3.0`).
    ///
    /// # Errors
    /// Only those of `w`.
    pub fn write<W: ufmt::uWrite + ?Sized>(self, w: &mut W) -> Result<(), W::Error> {
        let v = i64::from(self.0);
        let sign = if v < 0 { "-" } else { "" };
        let a = v.unsigned_abs();
        ufmt::uwrite!(w, "{}{}.{}", sign, a / 10, a % 10)
    }

    /// Parses `[-]<digits>[.<digit>]` (what [`Tenths::write`] writes, or a
    /// bare integer); `None` for anything else or a value beyond `i32`.
    pub fn parse(b: &[u8]) -> Option<Tenths> {
        let (neg, b) = match b.strip_prefix(b"-") {
            Some(rest) => (true, rest),
            None => (false, b),
        };
        let (int, frac) = match b.iter().position(|&c| c == b'.') {
            Some(i) => (&b[..i], &b[i + 1..]),
            None => (b, &b"0"[..]),
        };
        let [d] = frac else { return None };
        if !d.is_ascii_digit() {
            return None;
        }
        let v = crate::kernel::parse::parse_u64(int)?
            .checked_mul(10)?
            .checked_add(u64::from(d - b'0'))?;
        let v = i32::try_from(v).ok()?;
        Some(Tenths(if neg { -v } else { v }))
    }
}

/// One sample, in the CSV's units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Unix seconds.
    pub epoch: u64,
    /// UTC time of `epoch`.
    pub iso: Iso,
    /// Seconds since the first sample.
    pub elapsed_s: u64,
    /// 1-minute load average, verbatim from /proc/loadavg.
    pub load1: Decimal,
    /// CPU busy % since the previous tick.
    pub cpu_pct: u64,
    /// (MemTotal − MemAvailable) / 1024.
    pub mem_used_mb: u64,
    /// MemAvailable / 1024 (or the documented estimate).
    pub mem_avail_mb: u64,
    /// 100 × used / MemTotal.
    pub mem_pct: u64,
    /// (SwapTotal − SwapFree) / 1024.
    pub swap_used_mb: u64,
    /// Free GiB for unprivileged users on the build filesystem (floor).
    pub disk_avail_gb: u64,
    /// Use% of the build filesystem, as df.
    pub disk_pct: u64,
    /// Live compiler and linker processes.
    pub compilers: u64,
    /// Coarse build stage (`?` when unknown); never contains `,` or `"`.
    pub stage: Stage,
    /// Active build-log line; never contains `,` `"` CR or LF.
    pub context: Context,
    /// Extension columns; all `None` for a 14-column CSV.
    pub ext: Ext,
    /// The memory columns were really read (/proc/meminfo was readable).
    /// When false, the compatible core still writes 0 as the toolchain
    /// does, but the summary does not take those zeros for an OOM edge.
    pub mem_known: bool,
    /// The disk columns were really read (statvfs of the disk path worked);
    /// as `mem_known`, for the disk columns.
    pub disk_known: bool,
    /// RSS (VmRSS) summed over the live compilers of the build (its
    /// cgroup or process tree; 0 without a build), MiB. Not a CSV column:
    /// the jobserver's governor weighs it.
    pub build_rss_mb: u64,
    /// Live compilers of the build (its cgroup or process tree); `None`
    /// without a build. Not a CSV column: the status line shows it.
    pub build_compilers: Option<u64>,
    /// OOM kills in the build so far: its cgroup's `oom_kill`, else the
    /// estimate from its vanished compilers; `None` without a build or
    /// when unreadable. Not a CSV column: the summary reports it.
    pub build_oom_kills: Option<u64>,
    /// The build cgroup's anonymous memory now (`memory.stat`), MiB; `None`
    /// without a build cgroup. Not a CSV column.
    pub build_anon_mb: Option<u64>,
    /// `jobs_running`, `jobs_allowed`, `jobs_paused` of `run --jobserver`
    /// (jobs stopped now because their growth would outrun memory);
    /// `None` without it (and the columns are then absent).
    pub jobs: Option<(u32, u32, u32)>,
    /// `run --jobserver --pool`: the pool at this tick (not a CSV column).
    pub pool: Option<PoolFigures>,
    /// `run --jobserver`: jobs paused so far, and the time they spent
    /// paused (summed over jobs), ms (not a CSV column).
    pub pauses: Option<(u32, u64)>,
}

impl Row {
    /// A row with every value zero/empty at `epoch`.
    pub fn empty(epoch: u64) -> Row {
        Row::empty_at(epoch, Iso::from_epoch(epoch))
    }

    /// A row with every value zero/empty at `epoch`, whose `iso` text is
    /// already known (a CSV being read).
    pub fn empty_at(epoch: u64, iso: Iso) -> Row {
        Row {
            epoch,
            iso,
            elapsed_s: 0,
            load1: Decimal::default(),
            cpu_pct: 0,
            mem_used_mb: 0,
            mem_avail_mb: 0,
            mem_pct: 0,
            swap_used_mb: 0,
            disk_avail_gb: 0,
            disk_pct: 0,
            compilers: 0,
            stage: Stage::new(),
            context: Context::new(),
            ext: Ext::default(),
            mem_known: true,
            disk_known: true,
            build_rss_mb: 0,
            build_compilers: None,
            build_oom_kills: None,
            build_anon_mb: None,
            jobs: None,
            pauses: None,
            pool: None,
        }
    }

    /// `load1` as written to the CSV: the kernel's text, or `0` when
    /// /proc/loadavg could not be read (the compatible core writes 0).
    pub fn load1_str(&self) -> &str {
        if self.load1.text.is_empty() {
            "0"
        } else {
            self.load1.text.as_str()
        }
    }

    /// `stage` as written to the CSV: `?` when unknown.
    pub fn stage_str(&self) -> &str {
        if self.stage.is_empty() {
            "?"
        } else {
            self.stage.as_str()
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use heapless::Vec;

    fn sample_row() -> Row {
        let mut r = Row::empty(1_796_000_586);
        r.elapsed_s = 1;
        r.load1 = Decimal::parse(b"0.61").unwrap();
        r.cpu_pct = 89;
        r.mem_used_mb = 476;
        r.mem_avail_mb = 23628;
        r.mem_pct = 1;
        r.disk_avail_gb = 76;
        r.disk_pct = 69;
        r.compilers = 2;
        r.stage.push_str("build").unwrap();
        r.context
            .push_str(" Compiling argh_shared v0.1.19")
            .unwrap();
        r
    }

    #[test]
    fn compat_row_matches_the_toolchain_sample() {
        let mut out = Vec::new();
        sample_row().format(true, &mut out).unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "1796000586,2026-11-30T01:03:06Z,1,0.61,89,476,23628,1,0,76,69,2,build,\" Compiling argh_shared v0.1.19\"\n"
        );
    }

    #[test]
    fn slow_columns_format_and_read_back() {
        assert_eq!(Decimal::from_centi(1205).text.as_str(), "12.05");
        assert_eq!(Decimal::from_centi(7).text.as_str(), "0.07");
        assert_eq!(Decimal::from_centi(0).text.as_str(), "0.00");
        assert_eq!(Decimal::parse(b"12.05").map(|d| d.centi), Some(1205));
        let mut out = Vec::new();
        for (t, text) in [(545, "54.5"), (-30, "-3.0"), (5, "0.5"), (0, "0.0")] {
            out.clear();
            Tenths(t).write(&mut out).unwrap();
            assert_eq!(&out[..], text.as_bytes());
            assert_eq!(Tenths::parse(text.as_bytes()), Some(Tenths(t)));
        }
        assert_eq!(Tenths::parse(b"54"), Some(Tenths(540)));
        for bad in [&b"5.45"[..], b"", b"-", b"x.5", b"5.", b"99999999999"] {
            assert_eq!(Tenths::parse(bad), None, "{bad:?}");
        }
        let mut r = Row::empty(0);
        r.ext.throttled = Some(0b0101);
        assert_eq!((columns::THROTTLED.write)(&r), columns::Cell::Flags(0b0101));
        r.format(false, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap();
        assert!(
            line.split(',').any(|f| f == "under-voltage|throttled"),
            "{line}"
        );
        let read = |b: &[u8]| {
            let mut r = Row::empty(0);
            (columns::THROTTLED.read)(&mut r, Some(b)).map(|()| r.ext.throttled)
        };
        assert_eq!(read(b"under-voltage|throttled"), Some(Some(0b0101)));
        assert_eq!(read(b""), Some(None));
        assert_eq!(read(b"hot"), None);
    }

    #[test]
    fn full_row_has_every_column_and_empty_means_missing() {
        let mut r = sample_row();
        r.ext.swap_total_mb = Some(0);
        r.ext.oom_kills = Some(3);
        r.ext.psi_mem_some_avg10 = Decimal::parse(b"1.21");
        r.ext.peak_rss_mb = Some(773);
        r.ext.peak_rss_comm.push_str("cc1plus").unwrap();
        let first = [
            ("swap_total_mb", "0"),
            ("oom_kills", "3"),
            ("psi_mem_some_avg10", "1.21"),
            ("peak_rss_mb", "773"),
            ("peak_rss_comm", "cc1plus"),
        ];
        assert_fields(&r, &first);
        r.ext.build_peak_rss_mb = Some(52);
        r.ext.build_peak_rss_comm.push_str("cc1").unwrap();
        r.ext.swap_in_mibps = Some(Decimal::from_centi(150));
        r.ext.majflt_ps = Some(120);
        r.ext.disk_write_mibps = Some(Decimal::from_centi(2250));
        r.ext.disk_util_pct = Some(97);
        r.ext.cpu_temp_c = Some(Tenths(823));
        r.ext.cpu_freq_pct = Some(33);
        r.ext.throttled = Some(0b0100);
        r.ext.cg_mem_limit_mb = Some(1024);
        let second = [
            ("build_peak_rss_mb", "52"),
            ("build_peak_rss_comm", "cc1"),
            ("swap_in_mibps", "1.50"),
            ("majflt_ps", "120"),
            ("disk_write_mibps", "22.50"),
            ("disk_util_pct", "97"),
            ("cpu_temp_c", "82.3"),
            ("cpu_freq_pct", "33"),
            ("throttled", "throttled"),
            ("cg_mem_limit_mb", "1024"),
        ];
        assert_fields(&r, &[&first[..], &second[..]].concat());
    }

    /// `r` written as a full row: as many fields as [`HEADER_FULL`] and the
    /// core and extension entries of [`columns::COLUMNS`]; those named in `set` hold their text, every
    /// other extension column is empty (the row's context has no comma).
    fn assert_fields(r: &Row, set: &[(&str, &str)]) {
        let mut out = Vec::new();
        r.format(false, &mut out).unwrap();
        let s = std::str::from_utf8(&out).unwrap();
        let fields: std::vec::Vec<&str> = s.trim_end().split(',').collect();
        let names: std::vec::Vec<&str> = HEADER_FULL.trim_end().split(',').collect();
        assert_eq!(fields.len(), names.len(), "{s}");
        let full = columns::COLUMNS
            .iter()
            .filter(|c| c.set != columns::Set::Jobs);
        assert_eq!(names.len(), full.count());
        for (i, name) in names.iter().enumerate().skip(CORE_COLUMNS.len()) {
            let want = set.iter().find(|(n, _)| n == name).map_or("", |(_, v)| *v);
            assert_eq!(fields[i], want, "{name} in {s}");
        }
    }

    #[test]
    fn headers_are_the_column_lists() {
        let core = CORE_COLUMNS.join(",");
        assert_eq!(HEADER_COMPAT, std::format!("{core}\n"));
        assert_eq!(
            HEADER_FULL,
            std::format!("{core},{}\n", EXT_COLUMNS.join(","))
        );
    }

    #[test]
    fn longest_possible_row_fits() {
        let mut r = sample_row();
        r.epoch = u64::MAX;
        r.elapsed_s = u64::MAX;
        r.load1 = Decimal::parse(b"123456789.12").unwrap();
        r.stage.clear();
        for _ in 0..r.stage.capacity() {
            r.stage.push('x').unwrap();
        }
        r.context.clear();
        while r.context.push('€').is_ok() {}
        let m = Some(u64::MAX);
        r.ext = Ext {
            swap_total_mb: m,
            zram_stored_mb: m,
            zram_ram_mb: m,
            tmp_avail_mb: m,
            tmp_pct: m,
            disk_avail_mb: m,
            oom_kills: m,
            cg_mem_avail_mb: m,
            psi_mem_some_avg10: Decimal::parse(b"123456789.12"),
            peak_rss_mb: m,
            peak_rss_comm: String::try_from("123456789012345").unwrap(),
            build_peak_rss_mb: m,
            build_peak_rss_comm: String::try_from("123456789012345").unwrap(),
            swap_in_mibps: Some(Decimal::from_centi(u64::MAX)),
            swap_out_mibps: Some(Decimal::from_centi(u64::MAX)),
            majflt_ps: m,
            refaults_ps: m,
            disk_read_mibps: Some(Decimal::from_centi(u64::MAX)),
            disk_write_mibps: Some(Decimal::from_centi(u64::MAX)),
            disk_util_pct: m,
            cpu_temp_c: Some(Tenths(i32::MIN)),
            cpu_freq_pct: m,
            throttled: Some(0xff),
            cg_mem_limit_mb: m,
        };
        let mut out = Vec::new();
        assert_eq!(r.format(false, &mut out), Ok(()));
    }
}
