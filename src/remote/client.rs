//! The REAPI action-cache client: `ActionCache.GetActionResult` for many
//! digests, many calls in flight on one HTTP/2 connection, each with a
//! deadline; `UpdateActionResult` for tests and `ci/bench`.
//!
//! One current-thread tokio runtime and one tonic `Channel` per call of
//! [`look_up`] / [`update`]. Retried with exponential backoff:
//! `UNAVAILABLE`, `RESOURCE_EXHAUSTED` and `DEADLINE_EXCEEDED` (a lookup is
//! a read: asking again is safe). `NOT_FOUND` is [`Lookup::NotFound`].
//! Any other failure ends the whole run with one [`RemoteError`]: a partial
//! table is never presented as whole.
//!
//! # References
//! REAPI v2 `remote_execution.proto` (`ActionCache` service and its
//! documented errors); gRPC status codes (`grpc/doc/statuscodes.md`).

use super::action::{Digest, Lookup};
use super::endpoint::Endpoint;
use super::proto;
use super::worker_usage;
use futures_util::stream::{self, StreamExt};
use std::boxed::Box;
use std::io::{IsTerminal, Write};
use std::string::ToString;
use std::time::{Duration, Instant};
use std::vec::Vec;
use tonic::Code;
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, MetadataMap};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

pub use super::client_error::RemoteError;
use super::client_error::{cause_chain, connect_error, status_error};

/// How a run of calls behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Calls in flight at once on the one connection (default 32).
    pub in_flight: usize,
    /// Deadline of each call, and of connecting (default 30 s).
    pub deadline: Duration,
    /// Retries of a call that failed with a retryable code (default 4:
    /// backoff 0.1, 0.2, 0.4, 0.8 s).
    pub retries: u32,
    /// A `headroom: looked up N of M` line on stderr when it is a terminal.
    pub progress: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            in_flight: 32,
            deadline: Duration::from_secs(30),
            retries: 4,
            progress: false,
        }
    }
}

/// Looks every digest up in `ep`'s action cache, in instance
/// `ep.instance`. The answers are in the order of `digests`.
///
/// # Errors
/// The first failure that is not `NOT_FOUND` (after retries), as a
/// [`RemoteError`]; no partial answer.
pub fn look_up(
    ep: &Endpoint,
    digests: &[Digest],
    opts: &Options,
) -> Result<Vec<Lookup>, RemoteError> {
    let requests = digests.iter().map(|d| proto::GetActionResultRequest {
        instance_name: ep.instance.clone(),
        action_digest: Some(to_proto(d)),
        ..Default::default()
    });
    let answers = run(
        ep,
        opts,
        "looked up",
        proto::GET_ACTION_RESULT,
        requests.collect(),
    )?;
    Ok(answers
        .into_iter()
        .map(|a| match a {
            Some(result) => Lookup::Stored(Box::new(worker_usage::stored(&result))),
            None => Lookup::NotFound,
        })
        .collect())
}

/// Writes each result to `ep`'s action cache (`UpdateActionResult`), in
/// instance `ep.instance`.
///
/// # Errors
/// As [`look_up`]; a `NOT_FOUND` answer is a [`RemoteError::Status`].
pub fn update(
    ep: &Endpoint,
    results: &[(Digest, proto::ActionResult)],
    opts: &Options,
) -> Result<(), RemoteError> {
    let encoded: Vec<(Digest, Vec<u8>)> = results
        .iter()
        .map(|(d, r)| (d.clone(), prost::Message::encode_to_vec(r)))
        .collect();
    update_encoded(ep, &encoded, opts)
}

/// As [`update`], each `ActionResult` already encoded: sent byte for byte,
/// so fields `proto.rs` does not declare reach the server.
///
/// # Errors
/// As [`update`].
pub fn update_encoded(
    ep: &Endpoint,
    results: &[(Digest, Vec<u8>)],
    opts: &Options,
) -> Result<(), RemoteError> {
    let requests = results
        .iter()
        .map(|(d, r)| proto::UpdateActionResultEncoded {
            instance_name: ep.instance.clone(),
            action_digest: Some(to_proto(d)),
            action_result: r.clone(),
        })
        .collect();
    let answers = run(ep, opts, "wrote", proto::UPDATE_ACTION_RESULT, requests)?;
    match answers.iter().position(Option::is_none) {
        Some(_) => Err(RemoteError::Status {
            address: ep.authority.clone(),
            code: "NOT_FOUND",
            message: "UpdateActionResult answered NOT_FOUND".to_string(),
        }),
        None => Ok(()),
    }
}

