//! The run summary: the toolchain's headings in its order, then headroom's
//! own sections for the data only headroom records.
//!
//! [`Summary`] is a streaming accumulator: it sees each [`Row`] once (from
//! the sampler while recording, or from [`crate::report::csvread`] for
//! `summarize`) and keeps only the rows where a peak happened, so its size
//! is fixed whatever the length of the run.
//!
//! Fixes over the bash summarizer (SPEC.md "Summary"): a sample with 0 MB
//! available or 0 GB free disk counts as near-OOM / low-disk; an empty CSV
//! prints `samples=0` and no peaks; OOM kills come from /proc/vmstat; the
//! default thresholds scale down on small hosts and the summary says which
//! threshold it used.
//!
//! The memory lines carry the memory the build could really use
//! ([`binding`]): inside a memory cgroup whose available memory is below
//! MemAvailable, the cgroup's, said to be the cgroup's; the near-OOM
//! default then scales to the cgroup's limit. Where no cgroup binds, the
//! toolchain's lines are byte for byte what they were.

use heapless::{String, Vec};
use ufmt::{uWrite, uwrite};

use crate::followed::figures::{stage_str, write_centi};
use crate::followed::rusage::{Partial, Usage};
use crate::followed::text::{Context, Stage};
use crate::tick::clock::Iso;
use crate::tick::row::{BufferFull, Row};
use binding::{Binding, BoundBy};

/// The memory the build could use at each row: host or cgroup.
pub mod binding;
/// The JSON form: [`Summary::render_json`].
mod summary_json;
/// The WHY IT WAS SLOW section: swap thrash, a busy disk, heat and power.
pub mod why_slow;

/// The toolchain's default near-OOM threshold, MiB of MemAvailable.
pub const DEFAULT_NEAR_OOM_MB: u64 = 4096;
/// The toolchain's default low-disk threshold, GiB free.
pub const DEFAULT_LOW_DISK_GB: u64 = 20;
/// [`DEFAULT_LOW_DISK_GB`] in MiB, the unit the low-disk threshold is kept
/// in (a 512 MiB tmpfs build dir needs finer than whole GiB).
pub const DEFAULT_LOW_DISK_MB: u64 = DEFAULT_LOW_DISK_GB * 1024;
/// OOM-kill rows listed one by one; later ones are only counted.
pub const OOM_ROWS: usize = 16;
/// Capacity of the rendered summary: about 2 KiB of fixed text plus 16 OOM
/// rows of at most ~420 bytes. 16 KiB leaves room.
pub const TEXT_CAP: usize = 16 * 1024;

/// What a memory section says when no sample could read /proc/meminfo.
const NO_MEM: &str = "  unknown: /proc/meminfo could not be read on any sample\n";

/// The rendered summary text.
pub type Text = String<TEXT_CAP>;

/// A threshold and where its value came from. Near-OOM is in MiB of
/// available memory (the [`binding`] figure), low-disk in MiB free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    /// Given on the command line (`--low-disk-gb N` is kept as N × 1024).
    Given(u64),
    /// The toolchain's default (host large enough).
    Default(u64),
    /// Default scaled to a small host: (value, the host size it was scaled from).
    Scaled(u64, u64),
    /// The near-OOM default scaled to a memory cgroup whose limit is below
    /// the host's RAM and twice the default: (value, the limit, MiB).
    ScaledToCgroup(u64, u64),
}

impl Threshold {
    /// The value in the threshold's unit.
    pub fn value(self) -> u64 {
        match self {
            Threshold::Given(v)
            | Threshold::Default(v)
            | Threshold::Scaled(v, _)
            | Threshold::ScaledToCgroup(v, _) => v,
        }
    }
}

/// How THE BUILD was followed (SPEC.md "The build and the host").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildScope {
    /// `run` put CMD in a memory cgroup of its own, on this hierarchy.
    Cgroup(crate::kernel::cgroup::Version),
    /// CMD's (or `--watch-pid`'s) process tree; why there is no cgroup
    /// (empty for `--watch-pid`, which never makes one).
    Tree(&'static str),
}

