//! Why talking to the action cache failed: [`RemoteError`], one line each,
//! saying what the user can do; and the mapping from tonic's errors and
//! gRPC status codes to it. A transport error is printed with its whole
//! cause chain (tonic's own Display is only "transport error").

use super::endpoint::Endpoint;
use core::fmt;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::time::Duration;
use std::vec::Vec;
use tonic::Code;

/// A failure of a run of calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoteError {
    /// Connection refused, DNS, route, reset: the server is not there.
    Unreachable {
        /// `HOST:PORT`.
        address: String,
        /// The cause chain, `a: b: c`.
        cause: String,
    },
    /// The TLS session failed (certificate refused, not a TLS server...).
    Tls {
        /// `HOST:PORT`.
        address: String,
        /// The whole cause chain (rustls's words: `UnknownIssuer`, ...).
        cause: String,
    },
    /// `INVALID_ARGUMENT` naming the instance: the server does not serve
    /// it (BuildGrid's answer; Buildbarn answers `NOT_FOUND` instead).
    UnknownInstance {
        /// `HOST:PORT`.
        address: String,
        /// The instance name asked for.
        instance: String,
        /// The server's message.
        message: String,
    },
    /// `UNAUTHENTICATED`: credentials missing, or not accepted (BuildGrid
    /// answers it for a bad or expired token, and for one its ACL does
    /// not allow on the instance).
    Unauthenticated {
        /// `HOST:PORT`.
        address: String,
        /// The instance name asked for.
        instance: String,
        /// What was sent ([`Sent`]).
        sent: Sent,
        /// The server's message.
        message: String,
    },
    /// `PERMISSION_DENIED`: credentials known, refused for the instance.
    PermissionDenied {
        /// `HOST:PORT`.
        address: String,
        /// The instance name asked for.
        instance: String,
        /// What was sent ([`Sent`]).
        sent: Sent,
        /// The server's message.
        message: String,
    },
    /// The TLS session ended over the client certificate: the server
    /// requires one and got none, or refused the one given. Told by its
    /// TLS alert (`certificate_required`, `unknown_ca`, ...), or, from a
    /// server that says nothing (gRPC's C core: BuildGrid), by the
    /// connection closed after the handshake with no answer.
    ClientCertificate {
        /// `HOST:PORT`.
        address: String,
        /// The `--tls-cert` file sent; `None`: none was.
        cert: Option<PathBuf>,
        /// The server's alert (rustls's words), or the cause chain of the
        /// closed connection.
        cause: String,
        /// Whether the server said so with an alert (else it only closed).
        alert: bool,
    },
    /// `DEADLINE_EXCEEDED` on every try.
    Deadline {
        /// `HOST:PORT`.
        address: String,
        /// The deadline of each call, seconds.
        seconds: u64,
        /// Calls made.
        tries: u32,
    },
    /// Any other status code.
    Status {
        /// `HOST:PORT`.
        address: String,
        /// The gRPC code's name (`INTERNAL`).
        code: &'static str,
        /// The server's message and the cause chain.
        message: String,
    },
    /// A TLS file cannot be read.
    File {
        /// The option that names it (`--tls-ca`).
        option: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        cause: String,
    },
    /// A TLS file has no PEM block.
    NotPem {
        /// The option that names it.
        option: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// A certificate file (`--tls-ca`, `--tls-cert`) with no PEM
    /// `CERTIFICATE` block in it.
    NoCertificate {
        /// The option that names it.
        option: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// Only one of `--tls-cert` and `--tls-key`.
    CertKeyPair,
    /// TLS files for a plaintext address.
    TlsFilesWithoutTls {
        /// `HOST:PORT`.
        address: String,
    },
    /// A header that cannot be gRPC metadata.
    Header {
        /// Its name (never its value).
        name: String,
    },
    /// The address is not a URI tonic takes.
    Address {
        /// The URI.
        address: String,
        /// Why.
        cause: String,
    },
    /// The async runtime did not start.
    Runtime {
        /// Why.
        cause: String,
    },
}

/// The credentials a call carried, for an error to name: headers by
/// name only (a value may be a secret), the client certificate's file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    /// `--header` names, lowercase, in the order given.
    pub headers: Vec<String>,
    /// The `--tls-cert` file.
    pub cert: Option<PathBuf>,
}

