//! The `actions --remote` report: the local `actions` table's layout
//! (its first line, buckets and figures come from
//! [`crate::report::actions::Table`]), with what only a cluster tells:
//! whose memory the RSS is, the worker of each action, where remote time
//! went (queue, input fetch, execution, upload), the actions with no
//! stored result or no usage, the actions the Buck2 logs say were killed,
//! and the worker sizing ([`super::sizing`]). Text and `--json`;
//! `--json-rows` is [`super::report_rows::render_rows`].
//!
//! # References
//! SPEC.md "Per-action usage from a remote action cache"; REAPI v2
//! `ExecutedActionMetadata` (the timestamps); signal(7) (SIGKILL is what
//! the kernel's OOM killer sends).

use std::boxed::Box;
use std::string::{String, ToString};
use std::vec::Vec;

use serde_json::{Value, json};

use super::action::{Found, Lookup, Named, Origin, RssScope};
use super::report_rows::{
    Figures, ID_CELL, LINE_CELL, LISTED, SIGNAL_CELL, WORKER_CELL, cell, figures, fixed, ns_to_ms,
    num, report_id, row_object, shown_centi, text_id,
};
use super::sizing::{Sizing, Worker, size};
use super::workers::Workers;
use crate::followed::figures::{div_round, gib_centi_of_bytes};
use crate::report::actions::{BUCKET_LABELS, BUCKET_START_MS, Table};

/// What the report shows beyond the actions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The longest actions listed (`--top`, at most
    /// [`crate::report::actions::TOP_CAP`]).
    pub top: usize,
    /// Only actions of at least this wall time are listed (`--min-wall`),
    /// ms.
    pub min_wall_ms: u64,
    /// The worker to size for (`--worker-cores`, `--worker-mem`).
    pub worker: Option<Worker>,
}

/// The report over the actions looked up.
pub struct Report<'a> {
    figs: Vec<Figures<'a>>,
    found: &'a Found,
    options: Options,
    /// The local table over the measured actions (wall and CPU known).
    table: Box<Table>,
    /// The worker containers from the Prometheus (`--prometheus`).
    workers: Option<&'a Workers>,
}

/// `std::string::String` as a `ufmt` writer, for the local table's
/// renderers.
struct Buf<'a>(&'a mut String);

impl ufmt::uWrite for Buf<'_> {
    type Error = core::convert::Infallible;
    fn write_str(&mut self, s: &str) -> Result<(), Self::Error> {
        self.0.push_str(s);
        Ok(())
    }
}

/// One phase of remote time, summed.
struct Phase<'a> {
    name: &'static str,
    actions: u64,
    total_ns: u128,
    /// The longest: its time, ns, and the action.
    max: Option<(u64, &'a Named)>,
}

/// The unit for a total of `ns`: hours from one hour up, else minutes
/// from one minute, else seconds (as the local table's first line).
fn time_unit(ns: u128) -> (u128, &'static str) {
    if ns >= 3_600_000_000_000 {
        (3_600_000_000_000, "h")
    } else if ns >= 60_000_000_000 {
        (60_000_000_000, "min")
    } else {
        (1_000_000_000, "s")
    }
}

/// The text of an optional figure: `-` when unknown.
fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| String::from("-"))
}

/// `N thing` or `N things`.
fn plural(n: usize, one: &str, many: &str) -> String {
    std::format!("{n} {}", if n == 1 { one } else { many })
}

/// "N remote spawn(s) carry(ies)", the subject of the line on remote
/// spawns with no action digest (also the CLI's when nothing is left).
pub fn no_digest_text(n: u64) -> String {
    match n {
        1 => "1 remote spawn carries".to_string(),
        n => std::format!("{n} remote spawns carry"),
    }
}

/// How a signal reads in the text: KILL named as the OOM killer's.
fn signal_text(sig: &str) -> String {
    if sig == "KILL" {
        String::from("KILL: the OOM killer's signal")
    } else {
        String::from(sig)
    }
}

