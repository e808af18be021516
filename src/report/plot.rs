//! `headroom plot`: a self-contained SVG timeline of a recorded run.
//!
//! The CSV is read twice, streaming, with memory fixed whatever its length:
//!
//! 1. [`Scan`] sees every row once: the time range, the row count, which
//!    series the file has, and the near-OOM threshold (the summary's own
//!    rule, through [`Summary::near_oom`]).
//! 2. [`Plot`] is sized from the scan and sees every row again: each row
//!    falls into one of at most [`BUCKETS`] time buckets, which keep the
//!    first, smallest, largest and last value of each [`Series`]; stage
//!    changes become at most [`BANDS`] background bands; each row where the
//!    `oom_kills` counter rose becomes a marker (at most [`OOM_MARKS`]).
//!
//! [`Plot::render`] then writes the SVG to any [`ufmt::uWrite`] sink in small
//! pieces, so the output is bounded too: at most 4 points per bucket and
//! series, under 1 MiB for any input.
//!
//! Layout: a title (file name, samples, duration, time range), a legend,
//! then three panels on one time axis — memory in MiB (RAM used and
//! available, swap used, zram stored and zram RAM, the near-OOM line; and
//! when a memory cgroup binds, its limit as a dashed line, its use and its
//! available memory), disk available (with the low-disk line), CPU % with
//! the compiler count on a right-hand axis (and, for `run --jobserver`, the
//! jobs running, allowed and paused) — and a fourth, "I/O and temperature", only when some
//! row has one of its columns (none in a 14- or 27-column CSV, whose plot
//! is as before): the build disk's read and write MiB/s and swap-in and
//! swap-out MiB/s, with the CPU temperature in °C on a right-hand axis.
//! Stage bands run behind all the panels (a run without
//! stages is one band named by its [`run_id`]), OOM kills are red lines
//! across them; both carry `<title>` hover text. All text that comes from
//! the CSV goes through [`escape`].
//!
//! The memory axis is scaled to `MEM_USE`, what the host and the build
//! take (and the cgroup's limit when it binds); RAM available is drawn
//! where it falls on it, MemTotal is a line on it or a note above it. A
//! series that is 0 throughout where 0 shows nothing is left out of the
//! plot and the legend, and named in a note. Every series has a colour of
//! its own.
//!
//! # References
//! SVG 1.1 (W3C), "Basic shapes" and "The 'title' element"; XML 1.0, "Char"
//! production; SPEC.md "CSV" and "Summary".

use heapless::Vec;
use ufmt::{uWrite, uwrite};

use crate::followed::text::{Context, Stage};
use crate::report::summary::binding::Binding;
use crate::report::summary::{Summary, Threshold};
use crate::tick::clock::Iso;
use crate::tick::row::Row;

/// The SVG: [`Plot::render`] and the pieces it draws.
mod svg;

/// Time buckets across the plot width. The plot area is 1,020 px wide, so
/// one bucket is about one pixel: more would not show, fewer would hide
/// spikes between buckets (each bucket keeps its min and max).
pub const BUCKETS: usize = 1000;

/// Stage bands kept. A label needs ~60 px, so more than ~20 are unreadable
/// anyway; 48 keeps short stages visible by hover. Beyond it, neighbouring
/// bands are merged pairwise and the SVG says so.
pub const BANDS: usize = 48;

/// OOM-kill markers drawn one by one; later ones are counted in a note.
pub const OOM_MARKS: usize = 64;

/// Number of [`Series`]: [`SERIES`] and [`IO_SERIES`].
pub const SERIES_N: usize = 19;

