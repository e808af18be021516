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
        }
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
                "PARTIAL: {} cut short mid-record (a build still running, or buck2 killed): only the actions before the cut: {}\n",
                plural(self.found.truncated.len(), "log", "logs"),
                self.found.truncated.join(", ")
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
        let t = &self.table;
        let (proc, whole, unknown) = self.scopes();
        let sig = self.signalled();
        let longest = self.longest();
        let v = json!({
            "looked_up": self.looked_up(),
            "stored": self.stored(),
            "not_found": self.not_found(),
            "no_usage": self.stored() - self.measured(),
            "skipped_any": self.skipped_any(),
            "local_actions": self.found.local,
            "truncated_logs": self.found.truncated,
            "actions": t.actions(),
            "wall_s": num(t.wall_ms(), 3),
            "cpu_s": num(t.cpu_ms(), 3),
            "avg_cores": num(t.avg_cores_centi(), 2),
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
        let mut s = v.to_string();
        s.push('\n');
        s
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
#[path = "report_tests.rs"]
mod tests;
