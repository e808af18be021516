//! Hostile servers and input for `actions --remote` (issue 26): what a
//! careless or hostile peer does must end within the deadline with one
//! line, never hang. Servers here are plain sockets (no BuildGrid needed).

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
