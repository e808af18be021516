//! Bazel execution logs: `--execution_log_json_file` (a stream of
//! `tools.protos.SpawnExec` objects in proto3 JSON, camelCase keys, int64
//! as strings, pretty-printed, one after another with no separator),
//! `--execution_log_binary_file` (the same messages, varint-length-delimited,
//! uncompressed: what Bazel 4-6 users have, still written by Bazel 8) and
//! `--execution_log_compact_file` (zstd, varint-length-delimited
//! `ExecLogEntry` messages; spawns are `ExecLogEntry.spawn`, 7).
//!
//! A spawn is remote when its `runner` is `remote` (executed remotely) or
//! `remote cache hit`; other runners (`linux-sandbox`, `local`, `worker`,
//! `disk cache hit`, ...) are counted local. The action digest is
//! `SpawnExec.digest` (19) / `Spawn.digest` (16), a `Digest` {`hash` 1,
//! `size_bytes` 2}, written from Bazel 7: a remote spawn without one (Bazel
//! 4-6) is counted ([`Collector::remote_no_digest`]), not looked up.
//!
//! # References
//! Bazel `src/main/protobuf/spawn.proto` (`SpawnExec`: `command_args` 1,
//! `listed_outputs` 5, `remotable` 6, `mnemonic` 10, `runner` 12,
//! `cache_hit` 13, `exit_code` 15, `target_label` 18, `digest` 19,
//! `metrics` 20, reserved 9 and 17 (Bazel 4's `progress_message` and
//! `walltime`); `ExecLogEntry`: `id` 1, `spawn` 7; `ExecLogEntry.Spawn`:
//! `target_label` 7, `mnemonic` 8, `exit_code` 9, `runner` 11, `cache_hit`
//! 12, `remotable` 13, `digest` 16); `ExecutionOptions.java`
//! (`--execution_log_binary_file`: "length-delimited SpawnExec protos");
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

