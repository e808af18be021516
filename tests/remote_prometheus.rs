//! `actions --remote --prometheus URL` against a real Prometheus (Debian's
//! `prometheus` package, 2.42 here), its data loaded with `promtool tsdb
//! create-blocks-from openmetrics` from OpenMetrics text written below:
//! cAdvisor-shaped series (`container_memory_working_set_bytes`,
//! `container_cpu_usage_seconds_total`, `container_oom_events_total` with
//! `namespace`, `pod`, `container`), one sample every 15 s from an hour
//! before the build's window to an hour after it. The window: 2025-06-15
//! 12:00:00 to 12:10:00 UTC (in the past, so the blocks are older than the
//! head; retention 100y keeps them). The pods:
//! - `runner-busy`: 2 GiB in the window, 3.5 GiB from 12:04 to 12:06, 1 GiB
//!   outside; 3.5 cores from 12:02 to 12:08, 0.2 else; no OOM event;
//! - `runner-oom`: 1.5 GiB in the window; its first container's counter
//!   goes 0 → 1 at 12:04 and its series ends (killed), a second container
//!   starts at 12:05 from 0: one OOM event;
//! - `runner-fastkill`: a container created at 12:06 whose first sample
//!   already counts one OOM event (killed before its first scrape):
//!   `increase()` reads 0 there, headroom 1;
//! - `runner-outside`: busy only from 11:20 to 11:30 (6 GiB, 7 cores, an
//!   OOM event at 11:25), 200 MiB and 0.1 cores in the window: its peaks
//!   and its OOM event are not counted over the build's window;
//! - `other-ns`: another namespace, 30 GiB: not selected.
//!
//! The build's window comes from results stored in a real BuildGrid (the
//! harness of `tests/remote.rs`), their `ExecutedActionMetadata` queued at
//! the window's start and completed at its end.

// Shared harnesses: this file uses a part of each.
#[allow(dead_code)]
#[path = "remote/bgd.rs"]
mod bgd;
mod common;
#[allow(dead_code)]
#[path = "remote/results.rs"]
mod results;

use headroom::remote::action::Digest;
use headroom::remote::client::{self, Options};
use headroom::remote::endpoint::parse_url;
use headroom::remote::prom_http::{get_all, parse_target, query_path};
use headroom::remote::prometheus::{
    Bound, Container, DEFAULT_SELECTOR, Figure, NameLabel, Window, containers, read_answer,
    selector,
};
use headroom::remote::proto::{ActionResult, ExecutedActionMetadata};
use results::ts;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The build's window: 2025-06-15T12:00:00Z, and 600 s later.
const W0: i64 = 1_749_988_800;
const W1: i64 = W0 + 600;
const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;
const SEL: &str = r#"namespace="buildbarn",container="runner""#;

// ------------------------------------------------------------ the data

/// One series: its labels (after the selector's) and its samples.
struct Series {
    labels: String,
    samples: Vec<(i64, f64)>,
}

/// Samples every 15 s from `W0 - 3600` to `W1 + 3000`, where `f(t)` gives
/// one (a gauge's value, or for a counter its rate; `None`: no sample).
fn every_15s(mut f: impl FnMut(i64) -> Option<f64>) -> Vec<(i64, f64)> {
    (W0 - 3600..=W1 + 3000)
        .step_by(15)
        .filter_map(|t| f(t).map(|v| (t, v)))
        .collect()
}

/// A counter's samples from its rate per second.
fn counter(rate: impl Fn(i64) -> f64) -> Vec<(i64, f64)> {
    let mut total = 0.0;
    every_15s(|t| {
        total += rate(t) * 15.0;
        Some(total)
    })
}

fn series(labels: &str, samples: Vec<(i64, f64)>) -> Series {
    Series {
        labels: labels.to_string(),
        samples,
    }
}

