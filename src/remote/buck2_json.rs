//! `buck2 log show` output: JSON, one object a line. The first line is
//! the `Invocation` header (`command_line_args`, `working_dir`,
//! `trace_id`, ...); each after it a `StreamValue`, serde's externally
//! tagged enum: `{"Event": BuckEvent}`, `{"Result": ...}` or
//! `{"PartialResult": ...}`.
//!
//! Buck2's messages are prost structs with serde derives: fields keep
//! their proto (snake_case) names, a oneof is a field named after the oneof
//! holding `{"Variant": value}` with the variant's CamelCase name. So the
//! action is at `Event.data.SpanEnd.data.ActionExecution`, its name at
//! `.name.{category,identifier}`, its target at
//! `.key.owner.TargetLabel.label.{package,name}`, and each command's kind
//! at `.commands[].details.command_kind.command.RemoteCommand` (or
//! `LocalCommand`, `OmittedLocalCommand`, `WorkerCommand`,
//! `WorkerInitCommand`). `cmd_stdout`/`cmd_stderr` are renamed `stdout`/
//! `stderr`; enums are numbers.
//!
//! # References
//! Buck2 `app/buck2_cmd_log_client/src/show_log.rs` (header line, then one
//! `serde_json::to_writer` of each `StreamValue` per line),
//! `app/buck2_event_log/src/stream_value.rs`, `app/buck2_data/build.rs`
//! (serde derives on every type, the `stderr`/`stdout` renames),
//! `app/buck2_data/data.proto`.

use std::io::BufRead;
use std::string::{String, ToString};
use std::vec::Vec;

use serde_json::Value;

use crate::remote::action::{Collector, Origin};
use crate::remote::buck2::{self, ActionEnd, Command};
use crate::remote::log_error::{LogError, LogErrorKind, Position, read_line_capped};

/// Keys of a `buck2 log show` line's object: the header's and
/// `StreamValue`'s variants.
const LINE_KEYS: [&str; 6] = [
    "command_line_args",
    "working_dir",
    "trace_id",
    "Event",
    "Result",
    "PartialResult",
];

/// Whether `v` is a line `buck2 log show` prints (an object with one of
/// its keys).
pub fn is_buck2_line(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|o| LINE_KEYS.iter().any(|k| o.contains_key(*k)))
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_str()
}

fn target(a: &Value) -> Option<String> {
    let owner = a.get("key")?.get("owner")?;
    let label = ["TargetLabel", "TestTargetLabel", "LocalResourceSetup"]
        .iter()
        .find_map(|k| owner.get(k))?
        .get("label")?;
    let package = label.get("package")?.as_str()?;
    let name = label.get("name")?.as_str()?;
    Some(std::format!("{package}:{name}"))
}

fn command(c: &Value) -> Option<Command> {
    let kind = c.get("details")?.get("command_kind")?.get("command")?;
    if let Some(r) = kind.get("RemoteCommand") {
        return Some(Command::Remote {
            action_digest: r.get("action_digest")?.as_str()?.to_string(),
            remote_dep_file_key: str_at(r, &["remote_dep_file_key"]).map(str::to_string),
            cache_hit_type: r
                .get("cache_hit_type")
                .and_then(Value::as_i64)
                .and_then(|n| i32::try_from(n).ok())
                .unwrap_or(0),
        });
    }
    let local = [
        "LocalCommand",
        "OmittedLocalCommand",
        "WorkerCommand",
        "WorkerInitCommand",
    ];
    local
        .iter()
        .any(|k| kind.get(k).is_some())
        .then_some(Command::Local)
}

fn texts(a: &Value, commands: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(u) = str_at(a, &["error", "Unknown"]) {
        out.push(u.to_string());
    }
    for c in commands {
        for path in [
            &["details", "stderr"][..],
            &["details", "stdout"],
            &["details", "additional_message"],
            &["status", "Error", "error"],
        ] {
            if let Some(t) = str_at(c, path) {
                out.push(t.to_string());
            }
        }
    }
    out
}

/// The action of one `ActionExecutionEnd` object.
pub fn action_end(a: &Value) -> ActionEnd {
    let empty = Vec::new();
    let commands = a
        .get("commands")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let failed = a.get("failed").and_then(Value::as_bool).unwrap_or(false);
    ActionEnd {
        target: target(a),
        category: str_at(a, &["name", "category"]).unwrap_or("").to_string(),
        identifier: str_at(a, &["name", "identifier"]).unwrap_or("").to_string(),
        failed,
        command: commands.last().and_then(command),
        texts: if failed {
            texts(a, commands)
        } else {
            Vec::new()
        },
    }
}

/// The `ActionExecutionEnd` of a line's object, if it is one.
pub fn action_of(line: &Value) -> Option<&Value> {
    ["Event", "data", "SpanEnd", "data", "ActionExecution"]
        .iter()
        .try_fold(line, |v, k| v.get(k))
}

/// Read `buck2 log show` lines from `src` into `out`. `skipped_lines`
/// blank lines came before `src` (for line numbers). Blank lines are
/// skipped.
///
/// # Errors
/// A line that is not JSON or not one `buck2 log show` prints, or a bad
/// digest: `file: line N: ...`.
pub fn read_lines(
    mut src: impl BufRead,
    skipped_lines: u64,
    file: &str,
    out: &mut Collector,
) -> Result<(), LogError> {
    let mut buf = Vec::new();
    let mut line = skipped_lines;
    loop {
        buf.clear();
        let n = read_line_capped(&mut src, &mut buf)
            .map_err(|e| LogError::new(file, None, LogErrorKind::Read(e)))?;
        line += 1;
        let Some(n) = n else {
            let at = Some(Position::Line(line));
            return Err(LogError::new(file, at, LogErrorKind::JsonTooLong));
        };
        if n == 0 {
            return Ok(());
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let at = Some(Position::Line(line));
        let v: Value = serde_json::from_slice(&buf)
            .map_err(|e| LogError::new(file, at, LogErrorKind::NotJson(e.to_string())))?;
        if !is_buck2_line(&v) {
            return Err(LogError::new(file, at, LogErrorKind::NotBuck2Line));
        }
        let Some(a) = action_of(&v) else { continue };
        buck2::gather(&action_end(a), Origin::Buck2Json, out).map_err(|(text, error)| {
            LogError::new(file, at, LogErrorKind::Digest { text, error })
        })?;
    }
}

#[cfg(test)]
#[path = "buck2_json_tests.rs"]
pub(crate) mod tests;
