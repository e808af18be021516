//! Bazel execution logs: `--execution_log_json_file` (a stream of
//! `tools.protos.SpawnExec` objects in proto3 JSON, camelCase keys, int64
//! as strings, pretty-printed, one after another with no separator) and
//! `--execution_log_compact_file` (zstd, varint-length-delimited
//! `ExecLogEntry` messages; spawns are `ExecLogEntry.spawn`, 7).
//!
//! A spawn is remote when its `runner` is `remote` (executed remotely) or
//! `remote cache hit`; other runners (`linux-sandbox`, `local`, `worker`,
//! `disk cache hit`, ...) are counted local. The action digest is
//! `SpawnExec.digest` (19) / `Spawn.digest` (16), a `Digest` {`hash` 1,
//! `size_bytes` 2}, written from Bazel 7.
//!
//! # References
//! Bazel `src/main/protobuf/spawn.proto` (`SpawnExec`: `remotable` 6,
//! `mnemonic` 10, `runner` 12, `cache_hit` 13, `exit_code` 15,
//! `target_label` 18, `digest` 19; `ExecLogEntry`: `id` 1, `spawn` 7;
//! `ExecLogEntry.Spawn`: `target_label` 7, `mnemonic` 8, `exit_code` 9,
//! `runner` 11, `cache_hit` 12, `remotable` 13, `digest` 16);
//! `CompactSpawnLogContext.java` (`ZstdOutputStream`, delimited entries,
//! the `Invocation` entry first, the digest's `hash_function_name`
//! cleared); the runner names of `RemoteSpawnRunner` / `RemoteSpawnCache`.

use core::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;
use std::string::{String, ToString};
use std::vec::Vec;

use prost::Message;
use serde_json::Value;

use crate::remote::action::{Collector, Digest, Named, Origin};
use crate::remote::delimited::{RecordError, Records};
use crate::remote::digest::{DigestError, digest_from_parts, parse_digest};
use crate::remote::log_error::{LogError, LogErrorKind, MAX_JSON, Position};

/// Runners that mean the spawn's result is in the remote action cache.
pub const REMOTE_RUNNERS: [&str; 2] = ["remote", "remote cache hit"];

/// `tools.protos.Digest`: `hash` (1), `size_bytes` (2).
#[derive(Clone, PartialEq, Message)]
pub struct SpawnDigest {
    /// `hash` (1), lowercase hex.
    #[prost(string, tag = "1")]
    pub hash: String,
    /// `size_bytes` (2).
    #[prost(int64, tag = "2")]
    pub size_bytes: i64,
}

/// `tools.protos.ExecLogEntry.Spawn`, the fields read.
#[derive(Clone, PartialEq, Message)]
pub struct Spawn {
    /// `target_label` (7).
    #[prost(string, tag = "7")]
    pub target_label: String,
    /// `mnemonic` (8).
    #[prost(string, tag = "8")]
    pub mnemonic: String,
    /// `runner` (11).
    #[prost(string, tag = "11")]
    pub runner: String,
    /// `digest` (16).
    #[prost(message, optional, tag = "16")]
    pub digest: Option<SpawnDigest>,
}

/// `tools.protos.ExecLogEntry`: only `spawn` (7) of its `type` oneof.
#[derive(Clone, PartialEq, Message)]
pub struct ExecLogEntry {
    /// `spawn` (7).
    #[prost(message, optional, tag = "7")]
    pub spawn: Option<Spawn>,
}

/// A digest as text and its parse.
type DigestSeen = (String, Result<Digest, DigestError>);

/// One spawn as both encodings give it.
struct SpawnSeen<'a> {
    label: &'a str,
    /// The file name of its first listed output (`foo.o`), which tells the
    /// spawns of one target apart; empty when the log lists none.
    output: &'a str,
    mnemonic: &'a str,
    runner: &'a str,
    /// The digest as text (for errors) and its parse.
    digest: Option<DigestSeen>,
}

