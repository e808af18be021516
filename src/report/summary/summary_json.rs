//! The summary as one JSON object (`summarize --json`): the same figures
//! as the text of [`super`], key by key.

use ufmt::{uWrite, uwrite};

use crate::followed::figures::stage_str;
use crate::kernel::throttled;
use crate::report::json_write;
use crate::tick::held::Held;
use crate::tick::row::columns::{
    CG_MEM_AVAIL_MB, CG_MEM_LIMIT_MB, Cell, Column, DISK_AVAIL_GB, LOAD1, SWAP_USED_MB,
    TMP_AVAIL_MB, TMP_PCT, Unit, ZRAM_RAM_MB, ZRAM_STORED_MB,
};
use crate::tick::row::{BufferFull, Row};

use super::binding::Binding;
use super::why_slow::{Finding, Fit, ThrashKind, Worst};
use super::{Summary, Text, stage_of};

impl Summary {
    /// Renders the summary as one JSON object (`summarize --json`), for
    /// scripts: the same figures as the text, with units in the key names
    /// and `null` where the text says "unknown" or shows no section.
    ///
    /// # Errors
    /// [`BufferFull`] when `out` is full, which [`TEXT_CAP`](super::TEXT_CAP) rules out.
    pub fn render_json(&self, out: &mut Text) -> Result<(), BufferFull> {
        let mut held = Held::new(out);
        let Ok(()) = self.json_to(&mut held);
        held.finish().map_err(|_| BufferFull)
    }

