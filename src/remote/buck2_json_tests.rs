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

/// The sample build of `buck2_log_tests.rs`, as `buck2 log show` lines.
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
