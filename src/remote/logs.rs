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

/// Read one log of any format from `src` (named `file` in errors) into
/// `out`.
pub fn read_log(src: impl Read, file: &str, out: &mut Collector) -> Result<(), LogError> {
    let mut src = BufReader::new(src);
    let read_err = |e| LogError::new(file, None, LogErrorKind::Read(e));
    let head = src.fill_buf().map_err(read_err)?;
    if head.is_empty() {
        return Err(LogError::new(file, None, LogErrorKind::Empty));
    }
    if head.starts_with(&ZSTD_MAGIC) || (head.len() < 4 && ZSTD_MAGIC.starts_with(head)) {
        return read_zstd(src, file, out);
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Err(LogError::new(file, None, LogErrorKind::Gzip));
    }
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

fn read_zstd(src: impl Read, file: &str, out: &mut Collector) -> Result<(), LogError> {
    let mut records = Records::new(BufReader::new(Zstd::new(src)));
    let mut first = Vec::new();
    match records.next_into(&mut first) {
        Ok(true) => {}
        Ok(false) => return Err(LogError::new(file, None, LogErrorKind::Empty)),
        Err(RecordError::Truncated) => {
            out.truncated(file);
            return Ok(());
        }
        Err(e) => return Err(LogError::record(file, 0, e)),
    }
    if first.first() == Some(&buck2_log::INVOCATION_FIRST_BYTE) {
        buck2_log::read_records(&mut records, &first, file, out)
    } else {
        bazel::read_compact_records(&mut records, &first, file, out)
    }
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
#[path = "logs_tests.rs"]
mod tests;
