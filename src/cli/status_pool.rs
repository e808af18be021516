//! `status --pool DIR`: the builds sharing a memory pool, read once (the
//! pool's leases, judged against the status snapshot's MemTotal, and the
//! per-job peaks it remembers) and rendered as the screen's block or the
//! JSON's `pool` object.

use headroom::govern::jobserver::budget_file::BUDGET_NAME;
use headroom::govern::jobserver::lease::reserved_mb;
use headroom::plan::status::snapshot::Snapshot;

use super::messages::Fail;
use super::messages::shown;
use super::pool::{NotCounted, Peeked, Remembered, peek_pool};

/// The status of pool DIR as `status` shows it: its leases, read once.
pub struct PoolStatus {
    /// The directory as given.
    dir: String,
    /// Its leases that count, the per-job peaks it remembers, and the
    /// files it did not count.
    peeked: Peeked,
}

impl PoolStatus {
    /// Reads pool `dir`'s leases; a lease claiming more growth than the
    /// snapshot's MemTotal is not counted (no MemTotal: none is absurd).
    ///
    /// # Errors
    /// One line when DIR cannot be used as a pool (as `run --pool` would
    /// refuse it).
    pub fn read(dir: String, snap: &Snapshot<'_>) -> Result<PoolStatus, Fail> {
        let total_kib = snap
            .mem
            .as_ref()
            .map_or(u64::MAX, |m| m.meminfo.mem_total_kib);
        let peeked = peek_pool(&dir, total_kib)?;
        Ok(PoolStatus { dir, peeked })
    }

    /// The pool's part of `status`'s output: the screen's [`block`] or,
    /// for `--json`, the status object's last member `,"pool":`[`json`].
    ///
    /// [`block`]: PoolStatus::block
    /// [`json`]: PoolStatus::json
    pub fn part(&self, json: bool) -> String {
        if json {
            format!(",\"pool\":{}", self.json())
        } else {
            self.block()
        }
    }

    /// The screen's block: the builds sharing the pool, a line each, the
    /// per-job peaks remembered, a line per run id (its heaviest jobs,
    /// `KEY PEAK MiB`), then the files it did not count.
    pub fn block(&self) -> String {
        let Peeked {
            leases,
            job_peaks,
            not_counted,
            budget_mb,
        } = &self.peeked;
        let mut out = format!("\nPOOL {}: {} build(s)\n", self.dir, leases.len());
        if let Some(mb) = budget_mb {
            out.push_str(&format!(
                "  budget {mb} MiB (set in {}/{BUDGET_NAME}): its builds share it, whatever else they see\n",
                self.dir
            ));
        }
        for l in leases.iter() {
            out.push_str(&format!(
                "  {}: {} job(s) ({} of them paused), {} allowed of {}; peak {} MiB per job, compilers hold {} MiB, reserves {} MiB\n",
                l.run.as_str(),
                l.running,
                l.paused.len(),
                l.allowed,
                l.cap,
                l.peak_mb,
                l.held_mb,
                l.growth_mb
            ));
        }
        if !leases.is_empty() {
            out.push_str(&format!(
                "  growth reserved in all: {} MiB\n",
                reserved_mb(leases.iter())
            ));
        }
        for r in job_peaks {
            out.push_str(&remembered_line(r));
        }
        for NotCounted { file, why } in not_counted {
            out.push_str(&format!("  {file}: {why}\n"));
        }
        out
    }

    /// The same figures as [`PoolStatus::block`], as one JSON object:
    /// `{"dir":…,"builds":N,"budget_mib":M or null,"growth_reserved_mib":M,
    /// "leases":[{"run":…,"jobs_running":N,"jobs_paused":N,"jobs_allowed":N,
    /// "jobs_cap":N,"peak_mib_per_job":M,"compilers_hold_mib":M,
    /// "reserves_mib":M},…],"job_peaks":[{"run":…,"jobs":N,
    /// "others_mib":M,"bad_lines":N,"heaviest":[{"key":…,"peak_mib":M},…]},…],
    /// "not_counted":[{"file":…,"why":…},…]}`.
    pub fn json(&self) -> String {
        let Peeked {
            leases,
            job_peaks,
            not_counted,
            budget_mb,
        } = &self.peeked;
        let budget = budget_mb.map_or("null".to_string(), |mb| mb.to_string());
        let mut out = format!(
            "{{\"dir\":{},\"builds\":{},\"budget_mib\":{budget},\"growth_reserved_mib\":{},\"leases\":[",
            json_string(&self.dir),
            leases.len(),
            reserved_mb(leases.iter())
        );
        for (i, l) in leases.iter().enumerate() {
            out.push_str(&format!(
                "{}{{\"run\":{},\"jobs_running\":{},\"jobs_paused\":{},\"jobs_allowed\":{},\"jobs_cap\":{},\"peak_mib_per_job\":{},\"compilers_hold_mib\":{},\"reserves_mib\":{}}}",
                if i == 0 { "" } else { "," },
                json_string(l.run.as_str()),
                l.running,
                l.paused.len(),
                l.allowed,
                l.cap,
                l.peak_mb,
                l.held_mb,
                l.growth_mb
            ));
        }
        out.push_str("],\"job_peaks\":[");
        for (i, r) in job_peaks.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&remembered_json(r));
        }
        out.push_str("],\"not_counted\":[");
        for (i, NotCounted { file, why }) in not_counted.iter().enumerate() {
            out.push_str(&format!(
                "{}{{\"file\":{},\"why\":{}}}",
                if i == 0 { "" } else { "," },
                json_string(file),
                json_string(why)
            ));
        }
        out.push_str("]}");
        out
    }
}

/// The screen's line for one run id's remembered per-job peaks.
fn remembered_line(r: &Remembered) -> String {
    let mut line = format!("  run {}: {} job peak(s) remembered", r.run, r.jobs);
    for (i, (key, mb)) in r.heaviest.iter().enumerate() {
        let lead = if i == 0 { "; heaviest: " } else { ", " };
        line.push_str(&format!("{lead}{} {mb} MiB", shown(key)));
    }
    if r.others_mb > 0 {
        line.push_str(&format!(
            "; {} MiB the heaviest of the jobs not kept",
            r.others_mb
        ));
    }
    if r.bad_lines > 0 {
        line.push_str(&format!("; {} bad line(s) skipped", r.bad_lines));
    }
    line.push('\n');
    line
}

/// One run id's remembered per-job peaks as a JSON object.
fn remembered_json(r: &Remembered) -> String {
    let mut out = format!(
        "{{\"run\":{},\"jobs\":{},\"others_mib\":{},\"bad_lines\":{},\"heaviest\":[",
        json_string(&r.run),
        r.jobs,
        r.others_mb,
        r.bad_lines
    );
    for (i, (key, mb)) in r.heaviest.iter().enumerate() {
        out.push_str(&format!(
            "{}{{\"key\":{},\"peak_mib\":{mb}}}",
            if i == 0 { "" } else { "," },
            json_string(key)
        ));
    }
    out.push_str("]}");
    out
}

/// `s` as a JSON string, through the report layer's one escaper.
fn json_string(s: &str) -> String {
    let mut t = heapless::String::<8192>::new();
    if headroom::report::json_write::string(&mut t, s).is_err() {
        t.clear();
        let _ = headroom::report::json_write::string(&mut t, "?");
    }
    t.as_str().to_string()
}
