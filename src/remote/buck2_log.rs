//! Buck2's binary event log, `buck-out/v2/log/*_events.pb.zst`, read
//! without a `buck2` binary: zstd, then varint-length-delimited records.
//! The first record is the `buck.data.Invocation` header; each after it is
//! a `buck.daemon.CommandProgress` (written as `CommandProgressForWrite`,
//! the same bytes) whose `event` (1) is a `BuckEvent`. Only the fields on
//! the path to a finished action are declared here; prost skips the rest.
//!
//! Path: `BuckEvent.span_end` (21) → `SpanEndEvent.action_execution` (51)
//! → `ActionExecutionEnd` {`key` 1, `name` 5, `failed` 6, `error.unknown`
//! 7, `commands` 25} → `CommandExecution` {`details` 1, `status.error` 5}
//! → `CommandExecutionDetails` {`cmd_stdout` 2, `cmd_stderr` 3,
//! `command_kind` 5, `additional_message` 14} → `CommandExecutionKind`
//! {`local_command` 1, `remote_command` 2, `omitted_local_command` 3,
//! `worker_init_command` 4, `worker_command` 5} → `RemoteCommand`
//! {`action_digest` 1, `cache_hit_type` 5, `remote_dep_file_key` 6}.
//! Oneof members are declared as optional fields: on the wire they are.
//!
//! # References
//! Buck2 `app/buck2_data/data.proto`, `app/buck2_cli_proto/daemon.proto`
//! (`CommandProgress`, `CommandProgressForWrite`),
//! `app/buck2_event_log/src/write.rs` (`log_invocation` first, then
//! `serialize_to_protobuf_length_delimited` per event), `read.rs`
//! (`unpack_stream_protobuf`).

use std::io::Read;
use std::string::{String, ToString};
use std::vec::Vec;

use prost::Message;

use crate::remote::action::{Collector, Origin};
use crate::remote::buck2::{self, ActionEnd, Command};
use crate::remote::delimited::{RecordError, Records};
use crate::remote::log_error::{LogError, LogErrorKind, Position};

/// The first byte of the `Invocation` header record: field 1
/// (`command_line_args`), wire type 2 (`0x0A`); `argv` is never empty.
pub const INVOCATION_FIRST_BYTE: u8 = 0x0A;

/// `buck.data.Invocation`, the header: read only to check it is one.
#[derive(Clone, PartialEq, Message)]
pub struct Invocation {
    /// `command_line_args` (1).
    #[prost(string, repeated, tag = "1")]
    pub command_line_args: Vec<String>,
    /// `working_dir` (2).
    #[prost(string, tag = "2")]
    pub working_dir: String,
}

/// `buck.daemon.CommandProgress`: `event` (1); `result` (2) and
/// `partial_result` (3) skipped.
#[derive(Clone, PartialEq, Message)]
pub struct CommandProgress {
    /// `event` (1).
    #[prost(message, optional, tag = "1")]
    pub event: Option<BuckEvent>,
}

/// `buck.data.BuckEvent`: only `span_end` (21) of its `data` oneof.
#[derive(Clone, PartialEq, Message)]
pub struct BuckEvent {
    /// `span_end` (21).
    #[prost(message, optional, tag = "21")]
    pub span_end: Option<SpanEndEvent>,
}

/// `buck.data.SpanEndEvent`: only `action_execution` (51) of `data`.
#[derive(Clone, PartialEq, Message)]
pub struct SpanEndEvent {
    /// `action_execution` (51).
    #[prost(message, optional, tag = "51")]
    pub action_execution: Option<ActionExecutionEnd>,
}

/// `buck.data.ActionExecutionEnd`.
#[derive(Clone, PartialEq, Message)]
pub struct ActionExecutionEnd {
    /// `key` (1).
    #[prost(message, optional, tag = "1")]
    pub key: Option<ActionKey>,
    /// `name` (5).
    #[prost(message, optional, tag = "5")]
    pub name: Option<ActionName>,
    /// `failed` (6).
    #[prost(bool, tag = "6")]
    pub failed: bool,
    /// `error.unknown` (7): an error message of unknown nature.
    #[prost(bytes = "vec", optional, tag = "7")]
    pub error_unknown: Option<Vec<u8>>,
    /// `commands` (25), in the order attempted.
    #[prost(message, repeated, tag = "25")]
    pub commands: Vec<CommandExecution>,
}