    /// The JSON object, its keys in a fixed order, step by step.
    fn json_to<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        self.json_toolchain(w)?;
        self.json_thresholds(w)?;
        self.json_build(w)?;
        self.json_own(w)?;
        self.json_slow(w)?;
        self.json_run(w)?;
        uwrite!(w, "}}\n")
    }

    /// `{`, the counts, the toolchain's rows (memory, swap, disk, load) and peak CPU.
    fn json_toolchain<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        uwrite!(
            w,
            "{{\"samples\":{},\"duration_s\":{},\"skipped_rows\":{},\"lost_rows\":{},\"mem_available_estimated\":{}",
            self.samples,
            self.max_elapsed,
            self.skipped,
            self.lost,
            self.mem_estimated
        )?;
        json_row(w, "peak_mem", self.peak_mem.as_ref(), |w, r| {
            let b = Binding::of(r);
            uwrite!(
                w,
                "\"mem_used_mb\":{},\"mem_avail_mb\":{},",
                b.used_mb,
                b.avail_mb
            )?;
            bound_by(w, r, b)?;
            uwrite!(
                w,
                "\"host_mem_used_mb\":{},\"host_mem_avail_mb\":{},",
                r.mem_used_mb,
                r.mem_avail_mb
            )
        })?;
        json_row(w, "min_mem_avail", self.min_avail.as_ref(), |w, r| {
            let b = Binding::of(r);
            uwrite!(w, "\"mem_avail_mb\":{},", b.avail_mb)?;
            bound_by(w, r, b)?;
            uwrite!(w, "\"host_mem_avail_mb\":{},", r.mem_avail_mb)
        })?;
        uwrite!(
            w,
            ",\"mem_bound_by_cgroup_samples\":{}",
            self.cg_bound_samples
        )?;
        let swap = self.peak_swap.as_ref().filter(|r| r.swap_used_mb > 0);
        json_row(w, "peak_swap", swap, |w, r| {
            column(w, &SWAP_USED_MB, r, NULL)
        })?;
        json_row(w, "min_disk", self.min_disk.as_ref(), |w, r| {
            column(w, &DISK_AVAIL_GB, r, NULL)
        })?;
        json_row(w, "peak_load", self.peak_load.as_ref(), |w, r| {
            column(w, &LOAD1, r, NULL)
        })?;
        uwrite!(w, ",\"peak_cpu_pct\":")?;
        json_write::opt(w, self.peak_cpu)?;
        Ok(())
    }

    /// The near-OOM and low-disk thresholds with their sample counts, the OOM kills.
    fn json_thresholds<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let (near, low) = self.thresholds();
        uwrite!(
            w,
            ",\"near_oom\":{{\"below_mb\":{},\"from\":\"{}\",\"scaled_from_ram_mb\":",
            near.value(),
            near.source()
        )?;
        json_write::opt(w, near.scaled_from())?;
        uwrite!(w, ",\"scaled_from_cgroup_limit_mb\":")?;
        json_write::opt(w, near.scaled_from_cgroup())?;
        uwrite!(w, ",\"samples\":")?;
        json_write::opt(w, self.near_oom_samples_known())?;
        uwrite!(w, "}}")?;
        uwrite!(
            w,
            ",\"low_disk\":{{\"below_mb\":{},\"below_gb\":{},\"from\":\"{}\",\"scaled_from_disk_mb\":",
            low.value(),
            self.low_disk_gb_line(),
            low.source()
        )?;
        json_write::opt(w, low.scaled_from())?;
        uwrite!(w, ",\"samples\":")?;
        json_write::opt(w, self.low_disk_samples_known())?;
        uwrite!(w, "}}")?;
        match self.oom_kills {
            Some(k) => uwrite!(w, ",\"oom_kills\":{}", k)?,
            None => uwrite!(w, ",\"oom_kills\":null")?,
        }
        // peak_load, peak_cpu_pct and oom_kills are the host's; in a
        // container, its own OOM count beside them.
        uwrite!(w, ",\"in_container\":{}", self.in_container())?;
        uwrite!(w, ",\"container_oom_kills\":")?;
        json_write::opt(w, self.container_oom_kills())?;
        Ok(())
    }

    /// The peak compiler rows (host-wide, the build's) and the `build` object.
    fn json_build<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        json_row(w, "peak_compiler_rss", self.peak_rss.as_ref(), |w, r| {
            uwrite!(w, "\"rss_mb\":{},\"comm\":", r.ext.peak_rss_mb.unwrap_or(0))?;
            json_write::string(w, r.ext.peak_rss_comm.as_str())?;
            uwrite!(w, ",")
        })?;
        json_row(
            w,
            "build_peak_compiler_rss",
            self.peak_build_rss.as_ref(),
            |w, r| {
                uwrite!(
                    w,
                    "\"rss_mb\":{},\"comm\":",
                    r.ext.build_peak_rss_mb.unwrap_or(0)
                )?;
                json_write::string(w, r.ext.build_peak_rss_comm.as_str())?;
                uwrite!(w, ",")
            },
        )?;
        match self.build {
            Some(scope) => {
                uwrite!(
                    w,
                    ",\"build\":{{\"scope\":\"{}\",\"oom_kills\":",
                    scope.word()
                )?;
                let oom = self.build_oom();
                json_write::opt(w, oom.exact())?;
                let range = oom.range();
                uwrite!(w, ",\"oom_kills_at_least\":")?;
                json_write::opt(w, range.map(|r| r.0))?;
                uwrite!(w, ",\"oom_kills_at_most\":")?;
                json_write::opt(w, range.map(|r| r.1))?;
                uwrite!(w, ",\"oom_kills_counted\":")?;
                let mut how = heapless::String::<512>::new();
                // 512 bytes hold the longest wording (about 230 bytes); a
                // piece that did not fit would be left out, not half written.
                let _ = oom.render_how(&mut how, scope);
                json_write::string(w, how.as_str())?;
                uwrite!(w, ",\"no_cgroup_because\":")?;
                match scope.no_cgroup_because() {
                    "" => uwrite!(w, "null")?,
                    why => json_write::string(w, why)?,
                }
                uwrite!(w, ",\"cgroup_peak_mb\":")?;
                json_write::opt(w, self.build_peak_charge_mb)?;
                uwrite!(w, ",\"anon_peak_mb\":")?;
                json_write::opt(w, self.peak_build_anon_mb)?;
                uwrite!(w, "}}")?;
            }
            None => uwrite!(w, ",\"build\":null")?,
        }
        Ok(())
    }

    /// headroom's own rows: cgroup headroom, zram, /tmp, the OOM-kill rows.
    fn json_own<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        json_row(w, "min_cgroup_avail", self.min_cg.as_ref(), |w, r| {
            column(w, &CG_MEM_AVAIL_MB, r, ZERO)?;
            column(w, &CG_MEM_LIMIT_MB, r, NULL)
        })?;
        let zram = self
            .peak_zram
            .as_ref()
            .filter(|r| r.ext.zram_stored_mb.unwrap_or(0) > 0);
        json_row(w, "peak_zram", zram, |w, r| {
            column(w, &ZRAM_STORED_MB, r, ZERO)?;
            column(w, &ZRAM_RAM_MB, r, ZERO)
        })?;
        json_row(w, "min_tmp", self.min_tmp.as_ref(), |w, r| {
            column(w, &TMP_AVAIL_MB, r, ZERO)?;
            column(w, &TMP_PCT, r, ZERO)
        })?;
        match self.tmp_is_tmpfs {
            Some(t) => uwrite!(w, ",\"tmp_is_tmpfs\":{}", t)?,
            None => uwrite!(w, ",\"tmp_is_tmpfs\":null")?,
        }
        uwrite!(w, ",\"oom_kill_rows\":[")?;
        for (i, ev) in self.oom_rows.iter().enumerate() {
            if i > 0 {
                uwrite!(w, ",")?;
            }
            uwrite!(
                w,
                "{{\"kills\":{},\"iso\":\"{}\",\"stage\":",
                ev.kills,
                ev.iso.as_str()
            )?;
            json_write::string(w, stage_str(&ev.stage))?;
            uwrite!(w, ",\"context\":")?;
            json_write::string(w, ev.context.as_str())?;
            uwrite!(w, "}}")?;
        }
        uwrite!(w, "],\"oom_kill_rows_more\":{}", self.oom_rows_more)?;
        Ok(())
    }

    /// `"why_slow"`: WHY IT WAS SLOW's figures, whether or not the text
    /// shows the section; `null` when no row had any of its columns (a 14-
    /// or 27-column CSV). Times in seconds, rates in MiB/s with two
    /// decimals, the temperature in °C with one; each `*_minute` is the
    /// worst minute (`null` when its amount was 0 throughout). The thrash's
    /// kind (`swap`, `file`, `null` without thrashing), its time by kind,
    /// and for file-page thrash the `-j` that fits with its inputs
    /// ([`super::why_slow::Fit`]; `null` otherwise or when unknown);
    /// `disk_busy_thrash_s`: of `disk_busy_s`, the thrash's own reads;
    /// `disk_stalled_s`: seconds the build disk stalled (`disk_stalled`);
    /// `disk_busy_s` and `disk_stalled_s` are `null` when no row had the
    /// disk's figure (unknown, not 0);
    /// `disk_device`: the build disk's kind ([`crate::kernel::blockdev::Device::key`]),
    /// `null` when unknown.
    fn json_slow<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let s = self.slow();
        if !s.has_data() {
            return uwrite!(w, ",\"why_slow\":null");
        }
        uwrite!(w, ",\"why_slow\":{{\"thrashing_s\":{}", s.thrashing_s())?;
        match s.thrash_worst() {
            Some((Finding::SwapIn, m)) => minute(w, "thrashing_minute", "swap_in_mib", m)?,
            Some((Finding::Refaults, m)) => minute(w, "thrashing_minute", "refaults", m)?,
            Some((_, m)) => minute(w, "thrashing_minute", "major_faults", m)?,
            None => uwrite!(w, ",\"thrashing_minute\":null")?,
        }
        let [si, so, rd, wr] = s.peak_mibps_centi();
        let [mf, rf] = s.peak_ps();
        for (key, v) in [("peak_swap_in_mibps", si), ("peak_swap_out_mibps", so)] {
            uwrite!(w, ",\"{}\":", key)?;
            centi(w, v)?;
        }
        uwrite!(w, ",\"peak_majflt_ps\":")?;
        json_write::opt(w, mf)?;
        uwrite!(w, ",\"peak_refaults_ps\":")?;
        json_write::opt(w, rf)?;
        self.json_thrash_kind(w)?;
        uwrite!(w, ",\"disk_busy_s\":")?;
        json_write::opt(w, s.disk_busy_known_s())?;
        opt_minute(
            w,
            "disk_busy_minute",
            "busy_centi_s",
            s.worst(Finding::DiskBusy),
        )?;
        for (key, v) in [("peak_disk_read_mibps", rd), ("peak_disk_write_mibps", wr)] {
            uwrite!(w, ",\"{}\":", key)?;
            centi(w, v)?;
        }
        uwrite!(w, ",\"disk_busy_thrash_s\":{}", s.disk_busy_thrash_s())?;
        let timed = [
            (
                "throttled_s",
                s.throttled_s(),
                "throttled_minute",
                Finding::Throttled,
            ),
            (
                "under_voltage_s",
                s.under_voltage_s(),
                "under_voltage_minute",
                Finding::UnderVoltage,
            ),
            (
                "disk_stalled_s",
                s.disk_stalled_s(),
                "disk_stalled_minute",
                Finding::DiskStalled,
            ),
        ];
        for (key, secs, minute_key, f) in timed {
            uwrite!(w, ",\"{}\":", key)?;
            json_write::opt(w, secs)?;
            // No worst minute for a time that did not count (a stall
            // shorter than STALL_MIN_S).
            let worst = s.worst(f).filter(|_| secs != Some(0));
            opt_minute(w, minute_key, key, worst)?;
        }
        uwrite!(w, ",\"peak_cpu_temp\":")?;
        match (s.peak_temp(), s.peak_temp_row()) {
            (Some(t), Some((iso, stage, context))) => {
                uwrite!(w, "{{\"cpu_temp_c\":")?;
                t.write(w)?;
                uwrite!(w, ",\"iso\":\"{}\",\"stage\":", iso.as_str())?;
                json_write::string(w, stage_str(stage))?;
                uwrite!(w, ",\"context\":")?;
                json_write::string(w, context.as_str())?;
                uwrite!(w, "}}")?;
            }
            _ => uwrite!(w, "null")?,
        }
        match self.disk_device {
            Some(d) => uwrite!(w, ",\"disk_device\":\"{}\"}}", d.key()),
            None => uwrite!(w, ",\"disk_device\":null}}"),
        }
    }

    /// `why_slow`'s thrash kind, its time by kind, and the `-j` that fits
    /// file-page thrash.
    fn json_thrash_kind<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let s = self.slow();
        let kind = s.thrash_kind();
        uwrite!(w, ",\"thrash_kind\":")?;
        match kind {
            Some(k) => uwrite!(w, "\"{}\"", k.word())?,
            None => uwrite!(w, "null")?,
        }
        uwrite!(
            w,
            ",\"swap_thrashing_s\":{},\"file_thrashing_s\":{}",
            s.thrashing_kind_s(ThrashKind::Swap),
            s.thrashing_kind_s(ThrashKind::File)
        )?;
        let fit = match kind {
            Some(ThrashKind::File) => s.fit(self.sizing_peak().map(|p| p.0)),
            _ => None,
        };
        let field = |f: fn(&Fit) -> u64| fit.as_ref().map(f);
        for (key, v) in [
            ("fitting_jobs", field(|f| f.jobs)),
            ("fitting_peak_mb", field(|f| f.peak_mb)),
            ("fitting_usable_mb", field(|f| f.usable_mb)),
            ("thrash_compilers", field(|f| f.thrash_compilers)),
        ] {
            uwrite!(w, ",\"{}\":", key)?;
            json_write::opt(w, v)?;
        }
        Ok(())
    }

    /// `interrupted` (the stop signal that cut the run short and when, or
    /// `null`), then the `run`, `jobserver` and `memory_lock` objects.
    fn json_run<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        self.json_interrupted(w)?;
        self.json_command(w)?;
        self.json_jobserver(w)?;
        self.json_memory_lock(w)
    }

    /// `interrupted`: the stop signal that cut the run short and when, or
    /// `null`.
    fn json_interrupted<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        match self.partial.interrupt {
            Some(i) => {
                uwrite!(w, ",\"interrupted\":{{\"signal\":")?;
                json_write::string(
                    w,
                    crate::followed::rusage::signal_name(i.signal).unwrap_or("?"),
                )?;
                uwrite!(w, ",\"after_ms\":{}}}", i.after_ms)?;
            }
            None => uwrite!(w, ",\"interrupted\":null")?,
        }
        Ok(())
    }

    /// `run`: the command `run` followed, its times, counts and end, or
    /// `null`.
    fn json_command<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        match &self.run {
            Some((label, u)) => {
                uwrite!(w, ",\"run\":{{\"command\":")?;
                json_write::string(w, label.as_str())?;
                uwrite!(
                    w,
                    ",\"wall_ms\":{},\"user_ms\":{},\"sys_ms\":{},\"cores_centi\":{},\"max_rss_kib\":{}",
                    u.wall_ms,
                    u.user_ms,
                    u.sys_ms,
                    u.cores_centi(),
                    u.max_rss_kib
                )?;
                u.counts.write_json(w)?;
                uwrite!(w, ",")?;
                match u.end {
                    crate::followed::rusage::End::Exited(c) => {
                        uwrite!(w, "\"exit\":{},\"signal\":null}}", c)?
                    }
                    crate::followed::rusage::End::Signaled(sg) => {
                        uwrite!(w, "\"exit\":null,\"signal\":")?;
                        json_write::string(
                            w,
                            crate::followed::rusage::signal_name(sg).unwrap_or("?"),
                        )?;
                        uwrite!(w, "}}")?;
                    }
                }
            }
            None => uwrite!(w, ",\"run\":null")?,
        }
        Ok(())
    }

    /// `jobserver`: the governor's figures (`run --jobserver`), what a
    /// --jobserver CSV's columns say (`summarize`), or `null`.
    fn json_jobserver<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        match &self.jobserver {
            Some(j) => {
                uwrite!(
                    w,
                    ",\"jobserver\":{{\"cap\":{},\"jobs_min\":{},\"jobs_avg_centi\":{},\"jobs_max\":{},\"throttled_ms\":{},\"span_ms\":{},\"peak_mb\":{},\"peak_start_mb\":{},\"peak_least_mb\":{},\"peak_most_mb\":{},\"peak_from\":",
                    j.cap,
                    j.min,
                    j.avg_centi,
                    j.max,
                    j.throttled_ms,
                    j.span_ms,
                    j.peak.now_mb,
                    j.peak.start_mb,
                    j.peak.least_mb,
                    j.peak.most_mb
                )?;
                json_write::string(w, j.peak.source.name())?;
                uwrite!(w, ",\"pool\":")?;
                match &j.pool {
                    None => uwrite!(w, "null")?,
                    Some(p) => {
                        uwrite!(w, "{{\"dir\":")?;
                        json_write::string(w, p.dir.as_str())?;
                        uwrite!(w, ",\"others\":[")?;
                        for (i, o) in p.others.iter().enumerate() {
                            if i > 0 {
                                uwrite!(w, ",")?;
                            }
                            json_write::string(w, o.as_str())?;
                        }
                        uwrite!(w, "]}}")?;
                    }
                }
                match j.pausing {
                    None => uwrite!(w, ",\"pauses\":null,\"paused_ms\":null")?,
                    Some((n, ms)) => uwrite!(w, ",\"pauses\":{},\"paused_ms\":{}", n, ms)?,
                }
                match &j.per_job {
                    None => uwrite!(w, ",\"per_job\":null")?,
                    Some(p) => {
                        uwrite!(
                            w,
                            ",\"per_job\":{{\"remembered\":{},\"known\":{},\"measured\":{},\"largest_error\":",
                            p.remembered,
                            p.known,
                            p.measured
                        )?;
                        match p.largest_error {
                            None => uwrite!(w, "null}}")?,
                            Some((e, r, m)) => {
                                uwrite!(w, "{{\"key\":")?;
                                json_write::string(w, core::str::from_utf8(&p.key).unwrap_or("?"))?;
                                uwrite!(
                                    w,
                                    ",\"error_mb\":{},\"remembered_mb\":{},\"measured_mb\":{}}}}}",
                                    e,
                                    r,
                                    m
                                )?;
                            }
                        }
                    }
                }
                // What really ran, and whether the slots bound it.
                match j.seen_max {
                    None => uwrite!(w, ",\"jobs_seen_max\":null")?,
                    Some(n) => uwrite!(w, ",\"jobs_seen_max\":{}", n)?,
                }
                uwrite!(w, ",\"slots_bound\":{}}}", j.unbound().is_none())?;
            }
            None => match &self.jobs_rows {
                // `summarize` of a --jobserver CSV: what its columns say.
                Some(f) => uwrite!(
                    w,
                    ",\"jobserver\":{{\"cap\":null,\"jobs_min\":{},\"jobs_avg_centi\":{},\"jobs_max\":{},\"throttled_ms\":null,\"span_ms\":null,\"peak_mb\":null,\"peak_start_mb\":null,\"peak_least_mb\":null,\"peak_most_mb\":null,\"peak_from\":null,\"pool\":null,\"pauses\":{},\"paused_ms\":{},\"allowed_max\":{}}}",
                    f.running_min,
                    f.avg_centi(),
                    f.running_max,
                    f.pauses,
                    f.paused_ms,
                    f.allowed_max
                )?,
                None => uwrite!(w, ",\"jobserver\":null")?,
            },
        }
        Ok(())
    }

    /// `memory_lock`: whether headroom's pages were locked, and why not,
    /// or `null`.
    fn json_memory_lock<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        match self.memory_lock {
            Some(crate::tick::footprint::Lock::Locked) => {
                uwrite!(w, ",\"memory_lock\":{{\"locked\":true,\"reason\":null}}")?
            }
            Some(crate::tick::footprint::Lock::NotLocked(why)) => {
                uwrite!(w, ",\"memory_lock\":{{\"locked\":false,\"reason\":\"")?;
                why.write(w)?;
                uwrite!(w, "\"}}")?
            }
            None => uwrite!(w, ",\"memory_lock\":null")?,
        }
        Ok(())
    }
}