impl BuildScope {
    /// How its OOM kills are counted, for the `OOM kills in this build`
    /// line.
    fn how_counted(self) -> &'static str {
        match self {
            BuildScope::Cgroup(crate::kernel::cgroup::Version::V1) => {
                "its cgroup's memory.oom_control oom_kill"
            }
            BuildScope::Cgroup(crate::kernel::cgroup::Version::V2) => {
                "its cgroup's memory.events oom_kill"
            }
            BuildScope::Tree(_) => {
                "estimated from its processes: its compilers that vanished while the host counter rose, which other processes' kills can inflate"
            }
        }
    }

    /// One word for JSON: `cgroup` or `process_tree`.
    fn word(self) -> &'static str {
        match self {
            BuildScope::Cgroup(_) => "cgroup",
            BuildScope::Tree(_) => "process_tree",
        }
    }

    /// The cgroup files behind the RUN block's build figures.
    fn files(self) -> (&'static str, &'static str) {
        match self {
            BuildScope::Cgroup(crate::kernel::cgroup::Version::V2) => ("memory.peak", "anon"),
            _ => ("memory.max_usage_in_bytes", "total_rss"),
        }
    }
}

/// Whose compiler a measured peak is ([`Summary::sizing_peak`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeakOf {
    /// THE BUILD's largest compiler (`build_peak_rss_mb`).
    Build,
    /// The largest compiler on the host (`peak_rss_mb`): no build was
    /// followed, or a CSV without the build columns.
    Host,
}

impl PeakOf {
    /// In words, for ADVICE and `--explain`.
    pub fn words(self) -> &'static str {
        match self {
            PeakOf::Build => "this build's largest compiler",
            PeakOf::Host => "the largest compiler on the host",
        }
    }

    /// The CSV column it comes from, and why.
    pub fn column(self) -> &'static str {
        match self {
            PeakOf::Build => "build_peak_rss_mb",
            PeakOf::Host => "peak_rss_mb; no build compiler recorded",
        }
    }
}

/// Where an OOM kill was noticed: the row where the counter rose.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OomRow {
    iso: Iso,
    kills: u64,
    stage: Stage,
    context: Context,
}

/// The streaming accumulator behind the summary.
#[derive(Clone, Debug)]
pub struct Summary {
    near_oom: Option<Threshold>,
    low_disk: Option<Threshold>,
    samples: u64,
    max_elapsed: u64,
    /// The row with the largest [`Binding::used_mb`].
    peak_mem: Option<Row>,
    /// The row with the smallest [`Binding::avail_mb`].
    min_avail: Option<Row>,
    /// Rows with memory figures ([`Row::mem_known`]).
    mem_samples: u64,
    /// Of those, rows where a cgroup bound.
    cg_bound_samples: u64,
    peak_swap: Option<Row>,
    min_disk: Option<Row>,
    peak_load: Option<Row>,
    peak_cpu: u64,
    near_oom_samples: u64,
    low_disk_samples: u64,
    oom_kills: Option<u64>,
    oom_rows: Vec<OomRow, OOM_ROWS>,
    oom_rows_more: u64,
    peak_rss: Option<Row>,
    peak_zram: Option<Row>,
    min_tmp: Option<Row>,
    min_cg: Option<Row>,
    /// Malformed CSV rows skipped by `summarize`.
    pub skipped: u64,
    /// Rows sampled but not written (the CSV's disk was full).
    pub lost: u64,
    /// The MemAvailable figures were estimated (kernel without MemAvailable).
    pub mem_estimated: bool,
    /// /tmp is a tmpfs (from mountinfo when recording): its files are RAM.
    /// `None` when unknown (`summarize` of a CSV).
    pub tmp_is_tmpfs: Option<bool>,
    /// For `run`: the command's label and what it used.
    pub run: Option<(String<128>, Usage)>,
    /// For `run`: why the RUN block's figures are not the whole build's,
    /// if they are not (said in the RUN block). For `summarize`, the
    /// interruption its summary's RUN block records, so that `--json`
    /// says it too.
    pub partial: Partial,
    /// For `run --jobserver`: what the jobserver did.
    pub jobserver: Option<crate::report::jobserver_block::Report>,
    /// The jobs columns of the rows seen (`summarize` of a `run
    /// --jobserver` CSV; `None` without them).
    pub jobs_rows: Option<crate::report::jobserver_block::FromRows>,
    /// THE BUILD this recording followed, and how; `None` for plain
    /// `record` and for `summarize` (which knows the build only from the
    /// `build_peak_rss_*` columns).
    pub build: Option<BuildScope>,
    /// The build cgroup's peak charge (v1 `memory.max_usage_in_bytes`, v2
    /// `memory.peak`), MiB, read when CMD ended.
    pub build_peak_charge_mb: Option<u64>,
    /// For `summarize` of a `run`'s CSV: the `OOM kills in this build`
    /// line of the summary `run` wrote (no CSV column carries it), kept
    /// in place when the summary is written again. Without a newline.
    pub kept_build_oom_line: Option<String<256>>,
    build_oom_kills: Option<u64>,
    peak_build_rss: Option<Row>,
    peak_build_anon_mb: Option<u64>,
    /// For `record` and `run`: whether headroom's own memory was locked in
    /// RAM ([`crate::tick::footprint::lock`]). `None` for `summarize` of a CSV,
    /// which does not say.
    pub memory_lock: Option<crate::tick::footprint::Lock>,
    slow: why_slow::Slow,
}