fn gather(s: SpawnSeen<'_>, origin: Origin, out: &mut Collector) -> Result<(), LogErrorKind> {
    if !REMOTE_RUNNERS.contains(&s.runner) {
        out.local();
        return Ok(());
    }
    let (text, parsed) = s.digest.ok_or(LogErrorKind::NoDigest)?;
    let digest = parsed.map_err(|error| LogErrorKind::Digest { text, error })?;
    let id = match s.output {
        "" => s.label.to_string(),
        o => std::format!("{} ({o})", s.label),
    };
    out.remote(Named {
        id,
        category: s.mnemonic.to_string(),
        digest,
        origin,
    });
    Ok(())
}

/// The digest of a JSON `SpawnExec`: `{"hash": "...", "sizeBytes": "N"}`
/// (proto3 JSON writes int64 as a string; a number is taken too).
fn json_digest(d: &Value) -> DigestSeen {
    let hash = d.get("hash").and_then(Value::as_str).unwrap_or("");
    let size = match d.get("sizeBytes").or_else(|| d.get("size_bytes")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".to_string(),
    };
    let text = std::format!("{hash}/{size}");
    let parsed = parse_digest(&text);
    (text, parsed)
}

/// The file name of a JSON `SpawnExec`'s first `listedOutputs` path.
fn first_output(v: &Value) -> &str {
    let first = v
        .get("listedOutputs")
        .or_else(|| v.get("listed_outputs"))
        .and_then(|o| o.get(0))
        .and_then(Value::as_str)
        .unwrap_or("");
    first.rsplit('/').next().unwrap_or(first)
}

fn str_field<'a>(o: &'a Value, camel: &str, snake: &str) -> &'a str {
    o.get(camel)
        .or_else(|| o.get(snake))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Whether `v` looks like a `SpawnExec`: an object with one of its keys.
pub fn is_spawn_exec(v: &Value) -> bool {
    const KEYS: [&str; 8] = [
        "commandArgs",
        "environmentVariables",
        "mnemonic",
        "runner",
        "targetLabel",
        "digest",
        "listedOutputs",
        "remotable",
    ];
    v.as_object()
        .is_some_and(|o| KEYS.iter().any(|k| o.contains_key(*k)))
}

/// Read a `--execution_log_json_file` stream from `src` into `out`
/// (`skipped_lines` blank lines came before `src`).
///
/// # Errors
/// Text that is not JSON (`file: line N: ...`), an object that is not a
/// `SpawnExec`, a remote spawn without a digest or with a bad one
/// (`file: object N: ...`).
pub fn read_json_stream(
    src: impl Read,
    skipped_lines: u64,
    file: &str,
    out: &mut Collector,
) -> Result<(), LogError> {
    let end = Rc::new(Cell::new(MAX_JSON));
    let bounded = Bounded {
        inner: src,
        read: 0,
        end: Rc::clone(&end),
    };
    let mut stream = serde_json::Deserializer::from_reader(bounded).into_iter::<Value>();
    let mut i = 0u64;
    while let Some(v) = stream.next() {
        i += 1;
        let object = Some(Position::Object(i));
        // A log cut inside its last object (Bazel killed mid-build, or the
        // build still running): the objects before it stand, and the cut
        // is said, as for a Buck2 log cut mid-record.
        if v.as_ref().is_err_and(|e| e.is_eof()) && i > 1 {
            out.truncated(file);
            return Ok(());
        }
        let v = v.map_err(|e| {
            let kind = match e.io_error_kind() {
                Some(io::ErrorKind::FileTooLarge) => LogErrorKind::JsonTooLong,
                _ => LogErrorKind::NotJson(e.to_string()),
            };
            let at = Some(Position::Line(e.line() as u64 + skipped_lines));
            LogError::new(file, at, kind)
        })?;
        // The next object may take MAX_JSON bytes from where this ended.
        end.set((stream.byte_offset() as u64).saturating_add(MAX_JSON));
        if !is_spawn_exec(&v) {
            return Err(LogError::new(file, object, LogErrorKind::NotSpawnExec));
        }
        let seen = SpawnSeen {
            label: str_field(&v, "targetLabel", "target_label"),
            output: first_output(&v),
            mnemonic: str_field(&v, "mnemonic", "mnemonic"),
            runner: str_field(&v, "runner", "runner"),
            digest: v.get("digest").filter(|d| d.is_object()).map(json_digest),
        };
        gather(seen, Origin::BazelJson, out).map_err(|k| LogError::new(file, object, k))?;
    }
    Ok(())
}

