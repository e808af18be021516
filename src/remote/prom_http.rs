//! The Prometheus HTTP API client of `actions --remote --prometheus URL`:
//! `GET PREFIX/api/v1/query?query=Q&time=T`, one HTTP/1.1 connection per
//! query (three queries a report), plaintext or TLS, each with a deadline
//! and a cap on the answer's size. The answer's JSON is read by
//! [`super::prometheus`]; this module only moves bytes.
//!
//! Built on what tonic already brings: hyper's HTTP/1 client over a tokio
//! `TcpStream`, and tokio-rustls (ring) for `https://`: the roots built in
//! (webpki-roots) plus `--tls-ca`'s, and `--tls-cert`/`--tls-key` offered
//! when the server asks for a client certificate.
//!
//! # References
//! Prometheus "HTTP API" (`/api/v1/query`, its `query` and `time`
//! parameters, its JSON envelope and HTTP status codes); RFC 3986 section
//! 2.3 (unreserved characters) for the query string.

use core::fmt;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::sync::Arc;
use std::time::Duration;
use std::vec::Vec;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_rustls::rustls;

use super::client_error::cause_chain;

/// The largest answer read, bytes (16 MiB: one series of a vector answer
/// is ~150 bytes of JSON, so ~100 000 containers).
pub const BODY_CAP: usize = 16 << 20;

/// Where the Prometheus is and how to talk to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The URL as given (what errors name), without a trailing `/`.
    pub url: String,
    /// `https://` (TLS) or `http://`.
    pub tls: bool,
    /// The host, without IPv6 brackets; the TLS server name.
    pub host: String,
    /// The TCP port (default 443 with TLS, 80 without).
    pub port: u16,
    /// `HOST:PORT` for the `Host` header (brackets kept).
    pub authority: String,
    /// The path before `/api/v1/query` (a Prometheus behind a proxy at
    /// `https://host/prometheus`, `--web.route-prefix`); empty or `/...`.
    pub prefix: String,
    /// `--tls-ca`: CA certificates (PEM) trusted besides the built-in roots.
    pub tls_ca: Option<PathBuf>,
    /// `--tls-cert` and `--tls-key`: the client certificate and its key
    /// (PEM), offered when the server asks for one.
    pub identity: Option<(PathBuf, PathBuf)>,
    /// `--prometheus-header`s: names lowercase, values checked
    /// ([`super::endpoint::parse_header`]).
    pub headers: Vec<(String, String)>,
    /// Deadline of each query: connect, TLS, request and answer.
    pub deadline: Duration,
}

/// Why a query's bytes did not arrive (the JSON is judged by
/// [`super::prometheus`]). Display: one line naming the URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HttpError {
    /// The `--prometheus` URL is not `http(s)://HOST[:PORT][/PREFIX]`.
    Url {
        /// The URL given.
        url: String,
    },
    /// Connection refused, no route, DNS: nothing answers there.
    Unreachable {
        /// The URL.
        url: String,
        /// The cause chain.
        cause: String,
    },
    /// The TLS session failed (certificate refused, not a TLS server).
    Tls {
        /// The URL.
        url: String,
        /// rustls's words.
        cause: String,
    },
    /// The query took longer than the deadline.
    Deadline {
        /// The URL.
        url: String,
        /// The deadline, seconds.
        seconds: u64,
    },
    /// The HTTP exchange failed (not HTTP, closed mid-answer).
    Http {
        /// The URL.
        url: String,
        /// The cause chain.
        cause: String,
    },
    /// The answer is larger than [`BODY_CAP`].
    TooLarge {
        /// The URL.
        url: String,
    },
    /// A TLS file that cannot be read or holds no PEM block of its kind.
    File {
        /// The option that names it (`--tls-ca`).
        option: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        cause: String,
    },
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Url { url } => write!(
                f,
                "--prometheus {url}: expected http://HOST:PORT or https://HOST[:PORT][/PREFIX]"
            ),
            Self::Unreachable { url, cause } => write!(
                f,
                "cannot reach the Prometheus at {url}: {cause} (check --prometheus)"
            ),
            Self::Tls { url, cause } => write!(
                f,
                "TLS with the Prometheus at {url} failed: {cause} (--tls-ca names the CA that signed its certificate)"
            ),
            Self::Deadline { url, seconds } => write!(
                f,
                "the Prometheus at {url} did not answer a query within {seconds} s"
            ),
            Self::Http { url, cause } => {
                write!(f, "the Prometheus at {url}: HTTP failed: {cause}")
            }
            Self::TooLarge { url } => write!(
                f,
                "the Prometheus at {url} answered more than {} MiB: narrow --prometheus-selector",
                BODY_CAP >> 20
            ),
            Self::File {
                option,
                path,
                cause,
            } => write!(f, "{option} {}: {cause}", path.display()),
        }
    }
}

