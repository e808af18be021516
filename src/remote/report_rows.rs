//! One remote action as the report reads it ([`Figures`]), and
//! `actions --remote --json-rows`: an array with one object per action
//! looked up, with the keys a local actions file's rows have
//! ([`crate::report::actions_json::ROW_KEYS`]).
//!
//! # References
//! REAPI v2 `remote_execution.proto` (`ActionResult.exit_code`,
//! `ExecutedActionMetadata`); SPEC.md "Per-action usage from a remote
//! action cache" (whose memory each worker's figure is).

use std::string::{String, ToString};
use std::vec::Vec;

use serde_json::Value;

use super::action::{Lookup, Named, Origin, RssScope, Source, Stored, Usage};
use crate::followed::figures::{self, div_round, gib_centi_of_bytes};
use crate::report::actions::{Action, ID_CAP, Id, SIGNAL_CAP, Signal};
use crate::report::actions_json::ROW_KEYS;

/// Signalled, killed and too-big actions listed by id; later ones are
/// only counted (the local table lists as many signalled ones).
pub const LISTED: usize = crate::report::actions::SIGNAL_IDS;

/// The largest RSS the local table is fed, bytes (1 PiB): a server's
/// figure above it (an `int64` read as garbage) is counted at it, so the
/// table's columns keep their widths.
pub const RSS_CAP_BYTES: u64 = 1 << 50;

/// The most cores the local table is fed, hundredths (10^6 cores): CPU
/// time above wall × 10^6 is counted at that.
pub const CORES_CAP_CENTI: u64 = 100_000_000;

/// One action looked up, with what the cache stored for it.
#[derive(Clone, Copy, Debug)]
pub struct Figures<'a> {
    /// What the log named.
    pub named: &'a Named,
    /// The stored result; `None` for `NOT_FOUND`.
    pub stored: Option<&'a Stored>,
}

/// The figures of each `(Named, Lookup)` pair, in order.
pub fn figures(actions: &[(Named, Lookup)]) -> Vec<Figures<'_>> {
    actions
        .iter()
        .map(|(named, lookup)| Figures {
            named,
            stored: match lookup {
                Lookup::NotFound => None,
                Lookup::Stored(s) => Some(s),
            },
        })
        .collect()
}

impl<'a> Figures<'a> {
    /// What the worker measured; `None` when not stored or no usage.
    pub fn usage(&self) -> Option<&'a Usage> {
        self.stored?.usage.as_ref()
    }

    /// Execution wall time, ns ([`super::action::Times::wall_ns`]).
    pub fn wall_ns(&self) -> Option<u64> {
        self.stored?.times.wall_ns()
    }

    /// CPU time, ns ([`Usage::cpu_ns`]).
    pub fn cpu_ns(&self) -> Option<u64> {
        self.usage()?.cpu_ns()
    }

    /// True when both the wall time and the CPU time are known: the
    /// actions the table's totals and buckets count.
    pub fn measured(&self) -> bool {
        self.wall_ns().is_some() && self.cpu_ns().is_some()
    }

    /// Average cores while it ran, hundredths (cpu × 100 / wall, rounded
    /// half up); `None` unless measured, 0 for a zero wall time.
    pub fn cores_centi(&self) -> Option<u64> {
        let cpu = self.cpu_ns()?;
        let wall = self.wall_ns()?;
        Some(div_round(u128::from(cpu) * 100, u128::from(wall)))
    }

    /// Peak memory, bytes, and whose it is.
    pub fn rss(&self) -> Option<(u64, Option<RssScope>)> {
        let u = self.usage()?;
        Some((u.max_rss_bytes?, u.rss_scope))
    }

    /// The signal that ended it, without `SIG`; `None` when none or empty.
    pub fn signal(&self) -> Option<&'a str> {
        self.usage()?
            .termination_signal
            .as_deref()
            .filter(|s| !s.is_empty())
    }

    /// `ExecutedActionMetadata.worker`; `None` when not stored or empty.
    pub fn worker(&self) -> Option<&'a str> {
        Some(self.stored?.worker.as_str()).filter(|w| !w.is_empty())
    }

    /// True when a figure is past what any machine has: an RSS over
    /// [`RSS_CAP_BYTES`] or cores over [`CORES_CAP_CENTI`].
    pub fn absurd(&self) -> bool {
        self.rss().is_some_and(|(b, _)| b > RSS_CAP_BYTES)
            || self.cores_centi().is_some_and(|c| c > CORES_CAP_CENTI)
    }

    /// The action as the local table's [`Action`], for
    /// [`crate::report::actions::Table::observe`]; `None` unless
    /// [`Figures::measured`].
    ///
    /// Times are rounded half up to ms; the id is sanitized and cut to
    /// [`ID_CAP`] bytes; the RSS is rounded up to KiB (0 when the worker
    /// gives none). An [`Figures::absurd`] figure is counted at its cap
    /// (the CPU time scaled down to [`CORES_CAP_CENTI`] of the wall). A worker that gives only a total CPU time (BuildBuddy,
    /// Buildfarm) has it fed as user time with system 0: the table reads
    /// only their sum, and `--json-rows` keeps `user_s`/`sys_s` null.
    pub fn to_action(&self) -> Option<Action> {
        if !self.measured() {
            return None;
        }
        let u = self.usage()?;
        let (mut user_ns, mut sys_ns) = match (u.user_ns, u.sys_ns) {
            (Some(user), Some(sys)) => (user, sys),
            _ => (u.cpu_ns()?, 0),
        };
        let wall_ns = self.wall_ns()?;
        let cpu_cap = u128::from(wall_ns) * u128::from(CORES_CAP_CENTI / 100);
        let cpu = u128::from(user_ns) + u128::from(sys_ns);
        if cpu > cpu_cap {
            let scale = |v: u64| u64::try_from(u128::from(v) * cpu_cap / cpu).unwrap_or(u64::MAX);
            (user_ns, sys_ns) = (scale(user_ns), scale(sys_ns));
        }
        let mut id = Id::new();
        crate::followed::text::sanitize_into(self.named.id.as_bytes(), ID_CAP, &mut id);
        if id.is_empty() {
            // Cannot fail: empty, with room.
            let _ = id.push('?');
        }
        let signal = self.signal().map(|s| {
            let mut sig = Signal::new();
            crate::followed::text::sanitize_into(s.as_bytes(), SIGNAL_CAP, &mut sig);
            sig
        });
        let start_ns = self.stored?.times.execution_start.unwrap_or(0);
        Some(Action {
            id,
            start: crate::tick::clock::Iso::from_epoch(
                u64::try_from(start_ns / 1_000_000_000).unwrap_or(0),
            ),
            wall_ms: ns_to_ms(self.wall_ns()?),
            user_ms: ns_to_ms(user_ns),
            sys_ms: ns_to_ms(sys_ns),
            max_rss_kib: self
                .rss()
                .map_or(0, |(b, _)| b.min(RSS_CAP_BYTES).div_ceil(1024)),
            signal,
            exit: Some(self.stored?.exit_code),
            counts: None,
        })
    }
}

