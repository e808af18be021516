//! End-to-end tests of `headroom actions` options: `--json-rows` of a
//! local actions file, the usage errors of the `--remote` options (exit 2,
//! in every build), and what a build without the cargo feature `remote`
//! says (exit 1) and how it hands the command to the remote reader
//! (`headroom-remote`, beside it or in `../libexec/headroom/`). The remote report itself is tested on synthetic lookups
//! in src/remote/report.rs's tests and against a real server elsewhere.

use std::process::{Command, Output};

mod common;
use common::BIN;

/// tests/data/actions-crafted.csv: 25 well-formed rows and 2 malformed
/// ones (its golden table, actions-crafted.txt, says so).
const CRAFTED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/actions-crafted.csv"
);

fn actions(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("actions")
        .args(args)
        .output()
        .expect("run headroom")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn json_rows_of_a_local_file_is_one_object_per_well_formed_row() {
    let o = actions(&["--json-rows", CRAFTED]);
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.starts_with("[\n{") && text.ends_with("}\n]\n"),
        "{text}"
    );
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(rows.len(), 25, "{text}");
    for r in &rows {
        assert!(
            r.contains("\"category\":null,\"digest\":null,\"stored\":null,"),
            "{r}"
        );
        assert!(r.contains("\"rss_scope\":\"largest_process\""), "{r}");
        assert!(r.ends_with(
            "\"worker\":null,\"queued_s\":null,\"input_fetch_s\":null,\"upload_s\":null,\"source\":\"local\"}"
        ) || r.ends_with("\"source\":\"local\"},"), "{r}");
    }
    // The first row of the file: cc src/a.c,…,0.812,0.700,0.100,0.99,45,,0
    // cpu 0.800, cores 0.800/0.812 = 0.985 → 0.99, 45 MiB = 47185920 bytes.
    assert_eq!(
        rows[0],
        "{\"id\":\"cc src/a.c\",\"category\":null,\"digest\":null,\"stored\":null,\"wall_s\":0.812,\
         \"user_s\":0.700,\"sys_s\":0.100,\"cpu_s\":0.800,\"cores\":0.99,\"max_rss_bytes\":47185920,\
         \"max_rss_gib\":0.04,\"rss_scope\":\"largest_process\",\"termination_signal\":null,\
         \"exit_code\":0,\"worker\":null,\"queued_s\":null,\"input_fetch_s\":null,\"upload_s\":null,\
         \"source\":\"local\"},"
    );
}

#[test]
fn json_rows_of_a_signalled_row_name_the_signal_and_no_exit_code() {
    let text = String::from_utf8(actions(&["--json-rows", CRAFTED]).stdout).unwrap();
    let killed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"termination_signal\":\"KILL\""))
        .collect();
    assert!(!killed.is_empty(), "{text}");
    assert!(
        killed.iter().all(|l| l.contains("\"exit_code\":null")),
        "{killed:?}"
    );
}