/// `inner`, ending in an error ([`io::ErrorKind::FileTooLarge`]) at byte
/// `end` (moved on after each object): one JSON object never holds more
/// than [`MAX_JSON`] bytes in memory.
struct Bounded<R> {
    inner: R,
    read: u64,
    end: Rc<Cell<u64>>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.end.get().saturating_sub(self.read);
        if left == 0 && !buf.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                "a JSON object over the limit",
            ));
        }
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Read the compact log's entries after `first` (already read) from
/// `records` into `out`. A log cut inside an entry or frame is noted in
/// `out`, its spawns before the cut kept.
///
/// # Errors
/// An entry that does not decode, a remote spawn without a digest or with
/// a bad one, a corrupt stream: `file: byte N after decompression: ...`.
pub fn read_compact_records<R: Read>(
    records: &mut Records<R>,
    first: &[u8],
    file: &str,
    out: &mut Collector,
) -> Result<(), LogError> {
    let mut buf = first.to_vec();
    let mut at = 0;
    loop {
        let entry = ExecLogEntry::decode(buf.as_slice()).map_err(|e| {
            let kind = LogErrorKind::BadRecord {
                message: "tools.protos.ExecLogEntry",
                why: e.to_string(),
            };
            LogError::new(file, Some(Position::Byte(at)), kind)
        })?;
        if let Some(s) = &entry.spawn {
            let digest = s.digest.as_ref().map(|d| {
                let text = std::format!("{}/{}", d.hash, d.size_bytes);
                (text, digest_from_parts(&d.hash, d.size_bytes))
            });
            let seen = SpawnSeen {
                label: &s.target_label,
                // The compact log names outputs by entry id: not followed.
                output: "",
                mnemonic: &s.mnemonic,
                runner: &s.runner,
                digest,
            };
            gather(seen, Origin::BazelCompact, out)
                .map_err(|k| LogError::new(file, Some(Position::Byte(at)), k))?;
        }
        at = records.offset();
        match records.next_into(&mut buf) {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(RecordError::Truncated) => {
                out.truncated(file);
                return Ok(());
            }
            Err(e) => return Err(LogError::record(file, at, e)),
        }
    }
}