/// Nanoseconds as milliseconds, rounded half up.
pub fn ns_to_ms(ns: u64) -> u64 {
    div_round(u128::from(ns), 1_000_000)
}

/// [`figures::fixed`] as a `String`, for the text and JSON built on the
/// heap: `v / scale` with as many decimals as `scale` (10, 100 or 1000)
/// has zeros, 12345 at 1000 → `12.345`.
pub fn fixed(v: u64, scale: u64) -> String {
    // 20 digits, a point and 3 decimals: 24 bytes at most, so the write
    // cannot fail.
    let mut s = heapless::String::<24>::new();
    let _ = figures::fixed(&mut s, v, scale);
    String::from(s.as_str())
}

/// Hundredths (cores, GiB) as the text shows them: `12.34`, or `>1e6`
/// above 10^6 (more than a machine has: a server's garbage).
pub fn shown_centi(v: u64) -> String {
    if v > CORES_CAP_CENTI {
        String::from(">1e6")
    } else {
        fixed(v, 100)
    }
}

/// A fixed-point integer with `decimals` decimals as a JSON number (133
/// at 2 → 1.33); null if not finite.
pub fn num(v: u64, decimals: i32) -> Value {
    serde_json::Number::from_f64(v as f64 / 10f64.powi(decimals)).map_or(Value::Null, Value::Number)
}

/// Nanoseconds as a JSON number of seconds with 3 decimals; null when
/// unknown.
fn secs(ns: Option<u64>) -> Value {
    ns.map_or(Value::Null, |n| num(ns_to_ms(n), 3))
}

/// The JSON name of a scope: `"largest_process"`, `"whole_action"`.
pub fn scope_name(s: RssScope) -> &'static str {
    match s {
        RssScope::LargestProcess => "largest_process",
        RssScope::WholeAction => "whole_action",
    }
}

/// The JSON name of a source: `"buildbarn"`, `"buildbuddy"`, `"buildfarm"`.
pub fn source_name(s: Source) -> &'static str {
    match s {
        Source::Buildbarn => "buildbarn",
        Source::BuildBuddy => "buildbuddy",
        Source::Buildfarm => "buildfarm",
    }
}

/// Text or null.
fn text(s: Option<&str>) -> Value {
    s.map_or(Value::Null, |s| Value::String(s.into()))
}