/// [`Digest`] → REAPI `Digest`.
fn to_proto(d: &Digest) -> proto::Digest {
    proto::Digest {
        hash: d.hash.clone(),
        size_bytes: d.size_bytes,
    }
}

/// Runs `requests` on `path` with one runtime and one channel; `None` for
/// a `NOT_FOUND` answer.
fn run<Req>(
    ep: &Endpoint,
    opts: &Options,
    verb: &'static str,
    path: &'static str,
    requests: Vec<Req>,
) -> Result<Vec<Option<proto::ActionResult>>, RemoteError>
where
    Req: prost::Message + Clone + Default + Send + Sync + 'static,
{
    let metadata = metadata(ep)?;
    let tls = tls_config(ep)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RemoteError::Runtime {
            cause: cause_chain(&e),
        })?;
    runtime.block_on(async {
        let channel = connect(ep, tls, opts).await?;
        let calls = Calls {
            ep,
            opts,
            channel,
            metadata,
            path,
        };
        calls.all(requests, verb).await
    })
}

/// The headers as gRPC metadata, checked once.
fn metadata(ep: &Endpoint) -> Result<MetadataMap, RemoteError> {
    let mut map = MetadataMap::new();
    for (name, value) in &ep.headers {
        let bad = || RemoteError::Header { name: name.clone() };
        let key = AsciiMetadataKey::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        let value = AsciiMetadataValue::try_from(value.as_str()).map_err(|_| bad())?;
        map.append(key, value);
    }
    Ok(map)
}

/// Reads a PEM file named by `option`.
fn read_pem(option: &'static str, path: &std::path::Path) -> Result<Vec<u8>, RemoteError> {
    let bytes = std::fs::read(path).map_err(|e| RemoteError::File {
        option,
        path: path.to_path_buf(),
        cause: cause_chain(&e),
    })?;
    if !bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(RemoteError::NotPem {
            option,
            path: path.to_path_buf(),
        });
    }
    Ok(bytes)
}

/// Reads a PEM file of certificates named by `option` ([`read_pem`]),
/// refusing one with no `CERTIFICATE` block of base64 in it (RFC 7468
/// section 5): rustls would skip what it cannot read and trust nothing.
fn read_certs(option: &'static str, path: &std::path::Path) -> Result<Vec<u8>, RemoteError> {
    let bytes = read_pem(option, path)?;
    if !has_certificate(&bytes) {
        return Err(RemoteError::NoCertificate {
            option,
            path: path.to_path_buf(),
        });
    }
    Ok(bytes)
}

/// Whether `pem` holds a `-----BEGIN CERTIFICATE-----` ...
/// `-----END CERTIFICATE-----` block whose body is non-empty base64 of a
/// DER SEQUENCE (its first character `M`: the byte 0x30), RFC 7468.
pub fn has_certificate(pem: &[u8]) -> bool {
    const BEGIN: &[u8] = b"-----BEGIN CERTIFICATE-----";
    const END: &[u8] = b"-----END CERTIFICATE-----";
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    let mut rest = pem;
    while let Some(at) = find(rest, BEGIN) {
        rest = rest.get(at + BEGIN.len()..).unwrap_or_default();
        let Some(end) = find(rest, END) else {
            return false;
        };
        let body: Vec<u8> = rest
            .get(..end)
            .unwrap_or_default()
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        let data = body.iter().position(|&b| b == b'=').unwrap_or(body.len());
        let (head, pad) = body.split_at(data);
        let base64 = |b: &u8| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/';
        if body.first() == Some(&b'M')
            && body.len().is_multiple_of(4)
            && pad.len() <= 2
            && pad.iter().all(|&b| b == b'=')
            && head.iter().all(base64)
        {
            return true;
        }
        rest = rest.get(end + END.len()..).unwrap_or_default();
    }
    false
}

