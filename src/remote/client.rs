//! STUB — replaced by the real module on merge
//!
//! `ActionCache.GetActionResult` for many digests.

use std::string::String;
use std::vec::Vec;

use super::action::{Digest, Lookup};
use super::endpoint::Endpoint;

/// How the lookups run (stub).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Calls in flight at once.
    pub in_flight: usize,
    /// Deadline of each call.
    pub deadline: core::time::Duration,
    /// Retries of UNAVAILABLE and RESOURCE_EXHAUSTED.
    pub retries: u32,
    /// A progress line on stderr.
    pub progress: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            in_flight: 32,
            deadline: core::time::Duration::from_secs(30),
            retries: 4,
            progress: false,
        }
    }
}

/// Why the lookups failed (stub).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteError(pub String);

impl core::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One [`Lookup`] per digest, in order (stub: the server is never reached).
///
/// # Errors
/// [`RemoteError`] always, in the stub.
pub fn look_up(
    endpoint: &Endpoint,
    digests: &[Digest],
    options: &Options,
) -> Result<Vec<Lookup>, RemoteError> {
    let _ = (digests, options);
    Err(RemoteError(std::format!(
        "{}: cannot connect (stub client)",
        endpoint.url
    )))
}
