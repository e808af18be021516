//! The CSV columns, each defined once: its name, unit, header set, how its
//! field is written from a [`Row`] and read back into one, and its
//! Prometheus family. The headers, [`Row::format`], the CSV reader
//! (`report::csvread`), the exposition (`report::prom`) and the summary
//! JSON's column-named keys all follow from [`COLUMNS`].
//!
//! Adding a column is one entry in the table below (and, for a figure the
//! row does not hold yet, a field of [`Ext`](super::Ext) in the row's model), plus
//! the goldens. Each entry declares its field's widest text in bytes, and
//! [`ROW_CAP`], the row buffer's size, is their sum: a new column makes
//! room for itself.
//!
//! The first 14 columns are the toolchain's (`resource-monitor.sh`), in
//! its order; headroom's extension columns follow `context`, so a consumer
//! that splits on every comma and reads 14 fields is not disturbed. Units:
//! "mb" is MiB and "gb" GiB (the kernel's "kB" is KiB). See SPEC.md, "CSV".

use heapless::{String, Vec};

use super::{BufferFull, COMM_CAP, DECIMAL_CAP, Decimal, Row, Tenths};
use crate::followed::text::{CONTEXT_CAP, CONTEXT_CHARS, STAGE_CAP, sanitize_into};
use crate::kernel::parse::parse_u64;
use crate::kernel::throttled;
use crate::tick::clock::Iso;

/// The smallest header set that holds a column; each set holds the ones
/// before it: the compatible core (14 columns), the full header (core +
/// extension), the jobserver's (full + its three).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// The toolchain's 14 columns: in every header.
    Core,
    /// headroom's extension columns: in the full and the jobserver header.
    Ext,
    /// `run --jobserver`'s columns: in its header only.
    Jobs,
}

/// What a column's number counts, as its name's suffix says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Seconds (`_s`, or the epoch).
    Seconds,
    /// ISO 8601 UTC time.
    Time,
    /// A load average, verbatim from the kernel.
    Load,
    /// Percent, 0–100 (`_pct`, or PSI's `avg10`).
    Pct,
    /// MiB (`_mb`).
    MiB,
    /// GiB (`_gb`).
    GiB,
    /// MiB per second (`_mibps`).
    MiBps,
    /// Events per second (`_ps`).
    PerSecond,
    /// °C (`_c`).
    Celsius,
    /// A count of things (processes, kills, jobs).
    Count,
    /// Text (stage, log line, comm, flag names).
    Text,
}

/// One field's value as the CSV writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell<'r> {
    /// An empty field: the source was missing.
    Empty,
    /// An unsigned integer.
    Int(u64),
    /// Text written as is (never holds `,` `"` CR or LF).
    Text(&'r str),
    /// Text written between double quotes (never holds `"`).
    Quoted(&'r str),
    /// Tenths with one decimal ([`Tenths::write`]).
    Tenths(Tenths),
    /// Throttle flags by name, joined by `|`.
    Flags(u8),
}

/// Prometheus metric types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A value that goes up and down.
    Gauge,
    /// A value that only goes up while one recording lasts (`_total`).
    Counter,
}

/// One metric family: name, type and HELP text.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// The metric name (`headroom_…`, base unit, `_total` on counters).
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Its HELP text.
    pub help: &'static str,
}

/// A gauge family.
pub const fn gauge(name: &'static str, help: &'static str) -> Family {
    Family {
        name,
        kind: Kind::Gauge,
        help,
    }
}

/// A counter family.
pub const fn counter(name: &'static str, help: &'static str) -> Family {
    Family {
        name,
        kind: Kind::Counter,
        help,
    }
}

/// A sample's value in Prometheus' base units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// An integer.
    Int(u128),
    /// `n / 10^digits`, written with `digits` decimals.
    Fixed(u64, u32),
    /// Tenths, signed, with one decimal (a temperature).
    Tenths(Tenths),
    /// Throttle flags: one sample per flag, labelled `flag`, 1 or 0,
    /// for the flags its source could see (the second set: a flag it
    /// cannot see has no sample, never a 0).
    Flags(u8, u8),
}

/// The label a column's sample carries besides `run_id`.
#[derive(Clone, Copy, Debug)]
pub enum Label {
    /// None.
    None,
    /// This label name, its value from the row.
    Row(&'static str, fn(&Row) -> &str),
    /// `path`: the build disk's path (the exposition's labels hold it).
    DiskPath,
}

/// A column's Prometheus family.
#[derive(Clone, Copy, Debug)]
pub struct Prom {
    /// Its place in the exposition: families are written by rising `at`
    /// (the exposition's own, summary-made families have places too).
    pub at: u16,
    /// Name, type and HELP.
    pub family: Family,
    /// The extra label.
    pub label: Label,
    /// The value from the row; `None` leaves the family out (a source that
    /// was not read, never a made-up 0).
    pub value: fn(&Row) -> Option<Metric>,
}

/// How a column's field is written from a row.
pub type WriteFn = fn(&Row) -> Cell<'_>;

/// How a column's field is read into a row: the field, or `None` when the
/// file has no such column; `None` back when the field is malformed.
pub type ReadFn = fn(&mut Row, Option<&[u8]>) -> Option<()>;

/// One CSV column.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// The header name.
    pub name: &'static str,
    /// What its number counts.
    pub unit: Unit,
    /// The smallest header set that holds it.
    pub set: Set,
    /// The most bytes its field can take ([`W_U64`], [`W_DECIMAL`], …):
    /// [`ROW_CAP`] is their sum.
    pub width: usize,
    /// Its field from a row.
    pub write: WriteFn,
    /// Sets the row from its field: `None` when the file has no such
    /// column. Returns `None` when the field is malformed (the row is then
    /// skipped). Called in table order.
    pub read: ReadFn,
    /// Its Prometheus family, if it has one.
    pub prom: Option<Prom>,
}