/// The TLS settings `ep` asks for; `None` for plaintext.
fn tls_config(ep: &Endpoint) -> Result<Option<ClientTlsConfig>, RemoteError> {
    let files = ep.tls_ca.is_some() || ep.tls_cert.is_some() || ep.tls_key.is_some();
    if !ep.tls {
        if files {
            return Err(RemoteError::TlsFilesWithoutTls {
                address: ep.authority.clone(),
            });
        }
        return Ok(None);
    }
    let mut cfg = ClientTlsConfig::new().domain_name(ep.host.clone());
    cfg = match &ep.tls_ca {
        Some(path) => cfg.ca_certificate(Certificate::from_pem(read_certs("--tls-ca", path)?)),
        None => cfg.with_webpki_roots(),
    };
    match (&ep.tls_cert, &ep.tls_key) {
        (Some(cert), Some(key)) => {
            let cert = read_certs("--tls-cert", cert)?;
            let key = read_pem("--tls-key", key)?;
            cfg = cfg.identity(Identity::from_pem(cert, key));
        }
        (None, None) => {}
        _ => return Err(RemoteError::CertKeyPair),
    }
    Ok(Some(cfg))
}

/// Opens the one HTTP/2 connection (and the TLS session), so that a
/// server that is down or a certificate that is refused is one error
/// before any call.
async fn connect(
    ep: &Endpoint,
    tls: Option<ClientTlsConfig>,
    opts: &Options,
) -> Result<Channel, RemoteError> {
    let mut endpoint = tonic::transport::Endpoint::from_shared(ep.url.clone())
        .map_err(|e| RemoteError::Address {
            address: ep.url.clone(),
            cause: cause_chain(&e),
        })?
        .connect_timeout(opts.deadline)
        .timeout(opts.deadline);
    if let Some(cfg) = tls {
        endpoint = endpoint.tls_config(cfg).map_err(|e| RemoteError::Tls {
            address: ep.authority.clone(),
            cause: cause_chain(&e),
        })?;
    }
    // tonic's connect_timeout covers the TCP connect only: a server that
    // accepts and then says nothing held a grpcs:// TLS handshake forever.
    match tokio::time::timeout(opts.deadline, endpoint.connect()).await {
        Ok(connected) => connected.map_err(|e| connect_error(ep, &e)),
        Err(_) => Err(RemoteError::Deadline {
            address: ep.authority.clone(),
            seconds: opts.deadline.as_secs(),
            tries: 1,
        }),
    }
}

/// The calls of one run.
struct Calls<'a> {
    ep: &'a Endpoint,
    opts: &'a Options,
    channel: Channel,
    metadata: MetadataMap,
    path: &'static str,
}

impl Calls<'_> {
    /// Every request, `in_flight` at a time; answers in request order.
    async fn all<Req>(
        &self,
        requests: Vec<Req>,
        verb: &'static str,
    ) -> Result<Vec<Option<proto::ActionResult>>, RemoteError>
    where
        Req: prost::Message + Clone + Default + Send + Sync + 'static,
    {
        let total = requests.len();
        let mut answers: Vec<Option<proto::ActionResult>> = Vec::new();
        answers.resize_with(total, || None);
        let mut progress = Progress::new(self.opts.progress, verb, total);
        let mut calls = stream::iter(requests.into_iter().enumerate())
            .map(|(i, req)| async move { (i, self.one(req, i).await) })
            .buffer_unordered(self.opts.in_flight.max(1));
        let mut done = 0usize;
        while let Some((i, answer)) = calls.next().await {
            let answer = match answer {
                Ok(a) => a,
                Err(e) => {
                    progress.clear();
                    return Err(e);
                }
            };
            if let Some(slot) = answers.get_mut(i) {
                *slot = answer;
            }
            done += 1;
            progress.show(done);
        }
        progress.clear();
        Ok(answers)
    }

    /// One request, retried; `None` for `NOT_FOUND`.
    async fn one<Req>(
        &self,
        req: Req,
        index: usize,
    ) -> Result<Option<proto::ActionResult>, RemoteError>
    where
        Req: prost::Message + Clone + Default + Send + Sync + 'static,
    {
        let mut attempt = 0u32;
        loop {
            let status = match self.attempt(req.clone()).await {
                Ok(result) => return Ok(Some(result)),
                Err(status) => status,
            };
            if status.code() == Code::NotFound {
                return Ok(None);
            }
            // Our own deadline, not the server's word: not asked again (a
            // server silent for a whole deadline is not one that answers
            // the next try; retrying made a silent server cost 5 deadlines).
            if is_local_timeout(&status) {
                return Err(RemoteError::Deadline {
                    address: self.ep.authority.clone(),
                    seconds: self.opts.deadline.as_secs(),
                    tries: attempt + 1,
                });
            }
            if !retryable(status.code()) || attempt >= self.opts.retries {
                return Err(status_error(
                    self.ep,
                    self.opts.deadline,
                    attempt + 1,
                    &status,
                ));
            }
            tokio::time::sleep(backoff(attempt, index)).await;
            attempt += 1;
        }
    }

    /// One call with its deadline (`grpc-timeout`, and a local timer in
    /// case the server ignores it).
    async fn attempt<Req>(&self, req: Req) -> Result<proto::ActionResult, tonic::Status>
    where
        Req: prost::Message + Clone + Default + Send + Sync + 'static,
    {
        let mut grpc = tonic::client::Grpc::new(self.channel.clone());
        let mut request = tonic::Request::new(req);
        *request.metadata_mut() = self.metadata.clone();
        request.set_timeout(self.opts.deadline);
        let codec = tonic_prost::ProstCodec::<Req, proto::ActionResult>::default();
        let path = http::uri::PathAndQuery::from_static(self.path);
        let call = async {
            grpc.ready()
                .await
                .map_err(|e| tonic::Status::from_error(e.into()))?;
            grpc.unary(request, path, codec).await
        };
        let limit = self.opts.deadline + Duration::from_secs(1);
        match tokio::time::timeout(limit, call).await {
            Ok(answer) => answer.map(tonic::Response::into_inner),
            Err(_) => Err(tonic::Status::cancelled(
                tonic::TimeoutExpired(()).to_string(),
            )),
        }
    }
}

