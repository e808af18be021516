//! Per worker container, from the cluster's Prometheus (`actions --remote
//! --prometheus URL`): the build's window, the three PromQL queries over
//! it, and their answers read into one [`Container`] per pod.
//!
//! Over the window `[start, end]` of `W` seconds, evaluated at `end`:
//! - peak memory working set: `max_over_time(
//!   container_memory_working_set_bytes{SEL}[Ws])`, the largest of a pod's
//!   series (`max by (pod)`);
//! - peak cores: the largest 1-minute rate of
//!   `container_cpu_usage_seconds_total` over the window, a subquery
//!   `max_over_time(rate(...[1m])[Ws:15s])` ([`CPU_STEP_S`]), `max by (pod)`;
//! - OOM events: `container_oom_events_total`'s rise inside the window,
//!   counted exactly: its largest value in the window less its value at
//!   the window's start, or its whole value for a series that starts inside
//!   the window (a container created during the build, e.g. the runner
//!   restarted after a kill: cAdvisor gives it a new series from 0), summed
//!   over the pod's series (`sum by (pod)`: each container's kills count).
//!   `increase()` is not used: it extrapolates to the window's edges (one
//!   kill reads 1.03, or 1.5) and counts nothing of a series whose first
//!   sample already holds the kill.
//!
//! A series with no `pod` label (cAdvisor outside Kubernetes) is grouped
//! by its `name` label (the container's name), else by `instance`.
//!
//! # References
//! Prometheus "Querying basics", "Query functions" (`max_over_time`,
//! `rate`), subqueries, `offset`, set operator `or`, the HTTP API's
//! instant-query answer (`resultType` `vector`, values as strings, `NaN`
//! and `+Inf` spelled so); cAdvisor's metric names.

use core::fmt;
use std::string::{String, ToString};
use std::vec::Vec;

use serde_json::Value;

use super::action::Times;

/// The default `--prometheus-selector`: Buildbarn's runner containers.
pub const DEFAULT_SELECTOR: &str = r#"namespace="buildbarn",container="runner""#;

/// The step of the CPU subquery, seconds: the 1-minute rate is evaluated
/// every 15 s, so the busiest minute is found within 15 s of where it
/// lies; kubelet's cAdvisor metrics are scraped every 15-30 s, so a finer
/// step finds nothing more, and a 10-hour build is 2400 points a series.
pub const CPU_STEP_S: u64 = 15;

/// The build's window, whole Unix seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Its start (the first timestamp, rounded down).
    pub start_s: i64,
    /// Its end, where the queries are evaluated (the last timestamp,
    /// rounded up).
    pub end_s: i64,
    /// Where the start came from.
    pub start_from: Bound,
    /// Where the end came from.
    pub end_from: Bound,
}

/// Where a bound of the window came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The stored results' `ExecutedActionMetadata` timestamps.
    Results,
    /// `--since` or `--until`.
    Option,
    /// The time now (no `--until`, no result timestamps).
    Now,
}

impl Window {
    /// Its length, seconds; at least 1.
    pub fn seconds(&self) -> u64 {
        u64::try_from(self.end_s.saturating_sub(self.start_s))
            .unwrap_or(0)
            .max(1)
    }
}

/// The first and the last of every `ExecutedActionMetadata` timestamp of
/// `times` (queued ... output upload completed), ns since the epoch;
/// `None` when none is set. Timestamps at or before the epoch are left
/// out (an unset one read as 0).
pub fn results_span<'a>(times: impl Iterator<Item = &'a Times>) -> Option<(i128, i128)> {
    let mut span: Option<(i128, i128)> = None;
    for t in times {
        let all = [
            t.queued,
            t.worker_start,
            t.worker_completed,
            t.input_fetch_start,
            t.input_fetch_completed,
            t.execution_start,
            t.execution_completed,
            t.output_upload_start,
            t.output_upload_completed,
        ];
        for ns in all.into_iter().flatten().filter(|&ns| ns > 0) {
            span = Some(span.map_or((ns, ns), |(a, b)| (a.min(ns), b.max(ns))));
        }
    }
    span
}

