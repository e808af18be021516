//! The actions file as JSON: one action as the object `actions --json`
//! lists, and `actions --json-rows`, an array with one object per action
//! streamed as the file is read (nothing is kept).
//!
//! The row keys are the ones `actions --remote --json-rows` writes
//! ([`ROW_KEYS`]), so one `jq` filter reads both; what a local file does
//! not have (a category, a digest, a worker, the remote timestamps) is
//! `null`.
//!
//! # References
//! RFC 8259 (JSON); SPEC.md "Per-action usage from a remote action cache"
//! and "Command line".

use ufmt::{uWrite, uwrite};

use super::actions::{Action, BUCKET_LABELS, BUCKET_START_MS, Table};
use crate::followed::figures::{fixed, gib_centi, seconds};
use crate::followed::rusage::Counts;

/// The keys of one `--json-rows` object, in the order written, for a
/// local actions file and for `actions --remote` alike.
///
/// `id`, `category`, `digest` (`"HASH/SIZE"`), `stored` (the cache held
/// a result), `wall_s`, `user_s`, `sys_s`, `cpu_s` (user + system, or the
/// worker's total), `cores` (cpu / wall), `max_rss_bytes`, `max_rss_gib`,
/// `rss_scope` (`"largest_process"` or `"whole_action"`),
/// `termination_signal` (without `SIG`), `exit_code`, `worker`,
/// `queued_s`, `input_fetch_s`, `upload_s`, `source` (`"local"`,
/// `"buildbarn"`, `"buildbuddy"`, `"buildfarm"`).
pub const ROW_KEYS: [&str; 19] = [
    "id",
    "category",
    "digest",
    "stored",
    "wall_s",
    "user_s",
    "sys_s",
    "cpu_s",
    "cores",
    "max_rss_bytes",
    "max_rss_gib",
    "rss_scope",
    "termination_signal",
    "exit_code",
    "worker",
    "queued_s",
    "input_fetch_s",
    "upload_s",
    "source",
];