/// The pods' series (see the module documentation), by family.
fn families() -> [(&'static str, &'static str, Vec<Series>); 3] {
    let inw = |t: i64| (W0..=W1).contains(&t);
    let busy_out = |t: i64| (W0 - 2400..=W0 - 1800).contains(&t);
    let gib = |g: f64| g * GIB as f64;
    let pod = |p: &str| format!(r#"{SEL},pod="{p}""#);
    let memory = vec![
        series(
            &pod("runner-busy"),
            every_15s(|t| {
                Some(gib(match t {
                    t if (W0 + 240..=W0 + 360).contains(&t) => 3.5,
                    t if inw(t) => 2.0,
                    _ => 1.0,
                }))
            }),
        ),
        series(
            &pod("runner-oom"),
            every_15s(|t| Some(gib(if inw(t) { 1.5 } else { 0.5 }))),
        ),
        series(
            &pod("runner-fastkill"),
            every_15s(|t| (t >= W0 + 360).then_some(gib(0.25))),
        ),
        series(
            &pod("runner-outside"),
            every_15s(|t| {
                Some(if busy_out(t) {
                    gib(6.0)
                } else {
                    200.0 * MIB as f64
                })
            }),
        ),
        series(
            r#"namespace="other",container="runner",pod="other-ns""#,
            every_15s(|_| Some(gib(30.0))),
        ),
    ];
    let cpu = vec![
        series(
            &pod("runner-busy"),
            counter(|t| {
                if (W0 + 120..=W0 + 480).contains(&t) {
                    3.5
                } else {
                    0.2
                }
            }),
        ),
        series(&pod("runner-oom"), counter(|_| 0.5)),
        series(
            &pod("runner-outside"),
            counter(|t| if busy_out(t) { 7.0 } else { 0.1 }),
        ),
        series(
            r#"namespace="other",container="runner",pod="other-ns""#,
            counter(|_| 30.0),
        ),
    ];
    let oom = vec![
        series(&pod("runner-busy"), every_15s(|_| Some(0.0))),
        series(
            &format!(r#"{},name="runner-oom-a""#, pod("runner-oom")),
            every_15s(|t| (t <= W0 + 270).then_some(if t >= W0 + 240 { 1.0 } else { 0.0 })),
        ),
        series(
            &format!(r#"{},name="runner-oom-b""#, pod("runner-oom")),
            every_15s(|t| (t >= W0 + 300).then_some(0.0)),
        ),
        series(
            &pod("runner-fastkill"),
            every_15s(|t| (t >= W0 + 360).then_some(1.0)),
        ),
        series(
            &pod("runner-outside"),
            every_15s(|t| Some(if t >= W0 - 2100 { 1.0 } else { 0.0 })),
        ),
        series(
            r#"namespace="other",container="runner",pod="other-ns""#,
            counter(|_| 0.01),
        ),
    ];
    [
        ("container_memory_working_set_bytes", "gauge", memory),
        ("container_cpu_usage_seconds", "counter", cpu),
        ("container_oom_events", "counter", oom),
    ]
}

/// The OpenMetrics text: each family's `# TYPE`, its samples (a counter's
/// with `_total`), `# EOF` last.
fn openmetrics() -> String {
    let mut out = String::new();
    for (family, kind, all) in families() {
        out.push_str(&format!("# TYPE {family} {kind}\n"));
        let name = match kind {
            "counter" => format!("{family}_total"),
            _ => family.to_string(),
        };
        for s in &all {
            for (t, v) in &s.samples {
                out.push_str(&format!("{name}{{{}}} {v} {t}\n", s.labels));
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

// ------------------------------------------------------- the Prometheus

/// A running Prometheus over [`openmetrics`], stopped by its PID when
/// dropped.
struct Prom {
    child: Child,
    port: u16,
    dir: PathBuf,
}

/// Runs a setup command; panics with its output when it fails.
fn run_setup(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} (Debian: apt-get install prometheus)"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Prom {
    fn start(tag: &str) -> Prom {
        let dir = bgd::temp_dir(tag);
        let om = dir.join("data.om");
        std::fs::write(&om, openmetrics()).expect("write openmetrics");
        let data = dir.join("data");
        run_setup(
            Command::new("promtool")
                .args(["tsdb", "create-blocks-from", "openmetrics"])
                .arg(&om)
                .arg(&data),
        );
        let cfg = dir.join("prometheus.yml");
        std::fs::write(&cfg, "global:\n  scrape_interval: 1h\n").expect("config");
        let port = bgd::free_port();
        let log = std::fs::File::create(dir.join("prometheus.log")).expect("log");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", cfg.display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .arg("--storage.tsdb.retention.time=100y")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start prometheus (Debian: apt-get install prometheus)");
        let mut p = Prom { child, port, dir };
        p.wait_ready();
        p
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
    }

    /// Until `GET /-/ready` answers 200.
    fn wait_ready(&mut self) {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("prometheus exited ({status}):\n{}", self.log());
            }
            if ready(self.port) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "prometheus not ready in 60 s:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// True when `GET /-/ready` on 127.0.0.1:`port` answers 200.
fn ready(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.write_all(b"GET /-/ready HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200")
}

impl Drop for Prom {
    fn drop(&mut self) {
        // This server's own PID, never a name.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- prometheus log ---\n{}", self.log());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

// ------------------------------------------------------------ the tests

/// The query layer against the Prometheus: the three queries over the
/// window, their answers read into containers.
fn ask(url: &str, sel: &str, w: &Window) -> Vec<Container> {
    let target = parse_target(url).expect("url");
    let paths: Vec<String> = Figure::ALL
        .iter()
        .map(|f| query_path(&target, &f.query(&selector(sel), w), w.end_s))
        .collect();
    let answers = get_all(&target, &paths).expect("answers");
    let read: Vec<_> = Figure::ALL
        .into_iter()
        .zip(&answers)
        .map(|(f, a)| read_answer(url, f, a.status, &a.body).expect("answer"))
        .collect();
    let [m, c, o]: [_; 3] = read.try_into().expect("three");
    containers([m, c, o])
}

fn pod(name: &str, mem: u64, cores_centi: u64, oom: u64) -> Container {
    Container {
        name: name.into(),
        label: NameLabel::Pod,
        peak_memory_bytes: Some(mem),
        peak_cores_centi: Some(cores_centi),
        oom_events: Some(oom),
    }
}

#[test]
fn peaks_cores_and_oom_events_per_pod_inside_the_window_only() {
    let p = Prom::start("prom-query");
    let w = Window {
        start_s: W0,
        end_s: W1,
        start_from: Bound::Results,
        end_from: Bound::Results,
    };
    let got = ask(&p.url(), SEL, &w);
    let fastkill = Container {
        peak_cores_centi: None,
        ..pod("runner-fastkill", GIB / 4, 0, 1)
    };
    assert_eq!(
        got,
        [
            pod("runner-busy", 7 * GIB / 2, 350, 0),
            pod("runner-oom", 3 * GIB / 2, 50, 1),
            fastkill,
            pod("runner-outside", 200 * MIB, 10, 0),
        ]
    );
    // The hour before: the outside pod's busy time and its OOM event; the
    // OOM pod's kill is after it. By a selector of namespace only.
    let before = Window {
        start_s: W0 - 3000,
        end_s: W0 - 600,
        ..w
    };
    let got = ask(&p.url(), r#"{namespace="buildbarn"}"#, &before);
    assert_eq!(got[0], pod("runner-outside", 6 * GIB, 700, 1), "{got:?}");
    assert_eq!(got[1].oom_events, Some(0), "{got:?}");
    // A selector that matches nothing: no container, not an error.
    assert_eq!(ask(&p.url(), r#"namespace="nobody""#, &w), []);
}

/// Writes the build's results: two stored on `runner-busy` (its name as
/// Buildbarn's JSON worker ID, and plain), queued at the window's start
/// and completed at its end; a third digest never stored.
fn store_build(port: u16) -> [String; 3] {
    let mut ep = parse_url(&format!("grpc://127.0.0.1:{port}"), None).expect("url");
    ep.instance = "main".into();
    let digest = |n: u64| Digest {
        hash: format!("{:064x}", 0x9f00 + n),
        size_bytes: 10 + n as i64,
    };
    let result = |worker: &str, first: i64, last: i64| ActionResult {
        exit_code: 0,
        execution_metadata: Some(ExecutedActionMetadata {
            worker: worker.into(),
            queued_timestamp: ts(first, 250_000_000),
            execution_start_timestamp: ts(first + 2, 0),
            execution_completed_timestamp: ts(last - 2, 0),
            worker_completed_timestamp: ts(last - 1, 500_000_000),
            ..Default::default()
        }),
    };
    let written = [
        (
            digest(1),
            result(r#"{"pod":"runner-busy","thread":"3"}"#, W0, W0 + 300),
        ),
        (digest(2), result("runner-busy", W0 + 100, W1)),
    ];
    client::update(&ep, &written, &Options::default()).expect("update");
    [1, 2, 3].map(|n| {
        let d = digest(n);
        format!("{}/{}", d.hash, d.size_bytes)
    })
}

/// One run of the binary: exit code, stdout, stderr.
fn headroom(args: &[&str]) -> (i32, String, String) {
    let out = common::headroom()
        .args(args)
        .output()
        .expect("run headroom");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A failure: exit `code`, nothing on stdout, one line on stderr.
fn one_line(r: (i32, String, String), code: i32, what: &str) -> String {
    assert_eq!((r.0, r.1.as_str()), (code, ""), "{what}: {}", r.2);
    let line = r.2.strip_suffix('\n').unwrap_or(&r.2);
    assert!(
        line.starts_with("headroom: ") && !line.contains('\n') && !line.contains("panicked"),
        "{what}: {:?}",
        r.2
    );
    line.to_string()
}

/// The WORKERS rows of a text report, split on white space.
fn rows(text: &str) -> Vec<Vec<String>> {
    let block = text
        .split_once("\nWORKERS: ")
        .unwrap_or_else(|| panic!("no WORKERS block:\n{text}"))
        .1;
    block
        .lines()
        .filter(|l| l.starts_with("  runner") || l.starts_with("  other"))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn the_binary_reports_workers_over_the_results_window() {
    let p = Prom::start("prom-cli");
    let dir = bgd::temp_dir("prom-bgd");
    let server = bgd::Bgd::start(&dir, None);
    let digests = store_build(server.port);
    let remote = format!("grpc://127.0.0.1:{}", server.port);
    let url = p.url();
    let mut base = vec!["actions", "--remote", &remote, "--instance", "main"];
    for d in &digests {
        base.extend(["--digest", d.as_str()]);
    }
    base.extend(["--prometheus", &url]);

    let mut args = base.clone();
    args.extend(["--worker-cores", "4", "--worker-mem", "4G"]);
    let (code, text, err) = headroom(&args);
    assert_eq!((code, err.as_str()), (0, ""), "{text}");
    if std::env::var_os("HEADROOM_SHOW").is_some() {
        eprintln!("{text}");
    }
    let head = format!(
        "\nWORKERS: {{{DEFAULT_SELECTOR}}} from the Prometheus at {url}, 2025-06-15T12:00:00Z to 2025-06-15T12:10:00Z (600 s; start from the results, end from the results); busiest (peak memory) first:\n  request (--worker-cores, --worker-mem): 4 cores, 4.00 GiB\n"
    );
    assert!(text.contains(&head), "{text}");
    let s = |v: &[&str]| v.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    assert_eq!(
        rows(&text),
        [
            s(&[
                "runner-busy",
                "3.50",
                "GiB",
                "3.50",
                "0",
                "2",
                "88",
                "%",
                "88",
                "%"
            ]),
            s(&[
                "runner-oom",
                "1.50",
                "GiB",
                "0.50",
                "1",
                "0",
                "38",
                "%",
                "13",
                "%"
            ]),
            s(&[
                "runner-fastkill",
                "256",
                "MiB",
                "-",
                "1",
                "0",
                "6",
                "%",
                "-"
            ]),
            s(&[
                "runner-outside",
                "200",
                "MiB",
                "0.10",
                "0",
                "0",
                "5",
                "%",
                "3",
                "%"
            ]),
        ],
        "{text}"
    );
    assert!(
        text.contains("\n  pod runner-oom: 1 OOM event in the window; 1 action has no stored result: a kill the action cache cannot show\n"),
        "{text}"
    );

    let mut args = base.clone();
    args.push("--json");
    let (code, json, err) = headroom(&args);
    assert_eq!((code, err.as_str()), (0, ""), "{json}");
    let v: Value = serde_json::from_str(&json).expect("json");
    let w = &v["workers"];
    assert_eq!(w[0]["pod"], "runner-busy");
    assert_eq!(w[0]["peak_memory_bytes"], 7 * GIB / 2);
    assert_eq!(w[0]["peak_cores"], 3.5);
    assert_eq!(
        (w[0]["oom_events"].as_u64(), w[0]["actions"].as_u64()),
        (Some(0), Some(2))
    );
    assert_eq!(
        (w[1]["pod"].as_str(), w[1]["oom_events"].as_u64()),
        (Some("runner-oom"), Some(1))
    );
    assert!(w[2]["peak_cores"].is_null(), "{json}");
    assert_eq!(w.as_array().map(Vec::len), Some(4));
    assert_eq!(v["prometheus"]["window_s"], 600);

    // --since and --until win over the results: the hour before.
    let mut args = base.clone();
    args.extend([
        "--since",
        "2025-06-15T11:10:00Z",
        "--until",
        "2025-06-15T11:50:00Z",
    ]);
    let (code, text, err) = headroom(&args);
    assert_eq!((code, err.as_str()), (0, ""), "{text}");
    assert!(
        text.contains("(2400 s; start from the option, end from the option)"),
        "{text}"
    );
    assert_eq!(
        rows(&text)[0][..6],
        s(&["runner-outside", "6.00", "GiB", "7.00", "1", "0"])
    );

    // A Prometheus that refuses the query, one that is not there, a bad
    // --since: one line each.
    let mut args = base.clone();
    args.extend(["--prometheus-selector", "namespace=~\"(\""]);
    let line = one_line(headroom(&args), 1, "bad selector");
    assert!(
        line.starts_with(&format!(
            "headroom: the Prometheus at {url} refused the peak memory query (HTTP 400): bad_data: "
        )),
        "{line}"
    );
    let closed = bgd::closed_port();
    let gone = format!("http://127.0.0.1:{}", closed.port);
    let mut args = base[..base.len() - 1].to_vec();
    args.push(&gone);
    let line = one_line(headroom(&args), 1, "unreachable");
    assert!(
        line.starts_with(&format!(
            "headroom: cannot reach the Prometheus at {gone}: "
        )),
        "{line}"
    );
    let mut args = base.clone();
    args.extend(["--since", "yesterday"]);
    let line = one_line(headroom(&args), 2, "bad --since");
    assert!(
        line.contains("--since 'yesterday': expected a time ago"),
        "{line}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Usage errors (exit 2, one line) before any server is asked.
#[test]
fn prometheus_options_that_do_not_go_together_are_usage_errors() {
    let digest = format!("{:064x}/1", 1);
    let cases: &[(&[&str], &str)] = &[
        (
            &["--prometheus", "http://127.0.0.1:1", "actions.csv"],
            "actions: --prometheus is for reading a cluster (its action cache or Prometheus), not an actions FILE",
        ),
        (
            &["--digest", &digest, "--since", "2h"],
            "actions: --since goes with --prometheus URL",
        ),
        (
            &["--digest", &digest, "--prometheus-selector", "a=\"b\""],
            "actions: --prometheus-selector goes with --prometheus URL",
        ),
        (
            &[
                "--digest",
                &digest,
                "--prometheus",
                "http://h:1",
                "--json-rows",
            ],
            "actions: --prometheus adds a block to the text and --json, not to --json-rows",
        ),
        (
            &["--digest", &digest, "--prometheus", "ftp://h:1"],
            "--prometheus ftp://h:1: expected http://HOST:PORT or https://HOST[:PORT][/PREFIX]",
        ),
        (
            &[
                "--digest",
                &digest,
                "--prometheus",
                "http://h:1",
                "--prometheus-header",
                "token s3cret",
            ],
            "--prometheus-header: expected 'NAME: VALUE'",
        ),
        (
            &[
                "--digest",
                &digest,
                "--prometheus",
                "http://h:1",
                "--until",
                "later",
            ],
            "--until 'later': expected a time ago",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["actions"];
        if !args.contains(&"actions.csv") {
            all.extend(["--remote", "grpc://127.0.0.1:1"]);
        }
        all.extend(args.iter());
        let line = one_line(headroom(&all), 2, want);
        assert!(line.contains(want), "{args:?}: {line}");
        assert!(!line.contains("s3cret"), "{line}");
    }
}

/// `--prometheus-header` and the path prefix reach the server: a plain
/// socket that records the request and answers one chunked vector.
#[test]
fn headers_and_the_path_prefix_reach_the_server() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let mut req = Vec::new();
        let mut buf = [0u8; 4096];
        while !req.ends_with(b"\r\n\r\n") {
            let n = s.read(&mut buf).expect("read");
            assert!(n > 0, "closed mid-request");
            req.extend_from_slice(&buf[..n]);
        }
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"p"},"value":[1,"2"]}]}}"#;
        let (a, b) = body.split_at(20);
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
            a.len(),
            b.len()
        );
        s.write_all(answer.as_bytes()).expect("write");
        String::from_utf8_lossy(&req).into_owned()
    });
    let mut target = parse_target(&format!("http://127.0.0.1:{port}/prom/")).expect("url");
    target
        .headers
        .push(("authorization".into(), "Bearer t0k".into()));
    let path = query_path(&target, "up", 1_750_000_000);
    let answers = get_all(&target, &[path]).expect("answer");
    let req = server.join().expect("server");
    assert!(
        req.starts_with("GET /prom/api/v1/query?query=up&time=1750000000 HTTP/1.1\r\n"),
        "{req}"
    );
    assert!(
        req.to_ascii_lowercase()
            .contains("\r\nauthorization: bearer t0k\r\n"),
        "{req}"
    );
    let got = read_answer(
        &target.url,
        Figure::Memory,
        answers[0].status,
        &answers[0].body,
    )
    .expect("vector");
    assert_eq!(got, [(NameLabel::Pod, "p".to_string(), 2.0)]);
}