/// `tools.protos.SpawnExec` (`--execution_log_binary_file`), the fields
/// read.
#[derive(Clone, PartialEq, Message)]
pub struct SpawnExec {
    /// `listed_outputs` (5), paths from the execution root, sorted.
    #[prost(string, repeated, tag = "5")]
    pub listed_outputs: Vec<String>,
    /// `mnemonic` (10).
    #[prost(string, tag = "10")]
    pub mnemonic: String,
    /// `runner` (12).
    #[prost(string, tag = "12")]
    pub runner: String,
    /// `target_label` (18).
    #[prost(string, tag = "18")]
    pub target_label: String,
    /// `digest` (19), from Bazel 7.
    #[prost(message, optional, tag = "19")]
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

/// One spawn as every encoding gives it.
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
    let Some((text, parsed)) = s.digest else {
        out.remote_no_digest();
        return Ok(());
    };
    let digest = parsed.map_err(|error| LogErrorKind::Digest { text, error })?;
    // Bazel 4 writes no target label: the output names the spawn.
    let id = match (s.label, s.output) {
        (l, "") => l.to_string(),
        ("", o) => o.to_string(),
        (l, o) => std::format!("{l} ({o})"),
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
/// An entry that does not decode, a remote spawn with a bad digest, a
/// corrupt stream: `file: byte N after decompression: ...`.
pub fn read_compact_records<R: Read>(
    records: &mut Records<R>,
    first: &[u8],
    file: &str,
    out: &mut Collector,
) -> Result<(), LogError> {
    let read = Reading {
        file,
        message: "tools.protos.ExecLogEntry",
        place: Position::Byte,
    };
    read.each_record(records, first, out, |buf, out| {
        let entry = ExecLogEntry::decode(buf)?;
        let Some(s) = &entry.spawn else {
            return Ok(Ok(()));
        };
        let seen = SpawnSeen {
            label: &s.target_label,
            // The compact log names outputs by entry id: not followed.
            output: "",
            mnemonic: &s.mnemonic,
            runner: &s.runner,
            digest: s.digest.as_ref().map(proto_digest),
        };
        Ok(gather(seen, Origin::BazelCompact, out))
    })
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

/// Read a `--execution_log_binary_file` (varint-length-delimited
/// `SpawnExec`s, uncompressed) from `src` into `out`. A log cut inside a
/// record (Bazel killed while writing it) is noted in `out`, the spawns
/// before the cut kept.
///
/// # Errors
/// A record that does not decode as a `SpawnExec`, a remote spawn with a
/// bad digest, a length that is not one: `file: byte N: ...` (N where the
/// record starts); an empty input.
pub fn read_binary(src: impl Read, file: &str, out: &mut Collector) -> Result<(), LogError> {
    let read = Reading {
        file,
        message: "tools.protos.SpawnExec",
        place: Position::CompressedByte,
    };
    let mut records = Records::new(src);
    let mut first = Vec::new();
    match records.next_into(&mut first) {
        Ok(true) => {}
        Ok(false) => return Err(LogError::new(file, None, LogErrorKind::Empty)),
        Err(RecordError::Truncated) => {
            out.truncated(file);
            return Ok(());
        }
        Err(e) => return Err(read.record_error(0, e)),
    }
    read.each_record(&mut records, &first, out, |buf, out| {
        let s = SpawnExec::decode(buf)?;
        let first = s.listed_outputs.first().map_or("", String::as_str);
        let seen = SpawnSeen {
            label: &s.target_label,
            output: first.rsplit('/').next().unwrap_or(first),
            mnemonic: &s.mnemonic,
            runner: &s.runner,
            digest: s.digest.as_ref().map(proto_digest),
        };
        Ok(gather(seen, Origin::BazelBinary, out))
    })
}

/// A protobuf `Digest` as text (for errors) and its parse.
fn proto_digest(d: &SpawnDigest) -> DigestSeen {
    let text = std::format!("{}/{}", d.hash, d.size_bytes);
    let parsed = digest_from_parts(&d.hash, d.size_bytes);
    (text, parsed)
}

/// One delimited log being read: its name, the message each record is,
/// and how an offset is said (decompressed, or in the file itself).
struct Reading<'a> {
    file: &'a str,
    message: &'static str,
    place: fn(u64) -> Position,
}

/// What one record gave: `Err` when it does not decode, `Ok(Err)` when it
/// decodes but cannot be counted (a bad digest).
type RecordSeen = Result<Result<(), LogErrorKind>, prost::DecodeError>;

impl Reading<'_> {
    /// The record reader's error `e` at offset `at`.
    fn record_error(&self, at: u64, e: RecordError) -> LogError {
        let mut e = LogError::record(self.file, at, e);
        if let Some(Position::Byte(b)) = e.at {
            e.at = Some((self.place)(b));
        }
        e
    }

    /// `each` over `first` (read already) and every later record of
    /// `records`. A cut inside a record or frame is noted in `out` and
    /// ends the log; what came before stands.
    fn each_record<R: Read>(
        &self,
        records: &mut Records<R>,
        first: &[u8],
        out: &mut Collector,
        mut each: impl FnMut(&[u8], &mut Collector) -> RecordSeen,
    ) -> Result<(), LogError> {
        let mut buf = first.to_vec();
        let mut at = 0;
        loop {
            let kind = match each(&buf, out) {
                Ok(Ok(())) => None,
                Ok(Err(kind)) => Some(kind),
                Err(e) => Some(LogErrorKind::BadRecord {
                    message: self.message,
                    why: e.to_string(),
                }),
            };
            if let Some(kind) = kind {
                return Err(LogError::new(self.file, Some((self.place)(at)), kind));
            }
            at = records.offset();
            match records.next_into(&mut buf) {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(RecordError::Truncated) => {
                    out.truncated(self.file);
                    return Ok(());
                }
                Err(e) => return Err(self.record_error(at, e)),
            }
        }
    }
}

/// The wire type of `SpawnExec` field `field`; `None` for a field it does
/// not have (Bazel 4's `progress_message` 9 and `walltime` 17 included:
/// strings and messages).
fn spawn_exec_wire(field: u64) -> Option<u64> {
    match field {
        1..=5 | 9..=12 | 14 | 17..=20 => Some(2),
        6..=8 | 13 | 15 | 16 => Some(0),
        _ => None,
    }
}

/// A varint at the start of `b`: its value and length; `None` when `b`
/// ends inside it or it is not one.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut rest = b;
    let v = prost::encoding::decode_varint(&mut rest).ok()?;
    Some((v, b.len() - rest.len()))
}

