//! Where the action cache is and how to talk to it: `--remote URL`,
//! `--instance`, `--tls-ca`, `--tls-cert`/`--tls-key`, `--header`, or the
//! same from `.buckconfig` `[buck2_re_client]`.
//!
//! URL forms: `grpc://HOST:PORT` and `http://` are plaintext, `grpcs://`
//! and `https://` are TLS. A bare `HOST:PORT` is plaintext. An explicit
//! `tls` (Buck2's `[buck2_re_client] tls`, which Buck2 applies whatever
//! the scheme: `remote_execution/oss/re_grpc/src/client.rs` `prepare_uri`)
//! overrides the scheme. Without a port: 443 with TLS, 80 without.

use core::fmt;
use core::str::FromStr;
use std::path::PathBuf;
use std::string::{String, ToString};
use std::vec::Vec;

/// A REAPI server and the settings of every call to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The URI the channel connects to: `http://AUTHORITY` or
    /// `https://AUTHORITY`.
    pub url: String,
    /// TLS (rustls) or plaintext HTTP/2.
    pub tls: bool,
    /// `HOST:PORT` as given (brackets kept for IPv6): what errors name.
    pub authority: String,
    /// The host, without brackets; the TLS server name.
    pub host: String,
    /// The TCP port.
    pub port: u16,
    /// The REAPI instance name (`--instance`); results are stored per
    /// instance. Empty by default.
    pub instance: String,
    /// PEM file of the CA(s) that signed the server's certificate; `None`:
    /// the webpki roots.
    pub tls_ca: Option<PathBuf>,
    /// PEM client certificate (mTLS), with [`Endpoint::tls_key`].
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of [`Endpoint::tls_cert`].
    pub tls_key: Option<PathBuf>,
    /// gRPC metadata sent with every call (`x-buildbuddy-api-key`,
    /// `authorization`, ...): names lowercase, as [`parse_header`] makes
    /// them.
    pub headers: Vec<(String, String)>,
}

/// Why a `--remote` address or a `--header` was refused. Its Display
/// names neither the option nor a header's value (the caller says where
/// the text came from, `--remote` or a `.buckconfig`; a value may be a
/// secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndpointError {
    /// The address is empty.
    Empty,
    /// A scheme other than grpc, grpcs, http, https.
    Scheme {
        /// The scheme given.
        scheme: String,
    },
    /// The `HOST:PORT` part does not parse.
    Authority {
        /// The address given.
        address: String,
    },
    /// A path after `HOST:PORT` (the instance name is `--instance`).
    Path {
        /// The address given.
        address: String,
    },
    /// A header without `:`.
    HeaderColon,
    /// A header name that is empty or not a valid HTTP header name.
    HeaderName {
        /// The name given.
        name: String,
    },
    /// A binary (`-bin`) metadata name: its value would need base64.
    HeaderBinary {
        /// The name given.
        name: String,
    },
    /// A header value with bytes HTTP does not allow (control characters).
    HeaderValue {
        /// The header's name (never its value: it may be a secret).
        name: String,
    },
}

impl fmt::Display for EndpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(
                f,
                "empty address (give grpc://HOST:PORT or grpcs://HOST:PORT)"
            ),
            Self::Scheme { scheme } => write!(
                f,
                "unknown scheme '{scheme}://' (use grpc:// for plaintext, grpcs:// for TLS)"
            ),
            // The caller names the address.
            Self::Authority { .. } => f.write_str("not HOST:PORT"),
            Self::Path { .. } => {
                f.write_str("a path is not used; give the instance name with --instance")
            }
            Self::HeaderColon => write!(f, "expected 'NAME: VALUE' (no ':' found)"),
            Self::HeaderName { name } => write!(f, "'{name}' is not a valid header name"),
            Self::HeaderBinary { name } => write!(
                f,
                "'{name}' is binary gRPC metadata (-bin), which is not supported"
            ),
            Self::HeaderValue { name } => write!(
                f,
                "the value of header '{name}' has characters a header cannot carry"
            ),
        }
    }
}

impl std::error::Error for EndpointError {}

/// Splits `SCHEME://REST` into the TLS the scheme says and `REST`; a bare
/// address gives `None`.
fn split_scheme(address: &str) -> Result<(Option<bool>, &str), EndpointError> {
    let Some((scheme, rest)) = address.split_once("://") else {
        return Ok((None, address));
    };
    let tls = match scheme.to_ascii_lowercase().as_str() {
        "grpc" | "http" => false,
        "grpcs" | "https" => true,
        _ => {
            return Err(EndpointError::Scheme {
                scheme: scheme.to_string(),
            });
        }
    };
    Ok((Some(tls), rest))
}