/// Why no window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowError {
    /// No `--since` and no stored result with a timestamp.
    NoStart,
    /// The window ends before it starts.
    Backwards {
        /// Its start, Unix seconds.
        start_s: i64,
        /// Its end, Unix seconds.
        end_s: i64,
    },
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoStart => f.write_str(
                "--prometheus: no stored result has timestamps to give the build's window: give --since (e.g. --since 2h, or --since 2026-12-03T10:00:00Z) and, for a build that has ended, --until",
            ),
            Self::Backwards { start_s, end_s } => write!(
                f,
                "--prometheus: the window ends ({}) before it starts ({}): check --since and --until",
                iso(*end_s),
                iso(*start_s)
            ),
        }
    }
}

impl std::error::Error for WindowError {}

/// The window: `since` (Unix seconds) when given, else the results'
/// first timestamp; `until` when given, else the results' last, else
/// `now_s`. An option given wins over the results: the user asked.
///
/// # Errors
/// [`WindowError::NoStart`], [`WindowError::Backwards`].
pub fn window(
    span_ns: Option<(i128, i128)>,
    since: Option<i64>,
    until: Option<i64>,
    now_s: i64,
) -> Result<Window, WindowError> {
    let secs = |ns: i128, up: bool| {
        let s = if up {
            ns.div_euclid(1_000_000_000) + i128::from(ns.rem_euclid(1_000_000_000) != 0)
        } else {
            ns.div_euclid(1_000_000_000)
        };
        i64::try_from(s).unwrap_or(i64::MAX)
    };
    let (start_s, start_from) = match (since, span_ns) {
        (Some(s), _) => (s, Bound::Option),
        (None, Some((first, _))) => (secs(first, false), Bound::Results),
        (None, None) => return Err(WindowError::NoStart),
    };
    let (end_s, end_from) = match (until, span_ns) {
        (Some(u), _) => (u, Bound::Option),
        (None, Some((_, last))) => (secs(last, true), Bound::Results),
        (None, None) => (now_s, Bound::Now),
    };
    if end_s <= start_s && !(end_s == start_s && start_from == Bound::Results) {
        return Err(WindowError::Backwards { start_s, end_s });
    }
    Ok(Window {
        start_s,
        end_s,
        start_from,
        end_from,
    })
}

/// Why a `--since`/`--until` value was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstantError;

impl fmt::Display for InstantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "expected a time ago (90m, 2h, 1d12h) or an RFC 3339 time (2026-12-03T10:00:00Z)",
        )
    }
}

impl std::error::Error for InstantError {}

/// A `--since`/`--until` value as Unix seconds: a time ago as Prometheus
/// writes durations (`30s`, `90m`, `2h`, `1d12h`; units s m h d w), from
/// `now_s`; or an RFC 3339 time, `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`
/// (fractions dropped).
///
/// # Errors
/// [`InstantError`] for anything else (a bare number has no unit).
pub fn parse_instant(s: &str, now_s: i64) -> Result<i64, InstantError> {
    let s = s.trim();
    if s.len() >= 19 && s.as_bytes().get(4) == Some(&b'-') {
        return parse_rfc3339(s).ok_or(InstantError);
    }
    let ago = parse_duration(s).ok_or(InstantError)?;
    now_s.checked_sub(ago).ok_or(InstantError)
}

/// `2h30m` → 9000 s; `None` when not such a duration.
fn parse_duration(s: &str) -> Option<i64> {
    let mut total: i64 = 0;
    let mut rest = s;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (n, tail) = rest.split_at(digits);
        let unit = tail.chars().next()?;
        let scale = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return None,
        };
        let n: i64 = n.parse().ok()?;
        total = total.checked_add(n.checked_mul(scale)?)?;
        rest = &tail[1..];
    }
    Some(total)
}