/// Read a decompressed compact log (the entries, no zstd) from `src`: the
/// entry for fuzzing.
///
/// # Errors
/// As [`read_compact_records`]; an empty input too.
pub fn read_compact_plain(src: impl Read, file: &str, out: &mut Collector) -> Result<(), LogError> {
    let mut records = Records::new(src);
    let mut first = Vec::new();
    match records.next_into(&mut first) {
        Ok(true) => read_compact_records(&mut records, &first, file, out),
        Ok(false) => Err(LogError::new(file, None, LogErrorKind::Empty)),
        Err(RecordError::Truncated) => {
            out.truncated(file);
            Ok(())
        }
        Err(e) => Err(LogError::record(file, 0, e)),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Tests of `bazel.rs`. Facts: Bazel `src/main/protobuf/spawn.proto` (the
    //! field numbers, the runner names in `SpawnExec.runner`'s comment),
    //! `CompactSpawnLogContext.java` (zstd over delimited `ExecLogEntry`s,
    //! the `Invocation` entry first without an id, file entries with ids,
    //! the spawn's digest without `hash_function_name`); the JSON log is
    //! protobuf's JsonFormat: lowerCamelCase names, int64 as strings,
    //! pretty-printed objects one after another.

    use super::*;
    use crate::remote::action::Found;
    use crate::remote::delimited::tests::zstd_cli;
    use crate::remote::logs::read_log;
    use std::format;
    use std::io::Cursor;
    use std::string::ToString;
    use std::vec;

    const H1: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const H2: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    /// The writer's messages, with fields the reader skips.
    pub(crate) mod w {
        use prost::Message;
        use std::string::String;
        use std::vec::Vec;

        #[derive(Clone, PartialEq, Message)]
        pub struct Digest {
            #[prost(string, tag = "1")]
            pub hash: String,
            #[prost(int64, tag = "2")]
            pub size_bytes: i64,
            #[prost(string, tag = "3")]
            pub hash_function_name: String,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Invocation {
            #[prost(string, tag = "1")]
            pub hash_function_name: String,
            #[prost(string, tag = "2")]
            pub workspace_runfiles_directory: String,
            #[prost(string, tag = "4")]
            pub id: String,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct File {
            #[prost(string, tag = "1")]
            pub path: String,
            #[prost(message, optional, tag = "2")]
            pub digest: Option<Digest>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Spawn {
            #[prost(string, repeated, tag = "1")]
            pub args: Vec<String>,
            #[prost(uint32, tag = "4")]
            pub input_set_id: u32,
            #[prost(string, tag = "7")]
            pub target_label: String,
            #[prost(string, tag = "8")]
            pub mnemonic: String,
            #[prost(int32, tag = "9")]
            pub exit_code: i32,
            #[prost(string, tag = "11")]
            pub runner: String,
            #[prost(bool, tag = "12")]
            pub cache_hit: bool,
            #[prost(bool, tag = "13")]
            pub remotable: bool,
            #[prost(message, optional, tag = "16")]
            pub digest: Option<Digest>,
            #[prost(int64, tag = "17")]
            pub timeout_millis: i64,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Entry {
            #[prost(uint32, tag = "1")]
            pub id: u32,
            #[prost(message, optional, tag = "2")]
            pub invocation: Option<Invocation>,
            #[prost(message, optional, tag = "3")]
            pub file: Option<File>,
            #[prost(message, optional, tag = "7")]
            pub spawn: Option<Spawn>,
        }
    }

    fn spawn(label: &str, mnemonic: &str, runner: &str, digest: Option<(&str, i64)>) -> w::Spawn {
        w::Spawn {
            args: vec!["gcc".to_string(), "-c".to_string()],
            input_set_id: 1,
            target_label: label.to_string(),
            mnemonic: mnemonic.to_string(),
            exit_code: 0,
            runner: runner.to_string(),
            cache_hit: runner.ends_with("hit"),
            remotable: true,
            digest: digest.map(|(h, s)| w::Digest {
                hash: h.to_string(),
                size_bytes: s,
                hash_function_name: String::new(),
            }),
            timeout_millis: 0,
        }
    }

    /// A compact log (decompressed) as Bazel writes it: Invocation, a file
    /// entry with an id, then spawns: remote, remote cache hit, sandboxed,
    /// disk cache hit, and the first again.
    pub(crate) fn compact_plain() -> Vec<u8> {
        let entries = vec![
            w::Entry {
                invocation: Some(w::Invocation {
                    hash_function_name: "SHA-256".to_string(),
                    workspace_runfiles_directory: "_main".to_string(),
                    id: "0b9a3c2e-0000-4000-8000-000000000000".to_string(),
                }),
                ..w::Entry::default()
            },
            w::Entry {
                id: 1,
                file: Some(w::File {
                    path: "a.c".to_string(),
                    digest: Some(w::Digest {
                        hash: H2.to_string(),
                        size_bytes: 3,
                        hash_function_name: String::new(),
                    }),
                }),
                ..w::Entry::default()
            },
            w::Entry {
                spawn: Some(spawn("//app:main", "CppCompile", "remote", Some((H1, 140)))),
                ..w::Entry::default()
            },
            w::Entry {
                spawn: Some(spawn(
                    "//lib:core",
                    "CppLink",
                    "remote cache hit",
                    Some((H2, 90)),
                )),
                ..w::Entry::default()
            },
            w::Entry {
                spawn: Some(spawn(
                    "//lib:gen",
                    "Genrule",
                    "linux-sandbox",
                    Some((H2, 1)),
                )),
                ..w::Entry::default()
            },
            w::Entry {
                spawn: Some(spawn("//lib:gen2", "Genrule", "disk cache hit", None)),
                ..w::Entry::default()
            },
            w::Entry {
                spawn: Some(spawn("//app:main", "CppCompile", "remote", Some((H1, 140)))),
                ..w::Entry::default()
            },
        ];
        let mut out = Vec::new();
        for e in entries {
            e.encode_length_delimited(&mut out).unwrap();
        }
        out
    }

    /// The same build as `--execution_log_json_file` writes it.
    pub(crate) fn json_log() -> String {
        let obj = |label: &str, mnemonic: &str, runner: &str, digest: Option<(&str, &str)>| {
            let digest = digest.map_or(String::new(), |(h, s)| {
            format!(
                ",\n  \"digest\": {{\n    \"hash\": \"{h}\",\n    \"sizeBytes\": \"{s}\",\n    \"hashFunctionName\": \"SHA-256\"\n  }}"
            )
        });
            format!(
                "{{\n  \"commandArgs\": [\"gcc\", \"-c\"],\n  \"environmentVariables\": [],\n  \"platform\": {{\n  }},\n  \"listedOutputs\": [\"a.o\"],\n  \"remotable\": true,\n  \"cacheable\": true,\n  \"mnemonic\": \"{mnemonic}\",\n  \"runner\": \"{runner}\",\n  \"cacheHit\": false,\n  \"exitCode\": 0,\n  \"targetLabel\": \"{label}\"{digest},\n  \"metrics\": {{\n    \"totalTime\": \"1.5s\"\n  }}\n}}"
            )
        };
        [
            obj("//app:main", "CppCompile", "remote", Some((H1, "140"))),
            obj(
                "//lib:core",
                "CppLink",
                "remote cache hit",
                Some((H2, "90")),
            ),
            obj("//lib:gen", "Genrule", "linux-sandbox", Some((H2, "1"))),
            obj("//lib:gen2", "Genrule", "disk cache hit", None),
            obj("//app:main", "CppCompile", "remote", Some((H1, "140"))),
        ]
        .join("")
    }

    fn check(found: &Found, origin: Origin) {
        let got: Vec<(&str, &str, &str, i64)> = found
            .actions
            .iter()
            .map(|n| {
                (
                    n.id.as_str(),
                    n.category.as_str(),
                    &n.digest.hash[..1],
                    n.digest.size_bytes,
                )
            })
            .collect();
        // The JSON log lists each spawn's outputs: the first one's file name
        // tells one target's spawns apart. The compact log names them by entry
        // id, not followed.
        let (main, core) = match origin {
            Origin::BazelJson => ("//app:main (a.o)", "//lib:core (a.o)"),
            _ => ("//app:main", "//lib:core"),
        };
        assert_eq!(
            got,
            vec![(main, "CppCompile", "a", 140), (core, "CppLink", "b", 90)]
        );
        assert!(found.actions.iter().all(|n| n.origin == origin));
        assert_eq!(found.local, 2);
        assert!(found.killed.is_empty());
    }

    fn read(bytes: Vec<u8>, name: &str) -> Result<Found, LogError> {
        let mut out = Collector::new();
        read_log(Cursor::new(bytes), name, &mut out)?;
        Ok(out.finish())
    }

    #[test]
    fn compact_log_as_bazel_writes_it() {
        check(
            &read(zstd_cli(&compact_plain()), "exec.log.zst").unwrap(),
            Origin::BazelCompact,
        );
        let mut out = Collector::new();
        read_compact_plain(Cursor::new(compact_plain()), "x", &mut out).unwrap();
        check(&out.finish(), Origin::BazelCompact);
    }

    #[test]
    fn json_log_as_bazel_writes_it() {
        check(
            &read(json_log().into_bytes(), "exec.json").unwrap(),
            Origin::BazelJson,
        );
        // On one line each, with numbers for int64, also read.
        let compact: String = json_log()
            .replace("\n", "")
            .replace("\"sizeBytes\": \"140\"", "\"sizeBytes\": 140");
        check(
            &read(compact.into_bytes(), "exec.json").unwrap(),
            Origin::BazelJson,
        );
    }

    #[test]
    fn a_remote_spawn_without_digest_is_bazel_before_7() {
        let old =
            "{\"runner\": \"remote\", \"mnemonic\": \"CppCompile\"}\n{\"runner\": \"remote\"}";
        let e = read(old.as_bytes().to_vec(), "e.json").unwrap_err();
        assert_eq!(
            e.to_string(),
            "e.json: object 1: a remote spawn without its action digest (Bazel writes it from version 7)"
        );
        let mut plain = Vec::new();
        w::Entry {
            spawn: Some(spawn("//a:b", "X", "remote", None)),
            ..w::Entry::default()
        }
        .encode_length_delimited(&mut plain)
        .unwrap();
        let e = read(zstd_cli(&plain), "c.zst").unwrap_err();
        assert_eq!(e.at, Some(Position::Byte(0)));
        assert!(matches!(e.kind, LogErrorKind::NoDigest));
    }

    #[test]
    fn json_errors_name_line_or_object() {
        let text = format!(
            "{}\n{{\"runner\": \"remote\",\n \"digest\": {{\"hash\": \"abc\", \"sizeBytes\": \"1\"}}}}",
            json_log()
        );
        let e = read(text.into_bytes(), "e.json").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("e.json: object 6: action digest \"abc/1\""),
            "{e}"
        );
        let text = format!("{}\n{{\"other\": 1}}", json_log());
        let e = read(text.into_bytes(), "e.json").unwrap_err();
        assert_eq!(
            e.to_string(),
            "e.json: object 6: not a Bazel SpawnExec object"
        );
        // Cut inside the object after the whole ones (Bazel killed mid-build):
        // those stand, and the log is said to be cut.
        let whole = read(json_log().into_bytes(), "e.json").unwrap();
        let text = format!("{}\n{{\"runner\": ", json_log());
        let found = read(text.into_bytes(), "e.json").unwrap();
        assert_eq!(found.actions, whole.actions);
        assert_eq!(found.truncated, vec!["e.json".to_string()]);
        // Cut inside the first object: nothing stands, not JSON.
        let e = read(b"{\"runner\": ".to_vec(), "e.json").unwrap_err();
        assert!(e.to_string().starts_with("e.json: line 1: not JSON"), "{e}");
    }

    #[test]
    fn garbage_and_cuts_do_not_panic() {
        let plain = compact_plain();
        for cut in 0..plain.len() {
            let _ = read_compact_plain(
                Cursor::new(plain[..cut].to_vec()),
                "x",
                &mut Collector::new(),
            );
        }
        let mut out = Collector::new();
        read_compact_plain(
            Cursor::new(plain[..plain.len() - 4].to_vec()),
            "x",
            &mut out,
        )
        .unwrap();
        let found = out.finish();
        assert_eq!(found.truncated, vec!["x".to_string()]);
        assert_eq!(found.actions.len(), 2);
        let text = json_log();
        for cut in (0..text.len()).step_by(5) {
            let _ = read(text.as_bytes()[..cut].to_vec(), "x");
        }
        let e = read_compact_plain(
            Cursor::new(vec![4u8, 0x3a, 0x09, 1, 2]),
            "x",
            &mut Collector::new(),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("not a tools.protos.ExecLogEntry record"),
            "{e}"
        );
    }
}