/// A field type of [`Ext`](super::Ext) as a cell, and read back from its field.
trait Field: Sized {
    /// The cell the CSV writes.
    fn cell(&self) -> Cell<'_>;
    /// The value of a non-empty field; `None` when malformed.
    fn parse(b: &[u8]) -> Option<Self>;
}

impl Field for u64 {
    fn cell(&self) -> Cell<'_> {
        Cell::Int(*self)
    }
    fn parse(b: &[u8]) -> Option<u64> {
        parse_u64(b)
    }
}

impl Field for u32 {
    fn cell(&self) -> Cell<'_> {
        Cell::Int(u64::from(*self))
    }
    fn parse(b: &[u8]) -> Option<u32> {
        u32::try_from(parse_u64(b)?).ok()
    }
}

impl Field for Decimal {
    fn cell(&self) -> Cell<'_> {
        Cell::Text(self.text.as_str())
    }
    fn parse(b: &[u8]) -> Option<Decimal> {
        Decimal::parse(b)
    }
}

impl Field for Tenths {
    fn cell(&self) -> Cell<'_> {
        Cell::Tenths(*self)
    }
    fn parse(b: &[u8]) -> Option<Tenths> {
        Tenths::parse(b)
    }
}

/// An optional field: empty when `None`.
fn opt<T: Field>(v: &Option<T>) -> Cell<'_> {
    v.as_ref().map_or(Cell::Empty, T::cell)
}

/// An optional field read back: an absent column or an empty field is
/// `Some(None)`; garbage is `None` (a malformed row).
fn read_opt<T: Field>(b: Option<&[u8]>) -> Option<Option<T>> {
    match b {
        None | Some(b"") => Some(None),
        Some(f) => T::parse(f).map(Some),
    }
}

/// A compatible column's number: the column is always there (the reader
/// requires it) and a non-number is malformed.
fn read_u64(b: Option<&[u8]>) -> Option<u64> {
    parse_u64(b?)
}

/// A comm read back (at most 15 bytes, as the kernel's).
fn read_comm(b: Option<&[u8]>, out: &mut String<16>) -> Option<()> {
    if let Some(b) = b {
        sanitize_into(b, 15, out);
    }
    Some(())
}

/// An `Option<_>` extension field: written empty when `None`, read back
/// with [`read_opt`].
macro_rules! ext_opt {
    ($f:ident) => {
        (
            |r| opt(&r.ext.$f),
            |r, b| {
                r.ext.$f = read_opt(b)?;
                Some(())
            },
        )
    };
}

/// A compatible `u64` field of [`Row`].
macro_rules! core_u64 {
    ($f:ident) => {
        (
            |r| Cell::Int(r.$f),
            |r, b| {
                r.$f = read_u64(b)?;
                Some(())
            },
        )
    };
}

/// A compatible `u64` field of [`Row`] that is read only when the flag
/// `$known` of the row is set ([`Row::mem_known`], …): written empty when
/// it is not (never a made-up 0), and an empty field read back clears the
/// flag (the value stays 0 and is not used).
macro_rules! core_known {
    ($f:ident, $known:ident) => {
        (
            |r| {
                if r.$known {
                    Cell::Int(r.$f)
                } else {
                    Cell::Empty
                }
            },
            |r, b| {
                match b? {
                    b"" => r.$known = false,
                    f => r.$f = parse_u64(f)?,
                }
                Some(())
            },
        )
    };
}

/// Bytes in one MiB: the CSV's "mb" unit.
const MIB: u128 = 1024 * 1024;

/// MiB as bytes.
pub fn mib(v: u64) -> Option<Metric> {
    Some(Metric::Int(u128::from(v) * MIB))
}

/// A count as is.
pub fn int(v: u64) -> Option<Metric> {
    Some(Metric::Int(u128::from(v)))
}

/// A memory figure of the compatible core: left out when /proc/meminfo was
/// not read (the core then holds the toolchain's placeholder 0).
fn mem(r: &Row, v: u64) -> Option<Metric> {
    if r.mem_known { mib(v) } else { None }
}

/// A rate in MiB/s (hundredths) as bytes per second: exact with two
/// decimals (0.01 MiB is 10485.76 bytes).
fn mibps(d: &Option<Decimal>) -> Option<Metric> {
    let centi = d.as_ref()?.centi;
    Some(Metric::Fixed(centi.saturating_mul(MIB as u64), 2))
}

/// A percentage as a ratio 0–1.
fn ratio(pct: Option<u64>) -> Option<Metric> {
    pct.map(|p| Metric::Fixed(p, 2))
}

/// A column's Prometheus family with no extra label.
const fn prom(at: u16, family: Family, value: fn(&Row) -> Option<Metric>) -> Option<Prom> {
    Some(Prom {
        at,
        family,
        label: Label::None,
        value,
    })
}

/// A column's Prometheus family with an extra label.
const fn prom_labelled(
    at: u16,
    family: Family,
    label: Label,
    value: fn(&Row) -> Option<Metric>,
) -> Option<Prom> {
    Some(Prom {
        at,
        family,
        label,
        value,
    })
}

/// One column: name, unit, set, width, (write, read), Prometheus family.
const fn col(
    name: &'static str,
    unit: Unit,
    set: Set,
    width: usize,
    (write, read): (WriteFn, ReadFn),
    prom: Option<Prom>,
) -> Column {
    Column {
        name,
        unit,
        set,
        width,
        write,
        read,
        prom,
    }
}

/// The widest `u64` field: `18446744073709551615`.
pub const W_U64: usize = 20;

/// The widest `u32` field (the jobserver's counts): `4294967295`.
pub const W_U32: usize = 10;

/// The widest [`Decimal`] field: its text's capacity.
pub const W_DECIMAL: usize = DECIMAL_CAP;

