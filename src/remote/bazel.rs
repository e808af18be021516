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
#[path = "bazel_tests.rs"]
pub(crate) mod tests;
