//! STUB — replaced by the real module on merge
//!
//! Where the action cache is: the URL, TLS, the instance name, headers.

use std::string::String;
use std::vec::Vec;

/// A resolved action-cache endpoint (stub).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://host:port` or `https://host:port` as tonic wants it.
    pub url: String,
    /// TLS (`grpcs://`, `https://`).
    pub tls: bool,
    /// The REAPI instance name.
    pub instance: String,
    /// A CA bundle file (PEM).
    pub tls_ca: Option<String>,
    /// A client certificate file (PEM).
    pub tls_cert: Option<String>,
    /// The client certificate's key file (PEM).
    pub tls_key: Option<String>,
    /// Headers sent with every call.
    pub headers: Vec<(String, String)>,
}

/// Why a URL or header cannot be used (stub).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointError(pub String);

impl core::fmt::Display for EndpointError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses `grpc://`, `grpcs://`, `http://`, `https://` URLs (stub).
///
/// # Errors
/// [`EndpointError`] for any other scheme.
pub fn parse_url(url: &str) -> Result<Endpoint, EndpointError> {
    let (tls, rest) = if let Some(r) = url.strip_prefix("grpcs://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("grpc://") {
        (false, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(EndpointError(std::format!(
            "{url}: not a grpc:// or grpcs:// URL"
        )));
    };
    let scheme = if tls { "https" } else { "http" };
    Ok(Endpoint {
        url: std::format!("{scheme}://{rest}"),
        tls,
        ..Endpoint::default()
    })
}

/// Parses `NAME: VALUE` (stub).
///
/// # Errors
/// [`EndpointError`] when there is no `:`.
pub fn parse_header(h: &str) -> Result<(String, String), EndpointError> {
    match h.split_once(':') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().into(), v.trim().into())),
        _ => Err(EndpointError(std::format!("{h}: not NAME: VALUE"))),
    }
}