/// Days from 1970-01-01 to the civil date `y-m-d` (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An RFC 3339 time as Unix seconds; `None` when it is not one.
fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let t = s.get(from..from + len)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut at = 19;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let n = b.iter().skip(at).take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        at += n;
    }
    let offset = match s.get(at..)? {
        "Z" | "z" => 0,
        tz if tz.len() == 6 && sep(at + 3, b":") && sep(at, b"+-") => {
            let o = num(at + 1, 2)? * 3600 + num(at + 4, 2)? * 60;
            if b.get(at) == Some(&b'-') { -o } else { o }
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset)
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn iso(s: i64) -> String {
    let days = s.div_euclid(86_400);
    let secs = s.rem_euclid(86_400);
    // Civil from days (the inverse of days_from_civil).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    std::format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `--prometheus-selector` as the matchers inside `{...}`: the braces,
/// if given, and spaces around dropped.
pub fn selector(sel: &str) -> String {
    let s = sel.trim();
    let s = s.strip_prefix('{').unwrap_or(s);
    let s = s.strip_suffix('}').unwrap_or(s);
    s.trim().trim_end_matches(',').to_string()
}

/// One of the three figures asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Peak memory working set, bytes.
    Memory,
    /// Peak cores (1-minute rate of CPU seconds).
    Cores,
    /// OOM events in the window.
    Oom,
}

impl Figure {
    /// The three, in the order asked.
    pub const ALL: [Figure; 3] = [Figure::Memory, Figure::Cores, Figure::Oom];

    /// What the figure is called in messages.
    pub fn name(self) -> &'static str {
        match self {
            Figure::Memory => "peak memory",
            Figure::Cores => "peak cores",
            Figure::Oom => "OOM events",
        }
    }

    /// The query over the series of matchers `m` (without braces).
    fn over(self, m: &str, w: u64) -> String {
        match self {
            Figure::Memory => {
                std::format!("max_over_time(container_memory_working_set_bytes{{{m}}}[{w}s])")
            }
            Figure::Cores => std::format!(
                "max_over_time(rate(container_cpu_usage_seconds_total{{{m}}}[1m])[{w}s:{CPU_STEP_S}s])"
            ),
            Figure::Oom => std::format!(
                "(max_over_time(container_oom_events_total{{{m}}}[{w}s]) - container_oom_events_total{{{m}}} offset {w}s) or max_over_time(container_oom_events_total{{{m}}}[{w}s])"
            ),
        }
    }

    /// The PromQL for the window `w` over the selector `sel` (see
    /// [`selector`]): by pod, else by `name`, else by `instance`.
    pub fn query(self, sel: &str, w: &Window) -> String {
        let agg = match self {
            Figure::Oom => "sum",
            _ => "max",
        };
        let secs = w.seconds();
        let and = |extra: &str| {
            if sel.is_empty() {
                extra.to_string()
            } else {
                std::format!("{sel},{extra}")
            }
        };
        std::format!(
            "{agg} by (pod) ({}) or {agg} by (name) ({}) or {agg} by (instance) ({})",
            self.over(&and(r#"pod!="""#), secs),
            self.over(&and(r#"pod="",name!="""#), secs),
            self.over(&and(r#"pod="",name="""#), secs),
        )
    }
}

/// The label that names a worker container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameLabel {
    /// `pod` (Kubernetes).
    Pod,
    /// `name`: the container's name (cAdvisor outside Kubernetes).
    Name,
    /// `instance`: the scrape target.
    Instance,
    /// None of them.
    Nothing,
}

impl NameLabel {
    /// The label's name (`-` for none).
    pub fn label(self) -> &'static str {
        match self {
            NameLabel::Pod => "pod",
            NameLabel::Name => "name",
            NameLabel::Instance => "instance",
            NameLabel::Nothing => "-",
        }
    }
}

/// One worker container (a pod, all its series) over the window.
#[derive(Clone, Debug, PartialEq)]
pub struct Container {
    /// Its pod (or [`Container::label`]'s value).
    pub name: String,
    /// The label that named it.
    pub label: NameLabel,
    /// Peak memory working set, bytes; `None` when no series answered.
    pub peak_memory_bytes: Option<u64>,
    /// Peak cores, hundredths; `None` when no series answered.
    pub peak_cores_centi: Option<u64>,
    /// OOM events in the window; `None` when no series answered, or the
    /// counter went down (it was reset: the count is not known).
    pub oom_events: Option<u64>,
}

/// Why an answer was refused. Display: one line naming the URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerError {
    /// `"status":"error"`: Prometheus's `errorType` and `error`.
    Api {
        /// The URL.
        url: String,
        /// The figure asked.
        figure: &'static str,
        /// The HTTP status.
        http: u16,
        /// `errorType: error`.
        error: String,
    },
    /// Not JSON (a proxy's HTML page, a login page).
    NotJson {
        /// The URL.
        url: String,
        /// The HTTP status.
        http: u16,
    },
    /// JSON, but not an instant vector's answer.
    Shape {
        /// The URL.
        url: String,
        /// What was wrong.
        what: String,
    },
    /// A value that is not a finite number (`NaN`, `+Inf`).
    NotFinite {
        /// The URL.
        url: String,
        /// The figure asked.
        figure: &'static str,
        /// The container.
        container: String,
        /// The value as sent.
        value: String,
    },
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Api {
                url,
                figure,
                http,
                error,
            } => write!(
                f,
                "the Prometheus at {url} refused the {figure} query (HTTP {http}): {error}"
            ),
            Self::NotJson {
                url,
                http: http @ (401 | 403),
            } => write!(
                f,
                "the Prometheus at {url} answered HTTP {http}: give its credentials with --prometheus-header 'Authorization: Bearer TOKEN' (or --tls-cert and --tls-key)"
            ),
            Self::NotJson { url, http } => write!(
                f,
                "the Prometheus at {url} answered HTTP {http} and not JSON: is --prometheus the Prometheus (its HTTP API is /api/v1/query)?"
            ),
            Self::Shape { url, what } => {
                write!(f, "the Prometheus at {url} answered {what}")
            }
            Self::NotFinite {
                url,
                figure,
                container,
                value,
            } => write!(
                f,
                "the Prometheus at {url} answered {value} for the {figure} of {container}: not a number of a container"
            ),
        }
    }
}

impl std::error::Error for AnswerError {}

/// One series of an answer: the label that names it, its name, the value.
pub type Sample = (NameLabel, String, f64);

/// Reads one instant-query answer (`body`, with HTTP status `http`) of
/// `figure` from the Prometheus at `url`.
///
/// # Errors
/// [`AnswerError`]: an error status, not JSON, not a vector, a value that
/// is not a finite number.
pub fn read_answer(
    url: &str,
    figure: Figure,
    http: u16,
    body: &[u8],
) -> Result<Vec<Sample>, AnswerError> {
    let shape = |what: &str| AnswerError::Shape {
        url: url.to_string(),
        what: what.to_string(),
    };
    let v: Value = serde_json::from_slice(body).map_err(|_| AnswerError::NotJson {
        url: url.to_string(),
        http,
    })?;
    match v.get("status").and_then(Value::as_str) {
        Some("success") => {}
        Some("error") => {
            let part = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
            return Err(AnswerError::Api {
                url: url.to_string(),
                figure: figure.name(),
                http,
                error: std::format!("{}: {}", part("errorType"), part("error")),
            });
        }
        _ => return Err(shape("JSON with no \"status\": \"success\"")),
    }
    let data = v.get("data").ok_or_else(|| shape("no \"data\""))?;
    if data.get("resultType").and_then(Value::as_str) != Some("vector") {
        return Err(shape("a result that is not an instant vector"));
    }
    let result = data
        .get("result")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("no \"result\" array"))?;
    result.iter().map(|s| sample(url, figure, s)).collect()
}

