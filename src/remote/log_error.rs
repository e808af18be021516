//! A log that cannot be read: where ([`Position`]) and why
//! ([`LogErrorKind`]), one line each ([`LogError`]); and the cap on a JSON
//! line or object ([`MAX_JSON`], [`read_line_capped`]) past which a reader
//! refuses it.
//!
//! Shared by every log reader ([`super::bazel`], [`super::buck2_json`],
//! [`super::buck2_log`]) and by [`super::logs`], which dispatches to them.

use core::fmt;
use std::io::{self, BufRead, Read};
use std::string::{String, ToString};
use std::vec::Vec;

use crate::remote::delimited::RecordError;
use crate::remote::digest::DigestError;

/// The longest JSON line (`buck2 log show`) or object (Bazel `SpawnExec`)
/// read, bytes (64 MiB): far above any event or spawn (Buck2 keeps its
/// events small; a Bazel spawn lists its inputs, some MB at most), low
/// enough that a file with no line breaks (a core dump, `/dev/zero` after
/// a `{`) is refused with memory bounded, not read whole.
pub const MAX_JSON: u64 = 64 << 20;

/// Read one line (its `\n` kept) into `buf` (appended), at most
/// [`MAX_JSON`] bytes. `Ok(None)`: the line is longer (`buf` then holds
/// its first `MAX_JSON + 1` bytes); else the bytes read (0 at the end).
pub fn read_line_capped(src: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<Option<usize>> {
    let start = buf.len();
    let n = src.take(MAX_JSON + 1).read_until(b'\n', buf)?;
    if (buf.len() - start) as u64 > MAX_JSON {
        return Ok(None);
    }
    Ok(Some(n))
}

/// Where in a log a fault is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// Byte offset in the decompressed stream (a record's start).
    Byte(u64),
    /// Byte offset in the file itself (compressed, or a Bazel binary log,
    /// which is not).
    CompressedByte(u64),
    /// 1-based line.
    Line(u64),
    /// 1-based index of a JSON object in a stream of them.
    Object(u64),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Byte(b) => write!(f, "byte {b} after decompression"),
            Self::CompressedByte(b) => write!(f, "byte {b}"),
            Self::Line(l) => write!(f, "line {l}"),
            Self::Object(o) => write!(f, "object {o}"),
        }
    }
}

/// What is wrong with a log.
#[derive(Debug)]
pub enum LogErrorKind {
    /// It could not be opened or read.
    Read(io::Error),
    /// It holds nothing (or only whitespace).
    Empty,
    /// Its first bytes are none of the formats.
    UnknownFormat,
    /// gzip: Buck2's `.pb.gz` / `.json-lines.gz` are not read.
    Gzip,
    /// The zstd stream is corrupt.
    Zstd(String),
    /// The input ends inside a record.
    Truncated,
    /// A record length over ten varint bytes.
    BadLength,
    /// A record length over `delimited::MAX_RECORD`.
    TooLong(u64),
    /// A JSON line or object over [`MAX_JSON`] bytes (a file that is not
    /// a log, or one line of a runaway writer): refused, not held.
    JsonTooLong,
    /// A record that does not decode as the message it must be.
    BadRecord {
        /// The message expected (`buck.data.BuckEvent`, ...).
        message: &'static str,
        /// prost's words.
        why: String,
    },
    /// A line or object that is not JSON.
    NotJson(String),
    /// JSON, but not a `buck2 log show` line.
    NotBuck2Line,
    /// JSON, but not a Bazel `SpawnExec`.
    NotSpawnExec,
    /// An action digest that is not one.
    Digest {
        /// The text as found.
        text: String,
        /// Why.
        error: DigestError,
    },
}

impl fmt::Display for LogErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read(e) => write!(f, "cannot read: {e}"),
            Self::Empty => f.write_str("empty"),
            Self::UnknownFormat => f.write_str(
                "not a log headroom reads: a Buck2 event log (*_events.pb.zst), \
                 buck2 log show output, or a Bazel execution log \
                 (--execution_log_json_file, --execution_log_binary_file \
                 or --execution_log_compact_file)",
            ),
            Self::Gzip => f.write_str("gzip-compressed: gunzip it first"),
            Self::Zstd(w) => write!(f, "{w}"),
            Self::Truncated => f.write_str("ends inside a record"),
            Self::BadLength => f.write_str("a record length that is not a varint"),
            Self::TooLong(n) => write!(f, "a record of {n} bytes: not a log record"),
            Self::JsonTooLong => write!(
                f,
                "a JSON line or object over {} MiB: not a log record",
                MAX_JSON >> 20
            ),
            Self::BadRecord { message, why } => write!(f, "not a {message} record: {why}"),
            Self::NotJson(w) => write!(f, "not JSON: {w}"),
            Self::NotBuck2Line => f.write_str("not a buck2 log show line"),
            Self::NotSpawnExec => f.write_str("not a Bazel SpawnExec object"),
            Self::Digest { text, error } => write!(f, "action digest {text:?}: {error}"),
        }
    }
}

/// A log that cannot be read, one line: `FILE: POSITION: what`.
#[derive(Debug)]
pub struct LogError {
    /// The file as named on the command line (`-`: standard input;
    /// `--digest` for a hand digest).
    pub file: String,
    /// Where in it, when known.
    pub at: Option<Position>,
    /// What.
    pub kind: LogErrorKind,
}

impl LogError {
    /// An error in `file` at `at`.
    pub fn new(file: &str, at: Option<Position>, kind: LogErrorKind) -> Self {
        LogError {
            file: file.to_string(),
            at,
            kind,
        }
    }

    /// A record reader's error at decompressed byte `at`.
    pub fn record(file: &str, at: u64, e: RecordError) -> Self {
        let (pos, kind) = match e {
            RecordError::Truncated => (Position::Byte(at), LogErrorKind::Truncated),
            RecordError::BadLength => (Position::Byte(at), LogErrorKind::BadLength),
            RecordError::TooLong(n) => (Position::Byte(at), LogErrorKind::TooLong(n)),
            RecordError::Zstd(f) => (Position::CompressedByte(f.at), LogErrorKind::Zstd(f.what)),
            RecordError::Io(e) => return LogError::new(file, None, LogErrorKind::Read(e)),
        };
        LogError::new(file, Some(pos), kind)
    }
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(at) => write!(f, "{}: {at}: {}", self.file, self.kind),
            None => write!(f, "{}: {}", self.file, self.kind),
        }
    }
}

impl std::error::Error for LogError {}