/// Parses a `--remote` address (forms: see the module). `tls`, when
/// given, overrides what the scheme says (Buck2's `tls =`).
///
/// # Errors
/// [`EndpointError::Empty`], [`EndpointError::Scheme`],
/// [`EndpointError::Authority`] (no host, a bad port, user info),
/// [`EndpointError::Path`].
pub fn parse_url(address: &str, tls: Option<bool>) -> Result<Endpoint, EndpointError> {
    let address = address.trim();
    if address.is_empty() {
        return Err(EndpointError::Empty);
    }
    let (scheme_tls, rest) = split_scheme(address)?;
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains('/') {
        return Err(EndpointError::Path {
            address: address.to_string(),
        });
    }
    let bad = || EndpointError::Authority {
        address: address.to_string(),
    };
    if authority.is_empty() || authority.contains('@') {
        return Err(bad());
    }
    let tls = tls.or(scheme_tls).unwrap_or(false);
    let (host, port, port_given) = host_port(authority, tls).ok_or_else(bad)?;
    let authority = if port_given {
        authority.to_string()
    } else {
        std::format!("{authority}:{port}")
    };
    Ok(Endpoint {
        url: std::format!("{}://{authority}", if tls { "https" } else { "http" }),
        tls,
        host,
        port,
        authority,
        instance: String::new(),
        tls_ca: None,
        tls_cert: None,
        tls_key: None,
        headers: Vec::new(),
    })
}

/// The host (IPv6 without its brackets) and port of `HOST[:PORT]`, and
/// whether the port was written; without one, 443 with `tls`, else 80.
/// `None` when it is no authority, the port is not a u16 (http's parser
/// lets a port above 65535 through as "no port"), or the host is empty.
/// User info is the caller's to refuse.
pub fn host_port(authority: &str, tls: bool) -> Option<(String, u16, bool)> {
    let parsed = http::uri::Authority::from_str(authority).ok()?;
    // The text after the last ':' outside IPv6 brackets.
    let port_text = authority
        .rsplit_once(':')
        .map(|(_, p)| p)
        .filter(|p| !p.contains(']'));
    let port = match port_text {
        Some(p) => p.parse::<u16>().ok()?,
        None if tls => 443,
        None => 80,
    };
    let host = parsed.host().trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return None;
    }
    Some((host.to_string(), port, port_text.is_some()))
}

/// Parses `NAME: VALUE` (or `NAME:VALUE`): the name lowercased (gRPC
/// metadata names are lowercase), spaces around both trimmed.
///
/// # Errors
/// [`EndpointError::HeaderColon`], [`EndpointError::HeaderName`] (empty or
/// not an HTTP token), [`EndpointError::HeaderBinary`],
/// [`EndpointError::HeaderValue`].
pub fn parse_header(header: &str) -> Result<(String, String), EndpointError> {
    let (name, value) = header.split_once(':').ok_or(EndpointError::HeaderColon)?;
    let name = name.trim().to_ascii_lowercase();
    let value = value.trim();
    if name.is_empty() || http::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(EndpointError::HeaderName { name });
    }
    if name.ends_with("-bin") {
        return Err(EndpointError::HeaderBinary { name });
    }
    // gRPC's ASCII-Value is %x20-%x7E (PROTOCOL-HTTP2.md); http's check
    // lets bytes over 0x7F through, which went out as raw UTF-8.
    let ascii = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    if !ascii || http::HeaderValue::from_str(value).is_err() {
        return Err(EndpointError::HeaderValue { name });
    }
    Ok((name, value.to_string()))
}

#[cfg(test)]
mod tests {
    //! Forms from the issue (grpc/grpcs/http/https, bare HOST:PORT) and
    //! Buck2's `tls` override (`re_grpc/src/client.rs`).
    use super::*;

    #[test]
    fn schemes() {
        let e = parse_url("grpc://127.0.0.1:8980", None).expect("ok");
        assert_eq!((e.tls, e.url.as_str()), (false, "http://127.0.0.1:8980"));
        assert_eq!((e.host.as_str(), e.port), ("127.0.0.1", 8980));
        let e = parse_url("grpcs://cache.example:1985/", None).expect("ok");
        assert_eq!(
            (e.tls, e.url.as_str()),
            (true, "https://cache.example:1985")
        );
        assert!(parse_url("https://a:1", None).expect("ok").tls);
        assert!(!parse_url("HTTP://a:1", None).expect("ok").tls);
    }