impl Sent {
    /// What `ep` sends.
    pub fn of(ep: &Endpoint) -> Sent {
        Sent {
            headers: ep.headers.iter().map(|(n, _)| n.clone()).collect(),
            cert: ep.tls_cert.clone(),
        }
    }
}

impl fmt::Display for Sent {
    /// `--header authorization, --tls-cert c.pem`, or `none sent`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        for name in &self.headers {
            write!(f, "{sep}--header {name}")?;
            sep = ", ";
        }
        if let Some(cert) = &self.cert {
            write!(f, "{sep}--tls-cert {}", cert.display())?;
            sep = ", ";
        }
        if sep.is_empty() {
            f.write_str("none sent")?;
        }
        Ok(())
    }
}

/// What to give for credentials.
const CREDENTIALS: &str = "give a token with --header 'Authorization: Bearer TOKEN' (or the server's key header, e.g. --header 'x-buildbuddy-api-key: KEY')";

/// What to give for a client certificate the server accepts.
const CLIENT_CERT: &str = "give --tls-cert FILE --tls-key FILE: a certificate signed by a CA the server trusts, and its key";

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreachable { address, cause } => {
                write!(f, "cannot reach the action cache at {address}: {cause}")?;
                not_http2(f, cause)
            }
            Self::Tls { address, cause } => {
                write!(f, "TLS with {address} failed: {cause}")?;
                if cause.contains("UnknownIssuer") {
                    write!(
                        f,
                        " (give the CA that signed the server's certificate with --tls-ca FILE)"
                    )?;
                }
                if cause.contains("InvalidContentType") || cause.contains("corrupt message") {
                    write!(f, " (is the server plaintext? try grpc://)")?;
                }
                Ok(())
            }
            Self::UnknownInstance {
                address,
                instance,
                message,
            } if instance.is_empty() => write!(
                f,
                "{address} serves no empty instance name ({message}): give --instance NAME (Buck2: instance_name in [buck2_re_client])"
            ),
            Self::UnknownInstance {
                address,
                instance,
                message,
            } => write!(
                f,
                "{address} does not serve instance '{instance}' ({message}): check --instance"
            ),
            Self::Unauthenticated { .. }
            | Self::PermissionDenied { .. }
            | Self::ClientCertificate { .. } => self.auth_line(f),
            Self::Deadline {
                address,
                seconds,
                tries,
            } => {
                write!(f, "{address} did not answer within {seconds} s")?;
                if *tries > 1 {
                    write!(f, ", {tries} tries")?;
                }
                write!(
                    f,
                    ": the server is overloaded, the network slow, or it is not a gRPC server"
                )
            }
            Self::Status {
                address,
                code,
                message,
            } => {
                write!(
                    f,
                    "the action cache at {address} answered {code}: {message}"
                )?;
                not_http2(f, message)
            }
            Self::File {
                option,
                path,
                cause,
            } => {
                write!(f, "cannot read {option} file {}: {cause}", path.display())
            }
            Self::NotPem { option, path } => write!(
                f,
                "{option} file {} is not PEM (no '-----BEGIN' line)",
                path.display()
            ),
            Self::NoCertificate { option, path } => {
                write!(f, "{}: no PEM certificate in it ({option})", path.display())
            }
            Self::CertKeyPair => write!(f, "--tls-cert and --tls-key go together: give both"),
            Self::TlsFilesWithoutTls { address } => write!(
                f,
                "TLS files given, but {address} is plaintext: use grpcs://{address}"
            ),
            Self::Header { name } => {
                write!(f, "header '{name}' cannot be sent as gRPC metadata")
            }
            Self::Address { address, cause } => {
                write!(f, "'{address}' is not an address to connect to: {cause}")
            }
            Self::Runtime { cause } => write!(f, "cannot start the async runtime: {cause}"),
        }
    }
}

impl Error for RemoteError {}