/// `"bound_by":"host"|"cgroup","cg_mem_limit_mb":N|null,` of a memory row:
/// which limit gave its [`Binding`], and the row's cgroup limit.
fn bound_by<W: uWrite>(w: &mut W, r: &Row, b: Binding) -> Result<(), W::Error> {
    uwrite!(w, "\"bound_by\":\"{}\",", b.by.word())?;
    column(w, &CG_MEM_LIMIT_MB, r, NULL)
}

/// What [`column`] writes for an empty field.
const NULL: &str = "null";
/// What [`column`] writes for an empty field the text shows as 0.
const ZERO: &str = "0";

/// `"<column>":<value>,` of row `r`: the key is the column's name, the
/// value its field as the CSV writes it (a number, or a string for text
/// columns), `empty` for an empty field.
fn column<W: uWrite>(w: &mut W, c: &Column, r: &Row, empty: &str) -> Result<(), W::Error> {
    uwrite!(w, "\"{}\":", c.name)?;
    match (c.write)(r) {
        Cell::Empty => uwrite!(w, "{}", empty)?,
        Cell::Int(n) => uwrite!(w, "{}", n)?,
        Cell::Text(t) | Cell::Quoted(t) if c.unit == Unit::Text => json_write::string(w, t)?,
        Cell::Text(t) | Cell::Quoted(t) => uwrite!(w, "{}", t)?,
        Cell::Tenths(t) => t.write(w)?,
        Cell::Flags(f) => {
            let mut text = [0u8; throttled::FLAGS_TEXT_LEN];
            let t = throttled::format_flags(throttled::Flags(f), &mut text);
            json_write::string(w, t.unwrap_or(""))?;
        }
    }
    uwrite!(w, ",")
}