/// The widest [`Tenths`] field: `-214748364.8`.
pub const W_TENTHS: usize = 12;

/// The widest comm field: its text's capacity.
pub const W_COMM: usize = COMM_CAP;

/// The iso field: always `YYYY-MM-DDTHH:MM:SSZ`, the size of an [`Iso`].
pub const W_ISO: usize = core::mem::size_of::<Iso>();

/// The widest stage field: its text's capacity.
pub const W_STAGE: usize = STAGE_CAP;

/// The widest context field: its text's capacity between two quotes.
pub const W_CONTEXT: usize = CONTEXT_CAP + 2;

/// The widest throttle field: every flag's name.
pub const W_FLAGS: usize = throttled::FLAGS_TEXT_LEN;

/// Declares each column as a constant named after it, then [`COLUMNS`],
/// all of them in CSV order.
macro_rules! table {
    ($($id:ident = $col:expr;)*) => {
        $(
            #[doc = concat!("The `", stringify!($id), "` column (lower case in the header).")]
            pub const $id: Column = $col;
        )*
        /// Every column, in CSV order: the compatible core, the extension
        /// columns, the jobserver's.
        pub const COLUMNS: &[Column] = &[$($id),*];

        /// Writes the first `n` columns of `row`, each followed by a comma:
        /// [`COLUMNS`] unrolled, so each column's writer is a direct call
        /// (the row is written every tick).
        fn put_first(row: &Row, n: usize, out: &mut Vec<u8, ROW_CAP>) -> Result<(), BufferFull> {
            let mut left = n;
            $(
                if left == 0 {
                    return Ok(());
                }
                left -= 1;
                put(($id.write)(row), out)?;
                out.push(b',').map_err(|_| BufferFull)?;
            )*
            Ok(())
        }

        /// Reads every column into `row`, field `i` for column `i`:
        /// [`COLUMNS`] unrolled, as [`put_first`].
        fn read_each<'f>(row: &mut Row, field: impl Fn(usize) -> Option<&'f [u8]>) -> Option<()> {
            let mut i = 0;
            $(
                ($id.read)(row, field(i))?;
                i += 1;
            )*
            debug_assert_eq!(i, COLUMNS.len());
            Some(())
        }
    };
}