/// Whether `head`, a log's first bytes, starts as a
/// `--execution_log_binary_file`: a varint length, then a record whose
/// fields are `SpawnExec`'s (the first one a field it has, each known one
/// with its wire type, none past the record's end).
///
/// A record as long as `{` (123) or an ASCII whitespace byte must be whole
/// in `head` and end exactly where its length says, so that JSON (which
/// starts so) is never taken for it; a longer record is checked as far as
/// `head` goes.
pub fn is_binary_log(head: &[u8]) -> bool {
    let Some((len, n)) = varint(head) else {
        return false;
    };
    let Ok(len) = usize::try_from(len) else {
        return false;
    };
    let body = &head[n..];
    let text_like = head[0] == b'{' || head[0].is_ascii_whitespace();
    if len == 0 || (text_like && body.len() < len) {
        return false;
    }
    let record = &body[..len.min(body.len())];
    let mut at = 0;
    while at < record.len() {
        let Some((tag, n)) = varint(&record[at..]) else {
            return record.len() < len && at > 0;
        };
        let (field, wire) = (tag >> 3, tag & 7);
        match spawn_exec_wire(field) {
            Some(w) if w != wire => return false,
            None if at == 0 || field == 0 => return false,
            _ => {}
        }
        at += n;
        let skip = match wire {
            0 => varint(&record[at..]).map(|(_, n)| n as u64),
            1 => Some(8),
            2 => varint(&record[at..]).map(|(l, n)| l.saturating_add(n as u64)),
            5 => Some(4),
            _ => return false,
        };
        let Some(skip) = skip else {
            return record.len() < len;
        };
        let end = (at as u64).saturating_add(skip);
        if end > len as u64 {
            return false;
        }
        at = usize::try_from(end).unwrap_or(usize::MAX);
    }
    // At least the first field's tag was seen and checked.
    at > 0
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
        pub struct EnvironmentVariable {
            #[prost(string, tag = "1")]
            pub name: String,
            #[prost(string, tag = "2")]
            pub value: String,
        }

        /// `SpawnExec` as Bazel 4 to 8 write it, Bazel 4's
        /// `progress_message` (9) too.
        #[derive(Clone, PartialEq, Message)]
        pub struct SpawnExec {
            #[prost(string, repeated, tag = "1")]
            pub command_args: Vec<String>,
            #[prost(message, repeated, tag = "2")]
            pub environment_variables: Vec<EnvironmentVariable>,
            #[prost(message, repeated, tag = "4")]
            pub inputs: Vec<File>,
            #[prost(string, repeated, tag = "5")]
            pub listed_outputs: Vec<String>,
            #[prost(bool, tag = "6")]
            pub remotable: bool,
            #[prost(bool, tag = "7")]
            pub cacheable: bool,
            #[prost(string, tag = "9")]
            pub progress_message: String,
            #[prost(string, tag = "10")]
            pub mnemonic: String,
            #[prost(message, repeated, tag = "11")]
            pub actual_outputs: Vec<File>,
            #[prost(string, tag = "12")]
            pub runner: String,
            #[prost(bool, tag = "13")]
            pub cache_hit: bool,
            #[prost(int32, tag = "15")]
            pub exit_code: i32,
            #[prost(bool, tag = "16")]
            pub remote_cacheable: bool,
            #[prost(string, tag = "18")]
            pub target_label: String,
            #[prost(message, optional, tag = "19")]
            pub digest: Option<Digest>,
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

    /// [`json_log`] as Bazel 4-6 write it: no `digest`, no `targetLabel`.
    pub(crate) fn json_log_before_7() -> String {
        let log = json_log();
        let stream = serde_json::Deserializer::from_str(&log).into_iter::<Value>();
        let mut out = String::new();
        for v in stream {
            let mut v = v.unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("digest");
            o.remove("targetLabel");
            out.push_str(&serde_json::to_string_pretty(&v).unwrap());
        }
        out
    }

    /// One `SpawnExec` of the binary log: Bazel 7's shape when `digest`
    /// is given (with a target label), Bazel 4's without (no label, a
    /// progress message).
    fn spawn_exec(
        label: &str,
        mnemonic: &str,
        runner: &str,
        digest: Option<(&str, i64)>,
    ) -> w::SpawnExec {
        let file = |path: &str| w::File {
            path: path.to_string(),
            digest: Some(w::Digest {
                hash: H2.to_string(),
                size_bytes: 3,
                hash_function_name: "SHA-256".to_string(),
            }),
        };
        w::SpawnExec {
            command_args: vec!["gcc".to_string(), "-c".to_string(), "a.c".to_string()],
            environment_variables: vec![w::EnvironmentVariable {
                name: "PATH".to_string(),
                value: "/bin:/usr/bin".to_string(),
            }],
            inputs: vec![file("a.c"), file("a.h")],
            listed_outputs: vec!["bazel-out/k8-fastbuild/bin/a.o".to_string()],
            remotable: true,
            cacheable: true,
            progress_message: match digest {
                None => std::format!("Compiling {label}"),
                Some(_) => String::new(),
            },
            mnemonic: mnemonic.to_string(),
            actual_outputs: vec![file("bazel-out/k8-fastbuild/bin/a.o")],
            runner: runner.to_string(),
            cache_hit: runner.ends_with("hit"),
            exit_code: 0,
            remote_cacheable: true,
            target_label: match digest {
                None => String::new(),
                Some(_) => label.to_string(),
            },
            digest: digest.map(|(h, s)| w::Digest {
                hash: h.to_string(),
                size_bytes: s,
                hash_function_name: "SHA-256".to_string(),
            }),
        }
    }

    /// The build of [`json_log`] as `--execution_log_binary_file` writes
    /// it (Bazel 7: with digests), and the offset where each record ends.
    pub(crate) fn binary_log() -> (Vec<u8>, Vec<usize>) {
        let spawns = [
            spawn_exec("//app:main", "CppCompile", "remote", Some((H1, 140))),
            spawn_exec("//lib:core", "CppLink", "remote cache hit", Some((H2, 90))),
            spawn_exec("//lib:gen", "Genrule", "linux-sandbox", Some((H2, 1))),
            spawn_exec("//lib:gen2", "Genrule", "disk cache hit", None),
            spawn_exec("//app:main", "CppCompile", "remote", Some((H1, 140))),
        ];
        let mut out = Vec::new();
        let mut ends = Vec::new();
        for s in spawns {
            s.encode_length_delimited(&mut out).unwrap();
            ends.push(out.len());
        }
        (out, ends)
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
            Origin::BazelJson | Origin::BazelBinary => ("//app:main (a.o)", "//lib:core (a.o)"),
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

    // Issue 34: Bazel before 7 writes no action digest; one remote spawn
    // without one refused the whole log. Now each is counted, not looked
    // up, in every encoding, and the spawns with one are read.
    #[test]
    fn a_remote_spawn_without_digest_is_counted_not_looked_up() {
        let old = format!(
            "{{\"runner\": \"remote cache hit\", \"mnemonic\": \"CppCompile\", \"listedOutputs\": [\"x/a.o\"]}}\n{{\"runner\": \"remote\"}}\n{}",
            json_log()
        );
        let found = read(old.into_bytes(), "e.json").unwrap();
        check(
            &Found {
                no_digest: 0,
                ..found.clone()
            },
            Origin::BazelJson,
        );
        assert_eq!(found.no_digest, 2);

        let mut plain = compact_plain();
        w::Entry {
            spawn: Some(spawn("//a:b", "X", "remote", None)),
            ..w::Entry::default()
        }
        .encode_length_delimited(&mut plain)
        .unwrap();
        let found = read(zstd_cli(&plain), "c.zst").unwrap();
        check(
            &Found {
                no_digest: 0,
                ..found.clone()
            },
            Origin::BazelCompact,
        );
        assert_eq!(found.no_digest, 1);

        let (mut bin, _) = binary_log();
        spawn_exec("//a:b", "CppCompile", "remote cache hit", None)
            .encode_length_delimited(&mut bin)
            .unwrap();
        let found = read(bin, "b.log").unwrap();
        check(
            &Found {
                no_digest: 0,
                ..found.clone()
            },
            Origin::BazelBinary,
        );
        assert_eq!(found.no_digest, 1);
    }

    /// A Bazel 4 binary log: no digest, no target label, a progress
    /// message (field 9): every remote spawn counted, none looked up.
    #[test]
    fn a_bazel_4_binary_log_counts_its_remote_spawns() {
        let mut bin = Vec::new();
        for runner in [
            "remote cache hit",
            "linux-sandbox",
            "remote cache hit",
            "worker",
        ] {
            spawn_exec("//a:b", "Javac", runner, None)
                .encode_length_delimited(&mut bin)
                .unwrap();
        }
        let found = read(bin, "exec.log").unwrap();
        assert_eq!(
            (found.actions.len(), found.local, found.no_digest),
            (0, 2, 2)
        );
        assert!(found.truncated.is_empty());
    }

    // Issue 34: `--execution_log_binary_file` was refused as no known format.
    #[test]
    fn binary_log_as_bazel_writes_it() {
        let (bin, _) = binary_log();
        assert!(is_binary_log(&bin));
        check(&read(bin.clone(), "exec.log").unwrap(), Origin::BazelBinary);
        let mut out = Collector::new();
        read_binary(Cursor::new(bin), "x", &mut out).unwrap();
        check(&out.finish(), Origin::BazelBinary);
    }

    /// Cut at every byte: exactly the spawns whose records end before the
    /// cut are read, and the log is said to be cut unless it ends between
    /// records. Cut before its first field's tag, nothing tells it from
    /// any other bytes: not a log headroom reads.
    #[test]
    fn a_binary_log_cut_anywhere_keeps_the_spawns_before_the_cut() {
        let (bin, ends) = binary_log();
        let whole = read(bin.clone(), "b").unwrap();
        let tag = varint(&bin).unwrap().1 + 1;
        for cut in 1..tag {
            let e = read(bin[..cut].to_vec(), "b").unwrap_err();
            assert!(matches!(e.kind, LogErrorKind::UnknownFormat), "{e}");
        }
        for cut in tag..bin.len() {
            let found =
                read(bin[..cut].to_vec(), "b").unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            let records = ends.iter().filter(|&&e| e <= cut).count();
            // Spawns 1 and 2 are remote, 3 and 4 local, 5 the first again.
            let remote = records.min(2);
            assert_eq!(found.actions, whole.actions[..remote], "cut at {cut}");
            assert_eq!(found.local, records.saturating_sub(2).min(2) as u64);
            let cut_short = !ends.contains(&cut);
            assert_eq!(
                found.truncated.len(),
                usize::from(cut_short),
                "cut at {cut}"
            );
        }
    }

    /// A Bazel 4-6 JSON log cut at every byte after its first object:
    /// exactly the objects before the cut are counted.
    #[test]
    fn a_json_log_before_7_cut_anywhere_keeps_the_spawns_before_the_cut() {
        let text = json_log_before_7();
        let ends: Vec<usize> = text.match_indices("\n}").map(|(i, _)| i + 2).collect();
        for cut in ends[0]..text.len() {
            let found = read(text.as_bytes()[..cut].to_vec(), "j")
                .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            let objects = ends.iter().filter(|&&e| e <= cut).count() as u64;
            assert_eq!(found.local + found.no_digest, objects, "cut at {cut}");
            let cut_short = !ends.contains(&cut);
            assert_eq!(
                found.truncated.len(),
                usize::from(cut_short),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn the_binary_log_is_told_apart_from_json_and_compact() {
        let (bin, _) = binary_log();
        // Not binary: JSON (pretty, one line, after whitespace), buck2 lines,
        // zstd, text, a record whose length reads as `{` cut before its end.
        let json = json_log();
        let no: [&[u8]; 8] = [
            json.as_bytes(),
            b"{\"runner\": \"remote\"}",
            b"\n\n  {\"runner\": \"remote\"}",
            b"{\"command_line_args\":[],\"trace_id\":\"x\"}\n",
            &[0x28, 0xB5, 0x2F, 0xFD, 0, 0, 0x07, 0],
            b"hello",
            &[0x7B, 0x0A, 0x02, b'a', b'b'],
            &[0x00, 0x0A],
        ];
        for head in no {
            assert!(!is_binary_log(head), "{head:?}");
        }
        // Binary: a first record of exactly 123 bytes (its length is `{`)
        // or 10 (`\n`), whole; a long first record checked as far as the
        // head goes.
        for len in [123usize, 10] {
            let arg = "x".repeat(len - 2);
            let rec = w::SpawnExec {
                command_args: vec![arg],
                ..w::SpawnExec::default()
            };
            let mut b = Vec::new();
            rec.encode_length_delimited(&mut b).unwrap();
            assert_eq!(usize::from(b[0]), len);
            assert!(is_binary_log(&b), "{len}");
            assert!(!is_binary_log(&b[..b.len() - 1]), "{len}");
            // No runner: not remote, so counted local.
            let found = read(b, "one").unwrap();
            assert_eq!((found.local, found.truncated.len()), (1, 0));
        }
        assert!(is_binary_log(&bin[..40]));
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
        let (bin, _) = binary_log();
        for i in 0..bin.len() {
            let mut b = bin.clone();
            b[i] ^= 0x5a;
            let _ = read(b, "x");
        }
        // `runner` (12) not UTF-8.
        let e = read(vec![3, 0x62, 1, 0x80], "x").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("x: byte 0: not a tools.protos.SpawnExec record"),
            "{e}"
        );
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
