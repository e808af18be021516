//! The client's pieces that need no server (the end-to-end tests against
//! BuildGrid are in tests/remote.rs).

use super::*;
use crate::remote::client_error::cause_chain;
use crate::remote::endpoint::parse_url;

#[test]
fn backoff_doubles_and_is_capped() {
    assert_eq!(backoff(0, 0), Duration::from_millis(100));
    assert_eq!(backoff(1, 0), Duration::from_millis(200));
    assert_eq!(backoff(3, 0), Duration::from_millis(800));
    assert_eq!(backoff(30, 0), Duration::from_millis(5_000));
    assert!(backoff(0, 1) > backoff(0, 0));
}

#[test]
fn retryable_codes() {
    assert!(retryable(Code::Unavailable));
    assert!(retryable(Code::ResourceExhausted));
    assert!(retryable(Code::DeadlineExceeded));
    assert!(!retryable(Code::NotFound));
    assert!(!retryable(Code::InvalidArgument));
}

#[test]
fn tls_files_need_tls_and_come_in_pairs() {
    let mut ep = parse_url("grpc://127.0.0.1:1", None).expect("ok");
    ep.tls_ca = Some("/nonexistent/ca.pem".into());
    assert!(matches!(
        tls_config(&ep),
        Err(RemoteError::TlsFilesWithoutTls { .. })
    ));
    ep.tls = true;
    let e = tls_config(&ep).expect_err("missing file");
    assert!(matches!(
        e,
        RemoteError::File {
            option: "--tls-ca",
            ..
        }
    ));
    assert!(std::format!("{e}").contains("/nonexistent/ca.pem"));
    ep.tls_ca = None;
    ep.tls_cert = Some("/nonexistent/c.pem".into());
    assert_eq!(tls_config(&ep).err(), Some(RemoteError::CertKeyPair));
}