table! {
    EPOCH = col("epoch", Unit::Seconds, Set::Core, W_U64, core_u64!(epoch), prom(20, gauge(
        "headroom_last_sample_timestamp_seconds",
        "Unix time of the latest sample.",
    ), |r| int(r.epoch)));
    ISO = col("iso", Unit::Time, Set::Core, W_ISO, (|r| Cell::Text(r.iso.as_str()), |r, b| {
        r.iso = Iso::parse(b?)?;
        Some(())
    }), None);
    ELAPSED_S = col("elapsed_s", Unit::Seconds, Set::Core, W_U64, core_u64!(elapsed_s), None);
    LOAD1 = col("load1", Unit::Load, Set::Core, W_DECIMAL, (|r| Cell::Text(r.load1_str()), |r, b| {
        // Empty: /proc/loadavg was not read; `load1` stays empty.
        match b? {
            b"" => {}
            f => r.load1 = Decimal::parse(f)?,
        }
        Some(())
    }), prom(180, gauge("headroom_load1", "1-minute load average (/proc/loadavg)."), |r| {
        (!r.load1.text.is_empty()).then_some(Metric::Fixed(r.load1.centi, 2))
    }));
    CPU_PCT = col("cpu_pct", Unit::Pct, Set::Core, W_U64, core_known!(cpu_pct, cpu_known), prom(170, gauge(
        "headroom_cpu_busy_ratio",
        "Share of CPU time busy since the previous sample, all CPUs (/proc/stat).",
    ), |r| ratio(r.cpu_known.then_some(r.cpu_pct))));
    MEM_USED_MB = col("mem_used_mb", Unit::MiB, Set::Core, W_U64, core_known!(mem_used_mb, mem_known), prom(60, gauge(
        "headroom_memory_used_bytes",
        "MemTotal minus MemAvailable from /proc/meminfo.",
    ), |r| mem(r, r.mem_used_mb)));
    MEM_AVAIL_MB = col("mem_avail_mb", Unit::MiB, Set::Core, W_U64, core_known!(mem_avail_mb, mem_known), prom(50, gauge(
        "headroom_memory_available_bytes",
        "MemAvailable from /proc/meminfo (or the kernel's estimate on kernels before 3.14).",
    ), |r| mem(r, r.mem_avail_mb)));
    MEM_PCT = col("mem_pct", Unit::Pct, Set::Core, W_U64, core_known!(mem_pct, mem_known), None);
    SWAP_USED_MB = col("swap_used_mb", Unit::MiB, Set::Core, W_U64, core_known!(swap_used_mb, mem_known), prom(80, gauge(
        "headroom_swap_used_bytes",
        "SwapTotal minus SwapFree from /proc/meminfo.",
    ), |r| mem(r, r.swap_used_mb)));
    DISK_AVAIL_GB = col("disk_avail_gb", Unit::GiB, Set::Core, W_U64, core_known!(disk_avail_gb, disk_known), None);
    DISK_PCT = col("disk_pct", Unit::Pct, Set::Core, W_U64, core_known!(disk_pct, disk_known), None);
    COMPILERS = col("compilers", Unit::Count, Set::Core, W_U64, core_known!(compilers, compilers_known), prom(190, gauge(
        "headroom_compilers",
        "Live compiler and linker processes (cc1, cc1plus, rustc, ld, ...).",
    ), |r| if r.compilers_known { int(r.compilers) } else { None }));
    STAGE = col("stage", Unit::Text, Set::Core, W_STAGE, (|r| Cell::Text(r.stage_str()), |r, b| {
        sanitize_into(b?, STAGE_CAP, &mut r.stage);
        Some(())
    }), prom_labelled(490, gauge(
        "headroom_stage_info",
        "The build stage of the latest sample, as the stage label; always 1.",
    ), Label::Row("stage", Row::stage_str), |_| int(1)));
    CONTEXT = col("context", Unit::Text, Set::Core, W_CONTEXT, (|r| Cell::Quoted(r.context.as_str()), |r, b| {
        sanitize_into(b?, CONTEXT_CHARS, &mut r.context);
        Some(())
    }), None);

    SWAP_TOTAL_MB = col("swap_total_mb", Unit::MiB, Set::Ext, W_U64, (|r| opt(&r.ext.swap_total_mb), |r, b| {
        r.ext.swap_total_mb = read_opt(b)?;
        // Read with the memory figures: empty in headroom's own CSV says
        // /proc/meminfo was unreadable (older versions wrote placeholder
        // 0s in the core; now its fields are empty too).
        if b.is_some() {
            r.mem_known &= r.ext.swap_total_mb.is_some();
        }
        Some(())
    }), prom(90, gauge("headroom_swap_total_bytes", "SwapTotal from /proc/meminfo."), |r| {
        mib(r.ext.swap_total_mb?)
    }));
    ZRAM_STORED_MB = col("zram_stored_mb", Unit::MiB, Set::Ext, W_U64, ext_opt!(zram_stored_mb), prom(100, gauge(
        "headroom_zram_stored_bytes",
        "Data stored in zram before compression: orig_data_size summed over /sys/block/zram*/mm_stat.",
    ), |r| mib(r.ext.zram_stored_mb?)));
    ZRAM_RAM_MB = col("zram_ram_mb", Unit::MiB, Set::Ext, W_U64, ext_opt!(zram_ram_mb), prom(110, gauge(
        "headroom_zram_ram_bytes",
        "RAM zram occupies: mem_used_total summed over /sys/block/zram*/mm_stat.",
    ), |r| mib(r.ext.zram_ram_mb?)));
    TMP_AVAIL_MB = col("tmp_avail_mb", Unit::MiB, Set::Ext, W_U64, ext_opt!(tmp_avail_mb), prom(150, gauge(
        "headroom_tmp_available_bytes",
        "Space available to unprivileged users on /tmp (statvfs).",
    ), |r| mib(r.ext.tmp_avail_mb?)));
    TMP_PCT = col("tmp_pct", Unit::Pct, Set::Ext, W_U64, ext_opt!(tmp_pct), None);
    DISK_AVAIL_MB = col("disk_avail_mb", Unit::MiB, Set::Ext, W_U64, (|r| opt(&r.ext.disk_avail_mb), |r, b| {
        r.ext.disk_avail_mb = read_opt(b)?;
        // As swap_total_mb, for the disk columns (statvfs of the disk path).
        if b.is_some() {
            r.disk_known &= r.ext.disk_avail_mb.is_some();
        }
        Some(())
    }), prom_labelled(160, gauge(
        "headroom_disk_available_bytes",
        "Space available to unprivileged users on the build disk (statvfs of path).",
    ), Label::DiskPath, |r| {
        let mb = r.ext.disk_avail_mb.unwrap_or(r.disk_avail_gb.saturating_mul(1024));
        if r.disk_known { mib(mb) } else { None }
    }));
    OOM_KILLS = col("oom_kills", Unit::Count, Set::Ext, W_U64, ext_opt!(oom_kills), None);
    CG_MEM_AVAIL_MB = col("cg_mem_avail_mb", Unit::MiB, Set::Ext, W_U64, ext_opt!(cg_mem_avail_mb), prom(120, gauge(
        "headroom_cgroup_memory_available_bytes",
        "Available memory of the tightest cgroup limit on headroom's cgroup path: limit - (usage - inactive file cache) (v2 memory.max, memory.current, memory.stat inactive_file; v1 limit_in_bytes, usage_in_bytes, total_inactive_file); absent when unlimited.",
    ), |r| mib(r.ext.cg_mem_avail_mb?)));
    PSI_MEM_SOME_AVG10 = col("psi_mem_some_avg10", Unit::Pct, Set::Ext, W_DECIMAL, ext_opt!(psi_mem_some_avg10), prom(140, gauge(
        "headroom_memory_pressure_some_avg10_ratio",
        "Share of the last 10 s some task stalled on memory (/proc/pressure/memory some avg10 / 100).",
    ), |r| Some(Metric::Fixed(r.ext.psi_mem_some_avg10.as_ref()?.centi, 4))));
    PEAK_RSS_MB = col("peak_rss_mb", Unit::MiB, Set::Ext, W_U64, ext_opt!(peak_rss_mb), prom_labelled(200, gauge(
        "headroom_compiler_rss_bytes",
        "Peak resident size (VmHWM, else VmRSS) of the largest live compiler process on the host (any build's); comm names it.",
    ), Label::Row("comm", |r| r.ext.peak_rss_comm.as_str()), |r| mib(r.ext.peak_rss_mb?)));
    PEAK_RSS_COMM = col("peak_rss_comm", Unit::Text, Set::Ext, W_COMM, (|r| Cell::Text(r.ext.peak_rss_comm.as_str()), |r, b| {
        read_comm(b, &mut r.ext.peak_rss_comm)
    }), None);
    BUILD_PEAK_RSS_MB = col("build_peak_rss_mb", Unit::MiB, Set::Ext, W_U64, ext_opt!(build_peak_rss_mb), prom_labelled(230, gauge(
        "headroom_build_compiler_rss_bytes",
        "Peak resident size (VmHWM, else VmRSS) of the build's largest live compiler (its cgroup or process tree); comm names it.",
    ), Label::Row("comm", |r| r.ext.build_peak_rss_comm.as_str()), |r| mib(r.ext.build_peak_rss_mb?)));
    BUILD_PEAK_RSS_COMM = col("build_peak_rss_comm", Unit::Text, Set::Ext, W_COMM, (|r| Cell::Text(r.ext.build_peak_rss_comm.as_str()), |r, b| {
        read_comm(b, &mut r.ext.build_peak_rss_comm)
    }), None);
    SWAP_IN_MIBPS = col("swap_in_mibps", Unit::MiBps, Set::Ext, W_DECIMAL, ext_opt!(swap_in_mibps), prom(310, gauge(
        "headroom_swap_in_bytes_per_second",
        "Swap-in since the previous sample (/proc/vmstat pswpin, pages of the kernel's size).",
    ), |r| mibps(&r.ext.swap_in_mibps)));
    SWAP_OUT_MIBPS = col("swap_out_mibps", Unit::MiBps, Set::Ext, W_DECIMAL, ext_opt!(swap_out_mibps), prom(320, gauge(
        "headroom_swap_out_bytes_per_second",
        "Swap-out since the previous sample (/proc/vmstat pswpout).",
    ), |r| mibps(&r.ext.swap_out_mibps)));
    MAJFLT_PS = col("majflt_ps", Unit::PerSecond, Set::Ext, W_U64, ext_opt!(majflt_ps), prom(330, gauge(
        "headroom_major_page_faults_per_second",
        "Major page faults per second on the host since the previous sample (/proc/vmstat pgmajfault).",
    ), |r| int(r.ext.majflt_ps?)));
    REFAULTS_PS = col("refaults_ps", Unit::PerSecond, Set::Ext, W_U64, ext_opt!(refaults_ps), prom(340, gauge(
        "headroom_refaults_per_second",
        "Pages read back soon after their eviction, per second since the previous sample (/proc/vmstat workingset_refault*).",
    ), |r| int(r.ext.refaults_ps?)));
    DISK_READ_MIBPS = col("disk_read_mibps", Unit::MiBps, Set::Ext, W_DECIMAL, ext_opt!(disk_read_mibps), prom(350, gauge(
        "headroom_disk_read_bytes_per_second",
        "Reads of the block device under the build disk's path since the previous sample (diskstats sectors x 512).",
    ), |r| mibps(&r.ext.disk_read_mibps)));
    DISK_WRITE_MIBPS = col("disk_write_mibps", Unit::MiBps, Set::Ext, W_DECIMAL, ext_opt!(disk_write_mibps), prom(360, gauge(
        "headroom_disk_write_bytes_per_second",
        "Writes of the block device under the build disk's path since the previous sample (discards are not writes).",
    ), |r| mibps(&r.ext.disk_write_mibps)));
    DISK_UTIL_PCT = col("disk_util_pct", Unit::Pct, Set::Ext, W_U64, ext_opt!(disk_util_pct), prom(370, gauge(
        "headroom_disk_busy_ratio",
        "Share of the time since the previous sample the build disk was busy (diskstats io_ticks), at most 1.",
    ), |r| ratio(r.ext.disk_util_pct)));
    CPU_TEMP_C = col("cpu_temp_c", Unit::Celsius, Set::Ext, W_TENTHS, ext_opt!(cpu_temp_c), prom(380, gauge(
        "headroom_cpu_temperature_celsius",
        "The hottest CPU sensor (thermal zone or hwmon chosen by its type or name).",
    ), |r| r.ext.cpu_temp_c.map(Metric::Tenths)));
    CPU_FREQ_PCT = col("cpu_freq_pct", Unit::Pct, Set::Ext, W_U64, ext_opt!(cpu_freq_pct), prom(390, gauge(
        "headroom_cpu_frequency_ratio",
        "Mean scaling_cur_freq over cpuinfo_max_freq: the governor's request, on a Raspberry Pi not the clock the firmware allowed.",
    ), |r| ratio(r.ext.cpu_freq_pct)));
    // `none`: read, no flag set; empty: unknown (as every field of a file
    // written before `none` was).
    THROTTLED = col("throttled", Unit::Text, Set::Ext, W_FLAGS, (|r| r.ext.throttled.map_or(Cell::Empty, Cell::Flags), |r, b| {
        r.ext.throttled = match b {
            None | Some(b"") => None,
            Some(f) => Some(throttled::parse_flags(f).ok()?.0),
        };
        r.throttled_seen = r.ext.throttled.map_or(throttled::Flags(0), |f| throttled::seen_in_field(throttled::Flags(f)));
        Some(())
    }), prom(400, gauge(
        "headroom_throttled",
        "1 when the Raspberry Pi firmware flag (get_throttled) named by the flag label is active now or began since the previous sample, else 0; with rpi_volt alone, only flag under-voltage.",
    ), |r| r.ext.throttled.map(|f| Metric::Flags(f, r.throttled_seen.0))));
    CG_MEM_LIMIT_MB = col("cg_mem_limit_mb", Unit::MiB, Set::Ext, W_U64, ext_opt!(cg_mem_limit_mb), prom(130, gauge(
        "headroom_cgroup_memory_limit_bytes",
        "The limit of that cgroup (v2 memory.max, v1 memory.limit_in_bytes); absent when unlimited.",
    ), |r| mib(r.ext.cg_mem_limit_mb?)));
    DISK_STALLED = col("disk_stalled", Unit::Count, Set::Ext, W_U64, ext_opt!(disk_stalled), prom(375, gauge(
        "headroom_disk_stalled",
        "1 when the build disk had requests in flight (diskstats field 9) at both ends of the interval since the previous sample and completed none (a hung card or USB bridge), else 0.",
    ), |r| int(r.ext.disk_stalled?)));
    CG_OOM_KILLS = col("cg_oom_kills", Unit::Count, Set::Ext, W_U64, ext_opt!(cg_oom_kills), None);

    // run --jobserver's, read in this order: running and allowed both
    // there or no jobs at all; jobs_paused (since 0.x) 0 when absent.
    JOBS_RUNNING = col("jobs_running", Unit::Count, Set::Jobs, W_U32, (|r| r.jobs.map_or(Cell::Empty, |j| Cell::Int(j.0.into())), |r, b| {
        r.jobs = read_opt::<u32>(b)?.map(|n| (n, 0, 0));
        Some(())
    }), prom(260, gauge(
        "headroom_jobs_running",
        "run --jobserver: jobs running now (slots its clients hold plus the one each runs without; the jobs seen in the build's processes when more).",
    ), |r| int(r.jobs?.0.into())));
    JOBS_ALLOWED = col("jobs_allowed", Unit::Count, Set::Jobs, W_U32, (|r| r.jobs.map_or(Cell::Empty, |j| Cell::Int(j.1.into())), |r, b| {
        let allowed = read_opt::<u32>(b)?;
        r.jobs = r.jobs.zip(allowed).map(|((n, _, _), a)| (n, a, 0));
        Some(())
    }), prom(270, gauge(
        "headroom_jobs_allowed",
        "run --jobserver: jobs it allows at once now.",
    ), |r| int(r.jobs?.1.into())));
    JOBS_PAUSED = col("jobs_paused", Unit::Count, Set::Jobs, W_U32, (|r| r.jobs.map_or(Cell::Empty, |j| Cell::Int(j.2.into())), |r, b| {
        let paused = read_opt::<u32>(b)?;
        if let Some(j) = &mut r.jobs {
            j.2 = paused.unwrap_or(0);
        }
        Some(())
    }), prom(280, gauge(
        "headroom_jobs_paused",
        "run --jobserver: jobs stopped (SIGSTOP) now because their growth would outrun the memory left.",
    ), |r| int(r.jobs?.2.into())));
}