/// Keeps `slot` as the row with the largest (`max`) or smallest key; the
/// first row wins ties, as `awk '$x > max'` does.
fn keep(slot: &mut Option<Row>, row: &Row, key: impl Fn(&Row) -> Option<u64>, max: bool) {
    let Some(k) = key(row) else { return };
    let better = match slot.as_ref().and_then(&key) {
        None => true,
        Some(old) => {
            if max {
                k > old
            } else {
                k < old
            }
        }
    };
    if better {
        *slot = Some(row.clone());
    }
}

impl Summary {
    /// An empty summary; `near_oom_mb` / `low_disk_gb` are the command-line
    /// thresholds, `None` for the (host-scaled) defaults.
    pub fn new(near_oom_mb: Option<u64>, low_disk_gb: Option<u64>) -> Summary {
        Summary {
            near_oom: near_oom_mb.map(Threshold::Given),
            low_disk: low_disk_gb.map(|gb| Threshold::Given(gb.saturating_mul(1024))),
            samples: 0,
            max_elapsed: 0,
            peak_mem: None,
            min_avail: None,
            mem_samples: 0,
            cg_bound_samples: 0,
            peak_swap: None,
            min_disk: None,
            peak_load: None,
            peak_cpu: 0,
            near_oom_samples: 0,
            low_disk_samples: 0,
            oom_kills: None,
            oom_rows: Vec::new(),
            oom_rows_more: 0,
            peak_rss: None,
            peak_zram: None,
            min_tmp: None,
            min_cg: None,
            skipped: 0,
            lost: 0,
            mem_estimated: false,
            tmp_is_tmpfs: None,
            run: None,
            partial: Partial::default(),
            jobserver: None,
            jobs_rows: None,
            build: None,
            build_peak_charge_mb: None,
            kept_build_oom_line: None,
            build_oom_kills: None,
            peak_build_rss: None,
            peak_build_anon_mb: None,
            memory_lock: None,
            slow: why_slow::Slow::new(),
        }
    }

    /// The WHY IT WAS SLOW figures so far.
    pub fn slow(&self) -> &why_slow::Slow {
        &self.slow
    }

    /// Whether the run's swap is zram: some row had zram stored data.
    fn zram_swap(&self) -> bool {
        self.peak_zram
            .as_ref()
            .and_then(|r| r.ext.zram_stored_mb)
            .is_some_and(|mb| mb > 0)
    }

    /// The largest single-compiler RSS of THE BUILD, MiB (`None` when none
    /// of its compilers was seen, or no build was followed).
    pub fn build_peak_rss_mb(&self) -> Option<u64> {
        self.peak_build_rss
            .as_ref()
            .and_then(|r| r.ext.build_peak_rss_mb)
    }

    /// Whether a build was followed: [`Summary::build`] is set, or the CSV
    /// has the build's figures.
    pub fn has_build(&self) -> bool {
        self.build.is_some() || self.peak_build_rss.is_some()
    }

    /// The peak a plan for the next build should size from, MiB, with whose
    /// it is: THE BUILD's largest compiler when a build was followed (none
    /// if none of its compilers ran: another build's is never taken), else
    /// the largest on the host. One rule for the live ADVICE and `--from`.
    pub fn sizing_peak(&self) -> Option<(u64, PeakOf)> {
        if self.has_build() {
            self.build_peak_rss_mb().map(|p| (p, PeakOf::Build))
        } else {
            self.peak_rss_mb().map(|p| (p, PeakOf::Host))
        }
    }

    /// OOM kills in THE BUILD so far (its cgroup's counter or the
    /// estimate); `None` when unknown or without a build.
    pub fn build_oom_kills(&self) -> Option<u64> {
        self.build_oom_kills
    }

    /// Takes the build cgroup's `oom_kill` read when CMD ended (it may have
    /// risen after the last row).
    pub fn build_oom_final(&mut self, kills: Option<u64>) {
        if let Some(k) = kills {
            self.build_oom_kills = Some(self.build_oom_kills.map_or(k, |o| o.max(k)));
        }
    }

    /// The largest single-compiler RSS seen, MiB.
    pub fn peak_rss_mb(&self) -> Option<u64> {
        self.peak_rss.as_ref().and_then(|r| r.ext.peak_rss_mb)
    }

