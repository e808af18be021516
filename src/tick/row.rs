//! One CSV row: the model shared by the sampler, the CSV writer, the CSV
//! reader of `summarize` and the summary. Its columns (names, units,
//! widths, headers, how each field is written and read, the row's
//! capacity) are the table of the child module `columns`, which imports
//! this model; this file names nothing of it.

use heapless::String;

use crate::followed::figures::stage_str;
use crate::followed::text::{Context, Stage};
use crate::tick::clock::Iso;

pub mod columns;

/// Bytes a [`Decimal`]'s text holds at most (`123456789.12`).
pub const DECIMAL_CAP: usize = 12;

/// Bytes a process name (comm) holds at most: the kernel's 15 and room.
pub const COMM_CAP: usize = 16;

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
    /// The text as the kernel printed it (at most [`DECIMAL_CAP`] bytes,
    /// e.g. `1234.56`).
    pub text: String<DECIMAL_CAP>,
    /// The value × 100.
    pub centi: u64,
}

impl Decimal {
    /// Parses `<digits>[.<1–2 digits>]`; `None` for anything else or text
    /// longer than [`DECIMAL_CAP`] bytes. A bare integer is accepted: the CSV writes `0`
    /// for a load it could not read.
    pub fn parse(b: &[u8]) -> Option<Decimal> {
        // What the text could not hold anyway; below it nothing overflows.
        if b.len() > DECIMAL_CAP {
            return None;
        }
        let centi = match b.iter().position(|&c| c == b'.') {
            None => crate::kernel::parse::parse_u64(b)? * 100,
            Some(_) => crate::kernel::loadavg::parse_centi(b)?,
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

/// headroom's extension columns' values; `None` is an empty field (source
/// missing, never a made-up zero).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ext {
    /// SwapTotal / 1024 (MiB).
    pub swap_total_mb: Option<u64>,
    /// Sum of zram `orig_data_size` over /sys/block/zram* (MiB).
    pub zram_stored_mb: Option<u64>,
    /// Sum of zram `mem_used_total`: RAM zram really occupies (MiB).
    pub zram_ram_mb: Option<u64>,
    /// statvfs("/tmp") available to unprivileged users (MiB).
    pub tmp_avail_mb: Option<u64>,
    /// `/tmp` use% as df computes it.
    pub tmp_pct: Option<u64>,
    /// Like `disk_avail_gb`, in MiB.
    pub disk_avail_mb: Option<u64>,
    /// Kernel OOM kills since the first sample (/proc/vmstat `oom_kill`
    /// delta, Linux ≥ 4.13).
    pub oom_kills: Option<u64>,
    /// The available memory of the tightest cgroup limit on the path:
    /// limit − (usage − inactive file cache), MiB
    /// ([`crate::kernel::cgroup::Available`]); `None` when unlimited.
    pub cg_mem_avail_mb: Option<u64>,
    /// `some avg10` of /proc/pressure/memory, verbatim.
    pub psi_mem_some_avg10: Option<Decimal>,
    /// Largest resident size among live compilers this tick (MiB).
    pub peak_rss_mb: Option<u64>,
    /// comm of that process; empty when no compiler runs.
    pub peak_rss_comm: String<COMM_CAP>,
    /// Like `peak_rss_mb`, among the compilers of THE BUILD only (its
    /// cgroup or its process tree); `None` without a build or when none of
    /// its compilers runs.
    pub build_peak_rss_mb: Option<u64>,
    /// comm of that process.
    pub build_peak_rss_comm: String<COMM_CAP>,
    /// Swap-in since the previous tick, MiB/s (/proc/vmstat `pswpin` ×
    /// the kernel's page size, [`crate::kernel::root::page_kib`]).
    pub swap_in_mibps: Option<Decimal>,
    /// Swap-out since the previous tick, MiB/s (`pswpout`).
    pub swap_out_mibps: Option<Decimal>,
    /// Major page faults per second since the previous tick, host-wide
    /// (`pgmajfault`).
    pub majflt_ps: Option<u64>,
    /// Refaults per second (`workingset_refault*`): pages read back soon
    /// after their eviction.
    pub refaults_ps: Option<u64>,
    /// The build disk's reads, MiB/s (sectors × 512).
    pub disk_read_mibps: Option<Decimal>,
    /// The build disk's writes, MiB/s (discards are not writes).
    pub disk_write_mibps: Option<Decimal>,
    /// The build disk's busy time, Δ io_ticks / Δ wall × 100, at most 100;
    /// `None` in a stalled interval whose `io_ticks` did not rise.
    pub disk_util_pct: Option<u64>,
    /// The hottest CPU sensor, °C in tenths; `None` when no reading, or
    /// while a jump waits for the next reading to confirm it
    /// ([`crate::kernel::thermal::JumpGuard`]).
    pub cpu_temp_c: Option<Tenths>,
    /// Mean `scaling_cur_freq` / `cpuinfo_max_freq` × 100 (the governor's
    /// request: on a Raspberry Pi not the clock the firmware allowed).
    pub cpu_freq_pct: Option<u64>,
    /// The Raspberry Pi firmware's throttle flags active now (bits 0–3 of
    /// `get_throttled`: under-voltage, freq-capped, throttled,
    /// soft-temp-limit), or begun since the previous tick; `Some(0)` (the
    /// field `none`) when read with no flag set, `None` (empty) when unknown:
    /// no such word on the board, or its read failed.
    pub throttled: Option<u8>,
    /// The limit of the cgroup that gives `cg_mem_avail_mb` (v2
    /// `memory.max`, v1 `memory.limit_in_bytes`), MiB; `None` when
    /// unlimited. With `cg_mem_avail_mb` it gives the cgroup's use.
    pub cg_mem_limit_mb: Option<u64>,
    /// The build disk stalled over the interval: requests in flight at
    /// both ends and none completed (`Some(1)`; `Some(0)` when it did not,
    /// `None` without a disk rate). Its `disk_util_pct` is then empty when
    /// `io_ticks` did not rise.
    pub disk_stalled: Option<u64>,
    /// In a container ([`crate::kernel::container`]): OOM kills in the
    /// container's memory cgroup since the first sample (`oom_kill` of v2
    /// `memory.events` or v1 `memory.oom_control` at the level of the
    /// tightest memory limit, else headroom's own cgroup; on v1 plus the
    /// build cgroup's, which v1 does not pass up). `None` outside a
    /// container or when unreadable.
    pub cg_oom_kills: Option<u64>,
}

impl Ext {
    /// Whether the row was sampled in a container
    /// ([`crate::kernel::container`]), as far as the CSV tells: the sampler
    /// writes `cg_oom_kills` only there, and a memory limit that binds
    /// (`cg_mem_limit_mb`) is one. The summary labels host-wide figures
    /// by this.
    pub fn in_container(&self) -> bool {
        self.cg_oom_kills.is_some() || self.cg_mem_limit_mb.is_some()
    }

    /// What the cgroup that gives `cg_mem_avail_mb` uses of its limit,
    /// MiB: `cg_mem_limit_mb − cg_mem_avail_mb` (usage less its inactive
    /// file cache); `None` unless both columns are there.
    pub fn cg_mem_used_mb(&self) -> Option<u64> {
        Some(self.cg_mem_limit_mb?.saturating_sub(self.cg_mem_avail_mb?))
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
    /// When false, `mem_used_mb`, `mem_avail_mb`, `mem_pct` and
    /// `swap_used_mb` are written as empty fields (never 0: an unknown is
    /// not an OOM edge), and an empty field read back makes it false.
    pub mem_known: bool,
    /// The disk columns were really read (statvfs of the disk path worked);
    /// as `mem_known`, for `disk_avail_gb` and `disk_pct`.
    pub disk_known: bool,
    /// `cpu_pct` was really read (/proc/stat was readable and parsed); as
    /// `mem_known`, for `cpu_pct`. (The first tick's 0, with no interval
    /// behind it, is the toolchain's and counts as read.)
    pub cpu_known: bool,
    /// `compilers` was really counted (`proc/` could be opened and
    /// listed); as `mem_known`, for `compilers`.
    pub compilers_known: bool,
    /// RSS (VmRSS) summed over the live compilers of the build (its
    /// cgroup or process tree; 0 without a build), MiB. Not a CSV column:
    /// the jobserver's governor weighs it.
    pub build_rss_mb: u64,
    /// Live compilers of the build (its cgroup or process tree); `None`
    /// without a build. Not a CSV column: the status line shows it.
    pub build_compilers: Option<u64>,
    /// OOM kills in the build so far: its cgroup's `oom_kill`, else (a
    /// process tree) the kills whose victims the kernel named among its
    /// processes; `None` without a build or when unreadable. Not a CSV
    /// column: the summary reports it.
    pub build_oom_kills: Option<u64>,
    /// A process tree's build: the OOM kills on the host since the first
    /// row that may be its and are not in
    /// [`Row::build_oom_kills`] (victims not named, or not placed: see
    /// [`crate::followed::oom_victims`]); 0 for a cgroup's. Not a CSV
    /// column.
    pub build_oom_unplaced: u64,
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
    /// Which `throttled` flags its source could see (not a CSV column):
    /// all four from the firmware's word, under-voltage alone from
    /// `rpi_volt` ([`crate::kernel::throttled::Power::seen`]); read from
    /// a CSV, what the field shows
    /// ([`crate::kernel::throttled::seen_in_field`]). None when
    /// `throttled` is empty.
    pub throttled_seen: crate::kernel::throttled::Flags,
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
            cpu_known: true,
            compilers_known: true,
            build_rss_mb: 0,
            build_compilers: None,
            build_oom_kills: None,
            build_oom_unplaced: 0,
            build_anon_mb: None,
            jobs: None,
            pauses: None,
            pool: None,
            throttled_seen: crate::kernel::throttled::Flags(0),
        }
    }

    /// `load1` as written to the CSV: the kernel's text, or empty when
    /// /proc/loadavg could not be read (an unknown is never written as 0).
    pub fn load1_str(&self) -> &str {
        self.load1.text.as_str()
    }

    /// `stage` as written to the CSV: `?` when unknown
    /// ([`crate::followed::figures::stage_str`]).
    pub fn stage_str(&self) -> &str {
        stage_str(self.stage.as_str())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use heapless::Vec;

    #[test]
    fn decimals_and_tenths_format_and_read_back() {
        assert_eq!(Decimal::from_centi(1205).text.as_str(), "12.05");
        assert_eq!(Decimal::from_centi(7).text.as_str(), "0.07");
        assert_eq!(Decimal::from_centi(0).text.as_str(), "0.00");
        assert_eq!(Decimal::parse(b"12.05").map(|d| d.centi), Some(1205));
        let mut out: Vec<u8, 16> = Vec::new();
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
    }
}