impl RemoteError {
    /// The line of a credentials failure: `UNAUTHENTICATED`,
    /// `PERMISSION_DENIED`, a client certificate missing or refused
    /// (Display's arm for them; any other variant writes nothing).
    fn auth_line(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unauthenticated {
                address,
                instance,
                sent,
                message,
            } => unauthenticated(f, address, instance, sent, message),
            Self::PermissionDenied {
                address,
                instance,
                sent,
                message,
            } => write!(
                f,
                "{address} refused the credentials sent ({sent}) for instance '{instance}' ({message}): they may not read it; check --instance, or use credentials that may"
            ),
            Self::ClientCertificate {
                address,
                cert,
                cause,
                alert,
            } => client_certificate(f, address, cert.as_deref(), cause, *alert),
            _ => Ok(()),
        }
    }
}

/// [`RemoteError::Unauthenticated`]'s line: what to give when nothing
/// was sent, the header names when something was.
fn unauthenticated(
    f: &mut fmt::Formatter<'_>,
    address: &str,
    instance: &str,
    sent: &Sent,
    message: &str,
) -> fmt::Result {
    if !sent.headers.is_empty() {
        return write!(
            f,
            "{address} did not accept the credentials sent ({sent}) for instance '{instance}' ({message}): check the --header value (a token expired, signed for another server, or not allowed on this instance?)"
        );
    }
    write!(
        f,
        "{address} wants credentials for instance '{instance}' ({message}): {CREDENTIALS}"
    )?;
    if sent.cert.is_none() {
        write!(
            f,
            ", or a client certificate: --tls-cert FILE --tls-key FILE"
        )?;
    }
    Ok(())
}

/// [`RemoteError::ClientCertificate`]'s line.
fn client_certificate(
    f: &mut fmt::Formatter<'_>,
    address: &str,
    cert: Option<&Path>,
    cause: &str,
    alert: bool,
) -> fmt::Result {
    match (cert, alert) {
        (None, true) => write!(
            f,
            "{address} requires a client certificate ({cause}): give --tls-cert FILE --tls-key FILE"
        ),
        (None, false) => write!(
            f,
            "{address} closed the TLS connection without answering ({cause}), as a server that requires a client certificate does: give --tls-cert FILE --tls-key FILE"
        ),
        (Some(cert), true) => write!(
            f,
            "{address} refused the client certificate {} ({cause}): {CLIENT_CERT}",
            cert.display()
        ),
        (Some(cert), false) => write!(
            f,
            "{address} closed the TLS connection without answering ({cause}), as a server that does not accept the client certificate {} does: {CLIENT_CERT}",
            cert.display()
        ),
    }
}

/// The hint when `cause` is an HTTP/2 framing error (hyper's `http2 error:
/// ... frame with invalid size`: an HTTP/1 server, or no gRPC at all), or
/// an HTTP/2 answer without gRPC's status (tonic's `grpc-status header
/// missing, mapped from HTTP status code 404`: a web server or proxy).
fn not_http2(f: &mut fmt::Formatter<'_>, cause: &str) -> fmt::Result {
    let lower = cause.to_ascii_lowercase();
    if lower.contains("http2") && lower.contains("frame") {
        write!(f, " (is it a gRPC server? it did not speak HTTP/2)")?;
    } else if lower.contains("grpc-status header missing") {
        write!(
            f,
            " (it answered as a web server, not gRPC: is this the cache's gRPC port?)"
        )?;
    }
    Ok(())
}