    /// Kernel OOM kills since the first row (the running maximum of the
    /// rows' `oom_kills`, so it never goes down); `None` when no row had
    /// the figure.
    pub fn oom_kills(&self) -> Option<u64> {
        self.oom_kills
    }

    /// Number of rows observed.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Near-OOM threshold from the first row with memory figures: 1/8 of
    /// the memory there is when that is below twice the default, where the
    /// memory is RAM (used + available) or, when smaller, the cgroup's
    /// limit ([`binding::memory_size_mb`]; a CSV without `cg_mem_limit_mb`
    /// scales to RAM alone).
    fn near_oom_for(row: &Row) -> Threshold {
        match binding::memory_size_mb(row) {
            Some((mb, cgroup)) if mb < 2 * DEFAULT_NEAR_OOM_MB => {
                let v = (mb / 8).max(1);
                if cgroup {
                    Threshold::ScaledToCgroup(v, mb)
                } else {
                    Threshold::Scaled(v, mb)
                }
            }
            _ => Threshold::Default(DEFAULT_NEAR_OOM_MB),
        }
    }

    /// Low-disk threshold (MiB) from the first row with disk figures: the
    /// disk's total, in MiB, from free space and use%; on a disk smaller
    /// than twice the default, 1/10 of it.
    ///
    /// Free space is `disk_avail_mb` when the row has it. A 14-column CSV
    /// has only `disk_avail_gb`, whole GiB rounded down; its 0 says only
    /// "under 1 GiB", so the total is then estimated from 1 GiB free (an
    /// upper bound), and a sub-GiB disk still scales instead of getting the
    /// 20 GB default.
    fn low_disk_for(row: &Row) -> Threshold {
        let avail_mb = match row.ext.disk_avail_mb {
            Some(mb) => mb,
            None => row.disk_avail_gb.max(1).saturating_mul(1024),
        };
        let total_mb =
            (row.disk_pct < 100).then(|| avail_mb.saturating_mul(100) / (100 - row.disk_pct));
        match total_mb {
            Some(t) if t > 0 && t < 2 * DEFAULT_LOW_DISK_MB => {
                Threshold::Scaled((t / 10).max(1), t)
            }
            _ => Threshold::Default(DEFAULT_LOW_DISK_MB),
        }
    }

    /// Free space on the build disk, MiB: `disk_avail_mb`, else (a
    /// 14-column CSV) `disk_avail_gb` × 1024.
    fn disk_avail_mib(row: &Row) -> u64 {
        row.ext
            .disk_avail_mb
            .unwrap_or(row.disk_avail_gb.saturating_mul(1024))
    }

    /// The thresholds in force: given, or set from the first row that had
    /// the figures, or the toolchain's defaults when no row had them.
    fn thresholds(&self) -> (Threshold, Threshold) {
        (
            self.near_oom
                .unwrap_or(Threshold::Default(DEFAULT_NEAR_OOM_MB)),
            self.low_disk
                .unwrap_or(Threshold::Default(DEFAULT_LOW_DISK_MB)),
        )
    }

    /// The near-OOM threshold in force, MiB of available memory (the
    /// [`binding`] figure): given, else set from the first row observed
    /// with memory figures (scaled on a small host or cgroup), else the
    /// toolchain's default. `plot` draws this line;
    /// `--prom` exposes it.
    pub fn near_oom(&self) -> Threshold {
        self.thresholds().0
    }

    /// The low-disk threshold in force, MiB free, chosen as
    /// [`Summary::near_oom`] is (from the first row with disk figures).
    pub fn low_disk(&self) -> Threshold {
        self.thresholds().1
    }

    /// The N of the compatible line `samples below <N> GB free disk`: the
    /// low-disk threshold in whole GiB, rounded up, so that every sample
    /// counted is indeed below N GB (and a sub-GiB threshold reads 1, not
    /// an impossible 0). Equal to the threshold for whole-GiB ones (the
    /// default, `--low-disk-gb`).
    pub fn low_disk_gb_line(&self) -> u64 {
        self.thresholds().1.value().div_ceil(1024)
    }