/// Columns of `set` and the sets before it.
const fn count(set: Set) -> usize {
    let mut n = 0;
    while n < COLUMNS.len() && COLUMNS[n].set as u8 <= set as u8 {
        n += 1;
    }
    n
}

/// The names of the columns from `from` to `to` (exclusive), in order.
const fn names<const N: usize>(from: usize) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = COLUMNS[from + i].name;
        i += 1;
    }
    out
}

/// Bytes of the header of the first `n` columns, with its newline.
const fn header_len(n: usize) -> usize {
    let mut len = n; // n − 1 commas and the newline
    let mut i = 0;
    while i < n {
        len += COLUMNS[i].name.len();
        i += 1;
    }
    len
}

/// The header of the first `n` columns, with its newline.
const fn header_bytes<const L: usize>(n: usize) -> [u8; L] {
    let mut out = [0u8; L];
    let mut at = 0;
    let mut i = 0;
    while i < n {
        if i > 0 {
            out[at] = b',';
            at += 1;
        }
        let name = COLUMNS[i].name.as_bytes();
        let mut j = 0;
        while j < name.len() {
            out[at] = name[j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    out[at] = b'\n';
    out
}

/// The table is in header-set order: core, extension, jobs.
const _: () = {
    let mut i = 1;
    while i < COLUMNS.len() {
        assert!(COLUMNS[i - 1].set as u8 <= COLUMNS[i].set as u8);
        i += 1;
    }
};

/// Capacity of one formatted row in bytes: every column at its widest
/// ([`Column::width`]), each followed by a comma or, the last, by the
/// newline. The jobserver's row, the longest, fits exactly.
pub const ROW_CAP: usize = {
    let mut n = COLUMNS.len();
    let mut i = 0;
    while i < COLUMNS.len() {
        n += COLUMNS[i].width;
        i += 1;
    }
    n
};

const N_CORE: usize = count(Set::Core);
const N_FULL: usize = count(Set::Ext);
const N_JOBS: usize = count(Set::Jobs);

/// The compatible column names, in order.
pub const CORE_COLUMNS: [&str; N_CORE] = names(0);

/// headroom's extension column names, in order, after `context`.
pub const EXT_COLUMNS: [&str; N_FULL - N_CORE] = names(N_CORE);

/// The columns `run --jobserver` adds after the extension columns.
pub const JOBS_COLUMNS: [&str; N_JOBS - N_FULL] = names(N_FULL);

const COMPAT_BYTES: [u8; header_len(N_CORE)] = header_bytes(N_CORE);
const FULL_BYTES: [u8; header_len(N_FULL)] = header_bytes(N_FULL);
const JOBS_BYTES: [u8; header_len(N_JOBS)] = header_bytes(N_JOBS);

/// Column names are ASCII: their header is text.
const fn text(b: &'static [u8]) -> &'static str {
    match core::str::from_utf8(b) {
        Ok(s) => s,
        Err(_) => panic!("a column name is not UTF-8"),
    }
}

/// The header line of the compatible CSV, with its newline.
pub const HEADER_COMPAT: &str = text(&COMPAT_BYTES);

/// The full header line (core + extension columns), with its newline.
pub const HEADER_FULL: &str = text(&FULL_BYTES);

/// The full header with the jobserver's columns, with its newline.
pub const HEADER_JOBS: &str = text(&JOBS_BYTES);

/// The header a recording writes: the core with `compat`, else the full
/// one, with the jobserver's columns when `jobs`.
pub fn header(compat: bool, jobs: bool) -> &'static str {
    match (compat, jobs) {
        (true, _) => HEADER_COMPAT,
        (false, false) => HEADER_FULL,
        (false, true) => HEADER_JOBS,
    }
}

/// The full header of CSVs written before the "why it was slow" columns
/// (the core and the first 13 extension columns, no newline): tests read
/// such files to check that old recordings still summarize.
#[cfg(test)]
pub(crate) fn header_27() -> String<512> {
    let mut h = String::new();
    for (i, c) in COLUMNS[..N_CORE + 13].iter().enumerate() {
        if i > 0 {
            let _ = h.push(',');
        }
        let _ = h.push_str(c.name);
    }
    h
}

/// Families with a place, in exposition order: the columns' indices in
/// [`COLUMNS`] sorted by [`Prom::at`].
const fn prom_order<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    let mut n = 0;
    let mut last: i32 = -1;
    while n < N {
        // The column with the smallest place above the last one.
        let mut best: Option<(usize, u16)> = None;
        let mut i = 0;
        while i < COLUMNS.len() {
            if let Some(p) = &COLUMNS[i].prom {
                let better = match best {
                    Some((_, at)) => p.at < at,
                    None => true,
                };
                if p.at as i32 > last && better {
                    best = Some((i, p.at));
                }
            }
            i += 1;
        }
        match best {
            Some((i, at)) => {
                out[n] = i as u8;
                last = at as i32;
            }
            None => panic!("two columns share a Prometheus place"),
        }
        n += 1;
    }
    out
}

/// Columns with a Prometheus family.
const fn prom_count() -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < COLUMNS.len() {
        if COLUMNS[i].prom.is_some() {
            n += 1;
        }
        i += 1;
    }
    n
}

const PROM_ORDER: [u8; prom_count()] = prom_order();

/// The columns' Prometheus families by rising [`Prom::at`].
pub fn prom_families() -> impl Iterator<Item = &'static Prom> {
    PROM_ORDER
        .iter()
        .filter_map(|&i| COLUMNS.get(usize::from(i))?.prom.as_ref())
}

