//! End-to-end: the command-line conventions — `--version`, `--opt=value`,
//! "did you mean" for unknown commands and options, CMD's words untouched.

use std::fs;
use std::path::Path;
use std::process::Command;

mod common;
use common::{BIN, headroom_with};

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

#[test]
fn version_and_dash_v_print_version_and_target() {
    let want = format!("headroom {} (", env!("CARGO_PKG_VERSION"));
    for flag in ["--version", "-V"] {
        let out = headroom_with(&[flag]);
        assert_eq!(out.status.code(), Some(0), "{flag}: {out:?}");
        let line = text(&out.stdout);
        assert!(line.starts_with(&want), "{flag}: {line}");
        assert!(
            line.trim_end().ends_with(')') && line.lines().count() == 1,
            "{line}"
        );
        assert!(line.contains(std::env::consts::ARCH), "{line}");
        assert!(line.contains("-linux-"), "{line}");
    }
}

#[test]
fn opt_equals_value_is_opt_space_value() {
    let env_free = |args: &[&str]| {
        let mut c = Command::new(BIN);
        c.args(args);
        for v in headroom::plan::jobs::ENV_VARS {
            c.env_remove(v);
        }
        c.output().unwrap()
    };
    // A board root, not the live host: its MemAvailable stays put between
    // the two runs (the host's moves with whatever else runs on it).
    let board = concat!(env!("CARGO_MANIFEST_DIR"), "/boards/rpi4-4g-zram");
    let a = env_free(&["--root", board, "jobs", "--profile=heavy", "--explain"]);
    let b = env_free(&["--root", board, "jobs", "--profile", "heavy", "--explain"]);
    assert_eq!(a.status.code(), Some(0), "{a:?}");
    assert_eq!(a.stdout, b.stdout);
    let a = headroom_with(&[&format!("--root={board}"), "status", "--disk-path=/"]);
    let b = headroom_with(&["--root", board, "status", "--disk-path", "/"]);
    assert_eq!(a.status.code(), Some(0), "{a:?}");
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn unknown_command_or_option_suggests_the_nearest_and_exits_2() {
    for (args, want) in [
        (
            &["stauts"][..],
            "headroom: unknown command `stauts`; did you mean `status`?\n",
        ),
        (
            &["jobs", "--profil=heavy"][..],
            "headroom: unknown option `--profil` for `jobs`; did you mean `--profile`?\n",
        ),
        (
            &["run", "--intervl", "1", "--", "true"][..],
            "headroom: unknown option `--intervl` for `run`; did you mean `--interval`?\n",
        ),
    ] {
        let out = headroom_with(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert_eq!(text(&out.stderr), want, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn cmd_words_after_dashdash_are_never_touched() {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-untouched");
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    let out = Command::new(BIN)
        .args(["run", "--interval=1", "--run-id=u", "--out-dir"])
        .arg(&d)
        .args(["--", "echo", "--x=y", "--stauts", "it's"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stdout), "--x=y --stauts it's\n");
    let err = text(&out.stderr);
    // The RUN line quotes CMD's words as a shell needs them.
    assert!(
        err.contains("\nRUN: echo --x=y --stauts 'it'\\''s'\n"),
        "{err}"
    );
    assert!(d.join("resources-u.csv").is_file());
}

#[test]
fn status_says_a_disk_path_that_is_not_a_directory_fell_back_to_root() {
    let out = headroom_with(&["status", "--disk-path", "/nonexistent/headroom"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        text(&out.stderr),
        "headroom: warning: disk path '/nonexistent/headroom': No such file or directory: using / instead\n"
    );
    assert!(text(&out.stdout).contains("\ndisk        /: "), "{out:?}");
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let out = headroom_with(&["status", "--disk-path", file]);
    assert_eq!(
        text(&out.stderr),
        format!("headroom: warning: disk path '{file}': is not a directory: using / instead\n")
    );
    let out = headroom_with(&["status", "--disk-path", "/"]);
    assert!(out.stderr.is_empty(), "{out:?}");
}

/// Output that cannot be written is lost: `> status.json` on a full disk
/// (here /dev/full) exits 1 with one line; a reader that has gone
/// (`| head`: here a pipe whose read end is closed, EPIPE) is no error.
#[test]
fn a_failed_write_to_stdout_exits_1_a_closed_pipe_does_not() {
    let board = concat!(env!("CARGO_MANIFEST_DIR"), "/boards/rpi4-4g-zram");
    for args in [
        &["status", "--json"][..],
        &["jobs", "--explain"],
        &["advise"],
    ] {
        let full = fs::File::options().write(true).open("/dev/full").unwrap();
        let out = Command::new(BIN)
            .args(["--root", board])
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("cannot write to stdout"), "{err}");

        let (read, write) = std::io::pipe().unwrap();
        drop(read);
        let out = Command::new(BIN)
            .args(["--root", board])
            .args(args)
            .stdout(std::process::Stdio::from(write))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    }
}

/// CMD's words reach it as the bytes given, wherever CMD starts: after
/// `--`, or at `run`'s first positional word with a `--` of its own later
/// (argh sees a lossy UTF-8 copy; the raw words are passed on).
#[test]
fn run_passes_cmds_raw_bytes_wherever_cmd_starts() {
    use std::os::unix::ffi::OsStrExt;
    let d = std::env::temp_dir().join(format!("headroom-rawcmd-{}", std::process::id()));
    fs::create_dir_all(&d).unwrap();
    let ff = std::ffi::OsStr::from_bytes(b"\xff");
    let cases: [&[&std::ffi::OsStr]; 3] = [
        &["--".as_ref(), "printf".as_ref(), "[%s]".as_ref(), ff],
        &["printf".as_ref(), "[%s]".as_ref(), ff],
        &["printf".as_ref(), "[%s]".as_ref(), "--".as_ref(), ff],
    ];
    for (case, want) in cases.iter().zip([&b"[\xff]"[..], b"[\xff]", b"[--][\xff]"]) {
        let out = Command::new(BIN)
            .args(["run", "--run-id", "r", "--out-dir"])
            .arg(&d)
            .args(*case)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{case:?}: {out:?}");
        assert_eq!(out.stdout, want, "{case:?}");
    }
    fs::remove_dir_all(&d).unwrap();
}

/// A CMD that is not found is named as a shell would need it typed: one
/// line, no raw newline or escape sequence, an empty word as `''`.
#[test]
fn a_command_not_found_is_named_quoted() {
    let d = std::env::temp_dir().join(format!("headroom-notfound-{}", std::process::id()));
    fs::create_dir_all(&d).unwrap();
    let dir = d.to_str().unwrap();
    for (word, shown) in [("a\nb\x1b[31m", r"$'a\nb\x1b[31m'"), ("", "''")] {
        let out = headroom_with(&["run", "--run-id", "nf", "--out-dir", dir, "--", word]);
        assert_eq!(out.status.code(), Some(127), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("headroom: {shown}: command not found\n")),
            "{err:?}"
        );
        assert!(!err.contains('\x1b'), "{err:?}");
    }
    fs::remove_dir_all(&d).unwrap();
}

/// Issue 28: `--pool DIR` that does not exist is created, parents and
/// all, as a cache directory is: mode 01777 less the umask (here 022:
/// `drwxr-xr-t`, only this user's builds join it); a DIR that cannot be
/// created is one line, exit 1. No root needed.
#[test]
fn a_missing_pool_directory_is_created() {
    use std::os::unix::fs::PermissionsExt;
    let d = std::env::temp_dir().join(format!("headroom-newpool-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    let pool = d.join("cache/headroom-pool");
    let run = |pool: &Path| {
        let mut c = Command::new("sh");
        c.args(["-c", "umask 022 && exec \"$@\"", "sh", BIN])
            .args(["run", "--jobserver", "--no-cgroup", "--max-jobs", "1"])
            .arg("--pool")
            .arg(pool)
            .args(["--interval", "0.2", "--run-id", "p", "--out-dir"])
            .arg(&d)
            .args(["--", "true"])
            .env_remove("MAKEFLAGS")
            .env_remove("HEADROOM_POOL");
        c.output().unwrap()
    };
    let out = run(&pool);
    assert!(out.status.success(), "{out:?}");
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&pool), 0o1755);
    assert_eq!(mode(&d.join("cache")), 0o755);
    // Used again as it is.
    assert!(run(&pool).status.success());
    fs::write(d.join("file"), "").unwrap();
    let out = run(&d.join("file/pool"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/file/pool: cannot create it: Not a directory (a parent of it is a file)\n"),
        "{err}"
    );
    fs::remove_dir_all(&d).unwrap();
}