/// One `{"metric": {...}, "value": [ts, "v"]}`.
fn sample(url: &str, figure: Figure, s: &Value) -> Result<Sample, AnswerError> {
    let metric = s.get("metric");
    let label = |k: &str| {
        metric
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let (by, name) = [
        (NameLabel::Pod, "pod"),
        (NameLabel::Name, "name"),
        (NameLabel::Instance, "instance"),
    ]
    .into_iter()
    .find_map(|(by, k)| label(k).map(|v| (by, v.to_string())))
    .unwrap_or((
        NameLabel::Nothing,
        String::from("(no pod, name or instance label)"),
    ));
    let text = s
        .get("value")
        .and_then(|v| v.get(1))
        .and_then(Value::as_str)
        .ok_or_else(|| AnswerError::Shape {
            url: url.to_string(),
            what: std::format!("a series of {name} with no [time, \"value\"]"),
        })?;
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok((by, name, x)),
        _ => Err(AnswerError::NotFinite {
            url: url.to_string(),
            figure: figure.name(),
            container: name,
            value: text.to_string(),
        }),
    }
}

/// The containers from the three answers (in [`Figure::ALL`] order),
/// busiest first: by peak memory (the figure an OOM kill is about, and
/// what `--worker-mem` sizes), then peak cores, then name.
pub fn containers(answers: [Vec<Sample>; 3]) -> Vec<Container> {
    let mut out: Vec<Container> = Vec::new();
    for (figure, samples) in Figure::ALL.into_iter().zip(answers) {
        for (label, name, x) in samples {
            let at = match out.iter().position(|c| c.label == label && c.name == name) {
                Some(at) => at,
                None => {
                    out.push(Container {
                        name,
                        label,
                        peak_memory_bytes: None,
                        peak_cores_centi: None,
                        oom_events: None,
                    });
                    out.len() - 1
                }
            };
            let Some(c) = out.get_mut(at) else { continue };
            // Casts saturate: a negative value reads 0, a huge one u64::MAX.
            match figure {
                Figure::Memory => c.peak_memory_bytes = Some(x.round() as u64),
                Figure::Cores => c.peak_cores_centi = Some((x * 100.0).round() as u64),
                Figure::Oom => c.oom_events = (x > -0.5).then(|| x.round() as u64),
            }
        }
    }
    out.sort_by(|a, b| {
        b.peak_memory_bytes
            .cmp(&a.peak_memory_bytes)
            .then(b.peak_cores_centi.cmp(&a.peak_cores_centi))
            .then(a.name.cmp(&b.name))
    });
    out
}