/// One action's `--json-rows` values, in [`ROW_KEYS`] order. `null` where
/// unknown: everything after `stored` for `NOT_FOUND`, the CPU split for a
/// worker that gives only a total, the RSS for one that measures none.
pub fn row_values(f: &Figures<'_>) -> [(&'static str, Value); 19] {
    let u = f.usage();
    let t = f.stored.map(|s| s.times);
    let d = &f.named.digest;
    let rss = f.rss();
    let values = [
        Value::String(report_id(f.named)),
        text(Some(f.named.category.as_str()).filter(|c| !c.is_empty())),
        Value::String(std::format!("{}/{}", d.hash, d.size_bytes)),
        Value::Bool(f.stored.is_some()),
        secs(f.wall_ns()),
        secs(
            u.and_then(|u| u.user_ns.zip(u.sys_ns))
                .map(|(user, _)| user),
        ),
        secs(u.and_then(|u| u.user_ns.zip(u.sys_ns)).map(|(_, sys)| sys)),
        secs(f.cpu_ns()),
        f.cores_centi().map_or(Value::Null, |c| num(c, 2)),
        rss.map_or(Value::Null, |(b, _)| Value::from(b)),
        rss.map_or(Value::Null, |(b, _)| num(gib_centi_of_bytes(b), 2)),
        text(rss.and_then(|(_, s)| s).map(scope_name)),
        text(f.signal()),
        f.stored.map_or(Value::Null, |s| Value::from(s.exit_code)),
        text(f.worker()),
        secs(t.and_then(|t| t.queued_ns())),
        secs(t.and_then(|t| t.input_fetch_ns())),
        secs(t.and_then(|t| t.upload_ns())),
        text(u.and_then(|u| u.source).map(source_name)),
    ];
    let mut out: [(&'static str, Value); 19] = Default::default();
    for ((slot, key), v) in out.iter_mut().zip(ROW_KEYS).zip(values) {
        *slot = (key, v);
    }
    out
}

/// One action's `--json-rows` object as a [`serde_json::Map`] (keys in
/// sorted order, as serde_json keeps them), for the `--json` report.
pub fn row_object(f: &Figures<'_>) -> Value {
    Value::Object(
        row_values(f)
            .into_iter()
            .map(|(k, v)| (k.into(), v))
            .collect(),
    )
}

/// `actions --remote --json-rows`: `[`, one object per action on its own
/// line with its keys in [`ROW_KEYS`] order, `]`, a newline.
pub fn render_rows(figs: &[Figures<'_>]) -> String {
    let mut out = String::from("[");
    for (i, f) in figs.iter().enumerate() {
        out.push_str(if i == 0 { "\n{" } else { ",\n{" });
        for (j, (k, v)) in row_values(f).iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push_str(&Value::String((*k).into()).to_string());
            out.push(':');
            out.push_str(&v.to_string());
        }
        out.push('}');
    }
    out.push_str(if figs.is_empty() { "]\n" } else { "\n]\n" });
    out
}
/// The widest id or category the text shows, characters.
pub const ID_CELL: usize = 200;
/// The widest failure line (of a killed action) the text shows.
pub const LINE_CELL: usize = 300;
/// The widest `termination_signal` the text shows (`KILL`, `SEGV`, ...).
pub const SIGNAL_CELL: usize = 16;
/// The widest worker name the text shows.
pub const WORKER_CELL: usize = 64;

/// Hex digits of a hash the text shows of a `--digest` id.
pub const HASH_SHOWN: usize = 12;

/// The id the report gives an action: [`Named::id`] as the log names it,
/// or for `--digest` ([`Origin::Hand`]) the digest's canonical
/// `HASH/SIZE`, whichever separator was typed. `--json` and `--json-rows`
/// show this.
pub fn report_id(n: &Named) -> String {
    match n.origin {
        Origin::Hand => std::format!("{}/{}", n.digest.hash, n.digest.size_bytes),
        _ => n.id.clone(),
    }
}

/// The id as the text shows it: [`report_id`] as a [`cell`] of
/// [`ID_CELL`]; a `--digest` id with a SHA-256 hash (64 hex digits) cut to
/// its first [`HASH_SHOWN`] digits, `…`, `/SIZE`.
pub fn text_id(n: &Named) -> String {
    let d = &n.digest;
    if n.origin == Origin::Hand
        && d.hash.len() == 64
        && d.hash.bytes().all(|b| b.is_ascii_hexdigit())
    {
        let head = d.hash.get(..HASH_SHOWN).unwrap_or_default();
        return std::format!("{head}\u{2026}/{}", d.size_bytes);
    }
    cell(&report_id(n), ID_CELL)
}

/// `s` as text for the table: control characters (a newline, an escape
/// sequence from a server's `worker` or `termination_signal`, or a log's
/// label) shown as `?`, and at most `cap` characters (the last three `...`
/// when cut). `--json` and `--json-rows` keep the text as stored.
pub fn cell(s: &str, cap: usize) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(cap.saturating_add(1))
        .collect();
    if out.chars().count() > cap {
        out = out.chars().take(cap.saturating_sub(3)).collect();
        out.push_str("...");
    }
    out
}