/// One line of the plot, with the CSV column(s) it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    /// `mem_used_mb`, MiB (rows whose /proc/meminfo was readable).
    MemUsed,
    /// `mem_avail_mb`, MiB.
    MemAvail,
    /// `swap_used_mb`, MiB.
    SwapUsed,
    /// `zram_stored_mb`, MiB (headroom's CSV only).
    ZramStored,
    /// `zram_ram_mb`, MiB (headroom's CSV only).
    ZramRam,
    /// `cg_mem_limit_mb`, MiB: the binding cgroup's limit, a dashed line
    /// (drawn only when a cgroup binds: [`Scan`]).
    CgLimit,
    /// The cgroup's use, `cg_mem_limit_mb` − `cg_mem_avail_mb`, MiB (not a
    /// column of its own; drawn only when a cgroup binds).
    CgUsed,
    /// `cg_mem_avail_mb`, MiB: the cgroup's available memory (drawn only
    /// when a cgroup binds).
    CgAvail,
    /// `disk_avail_mb`, else `disk_avail_gb` × 1024: MiB free on the build
    /// filesystem.
    DiskFree,
    /// `cpu_pct`, % busy.
    Cpu,
    /// `compilers`, a count of processes.
    Compilers,
    /// `jobs_running` of `run --jobserver`, a count.
    JobsRunning,
    /// `jobs_allowed` of `run --jobserver`, a count.
    JobsAllowed,
    /// `jobs_paused` of `run --jobserver`: jobs stopped because their
    /// growth would outrun memory, a count.
    JobsPaused,
    /// `disk_read_mibps`, hundredths of MiB/s.
    DiskRead,
    /// `disk_write_mibps`, hundredths of MiB/s.
    DiskWrite,
    /// `swap_in_mibps`, hundredths of MiB/s.
    SwapIn,
    /// `swap_out_mibps`, hundredths of MiB/s.
    SwapOut,
    /// `cpu_temp_c`, tenths of °C (below 0 drawn at 0).
    CpuTemp,
}

/// The series of the first three panels, in legend order.
pub const SERIES: [Series; 14] = [
    Series::MemUsed,
    Series::MemAvail,
    Series::SwapUsed,
    Series::ZramStored,
    Series::ZramRam,
    Series::CgLimit,
    Series::CgUsed,
    Series::CgAvail,
    Series::DiskFree,
    Series::Cpu,
    Series::Compilers,
    Series::JobsRunning,
    Series::JobsAllowed,
    Series::JobsPaused,
];

/// The series of the memory panel, in drawing order.
const MEM_SERIES: [Series; 8] = [
    Series::MemUsed,
    Series::MemAvail,
    Series::SwapUsed,
    Series::ZramStored,
    Series::ZramRam,
    Series::CgLimit,
    Series::CgUsed,
    Series::CgAvail,
];

/// The counts on the CPU panel's right-hand axis, in drawing order.
const COUNT_SERIES: [Series; 4] = [
    Series::Compilers,
    Series::JobsRunning,
    Series::JobsAllowed,
    Series::JobsPaused,
];

/// The series of the fourth panel, I/O and temperature, in legend order.
pub const IO_SERIES: [Series; SERIES_N - SERIES.len()] = [
    Series::DiskRead,
    Series::DiskWrite,
    Series::SwapIn,
    Series::SwapOut,
    Series::CpuTemp,
];

/// Every series: [`SERIES`] then [`IO_SERIES`].
const ALL: [Series; SERIES_N] = {
    let mut all = [Series::MemUsed; SERIES_N];
    let mut i = 0;
    while i < SERIES_N {
        all[i] = if i < SERIES.len() {
            SERIES[i]
        } else {
            IO_SERIES[i - SERIES.len()]
        };
        i += 1;
    }
    all
};

impl Series {
    /// The row's value for this series in the series' unit; `None` when the
    /// row has no such figure (an empty field, or a source marked unread).
    pub fn of(self, row: &Row) -> Option<u64> {
        match self {
            Series::MemUsed => row.mem_known.then_some(row.mem_used_mb),
            Series::MemAvail => row.mem_known.then_some(row.mem_avail_mb),
            Series::SwapUsed => row.mem_known.then_some(row.swap_used_mb),
            Series::ZramStored => row.ext.zram_stored_mb,
            Series::ZramRam => row.ext.zram_ram_mb,
            Series::CgLimit => row.ext.cg_mem_avail_mb.and(row.ext.cg_mem_limit_mb),
            Series::CgUsed => row.ext.cg_mem_used_mb(),
            Series::CgAvail => row.ext.cg_mem_avail_mb,
            Series::DiskFree => row.disk_known.then(|| {
                row.ext
                    .disk_avail_mb
                    .unwrap_or(row.disk_avail_gb.saturating_mul(1024))
            }),
            Series::Cpu => Some(row.cpu_pct),
            Series::Compilers => Some(row.compilers),
            Series::JobsRunning => row.jobs.map(|(r, _, _)| u64::from(r)),
            Series::JobsAllowed => row.jobs.map(|(_, a, _)| u64::from(a)),
            Series::JobsPaused => row.jobs.map(|(_, _, p)| u64::from(p)),
            Series::DiskRead => row.ext.disk_read_mibps.as_ref().map(|d| d.centi),
            Series::DiskWrite => row.ext.disk_write_mibps.as_ref().map(|d| d.centi),
            Series::SwapIn => row.ext.swap_in_mibps.as_ref().map(|d| d.centi),
            Series::SwapOut => row.ext.swap_out_mibps.as_ref().map(|d| d.centi),
            Series::CpuTemp => row.ext.cpu_temp_c.map(|t| u64::try_from(t.0).unwrap_or(0)),
        }
    }