    /// Takes one row into account. Memory (or disk) figures of a row whose
    /// source could not be read are left out: a 0 written for a missing
    /// /proc/meminfo is not an OOM edge. Memory peaks and the near-OOM
    /// count take the row's [`Binding`].
    pub fn observe(&mut self, row: &Row) {
        self.samples += 1;
        if let Some(jobs) = row.jobs {
            self.jobs_rows
                .get_or_insert_with(Default::default)
                .observe(row.epoch, jobs);
        }
        self.max_elapsed = self.max_elapsed.max(row.elapsed_s);
        if row.mem_known {
            let near = *self.near_oom.get_or_insert_with(|| Self::near_oom_for(row));
            let b = Binding::of(row);
            keep(
                &mut self.peak_mem,
                row,
                |r| Some(Binding::of(r).used_mb),
                true,
            );
            keep(
                &mut self.min_avail,
                row,
                |r| Some(Binding::of(r).avail_mb),
                false,
            );
            keep(&mut self.peak_swap, row, |r| Some(r.swap_used_mb), true);
            if b.avail_mb < near.value() {
                self.near_oom_samples += 1;
            }
            self.mem_samples += 1;
            if b.by_cgroup() {
                self.cg_bound_samples += 1;
            }
        }
        if row.disk_known {
            let low = *self.low_disk.get_or_insert_with(|| Self::low_disk_for(row));
            keep(&mut self.min_disk, row, |r| Some(r.disk_avail_gb), false);
            if Self::disk_avail_mib(row) < low.value() {
                self.low_disk_samples += 1;
            }
        }
        keep(&mut self.peak_load, row, |r| Some(r.load1.centi), true);
        self.peak_cpu = self.peak_cpu.max(row.cpu_pct);
        if let Some(k) = row.ext.oom_kills {
            let prev = self.oom_kills.unwrap_or(0);
            if k > prev {
                let ev = OomRow {
                    iso: row.iso,
                    kills: k - prev,
                    stage: row.stage.clone(),
                    context: row.context.clone(),
                };
                if self.oom_rows.push(ev).is_err() {
                    self.oom_rows_more += 1;
                }
            }
            self.oom_kills = Some(prev.max(k));
        }
        keep(&mut self.peak_rss, row, |r| r.ext.peak_rss_mb, true);
        keep(
            &mut self.peak_build_rss,
            row,
            |r| r.ext.build_peak_rss_mb,
            true,
        );
        self.build_oom_final(row.build_oom_kills);
        if let Some(a) = row.build_anon_mb {
            self.peak_build_anon_mb = Some(self.peak_build_anon_mb.map_or(a, |o| o.max(a)));
        }
        keep(&mut self.peak_zram, row, |r| r.ext.zram_stored_mb, true);
        keep(&mut self.min_tmp, row, |r| r.ext.tmp_avail_mb, false);
        keep(&mut self.min_cg, row, |r| r.ext.cg_mem_avail_mb, false);
        self.slow.observe(row);
    }

    /// Renders the summary into `out` (appending).
    ///
    /// # Errors
    /// [`BufferFull`] when `out` is full, which [`TEXT_CAP`] rules out.
    pub fn render(&self, out: &mut Text) -> Result<(), BufferFull> {
        self.render_to(out).map_err(|_| BufferFull)
    }

