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
use crate::tick::held::Held;
use crate::tick::row::{BufferFull, Row};
use binding::{Binding, BoundBy};
pub use build_oom::{BuildOom, BuildScope};

/// The memory the build could use at each row: host or cgroup.
pub mod binding;
/// How the build was followed, and its `OOM kills in this build` line.
pub mod build_oom;
/// The advice WHY IT WAS SLOW gives, per finding and kind of build disk.
pub mod slow_advice;
/// The JSON form: [`Summary::render_json`].
mod summary_json;
/// The WHY IT WAS SLOW section: swap thrash, a busy disk, heat and power.
pub mod why_slow;

/// The label after `PEAK CPU` in a container: the load average and
/// /proc/stat's CPU % are the host's, whatever the cgroup.
pub const HOST_LOAD_CPU: &str = "(both the host's: work beside this container counts too)";

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
    /// The row with the highest load1, among rows that have one.
    peak_load: Option<Row>,
    /// The highest `cpu_pct`, among rows that have one ([`Row::cpu_known`]).
    peak_cpu: Option<u64>,
    near_oom_samples: u64,
    low_disk_samples: u64,
    oom_kills: Option<u64>,
    /// Some row was sampled in a container ([`Ext::in_container`]): the
    /// load, CPU % and host OOM count are said to be the host's.
    ///
    /// [`Ext::in_container`]: crate::tick::row::Ext::in_container
    in_container: bool,
    /// The container's own OOM kills (the running maximum of
    /// `cg_oom_kills`); `None` when no row had it.
    cg_oom_kills: Option<u64>,
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
    /// The build disk's kind (from sysfs when recording; for `summarize`,
    /// the `device:` line of the summary beside the CSV), which WHY IT WAS
    /// SLOW's disk advice follows. `None` when unknown: the advice is then
    /// the same for every device.
    pub disk_device: Option<crate::kernel::blockdev::Device>,
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
    /// For `summarize` of a recording whose memory limit was unknown: the
    /// `CGROUP HEADROOM: unknown: ...` line the recording wrote (no CSV
    /// column carries it), kept in place. Without a newline.
    pub kept_cgroup_unknown_line: Option<String<256>>,
    build_oom_kills: Option<u64>,
    /// A process tree's OOM kills that may be its, of the last row that
    /// had the host's counter ([`Row::build_oom_unplaced`]).
    build_oom_unplaced: u64,
    peak_build_rss: Option<Row>,
    peak_build_anon_mb: Option<u64>,
    /// For `record` and `run`: whether headroom's own memory was locked in
    /// RAM ([`crate::tick::footprint::lock`]). `None` for `summarize` of a CSV,
    /// which does not say.
    pub memory_lock: Option<crate::tick::footprint::Lock>,
    /// For `record` and `run`: `/proc/self/cgroup` named a memory cgroup
    /// whose limit could not be read (a container without /sys): said in
    /// the CGROUP HEADROOM section, as the memory lines are the host's.
    /// `None` for `summarize` of a CSV, which does not say.
    pub cgroup_unknown: Option<crate::kernel::cgroup::CgroupError>,
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
            peak_cpu: None,
            near_oom_samples: 0,
            low_disk_samples: 0,
            oom_kills: None,
            in_container: false,
            cg_oom_kills: None,
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
            disk_device: None,
            run: None,
            partial: Partial::default(),
            jobserver: None,
            jobs_rows: None,
            build: None,
            build_peak_charge_mb: None,
            kept_build_oom_line: None,
            kept_cgroup_unknown_line: None,
            build_oom_kills: None,
            build_oom_unplaced: 0,
            peak_build_rss: None,
            peak_build_anon_mb: None,
            memory_lock: None,
            cgroup_unknown: None,
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

    /// Whether a build was followed: [`Summary::build`] is set, the CSV
    /// has the build's figures, or the summary `run` wrote beside it says
    /// so ([`Summary::kept_build_oom_line`]: a build none of whose
    /// compilers ran leaves those columns empty).
    pub fn has_build(&self) -> bool {
        self.build.is_some() || self.peak_build_rss.is_some() || self.kept_build_oom_line.is_some()
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

    /// OOM kills in THE BUILD so far, exactly (its cgroup's counter, or
    /// the victims named among its processes); `None` when unknown, when
    /// a kill on the host may be its ([`BuildOom`]) or without a build.
    pub fn build_oom_kills(&self) -> Option<u64> {
        self.build_oom().exact()
    }

    /// OOM kills in THE BUILD so far, as far as they are known.
    pub fn build_oom(&self) -> BuildOom {
        BuildOom {
            known: self.build_oom_kills,
            unplaced: self.build_oom_unplaced,
        }
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

    /// Whether some row was sampled in a container (host-wide figures
    /// are then said to be the host's).
    pub fn in_container(&self) -> bool {
        self.in_container
    }

    /// The container's own OOM kills since the first row (`cg_oom_kills`,
    /// its running maximum); `None` when no row had the figure.
    pub fn container_oom_kills(&self) -> Option<u64> {
        self.cg_oom_kills
    }

    /// The near-OOM sample count; `None` when samples were taken but
    /// none had the memory figures (unknown, not 0).
    pub fn near_oom_samples_known(&self) -> Option<u64> {
        (self.samples == 0 || self.min_avail.is_some()).then_some(self.near_oom_samples)
    }

    /// The low-disk sample count; `None` when samples were taken but none
    /// had the disk figures (unknown, not 0).
    pub fn low_disk_samples_known(&self) -> Option<u64> {
        (self.samples == 0 || self.min_disk.is_some()).then_some(self.low_disk_samples)
    }

    /// Marks the recording as made in a container although no row says
    /// so: `record` judged it live ([`crate::kernel::container`]), or the
    /// summary it wrote said the container's limit was unknown (no CSV
    /// column carries either). Host-wide figures are then labelled.
    pub fn set_in_container(&mut self) {
        self.in_container = true;
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
        keep(
            &mut self.peak_load,
            row,
            |r| (!r.load1.text.is_empty()).then_some(r.load1.centi),
            true,
        );
        // The first row's cpu_pct is the toolchain's 0 with no interval
        // behind it: not a measurement, so never a peak on its own.
        if row.cpu_known && self.samples > 1 {
            self.peak_cpu = Some(self.peak_cpu.unwrap_or(0).max(row.cpu_pct));
        }
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
        self.in_container |= row.ext.in_container();
        if let Some(k) = row.ext.cg_oom_kills {
            self.cg_oom_kills = Some(self.cg_oom_kills.map_or(k, |o| o.max(k)));
        }
        keep(&mut self.peak_rss, row, |r| r.ext.peak_rss_mb, true);
        keep(
            &mut self.peak_build_rss,
            row,
            |r| r.ext.build_peak_rss_mb,
            true,
        );
        self.build_oom_final(row.build_oom_kills);
        if row.build_oom_kills.is_some() {
            self.build_oom_unplaced = row.build_oom_unplaced;
        }
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
        let mut held = Held::new(out);
        let Ok(()) = self.render_to(&mut held);
        held.finish().map_err(|_| BufferFull)
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
        if self.samples == 0 {
            return Ok(());
        }
        // A figure no sample had is `-`, never 0.
        match &self.peak_load {
            Some(pl) => uwrite!(
                w,
                "\nPEAK LOAD: {}  at {} (stage={})",
                pl.load1_str(),
                pl.iso.as_str(),
                stage_of(pl)
            )?,
            None => uwrite!(w, "\nPEAK LOAD: -  at - (stage=-)")?,
        }
        match self.peak_cpu {
            Some(c) => uwrite!(w, "   PEAK CPU: {}%", c)?,
            None => uwrite!(w, "   PEAK CPU: -")?,
        }
        if self.in_container && (self.peak_load.is_some() || self.peak_cpu.is_some()) {
            uwrite!(w, "  {}", HOST_LOAD_CPU)?;
        }
        uwrite!(w, "\n")
    }

    /// The `kernel OOM-kill events` line: the host's count; in a container
    /// its own count when a row had it, with the host's beside it, else
    /// the host's said to be the host's.
    fn render_oom_line<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        uwrite!(w, "kernel OOM-kill events: ")?;
        match (self.in_container, self.cg_oom_kills, self.oom_kills) {
            (true, Some(c), host) => {
                uwrite!(
                    w,
                    "{}  (this container's: its memory cgroup's oom_kill; the host's: ",
                    c
                )?;
                match host {
                    Some(k) => uwrite!(w, "{})\n", k),
                    None => uwrite!(w, "unknown)\n"),
                }
            }
            (true, None, Some(k)) => uwrite!(
                w,
                "{}  (the host's: this container's own count is not in the CSV)\n",
                k
            ),
            (_, _, Some(k)) => uwrite!(w, "{}\n", k),
            (_, _, None) => uwrite!(
                w,
                "unknown (no oom_kill counter: kernel before 4.13 or a 14-column CSV)\n"
            ),
        }
    }

    /// The near-OOM and low-disk sample counts, the OOM kills, the thresholds line.
    fn render_counts<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let (near, low) = self.thresholds();
        uwrite!(w, "samples below {} MB free RAM (near-OOM): ", near.value())?;
        count_or_unknown(w, self.near_oom_samples_known(), "memory")?;
        uwrite!(
            w,
            "samples below {} GB free disk: ",
            self.low_disk_gb_line()
        )?;
        count_or_unknown(w, self.low_disk_samples_known(), "disk")?;
        self.render_oom_line(w)?;
        if let Some(scope) = self.build {
            self.build_oom().render_line(w, scope)?;
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

    /// The CGROUP HEADROOM section: the least available under the cgroup
    /// limit, or that the recording could not read the limit.
    fn render_cgroup<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
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
        if let Some(e) = self.cgroup_unknown {
            uwrite!(
                w,
                "\nCGROUP HEADROOM: unknown: the container's memory limit could not be read ("
            )?;
            // The words of the warning on stderr ([`CgroupError`]'s Display).
            let mut why = String::<160>::new();
            let _ = core::fmt::write(&mut why, format_args!("{e}"));
            w.write_str(&why)?;
            uwrite!(w, "); the memory lines above are the host's\n")?;
        } else if let Some(line) = &self.kept_cgroup_unknown_line {
            uwrite!(w, "\n{}\n", line.as_str())?;
        }
        Ok(())
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
        self.render_cgroup(w)?;
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
        self.slow
            .render(w, self.zram_swap(), peak_mb, self.disk_device)?;
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

/// `n` and a newline, or `unknown` with the figure that no sample had.
fn count_or_unknown<W: uWrite>(w: &mut W, n: Option<u64>, figure: &str) -> Result<(), W::Error> {
    match n {
        Some(n) => uwrite!(w, "{}\n", n),
        None => uwrite!(w, "unknown (no sample had the {} figures)\n", figure),
    }
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
mod tests {
    //! Unit tests of `report::summary` (src/report/summary.rs).

    extern crate std;
    use super::*;
    use crate::report::csvread::CsvRows;

    fn summarize(data: &[u8], near: Option<u64>, low: Option<u64>) -> std::string::String {
        let mut s = Summary::new(near, low);
        let mut r = CsvRows::new();
        r.feed(data, &mut |row| s.observe(row)).unwrap();
        r.feed(&[], &mut |row| s.observe(row)).unwrap();
        s.skipped = r.skipped;
        let mut t = Text::new();
        s.render(&mut t).unwrap();
        std::string::String::from(t.as_str())
    }

    const SAMPLE: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/toolchain-cargo-build.csv"
    ));

    #[test]
    fn toolchain_sample_summary_whole() {
        let got = summarize(SAMPLE, None, None);
        let want = "=== resource-monitor summary ===
samples=18  duration=0m18s

PEAK MEMORY USE:
  689 MB used  (only 23416 MB available)  at 2026-11-30T01:03:09Z
  stage=build  context= Compiling syn v2.0.119

MIN MEMORY AVAILABLE (closest to OOM):
  23416 MB free  at 2026-11-30T01:03:09Z
  stage=build  context= Compiling syn v2.0.119

PEAK SWAP USE: 0 MB  at -  (stage=-)  [no swapping — good]

MIN DISK FREE (build fs):
  76 GB free  at 2026-11-30T01:03:05Z
  stage=build  context=

PEAK LOAD: 0.84  at 2026-11-30T01:03:18Z (stage=build)   PEAK CPU: 100%
samples below 4096 MB free RAM (near-OOM): 0
samples below 20 GB free disk: 0
kernel OOM-kill events: unknown (no oom_kill counter: kernel before 4.13 or a 14-column CSV)
thresholds: near-OOM < 4096 MiB (toolchain default), low-disk < 20480 MiB (toolchain default)
";
        assert_eq!(got, want);
    }

    /// Issue 33: rows whose load, CPU, memory and disk fields are empty
    /// (their sources unreadable) give `-`/unknown peaks and JSON `null`,
    /// never 0, and no near-OOM or low-disk sample.
    #[test]
    fn empty_core_fields_are_unknown_peaks_not_zero() {
        let data = b"epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context
100,1970-01-01T00:01:40Z,0,,,,,,,,,0,a,\"x\"
115,1970-01-01T00:01:55Z,15,,,,,,,,,0,b,\"y\"
";
        let got = summarize(data, None, None);
        assert!(
            got.contains("\nPEAK LOAD: -  at - (stage=-)   PEAK CPU: -\n"),
            "{got}"
        );
        assert!(
            got.contains("(near-OOM): unknown (no sample had the memory figures)\n"),
            "{got}"
        );
        assert!(
            got.contains("free disk: unknown (no sample had the disk figures)\n"),
            "{got}"
        );
        assert!(
            got.contains("MIN MEMORY AVAILABLE (closest to OOM):\n  unknown"),
            "{got}"
        );
        let mut sum = Summary::new(None, None);
        let mut r = CsvRows::new();
        r.feed(data, &mut |row| sum.observe(row)).unwrap();
        r.feed(&[], &mut |row| sum.observe(row)).unwrap();
        assert_eq!(sum.samples(), 2);
        let mut j = Text::new();
        sum.render_json(&mut j).unwrap();
        for null in [
            "\"peak_load\":null",
            "\"peak_cpu_pct\":null",
            "\"min_mem_avail\":null",
            "\"min_disk\":null",
        ] {
            assert!(j.contains(null), "{null} in {j}");
        }
        // A recording that could not read its memory cgroup says so.
        assert!(!got.contains("CGROUP HEADROOM"), "{got}");
        sum.cgroup_unknown = Some(crate::kernel::cgroup::CgroupError::NotMounted);
        let mut t = Text::new();
        sum.render(&mut t).unwrap();
        assert!(
            t.contains("\nCGROUP HEADROOM: unknown: the container's memory limit could not be read (proc/self/cgroup names a cgroup, but no cgroup filesystem is mounted); the memory lines above are the host's\n"),
            "{t}"
        );
        // One row with a reading: its figures, a first-tick 0 included.
        let one = b"epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context
100,1970-01-01T00:01:40Z,0,,,,,,,,,0,a,\"x\"
115,1970-01-01T00:01:55Z,15,0.50,0,,,,,,,0,b,\"y\"
";
        let got = summarize(one, None, None);
        assert!(
            got.contains("PEAK LOAD: 0.50  at 1970-01-01T00:01:55Z (stage=b)   PEAK CPU: 0%\n"),
            "{got}"
        );
    }

    #[test]
    fn zeros_count_as_near_oom_and_low_disk() {
        let data = b"epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context
100,1970-01-01T00:01:40Z,0,1.00,50,3000,900,76,0,1,97,1,a,\"x\"
115,1970-01-01T00:01:55Z,15,1.00,50,3900,0,100,200,0,100,1,b,\"y\"
";
        let got = summarize(data, None, None);
        // RAM 3900 MB < 8192: threshold 3900/8 = 487; disk total 1024 ×
        // 100 / 3 = 34133 MB: 3413 MB, "below 4 GB" (rounded up) in the
        // compatible line.
        assert!(
            got.contains("samples below 487 MB free RAM (near-OOM): 1\n"),
            "{got}"
        );
        assert!(got.contains("samples below 4 GB free disk: 2\n"), "{got}");
        assert!(
            got.contains("low-disk < 3413 MiB (default scaled to 1/10 of 34133 MiB disk)\n"),
            "{got}"
        );
        assert!(got.contains("PEAK SWAP USE: 200 MB  at 1970-01-01T00:01:55Z  (stage=b)\n"));
        assert!(got.contains("MIN MEMORY AVAILABLE (closest to OOM):\n  0 MB free  at 1970-01-01T00:01:55Z\n  stage=b  context=y\n"));
        assert!(
            got.contains("(default scaled to 1/8 of 3900 MiB RAM)"),
            "{got}"
        );
        let given = summarize(data, Some(1000), Some(1));
        assert!(given.contains("samples below 1000 MB free RAM (near-OOM): 2\n"));
        assert!(given.contains("samples below 1 GB free disk: 1\n"));
        assert!(given.contains("near-OOM < 1000 MiB (given)"));
        assert!(given.contains("low-disk < 1024 MiB (given)"), "{given}");
        let mut sum = Summary::new(None, None);
        let mut r = CsvRows::new();
        r.feed(data, &mut |row| sum.observe(row)).unwrap();
        sum.run = Some((
            String::try_from("make -j2").unwrap(),
            Usage {
                wall_ms: 1500,
                user_ms: 2000,
                sys_ms: 100,
                max_rss_kib: 2048,
                counts: crate::followed::rusage::Counts::from_values([1, 2, 3, 4, 5, 6]),
                end: crate::followed::rusage::End::Signaled(9),
            },
        ));
        let mut j = Text::new();
        sum.render_json(&mut j).unwrap();
        assert!(j.contains(",\"near_oom\":{\"below_mb\":487,\"from\":\"scaled\",\"scaled_from_ram_mb\":3900,\"scaled_from_cgroup_limit_mb\":null,\"samples\":1}"), "{j}");
        assert!(j.contains("\"interrupted\":null,\"run\":{\"command\":\"make -j2\",\"wall_ms\":1500,\"user_ms\":2000,\"sys_ms\":100,\"cores_centi\":140,\"max_rss_kib\":2048,\"majflt\":1,\"minflt\":2,\"nvcsw\":3,\"nivcsw\":4,\"inblock\":5,\"oublock\":6,\"exit\":null,\"signal\":\"KILL\"},\"jobserver\":null,\"memory_lock\":null}\n"), "{j}");
        let mut t = Text::new();
        sum.render(&mut t).unwrap();
        assert!(!t.contains("interrupted"), "{t}");
        // Interrupted: the RUN block says which figures are partial, right
        // after how the command ended, and the JSON says it was.
        sum.partial = crate::followed::rusage::Partial {
            interrupt: Some(crate::followed::rusage::Interrupt {
                signal: 2,
                after_ms: 1200,
            }),
            unreaped: 2,
        };
        let mut t = Text::new();
        sum.render(&mut t).unwrap();
        assert!(t.contains("  killed by signal KILL (9), exit status 137\n  interrupted: SIGINT after 1.200 s: wall is to the interrupt; CPU and max RSS cover only the processes that were reaped (2 were not): lower bounds\n"), "{t}");
        let mut j = Text::new();
        sum.render_json(&mut j).unwrap();
        assert!(
            j.contains(",\"interrupted\":{\"signal\":\"INT\",\"after_ms\":1200},\"run\":{"),
            "{j}"
        );
    }

    #[test]
    fn a_recording_says_whether_its_memory_was_locked() {
        use crate::tick::footprint::{Lock, NotLocked};
        let mut sum = Summary::new(None, None);
        let mut r = CsvRows::new();
        r.feed(SAMPLE, &mut |row| sum.observe(row)).unwrap();
        let plain = summarize(SAMPLE, None, None);
        let render = |s: &Summary| {
            let (mut t, mut j) = (Text::new(), Text::new());
            s.render(&mut t).unwrap();
            s.render_json(&mut j).unwrap();
            (
                std::string::String::from(t.as_str()),
                std::string::String::from(j.as_str()),
            )
        };
        // summarize of a CSV: no line, null.
        assert!(!plain.contains("headroom's memory"));
        assert!(render(&sum).1.ends_with(",\"memory_lock\":null}\n"));
        sum.memory_lock = Some(Lock::Locked);
        let (t, j) = render(&sum);
        // One line more, at the end of headroom's own sections; the
        // toolchain's headings above it are untouched.
        assert_eq!(
            t,
            std::format!("{plain}\nheadroom's memory: locked in RAM (mlockall)\n")
        );
        assert!(
            j.ends_with(",\"memory_lock\":{\"locked\":true,\"reason\":null}}\n"),
            "{j}"
        );
        sum.memory_lock = Some(Lock::NotLocked(NotLocked::Limit {
            limit_kib: 64,
            need_kib: 1800,
        }));
        let (t, j) = render(&sum);
        assert!(t.ends_with("\nheadroom's memory: not locked: RLIMIT_MEMLOCK is 64 KiB, locking needs 1800 KiB (ulimit -l, or CAP_IPC_LOCK)\n"), "{t}");
        assert!(j.ends_with(",\"memory_lock\":{\"locked\":false,\"reason\":\"RLIMIT_MEMLOCK is 64 KiB, locking needs 1800 KiB (ulimit -l, or CAP_IPC_LOCK)\"}}\n"), "{j}");
    }

    /// Issue 33: the first row's cpu_pct is 0 by definition (no interval
    /// behind it): a one-row recording has no CPU peak (`-`, JSON null),
    /// and the peak of a longer one comes from the rows after it.
    #[test]
    fn the_first_rows_cpu_is_no_peak() {
        let head = "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context\n";
        let first = "100,1970-01-01T00:01:40Z,0,1.40,0,1000,3000,25,0,50,10,0,a,\"x\"\n";
        let got = summarize(std::format!("{head}{first}").as_bytes(), None, None);
        assert!(got.contains("   PEAK CPU: -\n"), "{got}");
        let second = "115,1970-01-01T00:01:55Z,15,1.40,37,1000,3000,25,0,50,10,0,a,\"x\"\n";
        let got = summarize(std::format!("{head}{first}{second}").as_bytes(), None, None);
        assert!(got.contains("   PEAK CPU: 37%\n"), "{got}");
    }

    #[test]
    fn unreadable_sources_are_not_oom_or_low_disk() {
        let mut data = std::format!("{}\n", crate::tick::row::columns::header_27());
        data.push_str("100,1970-01-01T00:01:40Z,0,0,0,0,0,0,0,0,0,0,?,\"\",,,,,,,,,,,,,\n");
        data.push_str("101,1970-01-01T00:01:41Z,1,0,0,0,0,0,0,0,0,0,?,\"\",,,,,,,,,,,,,\n");
        let got = summarize(data.as_bytes(), None, None);
        // No sample had the figures: the counts are unknown, not 0.
        assert!(
            got.contains("samples below 4096 MB free RAM (near-OOM): unknown (no sample had the memory figures)\n"),
            "{got}"
        );
        assert!(
            got.contains(
                "samples below 20 GB free disk: unknown (no sample had the disk figures)\n"
            ),
            "{got}"
        );
        assert!(got.contains("MIN MEMORY AVAILABLE (closest to OOM):\n  unknown: /proc/meminfo could not be read on any sample\n"), "{got}");
        assert!(
            got.contains("MIN DISK FREE (build fs):\n  unknown"),
            "{got}"
        );
        assert!(
            got.contains("PEAK LOAD: 0  at 1970-01-01T00:01:40Z"),
            "{got}"
        );
    }

    #[test]
    fn empty_csv_prints_samples_zero_and_no_peaks() {
        let got = summarize(
            crate::tick::row::columns::HEADER_FULL.as_bytes(),
            None,
            None,
        );
        assert_eq!(
            got,
            "=== resource-monitor summary ===\nsamples=0  duration=0m00s\n"
        );
    }

    #[test]
    fn oom_rows_and_own_sections() {
        let mut data = std::format!("{}\n", crate::tick::row::columns::header_27());
        data.push_str("100,1970-01-01T00:01:40Z,0,1.00,50,3000,900,76,0,1,97,1,a,\"x\",0,0,0,500,10,1100,0,,,700,cc1plus,,\n");
        data.push_str("115,1970-01-01T00:01:55Z,15,1.00,50,3000,900,76,0,1,97,1,b,\"[ 41%] Building CXX\",0,100,40,400,20,1000,2,300,0.50,800,cc1plus,,\n");
        let got = summarize(data.as_bytes(), None, None);
        assert!(got.contains("kernel OOM-kill events: 2\n"), "{got}");
        assert!(got.contains("OOM KILLS (rows where the host-wide kernel counter rose: any process on the host):\n  +2 at 1970-01-01T00:01:55Z  stage=b  context=[ 41%] Building CXX\n"), "{got}");
        assert!(got.contains("\nPEAK COMPILER RSS: 800 MiB (cc1plus)  at 1970-01-01T00:01:55Z  [host-wide: every compiler on the host; no build followed]\n"), "{got}");
        assert!(!got.contains("this build"), "{got}");
        // Stored over RAM used is the RAM saving (issue 12: it was called
        // "ratio", as the status table's stored / compressed is).
        assert!(
            got.contains("ZRAM: peak 100 MiB stored in 40 MiB of RAM (RAM saving 2.50:1)  at "),
            "{got}"
        );
        assert!(!got.contains("(ratio "), "{got}");
        assert!(got.contains("/TMP: min 400 MiB available (20% used)"));
        assert!(got.contains("CGROUP HEADROOM: min 300 MiB left"));
    }

    /// Another process named cc1plus holds 300 MiB outside; the build's own
    /// cc1 is at most 50: the build's is the peak, the host's is said to
    /// be someone else's, and a plan sizes from the build's.
    #[test]
    fn the_builds_compilers_are_not_the_hosts() {
        let mut data = std::format!("{}\n", crate::tick::row::columns::header_27());
        data.push_str("100,1970-01-01T00:01:40Z,0,1.00,50,3000,900,76,0,1,97,2,a,\"cc x.c\",0,,,500,10,1100,0,,,300,cc1plus,48,cc1\n");
        data.push_str("101,1970-01-01T00:01:41Z,1,1.00,50,3000,900,76,0,1,97,2,b,\"cc y.c\",0,,,500,10,1100,1,,,301,cc1plus,50,cc1\n");
        data.push_str("102,1970-01-01T00:01:42Z,2,1.00,50,3000,900,76,0,1,97,1,c,\"cc z.c\",0,,,500,10,1100,1,,,301,cc1plus,,\n");
        let mut sum = Summary::new(None, None);
        CsvRows::new()
            .feed(data.as_bytes(), &mut |r| sum.observe(r))
            .unwrap();
        assert_eq!(sum.sizing_peak(), Some((50, PeakOf::Build)));
        let mut t = Text::new();
        sum.render(&mut t).unwrap();
        assert!(t.contains("\nPEAK COMPILER RSS: 50 MiB (cc1)  at 1970-01-01T00:01:41Z  [this build]\n  stage=b  context=cc y.c\n"), "{t}");
        assert!(
            t.contains("\nLARGEST COMPILER ON THE HOST (not this build's): 301 MiB (cc1plus)"),
            "{t}"
        );
        // From a CSV, how the build was followed is not known: no line.
        assert!(!t.contains("OOM kills in this build"), "{t}");

        // Recorded live as a tree with one kill named among its processes
        // and one on the host not placed, then as a cgroup.
        let mut row = Row::empty(103);
        row.build_oom_kills = Some(1);
        row.build_oom_unplaced = 1;
        sum.build = Some(BuildScope::Tree("not permitted to make a cgroup", None));
        sum.observe(&row);
        let mut t = Text::new();
        sum.render(&mut t).unwrap();
        assert!(t.contains("kernel OOM-kill events: 1\nOOM kills in this build: unknown, 1 to 2 (1 of the victims named by the kernel's OOM reports in /dev/kmsg were its processes; 1 more kill(s) on the host during it could not be placed: started and gone between two looks at its processes, or not named; no cgroup of its own: not permitted to make a cgroup)\n"), "{t}");
        assert_eq!(
            (sum.build_oom_kills(), sum.build_oom().range()),
            (None, Some((1, 2)))
        );
        let mut j = Text::new();
        sum.render_json(&mut j).unwrap();
        assert!(j.contains("\"build\":{\"scope\":\"process_tree\",\"oom_kills\":null,\"oom_kills_at_least\":1,\"oom_kills_at_most\":2,\"oom_kills_counted\":\"1 of the victims"), "{j}");
        // A row without the host's counter leaves what was known.
        let mut dark = Row::empty(104);
        dark.build_oom_unplaced = 0;
        sum.observe(&dark);
        assert_eq!(sum.build_oom().range(), Some((1, 2)));
        row.build_oom_unplaced = 0;
        sum.observe(&row);
        assert_eq!(sum.build_oom_kills(), Some(1));
        sum.build = Some(BuildScope::Cgroup(crate::kernel::cgroup::Version::V1));
        sum.build_oom_final(Some(3));
        sum.build_oom_final(None);
        sum.build_peak_charge_mb = Some(70);
        row.build_anon_mb = Some(40);
        sum.observe(&row);
        sum.run = Some((
            String::try_from("make").unwrap(),
            Usage {
                wall_ms: 1,
                user_ms: 1,
                sys_ms: 1,
                max_rss_kib: 51 * 1024,
                counts: crate::followed::rusage::Counts::default(),
                end: crate::followed::rusage::End::Exited(0),
            },
        ));
        let mut t = Text::new();
        sum.render(&mut t).unwrap();
        assert!(
            t.contains("OOM kills in this build: 3 (its cgroup's memory.oom_control oom_kill)\n"),
            "{t}"
        );
        assert!(t.contains("  max RSS 51 MiB (largest single process, ru_maxrss)\n  page faults: major 0 (requiring I/O)  minor 0\n  context switches: voluntary 0  involuntary 0\n  file system inputs 0  outputs 0 (512-byte blocks)\n  exit 0\n  build cgroup peak 70 MiB (all its processes together, memory.max_usage_in_bytes; includes the page cache it caused)\n  build anon memory: largest sampled 40 MiB (memory.stat total_rss, once per row)\n"), "{t}");
        let mut j = Text::new();
        sum.render_json(&mut j).unwrap();
        assert!(j.contains(",\"build_peak_compiler_rss\":{\"rss_mb\":50,\"comm\":\"cc1\",\"iso\":\"1970-01-01T00:01:41Z\""), "{j}");
        assert!(j.contains(",\"build\":{\"scope\":\"cgroup\",\"oom_kills\":3,\"oom_kills_at_least\":3,\"oom_kills_at_most\":3,\"oom_kills_counted\":\"its cgroup's memory.oom_control oom_kill\",\"no_cgroup_because\":null,\"cgroup_peak_mb\":70,\"anon_peak_mb\":40}"), "{j}");
    }

    /// Without a build, the host's compilers are the only figure: a plan
    /// sizes from them, and says whose they are.
    #[test]
    fn without_a_build_the_host_peak_is_said_to_be_the_hosts() {
        let mut data = std::format!("{}\n", crate::tick::row::columns::header_27());
        data.push_str("100,1970-01-01T00:01:40Z,0,1.00,50,3000,900,76,0,1,97,2,a,\"x\",0,,,500,10,1100,0,,,300,cc1plus,,\n");
        let mut sum = Summary::new(None, None);
        CsvRows::new()
            .feed(data.as_bytes(), &mut |r| sum.observe(r))
            .unwrap();
        assert_eq!(sum.sizing_peak(), Some((300, PeakOf::Host)));
        // A build followed whose compilers never ran: no peak to size from.
        sum.build = Some(BuildScope::Tree("", None));
        assert_eq!(sum.sizing_peak(), None);
    }

    /// Issue 12: on a disk under 1 GiB the low-disk threshold fell back to
    /// 20 GB (whole-GB arithmetic gave a 0 GB disk). A full CSV of a
    /// 512 MiB tmpfs build dir: scaled from disk_avail_mb.
    #[test]
    fn small_disk_full_csv_scales_in_mib() {
        let mut data = std::format!("{}\n", crate::tick::row::columns::header_27());
        for (i, (mb, pct)) in [(460, 10), (100, 80), (50, 90), (0, 100)]
            .iter()
            .enumerate()
        {
            data.push_str(&std::format!(
            "{},1970-01-01T00:01:4{i}Z,{i},0.10,5,300,3000,9,0,0,{pct},0,b,\"x\",0,0,0,400,10,{mb},0,,,,,,\n",
            100 + i
        ));
        }
        let got = summarize(data.as_bytes(), None, None);
        // Total 460 × 100 / 90 = 511 MiB; 1/10: 51 MiB. 50 and 0 are below.
        assert!(got.contains("samples below 1 GB free disk: 2\n"), "{got}");
        assert!(
            got.contains(", low-disk < 51 MiB (default scaled to 1/10 of 511 MiB disk)\n"),
            "{got}"
        );
        let mut s = Summary::new(None, None);
        let mut r = CsvRows::new();
        r.feed(data.as_bytes(), &mut |row| s.observe(row)).unwrap();
        assert_eq!(s.low_disk(), Threshold::Scaled(51, 511));
        let mut j = Text::new();
        s.render_json(&mut j).unwrap();
        assert!(
        j.contains(",\"low_disk\":{\"below_mb\":51,\"below_gb\":1,\"from\":\"scaled\",\"scaled_from_disk_mb\":511,\"samples\":2}"),
        "{j}"
    );
        // --low-disk-gb still counts in whole GiB, exactly as before.
        let given = summarize(data.as_bytes(), None, Some(1));
        assert!(
            given.contains("samples below 1 GB free disk: 4\n"),
            "{given}"
        );
        assert!(given.contains("low-disk < 1024 MiB (given)"), "{given}");
    }

    /// The same small disk in a 14-column (compat) CSV: only whole GiB,
    /// so `0` free is "under 1 GiB" and the total is estimated from 1 GiB:
    /// still a scaled threshold, not the 20 GB default. A 4 GB card with
    /// 2 GB free scales as before, now to the MiB.
    #[test]
    fn small_disk_compat_csv_scales_from_whole_gib() {
        let head = "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context\n";
        let mut tmpfs = std::string::String::from(head);
        tmpfs.push_str("100,1970-01-01T00:01:40Z,0,0.10,5,300,3000,9,0,0,10,0,b,\"x\"\n");
        tmpfs.push_str("101,1970-01-01T00:01:41Z,1,0.10,5,300,3000,9,0,0,95,0,b,\"x\"\n");
        let got = summarize(tmpfs.as_bytes(), None, None);
        // 1024 × 100 / 90 = 1137 MiB at most; 1/10: 113 MiB.
        assert!(got.contains("samples below 1 GB free disk: 2\n"), "{got}");
        assert!(
            got.contains("low-disk < 113 MiB (default scaled to 1/10 of 1137 MiB disk)\n"),
            "{got}"
        );
        let mut card = std::string::String::from(head);
        card.push_str("100,1970-01-01T00:01:40Z,0,0.10,5,300,3000,9,0,2,50,0,b,\"x\"\n");
        card.push_str("101,1970-01-01T00:01:41Z,1,0.10,5,300,3000,9,0,0,99,0,b,\"x\"\n");
        let got = summarize(card.as_bytes(), None, None);
        // 2048 × 100 / 50 = 4096 MiB; 1/10: 409 MiB.
        assert!(got.contains("samples below 1 GB free disk: 1\n"), "{got}");
        assert!(
            got.contains("low-disk < 409 MiB (default scaled to 1/10 of 4096 MiB disk)\n"),
            "{got}"
        );
    }

    // Issue 25: the memory lines carry the figure that binds, host or cgroup.
    // tests/data/gen-summary-csvs.py writes the three CSVs.

    const HOST_BOUND: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/host-bound.csv"
    ));
    const CGROUP_LOOSE: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/cgroup-loose.csv"
    ));
    const CGROUP_1G: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/cgroup-1g.csv"
    ));

    /// The summary text up to headroom's own sections: the toolchain's lines,
    /// the thresholds line and what follows it in the counts block.
    fn compat_part(text: &str) -> &str {
        let end = text.find("\nZRAM:").unwrap_or(text.len());
        &text[..end]
    }

    /// Without a cgroup that binds, every line is what headroom wrote before
    /// issue 25 (the golden was written by that version).
    #[test]
    fn no_binding_cgroup_is_byte_for_byte_as_before() {
        let golden = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/host-bound.summary.txt"
        ));
        let got = summarize(HOST_BOUND, None, None);
        assert_eq!(got, golden);
        // The same host inside an 8 GiB cgroup that never has less room than
        // MemAvailable: the toolchain's lines are the host's, unchanged but
        // for the labels a limit brings (issue 33: the load, CPU % and OOM
        // count are the host's); only CGROUP HEADROOM (headroom's own)
        // tells of the cgroup.
        let loose = summarize(CGROUP_LOOSE, None, None);
        let unlabelled = compat_part(&loose)
            .replace(&std::format!("  {HOST_LOAD_CPU}"), "")
            .replace(
                "  (the host's: this container's own count is not in the CSV)",
                "",
            );
        assert_eq!(unlabelled, compat_part(golden));
        assert!(!loose.contains("memory that binds"), "{loose}");
        assert!(
        loose.contains("\nCGROUP HEADROOM: min 2210 MiB available under the 8192 MiB memory limit (its inactive file cache counted as available)  at 2026-11-30T00:53:45Z\n"),
        "{loose}"
    );
        // And the 14 compatible columns of the binding CSV alone (no cgroup
        // columns at all) are the host's.
        let compat: std::string::String = std::str::from_utf8(CGROUP_1G)
            .unwrap()
            .lines()
            .map(|l| {
                let f: std::vec::Vec<&str> = l.split(',').take(14).collect();
                std::format!("{}\n", f.join(","))
            })
            .collect();
        let t = summarize(compat.as_bytes(), None, None);
        assert!(
        t.contains(
            "\nMIN MEMORY AVAILABLE (closest to OOM):\n  18210 MB free  at 2026-11-30T00:53:45Z\n"
        ),
        "{t}"
    );
    }

    /// A 1 GiB cgroup on a 22 GiB host (the container): the lines keep
    /// their exact prefixes and carry the cgroup's figures, said to be its.
    #[test]
    fn a_binding_cgroup_carries_its_figures_with_the_compatible_prefixes() {
        let got = summarize(CGROUP_1G, None, None);
        let want = "\nPEAK MEMORY USE:
  947 MB used  (only 77 MB available)  at 2026-11-30T00:53:45Z  (the cgroup's, limit 1024 MB; host 3790 MB used, 18210 MB available)
  stage=link  context=[ 90%] Linking CXX executable app

MIN MEMORY AVAILABLE (closest to OOM):
  77 MB free  at 2026-11-30T00:53:45Z  (the cgroup's, limit 1024 MB; host 18210 MB free)
  stage=link  context=[ 90%] Linking CXX executable app
";
        assert!(got.contains(want), "{got}");
        // What scripts grep still matches, and reads the cgroup's number.
        let line = got
            .lines()
            .skip_while(|l| !l.starts_with("MIN MEMORY AVAILABLE"))
            .nth(1)
            .unwrap();
        assert!(
            line.starts_with("  77 MB free  at 2026-11-30T00:53:45Z"),
            "{line}"
        );
        assert_eq!(line.split_whitespace().next(), Some("77"));
        // 1/8 of the 1024 MiB limit: rows at 112 and 77 MiB are near OOM.
        assert!(
            got.contains("\nsamples below 128 MB free RAM (near-OOM): 2\n"),
            "{got}"
        );
        assert!(
        got.contains("thresholds: near-OOM < 128 MiB (default scaled to 1/8 of 1024 MiB cgroup limit), low-disk"),
        "{got}"
    );
        assert!(got.contains("\nmemory that binds: the cgroup's available memory (below MemAvailable) in 10 of 10 samples\n"), "{got}");
        assert!(
        got.contains("\nCGROUP HEADROOM: min 77 MiB available under the 1024 MiB memory limit (its inactive file cache counted as available)  at 2026-11-30T00:53:45Z\n"),
        "{got}"
    );
        // A given threshold is kept, and counts the cgroup's figures (449,
        // 249, 112, 77, 174 and 474 MiB).
        let given = summarize(CGROUP_1G, Some(500), None);
        assert!(
            given.contains("samples below 500 MB free RAM (near-OOM): 6\n"),
            "{given}"
        );
        assert!(given.contains("near-OOM < 500 MiB (given)"), "{given}");
    }

    #[test]
    fn the_near_oom_default_scales_to_the_cgroups_limit() {
        let scaled = |used, avail, cg: Option<u64>, limit: Option<u64>| {
            let mut r = Row::empty(1);
            (r.mem_used_mb, r.mem_avail_mb) = (used, avail);
            (r.ext.cg_mem_avail_mb, r.ext.cg_mem_limit_mb) = (cg, limit);
            let mut s = Summary::new(None, None);
            s.observe(&r);
            s.near_oom()
        };
        assert_eq!(
            scaled(3000, 21000, Some(700), Some(1024)),
            Threshold::ScaledToCgroup(128, 1024)
        );
        assert_eq!(
            scaled(3000, 21000, Some(5000), Some(6144)),
            Threshold::ScaledToCgroup(768, 6144)
        );
        // A cgroup of twice the default or more: the default, as a large host.
        assert_eq!(
            scaled(3000, 21000, Some(5000), Some(8192)),
            Threshold::Default(4096)
        );
        // A limit above RAM: the host's RAM scales it, as before.
        assert_eq!(
            scaled(300, 3500, Some(7000), Some(8000)),
            Threshold::Scaled(475, 3800)
        );
        // No limit recorded (a CSV before cg_mem_limit_mb): RAM alone.
        assert_eq!(
            scaled(3000, 21000, Some(700), None),
            Threshold::Default(4096)
        );
        let t = Threshold::ScaledToCgroup(128, 1024);
        assert_eq!(
            (
                t.value(),
                t.source(),
                t.scaled_from(),
                t.scaled_from_cgroup()
            ),
            (128, "scaled", None, Some(1024))
        );
    }

    /// A CSV of 37 columns (before cg_mem_limit_mb; cg_mem_avail_mb then meant
    /// limit − usage): the cgroup's available still binds; its use and size
    /// are unknown, so used stays the host's and the threshold scales to RAM.
    #[test]
    fn a_37_column_csv_still_summarizes() {
        let old: std::string::String = std::str::from_utf8(CGROUP_1G)
            .unwrap()
            .lines()
            .map(|l| {
                let (head, _) = l.rsplit_once(',').unwrap();
                std::format!("{head}\n")
            })
            .collect();
        assert_eq!(old.lines().next().unwrap().split(',').count(), 37);
        let got = summarize(old.as_bytes(), None, None);
        assert!(got.contains("\nPEAK MEMORY USE:\n  3790 MB used  (only 77 MB available)  at 2026-11-30T00:53:45Z  (used: the host's; available: the cgroup's, limit not in this CSV; host 18210 MB available)\n"), "{got}");
        assert!(got.contains("\nMIN MEMORY AVAILABLE (closest to OOM):\n  77 MB free  at 2026-11-30T00:53:45Z  (the cgroup's, limit not in this CSV; host 18210 MB free)\n"), "{got}");
        // 22 GiB of RAM: the toolchain's default, and every row is below it.
        assert!(
            got.contains("\nsamples below 4096 MB free RAM (near-OOM): 10\n"),
            "{got}"
        );
        assert!(
            got.contains("thresholds: near-OOM < 4096 MiB (toolchain default)"),
            "{got}"
        );
        assert!(
        got.contains(
            "\nCGROUP HEADROOM: min 77 MiB left under the memory limit  at 2026-11-30T00:53:45Z\n"
        ),
        "{got}"
    );
        let mut s = Summary::new(None, None);
        CsvRows::new()
            .feed(old.as_bytes(), &mut |r| s.observe(r))
            .unwrap();
        let mut j = Text::new();
        s.render_json(&mut j).unwrap();
        assert!(j.contains(",\"peak_mem\":{\"mem_used_mb\":3790,\"mem_avail_mb\":77,\"bound_by\":\"cgroup\",\"cg_mem_limit_mb\":null,\"host_mem_used_mb\":3790,\"host_mem_avail_mb\":18210,\"iso\""), "{j}");
    }

    /// The cgroup binds in some rows and the host in others: each line takes
    /// the row with the extreme binding figure, and names what bound there.
    #[test]
    fn host_and_cgroup_may_take_turns() {
        let mut s = Summary::new(None, None);
        // (host used, host avail, cgroup avail) on a 4000 MiB host in a 2 GiB cgroup.
        for (i, (used, avail, cg)) in [(1000, 3000, 1500), (3800, 200, 300), (2000, 2000, 400)]
            .into_iter()
            .enumerate()
        {
            let mut r = Row::empty(100 + i as u64);
            (r.mem_used_mb, r.mem_avail_mb) = (used, avail);
            (r.ext.cg_mem_avail_mb, r.ext.cg_mem_limit_mb) = (Some(cg), Some(2048));
            s.observe(&r);
        }
        let mut t = Text::new();
        s.render(&mut t).unwrap();
        // Row 2: the host binds (200 < 300); its use, 3800 MB, is the peak.
        assert!(
        t.contains(
            "\nPEAK MEMORY USE:\n  3800 MB used  (only 200 MB available)  at 1970-01-01T00:01:41Z\n"
        ),
        "{t}"
    );
        assert!(
            t.contains(
                "\nMIN MEMORY AVAILABLE (closest to OOM):\n  200 MB free  at 1970-01-01T00:01:41Z\n"
            ),
            "{t}"
        );
        // 1/8 of the 2048 MiB limit; 200 is below it.
        assert!(
            t.contains("samples below 256 MB free RAM (near-OOM): 1\n"),
            "{t}"
        );
        assert!(t.contains("\nmemory that binds: the cgroup's available memory (below MemAvailable) in 2 of 3 samples, MemAvailable in the other 1\n"), "{t}");
        let mut j = Text::new();
        s.render_json(&mut j).unwrap();
        assert!(j.contains(",\"min_mem_avail\":{\"mem_avail_mb\":200,\"bound_by\":\"host\",\"cg_mem_limit_mb\":2048,\"host_mem_avail_mb\":200,\"iso\""), "{j}");
        assert!(j.contains(",\"mem_bound_by_cgroup_samples\":2,"), "{j}");
    }

    /// Rows written as `record` writes them, then summarized from the
    /// CSV, as `summarize` does.
    fn summarize_rows(rows: &[Row]) -> (std::string::String, std::string::String) {
        let mut csv = std::string::String::from(crate::tick::row::columns::HEADER_FULL);
        for r in rows {
            let mut out = heapless::Vec::new();
            r.format(false, &mut out).unwrap();
            csv.push_str(std::str::from_utf8(&out).unwrap());
        }
        let mut s = Summary::new(None, None);
        CsvRows::new()
            .feed(csv.as_bytes(), &mut |r| s.observe(r))
            .unwrap();
        let (mut t, mut j) = (Text::new(), Text::new());
        s.render(&mut t).unwrap();
        s.render_json(&mut j).unwrap();
        (t.as_str().into(), j.as_str().into())
    }

    /// Two rows of an idle sampler on a busy host whose kernel counted 5
    /// OOM kills (3 of them before the first row).
    fn busy_host_rows() -> [Row; 2] {
        let mut a = Row::empty(1_796_000_000);
        a.load1 = crate::tick::row::Decimal::parse(b"7.10").unwrap();
        a.cpu_pct = 93;
        a.mem_avail_mb = 20000;
        a.ext.oom_kills = Some(0);
        let mut b = a.clone();
        b.epoch += 5;
        b.elapsed_s = 5;
        b.ext.oom_kills = Some(2);
        [a, b]
    }

    #[test]
    fn in_a_container_the_load_cpu_and_host_oom_count_are_said_to_be_the_hosts() {
        // A memory limit that binds: in a container, its own count unread.
        let mut rows = busy_host_rows();
        for r in &mut rows {
            r.ext.cg_mem_limit_mb = Some(1024);
            r.ext.cg_mem_avail_mb = Some(900);
        }
        let (t, j) = summarize_rows(&rows);
        assert!(
            t.contains(
                "   PEAK CPU: 93%  (both the host's: work beside this container counts too)\n"
            ),
            "{t}"
        );
        assert!(t.contains("\nkernel OOM-kill events: 2  (the host's: this container's own count is not in the CSV)\n"), "{t}");
        assert!(
            j.contains(",\"oom_kills\":2,\"in_container\":true,\"container_oom_kills\":null,"),
            "{j}"
        );
        // Outside a container: as the toolchain wrote them.
        let (t, j) = summarize_rows(&busy_host_rows());
        assert!(t.contains("   PEAK CPU: 93%\n"), "{t}");
        assert!(t.contains("\nkernel OOM-kill events: 2\n"), "{t}");
        assert!(
            j.contains(",\"oom_kills\":2,\"in_container\":false,\"container_oom_kills\":null,"),
            "{j}"
        );
    }

    #[test]
    fn the_containers_own_oom_count_is_the_one_counted_and_reaches_it_through_the_csv() {
        // No memory limit (a CPU-limited container): cg_oom_kills alone
        // says the rows were sampled in one.
        let mut rows = busy_host_rows();
        rows[0].ext.cg_oom_kills = Some(0);
        rows[1].ext.cg_oom_kills = Some(1);
        let (t, j) = summarize_rows(&rows);
        assert!(t.contains("\nkernel OOM-kill events: 1  (this container's: its memory cgroup's oom_kill; the host's: 2)\n"), "{t}");
        assert!(t.contains("PEAK CPU: 93%  (both the host's"), "{t}");
        assert!(
            j.contains(",\"oom_kills\":2,\"in_container\":true,\"container_oom_kills\":1,"),
            "{j}"
        );
        // What scripts grep reads the container's number.
        let line = t
            .lines()
            .find(|l| l.starts_with("kernel OOM-kill events: "))
            .unwrap();
        assert_eq!(line.split_whitespace().nth(3), Some("1"));
    }

    #[test]
    fn json_names_the_limit_that_binds() {
        let mut s = Summary::new(None, None);
        CsvRows::new()
            .feed(CGROUP_1G, &mut |r| s.observe(r))
            .unwrap();
        let mut j = Text::new();
        s.render_json(&mut j).unwrap();
        assert!(j.contains(",\"peak_mem\":{\"mem_used_mb\":947,\"mem_avail_mb\":77,\"bound_by\":\"cgroup\",\"cg_mem_limit_mb\":1024,\"host_mem_used_mb\":3790,\"host_mem_avail_mb\":18210,\"iso\":\"2026-11-30T00:53:45Z\""), "{j}");
        assert!(j.contains(",\"min_mem_avail\":{\"mem_avail_mb\":77,\"bound_by\":\"cgroup\",\"cg_mem_limit_mb\":1024,\"host_mem_avail_mb\":18210,\"iso\":\"2026-11-30T00:53:45Z\""), "{j}");
        assert!(j.contains(",\"mem_bound_by_cgroup_samples\":10,"), "{j}");
        assert!(j.contains(",\"near_oom\":{\"below_mb\":128,\"from\":\"scaled\",\"scaled_from_ram_mb\":null,\"scaled_from_cgroup_limit_mb\":1024,\"samples\":2}"), "{j}");
        assert!(
            j.contains(",\"min_cgroup_avail\":{\"cg_mem_avail_mb\":77,\"cg_mem_limit_mb\":1024,"),
            "{j}"
        );
        // Without a cgroup: the host's, said to be the host's.
        let mut s = Summary::new(None, None);
        CsvRows::new()
            .feed(HOST_BOUND, &mut |r| s.observe(r))
            .unwrap();
        let mut j = Text::new();
        s.render_json(&mut j).unwrap();
        assert!(j.contains(",\"min_mem_avail\":{\"mem_avail_mb\":10,\"bound_by\":\"host\",\"cg_mem_limit_mb\":null,\"host_mem_avail_mb\":10,"), "{j}");
        assert!(j.contains(",\"near_oom\":{\"below_mb\":475,\"from\":\"scaled\",\"scaled_from_ram_mb\":3800,\"scaled_from_cgroup_limit_mb\":null,\"samples\":3}"), "{j}");
    }
}