/// An error and its sources, `a: b: c`, a cause repeated by its wrapper
/// said once.
pub fn cause_chain(e: &(dyn Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    // tonic's outer words say nothing its source does not.
    if let Some(s) = next.filter(|_| out == "transport error") {
        out = s.to_string();
        next = s.source();
    }
    while let Some(s) = next {
        let text = s.to_string();
        if !out.ends_with(text.as_str()) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = s.source();
    }
    out
}

/// Whether any error of the chain is an `io::Error` of `kind`.
fn has_io_kind(e: &(dyn Error + 'static), kind: std::io::ErrorKind) -> bool {
    let mut next = Some(e);
    while let Some(s) = next {
        if s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == kind)
        {
            return true;
        }
        next = s.source();
    }
    false
}

/// rustls's names of the TLS alerts that end a session over the client
/// certificate (RFC 8446 section 6.2): none was sent
/// (`certificate_required`), or the one sent was refused.
const CLIENT_CERT_ALERTS: [&str; 8] = [
    "CertificateRequired",
    "BadCertificate",
    "UnsupportedCertificate",
    "CertificateRevoked",
    "CertificateExpired",
    "CertificateUnknown",
    "UnknownCA",
    "AccessDenied",
];

/// A connection closed with no answer, in hyper's, rustls's and the
/// kernel's words (each seen from BuildGrid refusing a certificate, as
/// the race between the client's write and the server's close fell).
const CLOSED: [&str; 5] = [
    "connection closed",
    "peer closed connection",
    "broken pipe",
    "connection reset",
    "unexpected eof",
];

/// [`RemoteError::ClientCertificate`] when `cause` (a local error's
/// chain, never a server's message) ended a TLS session over the client
/// certificate: one of [`CLIENT_CERT_ALERTS`], or, when `after_handshake`,
/// the connection closed with no answer (a TLS 1.3 server checks the
/// client's certificate after the client's handshake is done, and gRPC's
/// C core then closes without an alert: BuildGrid 0.4.4 does). A TCP
/// connect that fails (a channel connecting again) is not one.
fn client_cert_error(ep: &Endpoint, cause: &str, after_handshake: bool) -> Option<RemoteError> {
    if !ep.tls {
        return None;
    }
    let alert = CLIENT_CERT_ALERTS
        .iter()
        .any(|a| cause.contains(std::format!("alert: {a}").as_str()));
    let lower = cause.to_ascii_lowercase();
    let closed = after_handshake
        && !lower.contains("tcp connect")
        && CLOSED.iter().any(|w| lower.contains(w));
    (alert || closed).then(|| RemoteError::ClientCertificate {
        address: ep.authority.clone(),
        cert: ep.tls_cert.clone(),
        cause: cause.to_string(),
        alert,
    })
}

/// A failed connect: the client certificate when an alert says so (TLS
/// 1.2 checks it in the handshake) or the connection closed after the
/// handshake (rustls says `tls handshake eof` within it); TLS when the
/// session was refused (rustls's errors come as `InvalidData`, or name a
/// certificate); else unreachable.
pub fn connect_error(ep: &Endpoint, e: &tonic::transport::Error) -> RemoteError {
    let cause = cause_chain(e);
    let lower = cause.to_ascii_lowercase();
    if let Some(refused) = client_cert_error(ep, &cause, !lower.contains("handshake")) {
        return refused;
    }
    let tls_words = ["certificate", "tls", "handshake", "peer sent"];
    let tls = ep.tls
        && (has_io_kind(e, std::io::ErrorKind::InvalidData)
            || tls_words.iter().any(|w| lower.contains(w)));
    let address = ep.authority.clone();
    if tls {
        RemoteError::Tls { address, cause }
    } else {
        RemoteError::Unreachable { address, cause }
    }
}

/// A status's message with its cause chain.
fn status_text(status: &tonic::Status) -> String {
    let mut text = status.message().to_string();
    if let Some(source) = status.source() {
        let chain = cause_chain(source);
        if !text.contains(chain.as_str()) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&chain);
        }
    }
    text
}

/// A final (not retried, or retried out) status → [`RemoteError`], after
/// `tries` calls of `deadline` each.
pub fn status_error(
    ep: &Endpoint,
    deadline: Duration,
    tries: u32,
    status: &tonic::Status,
) -> RemoteError {
    let address = ep.authority.clone();
    let message = status_text(status);
    // A status made here from a broken connection has a source; the
    // server's own answers have none.
    if status.source().is_some()
        && let Some(refused) = client_cert_error(ep, &message, true)
    {
        return refused;
    }
    let (instance, sent) = (ep.instance.clone(), Sent::of(ep));
    match status.code() {
        Code::Unavailable => RemoteError::Unreachable {
            address,
            cause: message,
        },
        Code::InvalidArgument if message.to_ascii_lowercase().contains("instance") => {
            RemoteError::UnknownInstance {
                address,
                instance: ep.instance.clone(),
                message,
            }
        }
        Code::Unauthenticated => RemoteError::Unauthenticated {
            address,
            instance,
            sent,
            message,
        },
        Code::PermissionDenied => RemoteError::PermissionDenied {
            address,
            instance,
            sent,
            message,
        },
        Code::DeadlineExceeded => RemoteError::Deadline {
            address,
            seconds: deadline.as_secs(),
            tries,
        },
        code => RemoteError::Status {
            address,
            code: code_name(code),
            message,
        },
    }
}