    /// The text summary, the sections in order; no rows: the head alone.
    fn render_to<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        self.render_head(w)?;
        if self.samples == 0 {
            return Ok(());
        }
        self.render_memory(w)?;
        self.render_disk_and_load(w)?;
        self.render_counts(w)?;
        self.render_own(w)
    }

    /// The title line, samples and duration, and the rows skipped or lost.
    fn render_head<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let d = self.max_elapsed;
        uwrite!(w, "=== resource-monitor summary ===\n")?;
        uwrite!(w, "samples={}  duration={}m", self.samples, d / 60)?;
        two_digits(w, d % 60)?;
        uwrite!(w, "s\n")?;
        if self.skipped > 0 {
            let rows = if self.skipped == 1 { "row" } else { "rows" };
            uwrite!(w, "skipped {} malformed {}\n", self.skipped, rows)?;
        }
        if self.lost > 0 {
            uwrite!(
                w,
                "rows lost (the CSV could not be written): {}\n",
                self.lost
            )?;
        }
        Ok(())
    }

    /// The memory sections: the estimate note, peak use, min available, peak swap.
    fn render_memory<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        if self.mem_estimated {
            uwrite!(
                w,
                "note: MemAvailable missing on this kernel; estimated as MemFree + Buffers + Cached - Shmem\n"
            )?;
        }
        uwrite!(w, "\nPEAK MEMORY USE:\n")?;
        match &self.peak_mem {
            Some(pm) => {
                let b = Binding::of(pm);
                uwrite!(
                    w,
                    "  {} MB used  (only {} MB available)  at {}",
                    b.used_mb,
                    b.avail_mb,
                    pm.iso.as_str()
                )?;
                match b.by {
                    BoundBy::Host => {}
                    BoundBy::Cgroup { limit_mb: Some(l) } => uwrite!(
                        w,
                        "  (the cgroup's, limit {} MB; host {} MB used, {} MB available)",
                        l,
                        pm.mem_used_mb,
                        pm.mem_avail_mb
                    )?,
                    BoundBy::Cgroup { limit_mb: None } => uwrite!(
                        w,
                        "  (used: the host's; available: the cgroup's, limit not in this CSV; host {} MB available)",
                        pm.mem_avail_mb
                    )?,
                }
                uwrite!(w, "\n")?;
                stage_context(w, pm)?;
            }
            None => uwrite!(w, "{}", NO_MEM)?,
        }
        uwrite!(w, "\nMIN MEMORY AVAILABLE (closest to OOM):\n")?;
        match &self.min_avail {
            Some(ma) => {
                let b = Binding::of(ma);
                uwrite!(w, "  {} MB free  at {}", b.avail_mb, ma.iso.as_str())?;
                match b.by {
                    BoundBy::Host => {}
                    BoundBy::Cgroup { limit_mb: Some(l) } => uwrite!(
                        w,
                        "  (the cgroup's, limit {} MB; host {} MB free)",
                        l,
                        ma.mem_avail_mb
                    )?,
                    BoundBy::Cgroup { limit_mb: None } => uwrite!(
                        w,
                        "  (the cgroup's, limit not in this CSV; host {} MB free)",
                        ma.mem_avail_mb
                    )?,
                }
                uwrite!(w, "\n")?;
                stage_context(w, ma)?;
            }
            None => uwrite!(w, "{}", NO_MEM)?,
        }
        match &self.peak_swap {
            Some(ps) if ps.swap_used_mb > 0 => uwrite!(
                w,
                "\nPEAK SWAP USE: {} MB  at {}  (stage={})\n",
                ps.swap_used_mb,
                ps.iso.as_str(),
                stage_of(ps)
            )?,
            Some(_) => uwrite!(
                w,
                "\nPEAK SWAP USE: 0 MB  at -  (stage=-)  [no swapping — good]\n"
            )?,
            None => uwrite!(w, "\nPEAK SWAP USE: unknown  at -  (stage=-)\n")?,
        }
        Ok(())
    }

    /// The min disk free section and the peak load line.
    fn render_disk_and_load<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        uwrite!(w, "\nMIN DISK FREE (build fs):\n")?;
        match &self.min_disk {
            Some(md) => {
                uwrite!(
                    w,
                    "  {} GB free  at {}\n",
                    md.disk_avail_gb,
                    md.iso.as_str()
                )?;
                stage_context(w, md)?;
            }
            None => uwrite!(
                w,
                "  unknown: the disk path could not be read on any sample\n"
            )?,
        }
        if let Some(pl) = &self.peak_load {
            uwrite!(
                w,
                "\nPEAK LOAD: {}  at {} (stage={})   PEAK CPU: {}%\n",
                pl.load1_str(),
                pl.iso.as_str(),
                stage_of(pl),
                self.peak_cpu
            )?;
        }
        Ok(())
    }

    /// The near-OOM and low-disk sample counts, the OOM kills, the thresholds line.
    fn render_counts<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let (near, low) = self.thresholds();
        uwrite!(
            w,
            "samples below {} MB free RAM (near-OOM): {}\n",
            near.value(),
            self.near_oom_samples
        )?;
        uwrite!(
            w,
            "samples below {} GB free disk: {}\n",
            self.low_disk_gb_line(),
            self.low_disk_samples
        )?;
        match self.oom_kills {
            Some(k) => uwrite!(w, "kernel OOM-kill events: {}\n", k)?,
            None => uwrite!(
                w,
                "kernel OOM-kill events: unknown (no oom_kill counter: kernel before 4.13 or a 14-column CSV)\n"
            )?,
        }
        if let Some(scope) = self.build {
            match self.build_oom_kills {
                Some(k) => uwrite!(w, "OOM kills in this build: {} (", k)?,
                None => uwrite!(w, "OOM kills in this build: unknown (")?,
            }
            uwrite!(w, "{}", scope.how_counted())?;
            if let BuildScope::Tree(why) = scope
                && !why.is_empty()
            {
                uwrite!(w, "; no cgroup of its own: {}", why)?;
            }
            uwrite!(w, ")\n")?;
        } else if let Some(line) = &self.kept_build_oom_line {
            uwrite!(w, "{}\n", line.as_str())?;
        }
        uwrite!(w, "thresholds: near-OOM ")?;
        threshold(w, near, "MiB", "RAM", "1/8")?;
        uwrite!(w, ", low-disk ")?;
        threshold(w, low, "MiB", "disk", "1/10")?;
        uwrite!(w, "\n")?;
        self.render_bound(w)
    }

    /// When a cgroup bound some rows: in how many, so that the memory lines
    /// above read as what they are.
    fn render_bound<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let n = self.cg_bound_samples;
        if n == 0 {
            return Ok(());
        }
        let with_mem = self.mem_samples;
        uwrite!(
            w,
            "memory that binds: the cgroup's available memory (below MemAvailable) in {} of {} samples",
            n,
            with_mem
        )?;
        if n < with_mem {
            uwrite!(w, ", MemAvailable in the other {}", with_mem - n)?;
        }
        uwrite!(w, "\n")
    }

    /// headroom's sections, each only when its column has data, in SPEC.md's
    /// order: zram, /tmp, cgroup headroom, peak compiler RSS, OOM kills,
    /// WHY IT WAS SLOW ([`slow`]), then the `run` and jobserver blocks, and last, for a recording,
    /// whether headroom's memory was locked in RAM.
    fn render_own<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        if let Some(r) = &self.peak_zram
            && let (Some(stored), Some(ram)) = (r.ext.zram_stored_mb, r.ext.zram_ram_mb)
            && stored > 0
        {
            uwrite!(
                w,
                "\nZRAM: peak {} MiB stored in {} MiB of RAM",
                stored,
                ram
            )?;
            // Stored over RAM used: the RAM saving, not the compression
            // ratio (the CSV has no compressed size).
            if let Some(saving) = crate::kernel::zram::ram_saving_centi(stored, ram) {
                uwrite!(w, " (RAM saving ")?;
                write_centi(w, saving)?;
                uwrite!(w, ":1)")?;
            }
            uwrite!(w, "  at {}\n", r.iso.as_str())?;
            stage_context(w, r)?;
        }
        if let Some(r) = &self.min_tmp
            && let (Some(mb), Some(pct)) = (r.ext.tmp_avail_mb, r.ext.tmp_pct)
        {
            uwrite!(
                w,
                "\n/TMP: min {} MiB available ({}% used)  at {}\n",
                mb,
                pct,
                r.iso.as_str()
            )?;
            if self.tmp_is_tmpfs == Some(true) {
                uwrite!(
                    w,
                    "  /tmp is tmpfs: what the build leaves there is RAM (Shmem); TMPDIR on the build disk spares it\n"
                )?;
            }
        }
        if let Some(r) = &self.min_cg
            && let Some(mb) = r.ext.cg_mem_avail_mb
        {
            match r.ext.cg_mem_limit_mb {
                Some(limit) => uwrite!(
                    w,
                    "\nCGROUP HEADROOM: min {} MiB available under the {} MiB memory limit (its inactive file cache counted as available)  at {}\n",
                    mb,
                    limit,
                    r.iso.as_str()
                )?,
                // A CSV written before cg_mem_limit_mb: limit − usage.
                None => uwrite!(
                    w,
                    "\nCGROUP HEADROOM: min {} MiB left under the memory limit  at {}\n",
                    mb,
                    r.iso.as_str()
                )?,
            }
            stage_context(w, r)?;
        }
        self.render_compilers(w)?;
        if !self.oom_rows.is_empty() {
            uwrite!(
                w,
                "\nOOM KILLS (rows where the host-wide kernel counter rose: any process on the host):\n"
            )?;
            for ev in &self.oom_rows {
                let stage = stage_str(&ev.stage);
                uwrite!(
                    w,
                    "  +{} at {}  stage={}  context={}\n",
                    ev.kills,
                    ev.iso.as_str(),
                    stage,
                    ev.context.as_str()
                )?;
            }
            if self.oom_rows_more > 0 {
                uwrite!(w, "  ... and {} more rows\n", self.oom_rows_more)?;
            }
        }
        let peak_mb = self.sizing_peak().map(|p| p.0);
        self.slow.render(w, self.zram_swap(), peak_mb)?;
        if let Some((label, usage)) = &self.run {
            usage.render(label.as_str(), w)?;
            self.partial.render(w)?;
            self.render_build_memory(w)?;
        }
        if let Some(j) = &self.jobserver {
            j.render(w)?;
        }
        if let Some(lock) = self.memory_lock {
            uwrite!(w, "\nheadroom's memory: ")?;
            lock.write(w)?;
            uwrite!(w, "\n")?;
        }
        Ok(())
    }
}

