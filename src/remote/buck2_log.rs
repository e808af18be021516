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
pub(crate) mod tests {
    //! Tests of `buck2_log.rs`, with a test-side writer that writes a log the
    //! way Buck2's does. Facts: `app/buck2_event_log/src/write.rs` (the
    //! `Invocation` first, then each event as a length-delimited
    //! `CommandProgressForWrite` whose `event` (1) is the `BuckEvent`'s bytes),
    //! `writer.rs` (zstd over the whole), `app/buck2_data/data.proto` (the
    //! field numbers, incl. those the reader skips: timestamp 1, trace_id 2,
    //! span_id 3, span_start 20, duration 2, kind 4, execution_kind 22,
    //! wall_time 23, status success 2 / failure 3, signed_exit_code 4,
    //! LocalCommand argv 1 / env 2 / action_digest 3, RemoteCommand
    //! cache_hit 2, queue_time 3), `app/buck2_cli_proto/daemon.proto`
    //! (`CommandProgressForWrite`, `result` 2).

    use super::*;
    use crate::remote::delimited::tests::zstd_cli;
    use crate::remote::logs::read_log;
    use prost::Message;
    use std::format;
    use std::io::Cursor;
    use std::string::ToString;
    use std::vec;

    /// The writer's messages: more fields than the reader declares.
    pub(crate) mod w {
        use prost::Message;
        use std::string::String;
        use std::vec::Vec;