impl Table {
    /// Renders the same figures as one JSON object (`actions --json`):
    ///
    /// `{"actions":N,"skipped_rows":N,"wall_s":S,"cpu_s":S,"avg_cores":C,
    /// "buckets":[{"wall_time":"0-5 s","min_wall_s":0,"max_wall_s":5,
    /// "actions":N,"wall_s":S,"cpu_s":S,"pct_of_wall":P,"avg_cores":C,
    /// "p90_cores":C,"max_rss_mb":M,"max_rss_gib":G},…],
    /// "signals":{"actions":N,"listed":[{"id":…,"signal":…}],"more":N},
    /// "longest":{"top":N,"min_wall_s":S,"actions":[{"id":…,"start":…,
    /// "wall_s":S,"user_s":S,"sys_s":S,"cores":C,"max_rss_mb":M,
    /// "max_rss_gib":G,"signal":…|null,"exit":N|null,"majflt":N|null,
    /// "minflt":N|null,"nvcsw":N|null,"nivcsw":N|null,"inblock":N|null,
    /// "oublock":N|null},…]}}` (the counters are null for a row written
    /// before they were recorded).
    ///
    /// All five buckets are present (an empty one has `"avg_cores"` and
    /// `"p90_cores"` null; the last has `"max_wall_s":null`). Seconds have
    /// 3 decimals, cores and GiB 2, % 1; MiB are whole, rounded down.
    ///
    /// # Errors
    /// Whatever `out` returns.
    pub fn render_json<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        uwrite!(
            w,
            "{{\"actions\":{},\"skipped_rows\":{},\"wall_s\":",
            self.actions(),
            self.skipped_rows
        )?;
        fixed(w, self.wall_ms(), 1000)?;
        uwrite!(w, ",\"cpu_s\":")?;
        fixed(w, self.cpu_ms(), 1000)?;
        uwrite!(w, ",\"avg_cores\":")?;
        fixed(w, self.avg_cores_centi(), 100)?;
        uwrite!(w, ",\"buckets\":[")?;
        for (i, label) in BUCKET_LABELS.iter().enumerate() {
            let Some(b) = self.bucket(i) else { continue };
            if i > 0 {
                w.write_char(',')?;
            }
            uwrite!(w, "{{\"wall_time\":\"{}\",\"min_wall_s\":", *label)?;
            seconds(w, BUCKET_START_MS.get(i).copied().unwrap_or(0))?;
            uwrite!(w, ",\"max_wall_s\":")?;
            match BUCKET_START_MS.get(i + 1) {
                Some(&end) => seconds(w, end)?,
                None => uwrite!(w, "null")?,
            }
            uwrite!(w, ",\"actions\":{},\"wall_s\":", b.actions)?;
            fixed(w, b.wall_ms, 1000)?;
            uwrite!(w, ",\"cpu_s\":")?;
            fixed(w, b.cpu_ms, 1000)?;
            uwrite!(w, ",\"pct_of_wall\":")?;
            fixed(w, self.pct_tenths(b.wall_ms), 10)?;
            if b.actions == 0 {
                uwrite!(w, ",\"avg_cores\":null,\"p90_cores\":null")?;
            } else {
                uwrite!(w, ",\"avg_cores\":")?;
                fixed(w, b.avg_cores_centi, 100)?;
                uwrite!(w, ",\"p90_cores\":")?;
                fixed(w, b.p90_cores_centi, 100)?;
            }
            uwrite!(
                w,
                ",\"max_rss_mb\":{},\"max_rss_gib\":",
                b.max_rss_kib / 1024
            )?;
            fixed(w, gib_centi(b.max_rss_kib), 100)?;
            w.write_char('}')?;
        }
        uwrite!(
            w,
            "],\"signals\":{{\"actions\":{},\"listed\":[",
            self.signalled()
        )?;
        for (i, (id, sig)) in self.signal_ids().iter().enumerate() {
            if i > 0 {
                w.write_char(',')?;
            }
            uwrite!(w, "{{\"id\":")?;
            json_str(w, id)?;
            uwrite!(w, ",\"signal\":")?;
            json_str(w, sig)?;
            w.write_char('}')?;
        }
        let listed = u64::try_from(self.signal_ids().len()).unwrap_or(u64::MAX);
        uwrite!(
            w,
            "],\"more\":{}}},\"longest\":{{\"top\":{},\"min_wall_s\":",
            self.signalled().saturating_sub(listed),
            self.top()
        )?;
        seconds(w, self.min_wall_ms())?;
        uwrite!(w, ",\"actions\":[")?;
        for (i, a) in self.longest().iter().enumerate() {
            if i > 0 {
                w.write_char(',')?;
            }
            action_json(w, a)?;
        }
        uwrite!(w, "]}}}}\n")
    }
}

/// One action as the JSON object `actions --json` lists under
/// `longest.actions` (see [`super::actions::Table::render_json`]).
pub(crate) fn action_json<W: uWrite>(w: &mut W, a: &Action) -> Result<(), W::Error> {
    uwrite!(w, "{{\"id\":")?;
    json_str(w, &a.id)?;
    uwrite!(w, ",\"start\":\"{}\",\"wall_s\":", a.start.as_str())?;
    fixed(w, a.wall_ms, 1000)?;
    uwrite!(w, ",\"user_s\":")?;
    fixed(w, a.user_ms, 1000)?;
    uwrite!(w, ",\"sys_s\":")?;
    fixed(w, a.sys_ms, 1000)?;
    uwrite!(w, ",\"cores\":")?;
    fixed(w, a.cores_centi(), 100)?;
    uwrite!(
        w,
        ",\"max_rss_mb\":{},\"max_rss_gib\":",
        a.max_rss_kib / 1024
    )?;
    fixed(w, gib_centi(a.max_rss_kib), 100)?;
    uwrite!(w, ",\"signal\":")?;
    match &a.signal {
        Some(s) => json_str(w, s)?,
        None => uwrite!(w, "null")?,
    }
    match a.exit {
        Some(e) => uwrite!(w, ",\"exit\":{}", e)?,
        None => uwrite!(w, ",\"exit\":null")?,
    }
    match &a.counts {
        Some(c) => c.write_json(w)?,
        None => {
            for name in Counts::NAMES {
                uwrite!(w, ",\"{}\":null", name)?;
            }
        }
    }
    w.write_char('}')
}