impl std::error::Error for HttpError {}

/// Parses `--prometheus URL`: `http://` or `https://`, `HOST[:PORT]`,
/// an optional path prefix; no user info, query or fragment.
///
/// # Errors
/// [`HttpError::Url`].
pub fn parse_target(url: &str) -> Result<Target, HttpError> {
    let given = url.trim().trim_end_matches('/');
    let bad = || HttpError::Url {
        url: url.to_string(),
    };
    let (scheme, rest) = given.split_once("://").ok_or_else(bad)?;
    let tls = match scheme.to_ascii_lowercase().as_str() {
        "http" => false,
        "https" => true,
        _ => return Err(bad()),
    };
    let (authority, prefix) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
    if authority.is_empty()
        || authority.contains('@')
        || prefix.contains(['?', '#'])
        || prefix.bytes().any(|b| !b.is_ascii_graphic())
    {
        return Err(bad());
    }
    let (host, port, _) = super::endpoint::host_port(authority, tls).ok_or_else(bad)?;
    Ok(Target {
        url: given.to_string(),
        tls,
        host,
        port,
        authority: authority.to_string(),
        prefix: prefix.to_string(),
        tls_ca: None,
        identity: None,
        headers: Vec::new(),
        deadline: Duration::from_secs(30),
    })
}

/// `s` percent-encoded for a query string: RFC 3986 unreserved
/// characters kept, every other byte `%XX`.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&std::format!("%{b:02X}"));
        }
    }
    out
}

/// The request path of an instant query of `query` at Unix second `time`.
pub fn query_path(t: &Target, query: &str, time: i64) -> String {
    std::format!(
        "{}/api/v1/query?query={}&time={time}",
        t.prefix,
        encode(query)
    )
}

/// One answer: the HTTP status and the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status code.
    pub status: u16,
    /// The body, at most [`BODY_CAP`] bytes.
    pub body: Vec<u8>,
}

/// GETs each path (from [`query_path`]) in turn, on one current-thread
/// runtime; the answers in order.
///
/// # Errors
/// The first failure, as an [`HttpError`]; no partial answer.
pub fn get_all(t: &Target, paths: &[String]) -> Result<Vec<Answer>, HttpError> {
    let tls = if t.tls {
        Some(tokio_rustls::TlsConnector::from(Arc::new(tls_config(t)?)))
    } else {
        None
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| HttpError::Http {
            url: t.url.clone(),
            cause: cause_chain(&e),
        })?;
    runtime.block_on(async {
        let mut out = Vec::with_capacity(paths.len());
        for p in paths {
            let one = tokio::time::timeout(t.deadline, get(t, tls.as_ref(), p)).await;
            out.push(one.map_err(|_| HttpError::Deadline {
                url: t.url.clone(),
                seconds: t.deadline.as_secs(),
            })??);
        }
        Ok(out)
    })
}

/// One GET on a new connection.
async fn get(
    t: &Target,
    tls: Option<&tokio_rustls::TlsConnector>,
    path: &str,
) -> Result<Answer, HttpError> {
    let tcp = TcpStream::connect((t.host.as_str(), t.port))
        .await
        .map_err(|e| HttpError::Unreachable {
            url: t.url.clone(),
            cause: cause_chain(&e),
        })?;
    match tls {
        None => exchange(t, TokioIo::new(tcp), path).await,
        Some(c) => {
            let name = rustls::pki_types::ServerName::try_from(t.host.clone()).map_err(|e| {
                HttpError::Tls {
                    url: t.url.clone(),
                    cause: cause_chain(&e),
                }
            })?;
            let stream = c.connect(name, tcp).await.map_err(|e| HttpError::Tls {
                url: t.url.clone(),
                cause: cause_chain(&e),
            })?;
            exchange(t, TokioIo::new(stream), path).await
        }
    }
}