impl Row {
    /// Formats the row, with its newline, into `out` (cleared first):
    /// the compatible core with `compat`; otherwise the full row, and the
    /// jobserver's columns when [`Row::jobs`] is set.
    ///
    /// # Errors
    /// [`BufferFull`] only if `out` is too small, which [`ROW_CAP`] rules out.
    pub fn format(&self, compat: bool, out: &mut Vec<u8, ROW_CAP>) -> Result<(), BufferFull> {
        out.clear();
        let n = match (compat, self.jobs.is_some()) {
            (true, _) => N_CORE,
            (false, false) => N_FULL,
            (false, true) => N_JOBS,
        };
        put_first(self, n, out)?;
        // The last comma becomes the newline.
        out.pop();
        out.push(b'\n').map_err(|_| BufferFull)
    }

    /// Reads a row from a record's fields, one per column of [`COLUMNS`]
    /// (`None` where the file has no such column); `None` when a field is
    /// malformed.
    pub fn read<'f>(field: impl Fn(usize) -> Option<&'f [u8]>) -> Option<Row> {
        let mut row = Row::empty_at(0, Iso::from_epoch(0));
        row.read_into(field)?;
        Some(row)
    }

    /// [`Row::read`] into this row, kept from one record to the next by
    /// the CSV reader: a row is over 1 KiB, and building and moving a new
    /// one per record was a tenth of `summarize`. The row is first made
    /// empty as [`Row::read`]'s is (its `iso` aside: the core column `iso`
    /// is always read). `None` when a field is malformed; the row is then
    /// partly read and means nothing.
    pub fn read_into<'f>(&mut self, field: impl Fn(usize) -> Option<&'f [u8]>) -> Option<()> {
        *self = Row::empty_at(0, self.iso);
        read_each(self, field)
    }
}

