//! `headroom actions --remote` end to end: the built binary, run as a user
//! runs it, against a real BuildGrid 0.4.4 (the harness in `remote/bgd.rs`).
//!
//! Results are first written with `UpdateActionResult` in every worker's
//! shape (messages as each project's .proto declares them, see
//! `src/remote/proto.rs`): Buildbarn `POSIXResourceUsage` killed by
//! `KILL` with exit code -1, BuildBuddy `UsageStats` (field 1002),
//! Buildfarm's `usage` map, no metadata, and an unknown `Any` only. Then
//! the same build is named by each log format, written here the way its
//! tool writes it:
//! - Buck2 event log `*_events.pb.zst`: zstd over the `Invocation`, then
//!   length-delimited `CommandProgressForWrite` records whose `event` (1)
//!   is a `BuckEvent` (Buck2 `app/buck2_event_log/src/write.rs`,
//!   `app/buck2_data/data.proto`: `span_end` 21, `action_execution` 51,
//!   `key` 1 / `target_label` 2 / `label` 1, `name` 5, `failed` 6,
//!   `commands` 25, `details` 1, `cmd_stderr` 3, `signed_exit_code` 4
//!   (sint32), `command_kind` 5: `local_command` 1, `remote_command` 2 with
//!   `action_digest` 1 as `HASH:SIZE`);
//! - `buck2 log show`: the `Invocation` line, then `{"Event": ...}` lines,
//!   serde's names of the same messages (`app/buck2_cmd_log_client/src/
//!   show_log.rs`, `app/buck2_data/build.rs`);
//! - Bazel 7 `--execution_log_json_file`: pretty-printed `SpawnExec`
//!   objects, proto3 JSON (camelCase, int64 as strings), and the compact
//!   `--execution_log_compact_file`: zstd over varint-delimited
//!   `ExecLogEntry` (`invocation` 2, `spawn` 7: `args` 1, `target_label` 7,
//!   `mnemonic` 8, `exit_code` 9, `runner` 11, `digest` 16), Bazel
//!   `src/main/protobuf/spawn.proto`, `CompactSpawnLogContext.java`;
//! - Bazel `--execution_log_binary_file`: the same `SpawnExec`s
//!   varint-length-delimited, uncompressed (`command_args` 1,
//!   `listed_outputs` 5, `mnemonic` 10, `runner` 12, `exit_code` 15,
//!   `target_label` 18, `digest` 19); and a Bazel 4-6 JSON log, whose
//!   spawns carry no `digest`: those remote ones are counted, not looked up;
//! - `--digest HASH/SIZE` and `HASH:SIZE`.
//!
//! `--json-rows` is then compared with what was written, action by action,
//! and the text's counts checked. Errors: one line on stderr, exit 1 (2
//! for usage), nothing on stdout.

#[path = "remote/bgd.rs"]
mod bgd;
mod common;
#[path = "remote/results.rs"]
mod results;

use headroom::remote::action::Digest;
use headroom::remote::client::{self, Options};
use headroom::remote::endpoint::{Endpoint, parse_url};
use headroom::remote::proto::{self, ActionResult, Duration};
use prost::Message;
use prost::encoding::{WireType, encode_key, encode_varint};
use results::{any, meta};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// gcc's words when the OOM killer SIGKILLs its cc1plus.
const KILLED: &str =
    "g++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n";

// ---------------------------------------------------------------- the build

/// How an action of the made-up build ran.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ran {
    /// Remotely (or a remote cache hit): looked up.
    Remote,
    /// On the build host: counted, not looked up.
    Local,
    /// Remotely, and failed: cc1plus killed (never cached).
    Killed,
}

/// One action of the build: Buck2 `root//PKG:NAME (IDENT)`, Bazel
/// `//PKG:NAME`; digest number `n`.
struct Act {
    pkg: &'static str,
    name: &'static str,
    category: &'static str,
    ident: &'static str,
    n: u64,
    ran: Ran,
}

const fn act(
    pkg: &'static str,
    name: &'static str,
    category: &'static str,
    n: u64,
    ran: Ran,
) -> Act {
    Act {
        pkg,
        name,
        category,
        ident: name,
        n,
        ran,
    }
}

/// The build every log names: one action per worker shape (1 Buildbarn
/// killed, 2 BuildBuddy, 3 Buildfarm, 4 no metadata, 5 unknown Any), one
/// never stored (6), a local link, a killed compile (7), and action 1
/// again (each digest is looked up once).
const BUILD: [Act; 9] = [
    act("app", "oom.cpp", "cxx_compile", 1, Ran::Remote),
    act("lib", "bb.cpp", "cxx_compile", 2, Ran::Remote),
    act("lib", "farm.cpp", "cxx_compile", 3, Ran::Remote),
    act("lib", "plain", "cxx_link", 4, Ran::Remote),
    act("gen", "vendor", "genrule", 5, Ran::Remote),
    act("lib", "gone.cpp", "cxx_compile", 6, Ran::Remote),
    act("lib", "local", "cxx_link", 8, Ran::Local),
    act("big", "huge.cpp", "cxx_compile", 7, Ran::Killed),
    act("app", "oom.cpp", "cxx_compile", 1, Ran::Remote),
];

/// Actions looked up (each digest once), stored, and local in [`BUILD`].
const LOOKED_UP: usize = 7;
const STORED: usize = 5;
const LOCAL: usize = 1;

fn hash(n: u64) -> String {
    format!("{:064x}", 0xe2e0_0000 + n)
}

fn digest(n: u64) -> Digest {
    Digest {
        hash: hash(n),
        size_bytes: 100 + n as i64,
    }
}

/// `HASH/SIZE` (or with `sep`).
fn digest_text(n: u64, sep: char) -> String {
    format!("{}{sep}{}", hash(n), 100 + n)
}

fn buck2_id(a: &Act) -> String {
    format!("root//{}:{} ({})", a.pkg, a.name, a.ident)
}

fn bazel_id(a: &Act) -> String {
    format!("//{}:{}", a.pkg, a.name)
}

/// The id in a JSON log, which lists each spawn's outputs: the target and
/// the file name of its first output.
fn bazel_json_id(a: &Act) -> String {
    format!("{} ({}.o)", bazel_id(a), a.name)
}

// ------------------------------------------------ results, as workers store

fn secs(seconds: i64, nanos: i32) -> Option<Duration> {
    Some(Duration { seconds, nanos })
}

/// Buildbarn (`resourceusage.proto`): `rss` bytes of the largest process,
/// 50 s user + 4.5 s system; `signal` when one ended it (exit code -1).
fn buildbarn(rss: u64, signal: &str) -> ActionResult {
    let posix = proto::PosixResourceUsage {
        user_time: secs(50, 0),
        system_time: secs(4, 500_000_000),
        maximum_resident_set_size: rss as i64,
        termination_signal: signal.into(),
        ..Default::default()
    };
    ActionResult {
        exit_code: if signal.is_empty() { 0 } else { -1 },
        execution_metadata: Some(meta(
            "bb-worker-1",
            vec![any(proto::POSIX_RESOURCE_USAGE_URL, posix.encode_to_vec())],
        )),
    }
}