/// `buck.data.ActionKey`: the owner target (`target_label` 2, or
/// `test_target_label` 5, `local_resource_setup` 7).
#[derive(Clone, PartialEq, Message)]
pub struct ActionKey {
    /// `target_label` (2).
    #[prost(message, optional, tag = "2")]
    pub target_label: Option<ConfiguredTargetLabel>,
    /// `test_target_label` (5).
    #[prost(message, optional, tag = "5")]
    pub test_target_label: Option<ConfiguredTargetLabel>,
    /// `local_resource_setup` (7).
    #[prost(message, optional, tag = "7")]
    pub local_resource_setup: Option<ConfiguredTargetLabel>,
}

/// `buck.data.ConfiguredTargetLabel`: `label` (1).
#[derive(Clone, PartialEq, Message)]
pub struct ConfiguredTargetLabel {
    /// `label` (1).
    #[prost(message, optional, tag = "1")]
    pub label: Option<TargetLabel>,
}

/// `buck.data.TargetLabel`: `package` (1, `cell//path`), `name` (2).
#[derive(Clone, PartialEq, Message)]
pub struct TargetLabel {
    /// `package` (1).
    #[prost(string, tag = "1")]
    pub package: String,
    /// `name` (2).
    #[prost(string, tag = "2")]
    pub name: String,
}

/// `buck.data.ActionName`: `category` (1), `identifier` (2).
#[derive(Clone, PartialEq, Message)]
pub struct ActionName {
    /// `category` (1).
    #[prost(string, tag = "1")]
    pub category: String,
    /// `identifier` (2).
    #[prost(string, tag = "2")]
    pub identifier: String,
}

/// `buck.data.CommandExecution`: `details` (1), `status.error` (5).
#[derive(Clone, PartialEq, Message)]
pub struct CommandExecution {
    /// `details` (1).
    #[prost(message, optional, tag = "1")]
    pub details: Option<CommandExecutionDetails>,
    /// `error` (5) of the `status` oneof.
    #[prost(message, optional, tag = "5")]
    pub error: Option<CommandExecutionStatusError>,
}

/// `buck.data.CommandExecution.Error`: `error` (2).
#[derive(Clone, PartialEq, Message)]
pub struct CommandExecutionStatusError {
    /// `error` (2).
    #[prost(bytes = "vec", tag = "2")]
    pub error: Vec<u8>,
}

/// `buck.data.CommandExecutionDetails`. Texts as bytes: read lossily.
#[derive(Clone, PartialEq, Message)]
pub struct CommandExecutionDetails {
    /// `cmd_stdout` (2).
    #[prost(bytes = "vec", tag = "2")]
    pub cmd_stdout: Vec<u8>,
    /// `cmd_stderr` (3).
    #[prost(bytes = "vec", tag = "3")]
    pub cmd_stderr: Vec<u8>,
    /// `command_kind` (5).
    #[prost(message, optional, tag = "5")]
    pub command_kind: Option<CommandExecutionKind>,
    /// `additional_message` (14).
    #[prost(bytes = "vec", optional, tag = "14")]
    pub additional_message: Option<Vec<u8>>,
}

/// A message whose fields are not read (only its presence is).
#[derive(Clone, PartialEq, Message)]
pub struct Present {}

/// `buck.data.CommandExecutionKind`, its `command` oneof.
#[derive(Clone, PartialEq, Message)]
pub struct CommandExecutionKind {
    /// `local_command` (1).
    #[prost(message, optional, tag = "1")]
    pub local_command: Option<Present>,
    /// `remote_command` (2).
    #[prost(message, optional, tag = "2")]
    pub remote_command: Option<RemoteCommand>,
    /// `omitted_local_command` (3).
    #[prost(message, optional, tag = "3")]
    pub omitted_local_command: Option<Present>,
    /// `worker_init_command` (4).
    #[prost(message, optional, tag = "4")]
    pub worker_init_command: Option<Present>,
    /// `worker_command` (5).
    #[prost(message, optional, tag = "5")]
    pub worker_command: Option<Present>,
}