/// A JSON string literal: `"` and `\` escaped, control characters as
/// `\u00XX` (ids are sanitized and have none, but this does not rely on
/// it).
pub(crate) fn json_str<W: uWrite>(w: &mut W, s: &str) -> Result<(), W::Error> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    w.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => w.write_str("\\\"")?,
            '\\' => w.write_str("\\\\")?,
            c if u32::from(c) < 0x20 => {
                let n = u32::from(c) as usize;
                w.write_str("\\u00")?;
                for d in [n >> 4, n & 15] {
                    w.write_char(char::from(HEX.get(d).copied().unwrap_or(b'0')))?;
                }
            }
            c => w.write_char(c)?,
        }
    }
    w.write_char('"')
}

/// Byte capacity of one formatted `--json-rows` object with its
/// separator: an id of at most 96 bytes, each escaped to at most 6
/// (`\u00XX`, though ids are sanitized and have none), is 578 with its
/// quotes; the keys and punctuation are 290; five numbers of at most 24
/// bytes (`u64::MAX` ms as seconds), cores and GiB of at most 23, the
/// bytes of at most 20, a signal of at most 10 and an exit code of 11
/// add 207: 1075. 1152 holds it.
pub const ROW_JSON_CAP: usize = 1152;

/// `actions --json-rows` written as the rows arrive: `[`, then each
/// action's object on its own line, comma-separated, then `]`. Keeps only
/// whether a row was written.
///
/// ```
/// use headroom::report::actions::Action;
/// use headroom::report::actions_json::JsonRows;
/// use headroom::tick::clock::Iso;
/// let a = Action { id: "gcc x.c".try_into().unwrap(), start: Iso::from_epoch(0),
///     wall_ms: 2000, user_ms: 1500, sys_ms: 500, max_rss_kib: 1024, signal: None,
///     exit: Some(0), counts: None };
/// let mut out = heapless::String::<2048>::new();
/// let mut rows = JsonRows::new();
/// rows.begin(&mut out).unwrap();
/// rows.row(&mut out, &a).unwrap();
/// rows.end(&mut out).unwrap();
/// assert!(out.starts_with("[\n{\"id\":\"gcc x.c\",\"category\":null,"));
/// assert!(out.contains("\"cpu_s\":2.000,\"cores\":1.00,\"max_rss_bytes\":1048576,"));
/// assert!(out.ends_with("\"source\":\"local\"}\n]\n"));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonRows {
    written: bool,
}

impl JsonRows {
    /// Before any row.
    pub fn new() -> JsonRows {
        JsonRows { written: false }
    }