impl<'a> Report<'a> {
    /// The report over `actions` (each named action with its lookup, in
    /// log order) and what else the logs found (`found.killed`,
    /// `found.local`).
    pub fn new(actions: &'a [(Named, Lookup)], found: &'a Found, options: Options) -> Report<'a> {
        let figs = figures(actions);
        let mut table = Box::new(Table::new(0, 0));
        for a in figs.iter().filter_map(Figures::to_action) {
            table.observe(&a);
        }
        Report {
            figs,
            found,
            options,
            table,
            workers: None,
        }
    }

    /// The report with the worker containers' block (`--prometheus`).
    pub fn with_workers(mut self, workers: &'a Workers) -> Report<'a> {
        self.workers = Some(workers);
        self
    }

    /// Actions looked up.
    pub fn looked_up(&self) -> usize {
        self.figs.len()
    }

    /// Actions with a stored result.
    pub fn stored(&self) -> usize {
        self.figs.iter().filter(|f| f.stored.is_some()).count()
    }

    /// Stored actions with a wall and a CPU time (the table's actions).
    pub fn measured(&self) -> usize {
        self.figs.iter().filter(|f| f.measured()).count()
    }

    /// `NOT_FOUND` answers.
    pub fn not_found(&self) -> usize {
        self.looked_up() - self.stored()
    }

    /// `auxiliary_metadata` entries of unread types, summed.
    pub fn skipped_any(&self) -> u64 {
        self.figs
            .iter()
            .filter_map(|f| f.stored)
            .map(|s| u64::from(s.skipped_any))
            .sum()
    }

    /// The worker sizing, when a worker was given.
    pub fn sizing(&self) -> Option<Sizing> {
        Some(size(&self.figs, self.options.worker?))
    }

    /// `--json-rows`: one object per action looked up.
    pub fn rows(&self) -> String {
        super::report_rows::render_rows(&self.figs)
    }

    /// Actions with a memory figure, by scope: (largest process, whole
    /// action, scope unknown).
    fn scopes(&self) -> (usize, usize, usize) {
        let mut n = (0, 0, 0);
        for f in &self.figs {
            match f.rss().map(|r| r.1) {
                Some(Some(RssScope::LargestProcess)) => n.0 += 1,
                Some(Some(RssScope::WholeAction)) => n.1 += 1,
                Some(None) => n.2 += 1,
                None => {}
            }
        }
        n
    }

    /// Stored actions that ended on a signal, in log order.
    fn signalled(&self) -> Vec<&Figures<'a>> {
        self.figs.iter().filter(|f| f.signal().is_some()).collect()
    }

    /// The longest measured actions (those the table counts) with a wall
    /// time of at least `--min-wall`, longest first (ties in log order),
    /// at most `--top`.
    fn longest(&self) -> Vec<&Figures<'a>> {
        let mut v: Vec<&Figures<'a>> = self
            .figs
            .iter()
            .filter(|f| {
                f.measured()
                    && f.wall_ns()
                        .is_some_and(|w| ns_to_ms(w) >= self.options.min_wall_ms)
            })
            .collect();
        v.sort_by_key(|f| core::cmp::Reverse(f.wall_ns()));
        v.truncate(self.options.top);
        v
    }

    /// Stored actions with at least one phase's timestamps, and of them
    /// those the table leaves out (not measured): "where remote time
    /// went" counts every stored action with timestamps.
    fn timed(&self) -> (usize, usize) {
        let timed: Vec<&Figures<'a>> = self
            .figs
            .iter()
            .filter(|f| {
                f.stored.is_some_and(|s| {
                    let t = &s.times;
                    t.wall_ns()
                        .or(t.queued_ns())
                        .or(t.input_fetch_ns())
                        .or(t.upload_ns())
                        .is_some()
                })
            })
            .collect();
        let unmeasured = timed.iter().filter(|f| !f.measured()).count();
        (timed.len(), unmeasured)
    }

    /// Where remote time went: queued, input fetch, execution, upload.
    fn phases(&self) -> [Phase<'a>; 4] {
        type Pick = fn(&Figures<'_>) -> Option<u64>;
        let picks: [(&'static str, Pick); 4] = [
            ("queued", |f| f.stored?.times.queued_ns()),
            ("input fetch", |f| f.stored?.times.input_fetch_ns()),
            ("execution", |f| f.wall_ns()),
            ("output upload", |f| f.stored?.times.upload_ns()),
        ];
        picks.map(|(name, pick)| {
            let mut p = Phase {
                name,
                actions: 0,
                total_ns: 0,
                max: None,
            };
            for f in &self.figs {
                let Some(ns) = pick(f) else { continue };
                p.actions += 1;
                p.total_ns += u128::from(ns);
                if p.max.is_none_or(|(m, _)| ns > m) {
                    p.max = Some((ns, f.named));
                }
            }
            p
        })
    }

    /// True when a Buck2 log was read (so "killed: 0" means something).
    fn read_buck2_log(&self) -> bool {
        self.figs
            .iter()
            .any(|f| matches!(f.named.origin, Origin::Buck2Log | Origin::Buck2Json))
            || !self.found.killed.is_empty()
    }

    /// The text report (see the module documentation).
    pub fn text(&self) -> String {
        let mut out = String::new();
        out.push_str(&std::format!(
            "{} of {} {} a stored result",
            self.stored(),
            plural(self.looked_up(), "action", "actions"),
            if self.looked_up() == 1 { "has" } else { "have" }
        ));
        let Ok(()) = self.table.render_rates(&mut Buf(&mut out));
        if !self.found.truncated.is_empty() {
            out.push_str(&std::format!(
                "PARTIAL: {} cut short mid-record (its build still running, or killed): only the actions before the cut: {}\n",
                plural(self.found.truncated.len(), "log", "logs"),
                self.found.cut_logs()
            ));
        }
        self.unmeasured_text(&mut out);
        self.scope_line(&mut out);
        let Ok(()) = self.table.render_buckets(&mut Buf(&mut out));
        self.signals_text(&mut out);
        self.longest_text(&mut out);
        self.phases_text(&mut out);
        self.counts_text(&mut out);
        self.killed_text(&mut out);
        if let Some(s) = self.sizing() {
            s.render(&mut out);
        }
        if let Some(w) = self.workers {
            w.render(&self.figs, self.options.worker, &mut out);
        }
        out
    }

    /// The stored actions the table's figures leave out: with no CPU time
    /// the worker measured, or with one but no execution timestamps.
    fn unmeasured_text(&self, out: &mut String) {
        let stored = || self.figs.iter().filter(|f| f.stored.is_some());
        let no_usage = stored().filter(|f| f.cpu_ns().is_none()).count();
        let no_wall = stored()
            .filter(|f| f.cpu_ns().is_some() && f.wall_ns().is_none())
            .count();
        if no_usage > 0 {
            out.push_str(&std::format!(
                "{} stored with no usage the worker measured (no Buildbarn, BuildBuddy or Buildfarm message: a client upload, or a worker that measures nothing): not in the table's figures\n",
                plural(no_usage, "action", "actions")
            ));
        }
        let absurd = self.figs.iter().filter(|f| f.absurd()).count();
        if absurd > 0 {
            out.push_str(&std::format!(
                "{} with figures past any machine (RSS over 1 PiB, or over 10^6 cores: the server's garbage?): the table counts them at that\n",
                plural(absurd, "action", "actions")
            ));
        }
        if no_wall > 0 {
            out.push_str(&std::format!(
                "{} stored with usage but no execution timestamps (no wall time): not in the table's figures\n",
                plural(no_wall, "action", "actions")
            ));
        }
    }

    /// Whose memory the RSS figures are.
    fn scope_line(&self, out: &mut String) {
        let (proc, whole, unknown) = self.scopes();
        let line = match (proc, whole, unknown) {
            (0, 0, 0) => String::from(
                "RSS: no memory figures (the worker measures none, e.g. Buildfarm): the RSS columns read 0",
            ),
            (_, 0, 0) => String::from(
                "RSS: the largest single process of each action (Buildbarn, wait4 rusage): an action of several processes peaks higher",
            ),
            (0, _, 0) => String::from(
                "RSS: the whole action, every process together (BuildBuddy, its cgroup)",
            ),
            _ => {
                let mut l = std::format!(
                    "RSS: the largest process for {} (Buildbarn rusage), the whole action for {whole} (BuildBuddy cgroup)",
                    plural(proc, "action", "actions")
                );
                if unknown > 0 {
                    l.push_str(&std::format!(", unknown for {unknown}"));
                }
                l
            }
        };
        out.push_str(&line);
        out.push('\n');
    }

    /// `actions that ended on a signal: K` and the first [`LISTED`].
    fn signals_text(&self, out: &mut String) {
        let sig = self.signalled();
        out.push_str(&std::format!(
            "\nactions that ended on a signal: {}\n",
            sig.len()
        ));
        for f in sig.iter().take(LISTED) {
            let worker = f
                .worker()
                .map(|w| std::format!(" on {}", cell(w, WORKER_CELL)))
                .unwrap_or_default();
            out.push_str(&std::format!(
                "  {} ({}){}\n",
                text_id(f.named),
                signal_text(&cell(f.signal().unwrap_or_default(), SIGNAL_CELL)),
                worker
            ));
        }
        if sig.len() > LISTED {
            out.push_str(&std::format!("  and {} more\n", sig.len() - LISTED));
        }
    }

    /// The longest actions' table.
    fn longest_text(&self, out: &mut String) {
        let longest = self.longest();
        if longest.is_empty() {
            return;
        }
        out.push_str(&std::format!("\nlongest {}", longest.len()));
        if self.options.min_wall_ms > 0 {
            out.push_str(&std::format!(
                " with wall >= {} s",
                fixed(self.options.min_wall_ms, 1000)
            ));
        }
        out.push_str(":\n");
        let rows: Vec<[String; 8]> = longest.iter().map(|f| longest_cells(f)).collect();
        let head = [
            "id", "category", "wall s", "cores", "RSS GiB", "RSS of", "signal", "worker",
        ];
        let mut widths = head.map(str::len);
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[&str]| {
            let mut s = String::new();
            for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
                let pad = w.saturating_sub(c.chars().count());
                match i {
                    2..=4 => s.push_str(&std::format!("{}{c}  ", " ".repeat(pad))),
                    _ => s.push_str(&std::format!("{c}{}  ", " ".repeat(pad))),
                }
            }
            s.truncate(s.trim_end().len());
            s.push('\n');
            s
        };
        out.push_str(&line(&head));
        for r in &rows {
            out.push_str(&line(&r.each_ref().map(String::as_str)));
        }
    }

    /// Where remote time went.
    fn phases_text(&self, out: &mut String) {
        let phases = self.phases();
        if phases.iter().all(|p| p.actions == 0) {
            return;
        }
        let (unit_ns, unit) = time_unit(phases.iter().map(|p| p.total_ns).max().unwrap_or(0));
        let total_head = std::format!("total {unit}");
        let mut rows = std::vec![[
            String::from("phase"),
            String::from("actions"),
            total_head,
            String::from("max s"),
            String::from("longest"),
        ]];
        for p in &phases {
            let (max, who) = match p.max {
                Some((ns, n)) => (
                    fixed(div_round(u128::from(ns), 100_000_000), 10),
                    text_id(n),
                ),
                None => (String::from("-"), String::new()),
            };
            rows.push([
                String::from(p.name),
                std::format!("{}", p.actions),
                fixed(div_round(p.total_ns * 100, unit_ns), 100),
                max,
                who,
            ]);
        }
        // The usual widths; wider when a server's timestamps are absurd,
        // so the columns never run together.
        let mut widths = [13, 8, 10, 9];
        for r in &rows {
            for (i, w) in widths.iter_mut().enumerate() {
                // Two blanks before a figure; "actions" has its one.
                let min = r[i].chars().count() + [0, 1, 2, 2][i];
                *w = (*w).max(min);
            }
        }
        let (timed, unmeasured) = self.timed();
        out.push_str(&std::format!(
            "\nwhere remote time went ({} with timestamps",
            plural(timed, "action", "actions")
        ));
        if unmeasured > 0 {
            out.push_str(&std::format!(
                ", {unmeasured} of them not in the table's figures"
            ));
        }
        out.push_str("):\n");
        for [a, b, c, d, e] in &rows {
            let [wa, wb, wc, wd] = widths;
            let s = std::format!("  {a:<wa$}{b:>wb$}{c:>wc$}{d:>wd$}  {e}");
            out.push_str(s.trim_end());
            out.push('\n');
        }
    }

    /// The counts that are not in the table.
    fn counts_text(&self, out: &mut String) {
        out.push_str(&std::format!(
            "\nno stored result (NOT_FOUND: evicted, or the action failed; failed actions are not cached): {}\n",
            self.not_found()
        ));
        if self.skipped_any() > 0 {
            out.push_str(&std::format!(
                "auxiliary_metadata entries of types not read (request metadata, vendor messages): {}\n",
                self.skipped_any()
            ));
        }
        if self.found.local > 0 {
            out.push_str(&std::format!(
                "actions the logs show ran locally (not looked up): {}\n",
                self.found.local
            ));
        }
        if self.found.no_digest > 0 {
            out.push_str(&std::format!(
                "{} no action digest (Bazel before 7 writes none): counted, not looked up\n",
                no_digest_text(self.found.no_digest)
            ));
        }
    }

    /// The actions a Buck2 log says were killed.
    fn killed_text(&self, out: &mut String) {
        if !self.read_buck2_log() {
            return;
        }
        let k = &self.found.killed;
        out.push_str(&std::format!(
            "\nkilled, from the Buck2 logs (failed, so never cached): {}\n",
            k.len()
        ));
        for a in k.iter().take(LISTED) {
            let cat = if a.category.is_empty() {
                String::new()
            } else {
                std::format!(" [{}]", cell(&a.category, ID_CELL))
            };
            out.push_str(&std::format!(
                "  {}{}: {}\n",
                cell(&a.id, ID_CELL),
                cat,
                cell(&a.line, LINE_CELL)
            ));
        }
        if k.len() > LISTED {
            out.push_str(&std::format!("  and {} more\n", k.len() - LISTED));
        }
    }

    /// `--json`: the local report object's keys (`actions`, `wall_s`,
    /// `cpu_s`, `avg_cores`, `buckets`, `signals`, `longest`) with the
    /// remote ones beside them (see the README for the whole shape).
    pub fn json(&self) -> String {
        let mut s = self.json_value().to_string();
        s.push('\n');
        s
    }

    /// `--json` when there is no table to show (the logs name no remote
    /// action, or none has a stored result): the same object, its counts
    /// as they are, and `reason`, the line said on standard error.
    pub fn json_with_reason(&self, reason: &str) -> String {
        let mut v = self.json_value();
        if let Some(o) = v.as_object_mut() {
            o.insert("reason".into(), Value::from(reason));
        }
        let mut s = v.to_string();
        s.push('\n');
        s
    }

    /// The `--json` object.
    fn json_value(&self) -> Value {
        let t = &self.table;
        let (proc, whole, unknown) = self.scopes();
        let sig = self.signalled();
        let longest = self.longest();
        let mut v = json!({
            "looked_up": self.looked_up(),
            "stored": self.stored(),
            "not_found": self.not_found(),
            "no_usage": self.stored() - self.measured(),
            "skipped_any": self.skipped_any(),
            "local_actions": self.found.local,
            "remote_no_digest": self.found.no_digest,
            "truncated_logs": self.found.truncated,
            "records_before_cut": self.found.records_before_cut.iter()
                .map(|(f, n)| (f.clone(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "actions": t.actions(),
            "wall_s": num(t.wall_ms(), 3),
            "cpu_s": num(t.cpu_ms(), 3),
            // No wall time measured: no average (unknown, not 0).
            "avg_cores": (t.wall_ms() > 0).then(|| num(t.avg_cores_centi(), 2)),
            "rss_scope": {"largest_process": proc, "whole_action": whole, "unknown": unknown},
            "buckets": self.buckets_json(),
            "signals": {
                "actions": sig.len(),
                "listed": sig.iter().take(LISTED).map(|f| json!({
                    "id": report_id(f.named), "signal": f.signal(), "worker": f.worker(),
                })).collect::<Vec<_>>(),
                "more": sig.len().saturating_sub(LISTED),
            },
            "longest": {
                "top": self.options.top,
                "min_wall_s": num(self.options.min_wall_ms, 3),
                "actions": longest.iter().map(|f| row_object(f)).collect::<Vec<_>>(),
            },
            "remote_time": self.phases().iter().map(|p| json!({
                "phase": p.name,
                "actions": p.actions,
                "total_s": num(div_round(p.total_ns, 1_000_000), 3),
                "max_s": p.max.map(|(ns, _)| num(ns_to_ms(ns), 3)),
                "max_id": p.max.map(|(_, n)| report_id(n)),
            })).collect::<Vec<_>>(),
            "killed": self.found.killed.iter().map(|k| json!({
                "id": k.id, "category": k.category, "line": k.line,
            })).collect::<Vec<_>>(),
            "sizing": self.sizing().map(|s| s.to_json()),
        });
        if let (Some(w), Some(o)) = (self.workers, v.as_object_mut()) {
            o.insert("workers".into(), w.to_json(&self.figs));
            o.insert("prometheus".into(), w.query_json());
        }
        v
    }

    /// The buckets as the local `--json` has them.
    fn buckets_json(&self) -> Vec<Value> {
        let t = &self.table;
        let mut out = Vec::new();
        for (i, label) in BUCKET_LABELS.iter().enumerate() {
            let Some(b) = t.bucket(i) else { continue };
            let empty = b.actions == 0;
            out.push(json!({
                "wall_time": label,
                "min_wall_s": BUCKET_START_MS.get(i).map(|&ms| ms / 1000),
                "max_wall_s": BUCKET_START_MS.get(i + 1).map(|&ms| ms / 1000),
                "actions": b.actions,
                "wall_s": num(b.wall_ms, 3),
                "cpu_s": num(b.cpu_ms, 3),
                "pct_of_wall": num(div_round(u128::from(b.wall_ms) * 1000, u128::from(t.wall_ms())), 1),
                "avg_cores": (!empty).then(|| num(b.avg_cores_centi, 2)),
                "p90_cores": (!empty).then(|| num(b.p90_cores_centi, 2)),
                "max_rss_mb": b.max_rss_kib / 1024,
                "max_rss_gib": num(gib_centi_of_bytes(b.max_rss_kib.saturating_mul(1024)), 2),
            }));
        }
        out
    }
}

/// The longest table's cells of one action.
fn longest_cells(f: &Figures<'_>) -> [String; 8] {
    let rss = f.rss();
    [
        text_id(f.named),
        cell(&f.named.category, ID_CELL),
        or_dash(
            f.wall_ns()
                .map(|w| fixed(div_round(u128::from(w), 100_000_000), 10)),
        ),
        or_dash(f.cores_centi().map(shown_centi)),
        or_dash(rss.map(|(b, _)| shown_centi(gib_centi_of_bytes(b)))),
        or_dash(rss.and_then(|(_, s)| s).map(|s| {
            String::from(match s {
                RssScope::LargestProcess => "process",
                RssScope::WholeAction => "action",
            })
        })),
        f.signal().map(|s| cell(s, SIGNAL_CELL)).unwrap_or_default(),
        f.worker().map(|w| cell(w, WORKER_CELL)).unwrap_or_default(),
    ]
}

#[cfg(test)]
mod tests {
    //! Unit tests of `remote::report`, `remote::report_rows` and
    //! `remote::sizing`, on synthetic lookups of every shape SPEC.md "Per-action
    //! usage from a remote action cache" lists: Buildbarn's POSIXResourceUsage
    //! (user/system split, RSS of the largest process, `KILL` without `SIG`,
    //! exit code -1 beside it), BuildBuddy's UsageStats (`cpu_nanos` only,
    //! `peak_memory_bytes` of the whole cgroup, `virtual_execution_duration`),
    //! Buildfarm's `usage` map (`cpu.usage_usec` only, no memory), a result
    //! stored with no metadata, and NOT_FOUND. The figures are chosen so each
    //! expected number can be checked by hand (see the comments).

    use std::boxed::Box;
    use std::string::{String, ToString};
    use std::vec;
    use std::vec::Vec;

    use serde_json::Value;

    use super::*;
    use crate::remote::action::{Digest, Killed, Source, Stored, Times, Usage};
    use crate::remote::report_rows::{figures, render_rows};
    use crate::remote::sizing::{percentile, size};
    use crate::report::actions_json::ROW_KEYS;

    const S: i128 = 1_000_000_000;
    const GIB: u64 = 1 << 30;

    fn named(id: &str, category: &str, hash: &str) -> Named {
        Named {
            id: id.into(),
            category: category.into(),
            digest: Digest {
                hash: hash.into(),
                size_bytes: 142,
            },
            origin: Origin::Buck2Log,
        }
    }

    fn stored(exit_code: i32, worker: &str, times: Times, usage: Option<Usage>) -> Lookup {
        Lookup::Stored(Box::new(Stored {
            exit_code,
            worker: worker.into(),
            times,
            usage,
            skipped_any: 1,
        }))
    }

    /// Queued at 100 s, worker start 110 s, inputs 110-111 s, execution
    /// 111-116 s (5 s), upload 116-116.5 s.
    fn buildbarn_times() -> Times {
        Times {
            queued: Some(100 * S),
            worker_start: Some(110 * S),
            input_fetch_start: Some(110 * S),
            input_fetch_completed: Some(111 * S),
            execution_start: Some(111 * S),
            execution_completed: Some(116 * S),
            output_upload_start: Some(116 * S),
            output_upload_completed: Some(116 * S + S / 2),
            ..Times::default()
        }
    }

    /// The five shapes, in log order:
    /// - big.cpp, Buildbarn: wall 5 s, user 2 s + sys 0.5 s (0.50 cores),
    ///   3 GiB largest process, KILL, exit -1, worker w1;
    /// - mid.cpp, BuildBuddy: virtual 4 s (execution timestamps say 9 s, the
    ///   virtual duration wins), cpu 8 s (2.00 cores), 1 GiB whole action;
    /// - small.c, Buildfarm: wall 2 s, cpu 1 s, no memory;
    /// - local.c: stored with no metadata;
    /// - gone.c: NOT_FOUND.
    fn shapes() -> Vec<(Named, Lookup)> {
        let bb = Usage {
            source: Some(Source::Buildbarn),
            user_ns: Some(2_000_000_000),
            sys_ns: Some(500_000_000),
            max_rss_bytes: Some(3 * GIB),
            rss_scope: Some(RssScope::LargestProcess),
            termination_signal: Some("KILL".into()),
            ..Usage::default()
        };
        let buddy = Usage {
            source: Some(Source::BuildBuddy),
            cpu_total_ns: Some(8_000_000_000),
            max_rss_bytes: Some(GIB),
            rss_scope: Some(RssScope::WholeAction),
            ..Usage::default()
        };
        let farm = Usage {
            source: Some(Source::Buildfarm),
            cpu_total_ns: Some(1_000_000_000),
            ..Usage::default()
        };
        let buddy_times = Times {
            execution_start: Some(200 * S),
            execution_completed: Some(209 * S),
            virtual_execution: Some(4 * S),
            ..Times::default()
        };
        let farm_times = Times {
            execution_start: Some(300 * S),
            execution_completed: Some(302 * S),
            ..Times::default()
        };
        vec![
            (
                named("//app:big (big.cpp)", "cxx_compile", "aa"),
                stored(-1, "w1", buildbarn_times(), Some(bb)),
            ),
            (
                named("//app:mid (mid.cpp)", "cxx_compile", "bb"),
                stored(0, "buddy-7", buddy_times, Some(buddy)),
            ),
            (
                named("//lib:small (small.c)", "c_compile", "cc"),
                stored(0, "farm-2", farm_times, Some(farm)),
            ),
            (
                named("//lib:local", "genrule", "dd"),
                stored(0, "", Times::default(), None),
            ),
            (named("//lib:gone", "cxx_link", "ee"), Lookup::NotFound),
        ]
    }

    fn found() -> Found {
        Found {
            actions: Vec::new(),
            killed: vec![Killed {
                id: "//app:huge (huge.cpp)".into(),
                category: "cxx_compile".into(),
                line: "g++: fatal error: Killed signal terminated program cc1plus".into(),
            }],
            local: 7,
            no_digest: 3,
            truncated: Vec::new(),
            records_before_cut: Vec::new(),
        }
    }

    fn options(top: usize, min_wall_ms: u64) -> Options {
        Options {
            top,
            min_wall_ms,
            worker: None,
        }
    }

    #[test]
    fn first_line_counts_stored_and_sums_only_the_measured() {
        let a = shapes();
        let f = found();
        let r = Report::new(&a, &f, options(10, 0));
        let text = r.text();
        // Wall 5 + 4 + 2 = 11 s; cpu 2.5 + 8 + 1 = 11.5 s; 11.5 / 11 = 1.045…
        // → 1.05 (half up).
        assert_eq!(
            text.lines().next(),
            Some(
                "4 of 5 actions have a stored result | wall 11.00 s | cpu 11.50 s | average 1.05 cores while running"
            ),
            "{text}"
        );
        assert!(
        text.contains("\n1 action stored with no usage the worker measured (no Buildbarn, BuildBuddy or Buildfarm message: a client upload, or a worker that measures nothing): not in the table's figures\n"),
        "{text}"
    );
        assert_eq!(
            (r.looked_up(), r.stored(), r.measured(), r.not_found()),
            (5, 4, 3, 1)
        );
        assert_eq!(r.skipped_any(), 4);
    }

    #[test]
    fn text_names_the_scope_the_signal_the_worker_and_the_killed() {
        let a = shapes();
        let f = found();
        let text = Report::new(&a, &f, options(10, 0)).text();
        for want in [
            "RSS: the largest process for 1 action (Buildbarn rusage), the whole action for 1 (BuildBuddy cgroup)\n",
            "actions that ended on a signal: 1\n  //app:big (big.cpp) (KILL: the OOM killer's signal) on w1\n",
            "no stored result (NOT_FOUND: evicted, or the action failed; failed actions are not cached): 1",
            "actions the logs show ran locally (not looked up): 7\n3 remote spawns carry no action digest (Bazel before 7 writes none): counted, not looked up\n",
            "auxiliary_metadata entries of types not read (request metadata, vendor messages): 4",
            "killed, from the Buck2 logs (failed, so never cached): 1\n  //app:huge (huge.cpp) [cxx_compile]: g++: fatal error: Killed signal terminated program cc1plus\n",
        ] {
            assert!(text.contains(want), "missing {want:?} in:\n{text}");
        }
        // Buckets: 5.000 s is in 5-20 s (the local table's rule), 4 and 2 s
        // in 0-5 s; the Buildbarn action's 3 GiB is the 5-20 s bucket's max.
        assert!(text.contains("       0-5 s        2"), "{text}");
        assert!(
            text.contains("      5-20 s        1       45.5       0.50       0.50         3.00"),
            "{text}"
        );
    }

    #[test]
    fn longest_is_ordered_by_wall_and_follows_top_and_min_wall() {
        let a = shapes();
        let f = found();
        let text = Report::new(&a, &f, options(2, 0)).text();
        let at = text.find("longest 2:\n").expect("longest heading");
        let lines: Vec<&str> = text[at..].lines().skip(1).take(3).collect();
        let head: Vec<&str> = lines[0]
            .split("  ")
            .filter(|c| !c.is_empty())
            .map(str::trim)
            .collect();
        assert_eq!(
            head,
            [
                "id", "category", "wall s", "cores", "RSS GiB", "RSS of", "signal", "worker"
            ]
        );
        // big: 5.0 s, 0.50 cores, 3.00 GiB of a process; mid: 4.0 s (the
        // virtual duration, not the 9 s of its timestamps).
        let big: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            big,
            [
                "//app:big",
                "(big.cpp)",
                "cxx_compile",
                "5.0",
                "0.50",
                "3.00",
                "process",
                "KILL",
                "w1"
            ]
        );
        let mid: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            mid,
            [
                "//app:mid",
                "(mid.cpp)",
                "cxx_compile",
                "4.0",
                "2.00",
                "1.00",
                "action",
                "buddy-7"
            ]
        );
        let text = Report::new(&a, &f, options(10, 4500)).text();
        assert!(text.contains("longest 1 with wall >= 4.500 s:\n"), "{text}");
    }

    #[test]
    fn remote_time_sums_each_phase_and_names_the_longest() {
        let a = shapes();
        let f = found();
        let text = Report::new(&a, &f, options(10, 0)).text();
        // Queued 10 s (only the Buildbarn action has the timestamps);
        // execution 5 + 4 + 2 = 11 s, longest 5.0 s.
        assert!(
            text.contains("  queued              1     10.00     10.0  //app:big (big.cpp)\n"),
            "{text}"
        );
        assert!(
            text.contains("  execution           3     11.00      5.0  //app:big (big.cpp)\n"),
            "{text}"
        );
        assert!(
            text.contains("  output upload       1      0.50      0.5"),
            "{text}"
        );
    }

    /// An action stored with execution_metadata (worker, timestamps: REAPI
    /// `ExecutedActionMetadata`) but no usage message the report reads: the
    /// header and the longest list leave it out, "where remote time went"
    /// counts it and says so.
    #[test]
    fn an_action_with_timestamps_and_no_usage_is_only_in_remote_time() {
        let mut a = shapes();
        a.push((
            named("//lib:bare (bare.c)", "c_compile", "ff"),
            stored(
                0,
                "w9",
                Times {
                    execution_start: Some(400 * S),
                    execution_completed: Some(430 * S),
                    ..Times::default()
                },
                None,
            ),
        ));
        let f = found();
        let text = Report::new(&a, &f, options(10, 0)).text();
        // The header: the 3 measured actions' 11 s, not the bare one's 30 s.
        assert!(
            text.starts_with("5 of 6 actions have a stored result | wall 11.00 s |"),
            "{text}"
        );
        assert!(
            text.contains("\n2 actions stored with no usage the worker measured"),
            "{text}"
        );
        assert!(text.contains("longest 3:\n"), "{text}");
        assert!(!text.contains("//lib:bare (bare.c)  c_compile"), "{text}");
        // Execution: 5 + 4 + 2 + 30 = 41 s, over 4 actions with timestamps.
        assert!(
        text.contains("where remote time went (4 actions with timestamps, 1 of them not in the table's figures):\n"),
        "{text}"
    );
        assert!(
            text.contains("  execution           4     41.00     30.0  //lib:bare (bare.c)\n"),
            "{text}"
        );
        let v: Value =
            serde_json::from_str(&Report::new(&a, &f, options(10, 0)).json()).expect("json");
        assert_eq!(v["longest"]["actions"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn the_scope_line_says_unknown_only_when_some_are() {
        let mut a = shapes();
        let f = found();
        let text = Report::new(&a, &f, options(10, 0)).text();
        assert!(!text.contains("unknown for"), "{text}");
        // A figure with no scope (a worker message that does not say whose).
        if let Lookup::Stored(s) = &mut a[2].1 {
            let u = s.usage.as_mut().unwrap();
            u.max_rss_bytes = Some(GIB);
        }
        let text = Report::new(&a, &f, options(10, 0)).text();
        assert!(
            text.contains("(BuildBuddy cgroup), unknown for 1\n"),
            "{text}"
        );
    }

    #[test]
    fn remote_time_totals_round_as_each_action_does() {
        // Four inputs fetched in 0.9999999 s each: every row says 1.000 s
        // (rounded half up to ms), so the total says 4.000, not 3.999.
        let times = Times {
            input_fetch_start: Some(110 * S + 100),
            input_fetch_completed: Some(111 * S),
            ..buildbarn_times()
        };
        let a: Vec<(Named, Lookup)> = ["aa", "bb", "cc", "dd"]
            .iter()
            .map(|h| (named(h, "c", h), stored(0, "w", times, None)))
            .collect();
        let f = found();
        let v: Value = serde_json::from_str(&Report::new(&a, &f, options(10, 0)).json()).unwrap();
        assert_eq!(v["remote_time"][1]["phase"], "input fetch");
        assert_eq!(v["remote_time"][1]["max_s"], 1.0);
        assert_eq!(v["remote_time"][1]["total_s"], 4.0);
    }

    #[test]
    fn json_rows_give_every_shape_its_keys_and_nulls() {
        let a = shapes();
        let rows: Value = serde_json::from_str(&render_rows(&figures(&a))).unwrap();
        let rows = rows.as_array().unwrap();
        assert_eq!(rows.len(), 5);
        for r in rows {
            let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
            let mut want: Vec<&str> = ROW_KEYS.to_vec();
            want.sort_unstable();
            assert_eq!(keys, want);
        }
        let g = |i: usize, k: &str| rows[i][k].clone();
        // Buildbarn.
        assert_eq!(g(0, "digest"), "aa/142");
        assert_eq!(g(0, "stored"), true);
        assert_eq!(
            (g(0, "wall_s"), g(0, "user_s"), g(0, "sys_s")),
            (5.0.into(), 2.0.into(), 0.5.into())
        );
        assert_eq!((g(0, "cpu_s"), g(0, "cores")), (2.5.into(), 0.5.into()));
        assert_eq!(g(0, "max_rss_bytes"), 3 * GIB);
        assert_eq!(
            (g(0, "max_rss_gib"), g(0, "rss_scope")),
            (3.0.into(), "largest_process".into())
        );
        assert_eq!(
            (g(0, "termination_signal"), g(0, "exit_code")),
            ("KILL".into(), (-1).into())
        );
        assert_eq!(
            (g(0, "worker"), g(0, "source")),
            ("w1".into(), "buildbarn".into())
        );
        assert_eq!(
            (g(0, "queued_s"), g(0, "input_fetch_s"), g(0, "upload_s")),
            (10.0.into(), 1.0.into(), 0.5.into())
        );
        // BuildBuddy: a total CPU only, so no split.
        assert_eq!(
            (g(1, "user_s"), g(1, "sys_s"), g(1, "cpu_s")),
            (Value::Null, Value::Null, 8.0.into())
        );
        assert_eq!(
            (g(1, "wall_s"), g(1, "cores"), g(1, "rss_scope")),
            (4.0.into(), 2.0.into(), "whole_action".into())
        );
        assert_eq!(
            (g(1, "source"), g(1, "termination_signal")),
            ("buildbuddy".into(), Value::Null)
        );
        // Buildfarm: no memory.
        assert_eq!(
            (g(2, "max_rss_bytes"), g(2, "rss_scope"), g(2, "source")),
            (Value::Null, Value::Null, "buildfarm".into())
        );
        assert_eq!(g(2, "cpu_s"), 1.0);
        // Stored, no usage: stored, exit code known, nothing measured.
        assert_eq!(
            (
                g(3, "stored"),
                g(3, "exit_code"),
                g(3, "wall_s"),
                g(3, "source")
            ),
            (true.into(), 0.into(), Value::Null, Value::Null)
        );
        assert_eq!(g(3, "worker"), Value::Null);
        // NOT_FOUND.
        assert_eq!(
            (g(4, "stored"), g(4, "exit_code"), g(4, "category")),
            (false.into(), Value::Null, "cxx_link".into())
        );
    }

    #[test]
    fn json_rows_keep_the_key_order_and_an_empty_list_is_an_empty_array() {
        let a = shapes();
        let text = render_rows(&figures(&a[..1]));
        let keys: Vec<usize> = ROW_KEYS
            .iter()
            .map(|k| text.find(&std::format!("\"{k}\":")).unwrap())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert_eq!(render_rows(&[]), "]\n".replace(']', "[]"));
    }

    #[test]
    fn json_report_has_the_local_keys_and_the_remote_ones() {
        let a = shapes();
        let f = found();
        let v: Value = serde_json::from_str(&Report::new(&a, &f, options(10, 0)).json()).unwrap();
        assert_eq!(
            (
                v["looked_up"].clone(),
                v["stored"].clone(),
                v["not_found"].clone()
            ),
            (5.into(), 4.into(), 1.into())
        );
        assert_eq!(
            (
                v["no_usage"].clone(),
                v["actions"].clone(),
                v["local_actions"].clone()
            ),
            (1.into(), 3.into(), 7.into())
        );
        assert_eq!(v["remote_no_digest"], 3);
        assert_eq!(
            (
                v["wall_s"].clone(),
                v["cpu_s"].clone(),
                v["avg_cores"].clone()
            ),
            (11.0.into(), 11.5.into(), 1.05.into())
        );
        assert_eq!(v["buckets"].as_array().unwrap().len(), 5);
        assert_eq!(v["buckets"][1]["actions"], 1);
        assert_eq!(v["buckets"][1]["max_rss_gib"], 3.0);
        assert_eq!(v["buckets"][4]["max_wall_s"], Value::Null);
        assert_eq!(v["buckets"][4]["avg_cores"], Value::Null);
        assert_eq!(v["rss_scope"]["whole_action"], 1);
        assert_eq!(v["signals"]["listed"][0]["signal"], "KILL");
        assert_eq!(v["longest"]["actions"][0]["termination_signal"], "KILL");
        assert_eq!(v["longest"]["actions"].as_array().unwrap().len(), 3);
        assert_eq!(v["remote_time"][0]["total_s"], 10.0);
        assert_eq!(v["killed"][0]["category"], "cxx_compile");
        assert_eq!(v["sizing"], Value::Null);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(percentile(&mut v, 99), Some(99));
        assert_eq!(percentile(&mut v, 90), Some(90));
        assert_eq!(percentile(&mut v, 100), Some(100));
        assert_eq!(percentile(&mut [5], 99), Some(5));
        assert_eq!(percentile(&mut [], 99), None);
    }

    /// `n` Buildbarn actions of `rss` bytes and `cores` cores (wall 10 s).
    fn many(n: usize, rss: u64, cores_centi: u64, id: &str) -> Vec<(Named, Lookup)> {
        (0..n)
            .map(|i| {
                let u = Usage {
                    source: Some(Source::Buildbarn),
                    user_ns: Some(cores_centi * 100_000_000),
                    sys_ns: Some(0),
                    max_rss_bytes: Some(rss),
                    rss_scope: Some(RssScope::LargestProcess),
                    ..Usage::default()
                };
                let t = Times {
                    virtual_execution: Some(10 * S),
                    ..Times::default()
                };
                (
                    named(&std::format!("{id}{i}"), "cxx_compile", "ab"),
                    stored(0, "w", t, Some(u)),
                )
            })
            .collect()
    }

    #[test]
    fn sizing_follows_the_jobs_rule_on_the_p99_and_the_max() {
        // 100 actions of 1 GiB at 1.5 cores, one of 3 GiB: p99 is the 100th
        // of 101 (nearest rank ceil(99.99)) = 1 GiB. 16 GiB = 16384 MiB, 90 %
        // = 14745: 14 of 1024 MiB, 4 of 3072. Cores: 8 × 100 / 150 = 5.
        let mut a = many(100, GIB, 150, "a");
        a.extend(many(1, 3 * GIB, 150, "big"));
        let figs = figures(&a);
        let s = size(
            &figs,
            Worker {
                cores: 8,
                mem_bytes: 16 * GIB,
            },
        );
        assert_eq!(
            (s.p99_rss_bytes, s.max_rss_bytes),
            (Some(GIB), Some(3 * GIB))
        );
        assert_eq!((s.jobs_p99_rss, s.jobs_max_rss), (Some(14), Some(4)));
        assert_eq!((s.p90_cores_centi, s.jobs_p90_cores), (Some(150), Some(5)));
        assert_eq!((s.typical(), s.worst()), (5, 4));
        assert!(s.too_big.is_empty());
        let mut text = String::new();
        s.render(&mut text);
        assert!(
            text.contains("runs at once: 5 (p99 RSS, p90 cores); 4 when the largest come together"),
            "{text}"
        );
        assert!(
            text.contains("largest single process of an action (Buildbarn rusage)"),
            "{text}"
        );
        // Under one core an action still takes one: 8 on 8 cores.
        let b = many(10, GIB, 40, "light");
        assert_eq!(
            size(
                &figures(&b),
                Worker {
                    cores: 8,
                    mem_bytes: 64 * GIB
                }
            )
            .typical(),
            8
        );
    }

    #[test]
    fn sizing_lists_what_alone_does_not_fit_and_floors_at_one() {
        // 20 GiB on a 16 GiB worker; 9 cores on 8; 15 GiB fits the worker but
        // not 90 % of it (16384 MiB × 0.9 = 14745 MiB < 15360): 0 at once by
        // memory, so it alone does not fit either (the same rule), floored to 1.
        let mut a = many(1, 20 * GIB, 100, "huge");
        a.extend(many(1, GIB, 900, "wide"));
        a.extend(many(1, 15 * GIB, 100, "fat"));
        let figs = figures(&a);
        let s = size(
            &figs,
            Worker {
                cores: 8,
                mem_bytes: 16 * GIB,
            },
        );
        let ids: Vec<&str> = s.too_big.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["huge0", "fat0", "wide0"]);
        assert_eq!(s.too_big[0].rss_bytes, Some(20 * GIB));
        assert_eq!(s.too_big[2].cores_centi, Some(900));
        assert_eq!((s.jobs_max_rss, s.worst()), (Some(0), 1));
        let mut text = String::new();
        s.render(&mut text);
        // 14745 MiB = 14.40 GiB.
        assert!(text.contains("actions that alone do not fit: 3\n    huge0 [cxx_compile]: RSS 20.00 GiB > 90 % of 16.00 GiB = 14.40 GiB\n    fat0 [cxx_compile]: RSS 15.00 GiB > 90 % of 16.00 GiB = 14.40 GiB\n    wide0 [cxx_compile]: 9.00 cores > 8\n"), "{text}");
        assert!(text.contains("  (0 by memory and by cores: "), "{text}");
        let v = s.to_json();
        assert_eq!(v["too_big"][0]["max_rss_bytes"], 20 * GIB);
        assert_eq!(v["at_once_worst"], 1);
    }

    /// An action at 95 % of the worker's memory gives 0 at once by the jobs
    /// rule (SPEC.md "Job-count model": jobs × peak ≤ 0.9 × memory), so it is
    /// listed as not fitting alone; one of 3 cores on 2 gives 0 by cores, and
    /// the floor note names the limit that gave 0.
    #[test]
    fn alone_too_big_is_the_at_once_rule_and_the_floor_note_names_the_limit() {
        let mem = 6 * GIB + GIB / 2;
        let a = many(1, mem / 100 * 95, 100, "near");
        let s = size(
            &figures(&a),
            Worker {
                cores: 8,
                mem_bytes: mem,
            },
        );
        assert_eq!(s.jobs_max_rss, Some(0));
        let mut text = String::new();
        s.render(&mut text);
        assert!(
            text.contains("near0 [cxx_compile]: RSS 6.17 GiB > 90 % of 6.50 GiB = 5.85 GiB\n"),
            "{text}"
        );
        assert!(text.contains("  (0 by memory: "), "{text}");
        // 3 cores, 1 GiB, on 2 cores and 4 GiB: cores give 0, memory 3.
        let a = many(1, GIB, 300, "wide");
        let s = size(
            &figures(&a),
            Worker {
                cores: 2,
                mem_bytes: 4 * GIB,
            },
        );
        let mut text = String::new();
        s.render(&mut text);
        assert!(text.contains("-> 0 at once\n"), "{text}");
        assert!(
        text.contains("  (0 by cores: one such action alone uses more cores than the worker has; 1 is the floor, as for jobs)\n"),
        "{text}"
    );
        assert!(!text.contains("0 by memory"), "{text}");
        assert!(
            text.contains("wide0 [cxx_compile]: 3.00 cores > 2\n"),
            "{text}"
        );
    }

    #[test]
    fn sizing_without_memory_figures_uses_cores_only() {
        // Buildfarm gives no memory: 4 cores, actions of 2 cores → 2.
        let u = Usage {
            source: Some(Source::Buildfarm),
            cpu_total_ns: Some(20 * 1_000_000_000),
            ..Usage::default()
        };
        let t = Times {
            virtual_execution: Some(10 * S),
            ..Times::default()
        };
        let mut x = named("x", "", "ab");
        x.origin = Origin::Hand;
        let a = vec![(x, stored(0, "", t, Some(u)))];
        let f = Found::default();
        let r = Report::new(
            &a,
            &f,
            Options {
                top: 10,
                min_wall_ms: 0,
                worker: Some(Worker {
                    cores: 4,
                    mem_bytes: 8 * GIB,
                }),
            },
        );
        let s = r.sizing().unwrap();
        assert_eq!((s.rss_actions, s.jobs_p99_rss, s.typical()), (0, None, 2));
        let text = r.text();
        assert!(
            text.contains("memory: no action has a memory figure"),
            "{text}"
        );
        assert!(text.contains("RSS: no memory figures"), "{text}");
        // No Buck2 log was read and none killed: no killed line.
        assert!(!text.contains("killed, from"), "{text}");
        assert_eq!(
            serde_json::from_str::<Value>(&r.json()).unwrap()["sizing"]["at_once"],
            2
        );
    }

    #[test]
    fn to_action_feeds_a_total_cpu_as_user_time_and_rounds_rss_up() {
        let a = shapes();
        let figs = figures(&a);
        let bb = figs[0].to_action().unwrap();
        assert_eq!((bb.wall_ms, bb.user_ms, bb.sys_ms), (5000, 2000, 500));
        assert_eq!(
            (bb.max_rss_kib, bb.signal.as_deref(), bb.exit),
            (3 * 1024 * 1024, Some("KILL"), Some(-1))
        );
        let buddy = figs[1].to_action().unwrap();
        assert_eq!(
            (buddy.user_ms, buddy.sys_ms, buddy.cores_centi()),
            (8000, 0, 200)
        );
        assert!(figs[3].to_action().is_none());
        assert!(figs[4].to_action().is_none());
        assert_eq!(
            figs[0].to_action().unwrap().id.to_string(),
            "//app:big (big.cpp)"
        );
    }

    // Found by hand (issue 26, hostile server): a `worker` or
    // `termination_signal` with a newline or an escape sequence went into the
    // table as stored (a broken table, the terminal's colours or screen
    // changed), and a 100 kB one made every row 100 kB wide.
    #[test]
    fn table_cells_are_one_line_and_bounded() {
        use crate::remote::report_rows::cell;
        assert_eq!(cell("evil\n\u{1b}[31mRED\t", 64), "evil??[31mRED?");
        assert_eq!(cell("KILL", 16), "KILL");
        let long = "S".repeat(100_000);
        assert_eq!(cell(&long, 16), std::format!("{}...", "S".repeat(13)));
        assert_eq!(cell(&"é".repeat(16), 16), "é".repeat(16));
    }

    /// `--digest HASH:SIZE` (origin Hand, SPEC.md "Command line": both
    /// separators) is reported as the canonical `HASH/SIZE`; the text cuts a
    /// SHA-256 hash (64 hex digits, REAPI `Digest.hash`) to 12 digits.
    #[test]
    fn a_digest_by_hand_is_canonical_and_cut_in_the_text() {
        let hash = "0123456789abcdef".repeat(4);
        let mut a = shapes();
        let (n, _) = &mut a[0];
        n.id = std::format!("{hash}:142");
        n.digest.hash = hash.clone();
        n.origin = Origin::Hand;
        let f = found();
        let r = Report::new(&a, &f, options(10, 0));
        let text = r.text();
        let short = "0123456789ab\u{2026}/142";
        assert!(
            text.lines()
                .any(|l| l.starts_with(short) && l.contains(" cxx_compile ")),
            "{text}"
        );
        assert!(
            text.contains(&std::format!(
                "  {short} (KILL: the OOM killer's signal) on w1\n"
            )),
            "{text}"
        );
        assert!(!text.contains(&hash), "{text}");
        let rows: Value = serde_json::from_str(&r.rows()).expect("rows");
        assert_eq!(rows[0]["id"], std::format!("{hash}/142"));
        assert_eq!(rows[0]["digest"], std::format!("{hash}/142"));
        let v: Value = serde_json::from_str(&r.json()).expect("json");
        assert_eq!(v["signals"]["listed"][0]["id"], std::format!("{hash}/142"));
        // A log's id is kept as the log names it.
        assert_eq!(rows[1]["id"], "//app:mid (mid.cpp)");
    }

    /// [`shapes`] and two actions of absurd figures: `//x:absurd` (one
    /// second of wall, `i64::MAX` ns of CPU and bytes of RSS) and `//x:ages`
    /// (the same usage, queued and executing for `i64::MAX` ns each).
    fn absurd_actions(max: u64) -> Vec<(Named, Lookup)> {
        let garbage = Usage {
            source: Some(Source::BuildBuddy),
            cpu_total_ns: Some(max),
            max_rss_bytes: Some(max),
            rss_scope: Some(RssScope::WholeAction),
            ..Usage::default()
        };
        // One second of wall, i64::MAX ns of CPU: 9.2e9 cores.
        let short = Times {
            execution_start: Some(S),
            execution_completed: Some(2 * S),
            ..Times::default()
        };
        // Queued, and executing, for i64::MAX ns each.
        let long = Times {
            queued: Some(0),
            worker_start: Some(i128::from(i64::MAX)),
            execution_start: Some(0),
            execution_completed: Some(i128::from(i64::MAX)),
            ..Times::default()
        };
        let mut a = shapes();
        a.push((
            named("//x:absurd", "cxx_compile", "ff"),
            stored(0, "w", short, Some(garbage.clone())),
        ));
        a.push((
            named("//x:ages", "cxx_compile", "fe"),
            stored(0, "w", long, Some(garbage)),
        ));
        a
    }

    /// Every row of the phases table has its cells apart, and the queued
    /// row reads 2^63 ns as 2562047.79 h and 9223372036.9 s.
    fn assert_phases_apart(text: &str) {
        let phases = text
            .split_once("where remote time went")
            .and_then(|(_, t)| t.split_once("\n\n"))
            .map(|(t, _)| t)
            .expect("phases");
        for l in phases.lines().skip(1) {
            assert!(l.split_whitespace().count() >= 4, "{l}");
        }
        let queued = phases
            .lines()
            .find(|l| l.trim_start().starts_with("queued"))
            .expect("queued");
        let q: Vec<&str> = queued.split_whitespace().collect();
        // 2^63 ns = 2562047.79 h; 9223372036.9 s.
        assert_eq!(
            q[..5],
            ["queued", "2", "2562047.79", "9223372036.9", "//x:ages"],
            "{phases}"
        );
    }

    /// Absurd numbers a server may store (REAPI `int64` fields, BuildBuddy
    /// `peak_memory_bytes` and `cpu_nanos` of `i64::MAX`; timestamps ~292
    /// years apart): the text's columns stay apart, RSS and cores past 10^6
    /// read `>1e6`, the local table counts them at the caps, `--json-rows`
    /// keeps the stored figure.
    #[test]
    fn absurd_figures_keep_the_columns_apart() {
        let max = i64::MAX as u64;
        let a = absurd_actions(max);
        let f = found();
        let worker = Some(Worker {
            cores: 8,
            mem_bytes: 16 * GIB,
        });
        let r = Report::new(
            &a,
            &f,
            Options {
                top: 10,
                min_wall_ms: 0,
                worker,
            },
        );
        let text = r.text();
        assert!(
            text.contains(
                "\n2 actions with figures past any machine (RSS over 1 PiB, or over 10^6 cores"
            ),
            "{text}"
        );
        // The buckets: at most 10^6 cores and 1 PiB (1048576 GiB), each
        // cell apart.
        let bucket = text
            .lines()
            .find(|l| l.trim_start().starts_with("0-5 s"))
            .expect("bucket");
        let cells: Vec<&str> = bucket.split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "0-5",
                "s",
                "3",
                "0.0",
                "333334.17",
                "1000000.00",
                "1048576.00"
            ],
            "{text}"
        );
        let row = text
            .lines()
            .find(|l| l.starts_with("//x:absurd "))
            .expect("absurd row");
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "//x:absurd",
                "cxx_compile",
                "1.0",
                ">1e6",
                ">1e6",
                "action",
                "w"
            ]
        );
        // Every row of the longest table and of the phases has its cells
        // apart: the header's column starts are blanks before each cell.
        assert_phases_apart(&text);
        assert!(text.contains("p99 RSS >1e6 GiB -> 0 at once"), "{text}");
        let rows: Value = serde_json::from_str(&r.rows()).expect("rows");
        assert_eq!(rows[5]["max_rss_bytes"], max);
    }
}