/// `,"key":{fields…,"iso":…,"stage":…,"context":…}` or `,"key":null`.
fn json_row<W: uWrite>(
    w: &mut W,
    key: &str,
    row: Option<&Row>,
    fields: impl FnOnce(&mut W, &Row) -> Result<(), W::Error>,
) -> Result<(), W::Error> {
    uwrite!(w, ",\"{}\":", key)?;
    let Some(r) = row else {
        return uwrite!(w, "null");
    };
    uwrite!(w, "{{")?;
    fields(w, r)?;
    uwrite!(w, "\"iso\":\"{}\",\"stage\":", r.iso.as_str())?;
    json_write::string(w, stage_of(r))?;
    uwrite!(w, ",\"context\":")?;
    json_write::string(w, r.context.as_str())?;
    uwrite!(w, "}}")
}

/// Hundredths as a number with two decimals, or `null`.
fn centi<W: uWrite>(w: &mut W, v: Option<u64>) -> Result<(), W::Error> {
    match v {
        Some(c) => uwrite!(
            w,
            "{}",
            crate::tick::row::Decimal::from_centi(c).text.as_str()
        ),
        None => uwrite!(w, "null"),
    }
}

/// `,"key":{…}` of a worst minute, or `,"key":null`.
fn opt_minute<W: uWrite>(
    w: &mut W,
    key: &str,
    amount: &str,
    m: Option<&Worst>,
) -> Result<(), W::Error> {
    match m {
        Some(m) => minute(w, key, amount, m),
        None => uwrite!(w, ",\"{}\":null", key),
    }
}

/// `,"key":{"<amount>":…,"seconds":…,"from_s":…,"to_s":…,"to_iso":…,"stage":…,"context":…}`;
/// a swap-in amount in MiB with two decimals, the others whole.
fn minute<W: uWrite>(w: &mut W, key: &str, amount: &str, m: &Worst) -> Result<(), W::Error> {
    uwrite!(w, ",\"{}\":{{\"{}\":", key, amount)?;
    if amount == "swap_in_mib" {
        centi(w, Some(m.sum))?;
    } else {
        uwrite!(w, "{}", m.sum)?;
    }
    uwrite!(
        w,
        ",\"seconds\":{},\"from_s\":{},\"to_s\":{},\"to_iso\":\"{}\",\"stage\":",
        m.seconds,
        m.from_s,
        m.to_s,
        m.to_iso.as_str()
    )?;
    json_write::string(w, stage_str(&m.stage))?;
    uwrite!(w, ",\"context\":")?;
    json_write::string(w, m.context.as_str())?;
    uwrite!(w, "}}")
}
