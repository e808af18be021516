//! Worker sizing (`actions --remote --worker-cores C --worker-mem SIZE`):
//! how many of these actions a worker of that size runs at once, by the
//! rule of `jobs --from` ([`crate::report::fit::measured_jobs`]: jobs ×
//! peak ≤ 0.9 × memory, and one job per core), from each action's peak
//! (the p99 and the largest RSS, never an average) and its cores (the p90
//! and the largest); and the actions that alone do not fit it.
//!
//! # References
//! SPEC.md "Job-count model (`jobs`)" and "Per-action usage from a remote
//! action cache" (Buildbarn's RSS is the largest process; BuildBuddy's the
//! whole action).

use std::string::String;
use std::vec::Vec;

use serde_json::{Value, json};

use super::action::RssScope;
use super::report_rows::{Figures, ID_CELL, LISTED, cell, fixed, report_id, shown_centi, text_id};
use crate::followed::figures::gib_centi_of_bytes;
use crate::report::fit::{MEASURED_SHARE_PCT, measured_jobs};

/// Bytes in a MiB.
const MIB: u64 = 1 << 20;

/// A worker's size, as `--worker-cores` and `--worker-mem` give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Worker {
    /// Cores (CPUs) of the worker; 0 counts as 1.
    pub cores: u32,
    /// Memory of the worker, bytes.
    pub mem_bytes: u64,
}

/// An action that alone does not fit the worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooBig {
    /// Its id ([`super::report_rows::report_id`]).
    pub id: String,
    /// Its id as the text shows it ([`super::report_rows::text_id`]).
    pub text_id: String,
    /// Its category; empty when unknown.
    pub category: String,
    /// Its peak memory, bytes, when larger than [`mem_limit_bytes`] of the
    /// worker's memory (0 at once by memory).
    pub rss_bytes: Option<u64>,
    /// Its cores, hundredths, when more than the worker's cores (0 at
    /// once by cores: one job per core).
    pub cores_centi: Option<u64>,
}

/// The answer for one worker size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizing {
    /// The worker asked about.
    pub worker: Worker,
    /// Actions with a memory figure.
    pub rss_actions: usize,
    /// Of them, the largest-process figures (rusage: Buildbarn).
    pub largest_process: usize,
    /// Nearest-rank p99 of the peaks, bytes.
    pub p99_rss_bytes: Option<u64>,
    /// The largest peak, bytes.
    pub max_rss_bytes: Option<u64>,
    /// Actions with cores (CPU and wall time).
    pub core_actions: usize,
    /// Nearest-rank p90 of the cores, hundredths.
    pub p90_cores_centi: Option<u64>,
    /// The most cores, hundredths.
    pub max_cores_centi: Option<u64>,
    /// At once by memory at the p99 peak (may be 0: not even one fits).
    pub jobs_p99_rss: Option<u64>,
    /// At once by memory at the largest peak.
    pub jobs_max_rss: Option<u64>,
    /// At once by cores at the p90 (an action counts at least one core).
    pub jobs_p90_cores: Option<u64>,
    /// At once by cores at the most.
    pub jobs_max_cores: Option<u64>,
    /// Actions that alone do not fit, largest RSS first.
    pub too_big: Vec<TooBig>,
}

/// Nearest-rank `pct` percentile of `v` (sorted here); `None` when empty.
pub fn percentile(v: &mut [u64], pct: u64) -> Option<u64> {
    v.sort_unstable();
    let n = u64::try_from(v.len()).ok()?;
    let rank = (n * pct).div_ceil(100).max(1);
    v.get(usize::try_from(rank - 1).ok()?).copied()
}

/// Jobs of `peak` bytes in `mem` bytes by [`measured_jobs`] (MiB, peak
/// rounded up).
fn jobs_by_mem(mem: u64, peak: u64) -> u64 {
    measured_jobs(mem / MIB, 1, peak.div_ceil(MIB))
}

/// The most memory one action may peak at on a worker of `mem` bytes,
/// bytes: [`MEASURED_SHARE_PCT`] % of it in whole MiB, as [`jobs_by_mem`]
/// counts (an action fits alone exactly when it gives at least one job).
pub fn mem_limit_bytes(mem: u64) -> u64 {
    (mem / MIB).saturating_mul(MEASURED_SHARE_PCT) / 100 * MIB
}

/// Jobs of `centi` hundredths of a core each on `cores` cores; an action
/// counts at least one core (the `jobs` rule: one job per core).
fn jobs_by_cores(cores: u32, centi: u64) -> u64 {
    u64::from(cores.max(1)) * 100 / centi.max(100)
}

