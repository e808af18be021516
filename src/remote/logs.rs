//! Which actions to look up: every `--log` (format found from its bytes)
//! and every `--digest`, each digest once, in the order first named.
//!
//! Formats, by their first bytes:
//! - `28 B5 2F FD` (zstd): decompressed, its first varint-delimited record
//!   says whose: a Buck2 event log starts with its `Invocation` header,
//!   whose first field is `command_line_args` (tag 1, bytes: `0x0A`); a
//!   Bazel compact log's `ExecLogEntry` never starts so (its tag 1 `id` is a
//!   varint, `0x08`; its `Invocation` is tag 2, `0x12`).
//! - `{` (after whitespace): JSON. `buck2 log show` prints one object a
//!   line, the first the `Invocation` (`command_line_args`, `trace_id`),
//!   then `{"Event": ...}`; Bazel prints `SpawnExec` objects (camelCase
//!   keys), pretty-printed over many lines.
//! - `1F 8B` (gzip, Buck2's `.json-lines.gz`, `.pb.gz`): refused with a hint.
//! - A varint length, then a record whose fields are `SpawnExec`'s: Bazel's
//!   `--execution_log_binary_file` ([`bazel::is_binary_log`]; told before
//!   JSON, never mistaken for it: a length that reads as `{` or whitespace
//!   counts only with its whole record checked).
//!
//! # References
//! Buck2 `app/buck2_event_log/src/write.rs`, `read.rs`;
//! `app/buck2_cmd_log_client/src/show_log.rs`; Bazel
//! `src/main/protobuf/spawn.proto`, `CompactSpawnLogContext.java`.

use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::string::{String, ToString};
use std::vec::Vec;

use crate::remote::action::{Collector, Found, Named, Origin};
use crate::remote::delimited::{RecordError, Records, ZSTD_MAGIC, Zstd};
use crate::remote::digest::parse_digest;
use crate::remote::log_error::{LogError, LogErrorKind, read_line_capped};
use crate::remote::{bazel, buck2_json, buck2_log};

/// Read every log of `paths` (`-`: standard input) and every `--digest`
/// of `digests` (`HASH/SIZE` or `HASH:SIZE`, named by their text, origin
/// [`Origin::Hand`]), logs first: the remote actions, each digest once in
/// the order first named, the killed actions, the local count.
///
/// # Errors
/// The first log that cannot be read or is not one of the formats, or the
/// first `--digest` that is not a digest (file `--digest`).
pub fn read_logs(paths: &[String], digests: &[String]) -> Result<Found, LogError> {
    let mut out = Collector::new();
    for path in paths {
        if path == "-" {
            read_log(io::stdin().lock(), path, &mut out)?;
        } else {
            let f = std::fs::File::open(path)
                .map_err(|e| LogError::new(path, None, LogErrorKind::Read(e)))?;
            read_log(f, path, &mut out)?;
        }
    }
    for text in digests {
        let digest = parse_digest(text).map_err(|error| {
            let kind = LogErrorKind::Digest {
                text: text.clone(),
                error,
            };
            LogError::new("--digest", None, kind)
        })?;
        out.remote(Named {
            id: text.trim().to_string(),
            category: String::new(),
            digest,
            origin: Origin::Hand,
        });
    }
    Ok(out.finish())
}

/// The first bytes of a log looked at to tell its format (64 KiB: a
/// binary log's first `SpawnExec` is checked as far as this goes; read
/// whole, not as one `read` gives it, so a pipe tells the same as a file).
const HEAD: u64 = 64 << 10;

/// Read one log of any format from `src` (named `file` in errors) into
/// `out`.
pub fn read_log(mut src: impl Read, file: &str, out: &mut Collector) -> Result<(), LogError> {
    let read_err = |e| LogError::new(file, None, LogErrorKind::Read(e));
    let mut head = Vec::new();
    (&mut src)
        .take(HEAD)
        .read_to_end(&mut head)
        .map_err(read_err)?;
    if head.is_empty() {
        return Err(LogError::new(file, None, LogErrorKind::Empty));
    }
    if head.starts_with(&ZSTD_MAGIC) || (head.len() < 4 && ZSTD_MAGIC.starts_with(&head)) {
        return read_zstd(Cursor::new(head).chain(src), file, out);
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Err(LogError::new(file, None, LogErrorKind::Gzip));
    }
    if bazel::is_binary_log(&head) {
        return bazel::read_binary(Cursor::new(head).chain(src), file, out);
    }
    let mut src = BufReader::new(Cursor::new(head).chain(src));
    let skipped_lines = skip_whitespace(&mut src).map_err(read_err)?;
    match src.fill_buf().map_err(read_err)?.first() {
        None => Err(LogError::new(file, None, LogErrorKind::Empty)),
        Some(b'{') => read_json(src, skipped_lines, file, out),
        Some(_) => Err(LogError::new(file, None, LogErrorKind::UnknownFormat)),
    }
}