/// BuildBuddy: `UsageStats` at 1002 (5 GiB of the whole cgroup, 168 s
/// CPU), `virtual_execution_duration` 42 s.
fn buildbuddy() -> ActionResult {
    let mut m = meta("executor-7", vec![]);
    m.virtual_execution_duration = secs(42, 0);
    m.usage_stats = Some(proto::UsageStats {
        peak_memory_bytes: 5 << 30,
        cpu_nanos: 168_000_000_000,
        ..Default::default()
    });
    ActionResult {
        exit_code: 0,
        execution_metadata: Some(m),
    }
}

/// Buildfarm: `WorkerExecutedMetadata.usage` `cpu.usage_usec` 90 s.
fn buildfarm() -> ActionResult {
    let mut w = proto::WorkerExecutedMetadata::default();
    w.usage.insert("cpu.usage_usec".into(), 90_000_000);
    ActionResult {
        exit_code: 0,
        execution_metadata: Some(meta(
            "farm-3",
            vec![any(proto::WORKER_EXECUTED_METADATA_URL, w.encode_to_vec())],
        )),
    }
}

/// Results 1-5 of [`BUILD`] (6 and 7 are never written: NOT_FOUND).
fn results() -> Vec<(Digest, ActionResult)> {
    let vendor = any("type.googleapis.com/example.vendor.Cost", vec![0x08, 0x2a]);
    vec![
        (digest(1), buildbarn(3 << 30, "KILL")),
        (digest(2), buildbuddy()),
        (digest(3), buildfarm()),
        (
            digest(4),
            ActionResult {
                exit_code: 0,
                execution_metadata: None,
            },
        ),
        (
            digest(5),
            ActionResult {
                exit_code: 1,
                execution_metadata: Some(meta("w", vec![vendor])),
            },
        ),
    ]
}

/// What `--json-rows` must say of digest `n`, beside `id`, `category`,
/// `digest` and the figures derived from these (`cores`, `max_rss_gib`).
fn expected_row(n: u64) -> Value {
    let none = json!({"stored": false, "wall_s": null, "user_s": null, "sys_s": null,
        "cpu_s": null, "max_rss_bytes": null, "rss_scope": null, "termination_signal": null,
        "exit_code": null, "worker": null, "source": null, "queued_s": null});
    let mut row = none.clone();
    let set = |row: &mut Value, v: Value| {
        for (k, v) in v.as_object().expect("object") {
            row[k] = v.clone();
        }
    };
    let timed = json!({"stored": true, "wall_s": 60.5, "queued_s": 2.0});
    match n {
        1 => set(
            &mut row,
            json!({"stored": true, "wall_s": 60.5, "user_s": 50.0, "sys_s": 4.5, "cpu_s": 54.5,
                "max_rss_bytes": 3u64 << 30, "rss_scope": "largest_process",
                "termination_signal": "KILL", "exit_code": -1, "worker": "bb-worker-1",
                "source": "buildbarn", "queued_s": 2.0}),
        ),
        2 => set(
            &mut row,
            json!({"stored": true, "wall_s": 42.0, "cpu_s": 168.0,
                "max_rss_bytes": 5u64 << 30, "rss_scope": "whole_action", "exit_code": 0,
                "worker": "executor-7", "source": "buildbuddy", "queued_s": 2.0}),
        ),
        3 => {
            set(&mut row, timed);
            set(
                &mut row,
                json!({"cpu_s": 90.0, "exit_code": 0, "worker": "farm-3", "source": "buildfarm"}),
            );
        }
        4 => set(&mut row, json!({"stored": true, "exit_code": 0})),
        5 => {
            set(&mut row, timed);
            set(&mut row, json!({"exit_code": 1, "worker": "w"}));
        }
        _ => {}
    }
    row
}

// ------------------------------------------------------------- the writers

fn put_len(tag: u32, body: &[u8], out: &mut Vec<u8>) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

fn put_varint(tag: u32, v: u64, out: &mut Vec<u8>) {
    encode_key(tag, WireType::Varint, out);
    encode_varint(v, out);
}

fn msg(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    f(&mut out);
    out
}

/// A Buck2 `BuckEvent` whose `span_end` is `ActionExecutionEnd` of `a`.
fn buck2_event(a: &Act) -> Vec<u8> {
    let label = msg(|o| {
        put_len(1, format!("root//{}", a.pkg).as_bytes(), o);
        put_len(2, a.name.as_bytes(), o);
    });
    let key = msg(|o| put_len(2, &msg(|o| put_len(1, &label, o)), o));
    let name = msg(|o| {
        put_len(1, a.category.as_bytes(), o);
        put_len(2, a.ident.as_bytes(), o);
    });
    let d = digest_text(a.n, ':');
    let kind = match a.ran {
        Ran::Local => msg(|o| {
            let local = msg(|o| {
                put_len(1, b"cc", o);
                put_len(3, d.as_bytes(), o);
            });
            put_len(1, &local, o);
        }),
        Ran::Remote | Ran::Killed => msg(|o| put_len(2, &msg(|o| put_len(1, d.as_bytes(), o)), o)),
    };
    let failed = a.ran == Ran::Killed;
    let details = msg(|o| {
        if failed {
            put_len(3, KILLED.as_bytes(), o);
            put_varint(4, 2, o); // sint32 1, zigzag
        }
        put_len(5, &kind, o);
    });
    let command = msg(|o| {
        put_len(1, &details, o);
        put_len(if failed { 3 } else { 2 }, &[], o); // status: failure / success
    });
    let end = msg(|o| {
        put_len(1, &key, o);
        put_len(5, &name, o);
        put_varint(6, u64::from(failed), o);
        put_len(25, &command, o);
    });
    msg(|o| {
        put_len(2, b"c0ffee00-0000-4000-8000-000000000000", o);
        put_len(21, &msg(|o| put_len(51, &end, o)), o);
    })
}

/// The Buck2 event log, decompressed: `Invocation`, then each event as a
/// delimited `CommandProgressForWrite`, then the command's result.
fn buck2_plain() -> Vec<u8> {
    let mut out = Vec::new();
    let invocation = msg(|o| {
        for arg in ["buck2", "build", "//..."] {
            put_len(1, arg.as_bytes(), o);
        }
    });
    encode_varint(invocation.len() as u64, &mut out);
    out.extend_from_slice(&invocation);
    let records = BUILD
        .iter()
        .map(|a| msg(|o| put_len(1, &buck2_event(a), o)))
        .chain([msg(|o| put_len(2, &[0x0a, 0], o))]);
    for r in records {
        encode_varint(r.len() as u64, &mut out);
        out.extend_from_slice(&r);
    }
    out
}