    /// Writes the opening `[`.
    ///
    /// # Errors
    /// Whatever `w` returns.
    pub fn begin<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        w.write_str("[")
    }

    /// Writes one action's object (keys [`ROW_KEYS`]), after a comma when
    /// it is not the first. Seconds have 3 decimals, cores and GiB 2;
    /// `max_rss_bytes` is the file's whole MiB × 2^20 (the file keeps MiB);
    /// `rss_scope` is `"largest_process"` (wait4 `ru_maxrss`); `source`
    /// is `"local"`; the remote-only keys are `null`.
    ///
    /// # Errors
    /// Whatever `w` returns.
    pub fn row<W: uWrite>(&mut self, w: &mut W, a: &Action) -> Result<(), W::Error> {
        w.write_str(if self.written { ",\n" } else { "\n" })?;
        self.written = true;
        uwrite!(w, "{{\"id\":")?;
        json_str(w, &a.id)?;
        uwrite!(
            w,
            ",\"category\":null,\"digest\":null,\"stored\":null,\"wall_s\":"
        )?;
        fixed(w, a.wall_ms, 1000)?;
        uwrite!(w, ",\"user_s\":")?;
        fixed(w, a.user_ms, 1000)?;
        uwrite!(w, ",\"sys_s\":")?;
        fixed(w, a.sys_ms, 1000)?;
        uwrite!(w, ",\"cpu_s\":")?;
        fixed(w, a.cpu_ms(), 1000)?;
        uwrite!(w, ",\"cores\":")?;
        fixed(w, a.cores_centi(), 100)?;
        uwrite!(
            w,
            ",\"max_rss_bytes\":{},\"max_rss_gib\":",
            a.max_rss_kib.saturating_mul(1024)
        )?;
        fixed(w, gib_centi(a.max_rss_kib), 100)?;
        uwrite!(
            w,
            ",\"rss_scope\":\"largest_process\",\"termination_signal\":"
        )?;
        match &a.signal {
            Some(s) => json_str(w, s)?,
            None => w.write_str("null")?,
        }
        match a.exit {
            Some(e) => uwrite!(w, ",\"exit_code\":{}", e)?,
            None => w.write_str(",\"exit_code\":null")?,
        }
        w.write_str(
            ",\"worker\":null,\"queued_s\":null,\"input_fetch_s\":null,\"upload_s\":null,\"source\":\"local\"}",
        )
    }

    /// Writes the closing `]` and a newline (`[]` when no row was written).
    ///
    /// # Errors
    /// Whatever `w` returns.
    pub fn end<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        w.write_str(if self.written { "\n]\n" } else { "]\n" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::actions::{ID_CAP, Id, Signal};
    use crate::tick::clock::Iso;

    #[test]
    fn json_strings_are_escaped() {
        let mut s: heapless::String<64> = heapless::String::new();
        json_str(&mut s, "a\"b\\c\u{1}é").unwrap();
        assert_eq!(s.as_str(), "\"a\\\"b\\\\c\\u0001é\"");
    }

    /// The largest row: an id of ID_CAP `"` (each escaped to 2 bytes; a
    /// control character would be 6, but sanitized ids have none: both
    /// are within the cap's count of 6 per byte), every number at its
    /// widest, a signal of 8 bytes, the most negative exit code.
    #[test]
    fn the_widest_row_fits_its_cap_with_the_keys_in_order() {
        let mut id = Id::new();
        for _ in 0..ID_CAP {
            id.push('\u{1}').unwrap();
        }
        let mut signal = Signal::new();
        signal.push_str("RTMIN+15").unwrap();
        let a = Action {
            id,
            start: Iso::from_epoch(u64::MAX),
            wall_ms: u64::MAX,
            user_ms: u64::MAX,
            sys_ms: u64::MAX,
            max_rss_kib: u64::MAX,
            signal: Some(signal),
            exit: Some(i32::MIN),
            counts: None,
        };
        let mut out = heapless::String::<ROW_JSON_CAP>::new();
        let mut rows = JsonRows::new();
        rows.row(&mut out, &a).unwrap();
        // A second row adds only the 2-byte separator in place of 1.
        assert!(out.len() < ROW_JSON_CAP - 1, "{}", out.len());
        let mut at = 0;
        for k in ROW_KEYS {
            let mut key = heapless::String::<32>::new();
            ufmt::uwrite!(key, "\"{}\":", k).unwrap();
            let found = out[at..].find(key.as_str()).map(|i| i + at);
            assert!(found.is_some(), "{k} missing or out of order in {out}");
            at = found.unwrap_or(at);
        }
    }

    #[test]
    fn no_rows_is_an_empty_array_and_rows_are_comma_separated() {
        let mut out = heapless::String::<4096>::new();
        let rows = JsonRows::new();
        rows.begin(&mut out).unwrap();
        rows.end(&mut out).unwrap();
        assert_eq!(out.as_str(), "[]\n");
        let a = Action {
            id: Id::try_from("ld").unwrap(),
            start: Iso::from_epoch(0),
            wall_ms: 1500,
            user_ms: 1000,
            sys_ms: 250,
            max_rss_kib: 2048,
            signal: None,
            exit: None,
            counts: None,
        };
        out.clear();
        let mut rows = JsonRows::new();
        rows.begin(&mut out).unwrap();
        rows.row(&mut out, &a).unwrap();
        rows.row(&mut out, &a).unwrap();
        rows.end(&mut out).unwrap();
        assert_eq!(out.matches("},\n{").count(), 1);
        assert!(out.contains(
            "\"wall_s\":1.500,\"user_s\":1.000,\"sys_s\":0.250,\"cpu_s\":1.250,\"cores\":0.83,\"max_rss_bytes\":2097152,\"max_rss_gib\":0.00,\"rss_scope\":\"largest_process\",\"termination_signal\":null,\"exit_code\":null,"
        ), "{out}");
    }
}