    /// The legend text, with the unit.
    pub fn label(self) -> &'static str {
        match self {
            Series::MemUsed => "RAM used (MiB)",
            Series::MemAvail => "RAM available (MiB)",
            Series::SwapUsed => "swap used (MiB)",
            Series::ZramStored => "zram stored (MiB)",
            Series::ZramRam => "zram RAM (MiB)",
            Series::CgLimit => "cgroup limit (MiB)",
            Series::CgUsed => "cgroup used (MiB)",
            Series::CgAvail => "cgroup available (MiB)",
            Series::DiskFree => "disk available",
            Series::Cpu => "CPU %",
            Series::Compilers => "compilers (count)",
            Series::JobsRunning => "jobs running (count)",
            Series::JobsAllowed => "jobs allowed (count)",
            Series::JobsPaused => "jobs paused (count)",
            Series::DiskRead => "disk read (MiB/s)",
            Series::DiskWrite => "disk write (MiB/s)",
            Series::SwapIn => "swap-in (MiB/s)",
            Series::SwapOut => "swap-out (MiB/s)",
            Series::CpuTemp => "CPU temperature (°C)",
        }
    }

    /// The CSV column name, used as the polyline's `data-series`; for
    /// the cgroup's use, which no column holds, `cg_mem_used_mb`.
    pub fn column(self) -> &'static str {
        match self {
            Series::MemUsed => "mem_used_mb",
            Series::MemAvail => "mem_avail_mb",
            Series::SwapUsed => "swap_used_mb",
            Series::ZramStored => "zram_stored_mb",
            Series::ZramRam => "zram_ram_mb",
            Series::CgLimit => "cg_mem_limit_mb",
            Series::CgUsed => "cg_mem_used_mb",
            Series::CgAvail => "cg_mem_avail_mb",
            Series::DiskFree => "disk_avail_mb",
            Series::Cpu => "cpu_pct",
            Series::Compilers => "compilers",
            Series::JobsRunning => "jobs_running",
            Series::JobsAllowed => "jobs_allowed",
            Series::JobsPaused => "jobs_paused",
            Series::DiskRead => "disk_read_mibps",
            Series::DiskWrite => "disk_write_mibps",
            Series::SwapIn => "swap_in_mibps",
            Series::SwapOut => "swap_out_mibps",
            Series::CpuTemp => "cpu_temp_c",
        }
    }

    /// The stroke colour, one per series (no two alike, and none the
    /// near-OOM line's, the OOM marker's or MemTotal's).
    fn color(self) -> &'static str {
        match self {
            Series::MemUsed => "#1f77b4",
            Series::MemAvail => "#2ca02c",
            Series::SwapUsed => "#9467bd",
            Series::ZramStored => "#ff7f0e",
            Series::ZramRam => "#8c564b",
            Series::CgLimit => "#393b79",
            Series::CgUsed => "#c51b7d",
            Series::CgAvail => "#1b9e77",
            Series::DiskFree => "#17becf",
            Series::Cpu => "#d62728",
            Series::Compilers => "#555555",
            Series::JobsRunning => "#08519c",
            Series::JobsAllowed => "#a6761d",
            Series::JobsPaused => "#f0027f",
            Series::DiskRead => "#008080",
            Series::DiskWrite => "#000080",
            Series::SwapIn => "#bcbd22",
            Series::SwapOut => "#e377c2",
            Series::CpuTemp => "#d95f02",
        }
    }

    /// Drawn dashed: a limit, not a measure.
    fn dashed(self) -> bool {
        self == Series::CgLimit
    }

    /// One of `run --jobserver`'s columns, which only its CSVs have.
    fn of_jobserver(self) -> bool {
        matches!(
            self,
            Series::JobsRunning | Series::JobsAllowed | Series::JobsPaused
        )
    }

    fn index(self) -> usize {
        self as usize
    }

    /// A peak in the series' unit as its hover text shows it: MiB for
    /// disk available (its axis may be in GiB), MiB/s with two decimals,
    /// °C with one.
    fn write_peak<W: uWrite>(self, w: &mut W, v: u64) -> Result<(), W::Error> {
        match self {
            Series::DiskFree => uwrite!(w, "{} MiB", v),
            Series::DiskRead | Series::DiskWrite | Series::SwapIn | Series::SwapOut => uwrite!(
                w,
                "{} MiB/s",
                crate::tick::row::Decimal::from_centi(v).text.as_str()
            ),
            Series::CpuTemp => {
                let t = crate::tick::row::Tenths(i32::try_from(v).unwrap_or(i32::MAX));
                t.write(w)?;
                uwrite!(w, " °C")
            }
            _ => uwrite!(w, "{}", v),
        }
    }

    /// A series whose values are all 0 shows nothing (no swap, no zram, no
    /// compiler, an idle CPU, no job paused) and is left out; 0 RAM or
    /// cgroup memory available or 0 disk free is the news itself, and RAM
    /// used is never 0.
    fn zero_is_nothing(self) -> bool {
        !matches!(
            self,
            Series::MemAvail | Series::DiskFree | Series::CgAvail | Series::CgLimit
        )
    }

    /// Whether this is one of the cgroup's series, drawn only when a
    /// cgroup binds.
    fn of_cgroup(self) -> bool {
        matches!(self, Series::CgLimit | Series::CgUsed | Series::CgAvail)
    }
}