impl Summary {
    /// The peak compiler sections: THE BUILD's largest compiler, then the
    /// host's when it was larger (so not the build's); without a build,
    /// the host's alone, said to be the host's.
    fn render_compilers<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let build_mb = self.build_peak_rss_mb();
        if let Some(r) = &self.peak_build_rss
            && let Some(mb) = build_mb
        {
            uwrite!(
                w,
                "\nPEAK COMPILER RSS: {} MiB ({})  at {}  [this build]\n",
                mb,
                r.ext.build_peak_rss_comm.as_str(),
                r.iso.as_str()
            )?;
            stage_context(w, r)?;
        }
        let Some(r) = &self.peak_rss else {
            return Ok(());
        };
        let Some(mb) = r.ext.peak_rss_mb else {
            return Ok(());
        };
        let comm = r.ext.peak_rss_comm.as_str();
        if !self.has_build() {
            uwrite!(
                w,
                "\nPEAK COMPILER RSS: {} MiB ({})  at {}  [host-wide: every compiler on the host; no build followed]\n",
                mb,
                comm,
                r.iso.as_str()
            )?;
            return stage_context(w, r);
        }
        if mb > build_mb.unwrap_or(0) {
            uwrite!(
                w,
                "\nLARGEST COMPILER ON THE HOST (not this build's): {} MiB ({})  at {}\n",
                mb,
                comm,
                r.iso.as_str()
            )?;
        }
        Ok(())
    }

    /// In the RUN block, with a build cgroup: its peak charge beside
    /// ru_maxrss, and the largest anonymous part sampled.
    fn render_build_memory<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let Some(scope @ BuildScope::Cgroup(_)) = self.build else {
            return Ok(());
        };
        let (peak_file, anon_key) = scope.files();
        if let Some(mb) = self.build_peak_charge_mb {
            uwrite!(
                w,
                "  build cgroup peak {} MiB (all its processes together, {}; includes the page cache it caused)\n",
                mb,
                peak_file
            )?;
        }
        if let Some(mb) = self.peak_build_anon_mb {
            uwrite!(
                w,
                "  build anon memory: largest sampled {} MiB (memory.stat {}, once per row)\n",
                mb,
                anon_key
            )?;
        }
        Ok(())
    }
}