/// `buck2 log show` of the same build.
fn buck2_json() -> String {
    let mut out = json!({"command_line_args": ["buck2", "build", "//..."],
        "working_dir": "/src/repo", "trace_id": "c0ffee00-0000-4000-8000-000000000000"})
    .to_string();
    out.push('\n');
    for a in &BUILD {
        let d = digest_text(a.n, ':');
        let failed = a.ran == Ran::Killed;
        let kind = match a.ran {
            Ran::Local => json!({"LocalCommand": {"action_digest": d, "argv": ["cc"]}}),
            _ => json!({"RemoteCommand": {"action_digest": d, "cache_hit": false,
                "cache_hit_type": 2, "remote_dep_file_key": null}}),
        };
        let status = if failed {
            json!({"Failure": {}})
        } else {
            json!({"Success": {}})
        };
        let stderr = if failed { KILLED } else { "" };
        let end = json!({"key": {"owner": {"TargetLabel": {"label":
                {"package": format!("root//{}", a.pkg), "name": a.name}}}},
            "name": {"category": a.category, "identifier": a.ident}, "failed": failed,
            "commands": [{"details": {"command_kind": {"command": kind},
                "signed_exit_code": i32::from(failed), "stderr": stderr, "stdout": ""},
                "status": status}]});
        let line = json!({"Event": {"data": {"SpanEnd": {"data": {"ActionExecution": end}}},
            "span_id": 9, "timestamp": [1_700_000_000, 0]}});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// Bazel's runner for `a` (`spawn.proto` `runner`'s comment).
fn bazel_runner(a: &Act) -> &'static str {
    match a.ran {
        Ran::Local => "linux-sandbox",
        _ => "remote",
    }
}

/// `--execution_log_json_file` of the same build (the killed compile
/// ran remotely with exit code 1).
fn bazel_json() -> String {
    let mut out = String::new();
    for a in &BUILD {
        let v = json!({"commandArgs": ["gcc", "-c"], "environmentVariables": [],
            "listedOutputs": [format!("bazel-out/k8-fastbuild/bin/{}/{}.o", a.pkg, a.name)],
            "remotable": true, "cacheable": true,
            "mnemonic": a.category, "runner": bazel_runner(a), "cacheHit": false,
            "exitCode": i32::from(a.ran == Ran::Killed), "targetLabel": bazel_id(a),
            "digest": {"hash": hash(a.n), "sizeBytes": (100 + a.n).to_string(),
                "hashFunctionName": "SHA-256"},
            "metrics": {"totalTime": "1.5s"}});
        out.push_str(&serde_json::to_string_pretty(&v).expect("json"));
    }
    out
}

/// `--execution_log_binary_file` of the same build: one delimited
/// `SpawnExec` per action, fields in number order as protobuf-java writes.
fn bazel_binary() -> Vec<u8> {
    let mut out = Vec::new();
    for a in &BUILD {
        let d = msg(|o| {
            put_len(1, hash(a.n).as_bytes(), o);
            put_varint(2, 100 + a.n, o);
            put_len(3, b"SHA-256", o);
        });
        let output = format!("bazel-out/k8-fastbuild/bin/{}/{}.o", a.pkg, a.name);
        let spawn = msg(|o| {
            put_len(1, b"gcc", o);
            put_len(1, b"-c", o);
            put_len(5, output.as_bytes(), o);
            put_varint(6, 1, o);
            put_len(10, a.category.as_bytes(), o);
            put_len(12, bazel_runner(a).as_bytes(), o);
            put_varint(15, u64::from(a.ran == Ran::Killed), o);
            put_len(18, bazel_id(a).as_bytes(), o);
            put_len(19, &d, o);
        });
        encode_varint(spawn.len() as u64, &mut out);
        out.extend_from_slice(&spawn);
    }
    out
}

/// A Bazel 4-6 `--execution_log_json_file`: [`bazel_json`], then spawns
/// that hit the remote cache with no `digest` (Bazel writes it from 7).
fn bazel_json_before_7(hits: usize) -> String {
    let mut out = bazel_json();
    for i in 0..hits {
        let v = json!({"commandArgs": ["javac"], "listedOutputs": [format!("bazel-out/k8-fastbuild/bin/j/lib{i}.jar")],
            "remotable": true, "cacheable": true, "progressMessage": "Building lib.jar",
            "mnemonic": "Javac", "runner": "remote cache hit", "remoteCacheHit": true, "exitCode": 0});
        out.push_str(&serde_json::to_string_pretty(&v).expect("json"));
    }
    out
}

/// `--execution_log_compact_file`, decompressed: the `Invocation` entry,
/// then one `Spawn` entry per action.
fn bazel_compact_plain() -> Vec<u8> {
    let invocation = msg(|o| put_len(2, &msg(|o| put_len(1, b"SHA-256", o)), o));
    let spawns = BUILD.iter().map(|a| {
        let d = msg(|o| {
            put_len(1, hash(a.n).as_bytes(), o);
            put_varint(2, 100 + a.n, o);
        });
        let spawn = msg(|o| {
            put_len(1, b"gcc", o);
            put_len(7, bazel_id(a).as_bytes(), o);
            put_len(8, a.category.as_bytes(), o);
            put_varint(9, u64::from(a.ran == Ran::Killed), o);
            put_len(11, bazel_runner(a).as_bytes(), o);
            put_len(16, &d, o);
        });
        msg(|o| put_len(7, &spawn, o))
    });
    let mut out = Vec::new();
    for e in [invocation].into_iter().chain(spawns) {
        encode_varint(e.len() as u64, &mut out);
        out.extend_from_slice(&e);
    }
    out
}

/// `bytes` through the zstd CLI, as `zstd -q -c` writes a file.
fn zstd(bytes: &[u8]) -> Vec<u8> {
    let mut child = Command::new("zstd")
        .args(["-q", "-c", "-9"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("zstd CLI");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("zstd output");
    writer.join().expect("writer").expect("write to zstd");
    assert!(out.status.success(), "zstd failed");
    out.stdout
}

// ----------------------------------------------------------- the binary

/// What one run of the binary did.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `headroom ARGS` in `cwd`, `stdin` fed, `env` set (`None`: removed).
fn run_in(args: &[&str], cwd: Option<&Path>, stdin: &[u8], env: &[(&str, Option<&str>)]) -> Run {
    let mut cmd = common::headroom();
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let mut child = cmd.spawn().expect("run headroom");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    // Ignored: headroom may exit before it reads standard input.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("headroom output");
    let _ = writer.join();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn run(args: &[&str]) -> Run {
    run_in(args, None, &[], &[])
}

/// A success: exit 0, nothing on stderr. Returns stdout.
fn ok(r: Run, what: &str) -> String {
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (0, ""),
        "{what}: stdout:\n{}",
        r.stdout
    );
    r.stdout
}

/// A failure as the issue asks: exit `code`, nothing on stdout, one line
/// on stderr (`headroom: ...`), no panic. Returns that line.
fn one_line(r: Run, code: i32, what: &str) -> String {
    assert_eq!(r.code, code, "{what}: stderr {:?}", r.stderr);
    assert_eq!(r.stdout, "", "{what}: a partial table on stdout");
    let line = r.stderr.strip_suffix('\n').unwrap_or(&r.stderr);
    assert!(
        !line.contains('\n') && line.starts_with("headroom: "),
        "{what}: not one line: {:?}",
        r.stderr
    );
    assert!(!line.contains("panicked"), "{what}: {line}");
    line.to_string()
}

/// A failure that still prints JSON (`--json`, `--json-rows`): exit 1,
/// one line on stderr, stdout valid JSON. Returns both.
fn json_failure(r: Run, what: &str) -> (Value, String) {
    let stdout = r.stdout.clone();
    let line = one_line(
        Run {
            stdout: String::new(),
            ..r
        },
        1,
        what,
    );
    let v = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{what}: stdout is not JSON ({e}): {stdout:?}"));
    (v, line)
}

fn plain_endpoint(port: u16, instance: &str) -> Endpoint {
    let mut ep = parse_url(&format!("grpc://127.0.0.1:{port}"), None).expect("url");
    ep.instance = instance.into();
    ep
}

fn remote_args(port: u16) -> Vec<String> {
    vec![
        "actions".into(),
        "--remote".into(),
        format!("grpc://127.0.0.1:{port}"),
        "--instance".into(),
        "main".into(),
    ]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

// ------------------------------------------------------------- the checks

/// The actions a log names, in its order, each digest once: (id,
/// category, digest number).
fn named(id: IdOf) -> Vec<(String, String, u64)> {
    let mut out: Vec<(String, String, u64)> = Vec::new();
    for a in BUILD.iter().filter(|a| a.ran != Ran::Local) {
        if !out.iter().any(|(_, _, n)| *n == a.n) {
            out.push((id(a), a.category.to_string(), a.n));
        }
    }
    out
}

/// Equal, numbers compared as f64 to a thousandth.
fn same(got: &Value, want: &Value) -> bool {
    match (got.as_f64(), want.as_f64()) {
        (Some(g), Some(w)) => (g - w).abs() < 1e-3,
        _ => got == want,
    }
}

/// `--json-rows` against what was written, action by action.
fn check_rows(stdout: &str, want: &[(String, String, u64)], what: &str) {
    let rows: Value =
        serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{what}: {e}: {stdout}"));
    let rows = rows.as_array().expect("an array");
    assert_eq!(rows.len(), want.len(), "{what}: {stdout}");
    for (row, (id, category, n)) in rows.iter().zip(want) {
        let at = format!("{what}: action {n} ({id})");
        assert_eq!(row["id"], json!(id), "{at}");
        let category = if category.is_empty() {
            Value::Null
        } else {
            json!(category)
        };
        assert_eq!(row["category"], category, "{at}");
        assert_eq!(row["digest"], json!(digest_text(*n, '/')), "{at}");
        for (k, v) in expected_row(*n).as_object().expect("object") {
            assert!(same(&row[k], v), "{at}: {k} is {}, written {v}", row[k]);
        }
        // Derived: cores = cpu / wall, max_rss_gib = bytes / 2^30.
        let cores = row["cpu_s"].as_f64().zip(row["wall_s"].as_f64());
        match cores {
            Some((cpu, wall)) => assert!(
                (row["cores"].as_f64().expect("cores") - cpu / wall).abs() < 0.006,
                "{at}"
            ),
            None => assert_eq!(row["cores"], Value::Null, "{at}"),
        }
        match row["max_rss_bytes"].as_f64() {
            Some(b) => assert!(
                (row["max_rss_gib"].as_f64().expect("gib") - b / f64::from(1 << 30)).abs() < 0.006,
                "{at}"
            ),
            None => assert_eq!(row["max_rss_gib"], Value::Null, "{at}"),
        }
    }
}

/// The text report's counts: stored of looked up, the signal (KILL named),
/// NOT_FOUND, local actions, and from a Buck2 log the killed compile.
fn check_text(text: &str, local: usize, buck2: bool, killed_id: &str, what: &str) {
    let first = text.lines().next().unwrap_or("");
    assert!(
        first.starts_with(&format!(
            "{STORED} of {LOOKED_UP} actions have a stored result | wall "
        )),
        "{what}: {text}"
    );
    let has = |s: &str| assert!(text.contains(s), "{what}: no {s:?} in:\n{text}");
    has("\nactions that ended on a signal: 1\n");
    has("(KILL: the OOM killer's signal) on bb-worker-1\n");
    has(&format!(
        "\nno stored result (NOT_FOUND: evicted, or the action failed; failed actions are not cached): {}\n",
        LOOKED_UP - STORED
    ));
    has("2 actions stored with no usage the worker measured");
    has("auxiliary_metadata entries of types not read (request metadata, vendor messages): 1\n");
    let local_line = format!("actions the logs show ran locally (not looked up): {local}\n");
    assert_eq!(text.contains(&local_line), local > 0, "{what}: {text}");
    let killed = "\nkilled, from the Buck2 logs (failed, so never cached): 1\n";
    assert_eq!(text.contains(killed), buck2, "{what}: {text}");
    if buck2 {
        has(&format!(
            "  {killed_id} [cxx_compile]: g++: fatal error: Killed signal terminated program cc1plus\n"
        ));
    }
}

/// The text's "longest" table agrees with what was written, row by row:
/// category, wall, cores, RSS, whose RSS, signal, worker.
fn check_longest(text: &str, want: &[(String, String, u64)], what: &str) {
    let table = text
        .split_once("\nlongest ")
        .and_then(|(_, t)| t.split_once("\n\n"))
        .map_or("", |(t, _)| t);
    let mut listed = 0;
    for (id, category, n) in want {
        let row = expected_row(*n);
        let (Some(wall), false) = (row["wall_s"].as_f64(), row["cpu_s"].is_null()) else {
            continue; // not stored, no timestamps or no usage: not a longest row
        };
        listed += 1;
        let line = table
            .lines()
            .find_map(|l| l.strip_prefix(id.as_str()))
            .unwrap_or_else(|| panic!("{what}: {id} not in the longest table:\n{text}"));
        let dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let cpu = row["cpu_s"].as_f64();
        let rss = row["max_rss_bytes"].as_f64();
        let scope = row["rss_scope"]
            .as_str()
            .map(|s| s.replace("largest_", "").replace("whole_", ""));
        let mut cells = vec![
            category.clone(),
            format!("{wall:.1}"),
            dash(cpu.map(|c| format!("{:.2}", c / wall))),
            dash(rss.map(|b| format!("{:.2}", b / f64::from(1 << 30)))),
            dash(scope),
        ];
        cells.extend(row["termination_signal"].as_str().map(String::from));
        cells.extend(row["worker"].as_str().map(String::from));
        let got: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(got, cells, "{what}: {id}:\n{text}");
    }
    assert!(table.starts_with(&format!("{listed}:\n")), "{what}: {text}");
}

/// How a log format names an action: [`buck2_id`] or [`bazel_id`].
type IdOf = fn(&Act) -> String;

/// Writes the five logs into `dir`; returns (path, is Buck2, ids).
fn write_logs(dir: &Path) -> Vec<(String, bool, IdOf)> {
    let buck2_pb = dir.join("x_events.pb.zst");
    std::fs::write(&buck2_pb, zstd(&buck2_plain())).expect("write");
    let buck2_show = dir.join("log_show.json");
    std::fs::write(&buck2_show, buck2_json()).expect("write");
    let bazel = dir.join("exec.json");
    std::fs::write(&bazel, bazel_json()).expect("write");
    let compact = dir.join("exec_log.zst");
    std::fs::write(&compact, zstd(&bazel_compact_plain())).expect("write");
    let binary = dir.join("exec.log");
    std::fs::write(&binary, bazel_binary()).expect("write");
    let p = |f: &Path| f.display().to_string();
    vec![
        (p(&buck2_pb), true, buck2_id),
        (p(&buck2_show), true, buck2_id),
        (p(&bazel), false, bazel_json_id),
        (p(&compact), false, bazel_id),
        (p(&binary), false, bazel_json_id),
    ]
}

/// Every log format, `--log -`, and `--digest` by hand name the build
/// whose results were written in each worker's shape; the rows and the
/// text agree with what was written.
#[test]
fn every_log_format_reports_what_the_workers_stored() {
    let dir = bgd::temp_dir("cli-formats");
    let server = bgd::Bgd::start(&dir, None);
    let ep = plain_endpoint(server.port, "main");
    client::update(&ep, &results(), &Options::default()).expect("update");
    let base = remote_args(server.port);
    let killed = buck2_id(&BUILD[7]);
    for (log, buck2, id) in write_logs(&dir) {
        let mut args = strs(&base);
        args.extend(["--log", &log]);
        let text = ok(run(&args), &log);
        check_text(&text, LOCAL, buck2, &killed, &log);
        check_longest(&text, &named(id), &log);
        args.push("--json-rows");
        check_rows(&ok(run(&args), &log), &named(id), &log);
    }
    // `buck2 log show | headroom actions --log -`.
    let mut args = strs(&base);
    args.extend(["--log", "-", "--json-rows"]);
    let rows = ok(run_in(&args, None, buck2_json().as_bytes(), &[]), "stdin");
    check_rows(&rows, &named(buck2_id), "--log -");
    let text = ok(
        run_in(&args[..args.len() - 1], None, buck2_json().as_bytes(), &[]),
        "stdin",
    );
    check_text(&text, LOCAL, true, &killed, "--log -");

    // By hand, both separators; each digest once.
    let hand: Vec<String> = named(buck2_id)
        .iter()
        .enumerate()
        .map(|(i, (_, _, n))| digest_text(*n, if i % 2 == 0 { '/' } else { ':' }))
        .collect();
    let mut args = strs(&base);
    for d in &hand {
        args.extend(["--digest", d]);
    }
    args.extend(["--digest", &hand[0]]);
    check_text(&ok(run(&args), "--digest"), 0, false, "", "--digest");
    args.push("--json-rows");
    let want: Vec<(String, String, u64)> = named(buck2_id)
        .into_iter()
        .map(|(_, _, n)| (digest_text(n, '/'), String::new(), n))
        .collect();
    check_rows(&ok(run(&args), "--digest rows"), &want, "--digest");
    report_json(&base, &dir.join("x_events.pb.zst"));
    before_bazel_7(&base, &dir);
}

/// A Bazel 4-6 JSON log (issue 34: one remote spawn without a digest
/// refused it whole): the spawns with a digest are looked up, those
/// without counted in one line and in `--json`.
fn before_bazel_7(base: &[String], dir: &Path) {
    let log = dir.join("exec_bazel6.json");
    std::fs::write(&log, bazel_json_before_7(2)).expect("write");
    let log = log.display().to_string();
    let mut args = strs(base);
    args.extend(["--log", &log]);
    let text = ok(run(&args), "Bazel 6 JSON");
    check_text(&text, LOCAL, false, "", "Bazel 6 JSON");
    let line = "\n2 remote spawns carry no action digest (Bazel before 7 writes none): counted, not looked up\n";
    assert!(text.contains(line), "{text}");
    args.push("--json");
    let v: Value = serde_json::from_str(&ok(run(&args), "Bazel 6 --json")).expect("--json");
    assert_eq!(v["remote_no_digest"], 2, "{v}");
    assert_eq!(v["looked_up"], LOOKED_UP, "{v}");
}

/// `--json`: the report object's counts.
fn report_json(base: &[String], log: &Path) {
    let log = log.display().to_string();
    let mut args = strs(base);
    args.extend(["--log", &log, "--json"]);
    let out = ok(run(&args), "--json");
    let v: Value = serde_json::from_str(&out).expect("--json is JSON");
    let counts = [
        ("looked_up", LOOKED_UP),
        ("stored", STORED),
        ("not_found", LOOKED_UP - STORED),
        ("no_usage", 2),
        ("skipped_any", 1),
        ("local_actions", LOCAL),
        ("actions", 3),
    ];
    for (k, n) in counts {
        assert_eq!(v[k], json!(n), "--json {k}: {out}");
    }
    assert_eq!(v["signals"]["actions"], json!(1), "{out}");
    assert_eq!(v["signals"]["listed"][0]["signal"], json!("KILL"), "{out}");
    assert_eq!(v["killed"].as_array().map(Vec::len), Some(1), "{out}");
    assert_eq!(
        v["rss_scope"],
        json!({"largest_process": 1, "whole_action": 1, "unknown": 0}),
        "{out}"
    );
}

// ------------------------------------ .buckconfig, sizing, errors at a server

/// `.buckconfig` of a Buck2 project names the cache; `--digest` names one
/// action. Run from a subdirectory with no `--remote`.
fn buckconfig_discovery(port: u16, dir: &Path) {
    let proj = dir.join("proj");
    let sub = proj.join("app/src");
    std::fs::create_dir_all(&sub).expect("mkdir");
    // Buck2 `remote_execution/oss/re_grpc/src/client.rs`: `http_headers`
    // is `name:value` pairs, comma-separated, `$VAR` from the environment.
    let config = format!(
        "[repositories]\nroot = .\n\n[buck2_re_client]\naction_cache_address = grpc://127.0.0.1:{port}\n\
         instance_name = main\nhttp_headers = x-api-key:$HEADROOM_E2E_KEY, x-team: build\n"
    );
    std::fs::write(proj.join(".buckconfig"), config).expect("write");
    let d1 = digest_text(1, '/');
    let args = ["actions", "--digest", &d1, "--json-rows"];
    let key = "HEADROOM_E2E_KEY";
    let set = [(key, Some("k-123"))];
    let rows = ok(run_in(&args, Some(&sub), &[], &set), ".buckconfig");
    check_rows(&rows, &[(d1.clone(), String::new(), 1)], ".buckconfig");

    let line = one_line(run_in(&args, Some(&sub), &[], &[(key, None)]), 1, "no $VAR");
    assert!(
        line.contains("$HEADROOM_E2E_KEY is not set in the environment"),
        "{line}"
    );
    assert!(
        line.contains(&format!("{}:", proj.join(".buckconfig").display())),
        "{line}"
    );

    // --instance beats instance_name: `other` holds nothing.
    let mut other = args.to_vec();
    other.extend(["--instance", "other"]);
    // (--json-rows: the row of the action looked up, not stored.)
    let r = run_in(&other, Some(&sub), &[], &set);
    let (rows, line) = json_failure(r, "--instance other");
    assert_eq!(rows[0]["stored"], json!(false), "{rows}");
    assert!(
        line.contains("instance 'other'") && line.contains("check --instance"),
        "{line}"
    );
    // .buckconfig.local, read after .buckconfig, overrides it.
    std::fs::write(
        proj.join(".buckconfig.local"),
        "[buck2_re_client]\ninstance_name = other\n",
    )
    .expect("write");
    let r = run_in(&args, Some(&sub), &[], &set);
    let (_, line) = json_failure(r, ".buckconfig.local");
    assert!(line.contains("instance 'other'"), "{line}");
    std::fs::remove_file(proj.join(".buckconfig.local")).expect("rm");

    // Outside any project, no --remote: a usage error.
    let bare = dir.join("no-project");
    std::fs::create_dir_all(&bare).expect("mkdir");
    let line = one_line(run_in(&args, Some(&bare), &[], &set), 2, "no .buckconfig");
    assert!(line.contains("--remote"), "{line}");
}

/// `--worker-cores 4 --worker-mem 1G`: the sizing block, with the 2 GiB
/// action listed as not fitting alone and the 256 MiB one not.
fn worker_sizing(ep: &Endpoint, base: &[String]) {
    let written = [
        (digest(20), buildbarn(2 << 30, "")),
        (digest(21), buildbarn(256 << 20, "")),
    ];
    client::update(ep, &written, &Options::default()).expect("update");
    let (big, small) = (digest_text(20, '/'), digest_text(21, ':'));
    let mut args = strs(base);
    args.extend(["--digest", &big, "--digest", &small]);
    args.extend(["--worker-cores", "4", "--worker-mem", "1G"]);
    let text = ok(run(&args), "sizing");
    let block = text
        .split_once("\nworker sizing: ")
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no sizing block:\n{text}"));
    assert!(block.starts_with("4 cores, 1.00 GiB"), "{text}");
    assert!(block.contains("memory (2 actions): p99 RSS "), "{text}");
    assert!(
        block.contains("\n  actions that alone do not fit: 1\n"),
        "{text}"
    );
    assert!(
        // The text cuts a --digest id's hash to 12 hex digits.
        block.contains(&format!(
            "\n    {}\u{2026}/120: RSS 2.00 GiB > 90 % of 1.00 GiB = 0.90 GiB\n",
            &big[..12]
        )),
        "{text}"
    );
    assert!(!block.contains("\u{2026}/121"), "{text}");
    // Without the options, no block.
    let text = ok(run(&args[..args.len() - 4]), "no sizing");
    assert!(!text.contains("worker sizing"), "{text}");
}

/// Errors a live server gives, and bad input beside it: one line each.
fn errors_at_a_server(base: &[String], dir: &Path) {
    let with = |extra: &[&str]| {
        let mut args = strs(base);
        args.extend(extra);
        run(&args)
    };
    let d1 = digest_text(1, '/');
    let mut wrong = strs(base);
    wrong.truncate(3);
    wrong.extend(["--instance", "nope", "--digest", &d1]);
    let line = one_line(run(&wrong), 1, "wrong instance");
    assert!(
        line.contains("'nope'") && line.contains("check --instance"),
        "{line}"
    );

    let never = digest_text(99, '/');
    let line = one_line(with(&["--digest", &never]), 1, "nothing stored");
    assert!(
        line.contains("no stored result for the 1 action at 127.0.0.1:"),
        "{line}"
    );
    assert!(line.contains("check --instance"), "{line}");
    // Issue 34: --json and --json-rows printed nothing here. Now the
    // report object with its counts and the line as its reason, and the
    // row of the action looked up; the same exit and line as the text.
    let (v, why) = json_failure(
        with(&["--digest", &never, "--json"]),
        "nothing stored --json",
    );
    assert_eq!(why, line);
    assert_eq!(
        (&v["looked_up"], &v["stored"], &v["not_found"], &v["reason"]),
        (
            &json!(1),
            &json!(0),
            &json!(1),
            &json!(why.trim_start_matches("headroom: "))
        ),
        "{v}"
    );
    let (v, _) = json_failure(
        with(&["--digest", &never, "--json-rows"]),
        "nothing stored rows",
    );
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");

    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a log\n").expect("write");
    let text = text.display().to_string();
    let line = one_line(with(&["--log", &text]), 1, "unknown format");
    assert!(
        line.starts_with(&format!("headroom: {text}: not a log headroom reads: ")),
        "{line}"
    );
    assert!(line.contains("--execution_log_binary_file"), "{line}");
    let gz = dir.join("x.json-lines.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0]).expect("write");
    let gz = gz.display().to_string();
    let line = one_line(with(&["--log", &gz]), 1, "gzip");
    assert!(line.contains(&gz) && line.contains("gunzip"), "{line}");
    let missing = dir.join("missing_events.pb.zst").display().to_string();
    let line = one_line(with(&["--log", &missing]), 1, "missing log");
    assert!(line.contains(&missing), "{line}");

    // A malformed option value is a usage error, as --remote's and
    // --header's are.
    let line = one_line(with(&["--digest", "nonsense"]), 2, "--digest nonsense");
    assert!(
        line.contains("nonsense") && line.contains("HASH/SIZE"),
        "{line}"
    );
    // A header value is never echoed: it may be a secret.
    let line = one_line(
        with(&["--digest", &d1, "--header", "x-api-key: s3cret\u{7}"]),
        2,
        "header",
    );
    assert!(
        line.contains("x-api-key") && !line.contains("s3cret"),
        "{line}"
    );
}

/// `.buckconfig` discovery, worker sizing, and the errors a live server
/// gives, against one BuildGrid.
#[test]
fn buckconfig_sizing_and_errors_at_a_live_server() {
    let dir = bgd::temp_dir("cli-config");
    let server = bgd::Bgd::start(&dir, None);
    let ep = plain_endpoint(server.port, "main");
    client::update(&ep, &results(), &Options::default()).expect("update");
    let base = remote_args(server.port);
    buckconfig_discovery(server.port, &dir);
    worker_sizing(&ep, &base);
    errors_at_a_server(&base, &dir);
}

// ------------------------------------------------------- TLS, no server

/// grpcs:// with `--tls-ca` (and `.buckconfig` `tls_ca_certs`) reads the
/// results; without it, rustls's UnknownIssuer in one line.
#[test]
fn tls_with_the_ca_and_without() {
    let dir = bgd::temp_dir("cli-tls");
    let (ca, server_tls) = bgd::make_certificates(&dir);
    let server = bgd::Bgd::start(&dir, Some(&server_tls));
    let url = format!("grpcs://127.0.0.1:{}", server.port);
    let mut ep = parse_url(&url, None).expect("url");
    ep.instance = "main".into();
    ep.tls_ca = Some(ca.clone());
    client::update(&ep, &results(), &Options::default()).expect("update over TLS");

    let d1 = digest_text(1, '/');
    let ca_text = ca.display().to_string();
    let args = [
        "actions",
        "--remote",
        &url,
        "--instance",
        "main",
        "--digest",
        &d1,
    ];
    let mut with_ca = args.to_vec();
    with_ca.extend(["--tls-ca", &ca_text, "--json-rows"]);
    check_rows(
        &ok(run(&with_ca), "grpcs"),
        &[(d1.clone(), String::new(), 1)],
        "grpcs",
    );

    let line = one_line(run(&args), 1, "no --tls-ca");
    assert!(
        line.contains("UnknownIssuer") && line.contains("--tls-ca"),
        "{line}"
    );
    assert!(!line.contains("transport error"), "{line}");

    let missing = dir.join("client.pem").display().to_string();
    let mut mtls = with_ca.clone();
    mtls.extend(["--tls-cert", &missing, "--tls-key", &missing]);
    let line = one_line(run(&mtls), 1, "missing client cert");
    assert!(line.contains(&missing), "{line}");

    // The same from a project's .buckconfig, its CA path relative to the root.
    let proj = dir.join("proj");
    std::fs::create_dir_all(proj.join("sub")).expect("mkdir");
    std::fs::copy(&ca, proj.join("ca.pem")).expect("copy");
    let config = format!(
        "[buck2_re_client]\naction_cache_address = {url}\ninstance_name = main\ntls_ca_certs = ca.pem\n"
    );
    std::fs::write(proj.join(".buckconfig"), config).expect("write");
    let rows = run_in(
        &["actions", "--digest", &d1, "--json-rows"],
        Some(&proj.join("sub")),
        &[],
        &[],
    );
    check_rows(
        &ok(rows, ".buckconfig tls"),
        &[(d1.clone(), String::new(), 1)],
        ".buckconfig tls",
    );
}

// ------------------------------------------------- auth at a real server

/// The HS256 secret BuildGrid checks tokens with (its `secret:` file).
const JWT_SECRET: &str = "headroom-test-secret-0123456789abcdef";

/// An HS256 JWT for subject `sub`, expiring `exp_in` seconds from now,
/// signed with `secret` by PyJWT (the library BuildGrid checks it with,
/// from BuildGrid's own venv).
fn jwt(secret: &str, sub: &str, exp_in: i64) -> String {
    let python = bgd::venv().join("bin/python");
    let out = Command::new(python)
        .args([
            "-W",
            "ignore",
            "-c",
            "import jwt, sys, time; print(jwt.encode({'sub': sys.argv[1], \
             'exp': int(time.time()) + int(sys.argv[3])}, sys.argv[2], algorithm='HS256'))",
            sub,
            secret,
            &exp_in.to_string(),
        ])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_string()
}

/// BuildGrid's `authorization:` for the auth test: JWT (HS256, a secret
/// file), instance `main` open to any client its TLS lets in, `other`
/// only to tokens whose subject is `ci` (its `acl-config`).
fn jwt_authorization(dir: &Path) -> String {
    let secret = dir.join("jwt.secret");
    std::fs::write(&secret, JWT_SECRET).expect("secret");
    let acl = dir.join("acl.yml");
    std::fs::write(
        &acl,
        "main:\n  allow: all\nother:\n  allow:\n    - subject: \"^ci$\"\n",
    )
    .expect("acl");
    format!(
        "authorization:\n  method: jwt\n  secret: {}\n  algorithm: hs256\n  \
         acl-config: {}\n  allow-unauthenticated-instances: [main]\n",
        secret.display(),
        acl.display()
    )
}

/// BuildGrid 0.4.4 requiring client certificates signed by the test CA
/// (`tls-client-certs`), and checking bearer tokens (JWT, HS256) on
/// instance `other`. With the right certificate the table; with none, or
/// one another CA signed, one line naming --tls-cert and --tls-key. On
/// `other`: no token, a token signed with another secret, an expired one,
/// and one for a subject its ACL refuses each one line naming --header
/// (BuildGrid answers UNAUTHENTICATED to all four: it never answers
/// PERMISSION_DENIED to a read, so that line is unit-tested only, in
/// `src/remote/client_error.rs`); the right token reads `other`'s
/// results, so the header reached the server and was checked there.
/// BuildGrid's other method, `headers`, checks no secret (it takes
/// `x-request-actor` and friends as they come, for its ACL): not tested.
#[test]
fn client_certificates_and_bearer_tokens_at_a_server_that_checks_them() {
    let dir = bgd::temp_dir("cli-auth");
    let (ca, mut server_tls) = bgd::make_certificates(&dir);
    bgd::make_ca(&dir, "stranger-ca");
    let (cert, key) = bgd::make_client_certificate(&dir, "ca", "client");
    let (stranger, stranger_key) = bgd::make_client_certificate(&dir, "stranger-ca", "stranger");
    server_tls.client_ca = Some(ca.clone());
    let server = bgd::Bgd::start_with(&dir, Some(&server_tls), &jwt_authorization(&dir));
    let url = format!("grpcs://127.0.0.1:{}", server.port);
    let token = jwt(JWT_SECRET, "ci", 3600);
    let mut ep = parse_url(&url, None).expect("url");
    (ep.tls_ca, ep.tls_cert, ep.tls_key) =
        (Some(ca.clone()), Some(cert.clone()), Some(key.clone()));
    ep.instance = "main".into();
    client::update(&ep, &results(), &Options::default()).expect("update main");
    ep.instance = "other".into();
    ep.headers
        .push(("authorization".into(), format!("Bearer {token}")));
    client::update(&ep, &results(), &Options::default()).expect("update other");

    let d1 = digest_text(1, '/');
    let path = |p: &Path| p.display().to_string();
    let (ca, cert, key) = (path(&ca), path(&cert), path(&key));
    let (stranger, stranger_key) = (path(&stranger), path(&stranger_key));
    let args = |instance: &'static str, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = ["actions", "--remote", &url, "--instance", instance]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(["--digest", &d1, "--tls-ca", &ca].map(String::from));
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let go = |a: Vec<String>| run(&strs(&a));

    let text = ok(
        go(args("main", &["--tls-cert", &cert, "--tls-key", &key])),
        "mTLS",
    );
    assert!(
        text.starts_with("1 of 1 action has a stored result | wall ")
            && text.contains("(KILL: the OOM killer's signal) on bb-worker-1"),
        "{text}"
    );
    let line = one_line(go(args("main", &[])), 1, "no client certificate");
    assert!(
        line.contains("--tls-cert FILE --tls-key FILE") && !line.contains("answered"),
        "{line}"
    );
    let wrong = ["--tls-cert", &stranger, "--tls-key", &stranger_key];
    let line = one_line(go(args("main", &wrong)), 1, "certificate of another CA");
    assert!(
        line.contains(&format!("client certificate {stranger}"))
            && line.contains("--tls-cert FILE --tls-key FILE"),
        "{line}"
    );

    let mtls = ["--tls-cert", cert.as_str(), "--tls-key", key.as_str()];
    let with_token = |t: &str| {
        let mut a = args("other", &mtls);
        a.extend(["--header".into(), format!("Authorization: Bearer {t}")]);
        a
    };
    let mut rows = with_token(&token);
    rows.push("--json-rows".into());
    check_rows(
        &ok(go(rows), "right token"),
        &[(d1.clone(), String::new(), 1)],
        "right token",
    );
    let line = one_line(go(args("other", &mtls)), 1, "no token");
    assert!(
        line.contains("wants credentials for instance 'other'")
            && line.contains("--header 'Authorization: Bearer TOKEN'"),
        "{line}"
    );
    for (what, t) in [
        (
            "another secret",
            jwt("not-the-servers-secret-0123456789ab", "ci", 3600),
        ),
        ("expired", jwt(JWT_SECRET, "ci", -3600)),
        ("subject the ACL refuses", jwt(JWT_SECRET, "intruder", 3600)),
    ] {
        let line = one_line(go(with_token(&t)), 1, what);
        assert!(
            line.contains(
                "did not accept the credentials sent (--header authorization, --tls-cert "
            ) && line.contains("for instance 'other'")
                && line.contains("check the --header value"),
            "{what}: {line}"
        );
        assert!(!line.contains(&t), "{what}: the token echoed: {line}");
    }
}

/// Errors with no server: the address named; usage errors exit 2.
#[test]
fn errors_without_a_server() {
    let closed = bgd::closed_port();
    let port = closed.port;
    let base = remote_args(port);
    let d1 = digest_text(1, '/');
    let with = |extra: &[&str]| {
        let mut args = strs(&base);
        args.extend(extra);
        run(&args)
    };
    let line = one_line(with(&["--digest", &d1]), 1, "server down");
    assert!(line.contains(&format!("127.0.0.1:{port}")), "{line}");
    assert!(line.to_ascii_lowercase().contains("refused"), "{line}");

    // A Bazel 4-6 log whose remote spawns all lack a digest: nothing to
    // look up, said before any connection.
    let dir = bgd::temp_dir("cli-bazel6");
    let log = dir.join("exec.json");
    let only_hits: String = bazel_json_before_7(3)
        .split_inclusive("\n}")
        .skip(BUILD.len())
        .collect();
    std::fs::write(&log, only_hits).expect("write");
    let log = log.display().to_string();
    let line = one_line(with(&["--log", &log]), 1, "Bazel 6, no digest");
    assert_eq!(
        line,
        "headroom: the logs name no remote action with a digest to look up: 3 remote spawns carry no action digest (Bazel before 7 writes none), 0 ran locally"
    );
    std::fs::remove_dir_all(&dir).expect("remove temp dir");

    // Issue 34: logs that name no remote action (one local Bazel spawn)
    // gave nothing on stdout with --json or --json-rows.
    let dir = bgd::temp_dir("cli-no-remote");
    let log = dir.join("local.json");
    std::fs::write(&log, "{\n  \"runner\": \"linux-sandbox\"\n}\n").expect("write");
    let log = log.display().to_string();
    let line = one_line(with(&["--log", &log]), 1, "no remote action");
    assert!(line.contains("no remote action (1 ran locally)"), "{line}");
    let (v, why) = json_failure(with(&["--log", &log, "--json"]), "no remote --json");
    assert_eq!(why, line);
    let counts = [
        "looked_up",
        "stored",
        "not_found",
        "local_actions",
        "actions",
    ]
    .map(|k| &v[k]);
    assert_eq!(
        counts,
        [&json!(0), &json!(0), &json!(0), &json!(1), &json!(0)],
        "{v}"
    );
    assert_eq!(
        v["reason"],
        json!(line.trim_start_matches("headroom: ")),
        "{v}"
    );
    assert_eq!(v["truncated_logs"], json!([]), "{v}");
    // No wall time: no average, not 0.
    assert_eq!(v["avg_cores"], Value::Null, "{v}");
    let (v, _) = json_failure(with(&["--log", &log, "--json-rows"]), "no remote rows");
    assert_eq!(v, json!([]));
    let _ = std::fs::remove_dir_all(&dir);

    let usage: [&[&str]; 5] = [
        &["actions.csv", "--digest", &d1],
        &["--digest", &d1, "--tls-cert", "c.pem"],
        &["--digest", &d1, "--json", "--json-rows"],
        &[],
        &["--digest", &d1, "--worker-cores", "4"],
    ];
    for extra in usage {
        let line = one_line(with(extra), 2, &format!("usage {extra:?}"));
        assert!(line.starts_with("headroom: actions"), "{line}");
    }
    for (url, says) in [
        ("foo://127.0.0.1:1", "unknown scheme"),
        ("grpc://127.0.0.1:1/main", "--instance"),
    ] {
        let r = run(&["actions", "--remote", url, "--digest", &d1]);
        let line = one_line(r, 2, url);
        assert!(line.contains(says), "{line}");
        assert_eq!(line.matches("--remote").count(), 1, "said twice: {line}");
    }
}
