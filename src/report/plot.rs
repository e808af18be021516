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
            Series::Cpu => row.cpu_known.then_some(row.cpu_pct),
            Series::Compilers => row.compilers_known.then_some(row.compilers),
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
mod tests {
    //! Unit tests of `report::plot` (src/report/plot.rs).

    extern crate std;
    use super::*;
    use crate::testkit::Out;
    use std::boxed::Box;
    use std::string::String;
    use std::vec::Vec;

    fn esc(s: &str) -> String {
        let mut o = Out(String::new());
        let _ = escape(&mut o, s);
        o.0
    }

    /// Both passes over `rows`, then the SVG.
    fn plot_of(rows: &[Row]) -> (Box<Plot>, String) {
        let mut scan = Scan::new(None);
        rows.iter().for_each(|r| scan.observe(r));
        let mut plot = Box::new(Plot::new(&scan));
        rows.iter().for_each(|r| plot.observe(r));
        let mut o = Out(String::new());
        let _ = plot.render("t.csv", &mut o);
        (plot, o.0)
    }

    fn row(epoch: u64, stage: &str) -> Row {
        let mut r = Row::empty(epoch);
        r.mem_used_mb = 1000;
        r.mem_avail_mb = 3000;
        r.disk_avail_gb = 50;
        r.cpu_pct = 50;
        r.compilers = 2;
        let _ = r.stage.push_str(stage);
        r
    }

    fn count(hay: &str, needle: &str) -> usize {
        hay.matches(needle).count()
    }