#[test]
fn conflicting_options_are_usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--json", "--json-rows", CRAFTED],
            "--json or --json-rows, not both",
        ),
        (
            &["--remote", "grpc://127.0.0.1:1", CRAFTED],
            "--remote is for reading a cluster (its action cache or Prometheus), not an actions FILE",
        ),
        (
            &[CRAFTED, CRAFTED],
            "one actions FILE, not 2 (Buck2 or Bazel logs go after --log)",
        ),
        (
            &["--worker-cores", "8", "--worker-mem", "16G", CRAFTED],
            "--worker-cores is for reading a cluster",
        ),
        (
            &[],
            "give an actions FILE, or --log FILE / --digest HASH/SIZE",
        ),
        (
            &["--remote", "grpc://127.0.0.1:1"],
            "name the actions with --log FILE",
        ),
        (
            &["--digest", "ab/1", "--tls-cert", "c.pem"],
            "--tls-cert and --tls-key go together",
        ),
        (
            &["--digest", "ab/1", "--tls-key", "k.pem"],
            "--tls-cert and --tls-key go together",
        ),
        (
            &["--digest", "ab/1", "--worker-cores", "8"],
            "--worker-cores and --worker-mem go together",
        ),
        (
            &["--digest", "ab/1", "--worker-mem", "8G"],
            "--worker-cores and --worker-mem go together",
        ),
        (
            &[
                "--digest",
                "ab/1",
                "--worker-cores",
                "0",
                "--worker-mem",
                "8G",
            ],
            "--worker-cores must be at least 1",
        ),
        (
            &[
                "--digest",
                "ab/1",
                "--worker-cores",
                "8",
                "--worker-mem",
                "16",
            ],
            "give a unit",
        ),
        (
            &[
                "--digest",
                "ab/1",
                "--worker-cores",
                "8",
                "--worker-mem",
                "16Q",
            ],
            "bad size '16Q'",
        ),
        (
            &["--digest", "ab/1", "--remote", ""],
            "--remote needs a URL",
        ),
        (
            &[
                "--digest",
                "ab/1",
                "--remote",
                "grpc://h:1",
                "--tls-ca",
                "ca.pem",
            ],
            "need a grpcs://",
        ),
        (&["--top", "101", CRAFTED], "--top 101: at most 100"),
    ];
    for (args, want) in cases {
        let o = actions(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn worker_mem_takes_binary_units() {
    // Accepted sizes get past argh; the usage check then stops at the
    // missing --log/--digest (exit 2 with that message, not the size's).
    for size in ["16G", "16GiB", "16gb", "512M", "1.5T", "64K"] {
        let o = actions(&["--worker-cores", "8", "--worker-mem", size]);
        assert_eq!(o.status.code(), Some(2), "{size}");
        assert!(
            stderr(&o).contains("name the actions with --log"),
            "{size}: {}",
            stderr(&o)
        );
    }
}

/// Without the feature and with no remote reader beside it, a remote
/// request is refused in one line saying where the reader was looked for
/// and how to get it; exit 1 (the command line is right).
#[cfg(not(feature = "remote"))]
#[test]
fn without_the_feature_and_no_reader_remote_says_how_to_get_it() {
    let bin = std::path::Path::new(BIN);
    let beside = bin.with_file_name("headroom-remote");
    assert!(!beside.exists(), "{} would answer", beside.display());
    for args in [
        &["--remote", "grpc://127.0.0.1:1", "--digest", "ab/1"][..],
        &["--log", "x_events.pb.zst"][..],
        &["--digest", "ab/1", "--json-rows"][..],
    ] {
        let o = actions(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {o:?}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("has no `actions --remote`"), "{e}");
        assert!(e.contains(&beside.display().to_string()), "{e}");
        assert!(e.contains("libexec/headroom/headroom-remote"), "{e}");
        assert!(!e.contains("/../"), "the places as plain paths: {e}");
        assert!(
            e.contains("put ci/build-release's headroom-remote beside this headroom"),
            "{e}"
        );
    }
}

/// A plain `headroom` in DIR, with READER (a script or a program) at
/// REL from DIR; DIR is returned to be removed.
#[cfg(not(feature = "remote"))]
fn installed(name: &str, rel: &str, reader: Option<&str>) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("headroom-reader-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::copy(BIN, dir.join("bin/headroom")).unwrap();
    let at = dir.join("bin").join(rel);
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    match reader {
        Some(script) => std::fs::write(&at, script).unwrap(),
        None => drop(std::fs::copy(BIN, &at).unwrap()),
    }
    std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Runs `DIR/bin/headroom actions ARGS`. Again while it fails with
/// ETXTBSY: a file just written may be held open for writing a moment in
/// a child another test thread forked (until its exec closes it).
#[cfg(not(feature = "remote"))]
fn actions_in(dir: &std::path::Path, args: &[&str]) -> Output {
    actions_env(dir, args, &[])
}

/// [`actions_in`] with `env` added to the environment.
#[cfg(not(feature = "remote"))]
fn actions_env(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    for _ in 0..50 {
        match Command::new(dir.join("bin/headroom"))
            .arg("actions")
            .args(args)
            .envs(env.iter().copied())
            .output()
        {
            Ok(o) if !stderr(&o).contains("Text file busy") => return o,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {}
            Err(e) => panic!("{}: {e}", dir.display()),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("{}: text file busy 50 times", dir.display())
}

/// The reader of a package (`/usr/libexec/headroom/headroom-remote` from
/// `/usr/bin/headroom`) and one beside `headroom` are handed the command
/// line as given; their output and exit status are
/// the command's.
#[cfg(not(feature = "remote"))]
#[test]
fn without_the_feature_the_remote_reader_is_handed_the_command() {
    let script = "#!/bin/sh\nprintf '%s|' \"$@\"\necho \"$HEADROOM_REMOTE_READER\"\nexit 7\n";
    for (name, rel) in [
        ("beside", "headroom-remote"),
        ("libexec", "../libexec/headroom/headroom-remote"),
    ] {
        let dir = installed(name, rel, Some(script));
        // A value the user left in the environment is not a hand-off.
        let o = actions_env(
            &dir,
            &[
                "--remote",
                "grpc://127.0.0.1:1",
                "--digest",
                "ab/1",
                "--json",
            ],
            &[("HEADROOM_REMOTE_READER", "/foo/bar")],
        );
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let want = "actions|--remote|grpc://127.0.0.1:1|--digest|ab/1|--json|";
        assert!(out.starts_with(want), "{name}: {out:?} {o:?}");
        assert!(
            out.trim_end().ends_with("headroom-remote"),
            "{name}: {out:?}"
        );
        assert_eq!(o.status.code(), Some(7), "{name}: {o:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A reader that is itself a plain build says so in one line instead of
/// handing the command on again; exit 1.
#[cfg(not(feature = "remote"))]
#[test]
fn a_plain_reader_says_it_has_no_remote_either() {
    // A copy, and a symlink to the very headroom that hands it on.
    for link in [false, true] {
        let dir = installed("plain", "headroom-remote", None);
        if link {
            std::fs::remove_file(dir.join("bin/headroom-remote")).unwrap();
            std::os::unix::fs::symlink("headroom", dir.join("bin/headroom-remote")).unwrap();
        }
        let o = actions_in(
            &dir,
            &["--remote", "grpc://127.0.0.1:1", "--digest", "ab/1"],
        );
        assert_eq!(o.status.code(), Some(1), "link {link}: {o:?}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains(
                "is a plain headroom too: put there a headroom built with `--features remote`"
            ),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// With the feature, the options reach the remote layer: a digest that is
/// not HASH/SIZE is a usage error (a malformed option value, as a bad
/// --remote or --header is), exit 2, one line.
#[cfg(feature = "remote")]
#[test]
fn with_the_feature_a_bad_digest_is_one_line() {
    let o = actions(&["--remote", "grpc://127.0.0.1:1", "--digest", "nonsense"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("nonsense"), "{}", stderr(&o));
}

/// `--log buck-out/v2/log/*_events.pb.zst`: the shell gives --log the
/// first file and the others as positionals; they are logs too. The
/// second here is missing, so the one line names it: it was read as a
/// log, not refused as a second actions FILE (a new user's find).
#[cfg(feature = "remote")]
#[test]
fn files_after_log_are_logs_as_a_shell_glob_gives_them() {
    let first = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/remote/bazel_exec.json"
    );
    let o = actions(&[
        "--remote",
        "grpc://127.0.0.1:1",
        "--log",
        first,
        "missing_events.pb.zst",
    ]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("missing_events.pb.zst"),
        "{}",
        stderr(&o)
    );
}

/// A file of which no row is an actions row (here a Bazel execution log
/// given without --log) is one line and exit 1, not an empty table.
#[test]
fn a_file_with_no_actions_row_is_refused_not_an_empty_table() {
    let log = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/remote/bazel_exec.json"
    );
    let o = actions(&[log]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(o.stdout.is_empty(), "{o:?}");
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("goes after --log"), "{}", stderr(&o));
}
