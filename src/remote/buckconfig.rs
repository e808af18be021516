//! STUB — replaced by the real module on merge
//!
//! `[buck2_re_client]` of the `.buckconfig` Buck2 reads.

use std::string::String;
use std::vec::Vec;

/// What `[buck2_re_client]` says (stub).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuckRe {
    /// `action_cache_address`, else `engine_address`.
    pub address: Option<String>,
    /// `instance_name`.
    pub instance: Option<String>,
    /// `tls`.
    pub tls: Option<bool>,
    /// `tls_ca_certs`.
    pub tls_ca: Option<String>,
    /// `tls_client_cert`.
    pub tls_client_cert: Option<String>,
    /// `http_headers`, `$VAR` expanded.
    pub headers: Vec<(String, String)>,
    /// The `.buckconfig` it came from.
    pub file: String,
}

/// Why a `.buckconfig` cannot be read (stub).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuckconfigError(pub String);

impl core::fmt::Display for BuckconfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The `[buck2_re_client]` of the `.buckconfig` in `dir` or a parent;
/// `None` outside a Buck2 project (stub: always `None`).
///
/// # Errors
/// [`BuckconfigError`] when a file cannot be read.
pub fn find(dir: &std::path::Path) -> Result<Option<BuckRe>, BuckconfigError> {
    let _ = dir;
    Ok(None)
}