/// `buck.data.RemoteCommand`.
#[derive(Clone, PartialEq, Message)]
pub struct RemoteCommand {
    /// `action_digest` (1), `HASH:SIZE`.
    #[prost(string, tag = "1")]
    pub action_digest: String,
    /// `cache_hit_type` (5), `CacheHitType`.
    #[prost(int32, tag = "5")]
    pub cache_hit_type: i32,
    /// `remote_dep_file_key` (6), `HASH:SIZE`.
    #[prost(string, optional, tag = "6")]
    pub remote_dep_file_key: Option<String>,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn target(key: &Option<ActionKey>) -> Option<String> {
    let k = key.as_ref()?;
    let owner = k
        .target_label
        .as_ref()
        .or(k.test_target_label.as_ref())
        .or(k.local_resource_setup.as_ref())?;
    let l = owner.label.as_ref()?;
    Some(std::format!("{}:{}", l.package, l.name))
}

fn command(c: &CommandExecution) -> Option<Command> {
    let kind = c.details.as_ref()?.command_kind.as_ref()?;
    if let Some(r) = &kind.remote_command {
        return Some(Command::Remote {
            action_digest: r.action_digest.clone(),
            remote_dep_file_key: r.remote_dep_file_key.clone(),
            cache_hit_type: r.cache_hit_type,
        });
    }
    let local = kind.local_command.is_some()
        || kind.omitted_local_command.is_some()
        || kind.worker_command.is_some()
        || kind.worker_init_command.is_some();
    local.then_some(Command::Local)
}

/// The decoded action as the shape both Buck2 readers share.
pub fn action_end(a: &ActionExecutionEnd) -> ActionEnd {
    let mut texts = Vec::new();
    if a.failed {
        if let Some(u) = &a.error_unknown {
            texts.push(text(u));
        }
        for c in &a.commands {
            if let Some(d) = &c.details {
                texts.push(text(&d.cmd_stderr));
                texts.push(text(&d.cmd_stdout));
                if let Some(m) = &d.additional_message {
                    texts.push(text(m));
                }
            }
            if let Some(e) = &c.error {
                texts.push(text(&e.error));
            }
        }
    }
    let name = a.name.clone().unwrap_or_default();
    ActionEnd {
        target: target(&a.key),
        category: name.category,
        identifier: name.identifier,
        failed: a.failed,
        command: a.commands.last().and_then(command),
        texts,
    }
}

fn bad(file: &str, at: u64, message: &'static str, e: prost::DecodeError) -> LogError {
    let kind = LogErrorKind::BadRecord {
        message,
        why: e.to_string(),
    };
    LogError::new(file, Some(Position::Byte(at)), kind)
}

/// Read the records after `first` (the header, already read) from
/// `records` into `out`. A log cut inside a record or frame is noted in
/// `out` (truncated), its actions before the cut kept.
///
/// # Errors
/// A header or event record that does not decode, a bad digest, a corrupt
/// stream; each names `file` and the record's byte offset.
pub fn read_records<R: Read>(
    records: &mut Records<R>,
    first: &[u8],
    file: &str,
    out: &mut Collector,
) -> Result<(), LogError> {
    Invocation::decode(first).map_err(|e| bad(file, 0, "buck.data.Invocation", e))?;
    let mut buf = Vec::new();
    loop {
        let at = records.offset();
        match records.next_into(&mut buf) {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(RecordError::Truncated) => {
                out.truncated(file);
                return Ok(());
            }
            Err(e) => return Err(LogError::record(file, at, e)),
        }
        let progress = CommandProgress::decode(buf.as_slice())
            .map_err(|e| bad(file, at, "buck.daemon.CommandProgress", e))?;
        let Some(a) = progress
            .event
            .and_then(|e| e.span_end)
            .and_then(|s| s.action_execution)
        else {
            continue;
        };
        buck2::gather(&action_end(&a), Origin::Buck2Log, out).map_err(|(text, error)| {
            LogError::new(
                file,
                Some(Position::Byte(at)),
                LogErrorKind::Digest { text, error },
            )
        })?;
    }
}

/// Read a decompressed Buck2 event log (the records, no zstd) from `src`:
/// the entry for fuzzing and for a `.pb` log someone decompressed.
///
/// # Errors
/// As [`read_records`]; an empty input or a first record that is not an
/// `Invocation` header too.
pub fn read_plain(src: impl Read, file: &str, out: &mut Collector) -> Result<(), LogError> {
    let mut records = Records::new(src);
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
    if first.first() != Some(&INVOCATION_FIRST_BYTE) {
        let kind = LogErrorKind::BadRecord {
            message: "buck.data.Invocation",
            why: "no command_line_args first".to_string(),
        };
        return Err(LogError::new(file, Some(Position::Byte(0)), kind));
    }
    read_records(&mut records, &first, file, out)
}

#[cfg(test)]
#[path = "buck2_log_tests.rs"]
pub(crate) mod tests;
