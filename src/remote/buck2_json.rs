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

/// A command's kind: `details.command_kind.command`, or
/// `details.command` in Buck2 before `CommandExecutionKind` (2022 logs,
/// e.g. Buck2's own test data; `cache_hit` there is a bool, read as no
/// `cache_hit_type`).
fn command(c: &Value) -> Option<Command> {
    let details = c.get("details")?;
    let kind = match details.get("command_kind") {
        Some(k) => k.get("command")?,
        None => details.get("command")?,
    };
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
/// skipped. A last line with no newline that ends inside its JSON (output
/// cut short: a build still running, or `buck2 log show` killed) is a
/// cut: the lines before it stand, and the log is noted as cut short with
/// the lines read, as the other readers note a cut.
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
    let mut records = 0;
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
        let v: Value = match serde_json::from_slice(&buf) {
            Ok(v) => v,
            Err(e) if e.is_eof() && buf.last() != Some(&b'\n') => {
                out.truncated(file);
                out.records_before_cut(file, records);
                return Ok(());
            }
            Err(e) => {
                return Err(LogError::new(
                    file,
                    at,
                    LogErrorKind::NotJson(e.to_string()),
                ));
            }
        };
        records += 1;
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
pub(crate) mod tests {
    //! Tests of `buck2_json.rs`. The lines are written as `buck2 log show`
    //! prints them: `show_log.rs` writes the `Invocation` proto as JSON, then
    //! each `StreamValue` (serde's external tagging: `{"Event": ...}`); the
    //! prost types derive serde (`app/buck2_data/build.rs`), so fields keep
    //! their proto names, oneofs are `{"Variant": ...}` under the oneof's
    //! name, `cmd_stderr` is renamed `stderr`, enums are numbers, and
    //! `ActionExecutionEnd.wall_time` is `wall_time_us`.

    use super::*;
    use crate::remote::action::Found;
    use crate::remote::buck2_log::tests::{D1, D2, D3, check_sample};
    use crate::remote::logs::read_log;
    use serde_json::json;
    use std::format;
    use std::io::Cursor;
    use std::string::ToString;
    use std::vec;

    fn remote(digest: &str, cache_hit_type: i64) -> Value {
        json!({"details": {
        "stdout": "", "stderr": "", "signed_exit_code": 0,
        "command_kind": {"command": {"RemoteCommand": {
            "action_digest": digest, "cache_hit": cache_hit_type != 2,
            "queue_time_us": 1000, "details": null, "cache_hit_type": cache_hit_type,
            "remote_dep_file_key": null,
            "materialized_inputs_for_failed": [], "materialized_outputs_for_failed_actions": []
        }}},
        "metadata": {"wall_time_us": 2000000, "execution_stats": null}
    }, "status": {"Success": {}}})
    }

    fn local() -> Value {
        json!({"details": {"stdout": "", "stderr": "", "signed_exit_code": 0,
        "command_kind": {"command": {"LocalCommand": {
            "argv": ["cc", "-c"], "env": [{"key": "PATH", "value": "/usr/bin"}],
            "action_digest": D3}}}},
        "status": {"Success": {}}})
    }

    fn line(
        target: &str,
        category: &str,
        identifier: &str,
        failed: bool,
        commands: Vec<Value>,
    ) -> String {
        let (package, name) = target.split_once(':').unwrap();
        let v = json!({"Event": {
            "timestamp": [1700000000, 0], "trace_id": "c0ffee00-0000-4000-8000-000000000000",
            "span_id": 9, "parent_id": 0,
            "data": {"SpanEnd": {"stats": null, "duration_us": 3000000, "data": {"ActionExecution": {
                "key": {"id": "AQID", "owner": {"TargetLabel": {
                    "label": {"package": package, "name": name},
                    "configuration": {"full_name": "cfg#abc"}, "execution_configuration": null}},
                    "key": "k"},
                "kind": "Run", "name": {"category": category, "identifier": identifier},
                "failed": failed, "error": null, "always_print_stderr": false,
                "execution_kind": 2, "wall_time_us": 2000000, "output_size": 10,
                "commands": commands, "outputs": []
            }}}}
        }});
        v.to_string()
    }

    /// The sample build of `buck2_log.rs`'s tests, as `buck2 log show` lines.
    pub(crate) fn sample_lines() -> String {
        let mut killed = remote(D3, 2);
        killed["details"]["stderr"] = json!(
            "g++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n"
        );
        killed["status"] = json!({"Failure": {}});
        let mut cancelled = remote(D3, 2);
        cancelled["status"] = json!({"Cancelled": {}});
        let header = json!({"command_line_args": ["buck2", "build", "//..."],
        "expanded_command_line_args": ["buck2"], "working_dir": "/src/repo",
        "trace_id": "c0ffee00-0000-4000-8000-000000000000", "start_time": [1700000000, 0]});
        let start = json!({"Event": {"data": {"SpanStart": {"data": {"ActionExecution": {
        "kind": "Run", "name": {"category": "cxx_compile", "identifier": "a.cpp"}}}}}}});
        let lines = [
            header.to_string(),
            start.to_string(),
            line(
                "root//app:main",
                "cxx_compile",
                "a.cpp",
                false,
                vec![remote(D1, 2)],
            ),
            line(
                "root//lib:core",
                "cxx_compile",
                "b.cpp",
                false,
                vec![remote(D2, 0)],
            ),
            line(
                "root//lib:core",
                "cxx_link",
                "",
                false,
                vec![cancelled, local()],
            ),
            line("root//app:main", "write", "args", false, vec![]),
            line(
                "root//big:tu",
                "cxx_compile",
                "huge.cpp",
                true,
                vec![killed],
            ),
            json!({"Event": {"data": {"SpanEnd": {"data": {"Load": {}}}}}}).to_string(),
            line(
                "root//app:main",
                "cxx_compile",
                "a.cpp",
                false,
                vec![remote(D1, 0)],
            ),
            json!({"Result": {"result": {"BuildResponse": {}}}}).to_string(),
        ];
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }

    fn read(text: &str) -> Result<Found, LogError> {
        let mut out = Collector::new();
        read_log(Cursor::new(text.as_bytes().to_vec()), "show.json", &mut out)?;
        Ok(out.finish())
    }

    #[test]
    fn lines_as_buck2_log_show_prints_them() {
        check_sample(&read(&sample_lines()).unwrap(), Origin::Buck2Json);
    }

    #[test]
    fn blank_lines_and_crlf_are_fine() {
        let text = format!("\n\n{}", sample_lines().replace('\n', "\r\n\r\n"));
        check_sample(&read(&text).unwrap(), Origin::Buck2Json);
    }

    #[test]
    fn a_line_that_is_not_one_names_its_number() {
        let mut text = sample_lines();
        text.push_str("{\"Event\": {\"data\": \n");
        let e = read(&format!("\n{text}")).unwrap_err();
        let lines = text.lines().count() + 1;
        assert!(
            e.to_string()
                .starts_with(&format!("show.json: line {lines}: not JSON")),
            "{e}"
        );
        let text = format!("{}{{\"other\": 1}}\n", sample_lines());
        let e = read(&text).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "show.json: line {}: not a buck2 log show line",
                text.lines().count()
            )
        );
    }

    // Issue 34: output cut mid-line was refused whole ("line N: not JSON:
    // EOF while parsing ..."), though the lines before it held the actions.
    #[test]
    fn output_cut_mid_line_keeps_the_lines_before_it() {
        let text = sample_lines();
        let first_end = text.find('\n').unwrap() + 1;
        // Every 13th byte (a prime: every place in a line over the lines)
        // and each line's last two bytes.
        let ends = text.match_indices('\n').flat_map(|(i, _)| [i, i + 1]);
        let cuts: Vec<usize> = (first_end..text.len()).step_by(13).chain(ends).collect();
        for cut in cuts
            .into_iter()
            .filter(|&c| c > first_end && c < text.len())
        {
            let cut_text = &text[..cut];
            // Only its newline missing: the last line is whole.
            let whole = match text.as_bytes()[cut] {
                b'\n' => &text[..=cut],
                _ => &cut_text[..=cut_text.rfind('\n').unwrap()],
            };
            let want = read(whole).unwrap();
            let got = read(cut_text).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            assert_eq!(got.actions, want.actions, "cut at {cut}");
            assert_eq!((got.local, &got.killed), (want.local, &want.killed));
            if cut_text.ends_with('\n') || whole.len() > cut {
                assert!(got.truncated.is_empty(), "cut at {cut}");
            } else {
                let lines = whole.lines().count() as u64;
                assert_eq!(got.truncated, vec!["show.json".to_string()]);
                assert_eq!(
                    got.records_before_cut,
                    vec![("show.json".to_string(), lines)]
                );
            }
        }
        // A bad line before the last is still refused.
        let (head, tail) = text.split_at(first_end);
        let e = read(&format!("{head}{{\"Event\": \n{tail}")).unwrap_err();
        assert!(
            e.to_string().starts_with("show.json: line 2: not JSON"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_digest_names_its_line() {
        let header = "{\"command_line_args\": [\"buck2\"]}\n";
        let text = format!(
            "{header}{}\n",
            line("r//a:b", "c", "i", false, vec![remote("abc:1", 2)])
        );
        let e = read(&text).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("show.json: line 2: action digest \"abc:1\""),
            "{e}"
        );
    }

    #[test]
    fn odd_shapes_do_not_panic() {
        for v in [
            json!({"Event": null}),
            json!({"Event": {"data": {"SpanEnd": {"data": {"ActionExecution": null}}}}}),
            json!({"Event": {"data": {"SpanEnd": {"data": {"ActionExecution": {"commands": 5, "name": 3}}}}}}),
            json!({"Event": {"data": {"SpanEnd": {"data": {"ActionExecution": {"failed": true,
            "commands": [{"details": {"command_kind": {"command": {"RemoteCommand": {"action_digest": 7}}}}}]}}}}}}),
            json!({"Event": {"data": {"SpanEnd": {"data": {"ActionExecution": {"commands": [null, 1, "x"]}}}}}}),
        ] {
            let found = read(&format!("{v}\n")).unwrap();
            assert!(found.actions.is_empty(), "{v}");
        }
    }
}
