//! STUB — replaced by the real module on merge
//!
//! The actions the logs and `--digest` name.

use std::string::String;

use super::action::{Digest, Found, Named, Origin};

/// Why a log or digest cannot be read (stub).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogError(pub String);

impl core::fmt::Display for LogError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads the logs at `paths` and the `--digest` values (stub: digests only).
///
/// # Errors
/// [`LogError`] for a log or digest that is not one of the formats.
pub fn read_logs(paths: &[String], digests: &[String]) -> Result<Found, LogError> {
    if let Some(p) = paths.first() {
        return Err(LogError(std::format!(
            "{p}: logs are not read by this stub"
        )));
    }
    let mut found = Found::default();
    for d in digests {
        let (hash, size) = d
            .split_once(['/', ':'])
            .ok_or_else(|| LogError(std::format!("{d}: not HASH/SIZE")))?;
        let size_bytes = size
            .parse()
            .map_err(|_| LogError(std::format!("{d}: not HASH/SIZE")))?;
        found.actions.push(Named {
            id: d.clone(),
            category: String::new(),
            digest: Digest {
                hash: hash.into(),
                size_bytes,
            },
            origin: Origin::Hand,
        });
    }
    Ok(found)
}