/// The memory series that the memory axis is scaled to: what the host and
/// the build take, and the binding cgroup's limit and use. RAM available
/// is MemTotal minus RAM used: on a large host it would put the axis near
/// MemTotal and the build's use flat at the bottom, so it is drawn where
/// it falls on the axis (with the near-OOM line, which is always on it)
/// and marked when above it; so is the cgroup's available memory.
const MEM_USE: [Series; 6] = [
    Series::MemUsed,
    Series::SwapUsed,
    Series::ZramStored,
    Series::ZramRam,
    Series::CgLimit,
    Series::CgUsed,
];

/// Pass 1 over the CSV: time range, row count, the series present and the
/// thresholds. Fixed size (a [`Summary`] inside, about 6 KiB).
#[derive(Clone, Debug)]
pub struct Scan {
    summary: Summary,
    rows: u64,
    t_min: u64,
    t_max: u64,
    iso_min: Iso,
    iso_max: Iso,
    present: [bool; SERIES_N],
    nonzero: [bool; SERIES_N],
    oom_counter: bool,
    /// Some row's cgroup had less available memory than MemAvailable
    /// ([`Binding`]): the cgroup's series are drawn.
    cg_binds: bool,
}

impl Scan {
    /// An empty scan; `near_oom_mb` is a given near-OOM threshold (MiB of
    /// MemAvailable), `None` for the summary's (host-scaled) default.
    pub fn new(near_oom_mb: Option<u64>) -> Scan {
        Scan {
            summary: Summary::new(near_oom_mb, None),
            rows: 0,
            t_min: u64::MAX,
            t_max: 0,
            iso_min: Iso::from_epoch(0),
            iso_max: Iso::from_epoch(0),
            present: [false; SERIES_N],
            nonzero: [false; SERIES_N],
            oom_counter: false,
            cg_binds: false,
        }
    }

    /// Takes one row into account. Rows may come in any time order.
    pub fn observe(&mut self, row: &Row) {
        self.summary.observe(row);
        self.rows += 1;
        if row.epoch < self.t_min {
            self.t_min = row.epoch;
            self.iso_min = row.iso;
        }
        if row.epoch >= self.t_max {
            self.t_max = row.epoch;
            self.iso_max = row.iso;
        }
        for s in ALL {
            if let Some(v) = s.of(row) {
                self.present[s.index()] = true;
                self.nonzero[s.index()] |= v > 0;
            }
        }
        self.oom_counter |= row.ext.oom_kills.is_some();
        self.cg_binds |= row.mem_known && Binding::of(row).by_cgroup();
    }