/// Consume leading whitespace; the newlines consumed.
fn skip_whitespace(src: &mut impl BufRead) -> io::Result<u64> {
    let mut lines = 0;
    loop {
        let buf = src.fill_buf()?;
        if buf.is_empty() {
            return Ok(lines);
        }
        let n = buf
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(buf.len());
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        let done = n < buf.len();
        src.consume(n);
        if done {
            return Ok(lines);
        }
    }
}

/// A zstd log (Buck2's or Bazel's compact one): when cut short, how many
/// records came before the cut is noted beside it.
fn read_zstd(src: impl Read, file: &str, out: &mut Collector) -> Result<(), LogError> {
    let mut records = Records::new(BufReader::new(Zstd::new(src)));
    let mut first = Vec::new();
    let read = match records.next_into(&mut first) {
        Ok(true) if first.first() == Some(&buck2_log::INVOCATION_FIRST_BYTE) => {
            buck2_log::read_records(&mut records, &first, file, out)
        }
        Ok(true) => bazel::read_compact_records(&mut records, &first, file, out),
        Ok(false) => return Err(LogError::new(file, None, LogErrorKind::Empty)),
        Err(RecordError::Truncated) => {
            out.truncated(file);
            Ok(())
        }
        Err(e) => return Err(LogError::record(file, 0, e)),
    };
    out.records_before_cut(file, records.read());
    read
}

fn read_json(
    mut src: impl BufRead,
    skipped_lines: u64,
    file: &str,
    out: &mut Collector,
) -> Result<(), LogError> {
    let mut first = Vec::new();
    // A first line over the cap is not a buck2 line; the Bazel reader
    // (which bounds each object) then says what it is.
    read_line_capped(&mut src, &mut first)
        .map_err(|e| LogError::new(file, None, LogErrorKind::Read(e)))?;
    let rest = Cursor::new(first).chain(src);
    let line: Option<serde_json::Value> = {
        let text = rest.get_ref().0.get_ref();
        serde_json::from_slice(text).ok()
    };
    if line.as_ref().is_some_and(buck2_json::is_buck2_line) {
        buck2_json::read_lines(BufReader::new(rest), skipped_lines, file, out)
    } else {
        bazel::read_json_stream(rest, skipped_lines, file, out)
    }
}

#[cfg(test)]
mod tests {
    //! Tests of `logs.rs`: which format, `--digest`, each digest once, and the
    //! checked-in fixtures of `tests/fixtures/remote/` (written by
    //! `write_fixtures` below with the test-side writers in the tests of
    //! `buck2_log.rs`, `buck2_json.rs` and `bazel.rs`, and the `zstd` CLI; see
    //! the README there).