#[test]
fn not_pem_is_named() {
    let dir = std::env::temp_dir().join(std::format!("headroom-notpem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let path = dir.join("ca.der");
    std::fs::write(&path, [0x30, 0x82, 0x01]).expect("write");
    let e = read_pem("--tls-ca", &path).expect_err("not pem");
    assert_eq!(
        e,
        RemoteError::NotPem {
            option: "--tls-ca",
            path: path.clone()
        }
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_header_is_refused_by_name() {
    let mut ep = parse_url("grpc://127.0.0.1:1", None).expect("ok");
    ep.headers.push(("Upper Case".into(), "secret".into()));
    let e = metadata(&ep).expect_err("bad key");
    assert_eq!(
        std::format!("{e}"),
        "header 'Upper Case' cannot be sent as gRPC metadata"
    );
}

#[test]
fn status_codes_map_to_errors() {
    let mut ep = parse_url("grpc://127.0.0.1:1", None).expect("ok");
    ep.instance = "nope".into();
    let o = Options::default();
    let s = tonic::Status::invalid_argument("Invalid instance name [nope]");
    let e = status_error(&ep, o.deadline, 1, &s);
    assert!(matches!(e, RemoteError::UnknownInstance { .. }));
    assert!(std::format!("{e}").contains("check --instance"));
    let s = tonic::Status::invalid_argument("bad digest");
    assert!(matches!(
        status_error(&ep, o.deadline, 1, &s),
        RemoteError::Status {
            code: "INVALID_ARGUMENT",
            ..
        }
    ));
    let s = tonic::Status::unauthenticated("no key");
    assert!(
        std::format!("{}", status_error(&ep, o.deadline, 1, &s)).contains("x-buildbuddy-api-key")
    );
    let s = tonic::Status::permission_denied("bad key");
    assert!(std::format!("{}", status_error(&ep, o.deadline, 1, &s)).contains("--tls-cert"));
    let s = tonic::Status::deadline_exceeded("slow");
    assert!(matches!(
        status_error(&ep, o.deadline, 5, &s),
        RemoteError::Deadline {
            seconds: 30,
            tries: 5,
            ..
        }
    ));
    let s = tonic::Status::unavailable("gone");
    assert!(matches!(
        status_error(&ep, o.deadline, 5, &s),
        RemoteError::Unreachable { .. }
    ));
}

#[test]
fn displays_are_one_line() {
    let errors = [
        RemoteError::Tls {
            address: "h:1".into(),
            cause: "invalid peer certificate: UnknownIssuer".into(),
        },
        RemoteError::CertKeyPair,
        RemoteError::Runtime { cause: "x".into() },
    ];
    for e in &errors {
        assert!(!std::format!("{e}").contains('\n'));
    }
    assert!(std::format!("{}", errors[0]).contains("--tls-ca"));
}

/// An error with a source, for [`cause_chain`].
#[derive(Debug)]
struct Wrap(&'static str, Option<std::boxed::Box<Wrap>>);

impl core::fmt::Display for Wrap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Wrap {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.1
            .as_deref()
            .map(|w| w as &(dyn std::error::Error + 'static))
    }
}

#[test]
fn cause_chain_says_every_cause_once() {
    use std::boxed::Box;
    let io = Wrap("Connection refused (os error 111)", None);
    let tcp = Wrap("tcp connect error", Some(Box::new(io)));
    let top = Wrap("transport error", Some(Box::new(tcp)));
    assert_eq!(
        cause_chain(&top),
        "tcp connect error: Connection refused (os error 111)"
    );
    let same = Wrap("x: y", Some(Box::new(Wrap("y", None))));
    assert_eq!(cause_chain(&same), "x: y");
    assert_eq!(
        cause_chain(&Wrap("transport error", None)),
        "transport error"
    );
}

// Found by hand (issue 26, hostile input): a server that accepts and never
// answers was reported as "answered CANCELLED: Timeout expired". tonic's
// timeout layer makes that status (tonic `status.rs`); a server's own
// CANCELLED or DEADLINE_EXCEEDED is not ours.
#[test]
fn our_own_deadline_is_told_from_the_servers_answers() {
    assert!(is_local_timeout(&tonic::Status::from_error(
        std::boxed::Box::new(tonic::TimeoutExpired(()))
    )));
    assert!(!is_local_timeout(&tonic::Status::cancelled(
        "client went away"
    )));
    assert!(!is_local_timeout(&tonic::Status::deadline_exceeded("slow")));
    let one = RemoteError::Deadline {
        address: "h:1".into(),
        seconds: 30,
        tries: 1,
    };
    assert_eq!(
        one.to_string(),
        "h:1 did not answer within 30 s: the server is overloaded, the network slow, or it is not a gRPC server"
    );
}

/// Found by a new user (issue 26): an empty instance name, TLS to a
/// plaintext server (rustls `InvalidContentType`: its first record is no
/// TLS record), an HTTP/1 server (hyper's h2 `frame with invalid size`)
/// each say what to try.
#[test]
fn errors_say_what_to_try() {
    let mut ep = parse_url("grpc://127.0.0.1:1", None).expect("ok");
    let o = Options::default();
    let s = tonic::Status::invalid_argument("unknown instance name");
    let e = status_error(&ep, o.deadline, 1, &s).to_string();
    assert_eq!(
        e,
        "127.0.0.1:1 serves no empty instance name (unknown instance name): give --instance NAME (Buck2: instance_name in [buck2_re_client])"
    );
    ep.instance = "main".into();
    let e = status_error(&ep, o.deadline, 1, &s).to_string();
    assert!(
        e.ends_with("check --instance") && e.contains("'main'"),
        "{e}"
    );
    let tls = RemoteError::Tls {
        address: "127.0.0.1:1".into(),
        cause: "received corrupt message of type InvalidContentType".into(),
    };
    assert!(
        tls.to_string()
            .ends_with("InvalidContentType (is the server plaintext? try grpc://)"),
        "{tls}"
    );
    let refused = RemoteError::Tls {
        address: "h:1".into(),
        cause: "invalid peer certificate: UnknownIssuer".into(),
    };
    assert!(!refused.to_string().contains("plaintext"), "{refused}");
    let h1 = RemoteError::Status {
        address: "127.0.0.1:1".into(),
        code: "UNKNOWN",
        message: "transport error: http2 error: connection error detected: frame with invalid size"
            .into(),
    };
    assert!(
        h1.to_string()
            .ends_with("invalid size (is it a gRPC server? it did not speak HTTP/2)"),
        "{h1}"
    );
    let other = RemoteError::Status {
        address: "h:1".into(),
        code: "INTERNAL",
        message: "boom".into(),
    };
    assert!(!other.to_string().contains("HTTP/2"), "{other}");
}

/// RFC 7468: a certificate file must hold a `CERTIFICATE` block of base64;
/// one that names the BEGIN line over garbage, or holds only a key, is
/// refused by name, not trusted as nothing.
#[test]
fn a_certificate_file_with_no_certificate_is_refused_by_name() {
    let good =
        b"x\n-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUY2E=\n-----END CERTIFICATE-----\n";
    assert!(has_certificate(good));
    for bad in [
        &b"-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n"[..],
        b"-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
        b"-----BEGIN PRIVATE KEY-----\nMIIBszCC\n-----END PRIVATE KEY-----\n",
        b"-----BEGIN CERTIFICATE-----\nMIIBszCC\n",
        b"-----BEGIN garbage",
    ] {
        assert!(
            !has_certificate(bad),
            "{}",
            std::string::String::from_utf8_lossy(bad)
        );
    }
    let dir = std::env::temp_dir().join(std::format!("headroom-nocert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let path = dir.join("ca.pem");
    std::fs::write(&path, b"-----BEGIN garbage\n").expect("write");
    let mut ep = parse_url("grpcs://127.0.0.1:1", None).expect("ok");
    ep.tls_ca = Some(path.clone());
    let e = tls_config(&ep).expect_err("no certificate");
    assert_eq!(
        e.to_string(),
        std::format!("{}: no PEM certificate in it (--tls-ca)", path.display())
    );
    let _ = std::fs::remove_dir_all(&dir);
}