/// Sizes a worker for the actions `figs` (those with no figure are left
/// out of what they lack).
pub fn size(figs: &[Figures<'_>], worker: Worker) -> Sizing {
    let mut rss: Vec<u64> = figs.iter().filter_map(|f| f.rss().map(|r| r.0)).collect();
    let mut cores: Vec<u64> = figs.iter().filter_map(Figures::cores_centi).collect();
    let largest_process = figs
        .iter()
        .filter(|f| f.rss().and_then(|r| r.1) == Some(RssScope::LargestProcess))
        .count();
    let p99 = percentile(&mut rss, 99);
    let p90c = percentile(&mut cores, 90);
    let max_rss = rss.last().copied();
    let max_c = cores.last().copied();
    // Alone too big exactly when the at-once rule gives it 0 jobs.
    let mut too_big: Vec<TooBig> = figs
        .iter()
        .filter_map(|f| {
            let r = f
                .rss()
                .map(|r| r.0)
                .filter(|&b| jobs_by_mem(worker.mem_bytes, b) == 0);
            let c = f
                .cores_centi()
                .filter(|&c| jobs_by_cores(worker.cores, c) == 0);
            (r.is_some() || c.is_some()).then(|| TooBig {
                id: report_id(f.named),
                text_id: text_id(f.named),
                category: f.named.category.clone(),
                rss_bytes: r,
                cores_centi: c,
            })
        })
        .collect();
    too_big.sort_by_key(|t| core::cmp::Reverse(t.rss_bytes));
    Sizing {
        worker,
        rss_actions: rss.len(),
        largest_process,
        p99_rss_bytes: p99,
        max_rss_bytes: max_rss,
        core_actions: cores.len(),
        p90_cores_centi: p90c,
        max_cores_centi: max_c,
        jobs_p99_rss: p99.map(|p| jobs_by_mem(worker.mem_bytes, p)),
        jobs_max_rss: max_rss.map(|p| jobs_by_mem(worker.mem_bytes, p)),
        jobs_p90_cores: p90c.map(|c| jobs_by_cores(worker.cores, c)),
        jobs_max_cores: max_c.map(|c| jobs_by_cores(worker.cores, c)),
        too_big,
    }
}

/// `min(by cores, by memory)` as `jobs` takes it, at least 1; cores alone
/// (one per core) when neither figure is known.
fn at_once(cores: u32, by_cores: Option<u64>, by_mem: Option<u64>) -> u64 {
    let c = by_cores.unwrap_or(u64::from(cores.max(1)));
    by_mem.map_or(c, |m| c.min(m)).max(1)
}

impl Sizing {
    /// Actions at once on the worker by the p99 peak and the p90 cores.
    pub fn typical(&self) -> u64 {
        at_once(self.worker.cores, self.jobs_p90_cores, self.jobs_p99_rss)
    }

    /// Actions at once by the largest peak and the most cores.
    pub fn worst(&self) -> u64 {
        at_once(self.worker.cores, self.jobs_max_cores, self.jobs_max_rss)
    }

    /// Appends the text block to `out`.
    pub fn render(&self, out: &mut String) {
        let w = self.worker;
        let usable = mem_limit_bytes(self.worker.mem_bytes);
        out.push_str(&std::format!(
            "\nworker sizing: {} cores, {} GiB ({} % for the actions' peaks: {} GiB)\n",
            w.cores.max(1),
            fixed(gib_centi_of_bytes(w.mem_bytes), 100),
            MEASURED_SHARE_PCT,
            fixed(gib_centi_of_bytes(usable), 100),
        ));
        let actions = |k: usize| std::format!("{k} action{}", if k == 1 { "" } else { "s" });
        let n = |v: Option<u64>| v.map_or_else(|| String::from("-"), |v| std::format!("{v}"));
        let gib = |v: Option<u64>| {
            v.map_or_else(|| String::from("-"), |b| shown_centi(gib_centi_of_bytes(b)))
        };
        let cores = |v: Option<u64>| v.map_or_else(|| String::from("-"), shown_centi);
        if self.rss_actions > 0 {
            out.push_str(&std::format!(
                "  memory ({}): p99 RSS {} GiB -> {} at once; max RSS {} GiB -> {} at once\n",
                actions(self.rss_actions),
                gib(self.p99_rss_bytes),
                n(self.jobs_p99_rss),
                gib(self.max_rss_bytes),
                n(self.jobs_max_rss),
            ));
        } else {
            out.push_str("  memory: no action has a memory figure (the worker measures none): sized by cores only\n");
        }
        if self.core_actions > 0 {
            out.push_str(&std::format!(
                "  cores ({}): p90 {} cores -> {} at once; max {} cores -> {} at once\n",
                actions(self.core_actions),
                cores(self.p90_cores_centi),
                n(self.jobs_p90_cores),
                cores(self.max_cores_centi),
                n(self.jobs_max_cores),
            ));
        }
        out.push_str(&std::format!(
            "  runs at once: {} (p99 RSS, p90 cores); {} when the largest come together\n",
            self.typical(),
            self.worst()
        ));
        if let Some(note) = self.floor_note() {
            out.push_str(note);
        }
        if self.largest_process > 0 {
            out.push_str("  RSS here is the largest single process of an action (Buildbarn rusage): an action of several processes peaks higher\n");
        }
        self.render_too_big(out);
    }

    /// The note when memory, cores or both gave 0 at once (floored to 1),
    /// naming which.
    fn floor_note(&self) -> Option<&'static str> {
        let zero = |a: Option<u64>, b: Option<u64>| a == Some(0) || b == Some(0);
        let mem = zero(self.jobs_p99_rss, self.jobs_max_rss);
        let cores = zero(self.jobs_p90_cores, self.jobs_max_cores);
        match (mem, cores) {
            (true, false) => Some(
                "  (0 by memory: one such action alone passes 90 % of the memory; 1 is the floor, as for jobs)\n",
            ),
            (false, true) => Some(
                "  (0 by cores: one such action alone uses more cores than the worker has; 1 is the floor, as for jobs)\n",
            ),
            (true, true) => Some(
                "  (0 by memory and by cores: such actions alone pass 90 % of the memory, or use more cores than the worker has; 1 is the floor, as for jobs)\n",
            ),
            (false, false) => None,
        }
    }

    /// The actions that alone do not fit, for [`Sizing::render`].
    fn render_too_big(&self, out: &mut String) {
        out.push_str(&std::format!(
            "  actions that alone do not fit: {}\n",
            self.too_big.len()
        ));
        for t in self.too_big.iter().take(LISTED) {
            let mut why = Vec::new();
            if let Some(b) = t.rss_bytes {
                why.push(std::format!(
                    "RSS {} GiB > {} % of {} GiB = {} GiB",
                    shown_centi(gib_centi_of_bytes(b)),
                    MEASURED_SHARE_PCT,
                    fixed(gib_centi_of_bytes(self.worker.mem_bytes), 100),
                    fixed(
                        gib_centi_of_bytes(mem_limit_bytes(self.worker.mem_bytes)),
                        100
                    )
                ));
            }
            if let Some(c) = t.cores_centi {
                why.push(std::format!(
                    "{} cores > {}",
                    shown_centi(c),
                    self.worker.cores.max(1)
                ));
            }
            let cat = if t.category.is_empty() {
                String::new()
            } else {
                std::format!(" [{}]", cell(&t.category, ID_CELL))
            };
            let id = &t.text_id;
            out.push_str(&std::format!("    {id}{cat}: {}\n", why.join(", ")));
        }
        if self.too_big.len() > LISTED {
            out.push_str(&std::format!(
                "    and {} more\n",
                self.too_big.len() - LISTED
            ));
        }
    }

    /// The same as a JSON object (bytes as integers, cores with 2
    /// decimals; null where no action gave the figure).
    pub fn to_json(&self) -> Value {
        let cores = |v: Option<u64>| v.map(|c| c as f64 / 100.0);
        json!({
            "worker_cores": self.worker.cores.max(1),
            "worker_mem_bytes": self.worker.mem_bytes,
            "usable_pct": MEASURED_SHARE_PCT,
            "rss_actions": self.rss_actions,
            "rss_largest_process_actions": self.largest_process,
            "p99_rss_bytes": self.p99_rss_bytes,
            "max_rss_bytes": self.max_rss_bytes,
            "at_once_by_p99_rss": self.jobs_p99_rss,
            "at_once_by_max_rss": self.jobs_max_rss,
            "core_actions": self.core_actions,
            "p90_cores": cores(self.p90_cores_centi),
            "max_cores": cores(self.max_cores_centi),
            "at_once_by_p90_cores": self.jobs_p90_cores,
            "at_once_by_max_cores": self.jobs_max_cores,
            "at_once": self.typical(),
            "at_once_worst": self.worst(),
            "too_big": self.too_big.iter().map(|t| json!({
                "id": t.id,
                "category": if t.category.is_empty() { Value::Null } else { Value::from(t.category.as_str()) },
                "max_rss_bytes": t.rss_bytes,
                "cores": cores(t.cores_centi),
            })).collect::<Vec<_>>(),
        })
    }
}