/// Whether `status` is this client's own deadline firing: tonic's timeout
/// layer gives `CANCELLED` with `TimeoutExpired`'s words (tonic
/// `status.rs`, `find_status_in_source_chain`), as does [`Calls::attempt`]'s
/// own timer. Printed as it came it read "answered CANCELLED: Timeout
/// expired", as if the server had answered.
fn is_local_timeout(status: &tonic::Status) -> bool {
    status.code() == Code::Cancelled && status.message() == tonic::TimeoutExpired(()).to_string()
}

/// Codes worth asking again.
fn retryable(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable | Code::ResourceExhausted | Code::DeadlineExceeded
    )
}

/// Wait before retry `attempt` (0-based): 100 ms × 2^attempt, capped at
/// 5 s, plus up to 100 ms spread by the request's index so that calls
/// refused together do not all come back together.
fn backoff(attempt: u32, index: usize) -> Duration {
    let base = 100u64.saturating_mul(1u64 << attempt.min(6)).min(5_000);
    let spread = (index as u64).wrapping_mul(37) % 100;
    Duration::from_millis(base + spread)
}

/// The `\r` progress line on a terminal's stderr.
struct Progress {
    on: bool,
    verb: &'static str,
    total: usize,
    last: Option<Instant>,
    shown: bool,
}

impl Progress {
    fn new(wanted: bool, verb: &'static str, total: usize) -> Self {
        Self {
            on: wanted && std::io::stderr().is_terminal(),
            verb,
            total,
            last: None,
            shown: false,
        }
    }

    /// Shows `done of total`, at most 4 times a second.
    fn show(&mut self, done: usize) {
        if !self.on
            || self
                .last
                .is_some_and(|t| t.elapsed() < Duration::from_millis(250))
        {
            return;
        }
        self.last = Some(Instant::now());
        self.shown = true;
        let mut err = std::io::stderr().lock();
        // A lost progress line is not worth failing a run for.
        let _ = write!(err, "\rheadroom: {} {done} of {}", self.verb, self.total);
        let _ = err.flush();
    }

    /// Erases the line if it was shown.
    fn clear(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {
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
            std::format!("{}", status_error(&ep, o.deadline, 1, &s))
                .contains("x-buildbuddy-api-key")
        );
        let s = tonic::Status::permission_denied("bad key");
        assert!(
            std::format!("{}", status_error(&ep, o.deadline, 1, &s))
                .contains("refused the credentials sent (none sent) for instance 'nope'")
        );
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
            message:
                "transport error: http2 error: connection error detected: frame with invalid size"
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
}