    /// Rows observed.
    pub fn rows(&self) -> u64 {
        self.rows
    }
}

/// One series in one bucket: first, smallest, largest, last value in the
/// series' unit (saturated to `u32`: 4 PiB in MiB). Empty when min > max.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cell {
    first: u32,
    min: u32,
    max: u32,
    last: u32,
}

impl Cell {
    const EMPTY: Cell = Cell {
        first: 0,
        min: u32::MAX,
        max: 0,
        last: 0,
    };

    fn is_empty(&self) -> bool {
        self.min > self.max
    }

    fn add(&mut self, v: u64) {
        let v = u32::try_from(v).unwrap_or(u32::MAX);
        if self.is_empty() {
            self.first = v;
        }
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.last = v;
    }
}

/// The epochs one bucket saw: earliest, latest, how many rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    lo: u64,
    hi: u64,
    rows: u32,
}

/// A stage band: one run of rows with the same stage, or several
/// neighbouring runs merged when there were more than [`BANDS`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct Band {
    /// The label: the stage with the most rows among the merged runs.
    stage: Stage,
    /// Rows of `stage` in the band.
    lead_rows: u64,
    /// First and last epoch seen in the band.
    t_start: u64,
    t_end: u64,
    /// Stage runs merged into this band (1 when not merged).
    runs: u64,
    rows: u64,
}

impl Band {
    fn absorb(&mut self, o: &Band) {
        self.t_start = self.t_start.min(o.t_start);
        self.t_end = self.t_end.max(o.t_end);
        self.runs = self.runs.saturating_add(o.runs);
        self.rows = self.rows.saturating_add(o.rows);
        if o.lead_rows > self.lead_rows {
            self.stage = o.stage.clone();
            self.lead_rows = o.lead_rows;
        }
    }
}

/// A row where the kernel's OOM-kill counter rose.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mark {
    epoch: u64,
    iso: Iso,
    kills: u64,
    stage: Stage,
    context: Context,
}

/// Pass 2 over the CSV and the SVG. About 300 KiB: box it.
#[derive(Clone, Debug)]
pub struct Plot {
    t0: u64,
    span: u64,
    nb: usize,
    expected: u64,
    seen: u64,
    near_oom: Threshold,
    low_disk: Threshold,
    /// The series with a value in some row.
    present: [bool; SERIES_N],
    /// The series drawn and in the legend: present, and not all 0 where
    /// 0 shows nothing ([`Series::zero_is_nothing`]); the cgroup's only
    /// when a cgroup binds.
    drawn: [bool; SERIES_N],
    /// A cgroup bound some row: the near-OOM line is about its memory too.
    cg_binds: bool,
    /// MemTotal, MiB: the largest RAM used + RAM available of a row (the
    /// CSV has no MemTotal column; `mem_used_mb` is MemTotal −
    /// MemAvailable); 0 without memory figures.
    mem_total: u64,
    oom_counter: bool,
    /// Some row has a column of the fourth panel ([`IO_SERIES`]).
    io: bool,
    iso_first: Iso,
    iso_last: Iso,
    times: [Span; BUCKETS],
    cells: [[Cell; SERIES_N]; BUCKETS],
    bands: Vec<Band, BANDS>,
    /// Stage runs a band takes before the next one starts: 1, doubled at
    /// each [`halve`], so that all bands cover about as many runs.
    runs_per_band: u64,
    cur_stage: Option<Stage>,
    stage_runs: u64,
    marks: Vec<Mark, OOM_MARKS>,
    marks_more: u64,
    oom_prev: Option<u64>,
    oom_total: u64,
    /// Malformed CSV rows skipped while reading (told in a note).
    pub skipped: u64,
}

/// SVG geometry, px.
const W: u64 = 1200;
const H: u64 = 900;
const X0: u64 = 80;
const X1: u64 = 1100;
const PW: u64 = X1 - X0;
/// Panels: (top, bottom).
const MEM: (u64, u64) = (110, 440);
const DISK: (u64, u64) = (470, 590);
const CPU: (u64, u64) = (620, 780);
/// The fourth panel, I/O and temperature, below CPU; it makes the SVG
/// taller by [`IO_H`].
const IO: (u64, u64) = (810, 940);
/// What the fourth panel adds to the height.
const IO_H: u64 = IO.1 - CPU.1;

