//! Tests of `logs.rs`: which format, `--digest`, each digest once, and the
//! checked-in fixtures of `tests/fixtures/remote/` (written by
//! `write_fixtures` below with the test-side writers of `buck2_log_tests.rs`,
//! `buck2_json_tests.rs` and `bazel_tests.rs`, and the `zstd` CLI; see the
//! README there).

use super::*;
use crate::remote::bazel::tests::{compact_plain, json_log};
use crate::remote::buck2_json::tests::sample_lines;
use crate::remote::buck2_log::tests::{check_sample, plain_log, sample_events};
use crate::remote::delimited::tests::zstd_cli;
use std::format;
use std::path::PathBuf;
use std::vec;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/remote")
}

fn read(bytes: &[u8]) -> Result<Found, LogError> {
    let mut out = Collector::new();
    read_log(Cursor::new(bytes.to_vec()), "f", &mut out)?;
    Ok(out.finish())
}

#[test]
fn formats_not_read_say_so() {
    let cases: [(&[u8], &str); 5] = [
        (
            &[0x28, 0xB5, 0x2F, 0xFD, 0, 0, 0x07, 0, 0, 1, 2, 3],
            "f: byte ",
        ),
        (b"", "f: empty"),
        (b"  \n\t\n", "f: empty"),
        (&[0x1f, 0x8b, 8, 0], "f: gzip-compressed: gunzip it first"),
        (
            b"[1, 2]",
            "f: not a Buck2 event log (.pb.zst), buck2 log show output, or a Bazel execution log (JSON or compact)",
        ),
    ];
    for (bytes, want) in cases {
        let e = read(bytes).unwrap_err();
        assert!(e.to_string().starts_with(want), "{bytes:?}: {e}");
    }
    // Cut inside the first frame header: noted, nothing found.
    let found = read(&[0x28, 0xB5, 0x2F]).unwrap();
    assert_eq!((found.actions.len(), found.truncated.len()), (0, 1));
    // A zstd stream holding nothing.
    let e = read(&zstd_cli(b"")).unwrap_err();
    assert_eq!(e.to_string(), "f: empty");
}

