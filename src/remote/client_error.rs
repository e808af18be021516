//! Why talking to the action cache failed: [`RemoteError`], one line each,
//! saying what the user can do; and the mapping from tonic's errors and
//! gRPC status codes to it. A transport error is printed with its whole
//! cause chain (tonic's own Display is only "transport error").

use super::endpoint::Endpoint;
use core::fmt;
use std::error::Error;
use std::path::PathBuf;
use std::string::{String, ToString};
use std::time::Duration;
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
    /// `UNAUTHENTICATED`: credentials missing.
    Unauthenticated {
        /// `HOST:PORT`.
        address: String,
        /// The server's message.
        message: String,
    },
    /// `PERMISSION_DENIED`: credentials refused.
    PermissionDenied {
        /// `HOST:PORT`.
        address: String,
        /// The server's message.
        message: String,
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

/// What to give for credentials.
const CREDENTIALS: &str = "give credentials with --header 'NAME: VALUE' (e.g. x-buildbuddy-api-key) or --tls-cert FILE --tls-key FILE";

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
            Self::Unauthenticated { address, message } => {
                write!(f, "{address} wants credentials ({message}): {CREDENTIALS}")
            }
            Self::PermissionDenied { address, message } => {
                write!(
                    f,
                    "{address} refused the credentials ({message}): {CREDENTIALS}"
                )
            }
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

/// The hint when `cause` is an HTTP/2 framing error (hyper's `http2 error:
/// ... frame with invalid size`): an HTTP/1 server, or no gRPC at all.
fn not_http2(f: &mut fmt::Formatter<'_>, cause: &str) -> fmt::Result {
    let lower = cause.to_ascii_lowercase();
    if lower.contains("http2") && lower.contains("frame") {
        write!(f, " (is it a gRPC server? it did not speak HTTP/2)")?;
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

/// A failed connect: TLS when the session was refused (rustls's errors
/// come as `InvalidData`, or name a certificate), else unreachable.
pub fn connect_error(ep: &Endpoint, e: &tonic::transport::Error) -> RemoteError {
    let cause = cause_chain(e);
    let lower = cause.to_ascii_lowercase();
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
        Code::Unauthenticated => RemoteError::Unauthenticated { address, message },
        Code::PermissionDenied => RemoteError::PermissionDenied { address, message },
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
