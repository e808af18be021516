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
    let old = "{\"runner\": \"remote\", \"mnemonic\": \"CppCompile\"}\n{\"runner\": \"remote\"}";
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