/// An axis: raw values 0..=`max` (in the series' unit), ticks every `step`
/// shown divided by `div` (1024 to show MiB as GiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Axis {
    max: u64,
    step: u64,
    div: u64,
}

/// The smallest of 1, 2, 5 × 10^k that is at least `raw`.
fn nice(raw: u64) -> u64 {
    let mut p: u64 = 1;
    loop {
        for m in [1, 2, 5] {
            let c = p.saturating_mul(m);
            if c >= raw || c == u64::MAX {
                return c;
            }
        }
        p = p.saturating_mul(10);
    }
}

impl Axis {
    /// The tick values: 0, step, 2 × step, … up to `max` (a step of 0
    /// counts as 1; a sum past u64::MAX ends them).
    fn ticks(self) -> impl Iterator<Item = u64> {
        let step = self.step.max(1);
        core::iter::successors(Some(0u64), move |v| v.checked_add(step))
            .take_while(move |v| *v <= self.max)
    }

    /// An axis from 0 whose top is a whole number of nice steps at or above
    /// `max`, in about 5 steps; shown in units of `div`.
    fn new(max: u64, div: u64) -> Axis {
        let div = div.max(1);
        let top = max.div_ceil(div).max(1);
        let step = nice(top.div_ceil(5));
        let ticks = top.div_ceil(step).max(1);
        Axis {
            max: ticks.saturating_mul(step).saturating_mul(div),
            step: step.saturating_mul(div),
            div,
        }
    }

    /// The y of `v` in a panel (top, bottom); values past the top are drawn
    /// at the top.
    fn y(self, v: u64, (top, bottom): (u64, u64)) -> u64 {
        let h = u128::from(bottom - top);
        let v = u128::from(v.min(self.max));
        let dy = v * h / u128::from(self.max.max(1));
        bottom - u64::try_from(dy).unwrap_or(0).min(bottom - top)
    }
}

impl Plot {
    /// A plot sized from pass 1: the time range split into
    /// min([`BUCKETS`], seconds + 1) buckets of at least one second.
    pub fn new(scan: &Scan) -> Plot {
        let (t0, t1) = if scan.rows == 0 {
            (0, 0)
        } else {
            (scan.t_min, scan.t_max)
        };
        let span = t1.saturating_sub(t0);
        let nb = usize::try_from(span.saturating_add(1))
            .unwrap_or(BUCKETS)
            .clamp(1, BUCKETS);
        Plot {
            t0,
            span,
            nb,
            expected: scan.rows,
            seen: 0,
            near_oom: scan.summary.near_oom(),
            low_disk: scan.summary.low_disk(),
            present: scan.present,
            drawn: core::array::from_fn(|i| {
                scan.present[i]
                    && (scan.nonzero[i] || !ALL[i].zero_is_nothing())
                    && (scan.cg_binds || !ALL[i].of_cgroup())
            }),
            cg_binds: scan.cg_binds,
            mem_total: 0,
            oom_counter: scan.oom_counter,
            io: IO_SERIES.iter().any(|s| scan.present[s.index()]),
            iso_first: scan.iso_min,
            iso_last: scan.iso_max,
            times: [Span {
                lo: u64::MAX,
                hi: 0,
                rows: 0,
            }; BUCKETS],
            cells: [[Cell::EMPTY; SERIES_N]; BUCKETS],
            bands: Vec::new(),
            runs_per_band: 1,
            cur_stage: None,
            stage_runs: 0,
            marks: Vec::new(),
            marks_more: 0,
            oom_prev: None,
            oom_total: 0,
            skipped: 0,
        }
    }

    /// The bucket of an epoch (clamped to the scanned range).
    fn bucket(&self, epoch: u64) -> usize {
        let off = u128::from(epoch.saturating_sub(self.t0).min(self.span));
        let i = off * (self.nb as u128) / (u128::from(self.span) + 1);
        usize::try_from(i).unwrap_or(0).min(self.nb - 1)
    }