#[cfg(test)]
mod tests {
    //! The window, the instants, the queries' text and the answers'
    //! shapes (the queries' meaning is tested against a real Prometheus in
    //! `tests/remote_prometheus.rs`).
    use super::*;

    const S: i128 = 1_000_000_000;

    #[test]
    fn the_window_is_the_results_span_rounded_out_and_options_win() {
        let t = Times {
            queued: Some(100 * S + 5),
            execution_completed: Some(160 * S),
            output_upload_completed: Some(163 * S + 1),
            ..Times::default()
        };
        let u = Times {
            queued: Some(90 * S),
            worker_completed: Some(0),
            ..Times::default()
        };
        let span = results_span([t, u].iter());
        assert_eq!(span, Some((90 * S, 163 * S + 1)));
        let w = window(span, None, None, 10_000).expect("window");
        assert_eq!((w.start_s, w.end_s, w.seconds()), (90, 164, 74));
        assert_eq!((w.start_from, w.end_from), (Bound::Results, Bound::Results));
        let w = window(span, Some(50), None, 10_000).expect("window");
        assert_eq!((w.start_s, w.start_from, w.end_s), (50, Bound::Option, 164));
        let w = window(None, Some(50), None, 10_000).expect("window");
        assert_eq!((w.end_s, w.end_from), (10_000, Bound::Now));
        assert_eq!(window(None, None, None, 1), Err(WindowError::NoStart));
        assert!(matches!(
            window(span, Some(200), None, 10_000),
            Err(WindowError::Backwards { .. })
        ));
        assert_eq!(results_span([Times::default()].iter()), None);
        // One instant: a window of 1 s.
        let w = window(Some((5 * S, 5 * S)), None, None, 9).expect("window");
        assert_eq!(w.seconds(), 1);
    }