/// Appends one cell.
#[inline]
fn put(cell: Cell<'_>, out: &mut Vec<u8, ROW_CAP>) -> Result<(), BufferFull> {
    match cell {
        Cell::Empty => Ok(()),
        Cell::Int(v) => ufmt::uwrite!(out, "{}", v).map_err(|_| BufferFull),
        Cell::Text(t) => out.extend_from_slice(t.as_bytes()).map_err(|_| BufferFull),
        Cell::Quoted(t) => ufmt::uwrite!(out, "\"{}\"", t).map_err(|_| BufferFull),
        Cell::Tenths(t) => t.write(out).map_err(|_| BufferFull),
        Cell::Flags(f) => {
            let mut text = [0u8; throttled::FLAGS_TEXT_LEN];
            let t = throttled::format_flags(throttled::Flags(f), &mut text).ok_or(BufferFull)?;
            out.extend_from_slice(t.as_bytes()).map_err(|_| BufferFull)
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::tick::row::Ext;
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
    fn throttle_flags_format_and_read_back() {
        let mut out = Vec::new();
        let mut r = Row::empty(0);
        r.ext.throttled = Some(0b0101);
        assert_eq!((THROTTLED.write)(&r), Cell::Flags(0b0101));
        r.format(false, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap();
        assert!(
            line.split(',').any(|f| f == "under-voltage|throttled"),
            "{line}"
        );
        let read = |b: &[u8]| {
            let mut r = Row::empty(0);
            (THROTTLED.read)(&mut r, Some(b)).map(|()| r.ext.throttled)
        };
        assert_eq!(read(b"under-voltage|throttled"), Some(Some(0b0101)));
        // Read and no flag set is `none`; unknown (and every empty field of
        // files written before `none`) is empty.
        assert_eq!(read(b"none"), Some(Some(0)));
        assert_eq!(read(b""), Some(None));
        assert_eq!(read(b"hot"), None);
        assert_eq!(read(b"none|throttled"), None);
        r.ext.throttled = Some(0);
        out.clear();
        r.format(false, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap();
        assert!(line.split(',').any(|f| f == "none"), "{line}");
        r.ext.throttled = None;
        out.clear();
        r.format(false, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap();
        assert!(!line.contains("none"), "{line}");
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

    /// Issue 33: a figure that was not read is an empty field in the
    /// compatible core too, never 0, and reads back as unknown; a consumer
    /// splitting on commas still gets 14 fields.
    #[test]
    fn unread_core_figures_are_empty_fields_and_read_back_unknown() {
        let mut r = sample_row();
        r.load1 = Decimal::default();
        r.cpu_known = false;
        r.mem_known = false;
        r.disk_known = false;
        let mut out = Vec::new();
        r.format(true, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap().trim_end();
        let f: std::vec::Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 14, "{line}");
        // load1, cpu_pct, mem_used_mb, mem_avail_mb, mem_pct, swap_used_mb,
        // disk_avail_gb, disk_pct: empty; compilers still counted.
        assert_eq!(&f[3..11], ["", "", "", "", "", "", "", ""], "{line}");
        assert_eq!(f[11], "2");
        let back = Row::read(|i| f.get(i).map(|s| s.as_bytes())).unwrap();
        assert!(!back.mem_known && !back.disk_known && !back.cpu_known);
        assert!(back.load1.text.is_empty());
        // Each alone: only its own fields go empty.
        let mut r = sample_row();
        r.cpu_known = false;
        out.clear();
        r.format(true, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap();
        assert!(line.contains(",0.61,,476,23628,1,0,76,69,2,"), "{line}");
        // A read row keeps all known.
        let f: std::vec::Vec<&str> = line.trim_end().split(',').collect();
        let back = Row::read(|i| f.get(i).map(|s| s.as_bytes())).unwrap();
        assert!(back.mem_known && back.disk_known && !back.cpu_known);
        // A 0 is a reading, and garbage is still a malformed row.
        let mut f = f;
        f[4] = "0";
        assert!(
            Row::read(|i| f.get(i).map(|s| s.as_bytes()))
                .unwrap()
                .cpu_known
        );
        f[4] = "x";
        assert!(Row::read(|i| f.get(i).map(|s| s.as_bytes())).is_none());
        // compilers, uncounted (no proc/): empty too, and read back unknown.
        let mut r = sample_row();
        r.compilers_known = false;
        out.clear();
        r.format(true, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap();
        let f: std::vec::Vec<&str> = line.trim_end().split(',').collect();
        assert_eq!(f[11], "", "{line}");
        let back = Row::read(|i| f.get(i).map(|s| s.as_bytes())).unwrap();
        assert!(!back.compilers_known && back.mem_known && back.cpu_known);
    }

    /// `r` written as a full row: as many fields as [`HEADER_FULL`] and the
    /// core and extension entries of [`COLUMNS`]; those named in `set` hold their text, every
    /// other extension column is empty (the row's context has no comma).
    fn assert_fields(r: &Row, set: &[(&str, &str)]) {
        let mut out = Vec::new();
        r.format(false, &mut out).unwrap();
        let s = std::str::from_utf8(&out).unwrap();
        let fields: std::vec::Vec<&str> = s.trim_end().split(',').collect();
        let names: std::vec::Vec<&str> = HEADER_FULL.trim_end().split(',').collect();
        assert_eq!(fields.len(), names.len(), "{s}");
        let full = COLUMNS.iter().filter(|c| c.set != Set::Jobs);
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
        r.cpu_pct = u64::MAX;
        r.mem_used_mb = u64::MAX;
        r.mem_avail_mb = u64::MAX;
        r.mem_pct = u64::MAX;
        r.swap_used_mb = u64::MAX;
        r.disk_avail_gb = u64::MAX;
        r.disk_pct = u64::MAX;
        r.compilers = u64::MAX;
        r.stage.clear();
        for _ in 0..r.stage.capacity() {
            r.stage.push('x').unwrap();
        }
        r.context.clear();
        while r.context.push('\u{1F600}').is_ok() {}
        let m = Some(u64::MAX);
        let comm = || String::try_from("1234567890123456").unwrap();
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
            peak_rss_comm: comm(),
            build_peak_rss_mb: m,
            build_peak_rss_comm: comm(),
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
            disk_stalled: m,
            cg_oom_kills: m,
        };
        r.jobs = Some((u32::MAX, u32::MAX, u32::MAX));
        let mut out = Vec::new();
        assert_eq!(r.format(false, &mut out), Ok(()));
        // Each field within its column's declared width (no field of this
        // row holds a comma), so ROW_CAP, their sum, holds any row.
        let line = std::str::from_utf8(&out).unwrap();
        let fields: std::vec::Vec<&str> = line.trim_end().split(',').collect();
        assert_eq!(fields.len(), COLUMNS.len(), "{line}");
        for (c, f) in COLUMNS.iter().zip(&fields) {
            assert!(
                f.len() <= c.width,
                "{}: {} bytes over {}",
                c.name,
                f.len(),
                c.width
            );
        }
    }

    #[test]
    fn each_name_says_its_unit() {
        for c in COLUMNS {
            let n = c.name;
            let ok = match c.unit {
                Unit::MiB => n.ends_with("_mb"),
                Unit::GiB => n.ends_with("_gb"),
                Unit::MiBps => n.ends_with("_mibps"),
                Unit::PerSecond => n.ends_with("_ps"),
                Unit::Pct => n.ends_with("_pct") || n == "psi_mem_some_avg10",
                Unit::Celsius => n.ends_with("_c"),
                Unit::Seconds => n.ends_with("_s") || n == "epoch",
                Unit::Time | Unit::Load | Unit::Count | Unit::Text => true,
            };
            assert!(ok, "{n}: {:?}", c.unit);
        }
    }

    #[test]
    fn the_header_sets_nest() {
        assert_eq!(CORE_COLUMNS.len(), 14);
        assert!(HEADER_FULL.starts_with(HEADER_COMPAT.trim_end()));
        assert!(HEADER_JOBS.starts_with(HEADER_FULL.trim_end()));
        assert_eq!(header(true, true), HEADER_COMPAT);
        assert_eq!(header(false, true), HEADER_JOBS);
    }
}