/// The gRPC name of a status code (`NOT_FOUND`).
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

#[cfg(test)]
mod tests {
    //! The lines of the auth failures, from the words a real server's
    //! refusal came in: BuildGrid 0.4.4 (gRPC's C core: a connection closed
    //! after the handshake, UNAUTHENTICATED for a missing or bad token) and
    //! `openssl s_server -Verify 1` (TLS alerts, as rustls prints them).
    use super::*;
    use crate::remote::endpoint::{parse_header, parse_url};
    use std::boxed::Box;

    /// A local error with `text` as its words (hyper's, rustls's).
    #[derive(Debug)]
    struct Local(&'static str);

    impl fmt::Display for Local {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Local {}

    fn tls_endpoint(cert: Option<&str>) -> Endpoint {
        let mut ep = parse_url("grpcs://127.0.0.1:1985", None).expect("url");
        ep.instance = "main".into();
        ep.tls_cert = cert.map(PathBuf::from);
        ep.tls_key = cert.map(|_| PathBuf::from("client.key"));
        ep
    }

    fn error(ep: &Endpoint, status: &tonic::Status) -> RemoteError {
        status_error(ep, Duration::from_secs(30), 1, status)
    }

    /// A status tonic made from a broken connection (it has a source).
    fn broken(words: &'static str) -> tonic::Status {
        tonic::Status::from_error(Box::new(Local(words)))
    }

    fn one_line(e: &RemoteError) -> String {
        let text = e.to_string();
        assert!(!text.contains('\n'), "{text}");
        text
    }

    #[test]
    fn certificate_required_alert_names_tls_cert_and_key() {
        let s = broken("connection error: received fatal alert: CertificateRequired");
        let e = error(&tls_endpoint(None), &s);
        assert!(
            matches!(
                &e,
                RemoteError::ClientCertificate {
                    cert: None,
                    alert: true,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            one_line(&e),
            "127.0.0.1:1985 requires a client certificate (connection error: received fatal alert: CertificateRequired): give --tls-cert FILE --tls-key FILE"
        );
    }

    #[test]
    fn a_refused_certificate_is_named() {
        for alert in [
            "UnknownCA",
            "BadCertificate",
            "CertificateExpired",
            "AccessDenied",
        ] {
            let words = std::format!("received fatal alert: {alert}").leak();
            let e = error(&tls_endpoint(Some("client.pem")), &broken(words));
            let text = one_line(&e);
            assert!(
                text.starts_with("127.0.0.1:1985 refused the client certificate client.pem (")
                    && text.contains(alert)
                    && text.contains("--tls-cert FILE --tls-key FILE"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_tls_connection_closed_without_an_answer_names_tls_cert() {
        // BuildGrid 0.4.4's words for no certificate and for one its CA
        // did not sign (measured: tests/remote_cli.rs).
        for words in [
            "transport error: connection error: stream closed because of a broken pipe",
            "operation was canceled: connection closed",
            "connection error: peer closed connection without sending TLS close_notify: https://docs.rs/rustls/latest/rustls/manual/_03_howto/index.html#unexpected-eof",
        ] {
            let e = error(&tls_endpoint(None), &broken(words));
            assert!(
                matches!(&e, RemoteError::ClientCertificate { alert: false, .. }),
                "{e:?}"
            );
            let text = one_line(&e);
            assert!(
                text.contains("closed the TLS connection without answering")
                    && text.ends_with("give --tls-cert FILE --tls-key FILE"),
                "{text}"
            );
            let e = error(&tls_endpoint(Some("c.pem")), &broken(words));
            let text = one_line(&e);
            assert!(
                text.contains("does not accept the client certificate c.pem"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_web_servers_answer_asks_for_the_grpc_port() {
        let mut plain = parse_url("grpc://127.0.0.1:8080", None).expect("url");
        plain.instance = "main".into();
        let s = tonic::Status::unimplemented(
            "grpc-status header missing, mapped from HTTP status code 404",
        );
        let text = one_line(&error(&plain, &s));
        assert!(
            text.ends_with(
                "code 404 (it answered as a web server, not gRPC: is this the cache's gRPC port?)"
            ),
            "{text}"
        );
    }

    #[test]
    fn closed_is_no_certificate_matter_on_plaintext_or_from_the_server() {
        let mut plain = parse_url("grpc://127.0.0.1:1985", None).expect("url");
        plain.instance = "main".into();
        let e = error(&plain, &broken("operation was canceled: connection closed"));
        assert!(matches!(e, RemoteError::Status { .. }), "{e:?}");
        // The server's own message has no source: its words are its own.
        let s = tonic::Status::internal("backend connection closed");
        let e = error(&tls_endpoint(None), &s);
        assert!(matches!(e, RemoteError::Status { .. }), "{e:?}");
        // Before the handshake is done, a close is not told to be about a
        // certificate; an alert is (TLS 1.2 checks it in the handshake).
        let ep = tls_endpoint(None);
        assert_eq!(
            client_cert_error(&ep, "tls handshake eof: unexpected eof", false),
            None
        );
        assert!(
            client_cert_error(&ep, "received fatal alert: CertificateRequired", false).is_some()
        );
        assert_eq!(
            client_cert_error(&ep, "received fatal alert: HandshakeFailure", false),
            None
        );
        let reset = "tcp connect error: Connection reset by peer (os error 104)";
        assert_eq!(client_cert_error(&ep, reset, true), None);
    }

    #[test]
    fn unauthenticated_without_a_header_names_the_bearer_option() {
        let ep = tls_endpoint(Some("client.pem"));
        let s = tonic::Status::unauthenticated("No valid authorization or authentication provided");
        let e = error(&ep, &s);
        assert_eq!(
            one_line(&e),
            "127.0.0.1:1985 wants credentials for instance 'main' (No valid authorization or authentication provided): give a token with --header 'Authorization: Bearer TOKEN' (or the server's key header, e.g. --header 'x-buildbuddy-api-key: KEY')"
        );
        // Nothing sent at all: a client certificate is named too.
        let e = error(&parse_url("grpc://h:1", None).expect("url"), &s);
        assert!(one_line(&e).ends_with("or a client certificate: --tls-cert FILE --tls-key FILE"));
    }

    #[test]
    fn unauthenticated_with_a_header_names_it_and_never_its_value() {
        let mut ep = tls_endpoint(None);
        ep.headers
            .push(parse_header("Authorization: Bearer s3cret.token").expect("header"));
        let e = error(&ep, &tonic::Status::unauthenticated("bad token"));
        let text = one_line(&e);
        assert!(
            text.starts_with("127.0.0.1:1985 did not accept the credentials sent (--header authorization) for instance 'main' (bad token): check the --header value"),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
    }

    #[test]
    fn permission_denied_says_the_credentials_were_refused_for_the_instance() {
        let mut ep = tls_endpoint(Some("client.pem"));
        ep.headers
            .push(parse_header("x-api-key: k").expect("header"));
        let e = error(&ep, &tonic::Status::permission_denied("read denied"));
        assert_eq!(
            one_line(&e),
            "127.0.0.1:1985 refused the credentials sent (--header x-api-key, --tls-cert client.pem) for instance 'main' (read denied): they may not read it; check --instance, or use credentials that may"
        );
        let mut plain = parse_url("grpc://h:1", None).expect("url");
        plain.instance = "ci".into();
        let e = error(&plain, &tonic::Status::permission_denied("no"));
        assert!(
            one_line(&e).contains("(none sent) for instance 'ci'"),
            "{e}"
        );
    }
}