        #[derive(Clone, PartialEq, Message)]
        pub struct Invocation {
            #[prost(string, repeated, tag = "1")]
            pub command_line_args: Vec<String>,
            #[prost(string, tag = "2")]
            pub working_dir: String,
            #[prost(string, optional, tag = "3")]
            pub trace_id: Option<String>,
            #[prost(string, repeated, tag = "11")]
            pub expanded_command_line_args: Vec<String>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct CommandProgressForWrite {
            #[prost(bytes = "vec", optional, tag = "1")]
            pub event: Option<Vec<u8>>,
            #[prost(bytes = "vec", optional, tag = "2")]
            pub result: Option<Vec<u8>>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Timestamp {
            #[prost(int64, tag = "1")]
            pub seconds: i64,
            #[prost(int32, tag = "2")]
            pub nanos: i32,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct BuckEvent {
            #[prost(message, optional, tag = "1")]
            pub timestamp: Option<Timestamp>,
            #[prost(string, tag = "2")]
            pub trace_id: String,
            #[prost(uint64, tag = "3")]
            pub span_id: u64,
            #[prost(message, optional, tag = "20")]
            pub span_start: Option<SpanStart>,
            #[prost(message, optional, tag = "21")]
            pub span_end: Option<SpanEnd>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct SpanStart {
            #[prost(message, optional, tag = "51")]
            pub action_execution: Option<ActionStart>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct ActionStart {
            #[prost(int32, tag = "3")]
            pub kind: i32,
            #[prost(message, optional, tag = "4")]
            pub name: Option<Name>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct SpanEnd {
            #[prost(message, optional, tag = "2")]
            pub duration: Option<Timestamp>,
            #[prost(message, optional, tag = "51")]
            pub action_execution: Option<ActionEnd>,
            #[prost(message, optional, tag = "53")]
            pub load: Option<Name>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct ActionEnd {
            #[prost(message, optional, tag = "1")]
            pub key: Option<Key>,
            #[prost(int32, tag = "4")]
            pub kind: i32,
            #[prost(message, optional, tag = "5")]
            pub name: Option<Name>,
            #[prost(bool, tag = "6")]
            pub failed: bool,
            #[prost(string, optional, tag = "7")]
            pub unknown: Option<String>,
            #[prost(int32, tag = "22")]
            pub execution_kind: i32,
            #[prost(message, optional, tag = "23")]
            pub wall_time: Option<Timestamp>,
            #[prost(message, repeated, tag = "25")]
            pub commands: Vec<CommandExecution>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Key {
            #[prost(bytes = "vec", tag = "1")]
            pub id: Vec<u8>,
            #[prost(message, optional, tag = "2")]
            pub target_label: Option<Configured>,
            #[prost(string, tag = "3")]
            pub key: String,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Configured {
            #[prost(message, optional, tag = "1")]
            pub label: Option<Label>,
            #[prost(message, optional, tag = "2")]
            pub configuration: Option<Label>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Label {
            #[prost(string, tag = "1")]
            pub package: String,
            #[prost(string, tag = "2")]
            pub name: String,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Name {
            #[prost(string, tag = "1")]
            pub category: String,
            #[prost(string, tag = "2")]
            pub identifier: String,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Empty {}

        #[derive(Clone, PartialEq, Message)]
        pub struct CommandExecution {
            #[prost(message, optional, tag = "1")]
            pub details: Option<Details>,
            #[prost(message, optional, tag = "2")]
            pub success: Option<Empty>,
            #[prost(message, optional, tag = "3")]
            pub failure: Option<Empty>,
            #[prost(message, optional, tag = "7")]
            pub cancelled: Option<Empty>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Details {
            #[prost(string, tag = "2")]
            pub cmd_stdout: String,
            #[prost(string, tag = "3")]
            pub cmd_stderr: String,
            #[prost(sint32, optional, tag = "4")]
            pub signed_exit_code: Option<i32>,
            #[prost(message, optional, tag = "5")]
            pub command_kind: Option<Kind>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Kind {
            #[prost(message, optional, tag = "1")]
            pub local_command: Option<Local>,
            #[prost(message, optional, tag = "2")]
            pub remote_command: Option<Remote>,
            #[prost(message, optional, tag = "3")]
            pub omitted_local_command: Option<Local>,
            #[prost(message, optional, tag = "5")]
            pub worker_command: Option<Local>,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Local {
            #[prost(string, repeated, tag = "1")]
            pub argv: Vec<String>,
            #[prost(message, repeated, tag = "2")]
            pub env: Vec<Label>,
            #[prost(string, tag = "3")]
            pub action_digest: String,
        }

        #[derive(Clone, PartialEq, Message)]
        pub struct Remote {
            #[prost(string, tag = "1")]
            pub action_digest: String,
            #[prost(bool, tag = "2")]
            pub cache_hit: bool,
            #[prost(message, optional, tag = "3")]
            pub queue_time: Option<Timestamp>,
            #[prost(int32, tag = "5")]
            pub cache_hit_type: i32,
            #[prost(string, optional, tag = "6")]
            pub remote_dep_file_key: Option<String>,
        }
    }

    pub(crate) const D1: &str =
        "1111111111111111111111111111111111111111111111111111111111111111:142";
    pub(crate) const D2: &str =
        "2222222222222222222222222222222222222222222222222222222222222222:7";
    pub(crate) const D3: &str =
        "3333333333333333333333333333333333333333333333333333333333333333:99";

    fn label(package: &str, name: &str) -> w::Label {
        w::Label {
            package: package.to_string(),
            name: name.to_string(),
        }
    }

    fn name(category: &str, identifier: &str) -> w::Name {
        w::Name {
            category: category.to_string(),
            identifier: identifier.to_string(),
        }
    }

    fn remote_kind(digest: &str, cache_hit_type: i32) -> w::Kind {
        w::Kind {
            remote_command: Some(w::Remote {
                action_digest: digest.to_string(),
                cache_hit: cache_hit_type != 2,
                queue_time: Some(w::Timestamp {
                    seconds: 1,
                    nanos: 5,
                }),
                cache_hit_type,
                remote_dep_file_key: None,
            }),
            ..w::Kind::default()
        }
    }

    fn local_kind() -> w::Kind {
        w::Kind {
            local_command: Some(w::Local {
                argv: vec!["cc".to_string(), "-c".to_string()],
                env: vec![label("PATH", "/usr/bin")],
                action_digest: D3.to_string(),
            }),
            ..w::Kind::default()
        }
    }

    fn command(kind: w::Kind, ok: bool, stderr: &str) -> w::CommandExecution {
        w::CommandExecution {
            details: Some(w::Details {
                cmd_stdout: String::new(),
                cmd_stderr: stderr.to_string(),
                signed_exit_code: Some(if ok { 0 } else { 1 }),
                command_kind: Some(kind),
            }),
            success: ok.then(w::Empty::default),
            failure: (!ok).then(w::Empty::default),
            cancelled: None,
        }
    }

    fn action(
        target: &str,
        n: w::Name,
        failed: bool,
        commands: Vec<w::CommandExecution>,
    ) -> w::BuckEvent {
        let (package, tname) = target.split_once(':').unwrap();
        w::BuckEvent {
            timestamp: Some(w::Timestamp {
                seconds: 1_700_000_000,
                nanos: 0,
            }),
            trace_id: "c0ffee00-0000-4000-8000-000000000000".to_string(),
            span_id: 9,
            span_start: None,
            span_end: Some(w::SpanEnd {
                duration: Some(w::Timestamp {
                    seconds: 3,
                    nanos: 0,
                }),
                action_execution: Some(w::ActionEnd {
                    key: Some(w::Key {
                        id: vec![1, 2, 3],
                        target_label: Some(w::Configured {
                            label: Some(label(package, tname)),
                            configuration: Some(label("", "cfg#abc")),
                        }),
                        key: "k".to_string(),
                    }),
                    kind: 3,
                    name: Some(n),
                    failed,
                    unknown: None,
                    execution_kind: 2,
                    wall_time: Some(w::Timestamp {
                        seconds: 2,
                        nanos: 0,
                    }),
                    commands,
                }),
                load: None,
            }),
        }
    }

    /// The events of a small build: a remote run, a cache hit, a local run
    /// (after a cancelled remote attempt), a write with no command, a remote
    /// cc1plus killed, a span start and a load end (not actions), and the same
    /// digest twice.
    pub(crate) fn sample_events() -> Vec<w::BuckEvent> {
        let killed =
            "g++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n";
        vec![
            w::BuckEvent {
                span_start: Some(w::SpanStart {
                    action_execution: Some(w::ActionStart {
                        kind: 3,
                        name: Some(name("cxx_compile", "a.cpp")),
                    }),
                }),
                ..w::BuckEvent::default()
            },
            action(
                "root//app:main",
                name("cxx_compile", "a.cpp"),
                false,
                vec![command(remote_kind(D1, 2), true, "")],
            ),
            action(
                "root//lib:core",
                name("cxx_compile", "b.cpp"),
                false,
                vec![command(remote_kind(D2, 0), true, "")],
            ),
            action(
                "root//lib:core",
                name("cxx_link", ""),
                false,
                vec![
                    w::CommandExecution {
                        cancelled: Some(w::Empty::default()),
                        ..command(remote_kind(D3, 2), true, "")
                    },
                    command(local_kind(), true, ""),
                ],
            ),
            action("root//app:main", name("write", "args"), false, vec![]),
            action(
                "root//big:tu",
                name("cxx_compile", "huge.cpp"),
                true,
                vec![command(remote_kind(D3, 2), false, killed)],
            ),
            w::BuckEvent {
                span_end: Some(w::SpanEnd {
                    load: Some(name("x", "y")),
                    ..w::SpanEnd::default()
                }),
                ..w::BuckEvent::default()
            },
            action(
                "root//app:main",
                name("cxx_compile", "a.cpp"),
                false,
                vec![command(remote_kind(D1, 0), true, "")],
            ),
        ]
    }

    /// The decompressed log as Buck2 writes it.
    pub(crate) fn plain_log(events: &[w::BuckEvent]) -> Vec<u8> {
        let mut out = Vec::new();
        w::Invocation {
            command_line_args: vec![
                "buck2".to_string(),
                "build".to_string(),
                "//...".to_string(),
            ],
            working_dir: "/src/repo".to_string(),
            trace_id: Some("c0ffee00-0000-4000-8000-000000000000".to_string()),
            expanded_command_line_args: vec!["buck2".to_string()],
        }
        .encode_length_delimited(&mut out)
        .unwrap();
        for e in events {
            w::CommandProgressForWrite {
                event: Some(e.encode_to_vec()),
                result: None,
            }
            .encode_length_delimited(&mut out)
            .unwrap();
        }
        w::CommandProgressForWrite {
            event: None,
            result: Some(vec![0x0a, 0]),
        }
        .encode_length_delimited(&mut out)
        .unwrap();
        out
    }

    fn read_z(bytes: Vec<u8>) -> Result<crate::remote::action::Found, LogError> {
        let mut out = Collector::new();
        read_log(Cursor::new(bytes), "x_events.pb.zst", &mut out)?;
        Ok(out.finish())
    }

    pub(crate) fn check_sample(found: &crate::remote::action::Found, origin: Origin) {
        let ids: Vec<(&str, &str, &str)> = found
            .actions
            .iter()
            .map(|n| (n.id.as_str(), n.category.as_str(), &n.digest.hash[..2]))
            .collect();
        assert_eq!(
            ids,
            vec![
                ("root//app:main (a.cpp)", "cxx_compile", "11"),
                ("root//lib:core (b.cpp)", "cxx_compile", "22"),
                ("root//big:tu (huge.cpp)", "cxx_compile", "33"),
            ]
        );
        assert!(found.actions.iter().all(|n| n.origin == origin));
        assert_eq!(found.actions[0].digest.size_bytes, 142);
        assert_eq!(found.local, 1);
        assert_eq!(found.killed.len(), 1);
        assert_eq!(found.killed[0].id, "root//big:tu (huge.cpp)");
        assert_eq!(
            found.killed[0].line,
            "g++: fatal error: Killed signal terminated program cc1plus"
        );
    }

    #[test]
    fn a_log_written_as_buck2_writes_it() {
        let found = read_z(zstd_cli(&plain_log(&sample_events()))).unwrap();
        check_sample(&found, Origin::Buck2Log);
        assert!(found.truncated.is_empty());
    }

    #[test]
    fn the_same_records_uncompressed() {
        let mut out = Collector::new();
        read_plain(Cursor::new(plain_log(&sample_events())), "x.pb", &mut out).unwrap();
        check_sample(&out.finish(), Origin::Buck2Log);
    }

    #[test]
    fn a_cut_log_keeps_what_came_before_and_says_so() {
        let plain = plain_log(&sample_events());
        let z = zstd_cli(&plain);
        let found = read_z(z[..z.len() / 2].to_vec()).unwrap();
        assert_eq!(found.truncated, vec!["x_events.pb.zst".to_string()]);
        // Cut inside a record of the uncompressed stream.
        let mut out = Collector::new();
        read_plain(
            Cursor::new(plain[..plain.len() - 3].to_vec()),
            "x.pb",
            &mut out,
        )
        .unwrap();
        let found = out.finish();
        assert_eq!(found.truncated.len(), 1);
        assert_eq!(found.actions.len(), 3);
    }

    // Issue 34: a log under the decoder's window (2 MiB here, as Buck2's)
    // cut anywhere gave no record, as the decoder held its window back until
    // the frame's end. Now each cut keeps what the reference decoder
    // (`zstd -dc`) recovers: the same actions as the plain reader finds in
    // its output, and the complete records counted.
    #[test]
    fn a_log_under_its_window_cut_keeps_what_zstd_recovers() {
        use crate::remote::delimited::tests::{complete_records, zstd_cli_recovers, zstd_flushed};
        let z = zstd_flushed(&plain_log(&sample_events()), 64);
        for pct in [25, 50, 75, 90] {
            let cut = z[..z.len() * pct / 100].to_vec();
            let recovered = zstd_cli_recovers(&cut);
            let mut out = Collector::new();
            read_plain(Cursor::new(recovered.clone()), "x_events.pb.zst", &mut out).unwrap();
            let want = out.finish();
            let got = read_z(cut).unwrap();
            assert_eq!(got.actions, want.actions, "{pct} %");
            assert_eq!(
                (got.local, &got.killed),
                (want.local, &want.killed),
                "{pct} %"
            );
            assert_eq!(got.truncated, vec!["x_events.pb.zst".to_string()]);
            let records = complete_records(&recovered) as u64;
            assert!(records > 1, "{pct} %: {records} records");
            assert_eq!(
                got.records_before_cut,
                vec![("x_events.pb.zst".to_string(), records)],
                "{pct} %"
            );
        }
        let whole = read_z(z).unwrap();
        check_sample(&whole, Origin::Buck2Log);
    }

    #[test]
    fn a_bad_digest_names_the_record() {
        let events = vec![action(
            "r//a:b",
            name("c", "i"),
            false,
            vec![command(remote_kind("zz:1", 2), true, "")],
        )];
        let e = read_z(zstd_cli(&plain_log(&events))).unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("x_events.pb.zst: byte "), "{s}");
        assert!(
            s.contains("after decompression: action digest \"zz:1\""),
            "{s}"
        );
    }

    #[test]
    fn garbage_records_are_errors_not_panics() {
        // A header, then a record that is not a CommandProgress (a field 1 of
        // wire type 2 whose length runs past the record).
        let mut plain = plain_log(&[]);
        plain.extend_from_slice(&[3, 0x0a, 0x05, 0x01]);
        let mut out = Collector::new();
        let e = read_plain(Cursor::new(plain), "x.pb", &mut out).unwrap_err();
        assert!(
            matches!(
                e.kind,
                LogErrorKind::BadRecord {
                    message: "buck.daemon.CommandProgress",
                    ..
                }
            ),
            "{e}"
        );
        // Not a header first.
        let e = read_plain(
            Cursor::new(vec![2u8, 0x12, 0]),
            "x.pb",
            &mut Collector::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("buck.data.Invocation"), "{e}");
        // Every prefix and some flipped bytes of a real log: no panic.
        let plain = plain_log(&sample_events());
        for cut in 0..plain.len() {
            let _ = read_plain(
                Cursor::new(plain[..cut].to_vec()),
                "x",
                &mut Collector::new(),
            );
        }
        let z = zstd_cli(&plain);
        for i in (0..z.len()).step_by(7) {
            let mut bad = z.clone();
            bad[i] ^= 0x5a;
            let _ = read_z(bad);
        }
    }

    #[test]
    fn records_before_a_corrupt_one_are_not_reported_as_whole() {
        let mut plain = plain_log(&sample_events());
        plain.extend_from_slice(&[0xff; 12]);
        let e = read_plain(Cursor::new(plain), "x.pb", &mut Collector::new()).unwrap_err();
        assert!(matches!(e.kind, LogErrorKind::BadLength), "{e}");
        assert_eq!(
            format!("{}", Position::Byte(5)),
            "byte 5 after decompression"
        );
    }
}