    /// Takes one row of pass 2 into account, in file order. Rows past the
    /// number pass 1 counted (appended to the file meanwhile) are ignored;
    /// epochs out of the scanned range are clamped to it.
    pub fn observe(&mut self, row: &Row) {
        if self.seen >= self.expected {
            return;
        }
        self.seen += 1;
        let epoch = row.epoch.clamp(self.t0, self.t0.saturating_add(self.span));
        let b = self.bucket(epoch);
        if let Some(t) = self.times.get_mut(b) {
            t.lo = t.lo.min(epoch);
            t.hi = t.hi.max(epoch);
            t.rows = t.rows.saturating_add(1);
        }
        if row.mem_known {
            self.mem_total = self
                .mem_total
                .max(row.mem_used_mb.saturating_add(row.mem_avail_mb));
        }
        if let Some(cells) = self.cells.get_mut(b) {
            for s in ALL {
                if let Some(v) = s.of(row) {
                    cells[s.index()].add(v);
                }
            }
        }
        self.stage(row, epoch);
        if let Some(k) = row.ext.oom_kills {
            let prev = self.oom_prev.unwrap_or(0);
            if k > prev {
                self.oom_total = self.oom_total.saturating_add(k - prev);
                let m = Mark {
                    epoch,
                    iso: row.iso,
                    kills: k - prev,
                    stage: row.stage.clone(),
                    context: row.context.clone(),
                };
                if self.marks.push(m).is_err() {
                    self.marks_more += 1;
                }
            }
            self.oom_prev = Some(prev.max(k));
        }
    }

    /// Extends the current stage band or starts a new one (merging bands
    /// pairwise when [`BANDS`] are taken).
    fn stage(&mut self, row: &Row, epoch: u64) {
        let same = self.cur_stage.as_ref() == Some(&row.stage);
        if same && let Some(last) = self.bands.last_mut() {
            last.t_start = last.t_start.min(epoch);
            last.t_end = last.t_end.max(epoch);
            last.rows = last.rows.saturating_add(1);
            if last.stage == row.stage {
                last.lead_rows = last.lead_rows.saturating_add(1);
            }
            return;
        }
        self.cur_stage = Some(row.stage.clone());
        self.stage_runs = self.stage_runs.saturating_add(1);
        // After a merge, a band takes as many runs as the merged ones hold
        // before the next band starts: early and late bands stay alike.
        if let Some(last) = self.bands.last_mut()
            && last.runs < self.runs_per_band
        {
            last.t_start = last.t_start.min(epoch);
            last.t_end = last.t_end.max(epoch);
            last.runs = last.runs.saturating_add(1);
            last.rows = last.rows.saturating_add(1);
            if last.stage == row.stage {
                last.lead_rows = last.lead_rows.saturating_add(1);
            }
            return;
        }
        if self.bands.is_full() {
            halve(&mut self.bands);
            self.runs_per_band = self.runs_per_band.saturating_mul(2);
        }
        let band = Band {
            stage: row.stage.clone(),
            lead_rows: 1,
            t_start: epoch,
            t_end: epoch,
            runs: 1,
            rows: 1,
        };
        // halve() left room; a failure here would only drop this band.
        let _ = self.bands.push(band);
    }

    /// Number of stage bands that will be drawn.
    pub fn bands(&self) -> usize {
        self.bands.len()
    }

    /// OOM kills counted (the rise of `oom_kills` over the run); `None`
    /// when the CSV has no such column.
    pub fn oom_kills(&self) -> Option<u64> {
        self.oom_counter.then_some(self.oom_total)
    }

    /// The x of an epoch.
    fn x(&self, t: u64) -> u64 {
        if self.span == 0 {
            return X0;
        }
        let off = u128::from(t.saturating_sub(self.t0).min(self.span));
        let dx = off * u128::from(PW) / u128::from(self.span);
        X0 + u64::try_from(dx).unwrap_or(0).min(PW)
    }

    /// The x of a bucket's earliest row, its middle, its latest row. With
    /// a zero time span (one row, or equal epochs) the whole width.
    fn xs(&self, t: &Span) -> (u64, u64, u64) {
        if self.span == 0 {
            return (X0, (X0 + X1) / 2, X1);
        }
        let lo = self.x(t.lo);
        let hi = self.x(t.hi);
        (lo, (lo + hi) / 2, hi)
    }