    #[test]
    fn escape_makes_any_text_safe_for_xml() {
        assert_eq!(esc("plain"), "plain");
        assert_eq!(esc("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
        assert_eq!(esc("\u{0}\t\r\n\u{1b}[31m\u{7f}\u{85}x"), "[31mx");
        assert_eq!(esc("\u{fffe}\u{ffff}\u{fffd}"), "\u{fffd}");
        assert_eq!(esc("é€😀"), "é€😀");
        assert_eq!(esc("&&"), "&amp;&amp;");
        assert_eq!(esc(""), "");
    }

    #[test]
    fn nice_steps_and_axes() {
        assert_eq!(nice(0), 1);
        assert_eq!(nice(1), 1);
        assert_eq!(nice(3), 5);
        assert_eq!(nice(11), 20);
        assert_eq!(nice(4739), 5000);
        assert_eq!(nice(u64::MAX), u64::MAX);
        let a = Axis::new(23691, 1);
        assert_eq!((a.max, a.step), (25000, 5000));
        let a = Axis::new(0, 1);
        assert!(a.max >= 1 && a.step >= 1);
        // GiB: 77,900 MiB is 77 GiB → ticks of 20 GiB up to 80 GiB.
        let g = Axis::new(77_900, 1024);
        assert_eq!((g.max, g.step), (80 * 1024, 20 * 1024));
        // y: 0 at the bottom, the top value at the top, beyond it clamped.
        assert_eq!(a.y(0, (100, 200)), 200);
        let a = Axis::new(100, 1);
        assert_eq!(a.y(100, (100, 200)), 100);
        assert_eq!(a.y(50, (100, 200)), 150);
        assert_eq!(a.y(u64::MAX, (100, 200)), 100);
        let huge = Axis::new(u64::MAX, 1024);
        assert!(huge.y(u64::MAX / 2, (0, 10)) <= 10);
    }

    #[test]
    fn bucket_math() {
        let mut scan = Scan::new(None);
        scan.observe(&row(1000, "a"));
        scan.observe(&row(1017, "a"));
        let p = Plot::new(&scan);
        // 18 seconds: one bucket per second.
        assert_eq!(p.nb, 18);
        assert_eq!(p.bucket(1000), 0);
        assert_eq!(p.bucket(1009), 9);
        assert_eq!(p.bucket(1017), 17);
        assert_eq!(p.x(1000), X0);
        assert_eq!(p.x(1017), X1);
        // A long run: BUCKETS buckets, the ends in the first and last.
        let mut scan = Scan::new(None);
        scan.observe(&row(5, "a"));
        scan.observe(&row(5 + 1_000_000, "a"));
        let p = Plot::new(&scan);
        assert_eq!(p.nb, BUCKETS);
        assert_eq!(p.bucket(5), 0);
        assert_eq!(p.bucket(5 + 999), 0);
        assert_eq!(p.bucket(5 + 1001), 1);
        assert_eq!(p.bucket(5 + 1_000_000), BUCKETS - 1);
        // Out of range (a file rewritten between the passes): clamped.
        assert_eq!(p.bucket(0), 0);
        assert_eq!(p.bucket(u64::MAX), BUCKETS - 1);
        // The whole u64 range does not overflow.
        let mut scan = Scan::new(None);
        scan.observe(&row(0, "a"));
        scan.observe(&row(u64::MAX, "a"));
        let p = Plot::new(&scan);
        assert_eq!(p.bucket(u64::MAX), BUCKETS - 1);
        assert_eq!(p.x(u64::MAX), X1);
        // One row: one bucket, drawn across the whole width.
        let (p, svg) = plot_of(&[row(7, "a")]);
        assert_eq!(p.nb, 1);
        assert!(svg.contains(&std::format!("points=\"{},", X0)), "{svg}");
        assert!(svg.contains(&std::format!(" {},", X1)));
    }

    #[test]
    fn buckets_keep_min_max_and_last() {
        let mut rows = Vec::new();
        for (i, used) in [10u64, 900, 5, 40].iter().enumerate() {
            let mut r = row(i as u64, "a");
            r.mem_used_mb = *used;
            rows.push(r);
        }
        // 4 rows over 3 s but squeezed into one bucket each second: check a
        // long run where several rows share a bucket.
        for i in 0..3000u64 {
            let mut r = row(10 + i, "a");
            r.mem_used_mb = if i == 1234 { 99_999 } else { 100 };
            rows.push(r);
        }
        let (p, svg) = plot_of(&rows);
        assert_eq!(p.peak(Series::MemUsed), Some(99_999));
        let c = p.cells[0][Series::MemUsed.index()];
        assert_eq!((c.first, c.min, c.max), (10, 5, 900));
        let rows_in_buckets: u32 = p.times[..p.nb].iter().map(|t| t.rows).sum();
        assert_eq!(rows_in_buckets as usize, rows.len());
        // Bounded: at most 4 points per bucket per series.
        let pts = svg.matches(',').count();
        assert!(pts <= 4 * BUCKETS * SERIES_N + 200, "{pts}");
    }

    #[test]
    fn time_backwards_and_duplicate_epochs_do_not_break() {
        let rows: Vec<Row> = [50u64, 40, 40, 60, 10, 10, 10, 70]
            .iter()
            .map(|&e| row(e, "s"))
            .collect();
        let (p, svg) = plot_of(&rows);
        assert_eq!((p.t0, p.span), (10, 60));
        let n: u32 = p.times[..p.nb].iter().map(|t| t.rows).sum();
        assert_eq!(n, 8);
        assert_eq!(p.bands(), 1);
        assert!(svg.ends_with("</svg>\n"));
        // All epochs equal.
        let rows: Vec<Row> = (0..5).map(|_| row(99, "s")).collect();
        let (p, svg) = plot_of(&rows);
        assert_eq!((p.span, p.nb), (0, 1));
        assert!(svg.contains("data-series=\"mem_used_mb\""));
    }

    #[test]
    fn stage_bands_one_per_run_with_hover_titles() {
        let mut rows = Vec::new();
        for (i, s) in [
            "fetch", "fetch", "compile", "compile", "compile", "<link&>", "",
        ]
        .iter()
        .enumerate()
        {
            rows.push(row(100 + 10 * i as u64, s));
        }
        let (p, svg) = plot_of(&rows);
        assert_eq!(p.bands(), 4);
        assert_eq!(count(&svg, " rows</title></rect>"), 4);
        assert!(svg.contains("<title>stage fetch: 0s to 20s after the start, 2 rows</title>"));
        assert!(svg.contains("<title>stage compile: 20s to 50s after the start, 3 rows</title>"));
        assert!(svg.contains("stage &lt;link&amp;&gt;:"));
        assert!(svg.contains("<title>stage ?: "));
        assert!(svg.contains("class=\"band0\"") && svg.contains("class=\"band1\""));
        assert!(!svg.contains("merged"));
    }

    #[test]
    fn too_many_stages_merge_into_a_bounded_number_of_bands() {
        let rows: Vec<Row> = (0..1000u64)
            .map(|i| row(i, if i % 2 == 0 { "even" } else { "odd" }))
            .collect();
        let (p, svg) = plot_of(&rows);
        assert!(
            p.bands() <= BANDS && p.bands() >= BANDS / 2,
            "{}",
            p.bands()
        );
        assert_eq!(p.bands.iter().map(|b| b.rows).sum::<u64>(), 1000);
        assert_eq!(p.bands.iter().map(|b| b.runs).sum::<u64>(), 1000);
        assert!(svg.contains("1000 stage changes merged into"), "{svg}");
        assert!(svg.contains("other stage runs merged"));
        // Bands stay in time order and cover the run.
        assert_eq!(p.bands[0].t_start, 0);
        // Merged evenly: every band but the last (still filling) holds as
        // many runs as the first.
        let n = p.bands();
        assert!(
            p.bands[..n - 1].iter().all(|b| b.runs == p.bands[0].runs),
            "{:?}",
            p.bands.iter().map(|b| b.runs).collect::<Vec<_>>()
        );
        assert!(p.bands[n - 1].runs <= p.bands[0].runs);
        assert_eq!(p.bands[p.bands() - 1].t_end, 999);
        assert!(p.bands.windows(2).all(|w| w[0].t_end < w[1].t_start));
    }

    #[test]
    fn oom_markers_where_the_counter_rises() {
        let mut rows = Vec::new();
        for (i, k) in [0u64, 0, 1, 1, 3, 3].iter().enumerate() {
            let mut r = row(1000 + i as u64, "link");
            r.ext.oom_kills = Some(*k);
            let _ = r.context.push_str("ld <&> 'x'");
            rows.push(r);
        }
        let (p, svg) = plot_of(&rows);
        assert_eq!(p.oom_kills(), Some(3));
        assert_eq!(count(&svg, "<g class=\"oom-kill\">"), 2);
        assert!(svg.contains(
        "<title>OOM kill at 1970-01-01T00:16:42Z (2s after the start), stage=link, context=ld &lt;&amp;&gt; &apos;x&apos;</title>"
    ), "{svg}");
        assert!(svg.contains("<title>OOM kill x2 at 1970-01-01T00:16:44Z"));
        assert!(svg.contains("3 OOM kill(s)"));
        // A counter that starts above zero: the first row is a rise, as in
        // the summary.
        let mut r = row(5, "a");
        r.ext.oom_kills = Some(2);
        let (p, _) = plot_of(&[r]);
        assert_eq!(p.oom_kills(), Some(2));
        // No column: unknown, and said so.
        let (p, svg) = plot_of(&[row(5, "a")]);
        assert_eq!(p.oom_kills(), None);
        assert!(svg.contains("OOM kills: unknown"));
        assert_eq!(count(&svg, "oom-kill"), 0);
    }

    #[test]
    fn more_oom_rows_than_markers_are_counted() {
        let rows: Vec<Row> = (0..(OOM_MARKS as u64 + 10))
            .map(|i| {
                let mut r = row(i, "a");
                r.ext.oom_kills = Some(i + 1);
                r
            })
            .collect();
        let (p, svg) = plot_of(&rows);
        assert_eq!(p.marks.len(), OOM_MARKS);
        assert!(svg.contains("10 more OOM-kill rows not marked"));
    }

    #[test]
    fn the_near_oom_line_is_the_summarys_threshold() {
        // 2 GiB host: the summary scales 4096 MB down to 1/8 of RAM.
        let mut r = row(1, "a");
        r.mem_used_mb = 1500;
        r.mem_avail_mb = 548;
        let (p, svg) = plot_of(&[r.clone()]);
        let mut s = Summary::new(None, None);
        s.observe(&r);
        assert_eq!(p.near_oom, s.near_oom());
        assert_eq!(p.near_oom, Threshold::Scaled(256, 2048));
        assert!(svg.contains("near-OOM &lt; 256 MiB"));
        assert!(svg.contains("near-OOM: MemAvailable below 256 MB (scaled from 2048 MB RAM)"));
        // Given on the command line.
        let mut scan = Scan::new(Some(777));
        scan.observe(&r);
        assert_eq!(Plot::new(&scan).near_oom, Threshold::Given(777));
    }

    /// Issue 12: a sub-GiB build disk's low-disk line is the summary's
    /// scaled threshold in MiB, not a 20 GiB default.
    #[test]
    fn the_low_disk_line_is_the_summarys_threshold_in_mib() {
        let mut r = row(1, "a");
        r.disk_known = true;
        r.disk_avail_gb = 0;
        r.disk_pct = 10;
        r.ext.disk_avail_mb = Some(460);
        let (p, svg) = plot_of(&[r.clone()]);
        let mut s = Summary::new(None, None);
        s.observe(&r);
        assert_eq!(p.low_disk, s.low_disk());
        assert_eq!(p.low_disk, Threshold::Scaled(51, 511));
        assert!(svg.contains("low disk &lt; 51 MiB"), "{svg}");
        assert!(svg.contains("low disk: free below 51 MB (scaled from 511 MB disk)"));
        // A large disk: the default, in whole GiB as before.
        r.ext.disk_avail_mb = Some(50 * 1024);
        r.disk_avail_gb = 50;
        let (_, svg) = plot_of(&[r]);
        assert!(svg.contains("low disk &lt; 20 GiB"), "{svg}");
    }

    #[test]
    fn toolchain_14_column_csv_omits_the_absent_series() {
        let data = include_bytes!("../../tests/data/toolchain-cargo-build.csv");
        let mut scan = Scan::new(None);
        let mut rd = crate::report::csvread::CsvRows::new();
        rd.feed(data, &mut |r| scan.observe(r)).unwrap();
        rd.feed(&[], &mut |r| scan.observe(r)).unwrap();
        assert_eq!(scan.rows(), 18);
        let mut plot = Box::new(Plot::new(&scan));
        let mut rd = crate::report::csvread::CsvRows::new();
        rd.feed(data, &mut |r| plot.observe(r)).unwrap();
        rd.feed(&[], &mut |r| plot.observe(r)).unwrap();
        let mut o = Out(String::new());
        let _ = plot.render("toolchain-cargo-build.csv", &mut o);
        let svg = o.0;
        // zram: no columns; swap: 0 throughout; RAM available: ~23,500 MiB on a
        // 24 GiB host, above the axis the build's ~700 MiB sets.
        for s in SERIES {
            let line = std::format!("data-series=\"{}\"", s.column());
            let gone = matches!(
                s,
                Series::ZramStored | Series::ZramRam | Series::SwapUsed | Series::MemAvail
            ) || s.of_cgroup()
                || s.of_jobserver();
            assert_eq!(svg.contains(&line), !gone, "{line}");
        }
        assert!(svg.contains("not in this CSV (omitted): zram stored (MiB), zram RAM (MiB)"));
        assert!(
            svg.contains("0 throughout (not drawn): swap used (MiB)"),
            "{svg}"
        );
        assert!(svg.contains("18 samples, duration 18s"));
        assert!(svg.contains("<title>stage build: 0s to 18s after the start, 18 rows</title>"));
        assert!(svg.contains("disk available (GiB)"));
    }

    #[test]
    fn no_rows_still_renders_without_panicking() {
        let (p, svg) = plot_of(&[]);
        assert_eq!((p.nb, p.bands()), (1, 0));
        assert!(svg.starts_with("<?xml") && svg.ends_with("</svg>\n"));
        assert!(!svg.contains("<polyline"));
    }

    #[test]
    fn rows_appended_between_the_passes_are_ignored() {
        let mut scan = Scan::new(None);
        scan.observe(&row(10, "a"));
        scan.observe(&row(20, "a"));
        let mut p = Plot::new(&scan);
        for e in [10, 20, 30, 40] {
            p.observe(&row(e, "b"));
        }
        assert_eq!(p.seen, 2);
        assert_eq!(p.bands[0].t_end, 20);
    }

    #[test]
    fn missing_memory_figures_break_the_line() {
        let mut rows: Vec<Row> = (0..10).map(|i| row(i, "a")).collect();
        rows[5].mem_known = false;
        let (_, svg) = plot_of(&rows);
        assert_eq!(count(&svg, "data-series=\"mem_used_mb\""), 2);
        assert_eq!(count(&svg, "data-series=\"cpu_pct\""), 1);
    }

    /// Durations are written by `followed::figures::duration` (tested there).
    #[test]
    fn time_steps() {
        assert_eq!(time_step(18), 5);
        assert_eq!(time_step(0), 1);
        assert_eq!(time_step(9000), 1800);
        assert!(time_step(u64::MAX) >= 86400);
    }

    /// Legend entries (the text after each swatch).
    fn legend_labels(svg: &str) -> Vec<&str> {
        let start = svg.find("<g class=\"legend\">").unwrap();
        let end = start + svg[start..].find("</g>").unwrap();
        svg[start..end]
            .split("<text ")
            .skip(1)
            .filter_map(|t| t.split_once('>').and_then(|(_, r)| r.split_once('<')))
            .map(|(label, _)| label)
            .collect()
    }

    /// The memory axis's top tick.
    fn mem_top(svg: &str) -> u64 {
        let y = std::format!("y=\"{}\" text-anchor=\"end\">", MEM.0 + 4);
        let at = svg.find(&y).unwrap() + y.len();
        svg[at..].split('<').next().unwrap().parse().unwrap()
    }

    #[test]
    fn the_memory_axis_fits_the_builds_use_and_marks_memtotal_above_it() {
        // A 24 GiB host: RAM used 400 to 2,900 MiB, RAM available the rest.
        let rows: Vec<Row> = (0..20)
            .map(|i| {
                let mut r = row(i, "a");
                r.mem_used_mb = 400 + 125 * i;
                r.mem_avail_mb = 24_000 - r.mem_used_mb;
                r
            })
            .collect();
        let (p, svg) = plot_of(&rows);
        assert_eq!(p.mem_total, 24_000);
        assert_eq!(mem_top(&svg), 3_000, "{svg}");
        assert!(svg.contains(">above the chart: MemTotal 24000 MiB, near-OOM &lt; 4096 MiB; RAM available (MemTotal − RAM used) drawn only below 3000 MiB</text>"), "{svg}");
        assert!(!svg.contains("data-series=\"mem_avail_mb\""));
        assert!(!legend_labels(&svg).contains(&"RAM available (MiB)"));
        // The near-OOM line is above the axis: not drawn at its top.
        assert!(!svg.contains("near-OOM: MemAvailable below"), "{svg}");

        // The build takes the host: RAM available falls onto the axis, and is
        // drawn only where it is on it; MemTotal is still above.
        let rows: Vec<Row> = (0..19)
            .map(|i| {
                let mut r = row(i, "a");
                r.mem_used_mb = 1_000 * (i + 1);
                r.mem_avail_mb = 24_000 - r.mem_used_mb;
                r
            })
            .collect();
        let (_, svg) = plot_of(&rows);
        assert_eq!(mem_top(&svg), 20_000);
        assert_eq!(count(&svg, "data-series=\"mem_avail_mb\""), 1);
        assert!(legend_labels(&svg).contains(&"RAM available (MiB)"));
        assert!(
            svg.contains("near-OOM: MemAvailable below 4096 MB"),
            "{svg}"
        );
        assert!(
            svg.contains("above the chart: MemTotal 24000 MiB; RAM available"),
            "{svg}"
        );

        // A small host near OOM: MemTotal on the axis, a dotted line.
        let rows: Vec<Row> = (0..5)
            .map(|i| {
                let mut r = row(i, "a");
                r.mem_used_mb = 3_000 + 100 * i;
                r.mem_avail_mb = 3_794 - r.mem_used_mb;
                r
            })
            .collect();
        let (_, svg) = plot_of(&rows);
        assert_eq!(mem_top(&svg), 4_000);
        assert!(
            svg.contains("<title>MemTotal 3794 MiB</title></line>"),
            "{svg}"
        );
        assert!(!svg.contains("above the chart"));
    }

    #[test]
    fn series_that_are_zero_throughout_leave_the_legend_and_the_plot() {
        let rows: Vec<Row> = (0..5)
            .map(|i| {
                let mut r = row(i, "a");
                r.compilers = 0;
                r.swap_used_mb = 0;
                r.ext.zram_stored_mb = Some(0);
                r.ext.zram_ram_mb = Some(0);
                r.disk_avail_gb = 0; // a full disk is news: still drawn
                r
            })
            .collect();
        let (_, svg) = plot_of(&rows);
        let legend = legend_labels(&svg);
        for gone in [
            Series::Compilers,
            Series::SwapUsed,
            Series::ZramStored,
            Series::ZramRam,
        ] {
            assert!(!legend.contains(&gone.label()), "{gone:?}: {legend:?}");
            let line = std::format!("data-series=\"{}\"", gone.column());
            assert!(!svg.contains(&line), "{line}");
        }
        for kept in [Series::MemUsed, Series::DiskFree, Series::Cpu] {
            assert!(legend.contains(&kept.label()), "{kept:?}: {legend:?}");
        }
        assert!(svg.contains(
        "0 throughout (not drawn): swap used (MiB), zram stored (MiB), zram RAM (MiB), compilers (count)"
    ), "{svg}");
        // No compilers: no right-hand compilers axis.
        assert!(!svg.contains(">compilers</text>"));
        // One non-zero value puts a series back.
        let mut rows = rows;
        rows[2].compilers = 1;
        let (_, svg) = plot_of(&rows);
        assert!(legend_labels(&svg).contains(&"compilers (count)"));
    }

    #[test]
    fn a_run_without_stages_is_labelled_by_its_run_id() {
        assert_eq!(run_id("resources-pi-build.csv"), "pi-build");
        assert_eq!(run_id("resources-run.csv"), "run");
        assert_eq!(run_id("build.csv"), "build");
        assert_eq!(run_id("resources-.csv"), "resources-");
        assert_eq!(run_id("log"), "log");
        // No stage: empty when recorded, `?` when read back from a CSV.
        for none in ["", "?"] {
            let rows: Vec<Row> = (0..30).map(|i| row(i, none)).collect();
            let mut scan = Scan::new(None);
            rows.iter().for_each(|r| scan.observe(r));
            let mut plot = Box::new(Plot::new(&scan));
            rows.iter().for_each(|r| plot.observe(r));
            let mut o = Out(String::new());
            let _ = plot.render("resources-pi-build.csv", &mut o);
            let svg = o.0;
            assert!(
                svg.contains("<title>run pi-build (no stage in its log): 0s to 29s"),
                "{svg}"
            );
            assert!(svg.contains(">pi-build</text>"), "{svg}");
            assert!(
                !svg.contains(">?</text>") && !svg.contains("stage ?"),
                "{svg}"
            );
        }
        let rows: Vec<Row> = (0..30).map(|i| row(i, "?")).collect();
        // With a stage somewhere, an unnamed stretch stays `?`.
        let mut rows = rows;
        rows[20].stage.clear();
        let _ = rows[20].stage.push_str("link");
        let (_, svg) = plot_of(&rows);
        assert!(svg.contains("<title>stage ?: "), "{svg}");
        assert!(svg.contains("<title>stage link: "), "{svg}");
    }

    /// [`row`] with the fourth panel's columns.
    fn io_row(epoch: u64, stage: &str, write_centi: u64, temp_tenths: i32) -> Row {
        let mut r = row(epoch, stage);
        r.ext.disk_read_mibps = Some(crate::tick::row::Decimal::from_centi(50));
        r.ext.disk_write_mibps = Some(crate::tick::row::Decimal::from_centi(write_centi));
        r.ext.swap_in_mibps = Some(crate::tick::row::Decimal::from_centi(0));
        r.ext.swap_out_mibps = Some(crate::tick::row::Decimal::from_centi(125));
        r.ext.cpu_temp_c = Some(crate::tick::row::Tenths(temp_tenths));
        r
    }

    #[test]
    fn the_fourth_panel_draws_io_and_temperature() {
        let rows: Vec<Row> = (0..20)
            .map(|i| io_row(1000 + i * 15, "build", 100 * i, 600 + 10 * i as i32))
            .collect();
        let (_, svg) = plot_of(&rows);
        assert!(
            svg.contains("height=\"1060\" viewBox=\"0 0 1200 1060\""),
            "{svg}"
        );
        for s in [
            Series::DiskRead,
            Series::DiskWrite,
            Series::SwapOut,
            Series::CpuTemp,
        ] {
            let line = std::format!("data-series=\"{}\"", s.column());
            assert!(svg.contains(&line), "{line}");
            assert!(legend_labels(&svg).contains(&s.label()), "{s:?}");
        }
        // Swap-in is 0 throughout: left out, and said so.
        assert!(!svg.contains("data-series=\"swap_in_mibps\""));
        assert!(
            svg.contains("0 throughout (not drawn): swap used (MiB), swap-in (MiB/s)"),
            "{svg}"
        );
        assert!(svg.contains("<title>disk write (MiB/s), peak 19.00 MiB/s</title>"));
        assert!(svg.contains("<title>CPU temperature (°C), peak 79.0 °C</title>"));
        assert!(svg.contains(">I/O (MiB/s)</text>") && svg.contains(">temperature (°C)</text>"));
        // The write axis tops at 20 MiB/s, the temperature's at 80 °C.
        assert!(svg.contains(&std::format!(
            "y=\"{}\" text-anchor=\"end\">20</text>",
            IO.0 + 4
        )));
        assert!(svg.contains(&std::format!(
            "y=\"{}\" fill=\"#d95f02\">80</text>",
            IO.0 + 4
        )));
        // The time axis and the stage bands reach below the fourth panel.
        assert!(svg.contains(&std::format!(
            "height=\"{}\"><title>stage build",
            IO.1 - MEM.0
        )));
        assert!(svg.contains(&std::format!("y=\"{}\">elapsed since", IO.1 + 36)));
    }

    #[test]
    fn without_the_columns_the_plot_is_the_three_panels_as_before() {
        let rows: Vec<Row> = (0..20).map(|i| row(1000 + i * 15, "build")).collect();
        let (_, svg) = plot_of(&rows);
        assert!(svg.contains("height=\"900\" viewBox=\"0 0 1200 900\""));
        assert!(!svg.contains("I/O"));
        for s in IO_SERIES {
            assert!(!svg.contains(s.column()), "{s:?}");
            assert!(!svg.contains(s.label()), "{s:?}");
        }
        // A 27-column CSV and a 37-column one whose new fields are empty plot
        // alike, byte for byte.
        let header = crate::tick::row::columns::header_27();
        let mut old = std::format!("{}\n", header.as_str());
        let mut new = std::string::String::from(crate::tick::row::columns::HEADER_FULL);
        for r in &rows {
            let mut out = heapless::Vec::new();
            r.format(false, &mut out).unwrap();
            let line = std::str::from_utf8(&out).unwrap();
            new.push_str(line);
            let cut: Vec<&str> = line.trim_end().split(',').take(27).collect();
            old.push_str(&cut.join(","));
            old.push('\n');
        }
        let svg_of = |data: &str| {
            let mut scan = Box::new(Scan::new(None));
            let mut rd = crate::report::csvread::CsvRows::new();
            rd.feed(data.as_bytes(), &mut |r| scan.observe(r)).unwrap();
            rd.feed(&[], &mut |r| scan.observe(r)).unwrap();
            let mut plot = Box::new(Plot::new(&scan));
            let mut rd = crate::report::csvread::CsvRows::new();
            rd.feed(data.as_bytes(), &mut |r| plot.observe(r)).unwrap();
            rd.feed(&[], &mut |r| plot.observe(r)).unwrap();
            let mut o = Out(String::new());
            let _ = plot.render("t.csv", &mut o);
            o.0
        };
        let (a, b) = (svg_of(&old), svg_of(&new));
        assert_eq!(a, b);
        assert!(a.contains("height=\"900\""));
    }

    /// [`row`] on a 22 GiB host inside a memory cgroup of `limit` MiB whose
    /// use is `cg_used` (`None` limit: a CSV before `cg_mem_limit_mb`).
    fn cg_row(epoch: u64, cg_used: u64, limit: Option<u64>) -> Row {
        let mut r = row(epoch, "build");
        r.mem_used_mb = 2_000 + cg_used;
        r.mem_avail_mb = 22_000 - r.mem_used_mb;
        r.ext.cg_mem_avail_mb = Some(1024 - cg_used);
        r.ext.cg_mem_limit_mb = limit;
        r
    }

    /// The polyline of a series: its opening tag, up to `points=`.
    fn polyline_of(svg: &str, s: Series) -> Option<&str> {
        let at = svg.find(&std::format!("data-series=\"{}\"", s.column()))?;
        let start = svg[..at].rfind('<')?;
        Some(&svg[start..start + svg[start..].find("points=")?])
    }

    /// Issue 25: in a 1 GiB cgroup on a 22 GiB host, the memory panel draws
    /// the cgroup's limit (dashed), its use and its available memory, and the
    /// legend names them; the axis reaches the limit.
    #[test]
    fn a_binding_cgroup_draws_its_limit_and_use() {
        let rows: Vec<Row> = (0..20)
            .map(|i| cg_row(i, 300 + 30 * i, Some(1024)))
            .collect();
        let (p, svg) = plot_of(&rows);
        assert!(p.cg_binds);
        let limit = polyline_of(&svg, Series::CgLimit).expect("the limit line");
        assert!(limit.contains("stroke-dasharray=\"8 4\""), "{limit}");
        assert!(polyline_of(&svg, Series::CgUsed).is_some(), "{svg}");
        assert!(polyline_of(&svg, Series::CgAvail).is_some(), "{svg}");
        assert!(
            !polyline_of(&svg, Series::CgUsed)
                .unwrap()
                .contains("dasharray")
        );
        assert_eq!(p.peak(Series::CgUsed), Some(300 + 30 * 19));
        assert_eq!(p.low(Series::CgAvail), Some(1024 - 870));
        let legend = legend_labels(&svg);
        for s in [Series::CgLimit, Series::CgUsed, Series::CgAvail] {
            assert!(legend.contains(&s.label()), "{s:?}: {legend:?}");
        }
        // The limit's swatch is dashed too.
        assert!(svg.contains("stroke=\"#393b79\" stroke-width=\"3\" stroke-dasharray=\"6 3\"/>"));
        // The axis: host RAM used peaks at 2870 MiB: 3000; the limit is on it.
        assert_eq!(mem_top(&svg), 4_000, "{svg}");
        assert!(svg.contains("<title>cgroup limit (MiB), peak 1024</title>"));
        // The near-OOM line is the cgroup's, scaled to its limit, and says so.
        assert_eq!(p.near_oom, Threshold::ScaledToCgroup(128, 1024));
        assert!(svg.contains("<title>near-OOM: available memory (the cgroup's where it binds) below 128 MB (scaled from the 1024 MB cgroup limit)</title>"), "{svg}");
        assert!(
            svg.contains("0 throughout (not drawn): swap used (MiB)<"),
            "{svg}"
        );

        // A CSV written before cg_mem_limit_mb: the cgroup's available memory
        // alone (its use and limit are unknown), and nothing said of them.
        let old: Vec<Row> = (0..20).map(|i| cg_row(i, 300 + 30 * i, None)).collect();
        let (_, svg) = plot_of(&old);
        assert!(polyline_of(&svg, Series::CgAvail).is_some());
        assert!(polyline_of(&svg, Series::CgLimit).is_none());
        assert!(polyline_of(&svg, Series::CgUsed).is_none());
        assert!(!svg.contains("cgroup limit"), "{svg}");
        assert!(!svg.contains("cgroup used"), "{svg}");
    }

    /// A cgroup that never has less room than MemAvailable, or none at all:
    /// nothing of the cgroup is drawn or named, the plot is as before.
    #[test]
    fn without_a_binding_cgroup_nothing_of_it_is_drawn() {
        let loose: Vec<Row> = (0..20)
            .map(|i| {
                let mut r = row(i, "build");
                r.ext.cg_mem_avail_mb = Some(r.mem_avail_mb + 500);
                r.ext.cg_mem_limit_mb = Some(8192);
                r
            })
            .collect();
        let (p, with_cg) = plot_of(&loose);
        assert!(!p.cg_binds);
        for s in [Series::CgLimit, Series::CgUsed, Series::CgAvail] {
            assert!(polyline_of(&with_cg, s).is_none(), "{s:?}");
            assert!(!with_cg.contains(s.label()), "{s:?}");
        }
        assert!(!with_cg.contains("cgroup"), "{with_cg}");
        // Byte for byte the plot of the same rows without cgroup figures.
        let bare: Vec<Row> = (0..20).map(|i| row(i, "build")).collect();
        let (_, without) = plot_of(&bare);
        assert_eq!(with_cg, without);
    }

    /// Issue 25: series used to share colours (disk read with disk free, disk
    /// write with RAM used, swap-in with swap used, the temperature with zram
    /// stored). Each has its own now, and none is a marker's or a threshold's.
    #[test]
    fn every_series_has_its_own_colour() {
        let mut colours: Vec<&str> = ALL.iter().map(|s| s.color()).collect();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), SERIES_N, "{colours:?}");
        for taken in ["#e31a1c", "#c00000", "#888", "#ffffff"] {
            assert!(!colours.contains(&taken), "{taken}");
        }
        // In a rendered plot with every series, each polyline's stroke is its own.
        let rows: Vec<Row> = (0..20)
            .map(|i| {
                let mut r = io_row(i, "build", 100 * i, 600);
                // RAM available on the memory axis, so that it is drawn.
                (r.mem_used_mb, r.mem_avail_mb) = (3000, 500 + i);
                r.ext.swap_in_mibps = Some(crate::tick::row::Decimal::from_centi(30));
                r.swap_used_mb = 10 + i;
                r.ext.zram_stored_mb = Some(20 + i);
                r.ext.zram_ram_mb = Some(5 + i);
                r.ext.cg_mem_avail_mb = Some(400 - i);
                r.ext.cg_mem_limit_mb = Some(1024);
                r.jobs = Some((2, 3, u32::from(i % 3 == 0)));
                r
            })
            .collect();
        let (_, svg) = plot_of(&rows);
        let mut strokes: Vec<(&str, &str)> = Vec::new();
        for s in ALL {
            let tag = polyline_of(&svg, s).unwrap_or_else(|| panic!("{s:?} not drawn"));
            let stroke = tag
                .split("stroke=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            assert_eq!(stroke, s.color(), "{s:?}");
            strokes.push((s.column(), stroke));
        }
        let mut only: Vec<&str> = strokes.iter().map(|(_, c)| *c).collect();
        only.sort_unstable();
        only.dedup();
        assert_eq!(only.len(), SERIES_N, "{strokes:?}");
    }

    /// Issue 25: the jobs a `run --jobserver` paused are drawn, with the jobs
    /// running and allowed, on the CPU panel's count axis.
    #[test]
    fn paused_jobs_are_drawn() {
        let rows: Vec<Row> = (0..30)
            .map(|i| {
                let mut r = row(i, "build");
                let paused = if (10..15).contains(&i) { 2 } else { 0 };
                r.jobs = Some((4 - paused, 4, paused));
                r
            })
            .collect();
        let (p, svg) = plot_of(&rows);
        assert_eq!(p.peak(Series::JobsPaused), Some(2));
        for s in [Series::JobsRunning, Series::JobsAllowed, Series::JobsPaused] {
            assert!(polyline_of(&svg, s).is_some(), "{s:?}");
            assert!(legend_labels(&svg).contains(&s.label()), "{s:?}");
        }
        assert!(svg.contains("<title>jobs paused (count), peak 2</title>"));
        // The count axis reaches the 4 jobs allowed; its title names the jobs.
        assert!(svg.contains(">compilers, jobs</text>"), "{svg}");
        assert!(svg.contains(">CPU % / compilers, jobs</text>"), "{svg}");
        // Never paused: said so, not drawn.
        let calm: Vec<Row> = (0..30)
            .map(|i| {
                let mut r = row(i, "build");
                r.jobs = Some((2, 2, 0));
                r
            })
            .collect();
        let (_, svg) = plot_of(&calm);
        assert!(polyline_of(&svg, Series::JobsPaused).is_none());
        assert!(
            svg.contains("0 throughout (not drawn): swap used (MiB), jobs paused (count)<"),
            "{svg}"
        );
        // Without the jobserver's columns: no word of jobs.
        let (_, svg) = plot_of(&[row(1, "a"), row(2, "a")]);
        assert!(!svg.contains("jobs"), "{svg}");
    }

    /// A legend of more than two rows moves the panels down rather than onto
    /// them; two rows or fewer leave the layout as it was.
    #[test]
    fn a_long_legend_moves_the_panels_down() {
        let rows: Vec<Row> = (0..20)
            .map(|i| {
                let mut r = io_row(i, "build", 100 * i, 600);
                r.jobs = Some((2, 3, u32::from(i % 3 == 0)));
                r.swap_used_mb = 10 + i;
                r
            })
            .collect();
        let (_, svg) = plot_of(&rows);
        // Three rows: 18 px more, everything below the legend in one group.
        assert!(
            svg.contains("height=\"1078\" viewBox=\"0 0 1200 1078\""),
            "{svg}"
        );
        let g = "<g transform=\"translate(0 18)\">\n";
        let at = svg.find(g).expect("the shifted group");
        assert!(at > svg.find("<g class=\"legend\">").unwrap());
        assert!(at < svg.find("<g class=\"bands\">").unwrap());
        assert!(svg.ends_with("</g>\n</svg>\n"));
        assert_eq!(count(&svg, "<g"), count(&svg, "</g>"));
        // The legend's third row is at 70 + 2 × 18.
        let legend = &svg[svg.find("<g class=\"legend\">").unwrap()..at];
        assert!(
            legend.contains("x1=\"80\" y1=\"106\" x2=\"98\" y2=\"106\""),
            "{legend}"
        );
        assert!(!legend.contains("y1=\"124\""), "{legend}");
        // Two rows: no group, the height as before.
        let (_, svg) = plot_of(&[row(1, "a"), row(2, "a")]);
        assert!(!svg.contains("transform=\"translate"));
        assert!(svg.contains("height=\"900\""));
    }
}