    #[test]
    fn bare_is_plaintext_and_override_wins() {
        let e = parse_url("remote.example:8980", None).expect("ok");
        assert!(!e.tls);
        assert_eq!(e.authority, "remote.example:8980");
        assert!(
            parse_url("remote.example:8980", Some(true))
                .expect("ok")
                .tls
        );
        assert!(!parse_url("grpcs://r:1", Some(false)).expect("ok").tls);
        assert!(parse_url("grpc://r:1", Some(true)).expect("ok").tls);
    }

    #[test]
    fn default_ports_and_ipv6() {
        let e = parse_url("grpcs://remote.buildbuddy.io", None).expect("ok");
        assert_eq!(
            (e.port, e.authority.as_str()),
            (443, "remote.buildbuddy.io:443")
        );
        assert_eq!(parse_url("grpc://h", None).expect("ok").port, 80);
        let e = parse_url("grpc://[::1]:8980", None).expect("ok");
        assert_eq!((e.host.as_str(), e.port), ("::1", 8980));
        assert_eq!(e.url, "http://[::1]:8980");
    }

    #[test]
    fn bad_addresses() {
        assert_eq!(parse_url("  ", None), Err(EndpointError::Empty));
        assert!(matches!(
            parse_url("unix:///tmp/s", None),
            Err(EndpointError::Scheme { .. })
        ));
        assert!(matches!(
            parse_url("grpc://h:1/main", None),
            Err(EndpointError::Path { .. })
        ));
        for a in [
            "grpc://",
            "grpc://h:99999",
            "grpc://h:x",
            "grpc://u@h:1",
            "grpc://h:",
            "h h:1",
        ] {
            assert!(
                matches!(parse_url(a, None), Err(EndpointError::Authority { .. })),
                "{a}"
            );
        }
    }

    #[test]
    fn headers() {
        assert_eq!(
            parse_header("x-buildbuddy-api-key: abc"),
            Ok(("x-buildbuddy-api-key".into(), "abc".into()))
        );
        assert_eq!(
            parse_header("Authorization:Bearer t:k"),
            Ok(("authorization".into(), "Bearer t:k".into()))
        );
        assert_eq!(parse_header("novalue"), Err(EndpointError::HeaderColon));
        assert!(matches!(
            parse_header(": v"),
            Err(EndpointError::HeaderName { .. })
        ));
        assert!(matches!(
            parse_header("a b: v"),
            Err(EndpointError::HeaderName { .. })
        ));
        assert!(matches!(
            parse_header("x-bin: v"),
            Err(EndpointError::HeaderBinary { .. })
        ));
        let e = parse_header("k: a\u{7}secret").expect_err("control byte");
        assert_eq!(e, EndpointError::HeaderValue { name: "k".into() });
        assert!(!std::format!("{e}").contains("secret"));
        // Found by hand (issue 26): a pasted non-ASCII value (a smart
        // quote, an accent) was accepted and sent as raw UTF-8.
        for v in ["k: s\u{e9}cret", "k: \u{201c}key\u{201d}", "k: a\tb"] {
            assert_eq!(
                parse_header(v),
                Err(EndpointError::HeaderValue { name: "k".into() }),
                "{v}"
            );
        }
    }

    #[test]
    fn messages_name_no_option_and_no_value() {
        // The CLI prefixes `--remote URL: ` or `--header: `, a .buckconfig
        // error `FILE: ADDRESS: `: the option must not be said again.
        let bad = [
            parse_url("foo://h:1", None).expect_err("scheme"),
            parse_url("grpc://h:1/main", None).expect_err("path"),
            parse_url("grpc://h:x", None).expect_err("port"),
            parse_header("a b: v").expect_err("name"),
            parse_header("x-api-key s3cret").expect_err("colon"),
            parse_header("x-api-key: s3cret\u{7}").expect_err("value"),
        ];
        for e in bad {
            let s = std::format!("{e}");
            assert!(!s.contains("--remote") && !s.contains("--header"), "{s}");
            assert!(!s.contains("s3cret"), "{s}");
        }
        assert_eq!(
            std::format!("{}", parse_url("foo://h:1", None).expect_err("scheme")),
            "unknown scheme 'foo://' (use grpc:// for plaintext, grpcs:// for TLS)"
        );
    }
}