    /// The series the legend and notes name: [`SERIES`], and [`IO_SERIES`]
    /// when the fourth panel is drawn; see [`Plot::named`].
    fn listed(&self) -> &'static [Series] {
        if self.io { &ALL } else { &SERIES }
    }

    /// Whether the notes may name `s` (as absent, or 0 throughout): the
    /// cgroup's series only when drawn (a cgroup binds), the jobserver's
    /// only in a `run --jobserver` CSV, so that other plots read as before.
    fn named(&self, s: Series) -> bool {
        if s.of_cgroup() {
            self.drawn[s.index()]
        } else if s.of_jobserver() {
            self.present[s.index()]
        } else {
            true
        }
    }

    /// The bottom of the lowest panel: where bands and OOM lines end and
    /// the time axis goes.
    fn bottom(&self) -> u64 {
        if self.io { IO.1 } else { CPU.1 }
    }

    /// The SVG's height.
    fn height(&self) -> u64 {
        if self.io { H + IO_H } else { H }
    }

    /// The smallest value of a series over all buckets.
    fn low(&self, s: Series) -> Option<u64> {
        self.cells[..self.nb]
            .iter()
            .map(|c| c[s.index()])
            .filter(|c| !c.is_empty())
            .map(|c| u64::from(c.min))
            .min()
    }

    /// The largest value of a series over all buckets.
    fn peak(&self, s: Series) -> Option<u64> {
        self.cells[..self.nb]
            .iter()
            .map(|c| c[s.index()])
            .filter(|c| !c.is_empty())
            .map(|c| u64::from(c.max))
            .max()
    }
}
/// Merges neighbouring bands pairwise, halving their number.
fn halve(bands: &mut Vec<Band, BANDS>) {
    let n = bands.len();
    let mut out = 0;
    let mut i = 0;
    while i < n {
        let mut b = bands[i].clone();
        if let Some(next) = bands.get(i + 1) {
            b.absorb(next);
        }
        bands[out] = b;
        out += 1;
        i += 2;
    }
    bands.truncate(out);
}

/// The run id in a CSV's file name: `pi-build` of
/// `resources-pi-build.csv`; a name of another form without its `.csv`.
pub fn run_id(name: &str) -> &str {
    let stem = name.strip_suffix(".csv").unwrap_or(name);
    match stem.strip_prefix("resources-") {
        Some(id) if !id.is_empty() => id,
        _ => stem,
    }
}

/// A tick step for a time span: the first of 1 s, 2 s, 5 s, …, 1 day that
/// gives at most 8 steps, else whole days.
fn time_step(span: u64) -> u64 {
    const STEPS: [u64; 18] = [
        1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
    ];
    STEPS
        .iter()
        .copied()
        .find(|&s| span / s <= 8)
        .unwrap_or_else(|| {
            span.div_ceil(8)
                .div_ceil(86400)
                .max(1)
                .saturating_mul(86400)
        })
}

/// Whether `c` may appear in the SVG's text: XML 1.0's `Char` production
/// without the C0 controls (tab, CR and LF included: every text here is
/// one line), DEL and the C1 controls.
fn xml_char(c: char) -> bool {
    let u = c as u32;
    u >= 0x20 && !(0x7f..=0x9f).contains(&u) && u != 0xfffe && u != 0xffff
}

/// Writes `s` as XML character data or attribute value: `&`, `<`, `>`,
/// `"`, `'` as entities; control characters and characters XML forbids
/// (U+FFFE, U+FFFF) dropped.
///
/// ```
/// # struct S(heapless::String<64>);
/// # impl ufmt::uWrite for S { type Error = ();
/// #   fn write_str(&mut self, s: &str) -> Result<(), ()> { self.0.push_str(s).map_err(|_| ()) } }
/// let mut out = S(heapless::String::new());
/// headroom::report::plot::escape(&mut out, "a<&>\"'\u{1b}[0m\u{ffff}z").unwrap();
/// assert_eq!(out.0.as_str(), "a&lt;&amp;&gt;&quot;&apos;[0mz");
/// ```
///
/// # Errors
/// Only those of `w`.
pub fn escape<W: uWrite>(w: &mut W, s: &str) -> Result<(), W::Error> {
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let rep = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\'' => "&apos;",
            c if !xml_char(c) => "",
            _ => continue,
        };
        w.write_str(s.get(start..i).unwrap_or(""))?;
        w.write_str(rep)?;
        start = i + c.len_utf8();
    }
    w.write_str(s.get(start..).unwrap_or(""))
}

#[cfg(test)]
#[path = "plot_tests.rs"]
mod tests;
