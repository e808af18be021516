//! Hostile servers and input for `actions --remote` (issue 26): what a
//! careless or hostile peer does must end within the deadline with one
//! line, never hang. Servers here are plain sockets (no BuildGrid needed).

mod common;

use headroom::remote::action::Digest;
use headroom::remote::client::{self, Options, RemoteError};
use headroom::remote::endpoint::parse_url;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// A server that accepts every connection and never writes a byte (the
/// connections are held open until the listener's thread ends with the
/// test process).
fn silent_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        for c in l.incoming().flatten() {
            held.push(c);
        }
    });
    port
}

fn digest() -> Digest {
    Digest {
        hash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".into(),
        size_bytes: 1,
    }
}

/// Found by hand: grpcs:// to a server that accepts and says nothing hung
/// forever (tonic's connect_timeout covers TCP only, not the TLS
/// handshake); grpc:// to it waited one deadline and said "answered
/// CANCELLED: Timeout expired". Both now end within the deadline (plus
/// slack) with `Deadline`, naming the address.
#[test]
fn a_silent_server_ends_within_the_deadline() {
    let port = silent_server();
    let opts = Options {
        deadline: Duration::from_secs(2),
        ..Options::default()
    };
    for scheme in ["grpc", "grpcs"] {
        let mut ep = parse_url(&format!("{scheme}://127.0.0.1:{port}"), None).expect("url");
        ep.instance = "main".into();
        let start = Instant::now();
        let e = client::look_up(&ep, &[digest()], &opts).expect_err("silent");
        let took = start.elapsed();
        assert!(took < Duration::from_secs(8), "{scheme}: {took:?}");
        assert!(
            matches!(
                e,
                RemoteError::Deadline {
                    seconds: 2,
                    tries: 1,
                    ..
                }
            ),
            "{scheme}: {e:?}"
        );
        let text = e.to_string();
        assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
        assert!(!text.contains("CANCELLED"), "{text}");
    }
}

/// `headroom actions ARGS`: exit code and stderr.
fn headroom(args: &[&str]) -> (Option<i32>, String) {
    let out = common::headroom()
        .arg("actions")
        .args(args)
        .output()
        .expect("run headroom");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const DIGEST: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855/1";

/// Found by hand: a bad `--header` was echoed whole, so its value (an API
/// key) went to stderr, and a CRLF in it split the line; a non-ASCII value
/// was sent as raw UTF-8. Now: exit 2, one line naming the header only.
#[test]
fn a_bad_header_is_one_line_without_its_value() {
    for h in ["x-api-key: s3cr3t\r\nX-Evil: 1", "x-api-key: s3cr3t\u{e9}"] {
        let (code, err) = headroom(&[
            "--remote",
            "grpc://127.0.0.1:1",
            "--digest",
            DIGEST,
            "--header",
            h,
        ]);
        assert_eq!(code, Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err:?}");
        assert!(!err.contains("s3cr3t"), "{err}");
        assert!(err.contains("'x-api-key'"), "{err}");
    }
}

/// Found by hand: a failure's line carried what it quoted as it came, so a
/// file name (or an instance name, a server's message) with a newline or
/// an escape sequence broke the one line. Control characters show as `?`.
#[test]
fn a_failure_stays_one_line_whatever_it_quotes() {
    let (code, err) = headroom(&[
        "--remote",
        "grpc://127.0.0.1:1",
        "--log",
        "no\nsuch\u{1b}[2Jlog",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(
        err.starts_with("headroom: no?such?[2Jlog: cannot read"),
        "{err}"
    );
}

/// Found by hand: a zstd file that is no log (the zstd of `hello`, of a
/// JSON file, or a stream cut in its first frame) read as a log cut short
/// with nothing in it, and the one line said only "the logs name no remote
/// action (0 ran locally)". It now names the file as cut or not a log.
#[test]
fn a_zstd_file_that_is_no_log_is_named() {
    let dir = std::env::temp_dir().join(format!("headroom-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let f = dir.join("cut.zst");
    // RFC 8878: the magic number, cut after three of its four bytes.
    std::fs::write(&f, [0x28, 0xB5, 0x2F]).expect("write");
    let path = f.to_str().expect("utf-8 temp path");
    let (code, err) = headroom(&["--remote", "grpc://127.0.0.1:1", "--log", path]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(
        err.contains(&format!(
            "cut short mid-record, or not a log at all: {path}"
        )),
        "{err}"
    );
}

/// Found by hand: a malformed `--digest` exited 1 (a runtime failure)
/// while a malformed `--remote` or `--header` exits 2 (usage).
#[test]
fn a_malformed_digest_is_a_usage_error() {
    let hash = &DIGEST[..64];
    for d in [
        format!("{hash}/-1"),
        format!("{hash}/99999999999999999999"),
        hash.to_string(),
        "/5".into(),
    ] {
        let (code, err) = headroom(&["--remote", "grpc://127.0.0.1:1", "--digest", &d]);
        assert_eq!(code, Some(2), "{d}: {err}");
        assert_eq!(err.lines().count(), 1, "{err:?}");
        assert!(err.starts_with("headroom: --digest "), "{err}");
    }
}