    #[test]
    fn instants_ago_and_rfc3339() {
        let now = 1_750_000_000;
        assert_eq!(parse_instant("2h", now), Ok(now - 7200));
        assert_eq!(parse_instant("1d12h30m5s", now), Ok(now - 131_405));
        assert_eq!(parse_instant("1w", now), Ok(now - 604_800));
        assert_eq!(parse_instant("1970-01-01T00:00:00Z", now), Ok(0));
        assert_eq!(
            parse_instant("2025-06-15T12:00:00Z", now),
            Ok(1_749_988_800)
        );
        assert_eq!(
            parse_instant("2025-06-15T14:00:00.123+02:00", now),
            Ok(1_749_988_800)
        );
        assert_eq!(
            parse_instant("2025-06-15 07:30:00-04:30", now),
            Ok(1_749_988_800)
        );
        for bad in [
            "",
            "7200",
            "2x",
            "h",
            "2h-",
            "2025-13-01T00:00:00Z",
            "2025-06-15T12:00:00",
            "2025-06-15T12:00:00.Z",
            "2025-06-15T12:00:00+2:00",
            "99999999999999999999h",
        ] {
            assert_eq!(parse_instant(bad, now), Err(InstantError), "{bad}");
        }
        assert_eq!(iso(1_749_988_800), "2025-06-15T12:00:00Z");
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn the_selector_takes_braces_or_not() {
        assert_eq!(selector(r#"{a="b", c="d"}"#), r#"a="b", c="d""#);
        assert_eq!(selector(DEFAULT_SELECTOR), DEFAULT_SELECTOR);
        assert_eq!(selector(" {} "), "");
    }

    #[test]
    fn queries_group_by_pod_then_name_then_instance() {
        let w = Window {
            start_s: 1000,
            end_s: 1600,
            start_from: Bound::Results,
            end_from: Bound::Results,
        };
        let q = Figure::Memory.query(r#"a="b""#, &w);
        assert_eq!(
            q,
            r#"max by (pod) (max_over_time(container_memory_working_set_bytes{a="b",pod!=""}[600s])) or max by (name) (max_over_time(container_memory_working_set_bytes{a="b",pod="",name!=""}[600s])) or max by (instance) (max_over_time(container_memory_working_set_bytes{a="b",pod="",name=""}[600s]))"#
        );
        let q = Figure::Cores.query("", &w);
        assert!(
            q.starts_with(r#"max by (pod) (max_over_time(rate(container_cpu_usage_seconds_total{pod!=""}[1m])[600s:15s]))"#),
            "{q}"
        );
        let q = Figure::Oom.query("x=\"y\"", &w);
        assert!(
            q.starts_with(r#"sum by (pod) ((max_over_time(container_oom_events_total{x="y",pod!=""}[600s]) - container_oom_events_total{x="y",pod!=""} offset 600s) or max_over_time(container_oom_events_total{x="y",pod!=""}[600s]))"#),
            "{q}"
        );
    }

    const URL: &str = "http://p:9090";

    #[test]
    fn answers_read_into_containers_busiest_first() {
        let mem = br#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"pod":"a"},"value":[1,"1073741824"]},
            {"metric":{"pod":"b"},"value":[1,"3221225472"]},
            {"metric":{"name":"runner-1"},"value":[1,"100"]}]}}"#;
        let cpu = br#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"pod":"a"},"value":[1,"3.456"]},
            {"metric":{"instance":"node:8080"},"value":[1,"1"]}]}}"#;
        let oom = br#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"pod":"b"},"value":[1,"1"]},{"metric":{"pod":"a"},"value":[1,"-1"]}]}}"#;
        let read = |f, b: &[u8]| read_answer(URL, f, 200, b).expect("answer");
        let c = containers([
            read(Figure::Memory, mem),
            read(Figure::Cores, cpu),
            read(Figure::Oom, oom),
        ]);
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["b", "a", "runner-1", "node:8080"]);
        assert_eq!(c[0].oom_events, Some(1));
        assert_eq!(c[0].peak_cores_centi, None);
        assert_eq!((c[1].peak_cores_centi, c[1].oom_events), (Some(346), None));
        assert_eq!(
            (c[2].label, c[3].label),
            (NameLabel::Name, NameLabel::Instance)
        );
    }

    #[test]
    fn bad_answers_are_one_line_each() {
        let err = |body: &[u8], http| {
            read_answer(URL, Figure::Memory, http, body)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            err(
                br#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#,
                400
            ),
            "the Prometheus at http://p:9090 refused the peak memory query (HTTP 400): bad_data: parse error at char 3"
        );
        assert!(err(b"<html>login</html>", 302).contains("answered HTTP 302 and not JSON"));
        assert!(err(b"Unauthorized", 401).ends_with(
            "answered HTTP 401: give its credentials with --prometheus-header 'Authorization: Bearer TOKEN' (or --tls-cert and --tls-key)"
        ));
        assert!(
            err(
                br#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#,
                200
            )
            .contains("not an instant vector")
        );
        for v in ["NaN", "+Inf", "-Inf", "x"] {
            let body = std::format!(
                r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{"pod":"p1"}},"value":[1,"{v}"]}}]}}}}"#
            );
            assert_eq!(
                err(body.as_bytes(), 200),
                std::format!(
                    "the Prometheus at http://p:9090 answered {v} for the peak memory of p1: not a number of a container"
                )
            );
        }
        assert!(
            err(
                br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{}}]}}"#,
                200
            )
            .contains("with no [time, \"value\"]")
        );
        assert_eq!(
            read_answer(
                URL,
                Figure::Oom,
                200,
                br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#
            ),
            Ok(Vec::new())
        );
    }
}