/// The request and its answer on an open connection.
async fn exchange<IO>(t: &Target, io: IO, path: &str) -> Result<Answer, HttpError>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let http = |e: &(dyn std::error::Error + 'static)| HttpError::Http {
        url: t.url.clone(),
        cause: cause_chain(e),
    };
    let (mut send, conn) = hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(io)
        .await
        .map_err(|e| http(&e))?;
    // The connection's driver; it ends when the answer has been read.
    tokio::spawn(conn);
    let mut req = hyper::Request::get(path)
        .header(hyper::header::HOST, t.authority.as_str())
        .header(hyper::header::ACCEPT, "application/json");
    for (name, value) in &t.headers {
        req = req.header(name.as_str(), value.as_str());
    }
    let req = req.body(Empty::new()).map_err(|e| http(&e))?;
    let res = send.send_request(req).await.map_err(|e| http(&e))?;
    let status = res.status().as_u16();
    let body = Limited::new(res.into_body(), BODY_CAP)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                HttpError::TooLarge { url: t.url.clone() }
            } else {
                http(e.as_ref())
            }
        })?
        .to_bytes();
    Ok(Answer {
        status,
        body: body.to_vec(),
    })
}

/// Reads a TLS file named by `option`.
fn read(option: &'static str, path: &Path) -> Result<Vec<u8>, HttpError> {
    std::fs::read(path).map_err(|e| HttpError::File {
        option,
        path: path.to_path_buf(),
        cause: cause_chain(&e),
    })
}

/// The rustls client settings: ring, the built-in roots and `--tls-ca`'s,
/// the client certificate when given, ALPN `http/1.1`.
fn tls_config(t: &Target) -> Result<rustls::ClientConfig, HttpError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let file = |option, path: &Path, cause: String| HttpError::File {
        option,
        path: path.to_path_buf(),
        cause,
    };
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(ca) = &t.tls_ca {
        let pem = read("--tls-ca", ca)?;
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<_, _>>()
            .map_err(|e| file("--tls-ca", ca, e.to_string()))?;
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(file("--tls-ca", ca, "no CA certificate in it".into()));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| HttpError::Tls {
            url: t.url.clone(),
            cause: cause_chain(&e),
        })?
        .with_root_certificates(roots);
    let mut cfg = match &t.identity {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let certs: Vec<CertificateDer<'static>> =
                CertificateDer::pem_slice_iter(&read("--tls-cert", cert)?)
                    .collect::<Result<_, _>>()
                    .map_err(|e| file("--tls-cert", cert, e.to_string()))?;
            let key_der = PrivateKeyDer::from_pem_slice(&read("--tls-key", key)?)
                .map_err(|e| file("--tls-key", key, e.to_string()))?;
            builder
                .with_client_auth_cert(certs, key_der)
                .map_err(|e| file("--tls-key", key, cause_chain(&e)))?
        }
    };
    cfg.alpn_protocols = std::vec![b"http/1.1".to_vec()];
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    //! The URL forms and the query string; the exchange itself is tested
    //! against a real Prometheus in `tests/remote_prometheus.rs`.
    use super::*;

    #[test]
    fn urls_with_and_without_port_and_prefix() {
        let t = parse_target("http://127.0.0.1:9090/").expect("ok");
        assert_eq!(
            (t.tls, t.host.as_str(), t.port, t.prefix.as_str()),
            (false, "127.0.0.1", 9090, "")
        );
        assert_eq!(t.url, "http://127.0.0.1:9090");
        let t = parse_target("HTTPS://mon.example/prometheus").expect("ok");
        assert_eq!(
            (t.tls, t.port, t.authority.as_str(), t.prefix.as_str()),
            (true, 443, "mon.example", "/prometheus")
        );
        let t = parse_target("http://[::1]:9090").expect("ok");
        assert_eq!((t.host.as_str(), t.port), ("::1", 9090));
        for bad in [
            "127.0.0.1:9090",
            "grpc://h:1",
            "http://",
            "http://u@h:1",
            "http://h:99999",
            "http://h:1/x?y",
            "http://h:1/a b",
        ] {
            assert!(
                matches!(parse_target(bad), Err(HttpError::Url { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_query_is_percent_encoded() {
        let t = parse_target("http://h:1/p").expect("ok");
        assert_eq!(
            query_path(&t, r#"max(x{a="b"}[5s])"#, 1_750_000_000),
            "/p/api/v1/query?query=max%28x%7Ba%3D%22b%22%7D%5B5s%5D%29&time=1750000000"
        );
        assert_eq!(encode("a-b.c_d~e f+"), "a-b.c_d~e%20f%2B");
        assert_eq!(encode("é"), "%C3%A9");
    }

    #[test]
    fn messages_are_one_line_naming_the_url() {
        let e = HttpError::Unreachable {
            url: "http://127.0.0.1:1".into(),
            cause: "Connection refused (os error 111)".into(),
        };
        assert_eq!(
            e.to_string(),
            "cannot reach the Prometheus at http://127.0.0.1:1: Connection refused (os error 111) (check --prometheus)"
        );
    }
}