#[test]
fn digests_by_hand_after_logs_each_once() {
    let dir = std::env::temp_dir().join(format!("headroom-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("b_events.pb.zst");
    std::fs::write(&log, zstd_cli(&plain_log(&sample_events()))).unwrap();
    let log = log.to_string_lossy().into_owned();
    let d1 = format!("{}/142", "1".repeat(64));
    let new = format!("{}:5", "C".repeat(64));
    let found = read_logs(&[log.clone(), log], &[d1, new.clone()]).unwrap();
    check_sample(
        &Found {
            actions: found.actions[..3].to_vec(),
            local: found.local / 2,
            killed: found.killed[..1].to_vec(),
            truncated: vec![],
        },
        Origin::Buck2Log,
    );
    assert_eq!(found.actions.len(), 4);
    let hand = &found.actions[3];
    assert_eq!(
        (hand.id.as_str(), hand.origin),
        (new.as_str(), Origin::Hand)
    );
    assert_eq!(hand.digest.hash, "c".repeat(64));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_digest_or_a_missing_file_is_one_line() {
    let e = read_logs(&[], &["xyz".to_string()]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--digest: action digest \"xyz\": expected HASH/SIZE or HASH:SIZE"
    );
    let e = read_logs(&["/nonexistent/x.pb.zst".to_string()], &[]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.pb.zst: cannot read: "),
        "{e}"
    );
}

#[test]
fn the_checked_in_fixtures_read_as_written() {
    let f = |n: &str| fixtures().join(n).to_string_lossy().into_owned();
    let found = read_logs(&[f("buck2_events.pb.zst")], &[]).unwrap();
    check_sample(&found, Origin::Buck2Log);
    let found = read_logs(&[f("buck2_log_show.json")], &[]).unwrap();
    check_sample(&found, Origin::Buck2Json);
    for (name, origin) in [
        ("bazel_exec.json", Origin::BazelJson),
        ("bazel_exec_compact.zst", Origin::BazelCompact),
    ] {
        let found = read_logs(&[f(name)], &[]).unwrap();
        assert_eq!(found.actions.len(), 2, "{name}");
        assert_eq!(found.local, 2, "{name}");
        assert!(found.actions.iter().all(|n| n.origin == origin));
    }
    let found = read_logs(&[f("buck2_events_cut.pb.zst")], &[]).unwrap();
    assert_eq!(found.truncated.len(), 1);
}

/// Writes `tests/fixtures/remote/*` (run by hand: `cargo test --features
/// remote --lib write_fixtures -- --ignored`).
#[test]
#[ignore]
fn write_fixtures() {
    let d = fixtures();
    std::fs::create_dir_all(&d).unwrap();
    let z = zstd_cli(&plain_log(&sample_events()));
    std::fs::write(d.join("buck2_events.pb.zst"), &z).unwrap();
    std::fs::write(d.join("buck2_events_cut.pb.zst"), &z[..z.len() / 2]).unwrap();
    std::fs::write(d.join("buck2_log_show.json"), sample_lines()).unwrap();
    std::fs::write(d.join("bazel_exec.json"), json_log()).unwrap();
    std::fs::write(d.join("bazel_exec_compact.zst"), zstd_cli(&compact_plain())).unwrap();
    // Seeds for the fuzz targets: the decompressed records too.
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let seeds: [(&str, &str, Vec<u8>); 6] = [
        ("buck2_log", "sample", plain_log(&sample_events())),
        ("buck2_json", "sample", sample_lines().into_bytes()),
        ("bazel_json", "sample", json_log().into_bytes()),
        ("bazel_compact", "sample", compact_plain()),
        ("read_log", "buck2_zst", z),
        ("read_log", "bazel_zst", zstd_cli(&compact_plain())),
    ];
    for (target, name, bytes) in seeds {
        std::fs::create_dir_all(corpus.join(target)).unwrap();
        std::fs::write(corpus.join(target).join(name), bytes).unwrap();
    }
}

/// A JSON log that never ends its line or object: `prefix`, then `a`s
/// without end (a runaway writer, `/dev/zero`-like input after a `{`).
fn endless_json(prefix: &'static [u8]) -> Result<Found, LogError> {
    let mut out = Collector::new();
    let src = Cursor::new(prefix).chain(io::repeat(b'a'));
    read_log(src, "f", &mut out)?;
    Ok(out.finish())
}

// Found by hand (issue 26, hostile input): a line with no end was read
// whole (2 GB of RSS for 2 GB piped in). Now each line and object stops at
// MAX_JSON with one line; before the fix these never returned.
#[test]
fn an_endless_json_line_or_object_is_refused_not_held() {
    // buck2 log show: the Invocation line, then an event line without end.
    let e = endless_json(b"{\"command_line_args\":[],\"trace_id\":\"x\"}\n{\"Event\":\"")
        .expect_err("endless line");
    assert!(matches!(e.kind, LogErrorKind::JsonTooLong), "{e}");
    assert_eq!(
        e.to_string(),
        "f: line 2: a JSON line or object over 64 MiB: not a log record"
    );
    // Bazel's JSON: one object, its first line already endless.
    let e = endless_json(b"{\"mnemonic\":\"").expect_err("endless object");
    assert!(matches!(e.kind, LogErrorKind::JsonTooLong), "{e}");
    // Bazel's JSON pretty-printed: a local spawn, then one without end.
    let e = endless_json(b"{\n  \"runner\": \"local\"\n}\n{\n  \"mnemonic\": \"")
        .expect_err("second object");
    assert!(matches!(e.kind, LogErrorKind::JsonTooLong), "{e}");
}