impl Threshold {
    /// The host size a scaled default was computed from (MiB of RAM or of
    /// disk); `None` for a given or unscaled threshold, or one scaled to a
    /// cgroup.
    pub fn scaled_from(self) -> Option<u64> {
        match self {
            Threshold::Scaled(_, host) => Some(host),
            _ => None,
        }
    }

    /// The cgroup limit a near-OOM default was scaled to, MiB; `None`
    /// unless [`Threshold::ScaledToCgroup`].
    pub fn scaled_from_cgroup(self) -> Option<u64> {
        match self {
            Threshold::ScaledToCgroup(_, limit) => Some(limit),
            _ => None,
        }
    }

    /// Where the value came from, one word: `given`, `default`, `scaled`
    /// (to the host's or to a cgroup's size).
    pub fn source(self) -> &'static str {
        match self {
            Threshold::Given(_) => "given",
            Threshold::Default(_) => "default",
            Threshold::Scaled(..) | Threshold::ScaledToCgroup(..) => "scaled",
        }
    }
}

fn two_digits<W: uWrite>(w: &mut W, v: u64) -> Result<(), W::Error> {
    if v < 10 {
        uwrite!(w, "0")?;
    }
    uwrite!(w, "{}", v)
}

fn stage_of(r: &Row) -> &str {
    stage_str(&r.stage)
}

fn stage_context<W: uWrite>(w: &mut W, r: &Row) -> Result<(), W::Error> {
    uwrite!(
        w,
        "  stage={}  context={}\n",
        stage_of(r),
        r.context.as_str()
    )
}

fn threshold<W: uWrite>(
    w: &mut W,
    t: Threshold,
    unit: &str,
    what: &str,
    frac: &str,
) -> Result<(), W::Error> {
    match t {
        Threshold::Given(v) => uwrite!(w, "< {} {} (given)", v, unit),
        Threshold::Default(v) => uwrite!(w, "< {} {} (toolchain default)", v, unit),
        Threshold::Scaled(v, host) => uwrite!(
            w,
            "< {} {} (default scaled to {} of {} {} {})",
            v,
            unit,
            frac,
            host,
            unit,
            what
        ),
        Threshold::ScaledToCgroup(v, limit) => uwrite!(
            w,
            "< {} {} (default scaled to {} of {} {} cgroup limit)",
            v,
            unit,
            frac,
            limit,
            unit
        ),
    }
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