    use super::*;
    use crate::remote::bazel::tests::{binary_log, compact_plain, json_log, json_log_before_7};
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
                "f: not a log headroom reads: a Buck2 event log (*_events.pb.zst), buck2 log show output, or a Bazel execution log (--execution_log_json_file, --execution_log_binary_file or --execution_log_compact_file)",
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
                no_digest: 0,
                killed: found.killed[..1].to_vec(),
                truncated: vec![],
                records_before_cut: vec![],
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
            ("bazel_exec_binary.log", Origin::BazelBinary),
        ] {
            let found = read_logs(&[f(name)], &[]).unwrap();
            assert_eq!(found.actions.len(), 2, "{name}");
            assert_eq!(found.local, 2, "{name}");
            assert!(found.actions.iter().all(|n| n.origin == origin));
        }
        let found = read_logs(&[f("buck2_events_cut.pb.zst")], &[]).unwrap();
        assert_eq!(found.truncated.len(), 1);
        // Bazel 4-6: the three remote spawns carry no digest (the same
        // spawn twice is two: nothing tells them apart).
        let found = read_logs(&[f("bazel_exec_bazel6.json")], &[]).unwrap();
        let counts = (found.actions.len(), found.local, found.no_digest);
        assert_eq!(counts, (0, 2, 3));
    }

    /// What the plain reader finds in `plain` (a decompressed Buck2 log).
    fn read_plain_buck2(plain: &[u8]) -> Found {
        let mut out = Collector::new();
        buck2_log::read_plain(Cursor::new(plain.to_vec()), "f", &mut out).unwrap();
        out.finish()
    }

    /// `z` (a zstd Buck2 log, `name`) cut at 25, 50, 75 and 90 % of its
    /// bytes: each cut keeps exactly what the reference decoder (`zstd
    /// -dc`) recovers, read by the plain reader, and counts its complete
    /// records (counted naively). Returns the records at each cut.
    fn cuts_keep_what_zstd_recovers(z: &[u8], name: &str) -> Vec<u64> {
        use crate::remote::delimited::tests::{complete_records, zstd_cli_recovers};
        let mut counts = Vec::new();
        for pct in [25, 50, 75, 90] {
            let cut = &z[..z.len() * pct / 100];
            let recovered = zstd_cli_recovers(cut);
            let records = complete_records(&recovered) as u64;
            let got = read(cut).unwrap_or_else(|e| panic!("{name} at {pct} %: {e}"));
            assert_eq!(got.truncated, vec!["f".to_string()], "{name} at {pct} %");
            assert_eq!(got.records_before_cut, vec![("f".to_string(), records)]);
            if records > 0 {
                let want = read_plain_buck2(&recovered);
                assert_eq!(got.actions, want.actions, "{name} at {pct} %");
                assert_eq!((got.local, &got.killed), (want.local, &want.killed));
            } else {
                assert_eq!((got.actions.len(), got.local), (0, 0), "{name} at {pct} %");
            }
            counts.push(records);
        }
        counts
    }

    // Issue 34, acceptance: real Buck2 logs from Buck2's own test data (see
    // tests/fixtures/remote/README.md), cut at several points.
    #[test]
    fn real_buck2_logs_cut_keep_what_a_streaming_decoder_recovers() {
        let f = |n: &str| std::fs::read(fixtures().join(n)).unwrap();
        // Buck2's own compression (2 MiB window, flushed blocks): `buck2
        // build --local-only`, one local action in 70 records. Before the
        // fix every cut gave nothing (the whole log is under the window).
        let z = f("buck2_real_whatup.pb.zst");
        let whole = read(&z).unwrap();
        assert_eq!((whole.actions.len(), whole.local), (0, 1));
        assert!(whole.truncated.is_empty());
        let counts = cuts_keep_what_zstd_recovers(&z, "whatup");
        assert!(counts[2] > 0 && counts[3] >= counts[2], "{counts:?}");
        // An uncompressed event log (`--event-log x.proto`) with one remote
        // cache hit, the digest its README names: whole, and compressed
        // here with the zstd CLI (128 KiB blocks) and cut.
        let plain = f("buck2_real_my_genrule0.proto");
        let whole = read_plain_buck2(&plain);
        let ids: Vec<(&str, &str, i64)> = whole
            .actions
            .iter()
            .map(|n| (n.id.as_str(), n.digest.hash.as_str(), n.digest.size_bytes))
            .collect();
        let digest = "87eeee88c133dfa39711399a81f500147275cfeeb1f06b6b4805f2c0588615d1";
        let id = "fbcode//buck2/tests/targets/rules/genrule:my_genrule0";
        assert_eq!(ids, vec![(id, digest, 145)]);
        assert_eq!(whole.local, 0);
        let counts = cuts_keep_what_zstd_recovers(&zstd_cli(&plain), "my_genrule0");
        assert!(counts[3] > 0, "{counts:?}");
    }

    // Issue 34, acceptance: a real `buck2 log show`-shaped log (Buck2's
    // JSON-lines event log, one `StreamValue` a line after the header) cut
    // at several points keeps the lines before the cut. Expected by text
    // search, not by the JSON reader: the action is there when the cut is
    // past the end of the `SpanEnd` line naming its digest (the one digest
    // Buck2's own `test_whatran` names); records are the newlines before it.
    #[test]
    fn a_real_buck2_json_log_cut_keeps_its_lines_before_the_cut() {
        let text = std::fs::read(fixtures().join("buck2_real_my_genrule0.json-lines")).unwrap();
        let digest = "c63fead395a232f021871f53d4eafb60038890f2:93";
        let text_str = std::str::from_utf8(&text).unwrap();
        let action_line_end = text_str
            .split_inclusive('\n')
            .scan(0, |end, l| {
                *end += l.len();
                Some((*end, l))
            })
            .find(|(_, l)| l.contains("\"SpanEnd\"") && l.contains(digest))
            .map(|(end, _)| end)
            .unwrap();
        let whole = read(&text).unwrap();
        let ids: Vec<String> = whole
            .actions
            .iter()
            .map(|n| std::format!("{}:{}", n.digest.hash, n.digest.size_bytes))
            .collect();
        assert_eq!(ids, vec![digest.to_string()]);
        // 98 %: past the action's line (at 97.3 %).
        for pct in [25, 50, 75, 90, 98] {
            let cut = &text[..text.len() * pct / 100];
            let got = read(cut).unwrap_or_else(|e| panic!("{pct} %: {e}"));
            let lines = cut.iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(
                got.records_before_cut,
                vec![("f".to_string(), lines)],
                "{pct} %"
            );
            let want = usize::from(cut.len() >= action_line_end);
            assert_eq!(got.actions.len(), want, "{pct} %");
            assert_eq!(got.actions.len(), usize::from(pct == 98));
        }
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
        std::fs::write(d.join("bazel_exec_binary.log"), binary_log().0).unwrap();
        std::fs::write(d.join("bazel_exec_bazel6.json"), json_log_before_7()).unwrap();
        // Seeds for the fuzz targets: the decompressed records too.
        let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
        let seeds: [(&str, &str, Vec<u8>); 7] = [
            ("buck2_log", "sample", plain_log(&sample_events())),
            ("buck2_json", "sample", sample_lines().into_bytes()),
            ("bazel_json", "sample", json_log().into_bytes()),
            ("bazel_compact", "sample", compact_plain()),
            ("read_log", "buck2_zst", z),
            ("read_log", "bazel_zst", zstd_cli(&compact_plain())),
            ("read_log", "bazel_binary", binary_log().0),
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
}
